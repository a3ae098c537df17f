//! COMMAND and its subcommands: the command table (`table.rs`) as Redis
//! introspects it.
//!
//! Everything is answered from Tern's own declarations: flags, arity, docs,
//! tips and key specs as declared; the legacy key range and `movablekeys`
//! derived from the key specs (`keyspec::Legacy`); the ACL categories a
//! command's flags imply added to those it declares, as Redis derives them.
//! COMMAND GETKEYS and GETKEYSANDFLAGS run the same key-spec interpreter as
//! dispatch (`keyspec::Keys`).

use tern_resp::Args;

use super::docargs;
use super::keyspec::{self, Begin, Find, KeyFlags, KeySpec};
use super::table::{flags, flags::*, Cmd, CommandSpec, CommandTable};
use super::{Ctx, Reply};
use crate::errors;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("command", -1, LOADING | STALE, &[], command)
        .doc("server", "Returns detailed information about all commands.", "2.8.13", "O(N) where N is the total number of Redis commands")
        .acl(&["connection"])
        .tips(&["nondeterministic_output_order"])
        .subs(&[
            CommandSpec::new("count", 2, LOADING | STALE, &[], command_count)
                .doc("server", "Returns a count of commands.", "2.8.13", "O(1)")
                .acl(&["connection"]),
            CommandSpec::new("docs", -2, LOADING | STALE, &[], command_docs)
                .doc(
                    "server",
                    "Returns documentary information about one, multiple or all commands.",
                    "7.0.0",
                    "O(N) where N is the number of commands to look up",
                )
                .acl(&["connection"])
                .tips(&["nondeterministic_output_order"]),
            CommandSpec::new("getkeys", -3, LOADING | STALE, &[], command_getkeys)
                .doc("server", "Extracts the key names from an arbitrary command.", "2.8.13", "O(N) where N is the number of arguments to the command")
                .acl(&["connection"]),
            CommandSpec::new("getkeysandflags", -3, LOADING | STALE, &[], command_getkeysandflags)
                .doc(
                    "server",
                    "Extracts the key names and access flags for an arbitrary command.",
                    "7.0.0",
                    "O(N) where N is the number of arguments to the command",
                )
                .acl(&["connection"]),
            CommandSpec::new("help", 2, LOADING | STALE, &[], command_help)
                .doc("server", "Returns helpful text about the different subcommands.", "5.0.0", "O(1)")
                .acl(&["connection"]),
            CommandSpec::new("info", -2, LOADING | STALE, &[], command_info)
                .doc("server", "Returns information about one, multiple or all commands.", "2.8.13", "O(N) where N is the number of commands to look up")
        .history(&[("7.0.0", "Allowed to be called with no argument to get info on all commands.")])
                .acl(&["connection"])
                .tips(&["nondeterministic_output_order"]),
            CommandSpec::new("list", -2, LOADING | STALE, &[], command_list)
                .doc("server", "Returns a list of command names.", "7.0.0", "O(N) where N is the total number of Redis commands")
                .acl(&["connection"])
                .tips(&["nondeterministic_output_order"]),
        ]),
];

/// ACL categories in the order Redis lists them.
use crate::acl::catalog::CATEGORIES as ACL_CATEGORIES;

/// The spec's categories plus those Redis implies from the flags: write,
/// read (not for scripting commands), admin+dangerous, pubsub, fast,
/// blocking, and slow for whatever is not fast.
pub(crate) fn acl_categories(spec: &CommandSpec) -> Vec<&'static str> {
    let f = |flag: u32| spec.flags & flag != 0;
    let listed = |c: &str| spec.acl.contains(&c);
    let fast = listed("fast") || f(FAST);
    ACL_CATEGORIES
        .iter()
        .copied()
        .filter(|&c| {
            listed(c)
                || match c {
                    "write" => f(WRITE),
                    "read" => f(READONLY) && !listed("scripting"),
                    "admin" | "dangerous" => f(ADMIN),
                    "pubsub" => f(PUBSUB),
                    "fast" => fast,
                    "slow" => !fast,
                    "blocking" => f(BLOCKING),
                    _ => false,
                }
        })
        .collect()
}

/// A key spec's flags, as a set of status replies.
fn reply_key_flags(ctx: &mut Ctx<'_, '_>, flags: KeyFlags) {
    ctx.reply.set(keyspec::flag_names(flags).count());
    for n in keyspec::flag_names(flags) {
        ctx.reply.simple(n);
    }
}

/// One key spec as COMMAND INFO shows it.
fn reply_key_spec(ctx: &mut Ctx<'_, '_>, ks: &KeySpec) {
    ctx.reply.map(3 + usize::from(!ks.notes.is_empty()));
    if !ks.notes.is_empty() {
        ctx.reply.bulk(b"notes");
        ctx.reply.bulk(ks.notes.as_bytes());
    }
    ctx.reply.bulk(b"flags");
    reply_key_flags(ctx, ks.flags);
    let r = &mut ctx.reply;
    let keyword;
    let (kind, args): (&[u8], &[(&[u8], SpecArg)]) = match ks.begin {
        Begin::Index(i) => (b"index", &[(b"index", SpecArg::Int(i.into()))]),
        Begin::Keyword { keyword: k, startfrom } => {
            keyword = [(&b"keyword"[..], SpecArg::Str(k.as_bytes())), (b"startfrom", SpecArg::Int(startfrom.into()))];
            (b"keyword", &keyword)
        }
        Begin::Unknown => (b"unknown", &[]),
    };
    spec_part(r, b"begin_search", kind, args);
    let (kind, args): (&[u8], &[(&[u8], SpecArg)]) = match ks.find {
        Find::Range { lastkey, keystep, limit } => (
            b"range",
            &[(b"lastkey", SpecArg::Int(lastkey.into())), (b"keystep", SpecArg::Int(keystep.into())), (b"limit", SpecArg::Int(limit.into()))],
        ),
        Find::Keynum { keynumidx, firstkey, keystep } => (
            b"keynum",
            &[(b"keynumidx", SpecArg::Int(keynumidx.into())), (b"firstkey", SpecArg::Int(firstkey.into())), (b"keystep", SpecArg::Int(keystep.into()))],
        ),
        Find::Unknown => (b"unknown", &[]),
    };
    spec_part(r, b"find_keys", kind, args);
}

/// An argument of a key spec's part, as COMMAND INFO shows it.
enum SpecArg<'a> {
    Int(i64),
    Str(&'a [u8]),
}

/// `<part> {type <kind>, spec {<name> <arg> ...}}`: a key spec's
/// `begin_search` or `find_keys`.
fn spec_part(r: &mut Reply, part: &[u8], kind: &[u8], args: &[(&[u8], SpecArg)]) {
    r.bulk(part);
    r.map(2);
    r.bulk(b"type");
    r.bulk(kind);
    r.bulk(b"spec");
    r.map(args.len());
    for (name, arg) in args {
        r.bulk(name);
        match arg {
            SpecArg::Int(i) => r.int(*i),
            SpecArg::Str(s) => r.bulk(s),
        }
    }
}

/// Subcommands of `cmd` in table order (the id map is unordered).
fn subs_of<'a>(commands: &'a CommandTable, cmd: &'a Cmd) -> impl Iterator<Item = &'a Cmd> + 'a {
    cmd.spec.subcommands.iter().filter_map(move |s| commands.lookup_sub(cmd, s.name.as_bytes()))
}

/// COMMAND INFO's 10 fields for one command.
fn reply_command_info(ctx: &mut Ctx<'_, '_>, cmd: &Cmd) {
    let commands = ctx.commands;
    let spec = cmd.spec;
    ctx.reply.array(10);
    ctx.reply.bulk(cmd.fullname.as_bytes());
    ctx.reply.int(i64::from(spec.arity));
    let names: Vec<&str> = flags::NAMES.iter().filter(|&&(f, _)| cmd.has(f)).map(|&(_, n)| n).collect();
    ctx.reply.set(names.len());
    for n in names {
        ctx.reply.simple(n);
    }
    let legacy = cmd.legacy;
    ctx.reply.int(i64::from(legacy.first));
    ctx.reply.int(i64::from(legacy.last));
    ctx.reply.int(i64::from(legacy.step));
    let cats = acl_categories(spec);
    ctx.reply.set(cats.len());
    for c in cats {
        ctx.reply.simple(&format!("@{c}"));
    }
    ctx.reply.set(spec.tips.len());
    for t in spec.tips {
        ctx.reply.bulk(t.as_bytes());
    }
    ctx.reply.set(spec.keys.len());
    for ks in spec.keys {
        reply_key_spec(ctx, ks);
    }
    let subs: Vec<&Cmd> = subs_of(commands, cmd).collect();
    ctx.reply.array(subs.len());
    for s in subs {
        reply_command_info(ctx, s);
    }
}

/// COMMAND DOCS's map for one command.
fn reply_command_docs(ctx: &mut Ctx<'_, '_>, cmd: &Cmd) {
    let commands = ctx.commands;
    let spec = cmd.spec;
    let subs: Vec<&Cmd> = subs_of(commands, cmd).collect();
    let doc_flags = usize::from(spec.deprecated.is_some()) + usize::from(spec.syscmd);
    // MONITOR, as in Redis, documents no complexity.
    let complexity = !spec.complexity.is_empty();
    let fields = 3 + usize::from(complexity) + usize::from(doc_flags > 0) + 2 * usize::from(spec.deprecated.is_some()) + usize::from(!spec.history.is_empty());
    ctx.reply.map(fields + usize::from(!cmd.args.is_empty()) + usize::from(!subs.is_empty()));
    for (k, v) in [("summary", spec.summary), ("since", spec.since), ("group", spec.group), ("complexity", spec.complexity)] {
        if k == "complexity" && !complexity {
            continue;
        }
        ctx.reply.bulk(k.as_bytes());
        ctx.reply.bulk(v.as_bytes());
    }
    if doc_flags > 0 {
        ctx.reply.bulk(b"doc_flags");
        ctx.reply.set(doc_flags);
        if spec.deprecated.is_some() {
            ctx.reply.simple("deprecated");
        }
        if spec.syscmd {
            ctx.reply.simple("syscmd");
        }
    }
    if let Some((since, replaced_by)) = spec.deprecated {
        for (k, v) in [("deprecated_since", since), ("replaced_by", replaced_by)] {
            ctx.reply.bulk(k.as_bytes());
            ctx.reply.bulk(v.as_bytes());
        }
    }
    if !spec.history.is_empty() {
        ctx.reply.bulk(b"history");
        ctx.reply.set(spec.history.len());
        for (version, change) in spec.history {
            ctx.reply.array(2);
            ctx.reply.bulk(version.as_bytes());
            ctx.reply.bulk(change.as_bytes());
        }
    }
    if !cmd.args.is_empty() {
        ctx.reply.bulk(b"arguments");
        docargs::reply_args(&mut ctx.reply, cmd.args);
    }
    if !subs.is_empty() {
        ctx.reply.bulk(b"subcommands");
        ctx.reply.map(subs.len());
        for s in subs {
            ctx.reply.bulk(s.fullname.as_bytes());
            reply_command_docs(ctx, s);
        }
    }
}

/// Looks up `get` or `config|get`, case-insensitively.
fn lookup_fullname<'a>(commands: &'a CommandTable, name: &[u8]) -> Option<&'a Cmd> {
    match name.iter().position(|&c| c == b'|') {
        None => commands.lookup(name),
        Some(p) => {
            let parent = commands.lookup(&name[..p])?;
            commands.lookup_sub(parent, &name[p + 1..])
        }
    }
}

fn command(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let commands = ctx.commands;
    let all: Vec<&Cmd> = commands.top_level().collect();
    ctx.reply.array(all.len());
    for c in all {
        reply_command_info(ctx, c);
    }
}

fn command_count(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let n = ctx.commands.top_level().count();
    ctx.reply.int(n as i64);
}

fn command_info(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() == 2 {
        command(ctx, args);
        return;
    }
    let commands = ctx.commands;
    ctx.reply.array(args.len() - 2);
    for name in args.tail(2).iter() {
        match lookup_fullname(commands, name) {
            Some(c) => reply_command_info(ctx, c),
            None => ctx.reply.null(),
        }
    }
}

fn command_docs(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let commands = ctx.commands;
    let found: Vec<&Cmd> =
        if args.len() == 2 { commands.top_level().collect() } else { args.tail(2).iter().filter_map(|n| lookup_fullname(commands, n)).collect() };
    ctx.reply.map(found.len());
    for c in found {
        ctx.reply.bulk(c.fullname.as_bytes());
        reply_command_docs(ctx, c);
    }
}

fn command_list(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    enum Filter<'a> {
        All,
        Module,
        Acl(Option<&'static str>),
        Pattern(&'a [u8]),
    }
    let filter = match args.len() {
        2 => Filter::All,
        5 if args.get(2).eq_ignore_ascii_case(b"filterby") => {
            let (kind, arg) = (args.get(3), args.get(4));
            if kind.eq_ignore_ascii_case(b"module") {
                Filter::Module
            } else if kind.eq_ignore_ascii_case(b"aclcat") {
                Filter::Acl(ACL_CATEGORIES.iter().copied().find(|c| c.as_bytes().eq_ignore_ascii_case(arg)))
            } else if kind.eq_ignore_ascii_case(b"pattern") {
                Filter::Pattern(arg)
            } else {
                ctx.reply.error(errors::SYNTAX);
                return;
            }
        }
        _ => {
            ctx.reply.error(errors::SYNTAX);
            return;
        }
    };
    let commands = ctx.commands;
    let mut names: Vec<&str> = Vec::new();
    for top in commands.top_level() {
        for c in std::iter::once(top).chain(subs_of(commands, top)) {
            let keep = match filter {
                Filter::All => true,
                // Tern has no modules.
                Filter::Module => false,
                Filter::Acl(cat) => cat.is_some_and(|cat| acl_categories(c.spec).contains(&cat)),
                Filter::Pattern(p) => crate::glob::matches(p, c.fullname.as_bytes(), true),
            };
            if keep {
                names.push(&c.fullname);
            }
        }
    }
    ctx.reply.array(names.len());
    for n in names {
        ctx.reply.bulk(n.as_bytes());
    }
}

fn getkeys(ctx: &mut Ctx<'_, '_>, args: Args<'_>, with_flags: bool) {
    let commands = ctx.commands;
    let target = args.tail(2);
    let Some(mut cmd) = commands.lookup(target.get(0)) else {
        ctx.reply.error(errors::GETKEYS_INVALID_COMMAND);
        return;
    };
    if !cmd.spec.subcommands.is_empty() && target.len() >= 2 {
        match commands.lookup_sub(cmd, target.get(1)) {
            Some(s) => cmd = s,
            None => {
                ctx.reply.error(errors::GETKEYS_INVALID_COMMAND);
                return;
            }
        }
    }
    let declared = cmd.command_keys();
    if !declared.has_keys() {
        ctx.reply.error(errors::GETKEYS_NO_KEYS);
        return;
    }
    if !cmd.arity_ok(target.len()) {
        ctx.reply.error(errors::GETKEYS_INVALID_ARITY);
        return;
    }
    let keys = match declared.getkeys(target) {
        Ok(k) => k,
        Err(e) => {
            ctx.reply.error(e);
            return;
        }
    };
    ctx.reply.array(keys.len());
    for k in keys {
        if with_flags {
            ctx.reply.array(2);
            ctx.reply.bulk(target.get(k.pos));
            reply_key_flags(ctx, k.flags);
        } else {
            ctx.reply.bulk(target.get(k.pos));
        }
    }
}

fn command_getkeys(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    getkeys(ctx, args, false);
}

fn command_getkeysandflags(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    getkeys(ctx, args, true);
}

fn command_help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::help_lines(
        ctx,
        &[
            "(no subcommand)",
            "    Return details about all Redis commands.",
            "COUNT",
            "    Return the total number of commands in this Redis server.",
            "LIST",
            "    Return a list of all commands in this Redis server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "GETKEYS <full-command>",
            "    Return the keys from a full Redis command.",
            "GETKEYSANDFLAGS <full-command>",
            "    Return the keys and the access flags from a full Redis command.",
        ],
    );
}
