//! Property: a stream of requests parses to the same requests, consuming
//! the same bytes, however it is split into reads (the parser is resumable
//! and never mistakes a partial request for an error), and garbage never
//! panics it.

use proptest::prelude::*;
use tern_memcache::{Limits, Parser, Request};

/// Parses everything parseable in `buf` from a fresh parser, feeding it in
/// chunks that end at `cuts`; returns a debug rendering of each request.
fn run(buf: &[u8], cuts: &[usize], lim: &Limits) -> (Vec<String>, usize) {
    let mut p = Parser::new();
    let mut out = Vec::new();
    let mut pos = 0;
    let mut avail_idx = 0;
    let mut ends: Vec<usize> = cuts.iter().map(|&c| c.min(buf.len())).collect();
    ends.sort_unstable();
    ends.push(buf.len());
    while avail_idx < ends.len() {
        let avail = ends[avail_idx].max(pos);
        match p.parse(&buf[pos..avail], lim) {
            Ok(Some((req, n))) => {
                assert!(n > 0 && pos + n <= avail);
                // Skipped data may arrive in any number of pieces.
                if !matches!(req, Request::Skipped) {
                    out.push(format!("{req:?}"));
                }
                pos += n;
            }
            Ok(None) => avail_idx += 1,
            Err(e) => {
                out.push(format!("fatal {e:?}"));
                break;
            }
        }
    }
    (out, pos)
}

fn request() -> impl Strategy<Value = Vec<u8>> {
    let key = "[a-z]{1,8}";
    prop_oneof![
        (
            key,
            0u32..100,
            -2i32..100,
            proptest::collection::vec(any::<u8>(), 0..40)
        )
            .prop_map(|(k, f, t, d)| {
                let mut v = format!("set {k} {f} {t} {}\r\n", d.len()).into_bytes();
                v.extend_from_slice(&d);
                v.extend_from_slice(b"\r\n");
                v
            }),
        proptest::collection::vec(key, 1..5)
            .prop_map(|ks| format!("gets {}\r\n", ks.join(" ")).into_bytes()),
        (key, "[a-zA-Z0-9 ]{0,12}").prop_map(|(k, f)| format!("mg {k} {f}\r\n").into_bytes()),
        (
            key,
            proptest::collection::vec(any::<u8>(), 0..300),
            "[a-zA-Z0-9 ]{0,8}"
        )
            .prop_map(|(k, d, f)| {
                let mut v = format!("ms {k} {} {f}\r\n", d.len()).into_bytes();
                v.extend_from_slice(&d);
                v.extend_from_slice(b"\r\n");
                v
            }),
        Just(b"mn\r\n".to_vec()),
        "[ -~]{0,30}\r?\n".prop_map(|s| s.into_bytes()),
    ]
}

proptest! {
    #[test]
    fn any_split_parses_the_same(reqs in proptest::collection::vec(request(), 1..12), cuts in proptest::collection::vec(0usize..4000, 0..12)) {
        let buf: Vec<u8> = reqs.concat();
        // A small limit so that some items are refused and skipped.
        let lim = Limits { max_item_size: 300 };
        let whole = run(&buf, &[], &lim);
        let split = run(&buf, &cuts, &lim);
        prop_assert_eq!(whole, split);
    }

    #[test]
    fn garbage_never_panics(buf in proptest::collection::vec(any::<u8>(), 0..3000)) {
        let _ = run(&buf, &[7, 100], &Limits::default());
    }
}
