//! Counters and latency histograms, one set per thread (single writer),
//! merged once at the end.
//!
//! An operation is a request whose reply was not an error. Error replies
//! are counted apart and their latency is not recorded, so a server that
//! answers `-ERR unknown command` quickly cannot look fast.

use std::time::Instant;

use hdrhistogram::Histogram;

use crate::pubsub::MsgKind;

/// Latencies are recorded in microseconds, from 1 µs to 100 s at three
/// significant digits (memtier's resolution).
pub fn new_histogram() -> Histogram<u64> {
    // The bounds are constants that hdrhistogram accepts.
    Histogram::new_with_bounds(1, 100_000_000, 3).expect("valid histogram bounds")
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub ops: u64,
    pub errors: u64,
    pub hits: u64,
    pub misses: u64,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.ops += o.ops;
        self.errors += o.errors;
        self.hits += o.hits;
        self.misses += o.misses;
    }
}

#[derive(Clone, Debug)]
pub struct CmdStats {
    pub name: String,
    pub counts: Counts,
    pub hist: Histogram<u64>,
}

#[derive(Clone, Debug)]
pub struct Stats {
    pub sent: u64,
    pub received: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub connection_errors: u64,
    /// The sum of PUBLISH and SPUBLISH replies: the receivers the server
    /// says it delivered each message to.
    pub receivers: u64,
    pub cmds: Vec<CmdStats>,
    /// Operations and errors completed in each second since the start.
    pub per_sec: Vec<Counts>,
    pub first_error: Option<String>,
}

impl Stats {
    pub fn new(names: &[String]) -> Stats {
        Stats {
            sent: 0,
            received: 0,
            bytes_in: 0,
            bytes_out: 0,
            connection_errors: 0,
            receivers: 0,
            cmds: names
                .iter()
                .map(|n| CmdStats {
                    name: n.clone(),
                    counts: Counts::default(),
                    hist: new_histogram(),
                })
                .collect(),
            per_sec: Vec::new(),
            first_error: None,
        }
    }

    pub fn second(&mut self, sec: usize) -> &mut Counts {
        if self.per_sec.len() <= sec {
            self.per_sec.resize(sec + 1, Counts::default());
        }
        &mut self.per_sec[sec]
    }

    pub fn merge(&mut self, o: &Stats) {
        self.sent += o.sent;
        self.received += o.received;
        self.bytes_in += o.bytes_in;
        self.bytes_out += o.bytes_out;
        self.connection_errors += o.connection_errors;
        self.receivers += o.receivers;
        for (a, b) in self.cmds.iter_mut().zip(&o.cmds) {
            a.counts.add(&b.counts);
            // Same bounds on both sides, so adding cannot fail.
            let _ = a.hist.add(&b.hist);
        }
        for (i, c) in o.per_sec.iter().enumerate() {
            self.second(i).add(c);
        }
        if self.first_error.is_none() {
            self.first_error.clone_from(&o.first_error);
        }
    }

    pub fn totals(&self) -> (Counts, Histogram<u64>) {
        let mut c = Counts::default();
        let mut h = new_histogram();
        for cmd in &self.cmds {
            c.add(&cmd.counts);
            let _ = h.add(&cmd.hist);
        }
        (c, h)
    }
}

/// What the subscriber connections received (`--subscribers`), one set
/// per subscriber thread, merged at the end.
#[derive(Clone, Debug)]
pub struct SubStats {
    /// Messages of each [`MsgKind`], and their delivery latency (receive
    /// time − the payload's `__time_us__`, µs) when the payload had one.
    pub kinds: [(u64, Histogram<u64>); 3],
    /// Messages whose payload did not start with a `__time_us__`.
    pub untimed: u64,
    pub bytes_in: u64,
    pub connection_errors: u64,
    pub first_error: Option<String>,
    /// When the last message was read.
    pub last: Option<Instant>,
}

impl Default for SubStats {
    fn default() -> Self {
        SubStats {
            kinds: std::array::from_fn(|_| (0, new_histogram())),
            untimed: 0,
            bytes_in: 0,
            connection_errors: 0,
            first_error: None,
            last: None,
        }
    }
}

impl SubStats {
    pub fn messages(&self) -> u64 {
        self.kinds.iter().map(|k| k.0).sum()
    }

    pub fn record(&mut self, kind: MsgKind, latency_us: Option<u64>) {
        let k = &mut self.kinds[kind as usize];
        k.0 += 1;
        match latency_us {
            Some(us) => k.1.saturating_record(us.max(1)),
            None => self.untimed += 1,
        }
    }

    pub fn merge(&mut self, o: &SubStats) {
        for (a, b) in self.kinds.iter_mut().zip(&o.kinds) {
            a.0 += b.0;
            // Same bounds on both sides, so adding cannot fail.
            let _ = a.1.add(&b.1);
        }
        self.untimed += o.untimed;
        self.bytes_in += o.bytes_in;
        self.connection_errors += o.connection_errors;
        self.last = self.last.max(o.last);
        if self.first_error.is_none() {
            self.first_error.clone_from(&o.first_error);
        }
    }

    /// The latency of every timed message.
    pub fn latency(&self) -> Histogram<u64> {
        let mut h = new_histogram();
        for k in &self.kinds {
            let _ = h.add(&k.1);
        }
        h
    }
}

/// Latency in milliseconds at quantile `q` (memtier reports milliseconds).
pub fn ms_at(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_adds_counts_histograms_and_seconds() {
        let names = vec!["GET".to_string(), "SET".to_string()];
        let mut a = Stats::new(&names);
        let mut b = Stats::new(&names);
        for v in 1..=100u64 {
            a.cmds[0].hist.record(v).unwrap();
            b.cmds[0].hist.record(v + 100).unwrap();
        }
        b.cmds[1].hist.record(5000).unwrap();
        a.cmds[0].counts = Counts {
            ops: 100,
            errors: 1,
            hits: 60,
            misses: 40,
        };
        b.cmds[0].counts = Counts {
            ops: 100,
            errors: 0,
            hits: 100,
            misses: 0,
        };
        b.cmds[1].counts.ops = 1;
        a.second(0).ops = 100;
        b.second(2).ops = 101;
        a.sent = 101;
        b.sent = 101;
        a.first_error = Some("ERR x".into());
        a.merge(&b);
        assert_eq!(a.sent, 202);
        assert_eq!(
            a.cmds[0].counts,
            Counts {
                ops: 200,
                errors: 1,
                hits: 160,
                misses: 40
            }
        );
        assert_eq!(a.cmds[0].hist.len(), 200);
        assert_eq!(a.cmds[0].hist.value_at_quantile(0.5), 100);
        assert_eq!(a.cmds[0].hist.max(), 200);
        assert_eq!(
            a.per_sec.iter().map(|c| c.ops).collect::<Vec<_>>(),
            [100, 0, 101]
        );
        let (t, h) = a.totals();
        assert_eq!(
            (t.ops, t.errors, h.len(), h.max()),
            (201, 1, 201, h.highest_equivalent(5000))
        );
        assert_eq!(a.first_error.as_deref(), Some("ERR x"));
        assert!((ms_at(&h, 1.0) - 5.0).abs() < 0.01);
    }

    #[test]
    fn subscriber_stats_count_kinds_and_merge() {
        let t0 = Instant::now();
        let mut a = SubStats::default();
        let mut b = SubStats::default();
        a.record(MsgKind::Message, Some(100));
        a.record(MsgKind::Message, None);
        a.record(MsgKind::Pmessage, Some(0));
        b.record(MsgKind::Smessage, Some(300));
        b.last = Some(t0);
        b.first_error = Some("closed".into());
        a.merge(&b);
        assert_eq!(a.messages(), 4);
        assert_eq!(a.kinds.iter().map(|k| k.0).collect::<Vec<_>>(), [2, 1, 1]);
        assert_eq!((a.untimed, a.last, a.first_error.as_deref()), (1, Some(t0), Some("closed")));
        let h = a.latency();
        // An untimed message has no latency; 0 µs is recorded as 1 µs.
        assert_eq!((h.len(), h.min(), h.max()), (3, 1, h.highest_equivalent(300)));
    }
}
