//! What a stored key looks like: one item holding a 4-byte [`Meta`], the
//! key, the deadline (only when set) and, for strings written whole, the
//! value's bytes, or for a small list its entries (see `crate::list`'s
//! `inline` module). Anything else (a hash, a larger list, a string grown
//! in place, a large string shared with replies) is a [`Value`] in a box
//! the item owns.
//!
//! ```text
//!  item: | tail_len | key_len+flags | Meta (kind 8 bits, clock 24 bits) | key | [deadline] | bytes, list entries or *Value |
//!          4          4               4
//! ```
//!
//! [`Meta`]'s word, bit by bit:
//!
//! ```text
//!  31                              8   7      6      5       4     3..2   1..0
//! | clock: LRU s / LFU min+counter / FIFO seq | PACK | SNAP | TRACKED | MAIN | FREQ | KIND |
//! ```
//!
//! PACK (with KIND 0) marks a list kept in the item; it is part of the
//! kind for every test of it, so that no string kind matches it.
//!
//! SNAP belongs to a running snapshot (see `crate::snapshot`): the
//! access clock, the kind and the FIFO operations all keep it.
//!
//! A GET hit therefore touches the bucket and the item and nothing else:
//! for 16-byte keys and 100-byte values the item is exactly 128 bytes, a
//! jemalloc size class, so a key costs its bytes plus 12 bytes of header
//! plus its bucket slot.

use tern_table::{size_class, Item};

use crate::hash::Hash;
use crate::list::{inline_parts, ListRef, Packed};
use crate::set::Set;
use crate::stream::Stream;
use crate::value::{embeds, stays_raw, McStr, StrValue, Value};
use crate::zset::ZSet;

mod list_mut;

pub use list_mut::ListMut;

/// The borrowed views an entry hands out, at their old paths (they are
/// [`Value`]'s too, see `crate::value`).
pub use crate::value::{McRef, StrRef, ValueRef};

/// A stored key: see the module docs. Read it with [`EntryExt`].
pub type Entry = Item<Meta, Value>;

/// A shard's table of entries (see `crate::shard`).
pub(crate) type Table = tern_table::Table<Meta, hashbrown::DefaultHashBuilder, Value>;

/// What kind of value an item holds.
const KIND_BYTES: u32 = 0;
const KIND_INT: u32 = 1;
const KIND_MC: u32 = 2;
const KIND_BOXED: u32 = 3;
/// A small list kept in the item (see `crate::list`'s `inline` module):
/// the word's otherwise free bit 7, so that every test for a string kind
/// leaves it out.
const KIND_PACK: u32 = 0x80;
const KIND_MASK: u32 = 0x83;
/// The FIFO policies' bits (S3-FIFO, SIEVE; see `crate::fifo`): a 2-bit
/// access counter (SIEVE's visited bit is "non-zero"), whether the key is
/// in S3-FIFO's main queue, and whether it is tracked at all. A tracked
/// key's clock holds its insertion number instead of a time.
const FIFO_FREQ_SHIFT: u32 = 2;
const FIFO_FREQ_MASK: u32 = 0b11 << FIFO_FREQ_SHIFT;
const FIFO_MAIN: u32 = 1 << 4;
const FIFO_TRACKED: u32 = 1 << 5;
/// Set while a running snapshot has this key's pre-snapshot form in hand
/// already (captured before a change, or the key did not exist when the
/// snapshot started): its walk skips the key. Clear in every entry of a
/// shard no snapshot runs on (see `crate::snapshot`).
const SNAP: u32 = 1 << 6;
const LOW_BYTE: u32 = 0xff;
const CLOCK_SHIFT: u32 = 8;
/// The access clock's range (24 bits, as Redis's `LRU_BITS`).
const CLOCK_MAX: u32 = (1 << 24) - 1;

/// The per-key word: the value's kind and the access clock, which holds
/// the LRU time in seconds, or under an LFU policy the last decrement time
/// in minutes (16 bits) and the logarithmic counter (8 bits) — Redis's
/// layout, with its wrap-around arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Meta(u32);

/// LFU tuning (`lfu-log-factor`, `lfu-decay-time`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lfu {
    pub log_factor: u32,
    pub decay_minutes: u32,
}

impl Default for Lfu {
    fn default() -> Self {
        Lfu { log_factor: 10, decay_minutes: 1 }
    }
}

/// The counter a new key starts with, so that it is not evicted before it
/// had a chance to be used (`LFU_INIT_VAL`).
pub const LFU_INIT_VAL: u8 = 5;

impl Lfu {
    /// One probabilistic increment of a logarithmic counter (Redis's
    /// `LFULogIncr`): the higher the counter, the less likely a hit bumps it.
    /// `r` draws a number uniform in [0, 2^32), only when the increment is
    /// not certain (a counter at or under its initial value always grows);
    /// it wins with probability 1 / (base × factor + 1), rounded up to a
    /// multiple of 2^-32, tested by one multiplication (no division, no
    /// floating point on a hit).
    pub fn log_incr(&self, counter: u8, r: impl FnOnce() -> u32) -> u8 {
        if counter == u8::MAX {
            return counter;
        }
        let base = counter.saturating_sub(LFU_INIT_VAL);
        if base == 0 || self.log_factor == 0 {
            return counter + 1;
        }
        let odds = u64::from(base) * u64::from(self.log_factor) + 1;
        if u64::from(r()) * odds < 1 << 32 {
            counter + 1
        } else {
            counter
        }
    }
}

thread_local! {
    /// This thread's xorshift64* state for LFU's increments (seeded once
    /// from the OS-seeded generator; 0 until then).
    static LFU_RNG: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A number uniform in [0, 2^32) for an LFU increment: a few
/// instructions, where `rand::random` took a reference-counted handle to
/// a ChaCha generator on every hit. A weighted coin needs no more quality.
#[inline]
fn lfu_draw() -> u32 {
    LFU_RNG.with(|c| {
        let mut x = c.get();
        if x == 0 {
            x = lfu_seed();
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        c.set(x);
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    })
}

/// The first draw's seed, out of the hit path.
#[cold]
fn lfu_seed() -> u64 {
    rand::random::<u64>() | 1
}

fn lru_clock(now_ms: u64) -> u32 {
    (now_ms / 1000) as u32 & CLOCK_MAX
}

fn lfu_minutes(now_ms: u64) -> u32 {
    (now_ms / 60_000) as u32 & 0xffff
}

impl Meta {
    /// A new key's word: the clock starts now, or under LFU (`lfu`) with
    /// the initial counter.
    pub fn new(kind: u32, now_ms: u64, lfu: bool) -> Self {
        let clock = if lfu { lfu_minutes(now_ms) << 8 | u32::from(LFU_INIT_VAL) } else { lru_clock(now_ms) };
        Meta(kind | clock << CLOCK_SHIFT)
    }

    fn kind(self) -> u32 {
        self.0 & KIND_MASK
    }

    /// The same word with another value kind (the clock and the FIFO
    /// bits are kept).
    fn with_kind(self, kind: u32) -> Self {
        Meta(self.0 & !KIND_MASK | kind)
    }

    fn clock(self) -> u32 {
        self.0 >> CLOCK_SHIFT
    }

    fn set_clock(&mut self, c: u32) {
        self.0 = self.0 & LOW_BYTE | (c & CLOCK_MAX) << CLOCK_SHIFT;
    }

    /// Whether a FIFO policy tracks this key (its clock is then its
    /// insertion number).
    #[inline]
    pub fn fifo_tracked(&self) -> bool {
        self.0 & FIFO_TRACKED != 0
    }

    /// The FIFO access counter, 0..=3.
    #[inline]
    pub fn fifo_freq(&self) -> u8 {
        ((self.0 & FIFO_FREQ_MASK) >> FIFO_FREQ_SHIFT) as u8
    }

    /// In S3-FIFO's main queue (else its small one).
    #[inline]
    pub fn fifo_in_main(&self) -> bool {
        self.0 & FIFO_MAIN != 0
    }

    /// The insertion number of a tracked key (24 bits).
    #[inline]
    pub fn fifo_seq(&self) -> Option<u32> {
        self.fifo_tracked().then(|| self.clock())
    }

    /// Makes the key tracked by a FIFO policy with insertion number `seq`.
    pub fn set_fifo(&mut self, seq: u32, main: bool, freq: u8) {
        let bits = FIFO_TRACKED | if main { FIFO_MAIN } else { 0 } | (u32::from(freq.min(3)) << FIFO_FREQ_SHIFT);
        self.0 = self.0 & (KIND_MASK | SNAP) | bits | (seq & CLOCK_MAX) << CLOCK_SHIFT;
    }

    /// Sets the access counter of a tracked key.
    #[inline]
    pub fn set_fifo_freq(&mut self, freq: u8) {
        self.0 = self.0 & !FIFO_FREQ_MASK | (u32::from(freq.min(3)) << FIFO_FREQ_SHIFT);
    }

    /// Moves a tracked key to S3-FIFO's main queue.
    #[inline]
    pub fn set_fifo_main(&mut self) {
        self.0 |= FIFO_MAIN;
    }

    /// Stops FIFO tracking; the clock restarts as an LRU time (or LFU
    /// counter) from `now_ms`.
    pub fn clear_fifo(&mut self, now_ms: u64, lfu: bool) {
        *self = Meta(Meta::new(self.kind(), now_ms, lfu).0 | self.0 & SNAP);
    }

    /// Copies another word's FIFO state (a key overwritten keeps its place
    /// in the queues).
    pub fn take_fifo_from(&mut self, old: Meta) {
        self.0 = self.0 & (KIND_MASK | SNAP) | old.0 & !(KIND_MASK | SNAP);
    }

    /// Whether the running snapshot has this key in hand already (see
    /// `SNAP`).
    #[inline]
    pub(crate) fn snap_mark(&self) -> bool {
        self.0 & SNAP != 0
    }

    #[inline]
    pub(crate) fn set_snap_mark(&mut self, on: bool) {
        self.0 = self.0 & !SNAP | if on { SNAP } else { 0 };
    }

    /// Records an access: for a key a FIFO policy tracks, one more on its
    /// 2-bit counter (nothing else on the read path); else the LRU clock,
    /// or under LFU (`lfu` given) the decayed and probabilistically
    /// incremented counter with the time.
    #[inline]
    pub fn touch(&mut self, now_ms: u64, lfu: Option<Lfu>) {
        if self.fifo_tracked() {
            let f = self.fifo_freq();
            if f < 3 {
                self.set_fifo_freq(f + 1);
            }
            return;
        }
        match lfu {
            Some(l) => {
                // The minute is read once for the decay and the new time.
                let now = lfu_minutes(now_ms);
                let c = l.log_incr(self.lfu_decayed(now, l.decay_minutes), lfu_draw);
                self.set_clock(now << 8 | u32::from(c));
            }
            None => self.set_clock(lru_clock(now_ms)),
        }
    }

    /// Seconds since the last access (meaningful under an LRU clock; the
    /// clock wraps every 194 days, as Redis's does).
    pub fn idle_secs(&self, now_ms: u64) -> u64 {
        let (now, then) = (lru_clock(now_ms), self.clock());
        u64::from(if now >= then { now - then } else { now + (CLOCK_MAX + 1 - then) })
    }

    /// The access counter after decay: one step down per `decay_minutes`
    /// elapsed since the last decrement (Redis's `LFUDecrAndReturn`; 0 turns
    /// decay off). Meaningful under an LFU clock.
    pub fn lfu_count(&self, now_ms: u64, decay_minutes: u32) -> u8 {
        self.lfu_decayed(lfu_minutes(now_ms), decay_minutes)
    }

    /// [`Meta::lfu_count`] at the minute `now` (of [`lfu_minutes`]).
    #[inline]
    fn lfu_decayed(&self, now: u32, decay_minutes: u32) -> u8 {
        let (counter, then) = ((self.clock() & 0xff) as u8, self.clock() >> 8);
        // Mostly the same minute as the last access: nothing to decay.
        if then == now || decay_minutes == 0 {
            return counter;
        }
        let elapsed = if now >= then { now - then } else { 0xffff - then + now };
        // Mostly less than a period: no division then.
        let periods = if elapsed < decay_minutes { 0 } else { elapsed / decay_minutes };
        u32::from(counter).saturating_sub(periods) as u8
    }
}

/// A value to store, as commands produce it: borrowed bytes go straight
/// into the new item without an intermediate allocation.
#[derive(Debug)]
pub enum NewValue<'a> {
    /// Bytes written whole (SET, MSET): kept in the item.
    Bytes(&'a [u8]),
    /// A canonical integer (`int` encoding).
    Int(i64),
    /// A memcached item: data with its flags, CAS and state bits.
    Mc { data: &'a [u8], flags: u32, cas: u64, state: u8 },
    /// Any value. Whole strings and unshared memcached items still go into
    /// the item; the rest is boxed.
    Value(Value),
}

impl From<Value> for NewValue<'static> {
    fn from(v: Value) -> Self {
        NewValue::Value(v)
    }
}

/// Whether `len` bytes of value fit in an item beside `key` (an item's tail
/// is at most 4 GiB); longer values are boxed.
fn fits(key: &[u8], len: usize) -> bool {
    key.len() + 8 + McStr::HEADER + len <= u32::MAX as usize
}

/// Builds the item for `key`.
///
/// # Panics
/// If `key` is longer than [`tern_table::MAX_KEY_LEN`] (callers check).
pub(crate) fn build(key: &[u8], v: NewValue<'_>, expire: Option<u64>, now: u64, lfu: bool) -> Box<Entry> {
    let mk = |kind, extra: &[u8]| Item::new_boxed(key, Meta::new(kind, now, lfu), expire, extra);
    let boxed = |v: Value| Item::new_with_box(key, Meta::new(KIND_BOXED, now, lfu), expire, Box::new(v));
    match v {
        NewValue::Bytes(b) if fits(key, b.len()) => mk(KIND_BYTES, b),
        NewValue::Bytes(b) => boxed(Value::Str(StrValue::Raw(b.to_vec()))),
        NewValue::Int(n) => mk(KIND_INT, &n.to_le_bytes()),
        NewValue::Mc { data, flags, cas, state } if fits(key, data.len()) => {
            let hdr = McStr::header(flags, cas, state);
            Item::new_from_parts(key, Meta::new(KIND_MC, now, lfu), expire, &[&hdr, data])
        }
        NewValue::Mc { data, flags, cas, state } => boxed(Value::Str(StrValue::Mc(McStr::new(data, flags, cas, state)))),
        NewValue::Value(Value::Str(StrValue::Int(n))) => mk(KIND_INT, &n.to_le_bytes()),
        NewValue::Value(Value::Str(StrValue::Emb(b))) if fits(key, b.len()) => mk(KIND_BYTES, &b),
        NewValue::Value(Value::Str(StrValue::Mc(m))) if m.shared().is_none() && fits(key, m.len()) => mk(KIND_MC, m.buffer()),
        NewValue::Value(Value::List(l)) => match inline_parts(&l) {
            Some((hdr, entries)) => {
                let want = hdr.len() + entries.len();
                with_room(key, Meta::new(KIND_PACK, now, lfu), expire, &[&hdr, entries], want)
            }
            None => boxed(Value::List(l)),
        },
        NewValue::Value(v) => boxed(v),
    }
}

/// Zeros to fill an item's room with (more than a list kept in its item
/// can leave between its entries and its size class).
static ROOM: [u8; 4096] = [0; 4096];

/// An item of `parts` followed by zeros up to the end of the allocator
/// size class that `want` bytes of extra need.
fn with_room(key: &[u8], meta: Meta, expire: Option<u64>, parts: &[&[u8]], want: usize) -> Box<Entry> {
    let base = key.len() + if expire.is_some() { 8 } else { 0 };
    let room = Entry::tail_room(base + want) - base;
    let have: usize = parts.iter().map(|p| p.len()).sum();
    debug_assert!(want >= have && want - have <= ROOM.len());
    // Under a very long key a class's room can be larger than the zeros:
    // the list needs only `want`.
    let pad = (room - have).min(ROOM.len());
    let mut all: [&[u8]; 4] = [&[]; 4];
    all[..parts.len()].copy_from_slice(parts);
    all[parts.len()] = &ROOM[..pad];
    Item::new_from_parts(key, meta, expire, &all[..=parts.len()])
}

/// `e`'s key, access word and deadline around `parts` with room for
/// `want` bytes of extra: a list kept in its item, moved to another size
/// class.
pub(crate) fn pack_item(e: &Entry, parts: &[&[u8]], want: usize) -> Box<Entry> {
    with_room(e.key(), **e, e.expire(), parts, want)
}

/// A key as RESTORE makes it: its access clock set from IDLETIME (an LRU
/// time `idle_secs` ago) or FREQ (an LFU counter), for the policy in force
/// (`lfu`), as Redis's `objectSetLRUOrLFU`. Store it with
/// [`crate::Shard::insert_entry`], which keeps the clock.
pub fn build_restored(
    key: &[u8],
    v: NewValue<'_>,
    expire: Option<u64>,
    now: u64,
    lfu: bool,
    idle_secs: Option<u64>,
    freq: Option<u8>,
) -> Box<Entry> {
    let mut item = build(key, v, expire, now, lfu);
    match (lfu, freq, idle_secs) {
        (true, Some(f), _) => item.set_clock(lfu_minutes(now) << 8 | u32::from(f)),
        (false, _, Some(idle)) => item.set_clock(lru_clock(now.saturating_sub(idle.saturating_mul(1000)))),
        _ => {}
    }
    item
}

/// The same key and TTL with another value; the access clock is kept.
pub(crate) fn rebuild(e: &Entry, v: NewValue<'_>) -> Box<Entry> {
    let clock = **e;
    let mut item = build(e.key(), v, e.expire(), 0, false);
    let kind = item.kind();
    **item = clock.with_kind(kind);
    item
}

/// `e` under the name `key` (RENAME), keeping its TTL and access data;
/// short bytes that are `raw` under the old name keep that encoding (see
/// [`crate::value::stays_raw`]).
pub(crate) fn rekey(e: Box<Entry>, key: &[u8]) -> Box<Entry> {
    if e.kind() == KIND_BYTES && stays_raw(e.key().len(), e.extra().len()) {
        let raw = Value::Str(StrValue::Raw(e.extra().to_vec()));
        let meta = (**e).with_kind(KIND_BOXED);
        return Item::new_with_box(key, meta, e.expire(), Box::new(raw));
    }
    e.with_key(key)
}

/// Reading and changing an [`Entry`]'s value.
pub trait EntryExt {
    /// The value.
    fn value(&self) -> ValueRef<'_>;
    /// The string value, or None for another type.
    fn str(&self) -> Option<StrRef<'_>>;
    /// The hash, or None for another type.
    fn hash(&self) -> Option<&Hash>;
    /// The hash, writable. Call [`crate::Shard::value_resized`] when its
    /// heap size changed.
    fn hash_mut(&mut self) -> Option<&mut Hash>;
    /// The list, or None for another type.
    fn list(&self) -> Option<ListRef<'_>>;
    /// The list, writable (through [`crate::Shard::modify`], which
    /// accounts its size): end the edit with [`ListMut::finish`].
    fn list_mut(&mut self) -> Option<ListMut<'_>>;
    /// The set, or None for another type.
    fn set(&self) -> Option<&Set>;
    /// The set, writable (through [`crate::Shard::modify`]).
    fn set_mut(&mut self) -> Option<&mut Set>;
    /// The sorted set, or None for another type.
    fn zset(&self) -> Option<&ZSet>;
    /// The sorted set, writable (through [`crate::Shard::modify`]).
    fn zset_mut(&mut self) -> Option<&mut ZSet>;
    /// The stream, or None for another type.
    fn stream(&self) -> Option<&Stream>;
    /// The stream, writable (through [`crate::Shard::modify`]).
    fn stream_mut(&mut self) -> Option<&mut Stream>;
    /// The boxed value, writable (None when the value is in the item).
    /// Call [`crate::Shard::value_resized`] when its heap size changed.
    fn boxed_value_mut(&mut self) -> Option<&mut Value>;
    /// The bytes of a string kept in the item that is `raw` as it is
    /// (too long to be `embstr` under its key), writable where they lie;
    /// their number cannot change. None for any other value.
    fn raw_inline_mut(&mut self) -> Option<&mut [u8]>;
    /// An owned copy of the value (COPY; see [`StrRef::to_value`]).
    fn to_value(&self) -> Value;
    /// `OBJECT ENCODING`'s name for the value under this key.
    fn encoding(&self) -> &'static str;
    /// Writes an integer over an integer kept in the item; false (nothing
    /// changed) for any other value.
    fn set_int(&mut self, n: i64) -> bool;
    /// Sets a memcached item's CAS (no-op for other values); copies a
    /// shared buffer only if the CAS really changes.
    fn mc_set_cas(&mut self, cas: u64);
    /// Sets a memcached item's state bits, as [`Self::mc_set_cas`].
    fn mc_set_state(&mut self, state: u8);
    /// Heap bytes held outside the item (the box and what it holds).
    fn value_heap(&self) -> usize;
    /// Allocations freeing the value releases (see [`Value::free_effort`]).
    fn free_effort(&self) -> usize;
    /// The earliest field deadline of a hash with field TTLs.
    fn next_field_deadline(&self) -> Option<u64>;
    /// A container left with no element (see [`Value::is_empty_aggregate`]).
    fn is_empty_aggregate(&self) -> bool;
}

impl EntryExt for Entry {
    #[inline]
    fn value(&self) -> ValueRef<'_> {
        match self.boxed() {
            Some(v) => v.as_value_ref(),
            None if self.kind() == KIND_PACK => ValueRef::List(ListRef::Inline(Packed::new(self.extra()))),
            None => ValueRef::Str(self.inline_str()),
        }
    }

    #[inline]
    fn str(&self) -> Option<StrRef<'_>> {
        match self.value() {
            ValueRef::Str(s) => Some(s),
            ValueRef::Hash(_) | ValueRef::List(_) | ValueRef::Set(_) | ValueRef::ZSet(_) | ValueRef::Stream(_) => None,
        }
    }

    fn hash(&self) -> Option<&Hash> {
        match self.boxed() {
            Some(Value::Hash(h)) => Some(h),
            _ => None,
        }
    }

    fn hash_mut(&mut self) -> Option<&mut Hash> {
        match self.boxed_mut() {
            Some(Value::Hash(h)) => Some(h),
            _ => None,
        }
    }

    fn list(&self) -> Option<ListRef<'_>> {
        match self.value() {
            ValueRef::List(l) => Some(l),
            _ => None,
        }
    }

    fn list_mut(&mut self) -> Option<ListMut<'_>> {
        if self.kind() == KIND_PACK {
            Some(ListMut::inline(self))
        } else if matches!(self.boxed(), Some(Value::List(_))) {
            Some(ListMut::apart(self))
        } else {
            None
        }
    }

    fn set(&self) -> Option<&Set> {
        match self.boxed() {
            Some(Value::Set(s)) => Some(s),
            _ => None,
        }
    }

    fn set_mut(&mut self) -> Option<&mut Set> {
        match self.boxed_mut() {
            Some(Value::Set(s)) => Some(s),
            _ => None,
        }
    }

    fn zset(&self) -> Option<&ZSet> {
        match self.boxed() {
            Some(Value::ZSet(z)) => Some(z),
            _ => None,
        }
    }

    fn zset_mut(&mut self) -> Option<&mut ZSet> {
        match self.boxed_mut() {
            Some(Value::ZSet(z)) => Some(z),
            _ => None,
        }
    }

    fn stream(&self) -> Option<&Stream> {
        match self.boxed() {
            Some(Value::Stream(x)) => Some(x),
            _ => None,
        }
    }

    fn stream_mut(&mut self) -> Option<&mut Stream> {
        match self.boxed_mut() {
            Some(Value::Stream(x)) => Some(x),
            _ => None,
        }
    }

    fn boxed_value_mut(&mut self) -> Option<&mut Value> {
        self.boxed_mut()
    }

    fn raw_inline_mut(&mut self) -> Option<&mut [u8]> {
        if self.kind() != KIND_BYTES || embeds(self.key().len(), self.extra().len()) {
            return None;
        }
        Some(self.extra_mut())
    }

    fn encoding(&self) -> &'static str {
        self.value().encoding(self.key().len())
    }

    fn to_value(&self) -> Value {
        match self.value() {
            ValueRef::Str(s) => s.to_value(self.key().len()),
            ValueRef::Hash(h) => Value::Hash(h.clone()),
            ValueRef::List(l) => Value::List(l.to_list()),
            ValueRef::Set(s) => Value::Set(s.clone()),
            ValueRef::ZSet(z) => Value::ZSet(z.clone()),
            ValueRef::Stream(x) => Value::Stream(Box::new(x.clone())),
        }
    }

    fn set_int(&mut self, n: i64) -> bool {
        if self.kind() != KIND_INT {
            return false;
        }
        self.extra_mut().copy_from_slice(&n.to_le_bytes());
        true
    }

    fn mc_set_cas(&mut self, cas: u64) {
        if self.kind() == KIND_MC {
            self.extra_mut()[4..12].copy_from_slice(&cas.to_le_bytes());
        } else if let Some(Value::Str(StrValue::Mc(m))) = self.boxed_mut() {
            m.set_cas(cas);
        }
    }

    fn mc_set_state(&mut self, state: u8) {
        if self.kind() == KIND_MC {
            self.extra_mut()[12] = state;
        } else if let Some(Value::Str(StrValue::Mc(m))) = self.boxed_mut() {
            m.set_state(state);
        }
    }

    #[inline]
    fn value_heap(&self) -> usize {
        self.boxed().map_or(0, |v| size_class(std::mem::size_of::<Value>()) + v.heap_size())
    }

    fn free_effort(&self) -> usize {
        self.boxed().map_or(1, Value::free_effort)
    }

    #[inline]
    fn next_field_deadline(&self) -> Option<u64> {
        self.boxed().and_then(Value::next_field_deadline)
    }

    fn is_empty_aggregate(&self) -> bool {
        match self.boxed() {
            Some(v) => v.is_empty_aggregate(),
            None => self.kind() == KIND_PACK && Packed::new(self.extra()).is_empty(),
        }
    }
}

/// Item internals the trait builds on.
trait Inline {
    fn kind(&self) -> u32;
    fn inline_str(&self) -> StrRef<'_>;
}

impl Inline for Entry {
    #[inline]
    fn kind(&self) -> u32 {
        (**self).kind()
    }

    #[inline]
    fn inline_str(&self) -> StrRef<'_> {
        let b = self.extra();
        match self.kind() {
            KIND_INT => {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                StrRef::Int(i64::from_le_bytes(a))
            }
            KIND_MC => StrRef::Mc(McRef::new(b, None)),
            _ => StrRef::Whole(b),
        }
    }
}

/// True for an item whose deadline has passed, or a hash whose every field
/// has expired (never on a thread that applies a master's stream, see
/// [`apply_masters_stream`]).
#[inline]
pub(crate) fn is_expired(e: &Entry, now: u64) -> bool {
    (e.expire().is_some_and(|w| w <= now) || e.boxed().is_some_and(|v| v.all_fields_expired(now))) && !MASTERS_STREAM.get()
}

thread_local! {
    static MASTERS_STREAM: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The calling thread applies a replica's master's stream: to it a key
/// past its deadline is still there (only the master's DEL removes it),
/// as Redis's replica treats the commands of its master, so that a
/// PERSIST or an EXPIRE the master ran before the deadline by its own
/// clock finds the key.
pub fn apply_masters_stream(on: bool) {
    MASTERS_STREAM.set(on);
}

/// Whether the calling thread applies a master's stream (see
/// [`apply_masters_stream`]).
#[inline]
pub(crate) fn applying_masters_stream() -> bool {
    MASTERS_STREAM.get()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_byte_key_and_hundred_byte_value_fill_one_128_byte_class() {
        let e = build(&[b'k'; 16], NewValue::Bytes(&[b'v'; 100]), None, 0, false);
        assert_eq!(std::mem::size_of_val(&*e), 128);
        assert_eq!((e.alloc_size(), e.value_heap()), (128, 0));
        assert_eq!(e.str().unwrap().bytes(), Some(&[b'v'; 100][..]));
        assert_eq!(e.encoding(), "raw");
    }

    #[test]
    fn kinds_read_back() {
        let now = 1_000_000;
        let i = build(b"i", NewValue::Int(-42), Some(9), now, false);
        assert_eq!((i.str().unwrap().int(), i.encoding(), i.expire()), (Some(-42), "int", Some(9)));
        let m = build(b"m", NewValue::Mc { data: b"dat", flags: 7, cas: 99, state: 4 }, None, now, false);
        let ValueRef::Str(StrRef::Mc(r)) = m.value() else { panic!("mc") };
        assert_eq!((r.data(), r.flags(), r.cas(), r.state(), r.len()), (&b"dat"[..], 7, 99, 4, 3));
        let e = build(b"e", NewValue::Value(Value::Str(StrValue::Emb(b"short".to_vec().into()))), None, now, false);
        assert_eq!((e.value_heap(), e.encoding(), e.str().unwrap().to_vec()), (0, "embstr", b"short".to_vec()));
        let r = build(b"r", NewValue::Value(Value::Str(StrValue::Raw(b"grown".to_vec()))), None, now, false);
        assert_eq!((r.encoding(), r.str().unwrap().bytes()), ("raw", Some(&b"grown"[..])));
        assert!(r.value_heap() > 0);
        let h = build(b"h", NewValue::Value(Value::Hash(crate::Hash::default())), None, now, false);
        assert_eq!((h.value().type_name(), h.str().is_none(), h.hash().is_some()), ("hash", true, true));
    }

    #[test]
    fn in_place_changes() {
        let mut i = build(b"i", NewValue::Int(1), None, 0, false);
        assert!(i.set_int(2));
        assert_eq!(i.str().unwrap().int(), Some(2));
        let mut b = build(b"b", NewValue::Bytes(b"12345678"), None, 0, false);
        assert!(!b.set_int(3));
        assert_eq!(b.str().unwrap().bytes(), Some(&b"12345678"[..]));
        let mut m = build(b"m", NewValue::Mc { data: b"x", flags: 1, cas: 2, state: 0 }, None, 0, false);
        m.mc_set_cas(77);
        m.mc_set_state(3);
        let ValueRef::Str(StrRef::Mc(r)) = m.value() else { panic!("mc") };
        assert_eq!((r.flags(), r.cas(), r.state(), r.data()), (1, 77, 3, &b"x"[..]));
        let mut shared = build(b"s", NewValue::Value(Value::Str(StrValue::Mc(McStr::new_sharing(&[1; 64], 5, 6, 0, 64)))), None, 0, false);
        shared.mc_set_cas(8);
        let ValueRef::Str(StrRef::Mc(r)) = shared.value() else { panic!("mc") };
        assert_eq!((r.flags(), r.cas(), r.len(), r.shared().is_some()), (5, 8, 64, true));
    }

    /// Redis 8's rule, as its OBJECT ENCODING shows it: key and value
    /// together at most 41 bytes, whatever the TTL.
    #[test]
    fn embstr_while_key_and_value_fit_41_bytes() {
        for (klen, vlen, want) in [(1, 40, "embstr"), (1, 41, "raw"), (30, 11, "embstr"), (30, 12, "raw"), (41, 0, "embstr"), (42, 0, "raw")] {
            for ttl in [None, Some(7)] {
                let e = build(&vec![b'k'; klen], NewValue::Bytes(&vec![b'v'; vlen]), ttl, 0, false);
                assert_eq!(e.encoding(), want, "key {klen}, value {vlen}, ttl {ttl:?}");
            }
        }
        let m = build(&[b'k'; 30], NewValue::Mc { data: &[b'v'; 12], flags: 0, cas: 1, state: 0 }, None, 0, false);
        assert_eq!(m.encoding(), "raw");
    }

    /// A short value that is `raw` under a long key stays `raw` under a
    /// short one, as Redis moves or copies a `raw` object; an `embstr` one
    /// is judged again under its new key.
    #[test]
    fn raw_stays_raw_under_a_shorter_key() {
        let long = build(&[b'k'; 30], NewValue::Bytes(&[b'v'; 20]), Some(5), 0, false);
        assert_eq!(long.encoding(), "raw");
        let copied = build(b"c", NewValue::Value(long.to_value()), None, 0, false);
        assert_eq!(copied.encoding(), "raw");
        let moved = rekey(long, b"a");
        assert_eq!((moved.key(), moved.encoding(), moved.expire(), moved.str().unwrap().to_vec()), (&b"a"[..], "raw", Some(5), vec![b'v'; 20]));
        let short = build(b"a", NewValue::Bytes(&[b'v'; 20]), None, 0, false);
        assert_eq!(short.encoding(), "embstr");
        let longer = rekey(short, &[b'k'; 30]);
        assert_eq!(longer.encoding(), "raw");
        assert_eq!(rekey(longer, b"b").encoding(), "raw");
        // Values too long for any key stay in the item.
        let big = rekey(build(&[b'k'; 30], NewValue::Bytes(&[b'v'; 50]), None, 0, false), b"b");
        assert_eq!((big.encoding(), big.value_heap()), ("raw", 0));
    }

    #[test]
    fn rebuild_keeps_key_ttl_and_clock() {
        let mut e = build(b"key", NewValue::Bytes(b"v"), Some(123), 5_000_000, false);
        e.touch(9_000_000, None);
        let r = rebuild(&e, NewValue::Value(Value::Str(StrValue::Raw(b"vv".to_vec()))));
        assert_eq!((r.key(), r.expire(), r.idle_secs(9_000_000)), (&b"key"[..], Some(123), 0));
        assert_eq!(r.encoding(), "raw");
    }

    #[test]
    fn lru_clock_and_lfu_counter() {
        let mut m = Meta::new(KIND_BYTES, 10_000, false);
        assert_eq!(m.idle_secs(25_500), 15);
        m.touch(31_000, None);
        assert_eq!(m.idle_secs(31_000), 0);
        // The 24-bit clock wraps as Redis's does.
        let wrap = u64::from(CLOCK_MAX + 1) * 1000;
        let mut w = Meta::new(KIND_BYTES, wrap - 5_000, false);
        assert_eq!(w.idle_secs(wrap + 10_000), 15);
        w.touch(wrap, None);
        assert_eq!(w.kind(), KIND_BYTES);

        let mut f = Meta::new(KIND_INT, 60_000, true);
        assert_eq!(f.lfu_count(60_000, 1), LFU_INIT_VAL);
        // At the initial value every hit counts (probability 1).
        f.touch(60_000, Some(Lfu::default()));
        assert_eq!(f.lfu_count(60_000, 1), LFU_INIT_VAL + 1);
        // One step of decay per minute idle, down to zero; 0 turns decay off.
        assert_eq!(f.lfu_count(60_000 + 3 * 60_000, 1), LFU_INIT_VAL - 2);
        assert_eq!(f.lfu_count(60_000 + 600 * 60_000, 1), 0);
        assert_eq!(f.lfu_count(60_000 + 600 * 60_000, 0), LFU_INIT_VAL + 1);
        assert_eq!(f.kind(), KIND_INT);
        // A hit after 3 idle minutes decays first (6 → 3), then counts
        // (at or under the initial value: certainly), and restarts the
        // decay from its minute.
        let later = 60_000 + 3 * 60_000;
        f.touch(later, Some(Lfu::default()));
        assert_eq!(f.lfu_count(later, 1), LFU_INIT_VAL - 1);
        assert_eq!(f.lfu_count(later + 60_000, 1), LFU_INIT_VAL - 2);
    }

    /// The snapshot's bit survives every other change to the word, and
    /// changes nothing else.
    #[test]
    fn snap_mark_is_kept_by_clock_kind_and_fifo_changes() {
        for lfu in [false, true] {
            let mut m = Meta::new(KIND_INT, 120_000, lfu);
            let plain = m;
            m.set_snap_mark(true);
            assert!(m.snap_mark());
            assert_eq!((m.kind(), m.clock()), (plain.kind(), plain.clock()));
            m.touch(500_000, lfu.then(Lfu::default));
            assert!(m.snap_mark() && m.kind() == KIND_INT);
            assert!(m.with_kind(KIND_BOXED).snap_mark());
            m.set_fifo(77, true, 2);
            assert!(m.snap_mark() && m.fifo_seq() == Some(77) && m.fifo_in_main() && m.fifo_freq() == 2);
            m.set_fifo_freq(3);
            m.set_fifo_main();
            m.touch(600_000, None);
            assert!(m.snap_mark() && m.fifo_freq() == 3);
            m.clear_fifo(700_000, lfu);
            assert!(m.snap_mark() && !m.fifo_tracked() && m.kind() == KIND_INT);
            // A word taking another's FIFO state keeps its own bit, both ways.
            let mut other = Meta::new(KIND_BYTES, 0, lfu);
            other.set_fifo(5, false, 1);
            let mut n = Meta::new(KIND_BYTES, 0, lfu);
            n.take_fifo_from(m);
            assert!(!n.snap_mark());
            m.take_fifo_from(other);
            assert!(m.snap_mark() && m.fifo_seq() == Some(5));
            m.set_snap_mark(false);
            assert!(!m.snap_mark() && m.fifo_seq() == Some(5) && m.kind() == KIND_INT);
        }
    }

    #[test]
    fn log_incr_is_logarithmic() {
        let l = Lfu::default();
        let never = || -> u32 { panic!("no draw when the increment is certain") };
        assert_eq!(l.log_incr(255, never), 255);
        assert_eq!(l.log_incr(0, never), 1);
        assert_eq!(l.log_incr(LFU_INIT_VAL, never), LFU_INIT_VAL + 1);
        // At 15, p = 1 / (10 * 10 + 1).
        let at = |p: f64| move || (p * (1u64 << 32) as f64) as u32;
        assert_eq!(l.log_incr(15, at(0.0099)), 16);
        assert_eq!(l.log_incr(15, at(0.0100)), 15);
        // The boundary: the last winning draw is floor((2^32 - 1) / 101).
        assert_eq!(l.log_incr(15, || 42_524_428), 16);
        assert_eq!(l.log_incr(15, || 42_524_429), 15);
        let always = Lfu { log_factor: 0, decay_minutes: 1 };
        assert_eq!(always.log_incr(200, never), 201);
    }

    #[test]
    fn lfu_draw_is_uniform() {
        let n = 100_000;
        let mut tenths = [0u32; 10];
        for _ in 0..n {
            let r = lfu_draw();
            tenths[(u64::from(r) * 10 >> 32) as usize] += 1;
        }
        // Each tenth within 5% of its share.
        for t in tenths {
            assert!((f64::from(t) - f64::from(n) / 10.0).abs() < f64::from(n) / 200.0, "{tenths:?}");
        }
    }
}
