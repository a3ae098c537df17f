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

// hashbrown's default hasher: these maps are looked up per script call.
use hashbrown::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use sha1::{Digest, Sha1};

/// EVAL-added scripts kept before the least recently used goes (Redis's
/// `LRU_LIST_LENGTH`).
pub const EVAL_SCRIPTS_MAX: usize = 500;

/// A script's SHA1, as 40 lowercase hex digits.
pub type Sha = [u8; 40];

/// A body's SHA1, as the cache keys it.
pub fn sha_of(body: &[u8]) -> Sha {
    let digest = Sha1::digest(body);
    let mut out = [0u8; 40];
    for (i, b) in digest.iter().enumerate() {
        out[2 * i] = HEX[usize::from(b >> 4)];
        out[2 * i + 1] = HEX[usize::from(b & 15)];
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

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

/// Why a shebang was refused (the errors are worded in `errors`).
#[derive(Debug, PartialEq, Eq)]
pub enum BadShebang {
    /// No line end after it.
    Invalid,
    /// Nothing, or unbalanced quotes, on its line.
    NoEngine,
    /// Another engine than `#!lua`.
    Engine(Vec<u8>),
    Flag(Vec<u8>),
    Option(Vec<u8>),
}

/// A line's words as Redis's `sdssplitargs` splits them (quotes,
/// escapes), as an inline command is split: None for unbalanced quotes.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut buf = line.to_vec();
    buf.push(b'\n');
    let mut frame = tern_resp::Frame::new();
    match frame.parse(&buf, &tern_resp::Limits::default()) {
        Ok(Some(_)) => Some(frame.args(&buf).iter().map(|a| a.to_vec()).collect()),
        Ok(None) => Some(Vec::new()),
        Err(_) => None,
    }
}

/// A script's shebang (`#!lua flags=a,b`): its [`flags`] and the length
/// of its line (Redis's evalExtractShebangFlags). No shebang: the
/// compatibility mode of scripts before Redis 7.
pub fn shebang(body: &[u8]) -> Result<(u32, usize), BadShebang> {
    if !body.starts_with(b"#!") {
        return Ok((flags::EVAL_COMPAT_MODE, 0));
    }
    let Some(end) = body.iter().position(|&c| c == b'\n') else {
        return Err(BadShebang::Invalid);
    };
    let parts = split_args(&body[..end]).unwrap_or_default();
    let Some((engine, options)) = parts.split_first() else {
        return Err(BadShebang::NoEngine);
    };
    if engine != b"#!lua" {
        return Err(BadShebang::Engine(engine.clone()));
    }
    let mut bits = 0;
    for opt in options {
        let Some(list) = opt.strip_prefix(b"flags=") else {
            return Err(BadShebang::Option(opt.clone()));
        };
        // `flags=` alone names none (Redis splits an empty list into none).
        for f in list.split(|&c| c == b',').filter(|_| !list.is_empty()) {
            match flags::NAMES.iter().find(|(name, _)| name.as_bytes() == f) {
                Some((_, bit)) => bits |= bit,
                None => return Err(BadShebang::Flag(f.to_vec())),
            }
        }
    }
    Ok((bits, end))
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

/// The loaded libraries, and their functions by name (without case, as
/// Redis's dictionaries of functions).
#[derive(Debug, Default)]
pub struct Libraries {
    libs: std::collections::BTreeMap<String, Arc<Library>>,
    functions: HashMap<String, (Arc<Library>, usize)>,
}

impl Libraries {
    pub fn get(&self, name: &str) -> Option<&Arc<Library>> {
        self.libs.get(name)
    }

    /// The function `name` (any case): its library and its index there.
    pub fn function(&self, name: &str) -> Option<&(Arc<Library>, usize)> {
        self.functions.get(&name.to_ascii_lowercase())
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
                functions.insert(f.name.to_ascii_lowercase(), (lib.clone(), i));
            }
        }
        for lib in libs {
            let lib = Arc::new(lib);
            for (i, f) in lib.functions.iter().enumerate() {
                let key = f.name.to_ascii_lowercase();
                match functions.get(&key) {
                    // Two names of one library that differ in case only:
                    // the library has both, FCALL finds the first.
                    Some((other, _)) if Arc::ptr_eq(other, &lib) => continue,
                    Some(_) => return Err(format!("Function {} already exists", f.name)),
                    None => {}
                }
                functions.insert(key, (lib.clone(), i));
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
            self.functions.remove(&f.name.to_ascii_lowercase());
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
    /// When it started, in ms since the epoch.
    pub started_ms: u64,
    /// Running now; once it ended, the allocations wait for the next run.
    active: bool,
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
    /// When it started (ms since the epoch; 0: none runs), and whether it
    /// is an EVAL script: what every command checks for BUSY, in one load.
    started_ms: AtomicU64,
    running_eval: std::sync::atomic::AtomicBool,
    /// Held by the one script that runs at a time outside EXEC (see
    /// [`tern_store::LockSet::pin_growing`] for why that is enough).
    pub gate: Mutex<()>,
    /// Loads an RDB file's libraries (`script::load_libraries`, which
    /// compiles them), for the layers below `script` that load a file
    /// (DEBUG RELOAD); given by the engine.
    library_loader: std::sync::OnceLock<LibraryLoader>,
}

/// See [`ScriptCache::load_libraries`].
pub type LibraryLoader = fn(&ScriptCache, &[Vec<u8>], bool) -> Result<(), String>;

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

    /// Gives the function that compiles and loads libraries (once).
    pub fn set_library_loader(&self, f: LibraryLoader) {
        let _ = self.library_loader.set(f);
    }

    /// An RDB file's function libraries loaded, all or none (`replace`: a
    /// library of the same name goes; otherwise it is the error).
    pub fn load_libraries(&self, codes: &[Vec<u8>], replace: bool) -> Result<(), String> {
        if codes.is_empty() {
            return Ok(());
        }
        match self.library_loader.get() {
            Some(f) => f(self, codes, replace),
            None => Err("no library loader".into()),
        }
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

    /// The flags of the script or function a command would run, when it
    /// declared them (no compatibility-mode script): EVAL's body (cached
    /// or not), EVALSHA's SHA1, FCALL's function name.
    pub fn declared_flags(&self, command: &str, target: &[u8]) -> Option<u32> {
        let found = match command {
            "eval" | "eval_ro" => match self.get(&sha_of(target)) {
                Some(s) => s.flags,
                None => shebang(target).ok()?.0,
            },
            "evalsha" | "evalsha_ro" => {
                let mut sha: Sha = target.try_into().ok()?;
                sha.make_ascii_lowercase();
                self.get(&sha)?.flags
            }
            "fcall" | "fcall_ro" => {
                let libs = self.functions.read();
                let (lib, i) = libs.function(&String::from_utf8_lossy(target))?;
                lib.functions[*i].flags
            }
            _ => return None,
        };
        (found & flags::EVAL_COMPAT_MODE == 0).then_some(found)
    }

    pub fn fn_epoch(&self) -> u64 {
        self.fn_epoch.load(Ordering::Relaxed)
    }

    /// Marks the script named `name` (its flags `flags`), run by
    /// `command`, as the one running, until [`ScriptCache::end_running`].
    pub fn start_running<'a>(&self, flags: &Arc<RunFlags>, eval: bool, name: &str, command: impl Iterator<Item = &'a [u8]>, now_ms: u64) {
        self.running_eval.store(eval, Ordering::Relaxed);
        {
            let mut slot = self.running.lock();
            let r = slot.get_or_insert_with(|| Running {
                flags: flags.clone(),
                eval,
                name: String::new(),
                command: Vec::new(),
                started_ms: now_ms,
                active: false,
            });
            if !Arc::ptr_eq(&r.flags, flags) {
                r.flags = flags.clone();
            }
            r.eval = eval;
            r.name.clear();
            r.name.push_str(name);
            let mut n = 0;
            for a in command {
                match r.command.get_mut(n) {
                    Some(v) => {
                        v.clear();
                        v.extend_from_slice(a);
                    }
                    None => r.command.push(a.to_vec()),
                }
                n += 1;
            }
            r.command.truncate(n);
            r.started_ms = now_ms;
            r.active = true;
        }
        self.started_ms.store(now_ms.max(1), Ordering::Relaxed);
    }

    /// The running script ended.
    pub fn end_running(&self) {
        if let Some(r) = self.running.lock().as_mut() {
            r.active = false;
            // A huge command's copy is not kept.
            if r.command.iter().map(Vec::capacity).sum::<usize>() > 64 << 10 {
                r.command = Vec::new();
            }
        }
        self.running_eval.store(false, Ordering::Relaxed);
        self.started_ms.store(0, Ordering::Relaxed);
    }

    /// Whether a script runs under the gate.
    #[inline]
    pub fn script_running(&self) -> bool {
        self.started_ms.load(Ordering::Relaxed) != 0
    }

    /// Past `busy-reply-threshold` (`threshold_ms`; 0, as in Redis: from
    /// its start): the running script has run that long, so other clients
    /// get BUSY. Some(true) for an EVAL script, Some(false) for a function.
    #[inline]
    pub fn busy(&self, now_ms: u64, threshold_ms: u64) -> Option<bool> {
        let started = self.started_ms.load(Ordering::Relaxed);
        (started != 0 && now_ms.saturating_sub(started) >= threshold_ms).then(|| self.running_eval.load(Ordering::Relaxed))
    }

    /// The script running under the gate (FUNCTION STATS).
    pub fn running(&self) -> Option<Running> {
        self.running.lock().as_ref().filter(|r| r.active).cloned()
    }

    /// SCRIPT KILL (`eval`) or FUNCTION KILL: asks the running script to
    /// stop, unless it wrote or is of the other kind (Redis's scriptKill).
    pub fn kill(&self, eval: bool) -> Kill {
        match self.running.lock().as_ref().filter(|r| r.active) {
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
