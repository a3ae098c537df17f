//! The meta protocol's commands: mg, ms, md, ma and me (mn needs no item
//! and is answered in [`Exec::run`]). Return flags come back in the order
//! the request gave them, each written by [`tern_memcache::reply::MetaLine`].

use tern_memcache::parse::item_total_size;
use tern_memcache::reply::{self, Code, MetaLine};
use tern_memcache::{errors as e, Meta, MetaCmd, StoreCmd};
use tern_store::{mc_state, Access, EntryExt};

use super::stats::bump;
use super::{
    add_delta, arith_state, as_item, concat, deadline, fresh_state, hdr, lookup, mc, new_item, push_data, put, retime,
    rewrite, ttl_left, Exec,
};

impl Exec<'_> {
    /// `me <key>`: what memcached's debug line shows of an item.
    pub(super) fn meta_debug(&mut self, key: &[u8]) {
        let loc = self.srv.ks.locate(0, key);
        let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
        let now = self.now;
        let Some(e) = lookup(&mut shard, key, loc.hash, now, self.sh) else {
            MetaLine::status(self.out, Code::En).end();
            return;
        };
        let m = hdr(e);
        let d = reply::Debug {
            exp: ttl_left(e.expire(), now).map_or(-1, |s| s as i64),
            la: e.idle_secs(now),
            cas: m.cas,
            fetched: m.state & mc_state::FETCHED != 0,
            size: item_total_size(key.len(), m.flags, m.len),
        };
        reply::debug(self.out, key, &d);
    }

    pub(super) fn meta(&mut self, m: Meta<'_>) {
        match m.cmd {
            MetaCmd::Get => self.mg(&m),
            MetaCmd::Set => self.ms(&m),
            MetaCmd::Delete => self.md(&m),
            MetaCmd::Arith => self.ma(&m),
        }
    }

    /// A status line with only the opaque and key return flags.
    fn status(&mut self, code: Code, m: &Meta<'_>, binary: bool) {
        let mut l = MetaLine::status(self.out, code);
        for (c, t) in m.flags.iter() {
            match c {
                b'O' => {
                    l.opaque(t);
                }
                b'k' => {
                    l.key(&m.key, binary);
                }
                _ => {}
            }
        }
        l.end();
    }

    fn mg(&mut self, m: &Meta<'_>) {
        let f = &m.flags;
        let key: &[u8] = &m.key;
        bump(&self.sh.cmd_get);
        let loc = self.srv.ks.locate(0, key);
        let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
        let now = self.now;
        let mut created = false;
        let mut hit = as_item(&mut shard, key, loc.hash, now, self.sh);
        if !hit {
            if let Some(n) = f.vivify {
                let cas = f.new_cas.unwrap_or_else(|| self.sh.next_cas());
                let state = if f.base64 { mc_state::KEY_BINARY } else { 0 };
                // A stub that dies at once is still answered as created.
                let dl = deadline(now, n).map(|d| d.max(now + 1));
                shard.set(key, loc.hash, new_item(&[], 0, cas, state, 0), dl, now);
                created = true;
                hit = true;
            }
        }
        // Another type is a miss, as in `lookup`.
        if !hit {
            bump(&self.sh.get_misses);
            self.stats.keyspace_misses.add(1);
            if !f.quiet {
                self.status(Code::En, m, f.base64);
            }
            return;
        }
        bump(&self.sh.get_hits);
        self.stats.keyspace_hits.add(1);
        let (out, stats) = (&mut *self.out, self.stats);
        let (share_min, lfu) = (self.srv.settings.reply_copy_avoid_min_size(), self.srv.settings.lfu());
        // The marks (fetched, win token) are memcached's read bookkeeping,
        // not a write: nothing is recorded, no WATCHer told. The access is
        // recorded last, after `l` reported the time since the previous one.
        let new_deadline = shard.modify(key, loc.hash, now, Access::NoTouch, |e, _| {
            let la = e.idle_secs(now);
            let mut won = false;
            let mut new_deadline: Option<Option<u64>> = None;
            let h = hdr(e);
            let (fetched, binary, len) = (
                h.state & mc_state::FETCHED != 0,
                h.state & mc_state::KEY_BINARY != 0,
                h.len,
            );
            let mut l = if f.value { MetaLine::value(out, len) } else { MetaLine::status(out, Code::Hd) };
            // A vivified stub has no TTL until its N flag is reached, so a `t`
            // before it reports -1, as memcached does.
            let mut expire = if created { None } else { e.expire() };
            for (c, t) in f.iter() {
                match c {
                    b'T' => {
                        let dl = deadline(now, f.ttl.unwrap_or(0));
                        expire = dl;
                        new_deadline = Some(dl);
                    }
                    b'N' if created => {
                        let dl = deadline(now, f.vivify.unwrap_or(0)).map(|d| d.max(now + 1));
                        expire = dl;
                        new_deadline = Some(dl);
                        won = true;
                    }
                    b'R' => {
                        let token_sent = h.state & mc_state::TOKEN_SENT != 0;
                        let rc = deadline(now, f.recache.unwrap_or(0));
                        if !token_sent && !created {
                            if let (Some(x), Some(r)) = (expire, rc) {
                                if x < r {
                                    won = true;
                                }
                            }
                        }
                    }
                    b's' => {
                        l.num(b's', len);
                    }
                    b't' => {
                        l.ttl(ttl_left(expire, now));
                    }
                    b'c' => {
                        l.num(b'c', h.cas);
                    }
                    b'f' => {
                        l.num(b'f', h.flags);
                    }
                    b'l' => {
                        l.num(b'l', la);
                    }
                    b'h' => {
                        l.hit_before(fetched);
                    }
                    b'O' => {
                        l.opaque(t);
                    }
                    b'k' => {
                        l.key(key, binary);
                    }
                    _ => {}
                }
            }
            let mut st = h.state;
            if st & mc_state::TOKEN_SENT != 0 {
                l.win_sent();
            }
            if st & mc_state::STALE != 0 {
                l.stale();
                if st & mc_state::TOKEN_SENT == 0 {
                    won = true;
                }
            }
            if won {
                l.win();
                st |= mc_state::TOKEN_SENT;
            }
            l.end();
            if !f.no_bump {
                st |= mc_state::FETCHED;
            }
            // Before the value is queued: marking a shared item while a reply
            // holds it would copy it.
            if st != h.state {
                e.mc_set_state(st);
            }
            if f.value {
                if let Some(it) = mc(e) {
                    push_data(out, it, share_min, stats);
                }
                reply::data_end(out);
            }
            if !f.no_bump {
                e.touch(now, lfu);
            }
            new_deadline
        });
        if let Some(dl) = new_deadline.flatten() {
            if f.ttl.is_some() {
                bump(&self.sh.cmd_touch);
            }
            bump(&self.sh.touch_hits);
            retime(&mut shard, key, loc.hash, dl, now);
        }
    }

    fn ms(&mut self, m: &Meta<'_>) {
        let f = &m.flags;
        let key: &[u8] = &m.key;
        bump(&self.sh.cmd_set);
        let loc = self.srv.ks.locate(0, key);
        let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
        let now = self.now;
        let plain_set = matches!(f.mode, None | Some(b'S')) && f.compare_cas.is_none();
        let cur = if plain_set {
            None
        } else {
            lookup(&mut shard, key, loc.hash, now, self.sh).map(|e| {
                let h = hdr(e);
                (h.cas, h.state)
            })
        };
        let mut cmd = match f.mode {
            Some(b'E') => StoreCmd::Add,
            Some(b'A') => StoreCmd::Append,
            Some(b'P') => StoreCmd::Prepend,
            Some(b'R') => StoreCmd::Replace,
            _ => StoreCmd::Set,
        };
        if f.compare_cas.is_some() && matches!(cmd, StoreCmd::Set | StoreCmd::Replace) {
            cmd = StoreCmd::Cas;
        }
        let cas = f.new_cas.unwrap_or_else(|| self.sh.next_cas());
        let flags = f.client_flags.unwrap_or(0);
        let dl = deadline(now, f.ttl.unwrap_or(0));
        let binary = if f.base64 { mc_state::KEY_BINARY } else { 0 };
        // As in `add`: a key of another type is not replaced by mode E.
        let cur = match cur {
            None if cmd == StoreCmd::Add && shard.get(key, loc.hash, now).is_some() => Some((0, 0)),
            c => c,
        };
        let code = match (cmd, cur) {
            (StoreCmd::Add, Some(_)) | (StoreCmd::Replace, None) => Code::Ns,
            (StoreCmd::Append | StoreCmd::Prepend, None) => match f.vivify {
                Some(n) => {
                    put(
                        &mut shard,
                        key,
                        loc.hash,
                        new_item(m.data, flags, cas, binary, self.share_min()),
                        deadline(now, n),
                        now,
                    );
                    Code::Hd
                }
                None => Code::Ns,
            },
            (StoreCmd::Cas, None) => Code::Nf,
            (StoreCmd::Append | StoreCmd::Prepend, Some((c, _))) => {
                if f.compare_cas.is_some_and(|x| x != c) {
                    Code::Ex
                } else {
                    let len = shard.get(key, loc.hash, now).and_then(|e| e.str()).map_or(0, |s| s.len());
                    // Too large a result is not stored, as in memcached
                    // (whose new item cannot be allocated).
                    if item_total_size(key.len(), flags, len + m.data.len())
                        > self.sh.max_item_size()
                    {
                        Code::Ns
                    } else {
                        let append = cmd == StoreCmd::Append;
                        rewrite(&mut shard, key, loc.hash, now, cas, fresh_state, |d| concat(d, m.data, append));
                        Code::Hd
                    }
                }
            }
            (StoreCmd::Cas, Some((c, state))) => {
                let want = f.compare_cas.unwrap_or(0);
                if want == c {
                    put(
                        &mut shard,
                        key,
                        loc.hash,
                        new_item(m.data, flags, cas, binary, self.share_min()),
                        dl,
                        now,
                    );
                    Code::Hd
                } else if f.invalidate && want < c {
                    // A late write of older data: kept, but marked stale
                    // with the old TTL and win token, so clients recache.
                    let keep = shard.get(key, loc.hash, now).and_then(|e| e.expire());
                    let st = mc_state::STALE | (state & mc_state::TOKEN_SENT) | binary;
                    put(
                        &mut shard,
                        key,
                        loc.hash,
                        new_item(m.data, flags, want, st, self.share_min()),
                        keep,
                        now,
                    );
                    Code::Hd
                } else {
                    Code::Ex
                }
            }
            _ => {
                put(
                    &mut shard,
                    key,
                    loc.hash,
                    new_item(m.data, flags, cas, binary, self.share_min()),
                    dl,
                    now,
                );
                Code::Hd
            }
        };
        if code == Code::Hd {
            bump(&self.sh.total_items);
            if f.quiet {
                return;
            }
        }
        let mut l = MetaLine::status(self.out, code);
        for (c, t) in f.iter() {
            match c {
                b'O' => {
                    l.opaque(t);
                }
                b'k' => {
                    l.key(key, f.base64);
                }
                b'c' => {
                    l.num(b'c', if code == Code::Hd { cas } else { 0 });
                }
                _ => {}
            }
        }
        l.end();
    }

    fn md(&mut self, m: &Meta<'_>) {
        let f = &m.flags;
        let key: &[u8] = &m.key;
        let loc = self.srv.ks.locate(0, key);
        let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
        let now = self.now;
        let Some(e) = lookup(&mut shard, key, loc.hash, now, self.sh) else {
            bump(&self.sh.delete_misses);
            self.status(Code::Nf, m, f.base64);
            return;
        };
        let it = hdr(e);
        let binary = it.state & mc_state::KEY_BINARY != 0;
        if f.compare_cas.is_some_and(|c| c != it.cas) {
            self.status(Code::Ex, m, binary);
            return;
        }
        bump(&self.sh.delete_hits);
        if f.invalidate || f.remove_value {
            let cas = f.new_cas.unwrap_or_else(|| self.sh.next_cas());
            let st = if f.invalidate {
                (it.state | mc_state::STALE) & !mc_state::TOKEN_SENT
            } else {
                it.state
            };
            if f.remove_value {
                rewrite(&mut shard, key, loc.hash, now, cas, |_| st, |_| Vec::new());
            } else {
                // Only the header changes: in place.
                shard.modify(key, loc.hash, now, Access::NoTouch, |e, edit| {
                    e.mc_set_state(st);
                    e.mc_set_cas(cas);
                    edit.changed();
                });
            }
            if f.invalidate && f.ttl.is_some() {
                retime(
                    &mut shard,
                    key,
                    loc.hash,
                    deadline(now, f.ttl.unwrap_or(0)),
                    now,
                );
            }
        } else {
            shard.remove(key, loc.hash, now);
        }
        if !f.quiet {
            self.status(Code::Hd, m, binary);
        }
    }

    fn ma(&mut self, m: &Meta<'_>) {
        let f = &m.flags;
        let key: &[u8] = &m.key;
        let incr = !matches!(f.mode, Some(b'D' | b'-'));
        let (hits, misses) = if incr {
            (&self.sh.incr_hits, &self.sh.incr_misses)
        } else {
            (&self.sh.decr_hits, &self.sh.decr_misses)
        };
        let loc = self.srv.ks.locate(0, key);
        let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
        let now = self.now;
        let value: u64;
        match lookup(&mut shard, key, loc.hash, now, self.sh) {
            None => {
                bump(misses);
                let Some(n) = f.vivify else {
                    self.status(Code::Nf, m, f.base64);
                    return;
                };
                value = f.initial.unwrap_or(0);
                let cas = f.new_cas.unwrap_or_else(|| self.sh.next_cas());
                let bin = if f.base64 { mc_state::KEY_BINARY } else { 0 };
                put(
                    &mut shard,
                    key,
                    loc.hash,
                    new_item(itoa::Buffer::new().format(value).as_bytes(), 0, cas, bin, 0),
                    deadline(now, n),
                    now,
                );
            }
            Some(e) => {
                let Some(it) = mc(e) else { return };
                if f.compare_cas.is_some_and(|c| c != it.cas()) {
                    let bin = it.state() & mc_state::KEY_BINARY != 0;
                    self.status(Code::Ex, m, bin);
                    return;
                }
                let mut probe = it.data().to_vec();
                let before = probe.len();
                let Some(v) = add_delta(&mut probe, incr, f.delta.unwrap_or(1)) else {
                    reply::line(self.out, e::NON_NUMERIC);
                    return;
                };
                bump(hits);
                value = v;
                let cas = f.new_cas.unwrap_or_else(|| self.sh.next_cas());
                let grew = probe.len() > before;
                rewrite(&mut shard, key, loc.hash, now, cas, |st| arith_state(st, grew), |_| probe);
                if let Some(t) = f.ttl {
                    retime(&mut shard, key, loc.hash, deadline(now, t), now);
                }
            }
        }
        if f.quiet {
            return;
        }
        let mut b = itoa::Buffer::new();
        let vs = b.format(value).as_bytes();
        let e = shard.get(key, loc.hash, now);
        let out = &mut *self.out;
        let mut l = if f.value { MetaLine::value(out, vs.len()) } else { MetaLine::status(out, Code::Hd) };
        for (c, t) in f.iter() {
            match c {
                b'O' => {
                    l.opaque(t);
                }
                b'k' => {
                    l.key(key, f.base64);
                }
                b't' => {
                    l.ttl(ttl_left(e.and_then(|e| e.expire()), now));
                }
                b'c' => {
                    l.num(b'c', e.and_then(mc).map_or(0, |it| it.cas()));
                }
                _ => {}
            }
        }
        l.end();
        if f.value {
            out.extend_from_slice(vs);
            reply::data_end(out);
        }
    }
}
