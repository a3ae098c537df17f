//! One allocation per key: a small header, the caller's value `T`, then the
//! key bytes, the expire deadline (only when one is set) and either extra
//! bytes (a small value stored in place) or one owned pointer to a boxed `B`
//! (a value that lives apart: large, growable or structured).
//!
//! ```text
//!  offset 0        4          8                      (8 + size_of T, padded)
//!  +---------------+----------+----------------------+---------------------------------+
//!  | tail_len: u32 | key_len: u32 (bit 31 HAS_EXPIRE, 30 HAS_BOX) | value: T | key | [deadline LE 8] | extra or *mut B |
//!  +---------------+----------+----------------------+---------------------------------+
//!                                                     `------------- tail: [u8] -------------'
//! ```
//!
//! An item may also end with a mark word (8 bytes after the extra bytes or
//! the box; flag bit 29 HAS_MARK): bits the table's owner sets on a read
//! and takes on a write (the keyspace keeps there which tracking clients
//! read the key). [`crate::Table::mark`] adds it, reallocating once; the
//! table counts the items whose mark is not 0.
//!
//! `Item<T>` is a dynamically sized type (its last field is `[u8]`), so
//! `&Item<T>` and `Box<Item<T>>` are ordinary fat pointers whose metadata is
//! the tail length. The table stores thin pointers and rebuilds the fat
//! pointer from `tail_len`, which is why the header repeats it.

use std::alloc::{self, Layout};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::size_class;

/// Whether a freed item's block is asked for whole ([`prefetch_freed`]).
static PREFETCH_FREED: AtomicBool = AtomicBool::new(true);

/// Turns on or off, for the whole process, asking for the lines of each
/// freed item's block past its first (`prefetch-freed-items`; on by
/// default). The allocator hands a freed block to the next allocation of
/// its size (its per-thread cache is last in, first out), which writes all
/// of it: a SET's new item goes into the block of the item the SET before
/// it replaced. Lines that item never had read would miss then, and a
/// store that misses holds up the next locked instruction (the release of
/// the shard's lock) until its line arrives.
pub fn prefetch_freed(on: bool) {
    PREFETCH_FREED.store(on, Ordering::Relaxed);
}

const HAS_EXPIRE: u32 = 1 << 31;
const HAS_BOX: u32 = 1 << 30;
const HAS_MARK: u32 = 1 << 29;
const KEY_LEN_MASK: u32 = HAS_MARK - 1;
const MARK_LEN: usize = 8;
const EXPIRE_LEN: usize = 8;
const BOX_LEN: usize = std::mem::size_of::<usize>();

/// The largest key an item can hold (512 MiB - 1): bits 31, 30 and 29 of
/// the length word are the HAS_EXPIRE, HAS_BOX and HAS_MARK flags.
pub const MAX_KEY_LEN: usize = KEY_LEN_MASK as usize;

#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Header {
    tail_len: u32,
    key_len: u32,
}

/// A stored key with its value: see the module docs for the layout.
///
/// `B` is the type of the optional out-of-line part; an item either holds
/// extra bytes or owns one `Box<B>` (never both), and dropping the item
/// drops the box.
#[repr(C)]
pub struct Item<T, B = ()> {
    hdr: Header,
    value: T,
    /// The box, when there is one, is a pointer inside `tail` (see `Drop`).
    _boxed: PhantomData<Box<B>>,
    tail: [u8],
}

/// The layout of an item whose tail is `tail_len` bytes: exactly what the
/// compiler computes for `Item<T, B>` (repr(C)), so `Box` frees it correctly.
fn layout_for<T>(tail_len: usize) -> Layout {
    let (l, _) = Layout::new::<Header>().extend(Layout::new::<T>()).expect("item layout");
    let (l, _) = l.extend(Layout::array::<u8>(tail_len).expect("item layout")).expect("item layout");
    l.pad_to_align()
}

/// What follows the key and deadline: extra bytes given in pieces, or a box.
enum Rest<'a, B> {
    Bytes(&'a [&'a [u8]]),
    Boxed(Box<B>),
}

impl<T, B> Item<T, B> {
    /// The longest tail an item could have in the allocator size class of
    /// an item whose tail is `tail_len` bytes: what a caller that keeps
    /// growable bytes in the item may take as room at no extra cost.
    pub fn tail_room(tail_len: usize) -> usize {
        size_class(layout_for::<T>(tail_len).size()) - layout_for::<T>(0).size()
    }

    /// Builds an item in one allocation. `expire` is an opaque deadline kept
    /// in 8 extra bytes only when set; `extra` bytes follow it.
    ///
    /// # Panics
    /// If the key is longer than [`MAX_KEY_LEN`] or the tail exceeds 4 GiB.
    pub fn new_boxed(key: &[u8], value: T, expire: Option<u64>, extra: &[u8]) -> Box<Self> {
        Self::build(key, value, expire, Rest::Bytes(&[extra]))
    }

    /// [`Item::new_boxed`] with the extra bytes given as pieces, written one
    /// after another (a header and data without first joining them).
    ///
    /// # Panics
    /// As [`Item::new_boxed`].
    pub fn new_from_parts(key: &[u8], value: T, expire: Option<u64>, extra: &[&[u8]]) -> Box<Self> {
        Self::build(key, value, expire, Rest::Bytes(extra))
    }

    /// Builds an item that owns `boxed` instead of holding extra bytes.
    ///
    /// # Panics
    /// If the key is longer than [`MAX_KEY_LEN`].
    pub fn new_with_box(key: &[u8], value: T, expire: Option<u64>, boxed: Box<B>) -> Box<Self> {
        Self::build(key, value, expire, Rest::Boxed(boxed))
    }

    fn build(key: &[u8], value: T, expire: Option<u64>, rest: Rest<'_, B>) -> Box<Self> {
        assert!(key.len() <= MAX_KEY_LEN, "key too long for an item");
        let exp_len = if expire.is_some() { EXPIRE_LEN } else { 0 };
        let rest_len = match &rest {
            Rest::Bytes(parts) => parts.iter().map(|p| p.len()).sum(),
            Rest::Boxed(_) => BOX_LEN,
        };
        let tail_len = key.len() + exp_len + rest_len;
        let tail_len32 = u32::try_from(tail_len).expect("item tail over 4 GiB");
        let layout = layout_for::<T>(tail_len);
        // SAFETY: the layout has a non-zero size (the header alone is 8 bytes).
        let raw = unsafe { alloc::alloc(layout) };
        let Some(thin) = NonNull::new(raw) else { alloc::handle_alloc_error(layout) };
        let p = fat::<T, B>(thin.as_ptr(), tail_len);
        let mut flags = if expire.is_some() { HAS_EXPIRE } else { 0 };
        if matches!(rest, Rest::Boxed(_)) {
            flags |= HAS_BOX;
        }
        // Why this holds: `p` points to a fresh allocation of `layout`, which is the
        // layout of `Item<T, B>` with this tail length; every field is written
        // through raw pointers before the first reference is made, and the
        // source slices cannot overlap a fresh allocation. Nothing below can
        // panic, so the box cannot leak half-owned.
        // SAFETY: fresh allocation of this layout, fully written before any reference.
        unsafe {
            ptr::addr_of_mut!((*p).hdr).write(Header { tail_len: tail_len32, key_len: key.len() as u32 | flags });
            ptr::addr_of_mut!((*p).value).write(value);
            let tail = ptr::addr_of_mut!((*p).tail) as *mut u8;
            ptr::copy_nonoverlapping(key.as_ptr(), tail, key.len());
            if let Some(d) = expire {
                ptr::copy_nonoverlapping(d.to_le_bytes().as_ptr(), tail.add(key.len()), EXPIRE_LEN);
            }
            let mut at = tail.add(key.len() + exp_len);
            match rest {
                Rest::Bytes(parts) => {
                    for p in parts {
                        ptr::copy_nonoverlapping(p.as_ptr(), at, p.len());
                        at = at.add(p.len());
                    }
                }
                // Written as a pointer (unaligned), so it keeps its provenance.
                Rest::Boxed(b) => (at as *mut *mut B).write_unaligned(Box::into_raw(b)),
            }
            let b = Box::from_raw(p);
            debug_assert_eq!(Layout::for_value(&*b), layout);
            b
        }
    }

    /// The key.
    #[inline]
    pub fn key(&self) -> &[u8] {
        &self.tail[..self.key_len()]
    }

    #[inline]
    fn key_len(&self) -> usize {
        (self.hdr.key_len & KEY_LEN_MASK) as usize
    }

    #[inline]
    fn expire_len(&self) -> usize {
        if self.hdr.key_len & HAS_EXPIRE != 0 {
            EXPIRE_LEN
        } else {
            0
        }
    }

    #[inline]
    fn has_box(&self) -> bool {
        self.hdr.key_len & HAS_BOX != 0
    }

    #[inline]
    fn mark_len(&self) -> usize {
        if self.has_mark() {
            MARK_LEN
        } else {
            0
        }
    }

    /// Where the extra bytes or the box end (the mark word, if any, follows).
    #[inline]
    fn rest_end(&self) -> usize {
        self.tail.len() - self.mark_len()
    }

    /// The mark word: 0 when the item has none.
    #[inline]
    pub fn mark(&self) -> u64 {
        if !self.has_mark() {
            return 0;
        }
        let at = self.rest_end();
        let mut b = [0u8; MARK_LEN];
        b.copy_from_slice(&self.tail[at..]);
        u64::from_le_bytes(b)
    }

    /// Whether the item has room for a mark word.
    #[inline]
    pub fn has_mark(&self) -> bool {
        self.hdr.key_len & HAS_MARK != 0
    }

    /// Sets `bits` in the mark word in place; false (nothing done) if the
    /// item has none.
    #[inline]
    pub(crate) fn or_mark(&mut self, bits: u64) -> bool {
        if !self.has_mark() {
            return false;
        }
        let m = self.mark() | bits;
        let at = self.rest_end();
        self.tail[at..].copy_from_slice(&m.to_le_bytes());
        true
    }

    /// Takes the mark word, leaving 0 (its room stays).
    #[inline]
    pub(crate) fn take_mark(&mut self) -> u64 {
        let m = self.mark();
        if m != 0 {
            let at = self.rest_end();
            self.tail[at..].copy_from_slice(&[0; MARK_LEN]);
        }
        m
    }

    /// Takes the mark word of an item out of any table (one the table
    /// handed back), leaving 0. In a table, see [`crate::Table::take_mark`].
    pub fn take_mark_of(item: &mut Box<Self>) -> u64 {
        item.take_mark()
    }

    /// The expire deadline, if one is set (opaque to the table).
    #[inline]
    pub fn expire(&self) -> Option<u64> {
        if self.hdr.key_len & HAS_EXPIRE == 0 {
            return None;
        }
        let k = self.key_len();
        let mut b = [0u8; EXPIRE_LEN];
        b.copy_from_slice(&self.tail[k..k + EXPIRE_LEN]);
        Some(u64::from_le_bytes(b))
    }

    /// Rewrites an existing deadline in place; false if the item has none
    /// (adding one needs a bigger allocation: [`crate::Table::set_expire`]).
    #[inline]
    pub fn replace_expire(&mut self, deadline: u64) -> bool {
        if self.hdr.key_len & HAS_EXPIRE == 0 {
            return false;
        }
        let k = self.key_len();
        self.tail[k..k + EXPIRE_LEN].copy_from_slice(&deadline.to_le_bytes());
        true
    }

    /// The extra bytes given at creation (empty for an item with a box).
    #[inline]
    pub fn extra(&self) -> &[u8] {
        if self.has_box() {
            return &[];
        }
        let (start, end) = (self.key_len() + self.expire_len(), self.rest_end());
        &self.tail[start..end]
    }

    /// The extra bytes, writable (their length is fixed at creation; empty
    /// for an item with a box).
    #[inline]
    pub fn extra_mut(&mut self) -> &mut [u8] {
        if self.has_box() {
            return &mut [];
        }
        let (start, end) = (self.key_len() + self.expire_len(), self.rest_end());
        &mut self.tail[start..end]
    }

    /// The pointer to the box, if the item owns one.
    #[inline]
    fn box_ptr(&self) -> Option<*mut B> {
        if !self.has_box() {
            return None;
        }
        let at = self.key_len() + self.expire_len();
        debug_assert_eq!(self.rest_end(), at + BOX_LEN);
        // SAFETY: an item with HAS_BOX has exactly BOX_LEN bytes after its
        // deadline (then only the mark word, if any) that `build` wrote as a
        // `*mut B` (moves keep the bytes); read unaligned.
        Some(unsafe { (self.tail.as_ptr().add(at) as *const *mut B).read_unaligned() })
    }

    /// The boxed part, if the item owns one.
    #[inline]
    pub fn boxed(&self) -> Option<&B> {
        // SAFETY: the pointer came from `Box::into_raw` and the item owns the
        // box; the reference borrows `self`.
        self.box_ptr().map(|p| unsafe { &*p })
    }

    /// The boxed part, writable, if the item owns one.
    #[inline]
    pub fn boxed_mut(&mut self) -> Option<&mut B> {
        // SAFETY: as in `boxed`; `&mut self` makes the access exclusive.
        self.box_ptr().map(|p| unsafe { &mut *p })
    }

    /// Bytes the allocator really hands out for this item (jemalloc's size
    /// class of its layout), not counting the box.
    #[inline]
    pub fn alloc_size(&self) -> usize {
        size_class(std::mem::size_of_val(self))
    }

    /// Asks for the lines of the item's block past its first (at most
    /// [`crate::PREFETCH_HEAD`] bytes of them) as it is freed (see
    /// [`prefetch_freed`]).
    #[inline(always)]
    fn prefetch_block(&self) {
        if PREFETCH_FREED.load(Ordering::Relaxed) {
            let p = self as *const Self as *const u8;
            crate::prefetch_head(p.wrapping_add(64), std::mem::size_of_val(self).saturating_sub(64));
        }
    }

    /// Takes the value and the box out and frees the item.
    pub fn into_parts(self: Box<Self>) -> (T, Option<Box<B>>) {
        self.prefetch_block();
        let layout = Layout::for_value(&*self);
        let boxed = self.box_ptr();
        let p = Box::into_raw(self);
        // Why this holds: `p` came from a live Box, so `value` is initialised; it is
        // read exactly once and the memory is then freed without running
        // `Drop`, with the layout the Box was allocated with. The box pointer
        // is owned by the item and handed on exactly once.
        // SAFETY: a live Box's value, read once, its memory freed with the Box's own layout.
        unsafe {
            let v = ptr::addr_of!((*p).value).read();
            alloc::dealloc(p as *mut u8, layout);
            (v, boxed.map(|b| Box::from_raw(b)))
        }
    }

    /// Takes the value out and frees the item (and its box).
    pub fn into_value(self: Box<Self>) -> T {
        self.into_parts().0
    }

    /// The same item under another key: one new allocation; the value, the
    /// deadline, the extra bytes or the box move over unchanged (not the
    /// mark word).
    pub fn with_key(self: Box<Self>, key: &[u8]) -> Box<Self> {
        let expire = self.expire();
        if self.has_box() {
            let (v, b) = self.into_parts();
            Self::new_with_box(key, v, expire, b.expect("item with a box"))
        } else {
            let extra: Vec<u8> = self.extra().to_vec();
            Self::new_boxed(key, self.into_value(), expire, &extra)
        }
    }

    /// Adds, replaces or removes the deadline, reallocating when the tail
    /// length changes (None→Some grows by 8 bytes, Some→None shrinks back so
    /// the byte accounting stays exact). Returns the possibly moved item.
    pub(crate) fn with_expire(self: Box<Self>, expire: Option<u64>) -> Box<Self> {
        let mut this = self;
        match (this.expire().is_some(), expire) {
            (true, Some(d)) => {
                this.replace_expire(d);
                this
            }
            (false, None) => this,
            (had, _) => {
                let k = this.key_len();
                let old_tail = this.tail.len();
                let rest_len = old_tail - k - this.expire_len();
                let new_tail = if had { old_tail - EXPIRE_LEN } else { old_tail + EXPIRE_LEN };
                let new_tail32 = u32::try_from(new_tail).expect("item tail over 4 GiB");
                let old_layout = Layout::for_value(&*this);
                let new_layout = layout_for::<T>(new_tail);
                if had {
                    // What follows moves down over the deadline before
                    // shrinking (a box pointer is moved as bytes, which keeps
                    // its provenance).
                    this.tail.copy_within(k + EXPIRE_LEN.., k);
                }
                let raw = Box::into_raw(this) as *mut u8;
                // Why this holds: `raw` was allocated with `old_layout` (it came from a
                // Box of this type); the new size is non-zero and keeps the
                // alignment, as `realloc` requires. On failure the old block is
                // still owned by us, but we abort via handle_alloc_error.
                // SAFETY: `raw` came from a Box of `old_layout`; the new size is non-zero with the same alignment.
                let grown = unsafe { alloc::realloc(raw, old_layout, new_layout.size()) };
                let Some(thin) = NonNull::new(grown) else { alloc::handle_alloc_error(new_layout) };
                let p = fat::<T, B>(thin.as_ptr(), new_tail);
                // Why this holds: the block now has `new_layout`'s size and holds the
                // old bytes up to the smaller of both sizes; the header is
                // rewritten to the new tail length before the Box is rebuilt,
                // and the moves stay inside the tail.
                // SAFETY: the header is rewritten to the new size before the Box is rebuilt.
                unsafe {
                    let hdr = ptr::addr_of_mut!((*p).hdr);
                    let flags = (*hdr).key_len & (HAS_BOX | HAS_MARK);
                    let key_len = (*hdr).key_len & KEY_LEN_MASK;
                    let tail = ptr::addr_of_mut!((*p).tail) as *mut u8;
                    match expire {
                        Some(d) => {
                            ptr::copy(tail.add(k), tail.add(k + EXPIRE_LEN), rest_len);
                            ptr::copy_nonoverlapping(d.to_le_bytes().as_ptr(), tail.add(k), EXPIRE_LEN);
                            hdr.write(Header { tail_len: new_tail32, key_len: key_len | flags | HAS_EXPIRE });
                        }
                        None => hdr.write(Header { tail_len: new_tail32, key_len: key_len | flags }),
                    }
                    let b = Box::from_raw(p);
                    debug_assert_eq!(Layout::for_value(&*b), new_layout);
                    b
                }
            }
        }
    }
}

impl<T, B> Item<T, B> {
    /// The item with room for a mark word (0) at its end: one reallocation,
    /// which leaves the item in place when its size class has the room.
    /// Returns the possibly moved item; one that has the room already comes
    /// back as it was.
    pub(crate) fn with_mark(self: Box<Self>) -> Box<Self> {
        if self.has_mark() {
            return self;
        }
        let old_tail = self.tail.len();
        let new_tail = old_tail + MARK_LEN;
        let new_tail32 = u32::try_from(new_tail).expect("item tail over 4 GiB");
        let old_layout = Layout::for_value(&*self);
        let new_layout = layout_for::<T>(new_tail);
        let raw = Box::into_raw(self) as *mut u8;
        // SAFETY: `raw` came from a Box of `old_layout`; the new size is non-zero with the same alignment.
        let grown = unsafe { alloc::realloc(raw, old_layout, new_layout.size()) };
        let Some(thin) = NonNull::new(grown) else { alloc::handle_alloc_error(new_layout) };
        let p = fat::<T, B>(thin.as_ptr(), new_tail);
        // Why this holds: the block now has `new_layout`'s size and keeps the
        // old bytes; the 8 new bytes at the tail's end are written (the mark,
        // 0) and the header rewritten before the Box is rebuilt.
        // SAFETY: the new bytes and the header are written before the Box is rebuilt.
        unsafe {
            let hdr = ptr::addr_of_mut!((*p).hdr);
            let tail = ptr::addr_of_mut!((*p).tail) as *mut u8;
            ptr::copy_nonoverlapping([0u8; MARK_LEN].as_ptr(), tail.add(old_tail), MARK_LEN);
            let key_len = (*hdr).key_len | HAS_MARK;
            hdr.write(Header { tail_len: new_tail32, key_len });
            let b = Box::from_raw(p);
            debug_assert_eq!(Layout::for_value(&*b), new_layout);
            b
        }
    }
}

impl<T, B> Drop for Item<T, B> {
    fn drop(&mut self) {
        self.prefetch_block();
        if let Some(p) = self.box_ptr() {
            // SAFETY: the item owns the box (from `Box::into_raw`); it is
            // dropped once, here, and the item is never used afterwards.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

/// Rebuilds the fat pointer of the item at `thin` with a tail of `tail_len`.
#[inline]
pub(crate) fn fat<T, B>(thin: *mut u8, tail_len: usize) -> *mut Item<T, B> {
    ptr::slice_from_raw_parts_mut(thin, tail_len) as *mut Item<T, B>
}

/// The fat pointer of the live item at `thin`.
///
/// # Safety
/// `thin` must point to a live `Item<T>` (its header is read).
#[inline]
pub(crate) unsafe fn from_thin<T, B>(thin: *mut u8) -> *mut Item<T, B> {
    // SAFETY: the caller guarantees a live item, whose first field is the header.
    let tail_len = unsafe { (*(thin as *const Header)).tail_len } as usize;
    fat::<T, B>(thin, tail_len)
}

impl<T, B> Deref for Item<T, B> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T, B> DerefMut for Item<T, B> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T: fmt::Debug, B: fmt::Debug> fmt::Debug for Item<T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Item")
            .field("key", &String::from_utf8_lossy(self.key()))
            .field("expire", &self.expire())
            .field("value", &self.value)
            .field("extra_len", &self.extra().len())
            .field("boxed", &self.boxed())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    #[test]
    fn fields_round_trip() {
        let it = Item::<_, ()>::new_boxed(b"hello", 7u32, None, b"");
        assert_eq!(it.key(), b"hello");
        assert_eq!(it.expire(), None);
        assert_eq!(it.extra(), b"");
        assert_eq!(**it, 7);
        let it = Item::<_, ()>::new_boxed(b"k", String::from("v"), Some(u64::MAX - 3), b"xyz");
        assert_eq!(it.key(), b"k");
        assert_eq!(it.expire(), Some(u64::MAX - 3));
        assert_eq!(it.extra(), b"xyz");
        assert_eq!(it.len(), 1);
        assert_eq!(it.into_value(), "v");
    }

    #[test]
    fn ttl_costs_nothing_when_absent() {
        let a = Item::<_, ()>::new_boxed(b"0123456789abcdef", 0u64, None, b"");
        let b = Item::<_, ()>::new_boxed(b"0123456789abcdef", 0u64, Some(1), b"");
        assert_eq!(std::mem::size_of_val(&*a), 8 + 8 + 16);
        assert_eq!(std::mem::size_of_val(&*b), 8 + 8 + 24);
        assert_eq!(a.alloc_size(), 32);
        assert_eq!(b.alloc_size(), 48);
    }

    #[test]
    fn extra_bytes_from_parts() {
        let it = Item::<u8, ()>::new_from_parts(b"k", 1, Some(3), &[b"head", b"", b"-data"]);
        assert_eq!((it.key(), it.expire(), it.extra()), (&b"k"[..], Some(3), &b"head-data"[..]));
        let it = Item::<u8, ()>::new_from_parts(b"k", 1, None, &[]);
        assert_eq!(it.extra(), b"");
    }

    #[test]
    fn zero_length_key_and_large_key() {
        let it = Item::<_, ()>::new_boxed(b"", 1u8, Some(5), b"e");
        assert_eq!(it.key(), b"");
        assert_eq!(it.expire(), Some(5));
        assert_eq!(it.extra(), b"e");
        let big = vec![0xabu8; 100_000];
        let it = Item::<_, ()>::new_boxed(&big, 1u8, None, &big[..10]);
        assert_eq!(it.key(), &big[..]);
        assert_eq!(it.extra(), &big[..10]);
    }

    #[test]
    fn mark_word_beside_extra_box_and_deadline() {
        let mut it = Item::<_, ()>::new_boxed(b"key", 9u32, None, b"EXTRA");
        assert_eq!((it.mark(), it.has_mark(), it.or_mark(1)), (0, false, false));
        it = it.with_mark();
        assert!(it.or_mark(0b101));
        assert_eq!((it.key(), it.extra(), it.mark()), (&b"key"[..], &b"EXTRA"[..], 0b101));
        it = it.with_expire(Some(7));
        assert_eq!((it.expire(), it.extra(), it.mark()), (Some(7), &b"EXTRA"[..], 0b101));
        it.extra_mut()[0] = b'e';
        assert_eq!(it.mark(), 0b101);
        it = it.with_expire(None);
        assert_eq!((it.expire(), it.extra(), it.mark()), (None, &b"eXTRA"[..], 0b101));
        assert_eq!(Item::take_mark_of(&mut it), 0b101);
        assert_eq!((it.mark(), it.has_mark()), (0, true));
        // The mark stays with the item, not with its value on a new key.
        it.or_mark(2);
        let it = it.with_key(b"other");
        assert_eq!((it.key(), it.extra(), it.mark()), (&b"other"[..], &b"eXTRA"[..], 0));

        let drops = Rc::new(Cell::new(0));
        struct D(Rc<Cell<u32>>);
        impl Drop for D {
            fn drop(&mut self) {
                self.0.set(self.0.get() + 1);
            }
        }
        let mut it = Item::<u8, D>::new_with_box(b"k", 1, Some(3), Box::new(D(Rc::clone(&drops)))).with_mark();
        it.or_mark(u64::MAX);
        assert!(it.boxed().is_some());
        it = it.with_expire(None);
        assert_eq!((it.expire(), it.mark(), it.extra()), (None, u64::MAX, &b""[..]));
        assert!(it.boxed().is_some());
        drop(it);
        assert_eq!(drops.get(), 1);
    }

    #[test]
    fn expire_add_replace_remove_keeps_extra() {
        let mut it = Item::<_, ()>::new_boxed(b"key", vec![1u8, 2, 3], None, b"EXTRA");
        it.extra_mut()[0] = b'e';
        it = it.with_expire(Some(42));
        assert_eq!((it.key(), it.expire(), it.extra()), (&b"key"[..], Some(42), &b"eXTRA"[..]));
        it = it.with_expire(Some(43));
        assert_eq!(it.expire(), Some(43));
        assert!(it.replace_expire(44));
        assert_eq!(it.expire(), Some(44));
        it = it.with_expire(None);
        assert_eq!((it.key(), it.expire(), it.extra()), (&b"key"[..], None, &b"eXTRA"[..]));
        assert!(!it.replace_expire(1));
        assert_eq!(**it, vec![1, 2, 3]);
    }

    #[test]
    fn drop_runs_once() {
        let rc = Rc::new(Cell::new(0));
        struct D(Rc<Cell<u32>>);
        impl Drop for D {
            fn drop(&mut self) {
                self.0.set(self.0.get() + 1);
            }
        }
        let it = Item::<_, ()>::new_boxed(b"a", D(rc.clone()), None, b"");
        drop(it);
        assert_eq!(rc.get(), 1);
        let it = Item::<_, ()>::new_boxed(b"a", D(rc.clone()), None, b"");
        let v = it.with_expire(Some(1)).into_value();
        assert_eq!(rc.get(), 1);
        drop(v);
        assert_eq!(rc.get(), 2);
    }

    #[test]
    fn aligned_values() {
        #[repr(align(16))]
        struct A(u128);
        let it = Item::<_, ()>::new_boxed(b"abc", A(5), Some(9), b"zz");
        assert_eq!(it.0, 5);
        assert_eq!(std::mem::size_of_val(&*it) % 16, 0);
        let it = it.with_expire(None);
        assert_eq!((it.key(), it.extra(), it.0), (&b"abc"[..], &b"zz"[..], 5));
    }
    #[test]
    fn boxed_part_moves_with_the_item_and_drops_once() {
        let rc = Rc::new(Cell::new(0));
        #[derive(Debug)]
        struct D(Rc<Cell<u32>>, u32);
        impl Drop for D {
            fn drop(&mut self) {
                self.0.set(self.0.get() + 1);
            }
        }
        let it: Box<Item<u8, D>> = Item::new_with_box(b"key", 3, None, Box::new(D(rc.clone(), 10)));
        assert_eq!((it.key(), it.extra(), it.boxed().map(|d| d.1)), (&b"key"[..], &b""[..], Some(10)));
        let mut it = it.with_expire(Some(99));
        it.boxed_mut().unwrap().1 = 11;
        let it = it.with_key(b"other");
        assert_eq!((it.key(), it.expire(), it.boxed().unwrap().1, **it), (&b"other"[..], Some(99), 11, 3));
        let it = it.with_expire(None);
        assert_eq!((it.expire(), it.boxed().unwrap().1), (None, 11));
        assert_eq!(rc.get(), 0);
        drop(it);
        assert_eq!(rc.get(), 1);
        let it: Box<Item<u8, D>> = Item::new_with_box(b"", 1, Some(1), Box::new(D(rc.clone(), 5)));
        let (v, b) = it.into_parts();
        assert_eq!((v, rc.get()), (1, 1));
        assert_eq!(b.unwrap().1, 5);
        assert_eq!(rc.get(), 2);
        // An inline item has no box; its extra bytes survive a rename.
        let it: Box<Item<u8, D>> = Item::new_boxed(b"a", 2, Some(7), b"xyz");
        assert!(it.boxed().is_none());
        let it = it.with_key(b"bb");
        assert_eq!((it.key(), it.expire(), it.extra()), (&b"bb"[..], Some(7), &b"xyz"[..]));
        assert_eq!(rc.get(), 2);
    }
}
