//! `bit`: LuaBitOp 1.0.2, bitwise operations on 32-bit integers carried
//! in Lua's doubles.
//!
//! Every argument is reduced to 32 bits the way LuaBitOp does it on a
//! double: adding 2^52 + 2^51 and keeping the low word of the sum, which
//! wraps numbers modulo 2^32 and rounds fractions to nearest-even. Every
//! result comes back as the signed value of those 32 bits.

use mlua::{Lua, MultiValue, Result, Table, Value};

use super::args::{export, Args};

/// Creates the `bit` table.
pub(crate) fn open(lua: &Lua) -> Result<Table> {
    let bit = lua.create_table()?;
    export(lua, &bit, "tobit", |args| unary(args, |b| b))?;
    export(lua, &bit, "bnot", |args| unary(args, |b| !b))?;
    export(lua, &bit, "bswap", |args| unary(args, u32::swap_bytes))?;
    export(lua, &bit, "band", |args| fold(args, |a, b| a & b))?;
    export(lua, &bit, "bor", |args| fold(args, |a, b| a | b))?;
    export(lua, &bit, "bxor", |args| fold(args, |a, b| a ^ b))?;
    export(lua, &bit, "lshift", |args| shift(args, |b, n| b << n))?;
    export(lua, &bit, "rshift", |args| shift(args, |b, n| b >> n))?;
    export(lua, &bit, "arshift", |args| {
        shift(args, |b, n| ((b as i32) >> n) as u32)
    })?;
    export(lua, &bit, "rol", |args| shift(args, u32::rotate_left))?;
    export(lua, &bit, "ror", |args| shift(args, u32::rotate_right))?;
    export(lua, &bit, "tohex", tohex)?;
    Ok(bit)
}

/// Argument `n` reduced to 32 bits. Anything Lua cannot read as a number
/// is refused, as LuaBitOp refuses it (only after finding it reduces to 0,
/// which every non-number does).
fn bits(args: &Args, n: usize) -> Result<u32> {
    match args.to_number(n)? {
        Some(x) => Ok(((x + 6_755_399_441_055_744.0).to_bits()) as u32),
        None => Err(args.type_error(n, "number")),
    }
}

fn result(bits: u32) -> Result<MultiValue> {
    Ok(MultiValue::from_iter([Value::Number(f64::from(
        bits as i32,
    ))]))
}

fn unary(args: &Args, op: fn(u32) -> u32) -> Result<MultiValue> {
    result(op(bits(args, 1)?))
}

/// `band`, `bor`, `bxor`: the first argument combined with all the others,
/// read from the last one back as LuaBitOp reads them (which decides which
/// bad argument is reported).
fn fold(args: &Args, op: fn(u32, u32) -> u32) -> Result<MultiValue> {
    let mut acc = bits(args, 1)?;
    for n in (2..=args.len()).rev() {
        acc = op(acc, bits(args, n)?);
    }
    result(acc)
}

/// Shifts and rotations by the second argument's low five bits.
fn shift(args: &Args, op: fn(u32, u32) -> u32) -> Result<MultiValue> {
    let value = bits(args, 1)?;
    let count = bits(args, 2)? & 31;
    result(op(value, count))
}

/// `tohex(x [, n])`: the low `|n|` hex digits of `x` (at most 8, 8 by
/// default), in upper case when `n` is negative.
fn tohex(args: &Args) -> Result<MultiValue> {
    let value = bits(args, 1)?;
    let width = if args.len() < 2 {
        8
    } else {
        bits(args, 2)? as i32
    };
    let upper = width < 0;
    let digits = width.unsigned_abs().min(8);
    let full = if upper {
        format!("{value:08X}")
    } else {
        format!("{value:08x}")
    };
    let hex = &full[(8 - digits) as usize..];
    Ok(MultiValue::from_iter([Value::String(
        args.lua().create_string(hex)?,
    )]))
}
