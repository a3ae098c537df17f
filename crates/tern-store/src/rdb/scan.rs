//! Reading a whole file: one pass that only finds where each key's record
//! ends ([`scan`]), and the decoding of a record from memory
//! ([`Record::parse`]), which may run on another thread.
//!
//! ```text
//!  reader ──► 1 MiB chunks ──► scan: opcode, lengths, skip ──► Batch (chunk, byte range of whole records, db)
//!                 │                 header, AUX, SELECTDB,          └─► Sink::batch (decode + store, any thread)
//!                 └─ CRC64          RESIZEDB (Sink::resize), EOF
//! ```
//!
//! The scan reads a record's type byte and lengths and skips its bytes:
//! no LZF, no allocation, no value built, so it costs a small part of a
//! decode, and the records it hands out can be decoded on every core.
//! A record is a key with what precedes it in the file and belongs to it:
//! its deadline (EXPIRETIME_MS, EXPIRETIME), its access data (IDLE, FREQ,
//! read and dropped) and Tern's memcached AUX field ([`MC_AUX`]); anything
//! else between those and their key is refused as corrupt (Redis never
//! writes it). The checksum covers exactly the bytes up to EOF, summed by
//! the scan as it goes, and is checked before [`scan`] returns: a caller
//! serves nothing until then.

use std::io::Read;
use std::sync::Arc;

use crate::value::{McStr, StrValue, Value};

use super::decode::{self, Src};
use super::file::{LoadInfo, MC_AUX};
use super::{crc64, opcodes, types, Limits, RdbError, RDB_VERSION_MAX};

/// Bytes read from the input at a time.
const CHUNK: usize = 1 << 20;
/// Chunks kept for reuse: more than the batches the threads hold at once
/// span, at the default queue depths.
const SPARE: usize = 16;
/// A batch is cut once its records reach this many bytes (about 400 keys
/// of 100-byte values): big enough that handing it over costs little per
/// key, small enough that the threads stay busy to the end.
const BATCH_BYTES: usize = 64 * 1024;
/// LZF expands at most 264 bytes out of 2 in: a claimed size beyond this
/// many times the compressed one is corrupt.
const LZF_MAX_RATIO: u64 = 132;

/// Whole key records of database `db`: `chunk[start..end]`.
pub struct Batch {
    pub chunk: Arc<Vec<u8>>,
    pub start: usize,
    pub end: usize,
    pub db: u32,
}

impl Batch {
    pub fn bytes(&self) -> &[u8] {
        &self.chunk[self.start..self.end]
    }
}

/// What [`scan`] hands its findings to.
pub trait Sink {
    /// Database `db` starts and its RESIZEDB says `keys` keys follow
    /// (a hint from the file, not checked).
    fn resize(&mut self, db: u32, keys: u64);
    /// Records in file order; a sink may decode them on another thread.
    fn batch(&mut self, b: Batch) -> Result<(), RdbError>;
}

/// Why a read from memory stopped: the bytes end (more input may finish
/// the record), or they are wrong.
enum Halt {
    More,
    Bad(RdbError),
}

impl From<RdbError> for Halt {
    fn from(e: RdbError) -> Self {
        Halt::Bad(e)
    }
}

/// A length, or the special string encoding in its place.
enum Len {
    Plain(u64),
    Enc(u8),
}

/// A string as a record holds it.
#[derive(Clone, Copy)]
pub enum Piece<'a> {
    /// Bytes of the record itself.
    Bytes(&'a [u8]),
    /// An integer-encoded string.
    Int(i64),
    /// Decompressed into the scratch buffer given.
    Scratch,
}

/// A cursor over bytes in memory.
struct Cur<'a> {
    b: &'a [u8],
    p: usize,
}

impl<'a> Cur<'a> {
    fn byte(&mut self) -> Result<u8, Halt> {
        let x = *self.b.get(self.p).ok_or(Halt::More)?;
        self.p += 1;
        Ok(x)
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], Halt> {
        let left = self.b.len() - self.p;
        if n > left as u64 {
            return Err(Halt::More);
        }
        let s = &self.b[self.p..self.p + n as usize];
        self.p += n as usize;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Halt> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N as u64)?);
        Ok(a)
    }

    fn len_or_enc(&mut self) -> Result<Len, Halt> {
        let b = self.byte()?;
        Ok(match b >> 6 {
            0 => Len::Plain(u64::from(b & 0x3f)),
            1 => Len::Plain(u64::from(b & 0x3f) << 8 | u64::from(self.byte()?)),
            2 if b == 0x80 => Len::Plain(u64::from(u32::from_be_bytes(self.array()?))),
            2 if b == 0x81 => Len::Plain(u64::from_be_bytes(self.array()?)),
            2 => return Err(RdbError::Corrupt("unknown length encoding").into()),
            _ => Len::Enc(b & 0x3f),
        })
    }

    fn len(&mut self) -> Result<u64, Halt> {
        match self.len_or_enc()? {
            Len::Plain(n) => Ok(n),
            Len::Enc(_) => Err(RdbError::Corrupt("encoded string where a length belongs").into()),
        }
    }

    /// LZF's compressed and decompressed lengths, checked against each
    /// other.
    fn lzf_lens(&mut self) -> Result<(u64, u64), Halt> {
        let clen = self.len()?;
        let len = self.len()?;
        if len == 0 || len > clen.saturating_mul(LZF_MAX_RATIO) {
            return Err(RdbError::Corrupt("LZF string with an impossible length").into());
        }
        Ok((clen, len))
    }

    fn skip_string(&mut self) -> Result<(), Halt> {
        match self.len_or_enc()? {
            Len::Plain(n) => drop(self.take(n)?),
            Len::Enc(0) => drop(self.take(1)?),
            Len::Enc(1) => drop(self.take(2)?),
            Len::Enc(2) => drop(self.take(4)?),
            Len::Enc(3) => {
                let (clen, _) = self.lzf_lens()?;
                self.take(clen)?;
            }
            Len::Enc(_) => return Err(RdbError::Corrupt("unknown string encoding").into()),
        }
        Ok(())
    }

    /// A string: borrowed from the record when stored plain, else
    /// decompressed into `scratch` (cleared first).
    fn string(&mut self, scratch: &mut Vec<u8>) -> Result<Piece<'a>, Halt> {
        Ok(match self.len_or_enc()? {
            Len::Plain(n) => Piece::Bytes(self.take(n)?),
            Len::Enc(0) => Piece::Int(i64::from(self.byte()? as i8)),
            Len::Enc(1) => Piece::Int(i64::from(i16::from_le_bytes(self.array()?))),
            Len::Enc(2) => Piece::Int(i64::from(i32::from_le_bytes(self.array()?))),
            Len::Enc(3) => {
                let (clen, len) = self.lzf_lens()?;
                let packed = self.take(clen)?;
                let len = usize::try_from(len).map_err(|_| RdbError::Corrupt("length beyond memory"))?;
                scratch.clear();
                scratch.reserve(len);
                crate::lzf::decompress(packed, scratch, len).ok_or(RdbError::Corrupt("bad LZF data"))?;
                if scratch.len() != len {
                    return Err(RdbError::Corrupt("LZF string shorter than claimed").into());
                }
                Piece::Scratch
            }
            Len::Enc(_) => return Err(RdbError::Corrupt("unknown string encoding").into()),
        })
    }

    /// Skips the value of RDB type `t` (the grammar of [`decode::value`],
    /// lengths only).
    fn skip_value(&mut self, t: u8) -> Result<(), Halt> {
        match t {
            types::STRING
            | types::LIST_ZIPLIST
            | types::SET_INTSET
            | types::ZSET_ZIPLIST
            | types::HASH_ZIPLIST
            | types::HASH_LISTPACK
            | types::ZSET_LISTPACK
            | types::SET_LISTPACK => self.skip_string()?,
            types::LIST | types::SET => {
                for _ in 0..self.len()? {
                    self.skip_string()?;
                }
            }
            types::LIST_QUICKLIST => {
                for _ in 0..self.len()? {
                    self.skip_string()?;
                }
            }
            types::LIST_QUICKLIST_2 => {
                for _ in 0..self.len()? {
                    self.len()?;
                    self.skip_string()?;
                }
            }
            types::ZSET => {
                for _ in 0..self.len()? {
                    self.skip_string()?;
                    let n = self.byte()?;
                    if n < 253 {
                        self.take(u64::from(n))?;
                    }
                }
            }
            types::ZSET_2 => {
                for _ in 0..self.len()? {
                    self.skip_string()?;
                    self.take(8)?;
                }
            }
            types::HASH => {
                for _ in 0..self.len()? {
                    self.skip_string()?;
                    self.skip_string()?;
                }
            }
            types::HASH_METADATA => {
                self.take(8)?;
                for _ in 0..self.len()? {
                    self.len()?;
                    self.skip_string()?;
                    self.skip_string()?;
                }
            }
            types::HASH_LISTPACK_EX => {
                self.take(8)?;
                self.skip_string()?;
            }
            types::STREAM_LISTPACKS | types::STREAM_LISTPACKS_2 | types::STREAM_LISTPACKS_3 => self.skip_stream(t)?,
            _ => return Err(RdbError::UnsupportedType(t).into()),
        }
        Ok(())
    }

    /// Skips a stream (see `super::stream`'s layout).
    fn skip_stream(&mut self, t: u8) -> Result<(), Halt> {
        let v1 = t == types::STREAM_LISTPACKS;
        for _ in 0..self.len()? {
            self.skip_string()?;
            self.skip_string()?;
        }
        // Length and last ID; then first ID, max deleted ID, entries added.
        for _ in 0..if v1 { 3 } else { 8 } {
            self.len()?;
        }
        for _ in 0..self.len()? {
            self.skip_string()?;
            for _ in 0..if v1 { 2 } else { 3 } {
                self.len()?;
            }
            for _ in 0..self.len()? {
                self.take(16 + 8)?;
                self.len()?;
            }
            for _ in 0..self.len()? {
                self.skip_string()?;
                self.take(if t == types::STREAM_LISTPACKS_3 { 16 } else { 8 })?;
                let ids = self.len()?;
                self.take(ids.saturating_mul(16))?;
            }
        }
        Ok(())
    }

    /// Skips one key's record from its first byte: what precedes the key
    /// (deadline, access data, memcached AUX), the key and its value.
    fn skip_record(&mut self) -> Result<(), Halt> {
        loop {
            let t = self.byte()?;
            match t {
                opcodes::EXPIRETIME_MS => drop(self.take(8)?),
                opcodes::EXPIRETIME => drop(self.take(4)?),
                opcodes::IDLE => drop(self.len()?),
                opcodes::FREQ => drop(self.byte()?),
                opcodes::AUX => {
                    // Only the memcached field is part of a record (see
                    // `is_record`).
                    self.skip_string()?;
                    self.skip_string()?;
                }
                t if top_level(t) => return Err(RdbError::Corrupt("an opcode between a key's deadline or AUX field and the key").into()),
                _ => {
                    self.skip_string()?;
                    return self.skip_value(t);
                }
            }
        }
    }

    /// Whether the bytes here start a key's record (rather than a
    /// top-level opcode the scan handles itself).
    fn is_record(&self) -> Result<bool, Halt> {
        let t = *self.b.get(self.p).ok_or(Halt::More)?;
        Ok(match t {
            opcodes::EXPIRETIME_MS | opcodes::EXPIRETIME | opcodes::IDLE | opcodes::FREQ => true,
            opcodes::AUX => {
                let mut c = Cur { b: self.b, p: self.p + 1 };
                let mut scratch = Vec::new();
                matches!(c.string(&mut scratch)?, Piece::Bytes(k) if k == MC_AUX)
            }
            t => !top_level(t),
        })
    }

    /// A string as owned bytes (AUX fields).
    fn owned_string(&mut self) -> Result<Vec<u8>, Halt> {
        let mut scratch = Vec::new();
        Ok(match self.string(&mut scratch)? {
            Piece::Bytes(b) => b.to_vec(),
            Piece::Int(n) => itoa::Buffer::new().format(n).as_bytes().to_vec(),
            Piece::Scratch => scratch,
        })
    }
}

/// Where the scan is in its input.
struct Input<R> {
    r: R,
    chunk: Arc<Vec<u8>>,
    /// Offset of `chunk[0]` in the stream.
    base: u64,
    /// Bytes of `chunk` summed into `crc` so far.
    summed: usize,
    crc: u64,
    eof: bool,
    /// Chunks read before, kept for reuse once no batch holds them.
    spare: Vec<Arc<Vec<u8>>>,
}

impl<R: Read> Input<R> {
    /// Moves on to a chunk that starts at `keep` of the current one (its
    /// bytes from there on, which were not whole, and more input): at
    /// least as much more as is kept, so a record of any size is read in
    /// a number of steps logarithmic in its size. False at the end of the
    /// input.
    fn refill(&mut self, keep: usize) -> Result<bool, RdbError> {
        if self.eof {
            return Ok(false);
        }
        debug_assert!(keep >= self.summed);
        self.crc = crc64::update(self.crc, &self.chunk[self.summed..keep]);
        let tail = &self.chunk[keep..];
        let want = tail.len() + CHUNK.max(tail.len());
        // A chunk every batch of which is done is reused: freeing 1 MiB
        // blocks as fast as they are read made the allocator give pages
        // back and the kernel flush the other cores' TLBs (by `perf` of a
        // two-thread 1M-key load, those IPIs fell from 2.5% of the
        // samples to 1.3%; the rest come from pages read before written).
        let mut next = match self.spare.iter().position(|c| Arc::strong_count(c) == 1) {
            Some(i) => {
                let mut c = self.spare.swap_remove(i);
                let mut v = Arc::get_mut(&mut c).map(std::mem::take).unwrap_or_default();
                v.clear();
                v.reserve(want);
                v
            }
            None => Vec::with_capacity(want),
        };
        next.extend_from_slice(tail);
        while next.len() < want {
            let at = next.len();
            next.resize(want, 0);
            match self.r.read(&mut next[at..]) {
                Ok(0) => {
                    next.truncate(at);
                    self.eof = true;
                    break;
                }
                Ok(n) => next.truncate(at + n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => next.truncate(at),
                Err(e) => return Err(RdbError::Io(e)),
            }
        }
        self.base += keep as u64;
        self.summed = 0;
        let grew = next.len() > tail.len();
        let done = std::mem::replace(&mut self.chunk, Arc::new(next));
        if self.spare.len() >= SPARE {
            self.spare.remove(0);
        }
        self.spare.push(done);
        Ok(grew)
    }
}

/// Reads a whole RDB stream from `r`: the header, AUX fields, databases
/// and the checksum are handled here; each key's record goes to `sink`
/// in batches, in file order. The first error (the input's or the sink's)
/// ends the scan. Reads `r` past the end of the file (in whole chunks):
/// [`LoadInfo::bytes`] says where it ended.
pub fn scan<R: Read>(r: R, sink: &mut impl Sink) -> Result<LoadInfo, RdbError> {
    let mut inp = Input { r, chunk: Arc::new(Vec::new()), base: 0, summed: 0, crc: 0, eof: false, spare: Vec::new() };
    let mut pos = 0usize;
    let mut info = LoadInfo::default();
    let mut db = 0u32;
    // The batch being gathered: records from `from` to `pos` of the chunk.
    let mut from = 0usize;
    loop {
        let mut c = Cur { b: &inp.chunk, p: pos };
        let step = (|| -> Result<Step, Halt> {
            if info.version == 0 {
                let h = c.take(9)?;
                if &h[..5] != b"REDIS" || !h[5..].iter().all(u8::is_ascii_digit) {
                    return Err(RdbError::BadHeader.into());
                }
                let version = h[5..].iter().fold(0u16, |a, &d| a * 10 + u16::from(d - b'0'));
                if version == 0 || version > RDB_VERSION_MAX {
                    return Err(RdbError::Version(version).into());
                }
                return Ok(Step::Header(version));
            }
            if c.is_record()? {
                c.skip_record()?;
                return Ok(Step::Record);
            }
            let t = c.byte()?;
            Ok(match t {
                opcodes::EOF => Step::Eof,
                opcodes::SELECTDB => {
                    Step::Select(u32::try_from(c.len()?).map_err(|_| RdbError::Corrupt("database number out of range"))?)
                }
                opcodes::RESIZEDB => {
                    let keys = c.len()?;
                    c.len()?;
                    Step::Resize(keys)
                }
                opcodes::SLOT_INFO => {
                    for _ in 0..3 {
                        c.len()?;
                    }
                    Step::Skip
                }
                opcodes::AUX => Step::Aux(c.owned_string()?, c.owned_string()?),
                opcodes::FUNCTION2 => Step::Function(c.owned_string()?),
                _ => return Err(RdbError::UnsupportedOpcode(t).into()),
            })
        })();
        let step = match step {
            Ok(s) => s,
            Err(Halt::Bad(e)) => return Err(e),
            Err(Halt::More) => {
                // The record at `pos` is not whole yet: what is gathered
                // goes, and the next chunk starts with it.
                flush(sink, &inp.chunk, &mut from, pos, db)?;
                if !inp.refill(pos)? {
                    return Err(RdbError::Truncated);
                }
                pos = 0;
                from = 0;
                continue;
            }
        };
        let end = c.p;
        if let Step::Record = step {
            info.keys += 1;
            pos = end;
            if pos - from >= BATCH_BYTES {
                flush(sink, &inp.chunk, &mut from, pos, db)?;
            }
            continue;
        }
        // Anything else ends the batch gathered so far.
        flush(sink, &inp.chunk, &mut from, pos, db)?;
        pos = end;
        from = end;
        match step {
            Step::Record => {}
            Step::Header(v) => info.version = v,
            Step::Select(d) => db = d,
            Step::Resize(keys) => sink.resize(db, keys),
            Step::Skip => {}
            Step::Aux(k, v) => info.aux.push((k, v)),
            Step::Function(code) => info.functions.push(code),
            Step::Eof => {
                inp.crc = crc64::update(inp.crc, &inp.chunk[inp.summed..end]);
                inp.summed = end;
                break;
            }
        }
    }
    if info.version >= 5 {
        while inp.chunk.len() - pos < 8 {
            if !inp.refill(pos)? {
                return Err(RdbError::Truncated);
            }
            pos = 0;
        }
        let stored = u64::from_le_bytes(inp.chunk[pos..pos + 8].try_into().expect("8 bytes"));
        pos += 8;
        if stored != 0 {
            if stored != inp.crc {
                return Err(RdbError::Checksum { stored, computed: inp.crc });
            }
            info.checksum_checked = true;
        }
    }
    info.bytes = inp.base + pos as u64;
    Ok(info)
}

/// What one step of the scan found.
enum Step {
    Header(u16),
    Record,
    Select(u32),
    Resize(u64),
    Skip,
    Aux(Vec<u8>, Vec<u8>),
    /// A function library's code (FUNCTION2).
    Function(Vec<u8>),
    Eof,
}

/// Hands the records gathered from `*from` to `pos` to `sink`.
fn flush(sink: &mut impl Sink, chunk: &Arc<Vec<u8>>, from: &mut usize, pos: usize, db: u32) -> Result<(), RdbError> {
    if pos > *from {
        sink.batch(Batch { chunk: chunk.clone(), start: *from, end: pos, db })?;
    }
    *from = pos;
    Ok(())
}

/// The value of a decoded record.
pub enum Body<'a> {
    /// A string (a canonical integer is `Int`).
    Str(Piece<'a>),
    /// Any other type, built.
    Value(Value),
}

/// One key's record, decoded from memory. Strings borrow the record or
/// the caller's scratch buffers (no allocation unless LZF output outgrows
/// them); other types are built as [`decode::value`] builds them.
pub struct Record<'a> {
    pub key: Piece<'a>,
    pub body: Body<'a>,
    pub expire: Option<u64>,
    /// The memcached AUX field that preceded the key, if any: its value
    /// ([`McStr::header`] and the key it was written for).
    pub mc: Option<&'a [u8]>,
}

impl<'a> Record<'a> {
    /// Decodes the record at the start of `*b` and moves `*b` past it.
    /// The key decompresses into `kbuf` and a string value into `vbuf`
    /// when LZF-compressed (or an integer key is formatted into `kbuf`).
    pub fn parse(b: &mut &'a [u8], lim: &Limits, kbuf: &mut Vec<u8>, vbuf: &mut Vec<u8>) -> Result<Record<'a>, RdbError> {
        let bad = |h: Halt| match h {
            // The scan found the record whole: its decode disagrees.
            Halt::More => RdbError::Corrupt("a record shorter than its lengths"),
            Halt::Bad(e) => e,
        };
        let whole: &'a [u8] = b;
        let mut c = Cur { b: whole, p: 0 };
        let (mut expire, mut mc) = (None, None);
        let t = loop {
            match c.byte().map_err(bad)? {
                opcodes::EXPIRETIME_MS => expire = Some(u64::from_le_bytes(c.array().map_err(bad)?)),
                opcodes::EXPIRETIME => expire = Some(u64::from(u32::from_le_bytes(c.array().map_err(bad)?)) * 1000),
                opcodes::IDLE => drop(c.len().map_err(bad)?),
                opcodes::FREQ => drop(c.byte().map_err(bad)?),
                opcodes::AUX => {
                    c.skip_string().map_err(bad)?;
                    let Piece::Bytes(v) = c.string(vbuf).map_err(bad)? else {
                        return Err(RdbError::Corrupt("memcached AUX field not stored plain"));
                    };
                    if v.len() < McStr::HEADER {
                        return Err(RdbError::Corrupt("short memcached AUX field"));
                    }
                    mc = Some(v);
                }
                t => break t,
            }
        };
        if t != types::STRING {
            // Other types are decoded by `decode::value`, within the end
            // the scan's grammar finds and required to reach it: the two
            // readings of the bytes agree or the file is refused. (A
            // string is read by the same code that skips it.)
            let mut skip = Cur { b: whole, p: c.p };
            skip.skip_string().map_err(bad)?;
            skip.skip_value(t).map_err(bad)?;
            c.b = &whole[..skip.p];
        }
        let key = c.string(kbuf).map_err(bad)?;
        let key = match key {
            Piece::Int(n) => {
                kbuf.clear();
                kbuf.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
                Piece::Scratch
            }
            k => k,
        };
        let body = if t == types::STRING {
            Body::Str(match c.string(vbuf).map_err(bad)? {
                Piece::Bytes(v) => match tern_resp::parse_i64(v) {
                    Some(n) => Piece::Int(n),
                    None => Piece::Bytes(v),
                },
                Piece::Scratch => match tern_resp::parse_i64(vbuf) {
                    Some(n) => Piece::Int(n),
                    None => Piece::Scratch,
                },
                n => n,
            })
        } else {
            let rest = &c.b[c.p..];
            let mut src = Src::unsummed(rest);
            let v = decode::value(&mut src, t, lim)?;
            c.p += src.pos as usize;
            if c.p != c.b.len() {
                return Err(RdbError::Corrupt("a value shorter than its record"));
            }
            Body::Value(v)
        };
        *b = &whole[c.p..];
        Ok(Record { key, body, expire, mc })
    }
}

impl Piece<'_> {
    /// The bytes, given the scratch buffer the piece was decoded into
    /// (an integer is formatted into `itoa`'s buffer).
    pub fn bytes<'s>(self, scratch: &'s [u8], itoa: &'s mut itoa::Buffer) -> &'s [u8]
    where
        Self: 's,
    {
        match self {
            Piece::Bytes(b) => b,
            Piece::Scratch => scratch,
            Piece::Int(n) => itoa.format(n).as_bytes(),
        }
    }
}

impl Record<'_> {
    /// The key and value as owned data ([`super::load`]'s form): a
    /// memcached AUX field written for this key makes the string a
    /// memcached item.
    pub fn into_owned(self, kbuf: &[u8], vbuf: &[u8]) -> (Vec<u8>, Value) {
        let key = self.key.bytes(kbuf, &mut itoa::Buffer::new()).to_vec();
        let value = match self.body {
            Body::Value(v) => v,
            Body::Str(p) => {
                let mut n = itoa::Buffer::new();
                match self.mc.filter(|m| m[McStr::HEADER..] == key[..]) {
                    Some(m) => {
                        let data = p.bytes(vbuf, &mut n);
                        Value::Str(StrValue::Mc(McStr::new(data, McStr::read_flags(m), McStr::read_cas(m), m[12])))
                    }
                    None => Value::Str(match p {
                        Piece::Int(i) => StrValue::Int(i),
                        p => StrValue::Emb(p.bytes(vbuf, &mut n).into()),
                    }),
                }
            }
        };
        (key, value)
    }
}

/// The opcodes the scan handles itself, between records (never inside
/// one).
fn top_level(t: u8) -> bool {
    matches!(
        t,
        opcodes::EOF | opcodes::SELECTDB | opcodes::RESIZEDB | opcodes::SLOT_INFO | opcodes::FUNCTION2 | opcodes::MODULE_AUX | opcodes::FUNCTION_PRE_GA
    )
}
