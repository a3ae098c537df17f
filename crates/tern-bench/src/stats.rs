//! Counters and latency histograms, one set per thread (single writer),
//! merged once at the end.
//!
//! An operation is a request whose reply was not an error. Error replies
//! are counted apart and their latency is not recorded, so a server that
//! answers `-ERR unknown command` quickly cannot look fast.

use hdrhistogram::Histogram;

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
}
