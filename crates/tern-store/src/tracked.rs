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
