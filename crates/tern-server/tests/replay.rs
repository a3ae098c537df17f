//! Effect records rebuild the keyspace: random mixes of every write
//! command (RESP strings, keys, lists and hashes with key and field TTLs, and the
//! memcached text and meta commands), with reads that expire lazily, the
//! clock moved ahead and active expiry cycles in between, run through the
//! in-process executor with a reader attached; replaying the records (read
//! back from the commands they are written as, as the AOF loader and a
//! replica read them) into an empty keyspace must give the same keys,
//! types, values, TTLs, field TTLs and memcached flags and CAS ids — entry
//! for entry, including those expired but not removed yet. Encodings are
//! not compared: a replay stores values as its commands store them (a
//! string as SET does, a hash rebuilt whole as HSET does), as Redis's own
//! reload does.

use std::collections::BTreeMap;

use proptest::prelude::*;
use tern_config::Config;
use tern_server::inproc::InProc;
use tern_store::{EntryExt, HashLimits, Keyspace, ListLimits, StrRef, ValueRef};

const KEYS: &[&str] = &["k0", "k1", "k2", "k3", "{k}4", "m5"];
const FIELDS: &[&str] = &["f0", "f1", "f2", "f3", "f4"];
/// Small hash limits, so that hashes change encoding along the way.
const HASH_ENTRIES: usize = 4;
const HASH_VALUE: usize = 16;
/// A small list node limit, so that lists change encoding along the way.
const LIST_FILL: i64 = 3;

#[derive(Clone, Debug)]
enum Op {
    Resp(Vec<String>),
    Mc(Vec<u8>),
    Advance(u64),
    Cycle,
}

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(KEYS).prop_map(str::to_string)
}

fn field() -> impl Strategy<Value = String> {
    prop::sample::select(FIELDS).prop_map(str::to_string)
}

/// Values: integers (int encoding), short and long text (embstr / raw,
/// listpack / hashtable), floats.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        (-50i64..50).prop_map(|n| n.to_string()),
        "[a-z]{1,8}",
        "[a-z]{20,60}",
        (0.0f64..10.0).prop_map(|f| format!("{f:.2}")),
    ]
}

/// A relative TTL in seconds or ms (small, so that they pass).
fn resp_ttl() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        (1u64..4).prop_map(|s| vec!["EX".into(), s.to_string()]),
        (1u64..3000).prop_map(|ms| vec!["PX".into(), ms.to_string()]),
        (0u64..4).prop_map(|s| vec!["EXAT".into(), format!("@s{s}")]),
        (0u64..3000).prop_map(|ms| vec!["PXAT".into(), format!("@ms{ms}")]),
    ]
}

fn cmd(parts: &[&str], rest: Vec<String>) -> Op {
    let mut v: Vec<String> = parts.iter().map(|s| s.to_string()).collect();
    v.extend(rest);
    Op::Resp(v)
}

fn strings() -> impl Strategy<Value = Op> {
    prop_oneof![
        (key(), value(), prop::option::of(resp_ttl()), prop::sample::select(vec!["", "NX", "XX", "GET", "KEEPTTL"]))
            .prop_map(|(k, v, ttl, opt)| {
                let mut rest = vec![k, v];
                let keepttl = opt == "KEEPTTL";
                if !opt.is_empty() {
                    rest.push(opt.into());
                }
                if !keepttl {
                    rest.extend(ttl.unwrap_or_default());
                }
                cmd(&["SET"], rest)
            }),
        (key(), value()).prop_map(|(k, v)| cmd(&["SETNX"], vec![k, v])),
        (key(), 1u64..4, value()).prop_map(|(k, s, v)| cmd(&["SETEX"], vec![k, s.to_string(), v])),
        (key(), 1u64..3000, value()).prop_map(|(k, s, v)| cmd(&["PSETEX"], vec![k, s.to_string(), v])),
        (key(), value()).prop_map(|(k, v)| cmd(&["GETSET"], vec![k, v])),
        key().prop_map(|k| cmd(&["GETDEL"], vec![k])),
        (key(), prop::option::of(prop_oneof![resp_ttl(), Just(vec!["PERSIST".to_string()])]))
            .prop_map(|(k, o)| cmd(&["GETEX"], [vec![k], o.unwrap_or_default()].concat())),
        prop::collection::vec((key(), value()), 1..4)
            .prop_map(|kv| cmd(&["MSET"], kv.into_iter().flat_map(|(k, v)| [k, v]).collect())),
        prop::collection::vec((key(), value()), 1..3)
            .prop_map(|kv| cmd(&["MSETNX"], kv.into_iter().flat_map(|(k, v)| [k, v]).collect())),
        (key(), value()).prop_map(|(k, v)| cmd(&["APPEND"], vec![k, v])),
        (key(), 0u64..30, value()).prop_map(|(k, o, v)| cmd(&["SETRANGE"], vec![k, o.to_string(), v])),
        key().prop_map(|k| cmd(&["INCR"], vec![k])),
        key().prop_map(|k| cmd(&["DECR"], vec![k])),
        (key(), -20i64..20).prop_map(|(k, n)| cmd(&["INCRBY"], vec![k, n.to_string()])),
        (key(), -20i64..20).prop_map(|(k, n)| cmd(&["DECRBY"], vec![k, n.to_string()])),
        (key(), -5.0f64..5.0).prop_map(|(k, f)| cmd(&["INCRBYFLOAT"], vec![k, format!("{f:.3}")])),
    ]
}

fn keys_cmds() -> impl Strategy<Value = Op> {
    let unit = prop::sample::select(vec!["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"]);
    let cond = prop::sample::select(vec!["", "NX", "XX", "GT", "LT"]);
    // Flushes are rare, or little state would build up between them.
    prop_oneof![
        8 => prop::collection::vec(key(), 1..3).prop_map(|ks| cmd(&["DEL"], ks)),
        8 => prop::collection::vec(key(), 1..3).prop_map(|ks| cmd(&["UNLINK"], ks)),
        8 => (key(), key()).prop_map(|(a, b)| cmd(&["RENAME"], vec![a, b])),
        8 => (key(), key()).prop_map(|(a, b)| cmd(&["RENAMENX"], vec![a, b])),
        8 => (key(), key(), any::<bool>(), any::<bool>()).prop_map(|(a, b, db, replace)| {
            let mut rest = vec![a, b];
            if db {
                rest.extend(["DB".into(), "1".into()]);
            }
            if replace {
                rest.push("REPLACE".into());
            }
            cmd(&["COPY"], rest)
        }),
        8 => (key(), 0u8..2).prop_map(|(k, db)| cmd(&["MOVE"], vec![k, db.to_string()])),
        8 => (key(), unit, 0u64..3000, cond).prop_map(|(k, u, t, c)| {
            let t = match u {
                "EXPIRE" => (t / 1000).to_string(),
                "PEXPIRE" => t.to_string(),
                "EXPIREAT" => format!("@s{}", t / 1000),
                _ => format!("@ms{t}"),
            };
            let mut rest = vec![k, t];
            if !c.is_empty() {
                rest.push(c.into());
            }
            cmd(&[u], rest)
        }),
        8 => key().prop_map(|k| cmd(&["PERSIST"], vec![k])),
        8 => Just(cmd(&["SWAPDB", "0", "1"], vec![])),
        8 => (0u8..2).prop_map(|db| cmd(&["SELECT"], vec![db.to_string()])),
        1 => Just(cmd(&["FLUSHDB"], vec![])),
        1 => Just(cmd(&["FLUSHALL"], vec![])),
    ]
}

fn fields_arg(fs: Vec<String>) -> Vec<String> {
    [vec!["FIELDS".to_string(), fs.len().to_string()], fs].concat()
}

fn hashes() -> impl Strategy<Value = Op> {
    let pairs = || prop::collection::vec((field(), value()), 1..4);
    let fields = || prop::collection::vec(field(), 1..3);
    let hunit = prop::sample::select(vec!["HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT"]);
    let cond = prop::sample::select(vec!["", "NX", "XX", "GT", "LT"]);
    prop_oneof![
        (key(), pairs()).prop_map(|(k, p)| cmd(&["HSET"], [vec![k], p.into_iter().flat_map(|(f, v)| [f, v]).collect()].concat())),
        (key(), pairs()).prop_map(|(k, p)| cmd(&["HMSET"], [vec![k], p.into_iter().flat_map(|(f, v)| [f, v]).collect()].concat())),
        (key(), field(), value()).prop_map(|(k, f, v)| cmd(&["HSETNX"], vec![k, f, v])),
        (key(), fields()).prop_map(|(k, fs)| cmd(&["HDEL"], [vec![k], fs].concat())),
        (key(), field(), -20i64..20).prop_map(|(k, f, n)| cmd(&["HINCRBY"], vec![k, f, n.to_string()])),
        (key(), field(), -5.0f64..5.0).prop_map(|(k, f, x)| cmd(&["HINCRBYFLOAT"], vec![k, f, format!("{x:.3}")])),
        (key(), hunit, 0u64..3000, cond, fields()).prop_map(|(k, u, t, c, fs)| {
            let t = match u {
                "HEXPIRE" => (t / 1000).to_string(),
                "HPEXPIRE" => t.to_string(),
                "HEXPIREAT" => format!("@s{}", t / 1000),
                _ => format!("@ms{t}"),
            };
            let mut rest = vec![k, t];
            if !c.is_empty() {
                rest.push(c.into());
            }
            cmd(&[u], [rest, fields_arg(fs)].concat())
        }),
        (key(), fields()).prop_map(|(k, fs)| cmd(&["HPERSIST"], [vec![k], fields_arg(fs)].concat())),
        (key(), fields()).prop_map(|(k, fs)| cmd(&["HGETDEL"], [vec![k], fields_arg(fs)].concat())),
        (key(), prop::option::of(prop_oneof![resp_ttl(), Just(vec!["PERSIST".to_string()])]), fields())
            .prop_map(|(k, o, fs)| cmd(&["HGETEX"], [vec![k], o.unwrap_or_default(), fields_arg(fs)].concat())),
        (key(), prop::sample::select(vec!["", "FNX", "FXX"]), prop::option::of(prop_oneof![resp_ttl(), Just(vec!["KEEPTTL".to_string()])]), pairs())
            .prop_map(|(k, c, o, p)| {
                let mut rest = vec![k];
                if !c.is_empty() {
                    rest.push(c.into());
                }
                rest.extend(o.unwrap_or_default());
                rest.push("FIELDS".into());
                rest.push(p.len().to_string());
                rest.extend(p.into_iter().flat_map(|(f, v)| [f, v]));
                cmd(&["HSETEX"], rest)
            }),
    ]
}

/// List writes, in place and whole (a small node limit, so that lists
/// change encoding along the way).
fn lists() -> impl Strategy<Value = Op> {
    let elems = prop::collection::vec("[a-c]{1,3}", 1..5);
    prop_oneof![
        (key(), any::<bool>(), elems).prop_map(|(k, l, e)| cmd(&[if l { "LPUSH" } else { "RPUSH" }], [vec![k], e].concat())),
        (key(), any::<bool>(), 1u8..4).prop_map(|(k, l, n)| cmd(&[if l { "LPOP" } else { "RPOP" }], vec![k, n.to_string()])),
        (key(), -3i8..3, "[a-c]{1,3}").prop_map(|(k, i, v)| cmd(&["LSET"], vec![k, i.to_string(), v])),
        (key(), "[a-c]{1,3}", "[a-c]{1,3}").prop_map(|(k, p, v)| cmd(&["LINSERT"], vec![k, "BEFORE".into(), p, v])),
        (key(), -2i8..3, "[a-c]{1,3}").prop_map(|(k, n, v)| cmd(&["LREM"], vec![k, n.to_string(), v])),
        (key(), -3i8..3, -3i8..3).prop_map(|(k, a, b)| cmd(&["LTRIM"], vec![k, a.to_string(), b.to_string()])),
        (key(), key()).prop_map(|(a, b)| cmd(&["LMOVE", ], vec![a, b, "LEFT".into(), "RIGHT".into()])),
        (key(), key()).prop_map(|(a, b)| cmd(&["LMPOP", "2"], vec![a, b, "RIGHT".into(), "COUNT".into(), "2".into()])),
    ]
}

fn sets() -> impl Strategy<Value = Op> {
    let member = || prop::sample::select(vec!["1", "2", "-3", "40", "a", "b", "cc"]).prop_map(String::from);
    let members = move || prop::collection::vec(member(), 1..4);
    let store = prop::sample::select(vec!["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"]);
    prop_oneof![
        3 => (key(), members()).prop_map(|(k, m)| cmd(&["SADD"], [vec![k], m].concat())),
        2 => (key(), members()).prop_map(|(k, m)| cmd(&["SREM"], [vec![k], m].concat())),
        1 => (key(), prop::option::of(0u8..4)).prop_map(|(k, n)| cmd(&["SPOP"], [vec![k], n.map(|n| n.to_string()).into_iter().collect()].concat())),
        1 => (key(), key(), member()).prop_map(|(a, b, m)| cmd(&["SMOVE"], vec![a, b, m])),
        1 => (store, key(), prop::collection::vec(key(), 1..3)).prop_map(|(c, d, ks)| cmd(&[c], [vec![d], ks].concat())),
    ]
}

fn zsets() -> impl Strategy<Value = Op> {
    let member = || prop::sample::select(vec!["a", "b", "cc", "1"]).prop_map(String::from);
    let score = || {
        prop::sample::select(vec!["1", "-2", "0.5", "inf", "-0", "3e5", "1.5e-7"])
            .prop_map(String::from)
    };
    let pairs = move || {
        prop::collection::vec((score(), member()), 1..4)
            .prop_map(|v| v.into_iter().flat_map(|(s, m)| [s, m]).collect::<Vec<_>>())
    };
    prop_oneof![
        3 => (key(), pairs()).prop_map(|(k, p)| cmd(&["ZADD"], [vec![k], p].concat())),
        1 => (key(), pairs()).prop_map(|(k, p)| cmd(&["ZADD"], [vec![k, "GT".into(), "CH".into()], p].concat())),
        1 => (key(), score(), member()).prop_map(|(k, s, m)| cmd(&["ZINCRBY"], vec![k, s, m])),
        2 => (key(), prop::collection::vec(member(), 1..3)).prop_map(|(k, m)| cmd(&["ZREM"], [vec![k], m].concat())),
        1 => (key(), prop::option::of(0u8..3)).prop_map(|(k, n)| cmd(&["ZPOPMIN"], [vec![k], n.map(|n| n.to_string()).into_iter().collect()].concat())),
        1 => (key(), key()).prop_map(|(a, b)| cmd(&["ZMPOP", "2"], vec![a, b, "MAX".into(), "COUNT".into(), "2".into()])),
        1 => key().prop_map(|k| cmd(&["ZREMRANGEBYSCORE"], vec![k, "(0".into(), "2".into()])),
        1 => key().prop_map(|k| cmd(&["ZREMRANGEBYRANK"], vec![k, "0".into(), "0".into()])),
        1 => (key(), key()).prop_map(|(d, s)| cmd(&["ZRANGESTORE"], vec![d, s, "0".into(), "-1".into()])),
    ]
}

/// Reads, which expire what they meet.
fn reads() -> impl Strategy<Value = Op> {
    prop_oneof![
        key().prop_map(|k| cmd(&["GET"], vec![k])),
        key().prop_map(|k| cmd(&["HGETALL"], vec![k])),
        key().prop_map(|k| cmd(&["TTL"], vec![k])),
        prop::collection::vec(key(), 1..4).prop_map(|ks| cmd(&["EXISTS"], ks)),
        Just(cmd(&["SCAN", "0", "COUNT", "100"], vec![])),
        Just(cmd(&["RANDOMKEY"], vec![])),
    ]
}

fn mc_exptime() -> impl Strategy<Value = i64> {
    prop_oneof![Just(0i64), 1i64..4, Just(-1)]
}

fn memcached() -> impl Strategy<Value = Op> {
    let data = "[a-z0-9]{0,12}";
    let store = prop::sample::select(vec!["set", "add", "replace", "append", "prepend"]);
    prop_oneof![
        8 => (store, key(), any::<u16>(), mc_exptime(), data).prop_map(|(c, k, f, e, d)| {
            Op::Mc(format!("{c} {k} {f} {e} {}\r\n{d}\r\n", d.len()).into_bytes())
        }),
        8 => (key(), any::<u16>(), mc_exptime(), 1u64..30, data).prop_map(|(k, f, e, cas, d)| {
            Op::Mc(format!("cas {k} {f} {e} {} {cas}\r\n{d}\r\n", d.len()).into_bytes())
        }),
        8 => (key(), any::<bool>(), 0u64..20).prop_map(|(k, up, n)| {
            Op::Mc(format!("{} {k} {n}\r\n", if up { "incr" } else { "decr" }).into_bytes())
        }),
        8 => (key(), mc_exptime()).prop_map(|(k, e)| Op::Mc(format!("touch {k} {e}\r\n").into_bytes())),
        8 => (key(), mc_exptime()).prop_map(|(k, e)| Op::Mc(format!("gat {e} {k}\r\n").into_bytes())),
        8 => key().prop_map(|k| Op::Mc(format!("delete {k}\r\n").into_bytes())),
        8 => prop::collection::vec(key(), 1..4).prop_map(|ks| Op::Mc(format!("gets {}\r\n", ks.join(" ")).into_bytes())),
        8 => (key(), data, prop::sample::select(vec!["", " MS", " ME", " MA", " MP", " MR", " I C5"]), any::<u16>(), mc_exptime())
            .prop_map(|(k, d, mode, f, e)| Op::Mc(format!("ms {k} {} F{f} T{e}{mode}\r\n{d}\r\n", d.len()).into_bytes())),
        8 => (key(), prop::sample::select(vec!["v", "v t f c", "T2", "N2 v", "h", "s k"]))
            .prop_map(|(k, fl)| Op::Mc(format!("mg {k} {fl}\r\n").into_bytes())),
        8 => (key(), prop::sample::select(vec!["", "I", "I T2", "x", "q"]))
            .prop_map(|(k, fl)| Op::Mc(format!("md {k} {fl}\r\n").into_bytes())),
        8 => (key(), prop::sample::select(vec!["", "N2 J7", "MD D3", "T3", "N0 v"]))
            .prop_map(|(k, fl)| Op::Mc(format!("ma {k} {fl}\r\n").into_bytes())),
        1 => Just(Op::Mc(b"flush_all\r\n".to_vec())),
    ]
}

/// Bitmaps, HyperLogLogs and Redis 8's conditional string writes: strings
/// changed in place (or unshared without a change), whole HLLs rewritten,
/// PFCOUNT's cache written back.
fn bits_and_hlls() -> impl Strategy<Value = Op> {
    let field = || prop::sample::select(vec!["u8", "i5", "u1", "i16"]);
    prop_oneof![
        (key(), 0u64..200, 0u8..2).prop_map(|(k, o, b)| cmd(&["SETBIT"], vec![k, o.to_string(), b.to_string()])),
        (key(), field(), 0u64..100, -300i64..300, prop::sample::select(vec!["WRAP", "SAT", "FAIL"])).prop_map(|(k, t, o, v, ow)| {
            let (t, o, v) = (t.to_string(), o.to_string(), v.to_string());
            cmd(&["BITFIELD"], vec![k, "OVERFLOW".into(), ow.into(), "INCRBY".into(), t.clone(), o.clone(), v.clone(), "SET".into(), t, format!("#{o}"), v])
        }),
        (prop::sample::select(vec!["AND", "OR", "XOR", "DIFF", "ONE"]), key(), key(), key())
            .prop_map(|(op, d, a, b)| cmd(&["BITOP"], vec![op.into(), d, a, b])),
        (key(), prop::collection::vec(value(), 0..4)).prop_map(|(k, els)| cmd(&["PFADD"], [vec![k], els].concat())),
        key().prop_map(|k| cmd(&["PFCOUNT"], vec![k])),
        (key(), key(), key()).prop_map(|(d, a, b)| cmd(&["PFMERGE"], vec![d, a, b])),
        (key(), value(), prop::sample::select(vec!["IFEQ", "IFNE"]), value()).prop_map(|(k, v, c, x)| cmd(&["SET"], vec![k, v, c.into(), x])),
        (key(), prop::sample::select(vec!["IFEQ", "IFNE"]), value()).prop_map(|(k, c, x)| cmd(&["DELEX"], vec![k, c.into(), x])),
        key().prop_map(|k| cmd(&["DELEX"], vec![k])),
        (prop::collection::vec((key(), value()), 1..3), prop::sample::select(vec!["", "NX", "XX", "KEEPTTL"]), prop::option::of(resp_ttl())).prop_map(
            |(kv, c, ttl)| {
                let mut rest = vec![kv.len().to_string()];
                rest.extend(kv.into_iter().flat_map(|(k, v)| [k, v]));
                if !c.is_empty() {
                    rest.push(c.into());
                }
                if c != "KEEPTTL" {
                    rest.extend(ttl.unwrap_or_default());
                }
                cmd(&["MSETEX"], rest)
            }
        ),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => strings(),
        3 => bits_and_hlls(),
        3 => keys_cmds(),
        4 => hashes(),
        3 => lists(),
        3 => sets(),
        3 => zsets(),
        2 => reads(),
        3 => memcached(),
        2 => (1u64..1500).prop_map(Op::Advance),
        1 => Just(Op::Cycle),
    ]
}

fn resp(args: &[String]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    out
}

/// `@s<n>` / `@ms<n>`: an absolute time `n` s or ms after `now`.
fn absolute(args: &[String], now: u64) -> Vec<String> {
    args.iter()
        .map(|a| {
            if let Some(n) = a.strip_prefix("@ms") {
                (now + n.parse::<u64>().unwrap_or(0)).to_string()
            } else if let Some(n) = a.strip_prefix("@s") {
                (now / 1000 + n.parse::<u64>().unwrap_or(0)).to_string()
            } else {
                a.clone()
            }
        })
        .collect()
}

/// What a key holds, as the comparison sees it.
#[derive(Debug, PartialEq)]
struct Snap {
    kind: &'static str,
    expire: Option<u64>,
    value: Vec<u8>,
    mc: Option<(u32, u64)>,
    fields: Vec<(Vec<u8>, Vec<u8>, Option<u64>)>,
}

/// Every entry as stored, expired or not: a key or field whose deadline
/// passed is still there until an expiry removes it, and that removal is
/// a record like any other, so the replay must hold exactly the same.
fn snapshot(ks: &Keyspace) -> BTreeMap<(usize, Vec<u8>), Snap> {
    let mut out = BTreeMap::new();
    for db in 0..ks.db_count() {
        for gid in ks.db_gids(db) {
            let sh = ks.lock(gid);
            // No deadline is at or before 0: every entry.
            for e in sh.iter(0) {
                let v = e.value();
                let mut snap = Snap { kind: v.type_name(), expire: e.expire(), value: Vec::new(), mc: None, fields: Vec::new() };
                match v {
                    ValueRef::Str(s) => {
                        snap.value = s.to_vec();
                        if let StrRef::Mc(m) = s {
                            snap.mc = Some((m.flags(), m.cas()));
                        }
                    }
                    ValueRef::Hash(h) => {
                        snap.fields = h.iter().map(|(f, v)| (f.to_vec(), v.to_vec(), h.field_expire(f))).collect();
                        snap.fields.sort();
                    }
                    // Elements in order, as the fields' first column.
                    ValueRef::List(l) => snap.fields = l.iter().map(|e| (e.to_vec(), Vec::new(), None)).collect(),
                    ValueRef::Set(set) => {
                        snap.fields = set.iter().map(|m| (m.to_vec(), Vec::new(), None)).collect();
                        snap.fields.sort();
                    }
                    // Members in order, with their scores' exact bits.
                    ValueRef::ZSet(z) => {
                        snap.fields = z
                            .iter()
                            .map(|(m, s)| (m.to_vec(), s.to_bits().to_le_bytes().to_vec(), None))
                            .collect()
                    }
                    // All of it (nodes, counters, groups): its DUMP.
                    ValueRef::Stream(_) => snap.value = tern_store::rdb::dump(v, false),
                }
                out.insert((db, e.key().to_vec()), snap);
            }
        }
    }
    out
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut srv = InProc::new(Config::default());
    srv.server().ks.attach_effects(true);
    let mut s = srv.connect();
    let mut mc = srv.connect_mc();
    let setup = [
        vec!["CONFIG".to_string(), "SET".into(), "hash-max-listpack-entries".into(), HASH_ENTRIES.to_string()],
        vec!["CONFIG".to_string(), "SET".into(), "hash-max-listpack-value".into(), HASH_VALUE.to_string()],
        vec!["CONFIG".to_string(), "SET".into(), "list-max-listpack-size".into(), LIST_FILL.to_string()],
    ];
    for c in &setup {
        srv.feed(&mut s, &resp(c));
    }
    // The replies are not what is tested here.
    s.take_replies();
    for op in ops {
        match op {
            Op::Resp(args) => {
                let args = absolute(args, srv.now_ms());
                srv.feed(&mut s, &resp(&args));
                s.take_replies();
            }
            Op::Mc(bytes) => {
                srv.feed_mc(&mut mc, bytes);
                mc.take_replies();
                prop_assert!(!mc.is_closed(), "memcached closed on {:?}", String::from_utf8_lossy(bytes));
            }
            Op::Advance(ms) => srv.advance(*ms),
            Op::Cycle => {
                srv.expire_cycle();
            }
        }
    }
    let ks = &srv.server().ks;
    let replayed = Keyspace::new(ks.db_count(), ks.shards_per_db());
    let lim = HashLimits { max_entries: HASH_ENTRIES, max_value: HASH_VALUE };
    let log = srv.effects().take();
    // One writer: its records are numbered in the order it made them.
    prop_assert!(log.recs().windows(2).all(|w| w[0].seq < w[1].seq));
    for rec in tern_store::aof::records(&log) {
        rec.apply(&replayed, lim, ListLimits { fill: LIST_FILL, depth: 0 }, 0);
    }
    // The write path counted every change's memory and TTL, on both sides.
    for k in [ks, &replayed] {
        for gid in 0..k.total_shards() as u32 {
            prop_assert!(k.lock(gid).counts_hold(), "shard {} miscounted", gid);
        }
    }
    let (a, b) = (snapshot(ks), snapshot(&replayed));
    prop_assert_eq!(a, b);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn replaying_effects_rebuilds_the_keyspace(ops in prop::collection::vec(op(), 1..100)) {
        run(&ops)?;
    }
}

#[test]
fn effects_are_not_built_without_a_reader() {
    let mut srv = InProc::new(Config::default());
    let mut s = srv.connect();
    srv.feed(&mut s, &resp(&["SET".into(), "k".into(), "v".into(), "PX".into(), "1".into()]));
    let mut mc = srv.connect_mc();
    srv.feed_mc(&mut mc, b"set m 1 0 1\r\nx\r\n");
    srv.advance(10);
    srv.expire_cycle();
    assert!(srv.effects().is_empty());
}

#[test]
fn redis_forms_of_what_ran() {
    let mut srv = InProc::new(Config::default());
    srv.server().ks.attach_effects(true);
    let mut s = srv.connect();
    let now = srv.now_ms();
    for c in [
        vec!["SET", "k", "v", "EX", "100"],
        vec!["EXPIRE", "k", "200"],
        vec!["SET", "f", "1.5"],
        vec!["INCRBYFLOAT", "f", "1"],
        vec!["HSET", "h", "a", "1"],
        vec!["HINCRBYFLOAT", "h", "a", "0.5"],
        vec!["HPEXPIRE", "h", "5000", "FIELDS", "1", "a"],
        vec!["HINCRBY", "h", "b", "2"],
        vec!["HINCRBYFLOAT", "h", "a", "1"],
    ] {
        let c: Vec<String> = c.into_iter().map(String::from).collect();
        srv.feed(&mut s, &resp(&c));
    }
    let mut mc = srv.connect_mc();
    srv.feed_mc(&mut mc, b"set m 7 100 1\r\nx\r\n");
    let argv: Vec<Vec<String>> = tern_store::aof::commands(&srv.effects().take())
        .into_iter()
        .map(|c| c.into_iter().map(|a| String::from_utf8_lossy(&a).into_owned()).collect())
        .collect();
    let t = |v: &str| v.parse::<u64>().unwrap();
    assert_eq!(argv[0][..4], ["SET", "k", "v", "PXAT"]);
    assert!((now + 100_000..now + 101_000).contains(&t(&argv[0][4])));
    assert_eq!(argv[1][..2], ["PEXPIREAT", "k"]);
    assert!((now + 200_000..now + 201_000).contains(&t(&argv[1][2])));
    assert_eq!(argv[3], ["SET", "f", "2.5", "KEEPTTL"]);
    assert_eq!(argv[4], ["HSET", "h", "a", "1"]);
    // An increment of a field without a TTL is the HSET every Redis and
    // Valkey knows; one with a TTL keeps it.
    assert_eq!(argv[5], ["HSET", "h", "a", "1.5"]);
    assert_eq!(argv[6][..2], ["HPEXPIREAT", "h"]);
    assert_eq!(argv[6][3..], ["FIELDS", "1", "a"]);
    assert_eq!(argv[7], ["HSET", "h", "b", "2"]);
    assert_eq!(argv[8], ["HSETEX", "h", "KEEPTTL", "FIELDS", "1", "a", "2.5"]);
    // A memcached item: its header on a PING Redis ignores, then its SET.
    assert_eq!(argv[9][0], "PING");
    assert!(argv[9][1].starts_with("TERN.MC 7 "), "{:?}", argv[9]);
    assert_eq!(argv[10][..4], ["SET", "m", "x", "PXAT"]);
    // An expiry is a deletion.
    srv.advance(300_000);
    srv.feed(&mut s, &resp(&["GET".into(), "k".into()]));
    srv.expire_cycle();
    let dels: Vec<_> = tern_store::aof::commands(&srv.effects().take());
    assert!(dels.iter().any(|c| *c == [b"DEL".to_vec(), b"k".to_vec()]));
    assert!(dels.iter().any(|c| *c == [b"DEL".to_vec(), b"m".to_vec()]));
    assert!(dels.iter().any(|c| c[0] == b"HDEL"));
}


/// Field expiry, lazy and active, is replayed as the removal of the fields.
#[test]
fn field_expiry_replays_as_hdel() {
    let r = |v: &[&str]| Op::Resp(v.iter().map(|s| s.to_string()).collect());
    run(&[
        r(&["HSET", "h", "f", "1", "g", "2"]),
        r(&["HSET", "i", "f", "1", "g", "2"]),
        r(&["HPEXPIRE", "h", "100", "FIELDS", "1", "f"]),
        r(&["HPEXPIRE", "i", "100", "FIELDS", "2", "f", "g"]),
        Op::Advance(200),
        r(&["HGETALL", "h"]),
        Op::Cycle,
    ])
    .unwrap();
}

/// Sorted sets are recorded as the scores they end with and the members
/// they lose, whatever command did it.
#[test]
fn zset_forms_are_resulting_scores_and_removed_members() {
    let mut srv = InProc::new(Config::default());
    srv.server().ks.attach_effects(true);
    let mut s = srv.connect();
    for c in [
        vec!["ZADD", "z", "1", "a", "2", "b", "3", "c"],
        vec!["ZINCRBY", "z", "0.5", "a"],
        vec!["ZADD", "z", "NX", "9", "a", "1e-7", "d"],
        vec!["ZADD", "z", "XX", "5", "zz"],
        vec!["ZPOPMAX", "z"],
        vec!["ZREMRANGEBYSCORE", "z", "-inf", "(1.5"],
        vec!["ZRANGESTORE", "w", "z", "0", "-1"],
    ] {
        let c: Vec<String> = c.into_iter().map(String::from).collect();
        srv.feed(&mut s, &resp(&c));
    }
    let argv: Vec<Vec<String>> = tern_store::aof::commands(&srv.effects().take())
        .into_iter()
        .map(|c| {
            c.into_iter()
                .map(|a| String::from_utf8_lossy(&a).into_owned())
                .collect()
        })
        .collect();
    let want: Vec<Vec<&str>> = vec![
        vec!["ZADD", "z", "1", "a", "2", "b", "3", "c"],
        vec!["ZADD", "z", "1.5", "a"],
        vec!["ZADD", "z", "1e-7", "d"],
        vec!["ZREM", "z", "c"],
        vec!["ZREM", "z", "d"],
        vec!["DEL", "w"],
        vec!["ZADD", "w", "1.5", "a", "2", "b"],
    ];
    assert_eq!(argv, want);
}
