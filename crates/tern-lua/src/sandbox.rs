//! The sandbox: a Lua state whose globals scripts cannot change, as Redis
//! 7+ locks its scripting engine.
//!
//! Redis patches Lua's VM with read-only tables. Tern runs stock Lua 5.1,
//! so the same rules are kept with proxies:
//!
//! ```text
//!  globals (P, what scripts and loadstring see: empty, __index R, __newindex refused)
//!     └─► R, the real globals: __index "nonexistent global", __newindex refused
//!            string, table, math, os, coroutine, redis, cjson, ... ─► each a proxy
//!            of the real library table (__index real, __newindex refused)
//! ```
//!
//! Every assignment to a global or to a library field lands on an empty
//! proxy and so reaches its `__newindex`; `rawset` and `setmetatable` are
//! wrapped to refuse the proxies; `getfenv` never hands out R. A script may
//! still build and change tables of its own, KEYS and ARGV included.
//!
//! Errors keep Redis's shapes: a runtime error in the script's own code
//! carries its position (`user_script:1: ...`); one raised from a library
//! function does not; [`Sandbox::call`] runs a function under the error
//! handler Redis's `__redis__err__handler` is, which turns every error into
//! a table `{err=..., source=..., line=...}`.

use mlua::chunk::ChunkMode;
use mlua::{Function, Lua, LuaOptions, MultiValue, StdLib, Table, Value};

/// The code the error handler gives an error raised without one (Redis's
/// `__redis__err__handler`: `ERR ` and the message).
pub const GENERIC_CODE: &str = "ERR";

/// The error Redis's VM raises for a write to a read-only table.
pub const READONLY: &str = "Attempt to modify a readonly table";

/// The chunk name of Tern's own Lua code: the error handler skips its
/// frames, so that an error raised through a wrapper is placed at the
/// script's line that called it.
pub const INTERNAL: &str = "=tern";

/// The libraries whose tables scripts see read-only, besides those the
/// embedder installs.
const LIBRARIES: &[&str] = &["string", "table", "math", "os", "coroutine"];

/// Lua's own globals that Redis keeps (its allow list, less `getfenv`,
/// `setfenv` and `newproxy`, which Redis and Valkey dropped in their
/// October 2025 sandbox fixes); every other one the standard libraries
/// define is removed.
const BUILTINS: &[&str] = &[
    "__redis__err__handler",
    "xpcall", "tostring", "setmetatable", "next", "assert", "tonumber", "rawequal", "collectgarbage",
    "getmetatable", "rawset", "pcall", "coroutine", "type", "_G", "select", "unpack", "gcinfo", "pairs", "rawget",
    "loadstring", "ipairs", "_VERSION", "load", "error", "string", "math", "table", "os",
];

/// Wraps the builtins that could reach around the proxies, and returns the
/// function that runs a script under the error handler. Arguments: R, P,
/// the set of protected tables, the error handler, the error-message
/// extractor.
const PRELUDE: &str = r##"
local R, P, protected, handler, errmsg, string_mt, string_mt_view = ...
local rawset_, setmetatable_, getmetatable_, loadstring_, pcall_, xpcall_ =
    rawset, setmetatable, getmetatable, loadstring, pcall, xpcall
local type, error, select, concat = type, error, select, table.concat
local READONLY = "Attempt to modify a readonly table"

local rawget_, next_, ipairs_ = rawget, next, ipairs
rawset = function(t, k, v)
    if protected[t] then error(READONLY, 0) end
    return rawset_(t, k, v)
end
-- A read-only table reads as the table behind it: its fields are listed
-- by pairs and next, as Redis's read-only tables are.
rawget = function(t, k) return rawget_(protected[t] or t, k) end
next = function(t, k) return next_(protected[t] or t, k) end
pairs = function(t) return next, protected[t] or t, nil end
ipairs = function(t) return ipairs_(protected[t] or t) end
setmetatable = function(t, mt)
    if protected[t] then error(READONLY, 0) end
    return setmetatable_(t, mt)
end
local string_mt, string_mt_view = string_mt, string_mt_view
getmetatable = function(v)
    local mt = getmetatable_(v)
    if mt == string_mt then return string_mt_view end
    return mt
end
-- Binary chunks are parsed as text, as Redis's Lua does (it never loads
-- bytecode): a leading space keeps lines and makes "\27Lua" a syntax error.
loadstring = function(s, name)
    if type(s) == "string" and s:byte(1) == 27 then
        return loadstring_(" " .. s, name or s)
    end
    return loadstring_(s, name)
end
load = function(f, name)
    local parts = {}
    while true do
        local piece = f()
        if piece == nil or piece == "" then break end
        if type(piece) ~= "string" then return nil, "reader function must return a string" end
        parts[#parts + 1] = piece
    end
    return loadstring(concat(parts), name or "=(load)")
end
-- Redis's pcall: an error table's `err` string is the error a script sees.
local function caught(ok, ...)
    if ok then return true, ... end
    local e = ...
    if type(e) == "table" and type(e.err) == "string" then e = e.err
    elseif type(e) == "userdata" then e = errmsg(e) end
    return false, e
end
pcall = function(f, ...) return caught(pcall_(f, ...)) end

local function run(f, ...)
    local n = select("#", ...)
    if n == 0 then return xpcall_(f, handler) end
    local args = {...}
    return xpcall_(function() return f(unpack(args, 1, n)) end, handler)
end
return run
"##;

/// A sandboxed Lua state.
pub struct Sandbox {
    lua: Lua,
    /// R: the real globals, where KEYS and ARGV are set.
    real: Table,
    /// The globals' metatable: its `__index` is R, or while a library
    /// loads, the loading globals ([`Sandbox::while_loading`]).
    globals_mt: Table,
    /// Refuses a write, as a read-only table's `__newindex`.
    refuse: Function,
    /// Raises "nonexistent global variable", as R's `__index`.
    missing: Function,
    protected: Table,
    run: Function,
    /// R and the error handler, where [`Sandbox::run_script`] finds them.
    pub(crate) real_key: mlua::RegistryKey,
    pub(crate) handler_key: mlua::RegistryKey,
    /// `redis.call`'s argument buffers, kept between calls.
    pub(crate) buffers: std::cell::RefCell<crate::bridge::Buffers>,
    /// The strings "KEYS" and "ARGV", and whether R holds an EVAL's.
    pub(crate) keys_name: mlua::RegistryKey,
    pub(crate) argv_name: mlua::RegistryKey,
    pub(crate) globals_set: std::cell::Cell<bool>,
}

/// An error a Rust function raises as Redis's C functions raise theirs:
/// the script sees a table `{err=<text>}` (its text with its code, e.g.
/// `ERR Unknown Redis command called from script`), and Redis's `pcall`
/// the text.
#[derive(Debug, Clone)]
pub struct Raised(pub Vec<u8>);

impl std::fmt::Display for Raised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0))
    }
}

impl std::error::Error for Raised {}

/// The error for a Rust function to return to raise `{err=<text>}`.
pub fn raise(text: impl Into<Vec<u8>>) -> mlua::Error {
    mlua::Error::external(Raised(text.into()))
}

/// The text of the [`Raised`] error a value holds (an error raised by a
/// Rust function and caught in Lua), if it holds one.
pub fn raised_text(v: &Value) -> Option<&[u8]> {
    match v {
        Value::Error(e) => raised(e).map(|r| &r.0[..]),
        _ => None,
    }
}

/// The [`Raised`] error inside `e`, if it is one.
fn raised(e: &mlua::Error) -> Option<&Raised> {
    match e {
        mlua::Error::CallbackError { cause, .. } => raised(cause),
        mlua::Error::ExternalError(inner) => inner.downcast_ref::<Raised>(),
        _ => None,
    }
}

/// How a call ended.
pub enum Outcome {
    /// The function's first result (nil when none).
    Done(Value),
    /// The error, as the handler left it: a table with `err` (the message
    /// with its code, e.g. `ERR user_script:1: ...`) and, when known,
    /// `source` and `line`.
    Failed(Value),
}

impl Sandbox {
    /// A state with Lua's base, table, string and math libraries, `os`
    /// cut to `os.clock`, the libraries Redis adds ([`crate::libs`]),
    /// and whatever `install` puts in the globals (the embedder's `redis`
    /// table); every table reachable from there then read-only. `extra`
    /// names the globals `install` adds whose tables are to be protected.
    pub fn new(install: impl FnOnce(&Lua, &Table) -> mlua::Result<()>, extra: &[&str]) -> mlua::Result<Sandbox> {
        let lua = Lua::new_with(StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::OS, LuaOptions::default())?;
        let real = lua.globals();
        let os: Table = real.get("os")?;
        let clock: Function = os.get("clock")?;
        let os = lua.create_table()?;
        os.raw_set("clock", clock)?;
        real.raw_set("os", os)?;
        crate::libs::open(&lua)?;
        install(&lua, &real)?;

        let keep: Vec<&str> = BUILTINS.iter().chain(crate::libs::NAMES).chain(extra).copied().collect();
        let names: Vec<String> = real.pairs::<String, Value>().filter_map(|kv| kv.ok().map(|(k, _)| k)).collect();
        for name in names {
            if !keep.contains(&name.as_str()) {
                real.raw_set(name, Value::Nil)?;
            }
        }

        let protected = lua.create_table()?;
        let refuse = lua
            .load(format!("local error = error return function() error({READONLY:?}, 2) end"))
            .set_name(INTERNAL)
            .eval::<Function>()?;
        for &name in LIBRARIES.iter().chain(crate::libs::NAMES).chain(extra) {
            let Value::Table(lib) = real.raw_get(name)? else { continue };
            let proxy = read_only_proxy(&lua, &lib, &refuse)?;
            protected.raw_set(&proxy, &lib)?;
            real.raw_set(name, proxy)?;
        }
        // `("x"):upper()` reads the string library through its proxy too,
        // and scripts see the strings' metatable only through a read-only
        // view, so neither can be changed for the next script.
        let string_mt = lua.type_metatable::<mlua::LuaString>().map_or(Ok(Value::Nil), |mt| {
            mt.raw_set("__index", real.raw_get::<Value>("string")?)?;
            Ok::<_, mlua::Error>(Value::Table(mt))
        })?;
        let string_mt_view = match &string_mt {
            Value::Table(mt) => {
                let view = read_only_proxy(&lua, mt, &refuse)?;
                protected.raw_set(&view, mt)?;
                Value::Table(view)
            }
            _ => Value::Nil,
        };

        let globals = lua.create_table()?;
        let gmt = lua.create_table()?;
        gmt.raw_set("__index", &real)?;
        gmt.raw_set("__newindex", &refuse)?;
        gmt.raw_set("__metatable", false)?;
        let gmt_keep = gmt.clone();
        globals.set_metatable(Some(gmt))?;
        real.raw_set("_G", &globals)?;
        let rmt = lua.create_table()?;
        let missing = lua
            .load(
                "local error, tostring = error, tostring return function(_, k) \
                   error(\"Script attempted to access nonexistent global variable '\" .. tostring(k) .. \"'\", 2) \
                 end",
            )
            .set_name(INTERNAL)
            .eval::<Function>()?;
        rmt.raw_set("__index", &missing)?;
        rmt.raw_set("__newindex", &refuse)?;
        rmt.raw_set("__metatable", false)?;
        real.set_metatable(Some(rmt))?;
        protected.raw_set(&real, &real)?;
        protected.raw_set(&globals, &real)?;

        lua.set_named_registry_value(TOSTRING, real.raw_get::<Function>("tostring")?)?;
        let handler = lua.create_function(error_handler)?;
        // Redis keeps its handler as a global; scripts see it there.
        real.raw_set("__redis__err__handler", &handler)?;
        real.raw_set("unpack", lua.create_function(unpack)?)?;
        crate::rand48::install(&lua, &real)?;
        // For Redis's pcall: an error a Rust function raised, as its message.
        let errmsg = lua.create_function(|lua, v: Value| match v {
            Value::Error(e) => match raised(&e) {
                Some(r) => Ok(Value::String(lua.create_string(&r.0)?)),
                None => Ok(Value::String(lua.create_string(error_text(&e))?)),
            },
            other => Ok(other),
        })?;
        let handler_key = lua.create_registry_value(&handler)?;
        let real_key = lua.create_registry_value(&real)?;
        let keys_name = lua.create_registry_value(lua.create_string("KEYS")?)?;
        let argv_name = lua.create_registry_value(lua.create_string("ARGV")?)?;
        let run: Function = lua
            .load(PRELUDE)
            .set_name(INTERNAL)
            .call((&real, &globals, &protected, handler, errmsg, string_mt, string_mt_view))?;
        lua.set_globals(globals)?;
        Ok(Sandbox { lua, real, globals_mt: gmt_keep, refuse, missing, protected, run, real_key, handler_key, buffers: Default::default(), keys_name, argv_name, globals_set: Default::default() })
    }

    pub fn lua(&self) -> &Lua {
        &self.lua
    }

    /// Compiles `body` as a chunk named `name` (`@user_script`), in text
    /// mode only. The error is Lua's message (`user_script:1: ...`).
    pub fn compile(&self, name: &str, body: &[u8]) -> Result<Function, String> {
        self.lua.load(body).set_name(name).set_mode(ChunkMode::Text).into_function().map_err(|e| match e {
            mlua::Error::SyntaxError { message, .. } => message,
            other => error_text(&other),
        })
    }

    /// A read-only view of `t`; reading a field it lacks raises
    /// "nonexistent global variable" when `strict` (a globals table).
    pub fn read_only(&self, t: &Table, strict: bool) -> mlua::Result<Table> {
        if strict {
            let mt = self.lua.create_table()?;
            mt.raw_set("__index", &self.missing)?;
            mt.raw_set("__newindex", &self.refuse)?;
            mt.raw_set("__metatable", false)?;
            t.set_metatable(Some(mt))?;
        }
        let view = read_only_proxy(&self.lua, t, &self.refuse)?;
        self.protected.raw_set(&view, t)?;
        Ok(view)
    }

    /// Runs `f` with `globals` (a [`Sandbox::read_only`] view) as what the
    /// globals read through, as Redis swaps its globals while FUNCTION
    /// LOAD runs a library: only `redis.register_function` and a few
    /// others are there.
    pub fn while_loading<R>(&self, globals: &Table, f: impl FnOnce() -> R) -> mlua::Result<R> {
        self.globals_mt.raw_set("__index", globals)?;
        let r = f();
        self.globals_mt.raw_set("__index", &self.real)?;
        Ok(r)
    }

    /// Sets a global the scripts read but cannot write (EVAL's KEYS and
    /// ARGV).
    pub fn set_global(&self, name: &str, value: impl mlua::IntoLua) -> mlua::Result<()> {
        self.real.raw_set(name, value)
    }

    /// Runs `f(args)` under the error handler.
    pub fn call(&self, f: &Function, args: impl mlua::IntoLuaMulti) -> mlua::Result<Outcome> {
        let mut out: MultiValue = self.run.call((f, args))?;
        let ok = matches!(out.pop_front(), Some(Value::Boolean(true)));
        let first = out.pop_front().unwrap_or(Value::Nil);
        Ok(if ok { Outcome::Done(first) } else { Outcome::Failed(first) })
    }
}

/// The most values `unpack` returns.
pub const UNPACK_MAX: i64 = 7989;

/// Lua's `unpack(t [, i [, j]])` with its range checked in 64 bits: Lua
/// 5.1's own computes the count in an `int` that a range like
/// `-2^31, 2^31-1` overflows (CVE-2025-46817).
fn unpack(_: &Lua, args: MultiValue) -> mlua::Result<MultiValue> {
    let Some(Value::Table(t)) = args.front() else {
        let got = args.front().map_or("no value", |v| v.type_name());
        return Err(mlua::Error::runtime(format!("bad argument #1 to 'unpack' (table expected, got {got})")));
    };
    let int = |n: usize, default: i64| -> mlua::Result<i64> {
        match args.get(n) {
            None | Some(Value::Nil) => Ok(default),
            Some(Value::Integer(v)) => Ok(*v as i32 as i64),
            Some(Value::Number(v)) => Ok(*v as i64 as i32 as i64),
            Some(Value::String(s)) => match s.to_str().ok().and_then(|s| s.trim().parse::<f64>().ok()) {
                Some(v) => Ok(v as i64 as i32 as i64),
                None => Err(mlua::Error::runtime(format!("bad argument #{} to 'unpack' (number expected, got string)", n + 1))),
            },
            Some(v) => Err(mlua::Error::runtime(format!("bad argument #{} to 'unpack' (number expected, got {})", n + 1, v.type_name()))),
        }
    };
    let i = int(1, 1)?;
    let j = int(2, t.raw_len() as i64)?;
    if i > j {
        return Ok(MultiValue::new());
    }
    // Lua's C stack holds 8000 values (LUAI_MAXCSTACK); mlua keeps a few
    // of them while it returns a Rust function's results, so Tern's
    // `unpack` stops 10 short of Redis's.
    if j - i + 1 > UNPACK_MAX {
        return Err(mlua::Error::runtime("too many results to unpack"));
    }
    let mut out = MultiValue::with_capacity((j - i + 1) as usize);
    for k in i..=j {
        out.push_back(t.raw_get(k)?);
    }
    Ok(out)
}

/// A table that reads through to `lib` and refuses every write.
fn read_only_proxy(lua: &Lua, lib: &Table, refuse: &Function) -> mlua::Result<Table> {
    let proxy = lua.create_table()?;
    let mt = lua.create_table()?;
    mt.raw_set("__index", lib)?;
    mt.raw_set("__newindex", refuse)?;
    mt.raw_set("__metatable", false)?;
    proxy.set_metatable(Some(mt))?;
    Ok(proxy)
}

/// Redis's `__redis__err__handler`: makes the error a table `{err=...}`
/// (a string error gets the generic `ERR ` code) and notes where it was
/// raised: the function that raised it, or when that is a C function (a
/// library's, `error` itself), the one that called it — skipping Tern's
/// own wrappers, which stand where Redis has C functions.
fn error_handler(lua: &Lua, err: Value) -> mlua::Result<Value> {
    let frame = |level: usize| {
        lua.inspect_stack(level, |d| {
            let src = d.source();
            (src.what, src.source.map(|s| s.into_owned()), d.current_line(), src.short_src.map(|s| s.into_owned()))
        })
    };
    let table = match err {
        Value::Table(t) => t,
        Value::Error(e) if raised(&e).is_some() => {
            let t = lua.create_table()?;
            t.raw_set("err", lua.create_string(raised(&e).map_or(&[][..], |r| &r.0[..]))?)?;
            t
        }
        Value::Error(e) => {
            // A Rust function's error, placed as luaL_error places a C
            // function's: at the line of the code that called it.
            let place = match frame(2) {
                Some((_, _, Some(line), Some(src))) if line > 0 => format!("{src}:{line}: "),
                _ => String::new(),
            };
            let t = lua.create_table()?;
            t.raw_set("err", format!("{GENERIC_CODE} {place}{}", error_text(&e)))?;
            t
        }
        other => {
            let t = lua.create_table()?;
            t.raw_set("err", format!("{GENERIC_CODE} {}", to_string(lua, &other)?))?;
            t
        }
    };
    let mut level = 1;
    let mut at = frame(level);
    if matches!(&at, Some((what, ..)) if *what == "C") {
        level += 1;
        at = frame(level);
    }
    while matches!(&at, Some((_, Some(source), ..)) if source == INTERNAL) {
        level += 1;
        at = frame(level);
    }
    if let Some((_, source, line, _)) = at {
        table.raw_set("source", source.unwrap_or_default())?;
        table.raw_set("line", line.map_or(-1, |l| l as i64))?;
    }
    Ok(Value::Table(table))
}

/// An error value as Lua's `tostring` shows it, but an error raised by a
/// Rust function (mlua's wrapped error) as its bare message.
fn to_string(lua: &Lua, v: &Value) -> mlua::Result<String> {
    match v {
        Value::Error(e) => Ok(error_text(e)),
        other => lua.named_registry_value::<Function>(TOSTRING)?.call::<String>(other),
    }
}

/// Where the registry keeps Lua's own `tostring`, for the error handler
/// (the globals may be a library's loading globals when it runs).
const TOSTRING: &str = "tern.tostring";

/// A number as Lua's `tostring` writes it (`%.14g`).
pub fn number_text(n: f64) -> String {
    crate::libs::cnum::format_g(n, 14)
}

/// The message of an mlua error as Lua code would see it: the text a Rust
/// function raised, without mlua's "runtime error: " and traceback.
pub fn error_text(e: &mlua::Error) -> String {
    match e {
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => m.clone(),
        mlua::Error::CallbackError { cause, .. } => error_text(cause),
        mlua::Error::MemoryError(m) => m.clone(),
        other => other.to_string(),
    }
}
