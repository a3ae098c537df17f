//! Logging with Redis's levels and line format, to stdout or `logfile`,
//! and with `syslog-enabled yes` to the local syslog daemon as well.
//!
//! `PID:M DD Mon YYYY HH:MM:SS.mmm * message`, where the mark is `.` debug,
//! `-` verbose, `*` notice and `#` warning.

use std::io::Write;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::LogLevel;

struct Logger {
    level: AtomicU8,
    out: Mutex<Box<dyn Write + Send>>,
    syslog: Option<Syslog>,
}

/// Where glibc's syslog(3) sends its messages.
pub const SYSLOG_SOCKET: &str = "/dev/log";

/// The syslog daemon's side of `syslog-enabled yes`: each line goes, as
/// well as to stdout or `logfile`, to its datagram socket as syslog(3)
/// sends it (RFC 3164's `<PRI>ident[pid]: message`, as Redis's `openlog`
/// with `LOG_PID` asks), without a timestamp, which the daemon stamps at
/// receipt. A line the daemon does not take (none runs, its queue is
/// full) is lost, as syslog(3) loses it: the log file still has it.
pub struct Syslog {
    sock: UnixDatagram,
    path: PathBuf,
    ident: String,
    facility: u8,
}

impl Syslog {
    /// A sender to the daemon listening at `path` ([`SYSLOG_SOCKET`]),
    /// for `syslog-facility`'s name (`user`, `local0`..`local7`).
    pub fn new(path: &Path, ident: &str, facility: &str) -> std::io::Result<Syslog> {
        let facility = match facility {
            "user" => 1,
            f => f.strip_prefix("local").and_then(|n| n.parse::<u8>().ok()).filter(|n| *n < 8).map(|n| 16 + n).ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("unknown syslog facility '{f}'"))
            })?,
        };
        // Unbound and unconnected: each line is addressed by path, so a
        // daemon restarted since start-up still gets the next one.
        Ok(Syslog { sock: UnixDatagram::unbound()?, path: path.to_path_buf(), ident: ident.to_string(), facility })
    }

    /// syslog(3)'s severity for each level, as Redis maps them.
    fn severity(level: LogLevel) -> u8 {
        match level {
            LogLevel::Debug => 7,
            LogLevel::Verbose => 6,
            LogLevel::Notice => 5,
            _ => 4,
        }
    }

    /// The datagram for one message.
    fn line(&self, level: LogLevel, msg: std::fmt::Arguments<'_>) -> String {
        format!("<{}>{}[{}]: {}", self.facility * 8 + Self::severity(level), self.ident, std::process::id(), msg)
    }

    pub fn send(&self, level: LogLevel, msg: std::fmt::Arguments<'_>) {
        let _ = self.sock.send_to(self.line(level, msg).as_bytes(), &self.path);
    }
}

static LOGGER: OnceLock<Logger> = OnceLock::new();

fn level_num(l: LogLevel) -> u8 {
    l as u8
}

/// Sets up logging. An empty `logfile` means stdout; `syslog`, when given,
/// gets every line too. Later calls only change the level.
pub fn init(level: LogLevel, logfile: &str, syslog: Option<Syslog>) -> std::io::Result<()> {
    if let Some(l) = LOGGER.get() {
        l.level.store(level_num(level), Ordering::Relaxed);
        return Ok(());
    }
    let out: Box<dyn Write + Send> = if logfile.is_empty() {
        Box::new(std::io::stdout())
    } else {
        Box::new(std::fs::OpenOptions::new().create(true).append(true).open(logfile)?)
    };
    let _ = LOGGER.set(Logger { level: AtomicU8::new(level_num(level)), out: Mutex::new(out), syslog });
    Ok(())
}

/// Changes the level at runtime (CONFIG SET loglevel).
pub fn set_level(level: LogLevel) {
    if let Some(l) = LOGGER.get() {
        l.level.store(level_num(level), Ordering::Relaxed);
    }
}

pub fn enabled(level: LogLevel) -> bool {
    LOGGER.get().is_some_and(|l| level_num(level) >= l.level.load(Ordering::Relaxed) && level != LogLevel::Nothing)
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

pub fn write(level: LogLevel, msg: std::fmt::Arguments<'_>) {
    if !enabled(level) {
        return;
    }
    let Some(l) = LOGGER.get() else { return };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (y, mo, d) = civil(secs.div_euclid(86_400));
    let tod = secs.rem_euclid(86_400);
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let mark = match level {
        LogLevel::Debug => '.',
        LogLevel::Verbose => '-',
        LogLevel::Notice => '*',
        _ => '#',
    };
    if let Some(s) = &l.syslog {
        s.send(level, msg);
    }
    let mut out = l.out.lock();
    let _ = writeln!(
        out,
        "{}:M {:02} {} {} {:02}:{:02}:{:02}.{:03} {} {}",
        std::process::id(),
        d,
        MONTHS[(mo - 1) as usize],
        y,
        tod / 3600,
        tod / 60 % 60,
        tod % 60,
        now.subsec_millis(),
        mark,
        msg
    );
    let _ = out.flush();
}

#[macro_export]
macro_rules! log_notice { ($($t:tt)*) => { $crate::log::write($crate::LogLevel::Notice, format_args!($($t)*)) } }
#[macro_export]
macro_rules! log_warning { ($($t:tt)*) => { $crate::log::write($crate::LogLevel::Warning, format_args!($($t)*)) } }
#[macro_export]
macro_rules! log_verbose { ($($t:tt)*) => { $crate::log::write($crate::LogLevel::Verbose, format_args!($($t)*)) } }
#[macro_export]
macro_rules! log_debug { ($($t:tt)*) => { $crate::log::write($crate::LogLevel::Debug, format_args!($($t)*)) } }

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil(0), (1970, 1, 1));
        assert_eq!(super::civil(20_414), (2025, 11, 22));
        assert_eq!(super::civil(11_016), (2000, 2, 29));
    }

    /// What a syslog daemon bound at the path receives, priority
    /// computed from the facility and the level.
    #[test]
    fn syslog_lines_reach_the_socket() {
        use super::{LogLevel, Syslog};
        let path = std::env::temp_dir().join(format!("tern-syslog-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let daemon = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
        daemon.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
        let pid = std::process::id();
        let mut buf = [0u8; 256];
        for (facility, level, pri) in [("local0", LogLevel::Warning, 132), ("user", LogLevel::Debug, 15), ("local7", LogLevel::Notice, 189), ("local3", LogLevel::Verbose, 158)] {
            Syslog::new(&path, "tern-test", facility).unwrap().send(level, format_args!("hello {}", 42));
            let n = daemon.recv(&mut buf).unwrap();
            assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), format!("<{pri}>tern-test[{pid}]: hello 42"));
        }
        assert!(Syslog::new(&path, "x", "local8").is_err());
        // No daemon: the line is dropped, nothing fails.
        std::fs::remove_file(&path).unwrap();
        Syslog::new(&path, "x", "user").unwrap().send(LogLevel::Warning, format_args!("lost"));
    }
}
