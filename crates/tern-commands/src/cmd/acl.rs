//! ACL: SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT, GENPASS, LOG,
//! DRYRUN, LOAD, SAVE, HELP. The users and their rules live in
//! `crate::acl`; this file is the commands' replies, Redis 8.4's.

use std::sync::atomic::Ordering;

use tern_resp::Args;

use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::acl::{self, Denied};
use crate::errors;

pub static COMMANDS: &[CommandSpec] = &[CommandSpec::new("acl", -2, 0, &[], super::unknown_subcommand)
    .doc("server", "A container for Access List Control commands.", "6.0.0", "Depends on subcommand.")
    .acl(&["slow"])
    .subs(SUBCOMMANDS)];

const ADMIN_CMD: u32 = ADMIN | NOSCRIPT | LOADING | STALE;
const PLAIN: u32 = NOSCRIPT | LOADING | STALE;
const ALL_NODES: &[&str] = &["request_policy:all_nodes", "response_policy:all_succeeded"];

static SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("cat", -2, PLAIN, &[], cat)
        .doc("server", "Lists the ACL categories, or the commands inside a category.", "6.0.0", "O(1) since the categories and commands are a fixed set.")
        .acl(&["slow"]),
    CommandSpec::new("deluser", -3, ADMIN_CMD, &[], deluser)
        .doc("server", "Deletes ACL users, and terminates their connections.", "6.0.0", "O(1) amortized time considering the typical user.")
        .tips(ALL_NODES),
    CommandSpec::new("dryrun", -4, ADMIN_CMD, &[], dryrun).doc(
        "server",
        "Simulates the execution of a command by a user, without executing the command.",
        "7.0.0",
        "O(1).",
    ),
    CommandSpec::new("genpass", -2, PLAIN, &[], genpass)
        .doc("server", "Generates a pseudorandom, secure password that can be used to identify ACL users.", "6.0.0", "O(1)")
        .acl(&["slow"]),
    CommandSpec::new("getuser", 3, ADMIN_CMD, &[], getuser)
        .doc("server", "Lists the ACL rules of a user.", "6.0.0", "O(N). Where N is the number of password, command and pattern rules that the user has.")
        .history(&[
            ("6.2.0", "Added Pub/Sub channel patterns."),
            ("7.0.0", "Added selectors and changed the format of key and channel patterns from a list to their rule representation."),
        ]),
    CommandSpec::new("help", 2, LOADING | STALE, &[], help)
        .doc("server", "Returns helpful text about the different subcommands.", "6.0.0", "O(1)")
        .acl(&["slow"]),
    CommandSpec::new("list", 2, ADMIN_CMD, &[], list).doc(
        "server",
        "Dumps the effective rules in ACL file format.",
        "6.0.0",
        "O(N). Where N is the number of configured users.",
    ),
    CommandSpec::new("load", 2, ADMIN_CMD, &[], load).doc(
        "server",
        "Reloads the rules from the configured ACL file.",
        "6.0.0",
        "O(N). Where N is the number of configured users.",
    ),
    CommandSpec::new("log", -2, ADMIN_CMD, &[], log)
        .doc("server", "Lists recent security events generated due to ACL rules.", "6.0.0", "O(N) with N being the number of entries shown.")
        .history(&[("7.2.0", "Added entry ID, timestamp created, and timestamp last updated.")]),
    CommandSpec::new("save", 2, ADMIN_CMD, &[], save)
        .doc("server", "Saves the effective ACL rules in the configured ACL file.", "6.0.0", "O(N). Where N is the number of configured users.")
        .tips(ALL_NODES),
    CommandSpec::new("setuser", -3, ADMIN_CMD, &[], setuser)
        .doc("server", "Creates and modifies an ACL user and its rules.", "6.0.0", "O(N). Where N is the number of rules provided.")
        .history(&[("6.2.0", "Added Pub/Sub channel patterns."), ("7.0.0", "Added selectors and key based permissions.")])
        .tips(ALL_NODES),
    CommandSpec::new("users", 2, ADMIN_CMD, &[], users).doc("server", "Lists all ACL users.", "6.0.0", "O(N). Where N is the number of configured users."),
    CommandSpec::new("whoami", 2, PLAIN, &[], whoami)
        .doc("server", "Returns the authenticated username of the current connection.", "6.0.0", "O(1)")
        .acl(&["slow"]),
];

const HELP: &[&str] = &[
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
];

/// Longest password GENPASS makes, in bits.
const GENPASS_MAX_BITS: i64 = 4096;

fn help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::help_lines(ctx, HELP);
}

fn setuser(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let name = args.get(2);
    if acl::user::has_spaces(name) {
        ctx.reply.error(errors::ACL_USERNAME_SPACES);
        return;
    }
    let rules: Vec<&[u8]> = args.iter().skip(3).collect();
    match ctx.srv.acl.set_user(name, &rules) {
        Ok(()) => {
            recheck_subscribers(ctx);
            ctx.reply.ok()
        }
        Err((op, acl::RuleError::UnmatchedParen)) => ctx.reply.error(errors::acl_unmatched_paren(&op)),
        Err((op, e)) => ctx.reply.error(errors::acl_setuser(&op, e.message())),
    }
}

fn deluser(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let names: Vec<&[u8]> = args.iter().skip(2).collect();
    if names.contains(&&b"default"[..]) {
        ctx.reply.error(errors::ACL_DEFAULT_UNDELETABLE);
        return;
    }
    let n = ctx.srv.acl.delete(&names);
    close_clients_of(ctx, &names);
    ctx.reply.int(n as i64);
}

/// Closes the connections authenticated as one of `names` (deleted
/// users): others at once, the caller's after this reply.
fn close_clients_of(ctx: &mut Ctx<'_, '_>, names: &[&[u8]]) {
    let clients: Vec<_> = ctx.srv.clients.lock().values().cloned().collect();
    for sh in clients {
        if !names.contains(&sh.user.lock().as_slice()) {
            continue;
        }
        if sh.id == ctx.client.id {
            ctx.client.authenticated = false;
            ctx.client.close_after_reply = true;
        } else {
            sh.kill.store(true, Ordering::Relaxed);
            ctx.srv.wake(sh.worker);
        }
    }
}

/// After users changed: subscribers whose user no longer allows one of
/// their channels or patterns are closed, the caller after this reply,
/// others by their workers (which look when woken, `subscriptions_allowed`).
fn recheck_subscribers(ctx: &mut Ctx<'_, '_>) {
    if ctx.srv.messaging.pubsub.counts() == (0, 0, 0) {
        return;
    }
    ctx.client.refresh_user(&ctx.srv.acl);
    if !ctx.client.subscriptions_allowed() {
        ctx.client.close_after_reply = true;
    }
    for w in 0..ctx.srv.workers.len() {
        ctx.srv.wake(w);
    }
}

fn getuser(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(u) = ctx.srv.acl.get(args.get(2)) else {
        ctx.reply.null();
        return;
    };
    let r = &mut ctx.reply;
    r.map(6);
    r.bulk(b"flags");
    let flags = u.flag_names();
    r.set(flags.len());
    for f in flags {
        r.bulk(f.as_bytes());
    }
    r.bulk(b"passwords");
    r.array(u.passwords.len());
    for p in &u.passwords {
        r.bulk(p);
    }
    selector(r, u.root());
    r.bulk(b"selectors");
    r.array(u.selectors.len() - 1);
    for s in &u.selectors[1..] {
        r.map(3);
        selector(r, s);
    }
}

fn selector(r: &mut super::Reply<'_>, s: &acl::user::Selector) {
    r.bulk(b"commands");
    r.bulk(s.describe_commands().as_bytes());
    r.bulk(b"keys");
    r.bulk(&s.describe_keys());
    r.bulk(b"channels");
    r.bulk(&s.describe_channels());
}

fn list(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let users = ctx.srv.acl.users();
    ctx.reply.array(users.len());
    for u in users {
        let mut line = b"user ".to_vec();
        line.extend_from_slice(&u.name);
        line.push(b' ');
        line.extend_from_slice(&u.describe());
        ctx.reply.bulk(&line);
    }
}

fn users(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let users = ctx.srv.acl.users();
    ctx.reply.array(users.len());
    for u in users {
        ctx.reply.bulk(&u.name);
    }
}

fn whoami(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let name = ctx.client.user.name.clone();
    ctx.reply.bulk(&name);
}

fn cat(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() > 3 {
        ctx.reply.error(errors::subcommand_syntax(args.get(1), "acl"));
        return;
    }
    let catalog = ctx.srv.acl.catalog();
    match args.try_get(2) {
        None => {
            ctx.reply.array(acl::catalog::CATEGORIES.len());
            for c in acl::catalog::CATEGORIES {
                ctx.reply.bulk(c.as_bytes());
            }
        }
        Some(name) => {
            let Some(bit) = std::str::from_utf8(name).ok().and_then(|n| catalog.category(n)) else {
                ctx.reply.error(errors::acl_unknown_category(name));
                return;
            };
            let ids = catalog.in_category(bit);
            ctx.reply.array(ids.len());
            for id in ids {
                ctx.reply.bulk(catalog.fullname(id).as_bytes());
            }
        }
    }
}

fn genpass(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() > 3 {
        ctx.reply.error(errors::subcommand_syntax(args.get(1), "acl"));
        return;
    }
    let bits = match args.try_get(2) {
        None => 256,
        Some(b) => match tern_resp::parse_i64(b) {
            Some(n) => n,
            None => return ctx.reply.error(errors::NOT_INTEGER),
        },
    };
    if bits <= 0 || bits > GENPASS_MAX_BITS {
        ctx.reply.error(errors::ACL_GENPASS_BITS);
        return;
    }
    let chars = ((bits + 3) / 4) as usize;
    let mut raw = vec![0u8; chars.div_ceil(2)];
    rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut raw);
    let hex = acl::user::hex(&raw);
    ctx.reply.bulk(&hex[..chars]);
}

fn log(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() > 3 {
        ctx.reply.error(errors::subcommand_syntax(args.get(1), "acl"));
        return;
    }
    let mut count = 10i64;
    if let Some(a) = args.try_get(2) {
        if a.eq_ignore_ascii_case(b"reset") {
            ctx.srv.acl.log.lock().reset();
            ctx.reply.ok();
            return;
        }
        match tern_resp::parse_i64(a) {
            Some(n) => count = n.max(0),
            None => return ctx.reply.error(errors::NOT_INTEGER),
        }
    }
    let entries = ctx.srv.acl.log.lock().newest(usize::try_from(count).unwrap_or(usize::MAX));
    let now = ctx.now;
    let r = &mut ctx.reply;
    r.array(entries.len());
    for e in entries {
        r.map(10);
        r.bulk(b"count");
        r.int(e.count as i64);
        r.bulk(b"reason");
        r.bulk(e.reason.name().as_bytes());
        r.bulk(b"context");
        r.bulk(e.context.name().as_bytes());
        r.bulk(b"object");
        r.bulk(&e.object);
        r.bulk(b"username");
        r.bulk(&e.username);
        r.bulk(b"age-seconds");
        r.double(now.saturating_sub(e.ctime) as f64 / 1000.0);
        r.bulk(b"client-info");
        r.bulk(&e.client_info);
        r.bulk(b"entry-id");
        r.int(e.entry_id as i64);
        r.bulk(b"timestamp-created");
        r.int(e.created as i64);
        r.bulk(b"timestamp-last-updated");
        r.int(e.ctime as i64);
    }
}

fn dryrun(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(user) = ctx.srv.acl.get(args.get(2)) else {
        ctx.reply.error(errors::acl_no_user(args.get(2)));
        return;
    };
    let sub = args.tail(3);
    let name = sub.get(0);
    let Some(mut cmd) = ctx.commands.lookup(name) else {
        ctx.reply.error(errors::acl_no_command(name));
        return;
    };
    if !cmd.spec.subcommands.is_empty() && sub.len() >= 2 {
        match ctx.commands.lookup_sub(cmd, sub.get(1)) {
            Some(s) => cmd = s,
            None => return ctx.reply.error(errors::acl_no_command(name)),
        }
    }
    if !cmd.arity_ok(sub.len()) {
        ctx.reply.error(errors::arity(&cmd.fullname));
        return;
    }
    match super::access::check(&user, cmd, sub) {
        Ok(()) => ctx.reply.ok(),
        Err((Denied::Key, pos)) => ctx.reply.bulk(&errors::dryrun_object(&user.name, sub.get(pos), "key")),
        Err((Denied::Channel, pos)) => ctx.reply.bulk(&errors::dryrun_object(&user.name, sub.get(pos), "channel")),
        Err(_) => ctx.reply.bulk(&errors::dryrun_command(&user.name, &cmd.fullname)),
    }
}

fn load(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let path = ctx.srv.config.read().aclfile.clone();
    if path.is_empty() {
        ctx.reply.error(errors::ACL_NO_FILE);
        return;
    }
    match load_file(ctx.srv, &path) {
        Ok(()) => {
            close_clients_without_user(ctx);
            recheck_subscribers(ctx);
            ctx.reply.ok();
        }
        Err(e) => ctx.reply.error(errors::acl_load(&e)),
    }
}

/// Replaces every user with the ACL file's (start-up and ACL LOAD); on any
/// error nothing changes and the error lists every line at fault.
pub fn load_file(srv: &crate::server::Server, path: &str) -> Result<(), String> {
    let text = std::fs::read(path).map_err(|e| format!("Error loading ACLs, opening file '{path}': {}", io_reason(&e)))?;
    let users = srv.acl.users_from_file(path, &text)?;
    srv.acl.replace_all(users);
    Ok(())
}

/// `strerror`'s words for an I/O error, as Redis prints them.
fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// After ACL LOAD: connections whose user is gone are closed.
fn close_clients_without_user(ctx: &mut Ctx<'_, '_>) {
    let gone: Vec<Vec<u8>> = {
        let clients: Vec<_> = ctx.srv.clients.lock().values().cloned().collect();
        clients.iter().map(|sh| sh.user.lock().clone()).filter(|n| ctx.srv.acl.get(n).is_none()).collect()
    };
    let names: Vec<&[u8]> = gone.iter().map(Vec::as_slice).collect();
    close_clients_of(ctx, &names);
}

fn save(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let path = ctx.srv.config.read().aclfile.clone();
    if path.is_empty() {
        ctx.reply.error(errors::ACL_NO_FILE);
        return;
    }
    let text = ctx.srv.acl.file_text();
    let tmp = format!("{path}.tmp-{}-{}", std::process::id(), ctx.now);
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(&text)?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, &path));
    match written {
        Ok(()) => ctx.reply.ok(),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            tern_config::log_warning!("Writing ACL file for ACL SAVE: {}", e);
            ctx.reply.error(errors::ACL_SAVE_FAILED);
        }
    }
}
