//! How the process meets what starts it, as redis-server does: `daemonize`
//! (fork into the background, [`crate::sys::detach`]), `pidfile`, and
//! `supervised` (telling systemd or upstart when the server is ready).
//!
//! ```text
//!  run: log ─► Supervisor::detect ─► detach (daemonize yes, not supervised) ─► PidFile::create
//!     ─► listeners, data loaded, workers ─► Supervisor::ready ─ … ─► shutdown: Supervisor::stopping
//!     ─► final save ─► PidFile dropped (removed)
//! ```
//!
//! systemd's protocol is sd_notify(3)'s: datagrams of `NAME=value` lines to
//! the unix socket `$NOTIFY_SOCKET` names (a path, or `@name` in the
//! abstract namespace), for a unit of `Type=notify`. upstart's, for a job
//! with `expect stop`, is the process stopping itself with SIGSTOP; upstart
//! then resumes it. Tern stops once it is ready, where Redis stops as soon as
//! it has read its configuration (before loading its data): the job is then
//! marked started only when clients can be served, as systemd's is.
//!
//! Supervised by either, `daemonize yes` is ignored, as in Redis: the manager
//! watches the process it started.

use std::ffi::OsString;
use std::io;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::path::{Path, PathBuf};

use tern_config::{log_notice, log_verbose, log_warning};

/// Where Redis writes its pid when daemonized with no `pidfile` set.
pub const DEFAULT_PIDFILE: &str = "/var/run/redis.pid";

/// A systemd notification socket: where `$NOTIFY_SOCKET` points.
pub struct Notify {
    sock: UnixDatagram,
    addr: SocketAddr,
}

impl Notify {
    /// The socket `$NOTIFY_SOCKET` names: an absolute path, or `@name`
    /// for `name` in Linux's abstract namespace.
    pub fn new(name: &OsString) -> io::Result<Notify> {
        use std::os::unix::ffi::OsStrExt;
        let bytes = name.as_bytes();
        let addr = match bytes.first() {
            Some(b'@') => {
                use std::os::linux::net::SocketAddrExt;
                SocketAddr::from_abstract_name(&bytes[1..])?
            }
            Some(b'/') => SocketAddr::from_pathname(Path::new(name))?,
            _ => return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("unsupported socket address {:?}", name))),
        };
        Ok(Notify { sock: UnixDatagram::unbound()?, addr })
    }

    /// Sends one datagram of `NAME=value` lines.
    pub fn send(&self, msg: &str) -> io::Result<()> {
        self.sock.send_to_addr(msg.as_bytes(), &self.addr).map(drop)
    }
}

/// The service manager the server reports its readiness to.
pub enum Supervisor {
    None,
    Systemd(Notify),
    Upstart,
}

impl Supervisor {
    /// The manager `supervised` names (`auto`: `$UPSTART_JOB` means
    /// upstart, else `$NOTIFY_SOCKET` means systemd), when the
    /// environment it sets up is there; otherwise a warning, and none.
    /// Call it before any thread starts: it may change the environment.
    pub fn detect(mode: &str) -> Supervisor {
        let mode = match mode {
            "auto" if std::env::var_os("UPSTART_JOB").is_some() => {
                log_verbose!("Upstart supervision detected.");
                "upstart"
            }
            "auto" if std::env::var_os("NOTIFY_SOCKET").is_some() => {
                log_verbose!("Systemd supervision detected.");
                "systemd"
            }
            m => m,
        };
        match mode {
            "systemd" => {
                let Some(name) = std::env::var_os("NOTIFY_SOCKET") else {
                    log_warning!("systemd supervision error: NOTIFY_SOCKET not found!");
                    return Supervisor::None;
                };
                match Notify::new(&name).and_then(|n| n.send("STATUS=Tern is loading...\n").map(|_| n)) {
                    Ok(n) => {
                        log_notice!("Supervised by systemd: it is told when the server is ready and when it stops; give the unit a TimeoutStartSec long enough to load the data, and a TimeoutStopSec long enough for the final save.");
                        Supervisor::Systemd(n)
                    }
                    Err(e) => {
                        log_warning!("systemd supervision error: can't notify {:?}: {}", name, e);
                        Supervisor::None
                    }
                }
            }
            "upstart" => {
                if std::env::var_os("UPSTART_JOB").is_none() {
                    log_warning!("upstart supervision requested, but UPSTART_JOB not found!");
                    return Supervisor::None;
                }
                // Not passed on to what the server might start, as Redis
                // does; changed while the process has a single thread.
                std::env::remove_var("UPSTART_JOB");
                log_notice!("Supervised by upstart: the server stops itself (SIGSTOP) once it is ready.");
                Supervisor::Upstart
            }
            _ => Supervisor::None,
        }
    }

    /// What INFO's `process_supervised` shows.
    pub fn name(&self) -> &'static str {
        match self {
            Supervisor::None => "no",
            Supervisor::Systemd(_) => "systemd",
            Supervisor::Upstart => "upstart",
        }
    }

    pub fn is_some(&self) -> bool {
        !matches!(self, Supervisor::None)
    }

    /// The server listens and its data is loaded.
    pub fn ready(&self) {
        match self {
            Supervisor::None => {}
            Supervisor::Systemd(n) => notify(n, "STATUS=Ready to accept connections\nREADY=1\n"),
            Supervisor::Upstart => {
                if let Err(e) = signal_hook::low_level::raise(signal_hook::consts::SIGSTOP) {
                    log_warning!("upstart supervision error: can't stop: {}", e);
                }
            }
        }
    }

    /// Shutdown has begun.
    pub fn stopping(&self) {
        if let Supervisor::Systemd(n) = self {
            notify(n, "STOPPING=1\n");
        }
    }
}

fn notify(n: &Notify, msg: &str) {
    if let Err(e) = n.send(msg) {
        log_warning!("systemd supervision error: sd_notify: {}", e);
    }
}

/// The pid file, removed when dropped (at the end of a clean shutdown, or
/// of a start-up that failed after writing it).
pub struct PidFile(PathBuf);

impl PidFile {
    /// Writes the process's pid to `path`. As in Redis a file that cannot
    /// be written is only a warning: the server runs without it.
    pub fn create(path: &str) -> Option<PidFile> {
        match std::fs::write(path, format!("{}\n", std::process::id())) {
            Ok(()) => Some(PidFile(PathBuf::from(path))),
            Err(e) => {
                log_warning!("Failed to write PID file {}: {}", path, e);
                None
            }
        }
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        log_notice!("Removing the pid file.");
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `$NOTIFY_SOCKET`'s two forms reach a socket bound at that address;
    /// anything else is refused.
    #[test]
    fn notify_reaches_paths_and_abstract_names() {
        let path = std::env::temp_dir().join(format!("tern-notify-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let at_path = UnixDatagram::bind(&path).unwrap();
        Notify::new(&path.clone().into_os_string()).unwrap().send("READY=1\n").unwrap();
        let mut buf = [0u8; 64];
        let n = at_path.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1\n");
        std::fs::remove_file(&path).unwrap();

        use std::os::linux::net::SocketAddrExt;
        let name = format!("tern-notify-{}", std::process::id());
        let abstract_ = UnixDatagram::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
        Notify::new(&OsString::from(format!("@{name}"))).unwrap().send("STOPPING=1\n").unwrap();
        let n = abstract_.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"STOPPING=1\n");

        assert!(Notify::new(&OsString::from("relative/path")).is_err());
        assert!(Notify::new(&OsString::new()).is_err());
    }
}
