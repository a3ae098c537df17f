//! The ACL on the memcached port: a request is checked as the Redis
//! command whose meaning it has (a `get` reads its keys as GET does, a
//! `set` writes as SET, `delete` is DEL, `flush_all` is FLUSHALL), with the
//! user the connection authenticated as, by the same rules as on the RESP
//! port. memcached has no such refusal; its closest is a CLIENT_ERROR
//! (the connection stays usable), carrying Redis's NOPERM text.

use smallvec::SmallVec;
use tern_memcache::{MetaCmd, Request, StoreCmd};

use crate::acl::{self, user::READ, user::WRITE, Denied, KeyUse};
use crate::client::Client;
use crate::server::Server;

/// The Redis command a request runs as and its keys, with the access
/// each needs; None for requests that touch no data (version, quit, ...).
fn meaning<'r>(req: &'r Request<'_>) -> Option<(&'static str, SmallVec<[KeyUse<'r>; 4]>)> {
    let mut keys: SmallVec<[KeyUse<'r>; 4]> = SmallVec::new();
    let name = match req {
        Request::Get { touch, keys: ks, .. } => {
            let need = if touch.is_some() { READ | WRITE } else { READ };
            keys.extend(ks.iter().enumerate().map(|(i, k)| (k, need, i + 1)));
            if touch.is_some() {
                "getex"
            } else {
                "get"
            }
        }
        Request::Store { cmd, key, .. } => {
            keys.push((key, WRITE, 1));
            match cmd {
                StoreCmd::Append | StoreCmd::Prepend => "append",
                _ => "set",
            }
        }
        Request::Delete { key, .. } => {
            keys.push((key, WRITE, 1));
            "del"
        }
        Request::Arith { key, incr, .. } => {
            keys.push((key, READ | WRITE, 1));
            if *incr {
                "incrby"
            } else {
                "decrby"
            }
        }
        Request::Touch { key, .. } => {
            keys.push((key, WRITE, 1));
            "expire"
        }
        Request::FlushAll { .. } => "flushall",
        Request::CacheMemlimit { .. } => "config|set",
        Request::Shutdown { .. } => "shutdown",
        Request::Meta(m) => {
            let (name, need) = match m.cmd {
                MetaCmd::Get => ("get", READ),
                MetaCmd::Set => ("set", WRITE),
                MetaCmd::Delete => ("del", WRITE),
                MetaCmd::Arith => ("incrby", READ | WRITE),
            };
            keys.push((&m.key, need, 1));
            name
        }
        Request::MetaDebug { key, .. } => {
            keys.push((key, READ, 1));
            "object|encoding"
        }
        _ => return None,
    };
    Some((name, keys))
}

/// Checks `req` against the client's user: the error line to send when
/// it is refused (the refusal is in ACL LOG and INFO's counters).
pub fn check(srv: &Server, client: &Client, req: &Request<'_>, now: u64) -> Result<(), String> {
    let Some((name, keys)) = meaning(req) else { return Ok(()) };
    let Some(id) = srv.acl.catalog().find(name) else { return Ok(()) };
    let Err((why, pos)) = acl::check(&client.user, id, false, None, &keys, &[]) else { return Ok(()) };
    let user = &client.user.name;
    let object: &[u8] = match why {
        Denied::Command | Denied::Auth => name.as_bytes(),
        _ => keys.iter().find(|k| k.2 == pos).map_or(&b""[..], |k| k.0),
    };
    // CLIENT LIST's fields are the RESP port's (`cmd::client`); a
    // memcached connection is named by its addresses and user.
    let sh = &client.shared;
    let info = format!("id={} addr={} laddr={} fd={} name= user={} lib-name= lib-ver=", sh.id, sh.addr, sh.laddr, sh.fd, String::from_utf8_lossy(user));
    let max = usize::try_from(srv.config.read().acllog_max_len).unwrap_or(usize::MAX);
    srv.acl.record(why, acl::log::Context::Toplevel, object, user, info.into_bytes(), now, max);
    let msg = match why {
        Denied::Key => crate::errors::NOPERM_KEY.as_bytes().to_vec(),
        Denied::Channel => crate::errors::NOPERM_CHANNEL.as_bytes().to_vec(),
        _ => crate::errors::noperm_command(user, name),
    };
    Err(format!("CLIENT_ERROR {}", String::from_utf8_lossy(&msg)))
}
