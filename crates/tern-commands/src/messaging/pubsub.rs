//! Publish/subscribe's directory: which inboxes each channel, pattern and
//! shard channel sends to (delivery itself: [`super::Messaging`]).
//!
//! ```text
//!  PUBLISH on worker P ─► directory shard of the channel (read lock)
//!     └─► each subscriber's inbox gets the message (one shared Arc)
//!  patterns (only when some exist): read lock, glob each, deliver the same way
//! ```
//!
//! Order and counts: a publish holds the channel's directory shard (read)
//! while it delivers, and a subscription is added or removed under that
//! shard's write lock, so a publish either reaches a client or does not,
//! and PUBLISH counts exactly the inboxes it delivered to. An
//! unsubscribing client first moves what its inbox holds into its
//! replies, so every message published while it was subscribed arrives
//! before the UNSUBSCRIBE reply. One publisher's messages reach one
//! subscriber in publish order (one inbox, pushed in order).
//!
//! Goals: no lock every PUBLISH takes (the directory is sharded by
//! channel; patterns are looked at only while some exist); no allocation
//! per subscriber per message. Non-goals: fairness between publishers.

use std::collections::BTreeSet;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hashbrown::HashMap;
use parking_lot::RwLock;

use super::{Delivery, Inbox, Message};

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

/// The whole directory.
pub struct PubSub {
    channels: Directory,
    shard_channels: Directory,
    patterns: RwLock<Vec<Pattern>>,
    /// Distinct patterns (PUBSUB NUMPAT); publishes skip the patterns while 0.
    pattern_count: AtomicUsize,
    /// Subscriptions to keyspace notification channels
    /// (`__keyspace@…`, `__keyevent@…`; see [`PubSub::may_hear_keyspace`]).
    keyspace_subs: AtomicUsize,
}

/// Whether `channel` is one keyspace notifications publish to.
fn is_keyspace_channel(channel: &[u8]) -> bool {
    channel.starts_with(b"__keyspace@") || channel.starts_with(b"__keyevent@")
}

impl Default for PubSub {
    fn default() -> Self {
        Self::new()
    }
}

impl PubSub {
    pub fn new() -> Self {
        PubSub {
            channels: Directory::new(),
            shard_channels: Directory::new(),
            patterns: RwLock::new(Vec::new()),
            pattern_count: AtomicUsize::new(0),
            keyspace_subs: AtomicUsize::new(0),
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
        if kind == Kind::Channel && is_keyspace_channel(name) {
            self.keyspace_subs.fetch_add(1, Ordering::Relaxed);
        }
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
        if kind == Kind::Channel && is_keyspace_channel(name) {
            self.keyspace_subs.fetch_sub(1, Ordering::Relaxed);
        }
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

    /// Hands `payload` to `deliver` for each subscriber of `channel` (and,
    /// unless `shard`, of each pattern matching it); returns how many.
    pub(super) fn publish(&self, channel: &[u8], payload: &[u8], shard: bool, mut deliver: impl FnMut(&Arc<Inbox>, Delivery)) -> usize {
        let mut msg: Option<Message> = None;
        let mut make = || msg.get_or_insert_with(|| Message::new(channel, payload, shard)).clone();
        let mut n = 0;
        {
            let dir = if shard { &self.shard_channels } else { &self.channels };
            let s = dir.shard(channel).read();
            if let Some(subs) = s.get(channel) {
                for inbox in subs {
                    deliver(inbox, Delivery::Message { msg: make(), pattern: None });
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
                    deliver(inbox, Delivery::Message { msg: make(), pattern: Some(Arc::clone(&p.pattern)) });
                    n += 1;
                }
            }
        }
        n
    }

    /// Whether a keyspace notification could reach anyone: a client
    /// listens on a keyspace channel, or on a pattern (which may match one).
    pub fn may_hear_keyspace(&self) -> bool {
        self.keyspace_subs.load(Ordering::Relaxed) > 0 || self.pattern_count.load(Ordering::Relaxed) > 0
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
    /// No subscriptions yet, delivering to `inbox` (the client's).
    pub fn new(inbox: Arc<Inbox>) -> Self {
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
    use super::super::{Messaging, Receiver};
    use super::*;
    use crate::outbuf::OutBuf;

    const R2: Receiver = Receiver { resp3: false, subscribed: true, share_min: 0 };

    fn subs(id: u64, worker: usize) -> Subscriptions {
        Subscriptions::new(Inbox::new(id, worker, 0))
    }

    #[test]
    fn publish_counts_and_delivers_in_order() {
        let m = Messaging::new(2);
        let ps = &m.pubsub;
        let a = subs(1, 0);
        let b = subs(2, 1);
        ps.subscribe(Kind::Channel, b"news", &a.inbox);
        ps.subscribe(Kind::Pattern, b"n*", &a.inbox);
        ps.subscribe(Kind::Pattern, b"*s", &b.inbox);
        let woken = std::cell::RefCell::new(Vec::new());
        assert_eq!(m.publish(b"news", b"hi", false, 0, |w| woken.borrow_mut().push(w)), 3);
        assert_eq!(m.publish(b"news", b"again", false, 0, |w| woken.borrow_mut().push(w)), 3);
        // Worker 0 is the publisher's: only worker 1 is woken, once.
        assert_eq!(*woken.borrow(), vec![1]);
        assert_eq!(m.take_ready(0).len(), 1);
        assert!(m.take_ready(0).is_empty());
        let mut out = OutBuf::new();
        assert_eq!(a.inbox.drain_into(&mut out, R2), 4);
        assert_eq!(
            out.to_vec(),
            b"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n\
              *3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nagain\r\n*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$5\r\nagain\r\n"
                .to_vec()
        );
        assert_eq!(a.inbox.queued(), 0);
        let mut out = OutBuf::new();
        assert_eq!(b.inbox.drain_into(&mut out, Receiver { resp3: true, ..R2 }), 2);
        assert!(out.to_vec().starts_with(b">4\r\n$8\r\npmessage\r\n$2\r\n*s\r\n"));
        assert_eq!(ps.counts(), (1, 2, 0));
        assert_eq!(m.publish(b"news", b"x", true, 0, |_| {}), 0);
    }

    #[test]
    fn leaving_removes_empty_entries() {
        let m = Messaging::new(1);
        let ps = &m.pubsub;
        let mut a = subs(1, 0);
        for (k, n) in [(Kind::Channel, &b"c"[..]), (Kind::Pattern, b"p*"), (Kind::Shard, b"s")] {
            ps.subscribe(k, n, &a.inbox);
            a.set(k).insert(n.into());
        }
        assert_eq!(ps.counts(), (1, 1, 1));
        assert_eq!(ps.channel_names(None, true), vec![b"s".to_vec()]);
        a.leave_all(ps);
        assert_eq!(ps.counts(), (0, 0, 0));
        assert_eq!(m.publish(b"c", b"m", false, 0, |_| {}), 0);
    }

    #[test]
    fn large_payloads_are_shared() {
        let m = Messaging::new(1);
        let a = subs(1, 0);
        m.pubsub.subscribe(Kind::Shard, b"s", &a.inbox);
        m.publish(b"s", &[b'x'; 100], true, 0, |_| {});
        let mut out = OutBuf::new();
        a.inbox.drain_into(&mut out, Receiver { share_min: 64, ..R2 });
        assert_eq!(out.shared_len(), 100);
        let mut wire = Vec::new();
        let (_, r) = out.write_to(&mut wire);
        assert!(r.unwrap());
        let mut want = b"*3\r\n$8\r\nsmessage\r\n$1\r\ns\r\n$100\r\n".to_vec();
        want.extend_from_slice(&[b'x'; 100]);
        want.extend_from_slice(b"\r\n");
        assert_eq!(wire, want);
    }

    #[test]
    fn a_closed_inbox_takes_nothing() {
        let m = Messaging::new(1);
        let a = subs(1, 0);
        m.pubsub.subscribe(Kind::Channel, b"c", &a.inbox);
        a.inbox.close();
        // Counted (it is still in the directory until its worker removes
        // it), never queued.
        assert_eq!(m.publish(b"c", b"m", false, 0, |_| {}), 1);
        assert_eq!(a.inbox.queued(), 0);
        assert!(m.take_ready(0).is_empty());
    }
}
