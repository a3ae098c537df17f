//! Server commands: COMMAND, INFO, TIME, SHUTDOWN.
//!
//! COMMAND answers from the command table (`cmd/table.rs`): what Redis
//! keeps as extra data (ACL categories implied by flags, key specs) is
//! derived here from the table's flags and key positions, the way Redis
//! derives its legacy fields the other way round. INFO sums the per-worker
//! counters on read and walks the shards one lock at a time for the
//! keyspace section.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use parking_lot::Mutex;
use tern_resp::Args;

use super::table::{flags, flags::*, Cmd, CommandSpec};
use super::Ctx;
use crate::errors;
use crate::server::{now_ms, Server};

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("command", -1, LOADING | STALE, (0, 0, 0), command)
        .doc("server", "Returns detailed information about all commands.", "2.8.13", "O(N) where N is the total number of Redis commands")
        .acl(&["connection"])
        .tips(&["nondeterministic_output_order"])
        .subs(&[
            CommandSpec::new("count", 2, LOADING | STALE, (0, 0, 0), command_count)
                .doc("server", "Returns a count of commands.", "2.8.13", "O(1)")
                .acl(&["connection"]),
            CommandSpec::new("docs", -2, LOADING | STALE, (0, 0, 0), command_docs)
                .doc(
                    "server",
                    "Returns documentary information about one, multiple or all commands.",
                    "7.0.0",
                    "O(N) where N is the number of commands to look up",
                )
                .acl(&["connection"])
                .tips(&["nondeterministic_output_order"]),
            CommandSpec::new("getkeys", -4, LOADING | STALE, (0, 0, 0), command_getkeys)
                .doc("server", "Extracts the key names from an arbitrary command.", "2.8.13", "O(N) where N is the number of arguments to the command")
                .acl(&["connection"]),
            CommandSpec::new("getkeysandflags", -4, LOADING | STALE, (0, 0, 0), command_getkeysandflags)
                .doc(
                    "server",
                    "Extracts the key names and access flags for an arbitrary command.",
                    "7.0.0",
                    "O(N) where N is the number of arguments to the command",
                )
                .acl(&["connection"]),
            CommandSpec::new("help", 2, LOADING | STALE, (0, 0, 0), command_help)
                .doc("server", "Returns helpful text about the different subcommands.", "5.0.0", "O(1)")
                .acl(&["connection"]),
            CommandSpec::new("info", -2, LOADING | STALE, (0, 0, 0), command_info)
                .doc("server", "Returns information about one, multiple or all commands.", "2.8.13", "O(N) where N is the number of commands to look up")
                .acl(&["connection"])
                .tips(&["nondeterministic_output_order"]),
            CommandSpec::new("list", -2, LOADING | STALE, (0, 0, 0), command_list)
                .doc("server", "Returns a list of command names.", "7.0.0", "O(N) where N is the total number of Redis commands")
                .acl(&["connection"])
                .tips(&["nondeterministic_output_order"]),
        ]),
    CommandSpec::new("info", -1, LOADING | STALE | MANUAL_LOCKS, (0, 0, 0), info)
        .doc("server", "Returns information and statistics about the server.", "1.0.0", "O(1)")
        .acl(&["dangerous"])
        .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
    CommandSpec::new("time", 1, LOADING | STALE | FAST, (0, 0, 0), time)
        .doc("server", "Returns the server time.", "2.6.0", "O(1)")
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("shutdown", -1, ADMIN | NOSCRIPT | LOADING | STALE | NO_MULTI | ALLOW_BUSY, (0, 0, 0), shutdown).doc(
        "server",
        "Synchronously saves the database(s) to disk and shuts down the Redis server.",
        "1.0.0",
        "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
    ),
];

/// Sends Redis's help reply: the title line, then the lines as status
/// replies, then the HELP entry every help ends with.
pub(super) fn reply_help(ctx: &mut Ctx<'_, '_>, cmd: &str, lines: &[&str]) {
    ctx.reply.array(lines.len() + 3);
    ctx.reply.simple(&format!("{cmd} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
    for l in lines {
        ctx.reply.simple(l);
    }
    ctx.reply.simple("HELP");
    ctx.reply.simple("    Prints this help.");
}

// ---------------------------------------------------------------- COMMAND

/// ACL categories in the order Redis lists them.
const ACL_CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// The spec's categories plus those Redis implies from the flags: write,
/// read (not for scripting commands), admin+dangerous, pubsub, fast,
/// blocking, and slow for whatever is not fast.
fn acl_categories(spec: &CommandSpec) -> Vec<&'static str> {
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

/// Where a key spec's keys start: at a fixed index, after a keyword
/// (searched from `startfrom`, backwards when negative), or unknown.
#[derive(Clone, Copy)]
pub enum Begin {
    Index(i64),
    Keyword(&'static str, i64),
    Unknown,
}

/// How many keys follow: a range (`last` relative to the start, or from
/// the end when negative; `limit` divides the rest), a count argument, or
/// unknown.
#[derive(Clone, Copy)]
pub enum Find {
    Range { last: i64, step: i64, limit: i64 },
    Keynum { idx: i64, first: i64, step: i64 },
    Unknown,
}

/// One of Redis's key specs (COMMAND INFO, COMMAND GETKEYS).
#[derive(Clone, Copy)]
pub struct KeySpec {
    pub notes: &'static str,
    pub flags: &'static [&'static str],
    pub begin: Begin,
    pub find: Find,
}

/// Access flags of a command's keys when Redis's data does not know the
/// command: a plain read or write.
fn key_flags(spec: &CommandSpec) -> &'static [&'static str] {
    if spec.flags & WRITE != 0 {
        &["RW", "update"]
    } else {
        &["RO", "access"]
    }
}

/// Redis's tips and key specs for a command, by full name.
fn redis_data(fullname: &str) -> Option<&'static (&'static str, &'static [&'static str], &'static [KeySpec])> {
    REDIS_COMMAND_DATA.binary_search_by(|(n, _, _)| (*n).cmp(fullname)).ok().map(|i| &REDIS_COMMAND_DATA[i])
}

fn tips_of(cmd: &Cmd) -> &'static [&'static str] {
    if !cmd.spec.tips.is_empty() {
        return cmd.spec.tips;
    }
    redis_data(&cmd.fullname).map_or(&[], |d| d.1)
}

/// The command's key specs: Redis's own for a command Redis has, else
/// derived from the table's (first, last, step).
fn key_specs(cmd: &Cmd) -> Vec<KeySpec> {
    if let Some(d) = redis_data(&cmd.fullname) {
        return d.2.to_vec();
    }
    let spec = cmd.spec;
    let (first, last, step) = spec.keys;
    if first <= 0 {
        return Vec::new();
    }
    let last = if last < 0 { i64::from(last) } else { i64::from(last - first) };
    vec![KeySpec {
        notes: "",
        flags: key_flags(spec),
        begin: Begin::Index(i64::from(first)),
        find: Find::Range { last, step: i64::from(step.max(1)), limit: 0 },
    }]
}

fn reply_key_spec(ctx: &mut Ctx<'_, '_>, ks: &KeySpec) {
    let r = &mut ctx.reply;
    r.map(3 + usize::from(!ks.notes.is_empty()));
    if !ks.notes.is_empty() {
        r.bulk(b"notes");
        r.bulk(ks.notes.as_bytes());
    }
    r.bulk(b"flags");
    r.set(ks.flags.len());
    for f in ks.flags {
        r.simple(f);
    }
    r.bulk(b"begin_search");
    r.map(2);
    r.bulk(b"type");
    match ks.begin {
        Begin::Index(i) => {
            r.bulk(b"index");
            r.bulk(b"spec");
            r.map(1);
            r.bulk(b"index");
            r.int(i);
        }
        Begin::Keyword(k, from) => {
            r.bulk(b"keyword");
            r.bulk(b"spec");
            r.map(2);
            r.bulk(b"keyword");
            r.bulk(k.as_bytes());
            r.bulk(b"startfrom");
            r.int(from);
        }
        Begin::Unknown => {
            r.bulk(b"unknown");
            r.bulk(b"spec");
            r.map(0);
        }
    }
    r.bulk(b"find_keys");
    r.map(2);
    r.bulk(b"type");
    match ks.find {
        Find::Range { last, step, limit } => {
            r.bulk(b"range");
            r.bulk(b"spec");
            r.map(3);
            r.bulk(b"lastkey");
            r.int(last);
            r.bulk(b"keystep");
            r.int(step);
            r.bulk(b"limit");
            r.int(limit);
        }
        Find::Keynum { idx, first, step } => {
            r.bulk(b"keynum");
            r.bulk(b"spec");
            r.map(3);
            r.bulk(b"keynumidx");
            r.int(idx);
            r.bulk(b"firstkey");
            r.int(first);
            r.bulk(b"keystep");
            r.int(step);
        }
        Find::Unknown => {
            r.bulk(b"unknown");
            r.bulk(b"spec");
            r.map(0);
        }
    }
}

/// Subcommands of `cmd` in table order (the id map is unordered).
fn subs_of<'a>(srv: &'a Server, cmd: &'a Cmd) -> impl Iterator<Item = &'a Cmd> + 'a {
    cmd.spec.subcommands.iter().filter_map(move |s| srv.commands.lookup_sub(cmd, s.name.as_bytes()))
}

/// COMMAND INFO's 10 fields for one command.
fn reply_command_info(ctx: &mut Ctx<'_, '_>, cmd: &Cmd) {
    let srv = ctx.srv;
    let spec = cmd.spec;
    ctx.reply.array(10);
    ctx.reply.bulk(cmd.fullname.as_bytes());
    ctx.reply.int(i64::from(spec.arity));
    let names: Vec<&str> = flags::NAMES.iter().filter(|(f, _)| spec.flags & f != 0).map(|&(_, n)| n).collect();
    ctx.reply.set(names.len());
    for n in names {
        ctx.reply.simple(n);
    }
    let (first, last, step) = spec.keys;
    ctx.reply.int(i64::from(first));
    ctx.reply.int(i64::from(last));
    ctx.reply.int(i64::from(step));
    let cats = acl_categories(spec);
    ctx.reply.set(cats.len());
    for c in cats {
        ctx.reply.simple(&format!("@{c}"));
    }
    let tips = tips_of(cmd);
    ctx.reply.set(tips.len());
    for t in tips {
        ctx.reply.bulk(t.as_bytes());
    }
    let specs = key_specs(cmd);
    ctx.reply.set(specs.len());
    for ks in &specs {
        reply_key_spec(ctx, ks);
    }
    let subs: Vec<&Cmd> = subs_of(srv, cmd).collect();
    ctx.reply.array(subs.len());
    for s in subs {
        reply_command_info(ctx, s);
    }
}

/// COMMAND DOCS's map for one command.
fn reply_command_docs(ctx: &mut Ctx<'_, '_>, cmd: &Cmd) {
    let srv = ctx.srv;
    let spec = cmd.spec;
    let subs: Vec<&Cmd> = subs_of(srv, cmd).collect();
    ctx.reply.map(4 + usize::from(!subs.is_empty()));
    for (k, v) in [("summary", spec.summary), ("since", spec.since), ("group", spec.group), ("complexity", spec.complexity)] {
        ctx.reply.bulk(k.as_bytes());
        ctx.reply.bulk(v.as_bytes());
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
fn lookup_fullname<'a>(srv: &'a Server, name: &[u8]) -> Option<&'a Cmd> {
    match name.iter().position(|&c| c == b'|') {
        None => srv.commands.lookup(name),
        Some(p) => {
            let parent = srv.commands.lookup(&name[..p])?;
            srv.commands.lookup_sub(parent, &name[p + 1..])
        }
    }
}

fn command(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let srv = ctx.srv;
    let all: Vec<&Cmd> = srv.commands.top_level().collect();
    ctx.reply.array(all.len());
    for c in all {
        reply_command_info(ctx, c);
    }
}

fn command_count(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let n = ctx.srv.commands.top_level().count();
    ctx.reply.int(n as i64);
}

fn command_info(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() == 2 {
        command(ctx, args);
        return;
    }
    let srv = ctx.srv;
    ctx.reply.array(args.len() - 2);
    for name in args.tail(2).iter() {
        match lookup_fullname(srv, name) {
            Some(c) => reply_command_info(ctx, c),
            None => ctx.reply.null(),
        }
    }
}

fn command_docs(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let srv = ctx.srv;
    let found: Vec<&Cmd> =
        if args.len() == 2 { srv.commands.top_level().collect() } else { args.tail(2).iter().filter_map(|n| lookup_fullname(srv, n)).collect() };
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
    let srv = ctx.srv;
    let mut names: Vec<&str> = Vec::new();
    for top in srv.commands.top_level() {
        for c in std::iter::once(top).chain(subs_of(srv, top)) {
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

/// A key found in a command line: its position and access flags.
type FoundKey = (usize, &'static [&'static str]);

/// Redis's getKeysUsingKeySpecs: `None` when a spec does not fit the
/// arguments (or cannot be followed), so that a command-specific finder
/// may take over.
fn keys_by_specs(specs: &[KeySpec], args: Args<'_>) -> Option<Vec<FoundKey>> {
    let argc = args.len() as i64;
    let mut keys = Vec::new();
    for ks in specs {
        let mut first = match ks.begin {
            Begin::Index(i) => i,
            Begin::Keyword(kw, from) => {
                let start = if from > 0 { from } else { argc + from };
                let end = if from > 0 { argc - 1 } else { 1 };
                let mut i = start;
                let mut found = None;
                loop {
                    if i >= argc || i < 1 {
                        break;
                    }
                    if args.get(i as usize).eq_ignore_ascii_case(kw.as_bytes()) {
                        found = Some(i + 1);
                        break;
                    }
                    if i == end {
                        break;
                    }
                    i += if start <= end { 1 } else { -1 };
                }
                match found {
                    Some(f) => f,
                    None => continue,
                }
            }
            Begin::Unknown => return None,
        };
        let (last, step) = match ks.find {
            Find::Range { last, step, limit } => {
                let l = if last >= 0 {
                    first + last
                } else if limit == 0 {
                    argc + last
                } else {
                    first + ((argc - first) / limit + last)
                };
                (l, step)
            }
            Find::Keynum { idx, first: fk, step } => {
                if idx >= argc - first {
                    return None;
                }
                let n = tern_resp::parse_i64(args.get((first + idx) as usize)).filter(|&n| n >= 0)?;
                first += fk;
                (first + n - 1, step)
            }
            Find::Unknown => return None,
        };
        if last >= argc || first >= argc {
            return None;
        }
        // A count of 0 is refused too: Redis then asks the command's own
        // key finder, which wants at least one key.
        if last < first {
            return None;
        }
        let mut i = first;
        while i <= last {
            keys.push((i as usize, ks.flags));
            i += step.max(1);
        }
    }
    Some(keys)
}

/// Keys of the commands whose specs cannot say (Redis's getkeys procs).
fn keys_by_proc(name: &str, args: Args<'_>) -> Option<Vec<FoundKey>> {
    let argc = args.len();
    let lower = |i: usize| args.get(i).to_ascii_lowercase();
    let mut keys: Vec<FoundKey> = Vec::new();
    match name {
        "sort" | "sort_ro" => {
            keys.push((1, &["RO", "access"]));
            let mut i = 2;
            while i < argc {
                match lower(i).as_slice() {
                    b"limit" => i += 2,
                    b"get" | b"by" => i += 1,
                    b"store" if name == "sort" && i + 1 < argc => {
                        keys.push((i + 1, &["OW", "update"]));
                        i += 1;
                    }
                    _ => {}
                }
                i += 1;
            }
            Some(keys)
        }
        "migrate" => {
            if args.get(3).is_empty() {
                if let Some(at) = (6..argc).find(|&i| lower(i) == b"keys") {
                    keys.extend((at + 1..argc).map(|i| (i, &["RW", "access", "delete"][..])));
                    return Some(keys);
                }
            }
            keys.push((3, &["RW", "access", "delete"]));
            Some(keys)
        }
        _ => None,
    }
}

/// Positions of the keys (and their access flags) in a full command line
/// `args` for `cmd`, as Redis finds them. `None` when the arguments do not
/// make sense for the command.
fn find_keys(cmd: &Cmd, args: Args<'_>) -> Option<Vec<FoundKey>> {
    let specs = key_specs(cmd);
    let mut found = keys_by_specs(&specs, args).or_else(|| keys_by_proc(cmd.spec.name, args))?;
    // Commands whose key flags depend on the arguments.
    let has = |w: &[u8]| args.iter().skip(2).any(|a| a.eq_ignore_ascii_case(w));
    match cmd.spec.name {
        "set" => {
            let flags: &'static [&'static str] = if has(b"get") { &["RW", "access", "update"] } else { &["OW", "update"] };
            found.iter_mut().for_each(|k| k.1 = flags);
        }
        "bitfield" => {
            let flags: &'static [&'static str] = if has(b"set") || has(b"incrby") { &["RW", "access", "update"] } else { &["RO", "access"] };
            found.iter_mut().for_each(|k| k.1 = flags);
        }
        _ => {}
    }
    Some(found)
}

/// Scripts may be called without keys (Redis's `no_mandatory_keys`).
fn keys_optional(name: &str) -> bool {
    name.starts_with("eval") || name.starts_with("fcall")
}

fn getkeys(ctx: &mut Ctx<'_, '_>, args: Args<'_>, with_flags: bool) {
    let srv = ctx.srv;
    let target = args.tail(2);
    let Some(mut cmd) = srv.commands.lookup(target.get(0)) else {
        ctx.reply.error("ERR Invalid command specified");
        return;
    };
    if !cmd.spec.subcommands.is_empty() && target.len() >= 2 {
        match srv.commands.lookup_sub(cmd, target.get(1)) {
            Some(s) => cmd = s,
            None => {
                ctx.reply.error("ERR Invalid command specified");
                return;
            }
        }
    }
    let has_keys = cmd.spec.keys.0 > 0 || cmd.has(MOVABLE_KEYS) || !key_specs(cmd).is_empty();
    if !has_keys {
        ctx.reply.error("ERR The command has no key arguments");
        return;
    }
    if !cmd.arity_ok(target.len()) {
        ctx.reply.error("ERR Invalid number of arguments specified for command");
        return;
    }
    let keys = match find_keys(cmd, target) {
        Some(k) if !k.is_empty() => k,
        _ if keys_optional(cmd.spec.name) => Vec::new(),
        _ => {
            ctx.reply.error("ERR Invalid arguments specified for command");
            return;
        }
    };
    ctx.reply.array(keys.len());
    for (i, flags) in keys {
        if with_flags {
            ctx.reply.array(2);
            ctx.reply.bulk(target.get(i));
            ctx.reply.set(flags.len());
            for f in flags {
                ctx.reply.simple(f);
            }
        } else {
            ctx.reply.bulk(target.get(i));
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
    reply_help(
        ctx,
        "COMMAND",
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

// ------------------------------------------------------------------- INFO

/// Sections in output order; the flag says whether plain INFO shows it.
const SECTIONS: &[(&str, bool)] = &[
    ("server", true),
    ("clients", true),
    ("memory", true),
    ("persistence", true),
    ("stats", true),
    ("replication", true),
    ("cpu", true),
    ("modules", true),
    ("commandstats", false),
    ("errorstats", true),
    ("cluster", true),
    ("keyspace", true),
];

/// The last sample of the traffic counters, for the instantaneous rates.
struct RateSample {
    at: std::time::Instant,
    ops: u64,
    input: u64,
    output: u64,
    rates: (u64, f64, f64),
}

/// Rates are measured between INFO calls: a sample at least this old is
/// replaced, a younger one is reused, so that rapid INFO calls do not
/// divide by nearly nothing.
const RATE_WINDOW: std::time::Duration = std::time::Duration::from_millis(100);

static RATES: Mutex<Option<RateSample>> = Mutex::new(None);

/// The highest `used_memory` INFO has seen (Redis samples it in cron).
static PEAK_MEMORY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Forgets the samples INFO derives rates and the memory peak from
/// (CONFIG RESETSTAT).
pub(super) fn reset_info_samples() {
    *RATES.lock() = None;
    PEAK_MEMORY.store(0, Ordering::Relaxed);
}

fn rates(ops: u64, input: u64, output: u64) -> (u64, f64, f64) {
    let now = std::time::Instant::now();
    let mut r = RATES.lock();
    match r.as_mut() {
        None => {
            *r = Some(RateSample { at: now, ops, input, output, rates: (0, 0.0, 0.0) });
            (0, 0.0, 0.0)
        }
        Some(s) => {
            let dt = now.duration_since(s.at);
            if dt >= RATE_WINDOW {
                let secs = dt.as_secs_f64();
                s.rates = (
                    (ops.saturating_sub(s.ops) as f64 / secs).round() as u64,
                    input.saturating_sub(s.input) as f64 / secs / 1024.0,
                    output.saturating_sub(s.output) as f64 / secs / 1024.0,
                );
                s.at = now;
                s.ops = ops;
                s.input = input;
                s.output = output;
            }
            s.rates
        }
    }
}

/// Redis's bytesToHuman.
fn human(n: u64) -> String {
    let d = n as f64;
    const K: f64 = 1024.0;
    if n < 1024 {
        format!("{n}B")
    } else if d < K * K {
        format!("{:.2}K", d / K)
    } else if d < K * K * K {
        format!("{:.2}M", d / (K * K))
    } else if d < K * K * K * K {
        format!("{:.2}G", d / (K * K * K))
    } else if d < K * K * K * K * K {
        format!("{:.2}T", d / (K * K * K * K))
    } else {
        format!("{:.2}P", d / (K * K * K * K * K))
    }
}

/// jemalloc's view: (allocated, active, resident). Reading the stats
/// needs the epoch advanced first, or they are stale.
fn jemalloc_stats() -> (u64, u64, u64) {
    use tikv_jemalloc_ctl::{epoch, stats};
    let _ = epoch::advance();
    let a = stats::allocated::read().unwrap_or(0) as u64;
    let act = stats::active::read().unwrap_or(0) as u64;
    let r = stats::resident::read().unwrap_or(0) as u64;
    (a, act, r)
}

fn read_proc(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Resident set size from /proc/self/statm, which counts pages of the
/// system's size (4 KiB on most x86, 16 or 64 KiB on some arm64 and ppc64).
/// rustix reads the size from the auxiliary vector once per process.
fn rss_bytes() -> u64 {
    let pages = read_proc("/proc/self/statm").split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok());
    pages.unwrap_or(0) * rustix::param::page_size() as u64
}

fn total_system_memory() -> u64 {
    read_proc("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

/// (user, system, children user, children system) CPU seconds from
/// /proc/self/stat, whose times are in clock ticks: `sysconf(_SC_CLK_TCK)`,
/// which rustix reads from the auxiliary vector once per process.
fn cpu_times() -> (f64, f64, f64, f64) {
    let stat = read_proc("/proc/self/stat");
    // The command name may contain spaces; fields resume after its ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<f64> = rest.split_whitespace().map(|x| x.parse::<f64>().unwrap_or(0.0)).collect();
    let hz = rustix::param::clock_ticks_per_second().max(1) as f64;
    let tick = |i: usize| f.get(i).copied().unwrap_or(0.0) / hz;
    // After ')': state(0) ... utime(11) stime(12) cutime(13) cstime(14).
    (tick(11), tick(12), tick(13), tick(14))
}

/// Per-database (keys, keys with a TTL) and the bytes the entries hold,
/// walking the shards one lock at a time.
fn keyspace_counts(ctx: &mut Ctx<'_, '_>) -> (Vec<(usize, u64, u64)>, u64, u64) {
    let ks = ctx.ks;
    let mut dbs = Vec::new();
    let mut mem = 0u64;
    let mut expired = 0u64;
    for db in 0..ks.db_count() {
        let (mut keys, mut vol) = (0u64, 0u64);
        for gid in ks.db_gids(db) {
            ctx.locks.acquire([gid]);
            let s = ctx.locks.shard(gid);
            keys += s.len() as u64;
            vol += s.volatile_count() as u64;
            mem += s.mem() as u64;
            expired += s.expired;
            ctx.locks.release();
        }
        if keys > 0 {
            dbs.push((db, keys, vol));
        }
    }
    (dbs, mem, expired)
}

fn info(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let mut wanted = [false; SECTIONS.len()];
    if args.len() == 1 {
        for (w, (_, default)) in wanted.iter_mut().zip(SECTIONS) {
            *w = *default;
        }
    }
    for a in args.tail(1).iter() {
        let a = a.to_ascii_lowercase();
        match a.as_slice() {
            b"default" => {
                for (w, (_, default)) in wanted.iter_mut().zip(SECTIONS) {
                    *w |= *default;
                }
            }
            b"all" | b"everything" => wanted = [true; SECTIONS.len()],
            name => {
                if let Some(i) = SECTIONS.iter().position(|(n, _)| n.as_bytes() == name) {
                    wanted[i] = true;
                }
            }
        }
    }
    let text = info_text(ctx, &wanted);
    ctx.reply.verbatim(text.as_bytes());
}

fn info_text(ctx: &mut Ctx<'_, '_>, wanted: &[bool]) -> String {
    let srv = ctx.srv;
    let need_keyspace = wanted[section("memory")] || wanted[section("stats")] || wanted[section("keyspace")];
    let (dbs, dataset, shard_expired) = if need_keyspace { keyspace_counts(ctx) } else { (Vec::new(), 0, 0) };
    let expired_fields = if wanted[section("stats")] { super::hashes::expired_fields(ctx) } else { 0 };
    let cfg = srv.config.read().clone();
    let mut out = String::new();
    for (i, (name, _)) in SECTIONS.iter().enumerate() {
        if !wanted[i] {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        let mut s = Section(&mut out);
        match *name {
            "server" => {
                s.header("Server");
                let now = now_ms();
                let uptime = srv.started.elapsed().as_secs();
                let port = srv.port.load(Ordering::Relaxed);
                let os = format!("Linux {} {}", read_proc("/proc/sys/kernel/osrelease").trim(), std::env::consts::ARCH);
                s.kv("redis_version", crate::REDIS_VERSION);
                s.kv("tern_version", crate::TERN_VERSION);
                s.kv("redis_git_sha1", "00000000");
                s.kv("redis_git_dirty", 0);
                s.kv("redis_build_id", "0");
                s.kv("redis_mode", "standalone");
                s.kv("os", os);
                s.kv("arch_bits", usize::BITS);
                s.kv("monotonic_clock", "POSIX clock_gettime");
                s.kv("multiplexing_api", "epoll");
                s.kv("atomicvar_api", "c11-builtin");
                s.kv("gcc_version", "0.0.0");
                s.kv("process_id", std::process::id());
                s.kv("process_supervised", "no");
                s.kv("run_id", &srv.run_id);
                s.kv("tcp_port", port);
                s.kv("server_time_usec", now * 1000);
                s.kv("uptime_in_seconds", uptime);
                s.kv("uptime_in_days", uptime / 86_400);
                s.kv("hz", cfg.hz);
                s.kv("configured_hz", cfg.hz);
                s.kv("lru_clock", (now / 1000) & ((1 << 24) - 1));
                s.kv("executable", &srv.executable);
                s.kv("config_file", cfg.config_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default());
                s.kv("io_threads_active", 0);
                s.kv("listener0", format!("name=tcp,bind={},port={}", cfg.bind.join(",bind="), port));
            }
            "clients" => {
                s.header("Clients");
                s.kv("connected_clients", srv.connected.load(Ordering::Relaxed));
                s.kv("cluster_connections", 0);
                s.kv("maxclients", cfg.maxclients);
            }
            "memory" => {
                s.header("Memory");
                let (allocated, active, resident) = jemalloc_stats();
                let used = allocated;
                let peak = PEAK_MEMORY.fetch_max(used, Ordering::Relaxed).max(used);
                let rss = rss_bytes();
                let sys = total_system_memory();
                s.kv("used_memory", used);
                s.kv("used_memory_human", human(used));
                s.kv("used_memory_rss", rss);
                s.kv("used_memory_rss_human", human(rss));
                s.kv("used_memory_peak", peak);
                s.kv("used_memory_peak_human", human(peak));
                s.kv("used_memory_peak_perc", format!("{:.2}%", if peak > 0 { used as f64 * 100.0 / peak as f64 } else { 0.0 }));
                s.kv("used_memory_dataset", dataset);
                s.kv("used_memory_dataset_perc", format!("{:.2}%", if used > 0 { dataset as f64 * 100.0 / used as f64 } else { 0.0 }));
                s.kv("allocator_allocated", allocated);
                s.kv("allocator_active", active);
                s.kv("allocator_resident", resident);
                s.kv("total_system_memory", sys);
                s.kv("total_system_memory_human", human(sys));
                s.kv("maxmemory", cfg.maxmemory);
                s.kv("maxmemory_human", human(cfg.maxmemory));
                s.kv("maxmemory_policy", cfg.maxmemory_policy.name());
                let ratio = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
                s.kv("allocator_frag_ratio", format!("{:.2}", ratio(active, allocated)));
                s.kv("allocator_frag_bytes", active.saturating_sub(allocated));
                s.kv("allocator_rss_ratio", format!("{:.2}", ratio(resident, active)));
                s.kv("allocator_rss_bytes", resident.saturating_sub(active));
                s.kv("rss_overhead_ratio", format!("{:.2}", ratio(rss, resident)));
                s.kv("rss_overhead_bytes", rss as i64 - resident as i64);
                s.kv("mem_fragmentation_ratio", format!("{:.2}", ratio(rss, used)));
                s.kv("mem_fragmentation_bytes", rss as i64 - used as i64);
                s.kv("mem_allocator", "jemalloc-5.3.0");
            }
            "persistence" => {
                // Tern keeps no data on disk: nothing is loading or saving.
                s.header("Persistence");
                s.kv("loading", 0);
                s.kv("async_loading", 0);
                s.kv("rdb_bgsave_in_progress", 0);
                s.kv("rdb_last_save_time", srv.started_ms / 1000);
                s.kv("rdb_last_bgsave_status", "ok");
                s.kv("rdb_saves", 0);
                s.kv("aof_enabled", 0);
                s.kv("aof_rewrite_in_progress", 0);
                s.kv("aof_rewrite_scheduled", 0);
                s.kv("aof_last_bgrewrite_status", "ok");
                s.kv("aof_rewrites", 0);
                s.kv("aof_last_write_status", "ok");
            }
            "stats" => {
                s.header("Stats");
                let ops = srv.sum(|w| w.commands.get());
                let input = srv.sum(|w| w.net_input_bytes.get());
                let output = srv.sum(|w| w.net_output_bytes.get());
                let (ops_sec, in_kbps, out_kbps) = rates(ops, input, output);
                s.kv("total_connections_received", srv.sum(|w| w.connections_received.get()));
                s.kv("total_commands_processed", ops);
                s.kv("instantaneous_ops_per_sec", ops_sec);
                s.kv("total_net_input_bytes", input);
                s.kv("total_net_output_bytes", output);
                s.kv("instantaneous_input_kbps", format!("{in_kbps:.2}"));
                s.kv("instantaneous_output_kbps", format!("{out_kbps:.2}"));
                s.kv("rejected_connections", srv.sum(|w| w.rejected_connections.get()));
                // Every removal by TTL, lazy or active, is counted by its
                // shard; `active_expired` is a subset of it.
                s.kv("expired_keys", shard_expired);
                s.kv("expired_subkeys", expired_fields);
                s.kv("expired_stale_perc", format!("{:.2}", srv.global.expired_stale_perc.load(Ordering::Relaxed) as f64 / 100.0));
                s.kv("evicted_keys", 0);
                s.kv("keyspace_hits", srv.sum(|w| w.keyspace_hits.get()));
                s.kv("keyspace_misses", srv.sum(|w| w.keyspace_misses.get()));
                s.kv("total_error_replies", srv.sum(|w| w.total_error_replies.get()));
                s.kv("reply_copy_avoided", srv.sum(|w| w.reply_copy_avoided.get()));
                s.kv("stat_reset_time", srv.stat_reset_ms.load(Ordering::Relaxed) / 1000);
            }
            "replication" => {
                s.header("Replication");
                s.kv("role", "master");
                s.kv("connected_slaves", 0);
                s.kv("master_failover_state", "no-failover");
                s.kv("master_replid", &srv.run_id);
                s.kv("master_replid2", "0000000000000000000000000000000000000000");
                s.kv("master_repl_offset", 0);
                s.kv("second_repl_offset", -1);
                s.kv("repl_backlog_active", 0);
                s.kv("repl_backlog_size", 1_048_576);
                s.kv("repl_backlog_first_byte_offset", 0);
                s.kv("repl_backlog_histlen", 0);
            }
            "cpu" => {
                s.header("CPU");
                let (user, sys, cuser, csys) = cpu_times();
                s.kv("used_cpu_sys", format!("{sys:.6}"));
                s.kv("used_cpu_user", format!("{user:.6}"));
                s.kv("used_cpu_sys_children", format!("{csys:.6}"));
                s.kv("used_cpu_user_children", format!("{cuser:.6}"));
            }
            "modules" => s.header("Modules"),
            "commandstats" => {
                s.header("Commandstats");
                for c in srv.commands.iter() {
                    let calls = srv.sum(|w| w.cmds[c.id].calls.get());
                    let rejected = srv.sum(|w| w.cmds[c.id].rejected.get());
                    let failed = srv.sum(|w| w.cmds[c.id].failed.get());
                    if calls == 0 && rejected == 0 && failed == 0 {
                        continue;
                    }
                    let usec = srv.sum(|w| w.cmds[c.id].usec.get());
                    let per = if calls > 0 { usec as f64 / calls as f64 } else { 0.0 };
                    s.kv(
                        &format!("cmdstat_{}", c.fullname),
                        format!("calls={calls},usec={usec},usec_per_call={per:.2},rejected_calls={rejected},failed_calls={failed}"),
                    );
                }
            }
            "errorstats" => {
                s.header("Errorstats");
                let mut all: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
                for w in &srv.workers {
                    for (k, v) in w.errors.lock().iter() {
                        *all.entry(k.clone()).or_insert(0) += v;
                    }
                }
                for (k, v) in all {
                    s.kv(&format!("errorstat_{k}"), format!("count={v}"));
                }
            }
            "cluster" => {
                s.header("Cluster");
                s.kv("cluster_enabled", 0);
            }
            "keyspace" => {
                s.header("Keyspace");
                for &(db, keys, vol) in &dbs {
                    s.kv(&format!("db{db}"), format!("keys={keys},expires={vol},avg_ttl=0,subexpiry=0"));
                }
            }
            _ => {}
        }
    }
    out
}

fn section(name: &str) -> usize {
    SECTIONS.iter().position(|(n, _)| *n == name).unwrap_or(0)
}

/// Appends `# Header` and `key:value` lines with CRLF, as INFO sends them.
struct Section<'a>(&'a mut String);

impl Section<'_> {
    fn header(&mut self, h: &str) {
        let _ = write!(self.0, "# {h}\r\n");
    }
    fn kv(&mut self, k: &str, v: impl std::fmt::Display) {
        let _ = write!(self.0, "{k}:{v}\r\n");
    }
}

// ------------------------------------------------------- TIME, SHUTDOWN

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
        ctx.reply.error("ERR No shutdown in progress.");
        return;
    }
    crate::log_warning!("User requested shutdown...");
    if save {
        crate::log_warning!("SHUTDOWN SAVE: Tern does not persist data yet; nothing was saved.");
    }
    ctx.srv.begin_shutdown();
    ctx.client.close_after_reply = true;
}

/// Redis 7's tips and key specs, by full command name (sorted), taken
/// from the reference server's COMMAND output. The table says which
/// commands exist; this says how Redis describes their keys.
#[rustfmt::skip]
static REDIS_COMMAND_DATA: &[(&str, &[&str], &[KeySpec])] = &[
    ("append", &[], &[KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("bitcount", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("bitfield", &[], &[KeySpec { notes: "This command allows both access and modification of the key", flags: &["RW", "access", "update", "variable_flags"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("bitfield_ro", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("bitop", &[], &[KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(3), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("bitpos", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("blmove", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("blmpop", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(2), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("blpop", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: -2, step: 1, limit: 0 } }]),
    ("brpop", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: -2, step: 1, limit: 0 } }]),
    ("brpoplpush", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("bzmpop", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(2), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("bzpopmax", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: -2, step: 1, limit: 0 } }]),
    ("bzpopmin", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: -2, step: 1, limit: 0 } }]),
    ("client|info", &["nondeterministic_output"], &[]),
    ("client|list", &["nondeterministic_output"], &[]),
    ("cluster|bumpepoch", &["nondeterministic_output"], &[]),
    ("cluster|count-failure-reports", &["nondeterministic_output"], &[]),
    ("cluster|getkeysinslot", &["nondeterministic_output"], &[]),
    ("cluster|info", &["nondeterministic_output"], &[]),
    ("cluster|links", &["nondeterministic_output"], &[]),
    ("cluster|nodes", &["nondeterministic_output"], &[]),
    ("cluster|replicas", &["nondeterministic_output"], &[]),
    ("cluster|shards", &["nondeterministic_output"], &[]),
    ("cluster|slaves", &["nondeterministic_output"], &[]),
    ("cluster|slots", &["nondeterministic_output"], &[]),
    ("command", &["nondeterministic_output_order"], &[]),
    ("command|docs", &["nondeterministic_output_order"], &[]),
    ("command|info", &["nondeterministic_output_order"], &[]),
    ("command|list", &["nondeterministic_output_order"], &[]),
    ("config|set", &["request_policy:all_nodes", "response_policy:all_succeeded"], &[]),
    ("copy", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("dbsize", &["request_policy:all_shards", "response_policy:agg_sum"], &[]),
    ("decr", &[], &[KeySpec { notes: "", flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("decrby", &[], &[KeySpec { notes: "", flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("del", &["request_policy:multi_shard", "response_policy:agg_sum"], &[KeySpec { notes: "", flags: &["RM", "delete"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("dump", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("eval", &[], &[KeySpec { notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE", flags: &["RW", "access", "update"], begin: Begin::Index(2), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("eval_ro", &[], &[KeySpec { notes: "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("evalsha", &[], &[KeySpec { notes: "", flags: &["RW", "access", "update"], begin: Begin::Index(2), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("evalsha_ro", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("exists", &["request_policy:multi_shard", "response_policy:agg_sum"], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("expire", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("expireat", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("expiretime", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("fcall", &[], &[KeySpec { notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE", flags: &["RW", "access", "update"], begin: Begin::Index(2), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("fcall_ro", &[], &[KeySpec { notes: "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("flushall", &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("flushdb", &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("function|delete", &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("function|flush", &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("function|kill", &["request_policy:all_shards", "response_policy:one_succeeded"], &[]),
    ("function|list", &["nondeterministic_output_order"], &[]),
    ("function|load", &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("function|restore", &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("function|stats", &["nondeterministic_output", "request_policy:all_shards", "response_policy:special"], &[]),
    ("geoadd", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("geodist", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("geohash", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("geopos", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("georadius", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Keyword("STORE", 6), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Keyword("STOREDIST", 6), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("georadius_ro", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("georadiusbymember", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Keyword("STORE", 5), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Keyword("STOREDIST", 5), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("georadiusbymember_ro", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("geosearch", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("geosearchstore", &[], &[KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("get", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("getbit", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("getdel", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("getex", &[], &[KeySpec { notes: "RW and UPDATE because it changes the TTL", flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("getrange", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("getset", &[], &[KeySpec { notes: "", flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hdel", &[], &[KeySpec { notes: "", flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hexists", &[], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hget", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hgetall", &["nondeterministic_output_order"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hincrby", &[], &[KeySpec { notes: "", flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hincrbyfloat", &[], &[KeySpec { notes: "", flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hkeys", &["nondeterministic_output_order"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hlen", &[], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hmget", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hmset", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hrandfield", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hscan", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hset", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hsetnx", &[], &[KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hstrlen", &[], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("hvals", &["nondeterministic_output_order"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("incr", &[], &[KeySpec { notes: "", flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("incrby", &[], &[KeySpec { notes: "", flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("incrbyfloat", &[], &[KeySpec { notes: "", flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("info", &["nondeterministic_output", "request_policy:all_shards", "response_policy:special"], &[]),
    ("keys", &["request_policy:all_shards", "nondeterministic_output_order"], &[]),
    ("lastsave", &["nondeterministic_output"], &[]),
    ("latency|doctor", &["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"], &[]),
    ("latency|graph", &["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"], &[]),
    ("latency|histogram", &["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"], &[]),
    ("latency|history", &["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"], &[]),
    ("latency|latest", &["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"], &[]),
    ("latency|reset", &["request_policy:all_nodes", "response_policy:all_succeeded"], &[]),
    ("lcs", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 1, step: 1, limit: 0 } }]),
    ("lindex", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("linsert", &[], &[KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("llen", &[], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("lmove", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("lmpop", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("lpop", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("lpos", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("lpush", &[], &[KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("lpushx", &[], &[KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("lrange", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("lrem", &[], &[KeySpec { notes: "", flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("lset", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("ltrim", &[], &[KeySpec { notes: "", flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("memory|doctor", &["nondeterministic_output", "request_policy:all_shards", "response_policy:special"], &[]),
    ("memory|malloc-stats", &["nondeterministic_output", "request_policy:all_shards", "response_policy:special"], &[]),
    ("memory|purge", &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("memory|stats", &["nondeterministic_output", "request_policy:all_shards", "response_policy:special"], &[]),
    ("memory|usage", &[], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("mget", &["request_policy:multi_shard"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("migrate", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(3), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RW", "access", "delete", "incomplete"], begin: Begin::Keyword("KEYS", -2), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("module|list", &["nondeterministic_output_order"], &[]),
    ("move", &[], &[KeySpec { notes: "", flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("mset", &["request_policy:multi_shard", "response_policy:all_succeeded"], &[KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 2, limit: 0 } }]),
    ("msetnx", &["request_policy:multi_shard", "response_policy:agg_min"], &[KeySpec { notes: "", flags: &["OW", "insert"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 2, limit: 0 } }]),
    ("object|encoding", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("object|freq", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("object|idletime", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("object|refcount", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("persist", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("pexpire", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("pexpireat", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("pexpiretime", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("pfadd", &[], &[KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("pfcount", &[], &[KeySpec { notes: "RW because it may change the internal representation of the key, and propagate to replicas", flags: &["RW", "access"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("pfdebug", &[], &[KeySpec { notes: "", flags: &["RW", "access"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("pfmerge", &[], &[KeySpec { notes: "", flags: &["RW", "access", "insert"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("ping", &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("psetex", &[], &[KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("pttl", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("randomkey", &["request_policy:all_shards", "nondeterministic_output"], &[]),
    ("rename", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("renamenx", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["OW", "insert"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("restore", &[], &[KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("restore-asking", &[], &[KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("rpop", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("rpoplpush", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("rpush", &[], &[KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("rpushx", &[], &[KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("sadd", &[], &[KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("scan", &["nondeterministic_output", "request_policy:special"], &[]),
    ("scard", &[], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("script|exists", &["request_policy:all_shards", "response_policy:agg_logical_and"], &[]),
    ("script|flush", &["request_policy:all_nodes", "response_policy:all_succeeded"], &[]),
    ("script|kill", &["request_policy:all_shards", "response_policy:one_succeeded"], &[]),
    ("script|load", &["request_policy:all_nodes", "response_policy:all_succeeded"], &[]),
    ("sdiff", &["nondeterministic_output_order"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("sdiffstore", &[], &[KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("set", &[], &[KeySpec { notes: "RW and ACCESS due to the optional `GET` argument", flags: &["RW", "access", "update", "variable_flags"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("setbit", &[], &[KeySpec { notes: "", flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("setex", &[], &[KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("setnx", &[], &[KeySpec { notes: "", flags: &["OW", "insert"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("setrange", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("sinter", &["nondeterministic_output_order"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("sintercard", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("sinterstore", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("sismember", &[], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("slowlog|get", &["request_policy:all_nodes", "nondeterministic_output"], &[]),
    ("slowlog|len", &["request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"], &[]),
    ("slowlog|reset", &["request_policy:all_nodes", "response_policy:all_succeeded"], &[]),
    ("smembers", &["nondeterministic_output_order"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("smismember", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("smove", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("sort", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort", flags: &["RO", "access"], begin: Begin::Unknown, find: Find::Unknown }, KeySpec { notes: "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array", flags: &["OW", "update"], begin: Begin::Unknown, find: Find::Unknown }]),
    ("sort_ro", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort", flags: &["RO", "access"], begin: Begin::Unknown, find: Find::Unknown }]),
    ("spop", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("spublish", &[], &[KeySpec { notes: "", flags: &["not_key"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("srandmember", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("srem", &[], &[KeySpec { notes: "", flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("sscan", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("ssubscribe", &[], &[KeySpec { notes: "", flags: &["not_key"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("strlen", &[], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("substr", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("sunion", &["nondeterministic_output_order"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("sunionstore", &[], &[KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("sunsubscribe", &[], &[KeySpec { notes: "", flags: &["not_key"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("time", &["nondeterministic_output"], &[]),
    ("touch", &["request_policy:multi_shard", "response_policy:agg_sum"], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("ttl", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("type", &[], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("unlink", &["request_policy:multi_shard", "response_policy:agg_sum"], &[KeySpec { notes: "", flags: &["RM", "delete"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("wait", &["request_policy:all_shards", "response_policy:agg_min"], &[]),
    ("watch", &[], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(1), find: Find::Range { last: -1, step: 1, limit: 0 } }]),
    ("xack", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xadd", &["nondeterministic_output"], &[KeySpec { notes: "UPDATE instead of INSERT because of the optional trimming feature", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xautoclaim", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xclaim", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xdel", &[], &[KeySpec { notes: "", flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xgroup|create", &[], &[KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xgroup|createconsumer", &[], &[KeySpec { notes: "", flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xgroup|delconsumer", &[], &[KeySpec { notes: "", flags: &["RW", "delete"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xgroup|destroy", &[], &[KeySpec { notes: "", flags: &["RW", "delete"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xgroup|setid", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xinfo|consumers", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xinfo|groups", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xinfo|stream", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xlen", &[], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xpending", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xrange", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xread", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Keyword("STREAMS", 1), find: Find::Range { last: -1, step: 1, limit: 2 } }]),
    ("xreadgroup", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Keyword("STREAMS", 4), find: Find::Range { last: -1, step: 1, limit: 2 } }]),
    ("xrevrange", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xsetid", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("xtrim", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zadd", &[], &[KeySpec { notes: "", flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zcard", &[], &[KeySpec { notes: "", flags: &["RO"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zcount", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zdiff", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("zdiffstore", &[], &[KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("zincrby", &[], &[KeySpec { notes: "", flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zinter", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("zintercard", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("zinterstore", &[], &[KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("zlexcount", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zmpop", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("zmscore", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zpopmax", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zpopmin", &[], &[KeySpec { notes: "", flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zrandmember", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zrange", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zrangebylex", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zrangebyscore", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zrangestore", &[], &[KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zrank", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zrem", &[], &[KeySpec { notes: "", flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zremrangebylex", &[], &[KeySpec { notes: "", flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zremrangebyrank", &[], &[KeySpec { notes: "", flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zremrangebyscore", &[], &[KeySpec { notes: "", flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zrevrange", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zrevrangebylex", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zrevrangebyscore", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zrevrank", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zscan", &["nondeterministic_output"], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zscore", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }]),
    ("zunion", &[], &[KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),
    ("zunionstore", &[], &[KeySpec { notes: "", flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range { last: 0, step: 1, limit: 0 } }, KeySpec { notes: "", flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Keynum { idx: 0, first: 1, step: 1 } }]),

];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rss_is_the_kernels_vmrss() {
        // VmRSS is in kB whatever the page size; statm counts pages.
        let status = read_proc("/proc/self/status");
        let kb = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        let vmrss = kb.expect("VmRSS in /proc/self/status") * 1024;
        let rss = rss_bytes();
        assert!(rss.abs_diff(vmrss) <= vmrss / 10, "statm {rss} B, VmRSS {vmrss} B");
    }

    #[test]
    fn cpu_times_are_seconds() {
        // This thread's run time in nanoseconds (schedstat) bounds the
        // process's CPU time from below; wall time on every core from above.
        let thread_ns = || read_proc("/proc/thread-self/schedstat").split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let process = || {
            let (u, s, _, _) = cpu_times();
            u + s
        };
        let (t0, p0, w0) = (thread_ns(), process(), std::time::Instant::now());
        let mut x = 1u64;
        while thread_ns() - t0 < 300_000_000 {
            for i in 0..100_000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
        }
        let (busy, spent, wall) = ((thread_ns() - t0) as f64 / 1e9, process() - p0, w0.elapsed().as_secs_f64());
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        // Two ticks of slack at either end for the counters' granularity.
        let slack = 2.0 / rustix::param::clock_ticks_per_second() as f64;
        assert!(spent >= busy * 0.8 - slack, "process {spent} s, thread {busy} s");
        assert!(spent <= wall * cores + slack, "process {spent} s in {wall} s on {cores} cores");
    }

    #[test]
    fn redis_data_is_sorted() {
        assert!(REDIS_COMMAND_DATA.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(redis_data("get").is_some() && redis_data("config|set").is_some() && redis_data("nosuch").is_none());
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human(0), "0B");
        assert_eq!(human(1023), "1023B");
        assert_eq!(human(965_752), "943.12K");
        assert_eq!(human(12_320_768), "11.75M");
        assert_eq!(human(25_276_063_744), "23.54G");
    }
}
