//! What `aof-prealloc-size` writes ahead of the commands: lines of `#`,
//! which Redis's loader and `redis-check-aof` read as annotations and
//! skip (as they skip `#TS:` lines), so a file caught with its space
//! written ahead — live, or after a kill -9 — is still a file Redis loads.
//!
//! The pattern is fixed by file offset: every byte is `#` but the last of
//! each [`LINE`] bytes, a `\n`. Commands are written over it from the
//! file's logical end; when the byte after them would be a `\n` (a line
//! that Redis would read as empty, and refuse), the writer puts a `#`
//! there too ([`after`]), which the next write covers. Redis reads
//! annotation lines up to 1024 bytes, so a line of [`LINE`] + 1 is safe.

/// A filler line's length, its `\n` included.
pub const LINE: u64 = 64;

/// The filler byte at file offset `at`.
#[inline]
pub fn byte(at: u64) -> u8 {
    if at % LINE == LINE - 1 {
        b'\n'
    } else {
        b'#'
    }
}

/// Appends the filler for offsets `from..to` to `out`.
pub fn extend(out: &mut Vec<u8>, from: u64, to: u64) {
    out.extend((from..to).map(byte));
}

/// `to` rounded up to a line's end, so that filled space ends with a
/// whole line.
pub fn round_up(to: u64) -> u64 {
    to.div_ceil(LINE) * LINE
}

/// The byte to write after commands ending at `end`, over the filler
/// there: a `#` where the filler has a line's `\n` (None elsewhere).
#[inline]
pub fn after(end: u64) -> Option<u8> {
    (byte(end) == b'\n').then_some(b'#')
}

/// Where the commands of a file `len` bytes long end when the rest is
/// space written ahead: after the last command's CRLF, or after the torn
/// command a crash left in front of the filler (or of the zeros older
/// versions wrote). `len` when nothing follows them. `read_at` reads the
/// file's bytes at an offset, a window at a time from the end.
pub fn logical_end(len: u64, mut read_at: impl FnMut(u64, &mut [u8]) -> std::io::Result<()>) -> std::io::Result<u64> {
    let is_fill = |b: u8| matches!(b, b'#' | b'\n' | 0);
    let mut window = vec![0u8; 1 << 16];
    let mut hi = len;
    while hi > 0 {
        let from = hi.saturating_sub(window.len() as u64);
        let part = &mut window[..(hi - from) as usize];
        read_at(from, part)?;
        if let Some(i) = part.iter().rposition(|&b| !is_fill(b)) {
            let last = from + i as u64;
            // After a CR, a line feed is the command's own.
            let mut next = [0u8];
            let crlf = part[i] == b'\r' && last + 1 < len && {
                read_at(last + 1, &mut next)?;
                next[0] == b'\n'
            };
            return Ok(last + 1 + u64::from(crlf));
        }
        hi = from;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_space_reads_as_annotation_lines_from_any_end_of_commands() {
        // Whatever offset the commands end at, what follows them is a
        // run of non-empty lines that begin with '#'.
        for end in 0..3 * LINE {
            let mut f = Vec::new();
            extend(&mut f, end, round_up(end + 200));
            if let Some(b) = after(end) {
                f[0] = b;
            }
            assert_eq!(*f.last().unwrap(), b'\n');
            for line in f[..f.len() - 1].split(|&b| b == b'\n') {
                assert!(line.first() == Some(&b'#') && line.len() <= LINE as usize, "end {end}");
            }
        }
    }

    fn end_of(f: &[u8]) -> u64 {
        logical_end(f.len() as u64, |at, buf| {
            buf.copy_from_slice(&f[at as usize..at as usize + buf.len()]);
            Ok(())
        })
        .unwrap()
    }

    #[test]
    fn the_logical_end_is_after_the_last_crlf_or_the_torn_bytes() {
        let cmd = b"*1\r\n$4\r\nPING\r\n";
        let n = cmd.len() as u64;
        let mut f = cmd.to_vec();
        extend(&mut f, n, 200);
        assert_eq!(end_of(&f), n);
        // Filler only, across several windows.
        let mut big = cmd.to_vec();
        extend(&mut big, n, 300_000);
        assert_eq!(end_of(&big), n);
        let mut only = Vec::new();
        extend(&mut only, 0, 1000);
        assert_eq!(end_of(&only), 0);
        // Zeros, as older versions wrote.
        let mut z = cmd.to_vec();
        z.extend([0u8; 50]);
        assert_eq!(end_of(&z), n);
        // A torn command in front of the filler keeps its bytes.
        let mut t = cmd.to_vec();
        t.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$1\r\nq");
        let torn_end = t.len() as u64;
        extend(&mut t, torn_end, 300);
        assert_eq!(end_of(&t), torn_end);
        // Nothing after the commands; a Redis annotation keeps its CRLF.
        assert_eq!(end_of(cmd), n);
        let ts = b"*1\r\n$4\r\nPING\r\n#TS:1628217470\r\n";
        assert_eq!(end_of(ts), ts.len() as u64);
    }
}
