//! Client side: one response unit at a time, borrowed from the read buffer.
//!
//! A text `get` answers with any number of [`Response::Value`] followed by
//! [`Response::End`]; every other reply is one unit.

use crate::errors;
use crate::number::{parse_flags, parse_u64};
use crate::reply::{Code, Status, CRLF, META_VALUE, VALUE};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Response<'a> {
    /// `VALUE key flags len [cas]` and its data block.
    Value {
        key: &'a [u8],
        flags: u32,
        cas: Option<u64>,
        data: &'a [u8],
    },
    /// `END`, closing a text retrieval.
    End,
    /// Meta `VA len flags*` and its data block.
    MetaValue { flags: &'a [u8], data: &'a [u8] },
    /// A meta status line (`HD`, `EN`, `NF`, `NS`, `EX`, `MN`, `ME ...`):
    /// its two-letter code and the rest of the line.
    Meta { code: [u8; 2], flags: &'a [u8] },
    /// `ERROR`, `CLIENT_ERROR ...` or `SERVER_ERROR ...`: the whole line.
    Error(&'a [u8]),
    /// Any other line (`STORED`, `DELETED`, a number, `VERSION ...`, `STAT ...`).
    Line(&'a [u8]),
}

/// A reply that is not memcached's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed;

impl<'a> Response<'a> {
    /// Parses one response unit. `Ok(None)`: more bytes are needed.
    pub fn parse(buf: &'a [u8]) -> Result<Option<(Response<'a>, usize)>, Malformed> {
        let Some(nl) = buf.windows(2).position(|w| w == CRLF) else {
            return Ok(None);
        };
        let line = &buf[..nl];
        let after = nl + 2;
        let block = |len: usize| -> Result<Option<(&'a [u8], usize)>, Malformed> {
            let end = after.checked_add(len).ok_or(Malformed)?;
            if buf.len() < end + 2 {
                return Ok(None);
            }
            if &buf[end..end + 2] != CRLF {
                return Err(Malformed);
            }
            Ok(Some((&buf[after..end], end + 2)))
        };
        if let Some(rest) = line.strip_prefix(VALUE) {
            let mut t = rest.split(|&c| c == b' ');
            let key = t.next().ok_or(Malformed)?;
            let flags = t.next().and_then(parse_flags).ok_or(Malformed)?;
            let len = t.next().and_then(parse_u64).ok_or(Malformed)? as usize;
            let cas = match t.next() {
                Some(c) => Some(parse_u64(c).ok_or(Malformed)?),
                None => None,
            };
            return Ok(block(len)?.map(|(data, n)| {
                (
                    Response::Value {
                        key,
                        flags,
                        cas,
                        data,
                    },
                    n,
                )
            }));
        }
        if line == Status::End.as_str().as_bytes() {
            return Ok(Some((Response::End, after)));
        }
        if let Some(rest) = line.strip_prefix(META_VALUE) {
            let (len, flags) = match rest.iter().position(|&c| c == b' ') {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, &b""[..]),
            };
            let len = parse_u64(len).ok_or(Malformed)? as usize;
            return Ok(block(len)?.map(|(data, n)| (Response::MetaValue { flags, data }, n)));
        }
        if line == errors::ERROR.as_bytes()
            || line.starts_with(b"CLIENT_ERROR ")
            || line.starts_with(b"SERVER_ERROR ")
        {
            return Ok(Some((Response::Error(line), after)));
        }
        if line.len() >= 2
            && Code::ALL.iter().any(|c| &line[..2] == c.as_bytes())
            && (line.len() == 2 || line[2] == b' ')
        {
            let flags = if line.len() > 3 { &line[3..] } else { &b""[..] };
            return Ok(Some((
                Response::Meta {
                    code: [line[0], line[1]],
                    flags,
                },
                after,
            )));
        }
        Ok(Some((Response::Line(line), after)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        let buf = b"VALUE k 5 3 9\r\nabc\r\nEND\r\nVA 2 f1 t-1\r\nhi\r\nHD c3\r\nEN\r\nSTORED\r\nCLIENT_ERROR bad data chunk\r\n";
        let mut pos = 0;
        let mut got = Vec::new();
        while let Some((r, n)) = Response::parse(&buf[pos..]).unwrap() {
            got.push(r);
            pos += n;
        }
        assert_eq!(pos, buf.len());
        assert_eq!(
            got[0],
            Response::Value {
                key: b"k",
                flags: 5,
                cas: Some(9),
                data: b"abc"
            }
        );
        assert_eq!(got[1], Response::End);
        assert_eq!(
            got[2],
            Response::MetaValue {
                flags: b"f1 t-1",
                data: b"hi"
            }
        );
        assert_eq!(
            got[3],
            Response::Meta {
                code: *b"HD",
                flags: b"c3"
            }
        );
        assert_eq!(
            got[4],
            Response::Meta {
                code: *b"EN",
                flags: b""
            }
        );
        assert_eq!(got[5], Response::Line(b"STORED"));
        assert_eq!(got[6], Response::Error(b"CLIENT_ERROR bad data chunk"));
        assert_eq!(Response::parse(b"VALUE k 0 5\r\nab"), Ok(None));
    }
}
