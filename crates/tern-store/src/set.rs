//! Set values: unordered collections of distinct byte strings.
//!
//! ```text
//!  Set ─ repr: Ints   Vec<i64>, sorted              (every member a canonical integer)
//!           or Pack   one Vec<u8>: [len tag] [len tag] ... | member member ...   (insertion order)
//!           or Table  tern-table items, one per member, no extra bytes
//! ```
//!
//! Redis's three encodings and its conversion rules (`t_set.c`): a set
//! starts as an `intset` when its first member is an integer and the SADD
//! adds no more than `set-max-intset-entries`, else as a `listpack` when it
//! adds no more than `set-max-listpack-entries`, else as a `hashtable`. An
//! intset that grows past its limit becomes a table; one that is given a
//! non-integer becomes a listpack if that stays within the listpack limits,
//! else a table. A listpack given one member too many or one too long
//! becomes a table. Nothing converts back, as in Redis. Keeping the same
//! rules keeps the same reply order as Redis for small sets (an intset
//! replies sorted, a listpack in insertion order), which is what clients
//! and the differential check see.
//!
//! Goals: Redis's encodings, conversions and small-set orders; SCAN-stable
//! cursors when large. Non-goals: intset's 16/32-bit widths (members are
//! kept as i64), converting back to a compact form.

use hashbrown::DefaultHashBuilder;
use tern_table::stage::{Reach, Stager};

use crate::hash::{Fields, MAX_PREFETCH_GROUP};

/// The conversion thresholds (`set-max-intset-entries`,
/// `set-max-listpack-entries`, `set-max-listpack-value`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetLimits {
    pub max_intset: usize,
    pub max_entries: usize,
    pub max_value: usize,
}

impl Default for SetLimits {
    fn default() -> Self {
        SetLimits { max_intset: 512, max_entries: 128, max_value: 64 }
    }
}

impl SetLimits {
    /// Redis caps the intset limit so an intset stays below 1 GiB-ish
    /// (`intsetMaxEntries`).
    fn intset_max(&self) -> usize {
        self.max_intset.min(1 << 30)
    }
}

/// A member as the set holds it: an intset keeps integers, not bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Member<'a> {
    Int(i64),
    Bytes(&'a [u8]),
}

impl Member<'_> {
    /// Calls `f` with the member's bytes (an integer's decimal digits).
    pub fn with_bytes<R>(self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            Member::Int(n) => f(itoa::Buffer::new().format(n).as_bytes()),
            Member::Bytes(b) => f(b),
        }
    }

    pub fn to_vec(self) -> Vec<u8> {
        self.with_bytes(<[u8]>::to_vec)
    }
}

/// A set value.
#[derive(Clone, Debug)]
pub struct Set {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    Ints(Vec<i64>),
    Pack(Pack),
    Table(Box<Big>),
}

// ---------------------------------------------------------------- pack --

/// A small set (`listpack`): for each member, in insertion order, its
/// length and a tag byte of its hash, then every member's bytes.
///
/// ```text
///  buf: [len tag] [len tag] ... [len tag] | member bytes | member bytes | ...
///        1   1                              (a member of 255 bytes or more: len 255,
///                                            and its u32 length before its bytes)
/// ```
///
/// A lookup reads the (length, tag) pairs in order, summing lengths to
/// know where each member starts, and compares bytes only where both
/// match: each step is an independent load, where a walk of
/// length-prefixed entries waits for each length to find the next. The
/// tag costs one byte a member (the length replaces the varint before
/// each member).
#[derive(Clone, Debug, Default)]
struct Pack {
    buf: Vec<u8>,
    len: usize,
}

/// A member's length byte: its length, or 255 for a long one.
const LONG: u8 = 255;

fn len_byte(m: &[u8]) -> u8 {
    u8::try_from(m.len()).ok().filter(|&l| l < LONG).unwrap_or(LONG)
}

/// The tag kept beside a member: the top byte of its hash.
fn tag(m: &[u8]) -> u8 {
    (member_hash(m) >> 56) as u8
}

/// Members of a pack, in order.
struct PackIter<'a> {
    meta: &'a [u8],
    data: &'a [u8],
    pos: usize,
}

/// Where the bytes of the member whose entry starts at `at` in the data
/// begin, and how many there are, given its length byte `l`.
#[inline]
fn member_at(data: &[u8], at: usize, l: u8) -> (usize, usize) {
    if l < LONG {
        (at, usize::from(l))
    } else {
        let mut w = [0u8; 4];
        w.copy_from_slice(&data[at..at + 4]);
        (at + 4, u32::from_le_bytes(w) as usize)
    }
}

impl<'a> Iterator for PackIter<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let (&l, rest) = self.meta.split_first()?;
        self.meta = &rest[1..];
        let (start, n) = member_at(self.data, self.pos, l);
        self.pos = start + n;
        Some(&self.data[start..start + n])
    }
}

impl Pack {
    fn iter(&self) -> PackIter<'_> {
        let (meta, data) = self.buf.split_at(2 * self.len);
        PackIter { meta, data, pos: 0 }
    }

    /// Where member `m` (whose tag is `t`) is: (its index, where its entry
    /// starts in the data, the entry's bytes).
    fn find(&self, m: &[u8], t: u8) -> Option<(usize, usize, usize)> {
        let (meta, data) = self.buf.split_at(2 * self.len);
        let want = len_byte(m);
        let mut pos = 0;
        for (i, pair) in meta.chunks_exact(2).enumerate() {
            let l = pair[0];
            let (start, n) = member_at(data, pos, l);
            // A hit (or a rare tag collision): compare the bytes.
            if l == want && pair[1] == t && tern_table::key_eq(&data[start..start + n], m) {
                return Some((i, pos, start + n - pos));
            }
            pos = start + n;
        }
        None
    }

    fn push(&mut self, m: &[u8], t: u8) {
        let l = len_byte(m);
        let meta_end = 2 * self.len;
        let extra = 2 + m.len() + if l == LONG { 4 } else { 0 };
        self.buf.reserve(extra);
        self.buf.splice(meta_end..meta_end, [l, t]);
        if l == LONG {
            self.buf.extend_from_slice(&(m.len() as u32).to_le_bytes());
        }
        self.buf.extend_from_slice(m);
        self.len += 1;
    }

    /// Removes member `i`, whose entry takes `size` bytes from `at` in the
    /// data (as [`Pack::find`] says).
    fn remove_at(&mut self, (i, at, size): (usize, usize, usize)) {
        let data = 2 * self.len;
        self.buf.drain(data + at..data + at + size);
        self.buf.drain(2 * i..2 * i + 2);
        self.len -= 1;
    }
}

// --------------------------------------------------------------- table --

/// A large set: one tern-table item per member (the member is the item's
/// key), so lookups can be prefetched and growth rehashes incrementally.
#[derive(Debug)]
struct Big {
    table: tern_table::Table<(), DefaultHashBuilder>,
}

impl Default for Big {
    fn default() -> Self {
        Big { table: tern_table::Table::with_hasher(*crate::hash::field_hasher()) }
    }
}

impl Clone for Big {
    fn clone(&self) -> Self {
        let mut big = Big::default();
        for e in self.table.iter() {
            big.insert(e.key());
        }
        big
    }
}

use crate::hash::member_hash;

impl Big {
    fn contains(&self, m: &[u8]) -> bool {
        self.table.get(m, member_hash(m)).is_some()
    }

    fn insert(&mut self, m: &[u8]) -> bool {
        let h = member_hash(m);
        if self.table.get(m, h).is_some() {
            return false;
        }
        self.table.insert(m, h, (), None);
        true
    }

    fn remove(&mut self, m: &[u8]) -> bool {
        self.table.remove(m, member_hash(m)).is_some()
    }
}

// ----------------------------------------------------------------- set --

/// Redis's `isSdsRepresentableAsLongLong`: the canonical decimal form only.
fn as_int(m: &[u8]) -> Option<i64> {
    tern_resp::parse_i64(m)
}

fn digits(n: i64) -> usize {
    itoa::Buffer::new().format(n).len()
}

impl Set {
    /// An empty set in the encoding Redis's `setTypeCreate` picks for a
    /// write whose first member is `first` and which adds `size_hint`.
    pub fn new_for(first: &[u8], size_hint: usize, lim: SetLimits) -> Self {
        let repr = if as_int(first).is_some() && size_hint <= lim.intset_max() {
            Repr::Ints(Vec::new())
        } else if size_hint <= lim.max_entries {
            Repr::Pack(Pack::default())
        } else {
            Repr::Table(Box::default())
        };
        Set { repr }
    }

    /// An empty set for `size_hint` members of any kind (Redis's
    /// `setTypeCreate(NULL, hint)`): a listpack if they fit, else a table.
    pub fn new_sized(size_hint: usize, lim: SetLimits) -> Self {
        let repr = if size_hint <= lim.max_entries { Repr::Pack(Pack::default()) } else { Repr::Table(Box::default()) };
        Set { repr }
    }

    /// The empty set a store command builds its result in (Redis starts
    /// from an intset: `createIntsetObject`).
    pub fn new() -> Self {
        Set { repr: Repr::Ints(Vec::new()) }
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Ints(v) => v.len(),
            Repr::Pack(p) => p.len,
            Repr::Table(b) => b.table.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `OBJECT ENCODING`'s name.
    pub fn encoding(&self) -> &'static str {
        match &self.repr {
            Repr::Ints(_) => "intset",
            Repr::Pack(_) => "listpack",
            Repr::Table(_) => "hashtable",
        }
    }

    /// True while the set is an intset or a listpack.
    pub fn is_compact(&self) -> bool {
        !matches!(self.repr, Repr::Table(_))
    }

    pub fn heap_size(&self) -> usize {
        match &self.repr {
            Repr::Ints(v) => v.capacity() * 8,
            Repr::Pack(p) => p.buf.capacity(),
            Repr::Table(b) => std::mem::size_of::<Big>() + b.table.mem_bytes(),
        }
    }

    /// Allocations freeing the set releases (`lazyfreeGetFreeEffort`).
    pub fn free_effort(&self) -> usize {
        match &self.repr {
            Repr::Table(b) => b.table.len(),
            _ => 1,
        }
    }

    /// Asks for the lines a lookup reads first (a pipeline's stage 3, once
    /// the set's box is read: see `Shard::prefetch_value`): a pack's first
    /// four; for a table, the bucket of the member hashed to `member`
    /// ([`crate::hash::field_hasher`]) when the command names one, else
    /// the table's own struct.
    pub fn prefetch_head(&self, member: Option<u64>) {
        match (&self.repr, member) {
            (Repr::Ints(v), _) => tern_table::prefetch_head(v.as_ptr().cast(), v.len() * 8),
            (Repr::Pack(p), _) => tern_table::prefetch_head(p.buf.as_ptr(), p.buf.len()),
            (Repr::Table(b), Some(h)) => b.table.prefetch_bucket(h),
            (Repr::Table(b), None) => tern_table::prefetch((&**b as *const Big).cast()),
        }
    }

    pub fn contains(&self, m: &[u8]) -> bool {
        match &self.repr {
            Repr::Ints(v) => as_int(m).is_some_and(|n| v.binary_search(&n).is_ok()),
            Repr::Pack(p) => p.find(m, tag(m)).is_some(),
            Repr::Table(b) => b.contains(m),
        }
    }

    /// [`Self::contains`] for each of `members` into `out`; a table walks
    /// them `group` at a time through the prefetch stages (buckets, then
    /// items, then reads), so their cache misses overlap (SMISMEMBER on a
    /// large set; `prefetch-batch-max-size`, 0 = one at a time).
    pub fn contains_many<F: AsRef<[u8]>>(&self, members: &[F], out: &mut Vec<bool>, group: usize) {
        out.clear();
        match &self.repr {
            Repr::Table(b) if group > 1 && members.len() > 1 => {
                let hashes: Vec<u64> = members.iter().map(|m| member_hash(m.as_ref())).collect();
                let mut src = Fields { table: &b.table, fields: members, hashes: &hashes };
                let mut st = Stager::new(group.min(MAX_PREFETCH_GROUP), Reach::Value, members.len());
                for (i, m) in members.iter().enumerate() {
                    st.before(&mut src, i);
                    out.push(b.table.get(m.as_ref(), hashes[i]).is_some());
                }
            }
            _ => out.extend(members.iter().map(|m| self.contains(m.as_ref()))),
        }
    }

    /// Redis's `setTypeMaybeConvert`: a write about to add `size_hint`
    /// members to a compact set past its limit converts it to a table
    /// first, in one step.
    pub fn prepare_write(&mut self, size_hint: usize, lim: SetLimits) {
        let over = match &self.repr {
            Repr::Ints(_) => size_hint > lim.intset_max(),
            Repr::Pack(_) => size_hint > lim.max_entries,
            Repr::Table(_) => false,
        };
        if over {
            self.convert_to_table();
        }
    }

    fn convert_to_table(&mut self) {
        let mut big = Big::default();
        for m in self.iter() {
            m.with_bytes(|b| big.insert(b));
        }
        self.repr = Repr::Table(Box::new(big));
    }

    fn convert_to_pack(&mut self) {
        let mut p = Pack::default();
        for m in self.iter() {
            m.with_bytes(|b| p.push(b, tag(b)));
        }
        self.repr = Repr::Pack(p);
    }

    /// Adds `m`; true if it is new. Converts as Redis's `setTypeAddAux`.
    pub fn add(&mut self, m: &[u8], lim: SetLimits) -> bool {
        match &mut self.repr {
            Repr::Ints(v) => {
                if let Some(n) = as_int(m) {
                    let Err(at) = v.binary_search(&n) else { return false };
                    v.insert(at, n);
                    if v.len() > lim.intset_max() {
                        self.convert_to_table();
                    }
                    return true;
                }
                // The longest member the intset would bring along bounds
                // what the listpack would hold.
                let widest = match (v.first(), v.last()) {
                    (Some(&lo), Some(&hi)) => digits(lo).max(digits(hi)),
                    _ => 0,
                };
                if v.len() < lim.max_entries && m.len() <= lim.max_value && widest <= lim.max_value {
                    self.convert_to_pack();
                } else {
                    self.convert_to_table();
                }
                self.add(m, lim)
            }
            Repr::Pack(p) => {
                let t = tag(m);
                if p.find(m, t).is_some() {
                    return false;
                }
                if p.len < lim.max_entries && m.len() <= lim.max_value {
                    p.push(m, t);
                    return true;
                }
                self.convert_to_table();
                self.add(m, lim)
            }
            Repr::Table(b) => b.insert(m),
        }
    }

    /// Removes `m`; true if it was there.
    pub fn remove(&mut self, m: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Ints(v) => match as_int(m).map(|n| v.binary_search(&n)) {
                Some(Ok(at)) => {
                    v.remove(at);
                    true
                }
                _ => false,
            },
            Repr::Pack(p) => match p.find(m, tag(m)) {
                Some(at) => {
                    p.remove_at(at);
                    true
                }
                None => false,
            },
            Repr::Table(b) => b.remove(m),
        }
    }

    /// Members in the encoding's order: an intset ascending, a listpack in
    /// insertion order, a table in bucket order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(match &self.repr {
            Repr::Ints(v) => IterInner::Ints(v.iter()),
            Repr::Pack(p) => IterInner::Pack(p.iter()),
            Repr::Table(b) => IterInner::Table(b.table.iter()),
        })
    }

    /// The member at position `i` of [`Self::iter`] in a compact set
    /// (None for a table or past the end).
    fn nth_compact(&self, i: usize) -> Option<Member<'_>> {
        match &self.repr {
            Repr::Ints(v) => v.get(i).map(|&n| Member::Int(n)),
            Repr::Pack(p) => p.iter().nth(i).map(Member::Bytes),
            Repr::Table(_) => None,
        }
    }

    /// A random member (None when empty). A table picks a random non-empty
    /// bucket, then an entry of its chain, like `dictGetFairRandomKey`.
    pub fn random(&self, rng: &mut impl rand::Rng) -> Option<Member<'_>> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        match &self.repr {
            Repr::Table(b) => b.table.random(&mut || rng.gen::<u64>()).map(|e| Member::Bytes(e.key())),
            _ => self.nth_compact(rng.gen_range(0..n)),
        }
    }

    /// Removes and returns a random member.
    pub fn pop_random(&mut self, rng: &mut impl rand::Rng) -> Option<Vec<u8>> {
        let m = self.random(rng)?.to_vec();
        self.remove(&m);
        Some(m)
    }

    /// One SSCAN step: a compact set answers whole with cursor 0, as Redis
    /// does; a table walks buckets until `count` members or `10 * count`
    /// buckets were seen.
    pub fn scan<'a>(&'a self, cursor: u64, count: usize, mut f: impl FnMut(Member<'a>)) -> u64 {
        match &self.repr {
            Repr::Table(b) => {
                let mut cursor = cursor;
                let mut seen = 0;
                let mut steps = count.saturating_mul(10).max(1);
                loop {
                    cursor = b.table.scan(cursor, |e| {
                        seen += 1;
                        f(Member::Bytes(e.key()))
                    });
                    steps -= 1;
                    if cursor == 0 || seen >= count || steps == 0 {
                        return cursor;
                    }
                }
            }
            _ => {
                self.iter().for_each(f);
                0
            }
        }
    }
}

impl Default for Set {
    fn default() -> Self {
        Set::new()
    }
}

impl PartialEq for Set {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|m| m.with_bytes(|b| other.contains(b)))
    }
}

pub struct Iter<'a>(IterInner<'a>);

enum IterInner<'a> {
    Ints(std::slice::Iter<'a, i64>),
    Pack(PackIter<'a>),
    Table(tern_table::Iter<'a, (), ()>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = Member<'a>;
    #[inline]
    fn next(&mut self) -> Option<Member<'a>> {
        match &mut self.0 {
            IterInner::Ints(it) => it.next().map(|&n| Member::Int(n)),
            IterInner::Pack(it) => it.next().map(Member::Bytes),
            IterInner::Table(it) => it.next().map(|e| Member::Bytes(e.key())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn lim(i: usize, e: usize, v: usize) -> SetLimits {
        SetLimits { max_intset: i, max_entries: e, max_value: v }
    }

    fn members(s: &Set) -> Vec<Vec<u8>> {
        s.iter().map(Member::to_vec).collect()
    }

    #[test]
    fn encodings_follow_redis_rules() {
        let l = lim(4, 3, 5);
        let mut s = Set::new_for(b"1", 1, l);
        assert_eq!(s.encoding(), "intset");
        for n in [5, 3, 1, -2] {
            s.add(itoa::Buffer::new().format(n).as_bytes(), l);
        }
        // Sorted while an intset.
        assert_eq!(members(&s), [b"-2".to_vec(), b"1".to_vec(), b"3".to_vec(), b"5".to_vec()]);
        // A fifth integer passes the intset limit: straight to a table.
        s.add(b"9", l);
        assert_eq!((s.encoding(), s.len()), ("hashtable", 5));

        let mut s = Set::new_for(b"1", 1, l);
        s.add(b"2", l);
        s.add(b"1", l);
        s.add(b"a", l);
        assert_eq!(s.encoding(), "listpack");
        assert_eq!(members(&s), [b"1".to_vec(), b"2".to_vec(), b"a".to_vec()]);
        s.add(b"b", l);
        assert_eq!(s.encoding(), "hashtable");

        // A member too long for a listpack.
        let mut s = Set::new_for(b"x", 1, l);
        assert_eq!(s.encoding(), "listpack");
        s.add(b"toolong", l);
        assert_eq!(s.encoding(), "hashtable");
        // An intset whose widest integer is too long for a listpack.
        let mut s = Set::new_for(b"1", 1, l);
        s.add(b"123456", l);
        s.add(b"a", l);
        assert_eq!(s.encoding(), "hashtable");
        // Size hints.
        assert_eq!(Set::new_sized(3, l).encoding(), "listpack");
        assert_eq!(Set::new_sized(4, l).encoding(), "hashtable");
        assert_eq!(Set::new_for(b"1", 5, lim(4, 8, 5)).encoding(), "listpack");
        assert_eq!(Set::new_for(b"a", 4, l).encoding(), "hashtable");
        let mut s = Set::new_for(b"a", 1, l);
        s.prepare_write(4, l);
        assert_eq!(s.encoding(), "hashtable");
        // Not canonical integers stay bytes.
        for m in [&b"01"[..], b"+1", b"-0", b" 1", b"1.0"] {
            assert_eq!(Set::new_for(m, 1, l).encoding(), "listpack", "{m:?}");
        }
    }

    #[test]
    fn pack_tells_apart_members_of_one_length_and_tag() {
        // Two members whose length and tag agree: only their bytes differ.
        let mut by: std::collections::HashMap<u8, Vec<u8>> = Default::default();
        let (a, b) = (0..)
            .map(|i| format!("m{i:04}").into_bytes())
            .find_map(|m| match by.insert(tag(&m), m.clone()) {
                Some(old) => Some((old, m)),
                None => None,
            })
            .unwrap();
        let l = lim(0, 64, 64);
        let mut s = Set::new_for(b"x", 3, l);
        for m in [&b"x"[..], &a, &b, b"y"] {
            assert!(s.add(m, l));
        }
        assert_eq!(s.encoding(), "listpack");
        assert!(!s.add(&b, l) && !s.add(&a, l));
        assert!(s.remove(&a));
        assert!(!s.contains(&a) && s.contains(&b));
        assert_eq!(members(&s), [b"x".to_vec(), b.clone(), b"y".to_vec()]);
        assert!(s.remove(&b) && !s.contains(&b));
        assert_eq!(members(&s), [b"x".to_vec(), b"y".to_vec()]);
    }

    #[test]
    fn scan_of_table_visits_everything() {
        let l = lim(0, 0, 0);
        let mut s = Set::new_for(b"a", 1, l);
        for i in 0..1000 {
            s.add(format!("m{i}").as_bytes(), l);
        }
        let mut seen = BTreeSet::new();
        let mut c = 0;
        loop {
            c = s.scan(c, 10, |m| {
                seen.insert(m.to_vec());
            });
            if c == 0 {
                break;
            }
        }
        assert_eq!(seen.len(), 1000);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Add(Vec<u8>),
        Remove(Vec<u8>),
        Pop(u64),
    }

    fn member() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            (-20i64..20).prop_map(|n| n.to_string().into_bytes()),
            Just(b"9223372036854775807".to_vec()),
            Just(b"-9223372036854775808".to_vec()),
            Just(b"007".to_vec()),
            proptest::collection::vec(b'a'..b'e', 0..8),
            // Long enough to take the pack's long-member form.
            (b'a'..b'c', 250usize..262).prop_map(|(c, n)| vec![c; n]),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => member().prop_map(Op::Add),
            2 => member().prop_map(Op::Remove),
            1 => any::<u64>().prop_map(Op::Pop),
        ]
    }

    proptest! {
        /// Every encoding, with conversions at small thresholds, behaves as
        /// a BTreeSet; an intset iterates sorted, a listpack in insertion
        /// order.
        #[test]
        fn set_matches_btreeset(ops in proptest::collection::vec(op(), 1..120),
                                mi in 0usize..10, me in prop_oneof![0usize..10, Just(40)], mv in prop_oneof![0usize..6, Just(300)]) {
            use rand::SeedableRng;
            let l = lim(mi, me, mv);
            let mut model: BTreeSet<Vec<u8>> = BTreeSet::new();
            let mut s: Option<Set> = None;
            for op in ops {
                match op {
                    Op::Add(m) => {
                        let set = s.get_or_insert_with(|| Set::new_for(&m, 1, l));
                        let was = set.encoding();
                        prop_assert_eq!(set.add(&m, l), model.insert(m.clone()));
                        if was != "intset" && set.encoding() == "intset" {
                            prop_assert!(false, "converted back to an intset");
                        }
                    }
                    Op::Remove(m) => {
                        let had = model.remove(&m);
                        prop_assert_eq!(s.as_mut().is_some_and(|set| set.remove(&m)), had);
                    }
                    Op::Pop(seed) => {
                        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                        let got = s.as_mut().and_then(|set| set.pop_random(&mut rng));
                        match got {
                            Some(m) => prop_assert!(model.remove(&m)),
                            None => prop_assert!(model.is_empty()),
                        }
                    }
                }
                if let Some(set) = &s {
                    prop_assert_eq!(set.len(), model.len());
                    let got = members(set);
                    match set.encoding() {
                        "intset" => {
                            let mut want: Vec<(i64, Vec<u8>)> = model.iter().map(|m| (as_int(m).unwrap(), m.clone())).collect();
                            want.sort();
                            prop_assert_eq!(got, want.into_iter().map(|x| x.1).collect::<Vec<_>>());
                        }
                        "listpack" => {
                            prop_assert!(set.len() <= l.max_entries);
                            prop_assert_eq!(got.iter().cloned().collect::<BTreeSet<_>>(), model.clone());
                        }
                        _ => prop_assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), model.clone()),
                    }
                    for m in &model { prop_assert!(set.contains(m)); }
                    let asked: Vec<&[u8]> = model.iter().map(|m| &m[..]).chain([&b"zzz"[..], b"1"]).collect();
                    let mut staged = Vec::new();
                    set.contains_many(&asked, &mut staged, 4);
                    prop_assert_eq!(staged, asked.iter().map(|m| model.contains(*m)).collect::<Vec<_>>());
                    prop_assert!(!set.contains(b"zzz"));
                }
            }
        }
    }
}
