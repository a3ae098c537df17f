//! Walking every item: a table's initialised buckets ([`View`]) and the
//! iterator over their items ([`Iter`], from [`crate::Table::iter`]).

use std::marker::PhantomData;

use super::bucket::Bucket;
use super::{item_ptr, Item};

/// The initialised buckets of a table: all of `old` and the ready ones of
/// `new`, numbered `old` first.
#[derive(Clone, Copy)]
pub(super) struct View {
    pub(super) old: (*mut Bucket, usize),
    pub(super) new: (*mut Bucket, usize),
    pub(super) nready: usize,
}

impl View {
    pub(super) fn count(&self) -> usize {
        self.old.1 + self.new.1
    }

    pub(super) fn get(&self, k: u64) -> Option<*const Bucket> {
        let k = k as usize;
        if k < self.old.1 {
            return Some(self.old.0.wrapping_add(k));
        }
        let j = k - self.old.1;
        (j < self.nready).then(|| self.new.0.wrapping_add(j) as *const Bucket)
    }
}

/// Iterator over all items of a [`crate::Table`], from [`crate::Table::iter`].
pub struct Iter<'a, T, B = ()> {
    pub(super) table: View,
    pub(super) pos: u64,
    pub(super) bucket: *const Bucket,
    pub(super) pending: u32,
    pub(super) left: usize,
    pub(super) _t: PhantomData<&'a Item<T, B>>,
}

impl<'a, T, B> Iterator for Iter<'a, T, B> {
    type Item = &'a Item<T, B>;

    fn next(&mut self) -> Option<&'a Item<T, B>> {
        if self.left == 0 {
            return None;
        }
        loop {
            if self.pending != 0 {
                let s = self.pending.trailing_zeros() as usize;
                self.pending &= self.pending - 1;
                self.left -= 1;
                // SAFETY: `bucket` is initialised and its present slots hold
                // live items, borrowed for 'a (the table is borrowed for 'a
                // by whoever made this iterator).
                return Some(unsafe { &*item_ptr::<T, B>((*self.bucket).addr(s)) });
            }
            if self.pos >= self.table.count() as u64 {
                return None;
            }
            let k = self.pos;
            self.pos += 1;
            if let Some(b) = self.table.get(k) {
                self.bucket = b;
                // SAFETY: `View::get` returns initialised buckets.
                self.pending = unsafe { (*b).present() };
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

// SAFETY: the iterator only hands out `&Item<T, B>` borrowed from the table.
unsafe impl<T: Sync, B: Sync> Send for Iter<'_, T, B> {}
