//! The memcached text and meta protocols (memcached 1.6's `protocol.txt`),
//! with no I/O and no knowledge of the store: a resumable, borrowing
//! request parser and the reply encoders for the server, request encoders
//! plus a response decoder for clients (tern-bench).
//!
//! ```text
//!  server:  bytes ──Parser::parse──► Request (slices of the read buffer) ──► execute
//!           reply::{status, value, MetaLine, stat, ...} + errors::* ──► bytes ──► client
//!  client:  encode::{get, set, mg, ms, mn, ...} ──► bytes ──► server
//!           bytes ──decode::Response::parse──► Response (slices of the read buffer)
//! ```
//!
//! Goals: the errors memcached 1.6 gives, byte for byte, in the same order
//! it checks them; keys and data are borrowed from the read buffer (a
//! base64 key is the only thing decoded into its own allocation); a
//! partial request is not an error; no allocation is sized from a length
//! the client claims; an item over the size limit is skipped as its bytes
//! arrive, never buffered whole.
//! Non-goals: the binary protocol (deprecated by memcached itself).
#![forbid(unsafe_code)]

pub mod base64;
pub mod decode;
pub mod encode;
pub mod errors;
pub mod number;
pub mod parse;
pub mod reply;
pub mod slabs;

pub use decode::Response;
pub use parse::{Keys, Limits, Meta, MetaCmd, MetaFlags, Parser, Request, StoreCmd};

/// The memcached release whose behaviour is followed (`version`, `stats`).
pub const MEMCACHED_VERSION: &str = "1.6.18";
/// Longest key memcached accepts (`KEY_MAX_LENGTH`).
pub const KEY_MAX: usize = 250;
/// Longest meta opaque token, its `O` included (`MFLAG_MAX_OPAQUE_LENGTH`).
pub const OPAQUE_MAX: usize = 32;
/// A request line without a newline longer than this closes the
/// connection, unless it is a `get`/`gets` (multi-gets are unbounded).
pub const LINE_MAX: usize = 2048;
/// Relative expiration times go up to 30 days; larger ones are Unix times.
pub const REALTIME_MAXDELTA: i64 = 60 * 60 * 24 * 30;
