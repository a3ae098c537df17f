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
    /// The config file the server was started with (CONFIG REWRITE).
    pub config_file: Option<PathBuf>,
    /// Directives accepted but not acted on (persistence, ...), as given,
    /// so that CONFIG GET shows them and the log can warn once.
    pub passive: Vec<(String, String)>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: vec!["127.0.0.1".into()],
            port: 6379,
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
            config_file: None,
            passive: Vec::new(),
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

fn parse_int<T: std::str::FromStr + PartialOrd + std::fmt::Display>(s: &str, min: T, max: T) -> Result<T, String> {
    let v: T = s.parse().map_err(|_| "argument couldn't be parsed into an integer".to_string())?;
    if v < min || v > max {
        return Err(format!("argument must be between {min} and {max} inclusive"));
    }
    Ok(v)
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

macro_rules! passive {
    ($name:expr, $default:expr) => {
        Directive {
            name: $name,
            alias: None,
            mutable: true,
            kind: Kind::Passive,
            set: |c, a| {
                let v = a.join(" ");
                match c.passive.iter_mut().find(|(n, _)| n == $name) {
                    Some(slot) => slot.1 = v,
                    None => c.passive.push(($name.to_string(), v)),
                }
                Ok(())
            },
            get: |c| c.passive.iter().find(|(n, _)| n == $name).map(|(_, v)| v.clone()).unwrap_or_else(|| $default.to_string()),
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
            c.maxclients = parse_int(one(a)?, 1usize, i32::MAX as usize)?;
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
                return Err("argument must be a memory value at least 1mb".into());
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
                return Err("argument must be a memory value at least 1mb".into());
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
        mutable: false,
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
            const P: &[&str] = &["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"];
            if !P.contains(&v.as_str()) {
                return Err("argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction".into());
            }
            c.maxmemory_policy = v;
            Ok(())
        },
        get: |c| c.maxmemory_policy.clone(),
    },
    passive!("save", "3600 1 300 100 60 10000"),
    passive!("appendonly", "no"),
    passive!("appendfsync", "everysec"),
    passive!("appendfilename", "appendonly.aof"),
    passive!("appenddirname", "appendonlydir"),
    passive!("dbfilename", "dump.rdb"),
    passive!("dir", "."),
    passive!("rdbcompression", "yes"),
    passive!("rdbchecksum", "yes"),
    passive!("stop-writes-on-bgsave-error", "yes"),
    passive!("supervised", "no"),
    passive!("pidfile", ""),
    passive!("replica-read-only", "yes"),
    passive!("always-show-logo", "no"),
    passive!("set-proc-title", "yes"),
    passive!("lazyfree-lazy-eviction", "no"),
    passive!("lazyfree-lazy-expire", "no"),
    passive!("lazyfree-lazy-server-del", "no"),
    passive!("lazyfree-lazy-user-del", "no"),
    passive!("lazyfree-lazy-user-flush", "no"),
    passive!("no-appendfsync-on-rewrite", "no"),
    passive!("auto-aof-rewrite-percentage", "100"),
    passive!("auto-aof-rewrite-min-size", "67108864"),
    passive!("aof-use-rdb-preamble", "yes"),
];

/// Finds a directive by name or alias, case-insensitively.
pub fn find_directive(name: &str) -> Option<&'static Directive> {
    DIRECTIVES.iter().find(|d| d.name.eq_ignore_ascii_case(name) || d.alias.is_some_and(|a| a.eq_ignore_ascii_case(name)))
}

/// Splits one config-file line into words with redis.conf's quoting rules.
fn split_line(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut frame = tern_protocol::Frame::new();
    let mut buf = line.as_bytes().to_vec();
    buf.push(b'\n');
    match frame.parse(&buf, &tern_protocol::Limits::default()) {
        Ok(Some(_)) => {
            for a in frame.args(&buf).iter() {
                out.push(String::from_utf8_lossy(a).into_owned());
            }
            Some(out)
        }
        _ => None,
    }
}

impl Config {
    /// Applies one directive. The error is the reason only.
    pub fn apply(&mut self, name: &str, args: &[&str]) -> Result<(), String> {
        let d = find_directive(name).ok_or_else(|| "Bad directive or wrong number of arguments".to_string())?;
        (d.set)(self, args)
    }

    /// Applies a whole redis.conf text. `origin` names it in errors.
    pub fn apply_text(&mut self, text: &str, origin: &str) -> Result<(), String> {
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words = split_line(line).ok_or_else(|| {
                format!("\n*** FATAL CONFIG FILE ERROR (Tern {}) ***\nReading the configuration file, at line {}\n>>> '{}'\nUnbalanced quotes in configuration line", env!("CARGO_PKG_VERSION"), n + 1, line)
            })?;
            let Some((name, args)) = words.split_first() else { continue };
            let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            if name.eq_ignore_ascii_case("include") {
                let path = one(&args).map_err(|e| fatal(origin, n + 1, line, name, &e))?;
                let inc = std::fs::read_to_string(path).map_err(|e| fatal(origin, n + 1, line, name, &format!("can't open {path}: {e}")))?;
                self.apply_text(&inc, path)?;
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
                let text = std::fs::read_to_string(first).map_err(|e| format!("Fatal error, can't open config file '{first}': {e}"))?;
                cfg.config_file = Some(std::fs::canonicalize(first).unwrap_or_else(|_| PathBuf::from(first)));
                cfg.apply_text(&text, first)?;
                rest = &rest[1..];
            }
        }
        // "--port 7000 --save '' " becomes lines "port 7000" and "save ''".
        let mut i = 0;
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
            cfg.apply(name, &vals).map_err(|e| fatal("command line", 0, &format!("{} {}", name, vals.join(" ")), name, &e))?;
        }
        Ok(cfg)
    }

    /// Directives accepted but not acted on, for the start-up warning.
    pub fn passive_in_use(&self) -> Vec<String> {
        let mut v: Vec<String> = self.passive.iter().map(|(n, _)| n.clone()).collect();
        if self.maxmemory != 0 {
            v.push("maxmemory".into());
        }
        v
    }
}

fn fatal(origin: &str, line_no: usize, line: &str, name: &str, reason: &str) -> String {
    format!(
        "\n*** FATAL CONFIG FILE ERROR (Tern {}) ***\nReading the configuration file '{}', at line {}\n>>> '{}'\n{} (directive '{}')",
        env!("CARGO_PKG_VERSION"),
        origin,
        line_no,
        line,
        reason,
        name
    )
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
    fn errors_name_line_directive_and_reason() {
        let mut c = Config::default();
        let e = c.apply_text("port 6379\nport abc\n", "x.conf").unwrap_err();
        assert!(e.contains("x.conf") && e.contains("line 2") && e.contains("port abc") && e.contains("integer"), "{e}");
        let e = c.apply_text("no-such-thing 1\n", "y.conf").unwrap_err();
        assert!(e.contains("Bad directive"), "{e}");
    }
}
