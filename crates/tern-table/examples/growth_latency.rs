//! Grows a table from 0 to N keys (default 10M) and reports the slowest
//! single insert, then removes them all and reports the slowest remove:
//! incremental resizing must keep every operation under 1 ms, including
//! the allocation and the freeing of the big bucket arrays.
//!
//! Each operation is timed twice: wall clock, and this thread's CPU time
//! (user + system, so page faults count) which a busy machine's preemptions
//! do not inflate.
//!
//! cargo run --release -p tern-table --example growth_latency [-- N [no-thp]]
//!
//! `no-thp` turns transparent huge pages off for the process first, as Redis
//! asks of its hosts: with THP the kernel's page-fault path may compact
//! memory or split huge pages for milliseconds, whatever the table does.

use std::hash::BuildHasher;
use std::hint::black_box;
use std::time::{Duration, Instant};

use tern_table::Table;

#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

struct Worst {
    max: Duration,
    at: usize,
    max_cpu: Duration,
    at_cpu: usize,
    over_100us: usize,
    total: Duration,
    /// The slowest operations by CPU time: (CPU time, op index).
    top: Vec<(Duration, usize)>,
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into the one we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs `f` and records its wall and CPU time as operation `i`.
fn timed<R>(w: &mut Worst, i: usize, f: impl FnOnce() -> R) -> R {
    let c = thread_cpu();
    let s = Instant::now();
    let r = f();
    let wall = s.elapsed();
    let cpu = thread_cpu() - c;
    w.add(i, wall, cpu);
    r
}

impl Worst {
    fn new() -> Self {
        Worst {
            max: Duration::ZERO,
            at: 0,
            max_cpu: Duration::ZERO,
            at_cpu: 0,
            over_100us: 0,
            total: Duration::ZERO,
            top: Vec::new(),
        }
    }
    fn add(&mut self, i: usize, d: Duration, cpu: Duration) {
        self.total += d;
        if cpu > Duration::from_micros(100) {
            self.over_100us += 1;
            self.top.push((cpu, i));
            self.top.sort_by(|a, b| b.cmp(a));
            self.top.truncate(8);
        }
        if d > self.max {
            self.max = d;
            self.at = i;
        }
        if cpu > self.max_cpu {
            self.max_cpu = cpu;
            self.at_cpu = i;
        }
    }
    fn report(&self, what: &str, n: usize) -> String {
        format!(
            "{what} {n} keys: max wall {:?} (op {}), max CPU {:?} (op {}), {} ops over 100us CPU, mean wall {:?}\n  slowest by CPU: {:?}",
            self.max,
            self.at,
            self.max_cpu,
            self.at_cpu,
            self.over_100us,
            self.total / n as u32,
            self.top
        )
    }
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10_000_000);
    if std::env::args().nth(2).as_deref() == Some("no-thp") {
        // SAFETY: prctl with PR_SET_THP_DISABLE takes plain integers.
        let r = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
        assert_eq!(r, 0, "prctl(PR_SET_THP_DISABLE)");
        println!("transparent huge pages disabled for this process");
    }
    let mut t: Table<u64> = Table::new();
    let keys: Vec<[u8; 16]> = (0..n).map(key).collect();
    let hashes: Vec<u64> = keys.iter().map(|k| t.hasher().hash_one(&k[..])).collect();

    let mut ins = Worst::new();
    for i in 0..n {
        timed(&mut ins, i, || {
            black_box(t.insert(&keys[i], hashes[i], i as u64, None));
        });
    }
    println!(
        "{}; {} buckets, mem_bytes {} ({:.1} B/key)",
        ins.report("insert", n),
        t.bucket_count(),
        t.mem_bytes(),
        t.mem_bytes() as f64 / n as f64
    );

    let mut rem = Worst::new();
    for i in 0..n {
        timed(&mut rem, i, || black_box(t.remove(&keys[i], hashes[i])));
    }
    println!("{}; {} buckets left", rem.report("remove", n), t.bucket_count());
    drop(t);

    // Baseline: the same allocations and frees the items cost, without the
    // table (after it), so allocator and kernel stalls can be told from the table's own.
    let mut base = Worst::new();
    let mut boxes: Vec<Box<[u64; 4]>> = Vec::with_capacity(n);
    for i in 0..n {
        timed(&mut base, i, || boxes.push(Box::new([i as u64; 4])));
    }
    println!("{}", base.report("baseline: allocate 32-byte boxes for", n));
    let mut base = Worst::new();
    for (i, b) in boxes.iter_mut().enumerate() {
        timed(&mut base, i, || drop(std::mem::replace(b, Box::new([0; 4]))));
    }
    println!("{}", base.report("baseline: free and reallocate 32-byte boxes for", n));
}

fn key(i: usize) -> [u8; 16] {
    let mut k = *b"key:000000000000";
    let mut x = i;
    for b in k[4..].iter_mut().rev() {
        *b = b'0' + (x % 10) as u8;
        x /= 10;
    }
    k
}
