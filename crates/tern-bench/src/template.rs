//! `--command` templates: words with `__key__`, `__data__` and
//! `__time_us__` placeholders.
//!
//! Every `__key__` draws its own key (so `MGET __key__ __key__` reads two
//! different keys), every `__data__` is `--data-size` bytes. A placeholder
//! may sit inside a word (`user:__key__`), as memtier allows.
//!
//! `__time_us__` (tern-bench's own) is the wall-clock time of the request in
//! microseconds since the Unix epoch, as [`TIME_DIGITS`] decimal digits,
//! followed by the filler of `__data__` from that length on when
//! `--data-size` asks for more: `PUBLISH chan __time_us__` sends a payload of
//! `max(16, --data-size)` bytes from which a subscriber reads when it was
//! published ([`crate::pubsub::sent_at_us`]).

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Lit(Vec<u8>),
    Key,
    Data,
    TimeUs,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub words: Vec<Vec<Part>>,
    /// The command name, upper-cased, for per-command stats and for knowing
    /// which replies are hits and misses.
    pub name: String,
    pub keys: usize,
    /// Whether some word holds `__time_us__` (the clock is read only then).
    pub timed: bool,
    /// Each word without placeholders already encoded as a RESP bulk
    /// string, so the hot path copies it instead of re-encoding it.
    pub resp_lit: Vec<Option<Vec<u8>>>,
}

const KEY: &[u8] = b"__key__";
const DATA: &[u8] = b"__data__";
const TIME_US: &[u8] = b"__time_us__";

/// Digits of an expanded `__time_us__`: microseconds since the epoch have
/// 16 digits from 2001 to 2286; zero-padded to this width, so that the
/// filler after them can never be read as more digits.
pub const TIME_DIGITS: usize = 16;

/// Writes `us` as exactly [`TIME_DIGITS`] digits.
pub fn put_time_us(out: &mut Vec<u8>, us: u64) {
    let mut b = itoa::Buffer::new();
    let d = b.format(us % 10u64.pow(TIME_DIGITS as u32)).as_bytes();
    out.resize(out.len() + TIME_DIGITS - d.len(), b'0');
    out.extend_from_slice(d);
}

fn split_word(w: &[u8]) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut lit = Vec::new();
    let mut i = 0;
    while i < w.len() {
        let (ph, n) = if w[i..].starts_with(KEY) {
            (Some(Part::Key), KEY.len())
        } else if w[i..].starts_with(DATA) {
            (Some(Part::Data), DATA.len())
        } else if w[i..].starts_with(TIME_US) {
            (Some(Part::TimeUs), TIME_US.len())
        } else {
            (None, 1)
        };
        match ph {
            Some(p) => {
                if !lit.is_empty() {
                    parts.push(Part::Lit(std::mem::take(&mut lit)));
                }
                parts.push(p);
            }
            None => lit.push(w[i]),
        }
        i += n;
    }
    if !lit.is_empty() || parts.is_empty() {
        parts.push(Part::Lit(lit));
    }
    parts
}

impl Template {
    /// Parses a command line; quoting inside it follows the shell rules of
    /// [`crate::opts::shell_split`], so an argument may contain spaces.
    pub fn parse(s: &str) -> Result<Template, String> {
        let words = crate::opts::shell_split(s)?;
        if words.is_empty() {
            return Err("--command is empty".into());
        }
        let words: Vec<Vec<Part>> = words.iter().map(|w| split_word(w.as_bytes())).collect();
        Template::from_words(words)
    }

    /// The `SET <key word> __data__` that fills the key a single-key GET
    /// template reads (`--miss-set`); None for any other template.
    pub fn set_for_get(get: &Template) -> Option<Template> {
        if get.name != "GET" || get.words.len() != 2 || get.keys != 1 {
            return None;
        }
        Template::from_words(vec![vec![Part::Lit(b"SET".to_vec())], get.words[1].clone(), vec![Part::Data]]).ok()
    }

    fn from_words(words: Vec<Vec<Part>>) -> Result<Template, String> {
        let name = match words[0].as_slice() {
            [Part::Lit(l)] => String::from_utf8_lossy(l).to_ascii_uppercase(),
            _ => return Err("--command must start with a command name".into()),
        };
        let keys = words.iter().flatten().filter(|p| **p == Part::Key).count();
        let timed = words.iter().flatten().any(|p| *p == Part::TimeUs);
        let resp_lit = words
            .iter()
            .map(|w| match w.as_slice() {
                [Part::Lit(l)] => {
                    Some([format!("${}\r\n", l.len()).as_bytes(), l, b"\r\n"].concat())
                }
                _ => None,
            })
            .collect();
        Ok(Template {
            words,
            name,
            keys,
            timed,
            resp_lit,
        })
    }

    /// Writes word `i` with its placeholders filled: keys from `key` (called
    /// once per `__key__`, in order), data from `data`, `__time_us__` from
    /// `now_us` (read by the caller only for a [`Template::timed`] one).
    pub fn expand_word(
        &self,
        i: usize,
        out: &mut Vec<u8>,
        key: &mut impl FnMut(&mut Vec<u8>),
        data: &[u8],
        now_us: u64,
    ) {
        for p in &self.words[i] {
            match p {
                Part::Lit(l) => out.extend_from_slice(l),
                Part::Key => key(out),
                Part::Data => out.extend_from_slice(data),
                Part::TimeUs => {
                    put_time_us(out, now_us);
                    out.extend_from_slice(data.get(TIME_DIGITS..).unwrap_or_default());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(t: &Template, data: &[u8]) -> Vec<String> {
        expand_at(t, data, 0)
    }

    fn expand_at(t: &Template, data: &[u8], now_us: u64) -> Vec<String> {
        let mut n = 0;
        let mut key = |o: &mut Vec<u8>| {
            n += 1;
            o.extend_from_slice(format!("k{n}").as_bytes());
        };
        (0..t.words.len())
            .map(|i| {
                let mut o = Vec::new();
                t.expand_word(i, &mut o, &mut key, data, now_us);
                String::from_utf8(o).unwrap()
            })
            .collect()
    }

    #[test]
    fn placeholders_expand_each_key_separately() {
        let t = Template::parse("mset __key__ __data__ __key__ __data__").unwrap();
        assert_eq!((t.name.as_str(), t.keys), ("MSET", 2));
        assert_eq!(t.resp_lit[0].as_deref(), Some(&b"$4\r\nmset\r\n"[..]));
        assert_eq!(t.resp_lit[1], None);
        assert_eq!(expand(&t, b"xy"), ["mset", "k1", "xy", "k2", "xy"]);
    }

    #[test]
    fn placeholders_inside_words_and_quotes() {
        let t = Template::parse("HSET user:__key__ \"f 1\" v__data__v __key____key__").unwrap();
        assert_eq!(t.keys, 3);
        assert_eq!(expand(&t, b"D"), ["HSET", "user:k1", "f 1", "vDv", "k2k3"]);
        let t = Template::parse("PING").unwrap();
        assert_eq!((t.keys, expand(&t, b"")), (0, vec!["PING".to_string()]));
    }

    #[test]
    fn miss_set_fills_the_key_its_get_read() {
        let get = Template::parse("GET scan:__key__").unwrap();
        let set = Template::set_for_get(&get).unwrap();
        assert_eq!((set.name.as_str(), set.keys), ("SET", 1));
        assert_eq!(expand(&set, b"D"), ["SET", "scan:k1", "D"]);
        assert!(Template::set_for_get(&Template::parse("MGET __key__ __key__").unwrap()).is_none());
        assert!(Template::set_for_get(&set).is_none());
    }

    #[test]
    fn time_placeholder_pads_with_data_to_the_data_size() {
        let t = Template::parse("PUBLISH chan-__key__ __time_us__").unwrap();
        assert!(t.timed && t.keys == 1);
        assert_eq!(t.resp_lit[2], None);
        let now = 1_767_225_600_123_456; // 2026-01-01, 16 digits
        // Shorter data than the digits: the digits alone.
        assert_eq!(expand_at(&t, b"xxxx", now), ["PUBLISH", "chan-k1", "1767225600123456"]);
        // Longer: the digits, then the data from the 17th byte on.
        let data = b"0123456789abcdefWXYZ";
        assert_eq!(expand_at(&t, data, now)[2], "1767225600123456WXYZ");
        assert_eq!(expand_at(&t, data, now)[2].len(), data.len());
        // Always 16 digits, zero-padded, inside a word too.
        let t = Template::parse("X t=__time_us__.").unwrap();
        assert_eq!(expand_at(&t, b"", 42), ["X", "t=0000000000000042."]);
        assert!(!Template::parse("PUBLISH c __data__").unwrap().timed);
        // Near-miss spellings stay literal.
        let t = Template::parse("X __time__ __time_us_").unwrap();
        assert!(!t.timed && t.resp_lit.iter().all(Option::is_some));
    }

    #[test]
    fn bad_templates() {
        assert!(Template::parse("").is_err());
        assert!(Template::parse("__key__ x").is_err());
        assert!(Template::parse("GET \"x").is_err());
    }
}
