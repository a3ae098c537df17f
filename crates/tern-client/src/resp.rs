//! The RESP side: commands, pipelines and multi-key commands split by
//! server, over [`Cluster`]. Requests are written with tern-resp's
//! [`Encoder`]; replies are read with [`tern_resp::decode::decode_value`].

use tern_resp::decode::{decode_value, Value};
use tern_resp::Encoder;

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::pool::{Cluster, Handshake, Options};
use crate::split::{merge, split, Groups};

const E: Encoder = Encoder::RESP2;

fn read(conn: &mut Conn) -> Result<Value> {
    conn.read_with(decode_value)
}

/// A command's reply, with an error reply turned into [`Error::Server`].
fn ok(v: Value) -> Result<Value> {
    match v {
        Value::Error(m) => Err(Error::Server(m)),
        v => Ok(v),
    }
}

fn encode(out: &mut Vec<u8>, args: &[impl AsRef<[u8]>]) {
    tern_resp::encode::request(out, args.iter().map(|a| a.as_ref()));
}

/// `verb key…` as one request.
fn encode_keys(out: &mut Vec<u8>, verb: &[u8], keys: &[&[u8]], positions: &[usize]) {
    E.array(out, 1 + positions.len());
    E.bulk(out, verb);
    for &p in positions {
        E.bulk(out, keys[p]);
    }
}

/// AUTH / HELLO 3 / SELECT on a new connection, written as one request and
/// read back in order.
pub(crate) fn handshake(conn: &mut Conn, h: &Handshake) -> Result<()> {
    let mut n = 0;
    let user: &[u8] = h.username.as_deref().unwrap_or(b"default");
    if h.resp3 {
        match &h.password {
            Some(p) => encode(&mut conn.wbuf, &[&b"HELLO"[..], b"3", b"AUTH", user, p]),
            None => encode(&mut conn.wbuf, &[&b"HELLO"[..], b"3"]),
        }
        n += 1;
    } else if let Some(p) = &h.password {
        match &h.username {
            Some(u) => encode(&mut conn.wbuf, &[&b"AUTH"[..], u, p]),
            None => encode(&mut conn.wbuf, &[&b"AUTH"[..], p]),
        }
        n += 1;
    }
    if h.db != 0 {
        encode(&mut conn.wbuf, &[&b"SELECT"[..], itoa::Buffer::new().format(h.db).as_bytes()]);
        n += 1;
    }
    conn.flush()?;
    let mut refused = None;
    for _ in 0..n {
        if let Value::Error(m) = read(conn)? {
            refused.get_or_insert(m);
        }
    }
    match refused {
        Some(message) => Err(Error::Handshake { server: conn.server().to_string(), message }),
        None => Ok(()),
    }
}

pub struct RespClient {
    pub cluster: Cluster,
}

impl RespClient {
    pub fn new(servers: &[(String, u16)], mut opts: Options) -> Result<RespClient> {
        opts.handshake.get_or_insert_with(Handshake::default);
        Ok(RespClient { cluster: Cluster::new(servers, opts)? })
    }

    fn opts(&self) -> &Options {
        &self.cluster.opts
    }

    /// The server a command goes to: its first argument after the name is
    /// taken as its key (true of every single-key command).
    pub fn route(&self, args: &[impl AsRef<[u8]>]) -> usize {
        args.get(1).map_or(0, |k| self.cluster.server_for(k.as_ref()))
    }

    /// Sends one command and returns its reply; an error reply is
    /// [`Error::Server`].
    pub fn command(&self, args: &[impl AsRef<[u8]>]) -> Result<Value> {
        self.command_on(self.route(args), args)
    }

    pub fn command_on(&self, server: usize, args: &[impl AsRef<[u8]>]) -> Result<Value> {
        self.cluster.with_conn(server, |c| {
            encode(&mut c.wbuf, args);
            c.flush()?;
            read(c)
        })
        .and_then(ok)
    }

    /// A read: a transport failure is a miss when the policy says so.
    fn read_policy(&self, r: Result<Value>) -> Result<Value> {
        match r {
            Err(e) if self.opts().failure.reads_miss && is_unavailable(&e) => Ok(Value::Null),
            r => r,
        }
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match self.read_policy(self.command(&[&b"GET"[..], key]))? {
            Value::Bulk(b) => Ok(Some(b)),
            Value::Null => Ok(None),
            v => Err(unexpected(&v)),
        }
    }

    /// `verb key…` once per server the keys live on, all written before any
    /// reply is read: the groups of key positions and each one's reply.
    fn per_server(&self, verb: &[u8], keys: &[&[u8]]) -> (Groups, Vec<Result<Value>>) {
        let groups = split(keys, |k| self.cluster.server_for(k));
        let parts: Vec<usize> = groups.iter().map(|g| g.0).collect();
        let results = self.cluster.fan_out(
            &parts,
            |n, c| {
                encode_keys(&mut c.wbuf, verb, keys, &groups[n].1);
                c.flush()
            },
            |_, c| read(c).and_then(ok),
        );
        (groups, results)
    }

    /// `MGET` of `keys`, one per server they span, written to all servers
    /// before any reply is read. The answer has one entry per key, in order.
    pub fn mget(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>> {
        let (groups, results) = self.per_server(b"MGET", keys);
        let mut answers = Vec::with_capacity(groups.len());
        for (r, (_, positions)) in results.into_iter().zip(&groups) {
            let values = match r {
                Ok(Value::Array(items)) if items.len() == positions.len() => items
                    .into_iter()
                    .map(|v| match v {
                        Value::Bulk(b) => Ok(Some(b)),
                        Value::Null => Ok(None),
                        v => Err(unexpected(&v)),
                    })
                    .collect::<Result<Vec<_>>>()?,
                Ok(v) => return Err(unexpected(&v)),
                Err(e) if self.opts().failure.reads_miss && is_unavailable(&e) => vec![None; positions.len()],
                Err(e) => return Err(e),
            };
            answers.push(values);
        }
        Ok(merge(keys.len(), &groups, answers, || None))
    }

    /// `MSET` split by server. Atomic only within one server.
    pub fn mset(&self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        let groups = split(pairs, |p| self.cluster.server_for(p.0));
        let parts: Vec<usize> = groups.iter().map(|g| g.0).collect();
        let results = self.cluster.fan_out(
            &parts,
            |n, c| {
                let ps = &groups[n].1;
                E.array(&mut c.wbuf, 1 + 2 * ps.len());
                E.bulk(&mut c.wbuf, b"MSET");
                for &p in ps {
                    E.bulk(&mut c.wbuf, pairs[p].0);
                    E.bulk(&mut c.wbuf, pairs[p].1);
                }
                c.flush()
            },
            |_, c| read(c).and_then(ok),
        );
        for r in results {
            match r {
                Ok(_) => {}
                Err(e) if self.opts().failure.skip_writes && is_unavailable(&e) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// `DEL` split by server; the number of keys removed.
    pub fn del(&self, keys: &[&[u8]]) -> Result<i64> {
        let (_, results) = self.per_server(b"DEL", keys);
        let mut total = 0;
        for r in results {
            match r {
                Ok(Value::Int(n)) => total += n,
                Ok(v) => return Err(unexpected(&v)),
                Err(e) if self.opts().failure.skip_writes && is_unavailable(&e) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(total)
    }

    /// Sends `cmds` as pipelines, one per server they route to, written
    /// before any reply is read; returns their replies in order, error
    /// replies included as [`Value::Error`]. With `transaction`, the
    /// commands are wrapped in MULTI/EXEC and must all route to one server;
    /// the result is EXEC's (one reply per command, or an error).
    pub fn pipeline(&self, cmds: &[Vec<Vec<u8>>], transaction: bool) -> Result<Vec<Value>> {
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        let groups = split(cmds, |c| self.route(c));
        if transaction {
            if groups.len() > 1 {
                return Err(Error::Invalid("a transaction's keys must all live on one server".into()));
            }
            let server = groups[0].0;
            let replies = self.cluster.with_conn(server, |c| {
                encode(&mut c.wbuf, &[b"MULTI"]);
                for cmd in cmds {
                    encode(&mut c.wbuf, cmd);
                }
                encode(&mut c.wbuf, &[b"EXEC"]);
                c.flush()?;
                (0..cmds.len() + 2).map(|_| read(c)).collect::<Result<Vec<Value>>>()
            })?;
            // A command refused while queueing makes EXEC fail (EXECABORT):
            // the first such error is the one to report.
            let queued_error = replies.iter().find_map(|v| match v {
                Value::Error(m) => Some(m.clone()),
                _ => None,
            });
            return match replies.into_iter().last() {
                Some(Value::Array(items)) => Ok(items),
                Some(Value::Null) => Err(Error::Server(b"WATCHERROR Watched variable changed.".to_vec())),
                Some(Value::Error(m)) => Err(Error::Server(queued_error.unwrap_or(m))),
                Some(v) => Err(unexpected(&v)),
                None => Err(Error::Invalid("no EXEC reply".into())),
            };
        }
        let parts: Vec<usize> = groups.iter().map(|g| g.0).collect();
        let results = self.cluster.fan_out(
            &parts,
            |n, c| {
                for &p in &groups[n].1 {
                    encode(&mut c.wbuf, &cmds[p]);
                }
                c.flush()
            },
            |n, c| (0..groups[n].1.len()).map(|_| read(c)).collect::<Result<Vec<Value>>>(),
        );
        let answers = results.into_iter().collect::<Result<Vec<_>>>()?;
        Ok(merge(cmds.len(), &groups, answers, || Value::Null))
    }
}

/// The server did not answer (as opposed to answering with an error).
pub fn is_unavailable(e: &Error) -> bool {
    e.is_transport() || matches!(e, Error::ServerDown { .. } | Error::PoolExhausted { .. })
}

fn unexpected(v: &Value) -> Error {
    Error::Protocol { server: String::new(), detail: format!("unexpected reply {v:?}") }
}
