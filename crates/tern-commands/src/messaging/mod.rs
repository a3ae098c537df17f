//! Messaging: publish/subscribe ([`pubsub`]), keyspace notifications
//! ([`notify`]) and client-side caching's invalidations ([`tracking`]),
//! one delivery mechanism for all.
//!
//! ```text
//!  any thread ─► Messaging::deliver(inbox, Delivery)
//!     └─► the client's Inbox (a queue of deliveries; a message is one
//!         shared Arc, never copied per receiver) ─► first one lists the
//!         inbox on its worker's ready list and wakes that worker (once)
//!  worker W, at the end of its turn ─► take_ready(W) ─► each inbox's
//!     deliveries written into its connection's replies, in the client's
//!     protocol as it is then ─► one write for the turn
//! ```
//!
//! An inbox belongs to one client (`ClientShared::inbox`), made the first
//! time anything is to be delivered to it: its subscriptions' messages,
//! the invalidations of the keys it tracks, or those of clients that
//! redirect theirs to it. What a delivery looks like on the wire is
//! decided when it is written (a RESP3 push, a RESP2 pub/sub message, or
//! nothing when the client cannot take it), as Redis decides it when it
//! sends.

pub mod notify;
pub mod pubsub;
pub mod tracking;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::outbuf::OutBuf;

pub use pubsub::PubSub;
pub use tracking::Tracking;

/// Where the worker running a delivery is (its own inboxes are drained at
/// the end of its turn without a wake), or [`NO_WORKER`].
pub const NO_WORKER: usize = usize::MAX;

/// One published message as every receiver shares it: the channel's
/// bytes followed by the payload's.
#[derive(Clone, Debug)]
pub struct Message {
    data: Arc<Vec<u8>>,
    chan_len: usize,
    shard: bool,
}

impl Message {
    pub fn new(channel: &[u8], payload: &[u8], shard: bool) -> Self {
        let mut data = Vec::with_capacity(channel.len() + payload.len());
        data.extend_from_slice(channel);
        data.extend_from_slice(payload);
        Message { data: Arc::new(data), chan_len: channel.len(), shard }
    }
}

/// Something for one client.
#[derive(Debug)]
pub enum Delivery {
    /// A published message, and the pattern it matched when it came
    /// through one.
    Message { msg: Message, pattern: Option<Arc<[u8]>> },
    /// Keys a tracking client must drop from its cache (None: all of them,
    /// after a flush, the null in the tracking client's protocol:
    /// `null_resp3`); `redirected` when it comes through a REDIRECT.
    Invalidate { keys: Option<Arc<[Box<[u8]>]>>, redirected: bool, null_resp3: bool },
    /// The client its invalidations were redirected to is gone (its id).
    RedirectBroken(u64),
}

impl Delivery {
    /// Roughly the bytes it takes once written.
    fn size(&self) -> usize {
        40 + match self {
            Delivery::Message { msg, pattern } => msg.data.len() + pattern.as_ref().map_or(0, |p| p.len()),
            Delivery::Invalidate { keys, .. } => keys.as_ref().map_or(0, |k| k.iter().map(|k| k.len() + 16).sum()),
            Delivery::RedirectBroken(_) => 0,
        }
    }
}

/// Where deliveries for one client wait for its worker.
#[derive(Debug)]
pub struct Inbox {
    pub client_id: u64,
    pub worker: usize,
    /// The worker's handle for the connection (its slab key).
    pub handle: usize,
    queue: Mutex<VecDeque<Delivery>>,
    /// Bytes queued (counted against the output limits with the replies).
    queued: AtomicUsize,
    /// On its worker's ready list.
    listed: AtomicBool,
    /// The client is gone: what is pushed is dropped with it.
    closed: AtomicBool,
}

/// How a client takes deliveries when they are written.
#[derive(Clone, Copy, Debug)]
pub struct Receiver {
    pub resp3: bool,
    /// It has subscriptions: in RESP2 it can take invalidations as
    /// messages of `__redis__:invalidate`.
    pub subscribed: bool,
    /// `reply-copy-avoid-min-size`: payloads at least this long are sent
    /// from the message's buffer (0: never).
    pub share_min: usize,
}

/// The channel RESP2 clients get invalidations on (through a redirection).
pub const INVALIDATE_CHANNEL: &[u8] = b"__redis__:invalidate";

impl Inbox {
    pub fn new(client_id: u64, worker: usize, handle: usize) -> Arc<Self> {
        Arc::new(Inbox {
            client_id,
            worker,
            handle,
            queue: Mutex::new(VecDeque::new()),
            queued: AtomicUsize::new(0),
            listed: AtomicBool::new(false),
            closed: AtomicBool::new(false),
        })
    }

    /// Queues `d`: whether the inbox must be listed on its worker's ready
    /// list (it was not); None when the client is gone.
    fn push(&self, d: Delivery) -> Option<bool> {
        if self.closed.load(Ordering::Relaxed) {
            return None;
        }
        let size = d.size();
        self.queue.lock().push_back(d);
        self.queued.fetch_add(size, Ordering::Relaxed);
        Some(!self.listed.swap(true, Ordering::AcqRel))
    }

    /// Bytes waiting.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// The client is gone (its worker closed it).
    pub fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        self.queue.lock().clear();
        self.queued.store(0, Ordering::Relaxed);
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    /// Writes what waits into `out` as `to` takes it. Returns how many
    /// deliveries it took (written or not).
    pub fn drain_into(&self, out: &mut OutBuf, to: Receiver) -> usize {
        self.listed.store(false, Ordering::Release);
        let batch = std::mem::take(&mut *self.queue.lock());
        let mut size = 0;
        for d in &batch {
            size += d.size();
            write(out, to, d);
        }
        self.queued.fetch_sub(size, Ordering::Relaxed);
        batch.len()
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

fn write(out: &mut OutBuf, to: Receiver, d: &Delivery) {
    let lead = if to.resp3 { b'>' } else { b'*' };
    match d {
        Delivery::Message { msg, pattern } => {
            match pattern {
                Some(p) => {
                    header(out, lead, 4);
                    bulk(out, b"pmessage");
                    bulk(out, p);
                }
                None => {
                    header(out, lead, 3);
                    bulk(out, if msg.shard { b"smessage" } else { b"message" });
                }
            }
            let (chan, payload) = msg.data.split_at(msg.chan_len);
            bulk(out, chan);
            if to.share_min > 0 && payload.len() >= to.share_min {
                header(out, b'$', payload.len());
                out.push_shared(&msg.data, msg.chan_len, msg.data.len());
                out.extend_from_slice(b"\r\n");
            } else {
                bulk(out, payload);
            }
        }
        Delivery::Invalidate { keys, redirected, null_resp3 } => {
            // RESP3: a push; RESP2: only through a redirection to a
            // subscriber, as a message of the invalidation channel.
            if to.resp3 {
                header(out, b'>', 2);
                bulk(out, b"invalidate");
            } else if *redirected && to.subscribed {
                header(out, b'*', 3);
                bulk(out, b"message");
                bulk(out, INVALIDATE_CHANNEL);
            } else {
                return;
            }
            match keys {
                Some(keys) => {
                    header(out, b'*', keys.len());
                    for k in keys.iter() {
                        bulk(out, k);
                    }
                }
                None if *null_resp3 => out.extend_from_slice(b"_\r\n"),
                None => out.extend_from_slice(b"$-1\r\n"),
            }
        }
        Delivery::RedirectBroken(id) => {
            if to.resp3 {
                header(out, b'>', 2);
                bulk(out, b"tracking-redir-broken");
                out.push(b':');
                out.extend_from_slice(itoa::Buffer::new().format(*id).as_bytes());
                out.extend_from_slice(b"\r\n");
            }
        }
    }
}

/// Publish/subscribe, tracking, and each worker's list of inboxes to drain.
///
/// Invalidations are *urgent*: a reply to the client whose write caused
/// them waits (briefly) until the other workers have written them, so
/// that a client told its write is done finds the invalidation already
/// sent to the clients that cached the key, as Redis writes both in the
/// same event-loop pass (redis-py's cache reads its pending pushes before
/// each cached read and relies on it).
pub struct Messaging {
    pub pubsub: PubSub,
    pub notify: notify::Notify,
    pub tracking: Tracking,
    ready: Vec<Mutex<Vec<Arc<Inbox>>>>,
    ready_flag: Vec<AtomicBool>,
    /// Per worker: inboxes on its ready list.
    ready_len: Vec<AtomicUsize>,
    /// Per worker: urgent deliveries queued for it, and how many of them
    /// it has written (tickets).
    posted: Vec<AtomicU64>,
    drained: Vec<AtomicU64>,
    /// owed[from * workers + to]: the ticket worker `from` waits for
    /// worker `to` to reach before it sends its replies; `owes[from]`
    /// while any is set.
    owed: Vec<AtomicU64>,
    owes: Vec<AtomicBool>,
}

/// The longest a worker holds its replies for other workers to write the
/// invalidations its writes caused.
const URGENT_WAIT: std::time::Duration = std::time::Duration::from_millis(2);

impl Messaging {
    pub fn new(workers: usize) -> Self {
        Self::with_hasher(workers, Default::default())
    }

    /// The messaging state, with the tracking table keyed by hashes made
    /// with `hasher` (the keyspace's: see [`Tracking`]).
    pub fn with_hasher(workers: usize, hasher: tern_table::DefaultHashBuilder) -> Self {
        Messaging {
            pubsub: PubSub::new(),
            notify: notify::Notify::default(),
            tracking: Tracking::new(hasher),
            ready: (0..workers).map(|_| Mutex::new(Vec::new())).collect(),
            ready_flag: (0..workers).map(|_| AtomicBool::new(false)).collect(),
            ready_len: (0..workers).map(|_| AtomicUsize::new(0)).collect(),
            posted: (0..workers).map(|_| AtomicU64::new(0)).collect(),
            drained: (0..workers).map(|_| AtomicU64::new(0)).collect(),
            owed: (0..workers * workers).map(|_| AtomicU64::new(0)).collect(),
            owes: (0..workers).map(|_| AtomicBool::new(false)).collect(),
        }
    }

    /// [`Messaging::deliver`] of an invalidation: when it goes to another
    /// worker, the delivering worker's replies wait for it
    /// ([`Messaging::await_urgent`]).
    pub fn deliver_urgent(&self, inbox: &Arc<Inbox>, d: Delivery, worker: usize, wake: &impl Fn(usize)) {
        let to = inbox.worker;
        if to == worker || worker >= self.owes.len() || to >= self.posted.len() {
            return self.deliver(inbox, d, worker, wake);
        }
        let Some(w) = self.queue(inbox, d, worker) else { return };
        // The ticket is taken once the inbox is listed and before its
        // worker is woken: a worker that reads the ticket count before it
        // takes its ready list takes this delivery too.
        let t = self.posted[to].fetch_add(1, Ordering::AcqRel) + 1;
        self.owed[worker * self.owes.len() + to].fetch_max(t, Ordering::AcqRel);
        self.owes[worker].store(true, Ordering::Release);
        if let Some(w) = w {
            wake(w);
        }
    }

    /// Inboxes waiting on worker `w`'s ready list.
    pub fn ready_len(&self, w: usize) -> usize {
        self.ready_len.get(w).map_or(0, |n| n.load(Ordering::Relaxed))
    }

    /// Urgent deliveries (invalidations) wait for worker `w`: another
    /// worker's replies may be waiting for them.
    pub fn urgent_pending(&self, w: usize) -> bool {
        match (self.posted.get(w), self.drained.get(w)) {
            (Some(p), Some(d)) => p.load(Ordering::Acquire) > d.load(Ordering::Acquire),
            _ => false,
        }
    }

    /// Worker `w` is about to take its ready list: the urgent deliveries
    /// it will have written once its replies of this turn are out.
    pub fn begin_drain(&self, w: usize) -> u64 {
        self.posted.get(w).map_or(0, |p| p.load(Ordering::Acquire))
    }

    /// Worker `w` has written what it took at `begin_drain` (`ticket`).
    pub fn end_drain(&self, w: usize, ticket: u64) {
        if let Some(d) = self.drained.get(w) {
            d.fetch_max(ticket, Ordering::AcqRel);
        }
    }

    /// Holds worker `worker` (up to [`URGENT_WAIT`]) until the other
    /// workers have written the invalidations it delivered to them. One
    /// load when it delivered none.
    pub fn await_urgent(&self, worker: usize) {
        let Some(flag) = self.owes.get(worker) else { return };
        if !flag.swap(false, Ordering::AcqRel) {
            return;
        }
        let n = self.owes.len();
        let start = std::time::Instant::now();
        for to in 0..n {
            let want = self.owed[worker * n + to].swap(0, Ordering::AcqRel);
            while self.drained[to].load(Ordering::Acquire) < want && start.elapsed() < URGENT_WAIT {
                std::thread::sleep(std::time::Duration::from_micros(10));
            }
        }
    }

    /// Queues `d` for `inbox`'s client and lists the inbox on its
    /// worker's ready list. `None` when the client is gone (nothing was
    /// queued); else the worker to wake, if one must be: not the
    /// delivering `worker`, which drains its own at the end of its turn.
    fn queue(&self, inbox: &Arc<Inbox>, d: Delivery, worker: usize) -> Option<Option<usize>> {
        let listed = inbox.push(d)?;
        let w = inbox.worker;
        let Some(list) = self.ready.get(w).filter(|_| listed) else { return Some(None) };
        list.lock().push(Arc::clone(inbox));
        self.ready_len[w].fetch_add(1, Ordering::Relaxed);
        Some((!self.ready_flag[w].swap(true, Ordering::AcqRel) && w != worker).then_some(w))
    }

    /// Queues `d` for `inbox`'s client. `worker`: the delivering worker
    /// ([`NO_WORKER`] for none), which drains its own inboxes at the end
    /// of its turn; `wake` wakes another.
    pub fn deliver(&self, inbox: &Arc<Inbox>, d: Delivery, worker: usize, wake: &impl Fn(usize)) {
        if let Some(Some(w)) = self.queue(inbox, d, worker) {
            wake(w);
        }
    }

    /// Sends `payload` to the subscribers of `channel` (and of the
    /// patterns matching it, unless `shard`); returns how many got it.
    pub fn publish(&self, channel: &[u8], payload: &[u8], shard: bool, worker: usize, wake: impl Fn(usize)) -> usize {
        self.pubsub.publish(channel, payload, shard, |inbox, d| self.deliver(inbox, d, worker, &wake))
    }

    /// Worker `w`'s inboxes with deliveries, if any (one load when none).
    pub fn take_ready(&self, w: usize) -> Vec<Arc<Inbox>> {
        match self.ready_flag.get(w) {
            Some(f) if f.load(Ordering::Acquire) => {
                f.store(false, Ordering::Release);
                let list = std::mem::take(&mut *self.ready[w].lock());
                self.ready_len[w].fetch_sub(list.len(), Ordering::Relaxed);
                list
            }
            _ => Vec::new(),
        }
    }
}
