//! This node's view of the cluster: the nodes it knows, who serves each
//! of the 16384 slots, the epochs; what the bus's messages change in it
//! (Redis's `clusterProcessPacket` for PING, PONG and MEET) and what the
//! commands ask of it. No sockets here: the bus ([`crate::bus`]) owns the
//! links and hands each message in; what comes back says what to send.
//!
//! ```text
//!  nodes    name -> Node (address, flags, config epoch, ping times, slots)
//!  slots    slot -> the name of the master serving it (None: unassigned)
//!  epochs   current_epoch (the cluster's), each master's config_epoch
//! ```

use std::collections::HashMap;
use std::fmt::Write as _;

use rand::Rng;

use crate::msg::{self, Body, Ext, Gossip, Header, Msg, Name, NULL_NAME};

pub use crate::msg::SLOTS;

/// Node flags, as the bus carries them and CLUSTER NODES names them.
pub const FLAG_MASTER: u16 = msg::NODE_MASTER;
pub const FLAG_SLAVE: u16 = msg::NODE_SLAVE;
pub const FLAG_PFAIL: u16 = msg::NODE_PFAIL;
pub const FLAG_FAIL: u16 = msg::NODE_FAIL;
pub const FLAG_MYSELF: u16 = msg::NODE_MYSELF;
pub const FLAG_HANDSHAKE: u16 = msg::NODE_HANDSHAKE;
pub const FLAG_NOADDR: u16 = msg::NODE_NOADDR;
pub const FLAG_MEET: u16 = msg::NODE_MEET;
pub const FLAG_NOFAILOVER: u16 = msg::NODE_NOFAILOVER;
const FLAG_EXTENSIONS_SUPPORTED: u16 = msg::NODE_EXTENSIONS_SUPPORTED;

/// A node as this one knows it.
#[derive(Clone, Debug)]
pub struct Node {
    pub name: Name,
    pub shard_id: Name,
    pub flags: u16,
    pub config_epoch: u64,
    pub ip: String,
    pub port: u16,
    pub cport: u16,
    pub pport: u16,
    pub hostname: String,
    pub human_nodename: String,
    /// The master it replicates (a name this node may not know).
    pub slaveof: Option<Name>,
    /// When the ping in flight was sent (0: none), ms.
    pub ping_sent: u64,
    pub pong_received: u64,
    pub ctime: u64,
    pub repl_offset: u64,
    /// An outgoing link is up (`connected` in CLUSTER NODES).
    pub linked: bool,
    /// Masters that said it is failing (`fail?` or `fail` in their
    /// gossip), with when they last said so.
    pub fail_reports: Vec<(Name, u64)>,
    /// When it was flagged `fail`.
    pub fail_time: u64,
    /// When this node last voted for a replica of it (a master).
    pub voted_time: u64,
}

impl Node {
    fn new(name: Name, flags: u16, now: u64) -> Self {
        Node {
            name,
            shard_id: random_name(),
            flags,
            config_epoch: 0,
            ip: String::new(),
            port: 0,
            cport: 0,
            pport: 0,
            hostname: String::new(),
            human_nodename: String::new(),
            slaveof: None,
            ping_sent: 0,
            pong_received: 0,
            ctime: now,
            repl_offset: 0,
            linked: false,
            fail_reports: Vec::new(),
            fail_time: 0,
            voted_time: 0,
        }
    }

    pub fn is_master(&self) -> bool {
        self.flags & FLAG_MASTER != 0
    }

    pub fn in_handshake(&self) -> bool {
        self.flags & FLAG_HANDSHAKE != 0
    }

    pub fn has_addr(&self) -> bool {
        self.flags & FLAG_NOADDR == 0
    }

    /// `ip:port@cport[,hostname]` as CLUSTER NODES shows it.
    pub fn addr(&self) -> String {
        let mut s = format!("{}:{}@{}", self.ip, self.port, self.cport);
        if !self.hostname.is_empty() {
            s.push(',');
            s.push_str(&self.hostname);
        }
        s
    }
}

/// A new random node name: 40 lowercase hex digits, as Redis's.
pub fn random_name() -> Name {
    let mut n = [0u8; 40];
    let mut rng = rand::thread_rng();
    for b in n.iter_mut() {
        *b = b"0123456789abcdef"[rng.gen_range(0..16)];
    }
    n
}

pub fn name_str(n: &Name) -> &str {
    std::str::from_utf8(n).unwrap_or("")
}

/// Whether `s` is a node name: 40 lowercase letters or digits (Redis's
/// verifyClusterNodeId).
pub fn valid_name(s: &[u8]) -> bool {
    s.len() == 40 && s.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

pub fn to_name(s: &[u8]) -> Option<Name> {
    valid_name(s).then(|| s.try_into().unwrap_or(NULL_NAME))
}

/// The node's own settings, from the config.
#[derive(Clone, Debug, Default)]
pub struct Me {
    pub port: u16,
    pub cport: u16,
    pub announce_ip: Option<String>,
    pub hostname: String,
    pub human_nodename: String,
    pub node_timeout_ms: u64,
    pub require_full_coverage: bool,
}

/// What a message asks the bus to do on the link it came by.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to send.
    Nothing,
    /// Answer with a PONG.
    Pong,
    /// The link goes (a handshake that found a known node, a PONG from
    /// the wrong node).
    Close,
    /// A PUBLISH (or PUBLISHSHARD) from a known node: to deliver here.
    Publish { channel: Vec<u8>, message: Vec<u8>, shard: bool },
}

/// The link a message came by, as the bus describes it.
pub struct Via<'a> {
    pub inbound: bool,
    /// The node an outgoing link was opened to.
    pub node: Option<Name>,
    /// The peer's IP, as the socket says.
    pub peer_ip: &'a str,
    /// This end's IP, as the socket says (how a node learns its own).
    pub local_ip: &'a str,
}

pub struct State {
    pub me: Me,
    pub myself: Name,
    pub current_epoch: u64,
    pub last_vote_epoch: u64,
    pub nodes: HashMap<Name, Node>,
    pub slots: Vec<Option<Name>>,
    /// Messages sent and received by type (CLUSTER INFO).
    pub sent: [u64; 11],
    pub received: [u64; 11],
    /// nodes.conf must be written; and synced to disk (epochs and votes
    /// changed, slots moved by a newer epoch: Redis's FSYNC_CONFIG).
    pub dirty: bool,
    pub fsync: bool,
    /// Whether every slot is served (cluster_state).
    pub ok: bool,
    /// Messages to send: to one node (on its outgoing link), or to every
    /// node (None); the bus takes them after each call into the state.
    pub outbox: Vec<(Option<Name>, Msg)>,
    /// A replica's election, or a manual failover in progress.
    pub election: Election,
    /// Slots being moved (CLUSTER SETSLOT): this node's, going to a node,
    /// and slots coming from one.
    pub migrating: HashMap<u16, Name>,
    pub importing: HashMap<u16, Name>,
}

/// A replica's failover (Redis's failover_auth_* and mf_* fields).
#[derive(Clone, Debug, Default)]
pub struct Election {
    /// When the election starts (or started), ms.
    pub auth_time: u64,
    pub auth_count: usize,
    pub auth_sent: bool,
    pub rank: usize,
    pub auth_epoch: u64,
    /// A manual failover's deadline (0: none) and whether its election
    /// may start (FORCE, or the master's offset reached).
    pub manual_end: u64,
    pub manual_can_start: bool,
    /// The master's offset a manual failover waits for (from its paused
    /// PINGs).
    pub manual_offset: Option<u64>,
    /// On a master: the replica whose manual failover it pauses for, and
    /// whether writes are paused (its PINGs then carry the offset).
    pub manual_replica: Option<Name>,
    pub manual_paused: bool,
}

/// How long a failure report stays valid, and how long a master's FAIL
/// stays before it is undone once it is reachable again and nobody took
/// its slots: node timeouts (Redis's CLUSTER_FAIL_REPORT_VALIDITY_MULT and
/// CLUSTER_FAIL_UNDO_TIME_MULT).
const FAIL_REPORT_VALIDITY: u64 = 2;
const FAIL_UNDO_TIME: u64 = 2;
/// A manual failover's time limit, ms (CLUSTER_MF_TIMEOUT).
pub const MANUAL_FAILOVER_TIMEOUT: u64 = 5000;

impl State {
    /// New settings from the config: this node's own entry follows them.
    pub fn configure(&mut self, me: Me) {
        let id = self.myself;
        let n = self.nodes.get_mut(&id).expect("myself is a node");
        if let Some(ip) = &me.announce_ip {
            if n.ip != *ip {
                n.ip = ip.clone();
                self.dirty = true;
            }
        }
        if n.hostname != me.hostname {
            n.hostname = me.hostname.clone();
            self.dirty = true;
        }
        n.human_nodename = me.human_nodename.clone();
        let coverage = self.me.require_full_coverage != me.require_full_coverage;
        self.me = me;
        if coverage {
            self.update_state();
        }
    }

    /// A node alone in a cluster of its own: a new name, no slots.
    pub fn fresh(me: Me, now: u64) -> Self {
        let myself = random_name();
        let mut n = Node::new(myself, FLAG_MYSELF | FLAG_MASTER, now);
        n.port = me.port;
        n.cport = me.cport;
        n.ip = me.announce_ip.clone().unwrap_or_default();
        n.hostname = me.hostname.clone();
        n.human_nodename = me.human_nodename.clone();
        let mut nodes = HashMap::new();
        nodes.insert(myself, n);
        let mut st = State {
            me,
            myself,
            current_epoch: 0,
            last_vote_epoch: 0,
            nodes,
            slots: vec![None; SLOTS],
            sent: [0; 11],
            received: [0; 11],
            dirty: true,
            fsync: true,
            ok: false,
            outbox: Vec::new(),
            election: Election::default(),
            migrating: HashMap::new(),
            importing: HashMap::new(),
        };
        st.update_state();
        st
    }

    pub fn myself(&self) -> &Node {
        &self.nodes[&self.myself]
    }

    fn myself_mut(&mut self) -> &mut Node {
        self.nodes.get_mut(&self.myself).expect("myself is a node")
    }

    /// Looks a node up by its name.
    pub fn lookup(&self, name: &[u8]) -> Option<&Node> {
        self.nodes.get(&to_name(name)?)
    }

    pub fn slot_owner(&self, slot: usize) -> Option<&Node> {
        self.slots[slot].as_ref().and_then(|n| self.nodes.get(n))
    }

    pub fn num_slots(&self, name: &Name) -> usize {
        self.slots.iter().filter(|s| s.as_ref() == Some(name)).count()
    }

    /// The slot ranges `name` serves, ascending.
    pub fn ranges(&self, name: &Name) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = Vec::new();
        for (i, s) in self.slots.iter().enumerate() {
            if s.as_ref() == Some(name) {
                match out.last_mut() {
                    Some(r) if r.1 + 1 == i => r.1 = i,
                    _ => out.push((i, i)),
                }
            }
        }
        out
    }

    /// cluster_state: ok when every slot is served by a node not failed
    /// (or `cluster-require-full-coverage no`).
    /// A node among the minority of the masters (fewer than half of those
    /// serving slots reachable) is down too.
    pub fn update_state(&mut self) {
        let failed: Vec<Name> = self.nodes.values().filter(|n| n.flags & FLAG_FAIL != 0).map(|n| n.name).collect();
        let covered = self.slots.iter().all(|s| s.as_ref().is_some_and(|n| !failed.contains(n)));
        let owners = self.owners();
        let size = owners.iter().filter(|o| self.nodes.get(*o).is_some_and(|n| n.is_master())).count();
        let reachable = owners.iter().filter(|o| self.nodes.get(*o).is_some_and(|n| n.is_master() && n.flags & (FLAG_FAIL | FLAG_PFAIL) == 0)).count();
        self.ok = (covered || !self.me.require_full_coverage) && reachable > size / 2;
    }

    /// The nodes serving at least one slot, in one pass over the slots.
    fn owners(&self) -> Vec<Name> {
        let mut out: Vec<Name> = Vec::new();
        let mut last: Option<&Name> = None;
        for s in self.slots.iter().flatten() {
            if last != Some(s) {
                if !out.contains(s) {
                    out.push(*s);
                }
                last = Some(s);
            }
        }
        out
    }

    /// The masters serving at least one slot (cluster_size).
    pub fn size(&self) -> usize {
        self.owners().iter().filter(|o| self.nodes.get(*o).is_some_and(|n| n.is_master())).count()
    }

    fn serves_any(&self, name: &Name) -> bool {
        self.slots.iter().any(|s| s.as_ref() == Some(name))
    }

    /// The replicas of `master` this node knows.
    pub fn replicas_of(&self, master: &Name) -> Vec<&Node> {
        self.nodes.values().filter(|n| n.flags & FLAG_SLAVE != 0 && n.slaveof.as_ref() == Some(master)).collect()
    }

    /// Assigns `slot` to myself (ADDSLOTS; checked by the caller).
    pub fn add_slot(&mut self, slot: usize) {
        self.slots[slot] = Some(self.myself);
        self.dirty = true;
    }

    pub fn del_slot(&mut self, slot: usize) {
        self.slots[slot] = None;
        self.dirty = true;
    }

    /// CLUSTER SET-CONFIG-EPOCH: only on a node that knows no other and
    /// has epoch 0 (the caller checks); the current epoch follows.
    pub fn set_config_epoch(&mut self, epoch: u64) {
        self.myself_mut().config_epoch = epoch;
        if self.current_epoch < epoch {
            self.current_epoch = epoch;
        }
        self.dirty = true;
        self.fsync = true;
    }

    /// CLUSTER BUMPEPOCH: a new config epoch for myself unless it is the
    /// highest already (or 0). Returns whether it bumped, and the epoch.
    pub fn bump_epoch(&mut self) -> (bool, u64) {
        let max = self.nodes.values().map(|n| n.config_epoch).max().unwrap_or(0).max(self.current_epoch);
        let mine = self.myself().config_epoch;
        if mine == 0 || mine != max {
            self.current_epoch += 1;
            let e = self.current_epoch;
            self.myself_mut().config_epoch = e;
            self.dirty = true;
            self.fsync = true;
            (true, e)
        } else {
            (false, mine)
        }
    }

    /// CLUSTER MEET: a node in handshake at that address, unless one is
    /// already; its name is learned from its first PONG.
    pub fn meet(&mut self, ip: &str, port: u16, cport: u16, now: u64) -> bool {
        if self.nodes.values().any(|n| n.in_handshake() && n.ip.eq_ignore_ascii_case(ip) && n.port == port && n.cport == cport) {
            return false;
        }
        let mut n = Node::new(random_name(), FLAG_HANDSHAKE | FLAG_MEET, now);
        n.ip = ip.to_string();
        n.port = port;
        n.cport = cport;
        self.nodes.insert(n.name, n);
        self.dirty = true;
        true
    }

    /// CLUSTER REPLICATE (and, later, a failover's losing side): myself
    /// becomes a replica of `master`, serving no slot, in its shard.
    pub fn set_master(&mut self, master: Name) {
        let me = self.myself;
        for s in self.slots.iter_mut() {
            if *s == Some(me) {
                *s = None;
            }
        }
        let shard = self.nodes.get(&master).map(|m| m.shard_id);
        let n = self.myself_mut();
        n.flags = (n.flags & !(FLAG_MASTER | msg::NODE_MIGRATE_TO)) | FLAG_SLAVE;
        n.slaveof = Some(master);
        if let Some(sh) = shard {
            n.shard_id = sh;
        }
        self.election = Election::default();
        self.migrating.clear();
        self.importing.clear();
        self.dirty = true;
        self.update_state();
        // Everyone hears of the new role at once.
        self.broadcast_pong();
    }

    /// CLUSTER SETSLOT <slot> NODE <node>: the slot is the node's. A node
    /// that imported it takes a new epoch (without agreement, as Redis's
    /// clusterBumpConfigEpochWithoutConsensus) and tells everyone; a master
    /// left with no slot becomes the new owner's replica
    /// (`cluster-allow-replica-migration`).
    pub fn setslot_node(&mut self, slot: u16, node: Name, keys_in_slot: usize, allow_replica_migration: bool) {
        let me = self.myself;
        let was_mine = self.slots[slot as usize] == Some(me);
        if keys_in_slot == 0 {
            self.migrating.remove(&slot);
        }
        self.slots[slot as usize] = Some(node);
        self.dirty = true;
        if was_mine && node != me && !self.serves_any(&me) && allow_replica_migration {
            tern_config::log_notice!("Configuration change detected. Reconfiguring myself as a replica of {}", name_str(&node));
            self.set_master(node);
            return;
        }
        if node == me && self.importing.remove(&slot).is_some() {
            let (bumped, e) = self.bump_epoch();
            if bumped {
                tern_config::log_notice!("configEpoch updated after importing slot {}: {}", slot, e);
            }
            self.broadcast_pong();
        }
        self.update_state();
    }

    /// The replication offset this node's messages carry.
    pub fn set_offset(&mut self, offset: u64) {
        self.myself_mut().repl_offset = offset;
    }

    /// CLUSTER FORGET: the node goes, with the slots it served.
    pub fn forget(&mut self, name: &Name) {
        for s in self.slots.iter_mut() {
            if s.as_ref() == Some(name) {
                *s = None;
            }
        }
        self.migrating.retain(|_, n| n != name);
        self.importing.retain(|_, n| n != name);
        self.nodes.remove(name);
        self.dirty = true;
        self.update_state();
    }

    /// The PING, PONG or MEET this node sends to `to` (None: an inbound
    /// link's peer, whose name may not be known).
    pub fn ping(&mut self, kind: u16, to: Option<&Name>) -> Msg {
        // Gossip about a tenth of the other nodes, at least three, as
        // Redis does, plus every node timed out.
        let others: Vec<&Node> = self
            .nodes
            .values()
            .filter(|n| n.name != self.myself && Some(&n.name) != to && n.flags & (FLAG_HANDSHAKE | FLAG_NOADDR) == 0)
            .collect();
        let wanted = (self.nodes.len() / 10).max(3).min(others.len());
        let mut rng = rand::thread_rng();
        let mut picked: Vec<&Node> = Vec::with_capacity(wanted);
        let mut tries = wanted * 3;
        while picked.len() < wanted && tries > 0 {
            tries -= 1;
            let n = others[rng.gen_range(0..others.len())];
            if n.flags & (FLAG_PFAIL | FLAG_FAIL) == 0 && !picked.iter().any(|p| p.name == n.name) {
                picked.push(n);
            }
        }
        for n in &others {
            if n.flags & FLAG_PFAIL != 0 && !picked.iter().any(|p| p.name == n.name) {
                picked.push(n);
            }
        }
        let gossip = picked
            .iter()
            .map(|n| Gossip {
                name: n.name,
                ping_sent: (n.ping_sent / 1000) as u32,
                pong_received: (n.pong_received / 1000) as u32,
                ip: n.ip.clone(),
                port: n.port,
                cport: n.cport,
                flags: n.flags,
                pport: n.pport,
            })
            .collect();
        let me = self.myself();
        let mut exts = Vec::new();
        if !me.hostname.is_empty() {
            exts.push(Ext::Hostname(me.hostname.clone()));
        }
        if !me.human_nodename.is_empty() {
            exts.push(Ext::HumanNodename(me.human_nodename.clone()));
        }
        exts.push(Ext::ShardId(me.shard_id));
        let header = self.header(kind);
        self.sent[kind as usize] += 1;
        Msg { header, body: Body::Ping { gossip, exts } }
    }

    /// The header every message of this node carries.
    /// A replica's carries its master's slots and config epoch, as Redis's
    /// clusterBuildMessageHdr does.
    fn header(&self, kind: u16) -> Header {
        let me = self.myself();
        let master = match (me.flags & FLAG_SLAVE != 0, me.slaveof.and_then(|m| self.nodes.get(&m))) {
            (true, Some(m)) => m,
            _ => me,
        };
        let mut slots = Box::new([0u8; 2048]);
        for (i, s) in self.slots.iter().enumerate() {
            if s.as_ref() == Some(&master.name) {
                msg::set_slot_bit(&mut slots, i as u16);
            }
        }
        Header {
            port: me.port,
            kind,
            current_epoch: self.current_epoch,
            config_epoch: master.config_epoch,
            offset: me.repl_offset,
            sender: self.myself,
            slots,
            slaveof: me.slaveof.unwrap_or(NULL_NAME),
            myip: self.me.announce_ip.clone().unwrap_or_default(),
            pport: 0,
            cport: me.cport,
            flags: me.flags,
            state: if self.ok { 0 } else { 1 },
            mflags0: if me.is_master() && self.election.manual_paused { msg::FLAG0_PAUSED } else { 0 },
        }
    }

    /// A message received on a link: Redis's clusterProcessPacket for
    /// PING, PONG and MEET (the other types are counted and ignored in
    /// this version).
    pub fn process(&mut self, m: &Msg, via: &Via<'_>, now: u64) -> Outcome {
        let h = &m.header;
        if let Some(c) = self.received.get_mut(h.kind as usize) {
            *c += 1;
        }
        let kind = h.kind;
        // The sender, when it is a node known (and not in handshake: its
        // name would not be its own yet).
        let sender = self.nodes.get(&h.sender).filter(|n| !n.in_handshake()).map(|n| n.name);
        if let Some(s) = sender {
            let n = self.nodes.get_mut(&s).expect("known");
            if h.mflags0 & msg::FLAG0_EXT_DATA != 0 {
                n.flags |= FLAG_EXTENSIONS_SUPPORTED;
            }
            if h.current_epoch > self.current_epoch {
                self.current_epoch = h.current_epoch;
                self.dirty = true;
                self.fsync = true;
            }
            let n = self.nodes.get_mut(&s).expect("known");
            if h.config_epoch > n.config_epoch {
                n.config_epoch = h.config_epoch;
                self.dirty = true;
            }
            n.repl_offset = h.offset;
            // A manual failover's master pauses and says where its stream
            // is: once this replica has it all, the election may start.
            if self.election.manual_end != 0 && h.mflags0 & msg::FLAG0_PAUSED != 0 && self.myself().slaveof == Some(s) && self.myself().flags & FLAG_SLAVE != 0 {
                self.election.manual_offset = Some(h.offset);
            }
        }
        let (gossip, exts) = match &m.body {
            Body::Ping { gossip, exts } => (gossip, exts),
            Body::Fail { about } => {
                if sender.is_some() {
                    self.fail_message(about, now);
                }
                return Outcome::Nothing;
            }
            Body::Publish { channel, message } => {
                if sender.is_none() {
                    return Outcome::Nothing;
                }
                return Outcome::Publish { channel: channel.clone(), message: message.clone(), shard: kind == msg::TYPE_PUBLISHSHARD };
            }
            Body::Update { config_epoch, name, slots } => {
                if sender.is_some() {
                    if let Some(n) = self.nodes.get(name).filter(|n| n.config_epoch < *config_epoch) {
                        let n = n.name;
                        if self.nodes[&n].flags & FLAG_SLAVE != 0 {
                            self.set_node_master(n);
                        }
                        self.nodes.get_mut(&n).expect("known").config_epoch = *config_epoch;
                        self.update_slots_with(n, *config_epoch, slots);
                        self.update_state();
                        self.dirty = true;
                    }
                }
                return Outcome::Nothing;
            }
            Body::Empty => {
                match (sender, kind) {
                    (Some(s), msg::TYPE_FAILOVER_AUTH_REQUEST) => self.vote(s, h, now),
                    (Some(s), msg::TYPE_FAILOVER_AUTH_ACK) => {
                        if self.nodes[&s].is_master() && self.serves_any(&s) && h.current_epoch >= self.election.auth_epoch {
                            self.election.auth_count += 1;
                        }
                    }
                    (Some(s), msg::TYPE_MFSTART) => self.manual_failover_asked(s, now),
                    _ => {}
                }
                return Outcome::Nothing;
            }
            _ => return Outcome::Nothing,
        };
        let mut out = Outcome::Nothing;
        if kind == msg::TYPE_PING || kind == msg::TYPE_MEET {
            // A node learns its own address from the first MEET (or
            // PING) that reaches it, unless it announces one.
            if (kind == msg::TYPE_MEET || self.myself().ip.is_empty()) && self.me.announce_ip.is_none() && !via.local_ip.is_empty() && self.myself().ip != via.local_ip {
                let ip = via.local_ip.to_string();
                tern_config::log_notice!("IP address for this node updated to {}", ip);
                self.myself_mut().ip = ip;
                self.dirty = true;
            }
            if sender.is_none() && kind == msg::TYPE_MEET {
                // Met by a node not known: it is added in handshake, to be
                // pinged and named by its PONG.
                let mut n = Node::new(random_name(), FLAG_HANDSHAKE, now);
                n.ip = if h.myip.is_empty() { via.peer_ip.to_string() } else { h.myip.clone() };
                n.port = h.port;
                n.cport = h.cport;
                n.pport = h.pport;
                self.nodes.insert(n.name, n);
                self.dirty = true;
                self.gossip(None, gossip, now);
            }
            out = Outcome::Pong;
        }
        if !via.inbound {
            if let Some(lname) = via.node {
                let in_handshake = self.nodes.get(&lname).is_some_and(|n| n.in_handshake());
                if in_handshake {
                    if let Some(s) = sender {
                        // A node known already, reached again by a new
                        // address: the handshake node goes.
                        let (ip, port, cport) = {
                            let n = &self.nodes[&lname];
                            (n.ip.clone(), n.port, n.cport)
                        };
                        let sn = self.nodes.get_mut(&s).expect("known");
                        if sn.ip != ip || sn.port != port || sn.cport != cport {
                            sn.ip = ip;
                            sn.port = port;
                            sn.cport = cport;
                        }
                        self.nodes.remove(&lname);
                        self.dirty = true;
                        return Outcome::Close;
                    }
                    // The handshake is done: the node takes its name.
                    if let Some(mut n) = self.nodes.remove(&lname) {
                        n.name = h.sender;
                        n.flags &= !(FLAG_HANDSHAKE | FLAG_MEET);
                        n.flags |= h.flags & (FLAG_MASTER | FLAG_SLAVE);
                        n.linked = true;
                        self.nodes.insert(h.sender, n);
                        self.dirty = true;
                        tern_config::log_verbose!("Handshake with node {} completed.", name_str(&h.sender));
                    }
                } else if lname != h.sender {
                    // Another node answers at that address: its address
                    // is forgotten until gossip gives a new one.
                    if let Some(n) = self.nodes.get_mut(&lname) {
                        n.flags |= FLAG_NOADDR;
                        n.ip.clear();
                        n.port = 0;
                        n.cport = 0;
                        n.linked = false;
                    }
                    self.dirty = true;
                    return Outcome::Close;
                }
            }
        }
        let sender = self.nodes.get(&h.sender).filter(|n| !n.in_handshake()).map(|n| n.name);
        if let Some(s) = sender {
            let n = self.nodes.get_mut(&s).expect("known");
            n.flags = (n.flags & !FLAG_NOFAILOVER) | (h.flags & FLAG_NOFAILOVER);
            // A PING from a known node at a new address.
            if kind == msg::TYPE_PING && !via.peer_ip.is_empty() {
                let ip = if h.myip.is_empty() { via.peer_ip.to_string() } else { h.myip.clone() };
                if n.ip != ip || n.port != h.port || n.cport != h.cport {
                    n.ip = ip;
                    n.port = h.port;
                    n.cport = h.cport;
                    n.flags &= !FLAG_NOADDR;
                    self.dirty = true;
                }
            }
        }
        if !via.inbound && kind == msg::TYPE_PONG {
            // The link's node, by its name now (a handshake just done
            // renamed it to the sender's).
            let node = via.node.map(|l| if self.nodes.contains_key(&l) { l } else { h.sender });
            if let Some(n) = node.and_then(|l| self.nodes.get_mut(&l)) {
                n.pong_received = now;
                n.ping_sent = 0;
                if n.flags & FLAG_PFAIL != 0 {
                    n.flags &= !FLAG_PFAIL;
                    self.dirty = true;
                } else if n.flags & FLAG_FAIL != 0 {
                    let name = n.name;
                    self.clear_failure_if_needed(name, now);
                }
            }
        }
        let Some(s) = sender else {
            return out;
        };
        // Master or replica, as the sender says.
        if h.slaveof == NULL_NAME {
            let n = self.nodes.get_mut(&s).expect("known");
            if n.flags & FLAG_SLAVE != 0 || n.slaveof.is_some() {
                n.flags = (n.flags & !FLAG_SLAVE) | FLAG_MASTER;
                n.slaveof = None;
                self.dirty = true;
            } else if n.flags & FLAG_MASTER == 0 {
                n.flags |= FLAG_MASTER;
                self.dirty = true;
            }
        } else {
            let was_master = self.nodes[&s].is_master();
            if was_master {
                // It was a master: the slots it served are given up.
                for slot in self.slots.iter_mut() {
                    if slot.as_ref() == Some(&s) {
                        *slot = None;
                    }
                }
            }
            let master_shard = self.nodes.get(&h.slaveof).map(|m| m.shard_id);
            let n = self.nodes.get_mut(&s).expect("known");
            if was_master || n.slaveof != Some(h.slaveof) {
                n.flags = (n.flags & !(FLAG_MASTER | msg::NODE_MIGRATE_TO)) | FLAG_SLAVE;
                n.slaveof = Some(h.slaveof);
                if let Some(sh) = master_shard {
                    n.shard_id = sh;
                }
                self.dirty = true;
            }
        }
        // The slots the sender (or its master) serves, against this view.
        let sender_master = if self.nodes[&s].is_master() { Some(s) } else { self.nodes[&s].slaveof };
        let dirty_slots = sender_master.is_some_and(|m| (0..SLOTS).any(|i| (self.slots[i].as_ref() == Some(&m)) != msg::slot_bit(&h.slots, i as u16)));
        if dirty_slots && self.nodes[&s].is_master() {
            self.update_slots_with(s, h.config_epoch, &h.slots);
        }
        if self.myself().is_master() && self.nodes[&s].is_master() && h.config_epoch == self.myself().config_epoch {
            self.epoch_collision(s);
        }
        self.gossip(Some(s), gossip, now);
        self.extensions(s, exts);
        self.update_state();
        out
    }

    /// Slots claimed by `sender` with `epoch`: taken from their owner when
    /// unassigned or its epoch is older (Redis's
    /// clusterUpdateSlotsConfigWith, without the replica reconfiguration).
    /// When the slots of this node's master (or its own) all went to the
    /// sender — a failover this node missed, or a master coming back after
    /// one — it becomes the sender's replica.
    pub fn update_slots_with(&mut self, sender: Name, epoch: u64, claimed: &[u8; 2048]) {
        if sender == self.myself {
            return;
        }
        let me = self.myself();
        let cur_master = if me.flags & FLAG_SLAVE != 0 { me.slaveof } else { Some(me.name) };
        let mut moved_ours = false;
        for j in 0..SLOTS {
            if !msg::slot_bit(claimed, j as u16) || self.slots[j] == Some(sender) || self.importing.contains_key(&(j as u16)) {
                continue;
            }
            let older = match &self.slots[j] {
                None => true,
                Some(o) => self.nodes.get(o).is_none_or(|o| o.config_epoch < epoch),
            };
            if older {
                if cur_master.is_some() && self.slots[j] == cur_master {
                    moved_ours = true;
                }
                self.slots[j] = Some(sender);
                self.dirty = true;
                self.fsync = true;
            }
        }
        if let (true, Some(m)) = (moved_ours, cur_master) {
            if !self.serves_any(&m) {
                tern_config::log_notice!("Configuration change detected. Reconfiguring myself as a replica of {}", name_str(&sender));
                self.set_master(sender);
            }
        }
    }

    /// A node seen as a master again (its messages say so, or an UPDATE
    /// about it).
    fn set_node_master(&mut self, name: Name) {
        if let Some(n) = self.nodes.get_mut(&name) {
            n.flags = (n.flags & !FLAG_SLAVE) | FLAG_MASTER;
            n.slaveof = None;
            self.dirty = true;
        }
    }

    /// The message of `kind` this node sends (header only, or `body`).
    fn message(&mut self, kind: u16, body: Body) -> Msg {
        if let Some(c) = self.sent.get_mut(kind as usize) {
            *c += 1;
        }
        Msg { header: self.header(kind), body }
    }

    /// A PUBLISH for every node, or a PUBLISHSHARD for the other nodes of
    /// this one's shard (its master and replicas), as Redis's
    /// clusterPropagatePublish and clusterPropagatePublishShard.
    pub fn publish(&mut self, channel: &[u8], message: &[u8], shard: bool) {
        let body = Body::Publish { channel: channel.to_vec(), message: message.to_vec() };
        if !shard {
            let m = self.message(msg::TYPE_PUBLISH, body);
            self.outbox.push((None, m));
            return;
        }
        let me = self.myself();
        let (id, sh) = (me.name, me.shard_id);
        let peers: Vec<Name> = self.nodes.values().filter(|n| n.name != id && n.shard_id == sh && !n.in_handshake()).map(|n| n.name).collect();
        for p in peers {
            let m = self.message(msg::TYPE_PUBLISHSHARD, body.clone());
            self.outbox.push((Some(p), m));
        }
    }

    /// PONGs to every node at once (a failover won, a manual failover's
    /// pause), as Redis's clusterBroadcastPong.
    fn broadcast_pong(&mut self) {
        let m = self.ping(msg::TYPE_PONG, None);
        self.outbox.push((None, m));
    }

    /// Counts the masters' reports (and this node's own view, if it is a
    /// master) against the quorum: a node timed out by a majority is
    /// flagged `fail`, and every node is told.
    fn mark_failing_if_needed(&mut self, name: Name, now: u64) {
        let validity = self.me.node_timeout_ms * FAIL_REPORT_VALIDITY;
        let quorum = self.size() / 2 + 1;
        let me_master = self.myself().is_master();
        let Some(n) = self.nodes.get_mut(&name) else { return };
        n.fail_reports.retain(|(_, t)| now.saturating_sub(*t) <= validity);
        if n.flags & FLAG_PFAIL == 0 || n.flags & FLAG_FAIL != 0 {
            return;
        }
        let failures = n.fail_reports.len() + usize::from(me_master);
        if failures < quorum {
            return;
        }
        tern_config::log_notice!("Marking node {} as failing (quorum reached).", name_str(&name));
        n.flags = (n.flags & !FLAG_PFAIL) | FLAG_FAIL;
        n.fail_time = now;
        let m = self.message(msg::TYPE_FAIL, Body::Fail { about: name });
        self.outbox.push((None, m));
        self.dirty = true;
        self.update_state();
    }

    /// A FAIL message: the node is flagged `fail` (unless it is this one).
    fn fail_message(&mut self, about: &Name, now: u64) {
        let me = self.myself;
        let Some(n) = self.nodes.get_mut(about) else { return };
        if n.flags & FLAG_FAIL != 0 || n.name == me {
            return;
        }
        tern_config::log_notice!("FAIL message received about {}", name_str(about));
        n.flags = (n.flags & !FLAG_PFAIL) | FLAG_FAIL;
        n.fail_time = now;
        self.dirty = true;
        self.update_state();
    }

    /// A failed node answers again: a replica, or a master serving no
    /// slot, is cleared at once; a master still serving its slots after
    /// twice the node timeout (nobody failed it over) too.
    fn clear_failure_if_needed(&mut self, name: Name, now: u64) {
        let serves = self.serves_any(&name);
        let undo = self.me.node_timeout_ms * FAIL_UNDO_TIME;
        let Some(n) = self.nodes.get_mut(&name) else { return };
        let clear = n.flags & FLAG_SLAVE != 0 || !serves || (n.is_master() && now.saturating_sub(n.fail_time) > undo);
        if clear && n.flags & FLAG_FAIL != 0 {
            tern_config::log_notice!("Clear FAIL state for node {}: is reachable again.", name_str(&name));
            n.flags &= !FLAG_FAIL;
            self.dirty = true;
            self.update_state();
        }
    }

    /// A replica asks for this master's vote (Redis's
    /// clusterSendFailoverAuthIfNeeded): one vote an epoch, for a replica
    /// whose master failed (or that a manual failover forces), not twice
    /// for one master within two node timeouts, and only if none of the
    /// slots it claims has a newer owner.
    fn vote(&mut self, s: Name, h: &Header, now: u64) {
        let me = self.myself();
        if !me.is_master() || !self.serves_any(&me.name) {
            return;
        }
        if h.current_epoch < self.current_epoch || self.last_vote_epoch == self.current_epoch {
            return;
        }
        let node = &self.nodes[&s];
        let force = h.mflags0 & msg::FLAG0_FORCEACK != 0;
        let Some(master) = node.slaveof.filter(|_| node.flags & FLAG_SLAVE != 0) else { return };
        let Some(m) = self.nodes.get(&master) else { return };
        if m.flags & FLAG_FAIL == 0 && !force {
            return;
        }
        if now.saturating_sub(m.voted_time) < self.me.node_timeout_ms * 2 {
            return;
        }
        for j in 0..SLOTS {
            if msg::slot_bit(&h.slots, j as u16) && self.slot_owner(j).is_some_and(|o| o.config_epoch > h.config_epoch) {
                return;
            }
        }
        self.last_vote_epoch = self.current_epoch;
        self.nodes.get_mut(&master).expect("known").voted_time = now;
        self.dirty = true;
        self.fsync = true;
        tern_config::log_notice!("Failover auth granted to {} for epoch {}", name_str(&s), self.current_epoch);
        let m = self.message(msg::TYPE_FAILOVER_AUTH_ACK, Body::Empty);
        self.outbox.push((Some(s), m));
    }

    /// MFSTART from a replica of this master: writes pause (the caller,
    /// through [`State::manual_failover_pause`]) and the PINGs to it say
    /// where the stream is.
    fn manual_failover_asked(&mut self, s: Name, now: u64) {
        if !self.myself().is_master() || self.nodes[&s].slaveof != Some(self.myself) {
            return;
        }
        self.election.manual_end = now + MANUAL_FAILOVER_TIMEOUT;
        self.election.manual_replica = Some(s);
        tern_config::log_notice!("Manual failover requested by replica {}.", name_str(&s));
    }

    /// While a replica's manual failover runs on this master: until when
    /// writes stay paused (None: no pause).
    pub fn manual_failover_pause(&self) -> Option<u64> {
        (self.myself().is_master() && self.election.manual_end != 0).then_some(self.election.manual_end)
    }

    /// CLUSTER FAILOVER on a replica: by default the master is asked to
    /// pause (MFSTART) and the election waits for its offset; FORCE
    /// starts it at once; TAKEOVER takes the slots without one.
    pub fn start_manual_failover(&mut self, force: bool, takeover: bool, now: u64) {
        self.election = Election { manual_end: now + MANUAL_FAILOVER_TIMEOUT, ..Election::default() };
        if takeover {
            self.bump_epoch();
            self.replace_master();
        } else if force {
            self.election.manual_can_start = true;
        } else if let Some(m) = self.myself().slaveof {
            let msg = self.message(msg::TYPE_MFSTART, Body::Empty);
            self.outbox.push((Some(m), msg));
        }
    }

    /// This replica's rank among its master's: how many have more of the
    /// stream (each waits a second more before asking for votes).
    fn rank(&self) -> usize {
        let me = self.myself();
        let Some(m) = me.slaveof else { return 0 };
        self.replicas_of(&m).iter().filter(|r| r.name != me.name && r.flags & FLAG_NOFAILOVER == 0 && r.repl_offset > me.repl_offset).count()
    }

    /// A replica's side of a failover, every cron tick (Redis's
    /// clusterHandleSlaveFailover, without the data-age check): when its
    /// master is `fail` (or a manual failover says so), wait 500–1000 ms
    /// plus a second per better replica, ask every master for its vote
    /// with a new epoch, and with a majority take the master's place.
    fn handle_failover(&mut self, now: u64) {
        let timeout = self.me.node_timeout_ms;
        let auth_timeout = (timeout * 2).max(2000);
        let auth_retry = auth_timeout * 2;
        let manual = self.election.manual_end != 0 && self.election.manual_can_start;
        let me = self.myself();
        let Some(master) = me.slaveof.filter(|_| me.flags & FLAG_SLAVE != 0) else { return };
        let failed = self.nodes.get(&master).is_some_and(|m| m.flags & FLAG_FAIL != 0);
        if (!failed && !manual) || !self.serves_any(&master) {
            return;
        }
        let auth_age = now.saturating_sub(self.election.auth_time);
        if auth_age > auth_retry {
            let rank = self.rank();
            self.election.auth_time = now + 500 + rand::thread_rng().gen_range(0..500) + rank as u64 * 1000;
            self.election.auth_count = 0;
            self.election.auth_sent = false;
            self.election.rank = rank;
            if self.election.manual_end != 0 {
                self.election.auth_time = now;
                self.election.rank = 0;
            }
            tern_config::log_notice!("Start of election delayed for {} milliseconds (rank #{}).", self.election.auth_time.saturating_sub(now), self.election.rank);
            return;
        }
        if !self.election.auth_sent && self.election.manual_end == 0 {
            let rank = self.rank();
            if rank > self.election.rank {
                self.election.auth_time += (rank - self.election.rank) as u64 * 1000;
                self.election.rank = rank;
            }
        }
        if now < self.election.auth_time || auth_age > auth_timeout {
            return;
        }
        if !self.election.auth_sent {
            self.current_epoch += 1;
            self.election.auth_epoch = self.current_epoch;
            self.election.auth_sent = true;
            self.dirty = true;
            self.fsync = true;
            tern_config::log_notice!("Starting a failover election for epoch {}.", self.current_epoch);
            let mut m = self.message(msg::TYPE_FAILOVER_AUTH_REQUEST, Body::Empty);
            if self.election.manual_end != 0 {
                m.header.mflags0 |= msg::FLAG0_FORCEACK;
            }
            self.outbox.push((None, m));
            return;
        }
        if self.election.auth_count >= self.size() / 2 + 1 {
            tern_config::log_notice!("Failover election won: I'm the new master.");
            if self.myself().config_epoch < self.election.auth_epoch {
                let e = self.election.auth_epoch;
                self.myself_mut().config_epoch = e;
            }
            self.replace_master();
        }
    }

    /// This replica takes its master's slots and becomes a master (Redis's
    /// clusterFailoverReplaceYourMaster); replication is promoted by the
    /// caller, which sees the role change.
    fn replace_master(&mut self) {
        let me = self.myself();
        let Some(old) = me.slaveof.filter(|_| me.flags & FLAG_SLAVE != 0) else { return };
        let id = self.myself;
        let n = self.myself_mut();
        n.flags = (n.flags & !FLAG_SLAVE) | FLAG_MASTER;
        n.slaveof = None;
        for s in self.slots.iter_mut() {
            if *s == Some(old) {
                *s = Some(id);
            }
        }
        self.election = Election::default();
        self.dirty = true;
        self.fsync = true;
        self.update_state();
        self.broadcast_pong();
    }

    /// Two masters with one config epoch: the one with the lower name
    /// takes a new epoch (Redis's clusterHandleConfigEpochCollision).
    fn epoch_collision(&mut self, sender: Name) {
        if sender <= self.myself {
            return;
        }
        self.current_epoch += 1;
        let e = self.current_epoch;
        self.myself_mut().config_epoch = e;
        self.dirty = true;
        self.fsync = true;
        tern_config::log_verbose!("WARNING: configEpoch collision with node {}. configEpoch set to {}", name_str(&sender), e);
    }

    /// A gossip section: nodes not known yet are met (when the sender is
    /// known); for known ones, a newer pong time is taken.
    fn gossip(&mut self, sender: Option<Name>, gossip: &[Gossip], now: u64) {
        if gossip.iter().any(|g| !valid_name(&g.name)) {
            return;
        }
        let from_master = sender.is_some_and(|s| self.nodes.get(&s).is_some_and(|n| n.is_master()));
        for g in gossip {
            // A master's word on a node's health counts toward its FAIL.
            if let (Some(s), true) = (sender, from_master) {
                if g.name != self.myself && self.nodes.contains_key(&g.name) {
                    if g.flags & (FLAG_FAIL | FLAG_PFAIL) != 0 {
                        let n = self.nodes.get_mut(&g.name).expect("known");
                        match n.fail_reports.iter_mut().find(|(r, _)| *r == s) {
                            Some(r) => r.1 = now,
                            None => n.fail_reports.push((s, now)),
                        }
                        self.mark_failing_if_needed(g.name, now);
                    } else {
                        self.nodes.get_mut(&g.name).expect("known").fail_reports.retain(|(r, _)| *r != s);
                    }
                }
            }
            match self.nodes.get_mut(&g.name) {
                Some(n) if n.name != self.myself => {
                    if g.flags & (FLAG_FAIL | FLAG_PFAIL) == 0 && n.ping_sent == 0 && n.fail_reports.is_empty() {
                        let pong = g.pong_received as u64 * 1000;
                        if pong <= now + 500 && pong > n.pong_received {
                            n.pong_received = pong;
                        }
                    }
                    // A node failing or without an address, said healthy at
                    // another address: its link is redone there.
                    let moved = n.ip != g.ip || n.port != g.port || n.cport != g.cport;
                    let healthy = g.flags & (FLAG_NOADDR | FLAG_FAIL | FLAG_PFAIL) == 0 && !g.ip.is_empty();
                    if n.flags & (FLAG_NOADDR | FLAG_FAIL | FLAG_PFAIL) != 0 && healthy && moved {
                        n.ip = g.ip.clone();
                        n.port = g.port;
                        n.cport = g.cport;
                        n.flags &= !FLAG_NOADDR;
                        n.linked = false;
                        self.dirty = true;
                    }
                }
                Some(_) => {}
                None => {
                    if sender.is_some() && g.flags & FLAG_NOADDR == 0 && !g.ip.is_empty() && g.port != 0 && g.cport != 0 {
                        self.meet(&g.ip, g.port, g.cport, now);
                    }
                }
            }
        }
    }

    fn extensions(&mut self, sender: Name, exts: &[Ext]) {
        let Some(n) = self.nodes.get_mut(&sender) else { return };
        let mut hostname = String::new();
        let mut human = String::new();
        for e in exts {
            match e {
                Ext::Hostname(h) => hostname = h.clone(),
                Ext::HumanNodename(h) => human = h.clone(),
                Ext::ShardId(id) => {
                    if n.shard_id != *id {
                        n.shard_id = *id;
                        self.dirty = true;
                    }
                }
                Ext::ForgottenNode { .. } | Ext::InternalSecret(_) => {}
            }
        }
        let n = self.nodes.get_mut(&sender).expect("known");
        if n.hostname != hostname {
            n.hostname = hostname;
            self.dirty = true;
        }
        n.human_nodename = human;
    }

    /// Every 100 ms: handshakes that took too long go, nodes not heard
    /// from within the node timeout are flagged PFAIL. Returns the nodes
    /// to ping now.
    pub fn cron(&mut self, now: u64, tick: u64) -> Vec<Name> {
        let timeout = self.me.node_timeout_ms.max(1);
        let handshake_timeout = timeout.max(1000);
        let stale: Vec<Name> = self.nodes.values().filter(|n| n.in_handshake() && now.saturating_sub(n.ctime) > handshake_timeout).map(|n| n.name).collect();
        for n in stale {
            self.nodes.remove(&n);
            self.dirty = true;
        }
        let mut ping = Vec::new();
        // Once a second, the node among five random ones whose pong is the
        // oldest.
        if tick % 10 == 0 {
            let cands: Vec<&Node> = self.nodes.values().filter(|n| n.name != self.myself && n.linked && n.ping_sent == 0 && n.flags & (FLAG_HANDSHAKE | FLAG_NOADDR) == 0).collect();
            let mut rng = rand::thread_rng();
            let mut best: Option<&Node> = None;
            for _ in 0..5.min(cands.len()) {
                let c = cands[rng.gen_range(0..cands.len())];
                if best.is_none_or(|b| c.pong_received < b.pong_received) {
                    best = Some(c);
                }
            }
            if let Some(b) = best {
                ping.push(b.name);
            }
        }
        let mut changed = false;
        for n in self.nodes.values_mut() {
            if n.name == self.myself || n.flags & (FLAG_NOADDR | FLAG_HANDSHAKE) != 0 {
                continue;
            }
            // Nothing in flight and no pong for half the timeout: ping.
            if n.linked && n.ping_sent == 0 && now.saturating_sub(n.pong_received) > timeout / 2 && !ping.contains(&n.name) {
                ping.push(n.name);
            }
            if n.ping_sent != 0 && now.saturating_sub(n.ping_sent) > timeout && n.flags & (FLAG_PFAIL | FLAG_FAIL) == 0 {
                tern_config::log_debug!("*** NODE {} possibly failing", name_str(&n.name));
                n.flags |= FLAG_PFAIL;
                changed = true;
            }
        }
        // Reports older than the validity go (a node is flagged `fail`
        // only as reports arrive, as in Redis).
        let validity = timeout * FAIL_REPORT_VALIDITY;
        for n in self.nodes.values_mut() {
            n.fail_reports.retain(|(_, t)| now.saturating_sub(*t) <= validity);
        }
        if changed {
            self.update_state();
        }
        // A manual failover: past its time it is given up; a replica may
        // start once it has the paused master's whole stream; a master
        // keeps its replica told where the stream is.
        if self.election.manual_end != 0 {
            if now > self.election.manual_end {
                tern_config::log_warning!("Manual failover timed out.");
                self.election = Election::default();
            } else if self.myself().is_master() {
                if let Some(r) = self.election.manual_replica {
                    if self.election.manual_paused && !ping.contains(&r) {
                        ping.push(r);
                    }
                }
            } else if !self.election.manual_can_start {
                if let Some(off) = self.election.manual_offset {
                    if self.myself().repl_offset >= off {
                        tern_config::log_notice!("All master replication stream processed, manual failover can start.");
                        self.election.manual_can_start = true;
                    }
                }
            }
        }
        self.handle_failover(now);
        ping
    }

    /// Notes a ping sent to `name` (none in flight before).
    pub fn pinged(&mut self, name: &Name, now: u64) {
        if let Some(n) = self.nodes.get_mut(name) {
            if n.ping_sent == 0 {
                n.ping_sent = now;
            }
        }
    }

    /// An outgoing link to `name` came up or went down.
    pub fn linked(&mut self, name: &Name, up: bool) {
        if let Some(n) = self.nodes.get_mut(name) {
            n.linked = up;
        }
    }

    /// CLUSTER NODES: one line per node (`for_file`: nodes.conf's form,
    /// with the aux fields Redis persists).
    pub fn describe(&self, for_file: bool) -> String {
        let mut names: Vec<&Name> = self.nodes.keys().collect();
        names.sort();
        // Myself first, as Redis's dict order does not promise any order
        // but clients read it whole.
        names.sort_by_key(|n| **n != self.myself);
        let mut out = String::new();
        for name in names {
            let n = &self.nodes[name];
            out.push_str(name_str(&n.name));
            out.push(' ');
            out.push_str(&n.addr());
            if for_file {
                if n.hostname.is_empty() {
                    out.push(',');
                }
                let _ = write!(out, ",shard-id={}", name_str(&n.shard_id));
            }
            out.push(' ');
            out.push_str(&flags_str(n.flags));
            out.push(' ');
            match &n.slaveof {
                Some(m) => out.push_str(name_str(m)),
                None => out.push('-'),
            }
            let epoch = match (&n.slaveof, n.flags & FLAG_SLAVE != 0) {
                (Some(m), true) => self.nodes.get(m).map_or(n.config_epoch, |m| m.config_epoch),
                _ => n.config_epoch,
            };
            let linked = n.linked || n.flags & FLAG_MYSELF != 0;
            let _ = write!(out, " {} {} {} {}", n.ping_sent, n.pong_received, epoch, if linked { "connected" } else { "disconnected" });
            for (a, b) in self.ranges(name) {
                if a == b {
                    let _ = write!(out, " {a}");
                } else {
                    let _ = write!(out, " {a}-{b}");
                }
            }
            if n.flags & FLAG_MYSELF != 0 {
                let mut moving: Vec<(u16, String)> = self.migrating.iter().map(|(s, to)| (*s, format!(" [{s}->-{}]", name_str(to)))).collect();
                moving.extend(self.importing.iter().filter(|(s, _)| !self.migrating.contains_key(s)).map(|(s, from)| (*s, format!(" [{s}-<-{}]", name_str(from)))));
                moving.sort();
                for (_, m) in moving {
                    out.push_str(&m);
                }
            }
            out.push('\n');
        }
        out
    }

    /// nodes.conf's text.
    pub fn config_text(&self) -> String {
        let mut s = self.describe(true);
        let _ = writeln!(s, "vars currentEpoch {} lastVoteEpoch {}", self.current_epoch, self.last_vote_epoch);
        s
    }

    /// Reads nodes.conf's text (as written by [`State::config_text`] or by
    /// Redis). Errors say which line is wrong.
    pub fn from_config(me: Me, text: &str, now: u64) -> Result<State, String> {
        let mut st = State::fresh(me, now);
        st.nodes.clear();
        let mut myself = None;
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split(' ').filter(|s| !s.is_empty()).collect();
            if f[0] == "vars" {
                let mut i = 1;
                while i + 1 < f.len() {
                    let v: u64 = f[i + 1].parse().map_err(|_| format!("Unrecoverable error: corrupted cluster config file \"{line}\"."))?;
                    match f[i] {
                        "currentEpoch" => st.current_epoch = v,
                        "lastVoteEpoch" => st.last_vote_epoch = v,
                        _ => {}
                    }
                    i += 2;
                }
                continue;
            }
            let bad = || format!("Unrecoverable error: corrupted cluster config file \"{line}\".");
            if f.len() < 8 {
                return Err(bad());
            }
            let name = to_name(f[0].as_bytes()).ok_or_else(bad)?;
            let mut n = Node::new(name, 0, now);
            // ip:port@cport[,hostname[,aux=value...]]
            let mut parts = f[1].split(',');
            let addr = parts.next().unwrap_or("");
            if let Some(h) = parts.next() {
                n.hostname = h.to_string();
            }
            for aux in parts {
                if let Some(v) = aux.strip_prefix("shard-id=") {
                    n.shard_id = to_name(v.as_bytes()).ok_or_else(bad)?;
                }
            }
            let (ipport, cport) = addr.rsplit_once('@').ok_or_else(bad)?;
            let (ip, port) = ipport.rsplit_once(':').ok_or_else(bad)?;
            n.ip = ip.to_string();
            n.port = port.parse().map_err(|_| bad())?;
            n.cport = cport.parse().map_err(|_| bad())?;
            for fl in f[2].split(',') {
                n.flags |= match fl {
                    "myself" => FLAG_MYSELF,
                    "master" => FLAG_MASTER,
                    "slave" => FLAG_SLAVE,
                    "fail?" => FLAG_PFAIL,
                    "fail" => FLAG_FAIL,
                    "handshake" => FLAG_HANDSHAKE,
                    "noaddr" => FLAG_NOADDR,
                    "nofailover" => FLAG_NOFAILOVER,
                    "noflags" => 0,
                    _ => return Err(bad()),
                };
            }
            if n.flags & FLAG_MYSELF != 0 {
                if myself.is_some() {
                    return Err(bad());
                }
                myself = Some(name);
                n.port = st.me.port;
                n.cport = st.me.cport;
                n.hostname = st.me.hostname.clone();
                n.human_nodename = st.me.human_nodename.clone();
                if let Some(ip) = &st.me.announce_ip {
                    n.ip = ip.clone();
                }
            }
            if f[3] != "-" {
                n.slaveof = Some(to_name(f[3].as_bytes()).ok_or_else(bad)?);
            }
            n.config_epoch = f[6].parse().map_err(|_| bad())?;
            for s in &f[8..] {
                if let Some(inner) = s.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                    let (slot, dir, other) = match (inner.split_once("->-"), inner.split_once("-<-")) {
                        (Some((a, b)), _) => (a, true, b),
                        (_, Some((a, b))) => (a, false, b),
                        _ => return Err(bad()),
                    };
                    let slot: u16 = slot.parse().ok().filter(|s| (*s as usize) < SLOTS).ok_or_else(bad)?;
                    let other = to_name(other.as_bytes()).ok_or_else(bad)?;
                    if dir {
                        st.migrating.insert(slot, other);
                    } else {
                        st.importing.insert(slot, other);
                    }
                    continue;
                }
                let (a, b) = match s.split_once('-') {
                    Some((a, b)) => (a.parse::<usize>().map_err(|_| bad())?, b.parse::<usize>().map_err(|_| bad())?),
                    None => {
                        let a = s.parse::<usize>().map_err(|_| bad())?;
                        (a, a)
                    }
                };
                if a > b || b >= SLOTS {
                    return Err(bad());
                }
                for slot in a..=b {
                    st.slots[slot] = Some(name);
                }
            }
            // Times and links start afresh.
            n.flags &= !(FLAG_HANDSHAKE | FLAG_MEET);
            st.nodes.insert(name, n);
        }
        let myself = myself.ok_or_else(|| "Unrecoverable error: the cluster config file has no line for this node (myself).".to_string())?;
        st.myself = myself;
        st.dirty = false;
        st.update_state();
        Ok(st)
    }
}

/// A node's flags as CLUSTER NODES writes them.
pub fn flags_str(f: u16) -> String {
    let names = [
        (FLAG_MYSELF, "myself"),
        (FLAG_MASTER, "master"),
        (FLAG_SLAVE, "slave"),
        (FLAG_PFAIL, "fail?"),
        (FLAG_FAIL, "fail"),
        (FLAG_HANDSHAKE, "handshake"),
        (FLAG_NOADDR, "noaddr"),
        (FLAG_NOFAILOVER, "nofailover"),
    ];
    let v: Vec<&str> = names.iter().filter(|(b, _)| f & b != 0).map(|(_, n)| *n).collect();
    if v.is_empty() {
        "noflags".to_string()
    } else {
        v.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me(port: u16) -> Me {
        Me { port, cport: port + 10000, node_timeout_ms: 15000, require_full_coverage: true, ..Me::default() }
    }

    fn via<'a>(inbound: bool, node: Option<Name>) -> Via<'a> {
        Via { inbound, node, peer_ip: "127.0.0.1", local_ip: "127.0.0.1" }
    }

    /// Two nodes meet as the bus would carry their messages: `a` MEETs
    /// `b` on its outgoing link, `b` answers on that link, then `b`
    /// pings `a` on its own.
    fn meet_pair(a: &mut State, b: &mut State) {
        a.meet("127.0.0.1", b.me.port, b.me.cport, 1);
        let h = a.nodes.values().find(|n| n.in_handshake()).map(|n| n.name).unwrap();
        let m = a.ping(msg::TYPE_MEET, Some(&h));
        assert_eq!(b.process(&m, &via(true, None), 2), Outcome::Pong);
        let pong = b.ping(msg::TYPE_PONG, None);
        assert_eq!(a.process(&pong, &via(false, Some(h)), 3), Outcome::Nothing);
        assert!(a.nodes.contains_key(&b.myself) && !a.nodes.contains_key(&h), "the handshake node took b's name");
        // b met a as a handshake node: its ping on its own link names it.
        let hb = b.nodes.values().find(|n| n.in_handshake()).map(|n| n.name).unwrap();
        let ping = b.ping(msg::TYPE_PING, Some(&hb));
        assert_eq!(a.process(&ping, &via(true, None), 4), Outcome::Pong);
        let pong = a.ping(msg::TYPE_PONG, None);
        b.process(&pong, &via(false, Some(hb)), 5);
        assert!(b.nodes.contains_key(&a.myself));
    }

    #[test]
    fn two_nodes_meet_and_learn_each_others_slots() {
        let (mut a, mut b) = (State::fresh(me(7000), 0), State::fresh(me(7001), 0));
        for s in 0..8192 {
            a.add_slot(s);
        }
        for s in 8192..SLOTS {
            b.add_slot(s);
        }
        a.set_config_epoch(1);
        b.set_config_epoch(2);
        meet_pair(&mut a, &mut b);
        // One more exchange each way carries the slots of a node known.
        let m = b.ping(msg::TYPE_PING, Some(&a.myself));
        a.process(&m, &via(true, None), 6);
        let m = a.ping(msg::TYPE_PING, Some(&b.myself));
        b.process(&m, &via(true, None), 7);
        for st in [&a, &b] {
            assert!(st.ok, "every slot is served");
            assert_eq!(st.slot_owner(0).unwrap().name, a.myself);
            assert_eq!(st.slot_owner(SLOTS - 1).unwrap().name, b.myself);
            assert_eq!(st.current_epoch, 2);
        }
        assert_eq!(a.myself().ip, "127.0.0.1", "learned from the MEET's socket");
    }

    #[test]
    fn a_newer_config_epoch_takes_a_slot_and_an_older_one_does_not() {
        let mut a = State::fresh(me(7000), 0);
        let other = random_name();
        let mut n = Node::new(other, FLAG_MASTER, 0);
        n.config_epoch = 5;
        a.nodes.insert(other, n);
        a.add_slot(10);
        a.set_config_epoch(3);
        let mut claim = Box::new([0u8; 2048]);
        msg::set_slot_bit(&mut claim, 10);
        msg::set_slot_bit(&mut claim, 11);
        a.update_slots_with(other, 2, &claim);
        assert_eq!(a.slots[10], Some(a.myself), "epoch 2 < 3: kept");
        assert_eq!(a.slots[11], Some(other), "unassigned: taken");
        a.update_slots_with(other, 5, &claim);
        assert_eq!(a.slots[10], Some(other), "epoch 5 > 3: taken");
    }

    #[test]
    fn of_two_masters_with_one_epoch_the_lower_name_moves_on() {
        let mut a = State::fresh(me(7000), 0);
        a.set_config_epoch(4);
        let mut higher = a.myself;
        higher[0] = b'z';
        let mut n = Node::new(higher, FLAG_MASTER, 0);
        n.config_epoch = 4;
        a.nodes.insert(higher, n);
        a.epoch_collision(higher);
        assert_eq!((a.current_epoch, a.myself().config_epoch), (5, 5));
        let mut lower = a.myself;
        lower[0] = b'0';
        a.epoch_collision(lower);
        assert_eq!(a.myself().config_epoch, 5, "the other one moves");
    }

    #[test]
    fn nodes_conf_reads_back_what_it_wrote() {
        let (mut a, mut b) = (State::fresh(me(7000), 0), State::fresh(me(7001), 0));
        for s in (0..100).chain(200..300) {
            a.add_slot(s);
        }
        a.set_config_epoch(3);
        meet_pair(&mut a, &mut b);
        a.last_vote_epoch = 2;
        let text = a.config_text();
        assert!(text.contains(" myself,master - 0 0 3 connected 0-99 200-299\n"), "{text}");
        assert!(text.ends_with("vars currentEpoch 3 lastVoteEpoch 2\n"), "{text}");
        let back = State::from_config(me(7000), &text, 9).unwrap();
        assert_eq!(back.myself, a.myself);
        assert_eq!((back.current_epoch, back.last_vote_epoch), (3, 2));
        assert_eq!(back.slots, a.slots);
        assert_eq!(back.nodes.len(), 2);
        assert_eq!(back.nodes[&b.myself].shard_id, a.nodes[&b.myself].shard_id);
        assert_eq!(back.myself().shard_id, a.myself().shard_id);
    }

    #[test]
    fn a_damaged_nodes_conf_is_refused_not_half_read() {
        let a = State::fresh(me(7000), 0);
        let text = a.config_text();
        let line = text.lines().next().unwrap();
        for bad in [
            &line[..line.len() / 2],
            "vars currentEpoch x",
            "zz 127.0.0.1:1@2 myself,master - 0 0 0 connected",
            &format!("{} 127.0.0.1:1@2 myself,master - 0 0 0 connected 5-3", name_str(&a.myself)),
            &format!("{} 127.0.0.1:1@2 myself,master - 0 0 0 connected 16384", name_str(&a.myself)),
            &format!("{} 127.0.0.1:1@2 bogus - 0 0 0 connected", name_str(&a.myself)),
            &format!("{} 127.0.0.1:1@2 master - 0 0 0 connected", name_str(&a.myself)),
        ] {
            assert!(State::from_config(me(7000), bad, 0).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_handshake_that_finds_a_known_node_closes_its_link() {
        let (mut a, mut b) = (State::fresh(me(7000), 0), State::fresh(me(7001), 0));
        meet_pair(&mut a, &mut b);
        // A second handshake to b's address (a MEET b sent, say).
        a.meet("127.0.0.1", 7001, 17001, 10);
        let h = a.nodes.values().find(|n| n.in_handshake()).map(|n| n.name).unwrap();
        let pong = b.ping(msg::TYPE_PONG, None);
        assert_eq!(a.process(&pong, &via(false, Some(h)), 11), Outcome::Close);
        assert!(!a.nodes.contains_key(&h));
        assert_eq!(a.nodes.len(), 2);
    }

    #[test]
    fn a_handshake_not_answered_in_time_is_dropped_and_silence_flags_pfail() {
        let (mut a, mut b) = (State::fresh(me(7000), 0), State::fresh(me(7001), 0));
        meet_pair(&mut a, &mut b);
        a.meet("127.0.0.1", 9999, 19999, 100);
        a.pinged(&b.myself, 200);
        a.cron(200 + 15001, 1);
        assert!(!a.nodes.values().any(|n| n.in_handshake()));
        assert!(a.nodes[&b.myself].flags & FLAG_PFAIL != 0);
        assert!(a.describe(false).contains(" master,fail? "));
    }
}
