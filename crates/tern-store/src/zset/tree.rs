//! The order of a large sorted set: a counted B+tree of slab ids (see
//! the parent module), whose inner nodes keep their children's first ids
//! and a copy of each one's score.

/// Ids per leaf and children per inner node (tiny under test, so that
/// the property tests split, merge and collapse nodes at every depth).
#[cfg(not(test))]
pub(super) const LEAF_MAX: usize = 128;
#[cfg(not(test))]
pub(super) const INNER_MAX: usize = 64;
#[cfg(test)]
pub(super) const LEAF_MAX: usize = 6;
#[cfg(test)]
pub(super) const INNER_MAX: usize = 5;

#[derive(Clone, Debug)]
pub(super) enum Node {
    Leaf(Vec<u32>),
    Inner(Box<Inner>),
}

/// Children with their element counts and first ids (the first id lets a
/// search pick the child without descending into its neighbours), each
/// with a copy of its score: a search step compares with the node's copy,
/// and reads the slab only when the scores tie.
#[derive(Clone, Debug)]
pub(super) struct Inner {
    pub(super) kids: Vec<Node>,
    pub(super) counts: Vec<usize>,
    pub(super) firsts: Vec<(u32, f64)>,
}

impl Inner {
    /// The kid holding position `pos` (below `self`'s count) and the
    /// position within it.
    #[inline]
    pub(super) fn kid_at(&self, mut pos: usize) -> (usize, usize) {
        let mut i = 0;
        while pos >= self.counts[i] {
            pos -= self.counts[i];
            i += 1;
        }
        (i, pos)
    }

    /// Takes kid `i`'s first id (and its score) after a change below it.
    #[inline]
    pub(super) fn set_first(&mut self, i: usize, score_of: &impl ScoreOf) {
        let f = self.kids[i].first();
        if f != self.firsts[i].0 {
            self.firsts[i] = (f, self.kids[i].first_score(score_of));
        }
    }
}

/// A slot's score by id: what the tree keeps copies of.
pub(super) trait ScoreOf: Fn(u32) -> f64 {}
impl<F: Fn(u32) -> f64> ScoreOf for F {}


impl Node {
    pub(super) fn first(&self) -> u32 {
        match self {
            Node::Leaf(v) => v[0],
            Node::Inner(i) => i.firsts[0].0,
        }
    }

    pub(super) fn first_score(&self, score_of: &impl ScoreOf) -> f64 {
        match self {
            Node::Leaf(v) => score_of(v[0]),
            Node::Inner(i) => i.firsts[0].1,
        }
    }

    /// The element at `pos` now has `score` (changed in place, its
    /// position kept): the copies of it where it is a kid's first follow.
    pub(super) fn rescore(&mut self, pos: usize, score: f64) {
        if let Node::Inner(inner) = self {
            let (i, pos) = inner.kid_at(pos);
            if pos == 0 {
                inner.firsts[i].1 = score;
            }
            inner.kids[i].rescore(pos, score);
        }
    }

    pub(super) fn count(&self) -> usize {
        match self {
            Node::Leaf(v) => v.len(),
            Node::Inner(i) => i.counts.iter().sum(),
        }
    }

    /// Under a quarter full: worth merging into a neighbour.
    pub(super) fn small(&self) -> bool {
        match self {
            Node::Leaf(v) => v.len() * 4 < LEAF_MAX,
            Node::Inner(i) => i.kids.len() * 4 < INNER_MAX,
        }
    }

    pub(super) fn width(&self) -> usize {
        match self {
            Node::Leaf(v) => v.len(),
            Node::Inner(i) => i.kids.len(),
        }
    }

    /// Inserts `id` at position `pos`; a node that overflows splits and
    /// returns its right half (`nodes` counts nodes for memory).
    pub(super) fn insert_at(&mut self, pos: usize, id: u32, nodes: &mut usize, score_of: &impl ScoreOf) -> Option<Node> {
        match self {
            Node::Leaf(v) => {
                v.insert(pos, id);
                if v.len() <= LEAF_MAX {
                    return None;
                }
                // Appending (timestamps, counters) fills leaves whole.
                let mid = if pos == LEAF_MAX {
                    LEAF_MAX
                } else {
                    v.len() / 2
                };
                let mut right = Vec::with_capacity(LEAF_MAX + 1);
                right.extend_from_slice(&v[mid..]);
                v.truncate(mid);
                *nodes += 1;
                Some(Node::Leaf(right))
            }
            Node::Inner(inner) => {
                let n = inner.kids.len();
                let mut i = 0;
                let mut p = pos;
                while i + 1 < n && p > inner.counts[i] {
                    p -= inner.counts[i];
                    i += 1;
                }
                let split = inner.kids[i].insert_at(p, id, nodes, score_of);
                inner.counts[i] += 1;
                inner.set_first(i, score_of);
                let sib = split?;
                let c = sib.count();
                inner.counts[i] -= c;
                inner.firsts.insert(i + 1, (sib.first(), sib.first_score(score_of)));
                inner.counts.insert(i + 1, c);
                inner.kids.insert(i + 1, sib);
                if inner.kids.len() <= INNER_MAX {
                    return None;
                }
                let mid = if i + 1 == INNER_MAX {
                    INNER_MAX
                } else {
                    inner.kids.len() / 2
                };
                let right = Inner {
                    kids: split_vec(&mut inner.kids, mid, INNER_MAX + 1),
                    counts: split_vec(&mut inner.counts, mid, INNER_MAX + 1),
                    firsts: split_vec(&mut inner.firsts, mid, INNER_MAX + 1),
                };
                *nodes += 1;
                Some(Node::Inner(Box::new(right)))
            }
        }
    }

    /// Removes and returns the id at `pos`, merging a child left small
    /// into a neighbour when they fit in one node.
    pub(super) fn remove_at(&mut self, pos: usize, nodes: &mut usize, score_of: &impl ScoreOf) -> u32 {
        match self {
            Node::Leaf(v) => v.remove(pos),
            Node::Inner(inner) => {
                let (i, p) = inner.kid_at(pos);
                let id = inner.kids[i].remove_at(p, nodes, score_of);
                inner.counts[i] -= 1;
                if inner.counts[i] == 0 {
                    inner.kids.remove(i);
                    inner.counts.remove(i);
                    inner.firsts.remove(i);
                    *nodes -= 1;
                    return id;
                }
                inner.set_first(i, score_of);
                if inner.kids[i].small() && inner.kids.len() > 1 {
                    let j = if i + 1 < inner.kids.len() { i } else { i - 1 };
                    let max = if matches!(inner.kids[j], Node::Leaf(_)) {
                        LEAF_MAX
                    } else {
                        INNER_MAX
                    };
                    if inner.kids[j].width() + inner.kids[j + 1].width() <= max {
                        let right = inner.kids.remove(j + 1);
                        let c = inner.counts.remove(j + 1);
                        inner.firsts.remove(j + 1);
                        inner.counts[j] += c;
                        match (&mut inner.kids[j], right) {
                            (Node::Leaf(a), Node::Leaf(b)) => a.extend_from_slice(&b),
                            (Node::Inner(a), Node::Inner(b)) => {
                                let b = *b;
                                a.kids.extend(b.kids);
                                a.counts.extend(b.counts);
                                a.firsts.extend(b.firsts);
                            }
                            _ => unreachable!("siblings are at one depth"),
                        }
                        *nodes -= 1;
                    }
                }
                id
            }
        }
    }

    /// How many ids `below` holds for (a predicate true for a prefix of
    /// the order, then false).
    /// `by_score` decides from a score alone where it can (None: a tie,
    /// for `below` to settle from the slab); `touch` asks for an id's slab
    /// entry ahead of `below` reading it.
    pub(super) fn partition(&self, below: &impl Fn(u32) -> bool, by_score: &impl Fn(f64) -> Option<bool>, touch: &impl Fn(u32)) -> usize {
        self.descend(below, by_score, &|v| partition_ahead(v, below, touch))
    }

    /// The position of `id`, which the tree holds and for which `below`
    /// holds on exactly the ids before it: the descent of
    /// [`Self::partition`], then a scan of the leaf's ids for `id` (its
    /// consecutive lines, where a binary search would read a slab entry
    /// elsewhere per probe). The first id of a leaf is reached from the
    /// leaf before it (all of which comes before it): the scan misses
    /// there, and the search gives the count.
    pub(super) fn position(&self, id: u32, below: &impl Fn(u32) -> bool, by_score: &impl Fn(f64) -> Option<bool>, touch: &impl Fn(u32)) -> usize {
        self.descend(below, by_score, &|v| {
            v.iter().position(|&x| x == id).unwrap_or_else(|| partition_ahead(v, below, touch))
        })
    }

    /// Down to the leaf where `below` turns false, picking each child by
    /// the copies of the first ids' scores (`by_score`, then `below` on a
    /// tie); `leaf` gives the count within it.
    fn descend(&self, below: &impl Fn(u32) -> bool, by_score: &impl Fn(f64) -> Option<bool>, leaf: &impl Fn(&[u32]) -> usize) -> usize {
        match self {
            Node::Leaf(v) => leaf(v),
            Node::Inner(inner) => {
                // Counted over every copy rather than searched: the node's
                // lines are asked for together and arrive in parallel, where
                // a binary search waits for one line per probe. The copies
                // below the score are a prefix; ties after them are settled
                // by `below`.
                let f = &inner.firsts;
                let mut j = f.iter().map(|&(_, s)| usize::from(by_score(s) == Some(true))).sum::<usize>();
                while j < f.len() && by_score(f[j].1).is_none() && below(f[j].0) {
                    j += 1;
                }
                if j == 0 {
                    return 0;
                }
                inner.counts[..j - 1].iter().sum::<usize>() + inner.kids[j - 1].descend(below, by_score, leaf)
            }
        }
    }

    /// Takes the id at `pos` out of its leaf and puts it back where
    /// `below` (true for the leaf's other ids that come before it, now
    /// that its score changed) places it among them, if it stays inside
    /// the leaf with an id before it both times: then no count and no copy
    /// of a first id above changes. Otherwise the leaf is left as it was,
    /// and the answer says whether the id certainly leaves its place at
    /// the leaf's edge ([`Shift::Away`]) or may keep it ([`Shift::Edge`]).
    pub(super) fn move_in_leaf(&mut self, mut pos: usize, below: &impl Fn(u32) -> bool, touch: &impl Fn(u32)) -> Shift {
        let mut node = self;
        loop {
            match node {
                Node::Inner(inner) => {
                    let (i, p) = inner.kid_at(pos);
                    pos = p;
                    node = &mut inner.kids[i];
                }
                Node::Leaf(v) => {
                    if pos == 0 {
                        return Shift::Edge;
                    }
                    let id = v.remove(pos);
                    // Its ends first (two reads, asked for together): a new
                    // score far off, ZADD's usual case, needs no search.
                    let last = v.len() - 1;
                    touch(v[0]);
                    touch(v[last]);
                    let j = if !below(v[0]) {
                        0
                    } else if below(v[last]) {
                        v.len()
                    } else {
                        partition_ahead(v, below, touch)
                    };
                    // After every other id of the leaf: in place if it was
                    // last and the next leaf starts after it, which only
                    // the caller can tell.
                    let shift = match j {
                        0 => Shift::Away,
                        j if j == v.len() && j == pos => Shift::Edge,
                        j if j == v.len() => Shift::Away,
                        _ => Shift::Moved,
                    };
                    v.insert(if shift == Shift::Moved { j } else { pos }, id);
                    return shift;
                }
            }
        }
    }

    pub(super) fn get(&self, pos: usize) -> u32 {
        match self {
            Node::Leaf(v) => v[pos],
            Node::Inner(inner) => {
                let (i, pos) = inner.kid_at(pos);
                inner.kids[i].get(pos)
            }
        }
    }

    /// Calls `f` on the ids at positions `start..end`, backwards if `rev`,
    /// until it returns false (then false). Inside a leaf the id
    /// [`READ_AHEAD`] places further on is asked for (`touch`) as each is
    /// visited, so that the walk's slab reads overlap.
    pub(super) fn for_range(&self, start: usize, end: usize, rev: bool, f: &mut impl FnMut(u32) -> bool, touch: &impl Fn(u32)) -> bool {
        match self {
            Node::Leaf(v) => {
                let ids = &v[start..end];
                let n = ids.len();
                let at = |i: usize| if rev { ids[n - 1 - i] } else { ids[i] };
                (0..n.min(READ_AHEAD)).for_each(|i| touch(at(i)));
                for i in 0..n {
                    if i + READ_AHEAD < n {
                        touch(at(i + READ_AHEAD));
                    }
                    if !f(at(i)) {
                        return false;
                    }
                }
                true
            }
            Node::Inner(inner) => {
                // The kids the range overlaps are consecutive: from the one
                // holding `start` to the one holding `end - 1`, walked in
                // the wanted direction with no list of them built.
                let (mut first, mut off) = (0, 0);
                while off + inner.counts[first] <= start {
                    off += inner.counts[first];
                    first += 1;
                }
                let (mut last, mut last_off) = (first, off);
                while last_off + inner.counts[last] < end {
                    last_off += inner.counts[last];
                    last += 1;
                }
                let span = |k: usize, off: usize| (start.max(off) - off, end.min(off + inner.counts[k]) - off);
                if rev {
                    let mut off = last_off;
                    for k in (first..=last).rev() {
                        let (a, b) = span(k, off);
                        if !inner.kids[k].for_range(a, b, rev, f, touch) {
                            return false;
                        }
                        if k > first {
                            off -= inner.counts[k - 1];
                        }
                    }
                } else {
                    let mut off = off;
                    for k in first..=last {
                        let (a, b) = span(k, off);
                        if !inner.kids[k].for_range(a, b, rev, f, touch) {
                            return false;
                        }
                        off += inner.counts[k];
                    }
                }
                true
            }
        }
    }
}

/// How far ahead of a range walk its slab entries are asked for: enough
/// lines in flight to hide a miss behind the work on the ones before.
const READ_AHEAD: usize = 8;

/// What [`Node::move_in_leaf`] did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Shift {
    /// Moved (or kept) inside its leaf, the leaf's first id the same.
    Moved,
    /// Not moved: its place is before its leaf's first id, or after its
    /// last when it was not last: it moves out of the leaf or to its edge.
    Away,
    /// Not moved: it is its leaf's first id, or its last and may stay so.
    Edge,
}

/// `v.partition_point(below)`, a binary search whose probes each read a
/// slab entry elsewhere in memory (a cache miss apiece in a large set):
/// while one probe is read, the four the two steps after it may make are
/// asked for (`touch`), so that each step waits for a line already on its
/// way rather than starting its own miss. Over a 1M-member geo index,
/// GEOSEARCH BYRADIUS 5 km at pipeline 16 went from 80K to 114K requests
/// a second asking one step ahead, and to 124K two steps ahead.
fn partition_ahead(v: &[u32], below: &impl Fn(u32) -> bool, touch: &impl Fn(u32)) -> usize {
    // The probe of `lo..hi`, and the probes the two steps after it may make.
    let probe = |lo: usize, hi: usize| lo + (hi - lo) / 2;
    let ask = |lo: usize, hi: usize| {
        if lo < hi {
            touch(v[probe(lo, hi)]);
        }
    };
    let (mut lo, mut hi) = (0, v.len());
    // The first probe and the two the step after it may make; from then on
    // each step asks for those two steps after it (the next step's were
    // asked for by the one before).
    ask(lo, hi);
    if lo < hi {
        let mid = probe(lo, hi);
        ask(lo, mid);
        ask(mid + 1, hi);
    }
    while lo < hi {
        let mid = probe(lo, hi);
        let (left, right) = (probe(lo, mid), probe(mid + 1, hi));
        ask(lo, left);
        ask(left + 1, mid);
        ask(mid + 1, right);
        ask(right + 1, hi);
        if below(v[mid]) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

pub(super) fn split_vec<T>(v: &mut Vec<T>, mid: usize, cap: usize) -> Vec<T> {
    let mut right = Vec::with_capacity(cap);
    right.extend(v.drain(mid..));
    right
}

/// The order: a counted B+tree of slab ids.
#[derive(Clone, Debug)]
pub(super) struct Tree {
    pub(super) root: Node,
    pub(super) len: usize,
    pub(super) nodes: usize,
}

impl Default for Tree {
    fn default() -> Self {
        Tree {
            root: Node::Leaf(Vec::with_capacity(LEAF_MAX + 1)),
            len: 0,
            nodes: 1,
        }
    }
}

impl Tree {
    pub(super) fn insert_at(&mut self, pos: usize, id: u32, score_of: &impl ScoreOf) {
        if let Some(right) = self.root.insert_at(pos, id, &mut self.nodes, score_of) {
            let left = std::mem::replace(&mut self.root, Node::Leaf(Vec::new()));
            let (cl, cr) = (left.count(), right.count());
            let mut kids = Vec::with_capacity(INNER_MAX + 1);
            let mut counts = Vec::with_capacity(INNER_MAX + 1);
            let mut firsts = Vec::with_capacity(INNER_MAX + 1);
            firsts.extend([(left.first(), left.first_score(score_of)), (right.first(), right.first_score(score_of))]);
            counts.extend([cl, cr]);
            kids.extend([left, right]);
            self.root = Node::Inner(Box::new(Inner {
                kids,
                counts,
                firsts,
            }));
            self.nodes += 1;
        }
        self.len += 1;
    }

    pub(super) fn remove_at(&mut self, pos: usize, score_of: &impl ScoreOf) -> u32 {
        let id = self.root.remove_at(pos, &mut self.nodes, score_of);
        self.len -= 1;
        if self.len == 0 {
            *self = Tree::default();
            return id;
        }
        loop {
            let only = match &mut self.root {
                Node::Inner(i) if i.kids.len() == 1 => i.kids.pop(),
                _ => None,
            };
            match only {
                Some(k) => {
                    self.root = k;
                    self.nodes -= 1;
                }
                None => break,
            }
        }
        id
    }

    pub(super) fn partition(&self, below: impl Fn(u32) -> bool, by_score: impl Fn(f64) -> Option<bool>, touch: impl Fn(u32)) -> usize {
        if self.len == 0 {
            return 0;
        }
        self.root.partition(&below, &by_score, &touch)
    }

    /// [`Node::position`] from the root.
    pub(super) fn position(&self, id: u32, below: impl Fn(u32) -> bool, by_score: impl Fn(f64) -> Option<bool>, touch: impl Fn(u32)) -> usize {
        if self.len == 0 {
            return 0;
        }
        self.root.position(id, &below, &by_score, &touch)
    }

    /// Heap bytes of the nodes (each allocated at its full width).
    pub(super) fn heap(&self) -> usize {
        let leaf = tern_table::size_class((LEAF_MAX + 1) * 4);
        let inner = tern_table::size_class(std::mem::size_of::<Inner>())
            + tern_table::size_class((INNER_MAX + 1) * (std::mem::size_of::<Node>() + 8 + 16));
        // Inner nodes are about one in LEAF_MAX/2 of the nodes.
        let inners = self.nodes / (INNER_MAX / 2) + usize::from(self.nodes > 1);
        (self.nodes - inners.min(self.nodes)) * leaf + inners * inner
    }
}

#[cfg(test)]
mod tests {
    use super::partition_ahead;
    use std::cell::RefCell;

    /// The search answers as `partition_point` for every length a leaf can
    /// have and every split, and asks only for ids of the leaf, each of the
    /// probes it then reads among them.
    #[test]
    fn partition_ahead_is_partition_point() {
        for n in 0..=140usize {
            let v: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
            for split in 0..=n {
                let asked = RefCell::new(Vec::new());
                let read = RefCell::new(Vec::new());
                let below = |id: u32| {
                    read.borrow_mut().push(id);
                    id < (split as u32) * 3
                };
                let got = partition_ahead(&v, &below, &|id| asked.borrow_mut().push(id));
                assert_eq!(got, v.partition_point(|&id| id < (split as u32) * 3), "n {n} split {split}");
                assert!(asked.borrow().iter().all(|id| v.contains(id)));
                assert!(read.borrow().iter().all(|id| asked.borrow().contains(id)), "n {n} split {split}: a probe read without being asked for");
            }
        }
    }
}
