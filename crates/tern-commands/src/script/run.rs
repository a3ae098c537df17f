//! Running a script: the worker's Lua state, the `redis` table, and what
//! `redis.call` does.
//!
//! Each worker thread has its own Lua state ([`with_worker`]), made the
//! first time it runs a script, compiling each script and library once.
//! A run ([`Run`]) borrows what a command's handler has (the shared
//! state, the lock set, the caller) for as long as the script runs;
//! `redis.call` and `redis.acl_check_cmd`, which need it, are made for that
//! run only (mlua's scope) and put in the `redis` table, so they are plain
//! C functions to the script, as in Redis (a tail call
//! `return redis.call(...)` keeps the script's line in its errors);
//! `redis.pcall` is a Lua function over `redis.call`.
//!
//! `redis.call` runs a command as Redis's `scriptCall` does: looked up,
//! arity, `noscript`, the caller's ACL rules, the script's write and
//! memory rules, then `cmd::call` with the script's own client (its
//! database, its protocol) under the script's locks; the reply is read
//! back into Lua ([`super::convert`]).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::collections::HashMap;
use std::sync::Arc;

use tern_lua::mlua::{self, Function, Lua, MultiValue, RegistryKey, Table, Value};
use tern_lua::{raise, Sandbox};
use tern_resp::Args;
use tern_store::LockSet;

use super::{convert, library};
use crate::client::{Client, ClientShared};
use crate::cmd::table::{flags, CommandTable};
use crate::cmd::{self, Reply, Scratch};
use crate::errors;
use crate::outbuf::OutBuf;
use crate::scriptcache::{RunFlags, Script, ScriptCache, Sha};
use crate::server::Server;
use crate::stats::WorkerStats;

/// The `redis` table's parts that need no run: set up once per state.
/// Arguments: the table, `sha1hex`, `error_reply`, `status_reply`, `log`.
///
/// `redis.call` itself is made for each run (it reaches the run's client
/// and locks), and is a C function as Redis's is, so that an error it
/// raises from `return redis.call(...)` still names the script's line.
/// `redis.pcall` goes through it, and returns what it raises as the error
/// table (`redis.acl_check_cmd`, which raises too, is made for each run as
/// well).
const REDIS_API: &str = r#"
local redis, sha1hex, error_reply, status_reply, log, version, version_num, err_table = ...
local pcall, rawget = pcall, rawget
redis.pcall = function(...)
    local ok, v = pcall(rawget(redis, "call"), ...)
    if ok then return v end
    return err_table(v)
end
redis.sha1hex = sha1hex
redis.error_reply = error_reply
redis.status_reply = status_reply
redis.log = log
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
redis.REDIS_VERSION, redis.REDIS_VERSION_NUM = version, version_num
-- Scripts have replicated their effects since Redis 7: always true.
redis.replicate_commands = function() return true end
-- Outside the debugger these do nothing, as in Redis.
redis.breakpoint = function() return false end
redis.debug = function() end
"#;

/// A worker's Lua state and what it compiled.
struct WorkerLua {
    sandbox: Sandbox,
    /// The real `redis` table (behind its read-only proxy), where each run
    /// puts its own `call` and `acl_check_cmd`.
    redis: Table,
    /// In the Lua registry, not as handles (see [`library::Registered`]).
    compiled: HashMap<Sha, RegistryKey>,
    /// The cache this state's compiled scripts came from, and its epoch.
    owner: usize,
    epoch: u64,
    /// This state's bytes as last added to the cache's total.
    reported: usize,
    /// The running script's flags, which the state's hook reads.
    flags: Arc<RunFlags>,
    /// What loading libraries sees as globals, and where
    /// `redis.register_function` collects into.
    load_globals: Table,
    registered: library::Registered,
    /// The protocol `redis.setresp` chose for the running script (RESP3).
    resp3: Rc<Cell<bool>>,
    /// EVAL's KEYS and ARGV, filled again for each script (a script
    /// cannot keep a reference to them: the globals are read-only).
    keys: Table,
    argv: Table,
    /// The functions of the loaded libraries by name, as of `fn_epoch`.
    functions: HashMap<String, RegistryKey>,
    fn_epoch: Option<u64>,
}

/// Lua instructions between two looks at SCRIPT KILL's flag.
const KILL_CHECK_EVERY: u32 = 1000;

thread_local! {
    static WORKER: RefCell<Option<WorkerLua>> = const { RefCell::new(None) };
    /// What a run needs besides the Lua state, kept between runs so that
    /// a run allocates none of it.
    static PARTS: RefCell<Option<Parts>> = const { RefCell::new(None) };
}

/// A run's client, scratch and buffers, reused by the worker's next run.
struct Parts {
    client: Client,
    scratch: Scratch,
    out: OutBuf,
    argv: Vec<u8>,
    ranges: Vec<(usize, usize)>,
}

impl Parts {
    fn take(caller: &Client, worker: usize, now: u64) -> Parts {
        let mut p = PARTS.with(|c| c.borrow_mut().take()).unwrap_or_else(|| Parts {
            // Named `lua` where a client's address shows (MONITOR), as Redis's.
            client: Client::new(Arc::new(ClientShared::new(u64::MAX, "lua".into(), String::new(), -1, worker, now)), caller.user.clone(), caller.acl_epoch),
            scratch: Scratch::default(),
            out: OutBuf::new(),
            argv: Vec::new(),
            ranges: Vec::new(),
        });
        let c = &mut p.client;
        c.db = caller.db;
        c.resp3 = false;
        c.authenticated = true;
        if !Arc::ptr_eq(&c.user, &caller.user) {
            c.user = caller.user.clone();
        }
        c.acl_epoch = caller.acl_epoch;
        c.reply_mode = crate::client::ReplyMode::On;
        c.close_after_reply = false;
        c.no_touch = false;
        // A tracking caller's script reads are remembered for the caller,
        // as Redis remembers the keys of the commands a script runs.
        c.tracking = caller.tracking.clone();
        c.on_behalf_of = caller.id;
        p.scratch.clock = crate::cmd::Clock::starting_at(now);
        p
    }

    fn put_back(self) {
        PARTS.with(|c| *c.borrow_mut() = Some(self));
    }
}

/// The most a script may allocate in its run (Lua's memory error past it,
/// as the hook finds it: within 1000 instructions).
const SCRIPT_MEMORY_MAX: usize = 1 << 30;

/// How far a worker's Lua memory moves before the total is told.
const VM_REPORT_GRAIN: usize = 64 << 10;

/// Compiled scripts a worker keeps before it starts over (the cache's
/// evictions are not told to each worker).
const COMPILED_MAX: usize = 2 * crate::scriptcache::EVAL_SCRIPTS_MAX;

fn new_worker() -> mlua::Result<WorkerLua> {
    let mut made = None;
    let sandbox = Sandbox::new(
        |lua, globals| {
            let redis = lua.create_table()?;
            let (version, num) = (crate::REDIS_VERSION, crate::REDIS_VERSION_NUM);
            // What redis.pcall returns for what redis.call raised.
            let err_table = lua.create_function(|lua, v: Value| {
                let t = lua.create_table()?;
                let text = match (&v, tern_lua::sandbox::raised_text(&v)) {
                    (_, Some(text)) => text.to_vec(),
                    // Anything else it raised (out of memory): with a code.
                    (Value::Error(e), None) => errors::script_error_text(tern_lua::sandbox::error_text(e).as_bytes()),
                    (other, None) => errors::script_error_text(format!("{other:?}").as_bytes()),
                };
                t.raw_set("err", lua.create_string(text)?)?;
                Ok(t)
            })?;
            lua.load(REDIS_API).set_name(tern_lua::sandbox::INTERNAL).call::<()>((
                &redis,
                lua.create_function(sha1hex)?,
                lua.create_function(|lua, args: MultiValue| single_field(lua, args, "err"))?,
                lua.create_function(|lua, args: MultiValue| single_field(lua, args, "ok"))?,
                lua.create_function(log)?,
                version,
                num,
                err_table,
            ))?;
            globals.raw_set("redis", &redis)?;
            made = Some(redis);
            Ok(())
        },
        &["redis"],
    )?;
    let redis = made.ok_or_else(|| mlua::Error::runtime("no redis table"))?;
    let flags = Arc::new(RunFlags::default());
    let seen = flags.clone();
    // Once killed, the hook raises at every look, so that a script that
    // catches the error with pcall cannot carry on for long. A library
    // that loads for longer than FUNCTION LOAD allows is stopped the same
    // way.
    sandbox.lua().set_hook(mlua::HookTriggers::new().every_nth_instruction(KILL_CHECK_EVERY), move |_, _| {
        use std::sync::atomic::Ordering::Relaxed;
        if seen.kill.load(Relaxed) {
            return Err(raise(errors::SCRIPT_KILLED.as_bytes()));
        }
        let deadline = seen.deadline_ms.load(Relaxed);
        if deadline != 0 && crate::server::now_ms() > deadline {
            return Err(raise(errors::script_error_text(errors::LIB_LOAD_TIMEOUT.as_bytes())));
        }
        Ok(mlua::VmState::Continue)
    })?;
    let resp3 = Rc::new(Cell::new(false));
    let chosen = resp3.clone();
    redis.raw_set(
        "setresp",
        sandbox.lua().create_function(move |_, args: MultiValue| {
            if args.len() != 1 {
                return Err(raise(errors::script_error_text(errors::LUA_SETRESP_ARGS.as_bytes())));
            }
            let n = number_of(&args[0]);
            if n != 2 && n != 3 {
                return Err(raise(errors::script_error_text(errors::LUA_SETRESP_VERSION.as_bytes())));
            }
            chosen.set(n == 3);
            Ok(())
        })?,
    )?;
    redis.raw_set(
        "set_repl",
        sandbox.lua().create_function(|_, args: MultiValue| {
            if args.len() != 1 {
                return Err(raise(errors::script_error_text(errors::LUA_SET_REPL_ARGS.as_bytes())));
            }
            // A script's effects are what is propagated, so which of them
            // reach the AOF and replicas is not its to choose command by
            // command; the flags are checked as Redis checks them.
            if number_of(&args[0]) & !3 != 0 {
                return Err(raise(errors::script_error_text(errors::LUA_SET_REPL_FLAGS.as_bytes())));
            }
            Ok(())
        })?,
    )?;
    let keys = sandbox.lua().create_table()?;
    let argv = sandbox.lua().create_table()?;
    let registered = library::Registered::default();
    let load_globals = library::load_globals(&sandbox, sandbox.lua().create_function(log)?, registered.clone())?;
    Ok(WorkerLua {
        sandbox,
        redis,
        compiled: HashMap::new(),
        owner: 0,
        epoch: 0,
        reported: 0,
        flags,
        load_globals,
        registered,
        resp3,
        keys,
        argv,
        functions: HashMap::new(),
        fn_epoch: None,
    })
}

/// `redis.sha1hex(s)`.
fn sha1hex(_: &Lua, args: MultiValue) -> mlua::Result<String> {
    if args.len() != 1 {
        return Err(raise(errors::script_error_text(errors::LUA_ARGS.as_bytes())));
    }
    let bytes = match &args[0] {
        Value::String(s) => s.as_bytes().to_vec(),
        Value::Integer(n) => n.to_string().into_bytes(),
        Value::Number(n) => tern_lua::sandbox::number_text(*n).into_bytes(),
        _ => Vec::new(),
    };
    Ok(sha1_hex(&bytes))
}

/// A body's SHA1 as 40 lowercase hex digits.
pub fn sha1_hex(body: &[u8]) -> String {
    String::from_utf8_lossy(&crate::scriptcache::sha_of(body)).into_owned()
}

/// `redis.error_reply(s)` and `redis.status_reply(s)`: `{err=s}` (with a
/// code: `ERR` unless `s` starts with `-CODE`) or `{ok=s}`; a wrong call
/// gets the error table back rather than raising it, as in Redis.
fn single_field(lua: &Lua, args: MultiValue, field: &str) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    match (args.len(), args.front()) {
        (1, Some(Value::String(s))) if field == "err" => {
            let text = s.as_bytes();
            let raw = if text.first() == Some(&b'-') { text.to_vec() } else { [&b"-"[..], &text].concat() };
            t.raw_set("err", lua.create_string(errors::script_error_text(&raw))?)?;
        }
        (1, Some(Value::String(s))) => t.raw_set(field, s.clone())?,
        _ => t.raw_set("err", lua.create_string(errors::script_error_text(errors::LUA_ARGS_TYPE.as_bytes()))?)?,
    }
    Ok(t)
}

/// `redis.log(level, ...)`: the arguments joined by spaces, at `level`.
fn log(_: &Lua, args: MultiValue) -> mlua::Result<()> {
    if args.len() < 2 {
        return Err(raise(errors::script_error_text(errors::LUA_LOG_ARGS.as_bytes())));
    }
    let level = match &args[0] {
        Value::Integer(n) => *n as f64,
        Value::Number(n) => *n,
        Value::String(s) => match s.to_str().ok().and_then(|s| s.trim().parse::<f64>().ok()) {
            Some(n) => n,
            None => return Err(raise(errors::script_error_text(errors::LUA_LOG_LEVEL_TYPE.as_bytes()))),
        },
        _ => return Err(raise(errors::script_error_text(errors::LUA_LOG_LEVEL_TYPE.as_bytes()))),
    };
    let level = match level as i64 {
        0 => tern_config::LogLevel::Debug,
        1 => tern_config::LogLevel::Verbose,
        2 => tern_config::LogLevel::Notice,
        3 => tern_config::LogLevel::Warning,
        _ => return Err(raise(errors::script_error_text(errors::LUA_LOG_LEVEL.as_bytes()))),
    };
    let mut line = Vec::new();
    for (i, a) in args.iter().skip(1).enumerate() {
        let part = match a {
            Value::String(s) => s.as_bytes().to_vec(),
            Value::Integer(n) => n.to_string().into_bytes(),
            Value::Number(n) => tern_lua::sandbox::number_text(*n).into_bytes(),
            _ => continue,
        };
        if i > 0 {
            line.push(b' ');
        }
        line.extend_from_slice(&part);
    }
    tern_config::log::write(level, format_args!("{}", String::from_utf8_lossy(&line)));
    Ok(())
}

/// An argument of `redis.call` as Redis builds it: a string as is, a
/// number as an integer when it is one, else in its shortest exact form.
fn arg_bytes(v: &Value, out: &mut Vec<u8>) -> bool {
    match v {
        Value::String(s) => out.extend_from_slice(&s.as_bytes()),
        Value::Integer(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        Value::Number(n) => {
            if n.fract() == 0.0 && n.abs() < 9.2e18 {
                out.extend_from_slice(itoa::Buffer::new().format(*n as i64).as_bytes());
            } else {
                let mut s = String::new();
                tern_resp::format_double(*n, &mut s);
                out.extend_from_slice(s.as_bytes());
            }
        }
        _ => return false,
    }
    true
}

/// What a script run borrows: the handler's state, and its own.
pub struct Run<'r, 'ks> {
    pub srv: &'ks Server,
    pub commands: &'ks CommandTable,
    pub locks: &'r mut LockSet<'ks>,
    pub stats: &'r WorkerStats,
    pub worker: usize,
    /// The caller: its user's rules apply to every command.
    pub caller: &'r Client,
    /// The command that runs the script (EVAL, EVALSHA...): its id.
    pub runner: usize,
    /// The client commands run as (Redis's lua client): the caller's
    /// database and user, the protocol the script chose.
    pub client: Client,
    /// Runs under the scripts' gate (not inside EXEC): SCRIPT KILL may stop it.
    pub gated: bool,
    /// Refuses writes (EVAL_RO, `no-writes`).
    pub read_only: bool,
    /// May write past `maxmemory` (`allow-oom`).
    pub allow_oom: bool,
    /// Over `maxmemory` as the script started.
    pub oom_at_start: bool,
    /// Has written: later write checks pass, as Redis cannot stop midway.
    pub wrote: bool,
    /// Shared with SCRIPT KILL while the script runs under the gate.
    flags: Option<Arc<RunFlags>>,
    pub now: u64,
    scratch: Scratch,
    out: OutBuf,
    argv: Vec<u8>,
    ranges: Vec<(usize, usize)>,
}


impl<'r, 'ks> Run<'r, 'ks> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(srv: &'ks Server, commands: &'ks CommandTable, locks: &'r mut LockSet<'ks>, stats: &'r WorkerStats, worker: usize, caller: &'r Client, runner: usize, now: u64, script_flags: u32, ro_command: bool) -> Self {
        use crate::scriptcache::flags as sf;
        let compat = script_flags & sf::EVAL_COMPAT_MODE != 0;
        let parts = Parts::take(caller, worker, now);
        Run {
            srv,
            commands,
            locks,
            stats,
            worker,
            caller,
            runner,
            client: parts.client,
            gated: false,
            read_only: ro_command || (!compat && script_flags & sf::NO_WRITES != 0),
            allow_oom: !compat && script_flags & sf::ALLOW_OOM != 0,
            oom_at_start: false,
            wrote: false,
            flags: None,
            now,
            scratch: parts.scratch,
            out: parts.out,
            argv: parts.argv,
            ranges: parts.ranges,
        }
    }

    /// Ends the run: its client and buffers wait for the worker's next.
    pub fn finish(self) {
        Parts { client: self.client, scratch: self.scratch, out: self.out, argv: self.argv, ranges: self.ranges }.put_back();
    }

    /// `redis.call` / `redis.pcall`: the reply as a Lua value, or the
    /// error text (with its code) to raise or return.
    fn call(&mut self, lua: &Lua, args: MultiValue) -> mlua::Result<Result<Value, Vec<u8>>> {
        if args.is_empty() {
            return Ok(Err(errors::script_error_text(errors::LUA_NO_ARGS.as_bytes())));
        }
        self.argv.clear();
        self.ranges.clear();
        for a in args.iter() {
            let start = self.argv.len();
            if !arg_bytes(a, &mut self.argv) {
                return Ok(Err(errors::script_error_text(errors::LUA_BAD_ARG.as_bytes())));
            }
            self.ranges.push((start, self.argv.len() - start));
        }
        let argv = std::mem::take(&mut self.argv);
        let ranges = std::mem::take(&mut self.ranges);
        let r = self.run_command(lua, Args::from_parts(&argv, &ranges));
        self.argv = argv;
        self.ranges = ranges;
        r
    }

    fn run_command(&mut self, lua: &Lua, args: Args<'_>) -> mlua::Result<Result<Value, Vec<u8>>> {
        let fail = |msg: &str| Ok(Err(errors::script_error_text(msg.as_bytes())));
        let mut cmd = match self.commands.lookup(args.get(0)) {
            Some(c) => c,
            None => return fail(errors::LUA_UNKNOWN_COMMAND),
        };
        if !cmd.spec.subcommands.is_empty() && args.len() >= 2 {
            match self.commands.lookup_sub(cmd, args.get(1)) {
                Some(sub) => cmd = sub,
                None => return fail(errors::LUA_UNKNOWN_COMMAND),
            }
        }
        if !cmd.arity_ok(args.len()) {
            return fail(errors::LUA_ARITY);
        }
        if cmd.has(flags::NOSCRIPT) {
            return fail(errors::LUA_NOSCRIPT);
        }
        if !self.caller.user.unrestricted {
            if let Err(why) = cmd::access::check(&self.caller.user, cmd, args) {
                let place = cmd::access::Place::Script(self.runner);
                let msg = cmd::access::refused(self.srv, self.commands, self.caller, cmd, args, why, self.now, place);
                return Ok(Err(errors::script_error_text(&errors::script_acl(&msg))));
            }
        }
        if self.read_only && cmd.has(flags::WRITE | flags::MAY_REPLICATE) {
            return fail(errors::LUA_WRITE_IN_RO);
        }
        if cmd.has(flags::WRITE) && !self.wrote && !self.srv.repl.writes_allowed() {
            return Ok(Err(errors::script_error_text(format!("-{}", errors::NOREPLICAS).as_bytes())));
        }
        if cmd.has(flags::WRITE) && !self.wrote && crate::persist::writes_refused(self.srv) {
            return Ok(Err(errors::script_error_text(format!("-{}", errors::MISCONF).as_bytes())));
        }
        if !self.allow_oom && !self.wrote && self.oom_at_start && cmd.has(flags::DENYOOM) {
            return Ok(Err(errors::script_error_text(format!("-{}", errors::OOM).as_bytes())));
        }
        if cmd.has(flags::WRITE) {
            self.wrote = true;
            if let Some(f) = &self.flags {
                f.wrote.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
        self.out.clear();
        let mut reply = Reply::new(&mut self.out, self.client.resp3, self.stats);
        cmd::call(self.srv, self.commands, self.locks, &mut reply, &mut self.client, self.stats, &mut self.scratch, self.worker, cmd, args);
        let mut at = 0;
        let v = convert::reply_to_lua(lua, &self.out, &mut at)?;
        if let Value::Table(t) = &v {
            if let Value::String(e) = t.raw_get::<Value>("err")? {
                return Ok(Err(e.as_bytes().to_vec()));
            }
        }
        Ok(Ok(v))
    }

    /// `redis.acl_check_cmd(...)`: may the caller run this command?
    fn acl_check(&mut self, args: MultiValue) -> mlua::Result<bool> {
        if args.is_empty() {
            return Err(raise(errors::script_error_text(errors::LUA_NO_ARGS.as_bytes())));
        }
        let mut argv = Vec::new();
        let mut ranges = Vec::new();
        for a in args.iter() {
            let start = argv.len();
            if !arg_bytes(a, &mut argv) {
                return Err(raise(errors::script_error_text(errors::LUA_BAD_ARG.as_bytes())));
            }
            ranges.push((start, argv.len() - start));
        }
        let args = Args::from_parts(&argv, &ranges);
        let mut cmd = match self.commands.lookup(args.get(0)) {
            Some(c) => c,
            None => return Err(raise(errors::script_error_text(errors::LUA_ACL_CHECK_COMMAND.as_bytes()))),
        };
        if !cmd.spec.subcommands.is_empty() && args.len() >= 2 {
            if let Some(sub) = self.commands.lookup_sub(cmd, args.get(1)) {
                cmd = sub;
            }
        }
        if !cmd.arity_ok(args.len()) {
            return Err(raise(errors::script_error_text(errors::LUA_ACL_CHECK_COMMAND.as_bytes())));
        }
        Ok(self.caller.user.unrestricted || cmd::access::check(&self.caller.user, cmd, args).is_ok())
    }
}

/// Runs `f` on this worker's Lua state, made on first use (and made
/// again if it could not be made, e.g. out of memory).
fn with_worker<R>(cache: &ScriptCache, f: impl FnOnce(&mut WorkerLua) -> R) -> mlua::Result<R> {
    WORKER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(new_worker()?);
        }
        let w = slot.as_mut().ok_or_else(|| mlua::Error::runtime("no Lua state"))?;
        let owner = cache as *const ScriptCache as usize;
        if w.owner != owner || w.epoch != cache.epoch() || w.compiled.len() > COMPILED_MAX {
            w.compiled.clear();
            w.sandbox.lua().expire_registry_values();
            if w.owner != owner {
                w.reported = 0;
                w.fn_epoch = None;
            }
            w.owner = owner;
            w.epoch = cache.epoch();
        }
        let r = f(w);
        // Reported in steps, so that workers running scripts do not all
        // write one shared counter at every run.
        let now = w.sandbox.lua().used_memory();
        if now.abs_diff(w.reported) >= VM_REPORT_GRAIN {
            cache.add_vm_bytes(now as isize - w.reported as isize);
            w.reported = now;
        }
        Ok(r)
    })
}

/// Compiles `body` (its shebang skipped) on this worker: Lua's error
/// message if it does not compile.
pub fn compile(cache: &ScriptCache, sha: &Sha, script: &Script) -> Result<(), String> {
    with_worker(cache, |w| {
        if w.compiled.contains_key(sha) {
            return Ok(());
        }
        let f = w.sandbox.compile("@user_script", script.code())?;
        let key = w.sandbox.lua().create_registry_value(f).map_err(|e| tern_lua::sandbox::error_text(&e))?;
        w.compiled.insert(*sha, key);
        Ok(())
    })
    .unwrap_or_else(|e| Err(tern_lua::sandbox::error_text(&e)))
}

/// Runs a library's code (without its metadata line) on this worker, as
/// FUNCTION LOAD checks it: the functions it registers, or the error's
/// text (Redis's, without its `ERR` code).
pub fn load_library(cache: &ScriptCache, body: &[u8]) -> Result<Vec<crate::scriptcache::FunctionInfo>, String> {
    with_worker(cache, |w| {
        let found = load_into(w, body).map(|found| found.into_iter().map(|(info, _)| info).collect());
        w.sandbox.lua().expire_registry_values();
        found
    })
        .unwrap_or_else(|e| Err(tern_lua::sandbox::error_text(&e)))
}

fn load_into(w: &mut WorkerLua, body: &[u8]) -> Result<Vec<(crate::scriptcache::FunctionInfo, RegistryKey)>, String> {
    use std::sync::atomic::Ordering::Relaxed;
    let chunk = w.sandbox.compile("@user_function", body).map_err(|m| format!("Error compiling function: {m}"))?;
    *w.registered.borrow_mut() = Some(Vec::new());
    w.flags.kill.store(false, Relaxed);
    w.flags.deadline_ms.store(crate::server::now_ms() + LOAD_TIMEOUT_MS, Relaxed);
    let outcome = w.sandbox.while_loading(&w.load_globals, || w.sandbox.call(&chunk, ()));
    w.flags.deadline_ms.store(0, Relaxed);
    let found = w.registered.borrow_mut().take().unwrap_or_default();
    let failed = |v: Value| -> String {
        let msg = match &v {
            Value::Table(t) => t.raw_get::<Option<String>>("err").ok().flatten().unwrap_or_default(),
            other => format!("{other:?}"),
        };
        format!("Error registering functions: {msg}")
    };
    match outcome.and_then(|o| o) {
        Ok(tern_lua::Outcome::Done(_)) => Ok(found),
        Ok(tern_lua::Outcome::Failed(v)) => Err(failed(v)),
        Err(e) => Err(format!("Error registering functions: {}", tern_lua::sandbox::error_text(&e))),
    }
}

/// How long a library's code may run while it loads (Redis's
/// LOAD_TIMEOUT_MS).
const LOAD_TIMEOUT_MS: u64 = 500;

/// Loads every library into this worker's state if they changed since it
/// last did.
fn sync_functions(w: &mut WorkerLua, cache: &ScriptCache) {
    let epoch = cache.fn_epoch();
    if w.fn_epoch == Some(epoch) {
        return;
    }
    let libs: Vec<Arc<crate::scriptcache::Library>> = cache.functions.read().iter().cloned().collect();
    w.functions.clear();
    w.sandbox.lua().expire_registry_values();
    for lib in libs {
        // Each was checked when it was loaded; one that fails here (it
        // timed out on a slower run) leaves its functions out.
        if let Ok(found) = load_into(w, lib.body()) {
            for (info, f) in found {
                w.functions.entry(info.name.to_ascii_lowercase()).or_insert(f);
            }
        }
    }
    w.fn_epoch = Some(epoch);
}

/// The running script's mark in the cache, taken off when dropped.
struct RunningMark<'c>(&'c crate::scriptcache::ScriptCache);

impl Drop for RunningMark<'_> {
    fn drop(&mut self) {
        self.0.set_running(None, 0);
    }
}

/// What a run calls: an EVAL script by SHA1, or a library's function.
pub enum Target<'a> {
    Script(&'a Sha),
    Function(&'a str),
}

/// Runs `target` with EVAL's or FCALL's `args` (`numkeys` keys, then the
/// arguments: KEYS and ARGV for a script, the function's two arguments for
/// a function), writing its result (or its error) to `reply`.
pub fn run(run: &mut Run<'_, '_>, reply: &mut Reply<'_>, target: Target<'_>, args: Args<'_>, numkeys: usize) {
    let cache = &run.srv.scripts;
    let name = match &target {
        Target::Script(sha) => String::from_utf8_lossy(&sha[..]).into_owned(),
        Target::Function(name) => name.to_string(),
    };
    let result = with_worker(cache, |w| -> mlua::Result<()> {
        let f = match &target {
            Target::Script(sha) => w.compiled.get(*sha),
            Target::Function(name) => {
                sync_functions(w, cache);
                w.functions.get(&name.to_ascii_lowercase())
            }
        };
        let f = f.map(|key| w.sandbox.lua().registry_value::<Function>(key)).transpose()?;
        let Some(f) = f else {
            reply.error(if matches!(target, Target::Script(_)) { errors::NOSCRIPT } else { errors::FUNCTION_NOT_FOUND });
            return Ok(());
        };
        let lua = w.sandbox.lua().clone();
        let eval = matches!(target, Target::Script(_));
        let (keys_t, argv_t) = if eval {
            (w.keys.clone(), w.argv.clone())
        } else {
            (lua.create_table_with_capacity(numkeys, 0)?, lua.create_table_with_capacity(args.len() - 3 - numkeys, 0)?)
        };
        fill(&lua, &keys_t, args.iter().skip(3).take(numkeys))?;
        fill(&lua, &argv_t, args.iter().skip(3 + numkeys))?;
        if eval {
            w.sandbox.set_global("KEYS", &keys_t)?;
            w.sandbox.set_global("ARGV", &argv_t)?;
        }
        w.resp3.set(false);
        // Under the gate a script may be killed; inside EXEC (where it
        // holds every shard and took no gate) it runs to its end.
        let gated = run.gated;
        w.flags.kill.store(false, std::sync::atomic::Ordering::Relaxed);
        w.flags.wrote.store(false, std::sync::atomic::Ordering::Relaxed);
        // Marked running until the script ends, however it ends (an error
        // out of the Lua state included): a mark left behind would have
        // every other client answered BUSY.
        let mark = gated.then(|| {
            run.flags = Some(w.flags.clone());
            cache.set_running(
                Some(crate::scriptcache::Running {
                    flags: w.flags.clone(),
                    eval,
                    name: name.clone(),
                    command: args.iter().map(|a| a.to_vec()).collect(),
                    started: std::time::Instant::now(),
                }),
                crate::server::now_ms(),
            );
            RunningMark(cache)
        });
        // What the script's own code may allocate on top of what the state
        // holds: an allocator limit while Lua code runs, lifted inside
        // `redis.call` (with a limit set, mlua creates every string in
        // protected mode, a closure each). Its writes to the keyspace are
        // bounded by `maxmemory` as any command's.
        let limit = lua.used_memory().saturating_add(SCRIPT_MEMORY_MAX);        let cell = RefCell::new(&mut *run);
        let resp3 = &w.resp3;
        let call_as_chosen = |lua: &Lua, args: MultiValue| {
            let mut run = cell.borrow_mut();
            run.client.resp3 = resp3.get();
            lua.set_memory_limit(0)?;
            let r = run.call(lua, args);
            lua.set_memory_limit(limit)?;
            r
        };
        let outcome = lua.scope(|scope| {
            let call = scope.create_function(|lua, args: MultiValue| {
                let r = call_as_chosen(lua, args)?;
                r.map_err(raise)
            })?;
            let acl_check = scope.create_function(|_, args: MultiValue| cell.borrow_mut().acl_check(args))?;
            w.redis.raw_set("call", call)?;
            w.redis.raw_set("acl_check_cmd", acl_check)?;
            lua.set_memory_limit(limit)?;
            let r = if eval { w.sandbox.call(&f, ()) } else { w.sandbox.call(&f, (keys_t, argv_t)) };
            lua.set_memory_limit(0)?;
            r
        })?;
        drop(mark);
        // KEYS and ARGV are EVAL's: a function never sees a script's.
        if eval {
            w.sandbox.set_global("KEYS", Value::Nil)?;
            w.sandbox.set_global("ARGV", Value::Nil)?;
        }
        run.client.resp3 = w.resp3.get();
        w.redis.raw_set("call", Value::Nil)?;
        w.redis.raw_set("acl_check_cmd", Value::Nil)?;
        let script_resp3 = run.client.resp3;
        match outcome {
            tern_lua::Outcome::Done(v) => convert::lua_to_reply(reply, &v, script_resp3)?,
            tern_lua::Outcome::Failed(Value::Table(t)) => {
                let err: Vec<u8> = match t.raw_get::<Value>("err")? {
                    Value::String(s) => s.as_bytes().to_vec(),
                    _ => errors::SCRIPT_UNKNOWN_ERROR.as_bytes().to_vec(),
                };
                let source: Option<String> = t.raw_get("source")?;
                let line: Option<i64> = t.raw_get("line")?;
                let msg = match (source, line) {
                    (Some(source), Some(line)) => errors::script_failed(&err, &name, &source, line),
                    _ => err,
                };
                reply.error(one_line(&msg));
            }
            tern_lua::Outcome::Failed(other) => {
                let text = match other {
                    Value::String(s) => s.to_string_lossy(),
                    _ => "execution failure".to_string(),
                };
                reply.error(errors::script_running(&name, &text));
            }
        }
        Ok(())
    });
    if let Err(e) = result.and_then(|r| r) {
        reply.error(errors::script_running(&name, &tern_lua::sandbox::error_text(&e)));
    }
}

/// Makes `t` the array of `items` and nothing else (whatever the last
/// script put in it is gone).
fn fill<'a>(lua: &Lua, t: &Table, items: impl Iterator<Item = &'a [u8]>) -> mlua::Result<()> {
    t.clear()?;
    for (i, item) in items.enumerate() {
        t.raw_set(i + 1, lua.create_string(item)?)?;
    }
    Ok(())
}

/// A Lua number argument as Redis's `lua_tonumber` reads it (0 when not
/// a number).
fn number_of(v: &Value) -> i64 {
    match v {
        Value::Integer(n) => *n,
        Value::Number(n) => *n as i64,
        Value::String(s) => s.to_str().ok().and_then(|s| s.trim().parse::<f64>().ok()).map_or(0, |n| n as i64),
        _ => 0,
    }
}

fn one_line(s: &[u8]) -> Vec<u8> {
    s.iter().map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }).collect()
}
