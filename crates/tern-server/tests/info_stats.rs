//! INFO's statistics sections against the real binary, at 1 and 2 workers:
//! latencystats (per-command percentiles, latency-tracking,
//! latency-tracking-info-percentiles) and what CONFIG RESETSTAT clears.
mod common;
use common::*;

fn info(c: &mut redis::Connection, sections: &[&str]) -> String {
    let mut cmd = redis::cmd("INFO");
    for s in sections {
        cmd.arg(*s);
    }
    cmd.query(c).unwrap()
}

/// The `key:value` line for `key`, if any.
fn field(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':')).map(str::to_string))
}

fn config_set(c: &mut redis::Connection, k: &str, v: &str) {
    let _: () = redis::cmd("CONFIG").arg("SET").arg(k).arg(v).query(c).unwrap();
}

/// `p50=1.003,p99=...` as (name, µs) pairs.
fn percentiles(line: &str) -> Vec<(String, f64)> {
    line.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

#[test]
fn latencystats_percentiles_per_command() {
    each_threads(|s| {
        let mut conns: Vec<redis::Connection> = (0..3).map(|_| s.conn()).collect();
        for (i, c) in conns.iter_mut().enumerate() {
            let _: () = redis::cmd("SET").arg("k").arg(i).query(c).unwrap();
            let _: String = redis::cmd("GET").arg("k").query(c).unwrap();
        }
        let c = &mut conns[0];
        // Not in the default sections; in `all`, `everything` and by name.
        assert!(!info(c, &[]).contains("# Latencystats"));
        for sections in [&["latencystats"][..], &["all"], &["everything"], &["server", "latencystats", "commandstats"]] {
            let text = info(c, sections);
            assert!(text.contains("# Latencystats\r\n"), "{sections:?}");
            let get = field(&text, "latency_percentiles_usec_get").expect("a line for GET");
            let p = percentiles(&get);
            let names: Vec<&str> = p.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, ["p50", "p99", "p99.9"]);
            assert!(p[0].1 > 0.0 && p[0].1 <= p[1].1 && p[1].1 <= p[2].1, "{get}");
            // Three decimals, as Redis prints them.
            assert!(get.split(',').all(|x| x.split('=').nth(1).unwrap().split('.').nth(1).unwrap().len() == 3), "{get}");
        }
        let both = info(c, &["server", "latencystats", "commandstats"]);
        assert!(both.contains("# Server\r\n") && both.contains("# Commandstats\r\n") && !both.contains("# Clients"));
        assert!(field(&both, "latency_percentiles_usec_config|set").is_none(), "CONFIG SET has not run");
        assert_eq!(field(&both, "cmdstat_get").map(|l| l.starts_with("calls=3,")), Some(true), "{both}");

        config_set(c, "latency-tracking-info-percentiles", "0 99.99 100");
        let text = info(c, &["latencystats"]);
        let p = percentiles(&field(&text, "latency_percentiles_usec_get").unwrap());
        let names: Vec<&str> = p.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["p0", "p99.99", "p100"]);
        assert!(p[0].1 <= p[2].1);
        let err = |c: &mut redis::Connection, v: &str| {
            let e: redis::RedisError = redis::cmd("CONFIG").arg("SET").arg("latency-tracking-info-percentiles").arg(v).query::<()>(c).unwrap_err();
            e.detail().unwrap_or_default().to_string()
        };
        assert_eq!(err(c, "50 abc"), "CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - Invalid latency-tracking-info-percentiles parameters");
        assert_eq!(err(c, "101"), "CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
        let shown: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("latency-tracking-info-percentiles").query(c).unwrap();
        assert_eq!(shown[1], "0 99.99 100", "a refused value changes nothing");
        config_set(c, "latency-tracking-info-percentiles", "");
        assert_eq!(field(&info(c, &["latencystats"]), "latency_percentiles_usec_get").as_deref(), Some(""));

        // Off: nothing is listed (and nothing recorded meanwhile).
        config_set(c, "latency-tracking", "no");
        let _: String = redis::cmd("GET").arg("k").query(c).unwrap();
        let _: i64 = redis::cmd("STRLEN").arg("k").query(c).unwrap();
        assert_eq!(info(c, &["latencystats"]), "# Latencystats\r\n");
        config_set(c, "latency-tracking", "yes");
        config_set(c, "latency-tracking-info-percentiles", "50 99 99.9");
        assert!(field(&info(c, &["latencystats"]), "latency_percentiles_usec_strlen").is_none());

        // RESETSTAT empties the histograms with the command counters.
        let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query(c).unwrap();
        let text = info(c, &["latencystats", "commandstats"]);
        assert!(field(&text, "latency_percentiles_usec_get").is_none(), "{text}");
        assert!(field(&text, "cmdstat_get").is_none(), "{text}");
        assert!(field(&text, "latency_percentiles_usec_config|resetstat").is_some(), "{text}");
    });
}

fn num(text: &str, key: &str) -> u64 {
    field(text, key).unwrap_or_else(|| panic!("no {key} in {text}")).trim().parse().unwrap()
}

/// The clients and stats fields Tern counts: reads and writes, clients
/// closed for their query buffer, clients watching, and RESETSTAT.
#[test]
fn clients_and_io_counters() {
    for t in [1, 2] {
        let s = TestServer::start_with(t, &["--client-query-buffer-limit", "1mb"]);
        let mut c = s.conn();
        let before = info(&mut c, &["stats"]);
        for _ in 0..5 {
            let _: () = redis::cmd("PING").query(&mut c).unwrap();
        }
        let after = info(&mut c, &["stats", "clients"]);
        // Each PING is one read and one write (INFO's own write comes after).
        assert!(num(&after, "total_reads_processed") >= num(&before, "total_reads_processed") + 6, "{after}");
        assert!(num(&after, "total_writes_processed") >= num(&before, "total_writes_processed") + 6, "{after}");
        assert_eq!(num(&after, "watching_clients"), 0);
        assert_eq!(num(&after, "total_forks"), 0);

        let mut w = s.conn();
        let _: () = redis::cmd("WATCH").arg("k").query(&mut w).unwrap();
        assert_eq!(num(&info(&mut c, &["clients"]), "watching_clients"), 1);

        // A request over the query buffer limit closes its client, counted.
        let mut r = s.raw();
        r.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n");
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..40 {
            if std::io::Write::write_all(&mut r.s, &chunk).is_err() {
                break;
            }
        }
        assert!(r.is_closed());
        assert_eq!(num(&info(&mut c, &["stats"]), "client_query_buffer_limit_disconnections"), 1);

        let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query(&mut c).unwrap();
        let reset = info(&mut c, &["stats"]);
        assert_eq!(num(&reset, "client_query_buffer_limit_disconnections"), 0);
        assert!(num(&reset, "total_reads_processed") <= 2, "{reset}");
    }
}

/// The fields redis_exporter reads that Tern reports since they were on
/// tests/python/test_exporter.py's INFO gap list: watched keys, the
/// timeout table, threaded I/O, reply buffer resizes, the time over
/// `maxmemory`, and the allocator and rehashing figures.
#[test]
fn exporter_gap_fields() {
    for t in [1, 2] {
        let s = TestServer::start(t);
        let mut c = s.conn();
        let n = |c: &mut redis::Connection, sec: &str, k: &str| num(&info(c, &[sec]), k);

        // WATCH: distinct keys, whoever watches them.
        assert_eq!(n(&mut c, "clients", "total_watched_keys"), 0);
        let mut w1 = s.conn();
        let mut w2 = s.conn();
        let _: () = redis::cmd("WATCH").arg("a").arg("b").query(&mut w1).unwrap();
        assert_eq!(n(&mut c, "clients", "total_watched_keys"), 2);
        let _: () = redis::cmd("WATCH").arg("a").arg("a").query(&mut w2).unwrap();
        assert_eq!(n(&mut c, "clients", "total_watched_keys"), 2, "a is watched twice, counted once");
        let _: () = redis::cmd("UNWATCH").query(&mut w1).unwrap();
        assert_eq!(n(&mut c, "clients", "total_watched_keys"), 1);
        let _: () = redis::cmd("SELECT").arg(1).query(&mut w1).unwrap();
        let _: () = redis::cmd("WATCH").arg("a").query(&mut w1).unwrap();
        assert_eq!(n(&mut c, "clients", "total_watched_keys"), 2, "each database's keys apart");
        let _: () = redis::cmd("MULTI").query(&mut w1).unwrap();
        let _: Vec<String> = redis::cmd("EXEC").query(&mut w1).unwrap();
        assert_eq!(n(&mut c, "clients", "total_watched_keys"), 1, "EXEC unwatches");
        drop(w2);
        wait_for("a closed client's watches to go", || n(&mut c, "clients", "total_watched_keys") == 0);

        // The timeout table: blocked with a timeout, not with 0.
        let mut b = s.raw();
        b.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$3\r\n100\r\n");
        wait_for("BLPOP to block", || n(&mut c, "clients", "blocked_clients") == 1);
        assert_eq!(n(&mut c, "clients", "clients_in_timeout_table"), 1);
        let _: i64 = redis::cmd("LPUSH").arg("q").arg("x").query(&mut c).unwrap();
        b.expect(b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n");
        wait_for("served", || n(&mut c, "clients", "blocked_clients") == 0);
        assert_eq!(n(&mut c, "clients", "clients_in_timeout_table"), 0);
        b.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n");
        wait_for("BLPOP 0 to block", || n(&mut c, "clients", "blocked_clients") == 1);
        assert_eq!(n(&mut c, "clients", "clients_in_timeout_table"), 0);
        let mut b2 = s.raw();
        b2.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nr\r\n$4\r\n0.05\r\n");
        wait_for("BLPOP 0.05 to block", || n(&mut c, "clients", "blocked_clients") == 2);
        assert_eq!(n(&mut c, "clients", "clients_in_timeout_table"), 1);
        b2.expect(b"*-1\r\n");
        wait_for("the timeout", || n(&mut c, "clients", "clients_in_timeout_table") == 0);
        b2.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nr\r\n$3\r\n100\r\n");
        wait_for("BLPOP 100 to block", || n(&mut c, "clients", "clients_in_timeout_table") == 1);
        drop(b2);
        wait_for("a closed client to leave the table", || n(&mut c, "clients", "clients_in_timeout_table") == 0);
        drop(b);

        // Threaded I/O: every worker's with more than one, none with one.
        let st = info(&mut c, &["stats"]);
        let (reads, writes) = (num(&st, "total_reads_processed"), num(&st, "total_writes_processed"));
        if t == 1 {
            assert_eq!((num(&st, "io_threaded_reads_processed"), num(&st, "io_threaded_writes_processed")), (0, 0));
        } else {
            assert_eq!((num(&st, "io_threaded_reads_processed"), num(&st, "io_threaded_writes_processed")), (reads, writes), "{st}");
        }

        // A large reply grows the reply buffer, which is given back once
        // written.
        let before = info(&mut c, &["stats"]);
        let items: Vec<String> = (0..5000).map(|i| format!("item-{i:020}")).collect();
        let _: i64 = redis::cmd("RPUSH").arg("big").arg(&items).query(&mut c).unwrap();
        let got: Vec<String> = redis::cmd("LRANGE").arg("big").arg(0).arg(-1).query(&mut c).unwrap();
        assert_eq!(got.len(), 5000);
        let after = info(&mut c, &["stats"]);
        assert!(num(&after, "reply_buffer_expands") > num(&before, "reply_buffer_expands"), "{after}");
        assert!(num(&after, "reply_buffer_shrinks") > num(&before, "reply_buffer_shrinks"), "{after}");

        // Allocator and rehashing figures are there, as numbers.
        let mem = info(&mut c, &["memory"]);
        let _ = num(&mem, "allocator_muzzy");
        let _ = num(&mem, "mem_overhead_db_hashtable_rehashing");

        // Over `maxmemory` with nothing to evict: the time adds up until
        // memory is under the limit again; RESETSTAT clears it.
        assert_eq!(n(&mut c, "stats", "total_eviction_exceeded_time"), 0);
        config_set(&mut c, "maxmemory-policy", "noeviction");
        config_set(&mut c, "maxmemory", "1mb");
        let e = redis::cmd("SET").arg("x").arg("y").query::<()>(&mut c).unwrap_err();
        assert_eq!(e.code(), Some("OOM"));
        std::thread::sleep(std::time::Duration::from_millis(120));
        let st = info(&mut c, &["stats"]);
        let (total, current) = (num(&st, "total_eviction_exceeded_time"), num(&st, "current_eviction_exceeded_time"));
        assert!(current >= 100 && total >= current, "{st}");
        config_set(&mut c, "maxmemory", "0");
        wait_for("the stretch to close", || n(&mut c, "stats", "current_eviction_exceeded_time") == 0);
        assert!(n(&mut c, "stats", "total_eviction_exceeded_time") >= total);
        let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query(&mut c).unwrap();
        let st = info(&mut c, &["stats"]);
        assert_eq!((num(&st, "total_eviction_exceeded_time"), num(&st, "current_eviction_exceeded_time")), (0, 0), "{st}");
    }
}
