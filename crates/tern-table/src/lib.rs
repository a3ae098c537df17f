//! Tern's keyspace table: 64-byte buckets of fingerprints and thin item
//! pointers, one allocation per item, incremental resize, Redis-compatible
//! SCAN cursors and a batch API that overlaps the cache misses of many keys.
//!
//! Goals: a hit costs two cache misses (bucket, item), both prefetchable
//! ([`Table::prefetch_bucket`], [`Table::prefetch_item`],
//! [`Table::get_batch`]); no single operation rehashes more than a few
//! buckets; memory is counted exactly in the allocator's size classes.
//! Non-goals: concurrent access (a shard lock guards each table) and storing
//! hashes (items are rehashed from their keys, saving 8 bytes per key).
//!
//! # Hashing contract
//! Every operation takes the key's 64-bit hash, computed once upstream with
//! the table's `BuildHasher` as `hasher.hash_one(key)` for `key: &[u8]`; the
//! table recomputes it the same way only when it moves items during a
//! resize. The bucket is the hash's low bits, the fingerprint a byte from its
//! middle; its top bits may be constant within one table (they pick the
//! shard upstream).
//!
//! # Resizing
//! While a resize runs there are two bucket arrays: `old` and `new`. Bucket
//! `i` of `old` below `moved` has been moved. `new` is allocated
//! uninitialised and each of its buckets is zeroed when the first `old`
//! bucket that feeds it is moved, so allocating a huge array costs no time
//! and no page is touched twice. A key lives in `old` when its `old` bucket
//! is not moved yet, in `new` otherwise, so a lookup reads one bucket. Every
//! insert and remove moves a few buckets; [`Table::rehash_step`] lets a cron
//! finish idle tables.

//!
//! # Measured (2-core AMD EPYC KVM guest, 4 KiB pages)
//! 5M keys of 16 B with 100-byte values in the item (a 4-byte `T`, as
//! tern-store's `Meta`), random hits, jemalloc.
//! `cargo run --release -p tern-table --example batch_ratio` alternates one
//! way and the other round by round (the machine is noisy) and reports
//! medians: `get` one at a time 197–217 ns, `get_batch` of 16 102–111 ns
//! (1.94–1.98×); with jemalloc's huge pages for the items
//! (`_RJEM_MALLOC_CONF=thp:always`) 184 vs 87 ns (2.29×). A batched lookup
//! here is bound by page walks: a prefetch waits for its walk to retire.
//! `cargo bench -p tern-table --bench lookup` gives the same picture with
//! wider spread, and `hashbrown::HashMap<Box<[u8]>, Box<[u8]>>::get` for
//! scale (219–364 ns).
//!
//! Memory for the same 5M keys, from `mem_bytes` and equal to jemalloc's
//! `stats.allocated` delta: 142.9 B/key, of which key and value 116, item
//! header 8, `T` 4 (the 128-byte item is a size class: no rounding), and
//! buckets with their overflow buckets 14.9 (hashbrown with boxed keys and
//! values: 195.1 B/key). Items may instead own one boxed out-of-line part
//! (`Item<T, B>`), for values that do not belong in the item.
//!
//! `cargo run --release -p tern-table --example growth_latency`: growing to
//! 10M keys and removing them all, the slowest single operation on a quiet
//! machine took 0.50 ms (insert) and 0.78 ms (remove) of wall time; jemalloc
//! alone shows 0.62 ms on the same allocations. On a busy machine CPU-time
//! maxima were 0.5–1.4 ms (one run had one 3.4 ms insert, far from any
//! resize) and no spike lined up with a resize. Before old arrays were
//! retired a slice at a time, the end of a resize cost 9 ms (64 MiB array)
//! and 22 ms (128 MiB) of CPU.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod bucket;
mod item;

use std::alloc::{self, Layout};
use std::hash::BuildHasher;
use std::marker::PhantomData;
use std::ptr;

use bucket::{fingerprint, first_slot, match_fp, Bucket};
pub use item::{Item, MAX_KEY_LEN};

/// The hasher used when none is given: the one the keyspace uses.
pub use hashbrown::DefaultHashBuilder;

/// Grow when the average bucket holds more than this many items.
const GROW_FILL: usize = 5;
/// A resize aims at about this many items per bucket.
const TARGET_FILL: usize = 3;
/// Shrink when under 1/8 of the slots are used (7/8 item per bucket).
const SHRINK_FILL_NUM: usize = 7;
const SHRINK_FILL_DEN: usize = 8;
/// Non-empty buckets each insert or remove moves while resizing. A grow
/// needs one per insert to finish before the next; a shrink needs three per
/// remove; four leaves room.
const STEP: usize = 4;
/// Empty buckets a step may pass over per non-empty bucket of its budget.
const EMPTY_VISITS: usize = 16;
/// Bytes of a finished resize's old array given back per operation.
const RETIRE_CHUNK: usize = 1 << 18;
/// Arrays smaller than this are freed at once when a resize ends.
const RETIRE_MIN: usize = 4 * RETIRE_CHUNK;
/// Keys in flight in [`Table::get_batch`].
pub const BATCH: usize = 16;

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

/// Prefetches `hash`'s bucket from a [`Table::hint`] taken earlier, possibly
/// under a lock since released: the address is only computed (wrapping), never
/// dereferenced, so a stale hint costs one wasted prefetch.
#[inline(always)]
pub fn prefetch_hinted(base: usize, mask: u64, hash: u64) {
    let off = (hash & mask).wrapping_mul(64) as usize;
    prefetch(base.wrapping_add(off) as *const u8);
}

/// A bucket array: `nb` (0 or a power of two) buckets aligned to 64.
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
        debug_assert!(nb.is_power_of_two());
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

    #[inline(always)]
    fn mask(&self) -> u64 {
        (self.nb as u64).wrapping_sub(1)
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

/// Where an item sits: its chain's head, its bucket and slot.
#[derive(Clone, Copy)]
struct Loc {
    head: *mut Bucket,
    b: *mut Bucket,
    s: usize,
}

/// A hash table of [`Item`]s; see the crate docs.
pub struct Table<T, S = DefaultHashBuilder, B = ()> {
    old: Array,
    /// The array being filled while resizing; `nb == 0` otherwise.
    new: Array,
    /// Buckets of `old` below this index have been moved to `new`.
    moved: usize,
    /// Buckets of `new` fed by `old` buckets below this index are
    /// initialised (one ahead of `moved` while a move is under way).
    ready: usize,
    retiring: Retiring,
    len: usize,
    item_bytes: usize,
    children: usize,
    hasher: S,
    _items: PhantomData<Box<Item<T, B>>>,
}

// SAFETY: the table owns its items and buckets exclusively (no sharing
// between tables), so sending it sends `T`s and `S`.
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

impl<T, B, S> Table<T, S, B> {
    /// An empty table that rehashes keys with `hasher` (the same one that
    /// computes the hashes passed in). Allocates nothing.
    pub fn with_hasher(hasher: S) -> Self {
        Table {
            old: Array::NONE,
            new: Array::NONE,
            moved: 0,
            ready: 0,
            retiring: Retiring::NONE,
            len: 0,
            item_bytes: 0,
            children: 0,
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

    /// Bytes held: bucket arrays, chain buckets and items, each rounded to
    /// the allocator's size class. O(1).
    pub fn mem_bytes(&self) -> usize {
        let retiring = if self.retiring.size == 0 { 0 } else { size_class(self.retiring.size) };
        self.old.bytes() + self.new.bytes() + retiring + self.children * 64 + self.item_bytes
    }

    /// The bucket array's base address and mask, for [`prefetch_hinted`]
    /// before the caller takes the lock that guards this table.
    pub fn hint(&self) -> (usize, u64) {
        if self.old.nb == 0 {
            return (0, 0);
        }
        // Late in a resize most keys already live in the new array.
        if self.is_rehashing() && self.moved * 2 >= self.old.nb {
            (self.new.ptr as usize, self.new.mask())
        } else {
            (self.old.ptr as usize, self.old.mask())
        }
    }

    /// True when bucket `j` of `new` is initialised.
    #[inline(always)]
    fn new_ready(&self, j: usize) -> bool {
        (j as u64 & self.old.mask()) < self.ready as u64
    }

    /// The chain heads that may hold `hash`: the `old` one when its bucket is
    /// not moved yet, the `new` one when it is initialised (both only after
    /// an interrupted move).
    #[inline(always)]
    fn heads(&self, hash: u64) -> [Option<*mut Bucket>; 2] {
        let i = (hash & self.old.mask()) as usize;
        if !self.is_rehashing() {
            return [Some(self.old.at(i)), None];
        }
        let a = (i >= self.moved).then(|| self.old.at(i));
        let b = (i < self.ready).then(|| self.new.at((hash & self.new.mask()) as usize));
        [a, b]
    }

    /// Finds the first item of `hash`'s chains with a matching fingerprint
    /// for which `eq` holds.
    #[inline]
    fn locate(&self, hash: u64, mut eq: impl FnMut(&Item<T, B>) -> bool) -> Option<Loc> {
        if self.len == 0 {
            return None;
        }
        let fp = fingerprint(hash);
        if !self.is_rehashing() {
            // SAFETY: with one array every bucket is initialised.
            return unsafe { find_in_chain(self.old.at((hash & self.old.mask()) as usize), fp, &mut eq) };
        }
        for head in self.heads(hash).into_iter().flatten() {
            // SAFETY: `heads` returns only initialised heads of live arrays.
            if let Some(loc) = unsafe { find_in_chain(head, fp, &mut eq) } {
                return Some(loc);
            }
        }
        None
    }

    /// The item at `loc`.
    ///
    /// # Safety
    /// `loc` must come from `locate` with no mutation since.
    #[inline(always)]
    unsafe fn item_at(&self, loc: Loc) -> *mut Item<T, B> {
        // SAFETY: per the contract the slot holds a live item.
        unsafe { item::from_thin::<T, B>((*loc.b).slots[loc.s]) }
    }

    /// Looks `key` up.
    #[inline]
    pub fn get(&self, key: &[u8], hash: u64) -> Option<&Item<T, B>> {
        self.find_by(hash, |e| e.key() == key)
    }

    /// Looks `key` up for writing.
    #[inline]
    pub fn get_mut(&mut self, key: &[u8], hash: u64) -> Option<&mut Item<T, B>> {
        self.find_by_mut(hash, |e| e.key() == key)
    }

    /// The first item in `hash`'s bucket with `hash`'s fingerprint for which
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

    /// Items whose bucket and fingerprint match `hash` (a superset of the
    /// items with this hash).
    pub fn iter_hash(&self, hash: u64) -> impl Iterator<Item = &Item<T, B>> + '_ {
        let fp = fingerprint(hash);
        let heads = if self.len == 0 { [None, None] } else { self.heads(hash) };
        heads.into_iter().flatten().flat_map(move |h| ChainIter::<T, B>::new(h, Some(fp)))
    }

    /// All items, in bucket order.
    pub fn iter(&self) -> Iter<'_, T, B> {
        Iter { table_ptr: self.heads_list(), pos: 0, chain: None, left: self.len, _t: PhantomData }
    }

    /// Initialised chain heads of both arrays.
    fn heads_list(&self) -> HeadsList {
        HeadsList {
            old: (self.old.ptr, self.old.nb),
            new: (self.new.ptr, self.new.nb),
            old_mask: self.old.mask(),
            ready: self.ready,
        }
    }

    /// One SCAN step from `cursor`: calls `f` on every item of the buckets
    /// the cursor designates and returns the next cursor, 0 when the walk is
    /// done. Redis's reverse-binary cursor: every item present for the whole
    /// walk is visited at least once, across any resizes between calls.
    pub fn scan<'a>(&'a self, cursor: u64, mut f: impl FnMut(&'a Item<T, B>)) -> u64 {
        if self.len == 0 {
            return 0;
        }
        let mut v = cursor;
        let mut visit = |from_new: bool, i: usize| {
            let head = if from_new {
                if !self.new_ready(i) {
                    return;
                }
                self.new.at(i)
            } else {
                self.old.at(i)
            };
            for e in ChainIter::<T, B>::new(head, None) {
                f(e);
            }
        };
        if !self.is_rehashing() {
            let m0 = self.old.mask();
            visit(false, (v & m0) as usize);
            v |= !m0;
            return v.reverse_bits().wrapping_add(1).reverse_bits();
        }
        let small_is_new = self.new.nb < self.old.nb;
        let (m0, m1) =
            if small_is_new { (self.new.mask(), self.old.mask()) } else { (self.old.mask(), self.new.mask()) };
        visit(small_is_new, (v & m0) as usize);
        // The buckets of the larger array that expand the smaller one's.
        loop {
            visit(!small_is_new, (v & m1) as usize);
            v |= !m1;
            v = v.reverse_bits().wrapping_add(1).reverse_bits();
            if v & (m0 ^ m1) == 0 {
                break;
            }
        }
        v
    }

    /// A random item: a random non-empty bucket (both arrays while
    /// resizing), then a random item of its chain. `rng` returns uniform u64s.
    pub fn random(&self, rng: &mut impl FnMut() -> u64) -> Option<&Item<T, B>> {
        if self.len == 0 {
            return None;
        }
        let total = (self.old.nb + self.new.nb) as u64;
        let head_of = |k: u64| -> Option<*mut Bucket> {
            let k = k as usize;
            if k < self.old.nb {
                (!self.is_rehashing() || k >= self.moved).then(|| self.old.at(k))
            } else {
                let j = k - self.old.nb;
                self.new_ready(j).then(|| self.new.at(j))
            }
        };
        let pick = |head: *mut Bucket, r: u64| -> Option<&Item<T, B>> {
            // SAFETY: `head_of` returns initialised heads only.
            let n = unsafe { bucket::count(head) };
            if n == 0 {
                return None;
            }
            ChainIter::<T, B>::new(head, None).nth((r % n as u64) as usize)
        };
        for _ in 0..32 {
            if let Some(h) = head_of(rng() % total) {
                if let Some(e) = pick(h, rng()) {
                    return Some(e);
                }
            }
        }
        // Sparse table: walk from a random bucket to the next non-empty one.
        let start = rng() % total;
        for d in 0..total {
            if let Some(h) = head_of((start + d) % total) {
                if let Some(e) = pick(h, rng()) {
                    return Some(e);
                }
            }
        }
        None
    }

    /// Stage 1 of a batched access: prefetches the bucket line(s) `hash` may
    /// live in. Reads no table memory.
    #[inline]
    pub fn prefetch_bucket(&self, hash: u64) {
        if self.old.nb == 0 {
            return;
        }
        for h in self.heads(hash).into_iter().flatten() {
            prefetch(h as *const u8);
        }
    }

    /// The insert side of stage 1: prefetches the bucket an insert of `hash`
    /// writes to.
    #[inline]
    pub fn prefetch_for_insert(&self, hash: u64) {
        self.prefetch_bucket(hash)
    }

    /// Stage 2 of a batched access: reads `hash`'s bucket (prefetched by
    /// stage 1) and prefetches the first item whose fingerprint matches, or
    /// the next bucket of the chain when none does. `key`'s length tells how
    /// many lines the item's key spans.
    #[inline]
    pub fn prefetch_item(&self, key: &[u8], hash: u64) {
        self.prefetch_item_span(key, hash, 0)
    }

    /// [`Table::prefetch_item`] that also asks for the item's lines up to
    /// `span` bytes from its start (at most four lines in all): for readers
    /// of a value kept in the item, whose length the item only tells once
    /// it has arrived.
    #[inline]
    pub fn prefetch_item_span(&self, key: &[u8], hash: u64, span: usize) {
        if self.len == 0 {
            return;
        }
        let fp = fingerprint(hash);
        for head in self.heads(hash).into_iter().flatten() {
            // SAFETY: `heads` returns initialised heads; slots with a hit are
            // live items (their address is only prefetched).
            unsafe {
                let hits = match_fp((*head).meta, fp);
                if hits != 0 {
                    let p = (*head).slots[first_slot(hits)] as *const u8;
                    prefetch(p);
                    // The key's last byte (and the 8 bytes after it: deadline
                    // or inline value), always: a branch on whether it crosses
                    // a line would mispredict half the time.
                    prefetch(p.wrapping_add(8 + std::mem::size_of::<T>() + key.len() + 8));
                    let mut off = 64;
                    while off < span.min(256) {
                        prefetch(p.wrapping_add(off));
                        off += 64;
                    }
                    return;
                }
                if let Some(c) = bucket::next(head) {
                    prefetch(c as *const u8);
                }
            }
        }
    }

    /// Looks up many keys, pushing one result per key onto `out` in order:
    /// exactly what calling [`Table::get`] on each would give. Keys advance
    /// in groups of [`BATCH`], stage by stage (bucket prefetch, item
    /// prefetch, compare), so their cache misses overlap; with more than one
    /// group the stages are staggered (buckets two groups ahead, items one)
    /// so that a whole group's work runs between a prefetch and its use.
    pub fn get_batch<'a>(&'a self, keys: &[(&[u8], u64)], out: &mut Vec<Option<&'a Item<T, B>>>) {
        out.reserve(keys.len());
        if keys.len() == 1 {
            out.push(self.get(keys[0].0, keys[0].1));
            return;
        }
        let stage1 = |g: &[(&[u8], u64)]| g.iter().for_each(|&(_, h)| self.prefetch_bucket(h));
        let stage2 = |g: &[(&[u8], u64)]| g.iter().for_each(|&(k, h)| self.prefetch_item(k, h));
        let groups = keys.len().div_ceil(BATCH);
        let at = |g: usize| if g < groups { &keys[g * BATCH..keys.len().min((g + 1) * BATCH)] } else { &[][..] };
        stage1(at(0));
        stage1(at(1));
        stage2(at(0));
        for g in 0..groups {
            stage1(at(g + 2));
            stage2(at(g + 1));
            for &(k, h) in at(g) {
                out.push(self.get(k, h));
            }
        }
    }
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
        let size = item.alloc_size();
        // SAFETY: `loc` is fresh and `&mut self` makes the access exclusive;
        // the slot takes the new item's pointer before the old Box exists
        // outside the table, and nothing between can panic. The fingerprint
        // stays right: both items are stored under `hash`.
        unsafe {
            let old = Box::from_raw(self.item_at(loc));
            (*loc.b).slots[loc.s] = Box::into_raw(item) as *mut u8;
            self.item_bytes = self.item_bytes - old.alloc_size() + size;
            Some(old)
        }
    }

    /// Resize work due before an insert; may panic in the hasher, before
    /// anything of the insert happened.
    fn before_insert(&mut self) {
        self.rehash_step(STEP);
        if self.old.nb == 0 {
            self.old = Array::alloc(1, true);
        } else if !self.is_rehashing() && self.len >= self.old.nb * GROW_FILL {
            self.start_resize();
        }
    }

    fn place(&mut self, hash: u64, item: Box<Item<T, B>>) -> &mut Item<T, B> {
        debug_assert!(self.get(item.key(), hash).is_none(), "insert of a present key");
        let size = item.alloc_size();
        let p = Box::into_raw(item);
        let i = (hash & self.old.mask()) as usize;
        let head = if self.is_rehashing() && i < self.moved {
            self.new.at((hash & self.new.mask()) as usize)
        } else {
            self.old.at(i)
        };
        // SAFETY: `head` is an initialised head (an unmoved `old` bucket or a
        // `new` bucket fed by a moved one); `p` is a live item we now own.
        unsafe {
            if bucket::insert(head, fingerprint(hash), p as *mut u8) {
                self.children += 1;
            }
        }
        self.len += 1;
        self.item_bytes += size;
        // SAFETY: the table owns the item; `&mut self` makes this exclusive.
        unsafe { &mut *p }
    }

    /// Removes `key` and hands its item back.
    pub fn remove(&mut self, key: &[u8], hash: u64) -> Option<Box<Item<T, B>>> {
        self.remove_by(hash, |e| e.key() == key)
    }

    /// Removes the first item [`Table::find_by`] would return.
    pub fn remove_by(&mut self, hash: u64, pred: impl FnMut(&Item<T, B>) -> bool) -> Option<Box<Item<T, B>>> {
        self.rehash_step(STEP);
        let loc = self.locate(hash, pred)?;
        let it = self.take(loc);
        self.maybe_shrink();
        Some(it)
    }

    /// Unlinks the item at `loc` and restores its chain's shape.
    fn take(&mut self, loc: Loc) -> Box<Item<T, B>> {
        // SAFETY: `loc` is fresh; the slot is cleared before the Box exists
        // outside the table, and `compact` keeps the chain valid.
        unsafe {
            let p = self.item_at(loc);
            (*loc.b).meta[0] &= !(1u8 << loc.s);
            (*loc.b).slots[loc.s] = ptr::null_mut();
            self.children -= bucket::compact(loc.head);
            let it = Box::from_raw(p);
            self.len -= 1;
            self.item_bytes -= it.alloc_size();
            it
        }
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
        let loc = self.locate(hash, |e| e.key() == key)?;
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
        // SAFETY: the slot's item is turned into a Box, reallocated, and its
        // new address written back to the same slot before anything else
        // touches the table; `with_expire` does not panic past the check above
        // (allocation failure aborts).
        unsafe {
            let b = Box::from_raw(self.item_at(loc)).with_expire(expire);
            self.item_bytes = self.item_bytes - before + b.alloc_size();
            (*loc.b).slots[loc.s] = Box::into_raw(b) as *mut u8;
        }
        Some(previous)
    }

    /// Keeps only the items for which `keep` returns true. If `keep` or a
    /// value's `Drop` panics, the items already dropped are gone and the
    /// rest stay, with the table consistent.
    pub fn retain(&mut self, keep: impl FnMut(&mut Item<T, B>) -> bool) {
        self.remove_items(keep);
        self.maybe_shrink();
    }

    fn maybe_shrink(&mut self) {
        if !self.is_rehashing() && self.old.nb > 1 && self.len * SHRINK_FILL_DEN < self.old.nb * SHRINK_FILL_NUM {
            self.start_resize();
        }
    }

    fn start_resize(&mut self) {
        let nb = self.len.div_ceil(TARGET_FILL).max(1).next_power_of_two();
        if nb == self.old.nb {
            return;
        }
        self.new = Array::alloc(nb, false);
        self.moved = 0;
        self.ready = 0;
    }

    /// Moves up to `budget` non-empty buckets (passing over at most
    /// 16 × `budget` empty ones) of a resize under way, and gives back a slice
    /// of the previous resize's old array. Returns true while either has work
    /// left.
    pub fn rehash_step(&mut self, budget: usize) -> bool {
        let retiring = self.retiring.step(false);
        if !self.is_rehashing() {
            return retiring;
        }
        let mut work = 0;
        let mut empty = 0;
        while self.moved < self.old.nb && work < budget && empty < budget * EMPTY_VISITS {
            let i = self.moved;
            self.prepare_new(i);
            let head = self.old.at(i);
            // SAFETY: `i >= moved`, so `old[i]` is initialised.
            if unsafe { bucket::is_empty(&*head) } {
                empty += 1;
            } else {
                self.move_chain(i, head);
                work += 1;
            }
            self.moved = i + 1;
        }
        if self.moved == self.old.nb {
            let old = std::mem::replace(&mut self.old, std::mem::replace(&mut self.new, Array::NONE));
            self.moved = 0;
            self.ready = 0;
            self.retiring.step(true);
            if old.nb * 64 >= RETIRE_MIN {
                self.retiring = Retiring::new(old);
                return true;
            }
            let mut old = old;
            old.free();
            return false;
        }
        true
    }

    /// Zeroes the buckets of `new` that `old[i]` is the first to feed.
    fn prepare_new(&mut self, i: usize) {
        if self.ready > i {
            return;
        }
        let (nb_old, nb_new) = (self.old.nb, self.new.nb);
        // SAFETY: the indexes are within `new`, and these buckets were never
        // handed out (their feeding `old` bucket is not moved yet).
        unsafe {
            if nb_new > nb_old {
                let mut j = i;
                while j < nb_new {
                    self.new.at(j).write(Bucket::EMPTY);
                    j += nb_old;
                }
            } else if i < nb_new {
                self.new.at(i).write(Bucket::EMPTY);
            }
        }
        self.ready = i + 1;
    }

    /// Moves every item of the chain at `head` (an `old` bucket) into `new`,
    /// one at a time: a panic in the hasher leaves each item in exactly one
    /// of the arrays.
    fn move_chain(&mut self, i: usize, head: *mut Bucket) {
        let mut b = head;
        // Only the `new` buckets that `old[i]` feeds are initialised. The
        // target keeps the low bits of `i`, whatever the hasher says: a
        // caller whose hashes disagree with it (a bug, but a safe one) gets
        // lookup misses, never a write into an uninitialised bucket.
        let (old_mask, new_mask) = (self.old.mask(), self.new.mask());
        let family = |h: u64| -> usize {
            if new_mask > old_mask {
                ((h & new_mask & !old_mask) | i as u64) as usize
            } else {
                (i as u64 & new_mask) as usize
            }
        };
        // SAFETY: `head` is initialised, its chain live; an item is inserted
        // into `new` (whose target head is ready: `family` only picks buckets
        // fed by `old[i]`, prepared before this call) before it leaves its
        // old slot.
        unsafe {
            loop {
                let mut pres = bucket::present(&*b);
                while pres != 0 {
                    let s = pres.trailing_zeros() as usize;
                    pres &= pres - 1;
                    let thin = (*b).slots[s];
                    let h = self.hasher.hash_one((*item::from_thin::<T, B>(thin)).key());
                    let target = self.new.at(family(h));
                    if bucket::insert(target, fingerprint(h), thin) {
                        self.children += 1;
                    }
                    (*b).meta[0] &= !(1u8 << s);
                    (*b).slots[s] = ptr::null_mut();
                }
                match bucket::next(b) {
                    Some(c) => b = c,
                    None => break,
                }
            }
            self.children -= bucket::free_chain(head);
        }
    }
}

/// The first item of the chain at `head` with fingerprint `fp` for which
/// `eq` holds.
///
/// # Safety
/// `head` must be an initialised chain head of a live table.
#[inline(always)]
unsafe fn find_in_chain<T, B>(head: *mut Bucket, fp: u8, eq: &mut impl FnMut(&Item<T, B>) -> bool) -> Option<Loc> {
    let mut b = head;
    // SAFETY: chains link live children; present slots hold live items.
    unsafe {
        loop {
            let mut hits = match_fp((*b).meta, fp);
            while hits != 0 {
                let s = first_slot(hits);
                hits &= hits - 1;
                if eq(&*item::from_thin::<T, B>((*b).slots[s])) {
                    return Some(Loc { head, b, s });
                }
            }
            match bucket::next(b) {
                Some(c) => b = c,
                None => return None,
            }
        }
    }
}

/// Compacts a chain even if dropping a removed value panics.
struct CompactOnDrop<'a> {
    head: *mut Bucket,
    children: &'a mut usize,
}

impl Drop for CompactOnDrop<'_> {
    fn drop(&mut self) {
        // SAFETY: `head` heads a live chain of the table that holds the
        // `&mut` borrow of `children`.
        *self.children -= unsafe { bucket::compact(self.head) };
    }
}

impl<T, B, S> Table<T, S, B> {
    /// Drops the items for which `keep` returns false, compacting each chain
    /// afterwards (or on unwind), without resizing.
    fn remove_items(&mut self, mut keep: impl FnMut(&mut Item<T, B>) -> bool) {
        let heads = self.heads_list();
        for h in 0..heads.count() {
            let Some(head) = heads.get(h) else { continue };
            let mut b = head;
            // Compaction waits for the end of the chain (it moves items and
            // frees children under the walk), or runs on unwind.
            let guard = CompactOnDrop { head, children: &mut self.children };
            // SAFETY: initialised heads and live children; each removed item
            // leaves its slot before it is dropped (holes are allowed until
            // the guard compacts the chain).
            unsafe {
                loop {
                    let mut pres = bucket::present(&*b);
                    while pres != 0 {
                        let s = pres.trailing_zeros() as usize;
                        pres &= pres - 1;
                        let p = item::from_thin::<T, B>((*b).slots[s]);
                        if !keep(&mut *p) {
                            (*b).meta[0] &= !(1u8 << s);
                            (*b).slots[s] = ptr::null_mut();
                            self.len -= 1;
                            self.item_bytes -= (*p).alloc_size();
                            drop(Box::from_raw(p));
                        }
                    }
                    match bucket::next(b) {
                        Some(c) => b = c,
                        None => break,
                    }
                }
            }
            drop(guard);
        }
    }

    /// Removes and drops every item and frees all memory.
    pub fn clear(&mut self) {
        self.remove_items(|_| false);
        self.old.free();
        self.new.free();
        self.retiring.step(true);
        self.moved = 0;
        self.ready = 0;
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

/// The initialised chain heads of a table: `old` from `moved` (earlier ones
/// are empty, reading them is fine) and the ready buckets of `new`.
#[derive(Clone, Copy)]
struct HeadsList {
    old: (*mut Bucket, usize),
    new: (*mut Bucket, usize),
    old_mask: u64,
    ready: usize,
}

impl HeadsList {
    fn count(&self) -> usize {
        self.old.1 + self.new.1
    }

    fn get(&self, k: usize) -> Option<*mut Bucket> {
        if k < self.old.1 {
            return Some(self.old.0.wrapping_add(k));
        }
        let j = k - self.old.1;
        ((j as u64 & self.old_mask) < self.ready as u64).then(|| self.new.0.wrapping_add(j))
    }
}

/// Items of one chain, optionally only those with a fingerprint.
struct ChainIter<'a, T, B> {
    b: *mut Bucket,
    pending: u64,
    fp: Option<u8>,
    _t: PhantomData<&'a Item<T, B>>,
}

impl<T, B> ChainIter<'_, T, B> {
    fn new(head: *mut Bucket, fp: Option<u8>) -> Self {
        let mut it = ChainIter { b: head, pending: 0, fp, _t: PhantomData };
        it.load();
        it
    }

    /// Loads the hit mask of the current bucket (bit 8*s+7 per item slot).
    fn load(&mut self) {
        // SAFETY: `b` is an initialised head or a live child.
        let meta = unsafe { (*self.b).meta };
        self.pending = match self.fp {
            Some(fp) => match_fp(meta, fp),
            None => match_fp_any(meta),
        };
    }
}

/// Bit 8*s+7 for every present slot s.
fn match_fp_any(meta: [u8; 8]) -> u64 {
    let present = (meta[0] & 0x7f) as u64;
    present.wrapping_mul(0x0002_0408_1020_4080) & 0x0080_8080_8080_8080
}

impl<'a, T, B> Iterator for ChainIter<'a, T, B> {
    type Item = &'a Item<T, B>;

    fn next(&mut self) -> Option<&'a Item<T, B>> {
        loop {
            if self.pending != 0 {
                let s = first_slot(self.pending);
                self.pending &= self.pending - 1;
                // SAFETY: present slots hold live items, borrowed for 'a (the
                // table is borrowed for 'a by whoever made this iterator).
                return Some(unsafe { &*item::from_thin::<T, B>((*self.b).slots[s]) });
            }
            // SAFETY: as in `load`.
            match unsafe { bucket::next(self.b) } {
                Some(c) => {
                    self.b = c;
                    self.load();
                }
                None => return None,
            }
        }
    }
}

/// Iterator over all items of a [`Table`], from [`Table::iter`].
pub struct Iter<'a, T, B = ()> {
    table_ptr: HeadsList,
    pos: usize,
    chain: Option<ChainIter<'a, T, B>>,
    left: usize,
    _t: PhantomData<&'a Item<T, B>>,
}

impl<'a, T, B> Iterator for Iter<'a, T, B> {
    type Item = &'a Item<T, B>;

    fn next(&mut self) -> Option<&'a Item<T, B>> {
        if self.left == 0 {
            return None;
        }
        loop {
            if let Some(c) = &mut self.chain {
                if let Some(e) = c.next() {
                    self.left -= 1;
                    return Some(e);
                }
            }
            if self.pos >= self.table_ptr.count() {
                return None;
            }
            let k = self.pos;
            self.pos += 1;
            if let Some(h) = self.table_ptr.get(k) {
                self.chain = Some(ChainIter::new(h, None));
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

// SAFETY: the iterator only hands out `&Item<T, B>` borrowed from the table.
unsafe impl<T: Sync, B: Sync> Send for Iter<'_, T, B> {}

#[cfg(test)]
mod tests;
