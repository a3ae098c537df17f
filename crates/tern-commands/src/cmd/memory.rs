//! MEMORY USAGE/STATS/DOCTOR/PURGE/MALLOC-STATS/HELP, with Redis 8.4's
//! reply shapes. The figures are the same counters INFO memory reports
//! (`crate::maxmemory::Overview`, the shard walk of `info.rs`).

use tern_resp::Args;
use tern_store::EntryExt;

use super::info::shard_counts;
use super::keyspec::{index, ks, range, RO};
use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::errors;
use crate::maxmemory::Overview;

pub static COMMANDS: &[CommandSpec] = &[CommandSpec::new("memory", -2, 0, &[], super::unknown_subcommand)
    .doc("server", "A container for memory diagnostics commands.", "4.0.0", "Depends on subcommand.")
    .acl(&["slow"])
    .subs(SUBCOMMANDS)];

static SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("doctor", 2, 0, &[], doctor)
        .doc("server", "Outputs a memory problems report.", "4.0.0", "O(1)")
        .acl(&["slow"])
        .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
    CommandSpec::new("help", 2, LOADING | STALE, &[], help)
        .doc("server", "Returns helpful text about the different subcommands.", "4.0.0", "O(1)")
        .acl(&["slow"]),
    CommandSpec::new("malloc-stats", 2, 0, &[], malloc_stats)
        .doc("server", "Returns the allocator statistics.", "4.0.0", "Depends on how much memory is allocated, could be slow")
        .acl(&["slow"])
        .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
    CommandSpec::new("purge", 2, 0, &[], purge)
        .doc("server", "Asks the allocator to release memory.", "4.0.0", "Depends on how much memory is allocated, could be slow")
        .acl(&["slow"])
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    CommandSpec::new("stats", 2, 0, &[], stats)
        .doc("server", "Returns details about memory usage.", "4.0.0", "O(1)")
        .acl(&["slow"])
        .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
    CommandSpec::new("usage", -3, READONLY, &[ks(RO, index(2), range(0, 1, 0))], usage)
        .doc("server", "Estimates the memory usage of a key.", "4.0.0", "O(N) where N is the number of samples.")
        .acl(&["read", "slow"]),
];

const HELP: &[&str] = &[
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
];

fn help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::help_lines(ctx, HELP);
}

/// MEMORY USAGE key [SAMPLES n]: the item (key, header, inline value) and
/// what its value holds apart, at jemalloc's size classes. Tern counts
/// every byte rather than sampling, so SAMPLES is checked as Redis checks
/// it and changes nothing.
fn usage(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let mut j = 3;
    while j < args.len() {
        if !args.get(j).eq_ignore_ascii_case(b"samples") || j + 1 >= args.len() {
            ctx.reply.error(errors::SYNTAX);
            return;
        }
        match tern_resp::number::parse_i64(args.get(j + 1)) {
            None => {
                ctx.reply.error(errors::NOT_INTEGER);
                return;
            }
            Some(n) if n < 0 => {
                ctx.reply.error(errors::SYNTAX);
                return;
            }
            Some(_) => j += 2,
        }
    }
    let loc = ctx.locs[0];
    let size = ctx.locks.shard(loc.gid).peek(args.get(2), loc.hash, ctx.now).map(|e| e.alloc_size() + e.value_heap());
    match size {
        Some(n) => ctx.reply.int(n as i64),
        None => ctx.reply.null(),
    }
}

fn stats(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let counts = shard_counts(ctx);
    let o = Overview::read(ctx.srv);
    let keys: u64 = counts.dbs.iter().map(|d| d.keys).sum();
    let dataset = counts.dataset.min(o.used);
    let net = o.used.saturating_sub(o.startup);
    let r = &mut ctx.reply;
    let int = |r: &mut super::Reply<'_>, k: &str, v: u64| {
        r.bulk(k.as_bytes());
        r.int(v as i64);
    };
    let dbl = |r: &mut super::Reply<'_>, k: &str, v: f32| {
        r.bulk(k.as_bytes());
        r.double(f64::from(v));
    };
    r.map(35 + counts.dbs.len());
    int(r, "peak.allocated", o.peak);
    int(r, "total.allocated", o.used);
    int(r, "startup.allocated", o.startup);
    // No replication, cluster, AOF or scripting: none of their buffers.
    int(r, "replication.backlog", 0);
    int(r, "replica.fullsync.buffer", 0);
    int(r, "clients.slaves", 0);
    int(r, "clients.normal", o.clients);
    // Every client's buffers are its own.
    int(r, "clients.normal.shared", 0);
    int(r, "clients.normal.unshared", o.clients);
    int(r, "cluster.links", 0);
    int(r, "aof.buffer", 0);
    int(r, "lua.caches", 0);
    int(r, "functions.caches", 0);
    int(r, "script.VMs", 0);
    for d in &counts.dbs {
        r.bulk(format!("db.{}", d.db).as_bytes());
        r.map(2);
        int(r, "overhead.hashtable.main", d.table_overhead);
        int(r, "overhead.hashtable.expires", d.expires_overhead);
    }
    // The shards' arrays are part of the startup allocation.
    int(r, "overhead.db.hashtable.lut", 0);
    int(r, "overhead.db.hashtable.rehashing", counts.rehashing_bytes);
    int(r, "overhead.total", o.used - dataset);
    int(r, "db.dict.rehashing.count", counts.rehashing);
    int(r, "keys.count", keys);
    int(r, "keys.bytes-per-key", if keys > 0 { net / keys } else { 0 });
    int(r, "dataset.bytes", dataset);
    dbl(r, "dataset.percentage", Overview::ratio(dataset * 100, net));
    dbl(r, "peak.percentage", Overview::ratio(o.used * 100, o.peak));
    int(r, "allocator.allocated", o.allocated);
    int(r, "allocator.active", o.active);
    int(r, "allocator.resident", o.resident);
    // jemalloc 5.3 purges without a muzzy stage (muzzy_decay_ms 0).
    int(r, "allocator.muzzy", 0);
    dbl(r, "allocator-fragmentation.ratio", Overview::ratio(o.active, o.allocated));
    int(r, "allocator-fragmentation.bytes", o.active.saturating_sub(o.allocated));
    dbl(r, "allocator-rss.ratio", Overview::ratio(o.resident, o.active));
    int(r, "allocator-rss.bytes", o.resident.saturating_sub(o.active));
    dbl(r, "rss-overhead.ratio", Overview::ratio(o.rss, o.resident));
    int(r, "rss-overhead.bytes", o.rss.saturating_sub(o.resident));
    dbl(r, "fragmentation", Overview::ratio(o.rss, o.used));
    int(r, "fragmentation.bytes", o.rss.saturating_sub(o.used));
}

/// Redis's memory doctor, with its thresholds and words, over the checks
/// that apply to Tern (no replicas, no scripts).
fn doctor(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let o = Overview::read(ctx.srv);
    let clients = ctx.srv.connected.load(std::sync::atomic::Ordering::Relaxed).max(1) as u64;
    let text = doctor_text(&o, clients);
    ctx.reply.verbatim(text.as_bytes());
}

fn doctor_text(o: &Overview, clients: u64) -> String {
    const MB10: u64 = 10 << 20;
    if o.used < 5 << 20 {
        return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n".into();
    }
    let mut issues = Vec::new();
    if Overview::ratio(o.peak, o.used) > 1.5 {
        issues.push(" * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n");
    }
    if Overview::ratio(o.rss, o.used) > 1.4 && o.rss.saturating_sub(o.used) > MB10 {
        issues.push(" * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"jemalloc-5.3.0\".\n\n");
    }
    if Overview::ratio(o.active, o.allocated) > 1.1 && o.active.saturating_sub(o.allocated) > MB10 {
        issues.push(" * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n");
    }
    if Overview::ratio(o.resident, o.active) > 1.1 && o.resident.saturating_sub(o.active) > MB10 {
        issues.push(" * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n");
    }
    if Overview::ratio(o.rss, o.resident) > 1.1 && o.rss.saturating_sub(o.resident) > MB10 {
        issues.push(" * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the RSS the allocator holds). This problem may be due to Lua scripts or Modules.\n\n");
    }
    if o.clients / clients > 200 * 1024 {
        issues.push(" * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n");
    }
    if issues.is_empty() {
        return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n".into();
    }
    let mut s = String::from("Sam, I detected a few issues in this Redis instance memory implants:\n\n");
    for i in issues {
        s.push_str(i);
    }
    s.push_str("I'm here to keep you safe, Sam. I want to help you.\n");
    s
}

/// jemalloc's own statistics report (`malloc_stats_print`).
fn malloc_stats(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let mut text = Vec::new();
    if tikv_jemalloc_ctl::stats_print::stats_print(&mut text, Default::default()).is_err() {
        text = b"Stats not supported for the current allocator".to_vec();
    }
    ctx.reply.verbatim(&text);
}

/// Returns the allocator's dirty pages to the system now rather than
/// after its decay time.
fn purge(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    tern_store::purge_allocator();
    ctx.reply.ok();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overview(used: u64, peak: u64, rss: u64) -> Overview {
        Overview { used, peak, startup: 0, clients: 0, rss, allocated: used, active: used, resident: used }
    }

    #[test]
    fn doctor_reports_as_redis_does() {
        assert!(doctor_text(&overview(1 << 20, 1 << 20, 1 << 20), 1).starts_with("Hi Sam, this instance is empty"));
        assert!(doctor_text(&overview(64 << 20, 64 << 20, 64 << 20), 1).starts_with("Hi Sam, I can't find any memory issue"));
        let t = doctor_text(&overview(64 << 20, 200 << 20, 64 << 20), 1);
        assert!(t.starts_with("Sam, I detected a few issues") && t.contains("Peak memory") && t.ends_with("I want to help you.\n"), "{t}");
        let t = doctor_text(&overview(64 << 20, 64 << 20, 128 << 20), 1);
        assert!(t.contains("High total RSS") && t.contains("High process RSS overhead") && !t.contains("Peak"), "{t}");
    }
}
