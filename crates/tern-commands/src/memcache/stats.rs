//! `stats` and its sub-listings (`settings`, `items`, `slabs`, `sizes`
//! with `sizes_enable` / `sizes_disable`, `reset`; `cachedump` and the
//! `sizes` histogram are in dump.rs),
//! over the counters in [`Shared`] (shared atomics, bumped with relaxed
//! ordering) and the keyspace's database 0.

use std::fmt::Display;
use std::sync::atomic::{AtomicU64, Ordering};

use tern_memcache::reply::{self, Status};
use tern_memcache::{errors as e, MEMCACHED_VERSION};

use super::{Exec, Shared};
use crate::server::Server;

/// Counts one event.
pub(super) fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl Exec<'_> {
    /// `stats [settings|items|slabs|reset]`.
    pub(super) fn stats(&mut self, args: Vec<&[u8]>) {
        let out = &mut *self.out;
        let stat = |out: &mut Vec<u8>, name: &str, v: &dyn Display| reply::stat(out, name, v);
        let ld = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let sh: &Shared = self.sh;
        let srv: &Server = self.srv;
        // (items, bytes, evictions) of database 0, memcached's keyspace.
        let items = || -> (u64, u64, u64) {
            let (mut n, mut bytes, mut evicted) = (0u64, 0u64, 0u64);
            for gid in srv.ks.db_gids(0) {
                let s = srv.ks.lock(gid);
                n += s.len() as u64;
                bytes += s.mem() as u64;
                evicted += s.evicted;
            }
            (n, bytes, evicted)
        };
        match args.first().copied() {
            None => {
                let now_s = self.now / 1000;
                let uptime = srv.started.elapsed().as_secs();
                stat(out, "pid", &std::process::id());
                stat(out, "uptime", &uptime);
                stat(out, "time", &now_s);
                stat(out, "version", &MEMCACHED_VERSION);
                stat(out, "pointer_size", &(usize::BITS));
                // The process's CPU, as memcached's getrusage figures.
                let (user, system, _, _) = crate::sysinfo::cpu_times();
                stat(out, "rusage_user", &format_args!("{user:.6}"));
                stat(out, "rusage_system", &format_args!("{system:.6}"));
                stat(
                    out,
                    "max_connections",
                    &srv.settings.maxclients(),
                );
                stat(
                    out,
                    "curr_connections",
                    &srv.connected.load(Ordering::Relaxed),
                );
                stat(out, "total_connections", &ld(&sh.total_connections));
                stat(out, "rejected_connections", &srv.sum(|w| w.rejected_connections.get()));
                stat(out, "cmd_get", &ld(&sh.cmd_get));
                stat(out, "cmd_set", &ld(&sh.cmd_set));
                stat(out, "cmd_flush", &ld(&sh.cmd_flush));
                stat(out, "cmd_touch", &ld(&sh.cmd_touch));
                stat(out, "cmd_meta", &ld(&sh.cmd_meta));
                stat(out, "get_hits", &ld(&sh.get_hits));
                stat(out, "get_misses", &ld(&sh.get_misses));
                stat(out, "delete_misses", &ld(&sh.delete_misses));
                stat(out, "delete_hits", &ld(&sh.delete_hits));
                stat(out, "incr_misses", &ld(&sh.incr_misses));
                stat(out, "incr_hits", &ld(&sh.incr_hits));
                stat(out, "decr_misses", &ld(&sh.decr_misses));
                stat(out, "decr_hits", &ld(&sh.decr_hits));
                stat(out, "cas_misses", &ld(&sh.cas_misses));
                stat(out, "cas_hits", &ld(&sh.cas_hits));
                stat(out, "cas_badval", &ld(&sh.cas_badval));
                stat(out, "touch_hits", &ld(&sh.touch_hits));
                stat(out, "touch_misses", &ld(&sh.touch_misses));
                stat(out, "store_too_large", &ld(&sh.store_too_large));
                stat(out, "store_no_memory", &ld(&sh.store_no_memory));
                if srv.acl.auth_required() {
                    stat(out, "auth_cmds", &ld(&sh.auth_cmds));
                    stat(out, "auth_errors", &ld(&sh.auth_errors));
                }
                // Every connection's bytes, both protocols: one server.
                stat(out, "bytes_read", &srv.sum(|w| w.net_input_bytes.get()));
                stat(out, "bytes_written", &srv.sum(|w| w.net_output_bytes.get()));
                // memcached's -m; Tern's limit is `maxmemory` (0: none).
                stat(out, "limit_maxbytes", &srv.settings.maxmemory());
                // Tern never stops accepting (past `maxclients` it accepts
                // and closes, counted in `rejected_connections`).
                stat(out, "accepting_conns", &1);
                stat(out, "threads", &srv.workers.len());
                let (n, bytes, evicted) = items();
                stat(out, "bytes", &bytes);
                stat(out, "curr_items", &n);
                stat(out, "total_items", &ld(&sh.total_items));
                stat(out, "evictions", &evicted);
            }
            Some(b"settings") => {
                let cfg = srv.config.read();
                stat(out, "maxbytes", &cfg.maxmemory);
                stat(out, "maxconns", &cfg.maxclients);
                stat(out, "tcpport", &cfg.memcache_port);
                // memcached's `-M` is `off`: a full cache refuses writes, as
                // Tern's `noeviction` does.
                let evicts = cfg.maxmemory_policy != tern_config::MaxmemoryPolicy::NoEviction;
                stat(out, "evictions", &if evicts { "on" } else { "off" });
                stat(out, "num_threads", &srv.workers.len());
                stat(out, "cas_enabled", &"yes");
                stat(out, "item_size_max", &cfg.memcache_max_item_size);
                stat(out, "flush_enabled", &"yes");
            }
            Some(b"items") => {
                let (n, _, evicted) = items();
                if n > 0 {
                    stat(out, "items:1:number", &n);
                    stat(out, "items:1:evicted", &evicted);
                }
            }
            Some(b"slabs") => {
                let (_, bytes, _) = items();
                stat(out, "active_slabs", &if bytes > 0 { 1 } else { 0 });
                stat(out, "total_malloced", &bytes);
            }
            Some(b"reset") => {
                for c in [
                    &sh.cmd_get,
                    &sh.cmd_set,
                    &sh.cmd_flush,
                    &sh.cmd_touch,
                    &sh.cmd_meta,
                    &sh.store_too_large,
                    &sh.store_no_memory,
                    &sh.get_hits,
                    &sh.get_misses,
                    &sh.delete_hits,
                    &sh.delete_misses,
                    &sh.incr_hits,
                    &sh.incr_misses,
                    &sh.decr_hits,
                    &sh.decr_misses,
                    &sh.cas_hits,
                    &sh.cas_misses,
                    &sh.cas_badval,
                    &sh.touch_hits,
                    &sh.touch_misses,
                    &sh.total_items,
                    &sh.total_connections,
                ] {
                    c.store(0, Ordering::Relaxed);
                }
                sh.detail.clear();
                reply::status(out, Status::Reset);
                return;
            }
            Some(b"cachedump") => return self.cachedump(&args[1..]),
            Some(b"detail") => return self.stats_detail(args.get(1).copied()),
            Some(b"sizes") => return self.stats_sizes(),
            // As memcached, these answer their status line without END.
            Some(b"sizes_enable") => {
                // Items get CAS ids above the counter's current value.
                let next = sh.cas_now() + 1;
                let _ = sh.sizes_cas_min.compare_exchange(0, next, Ordering::Relaxed, Ordering::Relaxed);
                stat(out, "sizes_status", &"enabled");
                return;
            }
            Some(b"sizes_disable") => {
                sh.sizes_cas_min.store(0, Ordering::Relaxed);
                stat(out, "sizes_status", &"disabled");
                return;
            }
            Some(_) => {
                reply::line(out, e::ERROR);
                return;
            }
        }
        reply::status(out, Status::End);
    }
}
