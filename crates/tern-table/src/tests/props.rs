use super::*;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Insert(u8, u32, Option<u64>),
    Remove(u8),
    Get(u8),
    Batch(Vec<u8>),
    SetExpire(u8, Option<u64>),
    Retain(u32),
    Step(u8),
    Random(u64),
    Scan,
    Reserve(u16),
}

fn kname(k: u8) -> Vec<u8> {
    match k % 4 {
        0 => vec![],
        1 => format!("k{k}").into_bytes(),
        2 => format!("a-longer-key-that-spans-more-bytes-{k}").into_bytes(),
        _ => vec![k; 1 + k as usize],
    }
    .into_iter()
    .chain(std::iter::once(k))
    .collect()
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0u8..120;
    prop_oneof![
        6 => (k.clone(), any::<u32>(), proptest::option::of(any::<u64>())).prop_map(|(k, v, e)| Op::Insert(k, v, e)),
        3 => k.clone().prop_map(Op::Remove),
        2 => k.clone().prop_map(Op::Get),
        1 => proptest::collection::vec(k.clone(), 0..40).prop_map(Op::Batch),
        2 => (k.clone(), proptest::option::of(any::<u64>())).prop_map(|(k, e)| Op::SetExpire(k, e)),
        1 => (1u32..6).prop_map(Op::Retain),
        1 => any::<u8>().prop_map(Op::Step),
        1 => any::<u64>().prop_map(Op::Random),
        1 => Just(Op::Scan),
        1 => any::<u16>().prop_map(|n| Op::Reserve(n % 300)),
    ]
}

type Model = HashMap<Vec<u8>, (u32, Option<u64>)>;

fn apply<S: BuildHasher>(t: &mut Table<u32, S>, m: &mut Model, op: &Op) {
    match op {
        Op::Insert(k, v, e) => {
            let k = kname(*k);
            let hh = h(t, &k);
            if let Some(it) = t.get_mut(&k, hh) {
                **it = *v;
                t.set_expire(&k, hh, *e);
            } else {
                let it = t.insert(&k, hh, *v, *e);
                assert_eq!(it.expire(), *e);
            }
            m.insert(k, (*v, *e));
        }
        Op::Remove(k) => {
            let k = kname(*k);
            let hh = h(t, &k);
            let got = t.remove(&k, hh).map(|b| (b.expire(), b.into_value()));
            assert_eq!(got.map(|(e, v)| (v, e)), m.remove(&k));
        }
        Op::Get(k) => {
            let k = kname(*k);
            let got = t.get(&k, h(t, &k)).map(|e| (**e, e.expire()));
            assert_eq!(got.as_ref(), m.get(&k));
        }
        Op::Batch(ks) => {
            let ks: Vec<Vec<u8>> = ks.iter().map(|&k| kname(k)).collect();
            let q: Vec<(&[u8], u64)> = ks.iter().map(|k| (&k[..], h(t, k))).collect();
            let mut out = Vec::new();
            t.get_batch(&q, &mut out);
            let got: Vec<Option<(u32, Option<u64>)>> = out.iter().map(|e| e.map(|e| (**e, e.expire()))).collect();
            let want: Vec<Option<(u32, Option<u64>)>> = ks.iter().map(|k| m.get(k).copied()).collect();
            assert_eq!(got, want);
        }
        Op::SetExpire(k, e) => {
            let k = kname(*k);
            let hh = h(t, &k);
            assert_eq!(t.set_expire(&k, hh, *e), m.contains_key(&k));
            if let Some(x) = m.get_mut(&k) {
                x.1 = *e;
            }
        }
        Op::Retain(d) => {
            t.retain(|e| **e % d != 0);
            m.retain(|_, v| v.0 % d != 0);
        }
        Op::Step(n) => {
            t.rehash_step(*n as usize % 4);
        }
        Op::Reserve(n) => {
            let n = *n as usize;
            t.reserve(n);
            assert!(!t.is_rehashing());
            let nb = t.bucket_count();
            // The next n inserts (if they were made) start no resize:
            // the array holds len + n at most 4/5 full.
            assert!((t.len() + n) * GROW_DEN <= nb * SLOTS * GROW_NUM || t.len() + n == 0);
        }
        Op::Random(seed) => {
            let mut s = *seed;
            let mut rng = || {
                s = mix(s.wrapping_add(1));
                s
            };
            match t.random(&mut rng) {
                Some(e) => assert_eq!(m.get(e.key()).map(|x| x.0), Some(**e)),
                None => assert!(m.is_empty()),
            }
        }
        Op::Scan => {
            let mut seen = HashSet::new();
            let mut c = 0;
            loop {
                c = t.scan(c, |e| {
                    seen.insert(e.key().to_vec());
                });
                if c == 0 {
                    break;
                }
            }
            let keys: HashSet<Vec<u8>> = m.keys().cloned().collect();
            assert_eq!(seen, keys);
        }
    }
    assert_eq!(t.len(), m.len());
}

fn run<S: BuildHasher>(mut t: Table<u32, S>, ops: &[Op]) {
    let mut m = Model::new();
    for (i, op) in ops.iter().enumerate() {
        apply(&mut t, &mut m, op);
        if i % 16 == 0 {
            check_exact(&t);
        }
    }
    check_exact(&t);
    for (k, v) in &m {
        let e = t.get(k, h(&t, k)).unwrap();
        assert_eq!((**e, e.expire()), *v);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    #[cfg_attr(miri, ignore)]
    fn model_good_hash(ops in proptest::collection::vec(op(), 1..400)) {
        run(Table::with_hasher(TestHasher::new(Mode::Good)), &ops);
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn model_weak_hash(ops in proptest::collection::vec(op(), 1..400)) {
        run(Table::with_hasher(TestHasher::new(Mode::Weak(3))), &ops);
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn model_zero_hash(ops in proptest::collection::vec(op(), 1..200)) {
        run(Table::with_hasher(TestHasher::new(Mode::Zero)), &ops);
    }

    /// Keys present for a whole scan are returned, whatever happens to
    /// the others between steps.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn scan_guarantee_under_mutation(
        base in 0usize..300,
        ops in proptest::collection::vec(op(), 0..300),
        per_step in 1usize..20,
    ) {
        let mut t: Table<_, _> = Table::with_hasher(TestHasher::new(Mode::Good));
        let mut m = Model::new();
        for i in 0..base {
            let k = format!("stable{i}").into_bytes();
            let hh = h(&t, &k);
            t.insert(&k, hh, u32::MAX, None);
        }
        let mut seen = HashSet::new();
        let mut c = 0;
        let mut ops = ops.into_iter();
        let mut steps = 0;
        loop {
            c = t.scan(c, |e| { seen.insert(e.key().to_vec()); });
            steps += 1;
            for _ in 0..per_step {
                match ops.next() {
                    Some(op) => apply_offset(&mut t, &mut m, &op, base),
                    None => { t.rehash_step(1); }
                }
            }
            if c == 0 { break; }
            prop_assert!(steps < 100_000);
        }
        for i in 0..base {
            prop_assert!(seen.contains(format!("stable{i}").as_bytes()), "missing stable{}", i);
        }
    }
}

/// Inserts, removes and resize steps on a table that also holds `offset`
/// keys outside the model (the ops never name them).
fn apply_offset<S: BuildHasher>(t: &mut Table<u32, S>, m: &mut Model, op: &Op, offset: usize) {
    match op {
        Op::Insert(k, v, e) => {
            let k = kname(*k);
            let hh = h(t, &k);
            if t.get(&k, hh).is_some() {
                t.set_expire(&k, hh, *e);
                **t.get_mut(&k, hh).unwrap() = *v;
            } else {
                t.insert(&k, hh, *v, *e);
            }
            m.insert(k, (*v, *e));
        }
        Op::Remove(k) => {
            let k = kname(*k);
            let hh = h(t, &k);
            assert_eq!(t.remove(&k, hh).is_some(), m.remove(&k).is_some());
        }
        Op::Step(n) => {
            t.rehash_step(*n as usize % 4);
        }
        _ => {}
    }
    assert_eq!(t.len(), m.len() + offset);
}
