//! Consistent hashing: which server of a pool a key lives on.
//!
//! Two rings, both MD5 continuums searched for the first point above the
//! key's hash (wrapping to the first point), so that a client switching to
//! Tern keeps its keys where they are:
//!
//! - [`Hashing::Ketama`]: libmemcached's ketama as uhashring implements it
//!   (`HashRing(nodes, hash_fn="ketama")`): per server 40 names
//!   `"<name>-<i>"`, each MD5 giving four 32-bit little-endian points (160
//!   points a server); a key's hash is the first four bytes of its MD5.
//! - [`Hashing::Md5`]: uhashring's default ring, which meta-memcache's
//!   `HashRingConnectionPoolProvider` uses: 160 points `"<name>-<i>"` a
//!   server, each the whole MD5 read as a 128-bit big-endian number, and
//!   the key's whole MD5 likewise.
//!
//! A server's name is `host:port` (`[host]:port` for IPv6), as
//! meta-memcache's `str(ServerAddress)` and pymemcache's pools write it.
//! When two points collide the server listed later owns it, as in
//! uhashring (a dict keyed by point, filled in server order). Every server
//! weighs the same (uhashring's default weight of 1); weights are not
//! supported.

use md5::{Digest, Md5};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Hashing {
    /// uhashring's default ring, as meta-memcache's pools use it.
    #[default]
    Md5,
    /// libmemcached-compatible ketama (uhashring `hash_fn="ketama"`).
    Ketama,
}

/// Points per server in both rings.
pub const POINTS_PER_SERVER: usize = 160;
/// Ketama names per server; each MD5 yields four points.
const KETAMA_NAMES: usize = POINTS_PER_SERVER / 4;

#[derive(Clone, Debug)]
pub struct Ring {
    hashing: Hashing,
    /// (point, server index), sorted by point, one entry per point.
    points: Vec<(u128, usize)>,
}

fn md5(b: &[u8]) -> [u8; 16] {
    Md5::digest(b).into()
}

impl Ring {
    /// A ring over servers with these names; server `i` of the result is
    /// `names[i]`.
    pub fn new<S: AsRef<str>>(hashing: Hashing, names: &[S]) -> Ring {
        let mut points = Vec::with_capacity(names.len() * POINTS_PER_SERVER);
        for (server, name) in names.iter().enumerate() {
            let name = name.as_ref();
            match hashing {
                Hashing::Md5 => {
                    for i in 0..POINTS_PER_SERVER {
                        let d = md5(format!("{name}-{i}").as_bytes());
                        points.push((u128::from_be_bytes(d), server));
                    }
                }
                Hashing::Ketama => {
                    for i in 0..KETAMA_NAMES {
                        let d = md5(format!("{name}-{i}").as_bytes());
                        for c in d.chunks_exact(4) {
                            let p = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                            points.push((u128::from(p), server));
                        }
                    }
                }
            }
        }
        // Stable: equal points keep server order, and the last one wins.
        points.sort_by_key(|p| p.0);
        let mut dedup: Vec<(u128, usize)> = Vec::with_capacity(points.len());
        for p in points {
            match dedup.last_mut() {
                Some(last) if last.0 == p.0 => *last = p,
                _ => dedup.push(p),
            }
        }
        Ring { hashing, points: dedup }
    }

    pub fn hash(&self, key: &[u8]) -> u128 {
        let d = md5(key);
        match self.hashing {
            Hashing::Md5 => u128::from_be_bytes(d),
            Hashing::Ketama => u128::from(u32::from_le_bytes([d[0], d[1], d[2], d[3]])),
        }
    }

    /// The index of the server `key` belongs to; 0 for an empty ring.
    pub fn server_for(&self, key: &[u8]) -> usize {
        if self.points.is_empty() {
            return 0;
        }
        let h = self.hash(key);
        // First point strictly above the hash (Python's bisect_right).
        let i = self.points.partition_point(|p| p.0 <= h);
        self.points.get(i).unwrap_or(&self.points[0]).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("127.0.0.1:{}", 11211 + i)).collect()
    }

    /// Golden values from uhashring 2.5 (`HashRing(nodes)` and
    /// `HashRing(nodes, hash_fn="ketama")` over 127.0.0.1:11211..11214);
    /// tests/python checks many more keys against uhashring itself.
    #[test]
    fn matches_uhashring() {
        let md5 = Ring::new(Hashing::Md5, &names(4));
        let ketama = Ring::new(Hashing::Ketama, &names(4));
        for (key, want_md5, want_ketama) in GOLDEN {
            assert_eq!(md5.server_for(key.as_bytes()), *want_md5, "md5 ring, key {key}");
            assert_eq!(ketama.server_for(key.as_bytes()), *want_ketama, "ketama ring, key {key}");
        }
    }

    include!("ring_golden.rs");

    #[test]
    fn one_server_takes_everything_and_empty_ring_is_zero() {
        let r = Ring::new(Hashing::Ketama, &names(1));
        assert!((0..100).all(|i| r.server_for(format!("k{i}").as_bytes()) == 0));
        let r = Ring::new::<String>(Hashing::Md5, &[]);
        assert_eq!(r.server_for(b"x"), 0);
    }

    #[test]
    fn spread_is_even_enough_and_consistent() {
        for hashing in [Hashing::Md5, Hashing::Ketama] {
            let four = Ring::new(hashing, &names(4));
            let five = Ring::new(hashing, &names(5));
            let mut counts = [0usize; 4];
            let mut moved = 0;
            for i in 0..20_000 {
                let k = format!("key:{i}");
                let a = four.server_for(k.as_bytes());
                counts[a] += 1;
                let b = five.server_for(k.as_bytes());
                // Adding a server only moves keys to the new server.
                if a != b {
                    assert_eq!(b, 4, "{hashing:?}: {k} moved between old servers");
                    moved += 1;
                }
            }
            assert!(counts.iter().all(|&c| (3_500..6_500).contains(&c)), "{hashing:?}: {counts:?}");
            assert!((2_000..6_500).contains(&moved), "{hashing:?}: {moved} moved");
        }
    }
}
