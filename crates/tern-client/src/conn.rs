//! One TCP connection: a reused write buffer, a read buffer, and the loop
//! that reads until a decoder finds a complete reply.
//!
//! The decoders are the protocol crates' ([`tern_resp::decode`],
//! [`tern_memcache::Response::parse`]); this module only moves bytes. A
//! connection whose last reply was not read to its end is never reused:
//! [`Conn::is_clean`] is false and the pool drops it.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};

use crate::error::{Error, Result};
use crate::pool::Options;

/// Smallest read: big enough that a typical multi-get reply arrives in one
/// read, small enough not to matter per connection.
const READ_CHUNK: usize = 16 * 1024;
/// A read buffer grown past this for one large reply is given back after.
const KEEP_READ_BUF: usize = 256 * 1024;

pub struct Conn {
    stream: TcpStream,
    /// The request being built; written whole by [`Conn::flush`].
    pub wbuf: Vec<u8>,
    rbuf: Vec<u8>,
    /// Unconsumed bytes are `rbuf[start..end]`.
    start: usize,
    end: usize,
    /// Unconsumed bytes beyond this are a protocol error (see [`Options::max_reply`]).
    max_reply: usize,
    server: std::sync::Arc<str>,
}

impl Conn {
    pub fn connect(server: &std::sync::Arc<str>, addr: &str, opts: &Options) -> Result<Conn> {
        let (connect_timeout, read_timeout) = (opts.connect_timeout, opts.read_timeout);
        let addrs: Vec<SocketAddr> = addr.to_socket_addrs().map_err(|e| Error::io(server, e))?.collect();
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
        for a in addrs {
            match TcpStream::connect_timeout(&a, connect_timeout) {
                Ok(stream) => {
                    // Requests are written whole, so Nagle would only delay them.
                    stream.set_nodelay(true).map_err(|e| Error::io(server, e))?;
                    stream.set_read_timeout(Some(read_timeout)).map_err(|e| Error::io(server, e))?;
                    stream.set_write_timeout(Some(read_timeout)).map_err(|e| Error::io(server, e))?;
                    return Ok(Conn {
                        stream,
                        wbuf: Vec::new(),
                        rbuf: Vec::new(),
                        start: 0,
                        end: 0,
                        max_reply: opts.max_reply,
                        server: server.clone(),
                    });
                }
                Err(e) => last = e,
            }
        }
        Err(Error::io(server, last))
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    /// Writes the whole request buffer in one write (the kernel may split
    /// it, we do not) and clears it.
    pub fn flush(&mut self) -> Result<()> {
        let r = self.stream.write_all(&self.wbuf);
        self.wbuf.clear();
        r.map_err(|e| Error::io(&self.server, e))
    }

    /// True when no reply bytes are left over: the only state in which the
    /// connection may serve another request.
    pub fn is_clean(&self) -> bool {
        self.start == self.end && self.wbuf.is_empty()
    }

    /// Reads until `decode` finds a complete unit at the start of the
    /// unconsumed bytes, consumes it and returns what `decode` made of it.
    /// `decode` returns `Ok(None)` for "incomplete"; it is called again on
    /// the same bytes, grown, after each read.
    pub fn read_with<T, E: std::fmt::Display>(
        &mut self,
        mut decode: impl FnMut(&[u8]) -> std::result::Result<Option<(T, usize)>, E>,
    ) -> Result<T> {
        loop {
            if self.end > self.start {
                match decode(&self.rbuf[self.start..self.end]) {
                    Ok(Some((t, used))) => {
                        self.start += used;
                        if self.start == self.end {
                            self.start = 0;
                            self.end = 0;
                            if self.rbuf.len() > KEEP_READ_BUF {
                                self.rbuf = Vec::new();
                            }
                        }
                        return Ok(t);
                    }
                    Ok(None) => {}
                    Err(e) => {
                        return Err(Error::Protocol { server: self.server.to_string(), detail: e.to_string() });
                    }
                }
            }
            self.fill()?;
        }
    }

    fn fill(&mut self) -> Result<()> {
        if self.end - self.start > self.max_reply {
            let detail = format!("a reply of more than {} bytes (max_reply)", self.max_reply);
            return Err(Error::Protocol { server: self.server.to_string(), detail });
        }
        if self.start > 0 && self.rbuf.len() - self.end < READ_CHUNK {
            self.rbuf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.rbuf.len() - self.end < READ_CHUNK {
            let want = (self.rbuf.len() * 2).max(self.end + READ_CHUNK);
            self.rbuf.resize(want, 0);
        }
        loop {
            match self.stream.read(&mut self.rbuf[self.end..]) {
                Ok(0) => {
                    let e = io::Error::new(io::ErrorKind::UnexpectedEof, "server closed the connection");
                    return Err(Error::io(&self.server, e));
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(&self.server, e)),
            }
        }
    }
}
