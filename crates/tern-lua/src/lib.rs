//! Tern's Lua: the language of EVAL scripts and FUNCTION libraries.
//!
//! A Lua 5.1 state (mlua over lua-src's Lua 5.1.5, the version Redis
//! embeds), set up as Redis 7+ sets up its scripting engine: the libraries
//! Redis loads (`string`, `table`, `math`, `os.clock`, and `cjson`,
//! `cmsgpack`, `bit`, `struct`, written here in Rust: [`libs`]), and the
//! sandbox. Nothing here knows about the keyspace: the server side of
//! scripting (the `redis` table, conversions, the script cache) lives in
//! tern-commands' `script` module.

// Only the bridge (`redis.call` on Lua's C API) is unsafe.
#![deny(unsafe_code)]

pub use mlua;

pub mod bridge;
pub mod libs;
mod rand48;
pub mod sandbox;

pub use bridge::{Host, Pass, Request, Texts};
pub use sandbox::{raise, Outcome, Raised, Sandbox};
