//! Cache-line padding for state written by one thread and read by others.

/// Pads `T` to its own pair of cache lines, so that two shard locks taken by
/// different threads never share a line (the adjacent-line prefetcher on
/// x86 pulls lines in pairs, hence 128).
#[repr(C, align(128))]
#[derive(Debug, Default)]
pub struct Padded<T>(pub T);
