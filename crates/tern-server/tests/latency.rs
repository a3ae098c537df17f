//! LATENCY against the real binary, at 1 and 2 workers: the monitor's
//! events (`latency-monitor-threshold`), HISTOGRAM's cumulative
//! distributions, and the errors as redis-server 8.4 sends them.
mod common;
use common::*;

use redis::Value;

fn config_set(c: &mut redis::Connection, k: &str, v: &str) {
    let _: () = redis::cmd("CONFIG").arg("SET").arg(k).arg(v).query(c).unwrap();
}

/// An MSET of `n` keys: slow enough to take milliseconds.
fn big_mset(c: &mut redis::Connection, n: usize) {
    let mut cmd = redis::cmd("MSET");
    for i in 0..n {
        cmd.arg(format!("key:{i}")).arg("v");
    }
    let _: () = cmd.query(c).unwrap();
}

#[test]
fn monitor_events_latest_history_reset() {
    each_threads(|s| {
        let mut c = s.conn();
        // Off (the default): nothing is recorded.
        big_mset(&mut c, 100_000);
        let latest: Vec<(String, i64, i64, i64)> = redis::cmd("LATENCY").arg("LATEST").query(&mut c).unwrap();
        assert!(latest.iter().all(|e| e.0 != "command"), "{latest:?}");

        config_set(&mut c, "latency-monitor-threshold", "1");
        big_mset(&mut c, 100_000);
        let now: Vec<i64> = redis::cmd("TIME").query(&mut c).unwrap();
        let latest: Vec<(String, i64, i64, i64)> = redis::cmd("LATENCY").arg("LATEST").query(&mut c).unwrap();
        let cmd = latest.iter().find(|e| e.0 == "command").unwrap_or_else(|| panic!("{latest:?}"));
        assert!((now[0] - cmd.1).abs() <= 5 && cmd.2 >= 1 && cmd.3 >= cmd.2, "{cmd:?}");
        let hist: Vec<(i64, i64)> = redis::cmd("LATENCY").arg("HISTORY").arg("command").query(&mut c).unwrap();
        assert_eq!(hist.last(), Some(&(cmd.1, cmd.2)));
        let none: Vec<(i64, i64)> = redis::cmd("LATENCY").arg("HISTORY").arg("nosuch").query(&mut c).unwrap();
        assert!(none.is_empty());
        let n: i64 = redis::cmd("LATENCY").arg("RESET").arg("command").arg("nosuch").query(&mut c).unwrap();
        assert_eq!(n, 1);
        let hist: Vec<(i64, i64)> = redis::cmd("LATENCY").arg("HISTORY").arg("command").query(&mut c).unwrap();
        assert!(hist.is_empty());
        config_set(&mut c, "latency-monitor-threshold", "0");
        let _: i64 = redis::cmd("LATENCY").arg("RESET").query(&mut c).unwrap();
        let latest: Vec<Value> = redis::cmd("LATENCY").arg("LATEST").query(&mut c).unwrap();
        assert!(latest.is_empty());
    });
}

/// `{calls, histogram_usec: {µs: cumulative count}}` by command name.
type Histograms = Vec<(String, (String, i64, String, Vec<(i64, i64)>))>;

fn histogram(c: &mut redis::Connection, names: &[&str]) -> Histograms {
    let mut cmd = redis::cmd("LATENCY");
    cmd.arg("HISTOGRAM");
    for n in names {
        cmd.arg(*n);
    }
    let v: Value = cmd.query(c).unwrap();
    let Value::Array(items) = v else { panic!("{v:?}") };
    items
        .chunks(2)
        .map(|kv| {
            let name: String = redis::from_redis_value(&kv[0]).unwrap();
            let Value::Array(f) = &kv[1] else { panic!("{kv:?}") };
            let Value::Array(h) = &f[3] else { panic!("{f:?}") };
            let pairs: Vec<(i64, i64)> = h.chunks(2).map(|p| (redis::from_redis_value(&p[0]).unwrap(), redis::from_redis_value(&p[1]).unwrap())).collect();
            (name, (redis::from_redis_value(&f[0]).unwrap(), redis::from_redis_value(&f[1]).unwrap(), redis::from_redis_value(&f[2]).unwrap(), pairs))
        })
        .collect()
}

#[test]
fn histogram_cumulative_per_command() {
    each_threads(|s| {
        let mut conns: Vec<redis::Connection> = (0..3).map(|_| s.conn()).collect();
        for c in conns.iter_mut() {
            let _: () = redis::cmd("SET").arg("k").arg("v").query(c).unwrap();
        }
        let c = &mut conns[0];
        let _: Value = redis::cmd("CONFIG").arg("GET").arg("maxmemory").query(c).unwrap();
        let h = histogram(c, &["set", "nosuch", "config"]);
        let names: Vec<&str> = h.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["set", "config|get"], "a container brings its subcommands");
        let (calls_label, calls, hist_label, cdf) = &h[0].1;
        assert_eq!((calls_label.as_str(), *calls, hist_label.as_str()), ("calls", 3, "histogram_usec"));
        assert_eq!(cdf.last().map(|x| x.1), Some(3));
        assert!(cdf.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1), "{cdf:?}");
        // Redis's reporting levels: 1024 ns doubling, read as µs.
        assert!(cdf.iter().all(|(us, _)| [1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454, 16908, 33816, 67633, 135266, 270532, 541065, 1082130, 2164260, 4294967].contains(us)), "{cdf:?}");
        assert_eq!(histogram(c, &["config|get"]).len(), 1);
        assert!(histogram(c, &["nosuch"]).is_empty());
        let all = histogram(c, &[]);
        assert!(all.iter().any(|(n, _)| n == "set") && all.iter().any(|(n, _)| n == "latency|histogram"));
    });
}

#[test]
fn errors_byte_for_byte() {
    let s = TestServer::start(2);
    let mut r = s.raw();
    r.roundtrip(&[b"LATENCY", b"HISTORY"], b"-ERR wrong number of arguments for 'latency|history' command\r\n");
    r.roundtrip(&[b"LATENCY", b"LATEST", b"x"], b"-ERR wrong number of arguments for 'latency|latest' command\r\n");
    r.roundtrip(&[b"LATENCY", b"foo"], b"-ERR unknown subcommand 'foo'. Try LATENCY HELP.\r\n");
    r.roundtrip(&[b"LATENCY"], b"-ERR wrong number of arguments for 'latency' command\r\n");
    r.roundtrip(&[b"LATENCY", b"RESET", b"nosuch"], b":0\r\n");
    r.roundtrip(&[b"LATENCY", b"LATEST"], b"*0\r\n");
    r.roundtrip(&[b"LATENCY", b"HISTORY", b"command"], b"*0\r\n");
    r.roundtrip(&[b"LATENCY", b"HISTOGRAM", b"nosuch"], b"*0\r\n");
    r.cmd(&[b"LATENCY", b"HELP"]);
    r.expect(b"*17\r\n+LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+DOCTOR\r\n+    Return a human readable latency analysis report.\r\n+GRAPH <event>\r\n");
}

/// A verbatim/bulk reply's text (RESP2 bulk or RESP3 verbatim).
fn text(v: Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8(b).unwrap(),
        Value::VerbatimString { text, .. } => text,
        other => panic!("not text: {other:?}"),
    }
}

#[test]
fn doctor_and_graph_over_real_events() {
    each_threads(|s| {
        let mut c = s.conn();
        let doctor = |c: &mut redis::Connection| text(redis::cmd("LATENCY").arg("DOCTOR").query(c).unwrap());
        assert!(doctor(&mut c).starts_with("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance."));
        config_set(&mut c, "latency-monitor-threshold", "1000");
        let quiet = doctor(&mut c);
        assert!(
            quiet.starts_with("Dave, no latency spike was observed") || quiet.starts_with("\nI have a few advices for you:\n\n- I detected a non zero amount of anonymous huge pages"),
            "{quiet}"
        );
        config_set(&mut c, "latency-monitor-threshold", "5");
        // One `command` sample and no other event, read back within one
        // second (else again: the machine may add events of its own).
        let mut tries = 0;
        let mut last = String::new();
        loop {
            tries += 1;
            assert!(tries < 20, "never one lone command event: {last:?}");
            let _: i64 = redis::cmd("LATENCY").arg("RESET").query(&mut c).unwrap();
            config_set(&mut c, "latency-monitor-threshold", "5");
            big_mset(&mut c, 100_000);
            // The expire cycles that follow 100,000 new keys take
            // milliseconds too: keep the command's sample, not theirs.
            config_set(&mut c, "latency-monitor-threshold", "1000");
            let _: i64 = redis::cmd("LATENCY").arg("RESET").arg("expire-cycle").query(&mut c).unwrap();
            let hist: Vec<(i64, i64)> = redis::cmd("LATENCY").arg("HISTORY").arg("command").query(&mut c).unwrap();
            let t0: Vec<i64> = redis::cmd("TIME").query(&mut c).unwrap();
            let report = doctor(&mut c);
            let graph = text(redis::cmd("LATENCY").arg("GRAPH").arg("command").query(&mut c).unwrap());
            let latest: Vec<(String, i64, i64, i64)> = redis::cmd("LATENCY").arg("LATEST").query(&mut c).unwrap();
            let t1: Vec<i64> = redis::cmd("TIME").query(&mut c).unwrap();
            last = format!("{hist:?} {latest:?} {t0:?} {t1:?}");
            let [(at, ms)] = hist[..] else { continue };
            if t0[0] != t1[0] || latest.len() != 1 {
                continue;
            }
            let period = (t0[0] - at).max(1);
            let want = format!(
                "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n\
1. command: 1 latency spikes (average {ms}ms, mean deviation 0ms, period {period}.00 sec). Worst all time event {ms}ms.\n\n\
I have a few advices for you:\n\n\
- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n\
- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n"
            );
            // The huge-pages advice depends on the machine, not on Tern.
            let report = report.replace("- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n", "");
            assert_eq!(report, want);
            let ago = format!("{}s", t0[0] - at);
            let labels: String = ago.chars().map(|ch| format!("{ch}\n")).collect();
            let want = format!("command - high {ms} ms, low {ms} ms (all time high {ms} ms)\n{}\n \n \n \n_\n \n{labels}", "-".repeat(80));
            assert_eq!(graph, want);
            break;
        }
        config_set(&mut c, "latency-monitor-threshold", "0");
        let _: i64 = redis::cmd("LATENCY").arg("RESET").arg("COMMAND").query(&mut c).unwrap();
        let mut r = s.raw();
        r.roundtrip(&[b"LATENCY", b"GRAPH", b"command"], b"-ERR No samples available for event 'command'\r\n");
    });
}

#[test]
fn doctor_and_graph_errors() {
    let s = TestServer::start(1);
    let mut r = s.raw();
    r.roundtrip(&[b"LATENCY", b"GRAPH"], b"-ERR wrong number of arguments for 'latency|graph' command\r\n");
    r.roundtrip(&[b"LATENCY", b"GRAPH", b"a", b"b"], b"-ERR wrong number of arguments for 'latency|graph' command\r\n");
    r.roundtrip(&[b"LATENCY", b"DOCTOR", b"x"], b"-ERR wrong number of arguments for 'latency|doctor' command\r\n");
    r.roundtrip(&[b"LATENCY", b"GRAPH", b"nosuch"], b"-ERR No samples available for event 'nosuch'\r\n");
    r.roundtrip(&[b"LATENCY", b"GRAPH", b"a\r\nb"], b"-ERR No samples available for event 'a  b'\r\n");
}
