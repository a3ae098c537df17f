//! Keyspace notifications (`notify-keyspace-events`): the events the
//! write path noted, published as Redis publishes them.
//!
//! ```text
//!  command spec .event(ev::LPUSH) ─► dispatch sets it current ─► the store
//!    notes (db, key, event) per write, in order (tern-store's `event`)
//!  after the command (the cron, a worker's own writes) ─► Server::invalidate_written
//!    ─► publish(notes): `__keyspace@<db>__:<key>` ← name (K),
//!                       `__keyevent@<db>__:<name>` ← key (E)
//! ```
//!
//! The store notes events only while [`Notify::refresh`] says someone
//! could hear them: some class is on, with `K` or `E`, and a client
//! listens on a keyspace channel or on any pattern. Otherwise a write
//! notes nothing and pays one relaxed load.

use parking_lot::Mutex;
use tern_store::effect::Modified;
use tern_store::event::{class, Event};

use super::Messaging;

/// The events commands declare (tern-store's `event` has those the write
/// path makes on its own: `del` of an emptied key, `expired`, `evicted`,
/// `new`, `hexpired`, `keymiss`).
pub mod ev {
    use tern_store::event::{class, Event};

    pub use tern_store::event::{DEL, EVICTED, EXPIRED, HEXPIRED, KEYMISS, NEW};

    const fn g(name: &'static str) -> Event {
        Event::new(class::GENERIC, name)
    }
    const fn s(name: &'static str) -> Event {
        Event::new(class::STRING, name)
    }
    const fn l(name: &'static str) -> Event {
        Event::new(class::LIST, name)
    }
    const fn st(name: &'static str) -> Event {
        Event::new(class::SET, name)
    }
    const fn h(name: &'static str) -> Event {
        Event::new(class::HASH, name)
    }
    const fn z(name: &'static str) -> Event {
        Event::new(class::ZSET, name)
    }
    const fn t(name: &'static str) -> Event {
        Event::new(class::STREAM, name)
    }

    pub const EXPIRE: Event = g("expire");
    pub const PERSIST: Event = g("persist");
    pub const RENAME_FROM: Event = g("rename_from");
    pub const RENAME_TO: Event = g("rename_to");
    pub const MOVE_FROM: Event = g("move_from");
    pub const MOVE_TO: Event = g("move_to");
    pub const COPY_TO: Event = g("copy_to");
    pub const RESTORE: Event = g("restore");

    pub const SET: Event = s("set");
    pub const SETRANGE: Event = s("setrange");
    pub const INCRBY: Event = s("incrby");
    pub const INCRBYFLOAT: Event = s("incrbyfloat");
    pub const APPEND: Event = s("append");
    pub const SETBIT: Event = s("setbit");
    pub const PFADD: Event = s("pfadd");
    /// memcached's `prepend` (Tern's own: Redis has no such command).
    pub const PREPEND: Event = s("prepend");
    /// memcached's `decr` (Redis's DECR is an `incrby`).
    pub const DECRBY: Event = s("decrby");

    pub const LPUSH: Event = l("lpush");
    pub const RPUSH: Event = l("rpush");
    pub const LPOP: Event = l("lpop");
    pub const RPOP: Event = l("rpop");
    pub const LINSERT: Event = l("linsert");
    pub const LSET: Event = l("lset");
    pub const LTRIM: Event = l("ltrim");
    pub const LREM: Event = l("lrem");
    pub const SORTSTORE: Event = l("sortstore");

    pub const SADD: Event = st("sadd");
    pub const SREM: Event = st("srem");
    pub const SPOP: Event = st("spop");
    pub const SINTERSTORE: Event = st("sinterstore");
    pub const SUNIONSTORE: Event = st("sunionstore");
    pub const SDIFFSTORE: Event = st("sdiffstore");

    pub const HSET: Event = h("hset");
    pub const HINCRBY: Event = h("hincrby");
    pub const HINCRBYFLOAT: Event = h("hincrbyfloat");
    pub const HDEL: Event = h("hdel");
    pub const HEXPIRE: Event = h("hexpire");
    pub const HPERSIST: Event = h("hpersist");

    pub const ZADD: Event = z("zadd");
    pub const ZINCR: Event = z("zincr");
    pub const ZREM: Event = z("zrem");
    pub const ZREMRANGEBYSCORE: Event = z("zremrangebyscore");
    pub const ZREMRANGEBYRANK: Event = z("zremrangebyrank");
    pub const ZREMRANGEBYLEX: Event = z("zremrangebylex");
    pub const ZPOPMIN: Event = z("zpopmin");
    pub const ZPOPMAX: Event = z("zpopmax");
    pub const ZUNIONSTORE: Event = z("zunionstore");
    pub const XADD: Event = t("xadd");
    pub const XTRIM: Event = t("xtrim");
    pub const XDEL: Event = t("xdel");
    pub const XSETID: Event = t("xsetid");
    pub const XGROUP_CREATE: Event = t("xgroup-create");
    pub const XGROUP_CREATECONSUMER: Event = t("xgroup-createconsumer");
    pub const XGROUP_DELCONSUMER: Event = t("xgroup-delconsumer");
    pub const XGROUP_DESTROY: Event = t("xgroup-destroy");
    pub const XGROUP_SETID: Event = t("xgroup-setid");
    pub const ZINTERSTORE: Event = z("zinterstore");
    pub const ZDIFFSTORE: Event = z("zdiffstore");
    pub const ZRANGESTORE: Event = z("zrangestore");
    pub const GEORADIUSSTORE: Event = z("georadiusstore");
    pub const GEOSEARCHSTORE: Event = z("geosearchstore");
}

/// Makes `ev` the keyspace event of the running command's next writes,
/// in place of the one its spec declares.
#[inline]
pub fn write_as(ev: Event) {
    tern_store::event::set_current(Some(ev));
}

/// Whether the store notes events, kept right as the configuration and
/// the subscriptions change.
#[derive(Debug, Default)]
pub struct Notify {
    /// Held while deciding, so that two decisions cannot land in the
    /// wrong order (a subscribe's "on" overwritten by an older "off").
    gate: Mutex<()>,
}

impl Notify {
    /// Decides whether writes are to note their events (`flags`: the
    /// configured classes) and tells the store through `set`.
    pub fn refresh(&self, flags: u32, m: &Messaging, set: impl FnOnce(bool)) {
        let _g = self.gate.lock();
        let classes = flags & !(class::KEYSPACE | class::KEYEVENT) != 0;
        let channels = flags & (class::KEYSPACE | class::KEYEVENT) != 0;
        set(classes && channels && m.pubsub.may_hear_keyspace());
    }
}

/// Publishes the events of `notes` whose class `flags` selects, in order;
/// `publish` sends one message.
pub fn publish(notes: &[Modified], flags: u32, mut publish: impl FnMut(&[u8], &[u8])) {
    let mut chan = Vec::new();
    for n in notes {
        let Some(e) = n.event.filter(|e| flags & e.class != 0) else { continue };
        if flags & class::KEYSPACE != 0 {
            channel(&mut chan, b"__keyspace@", n.db, &n.key);
            publish(&chan, e.name.as_bytes());
        }
        if flags & class::KEYEVENT != 0 {
            channel(&mut chan, b"__keyevent@", n.db, e.name.as_bytes());
            publish(&chan, &n.key);
        }
    }
}

fn channel(out: &mut Vec<u8>, prefix: &[u8], db: u32, tail: &[u8]) {
    out.clear();
    out.extend_from_slice(prefix);
    out.extend_from_slice(itoa::Buffer::new().format(db).as_bytes());
    out.extend_from_slice(b"__:");
    out.extend_from_slice(tail);
}
