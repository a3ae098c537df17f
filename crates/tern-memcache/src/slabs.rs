//! memcached's slab classes, as `stats cachedump`, `lru_crawler metadump`
//! and `me` name them: Tern has no slabs, but reports the class memcached
//! 1.6 would store an item of the same size in (default `-n 48 -f 1.25`,
//! chunks up to half the 1 MiB page), so tools that walk classes find
//! every item where they look for it.

/// The largest class id memcached allows (`MAX_NUMBER_OF_SLAB_CLASSES - 1`).
pub const MAX_CLASS: u32 = 63;
/// The smallest chunk: the item header plus memcached's `-n 48`.
const SMALLEST: usize = 48 + 48;
const FACTOR: f64 = 1.25;
const ALIGN: usize = 8;
/// `slab_chunk_size_max`: half of memcached's 1 MiB slab page.
const CHUNK_MAX: usize = 512 * 1024;

/// The class of an item of `total` bytes (see
/// [`crate::parse::item_total_size`]) as memcached's `slabs_init` builds
/// them: each class 1.25 times the last, aligned to 8 bytes, up to the
/// largest chunk; larger items are chained from the largest class.
pub fn class_of(total: usize) -> u32 {
    let mut size = SMALLEST;
    let mut id = 1;
    while id < MAX_CLASS && (size as f64) < CHUNK_MAX as f64 / FACTOR {
        if size % ALIGN != 0 {
            size += ALIGN - size % ALIGN;
        }
        if total <= size {
            return id;
        }
        size = (size as f64 * FACTOR) as usize;
        id += 1;
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_memcached_1_6_s() {
        // From `memcached -vv`: class 1 holds 96 bytes, 2 120, 3 152, ...,
        // 38 394840, and 39 (the last) 524288 and chained items.
        assert_eq!([class_of(1), class_of(96), class_of(97), class_of(120), class_of(121)], [1, 1, 2, 2, 3]);
        assert_eq!([class_of(152), class_of(153), class_of(944), class_of(945)], [3, 4, 11, 12]);
        assert_eq!([class_of(394_840), class_of(394_841), class_of(524_288), class_of(600_062)], [38, 39, 39, 39]);
    }
}
