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

use libfuzzer_sys::fuzz_target;
use tern_store::rdb::testing::{read_file, write_file};
use tern_store::rdb::{self, Limits, RdbOptions};

fuzz_target!(|data: &[u8]| {
    let lim = Limits::default();
    if let Ok(got) = read_file(data, lim) {
        let bytes = write_file(&got, RdbOptions::default());
        let again = read_file(&bytes, lim).expect("a file Tern wrote loads");
        assert_eq!(again, got);
        for (a, b) in again.iter().zip(&got) {
            assert_eq!(a.2.encoding(a.1.len()), b.2.encoding(b.1.len()));
        }
    }
    let mut payload = data.to_vec();
    rdb::put_footer(&mut payload, rdb::DUMP_RDB_VERSION);
    if let Ok(v) = rdb::restore(&payload, &lim) {
        let d = rdb::dump(v.as_value_ref(), true);
        assert_eq!(rdb::restore(&d, &lim).expect("Tern's own DUMP restores"), v);
    }
});
