//! The bridge between a running script and the server that runs it:
//! `redis.call`, `redis.pcall` and `redis.acl_check_cmd` as plain C
//! functions on Lua's C API, and a script's run ([`Sandbox::run_script`]):
//! KEYS and ARGV built, the script called under the error handler.
//!
//! This is the path every script call and every `redis.call` takes, so it
//! stays off mlua's value handles: an argument is read from Lua's stack
//! in place, a reply is pushed onto it as Redis's `redisProtocolToLuaType`
//! reads it ([`push_reply`]), and the server is reached through the
//! [`Host`] the run installs, not through a closure made per run.
//!
//! ```text
//!  Sandbox::run_script(f, KEYS, ARGV, host) ─► RUN = host (this thread)
//!     script ─► redis.call(...) ─► command(): args from the stack ─► host.call(argv)
//!                                           ◄─ reply bytes (RESP2/3) ─► pushed as Lua values
//!                                           ◄─ an error ─► {err=...} raised (pcall: returned)
//! ```
//!
//! # Safety
//!
//! Lua raises its errors with `longjmp`. Where this module calls a Lua API
//! function that may raise (one that allocates), no value with a
//! destructor is alive in any Rust frame between there and the protected
//! call that catches it: the arguments and replies are borrowed slices,
//! the buffers live in the [`Sandbox`], and a panic of the host is kept
//! aside and resumed once the run is over. The script's memory limit is
//! lifted while a reply is pushed, so only a failing system allocator
//! can make these raise; the raises that are meant (an error reply from
//! `redis.call`) happen after everything is dropped.

#![allow(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int};

use mlua::ffi;
use mlua::{Lua, RegistryKey, Value};

use crate::sandbox::{Outcome, Sandbox};

/// What `redis.call` asks of the server.
pub enum Request<'a> {
    /// A command: its arguments laid end to end in `argv`, each
    /// `(start, len)` in `ranges`, the command's name first.
    Command { argv: &'a [u8], ranges: &'a [(usize, usize)] },
    /// Called without arguments.
    NoArguments,
    /// An argument that is neither a string nor a number.
    BadArgument,
}

/// The server side of a run: what `redis.call` and `redis.acl_check_cmd`
/// reach.
pub trait Host {
    /// Runs a command. Ok: its reply, exactly one, in RESP2 or RESP3 as
    /// the script chose; an error reply among them is the script's error.
    /// Err: the error to raise (`redis.call`) or return (`redis.pcall`) as
    /// `{err=<text>}`, its code first (`ERR ...`).
    fn call(&mut self, request: Request<'_>) -> Result<&[u8], &[u8]>;

    /// `redis.acl_check_cmd`: may the caller run this command? Err: the
    /// error to raise.
    fn acl_check(&mut self, request: Request<'_>) -> Result<bool, &[u8]>;
}

/// The run in progress on this thread: its host and what the C functions
/// need besides.
#[derive(Clone, Copy)]
struct Current {
    host: *mut (dyn Host + 'static),
    lua: *const Lua,
    buffers: *mut Buffers,
    /// The script's memory limit, lifted while a reply is pushed.
    limit: usize,
}

thread_local! {
    static RUN: Cell<Option<Current>> = const { Cell::new(None) };
    /// A host's panic, resumed when the run is over.
    static PANIC: RefCell<Option<Box<dyn std::any::Any + Send>>> = const { RefCell::new(None) };
}

/// A command's arguments as `redis.call` collects them, kept between
/// calls.
#[derive(Default)]
pub(crate) struct Buffers {
    argv: Vec<u8>,
    ranges: Vec<(usize, usize)>,
}

/// How a run hands KEYS and ARGV to what it calls.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// As the globals KEYS and ARGV (EVAL), there until the next run sets
    /// its own or runs a function (which never sees them).
    Globals,
    /// As the function's two arguments (FCALL).
    Arguments,
}

/// The errors the C functions raise of their own, as `{err=...}`, code
/// first.
#[derive(Clone, Copy)]
pub struct Texts {
    /// Called with no run installed (a function kept from one).
    pub outside_run: &'static [u8],
    /// The host panicked (the panic itself is resumed after the run).
    pub host_failed: &'static [u8],
}

static TEXTS: std::sync::OnceLock<Texts> = std::sync::OnceLock::new();

fn texts() -> Texts {
    // Set by install_bridge before any of the functions exists; the bare
    // code is for a state built some other way.
    *TEXTS.get_or_init(|| Texts { outside_run: b"ERR", host_failed: b"ERR" })
}

/// The most nested levels of a reply pushed as Lua tables; deeper ones
/// read as nil. No command's reply comes near it.
const REPLY_DEPTH_MAX: usize = 64;

impl Sandbox {
    /// Puts `redis.call`, `redis.pcall` and `redis.acl_check_cmd` in
    /// `redis` (the real table, not its proxy); `texts` are the errors
    /// they raise of their own (the embedder's wording, the first given
    /// kept).
    pub fn install_bridge(lua: &Lua, redis: &mlua::Table, texts: Texts) -> mlua::Result<()> {
        TEXTS.get_or_init(|| texts);
        // SAFETY: the functions follow the C function protocol (they read
        // their arguments from the stack and return how many results they
        // pushed) and raise only as the module doc says.
        unsafe {
            redis.raw_set("call", lua.create_c_function(redis_call)?)?;
            redis.raw_set("pcall", lua.create_c_function(redis_pcall)?)?;
            redis.raw_set("acl_check_cmd", lua.create_c_function(redis_acl_check)?)?;
        }
        Ok(())
    }

    /// Runs the compiled script or function `f` with `keys` and `argv`
    /// (handed over as `pass` says) under the error handler, `host`
    /// serving its `redis.call`s, and at most `limit` bytes allocated by
    /// the state while its code runs (0: no limit).
    pub fn run_script<'a>(
        &self,
        f: &RegistryKey,
        keys: impl ExactSizeIterator<Item = &'a [u8]>,
        argv: impl ExactSizeIterator<Item = &'a [u8]>,
        pass: Pass,
        host: &mut dyn Host,
        limit: usize,
    ) -> mlua::Result<Outcome> {
        let lua = self.lua();
        let mut buffers = self.buffers.borrow_mut();
        let host: *mut (dyn Host + '_) = host;
        // SAFETY: the host is borrowed for this call, and RUN is cleared
        // (to what it was) before the borrow ends; the C functions reach it
        // only while the script runs below.
        let host: *mut (dyn Host + 'static) = unsafe { std::mem::transmute(host) };
        let current = Current { host, lua: lua as *const Lua, buffers: &mut *buffers as *mut Buffers, limit };
        let before = RUN.with(|r| r.replace(Some(current)));
        let (real, handler, fid) = (self.real_key.id(), self.handler_key.id(), f.id());
        let (keys_name, argv_name) = (self.keys_name.id(), self.argv_name.id());
        // A script's KEYS and ARGV stay set after it until the next EVAL
        // sets its own, or a function runs (which never sees them).
        let clear_globals = pass == Pass::Arguments && self.globals_set.replace(false);
        if pass == Pass::Globals {
            self.globals_set.set(true);
        }
        // SAFETY: a C-side sequence on the stack exec_raw gives it (see
        // the module doc); it leaves the status and the result.
        let result = unsafe {
            lua.exec_raw::<(bool, Value)>((), |l| {
                let base = ffi::lua_gettop(l);
                ffi::lua_checkstack(l, 8);
                if clear_globals {
                    ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, real);
                    for name in [keys_name, argv_name] {
                        ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, name);
                        ffi::lua_pushnil(l);
                        ffi::lua_rawset(l, -3);
                    }
                    ffi::lua_pop(l, 1);
                }
                ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, handler);
                ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, fid);
                let nargs = match pass {
                    Pass::Arguments => {
                        push_array(l, keys);
                        push_array(l, argv);
                        2
                    }
                    Pass::Globals => {
                        ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, real);
                        ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, keys_name);
                        push_array(l, keys);
                        ffi::lua_rawset(l, -3);
                        ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, argv_name);
                        push_array(l, argv);
                        ffi::lua_rawset(l, -3);
                        ffi::lua_pop(l, 1);
                        0
                    }
                };
                let _ = (*current.lua).set_memory_limit(limit);
                let status = ffi::lua_pcall(l, nargs, 1, base + 1);
                let _ = (*current.lua).set_memory_limit(0);
                ffi::lua_pushboolean(l, c_int::from(status == 0));
                ffi::lua_replace(l, base + 1);
            })
        };
        RUN.with(|r| r.set(before));
        drop(buffers);
        if let Some(p) = PANIC.with(|p| p.borrow_mut().take()) {
            std::panic::resume_unwind(p);
        }
        let (ok, v) = result?;
        Ok(if ok { Outcome::Done(v) } else { Outcome::Failed(v) })
    }
}

/// Pushes a new array table of `items`.
///
/// # Safety
/// `l` is a running state with two free stack slots.
unsafe fn push_array<'a>(l: *mut ffi::lua_State, items: impl ExactSizeIterator<Item = &'a [u8]>) {
    // SAFETY: as the caller promised; the table stays at -2 while each
    // item is pushed and stored.
    unsafe {
        ffi::lua_createtable(l, c_int::try_from(items.len()).unwrap_or(c_int::MAX), 0);
        for (i, item) in items.enumerate() {
            push_str(l, item);
            ffi::lua_rawseti_(l, -2, i as c_int + 1);
        }
    }
}

/// # Safety
/// `l` is a running state with a free stack slot.
unsafe fn push_str(l: *mut ffi::lua_State, s: &[u8]) {
    // SAFETY: Lua copies the `s.len()` bytes at `s`.
    unsafe { ffi::lua_pushlstring_(l, s.as_ptr() as *const c_char, s.len()) }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Call,
    PCall,
    AclCheck,
}

/// `redis.call`. Lua calls it (with `l` its state) as a C function.
unsafe extern "C-unwind" fn redis_call(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua, as a C function.
    unsafe { command(l, Mode::Call) }
}

/// `redis.pcall`, as [`redis_call`].
unsafe extern "C-unwind" fn redis_pcall(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua, as a C function.
    unsafe { command(l, Mode::PCall) }
}

/// `redis.acl_check_cmd`, as [`redis_call`].
unsafe extern "C-unwind" fn redis_acl_check(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua, as a C function.
    unsafe { command(l, Mode::AclCheck) }
}

/// What the host answered, as borrowed bytes (nothing here to drop).
enum Answer<'a> {
    Reply(&'a [u8]),
    Allowed(bool),
    Error(&'a [u8]),
    Panicked,
}

/// The body of the three C functions.
///
/// # Safety
/// Called by Lua as a C function: `l` is the running state, the call's
/// arguments on its stack. While a run is installed (RUN), its pointers
/// are live: [`Sandbox::run_script`] clears RUN before they go.
unsafe fn command(l: *mut ffi::lua_State, mode: Mode) -> c_int {
    // SAFETY: as the caller promised. The host's answer is borrowed
    // bytes, a panic is kept aside, so a raise below skips no destructor.
    unsafe {
        let Some(cur) = RUN.with(|r| r.get()) else {
            // Only a run installs these callers' host; a function kept from
            // one and called later (from a library's load) has none.
            raise_text(l, texts().outside_run);
        };
        let buffers = &mut *cur.buffers;
        let request = collect(l, buffers);
        let host = &mut *cur.host;
        let answer = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match mode {
            Mode::AclCheck => match host.acl_check(request) {
                Ok(b) => Answer::Allowed(b),
                Err(e) => Answer::Error(e),
            },
            _ => match host.call(request) {
                Ok(r) if r.first() == Some(&b'-') => Answer::Error(&r[1..line_end(r, 1)]),
                Ok(r) => Answer::Reply(r),
                Err(e) => Answer::Error(e),
            },
        })) {
            Ok(a) => a,
            Err(payload) => {
                PANIC.with(|p| *p.borrow_mut() = Some(payload));
                Answer::Panicked
            }
        };
        let lua = &*cur.lua;
        let _ = lua.set_memory_limit(0);
        let raise = match answer {
            Answer::Reply(r) => {
                let mut at = 0;
                push_reply(l, r, &mut at, 0, true);
                false
            }
            Answer::Allowed(b) => {
                ffi::lua_pushboolean(l, c_int::from(b));
                false
            }
            Answer::Error(e) => {
                push_error(l, e);
                mode != Mode::PCall
            }
            Answer::Panicked => {
                push_error(l, texts().host_failed);
                true
            }
        };
        let _ = lua.set_memory_limit(cur.limit);
        if raise {
            ffi::lua_error(l);
        }
        1
    }
}

/// Raises `{err=text}`.
///
/// # Safety
/// `l` is the state of a running C function, and the caller's frame
/// holds nothing to drop.
unsafe fn raise_text(l: *mut ffi::lua_State, text: &[u8]) -> ! {
    // SAFETY: as the caller promised.
    unsafe {
        push_error(l, text);
        ffi::lua_error(l)
    }
}

/// Pushes `{err=text}`.
///
/// # Safety
/// `l` is a running state with three free stack slots.
unsafe fn push_error(l: *mut ffi::lua_State, text: &[u8]) {
    // SAFETY: as the caller promised; the table stays at -3.
    unsafe {
        ffi::lua_createtable(l, 0, 1);
        push_str(l, b"err");
        push_str(l, text);
        ffi::lua_rawset(l, -3);
    }
}

/// The call's arguments as Redis's `luaArgsToRedisArgv` reads them: a
/// string as it is, a number as an integer when it is one (else in its
/// shortest exact form).
///
/// # Safety
/// `l` is the state of a running C function.
unsafe fn collect<'b>(l: *mut ffi::lua_State, b: &'b mut Buffers) -> Request<'b> {
    // SAFETY: `l` is a running C function's state (the caller's promise);
    // indexes up to its top are its arguments, and a string's bytes stay
    // where they are while it is on the stack.
    unsafe {
        let n = ffi::lua_gettop(l);
        if n == 0 {
            return Request::NoArguments;
        }
        b.argv.clear();
        b.ranges.clear();
        for i in 1..=n {
            let start = b.argv.len();
            match ffi::lua_type(l, i) {
                ffi::LUA_TSTRING => {
                    let mut len = 0usize;
                    let p = ffi::lua_tolstring(l, i, &mut len);
                    b.argv.extend_from_slice(std::slice::from_raw_parts(p as *const u8, len));
                }
                ffi::LUA_TNUMBER => number_arg(ffi::lua_tonumber(l, i), &mut b.argv),
                _ => return Request::BadArgument,
            }
            b.ranges.push((start, b.argv.len() - start));
        }
        Request::Command { argv: &b.argv, ranges: &b.ranges }
    }
}

/// A number argument's bytes: an integer as one, anything else in its
/// shortest exact form.
pub fn number_arg(n: f64, out: &mut Vec<u8>) {
    if n.fract() == 0.0 && n.abs() < 9.2e18 {
        out.extend_from_slice(itoa::Buffer::new().format(n as i64).as_bytes());
    } else {
        out.extend_from_slice(tern_resp::DoubleText::new(n).as_str().as_bytes());
    }
}

/// Where the line starting at `from` ends (its `\r`).
fn line_end(b: &[u8], from: usize) -> usize {
    let from = from.min(b.len());
    memchr::memchr(b'\r', &b[from..]).map_or(b.len(), |i| from + i)
}

/// An integer reply's number (0 if the server's own output were bad).
fn int_of(t: &[u8]) -> i64 {
    tern_resp::parse_i64(t).unwrap_or(0)
}

/// A length, or None for -1 (null).
fn parse_len(t: &[u8]) -> Option<usize> {
    usize::try_from(int_of(t)).ok()
}

fn parse_double(s: &str) -> Option<f64> {
    match s {
        "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" => Some(f64::NAN),
        _ => s.parse().ok(),
    }
}

/// Pushes the reply at `*at` in `b` as a Lua value (when `emit`; else only
/// steps over it), as Redis's `redisProtocolToLuaType` reads it:
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
/// Attributes are read and dropped. The bytes are the server's own
/// output: anything unexpected reads as nil.
///
/// # Safety
/// `l` is a running state with a free stack slot (when `emit`).
unsafe fn push_reply(l: *mut ffi::lua_State, b: &[u8], at: &mut usize, depth: usize, emit: bool) {
    // SAFETY: `l` is a running state (the caller's promise); each level
    // checks for its own stack room before it nests.
    unsafe {
        let Some(&kind) = b.get(*at) else {
            if emit {
                ffi::lua_pushnil(l);
            }
            return;
        };
        let end = line_end(b, *at + 1);
        let text = &b[(*at + 1).min(b.len())..end];
        *at = end + 2;
        // Tables nest at most REPLY_DEPTH_MAX deep, each level with room for
        // itself, a field name, a nested table, a key and a value.
        let nest = emit && depth < REPLY_DEPTH_MAX && ffi::lua_checkstack(l, 6) != 0;
        match kind {
            b':' if emit => ffi::lua_pushnumber(l, int_of(text) as f64),
            b'$' | b'=' => match parse_len(text) {
                None if emit => ffi::lua_pushboolean(l, 0),
                None => {}
                Some(n) => {
                    let body = &b[(*at).min(b.len())..(*at + n).min(b.len())];
                    *at += n + 2;
                    if !emit {
                    } else if kind == b'=' && body.len() >= 4 {
                        ffi::lua_createtable(l, 0, 1);
                        push_str(l, b"verbatim_string");
                        ffi::lua_createtable(l, 0, 2);
                        push_str(l, b"format");
                        push_str(l, &body[..3]);
                        ffi::lua_rawset(l, -3);
                        push_str(l, b"string");
                        push_str(l, &body[4..]);
                        ffi::lua_rawset(l, -3);
                        ffi::lua_rawset(l, -3);
                    } else {
                        push_str(l, body);
                    }
                }
            },
            b'+' | b'-' if emit => {
                ffi::lua_createtable(l, 0, 1);
                push_str(l, if kind == b'+' { b"ok" } else { b"err" });
                push_str(l, text);
                ffi::lua_rawset(l, -3);
            }
            b'*' | b'~' | b'>' => match parse_len(text) {
                None if emit => ffi::lua_pushboolean(l, 0),
                None => {}
                Some(n) => {
                    let set = kind == b'~';
                    if nest {
                        if set {
                            ffi::lua_createtable(l, 0, 1);
                            push_str(l, b"set");
                        }
                        let cap = c_int::try_from(n.min(1 << 16)).unwrap_or(0);
                        if set {
                            ffi::lua_createtable(l, 0, cap);
                        } else {
                            ffi::lua_createtable(l, cap, 0);
                        }
                    } else if emit {
                        ffi::lua_pushnil(l);
                    }
                    for i in 0..n {
                        if *at >= b.len() {
                            break;
                        }
                        push_reply(l, b, at, depth + 1, nest);
                        if !nest {
                            continue;
                        }
                        if set {
                            if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
                                ffi::lua_pop(l, 1);
                            } else {
                                ffi::lua_pushboolean(l, 1);
                                ffi::lua_rawset(l, -3);
                            }
                        } else {
                            ffi::lua_rawseti_(l, -2, c_int::try_from(i + 1).unwrap_or(c_int::MAX));
                        }
                    }
                    if nest && set {
                        ffi::lua_rawset(l, -3);
                    }
                }
            },
            b'%' | b'|' => {
                let n = parse_len(text).unwrap_or(0);
                let attribute = kind == b'|';
                let keep = nest && !attribute;
                if keep {
                    ffi::lua_createtable(l, 0, 1);
                    push_str(l, b"map");
                    ffi::lua_createtable(l, 0, c_int::try_from(n.min(1 << 16)).unwrap_or(0));
                }
                for _ in 0..n {
                    if *at >= b.len() {
                        break;
                    }
                    push_reply(l, b, at, depth + 1, keep);
                    push_reply(l, b, at, depth + 1, keep);
                    if keep {
                        if ffi::lua_type(l, -2) == ffi::LUA_TNIL {
                            ffi::lua_pop(l, 2);
                        } else {
                            ffi::lua_rawset(l, -3);
                        }
                    }
                }
                if attribute {
                    // An attribute decorates the reply after it.
                    return push_reply(l, b, at, depth, emit);
                }
                if keep {
                    ffi::lua_rawset(l, -3);
                } else if emit {
                    ffi::lua_pushnil(l);
                }
            }
            b'#' if emit => ffi::lua_pushboolean(l, c_int::from(text == b"t")),
            b',' if emit => {
                let d = std::str::from_utf8(text).ok().and_then(parse_double).unwrap_or(0.0);
                ffi::lua_createtable(l, 0, 1);
                push_str(l, b"double");
                ffi::lua_pushnumber(l, d);
                ffi::lua_rawset(l, -3);
            }
            b'(' if emit => {
                ffi::lua_createtable(l, 0, 1);
                push_str(l, b"big_number");
                push_str(l, text);
                ffi::lua_rawset(l, -3);
            }
            _ if emit => ffi::lua_pushnil(l),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Outcome;

    /// A host that answers every command with `reply` (or `fail`) and
    /// keeps the arguments it was given.
    struct Canned {
        reply: Vec<u8>,
        fail: Option<Vec<u8>>,
        seen: Vec<Vec<Vec<u8>>>,
        refused: Vec<&'static str>,
        panic: bool,
    }

    impl Canned {
        fn new(reply: &[u8]) -> Canned {
            Canned { reply: reply.to_vec(), fail: None, seen: Vec::new(), refused: Vec::new(), panic: false }
        }
    }

    impl Host for Canned {
        fn call(&mut self, request: Request<'_>) -> Result<&[u8], &[u8]> {
            assert!(!self.panic, "the host failed");
            match request {
                Request::Command { argv, ranges } => self.seen.push(ranges.iter().map(|&(s, n)| argv[s..s + n].to_vec()).collect()),
                Request::NoArguments => self.refused.push("none"),
                Request::BadArgument => self.refused.push("bad"),
            }
            match &self.fail {
                Some(e) => Err(e),
                None => Ok(&self.reply),
            }
        }

        fn acl_check(&mut self, _: Request<'_>) -> Result<bool, &[u8]> {
            Ok(true)
        }
    }

    fn sandbox() -> Sandbox {
        Sandbox::new(
            |lua, globals| {
                let redis = lua.create_table()?;
                Sandbox::install_bridge(lua, &redis, Texts { outside_run: b"ERR outside", host_failed: b"ERR failed" })?;
                globals.raw_set("redis", redis)
            },
            &["redis"],
        )
        .expect("sandbox")
    }

    /// Runs `code` as EVAL would, with `keys` and `argv`: the result, or
    /// the error table's `err`.
    fn eval(sb: &Sandbox, host: &mut Canned, code: &str, keys: &[&[u8]], argv: &[&[u8]]) -> Result<Value, String> {
        let f = sb.compile("@user_script", code.as_bytes()).expect("compiles");
        let key = sb.lua().create_registry_value(f).expect("registry");
        match sb.run_script(&key, keys.iter().copied(), argv.iter().copied(), Pass::Globals, host, 0).expect("runs") {
            Outcome::Done(v) => Ok(v),
            Outcome::Failed(Value::Table(t)) => Err(t.raw_get::<String>("err").expect("err field")),
            Outcome::Failed(other) => Err(format!("{other:?}")),
        }
    }

    fn text(v: Result<Value, String>) -> String {
        match v {
            Ok(Value::String(s)) => s.to_string_lossy(),
            other => panic!("not a string: {other:?}"),
        }
    }

    #[test]
    fn resp2_replies_become_lua_values_as_redis_reads_them() {
        let sb = sandbox();
        let mut host = Canned::new(b"*5\r\n:42\r\n$3\r\nabc\r\n$-1\r\n+OK\r\n*-1\r\n");
        let code = "local r = redis.call('x') \
                    return table.concat({type(r[1]), r[1], r[2], tostring(r[3]), r[4].ok, tostring(r[5])}, ',')";
        assert_eq!(text(eval(&sb, &mut host, code, &[], &[])), "number,42,abc,false,OK,false");
    }

    #[test]
    fn resp3_replies_become_redis_tables() {
        let sb = sandbox();
        let mut host = Canned::new(b"*7\r\n%1\r\n$1\r\nk\r\n,1.5\r\n~2\r\n$1\r\na\r\n$1\r\nb\r\n#t\r\n_\r\n(123\r\n=7\r\ntxt:abc\r\n|1\r\n+a\r\n+b\r\n:7\r\n");
        let code = "local r = redis.call('x') \
                    return table.concat({r[1].map.k.double, tostring(r[2].set.a), tostring(r[2].set.b), tostring(r[3]), \
                      tostring(r[4]), r[5].big_number, r[6].verbatim_string.format, r[6].verbatim_string.string, r[7]}, ',')";
        assert_eq!(text(eval(&sb, &mut host, code, &[], &[])), "1.5,true,true,true,nil,123,txt,abc,7");
    }

    #[test]
    fn an_error_reply_is_raised_by_call_and_returned_by_pcall() {
        let sb = sandbox();
        let mut host = Canned::new(b"-WRONGTYPE no\r\n");
        assert_eq!(eval(&sb, &mut host, "return redis.call('x')", &[], &[]).unwrap_err(), "WRONGTYPE no");
        assert_eq!(text(eval(&sb, &mut host, "return redis.pcall('x').err", &[], &[])), "WRONGTYPE no");
        // Redis's pcall catches the table's text.
        assert_eq!(text(eval(&sb, &mut host, "local ok, e = pcall(redis.call, 'x') return e", &[], &[])), "WRONGTYPE no");
        host.fail = Some(b"ERR refused".to_vec());
        assert_eq!(eval(&sb, &mut host, "redis.call('x')", &[], &[]).unwrap_err(), "ERR refused");
        assert_eq!(text(eval(&sb, &mut host, "return redis.pcall('x').err", &[], &[])), "ERR refused");
    }

    #[test]
    fn arguments_are_strings_and_numbers_as_redis_sends_them() {
        let sb = sandbox();
        let mut host = Canned::new(b"+OK\r\n");
        eval(&sb, &mut host, "redis.call('set', KEYS[1], 3, 2.5, -0.0, 1e20, ARGV[1])", &[b"k\x00"], &[b"v"]).expect("runs");
        let want: Vec<Vec<u8>> = ["set", "k\0", "3", "2.5", "0", "1e+20", "v"].iter().map(|s| s.as_bytes().to_vec()).collect();
        assert_eq!(host.seen, vec![want]);
        eval(&sb, &mut host, "redis.pcall() redis.pcall('x', {}) redis.pcall('x', nil)", &[], &[]).expect("runs");
        assert_eq!(host.refused, ["none", "bad", "bad"]);
    }

    #[test]
    fn keys_and_argv_are_an_evals_and_a_functions_arguments() {
        let sb = sandbox();
        let mut host = Canned::new(b"+OK\r\n");
        let v = text(eval(&sb, &mut host, "return #KEYS .. ':' .. KEYS[2] .. ':' .. #ARGV .. ':' .. ARGV[1]", &[b"a", b"b"], &[b"c"]));
        assert_eq!(v, "2:b:1:c");
        // A function gets them as arguments, and does not see the last
        // script's globals.
        let f = sb.compile("@user_function", b"return function(k, a) return #k .. #a .. tostring(rawget(_G, 'KEYS')) end").expect("compiles");
        let inner: mlua::Function = f.call(()).expect("a function");
        let key = sb.lua().create_registry_value(inner).expect("registry");
        match sb.run_script(&key, [&b"x"[..]].into_iter(), std::iter::empty(), Pass::Arguments, &mut host, 0).expect("runs") {
            Outcome::Done(Value::String(s)) => assert_eq!(s.to_string_lossy(), "10nil"),
            _ => panic!("the function failed"),
        }
    }

    #[test]
    fn a_deeply_nested_reply_stops_nesting_and_keeps_reading() {
        let sb = sandbox();
        let mut reply = b"*2\r\n".to_vec();
        for _ in 0..200 {
            reply.extend_from_slice(b"*1\r\n");
        }
        reply.extend_from_slice(b":1\r\n:9\r\n");
        let mut host = Canned::new(&reply);
        let code = "local r = redis.call('x') local d = 0 local t = r[1] \
                    while type(t) == 'table' do d = d + 1 t = t[1] end return d .. ':' .. r[2]";
        assert_eq!(text(eval(&sb, &mut host, code, &[], &[])), format!("{}:9", REPLY_DEPTH_MAX - 1));
    }

    #[test]
    fn a_hosts_panic_reaches_the_caller_after_the_run() {
        let sb = sandbox();
        let mut host = Canned::new(b"+OK\r\n");
        host.panic = true;
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| eval(&sb, &mut host, "redis.call('x')", &[], &[])));
        assert!(caught.is_err());
        // The state is usable after it.
        host.panic = false;
        assert_eq!(text(eval(&sb, &mut host, "return 'ok'", &[], &[])), "ok");
    }

    #[test]
    fn outside_a_run_redis_call_raises() {
        let sb = sandbox();
        let f: mlua::Function = sb.lua().load("return redis.call").eval().expect("the function");
        assert!(f.call::<Value>("x").is_err());
    }
}
