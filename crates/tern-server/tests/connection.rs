//! Connection commands (PING, ECHO, SELECT, QUIT, HELLO, AUTH, RESET) and
//! CLIENT: exact reply bytes in RESP2 and RESP3, errors as Redis 7.4 words
//! them, and the `redis` crate as a real client, at 1 and 2 worker threads.
mod common;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::*;

/// Reads one RESP reply (any type) as raw bytes.
fn read_reply(r: &mut Raw) -> Vec<u8> {
    let mut out = Vec::new();
    read_into(r, &mut out);
    out
}

fn read_line(r: &mut Raw, out: &mut Vec<u8>) -> Vec<u8> {
    let start = out.len();
    loop {
        let b = r.read_n(1)[0];
        out.push(b);
        if out.len() >= start + 2 && out[out.len() - 2..] == *b"\r\n" {
            return out[start..out.len() - 2].to_vec();
        }
    }
}

fn read_into(r: &mut Raw, out: &mut Vec<u8>) {
    let line = read_line(r, out);
    let n: i64 = std::str::from_utf8(&line[1..]).ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    match line[0] {
        b'$' | b'=' if n >= 0 => out.extend_from_slice(&r.read_n(n as usize + 2)),
        b'*' | b'~' | b'>' => (0..n.max(0)).for_each(|_| read_into(r, out)),
        b'%' => (0..2 * n).for_each(|_| read_into(r, out)),
        _ => {}
    }
}

/// The text of a bulk or verbatim reply.
fn read_text(r: &mut Raw) -> String {
    let raw = read_reply(r);
    let s = String::from_utf8(raw).unwrap();
    let body = &s[s.find("\r\n").unwrap() + 2..s.len() - 2];
    body.strip_prefix("txt:").unwrap_or(body).to_string()
}

fn client_id(r: &mut Raw) -> i64 {
    r.cmd(&[b"CLIENT", b"ID"]);
    let raw = read_reply(r);
    std::str::from_utf8(&raw[1..raw.len() - 2]).unwrap().parse().unwrap()
}

/// `CLIENT INFO` of this connection, as field => value.
fn info(r: &mut Raw) -> HashMap<String, String> {
    r.cmd(&[b"CLIENT", b"INFO"]);
    fields(read_text(r).trim_end_matches('\n'))
}

fn fields(line: &str) -> HashMap<String, String> {
    line.split(' ').filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn hello_bytes(proto: u8, id: i64) -> Vec<u8> {
    let head = if proto == 3 { "%7\r\n".to_string() } else { "*14\r\n".to_string() };
    let v = tern_server_version();
    format!(
        "{head}$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n${}\r\n{v}\r\n$5\r\nproto\r\n:{proto}\r\n$2\r\nid\r\n:{id}\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n",
        v.len()
    )
    .into_bytes()
}

fn tern_server_version() -> &'static str {
    tern_commands::REDIS_VERSION
}

/// Polls until `f` holds, failing after a few seconds.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        std::thread::yield_now();
    }
}

#[test]
fn ping_echo_select_quit() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"PING"], b"+PONG\r\n");
        r.roundtrip(&[b"ping", b"hi there"], b"$8\r\nhi there\r\n");
        r.roundtrip(&[b"PING", b"a", b"b"], b"-ERR wrong number of arguments for 'ping' command\r\n");
        r.roundtrip(&[b"ECHO", b""], b"$0\r\n\r\n");
        r.roundtrip(&[b"ECHO"], b"-ERR wrong number of arguments for 'echo' command\r\n");
        r.roundtrip(&[b"ECHO", b"a", b"b"], b"-ERR wrong number of arguments for 'echo' command\r\n");
        r.roundtrip(&[b"SELECT", b"abc"], b"-ERR value is not an integer or out of range\r\n");
        r.roundtrip(&[b"SELECT", b"1.5"], b"-ERR value is not an integer or out of range\r\n");
        r.roundtrip(&[b"SELECT", b"99999999999"], b"-ERR value is out of range, value must between -2147483648 and 2147483647\r\n");
        r.roundtrip(&[b"SELECT", b"-1"], b"-ERR DB index is out of range\r\n");
        r.roundtrip(&[b"SELECT", b"16"], b"-ERR DB index is out of range\r\n");
        r.roundtrip(&[b"SELECT", b"15"], b"+OK\r\n");
        assert_eq!(info(&mut r)["db"], "15");
        r.roundtrip(&[b"SELECT", b"0"], b"+OK\r\n");
        // RESP3 changes nothing for these.
        r.cmd(&[b"HELLO", b"3"]);
        read_reply(&mut r);
        r.roundtrip(&[b"PING"], b"+PONG\r\n");
        r.roundtrip(&[b"PING", b"x"], b"$1\r\nx\r\n");
        r.roundtrip(&[b"ECHO", b"y"], b"$1\r\ny\r\n");
        r.roundtrip(&[b"QUIT"], b"+OK\r\n");
        assert!(r.is_closed());

        // Database selection is per connection.
        let mut c = s.conn();
        let _: () = redis::cmd("SELECT").arg(3).query(&mut c).unwrap();
        let _: () = redis::cmd("SET").arg("k").arg("v3").query(&mut c).unwrap();
        let mut other = s.conn();
        let v: Option<String> = redis::cmd("GET").arg("k").query(&mut other).unwrap();
        assert_eq!(v, None);
        let pong: String = redis::cmd("PING").query(&mut c).unwrap();
        assert_eq!(pong, "PONG");
        let echoed: Vec<u8> = redis::cmd("ECHO").arg(&b"\x00\xffbin"[..]).query(&mut c).unwrap();
        assert_eq!(echoed, b"\x00\xffbin");
    });
}

#[test]
fn hello_switches_protocol() {
    each_threads(|s| {
        let mut r = s.raw();
        let id = client_id(&mut r);
        r.roundtrip(&[b"HELLO", b"4"], b"-NOPROTO unsupported protocol version\r\n");
        r.roundtrip(&[b"HELLO", b"1"], b"-NOPROTO unsupported protocol version\r\n");
        r.roundtrip(&[b"HELLO", b"4", b"bogus"], b"-NOPROTO unsupported protocol version\r\n");
        r.roundtrip(&[b"HELLO", b"abc"], b"-ERR Protocol version is not an integer or out of range\r\n");
        r.roundtrip(&[b"HELLO", b"3", b"foo"], b"-ERR Syntax error in HELLO option 'foo'\r\n");
        r.roundtrip(&[b"HELLO", b"3", b"AUTH", b"default"], b"-ERR Syntax error in HELLO option 'AUTH'\r\n");
        r.roundtrip(&[b"HELLO", b"3", b"setname"], b"-ERR Syntax error in HELLO option 'setname'\r\n");
        r.roundtrip(&[b"HELLO", b"3", b"SETNAME", b"a b"], b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
        r.roundtrip(&[b"HELLO", b"3", b"AUTH", b"nobody", b"x"], b"-WRONGPASS invalid username-password pair or user is disabled.\r\n");
        // Failed HELLOs changed nothing.
        r.roundtrip(&[b"CLIENT", b"GETNAME"], b"$-1\r\n");
        r.roundtrip(&[b"HELLO"], &hello_bytes(2, id));
        // The reply to HELLO 3 is itself RESP3; the default user has no
        // password, so any password authenticates it.
        r.roundtrip(&[b"HELLO", b"3", b"AUTH", b"default", b"anything", b"SETNAME", b"conn1"], &hello_bytes(3, id));
        r.roundtrip(&[b"CLIENT", b"GETNAME"], b"$5\r\nconn1\r\n");
        r.roundtrip(&[b"GET", b"nokey"], b"_\r\n");
        r.roundtrip(&[b"HELLO"], &hello_bytes(3, id));
        assert_eq!(info(&mut r)["resp"], "3");
        r.roundtrip(&[b"hello", b"2"], &hello_bytes(2, id));
        r.roundtrip(&[b"GET", b"nokey"], b"$-1\r\n");
        assert_eq!(info(&mut r)["resp"], "2");

        // The redis crate's view of HELLO 3 (read in RESP2 as a flat list).
        let mut c = s.conn();
        let v: Vec<redis::Value> = redis::cmd("HELLO").arg(2).query(&mut c).unwrap();
        assert_eq!(v.len(), 14);
        assert_eq!(v[0], redis::Value::BulkString(b"server".to_vec()));
        assert_eq!(v[3], redis::Value::BulkString(tern_server_version().as_bytes().to_vec()));
    });
}

#[test]
fn auth_without_requirepass() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(
            &[b"AUTH", b"x"],
            b"-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n",
        );
        r.roundtrip(&[b"AUTH", b"default", b"x"], b"+OK\r\n");
        r.roundtrip(&[b"AUTH", b"Default", b"x"], b"-WRONGPASS invalid username-password pair or user is disabled.\r\n");
        r.roundtrip(&[b"AUTH", b"a", b"b", b"c"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"AUTH"], b"-ERR wrong number of arguments for 'auth' command\r\n");
        r.roundtrip(&[b"PING"], b"+PONG\r\n");
    });
}

#[test]
fn requirepass_gates_everything_but_auth() {
    for t in [1, 2] {
        let s = TestServer::start_with(t, &["--requirepass", "secret"]);
        let mut r = s.raw();
        r.roundtrip(&[b"PING"], b"-NOAUTH Authentication required.\r\n");
        r.roundtrip(&[b"CLIENT", b"ID"], b"-NOAUTH Authentication required.\r\n");
        r.roundtrip(&[b"SELECT", b"1"], b"-NOAUTH Authentication required.\r\n");
        // Arity and unknown commands are checked first, as in Redis.
        r.roundtrip(&[b"ECHO"], b"-ERR wrong number of arguments for 'echo' command\r\n");
        let noauth_hello: &[u8] = b"-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n";
        r.roundtrip(&[b"HELLO"], noauth_hello);
        r.roundtrip(&[b"HELLO", b"3"], noauth_hello);
        r.roundtrip(&[b"HELLO", b"3", b"SETNAME", b"x"], noauth_hello);
        r.roundtrip(&[b"HELLO", b"3", b"SETNAME", b"a b"], b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
        let wrongpass: &[u8] = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n";
        r.roundtrip(&[b"HELLO", b"3", b"AUTH", b"default", b"wrong"], wrongpass);
        r.roundtrip(&[b"AUTH", b"wrong"], wrongpass);
        r.roundtrip(&[b"AUTH", b"default", b"secre"], wrongpass);
        r.roundtrip(&[b"AUTH", b"other", b"secret"], wrongpass);
        r.roundtrip(&[b"PING"], b"-NOAUTH Authentication required.\r\n");
        r.roundtrip(&[b"AUTH", b"secret"], b"+OK\r\n");
        r.roundtrip(&[b"PING"], b"+PONG\r\n");
        // A failed AUTH does not undo an earlier one.
        r.roundtrip(&[b"AUTH", b"wrong"], wrongpass);
        r.roundtrip(&[b"PING"], b"+PONG\r\n");
        // RESET logs the connection out again.
        r.roundtrip(&[b"RESET"], b"+RESET\r\n");
        r.roundtrip(&[b"PING"], b"-NOAUTH Authentication required.\r\n");
        r.roundtrip(&[b"AUTH", b"default", b"secret"], b"+OK\r\n");
        let id = client_id(&mut r);
        r.roundtrip(&[b"RESET"], b"+RESET\r\n");
        r.roundtrip(&[b"HELLO", b"3", b"AUTH", b"default", b"secret", b"SETNAME", b"bar"], &hello_bytes(3, id));
        r.roundtrip(&[b"CLIENT", b"GETNAME"], b"$3\r\nbar\r\n");
        r.roundtrip(&[b"RESET"], b"+RESET\r\n");
        r.roundtrip(&[b"CLIENT", b"GETNAME"], b"-NOAUTH Authentication required.\r\n");

        // QUIT needs no authentication.
        let mut q = s.raw();
        q.roundtrip(&[b"QUIT"], b"+OK\r\n");
        assert!(q.is_closed());

        // Real clients: a password in the URL authenticates at connect.
        let bad = redis::Client::open(format!("redis://127.0.0.1:{}/", s.port)).unwrap();
        let mut c = bad.get_connection().unwrap();
        let e = redis::cmd("GET").arg("k").query::<Option<String>>(&mut c).unwrap_err();
        assert_eq!(e.code(), Some("NOAUTH"));
        let good = redis::Client::open(format!("redis://:secret@127.0.0.1:{}/", s.port)).unwrap();
        let mut c = good.get_connection().unwrap();
        let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut c).unwrap();
        let v: String = redis::cmd("GET").arg("k").query(&mut c).unwrap();
        assert_eq!(v, "v");
        assert!(redis::Client::open(format!("redis://:nope@127.0.0.1:{}/", s.port)).unwrap().get_connection().is_err());
    }
}

#[test]
fn reset_restores_a_fresh_connection() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"SELECT", b"2"], b"+OK\r\n");
        r.roundtrip(&[b"CLIENT", b"SETNAME", b"n1"], b"+OK\r\n");
        r.roundtrip(&[b"CLIENT", b"SETINFO", b"LIB-NAME", b"mylib"], b"+OK\r\n");
        r.roundtrip(&[b"CLIENT", b"NO-EVICT", b"on"], b"+OK\r\n");
        r.roundtrip(&[b"CLIENT", b"NO-TOUCH", b"on"], b"+OK\r\n");
        r.roundtrip(&[b"WATCH", b"w"], b"+OK\r\n");
        r.cmd(&[b"HELLO", b"3"]);
        read_reply(&mut r);
        r.roundtrip(&[b"MULTI"], b"+OK\r\n");
        r.roundtrip(&[b"SET", b"k", b"v"], b"+QUEUED\r\n");
        // Reply in RESP2: the protocol is reset before replying.
        r.roundtrip(&[b"RESET"], b"+RESET\r\n");
        r.roundtrip(&[b"EXEC"], b"-ERR EXEC without MULTI\r\n");
        r.roundtrip(&[b"GET", b"k"], b"$-1\r\n");
        let f = info(&mut r);
        assert_eq!(f["db"], "0");
        assert_eq!(f["name"], "");
        assert_eq!(f["flags"], "N");
        assert_eq!(f["multi"], "-1");
        assert_eq!(f["watch"], "0");
        assert_eq!(f["resp"], "2");
        assert_eq!(f["lib-name"], "mylib", "RESET keeps the library name");
        r.roundtrip(&[b"RESET", b"x"], b"-ERR wrong number of arguments for 'reset' command\r\n");

        // REPLY OFF is cleared, so RESET itself is answered.
        r.roundtrip(&[b"CLIENT", b"REPLY", b"OFF"], b"");
        r.roundtrip(&[b"RESET"], b"+RESET\r\n");
        // A SKIP already in force still swallows RESET's reply.
        r.cmd(&[b"CLIENT", b"REPLY", b"SKIP"]);
        r.cmd(&[b"RESET"]);
        r.roundtrip(&[b"PING"], b"+PONG\r\n");

        // A watch dropped by RESET no longer aborts a later transaction.
        let mut other = s.conn();
        r.roundtrip(&[b"WATCH", b"w"], b"+OK\r\n");
        r.roundtrip(&[b"RESET"], b"+RESET\r\n");
        let _: () = redis::cmd("SET").arg("w").arg("1").query(&mut other).unwrap();
        r.roundtrip(&[b"MULTI"], b"+OK\r\n");
        r.roundtrip(&[b"PING"], b"+QUEUED\r\n");
        r.roundtrip(&[b"EXEC"], b"*1\r\n+PONG\r\n");

        let mut c = s.conn();
        let reset: String = redis::cmd("RESET").query(&mut c).unwrap();
        assert_eq!(reset, "RESET");
    });
}

#[test]
fn client_container_and_help() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"CLIENT"], b"-ERR wrong number of arguments for 'client' command\r\n");
        r.roundtrip(&[b"CLIENT", b"foo"], b"-ERR unknown subcommand 'foo'. Try CLIENT HELP.\r\n");
        r.roundtrip(&[b"client", b"Foo", b"bar"], b"-ERR unknown subcommand 'Foo'. Try CLIENT HELP.\r\n");
        // The tracking subcommands, with Redis's answers to a bad argument.
        r.roundtrip(&[b"CLIENT", b"TRACKING", b"x"], b"-ERR syntax error\r\n");
        r.roundtrip(
            &[b"CLIENT", b"CACHING", b"x"],
            b"-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled\r\n",
        );
        r.roundtrip(&[b"CLIENT", b"GETREDIR", b"x"], b"-ERR wrong number of arguments for 'client|getredir' command\r\n");
        r.roundtrip(&[b"CLIENT", b"TRACKINGINFO", b"x"], b"-ERR wrong number of arguments for 'client|trackinginfo' command\r\n");
        r.roundtrip(&[b"CLIENT", b"ID", b"x"], b"-ERR wrong number of arguments for 'client|id' command\r\n");
        r.roundtrip(&[b"CLIENT", b"HELP", b"x"], b"-ERR wrong number of arguments for 'client|help' command\r\n");

        r.cmd(&[b"CLIENT", b"HELP"]);
        let help = String::from_utf8(read_reply(&mut r)).unwrap();
        let lines: Vec<&str> = help.split("\r\n").collect();
        assert_eq!(lines[0], "*58");
        assert_eq!(lines[1], "+CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
        assert_eq!(lines[2], "+CACHING (YES|NO)");
        assert_eq!(lines[lines.len() - 3], "+HELP");
        assert_eq!(lines[lines.len() - 2], "+    Print this help.");
        assert!(help.contains("+PAUSE <timeout> [WRITE|ALL]\r\n+    Suspend all, or just write, clients for <timeout> milliseconds.\r\n"));
        assert!(help.contains("+TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]\r\n+         [OPTIN] [OPTOUT] [NOLOOP]\r\n"));
        assert!(help.contains("+    * MAXAGE <maxage>\r\n"));
    });
}

#[test]
fn client_id_name_and_setinfo() {
    each_threads(|s| {
        let mut r = s.raw();
        let id = client_id(&mut r);
        let mut r2 = s.raw();
        assert!(client_id(&mut r2) > id, "ids grow with each connection");

        let bad: &[u8] = b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n";
        r.roundtrip(&[b"CLIENT", b"GETNAME"], b"$-1\r\n");
        r.roundtrip(&[b"CLIENT", b"SETNAME", b"a b"], bad);
        r.roundtrip(&[b"CLIENT", b"SETNAME", b"a\nb"], bad);
        r.roundtrip(&[b"CLIENT", b"SETNAME", b"caf\xc3\xa9"], bad);
        r.roundtrip(&[b"CLIENT", b"SETNAME"], b"-ERR wrong number of arguments for 'client|setname' command\r\n");
        r.roundtrip(&[b"CLIENT", b"SETNAME", b"x", b"y"], b"-ERR wrong number of arguments for 'client|setname' command\r\n");
        r.roundtrip(&[b"CLIENT", b"SETNAME", b"my-conn_1!~"], b"+OK\r\n");
        r.roundtrip(&[b"CLIENT", b"GETNAME"], b"$11\r\nmy-conn_1!~\r\n");
        assert_eq!(info(&mut r)["name"], "my-conn_1!~");
        r.roundtrip(&[b"CLIENT", b"SETNAME", b""], b"+OK\r\n");
        r.roundtrip(&[b"CLIENT", b"GETNAME"], b"$-1\r\n");

        r.cmd(&[b"HELLO", b"3"]);
        read_reply(&mut r);
        r.roundtrip(&[b"CLIENT", b"GETNAME"], b"_\r\n");
        r.cmd(&[b"HELLO", b"2"]);
        read_reply(&mut r);

        r.roundtrip(&[b"CLIENT", b"SETINFO", b"lib-name", b"redis-py"], b"+OK\r\n");
        r.roundtrip(&[b"CLIENT", b"SETINFO", b"LIB-VER", b"5.0.1"], b"+OK\r\n");
        r.roundtrip(&[b"CLIENT", b"SETINFO", b"foo", b"x"], b"-ERR Unrecognized option 'foo'\r\n");
        r.roundtrip(
            &[b"CLIENT", b"SETINFO", b"Lib-Name", b"a b"],
            b"-ERR Lib-Name cannot contain spaces, newlines or special characters.\r\n",
        );
        r.roundtrip(&[b"CLIENT", b"SETINFO", b"lib-name"], b"-ERR wrong number of arguments for 'client|setinfo' command\r\n");
        let f = info(&mut r);
        assert_eq!((f["lib-name"].as_str(), f["lib-ver"].as_str()), ("redis-py", "5.0.1"));
        r.roundtrip(&[b"CLIENT", b"SETINFO", b"lib-ver", b""], b"+OK\r\n");
        assert_eq!(info(&mut r)["lib-ver"], "");

        // The redis crate.
        let mut c = s.conn();
        let cid: i64 = redis::cmd("CLIENT").arg("ID").query(&mut c).unwrap();
        assert!(cid > 0);
        let _: () = redis::cmd("CLIENT").arg("SETNAME").arg("worker-7").query(&mut c).unwrap();
        let name: Option<String> = redis::cmd("CLIENT").arg("GETNAME").query(&mut c).unwrap();
        assert_eq!(name.as_deref(), Some("worker-7"));
        let e = redis::cmd("CLIENT").arg("SETNAME").arg("two words").query::<()>(&mut c).unwrap_err();
        assert!(e.to_string().contains("Client names cannot contain spaces"));
        // redis-rs announces itself with CLIENT SETINFO at connect.
        let text: String = redis::cmd("CLIENT").arg("INFO").query(&mut c).unwrap();
        let f = fields(text.trim_end());
        assert_eq!(f["lib-name"], "redis-rs");
        assert!(!f["lib-ver"].is_empty());
        assert_eq!(f["name"], "worker-7");

        // A RESP3 connection: HELLO 3 at connect, verbatim CLIENT INFO.
        let url = format!("redis://127.0.0.1:{}/?protocol=resp3", s.port);
        let mut c3 = redis::Client::open(url).unwrap().get_connection().unwrap();
        let text: String = redis::cmd("CLIENT").arg("INFO").query(&mut c3).unwrap();
        assert_eq!(fields(text.trim_end())["resp"], "3");
        let hello: HashMap<String, redis::Value> = redis::cmd("HELLO").query(&mut c3).unwrap();
        assert_eq!(hello["proto"], redis::Value::Int(3));
        assert_eq!(hello["mode"], redis::Value::BulkString(b"standalone".to_vec()));
    });
}

#[test]
fn client_info_and_list_lines() {
    each_threads(|s| {
        let mut r = s.raw();
        let id = client_id(&mut r);
        r.cmd(&[b"CLIENT", b"INFO"]);
        let line = read_text(&mut r);
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
        let keys: Vec<&str> = line.trim_end().split(' ').map(|kv| kv.split_once('=').unwrap().0).collect();
        assert_eq!(
            keys,
            [
                "id",
                "addr",
                "laddr",
                "fd",
                "name",
                "age",
                "idle",
                "flags",
                "db",
                "sub",
                "psub",
                "ssub",
                "multi",
                "watch",
                "qbuf",
                "qbuf-free",
                "argv-mem",
                "multi-mem",
                "rbs",
                "rbp",
                "obl",
                "oll",
                "omem",
                "tot-mem",
                "events",
                "cmd",
                "user",
                "redir",
                "resp",
                "lib-name",
                "lib-ver",
                "io-thread",
                "tot-net-in",
                "tot-net-out",
                "tot-cmds"
            ]
        );
        let f = fields(line.trim_end());
        assert_eq!(f["id"], id.to_string());
        assert_eq!(f["addr"], r.s.local_addr().unwrap().to_string());
        assert_eq!(f["laddr"], r.s.peer_addr().unwrap().to_string());
        assert_eq!(f["flags"], "N");
        assert_eq!(f["multi"], "-1");
        assert_eq!(f["qbuf"], "26", "the CLIENT INFO request itself, as in Redis");
        assert_eq!(f["argv-mem"], "10");
        assert_eq!(f["cmd"], "client|info");
        assert_eq!(f["user"], "default");
        assert_eq!(f["redir"], "-1");
        assert_eq!(f["events"], "r");
        assert_eq!(f["idle"], "0");
        // Counted as Redis 8.2 counts them: the request being run is read,
        // its reply not yet written nor the command counted.
        let (net_in, net_out, cmds): (u64, u64, u64) = (f["tot-net-in"].parse().unwrap(), f["tot-net-out"].parse().unwrap(), f["tot-cmds"].parse().unwrap());
        let again = info(&mut r);
        assert_eq!(again["tot-cmds"].parse::<u64>().unwrap(), cmds + 1);
        assert_eq!(again["tot-net-in"].parse::<u64>().unwrap(), net_in + 26);
        assert_eq!(again["tot-net-out"].parse::<u64>().unwrap(), net_out + (format!("${}\r\n", line.len()).len() + line.len() + 2) as u64, "{line:?}");

        // RESP3: a verbatim string.
        r.cmd(&[b"HELLO", b"3"]);
        read_reply(&mut r);
        r.cmd(&[b"CLIENT", b"INFO"]);
        let raw = String::from_utf8(read_reply(&mut r)).unwrap();
        assert!(raw.starts_with('=') && raw.contains("\r\ntxt:id="), "{raw}");
        r.cmd(&[b"CLIENT", b"LIST"]);
        assert!(String::from_utf8(read_reply(&mut r)).unwrap().starts_with('='));
        r.cmd(&[b"HELLO", b"2"]);
        read_reply(&mut r);

        // Flags and state of the caller.
        r.roundtrip(&[b"CLIENT", b"NO-EVICT", b"ON"], b"+OK\r\n");
        assert_eq!(info(&mut r)["flags"], "e");
        r.roundtrip(&[b"CLIENT", b"NO-TOUCH", b"on"], b"+OK\r\n");
        assert_eq!(info(&mut r)["flags"], "eT");
        r.roundtrip(&[b"CLIENT", b"NO-EVICT", b"off"], b"+OK\r\n");
        r.roundtrip(&[b"CLIENT", b"NO-TOUCH", b"OFF"], b"+OK\r\n");
        r.roundtrip(&[b"CLIENT", b"NO-EVICT", b"maybe"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"CLIENT", b"NO-TOUCH", b"x"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"CLIENT", b"NO-TOUCH"], b"-ERR wrong number of arguments for 'client|no-touch' command\r\n");
        r.roundtrip(&[b"WATCH", b"a", b"b"], b"+OK\r\n");
        assert_eq!(info(&mut r)["watch"], "2");
        r.roundtrip(&[b"UNWATCH"], b"+OK\r\n");
        assert_eq!(info(&mut r)["flags"], "N");

        // Other connections, seen through the registry.
        let mut other = s.raw();
        let oid = client_id(&mut other);
        other.roundtrip(&[b"SELECT", b"4"], b"+OK\r\n");
        other.roundtrip(&[b"CLIENT", b"SETNAME", b"peer"], b"+OK\r\n");
        r.cmd(&[b"CLIENT", b"LIST", b"ID", oid.to_string().as_bytes()]);
        let peer = fields(read_text(&mut r).trim_end());
        assert_eq!(peer["cmd"], "client|setname");
        assert_eq!(peer["flags"], "N");
        other.roundtrip(&[b"WATCH", b"w1", b"w2", b"w3"], b"+OK\r\n");
        other.roundtrip(&[b"MULTI"], b"+OK\r\n");
        other.roundtrip(&[b"PING"], b"+QUEUED\r\n");
        r.cmd(&[b"CLIENT", b"LIST"]);
        let list = read_text(&mut r);
        let lines: Vec<HashMap<String, String>> = list.lines().map(fields).collect();
        let ids: Vec<i64> = lines.iter().map(|f| f["id"].parse().unwrap()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted, "oldest connection first");
        let me = lines.iter().find(|f| f["id"] == id.to_string()).unwrap();
        assert_eq!(me["cmd"], "client|list");
        let peer = lines.iter().find(|f| f["id"] == oid.to_string()).unwrap();
        assert_eq!(peer["name"], "peer");
        assert_eq!(peer["db"], "4");
        assert_eq!(peer["flags"], "x");
        assert_eq!(peer["multi"], "1");
        assert_eq!(peer["watch"], "3");

        // LIST ID: in argument order, unknown ids skipped.
        let list_id = format!("{oid}");
        r.cmd(&[b"CLIENT", b"LIST", b"ID", list_id.as_bytes(), b"999999", id.to_string().as_bytes()]);
        let got: Vec<String> = read_text(&mut r).lines().map(|l| fields(l)["id"].clone()).collect();
        assert_eq!(got, [oid.to_string(), id.to_string()]);
        r.roundtrip(&[b"CLIENT", b"LIST", b"ID", b"999999"], b"$0\r\n\r\n");
        r.roundtrip(&[b"CLIENT", b"LIST", b"ID", b"abc"], b"-ERR Invalid client ID\r\n");
        r.roundtrip(&[b"CLIENT", b"LIST", b"ID"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"CLIENT", b"LIST", b"TYPE"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"CLIENT", b"LIST", b"foo", b"bar"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"CLIENT", b"LIST", b"TYPE", b"foo"], b"-ERR Unknown client type 'foo'\r\n");
        for t in [&b"master"[..], b"replica", b"slave", b"pubsub"] {
            r.roundtrip(&[b"CLIENT", b"LIST", b"TYPE", t], b"$0\r\n\r\n");
        }
        r.cmd(&[b"CLIENT", b"LIST", b"TYPE", b"NORMAL"]);
        assert_eq!(read_text(&mut r).lines().count(), lines.len());

        // The redis crate.
        let mut c = s.conn();
        let text: String = redis::cmd("CLIENT").arg("LIST").query(&mut c).unwrap();
        assert!(text.lines().count() >= 3);
        assert!(text.lines().all(|l| l.starts_with("id=") && l.contains(" lib-ver=") && l.contains(" io-thread=")));
    });
}

#[test]
fn client_reply_modes() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"CLIENT", b"REPLY", b"foo"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"CLIENT", b"REPLY"], b"-ERR wrong number of arguments for 'client|reply' command\r\n");
        // OFF: nothing comes back, errors included, until ON.
        r.cmd(&[b"CLIENT", b"REPLY", b"OFF"]);
        r.cmd(&[b"SET", b"k", b"1"]);
        r.cmd(&[b"NOSUCHCMD"]);
        r.cmd(&[b"CLIENT", b"REPLY", b"SKIP"]);
        r.roundtrip(&[b"CLIENT", b"REPLY", b"ON"], b"+OK\r\n");
        r.roundtrip(&[b"GET", b"k"], b"$1\r\n1\r\n");
        // SKIP: only the next command's reply is dropped.
        r.cmd(&[b"CLIENT", b"REPLY", b"SKIP"]);
        r.cmd(&[b"INCR", b"k"]);
        r.roundtrip(&[b"GET", b"k"], b"$1\r\n2\r\n");
        // SKIP twice in a row skips the command after the second one.
        r.cmd(&[b"CLIENT", b"REPLY", b"SKIP"]);
        r.cmd(&[b"CLIENT", b"REPLY", b"SKIP"]);
        r.cmd(&[b"PING", b"skipped"]);
        r.roundtrip(&[b"PING", b"seen"], b"$4\r\nseen\r\n");
        // ON right after SKIP is answered.
        r.cmd(&[b"CLIENT", b"REPLY", b"SKIP"]);
        r.roundtrip(&[b"CLIENT", b"REPLY", b"ON"], b"+OK\r\n");
        r.roundtrip(&[b"PING"], b"+PONG\r\n");
    });
}

#[test]
fn client_kill() {
    each_threads(|s| {
        let mut admin = s.raw();
        let admin_id = client_id(&mut admin);
        admin.roundtrip(&[b"CLIENT", b"KILL"], b"-ERR wrong number of arguments for 'client|kill' command\r\n");
        admin.roundtrip(&[b"CLIENT", b"KILL", b"1.2.3.4:5"], b"-ERR No such client\r\n");
        admin.roundtrip(&[b"CLIENT", b"KILL", b"ID", b"0"], b"-ERR client-id should be greater than 0\r\n");
        admin.roundtrip(&[b"CLIENT", b"KILL", b"ID", b"x"], b"-ERR client-id should be greater than 0\r\n");
        admin.roundtrip(&[b"CLIENT", b"KILL", b"MAXAGE", b"x"], b"-ERR maxage is not an integer or out of range\r\n");
        admin.roundtrip(&[b"CLIENT", b"KILL", b"MAXAGE", b"0"], b"-ERR maxage should be greater than 0\r\n");
        admin.roundtrip(&[b"CLIENT", b"KILL", b"ID", b"1", b"SKIPME", b"maybe"], b"-ERR syntax error\r\n");
        admin.roundtrip(&[b"CLIENT", b"KILL", b"USER", b"bob"], b"-ERR No such user 'bob'\r\n");
        admin.roundtrip(&[b"CLIENT", b"KILL", b"TYPE", b"foo"], b"-ERR Unknown client type 'foo'\r\n");
        admin.roundtrip(&[b"CLIENT", b"KILL", b"FOO", b"bar"], b"-ERR syntax error\r\n");
        admin.roundtrip(&[b"CLIENT", b"KILL", b"ID", b"5", b"ADDR"], b"-ERR syntax error\r\n");
        admin.roundtrip(&[b"CLIENT", b"KILL", b"TYPE", b"master"], b":0\r\n");
        // SKIPME defaults to yes.
        admin.cmd(&[b"CLIENT", b"KILL", b"ID", admin_id.to_string().as_bytes()]);
        admin.expect(b":0\r\n");
        admin.cmd(&[b"CLIENT", b"KILL", b"ID", admin_id.to_string().as_bytes(), b"skipme", b"YES"]);
        admin.expect(b":0\r\n");
        admin.roundtrip(&[b"CLIENT", b"KILL", b"TYPE", b"pubsub"], b":0\r\n");
        admin.roundtrip(&[b"CLIENT", b"KILL", b"TYPE", b"slave", b"SKIPME", b"no"], b":0\r\n");

        // By ID: the victim's connection is closed, the count returned.
        let mut v = s.raw();
        let vid = client_id(&mut v);
        admin.cmd(&[b"CLIENT", b"KILL", b"ID", vid.to_string().as_bytes()]);
        admin.expect(b":1\r\n");
        assert!(v.is_closed());
        admin.cmd(&[b"CLIENT", b"KILL", b"ID", vid.to_string().as_bytes()]);
        admin.expect(b":0\r\n");
        admin.cmd(&[b"CLIENT", b"LIST", b"ID", vid.to_string().as_bytes()]);
        admin.expect(b"$0\r\n\r\n");

        // Old form by address: +OK.
        let mut v = s.raw();
        let addr = info(&mut v)["addr"].clone();
        admin.cmd(&[b"CLIENT", b"KILL", addr.as_bytes()]);
        admin.expect(b"+OK\r\n");
        assert!(v.is_closed());

        // ADDR and LADDR filters combine with AND.
        let mut v = s.raw();
        let f = info(&mut v);
        admin.cmd(&[b"CLIENT", b"KILL", b"ADDR", f["addr"].as_bytes(), b"LADDR", b"1.1.1.1:1"]);
        admin.expect(b":0\r\n");
        admin.cmd(&[b"CLIENT", b"KILL", b"ADDR", f["addr"].as_bytes(), b"LADDR", f["laddr"].as_bytes(), b"user", b"default"]);
        admin.expect(b":1\r\n");
        assert!(v.is_closed());

        // MAXAGE: a fresh connection is younger than an hour.
        let mut v = s.raw();
        let vid = client_id(&mut v);
        admin.cmd(&[b"CLIENT", b"KILL", b"ID", vid.to_string().as_bytes(), b"MAXAGE", b"3600"]);
        admin.expect(b":0\r\n");
        v.roundtrip(&[b"PING"], b"+PONG\r\n");

        // Killing yourself: the reply still arrives, then the close.
        let mut me = s.raw();
        let mid = client_id(&mut me);
        me.cmd(&[b"CLIENT", b"KILL", b"ID", mid.to_string().as_bytes(), b"SKIPME", b"no"]);
        me.expect(b":1\r\n");
        assert!(me.is_closed());
        let mut me = s.raw();
        let addr = info(&mut me)["addr"].clone();
        me.cmd(&[b"CLIENT", b"KILL", addr.as_bytes()]);
        me.expect(b"+OK\r\n");
        assert!(me.is_closed());

        // TYPE normal kills every other normal client.
        let mut c1 = s.conn();
        let mut c2 = s.conn();
        let _: String = redis::cmd("PING").query(&mut c1).unwrap();
        let _: String = redis::cmd("PING").query(&mut c2).unwrap();
        let n: i64 = redis::cmd("CLIENT").arg("KILL").arg("TYPE").arg("normal").query(&mut c1).unwrap();
        assert_eq!(n, 3, "admin, v and c2");
        assert!(redis::cmd("PING").query::<String>(&mut c2).is_err());
        assert!(admin.is_closed());
        let pong: String = redis::cmd("PING").query(&mut c1).unwrap();
        assert_eq!(pong, "PONG");
        eventually("killed clients leave the registry", || {
            let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut c1).unwrap();
            list.lines().count() == 1
        });
    });
}
