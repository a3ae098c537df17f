//! Logging with Redis's levels and line format, to stdout or `logfile`.
//!
//! `PID:M DD Mon YYYY HH:MM:SS.mmm * message`, where the mark is `.` debug,
//! `-` verbose, `*` notice and `#` warning.

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::LogLevel;

struct Logger {
    level: AtomicU8,
    out: Mutex<Box<dyn Write + Send>>,
}

static LOGGER: OnceLock<Logger> = OnceLock::new();

fn level_num(l: LogLevel) -> u8 {
    l as u8
}

/// Sets up logging. An empty `logfile` means stdout. Later calls only
/// change the level.
pub fn init(level: LogLevel, logfile: &str) -> std::io::Result<()> {
    if let Some(l) = LOGGER.get() {
        l.level.store(level_num(level), Ordering::Relaxed);
        return Ok(());
    }
    let out: Box<dyn Write + Send> = if logfile.is_empty() {
        Box::new(std::io::stdout())
    } else {
        Box::new(std::fs::OpenOptions::new().create(true).append(true).open(logfile)?)
    };
    let _ = LOGGER.set(Logger { level: AtomicU8::new(level_num(level)), out: Mutex::new(out) });
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
}
