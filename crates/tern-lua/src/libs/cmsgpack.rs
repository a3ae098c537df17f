//! `cmsgpack`: Salvatore Sanfilippo's lua-cmsgpack 0.4.0, MessagePack for
//! Lua values.
//!
//! Packing: numbers that are whole 64-bit integers take the smallest
//! integer encoding, other numbers a float32 when that loses nothing and
//! a float64 otherwise; a table whose keys are exactly 1..n is an array,
//! any other a map; tables nested 16 deep, and values MessagePack has no
//! type for, become nil. Unpacking reads a stream of values.

use mlua::{Lua, MultiValue, Result, Table, Value};

use super::args::{export, runtime_error, vm_error, Args, MAX_C_STACK};
use super::cnum::{double_to_i32, double_to_i64};

/// The nesting level at which a table is packed as nil, which also stops
/// tables that contain themselves.
const MAX_NESTING: usize = 16;

/// Creates the `cmsgpack` table.
pub(crate) fn open(lua: &Lua) -> Result<Table> {
    let table = lua.create_table()?;
    export(lua, &table, "pack", pack)?;
    export(lua, &table, "unpack", |args| unpack(args, 0, 0))?;
    export(lua, &table, "unpack_one", |args| {
        let offset = args.opt_integer(2, 0)?;
        unpack(args, 1, offset)
    })?;
    export(lua, &table, "unpack_limit", |args| {
        let limit = args.integer(2)?;
        let offset = args.opt_integer(3, 0)?;
        unpack(args, limit, offset)
    })?;
    table.raw_set("_NAME", "cmsgpack")?;
    table.raw_set("_VERSION", "lua-cmsgpack 0.4.0")?;
    table.raw_set("_COPYRIGHT", "Copyright (C) 2012, Redis Ltd.")?;
    table.raw_set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    Ok(table)
}

/// `cmsgpack.pack(v1, v2, ...)`: the values' encodings, concatenated.
fn pack(args: &Args) -> Result<MultiValue> {
    if args.len() == 0 {
        return Err(args.bad_argument(0, "MessagePack pack needs input."));
    }
    // Each argument is copied once onto the C function's stack.
    if 2 * args.len() > MAX_C_STACK {
        return Err(args.bad_argument(0, "Too many arguments for MessagePack pack."));
    }
    let mut out = Vec::new();
    for n in 1..=args.len() {
        encode(&mut out, args.get(n).expect("an argument below len"), 0)?;
    }
    Ok(MultiValue::from_iter([Value::String(
        args.lua().create_string(out)?,
    )]))
}

fn encode(out: &mut Vec<u8>, value: &Value, level: usize) -> Result<()> {
    match value {
        Value::String(s) => encode_bytes(out, &s.as_bytes()),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => encode_number(out, *i as f64),
        Value::Number(n) => encode_number(out, *n),
        Value::Table(t) if level < MAX_NESTING => encode_table(out, t, level)?,
        _ => out.push(0xc0),
    }
    Ok(())
}

/// A header: the short form `fixed | len` when `len` fits `fixed_max`,
/// else `code` and `len` in `width` big-endian bytes, the widest code
/// (the last) taking any length.
fn encode_header(
    out: &mut Vec<u8>,
    len: usize,
    fixed: u8,
    fixed_max: usize,
    sized: &[(u8, usize)],
) {
    if len <= fixed_max {
        out.push(fixed | len as u8);
        return;
    }
    let (code, width) = sized
        .iter()
        .copied()
        .find(|&(_, width)| width >= 4 || len < 1 << (8 * width))
        .expect("the last form takes any length");
    out.push(code);
    out.extend_from_slice(&(len as u32).to_be_bytes()[4 - width..]);
}

fn encode_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    encode_header(
        out,
        bytes.len(),
        0xa0,
        31,
        &[(0xd9, 1), (0xda, 2), (0xdb, 4)],
    );
    out.extend_from_slice(bytes);
}

/// Whole numbers that a 64-bit integer holds exactly are integers.
fn encode_number(out: &mut Vec<u8>, n: f64) {
    let i = double_to_i64(n);
    if n.is_finite() && i as f64 == n {
        encode_integer(out, i);
    } else if f64::from(n as f32) == n {
        out.push(0xca);
        out.extend_from_slice(&(n as f32).to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_integer(out: &mut Vec<u8>, i: i64) {
    match i {
        0..=127 => out.push(i as u8),
        -32..=-1 => out.push(i as u8),
        128..=0xff => out.extend_from_slice(&[0xcc, i as u8]),
        0x100..=0xffff => push_code(out, 0xcd, &(i as u16).to_be_bytes()),
        0x1_0000..=0xffff_ffff => push_code(out, 0xce, &(i as u32).to_be_bytes()),
        0x1_0000_0000.. => push_code(out, 0xcf, &i.to_be_bytes()),
        -128..=-33 => out.extend_from_slice(&[0xd0, i as u8]),
        -32768..=-129 => push_code(out, 0xd1, &(i as i16).to_be_bytes()),
        -2_147_483_648..=-32769 => push_code(out, 0xd2, &(i as i32).to_be_bytes()),
        _ => push_code(out, 0xd3, &i.to_be_bytes()),
    }
}

fn push_code(out: &mut Vec<u8>, code: u8, bytes: &[u8]) {
    out.push(code);
    out.extend_from_slice(bytes);
}

/// Tables are walked again rather than collected, as each value held
/// from Rust takes a slot of mlua's bounded reference stack.
fn encode_table(out: &mut Vec<u8>, table: &Table, level: usize) -> Result<()> {
    if let Some(len) = array_length(table)? {
        encode_header(out, len, 0x90, 15, &[(0xdc, 2), (0xdd, 4)]);
        for i in 1..=len {
            encode(out, &table.raw_get(i)?, level + 1)?;
        }
        return Ok(());
    }
    let mut len = 0;
    for pair in table.pairs::<Value, Value>() {
        pair?;
        len += 1;
    }
    encode_header(out, len, 0x80, 15, &[(0xde, 2), (0xdf, 4)]);
    for pair in table.pairs::<Value, Value>() {
        let (key, value) = pair?;
        encode(out, &key, level + 1)?;
        encode(out, &value, level + 1)?;
    }
    Ok(())
}

/// The length of `table` as an array, if its keys are exactly 1..n: all
/// positive whole numbers that fit a C `int`, the largest equal to their
/// count. The empty table is an (empty) array.
fn array_length(table: &Table) -> Result<Option<usize>> {
    let mut max: i32 = 0;
    let mut count = 0;
    for pair in table.pairs::<Value, Value>() {
        let n = match pair?.0 {
            Value::Integer(i) => i as f64,
            Value::Number(n) => n,
            _ => return Ok(None),
        };
        if n <= 0.0 || n.is_infinite() || f64::from(double_to_i32(n)) != n {
            return Ok(None);
        }
        max = max.max(n as i32);
        count += 1;
    }
    Ok(usize::try_from(max).ok().filter(|&max| max == count))
}

/// Decodes `limit` values of argument 1 from byte `offset` (all of them
/// when both are 0; then no offset is returned).
fn unpack(args: &Args, limit: i64, offset: i64) -> Result<MultiValue> {
    let input = args.string(1)?;
    let input = input.as_bytes();
    let len = input.len();
    if offset < 0 || limit < 0 {
        // The C message shows the input's length where it says "limit".
        return Err(runtime_error(format!(
            "Invalid request to unpack with offset of {} and limit of {}.",
            offset as i32, len as i32
        )));
    }
    if offset as usize > len {
        return Err(runtime_error(format!(
            "Start offset {} greater than input length {}.",
            offset as i32, len as i32
        )));
    }
    let decode_all = limit == 0 && offset == 0;
    let limit = if decode_all {
        i64::from(i32::MAX)
    } else {
        limit
    };
    let mut decoder = Decoder {
        lua: args.lua(),
        input: &input,
        at: offset as usize,
    };
    let mut values = Vec::new();
    while decoder.at < len && (values.len() as i64) < limit {
        // The C function holds its argument and the values so far.
        let value = decoder.value(1 + values.len())?;
        values.push(value);
    }
    if !decode_all {
        let next = if decoder.at == len {
            -1.0
        } else {
            decoder.at as f64
        };
        values.insert(0, Value::Number(next));
    }
    Ok(MultiValue::from_iter(values))
}

/// Reads MessagePack values from `input`, keeping count of the Lua stack
/// slots the C decoder would use, whose limit is its only bound on nesting.
struct Decoder<'a> {
    lua: &'a Lua,
    input: &'a [u8],
    at: usize,
}

fn missing_bytes() -> mlua::Error {
    runtime_error("Missing bytes in input.")
}

fn stack_overflow(context: &str) -> mlua::Error {
    runtime_error(format!("stack overflow ({context})"))
}

impl<'a> Decoder<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.input.len() - self.at < n {
            return Err(missing_bytes());
        }
        self.at += n;
        Ok(&self.input[self.at - n..self.at])
    }

    fn be(&mut self, n: usize) -> Result<u64> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0, |acc, &b| acc << 8 | u64::from(b)))
    }

    fn string(&mut self, len: usize) -> Result<Value> {
        let bytes = self.take(len)?;
        Ok(Value::String(self.lua.create_string(bytes)?))
    }

    /// Decodes one value, `slots` being the stack slots in use below it.
    fn value(&mut self, slots: usize) -> Result<Value> {
        let Some(&code) = self.input.get(self.at) else {
            return Err(missing_bytes());
        };
        if slots + 1 > MAX_C_STACK {
            return Err(stack_overflow(
                "too many return values at once; use unpack_one or unpack_limit instead.",
            ));
        }
        let integer = |i: i64| Ok(Value::Number(i as f64));
        // Checks the whole item is there before consuming its code.
        let need = |this: &Self, n: usize| {
            if this.input.len() - this.at < n {
                Err(missing_bytes())
            } else {
                Ok(())
            }
        };
        match code {
            0x00..=0x7f => {
                self.at += 1;
                integer(i64::from(code))
            }
            0xe0..=0xff => {
                self.at += 1;
                integer(i64::from(code as i8))
            }
            0xa0..=0xbf => {
                need(self, 1 + usize::from(code & 0x1f))?;
                self.at += 1;
                self.string(usize::from(code & 0x1f))
            }
            0x90..=0x9f => {
                self.at += 1;
                self.array(usize::from(code & 0x0f), slots)
            }
            0x80..=0x8f => {
                self.at += 1;
                self.map(usize::from(code & 0x0f), slots)
            }
            0xc0 => {
                self.at += 1;
                Ok(Value::Nil)
            }
            0xc2 | 0xc3 => {
                self.at += 1;
                Ok(Value::Boolean(code == 0xc3))
            }
            0xcc..=0xcf => {
                let width = 1 << (code - 0xcc);
                need(self, 1 + width)?;
                self.at += 1;
                // A 64-bit unsigned value goes through Lua's signed integer.
                integer(self.be(width)? as i64)
            }
            0xd0..=0xd3 => {
                let width = 1 << (code - 0xd0);
                need(self, 1 + width)?;
                self.at += 1;
                let shift = 64 - 8 * width as u32;
                integer(((self.be(width)? << shift) as i64) >> shift)
            }
            0xca => {
                need(self, 5)?;
                self.at += 1;
                Ok(Value::Number(f64::from(f32::from_bits(self.be(4)? as u32))))
            }
            0xcb => {
                need(self, 9)?;
                self.at += 1;
                Ok(Value::Number(f64::from_bits(self.be(8)?)))
            }
            0xd9 | 0xda => {
                let width = usize::from(code - 0xd8);
                need(self, 1 + width)?;
                let len =
                    usize::from_be_bytes(pad_be(&self.input[self.at + 1..self.at + 1 + width]));
                need(self, 1 + width + len)?;
                self.at += 1 + width;
                self.string(len)
            }
            0xdb => {
                self.take(1)?;
                let len = self.be(4)? as usize;
                self.string(len)
            }
            0xdc | 0xdd => {
                self.take(1)?;
                let len = self.be(if code == 0xdc { 2 } else { 4 })? as usize;
                self.array(len, slots)
            }
            0xde | 0xdf => {
                self.take(1)?;
                let len = self.be(if code == 0xde { 2 } else { 4 })? as usize;
                self.map(len, slots)
            }
            _ => Err(runtime_error("Bad data format in input.")),
        }
    }

    /// An array of `len` values, indexed from 1.
    fn array(&mut self, len: usize, slots: usize) -> Result<Value> {
        let table = self.lua.create_table()?;
        if slots + 2 > MAX_C_STACK {
            return Err(stack_overflow("in function mp_decode_to_lua_array"));
        }
        for index in 1..=len {
            let value = self.value(slots + 2)?;
            table.raw_set(index, value)?;
        }
        Ok(Value::Table(table))
    }

    /// A map of `len` key/value pairs; a nil or NaN key is refused as Lua
    /// refuses it.
    fn map(&mut self, len: usize, slots: usize) -> Result<Value> {
        let table = self.lua.create_table()?;
        for _ in 0..len {
            let key = self.value(slots + 1)?;
            let value = self.value(slots + 2)?;
            match key {
                Value::Nil => return Err(vm_error("table index is nil")),
                Value::Number(n) if n.is_nan() => return Err(vm_error("table index is NaN")),
                key => table.raw_set(key, value)?,
            }
        }
        Ok(Value::Table(table))
    }
}

/// Big-endian bytes widened to a `usize`'s.
fn pad_be(bytes: &[u8]) -> [u8; 8] {
    let mut padded = [0; 8];
    padded[8 - bytes.len()..].copy_from_slice(bytes);
    padded
}
