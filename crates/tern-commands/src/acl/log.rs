//! ACL LOG: the latest refusals, newest first, a repeat of a recent one
//! (same reason, context, object and user within a minute, among the ten
//! newest) counted on its entry rather than added (Redis's `addACLLogEntry`).

use std::collections::VecDeque;

use super::Denied;

/// Entries within this many ms of each other may be grouped.
const GROUPING_MS: u64 = 60_000;
/// How many of the newest entries a refusal is compared with.
const GROUPING_SCAN: usize = 10;

/// Where the refused command ran (ACL LOG's `context`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    Toplevel,
    Multi,
    /// A script's `redis.call`.
    Lua,
}

impl Context {
    pub fn name(self) -> &'static str {
        match self {
            Context::Toplevel => "toplevel",
            Context::Multi => "multi",
            Context::Lua => "lua",
        }
    }
}

#[derive(Clone, Debug)]
pub struct LogEntry {
    pub count: u64,
    pub reason: Denied,
    pub context: Context,
    pub object: Vec<u8>,
    pub username: Vec<u8>,
    /// Last update, ms since the epoch.
    pub ctime: u64,
    pub client_info: Vec<u8>,
    pub entry_id: u64,
    pub created: u64,
}

#[derive(Debug, Default)]
pub struct Log {
    entries: VecDeque<LogEntry>,
    next_id: u64,
}

impl Log {
    /// Records a refusal, keeping at most `max_len` entries.
    #[allow(clippy::too_many_arguments)]
    pub fn add(&mut self, reason: Denied, context: Context, object: &[u8], username: &[u8], client_info: Vec<u8>, now: u64, max_len: usize) {
        if max_len == 0 {
            self.entries.clear();
            return;
        }
        let same = |e: &LogEntry| {
            e.reason == reason && e.context == context && e.ctime.abs_diff(now) <= GROUPING_MS && e.object == object && e.username == username
        };
        if let Some(i) = self.entries.iter().take(GROUPING_SCAN).position(same) {
            if let Some(mut e) = self.entries.remove(i) {
                e.count += 1;
                e.ctime = now;
                e.client_info = client_info;
                self.entries.push_front(e);
            }
            return;
        }
        let entry_id = self.next_id;
        self.next_id += 1;
        self.entries.push_front(LogEntry {
            count: 1,
            reason,
            context,
            object: object.to_vec(),
            username: username.to_vec(),
            ctime: now,
            client_info,
            entry_id,
            created: now,
        });
        self.entries.truncate(max_len);
    }

    /// The newest `n` entries.
    pub fn newest(&self, n: usize) -> Vec<LogEntry> {
        self.entries.iter().take(n).cloned().collect()
    }

    pub fn reset(&mut self) {
        self.entries.clear();
    }

    /// Drops the oldest beyond `max_len` (`acllog-max-len` lowered).
    pub fn trim(&mut self, max_len: usize) {
        self.entries.truncate(max_len);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_counted_and_moved_to_the_front() {
        let mut l = Log::default();
        l.add(Denied::Command, Context::Toplevel, b"get", b"u", b"a".to_vec(), 1000, 3);
        l.add(Denied::Key, Context::Toplevel, b"k", b"u", b"b".to_vec(), 1000, 3);
        l.add(Denied::Command, Context::Toplevel, b"get", b"u", b"c".to_vec(), 2000, 3);
        let e = l.newest(10);
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].count, e[0].entry_id, e[0].created, e[0].ctime, e[0].client_info.as_slice()), (2, 0, 1000, 2000, &b"c"[..]));
        // A minute later it is a new entry; the log keeps max_len.
        l.add(Denied::Command, Context::Toplevel, b"get", b"u", vec![], 70_000, 3);
        l.add(Denied::Command, Context::Multi, b"get", b"u", vec![], 70_000, 3);
        assert_eq!(l.len(), 3);
        assert_eq!(l.newest(1)[0].entry_id, 3);
        l.add(Denied::Auth, Context::Toplevel, b"AUTH", b"x", vec![], 70_000, 0);
        assert!(l.is_empty());
    }
}
