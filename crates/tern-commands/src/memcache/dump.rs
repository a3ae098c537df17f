//! What memcached's debugging tools walk: `stats cachedump`, `stats
//! sizes`, the LRU crawler's `lru_crawler metadump` (and its `crawl`, `tocrawl`, `sleep`,
//! `enable`, `disable`), and `cache_memlimit`.
//!
//! Tern has neither slabs nor per-class LRUs: an item's class is the one
//! memcached would give an item of its size (`tern_memcache::slabs`), and
//! items come in keyspace order rather than LRU order, so a dump lists the
//! same items with the same fields, ordered otherwise. A crawl has nothing
//! to do (expired items are never visible here), so it is acknowledged as
//! memcached acknowledges it. Keys memcached could not hold (over 250
//! bytes, or with spaces or control bytes, possible through RESP) are left
//! out of both dumps, and so are values of other types.

use std::sync::atomic::Ordering;

use tern_memcache::number::parse_flags;
use tern_memcache::reply::{self, Status};
use tern_memcache::slabs::{class_of, MAX_CLASS};
use tern_memcache::{errors as e, parse::item_total_size, KEY_MAX};
use tern_store::{mc_state, EntryExt, StrRef};

use super::Exec;

/// One item as the dumps describe it.
struct Item<'a> {
    key: &'a [u8],
    /// Data bytes.
    len: usize,
    /// Deadline in whole Unix seconds.
    exp: Option<u64>,
    /// Last access, Unix seconds.
    la: u64,
    cas: u64,
    fetched: bool,
    binary: bool,
    /// memcached's `ITEM_ntotal`.
    size: usize,
}

/// `stats cachedump` stops before its reply would pass 2 MiB, as memcached.
const CACHEDUMP_MAX: usize = 2 * 1024 * 1024;

impl Exec<'_> {
    /// Calls `f` with each item of database 0, shard by shard, until it
    /// answers false.
    fn each_item(&self, mut f: impl FnMut(&Item<'_>) -> bool) {
        let (now, now_s) = (self.now, self.now / 1000);
        for gid in self.srv.ks.db_gids(0) {
            let shard = self.srv.ks.lock(gid);
            for ent in shard.iter(now) {
                let (Some(s), key) = (ent.str(), ent.key()) else { continue };
                if key.len() > KEY_MAX || key.iter().any(|&b| b <= b' ' || b == 0x7f) {
                    continue;
                }
                let (flags, cas, state, len) = match s {
                    StrRef::Mc(m) => (m.flags(), m.cas(), m.state(), m.len()),
                    other => (0, 0, 0, other.len()),
                };
                let item = Item {
                    key,
                    len,
                    exp: ent.expire().map(|ms| ms / 1000),
                    la: now_s.saturating_sub(ent.idle_secs(now)),
                    cas,
                    fetched: state & mc_state::FETCHED != 0,
                    binary: state & mc_state::KEY_BINARY != 0,
                    size: item_total_size(key.len(), flags, len),
                };
                if !f(&item) {
                    return;
                }
            }
        }
    }

    /// `stats cachedump <class> <limit>`: `args` are the words after
    /// `cachedump`. Binary keys are skipped, as memcached skips them.
    pub(super) fn cachedump(&mut self, args: &[&[u8]]) {
        if args.len() < 2 {
            return reply::line(self.out, e::BAD_COMMAND_LINE);
        }
        let (Some(id), Some(limit)) = (parse_flags(args[0]), parse_flags(args[1])) else {
            return reply::line(self.out, e::BAD_FORMAT);
        };
        if id > MAX_CLASS {
            return reply::line(self.out, e::ILLEGAL_SLAB_ID);
        }
        let mut text = Vec::new();
        let mut shown = 0u32;
        self.each_item(|it| {
            if limit != 0 && shown >= limit {
                return false;
            }
            if class_of(it.size) != id || it.binary {
                return true;
            }
            let line_start = text.len();
            text.extend_from_slice(b"ITEM ");
            text.extend_from_slice(it.key);
            let _ = std::io::Write::write_fmt(&mut text, format_args!(" [{} b; {} s]\r\n", it.len, it.exp.unwrap_or(0)));
            if text.len() + 5 > CACHEDUMP_MAX {
                text.truncate(line_start);
                return false;
            }
            shown += 1;
            true
        });
        self.out.extend_from_slice(&text);
        reply::status(self.out, Status::End);
    }

    /// `stats sizes`: once `stats sizes_enable` turned it on, how many items
    /// stored since fall in each 32-byte step of memcached's item size
    /// (`STAT <size> <count>`, up to the step of the largest item); else
    /// memcached's `sizes_status disabled`. memcached counts items as it
    /// links and unlinks them; this counts the live ones when asked, so a
    /// flushed item that memcached would still count until it is next
    /// looked at is not counted here.
    pub(super) fn stats_sizes(&mut self) {
        let min = self.sh.sizes_cas_min.load(Ordering::Relaxed);
        if min == 0 {
            reply::stat(self.out, "sizes_status", "disabled");
            return reply::status(self.out, Status::End);
        }
        let buckets = self.sh.max_item_size() / 32 + 1;
        let mut hist = std::collections::BTreeMap::<usize, u64>::new();
        self.each_item(|it| {
            let bucket = it.size.div_ceil(32);
            if it.cas >= min && bucket < buckets {
                *hist.entry(bucket).or_default() += 1;
            }
            true
        });
        for (bucket, n) in hist {
            reply::stat(self.out, &(bucket * 32).to_string(), n);
        }
        reply::status(self.out, Status::End);
    }

    /// `lru_crawler <crawl|metadump|tocrawl|sleep> <arg>`, `lru_crawler
    /// <enable|disable>`, with memcached's replies.
    pub(super) fn lru_crawler(&mut self, args: Vec<&[u8]>) {
        let disabled = &self.sh.crawler_disabled;
        match args.as_slice() {
            [b"crawl", ids] | [b"metadump", ids] => {
                if disabled.load(Ordering::Relaxed) {
                    return reply::line(self.out, e::CRAWLER_DISABLED);
                }
                let Some(classes) = crawl_classes(ids) else {
                    return reply::line(self.out, e::BAD_CLASS);
                };
                if args[0] == b"crawl" {
                    return reply::status(self.out, Status::Ok);
                }
                self.metadump(&classes);
            }
            [b"tocrawl", n] => match parse_flags(n) {
                Some(_) => reply::status(self.out, Status::Ok),
                None => reply::line(self.out, e::BAD_FORMAT),
            },
            [b"sleep", n] => match parse_flags(n) {
                Some(us) if us > 1_000_000 => reply::line(self.out, e::CRAWLER_SLEEP),
                Some(_) => reply::status(self.out, Status::Ok),
                None => reply::line(self.out, e::BAD_FORMAT),
            },
            [b"enable"] => {
                // As memcached, which cannot start a second crawler thread.
                if disabled.swap(false, Ordering::Relaxed) {
                    reply::status(self.out, Status::Ok);
                } else {
                    reply::line(self.out, e::CRAWLER_START_FAILED);
                }
            }
            [b"disable"] => {
                disabled.store(true, Ordering::Relaxed);
                reply::status(self.out, Status::Ok);
            }
            _ => reply::line(self.out, e::ERROR),
        }
    }

    /// One `key=.. exp=.. la=.. cas=.. fetch=.. cls=.. size=..` line per
    /// item of the chosen classes (keys URI-encoded), lines ended by `\n`
    /// alone as memcached ends them, then `END`.
    fn metadump(&mut self, classes: &[bool; MAX_CLASS as usize + 1]) {
        let mut text = Vec::new();
        self.each_item(|it| {
            let cls = class_of(it.size);
            if !classes[cls as usize] {
                return true;
            }
            text.extend_from_slice(b"key=");
            uri_encode(it.key, &mut text);
            let exp = it.exp.map_or(-1, |s| s as i64);
            let fetch = if it.fetched { "yes" } else { "no" };
            let _ = std::io::Write::write_fmt(
                &mut text,
                format_args!(" exp={exp} la={} cas={} fetch={fetch} cls={cls} size={}\n", it.la, it.cas, it.size),
            );
            true
        });
        self.out.extend_from_slice(&text);
        reply::status(self.out, Status::End);
    }

    /// `cache_memlimit <megabytes>`: memcached's memory limit is Tern's
    /// `maxmemory` (which `stats settings` reports as `maxbytes`).
    pub(super) fn cache_memlimit(&mut self, megabytes: &[u8], noreply: bool) {
        let answer = match parse_flags(megabytes) {
            None => Err(e::ERROR),
            Some(mb) if mb < 8 => Err(e::MEMLIMIT_TOO_SMALL),
            Some(mb) if mb > 1_000_000_000 => Err(e::MEMLIMIT_NOT_BYTES),
            Some(mb) => {
                let mut cfg = self.srv.config.write();
                cfg.maxmemory = u64::from(mb) << 20;
                self.srv.apply_config(&cfg);
                Ok(())
            }
        };
        if noreply {
            return;
        }
        match answer {
            Ok(()) => reply::status(self.out, Status::Ok),
            Err(msg) => reply::line(self.out, msg),
        }
    }
}

/// The classes a crawl names: `all`, `hash` (every class, walked by
/// hash in memcached) or ids from 1 to 63 separated by commas; None for
/// anything else (memcached's BADCLASS).
fn crawl_classes(ids: &[u8]) -> Option<[bool; MAX_CLASS as usize + 1]> {
    let mut set = [false; MAX_CLASS as usize + 1];
    if ids == b"all" || ids == b"hash" {
        set[1..].fill(true);
        return Some(set);
    }
    for id in ids.split(|&c| c == b',').filter(|t| !t.is_empty()) {
        let id = parse_flags(id).filter(|&i| (1..=MAX_CLASS).contains(&i))?;
        set[id as usize] = true;
    }
    Some(set)
}

/// memcached's `uriencode`: letters, digits and `-._~` as they are, every
/// other byte `%XX` (upper-case hex).
fn uri_encode(key: &[u8], out: &mut Vec<u8>) {
    for &b in key {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b);
        } else {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crawl_class_lists_as_memcached_reads_them() {
        assert!(crawl_classes(b"all").is_some_and(|s| s[1] && s[63] && !s[0]));
        assert!(crawl_classes(b"1,2").is_some_and(|s| s[1] && s[2] && !s[3]));
        for bad in [&b"0"[..], b"64", b"x", b"1,x", b"-1"] {
            assert!(crawl_classes(bad).is_none(), "{bad:?}");
        }
        let mut v = Vec::new();
        uri_encode(b"a b%c~:", &mut v);
        assert_eq!(v, b"a%20b%25c~%3A");
    }
}
