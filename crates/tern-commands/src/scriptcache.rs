//! What every worker shares about scripts: EVAL's script cache by SHA1,
//! the function libraries (FUNCTION LOAD), and the gate a script runs
//! under. The Lua states, one per worker, and
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

/// A function a library registered.
#[derive(Debug, Clone)]
pub struct FunctionInfo {
    pub name: String,
    pub description: Option<Vec<u8>>,
    /// [`flags`], as `redis.register_function` gave them.
    pub flags: u32,
}

/// A library loaded by FUNCTION LOAD: its name, its whole payload (the
/// shebang line included, as FUNCTION LIST WITHCODE and FUNCTION DUMP
/// give it back) and its functions in registration order.
#[derive(Debug)]
pub struct Library {
    pub name: String,
    pub code: Box<[u8]>,
    pub functions: Vec<FunctionInfo>,
}

impl Library {
    /// The code Lua runs: the payload from the shebang's line feed on, so
    /// that line numbers stay the library's.
    pub fn body(&self) -> &[u8] {
        let at = self.code.iter().position(|&c| c == b'\n').unwrap_or(self.code.len());
        &self.code[at..]
    }
}

/// The loaded libraries, and their functions by name.
#[derive(Debug, Default)]
pub struct Libraries {
    libs: std::collections::BTreeMap<String, Arc<Library>>,
    functions: HashMap<String, (Arc<Library>, usize)>,
}

impl Libraries {
    pub fn get(&self, name: &str) -> Option<&Arc<Library>> {
        self.libs.get(name)
    }

    /// The function `name`: its library and its index there.
    pub fn function(&self, name: &str) -> Option<&(Arc<Library>, usize)> {
        self.functions.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<Library>> {
        self.libs.values()
    }

    pub fn len(&self) -> usize {
        self.libs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.libs.is_empty()
    }

    pub fn function_count(&self) -> usize {
        self.functions.len()
    }

    /// Adds `libs` as one change (FUNCTION LOAD, RESTORE), Redis's
    /// `libraryJoin`: a library of a name already loaded is refused
    /// unless `replace`, and so is a function of a name another library
    /// has. Nothing changes on an error (its text).
    pub fn join(&mut self, libs: Vec<Library>, replace: bool, quoted: bool) -> Result<(), String> {
        let mut next = self.libs.clone();
        for lib in &libs {
            if next.contains_key(&lib.name) {
                if !replace {
                    return Err(if quoted { format!("Library '{}' already exists", lib.name) } else { format!("Library {} already exists", lib.name) });
                }
                next.remove(&lib.name);
            }
        }
        let mut functions: HashMap<String, (Arc<Library>, usize)> = HashMap::new();
        for lib in next.values() {
            for (i, f) in lib.functions.iter().enumerate() {
                functions.insert(f.name.clone(), (lib.clone(), i));
            }
        }
        for lib in libs {
            let lib = Arc::new(lib);
            for (i, f) in lib.functions.iter().enumerate() {
                if functions.contains_key(&f.name) {
                    return Err(format!("Function {} already exists", f.name));
                }
                functions.insert(f.name.clone(), (lib.clone(), i));
            }
            next.insert(lib.name.clone(), lib);
        }
        self.libs = next;
        self.functions = functions;
        Ok(())
    }

    /// FUNCTION DELETE: false if there is no such library.
    pub fn delete(&mut self, name: &str) -> bool {
        let Some(lib) = self.libs.remove(name) else { return false };
        for f in &lib.functions {
            self.functions.remove(&f.name);
        }
        true
    }

    pub fn clear(&mut self) {
        self.libs.clear();
        self.functions.clear();
    }

    /// Bytes the libraries' code and names take (`used_memory_functions`).
    pub fn bytes(&self) -> usize {
        self.libs.values().map(|l| l.code.len() + l.name.len() + l.functions.iter().map(|f| f.name.len() + 64).sum::<usize>()).sum()
    }
}

/// What SCRIPT KILL and the running script tell each other.
#[derive(Debug, Default)]
pub struct RunFlags {
    /// A deadline in ms since the epoch (FUNCTION LOAD's 500 ms), or 0.
    pub deadline_ms: AtomicU64,
    /// The script has written: it cannot be killed.
    pub wrote: std::sync::atomic::AtomicBool,
    /// SCRIPT KILL asked it to stop.
    pub kill: std::sync::atomic::AtomicBool,
}

/// The script running under the gate.
#[derive(Debug, Clone)]
pub struct Running {
    pub flags: Arc<RunFlags>,
    /// Run by EVAL (not FCALL).
    pub eval: bool,
    /// The function's name, or the script's SHA1.
    pub name: String,
    /// The command that runs it, as sent.
    pub command: Vec<Vec<u8>>,
    pub started: std::time::Instant,
}

/// What SCRIPT KILL or FUNCTION KILL found.
#[derive(Debug, PartialEq, Eq)]
pub enum Kill {
    Killed,
    NotBusy,
    Unkillable,
    /// FUNCTION KILL of an EVAL script, or SCRIPT KILL of a function.
    OtherKind,
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
    /// FUNCTION LOAD's libraries; every change moves `fn_epoch`, and each
    /// worker loads them again into its Lua state at its next FCALL.
    pub functions: RwLock<Libraries>,
    fn_epoch: AtomicU64,
    /// The script running under the gate, for SCRIPT KILL, FUNCTION KILL
    /// and FUNCTION STATS.
    running: Mutex<Option<Running>>,
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

    /// Changes the libraries under their lock; `f` says whether it changed
    /// anything (then the epoch moves).
    pub fn change_functions<R>(&self, f: impl FnOnce(&mut Libraries) -> (bool, R)) -> R {
        let mut libs = self.functions.write();
        let (changed, r) = f(&mut libs);
        if changed {
            self.fn_epoch.fetch_add(1, Ordering::Relaxed);
        }
        r
    }

    /// Every library's code (its payload), for an RDB file.
    pub fn library_codes(&self) -> Vec<Box<[u8]>> {
        self.functions.read().iter().map(|l| l.code.clone()).collect()
    }

    pub fn fn_epoch(&self) -> u64 {
        self.fn_epoch.load(Ordering::Relaxed)
    }

    /// Marks `flags`' script as the one running (None: it ended).
    pub fn set_running(&self, running: Option<Running>) {
        *self.running.lock() = running;
    }

    /// The script running under the gate (FUNCTION STATS).
    pub fn running(&self) -> Option<Running> {
        self.running.lock().clone()
    }

    /// SCRIPT KILL (`eval`) or FUNCTION KILL: asks the running script to
    /// stop, unless it wrote or is of the other kind (Redis's scriptKill).
    pub fn kill(&self, eval: bool) -> Kill {
        match &*self.running.lock() {
            None => Kill::NotBusy,
            Some(r) if r.flags.wrote.load(Ordering::Relaxed) => Kill::Unkillable,
            Some(r) if r.eval != eval => Kill::OtherKind,
            Some(r) => {
                r.flags.kill.store(true, Ordering::Relaxed);
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
