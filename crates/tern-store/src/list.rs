//! List values: a sequence of byte strings with cheap ends.
//!
//! ```text
//!  List ─ repr: Pack   one Vec<u8>:  [gap][fwd len | bytes | back len][fwd len | bytes | back len]...
//!                       │                 └ head                 back len = the fwd varint's bytes reversed,
//!                       │                                         so the last entry is read from the end
//!               or Quick  VecDeque of Packs (nodes), each within the node limit
//! ```
//!
//! A small list (up to 2 KB of entries) lives in its key's item instead,
//! the entries laid out as a pack's right after the key ([`inline`]); it
//! moves to a `List` apart, as below, when it outgrows that.
//!
//! A list starts as one pack (`OBJECT ENCODING listpack`): a single
//! allocation, with a gap kept before the first entry so that pushes and
//! pops at either end move no other entry (amortised O(1), no allocation
//! per element). It becomes a `quicklist` of packs when it would exceed
//! one node's limit (`list-max-listpack-size`: a positive value counts
//! entries, -1..-5 bound a node's bytes at 4..64 KiB), and turns back into
//! one pack when a removal leaves it a single node within half the limit:
//! Redis 7.2's rules, so OBJECT ENCODING changes where Redis's does. Sizes
//! are measured as Redis's listpack would store the same elements
//! (integers packed, its entry headers), kept beside each pack, so that
//! the thresholds fall where Redis's do although the bytes here are laid
//! out differently.
//!
//! Index lookups (LINDEX, LRANGE's start) walk nodes from the nearer end,
//! skipping a whole node by its count, and then entries within one node.
//!
//! With `list-compress-depth` d > 0 (taken when the list becomes a
//! quicklist, as Redis does), the d nodes at each end stay raw and the
//! nodes between them are stored LZF-compressed ([`crate::lzf`]) when they
//! weigh at least 48 bytes and compressing saves more than 8: Redis's
//! rules. A compressed node keeps its counts, so skipping it costs
//! nothing; a change decompresses it and compresses it again after, and a
//! read through `&self` decompresses a copy (its elements then come out
//! owned, hence [`Cow`]).
//!
//! ```text
//!  d = 1:  [raw] ⇄ [lzf] ⇄ [lzf] ⇄ ... ⇄ [lzf] ⇄ [raw]
//!          push/pop touch only the raw ends; a node that crosses into the
//!          middle is compressed then, one that reaches an end is expanded
//! ```
//!
//! Goals: Redis's encodings, conversions and replies; cheap ends.
//! Non-goals: plain nodes for elements above 1 GiB.

use std::borrow::Cow;
use std::collections::VecDeque;

// Open to `crate::entry`'s `ListMut`, which edits a list in its item
// with the same layout and entries (and so rebuilds the item when it
// must).
pub(crate) mod inline;
pub(crate) mod pack;

pub use inline::{ListRef, Packed};
pub(crate) use inline::inline_parts;
use pack::{entry_len, lp_entry_size, Pack, LP_EMPTY};

/// Node limits from `list-max-listpack-size` (Redis's `fill`), and
/// `list-compress-depth` for lists that become quicklists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListLimits {
    pub fill: i64,
    pub depth: usize,
}

impl Default for ListLimits {
    fn default() -> Self {
        ListLimits { fill: -2, depth: 0 }
    }
}

/// Redis's `optimization_level`: node byte limits for fill -1..-5.
const SIZE_LEVELS: [usize; 5] = [4096, 8192, 16384, 32768, 65536];
/// A count-limited node still stops at this many bytes (`SIZE_SAFETY_LIMIT`).
const SIZE_SAFETY_LIMIT: usize = 8192;
/// Bytes Redis adds to an element's length when guessing its entry size.
const SIZE_ESTIMATE_OVERHEAD: usize = 8;

impl ListLimits {
    /// (bytes, entries) one node may hold (`quicklistNodeLimit`).
    fn node_limit(self) -> (usize, usize) {
        if self.fill >= 0 {
            (usize::MAX, if self.fill == 0 { 1 } else { self.fill.min(u32::MAX as i64) as usize })
        } else {
            let level = ((self.fill.unsigned_abs() - 1) as usize).min(SIZE_LEVELS.len() - 1);
            (SIZE_LEVELS[level], usize::MAX)
        }
    }

    /// Whether a node of `bytes` and `count` entries is over the limit
    /// (`quicklistNodeExceedsLimit`).
    pub(crate) fn exceeds(self, bytes: usize, count: usize) -> bool {
        let (sz, n) = self.node_limit();
        if sz != usize::MAX {
            bytes > sz
        } else {
            bytes > SIZE_SAFETY_LIMIT || count > n
        }
    }
}

// ---------------------------------------------------------------- list --

#[derive(Clone, Debug)]
enum Repr {
    Pack(Pack),
    Quick(Box<Quick>),
}

#[derive(Clone, Debug, Default)]
struct Quick {
    nodes: VecDeque<Pack>,
    len: usize,
    /// `list-compress-depth` when the list became a quicklist.
    depth: usize,
}

/// A list value.
#[derive(Clone, Debug)]
pub struct List {
    repr: Repr,
}

impl Default for List {
    fn default() -> Self {
        List { repr: Repr::Pack(Pack::default()) }
    }
}

impl PartialEq for List {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// Which end of a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Left,
    Right,
}

impl Quick {
    /// (node, index within it) of entry `i` < len, walking nodes from the
    /// nearer end.
    fn locate(&self, i: usize) -> (usize, usize) {
        if i * 2 <= self.len {
            let mut i = i;
            for (n, node) in self.nodes.iter().enumerate() {
                if i < node.len() {
                    return (n, i);
                }
                i -= node.len();
            }
        } else {
            let mut from_end = self.len - i;
            for (n, node) in self.nodes.iter().enumerate().rev() {
                if from_end <= node.len() {
                    return (n, node.len() - from_end);
                }
                from_end -= node.len();
            }
        }
        (self.nodes.len().saturating_sub(1), 0)
    }

    /// Whether `node` may take an element of `len` bytes
    /// (`_quicklistNodeAllowInsert`).
    fn allows(node: &Pack, len: usize, lim: ListLimits) -> bool {
        !lim.exceeds(node.lp_bytes() + len + SIZE_ESTIMATE_OVERHEAD, node.len() + 1)
    }

    fn push(&mut self, end: End, b: &[u8], lim: ListLimits) {
        let node = match end {
            End::Left => self.nodes.front_mut(),
            End::Right => self.nodes.back_mut(),
        };
        match node {
            Some(n) if Self::allows(n, b.len(), lim) => {
                // The ends are raw (depth >= 1); this only guards that.
                n.decompress();
                match end {
                    End::Left => n.push_front(b),
                    End::Right => n.push_back(b),
                }
            }
            _ => {
                let p = Pack::from_iter([b]);
                match end {
                    End::Left => self.nodes.push_front(p),
                    End::Right => self.nodes.push_back(p),
                }
                self.settle(0..0, 1);
            }
        }
        self.len += 1;
    }

    /// Keeps the nodes' compression as Redis's `__quicklistCompress` does,
    /// after a change: the `depth` nodes at each end raw; compressed, the
    /// nodes that `added` new nodes may have pushed just inside those
    /// ends, and the nodes `touched` (changed) that lie between them.
    /// Nodes further in were compressed when they crossed in or were last
    /// changed, so a change costs work near it only.
    fn settle(&mut self, touched: std::ops::Range<usize>, added: usize) {
        let d = self.depth;
        if d == 0 {
            return;
        }
        let n = self.nodes.len();
        let w = d.min(n);
        for i in (0..w).chain(n - w..n) {
            self.nodes[i].decompress();
        }
        if n <= 2 * d {
            return;
        }
        let k = added.max(1);
        let inner = d..n - d;
        let near_head = d..(d + k).min(n - d);
        let near_tail = (n - d).saturating_sub(k).max(d)..n - d;
        let touched = touched.start.max(inner.start)..touched.end.min(inner.end);
        for i in near_head.chain(near_tail).chain(touched) {
            self.nodes[i].compress();
        }
    }

    fn pop(&mut self, end: End, f: impl FnOnce(&[u8])) -> bool {
        let idx = match end {
            End::Left => 0,
            End::Right => self.nodes.len().saturating_sub(1),
        };
        let node = self.nodes.get_mut(idx);
        let Some(n) = node else { return false };
        n.decompress();
        let popped = match end {
            End::Left => n.pop_front(f),
            End::Right => n.pop_back(f),
        };
        if n.len() == 0 {
            self.nodes.remove(idx);
            self.settle(0..0, 0);
        }
        if popped {
            self.len -= 1;
        }
        popped
    }

    fn insert(&mut self, i: usize, b: &[u8], lim: ListLimits) {
        if i == 0 {
            return self.push(End::Left, b, lim);
        }
        if i >= self.len {
            return self.push(End::Right, b, lim);
        }
        let (n, at) = self.locate(i);
        self.len += 1;
        if Self::allows(&self.nodes[n], b.len(), lim) {
            self.nodes[n].decompress();
            self.nodes[n].insert(at, b);
            return self.settle(n..n + 1, 0);
        }
        if at == 0 && n > 0 && Self::allows(&self.nodes[n - 1], b.len(), lim) {
            self.nodes[n - 1].decompress();
            self.nodes[n - 1].push_back(b);
            return self.settle(n - 1..n, 0);
        }
        // A full node: split it where the element goes, as Redis does.
        let before = self.nodes.len();
        self.nodes[n].decompress();
        let tail = self.nodes[n].split_off(at);
        self.nodes.insert(n + 1, tail);
        if Self::allows(&self.nodes[n], b.len(), lim) {
            self.nodes[n].push_back(b);
        } else if Self::allows(&self.nodes[n + 1], b.len(), lim) {
            self.nodes[n + 1].push_front(b);
        } else {
            self.nodes.insert(n + 1, Pack::from_iter([b]));
        }
        if self.nodes[n].len() == 0 {
            self.nodes.remove(n);
        }
        let added = self.nodes.len() - before;
        self.settle(n..n + added + 1, added);
    }

    /// Replaces entry `i` (< len) with `b`.
    fn replace(&mut self, i: usize, b: &[u8]) {
        let (n, at) = self.locate(i);
        self.nodes[n].decompress();
        self.nodes[n].replace(at, b);
        self.settle(n..n + 1, 0);
    }

    fn remove_range(&mut self, i: usize, count: usize) {
        let mut count = count.min(self.len.saturating_sub(i));
        if count == 0 {
            return;
        }
        let (mut n, mut at) = self.locate(i);
        let first = n;
        self.len -= count;
        while count > 0 {
            let node = &mut self.nodes[n];
            let take = count.min(node.len() - at);
            if at == 0 && take == node.len() {
                self.nodes.remove(n);
            } else {
                node.decompress();
                node.remove_range(at, take);
                n += 1;
            }
            at = 0;
            count -= take;
        }
        self.settle(first..n, 0);
    }
}

/// How many whole nodes of `nodes` lie within the first `skip` entries,
/// and how many entries are left to skip after them.
fn skip_nodes<'a>(nodes: impl Iterator<Item = &'a Pack>, mut skip: usize) -> (usize, usize) {
    let mut whole = 0;
    for n in nodes {
        if skip < n.len() {
            break;
        }
        skip -= n.len();
        whole += 1;
    }
    (whole, skip)
}

impl List {
    pub fn new() -> Self {
        Self::default()
    }

    /// A compact list of `len` entries laid out as `entries` (see
    /// [`inline`]), whose listpack weight is `lp`.
    fn from_entries(entries: &[u8], len: u32, lp: u32) -> Self {
        List { repr: Repr::Pack(Pack::from_entries(entries, len, lp)) }
    }

    /// A compact list's raw entries, count and listpack weight, when it
    /// is small enough to be kept in its key's item (at most `max` bytes
    /// of entries): see [`inline`].
    pub(crate) fn inline_form(&self, max: usize) -> Option<(&[u8], u32, u32)> {
        match &self.repr {
            Repr::Pack(p) => p.entries().filter(|(b, _, _)| b.len() <= max),
            Repr::Quick(_) => None,
        }
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Pack(p) => p.len(),
            Repr::Quick(q) => q.len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `OBJECT ENCODING`.
    pub fn encoding(&self) -> &'static str {
        match self.repr {
            Repr::Pack(_) => "listpack",
            Repr::Quick(_) => "quicklist",
        }
    }

    /// Heap bytes held, without walking the entries of a compact list.
    pub fn heap_size(&self) -> usize {
        match &self.repr {
            Repr::Pack(p) => p.heap_size(),
            Repr::Quick(q) => {
                std::mem::size_of::<Quick>()
                    + q.nodes.capacity() * std::mem::size_of::<Pack>()
                    + q.nodes.iter().map(Pack::heap_size).sum::<usize>()
            }
        }
    }

    /// Allocations freeing the list releases (Redis's lazyfree effort).
    pub fn free_effort(&self) -> usize {
        match &self.repr {
            Repr::Pack(_) => 1,
            Repr::Quick(q) => q.nodes.len(),
        }
    }

    fn nodes(&self) -> (&[Pack], &[Pack]) {
        match &self.repr {
            Repr::Pack(p) => (std::slice::from_ref(p), &[]),
            Repr::Quick(q) => q.nodes.as_slices(),
        }
    }

    /// The element count of each node, head to tail: an RDB file carries
    /// a list node by node, as Redis's quicklist.
    pub fn node_lens(&self) -> impl Iterator<Item = usize> + '_ {
        let (a, b) = self.nodes();
        a.iter().chain(b.iter()).map(Pack::len)
    }

    /// The elements, head to tail (reversible). Borrowed, except those
    /// of compressed nodes.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Cow<'_, [u8]>> + '_ {
        let (a, b) = self.nodes();
        a.iter().chain(b.iter()).flat_map(Pack::view)
    }

    /// The elements from index `start` on, head to tail, skipping whole
    /// nodes before it (without decompressing them).
    pub fn iter_from(&self, start: usize) -> impl Iterator<Item = Cow<'_, [u8]>> + '_ {
        let (a, b) = self.nodes();
        let (whole, left) = skip_nodes(a.iter().chain(b.iter()), start);
        a.iter().chain(b.iter()).skip(whole).flat_map(Pack::view).skip(left)
    }

    /// The elements from index `start` back to the head, tail-wards first.
    pub fn iter_rev_from(&self, start: usize) -> impl Iterator<Item = Cow<'_, [u8]>> + '_ {
        let skip = self.len().saturating_sub(start + 1);
        let (a, b) = self.nodes();
        let (whole, left) = skip_nodes(b.iter().rev().chain(a.iter().rev()), skip);
        b.iter().rev().chain(a.iter().rev()).skip(whole).flat_map(|n| n.view().rev()).skip(left)
    }

    pub fn get(&self, i: usize) -> Option<Cow<'_, [u8]>> {
        match &self.repr {
            Repr::Pack(p) => p.get(i).map(Cow::Borrowed),
            Repr::Quick(q) => {
                if i >= q.len {
                    return None;
                }
                let (n, at) = q.locate(i);
                q.nodes[n].get_cow(at)
            }
        }
    }

    /// Becomes a quicklist if `add` more elements of `add_bytes` in all
    /// would take the pack over one node's limit
    /// (`listTypeTryConvertListpack`).
    fn grow_check(&mut self, add: usize, add_bytes: usize, lim: ListLimits) {
        if let Repr::Pack(p) = &mut self.repr {
            if lim.exceeds(p.lp_bytes() + add_bytes, p.len() + add) {
                let p = std::mem::take(p);
                let len = p.len();
                let mut nodes = VecDeque::new();
                if len > 0 {
                    nodes.push_back(p);
                }
                self.repr = Repr::Quick(Box::new(Quick { nodes, len, depth: lim.depth }));
            }
        }
    }

    /// Becomes one pack again after a removal, if one node is left and it
    /// is within half the limit (`listTypeTryConvertQuicklist`).
    fn shrink_check(&mut self, lim: ListLimits) {
        if let Repr::Quick(q) = &mut self.repr {
            if q.nodes.len() > 1 {
                return;
            }
            let (sz, n) = lim.node_limit();
            let (bytes, count) = q.nodes.front().map_or((LP_EMPTY, 0), |p| (p.lp_bytes(), p.len()));
            if bytes <= sz / 2 && count <= n / 2 {
                let p = q.nodes.pop_front().unwrap_or_default();
                self.repr = Repr::Pack(p);
            }
        }
    }

    /// Pushes `items` one by one at `end` (LPUSH reverses them, as Redis).
    pub fn push_many<'a, I>(&mut self, end: End, items: I, lim: ListLimits)
    where
        I: IntoIterator<Item = &'a [u8]>,
        I::IntoIter: Clone,
    {
        let items = items.into_iter();
        let (n, bytes) = items.clone().fold((0, 0), |(n, s), b| (n + 1, s + b.len()));
        self.grow_check(n, bytes, lim);
        if let Repr::Pack(p) = &mut self.repr {
            // The batch's room at once: a list created whole by one push
            // is one allocation of its size class.
            let need = items.clone().map(entry_len).sum();
            match end {
                End::Left => p.room_front(need),
                End::Right => p.room_back(need),
            }
        }
        for b in items {
            match &mut self.repr {
                Repr::Pack(p) => match end {
                    End::Left => p.push_front(b),
                    End::Right => p.push_back(b),
                },
                Repr::Quick(q) => q.push(end, b, lim),
            }
        }
    }

    pub fn push(&mut self, end: End, b: &[u8], lim: ListLimits) {
        self.push_many(end, [b], lim)
    }

    /// Pops up to `count` elements from `end`, giving each to `f`.
    /// Returns how many were popped.
    pub fn pop_with(&mut self, end: End, count: usize, lim: ListLimits, mut f: impl FnMut(&[u8])) -> usize {
        let mut done = 0;
        while done < count {
            let ok = match &mut self.repr {
                Repr::Pack(p) => match end {
                    End::Left => p.pop_front(&mut f),
                    End::Right => p.pop_back(&mut f),
                },
                Repr::Quick(q) => q.pop(end, &mut f),
            };
            if !ok {
                break;
            }
            done += 1;
        }
        if done > 0 {
            self.shrink_check(lim);
        }
        done
    }

    /// Pops one element, owned (LMOVE carries it to another list).
    pub fn pop(&mut self, end: End, lim: ListLimits) -> Option<Vec<u8>> {
        let mut out = None;
        self.pop_with(end, 1, lim, |b| out = Some(b.to_vec()));
        out
    }

    /// Inserts `b` so that it becomes element `i` (`i` <= len).
    pub fn insert(&mut self, i: usize, b: &[u8], lim: ListLimits) {
        self.grow_check(1, b.len(), lim);
        match &mut self.repr {
            Repr::Pack(p) => p.insert(i, b),
            Repr::Quick(q) => q.insert(i, b, lim),
        }
    }

    /// Replaces element `i` (< len) with `b`.
    pub fn set(&mut self, i: usize, b: &[u8], lim: ListLimits) {
        self.grow_check(1, b.len(), lim);
        match &mut self.repr {
            Repr::Pack(p) => p.replace(i, b),
            Repr::Quick(q) => q.replace(i, b),
        }
        self.shrink_check(lim);
    }

    /// Removes `count` elements from index `i` on.
    pub fn remove_range(&mut self, i: usize, count: usize, lim: ListLimits) {
        match &mut self.repr {
            Repr::Pack(p) => p.remove_range(i, count),
            Repr::Quick(q) => q.remove_range(i, count),
        }
        self.shrink_check(lim);
    }

    /// Removes up to `limit` (0: all) elements equal to `b`, from the head
    /// (or from the tail with `from_tail`). Returns how many went.
    pub fn remove_eq(&mut self, b: &[u8], limit: usize, from_tail: bool, lim: ListLimits) -> usize {
        let len = self.len();
        let mut hits: Vec<usize> = Vec::new();
        let want = if limit == 0 { usize::MAX } else { limit };
        if from_tail {
            for (i, e) in self.iter().rev().enumerate() {
                if hits.len() == want {
                    break;
                }
                if *e == *b {
                    hits.push(len - 1 - i);
                }
            }
        } else {
            for (i, e) in self.iter().enumerate() {
                if hits.len() == want {
                    break;
                }
                if *e == *b {
                    hits.push(i);
                }
            }
        }
        if hits.is_empty() {
            return 0;
        }
        hits.sort_unstable();
        // From the tail, so that earlier indexes stay valid.
        let mut removed = 0;
        let mut k = hits.len();
        while k > 0 {
            // Runs of adjacent indexes go in one call.
            let hi = hits[k - 1];
            let mut lo = hi;
            k -= 1;
            while k > 0 && hits[k - 1] + 1 == lo {
                lo -= 1;
                k -= 1;
            }
            match &mut self.repr {
                Repr::Pack(p) => p.remove_range(lo, hi - lo + 1),
                Repr::Quick(q) => q.remove_range(lo, hi - lo + 1),
            }
            removed += hi - lo + 1;
        }
        self.shrink_check(lim);
        removed
    }

    /// Builds a list of `items`, with the encoding Redis would give it.
    pub fn from_items<'a, I>(items: I, lim: ListLimits) -> List
    where
        I: IntoIterator<Item = &'a [u8]>,
        I::IntoIter: Clone,
    {
        let mut l = List::new();
        l.push_many(End::Right, items, lim);
        l
    }

    /// Whether the structure's counts agree with its entries (tests).
    #[doc(hidden)]
    pub fn check(&self) -> bool {
        let (a, b) = self.nodes();
        let nodes_ok = a.iter().chain(b.iter()).all(|p| {
            let mut p = p.clone();
            p.decompress();
            p.iter().count() == p.len()
                && p.iter().rev().count() == p.len()
                && p.lp as usize == p.iter().map(lp_entry_size).sum::<usize>()
        });
        let quick_ok = match &self.repr {
            Repr::Pack(p) => !p.is_compressed(),
            Repr::Quick(q) => {
                // The ends raw; a raw node between them one that does not
                // compress (it was tried when it crossed in or changed).
                let (n, d) = (q.nodes.len(), q.depth);
                let compression_ok = q.nodes.iter().enumerate().all(|(i, p)| {
                    if d == 0 || i < d || i + d >= n {
                        !p.is_compressed()
                    } else {
                        p.is_compressed() || {
                            let mut p = p.clone();
                            p.compress();
                            !p.is_compressed()
                        }
                    }
                });
                compression_ok && q.nodes.iter().all(|n| n.len() > 0) && q.nodes.iter().map(Pack::len).sum::<usize>() == q.len
            }
        };
        nodes_ok && quick_ok && self.iter().count() == self.len()
    }

    /// Nodes of a quicklist (1 for a pack), for tests.
    #[doc(hidden)]
    pub fn node_count(&self) -> usize {
        match &self.repr {
            Repr::Pack(_) => 1,
            Repr::Quick(q) => q.nodes.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn lim(fill: i64) -> ListLimits {
        ListLimits { fill, depth: 0 }
    }

    #[test]
    fn ends_and_indexes() {
        let mut l = List::new();
        for i in 0..10 {
            l.push(End::Right, format!("r{i}").as_bytes(), lim(-2));
            l.push(End::Left, format!("l{i}").as_bytes(), lim(-2));
        }
        assert_eq!(l.len(), 20);
        assert_eq!(l.get(0).as_deref(), Some(&b"l9"[..]));
        assert_eq!(l.get(19).as_deref(), Some(&b"r9"[..]));
        assert_eq!(l.iter().rev().next().as_deref(), Some(&b"r9"[..]));
        assert_eq!(l.iter_from(18).collect::<Vec<_>>(), vec![&b"r8"[..], b"r9"]);
        assert_eq!(l.iter_rev_from(1).collect::<Vec<_>>(), vec![&b"l8"[..], b"l9"]);
        assert_eq!(l.pop(End::Left, lim(-2)), Some(b"l9".to_vec()));
        assert_eq!(l.pop(End::Right, lim(-2)), Some(b"r9".to_vec()));
        assert!(l.check());
        assert_eq!(l.encoding(), "listpack");
    }

    #[test]
    fn a_queue_at_either_end_keeps_its_buffer() {
        let lim = lim(-2);
        let mut l = List::new();
        for i in 0..20 {
            l.push(End::Left, format!("job{i:05}").as_bytes(), lim);
        }
        let buf = |l: &List| match &l.repr {
            Repr::Pack(p) => (p.buf.as_ptr(), p.buf.capacity()),
            Repr::Quick(_) => unreachable!(),
        };
        let mut moves = 0;
        let mut at = buf(&l);
        for i in 20..10_000 {
            l.push(End::Left, format!("job{i:05}").as_bytes(), lim);
            assert_eq!(l.pop(End::Right, lim), Some(format!("job{:05}", i - 20).into_bytes()));
            if buf(&l) != at {
                // The buffer may settle once to the queue's steady size.
                if i >= 100 {
                    moves += 1;
                }
                at = buf(&l);
            }
        }
        // Room freed at the back is reused for the front.
        assert_eq!(moves, 0);
        assert!(l.check());
        // And the other way round.
        let mut l = List::new();
        for i in 0..20 {
            l.push(End::Right, format!("job{i:05}").as_bytes(), lim);
        }
        let mut seen = HashSet::new();
        for i in 20..10_000 {
            l.push(End::Right, format!("job{i:05}").as_bytes(), lim);
            assert_eq!(l.pop(End::Left, lim), Some(format!("job{:05}", i - 20).into_bytes()));
            // The buffer grows a size class at a time to the queue's
            // steady size first.
            if i >= 100 {
                seen.insert(buf(&l));
            }
        }
        assert_eq!(seen.len(), 1);
        assert!(l.check());
    }

    #[test]
    fn converts_at_the_count_limit_and_back_at_half() {
        let mut l = List::new();
        for i in 0..128 {
            l.push(End::Right, i.to_string().as_bytes(), lim(128));
        }
        assert_eq!(l.encoding(), "listpack");
        l.push(End::Right, b"x", lim(128));
        assert_eq!(l.encoding(), "quicklist");
        assert!(l.check());
        // Two nodes (the old pack, then "x") stay a quicklist, as in Redis.
        while l.len() > 65 {
            l.pop(End::Left, lim(128));
            assert!(l.check());
        }
        assert_eq!((l.encoding(), l.node_count()), ("quicklist", 2));
        l.pop(End::Right, lim(128));
        assert_eq!(l.encoding(), "listpack");
    }

    #[test]
    fn converts_at_the_byte_limit() {
        // -1: 4096 bytes a node; 40 elements of 100 bytes are 4127 in a listpack.
        let e = [b'a'; 100];
        let mut l = List::new();
        for _ in 0..39 {
            l.push(End::Right, &e, lim(-1));
        }
        assert_eq!(l.encoding(), "listpack");
        l.push(End::Right, &e, lim(-1));
        assert_eq!(l.encoding(), "quicklist");
        for _ in 0..200 {
            l.push(End::Left, &e, lim(-1));
        }
        assert!(l.node_count() > 4);
        // The old pack's last 4 and the node of the 40th: two nodes.
        l.remove_range(0, 235, lim(-1));
        assert_eq!((l.len(), l.encoding()), (5, "quicklist"));
        l.pop(End::Right, lim(-1));
        assert_eq!((l.len(), l.encoding()), (4, "listpack"));
        assert!(l.check());
    }

    /// Nodes stored compressed, for tests.
    fn compressed_nodes(l: &List) -> usize {
        let (a, b) = l.nodes();
        a.iter()
            .chain(b.iter())
            .filter(|p| p.is_compressed())
            .count()
    }

    #[test]
    fn interior_nodes_are_compressed_beyond_the_depth() {
        let e = |i: usize| format!("element:{i:08}");
        let (plain, deep) = (
            ListLimits { fill: 16, depth: 0 },
            ListLimits { fill: 16, depth: 2 },
        );
        let mut a = List::new();
        let mut b = List::new();
        for i in 0..1600 {
            a.push(End::Right, e(i).as_bytes(), plain);
            b.push(End::Right, e(i).as_bytes(), deep);
        }
        assert_eq!((a.node_count(), b.node_count()), (100, 100));
        assert_eq!(compressed_nodes(&a), 0);
        // All but two nodes at each end.
        assert_eq!(compressed_nodes(&b), 96);
        assert!(b.check());
        assert!(
            b.heap_size() * 2 < a.heap_size(),
            "{} vs {}",
            b.heap_size(),
            a.heap_size()
        );
        // Reads through compressed nodes, from either end.
        assert_eq!(b.get(800).as_deref(), Some(e(800).as_bytes()));
        assert!(b
            .iter_from(790)
            .take(30)
            .eq((790..820).map(e).map(String::into_bytes)));
        assert!(b
            .iter_rev_from(820)
            .take(30)
            .eq((791..=820).rev().map(e).map(String::into_bytes)));
        assert!(b.iter().rev().eq(a.iter().rev()));
        // A change in the middle leaves its node compressed again.
        b.set(800, b"changed", deep);
        b.insert(900, b"inserted", deep);
        b.remove_range(400, 100, deep);
        assert!(b.check());
        assert_eq!(b.get(700).as_deref(), Some(&b"changed"[..]));
        assert_eq!(compressed_nodes(&b), b.node_count() - 4);
        // Popping brings compressed nodes to the ends, raw.
        b.pop_with(End::Left, 1000, deep, |_| {});
        assert!(b.check());
        assert_eq!(compressed_nodes(&b), b.node_count().saturating_sub(4));
        // The depth is the one in force when the list became a quicklist.
        let first: Vec<String> = (0..17).map(e).collect();
        let mut c = List::from_items(first.iter().map(|s| s.as_bytes()), deep);
        let mut d = List::from_items([&b"x"[..]], plain);
        assert_eq!((c.encoding(), d.encoding()), ("quicklist", "listpack"));
        for i in 0..1600 {
            c.push(End::Left, e(i).as_bytes(), plain);
            d.push(End::Left, e(i).as_bytes(), deep);
        }
        assert!(c.check() && d.check());
        assert_eq!(compressed_nodes(&c), c.node_count() - 4);
        assert_eq!(compressed_nodes(&d), d.node_count() - 4);
    }

    #[test]
    fn small_or_incompressible_nodes_stay_raw() {
        let lim = ListLimits { fill: 4, depth: 1 };
        // Nodes of four 5-byte entries weigh 7 + 4 * 7 = 35 bytes < 48.
        let small = List::from_items((0..400).map(|_| &b"abcde"[..]), lim);
        assert_eq!(compressed_nodes(&small), 0);
        // Random bytes do not compress by the 8 bytes needed.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let noise: Vec<Vec<u8>> = (0..400)
            .map(|_| {
                (0..40)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        seed as u8
                    })
                    .collect()
            })
            .collect();
        let l = List::from_items(noise.iter().map(|v| &v[..]), lim);
        assert_eq!(compressed_nodes(&l), 0);
        assert!(l.check());
        let same = List::from_items((0..400).map(|_| &[b'q'; 40][..]), lim);
        assert_eq!(compressed_nodes(&same), 98);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Push(bool, Vec<u8>),
        Pop(bool, usize),
        Insert(usize, Vec<u8>),
        Set(usize, Vec<u8>),
        Remove(usize, usize),
        RemoveEq(Vec<u8>, usize, bool),
    }

    fn elem() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => prop::collection::vec(b'a'..=b'c', 0..3),
            1 => prop::collection::vec(any::<u8>(), 0..300),
            1 => (0i64..100000).prop_map(|n| n.to_string().into_bytes()),
            // Compressible: nodes of these are stored LZF-compressed.
            1 => (1usize..200, b'a'..=b'c').prop_map(|(n, c)| vec![c; n]),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (any::<bool>(), elem()).prop_map(|(l, e)| Op::Push(l, e)),
            3 => (any::<bool>(), 0usize..5).prop_map(|(l, n)| Op::Pop(l, n)),
            2 => (any::<usize>(), elem()).prop_map(|(i, e)| Op::Insert(i, e)),
            2 => (any::<usize>(), elem()).prop_map(|(i, e)| Op::Set(i, e)),
            1 => (any::<usize>(), 0usize..40).prop_map(|(i, n)| Op::Remove(i, n)),
            1 => (elem(), 0usize..4, any::<bool>()).prop_map(|(e, n, t)| Op::RemoveEq(e, n, t)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn behaves_as_a_vecdeque(fill in prop_oneof![Just(-1i64), Just(-2), Just(1), Just(3), Just(16), Just(0)],
                                 depth in prop_oneof![Just(0usize), Just(1), Just(2)],
                                 ops in prop::collection::vec(op(), 0..400)) {
            let lim = ListLimits { fill, depth };
            let mut l = List::new();
            let mut m: VecDeque<Vec<u8>> = VecDeque::new();
            for op in ops {
                match op {
                    Op::Push(left, e) => {
                        if left { l.push(End::Left, &e, lim); m.push_front(e) } else { l.push(End::Right, &e, lim); m.push_back(e) }
                    }
                    Op::Pop(left, n) => {
                        let mut got = Vec::new();
                        let end = if left { End::Left } else { End::Right };
                        let k = l.pop_with(end, n, lim, |b| got.push(b.to_vec()));
                        let want: Vec<Vec<u8>> = (0..n).map_while(|_| if left { m.pop_front() } else { m.pop_back() }).collect();
                        prop_assert_eq!(k, want.len());
                        prop_assert_eq!(got, want);
                    }
                    Op::Insert(i, e) => {
                        let i = i % (m.len() + 1);
                        l.insert(i, &e, lim);
                        m.insert(i, e);
                    }
                    Op::Set(i, e) => {
                        if !m.is_empty() {
                            let i = i % m.len();
                            l.set(i, &e, lim);
                            m[i] = e;
                        }
                    }
                    Op::Remove(i, n) => {
                        let i = i % (m.len() + 1);
                        l.remove_range(i, n, lim);
                        let end = (i + n).min(m.len());
                        m.drain(i..end);
                    }
                    Op::RemoveEq(e, n, tail) => {
                        let k = l.remove_eq(&e, n, tail, lim);
                        let want = if n == 0 { usize::MAX } else { n };
                        let mut idx: Vec<usize> = m.iter().enumerate().filter(|(_, x)| **x == e).map(|(i, _)| i).collect();
                        if tail { idx.reverse(); }
                        idx.truncate(want);
                        idx.sort_unstable();
                        for i in idx.iter().rev() { m.remove(*i); }
                        prop_assert_eq!(k, idx.len());
                    }
                }
                prop_assert!(l.check());
                prop_assert_eq!(l.len(), m.len());
                // A single node within half the limit is always a pack again
                // after a removal; a pack never exceeds the limit by a push.
                if l.encoding() == "listpack" {
                    let Repr::Pack(p) = &l.repr else { unreachable!() };
                    prop_assert!(!lim.exceeds(p.lp_bytes(), p.len()) || p.len() <= 1 || fill == 0);
                }
            }
            prop_assert!(l.iter().eq(m.iter().map(|v| &v[..])));
            prop_assert!(l.iter().rev().eq(m.iter().rev().map(|v| &v[..])));
            for i in 0..m.len() {
                let got = l.get(i);
                prop_assert_eq!(got.as_deref(), Some(&m[i][..]));
            }
            if !m.is_empty() {
                let s = m.len() / 3;
                prop_assert!(l.iter_from(s).eq(m.iter().skip(s).map(|v| &v[..])));
                prop_assert!(l.iter_rev_from(s).eq(m.iter().take(s + 1).rev().map(|v| &v[..])));
            }
        }

        /// The same edits on a list under a key (kept in its item while
        /// small, apart when not, moved between the two by the edits) and
        /// on a plain [`List`]: the same replies, elements and encodings,
        /// the key kept where the bounds say, its header true, its bytes
        /// accounted, and the key gone when the list empties.
        #[test]
        fn under_a_key_it_behaves_as_a_plain_list(fill in prop_oneof![Just(-1i64), Just(-2), Just(3), Just(16), Just(0)],
                                                  ops in prop::collection::vec(op(), 0..300)) {
            use crate::entry::{EntryExt, ListMut};
            use crate::shard::{tests::assert_accounted, Access, Shard};
            use crate::value::Value;
            let lim = ListLimits { fill, depth: 0 };
            let mut l = List::new();
            let mut sh = Shard::new();
            let h = sh.hash_key(b"l");
            for op in ops {
                let mut keyed = |f: &mut dyn FnMut(&mut ListMut<'_>) -> usize| {
                    sh.modify_or_create(b"l", h, 0, Access::NoTouch, || Some(Value::List(List::new())), |e, ed| {
                        let mut k = e.list_mut().expect("a list");
                        let r = f(&mut k);
                        k.finish(ed);
                        ed.changed();
                        r
                    })
                    .expect("created")
                };
                match op {
                    Op::Push(left, e) => {
                        let end = if left { End::Left } else { End::Right };
                        l.push(end, &e, lim);
                        keyed(&mut |k| { k.push(end, &e, lim); 0 });
                    }
                    Op::Pop(left, n) => {
                        let end = if left { End::Left } else { End::Right };
                        let mut want = Vec::new();
                        let a = l.pop_with(end, n, lim, |b| want.push(b.to_vec()));
                        let mut got = Vec::new();
                        let b = keyed(&mut |k| k.pop_with(end, n, lim, |b| got.push(b.to_vec())));
                        prop_assert_eq!(a, b);
                        prop_assert_eq!(got, want);
                    }
                    Op::Insert(i, e) => {
                        let i = i % (l.len() + 1);
                        l.insert(i, &e, lim);
                        keyed(&mut |k| { k.insert(i, &e, lim); 0 });
                    }
                    Op::Set(i, e) => {
                        if !l.is_empty() {
                            let i = i % l.len();
                            l.set(i, &e, lim);
                            keyed(&mut |k| { k.set(i, &e, lim); 0 });
                        }
                    }
                    Op::Remove(i, n) => {
                        let i = i % (l.len() + 1);
                        l.remove_range(i, n, lim);
                        keyed(&mut |k| { k.remove_range(i, n, lim); 0 });
                    }
                    Op::RemoveEq(e, n, tail) => {
                        let a = l.remove_eq(&e, n, tail, lim);
                        let b = keyed(&mut |k| k.remove_eq(&e, n, tail, lim));
                        prop_assert_eq!(a, b);
                    }
                }
                assert_accounted(&sh);
                let Some(e) = sh.get(b"l", h, 0) else {
                    prop_assert!(l.is_empty());
                    continue;
                };
                let k = e.list().expect("a list");
                prop_assert_eq!(k.len(), l.len());
                prop_assert!(!k.is_empty());
                prop_assert_eq!(k.encoding(), l.encoding());
                prop_assert!(k.iter().eq(l.iter()));
                prop_assert!(k.iter().rev().eq(l.iter().rev()));
                let s = l.len() / 3;
                prop_assert!(k.iter_from(s).eq(l.iter_from(s)));
                prop_assert!(k.iter_rev_from(s).eq(l.iter_rev_from(s)));
                prop_assert_eq!(k.get(s), l.get(s));
                prop_assert!(k.node_lens().eq(l.node_lens()));
                match k {
                    ListRef::Inline(p) => {
                        prop_assert!(p.check());
                        // Room within a size class of what is held, or a
                        // quarter of it once pops made it so.
                        let (used, held) = p.held();
                        prop_assert!(held <= 64 || used * 4 >= held, "{} of {}", used, held);
                        prop_assert!(l.inline_form(inline::INLINE_MAX).is_some());
                        prop_assert!(e.boxed().is_none());
                    }
                    ListRef::Apart(_) => prop_assert!(l.inline_form(inline::INLINE_BACK).is_none()),
                }
            }
        }
    }
}
