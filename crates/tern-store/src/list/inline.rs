//! A small list kept in its key's item: the entries of a compact list
//! (`listpack`) laid out right after the key, with no value box and no
//! buffer apart, so that a key holding a few short elements is one
//! allocation, as Redis 8 keeps a small list in one listpack beside its
//! key's object.
//!
//! ```text
//!  item extra: | len u16 | lp u16 | used u16 | entries: used bytes, as a Pack lays them out | room |
//!                                              [fwd len | bytes | back len] ...
//! ```
//!
//! The item is allocated to its allocator size class and keeps the room
//! up to it: a push at either end writes in place while the room lasts
//! (a push at the front moves the entries, at most [`INLINE_MAX`] bytes,
//! as Redis's listpack moves its own), a pop moves nothing at the back and
//! the rest of the entries at the front. An item that outgrows its class is
//! rebuilt in one allocation of the class that fits (amortised O(1) per
//! push: classes are at most a quarter apart), and one whose entries fall
//! under a quarter of it is rebuilt smaller.
//!
//! Any other edit (LSET, LINSERT, LREM, LTRIM), a push past [`INLINE_MAX`]
//! bytes of entries, or one that takes the list past one node's limit
//! (it becomes a `quicklist`) takes the list out of the item as a
//! [`List`]. [`crate::entry::ListMut::finish`] puts it back: in an item again while its
//! entries are within [`INLINE_MAX`] bytes, else in a box apart. A list
//! apart comes back into its item once an edit leaves it at
//! [`INLINE_BACK`] bytes or less, so that a list near the bound is not
//! moved back and forth by every push and pop.

use std::borrow::Cow;

use super::pack::{nth, PackIter};
use super::List;

/// The most bytes of entries a list kept in its item may have.
pub(crate) const INLINE_MAX: usize = 2048;
/// A list kept apart returns to its item at this many bytes of entries.
pub(crate) const INLINE_BACK: usize = INLINE_MAX / 2;
/// The header before the entries: count, listpack weight, bytes used.
pub(crate) const INLINE_HDR: usize = 6;

// Within INLINE_MAX bytes of entries, the count (two bytes an entry at
// least) and the listpack weight (at most 1.5 times the entries' bytes)
// fit the header's 16-bit fields.
const _: () = assert!(INLINE_MAX * 3 / 2 < u16::MAX as usize);

pub(crate) fn rd(b: &[u8], at: usize) -> usize {
    usize::from(u16::from_le_bytes([b[at], b[at + 1]]))
}

pub(crate) fn wr(b: &mut [u8], at: usize, v: usize) {
    debug_assert!(v <= usize::from(u16::MAX));
    b[at..at + 2].copy_from_slice(&(v as u16).to_le_bytes());
}

/// The header of `len` entries of `used` bytes whose listpack weight is
/// `lp` (`used` at most [`INLINE_MAX`]).
pub(crate) fn inline_header(len: u32, lp: u32, used: usize) -> [u8; INLINE_HDR] {
    let mut h = [0u8; INLINE_HDR];
    wr(&mut h, 0, len as usize);
    wr(&mut h, 2, lp as usize);
    wr(&mut h, 4, used);
    h
}

/// A list kept in its item, read through the item's extra bytes.
#[derive(Clone, Copy, Debug)]
pub struct Packed<'a> {
    buf: &'a [u8],
}

impl<'a> Packed<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        debug_assert!(buf.len() >= INLINE_HDR + rd(buf, 4));
        Packed { buf }
    }

    pub fn len(&self) -> usize {
        rd(self.buf, 0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn lp(&self) -> usize {
        rd(self.buf, 2)
    }

    pub(crate) fn used(&self) -> usize {
        rd(self.buf, 4)
    }

    fn entries(&self) -> &'a [u8] {
        &self.buf[INLINE_HDR..INLINE_HDR + self.used()]
    }

    fn iter(&self) -> PackIter<'a> {
        PackIter::over(self.entries())
    }

    /// Whether the header agrees with the entries (tests).
    #[cfg(test)]
    pub(crate) fn check(&self) -> bool {
        let it = self.iter();
        it.clone().count() == self.len()
            && it.clone().rev().count() == self.len()
            && it.map(super::lp_entry_size).sum::<usize>() == self.lp()
    }

    /// The bytes the item keeps for the list, room included (tests).
    #[cfg(test)]
    pub(crate) fn held(&self) -> (usize, usize) {
        (INLINE_HDR + self.used(), self.buf.len())
    }

    pub(crate) fn to_list(self) -> List {
        List::from_entries(self.entries(), self.len() as u32, self.lp() as u32)
    }
}

/// One of two iterators of the same items.
enum Either<A, B> {
    A(A),
    B(B),
}

impl<T, A: Iterator<Item = T>, B: Iterator<Item = T>> Iterator for Either<A, B> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        match self {
            Either::A(a) => a.next(),
            Either::B(b) => b.next(),
        }
    }
}

impl<T, A: DoubleEndedIterator<Item = T>, B: DoubleEndedIterator<Item = T>> DoubleEndedIterator for Either<A, B> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        match self {
            Either::A(a) => a.next_back(),
            Either::B(b) => b.next_back(),
        }
    }
}

/// A list, read where it is: apart from its item, or in it.
#[derive(Clone, Copy, Debug)]
pub enum ListRef<'a> {
    Apart(&'a List),
    Inline(Packed<'a>),
}

impl<'a> ListRef<'a> {
    pub fn len(&self) -> usize {
        match self {
            ListRef::Apart(l) => l.len(),
            ListRef::Inline(p) => p.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `OBJECT ENCODING`: a list in its item is always a `listpack`.
    pub fn encoding(&self) -> &'static str {
        match self {
            ListRef::Apart(l) => l.encoding(),
            ListRef::Inline(_) => "listpack",
        }
    }

    /// The elements, head to tail (reversible); see [`List::iter`].
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Cow<'a, [u8]>> + 'a {
        match *self {
            ListRef::Apart(l) => Either::A(l.iter()),
            ListRef::Inline(p) => Either::B(p.iter().map(Cow::Borrowed)),
        }
    }

    /// The elements from index `start` on; see [`List::iter_from`].
    pub fn iter_from(&self, start: usize) -> impl Iterator<Item = Cow<'a, [u8]>> + 'a {
        match *self {
            ListRef::Apart(l) => Either::A(l.iter_from(start)),
            ListRef::Inline(p) => Either::B(p.iter().skip(start).map(Cow::Borrowed)),
        }
    }

    /// The elements from index `start` back to the head; see
    /// [`List::iter_rev_from`].
    pub fn iter_rev_from(&self, start: usize) -> impl Iterator<Item = Cow<'a, [u8]>> + 'a {
        match *self {
            ListRef::Apart(l) => Either::A(l.iter_rev_from(start)),
            ListRef::Inline(p) => {
                let skip = p.len().saturating_sub(start + 1);
                Either::B(p.iter().rev().skip(skip).map(Cow::Borrowed))
            }
        }
    }

    pub fn get(&self, i: usize) -> Option<Cow<'a, [u8]>> {
        match *self {
            ListRef::Apart(l) => l.get(i),
            ListRef::Inline(p) => nth(p.entries(), 0, p.len(), i).map(Cow::Borrowed),
        }
    }

    /// The element count of each node, head to tail (one for a list in
    /// its item); see [`List::node_lens`].
    pub fn node_lens(&self) -> impl Iterator<Item = usize> + 'a {
        match *self {
            ListRef::Apart(l) => Either::A(l.node_lens()),
            ListRef::Inline(p) => Either::B(std::iter::once(p.len())),
        }
    }

    /// An owned copy.
    pub fn to_list(&self) -> List {
        match *self {
            ListRef::Apart(l) => l.clone(),
            ListRef::Inline(p) => p.to_list(),
        }
    }
}

/// Whether `l` is kept in its key's item, and how: its header and entries.
pub(crate) fn inline_parts(l: &List) -> Option<([u8; INLINE_HDR], &[u8])> {
    l.inline_form(INLINE_MAX).map(|(b, len, lp)| (inline_header(len, lp, b.len()), b))
}
