//! The command table as data: name, arity, flags, key specs, handler.
//!
//! Each family file (`strings.rs`, `keys.rs`, ...) exports a `COMMANDS`
//! slice; [`CommandTable::build`] gathers them and gives every command (and
//! subcommand) a dense id used to index per-command stats. Arity,
//! unknown-command and unknown-subcommand errors come from this one place.
//! Keys are declared as Redis 7 key specs (`keyspec.rs`); the legacy
//! `(first, last, step)` and `movablekeys` are derived from them here.

use tern_resp::Args;

use super::docargs::{self, Arg};
use super::keyspec::{CommandKeys, Key, KeyFlags, KeySpec, Keys, Legacy, LoneRange};
use super::Handler;

/// Command flags, as Redis's command table names them (COMMAND INFO shows
/// them) plus Tern's own planning flags.
pub mod flags {
    pub const WRITE: u32 = 1 << 0;
    pub const READONLY: u32 = 1 << 1;
    pub const DENYOOM: u32 = 1 << 2;
    pub const ADMIN: u32 = 1 << 3;
    pub const PUBSUB: u32 = 1 << 4;
    pub const NOSCRIPT: u32 = 1 << 5;
    pub const BLOCKING: u32 = 1 << 6;
    pub const LOADING: u32 = 1 << 7;
    pub const STALE: u32 = 1 << 8;
    pub const SKIP_MONITOR: u32 = 1 << 9;
    pub const SKIP_SLOWLOG: u32 = 1 << 10;
    pub const ASKING: u32 = 1 << 11;
    pub const FAST: u32 = 1 << 12;
    pub const NO_AUTH: u32 = 1 << 13;
    pub const MAY_REPLICATE: u32 = 1 << 14;
    pub const NO_MULTI: u32 = 1 << 15;
    /// Derived from the key specs, never declared (see [`super::Legacy`]).
    pub const MOVABLE_KEYS: u32 = 1 << 16;
    pub const ALLOW_BUSY: u32 = 1 << 17;
    /// The command may run without keys (COMMAND GETKEYS then answers an
    /// empty list instead of an error).
    pub const NO_MANDATORY_KEYS: u32 = 1 << 18;
    /// Refused while a replica loads its data in the background (Tern
    /// never does: the flag is shown in COMMAND INFO only).
    pub const NO_ASYNC_LOADING: u32 = 1 << 19;
    /// Refused unless its directive allows the connection (DEBUG and
    /// `enable-debug-command`); hidden from COMMAND INFO, as in Redis.
    pub const PROTECTED: u32 = 1 << 20;
    /// Tern: the handler locks the shards it needs itself (keys in other
    /// databases, whole-database walks). Nothing is locked for it.
    pub const MANUAL_LOCKS: u32 = 1 << 24;
    /// Tern: runs even between MULTI and EXEC instead of being queued.
    pub const TX_CONTROL: u32 = 1 << 25;
    /// Tern: runs a script or function, whose own flags decide whether it
    /// counts as a write and may be refused under `maxmemory` (Redis's
    /// evalGetCommandFlags and fcallGetCommandFlags).
    pub const SCRIPT_FLAGS: u32 = 1 << 26;

    /// Names for COMMAND INFO, in Redis's order.
    pub const NAMES: &[(u32, &str)] = &[
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (PUBSUB, "pubsub"),
        (NOSCRIPT, "noscript"),
        (BLOCKING, "blocking"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (SKIP_MONITOR, "skip_monitor"),
        (SKIP_SLOWLOG, "skip_slowlog"),
        (ASKING, "asking"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        (MAY_REPLICATE, "may_replicate"),
        (NO_MANDATORY_KEYS, "no_mandatory_keys"),
        (NO_ASYNC_LOADING, "no_async_loading"),
        (NO_MULTI, "no_multi"),
        (MOVABLE_KEYS, "movablekeys"),
        (ALLOW_BUSY, "allow_busy"),
    ];
}

/// One command (or subcommand) of the table.
pub struct CommandSpec {
    /// Lowercase name (`get`, or `id` for CLIENT ID).
    pub name: &'static str,
    /// Redis arity: N means exactly N arguments including the name, -N at
    /// least N.
    pub arity: i32,
    pub flags: u32,
    /// Where the keys are and how they are used, as Redis 7 key specs.
    pub keys: &'static [KeySpec],
    /// For `VARIABLE_FLAGS` specs: the flags that apply to these arguments.
    pub key_flags_of: Option<fn(Args<'_>, usize) -> KeyFlags>,
    /// For commands whose specs cannot find every key (SORT's STORE,
    /// anywhere in the arguments): COMMAND GETKEYS's keys, as Redis's
    /// `getkeys_proc` finds them. Dispatch does not use it: such commands
    /// lock for themselves (`MANUAL_LOCKS`).
    pub key_finder: Option<fn(Args<'_>) -> Vec<Key>>,
    pub handler: Handler,
    /// COMMAND DOCS: group (`string`, `generic`, `connection`, `server`,
    /// `transactions`), summary, since, complexity.
    pub group: &'static str,
    pub summary: &'static str,
    pub since: &'static str,
    pub complexity: &'static str,
    /// ACL categories without the `@`, besides those the flags imply.
    pub acl: &'static [&'static str],
    /// Subcommands of a container command (CLIENT, CONFIG, OBJECT, ...).
    pub subcommands: &'static [CommandSpec],
    /// COMMAND INFO tips (`nondeterministic_output`, `request_policy:...`).
    pub tips: &'static [&'static str],
    /// COMMAND DOCS: (since, replaced by) of a deprecated command.
    pub deprecated: Option<(&'static str, &'static str)>,
    /// COMMAND DOCS: (version, change) of each change to the command.
    pub history: &'static [(&'static str, &'static str)],
    /// COMMAND DOCS: a system command, not meant for applications (the
    /// `syscmd` doc flag).
    pub syscmd: bool,
    /// The argument holding the member (or field) of its first key that
    /// the command looks up, when it looks up one (negative: from the
    /// end): a pipeline's planner hashes it, asks for its line in a large
    /// set, hash or sorted set at stage 3, and has the command before ask
    /// for a sorted set's member lines ([`crate::cmd::MembersAhead`]).
    pub member: Option<i8>,
    /// The channels it names, which ACL channel rules apply to.
    pub channels: Channels,
    /// The keyspace event its writes are (see `messaging::notify`); a
    /// handler whose writes are several events switches it before each.
    pub event: Option<tern_store::event::Event>,
}

/// The channels a command names for its ACL check (Redis's
/// `getChannelsFromCommand`, publish and subscribe uses; unsubscribing is
/// never refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channels {
    None,
    /// The first argument (PUBLISH, SPUBLISH).
    First,
    /// Every argument (SUBSCRIBE, SSUBSCRIBE).
    All,
    /// Every argument, each a pattern compared as written (PSUBSCRIBE).
    Patterns,
}

impl Channels {
    /// The (argument position, is a pattern) of each channel in `args`.
    pub fn of(self, args: Args<'_>) -> impl Iterator<Item = (usize, bool)> {
        let (from, to, pattern) = match self {
            Channels::None => (1, 1, false),
            Channels::First => (1, 2.min(args.len()), false),
            Channels::All => (1, args.len(), false),
            Channels::Patterns => (1, args.len(), true),
        };
        (from..to.max(from)).map(move |i| (i, pattern))
    }
}

/// A command as the table holds it.
pub struct Cmd {
    pub spec: &'static CommandSpec,
    /// The spec's flags plus `MOVABLE_KEYS` when the key specs imply it.
    pub flags: u32,
    /// COMMAND INFO's (first, last, step), from the key specs.
    pub legacy: Legacy,
    /// The key specs when they are one plain range, resolved for dispatch.
    lone: Option<LoneRange>,
    pub id: usize,
    /// `get`, or `client|id` for a subcommand.
    pub fullname: String,
    pub parent: Option<usize>,
    pub subs: NameIndex,
    /// COMMAND DOCS's `arguments` (`docargs.rs`).
    pub args: &'static [Arg],
}

impl Cmd {
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    /// Does `argc` satisfy the arity?
    pub fn arity_ok(&self, argc: usize) -> bool {
        let a = self.spec.arity;
        (a > 0 && argc == a as usize) || (a < 0 && argc >= (-a) as usize)
    }

    /// The key specs when they are one plain range (key positions by
    /// arithmetic: the prefetch stage's [`super::stage::KeyStage`]).
    #[inline]
    pub fn lone(&self) -> Option<LoneRange> {
        self.lone
    }

    /// The keys of the command line `args`, in key-spec order (see
    /// [`Keys::invalid`] for arguments that do not locate them).
    #[inline]
    pub fn keys<'a>(&self, args: Args<'a>) -> Keys<'static, 'a> {
        match self.lone {
            Some(r) => Keys::lone(args, r),
            None => Keys::new(self.spec.keys, args),
        }
    }

    /// The key declarations as COMMAND GETKEYS reads them.
    pub fn command_keys(&self) -> CommandKeys<'static> {
        CommandKeys {
            specs: self.spec.keys,
            no_mandatory_keys: self.has(flags::NO_MANDATORY_KEYS),
            flags_of: self.spec.key_flags_of,
            finder: self.spec.key_finder,
        }
    }
}

pub struct CommandTable {
    cmds: Vec<Cmd>,
    by_name: NameIndex,
    /// Top-level commands `rename-command` took away (renamed to "").
    removed: Vec<bool>,
}

impl CommandTable {
    pub fn build() -> Self {
        Self::build_with(&[])
    }

    /// The table of [`super::FAMILIES`] and of the families of layers
    /// above `cmd` (scripting), which `cmd` cannot name.
    pub fn build_with(above: &[&'static [CommandSpec]]) -> Self {
        let mut t = CommandTable { cmds: Vec::new(), by_name: NameIndex::default(), removed: Vec::new() };
        for family in super::FAMILIES.iter().chain(above) {
            for spec in family.iter() {
                let id = t.add(spec, None, spec.name.to_string());
                t.by_name.insert(spec.name.as_bytes(), id);
            }
        }
        t.removed = vec![false; t.cmds.len()];
        t
    }

    /// `rename-command from to`: the command is found by `to` only, or by
    /// no name when `to` is empty (Redis's config.c, with its errors).
    /// COMMAND still describes it by its own name, as Redis does.
    pub fn rename(&mut self, from: &[u8], to: &[u8]) -> Result<(), &'static str> {
        let id = self.by_name.get(from).ok_or("No such command in rename-command")?;
        if !to.is_empty() && self.by_name.get(to).is_some_and(|other| other != id) {
            return Err("Target command name already exists");
        }
        if to.len() > NAME_MAX {
            return Err("Target command name is too long");
        }
        let mut names: Vec<(Vec<u8>, usize)> = Vec::new();
        for c in self.cmds.iter().filter(|c| c.parent.is_none()) {
            for name in self.names_of(c.id) {
                names.push((name, c.id));
            }
        }
        names.retain(|(n, i)| !(*i == id && n.eq_ignore_ascii_case(from)));
        if !to.is_empty() {
            names.push((to.to_ascii_lowercase(), id));
        }
        self.by_name = NameIndex::default();
        for (n, i) in &names {
            self.by_name.insert(n, *i);
        }
        self.removed[id] = !names.iter().any(|(_, i)| *i == id);
        Ok(())
    }

    /// The names top-level command `id` is found by now.
    fn names_of(&self, id: usize) -> Vec<Vec<u8>> {
        self.by_name.names().filter(|(_, i)| *i == id).map(|(n, _)| n).collect()
    }

    fn add(&mut self, spec: &'static CommandSpec, parent: Option<usize>, fullname: String) -> usize {
        let id = self.cmds.len();
        let legacy = Legacy::of(spec.keys);
        let flags = spec.flags | if legacy.movable { flags::MOVABLE_KEYS } else { 0 };
        let lone = LoneRange::of(spec.keys);
        let args = docargs::args_of(&fullname);
        self.cmds.push(Cmd { spec, flags, legacy, lone, id, fullname, parent, subs: NameIndex::default(), args });
        for sub in spec.subcommands {
            let sid = self.add(sub, Some(id), format!("{}|{}", spec.name, sub.name));
            self.cmds[id].subs.insert(sub.name.as_bytes(), sid);
        }
        id
    }

    pub fn len(&self) -> usize {
        self.cmds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cmds.is_empty()
    }

    pub fn get(&self, id: usize) -> &Cmd {
        &self.cmds[id]
    }

    pub fn iter(&self) -> impl Iterator<Item = &Cmd> {
        self.cmds.iter()
    }

    /// Top-level commands only (but those renamed to nothing).
    pub fn top_level(&self) -> impl Iterator<Item = &Cmd> {
        self.cmds.iter().filter(|c| c.parent.is_none() && !self.removed.get(c.id).copied().unwrap_or(false))
    }

    /// Looks a command name up case-insensitively, without allocating.
    pub fn lookup(&self, name: &[u8]) -> Option<&Cmd> {
        self.by_name.get(name).map(|id| &self.cmds[id])
    }

    pub fn lookup_sub(&self, parent: &Cmd, name: &[u8]) -> Option<&Cmd> {
        parent.subs.get(name).map(|id| &self.cmds[id])
    }

    /// Every command as ACL rules name it: by id, with its categories
    /// (declared and implied by its flags).
    pub fn acl_catalog(&self) -> crate::acl::Catalog {
        use crate::acl::catalog::{Entry, CATEGORIES};
        let entries = self
            .cmds
            .iter()
            .map(|c| Entry {
                fullname: c.fullname.clone(),
                parent: c.parent,
                subcommands: c.subs.values().collect(),
                categories: super::command::acl_categories(c.spec)
                    .iter()
                    .filter_map(|n| CATEGORIES.iter().position(|x| x == n))
                    .fold(0, |bits, i| bits | 1 << i),
            })
            .collect();
        crate::acl::Catalog::new(entries)
    }
}

/// The last command name a worker looked up, as sent (case kept): a
/// pipeline repeats its command, and comparing two words is cheaper than
/// folding and hashing the name again. Names over 16 bytes are not kept.
#[derive(Default)]
pub struct LastName {
    /// The table it was found in (its address), the name's bytes as two
    /// words, its length (0: nothing kept) and its id.
    table: usize,
    words: [u64; 2],
    len: usize,
    id: usize,
}

impl LastName {
    /// [`CommandTable::lookup`], remembering a found name.
    #[inline]
    pub fn lookup<'t>(&mut self, table: &'t CommandTable, name: &[u8]) -> Option<&'t Cmd> {
        let at = table as *const CommandTable as usize;
        let words = (name.len() <= 16).then(|| {
            let (a, b) = name.split_at(name.len().min(8));
            [word_of(a), word_of(b)]
        });
        if words.is_some_and(|w| w == self.words && name.len() == self.len && at == self.table) {
            return Some(table.get(self.id));
        }
        let cmd = table.lookup(name)?;
        if let Some(words) = words {
            *self = LastName { table: at, words, len: name.len(), id: cmd.id };
        }
        Some(cmd)
    }
}

/// Names (commands, or one command's subcommands) to ids, looked up
/// case-insensitively once per command run. A name is folded to lower
/// case into four words (no command's name is longer than 32 bytes); a
/// multiplicative hash of the words and the length picks a slot of an
/// open-addressed array kept at most half full, and a hit compares the
/// words and the length: a few dozen instructions, where a SipHash map
/// took some 300 per command.
#[derive(Default)]
pub struct NameIndex {
    /// (folded name, length, id); an empty slot has length 0.
    slots: Vec<(Folded, u8, u32)>,
    len: usize,
}

type Folded = [u64; 4];
const NAME_MAX: usize = 32;

fn fold(name: &[u8]) -> Option<Folded> {
    if name.is_empty() || name.len() > NAME_MAX {
        return None;
    }
    let mut w = [0u64; 4];
    let (words, rest) = name.as_chunks::<8>();
    for (i, c) in words.iter().enumerate() {
        w[i] = lower_word(u64::from_le_bytes(*c));
    }
    if !rest.is_empty() {
        w[words.len()] = lower_word(word_of(rest));
    }
    Some(w)
}

/// Up to eight bytes as a little-endian word, zero above them, in at
/// most three loads.
#[inline(always)]
fn word_of(mut c: &[u8]) -> u64 {
    if let Ok(b) = <[u8; 8]>::try_from(c) {
        return u64::from_le_bytes(b);
    }
    let (mut v, mut shift) = (0u64, 0);
    if let Some((four, rest)) = c.split_first_chunk::<4>() {
        v = u64::from(u32::from_le_bytes(*four));
        (c, shift) = (rest, 32);
    }
    if let Some((two, rest)) = c.split_first_chunk::<2>() {
        v |= u64::from(u16::from_le_bytes(*two)) << shift;
        (c, shift) = (rest, shift + 16);
    }
    if let Some(&b) = c.first() {
        v |= u64::from(b) << shift;
    }
    v
}

/// ASCII upper-case letters of a word's eight bytes to lower case, the
/// rest (bytes over 0x7f too) unchanged: one add per bound per byte,
/// without a carry between bytes (each is at most 0x7f + 0x3f).
#[inline(always)]
fn lower_word(w: u64) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let low7 = w & !HIGH;
    let from_a = low7 + 0x3f3f_3f3f_3f3f_3f3f; // high bit: byte >= b'A'
    let past_z = low7 + 0x2525_2525_2525_2525; // high bit: byte > b'Z'
    let upper = from_a & !past_z & !w & HIGH;
    w | upper >> 2
}

fn slot_of(w: &Folded, len: usize, mask: usize) -> usize {
    let h = (w[0] ^ w[1].rotate_left(17) ^ w[2].rotate_left(31) ^ w[3].rotate_left(47) ^ len as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> 32) as usize & mask
}

impl NameIndex {
    /// Adds `name` (lower case, at most 32 bytes: the table's own names).
    fn insert(&mut self, name: &[u8], id: usize) {
        let w = fold(name).expect("a command name of 1..=32 bytes");
        if (self.len + 1) * 2 > self.slots.len() {
            let old = std::mem::take(&mut self.slots);
            self.slots = vec![([0; 4], 0, 0); (old.len() * 2).max(8)];
            self.len = 0;
            for (w, n, id) in old.into_iter().filter(|s| s.1 > 0) {
                self.place(w, n, id);
            }
        }
        self.place(w, name.len() as u8, id as u32);
    }

    fn place(&mut self, w: Folded, n: u8, id: u32) {
        let mask = self.slots.len() - 1;
        let mut i = slot_of(&w, n as usize, mask);
        while self.slots[i].1 != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = (w, n, id);
        self.len += 1;
    }

    /// The id of `name`, in any case.
    #[inline]
    pub fn get(&self, name: &[u8]) -> Option<usize> {
        let w = fold(name)?;
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = slot_of(&w, name.len(), mask);
        loop {
            let (sw, n, id) = &self.slots[i];
            if *n == 0 {
                return None;
            }
            if *n as usize == name.len() && *sw == w {
                return Some(*id as usize);
            }
            i = (i + 1) & mask;
        }
    }

    /// Every id held, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = usize> + '_ {
        self.slots.iter().filter(|s| s.1 > 0).map(|s| s.2 as usize)
    }

    /// Every (lower-case name, id) held, in no particular order.
    pub fn names(&self) -> impl Iterator<Item = (Vec<u8>, usize)> + '_ {
        self.slots.iter().filter(|s| s.1 > 0).map(|(w, n, id)| {
            let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).take(*n as usize).collect();
            (bytes, *id as usize)
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl CommandSpec {
    /// A command with no docs, ACL categories or subcommands; chain
    /// [`CommandSpec::doc`], [`CommandSpec::acl`], [`CommandSpec::subs`].
    pub const fn new(name: &'static str, arity: i32, flags: u32, keys: &'static [KeySpec], handler: Handler) -> Self {
        CommandSpec {
            name,
            arity,
            flags,
            keys,
            key_flags_of: None,
            key_finder: None,
            handler,
            group: "generic",
            summary: "",
            since: "1.0.0",
            complexity: "O(1)",
            acl: &[],
            subcommands: &[],
            tips: &[],
            deprecated: None,
            history: &[],
            syscmd: false,
            member: None,
            channels: Channels::None,
            event: None,
        }
    }

    /// The keyspace event its writes are.
    pub const fn event(mut self, ev: tern_store::event::Event) -> Self {
        self.event = Some(ev);
        self
    }

    /// The channels it names (ACL channel rules).
    pub const fn channels(mut self, c: Channels) -> Self {
        self.channels = c;
        self
    }

    pub const fn doc(mut self, group: &'static str, summary: &'static str, since: &'static str, complexity: &'static str) -> Self {
        self.group = group;
        self.summary = summary;
        self.since = since;
        self.complexity = complexity;
        self
    }

    pub const fn acl(mut self, acl: &'static [&'static str]) -> Self {
        self.acl = acl;
        self
    }

    pub const fn subs(mut self, subs: &'static [CommandSpec]) -> Self {
        self.subcommands = subs;
        self
    }

    /// The member argument (see [`CommandSpec::member`]).
    pub const fn member(mut self, at: i8) -> Self {
        self.member = Some(at);
        self
    }

    pub const fn tips(mut self, tips: &'static [&'static str]) -> Self {
        self.tips = tips;
        self
    }

    /// Deprecated since version `since`, in favour of `replaced_by`.
    pub const fn deprecated(mut self, since: &'static str, replaced_by: &'static str) -> Self {
        self.deprecated = Some((since, replaced_by));
        self
    }

    pub const fn syscmd(mut self) -> Self {
        self.syscmd = true;
        self
    }

    pub const fn history(mut self, history: &'static [(&'static str, &'static str)]) -> Self {
        self.history = history;
        self
    }

    /// COMMAND GETKEYS's finder for keys no spec locates.
    pub const fn key_finder(mut self, f: fn(Args<'_>) -> Vec<Key>) -> Self {
        self.key_finder = Some(f);
        self
    }

    /// The finder of the key flags for `VARIABLE_FLAGS` specs.
    pub const fn key_flags_of(mut self, f: fn(Args<'_>, usize) -> KeyFlags) -> Self {
        self.key_flags_of = Some(f);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::super::keyspec::{Begin, Find, INCOMPLETE, VARIABLE_FLAGS};
    use super::*;

    /// Every command and subcommand is found by its name in any case, and
    /// nothing else is: a prefix, a name with a NUL after it (which folds
    /// to the same words), an empty or an over-long name.
    #[test]
    fn names_are_found_in_any_case_and_only_whole() {
        let t = CommandTable::build();
        let mut subs = 0;
        for c in t.iter() {
            let name = c.spec.name;
            let mixed: String = name.chars().enumerate().map(|(i, ch)| if i % 2 == 0 { ch.to_ascii_uppercase() } else { ch }).collect();
            let within = |n: &[u8]| match c.parent {
                None => t.lookup(n).map(|f| f.id),
                Some(p) => t.lookup_sub(t.get(p), n).map(|f| f.id),
            };
            subs += usize::from(c.parent.is_some());
            for n in [name.to_string(), name.to_ascii_uppercase(), mixed] {
                assert_eq!(within(n.as_bytes()), Some(c.id), "{n}");
            }
            let mut nul = name.as_bytes().to_vec();
            nul.push(0);
            assert_eq!(within(&nul), None);
            // A prefix is found only when it is a name itself (GET of GETEX).
            let prefix = &name.as_bytes()[..name.len() - 1];
            if let Some(id) = within(prefix) {
                assert_eq!(t.get(id).spec.name.as_bytes(), prefix);
            }
        }
        assert!(subs > 10);
        assert!(t.lookup(b"").is_none());
        assert_eq!(t.lookup(&[b'g'; 33]).map(|c| c.id), None);
        assert_eq!(t.top_level().count(), t.by_name.len());
    }

    /// The remembered name answers only for the same bytes: a case, a
    /// length or a neighbour's difference looks the name up again.
    #[test]
    fn the_last_name_answers_only_for_itself() {
        let t = CommandTable::build();
        let mut last = LastName::default();
        let id = |n: &[u8]| t.lookup(n).map(|c| c.id);
        let names: &[&[u8]] = &[
            b"GET", b"GET", b"get", b"GETBIT", b"GE", b"GET\0", b"SET", b"set", b"nosuch", b"GET",
            b"zrangebyscore", b"ZRANGEBYSCORE", b"zrangebyscorex", b"zrangebyscor", b"georadiusbymember_ro", b"",
        ];
        for n in names {
            assert_eq!(last.lookup(&t, n).map(|c| c.id), id(n), "{:?}", String::from_utf8_lossy(n));
        }
        let other = CommandTable::build();
        assert_eq!(last.lookup(&other, b"GET").map(|c| c.id), other.lookup(b"GET").map(|c| c.id));
    }

    /// The word-wide fold lower-cases exactly what `to_ascii_lowercase`
    /// does, for every byte in every position, whatever its neighbours.
    #[test]
    fn words_fold_as_bytes_do() {
        for b in 0..=255u8 {
            for at in 0..8 {
                for fill in [0u8, b'Z', b'a', 0x7f, 0x80, 0xff] {
                    let mut bytes = [fill; 8];
                    bytes[at] = b;
                    let mut want = bytes;
                    want.make_ascii_lowercase();
                    assert_eq!(lower_word(u64::from_le_bytes(bytes)).to_le_bytes(), want, "{bytes:?}");
                }
            }
        }
        for n in 1..=8 {
            let c: Vec<u8> = (1..=n as u8).collect();
            let mut b = [0u8; 8];
            b[..n].copy_from_slice(&c);
            assert_eq!(word_of(&c), u64::from_le_bytes(b));
        }
    }

    /// What the interpreter relies on, for every declared command: steps
    /// of at least one, a limit only with a last key of -1, a flag finder
    /// for variable flags, and a command whose specs cannot locate every
    /// key locking for itself (dispatch then has no keys to lock for it).
    /// Every command that writes keys says what keyspace event its writes
    /// are, but those whose writes are none in Redis (whole databases, the
    /// function libraries, memory and debug tools, a consumer group's
    /// pending entries); a new write command cannot slip by sending
    /// nothing.
    #[test]
    fn write_commands_declare_their_event() {
        const NO_EVENT: &[&str] = &[
            "flushdb", "flushall", "swapdb", "pfdebug", "pfselftest", "function", "fcall", "eval", "evalsha", "script", "exec", "restore-asking", "migrate", "xack",
            "xclaim", "xautoclaim",
        ];
        let t = CommandTable::build();
        let mut missing = Vec::new();
        for c in t.iter() {
            let s = c.spec;
            if s.flags & crate::cmd::table::flags::WRITE != 0 && s.keys.iter().any(|k| k.flags & (crate::cmd::keyspec::RW | crate::cmd::keyspec::OW | crate::cmd::keyspec::RM) != 0) && s.event.is_none() && !NO_EVENT.contains(&s.name) {
                missing.push(c.fullname.clone());
            }
        }
        assert!(missing.is_empty(), "write commands with no keyspace event: {missing:?}");
    }

    #[test]
    fn key_specs_are_well_formed() {
        let t = CommandTable::build();
        for c in t.iter() {
            for s in c.spec.keys {
                match s.find {
                    Find::Range { lastkey, keystep, limit } => {
                        assert!(keystep >= 1 && limit >= 0, "{}", c.fullname);
                        assert!(limit <= 1 || lastkey == -1, "{}", c.fullname);
                    }
                    Find::Keynum { keynumidx, firstkey, keystep } => {
                        assert!(keynumidx >= 0 && firstkey >= 1 && keystep >= 1, "{}", c.fullname)
                    }
                    Find::Unknown => {}
                }
                match s.begin {
                    Begin::Index(pos) => assert!(pos >= 1, "{}", c.fullname),
                    Begin::Keyword { startfrom, .. } => assert!(startfrom != 0, "{}", c.fullname),
                    Begin::Unknown => {}
                }
                // The ACL's quick path walks a plain range and never asks
                // a key finder.
                assert!(c.lone().is_none() || c.spec.key_finder.is_none(), "{}", c.fullname);
                let partial = s.flags & INCOMPLETE != 0 || s.begin == Begin::Unknown || s.find == Find::Unknown;
                assert!(!partial || c.has(flags::MANUAL_LOCKS), "{} cannot be located by dispatch", c.fullname);
                assert_eq!(s.flags & VARIABLE_FLAGS != 0, c.spec.key_flags_of.is_some(), "{}", c.fullname);
            }
        }
    }

    fn noop(_: &mut super::super::Ctx<'_, '_>, _: Args<'_>) {}

    /// A command whose keys are counted by an argument (Redis's LMPOP),
    /// declared and looked up as any other: located by the same walk that
    /// dispatch runs, and movable.
    #[test]
    fn keynum_commands_are_located_through_the_table() {
        use super::super::keyspec::{index, keynum, ks, ACCESS, DELETE, RW};
        static LMPOP: CommandSpec = CommandSpec::new("lmpop", -4, flags::WRITE, &[ks(RW | ACCESS | DELETE, index(1), keynum(0, 1, 1))], noop);
        let mut t = CommandTable { cmds: Vec::new(), by_name: NameIndex::default(), removed: Vec::new() };
        let id = t.add(&LMPOP, None, "lmpop".into());
        let c = t.get(id);
        assert!(c.has(flags::MOVABLE_KEYS));
        assert_eq!((c.legacy.first, c.legacy.last, c.legacy.step), (0, 0, 0));
        let words: &[&[u8]] = &[b"lmpop", b"2", b"a", b"b", b"left"];
        let (mut buf, mut ranges) = (Vec::new(), Vec::new());
        for w in words {
            ranges.push((buf.len(), w.len()));
            buf.extend_from_slice(w);
        }
        let args = Args::from_parts(&buf, &ranges);
        assert_eq!(c.keys(args).map(|k| args.get(k.pos)).collect::<Vec<_>>(), vec![&b"a"[..], b"b"]);
        ranges[1] = (buf.len(), 2);
        buf.extend_from_slice(b"99");
        let args = Args::from_parts(&buf, &ranges);
        let mut walk = c.keys(args);
        assert_eq!(walk.by_ref().count(), 0);
        assert!(walk.invalid());
    }

    #[test]
    fn legacy_keys_and_movablekeys_come_from_the_specs() {
        let t = CommandTable::build();
        let legacy = |name: &str| {
            let c = t.lookup(name.as_bytes()).expect(name);
            (c.legacy.first, c.legacy.last, c.legacy.step, c.has(flags::MOVABLE_KEYS))
        };
        assert_eq!(legacy("get"), (1, 1, 1, false));
        assert_eq!(legacy("mset"), (1, -1, 2, false));
        assert_eq!(legacy("rename"), (1, 2, 1, false));
        assert_eq!(legacy("ping"), (0, 0, 0, false));
    }
}
