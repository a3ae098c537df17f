//! A shard's side of a running snapshot (see [`crate::snapshot`]): the
//! copy-before-write of an entry the walk has yet to reach, the SNAP bit
//! that says an entry was copied (or came in after the start), and the
//! calls the snapshot makes under the shard's lock to install its part,
//! walk a slice, take the copies and clear the bits.

use std::sync::Arc;

use super::{Shard, Table};
use crate::snapshot::{self, Captured, ShardSnap, Shared};

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

    /// One slice of the walk (see [`snapshot::walk`]): entries examined,
    /// entries delivered, and whether the walk is over.
    pub(crate) fn snap_slice(&mut self, budget: usize, db: u32, sink: &mut impl FnMut(u32, &[u8], crate::ValueRef<'_>, Option<u64>)) -> (usize, usize, bool) {
        let Some(s) = self.snap.as_deref_mut() else { return (0, 0, true) };
        let (visited, delivered) = snapshot::walk(&self.table, s, budget, db, sink);
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
