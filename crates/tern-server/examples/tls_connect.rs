//! A TLS connection storm for bench/tls.py: `--threads` blocking threads
//! each connect, complete a full handshake (no resumption) with a client
//! certificate, send PING, read +PONG and close, until `-n` connections
//! are done; prints `connections/s N`. rustls's client costs a fraction of
//! OpenSSL 3.0's per handshake, so on one client core it keeps a server
//! busy where `redis-benchmark -k 0` is the bottleneck itself.
//!
//!     cargo build --release -p tern-server --example tls_connect
//!     target/release/examples/tls_connect --port 6380 --ca ca.crt --cert client.crt --key client.key -n 20000 --threads 8

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rustls::client::Resumption;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

fn arg(args: &[String], name: &str, default: Option<&str>) -> String {
    args.windows(2)
        .find(|w| w[0] == name)
        .map(|w| w[1].clone())
        .or_else(|| default.map(str::to_string))
        .unwrap_or_else(|| panic!("{name} is needed"))
}

#[allow(deprecated)] // ring's provider, as the server's
fn config(ca: &str, cert: &str, key: &str) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(ca).expect("ca") {
        roots.add(c.expect("ca pem")).expect("ca cert");
    }
    let chain = CertificateDer::pem_file_iter(cert).expect("cert").map(|c| c.expect("cert pem")).collect();
    // X25519 first, as OpenSSL's and browsers' clients offer it (ring's
    // list starts with P-384, several times dearer for both sides).
    let kx = rustls::crypto::ring::kx_group::X25519;
    let mut provider = rustls::crypto::ring::default_provider();
    provider.kx_groups.retain(|g| g.name() != kx.name());
    provider.kx_groups.insert(0, kx);
    let mut c = ClientConfig::builder_with_provider(Arc::new(provider))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, PrivateKeyDer::from_pem_file(key).expect("key"))
        .expect("client cert");
    c.resumption = Resumption::disabled();
    Arc::new(c)
}

fn one(cfg: &Arc<ClientConfig>, port: u16) -> std::io::Result<()> {
    let sock = TcpStream::connect(("127.0.0.1", port))?;
    sock.set_nodelay(true)?;
    let conn = ClientConnection::new(cfg.clone(), ServerName::try_from("127.0.0.1").expect("name")).map_err(std::io::Error::other)?;
    let mut tls = StreamOwned::new(conn, sock);
    tls.write_all(b"*1\r\n$4\r\nPING\r\n")?;
    let mut b = [0u8; 7];
    tls.read_exact(&mut b)?;
    if &b != b"+PONG\r\n" {
        return Err(std::io::Error::other("not PONG"));
    }
    tls.conn.send_close_notify();
    let _ = tls.conn.complete_io(&mut tls.sock);
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let port: u16 = arg(&args, "--port", None).parse().expect("port");
    let n: u64 = arg(&args, "-n", Some("10000")).parse().expect("-n");
    let threads: usize = arg(&args, "--threads", Some("8")).parse().expect("threads");
    let cfg = config(&arg(&args, "--ca", None), &arg(&args, "--cert", None), &arg(&args, "--key", None));
    let left = Arc::new(AtomicU64::new(n));
    let failed = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (cfg, left, failed) = (cfg.clone(), left.clone(), failed.clone());
            std::thread::spawn(move || {
                while left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| l.checked_sub(1)).is_ok() {
                    if one(&cfg, port).is_err() {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        let _ = h.join();
    }
    let secs = start.elapsed().as_secs_f64();
    let failed = failed.load(Ordering::Relaxed);
    println!("connections/s {:.0} failed {}", (n - failed) as f64 / secs, failed);
}
