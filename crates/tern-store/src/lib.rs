//! Tern's keyspace: databases split into shards, each shard a lock around a
//! table of entries, a TTL index and watch registrations.
//!
//! ```text
//!   Keyspace ── db 0..D ── shard 0..S ── Mutex<Shard>
//!                                         ├─ tern_table::Table of entries (64-byte buckets, incremental resize)
//!                                         ├─ TTL heap (when, hash) for active expiry
//!                                         ├─ interest (WATCH flags, blocked clients by key)
//!                                         └─ staged effect records (see effect)
//! ```
//!
//! A key is located once ([`Keyspace::locate`]): its Redis Cluster slot
//! (CRC16 of the key or its `{hash tag}`, [`slot`]) picks the shard, each
//! shard owning a contiguous slot range, and its seeded 64-bit hash picks the
//! bucket. The located pair serves both the "locate" step (which shard, which
//! bucket to prefetch) and the "access" step (probe under the shard's lock).
//! Keys that share a hash tag share a shard. A shard's global id orders
//! locks: a multi-key command locks its shards in ascending id ([`LockSet`]).
//!
//! Lookups of many keys overlap their cache misses through one staged-lookup
//! engine (bucket → item → value, [`stage`]): the keys of a command under
//! its locks, a pipeline's or a memcached multi-get's keys before any lock,
//! a large hash's fields. Item addresses leave the table only as
//! [`ItemHint`]s, which can only be prefetched.
//!
//! An entry is one allocation: a 4-byte [`Meta`] (value kind and the
//! LRU/LFU clock), the key, the deadline only when set, and a string written
//! whole in place; other values sit in a box the entry owns ([`entry`]).
//! Read values through [`EntryExt`].
//!
//! Every change to the keyspace, from any protocol, from expiry (lazy and
//! active, keys and hash fields), FLUSH* and SWAPDB, goes through one
//! write path on [`Shard`] (see the `shard` module docs): it accounts the
//! memory delta, tells WATCHers and clients blocked on the key, and
//! stages an [`effect`] record — the deterministic form of the change
//! (EXPIRE → PEXPIREAT, expiry → DEL) — which the lock holder gathers into
//! its [`Effects`] buffer for the AOF, replicas and keyspace notifications
//! to read; [`Record::apply`] (in `replay`) replays one into another
//! keyspace.
//!
//! # Layering
//!
//! Modules use each other one way, top to bottom. Each line names the
//! modules of this crate that one may use (`-`: none); a directory
//! (`shard/`, `keyspace/`, `rdb/`, `aof/`, `entry/`, `value/`, `list/`,
//! `zset/`, `stream/`)
//! counts as its module. The test `layering` checks the code against this
//! table and the table for cycles (see `tern-layering`), so a new module
//! needs a line here. Name what a module uses by its module's path: a
//! path to a root re-export (`crate::Keyspace`) hides the use.
//!
//! ```text
//!  replay    ─► effect keyspace shard entry value hash list set zset
//!  aof       ─► effect rdb value list
//!  rdb       ─► keyspace entry value hash list set zset stream lzf listpack
//!  snapshot  ─► keyspace shard entry value
//!  stage     ─► keyspace
//!  keyspace  ─► shard effect evict fifo event tracked lazyfree padded slot
//!  shard     ─► effect fifo entry value list event tracked
//!  evict     ─► fifo entry
//!  fifo      ─► entry
//!  effect    ─► entry value list set stream event padded
//!  entry     ─► value hash list set zset stream
//!  value     ─► hash list set zset stream
//!  list      ─► hash lzf
//!  set       ─► hash
//!  zset      ─► hash
//!  stream    ─► listpack
//!  listpack  ─► -
//!  hash      ─► -
//!  lzf       ─► -
//!  event     ─► -
//!  tracked   ─► -
//!  lazyfree  ─► -
//!  padded    ─► -
//!  slot      ─► -
//! ```
//!
//! The records ([`effect`]) know nothing of the keyspace: replaying one
//! (the AOF loader, a replica's stream) is `replay`'s, above it. A
//! snapshot's per-shard state is the shard's (`shard/snap.rs`), its driver
//! over the keyspace is [`snapshot`]'s; eviction's policies and pool sit
//! below the keyspace, its loop is the keyspace's (`keyspace/evict.rs`).
//!
//! The value layer, bottom up: a stream's nodes are listpacks, so the
//! listpack codec (and [`rdb::RdbError`], with which its reader refuses
//! bad bytes) sits in `listpack`, below both `stream` and `rdb`, which
//! re-exports them. The borrowed views ([`StrRef`], [`ValueRef`]) are
//! `value`'s, which hands them out (`entry` re-exports them). A list
//! edited where its key keeps it ([`ListMut`], `entry/list_mut.rs`) is
//! `entry`'s, as it rebuilds the item; so the records ([`effect`]) that
//! carry a list edit use `entry`.
#![forbid(unsafe_code)]

pub mod aof;
pub mod effect;
pub mod entry;
pub mod event;
pub mod evict;
pub mod fifo;
mod hash;
mod keyspace;
mod lazyfree;
mod list;
mod listpack;
mod lzf;
mod padded;
pub mod rdb;
mod replay;
mod set;
mod shard;
pub mod snapshot;
pub mod slot;
pub mod stage;
mod stream;
pub mod tracked;
mod value;
mod zset;

pub use hash::{member_hash, Hash, HashLimits, Pair as HashPair, MAX_PREFETCH_GROUP};
pub use keyspace::{Keyspace, Loc, LockSet, ShardLock, MEM_REPORT_GRAIN};
pub use padded::Padded;
pub use lazyfree::{LazyFree, LAZYFREE_THRESHOLD};
pub use list::{End, List, ListLimits, ListRef};
pub use set::{Member, Set, SetLimits};
pub use stream::{
    ClaimCount, Consumer, FieldIter, Fields, Group, Nack, RefPolicy, Stream, StreamId, StreamLimits, TrimTo, MAX_NODE_BYTES,
};
pub use zset::{key_cmp as zset_key_cmp, LexBound, ScoreBound, ZSet, ZsetLimits};
pub use entry::{apply_masters_stream, build_restored, Entry, EntryExt, Lfu, ListMut, Meta, NewValue, LFU_INIT_VAL};
pub use effect::{Effect, Effects, ListEdit, Log, Record, Ttl};
pub use evict::{EvictConfig, Evicted, Policy};
pub use fifo::FifoKind;
pub use shard::{Access, BlockingKeys, Detached, Edit, Shard, Waiter, WatchFlag};
pub use snapshot::{Snapshot, SnapshotError};
pub use stage::{ItemHint, Reach, Stager, ITEM_PREFETCH_SPAN};
pub use slot::{key_slot, SLOTS};
/// The longest key the keyspace stores (1 GiB - 1).
pub use tern_table::MAX_KEY_LEN;
/// jemalloc's size class for a request (what memory counters add), and
/// MEMORY PURGE's call into the allocator.
pub use tern_table::{allocator_muzzy, purge_allocator, size_class};
/// BITCOUNT's population count, with its run-time choice of kernel.
pub use tern_table::{popcount, ticks};
/// `prefetch-freed-items`: a freed item's block asked for whole.
pub use tern_table::prefetch_freed;
pub use value::{embeds, mc_state, McRef, McStr, StrRef, StrValue, Value, ValueRef, EMBSTR_KEY_VALUE_MAX};

#[cfg(test)]
mod layering {
    /// Every module has a line in the table, every use in the code is one
    /// its line allows, and neither the table nor the code has a cycle.
    #[test]
    fn modules_use_each_other_as_the_layering_says() {
        tern_layering::check(env!("CARGO_MANIFEST_DIR"), include_str!("lib.rs"), ("keyspace", "shard"));
    }
}
