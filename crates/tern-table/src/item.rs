//! One allocation per key: a small header, the caller's value `T`, then the
//! key bytes, the expire deadline (only when one is set) and optional extra
//! bytes.
//!
//! ```text
//!  offset 0        4          8                      (8 + size_of T, padded)
//!  +---------------+----------+----------------------+---------------------------------+
//!  | tail_len: u32 | key_len: u32 (bit 31 HAS_EXPIRE) | value: T | key | [deadline LE 8] | extra |
//!  +---------------+----------+----------------------+---------------------------------+
//!                                                     `------------- tail: [u8] -------------'
//! ```
//!
//! `Item<T>` is a dynamically sized type (its last field is `[u8]`), so
//! `&Item<T>` and `Box<Item<T>>` are ordinary fat pointers whose metadata is
//! the tail length. The table stores thin pointers and rebuilds the fat
//! pointer from `tail_len`, which is why the header repeats it.

use std::alloc::{self, Layout};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};

use crate::size_class;

const HAS_EXPIRE: u32 = 1 << 31;
const KEY_LEN_MASK: u32 = HAS_EXPIRE - 1;
const EXPIRE_LEN: usize = 8;

/// The largest key an item can hold (2 GiB - 1): bit 31 of the length word
/// is the HAS_EXPIRE flag.
pub const MAX_KEY_LEN: usize = KEY_LEN_MASK as usize;

#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Header {
    tail_len: u32,
    key_len: u32,
}

/// A stored key with its value: see the module docs for the layout.
#[repr(C)]
pub struct Item<T> {
    hdr: Header,
    value: T,
    tail: [u8],
}

/// The layout of an item whose tail is `tail_len` bytes: exactly what the
/// compiler computes for `Item<T>` (repr(C)), so `Box` frees it correctly.
fn layout_for<T>(tail_len: usize) -> Layout {
    let (l, _) = Layout::new::<Header>().extend(Layout::new::<T>()).expect("item layout");
    let (l, _) = l.extend(Layout::array::<u8>(tail_len).expect("item layout")).expect("item layout");
    l.pad_to_align()
}

impl<T> Item<T> {
    /// Builds an item in one allocation. `expire` is an opaque deadline kept
    /// in 8 extra bytes only when set; `extra` bytes follow it.
    ///
    /// # Panics
    /// If the key is longer than [`MAX_KEY_LEN`] or the tail exceeds 4 GiB.
    pub fn new_boxed(key: &[u8], value: T, expire: Option<u64>, extra: &[u8]) -> Box<Self> {
        assert!(key.len() <= MAX_KEY_LEN, "key too long for an item");
        let exp_len = if expire.is_some() { EXPIRE_LEN } else { 0 };
        let tail_len = key.len() + exp_len + extra.len();
        let tail_len32 = u32::try_from(tail_len).expect("item tail over 4 GiB");
        let layout = layout_for::<T>(tail_len);
        // SAFETY: the layout has a non-zero size (the header alone is 8 bytes).
        let raw = unsafe { alloc::alloc(layout) };
        let Some(thin) = NonNull::new(raw) else { alloc::handle_alloc_error(layout) };
        let p = fat::<T>(thin.as_ptr(), tail_len);
        let flags = if expire.is_some() { HAS_EXPIRE } else { 0 };
        // SAFETY: `p` points to a fresh allocation of `layout`, which is the
        // layout of `Item<T>` with this tail length; every field is written
        // through raw pointers before the first reference is made, and the
        // source slices cannot overlap a fresh allocation.
        unsafe {
            ptr::addr_of_mut!((*p).hdr).write(Header { tail_len: tail_len32, key_len: key.len() as u32 | flags });
            ptr::addr_of_mut!((*p).value).write(value);
            let tail = ptr::addr_of_mut!((*p).tail) as *mut u8;
            ptr::copy_nonoverlapping(key.as_ptr(), tail, key.len());
            if let Some(d) = expire {
                ptr::copy_nonoverlapping(d.to_le_bytes().as_ptr(), tail.add(key.len()), EXPIRE_LEN);
            }
            ptr::copy_nonoverlapping(extra.as_ptr(), tail.add(key.len() + exp_len), extra.len());
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

    /// The extra bytes given at creation.
    #[inline]
    pub fn extra(&self) -> &[u8] {
        let start = self.key_len() + self.expire_len();
        &self.tail[start..]
    }

    /// The extra bytes, writable (their length is fixed at creation).
    #[inline]
    pub fn extra_mut(&mut self) -> &mut [u8] {
        let start = self.key_len() + self.expire_len();
        &mut self.tail[start..]
    }

    /// Bytes the allocator really hands out for this item (jemalloc's size
    /// class of its layout).
    #[inline]
    pub fn alloc_size(&self) -> usize {
        size_class(std::mem::size_of_val(self))
    }

    /// Takes the value out and frees the item.
    pub fn into_value(self: Box<Self>) -> T {
        let layout = Layout::for_value(&*self);
        let p = Box::into_raw(self);
        // SAFETY: `p` came from a live Box, so `value` is initialised; it is
        // read exactly once and the memory is then freed without dropping it,
        // with the layout the Box was allocated with.
        unsafe {
            let v = ptr::addr_of!((*p).value).read();
            alloc::dealloc(p as *mut u8, layout);
            v
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
                let extra_len = this.extra().len();
                let old_tail = this.tail.len();
                let new_tail = if had { old_tail - EXPIRE_LEN } else { old_tail + EXPIRE_LEN };
                let new_tail32 = u32::try_from(new_tail).expect("item tail over 4 GiB");
                let old_layout = Layout::for_value(&*this);
                let new_layout = layout_for::<T>(new_tail);
                if had {
                    // Extra bytes move down over the deadline before shrinking.
                    this.tail.copy_within(k + EXPIRE_LEN.., k);
                }
                let raw = Box::into_raw(this) as *mut u8;
                // SAFETY: `raw` was allocated with `old_layout` (it came from a
                // Box of this type); the new size is non-zero and keeps the
                // alignment, as `realloc` requires. On failure the old block is
                // still owned by us, but we abort via handle_alloc_error.
                let grown = unsafe { alloc::realloc(raw, old_layout, new_layout.size()) };
                let Some(thin) = NonNull::new(grown) else { alloc::handle_alloc_error(new_layout) };
                let p = fat::<T>(thin.as_ptr(), new_tail);
                // SAFETY: the block now has `new_layout`'s size and holds the
                // old bytes up to the smaller of both sizes; the header is
                // rewritten to the new tail length before the Box is rebuilt,
                // and the moves stay inside the tail.
                unsafe {
                    let hdr = ptr::addr_of_mut!((*p).hdr);
                    let key_len = (*hdr).key_len & KEY_LEN_MASK;
                    let tail = ptr::addr_of_mut!((*p).tail) as *mut u8;
                    match expire {
                        Some(d) => {
                            ptr::copy(tail.add(k), tail.add(k + EXPIRE_LEN), extra_len);
                            ptr::copy_nonoverlapping(d.to_le_bytes().as_ptr(), tail.add(k), EXPIRE_LEN);
                            hdr.write(Header { tail_len: new_tail32, key_len: key_len | HAS_EXPIRE });
                        }
                        None => hdr.write(Header { tail_len: new_tail32, key_len }),
                    }
                    let b = Box::from_raw(p);
                    debug_assert_eq!(Layout::for_value(&*b), new_layout);
                    b
                }
            }
        }
    }
}

/// Rebuilds the fat pointer of the item at `thin` with a tail of `tail_len`.
#[inline]
pub(crate) fn fat<T>(thin: *mut u8, tail_len: usize) -> *mut Item<T> {
    ptr::slice_from_raw_parts_mut(thin, tail_len) as *mut Item<T>
}

/// The fat pointer of the live item at `thin`.
///
/// # Safety
/// `thin` must point to a live `Item<T>` (its header is read).
#[inline]
pub(crate) unsafe fn from_thin<T>(thin: *mut u8) -> *mut Item<T> {
    // SAFETY: the caller guarantees a live item, whose first field is the header.
    let tail_len = unsafe { (*(thin as *const Header)).tail_len } as usize;
    fat::<T>(thin, tail_len)
}

impl<T> Deref for Item<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Item<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T: fmt::Debug> fmt::Debug for Item<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Item")
            .field("key", &String::from_utf8_lossy(self.key()))
            .field("expire", &self.expire())
            .field("value", &self.value)
            .field("extra_len", &self.extra().len())
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
        let it = Item::new_boxed(b"hello", 7u32, None, b"");
        assert_eq!(it.key(), b"hello");
        assert_eq!(it.expire(), None);
        assert_eq!(it.extra(), b"");
        assert_eq!(**it, 7);
        let it = Item::new_boxed(b"k", String::from("v"), Some(u64::MAX - 3), b"xyz");
        assert_eq!(it.key(), b"k");
        assert_eq!(it.expire(), Some(u64::MAX - 3));
        assert_eq!(it.extra(), b"xyz");
        assert_eq!(it.len(), 1);
        assert_eq!(it.into_value(), "v");
    }

    #[test]
    fn ttl_costs_nothing_when_absent() {
        let a = Item::new_boxed(b"0123456789abcdef", 0u64, None, b"");
        let b = Item::new_boxed(b"0123456789abcdef", 0u64, Some(1), b"");
        assert_eq!(std::mem::size_of_val(&*a), 8 + 8 + 16);
        assert_eq!(std::mem::size_of_val(&*b), 8 + 8 + 24);
        assert_eq!(a.alloc_size(), 32);
        assert_eq!(b.alloc_size(), 48);
    }

    #[test]
    fn zero_length_key_and_large_key() {
        let it = Item::new_boxed(b"", 1u8, Some(5), b"e");
        assert_eq!(it.key(), b"");
        assert_eq!(it.expire(), Some(5));
        assert_eq!(it.extra(), b"e");
        let big = vec![0xabu8; 100_000];
        let it = Item::new_boxed(&big, 1u8, None, &big[..10]);
        assert_eq!(it.key(), &big[..]);
        assert_eq!(it.extra(), &big[..10]);
    }

    #[test]
    fn expire_add_replace_remove_keeps_extra() {
        let mut it = Item::new_boxed(b"key", vec![1u8, 2, 3], None, b"EXTRA");
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
        let it = Item::new_boxed(b"a", D(rc.clone()), None, b"");
        drop(it);
        assert_eq!(rc.get(), 1);
        let it = Item::new_boxed(b"a", D(rc.clone()), None, b"");
        let v = it.with_expire(Some(1)).into_value();
        assert_eq!(rc.get(), 1);
        drop(v);
        assert_eq!(rc.get(), 2);
    }

    #[test]
    fn aligned_values() {
        #[repr(align(16))]
        struct A(u128);
        let it = Item::new_boxed(b"abc", A(5), Some(9), b"zz");
        assert_eq!(it.0, 5);
        assert_eq!(std::mem::size_of_val(&*it) % 16, 0);
        let it = it.with_expire(None);
        assert_eq!((it.key(), it.extra(), it.0), (&b"abc"[..], &b"zz"[..], 5));
    }
}
