//! Client side of the memcached text and meta protocols: just enough to
//! send the benchmark's requests and to classify each reply.

/// How the reply to one request ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `get`/`gets`: any number of `VALUE` blocks, then `END`.
    Values,
    /// One line, plus a data block after a meta `VA <size>` line.
    Line,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct McReply {
    pub error: bool,
    /// Values returned (`VALUE` blocks, or a meta `VA`/`HD` to an `mg`).
    pub values: u32,
    /// A meta `EN` (miss).
    pub miss: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub struct McError(pub String);

fn line(buf: &[u8], from: usize) -> Option<(&[u8], usize)> {
    let rel = buf.get(from..)?.windows(2).position(|w| w == b"\r\n")?;
    Some((&buf[from..from + rel], from + rel + 2))
}

fn is_error(l: &[u8]) -> bool {
    l == b"ERROR" || l.starts_with(b"CLIENT_ERROR") || l.starts_with(b"SERVER_ERROR")
}

/// Data length in word `idx` of a reply line.
fn size_word(l: &[u8], idx: usize) -> Result<usize, McError> {
    let w = l.split(|&c| c == b' ').nth(idx).unwrap_or(b"");
    std::str::from_utf8(w)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            McError(format!(
                "bad length in reply line {:?}",
                String::from_utf8_lossy(l)
            ))
        })
}

/// Decodes one complete reply of the given shape from the start of `buf`.
pub fn decode(buf: &[u8], shape: Shape) -> Result<Option<(McReply, usize)>, McError> {
    let mut r = McReply::default();
    let mut at = 0;
    loop {
        let Some((l, next)) = line(buf, at) else {
            return Ok(None);
        };
        if is_error(l) {
            r.error = true;
            return Ok(Some((r, next)));
        }
        match shape {
            Shape::Values => {
                if l == b"END" {
                    return Ok(Some((r, next)));
                }
                if !l.starts_with(b"VALUE ") {
                    return Err(McError(format!(
                        "unexpected line {:?}",
                        String::from_utf8_lossy(l)
                    )));
                }
                let end = next + size_word(l, 3)? + 2;
                if buf.len() < end {
                    return Ok(None);
                }
                r.values += 1;
                at = end;
            }
            Shape::Line => {
                if l.starts_with(b"VA ") || l == b"VA" {
                    let end = next + size_word(l, 1)? + 2;
                    if buf.len() < end {
                        return Ok(None);
                    }
                    r.values = 1;
                    return Ok(Some((r, end)));
                }
                if l == b"EN" || l.starts_with(b"EN ") {
                    r.miss = true;
                }
                return Ok(Some((r, next)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_values() {
        let b = b"VALUE a 0 2\r\nxy\r\nVALUE b 5 0 7\r\n\r\nEND\r\n";
        for i in 0..b.len() {
            assert_eq!(decode(&b[..i], Shape::Values), Ok(None), "prefix {i}");
        }
        let (r, n) = decode(b, Shape::Values).unwrap().unwrap();
        assert_eq!((r.values, r.error, n), (2, false, b.len()));
        assert_eq!(
            decode(b"END\r\n", Shape::Values).unwrap().unwrap().0.values,
            0
        );
        assert!(
            decode(b"CLIENT_ERROR bad\r\n", Shape::Values)
                .unwrap()
                .unwrap()
                .0
                .error
        );
        assert!(decode(b"junk\r\n", Shape::Values).is_err());
    }

    #[test]
    fn meta_and_single_lines() {
        let (r, n) = decode(b"VA 3 f0\r\nabc\r\nEN\r\n", Shape::Line)
            .unwrap()
            .unwrap();
        assert_eq!((r.values, n), (1, 14));
        assert!(decode(b"EN\r\n", Shape::Line).unwrap().unwrap().0.miss);
        assert!(!decode(b"STORED\r\n", Shape::Line).unwrap().unwrap().0.error);
        assert!(decode(b"ERROR\r\n", Shape::Line).unwrap().unwrap().0.error);
        assert_eq!(decode(b"VA 3\r\nab", Shape::Line), Ok(None));
    }
}
