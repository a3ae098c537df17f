//! Consumer groups: what a group has delivered, to whom, and what is
//! still pending (not acknowledged).
//!
//! ```text
//!  Group ─ last_id, entries_read
//!        ├─ pel        id → Nack { delivery_time, delivery_count, consumer name }   (the group's PEL)
//!        └─ consumers  name → Consumer { seen_time, active_time, pending: ids }   (each id also in pel)
//! ```
//!
//! Redis shares one NACK between the group's PEL and its consumer's; here
//! the group's PEL holds it and the consumer's PEL holds the ID, the NACK
//! naming its consumer (a shared name, not a copy per NACK). Both are
//! ordered by ID, as Redis's radix trees are, and consumers by name.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::Arc;

use super::StreamId;

/// A message delivered and not yet acknowledged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nack {
    /// When it was last delivered, in ms since the epoch.
    pub delivery_time: u64,
    /// How many times it was delivered.
    pub delivery_count: u64,
    consumer: Arc<[u8]>,
}

impl Nack {
    /// The consumer it was last delivered to.
    pub fn consumer(&self) -> &[u8] {
        &self.consumer
    }
}

/// A consumer of a group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Consumer {
    /// When it last tried to read or claim, in ms since the epoch.
    pub seen_time: u64,
    /// When it last read or claimed something; -1: never.
    pub active_time: i64,
    pending: BTreeSet<StreamId>,
}

impl Consumer {
    /// Messages delivered to it and not acknowledged.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Its pending IDs from `start` on, in order (XREADGROUP's history).
    pub fn pending_from(&self, start: StreamId) -> impl Iterator<Item = StreamId> + '_ {
        self.pending.range(start..).copied()
    }
}

/// How a claim changes a message's delivery count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimCount {
    /// One more delivery (XCLAIM, XAUTOCLAIM).
    Incr,
    /// Unchanged (JUSTID).
    Keep,
    /// This count (RETRYCOUNT).
    Set(u64),
}

/// A consumer group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The last ID delivered to any consumer of the group.
    pub last_id: StreamId,
    /// The group's logical read counter (-1: unknown; see
    /// [`super::Stream::estimate_distance`]).
    pub entries_read: i64,
    pel: BTreeMap<StreamId, Nack>,
    consumers: BTreeMap<Arc<[u8]>, Consumer>,
    /// The consumers' names at their allocator size classes, kept as
    /// consumers come and go (so that measuring a group is O(1)).
    names_heap: usize,
}

/// What a consumer's shared name costs the allocator (its counts too).
fn name_cost(name: &[u8]) -> usize {
    tern_table::size_class(name.len() + 16)
}

impl Group {
    pub(super) fn new(last_id: StreamId, entries_read: i64) -> Group {
        Group { last_id, entries_read, pel: BTreeMap::new(), consumers: BTreeMap::new(), names_heap: 0 }
    }

    /// Messages delivered and not acknowledged.
    pub fn pending_len(&self) -> usize {
        self.pel.len()
    }

    /// The pending messages with IDs in `start..=end`, in order.
    pub fn pending_range(&self, start: StreamId, end: StreamId) -> impl Iterator<Item = (StreamId, &Nack)> + '_ {
        // An empty range where the bounds cross (BTreeMap panics on those).
        let end = if start <= end { Bound::Included(end) } else { Bound::Excluded(start) };
        let range = (Bound::Included(start), end);
        self.pel.range(range).map(|(id, n)| (*id, n))
    }

    /// The highest pending ID (XPENDING's summary).
    pub fn last_pending(&self) -> Option<StreamId> {
        self.pel.keys().next_back().copied()
    }

    pub fn nack(&self, id: StreamId) -> Option<&Nack> {
        self.pel.get(&id)
    }

    /// A pending message's delivery time and count, to change (its
    /// consumer changes only through [`Self::deliver`] and [`Self::claim`]).
    pub fn nack_mut(&mut self, id: StreamId) -> Option<&mut Nack> {
        self.pel.get_mut(&id)
    }

    /// The consumers, in name order.
    pub fn consumers(&self) -> impl Iterator<Item = (&[u8], &Consumer)> + '_ {
        self.consumers.iter().map(|(n, c)| (&n[..], c))
    }

    pub fn consumer_count(&self) -> usize {
        self.consumers.len()
    }

    pub fn consumer(&self, name: &[u8]) -> Option<&Consumer> {
        self.consumers.get(name)
    }

    /// A consumer's seen and active times, to change.
    pub fn consumer_mut(&mut self, name: &[u8]) -> Option<&mut Consumer> {
        self.consumers.get_mut(name)
    }

    /// Adds consumer `name`, seen `now` and never active. False if it
    /// exists.
    pub fn create_consumer(&mut self, name: &[u8], now: u64) -> bool {
        if self.consumers.contains_key(name) {
            return false;
        }
        self.consumers.insert(name.into(), Consumer { seen_time: now, active_time: -1, pending: BTreeSet::new() });
        self.names_heap += name_cost(name);
        true
    }

    /// Removes consumer `name` and its pending messages from the group's
    /// PEL. Returns how many it had pending, or None if there is no such
    /// consumer.
    pub fn delete_consumer(&mut self, name: &[u8]) -> Option<u64> {
        let c = self.consumers.remove(name)?;
        self.names_heap -= name_cost(name);
        for id in &c.pending {
            self.pel.remove(id);
        }
        Some(c.pending.len() as u64)
    }

    /// The shared name of an existing consumer.
    fn name_of(&self, consumer: &[u8]) -> Option<Arc<[u8]>> {
        self.consumers.get_key_value(consumer).map(|(n, _)| n.clone())
    }

    /// Makes `id`'s NACK (created if absent, delivered once, now) belong
    /// to `to`, taking it from the consumer that held it.
    fn take(&mut self, id: StreamId, to: Arc<[u8]>, now: u64) -> &mut Nack {
        let fresh = || Nack { delivery_time: now, delivery_count: 1, consumer: to.clone() };
        let nack = self.pel.entry(id).or_insert_with(fresh);
        if nack.consumer != to {
            if let Some(old) = self.consumers.get_mut(&nack.consumer) {
                old.pending.remove(&id);
            }
            nack.consumer = to.clone();
        }
        if let Some(c) = self.consumers.get_mut(&to) {
            c.pending.insert(id);
        }
        nack
    }

    /// XREADGROUP's delivery of `id` to `consumer` at `now`: a new NACK, or
    /// one pending (after XGROUP SETID moved the group back) handed to
    /// `consumer` and counted as a first delivery, as Redis does. Marks
    /// the consumer active. False (nothing changed) if there is no such
    /// consumer.
    pub fn deliver(&mut self, id: StreamId, consumer: &[u8], now: u64) -> bool {
        let Some(to) = self.name_of(consumer) else { return false };
        let nack = self.take(id, to, now);
        nack.delivery_time = now;
        nack.delivery_count = 1;
        self.mark_active(consumer, now);
        true
    }

    /// XCLAIM's and XAUTOCLAIM's claim of `id` for `consumer` at `now`: the
    /// NACK (created if absent, as FORCE does: delivered once, now) goes
    /// to `consumer`, delivered at `delivery_time`, its count changed as
    /// `count` says. Marks the consumer active. False (nothing changed) if
    /// there is no such consumer.
    pub fn claim(&mut self, id: StreamId, consumer: &[u8], now: u64, delivery_time: u64, count: ClaimCount) -> bool {
        let Some(to) = self.name_of(consumer) else { return false };
        let nack = self.take(id, to, now);
        nack.delivery_time = delivery_time;
        match count {
            ClaimCount::Incr => nack.delivery_count = nack.delivery_count.wrapping_add(1),
            ClaimCount::Keep => {}
            ClaimCount::Set(n) => nack.delivery_count = n,
        }
        self.mark_active(consumer, now);
        true
    }

    fn mark_active(&mut self, consumer: &[u8], now: u64) {
        if let Some(c) = self.consumers.get_mut(consumer) {
            c.active_time = now as i64;
        }
    }

    /// XACK: removes `id` from the group's PEL and its consumer's. False if
    /// it was not pending.
    pub fn ack(&mut self, id: StreamId) -> bool {
        let Some(nack) = self.pel.remove(&id) else { return false };
        if let Some(c) = self.consumers.get_mut(&nack.consumer) {
            c.pending.remove(&id);
        }
        true
    }

    /// Whether `id` holds this group back from deleting it (Redis 8.2's
    /// ACKED): not delivered yet, or pending.
    pub(super) fn references(&self, id: StreamId) -> bool {
        id > self.last_id || self.pel.contains_key(&id)
    }

    /// Heap bytes held (the maps estimated as `super::map_heap` does), in
    /// O(1): every pending ID is in one consumer's PEL.
    pub(super) fn heap_size(&self) -> usize {
        let pending = super::map_heap::<StreamId, ()>(self.pel.len());
        super::map_heap::<StreamId, Nack>(self.pel.len()) + super::map_heap::<Arc<[u8]>, Consumer>(self.consumers.len()) + self.names_heap + pending
    }

    /// Loading: a pending message of consumer `consumer` (loaded before
    /// it, with the ID not yet pending: the loader sees to both).
    pub(crate) fn load_nack(&mut self, id: StreamId, consumer: &[u8], delivery_time: u64, delivery_count: u64) {
        if let Some(to) = self.name_of(consumer) {
            let nack = self.take(id, to, delivery_time);
            nack.delivery_count = delivery_count;
        }
    }

    /// Loading: a consumer with the times a file gives it. False if it
    /// exists.
    pub(crate) fn load_consumer(&mut self, name: &[u8], seen_time: u64, active_time: i64) -> bool {
        if !self.create_consumer(name, seen_time) {
            return false;
        }
        if let Some(c) = self.consumers.get_mut(name) {
            c.active_time = active_time;
        }
        true
    }
}
