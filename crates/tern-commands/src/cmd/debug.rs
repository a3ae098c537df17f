//! DEBUG: the subcommands operators and test suites use to compare and
//! inspect servers. DIGEST and DIGEST-VALUE compute Redis's digests (the
//! same hex for the same data, so two servers can be compared), SLEEP
//! stops the connection's worker, SET-ACTIVE-EXPIRE switches the
//! background expiry of keys and hash fields, PAUSE-CRON all the periodic
//! work, OBJECT shows what Redis shows of a value, RELOAD saves, empties
//! and loads back ([`reload_all`]), POPULATE makes test keys.
//! The command is refused as Redis refuses it unless
//! `enable-debug-command` allows the connection (dispatch checks
//! [`allowed`], after arity, as Redis's processCommand).
//!
//! Redis's digest (debug.c): each key's digest starts with the key mixed
//! in, then its type (4 bytes, big-endian) and its value: a string's bytes
//! and a list's elements mixed in order (`mix`: SHA1 of the digest xored
//! with the element's SHA1), a set's members and a hash's or sorted set's
//! (field, value) or (member, score) pairs xored in (`xor`: order-free),
//! and `!!expire!!` xored in for a key with a TTL (`!!hexpire!!` into a
//! field's pair for a hash field with one). The dataset's digest xors the
//! key digests of each database after mixing its number in; an empty one
//! is forty zeros.

use std::io::Write;

use sha1::{Digest, Sha1};
use tern_resp::Args;
use tern_store::{EntryExt, ValueRef};

use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::client::Client;
use crate::errors;
use crate::server::Server;

pub static COMMANDS: &[CommandSpec] = &[CommandSpec::new("debug", -2, ADMIN | NOSCRIPT | LOADING | STALE | PROTECTED | MANUAL_LOCKS, &[], debug)
    .doc("server", "A container for debugging commands.", "1.0.0", "Depends on subcommand.")
    .syscmd()
    .acl(&["admin", "slow", "dangerous"])];

/// Redis's lines for the subcommands Tern has, in Redis's order.
const HELP: &[&str] = &[
    "CHANGE-REPL-ID",
    "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cluster slots are not respected so keys not belonging to the",
    "    current node can be created in cluster mode.",
    "RELOAD [option ...]",
    "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
    "    * MERGE: conflicting keys will be loaded from RDB.",
    "    * NOFLUSH: the existing database will not be removed before load, but",
    "      conflicting keys will generate an exception and kill the server.",
    "    * NOSAVE: the database will be loaded from an existing RDB file.",
    "    Examples:",
    "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
    "      the database.",
    "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
    "      existing RDB file.",
    "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
    "      file to the database.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys (and hash-fields) in background ",
    "    when they are not accessed (otherwise the Redis behavior). Setting it",
    "    to 1 reenables back the default.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "PAUSE-CRON <0|1>",
    "    Stop periodic cron job processing.",
];

/// Whether `enable-debug-command` lets `client` run DEBUG: `yes`, or
/// `local` for a connection from a loopback address (Redis's
/// allowProtectedAction and connIsLocal).
pub fn allowed(srv: &Server, client: &Client) -> bool {
    match srv.config.read().enable_debug_command {
        "yes" => true,
        "local" => client.shared.addr.parse().is_ok_and(|a| crate::client::is_loopback(&a)),
        _ => false,
    }
}

fn debug(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let sub = args.get(1).to_ascii_lowercase();
    match (sub.as_slice(), args.len()) {
        (b"help", 2) => super::help_lines(ctx, HELP),
        (b"digest", 2) => {
            let d = dataset_digest(ctx);
            ctx.reply.simple(&hex(&d));
        }
        (b"digest-value", _) => {
            ctx.reply.array(args.len() - 2);
            for key in args.iter().skip(2) {
                let mut d = [0u8; 20];
                with_entry(ctx, key, |e| value_digest(&mut d, e));
                ctx.reply.simple(&hex(&d));
            }
        }
        (b"object", 3) => {
            let (srv, now) = (ctx.srv, ctx.now);
            match with_entry(ctx, args.get(2), |e| object_line(srv, e, now)) {
                Some(line) => ctx.reply.simple(&line),
                None => ctx.reply.error(errors::NO_SUCH_KEY),
            }
        }
        (b"sleep", 3) => {
            // strtod's reading, as Redis's: a bad number sleeps 0.
            let (secs, _, _) = tern_resp::strtod(args.get(2));
            let us = (secs * 1e6) as i64;
            if us > 0 {
                std::thread::sleep(std::time::Duration::from_micros(us as u64));
            }
            ctx.reply.ok();
        }
        (b"reload", _) => reload(ctx, args),
        (b"populate", 3..=5) => populate(ctx, args),
        (b"change-repl-id", 2) => {
            tern_config::log_notice!("Changing replication IDs after receiving DEBUG change-repl-id");
            ctx.srv.repl.change_replid();
            ctx.reply.ok();
        }
        (b"pause-cron", 3) => {
            let on = atoi(args.get(2)) != 0;
            ctx.srv.global.cron_paused.store(on, std::sync::atomic::Ordering::Relaxed);
            ctx.reply.ok();
        }
        (b"set-active-expire", 3) => {
            let on = atoi(args.get(2)) != 0;
            ctx.srv.global.active_expire_off.store(!on, std::sync::atomic::Ordering::Relaxed);
            ctx.reply.ok();
        }
        _ => ctx.reply.error(errors::subcommand_syntax(args.get(1), "debug")),
    }
}

/// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE] ([`reload_all`]).
fn reload(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let mut opts = Reload { save: true, flush: true, merge: false };
    for opt in args.iter().skip(2) {
        if opt.eq_ignore_ascii_case(b"merge") {
            opts.merge = true;
        } else if opt.eq_ignore_ascii_case(b"noflush") {
            opts.flush = false;
        } else if opt.eq_ignore_ascii_case(b"nosave") {
            opts.save = false;
        } else {
            return ctx.reply.error(errors::RELOAD_OPTIONS);
        }
    }
    if ctx.locks.is_pinned() {
        return ctx.reply.error(errors::RELOAD_IN_MULTI);
    }
    match reload_all(ctx.srv, ctx.locks, opts, ctx.worker) {
        Ok(()) => ctx.reply.ok(),
        Err(e) => ctx.reply.error(e),
    }
}

/// DEBUG RELOAD's options (Redis's debugCommand): NOSAVE clears `save`,
/// NOFLUSH `flush`, MERGE sets `merge`.
#[derive(Clone, Copy, Debug)]
struct Reload {
    save: bool,
    flush: bool,
    merge: bool,
}

/// DEBUG RELOAD: saves the keyspace to `dir/dbfilename` (unless NOSAVE),
/// empties it and the function libraries (unless NOFLUSH) and loads the
/// file back; with MERGE its keys and libraries replace those present,
/// without, one present fails the load (where Redis stops the server).
/// Clients get -LOADING meanwhile. The emptying is no write (Redis's
/// emptyData): nothing of it reaches the AOF or replicas, and the changes
/// counted since the last save are what they were after the save (or
/// before the reload, with NOSAVE). Run with no shard held (`locks` not
/// pinned): the load takes the shards' locks itself.
fn reload_all(srv: &Server, locks: &mut tern_store::LockSet<'_>, opts: Reload, worker: usize) -> Result<(), &'static str> {
    use crate::persist::{changes_since_save, rdb_path, total_changes};
    use crate::server::now_ms;
    use std::sync::atomic::Ordering;
    debug_assert!(!locks.is_pinned(), "DEBUG RELOAD with shards pinned");
    if opts.save {
        srv.durability().save(srv, locks).map_err(|_| errors::SAVE_FAILED)?;
    }
    let since_save = changes_since_save(srv);
    srv.persist.loading.store(true, Ordering::Relaxed);
    let now = now_ms();
    if opts.flush {
        let total = srv.ks.total_shards() as u32;
        locks.acquire(0..total);
        let detached: Vec<_> = (0..total).map(|g| locks.shard(g).empty(now)).collect();
        locks.release();
        drop(detached);
        srv.tracking_flushed(worker, true);
        srv.scripts.change_functions(|libs| {
            libs.clear();
            (true, ())
        });
    }
    let path = rdb_path(&srv.config.read());
    let keep_expired = srv.ks.is_replica();
    let r = std::fs::File::open(&path).map_err(|e| e.to_string()).and_then(|mut file| {
        let size = file.metadata().ok().map(|m| m.len());
        let (info, loaded, expired) = srv.durability().load_rdb(srv, &mut file, size, now, keep_expired, opts.merge)?;
        srv.scripts.load_libraries(&info.functions, opts.merge)?;
        Ok((loaded, expired))
    });
    for g in 0..srv.ks.total_shards() as u32 {
        srv.ks.publish_hint(g, &srv.ks.lock(g));
    }
    srv.persist.changes_at_save.store(total_changes(srv).saturating_sub(since_save), Ordering::Relaxed);
    srv.persist.loading.store(false, Ordering::Relaxed);
    match r {
        Ok((loaded, expired)) => {
            srv.persist.loaded_keys.store(loaded, Ordering::Relaxed);
            srv.persist.load_expired.store(expired, Ordering::Relaxed);
            tern_config::log_notice!("DB reloaded by DEBUG RELOAD");
            Ok(())
        }
        Err(e) => {
            tern_config::log_warning!("Error trying to load the RDB dump ({}): {e}", path.display());
            Err(errors::RELOAD_FAILED)
        }
    }
}

/// DEBUG POPULATE count [prefix] [size]: string keys `prefix:j` (`key`
/// by default) for j in 0..count, valued `value:j` (cut or padded with
/// zero bytes to `size` when given), in the client's database; a key
/// present is left as it is. Stored as writes like any other, so unlike
/// Redis's they reach the AOF and replicas.
fn populate(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    // Redis's getPositiveLongFromObjectOrReply: one error for both a
    // non-number and a negative one.
    let positive = |a: &[u8]| tern_resp::parse_i64(a).filter(|&n| n >= 0);
    let Some(count) = positive(args.get(2)) else {
        return ctx.reply.error(errors::MUST_BE_POSITIVE);
    };
    if ctx.srv.persist.loading.load(std::sync::atomic::Ordering::Relaxed) {
        return ctx.reply.error(errors::LOADING);
    }
    let size = match args.len() {
        5 => match positive(args.get(4)) {
            Some(n) => n as usize,
            None => return ctx.reply.error(errors::MUST_BE_POSITIVE),
        },
        _ => 0,
    };
    let prefix: &[u8] = if args.len() >= 4 { args.get(3) } else { b"key" };
    let (db, now) = (ctx.client.db, ctx.now);
    let mut key = Vec::with_capacity(prefix.len() + 21);
    let mut value = Vec::new();
    for j in 0..count {
        key.clear();
        key.extend_from_slice(prefix);
        key.push(b':');
        let _ = write!(key, "{j}");
        value.clear();
        let _ = write!(value, "value:{j}");
        if size > 0 {
            value.resize(size, 0);
        }
        let l = ctx.ks.locate(db, &key);
        ctx.locks.acquire([l.gid]);
        let shard = ctx.locks.shard(l.gid);
        if shard.get(&key, l.hash, now).is_none() {
            shard.set(&key, l.hash, tern_store::NewValue::Bytes(&value), None, now);
        }
        ctx.locks.release();
    }
    ctx.reply.ok();
}

/// `f` of `key`'s entry in the client's database, logically expired or
/// not (as Redis's dbFind), under its shard's lock; None when absent.
fn with_entry<R>(ctx: &mut Ctx<'_, '_>, key: &[u8], f: impl FnOnce(&tern_store::Entry) -> R) -> Option<R> {
    let l = ctx.ks.locate(ctx.client.db, key);
    ctx.locks.acquire([l.gid]);
    let r = ctx.locks.shard(l.gid).peek(key, l.hash, 0).map(f);
    ctx.locks.release();
    r
}

/// DEBUG OBJECT's line for `e`, as Redis writes it: the value's address,
/// OBJECT REFCOUNT's and OBJECT ENCODING's figures, the length of its RDB
/// serialisation (DUMP's payload less its type byte and footer), the
/// 24-bit access clock (Redis's `lru` field: seconds, or minutes and
/// counter under an LFU policy) and the idle seconds; for a quicklist its
/// nodes, average node length, `list-max-listpack-size`, whether
/// `list-compress-depth` compresses, and its nodes' bytes as listpacks.
fn object_line(srv: &Server, e: &tern_store::Entry, now: u64) -> String {
    let v = e.value();
    let (compress, fill, depth) = {
        let c = srv.config.read();
        (c.rdbcompression, c.list_max_listpack_size, c.list_compress_depth)
    };
    let serialized = tern_store::rdb::dump(e.value(), compress).len().saturating_sub(11);
    let idle = e.idle_secs(now);
    let lru = match srv.settings.lfu() {
        Some(l) => (((now / 60_000) & 0xFFFF) << 8) | u64::from(e.lfu_count(now, l.decay_minutes)),
        None => (now / 1000).wrapping_sub(idle) & 0xFF_FFFF,
    };
    let encoding = e.encoding();
    let mut line = format!(
        "Value at:{:p} refcount:{} encoding:{encoding} serializedlength:{serialized} lru:{lru} lru_seconds_idle:{idle}",
        e as *const tern_store::Entry as *const u8,
        super::keys::refcount(srv, e),
    );
    if let (ValueRef::List(tern_store::ListRef::Apart(list)), "quicklist") = (&v, encoding) {
        let nodes: Vec<usize> = list.node_lens().collect();
        let mut items = list.iter();
        let bytes: usize = nodes
            .iter()
            .map(|&n| {
                let mut lp = tern_store::rdb::listpack::LpBuilder::new();
                for el in items.by_ref().take(n) {
                    lp.push(&el);
                }
                lp.finish().len()
            })
            .sum();
        let avg = list.len() as f64 / nodes.len().max(1) as f64;
        line.push_str(&format!(" ql_nodes:{} ql_avg_node:{avg:.2} ql_listpack_max:{fill} ql_compressed:{} ql_uncompressed_size:{bytes}", nodes.len(), u8::from(depth != 0)));
    }
    line
}

/// C's atoi: leading blanks, a sign, then digits as far as they go (0
/// when there are none).
fn atoi(s: &[u8]) -> i64 {
    let s = s.trim_ascii_start();
    let (neg, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let n = s.iter().take_while(|c| c.is_ascii_digit()).fold(0i64, |n, &c| n.wrapping_mul(10).wrapping_add(i64::from(c - b'0')));
    if neg {
        n.wrapping_neg()
    } else {
        n
    }
}

fn hex(d: &[u8; 20]) -> String {
    String::from_utf8(crate::acl::user::hex(d)).unwrap_or_default()
}

fn sha1(data: &[u8]) -> [u8; 20] {
    Sha1::digest(data).into()
}

/// `digest ^= SHA1(data)`: order-free.
fn xor(digest: &mut [u8; 20], data: &[u8]) {
    for (d, h) in digest.iter_mut().zip(sha1(data)) {
        *d ^= h;
    }
}

/// `digest = SHA1(digest ^ SHA1(data))`: ordered.
fn mix(digest: &mut [u8; 20], data: &[u8]) {
    xor(digest, data);
    *digest = sha1(&digest[..]);
}

/// Redis's object type numbers (OBJ_STRING ...).
fn type_code(v: &ValueRef<'_>) -> u32 {
    match v {
        ValueRef::Str(_) => 0,
        ValueRef::List(_) => 1,
        ValueRef::Set(_) => 2,
        ValueRef::ZSet(_) => 3,
        ValueRef::Hash(_) => 4,
        ValueRef::Stream(_) => 6,
    }
}

/// Redis's xorObjectDigest: the entry's type and value (and TTL mark)
/// mixed into `digest`.
fn value_digest(digest: &mut [u8; 20], e: &tern_store::Entry) {
    let v = e.value();
    mix(digest, &type_code(&v).to_be_bytes());
    match &v {
        ValueRef::Str(s) => mix(digest, &s.to_vec()),
        ValueRef::List(l) => {
            for el in l.iter() {
                mix(digest, &el);
            }
        }
        ValueRef::Set(s) => {
            for m in s.iter() {
                m.with_bytes(|b| xor(digest, b));
            }
        }
        ValueRef::ZSet(z) => {
            for (member, score) in z.iter() {
                let mut el = [0u8; 20];
                mix(&mut el, member);
                mix(&mut el, tern_resp::DoubleText::new(score).as_bytes());
                xor(digest, &el);
            }
        }
        ValueRef::Hash(h) => {
            for (field, value) in h.iter() {
                let mut el = [0u8; 20];
                mix(&mut el, field);
                mix(&mut el, value);
                if h.field_expire(field).is_some() {
                    xor(&mut el, b"!!hexpire!!");
                }
                xor(digest, &el);
            }
        }
        // Each live entry in order: its ID as `ms.seq`, then its fields
        // and values.
        ValueRef::Stream(x) => x.range(tern_store::StreamId::MIN, tern_store::StreamId::MAX, false, |id, f| {
            mix(digest, format!("{}.{}", id.ms, id.seq).as_bytes());
            for (field, value) in f.iter() {
                mix(digest, &field);
                mix(digest, &value);
            }
            true
        }),
    }
    if e.expire().is_some() {
        xor(digest, b"!!expire!!");
    }
}

/// Redis's computeDatasetDigest, one database at a time with its shards
/// held together (a consistent view of each database): the database's
/// number mixed in, then each key's digest xored in (its SHA1, as
/// `xor` does), which commutes, so the keys' SHA1s are gathered first.
fn dataset_digest(ctx: &mut Ctx<'_, '_>) -> [u8; 20] {
    let mut fin = [0u8; 20];
    for db in 0..ctx.ks.db_count() {
        let gids = ctx.ks.db_gids(db);
        ctx.locks.acquire(gids.clone());
        let mut any = false;
        let mut dbd = [0u8; 20];
        for g in gids {
            for e in ctx.locks.shard(g).iter(0) {
                any = true;
                let mut d = [0u8; 20];
                mix(&mut d, e.key());
                value_digest(&mut d, e);
                xor(&mut dbd, &d);
            }
        }
        ctx.locks.release();
        if any {
            mix(&mut fin, &(db as u32).to_be_bytes());
            for (x, y) in fin.iter_mut().zip(dbd) {
                *x ^= y;
            }
        }
    }
    fin
}
