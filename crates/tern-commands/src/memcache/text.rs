//! The text protocol's commands: retrieval (get, gets, gat, gats),
//! storage (set, add, replace, append, prepend, cas), incr/decr, touch,
//! delete and flush_all. (version, verbosity and quit need no item and
//! are answered in [`Exec::run`].)

use tern_memcache::parse::{item_total_size, Keys};
use tern_memcache::reply::{self, Status};
use tern_memcache::{errors as e, StoreCmd};
use tern_store::stage::Unlocked;
use tern_store::{mc_state, Access, EntryExt, Loc, Reach, Stager, MAX_PREFETCH_GROUP};

use super::stats::bump;
use super::{
    add_delta, arith_state, as_item, concat, deadline, flush_db0, fresh_state, hdr, lookup, mc, new_item, push_data, put,
    retime, rewrite, Exec, Shared,
};

use super::detail::Event;

impl Exec<'_> {
    /// `get`/`gets`/`gat`/`gats`: a VALUE block per item found, then END.
    pub(super) fn get(&mut self, keys: Keys<'_>, want_cas: bool, touch: Option<i32>) {
        self.get_many(keys, want_cas, touch);
        reply::status(self.out, Status::End);
    }

    /// The keys of a `get`/`gets`/`gat`/`gats`, in groups of
    /// `prefetch-batch-max-size`: each group's keys are hashed once, their
    /// buckets, items and values asked for (the locked stages only under
    /// locks that are free, released at once), then read in order. One key,
    /// or prefetching off, is a plain lookup per key.
    fn get_many(&mut self, keys: Keys<'_>, want_cas: bool, touch: Option<i32>) {
        let batch = self.srv.settings.prefetch_batch_max_size();
        let mut it = keys.iter();
        let mut group = [(&[][..], Loc::default()); MAX_PREFETCH_GROUP];
        loop {
            let mut n = 0;
            for k in it.by_ref() {
                group[n] = (k, self.srv.ks.locate(0, k));
                n += 1;
                if n >= batch.clamp(1, MAX_PREFETCH_GROUP) {
                    break;
                }
            }
            if n == 0 {
                return;
            }
            if batch > 1 && n > 1 {
                let group = &group[..n];
                let mut src = Unlocked { ks: &self.srv.ks, key: |i: usize| (group[i].0, group[i].1, true, None) };
                Stager::new(n, Reach::Value, n)
                    .value_gate(self.srv.settings.prefetch_value_gate())
                    .before(&mut src, 0);
            }
            for &(k, l) in &group[..n] {
                self.get_one(k, l, want_cas, touch);
            }
        }
    }

    fn get_one(&mut self, key: &[u8], loc: Loc, want_cas: bool, touch: Option<i32>) {
        bump(&self.sh.cmd_get);
        if touch.is_some() {
            bump(&self.sh.cmd_touch);
        }
        let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
        let now = self.now;
        let hit = as_item(&mut shard, key, loc.hash, now, self.sh);
        self.sh.detail.record(key, Event::Get { hit });
        if !hit {
            bump(&self.sh.get_misses);
            if touch.is_some() {
                bump(&self.sh.touch_misses);
            }
            self.stats.keyspace_misses.add(1);
            return;
        }
        bump(&self.sh.get_hits);
        self.stats.keyspace_hits.add(1);
        let share_min = self.srv.settings.reply_copy_avoid_min_size();
        let (out, stats) = (&mut *self.out, self.stats);
        // The fetched mark is memcached's read bookkeeping, not a write:
        // nothing is recorded, no WATCHer told.
        shard.modify(key, loc.hash, now, Access::Touch(self.srv.settings.lfu()), |e, _| {
            let st = hdr(e).state;
            if st & mc_state::FETCHED == 0 {
                // In place, before the value is queued: marking a shared
                // item while a reply holds it would copy it.
                e.mc_set_state(st | mc_state::FETCHED);
            }
            let Some(m) = mc(e) else { return };
            reply::value(out, key, m.flags(), m.len(), want_cas.then(|| m.cas()));
            push_data(out, m, share_min, stats);
            reply::data_end(out);
        });
        if let Some(t) = touch {
            bump(&self.sh.touch_hits);
            retime(&mut shard, key, loc.hash, deadline(now, t), now);
        }
    }

    /// The text storage commands. Returns the reply's status.
    pub(super) fn store(
        &mut self,
        cmd: StoreCmd,
        key: &[u8],
        flags: u32,
        dl: Option<u64>,
        data: &[u8],
        cas_in: u64,
    ) -> Status {
        bump(&self.sh.cmd_set);
        self.sh.detail.record(key, Event::Set);
        let loc = self.srv.ks.locate(0, key);
        let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
        let now = self.now;
        let cas = self.sh.next_cas();
        // A plain set needs nothing of the old item: no lookup (which
        // would also convert a RESP string only to drop it).
        if cmd == StoreCmd::Set {
            bump(&self.sh.total_items);
            put(
                &mut shard,
                key,
                loc.hash,
                new_item(data, flags, cas, 0, self.share_min()),
                dl,
                now,
            );
            return Status::Stored;
        }
        let cur = lookup(&mut shard, key, loc.hash, now, self.sh).map(|e| hdr(e).cas);
        // A key of another type (a hash) is a miss to memcached, but
        // `add` must not replace it.
        let cur = match cur {
            None if cmd == StoreCmd::Add && shard.get(key, loc.hash, now).is_some() => Some(0),
            c => c,
        };
        match (cmd, cur) {
            (StoreCmd::Add, Some(_))
            | (StoreCmd::Replace | StoreCmd::Append | StoreCmd::Prepend, None) => {
                if cmd == StoreCmd::Add {
                    shard.lookup(key, loc.hash, now, Access::Touch(self.srv.settings.lfu()));
                }
                Status::NotStored
            }
            (StoreCmd::Cas, None) => {
                bump(&self.sh.cas_misses);
                Status::NotFound
            }
            (StoreCmd::Cas, Some(c)) if c != cas_in => {
                bump(&self.sh.cas_badval);
                Status::Exists
            }
            (StoreCmd::Append | StoreCmd::Prepend, Some(_)) => {
                let max = self.sh.max_item_size();
                let len = shard.get(key, loc.hash, now).and_then(|e| e.str()).map_or(0, |s| s.len());
                if item_total_size(key.len(), flags, len + data.len()) > max {
                    return Status::NotStored;
                }
                let append = cmd == StoreCmd::Append;
                rewrite(&mut shard, key, loc.hash, now, cas, fresh_state, |d| concat(d, data, append));
                Status::Stored
            }
            _ => {
                if cmd == StoreCmd::Cas {
                    bump(&self.sh.cas_hits);
                }
                bump(&self.sh.total_items);
                put(
                    &mut shard,
                    key,
                    loc.hash,
                    new_item(data, flags, cas, 0, self.share_min()),
                    dl,
                    now,
                );
                Status::Stored
            }
        }
    }

    pub(super) fn arith(&mut self, key: &[u8], incr: bool, delta: u64, noreply: bool) {
        let loc = self.srv.ks.locate(0, key);
        let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
        let now = self.now;
        let (hits, misses) = if incr {
            (&self.sh.incr_hits, &self.sh.incr_misses)
        } else {
            (&self.sh.decr_hits, &self.sh.decr_misses)
        };
        if lookup(&mut shard, key, loc.hash, now, self.sh).is_none() {
            bump(misses);
            if !noreply {
                reply::status(self.out, Status::NotFound);
            }
            return;
        }
        let cas = self.sh.next_cas();
        let mut result = None;
        let mut probe = shard
            .get(key, loc.hash, now)
            .and_then(mc)
            .map(|m| m.data().to_vec())
            .unwrap_or_default();
        let before = probe.len();
        if let Some(v) = add_delta(&mut probe, incr, delta) {
            result = Some(v);
            let grew = probe.len() > before;
            rewrite(&mut shard, key, loc.hash, now, cas, |st| arith_state(st, grew), |_| probe);
        }
        match result {
            Some(v) => {
                bump(hits);
                if !noreply {
                    reply::number(self.out, v);
                }
            }
            None => reply::line(self.out, e::NON_NUMERIC),
        }
    }

    pub(super) fn delete(&mut self, key: &[u8], noreply: bool) {
        self.sh.detail.record(key, Event::Delete);
        let loc = self.srv.ks.locate(0, key);
        let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
        let hit = shard.remove(key, loc.hash, self.now).is_some();
        let c: &Shared = self.sh;
        bump(if hit { &c.delete_hits } else { &c.delete_misses });
        if !noreply {
            reply::status(self.out, if hit { Status::Deleted } else { Status::NotFound });
        }
    }

    pub(super) fn touch(&mut self, key: &[u8], exptime: i32, noreply: bool) {
        bump(&self.sh.cmd_touch);
        let loc = self.srv.ks.locate(0, key);
        let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
        let hit = lookup(&mut shard, key, loc.hash, self.now, self.sh).is_some();
        if hit {
            retime(&mut shard, key, loc.hash, deadline(self.now, exptime), self.now);
        }
        let c: &Shared = self.sh;
        bump(if hit { &c.touch_hits } else { &c.touch_misses });
        if !noreply {
            reply::status(self.out, if hit { Status::Touched } else { Status::NotFound });
        }
    }

    /// `flush_all [delay]`. A delay in the future becomes the one pending
    /// flush (replacing any earlier one, as memcached's single
    /// `oldest_live` is replaced), which the cron carries out
    /// ([`super::flush_if_due`]); no delay, a negative one or a Unix time
    /// already past flushes at once and cancels the pending one.
    pub(super) fn flush_all(&mut self, delay: i32, noreply: bool) {
        bump(&self.sh.cmd_flush);
        let mut pending = self.srv.mc_flush_at.lock();
        match deadline(self.now, delay.max(0)) {
            Some(when) if delay > 0 && when > self.now => *pending = Some(when),
            _ => {
                *pending = None;
                drop(pending);
                flush_db0(self.srv, self.now, self.fx);
            }
        }
        if !noreply {
            reply::status(self.out, Status::Ok);
        }
    }
}
