//! The one allocator control that needs a foreign call: giving jemalloc's
//! dirty pages back to the system at once (MEMORY PURGE). It sits here
//! because this is the crate allowed `unsafe`; the table does not use it.

/// Asks jemalloc to purge the dirty pages of every arena now instead of
/// after their decay time. Without effect (and without the call) under
/// Miri, which cannot run foreign code.
pub fn purge_allocator() {
    #[cfg(not(miri))]
    {
        // `arena.<MALLCTL_ARENAS_ALL>.purge`: a command that reads and
        // writes no value.
        const NAME: &[u8] = b"arena.4096.purge\0";
        // Why this holds: the name is a NUL-terminated static string, and
        // jemalloc requires every value pointer null and the length 0 for
        // a command that takes no value, which is what is passed. Failure
        // (another allocator's build) is an error code, not undefined
        // behaviour; it is ignored because purging is only a hint.
        // SAFETY: static NUL-terminated name; no value pointers, as the command requires.
        let _ = unsafe {
            tikv_jemalloc_sys::mallctl(NAME.as_ptr().cast(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), 0)
        };
    }
}

/// A `size_t` statistic of jemalloc's by its NUL-terminated name; `None`
/// if jemalloc does not know it (or under Miri).
fn read_size(name: &[u8]) -> Option<usize> {
    debug_assert_eq!(name.last(), Some(&0));
    #[cfg(not(miri))]
    {
        let mut v: usize = 0;
        let mut len = std::mem::size_of::<usize>();
        // Why this holds: the name is NUL-terminated (checked above),
        // the value pointer is a live `usize` whose size is passed in
        // `len`, as jemalloc requires for a `size_t` statistic, and no new
        // value is written (null, 0).
        // SAFETY: NUL-terminated name; out pointer and length of a live usize.
        let rc = unsafe {
            tikv_jemalloc_sys::mallctl(name.as_ptr().cast(), (&mut v as *mut usize).cast(), &mut len, std::ptr::null_mut(), 0)
        };
        if rc == 0 && len == std::mem::size_of::<usize>() {
            return Some(v);
        }
    }
    None
}

/// Bytes in jemalloc's muzzy pages, all arenas together (Redis's INFO
/// `allocator_muzzy`: `stats.arenas.<all>.pmuzzy` pages of `arenas.page`
/// bytes). As of the last `epoch` advance, which the caller makes (the
/// INFO reader advances it for the other `allocator_*` figures).
pub fn allocator_muzzy() -> u64 {
    let pages = read_size(b"stats.arenas.4096.pmuzzy\0").unwrap_or(0);
    let page = read_size(b"arenas.page\0").unwrap_or(0);
    (pages as u64).saturating_mul(page as u64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn purge_can_be_called_any_time() {
        let v: Vec<u8> = vec![1; 1 << 20];
        drop(v);
        super::purge_allocator();
        super::purge_allocator();
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn page_size_is_read() {
        assert!(super::read_size(b"arenas.page\0").is_some_and(|p| p >= 4096));
        let _ = super::allocator_muzzy();
    }
}
