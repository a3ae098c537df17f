//! Fuzzes the RDB loader and RESTORE's decoder (`tern_store::rdb`) and
//! checks, beyond "no panic, no huge allocation":
//! - what loads writes back and loads again to the same keys, values,
//!   deadlines and encodings (the decoder accepts nothing the encoder
//!   cannot reproduce);
//! - a RESTORE payload that decodes dumps again to a payload that decodes
//!   to the same value.
//!
//! Input: a whole file. The same bytes are also tried as a DUMP payload
//! body, with a valid footer added, so that the value decoders are reached
//! without the file's checksum in the way.
//!
//! Run from the repository root:
//! `cargo +nightly fuzz run rdb -- -max_len=4096 -max_total_time=180`
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use tern_store::rdb::{self, crc64, Limits, RdbOptions, RdbWriter};
use tern_store::{Value, ValueRef};

fn vref(v: &Value) -> ValueRef<'_> {
    match v {
        Value::Str(s) => ValueRef::Str(s.as_ref()),
        Value::Hash(h) => ValueRef::Hash(h),
        Value::List(l) => ValueRef::List(l),
        Value::Set(s) => ValueRef::Set(s),
        Value::ZSet(z) => ValueRef::ZSet(z),
    }
}

fuzz_target!(|data: &[u8]| {
    let lim = Limits::default();
    let mut got = Vec::new();
    if rdb::load(data, lim, |db, k, v, t| {
        got.push((db, k, v, t));
        Ok(())
    })
    .is_ok()
    {
        let mut w = RdbWriter::new(Cursor::new(Vec::new()), RdbOptions::default()).expect("in memory");
        let mut db = None;
        for (d, k, v, t) in &got {
            if db != Some(*d) {
                w.select_db(*d, 0, 0).expect("in memory");
                db = Some(*d);
            }
            w.entry(k, vref(v), *t).expect("in memory");
        }
        let bytes = w.finish().expect("in memory").into_inner();
        let mut again = Vec::new();
        rdb::load(&bytes[..], lim, |db, k, v, t| {
            again.push((db, k, v, t));
            Ok(())
        })
        .expect("a file Tern wrote loads");
        assert_eq!(again, got);
        for (a, b) in again.iter().zip(&got) {
            assert_eq!(a.2.encoding(a.1.len()), b.2.encoding(b.1.len()));
        }
    }
    let mut payload = data.to_vec();
    payload.extend_from_slice(&rdb::DUMP_RDB_VERSION.to_le_bytes());
    let crc = crc64::crc64(&payload);
    payload.extend_from_slice(&crc.to_le_bytes());
    if let Ok(v) = rdb::restore(&payload, &lim) {
        let d = rdb::dump(vref(&v), true);
        assert_eq!(rdb::restore(&d, &lim).expect("Tern's own DUMP restores"), v);
    }
});
