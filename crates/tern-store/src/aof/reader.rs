//! The loader's reader of an AOF's commands: RESP arrays of bulk strings,
//! one after the other, from a stream.
//!
//! It is not tern-resp's request parser because a file is not a client:
//! it reads from a stream rather than a buffer the caller fills, it must
//! tell a torn last command (the file ends inside it: a crash during a
//! write, loadable with `aof-load-truncated`) from a corrupt one
//! (anything else), with the offset where the command began, and it
//! skips Redis's `#…` annotation lines (`aof-timestamp-enabled`, and the
//! filler of [`super::fill`]), which end at a line feed as in Redis. Like
//! the request parser it never allocates from a length the file claims
//! before the bytes are there.

use std::io::{BufRead, ErrorKind, Read};

/// Why a command could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The file ends inside the command that starts at `offset`.
    Truncated { offset: u64 },
    /// The bytes at `offset` are not a command.
    Corrupt { offset: u64, why: &'static str },
    Io(std::io::Error),
}

/// Commands from a stream, with the offset each began at.
pub struct CommandReader<R> {
    r: R,
    pos: u64,
}

/// The longest line (count or length) the reader accepts.
const MAX_LINE: usize = 64;

enum Line {
    Eof,
    Line(Vec<u8>),
}

impl<R: BufRead> CommandReader<R> {
    /// `start` is the stream's offset in its file (after an RDB preamble).
    pub fn new(r: R, start: u64) -> Self {
        CommandReader { r, pos: start }
    }

    /// Where the next command starts (after the last one read whole).
    pub fn offset(&self) -> u64 {
        self.pos
    }

    /// The next command (None at a clean end of the stream).
    pub fn next_command(&mut self) -> Result<Option<Vec<Vec<u8>>>, ReadError> {
        loop {
            let start = self.pos;
            let mut at = start;
            let line = match self.line(&mut at, start)? {
                Line::Eof => return Ok(None),
                Line::Line(l) => l,
            };
            if line.first() == Some(&b'#') {
                self.pos = at;
                continue;
            }
            let corrupt = |why| ReadError::Corrupt { offset: start, why };
            if line.first() != Some(&b'*') {
                return Err(corrupt("expected '*'"));
            }
            let argc = tern_resp::parse_u64(&line[1..]).filter(|&n| n >= 1).ok_or_else(|| corrupt("bad argument count"))?;
            let mut argv = Vec::with_capacity(argc.min(1024) as usize);
            for _ in 0..argc {
                let Line::Line(l) = self.line(&mut at, start)? else {
                    return Err(ReadError::Truncated { offset: start });
                };
                if l.first() != Some(&b'$') {
                    return Err(corrupt("expected '$'"));
                }
                let len = tern_resp::parse_u64(&l[1..]).ok_or_else(|| corrupt("bad bulk length"))?;
                let mut arg = Vec::new();
                let got = (&mut self.r).take(len).read_to_end(&mut arg).map_err(ReadError::Io)?;
                at += got as u64;
                if (got as u64) < len {
                    return Err(ReadError::Truncated { offset: start });
                }
                let mut crlf = [0u8; 2];
                let n = read_full(&mut self.r, &mut crlf).map_err(ReadError::Io)?;
                at += n as u64;
                if n < 2 {
                    return Err(ReadError::Truncated { offset: start });
                }
                if crlf != *b"\r\n" {
                    return Err(corrupt("expected CRLF after a bulk string"));
                }
                argv.push(arg);
            }
            self.pos = at;
            return Ok(Some(argv));
        }
    }

    /// One CRLF-terminated line (without its CRLF).
    fn line(&mut self, at: &mut u64, start: u64) -> Result<Line, ReadError> {
        let mut l = Vec::new();
        let n = (&mut self.r).take(MAX_LINE as u64 + 2).read_until(b'\n', &mut l).map_err(ReadError::Io)?;
        *at += n as u64;
        if n == 0 && *at == start {
            return Ok(Line::Eof);
        }
        if l.last() != Some(&b'\n') {
            if n >= MAX_LINE + 2 {
                return Err(ReadError::Corrupt { offset: start, why: "line too long" });
            }
            return Err(ReadError::Truncated { offset: start });
        }
        l.pop();
        // An annotation ends at its line feed, as Redis reads it (fgets);
        // the space `aof-prealloc-size` writes ahead is such lines.
        if l.first() == Some(&b'#') {
            return Ok(Line::Line(l));
        }
        if l.pop() != Some(b'\r') {
            return Err(ReadError::Corrupt { offset: start, why: "expected CRLF" });
        }
        Ok(Line::Line(l))
    }
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(b: &[u8]) -> (Vec<Vec<Vec<u8>>>, Option<ReadError>) {
        let mut r = CommandReader::new(b, 0);
        let mut v = Vec::new();
        loop {
            match r.next_command() {
                Ok(Some(c)) => v.push(c),
                Ok(None) => return (v, None),
                Err(e) => return (v, Some(e)),
            }
        }
    }

    #[test]
    fn reads_commands_and_skips_annotations() {
        let (v, e) = all(b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n#TS:1700000000\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\nv\r\nx\r\n");
        assert!(e.is_none());
        assert_eq!(v, vec![vec![b"SELECT".to_vec(), b"0".to_vec()], vec![b"SET".to_vec(), b"k".to_vec(), b"v\r\nx".to_vec()]]);
        // Space written ahead: lines of '#' ending in a bare line feed.
        let mut f = b"*1\r\n$4\r\nPING\r\n".to_vec();
        let end = f.len() as u64;
        super::super::fill::extend(&mut f, end, super::super::fill::round_up(end + 300));
        let (v, e) = all(&f);
        assert!(e.is_none() && v == vec![vec![b"PING".to_vec()]], "{e:?}");
    }

    #[test]
    fn tells_torn_from_corrupt() {
        let good = b"*1\r\n$4\r\nPING\r\n";
        // Every cut inside the second command is a torn tail at its start.
        let mut file = good.to_vec();
        file.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
        for cut in good.len() + 1..file.len() {
            let (v, e) = all(&file[..cut]);
            assert_eq!(v.len(), 1);
            assert!(matches!(e, Some(ReadError::Truncated { offset }) if offset == good.len() as u64), "cut {cut}: {e:?}");
        }
        let (_, e) = all(b"*1\r\n$4\r\nPING\r\nxyz\r\n");
        assert!(matches!(e, Some(ReadError::Corrupt { offset: 14, .. })), "{e:?}");
        let (_, e) = all(b"*1\r\n$2\r\nPING\r\n");
        assert!(matches!(e, Some(ReadError::Corrupt { offset: 0, .. })), "{e:?}");
        // A huge claimed length is not allocated: the file just ends.
        let (_, e) = all(b"*1\r\n$999999999999\r\nab");
        assert!(matches!(e, Some(ReadError::Truncated { offset: 0 })), "{e:?}");
    }

    use proptest::prelude::*;

    fn valid_file() -> Vec<u8> {
        let mut out = Vec::new();
        for (i, argv) in [vec!["SELECT", "0"], vec!["SET", "k", "v\r\n"], vec!["RPUSH", "l", "a", "b"], vec!["HSET", "h", "f", ""]].iter().enumerate() {
            tern_resp::encode::request(&mut out, argv.iter().map(|a| a.as_bytes()));
            if i == 1 {
                out.extend_from_slice(b"#TS:1\r\n");
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

        /// Whatever a file's bytes, reading never panics and never takes a
        /// damaged file for a whole one: a clean end is only ever reported
        /// at the end of the bytes, and every error's offset is inside the
        /// file, at or after the last command read whole.
        #[test]
        fn damaged_files_are_never_read_as_whole(
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..4),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut f = valid_file();
            for (at, byte, kind) in edits {
                let i = at.index(f.len());
                match kind {
                    0 => f[i] ^= byte | 1,
                    1 => f.insert(i, byte),
                    _ => { f.remove(i); }
                }
            }
            let f = &f[..cut.index(f.len() + 1)];
            let mut r = CommandReader::new(f, 0);
            loop {
                let before = r.offset();
                match r.next_command() {
                    Ok(Some(_)) => prop_assert!(r.offset() > before),
                    Ok(None) => {
                        prop_assert_eq!(r.offset(), f.len() as u64);
                        break;
                    }
                    Err(ReadError::Truncated { offset }) | Err(ReadError::Corrupt { offset, .. }) => {
                        // The command's start (after any annotation lines).
                        prop_assert!(offset >= before && offset < f.len() as u64);
                        break;
                    }
                    Err(ReadError::Io(e)) => prop_assert!(false, "{e}"),
                }
            }
        }
    }
}
