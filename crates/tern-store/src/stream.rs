//! Stream values: entries of field-value pairs under increasing IDs, and
//! the consumer groups that read them.
//!
//! ```text
//!  Stream ─ nodes: NodeIndex of (master ID, Node)  ordered as Redis's rax of 128-bit big-endian IDs
//!         │        Node = one Redis stream listpack:
//!         │   master entry: | count | deleted | n | field_1 … field_n | 0 |
//!         │   each entry:   | flags | ms-diff | seq-diff | [n | field_1 … field_n] | value_1 … value_n | lp-count |
//!         │                   flags: DELETED 1, SAMEFIELDS 2 (the master's fields: only values stored)
//!         │                   lp-count: the entry's elements after itself, to walk right to left
//!         ├─ length, last_id, first_id, max_deleted_entry_id, entries_added
//!         └─ groups: BTreeMap<name, Group>     (see `group`)
//! ```
//!
//! The nodes are the listpacks Redis builds, byte for byte: an RDB save
//! or a DUMP copies them, a load checks them and keeps them. A node's
//! first entry is its master entry's ID and fields; later entries that
//! have the same fields store only their values. An entry is appended to
//! the last node until that node reaches `stream-node-max-bytes` or
//! `stream-node-max-entries` ([`StreamLimits`]), as Redis's
//! `streamAppendItem` decides; then a new node starts.
//!
//! Nothing is removed from a listpack: XDEL and trimming mark entries
//! deleted (tombstones), and a node is freed when no live entry is left
//! in it. So every node holds at least one live entry (Redis 8.4's exact
//! trim can leave a node of tombstones only; here, as in the fix Redis
//! made later, such a node is freed, and one in a file is dropped).
//!
//! Goals: Redis's bytes (nodes, RDB, DUMP), its node splitting, its
//! trimming (exact, approximate by whole nodes, LIMIT, and Redis 8.2's
//! KEEPREF / DELREF / ACKED), its read counters (`entries_read`, lag) and
//! its consumer group bookkeeping. Non-goals: the radix tree itself (a
//! sorted ring buffer orders the nodes, see `index`; XINFO's
//! `radix-tree-nodes` is worked out from [`Stream::node_ids`]), a garbage
//! collection of tombstones (Redis has none either).

use std::collections::BTreeMap;

use crate::listpack::{self, RdbError};

mod group;
mod index;
mod node;
#[cfg(test)]
pub(crate) mod tests;

pub use group::{ClaimCount, Consumer, Group, Nack};
pub use node::{FieldIter, Fields};
use index::NodeIndex;
use node::Node;

/// A stream entry's ID: milliseconds and a sequence number, ordered as
/// the pair (Redis's `streamID`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

impl StreamId {
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    pub const MAX: StreamId = StreamId { ms: u64::MAX, seq: u64::MAX };

    pub const fn new(ms: u64, seq: u64) -> Self {
        StreamId { ms, seq }
    }

    /// The next ID (the sequence carries into the milliseconds), or None
    /// after [`Self::MAX`] (Redis's `streamIncrID`).
    pub fn incr(self) -> Option<Self> {
        match (self.ms, self.seq) {
            (u64::MAX, u64::MAX) => None,
            (ms, u64::MAX) => Some(StreamId { ms: ms + 1, seq: 0 }),
            (ms, seq) => Some(StreamId { ms, seq: seq + 1 }),
        }
    }

    /// The previous ID, or None before [`Self::MIN`] (`streamDecrID`).
    pub fn decr(self) -> Option<Self> {
        match (self.ms, self.seq) {
            (0, 0) => None,
            (ms, 0) => Some(StreamId { ms: ms - 1, seq: u64::MAX }),
            (ms, seq) => Some(StreamId { ms, seq: seq - 1 }),
        }
    }

    /// Appends the `ms-seq` text replies and commands carry.
    pub fn write(&self, out: &mut Vec<u8>) {
        let mut b = itoa::Buffer::new();
        out.extend_from_slice(b.format(self.ms).as_bytes());
        out.push(b'-');
        out.extend_from_slice(b.format(self.seq).as_bytes());
    }

    /// The `ms-seq` text, owned.
    pub fn to_text(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(41);
        self.write(&mut v);
        v
    }

    /// The 128-bit big-endian form (a node's key in RDB, a PEL ID).
    pub fn to_be_bytes(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.ms.to_be_bytes());
        b[8..].copy_from_slice(&self.seq.to_be_bytes());
        b
    }

    pub fn from_be_bytes(b: [u8; 16]) -> Self {
        let mut ms = [0u8; 8];
        let mut seq = [0u8; 8];
        ms.copy_from_slice(&b[..8]);
        seq.copy_from_slice(&b[8..]);
        StreamId { ms: u64::from_be_bytes(ms), seq: u64::from_be_bytes(seq) }
    }
}

/// Node limits (`stream-node-max-bytes`, `stream-node-max-entries`; 0:
/// no limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamLimits {
    pub node_max_bytes: usize,
    pub node_max_entries: usize,
}

impl Default for StreamLimits {
    fn default() -> Self {
        StreamLimits { node_max_bytes: 4096, node_max_entries: 100 }
    }
}

/// The most bytes a node's listpack grows to whatever the limits say (a
/// listpack's lengths are 32-bit), and the most an entry's fields and
/// values may add up to: XADD refuses a larger entry.
pub const MAX_NODE_BYTES: usize = 1 << 30;

/// The room a new node is given up front: Redis preallocates at most
/// this much, so that a huge byte limit does not cost memory per node.
const NODE_PREALLOC: usize = 4096;

/// What a trim keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimTo {
    /// At most this many entries (MAXLEN).
    MaxLen(u64),
    /// No entry below this ID (MINID).
    MinId(StreamId),
}

/// What deleting entries does to the consumer groups' references to them
/// (Redis 8.2's KEEPREF / DELREF / ACKED; without groups all three are
/// the same).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RefPolicy {
    /// Delete; the groups' PELs keep the IDs.
    #[default]
    KeepRef,
    /// Delete, and remove the IDs from every group's PEL.
    DelRef,
    /// Delete only entries every group has delivered and acknowledged.
    Acked,
}

/// A stream: see the module docs.
#[derive(Clone, Debug, Default)]
pub struct Stream {
    nodes: NodeIndex,
    /// The nodes' buffers at their allocator size classes, kept as they
    /// change: a write measures the value before and after, and a
    /// stream's nodes are too many to walk each time.
    node_heap: usize,
    length: u64,
    last_id: StreamId,
    first_id: StreamId,
    max_deleted: StreamId,
    entries_added: u64,
    groups: BTreeMap<Box<[u8]>, Group>,
}

/// Equal content: the same nodes, counters and groups (however much room
/// the buffers keep).
impl PartialEq for Stream {
    fn eq(&self, o: &Self) -> bool {
        (self.length, self.last_id, self.first_id, self.max_deleted, self.entries_added)
            == (o.length, o.last_id, o.first_id, o.max_deleted, o.entries_added)
            && self.nodes == o.nodes
            && self.groups == o.groups
    }
}

/// What a node's buffer costs the allocator.
fn node_cost(n: &Node) -> usize {
    tern_table::size_class(n.capacity())
}

/// Heap bytes of a B-tree map of `n` entries, estimated: its nodes hold
/// 5 to 11 entries, and the nodes of maps filled in order run two-thirds
/// full or more, so each entry costs its size and a half.
pub(crate) fn map_heap<K, V>(n: usize) -> usize {
    n * (std::mem::size_of::<K>() + std::mem::size_of::<V>()) * 3 / 2
}

impl Stream {
    pub fn new() -> Self {
        Self::default()
    }

    /// Live entries.
    pub fn len(&self) -> u64 {
        self.length
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// The last ID ever added (or set by XSETID); 0-0 for a new stream.
    pub fn last_id(&self) -> StreamId {
        self.last_id
    }

    /// The first live entry's ID, 0-0 when empty (Redis's `first_id`).
    pub fn first_id(&self) -> StreamId {
        self.first_id
    }

    /// The highest ID deleted (by XDEL and friends) so far.
    pub fn max_deleted_id(&self) -> StreamId {
        self.max_deleted
    }

    /// Entries ever added.
    pub fn entries_added(&self) -> u64 {
        self.entries_added
    }

    /// XSETID's: callers check it is not below the last live entry.
    pub fn set_last_id(&mut self, id: StreamId) {
        self.last_id = id;
    }

    /// XSETID's ENTRIESADDED: callers check it is not below the length.
    pub fn set_entries_added(&mut self, n: u64) {
        self.entries_added = n;
    }

    /// XSETID's MAXDELETEDID.
    pub fn set_max_deleted_id(&mut self, id: StreamId) {
        self.max_deleted = id;
    }

    /// Nodes (XINFO's `radix-tree-keys`).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The nodes' keys (their master entries' IDs), in order: what Redis's
    /// radix tree indexes (XINFO's `radix-tree-*` figures).
    pub fn node_ids(&self) -> impl Iterator<Item = StreamId> + '_ {
        self.nodes.keys()
    }

    /// `OBJECT ENCODING`'s name.
    pub fn encoding(&self) -> &'static str {
        "stream"
    }

    /// Adds entry `id` with `fields` (field, value, field, value…). The
    /// caller has checked that `id` is above [`Self::last_id`] and that
    /// the fields and values add up to at most [`MAX_NODE_BYTES`].
    pub fn append(&mut self, id: StreamId, fields: &[&[u8]], lim: StreamLimits) {
        debug_assert!(id > self.last_id && fields.len().is_multiple_of(2));
        let bytes: usize = fields.iter().map(|f| f.len()).sum();
        let max_bytes = match lim.node_max_bytes {
            0 => MAX_NODE_BYTES,
            n => n.min(MAX_NODE_BYTES),
        };
        let mut tail = self.nodes.last_mut();
        let fits = tail.as_ref().is_some_and(|(_, n)| {
            n.bytes().len() + bytes < max_bytes && (lim.node_max_entries == 0 || n.live() + n.deleted() < lim.node_max_entries as u64)
        });
        match tail.as_mut() {
            Some((master, n)) if fits => {
                let before = node_cost(n);
                n.append(*master, id, fields);
                self.node_heap = self.node_heap - before + node_cost(n);
            }
            _ => {
                if let Some((_, n)) = tail.as_mut() {
                    let before = node_cost(n);
                    n.shrink();
                    self.node_heap = self.node_heap - before + node_cost(n);
                }
                let room = match lim.node_max_bytes {
                    0 => NODE_PREALLOC,
                    n => n.min(NODE_PREALLOC),
                };
                self.add_node(id, Node::new(id, fields, room));
            }
        }
        self.length += 1;
        self.entries_added += 1;
        self.last_id = id;
        if self.length == 1 {
            self.first_id = id;
        }
    }

    /// Calls `f` with each live entry whose ID is in `start..=end`, in
    /// order (`rev`: from the end), until it returns false.
    pub fn range(&self, start: StreamId, end: StreamId, rev: bool, mut f: impl FnMut(StreamId, &Fields<'_>) -> bool) {
        if start > end {
            return;
        }
        if rev {
            for (key, node) in self.nodes.up_to(end).rev() {
                let m = node.master();
                let mut at = node.last();
                while let Some(p) = at {
                    let e = node.entry(key, &m, p);
                    if e.id < start {
                        return;
                    }
                    if !e.is_deleted() && e.id <= end && !f(e.id, &node.fields(&m, &e)) {
                        return;
                    }
                    at = node.prev(&e);
                }
            }
        } else {
            for (key, node) in self.nodes.onward(start) {
                let m = node.master();
                let mut at = node.first(&m);
                while let Some(p) = at {
                    let e = node.entry(key, &m, p);
                    if e.id > end {
                        return;
                    }
                    if !e.is_deleted() && e.id >= start && !f(e.id, &node.fields(&m, &e)) {
                        return;
                    }
                    at = node.next(&e);
                }
            }
        }
    }

    /// Whether a live entry has ID `id`.
    pub fn contains(&self, id: StreamId) -> bool {
        let mut found = false;
        self.range(id, id, false, |_, _| {
            found = true;
            false
        });
        found
    }

    /// The first live entry's ID (None when empty).
    pub fn first_entry_id(&self) -> Option<StreamId> {
        self.edge(false)
    }

    /// The last live entry's ID (Redis's `streamLastValidID`; None when
    /// empty). It may be below [`Self::last_id`].
    pub fn last_entry_id(&self) -> Option<StreamId> {
        self.edge(true)
    }

    fn edge(&self, last: bool) -> Option<StreamId> {
        let mut found = None;
        self.range(StreamId::MIN, StreamId::MAX, last, |id, _| {
            found = Some(id);
            false
        });
        found
    }

    /// XDEL of one ID: marks the entry deleted, freeing its node when no
    /// live entry is left in it; raises the highest deleted ID and moves
    /// the first ID on when it was the first. False if no live entry has
    /// that ID.
    pub fn delete(&mut self, id: StreamId) -> bool {
        let Some((key, node)) = self.nodes.holder_mut(id) else { return false };
        let m = node.master();
        let mut at = node.first(&m);
        let found = loop {
            let Some(p) = at else { break None };
            let e = node.entry(key, &m, p);
            if e.id >= id {
                break (e.id == id && !e.is_deleted()).then_some(e);
            }
            at = node.next(&e);
        };
        let Some(e) = found else { return false };
        let before = node_cost(node);
        if node.mark_deleted(&e) == 0 {
            self.drop_node(key);
        } else {
            self.node_heap = self.node_heap - before + node_cost(node);
        }
        self.length -= 1;
        self.max_deleted = self.max_deleted.max(id);
        if id == self.first_id {
            self.first_id = self.first_entry_id().unwrap_or_default();
        }
        true
    }

    /// Trims to `to` as Redis's `streamTrim` does, from the oldest entry:
    /// a node wholly to go is freed; with `approx` only whole nodes go,
    /// else entries are marked deleted in the node where the trim stops.
    /// `limit` (0: none) caps the entries removed, counted by whole
    /// nodes. With groups, DELREF also removes the IDs from their PELs
    /// and ACKED keeps the entries still referenced, both entry by entry
    /// (so within nodes even when `approx`). Returns the entries removed.
    pub fn trim(&mut self, to: TrimTo, approx: bool, limit: u64, refs: RefPolicy) -> u64 {
        let by_entry = refs != RefPolicy::KeepRef && !self.groups.is_empty();
        let mut deleted = 0;
        let mut after = None;
        loop {
            if matches!(to, TrimTo::MaxLen(n) if self.length <= n) {
                break;
            }
            let next = match after {
                None => self.nodes.first(),
                Some(k) => self.nodes.next_after(k),
            };
            let Some((key, node)) = next else { break };
            let entries = node.live();
            if limit > 0 && deleted + entries > limit {
                break;
            }
            let whole = match to {
                TrimTo::MaxLen(n) => self.length - entries >= n,
                TrimTo::MinId(min) => node.last_id(key) < min,
            };
            if whole && !by_entry {
                self.drop_node(key);
                self.length -= entries;
                deleted += entries;
                continue;
            }
            if approx && !whole {
                break;
            }
            deleted += self.trim_node(key, to, refs);
            if !whole {
                break;
            }
            after = Some(key);
        }
        if self.length == 0 {
            self.first_id = StreamId::MIN;
        } else if deleted > 0 {
            self.first_id = self.first_entry_id().unwrap_or_default();
        }
        deleted
    }

    /// Marks deleted the entries of node `key` that `to` removes, from its
    /// first on, as `refs` allows; frees the node if none is left live.
    /// Returns how many were marked.
    fn trim_node(&mut self, key: StreamId, to: TrimTo, refs: RefPolicy) -> u64 {
        let Some(node) = self.nodes.get_mut(key) else { return 0 };
        let groups = &mut self.groups;
        let before = node_cost(node);
        let m = node.master();
        let (live, deleted) = (node.live(), node.deleted());
        let mut marked = 0;
        let mut at = node.first(&m);
        while let Some(p) = at {
            let e = node.entry(key, &m, p);
            at = node.next(&e);
            let stop = match to {
                TrimTo::MaxLen(n) => self.length <= n,
                TrimTo::MinId(min) => e.id >= min,
            };
            if stop {
                break;
            }
            if e.is_deleted() || (refs == RefPolicy::Acked && referenced(groups, e.id)) {
                continue;
            }
            if refs == RefPolicy::DelRef {
                unref(groups, e.id);
            }
            // Only the flags change in the walk: the next entry's position
            // follows them, the master entry's stays valid until the counts
            // are written after it.
            let moved = node.flag_deleted(&e);
            at = at.map(|p| p.wrapping_add_signed(moved));
            self.length -= 1;
            marked += 1;
        }
        if marked == live {
            self.drop_node(key);
        } else if marked > 0 {
            node.set_counts(live - marked, deleted + marked);
            self.node_heap = self.node_heap - before + node_cost(node);
        }
        marked
    }

    fn add_node(&mut self, key: StreamId, node: Node) {
        self.node_heap += node_cost(&node);
        self.nodes.insert(key, node);
    }

    fn drop_node(&mut self, key: StreamId) {
        if let Some(n) = self.nodes.remove(key) {
            self.node_heap -= node_cost(&n);
        }
    }

    /// Whether the range `start..=end` may hold a tombstone: the highest
    /// deleted ID falls in it (Redis's `streamRangeHasTombstones`).
    pub fn range_has_tombstones(&self, start: StreamId, end: StreamId) -> bool {
        if self.length == 0 || self.max_deleted == StreamId::MIN {
            return false;
        }
        start <= self.max_deleted && self.max_deleted <= end
    }

    /// The number of entries added up to and including `id` (its logical
    /// read counter), where it can be known; None where Redis's
    /// `streamEstimateDistanceFromFirstEverEntry` gives up
    /// (`SCG_INVALID_ENTRIES_READ`): tombstones in the way, or an ID
    /// between the first and last entries, or in the future.
    pub fn estimate_distance(&self, id: StreamId) -> Option<u64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if self.length == 0 && id <= self.last_id {
            return Some(self.entries_added);
        }
        if id != StreamId::MIN && id < self.max_deleted {
            return None;
        }
        if id == self.last_id {
            return Some(self.entries_added);
        }
        if id > self.last_id {
            return None;
        }
        let before_first = self.entries_added.saturating_sub(self.length);
        if self.max_deleted == StreamId::MIN || self.max_deleted < self.first_id {
            if id < self.first_id {
                return Some(before_first);
            }
            if id == self.first_id {
                return Some(before_first + 1);
            }
        }
        None
    }

    /// A group's lag (XINFO's `lag`): entries not yet delivered to it, or
    /// None (nil) where tombstones make it unknowable. Negative when the
    /// group's counter ran past `entries_added` (XSETID can lower it; Redis
    /// 8.4 reports the difference as it is).
    pub fn lag(&self, g: &Group) -> Option<i64> {
        let added = self.entries_added as i64;
        if self.entries_added == 0 || self.length == 0 {
            return Some(0);
        }
        if g.last_id < self.first_id && self.max_deleted < self.first_id {
            return Some(self.length as i64);
        }
        if g.entries_read != -1 && !self.range_has_tombstones(g.last_id, StreamId::MAX) {
            return Some(added.wrapping_sub(g.entries_read));
        }
        self.estimate_distance(g.last_id).map(|read| added.wrapping_sub(read as i64))
    }

    /// XREADGROUP's bookkeeping for entry `id` delivered to group `name`:
    /// if it is past the group's last ID, the group moves to it and its
    /// read counter goes one up while no tombstone lies ahead of it, else
    /// is estimated afresh ([`Self::estimate_distance`]; -1 unknown).
    /// Returns whether the group moved (Redis then propagates XGROUP
    /// SETID); false too for no such group.
    pub fn advance_group(&mut self, name: &[u8], id: StreamId) -> bool {
        let Some(g) = self.groups.get(name) else { return false };
        if id <= g.last_id {
            return false;
        }
        let read = if g.entries_read != -1 && !self.range_has_tombstones(g.last_id, StreamId::MAX) {
            Some(g.entries_read + 1)
        } else if self.entries_added > 0 {
            Some(self.estimate_distance(id).map_or(-1, |n| n as i64))
        } else {
            None
        };
        let g = self.groups.get_mut(name).expect("looked up");
        if let Some(r) = read {
            g.entries_read = r;
        }
        g.last_id = id;
        true
    }

    /// The consumer groups, in name order.
    pub fn groups(&self) -> impl Iterator<Item = (&[u8], &Group)> + '_ {
        self.groups.iter().map(|(n, g)| (&n[..], g))
    }

    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    pub fn group(&self, name: &[u8]) -> Option<&Group> {
        self.groups.get(name)
    }

    pub fn group_mut(&mut self, name: &[u8]) -> Option<&mut Group> {
        self.groups.get_mut(name)
    }

    /// Adds group `name` at `last_id` with read counter `entries_read`
    /// (-1: unknown). False if it exists.
    pub fn create_group(&mut self, name: &[u8], last_id: StreamId, entries_read: i64) -> bool {
        if self.groups.contains_key(name) {
            return false;
        }
        self.groups.insert(name.into(), Group::new(last_id, entries_read));
        true
    }

    pub fn destroy_group(&mut self, name: &[u8]) -> bool {
        self.groups.remove(name).is_some()
    }

    /// Whether some group still needs entry `id` (Redis 8.2's ACKED):
    /// one has not delivered it yet, or has it pending.
    pub fn referenced(&self, id: StreamId) -> bool {
        referenced(&self.groups, id)
    }

    /// Removes `id` from every group's PEL and its consumer's (DELREF).
    pub fn unref(&mut self, id: StreamId) {
        unref(&mut self.groups, id);
    }

    /// Heap bytes held: the nodes' buffers at their allocator size
    /// classes, the node index's buffer, the group map (estimated: an
    /// entry and a half per entry), the groups.
    /// O(groups): the nodes' share is kept as they change.
    pub fn heap_size(&self) -> usize {
        let groups: usize = self.groups.iter().map(|(n, g)| tern_table::size_class(n.len()) + g.heap_size()).sum();
        self.node_heap + self.nodes.heap_size() + map_heap::<Box<[u8]>, Group>(self.groups.len()) + groups
    }

    /// Allocations freeing the stream releases, as Redis's
    /// `lazyfreeGetFreeEffort` estimates them: one per node, and per group
    /// one plus the first group's PEL size.
    pub fn free_effort(&self) -> usize {
        let per_group = self.groups.values().next().map_or(0, |g| 1 + g.pending_len());
        self.nodes.len() + self.groups.len() * per_group
    }

    /// The nodes as RDB saves them: master ID and listpack bytes, in order.
    pub(crate) fn nodes(&self) -> impl Iterator<Item = (StreamId, &[u8])> + '_ {
        self.nodes.iter().map(|(k, n)| (k, n.bytes()))
    }
}

fn referenced(groups: &BTreeMap<Box<[u8]>, Group>, id: StreamId) -> bool {
    groups.values().any(|g| g.references(id))
}

fn unref(groups: &mut BTreeMap<Box<[u8]>, Group>, id: StreamId) {
    for g in groups.values_mut() {
        g.ack(id);
    }
}

/// A stream read from RDB, checked piece by piece as it comes: nodes in
/// order and valid, then the counters against them, then groups whose
/// PEL entries each have one consumer.
pub(crate) struct Loader {
    s: Stream,
    live: u64,
    /// The last entry's ID so far, deleted or not.
    last_entry: Option<StreamId>,
}

impl Loader {
    pub fn new() -> Self {
        Loader { s: Stream::new(), live: 0, last_entry: None }
    }

    /// A node: master ID `key` and its listpack. A node of tombstones
    /// only (which Redis 8.4's exact trim can leave) holds nothing to
    /// read and is dropped.
    pub fn node(&mut self, key: StreamId, lp: Vec<u8>) -> Result<(), RdbError> {
        let vals = listpack::collect(&lp)?;
        if vals.is_empty() {
            return Err(RdbError::Corrupt("empty listpack inside stream"));
        }
        let c = node::check(&vals, key).map_err(RdbError::Corrupt)?;
        if self.last_entry.is_some_and(|l| key <= l) {
            return Err(RdbError::Corrupt("stream nodes out of order"));
        }
        drop(vals);
        self.last_entry = Some(c.last);
        if c.live > 0 {
            self.live += c.live;
            self.s.add_node(key, Node::from_checked(lp));
        }
        Ok(())
    }

    /// The counters after the nodes (RDB_TYPE_STREAM_LISTPACKS has no
    /// max deleted ID nor entries added: `added` None, and they are
    /// derived as Redis does). The first ID is taken from the nodes.
    pub fn counters(&mut self, length: u64, last_id: StreamId, max_deleted: StreamId, added: Option<u64>) -> Result<(), &'static str> {
        if length != self.live {
            return Err("stream length differs from its entries");
        }
        if self.last_entry.is_some_and(|l| l > last_id) {
            return Err("stream last ID below its last entry");
        }
        let added = added.unwrap_or(length);
        if added < length {
            return Err("stream entries added below its length");
        }
        let s = &mut self.s;
        (s.length, s.last_id, s.max_deleted, s.entries_added) = (length, last_id, max_deleted, added);
        s.first_id = s.first_entry_id().unwrap_or_default();
        Ok(())
    }

    pub fn stream(&self) -> &Stream {
        &self.s
    }

    /// A group; false if the name is taken.
    pub fn group(&mut self, name: &[u8], last_id: StreamId, entries_read: i64) -> bool {
        self.s.create_group(name, last_id, entries_read)
    }

    pub fn group_mut(&mut self, name: &[u8]) -> &mut Group {
        self.s.groups.get_mut(name).expect("loaded just before")
    }

    pub fn finish(self) -> Stream {
        self.s
    }
}
