//! Server commands against the real binary: COMMAND, CONFIG, INFO, TIME,
//! SHUTDOWN, with exact bytes on a raw socket and through the `redis` crate.
mod common;
use common::*;

use std::time::Duration;

fn info_field(info: &str, key: &str) -> Option<String> {
    info.lines().find_map(|l| l.strip_prefix(&format!("{key}:")).map(|v| v.to_string()))
}

/// Reads until the bytes received end with `end`.
fn read_until(r: &mut Raw, end: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut got = Vec::new();
    let mut b = [0u8; 4096];
    while !got.ends_with(end) {
        let n = r.s.read(&mut b).expect("read");
        assert!(n > 0, "closed after {:?}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&b[..n]);
    }
    got
}

fn info(c: &mut redis::Connection, section: &str) -> String {
    redis::cmd("INFO").arg(section).query(c).unwrap()
}

#[test]
fn command_info_layout() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(
            &[b"COMMAND", b"INFO", b"get"],
            b"*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n\
*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n\
$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
        );
        // Unknown names are nulls; subcommands by full name.
        r.roundtrip(
            &[b"COMMAND", b"INFO", b"nosuch", b"config|get"],
            b"*2\r\n$-1\r\n*10\r\n$10\r\nconfig|get\r\n:-3\r\n*4\r\n+admin\r\n+noscript\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
        );
        r.roundtrip(
            &[b"COMMAND", b"INFO", b"time"],
            b"*1\r\n*10\r\n$4\r\ntime\r\n:1\r\n*3\r\n+loading\r\n+stale\r\n+fast\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@fast\r\n*1\r\n$23\r\nnondeterministic_output\r\n*0\r\n*0\r\n",
        );
        r.roundtrip(
            &[b"COMMAND", b"INFO", b"shutdown"],
            b"*1\r\n*10\r\n$8\r\nshutdown\r\n:-1\r\n*6\r\n+admin\r\n+noscript\r\n+loading\r\n+stale\r\n+no_multi\r\n+allow_busy\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
        );
        // RESP3: flags, categories, tips and key specs are sets and maps.
        r.cmd(&[b"HELLO", b"3"]);
        r.cmd(&[b"PING"]);
        let hello = read_until(&mut r, b"+PONG\r\n");
        if hello.starts_with(b"-") {
            return; // HELLO is not in this build yet.
        }
        r.roundtrip(&[b"COMMAND", b"INFO", b"nosuch"], b"*1\r\n_\r\n");
        r.roundtrip(
            &[b"COMMAND", b"INFO", b"time"],
            b"*1\r\n*10\r\n$4\r\ntime\r\n:1\r\n~3\r\n+loading\r\n+stale\r\n+fast\r\n:0\r\n:0\r\n:0\r\n~1\r\n+@fast\r\n~1\r\n$23\r\nnondeterministic_output\r\n~0\r\n*0\r\n",
        );
    });
}

#[test]
fn command_info_config_container_lists_subcommands() {
    let s = TestServer::start(1);
    let mut c = s.conn();
    let v: Vec<redis::Value> = redis::cmd("COMMAND").arg("INFO").arg("config").query(&mut c).unwrap();
    let redis::Value::Array(fields) = &v[0] else { panic!("{v:?}") };
    assert_eq!(fields[0], redis::Value::BulkString(b"config".to_vec()));
    assert_eq!(fields[1], redis::Value::Int(-2));
    let redis::Value::Array(subs) = &fields[9] else { panic!() };
    let names: Vec<String> = subs
        .iter()
        .map(|s| match s {
            redis::Value::Array(f) => redis::from_redis_value(&f[0]).unwrap(),
            _ => panic!(),
        })
        .collect();
    assert_eq!(names, ["config|get", "config|help", "config|resetstat", "config|rewrite", "config|set"]);
}

#[test]
fn command_all_count_list() {
    each_threads(|s| {
        let mut c = s.conn();
        let count: i64 = redis::cmd("COMMAND").arg("COUNT").query(&mut c).unwrap();
        let all: Vec<redis::Value> = redis::cmd("COMMAND").query(&mut c).unwrap();
        assert_eq!(all.len() as i64, count);
        let info_all: Vec<redis::Value> = redis::cmd("COMMAND").arg("INFO").query(&mut c).unwrap();
        assert_eq!(info_all.len() as i64, count);
        assert!(count >= 5);
        let list: Vec<String> = redis::cmd("COMMAND").arg("LIST").query(&mut c).unwrap();
        for n in ["get", "command", "command|docs", "config", "config|get", "info", "time", "shutdown"] {
            assert!(list.iter().any(|x| x == n), "{n} missing from {list:?}");
        }
        let top = list.iter().filter(|n| !n.contains('|')).count() as i64;
        assert_eq!(top, count);
        let conf: Vec<String> = redis::cmd("COMMAND").arg("LIST").arg("FILTERBY").arg("PATTERN").arg("CONFIG*").query(&mut c).unwrap();
        assert_eq!(conf, ["config", "config|get", "config|help", "config|resetstat", "config|rewrite", "config|set"]);
        let admin: Vec<String> = redis::cmd("COMMAND").arg("LIST").arg("FILTERBY").arg("ACLCAT").arg("admin").query(&mut c).unwrap();
        assert!(admin.contains(&"config|set".to_string()) && admin.contains(&"shutdown".to_string()) && !admin.contains(&"get".to_string()));
        let fast: Vec<String> = redis::cmd("COMMAND").arg("LIST").arg("FILTERBY").arg("aclcat").arg("FAST").query(&mut c).unwrap();
        assert!(fast.contains(&"get".to_string()) && fast.contains(&"time".to_string()) && !fast.contains(&"set".to_string()));

        let mut r = s.raw();
        r.roundtrip(&[b"COMMAND", b"LIST", b"FILTERBY", b"MODULE", b"x"], b"*0\r\n");
        r.roundtrip(&[b"COMMAND", b"LIST", b"FILTERBY", b"ACLCAT", b"nosuch"], b"*0\r\n");
        r.roundtrip(&[b"COMMAND", b"LIST", b"FILTERBY", b"foo", b"bar"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"COMMAND", b"LIST", b"FILTERBY"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"COMMAND", b"LIST", b"x"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"COMMAND", b"COUNT", b"x"], b"-ERR wrong number of arguments for 'command|count' command\r\n");
        r.roundtrip(&[b"COMMAND", b"foo"], b"-ERR unknown subcommand 'foo'. Try COMMAND HELP.\r\n");
        r.roundtrip(&[b"COMMAND", b"LIST", b"FILTERBY", b"PATTERN", b"tim?"], b"*1\r\n$4\r\ntime\r\n");
    });
}

#[test]
fn command_docs() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(
            &[b"COMMAND", b"DOCS", b"time"],
            b"*2\r\n$4\r\ntime\r\n*8\r\n$7\r\nsummary\r\n$24\r\nReturns the server time.\r\n$5\r\nsince\r\n$5\r\n2.6.0\r\n$5\r\ngroup\r\n$6\r\nserver\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n",
        );
        r.roundtrip(&[b"COMMAND", b"DOCS", b"nosuch"], b"*0\r\n");
        // The `arguments` tree, as Redis 8.4 sends it: a container (oneof)
        // with its flags and members, tokens, a key spec index.
        r.roundtrip(
            &[b"COMMAND", b"DOCS", b"getex"],
            b"*2\r\n$5\r\ngetex\r\n*10\r\n$7\r\nsummary\r\n$68\r\nReturns the string value of a key after setting its expiration time.\r\n\
$5\r\nsince\r\n$5\r\n6.2.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*2\r\n\
*8\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$12\r\ndisplay_text\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n\
*8\r\n$4\r\nname\r\n$10\r\nexpiration\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\nflags\r\n*1\r\n+optional\r\n$9\r\narguments\r\n*5\r\n\
*8\r\n$4\r\nname\r\n$7\r\nseconds\r\n$4\r\ntype\r\n$7\r\ninteger\r\n$12\r\ndisplay_text\r\n$7\r\nseconds\r\n$5\r\ntoken\r\n$2\r\nEX\r\n\
*8\r\n$4\r\nname\r\n$12\r\nmilliseconds\r\n$4\r\ntype\r\n$7\r\ninteger\r\n$12\r\ndisplay_text\r\n$12\r\nmilliseconds\r\n$5\r\ntoken\r\n$2\r\nPX\r\n\
*8\r\n$4\r\nname\r\n$17\r\nunix-time-seconds\r\n$4\r\ntype\r\n$9\r\nunix-time\r\n$12\r\ndisplay_text\r\n$17\r\nunix-time-seconds\r\n$5\r\ntoken\r\n$4\r\nEXAT\r\n\
*8\r\n$4\r\nname\r\n$22\r\nunix-time-milliseconds\r\n$4\r\ntype\r\n$9\r\nunix-time\r\n$12\r\ndisplay_text\r\n$22\r\nunix-time-milliseconds\r\n$5\r\ntoken\r\n$4\r\nPXAT\r\n\
*8\r\n$4\r\nname\r\n$7\r\npersist\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$12\r\ndisplay_text\r\n$7\r\npersist\r\n$5\r\ntoken\r\n$7\r\nPERSIST\r\n",
        );
        let mut c = s.conn();
        // Every command, as a map: name -> docs.
        let all: std::collections::HashMap<String, redis::Value> = redis::cmd("COMMAND").arg("DOCS").query(&mut c).unwrap();
        let count: usize = redis::cmd("COMMAND").arg("COUNT").query(&mut c).unwrap();
        assert_eq!(all.len(), count);
        let config: std::collections::HashMap<String, redis::Value> = redis::cmd("COMMAND").arg("DOCS").arg("config").query(&mut c).unwrap();
        let docs: std::collections::HashMap<String, redis::Value> = redis::from_redis_value(&config["config"]).unwrap();
        let subs: std::collections::HashMap<String, redis::Value> = redis::from_redis_value(&docs["subcommands"]).unwrap();
        assert!(subs.contains_key("config|set") && subs.contains_key("config|get"), "{subs:?}");
        assert_eq!(redis::from_redis_value::<String>(&docs["complexity"]).unwrap(), "Depends on subcommand.");
    });
}

#[test]
fn command_getkeys() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"COMMAND", b"GETKEYS", b"set", b"a", b"b"], b"*1\r\n$1\r\na\r\n");
        r.roundtrip(&[b"COMMAND", b"GETKEYS", b"GET", b"k"], b"*1\r\n$1\r\nk\r\n");
        r.roundtrip(&[b"COMMAND", b"GETKEYSANDFLAGS", b"get", b"k"], b"*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+RO\r\n+access\r\n");
        // Key flags follow Redis's key specs, and SET's depend on GET.
        r.roundtrip(&[b"COMMAND", b"GETKEYSANDFLAGS", b"set", b"k", b"v"], b"*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+OW\r\n+update\r\n");
        r.roundtrip(
            &[b"COMMAND", b"GETKEYSANDFLAGS", b"set", b"k", b"v", b"get"],
            b"*1\r\n*2\r\n$1\r\nk\r\n*3\r\n+RW\r\n+access\r\n+update\r\n",
        );
        r.roundtrip(
            &[b"COMMAND", b"INFO", b"set"],
            b"*1\r\n*10\r\n$3\r\nset\r\n:-3\r\n*2\r\n+write\r\n+denyoom\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@string\r\n+@slow\r\n*0\r\n\
*1\r\n*8\r\n$5\r\nnotes\r\n$48\r\nRW and ACCESS due to the optional `GET` argument\r\n$5\r\nflags\r\n*4\r\n+RW\r\n+access\r\n+update\r\n+variable_flags\r\n\
$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n\
$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
        );
        r.roundtrip(&[b"COMMAND", b"GETKEYS", b"nosuch", b"a"], b"-ERR Invalid command specified\r\n");
        r.roundtrip(&[b"COMMAND", b"GETKEYS", b"config", b"nosuch"], b"-ERR Invalid command specified\r\n");
        r.roundtrip(&[b"COMMAND", b"GETKEYS", b"config", b"get", b"x"], b"-ERR The command has no key arguments\r\n");
        r.roundtrip(&[b"COMMAND", b"GETKEYS", b"ping", b"x"], b"-ERR The command has no key arguments\r\n");
        r.roundtrip(&[b"COMMAND", b"GETKEYS", b"get", b"a", b"b"], b"-ERR Invalid number of arguments specified for command\r\n");
        // Redis 8.4's arity (-3): a lone name reaches the command's own arity.
        r.roundtrip(&[b"COMMAND", b"GETKEYS", b"get"], b"-ERR Invalid number of arguments specified for command\r\n");
        r.roundtrip(&[b"COMMAND", b"GETKEYS"], b"-ERR wrong number of arguments for 'command|getkeys' command\r\n");
    });
}

#[test]
fn command_and_config_help() {
    let s = TestServer::start(1);
    let mut r = s.raw();
    r.roundtrip(
        &[b"CONFIG", b"HELP"],
        b"*11\r\n+CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+GET <pattern>\r\n+    Return parameters matching the glob-like <pattern> and their values.\r\n\
+SET <directive> <value>\r\n+    Set the configuration <directive> to <value>.\r\n+RESETSTAT\r\n+    Reset statistics reported by the INFO command.\r\n\
+REWRITE\r\n+    Rewrite the configuration file.\r\n+HELP\r\n+    Print this help.\r\n",
    );
    let mut c = s.conn();
    let help: Vec<String> = redis::cmd("COMMAND").arg("HELP").query(&mut c).unwrap();
    assert_eq!(help.len(), 21);
    assert_eq!(help[0], "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
    assert_eq!(help[18], "    Return the keys and the access flags from a full Redis command.");
    assert_eq!(help[20], "    Print this help.");
}

#[test]
fn config_get_set() {
    each_threads(|s| {
        let mut c = s.conn();
        let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("maxclients").query(&mut c).unwrap();
        assert_eq!(v, ["maxclients", "10000"]);
        let _: () = redis::cmd("CONFIG").arg("SET").arg("maxclients").arg("500").arg("timeout").arg("30").query(&mut c).unwrap();
        let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("maxclients").arg("timeout").query(&mut c).unwrap();
        assert_eq!(v, ["maxclients", "500", "timeout", "30"]);
        // Sizes in bytes; booleans as yes/no; lists as one string.
        let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg("1gb").query(&mut c).unwrap();
        let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("maxmemory").query(&mut c).unwrap();
        assert_eq!(v, ["maxmemory", "1073741824"]);
        let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("save").arg("client-output-buffer-limit").arg("appendonly").query(&mut c).unwrap();
        assert_eq!(
            v,
            [
                "save",
                "3600 1 300 100 60 10000",
                "client-output-buffer-limit",
                "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
                "appendonly",
                "no"
            ]
        );
        let _: () = redis::cmd("CONFIG").arg("SET").arg("save").arg("100 10").arg("appendonly").arg("YES").query(&mut c).unwrap();
        let _: () = redis::cmd("CONFIG").arg("SET").arg("client-output-buffer-limit").arg("pubsub 1mb 2kb 5").query(&mut c).unwrap();
        let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("save").arg("appendonly").arg("client-output-buffer-limit").query(&mut c).unwrap();
        assert_eq!(v, ["save", "100 10", "appendonly", "yes", "client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 2048 5"]);
        let _: () = redis::cmd("CONFIG").arg("SET").arg("save").arg("").query(&mut c).unwrap();
        let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("save").query(&mut c).unwrap();
        assert_eq!(v, ["save", ""]);
        // Aliases answer to their own name; a glob matches both names.
        let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("io-threads").query(&mut c).unwrap();
        assert_eq!(v[0], "io-threads");
        let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("*threads").query(&mut c).unwrap();
        assert!(v.contains(&"io-threads".to_string()) && v.contains(&"threads".to_string()), "{v:?}");
        // Same name twice is shown once; the name is echoed as asked.
        let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("TIMEOUT").arg("timeout").query(&mut c).unwrap();
        assert_eq!(v, ["TIMEOUT", "30"]);
        let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("nosuch").query(&mut c).unwrap();
        assert!(v.is_empty());
        // The port shown is the one listened on.
        let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("port").query(&mut c).unwrap();
        assert_eq!(v, ["port", s.port.to_string().as_str()]);
        let all: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("*").query(&mut c).unwrap();
        assert!(all.len() > 100, "{}", all.len());
    });
}

#[test]
fn config_set_errors_are_atomic() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(
            &[b"CONFIG", b"SET", b"maxmemory", b"abc"],
            b"-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value\r\n",
        );
        r.roundtrip(&[b"CONFIG", b"SET", b"nosuch", b"1"], b"-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'\r\n");
        r.roundtrip(
            &[b"CONFIG", b"SET", b"daemonize", b"no"],
            b"-ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config\r\n",
        );
        r.roundtrip(
            &[b"CONFIG", b"SET", b"maxmemory", b"1", b"MAXMEMORY", b"2"],
            b"-ERR CONFIG SET failed (possibly related to argument 'MAXMEMORY') - duplicate parameter\r\n",
        );
        r.roundtrip(&[b"CONFIG", b"SET", b"maxmemory"], b"-ERR wrong number of arguments for 'config|set' command\r\n");
        r.roundtrip(&[b"CONFIG", b"SET", b"a", b"b", b"c"], b"-ERR syntax error\r\n");
        r.roundtrip(
            &[b"CONFIG", b"SET", b"hz", b"abc"],
            b"-ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer\r\n",
        );
        r.roundtrip(
            &[b"CONFIG", b"SET", b"appendonly", b"maybe"],
            b"-ERR CONFIG SET failed (possibly related to argument 'appendonly') - argument must be 'yes' or 'no'\r\n",
        );
        r.roundtrip(
            &[b"CONFIG", b"SET", b"maxmemory-policy", b"foo"],
            b"-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction, allkeys-s3fifo, allkeys-sieve, volatile-s3fifo, volatile-sieve\r\n",
        );
        r.roundtrip(&[b"CONFIG", b"GET"], b"-ERR wrong number of arguments for 'config|get' command\r\n");
        r.roundtrip(&[b"CONFIG"], b"-ERR wrong number of arguments for 'config' command\r\n");
        r.roundtrip(&[b"CONFIG", b"foo"], b"-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n");
        r.roundtrip(&[b"CONFIG", b"REWRITE"], b"-ERR The server is running without a config file\r\n");
        // A bad second value leaves the first one unchanged.
        r.roundtrip(
            &[b"CONFIG", b"SET", b"timeout", b"77", b"hz", b"x"],
            b"-ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer\r\n",
        );
        r.roundtrip(&[b"CONFIG", b"GET", b"timeout"], b"*2\r\n$7\r\ntimeout\r\n$1\r\n0\r\n");
        r.roundtrip(&[b"CONFIG", b"SET", b"timeout", b"77", b"hz", b"20"], b"+OK\r\n");
        r.roundtrip(&[b"CONFIG", b"GET", b"timeout"], b"*2\r\n$7\r\ntimeout\r\n$2\r\n77\r\n");
    });
}

#[test]
fn config_set_takes_effect() {
    let s = TestServer::start(1);
    let mut c = s.conn();
    let _: () = redis::cmd("CONFIG").arg("SET").arg("requirepass").arg("secret").query(&mut c).unwrap();
    // Already-authenticated connections stay so; new ones must AUTH.
    let mut r = s.raw();
    r.roundtrip(&[b"GET", b"x"], b"-NOAUTH Authentication required.\r\n");
    let _: () = redis::cmd("CONFIG").arg("SET").arg("requirepass").arg("").query(&mut c).unwrap();
    let mut r = s.raw();
    r.roundtrip(&[b"GET", b"x"], b"$-1\r\n");
    // maxclients applies to the next connection.
    let _: () = redis::cmd("CONFIG").arg("SET").arg("maxclients").arg("2").query(&mut c).unwrap();
    let mut r3 = s.raw();
    r3.expect(b"-ERR max number of clients reached\r\n");
}

#[test]
fn info_sections() {
    each_threads(|s| {
        let mut c = s.conn();
        let all: String = redis::cmd("INFO").query(&mut c).unwrap();
        let headers: Vec<&str> = all.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(
            headers,
            ["# Server", "# Clients", "# Memory", "# Persistence", "# Threads", "# Stats", "# Replication", "# CPU", "# Modules", "# Errorstats", "# Cluster", "# Keyspace"]
        );
        // One I/O thread per worker, each with its own connections (this
        // one is somewhere among them).
        let threads: String = redis::cmd("INFO").arg("threads").query(&mut c).unwrap();
        let lines: Vec<&str> = threads.lines().filter(|l| l.starts_with("io_thread_")).collect();
        let workers: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("io-threads").query(&mut c).unwrap();
        assert_eq!(lines.len().to_string(), workers[1], "{threads}");
        let clients: usize = lines.iter().map(|l| l.split("clients=").nth(1).unwrap().split(',').next().unwrap().parse::<usize>().unwrap()).sum();
        assert!(clients >= 1, "{threads}");
        assert!(lines.iter().all(|l| l.contains(",reads=") && l.contains(",writes=")), "{threads}");
        let everything: String = redis::cmd("INFO").arg("everything").query(&mut c).unwrap();
        assert!(everything.contains("# Commandstats\r\n"));
        let two: String = redis::cmd("INFO").arg("keyspace").arg("SERVER").query(&mut c).unwrap();
        let headers: Vec<&str> = two.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(headers, ["# Server", "# Keyspace"]);
        assert_eq!(info_field(&all, "redis_version").as_deref(), Some("8.4.0"));
        assert!(info_field(&all, "tern_version").is_some());
        assert_eq!(info_field(&all, "tcp_port"), Some(s.port.to_string()));
        let used: u64 = info_field(&all, "used_memory").unwrap().parse().unwrap();
        assert!(used > 100_000, "{used}");
        assert!(info_field(&all, "used_cpu_user").unwrap().contains('.'));
        let mut r = s.raw();
        r.roundtrip(&[b"INFO", b"nosuch"], b"$0\r\n\r\n");
        r.roundtrip(&[b"INFO", b"cluster"], b"$30\r\n# Cluster\r\ncluster_enabled:0\r\n\r\n");
        r.roundtrip(&[b"INFO", b"keyspace"], b"$12\r\n# Keyspace\r\n\r\n");
        r.roundtrip(&[b"SET", b"a", b"1"], b"+OK\r\n");
        r.roundtrip(&[b"SELECT", b"3"], b"+OK\r\n");
        r.roundtrip(&[b"SET", b"b", b"1"], b"+OK\r\n");
        r.roundtrip(
            &[b"INFO", b"keyspace"],
            b"$100\r\n# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0,subexpiry=0\r\ndb3:keys=1,expires=0,avg_ttl=0,subexpiry=0\r\n\r\n",
        );
    });
}

#[test]
fn info_stats_count() {
    each_threads(|s| {
        let mut c = s.conn();
        let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query(&mut c).unwrap();
        let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut c).unwrap();
        let _: String = redis::cmd("GET").arg("k").query(&mut c).unwrap();
        let _: Option<String> = redis::cmd("GET").arg("nope").query(&mut c).unwrap();
        let _: redis::RedisResult<()> = redis::cmd("GET").query(&mut c);
        let _: redis::RedisResult<()> = redis::cmd("NOSUCHCMD").query(&mut c);
        let st = info(&mut c, "stats");
        assert_eq!(info_field(&st, "keyspace_hits").as_deref(), Some("1"));
        assert_eq!(info_field(&st, "keyspace_misses").as_deref(), Some("1"));
        // RESETSTAT, SET, GET, GET (the failed ones are not processed).
        assert_eq!(info_field(&st, "total_commands_processed").as_deref(), Some("4"));
        assert_eq!(info_field(&st, "total_error_replies").as_deref(), Some("2"));
        let cs = info(&mut c, "commandstats");
        let get = info_field(&cs, "cmdstat_get").unwrap();
        assert!(get.starts_with("calls=2,usec="), "{get}");
        assert!(get.ends_with(",rejected_calls=1,failed_calls=0"), "{get}");
        assert!(info_field(&cs, "cmdstat_config|resetstat").unwrap().starts_with("calls=1,"));
        let es = info(&mut c, "errorstats");
        assert_eq!(info_field(&es, "errorstat_ERR").as_deref(), Some("count=2"));
        let cl = info(&mut c, "clients");
        assert_eq!(info_field(&cl, "connected_clients").as_deref(), Some("1"));
        let _c2 = s.conn();
        let mut c3 = s.conn();
        let cl = info(&mut c3, "clients");
        assert_eq!(info_field(&cl, "connected_clients").as_deref(), Some("3"));
        let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query(&mut c).unwrap();
        let st = info(&mut c, "stats");
        assert_eq!(info_field(&st, "keyspace_hits").as_deref(), Some("0"));
        let es = info(&mut c, "errorstats");
        assert_eq!(es, "# Errorstats\r\n");
    });
}

#[test]
fn info_expired_keys() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"CONFIG", b"RESETSTAT"], b"+OK\r\n");
        let mut c = s.conn();
        for i in 0..5 {
            let _: redis::RedisResult<()> = redis::cmd("SET").arg(format!("e{i}")).arg("v").arg("PX").arg(20).query(&mut c);
        }
        // SET may lack PX in this build; only count keys that got a TTL.
        let ks = info(&mut c, "keyspace");
        let expires: u64 = ks.split("expires=").nth(1).map(|x| x.split(',').next().unwrap().parse().unwrap()).unwrap_or(0);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let st = info(&mut c, "stats");
            let n: u64 = info_field(&st, "expired_keys").unwrap().parse().unwrap();
            if n == expires {
                break;
            }
            assert!(n < expires, "expired {n} of {expires}");
            assert!(std::time::Instant::now() < deadline, "expired_keys stuck at {n}");
            std::thread::yield_now();
        }
    });
}

#[test]
fn info_and_resetstat_inside_exec() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"SET", b"a", b"1"], b"+OK\r\n");
        r.roundtrip(&[b"MULTI"], b"+OK\r\n");
        r.roundtrip(&[b"INFO", b"keyspace"], b"+QUEUED\r\n");
        r.roundtrip(&[b"CONFIG", b"RESETSTAT"], b"+QUEUED\r\n");
        r.roundtrip(&[b"EXEC"], b"*2\r\n$56\r\n# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0,subexpiry=0\r\n\r\n+OK\r\n");
    });
}

#[test]
fn time_reply() {
    each_threads(|s| {
        let mut c = s.conn();
        let (secs, usecs): (u64, u64) = redis::cmd("TIME").query(&mut c).unwrap();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        assert!(secs.abs_diff(now) <= 2);
        assert!(usecs < 1_000_000);
        let mut r = s.raw();
        r.roundtrip(&[b"TIME", b"x"], b"-ERR wrong number of arguments for 'time' command\r\n");
    });
}

#[test]
fn shutdown_errors() {
    let s = TestServer::start(1);
    let mut r = s.raw();
    r.roundtrip(&[b"SHUTDOWN", b"ABORT"], b"-ERR No shutdown in progress.\r\n");
    r.roundtrip(&[b"SHUTDOWN", b"ABORT", b"NOW"], b"-ERR syntax error\r\n");
    r.roundtrip(&[b"SHUTDOWN", b"SAVE", b"NOSAVE"], b"-ERR syntax error\r\n");
    r.roundtrip(&[b"SHUTDOWN", b"foo"], b"-ERR syntax error\r\n");
    r.roundtrip(&[b"MULTI"], b"+OK\r\n");
    r.roundtrip(&[b"SHUTDOWN"], b"-ERR Command not allowed inside a transaction\r\n");
    r.roundtrip(&[b"DISCARD"], b"+OK\r\n");
    r.roundtrip(&[b"PING"], b"+PONG\r\n");
}

#[test]
fn shutdown_exits_zero() {
    for (threads, args) in [(1, &[&b"SHUTDOWN"[..]][..]), (2, &[&b"SHUTDOWN"[..], b"NOSAVE", b"NOW", b"FORCE"][..]), (1, &[&b"shutdown"[..], b"save"][..])] {
        let mut s = TestServer::start(threads);
        let mut other = s.raw();
        other.roundtrip(&[b"PING"], b"+PONG\r\n");
        let mut r = s.raw();
        r.cmd(args);
        // No reply: the connection just closes.
        assert!(r.is_closed());
        assert_eq!(s.wait_exit(Duration::from_secs(10)), Some(0));
        assert!(other.is_closed());
    }
}
