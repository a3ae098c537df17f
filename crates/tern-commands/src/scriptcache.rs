//! What every worker shares about scripts: EVAL's script cache by SHA1,
//! and the gate a script runs under. The Lua states, one per worker, and
//! everything that runs a script are in [`crate::script`].
//!
//! The cache holds each script's body and shebang flags. A worker compiles
//! a script into its own Lua state the first time it runs it there, and
//! forgets every compiled script when the cache's epoch moves (SCRIPT
//! FLUSH). Scripts added by EVAL (not SCRIPT LOAD) are evicted past
//! [`EVAL_SCRIPTS_MAX`], least recently used first, as Redis 7.4+ does.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

/// EVAL-added scripts kept before the least recently used goes (Redis's
/// `LRU_LIST_LENGTH`).
pub const EVAL_SCRIPTS_MAX: usize = 500;

/// A script's SHA1, as 40 lowercase hex digits.
pub type Sha = [u8; 40];

/// Shebang flags (`#!lua flags=...`), as Redis's `SCRIPT_FLAG_*`.
pub mod flags {
    pub const NO_WRITES: u32 = 1 << 0;
    pub const ALLOW_OOM: u32 = 1 << 1;
    pub const ALLOW_STALE: u32 = 1 << 2;
    pub const NO_CLUSTER: u32 = 1 << 3;
    /// No shebang: the script runs as scripts did before Redis 7.
    pub const EVAL_COMPAT_MODE: u32 = 1 << 4;
    pub const ALLOW_CROSS_SLOT: u32 = 1 << 5;

    /// Each flag by its name in a shebang.
    pub const NAMES: &[(&str, u32)] = &[
        ("no-writes", NO_WRITES),
        ("allow-oom", ALLOW_OOM),
        ("allow-stale", ALLOW_STALE),
        ("no-cluster", NO_CLUSTER),
        ("allow-cross-slot-keys", ALLOW_CROSS_SLOT),
    ];
}

/// A cached script.
#[derive(Debug)]
pub struct Script {
    pub body: Box<[u8]>,
    /// [`flags`] from its shebang.
    pub flags: u32,
    /// Bytes of the shebang line, not counting its line feed (which the
    /// compiled code keeps, so that line numbers stay the script's).
    pub shebang_len: usize,
    /// Added by EVAL, and so evictable; None for SCRIPT LOAD's.
    lru: Option<AtomicU64>,
}

impl Script {
    pub fn new(body: &[u8], flags: u32, shebang_len: usize) -> Script {
        Script { body: body.into(), flags, shebang_len, lru: None }
    }

    /// The code Lua compiles: the body without its shebang.
    pub fn code(&self) -> &[u8] {
        &self.body[self.shebang_len..]
    }
}

/// What SCRIPT KILL and the running script tell each other.
#[derive(Debug, Default)]
pub struct RunFlags {
    /// The script has written: it cannot be killed.
    pub wrote: std::sync::atomic::AtomicBool,
    /// SCRIPT KILL asked it to stop.
    pub kill: std::sync::atomic::AtomicBool,
}

/// What SCRIPT KILL found.
#[derive(Debug, PartialEq, Eq)]
pub enum Kill {
    Killed,
    NotBusy,
    Unkillable,
}

/// The shared script cache, and the gate.
#[derive(Debug, Default)]
pub struct ScriptCache {
    scripts: RwLock<HashMap<Sha, Arc<Script>>>,
    /// Moves at every SCRIPT FLUSH: workers drop what they compiled.
    epoch: AtomicU64,
    /// The recency clock of EVAL-added scripts.
    clock: AtomicU64,
    evicted: AtomicU64,
    /// The workers' Lua states' bytes, as each last reported them.
    vm_bytes: std::sync::atomic::AtomicIsize,
    /// The script running under the gate, for SCRIPT KILL.
    running: Mutex<Option<Arc<RunFlags>>>,
    /// Held by the one script that runs at a time outside EXEC (see
    /// [`tern_store::LockSet::pin_growing`] for why that is enough).
    pub gate: Mutex<()>,
}

impl ScriptCache {
    pub fn get(&self, sha: &Sha) -> Option<Arc<Script>> {
        let s = self.scripts.read().get(sha).cloned()?;
        if let Some(at) = &s.lru {
            at.store(self.clock.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        }
        Some(s)
    }

    pub fn contains(&self, sha: &Sha) -> bool {
        self.scripts.read().contains_key(sha)
    }

    /// Adds `script` under `sha`, unless a script is there already (the
    /// same body: it stays as it was). `from_eval`: EVAL added it, so it
    /// may be evicted; SCRIPT LOAD of a cached EVAL script makes it stay.
    pub fn insert(&self, sha: Sha, mut script: Script, from_eval: bool) -> Arc<Script> {
        let mut map = self.scripts.write();
        if let Some(s) = map.get(&sha) {
            if !from_eval && s.lru.is_some() {
                let kept = Arc::new(Script { lru: None, ..Script::new(&s.body, s.flags, s.shebang_len) });
                map.insert(sha, kept.clone());
                return kept;
            }
            return s.clone();
        }
        if from_eval {
            let evictable = map.values().filter(|s| s.lru.is_some()).count();
            if evictable >= EVAL_SCRIPTS_MAX {
                let oldest = map
                    .iter()
                    .filter_map(|(k, s)| s.lru.as_ref().map(|at| (at.load(Ordering::Relaxed), *k)))
                    .min()
                    .map(|(_, k)| k);
                if let Some(k) = oldest {
                    map.remove(&k);
                    self.evicted.fetch_add(1, Ordering::Relaxed);
                }
            }
            script.lru = Some(AtomicU64::new(self.clock.fetch_add(1, Ordering::Relaxed)));
        }
        let s = Arc::new(script);
        map.insert(sha, s.clone());
        s
    }

    /// SCRIPT FLUSH: every script goes, and every worker's compiled ones.
    pub fn flush(&self) {
        let old = std::mem::take(&mut *self.scripts.write());
        self.epoch.fetch_add(1, Ordering::Relaxed);
        drop(old);
    }

    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Relaxed)
    }

    /// INFO's `number_of_cached_scripts`.
    pub fn len(&self) -> usize {
        self.scripts.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// INFO's `used_memory_scripts_eval`: the bodies' bytes.
    pub fn bytes(&self) -> usize {
        self.scripts.read().values().map(|s| s.body.len() + std::mem::size_of::<Script>()).sum()
    }

    /// Marks `flags`' script as the one running (None: it ended).
    pub fn set_running(&self, flags: Option<Arc<RunFlags>>) {
        *self.running.lock() = flags;
    }

    /// SCRIPT KILL: asks the running script to stop, unless it wrote.
    pub fn kill(&self) -> Kill {
        match &*self.running.lock() {
            None => Kill::NotBusy,
            Some(f) if f.wrote.load(Ordering::Relaxed) => Kill::Unkillable,
            Some(f) => {
                f.kill.store(true, Ordering::Relaxed);
                Kill::Killed
            }
        }
    }

    /// A worker's Lua state grew (or shrank) by `delta` bytes.
    pub fn add_vm_bytes(&self, delta: isize) {
        self.vm_bytes.fetch_add(delta, Ordering::Relaxed);
    }

    /// INFO's `used_memory_vm_eval`: every worker's Lua state.
    pub fn vm_bytes(&self) -> usize {
        self.vm_bytes.load(Ordering::Relaxed).max(0) as usize
    }

    /// INFO's `evicted_scripts`.
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }
}
