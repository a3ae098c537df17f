//! `cjson.decode`: JSON text as a Lua value.
//!
//! Objects and arrays become tables, `null` becomes `cjson.null`. The text
//! ends at its first zero byte, as a C string does; positions in errors
//! count bytes from 1.

use mlua::{Lua, MultiValue, Result, Table, Value};

use super::super::args::{runtime_error, Args};
use super::super::cnum::strtod;
use super::{null, Config, NESTING_SLOT_LIMIT};

pub(super) fn decode(args: &Args, config: &mut Config) -> Result<MultiValue> {
    if args.len() != 1 {
        return Err(args.bad_argument(1, "expected 1 argument"));
    }
    let text = args.string(1)?;
    let text = text.as_bytes();
    // JSON text starts with an ASCII character, so a zero byte among the
    // first two means UTF-16 or UTF-32.
    if text.len() >= 2 && (text[0] == 0 || text[1] == 0) {
        return Err(runtime_error(
            "JSON parser does not support UTF-16 or UTF-32",
        ));
    }
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    let mut parser = Parser {
        lua: args.lua(),
        config,
        text: &text[..end],
        at: 0,
        depth: 0,
    };
    let first = parser.token();
    // The C decoder starts with its argument on its Lua stack.
    let value = parser.value(first, 1)?;
    let last = parser.token();
    if !matches!(last.kind, Kind::End) {
        return Err(parse_error("the end", &last));
    }
    Ok(MultiValue::from_iter([value]))
}

enum Kind {
    ObjectBegin,
    ObjectEnd,
    ArrayBegin,
    ArrayEnd,
    String(Vec<u8>),
    Number(f64),
    Boolean(bool),
    Null,
    Colon,
    Comma,
    End,
    /// A malformed token, and what is wrong with it.
    Error(&'static str),
}

struct Token {
    kind: Kind,
    /// Byte offset of the token (of the fault, for an error).
    at: usize,
}

/// "Expected `expected` but found ..." for an unexpected token.
fn parse_error(expected: &str, token: &Token) -> mlua::Error {
    let found = match &token.kind {
        Kind::ObjectBegin => "T_OBJ_BEGIN",
        Kind::ObjectEnd => "T_OBJ_END",
        Kind::ArrayBegin => "T_ARR_BEGIN",
        Kind::ArrayEnd => "T_ARR_END",
        Kind::String(_) => "T_STRING",
        Kind::Number(_) => "T_NUMBER",
        Kind::Boolean(_) => "T_BOOLEAN",
        Kind::Null => "T_NULL",
        Kind::Colon => "T_COLON",
        Kind::Comma => "T_COMMA",
        Kind::End => "T_END",
        Kind::Error(fault) => fault,
    };
    runtime_error(format!(
        "Expected {expected} but found {found} at character {}",
        token.at + 1
    ))
}

struct Parser<'a> {
    lua: &'a Lua,
    config: &'a Config,
    text: &'a [u8],
    at: usize,
    depth: i32,
}

impl Parser<'_> {
    /// The byte at `at`, 0 past the end (the C string's terminator).
    fn byte(&self, at: usize) -> u8 {
        self.text.get(at).copied().unwrap_or(0)
    }

    fn token(&mut self) -> Token {
        while matches!(self.byte(self.at), b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
        let at = self.at;
        let single = |kind| Token { kind, at };
        let kind = match self.byte(at) {
            0 => return single(Kind::End),
            b'{' => Kind::ObjectBegin,
            b'}' => Kind::ObjectEnd,
            b'[' => Kind::ArrayBegin,
            b']' => Kind::ArrayEnd,
            b',' => Kind::Comma,
            b':' => Kind::Colon,
            b'"' => return self.string(),
            b'-' | b'0'..=b'9' => {
                if !self.config.decode_invalid_numbers && self.is_invalid_number() {
                    return single(Kind::Error("invalid number"));
                }
                return self.number();
            }
            b'f' | b'i' | b'I' | b'n' | b'N' | b't' | b'+' => return self.word(),
            _ => return single(Kind::Error("invalid token")),
        };
        self.at += 1;
        single(kind)
    }

    /// A token starting with a letter or `+`: a literal, or (when allowed)
    /// a number JSON does not have.
    fn word(&mut self) -> Token {
        let at = self.at;
        let rest = &self.text[at..];
        for (literal, kind) in [
            ("true", Kind::Boolean(true)),
            ("false", Kind::Boolean(false)),
            ("null", Kind::Null),
        ] {
            if rest.starts_with(literal.as_bytes()) {
                self.at += literal.len();
                return Token { kind, at };
            }
        }
        if self.config.decode_invalid_numbers && self.is_invalid_number() {
            return self.number();
        }
        Token {
            kind: Kind::Error("invalid token"),
            at,
        }
    }

    /// Whether the number at `at` is one `strtod` reads but JSON has not:
    /// a leading `+`, hexadecimal, leading zeros, `inf` or `nan`.
    fn is_invalid_number(&self) -> bool {
        let mut p = self.at;
        match self.byte(p) {
            b'+' => return true,
            b'-' => p += 1,
            _ => {}
        }
        if self.byte(p) == b'0' {
            let next = self.byte(p + 1);
            return next | 0x20 == b'x' || next.is_ascii_digit();
        }
        if self.byte(p) <= b'9' {
            return false;
        }
        let word = &self.text[p..];
        word.len() >= 3
            && (word[..3].eq_ignore_ascii_case(b"inf") || word[..3].eq_ignore_ascii_case(b"nan"))
    }

    fn number(&mut self) -> Token {
        let at = self.at;
        match strtod(&self.text[at..]) {
            Some((n, len)) => {
                self.at += len;
                Token {
                    kind: Kind::Number(n),
                    at,
                }
            }
            None => Token {
                kind: Kind::Error("invalid number"),
                at,
            },
        }
    }

    fn string(&mut self) -> Token {
        let start = self.at;
        let mut decoded = Vec::new();
        self.at += 1;
        loop {
            match self.byte(self.at) {
                b'"' => break,
                0 => {
                    return Token {
                        kind: Kind::Error("unexpected end of string"),
                        at: self.at,
                    }
                }
                b'\\' => {
                    let unescaped = match self.byte(self.at + 1) {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b't' => b'\t',
                        b'n' => b'\n',
                        b'f' => 0x0c,
                        b'r' => b'\r',
                        b'u' => match self.unicode_escape(&mut decoded) {
                            Some(()) => continue,
                            None => {
                                return Token {
                                    kind: Kind::Error("invalid unicode escape code"),
                                    at: self.at,
                                }
                            }
                        },
                        _ => {
                            return Token {
                                kind: Kind::Error("invalid escape code"),
                                at: self.at,
                            }
                        }
                    };
                    decoded.push(unescaped);
                    self.at += 2;
                }
                byte => {
                    decoded.push(byte);
                    self.at += 1;
                }
            }
        }
        self.at += 1;
        Token {
            kind: Kind::String(decoded),
            at: start,
        }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        (at..at + 4).try_fold(0, |acc, i| {
            Some(acc << 4 | (self.byte(i) as char).to_digit(16)?)
        })
    }

    /// Appends the UTF-8 of the `\uXXXX` escape at `at` (two escapes for a
    /// surrogate pair, which must be high then low) and moves past it.
    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> Option<()> {
        let mut code = self.hex4(self.at + 2)?;
        let mut len = 6;
        if code & 0xf800 == 0xd800 {
            if code & 0x400 != 0
                || self.byte(self.at + 6) != b'\\'
                || self.byte(self.at + 7) != b'u'
            {
                return None;
            }
            let low = self.hex4(self.at + 8)?;
            if low & 0xfc00 != 0xdc00 {
                return None;
            }
            code = ((code & 0x3ff) << 10 | (low & 0x3ff)) + 0x10000;
            len = 12;
        }
        let c = char::from_u32(code).expect("no lone surrogate gets here");
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        self.at += len;
        Some(())
    }

    /// The value `token` begins, `slots` being the Lua stack slots the C
    /// decoder would be using.
    fn value(&mut self, token: Token, slots: usize) -> Result<Value> {
        Ok(match token.kind {
            Kind::String(bytes) => Value::String(self.lua.create_string(bytes)?),
            Kind::Number(n) => Value::Number(n),
            Kind::Boolean(b) => Value::Boolean(b),
            Kind::Null => null(),
            Kind::ObjectBegin => Value::Table(self.object(slots)?),
            Kind::ArrayBegin => Value::Table(self.array(slots)?),
            _ => return Err(parse_error("value", &token)),
        })
    }

    /// Enters a nested object or array that needs `needed` more slots.
    fn descend(&mut self, slots: usize, needed: usize) -> Result<()> {
        self.depth += 1;
        if self.depth > self.config.decode_max_depth || slots + needed > NESTING_SLOT_LIMIT {
            return Err(runtime_error(format!(
                "Found too many nested data structures ({}) at character {}",
                self.depth, self.at
            )));
        }
        Ok(())
    }

    fn object(&mut self, slots: usize) -> Result<Table> {
        self.descend(slots, 3)?;
        let table = self.lua.create_table()?;
        let mut token = self.token();
        if matches!(token.kind, Kind::ObjectEnd) {
            self.depth -= 1;
            return Ok(table);
        }
        loop {
            let Kind::String(key) = token.kind else {
                return Err(parse_error("object key string", &token));
            };
            let colon = self.token();
            if !matches!(colon.kind, Kind::Colon) {
                return Err(parse_error("colon", &colon));
            }
            let key = self.lua.create_string(key)?;
            let first = self.token();
            let value = self.value(first, slots + 2)?;
            table.raw_set(key, value)?;
            let next = self.token();
            match next.kind {
                Kind::ObjectEnd => break,
                Kind::Comma => token = self.token(),
                _ => return Err(parse_error("comma or object end", &next)),
            }
        }
        self.depth -= 1;
        Ok(table)
    }

    fn array(&mut self, slots: usize) -> Result<Table> {
        self.descend(slots, 2)?;
        let table = self.lua.create_table()?;
        let mut token = self.token();
        if matches!(token.kind, Kind::ArrayEnd) {
            self.depth -= 1;
            return Ok(table);
        }
        for index in 1.. {
            let value = self.value(token, slots + 1)?;
            table.raw_set(index, value)?;
            let next = self.token();
            match next.kind {
                Kind::ArrayEnd => break,
                Kind::Comma => token = self.token(),
                _ => return Err(parse_error("comma or array end", &next)),
            }
        }
        self.depth -= 1;
        Ok(table)
    }
}
