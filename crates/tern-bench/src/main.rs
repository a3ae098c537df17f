//! tern-bench: a memtier_benchmark-compatible load generator that counts
//! error replies as errors.
//!
//! ```text
//!  options / spec YAML ─► Config ─► Workload (templates, ratios, key patterns)
//!        threads × { mio loop over `-c` connections, `--pipeline` in flight }
//!        per-thread Stats (counts, HdrHistogram, per-second series) ─► merge
//!        ─► table on stdout, memtier-layout JSON (`--json-out-file`)
//!  --subscribers: subscriber threads subscribe first (subscriber.rs), the
//!        load is the publisher, their SubStats join the report
//! ```
#![forbid(unsafe_code)]

mod client;
mod keys;
mod mc;
mod opts;
mod pubsub;
mod report;
mod server_cpu;
mod stats;
mod subscriber;
mod template;

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use client::{Progress, Shared, Workload};
use opts::{Config, Options, Phase, Spec};

fn main() {
    match run() {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("tern-bench: {e}");
            std::process::exit(2);
        }
    }
}

fn run() -> Result<i32, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cli = Options::parse(&args)?;
    let phase = cli.phase.unwrap_or(Phase::Benchmark);
    let mut cfg = Config::default();
    if let Some(path) = &cli.spec {
        let spec = Spec::load(path)?;
        if phase == Phase::Info {
            println!("{}", report::spec_info(&spec)?);
            return Ok(0);
        }
        match spec.phase_args(phase)? {
            Some(a) => cfg.apply(&a)?,
            None => {
                eprintln!("tern-bench: {} has no preload", spec.name);
                return Ok(0);
            }
        }
    } else if phase != Phase::Benchmark {
        return Err("--phase needs --spec".into());
    }
    cfg.apply_options(&cli)?;
    let work = Workload::from_config(&cfg)?;
    bench(cfg, work)
}

fn bench(cfg: Config, work: Workload) -> Result<i32, String> {
    let threads = cfg.threads;
    let hide = cfg.hide_histogram;
    let json = cfg.json_out_file.clone();
    let stop = Arc::new(AtomicBool::new(false));
    // The first Ctrl-C ends the run early with a report; a second one
    // (the default handler is restored once the flag is set) kills it.
    let _ = signal_hook::flag::register_conditional_default(
        signal_hook::consts::SIGINT,
        stop.clone(),
    );
    let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, stop.clone());
    // Subscribers are subscribed before the load (and its clock) starts.
    let subs = match cfg.subscribers {
        0 => None,
        _ => Some(subscriber::Subscribers::start(&cfg, &stop)?),
    };
    let cpu_before = server_cpu::sample(&cfg);
    let sh = Arc::new(Shared::new(cfg.clone(), work, stop.clone()));
    let wall_start = SystemTime::now();
    let progress: Vec<Arc<Progress>> = (0..threads)
        .map(|_| Arc::new(Progress::default()))
        .collect();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (sh, p) = (sh.clone(), progress[t].clone());
            std::thread::Builder::new()
                .name(format!("tern-bench-{t}"))
                .spawn(move || client::run_thread(sh, t, p))
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;
    let live = std::io::stderr().is_terminal();
    let mut last = (Instant::now(), 0u64);
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(if live { 1000 } else { 50 }));
        if live {
            let ops: u64 = progress.iter().map(|p| p.ops.load(Ordering::Relaxed)).sum();
            let errs: u64 = progress
                .iter()
                .map(|p| p.errors.load(Ordering::Relaxed))
                .sum();
            let now = Instant::now();
            let rate = (ops - last.1) as f64 / now.duration_since(last.0).as_secs_f64().max(1e-9);
            last = (now, ops);
            let msgs = subs.as_ref().map_or(String::new(), |s| format!("{:>12} msgs received", s.messages()));
            eprint!(
                "\r[{:>4}s] {:>12.0} ops/s  {:>12} ops  {:>8} errors {msgs}  ",
                sh.start.elapsed().as_secs(),
                rate,
                ops,
                errs
            );
        }
    }
    if live {
        eprintln!();
    }
    let elapsed = sh.start.elapsed();
    let mut total: Option<stats::Stats> = None;
    for h in handles {
        let s = h
            .join()
            .map_err(|_| "a load thread panicked".to_string())??;
        match total.as_mut() {
            Some(t) => t.merge(&s),
            None => total = Some(s),
        }
    }
    let total = total.ok_or("no threads")?;
    // The messages still on their way count, and so does the CPU the
    // server spends delivering them.
    let subs = subs.map(|s| s.finish(total.receivers, &stop)).transpose()?;
    let sub_span = subs
        .as_ref()
        .and_then(|s| s.last)
        .map_or(elapsed, |l| elapsed.max(l.saturating_duration_since(sh.start)));
    let server_cpu = cpu_before.zip(server_cpu::sample(&cfg)).map(|(a, b)| (b - a).max(0.0));
    let r = report::Report {
        cfg: &cfg,
        stats: &total,
        elapsed,
        wall_start,
        server_cpu,
        subs: subs.as_ref(),
        sub_span,
    };
    print!("{}", r.table(hide));
    if let Some(path) = json {
        std::fs::write(&path, r.json()).map_err(|e| format!("{path}: {e}"))?;
    }
    let sub_errors = subs.as_ref().map_or(0, |s| s.connection_errors);
    Ok(if total.connection_errors + sub_errors > 0 { 1 } else { 0 })
}
