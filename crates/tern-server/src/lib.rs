//! The tern-server process: it reads the configuration (`tern-config`),
//! binds the listeners, and runs the workers, the timer and the signal
//! thread over one `tern_commands::engine::Engine`, which executes the
//! requests (`tern-commands`).
//!
//! ```text
//!  main ─► Config::from_args (tern-config) ─► run: log, supervisor, fork (daemonize: deploy.rs, sys.rs),
//!        pidfile, fd limit, TLS context (tls.rs), listeners
//!        ─► Engine (tern-commands: the shared state beside the command table)
//!            ├─ N workers (net/): accept, read, parse a batch, plan keys, prefetch, dispatch, write
//!            ├─ cron thread: active expiry, memcached's delayed flush_all
//!            ├─ saver, AOF writer and AOF rewriter threads (tern-commands' persist, aof)
//!            └─ signal thread: SIGINT/SIGTERM ─► graceful shutdown
//!  request (net::run_request) ─► RESP: prefetch::Plan, cmd::dispatch (tern-commands)
//!                             └► memcached: memcache::Exec (tern-commands)
//! ```
//!
//! [`inproc`] runs the same request path without sockets, for fuzzing and
//! tests. [`tls`] holds the TLS context (rebuilt by CONFIG SET through the
//! engine's config hook) and a TLS connection's reads and writes.
//! [`deploy`] is how the process meets what starts it (`daemonize`,
//! `pidfile`, `supervised`); its fork is in `sys`, the crate's only unsafe
//! code.
#![deny(unsafe_code)]

mod conn;
pub mod deploy;
pub mod inproc;
pub mod net;
#[allow(unsafe_code)]
mod sys;
pub mod tls;

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_commands::engine::Engine;
use tern_commands::server::{now_ms, Server};
use tern_commands::{fdlimit, maxmemory, memcache, REDIS_VERSION, TERN_VERSION};
use tern_config::{log_notice, log_warning, Config};

fn bind_listener(addr: SocketAddr, backlog: i32) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    sock.set_reuse_address(true)?;
    if addr.is_ipv6() {
        sock.set_only_v6(true)?;
    }
    sock.bind(&addr.into())?;
    sock.listen(backlog)?;
    sock.set_nonblocking(true)?;
    Ok(sock.into())
}

/// Keys the background cycle evicts between checks of its time budget.
const BACKGROUND_EVICT_BATCH: usize = 64;

/// The server's timer: every 1/hz seconds, carry out memcached's delayed
/// `flush_all` once it is due, then spend at most a quarter of the period
/// on active expiry (removing keys whose TTL has passed, shard by shard)
/// and, while over `maxmemory`, on eviction; neither while CLIENT PAUSE
/// is in force.
/// A worker's stack: scripts run on it, and cjson and cmsgpack recurse
/// once per level of the values they convert (up to the depth limits a
/// script may raise), far past the 2 MiB threads get by default. Only the
/// pages touched become memory.
const WORKER_STACK: usize = 512 << 20;

/// Hands the cron's records to the AOF writer, and sends the
/// invalidations of the keys its expiry and eviction removed.
fn hand(srv: &Server, fx: &tern_store::Effects) {
    srv.invalidate_written(fx, 0, 0, tern_commands::messaging::NO_WORKER);
    srv.invalidate_elsewhere(tern_commands::messaging::NO_WORKER);
    tern_persist::aof::hand(srv, fx, false);
}

fn cron(srv: &Server) {
    // The cron's own effect buffer (its flushes' and deletions' records),
    // handed to the AOF writer each period. It only fills while the AOF
    // is on or replicas are fed.
    let fx = tern_persist::aof::marked_effects(srv);
    while !srv.is_shutting_down() {
        hand(srv, &fx);
        let hz = u64::from(srv.settings.hz()).clamp(1, 500);
        let period = Duration::from_millis(1000 / hz);
        // DEBUG PAUSE-CRON 1: none of the periodic work below.
        if srv.global.cron_paused.load(Ordering::Relaxed) {
            std::thread::sleep(period);
            continue;
        }
        memcache::flush_if_due(srv, now_ms(), &fx);
        let budget = period / 4;
        let start = Instant::now();
        // CLIENT PAUSE (either mode) holds back active expiry and eviction
        // too, as in Redis: the dataset does not change while paused.
        if srv.pause.mode_at(now_ms()).is_some() {
            // Replication's and the cluster's upkeep goes on (a FAILOVER
            // pauses writes, so does a cluster's manual failover).
            tern_persist::repl::master::cron(srv);
            tern_commands::cmd::cluster::cron(srv);
            hand(srv, &fx);
            std::thread::sleep(period);
            continue;
        }
        let total = srv.ks.total_shards();
        let mut visited = 0;
        // DEBUG SET-ACTIVE-EXPIRE 0: no key or field expires in the
        // background (eviction still runs).
        if !srv.global.active_expire_off.load(Ordering::Relaxed) {
            loop {
                let removed = srv.ks.expire_cycle_with(now_ms(), 16, 200, &fx, &mut |fx| {
                    srv.invalidate_written(fx, 0, 0, tern_commands::messaging::NO_WORKER);
                });
                srv.global.active_expired.fetch_add(removed as u64, Ordering::Relaxed);
                visited += 16;
                // Keep going while there is work and time; a full quiet pass ends it.
                if removed == 0 && visited >= total {
                    break;
                }
                if start.elapsed() >= budget {
                    srv.global.expire_cycle_capped.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            }
        }
        let took = start.elapsed();
        srv.global.expire_cycle_us.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
        srv.latency_events.note(srv.settings.latency_monitor_threshold(), "expire-cycle", now_ms(), took.as_millis() as u64);
        // Over `maxmemory` with no writes coming (the limit was lowered,
        // or commands' shares fell short): evict in the rest of the
        // budget, a batch at a time.
        while maxmemory::over_limit(srv, now_ms()) > 0 && start.elapsed() < budget {
            if maxmemory::background_evict(srv, now_ms(), BACKGROUND_EVICT_BATCH, &fx) == 0 {
                break;
            }
            hand(srv, &fx);
        }
        // Memory can come down without a write (DEL, FLUSHALL, a raised
        // limit): the exceeded-time stretch closes at the next cycle, as
        // Redis's next command's `performEvictions` would close it.
        if maxmemory::over_limit(srv, now_ms()) == 0 {
            maxmemory::note_exceeded(srv, false);
        }
        tern_commands::persist::schedule_check(srv, now_ms());
        tern_persist::aof::cron(srv);
        tern_persist::repl::master::cron(srv);
        tern_commands::cmd::cluster::cron(srv);
        hand(srv, &fx);
        std::thread::sleep(period.saturating_sub(start.elapsed()));
    }
    hand(srv, &fx);
}

/// The users of `user` lines, or of the ACL file, as Redis loads them at
/// start: both at once is refused, as is any rule the server cannot honour.
fn load_users(srv: &tern_commands::server::Server, lines: &[tern_config::UserLine], aclfile: &str) -> Result<(), String> {
    if !aclfile.is_empty() && !lines.is_empty() {
        return Err("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.".into());
    }
    if !lines.is_empty() {
        let words: Vec<Vec<Vec<u8>>> = lines.iter().map(|l| l.words.iter().map(|w| w.as_bytes().to_vec()).collect()).collect();
        let users = srv.acl.users_from_lines(&words).map_err(|(i, why)| lines[i].fatal("user", &why))?;
        for u in users.iter().filter(|u| !u.enabled) {
            log_notice!(
                "The user '{}' is disabled (there is no 'on' modifier in the user description). Make sure this is not a configuration error.",
                String::from_utf8_lossy(&u.name)
            );
        }
        srv.acl.replace_all(users);
    }
    if !aclfile.is_empty() {
        tern_commands::cmd::acl::load_file(srv, aclfile).map_err(|e| format!("Aborting Redis startup because of ACL errors: {e}"))?;
    }
    Ok(())
}

/// Runs the server until shutdown; returns the process exit code.
///
/// With `daemonize yes` the process forks here, before any thread of its
/// own starts (the caller must not have started one): the launching
/// process exits 0 and the server goes on in the child.
pub fn run(mut cfg: Config) -> i32 {
    // The log before the fork: a log file that cannot be opened is told
    // on the terminal, where a daemon would lose it.
    let syslog = match cfg.syslog_enabled.then(|| tern_config::log::Syslog::new(tern_config::log::SYSLOG_SOCKET.as_ref(), &cfg.syslog_ident, cfg.syslog_facility)) {
        Some(Err(e)) => {
            eprintln!("Can't open a socket to syslog: {e}");
            return 1;
        }
        s => s.and_then(Result::ok),
    };
    if let Err(e) = tern_config::log::init(cfg.loglevel, &cfg.logfile, syslog) {
        eprintln!("Can't open the log file: {e}");
        return 1;
    }
    let supervisor = deploy::Supervisor::detect(cfg.supervised);
    // A service manager watches the process it started: no fork then.
    let background = cfg.daemonize && !supervisor.is_some();
    if background {
        if let Err(e) = sys::detach() {
            eprintln!("Can't daemonize: {e}");
            log_warning!("Can't daemonize: {}", e);
            return 1;
        }
    }
    log_notice!("Tern {} (Redis {} compatible) starting, pid={}", TERN_VERSION, REDIS_VERSION, std::process::id());
    // Removed when dropped, at the end of this function.
    let _pidfile = match (background, cfg.pidfile.as_str()) {
        (false, "") => None,
        (true, "") => deploy::PidFile::create(deploy::DEFAULT_PIDFILE),
        (_, path) => deploy::PidFile::create(path),
    };
    // SIGINT and SIGTERM are caught from here on, so that one sent while
    // the server starts still ends in a clean shutdown that removes the
    // pid file (rather than killing the process). They are acted on once
    // the signal thread runs, after the data is loaded.
    let signals = signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]).ok();
    for d in cfg.passive_in_use() {
        log_warning!("Directive '{}' is accepted but not acted on yet: {}.", d, tern_config::passive_reason(&d));
    }
    // `replicaof host port` (checked by its kind): the master this server
    // follows from the start.
    let upstream = match cfg.replicaof.as_slice() {
        [host, port] => port.parse::<u16>().ok().map(|p| (host.clone(), p)),
        _ => None,
    };
    let fit = fdlimit::fit(cfg.maxclients);
    if fit.maxclients < cfg.maxclients {
        let want = cfg.maxclients as u64 + fdlimit::RESERVED_FDS;
        if fit.limit <= fdlimit::RESERVED_FDS {
            log_warning!("Your current 'ulimit -n' of {} is not enough for the server to start. Please increase your open file limit to at least {}. Exiting.", fit.limit, want);
            return 1;
        }
        log_warning!("You requested maxclients of {} requiring at least {} max file descriptors.", cfg.maxclients, want);
        if let Some(e) = &fit.error {
            log_warning!("Server can't set maximum open files to {} because of OS error: {}.", want, e);
        }
        log_warning!("Current maximum open files is {}. maxclients has been reduced to {} to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.", fit.limit, fit.maxclients);
        cfg.maxclients = fit.maxclients;
    } else if let Some(old) = fit.raised_from {
        log_notice!("Increased maximum number of open files to {} (it was originally set to {}).", fit.limit, old);
    }
    // The TLS context, before any listener: a certificate or key that
    // does not load stops the server here.
    let tls = Arc::new(tls::Tls::default());
    let tls_on = cfg.tls_port != 0 || cfg.memcache_tls_port != 0;
    if tls_on {
        if let Err(e) = tls.configure(&cfg) {
            log_warning!("Failed to configure TLS: {}", e);
            return 1;
        }
    }
    // The addresses of `bind` ('-': optional, '*': any IPv4).
    let mut hosts: Vec<(std::net::IpAddr, bool)> = Vec::new();
    for b in &cfg.bind {
        let (optional, host) = match b.strip_prefix('-') {
            Some(h) => (true, h),
            None => (false, b.as_str()),
        };
        let host = if host == "*" { "0.0.0.0" } else { host };
        match host.trim_start_matches('[').trim_end_matches(']').parse() {
            Ok(ip) => hosts.push((ip, optional)),
            Err(_) => {
                log_warning!("Invalid bind address '{}'", b);
                return 1;
            }
        }
    }
    // `port 0`: with a `tls-port`, TLS only, as in Redis; without one,
    // Tern picks a free port (and free memcached ports), for tests.
    let ephemeral = cfg.port == 0 && cfg.tls_port == 0;
    let pick = |p: u16| if ephemeral { 0 } else { p };
    let groups = [
        (if ephemeral { Some(0) } else { (cfg.port != 0).then_some(cfg.port) }, false, false, "port"),
        ((cfg.tls_port != 0).then_some(cfg.tls_port), false, true, "tls-port"),
        ((cfg.memcache_port != 0).then(|| pick(cfg.memcache_port)), true, false, "memcache-port"),
        ((cfg.memcache_tls_port != 0).then(|| pick(cfg.memcache_tls_port)), true, true, "memcache-tls-port"),
    ];
    let mut listeners: Vec<(std::net::TcpListener, bool, bool)> = Vec::new();
    // The port each group listens on (0: none).
    let mut bound = [0u16; 4];
    for (g, &(want, mc, tls, directive)) in groups.iter().enumerate() {
        let Some(mut port) = want else { continue };
        for &(ip, optional) in &hosts {
            let addr = SocketAddr::new(ip, port);
            match bind_listener(addr, cfg.tcp_backlog) {
                Ok(l) => {
                    // With port 0 the first listener picks a port; the others share it.
                    if port == 0 {
                        port = l.local_addr().map(|a| a.port()).unwrap_or(0);
                    }
                    listeners.push((l, mc, tls))
                }
                Err(e) if optional => log_warning!("Could not bind optional address {}: {}", addr, e),
                Err(e) => {
                    let what = if directive == "port" { String::new() } else { format!(" ({directive})") };
                    log_warning!("Warning: Could not create server TCP listening socket {}{}: {}", addr, what, e);
                    return 1;
                }
            }
        }
        bound[g] = port;
    }
    let [port, tls_port, mc_port, mc_tls_port] = bound;
    let exposed = listeners.iter().filter_map(|(l, _, _)| l.local_addr().ok()).any(|a| !net::is_loopback(&a));
    if exposed && cfg.requirepass.is_none() {
        if cfg.protected_mode {
            log_warning!("Listening beyond the loopback interface with no password for the default user: protected mode is on, so clients from other hosts are refused (-DENIED) until requirepass is set or protected-mode is turned off.");
        } else {
            log_warning!("WARNING: listening beyond the loopback interface with protected mode off and no password: anyone who can reach this host can read, write and flush every key, on every port. Set requirepass.");
        }
    }
    let mc_shared = Arc::new(memcache::Shared::new(cfg.memcache_max_item_size));
    let threads = cfg.threads.max(1);
    let (user_lines, aclfile) = (cfg.users.clone(), cfg.aclfile.clone());
    let eng = match Engine::try_new(cfg) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    let srv = &eng.srv;
    tern_persist::install(srv);
    let _ = srv.supervised.set(supervisor.name());
    // A FLUSHALL or FLUSHDB SYNC's client waits for the background free
    // of what it detached; the lazyfree thread wakes it through its worker.
    let weak = Arc::downgrade(&eng);
    srv.ks.lazyfree.set_done_hook(Box::new(move |worker, client| {
        if let Some(eng) = weak.upgrade() {
            eng.srv.post(worker, tern_commands::server::Wake::Ready(client));
        }
    }));
    if let Err(e) = load_users(srv, &user_lines, &aclfile) {
        eprintln!("{e}");
        log_warning!("{}", e.trim());
        return 1;
    }
    srv.port.store(port as usize, Ordering::Relaxed);
    // Cluster mode: nodes.conf and the bus's port, before any data loads.
    let cluster_listeners = if srv.config.read().cluster_enabled {
        match tern_commands::cmd::cluster::open(srv, port, &hosts) {
            Ok(l) => Some(l),
            Err(e) => {
                log_warning!("{}", e);
                return 1;
            }
        }
    } else {
        None
    };
    // CONFIG SET of a TLS directive builds a new context for new
    // connections, or fails and changes nothing.
    if tls_on {
        let tls = tls.clone();
        let hook: tern_commands::server::ConfigHook = Box::new(move |_old, new, names| {
            let Some(&first) = names.iter().find(|n| tls::CONTEXT_DIRECTIVES.contains(n)) else { return Ok(()) };
            tls.configure(new).map_err(|e| {
                log_warning!("Failed applying new TLS configuration (possibly related to new {} setting), keeping the old one: {}", first, e);
                (first, tern_commands::server::Refusal::Tls)
            })
        });
        let _ = srv.config_hook.set(hook);
    }
    // The snapshot is loaded before any worker runs: no client sees a
    // half-loaded keyspace (connections wait in the listen backlog).
    let load_start = std::time::Instant::now();
    // With appendonly yes the AOF is the dataset, as in Redis; dump.rdb
    // only when there is none.
    let from_aof = match tern_persist::aof::load::load_at_start(&eng) {
        Ok(b) => b,
        Err(e) => {
            log_warning!("{}", e);
            return 1;
        }
    };
    let rdb = if from_aof { Ok(None) } else { tern_persist::rdb::load_at_start(srv) };
    match rdb {
        Ok(Some(info)) => {
            let p = &srv.persist;
            log_notice!(
                "Done loading RDB, keys loaded: {}, keys expired: {}.",
                p.loaded_keys.load(Ordering::Relaxed),
                p.load_expired.load(Ordering::Relaxed)
            );
            if let Err(e) = tern_commands::script::load_libraries(srv, &info.functions, false) {
                log_warning!("Failed loading the RDB file's function libraries: {e}");
                return 1;
            }
            // Saved by a replica: its first link tries a PSYNC from there.
            if let Some(at) = upstream.as_ref().and(tern_store::rdb::ReplPosition::from_aux(&info.aux)) {
                log_notice!("RDB has replication info: {}:{} (database {}), for a partial resynchronization", at.replid, at.offset, at.db);
                srv.repl.loaded_position(at);
            }
            log_notice!("DB loaded from disk: {:.3} seconds", load_start.elapsed().as_secs_f64());
        }
        Ok(None) => {}
        Err(e) => {
            log_warning!("{}", e);
            return 1;
        }
    }

    // Cluster mode has one database: keys loaded into another stop it,
    // as they stop Redis.
    if srv.cluster.get().is_some() && (1..srv.ks.db_count()).any(|db| srv.ks.db_gids(db).any(|g| !srv.ks.lock(g).is_empty())) {
        log_warning!("You can't have keys in a DB different than DB 0 when in Cluster mode. Exiting.");
        return 1;
    }
    if let (Some(ls), Some(cl)) = (cluster_listeners, srv.cluster.get().cloned()) {
        // Another node's PUBLISH reaches this one's subscribers.
        let weak = Arc::downgrade(&eng);
        let _ = cl.on_publish.set(Box::new(move |channel, message, shard| {
            if let Some(eng) = weak.upgrade() {
                let srv = &eng.srv;
                srv.messaging.publish(channel, message, shard, tern_commands::messaging::NO_WORKER, |w| srv.wake_only(w));
            }
        }));
        let _ = std::thread::Builder::new().name("tern-cluster-bus".into()).spawn(move || tern_cluster::bus::run(cl, ls));
    }

    // The AOF writer runs before anything writes; with appendonly yes the
    // files are made ready (a base of what was loaded, when there was no
    // AOF) before any worker runs.
    let aof_handle = {
        let eng = eng.clone();
        std::thread::Builder::new().name("tern-aof".into()).spawn(move || tern_persist::aof::writer(&eng.srv)).ok()
    };
    if let Err(e) = tern_persist::aof::start(srv) {
        log_warning!("{}", e);
        tern_persist::aof::finish(srv);
        return 1;
    }

    let mut workers = Vec::new();
    let mut wakers = Vec::new();
    for id in 0..threads {
        let ls: Vec<net::Listener> = match listeners
            .iter()
            .map(|(l, mc, tls)| l.try_clone().map(|l| net::Listener { socket: mio::net::TcpListener::from_std(l), mc: *mc, tls: *tls }))
            .collect()
        {
            Ok(v) => v,
            Err(e) => {
                log_warning!("cloning listener: {}", e);
                return 1;
            }
        };
        match net::Worker::new(id, eng.clone(), ls, mc_shared.clone(), tls.clone()) {
            Ok((w, waker)) => {
                workers.push(w);
                wakers.push(waker);
            }
            Err(e) => {
                log_warning!("creating worker: {}", e);
                return 1;
            }
        }
    }
    let _ = srv.wakers.set(wakers);
    drop(listeners);

    {
        let eng = eng.clone();
        if let Some(mut signals) = signals {
            std::thread::Builder::new()
                .name("tern-signals".into())
                .spawn(move || {
                    if let Some(sig) = signals.forever().next() {
                        let name = if sig == signal_hook::consts::SIGINT { "SIGINT" } else { "SIGTERM" };
                        log_warning!("Received {} scheduling shutdown...", name);
                        eng.srv.begin_shutdown();
                    }
                })
                .ok();
        }
    }
    let cron_handle = {
        let eng = eng.clone();
        std::thread::Builder::new().name("tern-cron".into()).spawn(move || cron(&eng.srv)).ok()
    };
    let saver_handle = {
        let eng = eng.clone();
        std::thread::Builder::new().name("tern-saver".into()).spawn(move || tern_persist::rdb::saver(&eng.srv)).ok()
    };
    let rewriter_handle = {
        let eng = eng.clone();
        std::thread::Builder::new().name("tern-aof-rewrite".into()).spawn(move || tern_persist::aof::rewriter(&eng.srv)).ok()
    };
    // The replica's side: a link thread that follows REPLICAOF (idle
    // while this server is a master). Not joined: it ends at shutdown
    // once its link does.
    {
        let eng = eng.clone();
        let _ = std::thread::Builder::new().name("tern-replica-link".into()).spawn(move || tern_persist::repl::replica::run(&eng));
    }
    if let Some((host, port)) = &upstream {
        srv.ks.set_replica(true);
        srv.repl.set_master(host, *port);
    }
    let handles: Vec<_> = workers
        .into_iter()
        .enumerate()
        .map(|(i, w)| std::thread::Builder::new().name(format!("tern-worker-{i}")).stack_size(WORKER_STACK).spawn(move || w.run()))
        .collect();
    log_notice!("Running mode={}, port={}.", if srv.cluster.get().is_some() { "cluster" } else { "standalone" }, port);
    if mc_port != 0 {
        log_notice!("Serving the memcached protocols, memcache port={}.", mc_port);
    }
    if tls_port != 0 {
        log_notice!("Serving TLS, tls port={}.", tls_port);
    }
    if mc_tls_port != 0 {
        log_notice!("Serving the memcached protocols over TLS, memcache TLS port={}.", mc_tls_port);
    }
    if port != 0 || mc_port != 0 {
        log_notice!("Ready to accept connections tcp");
    }
    if tls_on {
        log_notice!("Ready to accept connections tls");
    }
    supervisor.ready();
    for h in handles.into_iter().flatten() {
        let _ = h.join();
    }
    // The workers have stopped: SHUTDOWN (which saved already, if it was
    // to) or a signal.
    supervisor.stopping();
    if let Some(cl) = srv.cluster.get() {
        cl.stop.store(true, Ordering::Relaxed);
    }
    if let Some(h) = cron_handle {
        let _ = h.join();
    }
    // A background save running now is given up (as Redis kills its
    // child): the final save below, if any, is a synchronous one.
    if let Some(h) = saver_handle {
        let _ = h.join();
    }
    // A rewrite running now is given up (the old files stay in use); the
    // AOF writer writes and syncs what the workers and cron handed over.
    if let Some(h) = rewriter_handle {
        let _ = h.join();
    }
    tern_persist::aof::finish(srv);
    if let Some(h) = aof_handle {
        let _ = h.join();
    }
    // A signal's shutdown saves when a `save` schedule is set, as Redis
    // (SHUTDOWN decided for itself, see its command).
    if !srv.persist.shutdown_handled.load(Ordering::Relaxed) && !srv.config.read().save.is_empty() {
        log_notice!("Saving the final RDB snapshot before exiting.");
        let mut locks = tern_store::LockSet::new(&srv.ks);
        if tern_persist::rdb::save(srv, &mut locks).is_err() {
            log_warning!("Error trying to save the DB before exiting.");
        }
    }
    log_notice!("Tern is now ready to exit, bye bye...");
    0
}
