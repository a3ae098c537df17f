//! Resumable request parser: RESP multibulk (`*N\r\n$L\r\n...`) and inline
//! commands (`SET a b\r\n`), with Redis's protocol errors.
//!
//! A [`Frame`] is reused for every request of a connection. [`Frame::parse`]
//! is given the unconsumed part of the read buffer; it either fills the frame
//! with argument ranges and returns how many bytes the request took, returns
//! `Ok(None)` when more bytes are needed (remembering how far it got, so a big
//! request arriving in many reads is not scanned again from the start), or
//! returns the protocol error Redis would send before closing the connection.

use crate::number::parse_i64;

/// Longest inline request, and longest `*`/`$` header line, before it is an
/// error (Redis's `PROTO_INLINE_MAX_SIZE`).
pub const INLINE_MAX_SIZE: usize = 64 * 1024;

/// Argument ranges a frame keeps room for between requests. A request
/// with more (a million-key DEL) gives its room back once done with, so a
/// client that sent one does not pin 16 bytes an argument (more than it
/// sent) for as long as it stays connected.
const KEEP_RANGES: usize = 1024;
/// Inline scratch bytes kept between requests, for the same reason.
const KEEP_SCRATCH: usize = 16 * 1024;

/// Argument count and size limits applied while parsing.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// `proto-max-bulk-len`: the largest single argument.
    pub max_bulk_len: u64,
    /// The largest argument count of one multibulk request.
    pub max_multibulk_len: u64,
    /// Until a client authenticates, Redis allows only small requests.
    pub authenticated: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_bulk_len: 512 * 1024 * 1024, max_multibulk_len: i32::MAX as u64, authenticated: true }
    }
}

/// A protocol error: the connection gets `-ERR Protocol error: ...` and closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    TooBigInline,
    UnbalancedQuotes,
    TooBigMbulkCount,
    InvalidMultibulkLength,
    UnauthenticatedMultibulkLength,
    TooBigBulkCount,
    ExpectedDollar(u8),
    InvalidBulkLength,
    UnauthenticatedBulkLength,
}

impl ParseError {
    /// The error line without the leading `-` and trailing CRLF. Bytes, not
    /// a `String`: Redis echoes the offending byte as it is (`got '\xe9'`).
    pub fn message(&self) -> Vec<u8> {
        let what: &[u8] = match self {
            ParseError::TooBigInline => b"too big inline request",
            ParseError::UnbalancedQuotes => b"unbalanced quotes in request",
            ParseError::TooBigMbulkCount => b"too big mbulk count string",
            ParseError::InvalidMultibulkLength => b"invalid multibulk length",
            ParseError::UnauthenticatedMultibulkLength => b"unauthenticated multibulk length",
            ParseError::TooBigBulkCount => b"too big bulk count string",
            ParseError::ExpectedDollar(c) => {
                let mut m = b"ERR Protocol error: expected '$', got '".to_vec();
                m.push(*c);
                m.push(b'\'');
                return m;
            }
            ParseError::InvalidBulkLength => b"invalid bulk length",
            ParseError::UnauthenticatedBulkLength => b"unauthenticated bulk length",
        };
        let mut m = b"ERR Protocol error: ".to_vec();
        m.extend_from_slice(what);
        m
    }
}

/// One parsed request: argument ranges into the read buffer (multibulk) or
/// into the frame's own scratch buffer (inline, whose arguments may contain
/// escapes and so cannot be borrowed as they are).
#[derive(Default, Debug)]
pub struct Frame {
    ranges: Vec<(usize, usize)>,
    scratch: Vec<u8>,
    inline: bool,
    /// Resume state of a multibulk request that is not complete yet.
    pending: Option<Pending>,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    /// Arguments still to read.
    remaining: usize,
    /// Offset of the next unparsed byte, from the start of the request.
    cursor: usize,
}

/// Where to find a line ending: the offset of the `\r` (multibulk) or `\n`
/// (inline) in `buf[from..]`. Redis finds it with `strchr` on its query
/// buffer, which stops at a NUL byte: a line with a NUL before its end is
/// "not complete yet" there (until it grows past [`INLINE_MAX_SIZE`]), so
/// it is here too.
fn find(buf: &[u8], from: usize, byte: u8) -> Option<usize> {
    let p = buf[from..].iter().position(|&c| c == byte || c == 0)? + from;
    (buf[p] == byte).then_some(p)
}

/// A bulk header at `pos` of up to [`SHORT_DIGITS`] digits with no leading
/// zero (or `$0`), its line ending and payload complete and within the
/// limits: the payload's (start, length). None sends the caller to the
/// general parse, for the same result or the right error.
#[inline(always)]
fn short_bulk(buf: &[u8], pos: usize, limits: &Limits) -> Option<(usize, usize)> {
    let head = buf.get(pos..(pos + SHORT_DIGITS + 3).min(buf.len()))?;
    if head.first() != Some(&b'$') {
        return None;
    }
    let mut len = 0usize;
    let mut i = 1;
    while i < head.len() && head[i].is_ascii_digit() {
        len = len * 10 + usize::from(head[i] - b'0');
        i += 1;
    }
    let digits = i - 1;
    if digits == 0 || (digits > 1 && head[1] == b'0') || head.get(i..i + 2) != Some(b"\r\n") {
        return None;
    }
    if len as u64 > limits.max_bulk_len || (len > 16384 && !limits.authenticated) {
        return None;
    }
    let start = pos + i + 2;
    (buf.len() >= start + len + 2).then_some((start, len))
}

/// Digits [`short_bulk`] reads (a payload under 10 MB); longer lengths
/// take the general path.
const SHORT_DIGITS: usize = 7;

impl Frame {
    pub fn new() -> Self {
        Self::default()
    }

    /// True when a partly received multibulk request is being resumed.
    pub fn is_partial(&self) -> bool {
        self.pending.is_some()
    }

    /// Forgets the last complete request's arguments and gives back the
    /// room a large one left (over [`KEEP_RANGES`] arguments or
    /// [`KEEP_SCRATCH`] inline bytes). Does nothing while a request is
    /// partly parsed. For a caller done with the arguments, so that an idle
    /// connection does not keep them; [`Frame::parse`] does it too as a new
    /// request starts.
    pub fn shrink(&mut self) {
        if self.pending.is_some() {
            return;
        }
        if self.ranges.capacity() > KEEP_RANGES {
            self.ranges = Vec::new();
        }
        self.ranges.clear();
        if self.scratch.capacity() > KEEP_SCRATCH {
            self.scratch = Vec::new();
        }
    }

    /// Parses one request from the start of `buf`. See the module docs.
    /// A request with no arguments (`*0\r\n`, an empty line) is complete with
    /// `argc() == 0`; callers skip it.
    pub fn parse(&mut self, buf: &[u8], limits: &Limits) -> Result<Option<usize>, ParseError> {
        if self.pending.is_none() {
            self.shrink();
            self.inline = false;
            if buf.is_empty() {
                return Ok(None);
            }
            if buf[0] != b'*' {
                return self.parse_inline(buf);
            }
            let Some(cr) = find(buf, 0, b'\r') else {
                if buf.len() > INLINE_MAX_SIZE {
                    return Err(ParseError::TooBigMbulkCount);
                }
                return Ok(None);
            };
            if cr + 2 > buf.len() {
                return Ok(None);
            }
            let count = match parse_i64(&buf[1..cr]) {
                Some(n) if n <= i32::MAX as i64 && (n <= 0 || n as u64 <= limits.max_multibulk_len) => n,
                _ => return Err(ParseError::InvalidMultibulkLength),
            };
            if count > 10 && !limits.authenticated {
                return Err(ParseError::UnauthenticatedMultibulkLength);
            }
            if count <= 0 {
                return Ok(Some(cr + 2));
            }
            // Never reserve from the claimed count: it is only a claim.
            self.ranges.reserve((count as usize).min(1024));
            self.pending = Some(Pending { remaining: count as usize, cursor: cr + 2 });
        }
        let Some(mut st) = self.pending else { return Ok(None) };
        while st.remaining > 0 {
            let pos = st.cursor;
            // The common bulk header, `$` and a few plain digits then CRLF
            // with the payload and its CRLF all here, in one pass; anything
            // else (a partial request, an odd length, an error) takes the
            // general path below, which gives the same answer.
            if let Some((start, len)) = short_bulk(buf, pos, limits) {
                self.ranges.push((start, len));
                st.cursor = start + len + 2;
                st.remaining -= 1;
                continue;
            }
            let Some(cr) = find(buf, pos, b'\r') else {
                self.pending = Some(st);
                if buf.len() - pos > INLINE_MAX_SIZE {
                    self.pending = None;
                    return Err(ParseError::TooBigBulkCount);
                }
                return Ok(None);
            };
            if cr + 2 > buf.len() {
                self.pending = Some(st);
                return Ok(None);
            }
            if buf[pos] != b'$' {
                self.pending = None;
                return Err(ParseError::ExpectedDollar(buf[pos]));
            }
            let len = match parse_i64(&buf[pos + 1..cr]) {
                Some(n) if n >= 0 && n as u64 <= limits.max_bulk_len => n as usize,
                _ => {
                    self.pending = None;
                    return Err(ParseError::InvalidBulkLength);
                }
            };
            if len > 16384 && !limits.authenticated {
                self.pending = None;
                return Err(ParseError::UnauthenticatedBulkLength);
            }
            let start = cr + 2;
            // The bulk and its CRLF must all be here; like Redis, the two
            // bytes after the payload are skipped without being checked.
            if buf.len() < start + len + 2 {
                self.pending = Some(st);
                return Ok(None);
            }
            self.ranges.push((start, len));
            st.cursor = start + len + 2;
            st.remaining -= 1;
        }
        self.pending = None;
        Ok(Some(st.cursor))
    }

    fn parse_inline(&mut self, buf: &[u8]) -> Result<Option<usize>, ParseError> {
        let Some(nl) = find(buf, 0, b'\n') else {
            if buf.len() > INLINE_MAX_SIZE {
                return Err(ParseError::TooBigInline);
            }
            return Ok(None);
        };
        let mut line = &buf[..nl];
        if let Some(stripped) = line.strip_suffix(b"\r") {
            line = stripped;
        }
        self.inline = true;
        self.scratch.clear();
        split_args(line, &mut self.scratch, &mut self.ranges).map_err(|()| ParseError::UnbalancedQuotes)?;
        Ok(Some(nl + 1))
    }

    /// Number of arguments of the last complete request.
    pub fn argc(&self) -> usize {
        self.ranges.len()
    }

    /// True when the last request was an inline command.
    pub fn is_inline(&self) -> bool {
        self.inline
    }

    /// The argument ranges of the last complete request, as offsets into
    /// the buffer given to [`Frame::parse`] (meaningless for an inline
    /// request, whose arguments live in the frame): lets a caller keep
    /// several parsed requests of one read without copying their bytes.
    pub fn ranges(&self) -> &[(usize, usize)] {
        &self.ranges
    }

    /// The arguments of the last complete request. `buf` must be the same
    /// buffer (starting at the same byte) that was given to [`Frame::parse`].
    pub fn args<'a>(&'a self, buf: &'a [u8]) -> Args<'a> {
        let base = if self.inline { &self.scratch[..] } else { buf };
        Args { base, ranges: &self.ranges }
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn hex_val(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Splits an inline line like Redis's `sdssplitargs`: blanks separate
/// arguments, `"..."` understands `\n \r \t \b \a \xHH` escapes, `'...'`
/// understands `\'`, and a closing quote must be followed by a blank.
fn split_args(line: &[u8], out: &mut Vec<u8>, ranges: &mut Vec<(usize, usize)>) -> Result<(), ()> {
    let mut p = 0;
    let at = |i: usize| -> u8 { line.get(i).copied().unwrap_or(0) };
    loop {
        while p < line.len() && is_space(line[p]) {
            p += 1;
        }
        if p >= line.len() {
            return Ok(());
        }
        let start = out.len();
        let (mut in_dq, mut in_sq) = (false, false);
        loop {
            let c = at(p);
            if in_dq {
                if c == b'\\' && at(p + 1) == b'x' && hex_val(at(p + 2)).is_some() && hex_val(at(p + 3)).is_some() {
                    out.push(hex_val(at(p + 2)).unwrap_or(0) * 16 + hex_val(at(p + 3)).unwrap_or(0));
                    p += 3;
                } else if c == b'\\' && at(p + 1) != 0 {
                    p += 1;
                    out.push(match at(p) {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                } else if c == b'"' {
                    if at(p + 1) != 0 && !is_space(at(p + 1)) {
                        return Err(());
                    }
                    p += 1;
                    break;
                } else if c == 0 {
                    return Err(());
                } else {
                    out.push(c);
                }
            } else if in_sq {
                if c == b'\\' && at(p + 1) == b'\'' {
                    p += 1;
                    out.push(b'\'');
                } else if c == b'\'' {
                    if at(p + 1) != 0 && !is_space(at(p + 1)) {
                        return Err(());
                    }
                    p += 1;
                    break;
                } else if c == 0 {
                    return Err(());
                } else {
                    out.push(c);
                }
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => break,
                    b'"' => in_dq = true,
                    b'\'' => in_sq = true,
                    _ => out.push(c),
                }
            }
            p += 1;
        }
        ranges.push((start, out.len() - start));
    }
}

/// The arguments of one request, borrowed.
#[derive(Clone, Copy, Debug)]
pub struct Args<'a> {
    base: &'a [u8],
    ranges: &'a [(usize, usize)],
}

impl<'a> Args<'a> {
    /// Builds arguments over any buffer and ranges (used by tests and by
    /// callers that queue requests, e.g. MULTI).
    pub fn from_parts(base: &'a [u8], ranges: &'a [(usize, usize)]) -> Self {
        Args { base, ranges }
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Argument `i`; panics if out of range (arity is checked before use).
    #[inline]
    pub fn get(&self, i: usize) -> &'a [u8] {
        let (s, l) = self.ranges[i];
        &self.base[s..s + l]
    }

    pub fn try_get(&self, i: usize) -> Option<&'a [u8]> {
        self.ranges.get(i).map(|&(s, l)| &self.base[s..s + l])
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'a [u8]> + 'a {
        let base = self.base;
        self.ranges.iter().map(move |&(s, l)| &base[s..s + l])
    }

    /// The arguments from `from` on.
    pub fn tail(&self, from: usize) -> Args<'a> {
        Args { base: self.base, ranges: &self.ranges[from.min(self.ranges.len())..] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(input: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, ParseError> {
        let mut f = Frame::new();
        let mut pos = 0;
        let mut out = Vec::new();
        while let Some(n) = f.parse(&input[pos..], &Limits::default())? {
            if f.argc() > 0 {
                out.push(f.args(&input[pos..]).iter().map(|a| a.to_vec()).collect());
            }
            pos += n;
        }
        Ok(out)
    }

    fn v(parts: &[&str]) -> Vec<Vec<u8>> {
        parts.iter().map(|p| p.as_bytes().to_vec()).collect()
    }

    #[test]
    fn multibulk() {
        let r = parse_all(b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n*1\r\n$4\r\nPING\r\n").unwrap();
        assert_eq!(r, vec![v(&["GET", "a"]), v(&["PING"])]);
    }

    #[test]
    fn empty_requests_are_skipped() {
        let r = parse_all(b"*0\r\n*-1\r\n\r\n\n*1\r\n$4\r\nPING\r\n").unwrap();
        assert_eq!(r, vec![v(&["PING"])]);
    }

    #[test]
    fn incomplete_is_not_an_error() {
        let full = b"*2\r\n$3\r\nGET\r\n$5\r\nhello\r\n";
        for cut in 0..full.len() {
            let mut f = Frame::new();
            assert_eq!(f.parse(&full[..cut], &Limits::default()), Ok(None), "cut {cut}");
            // Resuming on the full buffer finishes the request.
            assert_eq!(f.parse(full, &Limits::default()), Ok(Some(full.len())));
            assert_eq!(f.args(full).get(1), b"hello");
        }
    }

    #[test]
    fn inline_quotes() {
        let r = parse_all(b"set \"a b\" 'c\\'d' \"\\x41\\n\"\r\n").unwrap();
        assert_eq!(r, vec![vec![b"set".to_vec(), b"a b".to_vec(), b"c'd".to_vec(), b"A\n".to_vec()]]);
        assert_eq!(parse_all(b"set \"abc\r\n"), Err(ParseError::UnbalancedQuotes));
        assert_eq!(parse_all(b"set \"abc\"x\r\n"), Err(ParseError::UnbalancedQuotes));
        assert_eq!(parse_all(b"set 'abc\n"), Err(ParseError::UnbalancedQuotes));
        assert_eq!(parse_all(b"get \"\"\n").unwrap(), vec![v(&["get", ""])]);
    }

    #[test]
    fn errors_match_redis() {
        assert_eq!(parse_all(b"*abc\r\n"), Err(ParseError::InvalidMultibulkLength));
        assert_eq!(parse_all(b"*3000000000\r\n"), Err(ParseError::InvalidMultibulkLength));
        assert_eq!(parse_all(b"*1\r\nfoo\r\n"), Err(ParseError::ExpectedDollar(b'f')));
        assert_eq!(parse_all(b"*1\r\n$-1\r\n"), Err(ParseError::InvalidBulkLength));
        assert_eq!(parse_all(b"*1\r\n$600000000\r\n"), Err(ParseError::InvalidBulkLength));
        // Headers the short path leaves to the general one, for its answer.
        assert_eq!(parse_all(b"*1\r\n$01\r\na\r\n"), Err(ParseError::InvalidBulkLength));
        assert_eq!(parse_all(b"*1\r\n$\r\n"), Err(ParseError::InvalidBulkLength));
        assert_eq!(parse_all(b"*1\r\n$1x\r\na\r\n"), Err(ParseError::InvalidBulkLength));
        assert_eq!(parse_all(b"*1\r\n$+1\r\na\r\n"), Err(ParseError::InvalidBulkLength));
        assert_eq!(parse_all(b"*1\r\n$0\r\n\r\n").unwrap(), vec![v(&[""])]);
        assert_eq!(parse_all(b"*1\r\n$1\rxaxx").unwrap(), vec![v(&["a"])]);
        let long = format!("*1\r\n${}\r\n{}\r\n", 12_345_678, "a".repeat(12_345_678));
        assert_eq!(parse_all(long.as_bytes()).unwrap()[0][0].len(), 12_345_678);
        let big = vec![b'a'; INLINE_MAX_SIZE + 1];
        assert_eq!(parse_all(&big), Err(ParseError::TooBigInline));
        let mut mb = b"*".to_vec();
        mb.extend(vec![b'1'; INLINE_MAX_SIZE + 1]);
        assert_eq!(parse_all(&mb), Err(ParseError::TooBigMbulkCount));
        let mut bb = b"*1\r\n$".to_vec();
        bb.extend(vec![b'1'; INLINE_MAX_SIZE + 1]);
        assert_eq!(parse_all(&bb), Err(ParseError::TooBigBulkCount));
        assert_eq!(ParseError::ExpectedDollar(b'x').message(), b"ERR Protocol error: expected '$', got 'x'");
        assert_eq!(ParseError::ExpectedDollar(0xe9).message(), b"ERR Protocol error: expected '$', got '\xe9'");
        assert_eq!(ParseError::InvalidBulkLength.message(), b"ERR Protocol error: invalid bulk length");
    }

    #[test]
    fn unauthenticated_limits() {
        let l = Limits { authenticated: false, ..Limits::default() };
        let mut f = Frame::new();
        assert_eq!(f.parse(b"*11\r\n", &l), Err(ParseError::UnauthenticatedMultibulkLength));
        let mut f = Frame::new();
        assert_eq!(f.parse(b"*1\r\n$16385\r\n", &l), Err(ParseError::UnauthenticatedBulkLength));
    }

    #[test]
    fn nul_before_line_end_is_incomplete() {
        // Redis finds line ends with strchr: a NUL first means "not yet".
        for input in [&b"PING\0x\r\n"[..], b"*1\0\r\n", b"*1\r\n$4\0\r\nPING\r\n"] {
            let mut f = Frame::new();
            assert_eq!(f.parse(input, &Limits::default()), Ok(None), "{input:?}");
        }
        // Past INLINE_MAX_SIZE it is the usual "too big" error.
        let mut big = b"PING\0".to_vec();
        big.extend(vec![b'a'; INLINE_MAX_SIZE]);
        big.extend_from_slice(b"\r\n");
        assert_eq!(Frame::new().parse(&big, &Limits::default()), Err(ParseError::TooBigInline));
        // Inside a bulk payload NUL is just a byte.
        let r = parse_all(b"*2\r\n$4\r\nECHO\r\n$3\r\n\0\r\0\r\n").unwrap();
        assert_eq!(r, vec![vec![b"ECHO".to_vec(), b"\0\r\0".to_vec()]]);
    }

    #[test]
    fn a_large_request_gives_its_room_back() {
        let n = 100_000;
        let mut big = format!("*{n}\r\n").into_bytes();
        for _ in 0..n {
            big.extend_from_slice(b"$1\r\nx\r\n");
        }
        let mut f = Frame::new();
        assert_eq!(f.parse(&big, &Limits::default()), Ok(Some(big.len())));
        assert_eq!(f.argc(), n);
        f.shrink();
        assert_eq!((f.argc(), f.ranges.capacity()), (0, 0));
        // The next request gives it back too, without shrink().
        f.parse(&big, &Limits::default()).unwrap();
        assert_eq!(f.parse(b"*1\r\n$4\r\nPING\r\n", &Limits::default()), Ok(Some(14)));
        assert!(f.ranges.capacity() <= KEEP_RANGES);
        let mut line = b"ECHO ".to_vec();
        line.extend(vec![b'a'; 40_000]);
        line.extend_from_slice(b"\r\n");
        f.parse(&line, &Limits::default()).unwrap();
        f.shrink();
        assert!(f.scratch.capacity() <= KEEP_SCRATCH);
        // Small requests keep their room: no allocation per request.
        let ping = b"*1\r\n$4\r\nPING\r\n";
        f.parse(ping, &Limits::default()).unwrap();
        let cap = f.ranges.capacity();
        f.shrink();
        f.parse(ping, &Limits::default()).unwrap();
        assert_eq!(f.ranges.capacity(), cap);
    }

    #[test]
    fn shrink_keeps_a_partial_request() {
        let full = b"*2\r\n$3\r\nGET\r\n$5\r\nhello\r\n";
        let mut f = Frame::new();
        assert_eq!(f.parse(&full[..20], &Limits::default()), Ok(None));
        f.shrink();
        assert_eq!(f.parse(full, &Limits::default()), Ok(Some(full.len())));
        assert_eq!(f.args(full).get(0), b"GET");
        assert_eq!(f.args(full).get(1), b"hello");
    }

    #[test]
    fn claimed_length_does_not_allocate() {
        let mut f = Frame::new();
        assert_eq!(f.parse(b"*2000000000\r\n", &Limits::default()), Ok(None));
        assert!(f.ranges.capacity() <= 1024);
    }
}
