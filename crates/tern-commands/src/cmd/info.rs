//! INFO: sums the per-worker counters on read and walks the shards one
//! lock at a time for the keyspace section; the process facts come from
//! `sysinfo`.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use tern_resp::Args;

use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::maxmemory;
use crate::server::now_ms;
use crate::sysinfo;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("info", -1, LOADING | STALE | MANUAL_LOCKS, &[], info)
        .doc("server", "Returns information and statistics about the server.", "1.0.0", "O(1)")
        .history(&[("7.0.0", "Added support for taking multiple section arguments.")])
        .acl(&["dangerous"])
        .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
];

/// Sections in output order; the flag says whether plain INFO shows it.
const SECTIONS: &[(&str, bool)] = &[
    ("server", true),
    ("clients", true),
    ("memory", true),
    ("persistence", true),
    ("threads", true),
    ("stats", true),
    ("replication", true),
    ("cpu", true),
    ("modules", true),
    ("commandstats", false),
    ("errorstats", true),
    ("latencystats", false),
    ("cluster", true),
    ("keyspace", true),
];

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

/// One non-empty database as INFO and MEMORY STATS report it.
pub(super) struct DbCounts {
    pub db: usize,
    pub keys: u64,
    /// Keys with a TTL.
    pub volatile: u64,
    /// The sum of their deadlines (ms).
    pub deadline_sum: u128,
    /// Hashes with fields that have a TTL.
    pub subexpiry: u64,
    /// Bytes of the tables' bucket arrays and of the TTL indexes.
    pub table_overhead: u64,
    pub expires_overhead: u64,
}

/// What INFO and MEMORY STATS read from the shards, walking them one lock
/// at a time.
#[derive(Default)]
pub(super) struct ShardCounts {
    pub dbs: Vec<DbCounts>,
    /// Bytes of the items and values (the tables' bucket arrays are
    /// overhead, as Redis counts its dicts').
    pub dataset: u64,
    pub expired: u64,
    pub evicted: u64,
    /// Shards resizing, and the bytes of the arrays they move away from.
    pub rehashing: u64,
    pub rehashing_bytes: u64,
}

pub(super) fn shard_counts(ctx: &mut Ctx<'_, '_>) -> ShardCounts {
    let ks = ctx.ks;
    let mut c = ShardCounts::default();
    for db in 0..ks.db_count() {
        let mut d = DbCounts { db, keys: 0, volatile: 0, deadline_sum: 0, subexpiry: 0, table_overhead: 0, expires_overhead: 0 };
        for gid in ks.db_gids(db) {
            ctx.locks.acquire([gid]);
            let s = ctx.locks.shard(gid);
            d.keys += s.len() as u64;
            d.volatile += s.volatile_count() as u64;
            d.deadline_sum += s.deadline_sum();
            d.subexpiry += s.subexpiry_count() as u64;
            let (table, rehashing) = s.table_overhead();
            d.table_overhead += table as u64;
            d.expires_overhead += s.expires_overhead() as u64;
            c.rehashing += u64::from(s.is_rehashing());
            c.rehashing_bytes += rehashing as u64;
            c.dataset += s.dataset_mem() as u64;
            c.expired += s.expired;
            c.evicted += s.evicted;
            ctx.locks.release();
        }
        if d.keys > 0 {
            c.dbs.push(d);
        }
    }
    c
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
    let counts = if need_keyspace { shard_counts(ctx) } else { ShardCounts::default() };
    let (dbs, dataset, shard_expired) = (&counts.dbs, counts.dataset, counts.expired);
    let (expired_fields, expired_fields_active) = if wanted[section("stats")] { super::hashes::expired_fields(ctx) } else { (0, 0) };
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
                let os = format!("Linux {} {}", sysinfo::read_proc("/proc/sys/kernel/osrelease").trim(), std::env::consts::ARCH);
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
                s.kv("process_supervised", srv.supervised.get().copied().unwrap_or("no"));
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
                s.kv("cluster_connections", srv.cluster.get().map_or(0, |c| c.links.load(Ordering::Relaxed)));
                s.kv("maxclients", cfg.maxclients);
                // Redis keeps the largest buffers of the last few seconds;
                // Tern reads what each client holds now.
                let (mut max_in, mut max_out, mut pubsub, mut watching) = (0, 0, 0, 0);
                for c in srv.clients.lock().values() {
                    let r = Ordering::Relaxed;
                    max_in = max_in.max(c.buffers.qbuf.load(r));
                    max_out = max_out.max(c.buffers.omem.load(r));
                    pubsub += usize::from(c.has_flag(crate::client::flags::PUBSUB));
                    watching += usize::from(c.watch_count.load(r) > 0);
                }
                s.kv("client_recent_max_input_buffer", max_in);
                s.kv("client_recent_max_output_buffer", max_out);
                s.kv("blocked_clients", srv.blocked_clients.load(Ordering::Relaxed));
                s.kv("tracking_clients", srv.messaging.tracking.counts((0, 0)).0);
                s.kv("pubsub_clients", pubsub);
                s.kv("watching_clients", watching);
                s.kv("clients_in_timeout_table", srv.sum(|w| w.clients_in_timeout.get()));
                s.kv("total_watched_keys", srv.watched_keys.load(Ordering::Relaxed));
                s.kv("total_blocking_keys", srv.blocking_keys.load(Ordering::Relaxed));
                s.kv("total_blocking_keys_on_nokey", srv.blocking_keys_on_nokey.load(Ordering::Relaxed));
            }
            "memory" => {
                s.header("Memory");
                // The counters the limit is checked against, summed exactly.
                let maxmemory::Overview { used, peak, startup, clients, rss, allocated, active, resident } = maxmemory::Overview::read(srv);
                let sys = sysinfo::total_system_memory();
                let dataset = dataset.min(used);
                s.kv("used_memory", used);
                s.kv("used_memory_human", human(used));
                s.kv("used_memory_rss", rss);
                s.kv("used_memory_rss_human", human(rss));
                s.kv("used_memory_peak", peak);
                s.kv("used_memory_peak_human", human(peak));
                s.kv("used_memory_peak_perc", format!("{:.2}%", if peak > 0 { used as f64 * 100.0 / peak as f64 } else { 0.0 }));
                s.kv("used_memory_overhead", used - dataset);
                s.kv("used_memory_startup", startup);
                s.kv("used_memory_dataset", dataset);
                s.kv("used_memory_dataset_perc", format!("{:.2}%", if used > 0 { dataset as f64 * 100.0 / used as f64 } else { 0.0 }));
                s.kv("allocator_allocated", allocated);
                s.kv("allocator_active", active);
                s.kv("allocator_resident", resident);
                // After `Overview::read`'s epoch advance. Tern's jemalloc
                // runs with `muzzy_decay_ms:0` (.cargo/config.toml), so
                // this is normally 0: freed pages skip the muzzy state.
                s.kv("allocator_muzzy", tern_store::allocator_muzzy());
                // The backlog and the replicas' queues are outside the
                // keyspace's accounting, so nothing is left out of
                // `maxmemory`'s count. (`mem_aof_buffer` is left out: AOF
                // records wait for the writer as records, in the feed.)
                s.kv("mem_not_counted_for_evict", 0);
                let (backlog, queued) = srv.repl.memory();
                s.kv("mem_replication_backlog", backlog);
                s.kv("mem_total_replication_buffers", backlog + queued);
                s.kv("mem_clients_slaves", queued);
                s.kv("mem_clients_normal", clients);
                s.kv("mem_cluster_links", srv.cluster.get().map_or(0, |c| c.links_mem.load(Ordering::Relaxed)));
                s.kv("total_system_memory", sys);
                s.kv("total_system_memory_human", human(sys));
                // Scripts: the workers' Lua states and the cached bodies.
                let (vm, bodies) = (srv.scripts.vm_bytes(), srv.scripts.bytes());
                // One Lua state per worker holds both EVAL scripts and
                // functions: its memory is reported as EVAL's.
                let (libraries, functions, fn_bytes) = {
                    let libs = srv.scripts.functions.read();
                    (libs.len(), libs.function_count(), libs.bytes())
                };
                s.kv("used_memory_lua", vm);
                s.kv("used_memory_vm_eval", vm);
                s.kv("used_memory_lua_human", human(vm as u64));
                s.kv("used_memory_scripts_eval", bodies);
                s.kv("number_of_cached_scripts", srv.scripts.len());
                s.kv("number_of_functions", functions);
                s.kv("number_of_libraries", libraries);
                s.kv("used_memory_vm_functions", 0);
                s.kv("used_memory_vm_total", vm);
                s.kv("used_memory_vm_total_human", human(vm as u64));
                s.kv("used_memory_functions", fn_bytes);
                s.kv("used_memory_scripts", bodies);
                s.kv("used_memory_scripts_human", human(bodies as u64));
                s.kv("maxmemory", cfg.maxmemory);
                s.kv("maxmemory_human", human(cfg.maxmemory));
                s.kv("maxmemory_policy", cfg.maxmemory_policy.name());
                let ratio = maxmemory::Overview::ratio;
                s.kv("allocator_frag_ratio", format!("{:.2}", ratio(active, allocated)));
                s.kv("allocator_frag_bytes", active.saturating_sub(allocated));
                s.kv("allocator_rss_ratio", format!("{:.2}", ratio(resident, active)));
                s.kv("allocator_rss_bytes", resident.saturating_sub(active));
                s.kv("rss_overhead_ratio", format!("{:.2}", ratio(rss, resident)));
                s.kv("rss_overhead_bytes", rss as i64 - resident as i64);
                s.kv("mem_fragmentation_ratio", format!("{:.2}", ratio(rss, used)));
                s.kv("mem_fragmentation_bytes", rss as i64 - used as i64);
                s.kv("mem_allocator", "jemalloc-5.3.0");
                // The tables' bucket arrays being moved away from by a
                // resize under way (MEMORY STATS' overhead.db.hashtable.rehashing).
                s.kv("mem_overhead_db_hashtable_rehashing", counts.rehashing_bytes);
                // Active defragmentation is not run (`activedefrag` is
                // accepted and passive).
                s.kv("active_defrag_running", 0);
                s.kv("lazyfree_pending_objects", ctx.ks.lazyfree.pending());
                s.kv("lazyfreed_objects", ctx.ks.lazyfree.freed());
            }
            "persistence" => {
                // Nothing forks: the copy-on-write fields report the
                // copies a background save took of entries changed ahead
                // of its walk, fork's counterpart.
                let p = &srv.persist;
                // A save asked for and not yet picked up by the saver
                // thread is in progress already, as Redis's is once BGSAVE
                // has replied (its fork happens inside the command).
                let started = p.bg_running.load(Ordering::Acquire);
                let running = crate::persist::bgsave_active(srv);
                let cow = p.bg_cow_bytes.load(Ordering::Relaxed);
                s.header("Persistence");
                s.kv("loading", u8::from(p.loading.load(Ordering::Relaxed)));
                s.kv("async_loading", 0);
                s.kv("current_cow_peak", cow);
                s.kv("current_cow_size", cow);
                s.kv("current_cow_size_age", 0);
                s.kv("current_fork_perc", "0.00");
                s.kv("current_save_keys_processed", 0);
                s.kv("current_save_keys_total", 0);
                s.kv("rdb_changes_since_last_save", crate::persist::changes_since_save(srv));
                s.kv("rdb_bgsave_in_progress", u8::from(running));
                s.kv("rdb_last_save_time", p.last_save.load(Ordering::Relaxed));
                s.kv("rdb_last_bgsave_status", if p.last_failed.load(Ordering::Relaxed) { "err" } else { "ok" });
                s.kv("rdb_last_bgsave_time_sec", p.bg_last_secs.load(Ordering::Relaxed));
                let current = match (started, running) {
                    (true, _) => (now_ms().saturating_sub(p.bg_started_ms.load(Ordering::Relaxed)) / 1000) as i64,
                    (false, true) => 0,
                    (false, false) => -1,
                };
                s.kv("rdb_current_bgsave_time_sec", current);
                s.kv("rdb_saves", p.saves.load(Ordering::Relaxed));
                s.kv("rdb_saves_consecutive_failures", p.consecutive_failures.load(Ordering::Relaxed));
                s.kv("rdb_last_cow_size", p.bg_last_cow_bytes.load(Ordering::Relaxed));
                s.kv("rdb_last_load_keys_expired", p.load_expired.load(Ordering::Relaxed));
                s.kv("rdb_last_load_keys_loaded", p.loaded_keys.load(Ordering::Relaxed));
                let a = srv.aof.info(now_ms());
                s.kv("aof_enabled", u8::from(a.enabled));
                s.kv("aof_rewrite_in_progress", u8::from(a.rewrite_in_progress));
                s.kv("aof_rewrite_scheduled", u8::from(a.rewrite_scheduled));
                s.kv("aof_last_rewrite_time_sec", a.last_rewrite_secs);
                s.kv("aof_current_rewrite_time_sec", a.current_rewrite_secs);
                s.kv("aof_last_bgrewrite_status", if a.last_rewrite_ok { "ok" } else { "err" });
                s.kv("aof_rewrites", a.rewrites);
                s.kv("aof_rewrites_consecutive_failures", a.rewrite_failures);
                s.kv("aof_last_write_status", if a.last_write_ok { "ok" } else { "err" });
                s.kv("aof_last_cow_size", a.last_cow);
                s.kv("module_fork_in_progress", 0);
                s.kv("module_fork_last_cow_size", 0);
                if a.enabled {
                    s.kv("aof_current_size", a.current_size);
                    s.kv("aof_base_size", a.base_size);
                    s.kv("aof_pending_rewrite", u8::from(a.rewrite_scheduled));
                    s.kv("aof_buffer_length", 0);
                    s.kv("aof_pending_bio_fsync", 0);
                    s.kv("aof_delayed_fsync", a.delayed_fsync);
                }
            }
            "threads" => {
                // Redis 8's I/O threads, as Tern has them: each worker
                // reads, runs and writes its own connections (io_thread_0
                // is the first worker, not a main thread).
                s.header("Threads");
                let mut clients = vec![0usize; srv.workers.len()];
                for c in srv.clients.lock().values() {
                    if let Some(n) = clients.get_mut(c.worker) {
                        *n += 1;
                    }
                }
                for (i, (w, n)) in srv.workers.iter().zip(clients).enumerate() {
                    s.kv(&format!("io_thread_{i}"), format!("clients={n},reads={},writes={}", w.reads_processed.get(), w.writes_processed.get()));
                }
            }
            "stats" => {
                s.header("Stats");
                let ops = srv.sum(|w| w.commands.get());
                let input = srv.sum(|w| w.net_input_bytes.get());
                let output = srv.sum(|w| w.net_output_bytes.get());
                let cycles = srv.sum(|w| w.eventloop_cycles.get());
                let cycle_us = srv.sum(|w| w.eventloop_ns.get()) / 1000;
                let rates = sysinfo::rates(sysinfo::Totals { ops, input, output, cycles, cycle_us });
                let (ops_sec, in_kbps, out_kbps) = (rates.ops_per_sec, rates.input_kbps, rates.output_kbps);
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
                s.kv("expired_subkeys_active", expired_fields_active);
                s.kv("expired_stale_perc", format!("{:.2}", srv.global.expired_stale_perc.load(Ordering::Relaxed) as f64 / 100.0));
                s.kv("expired_time_cap_reached_count", srv.global.expire_cycle_capped.load(Ordering::Relaxed));
                s.kv("expire_cycle_cpu_milliseconds", srv.global.expire_cycle_us.load(Ordering::Relaxed) / 1000);
                s.kv("evicted_keys", counts.evicted);
                s.kv("evicted_clients", srv.sum(|w| w.evicted_clients.get()));
                s.kv("evicted_scripts", srv.scripts.evicted());
                let (exceeded, exceeded_now) = maxmemory::exceeded_time_ms(srv);
                s.kv("total_eviction_exceeded_time", exceeded);
                s.kv("current_eviction_exceeded_time", exceeded_now);
                s.kv("keyspace_hits", srv.sum(|w| w.keyspace_hits.get()));
                s.kv("keyspace_misses", srv.sum(|w| w.keyspace_misses.get()));
                let (channels, patterns, shard) = srv.messaging.pubsub.counts();
                s.kv("pubsub_channels", channels);
                s.kv("pubsub_patterns", patterns);
                s.kv("pubsubshard_channels", shard);
                s.kv("total_error_replies", srv.sum(|w| w.total_error_replies.get()));
                s.kv("expired_keys_active", srv.global.active_expired.load(Ordering::Relaxed));
                s.kv("total_reads_processed", srv.sum(|w| w.reads_processed.get()));
                s.kv("total_writes_processed", srv.sum(|w| w.writes_processed.get()));
                // No main thread: every worker reads, runs and writes its
                // own connections. With more than one worker (`io-threads`
                // > 1) all of that is threaded I/O; with one, none is, as
                // in Redis with io-threads 1.
                let threaded = srv.workers.len() > 1;
                s.kv("io_threaded_reads_processed", if threaded { srv.sum(|w| w.reads_processed.get()) } else { 0 });
                s.kv("io_threaded_writes_processed", if threaded { srv.sum(|w| w.writes_processed.get()) } else { 0 });
                s.kv("client_query_buffer_limit_disconnections", srv.sum(|w| w.qbuf_limit_disconnections.get()));
                s.kv("client_output_buffer_limit_disconnections", srv.sum(|w| w.obuf_limit_disconnections.get()));
                s.kv("reply_buffer_shrinks", srv.sum(|w| w.reply_buffer_shrinks.get()));
                s.kv("reply_buffer_expands", srv.sum(|w| w.reply_buffer_expands.get()));
                // Every worker's loop, summed: its turns, the time they
                // took from the end of the wait, the part of it in commands.
                s.kv("eventloop_cycles", cycles);
                s.kv("eventloop_duration_sum", cycle_us);
                s.kv("eventloop_duration_cmd_sum", ctx.commands.iter().map(|c| srv.sum(|w| w.cmds[c.id].usec.get())).sum::<u64>());
                s.kv("instantaneous_eventloop_cycles_per_sec", rates.cycles_per_sec);
                s.kv("instantaneous_eventloop_duration_usec", rates.cycle_us);
                // What Tern never does (fork, replicate, defragment, evict
                // clients, migrate) counts zero.
                let repl = &srv.repl;
                s.kv("total_net_repl_input_bytes", repl.net_input.load(Ordering::Relaxed));
                s.kv("total_net_repl_output_bytes", repl.net_output.load(Ordering::Relaxed));
                s.kv("sync_full", repl.sync_full.load(Ordering::Relaxed));
                s.kv("sync_partial_ok", repl.sync_partial_ok.load(Ordering::Relaxed));
                s.kv("sync_partial_err", repl.sync_partial_err.load(Ordering::Relaxed));
                for k in [
                    "evicted_clients",
                    "latest_fork_usec",
                    "total_forks",
                    "migrate_cached_sockets",
                    "slave_expires_tracked_keys",
                    "active_defrag_hits",
                    "active_defrag_misses",
                    "active_defrag_key_hits",
                    "active_defrag_key_misses",
                    "total_active_defrag_time",
                    "current_active_defrag_time",
                ] {
                    s.kv(k, 0);
                }
                let (_, keys, items, prefixes) = srv.messaging.tracking.counts(srv.ks.marked_total());
                s.kv("tracking_total_keys", keys);
                s.kv("tracking_total_items", items);
                s.kv("tracking_total_prefixes", prefixes);
                s.kv("unexpected_error_replies", 0);
                s.kv("dump_payload_sanitizations", 0);
                s.kv("instantaneous_input_repl_kbps", "0.00");
                s.kv("instantaneous_output_repl_kbps", "0.00");
                s.kv("reply_copy_avoided", srv.sum(|w| w.reply_copy_avoided.get()));
                s.kv("acl_access_denied_auth", srv.acl.denied_auth.load(Ordering::Relaxed));
                s.kv("acl_access_denied_cmd", srv.acl.denied_cmd.load(Ordering::Relaxed));
                s.kv("acl_access_denied_key", srv.acl.denied_key.load(Ordering::Relaxed));
                s.kv("acl_access_denied_channel", srv.acl.denied_channel.load(Ordering::Relaxed));
                s.kv("stat_reset_time", srv.stat_reset_ms.load(Ordering::Relaxed) / 1000);
            }
            "replication" => {
                s.header("Replication");
                let upstream = srv.repl.upstream_info();
                let now = crate::server::now_ms();
                match &upstream {
                    None => s.kv("role", "master"),
                    Some(u) => {
                        s.kv("role", "slave");
                        s.kv("master_host", &u.host);
                        s.kv("master_port", u.port);
                        s.kv("master_link_status", if u.up { "up" } else { "down" });
                        let io = if u.last_io_ms == 0 { -1 } else { (now.saturating_sub(u.last_io_ms) / 1000) as i64 };
                        s.kv("master_last_io_seconds_ago", io);
                        s.kv("master_sync_in_progress", u8::from(u.sync_in_progress));
                        s.kv("slave_read_repl_offset", u.read_offset.max(0));
                        s.kv("slave_repl_offset", u.offset.max(0));
                        if !u.up {
                            let since = if u.down_since_ms == 0 { -1 } else { (now.saturating_sub(u.down_since_ms) / 1000) as i64 };
                            s.kv("master_link_down_since_seconds", since);
                        }
                        let c = srv.config.read();
                        s.kv("slave_priority", c.replica_priority);
                        s.kv("slave_read_only", u8::from(c.replica_read_only));
                        s.kv("replica_announced", u8::from(c.replica_announced));
                    }
                }
                let reps = srv.repl.replicas();
                s.kv("connected_slaves", reps.len());
                if let Some(good) = srv.repl.good_replicas() {
                    s.kv("min_slaves_good_slaves", good);
                }
                for (i, r) in reps.iter().enumerate() {
                    let st = match r.state.load(Ordering::Relaxed) {
                        crate::repl::state::ONLINE => "online",
                        crate::repl::state::SEND_BULK => "send_bulk",
                        _ => "wait_bgsave",
                    };
                    let lag = now.saturating_sub(r.ack_ms.load(Ordering::Relaxed)) / 1000;
                    s.kv(&format!("slave{i}"), format!("ip={},port={},state={},offset={},lag={}", r.ip, r.port, st, r.ack.load(Ordering::Relaxed), lag));
                }
                let info = srv.repl.info();
                s.kv("master_failover_state", srv.repl.failover_state());
                // A replica shows its master's history, which it applies.
                let (replid, offset) = match &upstream {
                    Some(u) if u.replid != "?" => (u.replid.clone(), u.offset.max(0) as u64),
                    _ => (info.replid.clone(), info.offset),
                };
                s.kv("master_replid", replid.as_str());
                s.kv("master_replid2", info.replid2.as_str());
                s.kv("master_repl_offset", offset);
                s.kv("second_repl_offset", info.second_offset);
                s.kv("repl_backlog_active", u8::from(info.backlog_active));
                s.kv("repl_backlog_size", srv.config.read().repl_backlog_size);
                s.kv("repl_backlog_first_byte_offset", info.backlog_first);
                s.kv("repl_backlog_histlen", info.backlog_histlen);
            }
            "cpu" => {
                s.header("CPU");
                let (user, sys, cuser, csys) = sysinfo::cpu_times();
                s.kv("used_cpu_sys", format!("{sys:.6}"));
                s.kv("used_cpu_user", format!("{user:.6}"));
                s.kv("used_cpu_sys_children", format!("{csys:.6}"));
                s.kv("used_cpu_user_children", format!("{cuser:.6}"));
                // Tern has no main thread: the worker that answers INFO
                // stands for it, as Redis's main thread answers it.
                let (tuser, tsys) = sysinfo::thread_cpu_times();
                s.kv("used_cpu_sys_main_thread", format!("{tsys:.6}"));
                s.kv("used_cpu_user_main_thread", format!("{tuser:.6}"));
            }
            "modules" => s.header("Modules"),
            "commandstats" => {
                s.header("Commandstats");
                for c in ctx.commands.iter() {
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
            "latencystats" => {
                s.header("Latencystats");
                // Redis lists nothing while tracking is off.
                if !cfg.latency_tracking {
                    continue;
                }
                let ps = &cfg.latency_tracking_info_percentiles;
                for c in ctx.commands.iter() {
                    let Some(vals) = srv.latency.percentiles(c.id, ps) else { continue };
                    let mut line = String::new();
                    for (i, (p, v)) in ps.iter().zip(vals).enumerate() {
                        let _ = write!(line, "{}p{p}={v:.3}", if i > 0 { "," } else { "" });
                    }
                    s.kv(&format!("latency_percentiles_usec_{}", c.fullname), line);
                }
            }
            "cluster" => {
                s.header("Cluster");
                s.kv("cluster_enabled", u8::from(srv.cluster.get().is_some()));
            }
            "keyspace" => {
                s.header("Keyspace");
                // avg_ttl: the mean time to live of the keys with one, in
                // ms (Redis estimates it from active expiry's samples;
                // here it is exact), 0 when none.
                let now = u128::from(ctx.now);
                for d in dbs {
                    let avg_ttl = if d.volatile > 0 { (d.deadline_sum / u128::from(d.volatile)).saturating_sub(now) } else { 0 };
                    s.kv(&format!("db{}", d.db), format!("keys={},expires={},avg_ttl={avg_ttl},subexpiry={}", d.keys, d.volatile, d.subexpiry));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human(0), "0B");
        assert_eq!(human(1023), "1023B");
        assert_eq!(human(965_752), "943.12K");
        assert_eq!(human(12_320_768), "11.75M");
        assert_eq!(human(25_276_063_744), "23.54G");
    }
}
