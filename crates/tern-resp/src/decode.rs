//! Client-side RESP2/RESP3 reply decoding, for the benchmark client and
//! tern-client.
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
//!
//! A client that does need the values (tern-client) uses [`decode_value`],
//! which frames every element with [`decode`] and only copies them out.

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

/// One reply with its values, owned: what a client hands back to its caller.
///
/// Built by [`decode_value`] from the same walk as [`decode`]; a RESP2 null
/// bulk or null array and RESP3's `_` are all [`Value::Null`].
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Simple(Vec<u8>),
    Error(Vec<u8>),
    Int(i64),
    Bulk(Vec<u8>),
    Null,
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
    Set(Vec<Value>),
    Push(Vec<Value>),
    Double(f64),
    Boolean(bool),
    BigNumber(Vec<u8>),
    /// The text of a verbatim string, without its `txt:` format prefix.
    Verbatim(Vec<u8>),
}

/// Decodes the first complete reply of `buf` with its values:
/// `Ok(Some((value, consumed)))`, or `Ok(None)` when `buf` holds only part
/// of one. Completeness is settled by one [`decode`] of the whole reply
/// before anything is allocated, so a partial reply costs no allocation.
pub fn decode_value(buf: &[u8]) -> Result<Option<(Value, usize)>, DecodeError> {
    let Some((_, used)) = decode(buf)? else { return Ok(None) };
    let (v, n) = value_at(&buf[..used])?;
    debug_assert_eq!(n, used);
    Ok(Some((v, used)))
}

/// Builds the (known complete) reply at the start of `buf`, returning it and
/// its length. Each element is located by [`decode`] itself, so the framing
/// rules live in one place.
fn value_at(buf: &[u8]) -> Result<(Value, usize), DecodeError> {
    let (r, used) = decode(buf)?.ok_or(DecodeError::BadLength)?;
    let text = || buf[r.text.clone()].to_vec();
    let v = match r.kind {
        Kind::Simple => Value::Simple(text()),
        Kind::Error => Value::Error(text()),
        Kind::Int => Value::Int(crate::parse_i64(&buf[r.text.clone()]).ok_or(DecodeError::BadLength)?),
        Kind::Bulk => Value::Bulk(text()),
        Kind::Null => Value::Null,
        Kind::Double => Value::Double(crate::parse_f64(&buf[r.text.clone()]).ok_or(DecodeError::BadLength)?),
        Kind::Boolean => Value::Boolean(&buf[r.text.clone()] == b"t"),
        Kind::BigNumber => Value::BigNumber(text()),
        Kind::Verbatim => Value::Verbatim(buf[r.text.clone()].get(4..).unwrap_or_default().to_vec()),
        Kind::Array | Kind::Set | Kind::Push | Kind::Map => {
            let per = if r.kind == Kind::Map { 2 } else { 1 };
            // Elements start where the aggregate's (empty) text range does.
            let mut at = r.text.start;
            let mut items = Vec::with_capacity(r.len.saturating_mul(per).min(used));
            for _ in 0..r.len * per {
                let (item, n) = value_at(&buf[at..used])?;
                items.push(item);
                at += n;
            }
            match r.kind {
                Kind::Array => Value::Array(items),
                Kind::Set => Value::Set(items),
                Kind::Push => Value::Push(items),
                _ => {
                    let mut pairs = Vec::with_capacity(r.len);
                    let mut it = items.into_iter();
                    while let (Some(k), Some(v)) = (it.next(), it.next()) {
                        pairs.push((k, v));
                    }
                    Value::Map(pairs)
                }
            }
        }
    };
    Ok((v, used))
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
    #[test]
    fn values() {
        let b = b"*5\r\n$3\r\nfoo\r\n$-1\r\n:-7\r\n*2\r\n+OK\r\n-ERR x\r\n_\r\n";
        let (v, n) = decode_value(b).unwrap().unwrap();
        assert_eq!(n, b.len());
        assert_eq!(
            v,
            Value::Array(vec![
                Value::Bulk(b"foo".to_vec()),
                Value::Null,
                Value::Int(-7),
                Value::Array(vec![Value::Simple(b"OK".to_vec()), Value::Error(b"ERR x".to_vec())]),
                Value::Null,
            ])
        );
        let b = b"|1\r\n+a\r\n:1\r\n%2\r\n+k\r\n,1.5\r\n$1\r\nb\r\n#t\r\n";
        let (v, n) = decode_value(b).unwrap().unwrap();
        assert_eq!(n, b.len());
        assert_eq!(
            v,
            Value::Map(vec![
                (Value::Simple(b"k".to_vec()), Value::Double(1.5)),
                (Value::Bulk(b"b".to_vec()), Value::Boolean(true)),
            ])
        );
        let (v, _) = decode_value(b"=8\r\ntxt:abcd\r\n").unwrap().unwrap();
        assert_eq!(v, Value::Verbatim(b"abcd".to_vec()));
        let (v, _) = decode_value(b"~2\r\n:1\r\n(12345678901234567890\r\n").unwrap().unwrap();
        assert_eq!(v, Value::Set(vec![Value::Int(1), Value::BigNumber(b"12345678901234567890".to_vec())]));
        assert_eq!(decode_value(b":x\r\n"), Err(DecodeError::BadLength));
    }

    #[test]
    fn value_prefixes_are_incomplete_and_replies_follow_each_other() {
        let b = b"*2\r\n$3\r\nfoo\r\n%1\r\n+k\r\n:1\r\n+OK\r\n";
        let first = b.len() - 5;
        for i in 0..first {
            assert_eq!(decode_value(&b[..i]), Ok(None), "prefix {i}");
        }
        let (_, n) = decode_value(b).unwrap().unwrap();
        assert_eq!(n, first);
        assert_eq!(decode_value(&b[n..]).unwrap().unwrap(), (Value::Simple(b"OK".to_vec()), 5));
    }

    proptest::proptest! {
        /// Whatever the encoder writes, decode_value reads back, in RESP2
        /// and RESP3, for arrays of bulks, nulls and integers.
        #[test]
        fn encoder_round_trip(items in proptest::collection::vec(proptest::option::of(proptest::collection::vec(proptest::num::u8::ANY, 0..40)), 0..20), n in proptest::num::i64::ANY, resp3 in proptest::bool::ANY) {
            let e = crate::Encoder { resp3 };
            let mut out = Vec::new();
            e.array(&mut out, items.len() + 1);
            for it in &items {
                match it { Some(b) => e.bulk(&mut out, b), None => e.null(&mut out) }
            }
            e.int(&mut out, n);
            let (v, used) = decode_value(&out).unwrap().unwrap();
            proptest::prop_assert_eq!(used, out.len());
            let mut want: Vec<Value> = items.iter().map(|it| it.clone().map_or(Value::Null, Value::Bulk)).collect();
            want.push(Value::Int(n));
            proptest::prop_assert_eq!(v, Value::Array(want));
        }
    }
}
