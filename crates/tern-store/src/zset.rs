//! Sorted-set values: distinct byte-string members, each with a double
//! score, ordered by (score, member bytes).
//!
//! ```text
//!  ZSet ─ repr: Pack   one Vec<u8> of entries in (score, member) order:
//!                      [varint mlen*2|is_float] [score: zigzag varint | f64 LE] [member]
//!           or Tree    Big ─ slab    id → (score, member)   members stored once, in chunks
//!                          ├─ index  groups of 12 ids in a cache line each, by member hash (member → id)
//!                          └─ order  counted B+tree of ids in (score, member) order
//! ```
//!
//! The compact form (`listpack` in OBJECT ENCODING) is what Redis's
//! listpack is: a contiguous run of entries kept in order, scanned
//! linearly. A score that is an integer Redis would print as one
//! (`double2ll`) is kept as a zigzag varint, so a small leaderboard of
//! integer scores costs a byte or two per score instead of eight; this is
//! also why -0 becomes 0 there, as in Redis's listpack.
//!
//! The large form (`skiplist`) is an order-statistic B+tree rather than a
//! skiplist: its leaves hold 4-byte slab ids (a skiplist node costs a
//! score, a backward pointer and 1.33 levels of forward pointer + span,
//! about 40 bytes before the member), inner nodes hold each child's
//! element count and first id, so rank, select and the bounds of a score
//! or lex range cost O(log n), a range O(log n + m). The member bytes live
//! once, in the slab: up to 22 bytes in the 32-byte slot itself, beside
//! the score, longer ones in their own allocation. The member → id index
//! (`index`) files 4-byte ids by the member's hash (the hashes' seeded
//! field hasher), twelve to a cache line with a tag byte each, and looks
//! the bytes up in the slab. Slab ids are stable for a member's life, which gives
//! ZSCAN its guarantee (a member present for the whole scan is returned).
//!
//! Conversions follow Redis's `t_zset.c`: a new sorted set is compact when
//! the write's member count and longest member fit
//! `zset-max-listpack-entries` / `-value`; a compact set given one member
//! too many or one too long converts, and nothing converts back.
//!
//! Goals: Redis's order, encodings and conversions; O(log n) rank and
//! range when large. Non-goals: Redis's skiplist order for lex ranges over
//! members of different scores (Redis leaves those unspecified; here they
//! are answered by the members' order as if monotone).

use std::cmp::Ordering;

use tern_table::stage::{ItemHint, Lookups, Reach, Stager};

use crate::hash::{get_varint, put_varint, same_bytes};

/// The conversion thresholds (`zset-max-listpack-entries`,
/// `zset-max-listpack-value`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZsetLimits {
    pub max_entries: usize,
    pub max_value: usize,
}

impl Default for ZsetLimits {
    fn default() -> Self {
        ZsetLimits {
            max_entries: 128,
            max_value: 64,
        }
    }
}

/// Redis's (score, member) order: scores by value (-0 equals 0), ties by
/// member bytes.
#[inline]
pub fn key_cmp(s1: f64, m1: &[u8], s2: f64, m2: &[u8]) -> Ordering {
    if s1 < s2 {
        Ordering::Less
    } else if s1 > s2 {
        Ordering::Greater
    } else {
        m1.cmp(m2)
    }
}

/// A sorted-set value.
#[derive(Clone, Debug)]
pub struct ZSet {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    Pack(Pack),
    Tree(Box<Big>),
}

// ---------------------------------------------------------------- pack --

#[derive(Clone, Debug, Default)]
struct Pack {
    buf: Vec<u8>,
    len: usize,
}

/// Redis's `double2ll`: the scores it keeps as integers.
fn as_int(d: f64) -> Option<i64> {
    const LIM: f64 = (i64::MAX / 2) as f64;
    if !(-LIM..=LIM).contains(&d) {
        return None;
    }
    let n = d as i64;
    (n as f64 == d).then_some(n)
}

fn zigzag(n: i64) -> usize {
    ((n << 1) ^ (n >> 63)) as u64 as usize
}

fn unzigzag(u: usize) -> i64 {
    let u = u as u64;
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// A member's place in a sorted set, as [`ZSet::locate`] found it (only
/// good until the set changes), and its score if it is there.
#[derive(Clone, Copy, Debug)]
pub struct Located {
    at: At,
    pub score: Option<f64>,
}

#[derive(Clone, Copy, Debug)]
enum At {
    /// Its entry's bytes in a compact set.
    Pack(usize, usize),
    /// Its slab id in a large one.
    Tree(u32),
    Absent,
}

/// One pack entry: its byte range, score and member.
#[derive(Clone, Copy, Debug)]
struct PEntry<'a> {
    start: usize,
    end: usize,
    score: f64,
    member: &'a [u8],
}

struct PackIter<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for PackIter<'a> {
    type Item = PEntry<'a>;
    #[inline]
    fn next(&mut self) -> Option<PEntry<'a>> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let start = self.pos;
        let h = get_varint(self.buf, &mut self.pos);
        let score = if h & 1 == 1 {
            let mut b = [0u8; 8];
            b.copy_from_slice(&self.buf[self.pos..self.pos + 8]);
            self.pos += 8;
            f64::from_le_bytes(b)
        } else {
            unzigzag(get_varint(self.buf, &mut self.pos)) as f64
        };
        let l = h >> 1;
        let member = &self.buf[self.pos..self.pos + l];
        self.pos += l;
        Some(PEntry {
            start,
            end: self.pos,
            score,
            member,
        })
    }
}

impl Pack {
    fn iter(&self) -> PackIter<'_> {
        PackIter {
            buf: &self.buf,
            pos: 0,
        }
    }

    fn find(&self, m: &[u8]) -> Option<PEntry<'_>> {
        self.iter().find(|e| same_bytes(e.member, m))
    }

    fn encode(score: f64, m: &[u8], out: &mut Vec<u8>) {
        match as_int(score) {
            Some(n) => {
                put_varint(out, m.len() << 1);
                put_varint(out, zigzag(n));
            }
            None => {
                put_varint(out, (m.len() << 1) | 1);
                out.extend_from_slice(&score.to_le_bytes());
            }
        }
        out.extend_from_slice(m);
    }

    /// Inserts a member known to be absent at its place in the order.
    fn insert(&mut self, score: f64, m: &[u8]) {
        let at = self
            .iter()
            .find(|e| key_cmp(e.score, e.member, score, m) == Ordering::Greater)
            .map_or(self.buf.len(), |e| e.start);
        let mut enc = Vec::with_capacity(m.len() + 12);
        Self::encode(score, m, &mut enc);
        // Grown to fit, as a listpack is reallocated: no doubling slack.
        self.buf.reserve_exact(enc.len());
        self.buf.splice(at..at, enc);
        self.len += 1;
    }

    fn remove_range(&mut self, start: usize, end: usize) {
        self.buf.drain(start..end);
        self.len -= 1;
    }
}

// ---------------------------------------------------------------- slab --

/// Slab ids per chunk: the slab grows a chunk at a time, never copying
/// what it holds (a 10M-member set does not double a 240 MB array).
const CHUNK: usize = 1024;

/// Member bytes kept in the slot itself, beside the score.
const INLINE: usize = 22;

/// A member's bytes: up to [`INLINE`] in the slot, on the score's cache
/// line, so that finding a member by name costs no read beyond its slot;
/// longer ones in their own allocation. Either form is 24 bytes.
#[derive(Clone, Debug)]
enum Member {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl Member {
    fn new(m: &[u8]) -> Member {
        if m.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..m.len()].copy_from_slice(m);
            Member::Inline { len: m.len() as u8, bytes }
        } else {
            Member::Heap(m.into())
        }
    }

    /// Bytes of its own allocation (its size class), none when inline.
    fn heap(&self) -> usize {
        match self {
            Member::Inline { .. } => 0,
            Member::Heap(b) => tern_table::size_class(b.len()),
        }
    }
}

impl std::ops::Deref for Member {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            Member::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Member::Heap(b) => b,
        }
    }
}

#[derive(Clone, Debug)]
struct Slot {
    score: f64,
    member: Member,
}

#[derive(Clone, Debug, Default)]
struct Slab {
    chunks: Vec<Vec<Slot>>,
    free: Vec<u32>,
    /// Heap bytes of the members not kept inline (their size classes).
    member_heap: usize,
}

impl Slab {
    #[inline]
    fn get(&self, id: u32) -> &Slot {
        let id = id as usize;
        &self.chunks[id / CHUNK][id % CHUNK]
    }

    /// Whether slot `id`'s element comes before (`score`, `m`) in the
    /// order: the tree's searches' test.
    fn before<'a>(&'a self, score: f64, m: &'a [u8]) -> impl Fn(u32) -> bool + 'a {
        move |id| {
            let s = self.get(id);
            key_cmp(s.score, &s.member, score, m) == Ordering::Less
        }
    }

    /// Asks for slot `id`'s line without reading it.
    #[inline]
    fn touch(&self, id: u32) {
        tern_table::prefetch((self.get(id) as *const Slot).cast());
    }

    #[inline]
    fn get_mut(&mut self, id: u32) -> &mut Slot {
        let id = id as usize;
        &mut self.chunks[id / CHUNK][id % CHUNK]
    }

    fn alloc(&mut self, score: f64, m: &[u8]) -> u32 {
        let slot = Slot { score, member: Member::new(m) };
        self.member_heap += slot.member.heap();
        if let Some(id) = self.free.pop() {
            *self.get_mut(id) = slot;
            return id;
        }
        if self.chunks.last().is_none_or(|c| c.len() == CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        let n = self.chunks.len() - 1;
        let c = &mut self.chunks[n];
        c.push(slot);
        (n * CHUNK + c.len() - 1) as u32
    }

    fn release(&mut self, id: u32) {
        // NaN marks a free slot: no member ever has that score.
        let s = std::mem::replace(
            self.get_mut(id),
            Slot {
                score: f64::NAN,
                member: Member::new(b""),
            },
        );
        self.member_heap -= s.member.heap();
        self.free.push(id);
    }

    /// Ids ever handed out (live or free).
    fn span(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum()
    }

    fn live(&self, id: usize) -> bool {
        !self.chunks[id / CHUNK][id % CHUNK].score.is_nan()
    }
}

mod index;
mod tree;

use index::Index;
use tree::{Shift, Tree};


// ----------------------------------------------------------------- big --

/// A large set's members for the staged-lookup engine: stage 1 asks for
/// a member's index line, stage 2 reads it and asks for the slot it names.
struct Members<'a, F> {
    big: &'a Big,
    members: &'a [F],
    hashes: &'a [u64],
}

impl<F: AsRef<[u8]>> Lookups for Members<'_, F> {
    #[inline]
    fn bucket(&mut self, i: usize) {
        self.big.index.prefetch(self.hashes[i]);
    }
    #[inline]
    fn item(&mut self, i: usize) -> ItemHint {
        match self.big.index.candidate(self.hashes[i]) {
            Some(id) => ItemHint::of((self.big.slab.get(id) as *const Slot).cast()),
            None => ItemHint::NONE,
        }
    }
    #[inline]
    fn key_len(&self, i: usize) -> usize {
        self.members[i].as_ref().len()
    }
}

#[derive(Clone, Debug, Default)]
struct Big {
    slab: Slab,
    index: Index,
    order: Tree,
}

use crate::hash::member_hash;

impl Big {
    fn with_capacity(n: usize) -> Self {
        Big {
            index: Index::with_capacity(n.min(1 << 20)),
            ..Big::default()
        }
    }

    fn find(&self, m: &[u8]) -> Option<u32> {
        self.find_hashed(m, member_hash(m))
    }

    fn find_hashed(&self, m: &[u8], h: u64) -> Option<u32> {
        let slab = &self.slab;
        self.index.find(h, |id| &*slab.get(id).member == m)
    }

    fn key_of(&self, id: u32) -> (f64, &[u8]) {
        let s = self.slab.get(id);
        (s.score, &s.member)
    }

    /// Position of an element in the order (the count of those before it).
    /// `id`: its slab id when the set holds it, so that its leaf is
    /// scanned for the id rather than searched by key.
    fn pos_of(&self, score: f64, m: &[u8], id: Option<u32>) -> usize {
        let below = self.slab.before(score, m);
        let by_score = |s| {
            if s < score {
                Some(true)
            } else if s > score {
                Some(false)
            } else {
                None
            }
        };
        let touch = |o| self.slab.touch(o);
        match id {
            Some(id) => self.order.position(id, below, by_score, touch),
            None => self.order.partition(below, by_score, touch),
        }
    }

    fn insert(&mut self, m: &[u8], score: f64) {
        let pos = self.pos_of(score, m, None);
        let id = self.add(m, score);
        let slab = &self.slab;
        self.order.insert_at(pos, id, &|i| slab.get(i).score);
    }

    /// A slot for `m` and its entry in the index (the caller places it in
    /// the order).
    fn add(&mut self, m: &[u8], score: f64) -> u32 {
        let id = self.slab.alloc(score, m);
        let slab = &self.slab;
        self.index.insert(member_hash(m), id, |i| member_hash(&slab.get(i).member));
        id
    }

    fn remove(&mut self, m: &[u8]) -> Option<f64> {
        let slab = &self.slab;
        let id = self.index.remove(member_hash(m), |id| &*slab.get(id).member == m)?;
        let score = self.slab.get(id).score;
        let pos = self.pos_of(score, m, Some(id));
        self.order.remove_at(pos, &|i| self.slab.get(i).score);
        self.slab.release(id);
        Some(score)
    }

    fn set_score(&mut self, id: u32, score: f64) {
        let slot = self.slab.get(id);
        let (old, m) = (slot.score, &*slot.member);
        let pos = self.pos_of(old, m, Some(id));
        // A new score that keeps the element in its leaf (ZINCRBY's small
        // steps, mostly) moves its id inside that leaf alone.
        let slab = &self.slab;
        let shift = self.order.root.move_in_leaf(pos, &slab.before(score, m), &|o| slab.touch(o));
        match shift {
            Shift::Moved => {
                self.slab.get_mut(id).score = score;
                return;
            }
            Shift::Away => return self.move_away(id, pos, score),
            Shift::Edge => {}
        }
        // In place when the new score keeps the element between its
        // neighbours (Redis's zslUpdateScore does the same).
        let fits_left = pos == 0 || {
            let (s, mm) = self.key_of(self.order.root.get(pos - 1));
            key_cmp(s, mm, score, m) == Ordering::Less
        };
        let fits_right = pos + 1 >= self.order.len || {
            let (s, mm) = self.key_of(self.order.root.get(pos + 1));
            key_cmp(s, mm, score, m) == Ordering::Greater
        };
        if fits_left && fits_right {
            self.slab.get_mut(id).score = score;
            self.order.root.rescore(pos, score);
            return;
        }
        self.move_away(id, pos, score);
    }

    /// Takes `id` out of the order at `pos` and puts it back where `score`
    /// places it.
    fn move_away(&mut self, id: u32, pos: usize, score: f64) {
        self.order.remove_at(pos, &|i| self.slab.get(i).score);
        self.slab.get_mut(id).score = score;
        let m = &self.slab.get(id).member;
        let pos = self.pos_of(score, m, None);
        let slab = &self.slab;
        self.order.insert_at(pos, id, &|i| slab.get(i).score);
    }
}

// ---------------------------------------------------------------- zset --

/// One end of a score range (`1.5`, `(1.5`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreBound {
    pub value: f64,
    pub exclusive: bool,
}

/// One end of a lex range (`[a`, `(a`, `-`, `+`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LexBound<'a> {
    /// `-`: before every member.
    Min,
    /// `+`: after every member.
    Max,
    Incl(&'a [u8]),
    Excl(&'a [u8]),
}

impl ZSet {
    /// The empty sorted set Redis's `zsetTypeCreate` makes for a write of
    /// `size_hint` members, the longest `value_len_hint` bytes.
    pub fn new_for(size_hint: usize, value_len_hint: usize, lim: ZsetLimits) -> Self {
        if size_hint <= lim.max_entries && value_len_hint <= lim.max_value {
            ZSet {
                repr: Repr::Pack(Pack::default()),
            }
        } else {
            ZSet {
                repr: Repr::Tree(Box::new(Big::with_capacity(size_hint))),
            }
        }
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Pack(p) => p.len,
            Repr::Tree(b) => b.order.len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `OBJECT ENCODING`'s name.
    pub fn encoding(&self) -> &'static str {
        match &self.repr {
            Repr::Pack(_) => "listpack",
            Repr::Tree(_) => "skiplist",
        }
    }

    pub fn is_compact(&self) -> bool {
        matches!(self.repr, Repr::Pack(_))
    }

    pub fn heap_size(&self) -> usize {
        match &self.repr {
            Repr::Pack(p) => p.buf.capacity(),
            Repr::Tree(b) => {
                let slot = std::mem::size_of::<Slot>();
                tern_table::size_class(std::mem::size_of::<Big>())
                    + b.slab.chunks.len()
                        * (tern_table::size_class(CHUNK * slot) + std::mem::size_of::<Vec<Slot>>())
                    + b.slab.free.capacity() * 4
                    + tern_table::size_class(b.index.heap())
                    + b.slab.member_heap
                    + b.order.heap()
            }
        }
    }

    /// Allocations freeing the value releases (`lazyfreeGetFreeEffort`).
    pub fn free_effort(&self) -> usize {
        match &self.repr {
            Repr::Pack(_) => 1,
            Repr::Tree(b) => b.order.len,
        }
    }

    pub fn score(&self, m: &[u8]) -> Option<f64> {
        self.locate(m).score
    }

    /// Where `m` is and its score: one lookup that [`Self::set_located`]
    /// then uses to change it without looking it up again (ZADD and
    /// ZINCRBY read a score before they write one).
    pub fn locate(&self, m: &[u8]) -> Located {
        match &self.repr {
            Repr::Pack(p) => match p.find(m) {
                Some(e) => Located { at: At::Pack(e.start, e.end), score: Some(e.score) },
                None => Located { at: At::Absent, score: None },
            },
            Repr::Tree(b) => match b.find(m) {
                Some(id) => Located { at: At::Tree(id), score: Some(b.slab.get(id).score) },
                None => Located { at: At::Absent, score: None },
            },
        }
    }

    /// Redis's `zsetTypeMaybeConvert`: a write about to add `size_hint`
    /// members, the longest `value_len_hint` bytes, converts a compact set
    /// past the limits first.
    pub fn prepare_write(&mut self, size_hint: usize, value_len_hint: usize, lim: ZsetLimits) {
        if self.is_compact() && (size_hint > lim.max_entries || value_len_hint > lim.max_value) {
            self.convert(size_hint);
        }
    }

    fn convert(&mut self, size_hint: usize) {
        let Repr::Pack(p) = &self.repr else { return };
        let mut big = Big::with_capacity(size_hint.max(p.len));
        for e in p.iter() {
            // Entries come in order: each goes at the end.
            let id = big.add(e.member, e.score);
            let n = big.order.len;
            let slab = &big.slab;
            big.order.insert_at(n, id, &|i| slab.get(i).score);
        }
        self.repr = Repr::Tree(Box::new(big));
    }

    /// Sets `m`'s score, adding it if absent (true then). Converts as
    /// Redis's `zsetAdd`: a compact set that would pass a limit first.
    pub fn insert(&mut self, m: &[u8], score: f64, lim: ZsetLimits) -> bool {
        let at = self.locate(m);
        self.set_located(at, m, score, lim)
    }

    /// [`Self::insert`] of `m`, which `at` located with no change to the
    /// set since.
    pub fn set_located(&mut self, at: Located, m: &[u8], score: f64, lim: ZsetLimits) -> bool {
        let same = at.score.is_some_and(|s| s.to_bits() == score.to_bits());
        match (&mut self.repr, at.at) {
            (_, _) if same => false,
            (Repr::Pack(p), At::Pack(start, end)) => {
                p.remove_range(start, end);
                p.insert(score, m);
                false
            }
            (Repr::Tree(b), At::Tree(id)) => {
                b.set_score(id, score);
                false
            }
            (Repr::Pack(p), _) => {
                if p.len < lim.max_entries && m.len() <= lim.max_value {
                    p.insert(score, m);
                    return true;
                }
                let n = p.len + 1;
                self.convert(n);
                self.insert(m, score, lim)
            }
            (Repr::Tree(b), _) => {
                b.insert(m, score);
                true
            }
        }
    }

    /// Removes `m`, returning its score.
    pub fn remove(&mut self, m: &[u8]) -> Option<f64> {
        match &mut self.repr {
            Repr::Pack(p) => {
                let e = p.find(m)?;
                let (s, end, score) = (e.start, e.end, e.score);
                p.remove_range(s, end);
                Some(score)
            }
            Repr::Tree(b) => b.remove(m),
        }
    }

    /// A hint for a lookup of the member hashed `h` ([`member_hash`]) that
    /// a later command will make: with `near` false, its index line is
    /// asked for; with `near` true (that line asked for by an earlier
    /// hint), the line is read and the slab slot of the first id there
    /// that may be the member is asked for. Nothing for a compact set.
    #[inline]
    /// [`crate::Set::prefetch_head`] for a sorted set: for a tree, the
    /// member's index line.
    pub fn prefetch_head(&self, member: Option<u64>) {
        match (&self.repr, member) {
            (Repr::Pack(p), _) => tern_table::prefetch_head(p.buf.as_ptr(), p.buf.len()),
            (Repr::Tree(b), Some(h)) => b.index.prefetch(h),
            (Repr::Tree(b), None) => tern_table::prefetch((&**b as *const Big).cast()),
        }
    }

    pub fn prefetch_member(&self, h: u64, near: bool) {
        if let Repr::Tree(b) = &self.repr {
            if near {
                if let Some(id) = b.index.candidate(h) {
                    b.slab.touch(id);
                }
            } else {
                b.index.prefetch(h);
            }
        }
    }

    /// [`Self::score`] of each of `members` into `out`; a large set walks
    /// them `group` at a time through the prefetch stages (index lines,
    /// then the slots they name), so that their misses overlap (ZMSCORE;
    /// `prefetch-batch-max-size`, 0 = one at a time).
    pub fn scores_many<F: AsRef<[u8]>>(&self, members: &[F], out: &mut Vec<Option<f64>>, group: usize) {
        out.clear();
        match &self.repr {
            Repr::Tree(b) if group > 1 && members.len() > 1 => {
                let hashes: Vec<u64> = members.iter().map(|m| member_hash(m.as_ref())).collect();
                let mut src = Members { big: b, members, hashes: &hashes };
                let mut st = Stager::new(group.min(crate::hash::MAX_PREFETCH_GROUP), Reach::Entry, members.len());
                for (i, m) in members.iter().enumerate() {
                    st.before(&mut src, i);
                    out.push(b.find_hashed(m.as_ref(), hashes[i]).map(|id| b.slab.get(id).score));
                }
            }
            _ => out.extend(members.iter().map(|m| self.score(m.as_ref()))),
        }
    }

    /// The ascending rank and score of `m`.
    pub fn rank(&self, m: &[u8]) -> Option<(usize, f64)> {
        match &self.repr {
            Repr::Pack(p) => p
                .iter()
                .enumerate()
                .find(|(_, e)| same_bytes(e.member, m))
                .map(|(i, e)| (i, e.score)),
            Repr::Tree(b) => {
                let id = b.find(m)?;
                let score = b.slab.get(id).score;
                Some((b.pos_of(score, m, Some(id)), score))
            }
        }
    }

    /// How many members come before the first one for which `at_or_after`
    /// holds (a predicate false for a prefix of the order, then true).
    fn count_before(&self, before: impl Fn(f64, &[u8]) -> bool) -> usize {
        match &self.repr {
            Repr::Pack(p) => p.iter().take_while(|e| before(e.score, e.member)).count(),
            Repr::Tree(b) => b.order.partition(
                |id| {
                    let (s, m) = b.key_of(id);
                    before(s, m)
                },
                |_| None,
                |id| b.slab.touch(id),
            ),
        }
    }

    /// [`Self::count_before`] for a predicate on scores alone, which the
    /// tree's inner nodes settle from their copies of the scores.
    fn count_below(&self, below: impl Fn(f64) -> bool) -> usize {
        match &self.repr {
            Repr::Pack(p) => p.iter().take_while(|e| below(e.score)).count(),
            Repr::Tree(b) => b.order.partition(|id| below(b.slab.get(id).score), |s| Some(below(s)), |id| b.slab.touch(id)),
        }
    }

    /// The positions `start..end` of the members whose score is within
    /// `min..max`.
    pub fn score_range(&self, min: ScoreBound, max: ScoreBound) -> (usize, usize) {
        let start = self.score_start(min);
        let end = self.score_end(max);
        (start, end.max(start))
    }

    /// The position of the first member at or above `min` (`-inf`
    /// inclusive: 0, with no search).
    pub fn score_start(&self, min: ScoreBound) -> usize {
        if min.value == f64::NEG_INFINITY && !min.exclusive {
            return 0;
        }
        self.count_below(|s| if min.exclusive { s <= min.value } else { s < min.value })
    }

    /// The position after the last member at or below `max` (`+inf`
    /// inclusive: the length, with no search).
    pub fn score_end(&self, max: ScoreBound) -> usize {
        if max.value == f64::INFINITY && !max.exclusive {
            return self.len();
        }
        self.count_below(|s| if max.exclusive { s < max.value } else { s <= max.value })
    }

    /// The position of the first member at or after `min` (lex order).
    pub fn lex_start(&self, min: LexBound<'_>) -> usize {
        match min {
            LexBound::Min => 0,
            LexBound::Max => self.len(),
            LexBound::Incl(x) => self.count_before(|_, m| m < x),
            LexBound::Excl(x) => self.count_before(|_, m| m <= x),
        }
    }

    /// The position after the last member at or before `max` (lex order).
    pub fn lex_end(&self, max: LexBound<'_>) -> usize {
        match max {
            LexBound::Min => 0,
            LexBound::Max => self.len(),
            LexBound::Incl(x) => self.count_before(|_, m| m <= x),
            LexBound::Excl(x) => self.count_before(|_, m| m < x),
        }
    }

    /// The positions `start..end` of the members within the lex range
    /// `min..max`.
    pub fn lex_range(&self, min: LexBound<'_>, max: LexBound<'_>) -> (usize, usize) {
        let start = self.lex_start(min);
        let end = self.lex_end(max);
        (start, end.max(start))
    }

    /// Calls `f(member, score)` for the members at positions
    /// `start..end` of the order, from the end if `rev`.
    pub fn for_range<'a>(&'a self, start: usize, end: usize, rev: bool, mut f: impl FnMut(&'a [u8], f64)) {
        self.walk(start, end, rev, |m, s| {
            f(m, s);
            true
        });
    }

    /// Calls `f(member, score)` for the members whose score is within
    /// `min..max`, in order, until it returns false: one search for the
    /// start, then a walk that stops at the first score past `max` (where
    /// [`Self::score_range`] searches for the end as well).
    pub fn for_scores<'a>(&'a self, min: ScoreBound, max: ScoreBound, mut f: impl FnMut(&'a [u8], f64) -> bool) {
        let past = |s: f64| if max.exclusive { s >= max.value } else { s > max.value };
        self.walk(self.score_start(min), self.len(), false, |m, s| !past(s) && f(m, s));
    }

    /// [`Self::for_range`] until `f` returns false.
    fn walk<'a>(&'a self, start: usize, end: usize, rev: bool, mut f: impl FnMut(&'a [u8], f64) -> bool) {
        let end = end.min(self.len());
        if start >= end {
            return;
        }
        match &self.repr {
            Repr::Pack(p) => {
                if rev {
                    let all: Vec<PEntry<'_>> = p.iter().take(end).skip(start).collect();
                    for e in all.iter().rev() {
                        if !f(e.member, e.score) {
                            return;
                        }
                    }
                } else {
                    for e in p.iter().take(end).skip(start) {
                        if !f(e.member, e.score) {
                            return;
                        }
                    }
                }
            }
            Repr::Tree(b) => {
                b.order.root.for_range(
                    start,
                    end,
                    rev,
                    &mut |id| {
                        let s = b.slab.get(id);
                        f(&s.member, s.score)
                    },
                    &|id| b.slab.touch(id),
                );
            }
        }
    }

    /// The member at position `pos` of the order, with its score.
    pub fn nth(&self, pos: usize) -> Option<(&[u8], f64)> {
        if pos >= self.len() {
            return None;
        }
        match &self.repr {
            Repr::Pack(p) => p.iter().nth(pos).map(|e| (e.member, e.score)),
            Repr::Tree(b) => {
                let s = b.slab.get(b.order.root.get(pos));
                Some((&s.member, s.score))
            }
        }
    }

    /// Every member with its score, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], f64)> + '_ {
        let mut out = Vec::with_capacity(self.len());
        self.for_range(0, self.len(), false, |m, s| out.push((m, s)));
        // Borrowed members: the Vec holds slices of self.
        out.into_iter()
    }

    /// Removes the members at positions `start..end`, calling `f` with
    /// each (in order) before it goes.
    pub fn remove_range(&mut self, start: usize, end: usize, mut f: impl FnMut(&[u8], f64)) {
        let end = end.min(self.len());
        if start >= end {
            return;
        }
        match &mut self.repr {
            Repr::Pack(p) => {
                let (mut from, mut to) = (0, 0);
                for (i, e) in p.iter().enumerate().take(end).skip(start) {
                    if i == start {
                        from = e.start;
                    }
                    to = e.end;
                    f(e.member, e.score);
                }
                p.buf.drain(from..to);
                p.len -= end - start;
            }
            Repr::Tree(b) => {
                let b: &mut Big = b;
                for _ in start..end {
                    let id = b.order.remove_at(start, &|i| b.slab.get(i).score);
                    let slot = b.slab.get(id);
                    f(&slot.member, slot.score);
                    let h = member_hash(&slot.member);
                    b.index.remove(h, |x| x == id);
                    b.slab.release(id);
                }
            }
        }
    }

    /// One ZSCAN step: a compact set answers whole with cursor 0, as Redis
    /// does; a large one walks slab ids from the cursor until `count`
    /// members were seen (ids are stable for a member's life).
    pub fn scan<'a>(&'a self, cursor: u64, count: usize, mut f: impl FnMut(&'a [u8], f64)) -> u64 {
        match &self.repr {
            Repr::Pack(p) => {
                p.iter().for_each(|e| f(e.member, e.score));
                0
            }
            Repr::Tree(b) => {
                let span = b.slab.span();
                let mut id = usize::try_from(cursor).unwrap_or(usize::MAX);
                let mut seen = 0;
                let count = count.max(1);
                while id < span && seen < count {
                    if b.slab.live(id) {
                        let s = b.slab.get(id as u32);
                        f(&s.member, s.score);
                        seen += 1;
                    }
                    id += 1;
                }
                if id >= span {
                    0
                } else {
                    id as u64
                }
            }
        }
    }
}

impl Default for ZSet {
    fn default() -> Self {
        ZSet {
            repr: Repr::Pack(Pack::default()),
        }
    }
}

impl PartialEq for ZSet {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|(a, b)| a.0 == b.0 && a.1.to_bits() == b.1.to_bits())
    }
}

#[cfg(test)]
mod tests;
