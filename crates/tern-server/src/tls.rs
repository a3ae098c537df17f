//! TLS (rustls, ring provider) below the protocol parsers: a connection
//! accepted on a TLS listener (`tls-port`, `memcache-tls-port`) carries a
//! rustls `ServerConnection` beside its socket, and the worker reads
//! plaintext out of it into the same read buffer a plain connection reads
//! into, and writes the same reply buffer through it. Nothing above the
//! connection (the parsers, tern-commands) knows which it is.
//!
//! ```text
//!  socket ─read_tls─► rustls (deframe, decrypt) ─reader─► rbuf ─► parsers, commands
//!  socket ◄write_tls─ rustls (encrypt, ≤ 64 KiB of records) ◄writer─ OutBuf's slices
//! ```
//!
//! Replies are not copied into a staging buffer first: the reply buffer's
//! slices (its owned bytes and the stored values it references) are handed
//! to rustls's writer, which encrypts them straight into its records, one
//! copy as encryption needs anyway. When rustls's record buffer is full
//! (64 KiB), the records go to the socket before more is handed over, so
//! a large reply never has a second whole copy in memory.
//!
//! Memory while handshaking is bounded by rustls (64 KiB at most for a
//! handshake message being joined, a 4 KiB read at a time, 64 KiB of
//! outgoing records) and time by `tls-handshake-timeout`.
//!
//! [`Tls`] holds the current `ServerConfig`: start-up builds it (a bad
//! file or an unsupported choice stops the server), CONFIG SET of a
//! `tls-*` directive builds a new one and swaps it in for new connections;
//! established connections keep the one they started with.

use std::collections::{HashMap, VecDeque};
use std::io::{self, IoSlice, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use parking_lot::{Mutex, RwLock};
use rustls::crypto::ring::cipher_suite as cs;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::danger::ClientCertVerifier;
use rustls::server::{NoServerSessionStorage, ProducesTickets, StoresServerSessions, WebPkiClientVerifier};
use rustls::{RootCertStore, ServerConfig, ServerConnection, SupportedCipherSuite};
use tern_config::tls::{parse_ciphers, parse_ciphersuites, parse_protocols, Tls12Cipher, Tls13Suite};
use tern_config::{Config, TlsAuthClients};

/// Why a TLS context could not be built (logged; at start-up it stops the
/// server, on CONFIG SET the old context stays).
#[derive(Debug)]
pub enum TlsError {
    NoCertFile,
    NoKeyFile,
    /// Client certificates are asked for and no CA says which to trust.
    NoCa,
    Read { what: &'static str, path: String, err: io::Error },
    /// The file holds no PEM section of the kind wanted.
    Pem { what: &'static str, path: String, why: String },
    /// The key is encrypted and no (or a wrong) `tls-key-file-pass` opens it.
    KeyPass { path: String, why: String },
    /// A directive's words (checked at parsing too).
    Choice { directive: &'static str, why: String },
    Verifier(rustls::server::VerifierBuilderError),
    Rustls(rustls::Error),
}

impl std::fmt::Display for TlsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TlsError::NoCertFile => write!(f, "tls-cert-file is not set"),
            TlsError::NoKeyFile => write!(f, "tls-key-file is not set"),
            TlsError::NoCa => write!(f, "tls-auth-clients asks for client certificates, and neither tls-ca-cert-file nor tls-ca-cert-dir says which to trust"),
            TlsError::Read { what, path, err } => write!(f, "can't read the {what} {path}: {err}"),
            TlsError::Pem { what, path, why } => write!(f, "no {what} in {path}: {why}"),
            TlsError::KeyPass { path, why } => write!(f, "can't decrypt the private key {path}: {why}"),
            TlsError::Choice { directive, why } => write!(f, "{directive}: {why}"),
            TlsError::Verifier(e) => write!(f, "the CA certificates can't verify clients: {e}"),
            TlsError::Rustls(e) => write!(f, "{e}"),
        }
    }
}

/// The directives the TLS context is built from: CONFIG SET of any of
/// them builds a new one (Redis's `applyTlsCfg` set, with
/// `tls-auth-clients`, which rustls keeps in the context too).
pub const CONTEXT_DIRECTIVES: &[&str] = &[
    "tls-cert-file",
    "tls-key-file",
    "tls-key-file-pass",
    "tls-ca-cert-file",
    "tls-ca-cert-dir",
    "tls-auth-clients",
    "tls-protocols",
    "tls-ciphersuites",
    "tls-ciphers",
    "tls-prefer-server-ciphers",
    "tls-session-caching",
    "tls-session-cache-size",
    "tls-session-cache-timeout",
];

/// The TLS context new connections start from.
#[derive(Default)]
pub struct Tls {
    current: RwLock<Option<Arc<ServerConfig>>>,
}

impl Tls {
    /// Builds the context from `cfg` and makes it the one new connections
    /// get; on an error the old one stays.
    pub fn configure(&self, cfg: &Config) -> Result<(), TlsError> {
        let sc = build(cfg)?;
        *self.current.write() = Some(sc);
        Ok(())
    }

    /// A server-side TLS session for a connection just accepted.
    pub fn accept(&self) -> Option<ServerConnection> {
        let sc = self.current.read().clone()?;
        ServerConnection::new(sc).ok()
    }
}

/// The rustls suite of each name `tern_config::tls` knows.
fn tls13(s: Tls13Suite) -> SupportedCipherSuite {
    match s {
        Tls13Suite::Aes256GcmSha384 => cs::TLS13_AES_256_GCM_SHA384,
        Tls13Suite::Chacha20Poly1305Sha256 => cs::TLS13_CHACHA20_POLY1305_SHA256,
        Tls13Suite::Aes128GcmSha256 => cs::TLS13_AES_128_GCM_SHA256,
    }
}

fn tls12(c: Tls12Cipher) -> SupportedCipherSuite {
    match c {
        Tls12Cipher::EcdheEcdsaAes256GcmSha384 => cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        Tls12Cipher::EcdheEcdsaAes128GcmSha256 => cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        Tls12Cipher::EcdheEcdsaChacha20Poly1305 => cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        Tls12Cipher::EcdheRsaAes256GcmSha384 => cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        Tls12Cipher::EcdheRsaAes128GcmSha256 => cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        Tls12Cipher::EcdheRsaChacha20Poly1305 => cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    }
}

/// Builds a `ServerConfig` from the `tls-*` directives.
pub fn build(cfg: &Config) -> Result<Arc<ServerConfig>, TlsError> {
    if cfg.tls_cert_file.is_empty() {
        return Err(TlsError::NoCertFile);
    }
    if cfg.tls_key_file.is_empty() {
        return Err(TlsError::NoKeyFile);
    }
    let choice = |directive| move |why| TlsError::Choice { directive, why };
    let protocols = parse_protocols(&cfg.tls_protocols).map_err(choice("tls-protocols"))?;
    let mut suites = Vec::new();
    if protocols.tls13 {
        suites.extend(parse_ciphersuites(&cfg.tls_ciphersuites).map_err(choice("tls-ciphersuites"))?.into_iter().map(tls13));
    }
    if protocols.tls12 {
        suites.extend(parse_ciphers(&cfg.tls_ciphers).map_err(choice("tls-ciphers"))?.into_iter().map(tls12));
    }
    let mut versions = Vec::new();
    if protocols.tls13 {
        versions.push(&rustls::version::TLS13);
    }
    if protocols.tls12 {
        versions.push(&rustls::version::TLS12);
    }
    let provider = Arc::new(CryptoProvider { cipher_suites: suites, kx_groups: KX_GROUPS.to_vec(), ..ring_provider() });

    let chain = load_certs("certificate", &cfg.tls_cert_file)?;
    let key = load_key(&cfg.tls_key_file, &cfg.tls_key_file_pass)?;
    let verifier: Arc<dyn ClientCertVerifier> = match cfg.tls_auth_clients {
        TlsAuthClients::No => WebPkiClientVerifier::no_client_auth(),
        auth => {
            let roots = load_roots(cfg)?;
            let b = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone());
            let b = if auth == TlsAuthClients::Optional { b.allow_unauthenticated() } else { b };
            b.build().map_err(TlsError::Verifier)?
        }
    };
    let mut sc = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(TlsError::Rustls)?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .map_err(TlsError::Rustls)?;
    sc.ignore_client_order = cfg.tls_prefer_server_ciphers;
    if cfg.tls_session_caching {
        sc.session_storage = Arc::new(SessionCache::new(cfg.tls_session_cache_size, cfg.tls_session_cache_timeout));
        let inner = rustls::crypto::ring::Ticketer::new().map_err(TlsError::Rustls)?;
        sc.ticketer = Arc::new(Tickets { inner, timeout: cfg.tls_session_cache_timeout });
    } else {
        sc.session_storage = Arc::new(NoServerSessionStorage {});
        sc.send_tls13_tickets = 0;
    }
    Ok(Arc::new(sc))
}

/// Key exchange groups, best first. ring's own list (rustls 0.23.48) puts
/// P-384 first, which ring computes with generic bignum code: about 1 ms of
/// server CPU a handshake where X25519 takes tens of µs (perf, a rustls
/// client storm). X25519 first is OpenSSL's and the browsers' order too.
const KX_GROUPS: &[&dyn rustls::crypto::SupportedKxGroup] =
    &[rustls::crypto::ring::kx_group::X25519, rustls::crypto::ring::kx_group::SECP256R1, rustls::crypto::ring::kx_group::SECP384R1];

/// rustls's ring provider. Deprecated since rustls 0.23.48 because ring has
/// no post-quantum key exchange (X25519MLKEM768 needs aws-lc-rs, which
/// needs cmake and nasm to build); its classical groups (X25519, P-256,
/// P-384) are what redis-server over OpenSSL 3.0 offers too.
#[allow(deprecated)]
fn ring_provider() -> CryptoProvider {
    rustls::crypto::ring::default_provider()
}

fn read_file(what: &'static str, path: &str) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|err| TlsError::Read { what, path: path.into(), err })
}

fn load_certs(what: &'static str, path: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = read_file(what, path)?;
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(&pem).collect::<Result<_, _>>().map_err(|e| TlsError::Pem { what, path: path.into(), why: e.to_string() })?;
    if certs.is_empty() {
        return Err(TlsError::Pem { what, path: path.into(), why: "no CERTIFICATE section".into() });
    }
    Ok(certs)
}

/// The CAs of `tls-ca-cert-file` and of every PEM file in `tls-ca-cert-dir`
/// (OpenSSL's hashed directories hold such files; other files are skipped).
fn load_roots(cfg: &Config) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    let mut add = |certs: Vec<CertificateDer<'static>>, path: &str| {
        for c in certs {
            roots.add(c).map_err(|e| TlsError::Pem { what: "CA certificate", path: path.into(), why: e.to_string() })?;
        }
        Ok::<_, TlsError>(())
    };
    if !cfg.tls_ca_cert_file.is_empty() {
        add(load_certs("CA certificate", &cfg.tls_ca_cert_file)?, &cfg.tls_ca_cert_file)?;
    }
    if !cfg.tls_ca_cert_dir.is_empty() {
        let dir = std::fs::read_dir(&cfg.tls_ca_cert_dir).map_err(|err| TlsError::Read { what: "CA directory", path: cfg.tls_ca_cert_dir.clone(), err })?;
        for entry in dir.flatten() {
            let path = entry.path();
            if !path.is_file() {
                continue;
            }
            let Ok(pem) = std::fs::read(&path) else { continue };
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem).filter_map(Result::ok).collect();
            add(certs, &path.display().to_string())?;
        }
    }
    if roots.is_empty() {
        return Err(TlsError::NoCa);
    }
    Ok(roots)
}

const ENCRYPTED_BEGIN: &str = "-----BEGIN ENCRYPTED PRIVATE KEY-----";
const ENCRYPTED_END: &str = "-----END ENCRYPTED PRIVATE KEY-----";

/// The private key of `tls-key-file`: PKCS#8, PKCS#1 (RSA) or SEC1 (EC) in
/// PEM, or PKCS#8 encrypted with `tls-key-file-pass` (PBES2, as
/// `openssl pkcs8 -topk8` and OpenSSL 3's `genpkey -aes256` write it). The
/// older OpenSSL-only encryption (`Proc-Type: 4,ENCRYPTED`) is refused
/// with the command that converts it.
fn load_key(path: &str, pass: &str) -> Result<PrivateKeyDer<'static>, TlsError> {
    let pem = read_file("private key", path)?;
    let text = String::from_utf8_lossy(&pem);
    let pass_err = |why: String| TlsError::KeyPass { path: path.into(), why };
    if let (Some(b), Some(e)) = (text.find(ENCRYPTED_BEGIN), text.find(ENCRYPTED_END)) {
        if pass.is_empty() {
            return Err(pass_err("it is encrypted and tls-key-file-pass is not set".into()));
        }
        let block = text.get(b..e + ENCRYPTED_END.len()).unwrap_or_default();
        let (_, doc) = pkcs8::Document::from_pem(block).map_err(|e| pass_err(e.to_string()))?;
        let enc = pkcs8::EncryptedPrivateKeyInfo::try_from(doc.as_bytes()).map_err(|e| pass_err(e.to_string()))?;
        let key = enc.decrypt(pass.as_bytes()).map_err(|e| pass_err(format!("{e} (wrong tls-key-file-pass?)")))?;
        return Ok(PrivateKeyDer::Pkcs8(key.as_bytes().to_vec().into()));
    }
    if text.contains("Proc-Type: 4,ENCRYPTED") {
        return Err(pass_err("it is encrypted in OpenSSL's legacy PEM form; convert it with `openssl pkcs8 -topk8 -v2 aes-256-cbc`".into()));
    }
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| TlsError::Pem { what: "private key", path: path.into(), why: e.to_string() })
}

/// Session tickets (`tls-session-caching`), as OpenSSL issues them under
/// Redis: the session travels encrypted in the ticket, so a TLS 1.3
/// connection's two tickets cost the server no memory (stored sessions
/// cost about 900 bytes a connection). rustls's ticketer (ChaCha20-Poly1305,
/// keys rotated every 6 hours) seals them; each also carries its issue
/// time, so it resumes only within `tls-session-cache-timeout`.
#[derive(Debug)]
struct Tickets {
    inner: Arc<dyn ProducesTickets>,
    timeout: Duration,
}

fn unix_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl ProducesTickets for Tickets {
    fn enabled(&self) -> bool {
        self.inner.enabled()
    }

    fn lifetime(&self) -> u32 {
        u32::try_from(self.timeout.as_secs()).unwrap_or(u32::MAX).min(self.inner.lifetime())
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        let mut p = Vec::with_capacity(8 + plain.len());
        p.extend_from_slice(&unix_secs().to_be_bytes());
        p.extend_from_slice(plain);
        self.inner.encrypt(&p)
    }

    fn decrypt(&self, cipher: &[u8]) -> Option<Vec<u8>> {
        let p = self.inner.decrypt(cipher)?;
        let (at, rest) = p.split_at_checked(8)?;
        let at = u64::from_be_bytes(at.try_into().ok()?);
        (unix_secs().saturating_sub(at) < self.timeout.as_secs()).then(|| rest.to_vec())
    }
}

/// The server's session cache (`tls-session-caching`) for TLS 1.2 clients
/// that resume by session id rather than by ticket: at most
/// `tls-session-cache-size` sessions (0: no limit, as OpenSSL's), each
/// resumable for `tls-session-cache-timeout`; the oldest go first. rustls
/// resumes TLS 1.2 session ids and TLS 1.3 stateful tickets from it.
struct SessionCache {
    max: usize,
    ttl: Duration,
    inner: Mutex<Sessions>,
}

#[derive(Default)]
struct Sessions {
    map: HashMap<Vec<u8>, (Instant, Vec<u8>)>,
    /// Keys in the order they were stored (a key stored again appears
    /// twice; the older entry is skipped when it comes up).
    order: VecDeque<(Instant, Vec<u8>)>,
}

impl SessionCache {
    fn new(max: usize, ttl: Duration) -> SessionCache {
        SessionCache { max, ttl, inner: Mutex::new(Sessions::default()) }
    }

    fn fresh(&self, at: Instant) -> bool {
        at.elapsed() < self.ttl
    }
}

impl std::fmt::Debug for SessionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionCache").field("max", &self.max).field("ttl", &self.ttl).finish()
    }
}

impl StoresServerSessions for SessionCache {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        let mut s = self.inner.lock();
        let now = Instant::now();
        // Expired ones first, then the oldest while full.
        while let Some((at, _)) = s.order.front() {
            let full = self.max > 0 && s.map.len() >= self.max;
            if self.fresh(*at) && !full {
                break;
            }
            let Some((at, k)) = s.order.pop_front() else { break };
            if s.map.get(&k).is_some_and(|(t, _)| *t == at) {
                s.map.remove(&k);
            }
        }
        s.order.push_back((now, key.clone()));
        s.map.insert(key, (now, value));
        true
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        let s = self.inner.lock();
        s.map.get(key).filter(|(at, _)| self.fresh(*at)).map(|(_, v)| v.clone())
    }

    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        let mut s = self.inner.lock();
        s.map.remove(key).filter(|(at, _)| self.fresh(*at)).map(|(_, v)| v)
    }

    fn can_cache(&self) -> bool {
        true
    }
}

/// A connection's TLS state.
pub struct TlsConn {
    pub session: ServerConnection,
    /// When the handshake must be done by (ms since the epoch); `None`
    /// once it is.
    pub deadline: Option<u64>,
}

/// The socket as rustls reads it, noting whether a read came back short
/// of the room rustls offered (the socket is drained: `io-short-read-drains`).
struct NoteShort<'a> {
    sock: &'a mut TcpStream,
    short: bool,
}

impl Read for NoteShort<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.sock.read(buf)?;
        self.short = n < buf.len();
        Ok(n)
    }
}

impl TlsConn {
    pub fn new(session: ServerConnection, deadline: u64) -> TlsConn {
        TlsConn { session, deadline: Some(deadline) }
    }

    /// Reads plaintext into `buf`, reading and decrypting records from the
    /// socket as needed. `Ok(0)`: the peer closed; `WouldBlock`: nothing
    /// more for now. `drained` (with `io-short-read-drains`): set once a
    /// socket read came back short, after which the socket is not read
    /// again (no read made only to hear EAGAIN). An error from rustls (a
    /// bad record, a certificate refused) comes as `InvalidData`, its
    /// alert queued for [`TlsConn::flush`].
    pub fn read(&mut self, sock: &mut TcpStream, buf: &mut [u8], short_drains: bool, drained: &mut bool) -> io::Result<usize> {
        let mut eof = false;
        loop {
            match self.session.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            if eof {
                return Ok(0);
            }
            if *drained {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let mut rd = NoteShort { sock, short: false };
            let n = self.session.read_tls(&mut rd)?;
            *drained = short_drains && rd.short;
            eof = n == 0;
            if let Err(e) = self.session.process_new_packets() {
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
        }
    }

    /// Writes rustls's pending records. `Ok(true)`: all written.
    pub fn flush(&mut self, sock: &mut TcpStream) -> io::Result<bool> {
        while self.session.wants_write() {
            match self.session.write_tls(sock) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// What the reply buffer writes into: the plaintext goes to rustls,
    /// records to the socket whenever rustls's buffer is full.
    pub fn sink<'a>(&'a mut self, sock: &'a mut TcpStream) -> Sink<'a> {
        Sink { tls: self, sock }
    }
}

/// [`TlsConn::sink`].
pub struct Sink<'a> {
    tls: &'a mut TlsConn,
    sock: &'a mut TcpStream,
}

impl Sink<'_> {
    /// Hands `bufs` to rustls; when its record buffer is full, writes
    /// records to the socket first (`WouldBlock` when the socket is full
    /// too). Never `Ok(0)` for something to write.
    fn put(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        if bufs.iter().all(|b| b.is_empty()) {
            return Ok(0);
        }
        loop {
            let n = self.tls.session.writer().write_vectored(bufs)?;
            if n > 0 {
                return Ok(n);
            }
            match self.tls.session.write_tls(self.sock) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) => return Err(e),
            }
        }
    }
}

impl Write for Sink<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.put(&[IoSlice::new(buf)])
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.put(bufs)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_directives_are_the_acted_on_tls_directives() {
        let table: Vec<&str> = tern_config::DIRECTIVES
            .iter()
            .filter(|d| d.name.starts_with("tls-") && d.passive.is_none())
            .map(|d| d.name)
            .filter(|n| !["tls-port", "tls-handshake-timeout", "tls-replication", "tls-cluster"].contains(n))
            .collect();
        assert_eq!(table.len(), CONTEXT_DIRECTIVES.len(), "{table:?}");
        assert!(table.iter().all(|n| CONTEXT_DIRECTIVES.contains(n)), "{table:?}");
    }

    #[test]
    fn tickets_resume_only_within_the_timeout() {
        let inner = rustls::crypto::ring::Ticketer::new().unwrap();
        let t = Tickets { inner: inner.clone(), timeout: Duration::from_secs(300) };
        let c = t.encrypt(b"session").unwrap();
        assert_eq!(t.decrypt(&c).as_deref(), Some(&b"session"[..]));
        assert_eq!(t.lifetime(), 300);
        let stale = Tickets { inner, timeout: Duration::ZERO };
        assert_eq!(stale.decrypt(&c), None);
        assert_eq!(t.decrypt(b"forged"), None);
    }

    #[test]
    fn session_cache_keeps_at_most_its_size_and_forgets_after_its_timeout() {
        let c = SessionCache::new(2, Duration::from_secs(60));
        for k in 0u8..3 {
            assert!(c.put(vec![k], vec![k; 4]));
        }
        assert_eq!(c.get(&[0]), None, "the oldest went");
        assert_eq!(c.get(&[2]), Some(vec![2; 4]));
        assert_eq!(c.take(&[1]), Some(vec![1; 4]));
        assert_eq!(c.get(&[1]), None);
        let c = SessionCache::new(0, Duration::ZERO);
        c.put(vec![1], vec![1]);
        assert_eq!(c.get(&[1]), None, "timeout 0: nothing resumes");
    }
}
