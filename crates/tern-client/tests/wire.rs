//! What goes on the wire, seen by a scripted server: a multi-get is one
//! request per server, and meta replies are matched by opaque and key, not
//! by their order.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};

use tern_client::{Error, GetOpts, MetaClient, Options};

/// Reads until `end` closes the request; returns everything read.
fn read_until(s: &mut TcpStream, end: &[u8]) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    let mut b = [0u8; 4096];
    while !got.ends_with(end) {
        let n = s.read(&mut b).ok().filter(|&n| n > 0)?;
        got.extend_from_slice(&b[..n]);
    }
    Some(got)
}

#[test]
fn meta_multi_get_is_one_request_and_matches_by_opaque() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let (addr, _) = common::fake(move |_, mut s| {
        while let Some(req) = read_until(&mut s, b"mn\r\n") {
            log.lock().unwrap().push(req);
            // Hits for O2 and O0, in reverse order; O1 is a (quiet) miss.
            let _ = s.write_all(b"VA 1 f0 kc O2\r\nC\r\nVA 1 f9 ka O0\r\nA\r\nMN\r\n");
        }
    });
    let c = MetaClient::new(&[addr], Options::default()).unwrap();
    let got = c.get_many(&[&b"a"[..], b"b", b"c"], &GetOpts::default()).unwrap();
    let values: Vec<Option<&[u8]>> = got.iter().map(|i| i.as_ref().and_then(|i| i.value.as_deref())).collect();
    assert_eq!(values, vec![Some(&b"A"[..]), None, Some(&b"C"[..])]);
    assert_eq!(got[0].as_ref().map(|i| i.flags), Some(9));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        String::from_utf8_lossy(&seen[0]),
        "mg a v f q k O0\r\nmg b v f q k O1\r\nmg c v f q k O2\r\nmn\r\n"
    );
}

#[test]
fn meta_reply_for_another_key_is_a_protocol_error() {
    let (addr, accepted) = common::fake(move |_, mut s| {
        while read_until(&mut s, b"mn\r\n").is_some() {
            let _ = s.write_all(b"VA 1 kzzz O0\r\nA\r\nMN\r\n");
        }
    });
    let c = MetaClient::new(&[addr], Options { down_for: std::time::Duration::ZERO, ..Options::default() }).unwrap();
    for _ in 0..2 {
        assert!(matches!(c.get_many(&[&b"a"[..]], &GetOpts::default()), Err(Error::Protocol { .. })));
    }
    // The out-of-step connection was closed each time, never reused.
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
}
