//! The `arguments` of COMMAND DOCS: each command's argument tree, as
//! Redis 8.4 documents it (clients and redis-cli's hints read it).
//!
//! The trees are data (`docargs/data.rs`), generated from the reference
//! server's own COMMAND DOCS by `scripts/gen_command_args.py` and keyed by
//! the command's full name (`get`, `client|kill`), one declaration per
//! command. A command added to the table gets its arguments by running the
//! script again; `tests/python/test_command_docs.py` compares every
//! command's docs with the reference's.

mod data;

use super::Reply;

/// An argument's type, as COMMAND DOCS names it.
pub const STRING: &str = "string";
pub const INTEGER: &str = "integer";
pub const DOUBLE: &str = "double";
pub const KEY: &str = "key";
pub const PATTERN: &str = "pattern";
pub const UNIX_TIME: &str = "unix-time";
pub const PURE_TOKEN: &str = "pure-token";
/// Containers: their `arguments` instead of a `display_text`.
pub const ONEOF: &str = "oneof";
pub const BLOCK: &str = "block";

// Argument flags, in the order COMMAND DOCS lists them.
const OPTIONAL: u8 = 1;
const MULTIPLE: u8 = 2;
const MULTIPLE_TOKEN: u8 = 4;
const FLAG_NAMES: [(u8, &str); 3] = [
    (OPTIONAL, "optional"),
    (MULTIPLE, "multiple"),
    (MULTIPLE_TOKEN, "multiple_token"),
];

/// One argument of a command (Redis's `redisCommandArg`).
pub struct Arg {
    pub name: &'static str,
    pub kind: &'static str,
    /// Shown instead of the name; None: the name.
    pub display: Option<&'static str>,
    /// The key spec a `key` argument is found by.
    pub key_spec: Option<u8>,
    pub token: Option<&'static str>,
    pub summary: Option<&'static str>,
    pub since: Option<&'static str>,
    pub deprecated_since: Option<&'static str>,
    flags: u8,
    /// A container's members.
    pub args: &'static [Arg],
}

/// An argument named `name` of type `kind`; the methods below add the rest.
pub const fn a(name: &'static str, kind: &'static str) -> Arg {
    Arg {
        name,
        kind,
        display: None,
        key_spec: None,
        token: None,
        summary: None,
        since: None,
        deprecated_since: None,
        flags: 0,
        args: &[],
    }
}

impl Arg {
    pub const fn display(mut self, d: &'static str) -> Self {
        self.display = Some(d);
        self
    }
    pub const fn ks(mut self, i: u8) -> Self {
        self.key_spec = Some(i);
        self
    }
    pub const fn tok(mut self, t: &'static str) -> Self {
        self.token = Some(t);
        self
    }
    pub const fn summary(mut self, s: &'static str) -> Self {
        self.summary = Some(s);
        self
    }
    pub const fn since(mut self, v: &'static str) -> Self {
        self.since = Some(v);
        self
    }
    pub const fn deprecated(mut self, v: &'static str) -> Self {
        self.deprecated_since = Some(v);
        self
    }
    pub const fn opt(mut self) -> Self {
        self.flags |= OPTIONAL;
        self
    }
    pub const fn multi(mut self) -> Self {
        self.flags |= MULTIPLE;
        self
    }
    pub const fn multi_tok(mut self) -> Self {
        self.flags |= MULTIPLE_TOKEN;
        self
    }
    pub const fn args(mut self, args: &'static [Arg]) -> Self {
        self.args = args;
        self
    }

    fn is_container(&self) -> bool {
        self.kind == ONEOF || self.kind == BLOCK
    }
}

/// The arguments of the command `fullname` (empty when it takes none).
pub fn args_of(fullname: &str) -> &'static [Arg] {
    data::ARGS
        .binary_search_by(|(n, _)| (*n).cmp(fullname))
        .map_or(&[], |i| data::ARGS[i].1)
}

/// An argument list as COMMAND DOCS shows it: a map per argument, its
/// fields in Redis's order.
pub fn reply_args(r: &mut Reply<'_>, args: &[Arg]) {
    r.array(args.len());
    for arg in args {
        let opt = [
            arg.key_spec.is_some(),
            arg.token.is_some(),
            arg.summary.is_some(),
            arg.since.is_some(),
            arg.deprecated_since.is_some(),
            arg.flags != 0,
        ];
        r.map(3 + opt.iter().filter(|&&o| o).count());
        r.bulk(b"name");
        r.bulk(arg.name.as_bytes());
        r.bulk(b"type");
        r.bulk(arg.kind.as_bytes());
        if !arg.is_container() {
            r.bulk(b"display_text");
            r.bulk(arg.display.unwrap_or(arg.name).as_bytes());
        }
        if let Some(i) = arg.key_spec {
            r.bulk(b"key_spec_index");
            r.int(i64::from(i));
        }
        for (field, v) in [
            ("token", arg.token),
            ("summary", arg.summary),
            ("since", arg.since),
            ("deprecated_since", arg.deprecated_since),
        ] {
            if let Some(v) = v {
                r.bulk(field.as_bytes());
                r.bulk(v.as_bytes());
            }
        }
        if arg.flags != 0 {
            r.bulk(b"flags");
            r.set(
                FLAG_NAMES
                    .iter()
                    .filter(|(f, _)| arg.flags & f != 0)
                    .count(),
            );
            for (f, n) in FLAG_NAMES {
                if arg.flags & f != 0 {
                    r.simple(n);
                }
            }
        }
        if arg.is_container() {
            r.bulk(b"arguments");
            reply_args(r, arg.args);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_unique() {
        for w in data::ARGS.windows(2) {
            assert!(w[0].0 < w[1].0, "{} before {}", w[0].0, w[1].0);
        }
    }

    /// Every command of the table with arguments in the data, and no data
    /// for a command the table does not have (left over after a removal).
    #[test]
    fn data_names_commands_of_the_table() {
        let t = super::super::table::CommandTable::build();
        for (name, _) in data::ARGS {
            assert!(
                t.iter().any(|c| c.fullname == *name),
                "arguments for {name}, which is not in the table"
            );
        }
        assert!(!args_of("set").is_empty() && args_of("nosuch").is_empty());
    }
}
