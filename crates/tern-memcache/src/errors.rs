//! Every error line memcached sends, written once (without `\r\n`).

pub const ERROR: &str = "ERROR";
pub const BAD_FORMAT: &str = "CLIENT_ERROR bad command line format";
pub const BAD_CHUNK: &str = "CLIENT_ERROR bad data chunk";
pub const TOO_LARGE: &str = "SERVER_ERROR object too large for cache";
pub const LINE_TOO_LONG: &str = "CLIENT_ERROR line too long";
pub const BAD_DELTA: &str = "CLIENT_ERROR invalid numeric delta argument";
pub const NON_NUMERIC: &str = "CLIENT_ERROR cannot increment or decrement non-numeric value";
pub const BAD_EXPTIME: &str = "CLIENT_ERROR invalid exptime argument";
pub const DELETE_USAGE: &str =
    "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]";
pub const DUPLICATE_FLAG: &str = "CLIENT_ERROR duplicate flag";
pub const INVALID_FLAG: &str = "CLIENT_ERROR invalid flag";
pub const INVALID_OR_DUPLICATE_FLAG: &str = "CLIENT_ERROR invalid or duplicate flag";
pub const BAD_TOKEN: &str = "CLIENT_ERROR bad token in command line format";
pub const BAD_KEY_DECODE: &str = "CLIENT_ERROR error decoding key";
pub const BAD_M_LENGTH: &str = "CLIENT_ERROR incorrect length for M token";
pub const BAD_MS_MODE: &str = "CLIENT_ERROR invalid mode for ms M token";
pub const BAD_MA_MODE: &str = "CLIENT_ERROR invalid mode for ma M token";
pub const BAD_INITIAL: &str = "CLIENT_ERROR invalid numeric initial value";
pub const BAD_DELTA_VALUE: &str = "CLIENT_ERROR invalid numeric delta value";
pub const OPAQUE_TOO_LONG: &str = "CLIENT_ERROR opaque token too long";
pub const FLAGS_TOO_LONG: &str = "CLIENT_ERROR options flags are too long";
/// `ms` words it differently from the other meta commands.
pub const MS_FLAGS_TOO_LONG: &str = "CLIENT_ERROR options flags too long";
pub const OUT_OF_MEMORY: &str = "SERVER_ERROR out of memory storing object";
/// Authentication (`-Y` in memcached): anything but the credentials `set`
/// before it, a credentials value that is not `<user> <password>`, and
/// credentials that do not match.
pub const UNAUTHENTICATED: &str = "CLIENT_ERROR unauthenticated";
pub const BAD_AUTH_TOKEN: &str = "CLIENT_ERROR bad authentication token format";
pub const AUTH_FAILURE: &str = "CLIENT_ERROR authentication failure";
/// `stats cachedump`, `cache_memlimit`, `lru_crawler`, `stats detail`.
pub const BAD_COMMAND_LINE: &str = "CLIENT_ERROR bad command line";
pub const ILLEGAL_SLAB_ID: &str = "CLIENT_ERROR Illegal slab id";
pub const MEMLIMIT_TOO_SMALL: &str = "MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m";
pub const MEMLIMIT_NOT_BYTES: &str = "MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes";
pub const BAD_CLASS: &str = "BADCLASS invalid class id";
pub const CRAWLER_DISABLED: &str = "CLIENT_ERROR lru crawler disabled";
pub const CRAWLER_SLEEP: &str = "CLIENT_ERROR sleep must be one second or less";
/// `lru_crawler enable` while the crawler runs.
pub const CRAWLER_START_FAILED: &str = "ERROR failed to start lru crawler thread";
pub const DETAIL_USAGE: &str = "CLIENT_ERROR usage: stats detail on|off|dump";
/// `shutdown` without `memcache-enable-shutdown` (memcached's `-A`), and
/// with a mode other than `graceful`.
pub const SHUTDOWN_NOT_ENABLED: &str = "ERROR: shutdown not enabled";
pub const SHUTDOWN_BAD_MODE: &str = "CLIENT_ERROR invalid shutdown mode";
/// Sent to a connection over `maxconns` before it is closed.
pub const TOO_MANY_CONNECTIONS: &str = "ERROR Too many open connections";

/// A server-side refusal in memcached's form: `SERVER_ERROR <why>` (the
/// server's protected mode, whose reason is the RESP port's text).
pub fn server_error(why: &str) -> String {
    format!("SERVER_ERROR {why}")
}
