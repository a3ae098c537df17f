//! Access control: users, their rules, and the log of refusals.
//!
//! ```text
//!  ACL SETUSER / user lines / aclfile ─► Acl (users by name, behind a lock)
//!                                         │ every change: a new Arc<User>, epoch + 1
//!  each connection: Arc<User> + the epoch it was read at
//!  each command: epoch unchanged? (one relaxed load) ─► user.unrestricted? done
//!               ─► root or (...) selector: command bit, then each key the key
//!                  specs find, with the read/write scope its flags ask for
//! ```
//!
//! The registry is read without a lock on the request path: a connection
//! keeps its user as it was when last read, and re-reads it (by name) when
//! the registry's epoch has moved, so a rule change is seen by every
//! connection at its next command, on every worker. A user allowed every
//! command, key and channel (`default` unless changed) costs that one load.
//!
//! The rules, their errors and their descriptions are Redis 8.4's
//! (`acl.c`); the command check itself runs in dispatch (`cmd::access`),
//! which owns the key specs, through [`user::Selector`]'s questions.

pub mod catalog;
pub mod log;
pub mod user;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, RwLock};

pub use catalog::Catalog;
pub use log::{Log, LogEntry};
pub use user::User;

/// The epoch of a client whose user is never re-read (the server's own).
pub const INTERNAL: u64 = 0;

/// Why a rule was refused (Redis's `ACLSetUserStringError`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleError {
    Unknown,
    Syntax,
    KeysAfterAll,
    ChannelsAfterAll,
    NoSuchPassword,
    BadHash,
    FirstArgOfSubcommand,
    UnmatchedParen,
    Duplicate,
}

impl RuleError {
    pub fn message(self) -> &'static str {
        match self {
            RuleError::Unknown => "Unknown command or category name in ACL",
            RuleError::Syntax => "Syntax error",
            RuleError::KeysAfterAll => "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            RuleError::ChannelsAfterAll => "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
            RuleError::NoSuchPassword => "The password you are trying to remove from the user does not exist",
            RuleError::BadHash => "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
            RuleError::FirstArgOfSubcommand => "Allowing first-arg of a subcommand is not supported",
            RuleError::UnmatchedParen => "Unmatched parenthesis in acl selector",
            RuleError::Duplicate => "Duplicate user found. A user can only be defined once in config files",
        }
    }
}

/// What a command was refused for (ACL LOG's `reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Denied {
    Command,
    Key,
    Channel,
    Auth,
}

impl Denied {
    pub fn name(self) -> &'static str {
        match self {
            Denied::Command => "command",
            Denied::Key => "key",
            Denied::Channel => "channel",
            Denied::Auth => "auth",
        }
    }
}

/// The users, shared by every worker.
pub struct Acl {
    catalog: OnceLock<Catalog>,
    users: RwLock<BTreeMap<Vec<u8>, Arc<User>>>,
    /// Moved by every change to any user; read by every command of every
    /// worker, so on a line of its own that no counter shares.
    epoch: tern_store::Padded<AtomicU64>,
    /// The default user has a password or is off: new connections start
    /// unauthenticated (Redis's `authRequired`).
    auth_required: AtomicBool,
    /// `acl-pubsub-default allchannels`: new users may use every channel.
    pubsub_all: AtomicBool,
    pub log: Mutex<Log>,
    /// INFO's `acl_access_denied_auth`, `_cmd`, `_key`, `_channel`.
    pub denied_auth: AtomicU64,
    pub denied_cmd: AtomicU64,
    pub denied_key: AtomicU64,
    pub denied_channel: AtomicU64,
    /// The `requirepass` last put into the default user, once the catalog
    /// is in (CONFIG SET of the same value changes nothing, as in Redis).
    requirepass: Mutex<Option<Option<Vec<u8>>>>,
}

impl Default for Acl {
    fn default() -> Self {
        Acl {
            catalog: OnceLock::new(),
            users: RwLock::new(BTreeMap::new()),
            epoch: tern_store::Padded(AtomicU64::new(1)),
            auth_required: AtomicBool::new(false),
            pubsub_all: AtomicBool::new(false),
            log: Mutex::new(Log::default()),
            denied_auth: AtomicU64::new(0),
            denied_cmd: AtomicU64::new(0),
            denied_key: AtomicU64::new(0),
            denied_channel: AtomicU64::new(0),
            requirepass: Mutex::new(None),
        }
    }
}

impl Acl {
    /// Installs the command catalog and the `default` user, with
    /// `requirepass` as its password (once, at start, before any
    /// connection).
    pub fn init(&self, catalog: Catalog, requirepass: Option<&[u8]>) {
        let all = self.pubsub_all();
        let default = User::default_user(&catalog, all);
        let _ = self.catalog.set(catalog);
        self.replace_all(vec![default]);
        *self.requirepass.lock() = Some(None);
        self.apply_requirepass(requirepass);
    }

    /// `requirepass` set (at start or by CONFIG SET): when it changed,
    /// the default user's passwords become it alone, or `nopass` when it
    /// is empty (Redis's `ACLUpdateDefaultUserPassword`).
    pub fn apply_requirepass(&self, pass: Option<&[u8]>) {
        let mut last = self.requirepass.lock();
        match last.as_ref() {
            None => return,
            Some(l) if l.as_deref() == pass => return,
            Some(_) => {}
        }
        *last = Some(pass.map(<[u8]>::to_vec));
        drop(last);
        self.set_default_password(pass);
    }

    pub fn catalog(&self) -> &Catalog {
        self.catalog.get_or_init(Catalog::default)
    }

    /// The registry's version: a connection whose user was read at an
    /// older one reads it again.
    #[inline]
    pub fn epoch(&self) -> u64 {
        self.epoch.0.load(Ordering::Acquire)
    }

    #[inline]
    pub fn auth_required(&self) -> bool {
        self.auth_required.load(Ordering::Relaxed)
    }

    pub fn pubsub_all(&self) -> bool {
        self.pubsub_all.load(Ordering::Relaxed)
    }

    pub fn set_pubsub_all(&self, all: bool) {
        self.pubsub_all.store(all, Ordering::Relaxed);
    }

    pub fn get(&self, name: &[u8]) -> Option<Arc<User>> {
        self.users.read().get(name).cloned()
    }

    /// The `default` user (always present).
    pub fn default_user(&self) -> Arc<User> {
        self.get(b"default").unwrap_or_else(|| Arc::new(User::default_user(self.catalog(), self.pubsub_all())))
    }

    /// What a new connection starts as: the `default` user, and the
    /// epoch it was read at (read first, so a change made meanwhile is
    /// seen at the first command).
    pub fn default_session(&self) -> (Arc<User>, u64) {
        let epoch = self.epoch();
        (self.default_user(), epoch)
    }

    /// The user of the server's own clients (the AOF loader): every
    /// command, key and channel, whatever the registry says. Such a client
    /// carries epoch [`INTERNAL`], never re-read.
    pub fn superuser(&self) -> Arc<User> {
        Arc::new(User::default_user(self.catalog(), true))
    }

    /// Every user, by name.
    pub fn users(&self) -> Vec<Arc<User>> {
        self.users.read().values().cloned().collect()
    }

    fn published(&self, users: &BTreeMap<Vec<u8>, Arc<User>>) {
        let d = users.get(&b"default"[..]);
        self.auth_required.store(d.is_none_or(|d| !d.nopass || !d.enabled), Ordering::Relaxed);
        self.epoch.0.fetch_add(1, Ordering::AcqRel);
    }

    /// Applies `rules` to user `name` (made if absent) as one change.
    pub fn set_user(&self, name: &[u8], rules: &[&[u8]]) -> Result<(), (Vec<u8>, RuleError)> {
        let cat = self.catalog();
        let all = self.pubsub_all();
        let mut users = self.users.write();
        let mut u = match users.get(name) {
            Some(u) => (**u).clone(),
            None => User::new(name, cat, all),
        };
        u.apply_all(cat, rules, all)?;
        users.insert(name.to_vec(), Arc::new(u));
        self.published(&users);
        Ok(())
    }

    /// Removes users; the count removed.
    pub fn delete(&self, names: &[&[u8]]) -> usize {
        let mut users = self.users.write();
        let n = names.iter().filter(|n| users.remove(**n).is_some()).count();
        if n > 0 {
            self.published(&users);
        }
        n
    }

    /// Replaces every user (ACL LOAD, start-up); a missing `default` is
    /// made afresh.
    pub fn replace_all(&self, list: Vec<User>) {
        let mut users = self.users.write();
        users.clear();
        for u in list {
            users.insert(u.name.clone(), Arc::new(u));
        }
        if !users.contains_key(&b"default"[..]) {
            users.insert(b"default".to_vec(), Arc::new(User::default_user(self.catalog(), self.pubsub_all())));
        }
        self.published(&users);
    }

    /// `requirepass`: the default user's only password, or none (nopass).
    pub fn set_default_password(&self, pass: Option<&[u8]>) {
        let cat = self.catalog();
        let all = self.pubsub_all();
        let mut users = self.users.write();
        let mut u = users.get(&b"default"[..]).map(|u| (**u).clone()).unwrap_or_else(|| User::default_user(cat, all));
        let _ = u.apply(cat, b"resetpass", all);
        let _ = match pass {
            Some(p) => u.apply(cat, &[b">", p].concat(), all),
            None => u.apply(cat, b"nopass", all),
        };
        users.insert(b"default".to_vec(), Arc::new(u));
        self.published(&users);
    }

    /// The user `name` if `pass` opens it (Redis's
    /// `ACLCheckUserCredentials`).
    pub fn authenticate(&self, name: &[u8], pass: &[u8]) -> Option<Arc<User>> {
        self.get(name).filter(|u| u.password_ok(pass))
    }

    /// Records a refusal: INFO's count, and an ACL LOG entry (the log
    /// keeping at most `max_len`, `acllog-max-len`).
    #[allow(clippy::too_many_arguments)]
    pub fn record(&self, why: Denied, ctx: log::Context, object: &[u8], user: &[u8], client_info: Vec<u8>, now: u64, max_len: usize) {
        self.count_denied(why);
        self.log.lock().add(why, ctx, object, user, client_info, now, max_len);
    }

    /// Counts a refusal for INFO.
    fn count_denied(&self, why: Denied) {
        let c = match why {
            Denied::Auth => &self.denied_auth,
            Denied::Command => &self.denied_cmd,
            Denied::Key => &self.denied_key,
            Denied::Channel => &self.denied_channel,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Builds users from `user` lines (`user <name> <rules...>`), each
    /// checked whole: the error names the line's index and why. A second
    /// line for the same user is an error, but for `default`, whose line
    /// starts from `reset` (Redis's `ACLLoadConfiguredUsers`).
    pub fn users_from_lines(&self, lines: &[Vec<Vec<u8>>]) -> Result<Vec<User>, (usize, String)> {
        let cat = self.catalog();
        let all = self.pubsub_all();
        // `default` as it is (with `requirepass`) unless a line redefines it.
        let mut out: Vec<User> = vec![(*self.default_user()).clone()];
        let mut seen: Vec<&[u8]> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let Some((name, rules)) = line.split_first() else { continue };
            if user::has_spaces(name) {
                return Err((i, "Spaces not allowed in ACL usernames".into()));
            }
            if seen.contains(&name.as_slice()) {
                return Err((i, RuleError::Duplicate.message().into()));
            }
            seen.push(name);
            let mut u = if name == b"default" {
                let mut d = out.remove(0);
                let _ = d.apply(cat, b"reset", all);
                d
            } else {
                User::new(name, cat, all)
            };
            let rules: Vec<&[u8]> = rules.iter().map(Vec::as_slice).collect();
            let merged = user::merge_selectors(&rules).map_err(|_| (i, RuleError::UnmatchedParen.message().to_string()))?;
            for op in &merged {
                u.apply(cat, op, all).map_err(|e| {
                    (i, format!("Error loading ACL rule '{}' for the user named '{}': {}", String::from_utf8_lossy(op), String::from_utf8_lossy(name), e.message()))
                })?;
            }
            out.push(u);
        }
        Ok(out)
    }

    /// Parses an ACL file (Redis's `ACLLoadFromFile`): every error of the
    /// file at once, as Redis lists them, or the users.
    pub fn users_from_file(&self, path: &str, text: &[u8]) -> Result<Vec<User>, String> {
        let cat = self.catalog();
        let all = self.pubsub_all();
        let mut errors = String::new();
        let mut users: Vec<User> = Vec::new();
        for (n, raw) in text.split(|&c| c == b'\n').enumerate() {
            let line = trim(raw, b" \t\r\n");
            let linenum = n + 1;
            if line.is_empty() {
                continue;
            }
            let words: Vec<&[u8]> = line.split(|&c| c == b' ').collect();
            if words[0] != b"user" || words.len() < 2 {
                errors.push_str(&format!("{path}:{linenum} should start with user keyword followed by the username. "));
                continue;
            }
            let name = words[1];
            if user::has_spaces(name) {
                errors.push_str(&format!("'{path}:{linenum}: username '{}' contains invalid characters. ", String::from_utf8_lossy(name)));
                continue;
            }
            if users.iter().any(|u| u.name == name) {
                errors.push_str(&format!("WARNING: Duplicate user '{}' found on line {linenum}. ", String::from_utf8_lossy(name)));
                continue;
            }
            let mut u = User::new(name, cat, all);
            let merged = match user::merge_selectors(&words[2..]) {
                Ok(m) => m,
                Err(_) => {
                    errors.push_str(&format!("{path}:{linenum}: Unmatched parenthesis in selector definition."));
                    Vec::new()
                }
            };
            let mut syntax_error = false;
            for op in &merged {
                let op = trim(op, b"\t\r\n");
                if let Err(e) = u.apply(cat, op, all) {
                    if e == RuleError::Unknown {
                        errors.push_str(&format!("{path}:{linenum}: Error in applying operation '{}': {}. ", String::from_utf8_lossy(op), e.message()));
                    } else if !syntax_error {
                        errors.push_str(&format!("{path}:{linenum}: {}. ", e.message()));
                        syntax_error = true;
                    }
                }
            }
            users.push(u);
        }
        if errors.is_empty() {
            Ok(users)
        } else {
            errors.push_str("WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
            Err(errors)
        }
    }

    /// The `user` lines of the current users, as CONFIG REWRITE writes
    /// them, sorted by name.
    pub fn config_lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.file_text()).lines().map(str::to_string).collect()
    }

    /// The ACL file's text for the current users (ACL SAVE), sorted by name.
    pub fn file_text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for u in self.users() {
            out.extend_from_slice(b"user ");
            out.extend_from_slice(&u.name);
            out.push(b' ');
            out.extend_from_slice(&u.describe());
            out.push(b'\n');
        }
        out
    }
}

/// A key a command touches, for [`check`]: its bytes, the access it
/// needs ([`user::READ`]/[`user::WRITE`] bits) and its argument position.
pub type KeyUse<'a> = (&'a [u8], u8, usize);

/// A channel a command names, for [`check`]: its bytes, whether it is a
/// pattern (PSUBSCRIBE: compared as written), and its argument position.
pub type ChannelUse<'a> = (&'a [u8], bool, usize);

/// May `user` run command `id` (`first`: the argument after its name(s),
/// for `+cmd|arg` rules; `any_command`: a command every user may run, such
/// as AUTH) on `keys`? Each selector is tried; the refusal reported is
/// Redis's pick: the command when no selector allows it, else the key (or
/// channel) latest in the arguments that no selector allows, with its
/// argument position (Redis's `ACLCheckAllUserCommandPerm`).
pub fn check(user: &User, id: usize, any_command: bool, first: Option<&[u8]>, keys: &[KeyUse<'_>], channels: &[ChannelUse<'_>]) -> Result<(), (Denied, usize)> {
    let mut worst = (Denied::Command, 0);
    for s in &user.selectors {
        let verdict = if !any_command && !s.allows_command(id, first) {
            Err((Denied::Command, 0))
        } else if let Some(&(_, _, pos)) = keys.iter().find(|(k, need, _)| !s.allkeys && !s.allows_key(k, *need)) {
            Err((Denied::Key, pos))
        } else {
            match channels.iter().find(|(c, pattern, _)| !s.allows_channel(c, *pattern)) {
                Some(&(_, _, pos)) => Err((Denied::Channel, pos)),
                None => Ok(()),
            }
        };
        match verdict {
            Ok(()) => return Ok(()),
            Err(e) if e.0 > worst.0 || (e.0 == worst.0 && e.1 > worst.1) => worst = e,
            Err(_) => {}
        }
    }
    Err(worst)
}

fn trim<'a>(mut s: &'a [u8], set: &[u8]) -> &'a [u8] {
    while let Some((f, rest)) = s.split_first() {
        if !set.contains(f) {
            break;
        }
        s = rest;
    }
    while let Some((l, rest)) = s.split_last() {
        if !set.contains(l) {
            break;
        }
        s = rest;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::catalog::Entry;
    use super::*;

    fn cat() -> Catalog {
        let e = |n: &str, parent: Option<usize>, subs: Vec<usize>, cats: &[&str]| Entry {
            fullname: n.into(),
            parent,
            subcommands: subs,
            categories: cats.iter().map(|c| 1u32 << catalog::CATEGORIES.iter().position(|x| x == c).unwrap()).fold(0, |a, b| a | b),
        };
        Catalog::new(vec![
            e("get", None, vec![], &["read", "string", "fast"]),
            e("set", None, vec![], &["write", "string", "slow"]),
            e("config", None, vec![2, 3], &["slow"]),
            e("config|get", Some(2), vec![], &["admin", "slow", "dangerous"]),
            e("config|set", Some(2), vec![], &["admin", "slow", "dangerous"]),
            e("select", None, vec![], &["fast", "connection"]),
        ])
    }

    fn user(rules: &[&str]) -> User {
        let c = cat();
        let mut u = User::new(b"u", &c, false);
        let r: Vec<&[u8]> = rules.iter().map(|r| r.as_bytes()).collect();
        u.apply_all(&c, &r, false).unwrap();
        u
    }

    fn described(rules: &[&str]) -> String {
        String::from_utf8(user(rules).describe()).unwrap()
    }

    /// The rule text is compacted as Redis compacts it.
    #[test]
    fn command_rules_are_described_as_redis() {
        assert_eq!(described(&[]), "off sanitize-payload resetchannels -@all");
        assert_eq!(described(&["on", "+@all", "-get"]), "on sanitize-payload resetchannels +@all -get");
        assert_eq!(described(&["+get", "+GET"]), "off sanitize-payload resetchannels -@all +get");
        assert_eq!(described(&["+config|get", "-config|set", "+config"]), "off sanitize-payload resetchannels -@all +config");
        assert_eq!(described(&["+@read", "-@read"]), "off sanitize-payload resetchannels -@all -@read");
        assert_eq!(described(&["+select|0", "~a*", "%R~b", "%W~b", "&ch"]), "off sanitize-payload ~a* ~b resetchannels &ch -@all +select|0");
        assert_eq!(described(&["%R~x", "(~y +get)"]), "off sanitize-payload %R~x resetchannels -@all (~y resetchannels -@all +get)");
    }

    #[test]
    fn commands_keys_and_first_args_are_checked() {
        let u = user(&["+get", "+config|get", "+select|0", "%R~r:*", "%W~w:*", "~rw*"]);
        let s = u.root();
        assert!(s.allows_command(0, None) && !s.allows_command(1, None));
        assert!(s.allows_command(3, None) && !s.allows_command(4, None) && !s.allows_command(2, None));
        assert!(s.allows_command(5, Some(b"0")) && !s.allows_command(5, Some(b"1")));
        assert!(s.allows_key(b"r:1", user::READ) && !s.allows_key(b"r:1", user::WRITE));
        assert!(s.allows_key(b"w:1", user::WRITE) && !s.allows_key(b"w:1", user::READ | user::WRITE));
        assert!(s.allows_key(b"rwx", user::READ | user::WRITE) && s.allows_key(b"x", 0) == false);
        assert!(s.allows_key(b"r:", 0));
    }

    /// A prefix pattern matches as the glob does, at every key length
    /// around the eight bytes compared as a word (`*` not matching an
    /// empty key, as Redis's `stringmatchlen`).
    #[test]
    fn prefix_patterns_match_as_the_glob() {
        for pat in ["*", "a*", "user:*", "memtier-*", "longer-prefix-than-eight*", "é*"] {
            let p = user::KeyPattern::new_for_test(pat.as_bytes());
            for key in ["", "a", "ab", "user:", "user:1", "user;1", "memtier-", "memtier-123", "memtier_123", "longer-prefix-than-eight", "longer-prefix-than-eigh", "é", "éx", "xé"] {
                let glob = crate::glob::matches(pat.as_bytes(), key.as_bytes(), false);
                assert_eq!(p.matches(key.as_bytes()), glob, "{pat} {key}");
                // A selector of this one pattern, through its quick check,
                // and with another pattern (no quick check).
                for rules in [vec![format!("~{pat}")], vec!["%R~zzz".into(), format!("~{pat}")], vec![format!("%R~{pat}")]] {
                    let u = user(&rules.iter().map(String::as_str).collect::<Vec<_>>());
                    let s = u.root();
                    for need in [0, user::READ, user::WRITE, user::READ | user::WRITE] {
                        assert_eq!(s.allows_key_quick(key.as_bytes(), need), s.allows_key(key.as_bytes(), need), "{rules:?} {key} {need}");
                    }
                }
            }
        }
    }

    #[test]
    fn rule_errors_are_redis_s() {
        let c = cat();
        let mut u = User::new(b"u", &c, false);
        let err = |u: &mut User, r: &str| u.apply_all(&c, &[r.as_bytes()], false).unwrap_err().1;
        assert_eq!(err(&mut u, "+nosuch"), RuleError::Unknown);
        assert_eq!(err(&mut u, "+@nosuch"), RuleError::Unknown);
        assert_eq!(err(&mut u, "bogus"), RuleError::Syntax);
        assert_eq!(err(&mut u, "%X~a"), RuleError::Syntax);
        assert_eq!(err(&mut u, "%"), RuleError::Syntax);
        assert_eq!(err(&mut u, "%RR~x"), RuleError::Syntax);
        assert_eq!(err(&mut u, "#abc"), RuleError::BadHash);
        assert_eq!(err(&mut u, "<nope"), RuleError::NoSuchPassword);
        assert_eq!(err(&mut u, "+config|get|x"), RuleError::FirstArgOfSubcommand);
        assert_eq!(err(&mut u, "+select|"), RuleError::Syntax);
        assert_eq!(u.apply_all(&c, &[b"(~a", b"+get"], false).unwrap_err().1, RuleError::UnmatchedParen);
        u.apply_all(&c, &[b"~*"], false).unwrap();
        assert_eq!(err(&mut u, "~a"), RuleError::KeysAfterAll);
        // A failed list changes nothing.
        let before = u.describe();
        assert!(u.apply_all(&c, &[b"on", b"+get", b"+nosuch"], false).is_err());
        assert_eq!(u.describe(), before);
    }

    #[test]
    fn passwords_are_sha256_and_off_users_never_open() {
        let c = cat();
        let mut u = User::new(b"u", &c, false);
        u.apply_all(&c, &[b">secret"], false).unwrap();
        assert_eq!(u.passwords[0], b"2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b".to_vec());
        assert!(!u.password_ok(b"secret"));
        u.apply_all(&c, &[b"on"], false).unwrap();
        assert!(u.password_ok(b"secret") && !u.password_ok(b"Secret"));
        u.apply_all(&c, &[b"nopass"], false).unwrap();
        assert!(u.password_ok(b"anything") && u.passwords.is_empty());
    }

    #[test]
    fn the_default_user_is_unrestricted_until_changed() {
        let c = cat();
        let mut d = User::default_user(&c, false);
        assert!(d.unrestricted);
        assert_eq!(String::from_utf8(d.describe()).unwrap(), "on nopass sanitize-payload ~* &* +@all");
        d.apply(&c, b"-get", false).unwrap();
        assert!(!d.unrestricted);
    }
}
