//! Running a script: the worker's Lua state, the `redis` table, and what
//! `redis.call` does.
//!
//! Each worker thread has its own Lua state ([`with_worker`]), made the
//! first time it runs a script, compiling each script and library once.
//! A run ([`Run`]) borrows what a command's handler has (the shared
//! state, the lock set, the caller) for as long as the script runs, and
//! is the host `tern_lua::bridge` hands `redis.call`, `redis.pcall` and
//! `redis.acl_check_cmd` to: C functions installed once per state, as
//! Redis's are (a tail call `return redis.call(...)` keeps the script's
//! line in its errors).
//!
//! `redis.call` runs a command as Redis's `scriptCall` does: looked up,
//! arity, `noscript`, the caller's ACL rules, the script's write and
//! memory rules, then `cmd::call` with the script's own client (its
//! database, its protocol) under the script's locks; the bridge reads the
//! reply back into Lua. The script's result becomes the caller's reply in
//! [`super::convert`].

use std::cell::{Cell, RefCell};
use std::rc::Rc;
// hashbrown's default hasher: these maps are looked up per script call.
use hashbrown::HashMap;
use std::sync::Arc;

use tern_lua::mlua::{self, Lua, MultiValue, RegistryKey, Table, Value};
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

/// The `redis` table's parts written in Lua, set up once per state.
/// Arguments: the table, `sha1hex`, `error_reply`, `status_reply`, `log`,
/// the version and its number. `redis.call`, `redis.pcall` and
/// `redis.acl_check_cmd` are C functions (`tern_lua::bridge`), as Redis's
/// are, so that an error `return redis.call(...)` raises still names the
/// script's line.
const REDIS_API: &str = r#"
local redis, sha1hex, error_reply, status_reply, log, version, version_num = ...
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
    static PARTS: RefCell<Option<Box<Parts>>> = const { RefCell::new(None) };
}

/// A run's client, scratch and buffers, reused by the worker's next run.
struct Parts {
    client: Client,
    scratch: Scratch,
    out: OutBuf,
    err: Vec<u8>,
}

impl Parts {
    /// Boxed, so that a run moves a pointer, not the parts.
    fn take(caller: &Client, worker: usize, now: u64, clock: &crate::cmd::Clock) -> Box<Parts> {
        let mut p = PARTS.with(|c| c.borrow_mut().take()).unwrap_or_else(|| {
            Box::new(Parts {
                // Named `lua` where a client's address shows (MONITOR), as Redis's.
                client: Client::new(Arc::new(ClientShared::new(u64::MAX, "lua".into(), String::new(), -1, worker, now)), caller.user.clone(), caller.acl_epoch),
                scratch: Scratch::default(),
                out: OutBuf::new(),
                err: Vec::new(),
            })
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
        // The caller's clock, marked now: the script's commands are timed
        // from here on as the caller's turn times its own.
        p.scratch.clock = *clock;
        p.scratch.clock.mark_now();
        p
    }

    fn put_back(self: Box<Self>) {
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
            let texts = tern_lua::Texts { outside_run: errors::LUA_OUTSIDE_RUN.as_bytes(), host_failed: errors::LUA_COMMAND_FAILED.as_bytes() };
            Sandbox::install_bridge(lua, &redis, texts)?;
            lua.load(REDIS_API).set_name(tern_lua::sandbox::INTERNAL).call::<()>((
                &redis,
                lua.create_function(sha1hex)?,
                lua.create_function(|lua, args: MultiValue| single_field(lua, args, "err"))?,
                lua.create_function(|lua, args: MultiValue| single_field(lua, args, "ok"))?,
                lua.create_function(log)?,
                version,
                num,
            ))?;
            globals.raw_set("redis", &redis)?;
            made = Some(redis);
            Ok(())
        },
        &["redis"],
    )?;
    let redis: Table = made.ok_or_else(|| mlua::Error::runtime("no redis table"))?;
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
    let registered = library::Registered::default();
    let load_globals = library::load_globals(&sandbox, sandbox.lua().create_function(log)?, registered.clone())?;
    Ok(WorkerLua {
        sandbox,
        compiled: HashMap::new(),
        owner: 0,
        epoch: 0,
        reported: 0,
        flags,
        load_globals,
        registered,
        resp3,
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
    /// The client commands run as (Redis's lua client: the caller's
    /// database and user, the protocol the script chose), and its buffers.
    parts: Box<Parts>,
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
    /// Cluster mode: the slot the script's commands have used, and whether
    /// they may use several (`allow-cross-slot-keys`, or no shebang).
    slot: Option<u16>,
    cross_slot: bool,
}

impl<'r, 'ks> Run<'r, 'ks> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(srv: &'ks Server, commands: &'ks CommandTable, locks: &'r mut LockSet<'ks>, stats: &'r WorkerStats, worker: usize, caller: &'r Client, runner: usize, now: u64, clock: &crate::cmd::Clock, script_flags: u32, ro_command: bool) -> Self {
        use crate::scriptcache::flags as sf;
        let compat = script_flags & sf::EVAL_COMPAT_MODE != 0;
        let parts = Parts::take(caller, worker, now, clock);
        Run {
            srv,
            commands,
            locks,
            stats,
            worker,
            caller,
            runner,
            parts,
            gated: false,
            read_only: ro_command || (!compat && script_flags & sf::NO_WRITES != 0),
            allow_oom: !compat && script_flags & sf::ALLOW_OOM != 0,
            oom_at_start: false,
            wrote: false,
            flags: None,
            now,
            slot: None,
            cross_slot: compat || script_flags & sf::ALLOW_CROSS_SLOT != 0,
        }
    }

    /// Ends the run: its client and buffers wait for the worker's next.
    pub fn finish(self) {
        self.parts.put_back();
    }

    /// `text` as the error `redis.call` raises (Redis's script error
    /// shape, its code first).
    fn fail(&mut self, text: &[u8]) -> &[u8] {
        self.parts.err = errors::script_error_text(text);
        &self.parts.err
    }

}

/// The command `redis.call` asked for, or the error for what it was given.
fn requested(request: tern_lua::Request<'_>) -> Result<Args<'_>, &'static str> {
    match request {
        tern_lua::Request::Command { argv, ranges } => Ok(Args::from_parts(argv, ranges)),
        tern_lua::Request::NoArguments => Err(errors::LUA_NO_ARGS),
        tern_lua::Request::BadArgument => Err(errors::LUA_BAD_ARG),
    }
}

impl Run<'_, '_> {
    /// `redis.call` / `redis.pcall`: runs the command as Redis's
    /// `scriptCall` does. Ok: its reply, in the protocol the script chose.
    fn run_command(&mut self, args: Args<'_>) -> Result<&[u8], &[u8]> {
        let mut cmd = match self.commands.lookup(args.get(0)) {
            Some(c) => c,
            None => return Err(self.fail(errors::LUA_UNKNOWN_COMMAND.as_bytes())),
        };
        if !cmd.spec.subcommands.is_empty() && args.len() >= 2 {
            match self.commands.lookup_sub(cmd, args.get(1)) {
                Some(sub) => cmd = sub,
                None => return Err(self.fail(errors::LUA_UNKNOWN_COMMAND.as_bytes())),
            }
        }
        if !cmd.arity_ok(args.len()) {
            return Err(self.fail(errors::LUA_ARITY.as_bytes()));
        }
        if cmd.has(flags::NOSCRIPT) {
            return Err(self.fail(errors::LUA_NOSCRIPT.as_bytes()));
        }
        if !self.caller.user.unrestricted {
            if let Err(why) = cmd::access::check(&self.caller.user, cmd, args) {
                let place = cmd::access::Place::Script(self.runner);
                let msg = cmd::access::refused(self.srv, self.commands, self.caller, cmd, args, why, self.now, place);
                return Err(self.fail(&errors::script_acl(&msg)));
            }
        }
        if self.read_only && cmd.has(flags::WRITE | flags::MAY_REPLICATE) {
            return Err(self.fail(errors::LUA_WRITE_IN_RO.as_bytes()));
        }
        if cmd.has(flags::WRITE) && !self.wrote {
            if !self.srv.repl.writes_allowed() {
                return Err(self.fail(format!("-{}", errors::NOREPLICAS).as_bytes()));
            }
            if crate::persist::writes_refused(self.srv) {
                return Err(self.fail(format!("-{}", errors::MISCONF).as_bytes()));
            }
        }
        if !self.allow_oom && !self.wrote && self.oom_at_start && cmd.has(flags::DENYOOM) {
            return Err(self.fail(format!("-{}", errors::OOM).as_bytes()));
        }
        // Cluster mode: only keys this node serves, in one slot.
        if let Some(cl) = self.srv.cluster.get() {
            if !self.caller.obeys_always() {
                let client = &self.parts.client;
                if let Some(e) = cmd::cluster::script_refusal(self.srv, cl, self.commands, client, cmd, args, &mut self.slot, self.cross_slot) {
                    return Err(self.fail(&e));
                }
            }
        }
        if cmd.has(flags::WRITE) {
            self.wrote = true;
            if let Some(f) = &self.flags {
                f.wrote.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let p = &mut *self.parts;
        p.out.clear();
        let mut reply = Reply::new(&mut p.out, p.client.resp3, self.stats);
        cmd::call(self.srv, self.commands, self.locks, &mut reply, &mut p.client, self.stats, &mut p.scratch, self.worker, cmd, args);
        Ok(&p.out)
    }

    /// `redis.acl_check_cmd(...)`: may the caller run this command?
    fn acl_check(&mut self, args: Args<'_>) -> Result<bool, &[u8]> {
        let mut cmd = match self.commands.lookup(args.get(0)) {
            Some(c) => c,
            None => return Err(self.fail(errors::LUA_ACL_CHECK_COMMAND.as_bytes())),
        };
        if !cmd.spec.subcommands.is_empty() && args.len() >= 2 {
            if let Some(sub) = self.commands.lookup_sub(cmd, args.get(1)) {
                cmd = sub;
            }
        }
        if !cmd.arity_ok(args.len()) {
            return Err(self.fail(errors::LUA_ACL_CHECK_COMMAND.as_bytes()));
        }
        Ok(self.caller.user.unrestricted || cmd::access::check(&self.caller.user, cmd, args).is_ok())
    }
}

/// A run as the bridge reaches it: the run, and the protocol the script
/// chose with `redis.setresp`.
struct Hosted<'a, 'r, 'ks> {
    run: &'a mut Run<'r, 'ks>,
    resp3: &'a Cell<bool>,
}

impl tern_lua::Host for Hosted<'_, '_, '_> {
    fn call(&mut self, request: tern_lua::Request<'_>) -> Result<&[u8], &[u8]> {
        self.run.parts.client.resp3 = self.resp3.get();
        match requested(request) {
            Ok(args) => self.run.run_command(args),
            Err(e) => Err(self.run.fail(e.as_bytes())),
        }
    }

    fn acl_check(&mut self, request: tern_lua::Request<'_>) -> Result<bool, &[u8]> {
        match requested(request) {
            Ok(args) => self.run.acl_check(args),
            Err(e) => Err(self.run.fail(e.as_bytes())),
        }
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
        self.0.end_running();
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
    let name: &str = match &target {
        Target::Script(sha) => std::str::from_utf8(&sha[..]).unwrap_or_default(),
        Target::Function(name) => name,
    };
    let result = with_worker(cache, |w| -> mlua::Result<()> {
        let f = match &target {
            Target::Script(sha) => w.compiled.get(*sha),
            Target::Function(name) => {
                sync_functions(w, cache);
                w.functions.get(&name.to_ascii_lowercase())
            }
        };
        let Some(f) = f else {
            reply.error(if matches!(target, Target::Script(_)) { errors::NOSCRIPT } else { errors::FUNCTION_NOT_FOUND });
            return Ok(());
        };
        let eval = matches!(target, Target::Script(_));
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
            cache.start_running(&w.flags, eval, name, args.iter(), run.now);
            RunningMark(cache)
        });
        // What the script's own code may allocate on top of what the state
        // holds: an allocator limit while Lua code runs, lifted while a
        // command's reply is made Lua values. Its writes to the keyspace
        // are bounded by `maxmemory` as any command's.
        // (From the state's size as last reported: within a grain of it.)
        let limit = w.reported.saturating_add(VM_REPORT_GRAIN + SCRIPT_MEMORY_MAX);
        let keys = args.iter().skip(3).take(numkeys);
        let argv = args.iter().skip(3 + numkeys);
        let pass = if eval { tern_lua::Pass::Globals } else { tern_lua::Pass::Arguments };
        let mut host = Hosted { run: &mut *run, resp3: &w.resp3 };
        let outcome = w.sandbox.run_script(f, keys, argv, pass, &mut host, limit)?;
        drop(mark);
        run.parts.client.resp3 = w.resp3.get();
        let script_resp3 = run.parts.client.resp3;
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
                    (Some(source), Some(line)) => errors::script_failed(&err, name, &source, line),
                    _ => err,
                };
                reply.error(one_line(&msg));
            }
            tern_lua::Outcome::Failed(other) => {
                let text = match other {
                    Value::String(s) => s.to_string_lossy(),
                    _ => "execution failure".to_string(),
                };
                reply.error(errors::script_running(name, &text));
            }
        }
        Ok(())
    });
    if let Err(e) = result.and_then(|r| r) {
        reply.error(errors::script_running(name, &tern_lua::sandbox::error_text(&e)));
    }
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
