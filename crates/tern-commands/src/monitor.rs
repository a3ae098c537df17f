//! MONITOR's feeds: every command run, on any worker, as one line to each
//! monitoring client.
//!
//! ```text
//!  worker W runs a command ─► any()? (one load; false without monitors)
//!     └─► line ─► each Feed's buffer (lock) ─► wake the feed's worker M
//!  worker M, woken ─► moves its monitors' buffers into their replies
//! ```
//!
//! A feed's buffer is bounded: past its limit it stops taking lines and
//! its worker closes the client, as Redis closes a monitor over its output
//! limit.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

/// One monitoring client's lines, waiting for its worker.
#[derive(Debug)]
pub struct Feed {
    pub client_id: u64,
    pub worker: usize,
    buf: Mutex<Vec<u8>>,
    /// Lines were dropped for the limit: the client must be closed.
    overflow: AtomicBool,
}

impl Feed {
    pub fn new(client_id: u64, worker: usize) -> Arc<Feed> {
        Arc::new(Feed { client_id, worker, buf: Mutex::new(Vec::new()), overflow: AtomicBool::new(false) })
    }

    /// The lines so far (emptied), and whether the feed overflowed.
    pub fn take(&self) -> (Vec<u8>, bool) {
        (std::mem::take(&mut *self.buf.lock()), self.overflow.load(Ordering::Relaxed))
    }
}

/// Every feed.
#[derive(Default)]
pub struct Monitors {
    count: AtomicUsize,
    feeds: RwLock<Vec<Arc<Feed>>>,
}

impl Monitors {
    /// Whether any client monitors: the only cost to a command without.
    #[inline]
    pub fn any(&self) -> bool {
        self.count.load(Ordering::Relaxed) > 0
    }

    pub fn add(&self, f: Arc<Feed>) {
        let mut feeds = self.feeds.write();
        feeds.push(f);
        self.count.store(feeds.len(), Ordering::Relaxed);
    }

    pub fn remove(&self, client_id: u64) {
        let mut feeds = self.feeds.write();
        feeds.retain(|f| f.client_id != client_id);
        self.count.store(feeds.len(), Ordering::Relaxed);
    }

    /// Appends `line` to every feed (up to `limit` bytes pending each, 0:
    /// none) and wakes the workers that own them.
    pub fn broadcast(&self, line: &[u8], limit: usize, wake: impl Fn(usize)) {
        for f in self.feeds.read().iter() {
            {
                let mut b = f.buf.lock();
                if limit > 0 && b.len() + line.len() > limit {
                    f.overflow.store(true, Ordering::Relaxed);
                } else {
                    b.extend_from_slice(line);
                }
            }
            wake(f.worker);
        }
    }
}

/// Redis's quoting of an argument (sdscatrepr): in double quotes, `\\`,
/// `"`, `\n`, `\r`, `\t`, `\a`, `\b` escaped, other non-printable bytes as
/// `\xhh`.
fn quoted(out: &mut Vec<u8>, a: &[u8]) {
    out.push(b'"');
    for &c in a {
        match c {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', c]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            7 => out.extend_from_slice(b"\\a"),
            8 => out.extend_from_slice(b"\\b"),
            0x20..=0x7e => out.push(c),
            _ => out.extend_from_slice(format!("\\x{c:02x}").as_bytes()),
        }
    }
    out.push(b'"');
}

/// One MONITOR line: `+<s>.<µs> [<db> <addr>] "arg" ...`, CRLF-ended, the
/// arguments `secret` names shown as `(redacted)`.
pub fn line<'a>(time_us: u64, db: usize, addr: &str, args: impl Iterator<Item = &'a [u8]>, secret: impl Fn(usize) -> bool) -> Vec<u8> {
    let mut out = format!("+{}.{:06} [{} {}]", time_us / 1_000_000, time_us % 1_000_000, db, addr).into_bytes();
    for (i, a) in args.enumerate() {
        out.push(b' ');
        if secret(i) {
            out.extend_from_slice(b"\"(redacted)\"");
        } else {
            quoted(&mut out, a);
        }
    }
    out.extend_from_slice(b"\r\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_quote_as_redis() {
        let args: [&[u8]; 3] = [b"SET", b"a\"", b"\x01\n\\\xff"];
        let l = line(1_795_641_521_000_042, 2, "127.0.0.1:1", args.into_iter(), |i| i == 9);
        assert_eq!(l, b"+1795641521.000042 [2 127.0.0.1:1] \"SET\" \"a\\\"\" \"\\x01\\n\\\\\\xff\"\r\n");
        let l = line(0, 0, "a", [b"AUTH" as &[u8], b"p"].into_iter(), |i| i == 1);
        assert_eq!(l, b"+0.000000 [0 a] \"AUTH\" \"(redacted)\"\r\n");
    }

    #[test]
    fn feeds_bounded_and_removed() {
        let m = Monitors::default();
        assert!(!m.any());
        let f = Feed::new(7, 1);
        m.add(f.clone());
        assert!(m.any());
        let woken = std::cell::Cell::new(0);
        m.broadcast(b"12345", 8, |w| woken.set(woken.get() + w));
        m.broadcast(b"12345", 8, |_| {});
        assert_eq!(f.take(), (b"12345".to_vec(), true));
        assert_eq!(woken.get(), 1);
        m.remove(7);
        assert!(!m.any());
    }
}
