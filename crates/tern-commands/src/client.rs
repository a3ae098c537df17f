//! Per-connection state: the part only the owning worker touches
//! ([`Client`]) and the part other threads read for CLIENT LIST / KILL and
//! INFO ([`ClientShared`], written only by the owner).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use tern_store::{Loc, WatchFlag};

/// What CLIENT REPLY asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyMode {
    On,
    Off,
    /// Drop the reply of the next command only.
    Skip,
    /// Set by SKIP; the command running now has its reply dropped.
    SkipThis,
}

/// Commands queued between MULTI and EXEC, with their arguments copied out
/// of the read buffer (which is reused while the transaction is open).
#[derive(Debug, Default)]
pub struct MultiState {
    pub data: Vec<u8>,
    /// (command id, argument ranges into `data`).
    pub cmds: Vec<(usize, Vec<(usize, usize)>)>,
    /// A command failed to queue (unknown, wrong arity): EXEC will abort.
    pub failed: bool,
}

impl MultiState {
    /// Bytes the queue holds (CLIENT LIST `multi-mem`): the arguments and
    /// a command entry each, without walking the entries.
    pub fn mem(&self) -> usize {
        self.data.len() + self.cmds.len() * std::mem::size_of::<(usize, Vec<(usize, usize)>)>()
    }
}

/// What a blocked client waits with: its command, copied out of the read
/// buffer, the keys it is queued on, and when it gives up.
#[derive(Debug)]
pub struct Blocked {
    pub cmd: usize,
    pub data: Vec<u8>,
    pub ranges: Vec<(usize, usize)>,
    /// The keys it is queued on, in the command's database.
    pub keys: Vec<(Loc, Box<[u8]>)>,
    /// Ms since the Unix epoch; None waits forever.
    pub deadline: Option<u64>,
    /// WAIT's and WAITAOF's: the acknowledgements it waits for (no key).
    pub acks: bool,
}

/// CLIENT TRACKING ON's options, as the client keeps them.
#[derive(Clone, Debug)]
pub struct ClientTracking {
    /// What the tracking table holds for it.
    pub tracker: Arc<crate::messaging::tracking::Tracker>,
    pub optin: bool,
    pub optout: bool,
    /// CLIENT CACHING YES (OPTIN) or NO (OPTOUT) was given: it applies to
    /// the next command (or the transaction it starts).
    pub caching: bool,
    /// BCAST's prefixes (CLIENT TRACKINGINFO).
    pub prefixes: Vec<Box<[u8]>>,
    /// The bit its reads mark keys with (`messaging::tracking`'s slots;
    /// 0: none free, its reads go to the table).
    pub mark: u64,
}

/// A key this client WATCHes.
#[derive(Debug)]
pub struct Watched {
    pub db: usize,
    pub key: Box<[u8]>,
    pub loc: Loc,
}

/// The state of one client that only its worker reads and writes.
#[derive(Debug)]
pub struct Client {
    pub id: u64,
    pub db: usize,
    pub resp3: bool,
    /// Authenticated (or let in as a `default` with no password); with a
    /// password required, only AUTH, HELLO and the like run until it is.
    pub authenticated: bool,
    /// Its user as the registry had it at `acl_epoch`; read again (by
    /// name) when the registry has changed since (`cmd::access`).
    pub user: Arc<crate::acl::User>,
    pub acl_epoch: u64,
    pub multi: Option<MultiState>,
    pub watched: Vec<Watched>,
    pub watch_flag: Arc<WatchFlag>,
    pub reply_mode: ReplyMode,
    /// Close the connection once the pending replies are written (QUIT,
    /// CLIENT KILL of itself, protocol errors).
    pub close_after_reply: bool,
    pub no_evict: bool,
    pub no_touch: bool,
    /// Set while the client waits in a blocking command; its further
    /// requests wait too.
    pub blocked: Option<Box<Blocked>>,
    /// Set by MONITOR: where other workers leave the lines it is sent.
    pub monitor: Option<Arc<crate::monitor::Feed>>,
    /// Its channels, patterns and shard channels (`crate::messaging`);
    /// None while it has none.
    pub subs: Option<Box<crate::messaging::pubsub::Subscriptions>>,
    /// CLIENT TRACKING's state while it is on.
    pub tracking: Option<Box<ClientTracking>>,
    /// For the client a script's commands run as: the id of the client
    /// that runs the script (0 otherwise), whose writes these are for
    /// NOLOOP (Redis's `server.current_client`).
    pub on_behalf_of: u64,
    /// What it said of itself as a replica (REPLCONF), and, once SYNC or
    /// PSYNC asked for the stream, that its worker hands the connection
    /// over to replication (`tern_persist::repl::master`).
    pub replica: Option<Box<crate::repl::Hello>>,
    pub sync: Option<crate::repl::SyncRequest>,
    /// One past the number of the last effect record its writes made
    /// while replicas were fed or the AOF on (0: none): what WAIT and
    /// WAITAOF wait for.
    pub repl_seq: u64,
    /// Where a WAIT or WAITAOF found the writes up to `repl_seq` end (the
    /// stream offset, the writer's round): a later one reuses it.
    pub repl_known: Option<crate::repl::Known>,
    /// A memcached item's flags, CAS and state, announced by the PING in
    /// front of the SET that stores it (a Tern master's stream, a Tern
    /// AOF; see `tern_store::effect`): taken by that SET. Only a client
    /// that obeys always (the master link, the AOF loader) sets it.
    pub mc_item: Option<(u32, u64, u8)>,
    /// Cluster mode: READONLY (reads of a replica's master's slots run on
    /// the replica) and ASKING (the next command may use a slot being
    /// imported).
    pub cluster_readonly: bool,
    pub asking: bool,
    pub shared: Arc<ClientShared>,
}

impl Client {
    /// A new connection, as the `default` user `user` (Redis's
    /// `clientSetDefaultAuth`): authenticated if that user is on and needs
    /// no password; `epoch` is the registry's as `user` was read.
    pub fn new(shared: Arc<ClientShared>, user: Arc<crate::acl::User>, epoch: u64) -> Self {
        Client {
            id: shared.id,
            db: 0,
            resp3: false,
            authenticated: user.nopass && user.enabled,
            user,
            acl_epoch: epoch,
            multi: None,
            watched: Vec::new(),
            watch_flag: WatchFlag::new(),
            reply_mode: ReplyMode::On,
            close_after_reply: false,
            no_evict: false,
            no_touch: false,
            blocked: None,
            monitor: None,
            subs: None,
            tracking: None,
            on_behalf_of: 0,
            replica: None,
            sync: None,
            repl_seq: 0,
            repl_known: None,
            mc_item: None,
            cluster_readonly: false,
            asking: false,
            shared,
        }
    }

    /// Redis's `mustObeyClient`: the AOF loader's client (id 0), whose
    /// commands were made deterministic when they were logged and are
    /// replayed exactly, never cut short by limits a live client gets.
    pub fn obeys_always(&self) -> bool {
        self.id == 0
    }

    /// The client whose command this is (a script's caller for the
    /// commands the script runs).
    #[inline]
    pub fn caller_id(&self) -> u64 {
        if self.on_behalf_of != 0 {
            self.on_behalf_of
        } else {
            self.id
        }
    }

    /// Leaves every channel, pattern and shard channel, without replies
    /// (the connection closes, or RESETs); whether it had any.
    pub fn leave_pubsub(&mut self, ps: &crate::messaging::PubSub) -> bool {
        let Some(mut s) = self.subs.take() else { return false };
        s.leave_all(ps);
        self.note_subscriptions(None);
        true
    }

    /// Whether its user (as last read) still allows every channel and
    /// pattern it is subscribed to; a subscriber that lost one is closed
    /// (Redis's ACLKillPubsubClientsIfNeeded).
    pub fn subscriptions_allowed(&self) -> bool {
        let Some(s) = &self.subs else { return true };
        let ok = |name: &[u8], pattern: bool| self.user.selectors.iter().any(|sel| sel.allows_channel(name, pattern));
        s.channels.iter().chain(s.shard.iter()).all(|c| ok(c, false)) && s.patterns.iter().all(|p| ok(p, true))
    }

    /// Publishes the subscription counts (CLIENT LIST `sub`, `psub`,
    /// `ssub`) and the `P` flag that they make.
    pub fn note_subscriptions(&self, s: Option<&crate::messaging::pubsub::Subscriptions>) {
        let r = Ordering::Relaxed;
        let (c, p, sh) = s.map_or((0, 0, 0), |s| (s.channels.len(), s.patterns.len(), s.shard.len()));
        self.shared.sub_count.store(c, r);
        self.shared.psub_count.store(p, r);
        self.shared.ssub_count.store(sh, r);
        self.shared.set_flag(flags::PUBSUB, c + p + sh > 0);
    }
}

impl Client {
    /// Reads the user again if the registry changed since it was read. A
    /// user deleted meanwhile leaves the connection as an unauthenticated
    /// `default` (ACL DELUSER is closing it).
    #[inline]
    pub fn refresh_user(&mut self, acl: &crate::acl::Acl) {
        let epoch = acl.epoch();
        if self.acl_epoch == epoch || self.acl_epoch == crate::acl::INTERNAL {
            return;
        }
        self.acl_epoch = epoch;
        match acl.get(&self.user.name) {
            Some(u) => self.user = u,
            None => {
                self.user = acl.default_user();
                self.authenticated = false;
            }
        }
    }

    /// Logs the connection in as `user`.
    pub fn log_in(&mut self, user: Arc<crate::acl::User>, epoch: u64) {
        *self.shared.user.lock() = user.name.clone();
        self.user = user;
        self.acl_epoch = epoch;
        self.authenticated = true;
    }
}

/// Flag bits shown by CLIENT LIST `flags=`.
pub mod flags {
    pub const MULTI: u32 = 1;
    pub const CLOSE_ASAP: u32 = 2;
    pub const NO_EVICT: u32 = 4;
    pub const NO_TOUCH: u32 = 8;
    pub const DIRTY_CAS: u32 = 16;
    /// Subscribed to a channel or pattern (CLIENT LIST `P`, `TYPE pubsub`).
    pub const PUBSUB: u32 = 32;
    /// Waiting in a blocking command (CLIENT LIST `b`).
    pub const BLOCKED: u32 = 64;
    /// Receiving MONITOR's lines (CLIENT LIST `O`).
    pub const MONITOR: u32 = 128;
    /// Its next command waits for CLIENT PAUSE to end (CLIENT LIST `b`,
    /// as Redis shows a postponed client).
    pub const PAUSED: u32 = 256;
    /// CLIENT TRACKING is on (`t`), in BCAST mode (`B`); its redirection
    /// is broken (`R`: the target is gone).
    pub const TRACKING: u32 = 512;
    pub const TRACKING_BCAST: u32 = 1024;
    pub const TRACKING_BROKEN: u32 = 2048;
    /// A replica's connection, served by its own threads (`S`, `TYPE
    /// replica`), and a replica's link with its master (`M`, `TYPE
    /// master`): listed, killable, not counted in `connected_clients`.
    pub const REPLICA: u32 = 4096;
    pub const MASTER: u32 = 8192;
    /// READONLY in cluster mode (`r`).
    pub const READONLY: u32 = 16384;
}

/// A connection's buffers as its worker last published them, for CLIENT
/// LIST and INFO read from other threads. The owner stores them when it
/// accounts the connection's memory (once per batch of requests, not per
/// command); they sit on their own cache line so those stores do not
/// disturb readers of the rest of [`ClientShared`].
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct BufferGauges {
    /// Received request bytes not executed yet (`qbuf`).
    pub qbuf: AtomicUsize,
    /// Free room of the read buffer after them (`qbuf-free`).
    pub qbuf_free: AtomicUsize,
    /// Size of the reply buffer (`rbs`).
    pub rbs: AtomicUsize,
    /// Unsent reply bytes held in the reply buffer (`obl`).
    pub obl: AtomicUsize,
    /// Unsent stored values referenced by the reply (`oll`: Redis's reply
    /// list nodes, which hold what does not fit the buffer).
    pub oll: AtomicUsize,
    /// Every unsent reply byte, referenced values included (`omem`, what
    /// the output buffer limits measure).
    pub omem: AtomicUsize,
    /// Bytes of the arguments MULTI has queued (`multi-mem`).
    pub multi_mem: AtomicUsize,
}

const _: () = assert!(std::mem::align_of::<BufferGauges>() == 64 && std::mem::size_of::<BufferGauges>() == 64);

/// The part of a client other threads may read. Every field is written only
/// by the owning worker (or, for `kill`, set by anyone and acted on by it).
#[derive(Debug)]
pub struct ClientShared {
    pub id: u64,
    pub addr: String,
    pub laddr: String,
    pub fd: i32,
    /// Creation time, ms since the Unix epoch.
    pub created_ms: u64,
    pub worker: usize,
    pub name: Mutex<Vec<u8>>,
    /// The user it is authenticated as (CLIENT LIST `user=`, CLIENT KILL
    /// USER, ACL DELUSER).
    pub user: Mutex<Vec<u8>>,
    pub lib_name: Mutex<Vec<u8>>,
    pub lib_ver: Mutex<Vec<u8>>,
    pub db: AtomicUsize,
    pub last_interaction_ms: AtomicU64,
    /// Id of the last command run (see `cmd::table`).
    pub last_cmd: AtomicUsize,
    /// Commands run (CLIENT LIST `tot-cmds`), and bytes read from and
    /// written to its socket (`tot-net-in`, `tot-net-out`). Written by its
    /// worker alone, so a plain load and store ([`ClientShared::count`]).
    pub cmds: AtomicU64,
    pub net_in: AtomicU64,
    pub net_out: AtomicU64,
    pub resp: AtomicU8,
    pub flags: AtomicU64,
    pub buffers: BufferGauges,
    pub multi_len: AtomicUsize,
    pub kill: AtomicBool,
    /// Keys WATCHed (CLIENT LIST `watch=`).
    pub watch_count: AtomicUsize,
    /// Channels, patterns and shard channels subscribed to (`sub=`,
    /// `psub=`, `ssub=`).
    pub sub_count: AtomicUsize,
    pub psub_count: AtomicUsize,
    pub ssub_count: AtomicUsize,
    /// CLIENT LIST's `redir`: where its invalidations go while it tracks
    /// (0: to itself), -1 while it does not.
    pub redirect: std::sync::atomic::AtomicI64,
    /// Its worker's handle for the connection (a slab key; usize::MAX
    /// without one), which its inbox names so that the worker finds it.
    pub handle: AtomicUsize,
    /// Where messages and invalidations for it wait (`crate::messaging`),
    /// made when first needed.
    inbox: std::sync::OnceLock<Arc<crate::messaging::Inbox>>,
}

impl ClientShared {
    pub fn new(id: u64, addr: String, laddr: String, fd: i32, worker: usize, now_ms: u64) -> Self {
        ClientShared {
            id,
            addr,
            laddr,
            fd,
            created_ms: now_ms,
            worker,
            name: Mutex::new(Vec::new()),
            user: Mutex::new(b"default".to_vec()),
            lib_name: Mutex::new(Vec::new()),
            lib_ver: Mutex::new(Vec::new()),
            db: AtomicUsize::new(0),
            last_interaction_ms: AtomicU64::new(now_ms),
            last_cmd: AtomicUsize::new(usize::MAX),
            cmds: AtomicU64::new(0),
            net_in: AtomicU64::new(0),
            net_out: AtomicU64::new(0),
            resp: AtomicU8::new(2),
            flags: AtomicU64::new(0),
            buffers: BufferGauges::default(),
            multi_len: AtomicUsize::new(0),
            kill: AtomicBool::new(false),
            watch_count: AtomicUsize::new(0),
            sub_count: AtomicUsize::new(0),
            psub_count: AtomicUsize::new(0),
            ssub_count: AtomicUsize::new(0),
            redirect: std::sync::atomic::AtomicI64::new(-1),
            handle: AtomicUsize::new(usize::MAX),
            inbox: std::sync::OnceLock::new(),
        }
    }

    /// Adds `n` to one of its counters: its worker is the only writer, so
    /// no atomic read-modify-write is needed.
    #[inline]
    pub fn count(counter: &AtomicU64, n: u64) {
        counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }

    /// Its inbox, made on first use.
    pub fn inbox(&self) -> &Arc<crate::messaging::Inbox> {
        self.inbox.get_or_init(|| crate::messaging::Inbox::new(self.id, self.worker, self.handle.load(Ordering::Relaxed)))
    }

    /// Its inbox if it has one.
    pub fn inbox_if_any(&self) -> Option<&Arc<crate::messaging::Inbox>> {
        self.inbox.get()
    }

    pub fn set_flag(&self, f: u32, on: bool) {
        let cur = self.flags.load(Ordering::Relaxed);
        let new = if on { cur | u64::from(f) } else { cur & !u64::from(f) };
        self.flags.store(new, Ordering::Relaxed);
    }

    pub fn has_flag(&self, f: u32) -> bool {
        self.flags.load(Ordering::Relaxed) & u64::from(f) != 0
    }
}

/// Redis's `connIsLocal`: 127.0.0.0/8 or ::1 (protected mode, and
/// `enable-debug-command local`).
pub fn is_loopback(addr: &std::net::SocketAddr) -> bool {
    match addr {
        std::net::SocketAddr::V4(a) => a.ip().octets()[0] == 127,
        std::net::SocketAddr::V6(a) => a.ip().is_loopback(),
    }
}
