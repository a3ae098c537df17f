//! Scripting: EVAL, EVALSHA, their `_RO` forms and SCRIPT, with Redis 7+'s
//! semantics.
//!
//! ```text
//!  EVAL body n k.. a..  ─► SHA1 ─► scriptcache (shared: body, shebang flags)
//!                       ─► this worker's Lua state (run.rs): compiled once per worker
//!                       ─► the gate, then the declared keys' shards, pinned and growing
//!                       ─► the script; redis.call ─► cmd::call under the same locks
//!                       ─► the result converted (convert.rs) to the caller's protocol
//! ```
//!
//! Atomicity: a script holds the shards of the keys it declared from the
//! start, and every other shard it touches from the first touch to its
//! end, so no other client sees it half done. One script runs at a time
//! outside EXEC (the scripts' gate in [`crate::scriptcache`]); that is what
//! makes it safe for a script to wait for a shard below one it holds (a
//! key it did not declare), as [`tern_store::LockSet::pin_growing`]
//! explains. Other workers keep serving every shard the script does not
//! hold. Inside EXEC every shard is held already.
//!
//! The Lua side (sandbox, libraries) is the `tern-lua` crate.

mod convert;
mod functions;
mod library;
mod run;

use tern_resp::{parse_i64, Args};

use crate::cmd::keyspec::{index, keynum, ks, ACCESS, RO, RW, UPDATE};
use crate::cmd::table::{flags::*, CommandSpec};
use crate::cmd::Ctx;
use crate::errors;
use crate::scriptcache::{flags as sf, BadShebang, Kill, Script, Sha};

pub use functions::{load_into as load_libraries_into, load_libraries};
pub use run::sha1_hex;

/// The command families of this layer (the table takes them from
/// `engine`, as `cmd` cannot name them).
pub static FAMILIES: &[&[CommandSpec]] = &[COMMANDS, functions::COMMANDS];

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("eval", -3, NOSCRIPT | SKIP_MONITOR | NO_MANDATORY_KEYS | STALE | MANUAL_LOCKS | SCRIPT_FLAGS, &[ks(RW | ACCESS | UPDATE, index(2), keynum(0, 1, 1)).notes("We cannot tell how the keys will be used so we assume the worst, RW and UPDATE")], eval)
        .doc("scripting", "Executes a server-side Lua script.", "2.6.0", "Depends on the script that is executed.")
        .acl(&["slow", "scripting"]),
    CommandSpec::new("evalsha", -3, NOSCRIPT | SKIP_MONITOR | NO_MANDATORY_KEYS | STALE | MANUAL_LOCKS | SCRIPT_FLAGS, &[ks(RW | ACCESS | UPDATE, index(2), keynum(0, 1, 1))], evalsha)
        .doc("scripting", "Executes a server-side Lua script by SHA1 digest.", "2.6.0", "Depends on the script that is executed.")
        .acl(&["slow", "scripting"]),
    CommandSpec::new("eval_ro", -3, NOSCRIPT | SKIP_MONITOR | NO_MANDATORY_KEYS | STALE | READONLY | MANUAL_LOCKS | SCRIPT_FLAGS, &[ks(RO | ACCESS, index(2), keynum(0, 1, 1)).notes("We cannot tell how the keys will be used so we assume the worst, RO and ACCESS")], eval_ro)
        .doc("scripting", "Executes a read-only server-side Lua script.", "7.0.0", "Depends on the script that is executed.")
        .acl(&["slow", "scripting"]),
    CommandSpec::new("evalsha_ro", -3, NOSCRIPT | SKIP_MONITOR | NO_MANDATORY_KEYS | STALE | READONLY | MANUAL_LOCKS | SCRIPT_FLAGS, &[ks(RO | ACCESS, index(2), keynum(0, 1, 1))], evalsha_ro)
        .doc("scripting", "Executes a read-only server-side Lua script by SHA1 digest.", "7.0.0", "Depends on the script that is executed.")
        .acl(&["slow", "scripting"]),
    CommandSpec::new("script", -2, 0, &[], crate::cmd::unknown_subcommand)
        .doc("scripting", "A container for Lua scripts management commands.", "2.6.0", "Depends on subcommand.")
        .subs(&[
            CommandSpec::new("exists", -3, NOSCRIPT | STALE, &[], script_exists)
                .doc("scripting", "Determines whether server-side Lua scripts exist in the script cache.", "2.6.0", "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).")
                .acl(&["slow", "scripting"])
                .tips(&["request_policy:all_shards", "response_policy:agg_logical_and"]),
            CommandSpec::new("flush", -2, NOSCRIPT, &[], script_flush)
                .doc("scripting", "Removes all server-side Lua scripts from the script cache.", "2.6.0", "O(N) with N being the number of scripts in cache")
                .acl(&["slow", "scripting"])
                .history(&[("6.2.0", "Added the `ASYNC` and `SYNC` flushing mode modifiers.")])
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
            CommandSpec::new("help", 2, LOADING | STALE, &[], script_help)
                .doc("scripting", "Returns helpful text about the different subcommands.", "5.0.0", "O(1)")
                .acl(&["slow", "scripting"]),
            CommandSpec::new("kill", 2, NOSCRIPT | ALLOW_BUSY, &[], script_kill)
                .doc("scripting", "Terminates a server-side Lua script during execution.", "2.6.0", "O(1)")
                .acl(&["slow", "scripting"])
                .tips(&["request_policy:all_shards", "response_policy:one_succeeded"]),
            CommandSpec::new("load", 3, NOSCRIPT | STALE, &[], script_load)
                .doc("scripting", "Loads a server-side Lua script to the script cache.", "2.6.0", "O(N) with N being the length in bytes of the script body.")
                .acl(&["slow", "scripting"])
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
        ]),
];

fn eval(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    eval_generic(ctx, args, false, false)
}

fn evalsha(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    eval_generic(ctx, args, true, false)
}

fn eval_ro(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    eval_generic(ctx, args, false, true)
}

fn evalsha_ro(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    eval_generic(ctx, args, true, true)
}

/// A SHA1 as the cache keys it: 40 hex digits, lowercased.
fn sha_key(s: &[u8]) -> Option<Sha> {
    let mut sha: Sha = s.try_into().ok()?;
    sha.make_ascii_lowercase();
    Some(sha)
}

/// A script's shebang flags, or Redis's error for its shebang.
pub fn shebang(body: &[u8]) -> Result<(u32, usize), Vec<u8>> {
    crate::scriptcache::shebang(body).map_err(|e| match e {
        BadShebang::Invalid => errors::SHEBANG_INVALID.as_bytes().to_vec(),
        BadShebang::NoEngine => errors::SHEBANG_NO_ENGINE.as_bytes().to_vec(),
        BadShebang::Engine(e) => errors::shebang_engine(&e),
        BadShebang::Flag(f) => errors::shebang_flag(&f),
        BadShebang::Option(o) => errors::shebang_option(&o),
    })
}

/// Finds (EVALSHA) or caches (EVAL) the script and compiles it on this
/// worker: its SHA1, or the error already replied.
fn prepare(ctx: &mut Ctx<'_, '_>, body_or_sha: &[u8], evalsha: bool) -> Option<(Sha, std::sync::Arc<Script>)> {
    let cache = &ctx.srv.scripts;
    let (sha, script) = if evalsha {
        let found = sha_key(body_or_sha).and_then(|sha| cache.get(&sha).map(|s| (sha, s)));
        let Some(found) = found else {
            ctx.reply.error(errors::NOSCRIPT);
            return None;
        };
        found
    } else {
        let sha = crate::scriptcache::sha_of(body_or_sha);
        match cache.get(&sha) {
            Some(s) => (sha, s),
            None => {
                let script = match shebang(body_or_sha) {
                    Ok((flags, len)) => Script::new(body_or_sha, flags, len),
                    Err(e) => {
                        ctx.reply.error(&e);
                        return None;
                    }
                };
                if let Err(msg) = run::compile(cache, &sha, &script) {
                    ctx.reply.error(errors::script_compile(&msg));
                    return None;
                }
                (sha, cache.insert(sha, script, true))
            }
        }
    };
    if let Err(msg) = run::compile(cache, &sha, &script) {
        ctx.reply.error(errors::script_compile(&msg));
        return None;
    }
    Some((sha, script))
}

/// Redis's `scriptPrepareForRun`: what a script's flags forbid before it
/// starts. True when it may run.
pub(crate) fn may_start(ctx: &mut Ctx<'_, '_>, script_flags: u32, ro: bool) -> bool {
    if script_flags & sf::EVAL_COMPAT_MODE != 0 {
        return true;
    }
    if script_flags & sf::NO_CLUSTER != 0 && ctx.srv.cluster.get().is_some() {
        ctx.reply.error(errors::SCRIPT_NO_CLUSTER);
        return false;
    }
    if script_flags & sf::NO_WRITES == 0 {
        if crate::persist::writes_refused(ctx.srv) {
            ctx.reply.error(errors::SCRIPT_MISCONF);
            return false;
        }
        if ro {
            ctx.reply.error(errors::SCRIPT_WRITE_BY_RO);
            return false;
        }
        if !ctx.srv.repl.writes_allowed() {
            ctx.reply.error(errors::NOREPLICAS);
            return false;
        }
    }
    if oom_at_start(ctx) && script_flags & (sf::ALLOW_OOM | sf::NO_WRITES) == 0 {
        ctx.reply.error(errors::SCRIPT_OOM);
        return false;
    }
    true
}

/// Redis's `pre_command_oom_state`: over `maxmemory` once eviction has
/// done what it can, as the script starts.
fn oom_at_start(ctx: &Ctx<'_, '_>) -> bool {
    ctx.srv.settings.maxmemory() > 0 && crate::maxmemory::make_room(ctx.srv, ctx.now, &ctx.locks.effects) == crate::maxmemory::Room::Full
}

/// Monitors see a script's command before the commands it runs (Redis's
/// evalCommand and fcallCommand feed them first; the table's
/// `skip_monitor` keeps dispatch from feeding them again after).
pub(crate) fn feed_monitors(ctx: &Ctx<'_, '_>, args: Args<'_>) {
    if ctx.srv.monitors.any() {
        crate::cmd::monitor::feed(ctx.srv, ctx.client, ctx.cmd, args);
    }
}

fn eval_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, evalsha: bool, ro: bool) {
    feed_monitors(ctx, args);
    let Some(numkeys) = parse_i64(args.get(2)) else {
        ctx.reply.error(errors::NOT_INTEGER);
        return;
    };
    if numkeys > args.len() as i64 - 3 {
        ctx.reply.error(errors::NUMKEYS_TOO_MANY);
        return;
    }
    if numkeys < 0 {
        ctx.reply.error(errors::NUMKEYS_NEGATIVE);
        return;
    }
    let Some((sha, script)) = prepare(ctx, args.get(1), evalsha) else { return };
    if !may_start(ctx, script.flags, ro) {
        return;
    }
    run_locked(ctx, run::Target::Script(&sha), args, numkeys as usize, script.flags, ro);
}

/// Runs a script or function under the gate and its locks (EVAL and
/// FCALL alike, once their checks passed).
fn run_locked(ctx: &mut Ctx<'_, '_>, target: run::Target<'_>, args: Args<'_>, numkeys: usize, script_flags: u32, ro: bool) {
    // The gate first, then the declared keys' shards (from nothing held,
    // so never waiting with one held); under EXEC everything is held.
    let inside_exec = ctx.locks.is_pinned();
    let mut _gate = None;
    if !inside_exec {
        // Another script runs: wait for it, unless it becomes busy.
        loop {
            if let Some(g) = ctx.srv.scripts.gate.try_lock_for(crate::cmd::BUSY_SLICE) {
                _gate = Some(g);
                break;
            }
            if let Some(e) = crate::cmd::busy_error(ctx.srv, crate::server::now_ms()) {
                return ctx.reply.error(e);
            }
        }
    }
    if !inside_exec {
        ctx.locks.acquire(ctx.locs.iter().map(|l| l.gid));
        ctx.locks.pin_growing();
    }
    // The script's writes reach the AOF as one MULTI/EXEC (inside EXEC,
    // EXEC's own wraps them).
    let effects_from = ctx.locks.effects.len();
    let oom = oom_at_start(ctx);
    let mut r = run::Run::new(ctx.srv, ctx.commands, ctx.locks, ctx.stats, ctx.worker, ctx.client, ctx.cmd.id, ctx.now, ctx.clock, script_flags, ro);
    r.gated = !inside_exec;
    r.oom_at_start = oom;
    run::run(&mut r, &mut ctx.reply, target, args, numkeys);
    r.finish();
    if !inside_exec {
        ctx.locks.gather_effects();
        ctx.locks.effects.wrap_from(effects_from);
        ctx.locks.unpin();
    }
}

fn script_load(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let body = args.get(2);
    let sha_text = sha1_hex(body);
    let Some(sha) = sha_key(sha_text.as_bytes()) else { return };
    let cache = &ctx.srv.scripts;
    if !cache.contains(&sha) {
        let script = match shebang(body) {
            Ok((flags, len)) => Script::new(body, flags, len),
            Err(e) => return ctx.reply.error(&e),
        };
        if let Err(msg) = run::compile(cache, &sha, &script) {
            return ctx.reply.error(errors::script_compile(&msg));
        }
        cache.insert(sha, script, false);
    } else {
        // Loaded now: no longer one of EVAL's evictable scripts.
        let script = cache.get(&sha).map(|s| Script::new(&s.body, s.flags, s.shebang_len));
        if let Some(s) = script {
            cache.insert(sha, s, false);
        }
    }
    ctx.reply.bulk(sha_text.as_bytes());
}

fn script_exists(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    ctx.reply.array(args.len() - 2);
    for a in args.iter().skip(2) {
        let found = sha_key(a).is_some_and(|sha| ctx.srv.scripts.contains(&sha));
        ctx.reply.int(i64::from(found));
    }
}

fn script_flush(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    match args.len() {
        2 => {}
        3 if args.get(2).eq_ignore_ascii_case(b"sync") || args.get(2).eq_ignore_ascii_case(b"async") => {}
        _ => return ctx.reply.error(errors::SCRIPT_FLUSH_MODE),
    }
    ctx.srv.scripts.flush();
    ctx.reply.ok();
}

fn script_kill(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    kill(ctx, true)
}

/// SCRIPT KILL (`eval`) and FUNCTION KILL.
///
/// Redis serves no other client while a script runs until the script is
/// past `busy-reply-threshold`; a kill sent earlier is read then, or after
/// the script ended (NOTBUSY). A kill from another worker waits likewise,
/// so that a script is never stopped before it had the time Redis gives it.
pub(crate) fn kill(ctx: &mut Ctx<'_, '_>, eval: bool) {
    while ctx.srv.scripts.script_running() && crate::cmd::busy_error(ctx.srv, crate::server::now_ms()).is_none() {
        std::thread::sleep(crate::cmd::BUSY_SLICE);
    }
    match ctx.srv.scripts.kill(eval) {
        Kill::Killed => ctx.reply.ok(),
        Kill::NotBusy => ctx.reply.error(errors::NOTBUSY),
        Kill::Unkillable => ctx.reply.error(errors::UNKILLABLE),
        Kill::OtherKind if eval => ctx.reply.error(errors::BUSY_FUNCTION),
        Kill::OtherKind => ctx.reply.error(errors::BUSY_SCRIPT),
    }
}

fn script_help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    crate::cmd::help_lines(
        ctx,
        &[
            "EXISTS <sha1> [<sha1> ...]",
            "    Return information about the existence of the scripts in the script cache.",
            "FLUSH [ASYNC|SYNC]",
            "    Flush the Lua scripts cache. Very dangerous on replicas.",
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
            "    * ASYNC: Asynchronously flush the scripts cache.",
            "    * SYNC: Synchronously flush the scripts cache.",
            "KILL",
            "    Kill the currently executing Lua script.",
            "LOAD <script>",
            "    Load a script into the scripts cache without executing it.",
        ],
    );
}
