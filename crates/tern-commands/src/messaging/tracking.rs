//! Client-side caching (CLIENT TRACKING): which clients may hold which
//! keys, and the invalidations they are sent when those keys change.
//!
//! ```text
//!  a tracking client's read-only command ─► its lookups mark the keys
//!  they find (tern_store::tracked); remember(the others) ─► table
//!  any write, expiry, eviction (the store notes the key, with the marks
//!  it took, while anyone tracks: Keyspace::track_writes) ─► invalidate
//!     ├─► BCAST prefixes matching: the key waits for the turn's broadcast
//!     └─► the key's trackers (its table entry and its marks' slots): each
//!         gets `invalidate` [key] in its inbox, or its redirect target's
//!  FLUSHALL / FLUSHDB ─► every tracking client gets a null invalidation
//! ```
//!
//! A key that exists when a tracking client reads it is not put in the
//! table: the read marks the key's own item with the client's slot bit
//! (`tern_store::tracked`; 64 slots, given to tracking clients as they
//! start, kept until they close), and the write that takes the marks
//! brings them here ([`Tracking::invalidate`]). The table keeps the rest:
//! keys read while absent, reads that no lookup marked, clients without a
//! slot. A slot given up is cleared from every key before it is given
//! again ([`Tracking::slot_for`]).
//!
//! As in Redis the table is one for all databases (a key read in db 0 is
//! invalidated by a write to the same name in db 1), holds a key until it
//! is written (then its trackers are told once and forgotten), and drops
//! what a client that stopped tracking left only when those keys are
//! written or evicted from the table (`tracking-table-max-keys`).

use std::collections::HashMap as StdHashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use tern_table::{DefaultHashBuilder, Item, Table};

use super::{Delivery, Inbox};

/// Table shards (each behind its own lock), picked by hash bits the
/// shard's own table does not use (it takes the low 48).
const SHARDS: usize = 64;
/// Keys evicted from a full table per call of [`Tracking::limit`].
const EVICT_EFFORT: usize = 100;

/// One client's tracking, as the table holds it.
#[derive(Debug)]
pub struct Tracker {
    pub client_id: u64,
    /// The client's own inbox.
    inbox: Arc<Inbox>,
    /// REDIRECT: the client (id) whose inbox takes the invalidations.
    redirect: Option<(u64, Arc<Inbox>)>,
    pub noloop: bool,
    pub bcast: bool,
    /// The client speaks RESP3 (HELLO): a null invalidation is written in
    /// its protocol, wherever it is redirected (Redis's
    /// `shared.null[c->resp]`).
    resp3: AtomicBool,
    /// An invalidation found the redirect target gone (`R`,
    /// `broken_redirect`).
    broken: AtomicBool,
}

impl Tracker {
    pub fn new(client_id: u64, inbox: Arc<Inbox>, redirect: Option<(u64, Arc<Inbox>)>, noloop: bool, bcast: bool) -> Arc<Self> {
        Arc::new(Tracker { client_id, inbox, redirect, noloop, bcast, resp3: AtomicBool::new(false), broken: AtomicBool::new(false) })
    }

    /// The client's protocol changed (HELLO).
    pub fn set_resp3(&self, on: bool) {
        self.resp3.store(on, Ordering::Relaxed);
    }

    /// The client invalidations go to (0: the tracking client itself).
    pub fn redirect(&self) -> u64 {
        self.redirect.as_ref().map_or(0, |r| r.0)
    }

    /// An invalidation found the redirect target gone (CLIENT
    /// TRACKINGINFO's `broken_redirect`, CLIENT LIST's `R`).
    pub fn broken(&self) -> bool {
        self.broken.load(Ordering::Relaxed)
    }

    /// Sends the invalidation of `keys` (None: all) where this client's
    /// invalidations go.
    fn send(&self, keys: Option<Arc<[Box<[u8]>]>>, deliver: &mut impl FnMut(&Arc<Inbox>, Delivery)) {
        let null_resp3 = self.resp3.load(Ordering::Relaxed);
        match &self.redirect {
            // A RESP2 client without a redirection can take nothing
            // (Redis sends it nothing either): nothing is queued.
            None if !null_resp3 => {}
            None => deliver(&self.inbox, Delivery::Invalidate { keys, redirected: false, null_resp3 }),
            Some((id, target)) if target.is_closed() => {
                self.broken.store(true, Ordering::Relaxed);
                deliver(&self.inbox, Delivery::RedirectBroken(*id));
            }
            Some((_, target)) => deliver(target, Delivery::Invalidate { keys, redirected: true, null_resp3 }),
        }
    }
}

/// Number of mark slots (bits of an item's mark word).
const SLOTS: usize = 64;

/// Which client each mark slot is given to (0: free), and the slots
/// given up whose bits some keys may still carry (cleared from the
/// keyspace before the slot is given again).
struct Slots {
    owner: [u64; SLOTS],
    dirty: u64,
}

/// A key written in one database (database, name, writer) whose marks in
/// the others are still to be taken.
pub type Elsewhere = (usize, Box<[u8]>, u64);

impl Slots {
    /// A free slot that no key carries, given to client `id`: its bit
    /// (0: none).
    fn give(&mut self, id: u64) -> u64 {
        match (0..SLOTS).find(|&i| self.owner[i] == 0 && self.dirty & (1 << i) == 0) {
            Some(i) => {
                self.owner[i] = id;
                1 << i
            }
            None => 0,
        }
    }
}

/// A BCAST prefix: its clients, and the keys written under it since the
/// last broadcast (with the client that wrote each last, for NOLOOP).
struct Prefix {
    prefix: Box<[u8]>,
    clients: Vec<Arc<Tracker>>,
    pending: Vec<(Box<[u8]>, u64)>,
}

/// The clients that may hold a key, by id as Redis's table holds them (a
/// client that stopped tracking, or tracks again since, is looked up when
/// the key is written): little-endian u64s in the key's item, after the
/// key, so that the look that finds the key finds them too. The item fills
/// its allocator size class with room for more (zeros: client ids start
/// at 1), so that most clients added cost no allocation.
fn ids(item: &Item<()>) -> impl Iterator<Item = u64> + '_ {
    item.extra().chunks_exact(8).map(read_id).take_while(|&id| id != 0)
}

fn read_id(c: &[u8]) -> u64 {
    u64::from_le_bytes(c.try_into().unwrap_or_default())
}

/// A key's item holding the ids in `ids` (pieces of little-endian u64s,
/// written one after another), then room for more: at least `room` ids in
/// all, and as many as its size class fits.
fn item_of(key: &[u8], ids: &[&[u8]], room: usize) -> Box<Item<()>> {
    const ZEROS: [u8; 256] = [0; 256];
    let fits = (Item::<()>::tail_room(key.len() + room * 8) - key.len()) / 8 * 8;
    let mut pad = fits.saturating_sub(ids.iter().map(|p| p.len()).sum());
    let mut parts: smallvec::SmallVec<[&[u8]; 4]> = ids.iter().copied().collect();
    while pad > 0 {
        let n = pad.min(ZEROS.len());
        parts.push(&ZEROS[..n]);
        pad -= n;
    }
    Item::new_from_parts(key, (), None, &parts)
}

/// One shard of the table: the keys (in the item with their clients, as
/// the keyspace keeps its own) under their lock, and the bucket array's
/// address published for asking for a key's bucket without the lock.
#[repr(align(64))]
struct TableShard {
    part: Mutex<Part>,
    base: AtomicUsize,
    nb: AtomicU64,
}

struct Part {
    keys: Table<()>,
    /// (key, client) pairs here.
    items: usize,
}

impl TableShard {
    /// Publishes the table's address for [`Tracking::prefetch_bucket`],
    /// with the lock held (stores skipped when nothing moved).
    fn publish(&self, part: &Part) {
        let (base, nb) = part.keys.hint();
        if self.base.load(Ordering::Relaxed) != base {
            self.base.store(base, Ordering::Relaxed);
        }
        if self.nb.load(Ordering::Relaxed) != nb {
            self.nb.store(nb, Ordering::Relaxed);
        }
    }
}

/// The tracking table, the tracking clients and the BCAST prefixes.
///
/// The table is keyed by the keyspace's own hash of a key (its hasher is
/// the keyspace's), so that the pipeline planner, which has that hash,
/// asks for a tracked read's bucket and item with the keyspace's
/// ([`Tracking::prefetch_bucket`], [`Tracking::prefetch_item`]).
pub struct Tracking {
    table: Box<[TableShard]>,
    hasher: DefaultHashBuilder,
    /// Keys in the table (INFO `tracking_total_keys`).
    keys: AtomicUsize,
    /// Every client tracking now.
    clients: RwLock<StdHashMap<u64, Arc<Tracker>>>,
    client_count: AtomicUsize,
    prefixes: Mutex<Vec<Prefix>>,
    prefix_count: AtomicUsize,
    /// Keys wait in some prefix for the broadcast.
    pending: AtomicBool,
    /// Draws the keys evicted from a full table.
    evict_rng: AtomicU64,
    /// The mark slots (see the module docs).
    slots: Mutex<Slots>,
    /// Keys written (database, name, writer) whose marks in the other
    /// databases are still to be taken (Redis's table is one for all
    /// databases), by a caller that holds no shard
    /// ([`Tracking::take_elsewhere`]).
    elsewhere: Mutex<Vec<Elsewhere>>,
    /// Every key's marks are to be cleared (a flush inside a transaction,
    /// which holds every shard), by the same caller.
    clear_pending: AtomicBool,
    elsewhere_pending: AtomicBool,
}

impl Default for Tracking {
    fn default() -> Self {
        Self::new(DefaultHashBuilder::default())
    }
}

impl Tracking {
    /// The table, keyed by hashes made with `hasher` (the keyspace's).
    pub fn new(hasher: DefaultHashBuilder) -> Self {
        Tracking {
            table: (0..SHARDS)
                .map(|_| TableShard { part: Mutex::new(Part { keys: Table::with_hasher(hasher), items: 0 }), base: AtomicUsize::new(0), nb: AtomicU64::new(0) })
                .collect(),
            hasher,
            keys: AtomicUsize::new(0),
            clients: RwLock::new(StdHashMap::new()),
            client_count: AtomicUsize::new(0),
            prefixes: Mutex::new(Vec::new()),
            prefix_count: AtomicUsize::new(0),
            pending: AtomicBool::new(false),
            evict_rng: AtomicU64::new(0x9E37_79B9_7F4A_7C15),
            slots: Mutex::new(Slots { owner: [0; SLOTS], dirty: 0 }),
            elsewhere: Mutex::new(Vec::new()),
            clear_pending: AtomicBool::new(false),
            elsewhere_pending: AtomicBool::new(false),
        }
    }

    /// `key`'s hash, as the keyspace makes it.
    pub fn hash(&self, key: &[u8]) -> u64 {
        tern_table::hash_key(&self.hasher, key)
    }

    fn shard(&self, hash: u64) -> &TableShard {
        &self.table[(hash >> 48) as usize % SHARDS]
    }

    /// Stage 1 for a read whose key its client will be noted for: asks for
    /// the line of `hash`'s bucket, without the lock. Only a hint.
    #[inline]
    pub fn prefetch_bucket(&self, hash: u64) {
        let s = self.shard(hash);
        let base = s.base.load(Ordering::Relaxed);
        if base != 0 {
            tern_table::prefetch_hinted(base, s.nb.load(Ordering::Relaxed), hash);
        }
    }

    /// Stage 2: reads the bucket (asked for in stage 1) and asks for the
    /// key's item, under the shard's lock if it is free (released at
    /// once). Only a hint.
    #[inline]
    pub fn prefetch_item(&self, key: &[u8], hash: u64) {
        if let Some(p) = self.shard(hash).part.try_lock() {
            p.keys.prefetch_item(key, hash);
        }
    }

    /// Whether any client tracks.
    pub fn any(&self) -> bool {
        self.client_count.load(Ordering::Relaxed) > 0
    }

    /// Whether written keys matter: a client tracks, or the table (or
    /// `marked` keys of the keyspace) still holds keys (which a write
    /// removes, as in Redis, whoever left them).
    pub fn active(&self, marked: usize) -> bool {
        self.any() || self.keys.load(Ordering::Relaxed) > 0 || marked > 0
    }

    /// Calls `f` with [`Tracking::active`] under the lock that starting
    /// to track takes, so that a decision to stop noting writes cannot
    /// pass a client that starts tracking meanwhile.
    pub fn settle(&self, marked: usize, f: impl FnOnce(bool)) {
        let clients = self.clients.read();
        f(!clients.is_empty() || self.keys.load(Ordering::Relaxed) > 0 || marked > 0);
    }

    /// The mark bit of client `id` (see the module docs): the slot it has,
    /// or a free one, or none (0) when all 64 are given. Free slots that
    /// keys may still carry are cleared first by `sweep` (which takes the
    /// keyspace's locks, and answers false when it may not: a slot that
    /// was not cleared is not given).
    pub fn slot_for(&self, id: u64, sweep: impl FnOnce(u64) -> bool) -> u64 {
        let dirty = {
            let mut s = self.slots.lock();
            if let Some(i) = s.owner.iter().position(|&o| o == id) {
                return 1 << i;
            }
            match s.give(id) {
                0 => s.dirty,
                bit => return bit,
            }
        };
        // No lock of ours is held while the keyspace is swept: a write
        // that meets a dirty bit finds no owner for it.
        if dirty == 0 || !sweep(dirty) {
            return 0;
        }
        let mut s = self.slots.lock();
        s.dirty &= !dirty;
        s.give(id)
    }

    /// Client `id` closed: its slot, if it had one, is given up.
    pub fn release_slot(&self, id: u64) {
        let mut s = self.slots.lock();
        if let Some(i) = s.owner.iter().position(|&o| o == id) {
            s.owner[i] = 0;
            s.dirty |= 1 << i;
        }
    }

    /// `key` was written in database `db` by client `modifier` while other
    /// databases hold marks: for [`Tracking::take_elsewhere`].
    pub fn defer_elsewhere(&self, db: usize, key: &[u8], modifier: u64) {
        self.elsewhere.lock().push((db, key.into(), modifier));
        self.elsewhere_pending.store(true, Ordering::Release);
    }

    /// Every key's marks are to be cleared by the next caller that holds
    /// no shard.
    pub fn defer_clear(&self) {
        self.clear_pending.store(true, Ordering::Release);
        self.elsewhere_pending.store(true, Ordering::Release);
    }

    /// Whether work waits for [`Tracking::take_clear`] or
    /// [`Tracking::take_elsewhere`] (one load).
    #[inline]
    pub fn elsewhere_pending(&self) -> bool {
        self.elsewhere_pending.load(Ordering::Acquire)
    }

    /// Whether every key's marks are to be cleared (the flag taken).
    pub fn take_clear(&self) -> bool {
        self.clear_pending.swap(false, Ordering::AcqRel)
    }

    /// The keys [`Tracking::defer_elsewhere`] noted, taken.
    pub fn take_elsewhere(&self) -> Vec<Elsewhere> {
        if !self.elsewhere_pending.swap(false, Ordering::AcqRel) {
            return Vec::new();
        }
        std::mem::take(&mut *self.elsewhere.lock())
    }

    /// Every key's marks were cleared (a flush): no slot is dirty.
    pub fn marks_cleared(&self) {
        self.slots.lock().dirty = 0;
    }

    /// [`Tracking::enable`], then `f` (the store told to note writes),
    /// under the same lock as [`Tracking::settle`].
    pub fn enable_then(&self, t: &Arc<Tracker>, prefixes: &[Box<[u8]>], f: impl FnOnce()) {
        let mut clients = self.clients.write();
        if clients.insert(t.client_id, Arc::clone(t)).is_none() {
            self.client_count.fetch_add(1, Ordering::Relaxed);
        }
        f();
        drop(clients);
        self.set_prefixes(t, prefixes);
    }

    /// Starts `t`'s tracking (replacing the client's earlier one), with
    /// its BCAST prefixes (none: every key).
    pub fn enable(&self, t: &Arc<Tracker>, prefixes: &[Box<[u8]>]) {
        self.enable_then(t, prefixes, || {});
    }

    fn set_prefixes(&self, t: &Arc<Tracker>, prefixes: &[Box<[u8]>]) {
        self.drop_prefixes(t.client_id);
        if t.bcast {
            let mut ps = self.prefixes.lock();
            let empty: [Box<[u8]>; 1] = [Box::default()];
            for p in if prefixes.is_empty() { &empty[..] } else { prefixes } {
                match ps.iter_mut().find(|x| x.prefix == *p) {
                    Some(x) => x.clients.push(Arc::clone(t)),
                    None => ps.push(Prefix { prefix: p.clone(), clients: vec![Arc::clone(t)], pending: Vec::new() }),
                }
            }
            self.prefix_count.store(ps.len(), Ordering::Relaxed);
        }
    }

    /// Ends client `id`'s tracking (CLIENT TRACKING OFF, its end).
    pub fn disable(&self, id: u64) {
        if self.clients.write().remove(&id).is_some() {
            self.client_count.fetch_sub(1, Ordering::Relaxed);
        }
        self.drop_prefixes(id);
    }

    fn drop_prefixes(&self, id: u64) {
        if self.prefix_count.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut ps = self.prefixes.lock();
        for p in ps.iter_mut() {
            p.clients.retain(|t| t.client_id != id);
        }
        ps.retain(|p| !p.clients.is_empty());
        self.prefix_count.store(ps.len(), Ordering::Relaxed);
    }

    /// Notes that client `id` may now cache `key` (`hash`: its
    /// [`Tracking::hash`]): one look under the shard's lock.
    pub fn remember(&self, id: u64, key: &[u8], hash: u64) {
        // 0 marks a free slot in an item.
        debug_assert_ne!(id, 0, "client ids start at 1");
        let s = self.shard(hash);
        let mut p = s.part.lock();
        let Some(item) = p.keys.get_mut(key, hash) else {
            p.keys.insert_item(hash, item_of(key, &[&id.to_le_bytes()], 1));
            p.items += 1;
            s.publish(&p);
            self.keys.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let extra = item.extra_mut();
        for slot in extra.chunks_exact_mut(8) {
            match read_id(slot) {
                x if x == id => return,
                0 => {
                    slot.copy_from_slice(&id.to_le_bytes());
                    p.items += 1;
                    return;
                }
                _ => {}
            }
        }
        // Full: a copy with twice the room, in the same slot.
        let room = (extra.len() / 8 + 1) * 2;
        let grown = item_of(key, &[extra, &id.to_le_bytes()], room);
        p.keys.upsert(hash, grown);
        p.items += 1;
    }

    /// `keys` were written by the command of client `current` (0: none),
    /// run by client `executing` (a script's commands run as their own
    /// client): their trackers are told and forgotten (NOLOOP spares
    /// `current`, as Redis compares with its current client), and the
    /// BCAST prefixes note them (NOLOOP spares `executing`, the client
    /// Redis notes as the key's last writer).
    pub fn invalidate(&self, notes: &[tern_store::effect::Modified], current: u64, executing: u64, mut deliver: impl FnMut(&Arc<Inbox>, Delivery)) {
        let modifier = current;
        if self.prefix_count.load(Ordering::Relaxed) > 0 {
            let mut ps = self.prefixes.lock();
            for key in notes.iter().map(|n| &n.key) {
                for p in ps.iter_mut().filter(|p| key.starts_with(&p.prefix)) {
                    match p.pending.iter_mut().find(|(k, _)| k == key) {
                        Some(e) => e.1 = executing,
                        None => p.pending.push((key.clone(), executing)),
                    }
                    self.pending.store(true, Ordering::Relaxed);
                }
            }
        }
        let table = self.keys.load(Ordering::Relaxed) > 0;
        let mut last: Option<&[u8]> = None;
        for n in notes {
            let key = &n.key[..];
            // A key's writes of one command (`new`, then the write) are
            // noted together: one look in the table is enough.
            if (table && last != Some(key)) || n.readers != 0 {
                self.forget(key, table, n.readers, modifier, &mut deliver);
            }
            last = Some(key);
        }
    }

    /// Takes `key` out of the table (if `table`), and tells its trackers
    /// there and those of the mark slots in `readers` (but the writer
    /// itself when it asked for NOLOOP).
    pub fn forget(&self, key: &[u8], table: bool, readers: u64, modifier: u64, deliver: &mut impl FnMut(&Arc<Inbox>, Delivery)) {
        let mut who: smallvec::SmallVec<[u64; 8]> = smallvec::SmallVec::new();
        if table && self.keys.load(Ordering::Relaxed) > 0 {
            let hash = self.hash(key);
            let s = self.shard(hash);
            let mut p = s.part.lock();
            if let Some(item) = p.keys.remove(key, hash) {
                p.items -= ids(&item).count();
                s.publish(&p);
                drop(p);
                self.keys.fetch_sub(1, Ordering::Relaxed);
                who.extend(ids(&item));
            }
        }
        if readers != 0 {
            let s = self.slots.lock();
            let mut bits = readers;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if s.owner[i] != 0 && !who.contains(&s.owner[i]) {
                    who.push(s.owner[i]);
                }
            }
        }
        if who.is_empty() {
            return;
        }
        let trackers: Vec<Arc<Tracker>> = {
            let clients = self.clients.read();
            who.iter().filter_map(|id| clients.get(id)).filter(|t| !(t.bcast || (t.noloop && t.client_id == modifier))).cloned().collect()
        };
        let mut one: Option<Arc<[Box<[u8]>]>> = None;
        for t in &trackers {
            let keys = one.get_or_insert_with(|| Arc::from(vec![Box::<[u8]>::from(key)])).clone();
            t.send(Some(keys), deliver);
        }
    }

    /// Sends each BCAST client the keys written under its prefixes since
    /// the last broadcast, one message per prefix (Redis does it before
    /// sleeping; here at the end of a worker's turn).
    pub fn broadcast(&self, mut deliver: impl FnMut(&Arc<Inbox>, Delivery)) {
        if !self.pending.swap(false, Ordering::AcqRel) {
            return;
        }
        let mut ps = self.prefixes.lock();
        for p in ps.iter_mut() {
            if p.pending.is_empty() {
                continue;
            }
            let pending = std::mem::take(&mut p.pending);
            let all: Arc<[Box<[u8]>]> = pending.iter().map(|(k, _)| k.clone()).collect();
            for t in &p.clients {
                let keys = if t.noloop {
                    let own: Vec<Box<[u8]>> = pending.iter().filter(|(_, by)| *by != t.client_id).map(|(k, _)| k.clone()).collect();
                    if own.is_empty() {
                        continue;
                    }
                    Arc::from(own)
                } else {
                    Arc::clone(&all)
                };
                t.send(Some(keys), &mut deliver);
            }
        }
    }

    /// FLUSHALL, FLUSHDB: every tracking client is told that every key is
    /// invalid (a null), and the table is emptied (tracking or not).
    pub fn flush(&self, mut deliver: impl FnMut(&Arc<Inbox>, Delivery)) {
        for t in self.clients.read().values() {
            t.send(None, &mut deliver);
        }
        for s in self.table.iter() {
            let mut p = s.part.lock();
            p.keys.clear();
            p.items = 0;
            s.publish(&p);
        }
        self.keys.store(0, Ordering::Relaxed);
    }

    /// `tracking-table-max-keys`: while the table and the keyspace's
    /// marked keys (`marked`) hold more keys than `max` (0: no limit),
    /// takes some out, invalidating them for their clients as if written
    /// (Redis's trackingLimitUsedSlots): the table's first, then marked
    /// ones `take_marked` draws at random (a key and its marks).
    pub fn limit(
        &self,
        max: usize,
        marked: impl Fn() -> usize,
        mut take_marked: impl FnMut(&mut dyn FnMut() -> u64) -> Option<(Box<[u8]>, u64)>,
        mut deliver: impl FnMut(&Arc<Inbox>, Delivery),
    ) {
        if max == 0 {
            return;
        }
        let mut effort = EVICT_EFFORT;
        while self.keys.load(Ordering::Relaxed) + marked() > max && effort > 0 {
            // Random keys of random shards, as Redis walks its table at
            // random (xorshift on a shared state: any draw will do).
            let mut rng = || {
                let mut x = self.evict_rng.load(Ordering::Relaxed);
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                self.evict_rng.store(x, Ordering::Relaxed);
                x
            };
            effort -= 1;
            if self.keys.load(Ordering::Relaxed) == 0 {
                if let Some((k, readers)) = take_marked(&mut rng) {
                    self.forget(&k, true, readers, 0, &mut deliver);
                }
                continue;
            }
            let at = rng() as usize % SHARDS;
            let key = self.table[at].part.lock().keys.random(&mut rng).map(|e| Box::<[u8]>::from(e.key()));
            if let Some(k) = key {
                self.forget(&k, true, 0, 0, &mut deliver);
            }
        }
    }

    /// INFO's `tracking_clients`, `tracking_total_keys`,
    /// `tracking_total_items`, `tracking_total_prefixes`, with the
    /// keyspace's `marked` keys and (key, client) pairs.
    pub fn counts(&self, marked: (usize, usize)) -> (usize, usize, usize, usize) {
        let r = Ordering::Relaxed;
        let items: usize = self.table.iter().map(|s| s.part.lock().items).sum();
        (self.client_count.load(r), self.keys.load(r) + marked.0, items + marked.1, self.prefix_count.load(r))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Messaging, Receiver};
    use super::*;
    use crate::outbuf::OutBuf;

    fn drained(inbox: &Inbox, resp3: bool, subscribed: bool) -> Vec<u8> {
        let mut out = OutBuf::new();
        inbox.drain_into(&mut out, Receiver { resp3, subscribed, share_min: 0 });
        out.to_vec()
    }

    /// A tracker whose client speaks RESP3 (a RESP2 one without a
    /// redirection is sent nothing).
    fn tracker(id: u64, inbox: Arc<Inbox>, redirect: Option<(u64, Arc<Inbox>)>, noloop: bool, bcast: bool) -> Arc<Tracker> {
        let t = Tracker::new(id, inbox, redirect, noloop, bcast);
        t.set_resp3(true);
        t
    }

    fn keys(ks: &[&[u8]]) -> Vec<tern_store::effect::Modified> {
        ks.iter().map(|k| tern_store::effect::Modified::new(0, k, None)).collect()
    }

    #[test]
    fn a_write_tells_each_tracker_once() {
        let m = Messaging::new(1);
        let tr = &m.tracking;
        let a = Inbox::new(1, 0, 0);
        let b = Inbox::new(2, 0, 0);
        let ta = tracker(1, a.clone(), None, false, false);
        let tb = tracker(2, b.clone(), None, true, false);
        tr.enable(&ta, &[]);
        tr.enable(&tb, &[]);
        let h = tr.hash(b"k");
        tr.remember(1, b"k", h);
        tr.remember(1, b"k", h);
        tr.remember(2, b"k", h);
        assert_eq!(tr.counts((0, 0)), (2, 1, 2, 0));
        // b wrote it itself, with NOLOOP: only a hears of it.
        tr.invalidate(&keys(&[b"k", b"other"]), 2, 2, |i, d| m.deliver(i, d, 0, &|_| {}));
        assert_eq!(drained(&a, true, false), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n");
        assert_eq!(drained(&b, true, false), b"");
        assert_eq!(tr.counts((0, 0)), (2, 0, 0, 0));
        // Told once: the key is forgotten until read again.
        tr.invalidate(&keys(&[b"k"]), 0, 0, |i, d| m.deliver(i, d, 0, &|_| {}));
        assert_eq!(drained(&a, true, false), b"");
        tr.disable(1);
        tr.disable(2);
        assert_eq!(tr.counts((0, 0)), (0, 0, 0, 0));
    }

    #[test]
    fn redirection_and_its_loss() {
        let m = Messaging::new(1);
        let tr = &m.tracking;
        let own = Inbox::new(1, 0, 0);
        let target = Inbox::new(2, 0, 0);
        let t = tracker(1, own.clone(), Some((2, target.clone())), false, false);
        tr.enable(&t, &[]);
        tr.remember(1, b"k", tr.hash(b"k"));
        tr.invalidate(&keys(&[b"k"]), 0, 0, |i, d| m.deliver(i, d, 0, &|_| {}));
        // A RESP2 target gets it only while subscribed.
        assert_eq!(drained(&target, false, true), b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nk\r\n");
        tr.remember(1, b"k", tr.hash(b"k"));
        target.close();
        // Broken once an invalidation finds the target gone, as in Redis.
        assert!(!t.broken());
        tr.invalidate(&keys(&[b"k"]), 0, 0, |i, d| m.deliver(i, d, 0, &|_| {}));
        assert_eq!(drained(&own, true, false), b">2\r\n$21\r\ntracking-redir-broken\r\n:2\r\n");
        assert!(t.broken());
        tr.flush(|i, d| m.deliver(i, d, 0, &|_| {}));
        assert_eq!(drained(&own, true, false), b">2\r\n$21\r\ntracking-redir-broken\r\n:2\r\n");
    }

    #[test]
    fn broadcast_groups_keys_by_prefix() {
        let m = Messaging::new(1);
        let tr = &m.tracking;
        let a = Inbox::new(1, 0, 0);
        let b = Inbox::new(2, 0, 0);
        let ta = tracker(1, a.clone(), None, false, true);
        let tb = tracker(2, b.clone(), None, true, true);
        tr.enable(&ta, &[Box::from(&b"user:"[..])]);
        tr.enable(&tb, &[]);
        assert_eq!(tr.counts((0, 0)).3, 2);
        tr.invalidate(&keys(&[b"user:1", b"x"]), 2, 2, |_, _| unreachable!());
        tr.invalidate(&keys(&[b"user:1"]), 0, 0, |_, _| unreachable!());
        tr.broadcast(|i, d| m.deliver(i, d, 0, &|_| {}));
        assert_eq!(drained(&a, true, false), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$6\r\nuser:1\r\n");
        // b wrote x itself (NOLOOP); user:1 was last written by another.
        assert_eq!(drained(&b, true, false), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$6\r\nuser:1\r\n");
        tr.broadcast(|_, _| unreachable!());
        tr.flush(|i, d| m.deliver(i, d, 0, &|_| {}));
        assert_eq!(drained(&a, false, true), b"");
        assert_eq!(drained(&b, true, false), b">2\r\n$10\r\ninvalidate\r\n_\r\n");
    }

    #[test]
    fn a_key_holds_many_clients_as_its_item_grows() {
        let m = Messaging::new(1);
        let tr = &m.tracking;
        let inboxes: Vec<_> = (1..=40).map(|id| Inbox::new(id, 0, 0)).collect();
        for (i, inbox) in inboxes.iter().enumerate() {
            let id = i as u64 + 1;
            tr.enable(&tracker(id, inbox.clone(), None, false, false), &[]);
            tr.remember(id, b"k", tr.hash(b"k"));
            tr.remember(id, b"k", tr.hash(b"k"));
        }
        assert_eq!(tr.counts((0, 0)), (40, 1, 40, 0));
        tr.invalidate(&keys(&[b"k"]), 0, 0, |i, d| m.deliver(i, d, 0, &|_| {}));
        for inbox in &inboxes {
            assert_eq!(drained(inbox, true, false), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n");
        }
        assert_eq!(tr.counts((0, 0)), (40, 0, 0, 0));
    }

    #[test]
    fn a_full_table_gives_keys_up() {
        let m = Messaging::new(1);
        let tr = &m.tracking;
        let a = Inbox::new(1, 0, 0);
        let t = tracker(1, a.clone(), None, false, false);
        tr.enable(&t, &[]);
        for i in 0..50 {
            let k = format!("k{i}");
            tr.remember(1, k.as_bytes(), tr.hash(k.as_bytes()));
        }
        tr.limit(40, || 0, |_| None, |i, d| m.deliver(i, d, 0, &|_| {}));
        assert!(tr.counts((0, 0)).1 <= 40);
        assert_eq!(drained(&a, true, false).windows(10).filter(|w| w == b"invalidate").count(), 50 - tr.counts((0, 0)).1);
        tr.limit(0, || 0, |_| None, |_, _| unreachable!());
    }
}
