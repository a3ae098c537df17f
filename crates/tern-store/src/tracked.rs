//! CLIENT TRACKING's part in the store: a key a tracking client reads is
//! marked in its own item, with the client's bit (its slot, one of 64),
//! so that remembering the read costs no look anywhere else: the read
//! found the item already. A write takes the key's marks into its note
//! ([`crate::effect::Modified::readers`]), for the invalidations.
//!
//! ```text
//!  cmd::call ─► set_reader(bits) ─► Shard::lookup marks the item found,
//!                                    notes its hash here (`take_marked`)
//!  a write ─► Shard's note takes the item's marks (or those of the item
//!             it replaced or removed) into Modified::readers
//! ```
//!
//! Keys read that no lookup marked (absent keys, commands that read
//! otherwise) go to the server's tracking table as before. The marks are
//! counted per database (`Keyspace::marked`).

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    static READER: Cell<u64> = const { Cell::new(0) };
    static MARKED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// The bits this thread's reads mark keys with from now on (0: none): a
/// tracking client's read-only command sets them for its run.
#[inline]
pub fn set_reader(bits: u64) {
    READER.with(|r| r.set(bits));
    if bits != 0 {
        clear_marked();
    }
}

#[inline]
pub(crate) fn reader() -> u64 {
    READER.with(|r| r.get())
}

/// A key of hash `hash` was marked by this thread's reader.
pub(crate) fn note_marked(hash: u64) {
    MARKED.with(|m| m.borrow_mut().push(hash));
}

/// Whether a key of hash `hash` was marked since the last [`clear_marked`].
pub fn was_marked(hash: u64) -> bool {
    MARKED.with(|m| m.borrow().contains(&hash))
}

/// Forgets the hashes marked so far.
pub fn clear_marked() {
    MARKED.with(|m| m.borrow_mut().clear());
}

/// The bit of the keyspace's noting flag (`Keyspace::track_writes`) that
/// notes writes for CLIENT TRACKING; [`crate::event::NOTE_EVENTS`] is the
/// other.
pub(crate) const NOTE_TRACK: u8 = 1;

/// The keyspace's tracking marks: the keys marked, per database and in
/// all. (The (key, client) pairs they stand
/// for are counted by the shards' tables alone: a read that adds a client
/// to a marked key touches no shared count.)
#[derive(Debug, Default)]
pub(crate) struct Marks {
    per_db: Box<[AtomicUsize]>,
    pub(crate) keys: AtomicUsize,
}

impl Marks {
    pub(crate) fn new(dbs: usize) -> Self {
        Marks { per_db: (0..dbs).map(|_| AtomicUsize::new(0)).collect(), keys: AtomicUsize::new(0) }
    }

    /// Database `db`'s count of marked keys moves by `keys`.
    pub(crate) fn add(&self, db: usize, keys: isize) {
        let Some(c) = self.per_db.get(db) else { return };
        for c in [c, &self.keys] {
            if keys > 0 {
                c.fetch_add(keys as usize, Ordering::Relaxed);
            } else if keys < 0 {
                c.fetch_sub(keys.unsigned_abs(), Ordering::Relaxed);
            }
        }
    }

    pub(crate) fn of(&self, db: usize) -> usize {
        self.per_db.get(db).map_or(0, |c| c.load(Ordering::Relaxed))
    }
}
