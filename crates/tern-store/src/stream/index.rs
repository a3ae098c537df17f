//! The ordered index of a stream's nodes: a ring buffer of (master ID,
//! node) pairs kept sorted by ID, searched by bisection.
//!
//! A B-tree map would do the same, but its nodes hold 11 entries and
//! one filled in order (as a stream's always is: a new node has the
//! highest ID) leaves them about half full, some 90 bytes per stream
//! node, more than Redis's radix tree spends. Here an entry costs its 40
//! bytes and the buffer's slack, which is kept small: the buffer grows
//! by a quarter at a time (not doubling), up to the end of the
//! allocator's size class it lands in (room the allocator hands out
//! anyway), and gives room back once less than half of it is used.
//!
//! What streams do to their nodes suits a ring buffer: appending at the
//! back, trimming at the front (both O(1)), and lookups by bisection.
//! Only XDEL freeing a node in the middle moves entries (the shorter
//! side's), and that is rare.

use std::collections::VecDeque;
use std::mem::size_of;

use super::node::Node;
use super::StreamId;

/// The nodes by master ID, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct NodeIndex {
    nodes: VecDeque<(StreamId, Node)>,
}

/// Bytes of one entry.
const ENTRY: usize = size_of::<(StreamId, Node)>();

/// The capacity to give `len` entries: a quarter more (at least one),
/// rounded up to fill the allocator's size class.
fn room_for(len: usize) -> usize {
    let want = len + (len / 4).max(1);
    tern_table::size_class(want * ENTRY) / ENTRY
}

impl NodeIndex {
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Heap bytes held: the buffer, at its allocator size class.
    pub fn heap_size(&self) -> usize {
        match self.nodes.capacity() {
            0 => 0,
            cap => tern_table::size_class(cap * ENTRY),
        }
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (StreamId, &Node)> + '_ {
        self.nodes.iter().map(|(k, n)| (*k, n))
    }

    pub fn keys(&self) -> impl Iterator<Item = StreamId> + '_ {
        self.nodes.iter().map(|(k, _)| *k)
    }

    #[cfg(test)]
    pub fn values(&self) -> impl Iterator<Item = &Node> + '_ {
        self.nodes.iter().map(|(_, n)| n)
    }

    /// The number of nodes whose master ID is at most `id`.
    fn count_to(&self, id: StreamId) -> usize {
        self.nodes.partition_point(|(k, _)| *k <= id)
    }

    /// The position of node `key`.
    fn find(&self, key: StreamId) -> Option<usize> {
        self.nodes.binary_search_by_key(&key, |(k, _)| *k).ok()
    }

    pub fn last_mut(&mut self) -> Option<(StreamId, &mut Node)> {
        self.nodes.back_mut().map(|(k, n)| (*k, n))
    }

    pub fn first(&self) -> Option<(StreamId, &Node)> {
        self.nodes.front().map(|(k, n)| (*k, n))
    }

    /// The first node after node `key`.
    pub fn next_after(&self, key: StreamId) -> Option<(StreamId, &Node)> {
        self.nodes.get(self.count_to(key)).map(|(k, n)| (*k, n))
    }

    /// The nodes beginning at or before `id`, in order.
    pub fn up_to(&self, id: StreamId) -> impl DoubleEndedIterator<Item = (StreamId, &Node)> + '_ {
        self.nodes.range(..self.count_to(id)).map(|(k, n)| (*k, n))
    }

    /// The nodes from the one that may hold `id` (the last to begin at or
    /// before it, else the first) on, in order.
    pub fn onward(&self, id: StreamId) -> impl Iterator<Item = (StreamId, &Node)> + '_ {
        self.nodes.range(self.count_to(id).saturating_sub(1)..).map(|(k, n)| (*k, n))
    }

    /// The node that may hold `id`: the last to begin at or before it.
    pub fn holder_mut(&mut self, id: StreamId) -> Option<(StreamId, &mut Node)> {
        let at = self.count_to(id).checked_sub(1)?;
        self.nodes.get_mut(at).map(|(k, n)| (*k, n))
    }

    pub fn get_mut(&mut self, key: StreamId) -> Option<&mut Node> {
        let at = self.find(key)?;
        Some(&mut self.nodes[at].1)
    }

    /// Adds node `key`, which no node has. A new node is the highest (as
    /// appends and RDB's order make it), so it goes at the back; any other
    /// is put in its place.
    pub fn insert(&mut self, key: StreamId, node: Node) {
        if self.nodes.len() == self.nodes.capacity() {
            self.nodes.reserve_exact(room_for(self.nodes.len()) - self.nodes.len());
        }
        let at = self.nodes.partition_point(|(k, _)| *k < key);
        debug_assert!(self.nodes.get(at).is_none_or(|(k, _)| *k != key), "node {key:?} exists");
        self.nodes.insert(at, (key, node));
    }

    pub fn remove(&mut self, key: StreamId) -> Option<Node> {
        let at = self.find(key)?;
        let (_, node) = self.nodes.remove(at)?;
        let len = self.nodes.len();
        if len < self.nodes.capacity() / 2 {
            self.nodes.shrink_to(if len == 0 { 0 } else { room_for(len) });
        }
        Some(node)
    }
}
