//! TLS on `tls-port` and `memcache-tls-port`: real rustls clients against
//! the real binary, with certificates the test makes (rcgen). The TLS port
//! is one the test finds free (Redis's `port 0` means TLS only, so Tern
//! cannot pick it): a start that loses the port to another process tries
//! another.

mod common;

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::TestServer;
use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair, SanType};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

// ------------------------------------------------------------ certificates --

/// A CA able to sign leaves.
struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().unwrap();
        let cert = p.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    /// A leaf for the server (`localhost`, 127.0.0.1) or a client.
    fn leaf(&self, name: &str, server: bool, expired: bool) -> Leaf {
        let mut p = CertificateParams::new(if server { vec!["localhost".to_string()] } else { vec![] }).unwrap();
        if server {
            p.subject_alt_names.push(SanType::IpAddress(std::net::IpAddr::from([127, 0, 0, 1])));
        }
        p.distinguished_name.push(DnType::CommonName, name);
        p.extended_key_usages = vec![if server { ExtendedKeyUsagePurpose::ServerAuth } else { ExtendedKeyUsagePurpose::ClientAuth }];
        if expired {
            p.not_before = rcgen::date_time_ymd(2020, 1, 1);
            p.not_after = rcgen::date_time_ymd(2021, 1, 1);
        }
        let key = KeyPair::generate().unwrap();
        let cert = p.signed_by(&key, &self.cert, &self.key).unwrap();
        Leaf { cert_pem: cert.pem(), key_pem: key.serialize_pem(), key_der: key.serialize_der() }
    }
}

struct Leaf {
    cert_pem: String,
    key_pem: String,
    key_der: Vec<u8>,
}

/// A test's certificate files, removed with it.
struct Certs {
    dir: PathBuf,
    ca: Ca,
}

impl Certs {
    fn new() -> Certs {
        let dir = common::data_dir();
        std::fs::create_dir_all(&dir).unwrap();
        let ca = Ca::new("Tern test CA");
        let certs = Certs { dir, ca };
        certs.write("ca.crt", &certs.ca.cert.pem());
        let server = certs.ca.leaf("tern server", true, false);
        certs.write("server.crt", &server.cert_pem);
        certs.write("server.key", &server.key_pem);
        let client = certs.ca.leaf("tern client", false, false);
        certs.write("client.crt", &client.cert_pem);
        certs.write("client.key", &client.key_pem);
        certs
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    fn write(&self, name: &str, text: &str) -> String {
        std::fs::write(self.dir.join(name), text).unwrap();
        self.path(name)
    }

    /// `--tls-cert-file ... --tls-key-file ... --tls-ca-cert-file ...`.
    fn args(&self) -> Vec<String> {
        [("--tls-cert-file", "server.crt"), ("--tls-key-file", "server.key"), ("--tls-ca-cert-file", "ca.crt")]
            .iter()
            .flat_map(|(d, f)| [d.to_string(), self.path(f)])
            .collect()
    }

    fn client(&self) -> Option<(String, String)> {
        Some((self.path("client.crt"), self.path("client.key")))
    }
}

impl Drop for Certs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

// ----------------------------------------------------------------- server --

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A server with a plain port and a TLS port (`plain`: false for TLS
/// only, Redis's `port 0`), and its TLS port.
fn start(certs: &Certs, plain: bool, extra: &[&str]) -> (TestServer, u16) {
    for _ in 0..5 {
        let tls_port = free_port();
        let port = if plain { free_port() } else { 0 };
        let mut args: Vec<String> = vec!["--port".into(), port.to_string(), "--tls-port".into(), tls_port.to_string(), "--threads".into(), "2".into()];
        args.extend(["--dir".to_string(), certs.dir.display().to_string()]);
        args.extend(certs.args());
        args.extend(extra.iter().map(|s| s.to_string()));
        match TestServer::try_start_args(&args) {
            Ok(s) => {
                wait_ready(&s);
                return (s, tls_port);
            }
            Err(log) if log.contains("Could not create server TCP listening socket") => continue,
            Err(log) => panic!("tern-server did not start:\n{log}"),
        }
    }
    panic!("no free ports after 5 tries");
}

/// Reads the log up to the `Ready to accept connections tls` line; returns
/// the lines read.
fn wait_ready(s: &TestServer) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut lines = Vec::new();
    loop {
        let line = s.log.recv_timeout(deadline.saturating_duration_since(Instant::now())).expect("ready line");
        let done = line.contains("Ready to accept connections tls");
        lines.push(line);
        if done {
            return lines;
        }
    }
}

/// Polls the log for a line containing `what` (within 10 s).
fn log_line(s: &TestServer, what: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let line = s.log.recv_timeout(deadline.saturating_duration_since(Instant::now())).unwrap_or_else(|_| panic!("no log line with {what:?}"));
        if line.contains(what) {
            return line;
        }
    }
}

// ----------------------------------------------------------------- client --

type Tls = StreamOwned<ClientConnection, TcpStream>;

fn client_config(ca: &str, client: Option<(String, String)>) -> Arc<ClientConfig> {
    Arc::new(client_config_for(ca, client, rustls::DEFAULT_VERSIONS))
}

#[allow(deprecated)] // ring's provider: see tern-server's tls.rs
fn client_config_for(ca: &str, client: Option<(String, String)>, versions: &[&'static rustls::SupportedProtocolVersion]) -> ClientConfig {
    let mut roots = RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let b = ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots);
    match client {
        None => b.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = CertificateDer::pem_file_iter(&cert).unwrap().map(Result::unwrap).collect();
            b.with_client_auth_cert(chain, PrivateKeyDer::from_pem_file(&key).unwrap()).unwrap()
        }
    }
}

/// Connects and completes the handshake (as far as the client can tell:
/// under TLS 1.3 a refused client certificate shows at the first read).
fn connect(port: u16, ca: &str, client: Option<(String, String)>) -> io::Result<Tls> {
    let sock = TcpStream::connect(("127.0.0.1", port))?;
    sock.set_read_timeout(Some(Duration::from_secs(10)))?;
    let conn = ClientConnection::new(client_config(ca, client), ServerName::try_from("localhost").unwrap()).unwrap();
    let mut tls = StreamOwned::new(conn, sock);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock)?;
    }
    Ok(tls)
}

/// Sends a command (space-separated words) and reads one reply line (a
/// bulk's header and body for `$`).
fn cmd(t: &mut Tls, line: &str) -> io::Result<String> {
    let parts: Vec<&str> = line.split(' ').collect();
    let mut b = format!("*{}\r\n", parts.len());
    for p in &parts {
        b.push_str(&format!("${}\r\n{}\r\n", p.len(), p));
    }
    t.write_all(b.as_bytes())?;
    t.flush()?;
    read_reply(t)
}

fn read_line(t: &mut impl Read) -> io::Result<String> {
    let mut out = Vec::new();
    let mut b = [0u8; 1];
    while !out.ends_with(b"\r\n") {
        if t.read(&mut b)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        out.push(b[0]);
    }
    out.truncate(out.len() - 2);
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn read_reply(t: &mut Tls) -> io::Result<String> {
    let head = read_line(t)?;
    if let Some(n) = head.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()) {
        let mut body = vec![0; n + 2];
        t.read_exact(&mut body)?;
        body.truncate(n);
        return Ok(String::from_utf8_lossy(&body).into_owned());
    }
    Ok(head)
}

/// PING over a new TLS connection: Ok when the server served it.
fn tls_ping(port: u16, ca: &str, client: Option<(String, String)>) -> io::Result<String> {
    let mut t = connect(port, ca, client)?;
    cmd(&mut t, "PING")
}

/// Waits (polling, 10 s at most) until the server closes `s`; returns how
/// long that took.
fn closed_within(s: &mut TcpStream) -> Duration {
    let start = Instant::now();
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let mut b = [0u8; 512];
    loop {
        match s.read(&mut b) {
            Ok(0) => return start.elapsed(),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(_) => return start.elapsed(),
        }
        assert!(start.elapsed() < Duration::from_secs(10), "the server did not close the connection");
    }
}

// ------------------------------------------------------------------ tests --

#[test]
fn ping_set_get_over_tls_share_the_keyspace_with_the_plain_port() {
    let certs = Certs::new();
    let (s, tls_port) = start(&certs, true, &[]);
    let ca = certs.path("ca.crt");
    let mut t = connect(tls_port, &ca, certs.client()).unwrap();
    assert_eq!(cmd(&mut t, "PING").unwrap(), "+PONG");
    assert_eq!(cmd(&mut t, "SET k hello").unwrap(), "+OK");
    assert_eq!(cmd(&mut t, "GET k").unwrap(), "hello");
    // A reply larger than rustls's 64 KiB record buffer, and than one
    // socket write: it goes out through several rounds of records.
    let big = "x".repeat(300_000);
    assert_eq!(cmd(&mut t, &format!("SET big {big}")).unwrap(), "+OK");
    assert_eq!(cmd(&mut t, "GET big").unwrap(), big);
    // A pipeline in one write.
    t.write_all(b"*1\r\n$4\r\nPING\r\n".repeat(100).as_slice()).unwrap();
    for _ in 0..100 {
        assert_eq!(read_reply(&mut t).unwrap(), "+PONG");
    }
    // The plain port sees the same data; CLIENT LIST's laddr is the TLS port.
    let mut c = s.conn();
    let v: String = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(v, "hello");
    let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut c).unwrap();
    assert!(list.contains(&format!("laddr=127.0.0.1:{tls_port}")), "{list}");
    // CONFIG GET shows the TLS directives.
    let got: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("tls-port").query(&mut c).unwrap();
    assert_eq!(got, vec!["tls-port".to_string(), tls_port.to_string()]);
}

#[test]
fn tls_only_with_port_0_and_tls_1_2() {
    let certs = Certs::new();
    let (_s, tls_port) = start(&certs, false, &["--tls-protocols", "TLSv1.2", "--tls-ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256"]);
    let mut t = connect(tls_port, &certs.path("ca.crt"), certs.client()).unwrap();
    assert_eq!(t.conn.protocol_version(), Some(rustls::ProtocolVersion::TLSv1_2));
    assert_eq!(t.conn.negotiated_cipher_suite().map(|s| s.suite()), Some(rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256));
    assert_eq!(cmd(&mut t, "PING").unwrap(), "+PONG");
    assert_eq!(cmd(&mut t, "CONFIG GET port").unwrap(), "*2");
}

#[test]
fn client_certificates_required_optional_or_not_asked_for() {
    let certs = Certs::new();
    let ca = certs.path("ca.crt");
    // Redis's default: yes. No certificate, no service.
    let (_s, port) = start(&certs, false, &[]);
    assert!(tls_ping(port, &ca, None).is_err());
    assert_eq!(tls_ping(port, &ca, certs.client()).unwrap(), "+PONG");
    // An untrusted one (another CA), and an expired one, are refused.
    let other = Ca::new("someone else").leaf("intruder", false, false);
    let (crt, key) = (certs.write("other.crt", &other.cert_pem), certs.write("other.key", &other.key_pem));
    assert!(tls_ping(port, &ca, Some((crt, key))).is_err());
    let expired = certs.ca.leaf("old client", false, true);
    let (crt, key) = (certs.write("expired.crt", &expired.cert_pem), certs.write("expired.key", &expired.key_pem));
    assert!(tls_ping(port, &ca, Some((crt.clone(), key.clone()))).is_err());
    // Nothing else was disturbed.
    assert_eq!(tls_ping(port, &ca, certs.client()).unwrap(), "+PONG");

    let (_s, port) = start(&certs, false, &["--tls-auth-clients", "optional"]);
    assert_eq!(tls_ping(port, &ca, None).unwrap(), "+PONG");
    assert!(tls_ping(port, &ca, Some((crt, key))).is_err(), "a certificate shown must verify");
    let (_s, port) = start(&certs, false, &["--tls-auth-clients", "no"]);
    assert_eq!(tls_ping(port, &ca, None).unwrap(), "+PONG");
}

#[test]
fn a_plain_client_on_the_tls_port_is_closed_without_disturbing_others() {
    let certs = Certs::new();
    let (s, port) = start(&certs, true, &[]);
    let ca = certs.path("ca.crt");
    let mut good = connect(port, &ca, certs.client()).unwrap();
    assert_eq!(cmd(&mut good, "SET a 1").unwrap(), "+OK");
    let mut plain = TcpStream::connect(("127.0.0.1", port)).unwrap();
    plain.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
    closed_within(&mut plain);
    assert!(log_line(&s, "Error accepting a client connection").contains(&format!("laddr=127.0.0.1:{port}")));
    assert_eq!(cmd(&mut good, "GET a").unwrap(), "1");
    // A TLS client on the plain port gets what any client sending such
    // bytes gets (no TLS answer): its handshake fails, the server goes on.
    let sock = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let conn = ClientConnection::new(client_config(&ca, certs.client()), ServerName::try_from("localhost").unwrap()).unwrap();
    let mut wrong = StreamOwned::new(conn, sock);
    assert!(wrong.conn.complete_io(&mut wrong.sock).and_then(|_| wrong.conn.complete_io(&mut wrong.sock)).is_err());
    assert_eq!(cmd(&mut good, "PING").unwrap(), "+PONG");
}

#[test]
fn a_stalled_handshake_is_closed_after_the_timeout() {
    let certs = Certs::new();
    let (s, port) = start(&certs, true, &["--tls-handshake-timeout", "300"]);
    let ca = certs.path("ca.crt");
    let mut good = connect(port, &ca, certs.client()).unwrap();
    // Says nothing at all; or stops half-way through a ClientHello.
    let mut silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut half = TcpStream::connect(("127.0.0.1", port)).unwrap();
    half.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01]).unwrap();
    let took = closed_within(&mut silent);
    closed_within(&mut half);
    assert!(took >= Duration::from_millis(250), "closed after {took:?}");
    assert!(log_line(&s, "Error accepting a client connection").contains("timed out"));
    // An established connection idle past the timeout is not affected.
    assert_eq!(cmd(&mut good, "PING").unwrap(), "+PONG");
    let mut c = s.conn();
    let n: String = redis::cmd("INFO").arg("clients").query(&mut c).unwrap();
    assert!(n.contains("connected_clients:2"), "{n}");
}

#[test]
fn config_set_reloads_the_certificate_for_new_connections_only() {
    let certs = Certs::new();
    let (s, port) = start(&certs, true, &[]);
    let ca = certs.path("ca.crt");
    let mut old = connect(port, &ca, certs.client()).unwrap();
    let first = old.conn.peer_certificates().unwrap()[0].clone();
    let next = certs.ca.leaf("tern server 2", true, false);
    let crt = certs.write("server2.crt", &next.cert_pem);
    let key = certs.write("server2.key", &next.key_pem);
    let mut c = s.conn();
    let r: String = redis::cmd("CONFIG").arg("SET").arg("tls-cert-file").arg(&crt).arg("tls-key-file").arg(&key).query(&mut c).unwrap();
    assert_eq!(r, "OK");
    let mut new = connect(port, &ca, certs.client()).unwrap();
    let second = new.conn.peer_certificates().unwrap()[0].clone();
    assert_ne!(first, second);
    assert_eq!(second.as_ref(), CertificateDer::from_pem_file(&crt).unwrap().as_ref());
    assert_eq!(cmd(&mut old, "PING").unwrap(), "+PONG", "the connection made before the reload lives on");
    assert_eq!(cmd(&mut new, "PING").unwrap(), "+PONG");

    // A file that does not load: Redis's error, the old context kept.
    let bad = certs.write("bad.crt", "not a certificate\n");
    let e = redis::cmd("CONFIG").arg("SET").arg("tls-cert-file").arg(&bad).query::<String>(&mut c).unwrap_err();
    assert_eq!(
        e.to_string(),
        "An error was signalled by the server - ResponseError: CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs."
    );
    let got: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("tls-cert-file").query(&mut c).unwrap();
    assert_eq!(got[1], crt);
    let mut after = connect(port, &ca, certs.client()).unwrap();
    assert_eq!(after.conn.peer_certificates().unwrap()[0], second);
    assert_eq!(cmd(&mut after, "PING").unwrap(), "+PONG");
    // tls-auth-clients can be changed at run time too.
    let r: String = redis::cmd("CONFIG").arg("SET").arg("tls-auth-clients").arg("no").query(&mut c).unwrap();
    assert_eq!(r, "OK");
    assert_eq!(tls_ping(port, &ca, None).unwrap(), "+PONG");
    // A start-up-only directive is refused as Redis refuses one.
    let e = redis::cmd("CONFIG").arg("SET").arg("tls-replication").arg("yes").query::<String>(&mut c).unwrap_err();
    assert!(e.to_string().contains("Tern does not replicate over TLS"), "{e}");
}

#[test]
fn memcached_protocols_over_tls() {
    let certs = Certs::new();
    let mut args: Vec<String> = ["--port", "0", "--memcache-tls-port", "1", "--threads", "1"].iter().map(|s| s.to_string()).collect();
    args.extend(certs.args());
    args.extend(["--tls-auth-clients".to_string(), "optional".to_string()]);
    let s = TestServer::start_args(&args);
    let mc_port: u16 = log_line(&s, "memcache TLS port=").rsplit('=').next().unwrap().trim_end_matches('.').parse().unwrap();
    let mut t = connect(mc_port, &certs.path("ca.crt"), None).unwrap();
    t.write_all(b"set k 5 0 5\r\nhello\r\nget k\r\nmn\r\n").unwrap();
    assert_eq!(read_line(&mut t).unwrap(), "STORED");
    assert_eq!(read_line(&mut t).unwrap(), "VALUE k 5 5");
    assert_eq!(read_line(&mut t).unwrap(), "hello");
    assert_eq!(read_line(&mut t).unwrap(), "END");
    assert_eq!(read_line(&mut t).unwrap(), "MN");
    let v: String = redis::cmd("GET").arg("k").query(&mut s.conn()).unwrap();
    assert_eq!(v, "hello");
}

#[test]
fn an_encrypted_key_opens_with_its_pass() {
    let certs = Certs::new();
    let leaf = certs.ca.leaf("tern server", true, false);
    let info = pkcs8::PrivateKeyInfo::try_from(leaf.key_der.as_slice()).unwrap();
    let enc = info.encrypt(rand::rngs::OsRng, b"s3cret").unwrap();
    let pem = enc.to_pem("ENCRYPTED PRIVATE KEY", pkcs8::LineEnding::LF).unwrap();
    let key = certs.write("enc.key", &pem);
    let crt = certs.write("enc.crt", &leaf.cert_pem);
    let (_s, port) = start(&certs, false, &["--tls-cert-file", &crt, "--tls-key-file", &key, "--tls-key-file-pass", "s3cret"]);
    assert_eq!(tls_ping(port, &certs.path("ca.crt"), certs.client()).unwrap(), "+PONG");
    // A wrong pass stops start-up.
    let (code, out) = refused(&certs, &["--tls-port", "1", "--tls-cert-file", &crt, "--tls-key-file", &key, "--tls-key-file-pass", "nope"]);
    assert_eq!(code, Some(1));
    assert!(out.contains("can't decrypt the private key"), "{out}");
}

/// Runs the server with `args` expecting it to refuse to start: its exit
/// code and what it printed.
fn refused(certs: &Certs, args: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tern-server"))
        .args(["--port", "0", "--dir", &certs.dir.display().to_string()])
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn choices_rustls_cannot_honour_stop_start_up() {
    let certs = Certs::new();
    let fatal = [
        (&["--tls-protocols", "TLSv1.1 TLSv1.2"][..], "tls-protocols", "TLSv1.1 is not supported"),
        (&["--tls-protocols", "TLSv1"], "tls-protocols", "not supported"),
        (&["--tls-ciphers", "AES128-SHA"], "tls-ciphers", "not supported"),
        (&["--tls-ciphers", "DEFAULT:@STRENGTH"], "tls-ciphers", "not supported"),
        (&["--tls-ciphersuites", "TLS_AES_128_CCM_SHA256"], "tls-ciphersuites", "not supported"),
        (&["--tls-replication", "yes"], "tls-replication", "Tern does not replicate over TLS"),
        (&["--tls-cluster", "yes"], "tls-cluster", "does not encrypt its cluster bus"),
        (&["--tls-auth-clients", "maybe"], "tls-auth-clients", "must be one of"),
    ];
    for (args, directive, why) in fatal {
        let (code, out) = refused(&certs, args);
        assert_eq!(code, Some(1), "{args:?}: {out}");
        assert!(out.contains("FATAL CONFIG FILE ERROR") && out.contains(&format!("(directive '{directive}')")) && out.contains(why), "{args:?}: {out}");
    }
    // Files that do not load, or a missing CA while clients must show a
    // certificate, stop it too (no TLS port opens without its context).
    let ca = certs.path("ca.crt");
    let crt = certs.path("server.crt");
    let key = certs.path("server.key");
    let cases: [(&[&str], &str); 4] = [
        (&["--tls-port", "1", "--tls-key-file", &key, "--tls-ca-cert-file", &ca], "tls-cert-file is not set"),
        (&["--tls-port", "1", "--tls-cert-file", "/nonexistent.crt", "--tls-key-file", &key, "--tls-ca-cert-file", &ca], "can't read the certificate"),
        (&["--tls-port", "1", "--tls-cert-file", &crt, "--tls-key-file", &key], "neither tls-ca-cert-file nor tls-ca-cert-dir"),
        (&["--tls-port", "1", "--tls-cert-file", &crt, "--tls-key-file", &ca, "--tls-ca-cert-file", &ca], "no private key"),
    ];
    for (args, why) in cases {
        let (code, out) = refused(&certs, args);
        assert_eq!(code, Some(1), "{args:?}: {out}");
        assert!(out.contains("Failed to configure TLS") && out.contains(why), "{args:?}: {out}");
    }
}

/// Two connections sharing one client config (rustls's client keeps
/// sessions in memory by default, so the second may resume the first's):
/// how the second's handshake went.
fn second_handshake(port: u16, certs: &Certs, tls12: bool) -> rustls::HandshakeKind {
    let version = if tls12 { &rustls::version::TLS12 } else { &rustls::version::TLS13 };
    run_twice(port, Arc::new(client_config_for(&certs.path("ca.crt"), certs.client(), &[version])))
}

fn run_twice(port: u16, cfg: Arc<ClientConfig>) -> rustls::HandshakeKind {
    let mut kind = None;
    for _ in 0..2 {
        let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let conn = ClientConnection::new(cfg.clone(), ServerName::try_from("localhost").unwrap()).unwrap();
        let mut t = StreamOwned::new(conn, sock);
        // The PING's reply also brings the TLS 1.3 tickets along.
        assert_eq!(cmd(&mut t, "PING").unwrap(), "+PONG");
        kind = t.conn.handshake_kind();
    }
    kind.unwrap()
}

#[test]
fn sessions_resume_unless_caching_is_off_or_they_are_too_old() {
    use rustls::HandshakeKind::{Full, Resumed};
    let certs = Certs::new();
    let (s, port) = start(&certs, true, &[]);
    assert_eq!(second_handshake(port, &certs, false), Resumed, "TLS 1.3 ticket");
    assert_eq!(second_handshake(port, &certs, true), Resumed, "TLS 1.2");
    let mut c = s.conn();
    let _: () = redis::cmd("CONFIG").arg("SET").arg("tls-session-cache-timeout").arg("0").query(&mut c).unwrap();
    assert_eq!(second_handshake(port, &certs, false), Full, "a ticket older than the timeout");
    let _: () = redis::cmd("CONFIG").arg("SET").arg("tls-session-cache-timeout").arg("300").arg("tls-session-caching").arg("no").query(&mut c).unwrap();
    assert_eq!(second_handshake(port, &certs, false), Full);
    assert_eq!(second_handshake(port, &certs, true), Full);
}

#[test]
fn a_ca_directory_serves_as_the_trust_list() {
    let certs = Certs::new();
    let dir = certs.dir.join("cas");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ca.pem"), certs.ca.cert.pem()).unwrap();
    std::fs::write(dir.join("README"), "not a certificate").unwrap();
    let dir = dir.display().to_string();
    let (_s, port) = start(&certs, false, &["--tls-ca-cert-file", "", "--tls-ca-cert-dir", &dir]);
    assert_eq!(tls_ping(port, &certs.path("ca.crt"), certs.client()).unwrap(), "+PONG");
    assert!(tls_ping(port, &certs.path("ca.crt"), None).is_err());
}
