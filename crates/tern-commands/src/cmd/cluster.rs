//! Cluster mode's commands: CLUSTER (what this node knows of the cluster,
//! and the changes an operator or `redis-cli --cluster` makes to it),
//! ASKING, READONLY and READWRITE; and [`redirect`], which sends a
//! command whose keys this node does not serve to the node that does.
//! The cluster itself (nodes, slots, the bus) is `tern_cluster`.

use std::fmt::Write as _;

use tern_cluster::state::{self, Node, State, FLAG_FAIL, FLAG_PFAIL, FLAG_SLAVE, SLOTS};
use tern_cluster::Cluster;
use tern_resp::{parse_i64, Args};

use super::table::{flags::*, Cmd, CommandSpec};
use super::Ctx;
use crate::client::Client;
use crate::errors;
use crate::server::Server;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("cluster", -2, 0, &[], super::unknown_subcommand)
        .doc("cluster", "A container for Cluster commands.", "3.0.0", "Depends on subcommand.")
        .acl(&["slow"])
        .subs(SUBCOMMANDS),
    CommandSpec::new("asking", 1, FAST, &[], asking)
        .doc("cluster", "Signals that a cluster client is following an -ASK redirect.", "3.0.0", "O(1)")
        .acl(&["fast", "connection"]),
    CommandSpec::new("readonly", 1, LOADING | STALE | FAST, &[], readonly)
        .doc("cluster", "Enables read-only queries for a connection to a Redis Cluster replica node.", "3.0.0", "O(1)")
        .acl(&["fast", "connection"]),
    CommandSpec::new("readwrite", 1, LOADING | STALE | FAST, &[], readwrite)
        .doc("cluster", "Enables read-write queries for a connection to a Redis Cluster replica node.", "3.0.0", "O(1)")
        .acl(&["fast", "connection"]),
];

const ADMIN_SUB: u32 = ADMIN | STALE | NO_ASYNC_LOADING;
const ADMIN_ACL: &[&str] = &["admin", "slow", "dangerous"];

static SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("addslots", -3, ADMIN_SUB, &[], addslots)
        .doc("cluster", "Assigns new hash slots to a node.", "3.0.0", "O(N) where N is the total number of hash slot arguments")
        .acl(ADMIN_ACL),
    CommandSpec::new("addslotsrange", -4, ADMIN_SUB, &[], addslotsrange)
        .doc("cluster", "Assigns new hash slot ranges to a node.", "7.0.0", "O(N) where N is the total number of the slots between the start slot and end slot arguments.")
        .acl(ADMIN_ACL),
    CommandSpec::new("bumpepoch", 2, ADMIN_SUB, &[], bumpepoch)
        .doc("cluster", "Advances the cluster config epoch.", "3.0.0", "O(1)")
        .acl(ADMIN_ACL)
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("count-failure-reports", 3, ADMIN | STALE, &[], count_failure_reports)
        .doc("cluster", "Returns the number of active failure reports active for a node.", "3.0.0", "O(N) where N is the number of failure reports")
        .acl(ADMIN_ACL)
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("countkeysinslot", 3, STALE, &[], countkeysinslot)
        .doc("cluster", "Returns the number of keys in a hash slot.", "3.0.0", "O(1)")
        .acl(&["slow"]),
    CommandSpec::new("delslots", -3, ADMIN_SUB, &[], delslots)
        .doc("cluster", "Sets hash slots as unbound for a node.", "3.0.0", "O(N) where N is the total number of hash slot arguments")
        .acl(ADMIN_ACL),
    CommandSpec::new("delslotsrange", -4, ADMIN_SUB, &[], delslotsrange)
        .doc("cluster", "Sets hash slot ranges as unbound for a node.", "7.0.0", "O(N) where N is the total number of the slots between the start slot and end slot arguments.")
        .acl(ADMIN_ACL),
    CommandSpec::new("failover", -2, ADMIN_SUB, &[], failover)
        .doc("cluster", "Forces a replica to perform a manual failover of its master.", "3.0.0", "O(1)")
        .acl(ADMIN_ACL),
    CommandSpec::new("flushslots", 2, ADMIN_SUB, &[], flushslots)
        .doc("cluster", "Deletes all slots information from a node.", "3.0.0", "O(1)")
        .acl(ADMIN_ACL),
    CommandSpec::new("forget", 3, ADMIN_SUB, &[], forget)
        .doc("cluster", "Removes a node from the nodes table.", "3.0.0", "O(1)")
        .acl(ADMIN_ACL),
    CommandSpec::new("getkeysinslot", 4, STALE, &[], getkeysinslot)
        .doc("cluster", "Returns the key names in a hash slot.", "3.0.0", "O(N) where N is the number of requested keys")
        .acl(&["slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("help", 2, LOADING | STALE, &[], help)
        .doc("cluster", "Returns helpful text about the different subcommands.", "5.0.0", "O(1)")
        .acl(&["slow"]),
    CommandSpec::new("info", 2, LOADING | STALE, &[], info)
        .doc("cluster", "Returns information about the state of a node.", "3.0.0", "O(1)")
        .acl(&["slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("keyslot", 3, STALE, &[], keyslot)
        .doc("cluster", "Returns the hash slot for a key.", "3.0.0", "O(N) where N is the number of bytes in the key")
        .acl(&["slow"]),
    CommandSpec::new("meet", -4, ADMIN_SUB, &[], meet)
        .doc("cluster", "Forces a node to handshake with another node.", "3.0.0", "O(1)")
        .history(&[("4.0.0", "Added the optional `cluster_bus_port` argument.")])
        .acl(ADMIN_ACL),
    CommandSpec::new("myid", 2, LOADING | STALE, &[], myid)
        .doc("cluster", "Returns the ID of a node.", "3.0.0", "O(1)")
        .acl(&["slow"]),
    CommandSpec::new("myshardid", 2, LOADING | STALE, &[], myshardid)
        .doc("cluster", "Returns the shard ID of a node.", "7.2.0", "O(1)")
        .acl(&["slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("nodes", 2, LOADING | STALE, &[], nodes)
        .doc("cluster", "Returns the cluster configuration for a node.", "3.0.0", "O(N) where N is the total number of Cluster nodes")
        .acl(&["slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("replicas", 3, ADMIN | STALE, &[], replicas)
        .doc("cluster", "Lists the replica nodes of a master node.", "5.0.0", "O(N) where N is the number of replicas.")
        .acl(ADMIN_ACL)
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("replicate", 3, ADMIN_SUB, &[], replicate)
        .doc("cluster", "Configure a node as replica of a master node.", "3.0.0", "O(1)")
        .acl(ADMIN_ACL),
    CommandSpec::new("saveconfig", 2, ADMIN_SUB, &[], saveconfig)
        .doc("cluster", "Forces a node to save the cluster configuration to disk.", "3.0.0", "O(1)")
        .acl(ADMIN_ACL),
    CommandSpec::new("setslot", -4, ADMIN_SUB, &[], setslot)
        .doc("cluster", "Binds a hash slot to a node.", "3.0.0", "O(1)")
        .acl(ADMIN_ACL),
    CommandSpec::new("set-config-epoch", 3, ADMIN_SUB, &[], set_config_epoch)
        .doc("cluster", "Sets the configuration epoch for a new node.", "3.0.0", "O(1)")
        .acl(ADMIN_ACL),
    CommandSpec::new("shards", 2, LOADING | STALE, &[], shards)
        .doc("cluster", "Returns the mapping of cluster slots to shards.", "7.0.0", "O(N) where N is the total number of cluster nodes")
        .acl(&["slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("slaves", 3, ADMIN | STALE, &[], replicas)
        .doc("cluster", "Lists the replica nodes of a master node.", "3.0.0", "O(N) where N is the number of replicas.")
        .deprecated("5.0.0", "`CLUSTER REPLICAS`")
        .acl(ADMIN_ACL)
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("slots", 2, LOADING | STALE, &[], slots)
        .doc("cluster", "Returns the mapping of cluster slots to nodes.", "3.0.0", "O(N) where N is the total number of Cluster nodes")
        .history(&[("4.0.0", "Added node IDs."), ("7.0.0", "Added additional networking metadata field.")])
        .acl(&["slow"])
        .tips(&["nondeterministic_output"]),
];

const HELP: &[&str] = &[
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "INFO",
    "    Return information about the cluster.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "MYID",
    "    Return the node id.",
    "MYSHARDID",
    "    Return the node's shard id.",
    "NODES",
    "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port@bus-port[,hostname]> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
    "REPLICAS <node-id>",
    "    Return <node-id> replicas.",
    "SLOTS",
    "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "ADDSLOTS <slot> [<slot> ...]",
    "    Assign slots to current node.",
    "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Assign slots which are between <start-slot> and <end-slot> to current node.",
    "BUMPEPOCH",
    "    Advance the cluster config epoch.",
    "DELSLOTS <slot> [<slot> ...]",
    "    Delete slots information from current node.",
    "COUNT-FAILURE-REPORTS <node-id>",
    "    Return number of failure reports for <node-id>.",
    "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
    "FAILOVER [FORCE|TAKEOVER]",
    "    Promote current replica node to being a master.",
    "FLUSHSLOTS",
    "    Delete current node own slots information.",
    "FORGET <node-id>",
    "    Remove a node from the cluster.",
    "MEET <ip> <port> [<bus-port>]",
    "    Connect nodes into a working cluster.",
    "REPLICATE <node-id>",
    "    Configure current node as replica to <node-id>.",
    "SAVECONFIG",
    "    Force saving cluster configuration on disk.",
    "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
    "    Set slot state.",
    "SET-CONFIG-EPOCH <epoch>",
    "    Set config epoch of current node.",
];

/// The cluster, or the reply that cluster mode is off.
fn cluster<'s>(ctx: &mut Ctx<'_, 's>) -> Option<&'s Cluster> {
    let srv: &'s Server = ctx.srv;
    match srv.cluster.get() {
        Some(c) => Some(c),
        None => {
            ctx.reply.error(errors::CLUSTER_DISABLED);
            None
        }
    }
}

fn help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    if cluster(ctx).is_some() {
        super::help_lines(ctx, HELP);
    }
}

fn myid(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    let id = cl.state.lock().myself;
    ctx.reply.bulk(&id);
}

fn myshardid(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    let id = cl.state.lock().myself().shard_id;
    ctx.reply.bulk(&id);
}

fn keyslot(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if cluster(ctx).is_some() {
        ctx.reply.int(tern_store::slot::key_slot(args.get(2)) as i64);
    }
}

fn info(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    let text = info_text(&cl.state.lock());
    ctx.reply.verbatim(text.as_bytes());
}

/// CLUSTER INFO's text (also INFO's cluster section's source of truth).
fn info_text(st: &State) -> String {
    let (mut assigned, mut ok, mut pfail, mut fail) = (0, 0, 0, 0);
    for s in 0..SLOTS {
        let Some(n) = st.slot_owner(s) else { continue };
        assigned += 1;
        if n.flags & FLAG_FAIL != 0 {
            fail += 1;
        } else if n.flags & FLAG_PFAIL != 0 {
            pfail += 1;
        } else {
            ok += 1;
        }
    }
    let me = st.myself();
    let my_epoch = match (&me.slaveof, me.flags & FLAG_SLAVE != 0) {
        (Some(m), true) => st.nodes.get(m).map_or(me.config_epoch, |m| m.config_epoch),
        _ => me.config_epoch,
    };
    let size = st.size();
    let mut s = String::new();
    let _ = write!(
        s,
        "cluster_state:{}\r\ncluster_slots_assigned:{assigned}\r\ncluster_slots_ok:{ok}\r\ncluster_slots_pfail:{pfail}\r\ncluster_slots_fail:{fail}\r\ncluster_known_nodes:{}\r\ncluster_size:{size}\r\ncluster_current_epoch:{}\r\ncluster_my_epoch:{my_epoch}\r\n",
        if st.ok { "ok" } else { "fail" },
        st.nodes.len(),
        st.current_epoch,
    );
    for (dir, counts) in [("sent", &st.sent), ("received", &st.received)] {
        let mut total = 0;
        for (i, n) in counts.iter().enumerate() {
            if *n > 0 {
                total += n;
                let _ = write!(s, "cluster_stats_messages_{}_{dir}:{n}\r\n", tern_cluster::msg::kind_name(i as u16));
            }
        }
        let _ = write!(s, "cluster_stats_messages_{dir}:{total}\r\n");
    }
    s.push_str("total_cluster_links_buffer_limit_exceeded:0\r\n");
    s
}

fn nodes(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    let text = cl.state.lock().describe(false);
    ctx.reply.verbatim(text.as_bytes());
}

fn replicas(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    let st = cl.state.lock();
    let Some(n) = st.lookup(args.get(2)) else {
        drop(st);
        ctx.reply.error(errors::cluster_unknown_node(args.get(2)));
        return;
    };
    if !n.is_master() {
        drop(st);
        ctx.reply.error(errors::CLUSTER_NOT_MASTER);
        return;
    }
    let name = n.name;
    let lines: Vec<String> =
        st.describe(false).lines().filter(|l| l.split(' ').nth(3) == Some(state::name_str(&name))).map(str::to_string).collect();
    drop(st);
    ctx.reply.array(lines.len());
    for l in lines {
        ctx.reply.bulk(l.as_bytes());
    }
}

/// A node as CLUSTER SLOTS lists it: ip, port, id, and a map of the
/// hostname when it has one.
fn slot_node(ctx: &mut Ctx<'_, '_>, n: &Node) {
    ctx.reply.array(4);
    ctx.reply.bulk(n.ip.as_bytes());
    ctx.reply.int(n.port as i64);
    ctx.reply.bulk(&n.name);
    if n.hostname.is_empty() {
        ctx.reply.map(0);
    } else {
        ctx.reply.map(1);
        ctx.reply.bulk(b"hostname");
        ctx.reply.bulk(n.hostname.as_bytes());
    }
}

/// The replicas CLUSTER SLOTS lists beside their master: those not failed.
fn available_replicas<'s>(st: &'s State, master: &tern_cluster::msg::Name) -> Vec<&'s Node> {
    let mut v: Vec<&Node> = st.nodes.values().filter(|n| n.slaveof.as_ref() == Some(master) && n.flags & FLAG_SLAVE != 0 && n.flags & FLAG_FAIL == 0).collect();
    v.sort_by_key(|n| n.name);
    v
}

fn slots(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    let st = cl.state.lock();
    let mut runs: Vec<(usize, usize, tern_cluster::msg::Name)> = Vec::new();
    for (i, s) in st.slots.iter().enumerate() {
        let Some(n) = s else { continue };
        match runs.last_mut() {
            Some(r) if r.1 + 1 == i && r.2 == *n => r.1 = i,
            _ => runs.push((i, i, *n)),
        }
    }
    ctx.reply.array(runs.len());
    for (a, b, name) in runs {
        let reps = available_replicas(&st, &name);
        ctx.reply.array(3 + reps.len());
        ctx.reply.int(a as i64);
        ctx.reply.int(b as i64);
        match st.nodes.get(&name) {
            Some(m) => slot_node(ctx, m),
            None => ctx.reply.null(),
        }
        for r in reps {
            slot_node(ctx, r);
        }
    }
}

fn shards(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    let st = cl.state.lock();
    let my_offset = ctx.srv.repl.info().offset as i64;
    // Nodes by shard id, masters first.
    let mut by_shard: Vec<(tern_cluster::msg::Name, Vec<&Node>)> = Vec::new();
    let mut all: Vec<&Node> = st.nodes.values().filter(|n| !n.in_handshake()).collect();
    all.sort_by_key(|n| (n.flags & FLAG_SLAVE != 0, n.name));
    for n in all {
        match by_shard.iter_mut().find(|(s, _)| *s == n.shard_id) {
            Some((_, v)) => v.push(n),
            None => by_shard.push((n.shard_id, vec![n])),
        }
    }
    ctx.reply.array(by_shard.len());
    for (_, nodes) in by_shard {
        ctx.reply.map(2);
        ctx.reply.bulk(b"slots");
        let master = nodes.iter().find(|n| n.flags & FLAG_FAIL == 0).map(|n| match (&n.slaveof, n.flags & FLAG_SLAVE != 0) {
            (Some(m), true) => *m,
            _ => n.name,
        });
        let ranges = master.map(|m| st.ranges(&m)).unwrap_or_default();
        ctx.reply.array(ranges.len() * 2);
        for (a, b) in ranges {
            ctx.reply.int(a as i64);
            ctx.reply.int(b as i64);
        }
        ctx.reply.bulk(b"nodes");
        ctx.reply.array(nodes.len());
        for n in nodes {
            let replica = n.flags & FLAG_SLAVE != 0;
            let offset = if n.name == st.myself { my_offset } else { n.repl_offset as i64 };
            let hostname = !n.hostname.is_empty();
            ctx.reply.map(if hostname { 8 } else { 7 });
            ctx.reply.bulk(b"id");
            ctx.reply.bulk(&n.name);
            ctx.reply.bulk(b"port");
            ctx.reply.int(n.port as i64);
            ctx.reply.bulk(b"ip");
            ctx.reply.bulk(n.ip.as_bytes());
            ctx.reply.bulk(b"endpoint");
            ctx.reply.bulk(n.ip.as_bytes());
            if hostname {
                ctx.reply.bulk(b"hostname");
                ctx.reply.bulk(n.hostname.as_bytes());
            }
            ctx.reply.bulk(b"role");
            ctx.reply.bulk(if replica { b"replica" as &[u8] } else { b"master" });
            ctx.reply.bulk(b"replication-offset");
            ctx.reply.int(offset);
            ctx.reply.bulk(b"health");
            let health: &[u8] = if n.flags & FLAG_FAIL != 0 {
                b"fail"
            } else if replica && offset == 0 {
                b"loading"
            } else {
                b"online"
            };
            ctx.reply.bulk(health);
        }
    }
}

/// Redis's getSlotOrReply.
fn slot_arg(ctx: &mut Ctx<'_, '_>, a: &[u8]) -> Option<usize> {
    match parse_i64(a) {
        Some(s) if (0..SLOTS as i64).contains(&s) => Some(s as usize),
        _ => {
            ctx.reply.error(errors::CLUSTER_BAD_SLOT);
            None
        }
    }
}

/// ADDSLOTS, DELSLOTS and their RANGE forms: every argument checked
/// before any slot changes.
fn change_slots(ctx: &mut Ctx<'_, '_>, args: Args<'_>, del: bool, ranges: bool) {
    let Some(cl) = cluster(ctx) else { return };
    if ranges && args.len() % 2 == 1 {
        ctx.reply.error(errors::arity(&ctx.cmd.fullname));
        return;
    }
    let mut wanted = vec![0u8; SLOTS];
    // ADDSLOTS reads every slot before checking any; the RANGE forms check
    // each range as they read it (Redis's order).
    let mut list: Vec<(usize, usize)> = Vec::new();
    if !ranges {
        for j in 2..args.len() {
            let Some(a) = slot_arg(ctx, args.get(j)) else { return };
            list.push((a, a));
        }
    }
    let mut j = 2;
    let mut st = cl.state.lock();
    loop {
        let (a, b) = if ranges {
            if j >= args.len() {
                break;
            }
            let (x, y) = (args.get(j), args.get(j + 1));
            j += 2;
            let Some(a) = parse_i64(x).filter(|s| (0..SLOTS as i64).contains(s)) else {
                drop(st);
                ctx.reply.error(errors::CLUSTER_BAD_SLOT);
                return;
            };
            let Some(b) = parse_i64(y).filter(|s| (0..SLOTS as i64).contains(s)) else {
                drop(st);
                ctx.reply.error(errors::CLUSTER_BAD_SLOT);
                return;
            };
            if a > b {
                drop(st);
                ctx.reply.error(errors::cluster_slot_range(a as usize, b as usize));
                return;
            }
            (a as usize, b as usize)
        } else {
            match list.get(j - 2) {
                Some(&r) => {
                    j += 1;
                    r
                }
                None => break,
            }
        };
        for s in a..=b {
            let err = if del && st.slots[s].is_none() {
                Some(errors::cluster_slot_unassigned(s))
            } else if !del && st.slots[s].is_some() {
                Some(errors::cluster_slot_busy(s))
            } else if wanted[s] == 1 {
                Some(errors::cluster_slot_twice(s))
            } else {
                None
            };
            if let Some(e) = err {
                drop(st);
                ctx.reply.error(e);
                return;
            }
            wanted[s] = 1;
        }
    }
    for (s, w) in wanted.iter().enumerate() {
        if *w == 1 {
            if del {
                st.del_slot(s);
            } else {
                st.add_slot(s);
            }
        }
    }
    st.update_state();
    drop(st);
    cl.save_if_dirty();
    ctx.reply.ok();
}

fn addslots(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    change_slots(ctx, args, false, false);
}

fn delslots(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    change_slots(ctx, args, true, false);
}

fn addslotsrange(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    change_slots(ctx, args, false, true);
}

fn delslotsrange(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    change_slots(ctx, args, true, true);
}

fn flushslots(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    if keys_in_db0(ctx) != 0 {
        ctx.reply.error(errors::CLUSTER_FLUSHSLOTS_NOT_EMPTY);
        return;
    }
    let mut st = cl.state.lock();
    let me = st.myself;
    for s in 0..SLOTS {
        if st.slots[s] == Some(me) {
            st.del_slot(s);
        }
    }
    st.update_state();
    drop(st);
    cl.save_if_dirty();
    ctx.reply.ok();
}

/// The keys in database 0 (the only one cluster mode uses).
fn keys_in_db0(ctx: &mut Ctx<'_, '_>) -> usize {
    let gids = ctx.ks.db_gids(0);
    let mut n = 0;
    for g in gids {
        n += ctx.ks.lock(g).len();
    }
    n
}

fn meet(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    if args.len() > 5 {
        ctx.reply.error(errors::subcommand_syntax(args.get(1), "cluster"));
        return;
    }
    let Some(port) = parse_i64(args.get(3)) else {
        ctx.reply.error(errors::cluster_bad_port("base", args.get(3)));
        return;
    };
    let cport = if args.len() == 5 {
        match parse_i64(args.get(4)) {
            Some(p) => p,
            None => {
                ctx.reply.error(errors::cluster_bad_port("bus", args.get(4)));
                return;
            }
        }
    } else {
        port + 10000
    };
    // An address Redis's inet_pton takes, written back normalised.
    let ip = std::str::from_utf8(args.get(2)).ok().and_then(|s| s.parse::<std::net::IpAddr>().ok());
    let (Some(ip), true) = (ip, (1..=65535).contains(&port) && (1..=65535).contains(&cport)) else {
        ctx.reply.error(errors::cluster_bad_address(args.get(2), args.get(3)));
        return;
    };
    cl.state.lock().meet(&ip.to_string(), port as u16, cport as u16, tern_cluster::now_ms());
    cl.save_if_dirty();
    ctx.reply.ok();
}

fn forget(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    let mut st = cl.state.lock();
    let Some(n) = st.lookup(args.get(2)) else {
        drop(st);
        ctx.reply.error(errors::cluster_unknown_node(args.get(2)));
        return;
    };
    let name = n.name;
    if name == st.myself {
        drop(st);
        ctx.reply.error(errors::CLUSTER_FORGET_MYSELF);
        return;
    }
    if st.myself().slaveof == Some(name) && st.myself().flags & FLAG_SLAVE != 0 {
        drop(st);
        ctx.reply.error(errors::CLUSTER_FORGET_MASTER);
        return;
    }
    st.forget(&name);
    drop(st);
    cl.save_if_dirty();
    ctx.reply.ok();
}

/// CLUSTER REPLICATE: this node becomes a replica of a master (an empty
/// master, or a replica already): its slots go, and replication starts.
fn replicate(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    let keys = keys_in_db0(ctx);
    let mut st = cl.state.lock();
    let Some(n) = st.lookup(args.get(2)) else {
        drop(st);
        ctx.reply.error(errors::cluster_unknown_node(args.get(2)));
        return;
    };
    let (name, ip, port, master) = (n.name, n.ip.clone(), n.port, n.is_master());
    let err = if name == st.myself {
        Some(errors::CLUSTER_REPLICATE_MYSELF)
    } else if !master {
        Some(errors::CLUSTER_REPLICATE_REPLICA)
    } else if st.myself().is_master() && (st.num_slots(&st.myself) != 0 || keys != 0) {
        Some(errors::CLUSTER_REPLICATE_NOT_EMPTY)
    } else {
        None
    };
    if let Some(e) = err {
        drop(st);
        ctx.reply.error(e);
        return;
    }
    st.set_master(name);
    drop(st);
    cl.save_if_dirty();
    ctx.srv.ks.set_replica(true);
    if ctx.srv.repl.set_master(&ip, port) {
        tern_config::log_notice!("Connecting to MASTER {}:{}", ip, port);
    }
    ctx.reply.ok();
}

fn count_failure_reports(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    let st = cl.state.lock();
    let n = st.lookup(args.get(2)).map(|n| n.fail_reports.len());
    drop(st);
    match n {
        Some(n) => ctx.reply.int(n as i64),
        None => ctx.reply.error(errors::cluster_unknown_node(args.get(2))),
    }
}

/// CLUSTER FAILOVER [FORCE|TAKEOVER] on a replica (Redis's checks and
/// replies); the election, or the takeover, is the bus's.
fn failover(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    if args.len() > 3 {
        ctx.reply.error(errors::subcommand_syntax(args.get(1), "cluster"));
        return;
    }
    let (mut force, mut takeover) = (false, false);
    if args.len() == 3 {
        if args.get(2).eq_ignore_ascii_case(b"force") {
            force = true;
        } else if args.get(2).eq_ignore_ascii_case(b"takeover") {
            (force, takeover) = (true, true);
        } else {
            ctx.reply.error(errors::SYNTAX);
            return;
        }
    }
    let mut st = cl.state.lock();
    let me = st.myself();
    let master = me.slaveof.and_then(|m| st.nodes.get(&m));
    let err = if me.is_master() {
        Some(errors::CLUSTER_FAILOVER_ON_MASTER)
    } else if master.is_none() {
        Some(errors::CLUSTER_FAILOVER_NO_MASTER)
    } else if !force && master.is_some_and(|m| m.flags & FLAG_FAIL != 0 || !m.linked) {
        Some(errors::CLUSTER_FAILOVER_MASTER_DOWN)
    } else {
        None
    };
    if let Some(e) = err {
        drop(st);
        ctx.reply.error(e);
        return;
    }
    tern_config::log_notice!("Manual failover user request accepted.");
    st.start_manual_failover(force, takeover, tern_cluster::now_ms());
    drop(st);
    cl.save_if_dirty();
    ctx.reply.ok();
}

/// CLUSTER SETSLOT <slot> IMPORTING|MIGRATING <node> | STABLE | NODE
/// <node>: the steps of moving a slot, as `redis-cli --cluster reshard`
/// takes them (Redis's checks and errors).
fn setslot(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    if !cl.state.lock().myself().is_master() {
        ctx.reply.error(errors::CLUSTER_SETSLOT_REPLICA);
        return;
    }
    let Some(slot) = slot_arg(ctx, args.get(2)) else { return };
    let slot16 = slot as u16;
    let action = args.get(3);
    let is = |a: &str| action.eq_ignore_ascii_case(a.as_bytes());
    let keys = if is("node") && args.len() == 5 { keys_in_slot(ctx, slot16, usize::MAX).len() } else { 0 };
    let allow_migration = ctx.srv.config.read().cluster_allow_replica_migration;
    let mut st = cl.state.lock();
    let me = st.myself;
    let target = |st: &State, unknown: fn(&[u8]) -> Vec<u8>| -> Result<tern_cluster::msg::Name, Vec<u8>> {
        match st.lookup(args.get(4)) {
            None => Err(unknown(args.get(4))),
            Some(n) if !n.is_master() => Err(errors::CLUSTER_TARGET_NOT_MASTER.as_bytes().to_vec()),
            Some(n) => Ok(n.name),
        }
    };
    let r: Result<(), Vec<u8>> = if is("migrating") && args.len() == 5 {
        if st.slots[slot] != Some(me) {
            Err(errors::cluster_not_owner(slot16).into_bytes())
        } else {
            target(&st, errors::cluster_unknown_node_about).map(|n| {
                st.migrating.insert(slot16, n);
            })
        }
    } else if is("importing") && args.len() == 5 {
        if st.slots[slot] == Some(me) {
            Err(errors::cluster_already_owner(slot16).into_bytes())
        } else {
            target(&st, errors::cluster_unknown_node_about).map(|n| {
                st.importing.insert(slot16, n);
            })
        }
    } else if is("stable") && args.len() == 4 {
        st.migrating.remove(&slot16);
        st.importing.remove(&slot16);
        Ok(())
    } else if is("node") && args.len() == 5 {
        match target(&st, errors::cluster_unknown_node) {
            Err(e) => Err(e),
            Ok(n) if st.slots[slot] == Some(me) && n != me && keys != 0 => Err(errors::cluster_slot_has_keys(slot16).into_bytes()),
            Ok(n) => {
                st.setslot_node(slot16, n, keys, allow_migration);
                Ok(())
            }
        }
    } else {
        Err(errors::CLUSTER_SETSLOT_SYNTAX.as_bytes().to_vec())
    };
    st.dirty = true;
    drop(st);
    match r {
        Ok(()) => {
            cl.save_if_dirty();
            ctx.reply.ok();
        }
        Err(e) => ctx.reply.error(e),
    }
}

fn set_config_epoch(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    let Some(epoch) = parse_i64(args.get(2)) else {
        ctx.reply.error(errors::NOT_INTEGER);
        return;
    };
    let mut st = cl.state.lock();
    let err = if epoch < 0 {
        Some(errors::cluster_bad_epoch(epoch))
    } else if st.nodes.len() > 1 {
        Some(errors::CLUSTER_EPOCH_OTHERS.to_string())
    } else if st.myself().config_epoch != 0 {
        Some(errors::CLUSTER_EPOCH_NONZERO.to_string())
    } else {
        None
    };
    if let Some(e) = err {
        drop(st);
        ctx.reply.error(e);
        return;
    }
    st.set_config_epoch(epoch as u64);
    tern_config::log_notice!("configEpoch set to {} via CLUSTER SET-CONFIG-EPOCH", epoch);
    drop(st);
    cl.save_if_dirty();
    ctx.reply.ok();
}

fn bumpepoch(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    let (bumped, epoch) = cl.state.lock().bump_epoch();
    cl.save_if_dirty();
    ctx.reply.simple(&format!("{} {epoch}", if bumped { "BUMPED" } else { "STILL" }));
}

fn saveconfig(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let Some(cl) = cluster(ctx) else { return };
    cl.state.lock().fsync = true;
    match cl.save() {
        Ok(()) => ctx.reply.ok(),
        Err(e) => ctx.reply.error(errors::cluster_save_failed(&e)),
    }
}

fn countkeysinslot(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if cluster(ctx).is_none() {
        return;
    }
    let Some(slot) = parse_i64(args.get(2)) else {
        ctx.reply.error(errors::NOT_INTEGER);
        return;
    };
    if !(0..SLOTS as i64).contains(&slot) {
        ctx.reply.error(errors::CLUSTER_INVALID_SLOT);
        return;
    }
    let n = keys_in_slot(ctx, slot as u16, usize::MAX).len();
    ctx.reply.int(n as i64);
}

fn getkeysinslot(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if cluster(ctx).is_none() {
        return;
    }
    let (Some(slot), Some(max)) = (parse_i64(args.get(2)), parse_i64(args.get(3))) else {
        ctx.reply.error(errors::NOT_INTEGER);
        return;
    };
    if !(0..SLOTS as i64).contains(&slot) || max < 0 {
        ctx.reply.error(errors::CLUSTER_INVALID_SLOT_OR_COUNT);
        return;
    }
    let keys = keys_in_slot(ctx, slot as u16, max as usize);
    ctx.reply.array(keys.len());
    for k in keys {
        ctx.reply.bulk(&k);
    }
}

/// Up to `max` keys of database 0 in `slot`: the shard holding the slot,
/// read whole (shards own contiguous slot ranges).
fn keys_in_slot(ctx: &mut Ctx<'_, '_>, slot: u16, max: usize) -> Vec<Vec<u8>> {
    let gid = ctx.ks.gid(0, ctx.ks.shard_of(slot));
    let mut out = Vec::new();
    let shard = ctx.ks.lock(gid);
    for e in shard.iter(ctx.now) {
        if out.len() >= max {
            break;
        }
        if tern_store::slot::key_slot(e.key()) == slot {
            out.push(e.key().to_vec());
        }
    }
    out
}

fn asking(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    if cluster(ctx).is_some() {
        ctx.client.asking = true;
        ctx.reply.ok();
    }
}

fn readonly(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    if cluster(ctx).is_some() {
        ctx.client.cluster_readonly = true;
        ctx.client.shared.set_flag(crate::client::flags::READONLY, true);
        ctx.reply.ok();
    }
}

fn readwrite(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    if cluster(ctx).is_some() {
        ctx.client.cluster_readonly = false;
        ctx.client.shared.set_flag(crate::client::flags::READONLY, false);
        ctx.reply.ok();
    }
}

/// Why a command does not run on this node in cluster mode (Redis's
/// CLUSTER_REDIR_* codes).
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    CrossSlot,
    TryAgain,
    Down,
    DownReadOnly,
    Unbound,
    Moved(u16, String, u16),
    Ask(u16, String, u16),
}

impl Refusal {
    /// The error a client is sent (Redis's clusterRedirectClient).
    pub fn wire(&self) -> Vec<u8> {
        match self {
            Refusal::CrossSlot => errors::CROSSSLOT.as_bytes().to_vec(),
            Refusal::TryAgain => errors::TRYAGAIN.as_bytes().to_vec(),
            Refusal::Down => errors::CLUSTERDOWN.as_bytes().to_vec(),
            Refusal::DownReadOnly => errors::CLUSTERDOWN_RO.as_bytes().to_vec(),
            Refusal::Unbound => errors::CLUSTERDOWN_UNBOUND.as_bytes().to_vec(),
            Refusal::Moved(slot, ip, port) => errors::moved(*slot, ip, *port).into_bytes(),
            Refusal::Ask(slot, ip, port) => errors::ask(*slot, ip, *port).into_bytes(),
        }
    }

    /// The error a script's command gets (Redis's scriptVerifyClusterState).
    pub fn in_script(&self, cmd: &Cmd) -> Vec<u8> {
        match self {
            Refusal::DownReadOnly => errors::SCRIPT_CLUSTER_DOWN_RO.as_bytes().to_vec(),
            Refusal::Down => errors::SCRIPT_CLUSTER_DOWN.as_bytes().to_vec(),
            Refusal::CrossSlot => errors::script_cross_slot(&cmd.fullname).into_bytes(),
            _ => errors::SCRIPT_NON_LOCAL_KEY.as_bytes().to_vec(),
        }
    }
}

/// Where a command goes in cluster mode (Redis's getNodeByQuery): Ok with
/// the keys' slot (None: no keys) when this node runs it, else why not.
/// Every key of the command (for EXEC, of every command queued) must
/// hash to one slot, and the first key's slot must be served; a command
/// without keys runs here. Shard channels (SPUBLISH, SSUBSCRIBE,
/// SUNSUBSCRIBE) count as keys.
pub fn route(srv: &Server, cl: &Cluster, commands: &super::table::CommandTable, client: &Client, cmd: &Cmd, args: Args<'_>) -> Result<Option<u16>, Refusal> {
    let mut slot: Option<u16> = None;
    let mut write = cmd.has(WRITE);
    let mut check = |keys: &mut dyn Iterator<Item = &[u8]>| -> Result<(), Refusal> {
        for k in keys {
            let s = tern_store::slot::key_slot(k);
            match slot {
                None => {
                    slot = Some(s);
                    // The first key's slot unassigned ends it there.
                    if !cl.serves(s) && cl.state.lock().slot_owner(s as usize).is_none() {
                        return Err(Refusal::Unbound);
                    }
                }
                Some(first) if first != s => return Err(Refusal::CrossSlot),
                Some(_) => {}
            }
        }
        Ok(())
    };
    if cmd.spec.name == "exec" {
        let Some(m) = client.multi.as_ref() else { return Ok(None) };
        for (id, ranges) in &m.cmds {
            let c = commands.get(*id);
            write |= c.has(WRITE);
            let a = Args::from_parts(&m.data, ranges);
            check(&mut keys_of(c, a))?;
        }
    } else {
        check(&mut keys_of(cmd, args))?;
    }
    let Some(slot) = slot else { return Ok(None) };
    if cl.serves(slot) && cl.is_ok() {
        return Ok(Some(slot));
    }
    let st = cl.state.lock();
    let Some(owner) = st.slot_owner(slot as usize) else {
        return Err(Refusal::Unbound);
    };
    // A slot moving: which of the command's keys are here decides.
    let migrating = if owner.name == st.myself { st.migrating.get(&slot).copied() } else { None };
    let importing = st.importing.contains_key(&slot);
    let (mut missing, mut existing, mut several) = (0, 0, false);
    if migrating.is_some() || importing {
        let now = crate::server::now_ms();
        let mut first: Option<Vec<u8>> = None;
        let mut look = |k: &[u8]| {
            several |= first.as_deref().is_some_and(|f| f != k);
            if first.is_none() {
                first = Some(k.to_vec());
            }
            let loc = srv.ks.locate(0, k);
            if srv.ks.lock(loc.gid).peek(k, loc.hash, now).is_some() {
                existing += 1;
            } else {
                missing += 1;
            }
        };
        if cmd.spec.name == "exec" {
            if let Some(m) = client.multi.as_ref() {
                for (id, ranges) in &m.cmds {
                    let a = Args::from_parts(&m.data, ranges);
                    for k in keys_of(commands.get(*id), a) {
                        look(k);
                    }
                }
            }
        } else {
            for k in keys_of(cmd, args) {
                look(k);
            }
        }
    }
    if !st.ok {
        let reads = srv.config.read().cluster_allow_reads_when_down;
        if !reads {
            return Err(Refusal::Down);
        }
        if write {
            return Err(Refusal::DownReadOnly);
        }
    }
    // MIGRATE moves the keys of a slot being moved, wherever they are.
    if (migrating.is_some() || importing) && cmd.spec.name == "migrate" {
        return Ok(Some(slot));
    }
    if let (Some(to), true) = (migrating, missing > 0) {
        if existing > 0 {
            return Err(Refusal::TryAgain);
        }
        let Some(n) = st.nodes.get(&to) else { return Err(Refusal::Unbound) };
        return Err(Refusal::Ask(slot, n.ip.clone(), n.port));
    }
    if importing && (client.asking || cmd.has(ASKING)) {
        if several && missing > 0 {
            return Err(Refusal::TryAgain);
        }
        return Ok(Some(slot));
    }
    if owner.name == st.myself {
        return Ok(Some(slot));
    }
    // A READONLY client's read on a replica of the slot's master.
    let me = st.myself();
    if client.cluster_readonly && !write && me.flags & FLAG_SLAVE != 0 && me.slaveof == Some(owner.name) {
        return Ok(Some(slot));
    }
    Err(Refusal::Moved(slot, owner.ip.clone(), owner.port))
}

/// A script's command in cluster mode (Redis's scriptVerifyClusterState):
/// routed as a client's would be, and, unless the script may cross slots,
/// in the slot of the script's earlier commands (`slot`).
pub fn script_refusal(
    srv: &Server,
    cl: &Cluster,
    commands: &super::table::CommandTable,
    client: &Client,
    cmd: &Cmd,
    args: Args<'_>,
    slot: &mut Option<u16>,
    cross_slot: bool,
) -> Option<Vec<u8>> {
    match route(srv, cl, commands, client, cmd, args) {
        Err(r) => Some(r.in_script(cmd)),
        Ok(Some(s)) if !cross_slot => match *slot {
            None => {
                *slot = Some(s);
                None
            }
            Some(first) if first != s => Some(errors::SCRIPT_CROSS_SLOT.as_bytes().to_vec()),
            Some(_) => None,
        },
        Ok(_) => None,
    }
}

/// This node's settings for the cluster, from the config (read again by
/// the cron, so CONFIG SET of the `cluster-announce-*` directives, the
/// node timeout and full coverage take effect).
pub fn me(srv: &Server, port: u16) -> tern_cluster::Me {
    let c = srv.config.read();
    let cport = if c.cluster_port != 0 { c.cluster_port } else { port.wrapping_add(10000) };
    tern_cluster::Me {
        port,
        cport,
        announce_ip: (!c.cluster_announce_ip.is_empty()).then(|| c.cluster_announce_ip.clone()),
        hostname: c.cluster_announce_hostname.clone(),
        human_nodename: c.cluster_announce_human_nodename.clone(),
        node_timeout_ms: c.cluster_node_timeout.as_millis() as u64,
        require_full_coverage: c.cluster_require_full_coverage,
    }
}

/// Cluster mode at start: nodes.conf read (or a new node made), the
/// cluster bus's port bound on `ips` (`bind`'s addresses, each with whether
/// it is optional). An error stops the server.
pub fn open(srv: &Server, port: u16, ips: &[(std::net::IpAddr, bool)]) -> Result<Vec<mio::net::TcpListener>, String> {
    let me = me(srv, port);
    let cport = me.cport;
    let path = {
        let c = srv.config.read();
        let dir = std::path::PathBuf::from(c.dir.clone().unwrap_or_else(|| ".".into()));
        dir.join(&c.cluster_config_file)
    };
    let cl = Cluster::open(me, path)?;
    let listeners = tern_cluster::bus::listen(ips, cport)?;
    let _ = srv.cluster.set(std::sync::Arc::new(cl));
    Ok(listeners)
}

/// The cron's part: the settings read again, and the replication offset
/// the bus's messages carry (a replica's, the one it has applied).
pub fn cron(srv: &Server) {
    if let Some(cl) = srv.cluster.get() {
        let port = srv.port.load(std::sync::atomic::Ordering::Relaxed) as u16;
        let offset = match srv.repl.upstream_info() {
            Some(u) => u.offset.max(0) as u64,
            None => srv.repl.info().offset,
        };
        let master = {
            let mut st = cl.state.lock();
            st.set_offset(offset);
            let me = st.myself();
            me.slaveof.filter(|_| me.flags & FLAG_SLAVE != 0).and_then(|m| st.nodes.get(&m)).filter(|m| m.has_addr() && m.port != 0).map(|m| (m.ip.clone(), m.port))
        };
        // Replication follows the node's role in the cluster: a replica
        // (after a restart, a failover it lost) replicates the master it
        // knows, and a replica that won an election is promoted.
        match master {
            Some((ip, port)) => {
                srv.ks.set_replica(true);
                if srv.repl.set_master(&ip, port) {
                    tern_config::log_notice!("Connecting to MASTER {}:{}", ip, port);
                }
            }
            None => {
                if srv.repl.is_replica() && cl.state.lock().myself().is_master() {
                    srv.durability().promote(srv);
                    tern_config::log_notice!("Failover: this node is a master now.");
                }
            }
        }
        // A replica's manual failover: its master holds writes until the
        // replica took over (or the failover timed out), and says where its
        // stream is once the pause holds.
        // (The offset above was read a tick after the pause began.)
        let now = crate::server::now_ms();
        let pause = cl.state.lock().manual_failover_pause();
        let paused = srv.pause.mode_at(now).is_some();
        match pause {
            Some(until) => {
                srv.pause.set(crate::server::PausePurpose::Failover, until + tern_cluster::state::MANUAL_FAILOVER_TIMEOUT, crate::server::PauseMode::Write, now);
                if paused {
                    cl.state.lock().election.manual_paused = true;
                }
            }
            // FAILOVER is refused in cluster mode: a failover pause is
            // the cluster's.
            None if paused => srv.pause.clear(crate::server::PausePurpose::Failover, now),
            None => {}
        }
        cl.configure(me(srv, port));
    }
}

/// A command's keys as cluster routing sees them: those its key finder
/// gives when it has one (MIGRATE's KEYS form, SORT), else its key specs';
/// shard channels route as keys do.
fn keys_of<'a>(c: &Cmd, a: Args<'a>) -> impl Iterator<Item = &'a [u8]> {
    // A command with a key finder of its own (MIGRATE, SORT) is routed by
    // it, as Redis's getKeysFromCommand does.
    let found = c.spec.key_finder.map(|f| f(a));
    let own_finder = found.is_some();
    let shard_channels = matches!(c.spec.name, "spublish" | "ssubscribe" | "sunsubscribe");
    let range = match (shard_channels, c.spec.name == "spublish") {
        (false, _) => 0..0,
        (true, true) => 1..2,
        (true, false) => 1..a.len(),
    };
    let channels = range.map(move |i| a.get(i));
    let walk = (!shard_channels && !own_finder).then(|| c.keys(a));
    walk.into_iter()
        .flatten()
        .chain(found.into_iter().flatten())
        .map(move |k| a.get(k.pos))
        .chain(channels)
}
