//! Loading the append-only file at start (see `aof`'s module docs): the
//! manifest's base and increments, replayed through `Record::apply`, and
//! the commands that are not record forms through the command table.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Seek};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use tern_config::{log_notice, log_warning, Config};
use tern_store::aof::{self as fmt, AofFile, CommandReader, Kind, Manifest, Parsed, ReadError};
use tern_store::{LockSet, Record};

use crate::aof::{measure, persist_manifest, place, sync_dir};
use tern_commands::aofstate::Files;
use tern_commands::client::{Client, ClientShared};
use tern_commands::cmd::{self, Scratch};
use tern_commands::engine::Engine;
use tern_commands::errors;
use tern_commands::outbuf::OutBuf;
use crate::rdb;
use tern_commands::server::now_ms;

/// The transaction being read: its records and commands wait for EXEC.
enum Step {
    Rec(Record),
    Cmd(u32, Vec<Vec<u8>>),
}

/// Runs commands through the command table as a client that obeys
/// always (id 0: no ACL, memory or read-only refusal), whose replies are
/// dropped: the AOF loader's (Redis's fake AOF client), and a replica's
/// master link (`crate::repl::replica`), whose writes' records go to its
/// own AOF and replicas through `fx`.
pub(crate) struct Runner<'e> {
    eng: &'e Engine,
    pub(crate) client: Client,
    out: OutBuf,
    scratch: Scratch,
    /// Keys located ahead (a replica's stream, read as a connection's).
    plan: tern_commands::prefetch::Plan,
    /// The commands' lock set, kept from one to the next as a
    /// connection's is over a read: its records note `fx`'s mark, and
    /// move to `fx` when [`Runner::effects`] asks.
    locks: LockSet<'e>,
    fx: tern_store::Effects,
}

impl<'e> Runner<'e> {
    pub(crate) fn new(eng: &'e Engine) -> Self {
        Runner::with_effects(eng, tern_store::Effects::new())
    }

    pub(crate) fn with_effects(eng: &'e Engine, fx: tern_store::Effects) -> Self {
        let shared = Arc::new(ClientShared::new(0, String::new(), String::new(), -1, 0, now_ms()));
        let mut locks = LockSet::new(&eng.srv.ks);
        if let Some(m) = fx.mark() {
            locks.effects = tern_store::Effects::marked(m.clone());
        }
        let client = Client::new(shared, eng.srv.acl.superuser(), tern_commands::acl::INTERNAL);
        Runner { eng, client, out: OutBuf::new(), scratch: Scratch::default(), plan: Default::default(), locks, fx }
    }

    /// The records of the commands run so far and not yet handed over.
    pub(crate) fn effects(&mut self) -> &tern_store::Effects {
        self.fx.absorb(&self.locks.effects);
        &self.fx
    }

    /// Runs `argv` in database `db`; false when the server does not know
    /// the command (which stops the load, as in Redis; any other error
    /// reply is dropped).
    fn run(&mut self, db: u32, argv: &[Vec<u8>]) -> bool {
        self.client.db = db as usize;
        let reply = self.exec(argv);
        !reply.get(1..).is_some_and(|r| r.starts_with(errors::UNKNOWN_COMMAND.as_bytes()))
    }

    /// Runs `argv` in the client's current database; returns the reply.
    pub(crate) fn exec(&mut self, argv: &[Vec<u8>]) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut ranges = Vec::with_capacity(argv.len());
        for a in argv {
            ranges.push((buf.len(), a.len()));
            buf.extend_from_slice(a);
        }
        self.tick();
        dispatch(self.eng, &mut self.client, &mut self.out, &mut self.scratch, &mut self.locks, tern_resp::Args::from_parts(&buf, &ranges));
        let mut reply = Vec::new();
        let _ = self.out.write_to(&mut reply);
        self.out.clear();
        reply
    }

    /// Sets the commands' clock to now: [`Runner::apply_next`] runs on
    /// it, so that a batch of commands reads the clock once.
    pub(crate) fn tick(&mut self) {
        self.scratch.clock = cmd::Clock::now(self.eng.srv.settings.command_time_tsc());
    }

    /// Runs the next request of `buf` on the clock of the last
    /// [`Runner::tick`], its keys located ahead with the ones after it as
    /// a connection's are (`batch`: `prefetch-batch-max-size`), if `run`
    /// says so; the reply is dropped (a replica's stream from its
    /// master). Returns the request's length (None: not complete yet).
    pub(crate) fn apply_next(
        &mut self,
        frame: &mut tern_resp::Frame,
        buf: &[u8],
        limits: &tern_resp::Limits,
        batch: usize,
        run: impl FnOnce(tern_resp::Args<'_>) -> std::io::Result<bool>,
    ) -> std::io::Result<Option<usize>> {
        let eng = self.eng;
        let next = self.plan.next_request(&eng.srv, &eng.original, &mut self.scratch.last_name, frame, buf, limits, &self.client, batch);
        let (args, len, ahead) = match next {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(None),
            Err(_) => return Err(std::io::Error::other("protocol error in the master's stream")),
        };
        if !args.is_empty() && run(args)? {
            if let Some(p) = ahead {
                self.scratch.plan_next(p.cmd, p.planned, p.ahead);
            }
            self.scratch.req_len = len;
            dispatch(eng, &mut self.client, &mut self.out, &mut self.scratch, &mut self.locks, args);
            self.scratch.pre = None;
            self.scratch.pre_cmd = None;
            self.scratch.pre_ahead = Default::default();
            self.out.clear();
        }
        Ok(Some(len))
    }
}

/// Runs one command as the runner's client.
fn dispatch<'e>(eng: &'e Engine, client: &mut Client, out: &mut OutBuf, scratch: &mut Scratch, locks: &mut LockSet<'e>, args: tern_resp::Args<'_>) {
    let srv = &eng.srv;
    let conn = cmd::Conn { srv, commands: &eng.original, locks, out, client, stats: &srv.workers[0], scratch, worker: 0 };
    cmd::dispatch(conn, args);
    locks.release();
}

/// Where a file's reading stopped early.
enum Stop {
    /// Torn at this offset (the start of the torn command, or of an
    /// unfinished MULTI).
    Torn(u64),
}

/// Loads one file of the AOF (a base or an increment). Returns where it
/// is torn, if it is.
fn load_file(eng: &Engine, runner: &mut Runner<'_>, path: &Path, name: &str) -> Result<Option<Stop>, String> {
    let srv = &eng.srv;
    let file = File::open(path).map_err(|e| format!("Fatal error: can't open the append log file {name} for reading: {e}"))?;
    let mut r = BufReader::with_capacity(1 << 16, file);
    let mut head = [0u8; 5];
    let n = r.read(&mut head).map_err(|e| format!("Unrecoverable error reading the append only file {name}: {e}"))?;
    r.rewind().map_err(|e| format!("Unrecoverable error reading the append only file {name}: {e}"))?;
    if n == 0 {
        return Ok(None);
    }
    let mut start = 0;
    if n == 5 && &head == b"REDIS" {
        log_notice!("Reading RDB base file on AOF loading...");
        let now = now_ms();
        let size = r.get_ref().metadata().ok().map(|m| m.len());
        let (info, _, _) = rdb::load_rdb(srv, &mut r, size, now)
            .map_err(|e| format!("Error reading the RDB base file {name}, AOF loading aborted ({e})"))?;
        tern_commands::script::load_libraries(srv, &info.functions, false)
            .map_err(|e| format!("Error loading the function libraries of the RDB base file {name}, AOF loading aborted ({e})"))?;
        // The load read past the RDB data; the commands start where it ended.
        start = info.bytes;
        r.seek(std::io::SeekFrom::Start(start)).map_err(|e| format!("Unrecoverable error reading the append only file {name}: {e}"))?;
    }
    let dbs = srv.ks.db_count() as u32;
    let lim = tern_commands::persist::limits(srv);
    let mut reader = CommandReader::new(r, start);
    let mut cursor = fmt::Cursor::default();
    // A MULTI's offset and what it queued.
    let mut multi: Option<(u64, Vec<Step>)> = None;
    let bad = |off: u64, why: &str| {
        format!("Bad file format reading the append only file {name} at offset {off} ({why}): make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>")
    };
    loop {
        let at = reader.offset();
        let argv = match reader.next_command() {
            Ok(Some(a)) => a,
            Ok(None) => break,
            Err(ReadError::Truncated { offset }) => return Ok(Some(Stop::Torn(multi.map_or(offset, |m| m.0)))),
            Err(ReadError::Corrupt { offset, why }) => return Err(bad(offset, why)),
            Err(ReadError::Io(e)) => return Err(format!("Unrecoverable error reading the append only file {name}: {e}")),
        };
        let parsed = fmt::parse(&argv, &mut cursor, dbs, now_ms()).map_err(|e| bad(at, &e.0))?;
        let steps: Vec<Step> = match parsed {
            Parsed::Records(rs) => rs.into_iter().map(Step::Rec).collect(),
            Parsed::Other(d) => vec![Step::Cmd(d, argv)],
            Parsed::Multi => {
                if multi.is_some() {
                    return Err(bad(at, "MULTI inside MULTI"));
                }
                multi = Some((at, Vec::new()));
                continue;
            }
            Parsed::Exec => match multi.take() {
                Some((_, queued)) => queued,
                None => return Err(bad(at, "EXEC without MULTI")),
            },
        };
        if let Some((_, q)) = &mut multi {
            q.extend(steps);
            continue;
        }
        for s in steps {
            match s {
                Step::Rec(rec) => rec.apply(&srv.ks, lim.hash, lim.list, 0),
                Step::Cmd(d, argv) => {
                    if !runner.run(d, &argv) {
                        let cmd = String::from_utf8_lossy(&argv[0]);
                        return Err(format!("Unknown command '{cmd}' reading the append only file {name}"));
                    }
                }
            }
        }
    }
    if let Some((at, _)) = multi {
        log_warning!("Revert incomplete MULTI/EXEC transaction in AOF file {}", name);
        return Ok(Some(Stop::Torn(at)));
    }
    Ok(None)
}

/// Loads the AOF at start, before the workers run, when `appendonly` is
/// on. Returns false when there is none (the caller loads dump.rdb).
pub fn load_at_start(eng: &Engine) -> Result<bool, String> {
    let srv = &eng.srv;
    let cfg = srv.config.read().clone();
    if !cfg.appendonly {
        return Ok(false);
    }
    let (dir, prefix) = place(&cfg);
    let mpath = dir.join(fmt::manifest::manifest_name(&prefix));
    let single = PathBuf::from(cfg.dir.clone().unwrap_or_else(|| ".".into())).join(&prefix);
    let manifest = match std::fs::read(&mpath) {
        Ok(text) => Manifest::parse(&text).map_err(|e| format!("{e} (in the AOF manifest {})", mpath.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !dir.exists() && single.is_file() {
                // Redis 6's single file: loaded, then moved into the
                // directory as the base (Redis's upgrade).
                return load_single(eng, &cfg, &single, &dir, &prefix).map(|()| true);
            }
            return Ok(false);
        }
        Err(e) => return Err(format!("Fatal error: can't open the AOF manifest {} for reading: {e}", mpath.display())),
    };
    let started = Instant::now();
    srv.persist.loading.store(true, Ordering::Relaxed);
    let mut runner = Runner::new(eng);
    let order: Vec<AofFile> = manifest.load_order().cloned().collect();
    let r = (|| -> Result<(), String> {
        for (i, f) in order.iter().enumerate() {
            let path = dir.join(&f.name);
            let t = Instant::now();
            let last = i + 1 == order.len();
            if last && f.kind == Kind::Incr {
                cut_filler(&path, &f.name)?;
            }
            if let Some(Stop::Torn(off)) = load_file(eng, &mut runner, &path, &f.name)? {
                torn(&cfg, &path, &f.name, off, last)?;
            }
            let what = if f.kind == Kind::Base { "base" } else { "incr" };
            log_notice!("DB loaded from {} file {}: {:.3} seconds", what, f.name, t.elapsed().as_secs_f64());
        }
        Ok(())
    })();
    srv.persist.loading.store(false, Ordering::Relaxed);
    r?;
    log_notice!("DB loaded from append only file: {:.3} seconds", started.elapsed().as_secs_f64());
    let keys = (0..srv.ks.total_shards() as u32).map(|g| srv.ks.lock(g).len() as u64).sum();
    rdb::load_done(srv, keys, 0, now_ms());
    let mut files = srv.aof.files.lock();
    *files = Files { dir, prefix, manifest };
    measure(&srv.aof, &files);
    Ok(true)
}

/// Cuts the filler that `aof-prealloc-size` wrote ahead of the commands
/// (or the zeros older versions wrote) off the end of the file being
/// appended to when the server stopped without closing it, so that new
/// commands follow the last one. Redis needs no cut: it skips the filler
/// as annotations. A command torn by a crash in front of the filler keeps
/// its bytes and is then an ordinary torn tail.
fn cut_filler(path: &Path, name: &str) -> Result<(), String> {
    let err = |e: std::io::Error| format!("Error reading the end of the AOF file {name}: {e}");
    let f = OpenOptions::new().read(true).write(true).open(path).map_err(err)?;
    let len = f.metadata().map_err(err)?.len();
    let end = fmt::fill::logical_end(len, |at, buf| f.read_exact_at(buf, at)).map_err(err)?;
    if end < len {
        f.set_len(end).and_then(|()| f.sync_all()).map_err(|e| format!("Error truncating the AOF file {name}: {e}"))?;
        log_notice!("AOF file {}: {} bytes of preallocated space cut off at offset {}", name, len - end, end);
    }
    Ok(())
}

/// A torn command at `off`: cut off (and reported as Redis does) when
/// `aof-load-truncated` allows and the file is the last; else the error
/// that stops start-up.
fn torn(cfg: &Config, path: &Path, name: &str, off: u64, last: bool) -> Result<(), String> {
    if !last {
        return Err(format!("Fatal error: the truncated file {name} (at offset {off}) is not the last file"));
    }
    if !cfg.aof_load_truncated {
        return Err(format!("Unexpected end of file reading the append only file {name}. You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server."));
    }
    log_warning!("!!! Warning: short read while loading the AOF file {}!!!", name);
    log_warning!("!!! Truncating the AOF {} at offset {} !!!", name, off);
    let f = OpenOptions::new().write(true).open(path).map_err(|e| format!("Error truncating the AOF file {name}: {e}"))?;
    f.set_len(off).and_then(|()| f.sync_all()).map_err(|e| format!("Error truncating the AOF file {name}: {e}"))?;
    let dirname = path.parent().and_then(|p| p.file_name()).map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
    log_warning!("AOF {}/{} loaded anyway because aof-load-truncated is enabled", dirname, name);
    Ok(())
}

fn load_single(eng: &Engine, cfg: &Config, single: &Path, dir: &Path, prefix: &str) -> Result<(), String> {
    let srv = &eng.srv;
    let started = Instant::now();
    srv.persist.loading.store(true, Ordering::Relaxed);
    let mut runner = Runner::new(eng);
    let r = load_file(eng, &mut runner, single, prefix);
    srv.persist.loading.store(false, Ordering::Relaxed);
    if let Some(Stop::Torn(off)) = r? {
        torn(cfg, single, prefix, off, true)?;
    }
    log_notice!("DB loaded from append only file: {:.3} seconds", started.elapsed().as_secs_f64());
    let keys = (0..srv.ks.total_shards() as u32).map(|g| srv.ks.lock(g).len() as u64).sum();
    rdb::load_done(srv, keys, 0, now_ms());
    let upgrade = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::rename(single, dir.join(prefix))?;
        sync_dir(dir)
    };
    upgrade().map_err(|e| format!("Error moving the AOF file {} into {}: {e}", single.display(), dir.display()))?;
    let mut files = srv.aof.files.lock();
    *files = Files {
        dir: dir.to_path_buf(),
        prefix: prefix.to_string(),
        manifest: Manifest { base: Some(AofFile { name: prefix.to_string(), seq: 1, kind: Kind::Base }), ..Manifest::default() },
    };
    persist_manifest(&files)?;
    log_notice!("Successfully migrated an old-style AOF into the AOF directory {}.", dir.display());
    measure(&srv.aof, &files);
    Ok(())
}

