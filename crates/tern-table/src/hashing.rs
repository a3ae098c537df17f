//! The key hash of the crate's hashing contract, computed in line.

use std::hash::{BuildHasher, Hasher};

/// `hasher.hash_one(key)` (the hashing contract's hash), its steps spelled
/// out (a slice hashes its length, then its bytes) so that they inline
/// where keys are hashed in a loop: through `hash_one` the slice's `Hash`
/// stayed a call, with the hasher's state passed through the stack.
#[inline]
pub fn hash_key<S: BuildHasher>(hasher: &S, key: &[u8]) -> u64 {
    let mut h = hasher.build_hasher();
    h.write_usize(key.len());
    h.write(key);
    h.finish()
}
