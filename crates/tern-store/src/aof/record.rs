//! Effect records as AOF commands, and back.
//!
//! Writing: a record's [`Effect::to_argv`] commands as RESP arrays
//! (tern-resp's request encoder), after a `SELECT` whenever the record's
//! database differs from the last one written.
//!
//! Reading: [`parse`] turns a command of the file into the effect
//! records it stands for, which [`Record::apply`] replays — the one
//! replay path, which a replica will share. It reads the forms
//! [`Effect::to_argv`] writes and the ones Redis writes that say the
//! same thing (lower-case names, `EXPIREAT`, `UNLINK`, `FLUSHALL`,
//! `HMSET`, `SET … EX`, a `SET`'s `NX`/`XX`/`GET`, which succeeded when
//! they were logged). A command whose outcome depends on what the key
//! held (INCR, APPEND, an `LTRIM` counted from the head, …) is
//! [`Parsed::Other`]: the caller runs it through the command table.

use crate::effect::{Effect, ListEdit, Log, Record, Ttl};
use crate::list::End;
use crate::value::{McStr, StrValue, Value};

/// Appends `SELECT db` to `out` if `cur` (the database the output's last
/// command ran in) is not `db`.
#[inline]
fn select(out: &mut Vec<u8>, db: u32, cur: &mut Option<u32>) {
    if *cur != Some(db) {
        tern_resp::encode::request(out, [&b"SELECT"[..], itoa::Buffer::new().format(db).as_bytes()]);
        *cur = Some(db);
    }
}

/// Appends `rec` to `out` as commands, after a `SELECT` if `db` (the
/// database the file's last command ran in) is not the record's.
pub fn encode(out: &mut Vec<u8>, rec: &Record, db: &mut Option<u32>) {
    select(out, rec.db, db);
    rec.effect.encode(out, rec.db);
}

/// Appends the records of `log` numbered from `from` on to `out`, each
/// after a `SELECT` where its database differs from the last one written
/// (`db`, kept across calls): the AOF's and the replication stream's
/// bytes, which the records carry already encoded.
pub fn encode_log(out: &mut Vec<u8>, log: &Log, db: &mut Option<u32>, from: u64) {
    for (r, bytes) in log.iter() {
        if r.seq >= from {
            select(out, r.db, db);
            out.extend_from_slice(bytes);
        }
    }
}

/// Calls `f` with each command of `log`'s records, in order, and the
/// record it belongs to.
fn each_command(log: &Log, mut f: impl FnMut(&crate::effect::Rec, Vec<Vec<u8>>)) {
    for (r, bytes) in log.iter() {
        let mut reader = super::CommandReader::new(bytes, 0);
        while let Ok(Some(argv)) = reader.next_command() {
            f(r, argv);
        }
    }
}

/// The commands `log`'s records are written as, in order, each as its
/// arguments (for tests and tools that look at what was recorded).
pub fn commands(log: &Log) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    each_command(log, |_, argv| out.push(argv));
    out
}

/// The records `log` holds, read back from their commands (for tests and
/// tools that look at what was recorded): MULTI, EXEC and any command
/// that is no record form come back as [`Effect::Command`].
pub fn records(log: &Log) -> Vec<Record> {
    let mut out = Vec::new();
    let mut cur = Cursor::default();
    each_command(log, |r, argv| {
        cur.db = r.db;
        match parse(&argv, &mut cur, u32::MAX, 0) {
            Ok(Parsed::Records(recs)) => out.extend(recs.into_iter().map(|x| Record { seq: r.seq, ..x })),
            _ => out.push(Record { db: r.db, seq: r.seq, effect: Effect::Command { argv: argv.iter().map(|a| boxed(a)).collect() } }),
        }
    });
    out
}

/// What a command of the file is.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    /// The changes it made, in order (none for SELECT).
    Records(Vec<Record>),
    /// The start of a transaction: what follows up to [`Parsed::Exec`]
    /// is whole or not at all.
    Multi,
    Exec,
    /// A command that is not a record form: the caller runs it in
    /// database [`Parsed::Other`]'s number.
    Other(u32),
}

/// Why a command of the file cannot be replayed.
#[derive(Debug, PartialEq)]
pub struct FormError(pub String);

fn bad(cmd: &[u8], why: &str) -> FormError {
    FormError(format!("'{}': {why}", String::from_utf8_lossy(cmd)))
}

fn boxed(b: &[u8]) -> Box<[u8]> {
    b.into()
}

fn int(cmd: &[u8], b: &[u8]) -> Result<i64, FormError> {
    tern_resp::parse_i64(b).ok_or_else(|| bad(cmd, "value is not an integer"))
}

fn uint(cmd: &[u8], b: &[u8]) -> Result<u64, FormError> {
    tern_resp::parse_u64(b).ok_or_else(|| bad(cmd, "value is not an integer"))
}

/// `FIELDS n f…` from `at` on: the fields, if the count matches.
fn fields(cmd: &[u8], argv: &[Vec<u8>], at: usize) -> Result<Vec<Box<[u8]>>, FormError> {
    let ok = argv.get(at).is_some_and(|w| w.eq_ignore_ascii_case(b"FIELDS"));
    let n = argv.get(at + 1).and_then(|n| tern_resp::parse_u64(n));
    match n {
        Some(n) if ok && argv.len() == at + 2 + n as usize && n > 0 => Ok(argv[at + 2..].iter().map(|f| boxed(f)).collect()),
        _ => Err(bad(cmd, "wrong number of arguments")),
    }
}

/// What a reader of commands carries from one to the next: the database
/// SELECT chose, and the memcached item header a PING announced for the
/// SET right after it (see [`crate::effect`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cursor {
    pub db: u32,
    mc: Option<(u32, u64, u8)>,
}

/// The records `argv` stands for, `cur` being where the file's reading
/// is (its database, which SELECT changes) and `dbs` the databases there
/// are; `now` turns a relative TTL (`SET … EX`) into a deadline.
pub fn parse(argv: &[Vec<u8>], cur: &mut Cursor, dbs: u32, now: u64) -> Result<Parsed, FormError> {
    let Some(name) = argv.first() else { return Err(FormError("empty command".into())) };
    // A header holds for the next command only.
    let header = cur.mc.take();
    if let Some(h) = crate::effect::mc_header(argv) {
        cur.mc = Some(h);
        return Ok(Parsed::Records(Vec::new()));
    }
    let db = &mut cur.db;
    let cmd = name.to_ascii_uppercase();
    let c = &cmd[..];
    let n = argv.len();
    let arity = |ok: bool| if ok { Ok(()) } else { Err(bad(name, "wrong number of arguments")) };
    let key = || boxed(&argv[1]);
    let one = |effect: Effect| Ok(Parsed::Records(vec![Record { db: *db, seq: 0, effect }]));
    match c {
        b"SELECT" => {
            arity(n == 2)?;
            let to = uint(name, &argv[1])?;
            if to >= u64::from(dbs) {
                return Err(bad(name, "DB index is out of range"));
            }
            *db = to as u32;
            Ok(Parsed::Records(Vec::new()))
        }
        b"MULTI" => Ok(Parsed::Multi),
        b"EXEC" => Ok(Parsed::Exec),
        // TERN.MCSET: an item as older versions wrote it.
        b"SET" | b"TERN.MCSET" => {
            let mc = c == b"TERN.MCSET";
            let fixed = if mc { 6 } else { 3 };
            arity(n >= fixed)?;
            let mut ttl = Ttl::At(None);
            let mut i = fixed;
            while i < n {
                let opt = argv[i].to_ascii_uppercase();
                let arg = argv.get(i + 1);
                match (&opt[..], arg) {
                    (b"KEEPTTL", _) => ttl = Ttl::Keep,
                    (b"NX" | b"XX" | b"GET", _) if !mc => {}
                    (b"PXAT" | b"EXAT" | b"PX" | b"EX", Some(a)) => {
                        let v = uint(name, a)?;
                        let at = match &opt[..] {
                            b"PXAT" => v,
                            b"EXAT" => v.saturating_mul(1000),
                            b"PX" => now.saturating_add(v),
                            _ => now.saturating_add(v.saturating_mul(1000)),
                        };
                        ttl = Ttl::At(Some(at));
                        i += 1;
                    }
                    _ => return Err(bad(name, "syntax error")),
                }
                i += 1;
            }
            let value = if mc {
                let flags = u32::try_from(uint(name, &argv[3])?).map_err(|_| bad(name, "flags out of range"))?;
                let cas = uint(name, &argv[4])?;
                let state = u8::try_from(uint(name, &argv[5])?).map_err(|_| bad(name, "state out of range"))?;
                Value::Str(StrValue::Mc(McStr::new(&argv[2], flags, cas, state)))
            } else if let Some((flags, cas, state)) = header {
                Value::Str(StrValue::Mc(McStr::new(&argv[2], flags, cas, state)))
            } else {
                crate::rdb::str_value(Ok(argv[2].clone()))
            };
            one(Effect::Put { key: key(), value, ttl })
        }
        b"DEL" | b"UNLINK" => {
            arity(n >= 2)?;
            let recs = argv[1..].iter().map(|k| Record { db: *db, seq: 0, effect: Effect::Del { key: boxed(k) } }).collect();
            Ok(Parsed::Records(recs))
        }
        b"PEXPIREAT" | b"EXPIREAT" if n == 3 => {
            let v = uint(name, &argv[2])?;
            let at = if c == b"PEXPIREAT" { v } else { v.saturating_mul(1000) };
            one(Effect::Expire { key: key(), at: Some(at) })
        }
        b"PERSIST" => {
            arity(n == 2)?;
            one(Effect::Expire { key: key(), at: None })
        }
        b"HSET" | b"HMSET" => {
            arity(n >= 4 && n % 2 == 0)?;
            let pairs = argv[2..].chunks(2).map(|p| (boxed(&p[0]), boxed(&p[1]))).collect();
            one(Effect::HSet { key: key(), pairs, keep_ttl: false })
        }
        b"HSETEX" if n >= 7 && argv[2].eq_ignore_ascii_case(b"KEEPTTL") && argv[3].eq_ignore_ascii_case(b"FIELDS") => {
            let count = uint(name, &argv[4])? as usize;
            arity(count > 0 && n == 5 + 2 * count)?;
            let pairs = argv[5..].chunks(2).map(|p| (boxed(&p[0]), boxed(&p[1]))).collect();
            one(Effect::HSet { key: key(), pairs, keep_ttl: true })
        }
        b"HDEL" => {
            arity(n >= 3)?;
            one(Effect::HDel { key: key(), fields: argv[2..].iter().map(|f| boxed(f)).collect() })
        }
        b"HPEXPIREAT" if n >= 6 => {
            let at = uint(name, &argv[2])?;
            one(Effect::HExpire { key: key(), at: Some(at), fields: fields(name, argv, 3)? })
        }
        b"HPERSIST" if n >= 5 => one(Effect::HExpire { key: key(), at: None, fields: fields(name, argv, 2)? }),
        b"LPUSH" | b"RPUSH" => {
            arity(n >= 3)?;
            let end = if c == b"LPUSH" { End::Left } else { End::Right };
            one(Effect::List { key: key(), edit: ListEdit::Push { end, elems: argv[2..].iter().map(|e| boxed(e)).collect() } })
        }
        b"LPOP" | b"RPOP" if n == 2 || n == 3 => {
            let end = if c == b"LPOP" { End::Left } else { End::Right };
            let count = if n == 3 { uint(name, &argv[2])? as usize } else { 1 };
            one(Effect::List { key: key(), edit: ListEdit::Pop { end, count } })
        }
        b"LMOVE" if n == 5 && argv[1] == argv[2] => {
            let end = |w: &[u8]| match w.to_ascii_uppercase().as_slice() {
                b"LEFT" => Ok(End::Left),
                b"RIGHT" => Ok(End::Right),
                _ => Err(bad(name, "syntax error")),
            };
            one(Effect::List { key: key(), edit: ListEdit::Rotate { from: end(&argv[3])?, to: end(&argv[4])? } })
        }
        b"LSET" if n == 4 && tern_resp::parse_u64(&argv[2]).is_some() => {
            one(Effect::List { key: key(), edit: ListEdit::Set { index: uint(name, &argv[2])? as usize, elem: boxed(&argv[3]) } })
        }
        b"LINSERT" if n == 5 => {
            let after = match argv[2].to_ascii_uppercase().as_slice() {
                b"AFTER" => true,
                b"BEFORE" => false,
                _ => return Err(bad(name, "syntax error")),
            };
            one(Effect::List { key: key(), edit: ListEdit::Insert { after, pivot: boxed(&argv[3]), elem: boxed(&argv[4]) } })
        }
        b"LREM" if n == 4 => one(Effect::List { key: key(), edit: ListEdit::Rem { count: int(name, &argv[2])?, elem: boxed(&argv[3]) } }),
        // Tern's own form (`LTRIM k a -b`) counts from both ends.
        b"LTRIM" if n == 4 => {
            let (start, stop) = (int(name, &argv[2])?, int(name, &argv[3])?);
            let edit = match (usize::try_from(start), usize::try_from(-(stop.max(i64::MIN + 1)) - 1)) {
                (Ok(left), Ok(right)) if stop < 0 => ListEdit::Trim { left, right },
                _ => ListEdit::Keep { start, stop },
            };
            one(Effect::List { key: key(), edit })
        }
        b"SADD" | b"SREM" => {
            arity(n >= 3)?;
            let members = argv[2..].iter().map(|m| boxed(m)).collect();
            one(if c == b"SADD" { Effect::SAdd { key: key(), members } } else { Effect::SRem { key: key(), members } })
        }
        // ZADD with flags (NX, INCR, …) depends on what the set held.
        b"ZADD" if n >= 4 && n % 2 == 0 && tern_resp::string2d(&argv[2]).is_some() => {
            let mut pairs = Vec::with_capacity((n - 2) / 2);
            for p in argv[2..].chunks(2) {
                let s = tern_resp::string2d(&p[0]).filter(|s| !s.is_nan()).ok_or_else(|| bad(name, "value is not a valid float"))?;
                pairs.push((s, boxed(&p[1])));
            }
            one(Effect::ZAdd { key: key(), pairs })
        }
        b"ZREM" => {
            arity(n >= 3)?;
            one(Effect::ZRem { key: key(), members: argv[2..].iter().map(|m| boxed(m)).collect() })
        }
        b"FLUSHDB" => one(Effect::FlushDb),
        b"FLUSHALL" => Ok(Parsed::Records((0..dbs).map(|d| Record { db: d, seq: 0, effect: Effect::FlushDb }).collect())),
        b"SWAPDB" => {
            arity(n == 3)?;
            let (a, b) = (uint(name, &argv[1])?, uint(name, &argv[2])?);
            if a >= u64::from(dbs) || b >= u64::from(dbs) {
                return Err(bad(name, "DB index is out of range"));
            }
            Ok(Parsed::Records(vec![Record { db: a as u32, seq: 0, effect: Effect::SwapDb { other: b as u32 } }]))
        }
        _ => Ok(Parsed::Other(*db)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::HashLimits;
    use crate::list::ListLimits;
    use crate::set::{Set, SetLimits};
    use crate::zset::{ZSet, ZsetLimits};
    use crate::{EntryExt, Hash, Keyspace, List, StrRef, ValueRef};

    fn b(s: &str) -> Box<[u8]> {
        s.as_bytes().into()
    }

    /// A string written whole is encoded without its argument vectors;
    /// the bytes are those of its `to_argv` form.
    #[test]
    fn strings_encode_as_their_argv() {
        let values = [
            StrValue::Int(-42),
            StrValue::Emb(b("hello")),
            StrValue::Raw(b"raw\r\nbytes".to_vec()),
            StrValue::Shared(std::sync::Arc::new(vec![7u8; 300])),
        ];
        for v in values {
            for ttl in [Ttl::Keep, Ttl::At(None), Ttl::At(Some(1_900_000_000_123))] {
                let rec = Record { db: 3, seq: 1, effect: Effect::Put { key: b("k"), value: Value::Str(v.clone()), ttl } };
                let mut fast = Vec::new();
                encode(&mut fast, &rec, &mut Some(3));
                let mut slow = Vec::new();
                for argv in rec.effect.to_argv(rec.db) {
                    tern_resp::encode::request(&mut slow, argv.iter().map(Vec::as_slice));
                }
                assert_eq!(String::from_utf8_lossy(&fast), String::from_utf8_lossy(&slow));
            }
        }
    }

    /// Every effect form: encoded, read back by the reader and parsed, it
    /// gives the same records (SELECTs in between).
    #[test]
    fn every_form_parses_back() {
        let lim = HashLimits { max_entries: 128, max_value: 64 };
        let mut h = Hash::default();
        h.set(b"f", b"v", lim);
        h.set_field_expire(b"f", 90_000);
        let mut set = Set::new();
        set.add(b"m", SetLimits::default());
        let mut z = ZSet::new_for(1, 1, ZsetLimits::default());
        z.insert(b"m", 1.5, ZsetLimits::default());
        let list = List::from_items([&b"a"[..], b"b"], ListLimits::default());
        let effects = vec![
            Effect::Put { key: b("s"), value: Value::Str(StrValue::Int(-7)), ttl: Ttl::At(Some(1_700)) },
            Effect::Put { key: b("s"), value: Value::Str(StrValue::Emb(b("x y"))), ttl: Ttl::Keep },
            Effect::Put { key: b("m"), value: Value::Str(StrValue::Mc(McStr::new(b"d", 7, 99, 0))), ttl: Ttl::At(None) },
            Effect::Del { key: b("s") },
            Effect::Expire { key: b("s"), at: Some(5) },
            Effect::Expire { key: b("s"), at: None },
            Effect::HSet { key: b("h"), pairs: vec![(b("f"), b("v"))], keep_ttl: true },
            Effect::HSet { key: b("h"), pairs: vec![(b("f"), b("v"))], keep_ttl: false },
            Effect::HDel { key: b("h"), fields: vec![b("f")] },
            Effect::HExpire { key: b("h"), at: Some(9), fields: vec![b("f"), b("g")] },
            Effect::HExpire { key: b("h"), at: None, fields: vec![b("f")] },
            Effect::List { key: b("l"), edit: ListEdit::Push { end: End::Left, elems: vec![b("a"), b("b")] } },
            Effect::List { key: b("l"), edit: ListEdit::Pop { end: End::Right, count: 2 } },
            Effect::List { key: b("l"), edit: ListEdit::Rotate { from: End::Left, to: End::Right } },
            Effect::List { key: b("l"), edit: ListEdit::Set { index: 3, elem: b("x") } },
            Effect::List { key: b("l"), edit: ListEdit::Insert { after: true, pivot: b("p"), elem: b("x") } },
            Effect::List { key: b("l"), edit: ListEdit::Rem { count: -2, elem: b("x") } },
            Effect::List { key: b("l"), edit: ListEdit::Trim { left: 1, right: 2 } },
            Effect::SAdd { key: b("t"), members: vec![b("1"), b("x")] },
            Effect::SRem { key: b("t"), members: vec![b("x")] },
            Effect::ZAdd { key: b("z"), pairs: vec![(1.5, b("a")), (f64::INFINITY, b("b")), (-0.1, b("c"))] },
            Effect::ZRem { key: b("z"), members: vec![b("a")] },
            Effect::FlushDb,
            Effect::SwapDb { other: 0 },
        ];
        let mut out = Vec::new();
        let mut cur = None;
        let recs: Vec<Record> = effects.into_iter().enumerate().map(|(i, effect)| Record { db: (i % 3) as u32, seq: 0, effect }).collect();
        for r in &recs {
            encode(&mut out, r, &mut cur);
        }
        let mut reader = super::super::CommandReader::new(&out[..], 0);
        let mut db = Cursor::default();
        let mut back = Vec::new();
        while let Some(argv) = reader.next_command().unwrap() {
            match parse(&argv, &mut db, 16, 0).unwrap() {
                Parsed::Records(r) => back.extend(r),
                p => panic!("{p:?}"),
            }
        }
        assert_eq!(back, recs);
        // The forms of whole values (several commands each) replay too.
        let whole = [
            Effect::Put { key: b("h"), value: Value::Hash(h), ttl: Ttl::At(Some(60)) },
            Effect::Put { key: b("t"), value: Value::Set(set), ttl: Ttl::At(None) },
            Effect::Put { key: b("z"), value: Value::ZSet(z), ttl: Ttl::At(None) },
            Effect::Put { key: b("l"), value: Value::List(list.clone()), ttl: Ttl::At(None) },
            Effect::Put { key: b("k"), value: Value::List(list), ttl: Ttl::Keep },
        ];
        let ks = Keyspace::new(16, 4);
        for e in whole {
            for argv in e.to_argv(0) {
                let mut db = Cursor::default();
                let Parsed::Records(rs) = parse(&argv, &mut db, 16, 0).unwrap() else { panic!() };
                for r in rs {
                    r.apply(&ks, lim, ListLimits::default(), 0);
                }
            }
        }
        let get = |k: &[u8], f: &mut dyn FnMut(ValueRef<'_>, Option<u64>)| {
            let loc = ks.locate(0, k);
            let mut s = ks.lock(loc.gid);
            let e = s.get(k, loc.hash, 0).expect("key");
            f(e.value(), e.expire());
        };
        get(b"h", &mut |v, at| {
            let ValueRef::Hash(h) = v else { panic!() };
            assert_eq!(h.field_expire(b"f"), Some(90_000));
            assert_eq!(at, Some(60));
        });
        get(b"l", &mut |v, _| assert!(matches!(v, ValueRef::List(l) if l.len() == 2)));
        get(b"k", &mut |v, _| assert!(matches!(v, ValueRef::List(l) if l.iter().next().unwrap()[..] == b"a"[..])));
        get(b"z", &mut |v, _| assert!(matches!(v, ValueRef::ZSet(z) if z.len() == 1)));
        let _ = StrRef::Int(0);
    }

    #[test]
    fn redis_forms_and_others() {
        let argv = |s: &str| s.split(' ').map(|w| w.as_bytes().to_vec()).collect::<Vec<_>>();
        let mut db = Cursor::default();
        let p = |s: &str, db: &mut Cursor| parse(&argv(s), db, 16, 1_000);
        assert_eq!(p("select 3", &mut db), Ok(Parsed::Records(vec![])));
        assert_eq!(db.db, 3);
        let Parsed::Records(r) = p("set k v EX 2 NX", &mut db).unwrap() else { panic!() };
        assert_eq!(r[0].db, 3);
        assert!(matches!(r[0].effect, Effect::Put { ttl: Ttl::At(Some(3_000)), .. }));
        let Parsed::Records(r) = p("flushall", &mut db).unwrap() else { panic!() };
        assert_eq!(r.len(), 16);
        let Parsed::Records(r) = p("unlink a b", &mut db).unwrap() else { panic!() };
        assert_eq!(r.len(), 2);
        assert_eq!(p("incr k", &mut db), Ok(Parsed::Other(3)));
        let Parsed::Records(r) = p("ltrim k 0 99", &mut db).unwrap() else { panic!() };
        assert!(matches!(r[0].effect, Effect::List { edit: ListEdit::Keep { start: 0, stop: 99 }, .. }));
        assert_eq!(p("zadd k NX 1 a", &mut db), Ok(Parsed::Other(3)));
        // Stream commands (Effect::Stream's forms) go to the command table.
        for cmd in ["xadd k 1-1 f v", "xsetid k 5-0 ENTRIESADDED 3 MAXDELETEDID 0-0", "xgroup CREATE k g 0-0 ENTRIESREAD -1", "xclaim k g c 0 1-1 TIME 5 RETRYCOUNT 1 JUSTID FORCE"] {
            assert_eq!(p(cmd, &mut db), Ok(Parsed::Other(3)));
        }
        // A memcached item: its header, then the SET that stores it.
        let header = vec![b"PING".to_vec(), b"TERN.MC 7 99 2".to_vec()];
        assert_eq!(parse(&header, &mut db, 16, 0), Ok(Parsed::Records(vec![])));
        let Parsed::Records(r) = p("set m d PXAT 5", &mut db).unwrap() else { panic!() };
        let Effect::Put { value: Value::Str(StrValue::Mc(m)), ttl: Ttl::At(Some(5)), .. } = &r[0].effect else { panic!("{r:?}") };
        assert_eq!((m.data(), m.flags(), m.cas(), m.state()), (&b"d"[..], 7, 99, 2));
        // It holds for the next command only.
        assert!(matches!(&p("set m d", &mut db).unwrap(), Parsed::Records(r) if !matches!(r[0].effect, Effect::Put { value: Value::Str(StrValue::Mc(_)), .. })));
        assert_eq!(parse(&header, &mut db, 16, 0), Ok(Parsed::Records(vec![])));
        assert_eq!(p("incr m", &mut db), Ok(Parsed::Other(3)));
        assert!(matches!(&p("set m d", &mut db).unwrap(), Parsed::Records(r) if !matches!(r[0].effect, Effect::Put { value: Value::Str(StrValue::Mc(_)), .. })));
        assert_eq!(p("ping", &mut db), Ok(Parsed::Other(3)));
        assert_eq!(p("multi", &mut db), Ok(Parsed::Multi));
        assert!(p("select 16", &mut db).is_err());
        assert!(p("set k", &mut db).is_err());
        assert!(p("hset k f", &mut db).is_err());
        assert!(p("hpexpireat k 5 FIELDS 2 f", &mut db).is_err());
    }

    use proptest::prelude::*;

    fn word() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::sample::select(vec![
                "SET", "set", "TERN.MCSET", "DEL", "UNLINK", "PEXPIREAT", "EXPIREAT", "PERSIST", "HSET", "HMSET", "HSETEX",
                "HDEL", "HPEXPIREAT", "HPERSIST", "LPUSH", "RPUSH", "LPOP", "RPOP", "LMOVE", "LSET", "LINSERT", "LREM",
                "LTRIM", "SADD", "SREM", "ZADD", "ZREM", "FLUSHDB", "FLUSHALL", "SWAPDB", "SELECT", "KEEPTTL", "FIELDS",
                "PXAT", "EX", "NX", "LEFT", "RIGHT", "BEFORE", "AFTER", "k", "f", "0", "1", "2", "-1", "-3", "15", "16",
                "1.5", "inf", "-inf", "nan", "007", "99999999999999999999",
            ])
            .prop_map(|w| w.as_bytes().to_vec()),
            prop::collection::vec(any::<u8>(), 0..6),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, .. ProptestConfig::default() })]

        /// Whatever command the parser takes for records, those records
        /// written back as commands parse to the same records (the
        /// parser accepts nothing the writer cannot say), and replaying
        /// them never panics.
        #[test]
        fn what_parses_writes_back_the_same(first in word(), rest in prop::collection::vec(word(), 0..8)) {
            let mut argv = vec![first];
            argv.extend(rest);
            let mut db = Cursor::default();
            let Ok(Parsed::Records(recs)) = parse(&argv, &mut db, 16, 0) else { return Ok(()) };
            let mut out = Vec::new();
            let mut cur = None;
            for r in &recs {
                encode(&mut out, r, &mut cur);
            }
            let mut reader = super::super::CommandReader::new(&out[..], 0);
            let (mut db2, mut back) = (Cursor::default(), Vec::new());
            while let Some(a) = reader.next_command().unwrap() {
                match parse(&a, &mut db2, 16, 0) {
                    Ok(Parsed::Records(r)) => back.extend(r),
                    other => prop_assert!(false, "{:?} from {:?}", other, a),
                }
            }
            prop_assert_eq!(&back, &recs);
            let ks = Keyspace::new(16, 2);
            for r in recs {
                r.apply(&ks, HashLimits { max_entries: 4, max_value: 8 }, ListLimits::default(), 0);
            }
        }
    }
}
