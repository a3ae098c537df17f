//! A simple chained hash table with Redis-style SCAN cursors.
//!
//! Buckets are a power of two in number; an entry lives in bucket
//! `hash & mask`. The table doubles when it holds more entries than buckets
//! and halves when it is under one eighth full, rehashing all at once (the
//! prefetching table of its own issue makes this incremental).
//!
//! SCAN walks bucket indexes in reverse-binary order (increment the reversed
//! index), which is what makes a cursor survive growth and shrinking between
//! calls: every entry present for the whole scan is returned at least once.

pub trait Keyed {
    fn hash(&self) -> u64;
}

#[derive(Debug)]
pub struct Table<E> {
    buckets: Vec<Vec<E>>,
    len: usize,
}

const MIN_BUCKETS: usize = 4;

impl<E: Keyed> Default for Table<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Keyed> Table<E> {
    pub fn new() -> Self {
        Table { buckets: (0..MIN_BUCKETS).map(|_| Vec::new()).collect(), len: 0 }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn bucket_count(&self) -> usize {
        self.buckets.len()
    }

    fn mask(&self) -> u64 {
        self.buckets.len() as u64 - 1
    }

    pub fn find(&self, hash: u64, mut eq: impl FnMut(&E) -> bool) -> Option<&E> {
        self.buckets[(hash & self.mask()) as usize].iter().find(|e| e.hash() == hash && eq(e))
    }

    /// Entries whose hash is `hash` (several keys may share one).
    pub fn iter_hash(&self, hash: u64) -> impl Iterator<Item = &E> {
        self.buckets[(hash & self.mask()) as usize].iter().filter(move |e| e.hash() == hash)
    }

    pub fn find_mut(&mut self, hash: u64, mut eq: impl FnMut(&E) -> bool) -> Option<&mut E> {
        let m = self.mask();
        self.buckets[(hash & m) as usize].iter_mut().find(|e| e.hash() == hash && eq(e))
    }

    /// Inserts without checking for an existing equal entry.
    pub fn insert_new(&mut self, e: E) -> &mut E {
        if self.len >= self.buckets.len() {
            self.resize(self.buckets.len() * 2);
        }
        self.len += 1;
        let m = self.mask();
        let b = &mut self.buckets[(e.hash() & m) as usize];
        b.push(e);
        b.last_mut().expect("just pushed")
    }

    pub fn remove(&mut self, hash: u64, mut eq: impl FnMut(&E) -> bool) -> Option<E> {
        let m = self.mask();
        let b = &mut self.buckets[(hash & m) as usize];
        let i = b.iter().position(|e| e.hash() == hash && eq(e))?;
        let e = b.swap_remove(i);
        if b.is_empty() {
            // Give back the bucket's memory: a deleted key should free memory.
            *b = Vec::new();
        }
        self.len -= 1;
        if self.buckets.len() > MIN_BUCKETS && self.len * 8 < self.buckets.len() {
            self.resize(self.buckets.len() / 2);
        }
        Some(e)
    }

    fn resize(&mut self, n: usize) {
        let n = n.max(MIN_BUCKETS).next_power_of_two();
        let old = std::mem::replace(&mut self.buckets, (0..n).map(|_| Vec::new()).collect());
        let m = n as u64 - 1;
        for e in old.into_iter().flatten() {
            self.buckets[(e.hash() & m) as usize].push(e);
        }
    }

    pub fn clear(&mut self) {
        *self = Self::new();
    }

    pub fn iter(&self) -> impl Iterator<Item = &E> {
        self.buckets.iter().flatten()
    }

    /// Entries of bucket `i` (for random sampling).
    pub fn bucket(&self, i: usize) -> &[E] {
        &self.buckets[i % self.buckets.len()]
    }

    /// Visits one SCAN step starting at `cursor`; returns the next cursor
    /// (0 when the walk is complete).
    pub fn scan<'a>(&'a self, cursor: u64, mut f: impl FnMut(&'a E)) -> u64 {
        let m = self.mask();
        for e in &self.buckets[(cursor & m) as usize] {
            f(e);
        }
        let mut v = cursor | !m;
        v = v.reverse_bits();
        v = v.wrapping_add(1);
        v.reverse_bits()
    }

    /// Keeps only the entries for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&mut E) -> bool) {
        for b in &mut self.buckets {
            let before = b.len();
            b.retain_mut(&mut keep);
            self.len -= before - b.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[derive(Debug, Clone, Copy, PartialEq)]
    struct K(u64);
    impl Keyed for K {
        fn hash(&self) -> u64 {
            self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        }
    }

    #[test]
    fn insert_find_remove() {
        let mut t = Table::new();
        for i in 0..1000 {
            t.insert_new(K(i));
        }
        assert_eq!(t.len(), 1000);
        for i in 0..1000 {
            assert!(t.find(K(i).hash(), |e| e.0 == i).is_some());
        }
        for i in 0..990 {
            assert!(t.remove(K(i).hash(), |e| e.0 == i).is_some());
        }
        assert_eq!(t.len(), 10);
        assert!(t.bucket_count() < 1000);
    }

    #[test]
    fn scan_survives_growth_and_shrink() {
        let mut t = Table::new();
        for i in 0..100 {
            t.insert_new(K(i));
        }
        let mut seen = HashSet::new();
        let mut cursor = 0;
        let mut step = 0;
        loop {
            cursor = t.scan(cursor, |e| {
                seen.insert(e.0);
            });
            step += 1;
            // Grow, then shrink, in the middle of the scan.
            if step == 10 {
                for i in 1000..5000 {
                    t.insert_new(K(i));
                }
            }
            if step == 40 {
                for i in 1000..5000 {
                    t.remove(K(i).hash(), |e| e.0 == i);
                }
            }
            if cursor == 0 {
                break;
            }
        }
        for i in 0..100 {
            assert!(seen.contains(&i), "missing {i}");
        }
    }
}
