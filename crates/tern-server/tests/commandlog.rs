//! SLOWLOG and COMMANDLOG against the real binary, at 1 and 2 workers:
//! what enters each log and when, the entries' shape, truncation and
//! redaction, the per-worker logs merged newest first, and the errors byte
//! for byte (as redis-server 8.4 and valkey-server 8.1 send them).
mod common;
use common::*;

/// id, time, duration or size, arguments, address, name.
type Entry = (i64, i64, i64, Vec<Vec<u8>>, String, Vec<u8>);

fn log(c: &mut redis::Connection, kind: &str) -> Vec<Entry> {
    redis::cmd("COMMANDLOG").arg("GET").arg(-1).arg(kind).query(c).unwrap()
}

fn set(c: &mut redis::Connection, pairs: &[(&str, &str)]) {
    let mut cmd = redis::cmd("CONFIG");
    cmd.arg("SET");
    for (k, v) in pairs {
        cmd.arg(*k).arg(*v);
    }
    let _: () = cmd.query(c).unwrap();
}

fn args_of(e: &Entry) -> Vec<String> {
    e.3.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect()
}

/// Turns every log off (the CONFIG SET itself is then not logged) and
/// empties them.
fn quiet(c: &mut redis::Connection) {
    set(c, &[("slowlog-log-slower-than", "-1"), ("commandlog-request-larger-than", "-1"), ("commandlog-reply-larger-than", "-1")]);
    for k in ["slow", "large-request", "large-reply"] {
        let _: () = redis::cmd("COMMANDLOG").arg("RESET").arg(k).query(c).unwrap();
    }
}

#[test]
fn slow_log_entries_across_connections_newest_first() {
    each_threads(|s| {
        let mut admin = s.conn();
        let mut conns: Vec<redis::Connection> = (0..4).map(|_| s.conn()).collect();
        let _: () = redis::cmd("CLIENT").arg("SETNAME").arg("third").query(&mut conns[2]).unwrap();
        quiet(&mut admin);
        set(&mut admin, &[("slowlog-log-slower-than", "0")]);
        for (i, c) in conns.iter_mut().enumerate() {
            let _: () = redis::cmd("SET").arg(format!("k{i}")).arg(i).query(c).unwrap();
        }
        set(&mut admin, &[("slowlog-log-slower-than", "-1")]);
        let mut all: Vec<Entry> = redis::cmd("SLOWLOG").arg("GET").arg(-1).query(&mut admin).unwrap();
        // The CONFIG SET that turned the log on is its oldest entry.
        assert_eq!(all.pop().map(|e| args_of(&e)[..3].join(" ")), Some("CONFIG SET slowlog-log-slower-than".into()));
        let cmds: Vec<Vec<String>> = all.iter().map(args_of).collect();
        assert_eq!(cmds, [vec!["SET", "k3", "3"], vec!["SET", "k2", "2"], vec!["SET", "k1", "1"], vec!["SET", "k0", "0"]], "{all:?}");
        // Ids follow the order the commands ran in, whichever worker ran them.
        assert!(all.windows(2).all(|w| w[0].0 == w[1].0 + 1), "{all:?}");
        assert_eq!(all[1].5, b"third");
        assert!(all[0].5.is_empty());
        let now: Vec<i64> = redis::cmd("TIME").query(&mut admin).unwrap();
        assert!(all.iter().all(|e| (now[0] - e.1).abs() <= 5 && e.2 >= 0 && e.4.starts_with("127.0.0.1:")));
        // The same entries, through both commands.
        assert_eq!(log(&mut admin, "slow")[..4], all);
        let n: i64 = redis::cmd("SLOWLOG").arg("LEN").query(&mut admin).unwrap();
        assert_eq!(n, 5);
        // The default count is 10; 0 is none.
        let none: Vec<Entry> = redis::cmd("SLOWLOG").arg("GET").arg(0).query(&mut admin).unwrap();
        assert!(none.is_empty());
        let first: Vec<Entry> = redis::cmd("SLOWLOG").arg("GET").arg(1).query(&mut admin).unwrap();
        assert_eq!(first, all[..1]);
        let _: () = redis::cmd("SLOWLOG").arg("RESET").query(&mut admin).unwrap();
        let n: i64 = redis::cmd("COMMANDLOG").arg("LEN").arg("slow").query(&mut admin).unwrap();
        assert_eq!(n, 0);
    });
}

#[test]
fn max_len_bounds_the_merged_log() {
    each_threads(|s| {
        let mut admin = s.conn();
        let mut conns: Vec<redis::Connection> = (0..3).map(|_| s.conn()).collect();
        quiet(&mut admin);
        set(&mut admin, &[("commandlog-slow-execution-max-len", "3"), ("slowlog-log-slower-than", "0")]);
        for round in 0..3 {
            for (i, c) in conns.iter_mut().enumerate() {
                let _: () = redis::cmd("SET").arg(format!("k{i}")).arg(round).query(c).unwrap();
            }
        }
        set(&mut admin, &[("slowlog-log-slower-than", "-1")]);
        let all = log(&mut admin, "slow");
        let keys: Vec<String> = all.iter().map(|e| args_of(e)[1].clone()).collect();
        assert_eq!(keys, ["k2", "k1", "k0"], "{all:?}");
        assert!(all.iter().all(|e| e.3[2] == b"2"));
        let n: i64 = redis::cmd("SLOWLOG").arg("LEN").query(&mut admin).unwrap();
        assert_eq!(n, 3);
        assert_eq!(get_cfg(&mut admin, "slowlog-max-len"), "3", "the Valkey name is an alias");
        // max-len 0 keeps nothing.
        set(&mut admin, &[("slowlog-max-len", "0"), ("slowlog-log-slower-than", "0")]);
        let _: () = redis::cmd("SET").arg("x").arg(1).query(&mut admin).unwrap();
        set(&mut admin, &[("slowlog-log-slower-than", "-1")]);
        assert!(log(&mut admin, "slow").is_empty());
    });
}

fn get_cfg(c: &mut redis::Connection, name: &str) -> String {
    let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg(name).query(c).unwrap();
    v[1].clone()
}

#[test]
fn large_request_and_reply_sizes_are_wire_bytes() {
    each_threads(|s| {
        let mut c = s.conn();
        quiet(&mut c);
        // `*3 $3 SET $1 k $10 0123456789` is 37 bytes; its reply `$10 ...` 17.
        set(&mut c, &[("commandlog-request-larger-than", "37"), ("commandlog-reply-larger-than", "17")]);
        let _: () = redis::cmd("SET").arg("k").arg("012345678").query(&mut c).unwrap();
        let _: () = redis::cmd("SET").arg("k").arg("0123456789").query(&mut c).unwrap();
        let _: String = redis::cmd("GET").arg("k").query(&mut c).unwrap();
        set(&mut c, &[("commandlog-request-larger-than", "-1"), ("commandlog-reply-larger-than", "-1")]);
        let req = log(&mut c, "large-request");
        let sizes: Vec<(i64, Vec<String>)> = req.iter().map(|e| (e.2, args_of(e))).collect();
        // Newest first: the CONFIG SET that turned the log on, then SET.
        assert_eq!(sizes[0], (37, vec!["SET".to_string(), "k".into(), "0123456789".into()]), "{req:?}");
        assert_eq!(sizes.len(), 2, "{req:?}");
        let rep = log(&mut c, "large-reply");
        assert_eq!(rep.len(), 1, "{rep:?}");
        assert_eq!((rep[0].2, args_of(&rep[0])), (17, vec!["GET".to_string(), "k".into()]));
    });
}

/// A value sent by reference is counted by its length: the logged size is
/// the whole reply's, and the reply was not copied (INFO counts it).
#[test]
fn copy_avoided_reply_counted_by_its_length() {
    let s = TestServer::start_with(2, &["--reply-copy-avoid-min-size", "1024"]);
    let mut c = s.conn();
    quiet(&mut c);
    let value = vec![b'v'; 65536];
    let _: () = redis::cmd("SET").arg("big").arg(&value).query(&mut c).unwrap();
    let info = |c: &mut redis::Connection| -> u64 {
        let text: String = redis::cmd("INFO").arg("stats").query(c).unwrap();
        text.lines().find_map(|l| l.strip_prefix("reply_copy_avoided:")).unwrap().trim().parse().unwrap()
    };
    let before = info(&mut c);
    // `$65536\r\n` + the value + CRLF.
    let size = 8 + 65536 + 2;
    set(&mut c, &[("commandlog-reply-larger-than", &(size + 1).to_string())]);
    let _: Vec<u8> = redis::cmd("GET").arg("big").query(&mut c).unwrap();
    set(&mut c, &[("commandlog-reply-larger-than", &size.to_string())]);
    let got: Vec<u8> = redis::cmd("GET").arg("big").query(&mut c).unwrap();
    assert_eq!(got, value);
    set(&mut c, &[("commandlog-reply-larger-than", "-1")]);
    assert_eq!(info(&mut c), before + 2, "both GETs sent the value by reference");
    let rep = log(&mut c, "large-reply");
    let sizes: Vec<(i64, Vec<String>)> = rep.iter().map(|e| (e.2, args_of(e))).collect();
    assert_eq!(sizes, [(size as i64, vec!["GET".to_string(), "big".into()])]);
}

#[test]
fn arguments_truncated_and_secrets_redacted() {
    each_threads(|s| {
        let mut c = s.conn();
        quiet(&mut c);
        set(&mut c, &[("slowlog-log-slower-than", "0")]);
        let mut mset = redis::cmd("MSET");
        for i in 0..20 {
            mset.arg(format!("k{i}")).arg(i);
        }
        let _: () = mset.query(&mut c).unwrap();
        let _: () = redis::cmd("SET").arg("long").arg(vec![b'x'; 200]).query(&mut c).unwrap();
        let _: redis::RedisResult<()> = redis::cmd("AUTH").arg("user").arg("secret").query(&mut c);
        let _: redis::RedisResult<redis::Value> = redis::cmd("HELLO").arg(2).arg("AUTH").arg("default").arg("secret").arg("SETNAME").arg("me").query(&mut c);
        set(&mut c, &[("requirepass", ""), ("maxmemory", "0")]);
        set(&mut c, &[("slowlog-log-slower-than", "-1")]);
        let all = log(&mut c, "slow");
        // The oldest is the CONFIG SET that turned the log on.
        let args: Vec<Vec<String>> = all.iter().rev().skip(1).map(args_of).collect();
        assert_eq!(args[0].len(), 32);
        assert_eq!(args[0][29..31], ["k14", "14"]);
        assert_eq!(args[0][31], "... (10 more arguments)");
        assert_eq!(args[1][2], format!("{}... (72 more bytes)", "x".repeat(128)));
        assert_eq!(args[2], ["AUTH", "(redacted)", "(redacted)"]);
        assert_eq!(args[3], ["HELLO", "2", "AUTH", "(redacted)", "(redacted)", "SETNAME", "me"]);
        assert_eq!(args[4], ["CONFIG", "SET", "requirepass", "(redacted)", "maxmemory", "0"]);
    });
}

/// EXEC is not logged; the commands it runs are, each with its own
/// reply, and with EXEC's request size (as in Valkey).
#[test]
fn exec_logs_its_commands_not_itself() {
    each_threads(|s| {
        let mut c = s.conn();
        quiet(&mut c);
        set(&mut c, &[("slowlog-log-slower-than", "0"), ("commandlog-request-larger-than", "0")]);
        let _: redis::Value = redis::pipe().atomic().cmd("SET").arg("a").arg(1).cmd("INCR").arg("a").query(&mut c).unwrap();
        set(&mut c, &[("slowlog-log-slower-than", "-1"), ("commandlog-request-larger-than", "-1")]);
        // Past the CONFIG SET that turned the logs on.
        let slow: Vec<Vec<String>> = log(&mut c, "slow").iter().rev().skip(1).map(args_of).collect();
        assert_eq!(slow, [vec!["MULTI"], vec!["SET", "a", "1"], vec!["INCR", "a"]]);
        let req: Vec<(i64, Vec<String>)> = log(&mut c, "large-request").iter().rev().skip(1).map(|e| (e.2, args_of(e))).collect();
        // `*1 $5 MULTI` is 15 bytes, `*1 $4 EXEC` 14.
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(req, [(15, v(&["MULTI"])), (14, v(&["SET", "a", "1"])), (14, v(&["INCR", "a"]))]);
    });
}

#[test]
fn errors_byte_for_byte() {
    let s = TestServer::start(1);
    let mut r = s.raw();
    let count = b"-ERR count should be greater than or equal to -1\r\n";
    let kind = b"-ERR type should be one of the following: slow, large-request, large-reply\r\n";
    r.roundtrip(&[b"SLOWLOG", b"GET", b"x"], count);
    r.roundtrip(&[b"SLOWLOG", b"GET", b"-2"], count);
    r.roundtrip(&[b"SLOWLOG", b"GET", b"99999999999999999999"], count);
    r.roundtrip(&[b"SLOWLOG", b"get", b"1", b"2"], b"-ERR unknown subcommand or wrong number of arguments for 'get'. Try SLOWLOG HELP.\r\n");
    r.roundtrip(&[b"SLOWLOG", b"LEN", b"x"], b"-ERR wrong number of arguments for 'slowlog|len' command\r\n");
    r.roundtrip(&[b"SLOWLOG", b"foo"], b"-ERR unknown subcommand 'foo'. Try SLOWLOG HELP.\r\n");
    r.roundtrip(&[b"SLOWLOG"], b"-ERR wrong number of arguments for 'slowlog' command\r\n");
    r.roundtrip(&[b"COMMANDLOG", b"GET", b"1"], b"-ERR wrong number of arguments for 'commandlog|get' command\r\n");
    r.roundtrip(&[b"COMMANDLOG", b"GET", b"x", b"foo"], count);
    r.roundtrip(&[b"COMMANDLOG", b"GET", b"1", b"foo"], kind);
    r.roundtrip(&[b"COMMANDLOG", b"LEN", b"foo"], kind);
    r.roundtrip(&[b"COMMANDLOG", b"RESET", b"foo"], kind);
    r.roundtrip(&[b"COMMANDLOG", b"GET", b"0", b"LARGE-REPLY"], b"*0\r\n");
    r.roundtrip(&[b"COMMANDLOG", b"foo"], b"-ERR unknown subcommand 'foo'. Try COMMANDLOG HELP.\r\n");
    r.roundtrip(
        &[b"CONFIG", b"SET", b"commandlog-request-larger-than", b"-2"],
        b"-ERR CONFIG SET failed (possibly related to argument 'commandlog-request-larger-than') - argument must be between -1 and 9223372036854775807 inclusive\r\n",
    );
    r.cmd(&[b"SLOWLOG", b"HELP"]);
    r.expect(b"*12\r\n+SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+GET [<count>]\r\n");
    let mut c = s.conn();
    let help: Vec<String> = redis::cmd("COMMANDLOG").arg("HELP").query(&mut c).unwrap();
    assert_eq!(help.len(), 16);
    assert_eq!(help[15], "    Print this help.");
}
