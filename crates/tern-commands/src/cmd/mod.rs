//! Command dispatch: from parsed arguments to a handler with the right shard
//! locks held, and the reply appended to the connection's output.
//!
//! ```text
//!  args ─► lookup (table.rs) ─► arity ─► auth ─► MULTI queue? ─► plan keys
//!       ─► hash each key once (Loc) ─► lock shards ascending ─► handler(Ctx)
//!       ─► unlock (the store told WATCHers and recorded effects) ─► stats
//! ```
//!
//! One file per command family; each exports `COMMANDS: &[CommandSpec]`,
//! listed in [`FAMILIES`].

/// Looks the command's first key (`locs[0]`) up for reading, counting the
/// keyspace hit or miss, and yields its value as `$as` reads it (an
/// `EntryExt` accessor: `hash`, `list`, `zset`); replies `$missing` and returns
/// when absent, WRONGTYPE when of another type.
macro_rules! read_typed {
    ($ctx:ident, $key:expr, $as:ident, $missing:expr) => {{
        let loc = $ctx.locs[0];
        let acc = $ctx.access();
        match $ctx.locks.shard(loc.gid).lookup($key, loc.hash, $ctx.now, acc) {
            None => {
                $ctx.stats.keyspace_misses.add(1);
                #[allow(clippy::redundant_closure_call)]
                ($missing)(&mut $ctx.reply);
                return;
            }
            Some(e) => {
                $ctx.stats.keyspace_hits.add(1);
                match e.$as() {
                    Some(v) => v,
                    None => return $ctx.reply.error($crate::errors::WRONGTYPE),
                }
            }
        }
    }};
}

pub mod access;
pub mod acl;
pub mod bitmaps;
pub mod blocking;
pub mod client;
pub mod cluster;
pub mod command;
pub mod commandlog;
pub mod config;
pub mod connection;
pub mod debug;
pub mod docargs;
pub mod dump;
pub mod geo;
pub mod hashes;
pub mod hll;
pub mod info;
pub mod keys;
pub mod latency;
pub mod monitor;
pub mod pubsub;
pub mod tracking;
pub mod keyspec;
pub mod lists;
pub mod memory;
pub mod replication;
pub mod server;
pub mod sets;
pub mod sort;
pub mod stage;
pub mod strings;
pub mod table;
pub mod transactions;
pub mod streams;
pub mod zsets;

use std::time::{Duration, Instant};

use tern_resp::{Args, Encoder};
use tern_store::{Keyspace, Loc, LockSet};

use crate::client::{Client, ReplyMode};
use crate::errors;
use crate::maxmemory;
use crate::outbuf::OutBuf;
use crate::server::{PauseMode, Server};
use crate::stats::WorkerStats;
use table::{flags, Cmd, CommandSpec, CommandTable};

/// A command handler. Arity has been checked; keys planned and locked.
pub type Handler = fn(&mut Ctx<'_, '_>, Args<'_>);

/// Every command family of the table.
pub static FAMILIES: &[&[CommandSpec]] = &[
    strings::COMMANDS,
    acl::COMMANDS,
    bitmaps::COMMANDS,
    hll::COMMANDS,
    hashes::COMMANDS,
    lists::COMMANDS,
    sets::COMMANDS,
    zsets::COMMANDS,
    streams::COMMANDS,
    geo::COMMANDS,
    sort::COMMANDS,
    keys::COMMANDS,
    dump::COMMANDS,
    connection::COMMANDS,
    client::COMMANDS,
    command::COMMANDS,
    info::COMMANDS,
    memory::COMMANDS,
    pubsub::COMMANDS,
    server::COMMANDS,
    commandlog::COMMANDS,
    latency::COMMANDS,
    monitor::COMMANDS,
    debug::COMMANDS,
    config::COMMANDS,
    transactions::COMMANDS,
    replication::COMMANDS,
    cluster::COMMANDS,
];

/// The reply side of a command: appends to the connection's output buffer
/// in the client's protocol, and notes errors for INFO errorstats.
pub struct Reply<'a> {
    pub out: &'a mut OutBuf,
    pub enc: Encoder,
    /// Error replies written by this command.
    pub errors: u32,
    stats: &'a WorkerStats,
    /// `reply-copy-avoid-min-size` as the command started (0: off).
    share_min: usize,
}

impl<'a> Reply<'a> {
    pub fn new(out: &'a mut OutBuf, resp3: bool, stats: &'a WorkerStats) -> Self {
        Reply { out, enc: Encoder { resp3 }, errors: 0, stats, share_min: 0 }
    }

    /// Lets string replies of at least `min` bytes (0: none) reference the
    /// stored value instead of copying it.
    pub fn share_from(mut self, min: usize) -> Self {
        self.share_min = min;
        self
    }

    /// A stored string as a bulk reply: sent from the stored bytes when it
    /// is shared and long enough, copied otherwise.
    #[inline]
    pub fn str_value(&mut self, s: tern_store::StrRef<'_>) {
        self.str_range(s, 0..s.len());
    }

    /// `s[r]` as a bulk reply (GETRANGE; `r` within the string), sent from
    /// the stored bytes like [`Reply::str_value`] when the range is long
    /// enough.
    #[inline]
    pub fn str_range(&mut self, s: tern_store::StrRef<'_>, r: std::ops::Range<usize>) {
        match s.shared() {
            Some(b) if self.share_min > 0 && r.len() >= self.share_min => {
                self.enc.bulk_header(self.out, r.len());
                self.out.push_shared(b, r.start, r.end);
                self.out.extend_from_slice(b"\r\n");
                self.stats.reply_copy_avoided.add(1);
            }
            _ => s.with_bytes(|b| self.bulk(&b[r])),
        }
    }

    /// The threshold [`Reply::str_value`] applies.
    pub fn share_min(&self) -> usize {
        self.share_min
    }
    #[inline]
    pub fn ok(&mut self) {
        self.enc.ok(self.out)
    }
    pub fn simple(&mut self, s: &str) {
        self.enc.simple(self.out, s.as_bytes())
    }
    /// `msg` without `-`: e.g. `errors::SYNTAX` or `ERR ...`.
    pub fn error(&mut self, msg: impl AsRef<[u8]>) {
        let msg = msg.as_ref();
        self.errors += 1;
        self.stats.record_error(msg);
        self.enc.error(self.out, msg)
    }
    #[inline]
    pub fn int(&mut self, n: i64) {
        self.enc.int(self.out, n)
    }
    #[inline]
    pub fn bulk(&mut self, b: &[u8]) {
        self.enc.bulk(self.out, b)
    }
    pub fn bulk_int(&mut self, n: i64) {
        self.enc.bulk_int(self.out, n)
    }
    #[inline]
    pub fn null(&mut self) {
        self.enc.null(self.out)
    }
    pub fn null_array(&mut self) {
        self.enc.null_array(self.out)
    }
    #[inline]
    pub fn array(&mut self, n: usize) {
        self.enc.array(self.out, n)
    }
    pub fn map(&mut self, pairs: usize) {
        self.enc.map(self.out, pairs)
    }
    /// A push (RESP3) or an array (RESP2): publish/subscribe's replies.
    pub fn push(&mut self, n: usize) {
        self.enc.push(self.out, n)
    }
    pub fn set(&mut self, n: usize) {
        self.enc.set(self.out, n)
    }
    pub fn double(&mut self, d: f64) {
        self.enc.double(self.out, d)
    }
    pub fn boolean(&mut self, b: bool) {
        self.enc.boolean(self.out, b)
    }
    pub fn verbatim(&mut self, text: &[u8]) {
        self.enc.verbatim(self.out, b"txt", text)
    }
    /// Bytes written so far (to undo a reply, e.g. CLIENT REPLY OFF).
    pub fn mark(&self) -> usize {
        self.out.len()
    }
}

/// Everything a handler may use. Fields are public so a handler can borrow
/// a shard (`ctx.locks`) and the reply (`ctx.reply`) at the same time.
pub struct Ctx<'a, 'ks> {
    pub srv: &'ks Server,
    /// The command table (beside the shared state, not in it: see the
    /// crate's layering).
    pub commands: &'ks CommandTable,
    pub ks: &'ks Keyspace,
    pub locks: &'a mut LockSet<'ks>,
    pub reply: Reply<'a>,
    pub client: &'a mut Client,
    /// The command's keys, located (hashed once) in key-spec order; also
    /// for `MANUAL_LOCKS` commands, which are not locked though. Empty when
    /// the arguments do not locate every key (a key count beyond them,
    /// `keyspec::Keys::invalid`): a command with a key count checks it
    /// before using these.
    pub locs: &'a [Loc],
    pub cmd: &'ks Cmd,
    /// Milliseconds since the Unix epoch, read once for the command.
    pub now: u64,
    /// The turn's clock as the command started (a script times its own
    /// commands on a copy).
    pub clock: &'a Clock,
    pub stats: &'a WorkerStats,
    /// Worker index (for CLIENT LIST and the like).
    pub worker: usize,
    /// `prefetch-batch-max-size`, read once for the command: the group
    /// size of its keys' staged lookups (0: none staged).
    pub prefetch: usize,
    /// Bytes of the request on the wire (see [`Scratch::req_len`]).
    pub req_len: usize,
    /// What the next commands of the pipeline look up (none unless this
    /// command was planned with them).
    pub ahead: MembersAhead,
}

impl<'a, 'ks> Ctx<'a, 'ks> {
    /// Locates a key in the client's current database (for keys that are not
    /// in the command's key spec; spec keys are in `locs`).
    pub fn locate(&self, key: &[u8]) -> Loc {
        self.ks.locate(self.client.db, key)
    }

    /// Notes keyspace event `ev` on `key` (at `loc`, whose shard is
    /// held) that is no write of its own: SET's `expire` after its
    /// `set`, an LTRIM that removed nothing.
    pub fn note_event(&mut self, loc: Loc, key: &[u8], ev: tern_store::event::Event) {
        self.locks.shard(loc.gid).note_event(key, ev);
    }

    /// A read found no `key` (at `loc`, whose shard is held): INFO's
    /// `keyspace_misses`, and the `keymiss` event.
    pub fn missed(&mut self, loc: Loc, key: &[u8]) {
        self.stats.keyspace_misses.add(1);
        self.locks.shard(loc.gid).note_event(key, tern_store::event::KEYMISS);
    }

    /// How this command's key lookups record themselves: as an access
    /// unless the client asked for CLIENT NO-TOUCH.
    pub fn access(&self) -> tern_store::Access {
        if self.client.no_touch {
            tern_store::Access::NoTouch
        } else {
            tern_store::Access::Touch(self.srv.settings.lfu())
        }
    }

    /// The staged lookups of this command's keys (`locs`), as its key spec
    /// declares them: call [`Ctx::stage`] before running each key.
    pub fn stager(&self) -> stage::KeyStage {
        self.stager_of(self.locs.len())
    }

    /// [`Ctx::stager`] over `n` keys located by the caller.
    pub fn stager_of(&self, n: usize) -> stage::KeyStage {
        stage::KeyStage::new(self.cmd, self.prefetch, n, self.srv.settings.prefetch_value_gate())
    }

    /// Asks for what key `i` of `locs` needs before it runs (see
    /// [`Ctx::stager`]); only a hint.
    #[inline]
    pub fn stage(&mut self, st: &mut stage::KeyStage, args: Args<'_>, i: usize) {
        st.before(self.locks, self.locs, args, i)
    }

    /// `ERR wrong number of arguments for '<cmd>' command`.
    pub fn arity_error(&mut self) {
        let msg = errors::arity(&self.cmd.fullname);
        self.reply.error(&msg);
    }
}

/// Runs `f` on the value stored at `key` as `get` reaches it (an
/// `EntryExt` accessor: `hash_mut`, `list_mut`), through the store's write
/// path ([`tern_store::Shard::modify`]: memory, hash field deadlines,
/// WATCH, blocked clients and effects are accounted there; a container
/// left empty is removed).
/// Ok(None) if absent, Err(WRONGTYPE) for another type. When `create`
/// makes a value, an absent key gets it first (a new key, not an access;
/// `create` runs only then), which goes
/// again if `f` leaves it empty.
#[allow(clippy::too_many_arguments)]
pub fn edit_typed<T, R>(
    shard: &mut tern_store::Shard,
    key: &[u8],
    hash: u64,
    now: u64,
    create: impl FnOnce() -> Option<tern_store::Value>,
    acc: tern_store::Access,
    get: fn(&mut tern_store::Entry) -> Option<&mut T>,
    f: impl FnOnce(&mut T, &mut tern_store::Edit) -> R,
) -> Result<Option<R>, &'static str> {
    let r = shard.modify_or_create(key, hash, now, acc, create, |e, edit| match get(e) {
        Some(v) => Ok(f(v, edit)),
        None => Err(errors::WRONGTYPE),
    });
    r.transpose()
}

/// The end of a command that removes members (ZREM, ZREMRANGEBY*, SREM):
/// `gone` of them went, recorded as `effect` when any did; their count is
/// what the command replies.
pub fn removed(edit: &mut tern_store::Edit, gone: usize, effect: impl FnOnce() -> tern_store::Effect) -> i64 {
    if gone > 0 {
        edit.emit(effect);
        edit.changes(gone);
    }
    gone as i64
}

/// The reply of a command that counts what it changed in a key of one
/// type: the count (0 for an absent key), or the error (WRONGTYPE).
pub fn reply_count(ctx: &mut Ctx<'_, '_>, r: Result<Option<i64>, &'static str>) {
    match r {
        Err(e) => ctx.reply.error(e),
        Ok(n) => ctx.reply.int(n.unwrap_or(0)),
    }
}

/// The handler of a container command (CLIENT, OBJECT, MEMORY):
/// dispatch routes every subcommand it knows, so this only answers if the
/// table is consulted without one.
pub fn unknown_subcommand(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let msg = errors::unknown_subcommand(args.try_get(1).unwrap_or_default(), ctx.cmd.spec.name);
    ctx.reply.error(&msg);
}

/// A HELP reply as Redis's `addReplyHelp` writes it: a title naming the
/// container (`CLIENT <subcommand> ...`), `lines` as simple strings, then
/// the `HELP` entry every help ends with.
pub fn help_lines(ctx: &mut Ctx<'_, '_>, lines: &[&str]) {
    let container = ctx.cmd.fullname.split('|').next().unwrap_or_default().to_ascii_uppercase();
    ctx.reply.array(lines.len() + 3);
    ctx.reply.simple(&format!("{container} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
    for line in lines {
        ctx.reply.simple(line);
    }
    ctx.reply.simple("HELP");
    ctx.reply.simple("    Print this help.");
}

/// Key locations [`Scratch`] keeps room for between commands.
const KEEP_LOCS: usize = 4096;

/// Per-worker scratch reused across commands so dispatch does not allocate.
#[derive(Default)]
pub struct Scratch {
    pub locs: Vec<Loc>,
    /// Keys of the next command located ahead (a pipelined read's batch,
    /// see `prefetch.rs`): [`call`] takes them instead of hashing again
    /// when they are for the command it runs, in the client's database.
    pub pre: Option<Planned>,
    pub pre_locs: Vec<Loc>,
    /// The next command (or subcommand) as looked up ahead, for
    /// [`dispatch`]; none when it was not found.
    pub pre_cmd: Option<usize>,
    /// Wall time as of the turn being run, and the latest reading: each
    /// command's `now` is its start (see [`Clock`]).
    pub clock: Clock,
    /// Bytes of the request being run as it came over the wire (COMMANDLOG
    /// large-request); for the commands EXEC runs, EXEC's, as in Valkey.
    pub req_len: usize,
    /// What the commands planned after the next one look up (with
    /// [`Scratch::pre`]).
    pub pre_ahead: MembersAhead,
    /// Whether this worker's batches run the prefetch stages, measured
    /// (`prefetch-tune`), and the size the batch being run has.
    pub tuner: stage::Tuner,
    /// The last command name looked up, for [`dispatch`] and the pipeline
    /// planner: a pipeline repeats its command.
    pub last_name: table::LastName,
}

/// The members that the two planned commands after this one will look up
/// (a pipeline's batch, see `prefetch.rs`), nearest first, each as its
/// key's hash and the member's hash ([`tern_store::member_hash`]):
/// a command that holds the same sorted set asks for their lines while it
/// runs (`zsets::prefetch_ahead`), the far one's index line and the near
/// one's slab slot (named by its line, asked for by the command before),
/// so that each lookup finds its lines in cache. Only hints: a wrong one
/// costs a wasted prefetch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MembersAhead {
    pub near: Option<(u64, u64)>,
    pub far: Option<(u64, u64)>,
}

/// Key locations the pipeline planner (`prefetch.rs`) computed ahead for
/// one command, handed to [`call`]: valid only for that command, in that
/// database, with that argument count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planned {
    pub cmd: usize,
    pub db: usize,
    pub argc: usize,
}

/// The wall clock (ms since the Unix epoch) read once per event-loop turn
/// and carried forward by the monotonic clock, with the latest monotonic
/// reading (the mark): a command's start is the mark, its end one reading
/// that becomes the next command's start, so that a command reads the
/// time once where Redis's `call()` reads it twice. A connection's batch
/// starts with a fresh mark ([`Clock::mark_now`]) so that the time spent
/// reading its socket is not counted in its first command. A wall-clock
/// step shows from the next turn on.
///
/// With `command-time-tsc` the readings after the turn's first are the
/// CPU's time-stamp counter (`tern_table::ticks`) at the rate measured
/// against the monotonic clock, a few nanoseconds where a monotonic
/// reading costs tens; without a known rate, monotonic readings.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    wall_ms: u64,
    /// The monotonic reading `wall_ms` was taken with.
    base: Instant,
    /// Nanoseconds from `base` to the mark: the mark's wall time is then a
    /// division, not a subtraction of two instants per command.
    mark_ns: u64,
    /// The counter at the mark, and its rate (0: not used, read the
    /// monotonic clock).
    ticks: u64,
    ns_per_tick: f64,
}

impl Clock {
    /// The clock of a turn, read now; `tsc`: later readings from the
    /// time-stamp counter when its rate is known.
    pub fn now(tsc: bool) -> Clock {
        Clock::reading(crate::server::now_ms(), tsc)
    }

    /// A clock that reads `wall_ms` now and runs on from there (the
    /// in-process executor's injectable time), by the monotonic clock.
    pub fn starting_at(wall_ms: u64) -> Clock {
        Clock::reading(wall_ms, false)
    }

    fn reading(wall_ms: u64, tsc: bool) -> Clock {
        let base = Instant::now();
        let ticks = if tsc { tern_store::ticks::now() } else { 0 };
        let ns_per_tick = if tsc { tern_store::ticks::ns_per_tick(base, ticks).unwrap_or(0.0) } else { 0.0 };
        Clock { wall_ms, base, mark_ns: 0, ticks, ns_per_tick }
    }

    /// The latest reading: where the next command's time starts.
    #[inline]
    pub fn mark(&self) -> Instant {
        self.base + Duration::from_nanos(self.mark_ns)
    }

    /// The latest reading, in nanoseconds from the turn's start (a batch's
    /// time is the difference of two of them).
    #[inline]
    pub fn mark_ns(&self) -> u64 {
        self.mark_ns
    }

    /// The wall time of the latest reading, without reading the clock.
    #[inline]
    pub fn last_ms(&self) -> u64 {
        self.wall_ms + self.mark_ns / 1_000_000
    }

    /// Reads the clock; the reading becomes the mark.
    #[inline]
    pub fn mark_now(&mut self) {
        self.advance();
    }

    /// Reads the clock, makes the reading the mark and returns the
    /// nanoseconds since the mark before it (a command's duration).
    #[inline]
    pub fn advance(&mut self) -> u64 {
        let at_ns = if self.ns_per_tick > 0.0 {
            let t = tern_store::ticks::now();
            let d = (t.saturating_sub(self.ticks) as f64 * self.ns_per_tick) as u64;
            self.ticks = t;
            self.mark_ns + d
        } else {
            Instant::now().saturating_duration_since(self.base).as_nanos() as u64
        };
        let d = at_ns.saturating_sub(self.mark_ns);
        self.mark_ns = self.mark_ns.max(at_ns);
        d
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::now(false)
    }
}

impl Scratch {
    /// Hands the next command as parsed ahead to [`dispatch`] (its table
    /// entry) and [`call`] (its keys located ahead, if any).
    #[inline]
    pub fn plan_next(&mut self, cmd: Option<usize>, planned: Option<(Planned, &[Loc])>, ahead: MembersAhead) {
        self.pre_cmd = cmd;
        self.pre_ahead = ahead;
        self.pre = planned.map(|(p, locs)| {
            self.pre_locs.clear();
            self.pre_locs.extend_from_slice(locs);
            p
        });
    }
}

/// What the connection must do after a request.
#[derive(Debug, PartialEq, Eq)]
pub enum After {
    Continue,
    /// Close after the pending output is written (QUIT, kill of self).
    Close,
    /// Not run: CLIENT PAUSE holds it back. The request stays in the
    /// buffer, unexecuted, and is dispatched again once the pause ends
    /// (nothing was replied or counted).
    Postpone,
}

/// The connection-side inputs to [`dispatch`].
pub struct Conn<'a, 'ks> {
    pub srv: &'ks Server,
    pub commands: &'ks CommandTable,
    pub locks: &'a mut LockSet<'ks>,
    pub out: &'a mut OutBuf,
    pub client: &'a mut Client,
    pub stats: &'a WorkerStats,
    pub scratch: &'a mut Scratch,
    pub worker: usize,
}

/// Runs one request: the whole front half (lookup, arity, auth, MULTI
/// queueing) and then [`call`].
pub fn dispatch(c: Conn<'_, '_>, args: Args<'_>) -> After {
    let srv = c.srv;
    let name = args.get(0);
    let resp3 = c.client.resp3;
    let mut reply = Reply::new(c.out, resp3, c.stats).share_from(srv.settings.reply_copy_avoid_min_size());
    // What reached this client before this command (a message, an
    // invalidation) goes ahead of its reply.
    drain_own(c.client, &mut reply, c.locks);
    let start_mark = reply.mark();
    // Put back if the command is postponed, to be counted when it runs.
    let reply_mode = c.client.reply_mode;

    // CLIENT REPLY SKIP applies to the command after it.
    match c.client.reply_mode {
        ReplyMode::Skip => c.client.reply_mode = ReplyMode::SkipThis,
        ReplyMode::SkipThis => c.client.reply_mode = ReplyMode::On,
        _ => {}
    }

    let rejected = |reply: &mut Reply<'_>, client: &mut Client, msg: &[u8]| {
        reply.error(msg);
        if let Some(m) = client.multi.as_mut() {
            m.failed = true;
        }
    };
    // A refused EXEC ends the transaction, saying why (Redis's
    // rejectCommand: `-EXECABORT Transaction discarded because of: ...`),
    // whether one is open or not.
    macro_rules! refuse {
        ($cmd:expr, $msg:expr) => {{
            let msg = $msg;
            let msg: &[u8] = msg.as_ref();
            if $cmd.spec.name == "exec" {
                transactions::abort_exec(c.srv, c.client, c.locks, &mut reply, &String::from_utf8_lossy(msg));
            } else {
                rejected(&mut reply, c.client, msg);
            }
        }};
    }

    // A command parsed ahead (prefetch.rs) was looked up then already.
    let resolved = c.scratch.pre_cmd.take();
    let Some(mut cmd) = resolved.map(|id| c.commands.get(id)).or_else(|| c.scratch.last_name.lookup(c.commands, name)) else {
        let msg = errors::unknown_command(name, args.tail(1).iter());
        rejected(&mut reply, c.client, &msg);
        return finish_reply(c.client, reply, start_mark);
    };
    if resolved.is_none() && !cmd.spec.subcommands.is_empty() && args.len() >= 2 {
        match c.commands.lookup_sub(cmd, args.get(1)) {
            Some(sub) => cmd = sub,
            None => {
                let msg = errors::unknown_subcommand(args.get(1), cmd.spec.name);
                c.stats.cmds[cmd.id].rejected.add(1);
                rejected(&mut reply, c.client, &msg);
                return finish_reply(c.client, reply, start_mark);
            }
        }
    }
    if !cmd.arity_ok(args.len()) {
        c.stats.cmds[cmd.id].rejected.add(1);
        // A malformed EXEC ends the transaction instead of flagging it.
        if c.client.multi.is_some() && cmd.spec.name == "exec" {
            transactions::abort_exec(c.srv, c.client, c.locks, &mut reply, &errors::arity(&cmd.fullname));
            return finish_reply(c.client, reply, start_mark);
        }
        rejected(&mut reply, c.client, errors::arity(&cmd.fullname).as_bytes());
        return finish_reply(c.client, reply, start_mark);
    }
    if cmd.has(flags::PROTECTED) && !debug::allowed(srv, c.client) {
        c.stats.cmds[cmd.id].rejected.add(1);
        rejected(&mut reply, c.client, errors::DEBUG_NOT_ALLOWED.as_bytes());
        return finish_reply(c.client, reply, start_mark);
    }
    if !c.client.authenticated && !cmd.has(flags::NO_AUTH) && srv.acl.auth_required() {
        c.stats.cmds[cmd.id].rejected.add(1);
        refuse!(cmd, errors::NOAUTH.as_bytes());
        return finish_reply(c.client, reply, start_mark);
    }
    if c.client.multi.is_some() && cmd.has(flags::NO_MULTI) && !cmd.has(flags::TX_CONTROL) {
        c.stats.cmds[cmd.id].rejected.add(1);
        rejected(&mut reply, c.client, errors::NOT_ALLOWED_IN_MULTI.as_bytes());
        return finish_reply(c.client, reply, start_mark);
    }
    // ACL: one relaxed load and a flag for a user allowed everything
    // whose rules did not change (`default` unless restricted).
    if !c.client.user.unrestricted || c.client.acl_epoch != srv.acl.epoch() {
        c.client.refresh_user(&srv.acl);
        if !c.client.user.unrestricted {
            if let Err(why) = access::check(&c.client.user, cmd, args) {
                c.stats.cmds[cmd.id].rejected.add(1);
                let now = c.scratch.clock.last_ms();
                let place = if c.client.multi.is_some() { access::Place::Queued } else { access::Place::Toplevel };
                let msg = access::refused(srv, c.commands, c.client, cmd, args, why, now, place);
                refuse!(cmd, &msg);
                return finish_reply(c.client, reply, start_mark);
            }
        }
    }
    // Cluster mode: a command whose keys this node does not serve goes to
    // the node that does (Redis's processCommand, after the ACL check);
    // the master's stream and the AOF are obeyed whatever the slots.
    if let Some(cl) = srv.cluster.get() {
        // A pipelined command's keys were located ahead (prefetch.rs),
        // slots included: all in one slot this node serves is the common
        // case, decided without hashing them again.
        let planned = c.scratch.pre.as_ref().is_some_and(|p| p.cmd == cmd.id && p.db == c.client.db && p.argc == args.len());
        let locs = &c.scratch.pre_locs;
        let local = planned
            && cmd.spec.key_finder.is_none()
            && locs.first().is_some_and(|f| locs.iter().all(|l| l.slot == f.slot) && cl.serves(f.slot) && cl.is_ok());
        if !local && !c.client.obeys_always() {
            if let Err(refusal) = cluster::route(srv, cl, c.commands, c.client, cmd, args) {
                let msg = refusal.wire();
                c.stats.cmds[cmd.id].rejected.add(1);
                // EXEC's transaction ends; a command queued in MULTI
                // makes EXEC fail.
                if cmd.spec.name == "exec" {
                    transactions::discard_transaction(c.srv, c.client, c.locks);
                }
                rejected(&mut reply, c.client, &msg);
                return finish_reply(c.client, reply, start_mark);
            }
        }
    }
    // A monitor may only run commands that touch no key (as a replica).
    if c.client.monitor.is_some() && cmd.has(flags::READONLY | flags::WRITE | flags::MAY_REPLICATE) {
        c.stats.cmds[cmd.id].rejected.add(1);
        refuse!(cmd, errors::REPLICA_KEYSPACE.as_bytes());
        return finish_reply(c.client, reply, start_mark);
    }
    // A replica: only its master writes (`replica-read-only`); while it
    // loads its master's snapshot only `loading` commands run; with its
    // link down and `replica-serve-stale-data no`, only `stale` ones.
    if srv.repl.is_replica() && !c.client.obeys_always() {
        if let Some(msg) = replica_refusal(srv, c.commands, c.client, cmd, args) {
            c.stats.cmds[cmd.id].rejected.add(1);
            refuse!(cmd, msg.as_bytes());
            return finish_reply(c.client, reply, start_mark);
        }
    }
    // An item holds keys up to 1 GiB - 1; longer ones (possible only with
    // proto-max-bulk-len and client-query-buffer-limit both raised above
    // 1gb) are refused before anything is located or stored.
    if cmd.keys(args).any(|k| args.get(k.pos).len() > tern_store::MAX_KEY_LEN) {
        c.stats.cmds[cmd.id].rejected.add(1);
        refuse!(cmd, errors::KEY_TOO_LONG.as_bytes());
        return finish_reply(c.client, reply, start_mark);
    }
    if srv.settings.maxmemory() > 0 && needs(srv, c.commands, c.client, cmd, args, flags::DENYOOM) {
        let now = c.scratch.clock.last_ms();
        if maxmemory::make_room(srv, now, &c.locks.effects) == maxmemory::Room::Full {
            c.stats.cmds[cmd.id].rejected.add(1);
            refuse!(cmd, errors::OOM.as_bytes());
            return finish_reply(c.client, reply, start_mark);
        }
    }
    // A failed background save with `stop-writes-on-bgsave-error`: writes
    // and PING are refused until a save succeeds (Redis's
    // writeCommandsDeniedByDiskError). One relaxed load while saves succeed.
    if crate::persist::writes_refused(srv) && (needs(srv, c.commands, c.client, cmd, args, flags::WRITE) || cmd.spec.name == "ping") {
        c.stats.cmds[cmd.id].rejected.add(1);
        refuse!(cmd, errors::MISCONF.as_bytes());
        return finish_reply(c.client, reply, start_mark);
    }
    // `min-replicas-to-write`: a master short of replicas that acknowledged
    // within `min-replicas-max-lag` refuses writes.
    if !srv.repl.writes_allowed() && needs(srv, c.commands, c.client, cmd, args, flags::WRITE) {
        c.stats.cmds[cmd.id].rejected.add(1);
        refuse!(cmd, errors::NOREPLICAS.as_bytes());
        return finish_reply(c.client, reply, start_mark);
    }
    // A RESP2 subscriber may only (un)subscribe, PING, QUIT and RESET.
    if !c.client.resp3 && c.client.subs.is_some() && !pubsub::allowed_while_subscribed(cmd.fullname.as_str()) {
        c.stats.cmds[cmd.id].rejected.add(1);
        refuse!(cmd, errors::pubsub_context(&cmd.fullname));
        return finish_reply(c.client, reply, start_mark);
    }
    // A script running past busy-reply-threshold: only the commands that
    // may run beside it (SCRIPT KILL, FUNCTION KILL...), as in Redis.
    if !cmd.has(flags::ALLOW_BUSY) {
        if let Some(e) = busy_error(srv, c.scratch.clock.last_ms()) {
            c.stats.cmds[cmd.id].rejected.add(1);
            refuse!(cmd, e.as_bytes());
            return finish_reply(c.client, reply, start_mark);
        }
    }
    // CLIENT PAUSE holds the command back, as Redis's processCommand does
    // right here: after the checks that refuse it, before MULTI queues it.
    if srv.pause.is_set() {
        let now = c.scratch.clock.last_ms();
        let held = match srv.pause.mode_at(now) {
            Some(PauseMode::All) => true,
            Some(PauseMode::Write) => needs(srv, c.commands, c.client, cmd, args, flags::WRITE | flags::MAY_REPLICATE),
            None => false,
        };
        if held {
            c.client.reply_mode = reply_mode;
            return After::Postpone;
        }
    }
    if c.client.multi.is_some() && !cmd.has(flags::TX_CONTROL) {
        if let Some(m) = c.client.multi.as_mut() {
            let mut ranges = Vec::with_capacity(args.len());
            for a in args.iter() {
                ranges.push((m.data.len(), a.len()));
                m.data.extend_from_slice(a);
            }
            m.cmds.push((cmd.id, ranges));
            c.client.shared.multi_len.store(m.cmds.len(), std::sync::atomic::Ordering::Relaxed);
        }
        reply.simple("QUEUED");
        return finish_reply(c.client, reply, start_mark);
    }
    let after = call(c.srv, c.commands, c.locks, &mut reply, c.client, c.stats, c.scratch, c.worker, cmd, args);
    // ASKING holds for the one command after it (or a transaction's).
    if c.client.asking && c.client.multi.is_none() && cmd.spec.name != "asking" {
        c.client.asking = false;
    }
    // What the command delivered to its own client (a message it
    // published to itself, the invalidation of a key it wrote) follows
    // its reply, as Redis writes such pushes after the command's reply.
    drain_own(c.client, &mut reply, c.locks);
    let a2 = finish_reply(c.client, reply, start_mark);
    if after == After::Close {
        After::Close
    } else {
        a2
    }
}

/// Writes what waits in the client's inbox into its replies (one load
/// when nothing does); not in the middle of EXEC's reply, whose array
/// it would break.
#[inline]
pub(super) fn drain_own(client: &Client, reply: &mut Reply<'_>, locks: &LockSet<'_>) {
    if let Some(inbox) = client.shared.inbox_if_any() {
        if inbox.queued() > 0 && !locks.is_pinned() {
            let to = crate::messaging::Receiver { resp3: client.resp3, subscribed: client.subs.is_some(), share_min: reply.share_min() };
            inbox.drain_into(reply.out, to);
        }
    }
}

/// The BUSY error, when a script has run past `busy-reply-threshold`
/// under the scripts' gate (one relaxed load when none runs).
pub fn busy_error(srv: &Server, now: u64) -> Option<&'static str> {
    if !srv.scripts.script_running() {
        return None;
    }
    let threshold = srv.config.read().busy_reply_threshold.as_millis() as u64;
    srv.scripts.busy(now, threshold).map(|eval| if eval { errors::BUSY_SCRIPT } else { errors::BUSY_FUNCTION })
}

/// How long a command waits for a shard a script holds before it looks
/// again whether the script has become busy.
pub const BUSY_SLICE: Duration = Duration::from_millis(5);

/// What a replica refuses of a client's command (Redis's order: the
/// loading check, then stale data, then writes).
#[cold]
fn replica_refusal(srv: &Server, commands: &CommandTable, client: &Client, cmd: &Cmd, args: Args<'_>) -> Option<&'static str> {
    if srv.persist.loading.load(std::sync::atomic::Ordering::Relaxed) && !cmd.has(flags::LOADING) {
        return Some(errors::LOADING);
    }
    let (serve_stale, read_only) = {
        let c = srv.config.read();
        (c.replica_serve_stale_data, c.replica_read_only)
    };
    if !serve_stale && !srv.repl.link_up() && !cmd.has(flags::STALE) {
        return Some(errors::MASTERDOWN);
    }
    if read_only && needs(srv, commands, client, cmd, args, flags::WRITE) {
        return Some(errors::READONLY_REPLICA);
    }
    None
}

/// Whether `cmd` counts as having one of `flags` the way Redis 8.4's
/// `processCommand` decides for the memory limit (`denyoom`) and CLIENT
/// PAUSE WRITE (`write`, `may_replicate`): the command's own flags (also
/// when MULTI queues it), and for EXEC, those of the commands queued.
fn needs(srv: &Server, commands: &CommandTable, client: &Client, cmd: &Cmd, args: Args<'_>, flags: u32) -> bool {
    if own_flags(srv, cmd, args) & flags != 0 {
        return true;
    }
    match client.multi.as_ref() {
        Some(m) if cmd.spec.name == "exec" => m.cmds.iter().any(|(id, _)| commands.get(*id).has(flags)),
        _ => false,
    }
}

/// A command's flags as Redis's processCommand weighs them: for EVAL and
/// FCALL, from the flags the script or function declared (Redis's
/// scriptFlagsToCmdFlags), or, for a script without a shebang, as a
/// command that may replicate.
fn own_flags(srv: &Server, cmd: &Cmd, args: Args<'_>) -> u32 {
    use crate::scriptcache::flags as sf;
    let f = cmd.spec.flags;
    if f & flags::SCRIPT_FLAGS == 0 || args.len() < 2 {
        return f;
    }
    let Some(declared) = srv.scripts.declared_flags(cmd.spec.name, args.get(1)) else {
        return if f & flags::READONLY == 0 { f | flags::MAY_REPLICATE } else { f };
    };
    let mut f = f & !(flags::STALE | flags::DENYOOM | flags::WRITE | flags::MAY_REPLICATE);
    if declared & (sf::ALLOW_OOM | sf::NO_WRITES) == 0 {
        f |= flags::DENYOOM;
    }
    if declared & sf::NO_WRITES == 0 {
        f |= flags::WRITE;
    }
    if declared & sf::ALLOW_STALE != 0 {
        f |= flags::STALE;
    }
    f
}

fn finish_reply(client: &mut Client, reply: Reply<'_>, start_mark: usize) -> After {
    if matches!(client.reply_mode, ReplyMode::Off | ReplyMode::SkipThis) {
        reply.out.truncate(start_mark);
    }
    if client.close_after_reply {
        After::Close
    } else {
        After::Continue
    }
}

/// Runs a command whose arity and permissions are checked: plans and locks
/// its keys, runs the handler, tells WATCHers, counts stats. EXEC calls it
/// for each queued command with every shard already held (pinned).
#[allow(clippy::too_many_arguments)]
pub fn call<'ks>(
    srv: &'ks Server,
    commands: &'ks CommandTable,
    locks: &mut LockSet<'ks>,
    reply: &mut Reply<'_>,
    client: &mut Client,
    stats: &WorkerStats,
    scratch: &mut Scratch,
    worker: usize,
    cmd: &'ks Cmd,
    args: Args<'_>,
) -> After {
    let errors_before = reply.errors;
    let mut locs = std::mem::take(&mut scratch.locs);
    locs.clear();
    let planned = scratch.pre.take().is_some_and(|p| p.cmd == cmd.id && p.db == client.db && p.argc == args.len());
    let ahead = if planned { std::mem::take(&mut scratch.pre_ahead) } else { MembersAhead::default() };
    if planned {
        std::mem::swap(&mut locs, &mut scratch.pre_locs);
    } else {
        // MANUAL_LOCKS handlers get their spec'd keys located too (DEL and
        // UNLINK use them); they only lock for themselves. Arguments that
        // do not locate every key (a key count beyond them) locate none:
        // the handler reports the error.
        let mut walk = cmd.keys(args);
        for k in walk.by_ref() {
            locs.push(srv.ks.locate(client.db, args.get(k.pos)));
        }
        if walk.invalid() {
            locs.clear();
        }
    }
    // While a script runs, a command that needs a shard it holds waits
    // in slices, and is answered BUSY if the script becomes busy meanwhile
    // (instead of its worker waiting out the script).
    let mut busy = None;
    if !cmd.has(flags::MANUAL_LOCKS) {
        if srv.scripts.script_running() && !locks.is_pinned() {
            let gave_up = || busy_error(srv, crate::server::now_ms()).is_some();
            if !locks.acquire_or_give_up(locs.iter().map(|l| l.gid), BUSY_SLICE, gave_up) {
                busy = busy_error(srv, crate::server::now_ms()).or(Some(errors::BUSY_SCRIPT));
            }
        } else {
            locks.acquire(locs.iter().map(|l| l.gid));
        }
    }
    // Unsent reply bytes, references counted by their length (never
    // read); nothing is written while the handler runs.
    let out_before = reply.out.pending();
    let now = scratch.clock.last_ms();
    let clock = scratch.clock;
    // Borrow the caller's reply buffer for the handler's Ctx.
    let sub_reply = Reply { out: &mut *reply.out, enc: reply.enc, errors: reply.errors, stats, share_min: reply.share_min };
    let mut ctx = Ctx {
        srv,
        commands,
        ks: &srv.ks,
        locks,
        reply: sub_reply,
        client,
        locs: &locs,
        cmd,
        now,
        clock: &clock,
        stats,
        worker,
        prefetch: scratch.tuner.current.unwrap_or_else(|| srv.prefetch_batch()),
        req_len: scratch.req_len,
        ahead,
    };
    match busy {
        None => {
            // The keyspace event the command's writes are (the store reads
            // it only while notifications are wanted).
            tern_store::event::set_current(cmd.spec.event);
            // A tracking client's read marks the keys its lookups find
            // (`tern_store::tracked`); `tracking::after_command` puts the
            // rest in the table.
            let mark = ctx.client.tracking.as_deref().filter(|t| t.mark != 0 && tracking::remembers(t, cmd)).map_or(0, |t| t.mark);
            if mark != 0 {
                tern_store::tracked::set_reader(mark);
            }
            (cmd.spec.handler)(&mut ctx, args);
            if mark != 0 {
                tern_store::tracked::set_reader(0);
            }
            tern_store::event::set_current(None);
        }
        Some(e) => ctx.reply.error(e),
    }
    let reply_len = ctx.reply.out.pending().saturating_sub(out_before);
    let errs = ctx.reply.errors;
    let resp3_now = ctx.reply.enc.resp3;
    let client = ctx.client;
    let locks = ctx.locks;
    reply.errors = errs;
    // HELLO may switch protocol mid-reply; the caller's encoder follows.
    reply.enc.resp3 = resp3_now;
    // The store told WATCHers of each key written; its effect records
    // follow the command's order even under EXEC's pinned locks.
    locks.gather_effects();
    // WAIT and WAITAOF wait for the replicas and the AOF to have the
    // client's last write.
    if srv.repl.active() || srv.aof.is_on() {
        if let Some(s) = locks.effects.last_seq() {
            client.repl_seq = client.repl_seq.max(s + 1);
        }
    }
    // CLIENT TRACKING: the keys written go to their trackers now (a
    // client's own, under EXEC, reach it after EXEC's reply), while their
    // shards are still held: a read of them on another worker comes after
    // the invalidation, and is remembered anew, as in Redis.
    srv.invalidate_written(&locks.effects, client.caller_id(), client.id, worker);
    locks.release();
    if !locks.is_pinned() {
        srv.invalidate_elsewhere(worker);
    }
    blocking::post_woken(srv, locks);
    // A tracking client's reads are remembered.
    if client.tracking.is_some() {
        tracking::after_command(srv, client, cmd, args, &locs, locks.is_pinned());
    }
    // From the mark the command started at (the end of the one before).
    let took_ns = scratch.clock.advance();
    let usec = took_ns / 1000;
    let st = &stats.cmds[cmd.id];
    // A command that waits counts once, when it is served or times out
    // (as in Redis), not at each attempt: in the stats, the logs and MONITOR.
    if client.blocked.is_none() {
        if srv.settings.latency_tracking() {
            srv.latency.record(worker, cmd.id, took_ns);
        }
        latency::note(srv, cmd, now, usec);
        if srv.monitors.any() && !cmd.has(flags::SKIP_MONITOR | flags::ADMIN) {
            monitor::feed(srv, client, cmd, args);
        }
        st.calls.add(1);
        stats.commands.add(1);
        crate::client::ClientShared::count(&client.shared.cmds, 1);
        commandlog::note(srv, client, worker, cmd, args, now, commandlog::Measured { usec, request: scratch.req_len, reply: reply_len });
    }
    st.usec.add(usec);
    if reply.errors > errors_before {
        st.failed.add(1);
    }
    client.shared.last_cmd.store(cmd.id, std::sync::atomic::Ordering::Relaxed);
    let close = client.close_after_reply;
    // A million-key command's locations (16 MB) are not kept for the
    // worker's life; ordinary commands keep the room and do not allocate.
    if locs.capacity() > KEEP_LOCS {
        locs = Vec::new();
    }
    scratch.locs = locs;
    if close {
        return After::Close;
    }
    After::Continue
}
