//! `cjson`: Mark Pulford's Lua CJSON 2.1.0 as Redis ships it, JSON for Lua
//! values.
//!
//! Each module table (`cjson`, and every table `cjson.new()` returns) has
//! its own settings, changed by its configuration functions; each returns
//! the setting's value after the change.

mod decode;
mod encode;

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{LightUserData, Lua, MultiValue, Result, Table, Value};

use super::args::{export, Args, MAX_C_STACK};

/// The Lua stack slots the encoder and decoder may count on while nesting,
/// as the C ones are bounded by `lua_checkstack`; with the default depth
/// limits (1000) it is never reached.
const NESTING_SLOT_LIMIT: usize = MAX_C_STACK;

/// A module table's settings.
#[derive(Debug, Clone, Copy)]
struct Config {
    /// Encode excessively sparse arrays as objects instead of refusing.
    sparse_convert: bool,
    /// An array is excessively sparse when its largest index exceeds both
    /// `sparse_ratio` times its number of items and `sparse_safe`
    /// (`sparse_ratio` 0: never).
    sparse_ratio: i32,
    sparse_safe: i32,
    encode_max_depth: i32,
    decode_max_depth: i32,
    /// 0: NaN and infinities are refused; 1: written as `nan`, `inf`,
    /// `-inf`; 2: written as `null`.
    encode_invalid_numbers: i32,
    /// Accept what `strtod` reads beyond JSON's numbers (hexadecimal,
    /// `inf`, `nan`, leading `+` or zeros).
    decode_invalid_numbers: bool,
    /// Reuse the encoding buffer between calls: only a performance
    /// setting in C, kept so that it reads back as set.
    encode_keep_buffer: bool,
    /// Significant digits of encoded numbers (`%.14g`).
    encode_number_precision: i32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            sparse_convert: false,
            sparse_ratio: 2,
            sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            encode_invalid_numbers: 0,
            decode_invalid_numbers: true,
            encode_keep_buffer: true,
            encode_number_precision: 14,
        }
    }
}

type Shared = Rc<RefCell<Config>>;

/// `cjson.null`: JSON's null, a light userdata holding NULL.
fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

/// Creates a `cjson` table with default settings.
pub(crate) fn open(lua: &Lua) -> Result<Table> {
    let table = lua.create_table()?;
    let config: Shared = Rc::default();
    // Each call works on a copy of the settings, so that no borrow is held
    // while Lua runs (an allocation may run a finalizer that calls back).
    // Whatever a configuration function set before failing stays set.
    let with = |f: fn(&Args, &mut Config) -> Result<MultiValue>| {
        let config = config.clone();
        move |args: &Args| {
            let mut settings = *config.borrow();
            let result = f(args, &mut settings);
            *config.borrow_mut() = settings;
            result
        }
    };
    export(lua, &table, "encode", with(encode::encode))?;
    export(lua, &table, "decode", with(decode::decode))?;
    export(
        lua,
        &table,
        "encode_sparse_array",
        with(encode_sparse_array),
    )?;
    export(lua, &table, "encode_max_depth", with(encode_max_depth))?;
    export(lua, &table, "decode_max_depth", with(decode_max_depth))?;
    export(
        lua,
        &table,
        "encode_number_precision",
        with(encode_number_precision),
    )?;
    export(lua, &table, "encode_keep_buffer", with(encode_keep_buffer))?;
    export(
        lua,
        &table,
        "encode_invalid_numbers",
        with(encode_invalid_numbers),
    )?;
    export(
        lua,
        &table,
        "decode_invalid_numbers",
        with(decode_invalid_numbers),
    )?;
    export(lua, &table, "new", |args| {
        Ok(MultiValue::from_iter([Value::Table(open(args.lua())?)]))
    })?;
    table.raw_set("null", null())?;
    table.raw_set("_NAME", "cjson")?;
    table.raw_set("_VERSION", "2.1.0")?;
    Ok(table)
}

/// Refuses more than `count` arguments, as every configuration function
/// does.
fn at_most(args: &Args, count: usize) -> Result<()> {
    if args.len() > count {
        return Err(args.bad_argument(count as i64 + 1, "found too many arguments"));
    }
    Ok(())
}

/// Sets `setting` from integer argument `n` unless it is nil, within
/// `min..=max` (a range error names argument 1 whichever `n` is).
fn integer_option(args: &Args, n: usize, setting: &mut i32, min: i32, max: i32) -> Result<Value> {
    if !args.is_nil(n) {
        let value = args.integer(n)? as i32;
        if !(min..=max).contains(&value) {
            return Err(args.bad_argument(1, format!("expected integer between {min} and {max}")));
        }
        *setting = value;
    }
    Ok(Value::Number(f64::from(*setting)))
}

/// Sets `setting` from argument `n` unless it is nil: a boolean, or the
/// name of one of `options` (its index). Reads back as a boolean for the
/// first two options, else as the option's name.
fn enum_option(args: &Args, n: usize, setting: &mut i32, options: &[&str]) -> Result<Value> {
    match args.get(n) {
        None | Some(Value::Nil) => {}
        Some(Value::Boolean(b)) => *setting = i32::from(*b),
        Some(_) => {
            let name = args.string(n)?;
            let name = name.as_bytes();
            let Some(index) = options
                .iter()
                .position(|option| option.as_bytes() == &name[..])
            else {
                let message = [b"invalid option '", &name[..], b"'"].concat();
                return Err(args.bad_argument(n as i64, message));
            };
            *setting = index as i32;
        }
    }
    if *setting <= 1 {
        Ok(Value::Boolean(*setting == 1))
    } else {
        Ok(Value::String(
            args.lua().create_string(options[*setting as usize])?,
        ))
    }
}

/// An on/off setting: a boolean, `"on"` or `"off"`.
fn bool_option(args: &Args, n: usize, setting: &mut bool) -> Result<Value> {
    let mut index = i32::from(*setting);
    let value = enum_option(args, n, &mut index, &["off", "on"]);
    *setting = index == 1;
    value
}

fn encode_sparse_array(args: &Args, config: &mut Config) -> Result<MultiValue> {
    at_most(args, 3)?;
    let convert = bool_option(args, 1, &mut config.sparse_convert)?;
    let ratio = integer_option(args, 2, &mut config.sparse_ratio, 0, i32::MAX)?;
    let safe = integer_option(args, 3, &mut config.sparse_safe, 0, i32::MAX)?;
    Ok(MultiValue::from_iter([convert, ratio, safe]))
}

fn encode_max_depth(args: &Args, config: &mut Config) -> Result<MultiValue> {
    at_most(args, 1)?;
    Ok(MultiValue::from_iter([integer_option(
        args,
        1,
        &mut config.encode_max_depth,
        1,
        i32::MAX,
    )?]))
}

fn decode_max_depth(args: &Args, config: &mut Config) -> Result<MultiValue> {
    at_most(args, 1)?;
    Ok(MultiValue::from_iter([integer_option(
        args,
        1,
        &mut config.decode_max_depth,
        1,
        i32::MAX,
    )?]))
}

fn encode_number_precision(args: &Args, config: &mut Config) -> Result<MultiValue> {
    at_most(args, 1)?;
    Ok(MultiValue::from_iter([integer_option(
        args,
        1,
        &mut config.encode_number_precision,
        1,
        14,
    )?]))
}

fn encode_keep_buffer(args: &Args, config: &mut Config) -> Result<MultiValue> {
    at_most(args, 1)?;
    Ok(MultiValue::from_iter([bool_option(
        args,
        1,
        &mut config.encode_keep_buffer,
    )?]))
}

fn encode_invalid_numbers(args: &Args, config: &mut Config) -> Result<MultiValue> {
    at_most(args, 1)?;
    let options = &["off", "on", "null"];
    Ok(MultiValue::from_iter([enum_option(
        args,
        1,
        &mut config.encode_invalid_numbers,
        options,
    )?]))
}

fn decode_invalid_numbers(args: &Args, config: &mut Config) -> Result<MultiValue> {
    at_most(args, 1)?;
    Ok(MultiValue::from_iter([bool_option(
        args,
        1,
        &mut config.decode_invalid_numbers,
    )?]))
}
