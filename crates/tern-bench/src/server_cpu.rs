//! The server's CPU time, asked of the server itself before and after a
//! run, so that every result can say what an operation cost the server —
//! on this project's machines the load generator often saturates first,
//! and ops/s then say little. A Redis-protocol server answers `INFO cpu`
//! (`used_cpu_user` + `used_cpu_sys`: the whole process, as getrusage
//! counts it, in Redis, Valkey and Tern); a memcached server answers
//! `stats` (`rusage_user` + `rusage_system`). A server that does not
//! answer (one that wants AUTH, a proxy) gets no figure, and the run goes
//! on without it.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::opts::{Config, Protocol};

/// Seconds of CPU the server has used, if it says.
pub fn sample(cfg: &Config) -> Option<f64> {
    let s = TcpStream::connect((cfg.server.as_str(), cfg.port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.set_write_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut w = s.try_clone().ok()?;
    let mut r = BufReader::new(s);
    let (request, fields, end): (&[u8], [&str; 2], &str) = match cfg.protocol {
        Protocol::Redis | Protocol::Resp3 => (b"*2\r\n$4\r\nINFO\r\n$3\r\ncpu\r\n", ["used_cpu_user:", "used_cpu_sys:"], ""),
        Protocol::MemcacheText | Protocol::MemcacheMeta => (b"stats\r\n", ["STAT rusage_user ", "STAT rusage_system "], "END"),
    };
    w.write_all(request).ok()?;
    let mut text = String::new();
    if end.is_empty() {
        // A bulk string (RESP2 `$`, RESP3 verbatim `=`); an error or
        // anything else gets no figure.
        let mut head = String::new();
        r.read_line(&mut head).ok()?;
        let head = head.trim_end();
        let len: usize = head.strip_prefix('$').or_else(|| head.strip_prefix('='))?.parse().ok()?;
        let mut body = vec![0u8; len.min(1 << 20)];
        std::io::Read::read_exact(&mut r, &mut body).ok()?;
        text = String::from_utf8_lossy(&body).replace('\r', "");
    } else {
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).ok()? == 0 {
                return None;
            }
            if line.trim_end() == end {
                break;
            }
            text.push_str(line.trim_end());
            text.push('\n');
        }
    }
    fields.iter().map(|f| text.lines().find_map(|l| l.strip_prefix(f)).and_then(|v| v.trim().parse::<f64>().ok())).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn serve(reply: &'static [u8]) -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 64];
            let _ = std::io::Read::read(&mut s, &mut buf);
            s.write_all(reply).unwrap();
        });
        port
    }

    fn cfg(port: u16, protocol: Protocol) -> Config {
        Config { server: "127.0.0.1".into(), port, protocol, ..Config::default() }
    }

    #[test]
    fn reads_info_cpu_and_memcached_stats() {
        let info = b"$86\r\n# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:2.250000\r\nused_cpu_sys_children:0.000000\r\n\r\n";
        assert_eq!(sample(&cfg(serve(info), Protocol::Redis)), Some(3.75));
        let stats = b"STAT pid 1\r\nSTAT rusage_user 0.500000\r\nSTAT rusage_system 0.250000\r\nEND\r\n";
        assert_eq!(sample(&cfg(serve(stats), Protocol::MemcacheText)), Some(0.75));
        assert_eq!(sample(&cfg(serve(b"-NOAUTH Authentication required.\r\n"), Protocol::Redis)), None);
    }
}
