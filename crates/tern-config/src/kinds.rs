//! The value kinds of directives: how each reads its redis.conf words,
//! what CONFIG GET shows and what CONFIG REWRITE writes back, with Redis's
//! reasons for refusing a value. A kind is a small value (an integer's
//! range, an enum's names) so that the declaration table states it inline.

use std::marker::PhantomData;
use std::time::Duration;
use std::sync::atomic::{AtomicU64, Ordering};

/// How one directive's value is read, shown and written back.
pub trait Kind {
    type Value;
    /// Reads the words after the directive's name; `old` is the current
    /// value (a partial `client-output-buffer-limit` keeps the classes it
    /// does not name). The error is Redis's reason only.
    fn parse(&self, args: &[&str], old: &Self::Value) -> Result<Self::Value, String>;
    /// What CONFIG GET shows.
    fn show(&self, v: &Self::Value) -> String;
    /// What follows the name on the line CONFIG REWRITE writes.
    fn rewrite(&self, v: &Self::Value) -> String {
        quote(&self.show(v))
    }
    /// The lines CONFIG REWRITE writes (one, unless the value is several).
    fn rewrite_lines(&self, name: &str, v: &Self::Value) -> Vec<String> {
        vec![format!("{name} {}", self.rewrite(v))]
    }
    /// Does the value take several words, so that CONFIG SET splits its
    /// one string?
    fn multi(&self) -> bool {
        false
    }
}

pub(super) fn one<'a>(args: &[&'a str]) -> Result<&'a str, String> {
    match args {
        [v] => Ok(v),
        _ => Err("wrong number of arguments".into()),
    }
}

/// The words of a list value, whether given as several (a file) or as one
/// string with spaces (CONFIG SET).
fn flat<'a>(args: &[&'a str]) -> Vec<&'a str> {
    args.iter().flat_map(|s| s.split_ascii_whitespace()).collect()
}

/// `yes` / `no`.
pub struct Bool;

impl Kind for Bool {
    type Value = bool;
    fn parse(&self, args: &[&str], _: &bool) -> Result<bool, String> {
        parse_bool(one(args)?)
    }
    fn show(&self, v: &bool) -> String {
        if *v { "yes" } else { "no" }.into()
    }
}

pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err("argument must be 'yes' or 'no'".into()),
    }
}

/// An integer in `min..=max` (Redis's `string2ll`: no `+`, no spaces, no
/// leading zeros), optionally clamped into a narrower range afterwards
/// (`hz`, which Redis clamps rather than refuses).
pub struct Int<T> {
    min: i64,
    max: i64,
    clamp: Option<(i64, i64)>,
    ty: PhantomData<fn() -> T>,
}

impl<T> Int<T> {
    pub const fn new(min: i64, max: i64) -> Self {
        Int { min, max, clamp: None, ty: PhantomData }
    }
    pub const fn clamp(self, lo: i64, hi: i64) -> Self {
        Int { clamp: Some((lo, hi)), ..self }
    }
}

impl<T: TryFrom<i64> + std::fmt::Display> Kind for Int<T> {
    type Value = T;
    fn parse(&self, args: &[&str], _: &T) -> Result<T, String> {
        let v = tern_resp::parse_i64(one(args)?.as_bytes()).ok_or_else(|| "argument couldn't be parsed into an integer".to_string())?;
        if v < self.min || v > self.max {
            return Err(format!("argument must be between {} and {} inclusive", self.min, self.max));
        }
        let v = self.clamp.map_or(v, |(lo, hi)| v.clamp(lo, hi));
        T::try_from(v).map_err(|_| format!("argument must be between {} and {} inclusive", self.min, self.max))
    }
    fn show(&self, v: &T) -> String {
        v.to_string()
    }
}

/// A duration written as a whole number of seconds ([`Secs`]) or
/// milliseconds ([`Millis`]), in `min..=max` of that unit, with
/// [`Int`]'s parsing and messages.
pub struct Time<const UNIT_MS: u64> {
    int: Int<u64>,
}

/// Seconds, as `timeout` and `tcp-keepalive` count them.
pub type Secs = Time<1000>;
/// Milliseconds, as `busy-reply-threshold` counts them.
pub type Millis = Time<1>;

impl<const UNIT_MS: u64> Time<UNIT_MS> {
    pub const fn new(min: i64, max: i64) -> Self {
        Time { int: Int::new(min, max) }
    }
}

impl<const UNIT_MS: u64> Kind for Time<UNIT_MS> {
    type Value = Duration;
    fn parse(&self, args: &[&str], _: &Duration) -> Result<Duration, String> {
        let n = self.int.parse(args, &0)?;
        Ok(Duration::from_millis(n.saturating_mul(UNIT_MS)))
    }
    fn show(&self, v: &Duration) -> String {
        (v.as_millis() / u128::from(UNIT_MS)).to_string()
    }
}

/// A size in bytes, with redis.conf's units (`1k` = 1000, `1kb` = 1024, m,
/// mb, g, gb), in `min..=max`; written back with the largest unit that
/// divides it.
pub struct Mem<T = u64> {
    min: u64,
    max: u64,
    /// Reason for a value under `min`, when Redis words it differently
    /// from the range it gives for one over `max`.
    below: Option<&'static str>,
    ty: PhantomData<fn() -> T>,
}

impl<T> Mem<T> {
    pub const fn new(min: u64, max: u64) -> Self {
        Mem { min, max, below: None, ty: PhantomData }
    }
    pub const fn below_min_says(self, why: &'static str) -> Self {
        Mem { below: Some(why), ..self }
    }
}

/// Largest memory value of most directives (Redis's `LLONG_MAX`).
pub const MEM_MAX: u64 = i64::MAX as u64;

/// The integer types a byte size is kept in.
pub trait Bytes: Copy {
    fn from_bytes(n: u64) -> Option<Self>;
    fn bytes(self) -> u64;
}

impl Bytes for u64 {
    fn from_bytes(n: u64) -> Option<u64> {
        Some(n)
    }
    fn bytes(self) -> u64 {
        self
    }
}

impl Bytes for usize {
    fn from_bytes(n: u64) -> Option<usize> {
        usize::try_from(n).ok()
    }
    fn bytes(self) -> u64 {
        self as u64
    }
}

impl<T: Bytes> Kind for Mem<T> {
    type Value = T;
    fn parse(&self, args: &[&str], _: &T) -> Result<T, String> {
        let v = parse_memory(one(args)?).ok_or_else(|| "argument must be a memory value".to_string())?;
        let range = || format!("argument must be between 0 and {} inclusive", self.max);
        if v > self.max {
            return Err(range());
        }
        if v < self.min {
            return Err(match self.below {
                Some(why) => why.to_string(),
                None => format!("argument must be between {} and {} inclusive", self.min, self.max),
            });
        }
        T::from_bytes(v).ok_or_else(range)
    }
    fn show(&self, v: &T) -> String {
        v.bytes().to_string()
    }
    fn rewrite(&self, v: &T) -> String {
        format_memory(v.bytes())
    }
}

/// Parses a memory size the way redis.conf does: `1k` = 1000, `1kb` = 1024,
/// likewise m/mb, g/gb; case-insensitive; plain bytes otherwise.
pub fn parse_memory(s: &str) -> Option<u64> {
    let l = s.to_ascii_lowercase();
    let (num, mul): (&str, u64) = if let Some(n) = l.strip_suffix("gb") {
        (n, 1 << 30)
    } else if let Some(n) = l.strip_suffix("mb") {
        (n, 1 << 20)
    } else if let Some(n) = l.strip_suffix("kb") {
        (n, 1 << 10)
    } else if let Some(n) = l.strip_suffix('g') {
        (n, 1_000_000_000)
    } else if let Some(n) = l.strip_suffix('m') {
        (n, 1_000_000)
    } else if let Some(n) = l.strip_suffix('k') {
        (n, 1000)
    } else if let Some(n) = l.strip_suffix('b') {
        (n, 1)
    } else {
        (l.as_str(), 1)
    };
    if num.is_empty() || !num.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    num.parse::<u64>().ok()?.checked_mul(mul)
}

/// A size the way Redis writes it back: the largest of gb/mb/kb that
/// divides it, else bytes.
pub fn format_memory(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "gb"), (1 << 20, "mb"), (1 << 10, "kb")];
    for (m, u) in UNITS {
        if n != 0 && n % m == 0 {
            return format!("{}{}", n / m, u);
        }
    }
    n.to_string()
}

fn one_of(options: &[&str]) -> String {
    format!("argument(s) must be one of the following: {}", options.join(", "))
}

/// One of a list of words, case-insensitively, kept as the list spells it
/// (directives Tern only shows; those the code reads are [`Enum`]s).
pub struct Choice(pub &'static [&'static str]);

impl Kind for Choice {
    type Value = &'static str;
    fn parse(&self, args: &[&str], _: &&'static str) -> Result<&'static str, String> {
        let v = one(args)?;
        self.0.iter().find(|o| o.eq_ignore_ascii_case(v)).copied().ok_or_else(|| one_of(self.0))
    }
    fn show(&self, v: &&'static str) -> String {
        v.to_string()
    }
}

/// A Rust enum whose variants have redis.conf names ([`named_enum!`]).
pub trait Named: Copy + 'static {
    const ALL: &'static [Self];
    fn name(self) -> &'static str;
}

/// Declares an enum whose variants have redis.conf names, usable as an
/// [`Enum`] kind and as a live setting.
macro_rules! named_enum {
    ($(#[$m:meta])* pub enum $t:ident { $($(#[$vm:meta])* $v:ident = $n:literal,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        pub enum $t { $($(#[$vm])* $v,)* }
        impl $crate::kinds::Named for $t {
            const ALL: &'static [Self] = &[$($t::$v,)*];
            fn name(self) -> &'static str {
                match self { $($t::$v => $n,)* }
            }
        }
        impl $t {
            pub fn name(self) -> &'static str {
                <Self as $crate::kinds::Named>::name(self)
            }
        }
        impl $crate::kinds::Live for $t {
            type Cell = std::sync::atomic::AtomicU64;
            fn store(cell: &Self::Cell, v: &Self) {
                cell.store(*v as u64, std::sync::atomic::Ordering::Relaxed);
            }
            fn load(cell: &Self::Cell) -> Self {
                let i = cell.load(std::sync::atomic::Ordering::Relaxed) as usize;
                <Self as $crate::kinds::Named>::ALL.get(i).copied().unwrap_or(<Self as $crate::kinds::Named>::ALL[0])
            }
        }
    };
}

pub(crate) use named_enum;

/// A [`Named`] enum.
pub struct Enum<E>(PhantomData<fn() -> E>);

impl<E> Enum<E> {
    pub const fn new() -> Self {
        Enum(PhantomData)
    }
}

impl<E> Default for Enum<E> {
    fn default() -> Self {
        Enum::new()
    }
}

impl<E: Named> Kind for Enum<E> {
    type Value = E;
    fn parse(&self, args: &[&str], _: &E) -> Result<E, String> {
        let v = one(args)?;
        E::ALL.iter().find(|e| e.name().eq_ignore_ascii_case(v)).copied().ok_or_else(|| {
            let names: Vec<&str> = E::ALL.iter().map(|e| e.name()).collect();
            one_of(&names)
        })
    }
    fn show(&self, v: &E) -> String {
        v.name().to_string()
    }
}

/// Any one word, kept as given.
pub struct Str;

impl Kind for Str {
    type Value = String;
    fn parse(&self, args: &[&str], _: &String) -> Result<String, String> {
        Ok(one(args)?.to_string())
    }
    fn show(&self, v: &String) -> String {
        v.clone()
    }
}

/// `notify-keyspace-events`: Redis's class letters, held as its
/// `NOTIFY_*` bits and shown in Redis's order (`A` for the whole set).
pub struct NotifyFlags;

impl Kind for NotifyFlags {
    type Value = u32;
    fn parse(&self, args: &[&str], _: &u32) -> Result<u32, String> {
        use tern_store::event::class as c;
        let mut flags = 0;
        for ch in one(args)?.bytes() {
            flags |= match ch {
                b'A' => c::ALL,
                b'g' => c::GENERIC,
                b'$' => c::STRING,
                b'l' => c::LIST,
                b's' => c::SET,
                b'h' => c::HASH,
                b'z' => c::ZSET,
                b'x' => c::EXPIRED,
                b'e' => c::EVICTED,
                b'K' => c::KEYSPACE,
                b'E' => c::KEYEVENT,
                b't' => c::STREAM,
                b'm' => c::KEY_MISS,
                b'd' => c::MODULE,
                b'n' => c::NEW,
                _ => return Err("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".into()),
            };
        }
        Ok(flags)
    }
    fn show(&self, v: &u32) -> String {
        use tern_store::event::class as c;
        let mut s = String::new();
        if v & c::ALL == c::ALL {
            s.push('A');
        } else {
            for (bit, ch) in [(c::GENERIC, 'g'), (c::STRING, '$'), (c::LIST, 'l'), (c::SET, 's'), (c::HASH, 'h'), (c::ZSET, 'z'), (c::EXPIRED, 'x'), (c::EVICTED, 'e'), (c::STREAM, 't'), (c::MODULE, 'd'), (c::NEW, 'n')] {
                if v & bit != 0 {
                    s.push(ch);
                }
            }
        }
        for (bit, ch) in [(c::KEYSPACE, 'K'), (c::KEYEVENT, 'E'), (c::KEY_MISS, 'm')] {
            if v & bit != 0 {
                s.push(ch);
            }
        }
        s
    }
}

/// A password: empty means none.
pub struct Password;

impl Kind for Password {
    type Value = Option<Vec<u8>>;
    fn parse(&self, args: &[&str], _: &Option<Vec<u8>>) -> Result<Option<Vec<u8>>, String> {
        let v = one(args)?;
        Ok((!v.is_empty()).then(|| v.as_bytes().to_vec()))
    }
    fn show(&self, v: &Option<Vec<u8>>) -> String {
        v.as_ref().map(|p| String::from_utf8_lossy(p).into_owned()).unwrap_or_default()
    }
}

/// A directory that must exist (`dir`); shown as Redis shows it after its
/// `chdir()`, absolute, and as the working directory when never set.
pub struct Dir;

impl Kind for Dir {
    type Value = Option<String>;
    fn parse(&self, args: &[&str], _: &Option<String>) -> Result<Option<String>, String> {
        let v = one(args)?;
        if !std::path::Path::new(v).is_dir() {
            return Err(format!("No such file or directory: {v}"));
        }
        Ok(Some(v.to_string()))
    }
    fn show(&self, v: &Option<String>) -> String {
        match v {
            Some(d) => std::fs::canonicalize(d).map(|p| p.display().to_string()).unwrap_or_else(|_| d.clone()),
            None => std::env::current_dir().map(|p| p.display().to_string()).unwrap_or_else(|_| ".".into()),
        }
    }
}

/// Each word quoted as a single value would be, so that a quote, a NUL or
/// an empty word survives being read back; no words at all is `""`.
fn quote_words(words: &[String]) -> String {
    if words.is_empty() {
        return quote("");
    }
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// A list of words: `bind`'s at least one, each argument kept as given
/// (an empty one too), or any number split at white space
/// (`oom-score-adj-values 0 200 800`).
pub struct Words {
    split: bool,
}

/// `replicaof`'s `host port` (empty: none).
pub struct HostPort;

impl Kind for HostPort {
    type Value = Vec<String>;
    fn parse(&self, args: &[&str], _: &Vec<String>) -> Result<Vec<String>, String> {
        let words = flat(args);
        match words.as_slice() {
            [] => Ok(Vec::new()),
            [host, port] => match port.parse::<u16>() {
                Ok(_) => Ok(vec![host.to_string(), port.to_string()]),
                Err(_) => Err("Invalid master port".into()),
            },
            _ => Err("wrong number of arguments".into()),
        }
    }
    fn show(&self, v: &Vec<String>) -> String {
        v.join(" ")
    }
    fn rewrite(&self, v: &Vec<String>) -> String {
        quote_words(v)
    }
    /// None for a master, as Redis drops the line.
    fn rewrite_lines(&self, name: &str, v: &Vec<String>) -> Vec<String> {
        if v.is_empty() {
            Vec::new()
        } else {
            vec![format!("{name} {}", quote_words(v))]
        }
    }
    fn multi(&self) -> bool {
        true
    }
}

/// `bind`'s kind of [`Words`].
pub const LIST: Words = Words { split: false };
/// [`Words`] split at white space.
pub const WORDS: Words = Words { split: true };

impl Kind for Words {
    type Value = Vec<String>;
    fn parse(&self, args: &[&str], _: &Vec<String>) -> Result<Vec<String>, String> {
        if self.split {
            return Ok(flat(args).into_iter().map(str::to_string).collect());
        }
        if args.is_empty() {
            return Err("wrong number of arguments".into());
        }
        Ok(args.iter().map(|s| s.to_string()).collect())
    }
    fn show(&self, v: &Vec<String>) -> String {
        v.join(" ")
    }
    fn rewrite(&self, v: &Vec<String>) -> String {
        quote_words(v)
    }
    fn multi(&self) -> bool {
        true
    }
}

/// `latency-tracking-info-percentiles`: numbers from 0 to 100, split at
/// white space (none is allowed), with Redis's messages.
pub struct Percentiles;

impl Kind for Percentiles {
    type Value = Vec<f64>;
    fn parse(&self, args: &[&str], _: &Vec<f64>) -> Result<Vec<f64>, String> {
        let words = flat(args);
        let mut out = Vec::with_capacity(words.len());
        for w in words {
            let p: f64 = w.parse().map_err(|_| "Invalid latency-tracking-info-percentiles parameters".to_string())?;
            if !(0.0..=100.0).contains(&p) {
                return Err("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]".into());
            }
            out.push(p);
        }
        Ok(out)
    }
    fn show(&self, v: &Vec<f64>) -> String {
        v.iter().map(f64::to_string).collect::<Vec<_>>().join(" ")
    }
    fn rewrite(&self, v: &Vec<f64>) -> String {
        if v.is_empty() {
            quote("")
        } else {
            self.show(v)
        }
    }
    fn multi(&self) -> bool {
        true
    }
}

/// `save <seconds> <changes> [<seconds> <changes> ...]`, or `save ""`.
pub struct Save;

impl Kind for Save {
    type Value = Vec<(u64, u64)>;
    fn parse(&self, args: &[&str], _: &Vec<(u64, u64)>) -> Result<Vec<(u64, u64)>, String> {
        let words = flat(args);
        if words.len() % 2 != 0 {
            return Err("Invalid save parameters".into());
        }
        let num = |w: &str| tern_resp::parse_i64(w.as_bytes()).and_then(|n| u64::try_from(n).ok()).ok_or_else(|| "Invalid save parameters".to_string());
        words.chunks(2).map(|p| Ok((num(p[0])?, num(p[1])?))).collect()
    }
    fn show(&self, v: &Vec<(u64, u64)>) -> String {
        v.iter().map(|(s, c)| format!("{s} {c}")).collect::<Vec<_>>().join(" ")
    }
    fn rewrite(&self, v: &Vec<(u64, u64)>) -> String {
        if v.is_empty() {
            quote("")
        } else {
            self.show(v)
        }
    }
    fn multi(&self) -> bool {
        true
    }
}

/// Output-buffer limit of one client class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimit {
    pub hard: u64,
    pub soft: u64,
    pub soft_seconds: u64,
}

/// `client-output-buffer-limit`: one limit per client class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimits {
    pub normal: OutputLimit,
    pub replica: OutputLimit,
    pub pubsub: OutputLimit,
}

impl OutputLimits {
    /// Redis's defaults.
    pub const DEFAULT: OutputLimits = OutputLimits {
        normal: OutputLimit { hard: 0, soft: 0, soft_seconds: 0 },
        replica: OutputLimit { hard: 256 << 20, soft: 64 << 20, soft_seconds: 60 },
        pubsub: OutputLimit { hard: 32 << 20, soft: 8 << 20, soft_seconds: 60 },
    };

    fn classes(&self) -> [(&'static str, OutputLimit); 3] {
        [("normal", self.normal), ("slave", self.replica), ("pubsub", self.pubsub)]
    }
}

/// `<class> <hard> <soft> <soft seconds>`, repeated; the classes named
/// change, the others keep their limits.
pub struct ClientOutputBufferLimit;

impl Kind for ClientOutputBufferLimit {
    type Value = OutputLimits;
    fn parse(&self, args: &[&str], old: &OutputLimits) -> Result<OutputLimits, String> {
        let words = flat(args);
        if words.is_empty() || words.len() % 4 != 0 {
            return Err("Wrong number of arguments in buffer limit configuration.".into());
        }
        let mut new = *old;
        let mut parsed = Vec::new();
        for chunk in words.chunks(4) {
            let class = chunk[0].to_ascii_lowercase();
            if !matches!(class.as_str(), "normal" | "slave" | "replica" | "pubsub") {
                return Err("Invalid client class specified in buffer limit configuration.".into());
            }
            let (Some(hard), Some(soft), Some(soft_seconds)) = (parse_memory(chunk[1]), parse_memory(chunk[2]), chunk[3].parse::<u64>().ok()) else {
                return Err("Error in hard, soft or soft_seconds setting in buffer limit configuration.".into());
            };
            parsed.push((class, OutputLimit { hard, soft, soft_seconds }));
        }
        for (class, lim) in parsed {
            match class.as_str() {
                "normal" => new.normal = lim,
                "pubsub" => new.pubsub = lim,
                _ => new.replica = lim,
            }
        }
        Ok(new)
    }
    fn show(&self, v: &OutputLimits) -> String {
        let c: Vec<String> = v.classes().iter().map(|(n, l)| format!("{n} {} {} {}", l.hard, l.soft, l.soft_seconds)).collect();
        c.join(" ")
    }
    fn rewrite_lines(&self, name: &str, v: &OutputLimits) -> Vec<String> {
        [("normal", v.normal), ("replica", v.replica), ("pubsub", v.pubsub)]
            .iter()
            .map(|(n, l)| format!("{name} {n} {} {} {}", format_memory(l.hard), format_memory(l.soft), l.soft_seconds))
            .collect()
    }
    fn multi(&self) -> bool {
        true
    }
}

/// A directive for a feature Tern refuses outright: only the value that
/// leaves it off (the kind's default: `no`, `0`) is accepted.
pub struct Off<K>(pub K, pub &'static str);

impl<K: Kind> Kind for Off<K>
where
    K::Value: Default + PartialEq,
{
    type Value = K::Value;
    fn parse(&self, args: &[&str], old: &K::Value) -> Result<K::Value, String> {
        let v = self.0.parse(args, old)?;
        if v != K::Value::default() {
            return Err(self.1.to_string());
        }
        Ok(v)
    }
    fn show(&self, v: &K::Value) -> String {
        self.0.show(v)
    }
}

/// Quotes a config value when it needs it (empty, spaces, quotes,
/// control bytes), with the escapes redis.conf's parser understands.
pub fn quote(v: &str) -> String {
    if !v.is_empty() && v.bytes().all(|c| c.is_ascii_graphic() && c != b'"' && c != b'\'' && c != b'\\') {
        return v.to_string();
    }
    let mut s = String::from("\"");
    for c in v.bytes() {
        match c {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            c if c.is_ascii_graphic() || c == b' ' => s.push(c as char),
            c => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push('"');
    s
}

/// A value the server's live settings hold in atomics, so that the
/// request path reads it without the config lock.
pub trait Live: Sized {
    type Cell: Default + Send + Sync;
    fn store(cell: &Self::Cell, v: &Self);
    fn load(cell: &Self::Cell) -> Self;
}

macro_rules! live_int {
    ($($t:ty),*) => {$(
        impl Live for $t {
            type Cell = AtomicU64;
            fn store(cell: &AtomicU64, v: &$t) {
                cell.store(*v as u64, Ordering::Relaxed);
            }
            #[inline]
            fn load(cell: &AtomicU64) -> $t {
                cell.load(Ordering::Relaxed) as $t
            }
        }
    )*};
}
live_int!(u16, u32, u64, usize, i32, i64);

impl Live for bool {
    type Cell = std::sync::atomic::AtomicBool;
    fn store(cell: &Self::Cell, v: &bool) {
        cell.store(*v, Ordering::Relaxed);
    }
    #[inline]
    fn load(cell: &Self::Cell) -> bool {
        cell.load(Ordering::Relaxed)
    }
}

impl Live for Duration {
    /// Nanoseconds: 584 years, past any range a directive allows.
    type Cell = AtomicU64;
    fn store(cell: &AtomicU64, v: &Duration) {
        cell.store(u64::try_from(v.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }
    #[inline]
    fn load(cell: &AtomicU64) -> Duration {
        Duration::from_nanos(cell.load(Ordering::Relaxed))
    }
}

impl Live for OutputLimits {
    /// hard, soft, seconds of each class in turn.
    type Cell = [AtomicU64; 9];
    fn store(cell: &Self::Cell, v: &OutputLimits) {
        for (i, l) in [v.normal, v.replica, v.pubsub].iter().enumerate() {
            cell[3 * i].store(l.hard, Ordering::Relaxed);
            cell[3 * i + 1].store(l.soft, Ordering::Relaxed);
            cell[3 * i + 2].store(l.soft_seconds, Ordering::Relaxed);
        }
    }
    fn load(cell: &Self::Cell) -> OutputLimits {
        let l = |i: usize| OutputLimit {
            hard: cell[3 * i].load(Ordering::Relaxed),
            soft: cell[3 * i + 1].load(Ordering::Relaxed),
            soft_seconds: cell[3 * i + 2].load(Ordering::Relaxed),
        };
        OutputLimits { normal: l(0), replica: l(1), pubsub: l(2) }
    }
}
