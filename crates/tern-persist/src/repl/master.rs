//! The master's side of replication: what a worker hands over after
//! SYNC or PSYNC, the threads that serve a replica, and the periodic
//! work (see `tern_commands::repl` for the stream and its state).

use std::io::{BufReader, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_config::{log_notice, log_warning};
use tern_store::rdb::RdbWriter;
use tern_store::SnapshotError;

use tern_commands::repl::{random_hex40, state, Chunk, Hello, Joined, Outcome, Replica, SyncGroup};
use crate::rdb;
use tern_commands::server::{now_ms, PausePurpose, Server};

/// A connection that asked to be a replica, taken from its worker.
pub struct Handoff {
    pub stream: TcpStream,
    /// Replies the worker had not written yet (they go first).
    pub pending: Vec<u8>,
    pub client_id: u64,
    /// The peer's address (`ip:port`).
    pub addr: String,
    pub hello: Hello,
    /// PSYNC's replication id and offset; None for SYNC.
    pub psync: Option<(Vec<u8>, i64)>,
}

/// Serves a replica until its link closes or the server stops: the
/// thread the worker starts for it.
pub fn serve(srv: &Server, h: Handoff) {
    let ip = h.hello.ip.clone().unwrap_or_else(|| h.addr.rsplit_once(':').map_or(h.addr.clone(), |(ip, _)| ip.to_string()));
    let rep = Arc::new(Replica::new(h.client_id, ip, h.hello.listening_port, now_ms()));
    let mut sock = h.stream;
    let timeout = srv.config.read().repl_timeout;
    let _ = sock.set_nonblocking(false);
    let _ = sock.set_write_timeout(Some(timeout));
    let _ = sock.set_nodelay(!srv.config.read().repl_disable_tcp_nodelay);
    let r = (|| -> std::io::Result<()> {
        sock.write_all(&h.pending)?;
        if h.hello.rdb_only {
            // The snapshot and nothing after it (redis-cli --rdb).
            return full_sync(srv, &rep, &mut sock, &h.hello, h.psync.is_some()).map(drop);
        }
        srv.repl.activate(srv.config.read().repl_backlog_size as usize, &srv.ks);
        let acks = sock.try_clone()?;
        // The reader borrows the server; it ends with the link, before
        // this scope does.
        std::thread::scope(|s| {
            let reader = std::thread::Builder::new().name("tern-replica-ack".into()).spawn_scoped(s, || read_acks(srv, &rep, acks));
            let r = begin(srv, &rep, &mut sock, &h.hello, h.psync.as_ref()).and_then(|streamed_rdb| {
                // A replica reading an RDB up to its EOF mark would take
                // bytes right after the mark as part of it: the stream
                // waits for its first acknowledgement, as Redis's does.
                if streamed_rdb {
                    wait_first_ack(srv, &rep, timeout)?;
                }
                stream(srv, &rep, &mut sock)
            });
            rep.close();
            let _ = sock.shutdown(Shutdown::Both);
            if let Ok(t) = reader {
                let _ = t.join();
            }
            r
        })
    })();
    rep.close();
    let _ = sock.shutdown(Shutdown::Both);
    srv.repl.remove(&rep);
    // Out of CLIENT LIST.
    srv.clients.lock().remove(&h.client_id);
    match r {
        Err(e) if !srv.is_shutting_down() => log_warning!("Connection with replica {} lost: {}", rep.name(), e),
        _ => log_notice!("Connection with replica {} lost.", rep.name()),
    }
}

/// Waits (up to `repl-timeout`) for the replica's first REPLCONF ACK.
fn wait_first_ack(srv: &Server, rep: &Replica, timeout: Duration) -> std::io::Result<()> {
    let until = Instant::now() + timeout;
    while !rep.acked.load(Ordering::Acquire) {
        if rep.gone.load(Ordering::Relaxed) || srv.is_shutting_down() || Instant::now() >= until {
            return Err(std::io::Error::other("no REPLCONF ACK after the RDB"));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

/// The partial resynchronisation when PSYNC can have one, else a full
/// one. Returns whether an RDB went with an EOF mark.
fn begin(srv: &Server, rep: &Arc<Replica>, sock: &mut TcpStream, hello: &Hello, psync: Option<&(Vec<u8>, i64)>) -> std::io::Result<bool> {
    let repl = &srv.repl;
    if let Some((id, from)) = psync {
        if id.as_slice() != b"?" {
            match repl.try_partial(id, *from, rep) {
                Ok(replid) => {
                    let line = if hello.psync2 { format!("+CONTINUE {replid}\r\n") } else { "+CONTINUE\r\n".to_string() };
                    sock.write_all(line.as_bytes())?;
                    repl.sync_partial_ok.fetch_add(1, Ordering::Relaxed);
                    log_notice!("Partial resynchronization request from {} accepted. Sending the backlog from offset {}.", rep.name(), from);
                    return Ok(false);
                }
                Err(why) => {
                    repl.sync_partial_err.fetch_add(1, Ordering::Relaxed);
                    log_notice!("Partial resynchronization not accepted for replica {}: {}", rep.name(), why);
                }
            }
        } else {
            log_notice!("Full resync requested by replica {}", rep.name());
        }
    }
    repl.sync_full.fetch_add(1, Ordering::Relaxed);
    full_sync(srv, rep, sock, hello, psync.is_some())
}

/// A full resynchronisation: this replica's thread leads one, or joins one
/// that another replica's thread leads and has not begun (see
/// [`SyncGroup`]) and waits for its outcome. Returns whether the RDB went
/// with an EOF mark.
fn full_sync(srv: &Server, rep: &Arc<Replica>, sock: &mut TcpStream, hello: &Hello, psync: bool) -> std::io::Result<bool> {
    let (diskless, delay) = {
        let c = srv.config.read();
        (c.repl_diskless_sync && hello.eof, c.repl_diskless_sync_delay)
    };
    if hello.rdb_only {
        // redis-cli --rdb's snapshot is its own: it joins no stream.
        return lead(srv, rep, sock, hello, psync, None);
    }
    let kind = (diskless, !hello.exclude_functions, !hello.exclude_data);
    loop {
        let joined = {
            let mut forming = srv.repl.forming.lock();
            let open = forming.as_ref().filter(|g| g.kind == kind).filter(|g| g.st.lock().open).cloned();
            match open {
                Some(g) => {
                    g.st.lock().joined.push(Joined { rep: rep.clone(), sock: sock.try_clone()?, psync });
                    Ok(g)
                }
                None => {
                    let g = Arc::new(SyncGroup::new(kind));
                    *forming = Some(g.clone());
                    Err(g)
                }
            }
        };
        match joined {
            Err(g) => return lead(srv, rep, sock, hello, psync, Some((&g, delay))),
            Ok(g) => {
                log_notice!("Replica {} joins the full synchronisation being prepared", rep.name());
                match g.outcome(rep, || srv.is_shutting_down() || rep.gone.load(Ordering::Relaxed)) {
                    Some(Outcome::Synced) => return Ok(diskless),
                    Some(Outcome::Failed(e)) => return Err(std::io::Error::other(e)),
                    Some(Outcome::Retry) => continue,
                    None => return Err(std::io::Error::other("given up")),
                }
            }
        }
    }
}

/// Closes `g` to new members (it is no longer the one forming) and takes
/// those that joined.
fn close(srv: &Server, g: &Arc<SyncGroup>) -> Vec<Joined> {
    let mut forming = srv.repl.forming.lock();
    if forming.as_ref().is_some_and(|f| Arc::ptr_eq(f, g)) {
        *forming = None;
    }
    let mut st = g.st.lock();
    st.open = false;
    std::mem::take(&mut st.joined)
}

/// Leads a full resynchronisation for `rep` and the replicas that join
/// `group` (with its `repl-diskless-sync-delay`) before its snapshot
/// begins: waits the delay (diskless) and for any other snapshot to end,
/// keeping the links alive with newlines meanwhile, then sends the
/// snapshot to all and attaches them at its instant. Returns whether the
/// RDB went with an EOF mark, for `rep`; the others are told theirs.
fn lead(srv: &Server, rep: &Arc<Replica>, sock: &mut TcpStream, hello: &Hello, psync: bool, group: Option<(&Arc<SyncGroup>, Duration)>) -> std::io::Result<bool> {
    let mut members = Vec::new();
    let r = lead_inner(srv, rep, sock, hello, psync, group, &mut members);
    if let Some((g, _)) = group {
        // Given up before the snapshot began: whoever joined goes on alone.
        for m in close(srv, g) {
            g.settle(&m.rep, Outcome::Retry);
        }
        let why = match &r {
            Ok(_) => "the synchronisation ended".to_string(),
            Err(e) => e.to_string(),
        };
        for m in &members {
            g.settle(&m.rep, Outcome::Failed(why.clone()));
        }
    }
    r
}

fn lead_inner(
    srv: &Server,
    rep: &Arc<Replica>,
    sock: &mut TcpStream,
    hello: &Hello,
    psync: bool,
    group: Option<(&Arc<SyncGroup>, Duration)>,
    members: &mut Vec<Joined>,
) -> std::io::Result<bool> {
    let diskless = srv.config.read().repl_diskless_sync && hello.eof;
    let mut last_newline = Instant::now();
    let mut keep_alive = |sock: &mut TcpStream| -> std::io::Result<()> {
        if last_newline.elapsed() >= Duration::from_secs(1) {
            last_newline = Instant::now();
            if let Some((g, _)) = group {
                for m in g.st.lock().joined.iter() {
                    let _ = (&m.sock).write_all(b"\n");
                }
            }
            sock.write_all(b"\n")?;
        }
        Ok(())
    };
    let delay = group.map_or(Duration::ZERO, |(_, d)| d);
    if diskless && !delay.is_zero() {
        let until = Instant::now() + delay;
        while Instant::now() < until && !srv.is_shutting_down() {
            std::thread::sleep(Duration::from_millis(20).min(until.saturating_duration_since(Instant::now())));
            keep_alive(sock)?;
        }
    }
    let began = now_ms();
    // On a replica whose stream is its master's, the snapshot begins with
    // the link held between two commands, and the replicas are attached
    // at the stream's offset then.
    let mut attached = None;
    let snap = loop {
        if srv.is_shutting_down() || rep.gone.load(Ordering::Relaxed) {
            return Err(std::io::Error::other("given up"));
        }
        let applying = srv.repl.proxying().then(|| srv.repl.applying.lock());
        match srv.ks.begin_snapshot(now_ms()) {
            Ok(s) => {
                if let Some((g, _)) = group {
                    *members = close(srv, g);
                }
                if applying.is_some() && srv.repl.proxying() && !hello.rdb_only {
                    attached = Some(srv.repl.attach_now(rep));
                    for m in members.iter() {
                        srv.repl.attach_now(&m.rep);
                    }
                }
                break s;
            }
            Err(SnapshotError::InProgress) => {
                drop(applying);
                std::thread::sleep(Duration::from_millis(20));
                keep_alive(sock)?;
            }
        }
    };
    // Everyone it goes to: this replica first.
    let reps: Vec<&Arc<Replica>> = std::iter::once(rep).chain(members.iter().map(|m| &m.rep)).collect();
    // The stream from the snapshot's instant on goes to them (none to one
    // that only wants the snapshot).
    let offset = if hello.rdb_only {
        srv.repl.offset()
    } else if let Some(at) = attached {
        at
    } else {
        match attach_at_cut(srv, &reps, &snap) {
            Some(o) => o,
            None => {
                snap.cancel(&srv.ks);
                return Err(std::io::Error::other("shutting down"));
            }
        }
    };
    let socks: Vec<&TcpStream> = std::iter::once(&*sock).chain(members.iter().map(|m| &m.sock)).collect();
    let mut failed: Vec<Option<String>> = vec![None; reps.len()];
    let replid = srv.repl.replid();
    let line = format!("+FULLRESYNC {replid} {offset}\r\n");
    let psyncs = std::iter::once(psync).chain(members.iter().map(|m| m.psync));
    for (i, p) in psyncs.enumerate() {
        let mut s = socks[i];
        if p {
            if let Err(e) = s.write_all(line.as_bytes()) {
                failed[i] = Some(e.to_string());
            }
        }
    }
    let names: Vec<String> = reps.iter().map(|r| r.name()).collect();
    log_notice!(
        "Starting BGSAVE for SYNC with target: {} (replica{} {}, offset {})",
        if diskless { "replicas sockets" } else { "disk" },
        if reps.len() > 1 { "s" } else { "" },
        names.join(", "),
        offset
    );
    for r in &reps {
        r.state.store(state::SEND_BULK, Ordering::Relaxed);
    }
    let cancel = || reps.iter().all(|r| r.gone.load(Ordering::Relaxed));
    let opts = rdb::rdb_options(srv);
    let parts = rdb::Parts { functions: !hello.exclude_functions, data: !hello.exclude_data };
    // The snapshot is written by a thread of its own, at the priority
    // every snapshot takes; this one streams at the normal one after.
    let sent = std::thread::scope(|s| {
        let t = std::thread::Builder::new().name("tern-repl-rdb".into()).spawn_scoped(s, || {
            rdb::snapshot_priority(srv);
            if diskless {
                let mark = random_hex40();
                let mut fan = Fan { socks: &socks, failed: &mut failed };
                fan.write_all(format!("$EOF:{mark}\r\n").as_bytes())?;
                let w = RdbWriter::streaming(std::io::BufWriter::with_capacity(1 << 18, fan), opts);
                let (w, _) = rdb::write_rdb(srv, snap, w, parts, began, &cancel, &srv.persist.bg_last_cow_bytes).map_err(std::io::Error::other)?;
                let mut out = w.finish_streaming()?;
                out.write_all(mark.as_bytes())?;
                out.flush()?;
                Ok(())
            } else {
                to_disk_then_send(srv, snap, &socks, &mut failed, opts, began, &cancel)
            }
        });
        match t {
            Ok(t) => t.join().unwrap_or_else(|_| Err(std::io::Error::other("the snapshot thread failed"))),
            Err(e) => Err(e),
        }
    });
    if let Err(e) = sent {
        for f in failed.iter_mut().filter(|f| f.is_none()) {
            *f = Some(e.to_string());
        }
    }
    for (i, r) in reps.iter().enumerate() {
        match &failed[i] {
            None => {
                r.state.store(state::ONLINE, Ordering::Relaxed);
                r.ack_ms.store(now_ms(), Ordering::Relaxed);
                if diskless {
                    log_notice!("Streamed RDB transfer with replica {} succeeded (socket). Waiting for REPLCONF ACK from replica to enable streaming", r.name());
                }
                log_notice!("Synchronization with replica {} succeeded", r.name());
            }
            Some(e) => log_warning!("Full synchronization with replica {} failed: {}", r.name(), e),
        }
        if let (Some((g, _)), Some(m)) = (group, i.checked_sub(1).map(|j| &members[j])) {
            g.settle(&m.rep, failed[i].clone().map_or(Outcome::Synced, Outcome::Failed));
        }
    }
    match failed[0].take() {
        None => Ok(diskless),
        Some(e) => Err(std::io::Error::other(e)),
    }
}

/// The RDB's bytes to every replica of a synchronisation still taking
/// them: one whose socket fails is marked failed and dropped; the write
/// fails once none is left.
struct Fan<'a> {
    socks: &'a [&'a TcpStream],
    failed: &'a mut [Option<String>],
}

impl Write for Fan<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for (i, &s) in self.socks.iter().enumerate() {
            let mut s = s;
            if self.failed[i].is_none() {
                if let Err(e) = s.write_all(buf) {
                    self.failed[i] = Some(e.to_string());
                }
            }
        }
        if self.failed.iter().all(Option::is_some) {
            return Err(std::io::Error::other("no replica left to send the RDB to"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Asks the stream's writer for a cut at the snapshot's instant for each
/// of `reps` and waits for it: their queues are attached there. Returns
/// the stream's offset at the cut (None: the server is stopping).
fn attach_at_cut(srv: &Server, reps: &[&Arc<Replica>], snap: &tern_store::Snapshot) -> Option<u64> {
    // All asked for before the wait: the writer attaches them at once.
    for r in reps {
        srv.repl.request_cut(snap.first_seq_after(), r);
    }
    loop {
        srv.aof.feed.nudge();
        if reps.iter().all(|r| r.q.lock().attached_at.is_some()) {
            return reps[0].q.lock().attached_at;
        }
        if srv.is_shutting_down() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The snapshot to a file in `dir`, then to each replica still taking it,
/// with its length.
fn to_disk_then_send(
    srv: &Server,
    snap: tern_store::Snapshot,
    socks: &[&TcpStream],
    failed: &mut [Option<String>],
    opts: tern_store::rdb::RdbOptions,
    began: u64,
    cancel: &dyn Fn() -> bool,
) -> std::io::Result<()> {
    let tmp = rdb::temp_path(srv, &format!("temp-{}-repl-{}.rdb", std::process::id(), random_hex40()));
    let r = (|| -> std::io::Result<()> {
        let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&tmp)?;
        let file = rdb::AutoSync::new(file, false);
        let (mut file, _) = rdb::write_snapshot_to(srv, snap, file, opts, began, cancel, &srv.persist.bg_last_cow_bytes).map_err(std::io::Error::other)?;
        let len = file.metadata()?.len();
        use std::io::Seek;
        for (i, s) in socks.iter().enumerate() {
            if failed[i].is_some() {
                continue;
            }
            let mut sock = *s;
            let sent = (|| -> std::io::Result<()> {
                file.seek(std::io::SeekFrom::Start(0))?;
                sock.write_all(format!("${len}\r\n").as_bytes())?;
                let copied = std::io::copy(&mut file, &mut sock)?;
                if copied != len {
                    return Err(std::io::Error::other("the RDB file changed while it was sent"));
                }
                Ok(())
            })();
            if let Err(e) = sent {
                failed[i] = Some(e.to_string());
            }
        }
        Ok(())
    })();
    let _ = std::fs::remove_file(&tmp);
    r
}

/// Sends the replica's queue as it fills, until its link closes.
fn stream(srv: &Server, rep: &Arc<Replica>, sock: &mut TcpStream) -> std::io::Result<()> {
    loop {
        if rep.gone.load(Ordering::Relaxed) {
            return Ok(());
        }
        if srv.is_shutting_down() {
            // What the writer still has goes first, within a moment.
            let until = Instant::now() + Duration::from_millis(500);
            while Instant::now() < until {
                let chunks = rep.take(Duration::from_millis(50));
                if chunks.is_empty() {
                    break;
                }
                send(srv, sock, &chunks)?;
            }
            return Ok(());
        }
        let chunks = rep.take(Duration::from_millis(100));
        send(srv, sock, &chunks)?;
    }
}

/// Writes the chunks taken from the queue, as few system calls as the
/// socket takes them in (writev of up to 64 chunks at a time).
fn send(srv: &Server, sock: &mut TcpStream, chunks: &[Chunk]) -> std::io::Result<()> {
    let total: usize = chunks.iter().map(|c| c.len()).sum();
    // The first chunk not written whole, and how much of it was.
    let (mut i, mut part) = (0, 0);
    while i < chunks.len() {
        if chunks[i].len() == part {
            (i, part) = (i + 1, 0);
            continue;
        }
        let mut bufs: Vec<std::io::IoSlice<'_>> = Vec::with_capacity((chunks.len() - i).min(64));
        bufs.push(std::io::IoSlice::new(&chunks[i][part..]));
        bufs.extend(chunks[i + 1..].iter().take(63).map(|c| std::io::IoSlice::new(c)));
        let mut n = match sock.write_vectored(&bufs) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        while i < chunks.len() && n >= chunks[i].len() - part {
            n -= chunks[i].len() - part;
            (i, part) = (i + 1, 0);
        }
        part += n;
    }
    srv.repl.net_output.fetch_add(total as u64, Ordering::Relaxed);
    Ok(())
}

/// Reads what the replica sends: `REPLCONF ACK <offset> [FACK <offset>]`.
fn read_acks(srv: &Server, rep: &Replica, sock: TcpStream) {
    let mut r = tern_store::aof::CommandReader::new(BufReader::new(sock), 0);
    while !rep.gone.load(Ordering::Relaxed) {
        match r.next_command() {
            Ok(Some(argv)) => {
                if argv.len() >= 3 && argv[0].eq_ignore_ascii_case(b"replconf") && argv[1].eq_ignore_ascii_case(b"ack") {
                    let num = |a: &[u8]| std::str::from_utf8(a).ok().and_then(|s| s.parse::<u64>().ok());
                    if let Some(off) = num(&argv[2]) {
                        rep.ack.fetch_max(off, Ordering::Relaxed);
                    }
                    // `FACK <aof_off>`: what its AOF has fsynced (Redis 7.2+
                    // replicas with appendonly on).
                    if argv.len() >= 5 && argv[3].eq_ignore_ascii_case(b"fack") {
                        if let Some(off) = num(&argv[4]) {
                            rep.aof_ack.fetch_max(off, Ordering::Relaxed);
                        }
                    }
                    crate::aof::wake_waiters(srv);
                    rep.ack_ms.store(now_ms(), Ordering::Relaxed);
                    rep.acked.store(true, Ordering::Release);
                }
            }
            _ => break,
        }
    }
    rep.close();
}


/// The periodic part (the cron's): a PING into the stream every
/// `repl-ping-replica-period`, replicas that stopped acknowledging for
/// `repl-timeout` dropped, the backlog resized to `repl-backlog-size`,
/// and freed after `repl-backlog-ttl` without replicas.
pub fn cron(srv: &Server) {
    let repl = &srv.repl;
    failover_step(srv);
    let (period, timeout, ttl, size, max_lag) = {
        let c = srv.config.read();
        (c.repl_ping_replica_period, c.repl_timeout, c.repl_backlog_ttl, c.repl_backlog_size as usize, c.min_replicas_max_lag)
    };
    repl.count_good(now_ms(), max_lag.as_secs());
    if !repl.active() {
        return;
    }
    let limit = srv.settings.client_output_buffer_limit().replica;
    let mut st = repl.st.lock();
    st.replicas.retain(|r| !r.gone.load(Ordering::Relaxed));
    if let Some(b) = st.backlog.as_mut() {
        b.resize(size.max(tern_commands::repl::BACKLOG_MIN));
    }
    if st.replicas.is_empty() && st.cuts.is_empty() {
        // A replica keeps its backlog (its master's stream), as in Redis.
        if repl.proxying() {
            return;
        }
        let since = *st.alone_since.get_or_insert_with(Instant::now);
        if !ttl.is_zero() && since.elapsed() >= ttl {
            repl.deactivate(&mut st);
            if !srv.aof.is_on() {
                srv.ks.attach_effects(false);
            }
            log_notice!("Replication backlog freed after {} seconds without connected replicas.", ttl.as_secs());
        }
        return;
    }
    let now = now_ms();
    for r in &st.replicas {
        let quiet = now.saturating_sub(r.ack_ms.load(Ordering::Relaxed));
        if r.state.load(Ordering::Relaxed) == state::ONLINE && quiet > timeout.as_millis() as u64 {
            log_warning!("Disconnecting timedout replica (streaming sync): {}", r.name());
            r.close();
        }
    }
    // A replica sends its master's PINGs, not its own; a paused master
    // (CLIENT PAUSE, FAILOVER) sends none, so that its replicas catch up
    // with it, as Redis pauses replica traffic.
    if repl.proxying() || srv.pause.is_set() {
        return;
    }
    if st.last_ping.is_none_or(|t| t.elapsed() >= period) {
        st.last_ping = Some(Instant::now());
        st.append(b"*1\r\n$4\r\nPING\r\n".to_vec(), limit);
    }
}

/// FAILOVER waiting for a replica (Redis's updateFailoverStatus): past its
/// TIMEOUT it gives up, or with FORCE goes on; once the target (or any
/// replica) has acknowledged the whole stream, this server turns replica
/// of it, and its link sends `PSYNC … FAILOVER`.
fn failover_step(srv: &Server) {
    let mut guard = srv.repl.failover.lock();
    let Some(f) = guard.as_mut().filter(|f| !f.in_progress) else { return };
    let now = now_ms();
    if f.end_ms.is_some_and(|e| e <= now) {
        if f.force {
            if let Some((host, port)) = f.target.clone() {
                log_notice!("FAILOVER to {}:{} time out exceeded, failing over.", host, port);
                f.in_progress = true;
                drop(guard);
                srv.ks.set_replica(true);
                srv.repl.set_master(&host, port);
            }
        } else {
            drop(guard);
            abort_failover(srv, "Replica never caught up before timeout");
        }
        return;
    }
    let offset = srv.repl.offset();
    let ready = match &f.target {
        Some((host, port)) => srv.repl.find_replica(host, *port).filter(|(_, ack)| *ack == offset).map(|_| (host.clone(), *port)),
        None => srv.repl.caught_up_replica(),
    };
    if let Some((host, port)) = ready {
        log_notice!("Failover target {}:{} is synced, failing over.", host, port);
        f.target = Some((host.clone(), port));
        f.in_progress = true;
        drop(guard);
        srv.ks.set_replica(true);
        srv.repl.set_master(&host, port);
    }
}

/// This replica becomes a master (REPLICAOF NO ONE, PSYNC … FAILOVER, an
/// aborted FAILOVER): the link goes, keys expire here again, and the
/// stream it kept (its master's) goes on with effect records, which a
/// replica builds only for its AOF.
pub fn promote(srv: &Server) {
    srv.repl.unset_master(srv.ks.next_seq());
    srv.ks.set_replica(false);
    if srv.repl.active() {
        srv.ks.attach_effects(true);
    }
}

/// Ends a FAILOVER that could not be carried out (ABORT, TIMEOUT, the
/// target refused): a server that had turned replica is a master again,
/// and writes go on.
pub fn abort_failover(srv: &Server, why: &str) {
    let Some(f) = srv.repl.failover.lock().take() else { return };
    match &f.target {
        Some((host, port)) => log_notice!("FAILOVER to {}:{} aborted: {}", host, port, why),
        None => log_notice!("FAILOVER to any replica aborted: {}", why),
    }
    if f.in_progress {
        promote(srv);
    }
    srv.pause.clear(PausePurpose::Failover, now_ms());
    srv.wake_all();
}

/// The target took the PSYNC FAILOVER: this server is its replica now,
/// and writes (refused as a replica's) are no longer held.
pub fn failover_done(srv: &Server) {
    if srv.repl.failover.lock().take().is_some() {
        srv.pause.clear(PausePurpose::Failover, now_ms());
        srv.wake_all();
    }
}
