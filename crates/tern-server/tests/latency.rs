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
    r.expect(b"*13\r\n+LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+HISTORY <event>\r\n");
}
