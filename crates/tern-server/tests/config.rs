//! Configuration against the real binary: config files, command-line
//! overrides, fatal errors, CONFIG GET/SET round trips, CONFIG REWRITE and
//! the log file.
mod common;
use common::*;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn get(c: &mut redis::Connection, name: &str) -> String {
    let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg(name).query(c).unwrap();
    assert_eq!(v.len(), 2, "{name}: {v:?}");
    v[1].clone()
}

/// Runs the binary with `args` expecting it to refuse to start; returns
/// (exit code, stderr).
fn start_fails(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tern-server")).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).output().expect("run tern-server");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn starts_from_a_config_file() {
    // appendonly yes writes its directory in `dir`: a fresh one.
    let dir = data_dir();
    let conf = TempFile::new(
        "start.conf",
        &format!(
            "# a comment\nport 0\nthreads 2\ntimeout 17\nmaxmemory 2mb\nsave 900 1 300 10\nappendonly yes\ndir {}\n\
             client-output-buffer-limit normal 1mb 512kb 10\nrequirepass \"with space\"\nhash-max-ziplist-entries 64\n",
            dir.display()
        ),
    );
    let s = TestServer::start_args(&[conf.path()]);
    let mut r = s.raw();
    r.roundtrip(&[b"AUTH", b"with space"], b"+OK\r\n");
    r.roundtrip(&[b"CONFIG", b"GET", b"timeout"], b"*2\r\n$7\r\ntimeout\r\n$2\r\n17\r\n");
    r.roundtrip(&[b"CONFIG", b"GET", b"maxmemory"], b"*2\r\n$9\r\nmaxmemory\r\n$7\r\n2097152\r\n");
    r.roundtrip(&[b"CONFIG", b"GET", b"save"], b"*2\r\n$4\r\nsave\r\n$12\r\n900 1 300 10\r\n");
    r.roundtrip(&[b"CONFIG", b"GET", b"appendonly"], b"*2\r\n$10\r\nappendonly\r\n$3\r\nyes\r\n");
    r.roundtrip(&[b"CONFIG", b"GET", b"threads"], b"*2\r\n$7\r\nthreads\r\n$1\r\n2\r\n");
    r.roundtrip(&[b"CONFIG", b"GET", b"hash-max-listpack-entries"], b"*2\r\n$25\r\nhash-max-listpack-entries\r\n$2\r\n64\r\n");
    r.roundtrip(
        &[b"CONFIG", b"GET", b"client-output-buffer-limit"],
        b"*2\r\n$26\r\nclient-output-buffer-limit\r\n$79\r\nnormal 1048576 524288 10 slave 268435456 67108864 60 pubsub 33554432 8388608 60\r\n",
    );
    // INFO names the file, by its absolute path.
    let mut c = s.client().get_connection().unwrap();
    let _: () = redis::cmd("AUTH").arg("with space").query(&mut c).unwrap();
    let info: String = redis::cmd("INFO").arg("server").query(&mut c).unwrap();
    let canonical = std::fs::canonicalize(&conf.0).unwrap().display().to_string();
    assert!(info.contains(&format!("config_file:{canonical}\r\n")), "{info}");
    // The AOF is on, in the configured directory.
    let persistence: String = redis::cmd("INFO").arg("persistence").query(&mut c).unwrap();
    assert!(persistence.contains("aof_enabled:1\r\n"), "{persistence}");
    assert!(dir.join("appendonlydir").join("appendonly.aof.manifest").is_file());
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn command_line_overrides_the_file() {
    let conf = TempFile::new("override.conf", "timeout 17\nhz 20\nloglevel verbose\n");
    let s = TestServer::start_args(&[conf.path(), "--port".into(), "0".into(), "--timeout".into(), "5".into(), "--save".into(), "".into()]);
    let mut c = s.conn();
    assert_eq!(get(&mut c, "timeout"), "5");
    assert_eq!(get(&mut c, "hz"), "20");
    assert_eq!(get(&mut c, "save"), "");
    assert_eq!(get(&mut c, "loglevel"), "verbose");
}

#[test]
fn bad_configuration_stops_start_up() {
    let bad = TempFile::new("bad.conf", "port 0\nno-such-directive 1\n");
    let (code, err) = start_fails(&[&bad.path()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("FATAL CONFIG FILE ERROR"), "{err}");
    assert!(err.contains(&bad.path()) && err.contains("at line 2"), "{err}");
    assert!(err.contains(">>> 'no-such-directive 1'") && err.contains("Bad directive or wrong number of arguments"), "{err}");

    let bad = TempFile::new("badvalue.conf", "# first\nmaxclients lots\n");
    let (code, err) = start_fails(&[&bad.path()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("at line 2") && err.contains("'maxclients lots'") && err.contains("argument couldn't be parsed into an integer"), "{err}");

    let bad = TempFile::new("badbool.conf", "appendonly perhaps\n");
    let (_, err) = start_fails(&[&bad.path()]);
    assert!(err.contains("argument must be 'yes' or 'no'") && err.contains("directive 'appendonly'"), "{err}");

    let bad = TempFile::new("quotes.conf", "requirepass \"open\n");
    let (code, err) = start_fails(&[&bad.path()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("Unbalanced quotes"), "{err}");

    let bad = TempFile::new("module.conf", "loadmodule /x.so\n");
    let (_, err) = start_fails(&[&bad.path()]);
    assert!(err.contains("does not support modules"), "{err}");

    // Directives that guard access or data are never accepted and ignored:
    // what Tern cannot act on stops start-up, naming the line.
    for (line, why) in [
        ("user alice on >secret ~* +nosuchcommand", "Unknown command or category name in ACL"),
        ("rename-command NOSUCH FOO", "No such command in rename-command"),
        ("rename-command GET SET", "Target command name already exists"),
        ("aclfile /no/such/users.acl", "Aborting Redis startup because of ACL errors"),
        ("replicaof 127.0.0.1 notaport", "Invalid master port"),
    ] {
        let bad = TempFile::new("guard.conf", &format!("port 0\n{line}\n"));
        let (code, err) = start_fails(&[&bad.path()]);
        assert_eq!(code, Some(1), "{line}");
        assert!(err.contains(why), "{line}: {err}");
    }
    let (code, err) = start_fails(&["--port", "0", "--port", "99999"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("command line") && err.contains("argument must be between 0 and 65535 inclusive"), "{err}");

    let (code, err) = start_fails(&["/no/such/tern.conf"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("/no/such/tern.conf"), "{err}");
}

#[test]
fn config_set_get_round_trip() {
    each_threads(|s| {
        let mut c = s.conn();
        for (name, value, shown) in [
            ("timeout", "300", "300"),
            ("maxmemory", "100mb", "104857600"),
            ("maxmemory", "1k", "1000"),
            ("maxmemory-policy", "ALLKEYS-LRU", "allkeys-lru"),
            ("loglevel", "verbose", "verbose"),
            ("hz", "1000", "500"),
            ("proto-max-bulk-len", "2mb", "2097152"),
            ("appendfsync", "always", "always"),
            ("slowlog-log-slower-than", "-1", "-1"),
            ("hash-max-ziplist-entries", "256", "256"),
            ("notify-keyspace-events", "KEA", "AKE"),
            ("save", "60 5", "60 5"),
            ("client-output-buffer-limit", "normal 1gb 0 0 slave 0 0 0", "normal 1073741824 0 0 slave 0 0 0 pubsub 33554432 8388608 60"),
        ] {
            let _: () = redis::cmd("CONFIG").arg("SET").arg(name).arg(value).query(&mut c).unwrap();
            assert_eq!(get(&mut c, name), shown, "{name} {value}");
        }
        // The alias and the name are the same setting.
        assert_eq!(get(&mut c, "hash-max-listpack-entries"), "256");
        let mut r = s.raw();
        r.roundtrip(&[b"CONFIG", b"SET", b"save", b"60"], b"-ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters\r\n");
        r.roundtrip(
            &[b"CONFIG", b"SET", b"client-output-buffer-limit", b"weird 1 1 1"],
            b"-ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Invalid client class specified in buffer limit configuration.\r\n",
        );
        r.roundtrip(
            &[b"CONFIG", b"SET", b"maxclients", b"+5"],
            b"-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer\r\n",
        );
        r.roundtrip(&[b"CONFIG", b"SET", b"port", b"7000"], b"-ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config\r\n");
    });
}

#[test]
fn config_rewrite_keeps_comments_and_order() {
    let conf =
        TempFile::new("rewrite.conf", "# Tern test config\nport 0\n\n# idle clients\ntimeout 17\nhz 10\n# again\ntimeout 18\n");
    let s = TestServer::start_args(&[conf.path()]);
    let mut c = s.conn();
    assert_eq!(get(&mut c, "timeout"), "18");
    let _: () = redis::cmd("CONFIG").arg("SET").arg("timeout").arg("99").arg("maxmemory").arg("3mb").arg("save").arg("").query(&mut c).unwrap();
    let _: () = redis::cmd("CONFIG").arg("SET").arg("requirepass").arg("p w").query(&mut c).unwrap();
    // Users are written as they are in force (Redis's rewriteConfigUserOption).
    let _: () = redis::cmd("ACL").arg("SETUSER").arg("bob").arg("on").arg(">x").arg("~*").arg("+get").query(&mut c).unwrap();
    let _: () = redis::cmd("CONFIG").arg("REWRITE").query(&mut c).unwrap();
    let text = conf.read();
    assert_eq!(
        text,
        "# Tern test config\nport 0\n\n# idle clients\ntimeout 99\nhz 10\n# again\n\
         # Generated by CONFIG REWRITE\nmaxmemory 3mb\nrequirepass \"p w\"\nsave \"\"\n\
         user bob on sanitize-payload #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 ~* resetchannels -@all +get\n\
         user default on sanitize-payload #98913e6cb4a5776c38dbbc32f28532ae88f01ced08853a91c1bbdcbe3210f68e ~* &* +@all\n"
    );
    // A second rewrite with nothing changed is a fixed point.
    let _: () = redis::cmd("CONFIG").arg("REWRITE").query(&mut c).unwrap();
    assert_eq!(conf.read(), text);
    drop(c);
    drop(s);
    // And the server starts from it with the same values.
    let s = TestServer::start_args(&[conf.path()]);
    let mut c = s.client().get_connection().unwrap();
    let _: () = redis::cmd("AUTH").arg("p w").query(&mut c).unwrap();
    assert_eq!(get(&mut c, "timeout"), "99");
    assert_eq!(get(&mut c, "maxmemory"), "3145728");
    assert_eq!(get(&mut c, "save"), "");
    let _: () = redis::cmd("AUTH").arg("bob").arg("x").query(&mut c).unwrap();
}

#[test]
fn logfile_directive_writes_there() {
    let log = TempFile::new("server.log", "");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tern-server"))
        .args(["--port", "0", "--threads", "1", "--logfile", &log.path(), "--loglevel", "verbose", "--aof-timestamp-enabled", "yes", "--save", ""])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let port: u16 = loop {
        if let Some(p) = log.read().split("port=").nth(1) {
            if let Some(p) = p.split('.').next().and_then(|p| p.parse().ok()) {
                break p;
            }
        }
        assert!(Instant::now() < deadline, "no port in the log: {}", log.read());
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut r = Raw::connect(port);
    r.roundtrip(&[b"CONFIG", b"GET", b"logfile"], format!("*2\r\n$7\r\nlogfile\r\n${}\r\n{}\r\n", log.path().len(), log.path()).as_bytes());
    r.roundtrip(&[b"SHUTDOWN"], b"");
    let code = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break st.code();
        }
        assert!(Instant::now() < deadline, "server did not exit");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(code, Some(0));
    let text = log.read();
    assert!(text.contains("Ready to accept connections"), "{text}");
    assert!(text.contains("Directive 'aof-timestamp-enabled' is accepted but not acted on"), "{text}");
    assert!(text.contains(" # User requested shutdown..."), "{text}");
    // Redis's line format: pid:M dd Mon yyyy hh:mm:ss.mmm <mark> message.
    let first = text.lines().next().unwrap();
    let (pid, rest) = first.split_once(":M ").unwrap();
    assert_eq!(pid, child.id().to_string());
    assert_eq!(rest.as_bytes()[2], b' ');
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        use std::io::Read;
        o.read_to_string(&mut out).unwrap();
    }
    assert!(out.is_empty(), "logged to stdout too: {out}");
}

#[test]
fn config_from_stdin() {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_tern-server"))
        .args(["-", "--threads", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"port 0\ntimeout 42\n").unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let mut port = 0u16;
    for line in out.lines() {
        let line = line.unwrap();
        if let Some(p) = line.split("port=").nth(1) {
            port = p.trim_end_matches('.').parse().unwrap();
            break;
        }
    }
    let mut r = Raw::connect(port);
    r.roundtrip(&[b"CONFIG", b"GET", b"timeout"], b"*2\r\n$7\r\ntimeout\r\n$2\r\n42\r\n");
    r.roundtrip(&[b"CONFIG", b"REWRITE"], b"-ERR The server is running without a config file\r\n");
    let _ = child.kill();
    let _ = child.wait();
}
