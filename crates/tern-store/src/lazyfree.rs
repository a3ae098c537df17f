//! Freeing detached data off the command path (UNLINK, FLUSHALL ASYNC).
//!
//! Dropping a big table or collection costs time proportional to its
//! allocations; a worker that does it inline stalls every client it serves.
//! [`LazyFree`] hands such values to one background thread, started on first
//! use, the way Redis's `lazyfree` bio thread does.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, OnceLock};

/// Values whose free effort (allocations to release) is above this are freed
/// in the background; below it the hand-off costs more than the free
/// (Redis's `LAZYFREE_THRESHOLD`).
pub const LAZYFREE_THRESHOLD: usize = 64;

type Garbage = Box<dyn Send>;

/// A background freeing thread and the count of values waiting for it.
/// What the background thread calls once a value handed with
/// [`LazyFree::free_then`] is freed: the note given with it (the server's:
/// a worker and a client to wake).
pub type DoneHook = Box<dyn Fn(usize, u64) + Send + Sync>;

#[derive(Default)]
pub struct LazyFree {
    tx: OnceLock<Option<Sender<Garbage>>>,
    pending: Arc<AtomicUsize>,
    freed: Arc<AtomicUsize>,
    done: Arc<OnceLock<DoneHook>>,
}

/// A value whose freeing is told: dropped, then the hook called with the
/// note. Values are freed in the order they were handed, so the note also
/// says that everything handed before is freed.
struct Then {
    value: Option<Garbage>,
    note: (usize, u64),
    done: Arc<OnceLock<DoneHook>>,
}

impl Drop for Then {
    fn drop(&mut self) {
        drop(self.value.take());
        if let Some(hook) = self.done.get() {
            hook(self.note.0, self.note.1);
        }
    }
}

impl std::fmt::Debug for LazyFree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyFree").field("pending", &self.pending()).field("freed", &self.freed()).finish()
    }
}

impl LazyFree {
    pub fn new() -> Self {
        Self::default()
    }

    fn sender(&self) -> Option<&Sender<Garbage>> {
        self.tx
            .get_or_init(|| {
                let (tx, rx) = channel::<Garbage>();
                let pending = self.pending.clone();
                let freed = self.freed.clone();
                std::thread::Builder::new()
                    .name("tern-lazyfree".into())
                    .spawn(move || {
                        for g in rx {
                            drop(g);
                            pending.fetch_sub(1, Ordering::Relaxed);
                            freed.fetch_add(1, Ordering::Relaxed);
                        }
                    })
                    .ok()
                    .map(|_| tx)
            })
            .as_ref()
    }

    /// Drops `value` on the background thread (inline if it cannot start).
    pub fn free<T: Send + 'static>(&self, value: T) {
        let Some(tx) = self.sender() else { return drop(value) };
        self.pending.fetch_add(1, Ordering::Relaxed);
        if let Err(v) = tx.send(Box::new(value)) {
            self.pending.fetch_sub(1, Ordering::Relaxed);
            drop(v);
        }
    }

    /// Sets what is told when a value handed with [`LazyFree::free_then`]
    /// is freed (once; later calls change nothing).
    pub fn set_done_hook(&self, hook: DoneHook) {
        let _ = self.done.set(hook);
    }

    /// Whether [`LazyFree::free_then`] tells anyone.
    pub fn tells(&self) -> bool {
        self.done.get().is_some()
    }

    /// [`LazyFree::free`], and once `value` and everything handed before
    /// it are freed, the done hook is called with `note` (on the
    /// background thread; here, if it cannot start).
    pub fn free_then<T: Send + 'static>(&self, value: T, note: (usize, u64)) {
        self.free(Then { value: Some(Box::new(value)), note, done: self.done.clone() });
    }

    /// Values handed off and not yet freed (INFO `lazyfree_pending_objects`).
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }

    /// Values freed by the background thread so far (INFO `lazyfreed_objects`).
    pub fn freed(&self) -> usize {
        self.freed.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    struct Flag(Arc<AtomicUsize>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn frees_in_background() {
        let lf = LazyFree::new();
        let dropped = Arc::new(AtomicUsize::new(0));
        for _ in 0..10 {
            lf.free(Flag(dropped.clone()));
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while dropped.load(Ordering::SeqCst) < 10 {
            assert!(Instant::now() < deadline, "background free did not run");
            std::thread::yield_now();
        }
        while lf.pending() > 0 {
            assert!(Instant::now() < deadline, "pending count not settled");
            std::thread::yield_now();
        }
        assert_eq!(lf.freed(), 10);
    }
}
