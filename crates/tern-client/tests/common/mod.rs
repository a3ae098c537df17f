//! Servers for the black-box tests: the real tern-server (ports read from
//! its start-up log), redis-server and memcached (on a free loopback port,
//! ready once they accept a connection), each killed by PID when dropped.
//! redis-server and memcached are optional: `None` when not installed, and
//! the test says it skipped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Once};
use std::time::{Duration, Instant};

const STARTUP: Duration = Duration::from_secs(20);

pub struct Proc {
    pub child: Child,
    pub port: u16,
    /// tern-server's memcache port.
    pub mc_port: u16,
}

impl Proc {
    pub fn addr(&self) -> (String, u16) {
        ("127.0.0.1".to_string(), self.port)
    }

    pub fn mc_addr(&self) -> (String, u16) {
        ("127.0.0.1".to_string(), self.mc_port)
    }

    /// Kills the process (by its PID) and waits for it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `TERN_BIN`, else the workspace's debug tern-server, built once if missing.
fn tern_bin() -> PathBuf {
    if let Some(b) = std::env::var_os("TERN_BIN") {
        return b.into();
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace_root().join("target"), PathBuf::from);
    let bin = target.join("debug").join("tern-server");
    static BUILD: Once = Once::new();
    BUILD.call_once(|| {
        if !bin.exists() {
            let st = Command::new(env!("CARGO"))
                .args(["build", "-p", "tern-server", "--bin", "tern-server"])
                .current_dir(workspace_root())
                .status()
                .expect("run cargo build");
            assert!(st.success(), "cargo build -p tern-server failed");
        }
    });
    bin
}

pub fn tern() -> Proc {
    let mut child = Command::new(tern_bin())
        // No save schedule: a stopped server must not leave dump.rdb in
        // the crate's directory (the tests' working directory).
        .args(["--port", "0", "--memcache-port", "11211", "--threads", "2", "--save", ""])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn tern-server");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + STARTUP;
    let (mut port, mut mc_port) = (0, 0);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = rx.recv_timeout(left) else {
            let _ = child.kill();
            panic!("tern-server did not start");
        };
        let num = |l: &str, tag: &str| l.split(tag).nth(1).and_then(|p| p.trim_end_matches('.').parse::<u16>().ok());
        if let Some(p) = num(&line, "memcache port=") {
            mc_port = p;
        } else if let Some(p) = num(&line, "port=") {
            port = p;
        }
        if line.contains("Ready to accept connections") {
            break;
        }
    }
    assert!(port != 0 && mc_port != 0, "ports not in the start-up log");
    Proc { child, port, mc_port }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .chain(["/usr/bin", "/usr/sbin"])
        .map(|d| PathBuf::from(d).join(name))
        .find(|p| p.is_file())
}

fn started(mut cmd: Command, port: u16) -> Proc {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn");
    let deadline = Instant::now() + STARTUP;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline || child.try_wait().ok().flatten().is_some() {
            let _ = child.kill();
            panic!("{cmd:?} did not start");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Proc { child, port, mc_port: 0 }
}

pub fn redis() -> Option<Proc> {
    let Some(bin) = which("redis-server") else {
        eprintln!("redis-server not installed: skipped");
        return None;
    };
    let port = free_port();
    let mut cmd = Command::new(bin);
    cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]);
    Some(started(cmd, port))
}

pub fn memcached() -> Option<Proc> {
    let Some(bin) = which("memcached") else {
        eprintln!("memcached not installed: skipped");
        return None;
    };
    let port = free_port();
    let mut cmd = Command::new(bin);
    cmd.args(["-l", "127.0.0.1", "-p", &port.to_string(), "-U", "0"]);
    // memcached refuses to run as root without -u.
    if std::env::var("USER").is_ok_and(|u| u == "root") || Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0")) {
        cmd.args(["-u", "root"]);
    }
    let mut p = started(cmd, port);
    p.mc_port = port;
    Some(p)
}

/// A scripted server: each accepted connection is handed to `serve`
/// with its number (0, 1, ...). Returns the address and the accept count.
pub fn fake(serve: impl Fn(usize, TcpStream) + Send + Sync + 'static) -> ((String, u16), Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    let serve = Arc::new(serve);
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { break };
            let n = count.fetch_add(1, Ordering::SeqCst);
            let serve = serve.clone();
            std::thread::spawn(move || serve(n, s));
        }
    });
    (("127.0.0.1".into(), port), accepted)
}

