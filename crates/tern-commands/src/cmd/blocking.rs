//! Waiting in a blocking command (BLPOP and its kin, BZPOPMIN and its kin;
//! the streams' blocking reads can use the same calls), across workers.
//!
//! ```text
//!  BLPOP k (worker A), nothing to take ─► wait(): queued on k in its shard
//!        (Shard::block: first come, first queued), the command copied into
//!        Client::blocked, no reply; A stops reading the client's requests
//!  LPUSH k (worker B) ─► the shard notes k ready ─► B's lock release takes
//!        k's first waiter (LockSet::take_woken) ─► cmd::call posts
//!        Wake::Ready(client) to A's mailbox and fires A's mio waker
//!  A, in its next loop turn ─► retry(): runs the copied command again with
//!        the client's keys locked; it takes only where it is first in the
//!        queue (may_take), so clients are served in the order they came;
//!        served() leaves every queue, and a key left with elements is
//!        ready again for its next waiter (Shard::unblock)
//! ```
//!
//! The element is only ever taken by the waiter's own worker, under the
//! key's lock, for a client still connected: a client that leaves first
//! takes nothing and passes its turn on, and no element is handed twice.
//! Timeouts are the owner's too: its event loop sleeps until the earliest
//! deadline of its blocked clients, so an idle blocked client costs nothing.
//! Inside MULTI (and EXEC) a blocking command answers at once as if it had
//! timed out, as in Redis; the writes of an EXEC wake waiters when its locks
//! are released, after the whole transaction.

use tern_resp::{parse_i64, Args};
use tern_store::{Entry, Loc, LockSet, Waiter};

use super::strings::ldouble::LongDouble;
use super::{call, Conn, Ctx, Reply};
use crate::client::{flags as cflags, Blocked, Client};
use crate::errors;
use crate::server::{Server, Wake};
use crate::stats::WorkerStats;
use crate::outbuf::OutBuf;

/// When a blocking command gives up: a deadline in ms since the Unix
/// epoch, or never (`0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeout(pub Option<u64>);

impl Timeout {
    /// Seconds, fractional allowed, as Redis's `getTimeoutFromObjectOrReply`
    /// reads them: rounded up to the millisecond; 0 waits forever.
    pub fn parse(arg: &[u8], now: u64) -> Result<Timeout, &'static str> {
        // Whole seconds, as clients nearly always send them (`BRPOP q 1`):
        // the value the long double path gives, without its parse (up to
        // nine digits, so the milliseconds cannot overflow).
        let whole = if arg.len() <= 9 { parse_i64(arg).filter(|&n| n >= 0) } else { None };
        let ms = if let Some(n) = whole {
            n as u64 * 1000
        } else {
            let v = LongDouble::parse(arg).ok_or(errors::TIMEOUT_NOT_FLOAT)?;
            let ms = v.to_f64() * 1000.0;
            if ms > i64::MAX as f64 {
                return Err(errors::TIMEOUT_OUT_OF_RANGE);
            }
            if ms < 0.0 && ms.ceil() < 0.0 {
                return Err(errors::TIMEOUT_NEGATIVE);
            }
            ms.ceil() as u64
        };
        if ms == 0 {
            return Ok(Timeout(None));
        }
        if ms > i64::MAX as u64 - now {
            return Err(errors::TIMEOUT_OUT_OF_RANGE);
        }
        Ok(Timeout(Some(now + ms)))
    }
}

impl Timeout {
    /// Milliseconds as an integer, as Redis reads a timeout in
    /// `UNIT_MILLISECONDS` (XREAD's BLOCK): 0 waits forever.
    pub fn parse_ms(arg: &[u8], now: u64) -> Result<Timeout, &'static str> {
        let ms = parse_i64(arg).ok_or(errors::TIMEOUT_NOT_INTEGER)?;
        if ms < 0 {
            return Err(errors::TIMEOUT_NEGATIVE);
        }
        if ms == 0 {
            return Ok(Timeout(None));
        }
        if ms as u64 > i64::MAX as u64 - now {
            return Err(errors::TIMEOUT_OUT_OF_RANGE);
        }
        Ok(Timeout(Some(now + ms as u64)))
    }
}

/// Whether the command runs again for a client already waiting (it then
/// takes only what it may and otherwise keeps waiting without a reply).
/// A key of the wrong type does not serve it, so alone it waits on; but
/// before a key it may take from, it ends the wait with WRONGTYPE, as
/// Redis's re-run of the command for that key answers.
pub fn serving(ctx: &Ctx<'_, '_>) -> bool {
    ctx.client.blocked.is_some()
}

/// Whether this client may take from `key` now (it holds the type the
/// client wants): nobody blocked on it for that type came earlier. A
/// transaction cannot wait, so it takes what is there.
pub fn may_take(ctx: &mut Ctx<'_, '_>, loc: Loc, key: &[u8]) -> bool {
    if ctx.locks.is_pinned() {
        return true;
    }
    let id = ctx.client.id;
    ctx.locks.shard(loc.gid).first_waiter(key, loc.hash, id)
}

/// The command was served (its reply is written): a waiting client leaves
/// every queue it was in. The command's keys are locked, and they are the
/// ones it waits on.
pub fn served(ctx: &mut Ctx<'_, '_>) {
    let Some(b) = ctx.client.blocked.take() else { return };
    for (loc, key) in &b.keys {
        let d = ctx.locks.shard(loc.gid).unblock(key, loc.hash, ctx.client.id, ctx.now);
        ctx.srv.count_blocking_keys(d);
    }
    ctx.srv.blocked_clients.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    ctx.client.shared.set_flag(cflags::BLOCKED, false);
}

/// The blocking pops' walk over their `n` keys (arguments `first..`,
/// `locs` `0..n`), in order: `take(ctx, i, loc, key)` pops from key `i`
/// when it holds the type the command wants (`is_type`) and no earlier
/// waiter for that type is due, and says whether it served the client.
/// A key of another type is an error, for a waiter only when a key after
/// it could be taken from (see [`serving`]). True when the command ended
/// (served, or answered WRONGTYPE); false: nothing to take, it waits.
pub fn take_first<'a>(
    ctx: &mut Ctx<'_, '_>,
    args: Args<'a>,
    first: usize,
    n: usize,
    is_type: impl Fn(&Entry) -> bool,
    mut take: impl FnMut(&mut Ctx<'_, '_>, usize, Loc, &'a [u8]) -> bool,
) -> bool {
    let mut wrong = false;
    for i in 0..n {
        let (loc, key) = (ctx.locs[i], args.get(first + i));
        match ctx.locks.shard(loc.gid).get(key, loc.hash, ctx.now).map(&is_type) {
            None => continue,
            Some(false) if serving(ctx) => {
                wrong = true;
                continue;
            }
            Some(false) => {
                ctx.reply.error(errors::WRONGTYPE);
                return true;
            }
            Some(true) => {}
        }
        if !may_take(ctx, loc, key) {
            continue;
        }
        if wrong || take(ctx, i, loc, key) {
            if wrong {
                ctx.reply.error(errors::WRONGTYPE);
            }
            served(ctx);
            return true;
        }
    }
    false
}

/// Nothing to take: waits on `count` keys (arguments `first..`, `locs`
/// `0..count`) for a value of type `wants` (TYPE's name) until `timeout`,
/// replying nothing now; or, inside MULTI or EXEC, answers as the
/// non-blocking form would (`null_array` or a null bulk). A client
/// already waiting just waits on.
pub fn wait(ctx: &mut Ctx<'_, '_>, args: Args<'_>, first: usize, count: usize, wants: &'static str, timeout: Timeout, null_array: bool) {
    wait_on(ctx, args, first, count, wants, timeout, null_array, false)
}

/// [`wait`], for a waiter that is also woken when a key it waits on is
/// deleted (`on_nokey`, Redis's `unblock_on_nokey`: XREADGROUP's, whose
/// group goes with its key, and which then answers with an error).
#[allow(clippy::too_many_arguments)]
pub fn wait_on(ctx: &mut Ctx<'_, '_>, args: Args<'_>, first: usize, count: usize, wants: &'static str, timeout: Timeout, null_array: bool, on_nokey: bool) {
    if serving(ctx) {
        // A stream reader takes nothing from others: the write that woke
        // it may serve the one after it.
        if wants == "stream" {
            if let Some(b) = ctx.client.blocked.as_ref() {
                for (loc, key) in &b.keys {
                    ctx.locks.shard(loc.gid).pass_over(key, loc.hash, ctx.client.id, ctx.now);
                }
            }
        }
        return;
    }
    if ctx.locks.is_pinned() || ctx.client.multi.is_some() {
        return timeout_reply(&mut ctx.reply, null_array);
    }
    let (data, ranges) = kept(args);
    let me = Waiter { client: ctx.client.id, worker: ctx.worker as u32, on_nokey, wants };
    let mut keys: Vec<(Loc, Box<[u8]>)> = Vec::with_capacity(count);
    for i in 0..count {
        let (loc, key) = (ctx.locs[i], args.get(first + i));
        // BLPOP k k waits once on k.
        if keys.iter().any(|(_, k)| **k == *key) {
            continue;
        }
        let d = ctx.locks.shard(loc.gid).block(key, loc.hash, me);
        ctx.srv.count_blocking_keys(d);
        keys.push((loc, key.into()));
    }
    ctx.client.blocked = Some(Box::new(Blocked { cmd: ctx.cmd.id, data, ranges, keys, deadline: timeout.0, acks: false }));
    ctx.srv.blocked_clients.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ctx.client.shared.set_flag(cflags::BLOCKED, true);
}

/// Waits, with no key and no timeout, for a job the server runs in the
/// background to end (FLUSHALL and FLUSHDB SYNC's free): the command is
/// kept as a key waiter's is, and runs again when its job's end posts
/// [`Wake::Ready`] (Redis's BLOCKED_LAZYFREE). A client that leaves first
/// is forgotten like any waiter; the wake then finds nobody.
pub fn wait_for_job(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    wait_keyless(ctx, args, None, false);
}

/// Waits with no key until `deadline`, to be run again when a wake is
/// posted for it: a background job's end, or (`acks`, WAIT) replicas'
/// acknowledgements.
pub fn wait_keyless(ctx: &mut Ctx<'_, '_>, args: Args<'_>, deadline: Option<u64>, acks: bool) {
    let (data, ranges) = kept(args);
    ctx.client.blocked = Some(Box::new(Blocked { cmd: ctx.cmd.id, data, ranges, keys: Vec::new(), deadline, acks }));
    ctx.srv.blocked_clients.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ctx.client.shared.set_flag(cflags::BLOCKED, true);
}

/// Whether the command may wait (not in MULTI or EXEC, nor in a script,
/// whose locks stay pinned).
pub fn may_wait(ctx: &Ctx<'_, '_>) -> bool {
    !ctx.locks.is_pinned() && ctx.client.multi.is_none()
}

/// The command's arguments as a waiting client keeps them, to run again.
fn kept(args: Args<'_>) -> (Vec<u8>, Vec<(usize, usize)>) {
    let mut data = Vec::new();
    let mut ranges = Vec::with_capacity(args.len());
    for a in args.iter() {
        ranges.push((data.len(), a.len()));
        data.extend_from_slice(a);
    }
    (data, ranges)
}

fn timeout_reply(r: &mut Reply<'_>, null_array: bool) {
    if null_array {
        r.null_array()
    } else {
        r.null()
    }
}

/// Tells the owners of the clients woken by writes under `locks` (after
/// they were released).
#[inline]
pub fn post_woken(srv: &Server, locks: &mut LockSet<'_>) {
    if !locks.has_woken() {
        return;
    }
    for w in locks.take_woken() {
        srv.post(w.worker as usize, Wake::Ready(w.client));
    }
}

/// Runs a blocked client's command again (a key it waits on was written).
/// True when it was served (and its reply written).
pub fn retry(r: Conn<'_, '_>) -> bool {
    let Some(b) = r.client.blocked.take() else { return true };
    let cmd = r.commands.get(b.cmd);
    let (data, ranges) = (b.data.clone(), b.ranges.clone());
    r.client.blocked = Some(b);
    let args = Args::from_parts(&data, &ranges);
    let resp3 = r.client.resp3;
    let mut reply = Reply::new(r.out, resp3, r.stats).share_from(r.srv.settings.reply_copy_avoid_min_size());
    r.scratch.clock = super::Clock::now(r.srv.settings.command_time_tsc());
    call(r.srv, r.commands, r.locks, &mut reply, r.client, r.stats, r.scratch, r.worker, cmd, args);
    r.client.blocked.is_none()
}

/// Ends a client's wait without serving it: it leaves its queues (passing
/// its turn on) and, unless it is gone (`reply` None), gets the timeout's
/// reply (a null array, whatever the command, as in Redis; `+OK` for a
/// wait on a background job), or with `error` the `-UNBLOCKED` error.
pub fn abandon(srv: &Server, locks: &mut LockSet<'_>, client: &mut Client, stats: &WorkerStats, out: Option<&mut OutBuf>, error: bool) {
    let Some(b) = client.blocked.take() else { return };
    // Counted before it is forgotten (WAIT's and WAITAOF's timeout reply).
    let acked = if b.acks { Some(srv.repl.forget_waiter(client.id, srv.aof.fsynced())) } else { None };
    if let Some(k) = acked.and_then(|a| a.known) {
        client.repl_known = Some(k);
    }
    let now = crate::server::now_ms();
    locks.acquire(b.keys.iter().map(|(l, _)| l.gid));
    for (loc, key) in &b.keys {
        let d = locks.shard(loc.gid).unblock(key, loc.hash, client.id, now);
        srv.count_blocking_keys(d);
    }
    locks.release();
    post_woken(srv, locks);
    srv.blocked_clients.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    client.shared.set_flag(cflags::BLOCKED, false);
    if let Some(out) = out {
        // It ran to an answer: it counts as a call, as one served does.
        stats.cmds[b.cmd].calls.add(1);
        stats.commands.add(1);
        let mut reply = Reply::new(out, client.resp3, stats);
        if error {
            reply.error(errors::UNBLOCKED);
        } else if let Some(a) = acked {
            // WAIT's timeout: the replicas that acknowledged so far;
            // WAITAOF's: the local AOF's fsync too.
            match a.local {
                Some(local) => {
                    reply.array(2);
                    reply.int(i64::from(local));
                    reply.int(a.replicas as i64);
                }
                None => reply.int(a.replicas as i64),
            }
        } else if b.keys.is_empty() {
            // A wait for a background job (a SYNC flush's free) that
            // cannot fail: its `+OK`, as Redis's timed-out BLOCKED_LAZYFREE.
            reply.ok();
        } else {
            reply.null_array();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_parse_as_redis_reads_them() {
        assert_eq!(Timeout::parse(b"0", 1000), Ok(Timeout(None)));
        assert_eq!(Timeout::parse(b"0.0001", 1000), Ok(Timeout(Some(1001))));
        assert_eq!(Timeout::parse(b"1.5", 1000), Ok(Timeout(Some(2500))));
        assert_eq!(Timeout::parse(b"-0.0001", 1000), Ok(Timeout(None)));
        assert_eq!(Timeout::parse(b"-1", 1000), Err(errors::TIMEOUT_NEGATIVE));
        assert_eq!(Timeout::parse(b"-inf", 1000), Err(errors::TIMEOUT_NEGATIVE));
        assert_eq!(Timeout::parse(b"inf", 1000), Err(errors::TIMEOUT_OUT_OF_RANGE));
        assert_eq!(Timeout::parse(b"1e100", 1000), Err(errors::TIMEOUT_OUT_OF_RANGE));
        assert_eq!(Timeout::parse(b"x", 1000), Err(errors::TIMEOUT_NOT_FLOAT));
        assert_eq!(Timeout::parse(b"nan", 1000), Err(errors::TIMEOUT_NOT_FLOAT));
        assert_eq!(Timeout::parse_ms(b"0", 1000), Ok(Timeout(None)));
        assert_eq!(Timeout::parse_ms(b"250", 1000), Ok(Timeout(Some(1250))));
        assert_eq!(Timeout::parse_ms(b"-1", 1000), Err(errors::TIMEOUT_NEGATIVE));
        assert_eq!(Timeout::parse_ms(b"1.5", 1000), Err(errors::TIMEOUT_NOT_INTEGER));
        assert_eq!(Timeout::parse_ms(b"9223372036854775807", 1000), Err(errors::TIMEOUT_OUT_OF_RANGE));
    }

    /// Whole seconds take a shortcut; they must come out as the long
    /// double path reads them.
    #[test]
    fn whole_seconds_read_as_the_long_double_path() {
        for arg in ["1", "0", "00", "01", "7", "10", "300", "86400", "123456789", "999999999", "1000000000"] {
            let v = LongDouble::parse(arg.as_bytes()).unwrap().to_f64() * 1000.0;
            let ms = v.ceil() as u64;
            let want = if ms == 0 { Timeout(None) } else { Timeout(Some(5 + ms)) };
            assert_eq!(Timeout::parse(arg.as_bytes(), 5), Ok(want), "{arg}");
        }
    }
}
