//! Tern's keyspace table: 64-byte buckets of fingerprints and 6-byte item
//! addresses, one allocation per item, open addressing over buckets,
//! incremental resize to any size, SCAN cursors that survive resizes, and a
//! batch API that overlaps the cache misses of many keys.
//!
//! Goals: a hit costs two cache misses (bucket, item), both prefetchable
//! ([`Table::prefetch_bucket`], [`Table::item_hint`] through the
//! staged-lookup engine [`stage`], [`Table::prefetch_item`],
//! [`Table::get_batch`]); no single operation rehashes more than a few
//! buckets; memory is counted exactly in the allocator's size classes and
//! stays under 12 bytes of bucket per key at any size.
//! Non-goals: concurrent access (a shard lock guards each table) and storing
//! hashes (items are rehashed from their keys, saving 8 bytes per key).
//!
//! # Layout
//! A bucket holds nine items (see `bucket.rs`): nine fingerprint bytes, an
//! overflow count and nine 48-bit addresses. A key's home bucket comes from
//! the low 32 bits of its hash (its *position*) by multiply and shift, so an
//! array may have any number of buckets and homes follow positions in order.
//! A key whose home is full goes to the next bucket with room, wrapping at
//! the end, and every full bucket it passes counts it: a lookup stops at the
//! first bucket of its probe whose count is zero. With no chains there is no
//! overflow allocation, so buckets can be filled to 4/5 before the table
//! grows, and it grows to the smallest allocator size class that fills at
//! most 3/4 (classes are at most 1.25× apart, so at least 3/5): 8.9 to 11.9
//! bytes of bucket per key whatever the size, where doubling a table of
//! seven-slot buckets gave 9.1 to 18.3 plus overflow buckets.
//!
//! # Hashing contract
//! Every operation takes the key's 64-bit hash, computed once upstream with
//! the table's `BuildHasher` as `hasher.hash_one(key)` for `key: &[u8]`
//! ([`hash_key`] computes it, inlined); the
//! table recomputes it the same way when it moves items during a resize, and
//! for SCAN and `retain`. The position is the hash's low 32 bits, the
//! fingerprint comes from bits 32..48; its top bits may be constant within
//! one table (they pick the shard upstream).
//!
//! # Resizing
//! While a resize runs there are two bucket arrays, `old` and `new`. Homes
//! of `old` below `done` have been moved: a key lives in `new` when its
//! `old` home is below `done`, in `old` otherwise, so a lookup probes one
//! array. A resize step moves a cluster: the next home's bucket and the
//! buckets after it up to one no remaining item passed, which hold exactly
//! the items of those homes (less any that wrapped around from the end:
//! they wait for their home's turn). `new` is allocated uninitialised and
//! initialised from its start as its homes come into use (homes in both
//! arrays follow positions in order), so allocating a huge array costs no
//! time and no page is touched twice. Every insert and remove moves a few
//! buckets' worth; [`Table::rehash_step`] lets a cron finish idle tables.
//!
//! # Measured (2-core AMD EPYC KVM guest, 4 KiB pages)
//! 5M keys of 16 B with 100-byte values in the item (a 4-byte `T`, as
//! tern-store's `Meta`), random hits, jemalloc.
//! `cargo run --release -p tern-table --example batch_ratio` builds the
//! table, prints its memory, then alternates one way and the other round by
//! round (the machine is noisy) and reports medians. One at a time is not
//! one miss after another: the CPU runs ahead into the next independent
//! lookup. What bounds a batched lookup here is page walks: a prefetch
//! whose page is not in the TLB holds up the instructions behind it until
//! its walk ends, so stage 2 reads a whole group's buckets first and then
//! issues the group's item prefetches back to back, keeping several walks
//! going at once; and the last stage checks the item stage 2 found before
//! probing again. With that, `get` one at a time took 222–266 ns and
//! `get_batch` 94–119 ns in calls of 16 keys (2.24–2.26×; 1.79–1.86× before
//! the change, in the same runs) and 94 ns in calls of 100 (2.62×; groups of
//! 32 staggered; 1.79–1.85× before). In some runs the whole machine is
//! slower (one at a time 430–530 ns) and the ratios higher (2.75–3.03×).
//! `cargo bench -p tern-table --bench lookup` gives the same picture with
//! wider spread, and `hashbrown::HashMap<Box<[u8]>, Box<[u8]>>::get` for
//! scale.
//!
//! Memory for the same 5M keys, from `mem_bytes` and equal to jemalloc's
//! `stats.allocated` delta: 22.1 bytes per key beyond key and value (the
//! 128-byte item class holds 116 bytes of key and value, an 8-byte header
//! and `T`: 12; buckets 10.1, at 70.6% of the slots used). From 100k to 12M
//! keys the buckets cost 8.9 to 11.1 bytes per key
//! (`cargo run --release -p tern-table --example fill_sweep`). The chained
//! seven-slot layout before it took 26.9 at 5M, and hashbrown with boxed
//! keys and values 79.1. Items may instead own one boxed out-of-line part
//! (`Item<T, B>`), for values that do not belong in the item.
//!
//! `cargo run --release -p tern-table --example growth_latency`: growing to
//! 10M keys and removing them all, the slowest single operation took
//! 0.26 ms (insert) and 0.33 ms (remove) of CPU time; jemalloc alone shows
//! 0.40 ms on the same allocations. Old arrays are given back a slice at a
//! time: freeing a touched 64 MiB array at once cost 9 ms of CPU here.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod alloc_ctl;
mod bucket;
mod hashing;
mod item;
mod iter;
pub mod popcount;
mod resize;
pub mod stage;
pub mod ticks;

use std::alloc::{self, Layout};
use std::hash::BuildHasher;
use std::marker::PhantomData;
use std::ptr;

use bucket::{fingerprint, Bucket, SLOTS};
pub use stage::{ItemHint, Lookups, Reach, Stager, ITEM_PREFETCH_SPAN};
pub use iter::Iter;
use iter::View;
pub use item::{prefetch_freed, Item, MAX_KEY_LEN};
pub use alloc_ctl::{allocator_muzzy, purge_allocator};
pub use popcount::popcount;
pub use hashing::hash_key;

/// The hasher used when none is given: the one the keyspace uses.
pub use hashbrown::DefaultHashBuilder;

/// Grow when more than 4/5 of the slots are used...
const GROW_NUM: usize = 4;
const GROW_DEN: usize = 5;
/// ...to the smallest array the items fill at most 3/4 of. Arrays take
/// whole allocator size classes, at most 1.25× apart, so right after a
/// resize the items fill between 3/5 and 3/4 of the slots: a table's fill
/// stays between 3/5 and 4/5, 8.9 to 11.9 bytes of bucket per item. (At
/// 7/8 the 5M-key table used 1.7 bytes per key less, but 9% of its keys sat
/// outside their home bucket instead of 4%, and prefetched MGETs ran 7%
/// slower.)
const TARGET_NUM: usize = 3;
const TARGET_DEN: usize = 4;
/// Shrink when under 1/5 of the slots are used.
const SHRINK_NUM: usize = 1;
const SHRINK_DEN: usize = 5;
/// Work each insert or remove does on a resize under way: up to this many
/// buckets' worth of items. A grow moves about 4.5 buckets per insert, so it
/// ends long before the old array fills up.
const STEP: usize = 4;
/// Empty buckets a step may pass over per unit of its budget.
const EMPTY_VISITS: usize = 16;
/// Bytes of a finished resize's old array given back per operation.
const RETIRE_CHUNK: usize = 1 << 18;
/// Arrays smaller than this are freed at once when a resize ends.
const RETIRE_MIN: usize = 4 * RETIRE_CHUNK;
/// Keys in flight in [`Table::get_batch`].
pub const BATCH: usize = 32;

/// jemalloc's size class for a request of `size` bytes (its default
/// configuration on x86_64: 16-byte quantum, four classes per doubling).
pub const fn size_class(size: usize) -> usize {
    if size <= 8 {
        return 8;
    }
    if size <= 128 {
        return (size + 15) & !15;
    }
    let lg = usize::BITS - 1 - (size - 1).leading_zeros();
    let delta = 1usize << (lg - 2);
    (size + delta - 1) & !(delta - 1)
}

/// Asks for the lines of the first `len` bytes from `p`, at most
/// [`PREFETCH_HEAD`] of them: the head of a buffer that a lookup starts
/// reading. Only a hint, as [`prefetch`].
#[inline]
pub fn prefetch_head(p: *const u8, len: usize) {
    for off in (0..len.min(PREFETCH_HEAD)).step_by(64) {
        prefetch(p.wrapping_add(off));
    }
}

/// The most bytes [`prefetch_head`] asks for: four lines.
pub const PREFETCH_HEAD: usize = 256;

/// Whether two keys are equal. Keys are mostly short (a cache's names, a
/// set's members), where a call to `memcmp` costs more than the compare:
/// up to 16 bytes are compared as two overlapping words, inline.
#[inline(always)]
pub fn key_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n > 16 {
        return a == b;
    }
    if n >= 8 {
        let w = |s: &[u8], at: usize| u64::from_ne_bytes(s[at..at + 8].try_into().unwrap());
        return w(a, 0) == w(b, 0) && w(a, n - 8) == w(b, n - 8);
    }
    if n >= 4 {
        let w = |s: &[u8], at: usize| u32::from_ne_bytes(s[at..at + 4].try_into().unwrap());
        return w(a, 0) == w(b, 0) && w(a, n - 4) == w(b, n - 4);
    }
    if n >= 2 {
        let w = |s: &[u8], at: usize| u16::from_ne_bytes(s[at..at + 2].try_into().unwrap());
        return w(a, 0) == w(b, 0) && w(a, n - 2) == w(b, n - 2);
    }
    n == 0 || a[0] == b[0]
}

/// Asks the CPU to bring the cache line holding `p` into L1. Only a hint:
/// any address is fine, nothing is read.
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: a prefetch never faults and has no observable effect on memory,
    // whatever the address; SSE is part of the x86_64 baseline.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_mm_prefetch(p as *const i8, core::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = p;
}

/// Prefetches `hash`'s home bucket from a [`Table::hint`] taken earlier,
/// possibly under a lock since released: the address is only computed
/// (wrapping), never dereferenced, so a stale hint costs one wasted prefetch.
#[inline(always)]
pub fn prefetch_hinted(base: usize, nb: u64, hash: u64) {
    // In u128: a stale or made-up `nb` must not overflow.
    let i = ((hash as u32 as u128 * nb as u128) >> 32) as u64;
    let off = i.wrapping_mul(64) as usize;
    prefetch(base.wrapping_add(off) as *const u8);
}

/// A bucket array: `nb` buckets aligned to 64 (any count: homes are picked
/// by multiply and shift).
struct Array {
    ptr: *mut Bucket,
    nb: usize,
}

impl Array {
    const NONE: Array = Array { ptr: ptr::null_mut(), nb: 0 };

    fn layout(nb: usize) -> Layout {
        Layout::array::<Bucket>(nb).expect("bucket array size")
    }

    /// Allocates `nb` buckets, zeroed or left uninitialised.
    fn alloc(nb: usize, zeroed: bool) -> Array {
        let layout = Self::layout(nb);
        // SAFETY: the layout's size is at least 64.
        let p = unsafe {
            if zeroed {
                alloc::alloc_zeroed(layout)
            } else {
                alloc::alloc(layout)
            }
        };
        if p.is_null() {
            alloc::handle_alloc_error(layout);
        }
        Array { ptr: p as *mut Bucket, nb }
    }

    /// Frees the array memory (chains must have been emptied or moved).
    fn free(&mut self) {
        if self.nb != 0 {
            // SAFETY: allocated by `alloc` with this layout.
            unsafe { alloc::dealloc(self.ptr as *mut u8, Self::layout(self.nb)) };
        }
        *self = Array::NONE;
    }

    /// The bucket after `j`, wrapping at the end.
    #[inline(always)]
    fn next(&self, j: usize) -> usize {
        if j + 1 == self.nb {
            0
        } else {
            j + 1
        }
    }

    /// Address of bucket `i` (not dereferenced here).
    #[inline(always)]
    fn at(&self, i: usize) -> *mut Bucket {
        self.ptr.wrapping_add(i)
    }

    fn bytes(&self) -> usize {
        if self.nb == 0 {
            0
        } else {
            size_class(self.nb * 64)
        }
    }
}

/// The old array of a finished resize, handed back to the kernel a slice at
/// a time before it is freed: freeing a touched 64 MiB array at once cost
/// 9 ms of CPU here (the kernel unmaps 16k pages, whenever the allocator
/// purges), while dropping 256 KiB of its pages per operation costs
/// microseconds and leaves nothing resident for the final free.
struct Retiring {
    ptr: *mut u8,
    size: usize,
    /// Bytes from `ptr` whose pages were already dropped.
    done: usize,
}

impl Retiring {
    const NONE: Retiring = Retiring { ptr: ptr::null_mut(), size: 0, done: 0 };

    fn new(a: Array) -> Retiring {
        Retiring { ptr: a.ptr as *mut u8, size: a.nb * 64, done: 0 }
    }

    /// Drops one slice of pages, or frees the array when `all` or when
    /// nothing is left. Returns true while something is left.
    fn step(&mut self, all: bool) -> bool {
        if self.size == 0 {
            return false;
        }
        if all || self.done >= self.size || !drop_pages(self.ptr, self.size, &mut self.done) {
            // SAFETY: `ptr` is a live allocation of `size` bytes aligned to 64
            // (a bucket array's layout).
            unsafe { alloc::dealloc(self.ptr, Layout::from_size_align_unchecked(self.size, 64)) };
            *self = Retiring::NONE;
            return false;
        }
        true
    }
}

/// Gives the pages of the next `RETIRE_CHUNK` bytes of the dead block
/// `base..base+size` back to the kernel (from `*done` on). False when the
/// platform cannot, so the caller frees the block at once.
#[cfg(all(target_os = "linux", not(miri)))]
fn drop_pages(base: *mut u8, size: usize, done: &mut usize) -> bool {
    // Whole chunks aligned to RETIRE_CHUNK (a multiple of any page size up
    // to 256 KiB) inside the block: never a page the allocator shares.
    let start = (base as usize + *done).next_multiple_of(RETIRE_CHUNK);
    let end = base as usize + size;
    if start + RETIRE_CHUNK > end {
        *done = size;
        return true;
    }
    // SAFETY: the range is inside a block we own and no longer read; for the
    // allocator's anonymous private mappings MADV_DONTNEED only makes the
    // pages read back as zeros, which nothing relies on either way.
    unsafe { libc::madvise(start as *mut libc::c_void, RETIRE_CHUNK, libc::MADV_DONTNEED) };
    *done = start + RETIRE_CHUNK - base as usize;
    true
}

#[cfg(not(all(target_os = "linux", not(miri))))]
fn drop_pages(_: *mut u8, _: usize, _: &mut usize) -> bool {
    false
}

/// Which array an item sits in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    Old,
    New,
}

/// Where an item sits: its array, its home bucket there, its bucket and slot.
#[derive(Clone, Copy)]
struct Loc {
    side: Side,
    home: usize,
    b: usize,
    s: usize,
}

/// A hash table of [`Item`]s; see the crate docs.
pub struct Table<T, S = DefaultHashBuilder, B = ()> {
    old: Array,
    /// The array being filled while resizing; `nb == 0` otherwise.
    new: Array,
    /// `old` homes moved so far, from bucket 0: keys whose `old` home is
    /// below this live in `new`, the others in `old`.
    done: usize,
    /// Buckets of `new` initialised so far, from bucket 0 (homes in `new`
    /// follow homes in `old`: both are in position order).
    nready: usize,
    /// A move was interrupted by a panic (in the hasher) and not finished
    /// yet: its cluster's items may be in either array, so lookups try both.
    torn: bool,
    retiring: Retiring,
    len: usize,
    /// Items in `new`.
    new_len: usize,
    item_bytes: usize,
    /// Items whose mark word is not 0, and their words' bits set in all
    /// ([`Table::marked`]).
    marked: usize,
    mark_bits: usize,
    hasher: S,
    _items: PhantomData<Box<Item<T, B>>>,
}

// SAFETY: the table owns its items and buckets exclusively (no sharing
// between tables), so sending it sends `T`s, `B`s and `S`.
unsafe impl<T: Send, B: Send, S: Send> Send for Table<T, S, B> {}
// SAFETY: `&Table` hands out only `&Item<T, B>` and `&S`.
unsafe impl<T: Sync, B: Sync, S: Sync> Sync for Table<T, S, B> {}

impl<T, B> Table<T, DefaultHashBuilder, B> {
    /// An empty table with a randomly seeded default hasher. Allocates nothing.
    pub fn new() -> Self {
        Self::with_hasher(DefaultHashBuilder::default())
    }
}

impl<T, B, S: Default> Default for Table<T, S, B> {
    fn default() -> Self {
        Self::with_hasher(S::default())
    }
}

/// The item whose address a slot holds.
///
/// # Safety
/// `addr` must come from a slot that holds a live item of a live table.
#[inline(always)]
unsafe fn item_ptr<T, B>(addr: usize) -> *mut Item<T, B> {
    // SAFETY: per the contract; the address was exposed when it was stored.
    unsafe { item::from_thin::<T, B>(addr as *mut u8) }
}

/// A slot's form of an item pointer (exposing its provenance). An address
/// above 48 bits cannot be stored: the process aborts rather than panics,
/// because `swap_expire` gets the address only after the old item is freed,
/// and unwinding there would leave its slot pointing at freed memory.
fn addr_of_item<T, B>(p: *mut Item<T, B>) -> usize {
    let a = p as *mut u8 as usize;
    if a >= bucket::ADDR_LIMIT {
        eprintln!("tern-table: the allocator returned an address above 48 bits ({a:#x}); not supported");
        std::process::abort();
    }
    a
}

impl<T, B, S> Table<T, S, B> {
    /// An empty table that rehashes keys with `hasher` (the same one that
    /// computes the hashes passed in). Allocates nothing.
    pub fn with_hasher(hasher: S) -> Self {
        Table {
            old: Array::NONE,
            new: Array::NONE,
            done: 0,
            nready: 0,
            torn: false,
            retiring: Retiring::NONE,
            len: 0,
            new_len: 0,
            item_bytes: 0,
            marked: 0,
            mark_bits: 0,
            hasher,
            _items: PhantomData,
        }
    }

    /// The hasher given at construction.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Number of items.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no items.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Buckets in the arrays (both while resizing).
    pub fn bucket_count(&self) -> usize {
        self.old.nb + self.new.nb
    }

    /// True while a resize is under way.
    #[inline]
    pub fn is_rehashing(&self) -> bool {
        self.new.nb != 0
    }

    /// Bytes held: bucket arrays and items, each rounded to the allocator's
    /// size class. O(1).
    pub fn mem_bytes(&self) -> usize {
        let retiring = if self.retiring.size == 0 { 0 } else { size_class(self.retiring.size) };
        self.old.bytes() + self.new.bytes() + retiring + self.item_bytes
    }

    /// Bytes of the bucket array being moved away from while a resize is
    /// under way (0 otherwise). O(1).
    pub fn rehashing_bytes(&self) -> usize {
        if self.is_rehashing() {
            self.old.bytes()
        } else {
            0
        }
    }

    /// Bytes of the items alone, each rounded to its size class (the
    /// part of [`Table::mem_bytes`] that is not bucket arrays). O(1).
    pub fn item_bytes(&self) -> usize {
        self.item_bytes
    }

    /// The bucket array's base address and bucket count, for
    /// [`prefetch_hinted`] before the caller takes the lock that guards this
    /// table.
    pub fn hint(&self) -> (usize, u64) {
        if self.old.nb == 0 {
            return (0, 0);
        }
        // Late in a resize most keys already live in the new array.
        if self.is_rehashing() && self.done * 2 >= self.old.nb {
            (self.new.ptr as usize, self.new.nb as u64)
        } else {
            (self.old.ptr as usize, self.old.nb as u64)
        }
    }

    #[inline(always)]
    fn arr(&self, side: Side) -> &Array {
        match side {
            Side::Old => &self.old,
            Side::New => &self.new,
        }
    }

    /// True when position `pos`'s keys live in `new` (a resize is under way
    /// and their `old` home was moved).
    #[inline(always)]
    fn in_new(&self, pos: u32) -> bool {
        home(pos, self.old.nb) < self.done
    }

    /// True when bucket `j` of `new` is initialised.
    #[inline(always)]
    fn new_ready(&self, j: usize) -> bool {
        j < self.nready
    }

    /// True when bucket `j` of `side` is initialised.
    #[inline(always)]
    fn ready(&self, side: Side, j: usize) -> bool {
        side == Side::Old || self.new_ready(j)
    }

    /// The array a key at `pos` lives in (the first to try after a torn move).
    #[inline(always)]
    fn side_of(&self, pos: u32) -> Side {
        if self.is_rehashing() && self.in_new(pos) {
            Side::New
        } else {
            Side::Old
        }
    }

    /// Walks `side`'s probe sequence for `hash` and returns the first item
    /// with a matching fingerprint for which `eq` holds.
    #[inline(always)]
    fn probe(&self, side: Side, hash: u64, eq: &mut impl FnMut(&Item<T, B>) -> bool) -> Option<Loc> {
        let a = self.arr(side);
        let h = home(hash as u32, a.nb);
        if !self.ready(side, h) {
            return None;
        }
        let fp = fingerprint(hash);
        let mut j = h;
        for _ in 0..a.nb {
            // A probe only moves on past a bucket with a nonzero overflow
            // count, which an insert passed into the next bucket, making it
            // ready; checked anyway for hashes that disagree with the hasher.
            if side == Side::New && !self.new_ready(j) {
                return None;
            }
            // SAFETY: `j` is in bounds and initialised (checked).
            let b = unsafe { &*a.at(j) };
            let mut hits = b.matches(fp);
            while hits != 0 {
                let s = hits.trailing_zeros() as usize;
                hits &= hits - 1;
                // SAFETY: a slot with a fingerprint holds a live item.
                if eq(unsafe { &*item_ptr::<T, B>(b.addr(s)) }) {
                    return Some(Loc { side, home: h, b: j, s });
                }
            }
            if b.overflow() == 0 {
                return None;
            }
            j = a.next(j);
        }
        None
    }

    /// Finds the first item of `hash`'s probe with a matching fingerprint
    /// for which `eq` holds.
    #[inline(always)]
    fn locate(&self, hash: u64, mut eq: impl FnMut(&Item<T, B>) -> bool) -> Option<Loc> {
        if self.len == 0 {
            return None;
        }
        if !self.is_rehashing() {
            // The common case, with the side known at compile time.
            return self.probe(Side::Old, hash, &mut eq);
        }
        self.locate_resizing(hash, &mut eq)
    }

    /// [`Table::locate`] while a resize runs.
    #[inline(never)]
    fn locate_resizing(&self, hash: u64, eq: &mut impl FnMut(&Item<T, B>) -> bool) -> Option<Loc> {
        let side = self.side_of(hash as u32);
        let found = self.probe(side, hash, eq);
        if found.is_some() || !self.torn {
            return found;
        }
        let other = if side == Side::Old { Side::New } else { Side::Old };
        self.probe(other, hash, eq)
    }

    /// The item at `loc`.
    ///
    /// # Safety
    /// `loc` must come from `locate` with no mutation since.
    #[inline(always)]
    unsafe fn item_at(&self, loc: Loc) -> *mut Item<T, B> {
        // SAFETY: per the contract the slot holds a live item.
        unsafe { item_ptr::<T, B>((*self.arr(loc.side).at(loc.b)).addr(loc.s)) }
    }

    /// Looks `key` up.
    #[inline]
    pub fn get(&self, key: &[u8], hash: u64) -> Option<&Item<T, B>> {
        self.find_by(hash, |e| key_eq(e.key(), key))
    }

    /// Looks `key` up for writing.
    #[inline]
    pub fn get_mut(&mut self, key: &[u8], hash: u64) -> Option<&mut Item<T, B>> {
        self.find_by_mut(hash, |e| key_eq(e.key(), key))
    }

    /// The first item of `hash`'s probe with `hash`'s fingerprint for which
    /// `pred` holds (items do not store their hash: `pred` decides).
    #[inline]
    pub fn find_by(&self, hash: u64, pred: impl FnMut(&Item<T, B>) -> bool) -> Option<&Item<T, B>> {
        let loc = self.locate(hash, pred)?;
        // SAFETY: `loc` is fresh; the item lives as long as `&self`.
        Some(unsafe { &*self.item_at(loc) })
    }

    /// [`Table::find_by`] for writing.
    #[inline]
    pub fn find_by_mut(&mut self, hash: u64, pred: impl FnMut(&Item<T, B>) -> bool) -> Option<&mut Item<T, B>> {
        let loc = self.locate(hash, pred)?;
        // SAFETY: `loc` is fresh and `&mut self` makes the access exclusive.
        Some(unsafe { &mut *self.item_at(loc) })
    }

    /// Items on `hash`'s probe with its fingerprint (a superset of the items
    /// with this hash).
    pub fn iter_hash(&self, hash: u64) -> impl Iterator<Item = &Item<T, B>> + '_ {
        let mut out = Vec::new();
        if self.len != 0 {
            let first = self.side_of(hash as u32);
            let sides = if self.torn { [Some(first), Some(if first == Side::Old { Side::New } else { Side::Old })] } else { [Some(first), None] };
            for side in sides.into_iter().flatten() {
                self.probe(side, hash, &mut |e| {
                    out.push(e as *const Item<T, B>);
                    false
                });
            }
        }
        // SAFETY: the items stay alive and unmoved while `&self` is held.
        out.into_iter().map(|p| unsafe { &*p })
    }

    /// All items, in bucket order.
    pub fn iter(&self) -> Iter<'_, T, B> {
        Iter { table: self.view(), pos: 0, bucket: ptr::null(), pending: 0, left: self.len, _t: PhantomData }
    }

    fn view(&self) -> View {
        View {
            old: (self.old.ptr, self.old.nb),
            new: (self.new.ptr, self.new.nb),
            nready: self.nready,
        }
    }

    /// One SCAN step from `cursor`: calls `f` on every item whose position
    /// (the hash's low 32 bits) lies in one home bucket's range from
    /// `cursor` on, and returns the next cursor (the end of that range), 0
    /// when the walk is done. Positions never change, so every item present
    /// for the whole walk is visited exactly once, across any resizes
    /// between calls; none is visited twice.
    pub fn scan<'a>(&'a self, cursor: u64, mut f: impl FnMut(&'a Item<T, B>)) -> u64
    where
        S: BuildHasher,
    {
        if self.len == 0 || cursor >= 1 << 32 {
            return 0;
        }
        let p = cursor as u32;
        let mut end = range_end(home(p, self.old.nb), self.old.nb);
        if self.is_rehashing() {
            end = end.min(range_end(home(p, self.new.nb), self.new.nb));
        }
        let mut visit = |side: Side| {
            let a = self.arr(side);
            let h = home(p, a.nb);
            if !self.ready(side, h) {
                return;
            }
            let mut j = h;
            for _ in 0..a.nb {
                if !self.ready(side, j) {
                    return;
                }
                for (_, e) in self.bucket_items(side, j) {
                    let q = hash_key(&self.hasher, e.key()) as u32 as u64;
                    if q >= cursor && q < end {
                        f(e);
                    }
                }
                // SAFETY: in bounds and initialised (checked).
                if unsafe { (*a.at(j)).overflow() } == 0 {
                    return;
                }
                j = a.next(j);
            }
        };
        // The range's keys are all in one array, or in both after a torn move.
        let side = self.side_of(p);
        visit(side);
        if self.torn {
            visit(if side == Side::Old { Side::New } else { Side::Old });
        }
        if end >= 1 << 32 {
            0
        } else {
            end
        }
    }

    /// A random item, every item as likely as any other: a random slot
    /// of a random bucket (both arrays while resizing), drawn again while
    /// it is empty (about 1/load draws; picking a random item of a random
    /// non-empty bucket would favour the items of sparse buckets, which
    /// Redis's SRANDMEMBER distribution test catches). `rng` returns
    /// uniform u64s.
    pub fn random(&self, rng: &mut impl FnMut() -> u64) -> Option<&Item<T, B>> {
        if self.len == 0 {
            return None;
        }
        let v = self.view();
        let total = v.count() as u64;
        // Enough draws for a table at a sixteenth of its usual load.
        let slots = total.saturating_mul(SLOTS as u64);
        let draws = (slots / self.len as u64).saturating_mul(16).clamp(32, 4096);
        for _ in 0..draws {
            let r = rng() % slots;
            if let Some(b) = v.get(r / SLOTS as u64) {
                // SAFETY: `View::get` returns initialised buckets only, of
                // arrays that `&self` keeps alive.
                let bk = unsafe { &*b };
                let slot = (r % SLOTS as u64) as usize;
                if bk.present() & (1 << slot) != 0 {
                    // SAFETY: present slots hold live items.
                    return Some(unsafe { &*item_ptr::<T, B>(bk.addr(slot)) });
                }
            }
        }
        // Sparse table: walk from a random bucket to the next non-empty one.
        let start = rng() % total;
        for d in 0..total {
            if let Some(b) = v.get((start + d) % total) {
                if let Some(e) = self.pick(b, rng()) {
                    return Some(e);
                }
            }
        }
        None
    }

    /// The `r`-th (modulo their count) of the items bucket `b` holds, if any.
    /// `b` must come from `View::get` of this table's view.
    #[inline]
    fn pick(&self, b: *const Bucket, r: u64) -> Option<&Item<T, B>> {
        // SAFETY: `View::get` returns initialised buckets only, of arrays
        // that `&self` keeps alive.
        let b = unsafe { &*b };
        let pres = b.present();
        let n = pres.count_ones();
        if n == 0 {
            return None;
        }
        let mut m = pres;
        for _ in 0..(r % n as u64) {
            m &= m - 1;
        }
        // SAFETY: present slots hold live items.
        Some(unsafe { &*item_ptr::<T, B>(b.addr(m.trailing_zeros() as usize)) })
    }

    /// [`Table::random`] for each slot of `out`, with the cache misses of
    /// the draws overlapped (eviction's samples): every draw's bucket is
    /// asked for first, then the items they name, before any is returned.
    /// A draw that lands on an empty bucket is made again as
    /// [`Table::random`] makes it. Fills `out` in order; None only for an
    /// empty table.
    pub fn random_many<'a>(&'a self, rng: &mut impl FnMut() -> u64, out: &mut [Option<&'a Item<T, B>>]) {
        out.fill(None);
        if self.len == 0 {
            return;
        }
        const RUN: usize = 16;
        let v = self.view();
        let total = v.count() as u64;
        for chunk in out.chunks_mut(RUN) {
            let mut draws = [(0u64, 0u64); RUN];
            for d in draws[..chunk.len()].iter_mut() {
                *d = (rng() % total, rng());
                if let Some(b) = v.get(d.0) {
                    prefetch(b as *const u8);
                }
            }
            for (slot, &(k, r)) in chunk.iter_mut().zip(&draws) {
                let e = v.get(k).and_then(|b| self.pick(b, r)).or_else(|| self.random(rng));
                if let Some(e) = e {
                    prefetch((e as *const Item<T, B>).cast::<u8>());
                }
                *slot = e;
            }
        }
    }

    /// Stage 1 of a batched access: prefetches the home bucket of `hash`.
    /// Reads no table memory.
    #[inline]
    pub fn prefetch_bucket(&self, hash: u64) {
        if self.old.nb == 0 {
            return;
        }
        let a = self.arr(self.side_of(hash as u32));
        prefetch(a.at(home(hash as u32, a.nb)) as *const u8);
    }

    /// The insert side of stage 1: prefetches the bucket an insert of `hash`
    /// starts at.
    #[inline]
    pub fn prefetch_for_insert(&self, hash: u64) {
        self.prefetch_bucket(hash)
    }

    /// Stage 2 of a batched access: reads `hash`'s home bucket (prefetched by
    /// stage 1) and prefetches the first item whose fingerprint matches; when
    /// none does and items passed the home, the same in the next bucket.
    /// `key`'s length tells how many lines the item's key spans. A caller
    /// staging many keys does better through [`Stager`], which finds all of
    /// a group's items first and then asks for them.
    #[inline]
    pub fn prefetch_item(&self, key: &[u8], hash: u64) {
        self.item_hint(hash).prefetch(key.len(), 0)
    }

    /// Stage 2a, for callers that stage many keys ([`Lookups::item`]): reads
    /// `hash`'s home bucket (prefetched by stage 1) and returns the first
    /// item whose fingerprint matches, looking into the next bucket when
    /// none does and items passed the home; [`ItemHint::NONE`] when there
    /// is none. Only something to prefetch: it may belong to another key.
    #[inline(always)]
    pub fn item_hint(&self, hash: u64) -> ItemHint {
        let p = self.item_addr(hash);
        ItemHint { p, key_at: 8 + std::mem::size_of::<T>() }
    }

    #[inline(always)]
    fn item_addr(&self, hash: u64) -> *const u8 {
        if self.len == 0 {
            return ptr::null();
        }
        let side = self.side_of(hash as u32);
        let a = self.arr(side);
        let h = home(hash as u32, a.nb);
        if !self.ready(side, h) {
            return ptr::null();
        }
        let fp = fingerprint(hash);
        // SAFETY: the home bucket is initialised (checked above).
        let mut b = unsafe { &*a.at(h) };
        let mut hits = b.matches(fp);
        if hits == 0 {
            // Not in its home: such a key almost always sits in the next
            // bucket. Reading it here (a stall when it is not cached yet)
            // lets its item be prefetched too; prefetching the next line
            // for every key in stage 1 instead measured slower.
            let n = a.next(h);
            if b.overflow() == 0 || !self.ready(side, n) {
                return ptr::null();
            }
            // SAFETY: ready (checked).
            b = unsafe { &*a.at(n) };
            hits = b.matches(fp);
            if hits == 0 {
                if b.overflow() != 0 {
                    prefetch(a.at(a.next(n)) as *const u8);
                }
                return ptr::null();
            }
        }
        b.addr(hits.trailing_zeros() as usize) as *const u8
    }

    /// Looks up many keys, pushing one result per key onto `out` in order:
    /// exactly what calling [`Table::get`] on each would give. Keys go
    /// through the staged-lookup engine ([`Stager`]) in groups of
    /// [`BATCH`], buckets two groups ahead and items one, so their cache
    /// misses overlap. Stage 2 keeps the item it found for each key, so the
    /// last stage only compares that item's key and probes again only when
    /// it differs.
    pub fn get_batch<'a>(&'a self, keys: &[(&[u8], u64)], out: &mut Vec<Option<&'a Item<T, B>>>) {
        out.reserve(keys.len());
        let mut src = Batch { t: self, keys, hints: [ptr::null(); 2 * BATCH] };
        let mut st = Stager::new(BATCH, Reach::Entry, keys.len());
        for (i, &(k, h)) in keys.iter().enumerate() {
            st.before(&mut src, i);
            // Stage 2's item is the answer when its key matches (keys are
            // unique); otherwise a full probe decides.
            let p = if st.is_off() { ptr::null() } else { src.hints[i % (2 * BATCH)] };
            if !p.is_null() {
                // SAFETY: `item_addr` returned the address of a live item
                // (stage 2 of this key's group, before it ran), and `&self`
                // keeps the table unchanged since.
                let it = unsafe { &*item_ptr::<T, B>(p as usize) };
                if it.key() == k {
                    out.push(Some(it));
                    continue;
                }
            }
            out.push(self.get(k, h));
        }
    }

    /// Initialises the buckets of `new` up to `j`; they were never handed
    /// out, so zeroing them loses nothing.
    fn make_ready(&mut self, j: usize) {
        while self.nready <= j {
            // SAFETY: `nready` is in bounds (`j` is) and not initialised yet:
            // no reader or writer has been given it.
            unsafe { self.new.at(self.nready).write(Bucket::EMPTY) };
            self.nready += 1;
        }
    }

    /// Puts the item at `addr` into `side` on `hash`'s probe: the first
    /// bucket from its home with a free slot, counting every full bucket
    /// passed. The array must have a free slot (the caller keeps one).
    fn put(&mut self, side: Side, hash: u64, addr: usize) {
        let nb = self.arr(side).nb;
        let mut j = home(hash as u32, nb);
        for _ in 0..nb {
            if side == Side::New {
                self.make_ready(j);
            }
            let a = self.arr(side);
            // SAFETY: `j` is in bounds and initialised (`old` always is,
            // `new` was just made ready); `&mut self` makes this exclusive.
            let b = unsafe { &mut *a.at(j) };
            let free = b.free();
            if free != 0 {
                b.set(free.trailing_zeros() as usize, fingerprint(hash), addr);
                return;
            }
            b.inc_overflow();
            j = a.next(j);
        }
        unreachable!("bucket array full");
    }

    /// Takes one count off the overflow of each bucket from `side`'s `home`
    /// up to (not including) `b`: an item that sat in `b` left.
    fn unpass(&mut self, side: Side, home: usize, b: usize) {
        let a = self.arr(side);
        let mut j = home;
        for _ in 0..a.nb {
            // Hashes that disagree with the hasher could point anywhere.
            if j == b || !self.ready(side, j) {
                return;
            }
            // SAFETY: in bounds and initialised (checked); `&mut self` is
            // exclusive.
            unsafe { (*a.at(j)).dec_overflow() };
            j = a.next(j);
        }
    }

    /// Every initialised bucket: all of `old`, then the ready ones of `new`
    /// (its first `nready`). Borrows nothing, so the walk may change items.
    fn buckets(&self) -> impl Iterator<Item = (Side, usize)> {
        let ready = if self.is_rehashing() { self.nready } else { 0 };
        (0..self.old.nb).map(|j| (Side::Old, j)).chain((0..ready).map(|j| (Side::New, j)))
    }

    /// The items of bucket `j` of `side`, with their slots, for readers
    /// (SCAN, the structural checks). The bucket must be initialised
    /// (checked).
    fn bucket_items(&self, side: Side, j: usize) -> impl Iterator<Item = (usize, &Item<T, B>)> {
        assert!(j < self.arr(side).nb && self.ready(side, j), "bucket {j} not initialised");
        // SAFETY: in bounds and initialised (checked); `&self` keeps it so
        // for the iterator's life.
        let b = unsafe { &*self.arr(side).at(j) };
        let mut pres = b.present();
        std::iter::from_fn(move || {
            if pres == 0 {
                return None;
            }
            let s = pres.trailing_zeros() as usize;
            pres &= pres - 1;
            // SAFETY: a present slot holds a live item, borrowed with `self`.
            Some((s, unsafe { &*item_ptr::<T, B>(b.addr(s)) }))
        })
    }

    /// Items in `side`.
    fn side_len(&self, side: Side) -> usize {
        match side {
            Side::Old => self.len - self.new_len,
            Side::New => self.new_len,
        }
    }

    /// Unlinks the item at `loc`.
    fn take(&mut self, loc: Loc) -> Box<Item<T, B>> {
        // SAFETY: `loc` is fresh; the slot is cleared before the Box exists
        // outside the table.
        unsafe {
            let p = self.item_at(loc);
            (*self.arr(loc.side).at(loc.b)).clear(loc.s);
            self.unpass(loc.side, loc.home, loc.b);
            let it = Box::from_raw(p);
            self.len -= 1;
            if loc.side == Side::New {
                self.new_len -= 1;
            }
            self.item_bytes -= it.alloc_size();
            self.unmarked(it.mark());
            it
        }
    }
}

/// Home bucket of position `pos` among `nb` buckets: the buckets split the
/// 32-bit position range into `nb` runs in order (multiply and shift, no
/// division and no power-of-two size).
#[inline(always)]
fn home(pos: u32, nb: usize) -> usize {
    ((pos as u64 * nb as u64) >> 32) as usize
}

/// The first position whose home is after bucket `b` of `nb` (2^32 for the
/// last bucket).
#[inline]
fn range_end(b: usize, nb: usize) -> u64 {
    // Smallest p with p * nb >= (b + 1) << 32.
    (((b as u128 + 1) << 32).div_ceil(nb as u128)) as u64
}

impl<T, B, S: BuildHasher> Table<T, S, B> {
    /// Inserts `key`, which the caller guarantees is absent, with `value`
    /// and an optional deadline.
    pub fn insert(&mut self, key: &[u8], hash: u64, value: T, expire: Option<u64>) -> &mut Item<T, B> {
        self.insert_with_extra(key, hash, value, expire, &[])
    }

    /// [`Table::insert`] with extra bytes stored in the item.
    pub fn insert_with_extra(
        &mut self,
        key: &[u8],
        hash: u64,
        value: T,
        expire: Option<u64>,
        extra: &[u8],
    ) -> &mut Item<T, B> {
        self.before_insert();
        self.place(hash, Item::new_boxed(key, value, expire, extra))
    }

    /// Inserts an item made by [`Item::new_boxed`] or taken out by
    /// [`Table::remove`] (no reallocation). Its key must be absent.
    pub fn insert_item(&mut self, hash: u64, item: Box<Item<T, B>>) -> &mut Item<T, B> {
        self.before_insert();
        self.place(hash, item)
    }

    /// Stores `item` under its key: when the key is present its item is
    /// replaced in the same slot (no resize work) and handed back; otherwise
    /// `item` is inserted and None returned.
    pub fn upsert(&mut self, hash: u64, item: Box<Item<T, B>>) -> Option<Box<Item<T, B>>> {
        let Some(loc) = self.locate(hash, |e| e.key() == item.key()) else {
            self.insert_item(hash, item);
            return None;
        };
        let (size, marked) = (item.alloc_size(), item.mark());
        let addr = addr_of_item(Box::into_raw(item));
        // Why this holds: `loc` is fresh and `&mut self` makes the access exclusive;
        // the slot takes the new item's address before the old Box exists
        // outside the table, and nothing between can panic. The fingerprint
        // stays right: both items are stored under `hash`.
        // SAFETY: fresh `loc`, exclusive access, and nothing that can panic before the slot is swapped.
        unsafe {
            let old = Box::from_raw(self.item_at(loc));
            (*self.arr(loc.side).at(loc.b)).set_addr(loc.s, addr);
            self.item_bytes = self.item_bytes - old.alloc_size() + size;
            self.marked_up(0, marked);
            self.unmarked(old.mark());
            Some(old)
        }
    }

    /// Resize work due before an insert; may panic in the hasher, before
    /// anything of the insert happened.
    fn before_insert(&mut self) {
        self.rehash_step(STEP);
        if self.old.nb == 0 {
            self.old = Array::alloc(1, true);
        } else if !self.is_rehashing() && (self.len + 1) * GROW_DEN > self.old.nb * SLOTS * GROW_NUM {
            self.start_resize(self.len + 1);
        }
    }

    fn place(&mut self, hash: u64, item: Box<Item<T, B>>) -> &mut Item<T, B> {
        debug_assert!(self.get(item.key(), hash).is_none(), "insert of a present key");
        // Keep a sixteenth of the target array free whatever happens (the
        // sizes above never come near it; this guards the probes' end).
        loop {
            let side = self.side_of(hash as u32);
            if (self.side_len(side) + 1) * 16 <= self.arr(side).nb * SLOTS * 15 {
                break;
            }
            if self.is_rehashing() {
                self.rehash_step(usize::MAX);
            } else {
                self.start_resize(self.len + 1);
            }
        }
        let size = item.alloc_size();
        let p = Box::into_raw(item);
        let side = self.side_of(hash as u32);
        self.put(side, hash, addr_of_item(p));
        self.len += 1;
        if side == Side::New {
            self.new_len += 1;
        }
        self.item_bytes += size;
        // SAFETY: `p` is the live item just placed.
        self.marked_up(0, unsafe { (*p).mark() });
        // SAFETY: the table owns the item; `&mut self` makes this exclusive.
        unsafe { &mut *p }
    }

    /// Removes `key` and hands its item back.
    pub fn remove(&mut self, key: &[u8], hash: u64) -> Option<Box<Item<T, B>>> {
        self.remove_by(hash, |e| key_eq(e.key(), key))
    }

    /// Removes the first item [`Table::find_by`] would return.
    pub fn remove_by(&mut self, hash: u64, pred: impl FnMut(&Item<T, B>) -> bool) -> Option<Box<Item<T, B>>> {
        self.rehash_step(STEP);
        let loc = self.locate(hash, pred)?;
        let it = self.take(loc);
        self.maybe_shrink();
        Some(it)
    }

    /// Sets, replaces or removes `key`'s deadline; false if the key is absent.
    /// Adding one reallocates the item 8 bytes bigger and removing one shrinks
    /// it back, so keys without a TTL never carry the bytes.
    pub fn set_expire(&mut self, key: &[u8], hash: u64, expire: Option<u64>) -> bool {
        self.swap_expire(key, hash, expire).is_some()
    }

    /// [`Table::set_expire`] that returns the deadline it replaced: None if
    /// the key is absent, `Some(previous)` otherwise (one lookup for callers
    /// that count keys with a TTL).
    pub fn swap_expire(&mut self, key: &[u8], hash: u64, expire: Option<u64>) -> Option<Option<u64>> {
        let loc = self.locate(hash, |e| key_eq(e.key(), key))?;
        // SAFETY: `loc` is fresh; `&mut self` makes the access exclusive.
        let it = unsafe { &mut *self.item_at(loc) };
        let previous = it.expire();
        match (previous, expire) {
            (Some(_), Some(d)) => {
                it.replace_expire(d);
                return Some(previous);
            }
            (None, None) => return Some(previous),
            _ => {}
        }
        // Checked here, before the item leaves its slot: `with_expire` must
        // not panic while the table and a Box both own it.
        assert!(std::mem::size_of_val(it) + 8 <= u32::MAX as usize, "item too large");
        let before = it.alloc_size();
        // Why this holds: the slot's item is turned into a Box, reallocated, and its
        // new address written back to the same slot before anything else
        // touches the table; `with_expire` does not panic past the check above
        // (allocation failure aborts), nor does `addr_of_item` (it aborts).
        // SAFETY: the item leaves and returns to one slot, with nothing touching the table in between.
        unsafe {
            let b = Box::from_raw(self.item_at(loc)).with_expire(expire);
            self.item_bytes = self.item_bytes - before + b.alloc_size();
            (*self.arr(loc.side).at(loc.b)).set_addr(loc.s, addr_of_item(Box::into_raw(b)));
        }
        Some(previous)
    }

    /// Items whose mark word is not 0.
    pub fn marked(&self) -> usize {
        self.marked
    }

    /// The bits set in all the items' mark words.
    pub fn mark_bits(&self) -> usize {
        self.mark_bits
    }

    /// Sets `bits` (not 0) in `key`'s mark word (see [`Item::mark`]),
    /// giving the item one first (a reallocation, in place when its size
    /// class has the room). Returns the item and its mark before, or None
    /// if the key is absent.
    pub fn mark(&mut self, key: &[u8], hash: u64, bits: u64) -> Option<(&mut Item<T, B>, u64)> {
        debug_assert_ne!(bits, 0);
        let loc = self.locate(hash, |e| key_eq(e.key(), key))?;
        // SAFETY: `loc` is fresh; `&mut self` makes the access exclusive.
        let it = unsafe { &mut *self.item_at(loc) };
        let before = it.mark();
        self.marked_up(before, before | bits);
        if it.or_mark(bits) {
            return Some((it, before));
        }
        assert!(std::mem::size_of_val(it) + 8 <= u32::MAX as usize, "item too large");
        let size = it.alloc_size();
        // Why this holds: as in `swap_expire`, the item leaves and returns to
        // one slot with nothing touching the table in between, and
        // `with_mark` does not panic past the check above.
        // SAFETY: the item leaves and returns to one slot, with nothing touching the table in between.
        unsafe {
            let mut b = Box::from_raw(self.item_at(loc)).with_mark();
            b.or_mark(bits);
            self.item_bytes = self.item_bytes - size + b.alloc_size();
            let p = Box::into_raw(b);
            (*self.arr(loc.side).at(loc.b)).set_addr(loc.s, addr_of_item(p));
            Some((&mut *p, before))
        }
    }

    /// Takes `key`'s mark word, leaving 0 (0 if the key is absent or has
    /// none).
    pub fn take_mark(&mut self, key: &[u8], hash: u64) -> u64 {
        let Some(it) = self.get_mut(key, hash) else { return 0 };
        let m = it.take_mark();
        self.unmarked(m);
        m
    }

    /// Clears `mask`'s bits from every item's mark word.
    pub fn clear_marks(&mut self, mask: u64) {
        if self.marked == 0 {
            return;
        }
        let (mut cleared, mut bits) = (0, 0);
        for (side, j) in self.buckets() {
            // SAFETY: initialised bucket; `&mut self` is exclusive.
            let mut pres = unsafe { (*self.arr(side).at(j)).present() };
            while pres != 0 {
                let s = pres.trailing_zeros() as usize;
                pres &= pres - 1;
                // SAFETY: a present slot holds a live item; exclusive through `&mut self`.
                let it = unsafe { &mut *item_ptr::<T, B>((*self.arr(side).at(j)).addr(s)) };
                let m = it.mark();
                if m & mask != 0 {
                    bits += (m & mask).count_ones() as usize;
                    it.take_mark();
                    if m & !mask != 0 {
                        it.or_mark(m & !mask);
                    } else {
                        cleared += 1;
                    }
                }
            }
        }
        self.marked -= cleared;
        self.mark_bits -= bits;
    }

    /// Keeps only the items for which `keep` returns true. If `keep`, the
    /// hasher or a value's `Drop` panics, the items already dropped are gone
    /// and the rest stay, with the table consistent.
    pub fn retain(&mut self, mut keep: impl FnMut(&mut Item<T, B>) -> bool) {
        for (side, j) in self.buckets() {
            // SAFETY: initialised bucket; `&mut self` is exclusive.
            let mut pres = unsafe { (*self.arr(side).at(j)).present() };
            while pres != 0 {
                let s = pres.trailing_zeros() as usize;
                pres &= pres - 1;
                // SAFETY: a present slot holds a live item.
                let p = unsafe { item_ptr::<T, B>((*self.arr(side).at(j)).addr(s)) };
                // SAFETY: as above; exclusive through `&mut self`.
                if keep(unsafe { &mut *p }) {
                    continue;
                }
                // SAFETY: as above.
                let pos = hash_key(&self.hasher, unsafe { (*p).key() }) as u32;
                let h = home(pos, self.arr(side).nb);
                self.take(Loc { side, home: h, b: j, s });
                // `take` handed the item back as a Box; dropping it here
                // (it may panic) leaves the table consistent.
            }
        }
        self.maybe_shrink();
    }
}

impl<T, B, S> Table<T, S, B> {
    /// Counts an item's mark going from `before` to `after` (more bits).
    /// Nothing is written for an unmarked item (every insert passes here).
    #[inline]
    fn marked_up(&mut self, before: u64, after: u64) {
        if after != before {
            self.marked += usize::from(before == 0);
            self.mark_bits += (after.count_ones() - before.count_ones()) as usize;
        }
    }

    /// Counts an item's mark `m` gone (nothing written when it is 0).
    #[inline]
    fn unmarked(&mut self, m: u64) {
        if m != 0 {
            self.marked -= 1;
            self.mark_bits -= m.count_ones() as usize;
        }
    }

    /// Removes and drops every item and frees all memory. If a value's
    /// `Drop` panics, the items not reached yet stay, with the table
    /// consistent (overflow counts of removed items stay: too high only
    /// lengthens probes).
    pub fn clear(&mut self) {
        for (side, j) in self.buckets() {
            // SAFETY: initialised bucket; `&mut self` is exclusive.
            let mut pres = unsafe { (*self.arr(side).at(j)).present() };
            while pres != 0 {
                let s = pres.trailing_zeros() as usize;
                pres &= pres - 1;
                // SAFETY: a present slot holds a live item; it leaves the
                // slot before it is dropped.
                unsafe {
                    let b = &mut *self.arr(side).at(j);
                    let it = Box::from_raw(item_ptr::<T, B>(b.addr(s)));
                    b.clear(s);
                    self.len -= 1;
                    if side == Side::New {
                        self.new_len -= 1;
                    }
                    self.item_bytes -= it.alloc_size();
                    self.unmarked(it.mark());
                    drop(it);
                }
            }
        }
        self.old.free();
        self.new.free();
        self.retiring.step(true);
        self.done = 0;
        self.nready = 0;
        self.torn = false;
    }
}

impl<T, B, S> Drop for Table<T, S, B> {
    fn drop(&mut self) {
        self.clear();
    }
}

impl<T: std::fmt::Debug, B: std::fmt::Debug, S> std::fmt::Debug for Table<T, S, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// [`Table::get_batch`]'s keys for the engine; stage 2 keeps each key's
/// item address, by key index modulo two groups (items are found at most
/// one group ahead of the group that runs).
struct Batch<'t, 'k, T, B, S> {
    t: &'t Table<T, S, B>,
    keys: &'k [(&'k [u8], u64)],
    hints: [*const u8; 2 * BATCH],
}

impl<T, B, S> Lookups for Batch<'_, '_, T, B, S> {
    #[inline]
    fn bucket(&mut self, i: usize) {
        self.t.prefetch_bucket(self.keys[i].1);
    }
    #[inline]
    fn item(&mut self, i: usize) -> ItemHint {
        let h = self.t.item_hint(self.keys[i].1);
        self.hints[i % (2 * BATCH)] = h.p;
        h
    }
    #[inline]
    fn key_len(&self, i: usize) -> usize {
        self.keys[i].0.len()
    }
}

#[cfg(test)]
mod tests;
