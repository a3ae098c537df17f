//! ACL users against the real binary: `user` lines and the ACL file at
//! start, AUTH as a user, command and key rules (read/write scope), EXEC
//! re-checking its commands, ACL DELUSER closing the user's connections,
//! `requirepass` as the default user's password. The replies' bytes are
//! checked against the reference server in tests/python/test_acl.py.
mod common;
use common::*;


fn start_fails(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tern-server")).args(args).output().expect("run tern-server");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout)
}

/// The case: a file that locks the server down is acted on.
#[test]
fn a_hardened_config_locks_the_server_down() {
    let conf = TempFile::new("hard.conf", "port 0\nsave \"\"\nuser default off\nuser alice on >secret ~* +@all -flushall\n");
    let s = TestServer::start_args(&[conf.path()]);
    let mut anon = s.raw();
    anon.roundtrip(&[b"SET", b"k", b"v"], b"-NOAUTH Authentication required.\r\n");
    anon.roundtrip(&[b"FLUSHALL"], b"-NOAUTH Authentication required.\r\n");
    anon.roundtrip(&[b"AUTH", b"default", b""], b"-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    anon.roundtrip(&[b"AUTH", b"alice", b"wrong"], b"-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    anon.roundtrip(&[b"AUTH", b"alice", b"secret"], b"+OK\r\n");
    anon.roundtrip(&[b"SET", b"k", b"v"], b"+OK\r\n");
    anon.roundtrip(&[b"FLUSHALL"], b"-NOPERM User alice has no permissions to run the 'flushall' command\r\n");
    anon.roundtrip(&[b"ACL", b"WHOAMI"], b"$5\r\nalice\r\n");
    // A new connection still starts locked out.
    let mut other = s.raw();
    other.roundtrip(&[b"GET", b"k"], b"-NOAUTH Authentication required.\r\n");
    other.cmd(&[b"HELLO", b"3", b"AUTH", b"alice", b"secret"]);
    other.expect(b"%7\r\n$6\r\nserver\r\n");
}

/// Whether the server closed `r` (a read that ends, not one that times out).
fn closed(r: &mut Raw) -> bool {
    use std::io::Read;
    r.s.set_read_timeout(Some(std::time::Duration::from_millis(50))).unwrap();
    let mut b = [0u8; 1];
    match r.s.read(&mut b) {
        Ok(0) => true,
        Err(e) => !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
        Ok(_) => false,
    }
}

#[test]
fn rules_that_cannot_be_honoured_stop_start_up() {
    let bad = TempFile::new("bad.conf", "port 0\nuser alice on +nosuchcommand\n");
    let err = start_fails(&[&bad.path()]);
    assert!(err.contains("FATAL CONFIG FILE ERROR") && err.contains("at line 2") && err.contains("Unknown command or category name in ACL"), "{err}");
    let bad = TempFile::new("bad2.conf", "port 0\nuser alice on %X~y\n");
    assert!(start_fails(&[&bad.path()]).contains("Syntax error"));
    let acl = TempFile::new("users.acl", "user bob on nopass ~* +@all\n");
    let both = TempFile::new("both.conf", &format!("port 0\naclfile {}\nuser alice on\n", acl.path()));
    assert!(start_fails(&[&both.path()]).contains("please define either an ACL file or declare users directly in your redis.conf, but not both"));
    let broken = TempFile::new("broken.acl", "user bob on +@nosuch\n");
    let err = start_fails(&["--port", "0", "--aclfile", &broken.path()]);
    assert!(err.contains("Aborting Redis startup because of ACL errors") && err.contains("Unknown command or category name in ACL"), "{err}");
    let rename = TempFile::new("rename.conf", "port 0\nrename-command NOSUCH x\n");
    assert!(start_fails(&[&rename.path()]).contains("No such command in rename-command"));
}

#[test]
fn renamed_commands_answer_to_their_new_name_only() {
    let conf = TempFile::new("renamed.conf", "port 0\nsave \"\"\nrename-command FLUSHALL \"\"\nrename-command config xconfig\nappendonly no\n");
    let s = TestServer::start_args(&[conf.path()]);
    let mut r = s.raw();
    r.roundtrip(&[b"FLUSHALL"], b"-ERR unknown command 'FLUSHALL'\r\n");
    r.roundtrip(&[b"CONFIG", b"GET", b"hz"], b"-ERR unknown command 'CONFIG', with args beginning with: 'GET' 'hz' \r\n");
    r.roundtrip(&[b"XCONFIG", b"GET", b"hz"], b"*2\r\n$2\r\nhz\r\n$2\r\n10\r\n");
    r.roundtrip(&[b"COMMAND", b"INFO", b"flushall"], b"*1\r\n$-1\r\n");
    // ACL rules name commands by their own names, as in Redis.
    r.roundtrip(&[b"ACL", b"SETUSER", b"u", b"+config|get"], b"+OK\r\n");
    let mut c = s.conn();
    let names: Vec<String> = redis::cmd("COMMAND").arg("LIST").query(&mut c).unwrap();
    assert!(!names.iter().any(|n| n == "flushall") && names.iter().any(|n| n == "config"), "{names:?}");
    let count: usize = redis::cmd("COMMAND").arg("COUNT").query(&mut c).unwrap();
    assert_eq!(count, names.iter().filter(|n| !n.contains('|')).count());
}

#[test]
fn the_acl_file_is_loaded_at_start_and_by_acl_load() {
    let acl = TempFile::new("start.acl", "user default on nopass ~* &* +@all\nuser bob on >pw ~b:* +get\n");
    let s = TestServer::start_with(1, &["--aclfile", &acl.path()]);
    let mut r = s.raw();
    r.roundtrip(&[b"ACL", b"USERS"], b"*2\r\n$3\r\nbob\r\n$7\r\ndefault\r\n");
    r.roundtrip(&[b"AUTH", b"bob", b"pw"], b"+OK\r\n");
    r.roundtrip(&[b"GET", b"b:1"], b"$-1\r\n");
    r.roundtrip(&[b"GET", b"c:1"], b"-NOPERM No permissions to access a key\r\n");
    r.roundtrip(&[b"SET", b"b:1", b"x"], b"-NOPERM User bob has no permissions to run the 'set' command\r\n");
    // bob loses GET in the file: his connection sees it at its next command.
    std::fs::write(&acl.0, "user default on nopass ~* &* +@all\nuser bob on >pw ~b:* +set\n").unwrap();
    let mut admin = s.raw();
    admin.roundtrip(&[b"ACL", b"LOAD"], b"+OK\r\n");
    r.roundtrip(&[b"GET", b"b:1"], b"-NOPERM User bob has no permissions to run the 'get' command\r\n");
    r.roundtrip(&[b"SET", b"b:1", b"x"], b"+OK\r\n");
    // A broken file changes nothing.
    std::fs::write(&acl.0, "user bob on +@nosuch\n").unwrap();
    let path = acl.path();
    let want = format!(
        "-ERR {path}:1: Error in applying operation '+@nosuch': Unknown command or category name in ACL. WARNING: ACL errors detected, no change to the previously active ACL rules was performed\r\n"
    );
    admin.roundtrip(&[b"ACL", b"LOAD"], want.as_bytes());
    r.roundtrip(&[b"SET", b"b:2", b"x"], b"+OK\r\n");
    // ACL SAVE writes what is in force.
    admin.roundtrip(&[b"ACL", b"SETUSER", b"carol", b"on", b"nopass", b"+ping"], b"+OK\r\n");
    admin.roundtrip(&[b"ACL", b"SAVE"], b"+OK\r\n");
    let text = std::fs::read_to_string(&acl.0).unwrap();
    assert!(text.contains("user carol on nopass sanitize-payload resetchannels -@all +ping\n"), "{text}");
}

#[test]
fn key_rules_have_a_read_and_a_write_scope() {
    each_threads(|s| {
        let mut admin = s.raw();
        admin.roundtrip(&[b"ACL", b"SETUSER", b"kr", b"on", b"nopass", b"%R~r:*", b"%W~w:*", b"~rw:*", b"+@all"], b"+OK\r\n");
        let mut c = s.raw();
        c.roundtrip(&[b"AUTH", b"kr", b"x"], b"+OK\r\n");
        c.roundtrip(&[b"GET", b"r:1"], b"$-1\r\n");
        c.roundtrip(&[b"SET", b"r:1", b"v"], b"-NOPERM No permissions to access a key\r\n");
        c.roundtrip(&[b"SET", b"w:1", b"v"], b"+OK\r\n");
        c.roundtrip(&[b"GET", b"w:1"], b"-NOPERM No permissions to access a key\r\n");
        // SET ... GET reads too; APPEND only writes (no ACCESS).
        c.roundtrip(&[b"SET", b"w:1", b"v", b"GET"], b"-NOPERM No permissions to access a key\r\n");
        c.roundtrip(&[b"APPEND", b"w:1", b"v"], b":2\r\n");
        c.roundtrip(&[b"SET", b"rw:1", b"v", b"GET"], b"$-1\r\n");
        // Keys found by the key specs: both of LMOVE's, SORT's STORE.
        c.roundtrip(&[b"LMOVE", b"rw:l", b"r:l", b"LEFT", b"LEFT"], b"-NOPERM No permissions to access a key\r\n");
        c.roundtrip(&[b"SORT", b"rw:l", b"STORE", b"r:x"], b"-NOPERM No permissions to access a key\r\n");
        c.roundtrip(&[b"SORT", b"rw:l", b"STORE", b"w:x"], b":0\r\n");
        // EXISTS touches no value: any pattern will do.
        c.roundtrip(&[b"EXISTS", b"r:1", b"w:1"], b":1\r\n");
        c.roundtrip(&[b"EXISTS", b"x"], b"-NOPERM No permissions to access a key\r\n");
        admin.roundtrip(&[b"ACL", b"DRYRUN", b"kr", b"GET", b"w:1"], b"$50\r\nUser kr has no permissions to access the 'w:1' key\r\n");
        admin.roundtrip(&[b"ACL", b"DRYRUN", b"kr", b"GET", b"r:1"], b"+OK\r\n");
        admin.roundtrip(&[b"ACL", b"DELUSER", b"kr"], b":1\r\n");
    });
}

#[test]
fn exec_checks_its_commands_again_and_deluser_closes_connections() {
    each_threads(|s| {
        let mut admin = s.raw();
        admin.roundtrip(&[b"ACL", b"SETUSER", b"tx", b"on", b">p", b"~*", b"+@all"], b"+OK\r\n");
        let mut c = s.raw();
        c.roundtrip(&[b"AUTH", b"tx", b"p"], b"+OK\r\n");
        c.roundtrip(&[b"MULTI"], b"+OK\r\n");
        c.roundtrip(&[b"SET", b"a", b"1"], b"+QUEUED\r\n");
        c.roundtrip(&[b"GET", b"a"], b"+QUEUED\r\n");
        admin.roundtrip(&[b"ACL", b"SETUSER", b"tx", b"-set"], b"+OK\r\n");
        c.roundtrip(
            &[b"EXEC"],
            b"*2\r\n-NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to execute the command or subcommand\r\n$-1\r\n",
        );
        // Refused while queueing: the transaction is aborted.
        c.roundtrip(&[b"MULTI"], b"+OK\r\n");
        c.roundtrip(&[b"SET", b"a", b"1"], b"-NOPERM User tx has no permissions to run the 'set' command\r\n");
        c.roundtrip(&[b"EXEC"], b"-EXECABORT Transaction discarded because of previous errors.\r\n");
        // The log has both (the same refusal of `set`, once in EXEC and
        // once while queueing: one entry counted twice), in context multi.
        let mut a = s.conn();
        let log: Vec<Vec<redis::Value>> = redis::cmd("ACL").arg("LOG").query(&mut a).unwrap();
        assert_eq!(log.len(), 1, "{log:?}");
        let text = format!("{:?}", log[0]);
        assert!(text.contains("\"multi\"") && text.contains("\"set\"") && text.contains("\"tx\""), "{text}");
        assert!(matches!(log[0][1], redis::Value::Int(2)), "{text}");
        // Deleting the user closes its connection; the admin's own reply comes.
        admin.roundtrip(&[b"ACL", b"DELUSER", b"tx", b"nosuch"], b":1\r\n");
        wait_for("tx's connection to close", || closed(&mut c));
        admin.roundtrip(&[b"ACL", b"LOG", b"RESET"], b"+OK\r\n");
    });
}

#[test]
fn requirepass_is_the_default_user_s_password() {
    let s = TestServer::start_with(1, &["--requirepass", "pw"]);
    let mut r = s.raw();
    r.roundtrip(&[b"PING"], b"-NOAUTH Authentication required.\r\n");
    r.roundtrip(&[b"AUTH", b"pw"], b"+OK\r\n");
    let hash = b"30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4";
    let mut want = b"*12\r\n$5\r\nflags\r\n*2\r\n$2\r\non\r\n$16\r\nsanitize-payload\r\n$9\r\npasswords\r\n*1\r\n$64\r\n".to_vec();
    want.extend_from_slice(hash);
    want.extend_from_slice(b"\r\n$8\r\ncommands\r\n$5\r\n+@all\r\n$4\r\nkeys\r\n$2\r\n~*\r\n$8\r\nchannels\r\n$2\r\n&*\r\n$9\r\nselectors\r\n*0\r\n");
    r.roundtrip(&[b"ACL", b"GETUSER", b"default"], &want);
    r.roundtrip(&[b"CONFIG", b"SET", b"requirepass", b""], b"+OK\r\n");
    r.roundtrip(&[b"AUTH", b"x"], b"-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n");
    let mut fresh = s.raw();
    fresh.roundtrip(&[b"PING"], b"+PONG\r\n");
    fresh.roundtrip(&[b"CLIENT", b"KILL", b"USER", b"nosuch"], b"-ERR No such user 'nosuch'\r\n");
}
