//! Applying an effect record to a keyspace, without the command layer:
//! what the AOF loader and a replica's stream do with the records of
//! [`crate::effect`]. It sits above the keyspace, so the records know
//! nothing of it.

use crate::effect::{Effect, ListEdit, Record, Ttl};
use crate::entry::EntryExt;
use crate::hash::{Hash, HashLimits};
use crate::keyspace::{Keyspace, LockSet};
use crate::list::{List, ListLimits};
use crate::set::{Set, SetLimits};
use crate::shard::Access;
use crate::value::Value;
use crate::zset::{ZSet, ZsetLimits};

impl Record {
    /// Replays the record into `ks`, a keyspace with the writer's number
    /// of databases (what a replica or an AOF load does, without the
    /// command layer). `lim` must be the hash limits the writer ran with,
    /// so that hashes take the same encodings, and `list` the list
    /// limits, for the same reason; `now` is the replay's
    /// clock: 0 replays without expiring anything, the records of expiry
    /// being replayed themselves.
    pub fn apply(&self, ks: &Keyspace, lim: HashLimits, list: ListLimits, now: u64) {
        // Stream commands are run by the command table, which this replay
        // does not reach (see Effect::Stream).
        if matches!(self.effect, Effect::Stream { .. }) {
            return;
        }
        let db = self.db as usize;
        let key = match self.effect.key() {
            Some(k) => k,
            None => {
                match &self.effect {
                    Effect::FlushDb => {
                        for gid in ks.db_gids(db) {
                            drop(ks.lock(gid).flush(now));
                        }
                    }
                    Effect::SwapDb { other } => {
                        let (a, b) = (ks.db_gids(db), ks.db_gids(*other as usize));
                        let mut set = LockSet::new(ks);
                        set.acquire(a.clone().chain(b.clone()));
                        for (x, y) in a.zip(b) {
                            let (sx, sy) = set.shard_pair(x, y);
                            sx.swap_with(sy, now);
                        }
                        set.release();
                    }
                    _ => {}
                }
                return;
            }
        };
        let loc = ks.locate(db, key);
        let mut shard = ks.lock(loc.gid);
        let h = loc.hash;
        match &self.effect {
            Effect::Put { value, ttl: Ttl::At(at), .. } => {
                shard.set(key, h, value.clone(), *at, now);
            }
            Effect::Put { value, ttl: Ttl::Keep, .. } => {
                if shard.get(key, h, now).is_some() {
                    shard.replace_value(key, h, value.clone(), now);
                } else {
                    shard.set(key, h, value.clone(), None, now);
                }
            }
            Effect::Del { .. } => {
                shard.remove(key, h, now);
            }
            Effect::Expire { at, .. } => {
                shard.set_expire(key, h, *at);
            }
            Effect::HSet { pairs, keep_ttl, .. } => {
                let pairs: Vec<(&[u8], &[u8])> = pairs.iter().map(|(f, v)| (&f[..], &v[..])).collect();
                shard.modify_or_create(key, h, now, Access::NoTouch, || Some(Value::Hash(Hash::default())), |e, edit| {
                    if let Some(hv) = e.hash_mut() {
                        hv.set_many(&pairs, *keep_ttl, lim);
                        edit.emit(|| self.effect.clone());
                    }
                });
            }
            Effect::HDel { fields, .. } => {
                shard.modify(key, h, now, Access::NoTouch, |e, edit| {
                    if let Some(hv) = e.hash_mut() {
                        hv.remove_many(fields);
                        edit.emit(|| self.effect.clone());
                    }
                });
            }
            Effect::HExpire { at, fields, .. } => {
                shard.modify(key, h, now, Access::NoTouch, |e, edit| {
                    if let Some(hv) = e.hash_mut() {
                        for f in fields {
                            match at {
                                Some(w) if hv.contains(f) => hv.set_field_expire(f, *w),
                                Some(_) => {}
                                None => {
                                    hv.persist_field(f);
                                }
                            }
                        }
                        edit.emit(|| self.effect.clone());
                    }
                });
            }
            Effect::List { edit, .. } => {
                let create = || matches!(edit, ListEdit::Push { .. }).then(|| Value::List(List::new()));
                shard.modify_or_create(key, h, now, Access::NoTouch, create, |e, ed| {
                    if let Some(mut l) = e.list_mut() {
                        edit.apply_to(&mut l, list);
                        l.finish(ed);
                        ed.emit(|| self.effect.clone());
                    }
                });
            }
            // Replayed with the default thresholds: the encoding may
            // differ from the writer's if it ran with others, the members
            // do not.
            Effect::SAdd { members, .. } => {
                let lim = SetLimits::default();
                let create = || members.first().map(|m| Value::Set(Set::new_for(m, members.len(), lim)));
                shard.modify_or_create(key, h, now, Access::NoTouch, create, |e, edit| {
                    if let Some(sv) = e.set_mut() {
                        sv.prepare_write(members.len(), lim);
                        for m in members {
                            sv.add(m, lim);
                        }
                        edit.emit(|| self.effect.clone());
                    }
                });
            }
            Effect::SRem { members, .. } => {
                shard.modify(key, h, now, Access::NoTouch, |e, edit| {
                    if let Some(sv) = e.set_mut() {
                        for m in members {
                            sv.remove(m);
                        }
                        edit.emit(|| self.effect.clone());
                    }
                });
            }
            // Replayed with the default thresholds, as sets are.
            Effect::ZAdd { pairs, .. } => {
                let lim = ZsetLimits::default();
                let longest = pairs.iter().map(|p| p.1.len()).max().unwrap_or(0);
                let create = || Some(Value::ZSet(ZSet::new_for(pairs.len(), longest, lim)));
                shard.modify_or_create(key, h, now, Access::NoTouch, create, |e, edit| {
                    if let Some(z) = e.zset_mut() {
                        z.prepare_write(pairs.len(), longest, lim);
                        for (s, m) in pairs {
                            z.insert(m, *s, lim);
                        }
                        edit.emit(|| self.effect.clone());
                    }
                });
            }
            Effect::ZRem { members, .. } => {
                shard.modify(key, h, now, Access::NoTouch, |e, edit| {
                    if let Some(z) = e.zset_mut() {
                        for m in members {
                            z.remove(m);
                        }
                        edit.emit(|| self.effect.clone());
                    }
                });
            }
            Effect::FlushDb | Effect::SwapDb { .. } | Effect::Command { .. } | Effect::Stream { .. } => {}
        }
    }
}
