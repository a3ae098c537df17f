//! RESP2/RESP3 request parsing and reply encoding, with no I/O.
//!
//! ```text
//!  bytes ──parse──► Frame (argument ranges into the read buffer) ──► command
//!  reply ◄─encode── Encoder (appends RESP2 or RESP3 to a reused Vec<u8>)
//! ```
//!
//! Goals: arguments are borrowed ranges of the read buffer (no allocation per
//! argument); a partial request is not an error and parsing resumes where it
//! stopped; every protocol error is Redis's, byte for byte; no allocation is
//! sized from a length the client claims before its bytes arrive.
//!
//! Replies can also be decoded ([`decode`]): a summary of each reply (kind,
//! length, nulls, errors) for the benchmark client, and the reply with its
//! values ([`decode::decode_value`]) for tern-client, from the same walk.
#![forbid(unsafe_code)]

pub mod decode;
pub mod encode;
mod grisu;
pub mod number;
pub mod parse;

pub use encode::{format_double, format_g17, DoubleText, Encoder};
pub use number::{parse_f64, parse_i64, parse_u64, string2d, strtod};
pub use parse::{Args, Frame, Limits, ParseError};
