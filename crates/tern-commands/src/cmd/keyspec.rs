//! Redis 7 key specs: where a command's keys sit in its arguments, and how
//! it uses them. The command table declares them (each family's `COMMANDS`);
//! this module is their one interpreter.
//!
//! ```text
//!  spec = flags + begin_search + find_keys
//!    begin_search: index N              keys start at argument N
//!                | keyword K startfrom  after the first K found, searching
//!                                       from startfrom (backwards if < 0)
//!    find_keys:    range lastkey keystep limit
//!                                       lastkey relative to the start, or
//!                                       from the end if < 0 (limit > 1: only
//!                                       1/limit of what is left)
//!                | keynum keynumidx firstkey keystep
//!                                       an argument counts the keys
//!
//!  SET k v        ks(RW|ACCESS|UPDATE|VARIABLE_FLAGS, index(1), range(0, 1, 0))
//!  MSET k v k v   ks(OW|UPDATE, index(1), range(-1, 2, 0))
//!  ZUNIONSTORE d 2 a b
//!                 ks(OW|UPDATE, index(1), range(0, 1, 0)),
//!                 ks(RO|ACCESS, index(2), keynum(0, 1, 1))
//! ```
//!
//! [`Keys`] walks a command line's keys in spec order without allocating:
//! dispatch locates and locks them, checks their length, signals WATCH with
//! them; the pipeline planner (`prefetch.rs`) hints them; COMMAND GETKEYS,
//! GETKEYSANDFLAGS and INFO report them. A spec that does not fit the
//! arguments (a count beyond them, a negative count) makes the whole walk
//! invalid, as Redis's `getKeysUsingKeySpecs` does: dispatch then locates
//! nothing and the handler reports the syntax error. A command whose one
//! spec is a plain range (nearly all of them) has it resolved when the
//! table is built ([`LoneRange`]), so that GET's or MGET's walk is a bare
//! counter, as cheap as the legacy arithmetic it replaces.
//!
//! The legacy `(first, last, step)` of COMMAND INFO and the `movablekeys`
//! flag are derived from the specs, as Redis derives them
//! (`populateCommandLegacyRangeSpec`), never declared.
//!
//! Non-goals: Redis's per-command key finders (`getkeys_proc`) beyond the
//! flags of SET's optional GET. A command whose keys no spec can locate
//! (`INCOMPLETE`, unknown begin or find) must lock for itself
//! (`MANUAL_LOCKS`); a table test holds every command to that.

use tern_resp::Args;

use crate::errors;

/// A key spec's flags, as COMMAND INFO names them (see [`FLAG_NAMES`]).
pub type KeyFlags = u16;

/// Read-only: the value is read, not changed.
pub const RO: KeyFlags = 1 << 0;
/// Read-write: read and changed.
pub const RW: KeyFlags = 1 << 1;
/// Overwrite: written without being read.
pub const OW: KeyFlags = 1 << 2;
/// Remove: the key is deleted.
pub const RM: KeyFlags = 1 << 3;
/// The value (not only its metadata) is returned or copied.
pub const ACCESS: KeyFlags = 1 << 4;
pub const UPDATE: KeyFlags = 1 << 5;
pub const INSERT: KeyFlags = 1 << 6;
pub const DELETE: KeyFlags = 1 << 7;
/// Not a key (a channel name placed like one): never located.
pub const NOT_KEY: KeyFlags = 1 << 8;
/// The spec may miss keys: a key finder must take over.
pub const INCOMPLETE: KeyFlags = 1 << 9;
/// The flags depend on the arguments (SET's GET): see [`CommandKeys::flags_of`].
pub const VARIABLE_FLAGS: KeyFlags = 1 << 10;

/// Names for COMMAND INFO and GETKEYSANDFLAGS, in Redis's order.
pub const FLAG_NAMES: &[(KeyFlags, &str)] = &[
    (RO, "RO"),
    (RW, "RW"),
    (OW, "OW"),
    (RM, "RM"),
    (ACCESS, "access"),
    (UPDATE, "update"),
    (INSERT, "insert"),
    (DELETE, "delete"),
    (NOT_KEY, "not_key"),
    (INCOMPLETE, "incomplete"),
    (VARIABLE_FLAGS, "variable_flags"),
];

/// The names of `flags`, in Redis's order.
pub fn flag_names(flags: KeyFlags) -> impl Iterator<Item = &'static str> {
    FLAG_NAMES.iter().filter(move |(f, _)| flags & f != 0).map(|&(_, n)| n)
}

/// Where a spec's keys start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Begin {
    /// At this argument.
    Index(i32),
    /// Right after `keyword` (any case), searched for from `startfrom`
    /// towards the end, or from `argc + startfrom` towards the start when
    /// negative.
    Keyword { keyword: &'static str, startfrom: i32 },
    Unknown,
}

/// How many keys follow the start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Find {
    /// Up to `lastkey` after the start, or to `argc + lastkey` when
    /// negative; with a `limit`, `lastkey` is -1 and only 1/limit of the
    /// arguments left are keys.
    Range { lastkey: i32, keystep: i32, limit: i32 },
    /// The argument `keynumidx` after the start counts the keys, which begin
    /// `firstkey` after the start.
    Keynum { keynumidx: i32, firstkey: i32, keystep: i32 },
    Unknown,
}

/// One Redis 7 key spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeySpec {
    pub notes: &'static str,
    pub flags: KeyFlags,
    pub begin: Begin,
    pub find: Find,
}

/// A key spec, written as Redis's JSON reads: `ks(RO | ACCESS, index(1), range(0, 1, 0))`.
pub const fn ks(flags: KeyFlags, begin: Begin, find: Find) -> KeySpec {
    KeySpec { notes: "", flags, begin, find }
}

impl KeySpec {
    pub const fn notes(mut self, notes: &'static str) -> Self {
        self.notes = notes;
        self
    }
}

pub const fn index(pos: i32) -> Begin {
    Begin::Index(pos)
}

pub const fn keyword(keyword: &'static str, startfrom: i32) -> Begin {
    Begin::Keyword { keyword, startfrom }
}

pub const fn range(lastkey: i32, keystep: i32, limit: i32) -> Find {
    Find::Range { lastkey, keystep, limit }
}

pub const fn keynum(keynumidx: i32, firstkey: i32, keystep: i32) -> Find {
    Find::Keynum { keynumidx, firstkey, keystep }
}

/// Redis's legacy key positions and `movablekeys`, derived from the specs
/// as `populateCommandLegacyRangeSpec` does: the specs that begin at an
/// index and run a plain range, each following the previous one, merged
/// into one range; any other spec makes the keys movable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Legacy {
    /// COMMAND INFO's first key, last key (absolute, or negative from the
    /// end) and step; (0, 0, 0) without keys.
    pub first: i32,
    pub last: i32,
    pub step: i32,
    pub movable: bool,
}

impl Legacy {
    pub fn of(specs: &[KeySpec]) -> Legacy {
        let none = Legacy { first: 0, last: 0, step: 0, movable: false };
        // COMMAND INFO shows an absolute last key when it is not counted
        // from the end.
        let shown = |first: i32, last_rel: i32, step: i32, movable: bool| Legacy {
            first,
            last: if last_rel >= 0 { first + last_rel } else { last_rel },
            step,
            movable,
        };
        match specs {
            [] => none,
            [KeySpec { flags, begin: Begin::Index(pos), find: Find::Range { lastkey, keystep, .. }, .. }] => {
                shown(*pos, *lastkey, *keystep, flags & INCOMPLETE != 0)
            }
            _ => {
                let (mut first, mut last, mut prev_last) = (i32::MAX, 0i32, 0i32);
                let mut movable = false;
                for s in specs {
                    let (Begin::Index(pos), Find::Range { lastkey, keystep, .. }) = (s.begin, s.find) else {
                        movable = true;
                        continue;
                    };
                    if keystep != 1 || (prev_last != 0 && prev_last != pos - 1) {
                        movable = true;
                        continue;
                    }
                    movable |= s.flags & INCOMPLETE != 0;
                    first = first.min(pos);
                    let abs = if lastkey >= 0 { lastkey + pos } else { lastkey };
                    // Redis compares unsigned, so a last key counted from
                    // the end (negative) wins over any absolute one.
                    last = (last as u32).max(abs as u32) as i32;
                    prev_last = last;
                }
                if first == i32::MAX {
                    return Legacy { movable: true, ..none };
                }
                let last_rel = if last < 0 { last } else { last - first };
                shown(first, last_rel, 1, movable)
            }
        }
    }
}

/// The one spec of nearly every command (GET, SET, MGET, HSET, DEL ...):
/// keys from an index over a plain range. Resolved when the table is built,
/// so that dispatch walks it as a bare counter ([`Keys::lone`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoneRange {
    first: i32,
    lastkey: i32,
    keystep: i32,
    flags: KeyFlags,
}

impl LoneRange {
    /// The argument index of the first key.
    pub fn first(&self) -> usize {
        self.first as usize
    }

    /// Arguments from one key to the next.
    pub fn step(&self) -> usize {
        self.keystep as usize
    }

    /// The spec's key flags (`RO`, `ACCESS`, ...).
    pub fn flags(&self) -> KeyFlags {
        self.flags
    }

    /// The argument indexes of the first and last key of a command line of
    /// `argc` arguments (step by [`LoneRange::step`]): `Ok(None)` when it
    /// has none, `Err` when the arguments do not fit the spec (as
    /// [`Keys::lone`] decides both).
    #[inline]
    pub fn span(&self, argc: usize) -> Result<Option<(usize, usize)>, ()> {
        let argc = argc as i64;
        let (first, lastkey) = (i64::from(self.first), i64::from(self.lastkey));
        let last = if lastkey >= 0 { first + lastkey } else { argc + lastkey };
        if last < argc && last >= first && first < argc && first >= 1 {
            Ok(Some((first as usize, last as usize)))
        } else if first < argc {
            Err(())
        } else {
            Ok(None)
        }
    }

    pub fn of(specs: &[KeySpec]) -> Option<LoneRange> {
        match *specs {
            [KeySpec { flags, begin: Begin::Index(first), find: Find::Range { lastkey, keystep, limit: 0 }, .. }]
                if flags & (NOT_KEY | INCOMPLETE) == 0 =>
            {
                Some(LoneRange { first, lastkey, keystep: keystep.max(1), flags })
            }
            _ => None,
        }
    }
}

/// A key of a command line: its argument index and its spec's flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub pos: usize,
    pub flags: KeyFlags,
}

/// The keys of one command line, spec by spec, in Redis's order
/// (`getKeysUsingKeySpecs` without partial results): `NOT_KEY` specs are
/// skipped, a keyword that is absent skips its spec, and a spec that does
/// not fit the arguments (or an `INCOMPLETE` or unknown one, after its
/// keys) ends the walk as [`Keys::invalid`]. Nothing is allocated: a
/// command with a million keys is walked, never collected here.
pub struct Keys<'s, 'a> {
    specs: std::slice::Iter<'s, KeySpec>,
    args: Args<'a>,
    next: i64,
    last: i64,
    step: i64,
    flags: KeyFlags,
    /// The current spec is incomplete: after its keys the walk is invalid.
    incomplete: bool,
    invalid: bool,
}

impl<'s, 'a> Keys<'s, 'a> {
    pub fn new(specs: &'s [KeySpec], args: Args<'a>) -> Self {
        Keys { specs: specs.iter(), args, next: 1, last: 0, step: 1, flags: 0, incomplete: false, invalid: false }
    }

    /// The walk of a command whose one spec is a [`LoneRange`], opened
    /// already: no spec is read on the way.
    #[inline]
    pub fn lone(args: Args<'a>, r: LoneRange) -> Self {
        let argc = args.len() as i64;
        let (first, lastkey) = (i64::from(r.first), i64::from(r.lastkey));
        let last = if lastkey >= 0 { first + lastkey } else { argc + lastkey };
        let fits = last < argc && last >= first && first < argc && first >= 1;
        Keys {
            specs: [].iter(),
            args,
            next: if fits { first } else { 1 },
            last: if fits { last } else { 0 },
            step: i64::from(r.keystep),
            flags: r.flags,
            incomplete: false,
            // Starting past the arguments is no keys, not an error (see
            // `open`).
            invalid: !fits && first < argc,
        }
    }

    /// True once the walk stopped at a spec that does not fit the
    /// arguments: the keys yielded so far are not all of them.
    pub fn invalid(&self) -> bool {
        self.invalid
    }

    fn fail(&mut self) -> bool {
        self.invalid = true;
        self.specs = [].iter();
        false
    }

    /// Moves to the next spec with keys; false at the end or when a spec
    /// does not fit (then [`Keys::invalid`]).
    #[inline]
    fn advance(&mut self) -> bool {
        if self.incomplete {
            return self.fail();
        }
        while let Some(spec) = self.specs.next() {
            match self.open(spec) {
                Some(true) => return true,
                None => {}
                Some(false) => return self.fail(),
            }
        }
        false
    }

    /// Sets up the next spec's range; `None` when the spec has no keys
    /// here (absent keyword, `NOT_KEY`), `Some(false)` when it is invalid.
    #[inline]
    fn open(&mut self, spec: &KeySpec) -> Option<bool> {
        // Nearly every command (GET, SET, MGET, ...) has one spec of this
        // form: its range is computed here, inline on the dispatch path.
        if let (Begin::Index(pos), Find::Range { lastkey, keystep, limit: 0 }) = (spec.begin, spec.find) {
            if spec.flags & NOT_KEY == 0 {
                let argc = self.args.len() as i64;
                let (first, lastkey) = (i64::from(pos), i64::from(lastkey));
                // A range that starts past the arguments holds no keys
                // (PFMERGE dest without sources), as Redis 8 reads it.
                if first >= argc {
                    return None;
                }
                let last = if lastkey >= 0 { first + lastkey } else { argc + lastkey };
                return Some(self.set_range(spec, first, last, keystep, argc));
            }
        }
        self.open_any(spec)
    }

    /// [`Keys::open`] for every kind of spec, kept out of line so that the
    /// plain range stays small where it is inlined.
    #[inline(never)]
    fn open_any(&mut self, spec: &KeySpec) -> Option<bool> {
        if spec.flags & NOT_KEY != 0 {
            return None;
        }
        let args = self.args;
        let argc = args.len() as i64;
        let mut first = match spec.begin {
            Begin::Index(pos) if i64::from(pos) >= argc && matches!(spec.find, Find::Range { .. }) => return None,
            Begin::Index(pos) => i64::from(pos),
            Begin::Keyword { keyword, startfrom } => {
                let from = i64::from(startfrom);
                let (start, end) = if from > 0 { (from, argc - 1) } else { (argc + from, 1) };
                // As Redis's loop: the end index itself is never examined.
                let mut i = start;
                let mut found = None;
                while i != end && (1..argc).contains(&i) {
                    if args.get(i as usize).eq_ignore_ascii_case(keyword.as_bytes()) {
                        found = Some(i + 1);
                        break;
                    }
                    i += if start <= end { 1 } else { -1 };
                }
                found?
            }
            Begin::Unknown => return Some(false),
        };
        let (last, step) = match spec.find {
            Find::Range { lastkey, keystep, limit } => {
                let lastkey = i64::from(lastkey);
                let last = if lastkey >= 0 {
                    first + lastkey
                } else if limit <= 0 {
                    argc + lastkey
                } else {
                    first + ((argc - first) / i64::from(limit) + lastkey)
                };
                (last, keystep)
            }
            Find::Keynum { keynumidx, firstkey, keystep } => {
                let idx = i64::from(keynumidx);
                if idx < 0 || first < 1 || idx >= argc - first {
                    return Some(false);
                }
                // A count that is not a number, negative, or beyond the
                // arguments is refused below; the i64 sums cannot overflow
                // (argc is far below 2^62).
                let Some(n) = tern_resp::parse_i64(args.get((first + idx) as usize)).filter(|&n| n >= 0) else {
                    return Some(false);
                };
                // The count is of keys, each `keystep` arguments apart
                // (MSETEX's key-value pairs), as Redis counts them.
                first += i64::from(firstkey);
                (first.saturating_add(n.saturating_sub(1).saturating_mul(i64::from(keystep.max(1)))), keystep)
            }
            Find::Unknown => return Some(false),
        };
        Some(self.set_range(spec, first, last, step, argc))
    }

    /// Takes `first..=last` by `step` as the current range; false when it
    /// does not fit the arguments (a syntax error, as Redis sees it).
    #[inline]
    fn set_range(&mut self, spec: &KeySpec, first: i64, last: i64, step: i32, argc: i64) -> bool {
        if last >= argc || last < first || first >= argc || first < 1 {
            return false;
        }
        self.next = first;
        self.last = last;
        self.step = i64::from(step.max(1));
        self.flags = spec.flags;
        self.incomplete = spec.flags & INCOMPLETE != 0;
        true
    }
}

impl Iterator for Keys<'_, '_> {
    type Item = Key;

    #[inline]
    fn next(&mut self) -> Option<Key> {
        if self.next > self.last && !self.advance() {
            return None;
        }
        let k = Key { pos: self.next as usize, flags: self.flags };
        self.next += self.step;
        Some(k)
    }

    /// At least the keys left in the current spec's range (later specs
    /// are not looked at).
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = if self.next <= self.last { (self.last - self.next) / self.step + 1 } else { 0 };
        (left as usize, None)
    }
}

/// A command's key declarations as COMMAND GETKEYS reads them: the specs,
/// the `no_mandatory_keys` flag, and for `VARIABLE_FLAGS` specs the finder
/// of the flags that apply.
#[derive(Clone, Copy)]
pub struct CommandKeys<'s> {
    pub specs: &'s [KeySpec],
    /// Commands that may be called without keys (EVAL with 0 keys).
    pub no_mandatory_keys: bool,
    /// The flags of key `pos` for these arguments (Redis's `getkeys_proc`
    /// of a command whose key flags vary: SET with or without GET).
    pub flags_of: Option<fn(Args<'_>, usize) -> KeyFlags>,
    /// The keys of a command no spec can find them all for (SORT).
    pub finder: Option<fn(Args<'_>) -> Vec<Key>>,
}

impl CommandKeys<'_> {
    /// Whether COMMAND GETKEYS accepts the command at all: one spec at
    /// least that is a key.
    pub fn has_keys(&self) -> bool {
        self.specs.iter().any(|s| s.flags & NOT_KEY == 0)
    }

    /// COMMAND GETKEYS / GETKEYSANDFLAGS for `args` (the command line,
    /// name first, arity already checked): the keys in spec order, or
    /// Redis's error when the arguments do not locate them.
    pub fn getkeys(&self, args: Args<'_>) -> Result<Vec<Key>, &'static str> {
        let mut keys: Vec<Key> = match self.finder {
            Some(find) => find(args),
            None => {
                let mut walk = Keys::new(self.specs, args);
                let keys = walk.by_ref().collect();
                if walk.invalid() {
                    Vec::new()
                } else {
                    keys
                }
            }
        };
        if let Some(f) = self.flags_of {
            keys.iter_mut().for_each(|k| k.flags = f(args, k.pos));
        }
        if keys.is_empty() && !self.no_mandatory_keys {
            return Err(errors::GETKEYS_INVALID_ARGUMENTS);
        }
        Ok(keys)
    }
}

/// The IF* conditions of SET and DELEX (Redis 8.4).
fn is_condition(a: &[u8]) -> bool {
    [&b"ifeq"[..], b"ifne", b"ifdeq", b"ifdne"].iter().any(|c| a.eq_ignore_ascii_case(c))
}

/// SET's key flags: a read as well as a write with GET, a read (of the
/// value compared) without access with a condition (Redis's `setGetKeys`,
/// which looks at every argument after the value).
pub fn set_key_flags(args: Args<'_>, _pos: usize) -> KeyFlags {
    if args.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"get")) {
        RW | ACCESS | UPDATE
    } else if args.iter().skip(3).any(is_condition) {
        RW | UPDATE
    } else {
        OW | UPDATE
    }
}

/// BITFIELD's key flags: a read only while every subcommand is a complete
/// GET or OVERFLOW (Redis's `bitfieldGetKeys`: anything else, a syntax
/// error included, counts as a write).
pub fn bitfield_key_flags(args: Args<'_>, _pos: usize) -> KeyFlags {
    let mut i = 2;
    while i < args.len() {
        let left = args.len() - i - 1;
        let sub = crate::errors::c_str(args.get(i));
        if sub.eq_ignore_ascii_case(b"get") && left >= 2 {
            i += 3;
        } else if sub.eq_ignore_ascii_case(b"overflow") && left >= 1 {
            i += 2;
        } else {
            return RW | ACCESS | UPDATE;
        }
    }
    RO | ACCESS
}

/// DELEX's key flags: the value is read when a condition compares it.
pub fn delex_key_flags(args: Args<'_>, _pos: usize) -> KeyFlags {
    if args.len() >= 3 && is_condition(args.get(2)) {
        RW | DELETE
    } else {
        RM | DELETE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments over owned strings, for tests.
    struct Line {
        buf: Vec<u8>,
        ranges: Vec<(usize, usize)>,
    }

    impl Line {
        fn new(words: &str) -> Line {
            let mut l = Line { buf: Vec::new(), ranges: Vec::new() };
            for w in words.split(' ') {
                l.ranges.push((l.buf.len(), w.len()));
                l.buf.extend_from_slice(w.as_bytes());
            }
            l
        }
        fn args(&self) -> Args<'_> {
            Args::from_parts(&self.buf, &self.ranges)
        }
    }

    fn positions(specs: &[KeySpec], line: &str) -> Option<Vec<usize>> {
        let l = Line::new(line);
        let mut w = Keys::new(specs, l.args());
        let v: Vec<usize> = w.by_ref().map(|k| k.pos).collect();
        (!w.invalid()).then_some(v)
    }

    // Redis's own declarations of commands Tern does not have yet, so that
    // the interpreter is proven on every kind of spec.
    const LMPOP: &[KeySpec] = &[ks(RW | ACCESS | DELETE, index(1), keynum(0, 1, 1))];
    const BLMPOP: &[KeySpec] = &[ks(RW | ACCESS | DELETE, index(2), keynum(0, 1, 1))];
    const ZUNIONSTORE: &[KeySpec] = &[ks(OW | UPDATE, index(1), range(0, 1, 0)), ks(RO | ACCESS, index(2), keynum(0, 1, 1))];
    const EVAL: &[KeySpec] = &[ks(RW | ACCESS | UPDATE, index(2), keynum(0, 1, 1))
        .notes("We cannot tell how the keys will be used so we assume the worst, RW and UPDATE")];
    const SINTERCARD: &[KeySpec] = &[ks(RO | ACCESS, index(1), keynum(0, 1, 1))];
    const XREAD: &[KeySpec] = &[ks(RO | ACCESS, keyword("STREAMS", 1), range(-1, 1, 2))];
    const MSET: &[KeySpec] = &[ks(OW | UPDATE, index(1), range(-1, 2, 0))];
    const PFMERGE: &[KeySpec] = &[ks(RW | ACCESS | INSERT, index(1), range(0, 1, 0)), ks(RO | ACCESS, index(2), range(-1, 1, 0))];
    const MSETEX: &[KeySpec] = &[ks(OW | UPDATE, index(1), keynum(0, 1, 2))];
    const SORT: &[KeySpec] = &[
        ks(RO | ACCESS, index(1), range(0, 1, 0)),
        ks(RO | ACCESS | INCOMPLETE, Begin::Unknown, Find::Unknown),
        ks(OW | UPDATE | INCOMPLETE, Begin::Unknown, Find::Unknown),
    ];
    const SPUBLISH: &[KeySpec] = &[ks(NOT_KEY, index(1), range(0, 1, 0))];
    const MIGRATE: &[KeySpec] = &[
        ks(RW | ACCESS | DELETE, index(3), range(0, 1, 0)),
        ks(RW | ACCESS | DELETE | INCOMPLETE, keyword("KEYS", -2), range(-1, 1, 0)),
    ];

    #[test]
    fn keynum_commands_are_located() {
        assert_eq!(positions(LMPOP, "lmpop 2 a b left"), Some(vec![2, 3]));
        assert_eq!(positions(BLMPOP, "blmpop 0 3 a b c right count 2"), Some(vec![3, 4, 5]));
        assert_eq!(positions(ZUNIONSTORE, "zunionstore d 2 a b weights 1 2"), Some(vec![1, 3, 4]));
        assert_eq!(positions(EVAL, "eval s 2 k1 k2 a1"), Some(vec![3, 4]));
        assert_eq!(positions(SINTERCARD, "sintercard 1 a limit 3"), Some(vec![2]));
        assert_eq!(positions(XREAD, "xread count 2 streams a b 0 0"), Some(vec![4, 5]));
        assert_eq!(positions(MSET, "mset a 1 b 2 c 3"), Some(vec![1, 3, 5]));
        // A range starting past the arguments has no keys; a count of
        // none is invalid.
        assert_eq!(positions(PFMERGE, "pfmerge d"), Some(vec![1]));
        assert_eq!(positions(PFMERGE, "pfmerge d a b"), Some(vec![1, 2, 3]));
        // A key count with a step: the keys of MSETEX's pairs.
        assert_eq!(positions(MSETEX, "msetex 3 a 1 b 2 c 3 ex 5"), Some(vec![2, 4, 6]));
        assert_eq!(positions(MSETEX, "msetex 1 a 1"), Some(vec![2]));
        assert_eq!(positions(MSETEX, "msetex 2 a 1 b"), Some(vec![2, 4]), "the handler checks the values");
        for bad in ["msetex 3 a 1 b 2", "msetex 0 a 1", "msetex 4611686018427387904 a 1"] {
            assert_eq!(positions(MSETEX, bad), None, "{bad}");
        }
    }

    #[test]
    fn hostile_keynum_is_invalid_without_panic_or_allocation() {
        for line in [
            "lmpop -1 a left",
            "lmpop 0 left",
            "lmpop 3 a left",
            "lmpop 4 a b left",
            "lmpop 2147483648 a left",
            "lmpop 4294967297 a left",
            "lmpop 9223372036854775807 a left",
            "lmpop 99999999999999999999 a left",
            "lmpop -9223372036854775808 a left",
            "lmpop 1x a left",
            "lmpop  a left",
            "zunionstore d 3 a b",
            "zunionstore d -2 a b",
            "eval s 5 a",
            "blmpop 0",
        ] {
            assert_eq!(positions(if line.starts_with("lmpop") { LMPOP } else if line.starts_with("zunion") { ZUNIONSTORE } else if line.starts_with("eval") { EVAL } else { BLMPOP }, line), None, "{line}");
        }
        // An invalid later spec takes back what an earlier one found.
        let l = Line::new("zunionstore d 9 a");
        let ck = CommandKeys { specs: ZUNIONSTORE, no_mandatory_keys: false, flags_of: None, finder: None };
        assert_eq!(ck.getkeys(l.args()), Err(errors::GETKEYS_INVALID_ARGUMENTS));
        // Scripts may have no keys: an empty answer instead of an error.
        let eval = CommandKeys { specs: EVAL, no_mandatory_keys: true, flags_of: None, finder: None };
        for line in ["eval s 0", "eval s 5 a", "eval s -1"] {
            let l = Line::new(line);
            assert_eq!(eval.getkeys(l.args()), Ok(vec![]), "{line}");
        }
        let l = Line::new("eval s 1 k");
        assert_eq!(eval.getkeys(l.args()), Ok(vec![Key { pos: 3, flags: RW | ACCESS | UPDATE }]));
    }

    #[test]
    fn keyword_search_follows_redis() {
        // The keyword as the last argument is never examined: no key after it.
        assert_eq!(positions(XREAD, "xread count 1 streams"), Some(vec![]));
        assert_eq!(positions(XREAD, "xread streams a 0"), Some(vec![2]));
        // Backwards from the end, for MIGRATE's KEYS (incomplete: invalid
        // after its keys, so that a command's own finder takes over).
        assert_eq!(positions(MIGRATE, "migrate h p k 0 1"), Some(vec![3]));
        assert_eq!(positions(MIGRATE, "migrate h p  0 1 keys a b"), None);
        assert_eq!(positions(SORT, "sort k"), None);
        assert_eq!(positions(SPUBLISH, "spublish ch msg"), Some(vec![]));
    }

    #[test]
    fn walks_a_large_command() {
        let words: Vec<String> = std::iter::once("mget".to_string()).chain((0..100_000).map(|i| format!("k{i}"))).collect();
        let l = Line::new(&words.join(" "));
        const MGET: &[KeySpec] = &[ks(RO | ACCESS, index(1), range(-1, 1, 0))];
        let mut w = Keys::new(MGET, l.args());
        assert_eq!(w.next(), Some(Key { pos: 1, flags: RO | ACCESS }));
        assert_eq!(w.size_hint().0, 99_999);
        assert_eq!(w.count(), 99_999);
        let l = Line::new("mset a 1 b 2 c 3");
        let mut w = Keys::new(MSET, l.args());
        w.next();
        assert_eq!(w.size_hint().0, 2);
    }

    #[test]
    fn legacy_range_and_movablekeys_are_derived_as_redis_does() {
        let l = |s: &[KeySpec]| {
            let g = Legacy::of(s);
            (g.first, g.last, g.step, g.movable)
        };
        assert_eq!(l(&[]), (0, 0, 0, false));
        assert_eq!(l(&[ks(RO | ACCESS, index(1), range(0, 1, 0))]), (1, 1, 1, false));
        assert_eq!(l(MSET), (1, -1, 2, false));
        assert_eq!(l(&[ks(RO, index(2), range(0, 1, 0))]), (2, 2, 1, false));
        // RENAME / LCS: two consecutive ranges merge.
        assert_eq!(l(&[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0)), ks(OW | UPDATE, index(2), range(0, 1, 0))]), (1, 2, 1, false));
        // SINTERSTORE: a destination and the rest.
        assert_eq!(l(&[ks(OW | UPDATE, index(1), range(0, 1, 0)), ks(RO | ACCESS, index(2), range(-1, 1, 0))]), (1, -1, 1, false));
        assert_eq!(l(ZUNIONSTORE), (1, 1, 1, true));
        assert_eq!(l(LMPOP), (0, 0, 0, true));
        assert_eq!(l(XREAD), (0, 0, 0, true));
        assert_eq!(l(SORT), (1, 1, 1, true));
        assert_eq!(l(MIGRATE), (3, 3, 1, true));
        assert_eq!(l(&[ks(RO | INCOMPLETE, index(1), range(0, 1, 0))]), (1, 1, 1, true));
    }

    /// The pre-opened walk of a lone range finds what the general one does.
    #[test]
    fn lone_range_walks_as_its_spec() {
        const SPECS: &[&[KeySpec]] = &[
            &[ks(RO | ACCESS, index(1), range(0, 1, 0))],
            &[ks(RO | ACCESS, index(1), range(-1, 1, 0))],
            &[ks(RO | ACCESS, index(1), range(1, 1, 0))],
            &[ks(RO, index(2), range(0, 1, 0))],
            MSET,
        ];
        for specs in SPECS {
            let lone = LoneRange::of(specs).expect("a lone range");
            for line in ["c", "c a", "c a b", "c a b c", "c a b c d e f"] {
                let l = Line::new(line);
                let mut general = Keys::new(specs, l.args());
                let mut pre = Keys::lone(l.args(), lone);
                assert_eq!(general.by_ref().collect::<Vec<_>>(), pre.by_ref().collect::<Vec<_>>(), "{specs:?} {line}");
                assert_eq!(general.invalid(), pre.invalid(), "{specs:?} {line}");
            }
        }
        assert_eq!(LoneRange::of(ZUNIONSTORE), None);
        assert_eq!(LoneRange::of(XREAD), None);
        assert_eq!(LoneRange::of(SPUBLISH), None);
    }

    #[test]
    fn set_flags_depend_on_get_after_the_value() {
        const SET: &[KeySpec] = &[ks(RW | ACCESS | UPDATE | VARIABLE_FLAGS, index(1), range(0, 1, 0))];
        let ck = CommandKeys { specs: SET, no_mandatory_keys: false, flags_of: Some(set_key_flags), finder: None };
        for (line, flags) in [("set k get", OW | UPDATE), ("set k v get", RW | ACCESS | UPDATE), ("set k v ex 10 GeT", RW | ACCESS | UPDATE), ("set k v nx", OW | UPDATE)] {
            let l = Line::new(line);
            assert_eq!(ck.getkeys(l.args()), Ok(vec![Key { pos: 1, flags }]), "{line}");
        }
    }
}
