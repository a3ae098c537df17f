//! Staged lookups of keys in the keyspace: the sources the one
//! staged-lookup engine (`tern_table::stage`, re-exported here) walks.
//! [`Locked`] stages keys whose shards a [`LockSet`] holds (the keys of a
//! multi-key command, in groups staggered by [`Stager`]); [`Unlocked`]
//! stages keys before their command locks anything (a pipeline's keys, a
//! memcached multi-get): stage 1 reads the lock-free bucket hint, stages 2
//! and 3 run under each shard's lock only when it is free, released at
//! once. A large hash's fields are staged by `Hash::get_many_staged`.
//!
//! Only hints leave a table ([`ItemHint`]); nothing here changes or
//! expires anything, so what the lookups then return, and in which order,
//! is what running them one by one returns.

pub use tern_table::stage::{items_and_values, ItemHint, Lookups, Reach, Stager, ITEM_PREFETCH_SPAN};

use crate::keyspace::{Keyspace, Loc, LockSet};

/// Keys whose shards `locks` holds: key `i` is `key(i)`, located at
/// `locs[i]`.
pub struct Locked<'l, 'ks, K> {
    pub locks: &'l mut LockSet<'ks>,
    pub locs: &'l [Loc],
    pub key: K,
}

impl<'k, K: Fn(usize) -> &'k [u8]> Lookups for Locked<'_, '_, K> {
    #[inline]
    fn bucket(&mut self, i: usize) {
        let l = self.locs[i];
        self.locks.shard(l.gid).prefetch_bucket(l.hash);
    }
    #[inline]
    fn item(&mut self, i: usize) -> ItemHint {
        let l = self.locs[i];
        self.locks.shard(l.gid).item_hint(l.hash)
    }
    #[inline]
    fn key_len(&self, i: usize) -> usize {
        (self.key)(i).len()
    }
    #[inline]
    fn value(&mut self, i: usize) -> bool {
        let l = self.locs[i];
        self.locks.shard(l.gid).prefetch_value((self.key)(i), l.hash, None)
    }
}

/// Keys no lock is held for yet: `key(i)` gives key `i`, its location,
/// whether its value will be read, and the hash of the member its command
/// looks up in it, if any (see `Shard::prefetch_value`).
pub struct Unlocked<'ks, K> {
    pub ks: &'ks Keyspace,
    pub key: K,
}

impl<'k, K: Fn(usize) -> (&'k [u8], Loc, bool, Option<u64>)> Lookups for Unlocked<'_, K> {
    #[inline]
    fn bucket(&mut self, i: usize) {
        let (_, l, _, _) = (self.key)(i);
        self.ks.prefetch_hint(l.gid, l.hash);
    }
    #[inline]
    fn item(&mut self, i: usize) -> ItemHint {
        let (_, l, _, _) = (self.key)(i);
        match self.ks.try_lock(l.gid) {
            Some(sh) => sh.item_hint(l.hash),
            None => ItemHint::NONE,
        }
    }
    #[inline]
    fn key_len(&self, i: usize) -> usize {
        (self.key)(i).0.len()
    }
    #[inline]
    fn reads(&self, i: usize) -> bool {
        (self.key)(i).2
    }
    #[inline]
    fn value(&mut self, i: usize) -> bool {
        let (k, l, _, member) = (self.key)(i);
        // A busy shard tells nothing about the values: not counted as idle.
        self.ks.try_lock(l.gid).is_none_or(|sh| sh.prefetch_value(k, l.hash, member))
    }
}
