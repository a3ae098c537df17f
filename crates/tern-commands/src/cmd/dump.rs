//! DUMP and RESTORE: one value in Redis's RDB encoding with the version
//! and CRC64 footer (`tern_store::rdb`), byte for byte what Redis 8.4's
//! DUMP gives for the same value in the same encoding. MIGRATE sends
//! such payloads to another server as RESTORE (RESTORE-ASKING in cluster
//! mode) and deletes what it moved.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::messaging::notify::ev;
use tern_resp::{parse_i64, Args};
use tern_store::rdb;
use tern_store::{EntryExt, NewValue};

use super::keyspec::{index, keyword, ks, range, Key, ACCESS, DELETE, INCOMPLETE, OW, RO, RW, UPDATE};
use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::errors;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("dump", 2, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], dump)
        .doc("generic", "Returns a serialized representation of the value stored at a key.", "2.6.0", "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).")
        .acl(&["keyspace", "read", "slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("restore", -4, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), range(0, 1, 0))], restore)
        .event(ev::RESTORE)
        .doc("generic", "Creates a key from the serialized representation of a value.", "2.6.0", "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).")
        .acl(&["keyspace", "write", "slow", "dangerous"])
        .history(&[
            ("3.0.0", "Added the `REPLACE` modifier."),
            ("5.0.0", "Added the `ABSTTL` modifier."),
            ("5.0.0", "Added the `IDLETIME` and `FREQ` options."),
        ]),
    CommandSpec::new("restore-asking", -4, WRITE | DENYOOM | ASKING, &[ks(OW | UPDATE, index(1), range(0, 1, 0))], restore)
        .event(ev::RESTORE)
        .doc("server", "An internal command for migrating keys in a cluster.", "3.0.0", "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).")
        .acl(&["keyspace", "write", "slow", "dangerous"])
        .history(&[
            ("3.0.0", "Added the `REPLACE` modifier."),
            ("5.0.0", "Added the `ABSTTL` modifier."),
            ("5.0.0", "Added the `IDLETIME` and `FREQ` options."),
        ])
        .syscmd(),
    CommandSpec::new(
        "migrate",
        -6,
        WRITE | MANUAL_LOCKS,
        &[ks(RW | ACCESS | DELETE, index(3), range(0, 1, 0)), ks(RW | ACCESS | DELETE | INCOMPLETE, keyword("KEYS", -2), range(-1, 1, 0))],
        migrate,
    )
    .doc("generic", "Atomically transfers a key from one Redis instance to another.", "2.6.0", "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target instance. See the pages of these commands for time complexity. Also an O(N) data transfer between the two instances is performed.")
    .acl(&["keyspace", "write", "slow", "dangerous"])
    .history(&[
        ("3.0.0", "Added the `COPY` and `REPLACE` options."),
        ("3.0.6", "Added the `KEYS` option."),
        ("4.0.7", "Added the `AUTH` option."),
        ("6.0.0", "Added the `AUTH2` option."),
    ])
    .tips(&["nondeterministic_output"])
    .key_finder(migrate_keys),
];

/// MIGRATE's keys as Redis's migrateGetKeys finds them: the key argument,
/// or, with KEYS (and an empty key argument), the keys after it (none
/// with a key argument too); the options before KEYS are skipped with
/// their values.
fn migrate_keys(args: Args<'_>) -> Vec<Key> {
    let flags = RW | ACCESS | DELETE;
    let mut i = 6;
    while i < args.len() {
        let a = args.get(i);
        if a.eq_ignore_ascii_case(b"keys") {
            // A key argument with KEYS is a syntax error MIGRATE reports:
            // no keys.
            if !args.get(3).is_empty() {
                return Vec::new();
            }
            return (i + 1..args.len()).map(|pos| Key { pos, flags }).collect();
        }
        if a.eq_ignore_ascii_case(b"auth") {
            i += 1;
        } else if a.eq_ignore_ascii_case(b"auth2") {
            i += 2;
        }
        i += 1;
    }
    vec![Key { pos: 3, flags }]
}

/// MIGRATE's connections, by target, kept for reuse (Redis's
/// migrateCachedSocket): the database last selected on each.
struct Cached {
    sock: TcpStream,
    db: Option<i64>,
    used: Instant,
}

/// A cached connection idle this long is closed (Redis: 10 s).
const MIGRATE_IDLE: Duration = Duration::from_secs(10);

static MIGRATE_SOCKETS: Mutex<Option<HashMap<String, Cached>>> = Mutex::new(None);

/// MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw | AUTH2
/// user pw] [KEYS key...]: the keys that exist are sent as RESTORE
/// (RESTORE-ASKING in cluster mode) with their remaining TTL, and deleted
/// here once the target took them (unless COPY), as Redis's
/// migrateCommand; a connection that fails before any key went is tried
/// once more. The keys' shards stay locked while it runs.
fn migrate(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (mut copy, mut replace) = (false, false);
    let mut auth: Option<(Option<&[u8]>, &[u8])> = None;
    let (mut first, mut count) = (3, 1);
    let mut j = 6;
    while j < args.len() {
        let a = args.get(j);
        let more = args.len() - 1 - j;
        if a.eq_ignore_ascii_case(b"copy") {
            copy = true;
        } else if a.eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else if a.eq_ignore_ascii_case(b"auth") {
            if more == 0 {
                return ctx.reply.error(errors::SYNTAX);
            }
            j += 1;
            auth = Some((None, args.get(j)));
        } else if a.eq_ignore_ascii_case(b"auth2") {
            if more < 2 {
                return ctx.reply.error(errors::SYNTAX);
            }
            auth = Some((Some(args.get(j + 1)), args.get(j + 2)));
            j += 2;
        } else if a.eq_ignore_ascii_case(b"keys") {
            if !args.get(3).is_empty() {
                return ctx.reply.error(errors::MIGRATE_KEYS_EMPTY_KEY);
            }
            first = j + 1;
            count = args.len() - j - 1;
            break;
        } else {
            return ctx.reply.error(errors::SYNTAX);
        }
        j += 1;
    }
    let (Some(mut timeout), Some(db)) = (parse_i64(args.get(5)), parse_i64(args.get(4))) else {
        return ctx.reply.error(errors::NOT_INTEGER);
    };
    if timeout <= 0 {
        timeout = 1000;
    }
    let timeout = Duration::from_millis(timeout as u64);
    let (now, mydb) = (ctx.now, ctx.client.db);
    let locs: Vec<_> = (first..first + count).map(|i| ctx.ks.locate(mydb, args.get(i))).collect();
    ctx.locks.acquire(locs.iter().map(|l| l.gid));
    let compress = ctx.srv.config.read().rdbcompression;
    // The keys there are, with their payloads and remaining TTLs.
    let mut found: Vec<(usize, Vec<u8>, i64)> = Vec::new();
    for (i, loc) in locs.iter().enumerate() {
        let key = args.get(first + i);
        let acc = ctx.access();
        if let Some(e) = ctx.locks.shard(loc.gid).lookup(key, loc.hash, now, acc) {
            let ttl = match e.expire() {
                Some(at) if at <= now => continue,
                Some(at) => (at - now).max(1) as i64,
                None => 0,
            };
            found.push((i, rdb::dump(e.value(), compress), ttl));
        }
    }
    if found.is_empty() {
        ctx.locks.release();
        return ctx.reply.simple("NOKEY");
    }
    let restore: &[u8] = if ctx.srv.cluster.get().is_some() { b"RESTORE-ASKING" } else { b"RESTORE" };
    let target = format!("{}:{}", String::from_utf8_lossy(args.get(1)), String::from_utf8_lossy(args.get(2)));
    let mut retried = false;
    let outcome = loop {
        // A refused connection shows, as in Redis (whose connect waits
        // for the socket to be writable), as a failed write.
        let mut cached = match migrate_socket(&target, timeout) {
            Ok(c) => c,
            Err(true) => break Err(errors::MIGRATE_CONNECT.as_bytes().to_vec()),
            Err(false) if !retried => {
                retried = true;
                continue;
            }
            Err(false) => break Err(errors::MIGRATE_WRITE.as_bytes().to_vec()),
        };
        let mut out = Vec::new();
        let command = |out: &mut Vec<u8>, argv: &[&[u8]]| {
            tern_resp::Encoder::RESP2.array(out, argv.len());
            for a in argv {
                tern_resp::Encoder::RESP2.bulk(out, a);
            }
        };
        if let Some((user, pw)) = auth {
            let mut cmd: Vec<&[u8]> = vec![b"AUTH"];
            cmd.extend(user);
            cmd.push(pw);
            command(&mut out, &cmd);
        }
        let select = cached.db != Some(db);
        if select {
            command(&mut out, &[b"SELECT", db.to_string().as_bytes()]);
        }
        for (i, payload, ttl) in &found {
            let ttl = ttl.to_string();
            let mut cmd: Vec<&[u8]> = vec![restore, args.get(first + i), ttl.as_bytes(), payload];
            if replace {
                cmd.push(b"REPLACE");
            }
            command(&mut out, &cmd);
        }
        if cached.sock.write_all(&out).is_err() {
            if !retried {
                retried = true;
                continue;
            }
            break Err(errors::MIGRATE_WRITE.as_bytes().to_vec());
        }
        // One line a command: AUTH's, SELECT's, then each RESTORE's.
        let mut r = BufReader::new(&cached.sock);
        let mut line = Vec::new();
        let mut read = |line: &mut Vec<u8>| -> bool {
            line.clear();
            matches!(r.read_until(b'\n', line), Ok(n) if n > 0)
        };
        let mut first_error: Option<Vec<u8>> = None;
        let mut pre_ok = true;
        for _ in 0..usize::from(auth.is_some()) + usize::from(select) {
            if !read(&mut line) {
                pre_ok = false;
                break;
            }
            if line.first() == Some(&b'-') && first_error.is_none() {
                first_error = Some(line.trim_ascii_end()[1..].to_vec());
            }
        }
        let mut moved = Vec::new();
        let mut socket_error = !pre_ok;
        if pre_ok {
            for (i, _, _) in &found {
                if !read(&mut line) {
                    socket_error = true;
                    break;
                }
                if line.first() == Some(&b'-') {
                    first_error.get_or_insert_with(|| line.trim_ascii_end()[1..].to_vec());
                } else if first_error.is_none() {
                    moved.push(*i);
                }
            }
        }
        if !copy {
            for i in &moved {
                let loc = locs[*i];
                ctx.locks.shard(loc.gid).remove(args.get(first + i), loc.hash, now);
            }
        }
        if socket_error {
            forget_socket(&target);
            if moved.is_empty() && first_error.is_none() && !retried {
                retried = true;
                continue;
            }
            if first_error.is_none() {
                break Err(errors::MIGRATE_READ.as_bytes().to_vec());
            }
        }
        match first_error {
            Some(e) => {
                cached.db = None;
                keep_socket(&target, cached);
                break Err(errors::migrate_target_error(&e));
            }
            None => {
                cached.db = Some(db);
                keep_socket(&target, cached);
                break Ok(());
            }
        }
    };
    ctx.locks.release();
    match outcome {
        Ok(()) => ctx.reply.ok(),
        Err(e) => ctx.reply.error(e),
    }
}

/// A connection to `target`: the cached one (idle less than 10 s), or a
/// new one, with `timeout` for connecting, writing and reading. Err(true):
/// no connection within the timeout (or no such address); Err(false):
/// refused.
fn migrate_socket(target: &str, timeout: Duration) -> Result<Cached, bool> {
    if let Some(c) = MIGRATE_SOCKETS.lock().get_or_insert_with(HashMap::new).remove(target) {
        if c.used.elapsed() < MIGRATE_IDLE {
            let _ = (c.sock.set_read_timeout(Some(timeout)), c.sock.set_write_timeout(Some(timeout)));
            return Ok(c);
        }
    }
    let addr = target.to_socket_addrs().map_err(|_| true)?.next().ok_or(true)?;
    let sock = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.kind() == std::io::ErrorKind::TimedOut)?;
    let _ = sock.set_nodelay(true);
    sock.set_read_timeout(Some(timeout)).map_err(|_| true)?;
    sock.set_write_timeout(Some(timeout)).map_err(|_| true)?;
    Ok(Cached { sock, db: None, used: Instant::now() })
}

fn keep_socket(target: &str, mut c: Cached) {
    c.used = Instant::now();
    MIGRATE_SOCKETS.lock().get_or_insert_with(HashMap::new).insert(target.to_string(), c);
}

fn forget_socket(target: &str) {
    MIGRATE_SOCKETS.lock().get_or_insert_with(HashMap::new).remove(target);
}

fn dump(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let loc = ctx.locs[0];
    let (now, acc) = (ctx.now, ctx.access());
    let compress = ctx.srv.config.read().rdbcompression;
    let payload = ctx.locks.shard(loc.gid).lookup(args.get(1), loc.hash, now, acc).map(|e| rdb::dump(e.value(), compress));
    match payload {
        Some(p) => {
            ctx.stats.keyspace_hits.add(1);
            ctx.reply.bulk(&p);
        }
        None => {
            ctx.stats.keyspace_misses.add(1);
            ctx.reply.null();
        }
    }
}

/// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f], with
/// Redis's checks in Redis's order: options, TTL, an existing key, the
/// payload's footer, then its body.
fn restore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (mut replace, mut absttl) = (false, false);
    let (mut idle, mut freq): (Option<i64>, Option<i64>) = (None, None);
    let mut j = 4;
    while j < args.len() {
        let a = args.get(j);
        let more = j + 1 < args.len();
        if a.eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else if a.eq_ignore_ascii_case(b"absttl") {
            absttl = true;
        } else if a.eq_ignore_ascii_case(b"idletime") && more && freq.is_none() {
            let Some(v) = parse_i64(args.get(j + 1)) else { return ctx.reply.error(errors::NOT_INTEGER) };
            if v < 0 {
                return ctx.reply.error(errors::INVALID_IDLETIME);
            }
            idle = Some(v);
            j += 1;
        } else if a.eq_ignore_ascii_case(b"freq") && more && idle.is_none() {
            let Some(v) = parse_i64(args.get(j + 1)) else { return ctx.reply.error(errors::NOT_INTEGER) };
            if !(0..=255).contains(&v) {
                return ctx.reply.error(errors::INVALID_FREQ);
            }
            freq = Some(v);
            j += 1;
        } else {
            return ctx.reply.error(errors::SYNTAX);
        }
        j += 1;
    }
    let Some(ttl) = parse_i64(args.get(2)) else { return ctx.reply.error(errors::NOT_INTEGER) };
    if ttl < 0 {
        return ctx.reply.error(errors::INVALID_TTL);
    }
    let (key, loc, now) = (args.get(1), ctx.locs[0], ctx.now);
    let exists = ctx.locks.shard(loc.gid).get(key, loc.hash, now).is_some();
    if exists && !replace {
        return ctx.reply.error(errors::BUSYKEY);
    }
    let lim = crate::persist::limits(ctx.srv);
    let value = match rdb::restore(args.get(3), &lim) {
        Ok(v) => v,
        Err(rdb::RdbError::Version(_) | rdb::RdbError::Checksum { .. }) => return ctx.reply.error(errors::DUMP_PAYLOAD),
        Err(_) => return ctx.reply.error(errors::BAD_DATA_FORMAT),
    };
    let expire = match ttl {
        0 => None,
        t if absttl => Some(t as u64),
        t => Some(now.saturating_add(t as u64)),
    };
    let shard = ctx.locks.shard(loc.gid);
    // Already expired: the key is gone (an old one replaced), as in Redis.
    if expire.is_some_and(|t| t <= now) {
        if exists {
            shard.remove(key, loc.hash, now);
        }
        return ctx.reply.ok();
    }
    let lfu = ctx.srv.settings.lfu().is_some();
    let (idle, freq) = (idle.map(|v| v as u64), freq.map(|v| v as u8));
    let entry = tern_store::build_restored(key, NewValue::Value(value), expire, now, lfu, idle, freq);
    shard.insert_entry(key, loc.hash, entry, now);
    ctx.reply.ok();
}
