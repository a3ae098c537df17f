//! One node of a stream: a Redis stream listpack, read and changed where
//! it lies (the layout is in the parent module's docs).
//!
//! Every number in a node is a listpack integer: the master entry's
//! counts and field count, an entry's flags, ID deltas, field count and
//! lp-count. IDs are kept as deltas from the node's master ID, wrapping
//! as Redis's unsigned subtraction does (a delta may read negative).

use std::borrow::Cow;

use crate::listpack::{self, int_at, LpBuilder, LpVal};

use super::StreamId;

/// An entry marked deleted: skipped by every read, counted in the
/// master entry's `deleted`.
pub(super) const FLAG_DELETED: i64 = 1;
/// An entry with the master entry's fields: only its values are stored.
pub(super) const FLAG_SAMEFIELDS: i64 = 2;

/// A stream node's listpack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Node {
    lp: Vec<u8>,
}

/// Where the master entry's parts lie.
#[derive(Clone, Copy, Debug)]
pub(super) struct Master {
    /// The master fields' count and the position of the first.
    fields: u64,
    fields_at: usize,
    /// The first entry's flags, if any entry follows the master entry.
    entries_at: Option<usize>,
}

/// An entry as a walk over its node finds it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub id: StreamId,
    pub flags: i64,
    /// Position of the flags.
    pub at: usize,
    /// Number of field-value pairs.
    pub pairs: u64,
    /// Position of the first field (or, with the master's fields, of the
    /// first value).
    body: usize,
    /// Position of the lp-count.
    count_at: usize,
}

impl Entry {
    pub fn is_deleted(&self) -> bool {
        self.flags & FLAG_DELETED != 0
    }

    fn same_fields(&self) -> bool {
        self.flags & FLAG_SAMEFIELDS != 0
    }
}

/// The field-value pairs of one entry, read from its node.
#[derive(Clone, Copy, Debug)]
pub struct Fields<'a> {
    lp: &'a [u8],
    /// The master entry's first field, when the entry shares its fields.
    master: Option<usize>,
    body: usize,
    pairs: u64,
}

impl<'a> Fields<'a> {
    /// Number of field-value pairs.
    pub fn len(&self) -> usize {
        self.pairs as usize
    }

    pub fn is_empty(&self) -> bool {
        self.pairs == 0
    }

    /// The pairs in order; a listpack integer comes out as its decimal
    /// text (owned), anything else borrowed from the node.
    pub fn iter(&self) -> FieldIter<'a> {
        FieldIter { lp: self.lp, master: self.master, at: self.body, left: self.pairs }
    }
}

/// The pairs of a [`Fields`].
pub struct FieldIter<'a> {
    lp: &'a [u8],
    master: Option<usize>,
    at: usize,
    left: u64,
}

fn text(v: LpVal<'_>) -> Cow<'_, [u8]> {
    match v {
        LpVal::Int(n) => Cow::Owned(itoa::Buffer::new().format(n).as_bytes().to_vec()),
        LpVal::Bytes(b) => Cow::Borrowed(b),
    }
}

impl<'a> Iterator for FieldIter<'a> {
    type Item = (Cow<'a, [u8]>, Cow<'a, [u8]>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let field = match &mut self.master {
            Some(m) => {
                let (f, after) = listpack::element(self.lp, *m);
                *m = after;
                f
            }
            None => {
                let (f, after) = listpack::element(self.lp, self.at);
                self.at = after;
                f
            }
        };
        let (value, after) = listpack::element(self.lp, self.at);
        self.at = after;
        Some((text(field), text(value)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for FieldIter<'_> {}

/// Whether `fields`' names (every other element) are the master entry's,
/// in order, compared as their text as Redis compares them.
fn fields_match(lp: &[u8], m: &Master, fields: &[&[u8]]) -> bool {
    if fields.len() / 2 != m.fields as usize {
        return false;
    }
    let mut at = m.fields_at;
    for f in fields.iter().step_by(2) {
        let (v, after) = listpack::element(lp, at);
        let same = match v {
            LpVal::Bytes(b) => b == *f,
            LpVal::Int(n) => itoa::Buffer::new().format(n).as_bytes() == *f,
        };
        if !same {
            return false;
        }
        at = after;
    }
    true
}

/// Appends an entry's elements after the master entry or the last entry.
fn push_entry(lp: &mut LpBuilder, master: StreamId, id: StreamId, fields: &[&[u8]], same: bool) {
    let pairs = fields.len() / 2;
    lp.push_int(if same { FLAG_SAMEFIELDS } else { 0 });
    lp.push_int(id.ms.wrapping_sub(master.ms) as i64);
    lp.push_int(id.seq.wrapping_sub(master.seq) as i64);
    if !same {
        lp.push_int(pairs as i64);
    }
    for pair in fields.chunks_exact(2) {
        if !same {
            lp.push(pair[0]);
        }
        lp.push(pair[1]);
    }
    // flags, ms and seq deltas, the values; without the master's fields
    // also the count and the fields.
    let lp_count = 3 + pairs + if same { 0 } else { pairs + 1 };
    lp.push_int(lp_count as i64);
}

impl Node {
    /// A node whose master entry takes `fields`' field names, holding the
    /// entry `id` (its master ID), with room for `room` bytes.
    pub fn new(id: StreamId, fields: &[&[u8]], room: usize) -> Node {
        let mut lp = LpBuilder::with_capacity(room);
        lp.push_int(1);
        lp.push_int(0);
        lp.push_int((fields.len() / 2) as i64);
        for f in fields.iter().step_by(2) {
            lp.push(f);
        }
        lp.push_int(0);
        push_entry(&mut lp, id, id, fields, true);
        Node { lp: lp.finish() }
    }

    /// A node of listpack bytes already checked ([`check`]).
    pub fn from_checked(lp: Vec<u8>) -> Node {
        Node { lp }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.lp
    }

    /// Heap bytes the node's buffer holds.
    pub fn capacity(&self) -> usize {
        self.lp.capacity()
    }

    /// Gives back the room kept for appends (a node closed to them).
    pub fn shrink(&mut self) {
        self.lp.shrink_to_fit();
    }

    /// Live entries.
    pub fn live(&self) -> u64 {
        int_at(&self.lp, listpack::HEADER).0 as u64
    }

    /// Entries marked deleted.
    pub fn deleted(&self) -> u64 {
        let (_, at) = int_at(&self.lp, listpack::HEADER);
        int_at(&self.lp, at).0 as u64
    }

    pub fn master(&self) -> Master {
        let lp = &self.lp[..];
        let (_, at) = int_at(lp, listpack::HEADER);
        let (_, at) = int_at(lp, at);
        let (fields, fields_at) = int_at(lp, at);
        let mut term = fields_at;
        for _ in 0..fields {
            term = listpack::element(lp, term).1;
        }
        Master { fields: fields as u64, fields_at, entries_at: listpack::next(lp, term) }
    }

    /// Appends entry `id` (after every entry of the node) to the node
    /// whose master ID is `master`.
    pub fn append(&mut self, master: StreamId, id: StreamId, fields: &[&[u8]]) {
        let m = self.master();
        let same = fields_match(&self.lp, &m, fields);
        let live = self.live();
        listpack::replace_int(&mut self.lp, listpack::HEADER, live as i64 + 1);
        let mut lp = LpBuilder::resume(std::mem::take(&mut self.lp));
        push_entry(&mut lp, master, id, fields, same);
        self.lp = lp.finish();
    }

    /// The entry whose flags are at `at`.
    pub fn entry(&self, master: StreamId, m: &Master, at: usize) -> Entry {
        let lp = &self.lp[..];
        let (flags, p) = int_at(lp, at);
        let (ms, p) = int_at(lp, p);
        let (seq, p) = int_at(lp, p);
        let id = StreamId { ms: master.ms.wrapping_add(ms as u64), seq: master.seq.wrapping_add(seq as u64) };
        let same = flags & FLAG_SAMEFIELDS != 0;
        let (pairs, body) = if same { (m.fields, p) } else { let (n, b) = int_at(lp, p); (n as u64, b) };
        let mut count_at = body;
        for _ in 0..if same { pairs } else { 2 * pairs } {
            count_at = listpack::element(lp, count_at).1;
        }
        Entry { id, flags, at, pairs, body, count_at }
    }

    /// The first entry's position.
    pub fn first(&self, m: &Master) -> Option<usize> {
        m.entries_at
    }

    /// The position of the entry after `e`.
    pub fn next(&self, e: &Entry) -> Option<usize> {
        listpack::next(&self.lp, e.count_at)
    }

    /// The last entry's position.
    pub fn last(&self) -> Option<usize> {
        self.back_from(listpack::last(&self.lp)?)
    }

    /// The position of the entry before `e`.
    pub fn prev(&self, e: &Entry) -> Option<usize> {
        self.back_from(listpack::prev(&self.lp, e.at)?)
    }

    /// The flags of the entry whose lp-count is at `count_at`: that many
    /// elements back. The master entry's terminator (0) ends the walk.
    fn back_from(&self, count_at: usize) -> Option<usize> {
        let (n, _) = int_at(&self.lp, count_at);
        let mut at = count_at;
        for _ in 0..n {
            at = listpack::prev(&self.lp, at)?;
        }
        (n > 0).then_some(at)
    }

    /// The pairs of `e`.
    pub fn fields(&self, m: &Master, e: &Entry) -> Fields<'_> {
        Fields { lp: &self.lp, master: e.same_fields().then_some(m.fields_at), body: e.body, pairs: e.pairs }
    }

    /// The ID of the node's last entry, deleted or not.
    pub fn last_id(&self, master: StreamId) -> StreamId {
        let m = self.master();
        match self.last() {
            Some(at) => self.entry(master, &m, at).id,
            None => master,
        }
    }

    /// Marks `e` deleted and moves it from the live count to the deleted
    /// one. Returns the live entries left.
    pub fn mark_deleted(&mut self, e: &Entry) -> u64 {
        self.flag_deleted(e);
        let (live, deleted) = (self.live() - 1, self.deleted() + 1);
        self.set_counts(live, deleted);
        live
    }

    /// Sets `e`'s deleted flag, leaving the counts to the caller. Returns
    /// how far what follows the flags moved: nothing for flags as Redis
    /// encodes them (one byte), but a loaded node may have them wider.
    pub fn flag_deleted(&mut self, e: &Entry) -> isize {
        listpack::replace_int(&mut self.lp, e.at, e.flags | FLAG_DELETED)
    }

    /// Writes the master entry's counts (which may move everything after
    /// them, when a count's encoding changes size).
    pub fn set_counts(&mut self, live: u64, deleted: u64) {
        listpack::replace_int(&mut self.lp, listpack::HEADER, live as i64);
        let (_, at) = int_at(&self.lp, listpack::HEADER);
        listpack::replace_int(&mut self.lp, at, deleted as i64);
    }
}

/// What checking a node found.
#[derive(Debug)]
pub(super) struct Checked {
    pub live: u64,
    /// Its last entry's ID (deleted or not).
    pub last: StreamId,
}

/// The next element as an integer (digits read as the integer they
/// spell, as Redis's `lpGetIntegerIfValid`), or the error `what`.
fn next_int<'a>(it: &mut impl Iterator<Item = LpVal<'a>>, what: &'static str) -> Result<i64, &'static str> {
    match it.next() {
        Some(LpVal::Int(n)) => Ok(n),
        Some(LpVal::Bytes(b)) => tern_resp::parse_i64(b).ok_or(what),
        None => Err(what),
    }
}

/// Skips `n` elements, or fails with `what` where they run out.
fn skip<'a>(it: &mut impl Iterator<Item = LpVal<'a>>, n: i64, what: &'static str) -> Result<(), &'static str> {
    for _ in 0..n {
        it.next().ok_or(what)?;
    }
    Ok(())
}

/// Checks that `vals` (a listpack's elements, already checked as a
/// listpack) are a stream node whose master ID is `master`, as Redis's
/// deep sanitisation does, and more: the flags known, the deleted count
/// equal to the entries marked, at least one entry, the first entry's ID
/// the master ID (as Redis creates every node) and the IDs strictly
/// increasing.
pub(super) fn check(vals: &[LpVal<'_>], master: StreamId) -> Result<Checked, &'static str> {
    let it = &mut vals.iter().copied();
    let live = next_int(it, "stream node without its entry count")?;
    let deleted = next_int(it, "stream node without its deleted count")?;
    let fields = next_int(it, "stream node without its master field count")?;
    if live < 0 || deleted < 0 || fields < 0 {
        return Err("stream node with a negative count");
    }
    skip(it, fields, "stream node shorter than its master fields")?;
    if next_int(it, "stream master entry without its terminator")? != 0 {
        return Err("stream master entry without its terminator");
    }
    let total = live.checked_add(deleted).ok_or("stream node counts overflow")?;
    let (mut marked, mut last) = (0, None);
    for _ in 0..total {
        let flags = next_int(it, "stream entry without its flags")?;
        if !(0..=FLAG_DELETED | FLAG_SAMEFIELDS).contains(&flags) {
            return Err("stream entry with unknown flags");
        }
        let ms = next_int(it, "stream entry without its ID")?;
        let seq = next_int(it, "stream entry without its ID")?;
        let id = StreamId { ms: master.ms.wrapping_add(ms as u64), seq: master.seq.wrapping_add(seq as u64) };
        let same = flags & FLAG_SAMEFIELDS != 0;
        let pairs = if same { fields } else { next_int(it, "stream entry without its field count")? };
        if pairs < 0 {
            return Err("stream entry with a negative field count");
        }
        let elems = if same { pairs } else { pairs.saturating_mul(2) };
        skip(it, elems, "stream entry shorter than its fields")?;
        let want = if same { pairs + 3 } else { elems.saturating_add(4) };
        if next_int(it, "stream entry without its lp-count")? != want {
            return Err("stream entry with a wrong lp-count");
        }
        match last {
            None if id != master => return Err("stream node key differs from its first entry"),
            Some(l) if id <= l => return Err("stream entries out of order"),
            _ => last = Some(id),
        }
        marked += i64::from(flags & FLAG_DELETED != 0);
    }
    if it.next().is_some() {
        return Err("stream node longer than its entries");
    }
    if marked != deleted {
        return Err("stream node deleted count differs from its entries");
    }
    let last = last.ok_or("stream node without entries")?;
    Ok(Checked { live: live as u64, last })
}
