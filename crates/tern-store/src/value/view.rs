//! Borrowed views of values ([`StrRef`], [`McRef`], [`ValueRef`]): what
//! readers take, whether the value lies in its key's item (see
//! [`crate::entry`]) or in a [`Value`] apart, which hands them out too.

use std::sync::Arc;

use super::{embeds, stays_raw, McStr, StrValue, Value};
use crate::hash::Hash;
use crate::list::ListRef;
use crate::set::Set;
use crate::stream::Stream;
use crate::zset::ZSet;

/// A borrowed view of a memcached item: flags, CAS, state and data.
#[derive(Clone, Copy, Debug)]
pub struct McRef<'a> {
    /// Header and data.
    buf: &'a [u8],
    shared: Option<&'a Arc<Vec<u8>>>,
}

impl<'a> McRef<'a> {
    /// A view of `buf` (header and data, at least [`McStr::HEADER`]
    /// bytes), shared with replies as `shared` says.
    pub(crate) fn new(buf: &'a [u8], shared: Option<&'a Arc<Vec<u8>>>) -> Self {
        debug_assert!(buf.len() >= McStr::HEADER);
        McRef { buf, shared }
    }

    /// The header and the data, as one buffer.
    pub(crate) fn buffer(&self) -> &'a [u8] {
        self.buf
    }

    pub fn data(&self) -> &'a [u8] {
        &self.buf[McStr::HEADER..]
    }
    pub fn len(&self) -> usize {
        self.buf.len() - McStr::HEADER
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Opaque 32-bit client flags.
    pub fn flags(&self) -> u32 {
        McStr::read_flags(self.buf)
    }
    /// Compare-and-swap id, unique per write.
    pub fn cas(&self) -> u64 {
        McStr::read_cas(self.buf)
    }
    /// [`crate::mc_state`] bits.
    pub fn state(&self) -> u8 {
        self.buf[12]
    }
    /// The buffer shared with replies of a large item; its data starts at
    /// [`McStr::HEADER`].
    pub fn shared(&self) -> Option<&'a Arc<Vec<u8>>> {
        self.shared
    }
}

/// A borrowed view of a string value.
#[derive(Clone, Copy, Debug)]
pub enum StrRef<'a> {
    /// A canonical integer (`int`).
    Int(i64),
    /// Bytes written whole, in the item (`embstr` while they fit beside
    /// the key, see [`crate::value::embeds`]; `raw` above).
    Whole(&'a [u8]),
    /// A buffer changed in place (APPEND, SETRANGE): `raw`.
    Raw(&'a [u8]),
    /// A memcached item.
    Mc(McRef<'a>),
    /// A large string shared with the replies that send it: `raw`.
    Shared(&'a Arc<Vec<u8>>),
}

impl<'a> StrRef<'a> {
    pub(crate) fn of(s: &'a StrValue) -> Self {
        match s {
            StrValue::Int(n) => StrRef::Int(*n),
            StrValue::Emb(b) => StrRef::Whole(b),
            StrValue::Raw(v) => StrRef::Raw(v),
            StrValue::Mc(m) => StrRef::Mc(McRef { buf: m.buffer(), shared: m.shared() }),
            StrValue::Shared(a) => StrRef::Shared(a),
        }
    }

    /// Length of the string form in bytes (for an integer, of its digits).
    pub fn len(&self) -> usize {
        match self {
            StrRef::Int(n) => itoa::Buffer::new().format(*n).len(),
            StrRef::Whole(b) | StrRef::Raw(b) => b.len(),
            StrRef::Mc(m) => m.len(),
            StrRef::Shared(a) => a.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` with the bytes of the string form.
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            StrRef::Int(n) => f(itoa::Buffer::new().format(*n).as_bytes()),
            StrRef::Whole(b) | StrRef::Raw(b) => f(b),
            StrRef::Mc(m) => f(m.data()),
            StrRef::Shared(a) => f(a),
        }
    }

    /// The bytes, when the string is stored as bytes (not as an integer).
    pub fn bytes(&self) -> Option<&'a [u8]> {
        match *self {
            StrRef::Int(_) => None,
            StrRef::Whole(b) | StrRef::Raw(b) => Some(b),
            StrRef::Mc(m) => Some(m.data()),
            StrRef::Shared(a) => Some(a.as_slice()),
        }
    }

    pub fn to_vec(&self) -> Vec<u8> {
        self.with_bytes(|b| b.to_vec())
    }

    /// The integer, when stored as one.
    pub fn int(&self) -> Option<i64> {
        match self {
            StrRef::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// The shared buffer of a large string (see [`StrValue::Shared`]).
    pub fn shared(&self) -> Option<&'a Arc<Vec<u8>>> {
        match *self {
            StrRef::Shared(a) => Some(a),
            _ => None,
        }
    }

    /// `OBJECT ENCODING`'s name, for the string under a key of `key_len`
    /// bytes: bytes written whole are `embstr` while they fit beside the
    /// key (Redis 8's rule, [`embeds`]). A memcached item follows the same
    /// rule (it has no Redis counterpart).
    pub fn encoding(&self, key_len: usize) -> &'static str {
        match self {
            StrRef::Int(_) => "int",
            StrRef::Whole(b) if embeds(key_len, b.len()) => "embstr",
            StrRef::Mc(m) if embeds(key_len, m.len()) => "embstr",
            _ => "raw",
        }
    }

    /// An owned copy that stores the same way (COPY) when it was under a
    /// key of `key_len` bytes: short bytes that are `raw` there are copied
    /// as a `raw` buffer, as Redis duplicates a `raw` object, so that a
    /// shorter key does not make them `embstr`.
    pub fn to_value(&self, key_len: usize) -> Value {
        Value::Str(match *self {
            StrRef::Int(n) => StrValue::Int(n),
            StrRef::Whole(b) if stays_raw(key_len, b.len()) => StrValue::Raw(b.to_vec()),
            StrRef::Whole(b) => StrValue::Emb(b.into()),
            StrRef::Raw(b) => StrValue::Raw(b.to_vec()),
            StrRef::Mc(m) => StrValue::Mc(McStr::new(m.data(), m.flags(), m.cas(), m.state())),
            StrRef::Shared(a) => StrValue::Shared(a.clone()),
        })
    }
}

/// A borrowed view of any value.
#[derive(Clone, Copy, Debug)]
pub enum ValueRef<'a> {
    Str(StrRef<'a>),
    Hash(&'a Hash),
    List(ListRef<'a>),
    Set(&'a Set),
    ZSet(&'a ZSet),
    Stream(&'a Stream),
}

impl ValueRef<'_> {
    /// An owned copy (what an AOF rewrite without the RDB preamble turns
    /// into commands), under a key of `key_len` bytes.
    pub fn to_value(&self, key_len: usize) -> Value {
        match self {
            ValueRef::Str(s) => s.to_value(key_len),
            ValueRef::Hash(h) => Value::Hash((*h).clone()),
            ValueRef::List(l) => Value::List(l.to_list()),
            ValueRef::Set(s) => Value::Set((*s).clone()),
            ValueRef::ZSet(z) => Value::ZSet((*z).clone()),
            ValueRef::Stream(x) => Value::Stream(Box::new((*x).clone())),
        }
    }

    /// `TYPE`'s name for the value.
    pub fn type_name(&self) -> &'static str {
        match self {
            ValueRef::Str(_) => "string",
            ValueRef::Hash(_) => "hash",
            ValueRef::List(_) => "list",
            ValueRef::Set(_) => "set",
            ValueRef::ZSet(_) => "zset",
            ValueRef::Stream(_) => "stream",
        }
    }

    /// `OBJECT ENCODING`'s name for the value under a key of `key_len`
    /// bytes (a string's depends on it; see [`crate::entry::EntryExt::encoding`]).
    pub fn encoding(&self, key_len: usize) -> &'static str {
        match self {
            ValueRef::Str(s) => s.encoding(key_len),
            ValueRef::Hash(h) => h.encoding(),
            ValueRef::List(l) => l.encoding(),
            ValueRef::Set(s) => s.encoding(),
            ValueRef::ZSet(z) => z.encoding(),
            ValueRef::Stream(x) => x.encoding(),
        }
    }
}
