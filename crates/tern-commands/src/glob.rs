//! Redis's glob-style matching (`stringmatchlen` in Redis's `util.c`): `*`,
//! `?`, `[abc]`, `[^a-z]`, and `\` to escape. Used by KEYS, SCAN MATCH,
//! HSCAN MATCH, CONFIG GET and COMMAND LIST PATTERN.
//!
//! The answers are Redis's, quirks included, because clients see them:
//! `*` does not match the empty string (KEYS and SCAN short-circuit a bare
//! `*` before asking), an unterminated class `[ab` treats its last byte as
//! both member and end, an escape inside a class compares case-sensitively
//! even with `nocase`, a range compares bytes as C's signed `char`s
//! (`[a-\xff]` is the bytes from 0xff, that is -1, up to `a`).
//!
//! Client input drives this code, so two bounds keep it cheap whatever the
//! pattern:
//! - **Time.** When the pattern after a `*` matches at no position of the
//!   rest of the string, no earlier `*` can help by swallowing more, so the
//!   whole search stops (`skip_longer`). Each `*` scans the string at most
//!   once: O(pattern × string), never exponential.
//! - **Depth.** Each `*` recurses once; past [`MAX_NESTING`] levels the
//!   match fails, as Redis's does (its guard against the same abuse). The
//!   worker's stack holds that depth with room to spare (a few hundred bytes
//!   a frame), so `KEYS` with `*?` repeated 50,000 times answers "no match"
//!   instead of overflowing the stack.

/// Deepest `*` nesting tried before giving up on a match, as Redis.
pub const MAX_NESTING: u32 = 1000;

/// Does `s` match `pattern`? `nocase` folds ASCII case.
pub fn matches(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    let mut skip_longer = false;
    match_at(pattern, s, nocase, &mut skip_longer, 0)
}

#[inline]
fn eq(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        a.eq_ignore_ascii_case(&b)
    } else {
        a == b
    }
}

/// C's `tolower` in the "C" locale: only 'A'..='Z' change.
#[inline]
fn lower(c: i8) -> i8 {
    (c as u8).to_ascii_lowercase() as i8
}

fn match_at(mut p: &[u8], mut s: &[u8], nocase: bool, skip_longer: &mut bool, nesting: u32) -> bool {
    if nesting > MAX_NESTING {
        return false;
    }
    while !p.is_empty() && !s.is_empty() {
        match p[0] {
            b'*' => {
                while p.len() >= 2 && p[1] == b'*' {
                    p = &p[1..];
                }
                if p.len() == 1 {
                    return true;
                }
                while !s.is_empty() {
                    if match_at(&p[1..], s, nocase, skip_longer, nesting + 1) {
                        return true;
                    }
                    if *skip_longer {
                        return false;
                    }
                    s = &s[1..];
                }
                *skip_longer = true;
                return false;
            }
            b'?' => s = &s[1..],
            b'[' => {
                p = &p[1..];
                let not = p.first() == Some(&b'^');
                if not {
                    p = &p[1..];
                }
                let c = s[0];
                let mut hit = false;
                // `p` ends on the class's last byte (`]`, or the pattern's
                // last byte when the class is unterminated); the step after
                // the match moves past it.
                loop {
                    if p.len() >= 2 && p[0] == b'\\' {
                        p = &p[1..];
                        hit |= p[0] == c;
                    } else if p.first() == Some(&b']') {
                        break;
                    } else if p.is_empty() {
                        break;
                    } else if p.len() >= 3 && p[1] == b'-' {
                        // Redis compares a range as C `char`s, signed on
                        // the platforms it runs on: bytes above 0x7f sort
                        // below NUL, so `[a-\xff]` is -1..='a' there.
                        let (mut lo, mut hi) = (p[0] as i8, p[2] as i8);
                        if lo > hi {
                            std::mem::swap(&mut lo, &mut hi);
                        }
                        let c = c as i8;
                        let (lo, hi, c) = if nocase {
                            (lower(lo), lower(hi), lower(c))
                        } else {
                            (lo, hi, c)
                        };
                        hit |= c >= lo && c <= hi;
                        p = &p[2..];
                    } else {
                        hit |= eq(p[0], c, nocase);
                    }
                    if p.len() == 1 {
                        // Unterminated: the last byte was a member and is
                        // also where the class ends (Redis steps back onto it).
                        break;
                    }
                    p = &p[1..];
                }
                if hit == not {
                    return false;
                }
                s = &s[1..];
            }
            b'\\' if p.len() >= 2 => {
                p = &p[1..];
                if !eq(p[0], s[0], nocase) {
                    return false;
                }
                s = &s[1..];
            }
            c => {
                if !eq(c, s[0], nocase) {
                    return false;
                }
                s = &s[1..];
            }
        }
        // Empty only after a class with no members (`[`, `[^`), where Redis
        // has stepped back onto the bracket: stepping past it ends the pattern.
        p = p.get(1..).unwrap_or_default();
        if s.is_empty() {
            while p.first() == Some(&b'*') {
                p = &p[1..];
            }
            break;
        }
    }
    p.is_empty() && s.is_empty()
}

#[cfg(test)]
mod tests {
    use super::{matches, MAX_NESTING};

    #[test]
    fn basics() {
        assert!(matches(b"*", b"anything", false));
        assert!(matches(b"h?llo", b"hello", false));
        assert!(matches(b"h*llo", b"heeeello", false));
        assert!(matches(b"h[ae]llo", b"hallo", false));
        assert!(!matches(b"h[ae]llo", b"hillo", false));
        assert!(matches(b"h[^e]llo", b"hallo", false));
        assert!(!matches(b"h[^e]llo", b"hello", false));
        assert!(matches(b"h[a-b]llo", b"hbllo", false));
        assert!(matches(b"h[b-a]llo", b"hbllo", false));
        assert!(matches(b"h\\*llo", b"h*llo", false));
        assert!(!matches(b"h\\*llo", b"hello", false));
        assert!(matches(b"MAX*", b"maxclients", true));
        assert!(!matches(b"a", b"ab", false));
        assert!(matches(b"", b"", false));
        assert!(matches(b"a*", b"a", false));
        assert!(matches(b"a**", b"a", false));
    }

    /// Redis's answers where a textbook glob would differ.
    #[test]
    fn redis_quirks() {
        // A bare star does not match the empty string; callers short-circuit.
        assert!(!matches(b"*", b"", false));
        // Unterminated classes: the last byte is both member and end.
        assert!(matches(b"[a", b"a", false));
        assert!(!matches(b"[a", b"b", false));
        assert!(matches(b"x[ab", b"xb", false));
        // `[a-]` is the range ']'..'a'; `[^` matches any one byte, `[` none.
        assert!(matches(b"[a-]", b"`", false));
        assert!(!matches(b"[a-]", b"b", false));
        assert!(matches(b"[^", b"x", false));
        assert!(!matches(b"[", b"[", false));
        // An escape inside a class compares case-sensitively even with nocase.
        assert!(!matches(b"[\\A]", b"a", true));
        assert!(matches(b"[A]", b"a", true));
        // A trailing backslash matches itself.
        assert!(matches(b"a\\", b"a\\", false));
    }

    /// Found by the `glob` fuzz target (`[\xd5z[a-\xff]` against `{`):
    /// Redis compares range ends as signed `char`s, so a range with an end
    /// above 0x7f covers the bytes from that (negative) end up to the
    /// other, not the bytes between them as unsigned numbers. Answers
    /// checked against redis-server (KEYS and SCAN MATCH).
    #[test]
    fn range_ends_are_signed_chars() {
        // -1 ..= 'a': NUL to 'a' and 0xff, not 'b' ..= 0xfe.
        assert!(!matches(b"[\xd5z[a-\xff]", b"{", false));
        assert!(!matches(b"[a-\xff]", b"b", false));
        assert!(!matches(b"[a-\xff]", b"\x80", false));
        assert!(matches(b"[a-\xff]", b"0", false));
        assert!(matches(b"[a-\xff]", b"\xff", false));
        assert!(matches(b"[\x80-\xff]", b"\x90", false));
        assert!(!matches(b"[\x80-\xff]", b"a", false));
        // Folding under nocase leaves the high bytes alone.
        assert!(matches(b"[A-\xff]", b"b", true) == matches(b"[a-\xff]", b"b", false));
    }

    #[test]
    fn pathological_pattern_terminates() {
        let p = b"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
        let s = vec![b'a'; 200];
        assert!(!matches(p, &s, false));
    }

    /// `*?` × 50,000 against 50,000 `a`s would match, but it nests 50,000
    /// stars deep: like Redis, the match gives up past the limit instead of
    /// overflowing the stack (Redis's test "Regression for pattern matching
    /// long nested loops" expects no keys).
    #[test]
    fn nesting_is_bounded() {
        let s = vec![b'a'; 50_000];
        let p = b"*?".repeat(50_000);
        let t = std::thread::Builder::new().stack_size(1 << 20).spawn(move || matches(&p, &s, false)).unwrap();
        assert!(!t.join().unwrap());
        // At the limit it still matches; one star past, it does not.
        let n = MAX_NESTING as usize;
        let s = vec![b'a'; n + 1];
        assert!(matches(&b"*?".repeat(n), &s, false));
        assert!(!matches(&b"*?".repeat(n + 1), &s, false));
    }
}
