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

#[cfg(test)]
mod tests {
    #[test]
    fn purge_can_be_called_any_time() {
        let v: Vec<u8> = vec![1; 1 << 20];
        drop(v);
        super::purge_allocator();
        super::purge_allocator();
    }
}
