//! The replica's side of replication: REPLICAOF's link to a master (Redis,
//! Valkey or Tern), on a thread of its own (`tern-replica-link`).
//!
//! ```text
//!  REPLICAOF host port ─► Repl::set_master ─► link thread: connect, PING, AUTH, REPLCONF, PSYNC
//!     +FULLRESYNC id off ─► the RDB to a file in `dir` (or from the socket) ─► flush, load (clients get -LOADING)
//!     +CONTINUE [id]     ─► the data stays
//!  then the stream, read as a client's pipeline is (a read's commands parsed in place,
//!  their keys prefetched ahead, applied as one batch): each command run through the
//!  command table as the master's client (id 0: it obeys always; keys past their deadline
//!  are still there for it), its writes' records feeding this server's own AOF, its bytes
//!  this server's own stream (backlog, sub-replicas: Repl::proxy); REPLCONF GETACK
//!  answered, REPLCONF ACK every second (with FACK, the offset its AOF has fsynced,
//!  when the AOF is on)
//! ```
//!
//! The offset is the master's: the bytes of its stream applied, so that a
//! link that drops takes the stream up again with PSYNC (the master's id
//! and offset + 1), also after a restart (the RDB's `repl-*` fields). A
//! batch, its place in the offset and its bytes in this server's stream
//! go together under `Repl::applying`, which a save and a sub-replica's
//! snapshot take to begin at an exact offset.
//!
//! The RDB goes through a file in `dir`, or with `repl-diskless-load`
//! (`on-empty-db`, `swapdb`) and no key here, is loaded from the socket
//! as it arrives.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tern_config::{log_notice, log_warning};

use crate::aof::load::Runner;
use tern_commands::engine::Engine;
use tern_commands::repl::LinkState;
use tern_commands::server::now_ms;

/// How long the link waits between attempts (Redis's replication cron).
const RETRY: Duration = Duration::from_secs(1);

/// The link thread: follows REPLICAOF until the server stops.
pub fn run(eng: &Engine) {
    let srv = &eng.srv;
    // What the master sends finds keys past their deadline still there.
    tern_store::apply_masters_stream(true);
    loop {
        let target = {
            let mut up = srv.repl.up.lock();
            loop {
                if srv.is_shutting_down() {
                    return;
                }
                if let Some(u) = up.as_ref() {
                    break (u.host.clone(), u.port, u.generation, u.replid.clone(), u.offset);
                }
                srv.repl.up_cv.wait_for(&mut up, Duration::from_millis(200));
            }
        };
        let (host, port, generation, ..) = target.clone();
        let r = link(eng, target);
        srv.repl.set_link_up(false);
        let current = with_link(srv, generation, |u| {
            u.state = LinkState::Connect;
            u.sock = None;
            u.down_since_ms = now_ms();
        });
        if !current || srv.is_shutting_down() {
            continue;
        }
        if let Err(e) = r {
            log_warning!("Error with MASTER {}:{}: {}", host, port, e);
            // A FAILOVER whose target cannot be reached is given up.
            crate::repl::master::abort_failover(srv, "Write error to failover target");
        }
        // Retry after a pause, unless REPLICAOF changed meanwhile.
        let mut up = srv.repl.up.lock();
        if up.as_ref().is_some_and(|u| u.generation == generation) {
            srv.repl.up_cv.wait_for(&mut up, RETRY);
        }
    }
}

/// Runs `f` on the upstream if it is still REPLICAOF's `generation`.
fn with_link(srv: &tern_commands::server::Server, generation: u64, f: impl FnOnce(&mut tern_commands::repl::Upstream)) -> bool {
    let mut up = srv.repl.up.lock();
    match up.as_mut() {
        Some(u) if u.generation == generation => {
            f(u);
            true
        }
        _ => false,
    }
}

fn err(msg: impl Into<String>) -> std::io::Error {
    std::io::Error::other(msg.into())
}

/// Reads one line (CRLF or LF ended), without it.
fn line(r: &mut impl BufRead) -> std::io::Result<String> {
    let mut buf = Vec::new();
    r.read_until(b'\n', &mut buf)?;
    if buf.is_empty() {
        return Err(err("connection closed by the master"));
    }
    while buf.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
        buf.pop();
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

fn send(w: &mut impl Write, argv: &[&[u8]]) -> std::io::Result<()> {
    let mut out = Vec::new();
    tern_resp::encode::request(&mut out, argv.iter().copied());
    w.write_all(&out)
}

/// One connection to the master: the handshake, a full or partial
/// resynchronisation, then the stream until the link breaks.
fn link(eng: &Engine, (host, port, generation, replid, offset): (String, u16, u64, String, i64)) -> std::io::Result<()> {
    let srv = &eng.srv;
    let (timeout, auth, user) = {
        let c = srv.config.read();
        (c.repl_timeout, c.masterauth.clone(), c.masteruser.clone())
    };
    log_notice!("Connecting to MASTER {}:{}", host, port);
    log_notice!("MASTER <-> REPLICA sync started");
    with_link(srv, generation, |u| u.state = LinkState::Connecting);
    let addr = (host.as_str(), port).to_socket_addrs()?.next().ok_or_else(|| err("no address"))?;
    let sock = TcpStream::connect_timeout(&addr, timeout)?;
    sock.set_read_timeout(Some(timeout))?;
    sock.set_write_timeout(Some(timeout))?;
    let _ = sock.set_nodelay(true);
    if !with_link(srv, generation, |u| u.sock = sock.try_clone().ok()) {
        return Ok(());
    }
    let mut w = sock.try_clone()?;
    let mut r = BufReader::with_capacity(1 << 16, sock.try_clone()?);
    send(&mut w, &[b"PING"])?;
    let pong = line(&mut r)?;
    if pong.starts_with('-') && !tern_commands::errors::asks_for_auth(&pong) {
        return Err(err(format!("Error reply to PING from master: '{pong}'")));
    }
    log_notice!("Master replied to PING, replication can continue...");
    if !auth.is_empty() {
        if user.is_empty() {
            send(&mut w, &[b"AUTH", auth.as_bytes()])?;
        } else {
            send(&mut w, &[b"AUTH", user.as_bytes(), auth.as_bytes()])?;
        }
        let a = line(&mut r)?;
        if a.starts_with('-') {
            return Err(err(format!("Unable to AUTH to MASTER: {a}")));
        }
    }
    // Where the master (and Sentinel, from its INFO) is to reach this
    // replica: `replica-announce-port` / `-ip` when set.
    let (announce_ip, announce_port) = {
        let c = srv.config.read();
        (c.replica_announce_ip.clone(), c.replica_announce_port)
    };
    let my_port = if announce_port > 0 { announce_port.to_string() } else { srv.port.load(Ordering::Relaxed).to_string() };
    send(&mut w, &[b"REPLCONF", b"listening-port", my_port.as_bytes()])?;
    let _ = line(&mut r)?;
    if !announce_ip.is_empty() {
        send(&mut w, &[b"REPLCONF", b"ip-address", announce_ip.as_bytes()])?;
        let _ = line(&mut r)?;
    }
    send(&mut w, &[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"])?;
    let _ = line(&mut r)?;
    let (id, from) = if offset >= 0 && replid != "?" { (replid.clone(), (offset + 1).to_string()) } else { ("?".to_string(), "-1".to_string()) };
    if id != "?" {
        log_notice!("Trying a partial resynchronization (request {}:{}).", id, from);
    } else {
        log_notice!("Partial resynchronization not possible (no cached master)");
    }
    // A FAILOVER of this server: the target takes over before it answers.
    let failing_over = srv.repl.failing_over();
    if failing_over {
        send(&mut w, &[b"PSYNC", id.as_bytes(), from.as_bytes(), b"FAILOVER"])?;
    } else {
        send(&mut w, &[b"PSYNC", id.as_bytes(), from.as_bytes()])?;
    }
    let mut reply = line(&mut r)?;
    while reply.is_empty() {
        reply = line(&mut r)?;
    }
    if failing_over {
        if reply.starts_with("+FULLRESYNC") || reply.starts_with("+CONTINUE") {
            crate::repl::master::failover_done(srv);
        } else {
            crate::repl::master::abort_failover(srv, "Failover target rejected psync request");
            return Err(err(format!("the failover target refused: {reply}")));
        }
    }
    let applied = Arc::new(AtomicI64::new(offset));
    if let Some(rest) = reply.strip_prefix("+FULLRESYNC ") {
        let mut it = rest.split_whitespace();
        let (new_id, off) = (it.next().unwrap_or("?").to_string(), it.next().and_then(|o| o.parse::<i64>().ok()).unwrap_or(-1));
        log_notice!("Full resync from master: {}:{}", new_id, off);
        with_link(srv, generation, |u| u.state = LinkState::Sync);
        // A save meanwhile holds the old data at the old place, or the
        // new data at the new one.
        let _applying = srv.repl.applying.lock();
        full_sync(eng, &mut r, generation)?;
        applied.store(off, Ordering::Relaxed);
        if !with_link(srv, generation, |u| {
            u.replid = new_id.clone();
            u.offset = off;
            u.read_offset = off;
            // The stream starts with a SELECT.
            u.db = 0;
        }) {
            return Ok(());
        }
        srv.repl.follow(&new_id, off.max(0) as u64, true, srv.config.read().repl_backlog_size as usize);
        if srv.aof.is_on() {
            srv.repl.note_applied(srv.ks.next_seq(), off.max(0) as u64);
        }
    } else if let Some(rest) = reply.strip_prefix("+CONTINUE") {
        let new_id = rest.trim();
        log_notice!("Successful partial resynchronization with master.");
        let new_id = if new_id.is_empty() { id.clone() } else { new_id.to_string() };
        if new_id != id {
            with_link(srv, generation, |u| u.replid = new_id.clone());
        }
        let _applying = srv.repl.applying.lock();
        srv.repl.follow(&new_id, offset.max(0) as u64, false, srv.config.read().repl_backlog_size as usize);
        log_notice!("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
    } else {
        return Err(err(format!("Unexpected reply to PSYNC from master: {reply}")));
    }
    with_link(srv, generation, |u| {
        u.state = LinkState::Connected;
        u.last_io_ms = now_ms();
    });
    srv.repl.set_link_up(true);
    stream(eng, r, w, generation, applied, timeout)
}

/// Reads the RDB the master sends (after newlines that keep the link
/// alive) to a file in `dir`, then empties the keyspace and loads it.
fn full_sync(eng: &Engine, r: &mut BufReader<TcpStream>, generation: u64) -> std::io::Result<()> {
    let srv = &eng.srv;
    let mut head = line(r)?;
    while head.is_empty() {
        head = line(r)?;
    }
    if head.starts_with('-') {
        return Err(err(format!("MASTER aborted replication with an error: {head}")));
    }
    let Some(size) = head.strip_prefix('$') else {
        return Err(err(format!("Bad protocol from MASTER, the first byte is not '$' (we received '{head}'), are you sure the host and port are right?")));
    };
    let eof_mark = size.strip_prefix("EOF:").map(|m| m.as_bytes().to_vec());
    let len = match &eof_mark {
        Some(_) => None,
        None => Some(size.parse::<u64>().map_err(|_| err("bad RDB length from MASTER"))?),
    };
    if from_socket(srv) {
        log_notice!("MASTER <-> REPLICA sync: Flushing old data");
        // The RDB must end where its framing says, or the stream that
        // follows would be read from the wrong byte.
        return match eof_mark {
            Some(mark) => {
                let mut rdb = EofReader::new(r, mark);
                load(eng, &mut rdb, None)?;
                rdb.finished().then_some(()).ok_or_else(|| err("the master's RDB did not end at its EOF mark"))
            }
            None => {
                let mut rdb = r.by_ref().take(len.unwrap_or(0));
                load(eng, &mut rdb, len)?;
                (std::io::copy(&mut rdb, &mut std::io::sink())? == 0).then_some(()).ok_or_else(|| err("the master's RDB did not end at its length"))
            }
        };
    }
    let tmp = crate::rdb::temp_path(srv, &format!("temp-{}.{}.rdb", now_ms() / 1000, std::process::id()));
    let mut file = std::fs::File::create(&tmp)?;
    let got = (|| -> std::io::Result<u64> {
        match (&eof_mark, len) {
            (Some(mark), _) => {
                log_notice!("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk");
                copy_until_mark(r, &mut file, mark)
            }
            (None, len) => {
                let len = len.unwrap_or(0);
                log_notice!("MASTER <-> REPLICA sync: receiving {} bytes from master to disk", len);
                let n = std::io::copy(&mut r.by_ref().take(len), &mut file)?;
                if n != len {
                    return Err(err("connection lost during the RDB transfer"));
                }
                Ok(n)
            }
        }
    })();
    drop(file);
    let got = match got {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    if !with_link(srv, generation, |_| {}) {
        let _ = std::fs::remove_file(&tmp);
        return Ok(());
    }
    log_notice!("MASTER <-> REPLICA sync: Flushing old data");
    let loaded = std::fs::File::open(&tmp).and_then(|f| load(eng, std::io::BufReader::new(f), Some(got)));
    let _ = std::fs::remove_file(&tmp);
    loaded
}

/// Whether the master's RDB is loaded straight from the socket
/// (`repl-diskless-load`): with `on-empty-db` or `swapdb` while this
/// server holds no key. Otherwise it goes through a file, so the data
/// stays until the RDB has arrived whole (Redis's `swapdb` keeps it in
/// memory beside the new one while it loads; Tern has no second keyspace
/// to load into, so with data it takes the file's way, which keeps it as
/// long as the transfer lasts).
fn from_socket(srv: &tern_commands::server::Server) -> bool {
    let mode = srv.config.read().repl_diskless_load;
    mode != "disabled" && (0..srv.ks.total_shards() as u32).all(|g| srv.ks.lock(g).len() == 0)
}

/// The RDB of a `$EOF:<mark>` transfer, read from the socket: it ends
/// where the bytes received end with the mark (which is not given),
/// as Redis finds the end; the master sends nothing after it until this
/// replica acknowledges.
struct EofReader<'r> {
    r: &'r mut BufReader<TcpStream>,
    mark: Vec<u8>,
    /// Bytes received, not yet given: at least the mark's length are kept
    /// back until the end is known.
    held: Vec<u8>,
    /// Where `held` starts being given.
    at: usize,
    ended: bool,
}

impl<'r> EofReader<'r> {
    fn new(r: &'r mut BufReader<TcpStream>, mark: Vec<u8>) -> Self {
        EofReader { r, mark, held: Vec::new(), at: 0, ended: false }
    }
}

impl EofReader<'_> {
    /// The mark was reached and every byte before it given.
    fn finished(&self) -> bool {
        self.ended && self.at == self.held.len()
    }
}

impl Read for EofReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        loop {
            // What can be given: all at the end, else all but the mark's length.
            let keep = if self.ended { 0 } else { self.mark.len() };
            let ready = (self.held.len() - self.at).saturating_sub(keep);
            if ready > 0 || self.ended {
                let n = ready.min(out.len());
                out[..n].copy_from_slice(&self.held[self.at..self.at + n]);
                self.at += n;
                return Ok(n);
            }
            if self.at > 0 {
                self.held.drain(..self.at);
                self.at = 0;
            }
            let buf = self.r.fill_buf()?;
            if buf.is_empty() {
                return Err(err("connection lost during the RDB transfer"));
            }
            self.held.extend_from_slice(buf);
            let n = buf.len();
            self.r.consume(n);
            if self.held.ends_with(&self.mark) {
                let body = self.held.len() - self.mark.len();
                self.held.truncate(body);
                self.ended = true;
            }
        }
    }
}

/// Copies `r` to `out` until the stream ends with `mark` (which is not
/// copied). Returns the bytes copied.
fn copy_until_mark(r: &mut BufReader<TcpStream>, out: &mut impl Write, mark: &[u8]) -> std::io::Result<u64> {
    // The last `mark.len()` bytes are held back until more arrive.
    let mut held: Vec<u8> = Vec::new();
    let mut total = 0u64;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Err(err("connection lost during the RDB transfer"));
        }
        held.extend_from_slice(buf);
        let n = buf.len();
        r.consume(n);
        if held.ends_with(mark) {
            let body = held.len() - mark.len();
            out.write_all(&held[..body])?;
            return Ok(total + body as u64);
        }
        if held.len() > mark.len() {
            let keep = held.len() - mark.len();
            out.write_all(&held[..keep])?;
            total += keep as u64;
            held.drain(..keep);
        }
    }
}

/// Empties the keyspace and loads the master's RDB (from a file or the
/// socket; `size` when known); clients get -LOADING meanwhile. A load that
/// fails leaves the keyspace empty. An AOF that is on is rewritten from
/// the result, as Redis restarts its AOF after a sync.
fn load(eng: &Engine, rdb: impl Read, size: Option<u64>) -> std::io::Result<()> {
    let srv = &eng.srv;
    let started = Instant::now();
    srv.persist.loading.store(true, Ordering::Relaxed);
    let mut runner = Runner::new(eng);
    let r = (|| -> std::io::Result<()> {
        runner.exec(&[b"FLUSHALL".to_vec(), b"SYNC".to_vec()]);
        log_notice!("MASTER <-> REPLICA sync: Loading DB in memory");
        let now = now_ms();
        // Keys past their deadline are kept, for the master's DEL, as a
        // Redis replica keeps them.
        let (info, loaded, expired) = crate::rdb::load_rdb_keeping(srv, rdb, size, now, true, false).map_err(|e| err(format!("Failed trying to load the MASTER synchronization DB from disk: {e}")))?;
        tern_commands::script::load_libraries(srv, &info.functions, false).map_err(|e| err(format!("Failed loading the master's function libraries: {e}")))?;
        crate::rdb::load_done(srv, loaded, expired, now);
        log_notice!("Done loading RDB, keys loaded: {}, keys expired: {}.", loaded, expired);
        Ok(())
    })();
    if r.is_err() {
        // Half a dataset is not served: the next sync starts from nothing.
        runner.exec(&[b"FLUSHALL".to_vec(), b"SYNC".to_vec()]);
    }
    srv.persist.loading.store(false, Ordering::Relaxed);
    r?;
    if srv.aof.is_on() {
        // Nothing counts as fsynced (FACK 0) until the rewrite is done.
        srv.aof.invalidate_synced();
        crate::aof::request_rewrite(srv);
    }
    log_notice!("MASTER <-> REPLICA sync: Finished with success ({:.3} s)", started.elapsed().as_secs_f64());
    Ok(())
}

/// Applies the master's stream until the link breaks or REPLICAOF
/// changes: each command through the command table, its bytes counted
/// into the offset; GETACK answered at once, ACKs every second.
fn stream(eng: &Engine, r: BufReader<TcpStream>, w: TcpStream, generation: u64, applied: Arc<AtomicI64>, timeout: Duration) -> std::io::Result<()> {
    let _listed = MasterEntry::new(&eng.srv, &w);
    let w = Mutex::new(w);
    let ack = |w: &Mutex<TcpStream>, off: i64| send_ack(&eng.srv, &mut w.lock(), off);
    ack(&w, applied.load(Ordering::Relaxed))?;
    let last_io = AtomicI64::new(now_ms() as i64);
    let done = std::sync::atomic::AtomicBool::new(false);
    let cut = r.get_ref().try_clone()?;
    std::thread::scope(|s| {
        // Acknowledges every second; cuts a master silent for repl-timeout.
        let acker = std::thread::Builder::new().name("tern-replica-ack".into()).spawn_scoped(s, || {
            let mut last_ack = Instant::now();
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
                let quiet = now_ms() as i64 - last_io.load(Ordering::Relaxed);
                if quiet > timeout.as_millis() as i64 {
                    log_warning!("MASTER timeout: no data nor PING received...");
                    break;
                }
                if last_ack.elapsed() >= Duration::from_secs(1) {
                    last_ack = Instant::now();
                    if ack(&w, applied.load(Ordering::Relaxed)).is_err() {
                        break;
                    }
                }
            }
            let _ = cut.shutdown(Shutdown::Both);
        });
        let r = apply(eng, r, &w, generation, &applied, &last_io);
        done.store(true, Ordering::Relaxed);
        if let Ok(t) = acker {
            let _ = t.join();
        }
        r
    })
}

/// Room the stream is read into; a command larger than it grows it.
const READ_ROOM: usize = 256 << 10;

/// The master's commands, parsed by the clients' request parser in
/// place: each read's complete commands are applied as one batch (one
/// clock reading, one hold of `Repl::applying`, one append of their bytes
/// to this server's stream, one update of the offset).
fn apply(eng: &Engine, mut r: BufReader<TcpStream>, w: &Mutex<TcpStream>, generation: u64, applied: &AtomicI64, last_io: &AtomicI64) -> std::io::Result<()> {
    let srv = &eng.srv;
    let mut runner = Runner::with_effects(eng, crate::aof::marked_effects(srv));
    // Where the stream was (a partial resynchronisation goes on without a
    // SELECT).
    runner.client.db = srv.repl.up.lock().as_ref().map_or(0, |u| u.db as usize);
    // The master's client has no size limits, as in Redis.
    let limits = tern_resp::Limits { max_bulk_len: i64::MAX as u64, max_multibulk_len: i32::MAX as u64, authenticated: true };
    let mut frame = tern_resp::Frame::new();
    // What the handshake's reader already holds comes first.
    let mut buf = r.buffer().to_vec();
    let (mut start, mut end) = (0, buf.len());
    r.consume(end);
    let mut sock = r.into_inner();
    buf.resize(READ_ROOM.max(end), 0);
    let mut off = applied.load(Ordering::Relaxed);
    loop {
        if start == end {
            (start, end) = (0, 0);
            if buf.len() > 4 * READ_ROOM {
                buf = vec![0; READ_ROOM];
            }
        }
        if end == buf.len() {
            if start > 0 {
                buf.copy_within(start..end, 0);
                (start, end) = (0, end - start);
            } else {
                buf.resize(buf.len() * 2, 0);
            }
        }
        let n = match sock.read(&mut buf[end..]) {
            Ok(0) => return Err(err("connection lost")),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        end += n;
        let now = now_ms();
        last_io.store(now as i64, Ordering::Relaxed);
        srv.repl.net_input.fetch_add(n as u64, Ordering::Relaxed);
        // A batch, its place in the offset and its bytes in this server's
        // stream go together for a save (`Repl::applying`).
        let _applying = srv.repl.applying.lock();
        let from = start;
        let batch = srv.prefetch_batch();
        runner.tick();
        while let Some(used) = runner.apply_next(&mut frame, &buf[start..end], &limits, batch, |args| {
            if args.len() >= 2 && args.get(0).eq_ignore_ascii_case(b"replconf") && args.get(1).eq_ignore_ascii_case(b"getack") {
                // The offset before this command, as Redis's replica answers.
                send_ack(srv, &mut w.lock(), off)?;
                return Ok(false);
            }
            Ok(!(args.len() == 1 && args.get(0).eq_ignore_ascii_case(b"ping")))
        })? {
            start += used;
            off += used as i64;
        }
        if start == from {
            continue;
        }
        crate::aof::hand(srv, runner.effects(), false);
        if srv.aof.is_on() {
            srv.repl.note_applied(srv.ks.next_seq(), off as u64);
        }
        srv.repl.proxy(&buf[from..start], srv.settings.client_output_buffer_limit().replica);
        if !counted(srv, generation, off, runner.client.db, now, applied) {
            return Ok(());
        }
    }
}

/// `REPLCONF ACK <off>`, with `FACK <aof_off>` (the offset this replica's
/// AOF has fsynced) when its AOF is on, as Redis 7.2's replicationSendAck.
fn send_ack(srv: &tern_commands::server::Server, w: &mut TcpStream, off: i64) -> std::io::Result<()> {
    let o = off.to_string();
    match srv.aof.fsynced() {
        Some(round) => {
            let f = srv.repl.fsynced_offset(round).to_string();
            send(w, &[b"REPLCONF", b"ACK", o.as_bytes(), b"FACK", f.as_bytes()])
        }
        None => send(w, &[b"REPLCONF", b"ACK", o.as_bytes()]),
    }
}

/// The link in CLIENT LIST (flag M, TYPE master) while it streams, as
/// Redis lists its master's client; CLIENT KILL of it cuts the link.
struct MasterEntry<'s> {
    srv: &'s tern_commands::server::Server,
    id: u64,
}

impl<'s> MasterEntry<'s> {
    fn new(srv: &'s tern_commands::server::Server, sock: &TcpStream) -> Self {
        use std::os::fd::AsRawFd;
        let id = srv.next_client_id.fetch_add(1, Ordering::Relaxed);
        let addr = |a: std::io::Result<std::net::SocketAddr>| a.map(|a| a.to_string()).unwrap_or_default();
        let sh = tern_commands::client::ClientShared::new(id, addr(sock.peer_addr()), addr(sock.local_addr()), sock.as_raw_fd(), 0, now_ms());
        sh.set_flag(tern_commands::client::flags::MASTER, true);
        srv.clients.lock().insert(id, Arc::new(sh));
        MasterEntry { srv, id }
    }
}

impl Drop for MasterEntry<'_> {
    fn drop(&mut self) {
        self.srv.clients.lock().remove(&self.id);
    }
}

/// The stream is applied up to `off`, in database `db`; false when the
/// link is no longer this one (REPLICAOF changed it).
fn counted(srv: &tern_commands::server::Server, generation: u64, off: i64, db: usize, now: u64, applied: &AtomicI64) -> bool {
    applied.store(off, Ordering::Relaxed);
    with_link(srv, generation, |u| {
        u.offset = off;
        u.read_offset = off;
        u.db = db as u32;
        u.last_io_ms = now;
    })
}
