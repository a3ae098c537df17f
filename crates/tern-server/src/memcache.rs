//! The memcached text and meta commands, executed against database 0 of
//! the shared keyspace (so RESP clients see the same keys).
//!
//! A memcached item is a string ([`StrValue::Mc`]) carrying client flags, a
//! CAS id and the anti-dogpile state. A string written through RESP has
//! none of that: the first memcached access gives it flags 0 and a fresh
//! CAS, and any RESP write turns an item back into a plain string, so a
//! CAS taken before that write no longer matches.
//!
//! Replies are memcached 1.6's, byte for byte (the reference is the
//! `memcached` binary; see tests/memcache.rs). Two meta flags memcached
//! 1.6.18 rejects are accepted, as newer memcached does: `E` (explicit new
//! CAS) and `md x` (keep the item, drop its value).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tern_memcache::parse::item_total_size;
use tern_memcache::parse::Keys;
use tern_memcache::{base64, errors as e, Meta, MetaCmd, Request, StoreCmd, REALTIME_MAXDELTA};
use tern_store::stage::Unlocked;
use tern_store::{mc_state, Access, Effects, Entry, EntryExt, Loc, McRef, McStr, NewValue, Reach, Shard, Stager, StrRef, StrValue, Value, MAX_PREFETCH_GROUP};


use crate::outbuf::OutBuf;
use crate::server::{now_ms, Server};
use crate::stats::WorkerStats;

/// The version `version` and `stats` report: the memcached release whose
/// behaviour Tern follows.
pub const MEMCACHED_VERSION: &str = "1.6.18";

/// State shared by every memcached connection.
#[derive(Debug, Default)]
pub struct Shared {
    cas: AtomicU64,
    /// Bumped by every `flush_all`: a delayed flush whose generation is no
    /// longer current was overridden.
    flush_gen: AtomicU64,
    pub cmd_get: AtomicU64,
    pub cmd_set: AtomicU64,
    pub cmd_flush: AtomicU64,
    pub cmd_touch: AtomicU64,
    pub get_hits: AtomicU64,
    pub get_misses: AtomicU64,
    pub delete_hits: AtomicU64,
    pub delete_misses: AtomicU64,
    pub incr_hits: AtomicU64,
    pub incr_misses: AtomicU64,
    pub decr_hits: AtomicU64,
    pub decr_misses: AtomicU64,
    pub cas_hits: AtomicU64,
    pub cas_misses: AtomicU64,
    pub cas_badval: AtomicU64,
    pub touch_hits: AtomicU64,
    pub touch_misses: AtomicU64,
    pub total_items: AtomicU64,
    pub total_connections: AtomicU64,
    pub auth_cmds: AtomicU64,
    pub auth_errors: AtomicU64,
    /// `memcache-max-item-size`.
    pub max_item_size: std::sync::atomic::AtomicUsize,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl Shared {
    pub fn new(max_item_size: usize) -> Self {
        Shared {
            max_item_size: max_item_size.into(),
            ..Default::default()
        }
    }

    pub fn max_item_size(&self) -> usize {
        self.max_item_size.load(Ordering::Relaxed)
    }

    fn next_cas(&self) -> u64 {
        self.cas.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// What the connection does after a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    Continue,
    Close,
}

/// Everything a memcached request needs.
pub struct Exec<'a> {
    pub srv: &'a Arc<Server>,
    pub sh: &'a Arc<Shared>,
    pub out: &'a mut OutBuf,
    pub stats: &'a WorkerStats,
    pub now: u64,
    /// The worker's effect buffer: every shard lock a request takes hands
    /// its writes' records here when released.
    pub fx: &'a Effects,
}

/// memcached's `realtime`: 0 is no expiry, up to 30 days is relative,
/// beyond that a Unix time, negative is already expired. Returns the
/// deadline in ms (`Some(0)` meaning "already past").
fn deadline(now: u64, exptime: i32) -> Option<u64> {
    let t = i64::from(exptime);
    if t == 0 {
        None
    } else if t < 0 {
        Some(0)
    } else if t > REALTIME_MAXDELTA {
        Some(t as u64 * 1000)
    } else {
        Some(now + t as u64 * 1000)
    }
}

fn is_past(dl: Option<u64>, now: u64) -> bool {
    matches!(dl, Some(d) if d <= now)
}

fn num(out: &mut Vec<u8>, n: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// An item's data in a value reply: queued from the stored buffer when it
/// is shared and at least `share_min` bytes (0: never), copied otherwise.
/// The caller appends the CRLF that must follow a queued reference.
fn push_data(out: &mut OutBuf, m: McRef<'_>, share_min: usize, stats: &WorkerStats) {
    match m.shared() {
        Some(buf) if share_min > 0 && m.len() >= share_min => {
            out.push_shared(buf, McStr::HEADER, buf.len());
            stats.reply_copy_avoided.add(1);
        }
        _ => out.extend_from_slice(m.data()),
    }
}

fn line(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Seconds of TTL left as meta `t` reports it (-1: none).
fn ttl_secs(e: &Entry, now: u64) -> i64 {
    match e.expire() {
        None => -1,
        Some(d) => (d.saturating_sub(now).div_ceil(1000)) as i64,
    }
}

/// The memcached item an entry holds; None for a plain string not yet
/// converted (see [`lookup`]) and for other types.
fn mc(e: &Entry) -> Option<McRef<'_>> {
    match e.str()? {
        StrRef::Mc(m) => Some(m),
        _ => None,
    }
}

/// An item's header fields, read out so that the entry can be changed.
#[derive(Clone, Copy, Debug, Default)]
struct Hdr {
    flags: u32,
    cas: u64,
    state: u8,
    len: usize,
}

/// The header of the item [`lookup`] returned (zeros for anything else,
/// which it does not return).
fn hdr(e: &Entry) -> Hdr {
    mc(e).map_or_else(Hdr::default, |m| Hdr {
        flags: m.flags(),
        cas: m.cas(),
        state: m.state(),
        len: m.len(),
    })
}

/// Looks a live item up, turning a plain string into an item on first
/// sight: flags 0, a fresh CAS, and a string stored shared (large, written
/// whole) stays shared. None for other types (a miss for memcached).
fn lookup<'s>(
    shard: &'s mut Shard,
    key: &[u8],
    hash: u64,
    now: u64,
    sh: &Shared,
) -> Option<&'s Entry> {
    if !as_item(shard, key, hash, now, sh) {
        return None;
    }
    shard.get(key, hash, now).filter(|e| mc(e).is_some())
}

/// [`lookup`] without the entry: whether `key` holds a live item (for a
/// caller that goes on through [`Shard::modify`]).
fn as_item(shard: &mut Shard, key: &[u8], hash: u64, now: u64, sh: &Shared) -> bool {
    let Some(s) = shard.get(key, hash, now).and_then(|e| e.str()) else { return false };
    let convert = match s {
        StrRef::Mc(_) => None,
        s => {
            let cas = sh.next_cas();
            let share = usize::from(s.shared().is_some());
            Some(s.with_bytes(|b| McStr::new_sharing(b, 0, cas, 0, share)))
        }
    };
    if let Some(m) = convert {
        // Keeps the TTL and the access clock, as a conversion in place
        // did; RESP clients see the same string, so WATCH does not fire.
        shard.restamp(key, hash, Value::Str(StrValue::Mc(m)), now);
    }
    true
}

/// A whole write's item; `share_min` is `reply-copy-avoid-min-size`
/// (items at least that long are sent from their stored bytes, so they
/// are kept in a buffer shared with replies; the rest go in the key's own
/// item without an intermediate allocation).
fn new_item(data: &[u8], flags: u32, cas: u64, state: u8, share_min: usize) -> NewValue<'_> {
    if share_min > 0 && data.len() >= share_min {
        Value::Str(StrValue::Mc(McStr::new_sharing(data, flags, cas, state, share_min))).into()
    } else {
        NewValue::Mc { data, flags, cas, state }
    }
}

/// Stores a whole item (or only removes the old one when its deadline has
/// already passed, as memcached's item would be dead on arrival).
fn put(shard: &mut Shard, key: &[u8], hash: u64, v: NewValue<'_>, dl: Option<u64>, now: u64) {
    if is_past(dl, now) {
        shard.remove(key, hash, now);
    } else {
        shard.set(key, hash, v, dl, now);
    }
}

/// Sets an existing key's deadline; a past one removes it.
fn retime(shard: &mut Shard, key: &[u8], hash: u64, dl: Option<u64>, now: u64) {
    if is_past(dl, now) {
        shard.remove(key, hash, now);
    } else {
        shard.set_expire(key, hash, dl);
    }
}

/// Gives an item new data (`data` maps the old to the new) and a new CAS,
/// keeping its flags, TTL and access clock; `state` maps the old state bits
/// to the new. An item shared with replies stays shared (a reply still
/// unsent keeps the old bytes).
fn rewrite(
    shard: &mut Shard,
    key: &[u8],
    hash: u64,
    now: u64,
    cas: u64,
    state: impl FnOnce(u8) -> u8,
    data: impl FnOnce(&[u8]) -> Vec<u8>,
) {
    let Some(m) = shard.get(key, hash, now).and_then(mc) else {
        return;
    };
    let (flags, st, shared) = (m.flags(), state(m.state()), m.shared().is_some());
    let d = data(m.data());
    let v = if shared {
        Value::Str(StrValue::Mc(McStr::new_sharing(&d, flags, cas, st, 1))).into()
    } else {
        NewValue::Mc { data: &d, flags, cas, state: st }
    };
    shard.replace_value(key, hash, v, now);
}

/// The state bits of the new item an append or prepend makes: memcached
/// allocates a fresh item, so fetched, stale and win-token marks go; how
/// the key was given (base64) stays with the key.
fn fresh_state(st: u8) -> u8 {
    st & mc_state::KEY_BINARY
}

/// The state bits after an incr/decr: a number that outgrows its item
/// gets a fresh one in memcached (as [`fresh_state`]); one that fits is
/// rewritten in place and keeps its marks.
fn arith_state(st: u8, grew: bool) -> u8 {
    if grew {
        fresh_state(st)
    } else {
        st
    }
}

/// Appends or prepends `add` to an item's data.
fn concat(old: &[u8], add: &[u8], append: bool) -> Vec<u8> {
    let mut v = Vec::with_capacity(old.len() + add.len());
    let (a, b) = if append { (old, add) } else { (add, old) };
    v.extend_from_slice(a);
    v.extend_from_slice(b);
    v
}

/// memcached's `do_add_delta`: the value must be a decimal u64; incr
/// wraps, decr stops at 0; a shorter result is padded with spaces in
/// place, as memcached does. Returns the new number.
fn add_delta(data: &mut Vec<u8>, incr: bool, delta: u64) -> Option<u64> {
    let cur = tern_memcache::number::parse_u64(data)?;
    if data.is_empty() {
        return None;
    }
    let v = if incr {
        cur.wrapping_add(delta)
    } else {
        cur.saturating_sub(delta)
    };
    let mut b = itoa::Buffer::new();
    let s = b.format(v).as_bytes();
    if s.len() <= data.len() {
        let old = data.len();
        data.clear();
        data.extend_from_slice(s);
        data.resize(old, b' ');
    } else {
        data.clear();
        data.extend_from_slice(s);
    }
    Some(v)
}

/// Flushes database 0 (memcached's keys) through the store's write path
/// (WATCHers of live keys told, the flush recorded in `fx`).
pub fn flush_db0(srv: &Server, now: u64, fx: &Effects) {
    for gid in srv.ks.db_gids(0) {
        drop(srv.ks.lock_writing(gid, fx).flush(now));
    }
}

impl Exec<'_> {
    /// `reply-copy-avoid-min-size`: items at least this long are stored
    /// shared with the replies that send them (0: never).
    fn share_min(&self) -> usize {
        self.srv.settings.reply_copy_avoid_min_size()
    }

    /// A request from a connection that has not authenticated, while
    /// `requirepass` is set. As memcached's text-protocol authentication
    /// (`-Y`): the first command must be a `set` whose value is
    /// `<user> <password>` (words separated by spaces, more ignored), checked
    /// against Tern's users as AUTH checks them; it is answered `STORED` even
    /// with `noreply`. Anything else is refused and, as memcached does, the
    /// rest of what the client sent with it is dropped: `After::Close` here
    /// means "discard the read buffer", not "close".
    pub fn run_unauthenticated(&mut self, req: Request<'_>) -> (bool, After) {
        let creds = match req {
            Request::Store { cmd: StoreCmd::Set, data, .. } => data,
            // A line the parser already refused gets its usual error.
            Request::Error { msg, noreply } => {
                if !noreply {
                    line(self.out, msg);
                }
                return (false, After::Continue);
            }
            _ => {
                line(self.out, e::UNAUTHENTICATED);
                return (false, After::Close);
            }
        };
        bump(&self.sh.auth_cmds);
        let mut words = creds.split(|&b| b == b' ').filter(|w| !w.is_empty());
        let (Some(user), Some(pass)) = (words.next(), words.next()) else {
            bump(&self.sh.auth_errors);
            line(self.out, e::BAD_AUTH_TOKEN);
            return (false, After::Continue);
        };
        if crate::cmd::connection::credentials_ok(self.srv, user, pass) {
            line(self.out, "STORED");
            (true, After::Continue)
        } else {
            bump(&self.sh.auth_errors);
            line(self.out, e::AUTH_FAILURE);
            (false, After::Continue)
        }
    }

    /// Executes one request, appending its reply.
    pub fn run(&mut self, req: Request<'_>) -> After {
        match req {
            Request::Get { cas, touch, keys } => {
                self.get_many(keys, cas, touch);
                self.out.extend_from_slice(b"END\r\n");
            }
            Request::Store {
                cmd,
                key,
                flags,
                exptime,
                data,
                cas,
                noreply,
            } => {
                let r = self.store(cmd, key, flags, deadline(self.now, exptime), data, cas);
                if !noreply {
                    line(self.out, r);
                }
            }
            Request::Delete { key, noreply } => {
                let loc = self.srv.ks.locate(0, key);
                let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
                let hit = shard.remove(key, loc.hash, self.now).is_some();
                bump(if hit {
                    &self.sh.delete_hits
                } else {
                    &self.sh.delete_misses
                });
                if !noreply {
                    line(self.out, if hit { "DELETED" } else { "NOT_FOUND" });
                }
            }
            Request::Arith {
                key,
                incr,
                delta,
                noreply,
            } => self.arith(key, incr, delta, noreply),
            Request::Touch {
                key,
                exptime,
                noreply,
            } => {
                bump(&self.sh.cmd_touch);
                let loc = self.srv.ks.locate(0, key);
                let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
                let hit = lookup(&mut shard, key, loc.hash, self.now, self.sh).is_some();
                if hit {
                    retime(
                        &mut shard,
                        key,
                        loc.hash,
                        deadline(self.now, exptime),
                        self.now,
                    );
                }
                bump(if hit {
                    &self.sh.touch_hits
                } else {
                    &self.sh.touch_misses
                });
                if !noreply {
                    line(self.out, if hit { "TOUCHED" } else { "NOT_FOUND" });
                }
            }
            Request::FlushAll { delay, noreply } => {
                bump(&self.sh.cmd_flush);
                let gen = self.sh.flush_gen.fetch_add(1, Ordering::SeqCst) + 1;
                match deadline(self.now, delay.max(0)) {
                    Some(when) if delay > 0 && when > self.now => self.flush_later(gen, when),
                    _ => flush_db0(self.srv, self.now, self.fx),
                }
                if !noreply {
                    line(self.out, "OK");
                }
            }
            Request::Version => {
                self.out.extend_from_slice(b"VERSION ");
                line(self.out, MEMCACHED_VERSION);
            }
            Request::Verbosity { noreply } => {
                if !noreply {
                    line(self.out, "OK");
                }
            }
            Request::Quit => return After::Close,
            Request::Stats { args } => self.stats(args.iter().collect()),
            Request::Meta(m) => self.meta(m),
            Request::MetaNoop => line(self.out, "MN"),
            Request::MetaDebug { key, base64: _ } => self.meta_debug(&key),
            Request::TooLarge {
                key,
                unlink,
                noreply,
            } => {
                if unlink {
                    let loc = self.srv.ks.locate(0, &key);
                    let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
                    shard.remove(&key, loc.hash, self.now);
                }
                if !noreply {
                    line(self.out, e::TOO_LARGE);
                }
            }
            Request::Error { msg, noreply } => {
                if !noreply {
                    line(self.out, msg);
                }
            }
            Request::Skipped => {}
        }
        After::Continue
    }

    fn flush_later(&self, gen: u64, when: u64) {
        let (srv, sh) = (self.srv.clone(), self.sh.clone());
        let wait = Duration::from_millis(when.saturating_sub(self.now));
        let spawned = std::thread::Builder::new()
            .name("tern-mc-flush".into())
            .spawn(move || {
                std::thread::sleep(wait);
                if sh.flush_gen.load(Ordering::SeqCst) == gen && !srv.is_shutting_down() {
                    // This thread's own buffer: no reader takes it yet.
                    flush_db0(&srv, now_ms(), &Effects::new());
                }
            });
        if spawned.is_err() {
            flush_db0(self.srv, self.now, self.fx);
        }
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
                let mut src = Unlocked { ks: &self.srv.ks, key: |i: usize| (group[i].0, group[i].1, true) };
                Stager::new(n, Reach::Value, n).before(&mut src, 0);
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
        if !as_item(&mut shard, key, loc.hash, now, self.sh) {
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
            out.extend_from_slice(b"VALUE ");
            out.extend_from_slice(key);
            out.push(b' ');
            num(out, m.flags());
            out.push(b' ');
            num(out, m.len());
            if want_cas {
                out.push(b' ');
                num(out, m.cas());
            }
            out.extend_from_slice(b"\r\n");
            push_data(out, m, share_min, stats);
            out.extend_from_slice(b"\r\n");
        });
        if let Some(t) = touch {
            bump(&self.sh.touch_hits);
            retime(&mut shard, key, loc.hash, deadline(now, t), now);
        }
    }

    /// The text storage commands. Returns the reply line.
    fn store(
        &mut self,
        cmd: StoreCmd,
        key: &[u8],
        flags: u32,
        dl: Option<u64>,
        data: &[u8],
        cas_in: u64,
    ) -> &'static str {
        bump(&self.sh.cmd_set);
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
            return "STORED";
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
                "NOT_STORED"
            }
            (StoreCmd::Cas, None) => {
                bump(&self.sh.cas_misses);
                "NOT_FOUND"
            }
            (StoreCmd::Cas, Some(c)) if c != cas_in => {
                bump(&self.sh.cas_badval);
                "EXISTS"
            }
            (StoreCmd::Append | StoreCmd::Prepend, Some(_)) => {
                let max = self.sh.max_item_size();
                let len = shard.get(key, loc.hash, now).and_then(|e| e.str()).map_or(0, |s| s.len());
                if item_total_size(key.len(), flags, len + data.len()) > max {
                    return "NOT_STORED";
                }
                let append = cmd == StoreCmd::Append;
                rewrite(&mut shard, key, loc.hash, now, cas, fresh_state, |d| concat(d, data, append));
                "STORED"
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
                "STORED"
            }
        }
    }

    fn arith(&mut self, key: &[u8], incr: bool, delta: u64, noreply: bool) {
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
                line(self.out, "NOT_FOUND");
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
                    num(self.out, v);
                    self.out.extend_from_slice(b"\r\n");
                }
            }
            None => line(self.out, e::NON_NUMERIC),
        }
    }

    fn stats(&mut self, args: Vec<&[u8]>) {
        let out = &mut *self.out;
        let stat = |out: &mut Vec<u8>, name: &str, v: &dyn std::fmt::Display| {
            out.extend_from_slice(format!("STAT {name} {v}\r\n").as_bytes());
        };
        let ld = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let sh: &Shared = self.sh;
        let srv: &Server = self.srv;
        let items = || -> (u64, u64) {
            let mut n = 0u64;
            let mut bytes = 0u64;
            for gid in srv.ks.db_gids(0) {
                let s = srv.ks.lock(gid);
                n += s.len() as u64;
                bytes += s.mem() as u64;
            }
            (n, bytes)
        };
        match args.first().copied() {
            None => {
                let now_s = self.now / 1000;
                let uptime = srv.started.elapsed().as_secs();
                stat(out, "pid", &std::process::id());
                stat(out, "uptime", &uptime);
                stat(out, "time", &now_s);
                stat(out, "version", &MEMCACHED_VERSION);
                stat(out, "pointer_size", &(usize::BITS));
                stat(
                    out,
                    "max_connections",
                    &srv.settings.maxclients(),
                );
                stat(
                    out,
                    "curr_connections",
                    &srv.connected.load(Ordering::Relaxed),
                );
                stat(out, "total_connections", &ld(&sh.total_connections));
                stat(out, "cmd_get", &ld(&sh.cmd_get));
                stat(out, "cmd_set", &ld(&sh.cmd_set));
                stat(out, "cmd_flush", &ld(&sh.cmd_flush));
                stat(out, "cmd_touch", &ld(&sh.cmd_touch));
                stat(out, "get_hits", &ld(&sh.get_hits));
                stat(out, "get_misses", &ld(&sh.get_misses));
                stat(out, "delete_misses", &ld(&sh.delete_misses));
                stat(out, "delete_hits", &ld(&sh.delete_hits));
                stat(out, "incr_misses", &ld(&sh.incr_misses));
                stat(out, "incr_hits", &ld(&sh.incr_hits));
                stat(out, "decr_misses", &ld(&sh.decr_misses));
                stat(out, "decr_hits", &ld(&sh.decr_hits));
                stat(out, "cas_misses", &ld(&sh.cas_misses));
                stat(out, "cas_hits", &ld(&sh.cas_hits));
                stat(out, "cas_badval", &ld(&sh.cas_badval));
                stat(out, "touch_hits", &ld(&sh.touch_hits));
                stat(out, "touch_misses", &ld(&sh.touch_misses));
                if srv.settings.requirepass_set() {
                    stat(out, "auth_cmds", &ld(&sh.auth_cmds));
                    stat(out, "auth_errors", &ld(&sh.auth_errors));
                }
                stat(out, "threads", &srv.workers.len());
                let (n, bytes) = items();
                stat(out, "bytes", &bytes);
                stat(out, "curr_items", &n);
                stat(out, "total_items", &ld(&sh.total_items));
                stat(out, "evictions", &0);
            }
            Some(b"settings") => {
                let cfg = srv.config.read();
                stat(out, "maxbytes", &cfg.maxmemory);
                stat(out, "maxconns", &cfg.maxclients);
                stat(out, "tcpport", &cfg.memcache_port);
                stat(out, "evictions", &"on");
                stat(out, "num_threads", &srv.workers.len());
                stat(out, "cas_enabled", &"yes");
                stat(out, "item_size_max", &cfg.memcache_max_item_size);
                stat(out, "flush_enabled", &"yes");
            }
            Some(b"items") => {
                let (n, _) = items();
                if n > 0 {
                    stat(out, "items:1:number", &n);
                    stat(out, "items:1:evicted", &0);
                }
            }
            Some(b"slabs") => {
                let (_, bytes) = items();
                stat(out, "active_slabs", &if bytes > 0 { 1 } else { 0 });
                stat(out, "total_malloced", &bytes);
            }
            Some(b"reset") => {
                for c in [
                    &sh.cmd_get,
                    &sh.cmd_set,
                    &sh.cmd_flush,
                    &sh.cmd_touch,
                    &sh.get_hits,
                    &sh.get_misses,
                    &sh.delete_hits,
                    &sh.delete_misses,
                    &sh.incr_hits,
                    &sh.incr_misses,
                    &sh.decr_hits,
                    &sh.decr_misses,
                    &sh.cas_hits,
                    &sh.cas_misses,
                    &sh.cas_badval,
                    &sh.touch_hits,
                    &sh.touch_misses,
                    &sh.total_items,
                    &sh.total_connections,
                ] {
                    c.store(0, Ordering::Relaxed);
                }
                line(out, "RESET");
                return;
            }
            Some(_) => {
                line(out, e::ERROR);
                return;
            }
        }
        out.extend_from_slice(b"END\r\n");
    }

    fn meta_debug(&mut self, key: &[u8]) {
        let loc = self.srv.ks.locate(0, key);
        let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
        let now = self.now;
        let Some(e) = lookup(&mut shard, key, loc.hash, now, self.sh) else {
            line(self.out, "EN");
            return;
        };
        let ttl = ttl_secs(e, now);
        let la = e.idle_secs(now);
        let m = hdr(e);
        let size = item_total_size(key.len(), m.flags, m.len);
        self.out.extend_from_slice(b"ME ");
        self.out.extend_from_slice(key);
        let s = format!(
            " exp={} la={} cas={} fetch={} cls=1 size={}",
            ttl,
            la,
            m.cas,
            if m.state & mc_state::FETCHED != 0 {
                "yes"
            } else {
                "no"
            },
            size
        );
        line(self.out, &s);
    }

    fn meta(&mut self, m: Meta<'_>) {
        match m.cmd {
            MetaCmd::Get => self.mg(&m),
            MetaCmd::Set => self.ms(&m),
            MetaCmd::Delete => self.md(&m),
            MetaCmd::Arith => self.ma(&m),
        }
    }

    /// Appends ` k<key>` (base64 with ` b` for binary keys).
    fn ret_key(out: &mut Vec<u8>, key: &[u8], binary: bool) {
        out.extend_from_slice(b" k");
        if binary {
            base64::encode(out, key);
            out.extend_from_slice(b" b");
        } else {
            out.extend_from_slice(key);
        }
    }

    /// A status line with only the opaque and key return flags.
    fn status(&mut self, code: &str, m: &Meta<'_>, binary: bool) {
        self.out.extend_from_slice(code.as_bytes());
        for (c, t) in m.flags.iter() {
            match c {
                b'O' => {
                    self.out.push(b' ');
                    self.out.extend_from_slice(t);
                }
                b'k' => Self::ret_key(self.out, &m.key, binary),
                _ => {}
            }
        }
        self.out.extend_from_slice(b"\r\n");
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
                self.status("EN", m, f.base64);
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
            if f.value {
                out.extend_from_slice(b"VA ");
                num(out, len);
            } else {
                out.extend_from_slice(b"HD");
            }
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
                        out.extend_from_slice(b" s");
                        num(out, len);
                    }
                    b't' => {
                        out.extend_from_slice(b" t");
                        match expire {
                            None => out.extend_from_slice(b"-1"),
                            Some(d) => num(out, d.saturating_sub(now).div_ceil(1000)),
                        }
                    }
                    b'c' => {
                        out.extend_from_slice(b" c");
                        num(out, h.cas);
                    }
                    b'f' => {
                        out.extend_from_slice(b" f");
                        num(out, h.flags);
                    }
                    b'l' => {
                        out.extend_from_slice(b" l");
                        num(out, la);
                    }
                    b'h' => out.extend_from_slice(if fetched { b" h1" } else { b" h0" }),
                    b'O' => {
                        out.push(b' ');
                        out.extend_from_slice(t);
                    }
                    b'k' => Self::ret_key(out, key, binary),
                    _ => {}
                }
            }
            let mut st = h.state;
            if st & mc_state::TOKEN_SENT != 0 {
                out.extend_from_slice(b" Z");
            }
            if st & mc_state::STALE != 0 {
                out.extend_from_slice(b" X");
                if st & mc_state::TOKEN_SENT == 0 {
                    won = true;
                }
            }
            if won {
                out.extend_from_slice(b" W");
                st |= mc_state::TOKEN_SENT;
            }
            out.extend_from_slice(b"\r\n");
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
                out.extend_from_slice(b"\r\n");
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
            (StoreCmd::Add, Some(_)) | (StoreCmd::Replace, None) => "NS",
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
                    "HD"
                }
                None => "NS",
            },
            (StoreCmd::Cas, None) => "NF",
            (StoreCmd::Append | StoreCmd::Prepend, Some((c, _))) => {
                if f.compare_cas.is_some_and(|x| x != c) {
                    "EX"
                } else {
                    let len = shard.get(key, loc.hash, now).and_then(|e| e.str()).map_or(0, |s| s.len());
                    // Too large a result is not stored, as in memcached
                    // (whose new item cannot be allocated).
                    if item_total_size(key.len(), flags, len + m.data.len())
                        > self.sh.max_item_size()
                    {
                        "NS"
                    } else {
                        let append = cmd == StoreCmd::Append;
                        rewrite(&mut shard, key, loc.hash, now, cas, fresh_state, |d| concat(d, m.data, append));
                        "HD"
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
                    "HD"
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
                    "HD"
                } else {
                    "EX"
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
                "HD"
            }
        };
        if code == "HD" {
            bump(&self.sh.total_items);
            if f.quiet {
                return;
            }
        }
        self.out.extend_from_slice(code.as_bytes());
        for (c, t) in f.iter() {
            match c {
                b'O' => {
                    self.out.push(b' ');
                    self.out.extend_from_slice(t);
                }
                b'k' => Self::ret_key(self.out, key, f.base64),
                b'c' => {
                    self.out.extend_from_slice(b" c");
                    num(self.out, if code == "HD" { cas } else { 0 });
                }
                _ => {}
            }
        }
        self.out.extend_from_slice(b"\r\n");
    }

    fn md(&mut self, m: &Meta<'_>) {
        let f = &m.flags;
        let key: &[u8] = &m.key;
        let loc = self.srv.ks.locate(0, key);
        let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
        let now = self.now;
        let Some(e) = lookup(&mut shard, key, loc.hash, now, self.sh) else {
            bump(&self.sh.delete_misses);
            self.status("NF", m, f.base64);
            return;
        };
        let it = hdr(e);
        let binary = it.state & mc_state::KEY_BINARY != 0;
        if f.compare_cas.is_some_and(|c| c != it.cas) {
            self.status("EX", m, binary);
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
            self.status("HD", m, binary);
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
                    self.status("NF", m, f.base64);
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
                    self.status("EX", m, bin);
                    return;
                }
                let mut probe = it.data().to_vec();
                let before = probe.len();
                let Some(v) = add_delta(&mut probe, incr, f.delta.unwrap_or(1)) else {
                    line(self.out, e::NON_NUMERIC);
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
        if f.value {
            out.extend_from_slice(b"VA ");
            num(out, vs.len());
        } else {
            out.extend_from_slice(b"HD");
        }
        for (c, t) in f.iter() {
            match c {
                b'O' => {
                    out.push(b' ');
                    out.extend_from_slice(t);
                }
                b'k' => Self::ret_key(out, key, f.base64),
                b't' => {
                    out.extend_from_slice(b" t");
                    match e.and_then(|e| e.expire()) {
                        None => out.extend_from_slice(b"-1"),
                        Some(d) => num(out, d.saturating_sub(now).div_ceil(1000)),
                    }
                }
                b'c' => {
                    out.extend_from_slice(b" c");
                    num(out, e.and_then(mc).map_or(0, |it| it.cas()));
                }
                _ => {}
            }
        }
        out.extend_from_slice(b"\r\n");
        if f.value {
            out.extend_from_slice(vs);
            out.extend_from_slice(b"\r\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_pads_like_memcached() {
        let mut d = b"10".to_vec();
        assert_eq!(add_delta(&mut d, false, 1), Some(9));
        assert_eq!(d, b"9 ");
        let mut d = b"99".to_vec();
        assert_eq!(add_delta(&mut d, true, 1), Some(100));
        assert_eq!(d, b"100");
        let mut d = b"18446744073709551615".to_vec();
        assert_eq!(add_delta(&mut d, true, 2), Some(1));
        let mut d = b"x".to_vec();
        assert_eq!(add_delta(&mut d, true, 1), None);
        assert_eq!(add_delta(&mut Vec::new(), true, 1), None);
    }

    #[test]
    fn expiration_times() {
        assert_eq!(deadline(5_000, 0), None);
        assert_eq!(deadline(5_000, 10), Some(15_000));
        assert_eq!(deadline(5_000, -1), Some(0));
        assert_eq!(deadline(5_000, 2_592_001), Some(2_592_001_000));
    }
}
