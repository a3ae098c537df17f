//! Redis's conversions between its replies and Lua values, both ways.
//!
//! A command run by `redis.call` writes its reply as it would to a client
//! (in the protocol the script chose with `redis.setresp`), and
//! [`reply_to_lua`] reads those bytes back as Lua values, as Redis's
//! `redisProtocolToLuaType` does. A script's result goes the other way in
//! [`lua_to_reply`] (Redis's `luaReplyToRedisReply`).

use tern_lua::mlua::{self, Lua, Table, Value};

use crate::cmd::Reply;

/// How deep a returned table may nest before the reply says so. Redis's
/// conversion takes a slot of Lua's C stack (8000) per level and stops
/// at 7995 levels; here each level holds an mlua handle, of which there
/// are as many, so the reply stops a little earlier, with room left.
const MAX_DEPTH: usize = 7900;

/// The error Redis writes where a returned table nests too deep (or
/// refers to itself).
const STACK_LIMIT: &str = "reached lua stack limit";

/// Reads one reply from `b` at `*at` into a Lua value:
///
/// | reply | Lua |
/// |---|---|
/// | integer | number |
/// | bulk string | string; a null bulk or null array: false |
/// | simple string | `{ok=...}` |
/// | error | `{err=...}` |
/// | array | array table |
/// | RESP3 map / set | `{map={k=v}}` / `{set={m=true}}` |
/// | RESP3 null / boolean | nil / boolean |
/// | RESP3 double / big number | `{double=n}` / `{big_number="..."}` |
/// | RESP3 verbatim string | `{verbatim_string={format=..., string=...}}` |
///
/// Attributes are read and dropped. The bytes are the server's own output,
/// so malformed input is not expected: it reads as nil.
pub fn reply_to_lua(lua: &Lua, b: &[u8], at: &mut usize) -> mlua::Result<Value> {
    let Some(&kind) = b.get(*at) else { return Ok(Value::Nil) };
    let line = line(b, *at + 1);
    let text = &b[(*at + 1).min(b.len())..line];
    *at = line + 2;
    let single = |lua: &Lua, key: &str, v: Value| -> mlua::Result<Value> {
        let t = lua.create_table()?;
        t.raw_set(key, v)?;
        Ok(Value::Table(t))
    };
    Ok(match kind {
        b':' => Value::Number(parse_i64(text) as f64),
        b'$' | b'=' => match parse_len(text) {
            None => Value::Boolean(false),
            Some(n) => {
                let body = &b[*at..(*at + n).min(b.len())];
                *at += n + 2;
                if kind == b'=' && body.len() >= 4 {
                    let v = lua.create_table()?;
                    v.raw_set("format", lua.create_string(&body[..3])?)?;
                    v.raw_set("string", lua.create_string(&body[4..])?)?;
                    single(lua, "verbatim_string", Value::Table(v))?
                } else {
                    Value::String(lua.create_string(body)?)
                }
            }
        },
        b'+' => single(lua, "ok", Value::String(lua.create_string(text)?))?,
        b'-' => single(lua, "err", Value::String(lua.create_string(text)?))?,
        b'*' | b'~' | b'>' => match parse_len(text) {
            None => Value::Boolean(false),
            Some(n) => {
                let t = lua.create_table_with_capacity(n.min(1 << 16), 0)?;
                for i in 0..n {
                    let v = reply_to_lua(lua, b, at)?;
                    if kind == b'~' {
                        t.raw_set(v, true)?;
                    } else {
                        t.raw_set(i + 1, v)?;
                    }
                }
                if kind == b'~' {
                    single(lua, "set", Value::Table(t))?
                } else {
                    Value::Table(t)
                }
            }
        },
        b'%' | b'|' => {
            let n = parse_len(text).unwrap_or(0);
            let t = lua.create_table()?;
            for _ in 0..n {
                let k = reply_to_lua(lua, b, at)?;
                let v = reply_to_lua(lua, b, at)?;
                t.raw_set(k, v)?;
            }
            if kind == b'|' {
                // An attribute decorates the reply after it.
                return reply_to_lua(lua, b, at);
            }
            single(lua, "map", Value::Table(t))?
        }
        b'_' => Value::Nil,
        b'#' => Value::Boolean(text == b"t"),
        b',' => {
            let d = std::str::from_utf8(text).ok().and_then(parse_double).unwrap_or(0.0);
            single(lua, "double", Value::Number(d))?
        }
        b'(' => single(lua, "big_number", Value::String(lua.create_string(text)?))?,
        _ => Value::Nil,
    })
}

/// Where the line starting at `from` ends (its `\r`).
fn line(b: &[u8], from: usize) -> usize {
    memchr_cr(&b[from.min(b.len())..]).map_or(b.len(), |i| from + i)
}

fn memchr_cr(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\r')
}

fn parse_i64(t: &[u8]) -> i64 {
    std::str::from_utf8(t).ok().and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// A length, or None for -1 (null).
fn parse_len(t: &[u8]) -> Option<usize> {
    let n = parse_i64(t);
    usize::try_from(n).ok()
}

fn parse_double(s: &str) -> Option<f64> {
    match s {
        "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" => Some(f64::NAN),
        _ => s.parse().ok(),
    }
}

/// Writes a script's result to `reply` (in the caller's protocol), as
/// Redis does: strings as bulk strings, numbers truncated to integers,
/// true as 1 and false as null (as RESP3 booleans once the script chose
/// RESP3 with `redis.setresp(3)`), `{err=...}` as an error, `{ok=...}` as
/// a status, `{double=...}`, `{big_number=...}`, `{verbatim_string=...}`,
/// `{map=...}` and `{set=...}` as those types, any other table as an array
/// up to its first nil, and anything else as null.
pub fn lua_to_reply(reply: &mut Reply<'_>, v: &Value, script_resp3: bool) -> mlua::Result<()> {
    write_value(reply, v, script_resp3, 0)
}

fn write_value(reply: &mut Reply<'_>, v: &Value, script_resp3: bool, depth: usize) -> mlua::Result<()> {
    if depth > MAX_DEPTH {
        reply.error(errors_line(STACK_LIMIT));
        return Ok(());
    }
    match v {
        Value::String(s) => reply.bulk(&s.as_bytes()),
        Value::Boolean(b) if !script_resp3 => {
            if *b {
                reply.int(1)
            } else {
                reply.null()
            }
        }
        Value::Boolean(b) => reply.boolean(*b),
        Value::Integer(n) => reply.int(*n),
        Value::Number(n) => reply.int(truncate(*n)),
        Value::Table(t) => write_table(reply, t, script_resp3, depth)?,
        _ => reply.null(),
    }
    Ok(())
}

/// `(long long)` of a double as x86 computes it: toward zero, and the
/// lowest integer for what does not fit (NaN included).
pub fn truncate(n: f64) -> i64 {
    if n.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

fn write_table(reply: &mut Reply<'_>, t: &Table, script_resp3: bool, depth: usize) -> mlua::Result<()> {
    if let Value::String(e) = t.raw_get::<Value>("err")? {
        reply.error(one_line(&e.as_bytes()));
        return Ok(());
    }
    if let Value::String(s) = t.raw_get::<Value>("ok")? {
        reply.enc.simple(reply.out, &one_line(&s.as_bytes()));
        return Ok(());
    }
    if let Value::Number(d) = t.raw_get::<Value>("double")? {
        reply.double(d);
        return Ok(());
    }
    if let Value::Integer(d) = t.raw_get::<Value>("double")? {
        reply.double(d as f64);
        return Ok(());
    }
    if let Value::String(s) = t.raw_get::<Value>("big_number")? {
        reply.enc.big_number(reply.out, &one_line(&s.as_bytes()));
        return Ok(());
    }
    if let Value::Table(v) = t.raw_get::<Value>("verbatim_string")? {
        if let (Value::String(format), Value::String(s)) = (v.raw_get::<Value>("format")?, v.raw_get::<Value>("string")?) {
            // Three bytes of format, space-padded, as Redis's addReplyVerbatim.
            let mut f = [b' '; 3];
            for (d, c) in f.iter_mut().zip(format.as_bytes().iter()) {
                *d = *c;
            }
            reply.enc.verbatim(reply.out, &f, &s.as_bytes());
            return Ok(());
        }
    }
    if let Value::Table(m) = t.raw_get::<Value>("map")? {
        let pairs: Vec<(Value, Value)> = m.pairs::<Value, Value>().collect::<mlua::Result<_>>()?;
        reply.map(pairs.len());
        for (k, v) in &pairs {
            write_value(reply, k, script_resp3, depth + 1)?;
            write_value(reply, v, script_resp3, depth + 1)?;
        }
        return Ok(());
    }
    if let Value::Table(s) = t.raw_get::<Value>("set")? {
        let members: Vec<Value> = s.pairs::<Value, Value>().map(|kv| kv.map(|(k, _)| k)).collect::<mlua::Result<_>>()?;
        reply.set(members.len());
        for m in &members {
            write_value(reply, m, script_resp3, depth + 1)?;
        }
        return Ok(());
    }
    let mut items = Vec::new();
    loop {
        let v: Value = t.raw_get(items.len() + 1)?;
        if v.is_nil() {
            break;
        }
        items.push(v);
    }
    reply.array(items.len());
    for v in &items {
        write_value(reply, v, script_resp3, depth + 1)?;
    }
    Ok(())
}

/// A status or error line as Redis writes one: `\r` and `\n` as spaces.
fn one_line(s: &[u8]) -> Vec<u8> {
    s.iter().map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }).collect()
}

fn errors_line(msg: &str) -> String {
    format!("{} {msg}", crate::errors::ERR_CODE)
}
