//! Redis 7's AOF manifest: the list of the files that make up the
//! append-only file, one per line.
//!
//! ```text
//! file appendonly.aof.2.base.rdb seq 2 type b
//! file appendonly.aof.1.incr.aof seq 1 type h
//! file appendonly.aof.3.incr.aof seq 3 type i
//! ```
//!
//! `type` is `b` (the base: an RDB, or an AOF of commands without the
//! preamble), `i` (an incremental file, loaded after the base in `seq`
//! order) or `h` (history: replaced by a rewrite, waiting to be deleted).
//! Keys come in any order; keys this version does not know (Redis 8's
//! `startoffset`/`endoffset`) are skipped, as Redis skips them; a value
//! with spaces or unprintable bytes is quoted as Redis's `sdscatrepr`
//! quotes it. Lines starting with `#` are comments.

use std::fmt;

/// What a file of the manifest is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Base,
    History,
    Incr,
}

impl Kind {
    fn letter(self) -> char {
        match self {
            Kind::Base => 'b',
            Kind::History => 'h',
            Kind::Incr => 'i',
        }
    }
}

/// One file of the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AofFile {
    pub name: String,
    pub seq: u64,
    pub kind: Kind,
}

/// The files of an AOF directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    pub base: Option<AofFile>,
    /// Incremental files, oldest first.
    pub incrs: Vec<AofFile>,
    /// Files replaced by a rewrite, not deleted yet.
    pub history: Vec<AofFile>,
}

/// Why a manifest was refused: Redis's wording, then the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError(pub String);

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Suffixes of the file names (`<appendfilename>.<seq><suffix>`).
pub const BASE_RDB: &str = ".base.rdb";
pub const BASE_AOF: &str = ".base.aof";
pub const INCR: &str = ".incr.aof";
pub const MANIFEST: &str = ".manifest";

/// The longest manifest line Redis reads (`AOF_MANIFEST_MAX_LINE`... it
/// refuses longer ones).
const MAX_LINE: usize = 1024;

impl Manifest {
    /// Reads a manifest's text.
    pub fn parse(text: &[u8]) -> Result<Manifest, ManifestError> {
        let mut m = Manifest::default();
        let mut seen_any = false;
        for raw in text.split(|&b| b == b'\n') {
            if raw.len() > MAX_LINE {
                return Err(ManifestError("The AOF manifest file contains too long line".into()));
            }
            let line = trim(raw);
            if line.is_empty() || line[0] == b'#' {
                continue;
            }
            let words = split_args(line).ok_or_else(|| ManifestError("Invalid AOF manifest file format".into()))?;
            if words.len() % 2 != 0 {
                return Err(ManifestError("Invalid AOF manifest file format".into()));
            }
            let (mut name, mut seq, mut kind) = (None, None, None);
            for kv in words.chunks(2) {
                match &kv[0][..] {
                    b"file" => name = Some(String::from_utf8_lossy(&kv[1]).into_owned()),
                    b"seq" => seq = tern_resp::parse_u64(&kv[1]),
                    b"type" => {
                        kind = match &kv[1][..] {
                            b"b" => Some(Kind::Base),
                            b"h" => Some(Kind::History),
                            b"i" => Some(Kind::Incr),
                            _ => None,
                        }
                    }
                    _ => {}
                }
            }
            let (Some(name), Some(seq), Some(kind)) = (name, seq, kind) else {
                return Err(ManifestError("Invalid AOF manifest file format".into()));
            };
            if name.is_empty() || name.contains('/') {
                return Err(ManifestError("Invalid AOF manifest file format".into()));
            }
            seen_any = true;
            let f = AofFile { name, seq, kind };
            match kind {
                Kind::Base => {
                    if m.base.is_some() {
                        return Err(ManifestError("Found duplicate base file information".into()));
                    }
                    m.base = Some(f);
                }
                Kind::History => m.history.push(f),
                Kind::Incr => {
                    if m.incrs.last().is_some_and(|l| l.seq >= f.seq) {
                        return Err(ManifestError("Found a non-monotonic sequence number".into()));
                    }
                    m.incrs.push(f);
                }
            }
        }
        if !seen_any {
            return Err(ManifestError("Found an empty AOF manifest".into()));
        }
        Ok(m)
    }

    /// The manifest's text, as Redis writes it: the base, the history,
    /// then the incremental files.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for f in self.base.iter().chain(&self.history).chain(&self.incrs) {
            s.push_str("file ");
            s.push_str(&repr(&f.name));
            s.push_str(&format!(" seq {} type {}\n", f.seq, f.kind.letter()));
        }
        s
    }

    /// The highest sequence number among incremental files (0: none).
    pub fn last_incr_seq(&self) -> u64 {
        self.incrs.last().map_or(0, |f| f.seq)
    }

    /// The base's sequence number (0: none).
    pub fn base_seq(&self) -> u64 {
        self.base.as_ref().map_or(0, |f| f.seq)
    }

    /// The files a load reads, in order: the base, then the increments.
    pub fn load_order(&self) -> impl Iterator<Item = &AofFile> {
        self.base.iter().chain(&self.incrs)
    }
}

/// `<prefix>.<seq>.base.rdb` / `.base.aof`.
pub fn base_name(prefix: &str, seq: u64, rdb: bool) -> String {
    format!("{prefix}.{seq}{}", if rdb { BASE_RDB } else { BASE_AOF })
}

/// `<prefix>.<seq>.incr.aof`.
pub fn incr_name(prefix: &str, seq: u64) -> String {
    format!("{prefix}.{seq}{INCR}")
}

/// `<prefix>.manifest`.
pub fn manifest_name(prefix: &str) -> String {
    format!("{prefix}{MANIFEST}")
}

fn trim(b: &[u8]) -> &[u8] {
    let is_space = |c: &u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n');
    let start = b.iter().position(|c| !is_space(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !is_space(c)).map_or(start, |e| e + 1);
    &b[start..end]
}

/// A name as Redis's `sdscatrepr` writes it when it needs quoting.
fn repr(name: &str) -> String {
    let plain = !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\'' && b != b'\\');
    if plain {
        return name.to_string();
    }
    let mut s = String::from("\"");
    for b in name.bytes() {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            0x07 => s.push_str("\\a"),
            0x08 => s.push_str("\\b"),
            b if b.is_ascii_graphic() || b == b' ' => s.push(b as char),
            b => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s.push('"');
    s
}

/// Redis's `sdssplitargs`: words split on spaces, `"…"` with escapes and
/// `'…'` quoting. None for unbalanced quotes.
fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < line.len() {
        while i < line.len() && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == line.len() {
            break;
        }
        let mut w = Vec::new();
        match line[i] {
            b'"' => {
                i += 1;
                loop {
                    let c = *line.get(i)?;
                    i += 1;
                    match c {
                        b'"' => break,
                        b'\\' => {
                            let e = *line.get(i)?;
                            i += 1;
                            match e {
                                b'n' => w.push(b'\n'),
                                b'r' => w.push(b'\r'),
                                b't' => w.push(b'\t'),
                                b'b' => w.push(0x08),
                                b'a' => w.push(0x07),
                                b'x' => {
                                    let hex = std::str::from_utf8(line.get(i..i + 2)?).ok()?;
                                    w.push(u8::from_str_radix(hex, 16).ok()?);
                                    i += 2;
                                }
                                other => w.push(other),
                            }
                        }
                        c => w.push(c),
                    }
                }
            }
            b'\'' => {
                i += 1;
                loop {
                    let c = *line.get(i)?;
                    i += 1;
                    if c == b'\'' {
                        break;
                    }
                    w.push(c);
                }
            }
            _ => {
                while i < line.len() && !line[i].is_ascii_whitespace() {
                    w.push(line[i]);
                    i += 1;
                }
            }
        }
        out.push(w);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_redis_writes() {
        let text = b"file appendonly.aof.1.base.rdb seq 1 type b\n\
                     file appendonly.aof.1.incr.aof seq 1 type i startoffset 0 endoffset 8\n";
        let m = Manifest::parse(text).unwrap();
        assert_eq!(m.base, Some(AofFile { name: "appendonly.aof.1.base.rdb".into(), seq: 1, kind: Kind::Base }));
        assert_eq!(m.incrs.len(), 1);
        assert_eq!(m.load_order().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof"]);
        // Keys in any order, comments, quoted names.
        let m2 = Manifest::parse(b"# c\nseq 4 type i file \"a b.4.incr.aof\"\n").unwrap();
        assert_eq!(m2.incrs[0].name, "a b.4.incr.aof");
    }

    #[test]
    fn round_trips() {
        let m = Manifest {
            base: Some(AofFile { name: base_name("x y", 3, true), seq: 3, kind: Kind::Base }),
            incrs: vec![AofFile { name: incr_name("x y", 5), seq: 5, kind: Kind::Incr }, AofFile { name: incr_name("x y", 6), seq: 6, kind: Kind::Incr }],
            history: vec![AofFile { name: incr_name("x y", 4), seq: 4, kind: Kind::History }],
        };
        let text = m.to_text();
        assert!(text.starts_with("file \"x y.3.base.rdb\" seq 3 type b\n"), "{text}");
        assert_eq!(Manifest::parse(text.as_bytes()).unwrap(), m);
        assert_eq!(m.last_incr_seq(), 6);
    }

    #[test]
    fn refuses_malformed() {
        let bad = |t: &[u8]| Manifest::parse(t).unwrap_err().0;
        assert_eq!(bad(b""), "Found an empty AOF manifest");
        assert_eq!(bad(b"file a seq 1\n"), "Invalid AOF manifest file format");
        assert_eq!(bad(b"file a seq 1 type z\n"), "Invalid AOF manifest file format");
        assert_eq!(bad(b"file \"a seq 1 type b\n"), "Invalid AOF manifest file format");
        assert_eq!(bad(b"file a seq 1 type b\nfile b seq 2 type b\n"), "Found duplicate base file information");
        assert_eq!(bad(b"file a seq 2 type i\nfile b seq 1 type i\n"), "Found a non-monotonic sequence number");
        assert_eq!(bad(b"file ../x seq 1 type i\n"), "Invalid AOF manifest file format");
    }
}
