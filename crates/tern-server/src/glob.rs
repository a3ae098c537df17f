//! Redis's glob-style matching (`stringmatchlen`): `*`, `?`, `[abc]`,
//! `[^a-z]`, and `\` to escape. Used by KEYS, SCAN MATCH, CONFIG GET,
//! COMMAND LIST PATTERN.

/// Does `s` match `pattern`? `nocase` folds ASCII case.
pub fn matches(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    // Nested stars make the naive recursion exponential; Redis bounds the
    // recursion, we do the same with a budget of steps.
    let mut budget = 1_000_000u32;
    match_inner(pattern, s, nocase, &mut budget)
}

fn eq(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        a.eq_ignore_ascii_case(&b)
    } else {
        a == b
    }
}

fn match_inner(mut p: &[u8], mut s: &[u8], nocase: bool, budget: &mut u32) -> bool {
    while !p.is_empty() {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        match p[0] {
            b'*' => {
                while p.len() > 1 && p[1] == b'*' {
                    p = &p[1..];
                }
                if p.len() == 1 {
                    return true;
                }
                for i in 0..=s.len() {
                    if match_inner(&p[1..], &s[i..], nocase, budget) {
                        return true;
                    }
                    if *budget == 0 {
                        return false;
                    }
                }
                return false;
            }
            b'?' => {
                if s.is_empty() {
                    return false;
                }
                s = &s[1..];
            }
            b'[' => {
                if s.is_empty() {
                    return false;
                }
                p = &p[1..];
                let not = p.first() == Some(&b'^');
                if not {
                    p = &p[1..];
                }
                let mut hit = false;
                loop {
                    if p.is_empty() {
                        // Unterminated class: Redis treats the end as `]`.
                        break;
                    }
                    if p[0] == b'\\' && p.len() >= 2 {
                        p = &p[1..];
                        if eq(p[0], s[0], nocase) {
                            hit = true;
                        }
                    } else if p[0] == b']' {
                        break;
                    } else if p.len() >= 3 && p[1] == b'-' {
                        let (mut lo, mut hi) = (p[0], p[2]);
                        if lo > hi {
                            std::mem::swap(&mut lo, &mut hi);
                        }
                        let c = s[0];
                        let in_range = if nocase {
                            let (lo, hi, c) = (lo.to_ascii_lowercase(), hi.to_ascii_lowercase(), c.to_ascii_lowercase());
                            c >= lo && c <= hi
                        } else {
                            c >= lo && c <= hi
                        };
                        if in_range {
                            hit = true;
                        }
                        p = &p[2..];
                    } else if eq(p[0], s[0], nocase) {
                        hit = true;
                    }
                    p = &p[1..];
                }
                if not {
                    hit = !hit;
                }
                if !hit {
                    return false;
                }
                s = &s[1..];
                if p.is_empty() {
                    // Pattern ended inside the class.
                    return s.is_empty();
                }
            }
            b'\\' if p.len() >= 2 => {
                p = &p[1..];
                if s.is_empty() || !eq(p[0], s[0], nocase) {
                    return false;
                }
                s = &s[1..];
            }
            c => {
                if s.is_empty() || !eq(c, s[0], nocase) {
                    return false;
                }
                s = &s[1..];
            }
        }
        p = &p[1..];
    }
    s.is_empty()
}

#[cfg(test)]
mod tests {
    use super::matches;

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
        assert!(matches(b"h\\*llo", b"h*llo", false));
        assert!(!matches(b"h\\*llo", b"hello", false));
        assert!(matches(b"MAX*", b"maxclients", true));
        assert!(!matches(b"a", b"ab", false));
        assert!(matches(b"", b"", false));
    }

    #[test]
    fn pathological_pattern_terminates() {
        let p = b"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
        let s = vec![b'a'; 200];
        assert!(!matches(p, &s, false));
    }
}
