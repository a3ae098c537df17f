//! `math.random` and `math.randomseed` as Redis has them: Lua's own
//! functions over Redis's `redisLrand48`, the 48-bit linear congruential
//! generator of `drand48`, so that a seeded script draws the same numbers
//! on every platform (and on Redis).

use std::cell::Cell;
use std::rc::Rc;

use mlua::{Lua, MultiValue, Table, Value};

const A: u64 = 0x5_DEEC_E66D;
const C: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;
/// `REDIS_LRAND48_MAX`.
const MAX: i64 = i32::MAX as i64;
/// The state `drand48` starts from unseeded.
const INITIAL: u64 = 0x1234_ABCD_330E;

/// Replaces `math.random` and `math.randomseed` in the `math` table of
/// `globals` (before it is made read-only).
pub fn install(lua: &Lua, globals: &Table) -> mlua::Result<()> {
    let state = Rc::new(Cell::new(INITIAL));
    let math: Table = globals.raw_get("math")?;
    let s = state.clone();
    math.raw_set("random", lua.create_function(move |_, args: MultiValue| random(&s, args))?)?;
    math.raw_set(
        "randomseed",
        lua.create_function(move |_, args: MultiValue| {
            let seed = int_arg(&args, 0, "randomseed")? as u32 as u64;
            state.set(((seed >> 16) << 32) | ((seed & 0xFFFF) << 16) | 0x330E);
            Ok(())
        })?,
    )
}

/// `redisLrand48`: the next state's top 31 bits.
fn next(state: &Cell<u64>) -> i64 {
    let x = (state.get().wrapping_mul(A).wrapping_add(C)) & MASK;
    state.set(x);
    (x >> 17) as i64
}

fn random(state: &Cell<u64>, args: MultiValue) -> mlua::Result<f64> {
    let r = (next(state) % MAX) as f64 / MAX as f64;
    match args.len() {
        0 => Ok(r),
        1 => {
            let u = int_arg(&args, 0, "random")?;
            if u < 1 {
                return Err(arg_error(1, "random", "interval is empty"));
            }
            Ok((r * u as f64).floor() + 1.0)
        }
        2 => {
            let l = int_arg(&args, 0, "random")?;
            let u = int_arg(&args, 1, "random")?;
            if l > u {
                return Err(arg_error(2, "random", "interval is empty"));
            }
            Ok((r * (u - l + 1) as f64).floor() + l as f64)
        }
        _ => Err(mlua::Error::runtime("wrong number of arguments")),
    }
}

/// `luaL_checkint`: a number, or a string that reads as one, as an `int`.
fn int_arg(args: &MultiValue, i: usize, fname: &str) -> mlua::Result<i64> {
    let n = match args.get(i) {
        Some(Value::Integer(n)) => *n as f64,
        Some(Value::Number(n)) => *n,
        Some(Value::String(s)) => match s.to_str().ok().and_then(|s| s.trim().parse::<f64>().ok()) {
            Some(n) => n,
            None => return Err(arg_error(i + 1, fname, "number expected, got string")),
        },
        Some(v) => return Err(arg_error(i + 1, fname, &format!("number expected, got {}", v.type_name()))),
        None => return Err(arg_error(i + 1, fname, "number expected, got no value")),
    };
    Ok(n as i64 as i32 as i64)
}

fn arg_error(n: usize, fname: &str, what: &str) -> mlua::Error {
    mlua::Error::runtime(format!("bad argument #{n} to '{fname}' ({what})"))
}
