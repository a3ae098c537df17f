//! Server side: reply encoders, appending to the connection's buffer.
//!
//! Every line memcached answers with is written here once — status lines
//! ([`Status`], [`Code`]), value headers, numbers, `VERSION`, `STAT` and
//! `ME` lines, and the meta return flags — and the error lines once in
//! [`crate::errors`]. The server decides what to answer; this module only
//! knows how it looks on the wire.
//!
//! A reply that carries an item's data is written in three steps, so that
//! the server can send large data from the stored bytes instead of copying
//! them (the caller may queue a reference between two owned byte runs):
//!
//! ```text
//!  value(out, key, flags, len, cas)  ─►  VALUE k 5 3 9\r\n
//!  (the server copies or queues the data)   abc
//!  data_end(out)                     ─►  \r\n
//!
//!  MetaLine::value(out, 3), then .num(b'f', 5)   ─►  VA 3 f5 kk\r\n
//!    and .key(b"k", false), then .end()
//!  (the server copies or queues the data)            abc
//!  data_end(out)                                 ─►  \r\n
//! ```
//!
//! Goals: byte-exact memcached 1.6 replies; no allocation (numbers go
//! through `itoa`, `STAT` values through `fmt` straight into the buffer).
//! Non-goals: any knowledge of items, the store or the socket.

use std::fmt::Display;
use std::io::Write;

use crate::base64;
use crate::number::append as num;

/// The end of a line, and of a data block.
pub const CRLF: &[u8] = b"\r\n";
/// What starts a text value header (the client decoder reads it too).
pub const VALUE: &[u8] = b"VALUE ";
/// What starts a meta value header.
pub const META_VALUE: &[u8] = b"VA ";

/// The status lines of the text protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Stored,
    NotStored,
    Exists,
    NotFound,
    Deleted,
    Touched,
    Ok,
    /// Closes a retrieval and a `stats` listing.
    End,
    /// `stats reset`.
    Reset,
}

impl Status {
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Stored => "STORED",
            Status::NotStored => "NOT_STORED",
            Status::Exists => "EXISTS",
            Status::NotFound => "NOT_FOUND",
            Status::Deleted => "DELETED",
            Status::Touched => "TOUCHED",
            Status::Ok => "OK",
            Status::End => "END",
            Status::Reset => "RESET",
        }
    }
}

/// The two-letter codes that start a meta reply line (`VA`, which carries
/// a length, is [`MetaLine::value`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// Done: a hit without a value, a store, a delete.
    Hd,
    /// Not stored.
    Ns,
    /// Exists: the CAS did not match.
    Ex,
    /// Not found.
    Nf,
    /// End: a miss (`mg`, `me`).
    En,
    /// The answer to `mn`.
    Mn,
    /// A `me` line.
    Me,
}

impl Code {
    /// Every code, for a decoder that recognises them.
    pub const ALL: [Code; 7] = [
        Code::Hd,
        Code::Ns,
        Code::Ex,
        Code::Nf,
        Code::En,
        Code::Mn,
        Code::Me,
    ];

    pub const fn as_bytes(self) -> &'static [u8; 2] {
        match self {
            Code::Hd => b"HD",
            Code::Ns => b"NS",
            Code::Ex => b"EX",
            Code::Nf => b"NF",
            Code::En => b"EN",
            Code::Mn => b"MN",
            Code::Me => b"ME",
        }
    }
}

/// A whole line: an error from [`crate::errors`] (or any fixed text).
pub fn line(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.extend_from_slice(CRLF);
}

/// A text status line.
pub fn status(out: &mut Vec<u8>, s: Status) {
    line(out, s.as_str())
}

/// `VALUE <key> <flags> <len> [<cas>]`: the header of one item of a text
/// retrieval; its data and [`data_end`] follow.
pub fn value(out: &mut Vec<u8>, key: &[u8], flags: u32, len: usize, cas: Option<u64>) {
    out.extend_from_slice(VALUE);
    out.extend_from_slice(key);
    out.push(b' ');
    num(out, flags);
    out.push(b' ');
    num(out, len);
    if let Some(c) = cas {
        out.push(b' ');
        num(out, c);
    }
    out.extend_from_slice(CRLF);
}

/// The CRLF that ends a data block.
pub fn data_end(out: &mut Vec<u8>) {
    out.extend_from_slice(CRLF);
}

/// The result of `incr`/`decr`.
pub fn number(out: &mut Vec<u8>, n: u64) {
    num(out, n);
    out.extend_from_slice(CRLF);
}

/// `VERSION <version>`.
pub fn version(out: &mut Vec<u8>, v: &str) {
    out.extend_from_slice(b"VERSION ");
    line(out, v);
}

/// `STAT <name> <value>`: one line of a `stats` listing, which
/// [`Status::End`] closes.
pub fn stat(out: &mut Vec<u8>, name: &str, v: impl Display) {
    // Writing into a Vec cannot fail.
    let _ = write!(out, "STAT {name} {v}\r\n");
}

/// What `me` reports of an item.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Debug {
    /// Seconds of TTL left (-1: none).
    pub exp: i64,
    /// Seconds since the last access.
    pub la: u64,
    pub cas: u64,
    pub fetched: bool,
    /// The item's size as memcached counts it (header included).
    pub size: usize,
}

impl Debug {
    /// The slab class memcached would keep the item in.
    pub fn class(&self) -> u32 {
        crate::slabs::class_of(self.size)
    }
}

/// `ME <key> exp=.. la=.. cas=.. fetch=yes|no cls=1 size=..`, the answer to
/// `me` (a miss is [`Code::En`]).
pub fn debug(out: &mut Vec<u8>, key: &[u8], d: &Debug) {
    out.extend_from_slice(Code::Me.as_bytes());
    out.push(b' ');
    out.extend_from_slice(key);
    let fetch = if d.fetched { "yes" } else { "no" };
    let _ = write!(
        out,
        " exp={} la={} cas={} fetch={} cls={} size={}\r\n",
        d.exp,
        d.la,
        d.cas,
        fetch,
        d.class(),
        d.size
    );
}

/// One meta reply line: its code, then return flags in the order the
/// request asked for them, then [`MetaLine::end`].
pub struct MetaLine<'o> {
    out: &'o mut Vec<u8>,
}

impl<'o> MetaLine<'o> {
    /// A status line (`HD`, `NS`, `EX`, `NF`, `EN`, `MN`).
    pub fn status(out: &'o mut Vec<u8>, code: Code) -> Self {
        out.extend_from_slice(code.as_bytes());
        MetaLine { out }
    }

    /// `VA <len>`: a hit with its value; the data and [`data_end`] follow
    /// the line.
    pub fn value(out: &'o mut Vec<u8>, len: usize) -> Self {
        out.extend_from_slice(META_VALUE);
        num(out, len);
        MetaLine { out }
    }

    /// A numeric return flag: ` <flag><n>` (`s`, `c`, `f`, `l`).
    pub fn num(&mut self, flag: u8, n: impl itoa::Integer) -> &mut Self {
        self.out.push(b' ');
        self.out.push(flag);
        num(self.out, n);
        self
    }

    /// ` t<secs>`, or ` t-1` for an item that does not expire.
    pub fn ttl(&mut self, secs: Option<u64>) -> &mut Self {
        match secs {
            Some(s) => self.num(b't', s),
            None => {
                self.out.extend_from_slice(b" t-1");
                self
            }
        }
    }

    /// ` h1` if the item was fetched before, ` h0` if not.
    pub fn hit_before(&mut self, fetched: bool) -> &mut Self {
        self.out
            .extend_from_slice(if fetched { b" h1" } else { b" h0" });
        self
    }

    /// The opaque token, echoed as the request gave it (`O` included).
    pub fn opaque(&mut self, token: &[u8]) -> &mut Self {
        self.out.push(b' ');
        self.out.extend_from_slice(token);
        self
    }

    /// ` k<key>`; a binary key in base64, followed by ` b`.
    pub fn key(&mut self, key: &[u8], binary: bool) -> &mut Self {
        self.out.extend_from_slice(b" k");
        if binary {
            base64::encode(self.out, key);
            self.out.extend_from_slice(b" b");
        } else {
            self.out.extend_from_slice(key);
        }
        self
    }

    /// ` W`: this client won the right to recache the item.
    pub fn win(&mut self) -> &mut Self {
        self.out.extend_from_slice(b" W");
        self
    }

    /// ` X`: the item is stale.
    pub fn stale(&mut self) -> &mut Self {
        self.out.extend_from_slice(b" X");
        self
    }

    /// ` Z`: a win token was already sent to another client.
    pub fn win_sent(&mut self) -> &mut Self {
        self.out.extend_from_slice(b" Z");
        self
    }

    /// Ends the line.
    pub fn end(self) {
        self.out.extend_from_slice(CRLF);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Response;

    #[test]
    fn text_lines() {
        let mut b = Vec::new();
        value(&mut b, b"k", 5, 3, Some(9));
        b.extend_from_slice(b"abc");
        data_end(&mut b);
        value(&mut b, b"j", 0, 0, None);
        data_end(&mut b);
        status(&mut b, Status::End);
        number(&mut b, 18446744073709551615);
        status(&mut b, Status::NotStored);
        line(&mut b, crate::errors::NON_NUMERIC);
        version(&mut b, "1.6.18");
        stat(&mut b, "curr_items", 3u64);
        stat(&mut b, "version", "1.6.18");
        assert_eq!(
            String::from_utf8_lossy(&b),
            "VALUE k 5 3 9\r\nabc\r\nVALUE j 0 0\r\n\r\nEND\r\n18446744073709551615\r\nNOT_STORED\r\n\
             CLIENT_ERROR cannot increment or decrement non-numeric value\r\nVERSION 1.6.18\r\n\
             STAT curr_items 3\r\nSTAT version 1.6.18\r\n"
        );
    }

    #[test]
    fn meta_lines() {
        let mut b = Vec::new();
        let mut l = MetaLine::value(&mut b, 2);
        l.num(b's', 2)
            .ttl(None)
            .num(b'c', 7)
            .opaque(b"Oab")
            .key(b"\x00k", true)
            .hit_before(true)
            .win_sent()
            .stale()
            .win();
        l.end();
        b.extend_from_slice(b"hi");
        data_end(&mut b);
        let mut l = MetaLine::status(&mut b, Code::Hd);
        l.ttl(Some(30)).num(b'l', 4).key(b"k", false);
        l.end();
        MetaLine::status(&mut b, Code::En).end();
        debug(
            &mut b,
            b"k",
            &Debug {
                exp: -1,
                la: 2,
                cas: 3,
                fetched: true,
                size: 60,
            },
        );
        assert_eq!(
            String::from_utf8_lossy(&b),
            "VA 2 s2 t-1 c7 Oab kAGs= b h1 Z X W\r\nhi\r\nHD t30 l4 kk\r\nEN\r\n\
             ME k exp=-1 la=2 cas=3 fetch=yes cls=1 size=60\r\n"
        );
    }

    #[test]
    fn the_client_decoder_reads_every_code() {
        for c in Code::ALL {
            let mut b = Vec::new();
            let mut l = MetaLine::status(&mut b, c);
            l.num(b'c', 1);
            l.end();
            let (r, n) = Response::parse(&b).unwrap().unwrap();
            assert_eq!(n, b.len());
            assert_eq!(
                r,
                Response::Meta {
                    code: *c.as_bytes(),
                    flags: b"c1"
                }
            );
        }
    }
}
