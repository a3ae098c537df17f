//! Test harness: starts the real `tern-server` binary on an ephemeral port
//! (`--port 0`; the port is read from its start-up log, so no fixed ports and
//! no sleeps) and stops it by PID when dropped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub struct TestServer {
    pub child: Child,
    pub port: u16,
    /// Log lines printed after start-up.
    pub log: mpsc::Receiver<String>,
    /// The log up to the line that gave the port.
    pub startup: String,
    /// The directory [`data_dir`] made for it, removed with it.
    data: Option<std::path::PathBuf>,
}

impl TestServer {
    pub fn start(threads: usize) -> TestServer {
        Self::start_with(threads, &[])
    }

    /// Starts the server with extra `--directive value` arguments.
    pub fn start_with(threads: usize, extra: &[&str]) -> TestServer {
        // A non-zero memcache-port with port 0 is picked freely as well.
        // Each server saves in its own directory: with Redis's default
        // `save` schedule SHUTDOWN writes dump.rdb there, which no other
        // server may load at its start (a test's own --dir in `extra` wins).
        let mut args: Vec<String> = vec!["--port".into(), "0".into(), "--memcache-port".into(), "11211".into(), "--threads".into(), threads.to_string()];
        args.extend(["--dir".to_string(), data_dir().display().to_string()]);
        // Tests hold little data, under the size at which the prefetch
        // stages start, and the tuner might turn them off in a long test:
        // here they run at any size, always, so every test goes through
        // them (a test's own setting in `extra` wins).
        args.extend(["--prefetch-min-memory", "0", "--prefetch-tune", "no"].map(String::from));
        args.extend(extra.iter().map(|s| s.to_string()));
        Self::start_args(&args)
    }

    pub fn start_args(args: &[String]) -> TestServer {
        Self::try_start_args(args).unwrap_or_else(|log| panic!("tern-server did not report its port; log:\n{log}"))
    }

    /// [`TestServer::start_args`], giving back the log instead of
    /// panicking when the server exits (or says nothing) before it reports
    /// its port: a test that picked a port some other process took since
    /// tries another.
    pub fn try_start_args(args: &[String]) -> Result<TestServer, String> {
        Self::try_start_env(args, &[])
    }

    /// [`TestServer::try_start_args`] with variables set (`Some`) or
    /// removed (`None`) in the server's environment.
    pub fn try_start_env(args: &[String], env: &[(&str, Option<&str>)]) -> Result<TestServer, String> {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tern-server"));
        for (k, v) in env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let mut child = cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().expect("spawn tern-server");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut seen = String::new();
        let port = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = rx.recv_timeout(left) else {
                let _ = child.kill();
                let _ = child.wait();
                return Err(seen);
            };
            seen.push_str(&line);
            seen.push('\n');
            if let Some(p) = line.split("port=").nth(1) {
                break p.trim_end_matches('.').parse::<u16>().expect("port number");
            }
        };
        let data = args.windows(2).find(|w| w[0] == "--dir").map(|w| std::path::PathBuf::from(&w[1]));
        let data = data.filter(|d| d.file_name().is_some_and(|n| n.to_string_lossy().starts_with("tern-test-")));
        Ok(TestServer { child, port, log: rx, startup: seen, data })
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn client(&self) -> redis::Client {
        redis::Client::open(format!("redis://127.0.0.1:{}/", self.port)).expect("client")
    }

    pub fn conn(&self) -> redis::Connection {
        self.client().get_connection().expect("connect")
    }

    pub fn raw(&self) -> Raw {
        Raw::connect(self.port)
    }

    /// Waits for the process to exit and returns its exit code.
    pub fn wait_exit(&mut self, within: Duration) -> Option<i32> {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(Some(st)) = self.child.try_wait() {
                return st.code();
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::yield_now();
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(d) = &self.data {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// A raw socket for checking exact reply bytes.
pub struct Raw {
    pub s: TcpStream,
}

impl Raw {
    pub fn connect(port: u16) -> Raw {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.set_nodelay(true).unwrap();
        Raw { s }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.s.write_all(bytes).expect("write");
    }

    /// Sends what the server may close the connection in the middle of
    /// (a client it evicts): whether all of it was written.
    pub fn send_may_fail(&mut self, bytes: &[u8]) -> bool {
        self.s.write_all(bytes).is_ok()
    }

    /// Sends a command as a RESP multibulk.
    pub fn cmd(&mut self, parts: &[&[u8]]) {
        let mut b = format!("*{}\r\n", parts.len()).into_bytes();
        for p in parts {
            b.extend_from_slice(format!("${}\r\n", p.len()).as_bytes());
            b.extend_from_slice(p);
            b.extend_from_slice(b"\r\n");
        }
        self.send(&b);
    }

    /// Reads exactly `n` bytes.
    pub fn read_n(&mut self, n: usize) -> Vec<u8> {
        let mut buf = vec![0; n];
        self.s.read_exact(&mut buf).expect("read");
        buf
    }

    /// Reads until `expected.len()` bytes arrived and asserts they match.
    pub fn expect(&mut self, expected: &[u8]) {
        let got = self.read_n(expected.len());
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(expected));
    }

    /// Sends a command and checks the exact reply.
    pub fn roundtrip(&mut self, parts: &[&[u8]], expected: &[u8]) {
        self.cmd(parts);
        self.expect(expected);
    }

    /// True if the server closed the connection (read returns 0).
    pub fn is_closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.s.read(&mut b), Ok(0) | Err(_))
    }
}

/// Runs `f` once against a 1-thread server and once against a 2-thread one.
pub fn each_threads(f: impl Fn(&TestServer)) {
    for t in [1, 2] {
        let s = TestServer::start(t);
        f(&s);
    }
}

/// The memcached port of a server started with `--port 0`, read from the
/// `memcache port=N` line of its start-up log.
pub fn mc_port(s: &TestServer) -> u16 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = s.log.recv_timeout(left).expect("memcache port line");
        if let Some(p) = line.split("memcache port=").nth(1) {
            return p.trim_end_matches('.').parse().expect("port");
        }
    }
}

/// Replies the family tests compare against, byte for byte.
pub const WRONGTYPE: &[u8] = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
pub const NIL: &[u8] = b"$-1\r\n";
pub const OK: &[u8] = b"+OK\r\n";
pub const NIL_ARRAY: &[u8] = b"*-1\r\n";

/// Sends a space-separated command and checks the exact reply.
pub fn rt(r: &mut Raw, cmd: &str, expected: &[u8]) {
    let parts: Vec<&[u8]> = cmd.split(' ').map(str::as_bytes).collect();
    r.roundtrip(&parts, expected);
}

/// An array of bulk strings, as RESP2 writes it.
pub fn bulks(v: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", v.len()).into_bytes();
    for s in v {
        out.extend_from_slice(format!("${}\r\n{}\r\n", s.len(), s).as_bytes());
    }
    out
}

/// Polls `cond` until it holds, failing after 10 s.
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::yield_now();
    }
}

// ------------------------------------------------- blocking commands --

/// Sends a space-separated command without reading its reply (a
/// blocking command that may wait).
pub fn send(r: &mut Raw, cmd: &str) {
    let parts: Vec<&[u8]> = cmd.split(' ').map(str::as_bytes).collect();
    r.cmd(&parts);
}

/// INFO's `blocked_clients`.
pub fn blocked(c: &mut redis::Connection) -> i64 {
    let info: String = redis::cmd("INFO").arg("clients").query(c).unwrap();
    info.lines().find_map(|l| l.strip_prefix("blocked_clients:")).unwrap().trim().parse().unwrap()
}

/// The worker (CLIENT INFO `io-thread`) and id of a raw connection.
pub fn whoami(r: &mut Raw) -> (usize, i64) {
    r.cmd(&[b"CLIENT", b"INFO"]);
    let mut line = Vec::new();
    while !line.ends_with(b"\r\n") {
        line.extend_from_slice(&r.read_n(1));
    }
    let n: usize = std::str::from_utf8(&line[1..line.len() - 2]).unwrap().parse().unwrap();
    let text = String::from_utf8(r.read_n(n + 2)).unwrap();
    let field = |k: &str| text.split(' ').find_map(|kv| kv.strip_prefix(k)).unwrap().trim().to_string();
    (field("io-thread=").parse().unwrap(), field("id=").parse().unwrap())
}

/// A raw connection owned by worker `worker` (among several tried).
pub fn raw_on(s: &TestServer, worker: usize) -> Raw {
    for _ in 0..500 {
        let mut r = s.raw();
        if whoami(&mut r).0 == worker {
            return r;
        }
    }
    panic!("no connection landed on worker {worker}");
}

/// A fresh directory for one server's snapshot, under the system's
/// temporary directory.
pub fn data_dir() -> std::path::PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("tern-test-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).expect("a temporary directory");
    d
}

/// A file in the temp dir, removed on drop.
pub struct TempFile(pub std::path::PathBuf);

impl TempFile {
    pub fn new(tag: &str, text: &str) -> TempFile {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!("tern-test-{}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed), tag));
        std::fs::write(&p, text).unwrap();
        TempFile(p)
    }
    pub fn path(&self) -> String {
        self.0.display().to_string()
    }
    pub fn read(&self) -> String {
        std::fs::read_to_string(&self.0).unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
