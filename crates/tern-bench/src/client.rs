//! One load-generator thread: its connections on one mio event loop.
//!
//! Each connection keeps `--pipeline` requests in flight: it writes that
//! many, and sends a new one for each reply it reads. Buffers are reused;
//! a request is encoded straight into the connection's write buffer, and
//! a reply is classified in place without being copied or allocated.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use tern_memcache::encode;
use tern_resp::decode::{self, Kind};

use crate::keys::{KeyGen, Pattern, Rng};
use crate::mc::{self, Shape};
use crate::opts::{Config, Protocol, Requests};
use crate::stats::Stats;
use crate::template::Template;

/// What the load generator sends, resolved once from the options.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Commands, and how many of each to send in one cycle.
    pub cmds: Vec<(Template, u32, Pattern)>,
    /// With `--miss-set`, per command: the SET (an index in `cmds`, sent
    /// only after a miss, never in the cycle) that fills what it missed.
    pub miss_set: Vec<Option<usize>>,
}

impl Workload {
    pub fn from_config(cfg: &Config) -> Result<Workload, String> {
        let mut cmds = if cfg.commands.is_empty() {
            vec![
                (
                    Template::parse("SET __key__ __data__")?,
                    cfg.ratio.0,
                    cfg.set_pattern,
                ),
                (
                    Template::parse("GET __key__")?,
                    cfg.ratio.1,
                    cfg.get_pattern,
                ),
            ]
        } else {
            cfg.commands
                .iter()
                .map(|c| (c.template.clone(), c.ratio, c.pattern))
                .collect()
        };
        let mut miss_set = vec![None; cmds.len()];
        if cfg.miss_set {
            for i in 0..cmds.len() {
                if let Some(set) = Template::set_for_get(&cmds[i].0) {
                    miss_set[i] = Some(cmds.len());
                    cmds.push((set, 0, cmds[i].2));
                    miss_set.push(None);
                }
            }
            if miss_set.iter().all(Option::is_none) {
                return Err("--miss-set needs a single-key GET command".into());
            }
        }
        Ok(Workload { cmds, miss_set })
    }

    pub fn names(&self) -> Vec<String> {
        self.cmds.iter().map(|c| c.0.name.clone()).collect()
    }
}

/// Live counters the main thread reads for the progress line.
#[derive(Default)]
#[repr(align(64))]
pub struct Progress {
    pub ops: AtomicU64,
    pub errors: AtomicU64,
}

struct Pending {
    sent: Instant,
    cmd: u16,
    /// The last key number drawn for the request (a GET's only key).
    key: u64,
    /// Replies still to come (a memcache multi-get sent as N `mg` lines).
    expect: u32,
    keys: u32,
    shape: Shape,
    values: u32,
    error: bool,
}

struct Conn {
    stream: TcpStream,
    wbuf: Vec<u8>,
    wpos: usize,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    inflight: VecDeque<Pending>,
    /// Replies to a handshake (HELLO 3) still to be read and skipped.
    handshake: u32,
    /// One expanded word, to know its length before writing it.
    scratch: Vec<u8>,
    /// Where each expanded word lies in `scratch` (memcache requests).
    spans: Vec<(usize, usize)>,
    rng: Rng,
    gens: Vec<KeyGen>,
    /// Position in the command cycle: command index and repeats left.
    cycle: (usize, u32),
    /// SETs owed for GETs that missed (`--miss-set`): command and key,
    /// sent before the cycle resumes.
    refill: VecDeque<(usize, u64)>,
    left: Option<u64>,
    /// With `--rate-limiting`: when the next request may be sent.
    due: Instant,
    data_off: usize,
    closed: bool,
}

pub struct Shared {
    pub cfg: Config,
    pub work: Workload,
    /// Set on SIGINT: stop sending, drain what is in flight, report.
    pub stop: Arc<AtomicBool>,
    pub start: Instant,
    /// Filler for `__data__`: `--data-size` × 'x', or random bytes to draw
    /// windows from with `--random-data`.
    pub data: Vec<u8>,
    /// The time between two requests of one connection under `--rate-limiting`.
    pace: Option<Duration>,
}

impl Shared {
    /// `stop` is the SIGINT flag (set: stop sending, drain, report).
    pub fn new(cfg: Config, work: Workload, stop: Arc<AtomicBool>) -> Shared {
        let data = if cfg.random_data {
            let mut rng = Rng::new(cfg.seed ^ 0xda7a);
            let n = (cfg.data_size * 2).max(cfg.data_size + 4096);
            (0..n)
                .map(|_| {
                    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        [rng.below(62) as usize]
                })
                .collect()
        } else {
            vec![b'x'; cfg.data_size]
        };
        let pace = cfg.rate_limiting.map(|r| Duration::from_secs(1).div_f64(r as f64));
        Shared {
            pace,
            cfg,
            work,
            stop,
            start: Instant::now(),
            data,
        }
    }

    fn total_clients(&self) -> u64 {
        (self.cfg.threads * self.cfg.clients) as u64
    }

}

fn key_into(out: &mut Vec<u8>, prefix: &[u8], k: u64) {
    out.extend_from_slice(prefix);
    out.extend_from_slice(itoa::Buffer::new().format(k).as_bytes());
}

fn put_len(out: &mut Vec<u8>, prefix: u8, n: usize) {
    out.push(prefix);
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

impl Conn {
    fn new(sh: &Shared, stream: TcpStream, index: u64) -> Conn {
        let cfg = &sh.cfg;
        let n = sh.total_clients();
        let gens: Vec<KeyGen> = sh
            .work
            .cmds
            .iter()
            .map(|c| {
                KeyGen::new(
                    c.2,
                    cfg.key_min,
                    cfg.key_max,
                    index,
                    n,
                    cfg.key_median,
                    cfg.key_stddev,
                    cfg.zipf_alpha,
                )
            })
            .collect();
        let seed_base = if cfg.randomize {
            sh.start.elapsed().as_nanos() as u64 ^ std::process::id() as u64 ^ cfg.seed
        } else {
            cfg.seed
        };
        let seed = if cfg.distinct_client_seed {
            seed_base.wrapping_add(index.wrapping_mul(7919) + 1)
        } else {
            seed_base
        };
        let left = match cfg.requests {
            _ if cfg.test_time.is_some() => None,
            Requests::Count(c) => Some(c),
            Requests::AllKeys => {
                // One pass over the keys of the first command that is sent.
                let i = sh.work.cmds.iter().position(|c| c.1 > 0).unwrap_or(0);
                let per = sh.work.cmds[i].0.keys.max(1) as u64;
                Some(gens[i].pass_len().div_ceil(per))
            }
        };
        let first = sh.work.cmds.iter().position(|c| c.1 > 0).unwrap_or(0);
        let mut c = Conn {
            stream,
            wbuf: Vec::with_capacity(64 * 1024),
            wpos: 0,
            rbuf: vec![0; 64 * 1024],
            rstart: 0,
            rend: 0,
            inflight: VecDeque::with_capacity(cfg.pipeline),
            handshake: 0,
            scratch: Vec::new(),
            spans: Vec::new(),
            rng: Rng::new(seed),
            gens,
            cycle: (first, sh.work.cmds[first].1),
            refill: VecDeque::new(),
            left,
            // Connections start spread over one interval, not in step.
            due: sh.start + sh.pace.map_or(Duration::ZERO, |iv| iv.mul_f64(index as f64 / n as f64)),
            data_off: 0,
            closed: false,
        };
        if cfg.protocol == Protocol::Resp3 {
            c.wbuf
                .extend_from_slice(b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n");
            c.handshake = 1;
        }
        if matches!(cfg.protocol, Protocol::Redis | Protocol::Resp3) {
            for words in &cfg.connect_commands {
                tern_resp::encode::request(&mut c.wbuf, words.iter().map(|w| w.as_bytes()));
                c.handshake += 1;
            }
        }
        c
    }

    fn next_cmd(&mut self, work: &Workload) -> usize {
        while self.cycle.1 == 0 {
            self.cycle.0 = (self.cycle.0 + 1) % work.cmds.len();
            self.cycle.1 = work.cmds[self.cycle.0].1;
        }
        self.cycle.1 -= 1;
        self.cycle.0
    }

    /// Encodes one request into the write buffer and records it in flight.
    fn push_request(&mut self, sh: &Shared, now: Instant) {
        let owed = self.refill.pop_front();
        let ci = match owed {
            Some((ci, _)) => ci,
            None => self.next_cmd(&sh.work),
        };
        let t = &sh.work.cmds[ci].0;
        let cfg = &sh.cfg;
        let data: &[u8] = if cfg.random_data {
            let span = sh.data.len() - cfg.data_size;
            self.data_off = (self.data_off + 61) % span.max(1);
            &sh.data[self.data_off..self.data_off + cfg.data_size]
        } else {
            &sh.data
        };
        let prefix = cfg.key_prefix.as_bytes();
        // The clock is read when the request is encoded: its write follows
        // within the same fill.
        let now_us = if t.timed { crate::pubsub::epoch_us() } else { 0 };
        let (gen, rng) = (&mut self.gens[ci], &mut self.rng);
        let mut drawn = 0;
        let mut key = |o: &mut Vec<u8>| {
            drawn = match owed {
                Some((_, k)) => k,
                None => gen.next(rng),
            };
            key_into(o, prefix, drawn)
        };
        let mut p = Pending {
            sent: now,
            cmd: ci as u16,
            key: 0,
            expect: 1,
            keys: t.keys as u32,
            shape: Shape::Line,
            values: 0,
            error: false,
        };
        let out = &mut self.wbuf;
        match cfg.protocol {
            Protocol::Redis | Protocol::Resp3 => {
                put_len(out, b'*', t.words.len());
                for i in 0..t.words.len() {
                    if let Some(lit) = &t.resp_lit[i] {
                        out.extend_from_slice(lit);
                        continue;
                    }
                    // The length prefix needs the expanded word first.
                    let w = &mut self.scratch;
                    w.clear();
                    t.expand_word(i, w, &mut key, data, now_us);
                    put_len(out, b'$', w.len());
                    out.extend_from_slice(w);
                    out.extend_from_slice(b"\r\n");
                }
            }
            Protocol::MemcacheText | Protocol::MemcacheMeta => {
                let meta = cfg.protocol == Protocol::MemcacheMeta;
                // Keys and values are expanded into `scratch` first: the
                // encoders take them as slices.
                let (sc, spans) = (&mut self.scratch, &mut self.spans);
                sc.clear();
                spans.clear();
                for i in 1..t.words.len() {
                    let at = sc.len();
                    t.expand_word(i, sc, &mut key, data, now_us);
                    spans.push((at, sc.len()));
                }
                let arg = |i: usize| &sc[spans[i].0..spans[i].1];
                match t.name.as_str() {
                    "SET" if t.words.len() == 3 && meta => encode::ms(out, arg(0), arg(1), b""),
                    "SET" if t.words.len() == 3 => encode::set(out, arg(0), 0, 0, arg(1)),
                    "GET" | "MGET" if meta => {
                        // A multi-get as meta-memcache sends it: one `mg` per key, in one write.
                        p.expect = spans.len() as u32;
                        for i in 0..spans.len() {
                            encode::mg(out, arg(i), b"f v t l h");
                        }
                    }
                    "GET" | "MGET" => {
                        p.shape = Shape::Values;
                        encode::get(out, false, (0..spans.len()).map(arg));
                    }
                    name => {
                        // Any other command is sent as its words on one line.
                        if matches!(name, "GETS" | "GAT" | "GATS") {
                            p.shape = Shape::Values;
                        }
                        out.extend_from_slice(t.name.to_ascii_lowercase().as_bytes());
                        for i in 0..spans.len() {
                            out.push(b' ');
                            out.extend_from_slice(arg(i));
                        }
                        out.extend_from_slice(b"\r\n");
                    }
                }
                p.keys = p.keys.max(p.expect);
            }
        }
        p.key = drawn;
        self.inflight.push_back(p);
    }
}

fn connect(cfg: &Config) -> io::Result<TcpStream> {
    let s = std::net::TcpStream::connect((cfg.server.as_str(), cfg.port))?;
    s.set_nodelay(true)?;
    s.set_nonblocking(true)?;
    Ok(TcpStream::from_std(s))
}

/// Runs `cfg.clients` connections until the time is up or every connection
/// has sent its requests, and returns this thread's statistics.
pub fn run_thread(
    sh: Arc<Shared>,
    thread: usize,
    progress: Arc<Progress>,
) -> Result<Stats, String> {
    let cfg = &sh.cfg;
    let mut stats = Stats::new(&sh.work.names());
    let mut poll = Poll::new().map_err(|e| e.to_string())?;
    let mut conns = Vec::with_capacity(cfg.clients);
    for i in 0..cfg.clients {
        let mut s =
            connect(cfg).map_err(|e| format!("connect {}:{}: {e}", cfg.server, cfg.port))?;
        poll.registry()
            .register(&mut s, Token(i), Interest::READABLE | Interest::WRITABLE)
            .map_err(|e| e.to_string())?;
        conns.push(Conn::new(&sh, s, (thread * cfg.clients + i) as u64));
    }
    let deadline = cfg.test_time.map(|t| sh.start + Duration::from_secs(t));
    let mut events = Events::with_capacity(1024);
    let mut open = conns.len();
    let now = Instant::now();
    for c in conns.iter_mut() {
        fill(c, &sh, &mut stats, now, false);
        flush(c, &mut stats);
        if c.closed {
            open -= 1;
        }
    }
    let (mut ops_seen, mut errs_seen) = (0u64, 0u64);
    let pace = sh.pace;
    while open > 0 {
        let mut timeout = Duration::from_millis(100);
        if pace.is_some() {
            // Wake for the first connection whose next request falls due.
            let now = Instant::now();
            let first = conns.iter().filter(|c| paced_waiting(c, cfg)).map(|c| c.due).min();
            if let Some(d) = first {
                timeout = timeout.min(d.saturating_duration_since(now));
            }
        }
        if let Err(e) = poll.poll(&mut events, Some(timeout)) {
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e.to_string());
        }
        let now = Instant::now();
        let stopping = sh.stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| now >= d);
        for ev in events.iter() {
            let Some(c) = conns.get_mut(ev.token().0) else {
                continue;
            };
            if c.closed {
                continue;
            }
            if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                read(c, &sh, &mut stats, now);
            }
            if !c.closed {
                fill(c, &sh, &mut stats, now, stopping);
                flush(c, &mut stats);
            }
            if !c.closed
                && c.inflight.is_empty()
                && c.handshake == 0
                && (stopping || c.left == Some(0))
            {
                c.closed = true;
            }
            if c.closed {
                open -= 1;
                let _ = poll.registry().deregister(&mut c.stream);
            }
        }
        if pace.is_some() {
            // Requests that fell due with no event on their connection, and
            // (at the end) idle connections, which no event will close.
            for c in conns.iter_mut().filter(|c| !c.closed) {
                if stopping {
                    c.closed = c.inflight.is_empty() && c.handshake == 0;
                } else if paced_waiting(c, cfg) && c.due <= now {
                    fill(c, &sh, &mut stats, now, false);
                    flush(c, &mut stats);
                }
                if c.closed {
                    open -= 1;
                    let _ = poll.registry().deregister(&mut c.stream);
                }
            }
        }
        if stopping && now >= deadline.unwrap_or(now) + DRAIN_GRACE {
            // A server that stopped answering must not hang the run; its
            // unanswered requests show as sent but not received.
            for c in conns.iter_mut().filter(|c| !c.closed) {
                stats.connection_errors += 1;
                c.closed = true;
                open -= 1;
            }
        }
        let (o, e) = stats
            .cmds
            .iter()
            .fold((0, 0), |a, c| (a.0 + c.counts.ops, a.1 + c.counts.errors));
        progress.ops.fetch_add(o - ops_seen, Ordering::Relaxed);
        progress.errors.fetch_add(e - errs_seen, Ordering::Relaxed);
        (ops_seen, errs_seen) = (o, e);
    }
    Ok(stats)
}

/// How long replies still in flight at the end of `--test-time` are waited for.
const DRAIN_GRACE: Duration = Duration::from_secs(10);

/// An open connection with room in its pipeline that waits only for its
/// next request to fall due (`--rate-limiting`).
fn paced_waiting(c: &Conn, cfg: &Config) -> bool {
    !c.closed && c.inflight.len() < cfg.pipeline && c.left != Some(0)
}

/// Tops the pipeline up. Under `--rate-limiting` a request is sent only once
/// it falls due, and one that falls due while the pipeline is full waits for
/// a reply; latency is counted from the send, as memtier counts it (so a
/// server that falls behind shows it in throughput, not in latency).
fn fill(c: &mut Conn, sh: &Shared, stats: &mut Stats, now: Instant, stopping: bool) {
    if stopping {
        return;
    }
    let pace = sh.pace; // read once per fill
    while c.inflight.len() < sh.cfg.pipeline && c.left != Some(0) {
        if let Some(iv) = pace {
            if c.due > now {
                break;
            }
            // A fixed schedule: a connection held back by a full pipeline
            // sends what fell due as soon as replies make room.
            c.due += iv;
        }
        c.push_request(sh, now);
        stats.sent += 1;
        if let Some(l) = c.left.as_mut() {
            *l -= 1;
        }
    }
}

fn flush(c: &mut Conn, stats: &mut Stats) {
    while c.wpos < c.wbuf.len() {
        match c.stream.write(&c.wbuf[c.wpos..]) {
            Ok(0) => {
                c.closed = true;
                stats.connection_errors += 1;
                return;
            }
            Ok(n) => {
                c.wpos += n;
                stats.bytes_out += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                c.closed = true;
                stats.connection_errors += 1;
                stats
                    .first_error
                    .get_or_insert_with(|| format!("write: {e}"));
                return;
            }
        }
    }
    c.wbuf.clear();
    c.wpos = 0;
}

fn read(c: &mut Conn, sh: &Shared, stats: &mut Stats, now: Instant) {
    loop {
        if c.rend == c.rbuf.len() {
            if c.rstart > 0 {
                c.rbuf.copy_within(c.rstart..c.rend, 0);
                c.rend -= c.rstart;
                c.rstart = 0;
            } else {
                let n = c.rbuf.len() * 2;
                c.rbuf.resize(n, 0);
            }
        }
        match c.stream.read(&mut c.rbuf[c.rend..]) {
            Ok(0) => {
                if !c.inflight.is_empty() || c.handshake > 0 {
                    stats.connection_errors += 1;
                    stats
                        .first_error
                        .get_or_insert_with(|| "server closed the connection".into());
                }
                c.closed = true;
                return;
            }
            Ok(n) => {
                let short = c.rend + n < c.rbuf.len();
                c.rend += n;
                stats.bytes_in += n as u64;
                if let Err(e) = consume(c, sh, stats, now) {
                    stats.connection_errors += 1;
                    stats.first_error.get_or_insert(e);
                    c.closed = true;
                    return;
                }
                // A short read emptied the socket, and mio's edge trigger
                // fires again for anything that arrives later: skip the
                // read that would only say WouldBlock.
                if short {
                    return;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                stats.connection_errors += 1;
                stats
                    .first_error
                    .get_or_insert_with(|| format!("read: {e}"));
                c.closed = true;
                return;
            }
        }
    }
}

/// Classifies every complete reply in the read buffer.
fn consume(c: &mut Conn, sh: &Shared, stats: &mut Stats, now: Instant) -> Result<(), String> {
    let sec = now.saturating_duration_since(sh.start).as_secs() as usize;
    let resp = matches!(sh.cfg.protocol, Protocol::Redis | Protocol::Resp3);
    while c.rstart < c.rend {
        let buf = &c.rbuf[c.rstart..c.rend];
        if resp {
            let Some((r, n)) = decode::decode(buf).map_err(|e| format!("bad reply: {e}"))? else {
                break;
            };
            c.rstart += n;
            if r.kind == Kind::Push {
                continue;
            }
            if c.handshake > 0 {
                c.handshake -= 1;
                if r.kind == Kind::Error {
                    return Err(format!(
                        "connection setup (HELLO 3, --connect-command) failed: {}",
                        String::from_utf8_lossy(&buf[r.text])
                    ));
                }
                continue;
            }
            let Some(p) = c.inflight.pop_front() else {
                return Err("reply without a request".into());
            };
            stats.received += 1;
            let cmd = &mut stats.cmds[p.cmd as usize];
            if r.kind == Kind::Error {
                cmd.counts.errors += 1;
                stats.per_sec_errors(sec);
                if stats.first_error.is_none() {
                    stats.first_error = Some(String::from_utf8_lossy(&buf[r.text]).into_owned());
                }
                continue;
            }
            let (hits, misses) = match cmd.name.as_str() {
                "GET" => match r.kind {
                    Kind::Null => (0, 1),
                    _ => (1, 0),
                },
                "MGET" if r.kind == Kind::Array => ((r.len - r.nulls) as u64, r.nulls as u64),
                "PUBLISH" | "SPUBLISH" if r.kind == Kind::Int => {
                    stats.receivers += tern_resp::parse_u64(&buf[r.text.clone()]).unwrap_or(0);
                    (0, 0)
                }
                _ => (0, 0),
            };
            owe_set(c, &sh.work, &p, misses);
            record(stats, p.cmd, p.sent, now, sec, hits, misses);
        } else {
            let Some(p) = c.inflight.front_mut() else {
                return Err("reply without a request".into());
            };
            let Some((r, n)) = mc::decode(buf, p.shape).map_err(|e| e.0)? else {
                break;
            };
            c.rstart += n;
            p.values += r.values;
            if r.error && !p.error {
                p.error = true;
                stats
                    .first_error
                    .get_or_insert_with(|| String::from_utf8_lossy(&buf[..n - 2]).into_owned());
            }
            p.expect -= 1;
            if p.expect > 0 {
                continue;
            }
            let Some(p) = c.inflight.pop_front() else {
                continue;
            };
            stats.received += 1;
            if p.error {
                stats.cmds[p.cmd as usize].counts.errors += 1;
                stats.per_sec_errors(sec);
                continue;
            }
            let name = stats.cmds[p.cmd as usize].name.as_str();
            let (hits, misses) = if matches!(name, "GET" | "MGET" | "GETS" | "MG") {
                (p.values as u64, p.keys.saturating_sub(p.values) as u64)
            } else {
                (0, 0)
            };
            owe_set(c, &sh.work, &p, misses);
            record(stats, p.cmd, p.sent, now, sec, hits, misses);
        }
    }
    if c.rstart == c.rend {
        c.rstart = 0;
        c.rend = 0;
    }
    Ok(())
}

/// `--miss-set`: a GET that missed owes the SET of its key.
fn owe_set(c: &mut Conn, work: &Workload, p: &Pending, misses: u64) {
    if misses > 0 {
        if let Some(Some(set)) = work.miss_set.get(p.cmd as usize) {
            c.refill.push_back((*set, p.key));
        }
    }
}

fn record(
    stats: &mut Stats,
    cmd: u16,
    sent: Instant,
    now: Instant,
    sec: usize,
    hits: u64,
    misses: u64,
) {
    let us = now.saturating_duration_since(sent).as_micros() as u64;
    let cs = &mut stats.cmds[cmd as usize];
    cs.counts.ops += 1;
    cs.counts.hits += hits;
    cs.counts.misses += misses;
    cs.hist.saturating_record(us.max(1));
    let s = stats.second(sec);
    s.ops += 1;
    s.hits += hits;
    s.misses += misses;
}

impl Stats {
    fn per_sec_errors(&mut self, sec: usize) {
        self.second(sec).errors += 1;
    }
}
