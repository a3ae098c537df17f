//! A list being changed where its key keeps it ([`ListMut`]): in place in
//! the item's extra bytes while the edit allows, laid out as
//! `crate::list`'s `inline` module describes, else taken out as a
//! [`List`]; the edit's end rebuilds the item when the list moved.

use std::borrow::Cow;

use super::{pack_item, rebuild, Entry, NewValue};
use crate::list::inline::{rd, wr, Packed, INLINE_BACK, INLINE_HDR, INLINE_MAX};
use crate::list::pack::{entry_len, lp_size32, write_entry, PackIter, LP_EMPTY};
use crate::list::{End, List, ListLimits, ListRef};
use crate::value::Value;

/// Where a list being changed is now.
enum St<'a> {
    /// A list of the caller's, with no item around it.
    Bare(&'a mut List),
    /// In a box apart from the item.
    Apart,
    /// In the item's extra bytes.
    Inline,
    /// In a larger or smaller item made during the edit, which replaces
    /// the key's item when the edit ends.
    Grown(Box<Entry>),
    /// Taken out of the item as a list of its own.
    Owned(List),
}

/// A list being changed, wherever it is kept: [`List`]'s edits, done in
/// place in the item while they can be. End the edit with
/// [`ListMut::finish`].
pub struct ListMut<'a> {
    item: Option<&'a mut Entry>,
    st: St<'a>,
}

impl<'a> ListMut<'a> {
    /// The list kept in `e`'s extra bytes.
    pub(crate) fn inline(e: &'a mut Entry) -> Self {
        ListMut { item: Some(e), st: St::Inline }
    }

    /// The list in `e`'s box.
    pub(crate) fn apart(e: &'a mut Entry) -> Self {
        ListMut { item: Some(e), st: St::Apart }
    }

    /// `l`, changed through the same edits (no item to put it back in).
    pub fn of(l: &'a mut List) -> Self {
        ListMut { item: None, st: St::Bare(l) }
    }

    fn boxed(e: &Entry) -> &List {
        match e.boxed() {
            Some(Value::List(l)) => l,
            _ => unreachable!("a list apart is in its item's box"),
        }
    }

    /// The bytes in the item (header, entries, room) while the list is
    /// there.
    fn bytes(&self) -> Option<&[u8]> {
        match &self.st {
            St::Inline => self.item.as_deref().map(|e| e.extra()),
            St::Grown(g) => Some(g.extra()),
            _ => None,
        }
    }

    fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        match &mut self.st {
            St::Inline => self.item.as_deref_mut().map(|e| e.extra_mut()),
            St::Grown(g) => Some(g.extra_mut()),
            _ => None,
        }
    }

    /// The list as it reads now.
    pub fn as_ref(&self) -> ListRef<'_> {
        match &self.st {
            St::Bare(l) => ListRef::Apart(l),
            St::Apart => ListRef::Apart(Self::boxed(self.item.as_deref().expect("an item"))),
            St::Owned(l) => ListRef::Apart(l),
            St::Inline | St::Grown(_) => ListRef::Inline(Packed::new(self.bytes().expect("in an item"))),
        }
    }

    pub fn len(&self) -> usize {
        self.as_ref().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<Cow<'_, [u8]>> {
        self.as_ref().get(i)
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Cow<'_, [u8]>> + '_ {
        self.as_ref().iter()
    }

    /// The list as a [`List`], taken out of the item first if it is there.
    fn whole(&mut self) -> &mut List {
        if let Some(b) = self.bytes() {
            let l = Packed::new(b).to_list();
            self.st = St::Owned(l);
        }
        match &mut self.st {
            St::Bare(l) => l,
            St::Owned(l) => l,
            St::Apart => match self.item.as_deref_mut().and_then(|e| e.boxed_mut()) {
                Some(Value::List(l)) => l,
                _ => unreachable!("a list apart is in its item's box"),
            },
            St::Inline | St::Grown(_) => unreachable!("taken out above"),
        }
    }

    /// Rebuilds the item around the list with room for `want` bytes of
    /// header and entries (more or fewer than it has).
    fn resize(&mut self, want: usize) {
        let e = self.item.as_deref().expect("a list in an item has one");
        let b = self.bytes().expect("in an item");
        let content = &b[..INLINE_HDR + Packed::new(b).used()];
        let g = pack_item(e, &[content], want);
        self.st = St::Grown(g);
    }

    /// Pushes `items` one by one at `end`; see [`List::push_many`].
    pub fn push_many<'b, I>(&mut self, end: End, items: I, lim: ListLimits)
    where
        I: IntoIterator<Item = &'b [u8]>,
        I::IntoIter: Clone,
    {
        let items = items.into_iter();
        if let Some(p) = self.bytes().map(Packed::new) {
            let (len, lp, used) = (p.len(), p.lp(), p.used());
            let (n, raw, need, add_lp) = items.clone().fold((0, 0, 0, 0), |(n, r, e, w), b| {
                (n + 1, r + b.len(), e + entry_len(b), w + lp_size32(b) as usize)
            });
            // The same test as a list apart makes before it turns into a
            // quicklist (`List::grow_check`).
            if used + need <= INLINE_MAX && !lim.exceeds(LP_EMPTY + lp + raw, len + n) {
                if INLINE_HDR + used + need > self.bytes().map_or(0, <[u8]>::len) {
                    self.resize(INLINE_HDR + used + need);
                }
                let buf = self.bytes_mut().expect("in an item");
                match end {
                    End::Right => {
                        let mut at = INLINE_HDR + used;
                        for b in items {
                            let l = entry_len(b);
                            write_entry(&mut buf[at..at + l], b);
                            at += l;
                        }
                    }
                    End::Left => {
                        // Each element goes before the one pushed before it.
                        buf.copy_within(INLINE_HDR..INLINE_HDR + used, INLINE_HDR + need);
                        let mut at = INLINE_HDR + need;
                        for b in items {
                            let l = entry_len(b);
                            at -= l;
                            write_entry(&mut buf[at..at + l], b);
                        }
                    }
                }
                wr(buf, 0, len + n);
                wr(buf, 2, lp + add_lp);
                wr(buf, 4, used + need);
                return;
            }
        }
        self.whole().push_many(end, items, lim)
    }

    pub fn push(&mut self, end: End, b: &[u8], lim: ListLimits) {
        self.push_many(end, [b], lim)
    }

    /// Pops up to `count` elements from `end`, giving each to `f`;
    /// returns how many were popped. See [`List::pop_with`].
    pub fn pop_with(&mut self, end: End, count: usize, lim: ListLimits, mut f: impl FnMut(&[u8])) -> usize {
        let Some(buf) = self.bytes_mut() else { return self.whole().pop_with(end, count, lim, f) };
        let (len, mut lp, used) = (rd(buf, 0), rd(buf, 2), rd(buf, 4));
        let n = count.min(len);
        if n == 0 {
            return 0;
        }
        let mut it = PackIter::over(&buf[INLINE_HDR..INLINE_HDR + used]);
        for _ in 0..n {
            let b = match end {
                End::Left => it.next(),
                End::Right => it.next_back(),
            };
            let b = b.expect("counted entries");
            lp -= lp_size32(b) as usize;
            f(b);
        }
        let (front, back) = it.span();
        let left = back - front;
        if front > 0 {
            buf.copy_within(INLINE_HDR + front..INLINE_HDR + back, INLINE_HDR);
        }
        wr(buf, 0, len - n);
        wr(buf, 2, lp);
        wr(buf, 4, left);
        // Most of the item unused: its memory goes back, as a pack's does.
        // (An emptied list's key goes as the edit ends.)
        let cap = buf.len();
        if left > 0 && cap > 64 && (INLINE_HDR + left) * 4 < cap {
            self.resize(INLINE_HDR + left);
        }
        n
    }

    /// Pops one element, owned; see [`List::pop`].
    pub fn pop(&mut self, end: End, lim: ListLimits) -> Option<Vec<u8>> {
        let mut out = None;
        self.pop_with(end, 1, lim, |b| out = Some(b.to_vec()));
        out
    }

    /// See [`List::insert`].
    pub fn insert(&mut self, i: usize, b: &[u8], lim: ListLimits) {
        self.whole().insert(i, b, lim)
    }

    /// See [`List::set`].
    pub fn set(&mut self, i: usize, b: &[u8], lim: ListLimits) {
        self.whole().set(i, b, lim)
    }

    /// See [`List::remove_range`].
    pub fn remove_range(&mut self, i: usize, count: usize, lim: ListLimits) {
        // Nothing to remove from a list in its item leaves it there.
        if self.bytes().is_some() && (count == 0 || i >= self.len()) {
            return;
        }
        self.whole().remove_range(i, count, lim)
    }

    /// See [`List::remove_eq`].
    pub fn remove_eq(&mut self, b: &[u8], limit: usize, from_tail: bool, lim: ListLimits) -> usize {
        if self.bytes().is_some() && !self.iter().any(|e| *e == *b) {
            return 0;
        }
        self.whole().remove_eq(b, limit, from_tail, lim)
    }

    /// The edit's end ([`ListMut::finish`]'s part below the shard): the
    /// rebuilt item that replaces the key's, if the list moved (out of its
    /// item, into a larger one, or small enough to return to its item).
    pub(crate) fn into_rebuilt(self) -> Option<Box<Entry>> {
        let ListMut { item, st } = self;
        let e = item?;
        match st {
            St::Bare(_) | St::Inline => None,
            St::Grown(g) => Some(g),
            St::Owned(l) => Some(rebuild(e, NewValue::Value(Value::List(l)))),
            St::Apart => match e.boxed_mut() {
                Some(Value::List(l)) if !l.is_empty() && l.inline_form(INLINE_BACK).is_some() => {
                    let l = std::mem::take(l);
                    Some(rebuild(e, NewValue::Value(Value::List(l))))
                }
                _ => None,
            },
        }
    }
}
