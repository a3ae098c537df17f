//! `stats detail on|off|dump`: memcached's per-prefix counters. While on,
//! every key of a text `get`/`gets`/`gat`/`gats`, every text storage
//! command and every `delete` counts against the key's prefix (the bytes
//! before the first `:`; keys without one are not counted), as memcached
//! 1.6 counts them (the meta commands, `incr`/`decr` and `touch` do not).
//! The dump walks memcached's 256 buckets (prefix hashed with its
//! MurmurHash3) in order, newest prefix first within a bucket, so it
//! lists prefixes in the order memcached does; a prefix is found by
//! memcached's `strncmp`, so `ab` counts against `abc` when they share a
//! bucket and `abc` came first.

use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use tern_memcache::errors as e;
use tern_memcache::reply::{self, Status};

use super::Exec;

const BUCKETS: usize = 256;
/// Distinct prefixes tracked at most: a client sending keys of ever new
/// prefixes cannot grow the table without bound (memcached has no limit);
/// prefixes past it are not counted.
const MAX_PREFIXES: usize = 1 << 20;

#[derive(Debug, Default)]
struct Prefix {
    name: Box<[u8]>,
    gets: u64,
    hits: u64,
    sets: u64,
    dels: u64,
}

/// The switch and the counters, shared by every memcached connection.
#[derive(Debug, Default)]
pub struct Detail {
    on: AtomicBool,
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    /// Empty until the first prefix; then [`BUCKETS`] lists, newest last.
    buckets: Vec<Vec<Prefix>>,
    count: usize,
}

/// What a request did to a key, for [`Detail::record`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Get { hit: bool },
    Set,
    Delete,
}

impl Detail {
    /// Counts `ev` against `key`'s prefix, if detail is on and the key has one.
    pub fn record(&self, key: &[u8], ev: Event) {
        if !self.on.load(Ordering::Relaxed) {
            return;
        }
        let Some(len) = key.iter().position(|&b| b == b':') else { return };
        let prefix = &key[..len];
        let mut t = self.table.lock();
        if t.buckets.is_empty() {
            t.buckets.resize_with(BUCKETS, Vec::new);
        }
        let b = murmur3_32(prefix) as usize % BUCKETS;
        // memcached's strncmp over the new prefix's length.
        let found = t.buckets[b].iter().rposition(|p| p.name.len() >= len && &p.name[..len] == prefix);
        let i = match found {
            Some(i) => i,
            None if t.count >= MAX_PREFIXES => return,
            None => {
                t.count += 1;
                t.buckets[b].push(Prefix { name: prefix.into(), ..Default::default() });
                t.buckets[b].len() - 1
            }
        };
        let p = &mut t.buckets[b][i];
        match ev {
            Event::Get { hit } => {
                p.gets += 1;
                p.hits += u64::from(hit);
            }
            Event::Set => p.sets += 1,
            Event::Delete => p.dels += 1,
        }
    }

    /// `stats reset` forgets every prefix.
    pub fn clear(&self) {
        *self.table.lock() = Table::default();
    }
}

impl Exec<'_> {
    /// `stats detail on|off|dump` (`arg` the word after `detail`, if any).
    pub(super) fn stats_detail(&mut self, arg: Option<&[u8]>) {
        let d = &self.sh.detail;
        match arg {
            Some(b"on") => {
                d.on.store(true, Ordering::Relaxed);
                reply::status(self.out, Status::Ok);
            }
            Some(b"off") => {
                d.on.store(false, Ordering::Relaxed);
                reply::status(self.out, Status::Ok);
            }
            Some(b"dump") => {
                let t = d.table.lock();
                for p in t.buckets.iter().flat_map(|b| b.iter().rev()) {
                    self.out.extend_from_slice(b"PREFIX ");
                    self.out.extend_from_slice(&p.name);
                    let counts = format!(" get {} hit {} set {} del {}\r\n", p.gets, p.hits, p.sets, p.dels);
                    self.out.extend_from_slice(counts.as_bytes());
                }
                reply::status(self.out, Status::End);
            }
            _ => reply::line(self.out, e::DETAIL_USAGE),
        }
    }
}

/// MurmurHash3 x86 32-bit with seed 0, memcached's default `hash`.
fn murmur3_32(key: &[u8]) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut h: u32 = 0;
    let mut blocks = key.chunks_exact(4);
    for b in blocks.by_ref() {
        h ^= mix(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let k = tail.iter().enumerate().fold(0u32, |k, (i, &b)| k ^ (u32::from(b) << (8 * i)));
        h ^= mix(k);
    }
    h ^= key.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_known_values() {
        // The reference implementation's published values for seed 0.
        assert_eq!(murmur3_32(b""), 0);
        assert_eq!(murmur3_32(b"hello"), 0x248b_fa47);
        assert_eq!(murmur3_32(b"Hello, world!"), 0xc036_3e43);
    }

    #[test]
    fn prefixes_count_as_memcached_counts_them() {
        let d = Detail::default();
        d.record(b"a:1", Event::Set);
        assert!(d.table.lock().buckets.is_empty(), "off: nothing counted");
        d.on.store(true, Ordering::Relaxed);
        d.record(b"a:1", Event::Set);
        d.record(b"a:2", Event::Get { hit: false });
        d.record(b"a:2", Event::Get { hit: true });
        d.record(b"nocolon", Event::Delete);
        d.record(b":x", Event::Delete);
        let t = d.table.lock();
        let all: Vec<_> = t.buckets.iter().flatten().map(|p| (p.name.to_vec(), p.gets, p.hits, p.sets, p.dels)).collect();
        assert_eq!(all.len(), 2);
        assert!(all.contains(&(b"a".to_vec(), 2, 1, 1, 0)));
        assert!(all.contains(&(b"".to_vec(), 0, 0, 0, 1)));
    }
}
