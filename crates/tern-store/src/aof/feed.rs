//! The hand-over of effect records from their writers (workers, the
//! cron) to the one thread that writes the AOF, in an order that keeps
//! the records of each key in the order they happened.
//!
//! ```text
//!  worker 0 ─ Effects ─┐ hand: copied, ticket         ┌─ Merger: index entries sorted by number
//!  worker 1 ─ Effects ─┼──────────────► Feed ──collect──►  ready(W): every record numbered < W
//!  cron     ─ Effects ─┘  one Log a round; marks:       └─ durable(): tickets all written
//!                         lowest number each writer still holds
//! ```
//!
//! The records are bytes already ([`crate::effect::Log`]): a hand-over
//! copies a writer's log after those handed over before, and the reader
//! swaps the round's log for an empty one of its own, so no buffer is
//! allocated or freed from round to round.
//!
//! Records are numbered from one sequence per keyspace, taken under the
//! shard lock of the write (see [`crate::effect`]), so two records of one
//! key are numbered in the order they happened. Each writer hands its
//! records over in batches, and has a [`Mark`]: the lowest number among
//! the records it holds and has not handed over (`u64::MAX`: none). The
//! mark is lowered when records move from a shard to the writer's buffer
//! ([`crate::Effects::marked`]), which is done before the shard's lock is
//! released, and raised to `u64::MAX` when the writer hands its batch
//! over, inside the feed's lock. [`Feed::collect`] takes, inside that
//! same lock, every batch handed over and `W`, the lowest mark; the
//! reader writes the records numbered below `W` and keeps the others.
//!
//! **Why this keeps each key's order.** Say r (number s) and r' (s' > s)
//! change one key, r' is written in a round whose collection happened at
//! instant M, and r was not handed over by M (else both were taken and
//! are written by number: r first). r's writer A lowered its mark to at
//! most s before releasing the key's shard lock; the writer of r' took
//! that lock after, then handed r' over (feed lock) before M. So A's
//! lowering happens-before M's reading of A's mark, which reads it or a
//! later value. A raises its mark only when handing over, inside the feed
//! lock, and that hand-over would have carried r; it did not happen by M,
//! and one after M cannot be read at M (the lock orders them). So M reads
//! a mark ≤ s, `W ≤ s < s'`, and r' is kept back — a contradiction: r'
//! is never written before r. A record numbered below `W` may still come
//! later (numbered but not yet moved out of its shard at M); only the
//! order of each key's records matters, and that argument covers it.
//! The marks are only ever read and written inside locks that order them
//! (the shard's, the feed's), so relaxed atomics suffice.
//!
//! A writer's handed batches carry tickets, issued in order; once every
//! record of every batch up to ticket T has been written and synced, T is
//! durable ([`Merger::durable`]): `appendfsync always` acknowledges a
//! write when its writer's ticket is.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::effect::{Effects, Log, Mark};

/// A log larger than this is freed rather than kept for reuse.
const SPARE_MAX_BYTES: usize = 16 << 20;

/// What writers handed over since the reader last collected: their
/// records, one log after another, and each batch's ticket with the
/// index of the record after its last. The reader swaps it for an empty
/// one of its own, so both keep their capacity from round to round.
#[derive(Default)]
pub struct Batches {
    pub log: Log,
    /// (ticket, end): batch `ticket`'s records end before index `end`.
    pub tickets: Vec<(u64, usize)>,
}

impl Batches {
    pub fn is_empty(&self) -> bool {
        self.tickets.is_empty()
    }

    fn clear(&mut self) {
        self.log.clear();
        self.tickets.clear();
    }
}

#[derive(Default)]
struct State {
    handed: Batches,
    marks: Vec<Arc<Mark>>,
    /// The last ticket issued.
    issued: u64,
    /// The last ticket whose records are all written (and synced, when
    /// the policy says so).
    durable: u64,
    /// The reader waits for batches (it sleeps).
    idle: bool,
    /// Asked to look now ([`Feed::nudge`]).
    nudged: bool,
}

/// Where writers hand their records and the AOF writer takes them.
#[derive(Default)]
pub struct Feed {
    state: Mutex<State>,
    /// The reader's wake-up: batches arrived.
    work: Condvar,
    /// Writers waiting for a ticket to be durable.
    done: Condvar,
    /// `State::durable`, readable without the lock (an event loop asks
    /// every turn whether the replies it holds may go).
    durable_now: AtomicU64,
}

impl Feed {
    pub fn new() -> Self {
        Self::default()
    }

    /// A new writer's mark, which its buffers note in
    /// ([`Effects::marked`]) and the reader reads from now on.
    pub fn register(&self) -> Arc<Mark> {
        let m = Arc::new(Mark::default());
        self.state.lock().marks.push(m.clone());
        m
    }

    /// Hands over `fx`'s records (a buffer marked with a registered mark,
    /// holding every record its writer has not handed over): they are
    /// copied after those handed over before, and `fx` keeps its
    /// capacity. Returns the batch's ticket, or None if there was
    /// nothing.
    pub fn hand(&self, fx: &Effects) -> Option<u64> {
        if fx.is_empty() {
            return None;
        }
        let mut st = self.state.lock();
        fx.drain_into(&mut st.handed.log);
        st.issued += 1;
        let t = st.issued;
        let end = st.handed.log.len();
        st.handed.tickets.push((t, end));
        if let Some(m) = fx.mark() {
            m.clear();
        }
        if st.idle {
            st.idle = false;
            self.work.notify_one();
        }
        Some(t)
    }

    /// The reader's side: every batch handed over, swapped into `into`
    /// (emptied first), and the watermark: no record still held by a
    /// writer is numbered below it.
    pub fn collect(&self, into: &mut Batches) -> u64 {
        into.clear();
        let mut st = self.state.lock();
        let w = st.marks.iter().map(|m| m.get()).min().unwrap_or(u64::MAX);
        std::mem::swap(&mut st.handed, into);
        w
    }

    /// The reader waits up to `timeout` for a batch.
    pub fn wait_work(&self, timeout: std::time::Duration) {
        let mut st = self.state.lock();
        if st.handed.is_empty() && !st.nudged {
            st.idle = true;
            self.work.wait_for(&mut st, timeout);
            st.idle = false;
        }
        st.nudged = false;
    }

    /// Wakes the reader now (a request other than records: a rewrite, a
    /// replica's cut, a WAIT, a shutdown); one that is not waiting does
    /// not wait at its next look.
    pub fn nudge(&self) {
        let mut st = self.state.lock();
        st.nudged = true;
        self.work.notify_one();
    }

    /// The reader publishes that every ticket up to `t` is durable.
    pub fn publish_durable(&self, t: u64) {
        let mut st = self.state.lock();
        if t > st.durable {
            st.durable = t;
            self.durable_now.store(t, Ordering::SeqCst);
            self.done.notify_all();
        }
    }

    pub fn durable(&self) -> u64 {
        self.state.lock().durable
    }

    /// The last ticket published durable, without taking the lock. The
    /// store is sequentially consistent, so a waiter that notes the
    /// ticket it waits for and then reads this cannot miss both the
    /// value and the publisher's look at its note (see
    /// [`Feed::publish_durable`]).
    #[inline]
    pub fn durable_now(&self) -> u64 {
        self.durable_now.load(Ordering::SeqCst)
    }

    /// The last ticket issued.
    pub fn issued(&self) -> u64 {
        self.state.lock().issued
    }

    /// Waits until ticket `t` is durable, or `give_up` says to stop
    /// waiting (checked every `poll`).
    pub fn wait_durable(&self, t: u64, poll: std::time::Duration, give_up: impl Fn() -> bool) -> bool {
        let mut st = self.state.lock();
        if st.durable >= t {
            return true;
        }
        while st.durable < t {
            if give_up() {
                return false;
            }
            self.done.wait_for(&mut st, poll);
        }
        true
    }
}

/// A record not written yet: its number, its batch's ticket, and where it
/// is (the batch's slot in [`Merger::logs`], its index there).
#[derive(Clone, Copy)]
struct Pending {
    seq: u64,
    ticket: u64,
    slot: u32,
    idx: u32,
}

/// The reader's records not written yet, merged by number. Each round's
/// log stays as it came in; what is sorted is a small entry per record,
/// and [`Merger::ready`] copies the records' bytes out in order (or,
/// when one log holds them all in order, hands it out whole).
#[derive(Default)]
pub struct Merger {
    pending: Vec<Pending>,
    /// The rounds' logs with records pending, and how many each has left
    /// (None: a free slot).
    logs: Vec<Option<(Log, usize)>>,
    free: Vec<u32>,
    /// What the last [`Merger::ready`] returned.
    out: Log,
    /// An emptied log, for the next [`Feed::collect`].
    spare: Batches,
    /// The highest ticket collected.
    collected: u64,
}

impl Merger {
    /// Collects what `feed`'s writers handed over; returns the
    /// watermark (see [`Feed::collect`]).
    pub fn collect(&mut self, feed: &Feed) -> u64 {
        let mut b = std::mem::take(&mut self.spare);
        let w = feed.collect(&mut b);
        self.push(b);
        w
    }

    /// Takes `b`'s records in.
    pub fn push(&mut self, b: Batches) {
        let Batches { log, mut tickets } = b;
        if let Some(&(t, _)) = tickets.last() {
            self.collected = self.collected.max(t);
        }
        if log.is_empty() {
            retire(&mut self.spare, log);
        } else {
            let slot = match self.free.pop() {
                Some(s) => s,
                None => {
                    self.logs.push(None);
                    (self.logs.len() - 1) as u32
                }
            };
            let mut start = 0;
            for &(t, end) in &tickets {
                for (i, r) in log.recs()[start..end].iter().enumerate() {
                    self.pending.push(Pending { seq: r.seq, ticket: t, slot, idx: (start + i) as u32 });
                }
                start = end;
            }
            let n = log.len();
            self.logs[slot as usize] = Some((log, n));
        }
        tickets.clear();
        self.spare.tickets = tickets;
    }

    /// The records numbered below `w`, by number, taken out (good until
    /// the next call).
    pub fn ready(&mut self, w: u64) -> &Log {
        self.out.clear();
        if self.pending.is_empty() {
            return &self.out;
        }
        // Stable: a MULTI or EXEC shares its neighbour's number and keeps
        // its place beside it.
        if !self.pending.is_sorted_by_key(|p| p.seq) {
            self.pending.sort_by_key(|p| p.seq);
        }
        let n = self.pending.partition_point(|p| p.seq < w);
        // All of one log, in its order: it is the answer as it is.
        let first = self.pending[0];
        if n == self.pending.len() && self.logs[first.slot as usize].as_ref().is_some_and(|(l, left)| *left == l.len() && *left == n) {
            let in_order = self.pending.iter().enumerate().all(|(i, p)| p.idx as usize == i);
            if in_order {
                self.pending.clear();
                let (log, _) = self.logs[first.slot as usize].take().expect("checked");
                self.free.push(first.slot);
                let old = std::mem::replace(&mut self.out, log);
                retire(&mut self.spare, old);
                return &self.out;
            }
        }
        for p in self.pending.drain(..n) {
            let slot = &mut self.logs[p.slot as usize];
            let (log, left) = slot.as_mut().expect("a pending record's log");
            self.out.push_from(log, &log.recs()[p.idx as usize]);
            *left -= 1;
            if *left == 0 {
                let (log, _) = slot.take().expect("just read");
                self.free.push(p.slot);
                retire(&mut self.spare, log);
            }
        }
        &self.out
    }

    /// The highest ticket whose records, and those of every ticket
    /// before it, have all been taken by [`Merger::ready`].
    pub fn durable(&self) -> u64 {
        match self.pending.iter().map(|p| p.ticket).min() {
            Some(t) => t - 1,
            None => self.collected,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// A log all written out: kept, emptied, for the next collection (one is
/// enough: the larger; one that grew very large is let go).
fn retire(spare: &mut Batches, mut log: Log) {
    if spare.log.capacity() < log.capacity() && log.capacity() <= SPARE_MAX_BYTES {
        log.clear();
        spare.log = log;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effect::Effect;
    use crate::{Keyspace, LockSet};

    fn log(seqs: &[u64]) -> Log {
        let mut l = Log::default();
        for &seq in seqs {
            l.push(seq, 0, &Effect::FlushDb);
        }
        l
    }

    #[test]
    fn marks_hold_back_what_may_come_before() {
        let feed = Feed::new();
        let (ma, mb) = (feed.register(), feed.register());
        let (a, b) = (Effects::marked(ma.clone()), Effects::marked(mb));
        a.extend(&mut log(&[1, 3]));
        b.extend(&mut log(&[2, 4]));
        assert_eq!(ma.get(), 1);
        assert_eq!(feed.hand(&b), Some(1));
        let mut m = Merger::default();
        let w = m.collect(&feed);
        assert_eq!(w, 1);
        assert!(m.ready(w).is_empty());
        assert_eq!(m.durable(), 0);
        assert_eq!(feed.hand(&a), Some(2));
        let w = m.collect(&feed);
        assert_eq!(w, u64::MAX);
        assert_eq!(m.ready(w).recs().iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert_eq!(m.durable(), 2);
        assert_eq!(feed.hand(&a), None);
    }

    /// Two writers change the same keys through their own lock sets
    /// while a reader merges: every key's records come out in the order
    /// they were numbered (which is the order they happened), and
    /// replaying them gives the keys' final values.
    #[test]
    fn two_writers_on_the_same_keys_keep_each_keys_order() {
        let ks = Keyspace::new(1, 2);
        ks.attach_effects(true);
        let feed = Feed::new();
        let marks = [feed.register(), feed.register()];
        let done = std::sync::atomic::AtomicUsize::new(0);
        let mut out: Vec<crate::effect::Record> = Vec::new();
        std::thread::scope(|s| {
            for (w, mark) in marks.iter().enumerate() {
                let (ks, feed, done) = (&ks, &feed, &done);
                let mark = mark.clone();
                s.spawn(move || {
                    let mine = Effects::marked(mark.clone());
                    for i in 0..3000u32 {
                        let mut locks = LockSet::new(ks);
                        locks.effects = Effects::marked(mark.clone());
                        let key = format!("k{}", i % 7);
                        let loc = ks.locate(0, key.as_bytes());
                        locks.acquire([loc.gid]);
                        let v = crate::value::Value::Str(crate::value::StrValue::Emb(format!("{w}:{i}").into_bytes().into()));
                        locks.shard(loc.gid).set(key.as_bytes(), loc.hash, v, None, 0);
                        locks.release();
                        mine.absorb(&locks.effects);
                        if i % 5 == 0 {
                            feed.hand(&mine);
                        }
                    }
                    feed.hand(&mine);
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
            let mut m = Merger::default();
            loop {
                let finished = done.load(Ordering::SeqCst) == 2;
                let w = m.collect(&feed);
                out.extend(crate::aof::records(m.ready(w)));
                if finished && m.is_empty() {
                    break;
                }
            }
        });
        assert_eq!(out.len(), 6000);
        let mut last = std::collections::HashMap::new();
        for r in &out {
            let k = r.effect.key().unwrap().to_vec();
            if let Some(prev) = last.insert(k, r.seq) {
                assert!(prev < r.seq, "a key's records out of order");
            }
        }
        // Replayed in the written order, the keys end as they are.
        let again = Keyspace::new(1, 2);
        for r in &out {
            r.apply(&again, crate::HashLimits { max_entries: 128, max_value: 64 }, crate::ListLimits::default(), 0);
        }
        for i in 0..7 {
            let key = format!("k{i}");
            let get = |ks: &Keyspace| {
                use crate::EntryExt;
                let loc = ks.locate(0, key.as_bytes());
                let mut s = ks.lock(loc.gid);
                s.get(key.as_bytes(), loc.hash, 0).map(|e| format!("{:?}", e.value()))
            };
            assert_eq!(get(&ks), get(&again));
        }
    }
}
