//! Tern's persistence and replication: what outlives the process and what
//! copies it elsewhere, on threads of their own beside the workers.
//!
//! ```text
//!  rdb            SAVE, the saver thread (BGSAVE, the `save` schedule), start-up's load;
//!                 the point-in-time snapshot written as an RDB, for all of the below
//!  aof            the AOF writer thread (and the replication stream it encodes),
//!    rewrite      BGREWRITEAOF: a new base from a snapshot, new increments from its instant,
//!    load         start-up's replay of the manifest's files
//!  repl::master   SYNC/PSYNC handed over by a worker: full or partial resynchronisation,
//!                 then the stream; the cron's pings, timeouts and FAILOVER
//!  repl::replica  REPLICAOF's link to a master: handshake, its RDB, its stream applied
//! ```
//!
//! It sits above `tern-commands`: the AOF's loader and a replica's link
//! run commands through its table, and every part reads the shared state
//! (`tern_commands::server::Server`). The state the commands see — the
//! AOF's feed and flags (`tern_commands::aofstate`), the replication
//! stream, backlog and replicas (`tern_commands::repl`), the saves' counts
//! and BGSAVE's request (`tern_commands::persist`) — stays there; what the
//! commands ask of this crate (SAVE, CONFIG SET appendonly, REPLICAOF NO
//! ONE, ...) goes through [`tern_commands::server::Durability`], which
//! [`install`] sets.
//!
//! # Layering
//!
//! Modules use each other one way, top to bottom (the test `layering`
//! checks the code against this table):
//!
//! ```text
//!  repl  ─► aof rdb
//!  aof   ─► rdb
//!  rdb   ─► -
//! ```
//!
//! A replica's link applies its master's stream with the AOF loader's
//! runner (`aof::load::Runner`) and hands its records to the writer; the
//! writer, whose rounds move the stream and the fsynced offset, wakes the
//! WAITs and WAITAOFs they satisfy (`aof::wake_waiters`), as a replica's
//! ACK does.
#![forbid(unsafe_code)]

pub mod aof;
pub mod rdb;
pub mod repl;

use tern_commands::server::{Durability, Server};
use tern_config::Config;
use tern_store::LockSet;

/// This crate's side of the commands (see [`Durability`]).
struct Hooks;

impl Durability for Hooks {
    fn save(&self, srv: &Server, locks: &mut LockSet<'_>) -> Result<u64, String> {
        rdb::save(srv, locks)
    }

    fn load_rdb(
        &self,
        srv: &Server,
        r: &mut dyn std::io::Read,
        size: Option<u64>,
        now: u64,
        keep_expired: bool,
        allow_dup: bool,
    ) -> Result<(tern_store::rdb::LoadInfo, u64, u64), String> {
        rdb::load_rdb_keeping(srv, r, size, now, keep_expired, allow_dup).map_err(|e| e.to_string())
    }

    fn follow_config(&self, srv: &Server, c: &Config) {
        aof::follow_config(srv, c);
    }

    fn promote(&self, srv: &Server) {
        repl::master::promote(srv);
    }

    fn abort_failover(&self, srv: &Server, why: &str) {
        repl::master::abort_failover(srv, why);
    }
}

/// Gives `srv`'s commands this crate (see [`Durability`]); the process
/// calls it once, before any command runs.
pub fn install(srv: &Server) {
    let _ = srv.durability.set(Box::new(Hooks));
}

#[cfg(test)]
mod layering {
    #[test]
    fn modules_use_each_other_as_the_layering_says() {
        tern_layering::check(env!("CARGO_MANIFEST_DIR"), include_str!("lib.rs"), ("repl", "aof"));
    }
}
