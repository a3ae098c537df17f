use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use proptest::prelude::*;

use super::*;
use crate::listpack;

fn id(ms: u64, seq: u64) -> StreamId {
    StreamId::new(ms, seq)
}

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// Every live entry, in order (or from the end), with its pairs.
fn entries(s: &Stream, start: StreamId, end: StreamId, rev: bool) -> Vec<(StreamId, Pairs)> {
    let mut out = Vec::new();
    s.range(start, end, rev, |id, f| {
        assert_eq!(f.iter().len(), f.len());
        out.push((id, f.iter().map(|(k, v)| (k.into_owned(), v.into_owned())).collect()));
        true
    });
    out
}

fn add(s: &mut Stream, i: StreamId, kv: &[&str], lim: StreamLimits) {
    let f: Vec<&[u8]> = kv.iter().map(|x| x.as_bytes()).collect();
    s.append(i, &f, lim);
}

fn pairs(kv: &[&str]) -> Pairs {
    kv.chunks(2).map(|c| (c[0].as_bytes().to_vec(), c[1].as_bytes().to_vec())).collect()
}

/// The structure's invariants: every node a valid stream listpack with a
/// live entry, keyed by its first entry's ID, in order; the counters
/// agree with the nodes.
pub(crate) fn check_invariants(s: &Stream) {
    let mut live = 0;
    let mut prev: Option<StreamId> = None;
    for (key, node) in s.nodes.iter() {
        let vals = listpack::collect(node.bytes()).expect("valid listpack");
        let c = node::check(&vals, key).expect("valid stream node, starting at its master ID");
        assert!(c.live > 0, "no node without a live entry");
        assert!(prev.is_none_or(|p| p < key));
        prev = Some(c.last);
        live += c.live;
    }
    assert_eq!(live, s.len());
    assert_eq!(s.node_heap, s.nodes.values().map(node_cost).sum::<usize>(), "the kept heap count is the nodes'");
    assert_eq!(s.first_id(), s.first_entry_id().unwrap_or_default());
    assert!(prev.is_none_or(|p| p <= s.last_id()));
}

#[test]
fn ids_step_and_print_as_redis() {
    assert_eq!(id(5, u64::MAX).incr(), Some(id(6, 0)));
    assert_eq!(id(5, 7).incr(), Some(id(5, 8)));
    assert_eq!(StreamId::MAX.incr(), None);
    assert_eq!(id(6, 0).decr(), Some(id(5, u64::MAX)));
    assert_eq!(StreamId::MIN.decr(), None);
    assert_eq!(id(1_700_000_000_000, 42).to_text(), b"1700000000000-42");
    assert_eq!(StreamId::MAX.to_text(), b"18446744073709551615-18446744073709551615");
    let i = id(0x0102030405060708, 0x1112131415161718);
    assert_eq!(i.to_be_bytes()[..3], [1, 2, 3]);
    assert_eq!(StreamId::from_be_bytes(i.to_be_bytes()), i);
    assert!(id(1, u64::MAX) < id(2, 0));
}

/// `XADD s 1-1 a 1 b hello` then `XADD s 1-2 a 2 b x` then `XADD s 2-0 c 3`:
/// the listpack Redis builds for them.
#[test]
fn a_node_is_redis_listpack() {
    let mut s = Stream::new();
    let lim = StreamLimits::default();
    add(&mut s, id(1, 1), &["a", "1", "b", "hello"], lim);
    add(&mut s, id(1, 2), &["a", "2", "b", "x"], lim);
    add(&mut s, id(2, 0), &["c", "3"], lim);
    let (key, lp) = s.nodes().next().unwrap();
    assert_eq!(key, id(1, 1));
    let vals: Vec<Vec<u8>> = listpack::collect(lp).unwrap().into_iter().map(|v| v.to_vec()).collect();
    let want: Vec<&[u8]> = vec![
        b"3", b"0", b"2", b"a", b"b", b"0", // master: count, deleted, 2 fields, terminator
        b"2", b"0", b"0", b"1", b"hello", b"5", // same fields
        b"2", b"0", b"1", b"2", b"x", b"5",
        b"0", b"1", b"-1", b"1", b"c", b"3", b"6", // other fields; the seq delta wraps
    ];
    assert_eq!(vals, want.iter().map(|v| v.to_vec()).collect::<Vec<_>>());
    assert_eq!(
        entries(&s, StreamId::MIN, StreamId::MAX, false),
        vec![(id(1, 1), pairs(&["a", "1", "b", "hello"])), (id(1, 2), pairs(&["a", "2", "b", "x"])), (id(2, 0), pairs(&["c", "3"]))]
    );
    check_invariants(&s);
}

#[test]
fn nodes_split_at_entry_and_byte_limits() {
    let lim = StreamLimits { node_max_bytes: 0, node_max_entries: 3 };
    let mut s = Stream::new();
    for i in 1..=7 {
        add(&mut s, id(i, 0), &["f", "v"], lim);
    }
    assert_eq!(s.nodes().map(|(k, _)| k.ms).collect::<Vec<_>>(), [1, 4, 7]);
    // A node whose last live entry goes is freed; the next entry starts
    // another.
    assert!(s.delete(id(7, 0)));
    add(&mut s, id(8, 0), &["f", "v"], lim);
    assert_eq!(s.nodes().map(|(k, _)| k.ms).collect::<Vec<_>>(), [1, 4, 8]);
    // Deleted entries still count towards a node's entries.
    let mut s = Stream::new();
    add(&mut s, id(1, 0), &["f", "v"], lim);
    add(&mut s, id(2, 0), &["f", "v"], lim);
    assert!(s.delete(id(2, 0)));
    add(&mut s, id(3, 0), &["f", "v"], lim);
    add(&mut s, id(4, 0), &["f", "v"], lim);
    assert_eq!(s.nodes().map(|(k, _)| k.ms).collect::<Vec<_>>(), [1, 4]);
    // A node closes once its bytes and the new entry's reach the limit.
    let lim = StreamLimits { node_max_bytes: 40, node_max_entries: 0 };
    let mut s = Stream::new();
    for i in 1..=6 {
        add(&mut s, id(i, 0), &["field", "value"], lim);
    }
    for (_, lp) in s.nodes() {
        assert!(lp.len() < 40 + 10 + 12, "{}", lp.len());
    }
    assert!(s.node_count() > 1);
    check_invariants(&s);
    // Entries far apart in one node: deltas wrap as Redis's do.
    let mut s = Stream::new();
    add(&mut s, id(0, 5), &["f", "v"], StreamLimits::default());
    add(&mut s, id(u64::MAX, 0), &["f", "w"], StreamLimits::default());
    assert_eq!(s.node_count(), 1);
    assert_eq!(entries(&s, id(1, 0), StreamId::MAX, false), vec![(id(u64::MAX, 0), pairs(&["f", "w"]))]);
    check_invariants(&s);
}

#[test]
fn ranges_both_ways_skip_tombstones() {
    let lim = StreamLimits { node_max_bytes: 0, node_max_entries: 2 };
    let mut s = Stream::new();
    for i in 1..=9 {
        add(&mut s, id(i, 0), &["n", &i.to_string()], lim);
    }
    assert!(s.delete(id(4, 0)));
    assert!(!s.delete(id(4, 0)));
    assert!(!s.delete(id(4, 1)));
    let ids = |v: Vec<(StreamId, Pairs)>| v.into_iter().map(|(i, _)| i.ms).collect::<Vec<_>>();
    assert_eq!(ids(entries(&s, id(2, 1), id(7, 0), false)), [3, 5, 6, 7]);
    assert_eq!(ids(entries(&s, id(2, 1), id(7, 0), true)), [7, 6, 5, 3]);
    assert_eq!(ids(entries(&s, id(0, 0), id(0, 9), false)), Vec::<u64>::new());
    assert_eq!(ids(entries(&s, id(10, 0), StreamId::MAX, true)), Vec::<u64>::new());
    assert_eq!(ids(entries(&s, id(7, 0), id(3, 0), false)), Vec::<u64>::new());
    let mut n = 0;
    s.range(StreamId::MIN, StreamId::MAX, true, |_, _| {
        n += 1;
        n < 3
    });
    assert_eq!(n, 3);
    assert!(s.contains(id(5, 0)) && !s.contains(id(4, 0)));
    assert_eq!((s.first_entry_id(), s.last_entry_id()), (Some(id(1, 0)), Some(id(9, 0))));
    check_invariants(&s);
}

#[test]
fn delete_frees_nodes_and_moves_the_first_id() {
    let lim = StreamLimits { node_max_bytes: 0, node_max_entries: 2 };
    let mut s = Stream::new();
    for i in 1..=5 {
        add(&mut s, id(i, 0), &["f", "v"], lim);
    }
    assert!(s.delete(id(1, 0)));
    assert_eq!((s.first_id(), s.max_deleted_id(), s.node_count()), (id(2, 0), id(1, 0), 3));
    assert!(s.delete(id(2, 0)));
    assert_eq!((s.first_id(), s.node_count(), s.len()), (id(3, 0), 2, 3));
    assert!(s.delete(id(5, 0)));
    assert_eq!((s.max_deleted_id(), s.last_id(), s.last_entry_id()), (id(5, 0), id(5, 0), Some(id(4, 0))));
    assert!(s.delete(id(3, 0)) && s.delete(id(4, 0)));
    assert_eq!((s.len(), s.first_id(), s.node_count(), s.entries_added()), (0, StreamId::MIN, 0, 5));
    check_invariants(&s);
}

fn numbered(n: u64, per_node: usize) -> Stream {
    let lim = StreamLimits { node_max_bytes: 0, node_max_entries: per_node };
    let mut s = Stream::new();
    for i in 1..=n {
        add(&mut s, id(i, 0), &["f", "v"], lim);
    }
    s
}

#[test]
fn trim_as_redis() {
    // Exact MAXLEN: whole nodes, then entries marked in the boundary node.
    let mut s = numbered(10, 3);
    assert_eq!(s.trim(TrimTo::MaxLen(5), false, 0, RefPolicy::KeepRef), 5);
    assert_eq!((s.len(), s.first_id(), s.node_count()), (5, id(6, 0), 3));
    check_invariants(&s);
    // Approximate: whole nodes only.
    let mut s = numbered(10, 3);
    assert_eq!(s.trim(TrimTo::MaxLen(5), true, 0, RefPolicy::KeepRef), 3);
    assert_eq!(s.first_id(), id(4, 0));
    // LIMIT counts whole nodes: one of 3 fits in 4, a second would not.
    let mut s = numbered(10, 3);
    assert_eq!(s.trim(TrimTo::MaxLen(0), true, 4, RefPolicy::KeepRef), 3);
    // MINID, exact and approximate.
    let mut s = numbered(10, 3);
    assert_eq!(s.trim(TrimTo::MinId(id(5, 0)), false, 0, RefPolicy::KeepRef), 4);
    assert_eq!(s.first_id(), id(5, 0));
    let mut s = numbered(10, 3);
    assert_eq!(s.trim(TrimTo::MinId(id(5, 0)), true, 0, RefPolicy::KeepRef), 3);
    // Trimming to nothing keeps the key's counters.
    let mut s = numbered(4, 3);
    assert_eq!(s.trim(TrimTo::MaxLen(0), false, 0, RefPolicy::KeepRef), 4);
    assert_eq!((s.len(), s.first_id(), s.last_id(), s.entries_added(), s.node_count()), (0, StreamId::MIN, id(4, 0), 4, 0));
    assert_eq!(s.trim(TrimTo::MaxLen(0), false, 0, RefPolicy::KeepRef), 0);
    // A node left with tombstones only goes (Redis 8.4 keeps it).
    let mut s = numbered(2, 10);
    assert!(s.delete(id(2, 0)));
    assert_eq!(s.trim(TrimTo::MinId(id(2, 0)), false, 0, RefPolicy::KeepRef), 1);
    assert_eq!((s.len(), s.node_count()), (0, 0));
    check_invariants(&s);
}

#[test]
fn trim_keeps_or_drops_group_references() {
    let setup = || {
        let mut s = numbered(6, 2);
        s.create_group(b"g", id(4, 0), 4);
        let g = s.group_mut(b"g").unwrap();
        g.create_consumer(b"c", 1);
        for i in 1..=4 {
            g.deliver(id(i, 0), b"c", 10);
        }
        g.ack(id(1, 0));
        g.ack(id(2, 0));
        g.ack(id(4, 0));
        s
    };
    // ACKED: 3 is pending, 5 and 6 not delivered; only 1, 2 and 4 go.
    let mut s = setup();
    assert_eq!(s.trim(TrimTo::MaxLen(0), false, 0, RefPolicy::Acked), 3);
    assert_eq!(entries(&s, StreamId::MIN, StreamId::MAX, false).len(), 3);
    assert_eq!(s.first_id(), id(3, 0));
    check_invariants(&s);
    // Approximate ACKED still works entry by entry in nodes wholly in range.
    let mut s = setup();
    assert_eq!(s.trim(TrimTo::MinId(id(5, 0)), true, 0, RefPolicy::Acked), 3);
    // DELREF takes the pending 3 out of the PELs; KEEPREF leaves it.
    let mut s = setup();
    assert_eq!(s.trim(TrimTo::MaxLen(2), false, 0, RefPolicy::DelRef), 4);
    assert_eq!(s.group(b"g").unwrap().pending_len(), 0);
    let mut s = setup();
    assert_eq!(s.trim(TrimTo::MaxLen(2), false, 0, RefPolicy::KeepRef), 4);
    assert_eq!(s.group(b"g").unwrap().pending_len(), 1);
    assert!(s.referenced(id(3, 0)) && s.referenced(id(6, 0)) && !s.referenced(id(2, 0)));
    s.unref(id(3, 0));
    assert!(!s.referenced(id(3, 0)));
}

#[test]
fn read_counters_as_redis() {
    let mut s = Stream::new();
    assert_eq!(s.estimate_distance(id(5, 0)), Some(0));
    for i in 1..=5 {
        add(&mut s, id(i, 0), &["f", "v"], StreamLimits::default());
    }
    assert_eq!(s.estimate_distance(id(5, 0)), Some(5));
    assert_eq!(s.estimate_distance(id(1, 0)), Some(1));
    assert_eq!(s.estimate_distance(id(0, 5)), Some(0));
    assert_eq!(s.estimate_distance(id(3, 0)), None);
    assert_eq!(s.estimate_distance(id(6, 0)), None);
    s.trim(TrimTo::MaxLen(3), false, 0, RefPolicy::KeepRef);
    assert_eq!((s.estimate_distance(id(3, 0)), s.estimate_distance(id(2, 0))), (Some(3), Some(2)));
    assert!(s.delete(id(4, 0)));
    assert!(s.range_has_tombstones(id(3, 0), StreamId::MAX) && !s.range_has_tombstones(id(5, 0), StreamId::MAX));
    assert_eq!((s.estimate_distance(id(3, 0)), s.estimate_distance(id(5, 0))), (None, Some(5)));

    s.create_group(b"g", StreamId::MIN, 0);
    s.group_mut(b"g").unwrap().create_consumer(b"c", 0);
    let lag = |s: &Stream| s.lag(s.group(b"g").unwrap());
    // The tombstone 4-0 lies ahead of the group: its counter cannot be
    // trusted nor estimated, until it reads past the tombstone.
    assert_eq!(lag(&s), None);
    assert!(s.advance_group(b"g", id(3, 0)));
    assert_eq!(s.group(b"g").unwrap().entries_read, -1);
    assert!(!s.advance_group(b"g", id(3, 0)));
    assert!(s.advance_group(b"g", id(5, 0)));
    assert_eq!((s.group(b"g").unwrap().entries_read, lag(&s)), (5, Some(0)));
    add(&mut s, id(6, 0), &["f", "v"], StreamLimits::default());
    assert_eq!(lag(&s), Some(1));
    assert!(!s.advance_group(b"nope", id(9, 0)));
    // A fresh group behind a stream without tombstones lags by its length.
    let mut t = numbered(4, 100);
    t.create_group(b"g", StreamId::MIN, -1);
    assert_eq!(lag(&t), Some(4));
    assert!(t.advance_group(b"g", id(1, 0)));
    assert_eq!((t.group(b"g").unwrap().entries_read, lag(&t)), (1, Some(3)));
}

#[test]
fn groups_deliver_claim_ack() {
    let mut s = numbered(5, 100);
    assert!(s.create_group(b"g2", id(0, 0), -1) && s.create_group(b"g1", id(0, 0), -1));
    assert!(!s.create_group(b"g1", id(0, 0), 0));
    assert_eq!(s.groups().map(|(n, _)| n.to_vec()).collect::<Vec<_>>(), [b"g1".to_vec(), b"g2".to_vec()]);
    let g = s.group_mut(b"g1").unwrap();
    assert!(!g.deliver(id(1, 0), b"nobody", 5));
    assert!(g.create_consumer(b"bob", 5) && g.create_consumer(b"alice", 6) && !g.create_consumer(b"bob", 7));
    assert_eq!(g.consumer(b"bob").map(|c| (c.seen_time, c.active_time)), Some((5, -1)));
    for i in 1..=3 {
        assert!(g.deliver(id(i, 0), b"bob", 100));
    }
    assert_eq!(g.consumer(b"bob").unwrap().active_time, 100);
    // A pending message delivered again (after SETID) goes to the new
    // reader, as a first delivery.
    g.nack_mut(id(2, 0)).unwrap().delivery_count = 7;
    assert!(g.deliver(id(2, 0), b"alice", 200));
    let n = g.nack(id(2, 0)).unwrap();
    assert_eq!((n.consumer(), n.delivery_time, n.delivery_count), (&b"alice"[..], 200, 1));
    assert_eq!(g.consumer(b"bob").unwrap().pending_from(StreamId::MIN).collect::<Vec<_>>(), [id(1, 0), id(3, 0)]);
    // Claims: incremented, kept (JUSTID), set (RETRYCOUNT); FORCE creates.
    assert!(g.claim(id(1, 0), b"alice", 300, 250, ClaimCount::Incr));
    assert_eq!(g.nack(id(1, 0)).map(|n| (n.consumer(), n.delivery_time, n.delivery_count)), Some((&b"alice"[..], 250, 2)));
    assert!(g.claim(id(1, 0), b"alice", 300, 260, ClaimCount::Keep));
    assert_eq!(g.nack(id(1, 0)).unwrap().delivery_count, 2);
    assert!(g.claim(id(4, 0), b"bob", 300, 300, ClaimCount::Set(9)));
    assert_eq!(g.nack(id(4, 0)).map(|n| (n.consumer(), n.delivery_count)), Some((&b"bob"[..], 9)));
    assert_eq!(g.pending_range(id(2, 0), id(4, 0)).map(|(i, _)| i.ms).collect::<Vec<_>>(), [2, 3, 4]);
    assert_eq!(g.pending_range(id(4, 0), id(2, 0)).count(), 0);
    assert!(g.ack(id(3, 0)) && !g.ack(id(3, 0)));
    assert_eq!(g.delete_consumer(b"alice"), Some(2));
    assert_eq!(g.delete_consumer(b"alice"), None);
    assert_eq!((g.pending_len(), g.consumer_count()), (1, 1));
    assert!(s.destroy_group(b"g2") && !s.destroy_group(b"g2"));
    assert_eq!(s.free_effort(), 1 + 2);
}

#[test]
fn sizes_and_names() {
    let s = numbered(200, 100);
    assert_eq!(s.encoding(), "stream");
    assert!(s.heap_size() > 200 * 5, "{}", s.heap_size());
    assert_eq!(s.free_effort(), 2);
}

#[test]
fn node_index_keeps_order_and_little_room() {
    let entry = std::mem::size_of::<(StreamId, Node)>();
    let node = |ms| (id(ms, 0), Node::new(id(ms, 0), &[b"f", b"v"], 0));
    let mut ix = index::NodeIndex::default();
    for ms in 1..=1000 {
        let (k, n) = node(ms * 2);
        ix.insert(k, n);
        // Grown by a quarter (at least one) within the size class.
        assert!(ix.heap_size() <= tern_table::size_class((ix.len() + ix.len() / 4 + 1) * entry), "{} for {}", ix.heap_size(), ix.len());
    }
    let (k, n) = node(3);
    ix.insert(k, n);
    assert_eq!(ix.keys().take(3).collect::<Vec<_>>(), [id(2, 0), id(3, 0), id(4, 0)]);
    assert_eq!(ix.next_after(id(3, 0)).map(|(k, _)| k), Some(id(4, 0)));
    assert_eq!(ix.holder_mut(id(5, 7)).map(|(k, _)| k), Some(id(4, 0)));
    assert!(ix.holder_mut(id(1, 0)).is_none());
    assert_eq!(ix.onward(id(1, 0)).next().map(|(k, _)| k), Some(id(2, 0)));
    assert_eq!(ix.up_to(id(5, 0)).next_back().map(|(k, _)| k), Some(id(4, 0)));
    // Trimmed from the front, it gives room back: never under half used.
    for ms in 1..=1000 {
        assert!(ix.remove(id(ms * 2, 0)).is_some());
        assert!(ix.heap_size() <= tern_table::size_class((2 * ix.len() + 1) * entry), "{} for {}", ix.heap_size(), ix.len());
    }
    assert!(ix.remove(id(3, 0)).is_some() && ix.remove(id(3, 0)).is_none());
    assert_eq!((ix.len(), ix.heap_size()), (0, 0));
}

// Property tests: random operations against simple models.

#[derive(Clone, Debug)]
enum Op {
    Add { gap_ms: u64, seq: u64, fields: Vec<(u8, u8)> },
    Del(usize),
    DelMissing(u64),
    Trim { max: Option<u64>, at: usize, approx: bool, limit: u64, refs: u8 },
    Range { a: usize, b: usize, rev: bool },
    SetLast(u64),
    /// XREADGROUP of up to n new entries by the group's one consumer.
    Read(u8),
    Ack(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u64..3, 0u64..3, proptest::collection::vec((0u8..4, 0u8..200), 1..4)).prop_map(|(gap_ms, seq, fields)| Op::Add { gap_ms, seq, fields }),
        3 => any::<usize>().prop_map(Op::Del),
        1 => any::<u64>().prop_map(Op::DelMissing),
        2 => (proptest::option::of(0u64..20), any::<usize>(), any::<bool>(), prop_oneof![Just(0u64), 1u64..8], 0u8..3)
            .prop_map(|(max, at, approx, limit, refs)| Op::Trim { max, at, approx, limit, refs }),
        2 => (any::<usize>(), any::<usize>(), any::<bool>()).prop_map(|(a, b, rev)| Op::Range { a, b, rev }),
        1 => (0u64..3).prop_map(Op::SetLast),
        2 => (1u8..4).prop_map(Op::Read),
        2 => any::<usize>().prop_map(Op::Ack),
    ]
}

fn field_name(k: u8) -> Vec<u8> {
    [&b"a"[..], b"bb", b"17", b"-3"][usize::from(k)].to_vec()
}

fn value(v: u8) -> Vec<u8> {
    match v % 4 {
        0 => v.to_string().into_bytes(),
        1 => vec![b'x'; usize::from(v) / 2],
        2 => format!("-{v}").into_bytes(),
        _ => vec![v; 1 + usize::from(v) % 5],
    }
}

/// The model's ID at `i` (modulo its size), or an ID between or around.
fn pick(model: &BTreeMap<StreamId, Pairs>, i: usize) -> StreamId {
    let keys: Vec<StreamId> = model.keys().copied().collect();
    if keys.is_empty() || i.is_multiple_of(5) {
        return id((i / 5 % 40) as u64, (i / 200 % 3) as u64);
    }
    keys[i % keys.len()]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]
    #[test]
    fn stream_matches_a_model(
        ops in proptest::collection::vec(op(), 1..80),
        entries_max in prop_oneof![Just(0usize), 1usize..5],
        bytes_max in prop_oneof![Just(0usize), 20usize..200],
        grouped in any::<bool>(),
    ) {
        let lim = StreamLimits { node_max_bytes: bytes_max, node_max_entries: entries_max };
        let mut s = Stream::new();
        let mut model: BTreeMap<StreamId, Pairs> = BTreeMap::new();
        let (mut last, mut max_deleted, mut added) = (StreamId::MIN, StreamId::MIN, 0u64);
        // The group's model: its last ID and its PEL.
        let (mut g_last, mut pel) = (StreamId::MIN, BTreeSet::new());
        if grouped {
            s.create_group(b"g", StreamId::MIN, 0);
            s.group_mut(b"g").unwrap().create_consumer(b"c", 0);
        }
        for op in ops {
            match op {
                Op::Add { gap_ms, seq, fields } => {
                    let next = if gap_ms == 0 { last.incr().unwrap() } else { id(last.ms + gap_ms, seq) };
                    let pairs: Pairs = fields.iter().map(|(k, v)| (field_name(*k), value(*v))).collect();
                    let flat: Vec<&[u8]> = pairs.iter().flat_map(|(k, v)| [&k[..], &v[..]]).collect();
                    s.append(next, &flat, lim);
                    model.insert(next, pairs);
                    last = next;
                    added += 1;
                }
                Op::Del(i) => {
                    let at = pick(&model, i);
                    let had = model.remove(&at).is_some();
                    prop_assert_eq!(s.delete(at), had);
                    if had {
                        max_deleted = max_deleted.max(at);
                    }
                }
                Op::DelMissing(ms) => {
                    let at = id(ms, u64::MAX);
                    prop_assert_eq!(s.delete(at), model.remove(&at).is_some());
                }
                Op::Trim { max, at, approx, limit, refs } => {
                    let to = match max {
                        Some(n) => TrimTo::MaxLen(n),
                        None => TrimTo::MinId(pick(&model, at)),
                    };
                    let refs = [RefPolicy::KeepRef, RefPolicy::DelRef, RefPolicy::Acked][usize::from(refs)];
                    let exact: Vec<StreamId> = match to {
                        TrimTo::MaxLen(n) => model.keys().take(model.len().saturating_sub(n as usize)).copied().collect(),
                        TrimTo::MinId(min) => model.range(..min).map(|(k, _)| *k).collect(),
                    };
                    let limit = if approx { limit } else { 0 };
                    let n = s.trim(to, approx, limit, refs);
                    let left: BTreeSet<StreamId> = entries(&s, StreamId::MIN, StreamId::MAX, false).into_iter().map(|e| e.0).collect();
                    let gone: Vec<StreamId> = model.keys().filter(|k| !left.contains(k)).copied().collect();
                    prop_assert_eq!(n, gone.len() as u64);
                    prop_assert!(limit == 0 || n <= limit);
                    if refs == RefPolicy::Acked && grouped {
                        // What goes is needed by no group: below MINID
                        // (all of that, exactly), or any entry while
                        // MAXLEN is not reached (entries skipped make
                        // room for later ones to go).
                        let needed = |k: &StreamId| *k > g_last || pel.contains(k);
                        let free: Vec<StreamId> = match to {
                            TrimTo::MinId(_) => exact.iter().filter(|k| !needed(k)).copied().collect(),
                            TrimTo::MaxLen(n) => {
                                prop_assert!(left.len() as u64 >= n.min(model.len() as u64));
                                model.keys().filter(|k| !needed(k)).copied().collect()
                            }
                        };
                        prop_assert!(gone.iter().all(|k| free.contains(k)));
                        if !approx && matches!(to, TrimTo::MinId(_)) {
                            prop_assert_eq!(&gone, &free);
                        }
                    } else if approx {
                        prop_assert_eq!(&gone[..], &exact[..gone.len()]);
                    } else {
                        prop_assert_eq!(&gone, &exact);
                    }
                    for k in &gone {
                        model.remove(k);
                        if refs == RefPolicy::DelRef {
                            pel.remove(k);
                        }
                    }
                }
                Op::Read(n) => {
                    let new: Vec<StreamId> = model.range((Bound::Excluded(g_last), Bound::Unbounded)).map(|(k, _)| *k).take(usize::from(n)).collect();
                    if grouped {
                        for i in new {
                            prop_assert!(s.advance_group(b"g", i));
                            prop_assert!(s.group_mut(b"g").unwrap().deliver(i, b"c", 1));
                            g_last = i;
                            pel.insert(i);
                        }
                    }
                }
                Op::Ack(i) => {
                    let at = pick(&model, i);
                    if grouped {
                        prop_assert_eq!(s.group_mut(b"g").unwrap().ack(at), pel.remove(&at));
                    }
                }
                Op::Range { a, b, rev } => {
                    let (lo, hi) = (pick(&model, a), pick(&model, b));
                    let want: Vec<(StreamId, Pairs)> = if lo <= hi {
                        let v = model.range(lo..=hi).map(|(k, v)| (*k, v.clone()));
                        if rev { v.rev().collect() } else { v.collect() }
                    } else {
                        Vec::new()
                    };
                    prop_assert_eq!(entries(&s, lo, hi, rev), want);
                }
                Op::SetLast(step) => {
                    last = id(last.ms + step, last.seq);
                    s.set_last_id(last);
                }
            }
            prop_assert_eq!(s.len(), model.len() as u64);
            prop_assert_eq!(s.first_id(), model.keys().next().copied().unwrap_or_default());
            prop_assert_eq!((s.last_id(), s.max_deleted_id(), s.entries_added()), (last, max_deleted, added));
            if let Some(g) = s.group(b"g") {
                prop_assert_eq!(g.last_id, g_last);
                prop_assert_eq!(g.pending_range(StreamId::MIN, StreamId::MAX).map(|(i, _)| i).collect::<BTreeSet<_>>(), pel.clone());
            }
            check_invariants(&s);
        }
        prop_assert_eq!(entries(&s, StreamId::MIN, StreamId::MAX, false), model.into_iter().collect::<Vec<_>>());
    }
}

#[derive(Clone, Debug)]
enum GroupOp {
    Deliver(u64, u8),
    Claim(u64, u8, u8),
    Ack(u64),
    Create(u8),
    DeleteConsumer(u8),
}

fn group_op() -> impl Strategy<Value = GroupOp> {
    prop_oneof![
        (0u64..12, 0u8..3).prop_map(|(i, c)| GroupOp::Deliver(i, c)),
        (0u64..12, 0u8..3, 0u8..3).prop_map(|(i, c, k)| GroupOp::Claim(i, c, k)),
        (0u64..12).prop_map(GroupOp::Ack),
        (0u8..3).prop_map(GroupOp::Create),
        (0u8..3).prop_map(GroupOp::DeleteConsumer),
    ]
}

/// A model PEL: ID → (consumer, delivery time, count).
type ModelPel = BTreeMap<u64, (u8, u64, u64)>;

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]
    #[test]
    fn group_matches_a_model(ops in proptest::collection::vec(group_op(), 1..60)) {
        let name = |c: u8| vec![b'c', b'0' + c];
        let mut s = Stream::new();
        s.create_group(b"g", StreamId::MIN, -1);
        let mut pel = ModelPel::new();
        let mut consumers: BTreeSet<u8> = BTreeSet::new();
        for (now, op) in ops.into_iter().enumerate() {
            let now = now as u64 + 1;
            let g = s.group_mut(b"g").unwrap();
            match op {
                GroupOp::Create(c) => prop_assert_eq!(g.create_consumer(&name(c), now), consumers.insert(c)),
                GroupOp::DeleteConsumer(c) => {
                    let had = consumers.remove(&c);
                    let mine = pel.iter().filter(|(_, v)| v.0 == c).count() as u64;
                    pel.retain(|_, v| v.0 != c);
                    prop_assert_eq!(g.delete_consumer(&name(c)), had.then_some(mine));
                }
                GroupOp::Deliver(i, c) => {
                    prop_assert_eq!(g.deliver(id(i, 0), &name(c), now), consumers.contains(&c));
                    if consumers.contains(&c) {
                        pel.insert(i, (c, now, 1));
                    }
                }
                GroupOp::Claim(i, c, k) => {
                    let count = [ClaimCount::Incr, ClaimCount::Keep, ClaimCount::Set(42)][usize::from(k)];
                    prop_assert_eq!(g.claim(id(i, 0), &name(c), now, now / 2, count), consumers.contains(&c));
                    if consumers.contains(&c) {
                        let old = pel.get(&i).map_or(1, |v| v.2);
                        let n = match count { ClaimCount::Incr => old + 1, ClaimCount::Keep => old, ClaimCount::Set(n) => n };
                        pel.insert(i, (c, now / 2, n));
                    }
                }
                GroupOp::Ack(i) => prop_assert_eq!(g.ack(id(i, 0)), pel.remove(&i).is_some()),
            }
            let g = s.group(b"g").unwrap();
            let got: ModelPel = g.pending_range(StreamId::MIN, StreamId::MAX)
                .map(|(i, n)| (i.ms, (n.consumer()[1] - b'0', n.delivery_time, n.delivery_count)))
                .collect();
            prop_assert_eq!(&got, &pel);
            prop_assert_eq!(g.consumers().map(|(n, _)| n[1] - b'0').collect::<BTreeSet<_>>(), consumers.clone());
            // The kept count of the names' bytes follows the consumers.
            let names: usize = g.consumers().map(|(n, _)| tern_table::size_class(n.len() + 16)).sum();
            let maps = map_heap::<StreamId, Nack>(pel.len()) + map_heap::<std::sync::Arc<[u8]>, Consumer>(consumers.len()) + map_heap::<StreamId, ()>(pel.len());
            prop_assert_eq!(g.heap_size(), names + maps);
            for (n, c) in g.consumers() {
                let want: Vec<u64> = pel.iter().filter(|(_, v)| v.0 == n[1] - b'0').map(|(i, _)| *i).collect();
                prop_assert_eq!(c.pending_from(StreamId::MIN).map(|i| i.ms).collect::<Vec<_>>(), want);
                prop_assert_eq!(c.pending_len(), c.pending_from(StreamId::MIN).count());
            }
        }
    }
}
