//! Tests of [`crate::snapshot`]: each compares what a snapshot delivered
//! with the keyspace as recorded under every lock at its start.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::entry::EntryExt;
use crate::shard::Access;
use crate::value::{StrRef, StrValue};
use crate::{End, Hash, HashLimits, List, ListLimits, LockSet, NewValue};

/// A value as the tests compare it: hash fields due at the snapshot's
/// start are left out (the writer skips them).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Canon {
    Str(Vec<u8>),
    List(Vec<Vec<u8>>),
    Hash(BTreeMap<Vec<u8>, (Vec<u8>, Option<u64>)>),
}

fn canon(v: ValueRef<'_>, start: u64) -> Canon {
    match v {
        ValueRef::Str(s) => Canon::Str(s.to_vec()),
        ValueRef::List(l) => Canon::List(l.iter().map(|e| e.to_vec()).collect()),
        ValueRef::Hash(h) => Canon::Hash(
            h.iter()
                .map(|(f, v)| (f.to_vec(), (v.to_vec(), h.field_expire(f))))
                .filter(|(_, (_, t))| t.is_none_or(|t| t > start))
                .collect(),
        ),
        ValueRef::Set(_) | ValueRef::ZSet(_) | ValueRef::Stream(_) => unreachable!("not written by these tests"),
    }
}

type Model = BTreeMap<(u32, Vec<u8>), (Canon, Option<u64>)>;

/// Begins a snapshot at `start`, recording what it must hold.
fn begin(ks: &Keyspace, start: u64) -> (Snapshot, Model) {
    let per = ks.shards_per_db();
    let mut model = Model::new();
    let snap = ks
        .begin_snapshot_with(start, |g, s| {
            for e in s.iter(start) {
                model.insert(((g / per) as u32, e.key().to_vec()), (canon(e.value(), start), e.expire()));
            }
        })
        .unwrap();
    (snap, model)
}

/// Drives `snap` to its end with `step` run between slices; checks that
/// no key is delivered twice, that databases come in order, and that no
/// slice examined more than its budget allows.
fn drive(ks: &Keyspace, snap: &mut Snapshot, mut step: impl FnMut()) -> Model {
    let start = snap.start_ms();
    let mut out = Model::new();
    let mut last_db = 0;
    loop {
        let s = snap.next(ks, |db, key: &[u8], v: ValueRef<'_>, ttl| {
            assert!(db >= last_db, "db {db} after db {last_db}");
            last_db = db;
            assert!(ttl.is_none_or(|t| t > start), "a key expired at the start was saved");
            let old = out.insert((db, key.to_vec()), (canon(v, start), ttl));
            assert!(old.is_none(), "{:?} delivered twice", String::from_utf8_lossy(key));
        });
        if s.done {
            return out;
        }
        step();
    }
}

fn marks(ks: &Keyspace) -> usize {
    (0..ks.total_shards() as u32).map(|g| ks.lock(g).snap_marks()).sum()
}

fn put(ks: &Keyspace, db: usize, key: &[u8], v: &[u8], ttl: Option<u64>, now: u64) {
    let l = ks.locate(db, key);
    ks.lock(l.gid).set(key, l.hash, NewValue::Bytes(v), ttl, now);
}

fn assert_same(got: &Model, want: &Model) {
    if got != want {
        let missing: Vec<_> = want.keys().filter(|k| !got.contains_key(*k)).take(5).collect();
        let extra: Vec<_> = got.keys().filter(|k| !want.contains_key(*k)).take(5).collect();
        let differ: Vec<_> = want.iter().filter(|(k, v)| got.get(*k).is_some_and(|g| g != *v)).take(3).collect();
        panic!("snapshot differs: {} vs {} keys; missing {missing:?}, extra {extra:?}, differing {differ:?}", got.len(), want.len());
    }
}

#[test]
fn holds_the_start_through_overwrites_deletes_and_new_keys() {
    let ks = Keyspace::new(2, 4);
    for i in 0..2000 {
        put(&ks, i % 2, format!("k{i}").as_bytes(), format!("v{i}").as_bytes(), None, 0);
    }
    let (mut snap, want) = begin(&ks, 10);
    snap.set_slice(16);
    assert_eq!(snap.db_sizes(), &[(1000, 0), (1000, 0)]);
    assert_eq!(want.len(), 2000);
    // Every key is overwritten, deleted or joined by a new one while the
    // walk runs, a few keys at a time.
    let mut i = 0;
    let got = drive(&ks, &mut snap, || {
        for _ in 0..8 {
            let k = format!("k{}", i % 2000);
            let l = ks.locate(i % 2, k.as_bytes());
            match i % 3 {
                0 => drop(ks.lock(l.gid).set(k.as_bytes(), l.hash, NewValue::Bytes(b"new"), None, 20)),
                1 => drop(ks.lock(l.gid).remove(k.as_bytes(), l.hash, 20)),
                _ => put(&ks, i % 2, format!("fresh{i}").as_bytes(), b"x", None, 20),
            }
            i += 1;
        }
    });
    assert!(i > 100, "the writes ran during the walk ({i})");
    assert_same(&got, &want);
    let st = snap.stats();
    assert!(st.captured > 0 && st.walked > 0 && st.noted >= st.captured, "{st:?}");
    assert_eq!(st.walked + st.captured, 2000);
    assert_eq!(marks(&ks), 0);
    assert!(!ks.snapshot_running());
}

#[test]
fn keys_expired_at_the_start_are_not_saved_and_later_expiry_is_captured() {
    let ks = Keyspace::new(1, 2);
    for i in 0..300u64 {
        // Deadlines 1..=300: those at or before 150 are gone at the start.
        put(&ks, 0, format!("t{i}").as_bytes(), b"v", Some(i + 1), 0);
    }
    put(&ks, 0, b"plain", b"p", None, 0);
    let (mut snap, want) = begin(&ks, 150);
    assert_eq!(want.len(), 151);
    // Active expiry removes everything before the walk gets anywhere.
    let fx = crate::Effects::new();
    assert_eq!(ks.expire_cycle(1000, 2, 1000, &fx), 300);
    let got = drive(&ks, &mut snap, || {});
    assert_same(&got, &want);
    assert_eq!(snap.stats().captured, 150);
}

#[test]
fn in_place_edits_capture_the_value_before_them() {
    let ks = Keyspace::new(1, 1);
    let lim = ListLimits::default();
    let hl = HashLimits::default();
    let (kl, kh) = (ks.locate(0, b"list"), ks.locate(0, b"hash"));
    {
        let mut s = ks.lock(kl.gid);
        s.set(b"list", kl.hash, Value::List(List::from_items([&b"a"[..], b"b"], lim)), None, 0);
        let mut h = Hash::default();
        h.set(b"f", b"1", hl);
        h.set(b"g", b"2", hl);
        h.set(b"due", b"3", hl);
        h.set_field_expire(b"g", 500);
        h.set_field_expire(b"due", 50);
        s.set(b"hash", kh.hash, Value::Hash(h), Some(10_000), 0);
    }
    let (mut snap, want) = begin(&ks, 100);
    {
        let mut s = ks.lock(kl.gid);
        for n in 0..3 {
            s.modify(b"list", kl.hash, 100, Access::NoTouch, |e, ed| {
                let mut l = e.list_mut().unwrap();
                l.push(End::Left, format!("x{n}").as_bytes(), lim);
                l.finish(ed);
                ed.changed();
            });
        }
        // Field expiry (the due field, and one due after the start) and a new TTL.
        assert_eq!(s.expire_hash_fields(b"hash", kh.hash, 600), 2);
        s.set_expire(b"hash", kh.hash, None);
    }
    let got = drive(&ks, &mut snap, || {});
    assert_same(&got, &want);
    let (Canon::List(l), _) = &got[&(0, b"list".to_vec())] else { panic!() };
    assert_eq!(l, &[b"a".to_vec(), b"b".to_vec()]);
    let (Canon::Hash(h), ttl) = &got[&(0, b"hash".to_vec())] else { panic!() };
    assert_eq!((h.len(), *ttl), (2, Some(10_000)));
    assert_eq!(marks(&ks), 0);
}

#[test]
fn flush_hands_the_detached_tables_to_the_snapshot() {
    for asynchronous in [false, true] {
        let ks = Keyspace::new(3, 4);
        for i in 0..900 {
            put(&ks, i % 3, format!("k{i}").as_bytes(), b"v", None, 0);
        }
        let (mut snap, want) = begin(&ks, 1);
        snap.set_slice(8);
        // A little of database 0 is walked, then everything is flushed
        // and new keys written in its place.
        snap.next(&ks, |_, _, _, _| {});
        let mut detached = Vec::new();
        for g in 0..ks.total_shards() as u32 {
            let d = ks.lock(g).flush(2);
            assert!(d.is_empty(), "the snapshot took the table");
            detached.push(d);
        }
        if asynchronous {
            ks.lazyfree.free(detached);
        }
        for i in 0..300 {
            put(&ks, i % 3, format!("after{i}").as_bytes(), b"n", None, 3);
        }
        let mut got = drive(&ks, &mut snap, || {});
        // What the first slice delivered went to a sink that kept nothing.
        let first: Vec<_> = want.keys().filter(|k| !got.contains_key(*k)).cloned().collect();
        // A slice ends with the scan step that crosses its budget of 8:
        // one position's entries, from both tables while the table grows.
        assert!(!first.is_empty() && first.len() <= 8 + 2 * 9, "{}", first.len());
        for k in first {
            got.insert(k.clone(), want[&k].clone());
        }
        assert_same(&got, &want);
        assert_eq!(marks(&ks), 0);
    }
}

#[test]
fn swapdb_moves_the_parts_with_the_tables() {
    let ks = Keyspace::new(3, 4);
    for i in 0..600 {
        put(&ks, i % 3, format!("k{i}").as_bytes(), format!("db{}", i % 3).as_bytes(), None, 0);
    }
    let (mut snap, want) = begin(&ks, 1);
    snap.set_slice(4);
    let swap = |a: usize, b: usize| {
        let mut set = LockSet::new(&ks);
        set.acquire(ks.db_gids(a).chain(ks.db_gids(b)));
        for (x, y) in ks.db_gids(a).zip(ks.db_gids(b)) {
            let (sx, sy) = set.shard_pair(x, y);
            sx.swap_with(sy, 2);
        }
        set.release();
    };
    let mut n = 0;
    let got = drive(&ks, &mut snap, || {
        n += 1;
        if n % 7 == 0 {
            swap(n / 7 % 3, (n / 7 + 1) % 3);
            // Writes to what is now database 0 reach the swapped tables.
            for i in 0..20 {
                put(&ks, 0, format!("k{}", (n * 20 + i) % 600).as_bytes(), b"late", None, 3);
            }
        }
    });
    assert!(n > 50);
    assert_same(&got, &want);
    assert_eq!(marks(&ks), 0);
}

#[test]
fn slices_are_bounded() {
    let ks = Keyspace::new(1, 2);
    for i in 0..20_000 {
        put(&ks, 0, format!("key:{i}").as_bytes(), b"v", None, 0);
    }
    for budget in [1usize, 16, 256] {
        let (mut snap, want) = begin(&ks, 1);
        snap.set_slice(budget);
        let mut most = 0;
        let mut slices = 0;
        let mut got = 0;
        loop {
            let s = snap.next(&ks, |_, _, _, _| got += 1);
            most = most.max(s.visited);
            slices += 1;
            if s.done {
                break;
            }
        }
        assert_eq!(got, want.len());
        // A slice ends at the first home bucket's range that reaches the
        // budget: one range's entries at most beyond it.
        assert!(most <= budget + 24, "budget {budget}: a slice examined {most}");
        assert!(slices >= 20_000 / (budget + 24), "budget {budget}: {slices} slices");
        assert_eq!(snap.stats().max_slice, most);
    }
}

#[test]
fn big_values_weigh_more_in_a_slice() {
    let ks = Keyspace::new(1, 1);
    for i in 0..1024 {
        put(&ks, 0, format!("big{i}").as_bytes(), &vec![b'x'; 4 * WEIGHT_BYTES], None, 0);
    }
    let (mut snap, _) = begin(&ks, 1);
    snap.set_slice(200);
    let mut most = 0;
    while !snap.next(&ks, |_, _, _, _| {}).done {
        most = most.max(snap.stats().max_slice);
    }
    // Each weighs 5: a slice stops at the first home bucket's end after
    // 200 / 5 = 40 of them (unweighted it would take 200). One bucket's
    // range holds a few dozen items at most, whatever the hash seed.
    assert!((40..120).contains(&most), "{most}");
}

#[test]
fn one_at_a_time() {
    let ks = Keyspace::new(1, 1);
    let snap = ks.begin_snapshot(0).unwrap();
    assert!(ks.snapshot_running());
    assert_eq!(ks.begin_snapshot(0).unwrap_err(), SnapshotError::InProgress);
    snap.cancel(&ks);
    assert!(!ks.snapshot_running());
    let mut snap = ks.begin_snapshot(0).unwrap();
    assert!(snap.run(&ks, |_, _, _, _| {}).slices > 0);
    assert!(ks.begin_snapshot(0).is_ok());
}

/// A snapshot given up half-way (cancelled, or its handle dropped) leaves
/// no mark behind, and the next one holds its own start exactly.
#[test]
fn a_snapshot_given_up_leaves_the_next_one_right() {
    for how in ["cancel", "drop"] {
        let ks = Keyspace::new(2, 4);
        for i in 0..3000 {
            put(&ks, i % 2, format!("k{i}").as_bytes(), b"v0", None, 0);
        }
        let (mut snap, _) = begin(&ks, 1);
        snap.set_slice(32);
        for i in 0..40 {
            snap.next(&ks, |_, _, _, _| {});
            // Overwrites and new keys everywhere: marks ahead of the walk.
            for j in 0..30 {
                let n = i * 30 + j;
                put(&ks, n % 2, format!("k{}", n * 7 % 3000).as_bytes(), b"v1", None, 2);
                put(&ks, n % 2, format!("new{n}").as_bytes(), b"n", None, 2);
            }
        }
        assert!(marks(&ks) > 0);
        assert!(snap.held_bytes() > 0);
        match how {
            "cancel" => {
                snap.cancel(&ks);
                assert_eq!(marks(&ks), 0);
            }
            _ => {
                drop(snap);
                // Captures stop; the next begin clears the rest.
                put(&ks, 0, b"k0", b"v2", None, 3);
            }
        }
        let (mut snap, want) = begin(&ks, 4);
        assert_eq!(marks(&ks), 0);
        let mut i = 0;
        let got = drive(&ks, &mut snap, || {
            put(&ks, i % 2, format!("k{}", i % 3000).as_bytes(), b"v3", None, 5);
            i += 1;
        });
        assert_same(&got, &want);
        assert_eq!(marks(&ks), 0);
    }
}

/// Several threads write, overwrite, delete, expire, rename, flush and
/// swap random keys of random databases (strings, lists, hashes with
/// field TTLs) while snapshots run, with small slices so that the walk
/// and the writes interleave; each snapshot must hold exactly the
/// keyspace recorded under every lock at its start, and leave no mark.
/// Every other round is cancelled half-way.
#[test]
fn stress_snapshots_under_concurrent_writes() {
    const DBS: usize = 3;
    const KEYS: usize = 400;
    let ks = Arc::new(Keyspace::new(DBS, 8));
    let clock = Arc::new(AtomicU64::new(1000));
    let stop = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(AtomicU64::new(0));
    let writer = |seed: u64| {
        let (ks, clock, stop, writes) = (ks.clone(), clock.clone(), stop.clone(), writes.clone());
        std::thread::spawn(move || {
            let mut rng = StdRng::seed_from_u64(seed);
            let (lim, hl) = (ListLimits::default(), HashLimits::default());
            while !stop.load(Ordering::Relaxed) {
                let now = clock.fetch_add(1, Ordering::Relaxed);
                let db = rng.gen_range(0..DBS);
                let key = format!("k{}", rng.gen_range(0..KEYS)).into_bytes();
                let l = ks.locate(db, &key);
                let op = rng.gen_range(0..100);
                match op {
                    0..=29 => {
                        let ttl = rng.gen_bool(0.3).then(|| now + rng.gen_range(1..300));
                        ks.lock(l.gid).set(&key, l.hash, NewValue::Bytes(format!("v{now}").as_bytes()), ttl, now);
                    }
                    30..=39 => drop(ks.lock(l.gid).remove(&key, l.hash, now)),
                    40..=47 => {
                        let ttl = rng.gen_bool(0.7).then(|| now + rng.gen_range(1..300));
                        ks.lock(l.gid).set_expire(&key, l.hash, ttl);
                    }
                    48..=62 => {
                        let v = Some(Value::List(List::new()));
                        ks.lock(l.gid).modify_or_create(&key, l.hash, now, Access::NoTouch, || v, |e, ed| {
                            if let Some(mut list) = e.list_mut() {
                                list.push(End::Left, format!("e{now}").as_bytes(), lim);
                                list.finish(ed);
                                ed.changed();
                            }
                        });
                    }
                    63..=77 => {
                        let v = Some(Value::Hash(Hash::default()));
                        let fld = format!("f{}", rng.gen_range(0..4));
                        let ttl = now + rng.gen_range(1..200);
                        ks.lock(l.gid).modify_or_create(&key, l.hash, now, Access::NoTouch, || v, |e, ed| {
                            if let Some(h) = e.hash_mut() {
                                h.set(fld.as_bytes(), format!("{now}").as_bytes(), hl);
                                h.set_field_expire(fld.as_bytes(), ttl);
                                ed.changed();
                            }
                        });
                    }
                    78..=87 => {
                        // RENAME, within a database (two shards, locked in order).
                        let to = format!("k{}", rng.gen_range(0..KEYS)).into_bytes();
                        let lt = ks.locate(db, &to);
                        if lt.gid != l.gid {
                            let mut set = LockSet::new(&ks);
                            set.acquire([l.gid, lt.gid]);
                            let (a, b) = set.shard_pair(l.gid, lt.gid);
                            if let Some(e) = a.remove(&key, l.hash, now) {
                                b.insert_entry(&to, lt.hash, e, now);
                            }
                            set.release();
                        }
                    }
                    88..=93 => {
                        let fx = crate::Effects::new();
                        ks.expire_cycle(now, 4, 20, &fx);
                    }
                    94..=95 => {
                        // EVICT-like removal of whatever the shard samples.
                        let mut s = ks.lock(l.gid);
                        let mut victim = None;
                        s.sample(1, false, false, &mut rng, |e, h| victim = Some((e.key().to_vec(), h)));
                        if let Some((k, h)) = victim {
                            s.evict(&k, h);
                        }
                    }
                    96..=97 => {
                        if rng.gen_range(0..8) == 0 {
                            let mut set = LockSet::new(&ks);
                            set.acquire(ks.db_gids(db));
                            let d: Vec<_> = ks.db_gids(db).map(|g| set.shard(g).flush(now)).collect();
                            set.release();
                            ks.lazyfree.free(d);
                        }
                    }
                    _ => {
                        let other = (db + 1 + rng.gen_range(0..DBS - 1)) % DBS;
                        let mut set = LockSet::new(&ks);
                        set.acquire(ks.db_gids(db).chain(ks.db_gids(other)));
                        for (x, y) in ks.db_gids(db).zip(ks.db_gids(other)) {
                            let (sx, sy) = set.shard_pair(x, y);
                            sx.swap_with(sy, now);
                        }
                        set.release();
                    }
                }
                writes.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let threads: Vec<_> = (0..3).map(|t| writer(0x5eed + t)).collect();
    for round in 0..12u32 {
        // Let the writers change things between snapshots.
        let w0 = writes.load(Ordering::Relaxed);
        while writes.load(Ordering::Relaxed) < w0 + 2000 {
            std::thread::yield_now();
        }
        let start = clock.load(Ordering::Relaxed);
        let (mut snap, want) = begin(&ks, start);
        snap.set_slice(1 + round as usize % 8);
        let w1 = writes.load(Ordering::Relaxed);
        if round % 2 == 1 {
            for _ in 0..40 {
                snap.next(&ks, |_, _, _, _| {});
                std::thread::yield_now();
            }
            snap.cancel(&ks);
            continue;
        }
        // At least one write between two slices.
        let got = drive(&ks, &mut snap, || {
            let w = writes.load(Ordering::Relaxed);
            while writes.load(Ordering::Relaxed) == w {
                std::thread::yield_now();
            }
        });
        let during = writes.load(Ordering::Relaxed) - w1;
        assert!(during >= snap.stats().slices, "round {round}: {during} writes during the snapshot");
        assert_same(&got, &want);
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    // Quiet now: every mark is gone, and one more snapshot is the keyspace.
    assert_eq!(marks(&ks), 0);
    let now = clock.load(Ordering::Relaxed);
    let (mut snap, want) = begin(&ks, now);
    assert!(!want.is_empty());
    assert_same(&drive(&ks, &mut snap, || {}), &want);
    for g in 0..ks.total_shards() as u32 {
        assert!(ks.lock(g).counts_hold());
    }
}

#[test]
fn str_values_keep_their_form() {
    // A memcached item keeps its flags and CAS in a captured copy.
    let ks = Keyspace::new(1, 1);
    let l = ks.locate(0, b"mc");
    ks.lock(l.gid).set(b"mc", l.hash, NewValue::Mc { data: b"data", flags: 7, cas: 42, state: 0 }, None, 0);
    let mut snap = ks.begin_snapshot(1).unwrap();
    ks.lock(l.gid).remove(b"mc", l.hash, 1);
    let mut seen = 0;
    snap.run(&ks, |_, k: &[u8], v: ValueRef<'_>, _| {
        let ValueRef::Str(StrRef::Mc(m)) = v else { panic!("{v:?}") };
        assert_eq!((k, m.data(), m.flags(), m.cas()), (&b"mc"[..], &b"data"[..], 7, 42));
        seen += 1;
    });
    assert_eq!(seen, 1);
}

/// The snapshot's instant in the effect records' numbering: writes before
/// it are numbered below [`Snapshot::first_seq_after`], writes after from
/// it on (where an AOF rewrite cuts its incremental file).
#[test]
fn effect_numbers_split_at_the_snapshot() {
    let ks = Keyspace::new(1, 2);
    ks.attach_effects(true);
    let fx = crate::Effects::new();
    let write = |k: &[u8]| {
        let loc = ks.locate(0, k);
        let mut s = ks.lock_writing(loc.gid, &fx);
        s.set(k, loc.hash, NewValue::Value(crate::Value::Str(crate::StrValue::Int(1))), None, 0);
    };
    write(b"a");
    write(b"b");
    let snap = ks.begin_snapshot(0).unwrap();
    write(b"c");
    let seqs: Vec<u64> = fx.take().recs().iter().map(|r| r.seq).collect();
    assert_eq!(seqs.len(), 3);
    assert!(seqs[1] < snap.first_seq_after() && seqs[2] >= snap.first_seq_after(), "{seqs:?} {}", snap.first_seq_after());
    snap.cancel(&ks);
}

/// The sink runs with no shard lock held (a slice is copied out under
/// it, then delivered): it can lock the shard of the key it was just
/// given and change that key and the ones the walk has yet to reach, and
/// what it is given is still the form at the start, of every kind.
#[test]
fn the_sink_runs_unlocked_and_writes_from_it_do_not_reach_the_copies() {
    let ks = Keyspace::new(2, 2);
    let lim = ListLimits::default();
    let mut keys = Vec::new();
    for i in 0..600 {
        let k = format!("k{i}");
        let l = ks.locate(i % 2, k.as_bytes());
        let mut s = ks.lock(l.gid);
        match i % 5 {
            0 => drop(s.set(k.as_bytes(), l.hash, NewValue::Bytes(format!("v{i}").as_bytes()), Some(50_000), 0)),
            1 => drop(s.set(k.as_bytes(), l.hash, NewValue::Int(i as i64), None, 0)),
            2 => drop(s.set(k.as_bytes(), l.hash, NewValue::Mc { data: b"mc", flags: i as u32, cas: 9, state: 0 }, None, 0)),
            3 => drop(s.set(k.as_bytes(), l.hash, Value::List(List::from_items([k.as_bytes(), b"x"], lim)), None, 0)),
            _ => drop(s.set(k.as_bytes(), l.hash, Value::Str(StrValue::Raw(vec![b'r'; 40])), None, 0)),
        }
        keys.push((i % 2, k));
    }
    let (mut snap, want) = begin(&ks, 10);
    snap.set_slice(8);
    let start = snap.start_ms();
    let mut got = Model::new();
    let mut n = 0;
    loop {
        let step = snap.next(&ks, |db, key: &[u8], v: ValueRef<'_>, ttl| {
            if let ValueRef::Str(StrRef::Mc(m)) = v {
                let i: u32 = std::str::from_utf8(&key[1..]).unwrap().parse().unwrap();
                assert_eq!((m.data(), m.flags(), m.cas()), (&b"mc"[..], i, 9));
            }
            assert!(got.insert((db, key.to_vec()), (canon(v, start), ttl)).is_none());
            // Overwrite the key delivered, and remove one the walk may not
            // have reached, from inside the sink.
            let l = ks.locate(db as usize, key);
            let mut s = ks.try_lock(l.gid).expect("the sink runs with no shard lock held");
            s.set(key, l.hash, NewValue::Bytes(b"changed"), None, 20);
            let (odb, other) = &keys[n * 7 % keys.len()];
            let lo = ks.locate(*odb, other.as_bytes());
            drop(s);
            ks.lock(lo.gid).remove(other.as_bytes(), lo.hash, 20);
            n += 1;
        });
        if step.done {
            break;
        }
    }
    assert_eq!(n, 600);
    assert_same(&got, &want);
    assert!(snap.stats().captured > 0, "{:?}", snap.stats());
    assert_eq!(marks(&ks), 0);
}
