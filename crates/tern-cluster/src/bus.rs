//! The cluster bus: a thread of its own that listens on the cluster port,
//! keeps an outgoing link to every node it knows, and exchanges Redis's
//! binary messages on them ([`crate::msg`]); each message received goes
//! to [`crate::state::State::process`], and every 100 ms the cron pings,
//! times out handshakes and flags nodes not heard from.
//!
//! ```text
//!  listener (cport) ─accept─► inbound links: PING/MEET in, PONG out
//!  cron ─connect─► outbound links, one per node: MEET/PING out, PONG in
//! ```
//!
//! As in Redis, a node answers on the link a message came by and pings on
//! its own outgoing links, so between two nodes there are two links.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use tern_config::log_warning;

use crate::msg::{self, Name};
use crate::state::{Outcome, Via};
use crate::{now_ms, Cluster};

/// A message longer than this closes its link: a PUBLISH of the largest
/// message a client may send (Redis caps none but its memory).
const MAX_FRAME: usize = msg::MAX_FRAME_LEN;

/// The waker's token (links count up from the listeners').
const WAKER: Token = Token(usize::MAX);

struct Link {
    stream: TcpStream,
    inbound: bool,
    /// The node an outgoing link goes to.
    node: Option<Name>,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    /// When it was opened (an outgoing link not connected within the node
    /// timeout is dropped).
    since: u64,
    connected: bool,
    /// Where an outgoing link goes: when gossip moves its node elsewhere,
    /// it is redone.
    to: Option<(String, u16)>,
}

impl Link {
    fn send(&mut self, m: &msg::Msg) {
        msg::encode(m, &mut self.wbuf);
    }

    /// Writes what it can; false: the link failed.
    fn flush(&mut self) -> bool {
        if !self.connected {
            return true;
        }
        while !self.wbuf.is_empty() {
            match self.stream.write(&self.wbuf) {
                Ok(0) => return false,
                Ok(n) => {
                    self.wbuf.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }
}

/// Binds the cluster port on `addrs` (the server's `bind`, each with
/// whether it is optional, `-addr`): an error on an address that is not
/// optional, or on all of them, stops the server at start, as Redis's.
pub fn listen(addrs: &[(IpAddr, bool)], cport: u16) -> Result<Vec<TcpListener>, String> {
    let mut out = Vec::new();
    for &(ip, optional) in addrs {
        let a = SocketAddr::new(ip, cport);
        match TcpListener::bind(a) {
            Ok(l) => out.push(l),
            Err(e) if optional => log_warning!("Could not bind optional address {} for the cluster bus: {}", a, e),
            Err(e) => return Err(format!("Could not bind the cluster bus to {a}: {e}")),
        }
    }
    if out.is_empty() {
        return Err(format!("Could not bind the cluster bus on port {cport}"));
    }
    Ok(out)
}

/// The bus thread's loop; returns when the cluster is stopped.
pub fn run(cl: Arc<Cluster>, mut listeners: Vec<TcpListener>) {
    let mut poll = match Poll::new() {
        Ok(p) => p,
        Err(e) => {
            log_warning!("Cluster bus: {}", e);
            return;
        }
    };
    for (i, l) in listeners.iter_mut().enumerate() {
        if let Err(e) = poll.registry().register(l, Token(i), Interest::READABLE) {
            log_warning!("Cluster bus: {}", e);
        }
    }
    match mio::Waker::new(poll.registry(), WAKER) {
        Ok(w) => {
            let _ = cl.waker.set(w);
        }
        Err(e) => log_warning!("Cluster bus: {}", e),
    }
    let first_link = listeners.len();
    let mut links: HashMap<usize, Link> = HashMap::new();
    let mut next = first_link;
    let mut events = Events::with_capacity(256);
    let mut outbox = Vec::new();
    let mut tick: u64 = 0;
    let mut last_cron = 0;
    while !cl.stop.load(Ordering::Relaxed) {
        if let Err(e) = poll.poll(&mut events, Some(Duration::from_millis(100))) {
            if e.kind() != ErrorKind::Interrupted {
                log_warning!("Cluster bus: {}", e);
                return;
            }
        }
        let now = now_ms();
        let mut closed = Vec::new();
        for ev in events.iter() {
            if ev.token() == WAKER {
                continue;
            }
            let t = ev.token().0;
            if t < first_link {
                // New inbound links.
                loop {
                    match listeners[t].accept() {
                        Ok((mut s, _)) => {
                            let _ = s.set_nodelay(true);
                            let tok = next;
                            next += 1;
                            if poll.registry().register(&mut s, Token(tok), Interest::READABLE | Interest::WRITABLE).is_ok() {
                                links.insert(tok, Link { stream: s, inbound: true, node: None, rbuf: Vec::new(), wbuf: Vec::new(), since: now, connected: true, to: None });
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(_) => break,
                    }
                }
                continue;
            }
            let Some(link) = links.get_mut(&t) else { continue };
            if ev.is_writable() && !link.connected {
                // An outgoing link's connect finished (or failed).
                if link.stream.take_error().ok().flatten().is_some() || link.stream.peer_addr().is_err() {
                    closed.push(t);
                    continue;
                }
                link.connected = true;
                if let Some(n) = link.node {
                    cl.state.lock().linked(&n, true);
                }
            }
            if (ev.is_readable() || ev.is_read_closed()) && !read(&cl, link, now, &mut outbox) {
                closed.push(t);
                continue;
            }
            if !link.flush() {
                closed.push(t);
            }
        }
        for t in closed {
            drop_link(&cl, &mut poll, &mut links, t);
        }
        // What workers queued (PUBLISH) goes too.
        outbox.append(&mut cl.state.lock().outbox);
        deliver(&mut outbox, &mut links);
        if now.saturating_sub(last_cron) >= 100 {
            last_cron = now;
            tick += 1;
            cron(&cl, &mut poll, &mut links, &mut next, now, tick);
            cl.publish_view();
        }
    }
}

/// Reads what the link has and processes every whole message; false: the
/// link goes. Messages the state wants sent go to `outbox`.
fn read(cl: &Cluster, link: &mut Link, now: u64, outbox: &mut Vec<(Option<Name>, msg::Msg)>) -> bool {
    let mut chunk = [0u8; 16 << 10];
    loop {
        match link.stream.read(&mut chunk) {
            Ok(0) => return false,
            Ok(n) => link.rbuf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    loop {
        let len = match msg::frame_len(&link.rbuf) {
            Ok(Some(n)) if n <= MAX_FRAME => n,
            Ok(Some(_)) | Err(_) => return false,
            Ok(None) => return true,
        };
        if link.rbuf.len() < len {
            return true;
        }
        let m = match msg::decode(&link.rbuf[..len]) {
            Ok(m) => m,
            Err(e) => {
                log_warning!("Cluster bus: a malformed message ({}); closing the link", e);
                return false;
            }
        };
        link.rbuf.drain(..len);
        let peer_ip = link.stream.peer_addr().map(|a| a.ip().to_string()).unwrap_or_default();
        let local_ip = link.stream.local_addr().map(|a| a.ip().to_string()).unwrap_or_default();
        let mut st = cl.state.lock();
        let via = Via { inbound: link.inbound, node: link.node, peer_ip: &peer_ip, local_ip: &local_ip };
        let out = st.process(&m, &via, now);
        // A handshake done renames the link's node (one that found the
        // node known already closes its link instead).
        if let (Some(n), false) = (link.node, out == Outcome::Close) {
            if !st.nodes.contains_key(&n) && st.nodes.contains_key(&m.header.sender) {
                link.node = Some(m.header.sender);
            }
        }
        match out {
            Outcome::Nothing => {}
            Outcome::Pong => {
                let pong = st.ping(msg::TYPE_PONG, link.node.as_ref());
                link.send(&pong);
            }
            Outcome::Close => return false,
            Outcome::Publish { channel, message, shard } => {
                drop(st);
                if let Some(f) = cl.on_publish.get() {
                    f(&channel, &message, shard);
                }
                continue;
            }
        }
        outbox.append(&mut st.outbox);
        drop(st);
        cl.save_if_dirty();
    }
}

/// Sends what the state asked to send: to a node on its outgoing link
/// (when it is up), or to every node.
fn deliver(outbox: &mut Vec<(Option<Name>, msg::Msg)>, links: &mut HashMap<usize, Link>) {
    for (to, m) in outbox.drain(..) {
        for l in links.values_mut().filter(|l| !l.inbound && l.connected) {
            if to.is_none() || l.node == to {
                l.send(&m);
            }
        }
    }
    for l in links.values_mut() {
        let _ = l.flush();
    }
}

fn drop_link(cl: &Cluster, poll: &mut Poll, links: &mut HashMap<usize, Link>, t: usize) {
    if let Some(mut l) = links.remove(&t) {
        let _ = poll.registry().deregister(&mut l.stream);
        if let (false, Some(n)) = (l.inbound, l.node) {
            cl.state.lock().linked(&n, false);
        }
    }
}

/// Every 100 ms: links opened to nodes without one, pings sent, links
/// to nodes gone (forgotten, handshakes timed out) closed.
fn cron(cl: &Cluster, poll: &mut Poll, links: &mut HashMap<usize, Link>, next: &mut usize, now: u64, tick: u64) {
    let st = cl.state.lock();
    let timeout = st.me.node_timeout_ms.max(1000);
    // Outgoing links to nodes no longer known, or elsewhere now, or stuck
    // connecting.
    let moved = |l: &Link| {
        l.node.and_then(|n| st.nodes.get(&n)).is_some_and(|n| l.to.as_ref().is_some_and(|(ip, cport)| *ip != n.ip || *cport != n.cport))
    };
    let gone: Vec<usize> = links
        .iter()
        .filter(|(_, l)| {
            !l.inbound && (l.node.is_none_or(|n| !st.nodes.contains_key(&n)) || moved(l) || (!l.connected && now.saturating_sub(l.since) > timeout))
        })
        .map(|(t, _)| *t)
        .collect();
    drop(st);
    for t in gone {
        drop_link(cl, poll, links, t);
    }
    let mut st = cl.state.lock();
    let have: Vec<Name> = links.values().filter(|l| !l.inbound).filter_map(|l| l.node).collect();
    let want: Vec<(Name, String, u16, bool)> = st
        .nodes
        .values()
        .filter(|n| n.name != st.myself && n.has_addr() && !n.ip.is_empty() && n.cport != 0 && !have.contains(&n.name))
        .map(|n| (n.name, n.ip.clone(), n.cport, n.flags & crate::state::FLAG_MEET != 0))
        .collect();
    for (name, ip_text, cport, meet) in want {
        // A ping counts as sent from the first try, so that a node that
        // cannot be reached times out (Redis does the same).
        st.pinged(&name, now);
        let Ok(ip) = ip_text.parse::<IpAddr>() else { continue };
        let Ok(mut s) = TcpStream::connect(SocketAddr::new(ip, cport)) else { continue };
        let _ = s.set_nodelay(true);
        let tok = *next;
        *next += 1;
        if poll.registry().register(&mut s, Token(tok), Interest::READABLE | Interest::WRITABLE).is_err() {
            continue;
        }
        let mut link = Link { stream: s, inbound: false, node: Some(name), rbuf: Vec::new(), wbuf: Vec::new(), since: now, connected: false, to: Some((ip_text, cport)) };
        // The first message: MEET for a node met by CLUSTER MEET, a PING
        // otherwise (it goes once the connect completes).
        let m = st.ping(if meet { msg::TYPE_MEET } else { msg::TYPE_PING }, Some(&name));
        if let Some(n) = st.nodes.get_mut(&name) {
            n.flags &= !crate::state::FLAG_MEET;
        }
        link.send(&m);
        links.insert(tok, link);
    }
    for name in st.cron(now, tick) {
        let Some(link) = links.values_mut().find(|l| !l.inbound && l.node == Some(name) && l.connected) else { continue };
        let m = st.ping(msg::TYPE_PING, Some(&name));
        st.pinged(&name, now);
        link.send(&m);
        let _ = link.flush();
    }
    let mut outbox = std::mem::take(&mut st.outbox);
    // A link whose ping has waited half the node timeout is reopened (the
    // node may be reachable by a new connection), as Redis does.
    let stale: Vec<usize> = links
        .iter()
        .filter(|(_, l)| !l.inbound && l.connected && now.saturating_sub(l.since) > timeout)
        .filter(|(_, l)| l.node.and_then(|n| st.nodes.get(&n)).is_some_and(|n| n.ping_sent != 0 && now.saturating_sub(n.ping_sent) > timeout / 2))
        .map(|(t, _)| *t)
        .collect();
    drop(st);
    for t in stale {
        drop_link(cl, poll, links, t);
    }
    deliver(&mut outbox, links);
    for l in links.values_mut() {
        let _ = l.flush();
    }
    cl.links.store(links.len(), Ordering::Relaxed);
    cl.links_mem.store(links.values().map(|l| l.rbuf.capacity() + l.wbuf.capacity() + std::mem::size_of::<Link>()).sum(), Ordering::Relaxed);
    cl.save_if_dirty();
}
