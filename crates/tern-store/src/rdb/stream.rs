//! Streams in RDB: the nodes as they are, the counters, then the consumer
//! groups (Redis's `RDB_TYPE_STREAM_LISTPACKS`, `_2` and `_3`).
//!
//! ```text
//!  nodes n | (master ID: 16-byte big-endian string | listpack: string) × n
//!  length | last ID ms | seq | [first ID ms | seq | max deleted ID ms | seq | entries added]     (_2, _3)
//!  groups n | (name | last ID ms | seq | [entries read] (_2, _3)
//!             | PEL n | (ID: 16 raw bytes | delivery time: u64 LE | delivery count) × n
//!             | consumers n | (name | seen time: u64 LE | [active time: i64 LE] (_3)
//!                             | PEL n | ID: 16 raw bytes × n) × n) × n
//! ```
//!
//! Numbers without a width are RDB lengths; `entries read` is the group's
//! signed counter as a length (-1 takes eight bytes, as Redis writes it).
//! A load checks each node deeply (`crate::stream`'s `Loader`), every
//! consumer's PEL ID against its group's PEL, and that every ID of a
//! group's PEL has exactly one consumer.

use std::collections::BTreeMap;
use std::io::Read;

use crate::stream::{Loader, Stream, StreamId};
use crate::value::Value;

use super::decode::Src;
use super::encode::{put_len, put_string};
use super::{types, RdbError, Style, RDB_VERSION_MIN, RDB_VERSION_SET_LISTPACK};

/// `s` as STREAM_LISTPACKS_3, or in the oldest style as STREAM_LISTPACKS_2
/// (Redis 7.0's) when that loses nothing: when every consumer's active
/// time is its seen time, which is what a 7.0 load assumes. Returns the
/// lowest RDB version that reads it.
pub(super) fn put_stream(out: &mut Vec<u8>, s: &Stream, style: Style, compress: bool) -> u16 {
    let lossless_2 = s.groups().all(|(_, g)| g.consumers().all(|(_, c)| c.active_time == c.seen_time as i64));
    let t = if style == Style::Oldest && lossless_2 { types::STREAM_LISTPACKS_2 } else { types::STREAM_LISTPACKS_3 };
    out.push(t);
    put_len(out, s.node_count() as u64);
    for (key, lp) in s.nodes() {
        put_string(out, &key.to_be_bytes(), compress);
        put_string(out, lp, compress);
    }
    put_len(out, s.len());
    for id in [s.last_id(), s.first_id(), s.max_deleted_id()] {
        put_id(out, id);
    }
    put_len(out, s.entries_added());
    put_len(out, s.group_count() as u64);
    for (name, g) in s.groups() {
        put_string(out, name, compress);
        put_id(out, g.last_id);
        put_len(out, g.entries_read as u64);
        put_len(out, g.pending_len() as u64);
        for (id, nack) in g.pending_range(StreamId::MIN, StreamId::MAX) {
            out.extend_from_slice(&id.to_be_bytes());
            out.extend_from_slice(&nack.delivery_time.to_le_bytes());
            put_len(out, nack.delivery_count);
        }
        put_len(out, g.consumer_count() as u64);
        for (name, c) in g.consumers() {
            put_string(out, name, compress);
            out.extend_from_slice(&c.seen_time.to_le_bytes());
            if t == types::STREAM_LISTPACKS_3 {
                out.extend_from_slice(&c.active_time.to_le_bytes());
            }
            put_len(out, c.pending_len() as u64);
            for id in c.pending_from(StreamId::MIN) {
                out.extend_from_slice(&id.to_be_bytes());
            }
        }
    }
    if t == types::STREAM_LISTPACKS_3 {
        RDB_VERSION_SET_LISTPACK
    } else {
        RDB_VERSION_MIN
    }
}

fn put_id(out: &mut Vec<u8>, id: StreamId) {
    put_len(out, id.ms);
    put_len(out, id.seq);
}

fn read_id<R: Read>(src: &mut Src<R>) -> Result<StreamId, RdbError> {
    Ok(StreamId::new(src.len()?, src.len()?))
}

fn raw_id<R: Read>(src: &mut Src<R>) -> Result<StreamId, RdbError> {
    let mut b = [0u8; 16];
    src.exact(&mut b)?;
    Ok(StreamId::from_be_bytes(b))
}

/// The stream of RDB type `t` (one of the three) that follows in `src`.
pub(super) fn read_stream<R: Read>(src: &mut Src<R>, t: u8) -> Result<Value, RdbError> {
    let v1 = t == types::STREAM_LISTPACKS;
    let mut l = Loader::new();
    for _ in 0..src.len()? {
        let key = src.string()?;
        let key: [u8; 16] = key.try_into().map_err(|_| RdbError::Corrupt("stream node key is not a stream ID"))?;
        l.node(StreamId::from_be_bytes(key), src.string()?)?;
    }
    let length = src.len()?;
    let last_id = read_id(src)?;
    let (max_deleted, added) = if v1 {
        (StreamId::MIN, None)
    } else {
        // The first ID is the first live entry's, found from the nodes.
        read_id(src)?;
        (read_id(src)?, Some(src.len()?))
    };
    l.counters(length, last_id, max_deleted, added).map_err(RdbError::Corrupt)?;
    for _ in 0..src.len()? {
        let name = src.string()?;
        let last = read_id(src)?;
        // Redis 7.0 estimates a group's counter from a 6.2 file.
        let read = if v1 { l.stream().estimate_distance(last).map_or(-1, |n| n as i64) } else { src.len()? as i64 };
        if !l.group(&name, last, read) {
            return Err(RdbError::Corrupt("duplicate consumer group"));
        }
        let mut pel = BTreeMap::new();
        for _ in 0..src.len()? {
            let id = raw_id(src)?;
            let nack = (src.u64_le()?, src.len()?);
            if pel.insert(id, nack).is_some() {
                return Err(RdbError::Corrupt("duplicate stream PEL entry"));
            }
        }
        let g = l.group_mut(&name);
        for _ in 0..src.len()? {
            let consumer = src.string()?;
            let seen = src.u64_le()?;
            let active = if t == types::STREAM_LISTPACKS_3 { src.u64_le()? as i64 } else { seen as i64 };
            if !g.load_consumer(&consumer, seen, active) {
                return Err(RdbError::Corrupt("duplicate stream consumer"));
            }
            for _ in 0..src.len()? {
                let id = raw_id(src)?;
                let (time, count) = pel.remove(&id).ok_or(RdbError::Corrupt("consumer PEL entry not in its group's PEL"))?;
                g.load_nack(id, &consumer, time, count);
            }
        }
        if !pel.is_empty() {
            return Err(RdbError::Corrupt("stream PEL entry without a consumer"));
        }
    }
    Ok(Value::Stream(Box::new(l.finish())))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::value::ValueRef;
    use crate::rdb::{dump, put_footer, restore, Limits, DUMP_RDB_VERSION};
    use crate::stream::tests::check_invariants;
    use crate::{ClaimCount, StreamLimits};

    fn id(ms: u64, seq: u64) -> StreamId {
        StreamId::new(ms, seq)
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn stream(v: Value) -> Stream {
        match v {
            Value::Stream(s) => *s,
            other => panic!("not a stream: {other:?}"),
        }
    }

    fn ids(s: &Stream) -> Vec<StreamId> {
        let mut v = Vec::new();
        s.range(StreamId::MIN, StreamId::MAX, false, |i, _| {
            v.push(i);
            true
        });
        v
    }

    fn body(p: &[u8]) -> &[u8] {
        &p[..p.len() - 10]
    }

    /// valkey 8.1's DUMP (RDB 11, STREAM_LISTPACKS_3) after, with
    /// `stream-node-max-entries 3`: XADD s 1-1 a 1 b hello, 1-2 a 2 b x,
    /// 2-0 c 3, 3-0 a 100000 b yy, 4-0 a -5 b zz, 5-0 name a×52, 6-0 f v;
    /// XDEL s 2-0; XGROUP CREATE s g1 0, g2 $; XREADGROUP g1 alice COUNT 2,
    /// g1 bob COUNT 1; XGROUP CREATECONSUMER s g1 carol; XACK s g1 1-1;
    /// XCLAIM s g1 bob 0 1-2 TIME 1700000000000 RETRYCOUNT 5. Its second
    /// node is LZF-compressed.
    const VALKEY_81: &str = "150310000000000000000100000000000000014043430000001900020101010201816102816202000102010001000101018568656c6c6f0605010201000101010201817802050101010101dfff02010181630203010601ff1000000000000000030000000000000000c34048407b117b000000190003010001020181610281620240090000200109f2a08601048279790305201a0001201005dffb02827a7a200e8021090101846e616d6505b461e02a0003350601ff10000000000000000600000000000000001d1d0000000a0001010001010181660200010201000100018176020401ff060600010102000702026731030081ffffffffffffffff02000000000000000100000000000000020068e5cf8b010000050000000000000003000000000000000013f64d4da2010000010305616c69636511f64d4da201000011f64d4da20100000003626f6218f64d4da201000018f64d4da2010000020000000000000001000000000000000200000000000000030000000000000000056361726f6c14f64d4da2010000ffffffffffffffff00026732060081ffffffffffffffff00000b0045f4c23c9a563442";

    #[test]
    fn valkey_81_dump_loads_and_dumps_back_byte_for_byte() {
        let p = unhex(VALKEY_81);
        let s = stream(restore(&p, &Limits::default()).unwrap());
        check_invariants(&s);
        assert_eq!(ids(&s), [id(1, 1), id(1, 2), id(3, 0), id(4, 0), id(5, 0), id(6, 0)]);
        assert_eq!((s.len(), s.node_count(), s.last_id(), s.max_deleted_id(), s.entries_added(), s.first_id()), (6, 3, id(6, 0), id(2, 0), 7, id(1, 1)));
        let mut fourth = Vec::new();
        s.range(id(4, 0), id(5, 0), false, |_, f| {
            fourth.extend(f.iter().map(|(k, v)| (k.into_owned(), v.into_owned())));
            true
        });
        let a52 = vec![b'a'; 52];
        let want: Vec<(Vec<u8>, Vec<u8>)> = vec![(b"a".to_vec(), b"-5".to_vec()), (b"b".to_vec(), b"zz".to_vec()), (b"name".to_vec(), a52)];
        assert_eq!(fourth, want);
        let g1 = s.group(b"g1").unwrap();
        assert_eq!((g1.last_id, g1.entries_read, s.lag(g1)), (id(3, 0), -1, None));
        let pel: Vec<_> = g1.pending_range(StreamId::MIN, StreamId::MAX).map(|(i, n)| (i, n.consumer().to_vec(), n.delivery_time, n.delivery_count)).collect();
        assert_eq!(pel, [(id(1, 2), b"bob".to_vec(), 1_700_000_000_000, 5), (id(3, 0), b"bob".to_vec(), 1_796_593_284_627, 1)]);
        let consumers: Vec<_> = g1.consumers().map(|(n, c)| (n.to_vec(), c.seen_time, c.active_time, c.pending_len())).collect();
        assert_eq!(
            consumers,
            [
                (b"alice".to_vec(), 1_796_593_284_625, 1_796_593_284_625, 0),
                (b"bob".to_vec(), 1_796_593_284_632, 1_796_593_284_632, 2),
                (b"carol".to_vec(), 1_796_593_284_628, -1, 0)
            ]
        );
        let g2 = s.group(b"g2").unwrap();
        assert_eq!((g2.last_id, g2.entries_read, s.lag(g2), g2.consumer_count()), (id(6, 0), -1, Some(0), 0));
        // Tern's DUMP is valkey's but for the footer's version.
        let ours = dump(ValueRef::Stream(&s), true);
        assert_eq!(body(&ours), body(&p));
        assert_eq!(ours[ours.len() - 10..ours.len() - 8], DUMP_RDB_VERSION.to_le_bytes());
    }

    /// Redis 7.0.15's DUMP (RDB 10, STREAM_LISTPACKS_2, no active times):
    /// XADD t 10-0 f v1 n 1, 10-1 f v2 n 2, 11-0 g w; XGROUP CREATE t grp 0;
    /// XREADGROUP grp c1 COUNT 2; XACK t grp 10-0; XDEL t 10-1 (left
    /// pending: a reference to a deleted entry).
    const REDIS_70: &str = "130110000000000000000a00000000000000004041410000001900020101010201816602816e0200010201000100018276310301010501030100010101827632030201050100010101000101018167028177020601ff020b000a000a010301036772700a010201000000000000000a000000000000000151194e4da2010000010102633151194e4da201000001000000000000000a00000000000000010a00f26ce9d54fe6e896";

    #[test]
    fn redis_70_dump_loads_with_active_times_from_seen_times() {
        let p = unhex(REDIS_70);
        let s = stream(restore(&p, &Limits::default()).unwrap());
        check_invariants(&s);
        assert_eq!(ids(&s), [id(10, 0), id(11, 0)]);
        assert_eq!((s.len(), s.last_id(), s.max_deleted_id(), s.entries_added(), s.first_id()), (2, id(11, 0), id(10, 1), 3, id(10, 0)));
        let g = s.group(b"grp").unwrap();
        assert_eq!((g.last_id, g.entries_read, s.lag(g)), (id(10, 1), 2, None));
        let n = g.nack(id(10, 1)).unwrap();
        assert_eq!((n.consumer(), n.delivery_count), (&b"c1"[..], 1));
        let c = g.consumer(b"c1").unwrap();
        assert_eq!(c.active_time, c.seen_time as i64);
        // Redis 8.4 writes it as STREAM_LISTPACKS_3; it reads back equal.
        let ours = dump(ValueRef::Stream(&s), true);
        assert_eq!(ours[0], types::STREAM_LISTPACKS_3);
        assert_eq!(stream(restore(&ours, &Limits::default()).unwrap()), s);
    }

    /// Redis 6.2's STREAM_LISTPACKS: no first ID, max deleted ID or entries
    /// added, no group counter nor active time; Redis derives them.
    #[test]
    fn redis_62_streams_get_their_counters_derived() {
        let mut s = Stream::new();
        for i in 1..=4 {
            s.append(id(i, 0), &[b"f", b"v"], StreamLimits::default());
        }
        s.delete(id(1, 0));
        s.create_group(b"g", id(2, 0), 0);
        s.group_mut(b"g").unwrap().create_consumer(b"c", 99);
        s.group_mut(b"g").unwrap().deliver(id(2, 0), b"c", 100);
        let mut p = vec![types::STREAM_LISTPACKS];
        put_len(&mut p, 1);
        for (k, lp) in s.nodes() {
            put_string(&mut p, &k.to_be_bytes(), false);
            put_string(&mut p, lp, false);
        }
        for n in [3, 4, 0, 1] {
            put_len(&mut p, n);
        }
        put_string(&mut p, b"g", false);
        for n in [2, 0, 1] {
            put_len(&mut p, n);
        }
        p.extend_from_slice(&id(2, 0).to_be_bytes());
        p.extend_from_slice(&100u64.to_le_bytes());
        put_len(&mut p, 1);
        put_len(&mut p, 1);
        put_string(&mut p, b"c", false);
        p.extend_from_slice(&99u64.to_le_bytes());
        put_len(&mut p, 1);
        p.extend_from_slice(&id(2, 0).to_be_bytes());
        put_footer(&mut p, 9);
        let t = stream(restore(&p, &Limits::default()).unwrap());
        check_invariants(&t);
        assert_eq!((t.len(), t.first_id(), t.max_deleted_id(), t.entries_added()), (3, id(2, 0), StreamId::MIN, 3));
        let g = t.group(b"g").unwrap();
        // 2-0 is the first entry and no tombstone is known: counted as 1.
        assert_eq!((g.entries_read, g.nack(id(2, 0)).map(|n| n.delivery_time)), (1, Some(100)));
        assert_eq!(g.consumer(b"c").map(|c| (c.seen_time, c.active_time)), Some((99, 99)));
    }

    /// A stream's parts, to write whatever a test wants as a payload.
    struct Parts {
        nodes: Vec<(Vec<u8>, Vec<u8>)>,
        counters: Vec<u64>,
        groups: Vec<u8>,
    }

    impl Parts {
        fn of(s: &Stream) -> Parts {
            let d = dump(ValueRef::Stream(s), false);
            let nodes = s.nodes().map(|(k, lp)| (k.to_be_bytes().to_vec(), lp.to_vec())).collect();
            let (first, last, del) = (s.first_id(), s.last_id(), s.max_deleted_id());
            let counters = vec![s.len(), last.ms, last.seq, first.ms, first.seq, del.ms, del.seq, s.entries_added()];
            // The groups are what follows the counters: find them by
            // writing the same stream without any.
            let mut bare = s.clone();
            let names: Vec<Vec<u8>> = bare.groups().map(|(n, _)| n.to_vec()).collect();
            for n in names {
                bare.destroy_group(&n);
            }
            let b = dump(ValueRef::Stream(&bare), false);
            let groups = d[b.len() - 11..d.len() - 10].to_vec();
            Parts { nodes, counters, groups }
        }

        fn payload(&self) -> Vec<u8> {
            let mut p = vec![types::STREAM_LISTPACKS_3];
            put_len(&mut p, self.nodes.len() as u64);
            for (k, lp) in &self.nodes {
                put_string(&mut p, k, false);
                put_string(&mut p, lp, false);
            }
            for n in &self.counters {
                put_len(&mut p, *n);
            }
            p.extend_from_slice(&self.groups);
            put_footer(&mut p, DUMP_RDB_VERSION);
            p
        }
    }

    fn sample() -> Stream {
        let lim = StreamLimits { node_max_bytes: 0, node_max_entries: 2 };
        let mut s = Stream::new();
        for i in 1..=5 {
            s.append(id(i, 0), &[b"f", b"v"], lim);
        }
        s.create_group(b"g", id(3, 0), 3);
        let g = s.group_mut(b"g").unwrap();
        g.create_consumer(b"c", 1);
        g.create_consumer(b"d", 1);
        g.deliver(id(2, 0), b"c", 5);
        g.claim(id(3, 0), b"d", 6, 6, ClaimCount::Incr);
        s
    }

    fn refused(p: &Parts) -> String {
        match restore(&p.payload(), &Limits::default()) {
            Err(RdbError::Corrupt(w)) => w.to_string(),
            other => panic!("accepted or refused otherwise: {other:?}"),
        }
    }

    #[test]
    fn what_a_load_refuses() {
        let s = sample();
        let good = Parts::of(&s);
        assert_eq!(stream(restore(&good.payload(), &Limits::default()).unwrap()), s);
        let mut p = Parts::of(&s);
        p.nodes[0].0.pop();
        assert_eq!(refused(&p), "stream node key is not a stream ID");
        let mut p = Parts::of(&s);
        p.nodes.swap(0, 1);
        assert_eq!(refused(&p), "stream nodes out of order");
        // IDs are deltas from the key: another key moves them all.
        let mut p = Parts::of(&s);
        p.nodes[1].0 = p.nodes[0].0.clone();
        assert_eq!(refused(&p), "stream nodes out of order");
        let mut p = Parts::of(&s);
        let lp = &mut p.nodes[0].1;
        let mut ms_at = crate::listpack::first(lp);
        for _ in 0..6 {
            ms_at = crate::listpack::next(lp, ms_at.unwrap());
        }
        crate::listpack::replace_int(lp, ms_at.unwrap(), 1);
        assert_eq!(refused(&p), "stream node key differs from its first entry");
        let mut p = Parts::of(&s);
        p.nodes[0].1 = crate::listpack::LpBuilder::new().finish();
        assert_eq!(refused(&p), "empty listpack inside stream");
        let mut p = Parts::of(&s);
        p.counters[0] = 4;
        assert_eq!(refused(&p), "stream length differs from its entries");
        let mut p = Parts::of(&s);
        p.counters[1] = 4;
        assert_eq!(refused(&p), "stream last ID below its last entry");
        let mut p = Parts::of(&s);
        p.counters[7] = 4;
        assert_eq!(refused(&p), "stream entries added below its length");
        // A consumer's PEL ID that its group's PEL lacks, and the reverse.
        let mut t = s.clone();
        t.group_mut(b"g").unwrap().ack(id(2, 0));
        let mut p = Parts::of(&t);
        let mut q = Parts::of(&s);
        q.groups = p.groups.clone();
        let at = p.groups.windows(2).position(|w| w == b"\x01c").unwrap();
        // Consumer c: name, seen time, active time, PEL count 0 -> 1 + ID.
        let count_at = at + 2 + 16;
        p.groups[count_at] = 1;
        p.groups.splice(count_at + 1..count_at + 1, id(2, 0).to_be_bytes());
        assert_eq!(refused(&p), "consumer PEL entry not in its group's PEL");
        let mut r = Parts::of(&s);
        let at = r.groups.windows(2).position(|w| w == b"\x01c").unwrap();
        r.groups[at + 2 + 16] = 0;
        r.groups.drain(at + 2 + 17..at + 2 + 17 + 16);
        assert_eq!(refused(&r), "stream PEL entry without a consumer");
        // A bad entry inside a node: its lp-count.
        let mut p = Parts::of(&s);
        let lp = &mut p.nodes[0].1;
        let last = crate::listpack::last(lp).unwrap();
        crate::listpack::replace_int(lp, last, 9);
        assert_eq!(refused(&p), "stream entry with a wrong lp-count");
    }

    /// A node of tombstones only, as Redis 8.4's exact trim can leave
    /// one, is dropped as it loads.
    #[test]
    fn a_node_of_tombstones_only_is_dropped() {
        let s = sample();
        let mut p = Parts::of(&s);
        // Node 1-0 (1-0, 2-0) with both marked deleted.
        let mut dead = Stream::new();
        let lim = StreamLimits { node_max_bytes: 0, node_max_entries: 2 };
        dead.append(id(1, 0), &[b"f", b"v"], lim);
        dead.append(id(2, 0), &[b"f", b"v"], lim);
        dead.append(id(3, 0), &[b"f", b"v"], lim);
        dead.delete(id(1, 0));
        let (_, lp) = dead.nodes().next().unwrap();
        let mut lp = lp.to_vec();
        let e2 = crate::listpack::collect(&lp).unwrap().len() - 4 - 1;
        let mut at = crate::listpack::first(&lp);
        for _ in 0..e2 {
            at = crate::listpack::next(&lp, at.unwrap());
        }
        crate::listpack::replace_int(&mut lp, at.unwrap(), 3);
        crate::listpack::replace_int(&mut lp, 6, 0);
        let del_at = crate::listpack::next(&lp, 6).unwrap();
        crate::listpack::replace_int(&mut lp, del_at, 2);
        p.nodes[0].1 = lp;
        p.counters[0] = 3;
        let t = stream(restore(&p.payload(), &Limits::default()).unwrap());
        check_invariants(&t);
        assert_eq!((t.node_count(), ids(&t)), (2, vec![id(3, 0), id(4, 0), id(5, 0)]));
    }

    /// A listpack of elements given encoded (each without its
    /// back-length, all under 128 bytes).
    fn raw_lp(elems: &[&[u8]]) -> Vec<u8> {
        let mut lp = vec![0; 6];
        for e in elems {
            lp.extend_from_slice(e);
            lp.push(e.len() as u8);
        }
        lp.push(0xff);
        let total = lp.len() as u32;
        lp[..4].copy_from_slice(&total.to_le_bytes());
        lp[4..6].copy_from_slice(&(elems.len() as u16).to_le_bytes());
        lp
    }

    /// Flags in a wider integer encoding than Redis's (a crafted payload
    /// may have them so): marking an entry deleted moves what follows.
    #[test]
    fn wide_flags_are_marked_where_they_lie() {
        let flags: &[u8] = b"\xf1\x02\x00";
        let lp = raw_lp(&[
            b"\x03", b"\x00", b"\x01", b"\x81f", b"\x00", // master entry
            flags, b"\x00", b"\x00", b"\x81u", b"\x04",
            flags, b"\x00", b"\x01", b"\x81v", b"\x04",
            flags, b"\x00", b"\x02", b"\x81w", b"\x04",
        ]);
        let p = Parts { nodes: vec![(id(1, 0).to_be_bytes().to_vec(), lp)], counters: vec![3, 1, 2, 1, 0, 0, 0, 3], groups: vec![0] };
        let loaded = stream(restore(&p.payload(), &Limits::default()).unwrap());
        assert_eq!(ids(&loaded), [id(1, 0), id(1, 1), id(1, 2)]);
        let mut s = loaded.clone();
        assert_eq!(s.trim(crate::TrimTo::MaxLen(1), false, 0, crate::RefPolicy::KeepRef), 2);
        check_invariants(&s);
        let mut left = Vec::new();
        s.range(StreamId::MIN, StreamId::MAX, false, |i, f| {
            left.extend(f.iter().map(|(k, v)| (i, k.into_owned(), v.into_owned())));
            true
        });
        assert_eq!(left, [(id(1, 2), b"f".to_vec(), b"w".to_vec())]);
        let mut s = loaded;
        assert!(s.delete(id(1, 1)) && s.delete(id(1, 0)) && s.delete(id(1, 2)));
        assert_eq!((s.len(), s.node_count()), (0, 0));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, .. ProptestConfig::default() })]
        /// A payload changed anywhere, its checksum made right, is refused
        /// or loads into a stream that holds together.
        #[test]
        fn changed_payloads_never_panic(at in any::<usize>(), x in 1u8.., cut in any::<usize>(), real in any::<bool>()) {
            let p = if real { unhex(VALKEY_81) } else { dump(ValueRef::Stream(&sample()), false) };
            let mut b = body(&p).to_vec();
            let k = at % b.len();
            b[k] ^= x;
            let cut = cut % (b.len() + 1);
            for q in [b.clone(), b[..cut].to_vec()] {
                let mut q = q;
                put_footer(&mut q, DUMP_RDB_VERSION);
                if let Ok(v) = restore(&q, &Limits::default()) {
                    let s = stream(v);
                    check_invariants(&s);
                    let again = dump(ValueRef::Stream(&s), false);
                    prop_assert_eq!(stream(restore(&again, &Limits::default()).unwrap()), s);
                }
            }
        }
    }
}
