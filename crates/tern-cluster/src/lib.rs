//! Tern's cluster mode (`cluster-enabled yes`): the node's view of the
//! cluster, kept in nodes.conf, and the bus that shares it with the other
//! nodes in Redis's binary protocol, so Tern nodes form a Redis Cluster
//! that `redis-cli --cluster` and cluster clients use.
//!
//! ```text
//!  msg     the bus's messages: Redis's clusterMsg, encoded and checked
//!  state   nodes, slots and epochs; what a message or a command changes
//!  bus     the thread: the cluster port, a link to every node, the cron
//! ```
//!
//! The commands (CLUSTER, ASKING, READONLY, READWRITE) and the redirection
//! of a key to the node serving its slot are in `tern-commands`; they read
//! [`Cluster`] — one relaxed load a command on the hot path
//! ([`Cluster::serves`]), the state's lock otherwise.
//!
//! # Layering
//!
//! ```text
//!  bus    ─► state msg
//!  state  ─► msg
//!  msg    ─► -
//! ```
#![forbid(unsafe_code)]

pub mod bus;
pub mod msg;
pub mod state;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use parking_lot::Mutex;

pub use state::{Me, State, SLOTS};

/// The cluster as this node sees it, shared by the bus and the workers.
pub struct Cluster {
    pub state: Mutex<State>,
    /// Per slot: this node serves it (read without the lock).
    mine: Vec<AtomicBool>,
    /// cluster_state is ok.
    ok: AtomicBool,
    /// nodes.conf.
    path: PathBuf,
    pub stop: AtomicBool,
    /// The bus's links, both ways (INFO's cluster_connections), and the
    /// bytes their buffers hold (mem_cluster_links).
    pub links: AtomicUsize,
    pub links_mem: AtomicUsize,
    /// Wakes the bus (messages a worker queued: a PUBLISH).
    pub waker: std::sync::OnceLock<mio::Waker>,
    /// Delivers a PUBLISH another node sent (channel, message, shard).
    pub on_publish: std::sync::OnceLock<Box<dyn Fn(&[u8], &[u8], bool) + Send + Sync>>,
}

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl Cluster {
    /// Reads nodes.conf at `path`, or starts a new node and writes it.
    pub fn open(me: Me, path: PathBuf) -> Result<Cluster, String> {
        let now = now_ms();
        let st = match std::fs::read_to_string(&path) {
            Ok(text) if !text.trim().is_empty() => State::from_config(me, &text, now)?,
            Ok(_) => State::fresh(me, now),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => State::fresh(me, now),
            Err(e) => return Err(format!("Unrecoverable error opening the cluster config file {}: {e}", path.display())),
        };
        let fresh = st.dirty;
        let cl = Cluster {
            state: Mutex::new(st),
            mine: (0..SLOTS).map(|_| AtomicBool::new(false)).collect(),
            ok: AtomicBool::new(false),
            path,
            stop: AtomicBool::new(false),
            links: AtomicUsize::new(0),
            links_mem: AtomicUsize::new(0),
            waker: std::sync::OnceLock::new(),
            on_publish: std::sync::OnceLock::new(),
        };
        if fresh {
            cl.save().map_err(|e| format!("Unrecoverable error writing the cluster config file: {e}"))?;
            tern_config::log_notice!("No cluster configuration found, I'm {}", state::name_str(&cl.state.lock().myself));
        } else {
            tern_config::log_notice!("Node configuration loaded, I'm {}", state::name_str(&cl.state.lock().myself));
        }
        cl.publish_view();
        Ok(cl)
    }

    /// PUBLISH and SPUBLISH in cluster mode: the message goes to the other
    /// nodes (the shard's, for SPUBLISH) on the bus.
    pub fn publish(&self, channel: &[u8], message: &[u8], shard: bool) {
        self.state.lock().publish(channel, message, shard);
        if let Some(w) = self.waker.get() {
            let _ = w.wake();
        }
    }

    /// Whether this node serves `slot`, not migrating it (one relaxed
    /// load).
    #[inline]
    pub fn serves(&self, slot: u16) -> bool {
        self.mine[slot as usize].load(Ordering::Relaxed)
    }

    /// cluster_state is ok.
    #[inline]
    pub fn is_ok(&self) -> bool {
        self.ok.load(Ordering::Relaxed)
    }

    /// Copies the state's slots and health to what the workers read
    /// without the lock.
    pub fn publish_view(&self) {
        let st = self.state.lock();
        // A slot being migrated takes the slow path (its keys decide).
        for (i, s) in st.slots.iter().enumerate() {
            let m = s.as_ref() == Some(&st.myself) && !st.migrating.contains_key(&(i as u16));
            if self.mine[i].load(Ordering::Relaxed) != m {
                self.mine[i].store(m, Ordering::Relaxed);
            }
        }
        self.ok.store(st.ok, Ordering::Relaxed);
    }

    /// New settings from the config (see [`State::configure`]).
    pub fn configure(&self, me: Me) {
        self.state.lock().configure(me);
        self.save_if_dirty();
    }

    /// Writes nodes.conf if the state changed, then publishes it.
    pub fn save_if_dirty(&self) {
        if self.state.lock().dirty {
            if let Err(e) = self.save() {
                tern_config::log_warning!("Could not save the cluster config file: {}", e);
            }
        }
        self.publish_view();
    }

    /// Writes nodes.conf whole: to a temporary file (synced when epochs or
    /// votes changed, as Redis syncs it), then renamed over the old one.
    pub fn save(&self) -> std::io::Result<()> {
        let (text, fsync) = {
            let mut st = self.state.lock();
            st.dirty = false;
            (st.config_text(), std::mem::take(&mut st.fsync))
        };
        let tmp = self.path.with_extension(format!("tmp-{}", std::process::id()));
        let r = (|| {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            if fsync {
                f.sync_all()?;
            }
            std::fs::rename(&tmp, &self.path)
        })();
        if r.is_err() {
            let _ = std::fs::remove_file(&tmp);
            let mut st = self.state.lock();
            st.dirty = true;
            st.fsync |= fsync;
        }
        r
    }
}

#[cfg(test)]
mod layering {
    #[test]
    fn modules_use_each_other_as_the_layering_says() {
        tern_layering::check(env!("CARGO_MANIFEST_DIR"), include_str!("lib.rs"), ("bus", "state"));
    }
}
