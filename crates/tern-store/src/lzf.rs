//! LZF, the small LZ77 format Redis compresses quicklist nodes (and RDB
//! strings) with: fast, byte-aligned, no header, no entropy coding.
//!
//! ```text
//!  ctrl 000LLLLL                 literal run: the next L+1 bytes (1..=32)
//!  ctrl LLLOOOOO [L'] oooooooo   back-reference: copy len bytes from
//!                                `dist` bytes back in the output, where
//!                                len  = LLL + 2        (3..=8), or with
//!                                LLL = 7: 7 + L' + 2   (9..=264)
//!                                dist = OOOOO·256 + oooooooo + 1 (1..=8192)
//! ```
//!
//! A reference may overlap the bytes it produces (dist < len repeats a
//! run). The encoder here is a single greedy pass with a hash of the next
//! three bytes: its output differs from liblzf's byte for byte, but any
//! LZF decoder reads it (the tests decode liblzf's own output, taken from
//! Redis's DUMP payloads).
//!
//! Goals: Redis's format, so nodes could be written to an RDB as they are;
//! no panic on any input (the decoder bounds-checks everything).
//! [`compress`] is Tern's own greedy pass (quicklist nodes);
//! [`compress_as_liblzf`] gives liblzf's exact bytes, which DUMP payloads
//! need to equal Redis's.
//! Non-goals: liblzf's "ultra fast" and default (not "very fast") modes.

/// Longest literal run one control byte announces.
const MAX_LIT: usize = 1 << 5;
/// Farthest back a reference reaches.
const MAX_DIST: usize = 1 << 13;
/// Longest reference.
const MAX_REF: usize = (1 << 8) + (1 << 3);
/// The match-finder's table: 2^HLOG slots (16 KB of u32 on the stack).
const HLOG: u32 = 12;

#[inline]
fn hash3(b: &[u8], i: usize) -> usize {
    let v = (u32::from(b[i]) << 16) | (u32::from(b[i + 1]) << 8) | u32::from(b[i + 2]);
    (v.wrapping_mul(0x9E37_79B1) >> (32 - HLOG)) as usize
}

fn put_literals(out: &mut Vec<u8>, lits: &[u8]) {
    for run in lits.chunks(MAX_LIT) {
        out.push((run.len() - 1) as u8);
        out.extend_from_slice(run);
    }
}

/// Bytes [`put_literals`] spends on `n` literals.
fn literal_cost(n: usize) -> usize {
    n + n.div_ceil(MAX_LIT)
}

/// Appends `input` compressed to `out`. False, with `out` as it was, when
/// that would take more than `max_out` bytes or the input is empty (as
/// liblzf, which then returns 0).
pub fn compress(input: &[u8], out: &mut Vec<u8>, max_out: usize) -> bool {
    let base = out.len();
    let ok = compress_onto(input, out, base, max_out);
    if !ok {
        out.truncate(base);
    }
    ok
}

fn compress_onto(input: &[u8], out: &mut Vec<u8>, base: usize, max_out: usize) -> bool {
    let n = input.len();
    if n == 0 || n > u32::MAX as usize - 1 {
        return false;
    }
    // Positions + 1 of the last three-byte sequence seen with each hash.
    let mut table = [0u32; 1 << HLOG];
    let (mut i, mut lit_start) = (0usize, 0usize);
    while i + 2 < n {
        let h = hash3(input, i);
        let cand = table[h] as usize;
        table[h] = (i + 1) as u32;
        if cand > 0 {
            let c = cand - 1;
            let dist = i - c;
            if dist <= MAX_DIST && input[c..c + 3] == input[i..i + 3] {
                let max = (n - i).min(MAX_REF);
                let mut len = 3;
                while len < max && input[c + len] == input[i + len] {
                    len += 1;
                }
                put_literals(out, &input[lit_start..i]);
                let (l, off) = (len - 2, dist - 1);
                if l < 7 {
                    out.push(((l << 5) | (off >> 8)) as u8);
                } else {
                    out.push(((7 << 5) | (off >> 8)) as u8);
                    out.push((l - 7) as u8);
                }
                out.push(off as u8);
                if out.len() - base > max_out {
                    return false;
                }
                // The positions inside the match are candidates too (a
                // cheap pass that finds most of what a full search would).
                let end = (i + len).min(n.saturating_sub(2));
                for j in i + 1..end {
                    table[hash3(input, j)] = (j + 1) as u32;
                }
                i += len;
                lit_start = i;
                continue;
            }
        }
        i += 1;
        // Incompressible so far beyond what is allowed: stop early.
        if out.len() - base + literal_cost(i - lit_start) > max_out {
            return false;
        }
    }
    put_literals(out, &input[lit_start..]);
    out.len() - base <= max_out
}

/// liblzf's match-finder table: 2^16 slots, as Redis builds it.
const LIBLZF_HLOG: u32 = 16;

/// liblzf's slot for the three bytes whose running value is `h` (its
/// `VERY_FAST` index over a 32-bit accumulator).
#[inline]
fn liblzf_idx(h: u32) -> usize {
    ((h >> (24 - LIBLZF_HLOG)).wrapping_sub(h.wrapping_mul(5)) & ((1 << LIBLZF_HLOG) - 1)) as usize
}

/// [`compress`], producing exactly liblzf's bytes (Redis's `lzf_compress`
/// as it builds it: `VERY_FAST`, a zeroed table of 2^16 offsets), so that
/// an LZF string in a DUMP payload equals Redis's. Output longer than
/// `max_out` is refused at the points liblzf refuses it.
pub fn compress_as_liblzf(input: &[u8], out: &mut Vec<u8>, max_out: usize) -> bool {
    let base = out.len();
    let ok = liblzf_onto(input, out, max_out);
    if !ok {
        out.truncate(base);
    }
    ok
}

/// liblzf's table of 2^16 last positions, as if zeroed for every call but
/// allocated once per thread: each slot carries the call (generation) that
/// wrote it, and a slot of an earlier call reads as empty. A fresh zeroed
/// 256 KiB table per string made a background save of short strings spend
/// its time in page faults.
struct Htab {
    gen: u32,
    slots: Vec<(u32, u32)>,
}

thread_local! {
    static HTAB: std::cell::Cell<Option<Box<Htab>>> = const { std::cell::Cell::new(None) };
}

/// The thread's table for one call, given back when dropped.
struct Lease(Option<Box<Htab>>);

impl Htab {
    fn lease() -> Lease {
        let mut t = HTAB.with(|c| c.take()).unwrap_or_else(|| Box::new(Htab { gen: 0, slots: vec![(0, 0); 1 << LIBLZF_HLOG] }));
        t.gen = t.gen.wrapping_add(1);
        if t.gen == 0 {
            t.slots.fill((0, 0));
            t.gen = 1;
        }
        Lease(Some(t))
    }
}

impl Lease {
    #[inline]
    fn get(&self, slot: usize) -> u32 {
        let t = self.0.as_deref().expect("a leased table");
        let (g, pos) = t.slots[slot];
        if g == t.gen {
            pos
        } else {
            0
        }
    }

    #[inline]
    fn set(&mut self, slot: usize, pos: u32) {
        let t = self.0.as_deref_mut().expect("a leased table");
        t.slots[slot] = (t.gen, pos);
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let t = self.0.take();
        HTAB.with(|c| c.set(t));
    }
}

fn liblzf_onto(input: &[u8], out: &mut Vec<u8>, out_len: usize) -> bool {
    let n = input.len();
    if n == 0 || out_len == 0 || n > u32::MAX as usize - 1 {
        return false;
    }
    let base = out.len();
    // Offsets of the last position seen per slot (0: none, as position 0
    // is never a candidate: liblzf wants `ref > in_data`).
    let mut htab = Htab::lease();
    // `op` is out.len() - base; a run's control byte is reserved at
    // `op - lit - 1` before its literals.
    let mut lit: usize = 0;
    out.push(0);
    let mut ip = 0usize;
    let frst = |p: usize| u32::from(input[p]) << 8 | u32::from(input[p + 1]);
    let mut hval = if n >= 2 { frst(0) } else { 0 };
    while n >= 3 && ip < n - 2 {
        hval = hval << 8 | u32::from(input[ip + 2]);
        let slot = liblzf_idx(hval);
        let r = htab.get(slot) as usize;
        htab.set(slot, ip as u32);
        let op = out.len() - base;
        if r > 0 && r < ip && ip - r - 1 < MAX_DIST && input[r + 2] == input[ip + 2] && input[r..r + 2] == input[ip..ip + 2] {
            let off = ip - r - 1;
            let mut len = 2usize;
            let maxlen = (n - ip - len).min(MAX_REF);
            if op + 3 + 1 >= out_len && op - usize::from(lit == 0) + 3 + 1 >= out_len {
                return false;
            }
            close_run(out, lit);
            loop {
                len += 1;
                if !(len < maxlen && input[r + len] == input[ip + len]) {
                    break;
                }
            }
            len -= 2;
            ip += 1;
            if len < 7 {
                out.push(((off >> 8) + (len << 5)) as u8);
            } else {
                out.push(((off >> 8) + (7 << 5)) as u8);
                out.push((len - 7) as u8);
            }
            out.push(off as u8);
            lit = 0;
            out.push(0);
            ip += len + 1;
            if ip >= n - 2 {
                break;
            }
            ip -= 2;
            hval = frst(ip);
            hval = hval << 8 | u32::from(input[ip + 2]);
            htab.set(liblzf_idx(hval), ip as u32);
            ip += 1;
            hval = hval << 8 | u32::from(input[ip + 2]);
            htab.set(liblzf_idx(hval), ip as u32);
            ip += 1;
        } else {
            if op >= out_len {
                return false;
            }
            push_literal(out, &mut lit, input[ip]);
            ip += 1;
        }
    }
    if out.len() - base + 3 > out_len {
        return false;
    }
    while ip < n {
        push_literal(out, &mut lit, input[ip]);
        ip += 1;
    }
    close_run(out, lit);
    true
}

/// liblzf's literal step: `b` joins the open run of `lit` literals, and a
/// run that reaches [`MAX_LIT`] is closed and the next one opened.
#[inline]
fn push_literal(out: &mut Vec<u8>, lit: &mut usize, b: u8) {
    *lit += 1;
    out.push(b);
    if *lit == MAX_LIT {
        close_run(out, *lit);
        *lit = 0;
        out.push(0);
    }
}

/// Closes the open literal run: its control byte, reserved before its
/// `lit` bytes, is written, or dropped when the run is empty.
#[inline]
fn close_run(out: &mut Vec<u8>, lit: usize) {
    let ctl = out.len() - lit - 1;
    out[ctl] = lit.wrapping_sub(1) as u8;
    if lit == 0 {
        out.pop();
    }
}

/// Decompresses `input` onto the end of `out`. None if it is not valid
/// LZF or would make `out` grow by more than `max_len` bytes.
pub fn decompress(input: &[u8], out: &mut Vec<u8>, max_len: usize) -> Option<()> {
    let base = out.len();
    let limit = base.checked_add(max_len)?;
    let mut ip = 0;
    while ip < input.len() {
        let ctrl = usize::from(input[ip]);
        ip += 1;
        if ctrl < MAX_LIT {
            let run = input.get(ip..ip + ctrl + 1)?;
            if out.len() + run.len() > limit {
                return None;
            }
            out.extend_from_slice(run);
            ip += run.len();
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += usize::from(*input.get(ip)?);
                ip += 1;
            }
            len += 2;
            let dist = ((ctrl & 0x1f) << 8) + usize::from(*input.get(ip)?) + 1;
            ip += 1;
            if dist > out.len() - base || out.len() + len > limit {
                return None;
            }
            let start = out.len() - dist;
            // Overlapping when `dist < len`: the copy repeats the last
            // `dist` bytes, so it goes in steps of what is already there
            // (dist, 2·dist, ...) rather than a byte at a time; loading a
            // file of padded values spent most of its LZF time in the
            // byte loop.
            let mut left = len;
            while left > 0 {
                let n = left.min(out.len() - start);
                out.extend_from_within(start..start + n);
                left -= n;
            }
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn comp(data: &[u8], max: usize) -> Option<Vec<u8>> {
        let mut out = b"kept".to_vec();
        let ok = compress(data, &mut out, max);
        assert_eq!(&out[..4], b"kept");
        if ok {
            Some(out.split_off(4))
        } else {
            assert_eq!(out.len(), 4);
            None
        }
    }

    fn dec(c: &[u8], max: usize) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        decompress(c, &mut out, max).map(|()| out)
    }

    /// liblzf's output for three strings, as Redis 8.4's DUMP carries it
    /// (the bytes after the RDB's 0xC3 marker and two lengths).
    const LIBLZF: [(&str, &str); 3] = [
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "016161e025000161 61"),
        ("hello hello hello hello hello world, hello world!", "0668656c6c6f2068e00e0505776f726c642ca01e400c01642 1"),
        (
            "The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog.",
            "1f54686520717569636b2062726f776e20666f78206a756d7073206f7665722074201e0a6c617a7920646f672e2054200de01d2c01672e",
        ),
    ];

    #[test]
    fn decodes_liblzf_output() {
        for (plain, c) in LIBLZF {
            let c = unhex(&c.replace(' ', ""));
            assert_eq!(
                dec(&c, plain.len()).as_deref(),
                Some(plain.as_bytes()),
                "{plain}"
            );
            // One byte short of room is refused, not overrun.
            assert_eq!(dec(&c, plain.len() - 1), None);
            // And liblzf's size is a fair bar for ours.
            assert!(comp(plain.as_bytes(), c.len() + 4).is_some(), "{plain}");
        }
    }

    #[test]
    fn liblzf_bytes_exactly() {
        for (plain, c) in LIBLZF {
            let mut out = Vec::new();
            assert!(compress_as_liblzf(plain.as_bytes(), &mut out, plain.len() - 4), "{plain}");
            assert_eq!(out, unhex(&c.replace(' ', "")), "{plain}");
        }
        // Redis 8.4's DUMP of 51 and 89 'a's, and a listpack it leaves
        // uncompressed (nothing saves 4 bytes).
        for (n, want) in [(51, &b"\x01aa\xe0&\x00\x01aa"[..]), (89, b"\x01aa\xe0L\x00\x01aa")] {
            let mut out = Vec::new();
            assert!(compress_as_liblzf(&vec![b'a'; n], &mut out, n - 4));
            assert_eq!(out, want);
        }
        let lp = b"55\x00\x00\x00\t\x00\x82f1\x03\x82v1\x03\xf4\x008\xd3`\xba\x01\x00\x00\t\x82f3\x03\x82v3\x03\xf4\xf49\xd3`\xba\x01\x00\x00\t\x82f2\x03\x82v2\x03\x00\x01\xff";
        assert!(!compress_as_liblzf(lp, &mut Vec::new(), lp.len() - 4));
    }

    proptest! {
        #[test]
        fn liblzf_round_trips(data in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..600),
            prop::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b'c')], 0..3000),
        ]) {
            let mut out = Vec::new();
            if compress_as_liblzf(&data, &mut out, data.len() + data.len() / 16 + 64) {
                let back = dec(&out, data.len());
                prop_assert_eq!(back.as_deref(), Some(&data[..]));
            }
        }
    }

    #[test]
    fn encodes_the_format_by_hand() {
        // 'a' then a reference one back, 49 long: 7 + 40 + 2.
        assert_eq!(comp(&[b'a'; 50], 64).unwrap(), [0x00, b'a', 0xe0, 40, 0x00]);
        // Three distinct bytes: one literal run.
        assert_eq!(comp(b"xyz", 64).unwrap(), [0x02, b'x', b'y', b'z']);
        // 33 distinct bytes take two runs (32 + 1).
        let v: Vec<u8> = (0..33).collect();
        let out = comp(&v, 64).unwrap();
        assert_eq!(out.len(), 35);
        assert_eq!((out[0], out[33]), (31, 0));
        // A short reference: "abcabc" = "abc" + (len 3, dist 3).
        assert_eq!(
            comp(b"abcabc", 64).unwrap(),
            [0x02, b'a', b'b', b'c', 0x20, 0x02]
        );
    }

    #[test]
    fn refuses_what_does_not_fit() {
        let v: Vec<u8> = (0..=255).collect();
        assert_eq!(comp(&v, 255), None);
        assert_eq!(comp(&v, 264).map(|c| c.len()), Some(264));
        assert_eq!(comp(b"", 10), None);
    }

    #[test]
    fn rejects_bad_input_without_panicking() {
        // A reference before the start, a truncated run, a missing offset byte.
        for bad in [
            &[0x20u8, 0x00][..],
            &[0x05, b'a'],
            &[0x00, b'a', 0xe0],
            &[0x00, b'a', 0x20],
        ] {
            assert_eq!(dec(bad, 1000), None, "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn round_trips(data in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..3000),
            prop::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), any::<u8>()], 0..20000),
            (prop::collection::vec(any::<u8>(), 1..50), 1usize..400).prop_map(|(u, k)| u.repeat(k)),
        ]) {
            match comp(&data, data.len() + data.len() / 16 + 8) {
                Some(c) => prop_assert_eq!(dec(&c, data.len()), Some(data.clone())),
                None => prop_assert!(data.is_empty()),
            }
            // Any limit: success means it fits and decodes.
            let lim = data.len() / 2;
            if let Some(c) = comp(&data, lim) {
                prop_assert!(c.len() <= lim);
                prop_assert_eq!(dec(&c, data.len()), Some(data));
            }
        }

        #[test]
        fn decoding_garbage_never_panics(data in prop::collection::vec(any::<u8>(), 0..200)) {
            if let Some(out) = dec(&data, 4096) {
                prop_assert!(out.len() <= 4096);
            }
        }
    }
}
