//! Runs the real tern-bench binary against a real tern-server and checks
//! its accounting: every request sent gets a reply, error replies are
//! errors (not operations), hits and misses add up.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

use serde_json::Value;

/// tern-server lives in the same target directory as this test's binary
/// (`target/<profile>/deps/blackbox-…` → `target/<profile>/tern-server`).
fn server_bin() -> PathBuf {
    static BUILD: Once = Once::new();
    let exe = std::env::current_exe().expect("test exe path");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target dir")
        .to_path_buf();
    let bin = dir.join("tern-server");
    BUILD.call_once(|| {
        if !bin.exists() {
            // `cargo test -p tern-bench` alone does not build other packages' bins.
            let mut cmd = Command::new(env!("CARGO"));
            cmd.args(["build", "-p", "tern-server"]);
            if dir.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            let ok = cmd.status().map(|s| s.success()).unwrap_or(false);
            assert!(ok, "building tern-server failed");
        }
    });
    bin
}

struct Server {
    child: Child,
    port: u16,
    /// tern-server's memcached listener (ephemeral, like the RESP port).
    mc_port: u16,
}

impl Server {
    fn start(threads: usize) -> Server {
        let mut child = Command::new(server_bin())
            // No save schedule: no dump.rdb left in the crate's directory.
            .args(["--port", "0", "--memcache-port", "11211", "--threads", &threads.to_string(), "--save", ""])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn tern-server");
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        let next = |rx: &std::sync::mpsc::Receiver<String>| {
            rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("tern-server did not report its ports"))
        };
        let port = loop {
            let line = next(&rx);
            if let Some(p) = line.split("port=").nth(1) {
                break p.trim_end_matches('.').parse().expect("port");
            }
        };
        let mc_port = loop {
            let line = next(&rx);
            if let Some(p) = line.split("memcache port=").nth(1) {
                break p.trim_end_matches('.').parse().expect("memcache port");
            }
        };
        Server {
            child,
            port,
            mc_port,
        }
    }

    fn cmd(&self, req: &[u8]) -> Vec<u8> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        s.write_all(req).expect("write");
        let mut buf = vec![0; 512];
        let n = s.read(&mut buf).expect("read");
        buf.truncate(n);
        buf
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn bench(port: u16, args: &[&str]) -> (Value, String) {
    let dir = std::env::temp_dir();
    let json = dir.join(format!(
        "tern-bench-test-{}-{}.json",
        std::process::id(),
        port
    ));
    let out = Command::new(env!("CARGO_BIN_EXE_tern-bench"))
        .args([
            "-p",
            &port.to_string(),
            "--hide-histogram",
            "--json-out-file",
        ])
        .arg(&json)
        .args(args)
        .output()
        .expect("run tern-bench");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "tern-bench failed: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value =
        serde_json::from_slice(&std::fs::read(&json).expect("json written")).expect("valid json");
    let _ = std::fs::remove_file(&json);
    (v, text)
}

fn totals(v: &Value) -> &Value {
    &v["ALL STATS"]["Totals"]
}

fn n(v: &Value, field: &str) -> u64 {
    v[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} missing in {v}"))
}

fn each_threads(f: impl Fn(&Server)) {
    for t in [1, 2] {
        f(&Server::start(t));
    }
}

#[test]
fn set_get_counts_add_up() {
    each_threads(|s| {
        let (v, text) = bench(
            s.port,
            &[
                "-t",
                "2",
                "-c",
                "3",
                "--pipeline",
                "4",
                "-n",
                "200",
                "--ratio",
                "1:1",
            ],
        );
        let t = totals(&v);
        assert_eq!(n(t, "Requests Sent"), 2 * 3 * 200, "{text}");
        assert_eq!(n(t, "Replies Received"), 2 * 3 * 200);
        assert_eq!(
            (n(t, "Count"), n(t, "Errors"), n(t, "Connection Errors")),
            (1200, 0, 0)
        );
        let gets = &v["ALL STATS"]["Gets"];
        assert_eq!(n(gets, "Count"), 600);
        assert_eq!(n(gets, "Hits") + n(gets, "Misses"), 600);
        let series: u64 = t["Time-Serie"]
            .as_object()
            .unwrap()
            .values()
            .map(|s| n(s, "Count"))
            .sum();
        assert_eq!(series, 1200);
        assert!(t["Percentile Latencies"]["p99.90"].as_f64().unwrap() > 0.0);
    });
}

#[test]
fn error_replies_are_errors_not_ops() {
    each_threads(|s| {
        let (v, text) = bench(
            s.port,
            &[
                "-t",
                "1",
                "-c",
                "2",
                "--pipeline",
                "3",
                "-n",
                "100",
                "--command",
                "NOSUCHCMD __key__",
                "--command",
                "SET __key__ __data__",
            ],
        );
        let t = totals(&v);
        assert_eq!(
            (n(t, "Requests Sent"), n(t, "Replies Received")),
            (200, 200),
            "{text}"
        );
        assert_eq!((n(t, "Count"), n(t, "Errors")), (100, 100), "{text}");
        assert_eq!(n(&v["ALL STATS"]["Nosuchcmds"], "Count"), 0);
        assert!(
            text.contains("first error: ERR unknown command 'NOSUCHCMD'"),
            "{text}"
        );
        // Wrong arity is an error reply too.
        let (v, _) = bench(
            s.port,
            &[
                "-t",
                "1",
                "-c",
                "1",
                "-n",
                "10",
                "--command",
                "GET __key__ extra",
            ],
        );
        assert_eq!((n(totals(&v), "Count"), n(totals(&v), "Errors")), (0, 10));
    });
}

#[test]
fn preload_all_keys_then_mget_hits() {
    each_threads(|s| {
        let (v, text) = bench(
            s.port,
            &[
                "-t",
                "2",
                "-c",
                "3",
                "--pipeline",
                "7",
                "-n",
                "allkeys",
                "--ratio",
                "1:0",
                "--key-pattern",
                "P:P",
                "--key-minimum",
                "1",
                "--key-maximum",
                "1000",
                "-d",
                "10",
                "--random-data",
            ],
        );
        assert_eq!(n(totals(&v), "Count"), 1000, "{text}");
        assert_eq!(s.cmd(b"DBSIZE\r\n"), b":1000\r\n");
        let (v, text) = bench(
            s.port,
            &[
                "-t",
                "1",
                "-c",
                "2",
                "-n",
                "50",
                "--key-minimum",
                "1",
                "--key-maximum",
                "1000",
                "--distinct-client-seed",
                "--command",
                "MGET __key__ __key__ __key__",
                "--protocol",
                "resp3",
            ],
        );
        let m = &v["ALL STATS"]["Mgets"];
        assert_eq!(
            (n(m, "Count"), n(m, "Errors"), n(m, "Hits"), n(m, "Misses")),
            (100, 0, 300, 0),
            "{text}"
        );
    });
}

#[test]
fn test_time_stops_and_drains() {
    let s = Server::start(1);
    let (v, text) = bench(
        s.port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "--pipeline",
            "8",
            "--test-time",
            "1",
            "--ratio",
            "1:3",
        ],
    );
    let t = totals(&v);
    assert_eq!(n(t, "Requests Sent"), n(t, "Replies Received"), "{text}");
    assert!(n(t, "Count") > 100, "{text}");
    let d = n(&v["ALL STATS"]["Runtime"], "Total duration");
    assert!((1000..3000).contains(&d), "duration {d} ms");
}

#[test]
fn rate_limiting_paces_each_connection() {
    let s = Server::start(1);
    // 4 connections × 200 requests/s for 2 s: about 1,600 requests, where an
    // unpaced run sends tens of thousands; idle connections still end on time.
    let (v, text) = bench(
        s.port,
        &["-t", "2", "-c", "2", "--test-time", "2", "--rate-limiting", "200", "--ratio", "1:1"],
    );
    let t = totals(&v);
    let count = n(t, "Count");
    assert!((1200..=1700).contains(&count), "{count} requests: {text}");
    assert_eq!(n(t, "Requests Sent"), n(t, "Replies Received"), "{text}");
    let d = n(&v["ALL STATS"]["Runtime"], "Total duration");
    assert!((2000..3500).contains(&d), "duration {d} ms");
    let out = Command::new(env!("CARGO_BIN_EXE_tern-bench"))
        .args(["-p", &s.port.to_string(), "--rate-limiting", "0"])
        .output()
        .expect("run tern-bench");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rate-limiting must be at least 1"));
}

#[test]
fn memcache_text_and_meta() {
    each_threads(|s| {
        let mc = s.mc_port;
        let (v, text) = bench(
            mc,
            &[
                "--protocol",
                "memcache_text",
                "-t",
                "1",
                "-c",
                "3",
                "--pipeline",
                "5",
                "-n",
                "allkeys",
                "--ratio",
                "1:0",
                "--key-pattern",
                "P:P",
                "--key-minimum",
                "1",
                "--key-maximum",
                "300",
                "-d",
                "20",
            ],
        );
        assert_eq!(
            (n(totals(&v), "Count"), n(totals(&v), "Errors")),
            (300, 0),
            "{text}"
        );
        assert_eq!(s.cmd(b"DBSIZE\r\n"), b":300\r\n");
        // Keys 1..600: half of them were preloaded.
        for proto in ["memcache_text", "memcache_meta"] {
            let (v, text) = bench(
                mc,
                &[
                    "--protocol",
                    proto,
                    "-t",
                    "1",
                    "-c",
                    "2",
                    "--pipeline",
                    "4",
                    "-n",
                    "40",
                    "--key-minimum",
                    "1",
                    "--key-maximum",
                    "600",
                    "--distinct-client-seed",
                    "--command",
                    "MGET __key__ __key__ __key__",
                ],
            );
            let m = &v["ALL STATS"]["Mgets"];
            assert_eq!(
                (n(m, "Count"), n(m, "Errors"), n(m, "Hits") + n(m, "Misses")),
                (80, 0, 240),
                "{text}"
            );
            assert!(n(m, "Hits") > 60 && n(m, "Misses") > 60, "{text}");
            let t = totals(&v);
            assert_eq!(n(t, "Requests Sent"), n(t, "Replies Received"));
            let (v, text) = bench(
                mc,
                &[
                    "--protocol",
                    proto,
                    "-t",
                    "1",
                    "-c",
                    "1",
                    "-n",
                    "30",
                    "--ratio",
                    "1:2",
                ],
            );
            assert_eq!(
                (n(totals(&v), "Count"), n(totals(&v), "Errors")),
                (30, 0),
                "{text}"
            );
        }
        // memcached answers an unknown command with ERROR: an error, not an op.
        let (v, text) = bench(
            mc,
            &[
                "--protocol",
                "memcache_text",
                "-t",
                "1",
                "-c",
                "2",
                "-n",
                "10",
                "--command",
                "bogus __key__",
            ],
        );
        assert_eq!(
            (n(totals(&v), "Count"), n(totals(&v), "Errors")),
            (0, 20),
            "{text}"
        );
    });
}

#[test]
fn spec_phases_run_with_overrides() {
    let spec = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/bench/specs/memtier_benchmark-1Mkeys-string-get-100B-pipeline-10.yml"
    );
    if !std::path::Path::new(spec).exists() {
        return;
    }
    let s = Server::start(1);
    // The spec's preload (P:P over 1..1M, 100 B) shrunk by later options.
    let (v, text) = bench(
        s.port,
        &[
            "--spec",
            spec,
            "--phase",
            "preload",
            "-t",
            "1",
            "-c",
            "2",
            "--key-maximum",
            "400",
            "-n",
            "allkeys",
        ],
    );
    assert_eq!(
        (n(totals(&v), "Count"), n(totals(&v), "Errors")),
        (400, 0),
        "{text}"
    );
    assert_eq!(s.cmd(b"DBSIZE\r\n"), b":400\r\n");
    assert_eq!(s.cmd(b"STRLEN memtier-400\r\n"), b":100\r\n");
    let (v, text) = bench(
        s.port,
        &[
            "--spec",
            spec,
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "30",
            "--key-maximum",
            "400",
        ],
    );
    let g = &v["ALL STATS"]["Gets"];
    assert_eq!(
        (n(g, "Count"), n(g, "Hits"), n(g, "Misses")),
        (60, 60, 0),
        "{text}"
    );
    let info = Command::new(env!("CARGO_BIN_EXE_tern-bench"))
        .args(["--spec", spec, "--phase", "info"])
        .output()
        .expect("run");
    let info: Value = serde_json::from_slice(&info.stdout).expect("info json");
    assert_eq!(info["keyspacelen"], 1_000_000);
    assert_eq!(
        info["name"],
        "memtier_benchmark-1Mkeys-string-get-100B-pipeline-10"
    );
}

#[test]
fn miss_set_fills_what_zipf_gets_missed() {
    let s = Server::start(1);
    // One connection, one request at a time: each miss is followed by the
    // SET of its key before the next GET, so misses are first reads.
    let (v, text) = bench(
        s.port,
        &[
            "-t", "1", "-c", "1", "-n", "3000", "--command", "GET __key__", "--command-key-pattern", "Z",
            "--zipf-alpha", "1.1", "--key-minimum", "1", "--key-maximum", "500", "--miss-set",
        ],
    );
    let gets = &v["ALL STATS"]["Gets"];
    let sets = &v["ALL STATS"]["Sets"];
    let (hits, misses) = (n(gets, "Hits"), n(gets, "Misses"));
    assert_eq!(n(gets, "Count") + n(sets, "Count"), 3000, "{text}");
    assert_eq!(hits + misses, n(gets, "Count"));
    // Every miss was a key never read before, and each got its SET.
    assert_eq!(n(sets, "Count"), misses);
    let dbsize = s.cmd(b"*1\r\n$6\r\nDBSIZE\r\n");
    assert_eq!(dbsize, format!(":{misses}\r\n").into_bytes());
    // Zipf 1.1 over 500 keys: most reads hit the few hottest keys.
    assert!(hits > 2 * misses, "{hits} hits, {misses} misses");
}

#[test]
fn subscribers_receive_what_publish_announced() {
    each_threads(|s| {
        // 4 publishers over 10 channels, 4 subscribers: each channel has one
        // subscriber, and the pattern `chan-1*` (of these channels it
        // matches chan-1 only) adds a pmessage to every PUBLISH to chan-1.
        let (v, text) = bench(
            s.port,
            &[
                "-t", "2", "-c", "2", "--pipeline", "4", "-n", "100", "--key-prefix", "",
                "--key-maximum", "9", "--command", "PUBLISH chan-__key__ __time_us__",
                "--subscribers", "4", "--subscribe-channels", "chan-{0..9}",
                "--subscribe-patterns", "chan-1*",
            ],
        );
        let t = totals(&v);
        assert_eq!((n(t, "Count"), n(t, "Errors")), (400, 0), "{text}");
        let sub = &v["ALL STATS"]["Subscribers"];
        let pm = n(&sub["Pmessages"], "Count");
        // Every PUBLISH reached its channel's subscriber; those to chan-1
        // the pattern's too, and PUBLISH's replies counted both.
        assert_eq!(n(&sub["Messages"], "Count"), 400, "{text}");
        assert!(pm > 0 && pm < 400, "{text}");
        assert_eq!(n(sub, "Count"), 400 + pm);
        assert_eq!(n(sub, "Publish Receivers"), 400 + pm);
        assert_eq!((n(sub, "Untimed"), n(sub, "Timed"), n(sub, "Connection Errors")), (0, 400 + pm, 0));
        let p999 = sub["Percentile Latencies"]["p99.90"].as_f64().unwrap();
        assert!(p999 > 0.0 && p999 < 10_000.0, "{text}");
    });
}

#[test]
fn fan_out_over_resp3_and_shard_channels() {
    let s = Server::start(2);
    // One publisher, 50 subscribers of one channel on two threads, RESP3.
    let (v, text) = bench(
        s.port,
        &[
            "-t", "1", "-c", "1", "-n", "50", "-d", "40", "--command", "PUBLISH news __time_us__",
            "--subscribers", "50", "--subscriber-threads", "2", "--subscribe-channels", "news",
            "--subscribe-resp3",
        ],
    );
    let sub = &v["ALL STATS"]["Subscribers"];
    assert_eq!((n(sub, "Count"), n(sub, "Publish Receivers"), n(sub, "Untimed")), (2500, 2500, 0), "{text}");
    assert!(text.contains("SUBSCRIBERS (50 connections on 2 thread(s), RESP3"), "{text}");
    // SSUBSCRIBE and SPUBLISH; a payload without __time_us__ is counted, untimed.
    let (v, text) = bench(
        s.port,
        &[
            "-t", "1", "-c", "2", "--pipeline", "8", "-n", "30", "--command", "SPUBLISH s __data__",
            "--subscribers", "1", "--subscribe-shard-channels", "s",
        ],
    );
    let sub = &v["ALL STATS"]["Subscribers"];
    assert_eq!((n(&sub["Smessages"], "Count"), n(sub, "Untimed")), (60, 60), "{text}");
    // A subscriber that cannot subscribe (here: a memcached port answers
    // in its own protocol) ends the run before the load, with the reason.
    let out = Command::new(env!("CARGO_BIN_EXE_tern-bench"))
        .args(["-p", &s.mc_port.to_string(), "--subscribers", "1", "--subscribe-channels", "c"])
        .output()
        .expect("run tern-bench");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("subscribing: 0 of 1 subscribers ready: subscriber: bad reply"), "{err}");
    assert!(out.stdout.is_empty());
}
