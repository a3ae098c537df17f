//! A script's result as a reply: Redis's `luaReplyToRedisReply`.
//!
//! The other way, a command's reply read back as Lua values for
//! `redis.call` (Redis's `redisProtocolToLuaType`), is pushed straight
//! onto Lua's stack by `tern_lua::bridge`.

use tern_lua::mlua::{self, Table, Value};

use crate::cmd::Reply;

/// How deep a returned table may nest before the reply says so. Redis's
/// conversion takes a slot of Lua's C stack (8000) per level and stops
/// at 7995 levels; here each level holds an mlua handle, of which there
/// are as many, so the reply stops a little earlier, with room left.
const MAX_DEPTH: usize = 7900;

/// The error Redis writes where a returned table nests too deep (or
/// refers to itself).
const STACK_LIMIT: &str = "reached lua stack limit";

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
