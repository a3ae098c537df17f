//! The replication backlog: the last `repl-backlog-size` bytes of the
//! replication stream, by offset, so that a replica that lost its link can
//! take up the stream where it left it (PSYNC's partial resynchronisation).
//!
//! Offsets are Redis's: the stream's bytes are numbered from 1 on, and
//! `end` is the number of the last one sent (`master_repl_offset`). The
//! backlog holds bytes `first()..=end`; a replica asking for the stream
//! from offset `o` (its own offset plus one) is served when
//! `first() <= o <= end + 1`.

/// A ring of the stream's last bytes.
#[derive(Debug)]
pub struct Backlog {
    ring: Vec<u8>,
    /// Where the next byte goes in `ring`.
    head: usize,
    /// Bytes held (at most `ring.len()`).
    len: usize,
    /// The offset of the last byte of the stream (held or not).
    end: u64,
}

impl Backlog {
    /// An empty backlog of `size` bytes whose stream has reached `end`.
    pub fn new(size: usize, end: u64) -> Self {
        Backlog { ring: vec![0; size], head: 0, len: 0, end }
    }

    pub fn size(&self) -> usize {
        self.ring.len()
    }

    /// Bytes held (INFO's `repl_backlog_histlen`).
    pub fn histlen(&self) -> usize {
        self.len
    }

    /// The offset of the first byte held (`repl_backlog_first_byte_offset`).
    pub fn first(&self) -> u64 {
        self.end + 1 - self.len as u64
    }

    /// Appends stream bytes (the oldest fall out).
    pub fn push(&mut self, b: &[u8]) {
        self.end += b.len() as u64;
        let cap = self.ring.len();
        if cap == 0 {
            return;
        }
        let b = if b.len() > cap { &b[b.len() - cap..] } else { b };
        let first = b.len().min(cap - self.head);
        self.ring[self.head..self.head + first].copy_from_slice(&b[..first]);
        self.ring[..b.len() - first].copy_from_slice(&b[first..]);
        self.head = (self.head + b.len()) % cap;
        self.len = (self.len + b.len()).min(cap);
    }

    /// Whether the stream from offset `from` on is all held.
    pub fn covers(&self, from: u64) -> bool {
        from >= self.first() && from <= self.end + 1
    }

    /// The stream from offset `from` on (which [`Backlog::covers`]).
    pub fn read_from(&self, from: u64) -> Vec<u8> {
        let n = (self.end + 1 - from) as usize;
        let cap = self.ring.len();
        let mut out = Vec::with_capacity(n);
        if n == 0 {
            return out;
        }
        let start = (self.head + cap - n) % cap;
        let first = n.min(cap - start);
        out.extend_from_slice(&self.ring[start..start + first]);
        out.extend_from_slice(&self.ring[..n - first]);
        out
    }

    /// Another size (CONFIG SET repl-backlog-size), keeping what fits.
    pub fn resize(&mut self, size: usize) {
        if size == self.ring.len() {
            return;
        }
        let keep = self.len.min(size);
        let tail = self.read_from(self.end + 1 - keep as u64);
        let end = self.end;
        *self = Backlog::new(size, end - keep as u64);
        self.push(&tail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_the_last_bytes_by_offset() {
        let mut b = Backlog::new(8, 0);
        assert_eq!((b.first(), b.histlen()), (1, 0));
        assert!(b.covers(1) && !b.covers(2));
        b.push(b"abcde");
        assert_eq!(b.read_from(1), b"abcde");
        assert_eq!(b.read_from(4), b"de");
        b.push(b"fghij");
        assert_eq!((b.first(), b.histlen(), b.end), (3, 8, 10));
        assert!(!b.covers(2) && b.covers(3) && b.covers(11) && !b.covers(12));
        assert_eq!(b.read_from(3), b"cdefghij");
        assert_eq!(b.read_from(11), b"");
        b.push(b"0123456789xy");
        assert_eq!(b.read_from(b.first()), b"456789xy");
        assert_eq!(b.end, 22);
    }

    #[test]
    fn resizing_keeps_the_tail() {
        let mut b = Backlog::new(8, 100);
        b.push(b"abcdefgh");
        b.resize(4);
        assert_eq!((b.first(), b.read_from(b.first())), (105, b"efgh".to_vec()));
        b.resize(16);
        b.push(b"ij");
        assert_eq!((b.first(), b.read_from(b.first())), (105, b"efghij".to_vec()));
    }

    #[test]
    fn matches_a_plain_model() {
        // Random pushes against a Vec of everything ever pushed.
        let mut all = Vec::new();
        let mut b = Backlog::new(37, 0);
        let mut x = 12345u64;
        for i in 0..500 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let n = (x >> 33) as usize % 50;
            let chunk: Vec<u8> = (0..n).map(|j| (i + j) as u8).collect();
            b.push(&chunk);
            all.extend_from_slice(&chunk);
            let first = b.first();
            assert_eq!(b.read_from(first), all[first as usize - 1..]);
        }
    }
}
