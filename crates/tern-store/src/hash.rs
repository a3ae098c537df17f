//! Hash values: field → value maps with optional per-field deadlines.
//!
//! ```text
//!  Hash ─┬─ repr: Pack  one Vec<u8>: [len field][len value] [len field][len value] ...
//!        │         └─ lengths are LEB128 varints, fields in insertion order
//!        │   or Table  chained table of Field { hash, flen, data = field ++ value }
//!        └─ ttl: None, or Box<FieldTtls> { field → (deadline, serial), (deadline, serial) → field ordered }
//! ```
//!
//! A hash starts as a pack (`OBJECT ENCODING listpack`), one contiguous
//! allocation that is scanned linearly; it becomes a table (`hashtable`) in
//! one step when it would hold more than `hash-max-listpack-entries` fields
//! or a field or value longer than `hash-max-listpack-value` bytes, and never
//! goes back, as in Redis.
//!
//! Field TTLs live beside the fields, so a hash that never had one pays only
//! the null `ttl` pointer. The ordered set gives the next deadline in
//! O(log n) and lets expiry remove exactly the due fields without scanning
//! the others; the shard indexes hashes by that next deadline.
//!
//! Goals: Redis's encodings and conversion rules, memory close to a
//! listpack while small, SCAN-stable cursors when large.
//! Non-goals: converting back to a pack, integer-encoded values.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use hashbrown::{DefaultHashBuilder, HashMap};

use tern_table::stage::{ItemHint, Lookups, Reach, Stager};

/// The most keys one prefetch group keeps in flight together: the upper
/// bound of `prefetch-batch-max-size` (Redis 8's range for it) and the
/// length of the on-stack arrays a group's stages fill.
pub const MAX_PREFETCH_GROUP: usize = 128;

/// The conversion thresholds (`hash-max-listpack-entries` / `-value`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashLimits {
    pub max_entries: usize,
    pub max_value: usize,
}

impl Default for HashLimits {
    fn default() -> Self {
        HashLimits { max_entries: 512, max_value: 64 }
    }
}

/// A hash value.
#[derive(Clone, Debug, Default)]
pub struct Hash {
    repr: Repr,
    ttl: Option<Box<FieldTtls>>,
}

#[derive(Clone, Debug)]
enum Repr {
    Pack(Pack),
    Table(Box<Big>),
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Pack(Pack::default())
    }
}

// ---------------------------------------------------------------- pack --

#[derive(Clone, Debug, Default)]
struct Pack {
    buf: Vec<u8>,
    len: u32,
}

pub(crate) fn put_varint(out: &mut Vec<u8>, n: usize) {
    let mut b = [0u8; 10];
    let k = write_varint(&mut b, n);
    out.extend_from_slice(&b[..k]);
}

/// Writes `n` as a varint (7 bits a byte, low first, high bit: more
/// follow) at the start of `out`; returns its length.
#[inline]
pub(crate) fn write_varint(out: &mut [u8], mut n: usize) -> usize {
    let mut i = 0;
    while n >= 0x80 {
        out[i] = (n as u8) | 0x80;
        n >>= 7;
        i += 1;
    }
    out[i] = n as u8;
    i + 1
}

pub(crate) fn varint_len(mut n: usize) -> usize {
    let mut l = 1;
    while n >= 0x80 {
        n >>= 7;
        l += 1;
    }
    l
}

/// Equality of a packed entry's bytes with a wanted member or field, for
/// the scans of small packs: lengths first, then the last byte, and only
/// then the bytes, so that entries of the same length (`m10`..`m99`,
/// `user:1001`..) rarely cost a call to memcmp.
#[inline]
pub(crate) fn same_bytes(entry: &[u8], wanted: &[u8]) -> bool {
    entry.len() == wanted.len() && entry.last() == wanted.last() && entry == wanted
}

/// Reads a varint at `pos`; the pack is only ever written by this module,
/// so its lengths are well formed.
#[inline]
pub(crate) fn get_varint(buf: &[u8], pos: &mut usize) -> usize {
    let mut n = 0usize;
    let mut shift = 0;
    loop {
        let b = buf[*pos];
        *pos += 1;
        n |= usize::from(b & 0x7f) << shift;
        if b < 0x80 {
            return n;
        }
        shift += 7;
    }
}

/// One pack entry: where it starts and ends, and its field and value ranges.
#[derive(Clone, Copy, Debug)]
struct Slot {
    start: usize,
    field: (usize, usize),
    value: (usize, usize),
    end: usize,
}

struct PackIter<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Iterator for PackIter<'_> {
    type Item = Slot;
    #[inline]
    fn next(&mut self) -> Option<Slot> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let start = self.pos;
        let fl = get_varint(self.buf, &mut self.pos);
        let field = (self.pos, self.pos + fl);
        self.pos += fl;
        let vl = get_varint(self.buf, &mut self.pos);
        let value = (self.pos, self.pos + vl);
        self.pos += vl;
        Some(Slot { start, field, value, end: self.pos })
    }
}

impl Pack {
    fn slots(&self) -> PackIter<'_> {
        PackIter { buf: &self.buf, pos: 0 }
    }

    fn bytes(&self, r: (usize, usize)) -> &[u8] {
        &self.buf[r.0..r.1]
    }

    fn find(&self, field: &[u8]) -> Option<Slot> {
        self.slots().find(|s| same_bytes(self.bytes(s.field), field))
    }

    /// Looks fields up by scanning on from where the previous one was
    /// found, wrapping around, and calls `found(i, slot)` for the i-th:
    /// fields asked in stored order (the usual case: a client reads or
    /// rewrites the fields it wrote, in the same order) cost one pass and no
    /// hashing. Gives up (false) once it has visited more than two passes'
    /// worth of entries, for the caller's hashed single pass.
    fn follow<'f>(&self, fields: impl Iterator<Item = &'f [u8]>, mut found: impl FnMut(usize, Option<Slot>)) -> bool {
        let mut budget = 2 * self.len as usize;
        let mut pos = 0;
        for (i, f) in fields.enumerate() {
            budget += 2;
            let mut it = PackIter { buf: &self.buf, pos };
            let mut wrapped = pos == 0;
            let mut seen = 0;
            let slot = loop {
                let s = match it.next() {
                    Some(s) => s,
                    None if !wrapped => {
                        wrapped = true;
                        it = PackIter { buf: &self.buf, pos: 0 };
                        continue;
                    }
                    None => break None,
                };
                if wrapped && s.start >= pos && pos != 0 {
                    break None;
                }
                seen += 1;
                if self.bytes(s.field) == f {
                    pos = s.end;
                    break Some(s);
                }
                if seen > self.len {
                    break None;
                }
            };
            budget = match budget.checked_sub(seen as usize) {
                Some(b) => b,
                None => return false,
            };
            found(i, slot);
            if pos >= self.buf.len() {
                pos = 0;
            }
        }
        true
    }

    /// Overwrites existing fields whose new values have the length of the
    /// old ones, in place (a client rewriting its fields). False, with
    /// nothing changed, if any field is new or changes length.
    fn overwrite_same_len(&mut self, pairs: &[Pair<'_>]) -> bool {
        let mut slots = Vec::with_capacity(pairs.len());
        let mut ok = true;
        let done = self.follow(pairs.iter().map(|p| p.0), |i, s| match s {
            Some(s) if s.value.1 - s.value.0 == pairs[i].1.len() => slots.push(s),
            _ => ok = false,
        });
        if !done || !ok {
            return false;
        }
        for (s, (_, v)) in slots.iter().zip(pairs) {
            self.buf[s.value.0..s.value.1].copy_from_slice(v);
        }
        true
    }

    fn push(&mut self, field: &[u8], value: &[u8]) {
        let need = varint_len(field.len()) + field.len() + varint_len(value.len()) + value.len();
        // Exact growth: a pack is sized to its content, as a listpack is.
        self.buf.reserve_exact(need);
        put_varint(&mut self.buf, field.len());
        self.buf.extend_from_slice(field);
        put_varint(&mut self.buf, value.len());
        self.buf.extend_from_slice(value);
        self.len += 1;
    }

    fn replace_value(&mut self, s: Slot, value: &[u8]) {
        let mut enc = Vec::with_capacity(varint_len(value.len()) + value.len());
        put_varint(&mut enc, value.len());
        enc.extend_from_slice(value);
        let vstart = s.field.1;
        self.buf.splice(vstart..s.end, enc);
        self.shrink();
    }

    fn remove_slot(&mut self, s: Slot) {
        self.buf.drain(s.start..s.end);
        self.len -= 1;
        self.shrink();
    }

    fn shrink(&mut self) {
        if self.buf.capacity() > self.buf.len() + self.buf.len() / 4 + 16 {
            self.buf.shrink_to_fit();
        }
    }
}

// --------------------------------------------------------------- table --

/// A hash in its table form: one tern-table item per field (the field is
/// the item's key, the value its extra bytes), so a field costs one
/// allocation and a bucket slot, lookups can be prefetched, and growing
/// or shrinking moves a few buckets per operation instead of rehashing
/// every field at once.
#[derive(Debug)]
struct Big {
    table: tern_table::Table<(), DefaultHashBuilder>,
}

impl Default for Big {
    fn default() -> Self {
        Big { table: tern_table::Table::with_hasher(*field_hasher()) }
    }
}

impl Clone for Big {
    fn clone(&self) -> Self {
        let mut big = Big::default();
        for e in self.table.iter() {
            big.insert(e.key(), e.extra());
        }
        big
    }
}

/// The seeded hasher of large hashes' fields and large sets' members, one
/// per process (the tables re-hash with it when they resize, so lookups
/// must hash the same way).
pub(crate) fn field_hasher() -> &'static DefaultHashBuilder {
    static HASHER: OnceLock<DefaultHashBuilder> = OnceLock::new();
    HASHER.get_or_init(DefaultHashBuilder::default)
}

/// A large hash's fields (or a large set's members) for the staged-lookup
/// engine (HMGET, SMISMEMBER): the value is in the item, so stage 2's span
/// is all there is to ask for.
pub(crate) struct Fields<'a, F> {
    pub(crate) table: &'a tern_table::Table<(), DefaultHashBuilder>,
    pub(crate) fields: &'a [F],
    /// The fields' hashes, by the table's own hasher.
    pub(crate) hashes: &'a [u64],
}

impl<F: AsRef<[u8]>> Lookups for Fields<'_, F> {
    #[inline]
    fn bucket(&mut self, i: usize) {
        self.table.prefetch_bucket(self.hashes[i]);
    }
    #[inline]
    fn item(&mut self, i: usize) -> ItemHint {
        self.table.item_hint(self.hashes[i])
    }
    #[inline]
    fn key_len(&self, i: usize) -> usize {
        self.fields[i].as_ref().len()
    }
}

/// The hash a large hash, set or sorted set files a field or member
/// under (their tables re-hash with [`field_hasher`] as they resize, so
/// lookups must hash the same way): what a pipeline's planner computes
/// ahead for the member its command looks up (`Shard::prefetch_value`,
/// [`crate::ZSet::prefetch_member`]).
pub fn member_hash(m: &[u8]) -> u64 {
    tern_table::hash_key(field_hasher(), m)
}

impl Big {
    fn find(&self, field: &[u8]) -> Option<&[u8]> {
        self.table.get(field, member_hash(field)).map(|e| e.extra())
    }

    /// Sets `field`; true if it is new. A value of the same length is
    /// overwritten in place.
    fn insert(&mut self, field: &[u8], value: &[u8]) -> bool {
        let h = member_hash(field);
        if let Some(e) = self.table.get_mut(field, h) {
            if e.extra().len() == value.len() {
                e.extra_mut().copy_from_slice(value);
                return false;
            }
            self.table.upsert(h, tern_table::Item::new_boxed(field, (), None, value));
            return false;
        }
        self.table.insert_with_extra(field, h, (), None, value);
        true
    }

    fn remove(&mut self, field: &[u8]) -> bool {
        self.table.remove(field, member_hash(field)).is_some()
    }
}

// ---------------------------------------------------------------- ttls --

/// Field deadlines. Each field with a TTL gets a serial number so that the
/// ordered index is keyed by `(deadline, serial)`: moving a deadline (HGETEX
/// EX on every read) re-keys the entry without allocating, and the field's
/// bytes move along with it.
#[derive(Clone, Debug, Default)]
struct FieldTtls {
    by_field: HashMap<Box<[u8]>, (u64, u64)>,
    by_time: BTreeMap<(u64, u64), Box<[u8]>>,
    next_serial: u64,
    bytes: usize,
}

const TTL_OVERHEAD: usize = 96;

impl FieldTtls {
    fn set(&mut self, field: &[u8], when: u64) {
        match self.by_field.get_mut(field) {
            Some((w, serial)) => {
                if *w == when {
                    return;
                }
                if let Some(f) = self.by_time.remove(&(*w, *serial)) {
                    self.by_time.insert((when, *serial), f);
                }
                *w = when;
            }
            None => {
                let serial = self.next_serial;
                self.next_serial += 1;
                self.by_field.insert(field.into(), (when, serial));
                self.by_time.insert((when, serial), field.into());
                self.bytes += TTL_OVERHEAD + 2 * field.len();
            }
        }
    }

    fn clear(&mut self, field: &[u8]) -> bool {
        match self.by_field.remove(field) {
            Some(k) => {
                self.by_time.remove(&k);
                self.bytes -= TTL_OVERHEAD + 2 * field.len();
                true
            }
            None => false,
        }
    }
}

// ---------------------------------------------------------------- hash --

/// A field and its value, borrowed from a hash.
pub type Pair<'a> = (&'a [u8], &'a [u8]);

impl Hash {
    /// [`crate::Set::prefetch_head`] for a hash (`member`: the field's
    /// hash).
    pub fn prefetch_head(&self, member: Option<u64>) {
        match (&self.repr, member) {
            (Repr::Pack(p), _) => tern_table::prefetch_head(p.buf.as_ptr(), p.buf.len()),
            (Repr::Table(b), Some(h)) => b.table.prefetch_bucket(h),
            (Repr::Table(b), None) => tern_table::prefetch((&**b as *const Big).cast()),
        }
    }

    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Pack(p) => p.len as usize,
            Repr::Table(b) => b.table.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the hash is in its compact form.
    pub fn is_compact(&self) -> bool {
        matches!(self.repr, Repr::Pack(_))
    }

    /// `OBJECT ENCODING`: Redis names a listpack that has carried field
    /// TTLs `listpackex`.
    pub fn encoding(&self) -> &'static str {
        match (&self.repr, &self.ttl) {
            (Repr::Pack(_), None) => "listpack",
            (Repr::Pack(_), Some(_)) => "listpackex",
            (Repr::Table(_), _) => "hashtable",
        }
    }

    /// Heap bytes held, kept up to date without walking the fields.
    pub fn heap_size(&self) -> usize {
        let base = match &self.repr {
            Repr::Pack(p) => p.buf.capacity(),
            Repr::Table(b) => tern_table::size_class(std::mem::size_of::<Big>()) + b.table.mem_bytes(),
        };
        base + self.ttl.as_ref().map_or(0, |t| t.bytes + std::mem::size_of::<FieldTtls>())
    }

    /// Allocations freeing the hash releases (Redis's lazyfree effort).
    pub fn free_effort(&self) -> usize {
        match &self.repr {
            Repr::Pack(_) => 1,
            Repr::Table(b) => b.table.len(),
        }
    }

    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        match &self.repr {
            Repr::Pack(p) => p.find(field).map(|s| p.bytes(s.value)),
            Repr::Table(b) => b.find(field),
        }
    }

    pub fn contains(&self, field: &[u8]) -> bool {
        self.get(field).is_some()
    }

    /// Looks several fields up in one pass over a pack (a table answers each
    /// in O(1)); `out[i]` is the value of `fields[i]`.
    pub fn get_many<'a, F: AsRef<[u8]>>(&'a self, fields: &[F], out: &mut Vec<Option<&'a [u8]>>) {
        self.get_many_staged(fields, out, 0)
    }

    /// [`Hash::get_many`] that walks a table's fields `group` at a time
    /// through the prefetch stages (buckets, then items, then reads), so
    /// their cache misses overlap (HMGET on a large hash;
    /// `prefetch-batch-max-size`, 0 = one at a time).
    pub fn get_many_staged<'a, F: AsRef<[u8]>>(&'a self, fields: &[F], out: &mut Vec<Option<&'a [u8]>>, group: usize) {
        out.clear();
        out.resize(fields.len(), None);
        match &self.repr {
            Repr::Table(b) if group > 1 && fields.len() > 1 => {
                let hashes: Vec<u64> = fields.iter().map(|f| member_hash(f.as_ref())).collect();
                let mut src = Fields { table: &b.table, fields, hashes: &hashes };
                let mut st = Stager::new(group.min(MAX_PREFETCH_GROUP), Reach::Value, fields.len());
                for (i, o) in out.iter_mut().enumerate() {
                    st.before(&mut src, i);
                    *o = b.table.get(fields[i].as_ref(), hashes[i]).map(|e| e.extra());
                }
            }
            Repr::Table(b) => {
                for (o, f) in out.iter_mut().zip(fields) {
                    *o = b.find(f.as_ref());
                }
            }
            Repr::Pack(p) if fields.len() <= 2 => {
                for (o, f) in out.iter_mut().zip(fields) {
                    *o = p.find(f.as_ref()).map(|s| p.bytes(s.value));
                }
            }
            Repr::Pack(p)
                if p.follow(fields.iter().map(AsRef::as_ref), |i, s| out[i] = s.map(|s| p.bytes(s.value))) => {}
            Repr::Pack(p) => {
                // Asked fields by name → first position asked; repeats copy it.
                let mut want: HashMap<&[u8], usize> = HashMap::with_capacity(fields.len());
                let mut first = Vec::with_capacity(fields.len());
                for (i, f) in fields.iter().enumerate() {
                    first.push(*want.entry(f.as_ref()).or_insert(i));
                }
                let mut left = want.len();
                for s in p.slots() {
                    if let Some(&i) = want.get(p.bytes(s.field)) {
                        out[i] = Some(p.bytes(s.value));
                        left -= 1;
                        if left == 0 {
                            break;
                        }
                    }
                }
                for (i, &f) in first.iter().enumerate() {
                    if f != i {
                        out[i] = out[f];
                    }
                }
            }
        }
    }

    /// Redis's hashTypeTryConversion before a write of `new_fields` pairs
    /// whose longest field or value is `longest` bytes: a pack that would
    /// surely exceed a limit becomes a table first.
    pub fn prepare_write(&mut self, new_fields: usize, longest: usize, lim: HashLimits) {
        if self.is_compact() && (new_fields > lim.max_entries || longest > lim.max_value) {
            self.convert();
        }
    }

    fn convert(&mut self) {
        if let Repr::Pack(p) = &self.repr {
            let mut big = Big::default();
            for s in p.slots() {
                big.insert(p.bytes(s.field), p.bytes(s.value));
            }
            self.repr = Repr::Table(Box::new(big));
        }
    }

    /// Sets a field, dropping any TTL it had (HSET). Returns true if the
    /// field is new.
    pub fn set(&mut self, field: &[u8], value: &[u8], lim: HashLimits) -> bool {
        if let Some(t) = &mut self.ttl {
            t.clear(field);
        }
        self.set_keep_ttl(field, value, lim)
    }

    /// Sets a field and keeps its TTL (HINCRBY, HSETEX KEEPTTL).
    pub fn set_keep_ttl(&mut self, field: &[u8], value: &[u8], lim: HashLimits) -> bool {
        if field.len() > lim.max_value || value.len() > lim.max_value {
            self.convert();
        }
        match &mut self.repr {
            Repr::Pack(p) => {
                if let Some(s) = p.find(field) {
                    p.replace_value(s, value);
                    return false;
                }
                if p.len as usize >= lim.max_entries {
                    self.convert();
                    return self.set_keep_ttl(field, value, lim);
                }
                p.push(field, value);
                true
            }
            Repr::Table(b) => b.insert(field, value),
        }
    }

    /// Sets several fields in one pass over a pack (HSET, HSETEX): the pack
    /// is rebuilt once with the new values, new fields appended in argument
    /// order; a repeated field takes its last value. `keep_ttl` keeps the
    /// TTLs of fields that had one. Returns how many fields were new.
    pub fn set_many(&mut self, pairs: &[Pair<'_>], keep_ttl: bool, lim: HashLimits) -> usize {
        let longest = pairs.iter().map(|(f, v)| f.len().max(v.len())).max().unwrap_or(0);
        self.prepare_write(pairs.len(), longest, lim);
        if !keep_ttl {
            if let Some(t) = &mut self.ttl {
                for (f, _) in pairs {
                    t.clear(f);
                }
            }
        }
        let Repr::Pack(p) = &mut self.repr else {
            return pairs.iter().filter(|(f, v)| self.set_keep_ttl(f, v, lim)).count();
        };
        if pairs.len() == 1 {
            return usize::from(self.set_keep_ttl(pairs[0].0, pairs[0].1, lim));
        }
        if p.overwrite_same_len(pairs) {
            return 0;
        }
        // Field → (index of its last value, seen in the pack).
        let mut want: HashMap<&[u8], (usize, bool)> = HashMap::with_capacity(pairs.len());
        for (i, (f, _)) in pairs.iter().enumerate() {
            want.entry(f).or_insert((i, false)).0 = i;
        }
        let mut found = 0;
        for s in p.slots() {
            if let Some(w) = want.get_mut(&p.buf[s.field.0..s.field.1]) {
                w.1 = true;
                found += 1;
            }
        }
        let added = want.len() - found;
        if p.len as usize + added > lim.max_entries {
            self.convert();
            return pairs.iter().filter(|(f, v)| self.set_keep_ttl(f, v, lim)).count();
        }
        let mut size = p.buf.len();
        for (f, &(i, seen)) in &want {
            let v = pairs[i].1;
            size += varint_len(v.len()) + v.len();
            if !seen {
                size += varint_len(f.len()) + f.len();
            }
        }
        let mut out = Vec::with_capacity(size);
        for s in p.slots() {
            let field = &p.buf[s.field.0..s.field.1];
            out.extend_from_slice(&p.buf[s.start..s.field.1]);
            match want.get(field) {
                Some(&(i, _)) => {
                    put_varint(&mut out, pairs[i].1.len());
                    out.extend_from_slice(pairs[i].1);
                }
                None => out.extend_from_slice(&p.buf[s.field.1..s.end]),
            }
        }
        for (f, _) in pairs {
            if let Some(w) = want.get_mut(f) {
                if !w.1 {
                    w.1 = true;
                    let v = pairs[w.0].1;
                    put_varint(&mut out, f.len());
                    out.extend_from_slice(f);
                    put_varint(&mut out, v.len());
                    out.extend_from_slice(v);
                }
            }
        }
        out.shrink_to_fit();
        p.buf = out;
        p.len += added as u32;
        added
    }

    /// Removes several fields in one pass over a pack (HDEL, HGETDEL).
    /// Returns how many were there.
    pub fn remove_many<F: AsRef<[u8]>>(&mut self, fields: &[F]) -> usize {
        match &mut self.repr {
            Repr::Pack(p) if fields.len() > 1 => {
                let want: hashbrown::HashSet<&[u8]> = fields.iter().map(AsRef::as_ref).collect();
                let mut out = Vec::with_capacity(p.buf.len());
                let mut gone = 0;
                for s in p.slots() {
                    if want.contains(&p.buf[s.field.0..s.field.1]) {
                        gone += 1;
                    } else {
                        out.extend_from_slice(&p.buf[s.start..s.end]);
                    }
                }
                if gone > 0 {
                    out.shrink_to_fit();
                    p.buf = out;
                    p.len -= gone as u32;
                    if let Some(t) = &mut self.ttl {
                        for f in &want {
                            t.clear(f);
                        }
                    }
                }
                gone
            }
            _ => fields.iter().filter(|f| self.remove(f.as_ref())).count(),
        }
    }

    /// Removes a field (and its TTL). Returns true if it was there.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        let gone = match &mut self.repr {
            Repr::Pack(p) => match p.find(field) {
                Some(s) => {
                    p.remove_slot(s);
                    true
                }
                None => false,
            },
            Repr::Table(b) => b.remove(field),
        };
        if gone {
            if let Some(t) = &mut self.ttl {
                t.clear(field);
            }
        }
        gone
    }

    /// Fields and values, in pack order or table order.
    pub fn iter(&self) -> Iter<'_> {
        match &self.repr {
            Repr::Pack(p) => Iter(IterInner::Pack(p, p.slots())),
            Repr::Table(b) => Iter(IterInner::Table(b.table.iter())),
        }
    }

    /// One HSCAN step: a pack answers whole with cursor 0, as Redis does
    /// for a listpack; a table walks one bucket per step.
    pub fn scan<'a>(&'a self, cursor: u64, count: usize, mut f: impl FnMut(&'a [u8], &'a [u8])) -> u64 {
        match &self.repr {
            Repr::Pack(p) => {
                for s in p.slots() {
                    f(p.bytes(s.field), p.bytes(s.value));
                }
                0
            }
            Repr::Table(b) => {
                let mut cursor = cursor;
                let mut seen = 0;
                let mut steps = count.saturating_mul(10).max(1);
                loop {
                    cursor = b.table.scan(cursor, |e| {
                        seen += 1;
                        f(e.key(), e.extra())
                    });
                    steps -= 1;
                    if cursor == 0 || seen >= count || steps == 0 {
                        return cursor;
                    }
                }
            }
        }
    }

    /// A random field (None when empty). Table draws pick a random
    /// non-empty bucket, then an entry of its chain, like dictGetRandomKey.
    pub fn random(&self, rng: &mut impl rand::Rng) -> Option<Pair<'_>> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        match &self.repr {
            Repr::Pack(_) => self.iter().nth(rng.gen_range(0..n)),
            Repr::Table(b) => b.table.random(&mut || rng.gen::<u64>()).map(|e| (e.key(), e.extra())),
        }
    }

    // ---- field TTLs ----

    /// The deadline of a field, if it has one.
    pub fn field_expire(&self, field: &[u8]) -> Option<u64> {
        self.ttl.as_ref().and_then(|t| t.by_field.get(field).map(|k| k.0))
    }

    /// A field's deadline and the serial number of its TTL (higher: set
    /// later), which orders fields of equal deadline as Redis's listpack
    /// with TTLs does (the later set first).
    pub fn field_expire_serial(&self, field: &[u8]) -> Option<(u64, u64)> {
        self.ttl.as_ref().and_then(|t| t.by_field.get(field).copied())
    }

    /// Sets the deadline of an existing field.
    pub fn set_field_expire(&mut self, field: &[u8], when: u64) {
        self.ttl.get_or_insert_with(Default::default).set(field, when);
    }

    /// Clears a field's deadline; false if it had none.
    pub fn persist_field(&mut self, field: &[u8]) -> bool {
        self.ttl.as_mut().is_some_and(|t| t.clear(field))
    }

    /// Fields that carry a deadline.
    pub fn volatile_fields(&self) -> usize {
        self.ttl.as_ref().map_or(0, |t| t.by_field.len())
    }

    /// The earliest field deadline.
    pub fn next_deadline(&self) -> Option<u64> {
        self.ttl.as_ref().and_then(|t| t.by_time.first_key_value().map(|(k, _)| k.0))
    }

    /// True when every field has a deadline and all have passed: the hash
    /// is gone even if no one removed it yet.
    pub fn all_expired(&self, now: u64) -> bool {
        match &self.ttl {
            None => false,
            Some(t) => t.by_field.len() == self.len() && t.by_time.last_key_value().is_some_and(|(k, _)| k.0 <= now),
        }
    }

    /// Removes the fields whose deadline has passed, found in deadline order
    /// without looking at the others. Returns how many.
    pub fn expire_fields(&mut self, now: u64) -> usize {
        self.expire_fields_with(now, |_| {})
    }

    /// [`Hash::expire_fields`], calling `gone` with each field removed.
    pub fn expire_fields_with(&mut self, now: u64, mut gone: impl FnMut(&[u8])) -> usize {
        let mut n = 0;
        while let Some(due) = self
            .ttl
            .as_ref()
            .and_then(|t| t.by_time.first_key_value())
            .filter(|(k, _)| k.0 <= now)
            .map(|(_, f)| f.clone())
        {
            self.remove(&due);
            gone(&due);
            n += 1;
        }
        n
    }
}

impl PartialEq for Hash {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self.iter().all(|(f, v)| other.get(f) == Some(v))
            && self.iter().all(|(f, _)| self.field_expire(f) == other.field_expire(f))
    }
}

/// Iterator over a hash's fields and values.
pub struct Iter<'a>(IterInner<'a>);

enum IterInner<'a> {
    Pack(&'a Pack, PackIter<'a>),
    Table(tern_table::Iter<'a, ()>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = Pair<'a>;
    #[inline]
    fn next(&mut self) -> Option<Pair<'a>> {
        match &mut self.0 {
            IterInner::Pack(p, it) => it.next().map(|s| (p.bytes(s.field), p.bytes(s.value))),
            IterInner::Table(it) => it.next().map(|e| (e.key(), e.extra())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap as Model;

    const LIM: HashLimits = HashLimits { max_entries: 8, max_value: 16 };

    fn check(h: &Hash, m: &Model<Vec<u8>, Vec<u8>>) {
        assert_eq!(h.len(), m.len());
        for (k, v) in m {
            assert_eq!(h.get(k), Some(v.as_slice()));
        }
        assert_eq!(h.iter().count(), m.len());
        for (f, v) in h.iter() {
            assert_eq!(m.get(f).map(Vec::as_slice), Some(v));
        }
    }

    #[test]
    fn converts_at_entry_threshold() {
        let mut h = Hash::new();
        for i in 0..8 {
            assert!(h.set(format!("f{i}").as_bytes(), b"v", LIM));
        }
        assert_eq!(h.encoding(), "listpack");
        assert!(!h.set(b"f0", b"w", LIM));
        assert_eq!(h.encoding(), "listpack");
        assert!(h.set(b"f8", b"v", LIM));
        assert_eq!(h.encoding(), "hashtable");
        assert_eq!(h.len(), 9);
        assert_eq!(h.get(b"f0"), Some(&b"w"[..]));
    }

    #[test]
    fn converts_at_value_threshold() {
        let mut h = Hash::new();
        h.set(b"a", &[b'x'; 16], LIM);
        assert_eq!(h.encoding(), "listpack");
        h.set(b"b", &[b'x'; 17], LIM);
        assert_eq!(h.encoding(), "hashtable");
        let mut h = Hash::new();
        h.set(&[b'k'; 17], b"v", LIM);
        assert_eq!(h.encoding(), "hashtable");
        let mut h = Hash::new();
        h.prepare_write(9, 1, LIM);
        assert_eq!(h.encoding(), "hashtable");
    }

    #[test]
    fn long_fields_use_multibyte_lengths() {
        let lim = HashLimits { max_entries: 8, max_value: 100_000 };
        let mut h = Hash::new();
        let big = vec![7u8; 70_000];
        h.set(&big, &big, lim);
        h.set(b"x", b"y", lim);
        assert_eq!(h.get(&big), Some(big.as_slice()));
        assert!(h.remove(&big));
        assert_eq!(h.get(b"x"), Some(&b"y"[..]));
        assert_eq!(h.encoding(), "listpack");
    }

    #[test]
    fn field_ttls_expire_in_order_with_injected_clock() {
        for lim in [LIM, HashLimits { max_entries: 0, max_value: 0 }] {
            let mut h = Hash::new();
            for i in 0..5u64 {
                h.set(format!("f{i}").as_bytes(), b"v", lim);
            }
            assert_eq!(h.next_deadline(), None);
            h.set_field_expire(b"f1", 100);
            h.set_field_expire(b"f3", 50);
            h.set_field_expire(b"f3", 200);
            assert_eq!(h.next_deadline(), Some(100));
            assert_eq!(h.expire_fields(99), 0);
            assert_eq!(h.expire_fields(100), 1);
            assert!(!h.contains(b"f1"));
            assert_eq!(h.next_deadline(), Some(200));
            // A plain set drops the TTL, KEEPTTL keeps it.
            h.set_keep_ttl(b"f3", b"w", lim);
            assert_eq!(h.field_expire(b"f3"), Some(200));
            h.set(b"f3", b"w", lim);
            assert_eq!(h.field_expire(b"f3"), None);
            assert_eq!(h.next_deadline(), None);
            assert!(!h.all_expired(1_000));
            for f in [&b"f0"[..], b"f2", b"f3", b"f4"] {
                h.set_field_expire(f, 300);
            }
            assert!(!h.all_expired(299));
            assert!(h.all_expired(300));
            assert_eq!(h.expire_fields(300), 4);
            assert!(h.is_empty());
        }
    }

    #[test]
    fn get_many_any_order_matches_single_lookups() {
        let mut h = Hash::new();
        for i in 0..40 {
            h.set(format!("f{i}").as_bytes(), format!("v{i}").as_bytes(), LIM_BIG);
        }
        let mut rng = rand::thread_rng();
        for round in 0..200 {
            let n = 1 + round % 60;
            let fields: Vec<Vec<u8>> = (0..n)
                .map(|j| {
                    let i = if round % 3 == 0 { j % 45 } else { rand::Rng::gen_range(&mut rng, 0..45) };
                    format!("f{i}").into_bytes()
                })
                .collect();
            let mut out = Vec::new();
            h.get_many(&fields, &mut out);
            for (f, v) in fields.iter().zip(&out) {
                assert_eq!(*v, h.get(f));
            }
        }
    }

    const LIM_BIG: HashLimits = HashLimits { max_entries: 512, max_value: 64 };

    #[test]
    fn table_form_staged_lookups_match_single_ones_through_growth() {
        let mut h = Hash::new();
        let mut rng = rand::thread_rng();
        for i in 0..3000 {
            // Values of changing lengths: in-place overwrites and replacements.
            h.set(format!("f{i}").as_bytes(), "v".repeat(i % 40).as_bytes(), LIM);
            if i % 7 == 0 {
                h.remove(format!("f{}", i / 2).as_bytes());
            }
            if i % 500 == 499 {
                let fields: Vec<Vec<u8>> = (0..300).map(|_| format!("f{}", rand::Rng::gen_range(&mut rng, 0..3100)).into_bytes()).collect();
                let mut one = Vec::new();
                h.get_many(&fields, &mut one);
                for group in [1, 2, 3, 16, 128, 1000] {
                    let mut staged = Vec::new();
                    h.get_many_staged(&fields, &mut staged, group);
                    assert_eq!(staged, one, "group {group}");
                }
                for (f, v) in fields.iter().zip(&one) {
                    assert_eq!(*v, h.get(f));
                }
            }
        }
        assert_eq!(h.encoding(), "hashtable");
        let n = h.len();
        assert_eq!(h.iter().count(), n);
        let mut cursor = 0;
        let mut seen = std::collections::HashSet::new();
        loop {
            cursor = h.scan(cursor, 10, |f, _| {
                seen.insert(f.to_vec());
            });
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(seen.len(), n);
        assert!(h.random(&mut rng).is_some_and(|(f, v)| h.get(f) == Some(v)));
        let c = h.clone();
        assert_eq!(c.len(), n);
        assert!(c.iter().all(|(f, v)| h.get(f) == Some(v)));
    }

    #[test]
    fn get_many_one_pass_with_repeats() {
        let mut h = Hash::new();
        for i in 0..6 {
            h.set(format!("f{i}").as_bytes(), format!("v{i}").as_bytes(), LIM);
        }
        let fields: Vec<&[u8]> = vec![b"f5", b"nope", b"f0", b"f5", b"f2"];
        let mut out = Vec::new();
        h.get_many(&fields, &mut out);
        assert_eq!(out, vec![Some(&b"v5"[..]), None, Some(&b"v0"[..]), Some(&b"v5"[..]), Some(&b"v2"[..])]);
    }

    #[test]
    fn scan_of_table_visits_everything() {
        let lim = HashLimits { max_entries: 0, max_value: 64 };
        let mut h = Hash::new();
        for i in 0..1000 {
            h.set(format!("f{i}").as_bytes(), b"v", lim);
        }
        let mut seen = std::collections::HashSet::new();
        let mut c = 0;
        loop {
            c = h.scan(c, 10, |f, _| {
                seen.insert(f.to_vec());
            });
            if c == 0 {
                break;
            }
        }
        assert_eq!(seen.len(), 1000);
        let mut rng = rand::thread_rng();
        assert!(h.random(&mut rng).is_some());
    }

    fn hash_value(fields: &[(&str, Option<u64>)]) -> crate::Value {
        let mut h = Hash::new();
        for (f, ttl) in fields {
            h.set(f.as_bytes(), b"v", LIM);
            if let Some(w) = ttl {
                h.set_field_expire(f.as_bytes(), *w);
            }
        }
        crate::Value::Hash(h)
    }

    #[test]
    fn shard_expires_fields_actively_and_lazily() {
        use crate::shard::Shard;
        let mut sh = Shard::new();
        let (ha, hb, hc, hd) = (sh.hash_key(b"a"), sh.hash_key(b"b"), sh.hash_key(b"c"), sh.hash_key(b"d"));
        sh.set(b"a", ha, hash_value(&[("x", Some(100)), ("y", None)]), None, 0);
        sh.set(b"b", hb, hash_value(&[("x", Some(100)), ("y", Some(200))]), None, 0);
        sh.set(b"c", hc, hash_value(&[("x", Some(100))]), None, 0);
        let mem_before = sh.mem();
        assert!(sh.has_deadlines());
        assert_eq!(sh.expire_cycle(99, 100), 0);
        // At 100: a loses x, b loses x, c is gone; b waits for 200.
        assert_eq!(sh.expire_cycle(100, 100), 1);
        assert_eq!(sh.len(), 2);
        assert_eq!(sh.expired_fields, 3);
        assert!(sh.mem() < mem_before);
        // A hash whose remaining fields are all due is absent before any
        // cycle runs, and the first access removes it.
        assert!(sh.peek(b"b", hb, 200).is_none());
        assert!(sh.get(b"b", hb, 200).is_none());
        assert_eq!(sh.len(), 1);
        // Lazy access purges due fields of a live hash.
        sh.set(b"d", hd, hash_value(&[("x", Some(300)), ("y", None)]), None, 0);
        use crate::EntryExt;
        assert_eq!(sh.get(b"d", hd, 300).unwrap().hash().map(|h| h.len()), Some(1));
        assert_eq!(sh.expire_cycle(10_000, 100), 0);
        assert_eq!(sh.len(), 2);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Set(u8, Vec<u8>),
        SetKeep(u8, Vec<u8>),
        Del(u8),
        Expire(u8, u16),
        Persist(u8),
        Tick(u16),
        SetMany(Vec<(u8, Vec<u8>)>, bool),
        DelMany(Vec<u8>),
    }

    fn op() -> impl Strategy<Value = Op> {
        let val = proptest::collection::vec(any::<u8>(), 0..24);
        prop_oneof![
            4 => (0u8..20, val.clone()).prop_map(|(f, v)| Op::Set(f, v)),
            1 => (0u8..20, val).prop_map(|(f, v)| Op::SetKeep(f, v)),
            2 => (0u8..20).prop_map(Op::Del),
            2 => (0u8..20, 0u16..500).prop_map(|(f, t)| Op::Expire(f, t)),
            1 => (0u8..20).prop_map(Op::Persist),
            1 => (0u16..100).prop_map(Op::Tick),
            2 => (proptest::collection::vec((0u8..20, proptest::collection::vec(any::<u8>(), 0..24)), 1..6), any::<bool>())
                .prop_map(|(p, k)| Op::SetMany(p, k)),
            1 => proptest::collection::vec(0u8..20, 1..5).prop_map(Op::DelMany),
        ]
    }

    fn name(f: u8) -> Vec<u8> {
        // Some names past the value limit force a conversion by length.
        if f == 19 {
            vec![b'L'; 20]
        } else {
            format!("field{f}").into_bytes()
        }
    }

    proptest! {
        #[test]
        fn matches_hashmap_model(ops in proptest::collection::vec(op(), 0..120)) {
            let mut h = Hash::new();
            let mut m: Model<Vec<u8>, Vec<u8>> = Model::new();
            let mut ttl: Model<Vec<u8>, u64> = Model::new();
            let mut now = 0u64;
            let mut was_table = false;
            for o in ops {
                match o {
                    Op::Set(f, v) => {
                        let f = name(f);
                        prop_assert_eq!(h.set(&f, &v, LIM), !m.contains_key(&f));
                        m.insert(f.clone(), v);
                        ttl.remove(&f);
                    }
                    Op::SetKeep(f, v) => {
                        let f = name(f);
                        prop_assert_eq!(h.set_keep_ttl(&f, &v, LIM), !m.contains_key(&f));
                        m.insert(f, v);
                    }
                    Op::Del(f) => {
                        let f = name(f);
                        prop_assert_eq!(h.remove(&f), m.remove(&f).is_some());
                        ttl.remove(&f);
                    }
                    Op::Expire(f, t) => {
                        let f = name(f);
                        if m.contains_key(&f) {
                            h.set_field_expire(&f, now + u64::from(t));
                            ttl.insert(f, now + u64::from(t));
                        }
                    }
                    Op::Persist(f) => {
                        let f = name(f);
                        prop_assert_eq!(h.persist_field(&f), ttl.remove(&f).is_some());
                    }
                    Op::SetMany(pairs, keep) => {
                        let named: Vec<(Vec<u8>, Vec<u8>)> = pairs.into_iter().map(|(f, v)| (name(f), v)).collect();
                        let refs: Vec<Pair<'_>> = named.iter().map(|(f, v)| (f.as_slice(), v.as_slice())).collect();
                        let mut added = std::collections::HashSet::new();
                        for (f, _) in &named {
                            if !m.contains_key(f) {
                                added.insert(f.clone());
                            }
                            if !keep {
                                ttl.remove(f);
                            }
                        }
                        for (f, v) in &named {
                            m.insert(f.clone(), v.clone());
                        }
                        prop_assert_eq!(h.set_many(&refs, keep, LIM), added.len());
                    }
                    Op::DelMany(fs) => {
                        let named: Vec<Vec<u8>> = fs.into_iter().map(name).collect();
                        let mut gone = 0;
                        for f in &named {
                            if m.remove(f).is_some() {
                                gone += 1;
                            }
                            ttl.remove(f);
                        }
                        prop_assert_eq!(h.remove_many(&named), gone);
                    }
                    Op::Tick(d) => {
                        now += u64::from(d);
                        let all = !m.is_empty() && ttl.len() == m.len() && ttl.values().all(|&w| w <= now);
                        prop_assert_eq!(h.all_expired(now), all);
                        let due: Vec<Vec<u8>> = ttl.iter().filter(|(_, &w)| w <= now).map(|(f, _)| f.clone()).collect();
                        for f in &due {
                            m.remove(f);
                            ttl.remove(f);
                        }
                        prop_assert_eq!(h.expire_fields(now), due.len());
                    }
                }
                // Conversion is one way and happens exactly past a limit.
                let over = m.len() > LIM.max_entries || m.iter().any(|(f, v)| f.len() > LIM.max_value || v.len() > LIM.max_value);
                if over {
                    prop_assert!(!h.is_compact());
                }
                if !h.is_compact() {
                    was_table = true;
                }
                prop_assert_eq!(!h.is_compact(), was_table);
                check(&h, &m);
                prop_assert_eq!(h.next_deadline(), ttl.values().min().copied());
                prop_assert_eq!(h.volatile_fields(), ttl.len());
                let c = h.clone();
                prop_assert!(c == h);
            }
        }
    }
}
