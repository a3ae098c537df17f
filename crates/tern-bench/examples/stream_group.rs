//! A consumer group under load, for bench/streams.sh's `group` workload:
//! producers XADD to one stream at pipeline 16 while consumers of one
//! group each loop on XREADGROUP COUNT n (BLOCK 100, so an idle consumer
//! waits instead of spinning), acknowledging in the same round trip the
//! entries of the round before. Prints the entries consumed and added per
//! second, and the server's CPU (INFO cpu, user + system) per entry
//! consumed over the same window. PREFILL entries are added first, so that the consumers have a
//! backlog to read from whatever the producers manage.
//!
//! ```text
//!  producer ─► XADD s * f1 v f2 v f3 v  ×16 ─► 16 ids
//!  consumer ─► [XACK s g id…]  XREADGROUP GROUP g cN COUNT n BLOCK 100 STREAMS s >
//!           ◄─ [:k]            [[s, [[id, [f, v…]]…]]] or null
//! ```
//!
//!     cargo run --release -p tern-bench --example stream_group -- PORT SECS [CONSUMERS] [PRODUCERS] [COUNT] [PREFILL]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_resp::decode::{decode_value, Value};
use tern_resp::encode::request;

/// One connection: requests out, whole replies in.
struct Conn {
    s: TcpStream,
    buf: Vec<u8>,
    at: usize,
}

impl Conn {
    fn new(port: u16) -> Conn {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_nodelay(true).expect("nodelay");
        Conn { s, buf: Vec::with_capacity(1 << 16), at: 0 }
    }

    fn send(&mut self, out: &[u8]) {
        self.s.write_all(out).expect("write");
    }

    fn reply(&mut self) -> Value {
        loop {
            if let Some((v, n)) = decode_value(&self.buf[self.at..]).expect("a well-formed reply") {
                self.at += n;
                if self.at == self.buf.len() {
                    self.buf.clear();
                    self.at = 0;
                }
                if let Value::Error(e) = &v {
                    panic!("server error: {}", String::from_utf8_lossy(e));
                }
                return v;
            }
            let mut chunk = [0u8; 1 << 16];
            let n = self.s.read(&mut chunk).expect("read");
            assert!(n > 0, "server closed the connection");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

fn cmd(out: &mut Vec<u8>, words: &[&[u8]]) {
    request(out, words.iter().copied());
}

/// The ids of an XREADGROUP reply (one stream).
fn ids(v: Value) -> Vec<Vec<u8>> {
    let streams = match v {
        Value::Array(a) => a,
        Value::Map(m) => m.into_iter().map(|(k, v)| Value::Array(vec![k, v])).collect(),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    for s in streams {
        let Value::Array(mut kv) = s else { continue };
        let Some(Value::Array(entries)) = kv.pop() else { continue };
        for e in entries {
            if let Value::Array(mut e) = e {
                if let Value::Bulk(id) = e.swap_remove(0) {
                    out.push(id);
                }
            }
        }
    }
    out
}

/// The server's CPU seconds so far (INFO cpu: used_cpu_sys + used_cpu_user).
fn server_cpu(c: &mut Conn) -> f64 {
    let mut out = Vec::new();
    cmd(&mut out, &[b"INFO", b"cpu"]);
    c.send(&out);
    let (Value::Bulk(text) | Value::Verbatim(text)) = c.reply() else { panic!("INFO is a bulk string") };
    String::from_utf8_lossy(&text)
        .lines()
        .filter_map(|l| l.strip_prefix("used_cpu_sys:").or_else(|| l.strip_prefix("used_cpu_user:")))
        .map(|v| v.trim().parse::<f64>().expect("a number of seconds"))
        .sum()
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: u64| a.get(i).map_or(d, |s| s.parse().expect("a number"));
    let port = arg(0, 6379) as u16;
    let secs = arg(1, 8);
    let (consumers, producers, count, prefill) = (arg(2, 10), arg(3, 2), arg(4, 10), arg(5, 0));
    let mut setup = Conn::new(port);
    let mut out = Vec::new();
    cmd(&mut out, &[b"DEL", b"s"]);
    cmd(&mut out, &[b"XGROUP", b"CREATE", b"s", b"g", b"$", b"MKSTREAM"]);
    setup.send(&out);
    setup.reply();
    setup.reply();
    let mut batch = Vec::new();
    for _ in 0..1000 {
        cmd(&mut batch, &[b"XADD", b"s", b"*", b"f1", b"0123456789", b"f2", b"0123456789", b"f3", b"0123456789"]);
    }
    for _ in 0..prefill / 1000 {
        setup.send(&batch);
        for _ in 0..1000 {
            setup.reply();
        }
    }

    let stop = Arc::new(AtomicBool::new(false));
    let (added, consumed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut threads = Vec::new();
    for _ in 0..producers {
        let (stop, added) = (stop.clone(), added.clone());
        threads.push(std::thread::spawn(move || {
            let mut c = Conn::new(port);
            let mut out = Vec::new();
            for _ in 0..16 {
                cmd(&mut out, &[b"XADD", b"s", b"*", b"f1", b"0123456789", b"f2", b"0123456789", b"f3", b"0123456789"]);
            }
            while !stop.load(Ordering::Relaxed) {
                c.send(&out);
                for _ in 0..16 {
                    c.reply();
                }
                added.fetch_add(16, Ordering::Relaxed);
            }
        }));
    }
    for i in 0..consumers {
        let (stop, consumed) = (stop.clone(), consumed.clone());
        threads.push(std::thread::spawn(move || {
            let mut c = Conn::new(port);
            let name = format!("c{i}");
            let count = count.to_string();
            let mut pending: Vec<Vec<u8>> = Vec::new();
            let mut out = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                out.clear();
                let acking = !pending.is_empty();
                if acking {
                    let mut words: Vec<&[u8]> = vec![b"XACK", b"s", b"g"];
                    words.extend(pending.iter().map(Vec::as_slice));
                    cmd(&mut out, &words);
                }
                cmd(&mut out, &[b"XREADGROUP", b"GROUP", b"g", name.as_bytes(), b"COUNT", count.as_bytes(), b"BLOCK", b"100", b"STREAMS", b"s", b">"]);
                c.send(&out);
                if acking {
                    c.reply();
                }
                pending = ids(c.reply());
                consumed.fetch_add(pending.len() as u64, Ordering::Relaxed);
            }
        }));
    }
    // Counted from the first second on, once every connection is busy.
    std::thread::sleep(Duration::from_secs(1));
    let (c0, a0, cpu0, t0) = (consumed.load(Ordering::Relaxed), added.load(Ordering::Relaxed), server_cpu(&mut setup), Instant::now());
    std::thread::sleep(Duration::from_secs(secs));
    let (c1, a1, cpu1, dt) = (consumed.load(Ordering::Relaxed), added.load(Ordering::Relaxed), server_cpu(&mut setup), t0.elapsed().as_secs_f64());
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    let n = c1 - c0;
    println!("consumed/s {:.0} added/s {:.0} cpu_us_per_consumed {:.3}", n as f64 / dt, (a1 - a0) as f64 / dt, (cpu1 - cpu0) * 1e6 / n.max(1) as f64);
}
