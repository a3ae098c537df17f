//! Publish/subscribe: the channel directory every worker reads, and the
//! inboxes that carry messages to the workers that own the subscribers.
//!
//! ```text
//!  PUBLISH on worker P ─► directory shard of the channel (read lock)
//!     └─► each subscriber's Inbox: push (message: one shared Arc) ─► first push lists
//!         the inbox on its worker's ready list, and wakes that worker (once)
//!  patterns (only when some exist): read lock, glob each, push the same way
//!  worker W, at the end of its turn ─► each ready inbox ─► its connection's
//!     reply buffer, in the client's protocol ─► one write for the turn
//! ```
//!
//! A message is built once per PUBLISH, channel and payload in one shared
//! buffer; an inbox queues a reference to it, and the owning worker
//! writes it into the connection's replies (a large payload is sent from
//! the shared buffer itself, see [`crate::outbuf`]).
//!
//! Order and counts: a publish holds the channel's directory shard (read)
//! while it pushes, and a subscription is added or removed under that
//! shard's write lock, so a publish either reaches a client or does not,
//! and PUBLISH counts exactly the inboxes it pushed to. An unsubscribing
//! client first moves what its inbox holds into its replies, so every
//! message published while it was subscribed arrives before the
//! UNSUBSCRIBE reply. One publisher's messages reach one subscriber in
//! publish order (one inbox, pushed in order).
//!
//! Goals: no lock every PUBLISH takes (the directory is sharded by
//! channel; patterns are looked at only while some exist); no allocation
//! per subscriber per message; a worker woken at most once for many
//! messages. Non-goals: fairness between publishers.

use std::collections::{BTreeSet, VecDeque};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use hashbrown::HashMap;
use parking_lot::{Mutex, RwLock};

use crate::outbuf::OutBuf;

/// Directory shards per kind (channels, shard channels).
const SHARDS: usize = 64;

/// The three kinds of subscription Redis has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Channel,
    Pattern,
    Shard,
}

impl Kind {
    /// The first element of a subscribe reply and of an unsubscribe reply.
    pub fn verbs(self) -> (&'static [u8], &'static [u8]) {
        match self {
            Kind::Channel => (b"subscribe", b"unsubscribe"),
            Kind::Pattern => (b"psubscribe", b"punsubscribe"),
            Kind::Shard => (b"ssubscribe", b"sunsubscribe"),
        }
    }
}

/// One published message as every receiver shares it: the channel's
/// bytes followed by the payload's.
#[derive(Clone, Debug)]
struct Message {
    data: Arc<Vec<u8>>,
    chan_len: usize,
    shard: bool,
}

/// A message queued for one client: the message, and the pattern it
/// matched when it came through one.
#[derive(Debug)]
struct Delivery {
    msg: Message,
    pattern: Option<Arc<[u8]>>,
}

impl Delivery {
    /// Bytes it takes once written as a reply (roughly: its parts).
    fn size(&self) -> usize {
        self.msg.data.len() + self.pattern.as_ref().map_or(0, |p| p.len()) + 40
    }
}

/// Where messages for one subscribed client wait for its worker.
#[derive(Debug)]
pub struct Inbox {
    pub client_id: u64,
    pub worker: usize,
    /// The worker's handle for the connection (`Client::handle`).
    pub handle: usize,
    queue: Mutex<VecDeque<Delivery>>,
    /// Bytes queued (what the output limit adds to the replies).
    queued: AtomicUsize,
    /// On its worker's ready list.
    listed: AtomicBool,
}

impl Inbox {
    fn push(&self, d: Delivery) -> bool {
        let size = d.size();
        self.queue.lock().push_back(d);
        self.queued.fetch_add(size, Ordering::Relaxed);
        !self.listed.swap(true, Ordering::AcqRel)
    }

    /// Bytes waiting in the inbox.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// Writes what waits into `out` in the client's protocol (`share_min`:
    /// payloads at least this long are sent from the message's buffer, 0:
    /// never). Returns how many messages it wrote.
    pub fn drain_into(&self, out: &mut OutBuf, resp3: bool, share_min: usize) -> usize {
        self.listed.store(false, Ordering::Release);
        let batch = std::mem::take(&mut *self.queue.lock());
        let mut n = 0;
        for d in &batch {
            self.queued.fetch_sub(d.size(), Ordering::Relaxed);
            write_message(out, resp3, &d.msg, d.pattern.as_deref(), share_min);
            n += 1;
        }
        n
    }
}

fn header(out: &mut Vec<u8>, lead: u8, n: usize) {
    out.push(lead);
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn bulk(out: &mut Vec<u8>, b: &[u8]) {
    header(out, b'$', b.len());
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
}

/// `message`, `pmessage` or `smessage`, as an array (RESP2) or a push.
fn write_message(out: &mut OutBuf, resp3: bool, m: &Message, pattern: Option<&[u8]>, share_min: usize) {
    let lead = if resp3 { b'>' } else { b'*' };
    match pattern {
        Some(p) => {
            header(out, lead, 4);
            bulk(out, b"pmessage");
            bulk(out, p);
        }
        None => {
            header(out, lead, 3);
            bulk(out, if m.shard { b"smessage" } else { b"message" });
        }
    }
    let (chan, payload) = m.data.split_at(m.chan_len);
    bulk(out, chan);
    if share_min > 0 && payload.len() >= share_min {
        header(out, b'$', payload.len());
        out.push_shared(&m.data, m.chan_len, m.data.len());
        out.extend_from_slice(b"\r\n");
    } else {
        bulk(out, payload);
    }
}

/// One directory shard: channel -> its subscribers' inboxes.
type DirShard = RwLock<HashMap<Box<[u8]>, Vec<Arc<Inbox>>>>;

/// Channel -> subscribers, sharded by the channel's hash.
struct Directory {
    shards: Box<[DirShard]>,
    hasher: hashbrown::DefaultHashBuilder,
    /// Channels with at least one subscriber.
    count: AtomicUsize,
}

impl Directory {
    fn new() -> Self {
        Directory { shards: (0..SHARDS).map(|_| RwLock::new(HashMap::new())).collect(), hasher: Default::default(), count: AtomicUsize::new(0) }
    }

    fn shard(&self, channel: &[u8]) -> &DirShard {
        &self.shards[(self.hasher.hash_one(channel) as usize) % SHARDS]
    }

    fn add(&self, channel: &[u8], inbox: &Arc<Inbox>) {
        let mut s = self.shard(channel).write();
        match s.get_mut(channel) {
            Some(v) => v.push(Arc::clone(inbox)),
            None => {
                s.insert(channel.into(), vec![Arc::clone(inbox)]);
                self.count.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn remove(&self, channel: &[u8], inbox: &Inbox) {
        let mut s = self.shard(channel).write();
        let Some(v) = s.get_mut(channel) else { return };
        v.retain(|i| i.client_id != inbox.client_id);
        if v.is_empty() {
            s.remove(channel);
            self.count.fetch_sub(1, Ordering::Relaxed);
        }
    }

    fn subscribers(&self, channel: &[u8]) -> usize {
        self.shard(channel).read().get(channel).map_or(0, |v| v.len())
    }

    /// The channels whose name `keep` accepts.
    fn names(&self, mut keep: impl FnMut(&[u8]) -> bool) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for s in self.shards.iter() {
            out.extend(s.read().keys().filter(|c| keep(c)).map(|c| c.to_vec()));
        }
        out
    }
}

/// A pattern and its subscribers.
struct Pattern {
    pattern: Arc<[u8]>,
    subs: Vec<Arc<Inbox>>,
}

/// The whole directory, and each worker's list of inboxes to drain.
pub struct PubSub {
    channels: Directory,
    shard_channels: Directory,
    patterns: RwLock<Vec<Pattern>>,
    /// Distinct patterns (PUBSUB NUMPAT); publishes skip the patterns while 0.
    pattern_count: AtomicUsize,
    /// Per worker: the inboxes with messages, and whether there are any.
    ready: Vec<Mutex<Vec<Arc<Inbox>>>>,
    ready_flag: Vec<AtomicBool>,
}

/// Where the worker running a publish is (its own inboxes are drained at
/// the end of its turn without a wake), or [`NO_WORKER`].
pub const NO_WORKER: usize = usize::MAX;

impl PubSub {
    pub fn new(workers: usize) -> Self {
        PubSub {
            channels: Directory::new(),
            shard_channels: Directory::new(),
            patterns: RwLock::new(Vec::new()),
            pattern_count: AtomicUsize::new(0),
            ready: (0..workers).map(|_| Mutex::new(Vec::new())).collect(),
            ready_flag: (0..workers).map(|_| AtomicBool::new(false)).collect(),
        }
    }

    fn dir(&self, kind: Kind) -> &Directory {
        if kind == Kind::Shard {
            &self.shard_channels
        } else {
            &self.channels
        }
    }

    /// Adds `inbox` as a subscriber of `name` (the caller knows it was not).
    pub fn subscribe(&self, kind: Kind, name: &[u8], inbox: &Arc<Inbox>) {
        if kind != Kind::Pattern {
            return self.dir(kind).add(name, inbox);
        }
        let mut pats = self.patterns.write();
        match pats.iter_mut().find(|p| &*p.pattern == name) {
            Some(p) => p.subs.push(Arc::clone(inbox)),
            None => {
                pats.push(Pattern { pattern: name.into(), subs: vec![Arc::clone(inbox)] });
                self.pattern_count.store(pats.len(), Ordering::Relaxed);
            }
        }
    }

    /// Removes `inbox` from the subscribers of `name`.
    pub fn unsubscribe(&self, kind: Kind, name: &[u8], inbox: &Inbox) {
        if kind != Kind::Pattern {
            return self.dir(kind).remove(name, inbox);
        }
        let mut pats = self.patterns.write();
        if let Some(i) = pats.iter().position(|p| &*p.pattern == name) {
            pats[i].subs.retain(|s| s.client_id != inbox.client_id);
            if pats[i].subs.is_empty() {
                pats.swap_remove(i);
                self.pattern_count.store(pats.len(), Ordering::Relaxed);
            }
        }
    }

    /// Sends `payload` to the subscribers of `channel` (and, unless
    /// `shard`, of the patterns matching it); returns how many received
    /// it. `worker`: the publishing worker ([`NO_WORKER`] for none);
    /// `wake` wakes another worker that has messages to deliver.
    pub fn publish(&self, channel: &[u8], payload: &[u8], shard: bool, worker: usize, wake: impl Fn(usize)) -> usize {
        let mut msg: Option<Message> = None;
        let make = |msg: &mut Option<Message>| {
            msg.get_or_insert_with(|| {
                let mut data = Vec::with_capacity(channel.len() + payload.len());
                data.extend_from_slice(channel);
                data.extend_from_slice(payload);
                Message { data: Arc::new(data), chan_len: channel.len(), shard }
            })
            .clone()
        };
        let mut n = 0;
        {
            let dir = if shard { &self.shard_channels } else { &self.channels };
            let s = dir.shard(channel).read();
            if let Some(subs) = s.get(channel) {
                for inbox in subs {
                    let d = Delivery { msg: make(&mut msg), pattern: None };
                    self.deliver(inbox, d, worker, &wake);
                    n += 1;
                }
            }
        }
        if !shard && self.pattern_count.load(Ordering::Relaxed) > 0 {
            let pats = self.patterns.read();
            for p in pats.iter() {
                if !crate::glob::matches(&p.pattern, channel, false) {
                    continue;
                }
                for inbox in &p.subs {
                    let d = Delivery { msg: make(&mut msg), pattern: Some(Arc::clone(&p.pattern)) };
                    self.deliver(inbox, d, worker, &wake);
                    n += 1;
                }
            }
        }
        n
    }

    fn deliver(&self, inbox: &Arc<Inbox>, d: Delivery, worker: usize, wake: &impl Fn(usize)) {
        if !inbox.push(d) {
            return;
        }
        let w = inbox.worker;
        if let Some(list) = self.ready.get(w) {
            list.lock().push(Arc::clone(inbox));
            if !self.ready_flag[w].swap(true, Ordering::AcqRel) && w != worker {
                wake(w);
            }
        }
    }

    /// Worker `w`'s inboxes with messages, if any (one load when none).
    pub fn take_ready(&self, w: usize) -> Vec<Arc<Inbox>> {
        match self.ready_flag.get(w) {
            Some(f) if f.load(Ordering::Acquire) => {
                f.store(false, Ordering::Release);
                std::mem::take(&mut *self.ready[w].lock())
            }
            _ => Vec::new(),
        }
    }

    /// PUBSUB NUMSUB / SHARDNUMSUB.
    pub fn subscribers(&self, channel: &[u8], shard: bool) -> usize {
        self.dir(if shard { Kind::Shard } else { Kind::Channel }).subscribers(channel)
    }

    /// PUBSUB CHANNELS / SHARDCHANNELS: the active channels matching
    /// `pattern` (all without one).
    pub fn channel_names(&self, pattern: Option<&[u8]>, shard: bool) -> Vec<Vec<u8>> {
        let dir = if shard { &self.shard_channels } else { &self.channels };
        dir.names(|c| pattern.is_none_or(|p| crate::glob::matches(p, c, false)))
    }

    /// INFO's `pubsub_channels`, `pubsub_patterns`, `pubsubshard_channels`.
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.channels.count.load(Ordering::Relaxed), self.pattern_count.load(Ordering::Relaxed), self.shard_channels.count.load(Ordering::Relaxed))
    }
}

/// A client's subscriptions, kept by its worker (`Client::subs`).
#[derive(Debug)]
pub struct Subscriptions {
    pub inbox: Arc<Inbox>,
    pub channels: BTreeSet<Box<[u8]>>,
    pub patterns: BTreeSet<Box<[u8]>>,
    pub shard: BTreeSet<Box<[u8]>>,
}

impl Subscriptions {
    pub fn new(client_id: u64, worker: usize, handle: usize) -> Self {
        let inbox = Arc::new(Inbox {
            client_id,
            worker,
            handle,
            queue: Mutex::new(VecDeque::new()),
            queued: AtomicUsize::new(0),
            listed: AtomicBool::new(false),
        });
        Subscriptions { inbox, channels: BTreeSet::new(), patterns: BTreeSet::new(), shard: BTreeSet::new() }
    }

    pub fn set(&mut self, kind: Kind) -> &mut BTreeSet<Box<[u8]>> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard,
        }
    }

    /// The count a (p)subscribe reply carries for `kind`: channels and
    /// patterns together, shard channels apart (Redis's
    /// `clientSubscriptionsCount`, `clientShardSubscriptionsCount`).
    pub fn count(&self, kind: Kind) -> usize {
        match kind {
            Kind::Shard => self.shard.len(),
            _ => self.channels.len() + self.patterns.len(),
        }
    }

    pub fn total(&self) -> usize {
        self.channels.len() + self.patterns.len() + self.shard.len()
    }

    /// Leaves every subscription, without replies (the connection closes
    /// or RESETs).
    pub fn leave_all(&mut self, ps: &PubSub) {
        for kind in [Kind::Channel, Kind::Pattern, Kind::Shard] {
            for name in std::mem::take(self.set(kind)) {
                ps.unsubscribe(kind, &name, &self.inbox);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(out: &OutBuf) -> Vec<u8> {
        out.to_vec()
    }

    #[test]
    fn publish_counts_and_delivers_in_order() {
        let ps = PubSub::new(2);
        let a = Subscriptions::new(1, 0, 0);
        let b = Subscriptions::new(2, 1, 0);
        ps.subscribe(Kind::Channel, b"news", &a.inbox);
        ps.subscribe(Kind::Pattern, b"n*", &a.inbox);
        ps.subscribe(Kind::Pattern, b"*s", &b.inbox);
        let woken = std::cell::RefCell::new(Vec::new());
        assert_eq!(ps.publish(b"news", b"hi", false, 0, |w| woken.borrow_mut().push(w)), 3);
        assert_eq!(ps.publish(b"news", b"again", false, 0, |w| woken.borrow_mut().push(w)), 3);
        // Worker 0 is the publisher's: only worker 1 is woken, once.
        assert_eq!(*woken.borrow(), vec![1]);
        assert_eq!(ps.take_ready(0).len(), 1);
        assert!(ps.take_ready(0).is_empty());
        let mut out = OutBuf::new();
        assert_eq!(a.inbox.drain_into(&mut out, false, 0), 4);
        assert_eq!(
            text(&out),
            b"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n\
              *3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nagain\r\n*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$5\r\nagain\r\n"
                .to_vec()
        );
        assert_eq!(a.inbox.queued(), 0);
        let mut out = OutBuf::new();
        assert_eq!(b.inbox.drain_into(&mut out, true, 0), 2);
        assert!(text(&out).starts_with(b">4\r\n$8\r\npmessage\r\n$2\r\n*s\r\n"));
        assert_eq!(ps.counts(), (1, 2, 0));
        assert_eq!(ps.publish(b"news", b"x", true, 0, |_| {}), 0);
    }

    #[test]
    fn leaving_removes_empty_entries() {
        let ps = PubSub::new(1);
        let mut a = Subscriptions::new(1, 0, 0);
        for (k, n) in [(Kind::Channel, &b"c"[..]), (Kind::Pattern, b"p*"), (Kind::Shard, b"s")] {
            ps.subscribe(k, n, &a.inbox);
            a.set(k).insert(n.into());
        }
        assert_eq!(ps.counts(), (1, 1, 1));
        assert_eq!(ps.channel_names(None, true), vec![b"s".to_vec()]);
        a.leave_all(&ps);
        assert_eq!(ps.counts(), (0, 0, 0));
        assert_eq!(ps.publish(b"c", b"m", false, 0, |_| {}), 0);
    }

    #[test]
    fn large_payloads_are_shared() {
        let ps = PubSub::new(1);
        let a = Subscriptions::new(1, 0, 0);
        ps.subscribe(Kind::Shard, b"s", &a.inbox);
        ps.publish(b"s", &[b'x'; 100], true, 0, |_| {});
        let mut out = OutBuf::new();
        a.inbox.drain_into(&mut out, false, 64);
        assert_eq!(out.shared_len(), 100);
        let mut wire = Vec::new();
        let (_, r) = out.write_to(&mut wire);
        assert!(r.unwrap());
        let mut want = b"*3\r\n$8\r\nsmessage\r\n$1\r\ns\r\n$100\r\n".to_vec();
        want.extend_from_slice(&[b'x'; 100]);
        want.extend_from_slice(b"\r\n");
        assert_eq!(wire, want);
    }
}
