//! Deployment against the real binary, as redis-server deploys:
//! `daemonize yes` (the launcher exits at once, the server goes on
//! detached), `pidfile` (written at start, removed at shutdown), and
//! `supervised` systemd (sd_notify datagrams to `$NOTIFY_SOCKET`) and
//! upstart (SIGSTOP once ready).
//!
//! A daemon is not our child: [`Daemon`] kills it by PID when dropped, so a
//! failing test leaves nothing running.
mod common;
use common::*;

use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Sends `sig` (`TERM`, `CONT`, `KILL`) to `pid`.
fn kill(sig: &str, pid: u32) {
    let _ = Command::new("kill").args([&format!("-{sig}"), &pid.to_string()]).stderr(Stdio::null()).status();
}

/// `/proc/<pid>/stat`'s fields after the command name: state, ppid,
/// process group, session, ...; None once the process is gone.
fn stat(pid: u32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(text.rsplit_once(") ")?.1.split(' ').map(String::from).collect())
}

/// Gone, or a zombie no one has reaped yet (a daemon's parent is init,
/// which in a container may never reap it).
fn exited(pid: u32) -> bool {
    stat(pid).map_or(true, |s| s[0] == "Z")
}

/// Polls `cond` until it holds or `within` passes.
fn within(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The processes whose command line has `arg`: a daemon whose pid the
/// test could not learn, found by the unique temporary path it was given.
fn pids_with_arg(arg: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == arg.as_bytes())))
        .collect()
}

/// A daemonized server, started in a directory of its own with its
/// pidfile and log file there; killed by PID when dropped.
struct Daemon {
    dir: std::path::PathBuf,
    pidfile: String,
    logfile: String,
    pid: u32,
    port: u16,
}

impl Daemon {
    /// Launches it; returns it with how long the launcher took and its
    /// exit status.
    fn launch(extra: &[&str]) -> (Daemon, Duration, std::process::Output) {
        let dir = data_dir();
        let pidfile = dir.join("tern.pid").display().to_string();
        let logfile = dir.join("tern.log").display().to_string();
        let mut d = Daemon { dir: dir.clone(), pidfile, logfile, pid: 0, port: 0 };
        let start = Instant::now();
        // stdout and stderr are pipes: output() returns once no process
        // holds them, so a daemon that kept them would hold the test here.
        let out = Command::new(env!("CARGO_BIN_EXE_tern-server"))
            .args(["--daemonize", "yes", "--pidfile", &d.pidfile, "--logfile", &d.logfile, "--port", "0", "--bind", "127.0.0.1"])
            .args(["--threads", "1", "--save", "", "--dir", &dir.display().to_string()])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .expect("run tern-server");
        let took = start.elapsed();
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let have_pid = within(Duration::from_secs(20), || read(&d.pidfile).ends_with('\n'));
        d.pid = read(&d.pidfile).trim().parse().unwrap_or(0);
        assert!(have_pid && d.pid != 0, "no pid in {}; log:\n{}", d.pidfile, read(&d.logfile));
        let port = || read(&d.logfile).split("port=").nth(1)?.split('.').next()?.parse::<u16>().ok();
        assert!(within(Duration::from_secs(20), || port().is_some()), "no port in the log:\n{}", read(&d.logfile));
        d.port = port().unwrap_or(0);
        (d, took, out)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.logfile).unwrap_or_default()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let mut pids = pids_with_arg(&self.pidfile);
        pids.push(self.pid);
        for pid in pids.into_iter().filter(|&p| p != 0 && !exited(p)) {
            kill("KILL", pid);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn daemonize_detaches_and_shutdown_removes_the_pidfile() {
    let (d, took, out) = Daemon::launch(&[]);
    assert_eq!(out.status.code(), Some(0), "launcher: {out:?}");
    assert!(took < Duration::from_secs(10), "the launcher took {took:?}");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "launcher printed: {out:?}");
    // Not our child: a session of its own, which it leads.
    let st = stat(d.pid).expect("the daemon runs");
    assert_ne!(st[1], std::process::id().to_string(), "{st:?}");
    assert_eq!(st[3], d.pid.to_string(), "session: {st:?}");
    // The pidfile names the process that serves the port and logs.
    let mut r = Raw::connect(d.port);
    r.roundtrip(&[b"PING"], b"+PONG\r\n");
    let mut c = redis::Client::open(format!("redis://127.0.0.1:{}/", d.port)).unwrap().get_connection().unwrap();
    let info: String = redis::cmd("INFO").arg("server").query(&mut c).unwrap();
    assert!(info.contains(&format!("process_id:{}\r\n", d.pid)) && info.contains("process_supervised:no\r\n"), "{info}");
    assert!(d.log().starts_with(&format!("{}:M ", d.pid)), "{}", d.log());
    // jemalloc's purging thread, stopped in the child by the fork, runs
    // again (`jemalloc-bg-thread yes`).
    let threads: Vec<String> = std::fs::read_dir(format!("/proc/{}/task", d.pid))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .collect();
    assert!(threads.iter().any(|t| t.trim() == "jemalloc_bg_thd"), "{threads:?}");
    r.roundtrip(&[b"SHUTDOWN", b"NOSAVE"], b"");
    assert!(within(Duration::from_secs(20), || exited(d.pid)), "still running after SHUTDOWN");
    assert!(!std::path::Path::new(&d.pidfile).exists(), "pidfile left behind");
    let log = d.log();
    assert!(log.contains("Removing the pid file.") && log.contains("ready to exit"), "{log}");
}

#[test]
fn sigterm_stops_a_daemon_and_removes_its_pidfile() {
    let (d, _, out) = Daemon::launch(&["--loglevel", "verbose"]);
    assert_eq!(out.status.code(), Some(0), "launcher: {out:?}");
    Raw::connect(d.port).roundtrip(&[b"PING"], b"+PONG\r\n");
    kill("TERM", d.pid);
    assert!(within(Duration::from_secs(20), || exited(d.pid)), "still running after SIGTERM");
    assert!(!std::path::Path::new(&d.pidfile).exists(), "pidfile left behind");
    assert!(d.log().contains("Received SIGTERM"), "{}", d.log());
}

/// What can go wrong is said before the fork, on the terminal, with exit 1.
#[test]
fn a_daemon_that_cannot_log_does_not_start() {
    let dir = data_dir();
    let pidfile = dir.join("tern.pid").display().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_tern-server"))
        .args(["--daemonize", "yes", "--port", "0", "--bind", "127.0.0.1", "--pidfile", &pidfile, "--logfile", "/no/such/dir/tern.log"])
        .output()
        .expect("run tern-server");
    for pid in pids_with_arg(&pidfile) {
        kill("KILL", pid);
    }
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("Can't open the log file"), "{out:?}");
    assert!(!std::path::Path::new(&pidfile).exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Datagrams received on `sock` until one contains `want` (10 s at most).
fn notified(sock: &UnixDatagram, want: &str) -> Vec<String> {
    sock.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline && !got.iter().any(|m: &String| m.contains(want)) {
        if let Ok(n) = sock.recv(&mut buf) {
            got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    }
    got
}

#[test]
fn supervised_systemd_is_told_ready_and_stopping() {
    let dir = data_dir();
    let sock_path = dir.join("notify");
    let sock = UnixDatagram::bind(&sock_path).unwrap();
    let pidfile = dir.join("tern.pid").display().to_string();
    // Supervised, `daemonize yes` is ignored: the process started is the server.
    let args: Vec<String> = ["--port", "0", "--bind", "127.0.0.1", "--threads", "1", "--save", "", "--supervised", "systemd", "--daemonize", "yes", "--pidfile", &pidfile]
        .iter()
        .map(|s| s.to_string())
        .chain(["--dir".to_string(), dir.display().to_string()])
        .collect();
    let mut s = TestServer::try_start_env(&args, &[("NOTIFY_SOCKET", Some(&sock_path.display().to_string()))]).expect("start");
    let got = notified(&sock, "READY=1");
    assert!(got.iter().any(|m| m.lines().any(|l| l == "READY=1")), "{got:?}");
    assert!(got.iter().any(|m| m.contains("STATUS=Ready to accept connections")), "{got:?}");
    // Ready means serving.
    s.raw().roundtrip(&[b"PING"], b"+PONG\r\n");
    assert_eq!(std::fs::read_to_string(&pidfile).unwrap(), format!("{}\n", s.child.id()));
    let info: String = redis::cmd("INFO").arg("server").query(&mut s.conn()).unwrap();
    assert!(info.contains("process_supervised:systemd\r\n"), "{info}");
    s.raw().roundtrip(&[b"SHUTDOWN", b"NOSAVE"], b"");
    let got = notified(&sock, "STOPPING=1");
    assert!(got.iter().any(|m| m.lines().any(|l| l == "STOPPING=1")), "{got:?}");
    assert_eq!(s.wait_exit(Duration::from_secs(20)), Some(0));
    assert!(!std::path::Path::new(&pidfile).exists(), "pidfile left behind");
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without the environment its manager sets up, `supervised` warns and the
/// server runs unsupervised; so does one whose pidfile cannot be written.
#[test]
fn supervision_without_its_manager_warns_and_runs() {
    for (mode, var, warning) in [
        ("systemd", "NOTIFY_SOCKET", "NOTIFY_SOCKET not found"),
        ("upstart", "UPSTART_JOB", "UPSTART_JOB not found"),
        ("auto", "NOTIFY_SOCKET", "Failed to write PID file"),
    ] {
        let args: Vec<String> = ["--port", "0", "--bind", "127.0.0.1", "--threads", "1", "--save", "", "--supervised", mode, "--pidfile", "/no/such/dir/tern.pid"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let env = [("NOTIFY_SOCKET", None), ("UPSTART_JOB", None), (var, None)];
        let mut s = TestServer::try_start_env(&args, &env).expect("start");
        assert!(s.startup.contains(warning), "{mode}: {}", s.startup);
        s.raw().roundtrip(&[b"PING"], b"+PONG\r\n");
        let info: String = redis::cmd("INFO").arg("server").query(&mut s.conn()).unwrap();
        assert!(info.contains("process_supervised:no\r\n"), "{mode}: {info}");
        s.raw().roundtrip(&[b"SHUTDOWN", b"NOSAVE"], b"");
        assert_eq!(s.wait_exit(Duration::from_secs(20)), Some(0), "{mode}");
    }
}

#[test]
fn supervised_upstart_stops_itself_once_ready() {
    let args: Vec<String> = ["--port", "0", "--bind", "127.0.0.1", "--threads", "1", "--save", "", "--supervised", "auto"].iter().map(|s| s.to_string()).collect();
    let mut s = TestServer::try_start_env(&args, &[("UPSTART_JOB", Some("tern")), ("NOTIFY_SOCKET", None)]).expect("start");
    let pid = s.child.id();
    assert!(within(Duration::from_secs(20), || stat(pid).is_some_and(|st| st[0] == "T")), "never stopped: {:?}", stat(pid));
    // upstart resumes it.
    kill("CONT", pid);
    s.raw().roundtrip(&[b"PING"], b"+PONG\r\n");
    let info: String = redis::cmd("INFO").arg("server").query(&mut s.conn()).unwrap();
    assert!(info.contains("process_supervised:upstart\r\n"), "{info}");
    s.raw().roundtrip(&[b"SHUTDOWN", b"NOSAVE"], b"");
    assert_eq!(s.wait_exit(Duration::from_secs(20)), Some(0));
}
