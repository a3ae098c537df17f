//! The command logs: commands that ran slowly (SLOWLOG, and COMMANDLOG's
//! `slow`), and requests and replies of many bytes (COMMANDLOG's
//! `large-request` and `large-reply`).
//!
//! ```text
//!  worker 0: [slow ◄ newest .. oldest] [large-request ..] [large-reply ..]   each bounded by its max-len
//!  worker 1: [slow ..]                 [large-request ..] [large-reply ..]
//!  GET: merge the workers' logs by id, newest first, cut to max-len
//! ```
//!
//! Each worker keeps its own logs, so a command never waits for another
//! worker to log. Deciding whether to log costs a comparison of numbers the
//! command path has anyway (its duration, its request's bytes, its reply's
//! bytes counted from lengths: a value sent by reference counts by its
//! length, never by reading it); only a command that is logged builds an
//! entry and takes its worker's log lock, which only readers (SLOWLOG,
//! COMMANDLOG) ever contend for. Ids come from one counter per kind, taken
//! only when logging, so that the merged log is ordered as the commands
//! finished.
//!
//! Each worker keeps up to max-len entries, so its newest max-len are all
//! there and the merged newest max-len are exact. A max-len lowered by
//! CONFIG SET shows at once (Redis trims at the next entry).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

/// Arguments an entry keeps; the last one kept says how many more there
/// were.
pub const MAX_ARGC: usize = 32;
/// Bytes an argument keeps; the rest are replaced by how many there were.
pub const MAX_STRING: usize = 128;
/// What a secret argument is shown as.
pub const REDACTED: &[u8] = b"(redacted)";

/// The three logs, in COMMANDLOG's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Slow = 0,
    LargeRequest = 1,
    LargeReply = 2,
}

impl Kind {
    /// COMMANDLOG's name for a log, case-insensitively.
    pub fn parse(name: &[u8]) -> Option<Kind> {
        [(b"slow" as &[u8], Kind::Slow), (b"large-request", Kind::LargeRequest), (b"large-reply", Kind::LargeReply)]
            .into_iter()
            .find(|(n, _)| name.eq_ignore_ascii_case(n))
            .map(|(_, k)| k)
    }
}

/// One logged command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub id: u64,
    /// Seconds since the Unix epoch, as the command ran.
    pub time_s: u64,
    /// Microseconds (slow) or bytes (large-request, large-reply).
    pub value: u64,
    /// The arguments, truncated and redacted ([`kept_args`]).
    pub args: Vec<Vec<u8>>,
    pub addr: String,
    pub name: Vec<u8>,
}

/// One worker's logs, on their own cache lines.
#[repr(align(128))]
#[derive(Default)]
struct WorkerLogs([Mutex<VecDeque<Entry>>; 3]);

/// Every worker's logs.
pub struct CommandLogs {
    workers: Box<[WorkerLogs]>,
    next_id: [AtomicU64; 3],
}

impl CommandLogs {
    pub fn new(workers: usize) -> Self {
        CommandLogs { workers: (0..workers.max(1)).map(|_| WorkerLogs::default()).collect(), next_id: Default::default() }
    }

    /// Adds the entry `make` builds (given its id) to `worker`'s log of
    /// `kind`, dropping its oldest beyond `max_len`.
    pub fn push(&self, worker: usize, kind: Kind, max_len: usize, make: impl FnOnce(u64) -> Entry) {
        let id = self.next_id[kind as usize].fetch_add(1, Ordering::Relaxed);
        let e = make(id);
        // The in-process executor runs as worker 0 of a one-worker set.
        let w = &self.workers[worker.min(self.workers.len() - 1)];
        let mut log = w.0[kind as usize].lock();
        log.push_front(e);
        log.truncate(max_len);
    }

    /// The newest `count` entries of `kind` (at most `max_len`), newest
    /// first.
    pub fn newest(&self, kind: Kind, count: usize, max_len: usize) -> Vec<Entry> {
        let want = count.min(max_len);
        let mut all: Vec<Entry> = Vec::new();
        for w in self.workers.iter() {
            all.extend(w.0[kind as usize].lock().iter().take(want).cloned());
        }
        all.sort_unstable_by_key(|e| std::cmp::Reverse(e.id));
        all.truncate(want);
        all
    }

    /// How many entries of `kind` GET would show at most.
    pub fn len(&self, kind: Kind, max_len: usize) -> usize {
        let n: usize = self.workers.iter().map(|w| w.0[kind as usize].lock().len()).sum();
        n.min(max_len)
    }

    /// Empties every worker's log of `kind`; ids go on from where they were.
    pub fn reset(&self, kind: Kind) {
        for w in self.workers.iter() {
            w.0[kind as usize].lock().clear();
        }
    }
}

/// The arguments an entry keeps: at most [`MAX_ARGC`], the last of them
/// `... (N more arguments)` when there were more; each at most
/// [`MAX_STRING`] bytes followed by `... (N more bytes)`; those `secret`
/// says are [`REDACTED`].
pub fn kept_args<'a>(args: impl ExactSizeIterator<Item = &'a [u8]>, secret: impl Fn(usize) -> bool) -> Vec<Vec<u8>> {
    let argc = args.len();
    let shown = if argc > MAX_ARGC { MAX_ARGC - 1 } else { argc };
    let mut out = Vec::with_capacity(shown + usize::from(argc > shown));
    for (i, a) in args.take(shown).enumerate() {
        if secret(i) {
            out.push(REDACTED.to_vec());
        } else if a.len() > MAX_STRING {
            let mut s = a[..MAX_STRING].to_vec();
            s.extend_from_slice(format!("... ({} more bytes)", a.len() - MAX_STRING).as_bytes());
            out.push(s);
        } else {
            out.push(a.to_vec());
        }
    }
    if argc > shown {
        out.push(format!("... ({} more arguments)", argc - shown).into_bytes());
    }
    out
}

/// Directives whose values CONFIG SET's log entries (and MONITOR lines)
/// do not show, as Redis marks them sensitive.
const SENSITIVE_DIRECTIVES: &[&str] = &["requirepass", "masterauth", "masteruser"];

/// Whether argument `i` of a command (by its full name, `config|set`) is a
/// secret that logs must not show: AUTH's credentials, HELLO's after AUTH,
/// CONFIG SET's values of password directives, and ACL SETUSER's,
/// DELUSER's and GETUSER's user names and rules (Redis redacts them all).
pub fn is_secret(fullname: &str, args: &[&[u8]], i: usize) -> bool {
    match fullname {
        "auth" => i >= 1,
        "acl|setuser" | "acl|deluser" | "acl|getuser" => i >= 2,
        "hello" => {
            // HELLO's options as HELLO reads them: AUTH takes two values,
            // SETNAME one; reading stops at anything else.
            let mut j = 2;
            while j < args.len() {
                let more = args.len() - 1 - j;
                if args[j].eq_ignore_ascii_case(b"auth") && more >= 2 {
                    if i == j + 1 || i == j + 2 {
                        return true;
                    }
                    j += 3;
                } else if args[j].eq_ignore_ascii_case(b"setname") && more >= 1 {
                    j += 2;
                } else {
                    break;
                }
            }
            false
        }
        "config|set" => i >= 3 && i % 2 == 1 && SENSITIVE_DIRECTIVES.iter().any(|d| args[i - 1].eq_ignore_ascii_case(d.as_bytes())),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: u64) -> Entry {
        Entry { id, time_s: 0, value: id, args: vec![], addr: String::new(), name: vec![] }
    }

    #[test]
    fn merged_newest_first_and_bounded() {
        let logs = CommandLogs::new(2);
        for i in 0..10 {
            logs.push(i % 2, Kind::Slow, 3, entry);
        }
        let ids: Vec<u64> = logs.newest(Kind::Slow, usize::MAX, 3).iter().map(|e| e.id).collect();
        assert_eq!(ids, [9, 8, 7]);
        assert_eq!(logs.len(Kind::Slow, 3), 3);
        assert_eq!(logs.len(Kind::Slow, 100), 6, "each worker keeps its newest max-len");
        assert_eq!(logs.newest(Kind::Slow, 1, 3).len(), 1);
        assert_eq!(logs.len(Kind::LargeReply, 3), 0);
        logs.reset(Kind::Slow);
        assert_eq!(logs.len(Kind::Slow, 3), 0);
        logs.push(0, Kind::Slow, 3, entry);
        assert_eq!(logs.newest(Kind::Slow, 10, 3)[0].id, 10, "ids go on after a reset");
    }

    #[test]
    fn max_len_zero_keeps_nothing() {
        let logs = CommandLogs::new(1);
        logs.push(0, Kind::LargeRequest, 0, entry);
        assert!(logs.newest(Kind::LargeRequest, 10, 0).is_empty());
    }

    #[test]
    fn arguments_truncated_as_valkey_does() {
        let long = vec![b'x'; 200];
        let kept = kept_args([b"set" as &[u8], b"k", &long].into_iter(), |_| false);
        assert_eq!(kept[2].len(), 128 + "... (72 more bytes)".len());
        assert!(kept[2].ends_with(b"x... (72 more bytes)"));
        let many: Vec<Vec<u8>> = (0..42).map(|i| i.to_string().into_bytes()).collect();
        let kept = kept_args(many.iter().map(|v| v.as_slice()), |_| false);
        assert_eq!(kept.len(), 32);
        assert_eq!(kept[30], b"30");
        assert_eq!(kept[31], b"... (11 more arguments)");
        let exact: Vec<Vec<u8>> = (0..32).map(|i| i.to_string().into_bytes()).collect();
        assert_eq!(kept_args(exact.iter().map(|v| v.as_slice()), |_| false).len(), 32);
    }

    #[test]
    fn secrets() {
        let hello: &[&[u8]] = &[b"hello", b"3", b"AUTH", b"u", b"p", b"SETNAME", b"n"];
        let shown: Vec<bool> = (0..hello.len()).map(|i| is_secret("hello", hello, i)).collect();
        assert_eq!(shown, [false, false, false, true, true, false, false]);
        let auth: &[&[u8]] = &[b"auth", b"a", b"b"];
        assert!(!is_secret("auth", auth, 0) && is_secret("auth", auth, 1) && is_secret("auth", auth, 2));
        let setuser: &[&[u8]] = &[b"acl", b"setuser", b"u", b">pw"];
        assert!(!is_secret("acl|setuser", setuser, 1) && is_secret("acl|setuser", setuser, 2) && is_secret("acl|setuser", setuser, 3));
        let set: &[&[u8]] = &[b"config", b"set", b"maxmemory", b"1", b"REQUIREPASS", b"x"];
        let shown: Vec<bool> = (0..set.len()).map(|i| is_secret("config|set", set, i)).collect();
        assert_eq!(shown, [false, false, false, false, false, true]);
    }
}
