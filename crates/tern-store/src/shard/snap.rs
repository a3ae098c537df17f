//! A shard's side of a running snapshot (see [`crate::snapshot`]): the
//! copy-before-write of an entry the walk has yet to reach, the SNAP bit
//! that says an entry was copied (or came in after the start), and the
//! calls the snapshot makes under the shard's lock to install its part,
//! walk a slice, take the copies and clear the bits; and the part itself
//! ([`ShardSnap`]), what the parts of one snapshot share ([`Shared`]) and
//! the walk of a table ([`walk`]). The driver over the whole keyspace is
//! `crate::snapshot`'s.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::Shard;
use crate::entry::{is_expired, Entry, EntryExt, Table};
use crate::value::{Value, ValueRef};

/// Bytes of an entry (a long string is held in its item, other values in
/// the heap beside it) that weigh as one more entry in a slice.
pub const WEIGHT_BYTES: usize = 4096;
/// A cursor past every position: the shard's walk is over.
pub(crate) const WALKED: u64 = 1 << 32;
/// [`Shared::homes`]: the part was handed over as an orphan table.
pub(crate) const ORPHAN: u32 = u32::MAX;
/// [`Shared::homes`]: the part is delivered (or given up).
pub(crate) const GONE: u32 = u32::MAX - 1;

/// A key's form at the start, copied before its first change.
#[derive(Debug)]
pub(crate) struct Captured {
    pub(crate) key: Box<[u8]>,
    pub(crate) value: Value,
    pub(crate) expire: Option<u64>,
}

impl Captured {
    pub(crate) fn bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.key.len() + self.value.heap_size()
    }
}

/// One shard's part in a running snapshot: it sits in the shard beside
/// the table it describes (and moves with it, see the module docs).
#[derive(Debug)]
pub(crate) struct ShardSnap {
    pub(crate) shared: Arc<Shared>,
    /// Where this table's content sat at the start: database, shard index.
    pub(crate) db: u32,
    pub(crate) index: u32,
    /// Copied from the snapshot: what was expired at the start is not saved.
    pub(crate) start_ms: u64,
    /// Positions below this have been walked; [`WALKED`] once all have.
    pub(crate) cursor: u64,
    pub(crate) captured: Vec<Captured>,
    pub(crate) captured_bytes: usize,
    /// Hashes of the entries given the SNAP bit, to clear it from them
    /// when the walk is over or given up (some may be gone since).
    pub(crate) marked: Vec<u64>,
    /// Hashes ever noted in `marked`.
    pub(crate) noted: usize,
}

impl ShardSnap {
    /// Whether the walk has yet to reach `hash`'s position: a change
    /// there must first hand the entry's old form over.
    #[inline]
    pub(crate) fn ahead(&self, hash: u64) -> bool {
        u64::from(hash as u32) >= self.cursor
    }

    /// Notes that an entry at `hash` got the SNAP bit.
    #[inline]
    pub(crate) fn marked(&mut self, hash: u64) {
        self.marked.push(hash);
        self.noted += 1;
    }

    /// Hashes noted over the part's life.
    pub(crate) fn noted(&self) -> usize {
        self.noted
    }

    /// Takes `e`'s form at the start (it is about to change or go),
    /// unless it had expired by then, or no one will read it (the
    /// snapshot was dropped unfinished).
    pub(crate) fn capture(&mut self, e: &Entry) {
        if is_expired(e, self.start_ms) || self.shared.abandoned.load(Ordering::Relaxed) {
            return;
        }
        let c = Captured { key: e.key().into(), value: e.to_value(), expire: e.expire() };
        let n = c.bytes();
        self.captured_bytes += n;
        self.captured.push(c);
        self.shared.held(n as isize);
        self.shared.pending[self.slot()].fetch_add(n, Ordering::Relaxed);
    }

    /// Whether the whole table has been walked.
    pub(crate) fn walked(&self) -> bool {
        self.cursor == WALKED
    }

    /// A noted hash whose entries' SNAP bits are to be cleared.
    pub(crate) fn pop_marked(&mut self) -> Option<u64> {
        self.marked.pop()
    }

    pub(crate) fn all_cleared(&self) -> bool {
        self.marked.is_empty()
    }

    /// Stops the walk (nothing more is captured) and drops the copies.
    pub(crate) fn give_up(&mut self) {
        self.cursor = WALKED;
        let bytes = self.captured_bytes;
        drop(self.take_captured());
        self.shared.held(-(bytes as isize));
    }

    fn slot(&self) -> usize {
        self.db as usize * self.shared.per_db + self.index as usize
    }

    pub(crate) fn take_captured(&mut self) -> Vec<Captured> {
        self.shared.pending[self.slot()].fetch_sub(self.captured_bytes, Ordering::Relaxed);
        self.captured_bytes = 0;
        std::mem::take(&mut self.captured)
    }

    /// Whether this part belongs to snapshot `shared`, for database
    /// `db`'s shard `index`.
    pub(crate) fn is(&self, shared: &Arc<Shared>, slot: usize) -> bool {
        Arc::ptr_eq(&self.shared, shared) && self.slot() == slot
    }

    /// Records where this part now sits (SWAPDB moved it to `db`).
    pub(crate) fn moved_to(&self, db: u32) {
        self.shared.homes[self.slot()].store(db, Ordering::Release);
    }

    /// Hands the part, with the table it describes (detached by a
    /// FLUSH), to the saver.
    pub(crate) fn orphan(self: Box<Self>, table: Table) {
        let shared = self.shared.clone();
        let slot = self.slot();
        shared.orphans.lock().push(Orphan { table, snap: self });
        shared.homes[slot].store(ORPHAN, Ordering::Release);
    }
}

/// A table detached while its walk was under way, and its part.
#[derive(Debug)]
pub(crate) struct Orphan {
    pub(crate) table: Table,
    pub(crate) snap: Box<ShardSnap>,
}

/// What the snapshot's parts share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) per_db: usize,
    /// Per (database at the start, shard index): the database whose shard
    /// holds that part now, [`ORPHAN`] or [`GONE`].
    pub(crate) homes: Box<[AtomicU32]>,
    /// Captured bytes waiting in each part.
    pub(crate) pending: Box<[AtomicUsize]>,
    pub(crate) orphans: Mutex<Vec<Orphan>>,
    /// Captured bytes not yet delivered, and the most there were.
    pub(crate) held: AtomicUsize,
    pub(crate) peak: AtomicUsize,
    /// The [`Snapshot`] was dropped before the end: the next one clears up.
    pub(crate) abandoned: AtomicBool,
}

impl Shared {
    pub(crate) fn held(&self, delta: isize) {
        if delta >= 0 {
            let now = self.held.fetch_add(delta as usize, Ordering::Relaxed) + delta as usize;
            self.peak.fetch_max(now, Ordering::Relaxed);
        } else {
            self.held.fetch_sub(delta.unsigned_abs(), Ordering::Relaxed);
        }
    }

    /// Called when the shard `home` names, locked, does not hold part
    /// `slot`: it moved since `home` was read, or (a bug) it was lost,
    /// which gives the part up rather than look for it forever. A home
    /// changes only under the lock of the shard holding the part.
    pub(crate) fn check_home(&self, slot: usize, home: u32) {
        if self.homes[slot].load(Ordering::Acquire) == home {
            debug_assert!(false, "snapshot part {slot} lost from database {home}");
            self.homes[slot].store(GONE, Ordering::Release);
        }
    }

    pub(crate) fn take_orphan(&self, slot: usize) -> Option<Orphan> {
        let mut o = self.orphans.lock();
        let i = o.iter().position(|x| x.snap.slot() == slot)?;
        Some(o.swap_remove(i))
    }
}

impl Shard {
    /// Before the entry of `key` changes in place or goes: a snapshot whose
    /// walk has yet to reach it gets its form at the start, once.
    #[inline]
    pub(super) fn preserve(&mut self, key: &[u8], hash: u64) {
        if let Some(s) = self.snap.as_deref_mut() {
            if s.ahead(hash) {
                Self::capture(&mut self.table, s, key, hash);
            }
        }
    }

    /// [`Shard::preserve`]'s work: the entry is marked, its hash noted and
    /// its form captured. False if there is no entry.
    #[cold]
    #[inline(never)]
    fn capture(table: &mut Table, s: &mut ShardSnap, key: &[u8], hash: u64) -> bool {
        let Some(e) = table.get_mut(key, hash) else { return false };
        if !e.snap_mark() {
            e.set_snap_mark(true);
            s.marked(hash);
            s.capture(e);
        }
        true
    }

    /// Before a store ahead of the walk: the old entry is preserved, or,
    /// with none, the new one's hash is noted (it comes marked).
    #[cold]
    #[inline(never)]
    pub(super) fn snap_replacing(&mut self, key: &[u8], hash: u64) {
        let Some(s) = self.snap.as_deref_mut() else { return };
        if !Self::capture(&mut self.table, s, key, hash) {
            s.marked(hash);
        }
    }

    /// Entries carrying a snapshot's mark (tests).
    #[cfg(test)]
    pub(crate) fn snap_marks(&self) -> usize {
        self.table.iter().filter(|e| e.snap_mark()).count()
    }

    /// Installs a new snapshot's part (under every shard lock).
    pub(crate) fn snap_begin(&mut self, part: Option<Box<ShardSnap>>) {
        debug_assert!(self.table.iter().all(|e| !e.snap_mark()), "a shard starts a snapshot with marks left");
        self.snap = part;
    }

    /// Whether this shard's part is snapshot `shared`'s part `slot`.
    pub(crate) fn snap_is(&self, shared: &Arc<Shared>, slot: usize) -> bool {
        self.snap.as_deref().is_some_and(|p| p.is(shared, slot))
    }

    /// One slice of the walk (see [`walk`]): entries examined,
    /// entries delivered, and whether the walk is over.
    pub(crate) fn snap_slice(&mut self, budget: usize, db: u32, sink: &mut impl FnMut(u32, &[u8], ValueRef<'_>, Option<u64>)) -> (usize, usize, bool) {
        let Some(s) = self.snap.as_deref_mut() else { return (0, 0, true) };
        let (visited, delivered) = walk(&self.table, s, budget, db, sink);
        (visited, delivered, s.walked())
    }

    /// The forms captured since the last call.
    pub(crate) fn snap_take_captured(&mut self) -> Vec<Captured> {
        self.snap.as_deref_mut().map(ShardSnap::take_captured).unwrap_or_default()
    }

    /// Clears the SNAP bit from the entries of up to `n` noted hashes (with
    /// `give_up`, first stops the walk and drops the copies). Once none is
    /// left the part is gone from the shard, and the hashes it noted over
    /// its life are returned.
    pub(crate) fn snap_clear(&mut self, n: usize, give_up: bool) -> Option<usize> {
        let Some(s) = self.snap.as_deref_mut() else { return Some(0) };
        if give_up {
            s.give_up();
        }
        debug_assert!(s.walked(), "marks cleared before the walk is over");
        for _ in 0..n {
            let Some(h) = s.pop_marked() else { break };
            // Other marked entries the probe meets lose theirs too: every
            // mark goes now.
            while let Some(e) = self.table.find_by_mut(h, |e| e.snap_mark()) {
                e.set_snap_mark(false);
            }
        }
        if s.all_cleared() {
            let noted = s.noted();
            self.snap = None;
            return Some(noted);
        }
        None
    }
}

/// Walks `table` from `snap`'s cursor for about `budget` entries' weight:
/// each entry that has no SNAP bit and was live at the start goes to
/// `sink`. Returns (entries examined, entries delivered); the cursor
/// moves on ([`WALKED`] at the end).
pub(crate) fn walk(table: &Table, snap: &mut ShardSnap, budget: usize, db: u32, sink: &mut impl FnMut(u32, &[u8], ValueRef<'_>, Option<u64>)) -> (usize, usize) {
    let (mut visited, mut weight, mut delivered) = (0, 0, 0);
    let start = snap.start_ms;
    while snap.cursor < WALKED && weight < budget {
        let next = table.scan(snap.cursor, |e| {
            visited += 1;
            weight += 1;
            if e.snap_mark() || is_expired(e, start) {
                return;
            }
            weight += (e.alloc_size() + e.value_heap()) / WEIGHT_BYTES;
            delivered += 1;
            sink(db, e.key(), e.value(), e.expire());
        });
        snap.cursor = if next == 0 { WALKED } else { next };
    }
    (visited, delivered)
}
