//! CLIENT PAUSE/UNPAUSE across worker threads, and the buffer fields CLIENT
//! LIST shows for connections other than the caller, at 1 and 2 workers.
//! A paused client's commands wait (they are not refused) until the
//! timeout or UNPAUSE; with WRITE only writes wait.
mod common;
use std::collections::HashMap;
use std::io::Read;
use std::time::{Duration, Instant};

use common::*;

/// The CLIENT LIST line of the client named `name`, as field => value.
fn listed(c: &mut redis::Connection, name: &str) -> HashMap<String, String> {
    let list: String = redis::cmd("CLIENT").arg("LIST").query(c).unwrap();
    let line = list.lines().find(|l| l.contains(&format!(" name={name} "))).unwrap_or_else(|| panic!("{name} in {list}"));
    line.split(' ').filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A named raw connection; with `worker`, one whose connection that worker
/// owns (new connections land on whichever worker accepts first).
fn named(s: &TestServer, name: &str, worker: Option<usize>) -> Raw {
    let mut c = s.conn();
    loop {
        let mut r = s.raw();
        r.roundtrip(&[b"CLIENT", b"SETNAME", name.as_bytes()], b"+OK\r\n");
        let on = listed(&mut c, name)["io-thread"].parse::<usize>().unwrap();
        if worker.is_none_or(|w| w == on) {
            return r;
        }
    }
}

/// Asserts nothing arrives on `r` for `ms` milliseconds.
fn silent_for(r: &mut Raw, ms: u64) {
    r.s.set_read_timeout(Some(Duration::from_millis(ms))).unwrap();
    let mut b = [0u8; 64];
    match r.s.read(&mut b) {
        Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
        other => panic!("expected no reply yet, got {other:?} {:?}", String::from_utf8_lossy(&b)),
    }
    r.s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
}

fn threads_of(s: &TestServer) -> usize {
    let mut c = s.conn();
    let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("threads").query(&mut c).unwrap();
    v[1].parse().unwrap()
}

#[test]
fn write_pause_holds_writes_on_every_worker_until_unpause() {
    each_threads(|s| {
        let last = threads_of(s) - 1;
        let mut admin = named(s, "admin", Some(0));
        let mut w = named(s, "writer", Some(last));
        rt(&mut admin, "CLIENT PAUSE 100000 WRITE", OK);
        // Reads go on; a write waits, and so does what was sent after it.
        rt(&mut w, "GET k", NIL);
        w.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
        silent_for(&mut w, 300);
        let mut c = s.conn();
        wait_for("the writer listed as blocked", || listed(&mut c, "writer")["flags"] == "b");
        // Held, it counts as blocked, as Redis counts a postponed client.
        assert_eq!(blocked(&mut c), 1);
        // A later, shorter pause does not end the one in force.
        rt(&mut admin, "CLIENT PAUSE 10 WRITE", OK);
        silent_for(&mut w, 200);
        rt(&mut admin, "CLIENT UNPAUSE", OK);
        w.expect(b"+OK\r\n$1\r\nv\r\n");
        assert_eq!(listed(&mut c, "writer")["flags"], "N");
        // MULTI queues a write only once the pause is over, and EXEC of a
        // transaction of reads is not held.
        rt(&mut admin, "CLIENT PAUSE 100000 WRITE", OK);
        rt(&mut w, "MULTI", OK);
        rt(&mut w, "GET k", b"+QUEUED\r\n");
        rt(&mut w, "EXEC", b"*1\r\n$1\r\nv\r\n");
        rt(&mut w, "MULTI", OK);
        w.cmd(&[b"SET", b"k", b"2"]);
        silent_for(&mut w, 200);
        rt(&mut admin, "CLIENT UNPAUSE", OK);
        w.expect(b"+QUEUED\r\n");
        rt(&mut w, "EXEC", b"*1\r\n+OK\r\n");
    });
}

/// A BLPOP that CLIENT PAUSE WRITE holds shows in `blocked_clients` (a
/// client that waits to see it there before it unpauses must not wait for
/// ever), goes on counting once it blocks for its list, and stops when
/// served; a held client that goes away stops counting.
#[test]
fn a_held_client_counts_as_blocked() {
    each_threads(|s| {
        let mut admin = named(s, "admin", None);
        let mut c = s.conn();
        rt(&mut admin, "CLIENT PAUSE 100000 WRITE", OK);
        let mut b = named(s, "blpop", None);
        b.cmd(&[b"BLPOP", b"held", b"0"]);
        wait_for("the BLPOP held", || blocked(&mut c) == 1);
        rt(&mut admin, "CLIENT UNPAUSE", OK);
        wait_for("the BLPOP blocked for its list", || listed(&mut c, "blpop")["cmd"] == "blpop");
        assert_eq!(blocked(&mut c), 1);
        rt(&mut admin, "RPUSH held x", b":1\r\n");
        b.expect(b"*2\r\n$4\r\nheld\r\n$1\r\nx\r\n");
        wait_for("served", || blocked(&mut c) == 0);
        rt(&mut admin, "CLIENT PAUSE 100000 WRITE", OK);
        let mut gone = named(s, "gone", None);
        gone.cmd(&[b"SET", b"k", b"v"]);
        wait_for("the SET held", || blocked(&mut c) == 1);
        drop(gone);
        wait_for("the closed client no longer counted", || blocked(&mut c) == 0);
        rt(&mut admin, "CLIENT UNPAUSE", OK);
    });
}

#[test]
fn all_pause_holds_every_command_until_its_timeout() {
    each_threads(|s| {
        let last = threads_of(s) - 1;
        let mut admin = named(s, "admin", Some(0));
        let mut other = named(s, "other", Some(last));
        let started = Instant::now();
        rt(&mut admin, "CLIENT PAUSE 600 ALL", OK);
        other.cmd(&[b"PING"]);
        // The pauser itself waits too.
        admin.cmd(&[b"CLIENT", b"UNPAUSE"]);
        other.expect(b"+PONG\r\n");
        admin.expect(OK);
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(550) && waited < Duration::from_secs(5), "{waited:?}");
        // A WRITE pause turned into ALL keeps its deadline: reads wait too.
        rt(&mut admin, "CLIENT PAUSE 100000 WRITE", OK);
        rt(&mut admin, "CLIENT PAUSE 10 ALL", OK);
        other.cmd(&[b"GET", b"k"]);
        silent_for(&mut other, 300);
        let mut fresh = s.raw();
        fresh.cmd(&[b"PING"]);
        silent_for(&mut fresh, 200);
    });
}

#[test]
fn pause_stops_active_expiry_and_errors_match_redis() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "CONFIG SET hz 100", OK);
        rt(&mut r, "SET k v PX 50", OK);
        rt(&mut r, "CLIENT PAUSE 100000 WRITE", OK);
        std::thread::sleep(Duration::from_millis(400));
        // Active expiry would have removed it by now (hz 100).
        rt(&mut r, "DBSIZE", b":1\r\n");
        rt(&mut r, "CLIENT UNPAUSE", OK);
        let mut c = s.conn();
        wait_for("active expiry after the pause", || redis::cmd("DBSIZE").query::<i64>(&mut c).unwrap() == 0);

        rt(&mut r, "CLIENT PAUSE 10 foo", b"-ERR CLIENT PAUSE mode must be WRITE or ALL\r\n");
        rt(&mut r, "CLIENT PAUSE abc foo", b"-ERR CLIENT PAUSE mode must be WRITE or ALL\r\n");
        rt(&mut r, "CLIENT PAUSE abc", b"-ERR timeout is not an integer or out of range\r\n");
        rt(&mut r, "CLIENT PAUSE 1.5 WRITE", b"-ERR timeout is not an integer or out of range\r\n");
        rt(&mut r, "CLIENT PAUSE -1", b"-ERR timeout is negative\r\n");
        rt(&mut r, "CLIENT PAUSE 9223372036854775807", b"-ERR timeout is out of range\r\n");
        rt(&mut r, "CLIENT PAUSE 9223372036854775808", b"-ERR timeout is not an integer or out of range\r\n");
        rt(&mut r, "CLIENT PAUSE 10 write x", b"-ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.\r\n");
        rt(&mut r, "CLIENT PAUSE", b"-ERR wrong number of arguments for 'client|pause' command\r\n");
        rt(&mut r, "CLIENT UNPAUSE x", b"-ERR wrong number of arguments for 'client|unpause' command\r\n");
        rt(&mut r, "CLIENT PAUSE 0", OK);
        rt(&mut r, "SET k v", OK);
    });
}

#[test]
fn client_list_shows_other_connections_buffers() {
    each_threads(|s| {
        let last = threads_of(s) - 1;
        let mut c = s.conn();
        // A request half sent: its bytes wait in the read buffer.
        let mut half = named(s, "half", Some(last));
        let part = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\nabc";
        half.send(part);
        wait_for("the partial request listed", || listed(&mut c, "half")["qbuf"] == part.len().to_string());
        let f = listed(&mut c, "half");
        assert!(f["qbuf-free"].parse::<usize>().unwrap() > 0, "{f:?}");
        assert!(f["tot-mem"].parse::<usize>().unwrap() > part.len(), "{f:?}");
        half.send(b"defghij\r\n");
        half.expect(OK);
        wait_for("the executed request gone from qbuf", || listed(&mut c, "half")["qbuf"] == "0");

        // Replies a client does not read wait in its output buffer.
        let big = vec![b'x'; 2 << 20];
        let _: () = redis::cmd("SET").arg("big").arg(&big).query(&mut c).unwrap();
        let mut slow = named(s, "slow", Some(last));
        let mut gets = Vec::new();
        for _ in 0..4 {
            gets.extend_from_slice(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n");
        }
        slow.send(&gets);
        wait_for("the unread replies listed", || listed(&mut c, "slow")["omem"] != "0");
        let f = listed(&mut c, "slow");
        let n = |k: &str| f[k].parse::<usize>().unwrap();
        assert!(n("omem") <= 4 * (big.len() + 16), "{f:?}");
        assert!(n("obl") + n("oll") > 0 && n("obl") <= n("omem") && n("rbs") > 0, "{f:?}");
        assert!(n("tot-mem") >= n("omem"), "{f:?}");
        assert_eq!(f["events"], "rw");
        let mut got = 0;
        let mut buf = vec![0u8; 1 << 16];
        let want = 4 * (big.len() + format!("${}\r\n\r\n", big.len()).len());
        while got < want {
            got += slow.s.read(&mut buf).unwrap();
        }
        wait_for("the drained output", || {
            let f = listed(&mut c, "slow");
            f["omem"] == "0" && f["obl"] == "0" && f["oll"] == "0"
        });
    });
}
