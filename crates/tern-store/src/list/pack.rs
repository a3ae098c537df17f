//! One pack: a list's compact run of entries (the whole of a small list,
//! or one quicklist node), its listpack size as Redis would count it, and
//! its LZF-compressed form (see the diagrams in the `list` module docs).

use std::borrow::Cow;

use crate::hash::{get_varint, varint_len, write_varint};
use crate::lzf;

/// A node weighing less (as a listpack) is never compressed
/// (Redis's `MIN_COMPRESS_BYTES`).
const MIN_COMPRESS_BYTES: usize = 48;
/// A compressed form must save more than this many bytes to be kept
/// (`MIN_COMPRESS_IMPROVE`).
const MIN_COMPRESS_IMPROVE: usize = 8;
/// `Pack::head` of a compressed pack, whose `buf` then holds the raw
/// entries' length (4 bytes, little-endian) and their LZF form.
const COMPRESSED: usize = usize::MAX;
/// An empty listpack: its 6-byte header and the end byte.
pub(crate) const LP_EMPTY: usize = 7;

/// The bytes Redis's listpack spends on `b`: the entry (an integer packed
/// by size, or a string with a 1-, 2- or 5-byte header) and its back length.
pub(super) fn lp_entry_size(b: &[u8]) -> usize {
    let enc = match tern_resp::parse_i64(b) {
        Some(v) if (0..=127).contains(&v) => 1,
        Some(v) if (-4096..=4095).contains(&v) => 2,
        Some(v) if i16::try_from(v).is_ok() => 3,
        Some(v) if (-(1 << 23)..(1 << 23)).contains(&v) => 4,
        Some(v) if i32::try_from(v).is_ok() => 5,
        Some(_) => 9,
        None if b.len() < 64 => 1 + b.len(),
        None if b.len() < 4096 => 2 + b.len(),
        None => 5 + b.len(),
    };
    let back = match enc {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    };
    enc + back
}

/// [`lp_entry_size`] as a pack counts it: saturated to 32 bits (only an
/// element above 4 GiB, far past any node limit, is counted short).
pub(crate) fn lp_size32(b: &[u8]) -> u32 {
    u32::try_from(lp_entry_size(b)).unwrap_or(u32::MAX)
}

/// One compact run of entries (the whole list, or a quicklist node).
#[derive(Clone, Debug, Default)]
pub(super) struct Pack {
    /// Entries live in `buf[head..]`; `buf[..head]` is room for pushes at
    /// the front.
    pub(super) buf: Vec<u8>,
    head: usize,
    len: u32,
    /// What Redis's listpack of these entries would weigh.
    pub(super) lp: u32,
}

/// Writes one entry: forward length, bytes, the length's bytes reversed.
fn encode(out: &mut Vec<u8>, b: &[u8]) {
    let at = out.len();
    out.resize(at + entry_len(b), 0);
    write_entry(&mut out[at..], b);
}

/// Writes one entry into `out`, exactly [`entry_len`] of `b` long.
pub(crate) fn write_entry(out: &mut [u8], b: &[u8]) {
    let n = write_varint(out, b.len());
    out[n..n + b.len()].copy_from_slice(b);
    for i in 0..n {
        out[n + b.len() + i] = out[n - 1 - i];
    }
}

pub(crate) fn entry_len(b: &[u8]) -> usize {
    2 * varint_len(b.len()) + b.len()
}

/// Reads the entry ending at `end` backwards: (start, data start).
#[inline]
fn entry_before(buf: &[u8], end: usize) -> (usize, usize) {
    let mut n = 0usize;
    let mut shift = 0;
    let mut p = end;
    loop {
        p -= 1;
        let b = buf[p];
        n |= usize::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    let vl = end - p;
    let data = p - n;
    (data - vl, data)
}

/// Forward and backward over one pack's entries.
#[derive(Clone)]
pub(crate) struct PackIter<'a> {
    buf: &'a [u8],
    front: usize,
    back: usize,
}

impl<'a> PackIter<'a> {
    /// Over the entries that fill `buf`.
    pub(crate) fn over(buf: &'a [u8]) -> Self {
        PackIter { buf, front: 0, back: buf.len() }
    }

    /// Where the entries not yet taken start and end in the buffer.
    pub(crate) fn span(&self) -> (usize, usize) {
        (self.front, self.back)
    }
}

impl<'a> Iterator for PackIter<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.front >= self.back {
            return None;
        }
        let n = get_varint(self.buf, &mut self.front);
        let data = &self.buf[self.front..self.front + n];
        self.front += n + varint_len(n);
        Some(data)
    }
}

impl<'a> DoubleEndedIterator for PackIter<'a> {
    #[inline]
    fn next_back(&mut self) -> Option<&'a [u8]> {
        if self.front >= self.back {
            return None;
        }
        let (start, data) = entry_before(self.buf, self.back);
        let vl = data - start;
        let end = self.back - vl;
        self.back = start;
        Some(&self.buf[data..end])
    }
}

/// One node's entries through `&self`: borrowed from a raw node, copied
/// out of a decompressed copy of a compressed one.
pub(super) enum NodeIter<'a> {
    Raw(PackIter<'a>),
    Unpacked { buf: Vec<u8>, front: usize, back: usize },
}

impl<'a> Iterator for NodeIter<'a> {
    type Item = Cow<'a, [u8]>;
    #[inline]
    fn next(&mut self) -> Option<Cow<'a, [u8]>> {
        match self {
            NodeIter::Raw(it) => it.next().map(Cow::Borrowed),
            NodeIter::Unpacked { buf, front, back } => {
                let mut it = PackIter { buf: buf.as_slice(), front: *front, back: *back };
                let e = it.next().map(|b| Cow::Owned(b.to_vec()));
                *front = it.front;
                e
            }
        }
    }
}

impl DoubleEndedIterator for NodeIter<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            NodeIter::Raw(it) => it.next_back().map(Cow::Borrowed),
            NodeIter::Unpacked { buf, front, back } => {
                let mut it = PackIter { buf: buf.as_slice(), front: *front, back: *back };
                let e = it.next_back().map(|b| Cow::Owned(b.to_vec()));
                *back = it.back;
                e
            }
        }
    }
}

/// Byte offset in `buf` where entry `i` of the `n` from `head` to the
/// end starts (`buf.len()` for `i == n`), walking from the nearer end.
fn offset_in(buf: &[u8], head: usize, n: usize, i: usize) -> usize {
    if i * 2 <= n {
        let mut pos = head;
        for _ in 0..i {
            let l = get_varint(buf, &mut pos);
            pos += l + varint_len(l);
        }
        pos
    } else {
        let mut end = buf.len();
        for _ in i..n {
            end = entry_before(buf, end).0;
        }
        end
    }
}

/// Entry `i` of the `n` entries in `buf` from `head` to the end.
pub(super) fn nth(buf: &[u8], head: usize, n: usize, i: usize) -> Option<&[u8]> {
    if i >= n {
        return None;
    }
    let mut pos = offset_in(buf, head, n, i);
    let l = get_varint(buf, &mut pos);
    Some(&buf[pos..pos + l])
}

impl Pack {
    /// A pack of `len` entries laid out as `entries` (whose listpack
    /// weight is `lp`), in a buffer of its allocator size class.
    pub(super) fn from_entries(entries: &[u8], len: u32, lp: u32) -> Pack {
        let mut buf = Vec::with_capacity(tern_table::size_class(entries.len()));
        buf.extend_from_slice(entries);
        Pack { buf, head: 0, len, lp }
    }

    /// The raw entries with their count and listpack weight (None when
    /// compressed).
    pub(super) fn entries(&self) -> Option<(&[u8], u32, u32)> {
        (!self.is_compressed()).then(|| (&self.buf[self.head..], self.len, self.lp))
    }

    pub(super) fn from_iter<'a>(items: impl IntoIterator<Item = &'a [u8]>) -> Pack {
        let mut p = Pack::default();
        for b in items {
            p.push_back(b);
        }
        p
    }

    pub(super) fn iter(&self) -> PackIter<'_> {
        debug_assert!(!self.is_compressed());
        PackIter { buf: &self.buf, front: self.head, back: self.buf.len() }
    }

    pub(super) fn is_compressed(&self) -> bool {
        self.head == COMPRESSED
    }

    /// Stores the entries compressed, if Redis would (`__quicklistCompressNode`):
    /// the node weighs at least [`MIN_COMPRESS_BYTES`] and LZF saves more
    /// than [`MIN_COMPRESS_IMPROVE`] of the bytes held.
    pub(super) fn compress(&mut self) {
        if self.is_compressed() || self.lp_bytes() < MIN_COMPRESS_BYTES {
            return;
        }
        let raw = &self.buf[self.head..];
        let (Ok(n), Some(max)) = (u32::try_from(raw.len()), raw.len().checked_sub(MIN_COMPRESS_IMPROVE + 1)) else {
            return;
        };
        let mut out = Vec::with_capacity(4 + max);
        out.extend_from_slice(&n.to_le_bytes());
        if lzf::compress(raw, &mut out, max) {
            out.shrink_to_fit();
            self.buf = out;
            self.head = COMPRESSED;
        }
    }

    /// The raw entries of a compressed pack.
    fn raw_bytes(&self) -> Vec<u8> {
        let n = u32::from_le_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        let mut out = Vec::with_capacity(n);
        // Only [`Pack::compress`] writes these bytes: they always decode.
        lzf::decompress(&self.buf[4..], &mut out, n).expect("a node's own LZF bytes decode");
        out
    }

    /// Makes a compressed pack raw again (before it is changed, or as it
    /// reaches an end of the list).
    pub(super) fn decompress(&mut self) {
        if self.is_compressed() {
            self.buf = self.raw_bytes();
            self.head = 0;
        }
    }

    /// The entries through `&self`, whether the pack is compressed or not.
    pub(super) fn view(&self) -> NodeIter<'_> {
        if self.is_compressed() {
            let buf = self.raw_bytes();
            let back = buf.len();
            NodeIter::Unpacked { buf, front: 0, back }
        } else {
            NodeIter::Raw(self.iter())
        }
    }

    /// Entry `i` through `&self`.
    pub(super) fn get_cow(&self, i: usize) -> Option<Cow<'_, [u8]>> {
        if self.is_compressed() {
            let raw = Pack { buf: self.raw_bytes(), head: 0, len: self.len, lp: self.lp };
            raw.get(i).map(|b| Cow::Owned(b.to_vec()))
        } else {
            self.get(i).map(Cow::Borrowed)
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len as usize
    }

    pub(super) fn lp_bytes(&self) -> usize {
        LP_EMPTY + self.lp as usize
    }

    fn counted(&mut self, b: &[u8], add: bool) {
        let s = lp_size32(b);
        if add {
            self.len += 1;
            self.lp = self.lp.saturating_add(s);
        } else {
            self.len -= 1;
            self.lp = self.lp.saturating_sub(s);
        }
    }

    /// Room for `need` more bytes after the entries. Full, with at least
    /// as much room before the entries as they take: the entries move to
    /// the front instead of the buffer growing (a queue fed at the back and
    /// drained at the front). Else the buffer grows to the allocator's size
    /// class of what it must hold rather than doubling: jemalloc's classes
    /// are at most a quarter apart, so pushes stay amortised O(1) while a
    /// list built one push at a time wastes at most a quarter of its bytes
    /// instead of up to half (Redis's listpack is reallocated to its exact
    /// size, so it only ever wastes the class's rounding).
    pub(super) fn room_back(&mut self, need: usize) {
        if self.buf.len() + need <= self.buf.capacity() {
            return;
        }
        let live = self.buf.len() - self.head;
        if self.head >= live.max(1) && live + need <= self.buf.capacity() {
            self.buf.copy_within(self.head.., 0);
            self.buf.truncate(live);
            self.head = 0;
            return;
        }
        let want = tern_table::size_class(self.buf.len() + need);
        self.buf.reserve_exact(want - self.buf.len());
    }

    pub(super) fn push_back(&mut self, b: &[u8]) {
        self.room_back(entry_len(b));
        encode(&mut self.buf, b);
        self.counted(b, true);
    }

    /// Room for `need` more bytes before the entries. The gap opened is
    /// in proportion to the entries, so that a run of front pushes moves
    /// each byte O(1) times: within the buffer when it has the room (a
    /// queue fed at the front and drained at the back frees room at the
    /// end), else in a larger one, sized to a size class as at the back.
    /// A list's first push opens no more than it needs.
    pub(super) fn room_front(&mut self, need: usize) {
        if self.head >= need {
            return;
        }
        let live = self.buf.len() - self.head;
        let gap = if live == 0 { need } else { need + live / 2 + 16 };
        if self.buf.capacity() >= gap + live {
            let old = self.head;
            self.buf.resize(gap + live.max(old), 0);
            self.buf.copy_within(old..old + live, gap);
            self.buf.truncate(gap + live);
        } else {
            let mut nb = Vec::with_capacity(tern_table::size_class(gap + live + live / 2));
            nb.resize(gap, 0);
            nb.extend_from_slice(&self.buf[self.head..]);
            self.buf = nb;
        }
        self.head = gap;
    }

    pub(super) fn push_front(&mut self, b: &[u8]) {
        let need = entry_len(b);
        self.room_front(need);
        let start = self.head - need;
        write_entry(&mut self.buf[start..self.head], b);
        self.head = start;
        self.counted(b, true);
    }

    /// Gives the memory of popped entries back once most of the buffer is
    /// unused.
    fn maybe_shrink(&mut self) {
        let live = self.buf.len() - self.head;
        if self.buf.capacity() > 64 && live * 4 < self.buf.capacity() {
            self.buf = self.buf[self.head..].to_vec();
            self.head = 0;
        }
    }

    pub(super) fn pop_front(&mut self, f: impl FnOnce(&[u8])) -> bool {
        let mut it = self.iter();
        let Some(b) = it.next() else { return false };
        f(b);
        let (s, next) = (lp_size32(b), it.front);
        self.len -= 1;
        self.lp = self.lp.saturating_sub(s);
        self.head = next;
        if self.len == 0 {
            self.buf.clear();
            self.head = 0;
        }
        self.maybe_shrink();
        true
    }

    pub(super) fn pop_back(&mut self, f: impl FnOnce(&[u8])) -> bool {
        let mut it = self.iter();
        let Some(b) = it.next_back() else { return false };
        f(b);
        let (s, end) = (lp_size32(b), it.back);
        self.len -= 1;
        self.lp = self.lp.saturating_sub(s);
        self.buf.truncate(end);
        if self.len == 0 {
            self.buf.clear();
            self.head = 0;
        }
        self.maybe_shrink();
        true
    }

    /// Byte offset where entry `i` starts (`len` for the end), walking from
    /// the nearer end.
    fn offset(&self, i: usize) -> usize {
        offset_in(&self.buf, self.head, self.len(), i)
    }

    pub(super) fn get(&self, i: usize) -> Option<&[u8]> {
        nth(&self.buf, self.head, self.len(), i)
    }

    pub(super) fn insert(&mut self, i: usize, b: &[u8]) {
        if i == 0 {
            return self.push_front(b);
        }
        if i >= self.len() {
            return self.push_back(b);
        }
        let at = self.offset(i);
        let mut e = Vec::with_capacity(entry_len(b));
        encode(&mut e, b);
        self.buf.splice(at..at, e);
        self.counted(b, true);
    }

    /// Removes `count` entries from `i` on.
    pub(super) fn remove_range(&mut self, i: usize, count: usize) {
        let count = count.min(self.len().saturating_sub(i));
        if count == 0 {
            return;
        }
        let start = self.offset(i);
        let mut pos = start;
        let mut lp = 0u32;
        for _ in 0..count {
            let l = get_varint(&self.buf, &mut pos);
            lp = lp.saturating_add(lp_size32(&self.buf[pos..pos + l]));
            pos += l + varint_len(l);
        }
        if start == self.head {
            self.head = pos;
        } else {
            self.buf.drain(start..pos);
        }
        self.len -= count as u32;
        self.lp = self.lp.saturating_sub(lp);
        if self.len == 0 {
            self.buf.clear();
            self.head = 0;
        }
        self.maybe_shrink();
    }

    pub(super) fn replace(&mut self, i: usize, b: &[u8]) {
        self.remove_range(i, 1);
        self.insert(i, b);
    }

    /// Splits off the entries from `i` on.
    pub(super) fn split_off(&mut self, i: usize) -> Pack {
        let at = self.offset(i);
        let tail = Pack::from_iter(PackIter { buf: &self.buf, front: at, back: self.buf.len() });
        self.remove_range(i, self.len() - i);
        tail
    }

    pub(super) fn heap_size(&self) -> usize {
        self.buf.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listpack_sizes_match_redis() {
        assert_eq!(lp_entry_size(b"1"), 2);
        assert_eq!(lp_entry_size(b"-1"), 3);
        assert_eq!(lp_entry_size(b"01"), 4);
        assert_eq!(lp_entry_size(b"hello"), 7);
        assert_eq!(lp_entry_size(&[b'a'; 100]), 102 + 1);
        assert_eq!(lp_entry_size(&[b'a'; 200]), 202 + 2);
        assert_eq!(lp_entry_size(b"9223372036854775807"), 10);
    }
}
