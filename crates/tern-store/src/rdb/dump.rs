//! DUMP and RESTORE payloads: one value as an RDB file holds it, then the
//! RDB version and the CRC64 of all that precedes.
//!
//! ```text
//!  | type | value ... | version u16 LE | crc64 LE |
//! ```

use crate::value::ValueRef;
use crate::value::Value;

use super::decode::{self, Src};
use super::encode::put_value;
use super::{crc64, Limits, RdbError, Style};

/// The version DUMP writes and the newest RESTORE takes: Redis 8.4's.
pub const DUMP_RDB_VERSION: u16 = 14;

/// The DUMP payload of `v`, in the encoding Redis 8.4 gives the same
/// value.
pub fn dump(v: ValueRef<'_>, compress: bool) -> Vec<u8> {
    let mut out = Vec::new();
    put_value(&mut out, v, Style::Redis, compress);
    put_footer(&mut out, DUMP_RDB_VERSION);
    out
}

/// Ends the payload `out` holds (a type byte and a value): `version`,
/// then the CRC64 of all before it.
pub fn put_footer(out: &mut Vec<u8>, version: u16) {
    out.extend_from_slice(&version.to_le_bytes());
    let crc = crc64::crc64(out);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// The value a DUMP payload holds, after its footer's version and
/// checksum are checked and every byte is accounted for.
pub fn restore(payload: &[u8], lim: &Limits) -> Result<Value, RdbError> {
    let n = payload.len();
    // No room for the footer: Redis answers as for a wrong one.
    if n < 10 {
        return Err(RdbError::Checksum { stored: 0, computed: 0 });
    }
    let (body, footer) = payload.split_at(n - 10);
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    if version > DUMP_RDB_VERSION {
        return Err(RdbError::Version(version));
    }
    let mut c = [0u8; 8];
    c.copy_from_slice(&footer[2..]);
    let (stored, computed) = (u64::from_le_bytes(c), crc64::crc64(&payload[..n - 8]));
    if stored != computed {
        return Err(RdbError::Checksum { stored, computed });
    }
    let mut src = Src::new(body);
    let t = src.byte()?;
    let v = decode::value(&mut src, t, lim)?;
    if src.pos != body.len() as u64 {
        return Err(RdbError::Corrupt("bytes after the value"));
    }
    Ok(v)
}

/// FUNCTION DUMP's payload: each library's code as an RDB FUNCTION2
/// record, then the footer.
pub fn dump_functions<'a>(codes: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for code in codes {
        out.push(super::opcodes::FUNCTION2);
        super::encode::put_string(&mut out, code, false);
    }
    put_footer(&mut out, DUMP_RDB_VERSION);
    out
}

/// Why a FUNCTION RESTORE payload was refused, in Redis's words.
#[derive(Debug, PartialEq, Eq)]
pub enum FunctionsPayload {
    /// The footer's version or checksum (replied as such).
    Footer,
    /// Anything else: the text Redis gives it.
    Bad(&'static str),
}

/// The libraries' codes a FUNCTION DUMP payload holds (Redis's
/// functionRestoreCommand).
pub fn restore_functions(payload: &[u8]) -> Result<Vec<Vec<u8>>, FunctionsPayload> {
    let n = payload.len();
    if n < 10 {
        return Err(FunctionsPayload::Footer);
    }
    let footer = &payload[n - 10..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    let mut c = [0u8; 8];
    c.copy_from_slice(&footer[2..]);
    if version > DUMP_RDB_VERSION || u64::from_le_bytes(c) != crc64::crc64(&payload[..n - 8]) {
        return Err(FunctionsPayload::Footer);
    }
    // Read as Redis reads it: records start before the footer, but one
    // may run into it.
    let mut src = Src::new(payload);
    let mut codes = Vec::new();
    while src.pos < (n - 10) as u64 {
        let t = src.byte().map_err(|_| FunctionsPayload::Bad("can not read data type"))?;
        match t {
            super::opcodes::FUNCTION_PRE_GA => return Err(FunctionsPayload::Bad("Pre-GA function format not supported")),
            super::opcodes::FUNCTION2 => {}
            _ => return Err(FunctionsPayload::Bad("given type is not a function")),
        }
        codes.push(src.string().map_err(|_| FunctionsPayload::Bad("failed loading the given functions payload"))?);
    }
    Ok(codes)
}
