//! Subscriber connections (`--subscribers`): they subscribe before the
//! load starts, on threads of their own, then count every message they
//! read and its delivery latency, until the main thread has seen as many
//! as the publishers' replies announced.
//!
//! ```text
//!  start   deal the names ─► per connection [HELLO 3] SUBSCRIBE… PSUBSCRIBE… SSUBSCRIBE…
//!          ─► wait for every confirmation (the load starts only then)
//!  load    publishers (client.rs) ─► server ─► subscriber threads: read, parse, count
//!  finish  wait until received ≥ the sum of PUBLISH replies, or QUIET without
//!          a message ─► stop ─► merged SubStats
//! ```
//!
//! A message's latency is its receive time (the wall clock, read once per
//! `read`) minus the `__time_us__` its payload starts with. A subscriber
//! thread that falls behind shows in that latency and in messages/s: on a
//! small machine the subscribers can be what limits a fan-out.

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use tern_resp::decode::Kind;

use crate::opts::{Config, Protocol};
use crate::pubsub::{self, Event};
use crate::stats::SubStats;

/// How long subscribing may take before the run gives up.
const SETUP_LIMIT: Duration = Duration::from_secs(60);
/// After the load, this long without a new message means none is coming.
const QUIET: Duration = Duration::from_secs(1);
/// After the load, the longest wait for the messages still on their way.
const DRAIN_LIMIT: Duration = Duration::from_secs(10);

/// One subscriber thread's live counters, read by the main thread.
#[derive(Default)]
#[repr(align(64))]
struct Progress {
    /// Connections whose every subscription is confirmed.
    ready: AtomicU64,
    messages: AtomicU64,
    /// A connection failed before it was ready.
    failed: AtomicBool,
}

/// What one subscriber connection sends first, and the confirmations that
/// say it is subscribed.
#[derive(Debug, PartialEq, Eq)]
struct Setup {
    request: Vec<u8>,
    hello: bool,
    confirms: u64,
}

const HELLO3: &[u8] = b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n";

fn put_len(out: &mut Vec<u8>, prefix: u8, n: usize) {
    out.push(prefix);
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn put_command<'a>(out: &mut Vec<u8>, verb: &'a [u8], args: impl ExactSizeIterator<Item = &'a [u8]>) {
    put_len(out, b'*', args.len() + 1);
    for w in std::iter::once(verb).chain(args) {
        put_len(out, b'$', w.len());
        out.extend_from_slice(w);
        out.extend_from_slice(b"\r\n");
    }
}

/// A subscribe command, the names it takes, and which of them each
/// connection takes.
type Dealt<'a> = (&'static [u8], &'a [String], Vec<Vec<usize>>);

/// Each connection's requests: channels and shard channels dealt so that
/// every connection has one at least, patterns one connection each (dealt
/// like channels when there are only patterns).
fn plan(cfg: &Config) -> Vec<Setup> {
    let n = cfg.subscribers;
    let resp3 = cfg.subscribe_resp3 || cfg.protocol == Protocol::Resp3;
    let only_patterns = cfg.sub_channels.is_empty() && cfg.sub_shard_channels.is_empty();
    let lists: [Dealt<'_>; 3] = [
        (b"SUBSCRIBE", &cfg.sub_channels, pubsub::deal(cfg.sub_channels.len(), n, true)),
        (b"PSUBSCRIBE", &cfg.sub_patterns, pubsub::deal(cfg.sub_patterns.len(), n, only_patterns)),
        (b"SSUBSCRIBE", &cfg.sub_shard_channels, pubsub::deal(cfg.sub_shard_channels.len(), n, true)),
    ];
    (0..n)
        .map(|i| {
            let mut request = Vec::new();
            if resp3 {
                request.extend_from_slice(HELLO3);
            }
            let mut confirms = 0;
            for (verb, names, dealt) in &lists {
                let mine = &dealt[i];
                if !mine.is_empty() {
                    put_command(&mut request, verb, mine.iter().map(|&j| names[j].as_bytes()));
                    confirms += mine.len() as u64;
                }
            }
            Setup { request, hello: resp3, confirms }
        })
        .collect()
}

struct Sub {
    stream: TcpStream,
    wbuf: Vec<u8>,
    wpos: usize,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    /// The reply to HELLO 3 is still to come.
    hello: bool,
    /// Subscription confirmations still to come.
    confirms: u64,
    closed: bool,
}

impl Sub {
    fn ready(&self) -> bool {
        !self.hello && self.confirms == 0
    }
}

/// The subscriber threads, subscribed.
pub struct Subscribers {
    threads: Vec<JoinHandle<Result<SubStats, String>>>,
    progress: Vec<Arc<Progress>>,
    stop: Arc<AtomicBool>,
}

impl Subscribers {
    /// Connects every subscriber and returns once all are subscribed; an
    /// error reply, a closed connection, `interrupt` or [`SETUP_LIMIT`]
    /// ends the run instead.
    pub fn start(cfg: &Config, interrupt: &AtomicBool) -> Result<Subscribers, String> {
        let threads = cfg.subscriber_threads.clamp(1, cfg.subscribers.max(1));
        let mut per: Vec<Vec<Setup>> = (0..threads).map(|_| Vec::new()).collect();
        for (i, s) in plan(cfg).into_iter().enumerate() {
            per[i % threads].push(s);
        }
        let cfg = Arc::new(cfg.clone());
        let stop = Arc::new(AtomicBool::new(false));
        let mut subs = Subscribers {
            threads: Vec::with_capacity(threads),
            progress: Vec::with_capacity(threads),
            stop: stop.clone(),
        };
        for (t, setups) in per.into_iter().enumerate() {
            let p = Arc::new(Progress::default());
            let (cfg, stop, p2) = (cfg.clone(), stop.clone(), p.clone());
            let h = std::thread::Builder::new()
                .name(format!("tern-bench-sub-{t}"))
                .spawn(move || run_thread(&cfg, setups, &p2, &stop))
                .map_err(|e| e.to_string())?;
            subs.threads.push(h);
            subs.progress.push(p);
        }
        let want = cfg.subscribers as u64;
        let deadline = Instant::now() + SETUP_LIMIT;
        loop {
            let ready: u64 = subs.progress.iter().map(|p| p.ready.load(Ordering::Relaxed)).sum();
            if ready == want {
                return Ok(subs);
            }
            let failed = subs.progress.iter().any(|p| p.failed.load(Ordering::Relaxed))
                || subs.threads.iter().any(JoinHandle::is_finished);
            if failed || interrupt.load(Ordering::Relaxed) || Instant::now() >= deadline {
                let why = format!("subscribing: {ready} of {want} subscribers ready");
                return Err(match subs.stop_and_join() {
                    Err(e) => format!("{why}: {e}"),
                    Ok(s) => s.first_error.map_or(why.clone(), |e| format!("{why}: {e}")),
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Messages received so far.
    pub fn messages(&self) -> u64 {
        self.progress.iter().map(|p| p.messages.load(Ordering::Relaxed)).sum()
    }

    /// After the load: waits until `expected` messages (the publishers'
    /// count of receivers; 0 if unknown) have arrived, or none came for
    /// [`QUIET`], then stops the subscribers and returns what they counted.
    pub fn finish(self, expected: u64, interrupt: &AtomicBool) -> Result<SubStats, String> {
        let begin = Instant::now();
        let mut seen = (self.messages(), begin);
        loop {
            let (m, now) = (self.messages(), Instant::now());
            if m != seen.0 {
                seen = (m, now);
            }
            if (expected > 0 && m >= expected)
                || now - seen.1 >= QUIET
                || now - begin >= DRAIN_LIMIT
                || interrupt.load(Ordering::Relaxed)
                || self.threads.iter().all(JoinHandle::is_finished)
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.stop_and_join()
    }

    fn stop_and_join(self) -> Result<SubStats, String> {
        self.stop.store(true, Ordering::Relaxed);
        let mut total = SubStats::default();
        for h in self.threads {
            let s = h.join().map_err(|_| "a subscriber thread panicked".to_string())??;
            total.merge(&s);
        }
        Ok(total)
    }
}

fn connect(cfg: &Config) -> Result<TcpStream, String> {
    let s = std::net::TcpStream::connect((cfg.server.as_str(), cfg.port))
        .and_then(|s| s.set_nodelay(true).and(s.set_nonblocking(true)).map(|_| s))
        .map_err(|e| format!("subscriber: connect {}:{}: {e}", cfg.server, cfg.port))?;
    Ok(TcpStream::from_std(s))
}

/// One subscriber thread: its connections on one mio loop until `stop`.
fn run_thread(cfg: &Config, setups: Vec<Setup>, progress: &Progress, stop: &AtomicBool) -> Result<SubStats, String> {
    let mut poll = Poll::new().map_err(|e| e.to_string())?;
    let mut stats = SubStats::default();
    let mut subs = Vec::with_capacity(setups.len());
    for (i, s) in setups.into_iter().enumerate() {
        let mut stream = match connect(cfg) {
            Ok(s) => s,
            Err(e) => {
                progress.failed.store(true, Ordering::Relaxed);
                return Err(e);
            }
        };
        poll.registry()
            .register(&mut stream, Token(i), Interest::READABLE | Interest::WRITABLE)
            .map_err(|e| e.to_string())?;
        subs.push(Sub {
            stream,
            wbuf: s.request,
            wpos: 0,
            // Smaller than a load connection's: there may be thousands, and
            // the buffer doubles when a read fills it.
            rbuf: vec![0; 16 * 1024],
            rstart: 0,
            rend: 0,
            hello: s.hello,
            confirms: s.confirms,
            closed: false,
        });
    }
    let mut open = subs.len();
    for s in subs.iter_mut() {
        if s.ready() {
            progress.ready.fetch_add(1, Ordering::Relaxed);
        }
        flush(s, &mut stats);
    }
    let mut events = Events::with_capacity(1024);
    while open > 0 && !stop.load(Ordering::Relaxed) {
        if let Err(e) = poll.poll(&mut events, Some(Duration::from_millis(20))) {
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e.to_string());
        }
        for ev in events.iter() {
            let Some(s) = subs.get_mut(ev.token().0) else {
                continue;
            };
            if s.closed {
                continue;
            }
            if ev.is_writable() {
                flush(s, &mut stats);
            }
            if !s.closed && (ev.is_readable() || ev.is_read_closed() || ev.is_error()) {
                read(s, &mut stats, progress);
            }
            if s.closed {
                open -= 1;
                let _ = poll.registry().deregister(&mut s.stream);
                if !s.ready() {
                    progress.failed.store(true, Ordering::Relaxed);
                }
            }
        }
    }
    Ok(stats)
}

fn fail(s: &mut Sub, stats: &mut SubStats, why: String) {
    s.closed = true;
    stats.connection_errors += 1;
    stats.first_error.get_or_insert(why);
}

fn flush(s: &mut Sub, stats: &mut SubStats) {
    while s.wpos < s.wbuf.len() {
        match s.stream.write(&s.wbuf[s.wpos..]) {
            Ok(0) => return fail(s, stats, "subscriber: write returned 0".into()),
            Ok(n) => s.wpos += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return fail(s, stats, format!("subscriber: write: {e}")),
        }
    }
    s.wbuf = Vec::new();
    s.wpos = 0;
}

fn read(s: &mut Sub, stats: &mut SubStats, progress: &Progress) {
    loop {
        if s.rend == s.rbuf.len() {
            if s.rstart > 0 {
                s.rbuf.copy_within(s.rstart..s.rend, 0);
                s.rend -= s.rstart;
                s.rstart = 0;
            } else {
                let n = s.rbuf.len() * 2;
                s.rbuf.resize(n, 0);
            }
        }
        match s.stream.read(&mut s.rbuf[s.rend..]) {
            Ok(0) => return fail(s, stats, "subscriber: server closed the connection".into()),
            Ok(n) => {
                let short = s.rend + n < s.rbuf.len();
                s.rend += n;
                stats.bytes_in += n as u64;
                let before = stats.messages();
                let was_ready = s.ready();
                if let Err(e) = consume(s, stats, pubsub::epoch_us()) {
                    return fail(s, stats, e);
                }
                let got = stats.messages() - before;
                if got > 0 {
                    stats.last = Some(Instant::now());
                    progress.messages.fetch_add(got, Ordering::Relaxed);
                }
                if s.ready() && !was_ready {
                    progress.ready.fetch_add(1, Ordering::Relaxed);
                }
                // As in client.rs: a short read emptied the socket.
                if short {
                    return;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return fail(s, stats, format!("subscriber: read: {e}")),
        }
    }
}

/// Counts every complete reply in the read buffer; `now_us` is when the
/// bytes were read.
fn consume(s: &mut Sub, stats: &mut SubStats, now_us: u64) -> Result<(), String> {
    while s.rstart < s.rend {
        let buf = &s.rbuf[s.rstart..s.rend];
        let Some((ev, n)) = pubsub::parse(buf).map_err(|e| format!("subscriber: bad reply: {e}"))? else {
            break;
        };
        match ev {
            Event::Message { kind, payload, .. } => {
                let latency = pubsub::sent_at_us(payload).map(|t| now_us.saturating_sub(t));
                stats.record(kind, latency);
            }
            Event::Subscribed { .. } => s.confirms = s.confirms.saturating_sub(1),
            Event::Other { kind: Kind::Error, text } => {
                return Err(format!("subscriber: {}", String::from_utf8_lossy(text)));
            }
            Event::Other { .. } if s.hello => s.hello = false,
            Event::Other { kind, .. } => return Err(format!("subscriber: unexpected {kind:?} reply")),
        }
        s.rstart += n;
    }
    if s.rstart == s.rend {
        s.rstart = 0;
        s.rend = 0;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(args: &str) -> Config {
        let mut c = Config::default();
        c.apply(&crate::opts::shell_split(args).unwrap()).unwrap();
        c
    }

    fn text(s: &Setup) -> String {
        String::from_utf8(s.request.clone()).unwrap().replace("\r\n", " ")
    }

    #[test]
    fn fan_out_gives_every_subscriber_the_channel() {
        let p = plan(&cfg("--subscribers 3 --subscribe-channels news"));
        assert_eq!(p.len(), 3);
        for s in &p {
            assert_eq!((text(s).as_str(), s.confirms, s.hello), ("*2 $9 SUBSCRIBE $4 news ", 1, false));
        }
    }

    #[test]
    fn channels_dealt_patterns_once_each_resp3_says_hello() {
        let p = plan(&cfg("--subscribers 2 --subscribe-channels c{0..2} --subscribe-patterns p* \
                           --subscribe-shard-channels s --subscribe-resp3"));
        assert_eq!(
            text(&p[0]),
            "*2 $5 HELLO $1 3 *3 $9 SUBSCRIBE $2 c0 $2 c2 *2 $10 PSUBSCRIBE $2 p* *2 $10 SSUBSCRIBE $1 s "
        );
        assert_eq!((p[0].confirms, p[0].hello), (4, true));
        assert_eq!(text(&p[1]), "*2 $5 HELLO $1 3 *2 $9 SUBSCRIBE $2 c1 *2 $10 SSUBSCRIBE $1 s ");
        assert_eq!(p[1].confirms, 2);
        // Only patterns: every subscriber gets one.
        let p = plan(&cfg("--subscribers 3 --subscribe-patterns a*,b* -P resp3"));
        assert_eq!(p.iter().map(|s| s.confirms).collect::<Vec<_>>(), [1, 1, 1]);
        assert!(p[2].hello && text(&p[2]).ends_with("PSUBSCRIBE $2 a* "));
    }
}
