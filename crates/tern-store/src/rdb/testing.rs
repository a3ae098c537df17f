//! What the crate's RDB tests and the `rdb` fuzz target share: whole
//! files written from and read back into lists of entries. Not part of
//! the API (hidden from the docs).

use std::io::Cursor;

use crate::value::Value;

use super::{load, Limits, RdbError, RdbOptions, RdbWriter};

/// One key as a file holds it: database, key, value, deadline.
pub type Loaded = (u32, Vec<u8>, Value, Option<u64>);

/// The file of `entries`, in their order (a SELECTDB where the database
/// changes).
pub fn write_file(entries: &[Loaded], opts: RdbOptions) -> Vec<u8> {
    let mut w = RdbWriter::new(Cursor::new(Vec::new()), opts).expect("in memory");
    let mut db = None;
    for (d, k, v, t) in entries {
        if db != Some(*d) {
            w.select_db(*d, 0, 0).expect("in memory");
            db = Some(*d);
        }
        w.entry(k, v.as_value_ref(), *t).expect("in memory");
    }
    w.finish().expect("in memory").into_inner()
}

/// The entries of the file `b`, in file order.
pub fn read_file(b: &[u8], l: Limits) -> Result<Vec<Loaded>, RdbError> {
    let mut got = Vec::new();
    load(b, l, |db, k, v, t| {
        got.push((db, k, v, t));
        Ok(())
    })?;
    Ok(got)
}
