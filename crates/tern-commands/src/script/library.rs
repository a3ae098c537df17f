//! Function libraries in a worker's Lua state: a library's metadata line
//! (`#!lua name=mylib`), and its loading, which runs the library's code
//! with only the loading API to see (`redis.register_function`,
//! `redis.log`, the versions), as Redis swaps its globals for FUNCTION
//! LOAD, collecting the functions it registers.

use std::cell::RefCell;
use std::rc::Rc;

use tern_lua::mlua::{self, Function, Lua, MultiValue, RegistryKey, Table, Value};
use tern_lua::{raise, Sandbox};

use crate::errors;
use crate::scriptcache::{flags as sf, FunctionInfo};

/// What `redis.register_function` collects while a library loads (None
/// outside a load).
///
/// The callbacks are kept in the Lua registry rather than as handles:
/// mlua holds each handle in a slot of a stack of at most 8000, which a
/// library of many functions would fill.
pub type Registered = Rc<RefCell<Option<Vec<(FunctionInfo, RegistryKey)>>>>;

/// The loading API's `redis` table: set up once per state.
const LOAD_API: &str = r#"
local redis, register, log, version, version_num = ...
redis.register_function = register
redis.log = log
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REDIS_VERSION, redis.REDIS_VERSION_NUM = version, version_num
"#;

/// The globals a library's code sees while it loads (a read-only view):
/// a `redis` table of [`LOAD_API`], and nothing else.
pub fn load_globals(sandbox: &Sandbox, log: Function, registered: Registered) -> mlua::Result<Table> {
    let lua = sandbox.lua();
    let redis = lua.create_table()?;
    let register = lua.create_function(move |lua, args: MultiValue| register_function(lua, args, &registered))?;
    lua.load(LOAD_API)
        .set_name(tern_lua::sandbox::INTERNAL)
        .call::<()>((&redis, register, log, crate::REDIS_VERSION, crate::REDIS_VERSION_NUM))?;
    let globals = lua.create_table()?;
    globals.raw_set("redis", sandbox.read_only(&redis, true)?)?;
    sandbox.read_only(&globals, true)
}

fn fail(text: &str) -> mlua::Error {
    raise(errors::script_error_text(text.as_bytes()))
}

/// A function or library name: letters, digits and underscores, at least
/// one (Redis's functionsVerifyName).
pub fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

/// `redis.register_function(name, callback)` or
/// `redis.register_function{function_name=..., callback=..., flags={...},
/// description=...}`.
fn register_function(lua: &Lua, args: MultiValue, registered: &Registered) -> mlua::Result<()> {
    let mut slot = registered.borrow_mut();
    let Some(found) = slot.as_mut() else {
        return Err(fail(errors::REGISTER_OUTSIDE_LOAD));
    };
    let (info, callback) = match args.len() {
        1 => named_args(&args[0])?,
        2 => {
            let name = match &args[0] {
                Value::String(s) => s.as_bytes().to_vec(),
                Value::Integer(n) => n.to_string().into_bytes(),
                Value::Number(n) => tern_lua::sandbox::number_text(*n).into_bytes(),
                _ => return Err(fail(errors::REGISTER_FIRST)),
            };
            let Value::Function(f) = &args[1] else { return Err(fail(errors::REGISTER_SECOND)) };
            (FunctionInfo { name: String::from_utf8_lossy(&name).into_owned(), description: None, flags: 0 }, f.clone())
        }
        _ => return Err(fail(errors::REGISTER_ARGS)),
    };
    if !valid_name(info.name.as_bytes()) {
        return Err(fail(errors::LIB_NAME));
    }
    // Within a library names differ by case too (FCALL finds either by
    // the first one registered).
    if found.iter().any(|(f, _)| f.name == info.name) {
        return Err(fail(errors::LIB_FUNCTION_TWICE));
    }
    found.push((info, lua.create_registry_value(callback)?));
    Ok(())
}

fn named_args(v: &Value) -> mlua::Result<(FunctionInfo, Function)> {
    let Value::Table(t) = v else { return Err(fail(errors::REGISTER_NOT_TABLE)) };
    let (mut name, mut description, mut callback, mut flags) = (None, None, None, 0);
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair?;
        let key = match &k {
            Value::String(s) => s.to_string_lossy().to_ascii_lowercase(),
            Value::Integer(n) => n.to_string(),
            Value::Number(n) => tern_lua::sandbox::number_text(*n),
            _ => return Err(fail(errors::REGISTER_KEY_NOT_STRING)),
        };
        match key.as_str() {
            "function_name" => match &v {
                Value::String(s) => name = Some(s.to_string_lossy()),
                Value::Integer(n) => name = Some(n.to_string()),
                Value::Number(n) => name = Some(tern_lua::sandbox::number_text(*n)),
                _ => return Err(fail(errors::REGISTER_NAME_NOT_STRING)),
            },
            "description" => match &v {
                Value::String(s) => description = Some(s.as_bytes().to_vec()),
                Value::Integer(n) => description = Some(n.to_string().into_bytes()),
                Value::Number(n) => description = Some(tern_lua::sandbox::number_text(*n).into_bytes()),
                _ => return Err(fail(errors::REGISTER_DESC_NOT_STRING)),
            },
            "callback" => match v {
                Value::Function(f) => callback = Some(f),
                _ => return Err(fail(errors::REGISTER_CALLBACK)),
            },
            "flags" => {
                let Value::Table(list) = &v else { return Err(fail(errors::REGISTER_FLAGS_TABLE)) };
                flags = read_flags(list)?;
            }
            _ => return Err(fail(errors::REGISTER_UNKNOWN_ARG)),
        }
    }
    let Some(name) = name else { return Err(fail(errors::REGISTER_NO_NAME)) };
    let Some(callback) = callback else { return Err(fail(errors::REGISTER_NO_CALLBACK)) };
    Ok((FunctionInfo { name, description, flags }, callback))
}

/// A flags table's strings as [`sf`] flags, read as Redis's
/// luaRegisterFunctionReadFlags reads them: its array part up to the first
/// nil, each matched without case.
fn read_flags(list: &Table) -> mlua::Result<u32> {
    let mut flags = 0;
    for i in 1.. {
        let s = match list.raw_get::<Value>(i)? {
            Value::Nil => break,
            Value::String(s) => s.as_bytes().to_vec(),
            Value::Integer(n) => n.to_string().into_bytes(),
            Value::Number(n) => tern_lua::sandbox::number_text(n).into_bytes(),
            _ => return Err(fail(errors::REGISTER_UNKNOWN_FLAG)),
        };
        match sf::NAMES.iter().find(|(n, _)| n.as_bytes().eq_ignore_ascii_case(&s)) {
            Some((_, bit)) => flags |= bit,
            None => return Err(fail(errors::REGISTER_UNKNOWN_FLAG)),
        }
    }
    Ok(flags)
}

/// A library's metadata line: its name, or the error's text (Redis's
/// functionExtractLibMetaData, then the name and engine checks).
pub fn metadata(payload: &[u8]) -> Result<String, String> {
    if !payload.starts_with(b"#!") {
        return Err(errors::LIB_NO_METADATA.into());
    }
    let Some(end) = payload.iter().position(|&c| c == b'\n') else {
        return Err(errors::LIB_BAD_METADATA.into());
    };
    let parts = crate::scriptcache::split_args(&payload[..end]).unwrap_or_default();
    let Some((engine, options)) = parts.split_first() else {
        return Err(errors::LIB_BAD_METADATA.into());
    };
    let mut name: Option<&[u8]> = None;
    for opt in options {
        if opt.len() >= 5 && opt[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err(errors::LIB_NAME_TWICE.into());
            }
            name = Some(&opt[5..]);
            continue;
        }
        return Err(format!("Invalid metadata value given: {}", String::from_utf8_lossy(opt)));
    }
    let Some(name) = name else { return Err(errors::LIB_NO_NAME.into()) };
    if !valid_name(name) {
        return Err(errors::LIB_NAME.into());
    }
    let engine = &engine[2..];
    if !engine.eq_ignore_ascii_case(b"lua") {
        return Err(format!("Engine '{}' not found", String::from_utf8_lossy(engine)));
    }
    Ok(String::from_utf8_lossy(name).into_owned())
}
