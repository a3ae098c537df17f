//! Functions: FUNCTION and FCALL, FCALL_RO.
//!
//! A library (`#!lua name=mylib` and code that calls
//! `redis.register_function`) is checked on the worker that runs FUNCTION
//! LOAD, by running its code there ([`super::run::load_library`]); the
//! libraries are then shared ([`crate::scriptcache::Libraries`]) and each
//! worker loads them into its own Lua state at its next FCALL after a
//! change. FCALL runs a function as EVAL runs a script, under the same
//! gate and locks ([`super::run_locked`]).

use tern_resp::{parse_i64, Args};

use crate::cmd::keyspec::{index, keynum, ks, ACCESS, RO, RW, UPDATE};
use crate::cmd::table::{flags::*, CommandSpec};
use crate::cmd::Ctx;
use crate::errors;
use crate::scriptcache::{flags as sf, Library, ScriptCache};
use crate::server::Server;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("fcall", -3, NOSCRIPT | SKIP_MONITOR | NO_MANDATORY_KEYS | STALE | MANUAL_LOCKS | SCRIPT_FLAGS, &[ks(RW | ACCESS | UPDATE, index(2), keynum(0, 1, 1)).notes("We cannot tell how the keys will be used so we assume the worst, RW and UPDATE")], fcall)
        .doc("scripting", "Invokes a function.", "7.0.0", "Depends on the function that is executed.")
        .acl(&["slow", "scripting"]),
    CommandSpec::new("fcall_ro", -3, NOSCRIPT | SKIP_MONITOR | NO_MANDATORY_KEYS | STALE | READONLY | MANUAL_LOCKS | SCRIPT_FLAGS, &[ks(RO | ACCESS, index(2), keynum(0, 1, 1)).notes("We cannot tell how the keys will be used so we assume the worst, RO and ACCESS")], fcall_ro)
        .doc("scripting", "Invokes a read-only function.", "7.0.0", "Depends on the function that is executed.")
        .acl(&["slow", "scripting"]),
    CommandSpec::new("function", -2, 0, &[], crate::cmd::unknown_subcommand)
        .doc("scripting", "A container for function commands.", "7.0.0", "Depends on subcommand.")
        .subs(&[
            CommandSpec::new("delete", 3, NOSCRIPT | WRITE, &[], function_delete)
                .doc("scripting", "Deletes a library and its functions.", "7.0.0", "O(1)")
                .acl(&["write", "slow", "scripting"])
                .tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
            CommandSpec::new("dump", 2, NOSCRIPT, &[], function_dump)
                .doc("scripting", "Dumps all libraries into a serialized binary payload.", "7.0.0", "O(N) where N is the number of functions")
                .acl(&["slow", "scripting"]),
            CommandSpec::new("flush", -2, NOSCRIPT | WRITE, &[], function_flush)
                .doc("scripting", "Deletes all libraries and functions.", "7.0.0", "O(N) where N is the number of functions deleted")
                .acl(&["write", "slow", "scripting"])
                .tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
            CommandSpec::new("help", 2, LOADING | STALE, &[], function_help)
                .doc("scripting", "Returns helpful text about the different subcommands.", "7.0.0", "O(1)")
                .acl(&["slow", "scripting"]),
            CommandSpec::new("kill", 2, NOSCRIPT | ALLOW_BUSY, &[], function_kill)
                .doc("scripting", "Terminates a function during execution.", "7.0.0", "O(1)")
                .acl(&["slow", "scripting"])
                .tips(&["request_policy:all_shards", "response_policy:one_succeeded"]),
            CommandSpec::new("list", -2, NOSCRIPT, &[], function_list)
                .doc("scripting", "Returns information about all libraries.", "7.0.0", "O(N) where N is the number of functions")
                .acl(&["slow", "scripting"])
                .tips(&["nondeterministic_output_order"]),
            CommandSpec::new("load", -3, NOSCRIPT | WRITE | DENYOOM, &[], function_load)
                .doc("scripting", "Creates a library.", "7.0.0", "O(1) (considering compilation time is redundant)")
                .acl(&["write", "slow", "scripting"])
                .tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
            CommandSpec::new("restore", -3, NOSCRIPT | WRITE | DENYOOM, &[], function_restore)
                .doc("scripting", "Restores all libraries from a payload.", "7.0.0", "O(N) where N is the number of functions on the payload")
                .acl(&["write", "slow", "scripting"])
                .tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
            CommandSpec::new("stats", 2, NOSCRIPT | ALLOW_BUSY, &[], function_stats)
                .doc("scripting", "Returns information about a function during execution.", "7.0.0", "O(1)")
                .acl(&["slow", "scripting"])
                .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
        ]),
];

fn fcall(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    fcall_generic(ctx, args, false)
}

fn fcall_ro(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    fcall_generic(ctx, args, true)
}

fn fcall_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, ro: bool) {
    super::feed_monitors(ctx, args);
    let name = String::from_utf8_lossy(args.get(1)).into_owned();
    let flags = {
        let libs = ctx.srv.scripts.functions.read();
        match libs.function(&name) {
            Some((lib, i)) => lib.functions[*i].flags,
            None => return ctx.reply.error(errors::FUNCTION_NOT_FOUND),
        }
    };
    let Some(numkeys) = parse_i64(args.get(2)) else {
        return ctx.reply.error(errors::FUNCTION_BAD_NUMKEYS);
    };
    if numkeys > args.len() as i64 - 3 {
        return ctx.reply.error(errors::NUMKEYS_TOO_MANY);
    }
    if numkeys < 0 {
        return ctx.reply.error(errors::NUMKEYS_NEGATIVE);
    }
    if !super::may_start(ctx, flags, ro) {
        return;
    }
    super::run_locked(ctx, super::run::Target::Function(&name), args, numkeys as usize, flags, ro);
}

/// Records a change of the libraries for the AOF (and later replicas) as
/// the command that redoes it, through db 0's first shard, whose lock
/// numbers it among the keyspace's records.
fn propagate(ctx: &mut Ctx<'_, '_>, argv: Vec<&[u8]>) {
    let gid = ctx.ks.gid(0, 0);
    ctx.locks.acquire([gid]);
    ctx.locks.shard(gid).record_command(argv.into_iter().map(Box::from).collect());
}

/// FUNCTION LOAD as the AOF keeps it: with REPLACE, so that a replay
/// over a base that has the library already is the same.
pub fn load_command(code: &[u8]) -> Vec<&[u8]> {
    vec![b"FUNCTION", b"LOAD", b"REPLACE", code]
}

/// Checks a library's payload and runs its code on this worker: the
/// library, or the error's text.
fn build(cache: &ScriptCache, code: &[u8]) -> Result<Library, String> {
    let name = super::library::metadata(code)?;
    let lib = Library { name, code: code.into(), functions: Vec::new() };
    let functions = super::run::load_library(cache, lib.body())?;
    if functions.is_empty() {
        return Err(errors::LIB_NO_FUNCTIONS.into());
    }
    Ok(Library { functions, ..lib })
}

fn function_load(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let mut replace = false;
    let mut at = 2;
    while at < args.len() - 1 {
        if args.get(at).eq_ignore_ascii_case(b"replace") {
            replace = true;
            at += 1;
            continue;
        }
        return ctx.reply.error(errors::function_option(args.get(at)));
    }
    if at >= args.len() {
        return ctx.reply.error(errors::FUNCTION_CODE_MISSING);
    }
    let code = args.get(at);
    // A library of that name is refused before its code runs.
    match super::library::metadata(code) {
        Ok(name) if !replace && ctx.srv.scripts.functions.read().get(&name).is_some() => {
            return ctx.reply.error(errors::function_error(&format!("Library '{name}' already exists")));
        }
        Err(e) => return ctx.reply.error(errors::function_error(&e)),
        Ok(_) => {}
    }
    let lib = match build(&ctx.srv.scripts, code) {
        Ok(lib) => lib,
        Err(e) => return ctx.reply.error(errors::function_error(&e)),
    };
    let name = lib.name.clone();
    match ctx.srv.scripts.change_functions(|libs| {
        let r = libs.join(vec![lib], replace, true);
        (r.is_ok(), r)
    }) {
        Ok(()) => {
            propagate(ctx, load_command(code));
            ctx.reply.bulk(name.as_bytes())
        }
        Err(e) => ctx.reply.error(errors::function_error(&e)),
    }
}

fn function_delete(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let name = String::from_utf8_lossy(args.get(2)).into_owned();
    if ctx.srv.scripts.change_functions(|libs| {
        let gone = libs.delete(&name);
        (gone, gone)
    }) {
        propagate(ctx, vec![b"FUNCTION", b"DELETE", args.get(2)]);
        ctx.reply.ok();
    } else {
        ctx.reply.error(errors::LIBRARY_NOT_FOUND);
    }
}

fn function_flush(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() > 3 {
        return ctx.reply.error(errors::subcommand_syntax(args.get(1), "function"));
    }
    match args.len() {
        2 => {}
        3 if args.get(2).eq_ignore_ascii_case(b"sync") || args.get(2).eq_ignore_ascii_case(b"async") => {}
        _ => return ctx.reply.error(errors::FUNCTION_FLUSH_MODE),
    }
    ctx.srv.scripts.change_functions(|libs| {
        libs.clear();
        (true, ())
    });
    propagate(ctx, vec![b"FUNCTION", b"FLUSH"]);
    ctx.reply.ok();
}

fn function_list(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (mut with_code, mut pattern): (bool, Option<&[u8]>) = (false, None);
    let mut i = 2;
    while i < args.len() {
        let a = args.get(i);
        if !with_code && a.eq_ignore_ascii_case(b"withcode") {
            with_code = true;
        } else if pattern.is_none() && a.eq_ignore_ascii_case(b"libraryname") {
            if i >= args.len() - 1 {
                return ctx.reply.error(errors::FUNCTION_LIST_NO_NAME);
            }
            i += 1;
            pattern = Some(args.get(i));
        } else {
            return ctx.reply.error(errors::function_list_argument(a));
        }
        i += 1;
    }
    let libs = ctx.srv.scripts.functions.read();
    let shown: Vec<_> = libs.iter().filter(|l| pattern.is_none_or(|p| crate::glob::matches(p, l.name.as_bytes(), true))).collect();
    ctx.reply.array(shown.len());
    for lib in shown {
        ctx.reply.map(if with_code { 4 } else { 3 });
        ctx.reply.bulk(b"library_name");
        ctx.reply.bulk(lib.name.as_bytes());
        ctx.reply.bulk(b"engine");
        ctx.reply.bulk(b"LUA");
        ctx.reply.bulk(b"functions");
        ctx.reply.array(lib.functions.len());
        for f in &lib.functions {
            ctx.reply.map(3);
            ctx.reply.bulk(b"name");
            ctx.reply.bulk(f.name.as_bytes());
            ctx.reply.bulk(b"description");
            match &f.description {
                Some(d) => ctx.reply.bulk(d),
                None => ctx.reply.null(),
            }
            ctx.reply.bulk(b"flags");
            let names: Vec<&str> = sf::NAMES.iter().filter(|(_, bit)| f.flags & bit != 0).map(|(n, _)| *n).collect();
            ctx.reply.set(names.len());
            for n in names {
                ctx.reply.simple(n);
            }
        }
        if with_code {
            ctx.reply.bulk(b"library_code");
            ctx.reply.bulk(&lib.code);
        }
    }
}

fn function_dump(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let libs = ctx.srv.scripts.functions.read();
    let payload = tern_store::rdb::dump_functions(libs.iter().map(|l| &l.code[..]));
    drop(libs);
    ctx.reply.bulk(&payload);
}

fn function_restore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    #[derive(PartialEq)]
    enum Policy {
        Append,
        Replace,
        Flush,
    }
    if args.len() > 4 {
        return ctx.reply.error(errors::subcommand_syntax(args.get(1), "function"));
    }
    let policy = match args.len() {
        3 => Policy::Append,
        4 if args.get(3).eq_ignore_ascii_case(b"append") => Policy::Append,
        4 if args.get(3).eq_ignore_ascii_case(b"replace") => Policy::Replace,
        4 if args.get(3).eq_ignore_ascii_case(b"flush") => Policy::Flush,
        _ => return ctx.reply.error(errors::FUNCTION_RESTORE_POLICY),
    };
    let codes = match tern_store::rdb::restore_functions(args.get(2)) {
        Ok(c) => c,
        Err(tern_store::rdb::FunctionsPayload::Footer) => return ctx.reply.error(errors::FUNCTION_RESTORE_PAYLOAD),
        Err(tern_store::rdb::FunctionsPayload::Bad(why)) => return ctx.reply.error(errors::function_error(why)),
    };
    let mut built: Vec<Library> = Vec::with_capacity(codes.len());
    for code in &codes {
        match build(&ctx.srv.scripts, code) {
            // The payload's libraries are joined first among themselves.
            Ok(lib) if built.iter().any(|b| b.name == lib.name) => {
                return ctx.reply.error(errors::function_error(&format!("Library '{}' already exists", lib.name)));
            }
            Ok(lib) => built.push(lib),
            Err(e) => return ctx.reply.error(errors::function_error(&e)),
        }
    }
    let r = ctx.srv.scripts.change_functions(|libs| {
        if policy == Policy::Flush {
            libs.clear();
        }
        let r = libs.join(built, policy != Policy::Append, false);
        (true, r)
    });
    match r {
        Ok(()) => {
            propagate(ctx, args.iter().collect());
            ctx.reply.ok()
        }
        Err(e) => ctx.reply.error(errors::function_error(&e)),
    }
}

/// The libraries of an RDB file, loaded at start-up as FUNCTION RESTORE
/// loads a payload: all of them, or none and the error. `replace`: a
/// library of the same name goes (DEBUG RELOAD MERGE); otherwise it is
/// the error.
pub fn load_libraries(srv: &Server, codes: &[Vec<u8>], replace: bool) -> Result<(), String> {
    load_into(&srv.scripts, codes, replace)
}

/// [`load_libraries`] into `scripts` (the engine gives it to the script
/// cache: [`crate::scriptcache::ScriptCache::load_libraries`]).
pub fn load_into(scripts: &crate::scriptcache::ScriptCache, codes: &[Vec<u8>], replace: bool) -> Result<(), String> {
    if codes.is_empty() {
        return Ok(());
    }
    let built = codes.iter().map(|c| build(scripts, c)).collect::<Result<Vec<_>, _>>()?;
    scripts.change_functions(|libs| {
        let r = libs.join(built, replace, false);
        (r.is_ok(), r)
    })
}

fn function_stats(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    ctx.reply.map(2);
    ctx.reply.bulk(b"running_script");
    match ctx.srv.scripts.running() {
        None => ctx.reply.null(),
        Some(r) => {
            ctx.reply.map(3);
            ctx.reply.bulk(b"name");
            ctx.reply.bulk(r.name.as_bytes());
            ctx.reply.bulk(b"command");
            ctx.reply.array(r.command.len());
            for a in &r.command {
                ctx.reply.bulk(a);
            }
            ctx.reply.bulk(b"duration_ms");
            ctx.reply.int(crate::server::now_ms().saturating_sub(r.started_ms) as i64);
        }
    }
    let libs = ctx.srv.scripts.functions.read();
    ctx.reply.bulk(b"engines");
    ctx.reply.map(1);
    ctx.reply.bulk(b"LUA");
    ctx.reply.map(2);
    ctx.reply.bulk(b"libraries_count");
    ctx.reply.int(libs.len() as i64);
    ctx.reply.bulk(b"functions_count");
    ctx.reply.int(libs.function_count() as i64);
}

fn function_kill(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::kill(ctx, false)
}

fn function_help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    crate::cmd::help_lines(
        ctx,
        &[
            "LOAD [REPLACE] <FUNCTION CODE>",
            "    Create a new library with the given library name and code.",
            "DELETE <LIBRARY NAME>",
            "    Delete the given library.",
            "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
            "    Return general information on all the libraries:",
            "    * Library name",
            "    * The engine used to run the Library",
            "    * Functions list",
            "    * Library code (if WITHCODE is given)",
            "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
            "STATS",
            "    Return information about the current function running:",
            "    * Function name",
            "    * Command used to run the function",
            "    * Duration in MS that the function is running",
            "    If no function is running, return nil",
            "    In addition, returns a list of available engines.",
            "KILL",
            "    Kill the current running function.",
            "FLUSH [ASYNC|SYNC]",
            "    Delete all the libraries.",
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
            "    * ASYNC: Asynchronously flush the libraries.",
            "    * SYNC: Synchronously flush the libraries.",
            "DUMP",
            "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
            "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
            "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
            "    control how to handle existing libraries (default APPEND):",
            "    * FLUSH: delete all existing libraries.",
            "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
            "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
            "      libraries with the new libraries (notice that even on this option there is a chance of failure",
            "      in case of functions name collision with another library).",
        ],
    );
}
