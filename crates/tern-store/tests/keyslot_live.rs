//! `key_slot` against a live redis-server-unstable's `CLUSTER KEYSLOT` for
//! thousands of random keys. Skipped (passes, saying so) when the reference
//! binary is absent; `TERN_REDIS_SERVER` names it explicitly.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use tern_store::key_slot;

fn reference_server() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TERN_REDIS_SERVER") {
        return Some(PathBuf::from(p));
    }
    // shared/ sits beside the repository (or beside a worktree's parent).
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    [root.join("../shared"), root.join("../../shared")]
        .into_iter()
        .map(|s| s.join("reference/bin/redis-server-unstable"))
        .find(|p| p.exists())
}

/// Stops the server by its PID however the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn random_keys_match_redis_cluster_keyslot() {
    let Some(bin) = reference_server() else {
        eprintln!("redis-server-unstable not found: skipped");
        return;
    };
    let dir = std::env::temp_dir().join(format!("tern-keyslot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let _server = Server(
        Command::new(bin)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    let conn = loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(c) => break c,
            Err(_) if start.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("reference server did not start: {e}"),
        }
    };
    conn.set_read_timeout(Some(Duration::from_secs(10))).unwrap();

    let mut rng = rand::rngs::StdRng::seed_from_u64(16384);
    let keys: Vec<Vec<u8>> = (0..5000)
        .map(|i| {
            let len = rng.gen_range(0..if i % 10 == 0 { 300 } else { 40 });
            // Half the keys from a small alphabet rich in braces.
            if i % 2 == 0 {
                (0..len).map(|_| b"{}ab\xff\x00"[rng.gen_range(0..6)]).collect()
            } else {
                (0..len).map(|_| rng.gen()).collect()
            }
        })
        .collect();
    let mut req = Vec::new();
    for k in &keys {
        write!(req, "*3\r\n$7\r\nCLUSTER\r\n$7\r\nKEYSLOT\r\n${}\r\n", k.len()).unwrap();
        req.extend_from_slice(k);
        req.extend_from_slice(b"\r\n");
    }
    let mut writer = conn.try_clone().unwrap();
    let sender = std::thread::spawn(move || writer.write_all(&req));
    let mut reader = BufReader::new(conn);
    let mut line = String::new();
    for k in &keys {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let want: u16 = line.strip_prefix(':').and_then(|l| l.trim_end().parse().ok()).unwrap_or_else(|| panic!("reply {line:?}"));
        assert_eq!(key_slot(k), want, "key {:?}", k.escape_ascii().to_string());
    }
    sender.join().unwrap().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
