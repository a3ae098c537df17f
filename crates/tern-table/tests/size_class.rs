//! `size_class` agrees with jemalloc's own answer (`malloc_usable_size` of a
//! real allocation), so `mem_bytes` is exact to the allocator.
#![cfg(not(miri))]

use std::alloc::{GlobalAlloc, Layout};

use tern_table::{size_class, Item, Table};
use tikv_jemallocator::Jemalloc;

fn usable(size: usize, align: usize) -> usize {
    let layout = Layout::from_size_align(size, align).expect("layout");
    // SAFETY: non-zero size; the block is freed right away with its layout.
    unsafe {
        let p = Jemalloc.alloc(layout);
        assert!(!p.is_null());
        let u = tikv_jemallocator::usable_size(p);
        Jemalloc.dealloc(p, layout);
        u
    }
}

#[test]
fn matches_jemalloc_for_every_small_size_and_sampled_large_ones() {
    for size in 1..=20_000 {
        assert_eq!(size_class(size), usable(size, 8), "size {size}");
    }
    let mut size = 20_000;
    while size < 1 << 30 {
        for s in [size - 1, size, size + 1] {
            assert_eq!(size_class(s), usable(s, 8), "size {s}");
        }
        size = size * 5 / 4;
    }
}

#[test]
fn bucket_arrays_are_exact_at_alignment_64() {
    for nb in (0..22).map(|s| 1usize << s) {
        assert_eq!(size_class(nb * 64), usable(nb * 64, 64), "{nb} buckets");
    }
    assert_eq!(usable(64, 64), 64);
}

#[test]
fn item_sizes_are_what_jemalloc_hands_out() {
    let mut t: Table<[u64; 3]> = Table::new();
    for len in [0usize, 1, 7, 16, 40, 100, 1000, 5000] {
        let key = vec![b'k'; len];
        let it = Item::new_boxed(&key, [0u64; 3], Some(1), b"xyz");
        let want = usable(std::mem::size_of_val(&*it), std::mem::align_of_val(&*it));
        assert_eq!(it.alloc_size(), want, "key of {len}");
        let h = std::hash::BuildHasher::hash_one(t.hasher(), &key[..]);
        t.insert_item(h, it);
    }
}
