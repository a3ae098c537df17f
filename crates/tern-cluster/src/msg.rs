//! Cluster bus messages in Redis's binary format (`clusterMsg`), so a Tern
//! node can gossip with Tern and with redis-server nodes on the cluster port.
//! No I/O: [`frame_len`] finds where a message ends in a receive buffer,
//! [`decode`] validates and parses one whole message, [`encode`] appends one.
//!
//! Every integer is big-endian. A message is a 2256-byte header followed by
//! a body whose layout depends on the type:
//!
//! ```text
//!  off  size  header                          off  size  header
//!    0     4  "RCmb"                         2128    40  slaveof (zeros: none)
//!    4     4  totlen, the whole message      2168    46  myip, NUL-ended (zeros: unknown)
//!    8     2  ver = 1                        2214     2  extensions (PING ext records)
//!   10     2  port                           2216    30  unused
//!   12     2  type (TYPE_*)                  2246     2  pport
//!   14     2  count (PING gossip entries)    2248     2  cport
//!   16     8  currentEpoch                   2250     2  flags (NODE_*)
//!   24     8  configEpoch                    2252     1  state
//!   32     8  offset (replication)           2253     3  mflags (FLAG0_* in the first)
//!   40    40  sender                         2256        body
//!   80  2048  myslots: slot s is bit s&7 of byte s>>3
//!
//!  PING PONG MEET   count gossip entries of 104 bytes:
//!                     name 40, ping_sent 4, pong_received 4 (seconds), ip 46,
//!                     port 2, cport 2, flags 2, pport 2, unused 2
//!                   then, if mflags[0] has FLAG0_EXT_DATA, `extensions` records:
//!                     length 4 (the whole record, a multiple of 8), type 2,
//!                     unused 2, payload (zero-padded)
//!  FAIL             name 40
//!  PUBLISH(SHARD)   channel_len 4, message_len 4, channel, message
//!  UPDATE           configEpoch 8, name 40, slots 2048
//!  MODULE           module_id 8, len 4, type 1, payload (len bytes)
//!  AUTH_REQUEST, AUTH_ACK, MFSTART: no body
//! ```
//!
//! Goals: accept what Redis accepts (its checks in `clusterProcessPacket`,
//! which Valkey calls `clusterIsValidPacket`): version 1 and a `totlen`
//! equal to the length the type, its counts and its stated lengths imply.
//! Unknown message types and unknown extension types are accepted and
//! skipped, as Redis does, so newer peers can add them. Where Redis trusts
//! the peer further (it reads an extension header past the end of the
//! message, takes an extension's 32-bit length as 16 bits, lets an
//! extension be shorter than its own header, adds lengths in 32 bits that
//! can wrap), this module checks and rejects instead, so decoding never
//! panics and never allocates more than the message's own bytes.
//!
//! Non-goals: Valkey's "light" header (types with bit 15 set, sent only to
//! peers that advertise it), and acting on what a message says.

use std::fmt;

/// A node name: 40 hex characters, not NUL-terminated.
pub type Name = [u8; NAME_LEN];
/// All zero bytes: no node (a master's `slaveof`).
pub const NULL_NAME: Name = [0; NAME_LEN];

pub const SIGNATURE: [u8; 4] = *b"RCmb";
pub const PROTO_VER: u16 = 1;
pub const NAME_LEN: usize = 40;
pub const SLOTS: usize = 16384;
/// The slot bitmap's size in bytes.
pub const SLOTS_LEN: usize = SLOTS / 8;
/// An IP address field, with room for the NUL (Redis's `NET_IP_STR_LEN`).
pub const IP_LEN: usize = 46;
/// The header's size, and the shortest message Redis reads.
pub const HEADER_LEN: usize = 2256;
pub const GOSSIP_LEN: usize = 104;
pub const EXT_HEADER_LEN: usize = 8;

/// The longest message [`frame_len`] accepts; longer closes the link.
/// Redis sets no bound (only the u32), but everything it sends is small
/// except PUBLISH, whose channel and message come from one client command:
/// Redis caps the sum of a command's arguments at `client-query-buffer-limit`
/// (1 GiB by default), so 1 GiB of payload plus the header covers it.
/// Senders of a PUBLISH check [`encoded_len`] against it.
pub const MAX_FRAME_LEN: usize = (1 << 30) + HEADER_LEN + PUBLISH_FIXED;

pub const TYPE_PING: u16 = 0;
pub const TYPE_PONG: u16 = 1;
pub const TYPE_MEET: u16 = 2;
pub const TYPE_FAIL: u16 = 3;
pub const TYPE_PUBLISH: u16 = 4;
pub const TYPE_FAILOVER_AUTH_REQUEST: u16 = 5;
pub const TYPE_FAILOVER_AUTH_ACK: u16 = 6;
pub const TYPE_UPDATE: u16 = 7;
pub const TYPE_MFSTART: u16 = 8;
pub const TYPE_MODULE: u16 = 9;
pub const TYPE_PUBLISHSHARD: u16 = 10;
/// Types below this are known; per-type statistics have this many slots.
pub const TYPE_COUNT: u16 = 11;

/// Node flags, in the header's `flags` and in each gossip entry.
pub const NODE_MASTER: u16 = 1;
pub const NODE_SLAVE: u16 = 2;
pub const NODE_PFAIL: u16 = 4;
pub const NODE_FAIL: u16 = 8;
pub const NODE_MYSELF: u16 = 16;
pub const NODE_HANDSHAKE: u16 = 32;
pub const NODE_NOADDR: u16 = 64;
pub const NODE_MEET: u16 = 128;
pub const NODE_MIGRATE_TO: u16 = 256;
pub const NODE_NOFAILOVER: u16 = 512;
pub const NODE_EXTENSIONS_SUPPORTED: u16 = 1024;

/// Message flags, in the first byte of the header's `mflags`.
pub const FLAG0_PAUSED: u8 = 1;
pub const FLAG0_FORCEACK: u8 = 2;
pub const FLAG0_EXT_DATA: u8 = 4;

/// PING extension types.
pub const EXT_HOSTNAME: u16 = 0;
pub const EXT_HUMAN_NODENAME: u16 = 1;
pub const EXT_FORGOTTEN_NODE: u16 = 2;
pub const EXT_SHARDID: u16 = 3;
/// Redis 8's shard-wide secret for internal connections.
pub const EXT_INTERNALSECRET: u16 = 4;

/// PUBLISH's lengths before the channel.
const PUBLISH_FIXED: usize = 8;
/// MODULE's id, length and type before the payload (the payload is unaligned).
const MODULE_FIXED: usize = 13;
const UPDATE_LEN: usize = 8 + NAME_LEN + SLOTS_LEN;
const FORGOTTEN_LEN: usize = NAME_LEN + 8;

// The header and gossip layouts are wire contracts with every Redis version.
const _: () = assert!(
    4 + 4 + 2 + 2 + 2 + 2 + 8 + 8 + 8 + NAME_LEN + SLOTS_LEN + NAME_LEN + IP_LEN + 2 + 30 + 2 + 2 + 2 + 1 + 3
        == HEADER_LEN
);
const _: () = assert!(NAME_LEN + 4 + 4 + IP_LEN + 2 * 5 == GOSSIP_LEN);
const _: () = assert!(MAX_FRAME_LEN <= u32::MAX as usize);

/// The header's fields; `totlen`, `count` and `extensions` follow from the
/// body and are not kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub port: u16,
    /// The message type (`TYPE_*`).
    pub kind: u16,
    pub current_epoch: u64,
    pub config_epoch: u64,
    pub offset: u64,
    pub sender: Name,
    pub slots: Box<[u8; SLOTS_LEN]>,
    /// [`NULL_NAME`] when the sender is a master.
    pub slaveof: Name,
    /// Empty when the sender leaves its address to the receiver to find.
    pub myip: String,
    pub pport: u16,
    pub cport: u16,
    pub flags: u16,
    pub state: u8,
    pub mflags0: u8,
}

impl Default for Header {
    fn default() -> Header {
        Header {
            port: 0,
            kind: TYPE_PING,
            current_epoch: 0,
            config_epoch: 0,
            offset: 0,
            sender: NULL_NAME,
            slots: Box::new([0; SLOTS_LEN]),
            slaveof: NULL_NAME,
            myip: String::new(),
            pport: 0,
            cport: 0,
            flags: 0,
            state: 0,
            mflags0: 0,
        }
    }
}

/// What the sender knows of one other node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gossip {
    pub name: Name,
    /// Unix seconds.
    pub ping_sent: u32,
    /// Unix seconds.
    pub pong_received: u32,
    pub ip: String,
    pub port: u16,
    pub cport: u16,
    pub flags: u16,
    pub pport: u16,
}

/// A PING extension of a known type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ext {
    Hostname(String),
    HumanNodename(String),
    /// A node the cluster forgot, not to be re-added for `ttl` seconds.
    ForgottenNode {
        name: Name,
        ttl: u64,
    },
    ShardId(Name),
    InternalSecret([u8; NAME_LEN]),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// PING, PONG and MEET; the header's kind tells which.
    Ping {
        gossip: Vec<Gossip>,
        exts: Vec<Ext>,
    },
    Fail {
        about: Name,
    },
    /// PUBLISH and PUBLISHSHARD.
    Publish {
        channel: Vec<u8>,
        message: Vec<u8>,
    },
    Update {
        config_epoch: u64,
        name: Name,
        slots: Box<[u8; SLOTS_LEN]>,
    },
    /// `module_id` is opaque: Redis copies it in host order, not network
    /// order, so it is read and written little-endian, which gives the value
    /// the sending (x86 or ARM) node computed.
    Module {
        module_id: u64,
        kind: u8,
        payload: Vec<u8>,
    },
    /// FAILOVER_AUTH_REQUEST, FAILOVER_AUTH_ACK and MFSTART.
    Empty,
    /// A type from a newer peer (`TYPE_COUNT` or above). Redis accepts it,
    /// takes what the header says of the sender, and ignores the body.
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Msg {
    pub header: Header,
    pub body: Body,
}

/// Why bytes are not a message. From [`frame_len`], the stream cannot be
/// framed and the link is closed (Redis does the same). From [`decode`],
/// only this message is bad: Redis drops it and keeps reading the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The first four bytes are not "RCmb".
    Signature,
    /// `totlen` is shorter than the header or longer than [`MAX_FRAME_LEN`].
    TotalLength(u32),
    /// The slice given to [`decode`] is not exactly one message.
    Incomplete,
    Version(u16),
    /// `totlen` is not the length the type, its counts and its stated
    /// lengths imply.
    Length {
        kind: u16,
        totlen: u32,
        expected: u64,
    },
    /// An extension's length is not a multiple of 8 or is shorter than its
    /// own header.
    ExtLength(u32),
    /// An extension runs past the end of the message.
    ExtOverrun,
    /// A known extension's payload is too short for its type.
    ExtPayload(u16),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::Signature => f.write_str("bad message signature on the cluster bus"),
            Error::TotalLength(n) => write!(f, "bad message length {n} on the cluster bus"),
            Error::Incomplete => f.write_str("not one whole cluster bus message"),
            Error::Version(v) => write!(f, "unsupported cluster bus protocol version {v}"),
            Error::Length { kind, totlen, expected } => {
                write!(f, "invalid {} packet of length {totlen} but expected length {expected}", kind_name(kind))
            }
            Error::ExtLength(n) => write!(f, "ping extension of length {n} without proper padding"),
            Error::ExtOverrun => f.write_str("ping extension data exceeds the total packet length"),
            Error::ExtPayload(t) => write!(f, "ping extension of type {t} too short for its type"),
        }
    }
}

impl std::error::Error for Error {}

/// Redis's name for a message type, as in `CLUSTER INFO`'s
/// `cluster_stats_messages_<name>_sent`.
pub fn kind_name(kind: u16) -> &'static str {
    match kind {
        TYPE_PING => "ping",
        TYPE_PONG => "pong",
        TYPE_MEET => "meet",
        TYPE_FAIL => "fail",
        TYPE_PUBLISH => "publish",
        TYPE_PUBLISHSHARD => "publishshard",
        TYPE_FAILOVER_AUTH_REQUEST => "auth-req",
        TYPE_FAILOVER_AUTH_ACK => "auth-ack",
        TYPE_UPDATE => "update",
        TYPE_MFSTART => "mfstart",
        TYPE_MODULE => "module",
        _ => "unknown",
    }
}

/// Whether `slot` is set in a slot bitmap. Slots past 16383 are never set.
pub fn slot_bit(slots: &[u8; SLOTS_LEN], slot: u16) -> bool {
    slots.get(usize::from(slot >> 3)).is_some_and(|b| b & (1 << (slot & 7)) != 0)
}

/// Sets `slot` in a slot bitmap. Slots past 16383 are ignored.
pub fn set_slot_bit(slots: &mut [u8; SLOTS_LEN], slot: u16) {
    if let Some(b) = slots.get_mut(usize::from(slot >> 3)) {
        *b |= 1 << (slot & 7);
    }
}

/// Clears `slot` in a slot bitmap. Slots past 16383 are ignored.
pub fn clear_slot_bit(slots: &mut [u8; SLOTS_LEN], slot: u16) {
    if let Some(b) = slots.get_mut(usize::from(slot >> 3)) {
        *b &= !(1 << (slot & 7));
    }
}

/// A name from its 40 characters; None for any other length.
pub fn name_from_str(s: &str) -> Option<Name> {
    s.as_bytes().try_into().ok()
}

/// A name as text; None if a peer sent bytes that are not UTF-8.
pub fn name_str(name: &Name) -> Option<&str> {
    std::str::from_utf8(name).ok()
}

/// For a reader's receive buffer: `Ok(None)` until the first 8 bytes are
/// there, then the length of the message at the start of `buf` (which may
/// not have fully arrived yet).
pub fn frame_len(buf: &[u8]) -> Result<Option<usize>, Error> {
    Ok(totlen(buf)?.map(|n| n as usize))
}

fn totlen(buf: &[u8]) -> Result<Option<u32>, Error> {
    let mut r = Reader::new(buf, Error::Incomplete);
    let (Ok(sig), Ok(len)) = (r.array::<4>(), r.u32()) else {
        return Ok(None);
    };
    if sig != SIGNATURE {
        return Err(Error::Signature);
    }
    if (len as usize) < HEADER_LEN || len as usize > MAX_FRAME_LEN {
        return Err(Error::TotalLength(len));
    }
    Ok(Some(len))
}

/// Validates and parses one whole message: `frame` must be exactly the
/// `totlen` bytes [`frame_len`] announced.
pub fn decode(frame: &[u8]) -> Result<Msg, Error> {
    let totlen = match totlen(frame)? {
        Some(n) if n as usize == frame.len() => n,
        _ => return Err(Error::Incomplete),
    };
    let mut r = Reader::new(frame, Error::Incomplete);
    r.skip(8)?;
    let ver = r.u16()?;
    if ver != PROTO_VER {
        return Err(Error::Version(ver));
    }
    let port = r.u16()?;
    let kind = r.u16()?;
    let count = r.u16()?;
    let current_epoch = r.u64()?;
    let config_epoch = r.u64()?;
    let offset = r.u64()?;
    let sender = r.name()?;
    let slots = r.slots()?;
    let slaveof = r.name()?;
    let myip = r.ip()?;
    let extensions = r.u16()?;
    r.skip(30)?;
    let pport = r.u16()?;
    let cport = r.u16()?;
    let flags = r.u16()?;
    let state = r.u8()?;
    let mflags = r.array::<3>()?;
    let header = Header {
        port,
        kind,
        current_epoch,
        config_epoch,
        offset,
        sender,
        slots,
        slaveof,
        myip,
        pport,
        cport,
        flags,
        state,
        mflags0: mflags[0],
    };
    let body = decode_body(&header, totlen, count, extensions, r.rest())?;
    Ok(Msg { header, body })
}

fn decode_body(h: &Header, totlen: u32, count: u16, extensions: u16, data: &[u8]) -> Result<Body, Error> {
    let kind = h.kind;
    // The error for a body that is not `body_len` bytes long.
    let wrong = |body_len: u64| Error::Length { kind, totlen, expected: (HEADER_LEN as u64) + body_len };
    let exact = |body_len: usize| {
        let r = Reader::new(data, wrong(body_len as u64));
        if data.len() == body_len {
            Ok(r)
        } else {
            Err(wrong(body_len as u64))
        }
    };
    match kind {
        TYPE_PING | TYPE_PONG | TYPE_MEET => decode_ping(data, count, extensions, h.mflags0, wrong),
        TYPE_FAIL => Ok(Body::Fail { about: exact(NAME_LEN)?.name()? }),
        TYPE_PUBLISH | TYPE_PUBLISHSHARD => {
            let mut r = Reader::new(data, wrong(PUBLISH_FIXED as u64));
            let channel_len = r.u32()?;
            let message_len = r.u32()?;
            // Summed in 64 bits: in Redis's 32 a wrapped sum can equal totlen.
            let body_len = PUBLISH_FIXED as u64 + u64::from(channel_len) + u64::from(message_len);
            if body_len != data.len() as u64 {
                return Err(wrong(body_len));
            }
            let channel = r.bytes(channel_len as usize)?.to_vec();
            Ok(Body::Publish { channel, message: r.rest().to_vec() })
        }
        TYPE_UPDATE => {
            let mut r = exact(UPDATE_LEN)?;
            Ok(Body::Update { config_epoch: r.u64()?, name: r.name()?, slots: r.slots()? })
        }
        TYPE_MODULE => {
            let mut r = Reader::new(data, wrong(MODULE_FIXED as u64));
            let module_id = u64::from_le_bytes(r.array()?);
            let len = r.u32()?;
            let module_kind = r.u8()?;
            let body_len = MODULE_FIXED as u64 + u64::from(len);
            if body_len != data.len() as u64 {
                return Err(wrong(body_len));
            }
            Ok(Body::Module { module_id, kind: module_kind, payload: r.rest().to_vec() })
        }
        TYPE_FAILOVER_AUTH_REQUEST | TYPE_FAILOVER_AUTH_ACK | TYPE_MFSTART => {
            exact(0)?;
            Ok(Body::Empty)
        }
        _ => Ok(Body::Unknown),
    }
}

fn decode_ping(
    data: &[u8],
    count: u16,
    extensions: u16,
    mflags0: u8,
    wrong: impl Fn(u64) -> Error,
) -> Result<Body, Error> {
    let gossip_len = usize::from(count) * GOSSIP_LEN;
    if data.len() < gossip_len {
        return Err(wrong(gossip_len as u64));
    }
    let (entries, mut rest) = data.split_at(gossip_len);
    let gossip = entries.chunks_exact(GOSSIP_LEN).map(decode_gossip).collect::<Result<Vec<_>, _>>()?;
    let mut exts = Vec::new();
    // Without the flag the count is not looked at (Redis validates none), so
    // extension bytes there are a length mismatch.
    if mflags0 & FLAG0_EXT_DATA != 0 {
        for _ in 0..extensions {
            let mut r = Reader::new(rest, Error::ExtOverrun);
            let len = r.u32()?;
            let ext_kind = r.u16()?;
            r.skip(2)?;
            if len % 8 != 0 || (len as usize) < EXT_HEADER_LEN {
                return Err(Error::ExtLength(len));
            }
            let payload = r.bytes(len as usize - EXT_HEADER_LEN)?;
            rest = r.rest();
            if let Some(ext) = decode_ext(ext_kind, payload)? {
                exts.push(ext);
            }
        }
    }
    if !rest.is_empty() {
        return Err(wrong((data.len() - rest.len()) as u64));
    }
    Ok(Body::Ping { gossip, exts })
}

fn decode_gossip(entry: &[u8]) -> Result<Gossip, Error> {
    let mut r = Reader::new(entry, Error::Incomplete);
    Ok(Gossip {
        name: r.name()?,
        ping_sent: r.u32()?,
        pong_received: r.u32()?,
        ip: r.ip()?,
        port: r.u16()?,
        cport: r.u16()?,
        flags: r.u16()?,
        pport: r.u16()?,
    })
}

/// None for a type this module does not know: Redis logs and skips those.
fn decode_ext(kind: u16, payload: &[u8]) -> Result<Option<Ext>, Error> {
    let mut r = Reader::new(payload, Error::ExtPayload(kind));
    Ok(Some(match kind {
        EXT_HOSTNAME => Ext::Hostname(c_str(payload)),
        EXT_HUMAN_NODENAME => Ext::HumanNodename(c_str(payload)),
        EXT_FORGOTTEN_NODE => Ext::ForgottenNode { name: r.name()?, ttl: r.u64()? },
        EXT_SHARDID => Ext::ShardId(r.name()?),
        EXT_INTERNALSECRET => Ext::InternalSecret(r.name()?),
        _ => return Ok(None),
    }))
}

/// The text before the first NUL (or all of it). Redis reads these fields as
/// C strings; a peer's non-UTF-8 bytes are replaced rather than failing the
/// whole message.
fn c_str(bytes: &[u8]) -> String {
    let text = bytes.split(|&b| b == 0).next().unwrap_or_default();
    String::from_utf8_lossy(text).into_owned()
}

/// Reads fields in order from a slice; a read past its end is `short`.
struct Reader<'a> {
    buf: &'a [u8],
    short: Error,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], short: Error) -> Reader<'a> {
        Reader { buf, short }
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if n > self.buf.len() {
            return Err(self.short);
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    fn skip(&mut self, n: usize) -> Result<(), Error> {
        self.bytes(n).map(drop)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let mut a = [0; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16, Error> {
        self.array().map(u16::from_be_bytes)
    }

    fn u32(&mut self) -> Result<u32, Error> {
        self.array().map(u32::from_be_bytes)
    }

    fn u64(&mut self) -> Result<u64, Error> {
        self.array().map(u64::from_be_bytes)
    }

    fn name(&mut self) -> Result<Name, Error> {
        self.array()
    }

    fn slots(&mut self) -> Result<Box<[u8; SLOTS_LEN]>, Error> {
        let mut slots = Box::new([0; SLOTS_LEN]);
        slots.copy_from_slice(self.bytes(SLOTS_LEN)?);
        Ok(slots)
    }

    /// An IP field. Redis forces its last byte to NUL, so at most 45 bytes
    /// of it are text. An address is ASCII: any other byte becomes '?', one
    /// byte for one, so the text still fits the field when sent on.
    fn ip(&mut self) -> Result<String, Error> {
        let field = self.bytes(IP_LEN)?;
        let text = field.get(..IP_LEN - 1).unwrap_or_default();
        let text = text.split(|&b| b == 0).next().unwrap_or_default();
        Ok(text.iter().map(|&b| if b.is_ascii() { char::from(b) } else { '?' }).collect())
    }

    fn rest(self) -> &'a [u8] {
        self.buf
    }
}

/// The length [`encode`] will append for `msg`.
pub fn encoded_len(msg: &Msg) -> usize {
    HEADER_LEN
        + match &msg.body {
            Body::Ping { gossip, exts } => gossip.len() * GOSSIP_LEN + exts.iter().map(ext_len).sum::<usize>(),
            Body::Fail { .. } => NAME_LEN,
            Body::Publish { channel, message } => PUBLISH_FIXED + channel.len() + message.len(),
            Body::Update { .. } => UPDATE_LEN,
            Body::Module { payload, .. } => MODULE_FIXED + payload.len(),
            Body::Empty | Body::Unknown => 0,
        }
}

fn ext_len(ext: &Ext) -> usize {
    EXT_HEADER_LEN
        + match ext {
            Ext::Hostname(s) | Ext::HumanNodename(s) => padded_str_len(s),
            Ext::ForgottenNode { .. } => FORGOTTEN_LEN,
            Ext::ShardId(_) | Ext::InternalSecret(_) => NAME_LEN,
        }
}

/// A string extension keeps its NUL and pads to the 8-byte alignment every
/// extension record keeps.
fn padded_str_len(s: &str) -> usize {
    (s.len() + 1).div_ceil(8) * 8
}

fn ext_kind(ext: &Ext) -> u16 {
    match ext {
        Ext::Hostname(_) => EXT_HOSTNAME,
        Ext::HumanNodename(_) => EXT_HUMAN_NODENAME,
        Ext::ForgottenNode { .. } => EXT_FORGOTTEN_NODE,
        Ext::ShardId(_) => EXT_SHARDID,
        Ext::InternalSecret(_) => EXT_INTERNALSECRET,
    }
}

fn body_fits(kind: u16, body: &Body) -> bool {
    match body {
        Body::Ping { .. } => matches!(kind, TYPE_PING | TYPE_PONG | TYPE_MEET),
        Body::Fail { .. } => kind == TYPE_FAIL,
        Body::Publish { .. } => matches!(kind, TYPE_PUBLISH | TYPE_PUBLISHSHARD),
        Body::Update { .. } => kind == TYPE_UPDATE,
        Body::Module { .. } => kind == TYPE_MODULE,
        Body::Empty => matches!(kind, TYPE_FAILOVER_AUTH_REQUEST | TYPE_FAILOVER_AUTH_ACK | TYPE_MFSTART),
        Body::Unknown => kind >= TYPE_COUNT,
    }
}

/// Appends `msg`, with the signature, version 1, `totlen`, `count` and
/// `extensions` filled in, and `FLAG0_EXT_DATA` added when there are
/// extensions. IP strings longer than 45 bytes are cut to fit their field.
///
/// # Panics
///
/// If the message cannot be represented: longer than 4 GiB, or more than
/// 65535 gossip entries or extensions. (A PUBLISH of client data is checked
/// against [`MAX_FRAME_LEN`] with [`encoded_len`] first.)
pub fn encode(msg: &Msg, out: &mut Vec<u8>) {
    let h = &msg.header;
    debug_assert!(body_fits(h.kind, &msg.body), "body does not match message type {}", h.kind);
    let len = encoded_len(msg);
    let totlen = u32::try_from(len).expect("cluster bus message longer than 4 GiB");
    let (count, extensions, mflags0) = match &msg.body {
        Body::Ping { gossip, exts } => {
            let count = u16::try_from(gossip.len()).expect("more than 65535 gossip entries");
            let extensions = u16::try_from(exts.len()).expect("more than 65535 ping extensions");
            let ext_flag = if exts.is_empty() { 0 } else { FLAG0_EXT_DATA };
            (count, extensions, h.mflags0 | ext_flag)
        }
        _ => (0, 0, h.mflags0),
    };
    let start = out.len();
    out.reserve(len);
    out.extend_from_slice(&SIGNATURE);
    out.extend_from_slice(&totlen.to_be_bytes());
    out.extend_from_slice(&PROTO_VER.to_be_bytes());
    out.extend_from_slice(&h.port.to_be_bytes());
    out.extend_from_slice(&h.kind.to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    out.extend_from_slice(&h.current_epoch.to_be_bytes());
    out.extend_from_slice(&h.config_epoch.to_be_bytes());
    out.extend_from_slice(&h.offset.to_be_bytes());
    out.extend_from_slice(&h.sender);
    out.extend_from_slice(&h.slots[..]);
    out.extend_from_slice(&h.slaveof);
    put_ip(out, &h.myip);
    out.extend_from_slice(&extensions.to_be_bytes());
    out.extend_from_slice(&[0; 30]);
    out.extend_from_slice(&h.pport.to_be_bytes());
    out.extend_from_slice(&h.cport.to_be_bytes());
    out.extend_from_slice(&h.flags.to_be_bytes());
    out.push(h.state);
    out.extend_from_slice(&[mflags0, 0, 0]);
    match &msg.body {
        Body::Ping { gossip, exts } => {
            for g in gossip {
                encode_gossip(g, out);
            }
            for ext in exts {
                encode_ext(ext, out);
            }
        }
        Body::Fail { about } => out.extend_from_slice(about),
        Body::Publish { channel, message } => {
            // Both fit in u32: their sum is under totlen.
            out.extend_from_slice(&(channel.len() as u32).to_be_bytes());
            out.extend_from_slice(&(message.len() as u32).to_be_bytes());
            out.extend_from_slice(channel);
            out.extend_from_slice(message);
        }
        Body::Update { config_epoch, name, slots } => {
            out.extend_from_slice(&config_epoch.to_be_bytes());
            out.extend_from_slice(name);
            out.extend_from_slice(&slots[..]);
        }
        Body::Module { module_id, kind, payload } => {
            out.extend_from_slice(&module_id.to_le_bytes());
            out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
            out.push(*kind);
            out.extend_from_slice(payload);
        }
        Body::Empty | Body::Unknown => {}
    }
    debug_assert_eq!(out.len() - start, len);
}

fn encode_gossip(g: &Gossip, out: &mut Vec<u8>) {
    out.extend_from_slice(&g.name);
    out.extend_from_slice(&g.ping_sent.to_be_bytes());
    out.extend_from_slice(&g.pong_received.to_be_bytes());
    put_ip(out, &g.ip);
    out.extend_from_slice(&g.port.to_be_bytes());
    out.extend_from_slice(&g.cport.to_be_bytes());
    out.extend_from_slice(&g.flags.to_be_bytes());
    out.extend_from_slice(&g.pport.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
}

fn encode_ext(ext: &Ext, out: &mut Vec<u8>) {
    // Extension lengths are bounded by totlen, already checked to fit u32.
    out.extend_from_slice(&(ext_len(ext) as u32).to_be_bytes());
    out.extend_from_slice(&ext_kind(ext).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    match ext {
        Ext::Hostname(s) | Ext::HumanNodename(s) => {
            let end = out.len() + padded_str_len(s);
            out.extend_from_slice(s.as_bytes());
            out.resize(end, 0);
        }
        Ext::ForgottenNode { name, ttl } => {
            out.extend_from_slice(name);
            out.extend_from_slice(&ttl.to_be_bytes());
        }
        Ext::ShardId(name) | Ext::InternalSecret(name) => out.extend_from_slice(name),
    }
}

/// An IP field: the text, cut (at a character) to leave room for the NUL,
/// then zeros.
fn put_ip(out: &mut Vec<u8>, ip: &str) {
    let mut cut = ip.len().min(IP_LEN - 1);
    while !ip.is_char_boundary(cut) {
        cut -= 1;
    }
    let end = out.len() + IP_LEN;
    out.extend_from_slice(&ip.as_bytes()[..cut]);
    out.resize(end, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn name(s: &str) -> Name {
        name_from_str(s).expect("40 characters")
    }

    const A: &str = "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca";
    const B: &str = "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1";
    const SHARD: &str = "0123456789abcdef0123456789abcdef01234567";

    fn header(kind: u16) -> Header {
        let mut slots = Box::new([0; SLOTS_LEN]);
        set_slot_bit(&mut slots, 0);
        set_slot_bit(&mut slots, 5460);
        Header {
            port: 6379,
            kind,
            current_epoch: 7,
            config_epoch: 3,
            offset: 1 << 40,
            sender: name(A),
            slots,
            slaveof: NULL_NAME,
            myip: "10.0.0.1".into(),
            pport: 0,
            cport: 16379,
            flags: NODE_MASTER,
            state: 0,
            mflags0: 0,
        }
    }

    fn gossip(n: &str, ip: &str) -> Gossip {
        Gossip {
            name: name(n),
            ping_sent: 1_700_000_000,
            pong_received: 1_700_000_001,
            ip: ip.into(),
            port: 6380,
            cport: 16380,
            flags: NODE_SLAVE | NODE_PFAIL,
            pport: 6390,
        }
    }

    fn encoded(msg: &Msg) -> Vec<u8> {
        let mut out = Vec::new();
        encode(msg, &mut out);
        assert_eq!(out.len(), encoded_len(msg));
        out
    }

    fn be16(buf: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([buf[at], buf[at + 1]])
    }

    fn be32(buf: &[u8], at: usize) -> u32 {
        u32::from_be_bytes(buf[at..at + 4].try_into().unwrap())
    }

    fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
        buf[at..at + bytes.len()].copy_from_slice(bytes);
    }

    fn round_trip(msg: &Msg) {
        let frame = encoded(msg);
        assert_eq!(frame_len(&frame), Ok(Some(frame.len())));
        assert_eq!(decode(&frame).as_ref(), Ok(msg));
    }

    #[test]
    fn round_trips_each_body() {
        let ping = Body::Ping {
            gossip: vec![gossip(B, "10.0.0.2"), gossip(SHARD, "::1")],
            exts: vec![
                Ext::Hostname("node-a.example".into()),
                Ext::HumanNodename("a".into()),
                Ext::ForgottenNode { name: name(B), ttl: 60 },
                Ext::ShardId(name(SHARD)),
                Ext::InternalSecret(name(A)),
            ],
        };
        let mut ping_header = header(TYPE_PING);
        ping_header.mflags0 = FLAG0_EXT_DATA;
        round_trip(&Msg { header: ping_header, body: ping });
        for kind in [TYPE_PONG, TYPE_MEET] {
            round_trip(&Msg { header: header(kind), body: Body::Ping { gossip: vec![], exts: vec![] } });
        }
        round_trip(&Msg { header: header(TYPE_FAIL), body: Body::Fail { about: name(B) } });
        for kind in [TYPE_PUBLISH, TYPE_PUBLISHSHARD] {
            let body = Body::Publish { channel: b"news".to_vec(), message: b"\x00hello\xff".to_vec() };
            round_trip(&Msg { header: header(kind), body });
        }
        let mut slots = Box::new([0; SLOTS_LEN]);
        set_slot_bit(&mut slots, 16383);
        round_trip(&Msg { header: header(TYPE_UPDATE), body: Body::Update { config_epoch: 9, name: name(B), slots } });
        let body = Body::Module { module_id: 0x0123_4567_89ab_cdef, kind: 200, payload: vec![1, 2, 3] };
        round_trip(&Msg { header: header(TYPE_MODULE), body });
        for kind in [TYPE_FAILOVER_AUTH_REQUEST, TYPE_FAILOVER_AUTH_ACK, TYPE_MFSTART] {
            let mut h = header(kind);
            h.mflags0 = FLAG0_FORCEACK | FLAG0_PAUSED;
            h.slaveof = name(B);
            round_trip(&Msg { header: h, body: Body::Empty });
        }
        round_trip(&Msg { header: header(42), body: Body::Unknown });
    }

    #[test]
    fn header_and_ping_offsets() {
        let mut h = header(TYPE_PING);
        h.pport = 0x0102;
        h.cport = 0x0304;
        h.flags = 0x0506;
        h.state = 0x07;
        h.mflags0 = FLAG0_PAUSED;
        h.slaveof = name(B);
        let body = Body::Ping {
            gossip: vec![gossip(B, "10.0.0.2"), gossip(SHARD, "10.0.0.3")],
            exts: vec![Ext::Hostname("h".into()), Ext::ShardId(name(SHARD))],
        };
        let f = encoded(&Msg { header: h, body });
        assert_eq!(&f[0..4], b"RCmb");
        assert_eq!(be32(&f, 4) as usize, f.len());
        assert_eq!(f.len(), HEADER_LEN + 2 * GOSSIP_LEN + 16 + 48);
        assert_eq!(be16(&f, 8), 1);
        assert_eq!(be16(&f, 10), 6379);
        assert_eq!(be16(&f, 12), TYPE_PING);
        assert_eq!(be16(&f, 14), 2);
        assert_eq!(&f[40..80], A.as_bytes());
        assert_eq!(f[80], 1, "slot 0");
        assert_eq!(f[80 + 5460 / 8], 1 << (5460 % 8));
        assert_eq!(&f[2128..2168], B.as_bytes());
        assert_eq!(&f[2168..2177], b"10.0.0.1\0");
        assert_eq!(be16(&f, 2214), 2, "extensions");
        assert_eq!(be16(&f, 2246), 0x0102);
        assert_eq!(be16(&f, 2248), 0x0304);
        assert_eq!(be16(&f, 2250), 0x0506);
        assert_eq!(f[2252], 0x07);
        assert_eq!(f[2253], FLAG0_PAUSED | FLAG0_EXT_DATA);
        assert_eq!(&f[2256..2296], B.as_bytes());
        assert_eq!(&f[2256 + GOSSIP_LEN..2296 + GOSSIP_LEN], SHARD.as_bytes());
        let ext = HEADER_LEN + 2 * GOSSIP_LEN;
        assert_eq!(be32(&f, ext), 16);
        assert_eq!(be16(&f, ext + 4), EXT_HOSTNAME);
        assert_eq!(&f[ext + 8..ext + 16], b"h\0\0\0\0\0\0\0");
        assert_eq!(be32(&f, ext + 16), 48);
        assert_eq!(be16(&f, ext + 20), EXT_SHARDID);
    }

    #[test]
    fn fixed_body_lengths() {
        let f = encoded(&Msg { header: header(TYPE_FAIL), body: Body::Fail { about: name(B) } });
        assert_eq!(be32(&f, 4), 2296);
        assert_eq!(&f[2256..2296], B.as_bytes());
        let body = Body::Update { config_epoch: 9, name: name(B), slots: Box::new([0xff; SLOTS_LEN]) };
        let f = encoded(&Msg { header: header(TYPE_UPDATE), body });
        assert_eq!(be32(&f, 4) as usize, 2256 + 8 + 40 + 2048);
        let body = Body::Publish { channel: b"ch".to_vec(), message: b"msg".to_vec() };
        let f = encoded(&Msg { header: header(TYPE_PUBLISH), body });
        assert_eq!(be32(&f, 4), 2256 + 8 + 5);
        assert_eq!((be32(&f, 2256), be32(&f, 2260)), (2, 3));
        assert_eq!(&f[2264..], b"chmsg");
        let body = Body::Module { module_id: 1, kind: 7, payload: b"xy".to_vec() };
        let f = encoded(&Msg { header: header(TYPE_MODULE), body });
        assert_eq!(be32(&f, 4), 2256 + 13 + 2);
        assert_eq!((f[2256], be32(&f, 2264), f[2268]), (1, 2, 7));
        assert_eq!(&f[2269..], b"xy");
        let f = encoded(&Msg { header: header(TYPE_MFSTART), body: Body::Empty });
        assert_eq!(be32(&f, 4), 2256);
    }

    /// A PONG as a Redis 7.2 master sends it, laid out byte by byte: one
    /// gossip entry, a hostname and a shard id.
    fn redis_pong() -> Vec<u8> {
        let mut f = vec![0u8; 2424];
        put(&mut f, 0, b"RCmb");
        put(&mut f, 4, &[0, 0, 0x09, 0x78]); // 2424
        put(&mut f, 8, &[0, 1]);
        put(&mut f, 10, &[0x18, 0xeb]); // 6379
        put(&mut f, 12, &[0, 1]); // PONG
        put(&mut f, 14, &[0, 1]); // one gossip entry
        put(&mut f, 16, &[0, 0, 0, 0, 0, 0, 0, 7]);
        put(&mut f, 24, &[0, 0, 0, 0, 0, 0, 0, 3]);
        put(&mut f, 32, &[0, 0, 0, 0, 0, 0, 0x01, 0x00]);
        put(&mut f, 40, A.as_bytes());
        f[80] = 0b101; // slots 0 and 2
        f[80 + 2047] = 0x80; // slot 16383
        put(&mut f, 2168, b"10.0.0.1");
        put(&mut f, 2214, &[0, 2]); // two extensions
        put(&mut f, 2248, &[0x3f, 0xfb]); // 16379
        put(&mut f, 2250, &[0, 1]); // master
        f[2253] = 4; // extension data
        put(&mut f, 2256, B.as_bytes());
        put(&mut f, 2296, &[0x65, 0x53, 0xf1, 0x00]);
        put(&mut f, 2300, &[0x65, 0x53, 0xf1, 0x01]);
        put(&mut f, 2304, b"10.0.0.2");
        put(&mut f, 2350, &[0x18, 0xec]); // 6380
        put(&mut f, 2352, &[0x3f, 0xfc]); // 16380
        put(&mut f, 2354, &[0, 2]); // slave
        put(&mut f, 2360, &[0, 0, 0, 16, 0, 0, 0, 0]); // hostname, 16 bytes
        put(&mut f, 2368, b"node-a");
        put(&mut f, 2376, &[0, 0, 0, 48, 0, 3, 0, 0]); // shard id, 48 bytes
        put(&mut f, 2384, SHARD.as_bytes());
        f
    }

    #[test]
    fn decodes_a_frame_built_by_hand() {
        let f = redis_pong();
        assert_eq!(frame_len(&f), Ok(Some(2424)));
        let msg = decode(&f).unwrap();
        let h = &msg.header;
        assert_eq!((h.port, h.kind, h.current_epoch, h.config_epoch, h.offset), (6379, TYPE_PONG, 7, 3, 256));
        assert_eq!((h.sender, h.slaveof, h.myip.as_str()), (name(A), NULL_NAME, "10.0.0.1"));
        assert_eq!((h.pport, h.cport, h.flags, h.state, h.mflags0), (0, 16379, NODE_MASTER, 0, FLAG0_EXT_DATA));
        let set: Vec<u16> = (0..SLOTS as u16).filter(|&s| slot_bit(&h.slots, s)).collect();
        assert_eq!(set, [0, 2, 16383]);
        let g = Gossip {
            name: name(B),
            ping_sent: 0x6553_f100,
            pong_received: 0x6553_f101,
            ip: "10.0.0.2".into(),
            port: 6380,
            cport: 16380,
            flags: NODE_SLAVE,
            pport: 0,
        };
        let exts = vec![Ext::Hostname("node-a".into()), Ext::ShardId(name(SHARD))];
        assert_eq!(msg.body, Body::Ping { gossip: vec![g], exts });
        // And the encoder lays it out the same way, byte for byte.
        assert_eq!(encoded(&msg), f);
    }

    #[test]
    fn unknown_extension_types_are_skipped() {
        let mut f = redis_pong();
        put(&mut f, 2364, &[0, 99]);
        let Body::Ping { exts, .. } = decode(&f).unwrap().body else { panic!("not a ping") };
        assert_eq!(exts, [Ext::ShardId(name(SHARD))]);
    }

    #[test]
    fn extensions_need_the_flag() {
        let mut f = redis_pong();
        f[2253] = 0;
        let expected = Error::Length { kind: TYPE_PONG, totlen: 2424, expected: 2360 };
        assert_eq!(decode(&f), Err(expected));
        // A count without the flag and without records is not looked at.
        let mut f = f[..2360].to_vec();
        put(&mut f, 4, &2360u32.to_be_bytes());
        let Body::Ping { gossip, exts } = decode(&f).unwrap().body else { panic!("not a ping") };
        assert_eq!((gossip.len(), exts.len()), (1, 0));
    }

    #[test]
    fn unknown_types_are_accepted_with_any_body() {
        let mut f = encoded(&Msg { header: header(TYPE_FAIL), body: Body::Fail { about: name(B) } });
        put(&mut f, 12, &[0, 11]);
        let msg = decode(&f).unwrap();
        assert_eq!((msg.header.kind, msg.header.current_epoch, msg.body), (11, 7, Body::Unknown));
    }

    #[test]
    fn rejects_bad_signature_and_version() {
        let mut f = redis_pong();
        f[3] = b'B';
        assert_eq!(frame_len(&f), Err(Error::Signature));
        assert_eq!(decode(&f), Err(Error::Signature));
        for ver in [0u16, 2] {
            let mut f = redis_pong();
            put(&mut f, 8, &ver.to_be_bytes());
            assert_eq!(decode(&f), Err(Error::Version(ver)));
        }
    }

    #[test]
    fn frame_len_bounds() {
        let f = redis_pong();
        assert_eq!(frame_len(&f[..7]), Ok(None));
        assert_eq!(frame_len(&f[..8]), Ok(Some(2424)));
        let mut f = f;
        put(&mut f, 4, &2255u32.to_be_bytes());
        assert_eq!(frame_len(&f), Err(Error::TotalLength(2255)));
        put(&mut f, 4, &2256u32.to_be_bytes());
        assert_eq!(frame_len(&f), Ok(Some(2256)));
        let too_long = MAX_FRAME_LEN as u32 + 1;
        put(&mut f, 4, &too_long.to_be_bytes());
        assert_eq!(frame_len(&f), Err(Error::TotalLength(too_long)));
    }

    #[test]
    fn frames_a_stream() {
        let mut stream = encoded(&Msg { header: header(TYPE_FAIL), body: Body::Fail { about: name(B) } });
        stream.extend_from_slice(&redis_pong());
        let first = frame_len(&stream).unwrap().unwrap();
        assert_eq!(decode(&stream[..first]).unwrap().header.kind, TYPE_FAIL);
        assert_eq!(frame_len(&stream[first..]), Ok(Some(2424)));
        assert_eq!(decode(&stream[first..]).unwrap().header.kind, TYPE_PONG);
    }

    #[test]
    fn rejects_truncated_frames() {
        let f = redis_pong();
        for n in [0, 4, 8, 100, 2255, 2256, 2423] {
            assert_eq!(decode(&f[..n]), Err(Error::Incomplete), "{n} bytes");
        }
        let mut longer = f.clone();
        longer.push(0);
        assert_eq!(decode(&longer), Err(Error::Incomplete));
    }

    #[test]
    fn rejects_count_not_matching_totlen() {
        let body = Body::Ping { gossip: vec![gossip(B, "10.0.0.2"), gossip(B, "10.0.0.3")], exts: vec![] };
        let mut f = encoded(&Msg { header: header(TYPE_PING), body });
        put(&mut f, 14, &[0, 1]);
        assert_eq!(decode(&f), Err(Error::Length { kind: TYPE_PING, totlen: 2464, expected: 2360 }));
        put(&mut f, 14, &[0, 3]);
        assert_eq!(decode(&f), Err(Error::Length { kind: TYPE_PING, totlen: 2464, expected: 2568 }));
        let mut f = encoded(&Msg { header: header(TYPE_FAIL), body: Body::Fail { about: name(B) } });
        f.push(0);
        put(&mut f, 4, &2297u32.to_be_bytes());
        assert_eq!(decode(&f), Err(Error::Length { kind: TYPE_FAIL, totlen: 2297, expected: 2296 }));
        let mut f = encoded(&Msg { header: header(TYPE_MFSTART), body: Body::Empty });
        f.extend_from_slice(&[0; 8]);
        put(&mut f, 4, &2264u32.to_be_bytes());
        assert_eq!(decode(&f), Err(Error::Length { kind: TYPE_MFSTART, totlen: 2264, expected: 2256 }));
    }

    #[test]
    fn rejects_bad_extension_lengths() {
        // The shard id record claims 8 bytes more than the message has.
        let mut f = redis_pong();
        put(&mut f, 2376, &[0, 0, 0, 56]);
        assert_eq!(decode(&f), Err(Error::ExtOverrun));
        // Not a multiple of 8, or shorter than the record's own header.
        for len in [12u32, 0, 4, 17] {
            let mut f = redis_pong();
            put(&mut f, 2360, &len.to_be_bytes());
            assert_eq!(decode(&f), Err(Error::ExtLength(len)), "length {len}");
        }
        // One record more than there are bytes for.
        let mut f = redis_pong();
        put(&mut f, 2214, &[0, 3]);
        assert_eq!(decode(&f), Err(Error::ExtOverrun));
        // A record shorter than its type needs.
        let mut f = redis_pong();
        put(&mut f, 2360, &[0, 0, 0, 16, 0, 2]);
        assert_eq!(decode(&f), Err(Error::ExtPayload(EXT_FORGOTTEN_NODE)));
        // Records that leave bytes over.
        let mut f = redis_pong();
        put(&mut f, 2214, &[0, 1]);
        assert_eq!(decode(&f), Err(Error::Length { kind: TYPE_PONG, totlen: 2424, expected: 2376 }));
    }

    #[test]
    fn rejects_publish_lengths_that_wrap() {
        // 8 + 0xffffffff + 9 is 8 modulo 2^32: Redis's 32-bit sum would match.
        let body = Body::Publish { channel: vec![1; 4], message: vec![2; 4] };
        let mut f = encoded(&Msg { header: header(TYPE_PUBLISH), body });
        put(&mut f, 2256, &u32::MAX.to_be_bytes());
        put(&mut f, 2260, &9u32.to_be_bytes());
        let expected = 2264 + u64::from(u32::MAX) + 9;
        assert_eq!(decode(&f), Err(Error::Length { kind: TYPE_PUBLISH, totlen: 2272, expected }));
        // And a body too short for the two lengths.
        let mut f = encoded(&Msg { header: header(TYPE_MFSTART), body: Body::Empty });
        put(&mut f, 12, &TYPE_PUBLISH.to_be_bytes());
        assert_eq!(decode(&f), Err(Error::Length { kind: TYPE_PUBLISH, totlen: 2256, expected: 2264 }));
    }

    #[test]
    fn rejects_module_length_mismatch() {
        let body = Body::Module { module_id: 1, kind: 2, payload: vec![0; 5] };
        let mut f = encoded(&Msg { header: header(TYPE_MODULE), body });
        put(&mut f, 2264, &6u32.to_be_bytes());
        assert_eq!(decode(&f), Err(Error::Length { kind: TYPE_MODULE, totlen: 2274, expected: 2275 }));
    }

    #[test]
    fn long_ip_is_cut_to_its_field() {
        let mut h = header(TYPE_MFSTART);
        h.myip = "x".repeat(60);
        let f = encoded(&Msg { header: h, body: Body::Empty });
        assert_eq!(f[2168 + 45], 0);
        assert_eq!(decode(&f).unwrap().header.myip, "x".repeat(45));
    }

    #[test]
    fn slot_bits() {
        let mut slots = [0u8; SLOTS_LEN];
        for s in [0, 9, 16383] {
            set_slot_bit(&mut slots, s);
        }
        assert_eq!((slots[0], slots[1], slots[2047]), (1, 2, 0x80));
        assert!(slot_bit(&slots, 9) && !slot_bit(&slots, 8) && !slot_bit(&slots, 16384));
        set_slot_bit(&mut slots, 16384);
        clear_slot_bit(&mut slots, 9);
        assert!(!slot_bit(&slots, 9));
        assert_eq!(slots.iter().map(|b| b.count_ones()).sum::<u32>(), 2);
    }

    #[test]
    fn names() {
        assert_eq!(name_str(&name(A)), Some(A));
        assert_eq!(name_from_str("abc"), None);
        assert_eq!(name_str(&[0xff; NAME_LEN]), None);
    }

    fn arb_name() -> impl Strategy<Value = Name> {
        prop::collection::vec(any::<u8>(), NAME_LEN).prop_map(|v| v.try_into().unwrap())
    }

    fn arb_slots() -> impl Strategy<Value = Box<[u8; SLOTS_LEN]>> {
        prop::collection::vec(any::<u8>(), SLOTS_LEN).prop_map(|v| Box::new(v.try_into().unwrap()))
    }

    fn arb_header(kinds: &'static [u16]) -> impl Strategy<Value = Header> {
        (
            (prop::sample::select(kinds), any::<u16>(), any::<u64>(), any::<u64>(), any::<u64>()),
            (arb_name(), arb_slots(), arb_name(), "[0-9a-f:.]{0,45}"),
            (any::<u16>(), any::<u16>(), any::<u16>(), any::<u8>(), any::<u8>()),
        )
            .prop_map(
                |((kind, port, ce, cfe, off), (sender, slots, slaveof, myip), (pport, cport, flags, st, mf))| Header {
                    port,
                    kind,
                    current_epoch: ce,
                    config_epoch: cfe,
                    offset: off,
                    sender,
                    slots,
                    slaveof,
                    myip,
                    pport,
                    cport,
                    flags,
                    state: st,
                    mflags0: mf,
                },
            )
    }

    fn arb_gossip() -> impl Strategy<Value = Gossip> {
        (arb_name(), any::<u32>(), any::<u32>(), "[0-9a-f:.]{0,45}", any::<[u16; 4]>()).prop_map(
            |(name, ping_sent, pong_received, ip, [port, cport, flags, pport])| Gossip {
                name,
                ping_sent,
                pong_received,
                ip,
                port,
                cport,
                flags,
                pport,
            },
        )
    }

    fn arb_ext() -> impl Strategy<Value = Ext> {
        prop_oneof![
            "[a-z0-9.-]{0,70}".prop_map(Ext::Hostname),
            "\\PC{0,20}".prop_filter("no NUL", |s: &String| !s.contains('\0')).prop_map(Ext::HumanNodename),
            (arb_name(), any::<u64>()).prop_map(|(name, ttl)| Ext::ForgottenNode { name, ttl }),
            arb_name().prop_map(Ext::ShardId),
            arb_name().prop_map(Ext::InternalSecret),
        ]
    }

    fn arb_ping() -> impl Strategy<Value = Msg> {
        (
            arb_header(&[TYPE_PING, TYPE_PONG, TYPE_MEET]),
            prop::collection::vec(arb_gossip(), 0..12),
            prop::collection::vec(arb_ext(), 0..8),
        )
            .prop_map(|(mut header, gossip, exts)| {
                if !exts.is_empty() {
                    header.mflags0 |= FLAG0_EXT_DATA;
                }
                Msg { header, body: Body::Ping { gossip, exts } }
            })
    }

    fn arb_publish() -> impl Strategy<Value = Msg> {
        (
            arb_header(&[TYPE_PUBLISH, TYPE_PUBLISHSHARD]),
            prop::collection::vec(any::<u8>(), 0..64),
            prop::collection::vec(any::<u8>(), 0..512),
        )
            .prop_map(|(header, channel, message)| Msg { header, body: Body::Publish { channel, message } })
    }

    fn arb_msg() -> impl Strategy<Value = Msg> {
        prop_oneof![
            3 => arb_ping(),
            1 => arb_publish(),
            1 => (arb_header(&[TYPE_FAIL]), arb_name()).prop_map(|(header, about)| Msg { header, body: Body::Fail { about } }),
            1 => (arb_header(&[TYPE_MODULE]), any::<u64>(), any::<u8>(), prop::collection::vec(any::<u8>(), 0..64))
                .prop_map(|(header, module_id, kind, payload)| Msg { header, body: Body::Module { module_id, kind, payload } }),
            1 => arb_header(&[TYPE_FAILOVER_AUTH_REQUEST, TYPE_MFSTART]).prop_map(|header| Msg { header, body: Body::Empty }),
        ]
    }

    /// Byte positions worth corrupting: the lengths, counts and flags the
    /// decoder trusts, and the body.
    fn arb_edit() -> impl Strategy<Value = (usize, u8)> {
        let spot = prop_oneof![0..16usize, 2214..2216usize, Just(2253usize), 2256..4096usize];
        (spot, any::<u8>())
    }

    proptest! {
        #[test]
        fn ping_round_trips(msg in arb_ping()) {
            let frame = encoded(&msg);
            prop_assert_eq!(decode(&frame), Ok(msg));
        }

        #[test]
        fn publish_round_trips(msg in arb_publish()) {
            let frame = encoded(&msg);
            prop_assert_eq!(decode(&frame), Ok(msg));
        }

        #[test]
        fn decode_of_any_bytes_does_not_panic(bytes in prop::collection::vec(any::<u8>(), 0..3000), sig: bool) {
            let mut bytes = bytes;
            if sig && bytes.len() >= 8 {
                // Past the signature and length checks, or random bytes stop there.
                bytes[..4].copy_from_slice(b"RCmb");
                let len = bytes.len() as u32;
                bytes[4..8].copy_from_slice(&len.to_be_bytes());
            }
            let _ = frame_len(&bytes);
            let _ = decode(&bytes);
        }

        /// A corrupted message is rejected, or it decodes to a message that
        /// encodes to bytes decoding to it again.
        #[test]
        fn corrupted_messages_decode_to_a_fixpoint(
            msg in arb_msg(),
            edits in prop::collection::vec(arb_edit(), 1..6),
            cut in prop::option::of(0usize..5000),
            fix_totlen: bool,
        ) {
            let mut f = encoded(&msg);
            for (at, byte) in edits {
                if at < f.len() {
                    f[at] = byte;
                }
            }
            if let Some(cut) = cut {
                f.truncate(cut);
            }
            if fix_totlen && f.len() >= 8 {
                let len = f.len() as u32;
                f[4..8].copy_from_slice(&len.to_be_bytes());
            }
            if let Ok(m) = decode(&f) {
                prop_assert_eq!(decode(&encoded(&m)), Ok(m));
            }
        }
    }
}
