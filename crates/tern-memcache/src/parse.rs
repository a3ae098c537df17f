//! Server side: requests of the text and meta protocols, parsed from the
//! read buffer without copying, in memcached 1.6's order of checks.
//!
//! A request is a line ending in `\n` (an `\r` before it is dropped),
//! split on spaces; storage commands are followed by a data block of the
//! announced length and `\r\n`. Most malformed requests are answered with
//! an error line and the connection goes on ([`Request::Error`]); after a
//! refused storage command the announced data is skipped as it arrives
//! (memcached's "swallow" state, kept in the [`Parser`]).

use std::borrow::Cow;

use crate::errors as e;
use crate::number::{parse_flags, parse_i32, parse_u64};
use crate::{base64, KEY_MAX, LINE_MAX, OPAQUE_MAX};

/// Most tokens memcached looks at in one line (`MAX_TOKENS` less the end
/// marker); meta commands allow fewer (`MFLAG_MAX_OPT_LENGTH`).
const MAX_TOKENS: usize = 23;
const META_MAX_TOKENS: usize = 19;

#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest item (key, value and memcached's per-item header) accepted.
    pub max_item_size: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_item_size: 1 << 20,
        }
    }
}

/// What memcached counts against its item size limit: its item header
/// (48 bytes, 8 more for the CAS, 4 more for non-zero client flags), the
/// key with its terminator, and the data with its `\r\n`.
pub fn item_total_size(key_len: usize, flags: u32, data_len: usize) -> usize {
    56 + if flags != 0 { 4 } else { 0 } + key_len + 1 + data_len + 2
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreCmd {
    Set,
    Add,
    Replace,
    Append,
    Prepend,
    Cas,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaCmd {
    Get,
    Set,
    Delete,
    Arith,
}

/// The space-separated keys of a `get` line, borrowed.
#[derive(Clone, Copy, Debug)]
pub struct Keys<'a>(pub &'a [u8]);

impl<'a> Keys<'a> {
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.0.split(|&c| c == b' ').filter(|t| !t.is_empty())
    }
}

/// The meta flags of one request, parsed; [`MetaFlags::tokens`] keeps
/// them in request order for the reply's return flags.
#[derive(Clone, Debug, Default)]
pub struct MetaFlags<'a> {
    /// The flag part of the line, for [`MetaFlags::iter`].
    pub raw: &'a [u8],
    pub base64: bool,
    pub quiet: bool,
    pub value: bool,
    pub no_bump: bool,
    pub opaque: Option<&'a [u8]>,
    pub vivify: Option<i32>,
    pub recache: Option<i32>,
    pub ttl: Option<i32>,
    pub compare_cas: Option<u64>,
    pub new_cas: Option<u64>,
    pub client_flags: Option<u32>,
    pub invalidate: bool,
    pub mode: Option<u8>,
    pub initial: Option<u64>,
    pub delta: Option<u64>,
    /// `md x`: keep the item, drop its value.
    pub remove_value: bool,
    pub want_la: bool,
    pub want_hit: bool,
}

impl<'a> MetaFlags<'a> {
    /// Each flag token in request order: its letter and its token text
    /// (the letter included).
    pub fn iter(&self) -> impl Iterator<Item = (u8, &'a [u8])> + 'a {
        self.raw
            .split(|&c| c == b' ')
            .filter(|t| !t.is_empty())
            .map(|t| (t[0], t))
    }
}

/// A meta command (`mg`, `ms`, `md`, `ma`).
#[derive(Clone, Debug)]
pub struct Meta<'a> {
    pub cmd: MetaCmd,
    /// The key, base64-decoded under the `b` flag.
    pub key: Cow<'a, [u8]>,
    pub flags: MetaFlags<'a>,
    /// The data block of `ms`.
    pub data: &'a [u8],
}

#[derive(Clone, Debug)]
pub enum Request<'a> {
    /// get, gets, gat, gats: `touch` holds gat's expiration time.
    Get {
        cas: bool,
        touch: Option<i32>,
        keys: Keys<'a>,
    },
    Store {
        cmd: StoreCmd,
        key: &'a [u8],
        flags: u32,
        exptime: i32,
        data: &'a [u8],
        cas: u64,
        noreply: bool,
    },
    Delete {
        key: &'a [u8],
        noreply: bool,
    },
    Arith {
        key: &'a [u8],
        incr: bool,
        delta: u64,
        noreply: bool,
    },
    Touch {
        key: &'a [u8],
        exptime: i32,
        noreply: bool,
    },
    FlushAll {
        delay: i32,
        noreply: bool,
    },
    Version,
    Verbosity {
        noreply: bool,
    },
    Quit,
    /// `stats` and its argument words.
    Stats {
        args: Keys<'a>,
    },
    /// `cache_memlimit <megabytes> [noreply]` (one more word is ignored,
    /// as memcached ignores it).
    CacheMemlimit {
        megabytes: &'a [u8],
        noreply: bool,
    },
    /// `lru_crawler` and its argument words.
    LruCrawler {
        args: Keys<'a>,
    },
    /// `shutdown [graceful]` and any other words.
    Shutdown {
        args: Keys<'a>,
    },
    Meta(Meta<'a>),
    MetaNoop,
    MetaDebug {
        key: Cow<'a, [u8]>,
        base64: bool,
    },
    /// A storage command over the size limit: its data is being skipped.
    /// A `set` also removes the key, so stale data does not outlive it.
    TooLarge {
        key: Cow<'a, [u8]>,
        unlink: bool,
        noreply: bool,
    },
    /// Reply this error line (unless `noreply`) and go on.
    Error {
        msg: &'static str,
        noreply: bool,
    },
    /// Bytes of a refused data block, skipped.
    Skipped,
}

/// Why the connection must close (memcached closes without a reply).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fatal {
    /// No newline in [`LINE_MAX`] bytes and not a multi-get.
    LineTooLong,
    /// An HTTP request line.
    Http,
}

/// The resumable parser state: bytes of a refused data block still to skip.
#[derive(Clone, Debug, Default)]
pub struct Parser {
    swallow: usize,
}

fn err(msg: &'static str) -> Request<'static> {
    Request::Error {
        msg,
        noreply: false,
    }
}

fn split_tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&c| c == b' ').filter(|t| !t.is_empty())
}

impl Parser {
    pub fn new() -> Self {
        Self::default()
    }

    /// True while a refused data block is being skipped.
    pub fn is_skipping(&self) -> bool {
        self.swallow > 0
    }

    /// Parses one request from the start of `buf`. `Ok(None)`: more bytes
    /// are needed. `Ok(Some((req, n)))`: `n` bytes were used.
    pub fn parse<'a>(
        &mut self,
        buf: &'a [u8],
        lim: &Limits,
    ) -> Result<Option<(Request<'a>, usize)>, Fatal> {
        if self.swallow > 0 {
            if buf.is_empty() {
                return Ok(None);
            }
            let n = self.swallow.min(buf.len());
            self.swallow -= n;
            return Ok(Some((Request::Skipped, n)));
        }
        let Some(nl) = buf.iter().position(|&c| c == b'\n') else {
            if buf.len() > LINE_MAX {
                let lead = buf.iter().take_while(|&&c| c == b' ').count();
                let rest = &buf[lead..];
                if lead > 100 || !(rest.starts_with(b"get ") || rest.starts_with(b"gets ")) {
                    return Err(Fatal::LineTooLong);
                }
            }
            return Ok(None);
        };
        let mut line = &buf[..nl];
        if line.len() > 1 && line[line.len() - 1] == b'\r' {
            line = &line[..line.len() - 1];
        }
        let line_len = nl + 1;
        let mut toks: [&[u8]; MAX_TOKENS + 1] = [&[]; MAX_TOKENS + 1];
        let mut n = 0;
        for t in split_tokens(line) {
            if n == toks.len() {
                break;
            }
            toks[n] = t;
            n += 1;
        }
        let toks = &toks[..n];
        let Some(&cmd) = toks.first() else {
            return Ok(Some((err(e::ERROR), line_len)));
        };
        // Everything after the command word, for multi-key commands.
        let rest_after = |i: usize| -> &'a [u8] {
            let t = toks[i];
            let off = t.as_ptr() as usize - line.as_ptr() as usize;
            &line[off..]
        };
        let noreply = toks.len() > 1 && toks[toks.len() - 1] == b"noreply";
        let req = match cmd {
            b"get" | b"gets" | b"gat" | b"gats" => {
                if toks.len() < 2 {
                    err(e::ERROR)
                } else {
                    let cas = cmd == b"gets" || cmd == b"gats";
                    let (touch, first) = if cmd.starts_with(b"gat") {
                        match parse_i32(toks[1]) {
                            Some(t) => (Some(t), 2),
                            None => return Ok(Some((err(e::BAD_EXPTIME), line_len))),
                        }
                    } else {
                        (None, 1)
                    };
                    let keys = if first < toks.len() {
                        Keys(rest_after(first))
                    } else {
                        Keys(&[])
                    };
                    if keys.iter().any(|k| k.len() > KEY_MAX) {
                        err(e::BAD_FORMAT)
                    } else {
                        Request::Get { cas, touch, keys }
                    }
                }
            }
            b"set" | b"add" | b"replace" | b"append" | b"prepend" | b"cas" => {
                return Ok(self.store(cmd, toks, noreply, buf, line_len, lim));
            }
            b"delete" => {
                if !(2..=4).contains(&toks.len()) {
                    err(e::ERROR)
                } else {
                    let mut bad = false;
                    if toks.len() > 2 {
                        let hold_zero = toks[2] == b"0";
                        bad = !((toks.len() == 3 && (hold_zero || noreply))
                            || (toks.len() == 4 && hold_zero && noreply));
                    }
                    if bad {
                        Request::Error {
                            msg: e::DELETE_USAGE,
                            noreply,
                        }
                    } else if toks[1].len() > KEY_MAX {
                        Request::Error {
                            msg: e::BAD_FORMAT,
                            noreply,
                        }
                    } else {
                        Request::Delete {
                            key: toks[1],
                            noreply,
                        }
                    }
                }
            }
            b"incr" | b"decr" => {
                if !(3..=4).contains(&toks.len()) {
                    err(e::ERROR)
                } else if toks[1].len() > KEY_MAX {
                    Request::Error {
                        msg: e::BAD_FORMAT,
                        noreply,
                    }
                } else {
                    match parse_u64(toks[2]) {
                        Some(delta) => Request::Arith {
                            key: toks[1],
                            incr: cmd == b"incr",
                            delta,
                            noreply,
                        },
                        None => Request::Error {
                            msg: e::BAD_DELTA,
                            noreply,
                        },
                    }
                }
            }
            b"touch" => {
                if !(3..=4).contains(&toks.len()) {
                    err(e::ERROR)
                } else if toks[1].len() > KEY_MAX {
                    Request::Error {
                        msg: e::BAD_FORMAT,
                        noreply,
                    }
                } else {
                    match parse_i32(toks[2]) {
                        Some(exptime) => Request::Touch {
                            key: toks[1],
                            exptime,
                            noreply,
                        },
                        None => Request::Error {
                            msg: e::BAD_EXPTIME,
                            noreply,
                        },
                    }
                }
            }
            b"flush_all" => {
                if toks.len() > 3 {
                    err(e::ERROR)
                } else if toks.len() != if noreply { 2 } else { 1 } {
                    match parse_i32(toks[1]) {
                        Some(delay) => Request::FlushAll { delay, noreply },
                        None => Request::Error {
                            msg: e::BAD_EXPTIME,
                            noreply,
                        },
                    }
                } else {
                    Request::FlushAll { delay: 0, noreply }
                }
            }
            b"version" => Request::Version,
            b"quit" => Request::Quit,
            b"verbosity" => {
                if !(2..=3).contains(&toks.len()) {
                    err(e::ERROR)
                } else if parse_u64(toks[1]).is_none() {
                    Request::Error {
                        msg: e::BAD_FORMAT,
                        noreply,
                    }
                } else {
                    Request::Verbosity { noreply }
                }
            }
            b"stats" => Request::Stats {
                args: if toks.len() > 1 {
                    Keys(rest_after(1))
                } else {
                    Keys(&[])
                },
            },
            b"cache_memlimit" => {
                if (2..=3).contains(&toks.len()) {
                    Request::CacheMemlimit { megabytes: toks[1], noreply }
                } else {
                    err(e::ERROR)
                }
            }
            b"lru_crawler" => Request::LruCrawler {
                args: if toks.len() > 1 { Keys(rest_after(1)) } else { Keys(&[]) },
            },
            b"shutdown" => Request::Shutdown {
                args: if toks.len() > 1 { Keys(rest_after(1)) } else { Keys(&[]) },
            },
            b"mn" => Request::MetaNoop,
            b"me" => {
                if toks.len() < 2 || toks[1].len() > KEY_MAX {
                    err(e::BAD_FORMAT)
                } else if toks.len() >= 3 && toks[2] == b"b" {
                    match base64::decode(toks[1]) {
                        Some(k) => Request::MetaDebug {
                            key: Cow::Owned(k),
                            base64: true,
                        },
                        None => err(e::BAD_FORMAT),
                    }
                } else {
                    Request::MetaDebug {
                        key: Cow::Borrowed(toks[1]),
                        base64: false,
                    }
                }
            }
            b"mg" | b"md" | b"ma" => {
                let mc = match cmd[1] {
                    b'g' => MetaCmd::Get,
                    b'd' => MetaCmd::Delete,
                    _ => MetaCmd::Arith,
                };
                meta_simple(mc, toks, line)
            }
            b"ms" => return Ok(self.meta_set(toks, line, buf, line_len, lim)),
            _ => {
                if toks[toks.len() - 1].starts_with(b"HTTP/") {
                    return Err(Fatal::Http);
                }
                err(e::ERROR)
            }
        };
        Ok(Some((req, line_len)))
    }

    /// The text storage commands; the data block must have arrived.
    fn store<'a>(
        &mut self,
        cmd: &[u8],
        toks: &[&'a [u8]],
        noreply: bool,
        buf: &'a [u8],
        line_len: usize,
        lim: &Limits,
    ) -> Option<(Request<'a>, usize)> {
        let is_cas = cmd == b"cas";
        let want = if is_cas { 6..=7 } else { 5..=6 };
        if !want.contains(&toks.len()) {
            return Some((err(e::ERROR), line_len));
        }
        let bad = Some((
            Request::Error {
                msg: e::BAD_FORMAT,
                noreply,
            },
            line_len,
        ));
        let key = toks[1];
        if key.len() > KEY_MAX {
            return bad;
        }
        let (Some(flags), Some(exptime), Some(vlen)) =
            (parse_flags(toks[2]), parse_i32(toks[3]), parse_i32(toks[4]))
        else {
            return bad;
        };
        let cas = if is_cas {
            match parse_u64(toks[5]) {
                Some(c) => c,
                None => return bad,
            }
        } else {
            0
        };
        if !(0..=i32::MAX - 2).contains(&vlen) {
            return bad;
        }
        let vlen = vlen as usize;
        if item_total_size(key.len(), flags, vlen) > lim.max_item_size {
            self.swallow = vlen + 2;
            let unlink = cmd == b"set";
            return Some((
                Request::TooLarge {
                    key: Cow::Borrowed(key),
                    unlink,
                    noreply,
                },
                line_len,
            ));
        }
        let total = line_len + vlen + 2;
        if buf.len() < total {
            return None;
        }
        if &buf[line_len + vlen..total] != b"\r\n" {
            return Some((
                Request::Error {
                    msg: e::BAD_CHUNK,
                    noreply,
                },
                total,
            ));
        }
        let data = &buf[line_len..line_len + vlen];
        let cmd = match cmd {
            b"set" => StoreCmd::Set,
            b"add" => StoreCmd::Add,
            b"replace" => StoreCmd::Replace,
            b"append" => StoreCmd::Append,
            b"prepend" => StoreCmd::Prepend,
            _ => StoreCmd::Cas,
        };
        Some((
            Request::Store {
                cmd,
                key,
                flags,
                exptime,
                data,
                cas,
                noreply,
            },
            total,
        ))
    }

    fn meta_set<'a>(
        &mut self,
        toks: &[&'a [u8]],
        line: &'a [u8],
        buf: &'a [u8],
        line_len: usize,
        lim: &Limits,
    ) -> Option<(Request<'a>, usize)> {
        if toks.len() < 2 {
            return Some((err(e::ERROR), line_len));
        }
        if toks[1].len() > KEY_MAX || toks.len() == 2 {
            return Some((err(e::BAD_FORMAT), line_len));
        }
        if toks.len() > META_MAX_TOKENS {
            return Some((err(e::MS_FLAGS_TOO_LONG), line_len));
        }
        let vlen = match parse_i32(toks[2]) {
            Some(v) if (0..=i32::MAX - 2).contains(&v) => v as usize,
            _ => return Some((err(e::BAD_FORMAT), line_len)),
        };
        let refuse = |p: &mut Parser, msg| {
            p.swallow = vlen + 2;
            Some((err(msg), line_len))
        };
        let (key, flags) = match preparse(toks[1], toks, 3, line) {
            Ok(x) => x,
            Err(msg) => return refuse(self, msg),
        };
        if let Some(m) = flags.mode {
            if !matches!(m, b'E' | b'A' | b'P' | b'R' | b'S') {
                return refuse(self, e::BAD_MS_MODE);
            }
        }
        if item_total_size(key.len(), flags.client_flags.unwrap_or(0), vlen) > lim.max_item_size {
            self.swallow = vlen + 2;
            return Some((
                Request::TooLarge {
                    key,
                    unlink: true,
                    noreply: false,
                },
                line_len,
            ));
        }
        let total = line_len + vlen + 2;
        if buf.len() < total {
            return None;
        }
        if &buf[line_len + vlen..total] != b"\r\n" {
            // Errors are always returned, even under `q`.
            return Some((err(e::BAD_CHUNK), total));
        }
        let data = &buf[line_len..line_len + vlen];
        Some((
            Request::Meta(Meta {
                cmd: MetaCmd::Set,
                key,
                flags,
                data,
            }),
            total,
        ))
    }
}

/// mg, md, ma: a key and flags, no data.
fn meta_simple<'a>(cmd: MetaCmd, toks: &[&'a [u8]], line: &'a [u8]) -> Request<'a> {
    if toks.len() < 2 {
        return err(e::ERROR);
    }
    if toks[1].len() > KEY_MAX {
        return err(e::BAD_FORMAT);
    }
    if toks.len() > META_MAX_TOKENS {
        return err(e::FLAGS_TOO_LONG);
    }
    match preparse(toks[1], toks, 2, line) {
        Ok((key, flags)) => {
            if cmd == MetaCmd::Arith {
                if let Some(m) = flags.mode {
                    if !matches!(m, b'I' | b'+' | b'D' | b'-') {
                        return err(e::BAD_MA_MODE);
                    }
                }
            }
            Request::Meta(Meta {
                cmd,
                key,
                flags,
                data: &[],
            })
        }
        // md and ma report any flag problem with one message.
        Err(msg) => err(if cmd == MetaCmd::Get {
            msg
        } else {
            e::INVALID_OR_DUPLICATE_FLAG
        }),
    }
}

/// memcached's `_meta_flag_preparse`: a repeated or unknown flag stops at
/// once; a bad token is noted and parsing goes on (the last one noted is
/// the one reported).
fn preparse<'a>(
    raw_key: &'a [u8],
    toks: &[&'a [u8]],
    start: usize,
    line: &'a [u8],
) -> Result<(Cow<'a, [u8]>, MetaFlags<'a>), &'static str> {
    let mut f = MetaFlags::default();
    if start < toks.len() {
        let off = toks[start].as_ptr() as usize - line.as_ptr() as usize;
        f.raw = &line[off..];
    }
    let mut seen = [false; 128];
    let mut error: Option<&'static str> = None;
    let mut key = Cow::Borrowed(raw_key);
    for t in toks.iter().skip(start) {
        let c = t[0];
        if c >= 127 || seen[c as usize] {
            return Err(e::DUPLICATE_FLAG);
        }
        seen[c as usize] = true;
        let arg = &t[1..];
        let i32_arg = |error: &mut Option<&'static str>| {
            let v = parse_i32(arg);
            if v.is_none() {
                *error = Some(e::BAD_TOKEN);
            }
            v
        };
        match c {
            b'b' => match base64::decode(raw_key) {
                Some(k) => {
                    key = Cow::Owned(k);
                    f.base64 = true;
                }
                None => error = Some(e::BAD_KEY_DECODE),
            },
            b'N' => f.vivify = i32_arg(&mut error),
            b'T' => f.ttl = i32_arg(&mut error),
            b'R' => f.recache = i32_arg(&mut error),
            b'l' => f.want_la = true,
            b'h' => f.want_hit = true,
            b'O' => {
                if t.len() > OPAQUE_MAX {
                    error = Some(e::OPAQUE_TOO_LONG);
                }
                f.opaque = Some(t);
            }
            b'P' | b'L' | b'k' | b's' | b't' | b'c' | b'f' => {}
            b'v' => f.value = true,
            b'u' => f.no_bump = true,
            b'q' => f.quiet = true,
            b'x' => f.remove_value = true,
            b'F' => match parse_flags(arg) {
                Some(v) => f.client_flags = Some(v),
                None => error = Some(error.unwrap_or(e::BAD_FORMAT)),
            },
            b'C' | b'E' => match parse_u64(arg) {
                Some(v) if c == b'C' => f.compare_cas = Some(v),
                Some(v) => f.new_cas = Some(v),
                None => error = Some(e::BAD_TOKEN),
            },
            b'M' => {
                if t.len() != 2 {
                    error = Some(e::BAD_M_LENGTH);
                } else {
                    f.mode = Some(t[1]);
                }
            }
            b'J' => match parse_u64(arg) {
                Some(v) => f.initial = Some(v),
                None => error = Some(e::BAD_INITIAL),
            },
            b'D' => match parse_u64(arg) {
                Some(v) => f.delta = Some(v),
                None => error = Some(e::BAD_DELTA_VALUE),
            },
            b'I' => f.invalidate = true,
            _ => return Err(e::INVALID_FLAG),
        }
    }
    match error {
        Some(m) => Err(m),
        None => Ok((key, f)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(input: &[u8]) -> (Request<'_>, usize) {
        Parser::new()
            .parse(input, &Limits::default())
            .unwrap()
            .unwrap()
    }

    #[test]
    fn partial_is_not_an_error() {
        let mut p = Parser::new();
        let full = b"set k 1 0 3\r\nabc\r\n";
        for i in 0..full.len() {
            assert!(
                p.parse(&full[..i], &Limits::default()).unwrap().is_none(),
                "at {i}"
            );
        }
        match p.parse(full, &Limits::default()).unwrap().unwrap() {
            (
                Request::Store {
                    key, flags, data, ..
                },
                n,
            ) => {
                assert_eq!(
                    (key, flags, data, n),
                    (&b"k"[..], 1, &b"abc"[..], full.len())
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn get_keys_and_errors() {
        match one(b"gets a  b c\r\n") {
            (
                Request::Get {
                    cas: true,
                    touch: None,
                    keys,
                },
                13,
            ) => {
                assert_eq!(keys.iter().collect::<Vec<_>>(), vec![&b"a"[..], b"b", b"c"]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            one(b"get\r\n").0,
            Request::Error { msg: e::ERROR, .. }
        ));
        assert!(matches!(
            one(b"gat x k\r\n").0,
            Request::Error {
                msg: e::BAD_EXPTIME,
                ..
            }
        ));
        assert!(matches!(
            one(b"\r\n").0,
            Request::Error { msg: e::ERROR, .. }
        ));
    }

    #[test]
    fn lengths_wrap_into_an_int32_as_in_memcached() {
        // 2^32 + 1 is stored into memcached's int32 as 1.
        match one(b"set k 0 0 4294967297\r\nx\r\n") {
            (Request::Store { data, .. }, 25) => assert_eq!(data, b"x"),
            other => panic!("{other:?}"),
        }
        // 2^31 wraps below zero: a bad command line, as too big a length.
        for line in [
            &b"set k 0 0 2147483648\r\n"[..],
            b"ms k 2147483648\r\n",
            b"set k 0 0 9223372036854775808\r\n",
        ] {
            assert!(
                matches!(
                    one(line).0,
                    Request::Error {
                        msg: e::BAD_FORMAT,
                        ..
                    }
                ),
                "{line:?}"
            );
        }
        match one(b"set k 0 4294967296 1\r\nx\r\n").0 {
            Request::Store { exptime, .. } => assert_eq!(exptime, 0),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn too_large_skips_the_data() {
        let mut p = Parser::new();
        let lim = Limits { max_item_size: 100 };
        let (r, n) = p.parse(b"set k 0 0 200\r\n", &lim).unwrap().unwrap();
        assert!(matches!(r, Request::TooLarge { unlink: true, .. }));
        assert_eq!(n, 15);
        assert!(p.is_skipping());
        let data = vec![b'x'; 202];
        let (r, n) = p.parse(&data[..150], &lim).unwrap().unwrap();
        assert!(matches!(r, Request::Skipped) && n == 150);
        let (_, n) = p.parse(&data[150..], &lim).unwrap().unwrap();
        assert_eq!(n, 52);
        assert!(!p.is_skipping());
    }

    #[test]
    fn meta_flags() {
        match one(b"mg Zm9v b k v O12 T30\r\n").0 {
            Request::Meta(m) => {
                assert_eq!(&*m.key, b"foo");
                assert!(m.flags.base64 && m.flags.value);
                assert_eq!(m.flags.ttl, Some(30));
                assert_eq!(m.flags.opaque, Some(&b"O12"[..]));
                assert_eq!(
                    m.flags.iter().map(|(c, _)| c).collect::<Vec<_>>(),
                    b"bkvOT".to_vec()
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            one(b"mg k v v\r\n").0,
            Request::Error {
                msg: e::DUPLICATE_FLAG,
                ..
            }
        ));
        assert!(matches!(
            one(b"mg k y\r\n").0,
            Request::Error {
                msg: e::INVALID_FLAG,
                ..
            }
        ));
        assert!(matches!(
            one(b"md k y\r\n").0,
            Request::Error {
                msg: e::INVALID_OR_DUPLICATE_FLAG,
                ..
            }
        ));
        assert!(matches!(
            one(b"ma k MX\r\n").0,
            Request::Error {
                msg: e::BAD_MA_MODE,
                ..
            }
        ));
    }

    #[test]
    fn long_line_closes_unless_get() {
        let mut line = b"set ".to_vec();
        line.resize(3000, b'a');
        assert_eq!(
            Parser::new().parse(&line, &Limits::default()).unwrap_err(),
            Fatal::LineTooLong
        );
        let mut get = b"get ".to_vec();
        get.resize(3000, b'a');
        assert!(Parser::new()
            .parse(&get, &Limits::default())
            .unwrap()
            .is_none());
    }
}
