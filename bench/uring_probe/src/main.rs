//! uring-probe: what a loopback request costs the kernel with epoll and
//! with io_uring, outside Tern, so that issue 22's question (would io_uring
//! cut the server CPU per request that system calls and TCP cost?) is
//! answered by a measurement before the server's event loop is rebuilt.
//!
//! A single-threaded server that answers every RESP request (any command)
//! with the same 32-byte bulk string, as a GET of a 32-byte value does:
//!
//! - `epoll`: mio (Tern's own poller), edge-triggered; a readable
//!   connection is read until a read leaves room in the buffer (Tern's
//!   `io-short-read-drains`), its replies written with one `send`: two
//!   system calls per read batch, one `epoll_wait` per round.
//! - `uring`: every connection keeps one receive in flight; each completion
//!   queues that connection's send and its next receive, and one
//!   `io_uring_enter` per round submits them all and waits for the next
//!   completions: one system call per round, whatever the connections.
//!
//! Usage: `uring-probe epoll|uring PORT` (127.0.0.1; runs until killed).
//! `bench/uring_probe.sh` drives it with tern-bench and reads its CPU time.
//!
//! This crate is a measurement, not part of Tern's workspace: io_uring's
//! submissions are `unsafe` (the kernel writes into buffers the program
//! must keep alive), which Tern's crates outside tern-table forbid.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpListener;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};

const REPLY: &[u8] = b"$32\r\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n";
const READ_BUF: usize = 16 * 1024;

/// Complete requests at the start of `buf` and the bytes they take.
fn requests(buf: &[u8]) -> (usize, usize) {
    let line = |at: usize| -> Option<(i64, usize)> {
        let end = buf.get(at..)?.windows(2).position(|w| w == b"\r\n")? + at;
        let n = std::str::from_utf8(&buf[at + 1..end]).ok()?.parse().ok()?;
        Some((n, end + 2))
    };
    let (mut count, mut done) = (0, 0);
    'req: while done < buf.len() {
        let Some((n, mut at)) = line(done) else { break };
        for _ in 0..n {
            let Some((len, start)) = line(at) else { break 'req };
            at = start + len as usize + 2;
            if at > buf.len() {
                break 'req;
            }
        }
        count += 1;
        done = at;
    }
    (count, done)
}

/// A connection's parse state: bytes received and not yet whole requests.
#[derive(Default)]
struct Input {
    pending: Vec<u8>,
}

impl Input {
    /// Takes `data`, appends one reply per complete request to `out`.
    fn feed(&mut self, data: &[u8], out: &mut Vec<u8>) {
        let (n, used) = if self.pending.is_empty() {
            let (n, used) = requests(data);
            self.pending.extend_from_slice(&data[used..]);
            (n, 0)
        } else {
            self.pending.extend_from_slice(data);
            requests(&self.pending)
        };
        self.pending.drain(..used);
        for _ in 0..n {
            out.extend_from_slice(REPLY);
        }
    }
}

fn run_epoll(listener: TcpListener) {
    use mio::net::{TcpListener as MioListener, TcpStream};
    use mio::{Events, Interest, Poll, Token};
    struct Conn {
        s: TcpStream,
        input: Input,
        out: Vec<u8>,
    }
    listener.set_nonblocking(true).unwrap();
    let mut l = MioListener::from_std(listener);
    let mut poll = Poll::new().unwrap();
    poll.registry().register(&mut l, Token(usize::MAX), Interest::READABLE).unwrap();
    let mut conns: Vec<Option<Conn>> = Vec::new();
    let mut events = Events::with_capacity(1024);
    let mut buf = vec![0u8; READ_BUF];
    loop {
        poll.poll(&mut events, None).unwrap();
        for ev in events.iter() {
            if ev.token() == Token(usize::MAX) {
                while let Ok((mut s, _)) = l.accept() {
                    s.set_nodelay(true).ok();
                    let i = conns.len();
                    poll.registry().register(&mut s, Token(i), Interest::READABLE | Interest::WRITABLE).unwrap();
                    conns.push(Some(Conn { s, input: Input::default(), out: Vec::new() }));
                }
                continue;
            }
            let i = ev.token().0;
            let Some(c) = conns[i].as_mut() else { continue };
            let mut closed = false;
            if ev.is_readable() {
                loop {
                    match c.s.read(&mut buf) {
                        Ok(0) => {
                            closed = true;
                            break;
                        }
                        Ok(n) => {
                            c.input.feed(&buf[..n], &mut c.out);
                            if n < buf.len() {
                                break;
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(_) => {
                            closed = true;
                            break;
                        }
                    }
                }
            }
            while !closed && !c.out.is_empty() {
                match c.s.write(&c.out) {
                    Ok(n) => {
                        c.out.drain(..n);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(_) => closed = true,
                }
            }
            if closed {
                conns[i] = None;
            }
        }
    }
}

fn run_uring(listener: TcpListener) {
    use io_uring::{opcode, squeue, types, IoUring};
    const ACCEPT: u64 = u64::MAX;
    struct Conn {
        fd: std::net::TcpStream,
        buf: Box<[u8]>,
        input: Input,
        /// Being sent (not touched while its send is in flight).
        out: Vec<u8>,
        sent: usize,
        sending: bool,
        /// Replies made while a send was in flight.
        next: Vec<u8>,
        closed: bool,
    }
    // One thread submits, and completions' work runs when it asks for them
    // (DEFER_TASKRUN): the setup the io_uring authors advise for servers.
    let mut ring: IoUring = IoUring::builder().setup_single_issuer().setup_defer_taskrun().build(4096).unwrap();
    let lfd = listener.as_raw_fd();
    let mut conns: Vec<Conn> = Vec::new();
    let mut queue: Vec<squeue::Entry> = Vec::new();
    let accept = |q: &mut Vec<squeue::Entry>| q.push(opcode::Accept::new(types::Fd(lfd), std::ptr::null_mut(), std::ptr::null_mut()).build().user_data(ACCEPT));
    let recv = |q: &mut Vec<squeue::Entry>, i: usize, c: &mut Conn| {
        q.push(opcode::Recv::new(types::Fd(c.fd.as_raw_fd()), c.buf.as_mut_ptr(), c.buf.len() as u32).build().user_data((i as u64) << 1));
    };
    let send = |q: &mut Vec<squeue::Entry>, i: usize, c: &mut Conn| {
        c.sending = true;
        let rest = &c.out[c.sent..];
        q.push(opcode::Send::new(types::Fd(c.fd.as_raw_fd()), rest.as_ptr(), rest.len() as u32).build().user_data((i as u64) << 1 | 1));
    };
    accept(&mut queue);
    loop {
        {
            let mut sq = ring.submission();
            for e in queue.drain(..) {
                // Every buffer an entry names is the heap block of a `Conn`'s
                // `buf` (a Box, never replaced) or `out` (replaced or grown
                // only while no send is in flight, `sending`). Those blocks do
                // not move when `conns` grows, and no `Conn` is ever dropped
                // (a closed one stays, marked `closed`).
                // SAFETY: so each buffer outlives the operation that names it.
                unsafe { sq.push(&e).expect("submission queue full") };
            }
        }
        ring.submit_and_wait(1).unwrap();
        let done: Vec<(u64, i32)> = ring.completion().map(|c| (c.user_data(), c.result())).collect();
        for (ud, res) in done {
            if ud == ACCEPT {
                if res >= 0 {
                    // SAFETY: the kernel handed over this descriptor.
                    let fd = unsafe { std::net::TcpStream::from_raw_fd(res as RawFd) };
                    fd.set_nodelay(true).ok();
                    let i = conns.len();
                    conns.push(Conn { fd, buf: vec![0u8; READ_BUF].into_boxed_slice(), input: Input::default(), out: Vec::new(), sent: 0, sending: false, next: Vec::new(), closed: false });
                    recv(&mut queue, i, &mut conns[i]);
                }
                accept(&mut queue);
                continue;
            }
            let i = (ud >> 1) as usize;
            let c = &mut conns[i];
            if c.closed {
                continue;
            }
            if ud & 1 == 0 {
                if res <= 0 {
                    c.closed = true;
                    continue;
                }
                let n = res as usize;
                let mut out = std::mem::take(&mut c.next);
                c.input.feed(&c.buf[..n], &mut out);
                if c.sending {
                    c.next = out;
                } else if !out.is_empty() {
                    c.out = out;
                    c.sent = 0;
                    send(&mut queue, i, c);
                }
                recv(&mut queue, i, c);
            } else {
                c.sending = false;
                if res < 0 {
                    c.closed = true;
                    continue;
                }
                c.sent += res as usize;
                if c.sent < c.out.len() {
                    send(&mut queue, i, c);
                } else if !c.next.is_empty() {
                    c.out = std::mem::take(&mut c.next);
                    c.sent = 0;
                    send(&mut queue, i, c);
                }
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let port: u16 = args.get(2).and_then(|p| p.parse().ok()).expect("usage: uring-probe epoll|uring PORT");
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind");
    match args[1].as_str() {
        "epoll" => run_epoll(listener),
        "uring" => run_uring(listener),
        m => panic!("unknown mode {m}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_whole_requests_only() {
        let one = b"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n";
        assert_eq!(requests(one), (1, one.len()));
        let two = [&one[..], &one[..]].concat();
        assert_eq!(requests(&two), (2, two.len()));
        assert_eq!(requests(&two[..30]), (1, one.len()));
        let mut inp = Input::default();
        let mut out = Vec::new();
        for chunk in two.chunks(5) {
            inp.feed(chunk, &mut out);
        }
        assert_eq!(out.len(), 2 * REPLY.len());
        let _ = std::io::sink().write(&out);
    }
}
