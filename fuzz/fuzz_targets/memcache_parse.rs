//! Fuzzes the memcached text and meta request parser
//! (`tern_memcache::Parser::parse`) over arbitrary bytes and checks:
//! - no panic;
//! - a request consumes at least one byte and at most what it was given,
//!   and every key or data slice it borrows lies inside those bytes;
//! - re-parsing exactly the consumed prefix, from the parser state before
//!   the request, gives the same request and length;
//! - resumable: feeding the same bytes in three pieces gives the same
//!   requests, fatal error, consumed length and skipped-byte total as
//!   feeding them whole (a refused data block may be skipped in any number
//!   of pieces, so `Skipped` is compared by its byte total). The only
//!   allowed difference is memcached's own: a line without a newline is
//!   "too long" as soon as more than `LINE_MAX` bytes of it have arrived,
//!   so a piece may close the connection earlier than the whole would;
//! - no allocation sized from a claimed length: while `parse` runs, no
//!   single allocation is larger than [`MAX_PARSE_ALLOC`] (the parser
//!   allocates only base64-decoded keys), and a storage header claiming up
//!   to 2 GiB followed by a few bytes is incomplete or refused, never
//!   buffered.
//!
//! The first byte picks the item size limit and the second and third the
//! two split points; the rest is the input.
//!
//! Run from the repository root:
//! `cargo +nightly fuzz run memcache_parse -- -dict=fuzz/memcache.dict -max_total_time=180`
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use libfuzzer_sys::fuzz_target;
use tern_memcache::parse::Fatal;
use tern_memcache::{Limits, Parser, Request, KEY_MAX};

/// Largest single allocation `parse` may make: a base64 key decodes to at
/// most 3/4 of `KEY_MAX` bytes; the rest is slack for the allocator.
const MAX_PARSE_ALLOC: usize = 1024;

/// The system allocator, noting the largest allocation made while armed.
struct Watch;

static ARMED: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Watch {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if ARMED.load(Ordering::Relaxed) {
            LARGEST.fetch_max(l.size(), Ordering::Relaxed);
        }
        // SAFETY: the caller's contract for `alloc`, passed through.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `System` with layout `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        if ARMED.load(Ordering::Relaxed) {
            LARGEST.fetch_max(l.size(), Ordering::Relaxed);
        }
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if ARMED.load(Ordering::Relaxed) {
            LARGEST.fetch_max(new, Ordering::Relaxed);
        }
        // SAFETY: `p` came from `System` with layout `l`.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Watch = Watch;

/// `p.parse(buf, lim)`, asserting it made no allocation above the cap.
fn watched_parse<'a>(p: &mut Parser, buf: &'a [u8], lim: &Limits) -> Result<Option<(Request<'a>, usize)>, Fatal> {
    LARGEST.store(0, Ordering::Relaxed);
    ARMED.store(true, Ordering::Relaxed);
    let r = p.parse(buf, lim);
    ARMED.store(false, Ordering::Relaxed);
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(largest <= MAX_PARSE_ALLOC, "parse allocated {largest} bytes at once from {} bytes of input", buf.len());
    r
}

fn inside(s: &[u8], req: &[u8]) -> bool {
    let (a, b) = (s.as_ptr() as usize, req.as_ptr() as usize);
    s.is_empty() || (a >= b && a + s.len() <= b + req.len())
}

/// The borrowed slices of a request all lie in the bytes it consumed.
fn check_borrows(r: &Request<'_>, req: &[u8]) {
    use std::borrow::Cow;
    let ok = match r {
        Request::Get { keys, .. } => inside(keys.0, req) && keys.iter().all(|k| k.len() <= KEY_MAX),
        Request::Store { key, data, .. } => inside(key, req) && inside(data, req) && key.len() <= KEY_MAX,
        Request::Delete { key, .. } | Request::Arith { key, .. } | Request::Touch { key, .. } => inside(key, req) && key.len() <= KEY_MAX,
        Request::Stats { args } => inside(args.0, req),
        Request::Meta(m) => {
            inside(m.flags.raw, req)
                && inside(m.data, req)
                && m.flags.opaque.map_or(true, |o| inside(o, req))
                && match &m.key {
                    Cow::Borrowed(k) => inside(k, req) && k.len() <= KEY_MAX,
                    Cow::Owned(k) => k.len() <= KEY_MAX,
                }
        }
        Request::MetaDebug { key: Cow::Borrowed(k), .. } | Request::TooLarge { key: Cow::Borrowed(k), .. } => inside(k, req),
        _ => true,
    };
    assert!(ok, "{r:?} borrows outside its {} bytes", req.len());
}

#[derive(Debug, PartialEq)]
struct Outcome {
    requests: Vec<String>,
    fatal: Option<Fatal>,
    consumed: usize,
    skipped: usize,
}

/// Parses `input` as it arrives in pieces ending at `ends` (ascending,
/// the last one `input.len()`), from a fresh parser.
fn run(input: &[u8], ends: &[usize], lim: &Limits) -> Outcome {
    let mut p = Parser::new();
    let mut out = Outcome { requests: Vec::new(), fatal: None, consumed: 0, skipped: 0 };
    let mut pos = 0;
    for &end in ends {
        loop {
            let buf = &input[pos..end];
            let before = p.clone();
            match watched_parse(&mut p, buf, lim) {
                Ok(Some((r, n))) => {
                    assert!(n >= 1 && n <= buf.len(), "consumed {n} of {}", buf.len());
                    let req = &buf[..n];
                    check_borrows(&r, req);
                    let text = format!("{r:?}");
                    // The consumed prefix alone is the same request.
                    let mut again = before;
                    match watched_parse(&mut again, req, lim) {
                        Ok(Some((r2, n2))) => {
                            assert_eq!(n2, n, "prefix re-parse consumed another length");
                            assert_eq!(format!("{r2:?}"), text, "prefix re-parse gave another request");
                        }
                        other => panic!("prefix re-parse of {text} gave {other:?}"),
                    }
                    if matches!(r, Request::Skipped) {
                        out.skipped += n;
                    } else {
                        out.requests.push(text);
                    }
                    pos += n;
                }
                Ok(None) => break,
                Err(e) => {
                    out.fatal = Some(e);
                    out.consumed = pos;
                    return out;
                }
            }
        }
    }
    out.consumed = pos;
    out
}

/// A storage header claiming `claim` bytes, followed by `tail`: incomplete
/// or refused, and never an allocation of the claimed size.
fn claimed_length(claim: u32, tail: &[u8], lim: &Limits) {
    let claim = claim % (i32::MAX as u32 - 1);
    let mut buf = format!("set k 0 0 {claim}\r\n").into_bytes();
    buf.extend_from_slice(&tail[..tail.len().min(64)]);
    if claim as usize + 2 <= tail.len().min(64) {
        return;
    }
    match watched_parse(&mut Parser::new(), &buf, lim) {
        Ok(None) | Ok(Some((Request::TooLarge { .. } | Request::Error { .. }, _))) => {}
        other => panic!("a header claiming {claim} bytes with {} of them gave {other:?}", tail.len().min(64)),
    }
}

fuzz_target!(|data: &[u8]| {
    let [ctl, c1, c2, input @ ..] = data else { return };
    let lim = Limits {
        max_item_size: match ctl & 3 {
            0 => Limits::default().max_item_size,
            1 => 300,
            2 => 64,
            _ => usize::MAX,
        },
    };
    let a = usize::from(*c1) * input.len() / 255;
    let b = usize::from(*c2) * input.len() / 255;
    let (a, b) = (a.min(b), a.max(b));
    let whole = run(input, &[input.len()], &lim);
    let split = run(input, &[a, b, input.len()], &lim);
    if split != whole {
        // Only memcached's early "line too long" may differ, and then what
        // came before it is the same.
        assert!(
            split.fatal == Some(Fatal::LineTooLong) && whole.fatal != Some(Fatal::LineTooLong),
            "split at {a}, {b} changed the result:\nwhole {whole:?}\nsplit {split:?}"
        );
        assert!(whole.requests.starts_with(&split.requests), "split at {a}, {b} changed the requests before a long line:\nwhole {whole:?}\nsplit {split:?}");
    }
    let claim = u32::from_le_bytes([*ctl, *c1, *c2, input.first().copied().unwrap_or(0)]);
    claimed_length(claim, input, &lim);
});
