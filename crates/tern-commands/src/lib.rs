//! Tern's commands: everything that executes a request against the
//! `tern-store` keyspace, for both protocols, without owning a socket.
#![forbid(unsafe_code)]

pub mod client;
pub mod cmd;
pub mod errors;
pub mod fdlimit;
pub mod glob;
pub mod memcache;
pub mod outbuf;
pub mod prefetch;
pub mod server;
pub mod stats;
pub mod sysinfo;

/// The Redis version whose behaviour Tern matches (INFO `redis_version`).
pub const REDIS_VERSION: &str = "7.4.0";
pub const TERN_VERSION: &str = env!("CARGO_PKG_VERSION");
