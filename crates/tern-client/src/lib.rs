//! Tern's client core: connection pools per server, batched multi-gets
//! over RESP and the memcached meta protocol, keys spread over servers by
//! a ketama-compatible ring, and servers that fail marked down.
//!
//! ```text
//!  RespClient / MetaClient        commands, multi-gets, pipelines
//!     │ split (key → server, order kept) / merge
//!  Cluster ── Ring                which server a key lives on
//!     │ fan_out: write every server's part, then read each
//!  Server × N ── pool of Conn     timeouts, TCP_NODELAY, mark-down + backoff
//!     │
//!  tern-resp / tern-memcache      the encoders and decoders, shared with the server
//! ```
//!
//! Goals: a multi-get of N keys is one write and one pass over the replies
//! per server (RESP `MGET`; meta `mg … q k O<i>` closed by `mn`, so misses
//! cost nothing); every server of a multi-server request works at once;
//! a connection goes back to its pool only with nothing left unread.
//! Blocking I/O on the caller's thread: a Python binding releases the GIL
//! around each call and many threads share one client.
//!
//! Non-goals: the Redis Cluster protocol (MOVED/ASK), TLS, pub/sub.
#![forbid(unsafe_code)]

pub mod conn;
pub mod error;
pub mod meta;
pub mod pool;
pub mod resp;
pub mod ring;
pub mod split;

pub use error::{Error, Result};
pub use meta::{GetOpts, Item, MetaClient, SetMode, SetOpts, Stored};
pub use pool::{FailurePolicy, Handshake, Options};
pub use resp::RespClient;
pub use ring::{Hashing, Ring};
pub use tern_resp::decode::Value;
