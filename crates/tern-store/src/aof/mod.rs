//! Redis 7's multi-part append-only file: the formats, and the ordered
//! hand-over of effect records to its writer. The files, the writer
//! thread, the fsync policy and rewrites are wired in tern-commands
//! (`aof`); what is here does no I/O of its own but reading a stream.
//!
//! ```text
//!  <dir>/<appenddirname>/
//!     appendonly.aof.manifest        the list of files (manifest)
//!     appendonly.aof.2.base.rdb      the dataset at the last rewrite (an RDB, or
//!                                     .base.aof: commands, with aof-use-rdb-preamble no)
//!     appendonly.aof.2.incr.aof      effect records since then, as commands (record)
//! ```
//!
//! - [`manifest`]: the manifest's format, read and written as Redis does.
//! - [`record`]: effect records as commands (`SELECT` when the database
//!   changes) and commands back into records, for [`crate::Record::apply`].
//! - [`reader`]: the loader's reader of commands, which tells a torn last
//!   command from corruption.
//! - [`feed`]: the workers' records merged by number up to a watermark, so
//!   that each key's records are written in the order they happened.
//! - [`fill`]: the annotation lines written ahead of the commands
//!   (`aof-prealloc-size`), which Redis skips.
//!
//! Non-goals: Redis's `#TS:` annotations are skipped on load and not
//! written (`aof-timestamp-enabled`).

pub mod feed;
pub mod fill;
pub mod manifest;
pub mod reader;
pub mod record;

pub use crate::effect::Mark;
pub use feed::{Feed, Merger};
pub use manifest::{AofFile, Kind, Manifest, ManifestError};
pub use reader::{CommandReader, ReadError};
pub use record::{commands, encode, encode_log, parse, records, Cursor, FormError, Parsed};
