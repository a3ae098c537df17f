//! Property tests of the request parser against simple models: an encoder
//! written here (multibulk, and inline with Redis's `sdscatrepr` quoting),
//! and "parse the whole buffer at once" as the model of resumable parsing.

use proptest::prelude::*;
use tern_resp::{Frame, Limits, ParseError};

type Cmd = Vec<Vec<u8>>;

fn multibulk(cmd: &Cmd) -> Vec<u8> {
    let mut b = format!("*{}\r\n", cmd.len()).into_bytes();
    for a in cmd {
        b.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        b.extend_from_slice(a);
        b.extend_from_slice(b"\r\n");
    }
    b
}

/// Redis's `sdscatrepr`: how redis-cli and the server log quote a string.
fn repr(arg: &[u8]) -> Vec<u8> {
    let mut s = vec![b'"'];
    for &c in arg {
        match c {
            b'\\' | b'"' => s.extend_from_slice(&[b'\\', c]),
            b'\n' => s.extend_from_slice(b"\\n"),
            b'\r' => s.extend_from_slice(b"\\r"),
            b'\t' => s.extend_from_slice(b"\\t"),
            0x07 => s.extend_from_slice(b"\\a"),
            0x08 => s.extend_from_slice(b"\\b"),
            c if (0x20..0x7f).contains(&c) => s.push(c),
            c => s.extend_from_slice(format!("\\x{c:02x}").as_bytes()),
        }
    }
    s.push(b'"');
    s
}

/// Feeds `chunks` one after another into one growing buffer, parsing
/// whatever is complete after each, as a connection does.
fn parse_incrementally<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> (Vec<Cmd>, Option<ParseError>) {
    let limits = Limits::default();
    let mut f = Frame::new();
    let mut buf = Vec::new();
    let mut pos = 0;
    let mut out = Vec::new();
    for c in chunks {
        buf.extend_from_slice(c);
        loop {
            match f.parse(&buf[pos..], &limits) {
                Ok(Some(n)) => {
                    assert!(n > 0 && pos + n <= buf.len(), "consumed {n} at {pos} of {}", buf.len());
                    if f.argc() > 0 {
                        out.push(f.args(&buf[pos..]).iter().map(<[u8]>::to_vec).collect());
                    }
                    pos += n;
                }
                Ok(None) => break,
                Err(e) => return (out, Some(e)),
            }
        }
    }
    (out, None)
}

fn arg() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => proptest::collection::vec(any::<u8>(), 0..40),
        1 => proptest::collection::vec(prop::sample::select(b"\r\n$*\0\\\"' ".to_vec()), 0..10),
        1 => proptest::collection::vec(any::<u8>(), 100..3000),
    ]
}

fn command() -> impl Strategy<Value = Cmd> {
    proptest::collection::vec(arg(), 1..8)
}

/// Splits `buf` at the given cut points (taken modulo its length).
fn split<'a>(buf: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (buf.len() + 1)).collect();
    at.push(0);
    at.push(buf.len());
    at.sort_unstable();
    at.dedup();
    at.windows(2).map(|w| &buf[w[0]..w[1]]).collect()
}

/// Bytes that look like requests often enough to reach deep parser states.
fn protocolish() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(b"*".to_vec()),
        Just(b"$".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\0".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"'".to_vec()),
        Just(b"\\".to_vec()),
        Just(b" ".to_vec()),
        Just(b"-1".to_vec()),
        (0u32..20).prop_map(|n| n.to_string().into_bytes()),
        proptest::collection::vec(any::<u8>(), 1..6),
    ];
    proptest::collection::vec(token, 0..60).prop_map(|t| t.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn multibulk_round_trip(cmd in command()) {
        let wire = multibulk(&cmd);
        let (got, err) = parse_incrementally([&wire[..]]);
        prop_assert_eq!(err, None);
        prop_assert_eq!(got, vec![cmd]);
    }

    #[test]
    fn any_split_of_a_pipeline_parses_the_same(
        cmds in proptest::collection::vec(command(), 1..6),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let wire: Vec<u8> = cmds.iter().flat_map(multibulk).collect();
        let (got, err) = parse_incrementally(split(&wire, &cuts));
        prop_assert_eq!(err, None);
        prop_assert_eq!(got, cmds);
    }

    #[test]
    fn byte_at_a_time_equals_all_at_once(cmds in proptest::collection::vec(command(), 1..4)) {
        let wire: Vec<u8> = cmds.iter().flat_map(multibulk).collect();
        let (got, err) = parse_incrementally(wire.chunks(1));
        prop_assert_eq!(err, None);
        prop_assert_eq!(got, cmds);
    }

    #[test]
    fn inline_quoted_round_trip(cmd in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..30), 1..6), crlf in any::<bool>()) {
        let mut line = cmd.iter().map(|a| repr(a)).collect::<Vec<_>>().join(&b' ');
        line.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        let (got, err) = parse_incrementally([&line[..]]);
        prop_assert_eq!(err, None);
        prop_assert_eq!(got, vec![cmd]);
    }

    #[test]
    fn inline_single_quoted_and_bare_round_trip(
        cmd in proptest::collection::vec("[!-~&&[^\\\\'\"]]{1,12}", 1..6),
        quote in proptest::collection::vec(any::<bool>(), 6),
    ) {
        // Bare words cannot be empty or contain quotes; single-quoted ones
        // escape nothing but the quote, so backslashes are left out here.
        let line: Vec<u8> = cmd
            .iter()
            .enumerate()
            .map(|(i, a)| if quote[i] { format!("'{a}'") } else { a.clone() })
            .collect::<Vec<_>>()
            .join("  \t")
            .into_bytes();
        // A line starting with '*' is a multibulk request, not inline.
        prop_assume!(!line.starts_with(b"*"));
        let mut line = line;
        line.extend_from_slice(b"\r\n");
        let (got, err) = parse_incrementally([&line[..]]);
        prop_assert_eq!(err, None);
        let want: Vec<Cmd> = vec![cmd.iter().map(|a| a.as_bytes().to_vec()).collect()];
        prop_assert_eq!(got, want);
    }

    #[test]
    fn mixed_inline_and_multibulk_pipeline(
        cmds in proptest::collection::vec((command(), any::<bool>()), 1..6),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let mut wire = Vec::new();
        for (c, inline) in &cmds {
            if *inline {
                wire.extend(c.iter().map(|a| repr(a)).collect::<Vec<_>>().join(&b' '));
                wire.extend_from_slice(b"\r\n");
            } else {
                wire.extend(multibulk(c));
            }
        }
        // Long inline lines are their own limit; keep them under it.
        prop_assume!(wire.len() < 60_000);
        let (got, err) = parse_incrementally(split(&wire, &cuts));
        prop_assert_eq!(err, None);
        prop_assert_eq!(got, cmds.into_iter().map(|(c, _)| c).collect::<Vec<_>>());
    }

    /// Arbitrary input: incremental parsing agrees with parsing it whole,
    /// commands and error alike, and never consumes more than it was given.
    #[test]
    fn garbage_parses_the_same_in_any_split(
        wire in protocolish(),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let whole = parse_incrementally([&wire[..]]);
        let pieces = parse_incrementally(split(&wire, &cuts));
        prop_assert_eq!(whole, pieces);
    }
}
