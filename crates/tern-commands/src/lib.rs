//! Tern's commands: everything that executes a request against the
//! `tern-store` keyspace, for both protocols, without owning a socket.
//! The process (`tern-server`: listeners, workers, connections, the timer)
//! and persistence and replication (`tern-persist`: the RDB and AOF
//! threads, the replication links, reached through
//! [`server::Durability`]) call in from above; configuration and logging (`tern-config`) sit
//! below, beside the codecs (`tern-resp`, `tern-memcache`).
//!
//! ```text
//!  Engine (engine.rs) = the shared state (server.rs: keyspace, settings, clients, stats)
//!                     + the command table (cmd/table.rs), side by side
//!  RESP request ─► prefetch::Plan (a pipeline's keys located and staged ahead)
//!               ─► cmd::dispatch ─► key specs (cmd/keyspec.rs) locate and lock the keys
//!               ─► the family's handler (cmd/strings.rs, cmd/keys.rs, ...) with a cmd::Ctx
//!  memcached request ─► memcache::Exec (text, meta, stats)
//!  every handler writes through tern-store's one write path, which tells
//!  WATCHers, accounts memory and records the change's effect
//! ```
//!
//! # Layering
//!
//! Modules use each other one way, top to bottom. Each line names the
//! modules of this crate that one may use (`-`: none); the crate root's
//! version constants are open to all. `cmd` counts as one module: its
//! dispatch (`mod.rs`), table, key specs, key staging and families call
//! each other. The test `layering` checks the code against this table and
//! the table for cycles, so a new module needs a line here.
//!
//! ```text
//!  engine    ─► cmd script server
//!  script    ─► cmd server client scriptcache errors outbuf stats persist glob maxmemory
//!  prefetch  ─► cmd server client
//!  memcache  ─► server client acl errors outbuf stats maxmemory messaging sysinfo
//!  cmd       ─► server client acl outbuf stats errors glob sysinfo fdlimit cmdlog latency monitor maxmemory persist aofstate scriptcache messaging repl
//!  persist   ─► server
//!  maxmemory ─► server sysinfo
//!  server    ─► client acl stats cmdlog latency monitor sysinfo aofstate scriptcache messaging repl
//!  aofstate  ─► -
//!  repl      ─► -
//!  client    ─► acl monitor messaging repl
//!  messaging ─► glob outbuf
//!  acl       ─► glob
//!  outbuf    ─► -
//!  scriptcache ─► -
//!  stats     ─► -
//!  cmdlog    ─► -
//!  latency   ─► -
//!  monitor   ─► -
//!  errors    ─► -
//!  glob      ─► -
//!  sysinfo   ─► -
//!  fdlimit   ─► -
//! ```
//!
//! The shared state knows no command: the table sits beside it in
//! [`engine::Engine`], and a command gets both through `cmd::Ctx`. The
//! commands stage their own keys (`cmd/stage.rs`); the pipeline planner
//! (`prefetch.rs`) looks commands up and hands `cmd::call` their located
//! keys (`cmd::Planned`). The memcached executor sits beside `cmd`, not
//! on it.
#![forbid(unsafe_code)]

pub mod acl;
pub mod aofstate;
pub mod client;
pub mod cmd;
pub mod cmdlog;
pub mod engine;
pub mod errors;
pub mod fdlimit;
pub mod glob;
pub mod latency;
pub mod memcache;
pub mod monitor;
pub mod maxmemory;
pub mod outbuf;
pub mod persist;
pub mod messaging;
pub mod prefetch;
pub mod repl;
pub mod script;
pub mod scriptcache;
pub mod server;
pub mod stats;
pub mod sysinfo;

/// The Redis version whose behaviour Tern matches (INFO `redis_version`).
pub const REDIS_VERSION: &str = "8.4.0";
/// [`REDIS_VERSION`] as Redis's `REDIS_VERSION_NUM` (`redis.REDIS_VERSION_NUM`).
pub const REDIS_VERSION_NUM: u32 = 0x0008_0400;
pub const TERN_VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(test)]
mod layering {
    /// Every module has a line in the table, every use in the code is one
    /// its line allows, and neither the table nor the code has a cycle.
    #[test]
    fn modules_use_each_other_as_the_layering_says() {
        // The scan sees what is there: dispatch's handlers reach the shared state.
        tern_layering::check(env!("CARGO_MANIFEST_DIR"), include_str!("lib.rs"), ("cmd", "server"));
    }
}
