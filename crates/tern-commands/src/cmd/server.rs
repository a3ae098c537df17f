//! Server commands: TIME, SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE, SHUTDOWN (INFO is in
//! `info.rs`, COMMAND in `command.rs`, CONFIG in `config.rs`).

use tern_resp::Args;

use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::errors;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("time", 1, LOADING | STALE | FAST, &[], time)
        .doc("server", "Returns the server time.", "2.6.0", "O(1)")
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("shutdown", -1, ADMIN | NOSCRIPT | LOADING | STALE | NO_MULTI | ALLOW_BUSY, &[], shutdown).doc(
        "server",
        "Synchronously saves the database(s) to disk and shuts down the Redis server.",
        "1.0.0",
        "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
    )
        .history(&[("7.0.0", "Added the `NOW`, `FORCE` and `ABORT` modifiers.")]),
    CommandSpec::new("save", 1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | NO_MULTI | MANUAL_LOCKS, &[], save)
        .doc("server", "Synchronously saves the database(s) to disk.", "1.0.0", "O(N) where N is the total number of keys in all databases")
        .acl(&["admin", "slow", "dangerous"]),
    CommandSpec::new("bgsave", -1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING, &[], bgsave)
        .doc("server", "Asynchronously saves the database(s) to disk.", "1.0.0", "O(1)")
        .acl(&["admin", "slow", "dangerous"])
        .history(&[("3.2.2", "Added the `SCHEDULE` option.")]),
    CommandSpec::new("bgrewriteaof", 1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING, &[], bgrewriteaof)
        .doc("server", "Asynchronously rewrites the append-only file to disk.", "1.0.0", "O(1)")
        .acl(&["admin", "slow", "dangerous"]),
    CommandSpec::new("lastsave", 1, LOADING | STALE | FAST, &[], lastsave)
        .doc("server", "Returns the Unix timestamp of the last successful save to disk.", "1.0.0", "O(1)")
        .acl(&["admin", "fast", "dangerous"])
        .tips(&["nondeterministic_output"]),
];

/// SAVE: the whole keyspace to `dir/dbfilename`, every shard held.
fn save(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    if crate::persist::bgsave_active(ctx.srv) {
        ctx.reply.error(errors::BGSAVE_IN_PROGRESS);
        return;
    }
    match ctx.srv.durability().save(ctx.srv, ctx.locks) {
        Ok(_) => ctx.reply.ok(),
        Err(_) => ctx.reply.error(errors::SAVE_FAILED),
    }
}

/// BGSAVE [SCHEDULE]: a point-in-time snapshot written by the saver
/// thread while the workers go on (`crate::persist`). With nothing else
/// that could hold it back (no fork, no AOF rewrite), SCHEDULE only
/// changes what Redis would answer inside a transaction.
fn bgsave(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    match args.len() {
        1 => {}
        2 if args.get(1).eq_ignore_ascii_case(b"schedule") => {}
        _ => {
            ctx.reply.error(errors::SYNTAX);
            return;
        }
    }
    // The snapshot engine runs one snapshot at a time, as Redis one child.
    if args.len() == 1 && ctx.srv.aof.rewrite_running.load(std::sync::atomic::Ordering::Acquire) {
        ctx.reply.error(errors::BGSAVE_CHILD_ACTIVE);
        return;
    }
    match crate::persist::request_bgsave(ctx.srv, ctx.locks.is_pinned()) {
        crate::persist::Bgsave::Started => ctx.reply.simple("Background saving started"),
        crate::persist::Bgsave::Scheduled => ctx.reply.simple("Background saving scheduled"),
        crate::persist::Bgsave::InProgress => ctx.reply.error(errors::BGSAVE_IN_PROGRESS),
    }
}

/// BGREWRITEAOF: a new base from a point-in-time snapshot and a new
/// incremental file from its instant on (`tern-persist`'s `aof`); after a running
/// BGSAVE when there is one, as Redis schedules it behind its child.
fn bgrewriteaof(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    use crate::aofstate::Rewrite;
    match ctx.srv.aof.request_rewrite(crate::persist::bgsave_active(ctx.srv)) {
        Rewrite::Started => ctx.reply.simple("Background append only file rewriting started"),
        Rewrite::Scheduled => ctx.reply.simple("Background append only file rewriting scheduled"),
        Rewrite::InProgress => ctx.reply.error(errors::AOF_REWRITE_IN_PROGRESS),
    }
}

fn lastsave(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    ctx.reply.int(ctx.srv.persist.last_save.load(std::sync::atomic::Ordering::Relaxed) as i64);
}

fn time(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    ctx.reply.array(2);
    ctx.reply.bulk_int(now.as_secs() as i64);
    ctx.reply.bulk_int(i64::from(now.subsec_micros()));
}

fn shutdown(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (mut nosave, mut save, mut abort, mut other) = (false, false, false, false);
    for a in args.tail(1).iter() {
        if a.eq_ignore_ascii_case(b"nosave") {
            nosave = true;
        } else if a.eq_ignore_ascii_case(b"save") {
            save = true;
        } else if a.eq_ignore_ascii_case(b"now") || a.eq_ignore_ascii_case(b"force") {
            other = true;
        } else if a.eq_ignore_ascii_case(b"abort") {
            abort = true;
        } else {
            ctx.reply.error(errors::SYNTAX);
            return;
        }
    }
    if (abort && (nosave || save || other)) || (nosave && save) {
        ctx.reply.error(errors::SYNTAX);
        return;
    }
    if abort {
        // Tern's shutdown does not wait for replicas or a save, so there is
        // never one in progress to abort.
        ctx.reply.error(errors::NO_SHUTDOWN_IN_PROGRESS);
        return;
    }
    tern_config::log_warning!("User requested shutdown...");
    // As Redis: SAVE saves, NOSAVE does not, neither saves when a `save`
    // schedule is set. A failed save keeps the server up.
    let scheduled = !ctx.srv.config.read().save.is_empty();
    if save || (scheduled && !nosave) {
        tern_config::log_notice!("Saving the final RDB snapshot before exiting.");
        if ctx.srv.durability().save(ctx.srv, ctx.locks).is_err() {
            tern_config::log_warning!("Error trying to save the DB, can't exit.");
            ctx.reply.error(errors::SHUTDOWN_FAILED);
            return;
        }
    }
    ctx.srv.persist.shutdown_handled.store(true, std::sync::atomic::Ordering::Relaxed);
    ctx.srv.begin_shutdown();
    ctx.client.close_after_reply = true;
}
