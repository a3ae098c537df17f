//! Whole RDB files: [`RdbWriter`] streams one out in a single pass,
//! [`load`] reads one and hands each key to a callback.
//!
//! The writer starts the header at the lowest version ([`RDB_VERSION_MIN`])
//! and raises it when a value needs more (hash field TTLs): at
//! [`RdbWriter::finish`] it seeks back over the four version digits and
//! patches the running checksum for the changed bytes ([`crc64::shift`]),
//! so nothing is written twice or read back.
//!
//! A memcached item's flags and CAS have no place in RDB: an AUX field
//! named [`MC_AUX`] before the key carries them (the header and the key),
//! which Redis and `redis-check-rdb` skip as an unknown AUX field, and
//! which [`load`] applies to the key that follows.

use std::io::{Read, Seek, SeekFrom, Write};

use crate::value::{StrRef, ValueRef};
use crate::value::{McStr, Value};

use super::encode::{put_len, put_string, put_value};
use super::scan::{scan, Batch, Record, Sink};
use super::{crc64, opcodes, Limits, RdbError, Style, RDB_VERSION_MIN};

/// The AUX field that carries a memcached item's flags, CAS and state:
/// its value is [`McStr::header`] followed by the item's key.
pub const MC_AUX: &[u8] = b"tern-mc";

/// Bytes buffered before a write to the output.
const FLUSH_AT: usize = 64 * 1024;

/// What a file records besides the data.
#[derive(Clone, Debug)]
pub struct RdbOptions {
    /// `rdbcompression`: LZF for strings over 20 bytes when it pays.
    pub compression: bool,
    /// `rdbchecksum`: the CRC64 at the end, else eight zero bytes.
    pub checksum: bool,
    /// AUX `redis-ver`.
    pub redis_ver: String,
    /// AUX `ctime`, in seconds since the epoch.
    pub ctime_secs: u64,
    /// AUX `used-mem`.
    pub used_mem: u64,
    /// AUX `repl-stream-db`, `repl-id` and `repl-offset`: where in its
    /// master's stream a replica's data is, for a PSYNC after a restart.
    pub repl: Option<ReplPosition>,
}

/// A replica's place in its master's replication stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplPosition {
    /// The database the stream's commands are in.
    pub db: u32,
    pub replid: String,
    /// The stream's offset applied.
    pub offset: i64,
}

impl ReplPosition {
    /// The position a file's AUX fields give (all three, well formed).
    pub fn from_aux(aux: &[(Vec<u8>, Vec<u8>)]) -> Option<ReplPosition> {
        let get = |k: &[u8]| aux.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_slice());
        let db = u32::try_from(tern_resp::parse_u64(get(b"repl-stream-db")?)?).ok()?;
        let id = get(b"repl-id")?;
        let offset = tern_resp::parse_i64(get(b"repl-offset")?)?;
        (id.len() == 40 && id.iter().all(u8::is_ascii_hexdigit)).then(|| ReplPosition { db, replid: String::from_utf8_lossy(id).into_owned(), offset })
    }
}

impl Default for RdbOptions {
    fn default() -> Self {
        RdbOptions { compression: true, checksum: true, redis_ver: String::new(), ctime_secs: 0, used_mem: 0, repl: None }
    }
}

/// Writes an RDB file in one pass: [`Self::new`] (header and AUX fields),
/// then per database [`Self::select_db`] and its [`Self::entry`]s, then
/// [`Self::finish`].
pub struct RdbWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    /// Checksum and length of what left `buf` for `out`.
    crc: u64,
    len: u64,
    /// Where the header starts in `out`.
    start: u64,
    version: u16,
    opts: RdbOptions,
}

fn header(version: u16) -> [u8; 9] {
    let mut h = *b"REDIS0000";
    let d = format!("{version:04}");
    h[5..9].copy_from_slice(&d.as_bytes()[d.len() - 4..]);
    h
}

impl<W: Write + Seek> RdbWriter<W> {
    /// Starts a file at the output's current position: the header and the
    /// AUX fields Redis writes (redis-ver, redis-bits, ctime, used-mem,
    /// aof-base).
    pub fn new(mut out: W, opts: RdbOptions) -> std::io::Result<Self> {
        let start = out.stream_position()?;
        Ok(RdbWriter::begin(out, start, opts))
    }

    /// Ends the file (EOF, checksum), raising the header's version if a
    /// value needed it, and returns the output, positioned after the file.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.buf.push(opcodes::EOF);
        self.flush_buf()?;
        let mut crc = self.crc;
        if self.version != RDB_VERSION_MIN {
            let (old, new) = (header(RDB_VERSION_MIN), header(self.version));
            let delta: Vec<u8> = old[5..9].iter().zip(&new[5..9]).map(|(a, b)| a ^ b).collect();
            crc ^= crc64::shift(crc64::crc64(&delta), self.len - 9);
            self.out.seek(SeekFrom::Start(self.start + 5))?;
            self.out.write_all(&new[5..9])?;
            self.out.seek(SeekFrom::Start(self.start + self.len))?;
        }
        self.end(crc)
    }
}

impl<W: Write> RdbWriter<W> {
    /// Starts a file on an output that cannot seek (a replica's socket):
    /// its header keeps the oldest version Tern writes, which every
    /// Redis since 7.0 loads; a value of a newer type is still written,
    /// and loads where that type is known (Redis does not check types
    /// against the header's version).
    pub fn streaming(out: W, opts: RdbOptions) -> Self {
        RdbWriter::begin(out, 0, opts)
    }

    /// Ends a [`RdbWriter::streaming`] file (EOF, checksum).
    pub fn finish_streaming(mut self) -> std::io::Result<W> {
        self.buf.push(opcodes::EOF);
        self.flush_buf()?;
        let crc = self.crc;
        self.end(crc)
    }

    fn end(mut self, crc: u64) -> std::io::Result<W> {
        let sum = if self.opts.checksum { crc } else { 0 };
        self.out.write_all(&sum.to_le_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn begin(out: W, start: u64, opts: RdbOptions) -> Self {
        let mut w = RdbWriter { out, buf: Vec::with_capacity(FLUSH_AT * 2), crc: 0, len: 0, start, version: RDB_VERSION_MIN, opts };
        w.buf.extend_from_slice(&header(RDB_VERSION_MIN));
        let ver = w.opts.redis_ver.clone();
        w.aux(b"redis-ver", ver.as_bytes());
        w.aux(b"redis-bits", itoa::Buffer::new().format(usize::BITS).as_bytes());
        let ctime = w.opts.ctime_secs;
        w.aux(b"ctime", itoa::Buffer::new().format(ctime).as_bytes());
        let mem = w.opts.used_mem;
        w.aux(b"used-mem", itoa::Buffer::new().format(mem).as_bytes());
        if let Some(r) = w.opts.repl.clone() {
            w.aux(b"repl-stream-db", itoa::Buffer::new().format(r.db).as_bytes());
            w.aux(b"repl-id", r.replid.as_bytes());
            w.aux(b"repl-offset", itoa::Buffer::new().format(r.offset).as_bytes());
        }
        w.aux(b"aof-base", b"0");
        w
    }

    fn aux(&mut self, k: &[u8], v: &[u8]) {
        self.buf.push(opcodes::AUX);
        put_string(&mut self.buf, k, false);
        put_string(&mut self.buf, v, false);
    }

    fn flush_some(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= FLUSH_AT {
            self.flush_buf()?;
        }
        Ok(())
    }

    fn flush_buf(&mut self) -> std::io::Result<()> {
        self.crc = crc64::update(self.crc, &self.buf);
        self.len += self.buf.len() as u64;
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// A function library's code (a FUNCTION2 record): before the first
    /// database, as Redis writes them.
    pub fn function(&mut self, code: &[u8]) -> std::io::Result<()> {
        self.buf.push(opcodes::FUNCTION2);
        put_string(&mut self.buf, code, false);
        self.flush_some()
    }

    /// Starts database `db`, with the sizes Redis's RESIZEDB carries
    /// (hints: a loader may size its tables with them).
    pub fn select_db(&mut self, db: u32, keys_hint: u64, expires_hint: u64) -> std::io::Result<()> {
        self.buf.push(opcodes::SELECTDB);
        put_len(&mut self.buf, u64::from(db));
        self.buf.push(opcodes::RESIZEDB);
        put_len(&mut self.buf, keys_hint);
        put_len(&mut self.buf, expires_hint);
        self.flush_some()
    }

    /// One key of the current database, with its deadline in ms since
    /// the epoch.
    pub fn entry(&mut self, key: &[u8], value: ValueRef<'_>, expire_ms: Option<u64>) -> std::io::Result<()> {
        if let ValueRef::Str(StrRef::Mc(m)) = value {
            let mut v = Vec::with_capacity(McStr::HEADER + key.len());
            v.extend_from_slice(&McStr::header(m.flags(), m.cas(), m.state()));
            v.extend_from_slice(key);
            self.aux(MC_AUX, &v);
        }
        if let Some(t) = expire_ms {
            self.buf.push(opcodes::EXPIRETIME_MS);
            self.buf.extend_from_slice(&t.to_le_bytes());
        }
        // The type byte comes first, then the key, then the body.
        let at = self.buf.len();
        let mut body = Vec::new();
        let need = put_value(&mut body, value, Style::Oldest, self.opts.compression);
        self.version = self.version.max(need);
        if let Some((&t, rest)) = body.split_first() {
            self.buf.push(t);
            put_string(&mut self.buf, key, self.opts.compression);
            self.buf.extend_from_slice(rest);
        }
        debug_assert!(self.buf.len() > at);
        self.flush_some()
    }

    /// The RDB version the file carries so far.
    pub fn version(&self) -> u16 {
        self.version
    }

}

/// What [`load`] learnt besides the keys.
#[derive(Clone, Debug, Default)]
pub struct LoadInfo {
    pub version: u16,
    /// Keys in the file.
    pub keys: u64,
    /// Keys stored ([`super::load_into`]: those its `admit` accepted).
    pub stored: u64,
    /// AUX fields other than [`MC_AUX`], in file order.
    pub aux: Vec<(Vec<u8>, Vec<u8>)>,
    /// Whether a checksum was there to check (not zeros, version ≥ 5).
    pub checksum_checked: bool,
    /// The function libraries' code (FUNCTION2 records), in file order.
    pub functions: Vec<Vec<u8>>,
    /// Bytes of the stream the file took, checksum included (the reader
    /// may have been read further).
    pub bytes: u64,
}

/// Reads an RDB file from `r`, calling `f(db, key, value, expire_ms)` for
/// each key in file order, values built for `lim`. The first error (from
/// the file or from `f`) ends the load. Keys already expired are passed
/// on too: the caller decides (Redis drops them on a primary). One
/// thread; [`super::load_into`] fills a keyspace on several.
pub fn load<R: Read>(
    r: R,
    lim: Limits,
    f: impl FnMut(u32, Vec<u8>, Value, Option<u64>) -> Result<(), RdbError>,
) -> Result<LoadInfo, RdbError> {
    struct Each<F> {
        f: F,
        lim: Limits,
        kbuf: Vec<u8>,
        vbuf: Vec<u8>,
    }
    impl<F: FnMut(u32, Vec<u8>, Value, Option<u64>) -> Result<(), RdbError>> Sink for Each<F> {
        fn resize(&mut self, _: u32, _: u64) {}
        fn batch(&mut self, b: Batch) -> Result<(), RdbError> {
            let mut rest = b.bytes();
            while !rest.is_empty() {
                let rec = Record::parse(&mut rest, &self.lim, &mut self.kbuf, &mut self.vbuf)?;
                let expire = rec.expire;
                let (key, value) = rec.into_owned(&self.kbuf, &self.vbuf);
                (self.f)(b.db, key, value, expire)?;
            }
            Ok(())
        }
    }
    scan(r, &mut Each { f, lim, kbuf: Vec::new(), vbuf: Vec::new() })
}
