use super::*;
use crate::value::StrValue;
use crate::{EntryExt, NewValue};

pub(super) fn s(b: &str) -> Value {
    Value::Str(StrValue::from_slice(b.as_bytes()))
}

#[test]
fn lazy_expiry() {
    let mut sh = Shard::new();
    sh.set(b"k", 1, s("v"), Some(1000), 0);
    assert!(sh.get(b"k", 1, 999).is_some());
    assert_eq!(sh.volatile_count(), 1);
    assert!(sh.get(b"k", 1, 1000).is_none());
    assert_eq!(sh.len(), 0);
    assert_eq!(sh.volatile_count(), 0);
    assert_eq!(sh.expired, 1);
    // Only the empty table's smallest bucket array is left.
    assert_eq!(sh.mem(), sh.table.mem_bytes() + sh.expires_overhead());
    assert_eq!(sh.value_mem, 0);
}

#[test]
fn active_expiry_uses_heap_and_skips_stale() {
    let mut sh = Shard::new();
    for i in 0..100u64 {
        let k = format!("k{i}");
        let h = sh.hash_key(k.as_bytes());
        sh.set(k.as_bytes(), h, s("v"), Some(100 + i), 0);
    }
    // Extending a TTL pushes nothing: the key's earlier pair stands for
    // it, and must not delete it when due but be pushed again.
    let h0 = sh.hash_key(b"k0");
    let pairs = sh.ttl_heap.len();
    for later in [5_000, 7_000, 10_000] {
        sh.set_expire(b"k0", h0, Some(later));
    }
    assert_eq!(sh.ttl_heap.len(), pairs);
    // An earlier deadline needs a pair of its own.
    let h1 = sh.hash_key(b"k1");
    sh.set_expire(b"k1", h1, Some(50));
    assert_eq!(sh.ttl_heap.len(), pairs + 1);
    assert_eq!(sh.expire_cycle(50, 1000), 1);
    assert_eq!(sh.expire_cycle(150, 1000), 49);
    assert_eq!(sh.len(), 50);
    assert!(sh.get(b"k0", h0, 150).is_some());
    assert_eq!(sh.expire_cycle(10_000, 1000), 50);
    assert_eq!(sh.len(), 0);
}

#[test]
fn records_only_while_recording_and_hash_fields_expire_as_hdel() {
    let mut sh = Shard::new();
    let (ha, hh) = (sh.hash_key(b"a"), sh.hash_key(b"h"));
    sh.set(b"a", ha, s("v"), None, 0);
    let fx = Effects::new();
    sh.drain_effects(&fx);
    assert!(fx.is_empty());
    sh.record_effects(true);
    let lim = crate::HashLimits::default();
    sh.modify_or_create(b"h", hh, 0, Access::NoTouch, || Some(Value::Hash(crate::Hash::default())), |e, edit| {
        let h = e.hash_mut().unwrap();
        h.set(b"f", b"1", lim);
        h.set(b"g", b"2", lim);
        h.set_field_expire(b"f", 50);
        edit.emit(|| Effect::HSet { key: (*b"h").into(), pairs: vec![], keep_ttl: false });
    });
    assert_eq!(sh.expire_cycle(60, 10), 0);
    sh.remove(b"a", ha, 60);
    sh.drain_effects(&fx);
    let recs: Vec<Effect> = crate::aof::records(&fx.take()).into_iter().map(|r| r.effect).collect();
    assert_eq!(recs.len(), 3);
    assert!(matches!(&recs[1], Effect::HDel { fields, .. } if fields.len() == 1 && *fields[0] == *b"f"));
    assert!(matches!(&recs[2], Effect::Del { key } if **key == *b"a"));
    assert_eq!(sh.expired_fields, 1);
}

#[test]
fn restamp_is_recorded_but_tells_no_one() {
    let mut sh = Shard::new();
    sh.set(b"k", 1, s("v"), Some(500), 0);
    let f = WatchFlag::new();
    sh.watch(b"k", 1, &f);
    sh.record_effects(true);
    let item = Value::Str(crate::StrValue::Mc(crate::McStr::new(b"v", 0, 7, 0)));
    assert!(sh.restamp(b"k", 1, item, 0).is_some());
    assert!(!f.is_set());
    let fx = Effects::new();
    sh.drain_effects(&fx);
    let recs = crate::aof::records(&fx.take());
    assert!(matches!(&recs[..], [crate::effect::Record { effect: Effect::Put { ttl: Ttl::Keep, .. }, .. }]));
    assert_eq!(sh.get(b"k", 1, 0).unwrap().expire(), Some(500));
    assert!(sh.restamp(b"absent", 2, NewValue::Int(1), 0).is_none());
}

#[test]
fn take_data_empties_and_keeps_watches() {
    let mut sh = Shard::new();
    let f = WatchFlag::new();
    sh.set(b"a", 1, s("v"), Some(100), 0);
    sh.set(b"b", 2, s("v"), None, 0);
    // Watched after the writes, which would set the flag.
    sh.watch(b"a", 1, &f);
    let d = sh.take_data();
    assert_eq!(d.len(), 2);
    assert!(sh.is_empty());
    assert_eq!((sh.volatile_count(), sh.mem()), (0, 0));
    assert_eq!(sh.expire_cycle(1_000, 100), 0);
    assert!(!f.is_set());
    sh.signal(b"a", 1);
    assert!(f.is_set());
}

#[test]
fn signal_live_skips_absent_and_expired_keys() {
    let mut a = Shard::new();
    let mut b = Shard::new();
    let (fa, fb, fc, fd) = (WatchFlag::new(), WatchFlag::new(), WatchFlag::new(), WatchFlag::new());
    a.set(b"here", 1, s("v"), None, 0);
    b.set(b"there", 2, s("v"), None, 0);
    a.set(b"stale", 4, s("v"), Some(10), 0);
    b.set(b"stale", 4, s("v"), Some(10), 0);
    // Watched after the writes, which would set the flags.
    a.watch(b"here", 1, &fa);
    a.watch(b"there", 2, &fb);
    a.watch(b"nowhere", 3, &fc);
    a.watch(b"stale", 4, &fd);
    a.signal_live(Some(&b), 20);
    assert!(fa.is_set() && fb.is_set());
    assert!(!fc.is_set() && !fd.is_set());
}

#[test]
fn random_any_draws_every_entry() {
    let mut sh = Shard::new();
    for i in 0..20u64 {
        let k = format!("k{i}");
        let h = sh.hash_key(k.as_bytes());
        sh.set(k.as_bytes(), h, s("v"), (i < 10).then_some(5), 0);
    }
    let mut rng = rand::thread_rng();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..2000 {
        seen.insert(sh.random_any(&mut rng).unwrap().key().to_vec());
    }
    assert_eq!(seen.len(), 20);
    assert!(Shard::new().random_any(&mut rng).is_none());
}

#[test]
fn scan_live_removes_expired_it_meets() {
    let mut sh = Shard::new();
    for i in 0..8u64 {
        let k = format!("k{i}");
        let h = sh.hash_key(k.as_bytes());
        sh.set(k.as_bytes(), h, s("v"), (i % 2 == 0).then_some(50), 0);
    }
    let mut live = Vec::new();
    let mut cursor = 0;
    let mut visited = 0;
    loop {
        let (next, v) = sh.scan_live(cursor, 100, |e| live.push(e.key().to_vec()));
        visited += v;
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    assert_eq!(visited, 8);
    assert_eq!(live.len(), 4);
    assert_eq!(sh.len(), 4);
    assert_eq!(sh.expired, 4);
    assert_eq!(sh.volatile_count(), 0);
}

/// The value bytes the shard counts match what its entries hold.
pub(crate) fn assert_accounted(sh: &Shard) {
    let held: usize = sh.table.iter().map(|e| e.value_heap()).sum();
    assert_eq!(sh.value_mem, held);
    assert_eq!(sh.mem(), sh.table.mem_bytes() + held + sh.expires_overhead());
}

#[test]
fn lists_are_accounted_as_they_grow_convert_and_empty() {
    let mut sh = Shard::new();
    let h = sh.hash_key(b"l");
    let lim = crate::ListLimits::default();
    let elem = [b'e'; 100];
    let new = || Some(Value::List(crate::List::new()));
    for _ in 0..300 {
        sh.modify_or_create(b"l", h, 0, Access::NoTouch, new, |e, ed| {
            let mut l = e.list_mut().unwrap();
            l.push(crate::End::Left, &elem, lim);
            l.finish(ed);
            ed.changed();
        });
        assert_accounted(&sh);
    }
    assert_eq!(sh.get(b"l", h, 0).unwrap().encoding(), "quicklist");
    assert!(sh.value_mem > 300 * 100);
    // Popping everything removes the key and its bytes.
    sh.modify(b"l", h, 0, Access::NoTouch, |e, ed| {
        let mut l = e.list_mut().unwrap();
        l.pop_with(crate::End::Right, 300, lim, |_| {});
        l.finish(ed);
        ed.changed();
    });
    assert!(sh.get(b"l", h, 0).is_none());
    assert_eq!(sh.value_mem, 0);
}

#[test]
fn values_in_the_item_and_boxed_are_accounted_through_replacements() {
    let mut sh = Shard::new();
    let h = sh.hash_key(b"k");
    assert!(sh.set(b"k", h, NewValue::Bytes(&[7; 100]), Some(50_000), 0).is_none());
    assert_eq!(sh.value_mem, 0);
    let old = sh.replace_value(b"k", h, Value::Str(StrValue::Raw(vec![1; 300])), 10).unwrap();
    assert_eq!(old.str().unwrap().bytes(), Some(&[7u8; 100][..]));
    assert!(sh.value_mem > 300);
    assert_accounted(&sh);
    let e = sh.get(b"k", h, 10).unwrap();
    assert_eq!((e.expire(), e.str().unwrap().len(), e.encoding()), (Some(50_000), 300, "raw"));
    // In-place growth of the boxed buffer, measured by the shard.
    sh.modify(b"k", h, 10, Access::NoTouch, |e, ed| {
        let Some(Value::Str(sv)) = e.boxed_value_mut() else { panic!("boxed") };
        sv.make_raw().extend_from_slice(&[2; 1000]);
        ed.changed();
    })
    .unwrap();
    assert_accounted(&sh);
    // Back to an integer in the item; the TTL stays.
    sh.replace_value(b"k", h, NewValue::Int(5), 10);
    assert_accounted(&sh);
    assert_eq!(sh.value_mem, 0);
    assert_eq!(sh.volatile_count(), 1);
    assert!(sh.modify(b"k", h, 10, Access::NoTouch, |e, _| e.set_int(6)).unwrap());
    assert_eq!(sh.get(b"k", h, 10).unwrap().str().unwrap().int(), Some(6));
    // Absent and expired keys are not given a value.
    assert!(sh.replace_value(b"zz", sh.hash_key(b"zz"), NewValue::Int(1), 10).is_none());
    assert!(sh.replace_value(b"k", h, NewValue::Int(1), 60_000).is_none());
    assert!(sh.is_empty());
    assert_eq!((sh.volatile_count(), sh.expired), (0, 1));
    // Overwriting an expired key counts it expired and returns nothing.
    sh.set(b"a", 1, NewValue::Bytes(b"x"), Some(5), 0);
    assert!(sh.set(b"a", 1, NewValue::Bytes(b"y"), None, 10).is_none());
    assert_eq!((sh.volatile_count(), sh.expired), (0, 2));
    // A renamed entry keeps its box.
    sh.set(b"h", 2, Value::Hash(crate::Hash::default()), None, 0);
    let e = sh.remove(b"h", 2, 0).unwrap();
    sh.insert_entry(b"h2", 3, e, 0);
    assert!(sh.get(b"h2", 3, 0).unwrap().hash().is_some());
    assert_accounted(&sh);
}
