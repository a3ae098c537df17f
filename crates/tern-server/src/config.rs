//! Typed configuration in redis.conf syntax.
//!
//! `tern-server [config-file] [--directive value ...]`: the file is read
//! first, then the command-line directives, as redis-server does. Every
//! directive has a type (bool, integer with a range, byte size such as
//! `1gb`, enum, string); a bad value stops start-up with an error naming the
//! file, line, directive, value and reason. Directives that can change at
//! runtime are marked mutable and are what CONFIG SET accepts.

use std::fmt::Write as _;
use std::path::PathBuf;

/// Output-buffer limit of one client class (`client-output-buffer-limit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimit {
    pub hard: u64,
    pub soft: u64,
    pub soft_seconds: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Debug,
    Verbose,
    Notice,
    Warning,
    Nothing,
}

impl LogLevel {
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Verbose => "verbose",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Nothing => "nothing",
        }
    }
}

/// The whole configuration. Fields are typed with their unit in the name.
#[derive(Clone, Debug)]
pub struct Config {
    pub bind: Vec<String>,
    pub port: u16,
    /// memcached protocol port (0: off). With `port 0` (an ephemeral RESP
    /// port, as tests use) it is ephemeral too.
    pub memcache_port: u16,
    /// Largest memcached item, memcached's header included (`-I`).
    pub memcache_max_item_size: usize,
    pub threads: usize,
    pub databases: usize,
    pub requirepass: Option<Vec<u8>>,
    pub maxclients: usize,
    pub timeout_secs: u64,
    pub tcp_keepalive_secs: u64,
    pub tcp_backlog: i32,
    pub output_limit_normal: OutputLimit,
    pub output_limit_replica: OutputLimit,
    pub output_limit_pubsub: OutputLimit,
    pub client_query_buffer_limit: u64,
    pub proto_max_bulk_len: u64,
    pub loglevel: LogLevel,
    pub logfile: String,
    pub hz: u32,
    pub maxmemory: u64,
    pub maxmemory_policy: String,
    pub protected_mode: bool,
    pub shards_per_db: usize,
    /// Fields a hash may hold in its compact encoding.
    pub hash_max_listpack_entries: usize,
    /// Longest field or value, in bytes, a compact hash may hold.
    pub hash_max_listpack_value: usize,
    /// Keys whose lookups are advanced together, stage by stage, so their
    /// cache misses overlap (within a multi-key command and across the
    /// pipelined commands of one read); 0 turns prefetching off.
    pub prefetch_batch_max_size: usize,
    /// String values at least this long (bytes) are stored shared and
    /// sent from the stored bytes instead of being copied into the reply
    /// buffer; 0 turns copy avoidance off.
    pub reply_copy_avoid_min_size: u64,
    /// jemalloc's background threads purge freed pages so that RSS follows
    /// `used_memory` down (after FLUSHALL, DEL of large values) instead of
    /// waiting for the next allocations to trigger the purge.
    pub jemalloc_bg_thread: bool,
    /// The config file the server was started with (CONFIG REWRITE).
    pub config_file: Option<PathBuf>,
    /// Directives accepted but not acted on (persistence, ...), as given,
    /// so that CONFIG GET shows them and the log can warn once.
    pub passive: Vec<(String, String)>,
    /// File lines Tern accepts but cannot honour (`rename-command`, `user`),
    /// for the start-up warning.
    pub ignored: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: vec!["127.0.0.1".into()],
            port: 6379,
            memcache_port: 0,
            memcache_max_item_size: 1024 * 1024,
            threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            databases: 16,
            requirepass: None,
            maxclients: 10000,
            timeout_secs: 0,
            tcp_keepalive_secs: 300,
            tcp_backlog: 511,
            output_limit_normal: OutputLimit { hard: 0, soft: 0, soft_seconds: 0 },
            output_limit_replica: OutputLimit { hard: 256 << 20, soft: 64 << 20, soft_seconds: 60 },
            output_limit_pubsub: OutputLimit { hard: 32 << 20, soft: 8 << 20, soft_seconds: 60 },
            client_query_buffer_limit: 1 << 30,
            proto_max_bulk_len: 512 << 20,
            loglevel: LogLevel::Notice,
            logfile: String::new(),
            hz: 10,
            maxmemory: 0,
            maxmemory_policy: "noeviction".into(),
            protected_mode: true,
            shards_per_db: 0,
            hash_max_listpack_entries: 512,
            hash_max_listpack_value: 64,
            prefetch_batch_max_size: 16,
            reply_copy_avoid_min_size: 16 * 1024,
            jemalloc_bg_thread: true,
            config_file: None,
            passive: Vec::new(),
            ignored: Vec::new(),
        }
    }
}

/// Parses a memory size the way redis.conf does: `1k` = 1000, `1kb` = 1024,
/// likewise m/mb, g/gb; case-insensitive; plain bytes otherwise.
pub fn parse_memory(s: &str) -> Option<u64> {
    let l = s.to_ascii_lowercase();
    let (num, mul): (&str, u64) = if let Some(n) = l.strip_suffix("gb") {
        (n, 1 << 30)
    } else if let Some(n) = l.strip_suffix("mb") {
        (n, 1 << 20)
    } else if let Some(n) = l.strip_suffix("kb") {
        (n, 1 << 10)
    } else if let Some(n) = l.strip_suffix('g') {
        (n, 1_000_000_000)
    } else if let Some(n) = l.strip_suffix('m') {
        (n, 1_000_000)
    } else if let Some(n) = l.strip_suffix('k') {
        (n, 1000)
    } else if let Some(n) = l.strip_suffix('b') {
        (n, 1)
    } else {
        (l.as_str(), 1)
    };
    if num.is_empty() || !num.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    num.parse::<u64>().ok()?.checked_mul(mul)
}

fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err("argument must be 'yes' or 'no'".into()),
    }
}

fn parse_int<T: TryFrom<i64> + PartialOrd + std::fmt::Display + Copy>(s: &str, min: T, max: T) -> Result<T, String> {
    // Redis's string2ll: no sign but '-', no spaces, no leading zeros.
    let v = tern_resp::parse_i64(s.as_bytes()).ok_or_else(|| "argument couldn't be parsed into an integer".to_string())?;
    match T::try_from(v) {
        Ok(v) if v >= min && v <= max => Ok(v),
        _ => Err(format!("argument must be between {min} and {max} inclusive")),
    }
}

fn parse_mem_in(s: &str, max: u64) -> Result<u64, String> {
    let v = parse_memory(s).ok_or_else(|| "argument must be a memory value".to_string())?;
    if v > max {
        return Err(format!("argument must be between 0 and {max} inclusive"));
    }
    Ok(v)
}

fn parse_output_limits(cfg: &mut Config, args: &[&str]) -> Result<(), String> {
    if args.is_empty() || args.len() % 4 != 0 {
        return Err("Wrong number of arguments in buffer limit configuration.".into());
    }
    let mut parsed = Vec::new();
    for chunk in args.chunks(4) {
        let class = chunk[0].to_ascii_lowercase();
        if !matches!(class.as_str(), "normal" | "slave" | "replica" | "pubsub") {
            return Err("Invalid client class specified in buffer limit configuration.".into());
        }
        let hard = parse_memory(chunk[1]);
        let soft = parse_memory(chunk[2]);
        let secs = chunk[3].parse::<u64>().ok();
        let (Some(hard), Some(soft), Some(soft_seconds)) = (hard, soft, secs) else {
            return Err("Error in hard, soft or soft_seconds setting in buffer limit configuration.".into());
        };
        parsed.push((class, OutputLimit { hard, soft, soft_seconds }));
    }
    for (class, lim) in parsed {
        match class.as_str() {
            "normal" => cfg.output_limit_normal = lim,
            "pubsub" => cfg.output_limit_pubsub = lim,
            _ => cfg.output_limit_replica = lim,
        }
    }
    Ok(())
}

/// How a directive is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Tern acts on it.
    Active,
    /// Accepted and shown by CONFIG GET, but not acted on yet (persistence,
    /// replication): a warning is logged at start-up.
    Passive,
}

/// One directive: its name, whether CONFIG SET may change it at runtime,
/// and how to set and render it.
pub struct Directive {
    pub name: &'static str,
    pub alias: Option<&'static str>,
    pub mutable: bool,
    pub kind: Kind,
    pub set: fn(&mut Config, &[&str]) -> Result<(), String>,
    pub get: fn(&Config) -> String,
}

fn one<'a>(args: &[&'a str]) -> Result<&'a str, String> {
    match args {
        [v] => Ok(v),
        _ => Err("wrong number of arguments".into()),
    }
}

fn store_passive(c: &mut Config, name: &str, v: String) {
    match c.passive.iter_mut().find(|(n, _)| n == name) {
        Some(slot) => slot.1 = v,
        None => c.passive.push((name.to_string(), v)),
    }
}

fn passive_value<'a>(c: &'a Config, name: &str) -> Option<&'a str> {
    c.passive.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// Validators of passive directives: each returns the value as CONFIG GET
/// shows it, or Redis's reason for refusing it.
fn chk_bool(a: &[&str]) -> Result<String, String> {
    Ok(if parse_bool(one(a)?)? { "yes" } else { "no" }.into())
}

fn chk_int<const MIN: i64, const MAX: i64>(a: &[&str]) -> Result<String, String> {
    Ok(parse_int(one(a)?, MIN, MAX)?.to_string())
}

fn chk_mem(a: &[&str]) -> Result<String, String> {
    Ok(parse_mem_in(one(a)?, i64::MAX as u64)?.to_string())
}

fn chk_str(a: &[&str]) -> Result<String, String> {
    Ok(one(a)?.to_string())
}

fn chk_enum(a: &[&str], options: &[&str]) -> Result<String, String> {
    let v = one(a)?.to_ascii_lowercase();
    if options.contains(&v.as_str()) {
        Ok(v)
    } else {
        Err(format!("argument(s) must be one of the following: {}", options.join(", ")))
    }
}

/// A list of words kept as given (`oom-score-adj-values 0 200 800`).
fn chk_words(a: &[&str]) -> Result<String, String> {
    Ok(a.iter().flat_map(|s| s.split_ascii_whitespace()).collect::<Vec<_>>().join(" "))
}

/// `save <seconds> <changes> [<seconds> <changes> ...]`, or `save ""`.
fn chk_save(a: &[&str]) -> Result<String, String> {
    let words: Vec<&str> = a.iter().flat_map(|s| s.split_ascii_whitespace()).collect();
    if words.len() % 2 != 0 {
        return Err("Invalid save parameters".into());
    }
    let mut out = Vec::with_capacity(words.len());
    for w in words {
        let n = tern_resp::parse_i64(w.as_bytes()).filter(|&n| n >= 0).ok_or_else(|| "Invalid save parameters".to_string())?;
        out.push(n.to_string());
    }
    Ok(out.join(" "))
}

/// A directive Tern accepts and shows but does not act on: `$check`
/// validates the value as Redis would and gives its canonical form.
macro_rules! passive {
    ($name:expr, $alias:expr, $mutable:expr, $default:expr, $check:expr) => {
        Directive {
            name: $name,
            alias: $alias,
            mutable: $mutable,
            kind: Kind::Passive,
            set: |c, a| {
                let v = ($check)(a)?;
                store_passive(c, $name, v);
                Ok(())
            },
            get: |c| passive_value(c, $name).unwrap_or($default).to_string(),
        }
    };
}

/// Every directive Tern knows. Anything else is an error.
pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "bind",
        alias: None,
        mutable: false,
        kind: Kind::Active,
        set: |c, a| {
            if a.is_empty() {
                return Err("wrong number of arguments".into());
            }
            c.bind = a.iter().map(|s| s.to_string()).collect();
            Ok(())
        },
        get: |c| c.bind.join(" "),
    },
    Directive {
        name: "port",
        alias: None,
        mutable: false,
        kind: Kind::Active,
        set: |c, a| {
            c.port = parse_int(one(a)?, 0u16, 65535)?;
            Ok(())
        },
        get: |c| c.port.to_string(),
    },
    Directive {
        name: "memcache-port",
        alias: None,
        mutable: false,
        kind: Kind::Active,
        set: |c, a| {
            c.memcache_port = parse_int(one(a)?, 0u16, 65535)?;
            Ok(())
        },
        get: |c| c.memcache_port.to_string(),
    },
    Directive {
        name: "memcache-max-item-size",
        alias: None,
        mutable: false,
        kind: Kind::Active,
        set: |c, a| {
            // memcached's own bounds for -I: 1k to 1g.
            let v = parse_mem_in(one(a)?, 1024 * 1024 * 1024)?;
            if v < 1024 {
                return Err("argument must be between 1kb and 1gb".into());
            }
            c.memcache_max_item_size = v as usize;
            Ok(())
        },
        get: |c| c.memcache_max_item_size.to_string(),
    },
    Directive {
        name: "threads",
        alias: Some("io-threads"),
        mutable: false,
        kind: Kind::Active,
        set: |c, a| {
            c.threads = parse_int(one(a)?, 1usize, 1024)?;
            Ok(())
        },
        get: |c| c.threads.to_string(),
    },
    Directive {
        name: "databases",
        alias: None,
        mutable: false,
        kind: Kind::Active,
        set: |c, a| {
            c.databases = parse_int(one(a)?, 1usize, i32::MAX as usize)?;
            Ok(())
        },
        get: |c| c.databases.to_string(),
    },
    Directive {
        name: "requirepass",
        alias: None,
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            let v = one(a)?;
            c.requirepass = if v.is_empty() { None } else { Some(v.as_bytes().to_vec()) };
            Ok(())
        },
        get: |c| c.requirepass.as_ref().map(|p| String::from_utf8_lossy(p).into_owned()).unwrap_or_default(),
    },
    Directive {
        name: "maxclients",
        alias: None,
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            c.maxclients = parse_int(one(a)?, 1usize, u32::MAX as usize)?;
            Ok(())
        },
        get: |c| c.maxclients.to_string(),
    },
    Directive {
        name: "timeout",
        alias: None,
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            c.timeout_secs = parse_int(one(a)?, 0u64, i32::MAX as u64)?;
            Ok(())
        },
        get: |c| c.timeout_secs.to_string(),
    },
    Directive {
        name: "tcp-keepalive",
        alias: None,
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            c.tcp_keepalive_secs = parse_int(one(a)?, 0u64, i32::MAX as u64)?;
            Ok(())
        },
        get: |c| c.tcp_keepalive_secs.to_string(),
    },
    Directive {
        name: "tcp-backlog",
        alias: None,
        mutable: false,
        kind: Kind::Active,
        set: |c, a| {
            c.tcp_backlog = parse_int(one(a)?, 0i32, i32::MAX)?;
            Ok(())
        },
        get: |c| c.tcp_backlog.to_string(),
    },
    Directive {
        name: "client-output-buffer-limit",
        alias: None,
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            // Accept both the file form (several words) and CONFIG SET's
            // single string with spaces.
            let words: Vec<&str> = a.iter().flat_map(|s| s.split_ascii_whitespace()).collect();
            parse_output_limits(c, &words)
        },
        get: |c| {
            let mut s = String::new();
            for (n, l) in [("normal", c.output_limit_normal), ("slave", c.output_limit_replica), ("pubsub", c.output_limit_pubsub)] {
                let _ = write!(s, "{}{} {} {} {}", if s.is_empty() { "" } else { " " }, n, l.hard, l.soft, l.soft_seconds);
            }
            s
        },
    },
    Directive {
        name: "client-query-buffer-limit",
        alias: None,
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            let v = parse_mem_in(one(a)?, i64::MAX as u64)?;
            if v < 1024 * 1024 {
                return Err(format!("argument must be between 1048576 and {} inclusive", i64::MAX));
            }
            c.client_query_buffer_limit = v;
            Ok(())
        },
        get: |c| c.client_query_buffer_limit.to_string(),
    },
    Directive {
        name: "proto-max-bulk-len",
        alias: None,
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            let v = parse_mem_in(one(a)?, i64::MAX as u64)?;
            if v < 1024 * 1024 {
                return Err(format!("argument must be between 1048576 and {} inclusive", i64::MAX));
            }
            c.proto_max_bulk_len = v;
            Ok(())
        },
        get: |c| c.proto_max_bulk_len.to_string(),
    },
    Directive {
        name: "loglevel",
        alias: None,
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            c.loglevel = match one(a)?.to_ascii_lowercase().as_str() {
                "debug" => LogLevel::Debug,
                "verbose" => LogLevel::Verbose,
                "notice" => LogLevel::Notice,
                "warning" => LogLevel::Warning,
                "nothing" => LogLevel::Nothing,
                _ => return Err("argument(s) must be one of the following: debug, verbose, notice, warning, nothing".into()),
            };
            Ok(())
        },
        get: |c| c.loglevel.name().to_string(),
    },
    Directive {
        name: "logfile",
        alias: None,
        mutable: false,
        kind: Kind::Active,
        set: |c, a| {
            c.logfile = one(a)?.to_string();
            Ok(())
        },
        get: |c| c.logfile.clone(),
    },
    Directive {
        name: "hz",
        alias: None,
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            // Redis clamps hz into 1..=500 rather than refusing.
            c.hz = parse_int(one(a)?, 0i64, i32::MAX as i64)?.clamp(1, 500) as u32;
            Ok(())
        },
        get: |c| c.hz.to_string(),
    },
    Directive {
        name: "shards-per-db",
        alias: None,
        mutable: false,
        kind: Kind::Active,
        set: |c, a| {
            c.shards_per_db = parse_int(one(a)?, 0usize, 1 << 16)?;
            Ok(())
        },
        get: |c| c.shards_per_db.to_string(),
    },
    Directive {
        name: "protected-mode",
        alias: None,
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            c.protected_mode = parse_bool(one(a)?)?;
            Ok(())
        },
        get: |c| if c.protected_mode { "yes".into() } else { "no".into() },
    },
    Directive {
        name: "daemonize",
        alias: None,
        mutable: false,
        kind: Kind::Active,
        set: |_, a| {
            if parse_bool(one(a)?)? {
                return Err("Tern does not daemonize; run it under a supervisor".into());
            }
            Ok(())
        },
        get: |_| "no".into(),
    },
    Directive {
        name: "maxmemory",
        alias: None,
        mutable: true,
        kind: Kind::Passive,
        set: |c, a| {
            c.maxmemory = parse_mem_in(one(a)?, i64::MAX as u64)?;
            Ok(())
        },
        get: |c| c.maxmemory.to_string(),
    },
    Directive {
        name: "maxmemory-policy",
        alias: None,
        mutable: true,
        kind: Kind::Passive,
        set: |c, a| {
            let v = one(a)?.to_ascii_lowercase();
            const P: &[&str] =
                &["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"];
            if !P.contains(&v.as_str()) {
                return Err("argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction".into());
            }
            c.maxmemory_policy = v;
            Ok(())
        },
        get: |c| c.maxmemory_policy.clone(),
    },
    passive!("save", None, true, "3600 1 300 100 60 10000", chk_save),
    passive!("appendonly", None, true, "no", chk_bool),
    passive!("appendfsync", None, true, "everysec", |a| chk_enum(a, &["always", "everysec", "no"])),
    passive!("appendfilename", None, false, "appendonly.aof", chk_str),
    passive!("appenddirname", None, false, "appendonlydir", chk_str),
    passive!("dbfilename", None, true, "dump.rdb", chk_str),
    Directive {
        name: "dir",
        alias: None,
        mutable: true,
        kind: Kind::Passive,
        set: |c, a| {
            let v = one(a)?;
            if !std::path::Path::new(v).is_dir() {
                return Err(format!("No such file or directory: {v}"));
            }
            store_passive(c, "dir", v.to_string());
            Ok(())
        },
        // Redis chdir()s into `dir` and shows the working directory.
        get: |c| match passive_value(c, "dir") {
            Some(d) => std::fs::canonicalize(d).map(|p| p.display().to_string()).unwrap_or_else(|_| d.to_string()),
            None => std::env::current_dir().map(|p| p.display().to_string()).unwrap_or_else(|_| ".".into()),
        },
    },
    passive!("rdbcompression", None, true, "yes", chk_bool),
    passive!("rdbchecksum", None, true, "yes", chk_bool),
    passive!("rdb-del-sync-files", None, true, "no", chk_bool),
    passive!("rdb-save-incremental-fsync", None, true, "yes", chk_bool),
    passive!("stop-writes-on-bgsave-error", None, true, "yes", chk_bool),
    passive!("supervised", None, false, "no", |a| chk_enum(a, &["upstart", "systemd", "auto", "no"])),
    passive!("pidfile", None, false, "", chk_str),
    passive!("always-show-logo", None, false, "no", chk_bool),
    passive!("set-proc-title", None, false, "yes", chk_bool),
    passive!("proc-title-template", None, true, "{title} {listen-addr} {server-mode}", chk_str),
    passive!("syslog-enabled", None, false, "no", chk_bool),
    passive!("syslog-ident", None, false, "redis", chk_str),
    passive!("syslog-facility", None, false, "local0", |a| chk_enum(
        a,
        &["user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"]
    )),
    passive!("unixsocket", None, false, "", chk_str),
    passive!("unixsocketperm", None, false, "0", chk_str),
    passive!("replicaof", Some("slaveof"), true, "", chk_words),
    passive!("masterauth", None, true, "", chk_str),
    passive!("masteruser", None, true, "", chk_str),
    passive!("replica-serve-stale-data", Some("slave-serve-stale-data"), true, "yes", chk_bool),
    passive!("replica-read-only", Some("slave-read-only"), true, "yes", chk_bool),
    passive!("replica-priority", Some("slave-priority"), true, "100", chk_int::<0, { i32::MAX as i64 }>),
    passive!("replica-lazy-flush", Some("slave-lazy-flush"), true, "no", chk_bool),
    passive!("replica-ignore-maxmemory", Some("slave-ignore-maxmemory"), true, "yes", chk_bool),
    passive!("repl-diskless-sync", None, true, "yes", chk_bool),
    passive!("repl-diskless-sync-delay", None, true, "5", chk_int::<0, { i32::MAX as i64 }>),
    passive!("repl-diskless-sync-max-replicas", None, true, "0", chk_int::<0, { i32::MAX as i64 }>),
    passive!("repl-diskless-load", None, true, "disabled", |a| chk_enum(a, &["disabled", "on-empty-db", "swapdb"])),
    passive!("repl-disable-tcp-nodelay", None, true, "no", chk_bool),
    passive!("repl-backlog-size", None, true, "1048576", chk_mem),
    passive!("repl-backlog-ttl", None, true, "3600", chk_int::<0, { i32::MAX as i64 }>),
    passive!("repl-timeout", None, true, "60", chk_int::<1, { i32::MAX as i64 }>),
    passive!("repl-ping-replica-period", Some("repl-ping-slave-period"), true, "10", chk_int::<1, { i32::MAX as i64 }>),
    passive!("min-replicas-to-write", Some("min-slaves-to-write"), true, "0", chk_int::<0, { i32::MAX as i64 }>),
    passive!("min-replicas-max-lag", Some("min-slaves-max-lag"), true, "10", chk_int::<0, { i32::MAX as i64 }>),
    passive!("lazyfree-lazy-eviction", None, true, "no", chk_bool),
    passive!("lazyfree-lazy-expire", None, true, "no", chk_bool),
    passive!("lazyfree-lazy-server-del", None, true, "no", chk_bool),
    passive!("lazyfree-lazy-user-del", None, true, "no", chk_bool),
    passive!("lazyfree-lazy-user-flush", None, true, "no", chk_bool),
    passive!("no-appendfsync-on-rewrite", None, true, "no", chk_bool),
    passive!("auto-aof-rewrite-percentage", None, true, "100", chk_int::<0, { i32::MAX as i64 }>),
    passive!("auto-aof-rewrite-min-size", None, true, "67108864", chk_mem),
    passive!("aof-load-truncated", None, true, "yes", chk_bool),
    passive!("aof-use-rdb-preamble", None, true, "yes", chk_bool),
    passive!("aof-timestamp-enabled", None, true, "no", chk_bool),
    passive!("aof-rewrite-incremental-fsync", None, true, "yes", chk_bool),
    passive!("slowlog-log-slower-than", None, true, "10000", chk_int::<{ -1 }, { i64::MAX }>),
    passive!("slowlog-max-len", None, true, "128", chk_int::<0, { i64::MAX }>),
    passive!("latency-monitor-threshold", None, true, "0", chk_int::<0, { i64::MAX }>),
    passive!("latency-tracking", None, true, "yes", chk_bool),
    passive!("latency-tracking-info-percentiles", None, true, "50 99 99.9", chk_words),
    passive!("notify-keyspace-events", None, true, "", chk_str),
    Directive {
        name: "hash-max-listpack-entries",
        alias: Some("hash-max-ziplist-entries"),
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            c.hash_max_listpack_entries = parse_int(one(a)?, 0i64, i64::MAX)? as usize;
            Ok(())
        },
        get: |c| c.hash_max_listpack_entries.to_string(),
    },
    Directive {
        name: "hash-max-listpack-value",
        alias: Some("hash-max-ziplist-value"),
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            // A memory value in Redis: `1kb` is accepted.
            c.hash_max_listpack_value = parse_mem_in(one(a)?, i64::MAX as u64)? as usize;
            Ok(())
        },
        get: |c| c.hash_max_listpack_value.to_string(),
    },
    Directive {
        name: "prefetch-batch-max-size",
        alias: None,
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            // Redis 8's range for the same directive.
            c.prefetch_batch_max_size = parse_int(one(a)?, 0usize, crate::prefetch::MAX_BATCH)?;
            Ok(())
        },
        get: |c| c.prefetch_batch_max_size.to_string(),
    },
    Directive {
        name: "reply-copy-avoid-min-size",
        alias: None,
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            c.reply_copy_avoid_min_size = parse_mem_in(one(a)?, i64::MAX as u64)?;
            Ok(())
        },
        get: |c| c.reply_copy_avoid_min_size.to_string(),
    },
    passive!("list-max-listpack-size", Some("list-max-ziplist-size"), true, "-2", chk_int::<{ i32::MIN as i64 }, { i32::MAX as i64 }>),
    passive!("list-compress-depth", None, true, "0", chk_int::<0, { i32::MAX as i64 }>),
    passive!("set-max-intset-entries", None, true, "512", chk_int::<0, { i64::MAX }>),
    passive!("set-max-listpack-entries", None, true, "128", chk_int::<0, { i64::MAX }>),
    passive!("set-max-listpack-value", None, true, "64", chk_int::<0, { i64::MAX }>),
    passive!("zset-max-listpack-entries", Some("zset-max-ziplist-entries"), true, "128", chk_int::<0, { i64::MAX }>),
    passive!("zset-max-listpack-value", Some("zset-max-ziplist-value"), true, "64", chk_int::<0, { i64::MAX }>),
    passive!("hll-sparse-max-bytes", None, true, "3000", chk_mem),
    passive!("stream-node-max-bytes", None, true, "4096", chk_mem),
    passive!("stream-node-max-entries", None, true, "100", chk_int::<0, { i64::MAX }>),
    passive!("activerehashing", None, true, "yes", chk_bool),
    passive!("activedefrag", None, true, "no", chk_bool),
    passive!("active-defrag-cycle-min", None, true, "1", chk_int::<1, 99>),
    passive!("active-defrag-cycle-max", None, true, "25", chk_int::<1, 99>),
    passive!("active-defrag-ignore-bytes", None, true, "104857600", chk_mem),
    passive!("active-defrag-threshold-lower", None, true, "10", chk_int::<0, 1000>),
    passive!("active-defrag-threshold-upper", None, true, "100", chk_int::<0, 1000>),
    passive!("active-defrag-max-scan-fields", None, true, "1000", chk_int::<1, { i64::MAX }>),
    passive!("replica-announce-ip", Some("slave-announce-ip"), true, "", chk_str),
    passive!("replica-announce-port", Some("slave-announce-port"), true, "0", chk_int::<0, 65535>),
    passive!("replica-announced", None, true, "yes", chk_bool),
    passive!("replica-ignore-disk-write-errors", None, true, "no", chk_bool),
    passive!("aof-disable-auto-gc", None, true, "no", chk_bool),
    passive!("acl-pubsub-default", None, true, "resetchannels", |a| chk_enum(a, &["allchannels", "resetchannels"])),
    passive!("propagation-error-behavior", None, true, "ignore", |a| chk_enum(a, &["ignore", "panic", "panic-on-replicas"])),
    passive!("ignore-warnings", None, true, "", chk_str),
    passive!("bind-source-addr", None, true, "", chk_str),
    passive!("dynamic-hz", None, true, "yes", chk_bool),
    Directive {
        name: "jemalloc-bg-thread",
        alias: None,
        mutable: true,
        kind: Kind::Active,
        set: |c, a| {
            c.jemalloc_bg_thread = parse_bool(one(a)?)?;
            Ok(())
        },
        get: |c| if c.jemalloc_bg_thread { "yes".into() } else { "no".into() },
    },
    passive!("io-threads-do-reads", None, false, "no", chk_bool),
    passive!("maxmemory-samples", None, true, "5", chk_int::<1, 64>),
    passive!("maxmemory-eviction-tenacity", None, true, "10", chk_int::<0, 100>),
    passive!("maxmemory-clients", None, true, "0", chk_mem),
    passive!("active-expire-effort", None, true, "1", chk_int::<1, 10>),
    passive!("lfu-log-factor", None, true, "10", chk_int::<0, { i32::MAX as i64 }>),
    passive!("lfu-decay-time", None, true, "1", chk_int::<0, { i32::MAX as i64 }>),
    passive!("busy-reply-threshold", Some("lua-time-limit"), true, "5000", chk_int::<0, { i64::MAX }>),
    passive!("oom-score-adj", None, true, "no", |a| chk_enum(a, &["no", "yes", "relative", "absolute"])),
    passive!("oom-score-adj-values", None, true, "0 200 800", chk_words),
    passive!("disable-thp", None, true, "yes", chk_bool),
    passive!("acllog-max-len", None, true, "128", chk_int::<0, { i64::MAX }>),
    passive!("aclfile", None, false, "", chk_str),
    passive!("cluster-enabled", None, false, "no", |a| match chk_bool(a)?.as_str() {
        "no" => Ok("no".to_string()),
        _ => Err("Tern does not support cluster mode".to_string()),
    }),
    passive!("cluster-config-file", None, false, "nodes.conf", chk_str),
    passive!("cluster-node-timeout", None, true, "15000", chk_int::<0, { i64::MAX }>),
    passive!("enable-debug-command", None, false, "no", |a| chk_enum(a, &["no", "yes", "local"])),
    passive!("enable-module-command", None, false, "no", |a| chk_enum(a, &["no", "yes", "local"])),
    passive!("enable-protected-configs", None, false, "no", |a| chk_enum(a, &["no", "yes", "local"])),
    passive!("tracking-table-max-keys", None, true, "1000000", chk_int::<0, { i64::MAX }>),
    passive!("crash-log-enabled", None, true, "yes", chk_bool),
    passive!("crash-memcheck-enabled", None, true, "yes", chk_bool),
    passive!("sanitize-dump-payload", None, true, "no", |a| chk_enum(a, &["no", "yes", "clients"])),
    passive!("shutdown-timeout", None, true, "10", chk_int::<0, { i32::MAX as i64 }>),
    passive!("shutdown-on-sigint", None, true, "default", chk_words),
    passive!("shutdown-on-sigterm", None, true, "default", chk_words),
    passive!("tls-port", None, false, "0", |a| match chk_int::<0, 65535>(a)?.as_str() {
        "0" => Ok("0".to_string()),
        _ => Err("Tern does not support TLS".to_string()),
    }),
];

impl Directive {
    /// Does the directive take a list of words (so that CONFIG SET splits
    /// its one value string)?
    pub fn is_multi(&self) -> bool {
        matches!(
            self.name,
            "bind"
                | "save"
                | "client-output-buffer-limit"
                | "replicaof"
                | "oom-score-adj-values"
                | "latency-tracking-info-percentiles"
                | "shutdown-on-sigint"
                | "shutdown-on-sigterm"
        )
    }
}

impl Directive {
    /// May CONFIG SET change it? Like Redis, `dir` and `dbfilename` are
    /// protected unless `enable-protected-configs` allows it.
    pub fn is_protected(&self, c: &Config) -> bool {
        matches!(self.name, "dir" | "dbfilename") && passive_value(c, "enable-protected-configs").unwrap_or("no") == "no"
    }

    /// Is the value a size in bytes (written back as `1mb` and the like)?
    pub fn is_memory(&self) -> bool {
        matches!(
            self.name,
            "maxmemory"
                | "client-query-buffer-limit"
                | "proto-max-bulk-len"
                | "repl-backlog-size"
                | "auto-aof-rewrite-min-size"
                | "hll-sparse-max-bytes"
                | "stream-node-max-bytes"
                | "active-defrag-ignore-bytes"
                | "maxmemory-clients"
                | "reply-copy-avoid-min-size"
        )
    }
}

/// A size the way Redis writes it back: the largest of gb/mb/kb that
/// divides it, else bytes.
pub fn format_memory(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "gb"), (1 << 20, "mb"), (1 << 10, "kb")];
    for (m, u) in UNITS {
        if n != 0 && n % m == 0 {
            return format!("{}{}", n / m, u);
        }
    }
    n.to_string()
}

/// Quotes a config value when it needs it (empty, spaces, quotes,
/// control bytes), with the escapes redis.conf's parser understands.
fn quote(v: &str) -> String {
    if !v.is_empty() && v.bytes().all(|c| c.is_ascii_graphic() && c != b'"' && c != b'\'' && c != b'\\') {
        return v.to_string();
    }
    let mut s = String::from("\"");
    for c in v.bytes() {
        match c {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            c if c.is_ascii_graphic() || c == b' ' => s.push(c as char),
            c => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push('"');
    s
}

/// Finds a directive by name or alias, case-insensitively.
pub fn find_directive(name: &str) -> Option<&'static Directive> {
    DIRECTIVES.iter().find(|d| d.name.eq_ignore_ascii_case(name) || d.alias.is_some_and(|a| a.eq_ignore_ascii_case(name)))
}

/// Splits one config-file line into words with redis.conf's quoting rules.
fn split_line(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut frame = tern_resp::Frame::new();
    let mut buf = line.as_bytes().to_vec();
    buf.push(b'\n');
    match frame.parse(&buf, &tern_resp::Limits::default()) {
        Ok(Some(_)) => {
            for a in frame.args(&buf).iter() {
                out.push(String::from_utf8_lossy(a).into_owned());
            }
            Some(out)
        }
        _ => None,
    }
}

/// Why Tern accepts a directive (or a `rename-command`/`user` line) but does
/// not act on it: what the start-up warning and CONFIG SET's notice say.
pub fn passive_reason(name: &str) -> &'static str {
    let has = |prefixes: &[&str]| prefixes.iter().any(|p| name.starts_with(p));
    if has(&["maxmemory", "lfu-", "lazyfree-lazy-eviction"]) {
        "Tern does not enforce a memory limit or evict keys in this version"
    } else if has(&["save", "append", "dbfilename", "rdb", "aof-", "auto-aof-", "no-appendfsync", "stop-writes-on-bgsave"]) {
        "Tern does not persist data in this version"
    } else if has(&["replica", "master", "repl-", "min-replicas"]) {
        "Tern does not replicate in this version"
    } else if has(&["cluster-"]) {
        "Tern has no cluster mode in this version"
    } else if has(&["list-", "set-max", "zset-", "hll-", "stream-"]) {
        "Tern has no lists, sets, sorted sets, HyperLogLogs or streams in this version"
    } else if has(&["activedefrag", "active-defrag"]) {
        "Tern does not defragment memory in this version"
    } else if has(&["slowlog", "latency-"]) {
        "Tern keeps no slow log or latency monitor in this version"
    } else if has(&["notify-keyspace-events"]) {
        "Tern sends no keyspace notifications in this version"
    } else if has(&["acl", "user", "rename-command"]) {
        "Tern has no ACL users or command renaming in this version"
    } else if has(&["tls-"]) {
        "Tern has no TLS in this version"
    } else if has(&["unixsocket"]) {
        "Tern does not listen on Unix sockets in this version"
    } else {
        "Tern does not implement it in this version"
    }
}

/// A config line as Redis's `sdstrim(line, " \t\r\n")` leaves it: only
/// those four bytes go, so a value ending in U+00A0 keeps it.
fn trim_line(raw: &str) -> &str {
    raw.trim_matches([' ', '\t', '\r', '\n'])
}

/// Deepest chain of `include` lines a configuration may have.
pub const MAX_INCLUDE_DEPTH: usize = 16;

impl Config {
    /// Applies one directive. The error is the reason only.
    pub fn apply(&mut self, name: &str, args: &[&str]) -> Result<(), String> {
        // Lines redis.conf allows that are not settings: ACL users and
        // renamed commands are accepted with a start-up warning, modules
        // cannot be loaded at all.
        if name.eq_ignore_ascii_case("rename-command") || name.eq_ignore_ascii_case("user") {
            if args.is_empty() {
                return Err("wrong number of arguments".into());
            }
            let n = name.to_ascii_lowercase();
            if !self.ignored.contains(&n) {
                self.ignored.push(n);
            }
            return Ok(());
        }
        if name.eq_ignore_ascii_case("loadmodule") {
            return Err("Tern does not support modules".into());
        }
        let d = find_directive(name).ok_or_else(|| "Bad directive or wrong number of arguments".to_string())?;
        (d.set)(self, args)
    }

    /// Applies a whole redis.conf text. `origin` names it in errors.
    pub fn apply_text(&mut self, text: &str, origin: &str) -> Result<(), String> {
        self.apply_text_at(text, origin, 0)
    }

    /// [`Config::apply_text`] inside `depth` levels of `include`: a file that
    /// includes itself, directly or not, fails at [`MAX_INCLUDE_DEPTH`]
    /// instead of recursing until the stack overflows.
    fn apply_text_at(&mut self, text: &str, origin: &str, depth: usize) -> Result<(), String> {
        for (n, raw) in text.lines().enumerate() {
            let line = trim_line(raw);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words = split_line(line)
                .ok_or_else(|| fatal(origin, n + 1, line, line.split_whitespace().next().unwrap_or(""), "Unbalanced quotes in configuration line"))?;
            let Some((name, args)) = words.split_first() else { continue };
            let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            if name.eq_ignore_ascii_case("include") {
                let path = one(&args).map_err(|e| fatal(origin, n + 1, line, name, &e))?;
                if depth >= MAX_INCLUDE_DEPTH {
                    return Err(fatal(origin, n + 1, line, name, &format!("includes nested more than {MAX_INCLUDE_DEPTH} deep (does {path} include itself?)")));
                }
                let inc = std::fs::read_to_string(path).map_err(|e| fatal(origin, n + 1, line, name, &format!("can't open {path}: {e}")))?;
                self.apply_text_at(&inc, path, depth + 1)?;
                continue;
            }
            self.apply(name, &args).map_err(|e| fatal(origin, n + 1, line, name, &e))?;
        }
        Ok(())
    }

    /// Builds the configuration from redis-server style arguments.
    pub fn from_args(args: &[String]) -> Result<Config, String> {
        let mut cfg = Config::default();
        let mut rest = args;
        if let Some(first) = rest.first() {
            if !first.starts_with("--") {
                // `-` reads the configuration from stdin, as redis-server does.
                let text = if first == "-" {
                    std::io::read_to_string(std::io::stdin()).map_err(|e| format!("Fatal error, can't read config from stdin: {e}"))?
                } else {
                    let t = std::fs::read_to_string(first).map_err(|e| format!("Fatal error, can't open config file '{first}': {e}"))?;
                    cfg.config_file = Some(std::fs::canonicalize(first).unwrap_or_else(|_| PathBuf::from(first)));
                    t
                };
                cfg.apply_text(&text, first)?;
                rest = &rest[1..];
            }
        }
        // "--port 7000 --save '' " becomes lines "port 7000" and "save ''".
        let mut i = 0;
        let mut nth = 0;
        while i < rest.len() {
            let Some(name) = rest[i].strip_prefix("--") else {
                return Err(format!("Invalid argument '{}': directives are given as --name value", rest[i]));
            };
            let mut vals: Vec<&str> = Vec::new();
            i += 1;
            while i < rest.len() && !rest[i].starts_with("--") {
                vals.push(&rest[i]);
                i += 1;
            }
            nth += 1;
            let line = format!("{} {}", name, vals.join(" "));
            if name.eq_ignore_ascii_case("include") {
                cfg.apply_text(&line, "command line")?;
                continue;
            }
            cfg.apply(name, &vals).map_err(|e| fatal("command line", nth, &line, name, &e))?;
        }
        Ok(cfg)
    }

    /// Directives accepted but not acted on, for the start-up warning.
    pub fn passive_in_use(&self) -> Vec<String> {
        // Turning a feature off ("no", "") is what Tern does anyway.
        let defaults = Config::default();
        let mut v: Vec<String> = self
            .passive
            .iter()
            .filter(|(n, val)| !val.is_empty() && val != "no" && find_directive(n).map_or(true, |d| (d.get)(&defaults) != *val))
            .map(|(n, _)| n.clone())
            .collect();
        if self.maxmemory != 0 {
            v.push("maxmemory".into());
        }
        if self.maxmemory_policy != "noeviction" {
            v.push("maxmemory-policy".into());
        }
        for d in &self.ignored {
            if !v.contains(d) {
                v.push(d.clone());
            }
        }
        v
    }

    /// CONFIG SET of one directive: the value is one string, split into
    /// words for the directives that take a list, as Redis does.
    pub fn set_runtime(&mut self, d: &Directive, value: &str) -> Result<(), String> {
        if d.is_multi() {
            let words: Vec<&str> = value.split_ascii_whitespace().collect();
            if words.is_empty() {
                return (d.set)(self, &[""]);
            }
            (d.set)(self, &words)
        } else {
            (d.set)(self, &[value])
        }
    }

    /// The redis.conf lines that express `d`'s current value, as CONFIG
    /// REWRITE writes them (one line per client class for the output
    /// buffer limits, sizes with Redis's units).
    pub fn rewrite_lines(&self, d: &Directive) -> Vec<String> {
        if d.name == "client-output-buffer-limit" {
            return [("normal", self.output_limit_normal), ("replica", self.output_limit_replica), ("pubsub", self.output_limit_pubsub)]
                .iter()
                .map(|(n, l)| format!("{} {} {} {} {}", d.name, n, format_memory(l.hard), format_memory(l.soft), l.soft_seconds))
                .collect();
        }
        let v = (d.get)(self);
        let rendered = if d.is_memory() {
            v.parse::<u64>().map(format_memory).unwrap_or(v)
        } else if d.is_multi() && !v.is_empty() {
            // Each word quoted as a single value would be: a quote, a NUL or
            // an empty word must survive being read back. `bind` keeps its
            // words apart; the others' words never hold a space.
            let words: Vec<String> = if d.name == "bind" { self.bind.clone() } else { v.split(' ').map(str::to_string).collect() };
            words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
        } else {
            quote(&v)
        };
        vec![format!("{} {}", d.name, rendered)]
    }

    /// CONFIG REWRITE: rewrites the file the server started with. Comments
    /// and lines Tern does not know keep their place; a directive already
    /// in the file is rewritten where it first appears (later repeats are
    /// dropped); one that differs from its default and is not in the file
    /// is appended after a `# Generated by CONFIG REWRITE` line.
    pub fn rewrite(&self) -> Result<(), String> {
        let Some(path) = &self.config_file else {
            return Err("The server is running without a config file".into());
        };
        let old = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("Rewriting config file: {e}")),
        };
        let text = self.rewritten(&old);
        let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
        std::fs::write(&tmp, text)
            .and_then(|_| {
                if let Ok(meta) = std::fs::metadata(path) {
                    let _ = std::fs::set_permissions(&tmp, meta.permissions());
                }
                std::fs::rename(&tmp, path)
            })
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("Rewriting config file: {e}")
            })
    }

    /// The text CONFIG REWRITE writes, given the file's current text.
    pub fn rewritten(&self, old: &str) -> String {
        const SIGNATURE: &str = "# Generated by CONFIG REWRITE";
        let defaults = Config::default();
        let mut lines: Vec<Option<String>> = Vec::new();
        // Directive name -> indexes of its lines in `lines`.
        let mut seen: Vec<(&'static str, Vec<usize>)> = Vec::new();
        let mut has_signature = false;
        for raw in old.lines() {
            let t = trim_line(raw);
            if t == SIGNATURE {
                has_signature = true;
            }
            let name = if t.is_empty() || t.starts_with('#') { None } else { split_line(t).and_then(|w| w.into_iter().next()) };
            if let Some(d) = name.as_deref().and_then(find_directive) {
                match seen.iter_mut().find(|(n, _)| *n == d.name) {
                    Some((_, v)) => v.push(lines.len()),
                    None => seen.push((d.name, vec![lines.len()])),
                }
            }
            lines.push(Some(raw.to_string()));
        }
        let mut appended = Vec::new();
        for d in DIRECTIVES {
            let new = self.rewrite_lines(d);
            match seen.iter().find(|(n, _)| *n == d.name) {
                Some((_, at)) => {
                    for (k, &i) in at.iter().enumerate() {
                        lines[i] = if k == 0 { Some(new.join("\n")) } else { None };
                    }
                }
                None if (d.get)(self) != (d.get)(&defaults) => appended.extend(new),
                None => {}
            }
        }
        let mut out = String::new();
        for l in lines.into_iter().flatten() {
            out.push_str(&l);
            out.push('\n');
        }
        if !appended.is_empty() {
            if !has_signature {
                out.push_str(SIGNATURE);
                out.push('\n');
            }
            for l in appended {
                out.push_str(&l);
                out.push('\n');
            }
        }
        out
    }
}

fn fatal(origin: &str, line_no: usize, line: &str, name: &str, reason: &str) -> String {
    let place = if origin == "command line" {
        format!("Reading the command line arguments, at directive {line_no}")
    } else {
        format!("Reading the configuration file '{origin}', at line {line_no}")
    };
    format!("\n*** FATAL CONFIG FILE ERROR (Tern {}) ***\n{place}\n>>> '{line}'\n{reason} (directive '{name}')", env!("CARGO_PKG_VERSION"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_units() {
        assert_eq!(parse_memory("1gb"), Some(1 << 30));
        assert_eq!(parse_memory("1G"), Some(1_000_000_000));
        assert_eq!(parse_memory("512mb"), Some(512 << 20));
        assert_eq!(parse_memory("100"), Some(100));
        assert_eq!(parse_memory("-1"), None);
        assert_eq!(parse_memory("1tb"), None);
    }

    #[test]
    fn file_and_args() {
        let dir = std::env::temp_dir().join(format!("tern-cfg-{}", std::process::id()));
        std::fs::write(&dir, "# comment\nport 7001\nio-threads 3\nsave \"\"\nclient-output-buffer-limit normal 1mb 512kb 10\n").unwrap();
        let cfg = Config::from_args(&[dir.display().to_string(), "--port".into(), "7002".into()]).unwrap();
        assert_eq!(cfg.port, 7002);
        assert_eq!(cfg.threads, 3);
        assert_eq!(cfg.output_limit_normal, OutputLimit { hard: 1 << 20, soft: 512 << 10, soft_seconds: 10 });
        assert_eq!(cfg.passive, vec![("save".to_string(), String::new())]);
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn self_include_is_an_error_not_a_stack_overflow() {
        let path = std::env::temp_dir().join(format!("tern-cfg-loop-{}", std::process::id()));
        std::fs::write(&path, format!("port 7003\ninclude {}\n", path.display())).unwrap();
        let e = Config::from_args(&[path.display().to_string()]).unwrap_err();
        assert!(e.contains(&format!("nested more than {MAX_INCLUDE_DEPTH} deep")), "{e}");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn passive_directives_give_their_own_reason() {
        assert!(passive_reason("maxmemory").contains("memory limit"));
        assert!(passive_reason("save").contains("persist"));
        assert!(passive_reason("replicaof").contains("replicate"));
        assert!(passive_reason("zset-max-listpack-entries").contains("sorted sets"));
    }

    #[test]
    fn errors_name_line_directive_and_reason() {
        let mut c = Config::default();
        let e = c.apply_text("port 6379\nport abc\n", "x.conf").unwrap_err();
        assert!(e.contains("x.conf") && e.contains("line 2") && e.contains("port abc") && e.contains("integer"), "{e}");
        let e = c.apply_text("no-such-thing 1\n", "y.conf").unwrap_err();
        assert!(e.contains("Bad directive"), "{e}");
    }
}
