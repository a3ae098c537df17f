//! Classifying memcached text and meta replies for the benchmark's
//! accounting, on top of tern-memcache's client-side decoder.

use tern_memcache::Response;

/// How the reply to one request ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `get`/`gets`: any number of `VALUE` blocks, then `END`.
    Values,
    /// One unit: a line, or a meta `VA <size>` line and its data block.
    Line,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct McReply {
    pub error: bool,
    /// Values returned (`VALUE` blocks, or a meta `VA` to an `mg`).
    pub values: u32,
    /// A meta `EN` (miss).
    pub miss: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub struct McError(pub String);

/// Decodes one complete reply of the given shape from the start of `buf`,
/// unit by unit.
pub fn decode(buf: &[u8], shape: Shape) -> Result<Option<(McReply, usize)>, McError> {
    let mut r = McReply::default();
    let mut at = 0;
    loop {
        let parsed =
            Response::parse(&buf[at..]).map_err(|_| McError("malformed memcached reply".into()))?;
        let Some((unit, n)) = parsed else {
            return Ok(None);
        };
        at += n;
        match (shape, unit) {
            (_, Response::Error(_)) => {
                r.error = true;
                return Ok(Some((r, at)));
            }
            (Shape::Values, Response::Value { .. }) => r.values += 1,
            (Shape::Values, Response::End) => return Ok(Some((r, at))),
            (Shape::Values, other) => {
                return Err(McError(format!("unexpected reply to a get: {other:?}")))
            }
            (Shape::Line, Response::MetaValue { .. }) => {
                r.values = 1;
                return Ok(Some((r, at)));
            }
            (Shape::Line, Response::Meta { code, .. }) => {
                r.miss = &code == b"EN";
                return Ok(Some((r, at)));
            }
            (Shape::Line, _) => return Ok(Some((r, at))),
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
