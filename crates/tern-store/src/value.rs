//! Stored values. Strings keep canonical integers as integers, as Redis does.

use std::sync::Arc;

use crate::hash::Hash;
use crate::list::List;
use crate::set::Set;
use crate::stream::Stream;
use crate::zset::ZSet;

mod view;

pub use view::{McRef, StrRef, ValueRef};

/// A stored value that lives apart from its key's item (see
/// [`crate::entry`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(StrValue),
    Hash(Hash),
    List(List),
    Set(Set),
    ZSet(ZSet),
    /// Boxed: a stream's header would make every value larger.
    Stream(Box<Stream>),
}

/// A string value and the encoding Redis would report for it.
#[derive(Clone, Debug, PartialEq)]
pub enum StrValue {
    /// A canonical integer (`OBJECT ENCODING` int).
    Int(i64),
    /// Bytes created whole by a write (`embstr` while they fit beside
    /// their key, see [`embeds`]; `raw` above); the keyspace keeps them in
    /// the key's own item.
    Emb(Box<[u8]>),
    /// Bytes changed in place (APPEND, SETRANGE): `raw`, kept in a growable
    /// buffer apart from the item.
    Raw(Vec<u8>),
    /// Bytes written through a memcached protocol, with the item state only
    /// memcached needs, in the same allocation as the bytes (no larger than
    /// `Raw`, so keys written only through RESP never pay for it). Any RESP
    /// write turns it back into a plain string (a new CAS is drawn when
    /// memcached next looks).
    Mc(McStr),
    /// Large bytes written whole, shared with the replies that send them
    /// (`reply-copy-avoid-min-size`): a reply holds a reference instead of
    /// a copy. Writers in place take a unique copy first ([`Self::make_raw`]),
    /// so a reply in flight keeps the bytes it was given. Encoding `raw`.
    Shared(Arc<Vec<u8>>),
}

// An item's metadata rides in its buffer: strings stay four words.
const _: () = assert!(std::mem::size_of::<StrValue>() == 32);
// A boxed value is one 48-byte allocation whatever its type.
const _: () = assert!(std::mem::size_of::<Value>() == 48);

/// A memcached item's value and metadata, in one buffer so that a hit
/// costs one cache miss for both:
///
/// ```text
///  0       4               12      13
///  | flags | cas            | state | data ...
///    u32 LE  u64 LE           u8
///
/// A large item's buffer is shared with the replies that send it
/// (`reply-copy-avoid-min-size`); a change to it while a reply holds it
/// copies it first, so the reply keeps the bytes it was given.
#[derive(Clone, Debug, PartialEq)]
pub struct McStr {
    /// Always at least [`McStr::HEADER`] bytes.
    buf: McBuf,
}

#[derive(Clone, Debug, PartialEq)]
enum McBuf {
    Own(Vec<u8>),
    Shared(Arc<Vec<u8>>),
}

impl McStr {
    pub const HEADER: usize = 13;

    pub fn new(data: &[u8], flags: u32, cas: u64, state: u8) -> Self {
        McStr { buf: McBuf::Own(Self::build(data, flags, cas, state)) }
    }

    /// [`Self::new`], with the buffer shared with replies when the data is
    /// at least `share_min` bytes long (0: never).
    pub fn new_sharing(data: &[u8], flags: u32, cas: u64, state: u8, share_min: usize) -> Self {
        let buf = Self::build(data, flags, cas, state);
        if share_min > 0 && data.len() >= share_min {
            McStr { buf: McBuf::Shared(Arc::new(buf)) }
        } else {
            McStr { buf: McBuf::Own(buf) }
        }
    }

    fn build(data: &[u8], flags: u32, cas: u64, state: u8) -> Vec<u8> {
        let mut buf = Vec::with_capacity(Self::HEADER + data.len());
        buf.extend_from_slice(&Self::header(flags, cas, state));
        buf.extend_from_slice(data);
        buf
    }

    /// The [`Self::HEADER`] bytes that precede an item's data.
    pub fn header(flags: u32, cas: u64, state: u8) -> [u8; Self::HEADER] {
        let mut h = [0u8; Self::HEADER];
        h[0..4].copy_from_slice(&flags.to_le_bytes());
        h[4..12].copy_from_slice(&cas.to_le_bytes());
        h[12] = state;
        h
    }

    /// The flags of a header-and-data buffer.
    pub fn read_flags(buf: &[u8]) -> u32 {
        let mut a = [0u8; 4];
        a.copy_from_slice(&buf[0..4]);
        u32::from_le_bytes(a)
    }

    /// The CAS of a header-and-data buffer.
    pub fn read_cas(buf: &[u8]) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&buf[4..12]);
        u64::from_le_bytes(a)
    }

    /// Header and data, as one buffer.
    #[inline]
    pub fn buffer(&self) -> &[u8] {
        self.bytes()
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        match &self.buf {
            McBuf::Own(v) => v,
            McBuf::Shared(a) => a,
        }
    }

    /// The buffer to change, copied first if a reply holds it.
    fn bytes_mut(&mut self) -> &mut Vec<u8> {
        match &mut self.buf {
            McBuf::Own(v) => v,
            McBuf::Shared(a) => Arc::make_mut(a),
        }
    }

    /// The shared buffer of a large item; its data starts at [`Self::HEADER`].
    pub fn shared(&self) -> Option<&Arc<Vec<u8>>> {
        match &self.buf {
            McBuf::Shared(a) => Some(a),
            McBuf::Own(_) => None,
        }
    }

    pub fn data(&self) -> &[u8] {
        &self.bytes()[Self::HEADER..]
    }
    pub fn len(&self) -> usize {
        self.bytes().len() - Self::HEADER
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Opaque 32-bit client flags.
    pub fn flags(&self) -> u32 {
        Self::read_flags(self.bytes())
    }
    /// Compare-and-swap id, unique per write.
    pub fn cas(&self) -> u64 {
        Self::read_cas(self.bytes())
    }
    pub fn set_cas(&mut self, cas: u64) {
        if self.cas() != cas {
            self.bytes_mut()[4..12].copy_from_slice(&cas.to_le_bytes());
        }
    }
    /// [`mc_state`] bits.
    pub fn state(&self) -> u8 {
        self.bytes()[12]
    }
    /// A no-op when unchanged, so that marking a shared item fetched
    /// again does not copy it.
    pub fn set_state(&mut self, st: u8) {
        if self.state() != st {
            self.bytes_mut()[12] = st;
        }
    }
    pub fn append(&mut self, b: &[u8]) {
        self.bytes_mut().extend_from_slice(b);
    }
    pub fn prepend(&mut self, b: &[u8]) {
        self.bytes_mut().splice(Self::HEADER..Self::HEADER, b.iter().copied());
    }
    pub fn set_data(&mut self, b: &[u8]) {
        let buf = self.bytes_mut();
        buf.truncate(Self::HEADER);
        buf.extend_from_slice(b);
    }
    pub fn heap_size(&self) -> usize {
        match &self.buf {
            McBuf::Own(v) => v.capacity(),
            McBuf::Shared(a) => SHARED_HEADER + a.capacity(),
        }
    }
}

/// Bits of [`McStr::state`] (memcached's item flags of the same names).
pub mod mc_state {
    /// Read at least once since written (meta `h`).
    pub const FETCHED: u8 = 1;
    /// A client was told it won the right to recache (meta `W`/`Z`).
    pub const TOKEN_SENT: u8 = 2;
    /// Invalidated by `md I` or a stale `ms I` (meta `X`).
    pub const STALE: u8 = 4;
    /// Stored under a base64 (`b`) key: returned keys are re-encoded.
    pub const KEY_BINARY: u8 = 8;
}

/// Longest string Redis creates as an `embstr` object before storing it
/// (values up to it are never shared with replies: see
/// [`StrValue::from_slice_sharing`]).
pub const EMBSTR_MAX: usize = 44;

/// Redis 8 stores an `embstr` value in one allocation with its key, and
/// keeps it `embstr` only while that allocation fits a 64-byte cache line:
/// the 16-byte object, the key (3 bytes of header and terminator) and the
/// value (4): key and value together at most 41 bytes, whatever the TTL
/// (it lives in metadata before the object). A value that does not fit is
/// `raw`, and stays `raw` when RENAME or COPY gives it a shorter key.
pub const EMBSTR_KEY_VALUE_MAX: usize = 64 - 16 - 3 - 4;

/// Whether a string of `value_len` bytes written whole under a key of
/// `key_len` bytes is `embstr` (else `raw`), as Redis 8 decides it.
#[inline]
pub fn embeds(key_len: usize, value_len: usize) -> bool {
    key_len.saturating_add(value_len) <= EMBSTR_KEY_VALUE_MAX
}

/// Whether bytes of `len` written whole, `raw` under a key of `key_len`
/// bytes, could be `embstr` under another key: such bytes keep their
/// encoding by moving to a `raw` buffer when their key changes. Longer
/// ones are `raw` under any key and stay in the item.
pub(crate) fn stays_raw(key_len: usize, len: usize) -> bool {
    !embeds(key_len, len) && len <= EMBSTR_KEY_VALUE_MAX
}

/// Heap bytes a [`StrValue::Shared`] holds besides its bytes.
const SHARED_HEADER: usize = 2 * std::mem::size_of::<usize>() + std::mem::size_of::<Vec<u8>>();

impl StrValue {
    /// The borrowed view readers use ([`StrRef`]), which the methods below
    /// go through.
    pub fn as_ref(&self) -> StrRef<'_> {
        StrRef::of(self)
    }

    /// Length of the string form in bytes (for an integer, of its digits).
    pub fn len(&self) -> usize {
        self.as_ref().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` with the bytes of the string form.
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        self.as_ref().with_bytes(f)
    }

    pub fn to_vec(&self) -> Vec<u8> {
        self.with_bytes(|b| b.to_vec())
    }

    /// Makes the value a mutable `raw` buffer (APPEND, SETRANGE) and returns it.
    /// A shared value is taken over without a copy when no reply holds it.
    pub fn make_raw(&mut self) -> &mut Vec<u8> {
        if matches!(self, StrValue::Shared(_)) {
            if let StrValue::Shared(b) = std::mem::replace(self, StrValue::Int(0)) {
                *self = StrValue::Raw(Arc::try_unwrap(b).unwrap_or_else(|b| b.to_vec()));
            }
        } else if !matches!(self, StrValue::Raw(_)) {
            *self = StrValue::Raw(self.to_vec());
        }
        match self {
            StrValue::Raw(v) => v,
            _ => unreachable!("just made raw"),
        }
    }

    /// `OBJECT ENCODING`'s name for the value under a key of `key_len` bytes.
    pub fn encoding(&self, key_len: usize) -> &'static str {
        self.as_ref().encoding(key_len)
    }

    /// Heap bytes this value holds (for memory accounting).
    pub fn heap_size(&self) -> usize {
        match self {
            StrValue::Int(_) => 0,
            StrValue::Emb(b) => b.len(),
            StrValue::Raw(v) => v.capacity(),
            StrValue::Mc(m) => m.heap_size(),
            // The Arc's counts and the Vec header share one allocation.
            StrValue::Shared(b) => SHARED_HEADER + b.capacity(),
        }
    }
}

impl Value {
    /// The borrowed view of the value that readers and writers of values
    /// take ([`ValueRef`]).
    #[inline]
    pub fn as_value_ref(&self) -> ValueRef<'_> {
        match self {
            Value::Str(s) => ValueRef::Str(s.as_ref()),
            Value::Hash(h) => ValueRef::Hash(h),
            Value::List(l) => ValueRef::List(crate::list::ListRef::Apart(l)),
            Value::Set(s) => ValueRef::Set(s),
            Value::ZSet(z) => ValueRef::ZSet(z),
            Value::Stream(x) => ValueRef::Stream(x),
        }
    }

    /// `TYPE`'s name for the value.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::Hash(_) => "hash",
            Value::List(_) => "list",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
            Value::Stream(_) => "stream",
        }
    }

    /// `OBJECT ENCODING`'s name for the value under a key of `key_len`
    /// bytes (a string's depends on it).
    pub fn encoding(&self, key_len: usize) -> &'static str {
        match self {
            Value::Str(s) => s.encoding(key_len),
            Value::Hash(h) => h.encoding(),
            Value::List(l) => l.encoding(),
            Value::Set(s) => s.encoding(),
            Value::ZSet(z) => z.encoding(),
            Value::Stream(x) => x.encoding(),
        }
    }

    pub fn heap_size(&self) -> usize {
        match self {
            Value::Str(s) => s.heap_size(),
            Value::Hash(h) => h.heap_size(),
            Value::List(l) => l.heap_size(),
            Value::Set(s) => s.heap_size(),
            Value::ZSet(z) => z.heap_size(),
            Value::Stream(x) => tern_table::size_class(std::mem::size_of::<Stream>()) + x.heap_size(),
        }
    }

    /// Allocations freeing the value releases, as Redis's
    /// `lazyfreeGetFreeEffort` counts them: above
    /// [`crate::LAZYFREE_THRESHOLD`] it is worth freeing in the background.
    pub fn free_effort(&self) -> usize {
        match self {
            Value::Str(_) => 1,
            Value::Hash(h) => h.free_effort(),
            Value::List(l) => l.free_effort(),
            Value::Set(s) => s.free_effort(),
            Value::ZSet(z) => z.free_effort(),
            Value::Stream(x) => x.free_effort(),
        }
    }

    /// A container left with no element, which its key does not outlive.
    /// Never a stream: Redis keeps an empty one (its IDs and groups).
    pub fn is_empty_aggregate(&self) -> bool {
        match self {
            Value::Str(_) | Value::Stream(_) => false,
            Value::Hash(h) => h.is_empty(),
            Value::List(l) => l.is_empty(),
            Value::Set(s) => s.is_empty(),
            Value::ZSet(z) => z.is_empty(),
        }
    }

    /// True for a hash whose every field's deadline has passed: it counts
    /// as absent from that moment, before anything removes it.
    #[inline]
    pub fn all_fields_expired(&self, now: u64) -> bool {
        match self {
            Value::Hash(h) => h.all_expired(now),
            _ => false,
        }
    }

    /// The earliest field deadline of a hash with field TTLs.
    pub fn next_field_deadline(&self) -> Option<u64> {
        match self {
            Value::Hash(h) => h.next_deadline(),
            _ => None,
        }
    }
}

impl StrValue {
    /// Bytes from a whole write, without the integer check (callers that
    /// want `int` encoding check first).
    pub fn from_slice(b: &[u8]) -> Self {
        StrValue::Emb(b.into())
    }

    /// [`Self::from_slice`], stored shareable with replies when at least
    /// `share_min` bytes long (0: never).
    pub fn from_slice_sharing(b: &[u8], share_min: usize) -> Self {
        if share_min > 0 && b.len() >= share_min && b.len() > EMBSTR_MAX {
            StrValue::Shared(Arc::new(b.to_vec()))
        } else {
            Self::from_slice(b)
        }
    }

    /// The bytes of a shareable value.
    pub fn shared(&self) -> Option<&Arc<Vec<u8>>> {
        match self {
            StrValue::Shared(b) => Some(b),
            _ => None,
        }
    }
}

#[cfg(test)]
mod mc_tests {
    use super::*;

    #[test]
    fn shared_value_is_copied_on_write_only_while_a_reply_holds_it() {
        let big = vec![7u8; 100];
        let mut s = StrValue::from_slice_sharing(&big, 64);
        let held = s.shared().cloned().unwrap();
        assert_eq!((s.len(), s.encoding(1)), (100, "raw"));
        s.make_raw().push(8);
        assert_eq!((held.len(), s.len()), (100, 101));
        let mut t = StrValue::from_slice_sharing(&big, 64);
        let ptr = t.shared().unwrap().as_ptr();
        assert_eq!(t.make_raw().as_ptr(), ptr);
        assert!(matches!(StrValue::from_slice_sharing(&big, 0), StrValue::Emb(_)));
        assert!(matches!(StrValue::from_slice_sharing(&big, 101), StrValue::Emb(_)));
        assert!(matches!(StrValue::from_slice_sharing(&big[..40], 1), StrValue::Emb(_)));
    }

    #[test]
    fn shared_mc_item_copies_on_change_only_while_held() {
        let mut m = McStr::new_sharing(&[5u8; 64], 9, 77, 0, 64);
        let held = m.shared().cloned().unwrap();
        m.set_state(0);
        m.set_cas(77);
        assert!(Arc::ptr_eq(&held, m.shared().unwrap()), "unchanged header: no copy");
        m.set_state(mc_state::FETCHED);
        assert!(!Arc::ptr_eq(&held, m.shared().unwrap()));
        assert_eq!((held[12], &held[McStr::HEADER..]), (0, &[5u8; 64][..]));
        m.append(b"!");
        assert_eq!((m.len(), m.flags(), m.cas(), m.state()), (65, 9, 77, mc_state::FETCHED));
        drop(held);
        let before = m.shared().unwrap().as_ptr();
        m.set_data(b"x");
        assert_eq!((m.shared().unwrap().as_ptr(), m.data()), (before, &b"x"[..]));
        assert!(McStr::new_sharing(&[1; 63], 0, 0, 0, 64).shared().is_none());
        assert!(McStr::new_sharing(&[1; 63], 0, 0, 0, 0).shared().is_none());
    }

    #[test]
    fn mc_item_header_and_data() {
        let mut m = McStr::new(b"mid", 0xdead_beef, u64::MAX - 1, mc_state::STALE);
        assert_eq!((m.flags(), m.cas(), m.state(), m.data()), (0xdead_beef, u64::MAX - 1, mc_state::STALE, &b"mid"[..]));
        m.append(b">>");
        m.prepend(b"<<");
        m.set_cas(7);
        m.set_state(mc_state::FETCHED);
        assert_eq!((m.flags(), m.cas(), m.state(), m.data(), m.len()), (0xdead_beef, 7, mc_state::FETCHED, &b"<<mid>>"[..], 7));
        m.set_data(b"");
        assert!(m.is_empty());
        let s = StrValue::Mc(m);
        assert_eq!((s.len(), s.encoding(41), s.to_vec()), (0, "embstr", Vec::new()));
    }
}
