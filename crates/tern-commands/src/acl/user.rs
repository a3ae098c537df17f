//! One ACL user: its flags, password hashes and selectors, the rules that
//! change them (`ACL SETUSER`, `user` lines, the ACL file) and the text
//! that describes them back (`ACL LIST`, `ACL GETUSER`, `ACL SAVE`).
//!
//! A selector is what a user may run: a bit per command id (subcommands
//! have their own ids), first arguments allowed for a command otherwise
//! refused (the old `+select|0` form), key patterns with their read/write
//! scope, channel patterns. A user has a root selector and any number of
//! `(...)` selectors; a command is allowed when one selector allows it
//! whole. The command rules are also kept as the ordered text Redis keeps
//! (`+@all -get +config|get`), compacted as rules are added, because that
//! text is what the user sees and it cannot be rebuilt from the bits.

use super::catalog::Catalog;
use super::RuleError;

/// Read and write scope of a key pattern (`%R~`, `%W~`, `~` = both).
pub const READ: u8 = 1;
pub const WRITE: u8 = 2;
pub const ALL: u8 = READ | WRITE;

/// A key pattern and the access it grants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPattern {
    pub flags: u8,
    pub pattern: Vec<u8>,
    /// The pattern is a literal prefix then one `*` (`user:*`): matched by
    /// comparing bytes, without the glob engine.
    prefix: Option<Prefix>,
}

/// A literal prefix, its first eight bytes also as a word and a mask, so
/// that a key of eight bytes or more is compared with one load (the check
/// runs for every key of every command of a restricted user).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Prefix {
    len: usize,
    word: u64,
    mask: u64,
}

impl KeyPattern {
    fn new(pattern: Vec<u8>, flags: u8) -> Self {
        let prefix = match pattern.split_last() {
            Some((b'*', head)) if !head.iter().any(|c| matches!(c, b'*' | b'?' | b'[' | b']' | b'\\')) => {
                let n = head.len().min(8);
                let mut w = [0u8; 8];
                w[..n].copy_from_slice(&head[..n]);
                let mask = if n == 8 { u64::MAX } else { (1u64 << (n * 8)) - 1 };
                Some(Prefix { len: head.len(), word: u64::from_le_bytes(w), mask })
            }
            _ => None,
        };
        KeyPattern { flags, pattern, prefix }
    }

    /// Does the pattern match `key`? (Redis's glob; `*` matches nothing
    /// less than the prefix.)
    #[inline(always)]
    pub fn matches(&self, key: &[u8]) -> bool {
        match self.prefix {
            Some(p) => match key.first_chunk::<8>() {
                Some(head) if p.len <= 8 => u64::from_le_bytes(*head) & p.mask == p.word,
                // Redis's glob: a lone `*` does not match an empty key.
                _ => key.starts_with(&self.pattern[..p.len]) && !(p.len == 0 && key.is_empty()),
            },
            None => crate::glob::matches(&self.pattern, key, false),
        }
    }

    #[cfg(test)]
    pub fn new_for_test(pattern: &[u8]) -> Self {
        KeyPattern::new(pattern.to_vec(), ALL)
    }

    fn describe(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(match self.flags {
            READ => b"%R~",
            WRITE => b"%W~",
            _ => b"~",
        });
        out.extend_from_slice(&self.pattern);
    }
}

/// What a selector lets run.
#[derive(Clone, Debug)]
pub struct Selector {
    /// Set by `+@all`/`allcommands` only: every command, present and
    /// future, is allowed and no bit needs reading (Redis's ALLCOMMANDS).
    pub allcommands: bool,
    /// `+@all` started the rules (Redis's reserved "future commands" bit):
    /// the description starts with `+@all`, else `-@all`.
    pub from_all: bool,
    /// A bit per command id.
    allowed: Vec<u64>,
    /// First arguments allowed for a command whose bit is clear.
    firstargs: Vec<(usize, Vec<Vec<u8>>)>,
    pub allkeys: bool,
    pub patterns: Vec<KeyPattern>,
    pub allchannels: bool,
    pub channels: Vec<Vec<u8>>,
    /// The command rules as the user sees them, without the leading
    /// `+@all`/`-@all`.
    rules: String,
    /// The keys are one prefix of at most eight bytes, read and write
    /// (`~app:*`, the usual rule): a key of eight bytes or more is checked
    /// with one masked compare ([`Selector::allows_key_quick`]).
    quick: Option<Prefix>,
}

impl Selector {
    /// A selector that allows nothing; `allchannels` as
    /// `acl-pubsub-default` says.
    pub fn new(commands: usize, allchannels: bool) -> Self {
        Selector {
            allcommands: false,
            from_all: false,
            allowed: vec![0; commands.div_ceil(64)],
            firstargs: Vec::new(),
            allkeys: false,
            patterns: Vec::new(),
            allchannels,
            channels: Vec::new(),
            rules: String::new(),
            quick: None,
        }
    }

    /// Recomputes what is derived from the rules (after any change).
    fn settle(&mut self) {
        self.quick = match self.patterns.as_slice() {
            [p] if !self.allkeys && p.flags == ALL => p.prefix.filter(|q| q.len <= 8),
            _ => None,
        };
    }

    #[inline]
    fn bit(&self, id: usize) -> bool {
        self.allowed.get(id / 64).is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    fn set_bit(&mut self, id: usize, on: bool) {
        if let Some(w) = self.allowed.get_mut(id / 64) {
            if on {
                *w |= 1 << (id % 64);
            } else {
                *w &= !(1 << (id % 64));
                self.allcommands = false;
            }
        }
    }

    /// May this selector run command `id` (a subcommand's own id) with
    /// `first` as the argument after the command's name(s)?
    #[inline]
    pub fn allows_command(&self, id: usize, first: Option<&[u8]>) -> bool {
        if self.allcommands || self.bit(id) {
            return true;
        }
        let Some(first) = first else { return false };
        self.firstargs.iter().any(|(c, args)| *c == id && args.iter().any(|a| a.eq_ignore_ascii_case(first)))
    }

    /// [`Selector::allows_key`] for a selector that is not `allkeys`, in
    /// a few instructions when its keys are one short prefix.
    #[inline(always)]
    pub fn allows_key_quick(&self, key: &[u8], need: u8) -> bool {
        if let (Some(q), Some(head)) = (self.quick, key.first_chunk::<8>()) {
            return u64::from_le_bytes(*head) & q.mask == q.word;
        }
        self.allows_key(key, need)
    }

    /// May this selector touch `key` with `need` (READ/WRITE bits)?
    #[inline]
    pub fn allows_key(&self, key: &[u8], need: u8) -> bool {
        if self.allkeys {
            return true;
        }
        for p in &self.patterns {
            if p.flags & need == need && p.matches(key) {
                return true;
            }
        }
        false
    }

    /// May this selector publish to `channel` (or, `pattern`, subscribe
    /// to that pattern, which must be listed literally)?
    pub fn allows_channel(&self, channel: &[u8], pattern: bool) -> bool {
        self.allchannels
            || self.channels.iter().any(|p| if pattern { p == channel } else { crate::glob::matches(p, channel, false) })
    }

    /// Allows or refuses a command and, for a container, its subcommands.
    fn change(&mut self, cat: &Catalog, id: usize, allow: bool) {
        self.set_bit(id, allow);
        self.firstargs.retain(|(c, _)| *c != id);
        for &sub in cat.subcommands(id) {
            self.set_bit(sub, allow);
        }
    }

    /// Keeps the rule text compact: drops an earlier rule for the same
    /// command (or category), and the rules for a command's subcommands
    /// when the whole command is ruled on, then appends this one.
    fn note_rule(&mut self, rule: &str, allow: bool) {
        let rule = rule.to_ascii_lowercase();
        let kept: Vec<&str> = self
            .rules
            .split(' ')
            .filter(|r| !r.is_empty())
            .filter(|r| {
                let name = &r[1..];
                !(name == rule || (name.len() > rule.len() && name.starts_with(&rule) && name.as_bytes()[rule.len()] == b'|'))
            })
            .collect();
        let mut s = kept.join(" ");
        if !s.is_empty() {
            s.push(' ');
        }
        s.push(if allow { '+' } else { '-' });
        s.push_str(&rule);
        self.rules = s;
    }

    fn all_commands(&mut self, allow: bool) {
        let fill = if allow { u64::MAX } else { 0 };
        self.allowed.iter_mut().for_each(|w| *w = fill);
        self.allcommands = allow;
        self.from_all = allow;
        self.rules.clear();
        self.firstargs.clear();
    }

    /// Applies one selector rule (Redis's `ACLSetSelector`).
    pub fn apply(&mut self, cat: &Catalog, op: &[u8]) -> Result<(), RuleError> {
        let is = |w: &str| op.eq_ignore_ascii_case(w.as_bytes());
        if is("allkeys") || op == b"~*" {
            self.allkeys = true;
            self.patterns.clear();
        } else if is("resetkeys") {
            self.allkeys = false;
            self.patterns.clear();
        } else if is("allchannels") || op == b"&*" {
            self.allchannels = true;
            self.channels.clear();
        } else if is("resetchannels") {
            self.allchannels = false;
            self.channels.clear();
        } else if is("allcommands") || is("+@all") {
            self.all_commands(true);
        } else if is("nocommands") || is("-@all") {
            self.all_commands(false);
        } else if op[0] == b'~' || op[0] == b'%' {
            if self.allkeys {
                return Err(RuleError::KeysAfterAll);
            }
            let (flags, at) = if op[0] == b'%' {
                let mut flags = 0;
                let mut at = None;
                for (i, &c) in op.iter().enumerate().skip(1) {
                    match c.to_ascii_uppercase() {
                        b'R' if flags & READ == 0 => flags |= READ,
                        b'W' if flags & WRITE == 0 => flags |= WRITE,
                        b'~' if flags != 0 => {
                            at = Some(i + 1);
                            break;
                        }
                        _ => return Err(RuleError::Syntax),
                    }
                }
                // `%R` with no `~` is a pattern too, an empty one (as Redis).
                if flags == 0 {
                    return Err(RuleError::Syntax);
                }
                (flags, at.unwrap_or(op.len()))
            } else {
                (ALL, 1)
            };
            let pat = &op[at..];
            if has_spaces(pat) {
                return Err(RuleError::Syntax);
            }
            match self.patterns.iter_mut().find(|p| p.pattern == pat) {
                Some(p) => p.flags |= flags,
                None => self.patterns.push(KeyPattern::new(pat.to_vec(), flags)),
            }
            self.allkeys = false;
        } else if op[0] == b'&' {
            if self.allchannels {
                return Err(RuleError::ChannelsAfterAll);
            }
            let pat = &op[1..];
            if has_spaces(pat) {
                return Err(RuleError::Syntax);
            }
            if !self.channels.iter().any(|c| c == pat) {
                self.channels.push(pat.to_vec());
            }
            self.allchannels = false;
        } else if op.len() > 1 && (op[0] == b'+' || op[0] == b'-') && op[1] == b'@' {
            let allow = op[0] == b'+';
            let name = std::str::from_utf8(&op[2..]).map_err(|_| RuleError::Unknown)?;
            let bit = cat.category(name).ok_or(RuleError::Unknown)?;
            self.note_rule(&format!("@{name}"), allow);
            for id in cat.in_category(bit) {
                self.change(cat, id, allow);
            }
        } else if op[0] == b'+' {
            let name = std::str::from_utf8(&op[1..]).map_err(|_| RuleError::Unknown)?;
            match name.rsplit_once('|') {
                None => {
                    let id = cat.find(name).ok_or(RuleError::Unknown)?;
                    self.change(cat, id, true);
                    self.note_rule(cat.fullname(id), true);
                }
                Some((base, sub)) => {
                    let id = cat.find(base).ok_or(RuleError::Unknown)?;
                    if cat.parent(id).is_some() {
                        return Err(RuleError::FirstArgOfSubcommand);
                    }
                    if sub.is_empty() {
                        return Err(RuleError::Syntax);
                    }
                    if cat.subcommands(id).is_empty() {
                        // `+select|0`: one first argument of a command
                        // otherwise refused.
                        let sub = sub.as_bytes().to_vec();
                        match self.firstargs.iter_mut().find(|(c, _)| *c == id) {
                            Some((_, args)) if args.iter().any(|a| a.eq_ignore_ascii_case(&sub)) => {}
                            Some((_, args)) => args.push(sub),
                            None => self.firstargs.push((id, vec![sub])),
                        }
                    } else {
                        let sid = cat.find(name).ok_or(RuleError::Unknown)?;
                        self.change(cat, sid, true);
                    }
                    self.note_rule(name, true);
                }
            }
        } else if op[0] == b'-' {
            let name = std::str::from_utf8(&op[1..]).map_err(|_| RuleError::Unknown)?;
            let id = cat.find(name).ok_or(RuleError::Unknown)?;
            self.change(cat, id, false);
            self.note_rule(cat.fullname(id), false);
        } else {
            return Err(RuleError::Syntax);
        }
        Ok(())
    }

    /// The command rules as ACL GETUSER shows them.
    pub fn describe_commands(&self) -> String {
        let mut s = String::from(if self.from_all { "+@all" } else { "-@all" });
        if !self.rules.is_empty() {
            s.push(' ');
            s.push_str(&self.rules);
        }
        s
    }

    /// The key patterns as ACL GETUSER shows them.
    pub fn describe_keys(&self) -> Vec<u8> {
        if self.allkeys {
            return b"~*".to_vec();
        }
        let mut out = Vec::new();
        for (i, p) in self.patterns.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            p.describe(&mut out);
        }
        out
    }

    /// The channel patterns as ACL GETUSER shows them.
    pub fn describe_channels(&self) -> Vec<u8> {
        if self.allchannels {
            return b"&*".to_vec();
        }
        let mut out = Vec::new();
        for (i, c) in self.channels.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            out.push(b'&');
            out.extend_from_slice(c);
        }
        out
    }

    /// The whole selector as ACL LIST shows it (`~* &* +@all`).
    fn describe(&self, out: &mut Vec<u8>) {
        if self.allkeys {
            out.extend_from_slice(b"~* ");
        } else {
            for p in &self.patterns {
                p.describe(out);
                out.push(b' ');
            }
        }
        if self.allchannels {
            out.extend_from_slice(b"&* ");
        } else {
            out.extend_from_slice(b"resetchannels ");
            for c in &self.channels {
                out.push(b'&');
                out.extend_from_slice(c);
                out.push(b' ');
            }
        }
        out.extend_from_slice(self.describe_commands().as_bytes());
    }

    /// Allows every command, key and channel.
    pub fn unrestricted(&self) -> bool {
        self.allcommands && self.allkeys && self.allchannels
    }
}

/// Does `s` hold white space or a NUL (not allowed in user names and
/// patterns: they are written back space-separated)?
pub fn has_spaces(s: &[u8]) -> bool {
    s.iter().any(|&c| c == 0 || c.is_ascii_whitespace() || c == 0x0b)
}

/// A user, as the registry publishes it: a rule change makes a new one.
#[derive(Clone, Debug)]
pub struct User {
    pub name: Vec<u8>,
    pub enabled: bool,
    pub nopass: bool,
    pub skip_sanitize: bool,
    /// SHA-256 of each password, as 64 lowercase hex digits.
    pub passwords: Vec<Vec<u8>>,
    /// The root selector first.
    pub selectors: Vec<Selector>,
    /// Every command, key and channel is allowed by the root selector: the
    /// request path skips the checks.
    pub unrestricted: bool,
}

impl User {
    /// A new user: off, no password, no rights (Redis's `ACLCreateUser`).
    pub fn new(name: &[u8], cat: &Catalog, allchannels: bool) -> Self {
        User {
            name: name.to_vec(),
            enabled: false,
            nopass: false,
            skip_sanitize: false,
            passwords: Vec::new(),
            selectors: vec![Selector::new(cat.len(), allchannels)],
            unrestricted: false,
        }
    }

    /// The `default` user of a new server: on, no password, everything.
    pub fn default_user(cat: &Catalog, allchannels: bool) -> Self {
        let mut u = User::new(b"default", cat, allchannels);
        for op in ["+@all", "~*", "&*", "on", "nopass"] {
            let applied = u.apply(cat, op.as_bytes(), allchannels);
            debug_assert!(applied.is_ok());
        }
        u
    }

    pub fn root(&self) -> &Selector {
        &self.selectors[0]
    }

    /// Applies one rule (Redis's `ACLSetUser`); `allchannels` is
    /// `acl-pubsub-default` for `reset`.
    pub fn apply(&mut self, cat: &Catalog, op: &[u8], allchannels: bool) -> Result<(), RuleError> {
        let r = self.apply_one(cat, op, allchannels);
        self.selectors.iter_mut().for_each(Selector::settle);
        self.unrestricted = self.root().unrestricted();
        r
    }

    fn apply_one(&mut self, cat: &Catalog, op: &[u8], allchannels: bool) -> Result<(), RuleError> {
        if op.is_empty() {
            return Ok(());
        }
        let is = |w: &str| op.eq_ignore_ascii_case(w.as_bytes());
        if is("on") {
            self.enabled = true;
        } else if is("off") {
            self.enabled = false;
        } else if is("skip-sanitize-payload") {
            self.skip_sanitize = true;
        } else if is("sanitize-payload") {
            self.skip_sanitize = false;
        } else if is("nopass") {
            self.nopass = true;
            self.passwords.clear();
        } else if is("resetpass") {
            self.nopass = false;
            self.passwords.clear();
        } else if op[0] == b'>' || op[0] == b'#' {
            let hash = if op[0] == b'>' { hash_password(&op[1..]) } else { checked_hash(&op[1..])? };
            if !self.passwords.contains(&hash) {
                self.passwords.push(hash);
            }
            self.nopass = false;
        } else if op[0] == b'<' || op[0] == b'!' {
            let hash = if op[0] == b'<' { hash_password(&op[1..]) } else { checked_hash(&op[1..])? };
            let at = self.passwords.iter().position(|p| *p == hash).ok_or(RuleError::NoSuchPassword)?;
            self.passwords.remove(at);
        } else if op[0] == b'(' && op[op.len() - 1] == b')' {
            let mut s = Selector::new(cat.len(), allchannels);
            for rule in split_args(&op[1..op.len() - 1]) {
                s.apply(cat, &rule)?;
            }
            self.selectors.push(s);
        } else if is("clearselectors") {
            self.selectors.truncate(1);
        } else if is("reset") {
            self.nopass = false;
            self.passwords.clear();
            let root = &mut self.selectors[0];
            root.allkeys = false;
            root.patterns.clear();
            root.allchannels = allchannels;
            root.channels.clear();
            self.enabled = false;
            self.skip_sanitize = false;
            self.selectors.truncate(1);
            self.selectors[0].all_commands(false);
        } else {
            self.selectors[0].apply(cat, op)?;
        }
        Ok(())
    }

    /// Applies a list of rules as one change: all or none (Redis's
    /// `ACLStringSetUser`). Words of a `(...)` selector split by spaces
    /// are joined first. The error names the rule that failed.
    pub fn apply_all(&mut self, cat: &Catalog, rules: &[&[u8]], allchannels: bool) -> Result<(), (Vec<u8>, RuleError)> {
        let merged = merge_selectors(rules).map_err(|at| (rules[at].to_vec(), RuleError::UnmatchedParen))?;
        let mut staged = self.clone();
        for op in &merged {
            staged.apply(cat, op, allchannels).map_err(|e| (op.clone(), e))?;
        }
        *self = staged;
        Ok(())
    }

    /// Does `pass` open this user (never for a disabled one)?
    pub fn password_ok(&self, pass: &[u8]) -> bool {
        if !self.enabled {
            return false;
        }
        if self.nopass {
            return true;
        }
        let hash = hash_password(pass);
        // Compared without an early exit, as Redis does.
        self.passwords.iter().fold(false, |ok, p| ok | (p.iter().zip(&hash).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0))
    }

    /// The user's rules as ACL LIST shows them, without `user <name> `.
    pub fn describe(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(if self.enabled { b"on " } else { b"off " });
        if self.nopass {
            out.extend_from_slice(b"nopass ");
        }
        out.extend_from_slice(if self.skip_sanitize { b"skip-sanitize-payload " } else { b"sanitize-payload " });
        for p in &self.passwords {
            out.push(b'#');
            out.extend_from_slice(p);
            out.push(b' ');
        }
        self.selectors[0].describe(&mut out);
        for s in &self.selectors[1..] {
            out.extend_from_slice(b" (");
            s.describe(&mut out);
            out.push(b')');
        }
        out
    }

    /// The flags ACL GETUSER lists, in Redis's order.
    pub fn flag_names(&self) -> Vec<&'static str> {
        let mut v = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            v.push("nopass");
        }
        v.push(if self.skip_sanitize { "skip-sanitize-payload" } else { "sanitize-payload" });
        v
    }
}

/// Groups the words of a `(...)` selector that were split by spaces
/// (`(~x`, `+get)`); the error is the index of a `(` never closed.
pub fn merge_selectors(rules: &[&[u8]]) -> Result<Vec<Vec<u8>>, usize> {
    let mut out = Vec::with_capacity(rules.len());
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (i, &op) in rules.iter().enumerate() {
        match open.as_mut() {
            None if op.first() == Some(&b'(') && op.last() != Some(&b')') => open = Some((i, op.to_vec())),
            None => out.push(op.to_vec()),
            Some((_, sel)) => {
                sel.push(b' ');
                sel.extend_from_slice(op);
                if op.last() == Some(&b')') {
                    out.push(std::mem::take(sel));
                    open = None;
                }
            }
        }
    }
    match open {
        Some((at, _)) => Err(at),
        None => Ok(out),
    }
}

/// The words of a selector's inside, split at spaces (Redis splits it
/// with `sdssplitargs`, which honours quotes; rules have no spaces, so
/// plain splitting gives the same words).
fn split_args(s: &[u8]) -> Vec<Vec<u8>> {
    s.split(|c| c.is_ascii_whitespace()).filter(|w| !w.is_empty()).map(<[u8]>::to_vec).collect()
}

/// SHA-256 of a password, as 64 lowercase hex digits.
pub fn hash_password(pass: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(pass))
}

pub fn hex(bytes: &[u8]) -> Vec<u8> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes.iter().flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]]).collect()
}

fn checked_hash(h: &[u8]) -> Result<Vec<u8>, RuleError> {
    if h.len() == 64 && h.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
        Ok(h.to_vec())
    } else {
        Err(RuleError::BadHash)
    }
}
