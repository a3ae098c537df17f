use proptest::prelude::*;

use super::*;
use super::encode;
use super::testing::{read_file, write_file};
use crate::value::{StrRef, ValueRef};
use crate::value::{McStr, StrValue, Value};
use crate::{End, Hash, List, Set, ZSet};

fn lim() -> Limits {
    Limits::default()
}

fn hash(pairs: &[(&str, &str)]) -> Hash {
    let mut h = Hash::new();
    for (f, v) in pairs {
        h.set(f.as_bytes(), v.as_bytes(), lim().hash);
    }
    h
}

// Payloads from Redis 8.4's DUMP (default configuration unless said).
#[test]
fn dump_bytes_equal_redis_84() {
    let h = Value::Hash(hash(&[("a", "1"), ("b", "hello")]));
    assert_eq!(dump(h.as_value_ref(), true), b"\x10\x16\x16\x00\x00\x00\x04\x00\x81a\x02\x01\x01\x81b\x02\x85hello\x06\xff\x0e\x00\x9a\x9e&\xe6\xbd4\x81,");
    let mut s = Set::new();
    s.add(b"a", lim().set);
    s.add(b"b", lim().set);
    assert_eq!(dump(ValueRef::Set(&s), true), b"\x14\r\r\x00\x00\x00\x02\x00\x81a\x02\x81b\x02\xff\x0e\x00\x11ho\xb8\xe7\x0f+\xac");
    let mut s2 = Set::new_for(b"1", 3, lim().set);
    for m in ["1", "2", "300"] {
        s2.add(m.as_bytes(), lim().set);
    }
    assert_eq!(dump(ValueRef::Set(&s2), true), b"\x0b\x0e\x02\x00\x00\x00\x03\x00\x00\x00\x01\x00\x02\x00,\x01\x0e\x00\x97Kj\xf1(\xa6=\xdb");
    let mut z = ZSet::new_for(2, 1, lim().zset);
    z.insert(b"a", 1.5, lim().zset);
    z.insert(b"b", 2.0, lim().zset);
    assert_eq!(dump(ValueRef::ZSet(&z), true), b"\x11\x14\x14\x00\x00\x00\x04\x00\x81a\x02\x831.5\x04\x81b\x02\x02\x01\xff\x0e\x00\x88YlZ\xfc+\x93\x12");
    let l = List::from_items([&b"a"[..], b"1", b"-5", b"100000"], lim().list);
    assert_eq!(dump(ValueRef::List(crate::ListRef::Apart(&l)), true), b"\x12\x01\x02\x14\x14\x00\x00\x00\x04\x00\x81a\x02\x01\x01\xdf\xfb\x02\xf2\xa0\x86\x01\x04\xff\x0e\x00\xe6\x98>#\xf7\xa2\x95&");
    // HSET h2 f1 v1 f2 v2 f3 v3, HPEXPIREAT f1 1900000000000, f3 1900000000500.
    let mut h2 = hash(&[("f1", "v1"), ("f2", "v2"), ("f3", "v3")]);
    h2.set_field_expire(b"f1", 1_900_000_000_000);
    h2.set_field_expire(b"f3", 1_900_000_000_500);
    assert_eq!(dump(ValueRef::Hash(&h2), true), &b"\x19\x008\xd3`\xba\x01\x00\x0055\x00\x00\x00\t\x00\x82f1\x03\x82v1\x03\xf4\x008\xd3`\xba\x01\x00\x00\t\x82f3\x03\x82v3\x03\xf4\xf49\xd3`\xba\x01\x00\x00\t\x82f2\x03\x82v2\x03\x00\x01\xff\x0e\x00\x84\\S-\x1b\xc2\xc2r"[..]);
    // hash-max-listpack-entries 1: HSET h4 a 1 b 2 c 3, a and c with TTLs.
    let one = crate::HashLimits { max_entries: 1, max_value: 64 };
    let mut h4 = Hash::new();
    for (f, v) in [("a", "1"), ("b", "2"), ("c", "3")] {
        h4.set(f.as_bytes(), v.as_bytes(), one);
    }
    h4.set_field_expire(b"a", 1_900_000_000_000);
    h4.set_field_expire(b"c", 1_900_000_001_000);
    let d = dump(ValueRef::Hash(&h4), true);
    let back = restore(&d, &lim()).unwrap();
    assert_eq!(back, Value::Hash(h4));
    assert_eq!(&d[..10], b"\x18\x008\xd3`\xba\x01\x00\x00\x03");
    // zset-max-listpack-entries 1: ZADD z2 1 a 2 b 3 c (highest first).
    let p = b"\x05\x03\x01c\x00\x00\x00\x00\x00\x00\x08@\x01b\x00\x00\x00\x00\x00\x00\x00@\x01a\x00\x00\x00\x00\x00\x00\xf0?\x0e\x00\xdbGk{\x995\x90U";
    let z2 = restore(p, &lim()).unwrap();
    let zl = crate::ZsetLimits { max_entries: 1, ..crate::ZsetLimits::default() };
    let Value::ZSet(z2) = z2 else { panic!() };
    let mut big = ZSet::new_for(3, 1, zl);
    for (m, s) in z2.iter() {
        big.insert(m, s, zl);
    }
    assert_eq!(dump(ValueRef::ZSet(&big), true), &p[..]);
    // list-max-listpack-size 4: RPUSH l2 a..j, three nodes.
    let p = b"\x12\x03\x02\x13\x13\x00\x00\x00\x04\x00\x81a\x02\x81b\x02\x81c\x02\x81d\x02\xff\x02\x13\x13\x00\x00\x00\x04\x00\x81e\x02\x81f\x02\x81g\x02\x81h\x02\xff\x02\r\r\x00\x00\x00\x02\x00\x81i\x02\x81j\x02\xff\x0e\x00\xb1\xee\xc9_0\xae\xb7\x9a";
    let four = crate::ListLimits { fill: 4, depth: 0 };
    let items: Vec<Vec<u8>> = (b'a'..=b'j').map(|c| vec![c]).collect();
    let l2 = List::from_items(items.iter().map(Vec::as_slice), four);
    assert_eq!(dump(ValueRef::List(crate::ListRef::Apart(&l2)), true), &p[..]);
    // set-max-listpack-entries 1: a plain SET.
    let Value::Set(s3) = restore(b"\x02\x02\x01a\x01b\x0e\x00\x8c?\xf9Z\xb80)|", &lim()).unwrap() else { panic!() };
    assert_eq!(s3.len(), 2);
}

#[test]
fn restore_refuses_bad_footers() {
    let v = Value::Str(StrValue::Emb(b"hello".to_vec().into()));
    let mut d = dump(v.as_value_ref(), true);
    assert_eq!(restore(&d, &lim()).unwrap(), v);
    let n = d.len();
    d[n - 1] ^= 1;
    assert!(matches!(restore(&d, &lim()), Err(RdbError::Checksum { .. })));
    let mut d = dump(v.as_value_ref(), true);
    d[n - 10] = 15;
    assert!(matches!(restore(&d, &lim()), Err(RdbError::Version(15))));
    assert!(restore(b"\x00", &lim()).is_err());
}

fn str_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string().into_bytes()),
        proptest::collection::vec(any::<u8>(), 0..30),
        proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b')], 0..300),
    ]
}

#[derive(Clone, Debug)]
enum Spec {
    Str(Vec<u8>),
    Mc(Vec<u8>, u32, u64),
    List(Vec<Vec<u8>>, i64),
    Set(Vec<Vec<u8>>, usize),
    ZSet(Vec<(Vec<u8>, i32)>, usize),
    Hash(Vec<(Vec<u8>, Vec<u8>, Option<u64>)>, usize),
    /// Entries (ID gap, value), deletions, entries per node, deliveries
    /// to a group (entry, consumer; consumer 3 acknowledges).
    Stream(Vec<(u8, Vec<u8>)>, Vec<u16>, usize, Vec<(u16, u8)>),
}

fn spec() -> impl Strategy<Value = Spec> {
    let elems = || proptest::collection::vec(str_strategy(), 1..40);
    prop_oneof![
        str_strategy().prop_map(Spec::Str),
        (str_strategy(), any::<u32>(), any::<u64>()).prop_map(|(d, f, c)| Spec::Mc(d, f, c)),
        (elems(), prop_oneof![Just(-2i64), Just(3), Just(1)]).prop_map(|(e, f)| Spec::List(e, f)),
        (elems(), prop_oneof![Just(128usize), Just(4)]).prop_map(|(e, m)| Spec::Set(e, m)),
        (proptest::collection::vec((str_strategy(), any::<i32>()), 1..40), prop_oneof![Just(128usize), Just(4)])
            .prop_map(|(e, m)| Spec::ZSet(e, m)),
        (
            proptest::collection::vec((str_strategy(), str_strategy(), proptest::option::of(1u64..1 << 50)), 1..40),
            prop_oneof![Just(512usize), Just(4)]
        )
            .prop_map(|(e, m)| Spec::Hash(e, m)),
        (
            proptest::collection::vec((0u8..3, str_strategy()), 0..30),
            proptest::collection::vec(any::<u16>(), 0..8),
            0usize..5,
            proptest::collection::vec((any::<u16>(), 0u8..4), 0..10)
        )
            .prop_map(|(e, d, n, g)| Spec::Stream(e, d, n, g)),
    ]
}

/// The stream a [`Spec::Stream`] describes.
fn stream_of(entries: &[(u8, Vec<u8>)], dels: &[u16], per_node: usize, reads: &[(u16, u8)]) -> crate::Stream {
    use crate::{Stream, StreamId, StreamLimits};
    let lim = StreamLimits { node_max_bytes: 0, node_max_entries: per_node };
    let mut s = Stream::new();
    let mut ids = Vec::new();
    let mut at = StreamId::MIN;
    for (gap, v) in entries {
        at = StreamId::new(at.ms + u64::from(*gap), at.seq + 1);
        let fields: Vec<&[u8]> = if gap % 2 == 0 { vec![b"f", v] } else { vec![b"g", v, b"7", v] };
        s.append(at, &fields, lim);
        ids.push(at);
    }
    for d in dels.iter().filter(|_| !ids.is_empty()) {
        s.delete(ids[usize::from(*d) % ids.len()]);
    }
    if !reads.is_empty() {
        s.create_group(b"g", s.last_id(), 3);
        s.create_group(b"1", StreamId::MIN, -1);
        let g = s.group_mut(b"g").unwrap();
        for c in [&b"c0"[..], b"c1", b"c2"] {
            g.create_consumer(c, 7);
        }
        for (i, (e, c)) in reads.iter().enumerate().filter(|_| !ids.is_empty()) {
            let id = ids[usize::from(*e) % ids.len()];
            match c {
                3 => drop(g.ack(id)),
                c => drop(g.deliver(id, &[b'c', b'0' + c], 7 + i as u64)),
            }
        }
    }
    s
}

fn build(s: &Spec) -> (Value, Limits) {
    let mut l = lim();
    let v = match s {
        Spec::Str(b) => decode::str_value(Ok(b.clone())),
        Spec::Mc(d, f, c) => Value::Str(StrValue::Mc(McStr::new(d, *f, *c, 0))),
        Spec::List(e, fill) => {
            l.list.fill = *fill;
            let mut list = List::new();
            for x in e {
                list.push(End::Right, x, l.list);
            }
            Value::List(list)
        }
        Spec::Set(e, m) => {
            l.set.max_entries = *m;
            l.set.max_intset = *m;
            let mut s = Set::new_for(&e[0], 1, l.set);
            for x in e {
                s.add(x, l.set);
            }
            Value::Set(s)
        }
        Spec::ZSet(e, m) => {
            l.zset.max_entries = *m;
            let mut z = ZSet::new_for(1, 1, l.zset);
            for (x, s) in e {
                z.insert(x, f64::from(*s) / 4.0, l.zset);
            }
            Value::ZSet(z)
        }
        Spec::Hash(e, m) => {
            l.hash.max_entries = *m;
            let mut h = Hash::new();
            for (f, v, _) in e {
                h.set(f, v, l.hash);
            }
            for (f, _, t) in e {
                match t {
                    Some(t) => h.set_field_expire(f, *t),
                    None => {
                        h.persist_field(f);
                    }
                }
            }
            Value::Hash(h)
        }
        Spec::Stream(e, d, n, g) => Value::Stream(Box::new(stream_of(e, d, *n, g))),
    };
    (v, l)
}

fn same_encoding(a: &Value, b: &Value) -> bool {
    a.encoding(3) == b.encoding(3)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn dump_restore_round_trip(s in spec(), compress in any::<bool>()) {
        let (v, l) = build(&s);
        let d = dump(v.as_value_ref(), compress);
        let back = restore(&d, &l).unwrap();
        let plain = |v: &Value| match v {
            Value::Str(s) => Value::Str(decode::str_value(Ok(s.to_vec())).into_str()),
            o => o.clone(),
        };
        prop_assert_eq!(plain(&back), plain(&v));
        prop_assert!(same_encoding(&back, &v) || matches!(v, Value::Str(StrValue::Mc(_))));
    }

    #[test]
    fn file_round_trip(specs in proptest::collection::vec((0u32..3, spec(), proptest::option::of(1u64..1 << 45)), 0..12),
                       compress in any::<bool>(), checksum in any::<bool>()) {
        let mut entries = Vec::new();
        let mut l = lim();
        for (i, (db, s, t)) in specs.iter().enumerate() {
            let (v, lv) = build(s);
            l = lv;
            entries.push((*db, format!("key:{i}").into_bytes(), v, *t));
        }
        // One set of limits for the whole file: rebuild under the last.
        let entries: Vec<_> = entries.into_iter().map(|(d, k, v, t)| {
            let d2 = dump(v.as_value_ref(), false);
            let v2 = match v {
                Value::Str(StrValue::Mc(m)) => Value::Str(StrValue::Mc(m)),
                _ => restore(&d2, &l).unwrap(),
            };
            (d, k, v2, t)
        }).collect();
        let opts = RdbOptions { compression: compress, checksum, redis_ver: "8.4.0".into(), ..RdbOptions::default() };
        let bytes = write_file(&entries, opts);
        let needs_ttl = entries.iter().any(|e| matches!(&e.2, Value::Hash(h) if h.volatile_fields() > 0));
        // Consumers whose active time is not their seen time need Redis
        // 7.2's stream type.
        let needs_active = entries.iter().any(|e| matches!(&e.2, Value::Stream(x)
            if x.groups().any(|(_, g)| g.consumers().any(|(_, c)| c.active_time != c.seen_time as i64))));
        let version = match (needs_ttl, needs_active) {
            (true, _) => &b"REDIS0012"[..],
            (false, true) => b"REDIS0011",
            (false, false) => b"REDIS0010",
        };
        prop_assert_eq!(&bytes[..9], version);
        if checksum {
            let n = bytes.len();
            prop_assert_eq!(crc64::crc64(&bytes[..n - 8]).to_le_bytes().to_vec(), bytes[n - 8..].to_vec());
        }
        let got = read_file(&bytes, l).unwrap();
        prop_assert_eq!(got.len(), entries.len());
        for (g, e) in got.iter().zip(&entries) {
            prop_assert_eq!(g, e);
            prop_assert!(same_encoding(&g.2, &e.2));
        }
    }

    #[test]
    fn corrupt_files_are_refused_without_panic(specs in proptest::collection::vec(spec(), 1..5), at in any::<usize>(), x in 1u8.., cut in any::<usize>()) {
        let entries: Vec<_> = specs.iter().enumerate().map(|(i, s)| (0, vec![b'k', i as u8], build(s).0, None)).collect();
        let bytes = write_file(&entries, RdbOptions::default());
        let n = bytes.len();
        let mut flipped = bytes.clone();
        flipped[at % n] ^= x;
        // The checksum catches any flip; without it, the decoder must.
        prop_assert!(read_file(&flipped, lim()).is_err());
        let mut unsummed = write_file(&entries, RdbOptions { checksum: false, ..RdbOptions::default() });
        let m = unsummed.len();
        if at % m < m - 8 {
            unsummed[at % m] ^= x;
            let _ = read_file(&unsummed, lim());
        }
        prop_assert!(read_file(&bytes[..cut % n], lim()).is_err());
        let d = dump(entries[0].2.as_value_ref(), true);
        let mut d2 = d.clone();
        let k = at % (d.len() - 10);
        d2[k] ^= x;
        prop_assert!(restore(&d2, &lim()).is_err());
        prop_assert!(restore(&d[..cut % d.len()], &lim()).is_err());
    }
}

impl Value {
    fn into_str(self) -> StrValue {
        match self {
            Value::Str(s) => s,
            _ => unreachable!(),
        }
    }
}

#[test]
fn memcached_items_keep_flags_and_cas() {
    let m = Value::Str(StrValue::Mc(McStr::new(b"data", 0xdead_beef, 42, 0)));
    let entries = vec![(0, b"mc".to_vec(), m.clone(), Some(5_000_000_000_000)), (0, b"plain".to_vec(), Value::Str(StrValue::Int(7)), None)];
    let got = read_file(&write_file(&entries, RdbOptions::default()), lim()).unwrap();
    assert_eq!(got, entries);
    if let Value::Str(s) = &got[0].2 {
        assert!(matches!(s.as_ref(), StrRef::Mc(r) if r.flags() == 0xdead_beef && r.cas() == 42));
    }
}

#[test]
fn header_and_aux_as_redis() {
    let opts = RdbOptions { redis_ver: "8.4.0".into(), ctime_secs: 1_700_000_000, used_mem: 1_000_000, ..RdbOptions::default() };
    let b = write_file(&[], opts);
    assert!(b.starts_with(b"REDIS0010\xfa\x09redis-ver\x058.4.0\xfa\x0aredis-bits\xc0\x40\xfa\x05ctime\xc2"));
    let info = load(&b[..], lim(), |_, _, _, _| Ok(())).unwrap();
    assert_eq!(info.version, 10);
    assert!(info.checksum_checked);
    assert_eq!(info.aux.len(), 5);
    assert_eq!(ReplPosition::from_aux(&info.aux), None);
    // A replica's place in its master's stream, as Redis writes it.
    let at = ReplPosition { db: 3, replid: "0123456789abcdef0123456789abcdef01234567".into(), offset: 12345 };
    let b = write_file(&[], RdbOptions { repl: Some(at.clone()), ..RdbOptions::default() });
    let info = load(&b[..], lim(), |_, _, _, _| Ok(())).unwrap();
    let names: Vec<&[u8]> = info.aux.iter().map(|(k, _)| k.as_slice()).collect();
    assert_eq!(names[names.len() - 4..], [&b"repl-stream-db"[..], b"repl-id", b"repl-offset", b"aof-base"]);
    assert_eq!(ReplPosition::from_aux(&info.aux), Some(at));
    assert!(matches!(load(&b"REDIS0015\xff"[..], lim(), |_, _, _, _| Ok(())), Err(RdbError::Version(15))));
    assert!(matches!(load(&b"RUDIS0010\xff"[..], lim(), |_, _, _, _| Ok(())), Err(RdbError::BadHeader)));
}

#[test]
fn opcodes_redis_writes_around_keys_are_read() {
    // IDLE and FREQ (LRU/LFU policies), SLOT_INFO (cluster), a FUNCTION2
    // library (its code kept for the caller), the seconds-deadline of old
    // files, a module's AUX: the first five are read past, the last
    // refused.
    let mut b = b"REDIS0011".to_vec();
    b.extend_from_slice(b"\xfe\x00\xfb\x02\x01");
    b.extend_from_slice(b"\xf8\x05\x00\x01a\x01x");
    b.extend_from_slice(b"\xf9\x07\x00\x01b\x01y");
    b.extend_from_slice(b"\xf4\x01\x02\x00");
    b.extend_from_slice(b"\xf5\x03lib");
    b.extend_from_slice(b"\xfd\x00\x00\x00\x80\x00\x01c\x01z");
    let mut file = b.clone();
    file.push(0xff);
    let crc = crc64::crc64(&file);
    file.extend_from_slice(&crc.to_le_bytes());
    let got = read_file(&file, lim()).unwrap();
    let keys: Vec<_> = got.iter().map(|e| (e.1.clone(), e.3)).collect();
    assert_eq!(keys, [(b"a".to_vec(), None), (b"b".to_vec(), None), (b"c".to_vec(), Some(0x8000_0000u64 * 1000))]);
    let info = load(&file[..], lim(), |_, _, _, _| Ok(())).unwrap();
    assert_eq!(info.functions, [b"lib".to_vec()]);
    let mut m = b;
    m.extend_from_slice(b"\xf7\x01");
    m.push(0xff);
    assert!(matches!(read_file(&m, lim()), Err(RdbError::UnsupportedOpcode(0xf7))));
    // A module's value is refused as unsupported, not as corrupt.
    let mut s = b"REDIS0010\xfe\x00\x07\x01k".to_vec();
    s.push(0xff);
    assert!(matches!(read_file(&s, lim()), Err(RdbError::UnsupportedType(7))));
    // A callback's refusal ends the load with its error.
    let r = load(&file[..], lim(), |_, _, _, _| Err(RdbError::Rejected("no".into())));
    assert!(matches!(r, Err(RdbError::Rejected(_))));
}

#[test]
fn ziplist_types_of_redis_6_are_read() {
    use super::ziplist::tests::build;
    let body = |t: u8, parts: &[&[u8]]| {
        let mut p = vec![t];
        for x in parts {
            encode::put_string(&mut p, x, false);
        }
        put_footer(&mut p, 9);
        p
    };
    let l = restore(&body(types::LIST_ZIPLIST, &[&build(&[b"a", b"7"])]), &lim()).unwrap();
    assert_eq!(l, Value::List(List::from_items([&b"a"[..], b"7"], lim().list)));
    let mut q = vec![types::LIST_QUICKLIST, 2];
    for zl in [build(&[b"a"]), build(&[b"b", b"c"])] {
        encode::put_string(&mut q, &zl, false);
    }
    put_footer(&mut q, 9);
    assert_eq!(restore(&q, &lim()).unwrap(), Value::List(List::from_items([&b"a"[..], b"b", b"c"], lim().list)));
    let h = restore(&body(types::HASH_ZIPLIST, &[&build(&[b"f", b"v", b"g", b"1"])]), &lim()).unwrap();
    assert_eq!(h, Value::Hash(hash(&[("f", "v"), ("g", "1")])));
    let Value::ZSet(z) = restore(&body(types::ZSET_ZIPLIST, &[&build(&[b"a", b"1.5", b"b", b"2"])]), &lim()).unwrap() else { panic!() };
    assert_eq!(z.iter().collect::<Vec<_>>(), [(&b"a"[..], 1.5), (&b"b"[..], 2.0)]);
    assert!(restore(&body(types::HASH_ZIPLIST, &[&build(&[b"f"])]), &lim()).is_err());
}
