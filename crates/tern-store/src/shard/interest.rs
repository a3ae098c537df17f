//! Who hears of a write to a key: the WATCHing clients' flags and the
//! clients blocked on it (blocking pops), kept in one table per shard so
//! that a write probes it once, and only when it is not empty. The shard's
//! write path calls [`Shard::notify`] from its one place, `wrote`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::Shard;
use crate::entry::EntryExt;

/// Set when a watched key is modified; the watching client checks it at EXEC.
#[derive(Debug, Default)]
pub struct WatchFlag(AtomicBool);

impl WatchFlag {
    pub fn new() -> Arc<Self> {
        Arc::new(WatchFlag(AtomicBool::new(false)))
    }
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
    pub fn set(&self) {
        self.0.store(true, Ordering::Release)
    }
}

/// The type stream readers wait for (their [`Waiter::wants`]).
const STREAM: &str = "stream";

/// Who wants to hear that a key changed: the WATCHing clients' flags, and
/// the clients blocked on it (blocking pops), first come first. One table
/// for both, so that a write probes it once, and only when it is not empty.
#[derive(Debug)]
pub(super) struct Interest {
    hash: u64,
    key: Box<[u8]>,
    flags: Vec<Arc<WatchFlag>>,
    waiters: std::collections::VecDeque<Waiter>,
    /// Waiters with `on_nokey`.
    nokey: u32,
}

/// A client blocked on a key, the worker that owns it (the one that
/// must be woken to serve it), and the type of value (TYPE's name) it
/// can take from: a key's queue may hold BLPOP and BZPOPMIN waiters at
/// once, and each is served in turn among those its type serves, as in
/// Redis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Waiter {
    pub client: u64,
    pub worker: u32,
    /// Redis's `unblock_on_nokey`: the wait is to end when the key is
    /// deleted (XREADGROUP's); the blocking pops' waits are not.
    pub on_nokey: bool,
    pub wants: &'static str,
}

/// How starting or ending a wait changed the number of keys clients are
/// blocked on (INFO's `total_blocking_keys`) and of those with a waiter
/// `on_nokey` (`total_blocking_keys_on_nokey`): -1, 0 or 1 each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockingKeys {
    pub keys: i8,
    pub nokey: i8,
}

impl Shard {
    /// Notes ready the keys clients block on that are live here (after
    /// SWAPDB, which brings a database's keys in without writing them).
    pub(super) fn ready_if_live(&mut self, now: u64) {
        let live: Vec<Box<[u8]>> = self
            .interest
            .iter()
            .filter(|w| !w.waiters.is_empty() && self.peek(&w.key, w.hash, now).is_some())
            .map(|w| w.key.clone())
            .collect();
        for key in live {
            if !self.ready.contains(&key) {
                self.ready.push(key);
            }
        }
    }

    /// Marks modified the watched keys that are live here or in `other`:
    /// what FLUSHDB (`other` None) and SWAPDB (`other` the shard swapped in)
    /// change. Keys absent or expired on both sides stay untouched, as in
    /// Redis's `touchAllWatchedKeysInDb`.
    pub(super) fn signal_live(&self, other: Option<&Shard>, now: u64) {
        for w in self.interest.iter() {
            let live = self.peek(&w.key, w.hash, now).is_some() || other.is_some_and(|o| o.peek(&w.key, w.hash, now).is_some());
            if live {
                for f in &w.flags {
                    f.set();
                }
            }
        }
    }

    fn interest_mut(&mut self, key: &[u8], hash: u64) -> &mut Interest {
        let entry = self.interest.entry(hash, |w| *w.key == *key, |w| w.hash);
        entry.or_insert_with(|| Interest { hash, key: key.into(), flags: Vec::new(), waiters: Default::default(), nokey: 0 }).into_mut()
    }

    /// Drops `key`'s registration once no one is interested any more.
    fn interest_done(&mut self, key: &[u8], hash: u64) {
        if let Ok(e) = self.interest.find_entry(hash, |w| *w.key == *key) {
            if e.get().flags.is_empty() && e.get().waiters.is_empty() {
                e.remove();
            }
        }
    }

    /// Registers `flag` to be set when `key` is next modified. Returns
    /// whether `key` was watched by no one before (INFO
    /// `total_watched_keys` counts the keys, not the watches).
    pub fn watch(&mut self, key: &[u8], hash: u64, flag: &Arc<WatchFlag>) -> bool {
        let w = self.interest_mut(key, hash);
        let first = w.flags.is_empty();
        if !w.flags.iter().any(|f| Arc::ptr_eq(f, flag)) {
            w.flags.push(flag.clone());
        }
        first
    }

    /// Removes a registration made by [`Shard::watch`]. Returns whether
    /// `key` is watched by no one any more (it was before).
    pub fn unwatch(&mut self, key: &[u8], hash: u64, flag: &Arc<WatchFlag>) -> bool {
        let mut last = false;
        if let Some(w) = self.interest.find_mut(hash, |w| *w.key == *key) {
            let had = !w.flags.is_empty();
            w.flags.retain(|f| !Arc::ptr_eq(f, flag));
            last = had && w.flags.is_empty();
        }
        self.interest_done(key, hash);
        last
    }

    /// Queues `w` among the clients blocked on `key` (a blocking pop): the
    /// next write to it queues the key for [`Shard::drain_ready`].
    pub fn block(&mut self, key: &[u8], hash: u64, w: Waiter) -> BlockingKeys {
        let i = self.interest_mut(key, hash);
        let d = BlockingKeys { keys: i8::from(i.waiters.is_empty()), nokey: i8::from(w.on_nokey && i.nokey == 0) };
        i.nokey += u32::from(w.on_nokey);
        i.waiters.push_back(w);
        d
    }

    /// Takes `client` out of `key`'s queue (served, timed out, unblocked
    /// or gone). When its turn had come (it was first of those the key's
    /// type serves) and the key still holds a value, the key is ready
    /// again for the next one: what it did not take is theirs.
    pub fn unblock(&mut self, key: &[u8], hash: u64, client: u64, now: u64) -> BlockingKeys {
        let due = match self.interest.find(hash, |w| *w.key == *key) {
            Some(w) => self.next_waiter(key, hash, &w.waiters).is_some_and(|f| f.client == client),
            None => false,
        };
        let mut pass_on = false;
        let mut d = BlockingKeys::default();
        let mut stream_at = None;
        if let Some(w) = self.interest.find_mut(hash, |w| *w.key == *key) {
            if let Some(i) = w.waiters.iter().position(|x| x.client == client) {
                let gone = w.waiters.remove(i);
                if gone.is_some_and(|x| x.on_nokey) {
                    w.nokey -= 1;
                    d.nokey = -i8::from(w.nokey == 0);
                }
                if gone.is_some_and(|x| x.wants == STREAM) {
                    stream_at = Some(i);
                }
                d.keys = -i8::from(w.waiters.is_empty());
                pass_on = due && !w.waiters.is_empty();
            }
        }
        // A stream's readers each wait for their own ids: the one after a
        // reader that is done hears of the write in its turn, whoever was
        // first.
        if let Some(at) = stream_at {
            self.wake_after(key, hash, at, now);
            self.interest_done(key, hash);
            return d;
        }
        // What it did not take is the next one's; a key gone (or changed
        // type) is news for the waiters that end on that (`on_nokey`).
        if pass_on && !self.ready.iter().any(|k| **k == *key) {
            let next = self.interest.find(hash, |w| *w.key == *key).and_then(|w| self.next_waiter(key, hash, &w.waiters)).is_some();
            if next && (self.peek(key, hash, now).is_some() || self.interest.find(hash, |w| *w.key == *key).is_some_and(|w| w.nokey > 0)) {
                self.ready.push(key.into());
            }
        }
        self.interest_done(key, hash);
        d
    }

    /// A stream reader woken for `key` that the write did not serve (its
    /// ids are ahead, its group got nothing new) waits on, and passes the
    /// wake to the reader after it, as Redis tries every reader of the
    /// key in turn.
    pub fn pass_over(&mut self, key: &[u8], hash: u64, client: u64, now: u64) {
        let at = self.interest.find(hash, |w| *w.key == *key).and_then(|w| w.waiters.iter().position(|x| x.client == client));
        if let Some(at) = at {
            self.wake_after(key, hash, at + 1, now);
        }
    }

    /// Wakes the first stream reader of `key`'s queue from position `at`
    /// on that the key's state concerns: any while the key holds a stream;
    /// those that end when it goes (`on_nokey`) once it is absent or of
    /// another type.
    fn wake_after(&mut self, key: &[u8], hash: u64, at: usize, now: u64) {
        let live = self.peek(key, hash, now).map(|e| e.value().type_name());
        let Some(w) = self.interest.find(hash, |w| *w.key == *key) else { return };
        let next = w.waiters.iter().skip(at).find(|x| (x.wants == STREAM && live == Some(STREAM)) || x.on_nokey).copied();
        if let Some(n) = next {
            if !self.passed.contains(&n) {
                self.passed.push(n);
            }
        }
    }

    /// Whether `client` may take from `key` now: no one blocked on it who
    /// wants the key's type came earlier (it is the first of them, or
    /// there is none).
    pub fn first_waiter(&self, key: &[u8], hash: u64, client: u64) -> bool {
        match self.interest.find(hash, |w| *w.key == *key) {
            Some(w) => self.next_waiter(key, hash, &w.waiters).is_none_or(|f| f.client == client),
            None => true,
        }
    }

    /// The first of `waiters` (`key`'s queue) whose type `key` holds, or
    /// that ends when the key changes type (`on_nokey`: its run again
    /// answers with an error); the first of all when the key is absent
    /// (its wake finds nothing, and it waits on, unless it is `on_nokey`).
    fn next_waiter<'w>(&self, key: &[u8], hash: u64, waiters: &'w std::collections::VecDeque<Waiter>) -> Option<&'w Waiter> {
        match self.table.get(key, hash) {
            Some(e) => {
                let t = e.value().type_name();
                waiters.iter().find(|w| w.wants == t || w.on_nokey)
            }
            None => waiters.front(),
        }
    }

    /// The waiter a write to `key` wakes: [`Self::next_waiter`], but for
    /// an absent key the first that ends on its deletion, if any.
    fn woken_by_write<'w>(&self, key: &[u8], hash: u64, waiters: &'w std::collections::VecDeque<Waiter>) -> Option<&'w Waiter> {
        if self.table.get(key, hash).is_none() {
            if let Some(w) = waiters.iter().find(|w| w.on_nokey) {
                return Some(w);
            }
        }
        self.next_waiter(key, hash, waiters)
    }

    /// Moves the first waiter (of those the key's type serves) of each key
    /// written since the last call (in the order the keys were first
    /// written) to `out`, once each.
    #[inline]
    pub fn drain_ready(&mut self, out: &mut Vec<Waiter>) {
        if !self.passed.is_empty() {
            for w in std::mem::take(&mut self.passed) {
                if !out.contains(&w) {
                    out.push(w);
                }
            }
        }
        if self.ready.is_empty() {
            return;
        }
        for key in std::mem::take(&mut self.ready) {
            let hash = self.hash_key(&key);
            let Some(i) = self.interest.find(hash, |w| *w.key == *key) else { continue };
            if let Some(w) = self.woken_by_write(&key, hash, &i.waiters) {
                if !out.contains(w) {
                    out.push(*w);
                }
            }
        }
    }

    /// Tells everyone interested in `key` that it changed: WATCHers' flags
    /// are set, and a key clients block on is queued once as ready.
    #[cold]
    pub(super) fn notify(&mut self, key: &[u8], hash: u64) {
        let Some(w) = self.interest.find(hash, |w| *w.key == *key) else { return };
        for f in &w.flags {
            f.set();
        }
        if !w.waiters.is_empty() && !self.ready.iter().any(|k| **k == *key) {
            self.ready.push(key.into());
        }
    }

    /// Marks `key` modified for every client watching it, as a write to it
    /// does (tests; writers go through [`Shard::wrote`]).
    #[cfg(test)]
    pub(super) fn signal(&mut self, key: &[u8], hash: u64) {
        if !self.interest.is_empty() {
            self.notify(key, hash);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::NewValue;
    use crate::shard::tests::s;

    #[test]
    fn watch_signal() {
        let mut sh = Shard::new();
        let f = WatchFlag::new();
        sh.watch(b"a", 7, &f);
        sh.signal(b"b", 8);
        assert!(!f.is_set());
        sh.signal(b"a", 7);
        assert!(f.is_set());
        sh.unwatch(b"a", 7, &f);
        assert!(sh.interest.is_empty());
    }

    /// Stream readers each wait for ids of their own: one the write did
    /// not serve passes the wake to the reader after it, and one served
    /// hands it on too, whoever was first; a deleted key wakes only those
    /// that end on it.
    #[test]
    fn stream_readers_pass_a_wake_along_the_queue() {
        let mut sh = Shard::new();
        let hk = sh.hash_key(b"k");
        let r = |client, on_nokey| Waiter { client, worker: 0, on_nokey, wants: "stream" };
        let (a, b, c) = (r(1, false), r(2, true), r(3, false));
        for w in [a, b, c] {
            sh.block(b"k", hk, w);
        }
        let mut out = Vec::new();
        sh.set(b"k", hk, NewValue::Value(crate::Value::Stream(Box::default())), None, 0);
        sh.drain_ready(&mut out);
        assert_eq!(out, vec![a]);
        // `a` was not served: `b` is next.
        sh.pass_over(b"k", hk, 1, 0);
        out.clear();
        sh.drain_ready(&mut out);
        assert_eq!(out, vec![b]);
        // `b` was served and leaves: `c`, behind it, is next, though `a`
        // is still first.
        sh.unblock(b"k", hk, 2, 0);
        out.clear();
        sh.drain_ready(&mut out);
        assert_eq!(out, vec![c]);
        // Gone: the reader that ends on it is woken, not the first.
        sh.block(b"k", hk, b);
        sh.remove(b"k", hk, 0);
        out.clear();
        sh.drain_ready(&mut out);
        assert_eq!(out, vec![b]);
        // ... and, served with its error, wakes no reader that waits on.
        sh.unblock(b"k", hk, 2, 0);
        out.clear();
        sh.drain_ready(&mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn waiters_of_other_types_are_passed_over() {
        let mut sh = Shard::new();
        let hq = sh.hash_key(b"q");
        let l = Waiter { client: 1, worker: 0, on_nokey: false, wants: "list" };
        let (a, b) = (Waiter { client: 2, worker: 1, on_nokey: false, wants: "string" }, Waiter { client: 3, worker: 0, on_nokey: false, wants: "string" });
        for w in [l, a, b] {
            sh.block(b"q", hq, w);
        }
        let mut out = Vec::new();
        sh.set(b"q", hq, s("v"), None, 0);
        sh.drain_ready(&mut out);
        assert_eq!(out, vec![a]);
        assert!(!sh.first_waiter(b"q", hq, 1) && sh.first_waiter(b"q", hq, 2) && !sh.first_waiter(b"q", hq, 3));
        // The first string waiter leaves: the next string waiter is due,
        // though a list waiter came before it.
        sh.unblock(b"q", hq, 2, 0);
        out.clear();
        sh.drain_ready(&mut out);
        assert_eq!(out, vec![b]);
        // The list waiter leaving passes nothing on to a string waiter
        // that is already first of its kind.
        sh.unblock(b"q", hq, 1, 0);
        out.clear();
        sh.drain_ready(&mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn writes_wake_the_first_waiter_once_and_leaving_passes_it_on() {
        let mut sh = Shard::new();
        let hq = sh.hash_key(b"q");
        let (a, b) = (
            Waiter { client: 1, worker: 0, on_nokey: false, wants: "string" },
            Waiter { client: 2, worker: 1, on_nokey: true, wants: "string" },
        );
        assert_eq!(sh.block(b"q", hq, a), BlockingKeys { keys: 1, nokey: 0 });
        assert_eq!(sh.block(b"q", hq, b), BlockingKeys { keys: 0, nokey: 1 });
        let mut out = Vec::new();
        sh.set(b"other", sh.hash_key(b"other"), s("v"), None, 0);
        sh.drain_ready(&mut out);
        assert!(out.is_empty());
        assert!(sh.first_waiter(b"q", hq, 1) && !sh.first_waiter(b"q", hq, 2));
        sh.set(b"q", hq, s("v"), None, 0);
        sh.set_expire(b"q", hq, Some(100));
        sh.drain_ready(&mut out);
        assert_eq!(out, vec![a]);
        // The first one leaves while the key holds a value: the next is due.
        assert_eq!(sh.unblock(b"q", hq, 1, 0), BlockingKeys::default());
        out.clear();
        sh.drain_ready(&mut out);
        assert_eq!(out, vec![b]);
        // Expiry is a write too.
        sh.get(b"q", hq, 200);
        out.clear();
        sh.drain_ready(&mut out);
        assert_eq!(out, vec![b]);
        // Leaving an absent key passes nothing on.
        sh.block(b"q", hq, a);
        assert_eq!(sh.unblock(b"q", hq, 2, 300), BlockingKeys { keys: 0, nokey: -1 });
        out.clear();
        sh.drain_ready(&mut out);
        assert!(out.is_empty());
        assert_eq!(sh.unblock(b"q", hq, 1, 300), BlockingKeys { keys: -1, nokey: 0 });
        assert_eq!(sh.unblock(b"q", hq, 1, 300), BlockingKeys::default());
        assert!(sh.interest.is_empty());
    }
}
