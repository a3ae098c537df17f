//! `cjson.encode`: a Lua value as JSON text.
//!
//! Tables whose keys are all positive whole numbers are arrays (holes
//! become `null`) unless excessively sparse; any other table, the empty
//! one included, is an object, its number keys written as strings.

use mlua::{Result, Table, Value};

use super::super::args::{runtime_error, type_name, Args};
use super::super::cnum::{double_to_i32, format_g};
use super::{Config, NESTING_SLOT_LIMIT};

pub(super) fn encode(args: &Args, config: &mut Config) -> Result<mlua::MultiValue> {
    if args.len() != 1 {
        return Err(args.bad_argument(1, "expected 1 argument"));
    }
    let mut encoder = Encoder {
        config,
        out: Vec::new(),
    };
    let value = args.get(1).expect("one argument");
    // The C encoder starts with its argument on its Lua stack.
    encoder.value(value, 0, 1)?;
    Ok(mlua::MultiValue::from_iter([Value::String(
        args.lua().create_string(encoder.out)?,
    )]))
}

struct Encoder<'a> {
    config: &'a Config,
    out: Vec<u8>,
}

fn cannot_serialise(value: &Value, reason: &str) -> mlua::Error {
    runtime_error(format!("Cannot serialise {}: {reason}", type_name(value)))
}

/// How each byte of a string is written: the JSON escape of the control
/// characters, `"`, `\`, `/` and DEL; `None` for bytes written as they are
/// (UTF-8 is not checked).
fn escape(byte: u8) -> Option<&'static str> {
    const CONTROL: [&str; 32] = [
        "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
        "\\b", "\\t", "\\n", "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f", "\\u0010", "\\u0011",
        "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019",
        "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
    ];
    match byte {
        0..=31 => Some(CONTROL[usize::from(byte)]),
        b'"' => Some("\\\""),
        b'\\' => Some("\\\\"),
        b'/' => Some("\\/"),
        0x7f => Some("\\u007f"),
        _ => None,
    }
}

impl Encoder<'_> {
    /// Writes `value`, the `depth`-th nested table if a table, `slots`
    /// being the Lua stack slots the C encoder would be using.
    fn value(&mut self, value: &Value, depth: i32, slots: usize) -> Result<()> {
        match value {
            Value::String(s) => self.string(&s.as_bytes()),
            Value::Integer(i) => self.number(*i as f64, value)?,
            Value::Number(n) => self.number(*n, value)?,
            Value::Boolean(b) => self
                .out
                .extend_from_slice(if *b { b"true" } else { b"false" }),
            Value::Nil => self.out.extend_from_slice(b"null"),
            Value::LightUserData(p) if p.0.is_null() => self.out.extend_from_slice(b"null"),
            Value::Table(table) => self.table(table, depth + 1, slots)?,
            _ => return Err(cannot_serialise(value, "type not supported")),
        }
        Ok(())
    }

    fn string(&mut self, bytes: &[u8]) {
        self.out.push(b'"');
        for &byte in bytes {
            match escape(byte) {
                Some(escaped) => self.out.extend_from_slice(escaped.as_bytes()),
                None => self.out.push(byte),
            }
        }
        self.out.push(b'"');
    }

    /// `value` is what the number came from, named in the error.
    fn number(&mut self, n: f64, value: &Value) -> Result<()> {
        if !n.is_finite() {
            match self.config.encode_invalid_numbers {
                0 => return Err(cannot_serialise(value, "must not be NaN or Inf")),
                1 if n.is_nan() => {
                    self.out.extend_from_slice(b"nan");
                    return Ok(());
                }
                1 => {}
                _ => {
                    self.out.extend_from_slice(b"null");
                    return Ok(());
                }
            }
        }
        let precision = self.config.encode_number_precision as usize;
        self.out
            .extend_from_slice(format_g(n, precision).as_bytes());
        Ok(())
    }

    fn table(&mut self, table: &Table, depth: i32, slots: usize) -> Result<()> {
        // Room for the key, the value and an error message, as C asks.
        if depth > self.config.encode_max_depth || slots + 3 > NESTING_SLOT_LIMIT {
            return Err(runtime_error(format!(
                "Cannot serialise, excessive nesting ({depth})"
            )));
        }
        match self.array_length(table)? {
            Some(len) if len > 0 => self.array(table, len, depth, slots),
            _ => self.object(table, depth, slots),
        }
    }

    /// The length to write `table` as an array with, or `None` for an
    /// object: `None` when a key is not a positive whole number, or when
    /// the array is excessively sparse and may be converted (else that is
    /// an error). The largest index is kept in a C `int`, as in C.
    fn array_length(&self, table: &Table) -> Result<Option<i32>> {
        let mut max: i32 = 0;
        let mut items: i32 = 0;
        for pair in table.pairs::<Value, Value>() {
            let k = match pair?.0 {
                Value::Integer(i) => i as f64,
                Value::Number(n) => n,
                _ => return Ok(None),
            };
            if k == 0.0 || k.floor() != k || k < 1.0 {
                return Ok(None);
            }
            if k > f64::from(max) {
                max = double_to_i32(k);
            }
            items = items.wrapping_add(1);
        }
        let config = self.config;
        let ratio = config.sparse_ratio;
        if ratio > 0 && max > items.wrapping_mul(ratio) && max > config.sparse_safe {
            if !config.sparse_convert {
                return Err(runtime_error(
                    "Cannot serialise table: excessively sparse array",
                ));
            }
            return Ok(None);
        }
        Ok(Some(max))
    }

    fn array(&mut self, table: &Table, len: i32, depth: i32, slots: usize) -> Result<()> {
        self.out.push(b'[');
        for i in 1..=len {
            if i > 1 {
                self.out.push(b',');
            }
            let item: Value = table.raw_get(i)?;
            self.value(&item, depth, slots + 1)?;
        }
        self.out.push(b']');
        Ok(())
    }

    /// Walking an object holds four of mlua's references per level (the
    /// iteration's table and key, the entry's key and value) where C holds
    /// two stack slots, and both come from stacks of the same bound: the
    /// nesting is counted at four slots a level so that it ends in the
    /// nesting error rather than in mlua running out of references.
    fn object(&mut self, table: &Table, depth: i32, slots: usize) -> Result<()> {
        const SLOTS_PER_LEVEL: usize = 4;
        let slots = slots + SLOTS_PER_LEVEL;
        self.out.push(b'{');
        for (index, pair) in table.pairs::<Value, Value>().enumerate() {
            let (key, item) = pair?;
            if index > 0 {
                self.out.push(b',');
            }
            match &key {
                Value::Integer(_) | Value::Number(_) => {
                    self.out.push(b'"');
                    self.value(&key, depth, slots)?;
                    self.out.extend_from_slice(b"\":");
                }
                Value::String(s) => {
                    self.string(&s.as_bytes());
                    self.out.push(b':');
                }
                _ => {
                    return Err(cannot_serialise(
                        &key,
                        "table key must be a number or string",
                    ))
                }
            }
            self.value(&item, depth, slots)?;
        }
        self.out.push(b'}');
        Ok(())
    }
}
