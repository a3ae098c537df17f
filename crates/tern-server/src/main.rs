//! `tern-server [config-file] [--directive value ...]`
//!
//! jemalloc's start-up options are compiled into the allocator: see
//! `.cargo/config.toml`.
#![forbid(unsafe_code)]

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-v" || a == "--version") {
        println!("Tern server v={} redis_version={}", tern_commands::TERN_VERSION, tern_commands::REDIS_VERSION);
        return;
    }
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("Usage: tern-server [/path/to/redis.conf] [--directive value ...]\n       tern-server --port 7777 --threads 2\n       tern-server /etc/tern.conf --loglevel verbose");
        return;
    }
    let cfg = match tern_config::Config::from_args(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    std::process::exit(tern_server::run(cfg));
}
