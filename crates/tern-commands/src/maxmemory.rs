//! The memory limit: what `used_memory` counts, and the check a command
//! that may grow memory passes before it runs (`maxmemory`).
//!
//! ```text
//!  used_memory = base (the process's own structures, measured at start)
//!              + Σ shards  (tables, items, values at jemalloc size classes; tern-store)
//!              + Σ workers (their clients' query and output buffers)
//! ```
//!
//! Every term is a counter with one writer (a shard's lock holder, a
//! worker), summed when read. The check before each write reads the
//! shards' coarse total (one load, see `Keyspace::used_memory`), so it
//! costs nothing measurable while under the limit.
//!
//! Over the limit, [`make_room`] evicts under `maxmemory-policy` up to
//! 16 × `maxmemory-eviction-tenacity` keys; the command then runs if
//! anything was freed (the background cycle, [`background_evict`], does
//! the rest), as Redis's `performEvictions` lets it, and is refused with
//! `-OOM` only when nothing can be evicted.

use std::cell::Cell;
use std::sync::atomic::Ordering;

use tern_store::Effects;

use crate::server::Server;
use crate::sysinfo;

/// The process's memory as INFO memory, MEMORY STATS and MEMORY DOCTOR
/// report it, read once.
#[derive(Clone, Copy, Debug)]
pub struct Overview {
    /// `used_memory`, exact.
    pub used: u64,
    pub peak: u64,
    pub startup: u64,
    pub clients: u64,
    pub rss: u64,
    /// jemalloc's own figures.
    pub allocated: u64,
    pub active: u64,
    pub resident: u64,
}

impl Overview {
    pub fn read(srv: &Server) -> Overview {
        let (allocated, active, resident) = sysinfo::jemalloc_stats();
        let used = used_memory_exact(srv);
        Overview {
            used,
            peak: sysinfo::peak_memory(used),
            startup: srv.base_memory,
            clients: client_memory(srv),
            rss: sysinfo::rss_bytes(),
            allocated,
            active,
            resident,
        }
    }

    /// `a / b` as Redis computes its ratios (a float; 0 when `b` is 0).
    pub fn ratio(a: u64, b: u64) -> f32 {
        if b == 0 {
            0.0
        } else {
            a as f32 / b as f32
        }
    }
}

/// Whether a write may run (see [`make_room`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Room {
    /// Under the limit, or no limit.
    Fits,
    /// Still over after evicting what one command may: it runs anyway,
    /// and the following commands and the background cycle evict on.
    Evicting,
    /// Over the limit and nothing can be evicted: refuse the write.
    Full,
}

/// Keys one command may evict before it runs, from
/// `maxmemory-eviction-tenacity` (100: no bound).
fn keys_per_command(tenacity: u32) -> usize {
    if tenacity >= 100 {
        usize::MAX
    } else {
        16 * tenacity.max(1) as usize
    }
}

/// Bytes of the workers' client buffers.
pub fn client_memory(srv: &Server) -> u64 {
    srv.sum(|w| w.client_mem.get())
}

thread_local! {
    /// This thread's last sum of the workers' client buffers: (server,
    /// millisecond, bytes).
    static CLIENTS_SEEN: Cell<(usize, u64, u64)> = const { Cell::new((0, u64::MAX, 0)) };
}

/// [`client_memory`] summed at most once per millisecond per thread: the
/// workers write their gauges all the time, and reading every one of
/// their lines before every write would cost a cache miss each.
fn client_memory_at(srv: &Server, now: u64) -> u64 {
    let id = srv as *const Server as usize;
    CLIENTS_SEEN.with(|c| match c.get() {
        (s, at, v) if s == id && at == now => v,
        _ => {
            let v = client_memory(srv);
            c.set((id, now, v));
            v
        }
    })
}

/// `used_memory` as the limit sees it at `now` (ms): the shards' coarse
/// total and the client buffers as summed this millisecond.
#[inline]
fn used_memory(srv: &Server, now: u64) -> u64 {
    srv.base_memory + srv.ks.used_memory() as u64 + client_memory_at(srv, now)
}

/// `used_memory` exactly (INFO, MEMORY STATS): every shard's own counter.
pub fn used_memory_exact(srv: &Server) -> u64 {
    srv.base_memory + srv.ks.used_memory_exact() as u64 + client_memory(srv)
}

/// Bytes over the limit at `now` (ms; 0: under it, or no limit).
pub fn over_limit(srv: &Server, now: u64) -> u64 {
    let max = srv.settings.maxmemory();
    if max == 0 {
        return 0;
    }
    used_memory(srv, now).saturating_sub(max)
}

/// Redis's `stat_last_eviction_exceeded_time` bookkeeping
/// (`performEvictions`' `update_metrics`): a stretch opens when eviction
/// ends a round still over the limit (`over`), and closes, its length
/// added to the total, at the first check that finds memory under it.
/// Under the limit and with no stretch open this is one load of a line
/// that is written only at the transitions.
pub fn note_exceeded(srv: &Server, over: bool) {
    let since = &srv.global.eviction_exceeded_since_us;
    let s = since.load(Ordering::Relaxed);
    if over {
        if s == 0 {
            let _ = since.compare_exchange(0, micros_since_start(srv), Ordering::Relaxed, Ordering::Relaxed);
        }
    } else if s != 0 && since.compare_exchange(s, 0, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
        srv.global.eviction_exceeded_us.fetch_add(micros_since_start(srv).saturating_sub(s), Ordering::Relaxed);
    }
}

/// µs since the server started, plus 1 (so that 0 means "not over").
fn micros_since_start(srv: &Server) -> u64 {
    srv.started.elapsed().as_micros() as u64 + 1
}

/// INFO's (`total_eviction_exceeded_time`, `current_eviction_exceeded_time`),
/// ms: the total includes the open stretch, as in Redis.
pub fn exceeded_time_ms(srv: &Server) -> (u64, u64) {
    let s = srv.global.eviction_exceeded_since_us.load(Ordering::Relaxed);
    let current = if s == 0 { 0 } else { micros_since_start(srv).saturating_sub(s) };
    ((srv.global.eviction_exceeded_us.load(Ordering::Relaxed) + current) / 1000, current / 1000)
}

/// Gets under `maxmemory` before a command that may grow memory: evicts
/// up to the command's share of keys under the policy, their `DEL`
/// records going to `fx`. Must be called with no shard lock held.
pub fn make_room(srv: &Server, now: u64, fx: &Effects) -> Room {
    let need = over_limit(srv, now);
    // Nothing is evicted while CLIENT PAUSE is in force, and the command
    // goes on as if it fitted (Redis's EVICT_OK while paused).
    if need == 0 {
        note_exceeded(srv, false);
        return Room::Fits;
    }
    if srv.pause.mode_at(now).is_some() {
        return Room::Fits;
    }
    let done = evict(srv, now, need, keys_per_command(srv.settings.maxmemory_eviction_tenacity()), fx);
    note_exceeded(srv, (done.freed as u64) < need);
    if done.freed as u64 >= need {
        Room::Fits
    } else if done.keys > 0 {
        Room::Evicting
    } else {
        Room::Full
    }
}

/// The background cycle's share (`hz`): evicts up to `max_keys` while
/// over the limit, so that memory comes down without writes (after
/// CONFIG SET maxmemory lowered it, or a command's share fell short).
/// Returns the keys evicted.
pub fn background_evict(srv: &Server, now: u64, max_keys: usize, fx: &Effects) -> usize {
    let need = over_limit(srv, now);
    if need == 0 {
        note_exceeded(srv, false);
        return 0;
    }
    let done = evict(srv, now, need, max_keys, fx);
    note_exceeded(srv, (done.freed as u64) < need);
    done.keys
}

/// One round of eviction; one that took `latency-monitor-threshold` ms or
/// more is an `eviction-cycle` event of the latency monitor, as in Redis.
fn evict(srv: &Server, now: u64, need: u64, max_keys: usize, fx: &Effects) -> tern_store::Evicted {
    let cfg = srv.settings.evict_config();
    let started = std::time::Instant::now();
    let done = srv.ks.evict(&cfg, now, usize::try_from(need).unwrap_or(usize::MAX), max_keys, fx);
    srv.latency_events.note(srv.settings.latency_monitor_threshold(), "eviction-cycle", now, started.elapsed().as_millis() as u64);
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenacity_bounds_the_keys_of_one_command() {
        assert_eq!(keys_per_command(0), 16);
        assert_eq!(keys_per_command(10), 160);
        assert_eq!(keys_per_command(99), 1584);
        assert_eq!(keys_per_command(100), usize::MAX);
    }
}
