//! A shard against a `HashMap` model: interleaved sets, removals, reads,
//! value replacements (in the item and boxed, in place and not),
//! TTLs, clock ticks, active expiry and SCAN steps. Checks that reads and
//! live counts agree with the model after every step, and that a SCAN
//! returns every key present for its whole duration, and nothing that is
//! not there, while the table grows and shrinks under it.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use tern_store::{Entry, EntryExt, Shard, StrValue, Value};

#[derive(Debug, Clone)]
enum Op {
    Set(u16, i64),
    Remove(u16),
    Get(u16),
    Expire(u16, u64),
    Persist(u16),
    Tick(u64),
    Cycle,
    Scan,
    /// Many inserts at once, to force a resize in the middle of a scan.
    Burst(u16),
    /// Many removals at once, to force a shrink.
    Drain,
    /// A new value for a live key, keeping its TTL: in the item (an
    /// integer) or boxed apart (a growable buffer holding its digits).
    Replace(u16, i64, bool),
    /// An integer written over the one in the item, in place, or through
    /// a replacement when the key holds a boxed value.
    Overwrite(u16, i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u16..600, any::<i64>()).prop_map(|(k, v)| Op::Set(k, v)),
        3 => (0u16..600).prop_map(Op::Remove),
        3 => (0u16..600).prop_map(Op::Get),
        2 => (0u16..600, 1u64..50).prop_map(|(k, t)| Op::Expire(k, t)),
        1 => (0u16..600).prop_map(Op::Persist),
        2 => (1u64..20).prop_map(Op::Tick),
        1 => Just(Op::Cycle),
        6 => Just(Op::Scan),
        1 => (0u16..600).prop_map(Op::Burst),
        1 => Just(Op::Drain),
        2 => (0u16..600, any::<i64>(), any::<bool>()).prop_map(|(k, v, b)| Op::Replace(k, v, b)),
        2 => (0u16..600, any::<i64>()).prop_map(|(k, v)| Op::Overwrite(k, v)),
    ]
}

/// The shard's own hash of key `k`: the table re-hashes keys with it when
/// it resizes, so callers must hash the same way (the keyspace does).
fn hash_of(sh: &Shard, k: u16) -> u64 {
    sh.hash_key(&key(k))
}

fn key(k: u16) -> Vec<u8> {
    format!("key:{k}").into_bytes()
}

fn int_of(e: &Entry) -> i64 {
    let s = e.str().unwrap_or_else(|| panic!("unexpected value {e:?}"));
    s.int().or_else(|| s.with_bytes(|b| std::str::from_utf8(b).ok()?.parse().ok())).unwrap_or_else(|| panic!("unexpected value {e:?}"))
}

struct Model {
    /// key -> (value, deadline)
    map: HashMap<u16, (i64, Option<u64>)>,
    now: u64,
}

impl Model {
    fn live(&self, k: u16) -> Option<(i64, Option<u64>)> {
        self.map.get(&k).copied().filter(|(_, d)| d.is_none_or(|d| d > self.now))
    }
    fn live_keys(&self) -> HashSet<u16> {
        self.map.keys().copied().filter(|k| self.live(*k).is_some()).collect()
    }
}

struct ScanState {
    cursor: u64,
    seen: HashSet<u16>,
    /// Keys live at the start that stayed, with no TTL, the whole time.
    stable: HashSet<u16>,
}

fn parse_key(b: &[u8]) -> u16 {
    std::str::from_utf8(b).ok().and_then(|s| s.strip_prefix("key:")).and_then(|s| s.parse().ok()).expect("test key")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn shard_matches_hashmap(ops in proptest::collection::vec(op(), 1..400)) {
        let mut sh = Shard::new();
        let mut m = Model { map: HashMap::new(), now: 1_000 };
        let mut scan: Option<ScanState> = None;
        let unstable = |scan: &mut Option<ScanState>, k: u16| {
            if let Some(s) = scan.as_mut() {
                s.stable.remove(&k);
            }
        };
        for op in ops {
            match op {
                Op::Set(k, v) => {
                    let old = sh.set(&key(k), hash_of(&sh, k), Value::Str(StrValue::Int(v)), None, m.now);
                    prop_assert_eq!(old.map(|o| int_of(&o)), m.live(k).map(|(v, _)| v));
                    m.map.insert(k, (v, None));
                }
                Op::Remove(k) => {
                    let got = sh.remove(&key(k), hash_of(&sh, k), m.now).map(|e| int_of(&e));
                    prop_assert_eq!(got, m.live(k).map(|(v, _)| v));
                    m.map.remove(&k);
                    unstable(&mut scan, k);
                }
                Op::Get(k) => {
                    let got = sh.get(&key(k), hash_of(&sh, k), m.now).map(|e| (int_of(e), e.expire()));
                    prop_assert_eq!(got, m.live(k));
                }
                Op::Expire(k, dt) => {
                    let exists = sh.get(&key(k), hash_of(&sh, k), m.now).is_some();
                    prop_assert_eq!(exists, m.live(k).is_some());
                    if exists {
                        prop_assert!(sh.set_expire(&key(k), hash_of(&sh, k), Some(m.now + dt)));
                        if let Some(e) = m.map.get_mut(&k) {
                            e.1 = Some(m.now + dt);
                        }
                        unstable(&mut scan, k);
                    }
                }
                Op::Persist(k) => {
                    if sh.get(&key(k), hash_of(&sh, k), m.now).is_some() {
                        sh.set_expire(&key(k), hash_of(&sh, k), None);
                        if let Some(e) = m.map.get_mut(&k) {
                            e.1 = None;
                        }
                    }
                }
                Op::Replace(k, v, boxed) => {
                    let h = hash_of(&sh, k);
                    let old = if boxed {
                        sh.replace_value(&key(k), h, Value::Str(StrValue::Raw(v.to_string().into_bytes())), m.now)
                    } else {
                        sh.replace_value(&key(k), h, tern_store::NewValue::Int(v), m.now)
                    };
                    prop_assert_eq!(old.map(|o| int_of(&o)), m.live(k).map(|(v, _)| v));
                    if m.live(k).is_some() {
                        m.map.get_mut(&k).expect("live").0 = v;
                    }
                }
                Op::Overwrite(k, v) => {
                    let h = hash_of(&sh, k);
                    let live = m.live(k).is_some();
                    let in_place = sh
                        .modify(&key(k), h, m.now, tern_store::Access::NoTouch, |e, ed| {
                            let done = e.set_int(v);
                            if done {
                                ed.changed();
                            }
                            done
                        })
                        .unwrap_or(false);
                    if live && !in_place {
                        prop_assert!(sh.replace_value(&key(k), h, tern_store::NewValue::Int(v), m.now).is_some());
                    }
                    if live {
                        m.map.get_mut(&k).expect("live").0 = v;
                    }
                }
                Op::Tick(dt) => m.now += dt,
                Op::Cycle => {
                    sh.expire_cycle(m.now, usize::MAX);
                    m.map.retain(|_, (_, d)| d.is_none_or(|d| d > m.now));
                    prop_assert_eq!(sh.len(), m.map.len());
                }
                Op::Burst(from) => {
                    for k in from..(from + 300).min(600) {
                        sh.set(&key(k), hash_of(&sh, k), Value::Str(StrValue::Int(0)), None, m.now);
                        m.map.insert(k, (0, None));
                        unstable(&mut scan, k);
                    }
                }
                Op::Drain => {
                    let ks: Vec<u16> = m.map.keys().copied().filter(|k| k % 8 != 0).collect();
                    for k in ks {
                        sh.remove(&key(k), hash_of(&sh, k), m.now);
                        m.map.remove(&k);
                        unstable(&mut scan, k);
                    }
                }
                Op::Scan => {
                    let s = scan.get_or_insert_with(|| ScanState {
                        cursor: 0,
                        seen: HashSet::new(),
                        stable: m.map.iter().filter(|(k, (_, d))| d.is_none() && m.live(**k).is_some()).map(|(k, _)| *k).collect(),
                    });
                    let mut step = Vec::new();
                    let (next, visited) = sh.scan_live(s.cursor, m.now, |e| step.push(parse_key(e.key())));
                    prop_assert!(visited >= step.len());
                    for k in step {
                        prop_assert!(m.live(k).is_some(), "scan returned absent key {}", k);
                        s.seen.insert(k);
                    }
                    s.cursor = next;
                    if next == 0 {
                        let missing: Vec<_> = s.stable.difference(&s.seen).collect();
                        prop_assert!(missing.is_empty(), "scan missed {:?}", missing);
                        scan = None;
                    }
                }
            }
            prop_assert_eq!(sh.iter(m.now).count(), m.live_keys().len());
            prop_assert!(sh.volatile_count() <= sh.len());
        }
    }
}
