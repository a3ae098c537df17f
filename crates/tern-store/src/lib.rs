//! Tern's keyspace: databases split into shards, each shard a lock around a
//! table of entries, a TTL index and watch registrations.
//!
//! ```text
//!   Keyspace ── db 0..D ── shard 0..S ── Mutex<Shard>
//!                                         ├─ Table   (chained buckets, SCAN-stable cursors)
//!                                         ├─ TTL heap (when, hash) for active expiry
//!                                         └─ watchers (WATCH flags by key)
//! ```
//!
//! A key is hashed once ([`Keyspace::locate`]); the hash picks the shard by its
//! high bits and the bucket by its low bits, so the same hash serves both the
//! "locate" step (which shard, later which bucket to prefetch) and the
//! "access" step (probe under the shard's lock). A shard's global id orders
//! locks: a multi-key command locks its shards in ascending id ([`LockSet`]).
//!
//! Goals: binary-safe keys, millisecond TTLs with lazy and bounded active
//! expiry, and an API the prefetching table (its own issue) can sit behind.
//! Non-goals here: incremental rehash and prefetch (the table's issue).
#![forbid(unsafe_code)]

mod hash;
mod keyspace;
mod lazyfree;
mod shard;
mod table;
mod value;

pub use hash::{Hash, HashLimits, Pair as HashPair};
pub use keyspace::{Keyspace, Loc, LockSet, Padded};
pub use lazyfree::{LazyFree, LAZYFREE_THRESHOLD};
pub use shard::{Access, Detached, Entry, Lfu, Shard, WatchFlag};
pub use table::Table;
pub use value::{mc_state, McStr, StrValue, Value};
