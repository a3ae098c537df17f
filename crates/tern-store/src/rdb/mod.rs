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
//! | listpack and intset bytes (and reading ziplists) | [`crate::listpack`] (below streams, re-exported as [`listpack`]), [`intset`], `ziplist` |
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
/// The listpack codec at its old path: it is [`crate::listpack`]'s, below
/// the streams that keep their nodes as listpacks.
pub mod listpack {
    pub use crate::listpack::{collect, decode, element, first, int_at, last, next, prev, replace_int, LpBuilder, LpVal, HEADER};
}
#[doc(hidden)]
pub mod testing;
mod ziplist;

use crate::hash::HashLimits;
use crate::list::ListLimits;
use crate::set::SetLimits;
use crate::zset::ZsetLimits;

pub use crate::listpack::RdbError;
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

#[cfg(test)]
mod tests;
