//! The declaration table: every directive Tern knows, declared once.
//!
//! Each line gives the field the code reads, its Rust type and default,
//! the redis.conf name (and alias), the [`Kind`] that parses, shows and
//! rewrites it with Redis's ranges and messages, whether CONFIG SET may
//! change it (`runtime`), only at start-up (`startup`) or only with
//! `enable-protected-configs` (`protected`), `+ own` where the default is
//! Tern's rather than Redis's, and, for a directive accepted but not acted
//! on, the reason the start-up warning gives. The group says where the
//! value is applied:
//!
//! - `live`: mirrored into [`Settings`], atomics the request path reads
//!   through typed accessors (`srv.settings.prefetch_batch_max_size()`);
//!   `derived` adds live values computed from the config (a password is
//!   set; the policy is an LFU one);
//! - `process`: applied to the process (jemalloc, the logger) at start-up
//!   and after every CONFIG SET;
//! - `config`: read from the [`Config`] itself where needed (listeners at
//!   start-up, AUTH, INFO), or by nothing yet (the passive ones).
//!
//! From the table come the [`Config`] struct and its default, the
//! [`DIRECTIVES`] that file parsing, the command line, CONFIG GET/SET and
//! CONFIG REWRITE walk, and [`Settings`].

use std::time::Duration;

use super::kinds::*;
use super::tls::{check_ciphers, check_ciphersuites, check_protocols, TlsAuthClients, TlsList};
use super::reason::*;
use super::{Applied, Directive, When};

named_enum! {
    /// Log verbosity, least to most severe (`loglevel`).
    pub enum LogLevel {
        Debug = "debug",
        Verbose = "verbose",
        Notice = "notice",
        Warning = "warning",
        Nothing = "nothing",
    }
}

named_enum! {
    /// `maxmemory-policy`, with Redis's meanings; the LFU policies switch
    /// the per-key access data to LFU counters (OBJECT FREQ).
    pub enum MaxmemoryPolicy {
        VolatileLru = "volatile-lru",
        VolatileLfu = "volatile-lfu",
        VolatileRandom = "volatile-random",
        VolatileTtl = "volatile-ttl",
        AllkeysLru = "allkeys-lru",
        AllkeysLfu = "allkeys-lfu",
        AllkeysRandom = "allkeys-random",
        NoEviction = "noeviction",
        /// Tern's own: S3-FIFO and SIEVE (see tern-store's `fifo`).
        AllkeysS3Fifo = "allkeys-s3fifo",
        AllkeysSieve = "allkeys-sieve",
        VolatileS3Fifo = "volatile-s3fifo",
        VolatileSieve = "volatile-sieve",
    }
}

impl MaxmemoryPolicy {
    pub fn is_lfu(self) -> bool {
        matches!(self, MaxmemoryPolicy::VolatileLfu | MaxmemoryPolicy::AllkeysLfu)
    }
    pub fn is_lru(self) -> bool {
        matches!(self, MaxmemoryPolicy::VolatileLru | MaxmemoryPolicy::AllkeysLru)
    }

    /// The store's eviction policy of the same meaning.
    pub fn store_policy(self) -> tern_store::Policy {
        use tern_store::Policy as P;
        match self {
            MaxmemoryPolicy::VolatileLru => P::VolatileLru,
            MaxmemoryPolicy::VolatileLfu => P::VolatileLfu,
            MaxmemoryPolicy::VolatileRandom => P::VolatileRandom,
            MaxmemoryPolicy::VolatileTtl => P::VolatileTtl,
            MaxmemoryPolicy::AllkeysLru => P::AllkeysLru,
            MaxmemoryPolicy::AllkeysLfu => P::AllkeysLfu,
            MaxmemoryPolicy::AllkeysRandom => P::AllkeysRandom,
            MaxmemoryPolicy::NoEviction => P::NoEviction,
            MaxmemoryPolicy::AllkeysS3Fifo => P::AllkeysS3Fifo,
            MaxmemoryPolicy::AllkeysSieve => P::AllkeysSieve,
            MaxmemoryPolicy::VolatileS3Fifo => P::VolatileS3Fifo,
            MaxmemoryPolicy::VolatileSieve => P::VolatileSieve,
        }
    }

    /// S3-FIFO or SIEVE: keys carry an access counter and an insertion
    /// number instead of an access time.
    pub fn is_fifo(self) -> bool {
        self.store_policy().fifo().0 != tern_store::FifoKind::Off
    }
}

/// How long a TLS handshake may take, from the accept (`tls-handshake-timeout`'s
/// default): a client that connects and then says nothing, or stalls half-way,
/// holds a connection slot and its handshake buffers only this long. Redis
/// has no such bound (only `timeout`, off by default); 10 s is far beyond a
/// handshake's few round trips, even over a slow link.
pub const TLS_HANDSHAKE_TIMEOUT_MS: u64 = 10_000;

fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// `kind` with its value type stated, for uses that have no field to
/// infer it from.
fn kind_of<V, K: Kind<Value = V>>(kind: &K) -> &K {
    kind
}

/// `+ own` marks a default that is Tern's own.
macro_rules! own {
    () => {
        false
    };
    (own) => {
        true
    };
}

macro_rules! opt {
    () => {
        None
    };
    ($v:expr) => {
        Some($v)
    };
}

macro_rules! when {
    (runtime) => {
        When::Runtime
    };
    (startup) => {
        When::Startup
    };
    (protected) => {
        When::Protected
    };
}

/// One [`Directive`] of the table: its accessors go through the kind, so
/// the field's type is the kind's value type.
macro_rules! directive {
    ($applied:expr, $field:ident: $ty:ty, $name:literal $(| $alias:literal)?, $kind:expr, $when:ident $(+ $own:ident)? $(, $reason:expr)?) => {
        Directive {
            name: $name,
            alias: opt!($($alias)?),
            when: when!($when),
            applied: $applied,
            passive: opt!($($reason)?),
            tern_default: own!($($own)?),
            set: |c, a| {
                c.$field = Kind::parse(&$kind, a, &c.$field)?;
                Ok(())
            },
            get: |c| Kind::show(&$kind, &c.$field),
            rewrite: |c, name| Kind::rewrite_lines(&$kind, name, &c.$field),
            multi: || Kind::multi(kind_of::<$ty, _>(&$kind)),
        }
    };
}

macro_rules! directives {
    (
        live { $($(#[doc = $ldoc:literal])* $lf:ident: $lt:ty = $ld:expr => $ln:literal $(| $la:literal)?, $lk:expr, $lw:ident $(+ $lo:ident)? $(, $lr:expr)?;)* }
        derived { $($(#[doc = $ddoc:literal])* $df:ident: $dt:ty = $dx:expr;)* }
        process { $($(#[doc = $pdoc:literal])* $pf:ident: $pt:ty = $pd:expr => $pn:literal $(| $pa:literal)?, $pk:expr, $pw:ident $(+ $po:ident)? $(, $pr:expr)?;)* }
        config { $($(#[doc = $cdoc:literal])* $cf:ident: $ct:ty = $cd:expr => $cn:literal $(| $ca:literal)?, $ck:expr, $cw:ident $(+ $co:ident)? $(, $cr:expr)?;)* }
    ) => {
        /// The whole configuration, one typed field per directive.
        #[derive(Clone, Debug)]
        pub struct Config {
            $($(#[doc = $ldoc])* pub $lf: $lt,)*
            $($(#[doc = $pdoc])* pub $pf: $pt,)*
            $($(#[doc = $cdoc])* pub $cf: $ct,)*
            /// The config file the server was started with (CONFIG REWRITE).
            pub config_file: Option<std::path::PathBuf>,
            /// `user` lines, in order (loaded by the server at start).
            pub users: Vec<crate::UserLine>,
            /// `rename-command` lines, in order (applied to the command
            /// table at start).
            pub renames: Vec<crate::UserLine>,
            /// The `user` lines CONFIG REWRITE writes in place of the
            /// file's (the users in force; none with an `aclfile`); None
            /// leaves the file's as they are.
            pub rewrite_users: Option<Vec<String>>,
        }

        impl Default for Config {
            fn default() -> Self {
                Config {
                    $($lf: $ld,)*
                    $($pf: $pd,)*
                    $($cf: $cd,)*
                    config_file: None,
                    users: Vec::new(),
                    renames: Vec::new(),
                    rewrite_users: None,
                }
            }
        }

        /// Every directive Tern knows; anything else is an error.
        pub static DIRECTIVES: &[Directive] = &[
            $(directive!(Applied::Live, $lf: $lt, $ln $(| $la)?, $lk, $lw $(+ $lo)? $(, $lr)?),)*
            $(directive!(Applied::Process, $pf: $pt, $pn $(| $pa)?, $pk, $pw $(+ $po)? $(, $pr)?),)*
            $(directive!(Applied::Config, $cf: $ct, $cn $(| $ca)?, $ck, $cw $(+ $co)? $(, $cr)?),)*
        ];

        /// The settings the request path reads, copied out of the
        /// [`Config`] into atomics so that a worker never takes the config
        /// lock per request; [`Settings::load_from`] publishes a config
        /// (at start-up and after every CONFIG SET).
        #[derive(Default)]
        pub struct Settings {
            $($lf: <$lt as Live>::Cell,)*
            $($df: <$dt as Live>::Cell,)*
        }

        impl Settings {
            pub fn load_from(&self, c: &Config) {
                $(<$lt as Live>::store(&self.$lf, &c.$lf);)*
                $(<$dt as Live>::store(&self.$df, &($dx)(c));)*
            }
            $($(#[doc = $ldoc])* #[inline] pub fn $lf(&self) -> $lt { <$lt as Live>::load(&self.$lf) })*
            $($(#[doc = $ddoc])* #[inline] pub fn $df(&self) -> $dt { <$dt as Live>::load(&self.$df) })*
        }
    };
}

directives! {
    live {
        /// Connection limit (`ERR max number of clients reached`).
        maxclients: usize = 10000 => "maxclients", Int::new(1, u32::MAX as i64), runtime;
        /// Idle clients are closed after this long (0: never).
        timeout: Duration = Duration::ZERO => "timeout", Secs::new(0, i32::MAX as i64), runtime;
        /// TCP keepalive's first probe after this long idle (0: off).
        tcp_keepalive: Duration = Duration::from_secs(300) => "tcp-keepalive", Secs::new(0, i32::MAX as i64), runtime;
        client_output_buffer_limit: OutputLimits = OutputLimits::DEFAULT => "client-output-buffer-limit", ClientOutputBufferLimit, runtime;
        client_query_buffer_limit: u64 = 1 << 30 => "client-query-buffer-limit", Mem::new(1 << 20, MEM_MAX), runtime;
        proto_max_bulk_len: u64 = 512 << 20 => "proto-max-bulk-len", Mem::new(1 << 20, MEM_MAX), runtime;
        /// Background task frequency; Redis clamps it into 1..=500.
        hz: u32 = 10 => "hz", Int::<u32>::new(0, i32::MAX as i64).clamp(1, 500), runtime;
        /// Refuse non-loopback clients while the default user has no password.
        protected_mode: bool = true => "protected-mode", Bool, runtime;
        /// Fields a hash may hold in its compact encoding.
        hash_max_listpack_entries: usize = 512 => "hash-max-listpack-entries" | "hash-max-ziplist-entries", Int::new(0, i64::MAX), runtime;
        /// Longest field or value, in bytes, a compact hash may hold.
        hash_max_listpack_value: usize = 64 => "hash-max-listpack-value" | "hash-max-ziplist-value", Mem::new(0, MEM_MAX), runtime;
        /// Largest sparse HyperLogLog (header included) before PFADD and
        /// PFMERGE turn it dense.
        hll_sparse_max_bytes: u64 = 3000 => "hll-sparse-max-bytes", Mem::new(0, MEM_MAX), runtime;
        /// A list node's limit: entries when positive, bytes (4 KiB << (-n - 1),
        /// at most 64 KiB) when negative; a list of one node within it is a
        /// listpack.
        list_max_listpack_size: i64 = -2 => "list-max-listpack-size" | "list-max-ziplist-size", Int::new(i32::MIN as i64, i32::MAX as i64), runtime;
        /// Quicklist nodes kept uncompressed at each end of a list; those
        /// further in are stored LZF-compressed (0: none). A list takes
        /// the value in force when it becomes a quicklist, as in Redis.
        list_compress_depth: i64 = 0 => "list-compress-depth", Int::new(0, i32::MAX as i64), runtime;
        /// Most members a set of integers keeps as an intset.
        set_max_intset_entries: usize = 512 => "set-max-intset-entries", Int::new(0, i64::MAX), runtime;
        /// Most members a set keeps in its compact (listpack) encoding.
        set_max_listpack_entries: usize = 128 => "set-max-listpack-entries", Int::new(0, i64::MAX), runtime;
        /// Longest member, in bytes, a listpack set keeps.
        set_max_listpack_value: usize = 64 => "set-max-listpack-value", Int::new(0, i64::MAX), runtime;
        /// Most members a sorted set keeps in its compact (listpack) encoding.
        zset_max_listpack_entries: usize = 128 => "zset-max-listpack-entries" | "zset-max-ziplist-entries", Int::new(0, i64::MAX), runtime;
        /// Longest member, in bytes, a listpack sorted set keeps (a memory
        /// size, `1kb` included, as in Redis).
        zset_max_listpack_value: usize = 64 => "zset-max-listpack-value" | "zset-max-ziplist-value", Mem::new(0, MEM_MAX), runtime;
        /// Most bytes a stream node (one listpack) grows to before new
        /// entries start another (0: no limit).
        stream_node_max_bytes: u64 = 4096 => "stream-node-max-bytes", Mem::new(0, MEM_MAX), runtime;
        /// Most entries a stream node holds (0: no limit).
        stream_node_max_entries: i64 = 100 => "stream-node-max-entries", Int::new(0, i64::MAX), runtime;
        /// Keys whose lookups are advanced together, stage by stage, so
        /// their cache misses overlap (within a multi-key command and
        /// across the pipelined commands of one read); 0 turns prefetching
        /// off. Redis 8's range for the same directive.
        prefetch_batch_max_size: usize = 16 => "prefetch-batch-max-size", Int::new(0, tern_store::MAX_PREFETCH_GROUP as i64), runtime;
        /// Below this much data (the shards' part of `used_memory`) keys
        /// are looked up without the prefetch stages, as with
        /// `prefetch-batch-max-size 0`: such data sits in the CPU's
        /// caches, where the stages' own work costs more than the misses
        /// they overlap. 0: prefetch at any size.
        prefetch_min_memory: u64 = 4 * 1024 * 1024 => "prefetch-min-memory", Mem::new(0, MEM_MAX), runtime + own;
        /// Each worker measures its batches with and without the prefetch
        /// stages (one batch in 256 runs the other way) and keeps the
        /// faster; no: the stages run whenever the two settings above say.
        prefetch_tune: bool = true => "prefetch-tune", Bool, runtime + own;
        /// The prefetch's third stage (a value's lines past the two the
        /// second asks for) is skipped after a run of keys it had nothing
        /// to add for, still sampling one key in 8; no: every key whose
        /// value is read goes through it.
        prefetch_value_gate: bool = true => "prefetch-value-gate", Bool, runtime + own;
        /// A freed item's block is asked for whole (its lines past the
        /// first, up to four): the allocator hands it to the next
        /// item of its size, which writes all of it; no: not asked for.
        prefetch_freed_items: bool = true => "prefetch-freed-items", Bool, runtime + own;
        /// String values at least this long (bytes) are stored shared and
        /// sent from the stored bytes instead of being copied into the
        /// reply buffer; 0 turns copy avoidance off.
        reply_copy_avoid_min_size: usize = 16 * 1024 => "reply-copy-avoid-min-size", Mem::new(0, MEM_MAX), runtime + own;
        /// A read that leaves room in the buffer is taken to have drained
        /// the socket, so no second read is made only to hear EAGAIN (the
        /// edge-triggered poll reports data that arrives later, and a
        /// half-close is read to the end); no: read until EAGAIN.
        io_short_read_drains: bool = true => "io-short-read-drains", Bool, runtime + own;
        /// Replies are written once every connection the poll reported
        /// ready has been read and its requests run, as Redis writes its
        /// clients' replies before it sleeps: a client woken by a round's
        /// first reply is mostly still running when the others arrive, so
        /// the kernel wakes it once a round, not once a connection (the
        /// wake-up is the costly part of a loopback send). no: each
        /// connection's replies are written as soon as its requests ran.
        io_replies_after_round: bool = true => "io-replies-after-round", Bool, runtime + own;
        /// Commands are timed (INFO commandstats, SLOWLOG, LATENCY, the
        /// latency percentiles) by the CPU's time-stamp counter at its rate
        /// measured against the monotonic clock, where the CPU says the
        /// counter runs at one rate (x86_64's invariant TSC): a few
        /// nanoseconds a command where a monotonic reading costs tens. no,
        /// or no such counter: each command reads the monotonic clock.
        command_time_tsc: bool = true => "command-time-tsc", Bool, runtime + own;
        /// BITCOUNT counts bits with the fastest kernel the CPU runs
        /// (AVX-512 VPOPCNTQ, else AVX2 Harley-Seal, else POPCNT;
        /// tern-table's `popcount`),
        /// detected once; no: the portable count of the baseline target.
        bitcount_simd: bool = true => "bitcount-simd", Bool, runtime + own;
        /// A BITCOUNT over 256 KiB or more reads the bytes in the other
        /// order from the worker's last such count, so that a bitmap
        /// counted again starts on the lines the last count left in L2
        /// (tern-table's `popcount::alternate`); no: always front to back.
        bitcount_alternate_scan: bool = true => "bitcount-alternate-scan", Bool, runtime + own;
        /// With `appendfsync everysec` or `no`, the AOF writer thread
        /// writes at most once per this many microseconds: the workers'
        /// records gather meanwhile, so a busy server costs one write(2)
        /// and one wake-up of the thread per gap instead of one per
        /// event-loop round. 0: a write for every round handed over.
        /// `always` never waits for it.
        aof_write_gap_us: i64 = 1000 => "aof-write-gap-us", Int::new(0, 1_000_000), runtime + own;
        /// With `appendfsync always`, the incremental AOF file is made
        /// this much longer in filler (lines of `#`, annotations Redis
        /// skips; written and synced) whenever the commands reach its
        /// end, and commands are written over it: a sync then writes data
        /// alone, without the file's new size and blocks (a journal
        /// commit on ext4). The filler is cut off when the file is
        /// closed, and at load. 0: plain appends.
        aof_prealloc_size: usize = 4 << 20 => "aof-prealloc-size", Mem::new(0, 1 << 30), runtime + own;
        /// With `snapshot-sched-idle no`, the nice value the snapshot
        /// threads (BGSAVE's saver, the AOF rewriter) take for each snapshot: at 19 they run on what CPU
        /// the workers leave, so a snapshot delays no request for long;
        /// 0: the workers' own priority.
        snapshot_nice: i64 = 19 => "snapshot-nice", Int::new(0, 19), runtime + own;
        /// The snapshot threads run under Linux's SCHED_IDLE policy while
        /// they write a snapshot: any worker or client thread that wakes
        /// on their CPU takes it at once, where a nice value only lowers
        /// their share (a nice-19 thread still holds a CPU for its slice).
        /// One that waits for a CPU more than three quarters of its time
        /// (checked from its first second on) goes over to the normal
        /// policy with `snapshot-nice`, so it still ends on a saturated
        /// machine. no: the normal policy with `snapshot-nice` throughout.
        snapshot_sched_idle: bool = true => "snapshot-sched-idle", Bool, runtime + own;
        /// UNLINK-like freeing for DEL of large values.
        lazyfree_lazy_user_del: bool = false => "lazyfree-lazy-user-del", Bool, runtime;
        /// FLUSHDB/FLUSHALL without SYNC/ASYNC free in the background.
        lazyfree_lazy_user_flush: bool = false => "lazyfree-lazy-user-flush", Bool, runtime;
        /// Commands that ran at least this long (microseconds) enter the
        /// slow log (SLOWLOG, COMMANDLOG ... slow); -1: none. Valkey's
        /// name for it is the alias.
        slowlog_log_slower_than: i64 = 10000 => "slowlog-log-slower-than" | "commandlog-execution-slower-than", Int::new(-1, i64::MAX), runtime;
        slowlog_max_len: i64 = 128 => "slowlog-max-len" | "commandlog-slow-execution-max-len", Int::new(0, i64::MAX), runtime;
        /// Requests of at least this many bytes enter COMMANDLOG's
        /// large-request log; -1: none.
        commandlog_request_larger_than: i64 = 1024 * 1024 => "commandlog-request-larger-than", Int::new(-1, i64::MAX), runtime;
        commandlog_large_request_max_len: i64 = 128 => "commandlog-large-request-max-len", Int::new(0, i64::MAX), runtime;
        /// Replies of at least this many bytes enter COMMANDLOG's
        /// large-reply log; -1: none.
        commandlog_reply_larger_than: i64 = 1024 * 1024 => "commandlog-reply-larger-than", Int::new(-1, i64::MAX), runtime;
        commandlog_large_reply_max_len: i64 = 128 => "commandlog-large-reply-max-len", Int::new(0, i64::MAX), runtime;
        /// Commands (and expire cycles) that took at least this many
        /// milliseconds are LATENCY events; 0: none.
        latency_monitor_threshold: i64 = 0 => "latency-monitor-threshold", Int::new(0, i64::MAX), runtime;
        /// Each command's latency enters its histogram (INFO latencystats).
        latency_tracking: bool = true => "latency-tracking", Bool, runtime;
        /// Memory limit in bytes (0: none): past it, commands that may
        /// grow memory evict first, or are refused with `-OOM`.
        maxmemory: u64 = 0 => "maxmemory", Mem::new(0, MEM_MAX), runtime;
        /// What eviction removes (Redis's names and meanings).
        maxmemory_policy: MaxmemoryPolicy = MaxmemoryPolicy::NoEviction => "maxmemory-policy", Enum::new(), runtime;
        /// Keys sampled per shard visit by the LRU, LFU and TTL policies.
        maxmemory_samples: usize = 5 => "maxmemory-samples", Int::new(1, 64), runtime;
        /// How hard one command works to get under the limit: at most
        /// 16 keys per step of tenacity are evicted before it runs
        /// (100: until under); the background cycle does the rest.
        maxmemory_eviction_tenacity: u32 = 10 => "maxmemory-eviction-tenacity", Int::new(0, 100), runtime;
        /// Client buffers, all workers together, above which clients are
        /// closed, largest first (0: no limit). Redis's percentage form
        /// (of `maxmemory`) is not accepted.
        /// A TLS connection whose handshake has not completed this long
        /// after its accept is closed (Tern's own: Redis has no such bound).
        tls_handshake_timeout: Duration = Duration::from_millis(TLS_HANDSHAKE_TIMEOUT_MS) => "tls-handshake-timeout", Millis::new(1, i32::MAX as i64), runtime + own;
        maxmemory_clients: u64 = 0 => "maxmemory-clients", Mem::new(0, MEM_MAX), runtime;
        /// Evicted values are freed by the background thread.
        lazyfree_lazy_eviction: bool = false => "lazyfree-lazy-eviction", Bool, runtime;
        lfu_log_factor: u32 = 10 => "lfu-log-factor", Int::new(0, i32::MAX as i64), runtime;
        lfu_decay_time: u32 = 1 => "lfu-decay-time", Int::new(0, i32::MAX as i64), runtime;
        /// How long (µs) a worker with messages for many subscribers at
        /// once lets more gather before it writes them, so that each
        /// subscriber gets several in one write (Tern's own; 0: every
        /// event-loop turn, as Redis).
        pubsub_coalesce_us: u64 = 1000 => "pubsub-coalesce-us", Int::new(0, 1_000_000), runtime + own;
        /// Keys the CLIENT TRACKING table holds before it evicts some (0:
        /// no limit).
        tracking_table_max_keys: u64 = 1_000_000 => "tracking-table-max-keys", Int::new(0, i64::MAX), runtime;
        /// A tracking client's reads of keys that exist are marked in the
        /// keys' own items (one of 64 slots per client) rather than put in
        /// the tracking table; no: every read goes to the table. Applies
        /// to clients turning tracking on from then on.
        tracking_item_marks: bool = true => "tracking-item-marks", Bool, runtime + own;
        /// The keyspace notification classes published (Redis's
        /// `NOTIFY_*` bits; see tern-store's `event`).
        notify_keyspace_events: u32 = 0 => "notify-keyspace-events", NotifyFlags, runtime;
    }
    derived {
        /// A password is set: connections start unauthenticated.
        requirepass_set: bool = |c: &Config| c.requirepass.is_some();
        /// `maxmemory-policy` is an LFU one: read on every key access.
        lfu_policy: bool = |c: &Config| c.maxmemory_policy.is_lfu();
    }
    process {
        loglevel: LogLevel = LogLevel::Notice => "loglevel", Enum::new(), runtime;
        /// jemalloc's background threads purge freed pages so that RSS
        /// follows `used_memory` down (after FLUSHALL, DEL of large
        /// values) instead of waiting for the next allocations.
        jemalloc_bg_thread: bool = true => "jemalloc-bg-thread", Bool, runtime;
    }
    config {
        bind: Vec<String> = vec!["127.0.0.1".into()] => "bind", LIST, startup + own;
        port: u16 = 6379 => "port", Int::new(0, 65535), startup;
        /// memcached protocol port (0: off). With `port 0` (an ephemeral
        /// RESP port, as tests use) it is ephemeral too.
        memcache_port: u16 = 0 => "memcache-port", Int::new(0, 65535), startup + own;
        /// Largest memcached item, memcached's header included (`-I`,
        /// within memcached's own bounds).
        memcache_max_item_size: usize = 1 << 20 => "memcache-max-item-size",
            Mem::<usize>::new(1024, 1 << 30).below_min_says("argument must be between 1kb and 1gb"), startup + own;
        /// memcached's `shutdown` command (its `-A`): refused unless set.
        memcache_enable_shutdown: bool = false => "memcache-enable-shutdown", Bool, startup;
        threads: usize = cores() => "threads" | "io-threads", Int::new(1, 1024), startup + own;
        /// Threads that load a snapshot at start (dump.rdb, an AOF's RDB
        /// base): one scans the file, all decode and store; 1 does it all
        /// on one thread.
        load_threads: usize = cores() => "load-threads", Int::new(1, 1024), startup + own;
        databases: usize = 16 => "databases", Int::new(1, i32::MAX as i64), startup;
        /// Shards per database (0: derived from the thread count).
        shards_per_db: usize = 0 => "shards-per-db", Int::new(0, 1 << 16), startup + own;
        requirepass: Option<Vec<u8>> = None => "requirepass", Password, runtime;
        tcp_backlog: i32 = 511 => "tcp-backlog", Int::new(0, i32::MAX as i64), startup;
        /// Log file (empty: stdout).
        logfile: String = String::new() => "logfile", Str, startup;
        /// Fork at start-up and go on in the background, detached from the
        /// terminal (not under `supervised` systemd or upstart).
        daemonize: bool = false => "daemonize", Bool, startup;
        /// `upstart`, `systemd`, `auto` (whichever the environment names) or
        /// `no`: tell the service manager when the server is ready.
        supervised: &'static str = "no" => "supervised", Choice(&["upstart", "systemd", "auto", "no"]), startup;
        /// The file the server's pid is written to at start and removed
        /// from at shutdown (empty: none, unless daemonized).
        pidfile: String = String::new() => "pidfile", Str, startup;
        /// Log lines go to the syslog daemon too, as `syslog-ident`, under
        /// `syslog-facility`.
        syslog_enabled: bool = false => "syslog-enabled", Bool, startup;
        syslog_ident: String = "redis".into() => "syslog-ident", Str, startup;
        syslog_facility: &'static str = "local0" => "syslog-facility",
            Choice(&["user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"]), startup;
        lazyfree_lazy_expire: bool = false => "lazyfree-lazy-expire", Bool, runtime, OTHER;
        lazyfree_lazy_server_del: bool = false => "lazyfree-lazy-server-del", Bool, runtime, OTHER;
        active_expire_effort: i64 = 1 => "active-expire-effort", Int::new(1, 10), runtime, OTHER;

        save: Vec<(u64, u64)> = vec![(3600, 1), (300, 100), (60, 10000)] => "save", Save, runtime;
        appendonly: bool = false => "appendonly", Bool, runtime;
        appendfsync: &'static str = "everysec" => "appendfsync", Choice(&["always", "everysec", "no"]), runtime;
        appendfilename: String = "appendonly.aof".into() => "appendfilename", Str, startup;
        appenddirname: String = "appendonlydir".into() => "appenddirname", Str, startup;
        dbfilename: String = "dump.rdb".into() => "dbfilename", Str, protected;
        /// Shown as the working directory until set (it differs per process).
        dir: Option<String> = None => "dir", Dir, protected + own;
        rdbcompression: bool = true => "rdbcompression", Bool, runtime;
        rdbchecksum: bool = true => "rdbchecksum", Bool, runtime;
        rdb_del_sync_files: bool = false => "rdb-del-sync-files", Bool, runtime, REPLICATION;
        rdb_save_incremental_fsync: bool = true => "rdb-save-incremental-fsync", Bool, runtime;
        stop_writes_on_bgsave_error: bool = true => "stop-writes-on-bgsave-error", Bool, runtime;
        no_appendfsync_on_rewrite: bool = false => "no-appendfsync-on-rewrite", Bool, runtime, PERSISTENCE;
        auto_aof_rewrite_percentage: i64 = 100 => "auto-aof-rewrite-percentage", Int::new(0, i32::MAX as i64), runtime;
        auto_aof_rewrite_min_size: u64 = 64 << 20 => "auto-aof-rewrite-min-size", Mem::new(0, MEM_MAX), runtime;
        aof_load_truncated: bool = true => "aof-load-truncated", Bool, runtime;
        aof_use_rdb_preamble: bool = true => "aof-use-rdb-preamble", Bool, runtime;
        aof_timestamp_enabled: bool = false => "aof-timestamp-enabled", Bool, runtime, PERSISTENCE;
        aof_rewrite_incremental_fsync: bool = true => "aof-rewrite-incremental-fsync", Bool, runtime;
        aof_disable_auto_gc: bool = false => "aof-disable-auto-gc", Bool, runtime;

        /// `host port`: the master this server replicates from start-up.
        replicaof: Vec<String> = Vec::new() => "replicaof" | "slaveof", HostPort, startup;
        masterauth: String = String::new() => "masterauth", Str, runtime;
        masteruser: String = String::new() => "masteruser", Str, runtime;
        replica_serve_stale_data: bool = true => "replica-serve-stale-data" | "slave-serve-stale-data", Bool, runtime;
        replica_read_only: bool = true => "replica-read-only" | "slave-read-only", Bool, runtime;
        replica_priority: i64 = 100 => "replica-priority" | "slave-priority", Int::new(0, i32::MAX as i64), runtime, REPLICATION;
        replica_lazy_flush: bool = false => "replica-lazy-flush" | "slave-lazy-flush", Bool, runtime, REPLICATION;
        replica_ignore_maxmemory: bool = true => "replica-ignore-maxmemory" | "slave-ignore-maxmemory", Bool, runtime, REPLICATION;
        repl_diskless_sync: bool = true => "repl-diskless-sync", Bool, runtime;
        repl_diskless_sync_delay: Duration = Duration::from_secs(5) => "repl-diskless-sync-delay", Secs::new(0, i32::MAX as i64), runtime;
        repl_diskless_sync_max_replicas: i64 = 0 => "repl-diskless-sync-max-replicas", Int::new(0, i32::MAX as i64), runtime, REPLICATION;
        repl_diskless_load: &'static str = "disabled" => "repl-diskless-load", Choice(&["disabled", "on-empty-db", "swapdb"]), runtime;
        repl_disable_tcp_nodelay: bool = false => "repl-disable-tcp-nodelay", Bool, runtime;
        repl_backlog_size: u64 = 1 << 20 => "repl-backlog-size", Mem::new(0, MEM_MAX), runtime;
        repl_backlog_ttl: Duration = Duration::from_secs(3600) => "repl-backlog-ttl", Secs::new(0, i32::MAX as i64), runtime;
        repl_timeout: Duration = Duration::from_secs(60) => "repl-timeout", Secs::new(1, i32::MAX as i64), runtime;
        repl_ping_replica_period: Duration = Duration::from_secs(10) => "repl-ping-replica-period" | "repl-ping-slave-period", Secs::new(1, i32::MAX as i64), runtime;
        min_replicas_to_write: i64 = 0 => "min-replicas-to-write" | "min-slaves-to-write", Int::new(0, i32::MAX as i64), runtime;
        min_replicas_max_lag: Duration = Duration::from_secs(10) => "min-replicas-max-lag" | "min-slaves-max-lag", Secs::new(0, i32::MAX as i64), runtime;
        replica_announce_ip: String = String::new() => "replica-announce-ip" | "slave-announce-ip", Str, runtime;
        replica_announce_port: i64 = 0 => "replica-announce-port" | "slave-announce-port", Int::new(0, 65535), runtime;
        replica_announced: bool = true => "replica-announced", Bool, runtime, REPLICATION;
        replica_ignore_disk_write_errors: bool = false => "replica-ignore-disk-write-errors", Bool, runtime, REPLICATION;

        /// Cluster mode: the node keeps `cluster-config-file` and talks to
        /// the others on the cluster bus (`tern_cluster`).
        cluster_enabled: bool = false => "cluster-enabled", Bool, startup;
        cluster_config_file: String = "nodes.conf".into() => "cluster-config-file", Str, startup;
        cluster_node_timeout: Duration = Duration::from_millis(15000) => "cluster-node-timeout", Millis::new(0, i64::MAX), runtime;
        /// The cluster bus's port (0: `port` + 10000).
        cluster_port: u16 = 0 => "cluster-port", Int::new(0, 65535), startup;
        cluster_announce_ip: String = String::new() => "cluster-announce-ip", Str, runtime;
        cluster_announce_hostname: String = String::new() => "cluster-announce-hostname", Str, runtime;
        cluster_announce_human_nodename: String = String::new() => "cluster-announce-human-nodename", Str, runtime;
        cluster_require_full_coverage: bool = true => "cluster-require-full-coverage", Bool, runtime;
        cluster_allow_reads_when_down: bool = false => "cluster-allow-reads-when-down", Bool, runtime;
        cluster_allow_replica_migration: bool = true => "cluster-allow-replica-migration", Bool, runtime;

        activedefrag: bool = false => "activedefrag", Bool, runtime, DEFRAG;
        active_defrag_cycle_min: i64 = 1 => "active-defrag-cycle-min", Int::new(1, 99), runtime, DEFRAG;
        active_defrag_cycle_max: i64 = 25 => "active-defrag-cycle-max", Int::new(1, 99), runtime, DEFRAG;
        active_defrag_ignore_bytes: u64 = 100 << 20 => "active-defrag-ignore-bytes", Mem::new(0, MEM_MAX), runtime, DEFRAG;
        active_defrag_threshold_lower: i64 = 10 => "active-defrag-threshold-lower", Int::new(0, 1000), runtime, DEFRAG;
        active_defrag_threshold_upper: i64 = 100 => "active-defrag-threshold-upper", Int::new(0, 1000), runtime, DEFRAG;
        active_defrag_max_scan_fields: i64 = 1000 => "active-defrag-max-scan-fields", Int::new(1, i64::MAX), runtime, DEFRAG;

        /// The percentiles INFO latencystats shows.
        latency_tracking_info_percentiles: Vec<f64> = vec![50.0, 99.0, 99.9] => "latency-tracking-info-percentiles", Percentiles, runtime;

        acl_pubsub_default: &'static str = "resetchannels" => "acl-pubsub-default", Choice(&["allchannels", "resetchannels"]), runtime;
        acllog_max_len: i64 = 128 => "acllog-max-len", Int::new(0, i64::MAX), runtime;
        aclfile: String = String::new() => "aclfile", Str, startup;
        /// TLS port for the RESP protocol (0: none). With `port 0` it is
        /// the only port, as in Redis.
        tls_port: u16 = 0 => "tls-port", Int::new(0, 65535), startup;
        /// TLS port for the memcached protocols (0: none); memcached's `-Z`
        /// serves TLS on its one port, Tern on a port of its own.
        memcache_tls_port: u16 = 0 => "memcache-tls-port", Int::new(0, 65535), startup + own;
        /// The server's certificate chain and key (PEM); a key encrypted as
        /// PKCS#8 takes `tls-key-file-pass`. CONFIG SET of any TLS
        /// directive reloads the files for new connections.
        tls_cert_file: String = String::new() => "tls-cert-file", Str, runtime;
        tls_key_file: String = String::new() => "tls-key-file", Str, runtime;
        tls_key_file_pass: String = String::new() => "tls-key-file-pass", Str, runtime;
        /// The CAs client certificates are checked against: a PEM file,
        /// and/or a directory of PEM files.
        tls_ca_cert_file: String = String::new() => "tls-ca-cert-file", Str, runtime;
        tls_ca_cert_dir: String = String::new() => "tls-ca-cert-dir", Str, runtime;
        tls_auth_clients: TlsAuthClients = TlsAuthClients::Yes => "tls-auth-clients", Enum::new(), runtime;
        tls_protocols: String = String::new() => "tls-protocols", TlsList(check_protocols), runtime;
        tls_ciphersuites: String = String::new() => "tls-ciphersuites", TlsList(check_ciphersuites), runtime;
        tls_ciphers: String = String::new() => "tls-ciphers", TlsList(check_ciphers), runtime;
        tls_prefer_server_ciphers: bool = false => "tls-prefer-server-ciphers", Bool, runtime;
        tls_session_caching: bool = true => "tls-session-caching", Bool, runtime;
        tls_session_cache_size: usize = 20 * 1024 => "tls-session-cache-size", Int::new(0, i32::MAX as i64), runtime;
        tls_session_cache_timeout: Duration = Duration::from_secs(300) => "tls-session-cache-timeout", Secs::new(0, i32::MAX as i64), runtime;
        /// Refused when set: Tern's replication links are plaintext, and
        /// taking `yes` would claim they are encrypted.
        tls_replication: bool = false => "tls-replication", Off(Bool, "Tern does not replicate over TLS in this version: its replication links would be plaintext"), runtime;
        tls_cluster: bool = false => "tls-cluster", Off(Bool, "Tern does not encrypt its cluster bus in this version: taking `yes` would claim it is encrypted"), runtime;
        tls_dh_params_file: String = String::new() => "tls-dh-params-file", Str, runtime, TLS_DH;
        tls_client_cert_file: String = String::new() => "tls-client-cert-file", Str, runtime, TLS_CLIENT;
        tls_client_key_file: String = String::new() => "tls-client-key-file", Str, runtime, TLS_CLIENT;
        tls_client_key_file_pass: String = String::new() => "tls-client-key-file-pass", Str, runtime, TLS_CLIENT;
        max_new_tls_connections_per_cycle: i64 = 1 => "max-new-tls-connections-per-cycle", Int::new(1, 1000), runtime, TLS_CYCLE;
        unixsocket: String = String::new() => "unixsocket", Str, startup, UNIXSOCKET;
        unixsocketperm: String = "0".into() => "unixsocketperm", Str, startup, UNIXSOCKET;

        always_show_logo: bool = false => "always-show-logo", Bool, startup, OTHER;
        set_proc_title: bool = true => "set-proc-title", Bool, startup, OTHER;
        proc_title_template: String = "{title} {listen-addr} {server-mode}".into() => "proc-title-template", Str, runtime, OTHER;
        activerehashing: bool = true => "activerehashing", Bool, runtime, OTHER;
        propagation_error_behavior: &'static str = "ignore" => "propagation-error-behavior", Choice(&["ignore", "panic", "panic-on-replicas"]), runtime, OTHER;
        ignore_warnings: String = String::new() => "ignore-warnings", Str, runtime, OTHER;
        bind_source_addr: String = String::new() => "bind-source-addr", Str, runtime, OTHER;
        dynamic_hz: bool = true => "dynamic-hz", Bool, runtime, OTHER;
        io_threads_do_reads: bool = false => "io-threads-do-reads", Bool, startup, OTHER;
        busy_reply_threshold: Duration = Duration::from_millis(5000) => "busy-reply-threshold" | "lua-time-limit", Millis::new(0, i64::MAX), runtime;
        oom_score_adj: &'static str = "no" => "oom-score-adj", Choice(&["no", "yes", "relative", "absolute"]), runtime, OTHER;
        oom_score_adj_values: Vec<String> = words(&["0", "200", "800"]) => "oom-score-adj-values", WORDS, runtime, OTHER;
        disable_thp: bool = true => "disable-thp", Bool, runtime, OTHER;
        /// Who may run DEBUG (dispatch checks it).
        enable_debug_command: &'static str = "no" => "enable-debug-command", Choice(&["no", "yes", "local"]), startup;
        enable_module_command: &'static str = "no" => "enable-module-command", Choice(&["no", "yes", "local"]), startup, OTHER;
        /// Whether CONFIG SET may change `dir` and `dbfilename`.
        enable_protected_configs: &'static str = "no" => "enable-protected-configs", Choice(&["no", "yes", "local"]), startup;
        crash_log_enabled: bool = true => "crash-log-enabled", Bool, runtime, OTHER;
        crash_memcheck_enabled: bool = true => "crash-memcheck-enabled", Bool, runtime, OTHER;
        sanitize_dump_payload: &'static str = "no" => "sanitize-dump-payload", Choice(&["no", "yes", "clients"]), runtime, OTHER;
        shutdown_timeout: Duration = Duration::from_secs(10) => "shutdown-timeout", Secs::new(0, i32::MAX as i64), runtime, OTHER;
        shutdown_on_sigint: Vec<String> = words(&["default"]) => "shutdown-on-sigint", WORDS, runtime, OTHER;
        shutdown_on_sigterm: Vec<String> = words(&["default"]) => "shutdown-on-sigterm", WORDS, runtime, OTHER;
    }
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

impl Settings {
    /// The LFU tuning when the policy is an LFU one (read on every key
    /// access).
    #[inline]
    pub fn lfu(&self) -> Option<tern_store::Lfu> {
        self.lfu_policy().then(|| tern_store::Lfu { log_factor: self.lfu_log_factor(), decay_minutes: self.lfu_decay_time() })
    }

    /// How eviction runs under the current policy and its tuning.
    pub fn evict_config(&self) -> tern_store::EvictConfig {
        tern_store::EvictConfig {
            policy: self.maxmemory_policy().store_policy(),
            samples: self.maxmemory_samples(),
            lfu_decay_minutes: self.lfu_decay_time(),
            lazy: self.lazyfree_lazy_eviction(),
            overlap: self.prefetch_batch_max_size() > 0,
        }
    }
}
