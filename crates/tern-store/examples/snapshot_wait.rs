//! How long writers wait while a snapshot runs, and the memory it holds.
//!
//! Fills database 0 with `keys` keys (16-byte names, 100-byte values),
//! then runs `writers` threads that overwrite random keys (one in ten a
//! new key) as fast as they can, each timing how long it waits for its
//! shard's lock. First for `secs` seconds with no snapshot, then while a
//! snapshot runs over the keyspace, driven by this thread with a sink
//! that copies each key and value into a buffer (as an RDB writer would
//! serialise them), written out per MiB to `io::sink`. Prints the wait
//! distribution of both phases, the longest `Snapshot::next` call (the
//! longest a slice held a lock, plus delivering copies with none held),
//! the time all locks were held at the start, and the captured copies'
//! peak next to the dataset's bytes.
//!
//! cargo run --release -p tern-store --example snapshot_wait -- [keys] [writers] [secs] [slice]

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use tern_store::{Keyspace, NewValue, ValueRef};

fn arg(i: usize, default: usize) -> usize {
    std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn summary(name: &str, mut w: Vec<u32>, secs: f64) {
    w.sort_unstable();
    let q = |p: f64| w.get(((w.len() as f64 * p) as usize).min(w.len().saturating_sub(1))).copied().unwrap_or(0);
    let over = |ns: u32| w.iter().rev().take_while(|&&x| x > ns).count();
    println!(
        "{name:>12}: {} writes ({:.0}/s); lock wait p50 {} ns, p99 {} ns, p99.9 {} ns, max {:.3} ms; over 100 µs: {}, over 1 ms: {}",
        w.len(),
        w.len() as f64 / secs,
        q(0.5),
        q(0.99),
        q(0.999),
        f64::from(q(1.0)) / 1e6,
        over(100_000),
        over(1_000_000)
    );
}

fn main() {
    let (keys, writers, secs, slice) = (arg(1, 1_000_000), arg(2, 1), arg(3, 2), arg(4, tern_store::snapshot::SLICE));
    let ks = Arc::new(Keyspace::new(16, 16));
    let t = Instant::now();
    for i in 0..keys {
        let k = format!("key:{i:012}");
        let l = ks.locate(0, k.as_bytes());
        ks.lock(l.gid).set(k.as_bytes(), l.hash, NewValue::Bytes(&[b'v'; 100]), None, 0);
    }
    let dataset: usize = (0..ks.total_shards() as u32).map(|g| ks.lock(g).dataset_mem()).sum();
    println!("{keys} keys loaded in {:.2} s; dataset {} MiB (items and values)", t.elapsed().as_secs_f64(), dataset >> 20);

    // 0: no snapshot, 1: snapshot running, 2: stop.
    let phase = Arc::new(AtomicU8::new(0));
    let fresh = Arc::new(AtomicU64::new(0));
    let ready = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..writers)
        .map(|t| {
            let (ks, phase, fresh) = (ks.clone(), phase.clone(), fresh.clone());
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(t as u64);
                let mut waits = [Vec::new(), Vec::new()];
                loop {
                    let p = phase.load(Ordering::Relaxed);
                    if p == 2 {
                        return waits;
                    }
                    let k = if rng.gen_range(0..10) == 0 {
                        format!("new:{:012}", fresh.fetch_add(1, Ordering::Relaxed))
                    } else {
                        format!("key:{:012}", rng.gen_range(0..keys))
                    };
                    let l = ks.locate(0, k.as_bytes());
                    let t0 = Instant::now();
                    let mut s = ks.lock(l.gid);
                    let w = t0.elapsed().as_nanos().min(u32::MAX as u128) as u32;
                    s.set(k.as_bytes(), l.hash, NewValue::Bytes(&[b'w'; 100]), None, 1);
                    drop(s);
                    waits[p as usize].push(w);
                }
            })
        })
        .collect();
    ready.store(true, Ordering::Relaxed);
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(secs as u64) {
        std::thread::yield_now();
    }
    let base_secs = t.elapsed().as_secs_f64();

    phase.store(1, Ordering::Relaxed);
    let t = Instant::now();
    let mut snap = ks.begin_snapshot(2).expect("no other snapshot");
    let begin = t.elapsed();
    snap.set_slice(slice);
    let mut buf: Vec<u8> = Vec::with_capacity(2 << 20);
    let mut out = std::io::sink();
    let (mut longest, mut calls, mut entries) = (Duration::ZERO, 0u64, 0u64);
    loop {
        let c = Instant::now();
        let step = snap.next(&ks, |db, key: &[u8], v: ValueRef<'_>, ttl| {
            buf.extend_from_slice(&db.to_le_bytes());
            buf.extend_from_slice(key);
            if let ValueRef::Str(s) = v {
                s.with_bytes(|b| buf.extend_from_slice(b));
            }
            buf.extend_from_slice(&ttl.unwrap_or(0).to_le_bytes());
        });
        longest = longest.max(c.elapsed());
        calls += 1;
        entries += step.delivered as u64;
        if buf.len() >= 1 << 20 {
            out.write_all(&buf).ok();
            buf.clear();
        }
        if step.done {
            break;
        }
    }
    let snap_secs = t.elapsed().as_secs_f64();
    let st = snap.stats();
    phase.store(2, Ordering::Relaxed);
    let mut all = [Vec::new(), Vec::new()];
    for th in threads {
        let [a, b] = th.join().expect("writer");
        all[0].extend(a);
        all[1].extend(b);
    }
    let [a, b] = all;
    println!("slice {slice}, {writers} writer thread(s)");
    summary("no snapshot", a, base_secs);
    summary("snapshot", b, snap_secs);
    println!(
        "snapshot: {entries} entries ({} walked, {} captured) in {snap_secs:.2} s; begin (every lock held) {:.3} ms; \
         {calls} next() calls, longest {:.3} ms; {} slices, most entries in one {}, longest hold {:.3} ms; \
         captured copies peak {} KiB = {:.2}% of the dataset; {} marked hashes noted ({} KiB)",
        st.walked,
        st.captured,
        begin.as_secs_f64() * 1e3,
        longest.as_secs_f64() * 1e3,
        st.slices,
        st.max_slice,
        st.max_hold.as_secs_f64() * 1e3,
        st.peak_held >> 10,
        st.peak_held as f64 * 100.0 / dataset as f64,
        st.noted,
        st.noted * 8 >> 10
    );
}
