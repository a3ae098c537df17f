//! Fuzzes `tern_commands::glob::matches` (Redis's `stringmatchlen`, used by
//! KEYS, SCAN MATCH, CONFIG GET, ...) and checks:
//! - on short inputs (pattern and string of at most 64 bytes, at most 12
//!   stars), its answer is the answer of [`reference`], an independent
//!   matcher written here from Redis's semantics: the pattern is first cut
//!   into tokens (classes become 256-entry membership tables), then matched
//!   by plain exponential recursion, with neither the "skip longer matches"
//!   cut nor the nesting limit (neither can change an answer at this size);
//!   a reference run over its step budget is inconclusive and skipped;
//! - on long inputs (up to 8 KB each), only that it returns, and in time
//!   O(pattern x string), as the matcher promises: within [`SLACK`] times
//!   what the worst quadratic case costs per (pattern byte, string byte)
//!   pair on this machine in this build (measured once at start-up), and
//!   never less than [`LONG_FLOOR`]. An absolute bound would not do: the
//!   quadratic worst case (`*` then 4,000 `a`s and a `b`, against 8,000
//!   `a`s) takes over a second in an ASan and coverage build, and so does
//!   Redis's matcher, which has the same complexity; an exponential walk
//!   is off by orders of magnitude.
//!
//! Input: a control byte (bit 0: nocase; bit 1: long mode; bit 2: map
//! both sides onto a small alphabet of the bytes that matter, so that
//! matches are frequent), then the pattern length (one byte, or two in long
//! mode), then the pattern and the string.
//!
//! Run from the repository root:
//! `cargo +nightly fuzz run glob -- -dict=fuzz/glob.dict -max_len=16400 -max_total_time=180`
#![no_main]

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use tern_commands::glob::matches;

/// How many times the calibrated quadratic cost a long input may take
/// (room for a loaded machine; an exponential walk exceeds any such factor).
const SLACK: f64 = 10.0;
/// The least time allowed, for the timer's and the scheduler's noise.
const LONG_FLOOR: Duration = Duration::from_millis(200);
const SHORT_MAX: usize = 64;
const SHORT_MAX_STARS: usize = 12;
/// Recursive calls the reference may make before giving up.
const REF_STEPS: u64 = 2_000_000;

/// Bytes that exercise every rule: the specials, both cases, a range's
/// ends, and bytes above 0x7f (signed in Redis's C).
const ALPHABET: &[u8] = b"ab]AB-^\\*?[z\x80\xff";

/// One element of a pattern, as Redis's matcher consumes it.
#[derive(Clone, Debug)]
enum Tok {
    /// A run of `*`.
    Star,
    /// `?`.
    Any,
    /// A literal byte (also an escaped one); folded under nocase.
    Lit(u8),
    /// `[...]`: whether each byte is a member (negation applied).
    Class(Box<[bool; 256]>),
}

/// C's `tolower` in the "C" locale over a `char` promoted to `int`
/// (Redis's locale for LC_CTYPE), which leaves everything but 'A'..'Z' as is.
fn lower(c: i32) -> i32 {
    if (i32::from(b'A')..=i32::from(b'Z')).contains(&c) {
        c + 32
    } else {
        c
    }
}

/// A byte as Redis's `char` (signed on x86-64 and most Linux targets).
fn sc(b: u8) -> i32 {
    i32::from(b as i8)
}

/// Cuts `p` into tokens following `stringmatchlen`'s reading of it. A
/// class's extent does not depend on the string, so it is read once here
/// and its members computed for every byte.
fn tokenize(p: &[u8], nocase: bool) -> Vec<Tok> {
    let mut toks = Vec::new();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            b'*' => {
                while i < p.len() && p[i] == b'*' {
                    i += 1;
                }
                toks.push(Tok::Star);
            }
            b'?' => {
                toks.push(Tok::Any);
                i += 1;
            }
            b'\\' if i + 1 < p.len() => {
                toks.push(Tok::Lit(p[i + 1]));
                i += 2;
            }
            b'[' => {
                let mut j = i + 1;
                let not = p.get(j) == Some(&b'^');
                if not {
                    j += 1;
                }
                // Member rules: an escaped byte (case-sensitive), a range
                // (signed ends, swapped if reversed, folded under nocase),
                // a single byte (folded under nocase).
                let mut member = Box::new([false; 256]);
                let mut add = |f: &dyn Fn(u8) -> bool| {
                    for c in 0..=255u8 {
                        if f(c) {
                            member[c as usize] = true;
                        }
                    }
                };
                loop {
                    if j >= p.len() {
                        // Unterminated: ends with the pattern (its last byte
                        // has been read as a member already, if any).
                        j = p.len();
                        break;
                    }
                    if p[j] == b'\\' && j + 1 < p.len() {
                        let e = p[j + 1];
                        add(&|c| c == e);
                        j += 2;
                        continue;
                    }
                    if p[j] == b']' {
                        j += 1;
                        break;
                    }
                    if j + 2 < p.len() && p[j + 1] == b'-' {
                        let (mut lo, mut hi) = (sc(p[j]), sc(p[j + 2]));
                        if lo > hi {
                            std::mem::swap(&mut lo, &mut hi);
                        }
                        if nocase {
                            add(&|c| (lower(lo)..=lower(hi)).contains(&lower(sc(c))));
                        } else {
                            add(&|c| (lo..=hi).contains(&sc(c)));
                        }
                        j += 3;
                        continue;
                    }
                    let m = p[j];
                    add(&|c| if nocase { lower(sc(c)) == lower(sc(m)) } else { c == m });
                    j += 1;
                }
                if not {
                    for m in member.iter_mut() {
                        *m = !*m;
                    }
                }
                toks.push(Tok::Class(member));
                i = j;
            }
            c => {
                toks.push(Tok::Lit(c));
                i += 1;
            }
        }
    }
    toks
}

/// Matches tokens against `s` by trying every split; `None` when the step
/// budget runs out.
fn ref_match(t: &[Tok], s: &[u8], nocase: bool, steps: &mut u64) -> Option<bool> {
    *steps += 1;
    if *steps > REF_STEPS {
        return None;
    }
    // Redis's loop runs only while both pattern and string remain.
    if s.is_empty() {
        return Some(t.is_empty());
    }
    let Some(first) = t.first() else { return Some(false) };
    let c = s[0];
    let one = match first {
        Tok::Star => {
            if t.len() == 1 {
                return Some(true);
            }
            // The rest must match a non-empty suffix: the empty one is
            // never tried (which is why `*` alone does not match "").
            for k in 0..s.len() {
                if ref_match(&t[1..], &s[k..], nocase, steps)? {
                    return Some(true);
                }
            }
            return Some(false);
        }
        Tok::Any => true,
        Tok::Lit(l) => {
            if nocase {
                lower(sc(*l)) == lower(sc(c))
            } else {
                *l == c
            }
        }
        Tok::Class(m) => m[c as usize],
    };
    if !one {
        return Some(false);
    }
    let (t, s) = (&t[1..], &s[1..]);
    if s.is_empty() {
        // The string ran out after a byte: trailing stars match nothing.
        let rest = t.iter().skip_while(|t| matches!(t, Tok::Star)).count();
        return Some(rest == 0);
    }
    ref_match(t, s, nocase, steps)
}

/// Redis's answer, or `None` when too costly to compute this way.
fn reference(p: &[u8], s: &[u8], nocase: bool) -> Option<bool> {
    let toks = tokenize(p, nocase);
    ref_match(&toks, s, nocase, &mut 0)
}

/// Seconds per (pattern byte, string byte) pair of the quadratic worst
/// case, the fastest of a few runs.
fn per_cell() -> f64 {
    static V: OnceLock<f64> = OnceLock::new();
    *V.get_or_init(|| {
        let (p, s) = ([&b"*"[..], &[b'a'; 1000], b"b"].concat(), vec![b'a'; 2000]);
        let cells = (p.len() * s.len()) as f64;
        (0..3)
            .map(|_| {
                let t = Instant::now();
                assert!(!matches(&p, &s, false));
                t.elapsed().as_secs_f64() / cells
            })
            .fold(f64::INFINITY, f64::min)
    })
}

fn show(b: &[u8]) -> String {
    b.escape_ascii().to_string()
}

fuzz_target!(|data: &[u8]| {
    let [ctl, rest @ ..] = data else { return };
    let nocase = ctl & 1 != 0;
    let long = ctl & 2 != 0;
    let (plen, body) = if long {
        let [a, b, body @ ..] = rest else { return };
        (usize::from(u16::from_le_bytes([*a, *b])), body)
    } else {
        let [a, body @ ..] = rest else { return };
        (usize::from(*a), body)
    };
    let plen = plen.min(body.len());
    let (mut p, mut s) = (body[..plen].to_vec(), body[plen..].to_vec());
    if ctl & 4 != 0 {
        for b in p.iter_mut().chain(s.iter_mut()) {
            *b = ALPHABET[usize::from(*b) % ALPHABET.len()];
        }
    }
    if long {
        if p.len() > 8192 || s.len() > 8192 {
            return;
        }
        let budget = LONG_FLOOR.max(Duration::from_secs_f64(SLACK * per_cell() * ((p.len() + 1) * (s.len() + 1)) as f64));
        let t = Instant::now();
        let _ = matches(&p, &s, nocase);
        let took = t.elapsed();
        assert!(took < budget, "{} ms (budget {} ms) for a {}-byte pattern and a {}-byte string", took.as_millis(), budget.as_millis(), p.len(), s.len());
        return;
    }
    let stars = p.iter().filter(|&&c| c == b'*').count();
    if p.len() > SHORT_MAX || s.len() > SHORT_MAX || stars > SHORT_MAX_STARS {
        return;
    }
    let got = matches(&p, &s, nocase);
    if let Some(want) = reference(&p, &s, nocase) {
        assert_eq!(got, want, "pattern \"{}\" string \"{}\" nocase {nocase}: glob says {got}, the reference {want}", show(&p), show(&s));
    }
});
