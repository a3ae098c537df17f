//! The memcached text and meta commands, executed against database 0 of
//! the shared keyspace (so RESP clients see the same keys).
//!
//! ```text
//!  net.rs / inproc.rs ─► Exec::run (this file: dispatch, the item helpers
//!                        │           every command shares, the pending flush;
//!                        │           version, verbosity, quit, shutdown, mn)
//!                        ├─ text.rs   get gets gat gats, set add replace append
//!                        │            prepend cas, incr decr, touch, delete,
//!                        │            flush_all
//!                        ├─ meta.rs   mg ms md ma me
//!                        ├─ stats.rs  stats (its counters live in Shared)
//!                        ├─ dump.rs   stats cachedump, lru_crawler, cache_memlimit
//!                        └─ detail.rs stats detail (per-prefix counters)
//!  replies: tern_memcache::reply (lines, headers, flags) and ::errors;
//!  item data: copied, or queued from the stored bytes (push_data)
//! ```
//!
//! A memcached item is a string ([`StrValue::Mc`]) carrying client flags, a
//! CAS id and the anti-dogpile state. A string written through RESP has
//! none of that: the first memcached access gives it flags 0 and a fresh
//! CAS, and any RESP write turns an item back into a plain string, so a
//! CAS taken before that write no longer matches. Every change goes
//! through the store's write path under the shard's lock, whose effect
//! records land in the worker's buffer ([`Exec::fx`]).
//!
//! Replies are memcached 1.6's, byte for byte (the reference is the
//! `memcached` binary; see tern-server's tests/memcache.rs). Two meta
//! flags memcached 1.6.18 rejects are accepted, as newer memcached does:
//! `E` (explicit new CAS) and `md x` (keep the item, drop its value).
//!
//! A delayed `flush_all` is one pending deadline in the server
//! ([`Server::mc_flush_at`], as memcached keeps one `oldest_live`): a newer
//! `flush_all` replaces it, an immediate one cancels it, and the cron
//! carries it out on its first tick at or after the deadline
//! ([`flush_if_due`]), its records going to the cron's effect buffer. No
//! thread or timer per request. The flush comes N seconds after the
//! request, within one cron period. memcached 1.6.18 is coarser: its clock
//! counts whole seconds and it flushes what is older than one second
//! before the deadline, so its `flush_all N` takes effect N-2 to N-1
//! seconds later (`flush_all 1` at once), and a Unix time already past
//! cancels the pending flush without flushing (here it flushes at once).

pub mod access;
mod detail;
mod dump;
mod meta;
mod stats;
mod text;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use tern_memcache::reply::{self, Status};
use tern_memcache::{errors as e, MetaCmd, Request, StoreCmd, REALTIME_MAXDELTA};
use tern_store::{mc_state, Effects, Entry, EntryExt, McRef, McStr, NewValue, Shard, StrRef, StrValue, Value};

use crate::maxmemory;
use crate::outbuf::OutBuf;
use crate::server::Server;
use crate::stats::WorkerStats;
use stats::bump;

/// State shared by every memcached connection: the CAS id counter, the
/// counters `stats` reports (stats.rs), and the item size limit.
#[derive(Debug, Default)]
pub struct Shared {
    cas: AtomicU64,
    pub cmd_get: AtomicU64,
    pub cmd_set: AtomicU64,
    pub cmd_flush: AtomicU64,
    pub cmd_touch: AtomicU64,
    /// memcached's `cmd_meta`, which counts `me` (its first meta command)
    /// and none of the others.
    pub cmd_meta: AtomicU64,
    /// Stores refused as too large, and for memory (`store_too_large`,
    /// `store_no_memory`).
    pub store_too_large: AtomicU64,
    pub store_no_memory: AtomicU64,
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
    pub max_item_size: AtomicUsize,
    /// `lru_crawler disable` (the crawler starts enabled, as memcached's).
    pub crawler_disabled: AtomicBool,
    /// `stats sizes_enable`: the first CAS id of the items `stats sizes`
    /// counts, as memcached counts only items stored since (0: disabled).
    pub sizes_cas_min: AtomicU64,
    /// `stats detail`.
    pub detail: detail::Detail,
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

    /// The last CAS id handed out (0: none yet).
    fn cas_now(&self) -> u64 {
        self.cas.load(Ordering::Relaxed)
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
    pub srv: &'a Server,
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

/// Seconds of TTL left of a deadline, as meta `t` and `me` report them
/// (None: no deadline).
fn ttl_left(dl: Option<u64>, now: u64) -> Option<u64> {
    dl.map(|d| d.saturating_sub(now).div_ceil(1000))
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
    srv.tracking_flushed(crate::messaging::NO_WORKER, true);
}

/// Carries out the pending delayed `flush_all` if its time has come by
/// `now`, recording the flush in `fx` (the cron's buffer). Returns whether
/// it flushed. The lock is held through the flush, so a `flush_all`
/// arriving meanwhile is ordered after it.
pub fn flush_if_due(srv: &Server, now: u64, fx: &Effects) -> bool {
    let mut pending = srv.mc_flush_at.lock();
    if !pending.is_some_and(|at| at <= now) {
        return false;
    }
    *pending = None;
    flush_db0(srv, now, fx);
    true
}

impl Exec<'_> {
    /// `reply-copy-avoid-min-size`: items at least this long are stored
    /// shared with the replies that send them (0: never).
    fn share_min(&self) -> usize {
        self.srv.settings.reply_copy_avoid_min_size()
    }

    /// A request from a connection that has not authenticated, while the
    /// `default` user needs a password or is off. As memcached's text-protocol authentication
    /// (`-Y`): the first command must be a `set` whose value is
    /// `<user> <password>` (words separated by spaces, more ignored), checked
    /// against Tern's users as AUTH checks them (the user it opens is
    /// returned); it is answered `STORED` even with `noreply`. Anything else is refused and, as memcached does, the
    /// rest of what the client sent with it is dropped: `After::Close` here
    /// means "discard the read buffer", not "close".
    pub fn run_unauthenticated(&mut self, req: Request<'_>) -> (Option<Arc<crate::acl::User>>, After) {
        let c: &Shared = self.sh;
        let creds = match req {
            Request::Store { cmd: StoreCmd::Set, data, .. } => data,
            // A line the parser already refused gets its usual error.
            Request::Error { msg, noreply } => {
                if !noreply {
                    reply::line(self.out, msg);
                }
                return (None, After::Continue);
            }
            _ => {
                reply::line(self.out, e::UNAUTHENTICATED);
                return (None, After::Close);
            }
        };
        bump(&c.auth_cmds);
        let mut words = creds.split(|&b| b == b' ').filter(|w| !w.is_empty());
        let (Some(user), Some(pass)) = (words.next(), words.next()) else {
            bump(&c.auth_errors);
            reply::line(self.out, e::BAD_AUTH_TOKEN);
            return (None, After::Continue);
        };
        match self.srv.acl.authenticate(user, pass) {
            Some(u) => {
                reply::status(self.out, Status::Stored);
                (Some(u), After::Continue)
            }
            None => {
                bump(&c.auth_errors);
                reply::line(self.out, e::AUTH_FAILURE);
                (None, After::Continue)
            }
        }
    }

    /// Whether a store may run under `maxmemory`: over it, evicts first
    /// (as a RESP write does); false when nothing can be evicted.
    fn room(&mut self) -> bool {
        maxmemory::make_room(self.srv, self.now, self.fx) != maxmemory::Room::Full
    }

    /// A store refused for memory: memcached's error (an error line even
    /// for meta, silent under `noreply`), and, as memcached does after a
    /// failed set, the old item goes so stale data does not outlive it.
    fn out_of_memory(&mut self, key: &[u8], unlink: bool, noreply: bool) {
        stats::bump(&self.sh.store_no_memory);
        if unlink {
            let loc = self.srv.ks.locate(0, key);
            let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
            shard.remove(key, loc.hash, self.now);
        }
        if !noreply {
            reply::line(self.out, e::OUT_OF_MEMORY);
        }
    }

    /// Executes one request, appending its reply; its writes are the
    /// keyspace events of the string class Redis's commands of the same
    /// effect send (`set`, `append`, `incrby`, `expire`, `del`…).
    pub fn run(&mut self, req: Request<'_>) -> After {
        tern_store::event::set_current(event_of(&req));
        let after = self.execute(req);
        tern_store::event::set_current(None);
        after
    }

    fn execute(&mut self, req: Request<'_>) -> After {
        match req {
            Request::Get { cas, touch, keys } => self.get(keys, cas, touch),
            Request::Store { cmd, key, noreply, .. } if !self.room() => {
                self.out_of_memory(key, cmd == StoreCmd::Set, noreply);
            }
            // memcached drops the old item after any failed `ms` (whatever
            // its mode), but only after a failed `set` among the text ones.
            Request::Meta(m) if m.cmd == MetaCmd::Set && !self.room() => {
                self.out_of_memory(&m.key, true, false);
            }
            Request::Store { cmd, key, flags, exptime, data, cas, noreply } => {
                let r = self.store(cmd, key, flags, deadline(self.now, exptime), data, cas);
                if !noreply {
                    reply::status(self.out, r);
                }
            }
            Request::Delete { key, noreply } => self.delete(key, noreply),
            Request::Arith { key, incr, delta, noreply } => self.arith(key, incr, delta, noreply),
            Request::Touch { key, exptime, noreply } => self.touch(key, exptime, noreply),
            Request::FlushAll { delay, noreply } => self.flush_all(delay, noreply),
            Request::Version => reply::version(self.out, tern_memcache::MEMCACHED_VERSION),
            Request::Verbosity { noreply } => {
                if !noreply {
                    reply::status(self.out, Status::Ok);
                }
            }
            Request::Quit => return After::Close,
            Request::Stats { args } => self.stats(args.iter().collect()),
            Request::CacheMemlimit { megabytes, noreply } => self.cache_memlimit(megabytes, noreply),
            Request::LruCrawler { args } => self.lru_crawler(args.iter().collect()),
            Request::Shutdown { args } => {
                // memcached's `shutdown` (SIGINT) and `shutdown graceful`
                // (SIGUSR1) both end the process; Tern's one shutdown lets
                // the workers finish the replies in flight, as SIGTERM does.
                let args: Vec<&[u8]> = args.iter().collect();
                if !self.srv.config.read().memcache_enable_shutdown {
                    reply::line(self.out, e::SHUTDOWN_NOT_ENABLED);
                } else if matches!(args.as_slice(), [] | [b"graceful"]) {
                    self.srv.begin_shutdown();
                    return After::Close;
                } else {
                    reply::line(self.out, e::SHUTDOWN_BAD_MODE);
                }
            }
            Request::Meta(m) => self.meta(m),
            Request::MetaNoop => reply::MetaLine::status(self.out, reply::Code::Mn).end(),
            Request::MetaDebug { key, base64: _ } => {
                stats::bump(&self.sh.cmd_meta);
                self.meta_debug(&key)
            }
            Request::TooLarge { key, unlink, noreply } => {
                stats::bump(&self.sh.store_too_large);
                self.sh.detail.record(&key, detail::Event::Set);
                // A store whose data is over the limit; a set also drops
                // the old item, so stale data does not outlive it.
                if unlink {
                    let loc = self.srv.ks.locate(0, &key);
                    let mut shard = self.srv.ks.lock_writing(loc.gid, self.fx);
                    shard.remove(&key, loc.hash, self.now);
                }
                if !noreply {
                    reply::line(self.out, e::TOO_LARGE);
                }
            }
            Request::Error { msg, noreply } => {
                if !noreply {
                    reply::line(self.out, msg);
                }
            }
            Request::Skipped => {}
        }
        After::Continue
    }
}

/// The keyspace event a request's writes are: memcached's stores are
/// SETs (or APPENDs, `prepend` its own), its arithmetic INCRBY or DECRBY,
/// a touch an EXPIRE; a deletion is a `del` whatever asked for it.
fn event_of(req: &Request<'_>) -> Option<tern_store::event::Event> {
    use crate::messaging::notify::ev;
    let store = |cmd: StoreCmd| match cmd {
        StoreCmd::Append => ev::APPEND,
        StoreCmd::Prepend => ev::PREPEND,
        _ => ev::SET,
    };
    Some(match req {
        Request::Store { cmd, .. } => store(*cmd),
        Request::TooLarge { .. } | Request::Delete { .. } => ev::DEL,
        Request::Arith { incr, .. } => {
            if *incr {
                ev::INCRBY
            } else {
                ev::DECRBY
            }
        }
        Request::Touch { .. } | Request::Get { .. } => ev::EXPIRE,
        Request::Meta(m) => match m.cmd {
            MetaCmd::Set => match m.flags.mode {
                Some(b'A') => ev::APPEND,
                Some(b'P') => ev::PREPEND,
                _ => ev::SET,
            },
            MetaCmd::Arith if matches!(m.flags.mode, Some(b'D' | b'-')) => ev::DECRBY,
            MetaCmd::Arith => ev::INCRBY,
            MetaCmd::Get => ev::EXPIRE,
            MetaCmd::Delete => ev::DEL,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_config::Config;
    use tern_memcache::{Limits, Parser};
    use tern_store::Effect;

    /// A server and one memcached connection's state, run at clock values
    /// the test picks, with effect records kept.
    struct Rig {
        srv: Arc<Server>,
        sh: Arc<Shared>,
        out: OutBuf,
        /// The worker's records; the cron's go to its own buffer.
        fx: Effects,
    }

    impl Rig {
        fn new() -> Rig {
            // memcached requests count no per-command statistics.
            let srv = Arc::new(Server::new(Config { threads: 1, ..Config::default() }, 0));
            srv.ks.attach_effects(true);
            Rig { srv, sh: Arc::new(Shared::new(1 << 20)), out: OutBuf::new(), fx: Effects::new() }
        }

        /// Runs every request in `req` at time `now`; returns the replies.
        fn run(&mut self, now: u64, req: &[u8]) -> String {
            let (mut p, lim) = (Parser::new(), Limits::default());
            let mut pos = 0;
            while let Some((r, n)) = p.parse(&req[pos..], &lim).expect("well-formed") {
                pos += n;
                let mut ex = Exec { srv: &self.srv, sh: &self.sh, out: &mut self.out, stats: &self.srv.workers[0], now, fx: &self.fx };
                ex.run(r);
            }
            assert_eq!(pos, req.len());
            let s = String::from_utf8_lossy(&self.out).into_owned();
            self.out.clear();
            s
        }

        fn has(&mut self, now: u64, key: &str) -> bool {
            match self.run(now, format!("mg {key}\r\n").as_bytes()).as_str() {
                "HD\r\n" => true,
                "EN\r\n" => false,
                r => panic!("mg answered {r:?}"),
            }
        }

        /// One cron tick at `now`: whether it flushed, and how many
        /// FLUSHDB records it left in its buffer.
        fn tick(&self, now: u64) -> (bool, usize) {
            let cron = Effects::new();
            let flushed = flush_if_due(&self.srv, now, &cron);
            (flushed, tern_store::aof::records(&cron.take()).iter().filter(|r| r.effect == Effect::FlushDb).count())
        }
    }

    const T: u64 = 1_700_000_000_000;

    #[test]
    fn a_delayed_flush_happens_on_the_first_tick_at_its_time() {
        let mut r = Rig::new();
        assert_eq!(r.run(T, b"set a 0 0 1\r\nx\r\nflush_all 5\r\n"), "STORED\r\nOK\r\n");
        assert_eq!(*r.srv.mc_flush_at.lock(), Some(T + 5_000));
        // Items written while the flush is pending go with it, as in
        // memcached (older than its `oldest_live`).
        assert_eq!(r.run(T + 1_000, b"set b 0 0 1\r\ny\r\n"), "STORED\r\n");
        assert_eq!(r.tick(T + 4_999), (false, 0));
        assert!(r.has(T + 4_999, "a") && r.has(T + 4_999, "b"));
        let (flushed, records) = r.tick(T + 5_000);
        assert!(flushed && records > 0, "flushed {flushed}, {records} FLUSHDB records");
        assert!(!r.has(T + 5_000, "a") && !r.has(T + 5_000, "b"));
        // Once: later ticks leave later writes alone.
        assert_eq!(*r.srv.mc_flush_at.lock(), None);
        r.run(T + 5_001, b"set c 0 0 1\r\nz\r\n");
        assert_eq!(r.tick(T + 60_000), (false, 0));
        assert!(r.has(T + 60_000, "c"));
        // The command itself recorded no flush; the cron's buffer did.
        assert!(tern_store::aof::records(&r.fx.take()).iter().all(|rec| rec.effect != Effect::FlushDb));
    }

    #[test]
    fn a_newer_flush_all_replaces_the_pending_one() {
        let mut r = Rig::new();
        r.run(T, b"set a 0 0 1\r\nx\r\nflush_all 5\r\nflush_all 10\r\n");
        assert!(!r.tick(T + 6_000).0);
        assert!(r.has(T + 6_000, "a"));
        assert!(r.tick(T + 10_000).0);
        assert!(!r.has(T + 10_000, "a"));
        // A shorter delay replaces a longer one too.
        r.run(T + 20_000, b"set a 0 0 1\r\nx\r\nflush_all 10\r\nflush_all 2\r\n");
        assert!(r.tick(T + 22_000).0);
        r.run(T + 23_000, b"set a 0 0 1\r\nx\r\n");
        assert!(!r.tick(T + 30_000).0);
        assert!(r.has(T + 30_000, "a"));
    }

    #[test]
    fn an_immediate_flush_all_flushes_at_once_and_cancels_the_pending_one() {
        // No delay, 0, a negative delay and a Unix time already past all
        // flush at once.
        for now_flush in [&b"flush_all\r\n"[..], b"flush_all 0\r\n", b"flush_all -1\r\n", b"flush_all 2592001\r\n"] {
            let mut r = Rig::new();
            r.run(T, b"set a 0 0 1\r\nx\r\nflush_all 5\r\n");
            assert_eq!(r.run(T + 1_000, now_flush), "OK\r\n");
            assert!(!r.has(T + 1_000, "a"), "{:?}", String::from_utf8_lossy(now_flush));
            assert!(tern_store::aof::records(&r.fx.take()).iter().any(|rec| rec.effect == Effect::FlushDb));
            assert_eq!(*r.srv.mc_flush_at.lock(), None);
            r.run(T + 2_000, b"set a 0 0 1\r\nx\r\n");
            assert_eq!(r.tick(T + 5_000), (false, 0));
            assert!(r.has(T + 5_000, "a"));
        }
    }

    #[test]
    fn a_flush_at_a_future_unix_time_waits_for_it() {
        let mut r = Rig::new();
        let at_s = T / 1000 + 3;
        r.run(T, format!("set a 0 0 1\r\nx\r\nflush_all {at_s} noreply\r\n").as_bytes());
        assert_eq!(*r.srv.mc_flush_at.lock(), Some(at_s * 1000));
        assert!(!r.tick(at_s * 1000 - 1).0);
        assert!(r.tick(at_s * 1000).0);
        assert!(!r.has(at_s * 1000, "a"));
    }

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

