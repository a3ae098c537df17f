//! String commands: GET, SET and the rest of Redis's string family.
//!
//! Values keep the encoding Redis 8.4 would give them, since OBJECT
//! ENCODING shows it: a whole write of a canonical integer is `int`, of
//! bytes `embstr` while key and value together are at most 41 bytes
//! (`tern_store::embeds`), else `raw`; APPEND and SETRANGE leave a `raw`
//! buffer that grows in place; INCR* store `int`; INCRBYFLOAT stores its
//! text.
//!
//! Every reader goes through [`string_of`] so that the WRONGTYPE path exists
//! for each command before the other types do.
//!
//! Hot path (GET, SET, MGET): arguments are borrowed slices, replies are
//! encoded straight into the connection's buffer and an `int` is formatted
//! on the stack; the only allocation is the stored value itself.

pub mod ldouble;


use crate::messaging::notify::{self, ev};
use tern_resp::{parse_i64, Args};
use tern_store::{embeds, Entry, EntryExt, NewValue, StrRef, StrValue, Value};

use super::keyspec::{delex_key_flags, index, keynum, ks, range, set_key_flags, ACCESS, DELETE, INSERT, OW, RO, RW, UPDATE, VARIABLE_FLAGS};
use super::table::{flags::*, CommandSpec};
use super::{Ctx, Reply};
use crate::errors;
use crate::stats::WorkerStats;
use ldouble::LongDouble;


pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("get", 2, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], get)
        .doc("string", "Returns the string value of a key.", "1.0.0", "O(1)")
        .acl(&["read", "string", "fast"]),
    CommandSpec::new("set", -3, WRITE | DENYOOM, &[ks(RW | ACCESS | UPDATE | VARIABLE_FLAGS, index(1), range(0, 1, 0)).notes("RW and ACCESS due to the optional `GET` argument")], set)
        .event(ev::SET)
        .doc("string", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", "1.0.0", "O(1)")
        .history(&[
            ("2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."),
            ("6.0.0", "Added the `KEEPTTL` option."),
            ("6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."),
            ("7.0.0", "Allowed the `NX` and `GET` options to be used together."),
            ("8.4.0", "Added 'IFEQ', 'IFNE', 'IFDEQ', 'IFDNE' options."),
        ])
        .acl(&["write", "string", "slow"])
        .key_flags_of(set_key_flags),
    CommandSpec::new("setnx", 3, WRITE | DENYOOM | FAST, &[ks(OW | INSERT, index(1), range(0, 1, 0))], setnx)
        .event(ev::SET)
        .doc("string", "Set the string value of a key only when the key doesn't exist.", "1.0.0", "O(1)")
        .deprecated("2.6.12", "`SET` with the `NX` argument")
        .acl(&["write", "string", "fast"]),
    CommandSpec::new("setex", 4, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), range(0, 1, 0))], setex)
        .event(ev::SET)
        .doc("string", "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", "2.0.0", "O(1)")
        .deprecated("2.6.12", "`SET` with the `EX` argument")
        .acl(&["write", "string", "slow"]),
    CommandSpec::new("psetex", 4, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), range(0, 1, 0))], psetex)
        .event(ev::SET)
        .doc("string", "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", "2.6.0", "O(1)")
        .deprecated("2.6.12", "`SET` with the `PX` argument")
        .acl(&["write", "string", "slow"]),
    CommandSpec::new("getset", 3, WRITE | DENYOOM | FAST, &[ks(RW | ACCESS | UPDATE, index(1), range(0, 1, 0))], getset)
        .event(ev::SET)
        .doc("string", "Returns the previous string value of a key after setting it to a new value.", "1.0.0", "O(1)")
        .deprecated("6.2.0", "`SET` with the `!GET` argument")
        .acl(&["write", "string", "fast"]),
    CommandSpec::new("getdel", 2, WRITE | FAST, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0))], getdel)
        .event(ev::DEL)
        .doc("string", "Returns the string value of a key after deleting the key.", "6.2.0", "O(1)")
        .acl(&["write", "string", "fast"]),
    CommandSpec::new("getex", -2, WRITE | FAST, &[ks(RW | ACCESS | UPDATE, index(1), range(0, 1, 0)).notes("RW and UPDATE because it changes the TTL")], getex)
        .event(ev::EXPIRE)
        .doc("string", "Returns the string value of a key after setting its expiration time.", "6.2.0", "O(1)")
        .acl(&["write", "string", "fast"]),
    CommandSpec::new("mget", -2, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(-1, 1, 0))], mget)
        .doc("string", "Atomically returns the string values of one or more keys.", "1.0.0", "O(N) where N is the number of keys to retrieve.")
        .acl(&["read", "string", "fast"])
        .tips(&["request_policy:multi_shard"]),
    CommandSpec::new("mset", -3, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), range(-1, 2, 0))], mset)
        .event(ev::SET)
        .doc("string", "Atomically creates or modifies the string values of one or more keys.", "1.0.1", "O(N) where N is the number of keys to set.")
        .acl(&["write", "string", "slow"])
        .tips(&["request_policy:multi_shard", "response_policy:all_succeeded"]),
    CommandSpec::new("msetnx", -3, WRITE | DENYOOM, &[ks(OW | INSERT, index(1), range(-1, 2, 0))], msetnx)
        .event(ev::SET)
        .doc("string", "Atomically modifies the string values of one or more keys only when all keys don't exist.", "1.0.1", "O(N) where N is the number of keys to set.")
        .acl(&["write", "string", "slow"]),
    CommandSpec::new("append", 3, WRITE | DENYOOM | FAST, &[ks(RW | INSERT, index(1), range(0, 1, 0))], append)
        .event(ev::APPEND)
        .doc("string", "Appends a string to the value of a key. Creates the key if it doesn't exist.", "2.0.0", "O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.")
        .acl(&["write", "string", "fast"]),
    CommandSpec::new("strlen", 2, READONLY | FAST, &[ks(RO, index(1), range(0, 1, 0))], strlen)
        .doc("string", "Returns the length of a string value.", "2.2.0", "O(1)")
        .acl(&["read", "string", "fast"]),
    CommandSpec::new("getrange", 4, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], getrange)
        .doc("string", "Returns a substring of the string stored at a key.", "2.4.0", "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.")
        .acl(&["read", "string", "slow"]),
    CommandSpec::new("substr", 4, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], getrange)
        .deprecated("2.0.0", "`GETRANGE`")
        .doc("string", "Returns a substring from a string value.", "1.0.0", "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.")
        .acl(&["read", "string", "slow"]),
    CommandSpec::new("setrange", 4, WRITE | DENYOOM, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], setrange)
        .event(ev::SETRANGE)
        .doc("string", "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", "2.2.0", "O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.")
        .acl(&["write", "string", "slow"]),
    CommandSpec::new("incr", 2, WRITE | DENYOOM | FAST, &[ks(RW | ACCESS | UPDATE, index(1), range(0, 1, 0))], incr)
        .event(ev::INCRBY)
        .doc("string", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", "1.0.0", "O(1)")
        .acl(&["write", "string", "fast"]),
    CommandSpec::new("decr", 2, WRITE | DENYOOM | FAST, &[ks(RW | ACCESS | UPDATE, index(1), range(0, 1, 0))], decr)
        .event(ev::INCRBY)
        .doc("string", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", "1.0.0", "O(1)")
        .acl(&["write", "string", "fast"]),
    CommandSpec::new("incrby", 3, WRITE | DENYOOM | FAST, &[ks(RW | ACCESS | UPDATE, index(1), range(0, 1, 0))], incrby)
        .event(ev::INCRBY)
        .doc("string", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", "1.0.0", "O(1)")
        .acl(&["write", "string", "fast"]),
    CommandSpec::new("decrby", 3, WRITE | DENYOOM | FAST, &[ks(RW | ACCESS | UPDATE, index(1), range(0, 1, 0))], decrby)
        .event(ev::INCRBY)
        .doc("string", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", "1.0.0", "O(1)")
        .acl(&["write", "string", "fast"]),
    CommandSpec::new("incrbyfloat", 3, WRITE | DENYOOM | FAST, &[ks(RW | ACCESS | UPDATE, index(1), range(0, 1, 0))], incrbyfloat)
        .event(ev::INCRBYFLOAT)
        .doc("string", "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", "2.6.0", "O(1)")
        .acl(&["write", "string", "fast"]),
    CommandSpec::new("msetex", -4, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), keynum(0, 1, 2))], msetex)
        .event(ev::SET)
        .doc("string", "Atomically sets multiple string keys with a shared expiration in a single operation. Supports flexible argument parsing where condition and expiration flags can appear in any order.", "8.4.0", "O(N) where N is the number of keys to set.")
        .acl(&["write", "string", "slow"])
        .tips(&["request_policy:multi_shard", "response_policy:all_succeeded"]),
    CommandSpec::new("digest", 2, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], digest)
        .doc("string", "Returns the XXH3 hash of a string value.", "8.4.0", "O(N) where N is the length of the string value.")
        .acl(&["read", "string", "fast"]),
    CommandSpec::new("delex", -2, WRITE | FAST, &[ks(RW | DELETE | VARIABLE_FLAGS, index(1), range(0, 1, 0))], delex)
        .event(ev::DEL)
        .doc("string", "Conditionally removes the specified key based on value or digest comparison.", "8.4.0", "O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the string value.")
        .acl(&["write", "string", "fast"])
        .key_flags_of(delex_key_flags),
    CommandSpec::new("lcs", -3, READONLY, &[ks(RO | ACCESS, index(1), range(1, 1, 0))], lcs)
        .doc("string", "Finds the longest common substring.", "7.0.0", "O(N*M) where N and M are the lengths of s1 and s2, respectively")
        .acl(&["read", "string", "slow"]),
];

/// A string value as Redis stores it from a whole write: canonical
/// integers as `int`, other bytes in the key's item (no allocation here).
pub fn string_value(b: &[u8]) -> NewValue<'_> {
    if b.len() <= 20 {
        if let Some(n) = parse_i64(b) {
            return NewValue::Int(n);
        }
    }
    NewValue::Bytes(b)
}

/// [`string_value`] for a whole write: a value of at least `share_min`
/// bytes (`reply-copy-avoid-min-size`, 0: never) is stored so that replies
/// can send it without a copy.
pub fn string_value_sharing(b: &[u8], share_min: usize) -> NewValue<'_> {
    if share_min > 0 && b.len() >= share_min && b.len() > 20 {
        return NewValue::Value(Value::Str(StrValue::from_slice_sharing(b, share_min)));
    }
    string_value(b)
}

/// The string an entry holds, or the WRONGTYPE error for any other type.
#[inline]
pub fn string_of(e: &Entry) -> Result<StrRef<'_>, &'static str> {
    e.str().ok_or(errors::WRONGTYPE)
}

/// What an edit of a string in place works on (see [`edit_string`]).
pub enum RawBytes<'a> {
    /// A growable buffer of the string's own; true when the key is new.
    Buffer(&'a mut Vec<u8>, bool),
    /// The bytes of a `raw` string kept in the key's item, where they lie:
    /// at least as many as the edit asked for, and their number cannot
    /// change.
    InItem(&'a mut [u8]),
}

/// Runs `f` on the string at `locs[0]` as a growable `raw` buffer, as
/// Redis's dbUnshareStringValue gives commands that change a string in
/// place (PFADD, PFCOUNT's cache, PFMERGE). An absent key gets an empty
/// buffer when `create` (`f` is told it is new; the key is stored only if
/// `f` succeeds); otherwise `f` does not run (None). See [`edit_string`].
pub fn edit_raw<R>(
    ctx: &mut Ctx<'_, '_>,
    key: &[u8],
    create: bool,
    f: impl FnOnce(&mut Vec<u8>, bool) -> Result<(R, bool), &'static str>,
) -> Result<Option<R>, &'static str> {
    edit_string(ctx, key, create, None, |bytes| match bytes {
        RawBytes::Buffer(buf, fresh) => f(buf, fresh),
        // Asked for with `in_item` None: never handed out.
        RawBytes::InItem(_) => unreachable!("edit_raw never edits in the item"),
    })
}

/// [`edit_raw`], and with `in_item` Some(n) (SETBIT, BITFIELD) a string
/// kept in the key's item that is `raw` already (too long to be `embstr`
/// under its key) and at least `n` bytes long is edited where it lies,
/// with no buffer made: its encoding, bytes and length are what Redis's
/// unshared copy would have. A new key whose bytes are `raw` that way is
/// kept in its item too. `f` answers whether it changed the bytes: a
/// change tells WATCHers and is recorded. Any other string kept in the
/// item moves to a buffer of its own even when nothing changed, as Redis
/// unshares it (`raw` from then on), but then without telling anyone. An
/// error from `f` leaves a value kept in the item as it was.
pub fn edit_string<R>(
    ctx: &mut Ctx<'_, '_>,
    key: &[u8],
    create: bool,
    in_item: Option<usize>,
    f: impl FnOnce(RawBytes<'_>) -> Result<(R, bool), &'static str>,
) -> Result<Option<R>, &'static str> {
    let acc = ctx.access();
    let (loc, now) = (ctx.locs[0], ctx.now);
    let shard = ctx.locks.shard(loc.gid);
    // What `f` made of a value kept in the item: its new buffer and
    // whether the bytes changed (None: changed where it is).
    type Moved = Option<(Vec<u8>, bool)>;
    // `f` runs once: here for a live key, or below for a new one.
    let mut f = Some(f);
    let edited = shard.modify(key, loc.hash, now, acc, |e, edit| -> Result<(R, Moved), &'static str> {
        let Some(f) = f.take() else { unreachable!("modify runs its closure once") };
        string_of(e)?;
        let (r, changed, moved) = if let Some(Value::Str(sv)) = e.boxed_value_mut() {
            let (r, changed) = f(RawBytes::Buffer(sv.make_raw(), false))?;
            (r, changed, None)
        } else if let Some(b) = e.raw_inline_mut().filter(|b| in_item.is_some_and(|n| b.len() >= n)) {
            let (r, changed) = f(RawBytes::InItem(b))?;
            (r, changed, None)
        } else {
            let mut buf = string_of(e)?.to_vec();
            let (r, changed) = f(RawBytes::Buffer(&mut buf, false))?;
            return Ok((r, Some((buf, changed))));
        };
        if changed {
            edit.changed();
        }
        Ok((r, moved))
    });
    let Some((r, moved)) = edited.transpose()? else {
        // No such key (modify found none, and expired it if it was due).
        let Some(f) = f.take().filter(|_| create) else { return Ok(None) };
        let mut buf = Vec::new();
        let (r, _) = f(RawBytes::Buffer(&mut buf, true))?;
        if in_item.is_some() && !embeds(key.len(), buf.len()) {
            shard.set(key, loc.hash, NewValue::Bytes(&buf), None, now);
        } else {
            shard.set(key, loc.hash, Value::Str(StrValue::Raw(buf)), None, now);
        }
        return Ok(Some(r));
    };
    match moved {
        Some((buf, true)) => {
            shard.replace_value(key, loc.hash, Value::Str(StrValue::Raw(buf)), now);
        }
        Some((buf, false)) => {
            shard.restamp(key, loc.hash, Value::Str(StrValue::Raw(buf)), now);
        }
        None => {}
    }
    Ok(Some(r))
}

/// Replies as GET does for a looked-up key and counts the keyspace hit or
/// miss. Returns false when the key holds another type (WRONGTYPE sent).
fn reply_value(reply: &mut Reply<'_>, stats: &WorkerStats, e: Option<&Entry>) -> bool {
    let Some(e) = e else {
        stats.keyspace_misses.add(1);
        reply.null();
        return true;
    };
    stats.keyspace_hits.add(1);
    match string_of(e) {
        Ok(s) => {
            reply.str_value(s);
            true
        }
        Err(msg) => {
            reply.error(msg);
            false
        }
    }
}

// An option as C sees it: Redis compares options with `strcasecmp` and
// friends, so the text ends at the first NUL byte.
use crate::errors::c_str;

// SET / GETEX option flags, as Redis's OBJ_* flags.
const NX: u16 = 1 << 0;
const XX: u16 = 1 << 1;
const GET: u16 = 1 << 2;
const KEEPTTL: u16 = 1 << 3;
const PERSIST: u16 = 1 << 4;
const EX: u16 = 1 << 5;
const PX: u16 = 1 << 6;
const EXAT: u16 = 1 << 7;
const PXAT: u16 = 1 << 8;
const ANY_EXPIRE: u16 = EX | PX | EXAT | PXAT;
// Redis 8.4's conditions on the current value (SET, DELEX).
const IFEQ: u16 = 1 << 9;
const IFNE: u16 = 1 << 10;
const IFDEQ: u16 = 1 << 11;
const IFDNE: u16 = 1 << 12;
const ANY_IF: u16 = IFEQ | IFNE | IFDEQ | IFDNE;

struct ExtOpts<'a> {
    flags: u16,
    /// The EX/PX/EXAT/PXAT argument; its unit is `flags & ANY_EXPIRE`.
    expire: Option<&'a [u8]>,
    /// The IFEQ/IFNE/IFDEQ/IFDNE argument; its kind is `flags & ANY_IF`.
    cond: Option<&'a [u8]>,
}

/// Whose options [`parse_ext`] reads: each command takes a subset.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OptsOf {
    /// NX XX GET KEEPTTL, the expires and the IF* conditions.
    Set,
    /// PERSIST and the expires.
    Getex,
    /// NX XX KEEPTTL and the expires.
    Msetex,
}

/// The condition an IF* option names (as C compares it), or 0.
fn condition_kind(opt: &[u8]) -> u16 {
    let opt = c_str(opt);
    let is = |name: &[u8]| opt.eq_ignore_ascii_case(name);
    if is(b"ifeq") {
        IFEQ
    } else if is(b"ifne") {
        IFNE
    } else if is(b"ifdeq") {
        IFDEQ
    } else if is(b"ifdne") {
        IFDNE
    } else {
        0
    }
}

/// Parses SET's options (from argument 3), GETEX's (from argument 2) or
/// MSETEX's (after its pairs) with Redis's rules: an option may repeat
/// (the last expire or condition wins), two that conflict are a syntax
/// error. A condition may not follow NX or XX, though NX and XX may
/// follow a condition (Redis checks only the one side). None means
/// syntax error.
fn parse_ext(args: Args<'_>, from: usize, of: OptsOf) -> Option<ExtOpts<'_>> {
    let for_set = of != OptsOf::Getex;
    let mut flags = 0u16;
    let mut expire = None;
    let mut cond = None;
    let mut j = from;
    while j < args.len() {
        let opt = c_str(args.get(j));
        let is = |name: &[u8]| opt.eq_ignore_ascii_case(name);
        let kind = if of == OptsOf::Set { condition_kind(opt) } else { 0 };
        let unit = if is(b"ex") {
            EX
        } else if is(b"px") {
            PX
        } else if is(b"exat") {
            EXAT
        } else if is(b"pxat") {
            PXAT
        } else {
            0
        };
        if for_set && is(b"nx") && flags & XX == 0 {
            flags |= NX;
        } else if for_set && is(b"xx") && flags & NX == 0 {
            flags |= XX;
        } else if of == OptsOf::Set && is(b"get") {
            flags |= GET;
        } else if for_set && is(b"keepttl") && flags & (PERSIST | ANY_EXPIRE) == 0 {
            flags |= KEEPTTL;
        } else if !for_set && is(b"persist") && flags & (KEEPTTL | ANY_EXPIRE) == 0 {
            flags |= PERSIST;
        } else if unit != 0 && j + 1 < args.len() && flags & (KEEPTTL | PERSIST | (ANY_EXPIRE & !unit)) == 0 {
            flags |= unit;
            expire = Some(args.get(j + 1));
            j += 1;
        } else if kind != 0 && j + 1 < args.len() && flags & (NX | XX | (ANY_IF & !kind)) == 0 {
            flags |= kind;
            cond = Some(args.get(j + 1));
            j += 1;
        } else {
            return None;
        }
        j += 1;
    }
    Some(ExtOpts { flags, expire, cond })
}

/// A value's digest as DIGEST prints it and IFDEQ / IFDNE compare it:
/// XXH3-64 (seed 0) of its bytes, 16 lowercase hex digits.
fn digest_hex(s: StrRef<'_>) -> [u8; 16] {
    let h = s.with_bytes(xxhash_rust::xxh3::xxh3_64);
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = b"0123456789abcdef"[(h >> (60 - 4 * i)) as usize & 0xf];
    }
    out
}

/// Whether condition `kind` (IFEQ, IFNE, IFDEQ or IFDNE) with argument
/// `arg` holds for the current string (None: no key, where only the
/// negative conditions hold). A digest argument is checked for its length
/// only when there is a value to compare it with, as in Redis, and then
/// compared case-insensitively, whatever its characters are.
fn condition_holds(kind: u16, arg: &[u8], cur: Option<StrRef<'_>>) -> Result<bool, &'static str> {
    let Some(s) = cur else { return Ok(kind & (IFNE | IFDNE) != 0) };
    if kind & (IFEQ | IFNE) != 0 {
        let same = s.with_bytes(|b| b == arg);
        return Ok(same == (kind == IFEQ));
    }
    if arg.len() != 16 {
        return Err(errors::DIGEST_LENGTH);
    }
    Ok(digest_hex(s).eq_ignore_ascii_case(arg) == (kind == IFDEQ))
}

enum BadExpire {
    NotInteger,
    Invalid,
}

/// The absolute deadline in ms for an expire argument of `unit` (EX, PX,
/// EXAT or PXAT), as Redis's getExpireMillisecondsOrReply: it must be
/// positive and neither the unit conversion nor adding now may overflow.
fn deadline(now: u64, unit: u16, arg: &[u8]) -> Result<u64, BadExpire> {
    let n = parse_i64(arg).ok_or(BadExpire::NotInteger)?;
    let secs = unit & (EX | EXAT) != 0;
    if n <= 0 || (secs && n > i64::MAX / 1000) {
        return Err(BadExpire::Invalid);
    }
    let ms = if secs { n * 1000 } else { n };
    let ms = if unit & (EX | PX) != 0 { ms.checked_add(now as i64).ok_or(BadExpire::Invalid)? } else { ms };
    Ok(ms as u64)
}

fn reply_bad_expire(ctx: &mut Ctx<'_, '_>, err: BadExpire) {
    match err {
        BadExpire::NotInteger => ctx.reply.error(errors::NOT_INTEGER),
        BadExpire::Invalid => {
            let msg = errors::invalid_expire(&ctx.cmd.fullname);
            ctx.reply.error(&msg);
        }
    }
}

fn get(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let loc = ctx.locs[0];
    let e = ctx.locks.shard(loc.gid).lookup(args.get(1), loc.hash, ctx.now, acc);
    reply_value(&mut ctx.reply, ctx.stats, e);
}

/// How a set that happened, or that NX/XX refused, is answered: SET's
/// `+OK` / null, or SETNX's 1 / 0.
#[derive(Clone, Copy)]
enum SetReply {
    Ok,
    Int,
}

fn set(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(opts) = parse_ext(args, 3, OptsOf::Set) else {
        ctx.reply.error(errors::SYNTAX);
        return;
    };
    let when = match opts.expire {
        None => None,
        Some(arg) => match deadline(ctx.now, opts.flags & ANY_EXPIRE, arg) {
            Ok(w) => Some(w),
            Err(e) => return reply_bad_expire(ctx, e),
        },
    };
    if let Some(item) = ctx.client.mc_item.take() {
        return set_item(ctx, args.get(1), args.get(2), item, opts.flags & KEEPTTL != 0, when);
    }
    set_generic(ctx, args.get(1), args.get(2), opts.flags, opts.cond, when, SetReply::Ok);
}

/// The memcached item a Tern master's stream or a Tern AOF announced
/// before this SET (`Client::mc_item`), stored whole: flags, CAS and state
/// as the writer had them.
fn set_item(ctx: &mut Ctx<'_, '_>, key: &[u8], val: &[u8], (flags, cas, state): (u32, u64, u8), keep_ttl: bool, when: Option<u64>) {
    let loc = ctx.locs[0];
    let shard = ctx.locks.shard(loc.gid);
    let ttl = if keep_ttl { shard.peek(key, loc.hash, ctx.now).and_then(|e| e.expire()) } else { when };
    shard.set(key, loc.hash, NewValue::Mc { data: val, flags, cas, state }, ttl, ctx.now);
    ctx.reply.ok();
}

/// Redis's setGenericCommand, the core of SET, SETNX, SETEX and PSETEX. A
/// deadline in the past is stored as is: the key is set and at once gone.
/// Checks in Redis's order: GET's reply (or WRONGTYPE), NX/XX, then the
/// condition (WRONGTYPE or a bad digest after GET's reply is a second
/// reply, as in Redis).
fn set_generic(ctx: &mut Ctx<'_, '_>, key: &[u8], val: &[u8], flags: u16, cond: Option<&[u8]>, when: Option<u64>, answer: SetReply) {
    let acc = ctx.access();
    let share = ctx.reply.share_min();
    let loc = ctx.locs[0];
    let shard = ctx.locks.shard(loc.gid);
    if flags & (NX | XX | GET | KEEPTTL | ANY_IF) != 0 {
        let existing = shard.lookup(key, loc.hash, ctx.now, acc);
        if flags & GET != 0 && !reply_value(&mut ctx.reply, ctx.stats, existing) {
            return;
        }
        let (found, old_ttl) = existing.map_or((false, None), |e| (true, e.expire()));
        let mut refused = (flags & NX != 0 && found) || (flags & XX != 0 && !found);
        if !refused && flags & ANY_IF != 0 {
            let cur = match existing.map(string_of).transpose() {
                Ok(cur) => cur,
                Err(msg) => return ctx.reply.error(msg),
            };
            match condition_holds(flags & ANY_IF, cond.unwrap_or_default(), cur) {
                Ok(holds) => refused = !holds,
                Err(msg) => return ctx.reply.error(msg),
            }
        }
        if refused {
            if flags & GET == 0 {
                match answer {
                    SetReply::Ok => ctx.reply.null(),
                    SetReply::Int => ctx.reply.int(0),
                }
            }
            return;
        }
        let ttl = if when.is_some() || flags & KEEPTTL == 0 { when } else { old_ttl };
        shard.set(key, loc.hash, string_value_sharing(val, share), ttl, ctx.now);
    } else {
        shard.set(key, loc.hash, string_value_sharing(val, share), when, ctx.now);
    }
    // Redis tells of the deadline a SET gave (not one KEEPTTL kept).
    if when.is_some() {
        shard.note_event(key, ev::EXPIRE);
    }
    if flags & GET == 0 {
        match answer {
            SetReply::Ok => ctx.reply.ok(),
            SetReply::Int => ctx.reply.int(1),
        }
    }
}

fn setnx(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    set_generic(ctx, args.get(1), args.get(2), NX, None, None, SetReply::Int);
}

fn setex(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    setex_generic(ctx, args, EX);
}

fn psetex(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    setex_generic(ctx, args, PX);
}

fn setex_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, unit: u16) {
    match deadline(ctx.now, unit, args.get(2)) {
        Ok(w) => set_generic(ctx, args.get(1), args.get(3), 0, None, Some(w), SetReply::Ok),
        Err(e) => reply_bad_expire(ctx, e),
    }
}

fn getset(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let loc = ctx.locs[0];
    let key = args.get(1);
    let shard = ctx.locks.shard(loc.gid);
    let old = shard.lookup(key, loc.hash, ctx.now, acc);
    if !reply_value(&mut ctx.reply, ctx.stats, old) {
        return;
    }
    shard.set(key, loc.hash, string_value_sharing(args.get(2), ctx.reply.share_min()), None, ctx.now);
}

fn getdel(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let loc = ctx.locs[0];
    let key = args.get(1);
    let shard = ctx.locks.shard(loc.gid);
    let e = shard.lookup(key, loc.hash, ctx.now, acc);
    let found = e.is_some();
    if !reply_value(&mut ctx.reply, ctx.stats, e) {
        return;
    }
    if !found {
        // Redis reads the key first: a miss is a `keymiss`.
        shard.note_event(key, ev::KEYMISS);
        return;
    }
    shard.remove(key, loc.hash, ctx.now);
}

/// GETEX checks, in Redis's order: syntax, then the key (a missing key is
/// a null reply even with a bad expire), its type, the expire value.
fn getex(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let Some(opts) = parse_ext(args, 2, OptsOf::Getex) else {
        ctx.reply.error(errors::SYNTAX);
        return;
    };
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let when = opts.expire.map(|arg| deadline(now, opts.flags & ANY_EXPIRE, arg));
    let shard = ctx.locks.shard(loc.gid);
    let Some(e) = shard.lookup(key, loc.hash, now, acc) else {
        // Redis reads the key first: a miss is a `keymiss`.
        ctx.missed(loc, key);
        ctx.reply.null();
        return;
    };
    ctx.stats.keyspace_hits.add(1);
    let s = match string_of(e) {
        Ok(s) => s,
        Err(msg) => return ctx.reply.error(msg),
    };
    let when = match when {
        None => None,
        Some(Ok(w)) => Some(w),
        Some(Err(err)) => return reply_bad_expire(ctx, err),
    };
    ctx.reply.str_value(s);
    let had_ttl = e.expire().is_some();
    match when {
        // An absolute time already past deletes the key, as Redis does.
        Some(w) if opts.flags & (EXAT | PXAT) != 0 && w <= now => {
            shard.remove(key, loc.hash, now);
        }
        Some(w) => {
            shard.set_expire(key, loc.hash, Some(w));
        }
        None if opts.flags & PERSIST != 0 && had_ttl => {
            notify::write_as(ev::PERSIST);
            shard.set_expire(key, loc.hash, None);
        }
        None => {}
    }
}

/// MGET. Keys run in groups of `prefetch-batch-max-size`: each group's
/// buckets and items are asked for before the first of them is read.
fn mget(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let n = args.len() - 1;
    ctx.reply.array(n);
    let mut st = ctx.stager();
    for i in 0..n {
        ctx.stage(&mut st, args, i);
        let loc = ctx.locs[i];
        match ctx.locks.shard(loc.gid).lookup(args.get(i + 1), loc.hash, ctx.now, acc) {
            Some(e) => {
                ctx.stats.keyspace_hits.add(1);
                // MGET answers null for a key of another type, not an error.
                match string_of(e) {
                    Ok(s) => ctx.reply.str_value(s),
                    Err(_) => ctx.reply.null(),
                }
            }
            None => {
                ctx.stats.keyspace_misses.add(1);
                ctx.reply.null();
            }
        }
    }
}

fn mset(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    mset_generic(ctx, args, false);
}

fn msetnx(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    mset_generic(ctx, args, true);
}

/// MSET and MSETNX. Every key's shard is locked for the whole command, so
/// other clients see all of the keys set or none; within that, keys run in
/// prefetched groups as in MGET.
fn mset_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, nx: bool) {
    let acc = ctx.access();
    // Each key needs its value: name + pairs is an odd count.
    if args.len() & 1 == 0 {
        ctx.arity_error();
        return;
    }
    let n = (args.len() - 1) / 2;
    if nx {
        let mut st = ctx.stager();
        for i in 0..n {
            ctx.stage(&mut st, args, i);
            let loc = ctx.locs[i];
            if ctx.locks.shard(loc.gid).lookup(args.get(1 + 2 * i), loc.hash, ctx.now, acc).is_some() {
                ctx.reply.int(0);
                return;
            }
        }
    }
    let mut st = ctx.stager();
    for i in 0..n {
        ctx.stage(&mut st, args, i);
        let loc = ctx.locs[i];
        let (key, val) = (args.get(1 + 2 * i), args.get(2 + 2 * i));
        ctx.locks.shard(loc.gid).set(key, loc.hash, string_value_sharing(val, ctx.reply.share_min()), None, ctx.now);
    }
    if nx {
        ctx.reply.int(1);
    } else {
        ctx.reply.ok();
    }
}

/// MSETEX numkeys key value [key value ...] [NX | XX] [EX | PX | EXAT |
/// PXAT | KEEPTTL]: MSET with MSETNX's all-or-nothing condition (either
/// way round) and one expiry for every key. Checked in Redis's order: the
/// count, the pairs, the options' syntax, the expire value, the keys.
fn msetex(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(n) = parse_i64(args.get(1)).filter(|n| (1..=i64::from(i32::MAX)).contains(n)) else {
        return ctx.reply.error(errors::INVALID_NUMKEYS);
    };
    let n = n as usize;
    // The key spec located every key exactly when the pairs fit.
    if n * 2 > args.len() - 2 || ctx.locs.len() != n {
        return ctx.reply.error(errors::KEY_VALUE_PAIRS);
    }
    let Some(opts) = parse_ext(args, 2 + 2 * n, OptsOf::Msetex) else {
        return ctx.reply.error(errors::SYNTAX);
    };
    let when = match opts.expire {
        None => None,
        Some(arg) => match deadline(ctx.now, opts.flags & ANY_EXPIRE, arg) {
            Ok(w) => Some(w),
            Err(e) => return reply_bad_expire(ctx, e),
        },
    };
    let (key, val) = (|i: usize| args.get(2 + 2 * i), |i: usize| args.get(3 + 2 * i));
    if opts.flags & (NX | XX) != 0 {
        let want = opts.flags & XX != 0;
        for i in 0..n {
            let loc = ctx.locs[i];
            if ctx.locks.shard(loc.gid).get(key(i), loc.hash, ctx.now).is_some() != want {
                return ctx.reply.int(0);
            }
        }
    }
    for i in 0..n {
        let loc = ctx.locs[i];
        let shard = ctx.locks.shard(loc.gid);
        let ttl = if opts.flags & KEEPTTL != 0 { shard.get(key(i), loc.hash, ctx.now).and_then(|e| e.expire()) } else { when };
        shard.set(key(i), loc.hash, string_value_sharing(val(i), ctx.reply.share_min()), ttl, ctx.now);
    }
    ctx.reply.int(1);
}

/// DIGEST: the XXH3 digest of a string value, or null without one.
fn digest(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let loc = ctx.locs[0];
    let Some(e) = ctx.locks.shard(loc.gid).lookup(args.get(1), loc.hash, ctx.now, acc) else {
        ctx.stats.keyspace_misses.add(1);
        return ctx.reply.null();
    };
    ctx.stats.keyspace_hits.add(1);
    match string_of(e) {
        Ok(s) => ctx.reply.bulk(&digest_hex(s)),
        Err(msg) => ctx.reply.error(msg),
    }
}

/// DELEX key [IFEQ v | IFNE v | IFDEQ d | IFDNE d]: DEL of one key of any
/// type, or, with a condition, of a string for which it holds. Redis
/// checks the key before the condition's name: a missing key is 0 and a
/// key of another type an error, whatever the condition says.
fn delex(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() != 2 && args.len() != 4 {
        return ctx.arity_error();
    }
    let (loc, key) = (ctx.locs[0], args.get(1));
    let shard = ctx.locks.shard(loc.gid);
    let Some(e) = shard.get(key, loc.hash, ctx.now) else {
        return ctx.reply.int(0);
    };
    if args.len() == 4 {
        let Ok(s) = string_of(e) else {
            return ctx.reply.error(errors::DELEX_NOT_STRING);
        };
        let kind = condition_kind(args.get(2));
        if kind == 0 {
            return ctx.reply.error(errors::DELEX_CONDITION);
        }
        match condition_holds(kind, args.get(3), Some(s)) {
            Ok(true) => {}
            Ok(false) => return ctx.reply.int(0),
            Err(msg) => return ctx.reply.error(msg),
        }
    }
    shard.remove(key, loc.hash, ctx.now);
    ctx.reply.int(1);
}

/// Redis's checkStringLength: would `cur + add` bytes pass proto-max-bulk-len?
fn too_long(ctx: &Ctx<'_, '_>, cur: usize, add: usize) -> bool {
    (cur as u64).saturating_add(add as u64) > ctx.srv.settings.proto_max_bulk_len()
}

fn append(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let (loc, key, add) = (ctx.locs[0], args.get(1), args.get(2));
    // The length check needs the current length, so it is done with the
    // entry found; the limit is read before the shard is borrowed.
    let max = ctx.srv.settings.proto_max_bulk_len();
    let share = ctx.reply.share_min();
    let shard = ctx.locks.shard(loc.gid);
    let edited = shard.modify(key, loc.hash, ctx.now, acc, |e, edit| {
        let cur = string_of(e)?.len();
        if (cur as u64).saturating_add(add.len() as u64) > max {
            return Err(errors::STRING_TOO_LONG);
        }
        if let Some(Value::Str(sv)) = e.boxed_value_mut() {
            // Already a buffer apart from the item: grows in place.
            sv.make_raw().extend_from_slice(add);
            edit.changed();
            return Ok((cur + add.len(), None));
        }
        // Kept in the item: moves to a growable `raw` buffer, as Redis
        // turns an embstr into raw, so further appends are amortised
        // instead of reallocating the item each time.
        let mut buf = Vec::with_capacity(cur + add.len());
        string_of(e).map(|s| s.with_bytes(|b| buf.extend_from_slice(b))).ok();
        buf.extend_from_slice(add);
        Ok((cur + add.len(), Some(buf)))
    });
    let total = match edited {
        None => {
            shard.set(key, loc.hash, string_value_sharing(add, share), None, ctx.now);
            add.len()
        }
        Some(Err(msg)) => return ctx.reply.error(msg),
        Some(Ok((total, moved))) => {
            if let Some(buf) = moved {
                shard.replace_value(key, loc.hash, Value::Str(StrValue::Raw(buf)), ctx.now);
            }
            total
        }
    };
    ctx.reply.int(total as i64);
}

fn strlen(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let loc = ctx.locs[0];
    match ctx.locks.shard(loc.gid).lookup(args.get(1), loc.hash, ctx.now, acc) {
        None => {
            ctx.stats.keyspace_misses.add(1);
            ctx.reply.int(0);
        }
        Some(e) => {
            ctx.stats.keyspace_hits.add(1);
            match string_of(e) {
                Ok(s) => ctx.reply.int(s.len() as i64),
                Err(msg) => ctx.reply.error(msg),
            }
        }
    }
}

/// The byte range GETRANGE returns from a string of `len` bytes, or None
/// for an empty reply. Redis 7.4 semantics, including its quirk that an
/// `end` before the start of the string clamps to 0 (so `0 -100` gives the
/// first byte).
fn range_of(len: usize, start: i64, end: i64) -> Option<std::ops::Range<usize>> {
    if start < 0 && end < 0 && start > end {
        return None;
    }
    let len = len as i64;
    let mut start = if start < 0 { len + start } else { start };
    let mut end = if end < 0 { len + end } else { end };
    start = start.max(0);
    end = end.max(0);
    if end >= len {
        end = len - 1;
    }
    if start > end || len == 0 {
        return None;
    }
    Some(start as usize..end as usize + 1)
}

/// GETRANGE and SUBSTR.
fn getrange(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let (Some(start), Some(end)) = (parse_i64(args.get(2)), parse_i64(args.get(3))) else {
        ctx.reply.error(errors::NOT_INTEGER);
        return;
    };
    let loc = ctx.locs[0];
    match ctx.locks.shard(loc.gid).lookup(args.get(1), loc.hash, ctx.now, acc) {
        None => {
            ctx.stats.keyspace_misses.add(1);
            ctx.reply.bulk(b"");
        }
        Some(e) => {
            ctx.stats.keyspace_hits.add(1);
            match string_of(e) {
                Ok(s) => match range_of(s.len(), start, end) {
                    Some(r) => ctx.reply.str_range(s, r),
                    None => ctx.reply.bulk(b""),
                },
                Err(msg) => ctx.reply.error(msg),
            }
        }
    }
}

fn setrange(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let Some(offset) = parse_i64(args.get(2)) else {
        ctx.reply.error(errors::NOT_INTEGER);
        return;
    };
    if offset < 0 {
        ctx.reply.error(errors::OFFSET_OUT_OF_RANGE);
        return;
    }
    let (loc, key, value) = (ctx.locs[0], args.get(1), args.get(3));
    let over = too_long(ctx, offset as usize, value.len());
    let offset = offset as usize;
    let end = offset + value.len();
    let shard = ctx.locks.shard(loc.gid);
    let write = |buf: &mut Vec<u8>| -> bool {
        if buf.len() < end {
            if buf.try_reserve(end - buf.len()).is_err() {
                return false;
            }
            buf.resize(end, 0);
        }
        buf[offset..end].copy_from_slice(value);
        true
    };
    let edited = shard.modify(key, loc.hash, ctx.now, acc, |e, edit| {
        let cur = string_of(e)?.len();
        if value.is_empty() {
            return Ok((cur, None));
        }
        if over {
            return Err(errors::STRING_TOO_LONG);
        }
        if let Some(Value::Str(sv)) = e.boxed_value_mut() {
            let ok = write(sv.make_raw());
            if ok {
                edit.changed();
            }
            return if ok { Ok((cur.max(end), None)) } else { Err(errors::STRING_TOO_LONG) };
        }
        // Kept in the item: changed in a `raw` buffer of its own.
        let mut buf = Vec::new();
        string_of(e).map(|s| s.with_bytes(|b| buf.extend_from_slice(b))).ok();
        if !write(&mut buf) {
            return Err(errors::STRING_TOO_LONG);
        }
        Ok((cur.max(end), Some(buf)))
    });
    let total = match edited {
        Some(Err(msg)) => return ctx.reply.error(msg),
        Some(Ok((total, moved))) => {
            if let Some(buf) = moved {
                shard.replace_value(key, loc.hash, Value::Str(StrValue::Raw(buf)), ctx.now);
            }
            total
        }
        None => {
            if value.is_empty() {
                return ctx.reply.int(0);
            }
            if over {
                return ctx.reply.error(errors::STRING_TOO_LONG);
            }
            let mut buf = Vec::new();
            if buf.try_reserve_exact(end).is_err() {
                return ctx.reply.error(errors::STRING_TOO_LONG);
            }
            buf.resize(offset, 0);
            buf.extend_from_slice(value);
            shard.set(key, loc.hash, Value::Str(StrValue::Raw(buf)), None, ctx.now);
            end
        }
    };
    ctx.reply.int(total as i64);
}

fn incr(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    incr_by(ctx, args, 1);
}

fn decr(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    incr_by(ctx, args, -1);
}

fn incrby(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    match parse_i64(args.get(2)) {
        Some(by) => incr_by(ctx, args, by),
        None => ctx.reply.error(errors::NOT_INTEGER),
    }
}

fn decrby(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    match parse_i64(args.get(2)) {
        Some(i64::MIN) => ctx.reply.error(errors::DECREMENT_OVERFLOW),
        Some(by) => incr_by(ctx, args, -by),
        None => ctx.reply.error(errors::NOT_INTEGER),
    }
}

/// INCR, DECR, INCRBY, DECRBY: the result is stored as `int`, keeping the
/// key's TTL.
fn incr_by(ctx: &mut Ctx<'_, '_>, args: Args<'_>, by: i64) {
    let acc = ctx.access();
    let (loc, key) = (ctx.locs[0], args.get(1));
    let shard = ctx.locks.shard(loc.gid);
    let edited = shard.modify(key, loc.hash, ctx.now, acc, |e, edit| -> Result<(i64, bool), &'static str> {
        let cur = match string_of(e)? {
            StrRef::Int(n) => Some(n),
            other => other.with_bytes(parse_i64),
        };
        let v = cur.ok_or(errors::NOT_INTEGER)?.checked_add(by).ok_or(errors::OVERFLOW)?;
        // An integer in the item is overwritten in place; anything else
        // becomes one, keeping the TTL.
        let in_place = e.set_int(v);
        if in_place {
            edit.changed();
        }
        Ok((v, in_place))
    });
    let v = match edited {
        None => {
            shard.set(key, loc.hash, NewValue::Int(by), None, ctx.now);
            by
        }
        Some(Err(msg)) => return ctx.reply.error(msg),
        Some(Ok((v, in_place))) => {
            if !in_place {
                shard.replace_value(key, loc.hash, NewValue::Int(v), ctx.now);
            }
            v
        }
    };
    ctx.reply.int(v);
}

/// INCRBYFLOAT computes in x87 long double as Redis does (see [`ldouble`])
/// and stores the text it replies (never `int`), keeping the TTL.
fn incrbyfloat(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let (loc, key) = (ctx.locs[0], args.get(1));
    let mut text = Vec::new();
    let shard = ctx.locks.shard(loc.gid);
    match shard.lookup(key, loc.hash, ctx.now, acc) {
        None => {
            let Some(sum) = LongDouble::parse(args.get(2)).map(|by| LongDouble::from_i64(0).checked_add(by)) else {
                return ctx.reply.error(errors::NOT_FLOAT);
            };
            let Some(sum) = sum else {
                return ctx.reply.error(errors::INCR_NAN_OR_INFINITY);
            };
            sum.write_human(&mut text);
            shard.set(key, loc.hash, NewValue::Bytes(&text), None, ctx.now);
        }
        Some(e) => {
            let cur = match string_of(e) {
                Ok(StrRef::Int(n)) => Some(LongDouble::from_i64(n)),
                Ok(other) => other.with_bytes(LongDouble::parse),
                Err(msg) => return ctx.reply.error(msg),
            };
            let (Some(cur), Some(by)) = (cur, LongDouble::parse(args.get(2))) else {
                return ctx.reply.error(errors::NOT_FLOAT);
            };
            let Some(sum) = cur.checked_add(by) else {
                return ctx.reply.error(errors::INCR_NAN_OR_INFINITY);
            };
            sum.write_human(&mut text);
            shard.replace_value(key, loc.hash, NewValue::Bytes(&text), ctx.now);
        }
    }
    ctx.reply.bulk(&text);
}

/// One IDX match: ranges in the first and second string, inclusive.
struct LcsMatch {
    a: (u32, u32),
    b: (u32, u32),
}

/// LCS with Redis's dynamic-programming table and its walk back from the
/// end, so ties pick the same subsequence and matches come out in the
/// same (reverse) order.
fn lcs(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let mut strs: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    let mut wrong_type = false;
    for (i, out) in strs.iter_mut().enumerate() {
        let loc = ctx.locs[i];
        match ctx.locks.shard(loc.gid).lookup(args.get(1 + i), loc.hash, ctx.now, acc) {
            None => ctx.stats.keyspace_misses.add(1),
            Some(e) => {
                ctx.stats.keyspace_hits.add(1);
                match string_of(e) {
                    Ok(s) => *out = s.to_vec(),
                    Err(_) => wrong_type = true,
                }
            }
        }
    }
    if wrong_type {
        ctx.reply.error(errors::LCS_NOT_STRINGS);
        return;
    }
    let (mut getidx, mut getlen, mut withmatchlen, mut minmatchlen) = (false, false, false, 0u64);
    let mut j = 3;
    while j < args.len() {
        let opt = c_str(args.get(j));
        if opt.eq_ignore_ascii_case(b"idx") {
            getidx = true;
        } else if opt.eq_ignore_ascii_case(b"len") {
            getlen = true;
        } else if opt.eq_ignore_ascii_case(b"withmatchlen") {
            withmatchlen = true;
        } else if opt.eq_ignore_ascii_case(b"minmatchlen") && j + 1 < args.len() {
            let Some(n) = parse_i64(args.get(j + 1)) else {
                ctx.reply.error(errors::NOT_INTEGER);
                return;
            };
            minmatchlen = n.max(0) as u64;
            j += 1;
        } else {
            ctx.reply.error(errors::SYNTAX);
            return;
        }
        j += 1;
    }
    if getidx && getlen {
        ctx.reply.error(errors::LCS_IDX_AND_LEN);
        return;
    }
    let [a, b] = &strs;
    let (alen, blen) = (a.len(), b.len());
    // Redis refuses strings whose lengths would not fit its u32 table cells.
    if alen as u64 >= u64::from(u32::MAX) - 1 || blen as u64 >= u64::from(u32::MAX) - 1 {
        ctx.reply.error(errors::LCS_TOO_LONG);
        return;
    }
    let cells = (alen as u64 + 1) * (blen as u64 + 1);
    let bytes = cells.saturating_mul(4);
    if bytes > ctx.srv.settings.proto_max_bulk_len() {
        ctx.reply.error(errors::LCS_OVER_LIMIT);
        return;
    }
    let mut table: Vec<u32> = Vec::new();
    if table.try_reserve_exact(cells as usize).is_err() {
        ctx.reply.error(errors::LCS_ALLOC_FAILED);
        return;
    }
    table.resize(cells as usize, 0);
    let w = blen + 1;
    for i in 1..=alen {
        for j in 1..=blen {
            table[i * w + j] = if a[i - 1] == b[j - 1] {
                table[(i - 1) * w + j - 1] + 1
            } else {
                table[(i - 1) * w + j].max(table[i * w + j - 1])
            };
        }
    }
    let total = table[alen * w + blen];
    if getlen {
        ctx.reply.int(i64::from(total));
        return;
    }

    let mut result = vec![0u8; total as usize];
    let mut matches: Vec<LcsMatch> = Vec::new();
    // `None` = no range open; else (a_start, a_end, b_start, b_end).
    let mut open: Option<(usize, usize, usize, usize)> = None;
    let (mut i, mut j, mut idx) = (alen, blen, total as usize);
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            result[idx - 1] = a[i - 1];
            match &mut open {
                None => open = Some((i - 1, i - 1, j - 1, j - 1)),
                Some(r) => {
                    if r.0 == i && r.2 == j {
                        r.0 -= 1;
                        r.2 -= 1;
                    } else {
                        emit = true;
                    }
                }
            }
            if let Some(r) = open {
                if r.0 == 0 || r.2 == 0 {
                    emit = true;
                }
            }
            idx -= 1;
            i -= 1;
            j -= 1;
        } else {
            if table[(i - 1) * w + j] > table[i * w + j - 1] {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = open.is_some();
        }
        if emit {
            if let Some(r) = open.take() {
                let len = (r.1 - r.0 + 1) as u64;
                if minmatchlen == 0 || len >= minmatchlen {
                    matches.push(LcsMatch { a: (r.0 as u32, r.1 as u32), b: (r.2 as u32, r.3 as u32) });
                }
            }
        }
    }
    if !getidx {
        ctx.reply.bulk(&result);
        return;
    }
    let reply = &mut ctx.reply;
    reply.map(2);
    reply.bulk(b"matches");
    reply.array(matches.len());
    for m in &matches {
        reply.array(if withmatchlen { 3 } else { 2 });
        reply.array(2);
        reply.int(i64::from(m.a.0));
        reply.int(i64::from(m.a.1));
        reply.array(2);
        reply.int(i64::from(m.b.0));
        reply.int(i64::from(m.b.1));
        if withmatchlen {
            reply.int(i64::from(m.a.1 - m.a.0 + 1));
        }
    }
    reply.bulk(b"len");
    reply.int(i64::from(total));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn getrange_bounds_match_redis() {
        assert_eq!(range_of(10, 0, -100), Some(0..1));
        assert_eq!(range_of(10, -100, -99), Some(0..1));
        assert_eq!(range_of(10, 1, -100), None);
        assert_eq!(range_of(10, -1, -100), None);
        assert_eq!(range_of(10, 0, -1), Some(0..10));
        assert_eq!(range_of(10, 5, 100), Some(5..10));
        assert_eq!(range_of(0, 0, -1), None);
        assert_eq!(range_of(10, i64::MIN, i64::MAX), Some(0..10));
    }

    #[test]
    fn digests_and_conditions_match_redis() {
        // Values read from Redis 8.4's DIGEST.
        assert_eq!(&digest_hex(StrRef::Whole(b"hello")), b"9555e8555c62dcfd");
        assert_eq!(&digest_hex(StrRef::Whole(b"")), b"2d06800538d394c2");
        assert_eq!(&digest_hex(StrRef::Int(12345)), b"f34099ede96b5581");
        let v = Some(StrRef::Whole(b"hello"));
        assert_eq!(condition_holds(IFEQ, b"hello", v), Ok(true));
        assert_eq!(condition_holds(IFNE, b"hello", v), Ok(false));
        assert_eq!(condition_holds(IFDEQ, b"9555E8555C62DCFD", v), Ok(true));
        assert_eq!(condition_holds(IFDNE, b"9555e8555c62dcfg", v), Ok(true));
        assert_eq!(condition_holds(IFDEQ, b"abc", v), Err(errors::DIGEST_LENGTH));
        // No key: only the negative conditions hold, and nothing is checked.
        assert_eq!(condition_holds(IFDEQ, b"abc", None), Ok(false));
        assert_eq!(condition_holds(IFDNE, b"abc", None), Ok(true));
        assert_eq!(condition_holds(IFEQ, b"", None), Ok(false));
        assert_eq!(condition_holds(IFNE, b"", None), Ok(true));
    }

    #[test]
    fn expire_deadlines() {
        assert!(matches!(deadline(1000, EX, b"1"), Ok(2000)));
        assert!(matches!(deadline(1000, PXAT, b"5"), Ok(5)));
        assert!(matches!(deadline(1000, EX, b"0"), Err(BadExpire::Invalid)));
        assert!(matches!(deadline(1000, EXAT, b"9223372036854776"), Err(BadExpire::Invalid)));
        assert!(matches!(deadline(1000, PX, b"9223372036854775807"), Err(BadExpire::Invalid)));
        assert!(matches!(deadline(1000, PX, b"1.5"), Err(BadExpire::NotInteger)));
    }
}
