//! Batched prefetching of key lookups, on the server side: which keys go
//! through the one staged-lookup engine together. The engine
//! (`tern_table::stage`, with the keyspace's sources in
//! `tern_store::stage`) orders the stages and owns the prefetches; a
//! command hands it its own keys ([`KeyStage`](crate::cmd::stage::KeyStage),
//! from the key spec) and this module a pipeline's keys ([`Plan`]).
//!
//! Two kinds of batch, both sized by `prefetch-batch-max-size` (N; 0 = off,
//! and N is taken as 0 while the data is under `prefetch-min-memory`: it
//! sits in the caches, with no misses to overlap; see
//! [`Server::prefetch_batch`](crate::server::Server::prefetch_batch); and a
//! worker's [`Tuner`](crate::cmd::stage::Tuner) may find its batches
//! faster without them):
//!
//! ```text
//!  within one command (MGET, MSET, DEL, EXISTS, ...), shards already held,
//!  groups G0, G1, ... of N keys, each stage a fixed number of groups ahead
//!  of the one that runs (here for readers of the bytes; for the others
//!  buckets are two groups ahead, items one, no value stage):
//!    buckets(G0..G3) items(G0..G2) values(G0, G1)  run G0
//!    buckets(G4)     items(G3)     values(G2)      run G1
//!    ...
//!  where items(G) reads G's buckets, then prefetches all of G's items
//!  back to back (their page walks overlap), and values(G) reads the items
//!  and prefetches strings kept apart or longer than two lines.
//!
//!  across the commands of one read (a RESP pipeline), no lock held:
//!    parse cmd0 cmd1 cmd2 ...  ─► locate their keys (hash once) ─► hint(gid, hash)
//!    ─► [several keyed commands: item(k), then value(k) for readers, each
//!        under its shard's lock if free, released at once]
//!    ─► execute cmd0 (reusing its Locs) ─► cmd1 ─► ...
//!
//!  memcached reads: a copy of the parser looks ahead; keys are hinted only
//!  (memcache/ locates again when it runs them).
//! ```
//!
//! A planned command that names a member of its first key
//! (`CommandSpec::member`: ZADD, ZINCRBY, ZREM, ZSCORE, ZRANK, ZREVRANK,
//! SADD, SREM, SISMEMBER, SMISMEMBER, HGET, HSET and the other one-field
//! hash commands) has the member hashed as well. Stage 3, which reads a
//! small aggregate's box to ask for its pack's first lines, asks instead
//! for the member's bucket (or index line) in a large one. And each
//! command is handed the members of the two after it (`MembersAhead`): a
//! sorted-set command holding the same key asks for the far one's index
//! line and the near one's slot.
//!
//! A miss on a bucket or an item costs ~100 ns; issued one after another
//! the misses of N keys add up, issued back to back they overlap. Prefetch
//! is only a hint: results and their order are exactly those of running
//! the keys one by one, and with N = 0 nothing here runs at all.
//!
//! Non-goals: reordering work (keys still execute in request order), and
//! batching inside MULTI (queued commands are not executed when read).
//!
//! Measured (Nov 2026, 2-vCPU KVM guest, AMD EPYC, 5M keys of 100 B, one
//! worker, tern-bench with 50 clients and `--distinct-client-seed`, medians
//! of 4-5 alternating runs, on = 16 vs off = 0): MGET x100 1.64x the
//! commands per second (server CPU per command 140 -> 82 us); MGET x10
//! pipelined by 10 1.96x; MGET x10 1.22x; GET pipelined by 16 1.22x;
//! memcached `mg` pipelined by 16 1.2x less server CPU per request.
//! Without distinct seeds every client asks for the same keys in lockstep,
//! the keys are in cache, and on costs 5-10% instead (its own stage work).
//! In-process (no network), the three stages make a lookup of a 100 B
//! string 2-2.6x faster. With the staggered stages and back-to-back item
//! prefetches (`bench/prefetch_mget.sh`, six
//! alternating runs per binary): MGET x100 off 90.3 vs on 42.1 us of server
//! CPU, 2.14x (1.70x for the binary before, in the same runs); memcached
//! `get` of 100 keys on: 63.9 -> 51.9 us (`bench/prefetch_mc_get.sh`).

use tern_resp::{Frame, Limits};
use tern_store::stage::{items_and_values, Unlocked};
use tern_store::{Loc, Reach};

use crate::client::Client;
use crate::cmd::table::{flags, Cmd, CommandTable, LastName};
use crate::cmd::{keyspec, MembersAhead, Planned};
use crate::server::Server;

/// Most keys located ahead for one read's batch; a command whose keys
/// would pass it is still parsed ahead but locates its keys when it runs
/// (so that a huge MSET does not grow the per-worker buffers).
const PLAN_MAX_KEYS: usize = 1024;

/// One command parsed ahead.
#[derive(Clone, Copy, Debug)]
struct Ahead {
    /// Request bytes, from its first byte.
    len: usize,
    /// Its argument ranges in [`Plan::ranges`] (offsets from its first byte).
    args: (u32, u32),
    /// Its command table id, when found.
    cmd: Option<usize>,
    /// Its keys' locations in [`Plan::locs`], when located ahead.
    locs: Option<(u32, u32, Planned)>,
    /// The member it looks up in its first key (see [`MembersAhead`]).
    member: Option<(u64, u64)>,
}

/// The commands of one read parsed ahead, with their keys located and
/// hinted. Per worker, reused: its vectors keep their capacity, so a
/// steady pipeline does not allocate.
#[derive(Default)]
pub struct Plan {
    ranges: Vec<(usize, usize)>,
    locs: Vec<Loc>,
    /// The hinted keys, as (offset in the read, length), with their
    /// locations, whether their command reads values, and the hash of the
    /// member it looks up in the key: what stages 2 and 3 run over.
    hinted: Vec<(usize, usize, Loc, bool, Option<u64>)>,
    /// The hinted keys (their places in `hinted`) that the client's
    /// tracking will note in the tracking table: stages 1 and 2 ask for
    /// their lines there too.
    tracked: Vec<usize>,
    cmds: Vec<Ahead>,
    next: usize,
    /// The frame stopped inside an incomplete request right after the last
    /// planned command: its resume state is only valid from there.
    partial_after: bool,
}

/// What [`Plan::next`] hands the connection for the next command.
pub struct Next<'p> {
    pub ranges: &'p [(usize, usize)],
    pub len: usize,
    pub cmd: Option<usize>,
    pub planned: Option<(Planned, &'p [Loc])>,
    /// The members the two planned commands after it look up.
    pub ahead: MembersAhead,
}

impl Plan {
    /// True when no planned command is waiting.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.next >= self.cmds.len()
    }

    /// Parses the complete multibulk requests at the start of `buf` (the
    /// unexecuted bytes of a read), up to about `batch` of them or `batch`
    /// keys, locates their keys in the client's database and asks for the
    /// lines of each key's shard lock and bucket (and further, see below).
    /// Stops before an inline request, an
    /// empty one or a protocol error, which the caller's own parse handles
    /// (after the planned commands, so order is kept).
    ///
    /// Keys are located only while the database they will run in is
    /// known: not after a command that may change it (SELECT, RESET), nor
    /// once a MULTI queues what follows.
    #[allow(clippy::too_many_arguments)]
    pub fn fill(&mut self, srv: &Server, commands: &CommandTable, last_name: &mut LastName, frame: &mut Frame, buf: &[u8], limits: &Limits, client: &Client, batch: usize) {
        self.clear();
        let db = client.db;
        // A client tracking keys (not by prefix) has each read's keys
        // noted in the tracking table after the read.
        // A tracking client's reads go to the tracking table only when it
        // has no mark slot (with one, a key read is marked in its item).
        let tracks = client.tracking.as_deref().is_some_and(|t| !t.tracker.bcast && t.mark == 0);
        let tracking = &srv.messaging.tracking;
        let mut off = 0;
        let mut locate = client.multi.is_none();
        while off < buf.len() && buf[off] == b'*' && self.cmds.len() < batch.max(1) {
            let rest = &buf[off..];
            let n = match frame.parse(rest, limits) {
                Ok(Some(n)) if frame.argc() > 0 => n,
                Ok(Some(_)) | Err(_) => break,
                Ok(None) => {
                    self.partial_after = true;
                    break;
                }
            };
            let r0 = self.ranges.len();
            self.ranges.extend_from_slice(frame.ranges());
            let args = frame.args(rest);
            let cmd = resolve(last_name, commands, args);
            let mut ahead = Ahead { len: n, args: (r0 as u32, self.ranges.len() as u32), cmd: cmd.map(|c| c.id), locs: None, member: None };
            if locate {
                if let Some(cmd) = cmd {
                    let name = cmd.spec.name;
                    let (l0, h0) = (self.locs.len(), self.hinted.len());
                    let reads = cmd.has(flags::READONLY);
                    // The member the command looks up in its first key:
                    // stage 3 asks for its line there.
                    let member = member_of(cmd, args).map(tern_store::member_hash);
                    // One walk over the keys, each located as found, then
                    // stage 1 for them. A command past the planner's room,
                    // or whose arguments do not locate its keys, is not
                    // planned (it locates for itself when it runs).
                    let room = PLAN_MAX_KEYS.saturating_sub(l0);
                    let mut walk = cmd.keys(args);
                    let mut fits = true;
                    while let Some(k) = walk.next() {
                        // Past the first key the walk knows how many more
                        // its range holds: a huge MSET stops here.
                        let n = self.locs.len() - l0;
                        if n >= room || (n == 0 && walk.size_hint().0 >= room) {
                            fits = false;
                            break;
                        }
                        let l = srv.ks.locate(db, args.get(k.pos));
                        self.locs.push(l);
                        if self.hinted.len() < batch {
                            let (start, len) = frame.ranges()[k.pos];
                            // A write that reads its key's value first (SADD,
                            // HSET, LPUSH, INCR: `RW` in its key spec) wants
                            // the value's lines as a read does; not one whose
                            // flags depend on its arguments (SET is `RW` only
                            // with GET or a condition, and plain it overwrites).
                            let rw = k.flags & (keyspec::RW | keyspec::VARIABLE_FLAGS) == keyspec::RW;
                            let reads = reads || rw;
                            let first = self.locs.len() - l0 == 1;
                            self.hinted.push((off + start, len, l, reads, member.filter(|_| first)));
                        }
                    }
                    if fits && !walk.invalid() && self.locs.len() > l0 {
                        let planned = Planned { cmd: cmd.id, db, argc: args.len() };
                        ahead.locs = Some((l0 as u32, self.locs.len() as u32, planned));
                        ahead.member = member.map(|m| (self.locs[l0].hash, m));
                    } else {
                        self.locs.truncate(l0);
                        self.hinted.truncate(h0);
                    }
                    // Stage 1 (no lock taken), after the walk: a bucket's
                    // address waits on its key's slot and hash, and asked
                    // for inside the walk that wait held up the next key.
                    for &(_, _, l, _, _) in &self.hinted[h0..] {
                        srv.ks.prefetch_hint(l.gid, l.hash);
                    }
                    if tracks && reads && !cmd.has(flags::PUBSUB) {
                        for (i, &(_, _, l, _, _)) in self.hinted.iter().enumerate().skip(h0) {
                            tracking.prefetch_bucket(l.hash);
                            self.tracked.push(i);
                        }
                    }
                    if cmd.parent.is_none() && matches!(name, "select" | "reset" | "multi") {
                        locate = false;
                    }
                }
            }
            self.cmds.push(ahead);
            off += n;
            if self.locs.len() >= batch {
                break;
            }
        }
        // Stages 2 and 3 across commands, for a pipeline of several keyed
        // commands (a lone multi-key command stages its own keys): each
        // key's item, then for readers its value, is asked for under its
        // shard's lock, taken only if free and released at once, so that by
        // the time the command runs its entry is in cache. Nothing is
        // changed; the command locks again for itself.
        if self.cmds.iter().filter(|a| a.locs.is_some()).count() > 1 {
            self.stage_hinted(srv, buf);
        }
    }

    /// Stages 2 and 3 for the hinted keys (offsets into `buf`): each item,
    /// then for readers each value, asked for under its shard's lock when
    /// that lock is free, released at once.
    fn stage_hinted(&self, srv: &Server, buf: &[u8]) {
        let hinted = &self.hinted;
        let mut src = Unlocked {
            ks: &srv.ks,
            key: |i: usize| {
                let (at, len, l, reads, member) = hinted[i];
                (&buf[at..at + len], l, reads, member)
            },
        };
        items_and_values(&mut src, hinted.len(), Reach::Value, srv.settings.prefetch_value_gate());
        for &i in &self.tracked {
            let (at, len, l, _, _) = hinted[i];
            srv.messaging.tracking.prefetch_item(&buf[at..at + len], l.hash);
        }
    }

    /// The next planned command, if any: its argument ranges (offsets from
    /// its first byte), its length, and its located keys.
    #[inline]
    pub fn next_cmd(&mut self) -> Option<Next<'_>> {
        let a = *self.cmds.get(self.next)?;
        self.next += 1;
        let member = |i: usize| self.cmds.get(i).and_then(|a| a.member);
        Some(Next {
            ranges: &self.ranges[a.args.0 as usize..a.args.1 as usize],
            len: a.len,
            cmd: a.cmd,
            planned: a.locs.map(|(l0, l1, p)| (p, &self.locs[l0 as usize..l1 as usize])),
            ahead: MembersAhead { near: member(self.next), far: member(self.next + 1) },
        })
    }

    /// The next request at the start of `buf` (the unexecuted bytes of a
    /// read) and its length: planned ahead with the ones after it when
    /// `batch` > 0 ([`Plan::fill`]), else parsed alone by `frame`. The one
    /// way requests are read from a buffer, by a connection and by a
    /// replica's link to its master. A planned request's command and keys
    /// come with it, for [`Scratch::plan_next`](crate::cmd::Scratch::plan_next).
    #[allow(clippy::too_many_arguments)]
    pub fn next_request<'b>(
        &'b mut self,
        srv: &Server,
        commands: &CommandTable,
        last_name: &mut LastName,
        frame: &'b mut Frame,
        buf: &'b [u8],
        limits: &Limits,
        client: &Client,
        batch: usize,
    ) -> Result<Option<(tern_resp::Args<'b>, usize, Option<Next<'b>>)>, tern_resp::ParseError> {
        if batch > 0 && self.is_empty() && limits.authenticated && !frame.is_partial() {
            self.fill(srv, commands, last_name, frame, buf, limits, client, batch);
        }
        match self.next_cmd() {
            Some(p) => Ok(Some((tern_resp::Args::from_parts(buf, p.ranges), p.len, Some(p)))),
            None => frame.parse(buf, limits).map(|r| r.map(|n| (frame.args(buf), n, None))),
        }
    }

    /// Drops the commands not executed yet (the connection paused, closed,
    /// or its parse limits changed). If the frame was left inside a request
    /// after them, its resume state is wrong for where parsing restarts,
    /// so it is reset.
    pub fn abandon(&mut self, frame: &mut Frame) {
        if !self.is_empty() && self.partial_after {
            *frame = Frame::new();
        }
        self.clear();
    }

    fn clear(&mut self) {
        // One huge request (a million-key MSET) must not leave its
        // ranges' room behind for the worker's life.
        if self.ranges.capacity() > 1 << 16 {
            self.ranges = Vec::new();
        }
        self.ranges.clear();
        self.locs.clear();
        self.hinted.clear();
        self.tracked.clear();
        self.cmds.clear();
        self.next = 0;
        self.partial_after = false;
    }
}

impl Plan {
    /// Cross-command prefetch for a memcached read: the keys of its leading
    /// complete requests (up to `batch` keys) are located, their shard lock
    /// and bucket lines asked for, then their items (and, for gets, their
    /// values) under each shard's lock when it is free, as for RESP, before
    /// the first request runs. A copy of the parser looks ahead, so the
    /// requests and their order are untouched. Returns how many requests it
    /// looked at, so that the caller looks ahead again only once it has run
    /// them.
    ///
    /// Unlike the RESP path, the memcached executor locates each key again
    /// when it runs (memcache/ takes no precomputed locations).
    pub fn look_ahead_mc(&mut self, srv: &Server, parser: &tern_memcache::Parser, buf: &[u8], lim: &tern_memcache::Limits, batch: usize) -> usize {
        use tern_memcache::{MetaCmd, Request};
        if !worth_looking_ahead(buf) {
            return 0;
        }
        self.hinted.clear();
        let mut p = parser.clone();
        let (mut off, mut reqs, mut hinted) = (0, 0, 0);
        let base = buf.as_ptr() as usize;
        let mut hint = |key: &[u8], reads: bool, hinted: &mut usize| {
            if *hinted < batch {
                let l = srv.ks.locate(0, key);
                srv.ks.prefetch_hint(l.gid, l.hash);
                *hinted += 1;
                // Keys borrowed from the read (all but base64-decoded ones)
                // are kept as offsets into it for the locked stages.
                let at = (key.as_ptr() as usize).wrapping_sub(base);
                if at <= buf.len() && key.len() <= buf.len() - at {
                    self.hinted.push((at, key.len(), l, reads, None));
                }
            }
        };
        while off < buf.len() && reqs < batch && hinted < batch {
            let Ok(Some((req, n))) = p.parse(&buf[off..], lim) else { break };
            off += n;
            reqs += 1;
            match req {
                Request::Get { keys, .. } => keys.iter().for_each(|k| hint(k, true, &mut hinted)),
                Request::Meta(m) => hint(&m.key, m.cmd == MetaCmd::Get, &mut hinted),
                Request::Store { key, .. } | Request::Delete { key, .. } | Request::Arith { key, .. } | Request::Touch { key, .. } => hint(key, false, &mut hinted),
                _ => {}
            }
        }
        if self.hinted.len() > 1 {
            self.stage_hinted(srv, buf);
        }
        self.hinted.clear();
        reqs
    }
}

/// A read of one request line has misses to overlap only if it is a get
/// of several keys; anything else with one line is left alone, so that a
/// client that does not pipeline pays nothing for the look-ahead.
fn worth_looking_ahead(buf: &[u8]) -> bool {
    match buf.iter().position(|&c| c == b'\n') {
        Some(nl) if nl + 1 == buf.len() => {
            let mut words = buf[..nl].split(|&c| c == b' ' || c == b'\r').filter(|w| !w.is_empty());
            matches!(words.next(), Some(b"get" | b"gets" | b"gat" | b"gats")) && words.nth(1).is_some()
        }
        _ => true,
    }
}

/// The member argument a command looks up in its first key
/// ([`crate::cmd::table::CommandSpec::member`]), if it has one.
fn member_of<'a>(cmd: &Cmd, args: tern_resp::Args<'a>) -> Option<&'a [u8]> {
    let at = cmd.spec.member?;
    let i = if at < 0 { args.len().checked_sub(at.unsigned_abs() as usize)? } else { at as usize };
    (i >= 2 && i < args.len()).then(|| args.get(i))
}

/// The command (or subcommand) a request will run, if it has one; the
/// rest of dispatch's checks are left to dispatch, which ignores planned
/// locations that do not match what it runs.
fn resolve<'s>(last: &mut LastName, commands: &'s CommandTable, args: tern_resp::Args<'_>) -> Option<&'s Cmd> {
    let cmd = last.lookup(commands, args.get(0))?;
    if !cmd.spec.subcommands.is_empty() && args.len() >= 2 {
        return commands.lookup_sub(cmd, args.get(1));
    }
    Some(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memcache_look_ahead_only_when_there_is_more_than_one_key() {
        assert!(!worth_looking_ahead(b"get a\r\n"));
        assert!(!worth_looking_ahead(b"mg a v\r\n"));
        assert!(worth_looking_ahead(b"get a b\r\n"));
        assert!(worth_looking_ahead(b"gets  a b\r\n"));
        assert!(worth_looking_ahead(b"mg a v\r\nmg b v\r\n"));
        assert!(worth_looking_ahead(b"mg a v\r\nmg b"));
        assert!(worth_looking_ahead(b"set a 0 0 1\r\nx\r\n"));
    }
}
