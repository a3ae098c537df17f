//! Connection commands: PING, ECHO, QUIT, SELECT, HELLO, AUTH, CLIENT, RESET.

use tern_protocol::Args;

use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::errors;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("ping", -1, FAST | STALE, (0, 0, 0), ping)
        .doc("connection", "Returns the server's liveliness response.", "1.0.0", "O(1)")
        .acl(&["fast", "connection"]),
    CommandSpec::new("echo", 2, FAST, (0, 0, 0), echo)
        .doc("connection", "Returns the given string.", "1.0.0", "O(1)")
        .acl(&["fast", "connection"]),
    CommandSpec::new("quit", -1, ALLOW_BUSY | NO_AUTH | NOSCRIPT | LOADING | STALE | FAST | TX_CONTROL, (0, 0, 0), quit)
        .doc("connection", "Closes the connection.", "1.0.0", "O(1)")
        .acl(&["fast", "connection"]),
    CommandSpec::new("select", 2, LOADING | STALE | FAST, (0, 0, 0), select)
        .doc("connection", "Changes the selected database.", "1.0.0", "O(1)")
        .acl(&["fast", "connection"]),
];

fn ping(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    match args.len() {
        1 => ctx.reply.simple("PONG"),
        2 => ctx.reply.bulk(args.get(1)),
        _ => ctx.arity_error(),
    }
}

fn echo(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    ctx.reply.bulk(args.get(1));
}

fn quit(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    ctx.reply.ok();
    ctx.client.close_after_reply = true;
}

fn select(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(db) = tern_protocol::parse_i64(args.get(1)) else {
        ctx.reply.error(errors::NOT_INTEGER);
        return;
    };
    if db < 0 || db as usize >= ctx.ks.db_count() {
        ctx.reply.error(errors::DB_INDEX_OUT_OF_RANGE);
        return;
    }
    ctx.client.db = db as usize;
    ctx.client.shared.db.store(db as usize, std::sync::atomic::Ordering::Relaxed);
    ctx.reply.ok();
}
