//! CONFIG GET/SET/REWRITE/RESETSTAT/HELP: the command side of the
//! declaration table in tern-config (`directives.rs`). GET matches names and
//! aliases (globs too); SET checks every pair first (unknown, start-up
//! only, protected, duplicate: the first problem wins, as in Redis), then
//! applies them all to a copy and publishes it only if every value was
//! accepted, through `Server::apply_config`.

use std::sync::atomic::Ordering;

use tern_resp::Args;

use super::table::{flags::*, CommandSpec};
use super::Ctx;
use tern_config::{find_directive, passive_reason, Directive, RewriteError, When, DIRECTIVES};
use crate::errors;
use crate::server::{now_ms, Refusal};

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("config", -2, 0, &[], super::unknown_subcommand)
        .doc("server", "A container for server configuration commands.", "2.0.0", "Depends on subcommand.")
        .subs(&[
            CommandSpec::new("get", -3, ADMIN | NOSCRIPT | LOADING | STALE, &[], config_get).doc(
                "server",
                "Returns the effective values of configuration parameters.",
                "2.0.0",
                "O(N) when N is the number of configuration parameters provided",
            )
        .history(&[("7.0.0", "Added the ability to pass multiple pattern parameters in one call")]),
            CommandSpec::new("help", 2, LOADING | STALE, &[], config_help).doc(
                "server",
                "Returns helpful text about the different subcommands.",
                "5.0.0",
                "O(1)",
            ),
            CommandSpec::new("resetstat", 2, ADMIN | NOSCRIPT | LOADING | STALE | MANUAL_LOCKS, &[], config_resetstat).doc(
                "server",
                "Resets the server's statistics.",
                "2.0.0",
                "O(1)",
            )
            .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
            CommandSpec::new("rewrite", 2, ADMIN | NOSCRIPT | LOADING | STALE, &[], config_rewrite).doc(
                "server",
                "Persists the effective configuration to file.",
                "2.8.0",
                "O(1)",
            )
            .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
            CommandSpec::new("set", -4, ADMIN | NOSCRIPT | LOADING | STALE, &[], config_set)
                .doc("server", "Sets configuration parameters in-flight.", "2.0.0", "O(N) when N is the number of configuration parameters provided")
        .history(&[("7.0.0", "Added the ability to set multiple parameters in one call.")])
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
        ]),
];

fn config_help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::help_lines(
        ctx,
        &[
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file.",
        ],
    );
}

fn config_get(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    // (name as matched, directive); names compare case-insensitively.
    let mut found: Vec<(String, &'static Directive)> = Vec::new();
    let seen = |found: &[(String, &Directive)], n: &str| found.iter().any(|(f, _)| f.eq_ignore_ascii_case(n));
    for pat in args.tail(2).iter() {
        let is_glob = pat.iter().any(|c| matches!(c, b'*' | b'?' | b'['));
        if !is_glob {
            let name = String::from_utf8_lossy(pat).into_owned();
            if let Some(d) = find_directive(&name) {
                if !seen(&found, &name) {
                    found.push((name, d));
                }
            }
            continue;
        }
        for d in DIRECTIVES {
            for n in d.names() {
                if crate::glob::matches(pat, n.as_bytes(), true) && !seen(&found, n) {
                    found.push((n.to_string(), d));
                }
            }
        }
    }
    let cfg = ctx.srv.config.read();
    let port = ctx.srv.port.load(Ordering::Relaxed);
    ctx.reply.map(found.len());
    for (name, d) in found {
        ctx.reply.bulk(name.as_bytes());
        // With `port 0` the kernel picked the port; show the real one.
        if d.name == "port" && port != 0 {
            ctx.reply.bulk(port.to_string().as_bytes());
        } else {
            ctx.reply.bulk((d.get)(&cfg).as_bytes());
        }
    }
}

fn config_set(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() % 2 != 0 {
        ctx.reply.error(errors::SYNTAX);
        return;
    }
    let pairs: Vec<(&[u8], &[u8])> = (2..args.len()).step_by(2).map(|i| (args.get(i), args.get(i + 1))).collect();
    let mut chosen: Vec<&'static Directive> = Vec::with_capacity(pairs.len());
    // First problem wins, as in Redis: unknown name, immutable, duplicate.
    for &(name, _) in &pairs {
        let Some(d) = std::str::from_utf8(name).ok().and_then(find_directive) else {
            ctx.reply.error(errors::config_set_unknown(name));
            return;
        };
        let why = if d.when == When::Startup {
            Some(errors::CONFIG_SET_IMMUTABLE)
        } else if d.is_protected(&ctx.srv.config.read()) {
            Some(errors::CONFIG_SET_PROTECTED)
        } else if chosen.iter().any(|c| std::ptr::eq(*c, d)) {
            Some(errors::CONFIG_SET_DUPLICATE)
        } else {
            None
        };
        if let Some(why) = why {
            ctx.reply.error(errors::config_set_failed(name, why));
            return;
        }
        chosen.push(d);
    }
    // All or nothing: apply to a copy and publish it only if every value
    // was accepted.
    let mut cfg = ctx.srv.config.write();
    let mut next = cfg.clone();
    for (&(name, value), d) in pairs.iter().zip(&chosen) {
        let value = String::from_utf8_lossy(value);
        if let Err(why) = next.set_runtime(d, &value) {
            drop(cfg);
            ctx.reply.error(errors::config_set_failed(name, &why));
            return;
        }
    }
    if next.maxclients > cfg.maxclients {
        let fit = crate::fdlimit::fit(next.maxclients);
        if fit.maxclients < next.maxclients {
            drop(cfg);
            let shown = pairs.iter().find(|(n, _)| n.eq_ignore_ascii_case(b"maxclients")).map_or(&b"maxclients"[..], |(n, _)| n);
            ctx.reply.error(errors::config_set_failed(shown, &errors::maxclients_unfit(fit.maxclients)));
            return;
        }
    }
    // What the process builds from the configuration (the TLS context)
    // must build before the configuration is published: if not, nothing
    // changes, as in Redis.
    if let Some(hook) = ctx.srv.config_hook.get() {
        let names: Vec<&'static str> = chosen.iter().map(|d| d.name).collect();
        if let Err((name, why)) = hook(&cfg, &next, &names) {
            drop(cfg);
            let why = match why {
                Refusal::Tls => errors::CONFIG_SET_TLS,
            };
            ctx.reply.error(errors::config_set_failed(name.as_bytes(), why));
            return;
        }
    }
    for d in &chosen {
        if d.passive.is_some() {
            tern_config::log_notice!("CONFIG SET {}: accepted, but not acted on yet: {}.", d.name, passive_reason(d.name));
        }
    }
    ctx.srv.apply_config(&next);
    ctx.srv.durability().follow_config(ctx.srv, &next);
    *cfg = next;
    drop(cfg);
    ctx.reply.ok();
}

fn config_rewrite(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let mut cfg = ctx.srv.config.read().clone();
    cfg.rewrite_users = Some(if cfg.aclfile.is_empty() { ctx.srv.acl.config_lines() } else { Vec::new() });
    // Whom it replicates now (REPLICAOF changes it), as Redis writes it.
    cfg.replicaof = ctx.srv.repl.upstream_view().map_or_else(Vec::new, |(host, port, _, _)| vec![host, port.to_string()]);
    match cfg.rewrite() {
        Ok(()) => {
            tern_config::log_notice!("CONFIG REWRITE executed with success.");
            ctx.reply.ok();
        }
        Err(RewriteError::NoConfigFile) => ctx.reply.error(errors::NO_CONFIG_FILE),
        Err(RewriteError::Io(e)) => {
            tern_config::log_warning!("CONFIG REWRITE failed: {}", e);
            ctx.reply.error(errors::config_rewrite_failed(&e));
        }
    }
}

fn config_resetstat(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let srv = ctx.srv;
    for w in &srv.workers {
        w.reset();
    }
    srv.latency.reset();
    srv.global.active_expired.store(0, Ordering::Relaxed);
    srv.global.expired_stale_perc.store(0, Ordering::Relaxed);
    srv.global.expire_cycle_capped.store(0, Ordering::Relaxed);
    srv.global.expire_cycle_us.store(0, Ordering::Relaxed);
    // Both, as Redis's resetServerStats: an open stretch starts over at
    // the next eviction round still over the limit.
    srv.global.eviction_exceeded_since_us.store(0, Ordering::Relaxed);
    srv.global.eviction_exceeded_us.store(0, Ordering::Relaxed);
    for gid in 0..srv.ks.total_shards() as u32 {
        ctx.locks.acquire([gid]);
        ctx.locks.shard(gid).expired = 0;
        ctx.locks.shard(gid).expired_fields = 0;
        ctx.locks.shard(gid).expired_fields_active = 0;
        ctx.locks.shard(gid).evicted = 0;
        ctx.locks.release();
    }
    crate::sysinfo::reset_samples();
    srv.stat_reset_ms.store(now_ms(), Ordering::Relaxed);
    ctx.reply.ok();
}
