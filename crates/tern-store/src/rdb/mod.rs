//! Redis's RDB format: the value encodings DUMP/RESTORE carry, and whole
//! files (`dump.rdb`) written by [`RdbWriter`] and read by [`load`].
//!
//! ```text
//!  file:    "REDIS" vvvv | AUX k v ... | SELECTDB db RESIZEDB n e | [EXPIRETIME_MS t] type key value ... | EOF | crc64 LE
//!  DUMP:    type value | version u16 LE | crc64 LE
//!  lengths: 00xxxxxx · 01xxxxxx xxxxxxxx · 0x80 u32 BE · 0x81 u64 BE · 11xxxxxx: INT8/16/32 or LZF string
//! ```
//!
//! | concern | module |
//! |---|---|
//! | Redis's CRC64 and patching it | [`crc64`] |
//! | listpack and intset bytes (and reading ziplists) | [`listpack`], [`intset`], `ziplist` |
//! | lengths, strings, each type | `encode`, `decode` |
//! | streams: nodes, counters, consumer groups | `stream` |
//! | the file: header, AUX, databases, EOF, checksum; each key's record found without decoding it, and decoded from memory | `file`, `scan` |
//! | DUMP/RESTORE payloads | `dump` |
//! | a file into a keyspace, inserting on several threads | `fill` |
//!
//! Goals: Redis's bytes (a DUMP equals Redis 8.4's for the same value in
//! the same encoding, LZF strings included: [`crate::lzf::compress_as_liblzf`]); files that Redis 7.0
//! loads whenever the data allows (the lowest version that holds it);
//! loading whatever Redis 7.0 and 8.4 write for strings, lists, sets,
//! sorted sets, hashes (field TTLs included) and streams (consumer
//! groups included, and Redis 6.2's streams); refusing corrupt input with
//! an error, never a panic or an allocation sized by a claimed length.
//! The ziplist types of Redis before 7.0 are read too (`ziplist`).
//! Non-goals: modules, zipmap hashes (Redis 2.x), both refused as
//! unsupported.

pub mod crc64;
mod decode;
mod dump;
mod encode;
mod file;
mod fill;
mod scan;
mod stream;
pub mod intset;
pub mod listpack;
#[doc(hidden)]
pub mod testing;
mod ziplist;

use crate::hash::HashLimits;
use crate::list::ListLimits;
use crate::set::SetLimits;
use crate::zset::ZsetLimits;

pub use decode::str_value;
pub use dump::{dump, dump_functions, put_footer, restore, restore_functions, FunctionsPayload, DUMP_RDB_VERSION};
pub use file::{load, LoadInfo, RdbOptions, RdbWriter, ReplPosition, MC_AUX};
pub use fill::{load_into, Fill};

/// RDB type bytes (Redis's `RDB_TYPE_*`).
pub mod types {
    pub const STRING: u8 = 0;
    pub const LIST: u8 = 1;
    pub const SET: u8 = 2;
    pub const ZSET: u8 = 3;
    pub const HASH: u8 = 4;
    pub const ZSET_2: u8 = 5;
    pub const LIST_ZIPLIST: u8 = 10;
    pub const SET_INTSET: u8 = 11;
    pub const ZSET_ZIPLIST: u8 = 12;
    pub const HASH_ZIPLIST: u8 = 13;
    pub const LIST_QUICKLIST: u8 = 14;
    pub const STREAM_LISTPACKS: u8 = 15;
    pub const HASH_LISTPACK: u8 = 16;
    pub const ZSET_LISTPACK: u8 = 17;
    pub const LIST_QUICKLIST_2: u8 = 18;
    pub const STREAM_LISTPACKS_2: u8 = 19;
    pub const SET_LISTPACK: u8 = 20;
    pub const STREAM_LISTPACKS_3: u8 = 21;
    pub const HASH_METADATA: u8 = 24;
    pub const HASH_LISTPACK_EX: u8 = 25;
}

/// Top-level opcodes (Redis's `RDB_OPCODE_*`).
pub mod opcodes {
    pub const SLOT_INFO: u8 = 244;
    pub const FUNCTION2: u8 = 245;
    pub const FUNCTION_PRE_GA: u8 = 246;
    pub const MODULE_AUX: u8 = 247;
    pub const IDLE: u8 = 248;
    pub const FREQ: u8 = 249;
    pub const AUX: u8 = 250;
    pub const RESIZEDB: u8 = 251;
    pub const EXPIRETIME_MS: u8 = 252;
    pub const EXPIRETIME: u8 = 253;
    pub const SELECTDB: u8 = 254;
    pub const EOF: u8 = 255;
}

/// Redis 7.0's version: every type but SET_LISTPACK, STREAM_LISTPACKS_3
/// and the field-TTL hashes.
pub const RDB_VERSION_MIN: u16 = 10;
/// Redis 7.2 added SET_LISTPACK and STREAM_LISTPACKS_3 (consumers' active
/// times).
pub const RDB_VERSION_SET_LISTPACK: u16 = 11;
/// Redis 7.4 added hash field TTLs (HASH_METADATA, HASH_LISTPACK_EX).
pub const RDB_VERSION_HASH_TTL: u16 = 12;
/// The newest version read (Redis 8.4's).
pub const RDB_VERSION_MAX: u16 = 14;

/// Which encodings to prefer where RDB has two for the same value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Redis 8.4's choice (DUMP): a small set as SET_LISTPACK.
    Redis,
    /// The choice the oldest Redis reads (files): a small set as SET.
    Oldest,
}

/// The conversion thresholds decoded values are built for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub hash: HashLimits,
    pub list: ListLimits,
    pub set: SetLimits,
    pub zset: ZsetLimits,
}

/// Why RDB input was refused.
#[derive(Debug)]
pub enum RdbError {
    Io(std::io::Error),
    /// The input ended inside a record.
    Truncated,
    /// Bytes that are not RDB, with what was wrong.
    Corrupt(&'static str),
    /// Not `REDIS` and four digits.
    BadHeader,
    /// A version newer than this reader knows.
    Version(u16),
    /// The checksum at the end differs from the bytes' sum.
    Checksum { stored: u64, computed: u64 },
    /// A value type Tern does not hold (modules, zipmaps).
    UnsupportedType(u8),
    /// A top-level opcode Tern does not read (module AUX data).
    UnsupportedOpcode(u8),
    /// The load callback refused an entry.
    Rejected(String),
}

impl std::fmt::Display for RdbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RdbError::Io(e) => write!(f, "I/O error: {e}"),
            RdbError::Truncated => f.write_str("unexpected end of RDB data"),
            RdbError::Corrupt(w) => write!(f, "corrupt RDB data: {w}"),
            RdbError::BadHeader => f.write_str("wrong signature (not an RDB file)"),
            RdbError::Version(v) => write!(f, "can't handle RDB format version {v}"),
            RdbError::Checksum { stored, computed } => {
                write!(f, "wrong RDB checksum: expected {stored:#018x}, got {computed:#018x}")
            }
            RdbError::UnsupportedType(t) => write!(f, "unsupported RDB value type {t}"),
            RdbError::UnsupportedOpcode(t) => write!(f, "unsupported RDB opcode {t}"),
            RdbError::Rejected(w) => f.write_str(w),
        }
    }
}

impl std::error::Error for RdbError {}

impl From<std::io::Error> for RdbError {
    fn from(e: std::io::Error) -> Self {
        RdbError::Io(e)
    }
}

#[cfg(test)]
mod tests;
