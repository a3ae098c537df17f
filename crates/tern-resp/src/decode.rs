//! Client-side RESP2/RESP3 reply decoding, for the benchmark client.
//!
//! A load generator does not need the reply's values, only what kind of
//! reply it was, how long it is, and for reads whether each key was a hit
//! or a miss. So [`decode`] walks one complete reply without allocating and
//! returns a [`Reply`] summary: its type, its top-level element count, how
//! many of those elements were nulls, and how many errors it held at any
//! depth.
//!
//! Like the request parser it is resumable: an incomplete reply is
//! `Ok(None)` and the caller decodes again from the same start once more
//! bytes are in. A RESP3 attribute (`|`) is skipped and the reply after it
//! is returned, with the attribute's bytes included in the consumed length.

use std::ops::Range;

/// Nesting deeper than this is refused rather than recursed into: a server
/// never sends it, and a hostile stream must not overflow the stack.
pub const MAX_DEPTH: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Simple,
    Error,
    Int,
    Bulk,
    Null,
    Array,
    Map,
    Set,
    Push,
    Double,
    Boolean,
    BigNumber,
    Verbatim,
}

/// Summary of one decoded reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub kind: Kind,
    /// Elements of an aggregate (pairs for a map); 0 otherwise.
    pub len: usize,
    /// Top-level elements of an aggregate that are null (`$-1`, `*-1`, `_`):
    /// the misses of an MGET.
    pub nulls: usize,
    /// Error replies inside, at any depth, including the reply itself.
    pub errors: usize,
    /// The text of a simple string, error, integer, double, boolean or big
    /// number (without type byte and CRLF), or the payload of a bulk or
    /// verbatim string, as a range of the input.
    pub text: Range<usize>,
}

impl Reply {
    /// True for a reply that carries no value: RESP2 `$-1`/`*-1`, RESP3 `_`.
    pub fn is_null(&self) -> bool {
        self.kind == Kind::Null
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// A byte that starts no RESP type.
    BadType(u8),
    /// A length or integer line that is not a number.
    BadLength,
    /// A bulk payload not followed by CRLF.
    BadTerminator,
    TooDeep,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::BadType(b) => write!(f, "unexpected reply type byte 0x{b:02x}"),
            DecodeError::BadLength => f.write_str("malformed length in reply"),
            DecodeError::BadTerminator => f.write_str("bulk reply not terminated by CRLF"),
            DecodeError::TooDeep => f.write_str("reply nested too deeply"),
        }
    }
}

impl std::error::Error for DecodeError {}

type Step = Result<Option<(Reply, usize)>, DecodeError>;

/// Decodes the first complete reply of `buf`: `Ok(Some((reply, consumed)))`,
/// or `Ok(None)` when `buf` holds only part of one.
pub fn decode(buf: &[u8]) -> Step {
    decode_at(buf, 0, 0)
}

fn line_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(off) = buf.get(i..)?.iter().position(|&c| c == b'\r') {
        let cr = i + off;
        match buf.get(cr + 1) {
            Some(b'\n') => return Some(cr),
            Some(_) => i = cr + 1,
            None => return None,
        }
    }
    None
}

fn parse_len(s: &[u8]) -> Result<i64, DecodeError> {
    let (neg, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 18 {
        return Err(DecodeError::BadLength);
    }
    let mut n: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return Err(DecodeError::BadLength);
        }
        n = n * 10 + i64::from(c - b'0');
    }
    Ok(if neg { -n } else { n })
}

fn scalar(kind: Kind, text: Range<usize>) -> Reply {
    let errors = usize::from(kind == Kind::Error);
    Reply { kind, len: 0, nulls: 0, errors, text }
}

fn decode_at(buf: &[u8], start: usize, depth: usize) -> Step {
    if depth > MAX_DEPTH {
        return Err(DecodeError::TooDeep);
    }
    let Some(&ty) = buf.get(start) else { return Ok(None) };
    let Some(eol) = line_end(buf, start + 1) else { return Ok(None) };
    let head = start + 1..eol;
    let after = eol + 2;
    let simple = |kind| Ok(Some((scalar(kind, head.clone()), after)));
    match ty {
        b'+' => simple(Kind::Simple),
        b'-' => simple(Kind::Error),
        b':' => simple(Kind::Int),
        b',' => simple(Kind::Double),
        b'#' => simple(Kind::Boolean),
        b'(' => simple(Kind::BigNumber),
        b'_' => simple(Kind::Null),
        b'$' | b'=' | b'!' => {
            let n = parse_len(&buf[head.clone()])?;
            if n < 0 {
                return Ok(Some((scalar(Kind::Null, after..after), after)));
            }
            let end = after + n as usize;
            if buf.len() < end + 2 {
                return Ok(None);
            }
            if &buf[end..end + 2] != b"\r\n" {
                return Err(DecodeError::BadTerminator);
            }
            let kind = match ty {
                b'$' => Kind::Bulk,
                b'=' => Kind::Verbatim,
                _ => Kind::Error,
            };
            Ok(Some((scalar(kind, after..end), end + 2)))
        }
        b'*' | b'%' | b'~' | b'>' | b'|' => {
            let n = parse_len(&buf[head.clone()])?;
            if n < 0 {
                return Ok(Some((scalar(Kind::Null, after..after), after)));
            }
            let n = n as usize;
            let per = if ty == b'%' || ty == b'|' { 2 } else { 1 };
            let mut at = after;
            let mut nulls = 0;
            let mut errors = 0;
            for i in 0..n * per {
                let Some((item, next)) = decode_at(buf, at, depth + 1)? else { return Ok(None) };
                // For a map only the values can be "misses".
                if item.is_null() && (per == 1 || i % 2 == 1) {
                    nulls += 1;
                }
                errors += item.errors;
                at = next;
            }
            if ty == b'|' {
                // An attribute annotates the reply that follows it.
                return decode_at(buf, at, depth + 1);
            }
            let kind = match ty {
                b'*' => Kind::Array,
                b'%' => Kind::Map,
                b'~' => Kind::Set,
                _ => Kind::Push,
            };
            Ok(Some((Reply { kind, len: n, nulls, errors, text: after..after }, at)))
        }
        other => Err(DecodeError::BadType(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(b: &[u8]) -> (Reply, usize) {
        decode(b).unwrap().unwrap()
    }

    #[test]
    fn scalars() {
        let (r, n) = one(b"+OK\r\n");
        assert_eq!((r.kind, n, r.text), (Kind::Simple, 5, 1..3));
        let (r, _) = one(b"-ERR unknown command 'x'\r\n");
        assert_eq!((r.kind, r.errors), (Kind::Error, 1));
        assert_eq!(one(b":42\r\n").0.kind, Kind::Int);
        assert_eq!(one(b"$-1\r\n").0.kind, Kind::Null);
        assert_eq!(one(b"_\r\n").0.kind, Kind::Null);
        assert_eq!(one(b"*-1\r\n").0.kind, Kind::Null);
        let (r, n) = one(b"$5\r\nhe\r\no\r\n");
        assert_eq!((r.kind, n, r.text), (Kind::Bulk, 11, 4..9));
        assert_eq!(one(b"!3\r\nERR\r\n").0.errors, 1);
        assert_eq!(one(b",1.5\r\n").0.kind, Kind::Double);
    }

    #[test]
    fn aggregates_count_nulls_and_nested_errors() {
        let b = b"*4\r\n$1\r\na\r\n$-1\r\n_\r\n*2\r\n-ERR x\r\n:1\r\n";
        let (r, n) = one(b);
        assert_eq!((r.kind, r.len, r.nulls, r.errors, n), (Kind::Array, 4, 2, 1, b.len()));
        let (r, _) = one(b"%2\r\n+a\r\n_\r\n_\r\n:1\r\n");
        assert_eq!((r.kind, r.len, r.nulls), (Kind::Map, 2, 1));
    }

    #[test]
    fn attribute_is_skipped() {
        let b = b"|1\r\n+ttl\r\n:3\r\n:7\r\n";
        let (r, n) = one(b);
        assert_eq!((r.kind, n), (Kind::Int, b.len()));
    }

    #[test]
    fn every_prefix_is_incomplete() {
        let b = b"*3\r\n$3\r\nfoo\r\n*1\r\n$-1\r\n%1\r\n+k\r\n:1\r\n";
        for i in 0..b.len() {
            assert_eq!(decode(&b[..i]), Ok(None), "prefix {i}");
        }
        assert_eq!(one(b).1, b.len());
    }

    #[test]
    fn consecutive_replies() {
        let b = b"+OK\r\n$1\r\nx\r\n";
        let (_, n) = one(b);
        let (r, m) = one(&b[n..]);
        assert_eq!((r.kind, n + m), (Kind::Bulk, b.len()));
    }

    #[test]
    fn malformed() {
        assert_eq!(decode(b"?x\r\n"), Err(DecodeError::BadType(b'?')));
        assert_eq!(decode(b"$x\r\n"), Err(DecodeError::BadLength));
        assert_eq!(decode(b"$1\r\nab\r\n"), Err(DecodeError::BadTerminator));
        let deep = b"*1\r\n".repeat(MAX_DEPTH + 2);
        assert_eq!(decode(&deep), Err(DecodeError::TooDeep));
    }

    /// The depth limit, at the limit: arrays nested MAX_DEPTH deep around a
    /// scalar decode; one more level is refused before it is recursed into.
    #[test]
    fn depth_limit_at_the_limit() {
        let mut ok = b"*1\r\n".repeat(MAX_DEPTH);
        ok.extend_from_slice(b":1\r\n");
        let (r, n) = decode(&ok).unwrap().unwrap();
        assert_eq!((r.kind, n), (Kind::Array, ok.len()));
        let mut deep = b"*1\r\n".repeat(MAX_DEPTH + 1);
        deep.extend_from_slice(b":1\r\n");
        assert_eq!(decode(&deep), Err(DecodeError::TooDeep));
        // A million levels cost no stack either.
        assert_eq!(decode(&b"*1\r\n".repeat(1_000_000)), Err(DecodeError::TooDeep));
    }
}
