//! The memcached meta protocol side, over [`Cluster`]. Requests are built
//! with tern-memcache's encoders and replies read with its
//! [`Response::parse`].
//!
//! A multi-get is, per server, one write of `mg <key> <flags> q k O<i>`
//! lines closed by `mn`: `q` suppresses the misses (`EN`), so only hits
//! come back, each naming its position `i` (and its key, checked), and
//! `MN` ends the batch. Misses cost no reply and no round trip.

use tern_memcache::encode;
use tern_memcache::number::{append, parse_flags, parse_u64};
use tern_memcache::Response;

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::pool::{Cluster, Options};
use crate::resp::is_unavailable;
use crate::split::{merge, split};

/// One item as a meta get returns it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Item {
    /// `None` when the reply carried no value (a touch, or a lease won on
    /// a miss with nothing stored yet).
    pub value: Option<Vec<u8>>,
    /// The client flags (`f`).
    pub flags: u32,
    pub cas: Option<u64>,
    /// Seconds left, -1 for none (`t`).
    pub ttl: Option<i64>,
    /// `W`: this client won the right to recompute the value (a lease).
    pub win: bool,
    /// `X`: the item is stale (invalidated, or past its recache time).
    pub stale: bool,
    /// `Z`: another client already holds the lease.
    pub lease_pending: bool,
}

/// What a get asks for besides the value and client flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GetOpts {
    pub cas: bool,
    pub ttl: bool,
    /// Touch: set the item's TTL to this (`T`).
    pub touch: Option<i64>,
    /// Lease on a miss (`N<ttl>`): the first client to miss wins and gets
    /// `W`, the others see `Z` until the value is set.
    pub lease_ttl: Option<i64>,
    /// Stale-while-revalidate: when the item has less than this left
    /// (`R<ttl>`), one client gets `W` to recompute it, others get the
    /// value with `Z`.
    pub recache_ttl: Option<i64>,
    /// Omit the value (`v`): a touch or existence check.
    pub no_value: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetMode {
    Set,
    Add,
    Replace,
    Append,
    Prepend,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetOpts {
    pub ttl: i64,
    pub flags: u32,
    /// Store only if the item's CAS is this (`C`).
    pub cas: Option<u64>,
    pub mode: SetMode,
    /// With `cas`: a stale item (`X`) may be replaced even if its CAS is
    /// older (`I`), the write that ends a stale-while-revalidate.
    pub invalidate: bool,
}

impl Default for SetOpts {
    fn default() -> SetOpts {
        SetOpts { ttl: 0, flags: 0, cas: None, mode: SetMode::Set, invalidate: false }
    }
}

/// How a store went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    Stored,
    /// `NS`: add found the key, replace did not (or the write was skipped).
    NotStored,
    /// `EX`: the CAS did not match.
    Exists,
    /// `NF`: a CAS store for a key that is gone.
    NotFound,
}

/// A key as it goes on the wire: as is when memcached accepts it, else
/// base64 with the `b` flag (binary keys, spaces, control bytes).
fn wire_key(key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
    out.clear();
    let plain = !key.is_empty() && key.len() <= tern_memcache::KEY_MAX && key.iter().all(|&c| c > b' ' && c != 0x7f);
    if plain {
        out.extend_from_slice(key);
        return Ok(false);
    }
    tern_memcache::base64::encode(out, key);
    if key.is_empty() || out.len() > tern_memcache::KEY_MAX {
        return Err(Error::Invalid(format!("memcached key of {} bytes is empty or too long", key.len())));
    }
    Ok(true)
}

fn push_flag(f: &mut Vec<u8>, c: u8, n: Option<i64>) {
    if !f.is_empty() {
        f.push(b' ');
    }
    f.push(c);
    if let Some(n) = n {
        append(f, n);
    }
}

fn get_flags(f: &mut Vec<u8>, o: &GetOpts, base64: bool) {
    if !o.no_value {
        push_flag(f, b'v', None);
    }
    push_flag(f, b'f', None);
    if o.cas {
        push_flag(f, b'c', None);
    }
    if o.ttl {
        push_flag(f, b't', None);
    }
    if let Some(t) = o.touch {
        push_flag(f, b'T', Some(t));
    }
    if let Some(t) = o.lease_ttl {
        push_flag(f, b'N', Some(t));
    }
    if let Some(t) = o.recache_ttl {
        push_flag(f, b'R', Some(t));
    }
    if base64 {
        push_flag(f, b'b', None);
    }
}

/// Reads the flags of a `VA`/`HD` reply into `item`; returns the opaque
/// (`O`) and key (`k`) tokens for a multi-get to match.
fn read_flags<'a>(flags: &'a [u8], item: &mut Item) -> (Option<&'a [u8]>, Option<&'a [u8]>) {
    let (mut opaque, mut key) = (None, None);
    for t in flags.split(|&c| c == b' ').filter(|t| !t.is_empty()) {
        let (c, rest) = (t[0], &t[1..]);
        match c {
            b'f' => item.flags = parse_flags(rest).unwrap_or(0),
            b'c' => item.cas = parse_u64(rest),
            b't' => item.ttl = if rest == b"-1" { Some(-1) } else { parse_u64(rest).map(|n| n as i64) },
            b'W' => item.win = true,
            b'X' => item.stale = true,
            b'Z' => item.lease_pending = true,
            b'O' => opaque = Some(rest),
            b'k' => key = Some(rest),
            _ => {}
        }
    }
    (opaque, key)
}

fn server_error(line: &[u8]) -> Error {
    Error::Server(line.to_vec())
}

fn protocol(conn: &Conn, what: &str) -> Error {
    Error::Protocol { server: conn.server().to_string(), detail: what.to_string() }
}

fn read(conn: &mut Conn) -> Result<Owned> {
    conn.read_with(|b| {
        Response::parse(b).map(|r| r.map(|(r, n)| (Owned::from(r), n))).map_err(|_| "malformed memcached reply")
    })
}

/// A response unit, copied out of the read buffer.
enum Owned {
    Value { flags: Vec<u8>, data: Vec<u8> },
    Status { code: [u8; 2], flags: Vec<u8> },
    Error(Vec<u8>),
    Other,
}

impl From<Response<'_>> for Owned {
    fn from(r: Response<'_>) -> Owned {
        match r {
            Response::MetaValue { flags, data } => Owned::Value { flags: flags.to_vec(), data: data.to_vec() },
            Response::Meta { code, flags } => Owned::Status { code, flags: flags.to_vec() },
            Response::Error(l) => Owned::Error(l.to_vec()),
            _ => Owned::Other,
        }
    }
}

pub struct MetaClient {
    pub cluster: Cluster,
}

impl MetaClient {
    pub fn new(servers: &[(String, u16)], mut opts: Options) -> Result<MetaClient> {
        opts.handshake = None;
        Ok(MetaClient { cluster: Cluster::new(servers, opts)? })
    }

    fn opts(&self) -> &Options {
        &self.cluster.opts
    }

    pub fn get(&self, key: &[u8], o: &GetOpts) -> Result<Option<Item>> {
        let mut k = Vec::new();
        let b64 = wire_key(key, &mut k)?;
        let mut f = Vec::new();
        get_flags(&mut f, o, b64);
        let r = self.cluster.with_conn(self.cluster.server_for(key), |c| {
            encode::mg(&mut c.wbuf, &k, &f);
            c.flush()?;
            match read(c)? {
                Owned::Value { flags, data } => {
                    let mut item = Item { value: Some(data), ..Item::default() };
                    read_flags(&flags, &mut item);
                    Ok(Some(item))
                }
                Owned::Status { code: [b'H', b'D'], flags } => {
                    let mut item = Item::default();
                    read_flags(&flags, &mut item);
                    Ok(Some(item))
                }
                Owned::Status { code: [b'E', b'N'], .. } => Ok(None),
                Owned::Error(l) => Err(server_error(&l)),
                _ => Err(protocol(c, "unexpected reply to mg")),
            }
        });
        match r {
            Err(e) if self.opts().failure.reads_miss && is_unavailable(&e) => Ok(None),
            r => r,
        }
    }

    /// Gets many keys: per server one write of quiet `mg` lines and `mn`,
    /// all servers written before any is read. One entry per key, in order.
    pub fn get_many(&self, keys: &[&[u8]], o: &GetOpts) -> Result<Vec<Option<Item>>> {
        let groups = split(keys, |k| self.cluster.server_for(k));
        let parts: Vec<usize> = groups.iter().map(|g| g.0).collect();
        let mut wire: Vec<(Vec<u8>, bool)> = Vec::with_capacity(keys.len());
        for k in keys {
            let mut w = Vec::new();
            let b = wire_key(k, &mut w)?;
            wire.push((w, b));
        }
        let mut flags = Vec::new();
        let results = self.cluster.fan_out(
            &parts,
            |n, c| {
                for (j, &p) in groups[n].1.iter().enumerate() {
                    flags.clear();
                    get_flags(&mut flags, o, wire[p].1);
                    flags.extend_from_slice(b" q k O");
                    append(&mut flags, j);
                    encode::mg(&mut c.wbuf, &wire[p].0, &flags);
                }
                encode::mn(&mut c.wbuf);
                c.flush()
            },
            |n, c| {
                let positions = &groups[n].1;
                let mut found: Vec<Option<Item>> = vec![None; positions.len()];
                let mut failed = None;
                loop {
                    let (flags, value) = match read(c)? {
                        Owned::Status { code: [b'M', b'N'], .. } => break,
                        Owned::Value { flags, data } => (flags, Some(data)),
                        Owned::Status { code: [b'H', b'D'], flags } => (flags, None),
                        Owned::Status { code: [b'E', b'N'], .. } => continue,
                        Owned::Error(l) => {
                            // Read on to MN so the connection stays usable.
                            failed.get_or_insert(l);
                            continue;
                        }
                        _ => return Err(protocol(c, "unexpected reply in a multi-get")),
                    };
                    let mut item = Item { value, ..Item::default() };
                    let (opaque, key) = read_flags(&flags, &mut item);
                    let j = opaque.and_then(parse_u64).map(|j| j as usize).filter(|&j| j < positions.len());
                    let Some(j) = j else { return Err(protocol(c, "multi-get reply without a valid opaque")) };
                    if key.is_some_and(|k| k != wire[positions[j]].0) {
                        return Err(protocol(c, "multi-get reply for another key"));
                    }
                    found[j] = Some(item);
                }
                match failed {
                    Some(l) => Err(server_error(&l)),
                    None => Ok(found),
                }
            },
        );
        let mut answers = Vec::with_capacity(groups.len());
        for (r, (_, positions)) in results.into_iter().zip(&groups) {
            answers.push(match r {
                Ok(found) => found,
                Err(e) if self.opts().failure.reads_miss && is_unavailable(&e) => vec![None; positions.len()],
                Err(e) => return Err(e),
            });
        }
        Ok(merge(keys.len(), &groups, answers, || None))
    }

    /// One status-line request to the key's server, with the write policy.
    fn write_op(&self, key: &[u8], build: impl FnOnce(&mut Vec<u8>, &[u8], bool)) -> Result<Owned> {
        let mut k = Vec::new();
        let b64 = wire_key(key, &mut k)?;
        let r = self.cluster.with_conn(self.cluster.server_for(key), |c| {
            build(&mut c.wbuf, &k, b64);
            c.flush()?;
            read(c)
        });
        match r {
            Err(e) if self.opts().failure.skip_writes && is_unavailable(&e) => Ok(Owned::Other),
            Ok(Owned::Error(l)) => Err(server_error(&l)),
            r => r,
        }
    }

    pub fn set(&self, key: &[u8], value: &[u8], o: &SetOpts) -> Result<Stored> {
        let r = self.write_op(key, |out, k, b64| {
            let mut f = Vec::new();
            push_flag(&mut f, b'T', Some(o.ttl));
            push_flag(&mut f, b'F', Some(i64::from(o.flags)));
            if let Some(c) = o.cas {
                f.extend_from_slice(b" C");
                append(&mut f, c);
            }
            if o.invalidate {
                push_flag(&mut f, b'I', None);
            }
            let mode = match o.mode {
                SetMode::Set => None,
                SetMode::Add => Some(&b" ME"[..]),
                SetMode::Replace => Some(&b" MR"[..]),
                SetMode::Append => Some(&b" MA"[..]),
                SetMode::Prepend => Some(&b" MP"[..]),
            };
            if let Some(m) = mode {
                f.extend_from_slice(m);
            }
            if b64 {
                push_flag(&mut f, b'b', None);
            }
            encode::ms(out, k, value, &f);
        })?;
        stored(r)
    }

    /// Deletes `key`; with `stale_ttl`, marks it stale for that long instead
    /// (`I T<ttl>`), so readers get the old value with `X` while one of them
    /// recomputes it. `Stored::Stored` when the key existed.
    pub fn delete(&self, key: &[u8], cas: Option<u64>, stale_ttl: Option<i64>) -> Result<Stored> {
        let r = self.write_op(key, |out, k, b64| {
            let mut f = Vec::new();
            if let Some(c) = cas {
                push_flag(&mut f, b'C', None);
                append(&mut f, c);
            }
            if let Some(t) = stale_ttl {
                push_flag(&mut f, b'I', None);
                push_flag(&mut f, b'T', Some(t));
            }
            if b64 {
                push_flag(&mut f, b'b', None);
            }
            encode::md(out, k, &f);
        })?;
        stored(r)
    }

    /// Sets the TTL of `key`; true when it exists.
    pub fn touch(&self, key: &[u8], ttl: i64) -> Result<bool> {
        let r = self.write_op(key, |out, k, b64| {
            let mut f = Vec::new();
            push_flag(&mut f, b'T', Some(ttl));
            if b64 {
                push_flag(&mut f, b'b', None);
            }
            encode::mg(out, k, &f);
        })?;
        Ok(matches!(r, Owned::Status { code: [b'H', b'D'], .. }))
    }

    /// Adds `delta` (or subtracts, with `decr`; memcached stops at 0). With
    /// `initial`, a missing key is created with that value and TTL.
    /// `None` when the key is missing (or not a number: `Error::Server`).
    pub fn arith(&self, key: &[u8], delta: u64, decr: bool, initial: Option<(u64, i64)>) -> Result<Option<u64>> {
        let r = self.write_op(key, |out, k, b64| {
            let mut f = b"v D".to_vec();
            append(&mut f, delta);
            if decr {
                f.extend_from_slice(b" MD");
            }
            if let Some((init, ttl)) = initial {
                f.extend_from_slice(b" J");
                append(&mut f, init);
                push_flag(&mut f, b'N', Some(ttl));
            }
            if b64 {
                push_flag(&mut f, b'b', None);
            }
            encode::ma(out, k, &f);
        })?;
        match r {
            Owned::Value { data, .. } => parse_u64(&data)
                .map(Some)
                .ok_or_else(|| Error::Protocol { server: String::new(), detail: "ma value is not a number".into() }),
            Owned::Status { code: [b'N', b'F'], .. } | Owned::Other => Ok(None),
            Owned::Status { code, .. } => Err(Error::Server(code.to_vec())),
            Owned::Error(l) => Err(server_error(&l)),
        }
    }
}

fn stored(r: Owned) -> Result<Stored> {
    match r {
        Owned::Status { code, .. } => match &code {
            b"HD" => Ok(Stored::Stored),
            b"NS" => Ok(Stored::NotStored),
            b"EX" => Ok(Stored::Exists),
            b"NF" => Ok(Stored::NotFound),
            _ => Err(Error::Server(code.to_vec())),
        },
        Owned::Other => Ok(Stored::NotStored),
        Owned::Error(l) => Err(server_error(&l)),
        Owned::Value { .. } => Err(Error::Protocol { server: String::new(), detail: "value reply to a store".into() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_go_plain_or_base64() {
        let mut w = Vec::new();
        assert!(!wire_key(b"user:1", &mut w).unwrap());
        assert_eq!(w, b"user:1");
        assert!(wire_key(b"a b", &mut w).unwrap());
        assert_eq!(tern_memcache::base64::decode(&w).unwrap(), b"a b");
        assert!(wire_key(&[0xff, 0], &mut w).unwrap());
        assert!(!wire_key(&[b'x'; 250], &mut w).unwrap());
        // 251 bytes are too long plain, and 336 in base64.
        assert!(matches!(wire_key(&[b'x'; 251], &mut w), Err(Error::Invalid(_))));
        assert!(matches!(wire_key(b"", &mut w), Err(Error::Invalid(_))));
    }

    #[test]
    fn flags_are_read_back() {
        let mut item = Item::default();
        let (o, k) = read_flags(b"f42 c7 t-1 W X Z kabc O12", &mut item);
        assert_eq!((o, k), (Some(&b"12"[..]), Some(&b"abc"[..])));
        assert_eq!(
            item,
            Item { value: None, flags: 42, cas: Some(7), ttl: Some(-1), win: true, stale: true, lease_pending: true }
        );
        let mut f = Vec::new();
        get_flags(&mut f, &GetOpts { cas: true, lease_ttl: Some(30), recache_ttl: Some(5), ..GetOpts::default() }, true);
        assert_eq!(f, b"v f c N30 R5 b");
    }
}
