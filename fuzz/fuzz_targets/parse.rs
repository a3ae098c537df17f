//! Fuzzes `Frame::parse` over arbitrary bytes and checks its invariants:
//! no panic; a request consumes at least one byte and at most what it was
//! given; multibulk arguments are slices of the request they came from;
//! re-parsing exactly the consumed prefix gives the same request; and
//! feeding the same bytes in two pieces gives the same requests and error
//! as feeding them whole (resumable parsing).
//!
//! The first byte picks the limits (authenticated or not, a small
//! proto-max-bulk-len) and a split point, the rest is the input.
//!
//! Run from the repository root:
//! `cargo +nightly fuzz run parse -- -max_total_time=180 -dict=fuzz/parse.dict`
#![no_main]

use libfuzzer_sys::fuzz_target;
use tern_resp::{Frame, Limits, ParseError};

type Requests = Vec<Vec<Vec<u8>>>;

fn parse_all(chunks: &[&[u8]], limits: &Limits) -> (Requests, Option<ParseError>) {
    let mut f = Frame::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut pos = 0;
    let mut out = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        loop {
            let rest = &buf[pos..];
            match f.parse(rest, limits) {
                Ok(Some(n)) => {
                    assert!(n >= 1 && n <= rest.len(), "consumed {n} of {}", rest.len());
                    let req = &rest[..n];
                    let args = f.args(rest);
                    assert_eq!(args.len(), f.argc());
                    if !f.is_inline() {
                        for a in args.iter() {
                            let start = a.as_ptr() as usize - req.as_ptr() as usize;
                            assert!(a.as_ptr() >= req.as_ptr() && start + a.len() <= req.len(), "argument outside its request");
                        }
                    }
                    let got: Vec<Vec<u8>> = args.iter().map(<[u8]>::to_vec).collect();

                    // The consumed prefix alone is the same request.
                    let mut again = Frame::new();
                    assert_eq!(again.parse(req, limits), Ok(Some(n)), "prefix re-parse");
                    let got2: Vec<Vec<u8>> = again.args(req).iter().map(<[u8]>::to_vec).collect();
                    assert_eq!(got, got2, "prefix re-parse gave other arguments");

                    if f.argc() > 0 {
                        out.push(got);
                    }
                    pos += n;
                }
                Ok(None) => break,
                Err(e) => {
                    // The message is what the client gets: one line.
                    let m = e.message();
                    assert!(m.starts_with(b"ERR Protocol error: "));
                    return (out, Some(e));
                }
            }
        }
    }
    (out, None)
}

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, input)) = data.split_first() else { return };
    let limits = Limits {
        authenticated: ctl & 1 == 0,
        max_bulk_len: if ctl & 2 == 0 { 512 * 1024 * 1024 } else { 64 },
        ..Limits::default()
    };
    let whole = parse_all(&[input], &limits);
    let cut = (usize::from(ctl >> 2) * input.len()) / 63;
    let cut = cut.min(input.len());
    let split = parse_all(&[&input[..cut], &input[cut..]], &limits);
    // Past INLINE_MAX_SIZE, whether a line is "too big" depends on how much
    // of it had arrived (as in Redis, which checks after every read).
    if input.len() <= tern_resp::parse::INLINE_MAX_SIZE {
        assert_eq!(whole, split, "split at {cut} changed the result");
    }
});
