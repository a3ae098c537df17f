//! Keyspace events: what a write was, in Redis's words, for keyspace
//! notifications (`notify-keyspace-events`).
//!
//! An event is a class (Redis's `NOTIFY_*` bit: generic, string, list…)
//! and a name (`set`, `lpush`, `expired`). The write path notes one for
//! each write while notifications are wanted ([`crate::Keyspace::notify_writes`]),
//! beside the written key, in the order the writes happen:
//!
//! ```text
//!  command ─► set_current(its event) ─► shard write ─► note (key, current event)
//!                                          │   a key made:         `new` first
//!                                          │   a container emptied: `del` after
//!                                          └─► expiry `expired`, eviction `evicted`,
//!                                              field expiry `hexpired`
//! ```
//!
//! The command layer declares each command's event and switches it
//! before a write that is another event (RENAME's `rename_from` and
//! `rename_to`); an event that is no write of its own (SET's `expire`
//! after its `set`) is noted with [`crate::Shard::note_event`]. Nothing is
//! noted, and the current event is not read, while notifications are off.

use std::cell::Cell;

/// The bit of the keyspace's noting flag (`Keyspace::notify_writes`)
/// that notes writes with their events, for keyspace notifications;
/// [`crate::tracked::NOTE_TRACK`] is the other.
pub(crate) const NOTE_EVENTS: u8 = 2;

/// Redis's notification classes (`server.h`'s `NOTIFY_*`), as the bits
/// `notify-keyspace-events` sets.
pub mod class {
    /// `K`: publish to `__keyspace@<db>__:<key>`.
    pub const KEYSPACE: u32 = 1 << 0;
    /// `E`: publish to `__keyevent@<db>__:<event>`.
    pub const KEYEVENT: u32 = 1 << 1;
    pub const GENERIC: u32 = 1 << 2;
    pub const STRING: u32 = 1 << 3;
    pub const LIST: u32 = 1 << 4;
    pub const SET: u32 = 1 << 5;
    pub const HASH: u32 = 1 << 6;
    pub const ZSET: u32 = 1 << 7;
    pub const EXPIRED: u32 = 1 << 8;
    pub const EVICTED: u32 = 1 << 9;
    pub const STREAM: u32 = 1 << 10;
    /// `m`: a read that found no key (not part of `A`).
    pub const KEY_MISS: u32 = 1 << 11;
    pub const MODULE: u32 = 1 << 13;
    /// `n`: a key created (not part of `A`).
    pub const NEW: u32 = 1 << 14;
    /// `A`.
    pub const ALL: u32 = GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;
}

/// One kind of event: its class and its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub class: u32,
    pub name: &'static str,
}

impl Event {
    pub const fn new(class: u32, name: &'static str) -> Self {
        Event { class, name }
    }
}

/// The events the write path makes on its own.
pub const DEL: Event = Event::new(class::GENERIC, "del");
pub const EXPIRED: Event = Event::new(class::EXPIRED, "expired");
pub const EVICTED: Event = Event::new(class::EVICTED, "evicted");
pub const NEW: Event = Event::new(class::NEW, "new");
pub const HEXPIRED: Event = Event::new(class::HASH, "hexpired");
pub const KEYMISS: Event = Event::new(class::KEY_MISS, "keymiss");

thread_local! {
    static CURRENT: Cell<Option<Event>> = const { Cell::new(None) };
}

/// Makes `ev` the event of this thread's next writes (None: writes that
/// are no event, as a FLUSHALL's or a load's).
#[inline]
pub fn set_current(ev: Option<Event>) {
    CURRENT.with(|c| c.set(ev));
}

/// The event this thread's writes are.
#[inline]
pub fn current() -> Option<Event> {
    CURRENT.with(|c| c.get())
}
