use super::tree::Node;
use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

fn lim(e: usize, v: usize) -> ZsetLimits {
    ZsetLimits {
        max_entries: e,
        max_value: v,
    }
}

/// A slot is half a cache line whichever form its member takes, and a
/// member is inline up to INLINE bytes and in its own allocation
/// (counted in the heap) beyond.
#[test]
fn members_up_to_inline_bytes_stay_in_their_slot() {
    assert_eq!(std::mem::size_of::<Slot>(), 32);
    let mut slab = Slab::default();
    let short = [7u8; INLINE];
    let long = [9u8; INLINE + 1];
    let a = slab.alloc(1.0, &short);
    assert!(matches!(slab.get(a).member, Member::Inline { .. }));
    assert_eq!(&*slab.get(a).member, &short[..]);
    assert_eq!(slab.member_heap, 0);
    let b = slab.alloc(2.0, &long);
    assert!(matches!(slab.get(b).member, Member::Heap(_)));
    assert_eq!(&*slab.get(b).member, &long[..]);
    assert_eq!(slab.member_heap, tern_table::size_class(INLINE + 1));
    let c = slab.alloc(3.0, b"");
    assert_eq!(&*slab.get(c).member, b"");
    slab.release(b);
    assert_eq!(slab.member_heap, 0);
    assert_eq!(slab.alloc(4.0, &long), b);
    assert_eq!(&*slab.get(b).member, &long[..]);
}

#[test]
fn pack_scores_round_trip_and_minus_zero_becomes_zero() {
    let l = lim(128, 64);
    let mut z = ZSet::new_for(1, 1, l);
    for (m, s) in [
        ("a", 1.5),
        ("b", -3.0),
        ("c", 1e300),
        ("d", f64::INFINITY),
        ("e", f64::NEG_INFINITY),
        ("f", -0.0),
        ("g", 4.6e18),
    ] {
        z.insert(m.as_bytes(), s, l);
    }
    assert_eq!(z.encoding(), "listpack");
    let got: Vec<(Vec<u8>, f64)> = z.iter().map(|(m, s)| (m.to_vec(), s)).collect();
    let names: Vec<&[u8]> = got.iter().map(|x| &x.0[..]).collect();
    assert_eq!(names, [&b"e"[..], b"b", b"f", b"a", b"g", b"c", b"d"]);
    assert!(z.score(b"f").unwrap().is_sign_positive());
    assert_eq!(z.score(b"g"), Some(4.6e18));
}

#[test]
fn conversions_follow_redis() {
    let l = lim(3, 4);
    assert_eq!(ZSet::new_for(3, 4, l).encoding(), "listpack");
    assert_eq!(ZSet::new_for(4, 4, l).encoding(), "skiplist");
    assert_eq!(ZSet::new_for(1, 5, l).encoding(), "skiplist");
    let mut z = ZSet::new_for(1, 1, l);
    for m in ["a", "b", "c"] {
        z.insert(m.as_bytes(), 1.0, l);
    }
    assert_eq!(z.encoding(), "listpack");
    z.insert(b"a", 2.0, l);
    assert_eq!(z.encoding(), "listpack");
    z.insert(b"d", 2.0, l);
    assert_eq!(z.encoding(), "skiplist");
    let mut z = ZSet::new_for(1, 1, l);
    z.insert(b"toolong", 1.0, l);
    assert_eq!(z.encoding(), "skiplist");
    let mut z = ZSet::new_for(1, 1, l);
    z.prepare_write(4, 1, l);
    assert_eq!(z.encoding(), "skiplist");
    // -0 stays -0 in the large form, as in Redis's skiplist.
    z.insert(b"z", -0.0, l);
    assert!(z.score(b"z").unwrap().is_sign_negative());
}

/// ZINCRBY-like steps, small and large, up and down, on ties too: ids
/// moved inside their leaf, at its edges and out of it keep the order
/// and the copies of first ids and scores exact.
#[test]
fn score_steps_keep_the_order_in_and_across_leaves() {
    let l = lim(0, 0);
    let mut z = ZSet::new_for(1, 1, l);
    let mut model: BTreeMap<Vec<u8>, f64> = BTreeMap::new();
    for i in 0..600u32 {
        let m = format!("m{i:04}").into_bytes();
        z.insert(&m, f64::from(i / 2), l);
        model.insert(m, f64::from(i / 2));
    }
    let steps = [0.5, -0.5, 1.0, -1.0, 0.0, 2.5, -7.0, 40.0, -300.0];
    let mut x = 12345u32;
    for k in 0..6000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let m = format!("m{:04}", (x >> 8) % 600).into_bytes();
        let s = model[&m] + steps[(x >> 20) as usize % steps.len()];
        z.insert(&m, s, l);
        model.insert(m, s);
        if k % 500 == 0 {
            check(&z, &model);
        }
    }
    check(&z, &model);
}

#[test]
fn large_tree_keeps_order_through_many_changes() {
    let l = lim(0, 0);
    let mut z = ZSet::new_for(1, 1, l);
    let mut model: BTreeMap<Vec<u8>, f64> = BTreeMap::new();
    for i in 0..20_000u32 {
        let m = format!("m{}", (i * 7919) % 5000).into_bytes();
        let s = f64::from((i * 31) % 97);
        z.insert(&m, s, l);
        model.insert(m, s);
        if i % 3 == 0 {
            let r = format!("m{}", (i * 13) % 5000).into_bytes();
            assert_eq!(z.remove(&r), model.remove(&r));
        }
    }
    check(&z, &model);
    // Windows of a deep tree (test nodes hold 6 ids), either way.
    let want: Vec<Vec<u8>> = sorted_model(&model).into_iter().map(|x| x.1).collect();
    let n = z.len();
    for (a, b) in [(0, n), (0, 1), (n - 1, n), (5, 6), (6, 7), (17, 300), (299, 1234), (1000, n - 3)] {
        for rev in [false, true] {
            let mut got = Vec::new();
            z.for_range(a, b, rev, |m, _| got.push(m.to_vec()));
            if rev {
                got.reverse();
            }
            assert_eq!(got, want[a..b], "window {a}..{b} rev {rev}");
        }
    }
    z.remove_range(10, n - 10, |_, _| {});
    assert_eq!(z.len(), 20);
    let mut seen = 0;
    let mut c = 0;
    loop {
        c = z.scan(c, 3, |_, _| seen += 1);
        if c == 0 {
            break;
        }
    }
    assert_eq!(seen, 20);
}

fn sorted_model(model: &BTreeMap<Vec<u8>, f64>) -> Vec<(f64, Vec<u8>)> {
    let mut v: Vec<(f64, Vec<u8>)> = model.iter().map(|(m, s)| (*s, m.clone())).collect();
    v.sort_by(|a, b| key_cmp(a.0, &a.1, b.0, &b.1));
    v
}

/// The inner nodes' first ids are their kids' first ids, and the
/// copies of their scores are the slab's, bit for bit.
fn copies_agree(z: &ZSet) {
    fn walk(n: &Node, b: &Big) {
        if let Node::Inner(i) = n {
            assert_eq!(i.kids.len(), i.firsts.len());
            for (k, kid) in i.kids.iter().enumerate() {
                assert_eq!(i.firsts[k].0, kid.first());
                assert_eq!(i.firsts[k].1.to_bits(), b.slab.get(i.firsts[k].0).score.to_bits());
                walk(kid, b);
            }
        }
    }
    if let Repr::Tree(b) = &z.repr {
        walk(&b.order.root, b);
    }
}

fn check(z: &ZSet, model: &BTreeMap<Vec<u8>, f64>) {
    copies_agree(z);
    let want = sorted_model(model);
    assert_eq!(z.len(), want.len());
    let got: Vec<(f64, Vec<u8>)> = z.iter().map(|(m, s)| (s, m.to_vec())).collect();
    assert_eq!(got, want);
    for (i, (s, m)) in want.iter().enumerate() {
        assert_eq!(z.rank(m), Some((i, *s)));
        assert_eq!(
            z.nth(i).map(|(m, s)| (m.to_vec(), s)),
            Some((m.clone(), *s))
        );
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert(Vec<u8>, f64),
    Remove(Vec<u8>),
    RemoveRange(usize, usize),
}

fn member() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(b'a'..b'f', 0..4)
}

fn score() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-5i32..5).prop_map(f64::from),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-0.0),
        Just(0.5),
        Just(1e300),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (member(), score()).prop_map(|(m, s)| Op::Insert(m, s)),
        3 => member().prop_map(Op::Remove),
        1 => (0usize..40, 0usize..40).prop_map(|(a, b)| Op::RemoveRange(a, b)),
    ]
}

fn bound() -> impl Strategy<Value = ScoreBound> {
    (score(), any::<bool>()).prop_map(|(value, exclusive)| ScoreBound { value, exclusive })
}

fn lexb() -> impl Strategy<Value = (u8, Vec<u8>)> {
    (0u8..4, member())
}

fn to_lex(b: &(u8, Vec<u8>)) -> LexBound<'_> {
    match b.0 {
        0 => LexBound::Min,
        1 => LexBound::Max,
        2 => LexBound::Incl(&b.1),
        _ => LexBound::Excl(&b.1),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// Both encodings, with conversions at small thresholds, behave as
    /// a member → score map whose order is the sorted Vec's; rank,
    /// score and lex ranges agree with the sorted Vec.
    #[test]
    fn zset_matches_model(ops in proptest::collection::vec(op(), 1..300),
                          me in 0usize..12, mv in 0usize..4,
                          lo in bound(), hi in bound(), la in lexb(), lb in lexb(), rev in any::<bool>()) {
        let l = lim(me, mv);
        let mut model: BTreeMap<Vec<u8>, f64> = BTreeMap::new();
        let mut z = ZSet::new_for(1, 1, l);
        for op in ops {
            let was = z.encoding();
            match op {
                Op::Insert(m, s) => {
                    let new = z.insert(&m, s, l);
                    prop_assert_eq!(new, !model.contains_key(&m));
                    // A compact set keeps -0 as 0, as Redis's listpack.
                    let s = if z.is_compact() && s == 0.0 { 0.0 } else { s };
                    model.insert(m, s);
                }
                Op::Remove(m) => prop_assert_eq!(z.remove(&m), model.remove(&m)),
                Op::RemoveRange(a, b) => {
                    let want = sorted_model(&model);
                    let mut gone = Vec::new();
                    z.remove_range(a, b, |m, s| gone.push((s, m.to_vec())));
                    let end = b.min(want.len());
                    let exp: Vec<(f64, Vec<u8>)> = if a < end { want[a..end].to_vec() } else { Vec::new() };
                    prop_assert_eq!(&gone, &exp);
                    for (_, m) in exp { model.remove(&m); }
                }
            }
            prop_assert!(!(was == "skiplist" && z.encoding() == "listpack"), "converted back");
            copies_agree(&z);
            if z.is_compact() { prop_assert!(z.len() <= me); }
            let want = sorted_model(&model);
            let got: Vec<(f64, Vec<u8>)> = z.iter().map(|(m, s)| (s, m.to_vec())).collect();
            prop_assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(want.iter()) {
                prop_assert_eq!(&g.1, &w.1);
                prop_assert!(g.0 == w.0);
            }
        }
        let want = sorted_model(&model);
        for (i, (s, m)) in want.iter().enumerate() {
            let r = z.rank(m);
            prop_assert_eq!(r.map(|x| x.0), Some(i));
            prop_assert!(r.map(|x| x.1) == Some(*s));
        }
        // Scores of many members (present, absent, repeated) staged in
        // groups of every size, against one lookup each.
        let mut asked: Vec<Vec<u8>> = model.keys().cloned().collect();
        asked.extend([b"absent".to_vec(), b"m1".to_vec(), b"m1".to_vec()]);
        let one: Vec<Option<f64>> = asked.iter().map(|m| z.score(m)).collect();
        for g in [0, 1, 2, 3, 16] {
            let mut many = Vec::new();
            z.scores_many(&asked, &mut many, g);
            prop_assert_eq!(many.len(), one.len());
            for (a, b) in many.iter().zip(&one) {
                prop_assert!(a.map(f64::to_bits) == b.map(f64::to_bits));
            }
        }
        for (m, s) in &model {
            prop_assert!(z.score(m) == Some(*s) || (z.is_compact() && *s == 0.0));
        }
        // Score range against a filter of the sorted Vec.
        let inside = |s: f64| (if lo.exclusive { s > lo.value } else { s >= lo.value }) && (if hi.exclusive { s < hi.value } else { s <= hi.value });
        let exp: Vec<Vec<u8>> = want.iter().filter(|x| inside(x.0)).map(|x| x.1.clone()).collect();
        let (a, b) = z.score_range(lo, hi);
        let mut got = Vec::new();
        z.for_range(a, b, rev, |m, _| got.push(m.to_vec()));
        if rev { got.reverse(); }
        prop_assert_eq!(&got, &exp);
        // The same members by a walk from the start that stops past
        // the end, and one its callback stops after `me` of them.
        let mut walked = Vec::new();
        z.for_scores(lo, hi, |m, _| { walked.push(m.to_vec()); true });
        prop_assert_eq!(&walked, &exp);
        let mut first = Vec::new();
        z.for_scores(lo, hi, |m, _| { first.push(m.to_vec()); first.len() < me.max(1) });
        prop_assert_eq!(&first[..], &exp[..exp.len().min(me.max(1))]);
        // Lex range, over members all of one score.
        let mut same = ZSet::new_for(1, 1, l);
        for m in model.keys() { same.insert(m, 1.0, l); }
        let (ba, bb) = (to_lex(&la), to_lex(&lb));
        let ge = |m: &[u8]| match ba { LexBound::Min => true, LexBound::Max => false, LexBound::Incl(x) => m >= x, LexBound::Excl(x) => m > x };
        let le = |m: &[u8]| match bb { LexBound::Min => false, LexBound::Max => true, LexBound::Incl(x) => m <= x, LexBound::Excl(x) => m < x };
        let exp: Vec<Vec<u8>> = model.keys().filter(|m| ge(m) && le(m)).cloned().collect();
        let (a, b) = same.lex_range(ba, bb);
        let mut got = Vec::new();
        same.for_range(a, b, false, |m, _| got.push(m.to_vec()));
        prop_assert_eq!(got, exp);
    }
}
