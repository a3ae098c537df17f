//! The commands as ACL rules name them: every command and subcommand's id
//! (the command table's), full name, parent, subcommands and categories,
//! copied once from the table at start so that this layer needs nothing
//! of `cmd`. Renamed commands keep their original names here, as in Redis.

use std::collections::HashMap;

/// The categories in the order Redis lists them (ACL CAT); a command's
/// categories are a bit mask over this list.
pub const CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// One command of the catalog.
#[derive(Clone, Debug)]
pub struct Entry {
    /// `get`, or `config|get`.
    pub fullname: String,
    pub parent: Option<usize>,
    pub subcommands: Vec<usize>,
    /// Bits over [`CATEGORIES`].
    pub categories: u32,
}

/// Every command by id, and by lower-case full name.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
}

impl Catalog {
    /// `entries[i]` is command id `i`.
    pub fn new(entries: Vec<Entry>) -> Self {
        let by_name = entries.iter().enumerate().map(|(i, e)| (e.fullname.clone(), i)).collect();
        Catalog { entries, by_name }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A command by name, `name|sub` for a subcommand, in any case.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.by_name.get(&name.to_ascii_lowercase()).copied()
    }

    pub fn fullname(&self, id: usize) -> &str {
        &self.entries[id].fullname
    }

    pub fn parent(&self, id: usize) -> Option<usize> {
        self.entries[id].parent
    }

    pub fn subcommands(&self, id: usize) -> &[usize] {
        &self.entries[id].subcommands
    }

    /// A category's bit, by name in any case.
    pub fn category(&self, name: &str) -> Option<u32> {
        CATEGORIES.iter().position(|c| c.eq_ignore_ascii_case(name)).map(|i| 1 << i)
    }

    /// The ids of the commands (and subcommands) in the category.
    pub fn in_category(&self, bit: u32) -> Vec<usize> {
        (0..self.entries.len()).filter(|&i| self.entries[i].categories & bit != 0).collect()
    }

    /// The category names of command `id`, in Redis's order.
    pub fn categories_of(&self, id: usize) -> impl Iterator<Item = &'static str> + '_ {
        let bits = self.entries[id].categories;
        CATEGORIES.iter().enumerate().filter(move |(i, _)| bits & (1 << i) != 0).map(|(_, c)| *c)
    }
}
