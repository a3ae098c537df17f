//! The results: a table on stdout and memtier's JSON layout.
//!
//! The JSON keeps memtier's `ALL STATS` → `Totals` → `Ops/sec`, `Hits/sec`,
//! `Misses/sec`, `Percentile Latencies`… so tools that read memtier's file
//! read this one, and adds `Errors`, `Errors/sec`, the request/reply counts
//! and a per-second series (`Time-Serie`). With `--subscribers`, a
//! `SUBSCRIBERS` table follows and the JSON gains `ALL STATS` →
//! `Subscribers`: messages received, per second, delivery latency
//! percentiles and the server's CPU per received message.

use std::fmt::Write;
use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};

use crate::opts::{Config, Phase, Protocol, Spec};
use crate::pubsub::MsgKind;
use crate::stats::{ms_at, Counts, Stats, SubStats};

pub const QUANTILES: [(f64, &str); 5] = [
    (0.5, "p50.00"),
    (0.9, "p90.00"),
    (0.99, "p99.00"),
    (0.999, "p99.90"),
    (1.0, "p100.00"),
];

pub struct Report<'a> {
    pub cfg: &'a Config,
    pub stats: &'a Stats,
    pub elapsed: Duration,
    pub wall_start: SystemTime,
    /// Seconds of CPU the server used during the run (its own count,
    /// `server_cpu`), if it said.
    pub server_cpu: Option<f64>,
    /// What the subscribers received (`--subscribers`).
    pub subs: Option<&'a SubStats>,
    /// From the start of the load to the last message received (at least
    /// `elapsed`): what messages/s divide by.
    pub sub_span: Duration,
}

fn title(name: &str) -> String {
    // memtier's rows are "Sets", "Gets", and the command name otherwise.
    match name {
        "SET" => "Sets".into(),
        "GET" => "Gets".into(),
        n => {
            let mut s = n.to_ascii_lowercase();
            if let Some(f) = s.get_mut(0..1) {
                f.make_ascii_uppercase();
            }
            s + "s"
        }
    }
}

impl Report<'_> {
    fn secs(&self) -> f64 {
        self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The server's CPU µs per operation over the run.
    fn server_cpu_per_op(&self) -> Option<f64> {
        let ops = self.stats.totals().0.ops;
        self.server_cpu.filter(|_| ops > 0).map(|s| s * 1e6 / ops as f64)
    }

    /// The server's CPU µs per message the subscribers received.
    fn server_cpu_per_message(&self) -> Option<f64> {
        let m = self.subs.map_or(0, SubStats::messages);
        self.server_cpu.filter(|_| m > 0).map(|s| s * 1e6 / m as f64)
    }

    fn sub_secs(&self) -> f64 {
        self.sub_span.as_secs_f64().max(1e-9)
    }

    /// Each kind of message received (those with any), then the totals.
    fn sub_rows(&self, subs: &SubStats) -> Vec<(&'static str, u64, Histogram<u64>)> {
        let mut rows: Vec<(&'static str, u64, Histogram<u64>)> = MsgKind::ALL
            .iter()
            .map(|&k| (k.title(), subs.kinds[k as usize].0, subs.kinds[k as usize].1.clone()))
            .filter(|r| r.1 > 0)
            .collect();
        rows.push(("Totals", subs.messages(), subs.latency()));
        rows
    }

    fn sub_title(&self) -> String {
        let c = self.cfg;
        let resp3 = c.subscribe_resp3 || c.protocol == Protocol::Resp3;
        format!(
            "{} connections on {} thread(s), {}: {} channels, {} patterns, {} shard channels",
            c.subscribers,
            c.subscriber_threads.min(c.subscribers),
            if resp3 { "RESP3" } else { "RESP2" },
            c.sub_channels.len(),
            c.sub_patterns.len(),
            c.sub_shard_channels.len()
        )
    }

    fn sub_table(&self, o: &mut String, subs: &SubStats) {
        let s = self.sub_secs();
        let _ = writeln!(o, "\nSUBSCRIBERS ({}, {:.2} s)", self.sub_title(), self.sub_span.as_secs_f64());
        let _ = writeln!(
            o,
            "{:<10}{:>13}{:>13}{:>10}{:>10}{:>10}{:>10}{:>10}{:>12}",
            "Type", "Msgs", "Msgs/sec", "p50", "p90", "p99", "p99.9", "max", "KB/sec"
        );
        for (name, n, h) in self.sub_rows(subs) {
            let q: Vec<f64> = QUANTILES.iter().map(|(q, _)| ms_at(&h, *q)).collect();
            let kb = if name == "Totals" { format!("{:.2}", subs.bytes_in as f64 / 1024.0 / s) } else { String::new() };
            let _ = writeln!(
                o,
                "{:<10}{:>13}{:>13.2}{:>10.3}{:>10.3}{:>10.3}{:>10.3}{:>10.3}{:>12}",
                name,
                n,
                n as f64 / s,
                q[0],
                q[1],
                q[2],
                q[3],
                q[4],
                kb
            );
        }
        let _ = writeln!(
            o,
            "messages received {} of {} announced by PUBLISH replies, without __time_us__ {}, connection errors {} \
             (delivery latency in ms: receive time - __time_us__)",
            subs.messages(),
            self.stats.receivers,
            subs.untimed,
            subs.connection_errors
        );
        if let Some(e) = &subs.first_error {
            let _ = writeln!(o, "first subscriber error: {e}");
        }
        if let Some(us) = self.server_cpu_per_message() {
            let _ = writeln!(o, "server CPU {us:.3} µs per received message");
        }
    }

    fn rows(&self) -> Vec<(String, Counts, Histogram<u64>)> {
        let mut rows: Vec<(String, Counts, Histogram<u64>)> = Vec::new();
        for c in &self.stats.cmds {
            let t = title(&c.name);
            match rows.iter_mut().find(|r| r.0 == t) {
                Some(r) => {
                    r.1.add(&c.counts);
                    let _ = r.2.add(&c.hist);
                }
                None => rows.push((t, c.counts.clone(), c.hist.clone())),
            }
        }
        let (t, h) = self.stats.totals();
        rows.push(("Totals".into(), t, h));
        rows
    }

    pub fn table(&self, hide_histogram: bool) -> String {
        let s = self.secs();
        let mut o = String::new();
        let _ = writeln!(
            o,
            "\nALL STATS ({} threads x {} clients, pipeline {}, {:.2} s)",
            self.cfg.threads,
            self.cfg.clients,
            self.cfg.pipeline,
            self.elapsed.as_secs_f64()
        );
        let _ = writeln!(
            o,
            "{:<10}{:>13}{:>12}{:>12}{:>12}{:>10}{:>10}{:>10}{:>10}{:>10}{:>12}",
            "Type",
            "Ops/sec",
            "Hits/sec",
            "Misses/sec",
            "Errors/sec",
            "p50",
            "p90",
            "p99",
            "p99.9",
            "max",
            "KB/sec"
        );
        let kb = (self.stats.bytes_in + self.stats.bytes_out) as f64 / 1024.0 / s;
        for (name, c, h) in self.rows() {
            let q: Vec<f64> = QUANTILES.iter().map(|(q, _)| ms_at(&h, *q)).collect();
            let _ = writeln!(
                o,
                "{:<10}{:>13.2}{:>12.2}{:>12.2}{:>12.2}{:>10.3}{:>10.3}{:>10.3}{:>10.3}{:>10.3}{:>12}",
                name,
                c.ops as f64 / s,
                c.hits as f64 / s,
                c.misses as f64 / s,
                c.errors as f64 / s,
                q[0],
                q[1],
                q[2],
                q[3],
                q[4],
                if name == "Totals" { format!("{kb:.2}") } else { String::new() }
            );
        }
        let (t, h) = self.stats.totals();
        let _ = writeln!(
            o,
            "requests sent {}, replies received {}, ops {}, errors {}, connection errors {} (latency in ms)",
            self.stats.sent, self.stats.received, t.ops, t.errors, self.stats.connection_errors
        );
        if let Some(e) = &self.stats.first_error {
            let _ = writeln!(o, "first error: {e}");
        }
        if let Some(us) = self.server_cpu_per_op() {
            let _ = writeln!(o, "server CPU {us:.3} µs per op ({:.3} s over the run, as the server counts it)", self.server_cpu.unwrap_or(0.0));
        }
        if let Some(subs) = self.subs {
            self.sub_table(&mut o, subs);
        }
        if !hide_histogram && !h.is_empty() {
            let _ = writeln!(o, "\n{:>12} {:>10}", "msec", "percent");
            for v in h.iter_quantiles(1) {
                let _ = writeln!(
                    o,
                    "{:>12.3} {:>10.3}",
                    v.value_iterated_to() as f64 / 1000.0,
                    v.quantile_iterated_to() * 100.0
                );
            }
        }
        o
    }

    fn json_row(&self, c: &Counts, h: &Histogram<u64>, kb: f64) -> Value {
        let s = self.secs();
        let mut pct = Map::new();
        for (q, label) in QUANTILES {
            pct.insert(label.into(), json!(ms_at(h, q)));
        }
        let avg = if h.is_empty() { 0.0 } else { h.mean() / 1000.0 };
        json!({
            "Count": c.ops,
            "Ops/sec": c.ops as f64 / s,
            "Hits/sec": c.hits as f64 / s,
            "Misses/sec": c.misses as f64 / s,
            "Hits": c.hits,
            "Misses": c.misses,
            "Errors": c.errors,
            "Errors/sec": c.errors as f64 / s,
            "Latency": avg,
            "Average Latency": avg,
            "Min Latency": if h.is_empty() { 0.0 } else { h.min() as f64 / 1000.0 },
            "Max Latency": if h.is_empty() { 0.0 } else { h.max() as f64 / 1000.0 },
            "KB/sec": kb,
            "Percentile Latencies": pct,
        })
    }

    fn sub_json(&self, subs: &SubStats) -> Value {
        let s = self.sub_secs();
        let mut doc = Map::new();
        for (name, n, h) in self.sub_rows(subs) {
            let mut pct = Map::new();
            for (q, label) in QUANTILES {
                pct.insert(label.into(), json!(ms_at(&h, q)));
            }
            let avg = if h.is_empty() { 0.0 } else { h.mean() / 1000.0 };
            let row = json!({
                "Count": n,
                "Messages/sec": n as f64 / s,
                "Timed": h.len(),
                "Average Latency": avg,
                "Max Latency": if h.is_empty() { 0.0 } else { h.max() as f64 / 1000.0 },
                "Percentile Latencies": pct,
            });
            if name == "Totals" {
                if let Value::Object(m) = row {
                    doc.extend(m);
                }
            } else {
                doc.insert(name.into(), row);
            }
        }
        doc.insert("Publish Receivers".into(), json!(self.stats.receivers));
        doc.insert("Untimed".into(), json!(subs.untimed));
        doc.insert("Connection Errors".into(), json!(subs.connection_errors));
        doc.insert("KB/sec".into(), json!(subs.bytes_in as f64 / 1024.0 / s));
        doc.insert("Duration".into(), json!(self.sub_span.as_millis() as u64));
        if let Some(us) = self.server_cpu_per_message() {
            doc.insert("Server CPU usec/message".into(), json!(us));
        }
        Value::Object(doc)
    }

    pub fn json(&self) -> String {
        let s = self.secs();
        let mut all = Map::new();
        for (name, c, h) in self.rows() {
            let kb = if name == "Totals" {
                (self.stats.bytes_in + self.stats.bytes_out) as f64 / 1024.0 / s
            } else {
                0.0
            };
            let mut row = self.json_row(&c, &h, kb);
            if name == "Totals" {
                let series: Map<String, Value> = self
                    .stats
                    .per_sec
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        (i.to_string(), json!({"Count": c.ops, "Errors": c.errors, "Hits": c.hits, "Misses": c.misses}))
                    })
                    .collect();
                if let Value::Object(m) = &mut row {
                    m.insert(
                        "Connection Errors".into(),
                        json!(self.stats.connection_errors),
                    );
                    m.insert("Requests Sent".into(), json!(self.stats.sent));
                    m.insert("Replies Received".into(), json!(self.stats.received));
                    if let Some(us) = self.server_cpu_per_op() {
                        m.insert("Server CPU usec/op".into(), json!(us));
                    }
                    if self.subs.is_some() {
                        m.insert("Publish Receivers".into(), json!(self.stats.receivers));
                    }
                    m.insert("Time-Serie".into(), Value::Object(series));
                }
            }
            all.insert(name, row);
        }
        if let Some(subs) = self.subs {
            all.insert("Subscribers".into(), self.sub_json(subs));
        }
        let start_ms = self
            .wall_start
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64;
        let dur = self.elapsed.as_millis() as u64;
        all.insert(
            "Runtime".into(),
            json!({"Start time": start_ms, "Finish time": start_ms + dur, "Total duration": dur, "Time unit": "MILLISECONDS"}),
        );
        let cfg = self.cfg;
        let doc = json!({
            "configuration": {
                "server": cfg.server, "port": cfg.port, "protocol": format!("{:?}", cfg.protocol),
                "threads": cfg.threads, "clients": cfg.clients, "pipeline": cfg.pipeline,
                "test_time": cfg.test_time, "ratio": format!("{}:{}", cfg.ratio.0, cfg.ratio.1),
                "key_minimum": cfg.key_min, "key_maximum": cfg.key_max, "key_prefix": cfg.key_prefix,
                "data_size": cfg.data_size, "random_data": cfg.random_data,
                "commands": cfg.commands.iter().map(|c| c.template.name.clone()).collect::<Vec<_>>(),
                "distinct_client_seed": cfg.distinct_client_seed,
                "subscribers": cfg.subscribers,
                "subscriber_threads": cfg.subscriber_threads,
                "subscribe_channels": cfg.sub_channels.len(),
                "subscribe_patterns": cfg.sub_patterns.len(),
                "subscribe_shard_channels": cfg.sub_shard_channels.len(),
                "subscribe_resp3": cfg.subscribe_resp3,
            },
            "ALL STATS": all,
        });
        serde_json::to_string_pretty(&doc).unwrap_or_default()
    }
}

/// `--phase info`: what a suite runner needs to know about a spec.
pub fn spec_info(spec: &Spec) -> Result<String, String> {
    let pre = spec.phase_args(Phase::Preload)?;
    let bench = spec.phase_args(Phase::Benchmark)?;
    let v = json!({
        "name": spec.name,
        "dataset_name": spec.dbconfig.dataset_name,
        "keyspacelen": spec.dbconfig.check.as_ref().and_then(|c| c.keyspacelen),
        "preload": pre,
        "benchmark": bench,
    });
    serde_json::to_string(&v).map_err(|e| e.to_string())
}
