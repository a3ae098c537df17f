//! A connection's unsent replies: owned bytes, plus references to stored
//! values too large to be worth copying (`reply-copy-avoid-min-size`).
//!
//! ```text
//!  bytes:  *2\r\n$65536\r\n | \r\n$3\r\nfoo\r\n      one Vec, reused
//!                          ^ ref at = 13: Arc of the stored value
//!  wire:   *2\r\n$65536\r\n <the 65536 stored bytes> \r\n$3\r\nfoo\r\n
//! ```
//!
//! A reference sits between two owned bytes: the reply that pushes it
//! always follows it with owned bytes (a bulk's CRLF). So a mark
//! (`bytes.len()`) taken after a reference is past it, and truncating to a
//! mark drops exactly the references pushed after the mark (CLIENT REPLY
//! OFF, and the like).
//!
//! Writing goes through `writev` over the owned runs and the references,
//! resuming exactly where a partial write stopped, possibly in the middle
//! of a reference. A reference holds the value alive: a write, APPEND or
//! DEL of the key meanwhile replaces or copies the stored value (copy on
//! write), never the bytes a reply still points at.
//!
//! Accounting (output buffer limits, `omem`) adds the reference lengths
//! known when they were pushed; it never touches the values' memory.
//!
//! Goals: no allocation per reply (the Vec and the reference queue keep
//! their capacity); no change at all to the path without references.
//! Non-goals: sharing small values (copying them is cheaper than
//! counting references).

use std::collections::VecDeque;
use std::io::{self, IoSlice, Write};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// Slices handed to one `writev`; more than enough for a pipeline's worth
/// of large replies, and far below Linux's IOV_MAX (1024).
const MAX_IOV: usize = 64;
/// Owned bytes, written from the front, above which the buffer is
/// compacted, so a client that reads steadily but never quite catches up
/// does not make it grow forever.
const COMPACT_AT: usize = 1024 * 1024;
/// An empty buffer whose capacity grew past this is given back (down to
/// [`SHRUNK`]), the moment its last byte is written: a connection that
/// goes quiet after a large reply must not keep the reply's room. With
/// 1 MB here, 200 idle clients that had each read one 885 KB HGETALL held
/// 168 MB. Replies that fit keep their room (no allocation per reply);
/// larger ones grow it again by doubling, as Redis allocates a reply's
/// blocks past its 16 KB buffer and frees them once written.
const SHRINK_ABOVE: usize = 64 * 1024;
const SHRUNK: usize = 16 * 1024;
/// References queued for sending kept room for once they are all sent.
const REFS_KEPT: usize = 1024;

/// A window into a stored value that a reply sends without copying.
struct Ref {
    /// Offset in the owned bytes the window is sent before.
    at: usize,
    data: Arc<Vec<u8>>,
    start: usize,
    end: usize,
}

#[derive(Default)]
pub struct OutBuf {
    bytes: Vec<u8>,
    /// Ordered by `at`.
    refs: VecDeque<Ref>,
    /// Unsent bytes of the references.
    ref_len: usize,
    /// Owned bytes already written.
    wpos: usize,
    /// Bytes already written of `refs[0]` (only while `wpos == refs[0].at`).
    sent_in_ref: usize,
}

impl Deref for OutBuf {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.bytes
    }
}

impl DerefMut for OutBuf {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }
}

impl OutBuf {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes not yet written, references included.
    #[inline]
    pub fn pending(&self) -> usize {
        self.bytes.len() - self.wpos + self.ref_len
    }

    /// Bytes of the references in the pending output.
    pub fn shared_len(&self) -> usize {
        self.ref_len
    }

    /// Owned bytes not yet written (CLIENT LIST `obl`).
    pub fn owned_pending(&self) -> usize {
        self.bytes.len() - self.wpos
    }

    /// References not yet written, wholly or in part (CLIENT LIST `oll`).
    pub fn shared_count(&self) -> usize {
        self.refs.len()
    }

    /// Queues `data[range]` to be sent at the current end of the owned
    /// bytes. The caller must append owned bytes right after (see the
    /// module doc).
    pub fn push_shared(&mut self, data: &Arc<Vec<u8>>, start: usize, end: usize) {
        debug_assert!(start <= end && end <= data.len());
        if start == end {
            return;
        }
        self.ref_len += end - start;
        self.refs.push_back(Ref { at: self.bytes.len(), data: Arc::clone(data), start, end });
    }

    /// Drops everything after `mark` (a `len()` taken earlier), references
    /// pushed since included. Shadows `Vec::truncate` for every caller.
    pub fn truncate(&mut self, mark: usize) {
        let mark = mark.max(self.wpos);
        while let Some(r) = self.refs.back() {
            if r.at < mark || (r.at == mark && self.refs.len() == 1 && self.sent_in_ref > 0) {
                break;
            }
            let sent = if self.refs.len() == 1 && self.wpos == r.at { self.sent_in_ref } else { 0 };
            self.ref_len -= r.end - r.start - sent;
            self.refs.pop_back();
            if self.refs.is_empty() {
                self.sent_in_ref = 0;
            }
        }
        self.bytes.truncate(mark);
    }

    /// Drops all pending output. Shadows `Vec::clear`.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.refs.clear();
        self.ref_len = 0;
        self.wpos = 0;
        self.sent_in_ref = 0;
    }

    /// Writes as much pending output as `w` takes. Returns the bytes
    /// written and whether everything is out (`false`: `w` would block).
    pub fn write_to(&mut self, w: &mut impl Write) -> (usize, io::Result<bool>) {
        let mut total = 0;
        let result = loop {
            if self.pending() == 0 {
                break Ok(true);
            }
            let r = if self.refs.is_empty() {
                w.write(&self.bytes[self.wpos..])
            } else {
                let mut iov = [IoSlice::new(&[]); MAX_IOV];
                let n = self.fill_iov(&mut iov);
                w.write_vectored(&iov[..n])
            };
            match r {
                Ok(0) => break Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    total += n;
                    self.advance(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        self.settle();
        (total, result)
    }

    /// The pending output from the write position on, as slices in wire
    /// order (as many as fit).
    fn fill_iov<'s>(&'s self, iov: &mut [IoSlice<'s>; MAX_IOV]) -> usize {
        let mut n = 0;
        let mut pos = self.wpos;
        for (i, r) in self.refs.iter().enumerate() {
            if pos < r.at {
                iov[n] = IoSlice::new(&self.bytes[pos..r.at]);
                n += 1;
                if n == MAX_IOV {
                    return n;
                }
            }
            let skip = if i == 0 { self.sent_in_ref } else { 0 };
            iov[n] = IoSlice::new(&r.data[r.start + skip..r.end]);
            n += 1;
            pos = r.at;
            if n == MAX_IOV {
                return n;
            }
        }
        if pos < self.bytes.len() {
            iov[n] = IoSlice::new(&self.bytes[pos..]);
            n += 1;
        }
        n
    }

    /// Moves the write position `n` bytes along the wire order.
    fn advance(&mut self, mut n: usize) {
        while n > 0 {
            match self.refs.front() {
                Some(r) if self.wpos < r.at => {
                    let take = n.min(r.at - self.wpos);
                    self.wpos += take;
                    n -= take;
                }
                Some(r) => {
                    let left = r.end - r.start - self.sent_in_ref;
                    let take = n.min(left);
                    self.sent_in_ref += take;
                    self.ref_len -= take;
                    n -= take;
                    if take == left {
                        self.refs.pop_front();
                        self.sent_in_ref = 0;
                    }
                }
                None => {
                    self.wpos += n.min(self.bytes.len() - self.wpos);
                    n = 0;
                }
            }
        }
    }

    /// Reclaims written bytes: resets an emptied buffer (giving back a
    /// large one), compacts one that is mostly written.
    fn settle(&mut self) {
        if self.pending() == 0 {
            self.clear();
            if self.bytes.capacity() > SHRINK_ABOVE {
                self.bytes = Vec::with_capacity(SHRUNK);
            }
            if self.refs.capacity() > REFS_KEPT {
                self.refs = VecDeque::new();
            }
        } else if self.wpos >= COMPACT_AT && self.wpos * 2 >= self.bytes.len() {
            self.bytes.drain(..self.wpos);
            for r in &mut self.refs {
                r.at -= self.wpos;
            }
            self.wpos = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Accepts at most `chunk` bytes per call and every `block`th call
    /// would block, to drive partial writes through every boundary.
    struct Trickle {
        got: Vec<u8>,
        chunk: usize,
        calls: usize,
        block: usize,
    }

    impl Write for Trickle {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.write_vectored(&[IoSlice::new(b)])
        }
        fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
            self.calls += 1;
            if self.block > 0 && self.calls == self.block {
                self.calls = 0;
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let mut left = self.chunk;
            for b in bufs {
                let take = left.min(b.len());
                self.got.extend_from_slice(&b[..take]);
                left -= take;
                if left == 0 {
                    break;
                }
            }
            Ok(self.chunk - left)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn big(n: usize, seed: u8) -> Arc<Vec<u8>> {
        Arc::new((0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect())
    }

    /// Builds `hdr1 ref1 CRLF hdr2 ref2 CRLF tail`, and the wire bytes.
    fn sample() -> (OutBuf, Vec<u8>) {
        let (a, b) = (big(1000, 1), big(777, 2));
        let mut o = OutBuf::new();
        let mut want = Vec::new();
        for (v, s, e) in [(&a, 0, 1000), (&b, 13, 777)] {
            o.extend_from_slice(b"$hdr\r\n");
            o.push_shared(v, s, e);
            o.extend_from_slice(b"\r\n");
            want.extend_from_slice(b"$hdr\r\n");
            want.extend_from_slice(&v[s..e]);
            want.extend_from_slice(b"\r\n");
        }
        o.extend_from_slice(b"+tail\r\n");
        want.extend_from_slice(b"+tail\r\n");
        (o, want)
    }

    #[test]
    fn partial_writes_resume_anywhere() {
        for chunk in [1, 2, 3, 5, 6, 7, 64, 999, 1000, 1001, 4096] {
            for block in [0, 2, 3] {
                let (mut o, want) = sample();
                assert_eq!(o.pending(), want.len());
                let mut w = Trickle { got: Vec::new(), chunk, calls: 0, block };
                let mut written = 0;
                loop {
                    let (n, r) = o.write_to(&mut w);
                    written += n;
                    assert_eq!(o.pending(), want.len() - written);
                    if r.unwrap() {
                        break;
                    }
                }
                assert_eq!(w.got, want, "chunk {chunk} block {block}");
                assert_eq!((o.pending(), o.shared_len(), o.len()), (0, 0, 0));
            }
        }
    }

    #[test]
    fn written_large_replies_give_their_room_back() {
        let mut o = OutBuf::new();
        let mut w = Trickle { got: Vec::new(), chunk: 1 << 20, calls: 0, block: 0 };
        o.extend_from_slice(&vec![b'x'; 900 * 1024]);
        let v = big(100, 7);
        for _ in 0..5000 {
            o.push_shared(&v, 0, 100);
            o.extend_from_slice(b"\r\n");
        }
        assert!(o.write_to(&mut w).1.unwrap());
        assert!(o.bytes.capacity() <= SHRUNK && o.refs.capacity() <= REFS_KEPT);
        // A reply that fits under SHRINK_ABOVE keeps its room: the next
        // one of the same size does not allocate.
        o.extend_from_slice(&vec![b'y'; 40 * 1024]);
        assert!(o.write_to(&mut w).1.unwrap());
        let (cap, ptr) = (o.bytes.capacity(), o.bytes.as_ptr());
        assert!(cap >= 40 * 1024);
        o.extend_from_slice(&vec![b'z'; 40 * 1024]);
        assert_eq!((o.bytes.capacity(), o.bytes.as_ptr()), (cap, ptr));
        assert!(o.write_to(&mut w).1.unwrap());
    }

    #[test]
    fn compaction_moves_the_refs_with_the_bytes() {
        let v = big(5000, 5);
        let mut o = OutBuf::new();
        let mut want = vec![b'a'; COMPACT_AT + COMPACT_AT / 2];
        o.extend_from_slice(&want);
        o.push_shared(&v, 0, v.len());
        o.extend_from_slice(b"\r\n+after\r\n");
        want.extend_from_slice(&v);
        want.extend_from_slice(b"\r\n+after\r\n");
        let mut w = Trickle { got: Vec::new(), chunk: COMPACT_AT + 1000, calls: 0, block: 2 };
        assert!(!o.write_to(&mut w).1.unwrap());
        assert_eq!((o.wpos, o.len()), (0, COMPACT_AT / 2 - 1000 + 10), "written front compacted away");
        assert_eq!(o.pending(), want.len() - w.got.len());
        while !o.write_to(&mut w).1.unwrap() {}
        assert!(w.got == want);
    }

    #[test]
    fn truncate_drops_later_refs_only() {
        let (a, b) = (big(100, 3), big(50, 4));
        let mut o = OutBuf::new();
        o.extend_from_slice(b"$100\r\n");
        o.push_shared(&a, 0, 100);
        o.extend_from_slice(b"\r\n");
        let mark = o.len();
        o.extend_from_slice(b"$50\r\n");
        o.push_shared(&b, 0, 50);
        o.extend_from_slice(b"\r\n");
        assert_eq!(o.pending(), mark + 100 + 5 + 50 + 2);
        o.truncate(mark);
        assert_eq!((o.pending(), o.shared_len()), (mark + 100, 100));
        let mark0 = 0;
        o.truncate(mark0);
        assert_eq!((o.pending(), o.shared_len()), (0, 0));
        assert_eq!(Arc::strong_count(&a), 1);
    }

    #[test]
    fn truncate_after_partial_write_keeps_sent_part_consistent() {
        let (mut o, want) = sample();
        let mut w = Trickle { got: Vec::new(), chunk: 10, calls: 0, block: 2 };
        let (n, _) = o.write_to(&mut w);
        assert_eq!(n, 10);
        // Nothing after the mark was pushed: truncating to the end is a no-op.
        let end = o.len();
        o.truncate(end);
        assert_eq!(o.pending(), want.len() - 10);
        let mut w2 = Trickle { got: w.got, chunk: 1 << 20, calls: 0, block: 0 };
        assert!(o.write_to(&mut w2).1.unwrap());
        assert_eq!(w2.got, want);
    }
}
