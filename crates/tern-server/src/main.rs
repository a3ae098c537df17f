//! `tern-server [config-file] [--directive value ...]`

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's start-up options, read before the first allocation. Freed
/// pages go back to the OS 2 s after they stop being used (jemalloc's
/// default is 10 s: after a FLUSHALL of 400k keys RSS stayed at 200 MB for
/// 8 s, then fell over the next 8); the background threads
/// (`jemalloc-bg-thread`, on by default) do that purging, so an idle
/// server's RSS follows `used_memory` down too.
#[export_name = "_rjem_malloc_conf"]
pub static MALLOC_CONF: &u8 = &b"background_thread:true,dirty_decay_ms:2000,muzzy_decay_ms:0\0"[0];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-v" || a == "--version") {
        println!("Tern server v={} redis_version={}", tern_server::TERN_VERSION, tern_server::REDIS_VERSION);
        return;
    }
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("Usage: tern-server [/path/to/redis.conf] [--directive value ...]\n       tern-server --port 7777 --threads 2\n       tern-server /etc/tern.conf --loglevel verbose");
        return;
    }
    let cfg = match tern_server::config::Config::from_args(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    std::process::exit(tern_server::run(cfg));
}
