//! Client side: request encoders, appending to a reused buffer.
//!
//! Meta flags are passed as the text memcached expects after the key
//! (e.g. `b"v f t"` or `b"T30 F5"`), so any flag combination can be sent
//! without this crate growing an option per flag.

use crate::number::append as num;

/// `get k1 k2 ...` (or `gets` when `cas`).
pub fn get<'k>(out: &mut Vec<u8>, cas: bool, keys: impl IntoIterator<Item = &'k [u8]>) {
    out.extend_from_slice(if cas { b"gets" } else { b"get" });
    for k in keys {
        out.push(b' ');
        out.extend_from_slice(k);
    }
    out.extend_from_slice(b"\r\n");
}

/// A text storage command (`set`, `add`, `replace`, `append`, `prepend`)
/// with its data block.
pub fn store(
    out: &mut Vec<u8>,
    cmd: &str,
    key: &[u8],
    flags: u32,
    exptime: i64,
    data: &[u8],
    noreply: bool,
) {
    out.extend_from_slice(cmd.as_bytes());
    out.push(b' ');
    out.extend_from_slice(key);
    out.push(b' ');
    num(out, flags);
    out.push(b' ');
    num(out, exptime);
    out.push(b' ');
    num(out, data.len());
    if noreply {
        out.extend_from_slice(b" noreply");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// `set key flags exptime len`.
pub fn set(out: &mut Vec<u8>, key: &[u8], flags: u32, exptime: i64, data: &[u8]) {
    store(out, "set", key, flags, exptime, data, false)
}

/// `delete key`.
pub fn delete(out: &mut Vec<u8>, key: &[u8]) {
    out.extend_from_slice(b"delete ");
    out.extend_from_slice(key);
    out.extend_from_slice(b"\r\n");
}

fn meta_line(out: &mut Vec<u8>, cmd: &[u8], key: &[u8], len: Option<usize>, flags: &[u8]) {
    out.extend_from_slice(cmd);
    out.push(b' ');
    out.extend_from_slice(key);
    if let Some(n) = len {
        out.push(b' ');
        num(out, n);
    }
    if !flags.is_empty() {
        out.push(b' ');
        out.extend_from_slice(flags);
    }
    out.extend_from_slice(b"\r\n");
}

/// `mg key flags`.
pub fn mg(out: &mut Vec<u8>, key: &[u8], flags: &[u8]) {
    meta_line(out, b"mg", key, None, flags)
}

/// `ms key len flags` and the data block.
pub fn ms(out: &mut Vec<u8>, key: &[u8], data: &[u8], flags: &[u8]) {
    meta_line(out, b"ms", key, Some(data.len()), flags);
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// `md key flags`.
pub fn md(out: &mut Vec<u8>, key: &[u8], flags: &[u8]) {
    meta_line(out, b"md", key, None, flags)
}

/// `ma key flags`.
pub fn ma(out: &mut Vec<u8>, key: &[u8], flags: &[u8]) {
    meta_line(out, b"ma", key, None, flags)
}

/// `mn`: answered with `MN`, the end marker of a quiet pipeline.
pub fn mn(out: &mut Vec<u8>) {
    out.extend_from_slice(b"mn\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_what_the_parser_reads() {
        let mut b = Vec::new();
        set(&mut b, b"k", 5, 0, b"val");
        get(&mut b, true, [&b"k"[..], b"j"]);
        mg(&mut b, b"k", b"v f t");
        ms(&mut b, b"k", b"xy", b"T30");
        mn(&mut b);
        assert_eq!(
            &b[..],
            &b"set k 5 0 3\r\nval\r\ngets k j\r\nmg k v f t\r\nms k 2 T30\r\nxy\r\nmn\r\n"[..]
        );
        let mut p = crate::Parser::new();
        let mut pos = 0;
        let mut n = 0;
        while let Some((_, used)) = p.parse(&b[pos..], &crate::Limits::default()).unwrap() {
            pos += used;
            n += 1;
        }
        assert_eq!((n, pos), (5, b.len()));
    }
}
