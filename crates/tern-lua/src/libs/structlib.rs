//! `struct`: Roberto Ierusalimschy's library for packing values into
//! binary strings and back, with the bounds checks Redis added to it.
//!
//! A format is a sequence of options: `<` `>` choose the byte order (little
//! endian by default, as on the machines Redis runs on), `!n` the maximum
//! alignment, `x` a pad byte, `b B h H l L T i I` integers (`in`/`In` of
//! `n` bytes), `f` `d` floats, `cn` `n` bytes of a string (`c0`: all of it,
//! or when unpacking, as many as the previous result says), `s` a
//! zero-terminated string; spaces are ignored. Sizes are those of x86-64:
//! `h` 2, `i` 4, `l` and `T` 8.

use mlua::{Lua, LuaString, MultiValue, Result, Table, Value};

use super::args::{export, runtime_error, Args, MAX_C_STACK};
use super::cnum::{double_to_i64, double_to_u64};

/// The largest size `i`/`I` accept.
const MAX_INT_SIZE: usize = 32;
/// The alignment `!` sets when it has no number: that of a double.
const MAX_ALIGN: usize = 8;

/// Creates the `struct` table.
pub(crate) fn open(lua: &Lua) -> Result<Table> {
    let table = lua.create_table()?;
    export(lua, &table, "pack", pack)?;
    export(lua, &table, "unpack", unpack)?;
    export(lua, &table, "size", size)?;
    Ok(table)
}

/// A format string being read, with the byte order and alignment its
/// options have set so far.
struct Format<'a> {
    bytes: &'a [u8],
    at: usize,
    little_endian: bool,
    align: usize,
}

impl<'a> Format<'a> {
    /// The format ends at its first zero byte, as a C string does.
    fn new(bytes: &'a [u8]) -> Self {
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Format {
            bytes: &bytes[..end],
            at: 0,
            little_endian: true,
            align: 1,
        }
    }

    fn next_option(&mut self) -> Option<u8> {
        let option = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(option)
    }

    /// The number written after an option, or `default` when there is none.
    fn number(&mut self, default: usize) -> Result<usize> {
        if !self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            return Ok(default);
        }
        let mut value: i32 = 0;
        while let Some(digit) = self.bytes.get(self.at).filter(|b| b.is_ascii_digit()) {
            let digit = i32::from(digit - b'0');
            if value > i32::MAX / 10 || value * 10 > i32::MAX - digit {
                return Err(runtime_error("integral size overflow"));
            }
            value = value * 10 + digit;
            self.at += 1;
        }
        Ok(value as usize)
    }

    /// The size of an option's item; 0 for the options that are not items
    /// (and for `s`, whose size depends on the data).
    fn item_size(&mut self, option: u8) -> Result<usize> {
        Ok(match option {
            b'b' | b'B' | b'x' => 1,
            b'h' | b'H' => 2,
            b'l' | b'L' | b'T' | b'd' => 8,
            b'f' => 4,
            b'c' => self.number(1)?,
            b'i' | b'I' => {
                let size = self.number(4)?;
                if size > MAX_INT_SIZE {
                    return Err(runtime_error(format!(
                        "integral size {size} is larger than limit of {MAX_INT_SIZE}"
                    )));
                }
                size
            }
            _ => 0,
        })
    }

    /// The padding that aligns an item of `size` bytes at offset `at`:
    /// to its size, capped by the maximum alignment (strings are not
    /// aligned). Sizes that are no power of two give the odd padding the
    /// C formula gives them.
    fn padding(&self, at: usize, option: u8, size: usize) -> usize {
        if size == 0 || option == b'c' {
            return 0;
        }
        let size = size.min(self.align);
        size.wrapping_sub(at & (size - 1)) & (size - 1)
    }

    /// Applies an option that is not an item: byte order, alignment, space.
    fn control(&mut self, args: &Args, option: u8) -> Result<()> {
        match option {
            b' ' => {}
            b'>' => self.little_endian = false,
            b'<' => self.little_endian = true,
            b'!' => {
                let align = self.number(MAX_ALIGN)?;
                if !align.is_power_of_two() {
                    return Err(runtime_error(format!(
                        "alignment {align} is not a power of 2"
                    )));
                }
                self.align = align;
            }
            _ => {
                let message = [b"invalid format option '", &[option][..], b"'"].concat();
                return Err(args.bad_argument(1, message));
            }
        }
        Ok(())
    }

    /// `bytes` (native, little-endian order) in the current byte order.
    fn ordered(&self, mut bytes: Vec<u8>) -> Vec<u8> {
        if !self.little_endian {
            bytes.reverse();
        }
        bytes
    }
}

fn is_integer_option(option: u8) -> bool {
    matches!(
        option,
        b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I'
    )
}

/// The format string, argument 1 (read as a C string).
fn format_arg(args: &Args) -> Result<LuaString> {
    args.string(1)
}

/// `struct.pack(fmt, v1, v2, ...)`. The C function pushes a nil after its
/// arguments before reading them, so a missing first value reads as nil.
fn pack(args: &Args) -> Result<MultiValue> {
    let fmt = format_arg(args)?;
    let args = &args.with_nil_pushed();
    let fmt_bytes = fmt.as_bytes();
    let mut format = Format::new(&fmt_bytes);
    let mut out = Vec::new();
    let mut arg = 2;
    while let Some(option) = format.next_option() {
        let size = format.item_size(option)?;
        let padding = format.padding(out.len(), option, size);
        out.resize(out.len() + padding, 0);
        match option {
            _ if is_integer_option(option) => {
                out.extend(format.ordered(integer_bytes(args.number(arg)?, size)));
                arg += 1;
            }
            b'x' => out.push(0),
            b'f' => {
                let value = args.number(arg)? as f32;
                out.extend(format.ordered(value.to_le_bytes().to_vec()));
                arg += 1;
            }
            b'd' => {
                out.extend(format.ordered(args.number(arg)?.to_le_bytes().to_vec()));
                arg += 1;
            }
            b'c' | b's' => {
                let s = args.string(arg)?;
                let s = s.as_bytes();
                arg += 1;
                let size = if size == 0 { s.len() } else { size };
                if s.len() < size {
                    // The C code has already moved past the argument here.
                    return Err(args.bad_argument(arg as i64, "string too short"));
                }
                out.extend_from_slice(&s[..size]);
                if option == b's' {
                    out.push(0);
                }
            }
            _ => format.control(args, option)?,
        }
    }
    Ok(MultiValue::from_iter([Value::String(
        args.lua().create_string(out)?,
    )]))
}

/// The `size` low bytes of a number converted to a 64-bit integer, least
/// significant first; sizes past 8 bytes are zero-filled, even for
/// negative numbers.
fn integer_bytes(n: f64, size: usize) -> Vec<u8> {
    let value = if n < 0.0 {
        double_to_i64(n) as u64
    } else {
        double_to_u64(n)
    };
    (0..size)
        .map(|i| if i < 8 { (value >> (8 * i)) as u8 } else { 0 })
        .collect()
}

/// The integer in `bytes` (in the format's order), sign-extended from its
/// top bit when `signed`. Past 8 bytes the high bytes are lost and the
/// sign mask is shifted as x86 shifts (by the count modulo 64), as in C.
fn integer_value(bytes: &[u8], little_endian: bool, signed: bool) -> f64 {
    let fold = |acc: u64, b: &u8| acc << 8 | u64::from(*b);
    let raw = if little_endian {
        bytes.iter().rev().fold(0, fold)
    } else {
        bytes.iter().fold(0, fold)
    };
    if !signed {
        return raw as f64;
    }
    let mask = u64::MAX << ((bytes.len() as u32 * 8).wrapping_sub(1) & 63);
    let value = if raw & mask != 0 { raw | mask } else { raw };
    value as i64 as f64
}

/// `struct.unpack(fmt, data [, pos])`: the values, then the position after
/// them.
fn unpack(args: &Args) -> Result<MultiValue> {
    let fmt = format_arg(args)?;
    let fmt_bytes = fmt.as_bytes();
    let data = args.string(2)?;
    let data = data.as_bytes();
    let offset = args.opt_integer(3, 1)? as usize;
    if offset == 0 {
        return Err(args.bad_argument(3, "offset must be 1 or greater"));
    }
    let mut format = Format::new(&fmt_bytes);
    let mut pos = offset - 1;
    let mut results: Vec<Value> = Vec::new();
    let fits = |pos: usize, size: usize| size <= data.len() && pos <= data.len() - size;
    while let Some(option) = format.next_option() {
        let mut size = format.item_size(option)?;
        pos = pos.wrapping_add(format.padding(pos, option, size));
        if !fits(pos, size) {
            return Err(args.bad_argument(2, "data string too short"));
        }
        if args.len() + results.len() + 2 > MAX_C_STACK {
            return Err(runtime_error("stack overflow (too many results)"));
        }
        let item = &data[pos..pos + size];
        match option {
            _ if is_integer_option(option) => {
                let signed = option.is_ascii_lowercase();
                results.push(Value::Number(integer_value(
                    item,
                    format.little_endian,
                    signed,
                )));
            }
            b'x' => {}
            b'f' => {
                let bytes = format.ordered(item.to_vec()).try_into().expect("4 bytes");
                results.push(Value::Number(f64::from(f32::from_le_bytes(bytes))));
            }
            b'd' => {
                let bytes = format.ordered(item.to_vec()).try_into().expect("8 bytes");
                results.push(Value::Number(f64::from_le_bytes(bytes)));
            }
            b'c' => {
                if size == 0 {
                    size = previous_size(args, results.pop())?;
                    if !fits(pos, size) {
                        return Err(args.bad_argument(2, "data string too short"));
                    }
                }
                results.push(Value::String(
                    args.lua().create_string(&data[pos..pos + size])?,
                ));
            }
            b's' => {
                let Some(len) = data[pos..].iter().position(|&b| b == 0) else {
                    return Err(runtime_error("unfinished string in data"));
                };
                size = len + 1;
                results.push(Value::String(
                    args.lua().create_string(&data[pos..pos + len])?,
                ));
            }
            _ => format.control(args, option)?,
        }
        pos = pos.wrapping_add(size);
    }
    results.push(Value::Number(pos.wrapping_add(1) as i64 as f64));
    Ok(MultiValue::from_iter(results))
}

/// The length a `c0` item takes from the result before it, which must be
/// a number (or a string Lua reads as one).
fn previous_size(args: &Args, previous: Option<Value>) -> Result<usize> {
    let number = match previous {
        Some(value) => args.lua().coerce_number(value)?,
        None => None,
    };
    number
        .map(|n| double_to_u64(n) as usize)
        .ok_or_else(|| runtime_error("format 'c0' needs a previous size"))
}

/// `struct.size(fmt)`: the length of what `fmt` packs, which must not
/// depend on the data.
fn size(args: &Args) -> Result<MultiValue> {
    let fmt = format_arg(args)?;
    let fmt_bytes = fmt.as_bytes();
    let mut format = Format::new(&fmt_bytes);
    let mut total: usize = 0;
    while let Some(option) = format.next_option() {
        let size = format.item_size(option)?;
        total = total.wrapping_add(format.padding(total, option, size));
        if option == b's' {
            return Err(args.bad_argument(1, "option 's' has no fixed size"));
        }
        if option == b'c' && size == 0 {
            return Err(args.bad_argument(1, "option 'c0' has no fixed size"));
        }
        if !option.is_ascii_alphanumeric() {
            format.control(args, option)?;
        }
        total = total.wrapping_add(size);
    }
    Ok(MultiValue::from_iter([Value::Number(total as i64 as f64)]))
}
