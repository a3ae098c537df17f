//! What the `tls-*` directives' words mean: the protocol versions, TLS 1.3
//! suites and TLS 1.2 ciphers Tern's TLS (rustls with the ring provider)
//! can offer, under the names redis.conf gives them (OpenSSL's). A choice
//! rustls cannot honour is refused here, at parsing, so that it stops
//! start-up (or fails CONFIG SET) naming the directive: never a silent
//! fallback to something the operator did not ask for.
//!
//! The names live here once, as enums; `tern-server`'s `tls` maps each
//! variant to its rustls suite with an exhaustive match.

use super::kinds::{named_enum, one, Kind, Named};

named_enum! {
    /// `tls-auth-clients`: must a client show a certificate the CA list
    /// vouches for (`yes`, Redis's default), may it (`optional`: one it
    /// shows must verify), or is none asked for (`no`)?
    pub enum TlsAuthClients {
        No = "no",
        Yes = "yes",
        Optional = "optional",
    }
}

named_enum! {
    /// TLS 1.3 suites (`tls-ciphersuites`), in the order offered when the
    /// directive is empty.
    pub enum Tls13Suite {
        Aes256GcmSha384 = "TLS_AES_256_GCM_SHA384",
        Chacha20Poly1305Sha256 = "TLS_CHACHA20_POLY1305_SHA256",
        Aes128GcmSha256 = "TLS_AES_128_GCM_SHA256",
    }
}

named_enum! {
    /// TLS 1.2 ciphers (`tls-ciphers`), by OpenSSL's names, in the order
    /// offered when the directive is empty. rustls has only these: ECDHE
    /// key exchange with an AEAD.
    pub enum Tls12Cipher {
        EcdheEcdsaAes256GcmSha384 = "ECDHE-ECDSA-AES256-GCM-SHA384",
        EcdheEcdsaAes128GcmSha256 = "ECDHE-ECDSA-AES128-GCM-SHA256",
        EcdheEcdsaChacha20Poly1305 = "ECDHE-ECDSA-CHACHA20-POLY1305",
        EcdheRsaAes256GcmSha384 = "ECDHE-RSA-AES256-GCM-SHA384",
        EcdheRsaAes128GcmSha256 = "ECDHE-RSA-AES128-GCM-SHA256",
        EcdheRsaChacha20Poly1305 = "ECDHE-RSA-CHACHA20-POLY1305",
    }
}

/// The protocol versions `tls-protocols` allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protocols {
    pub tls12: bool,
    pub tls13: bool,
}

/// `tls-protocols`: TLSv1.2 and/or TLSv1.3, case-insensitively, separated
/// by spaces; empty is both (Redis's default). TLSv1 and TLSv1.1 are
/// refused: rustls does not speak them.
pub fn parse_protocols(s: &str) -> Result<Protocols, String> {
    let mut p = Protocols { tls12: false, tls13: false };
    if s.trim().is_empty() {
        return Ok(Protocols { tls12: true, tls13: true });
    }
    for w in s.split_ascii_whitespace() {
        match w.to_ascii_lowercase().as_str() {
            "tlsv1.2" => p.tls12 = true,
            "tlsv1.3" => p.tls13 = true,
            "tlsv1" | "tlsv1.1" => return Err(format!("{w} is not supported: Tern's TLS (rustls) speaks only TLSv1.2 and TLSv1.3")),
            _ => return Err(format!("invalid protocol '{w}': use TLSv1.2, TLSv1.3 or both")),
        }
    }
    Ok(p)
}

/// TLS 1.3 suites OpenSSL has and rustls does not.
const TLS13_MISSING: &[&str] = &["TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256"];

/// `tls-ciphersuites`: TLS 1.3 suite names separated by `:`; empty is all
/// of them.
pub fn parse_ciphersuites(s: &str) -> Result<Vec<Tls13Suite>, String> {
    if s.trim().is_empty() {
        return Ok(Tls13Suite::ALL.to_vec());
    }
    let mut out = Vec::new();
    for w in s.split(':').map(str::trim).filter(|w| !w.is_empty()) {
        let Some(&suite) = Tls13Suite::ALL.iter().find(|x| x.name().eq_ignore_ascii_case(w)) else {
            let why = if TLS13_MISSING.iter().any(|m| m.eq_ignore_ascii_case(w)) { "is not supported by Tern's TLS (rustls)" } else { "is not a TLS 1.3 ciphersuite" };
            return Err(format!("'{w}' {why}; use {}", names(Tls13Suite::ALL)));
        };
        if !out.contains(&suite) {
            out.push(suite);
        }
    }
    if out.is_empty() {
        return Err("no ciphersuite given".into());
    }
    Ok(out)
}

/// OpenSSL cipher classes none of rustls's ciphers is in: excluding one
/// (`!aNULL`, `!MD5`) changes nothing, so it is accepted.
const WEAK_CLASSES: &[&str] = &[
    "aNULL", "eNULL", "NULL", "MD5", "RC4", "DES", "3DES", "EXPORT", "EXP", "LOW", "MEDIUM", "PSK", "SRP", "DSS", "aDSS", "CAMELLIA",
    "SEED", "IDEA", "ARIA", "kRSA", "ADH", "AECDH", "SSLv3", "DH", "EDH", "DHE", "kDHE", "SHA1", "SHA", "CBC",
];

/// `tls-ciphers`, an OpenSSL cipher list for TLS 1.2 (separated by `:`,
/// `,` or spaces): cipher names from [`Tls12Cipher`]; `DEFAULT`, `HIGH` or
/// `ALL` (every rustls cipher is in each); `!name` or `-name` to leave one
/// out; `!class` for a class rustls has nothing in (`!aNULL`, `!MD5`, ...).
/// Anything else (a cipher rustls lacks, `@STRENGTH`, `+name`) is refused
/// rather than approximated. Empty is all of them.
pub fn parse_ciphers(s: &str) -> Result<Vec<Tls12Cipher>, String> {
    if s.trim().is_empty() {
        return Ok(Tls12Cipher::ALL.to_vec());
    }
    let find = |w: &str| Tls12Cipher::ALL.iter().copied().find(|x| x.name().eq_ignore_ascii_case(w));
    let mut out: Vec<Tls12Cipher> = Vec::new();
    let mut removed: Vec<Tls12Cipher> = Vec::new();
    for w in s.split([':', ',', ' ']).filter(|w| !w.is_empty()) {
        if let Some(rest) = w.strip_prefix(['!', '-']) {
            if let Some(c) = find(rest) {
                out.retain(|x| *x != c);
                removed.push(c);
            } else if !WEAK_CLASSES.iter().any(|k| k.eq_ignore_ascii_case(rest)) {
                return Err(format!("'{w}' is not supported by Tern's TLS (rustls): exclude a cipher by name, or a class rustls has none of (aNULL, MD5, RC4, ...)"));
            }
        } else if ["DEFAULT", "HIGH", "ALL"].iter().any(|k| k.eq_ignore_ascii_case(w)) {
            for &c in Tls12Cipher::ALL {
                if !out.contains(&c) && !removed.contains(&c) {
                    out.push(c);
                }
            }
        } else if let Some(c) = find(w) {
            if !out.contains(&c) && !removed.contains(&c) {
                out.push(c);
            }
        } else {
            return Err(format!("cipher '{w}' is not supported by Tern's TLS (rustls), which has {}", names(Tls12Cipher::ALL)));
        }
    }
    if out.is_empty() {
        return Err("no cipher left to offer".into());
    }
    Ok(out)
}

fn names<E: Named>(all: &[E]) -> String {
    all.iter().map(|e| e.name()).collect::<Vec<_>>().join(":")
}

/// A string checked by one of this module's parsers, kept as given (as
/// Redis shows it); empty means the default.
pub struct TlsList(pub fn(&str) -> Result<(), String>);

/// The checks [`TlsList`] runs, one per directive.
pub fn check_protocols(s: &str) -> Result<(), String> {
    parse_protocols(s).map(drop)
}
pub fn check_ciphersuites(s: &str) -> Result<(), String> {
    parse_ciphersuites(s).map(drop)
}
pub fn check_ciphers(s: &str) -> Result<(), String> {
    parse_ciphers(s).map(drop)
}

impl Kind for TlsList {
    type Value = String;
    fn parse(&self, args: &[&str], _: &String) -> Result<String, String> {
        let v = one(args)?;
        (self.0)(v)?;
        Ok(v.to_string())
    }
    fn show(&self, v: &String) -> String {
        v.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols() {
        assert_eq!(parse_protocols(""), Ok(Protocols { tls12: true, tls13: true }));
        assert_eq!(parse_protocols("TLSv1.3"), Ok(Protocols { tls12: false, tls13: true }));
        assert_eq!(parse_protocols("tlsv1.2  TLSv1.3"), Ok(Protocols { tls12: true, tls13: true }));
        assert!(parse_protocols("TLSv1.1 TLSv1.2").unwrap_err().contains("TLSv1.1 is not supported"));
        assert!(parse_protocols("TLSv1").unwrap_err().contains("not supported"));
        assert!(parse_protocols("SSLv3").unwrap_err().contains("invalid protocol"));
    }

    #[test]
    fn ciphersuites() {
        assert_eq!(parse_ciphersuites("").unwrap().len(), 3);
        assert_eq!(parse_ciphersuites("TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384").unwrap(), vec![Tls13Suite::Aes128GcmSha256, Tls13Suite::Aes256GcmSha384]);
        assert!(parse_ciphersuites("TLS_AES_128_CCM_SHA256").unwrap_err().contains("not supported"));
        assert!(parse_ciphersuites("BOGUS").unwrap_err().contains("not a TLS 1.3"));
    }

    #[test]
    fn ciphers() {
        assert_eq!(parse_ciphers("DEFAULT:!aNULL:!MD5").unwrap(), Tls12Cipher::ALL.to_vec());
        assert_eq!(parse_ciphers("ECDHE-RSA-AES128-GCM-SHA256").unwrap(), vec![Tls12Cipher::EcdheRsaAes128GcmSha256]);
        let no_chacha = parse_ciphers("HIGH:!ECDHE-RSA-CHACHA20-POLY1305").unwrap();
        assert!(!no_chacha.contains(&Tls12Cipher::EcdheRsaChacha20Poly1305) && no_chacha.len() == 5);
        assert!(parse_ciphers("AES128-SHA").unwrap_err().contains("not supported"));
        assert!(parse_ciphers("DEFAULT:@STRENGTH").unwrap_err().contains("not supported"));
        assert!(parse_ciphers("!aNULL").unwrap_err().contains("no cipher"));
    }
}
