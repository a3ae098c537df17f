//! Effect records: the deterministic form of every change to the keyspace.
//!
//! Every write goes through one API on [`crate::Shard`] (see its module
//! docs), and that API describes what it did as an [`Effect`]: not the
//! command that asked for it but its outcome, in the form Redis propagates
//! to its AOF and replicas, so that a replay does not depend on the clock,
//! on randomness or on what the key held:
//!
//! | change | effect | [`Effect::to_argv`] |
//! |---|---|---|
//! | a whole value written (a list: `DEL` + `RPUSH`; SET, SETEX, MSET, GETSET, INCRBYFLOAT, COPY, RENAME's destination, a memcached store, any in-place edit of a string) | [`Effect::Put`] | `SET k v [PXAT ms \| KEEPTTL]`; a memcached item `PING "TERN.MC …"` + `SET` (below); a hash `DEL` + `HSET` + `HPEXPIREAT` per field deadline + `PEXPIREAT` |
//! | a key removed (DEL, RENAME's source, GETDEL, an expiry, lazy or active) | [`Effect::Del`] | `DEL k` |
//! | a key's deadline set or cleared (EXPIRE and friends, GETEX) | [`Effect::Expire`] | `PEXPIREAT k ms` / `PERSIST k` |
//! | hash fields written (HSET, HINCRBY, HINCRBYFLOAT, HSETEX…) | [`Effect::HSet`] | `HSET k f v…`, or `HSETEX k KEEPTTL FIELDS n f v…` when field TTLs stay |
//! | hash fields removed (HDEL, HGETDEL, a field expiry) | [`Effect::HDel`] | `HDEL k f…` |
//! | a list edited in place (LPUSH, LPOP, LSET, LINSERT, LREM, LTRIM, LMOVE's two sides…) | [`Effect::List`] | the list command that does the same: `RPUSH k e…`, `LPOP k n`, `LMOVE k k LEFT RIGHT`, `LSET k i e`, `LINSERT k BEFORE p e`, `LREM k n e`, `LTRIM k a -b` |
//! | sorted-set members scored (ZADD, ZINCRBY) | [`Effect::ZAdd`] | `ZADD k score m…` with the scores they ended with |
//! | sorted-set members removed (ZREM, the pops, ZREMRANGEBY*) | [`Effect::ZRem`] | `ZREM k m…` |
//! | field deadlines set or cleared (HEXPIRE and friends) | [`Effect::HExpire`] | `HPEXPIREAT k ms FIELDS n f…` / `HPERSIST k FIELDS n f…` |
//! | FLUSHDB, FLUSHALL (one per database) | [`Effect::FlushDb`] | `FLUSHDB` |
//! | SWAPDB | [`Effect::SwapDb`] | `SWAPDB a b` |
//! | a stream changed in place (XADD, XTRIM, XDEL, XSETID, XGROUP, XREADGROUP, XCLAIM, XAUTOCLAIM, XACK, XDELEX, XACKDEL) | [`Effect::Stream`] | the command Redis propagates for it: `XADD k <id it took> …`, `XTRIM k MAXLEN = n`, `XCLAIM k g c 0 id TIME … FORCE JUSTID LASTID …`, `XGROUP SETID k g id ENTRIESREAD n`… |
//! | a whole stream written (RESTORE, COPY, RENAME's destination; an AOF rewrite) | [`Effect::Put`] | `DEL k`, an `XADD` per entry (an empty stream: `XADD k MAXLEN 0 0-1 x y`), `XSETID k last ENTRIESADDED n MAXDELETEDID id`, per group `XGROUP CREATE k g id ENTRIESREAD n`, per pending entry `XCLAIM k g c 0 id TIME ms RETRYCOUNT n JUSTID FORCE`, per consumer with none `XGROUP CREATECONSUMER k g c`; `PEXPIREAT` |
//! | FUNCTION LOAD, DELETE, FLUSH, RESTORE (libraries live beside the keyspace) | [`Effect::Command`] | the command as it was run |
//!
//! A record names its database ([`Record::db`]); a log reader emits
//! `SELECT` when it changes.
//!
//! A memcached item is the one value Redis has no command for: it is
//! written as `PING "TERN.MC <flags> <cas> <state>"` followed by
//! `SET key value [PXAT ms | KEEPTTL]`. Redis (a replica, or its AOF
//! loader) runs the PING as the no-op it is and stores the value as a
//! string, losing the 32-bit client flags, the CAS id and the state bits;
//! Tern's AOF loader and replica read the PING as the header of the item
//! that the SET right after it stores, whole. (Files of older versions
//! carry `TERN.MCSET key value flags cas state …`, still read.)
//!
//! Records are built only while a reader is attached
//! ([`crate::Keyspace::attach_effects`]): with none, a write pays one
//! relaxed load of a flag that never changes and nothing is built or
//! copied. Each shard stages the records of the writes done under its
//! lock, in order, numbered from one sequence per keyspace; the holder of
//! the lock moves them to its own [`Effects`] before releasing it (a
//! worker after each command, the expiry cycle after each shard). One
//! buffer holds its writer's records in order; across buffers, the
//! numbers order the records of any one key (and of FLUSHDB and SWAPDB,
//! which hold all their shards) as they happened.
//!
//! A record travels encoded: the shard writes its commands
//! ([`Effect::encode`]; a string's `SET` straight from the item, without
//! building the [`Effect`]) into a [`Log`], bytes plus a small index entry
//! per record, and every buffer on the way (the shard's, a lock set's,
//! the writer's, the feed's) keeps its capacity, so recording allocates
//! nothing per write. [`crate::aof::records`] reads a log back as records.

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::entry::ListMut;
use crate::list::{End, ListLimits};
use crate::padded::Padded;
use crate::stream::{Stream, StreamId};
use crate::value::{StrValue, Value};

/// What happens to a key's deadline when [`Effect::Put`] writes its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ttl {
    /// The deadline the key had stays (an in-place edit, INCRBYFLOAT).
    Keep,
    /// The key gets this deadline (None: none).
    At(Option<u64>),
}

/// A hash field and its value, owned by a record.
pub type FieldValue = (Box<[u8]>, Box<[u8]>);

/// One change to one database, as it can be replayed.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// `key` now holds `value` (whatever it held before is gone).
    Put { key: Box<[u8]>, value: Value, ttl: Ttl },
    /// `key` is gone.
    Del { key: Box<[u8]> },
    /// `key`'s deadline is now `at` (None: persistent).
    Expire { key: Box<[u8]>, at: Option<u64> },
    /// Hash fields written; `keep_ttl` keeps the deadlines fields had.
    /// The hash is created if absent.
    HSet { key: Box<[u8]>, pairs: Vec<FieldValue>, keep_ttl: bool },
    /// Hash fields removed; a hash left empty is removed.
    HDel { key: Box<[u8]>, fields: Vec<Box<[u8]>> },
    /// The fields' deadline is now `at` (None: persistent).
    HExpire { key: Box<[u8]>, at: Option<u64>, fields: Vec<Box<[u8]>> },
    /// A list changed in place as `edit` says; a list left empty is
    /// removed.
    List { key: Box<[u8]>, edit: ListEdit },
    /// Set members added (SADD, SMOVE's destination); the set is created
    /// if absent.
    SAdd { key: Box<[u8]>, members: Vec<Box<[u8]>> },
    /// Set members removed (SREM, SPOP, SMOVE's source); a set left
    /// empty is removed.
    SRem { key: Box<[u8]>, members: Vec<Box<[u8]>> },
    /// Sorted-set members given these scores, added if absent (ZADD,
    /// ZINCRBY: the resulting scores); the sorted set is created if absent.
    ZAdd { key: Box<[u8]>, pairs: Vec<(f64, Box<[u8]>)> },
    /// Sorted-set members removed (ZREM, the pops, ZREMRANGEBY*); a sorted
    /// set left empty is removed.
    ZRem { key: Box<[u8]>, members: Vec<Box<[u8]>> },
    /// Every key of the database is gone.
    FlushDb,
    /// The database exchanged its data with database `other`.
    SwapDb { other: u32 },
    /// A stream changed as `argv` (the whole command, name first) says:
    /// the command Redis propagates for the change, deterministic given
    /// the stream it applies to (XADD with the ID it took, a trim with the
    /// count it reached, XCLAIM for a delivery…). The keyspace's own
    /// replay ([`Record::apply`]) passes it by; the server's AOF loader
    /// runs it through the command table.
    Stream { key: Box<[u8]>, argv: Vec<Box<[u8]>> },
    /// A change outside the keyspace that persists with it (FUNCTION
    /// LOAD, DELETE, FLUSH, RESTORE): the command that redoes it. The
    /// keyspace's own replay ([`Record::apply`]) passes it by; the server's
    /// AOF loader runs it.
    Command { argv: Vec<Box<[u8]>> },
}

/// An in-place change of a list, deterministic given the list it applies
/// to (so that a push to a long list records the elements pushed, not
/// the list).
#[derive(Clone, Debug, PartialEq)]
pub enum ListEdit {
    /// Elements pushed at `end`, one by one, in this order.
    Push { end: End, elems: Vec<Box<[u8]>> },
    /// `count` elements popped from `end`.
    Pop { end: End, count: usize },
    /// One element moved from one end to the other of the same list.
    Rotate { from: End, to: End },
    /// Element `index` replaced.
    Set { index: usize, elem: Box<[u8]> },
    /// `elem` inserted before (or `after`) the first element equal to `pivot`.
    Insert { after: bool, pivot: Box<[u8]>, elem: Box<[u8]> },
    /// Up to |count| (0: every) elements equal to `elem` removed, from the
    /// tail when `count` is negative.
    Rem { count: i64, elem: Box<[u8]> },
    /// `left` elements removed from the head and `right` from the tail.
    Trim { left: usize, right: usize },
    /// Only the elements `start..=stop` kept, indices as LTRIM reads them
    /// (negative: from the tail); what an AOF's `LTRIM` counted from the
    /// head says.
    Keep { start: i64, stop: i64 },
}

fn end_name(e: End) -> &'static [u8] {
    match e {
        End::Left => b"LEFT",
        End::Right => b"RIGHT",
    }
}

impl ListEdit {
    /// Does the edit to `l`.
    pub fn apply_to(&self, l: &mut ListMut<'_>, lim: ListLimits) {
        match self {
            ListEdit::Push { end, elems } => l.push_many(*end, elems.iter().map(|e| &e[..]), lim),
            ListEdit::Pop { end, count } => {
                l.pop_with(*end, *count, lim, |_| {});
            }
            ListEdit::Rotate { from, to } => {
                if let Some(v) = l.pop(*from, lim) {
                    l.push(*to, &v, lim);
                }
            }
            ListEdit::Set { index, elem } => {
                if *index < l.len() {
                    l.set(*index, elem, lim);
                }
            }
            ListEdit::Insert { after, pivot, elem } => {
                let at = l.iter().position(|e| *e == pivot[..]);
                if let Some(at) = at {
                    l.insert(at + usize::from(*after), elem, lim);
                }
            }
            ListEdit::Rem { count, elem } => {
                let limit = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
                l.remove_eq(elem, limit, *count < 0, lim);
            }
            ListEdit::Trim { left, right } => {
                let len = l.len();
                l.remove_range(len.saturating_sub(*right), *right, lim);
                l.remove_range(0, *left, lim);
            }
            ListEdit::Keep { start, stop } => {
                let len = l.len() as i64;
                let from = if *start < 0 { (len + start).max(0) } else { *start };
                let to = if *stop < 0 { len + stop } else { (*stop).min(len - 1) };
                if from > to || from >= len {
                    l.remove_range(0, len as usize, lim);
                } else {
                    l.remove_range(to as usize + 1, (len - 1 - to) as usize, lim);
                    l.remove_range(0, from as usize, lim);
                }
            }
        }
    }

    fn to_argv(&self, key: &[u8]) -> Vec<Vec<u8>> {
        let k = key.to_vec();
        match self {
            ListEdit::Push { end, elems } => {
                let cmd: &[u8] = if *end == End::Left { b"LPUSH" } else { b"RPUSH" };
                let mut v = vec![cmd.to_vec(), k];
                v.extend(elems.iter().map(|e| e.to_vec()));
                v
            }
            ListEdit::Pop { end, count } => {
                let cmd: &[u8] = if *end == End::Left { b"LPOP" } else { b"RPOP" };
                vec![cmd.to_vec(), k, num(*count)]
            }
            ListEdit::Rotate { from, to } => vec![b"LMOVE".to_vec(), k.clone(), k, end_name(*from).to_vec(), end_name(*to).to_vec()],
            ListEdit::Set { index, elem } => vec![b"LSET".to_vec(), k, num(*index), elem.to_vec()],
            ListEdit::Insert { after, pivot, elem } => {
                let w: &[u8] = if *after { b"AFTER" } else { b"BEFORE" };
                vec![b"LINSERT".to_vec(), k, w.to_vec(), pivot.to_vec(), elem.to_vec()]
            }
            ListEdit::Rem { count, elem } => vec![b"LREM".to_vec(), k, num(*count), elem.to_vec()],
            ListEdit::Trim { left, right } => {
                let stop = -1i64 - i64::try_from(*right).unwrap_or(i64::MAX - 1);
                vec![b"LTRIM".to_vec(), k, num(*left), num(stop)]
            }
            ListEdit::Keep { start, stop } => vec![b"LTRIM".to_vec(), k, num(*start), num(*stop)],
        }
    }
}

/// An effect, the database it happened in, and its number in the
/// keyspace's sequence: the records of one key are numbered in the order
/// they happened, whichever worker made them, so a reader merges the
/// workers' buffers by number.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub db: u32,
    pub seq: u64,
    pub effect: Effect,
}

/// The memcached item header's mark, the start of the PING's argument
/// that announces it (see the module docs).
pub const MC_HEADER: &[u8] = b"TERN.MC ";

/// A memcached item's header as the PING that announces it carries it.
pub fn mc_header_arg(flags: u32, cas: u64, state: u8) -> Vec<u8> {
    let mut v = MC_HEADER.to_vec();
    v.extend_from_slice(itoa::Buffer::new().format(flags).as_bytes());
    v.push(b' ');
    v.extend_from_slice(itoa::Buffer::new().format(cas).as_bytes());
    v.push(b' ');
    v.extend_from_slice(itoa::Buffer::new().format(state).as_bytes());
    v
}

/// The header a command announces, if it is that PING: flags, CAS, state.
pub fn mc_header(argv: &[impl AsRef<[u8]>]) -> Option<(u32, u64, u8)> {
    let [name, arg] = argv else { return None };
    if !name.as_ref().eq_ignore_ascii_case(b"PING") {
        return None;
    }
    let rest = arg.as_ref().strip_prefix(MC_HEADER)?;
    let mut it = rest.split(|&b| b == b' ');
    let flags = u32::try_from(tern_resp::parse_u64(it.next()?)?).ok()?;
    let cas = tern_resp::parse_u64(it.next()?)?;
    let state = u8::try_from(tern_resp::parse_u64(it.next()?)?).ok()?;
    it.next().is_none().then_some((flags, cas, state))
}

/// A score as ZADD reads it back exactly (Redis's reply digits, which
/// round-trip).
fn score_arg(s: f64) -> Vec<u8> {
    let mut b = String::new();
    tern_resp::format_double(s, &mut b);
    b.into_bytes()
}

fn num(n: impl itoa::Integer) -> Vec<u8> {
    itoa::Buffer::new().format(n).as_bytes().to_vec()
}

/// `SET key value [PXAT ms | KEEPTTL]` appended to `out`: what a string
/// written whole replays as (not a memcached item, which a header
/// precedes: [`Effect::to_argv`]).
#[inline]
pub fn encode_set(out: &mut Vec<u8>, key: &[u8], value: &[u8], ttl: Ttl) {
    match ttl {
        Ttl::Keep => tern_resp::encode::request(out, [&b"SET"[..], key, value, b"KEEPTTL"]),
        Ttl::At(Some(t)) => {
            let mut at = itoa::Buffer::new();
            tern_resp::encode::request(out, [&b"SET"[..], key, value, b"PXAT", at.format(t).as_bytes()])
        }
        Ttl::At(None) => tern_resp::encode::request(out, [&b"SET"[..], key, value]),
    }
}

impl Effect {
    /// The key the effect changes (None for whole-database effects).
    pub fn key(&self) -> Option<&[u8]> {
        match self {
            Effect::Put { key, .. }
            | Effect::Del { key }
            | Effect::Expire { key, .. }
            | Effect::HSet { key, .. }
            | Effect::HDel { key, .. }
            | Effect::HExpire { key, .. }
            | Effect::List { key, .. } => Some(key),
            | Effect::SAdd { key, .. }
            | Effect::SRem { key, .. }
            | Effect::ZAdd { key, .. }
            | Effect::ZRem { key, .. }
            | Effect::Stream { key, .. } => Some(key),
            Effect::FlushDb | Effect::SwapDb { .. } | Effect::Command { .. } => None,
        }
    }

    /// Appends the effect to `out` as the commands that replay it (see
    /// [`Effect::to_argv`]), as RESP arrays: the form of the AOF and the
    /// replication stream.
    pub fn encode(&self, out: &mut Vec<u8>, db: u32) {
        // The common record, a string written whole, without building its
        // arguments: the key and the bytes go straight to `out`.
        if let Effect::Put { key, value: Value::Str(s), ttl } = self {
            if !matches!(s, StrValue::Mc(_)) {
                s.with_bytes(|v| encode_set(out, key, v, *ttl));
                return;
            }
        }
        for argv in self.to_argv(db) {
            tern_resp::encode::request(out, argv.iter().map(Vec::as_slice));
        }
    }

    /// The commands that replay the effect on a Redis-protocol server, in
    /// order (a whole hash takes several). `db` is the record's database.
    pub fn to_argv(&self, db: u32) -> Vec<Vec<Vec<u8>>> {
        let fields = |v: &mut Vec<Vec<u8>>, fs: &[Box<[u8]>]| {
            v.push(b"FIELDS".to_vec());
            v.push(num(fs.len()));
            v.extend(fs.iter().map(|f| f.to_vec()));
        };
        match self {
            Effect::Put { key, value: Value::Str(s), ttl } => {
                let mut out = Vec::new();
                if let StrValue::Mc(m) = s {
                    out.push(vec![b"PING".to_vec(), mc_header_arg(m.flags(), m.cas(), m.state())]);
                }
                let mut v = vec![b"SET".to_vec(), key.to_vec(), s.to_vec()];
                match ttl {
                    Ttl::Keep => v.push(b"KEEPTTL".to_vec()),
                    Ttl::At(Some(at)) => v.extend([b"PXAT".to_vec(), num(*at)]),
                    Ttl::At(None) => {}
                }
                out.push(v);
                out
            }
            Effect::Put { key, value: Value::Hash(h), ttl } => {
                let mut out = vec![vec![b"DEL".to_vec(), key.to_vec()]];
                let mut hset = vec![b"HSET".to_vec(), key.to_vec()];
                let mut deadlines: Vec<(u64, &[u8])> = Vec::new();
                for (f, val) in h.iter() {
                    hset.push(f.to_vec());
                    hset.push(val.to_vec());
                    if let Some(at) = h.field_expire(f) {
                        deadlines.push((at, f));
                    }
                }
                out.push(hset);
                deadlines.sort_unstable();
                for (at, f) in deadlines {
                    out.push(vec![
                        b"HPEXPIREAT".to_vec(),
                        key.to_vec(),
                        num(at),
                        b"FIELDS".to_vec(),
                        b"1".to_vec(),
                        f.to_vec(),
                    ]);
                }
                // A hash's own TTL cannot be kept by a DEL + HSET: the
                // writers of a whole hash (RENAME, COPY, MOVE) give it.
                if let Ttl::At(Some(at)) = ttl {
                    out.push(vec![b"PEXPIREAT".to_vec(), key.to_vec(), num(*at)]);
                }
                out
            }
            Effect::Put { key, value: Value::List(l), ttl: Ttl::At(at) } => {
                let mut push = vec![b"RPUSH".to_vec(), key.to_vec()];
                push.extend(l.iter().map(Cow::into_owned));
                let mut out = vec![vec![b"DEL".to_vec(), key.to_vec()], push];
                if let Some(at) = at {
                    out.push(vec![b"PEXPIREAT".to_vec(), key.to_vec(), num(*at)]);
                }
                out
            }
            // List commands record their in-place edits as Effect::List;
            // a whole list keeping its deadline still has a form that keeps
            // the key alive throughout: the new elements in front of the
            // old, which are then trimmed away.
            Effect::Put { key, value: Value::List(l), ttl: Ttl::Keep } => {
                let mut push = vec![b"LPUSH".to_vec(), key.to_vec()];
                push.extend(l.iter().rev().map(Cow::into_owned));
                let last = num(l.len() as i64 - 1);
                vec![push, vec![b"LTRIM".to_vec(), key.to_vec(), b"0".to_vec(), last]]
            }
            Effect::List { key, edit } => vec![edit.to_argv(key)],
            // Set commands record their members (SAdd, SRem), never an
            // in-place whole set: a whole set is written by the store
            // commands, RENAME, COPY and MOVE, which give its deadline.
            Effect::Put { key, value: Value::Set(set), ttl } => {
                let mut sadd = vec![b"SADD".to_vec(), key.to_vec()];
                sadd.extend(set.iter().map(crate::set::Member::to_vec));
                let mut out = vec![vec![b"DEL".to_vec(), key.to_vec()], sadd];
                if let Ttl::At(Some(at)) = ttl {
                    out.push(vec![b"PEXPIREAT".to_vec(), key.to_vec(), num(*at)]);
                }
                out
            }
            Effect::SAdd { key, members } | Effect::SRem { key, members } => {
                let name: &[u8] = if matches!(self, Effect::SAdd { .. }) { b"SADD" } else { b"SREM" };
                let mut v = vec![name.to_vec(), key.to_vec()];
                v.extend(members.iter().map(|m| m.to_vec()));
                vec![v]
            }
            // Sorted sets likewise: ZAdd and ZRem in place, a whole one
            // only from the writers that give its deadline.
            Effect::Put {
                key,
                value: Value::ZSet(z),
                ttl,
            } => {
                let mut zadd = vec![b"ZADD".to_vec(), key.to_vec()];
                for (m, s) in z.iter() {
                    zadd.push(score_arg(s));
                    zadd.push(m.to_vec());
                }
                let mut out = vec![vec![b"DEL".to_vec(), key.to_vec()], zadd];
                if let Ttl::At(Some(at)) = ttl {
                    out.push(vec![b"PEXPIREAT".to_vec(), key.to_vec(), num(*at)]);
                }
                out
            }
            Effect::ZAdd { key, pairs } => {
                let mut v = vec![b"ZADD".to_vec(), key.to_vec()];
                for (s, m) in pairs {
                    v.push(score_arg(*s));
                    v.push(m.to_vec());
                }
                vec![v]
            }
            Effect::ZRem { key, members } => {
                let mut v = vec![b"ZREM".to_vec(), key.to_vec()];
                v.extend(members.iter().map(|m| m.to_vec()));
                vec![v]
            }
            Effect::Del { key } => vec![vec![b"DEL".to_vec(), key.to_vec()]],
            Effect::Expire { key, at: Some(at) } => vec![vec![b"PEXPIREAT".to_vec(), key.to_vec(), num(*at)]],
            Effect::Expire { key, at: None } => vec![vec![b"PERSIST".to_vec(), key.to_vec()]],
            Effect::HSet { key, pairs, keep_ttl } => {
                let mut v = if *keep_ttl {
                    vec![b"HSETEX".to_vec(), key.to_vec(), b"KEEPTTL".to_vec(), b"FIELDS".to_vec(), num(pairs.len())]
                } else {
                    vec![b"HSET".to_vec(), key.to_vec()]
                };
                for (f, val) in pairs {
                    v.push(f.to_vec());
                    v.push(val.to_vec());
                }
                vec![v]
            }
            Effect::HDel { key, fields: fs } => {
                let mut v = vec![b"HDEL".to_vec(), key.to_vec()];
                v.extend(fs.iter().map(|f| f.to_vec()));
                vec![v]
            }
            Effect::HExpire { key, at, fields: fs } => {
                let mut v = match at {
                    Some(at) => vec![b"HPEXPIREAT".to_vec(), key.to_vec(), num(*at)],
                    None => vec![b"HPERSIST".to_vec(), key.to_vec()],
                };
                fields(&mut v, fs);
                vec![v]
            }
            Effect::Put { key, value: Value::Stream(x), ttl } => {
                let mut out = vec![vec![b"DEL".to_vec(), key.to_vec()]];
                stream_forms(key, x, &mut out);
                // Streams change in place through Effect::Stream: a whole
                // one comes from the writers that give its deadline, as
                // sets and sorted sets do.
                if let Ttl::At(Some(at)) = ttl {
                    out.push(vec![b"PEXPIREAT".to_vec(), key.to_vec(), num(*at)]);
                }
                out
            }
            Effect::Stream { argv, .. } => vec![argv.iter().map(|a| a.to_vec()).collect()],
            Effect::FlushDb => vec![vec![b"FLUSHDB".to_vec()]],
            Effect::SwapDb { other } => vec![vec![b"SWAPDB".to_vec(), num(db), num(*other)]],
            Effect::Command { argv } => vec![argv.iter().map(|a| a.to_vec()).collect()],
        }
    }
}

/// The commands that rebuild stream `s` under `key` (Redis's
/// `rewriteStreamObject`), appended to `out`.
fn stream_forms(key: &[u8], s: &Stream, out: &mut Vec<Vec<Vec<u8>>>) {
    let k = || key.to_vec();
    if s.is_empty() {
        // The one way to create an empty stream: add an entry and trim it.
        out.push(vec![b"XADD".to_vec(), k(), b"MAXLEN".to_vec(), b"0".to_vec(), b"0-1".to_vec(), b"x".to_vec(), b"y".to_vec()]);
    }
    s.range(StreamId::MIN, StreamId::MAX, false, |id, f| {
        let mut xadd = Vec::with_capacity(3 + 2 * f.len());
        xadd.extend([b"XADD".to_vec(), k(), id.to_text()]);
        for (field, value) in f.iter() {
            xadd.push(field.into_owned());
            xadd.push(value.into_owned());
        }
        out.push(xadd);
        true
    });
    out.push(vec![
        b"XSETID".to_vec(),
        k(),
        s.last_id().to_text(),
        b"ENTRIESADDED".to_vec(),
        num(s.entries_added()),
        b"MAXDELETEDID".to_vec(),
        s.max_deleted_id().to_text(),
    ]);
    for (group, g) in s.groups() {
        out.push(vec![
            b"XGROUP".to_vec(),
            b"CREATE".to_vec(),
            k(),
            group.to_vec(),
            g.last_id.to_text(),
            b"ENTRIESREAD".to_vec(),
            num(g.entries_read),
        ]);
        for (consumer, c) in g.consumers() {
            if c.pending_len() == 0 {
                out.push(vec![b"XGROUP".to_vec(), b"CREATECONSUMER".to_vec(), k(), group.to_vec(), consumer.to_vec()]);
            }
            for id in c.pending_from(StreamId::MIN) {
                let nack = g.nack(id).expect("a consumer's pending ID is in its group's PEL");
                out.push(vec![
                    b"XCLAIM".to_vec(),
                    k(),
                    group.to_vec(),
                    consumer.to_vec(),
                    b"0".to_vec(),
                    id.to_text(),
                    b"TIME".to_vec(),
                    num(nack.delivery_time),
                    b"RETRYCOUNT".to_vec(),
                    num(nack.delivery_count),
                    b"JUSTID".to_vec(),
                    b"FORCE".to_vec(),
                ]);
            }
        }
    }
}

/// A writer's low-water mark: the lowest number among the records it
/// holds and has not handed over (`u64::MAX`: none). Written by its
/// writer only, read by the feed's reader ([`crate::aof::feed`], where
/// the argument for the marks is); on its own cache line.
#[derive(Debug)]
pub struct Mark(Padded<AtomicU64>);

impl Default for Mark {
    fn default() -> Self {
        Mark(Padded(AtomicU64::new(u64::MAX)))
    }
}

impl Mark {
    /// Records numbered from `seq` on are now held.
    #[inline]
    pub fn note(&self, seq: u64) {
        if seq < self.0 .0.load(Ordering::Relaxed) {
            self.0 .0.store(seq, Ordering::Relaxed);
        }
    }

    pub fn get(&self) -> u64 {
        self.0 .0.load(Ordering::Relaxed)
    }

    pub(crate) fn clear(&self) {
        self.0 .0.store(u64::MAX, Ordering::Relaxed);
    }
}

/// A key written while writes are noted (for CLIENT TRACKING's
/// invalidations, keyspace notifications), numbered by its writing
/// thread: the notes of one command, gathered from several shards, are
/// put back in the order they were written. `event` is what the write
/// was, while notifications are wanted (see [`crate::event`]).
#[derive(Debug)]
pub struct Modified {
    order: u64,
    pub db: u32,
    pub key: Box<[u8]>,
    pub event: Option<crate::event::Event>,
    /// The key's tracking marks the write took (see [`crate::tracked`]):
    /// the slots of the clients that read it since its last write.
    pub readers: u64,
}

thread_local! {
    static WRITE_ORDER: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

impl Modified {
    pub fn new(db: u32, key: &[u8], event: Option<crate::event::Event>) -> Self {
        let order = WRITE_ORDER.with(|c| {
            let n = c.get().wrapping_add(1);
            c.set(n);
            n
        });
        Modified { order, db, key: key.into(), event, readers: 0 }
    }
}

/// One record of a [`Log`]: its number, its database, and where its
/// commands are in the log's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rec {
    pub seq: u64,
    pub db: u32,
    at: usize,
    end: usize,
}

/// Effect records as they travel to their readers: each record's commands
/// already encoded (RESP arrays, [`Effect::encode`]) into one buffer,
/// with a small index entry per record. A shard encodes a record as it
/// stages it, so a write allocates nothing of its own for the AOF or the
/// replicas, and what moves between buffers and threads is bytes and
/// index entries, whose buffers keep their capacity from round to round.
#[derive(Debug, Default)]
pub struct Log {
    bytes: Vec<u8>,
    recs: Vec<Rec>,
}

impl Log {
    /// Appends a record numbered `seq` in database `db`, whose commands
    /// `enc` writes.
    #[inline]
    pub fn push_with(&mut self, seq: u64, db: u32, enc: impl FnOnce(&mut Vec<u8>)) {
        let at = self.bytes.len();
        enc(&mut self.bytes);
        self.recs.push(Rec { seq, db, at, end: self.bytes.len() });
    }

    /// Appends `effect` as record `seq` of database `db`.
    pub fn push(&mut self, seq: u64, db: u32, effect: &Effect) {
        self.push_with(seq, db, |out| effect.encode(out, db));
    }

    /// Appends `rec` of `from` (its bytes copied).
    #[inline]
    pub fn push_from(&mut self, from: &Log, rec: &Rec) {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(&from.bytes[rec.at..rec.end]);
        self.recs.push(Rec { at, end: self.bytes.len(), ..*rec });
    }

    /// Moves `other`'s records after this log's, leaving `other` empty
    /// (with the capacity of one of the two).
    pub fn append(&mut self, other: &mut Log) {
        if self.recs.is_empty() {
            std::mem::swap(self, other);
            other.clear();
            return;
        }
        self.extend_from(other);
        other.clear();
    }

    /// Copies `other`'s records after this log's.
    pub fn extend_from(&mut self, other: &Log) {
        let base = self.bytes.len();
        self.bytes.extend_from_slice(&other.bytes);
        self.recs.extend(other.recs.iter().map(|r| Rec { at: r.at + base, end: r.end + base, ..*r }));
    }

    pub fn clear(&mut self) {
        self.bytes.clear();
        self.recs.clear();
    }

    pub fn len(&self) -> usize {
        self.recs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// The bytes of all its records.
    pub fn bytes_len(&self) -> usize {
        self.bytes.len()
    }

    /// The index, in order.
    pub fn recs(&self) -> &[Rec] {
        &self.recs
    }

    /// The records in order: each one's index entry and commands.
    pub fn iter(&self) -> impl Iterator<Item = (&Rec, &[u8])> {
        self.recs.iter().map(|r| (r, &self.bytes[r.at..r.end]))
    }

    /// Bytes held, for a buffer kept across rounds to be given back
    /// when it grew large.
    pub fn capacity(&self) -> usize {
        self.bytes.capacity() + self.recs.capacity() * std::mem::size_of::<Rec>()
    }

    /// Orders the records from index `start` on by number.
    fn sort_from(&mut self, start: usize) {
        if self.recs.len() > start + 1 {
            self.recs[start..].sort_unstable_by_key(|r| r.seq);
        }
    }

    /// See [`Effects::wrap_from`].
    fn wrap_from(&mut self, start: usize) {
        if self.recs.len() < start + 2 {
            return;
        }
        let (first, last) = (self.recs[start], self.recs[self.recs.len() - 1]);
        self.push_with(last.seq, last.db, |out| tern_resp::encode::request(out, [&b"EXEC"[..]]));
        self.push_with(first.seq, first.db, |out| tern_resp::encode::request(out, [&b"MULTI"[..]]));
        let multi = self.recs.pop().expect("just pushed");
        self.recs.insert(start, multi);
    }
}

/// A writer's buffer of effect records: a worker's (filled as the shard
/// locks of its commands are released) or the expiry cycle's. The records
/// wait here for the readers (AOF, replication) to take them with
/// [`crate::aof::Feed::hand`]; the keys written wait for tracking and
/// keyspace notifications ([`Effects::take_modified`]). Its methods take
/// `&self`, so that a writer can hand it to each shard lock it takes
/// while it keeps using its other state; it never leaves its thread.
#[derive(Debug, Default)]
pub struct Effects {
    log: RefCell<Log>,
    /// Writes noted while clients track keys or notifications are wanted
    /// (see [`crate::Keyspace::track_writes`]).
    modified: RefCell<Vec<Modified>>,
    /// The writer's low-water mark, for a reader that merges writers by
    /// number (the AOF, see [`crate::aof::Feed`]): noted as records come
    /// in from a shard, before its lock is released.
    mark: Option<Arc<Mark>>,
    /// An empty log kept for [`Effects::lend`], with the capacity the
    /// last one absorbed had.
    spare: RefCell<Log>,
}

impl Effects {
    pub fn new() -> Self {
        Self::default()
    }

    /// A buffer whose records lower `mark` as they come in: the writer's
    /// own, or a lock set's whose records its writer absorbs.
    pub fn marked(mark: Arc<Mark>) -> Self {
        Effects { mark: Some(mark), ..Effects::default() }
    }

    /// A buffer for a short-lived lock set whose records this one will
    /// [`Effects::absorb`]: marked as this one is, and holding a log with
    /// the capacity of the last one absorbed, so a lock set per request
    /// allocates nothing for its records.
    pub fn lend(&self) -> Effects {
        let log = std::mem::take(&mut *self.spare.borrow_mut());
        Effects { log: RefCell::new(log), mark: self.mark.clone(), ..Effects::default() }
    }

    /// The mark this buffer notes its records in.
    pub fn mark(&self) -> Option<&Arc<Mark>> {
        self.mark.as_ref()
    }

    /// Takes the records gathered so far, oldest first.
    pub fn take(&self) -> Log {
        std::mem::take(&mut *self.log.borrow_mut())
    }

    /// Copies the records gathered so far after `to`'s and empties this
    /// buffer, which keeps its capacity.
    pub fn drain_into(&self, to: &mut Log) {
        let mut log = self.log.borrow_mut();
        to.extend_from(&log);
        log.clear();
    }

    pub fn len(&self) -> usize {
        self.log.borrow().len()
    }

    /// The number of the last record gathered (they are in order by
    /// number once gathered).
    pub fn last_seq(&self) -> Option<u64> {
        self.log.borrow().recs.last().map(|r| r.seq)
    }

    pub fn is_empty(&self) -> bool {
        self.log.borrow().is_empty()
    }

    /// Moves `other`'s records after this buffer's (a short-lived lock
    /// set's records into its worker's buffer).
    #[inline]
    pub fn absorb(&self, other: &Effects) {
        let mut o = other.log.borrow_mut();
        if !o.is_empty() {
            self.log.borrow_mut().append(&mut o);
            // Emptied, with capacity: the next lend's.
            let mut spare = self.spare.borrow_mut();
            if o.capacity() > spare.capacity() {
                std::mem::swap(&mut *o, &mut *spare);
            }
        }
        let mut m = other.modified.borrow_mut();
        if !m.is_empty() {
            self.modified.borrow_mut().append(&mut m);
        }
    }

    /// Takes a shard's keys written for tracking (under its lock).
    pub(crate) fn note_modified(&self, keys: &mut Vec<Modified>) {
        self.modified.borrow_mut().append(keys);
    }

    /// Whether keys written for tracking wait here.
    #[inline]
    pub fn has_modified(&self) -> bool {
        !self.modified.borrow().is_empty()
    }

    /// The writes noted so far, in the order they were made (a
    /// command's notes sit in its shards' lists until gathered).
    pub fn take_modified(&self) -> Vec<Modified> {
        let mut m = std::mem::take(&mut *self.modified.borrow_mut());
        m.sort_by_key(|x| x.order);
        m
    }

    /// Orders the records from index `start` on by number.
    pub(crate) fn sort_from(&self, start: usize) {
        self.log.borrow_mut().sort_from(start);
    }

    /// Wraps the records from `start` on in MULTI and EXEC when there are
    /// two or more: the writes of a script or a transaction, which a replay
    /// must apply as one (Redis propagates them so). The two carry their
    /// neighbours' numbers, so a merge by number keeps them around them.
    pub fn wrap_from(&self, start: usize) {
        self.log.borrow_mut().wrap_from(start);
    }

    /// Takes a shard's staged records, under its lock: the mark goes no
    /// higher than the first (the lowest: a shard numbers its records as
    /// it stages them) before the lock is released.
    pub(crate) fn extend(&self, staged: &mut Log) {
        if let (Some(m), Some(first)) = (&self.mark, staged.recs.first()) {
            m.note(first.seq);
        }
        // Copied: the shard's log keeps its capacity.
        self.log.borrow_mut().extend_from(staged);
        staged.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::EntryExt;
    use crate::hash::HashLimits;
    use crate::keyspace::Keyspace;
    use crate::list::List;
    use crate::set::{Set, SetLimits};
    use crate::value::McStr;

    fn argv(e: &Effect) -> Vec<Vec<String>> {
        e.to_argv(3).into_iter().map(|c| c.into_iter().map(|a| String::from_utf8(a).unwrap()).collect()).collect()
    }

    #[test]
    fn list_forms_replay_what_they_say() {
        let k: Box<[u8]> = (*b"k").into();
        let b = |s: &str| -> Box<[u8]> { s.as_bytes().into() };
        let argv = |e: ListEdit| Effect::List { key: k.clone(), edit: e }.to_argv(0);
        let s = |v: &[&str]| -> Vec<Vec<Vec<u8>>> { vec![v.iter().map(|x| x.as_bytes().to_vec()).collect()] };
        assert_eq!(argv(ListEdit::Push { end: End::Left, elems: vec![b("a"), b("b")] }), s(&["LPUSH", "k", "a", "b"]));
        assert_eq!(argv(ListEdit::Pop { end: End::Right, count: 2 }), s(&["RPOP", "k", "2"]));
        assert_eq!(argv(ListEdit::Rotate { from: End::Left, to: End::Right }), s(&["LMOVE", "k", "k", "LEFT", "RIGHT"]));
        assert_eq!(argv(ListEdit::Set { index: 3, elem: b("x") }), s(&["LSET", "k", "3", "x"]));
        assert_eq!(argv(ListEdit::Insert { after: true, pivot: b("p"), elem: b("x") }), s(&["LINSERT", "k", "AFTER", "p", "x"]));
        assert_eq!(argv(ListEdit::Rem { count: -2, elem: b("x") }), s(&["LREM", "k", "-2", "x"]));
        assert_eq!(argv(ListEdit::Trim { left: 1, right: 0 }), s(&["LTRIM", "k", "1", "-1"]));
        assert_eq!(argv(ListEdit::Trim { left: 0, right: 2 }), s(&["LTRIM", "k", "0", "-3"]));
        // The edits do to a list what those commands do.
        let lim = ListLimits::default();
        let mut l = List::from_items([&b"a"[..], b"b", b"c", b"b"], lim);
        ListEdit::Rem { count: -1, elem: b("b") }.apply_to(&mut ListMut::of(&mut l), lim);
        ListEdit::Insert { after: false, pivot: b("c"), elem: b("x") }.apply_to(&mut ListMut::of(&mut l), lim);
        ListEdit::Trim { left: 1, right: 1 }.apply_to(&mut ListMut::of(&mut l), lim);
        ListEdit::Rotate { from: End::Right, to: End::Left }.apply_to(&mut ListMut::of(&mut l), lim);
        assert_eq!(l.iter().collect::<Vec<_>>(), vec![&b"x"[..], b"b"]);
        // LTRIM's own indices, from either end.
        let mut l = List::from_items([&b"a"[..], b"b", b"c", b"d"], lim);
        ListEdit::Keep { start: 1, stop: 9 }.apply_to(&mut ListMut::of(&mut l), lim);
        ListEdit::Keep { start: -3, stop: -2 }.apply_to(&mut ListMut::of(&mut l), lim);
        assert_eq!(l.iter().collect::<Vec<_>>(), vec![&b"b"[..], b"c"]);
        ListEdit::Keep { start: 5, stop: 9 }.apply_to(&mut ListMut::of(&mut l), lim);
        assert_eq!(l.len(), 0);
    }

    /// Redis's `rewriteStreamObject`, after the DEL every whole value
    /// starts with.
    #[test]
    fn stream_forms_as_redis_rewrites_them() {
        use crate::stream::{StreamLimits, TrimTo, RefPolicy};
        let k: Box<[u8]> = (*b"k").into();
        let id = StreamId::new;
        let mut s = Stream::new();
        s.append(id(1, 1), &[b"a", b"1"], StreamLimits::default());
        s.append(id(1, 2), &[b"a", b"2", b"b", b"x"], StreamLimits::default());
        s.append(id(2, 0), &[b"c", b"3"], StreamLimits::default());
        s.delete(id(2, 0));
        s.create_group(b"g", id(1, 2), 2);
        s.create_group(b"e", StreamId::MIN, -1);
        let g = s.group_mut(b"g").unwrap();
        g.create_consumer(b"bob", 10);
        g.create_consumer(b"al", 10);
        g.deliver(id(1, 2), b"bob", 1_700_000_000_000);
        g.nack_mut(id(1, 2)).unwrap().delivery_count = 3;
        let whole = Effect::Put { key: k.clone(), value: Value::Stream(Box::new(s.clone())), ttl: Ttl::At(Some(60)) };
        assert_eq!(
            argv(&whole),
            vec![
                vec!["DEL", "k"],
                vec!["XADD", "k", "1-1", "a", "1"],
                vec!["XADD", "k", "1-2", "a", "2", "b", "x"],
                vec!["XSETID", "k", "2-0", "ENTRIESADDED", "3", "MAXDELETEDID", "2-0"],
                vec!["XGROUP", "CREATE", "k", "e", "0-0", "ENTRIESREAD", "-1"],
                vec!["XGROUP", "CREATE", "k", "g", "1-2", "ENTRIESREAD", "2"],
                vec!["XGROUP", "CREATECONSUMER", "k", "g", "al"],
                vec!["XCLAIM", "k", "g", "bob", "0", "1-2", "TIME", "1700000000000", "RETRYCOUNT", "3", "JUSTID", "FORCE"],
                vec!["PEXPIREAT", "k", "60"],
            ]
        );
        // An empty stream: an entry added and trimmed away.
        let mut e = s.clone();
        e.trim(TrimTo::MaxLen(0), false, 0, RefPolicy::KeepRef);
        for g in [&b"e"[..], b"g"] {
            e.destroy_group(g);
        }
        e.set_last_id(id(5, 0));
        let empty = Effect::Put { key: k.clone(), value: Value::Stream(Box::new(e)), ttl: Ttl::At(None) };
        assert_eq!(
            argv(&empty),
            vec![
                vec!["DEL", "k"],
                vec!["XADD", "k", "MAXLEN", "0", "0-1", "x", "y"],
                vec!["XSETID", "k", "5-0", "ENTRIESADDED", "3", "MAXDELETEDID", "2-0"],
            ]
        );
        // A change in place is its command, and the keyspace's replay
        // leaves it to the command table.
        let b = |x: &str| -> Box<[u8]> { x.as_bytes().into() };
        let xadd = Effect::Stream { key: k.clone(), argv: vec![b("XADD"), b("k"), b("9-0"), b("f"), b("v")] };
        assert_eq!(argv(&xadd), [["XADD", "k", "9-0", "f", "v"]]);
        assert_eq!(xadd.key(), Some(&b"k"[..]));
        let ks = Keyspace::new(1, 1);
        Record { db: 0, seq: 1, effect: xadd }.apply(&ks, HashLimits::default(), ListLimits::default(), 0);
        let loc = ks.locate(0, b"k");
        assert!(ks.lock(loc.gid).get(b"k", loc.hash, 0).is_none());
        // A whole stream replays as a value.
        Record { db: 0, seq: 2, effect: whole }.apply(&ks, HashLimits::default(), ListLimits::default(), 0);
        let sh = ks.lock(loc.gid);
        let got = sh.peek(b"k", loc.hash, 0).and_then(|e| e.stream().cloned());
        assert_eq!((got.as_ref().map(Stream::len), sh.peek(b"k", loc.hash, 0).map(|e| e.value().type_name())), (Some(2), Some("stream")));
    }

    #[test]
    fn redis_forms() {
        let k: Box<[u8]> = (*b"k").into();
        let put = |v: StrValue, ttl| Effect::Put { key: k.clone(), value: Value::Str(v), ttl };
        assert_eq!(argv(&put(StrValue::Int(5), Ttl::At(Some(1700)))), [["SET", "k", "5", "PXAT", "1700"]]);
        assert_eq!(argv(&put(StrValue::Raw(b"x".to_vec()), Ttl::Keep)), [["SET", "k", "x", "KEEPTTL"]]);
        assert_eq!(
            argv(&put(StrValue::Mc(McStr::new(b"d", 7, 99, 0)), Ttl::At(None))),
            [vec!["PING", "TERN.MC 7 99 0"], vec!["SET", "k", "d"]]
        );
        assert_eq!(mc_header(&[&b"ping"[..], b"TERN.MC 7 99 0"]), Some((7, 99, 0)));
        for not in [&[&b"PING"[..]][..], &[b"PING", b"hello"], &[b"PING", b"TERN.MC 7 99"], &[b"PING", b"TERN.MC 7 99 0 1"], &[b"ECHO", b"TERN.MC 7 99 0"]] {
            assert_eq!(mc_header(not), None);
        }
        assert_eq!(argv(&Effect::Expire { key: k.clone(), at: Some(5) }), [["PEXPIREAT", "k", "5"]]);
        assert_eq!(argv(&Effect::Expire { key: k.clone(), at: None }), [["PERSIST", "k"]]);
        let f: Box<[u8]> = (*b"f").into();
        assert_eq!(
            argv(&Effect::HExpire { key: k.clone(), at: Some(9), fields: vec![f.clone()] }),
            [["HPEXPIREAT", "k", "9", "FIELDS", "1", "f"]]
        );
        assert_eq!(
            argv(&Effect::HSet { key: k.clone(), pairs: vec![(f.clone(), f.clone())], keep_ttl: true }),
            [["HSETEX", "k", "KEEPTTL", "FIELDS", "1", "f", "f"]]
        );
        assert_eq!(argv(&Effect::SwapDb { other: 0 }), [["SWAPDB", "3", "0"]]);
        assert_eq!(argv(&Effect::SAdd { key: k.clone(), members: vec![f.clone()] }), [["SADD", "k", "f"]]);
        assert_eq!(argv(&Effect::SRem { key: k.clone(), members: vec![f.clone()] }), [["SREM", "k", "f"]]);
        let mut set = Set::new();
        set.add(b"7", SetLimits::default());
        let whole = Effect::Put { key: k.clone(), value: Value::Set(set), ttl: Ttl::At(Some(60)) };
        assert_eq!(argv(&whole), [vec!["DEL", "k"], vec!["SADD", "k", "7"], vec!["PEXPIREAT", "k", "60"]]);
        let mut h = crate::Hash::default();
        h.set(b"f", b"v", crate::HashLimits { max_entries: 128, max_value: 64 });
        h.set_field_expire(b"f", 50);
        let whole = Effect::Put { key: k, value: Value::Hash(h), ttl: Ttl::At(Some(60)) };
        assert_eq!(
            argv(&whole),
            vec![
                vec!["DEL", "k"],
                vec!["HSET", "k", "f", "v"],
                vec!["HPEXPIREAT", "k", "50", "FIELDS", "1", "f"],
                vec!["PEXPIREAT", "k", "60"]
            ]
        );
    }
}
