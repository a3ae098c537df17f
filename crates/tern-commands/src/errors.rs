//! Every error line Tern's RESP port sends, written once, matching Redis
//! byte for byte (without the leading `-` and CRLF). Lines that echo the
//! client's bytes are functions over [`with_arg`]. A test scans the crate's
//! source and fails on an error literal anywhere else. Protocol errors are
//! the parser's (`tern_resp::ParseError::message`).

pub const SYNTAX: &str = "ERR syntax error";
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub const NOT_FLOAT: &str = "ERR value is not a valid float";
pub const OVERFLOW: &str = "ERR increment or decrement would overflow";
pub const NO_SUCH_KEY: &str = "ERR no such key";
pub const INDEX_OUT_OF_RANGE: &str = "ERR index out of range";
pub const MUST_BE_POSITIVE: &str = "ERR value is out of range, must be positive";
pub const NUMKEYS_NOT_POSITIVE: &str = "ERR numkeys should be greater than 0";
pub const COUNT_NOT_POSITIVE: &str = "ERR count should be greater than 0";
pub const LPOS_RANK_ZERO: &str = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";
pub const LPOS_COUNT_NEGATIVE: &str = "ERR COUNT can't be negative";
pub const LPOS_MAXLEN_NEGATIVE: &str = "ERR MAXLEN can't be negative";
pub const TIMEOUT_NOT_FLOAT: &str = "ERR timeout is not a float or out of range";
pub const TIMEOUT_NEGATIVE: &str = "ERR timeout is negative";
pub const TIMEOUT_NOT_INTEGER: &str = "ERR timeout is not an integer or out of range";
pub const PAUSE_MODE: &str = "ERR CLIENT PAUSE mode must be WRITE or ALL";
pub const TIMEOUT_OUT_OF_RANGE: &str = "ERR timeout is out of range";
pub const UNBLOCK_REASON: &str = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR";
/// The reply of a client unblocked by CLIENT UNBLOCK ... ERROR.
pub const UNBLOCKED: &str = "UNBLOCKED client unblocked via CLIENT UNBLOCK";
pub const NOAUTH: &str = "NOAUTH Authentication required.";
/// A command that may grow memory, over `maxmemory` with nothing to evict.
pub const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";
/// A key longer than an item can hold (Redis has no such limit; reaching it
/// needs proto-max-bulk-len and client-query-buffer-limit above 1gb).
pub const KEY_TOO_LONG: &str = "ERR key is too long (Tern stores keys of at most 1073741823 bytes)";
pub const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
pub const DB_INDEX_OUT_OF_RANGE: &str = "ERR DB index is out of range";
pub const STRING_TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
pub const EXECABORT: &str = "EXECABORT Transaction discarded because of previous errors.";
pub const MAX_CLIENTS: &str = "ERR max number of clients reached";
pub const INVALID_CURSOR: &str = "ERR invalid cursor";
pub const SAME_OBJECT: &str = "ERR source and destination objects are the same";
pub const NOT_ALLOWED_IN_MULTI: &str = "ERR Command not allowed inside a transaction";
/// COMMAND GETKEYS and GETKEYSANDFLAGS.
pub const GETKEYS_INVALID_COMMAND: &str = "ERR Invalid command specified";
pub const GETKEYS_NO_KEYS: &str = "ERR The command has no key arguments";
pub const GETKEYS_INVALID_ARITY: &str = "ERR Invalid number of arguments specified for command";
pub const GETKEYS_INVALID_ARGUMENTS: &str = "ERR Invalid arguments specified for command";
/// Sent to a client from another host while protected mode is on and the
/// default user has no password, before closing it (both ports: the
/// memcached port sends it as a `SERVER_ERROR` line).
pub const DENIED: &str = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Set up an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.";

/// An integer argument that must fit in 32 bits (SELECT, MOVE, SWAPDB, ...).
pub const I32_OUT_OF_RANGE: &str = "ERR value is out of range, value must between -2147483648 and 2147483647";
/// A count that must be strictly between `i64::MIN` and `i64::MAX` negated.
pub const I64_SYMMETRIC_OUT_OF_RANGE: &str =
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
pub const OUT_OF_RANGE: &str = "ERR value is out of range";
/// INCRBYFLOAT and HINCRBYFLOAT whose result is not finite.
pub const INCR_NAN_OR_INFINITY: &str = "ERR increment would produce NaN or Infinity";
pub const UNKNOWN_ARGUMENT: &str = "ERR unknown argument";
pub const NOVALUES_NOT_HSCAN: &str = "ERR NOVALUES option can only be used in HSCAN";

// Strings.
pub const OFFSET_OUT_OF_RANGE: &str = "ERR offset is out of range";
pub const DECREMENT_OVERFLOW: &str = "ERR decrement would overflow";
pub const LCS_NOT_STRINGS: &str = "ERR The specified keys must contain string values";
pub const LCS_IDX_AND_LEN: &str = "ERR If you want both the length and indexes, please just use IDX.";
pub const LCS_TOO_LONG: &str = "ERR String too long for LCS";
pub const LCS_OVER_LIMIT: &str = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";
pub const LCS_ALLOC_FAILED: &str = "ERR Insufficient memory, failed allocating transient memory for LCS";
/// SET and DELEX's IFDEQ / IFDNE given something other than a digest's length.
pub const DIGEST_LENGTH: &str = "ERR must be exactly 16 hexadecimal characters";
pub const DELEX_CONDITION: &str = "ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE";
pub const DELEX_NOT_STRING: &str = "ERR Key should be of string type if conditions are specified";
// Bitmaps.
pub const BIT_OFFSET: &str = "ERR bit offset is not an integer or out of range";
pub const BIT_VALUE: &str = "ERR bit is not an integer or out of range";
pub const BITPOS_BIT: &str = "ERR The bit argument must be 1 or 0.";
pub const BITFIELD_TYPE: &str = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
pub const BITFIELD_OVERFLOW: &str = "ERR Invalid OVERFLOW type specified";
pub const BITFIELD_RO_GET_ONLY: &str = "ERR BITFIELD_RO only supports the GET subcommand";
pub const BITOP_NOT_ONE_KEY: &str = "ERR BITOP NOT must be called with a single source key.";

/// BITOP DIFF, DIFF1 or ANDOR (`op`, upper case) with one source key.
pub fn bitop_two_sources(op: &str) -> String {
    format!("ERR BITOP {op} must be called with at least two source keys.")
}

// HyperLogLog.
/// A string that is not a HyperLogLog (Redis keeps WRONGTYPE as its code).
pub const HLL_NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
pub const HLL_CORRUPT: &str = "INVALIDOBJ Corrupted HLL object detected";

pub const HLL_NOT_SPARSE: &str = "ERR HLL encoding is not sparse";
pub const PFDEBUG_NO_KEY: &str = "ERR The specified key does not exist";
pub const PFDEBUG_SIMD_ARG: &str = "ERR Argument must be ON or OFF";
pub const PFSELFTEST_SPARSE_NOT_USED: &str = "TESTFAILED sparse encoding not used";
pub const PFSELFTEST_DISAGREE: &str = "TESTFAILED dense/sparse disagree";

/// PFDEBUG with a subcommand it does not know (checked after the key).
pub fn pfdebug_unknown(sub: &[u8]) -> Vec<u8> {
    with_arg("ERR Unknown PFDEBUG subcommand '", sub, "'")
}

/// PFSELFTEST's register check reading back `got` instead of `want`.
pub fn pfselftest_register(i: usize, got: u8, want: u8) -> String {
    format!("TESTFAILED Register error, counter {i} wrong value {got} instead of {want}")
}

/// PFSELFTEST's estimate of `card` elements off by `abserr`.
pub fn pfselftest_error(card: u64, abserr: u64) -> String {
    format!("TESTFAILED Too big error. card:{card} abserr:{abserr}")
}

/// MSETEX's key count.
pub const INVALID_NUMKEYS: &str = "ERR invalid numkeys value";
pub const KEY_VALUE_PAIRS: &str = "ERR wrong number of key-value pairs";

// Keys.
pub const FREQ_NOT_TRACKED: &str = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
pub const IDLE_NOT_TRACKED: &str = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
pub const IDLE_NOT_TRACKED_FIFO: &str = "ERR An S3-FIFO or SIEVE maxmemory policy is selected, idle time not tracked for this key.";
pub const NX_AND_OTHERS: &str = "ERR NX and XX, GT or LT options at the same time are not compatible";
pub const GT_AND_LT: &str = "ERR GT and LT options at the same time are not compatible";
pub const INVALID_FIRST_DB: &str = "ERR invalid first DB index";
pub const INVALID_SECOND_DB: &str = "ERR invalid second DB index";

// Sets (and, for the key count, the sorted sets' ZINTERCARD).
pub const LIMIT_NEGATIVE: &str = "ERR LIMIT can't be negative";
pub const NUMKEYS_OVER_ARGS: &str = "ERR Number of keys can't be greater than number of args";

// Sorted sets.
pub const ZSET_MIN_MAX_NOT_FLOAT: &str = "ERR min or max is not a float";
pub const ZSET_MIN_MAX_NOT_STRING: &str = "ERR min or max not valid string range item";
pub const ZSET_NAN_SCORE: &str = "ERR resulting score is not a number (NaN)";
pub const ZADD_XX_AND_NX: &str = "ERR XX and NX options at the same time are not compatible";
pub const ZADD_GT_LT_NX: &str = "ERR GT, LT, and/or NX options at the same time are not compatible";
pub const ZADD_INCR_PAIR: &str = "ERR INCR option supports a single increment-element pair";
pub const ZRANGE_LIMIT_NEEDS_BY: &str =
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
pub const ZSET_WEIGHT_NOT_FLOAT: &str = "ERR weight value is not a float";
pub const ZRANGE_BYLEX_WITHSCORES: &str =
    "ERR syntax error, WITHSCORES not supported in combination with BYLEX";

// SORT.
pub const SORT_NOT_DOUBLE: &str = "ERR One or more scores can't be converted into double";

// Hashes.
pub const HASH_NOT_INTEGER: &str = "ERR hash value is not an integer";
pub const HASH_NOT_FLOAT: &str = "ERR hash value is not a float";
/// HINCRBYFLOAT given a NaN or infinite increment.
pub const HINCR_NAN_OR_INFINITY: &str = "ERR value is NaN or Infinity";
pub const FIELDS_MISSING: &str = "ERR Mandatory argument FIELDS is missing or not at the right position";
/// The field count of the commands that write field TTLs (HEXPIRE, ...).
pub const NUMFIELDS_WRITE: &str = "ERR Parameter `numFields` should be greater than 0";
/// The field count of the commands that read them (HTTL, HPERSIST, ...).
pub const NUMFIELDS_READ: &str = "ERR Number of fields must be a positive integer";
pub const NUMFIELDS_HSETEX: &str = "ERR invalid number of fields";
pub const NUMFIELDS_MISMATCH: &str = "ERR The `numfields` parameter must match the number of arguments";
pub const EXPIRE_NEGATIVE: &str = "ERR invalid expire time, must be >= 0";
pub const ONLY_ONE_FXX_FNX: &str = "ERR Only one of FXX or FNX arguments can be specified";
pub const ONLY_ONE_EXPIRE: &str = "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified";

// Connection.
pub const AUTH_NO_PASSWORD: &str =
    "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?";
pub const HELLO_BAD_PROTO: &str = "ERR Protocol version is not an integer or out of range";
pub const NOPROTO: &str = "NOPROTO unsupported protocol version";
pub const HELLO_NOAUTH: &str = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time";
/// HELLO SETNAME and CLIENT SETNAME.
pub const BAD_CLIENT_NAME: &str = "ERR Client names cannot contain spaces, newlines or special characters.";

// Transactions.
pub const MULTI_NESTED: &str = "ERR MULTI calls can not be nested";
pub const EXEC_WITHOUT_MULTI: &str = "ERR EXEC without MULTI";
pub const DISCARD_WITHOUT_MULTI: &str = "ERR DISCARD without MULTI";
pub const WATCH_INSIDE_MULTI: &str = "ERR WATCH inside MULTI is not allowed";

// CLIENT.
pub const INVALID_CLIENT_ID: &str = "ERR Invalid client ID";
pub const CLIENT_ID_NOT_POSITIVE: &str = "ERR client-id should be greater than 0";
pub const MAXAGE_NOT_INTEGER: &str = "ERR maxage is not an integer or out of range";
pub const MAXAGE_NOT_POSITIVE: &str = "ERR maxage should be greater than 0";
pub const NO_SUCH_CLIENT: &str = "ERR No such client";

// Server.
pub const NO_SHUTDOWN_IN_PROGRESS: &str = "ERR No shutdown in progress.";
/// RESTORE of a key that exists, without REPLACE.
pub const BUSYKEY: &str = "BUSYKEY Target key name already exists.";
/// RESTORE's payload footer: a newer RDB version or a wrong CRC64.
pub const DUMP_PAYLOAD: &str = "ERR DUMP payload version or checksum are wrong";
/// RESTORE's payload body does not decode.
pub const BAD_DATA_FORMAT: &str = "ERR Bad data format";
pub const INVALID_TTL: &str = "ERR Invalid TTL value, must be >= 0";
pub const INVALID_IDLETIME: &str = "ERR Invalid IDLETIME value, must be >= 0";
pub const INVALID_FREQ: &str = "ERR Invalid FREQ value, must be >= 0 and <= 255";
/// SAVE or BGSAVE while a background save runs.
pub const BGSAVE_IN_PROGRESS: &str = "ERR Background save already in progress";
pub const BGSAVE_CHILD_ACTIVE: &str =
    "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.";
pub const AOF_REWRITE_IN_PROGRESS: &str = "ERR Background append only file rewriting already in progress";
/// A write (or PING) while the last background save failed, with a
/// `save` schedule and `stop-writes-on-bgsave-error yes`.
pub const MISCONF: &str = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.";
/// SAVE's failure (the cause is in the log).
pub const SAVE_FAILED: &str = "ERR";
/// DEBUG RELOAD whose load failed (the cause is in the log).
pub const RELOAD_FAILED: &str = "ERR Error trying to load the RDB dump, check server logs.";
/// DEBUG RELOAD with an option it does not know.
pub const RELOAD_OPTIONS: &str = "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.";
/// DEBUG RELOAD inside MULTI: the transaction holds every shard, which
/// the load takes one by one (Redis, single-threaded, runs it there).
pub const RELOAD_IN_MULTI: &str = "ERR DEBUG RELOAD is not supported inside MULTI on this server";
/// SHUTDOWN whose final save failed.
pub const SHUTDOWN_FAILED: &str = "ERR Errors trying to SHUTDOWN. Check logs.";
/// CONFIG REWRITE on a server started without a file.
pub const NO_CONFIG_FILE: &str = "ERR The server is running without a config file";
// MONITOR.
pub const REPLICA_KEYSPACE: &str = "ERR Replica can't interact with the keyspace";
pub const MONITOR_DENY_BLOCKING: &str = "ERR MONITOR isn't allowed for DENY BLOCKING client";
// SLOWLOG and COMMANDLOG.
pub const COUNT_AT_LEAST_MINUS_ONE: &str = "ERR count should be greater than or equal to -1";
pub const COMMANDLOG_TYPE: &str = "ERR type should be one of the following: slow, large-request, large-reply";

/// GEOADD's coordinates outside what a 52-bit geohash covers (C's `%f`).
pub fn geo_invalid_pair(lon: f64, lat: f64) -> String {
    format!("ERR invalid longitude,latitude pair {lon:.6},{lat:.6}")
}

pub const GEO_UNIT: &str = "ERR unsupported unit provided. please use M, KM, FT, MI";
// GEOSEARCH, GEOSEARCHSTORE, GEORADIUS and their kin.
pub const GEO_NEED_RADIUS: &str = "ERR need numeric radius";
pub const GEO_NEED_WIDTH: &str = "ERR need numeric width";
pub const GEO_NEED_HEIGHT: &str = "ERR need numeric height";
pub const GEO_RADIUS_NEGATIVE: &str = "ERR radius cannot be negative";
pub const GEO_BOX_NEGATIVE: &str = "ERR height or width cannot be negative";
pub const GEO_NO_MEMBER: &str = "ERR could not decode requested zset member";
pub const GEO_COUNT_NOT_POSITIVE: &str = "ERR COUNT must be > 0";
pub const GEO_ANY_NEEDS_COUNT: &str = "ERR the ANY argument requires COUNT argument";
pub const GEOSEARCHSTORE_WITH: &str = "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options";
pub const GEORADIUS_STORE_WITH: &str =
    "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options";

/// GEOSEARCH without FROMMEMBER or FROMLONLAT, naming the command as the
/// client spelt it.
pub fn geo_need_from(cmd: &[u8]) -> Vec<u8> {
    with_arg("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for ", cmd, "")
}

/// GEOSEARCH without BYRADIUS or BYBOX, naming the command as the client
/// spelt it.
pub fn geo_need_by(cmd: &[u8]) -> Vec<u8> {
    with_arg("ERR exactly one of BYRADIUS and BYBOX can be specified for ", cmd, "")
}

/// ZUNION, ZINTER, ZDIFF (and STORE), ZINTERCARD with a key count below 1.
pub fn zset_need_keys(fullname: &str) -> String {
    format!("ERR at least 1 input key is needed for '{fullname}' command")
}

// Streams (`t_stream.c`).
pub const STREAM_ID_INVALID: &str = "ERR Invalid stream ID specified as stream command argument";
pub const STREAM_MAXLEN_AND_MINID: &str = "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
pub const STREAM_MAXLEN_NEGATIVE: &str = "ERR The MAXLEN argument must be >= 0.";
pub const STREAM_LIMIT_NEGATIVE: &str = "ERR The LIMIT argument must be >= 0.";
pub const STREAM_LIMIT_WITHOUT_TRIM: &str = "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy";
pub const STREAM_LIMIT_WITHOUT_APPROX: &str = "ERR syntax error, LIMIT cannot be used without the special ~ option";
pub const XTRIM_NEEDS_STRATEGY: &str = "ERR syntax error, XTRIM must be called with a trimming strategy";
pub const XADD_ID_ZERO: &str = "ERR The ID specified in XADD must be greater than 0-0";
pub const XADD_ID_TOO_SMALL: &str = "ERR The ID specified in XADD is equal or smaller than the target stream top item";
pub const STREAM_EXHAUSTED: &str = "ERR The stream has exhausted the last possible ID, unable to add more items";
pub const STREAM_ELEMENTS_TOO_LARGE: &str = "ERR Elements are too large to be stored";
pub const STREAM_BAD_START: &str = "ERR invalid start ID for the interval";
pub const STREAM_BAD_END: &str = "ERR invalid end ID for the interval";
pub const XSETID_ENTRIES_ADDED_NEGATIVE: &str = "ERR entries_added must be positive";
pub const XSETID_BELOW_GIVEN_MAX_DELETED: &str = "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id";
pub const XSETID_BELOW_MAX_DELETED: &str = "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id";
pub const XSETID_BELOW_TOP: &str = "ERR The ID specified in XSETID is smaller than the target stream top item";
pub const XSETID_ENTRIES_ADDED_BELOW_LENGTH: &str = "ERR The entries_added specified in XSETID is smaller than the target stream length";
pub const XREAD_GROUP_OPTION: &str = "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.";
pub const XREAD_NOACK_OPTION: &str = "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.";
pub const STREAM_NUMIDS: &str = "ERR Number of IDs must be a positive integer";
pub const STREAM_NUMIDS_MISMATCH: &str = "ERR The `numids` parameter must match the number of arguments";
pub const STREAM_LAST_ID_ZERO: &str = "ERR the stream last element ID is 0-0";
pub const XREAD_GT_ID: &str = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.";

pub const XREADGROUP_NEEDS_GROUP: &str = "ERR Missing GROUP option for XREADGROUP";
pub const XREADGROUP_DOLLAR: &str = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.";
pub const XREADGROUP_PLUS: &str = "ERR The + ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The + ID would just return an empty result set.";
pub const XGROUP_NEEDS_KEY: &str = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.";
pub const XGROUP_ENTRIES_READ: &str = "ERR value for ENTRIESREAD must be positive or -1";
pub const BUSYGROUP: &str = "BUSYGROUP Consumer Group name already exists";
pub const XCLAIM_MIN_IDLE: &str = "ERR Invalid min-idle-time argument for XCLAIM";
pub const XCLAIM_IDLE: &str = "ERR Invalid IDLE option argument for XCLAIM";
pub const XCLAIM_TIME: &str = "ERR Invalid TIME option argument for XCLAIM";
pub const XCLAIM_RETRYCOUNT: &str = "ERR Invalid RETRYCOUNT option argument for XCLAIM";
pub const XAUTOCLAIM_MIN_IDLE: &str = "ERR Invalid min-idle-time argument for XAUTOCLAIM";
pub const XAUTOCLAIM_COUNT: &str = "ERR COUNT must be > 0";

/// A consumer group's command on a key or group that does not exist
/// (`suffix`: XREADGROUP names itself).
pub fn nogroup(key: &[u8], group: &[u8], suffix: &str) -> Vec<u8> {
    let mut m = with_arg("NOGROUP No such key '", key, "' or consumer group '");
    m.extend_from_slice(&with_arg("", group, "'"));
    m.extend_from_slice(suffix.as_bytes());
    m
}

/// XGROUP and XINFO CONSUMERS naming a group the stream does not have.
pub fn nogroup_for_key(group: &[u8], key: &[u8]) -> Vec<u8> {
    let mut m = with_arg("NOGROUP No such consumer group '", group, "' for key name '");
    m.extend_from_slice(&with_arg("", key, "'"));
    m
}

/// XCLAIM with an argument after its ids that is no option of it.
pub fn xclaim_option(opt: &[u8]) -> Vec<u8> {
    with_arg("ERR Unrecognized XCLAIM option '", opt, "'")
}

/// XREAD and XREADGROUP with an odd count of keys and ids after STREAMS
/// (`symbol` names what each key needs).
pub fn xread_unbalanced(fullname: &str, symbol: &str) -> String {
    format!("ERR Unbalanced '{fullname}' list of streams: for each stream key an {symbol} must be specified.")
}

/// `ERR wrong number of arguments for 'get' command`.
pub fn arity(fullname: &str) -> String {
    format!("ERR wrong number of arguments for '{fullname}' command")
}

/// `ERR invalid expire time in 'set' command`.
pub fn invalid_expire(cmd: &str) -> String {
    format!("ERR invalid expire time in '{cmd}' command")
}

/// A client's bytes as Redis's `%s` shows them inside an error: up to the
/// first NUL, the bytes themselves (not re-encoded: Redis echoes invalid
/// UTF-8 as it came). CR and LF become spaces when the line is written.
pub fn c_str(b: &[u8]) -> &[u8] {
    b.iter().position(|&c| c == 0).map_or(b, |n| &b[..n])
}

/// `prefix` + the client's `arg` (as [`c_str`] shows it) + `suffix`.
pub fn with_arg(prefix: &str, arg: &[u8], suffix: &str) -> Vec<u8> {
    let arg = c_str(arg);
    let mut m = Vec::with_capacity(prefix.len() + arg.len() + suffix.len());
    m.extend_from_slice(prefix.as_bytes());
    m.extend_from_slice(arg);
    m.extend_from_slice(suffix.as_bytes());
    m
}

/// LATENCY GRAPH of an event that has no samples.
pub fn no_latency_samples(event: &[u8]) -> Vec<u8> {
    with_arg("ERR No samples available for event '", event, "'")
}

/// CONFIG SET naming no directive Tern knows.
pub fn config_set_unknown(name: &[u8]) -> Vec<u8> {
    with_arg("ERR Unknown option or number of arguments for CONFIG SET - '", name, "'")
}

/// CONFIG SET refusing the pair of directive `name` (as the client spelled
/// it) for the reason `why` (the value's, or "can't set immutable config").
pub fn config_set_failed(name: &[u8], why: &str) -> Vec<u8> {
    with_arg("ERR CONFIG SET failed (possibly related to argument '", name, &format!("') - {why}"))
}

/// CONFIG SET's reasons for refusing a directive whatever its value (the
/// value's own reasons come from its type in `config`).
pub const CONFIG_SET_IMMUTABLE: &str = "can't set immutable config";
pub const CONFIG_SET_PROTECTED: &str = "can't set protected config";
/// CONFIG SET of a TLS directive whose new TLS context could not be built
/// (a certificate or key that does not load, ...): the details are logged.
pub const CONFIG_SET_TLS: &str = "Unable to update TLS configuration. Check server logs.";
pub const CONFIG_SET_DUPLICATE: &str = "duplicate parameter";

/// CONFIG SET maxclients above what the file descriptor limit allows;
/// `fit` is the most it allows.
pub fn maxclients_unfit(fit: impl std::fmt::Display) -> String {
    format!("The operating system is not able to handle the specified number of clients, try with {fit}")
}

/// CONFIG REWRITE failing to read or write the file.
pub fn config_rewrite_failed(e: &std::io::Error) -> String {
    format!("ERR Rewriting config file: {e}")
}

/// EXEC refused before it runs (e.g. wrong arity): `msg` is that refusal,
/// whose `ERR ` prefix is not repeated.
pub fn execabort_because(msg: &str) -> String {
    let why = msg.strip_prefix("ERR ").unwrap_or(msg);
    format!("EXECABORT Transaction discarded because of: {why}")
}

/// HELLO with an option it does not know, or one missing its values.
pub fn hello_syntax(opt: &[u8]) -> Vec<u8> {
    with_arg("ERR Syntax error in HELLO option '", opt, "'")
}

/// EXPIRE-family option other than NX, XX, GT, LT.
pub fn unsupported_option(opt: &[u8]) -> Vec<u8> {
    with_arg("ERR Unsupported option ", opt, "")
}

/// CLIENT SETINFO with an attribute other than lib-name and lib-ver.
pub fn setinfo_unrecognized(attr: &[u8]) -> Vec<u8> {
    with_arg("ERR Unrecognized option '", attr, "'")
}

/// CLIENT SETINFO with a value holding spaces or control characters.
pub fn setinfo_bad_value(attr: &[u8]) -> Vec<u8> {
    with_arg("ERR ", attr, " cannot contain spaces, newlines or special characters.")
}

/// CLIENT LIST TYPE / CLIENT KILL TYPE naming no client type.
pub fn unknown_client_type(name: &[u8]) -> Vec<u8> {
    with_arg("ERR Unknown client type '", name, "'")
}

/// CLIENT KILL USER naming no user.
pub fn no_such_user(name: &[u8]) -> Vec<u8> {
    with_arg("ERR No such user '", name, "'")
}

// ---- ACL (Redis's acl.c, server.c, multi.c) ----

pub const NOPERM_KEY: &str = "NOPERM No permissions to access a key";
pub const NOPERM_CHANNEL: &str = "NOPERM No permissions to access a channel";

/// A command the user may not run.
pub fn noperm_command(user: &[u8], cmd: &str) -> Vec<u8> {
    [&b"NOPERM "[..], &dryrun_command(user, cmd)].concat()
}

/// A queued command that the rules refuse by EXEC's time; `reason` is
/// one of the three below.
pub fn noperm_exec(reason: &str) -> String {
    format!("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {reason}")
}
pub const EXEC_DENIED_COMMAND: &str = "no permission to execute the command or subcommand";
pub const EXEC_DENIED_KEY: &str = "no permission to touch the specified keys";
pub const EXEC_DENIED_CHANNEL: &str = "no permission to access one of the channels used as arguments";

/// ACL DRYRUN's answers (bulk strings, not errors).
pub fn dryrun_command(user: &[u8], cmd: &str) -> Vec<u8> {
    let mut m = with_arg("User ", user, " has no permissions to run the '");
    m.extend_from_slice(cmd.as_bytes());
    m.extend_from_slice(b"' command");
    m
}
pub fn dryrun_object(user: &[u8], object: &[u8], kind: &str) -> Vec<u8> {
    let mut m = with_arg("User ", user, " has no permissions to access the '");
    m.extend_from_slice(object);
    m.extend_from_slice(format!("' {kind}").as_bytes());
    m
}

/// ACL SETUSER with a rule it refuses.
pub fn acl_setuser(op: &[u8], why: &str) -> Vec<u8> {
    let mut m = with_arg("ERR Error in ACL SETUSER modifier '", op, "': ");
    m.extend_from_slice(why.as_bytes());
    m
}
pub fn acl_unmatched_paren(at: &[u8]) -> Vec<u8> {
    with_arg("ERR Unmatched parenthesis in acl selector starting at '", at, "'.")
}
pub const ACL_USERNAME_SPACES: &str = "ERR Usernames can't contain spaces or null characters";
pub const ACL_DEFAULT_UNDELETABLE: &str = "ERR The 'default' user cannot be removed";
pub const ACL_NO_FILE: &str = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.";
pub const ACL_SAVE_FAILED: &str = "ERR There was an error trying to save the ACLs. Please check the server logs for more information";
pub const ACL_GENPASS_BITS: &str = "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096";
pub fn acl_unknown_category(name: &[u8]) -> Vec<u8> {
    with_arg("ERR Unknown category '", c_str_128(name), "'")
}
pub fn acl_no_user(name: &[u8]) -> Vec<u8> {
    with_arg("ERR User '", c_str(name), "' not found")
}
pub fn acl_no_command(name: &[u8]) -> Vec<u8> {
    with_arg("ERR Command '", c_str(name), "' not found")
}
/// ACL LOAD's list of the file's errors.
pub fn acl_load(errors: &str) -> String {
    format!("ERR {errors}")
}

/// `%.128s`: at most 128 bytes of [`c_str`].
fn c_str_128(b: &[u8]) -> &[u8] {
    let b = c_str(b);
    &b[..b.len().min(128)]
}

/// `ERR unknown subcommand 'x'. Try CLIENT HELP.`
pub fn unknown_subcommand(sub: &[u8], cmd: &str) -> Vec<u8> {
    with_arg("ERR unknown subcommand '", c_str_128(sub), &format!("'. Try {} HELP.", cmd.to_ascii_uppercase()))
}

/// Cluster mode (Redis's cluster.c and cluster_legacy.c).
pub const CLUSTER_NOT_MASTER: &str = "ERR The specified node is not a master";
pub const CLUSTER_REPLICATE_MYSELF: &str = "ERR Can't replicate myself";
pub const CLUSTER_REPLICATE_REPLICA: &str = "ERR I can only replicate a master, not a replica.";
pub const CLUSTER_REPLICATE_NOT_EMPTY: &str = "ERR To set a master the node must be empty and without assigned slots.";
pub const CLUSTER_REPLICAOF: &str = "ERR REPLICAOF not allowed in cluster mode.";
pub const CLUSTER_FAILOVER_CMD: &str = "ERR FAILOVER not allowed in cluster mode.";
pub const CLUSTER_FAILOVER_ON_MASTER: &str = "ERR You should send CLUSTER FAILOVER to a replica";
pub const CLUSTER_FAILOVER_NO_MASTER: &str = "ERR I'm a replica but my master is unknown to me";
pub const CLUSTER_FAILOVER_MASTER_DOWN: &str = "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE";
pub const CLUSTER_SETSLOT_REPLICA: &str = "ERR Please use SETSLOT only with masters.";
pub const CLUSTER_TARGET_NOT_MASTER: &str = "ERR Target node is not a master";
pub const CLUSTER_SETSLOT_SYNTAX: &str = "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP";
pub const MIGRATE_KEYS_EMPTY_KEY: &str = "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string";
pub const MIGRATE_CONNECT: &str = "IOERR error or timeout connecting to the client";
pub const MIGRATE_WRITE: &str = "IOERR error or timeout writing to target instance";
pub const MIGRATE_READ: &str = "IOERR error or timeout reading to target instance";

pub fn migrate_target_error(e: &[u8]) -> Vec<u8> {
    with_arg("ERR Target instance replied with error: ", e, "")
}

pub fn cluster_not_owner(slot: u16) -> String {
    format!("ERR I'm not the owner of hash slot {slot}")
}

pub fn cluster_already_owner(slot: u16) -> String {
    format!("ERR I'm already the owner of hash slot {slot}")
}

pub fn cluster_unknown_node_about(name: &[u8]) -> Vec<u8> {
    with_arg("ERR I don't know about node ", name, "")
}

pub fn cluster_slot_has_keys(slot: u16) -> String {
    format!("ERR Can't assign hashslot {slot} to a different node while I still hold keys for this hash slot.")
}

/// `-ASK <slot> <ip>:<port>`.
pub fn ask(slot: u16, ip: &str, port: u16) -> String {
    format!("ASK {slot} {ip}:{port}")
}

pub const SCRIPT_CLUSTER_DOWN_RO: &str = "Script attempted to execute a write command while the cluster is down and readonly";
pub const SCRIPT_CLUSTER_DOWN: &str = "Script attempted to execute a command while the cluster is down";
pub const SCRIPT_NON_LOCAL_KEY: &str = "Script attempted to access a non local key in a cluster node script";
pub const SCRIPT_CROSS_SLOT: &str = "Script attempted to access keys that do not hash to the same slot";
pub const SCRIPT_NO_CLUSTER: &str = "ERR Can not run script on cluster, 'no-cluster' flag is set.";

pub fn script_cross_slot(fullname: &str) -> String {
    format!("Command '{fullname}' in script attempted to access keys that don't hash to the same slot")
}

pub const CLUSTER_DISABLED: &str = "ERR This instance has cluster support disabled";
pub const CROSSSLOT: &str = "CROSSSLOT Keys in request don't hash to the same slot";
pub const TRYAGAIN: &str = "TRYAGAIN Multiple keys request during rehashing of slot";
pub const CLUSTERDOWN: &str = "CLUSTERDOWN The cluster is down";
pub const CLUSTERDOWN_RO: &str = "CLUSTERDOWN The cluster is down and only accepts read commands";
pub const CLUSTERDOWN_UNBOUND: &str = "CLUSTERDOWN Hash slot not served";
pub const CLUSTER_BAD_SLOT: &str = "ERR Invalid or out of range slot";
pub const CLUSTER_INVALID_SLOT: &str = "ERR Invalid slot";
pub const CLUSTER_INVALID_SLOT_OR_COUNT: &str = "ERR Invalid slot or number of keys";
pub const CLUSTER_FLUSHSLOTS_NOT_EMPTY: &str = "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.";
pub const CLUSTER_FORGET_MYSELF: &str = "ERR I tried hard but I can't forget myself...";
pub const CLUSTER_FORGET_MASTER: &str = "ERR Can't forget my master!";
pub const CLUSTER_EPOCH_OTHERS: &str = "ERR The user can assign a config epoch only when the node does not know any other node.";
pub const CLUSTER_EPOCH_NONZERO: &str = "ERR Node config epoch is already non-zero";
pub const CLUSTER_SELECT: &str = "ERR SELECT is not allowed in cluster mode";
pub const CLUSTER_MOVE: &str = "ERR MOVE is not allowed in cluster mode";
pub const CLUSTER_SWAPDB: &str = "ERR SWAPDB is not allowed in cluster mode";
pub const CLUSTER_COPY_DB: &str = "ERR Copying to another database is not allowed in cluster mode";

/// `-MOVED <slot> <ip>:<port>`.
pub fn moved(slot: u16, ip: &str, port: u16) -> String {
    format!("MOVED {slot} {ip}:{port}")
}

pub fn cluster_slot_busy(slot: usize) -> String {
    format!("ERR Slot {slot} is already busy")
}

pub fn cluster_slot_unassigned(slot: usize) -> String {
    format!("ERR Slot {slot} is already unassigned")
}

pub fn cluster_slot_twice(slot: usize) -> String {
    format!("ERR Slot {slot} specified multiple times")
}

pub fn cluster_slot_range(start: usize, end: usize) -> String {
    format!("ERR start slot number {start} is greater than end slot number {end}")
}

pub fn cluster_unknown_node(name: &[u8]) -> Vec<u8> {
    with_arg("ERR Unknown node ", name, "")
}

pub fn cluster_bad_port(which: &str, arg: &[u8]) -> Vec<u8> {
    with_arg(&format!("ERR Invalid {which} port specified: "), arg, "")
}

pub fn cluster_bad_address(ip: &[u8], port: &[u8]) -> Vec<u8> {
    let mut v = with_arg("ERR Invalid node address specified: ", ip, ":");
    v.extend_from_slice(c_str(port));
    v
}

pub fn cluster_bad_epoch(epoch: i64) -> String {
    format!("ERR Invalid config epoch specified: {epoch}")
}

pub fn cluster_save_failed(e: &std::io::Error) -> String {
    format!("ERR error saving the cluster node config: {e}")
}

/// CLIENT TRACKING's and CLIENT CACHING's refusals (Redis's clientCommand).
pub const TRACKING_ONE_REDIRECT: &str = "ERR A client can only redirect to a single other client";
pub const TRACKING_NO_REDIRECT_TARGET: &str = "ERR The client ID you want redirect to does not exist";
pub const TRACKING_PREFIX_NEEDS_BCAST: &str = "ERR PREFIX option requires BCAST mode to be enabled";
pub const TRACKING_BCAST_SWITCH: &str =
    "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.";
pub const TRACKING_OPT_BCAST: &str = "ERR OPTIN and OPTOUT are not compatible with BCAST";
pub const TRACKING_OPTIN_OPTOUT: &str = "ERR You can't specify both OPTIN mode and OPTOUT mode";
pub const TRACKING_OPT_SWITCH: &str =
    "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.";
pub const CACHING_NOT_TRACKING: &str = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled";
pub const CACHING_YES_NOT_OPTIN: &str = "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.";
pub const CACHING_NO_NOT_OPTOUT: &str = "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.";

/// Two BCAST prefixes that overlap: `p` and one the client has
/// (`existing`) or another of the same command.
pub fn tracking_prefix_overlap(p: &[u8], other: &[u8], existing: bool) -> Vec<u8> {
    let which = if existing { "an existing" } else { "another provided" };
    let mut m = b"ERR Prefix '".to_vec();
    m.extend_from_slice(c_str(p));
    m.extend_from_slice(format!("' overlaps with {which} prefix '").as_bytes());
    m.extend_from_slice(c_str(other));
    m.extend_from_slice(b"'. Prefixes for a single client must not overlap.");
    m
}

/// A RESP2 subscriber's command other than the subscribe family, PING,
/// QUIT and RESET (Redis's processCommand).
pub fn pubsub_context(cmd: &str) -> String {
    format!("ERR Can't execute '{cmd}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
}

/// SSUBSCRIBE run by EXEC (Redis refuses it to a client that may not
/// block; SUBSCRIBE and PSUBSCRIBE are let through inside MULTI).
pub const SSUBSCRIBE_DENY_BLOCKING: &str = "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client";

/// DEBUG from a connection `enable-debug-command` does not allow.
pub const DEBUG_NOT_ALLOWED: &str = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";

/// `ERR unknown subcommand or wrong number of arguments for 'x'. Try CLIENT HELP.`
pub fn subcommand_syntax(sub: &[u8], cmd: &str) -> Vec<u8> {
    with_arg(
        "ERR unknown subcommand or wrong number of arguments for '",
        c_str_128(sub),
        &format!("'. Try {} HELP.", cmd.to_ascii_uppercase()),
    )
}

/// How [`unknown_command`]'s error starts (what the AOF loader looks for in
/// a replayed command's reply).
pub const UNKNOWN_COMMAND: &str = "ERR unknown command '";

/// `ERR unknown command 'x', with args beginning with: 'a' 'b' `, built as
/// Redis builds it: each argument quoted, until 128 bytes of them are shown.
/// Without arguments it is `ERR unknown command 'x'`, as in Redis 8 (7.x
/// added the empty "with args" part).
pub fn unknown_command<'a>(name: &[u8], args: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut args = args.peekable();
    if args.peek().is_none() {
        return with_arg(UNKNOWN_COMMAND, c_str_128(name), "'");
    }
    let mut shown = Vec::new();
    for a in args {
        if shown.len() >= 128 {
            break;
        }
        let room = 128 - shown.len();
        let a = c_str(a);
        shown.push(b'\'');
        shown.extend_from_slice(&a[..a.len().min(room)]);
        shown.extend_from_slice(b"' ");
    }
    let mut m = with_arg(UNKNOWN_COMMAND, c_str_128(name), "', with args beginning with: ");
    m.extend_from_slice(&shown);
    m
}

// Scripting: EVAL, SCRIPT, and what `redis.*` functions raise inside a
// script. The latter carry no code: like Redis's luaPushError, the script
// engine gives them `ERR ` (see `script_error_text`).

/// The code an error gets when its text names none.
pub const ERR_CODE: &str = "ERR";
pub const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";
pub const NUMKEYS_TOO_MANY: &str = "ERR Number of keys can't be greater than number of args";
pub const NUMKEYS_NEGATIVE: &str = "ERR Number of keys can't be negative";
pub const SCRIPT_WRITE_BY_RO: &str = "ERR Can not execute a script with write flag using *_ro command.";
pub const SCRIPT_OOM: &str = "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'";
pub const SCRIPT_MISCONF: &str = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts.";
/// A script raised a table without an `err` string.
pub const SCRIPT_UNKNOWN_ERROR: &str = "ERR unknown error";
pub const SCRIPT_KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";
pub const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
pub const BUSY_SCRIPT: &str = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
pub const BUSY_FUNCTION: &str = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
pub const FUNCTION_NOT_FOUND: &str = "ERR Function not found";
pub const FUNCTION_BAD_NUMKEYS: &str = "ERR Bad number of keys provided";
pub const LIBRARY_NOT_FOUND: &str = "ERR Library not found";
pub const FUNCTION_FLUSH_MODE: &str = "ERR FUNCTION FLUSH only supports SYNC|ASYNC option";
pub const FUNCTION_CODE_MISSING: &str = "ERR Function code is missing";
pub const FUNCTION_LIST_NO_NAME: &str = "ERR library name argument was not given";
pub const FUNCTION_RESTORE_POLICY: &str = "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.";
pub const FUNCTION_RESTORE_PAYLOAD: &str = "ERR DUMP payload version or checksum are wrong";

/// An error of FUNCTION LOAD or RESTORE (its text, Redis's), as a reply.
pub fn function_error(text: &str) -> String {
    format!("ERR {text}")
}

pub fn function_option(arg: &[u8]) -> Vec<u8> {
    with_arg("ERR Unknown option given: ", arg, "")
}

pub fn function_list_argument(arg: &[u8]) -> Vec<u8> {
    with_arg("ERR Unknown argument ", arg, "")
}

// The texts of FUNCTION LOAD's errors (replied through `function_error`)
// and of `redis.register_function`'s (raised in Lua).
pub const LIB_NAME: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";
pub const LIB_NO_METADATA: &str = "Missing library metadata";
pub const LIB_BAD_METADATA: &str = "Invalid library metadata";
pub const LIB_NAME_TWICE: &str = "Invalid metadata value, name argument was given multiple times";
pub const LIB_NO_NAME: &str = "Library name was not given";
pub const LIB_NO_FUNCTIONS: &str = "No functions registered";
pub const LIB_FUNCTION_TWICE: &str = "Function already exists in the library";
pub const LIB_LOAD_TIMEOUT: &str = "FUNCTION LOAD timeout";
pub const REGISTER_ARGS: &str = "wrong number of arguments to redis.register_function";
pub const REGISTER_OUTSIDE_LOAD: &str = "redis.register_function can only be called on FUNCTION LOAD command";
pub const REGISTER_NOT_TABLE: &str = "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).";
pub const REGISTER_KEY_NOT_STRING: &str = "named argument key given to redis.register_function is not a string";
pub const REGISTER_NAME_NOT_STRING: &str = "function_name argument given to redis.register_function must be a string";
pub const REGISTER_DESC_NOT_STRING: &str = "description argument given to redis.register_function must be a string";
pub const REGISTER_CALLBACK: &str = "callback argument given to redis.register_function must be a function";
pub const REGISTER_FLAGS_TABLE: &str = "flags argument to redis.register_function must be a table representing function flags";
pub const REGISTER_UNKNOWN_FLAG: &str = "unknown flag given";
pub const REGISTER_UNKNOWN_ARG: &str = "unknown argument given to redis.register_function";
pub const REGISTER_NO_NAME: &str = "redis.register_function must get a function name argument";
pub const REGISTER_NO_CALLBACK: &str = "redis.register_function must get a callback argument";
pub const REGISTER_FIRST: &str = "first argument to redis.register_function must be a string";
pub const REGISTER_SECOND: &str = "second argument to redis.register_function must be a function";
pub const NOTBUSY: &str = "NOTBUSY No scripts in execution right now.";
pub const SCRIPT_FLUSH_MODE: &str = "ERR SCRIPT FLUSH only support SYNC|ASYNC option";
pub const SHEBANG_INVALID: &str = "ERR Invalid script shebang";
pub const SHEBANG_NO_ENGINE: &str = "ERR Invalid engine in script shebang";

/// `ERR Error compiling script (new function): <Lua's message>`.
pub fn script_compile(msg: &str) -> String {
    format!("ERR Error compiling script (new function): {msg}")
}

pub fn shebang_engine(engine: &[u8]) -> Vec<u8> {
    with_arg("ERR Unexpected engine in script shebang: ", engine, "")
}

pub fn shebang_flag(flag: &[u8]) -> Vec<u8> {
    with_arg("ERR Unexpected flag in script shebang: ", flag, "")
}

pub fn shebang_option(option: &[u8]) -> Vec<u8> {
    with_arg("ERR Unknown lua shebang option: ", option, "")
}

/// A script's failure as its caller sees it: the error, then where the
/// script raised it (Redis's luaCallFunction).
pub fn script_failed(msg: &[u8], sha: &str, source: &str, line: i64) -> Vec<u8> {
    let mut m = msg.to_vec();
    m.extend_from_slice(format!(" script: {sha}, on {source}:{line}.").as_bytes());
    m
}

/// A Lua error that is not a table (out of memory): Redis's wording.
pub fn script_running(sha: &str, msg: &str) -> String {
    format!("ERR Error running script {sha}, {msg:.100}")
}

/// An error text as `redis.call` raises it (Redis's luaPushErrorBuff):
/// `-CODE message` keeps its code, anything else gets `ERR`; line breaks
/// at the ends go.
pub fn script_error_text(raw: &[u8]) -> Vec<u8> {
    let (code, msg): (&[u8], &[u8]) = match raw.strip_prefix(b"-") {
        Some(rest) => match rest.iter().position(|&c| c == b' ') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (ERR_CODE.as_bytes(), rest),
        },
        None => (ERR_CODE.as_bytes(), raw),
    };
    let trim = |c: &u8| *c == b'\r' || *c == b'\n';
    let start = msg.iter().position(|c| !trim(c)).unwrap_or(msg.len());
    let end = msg.iter().rposition(|c| !trim(c)).map_or(start, |i| i + 1);
    let mut out = code.to_vec();
    out.push(b' ');
    out.extend_from_slice(&msg[start..end]);
    out
}

/// `redis.call` reached with no script running (a function kept from one).
pub const LUA_OUTSIDE_RUN: &str = "ERR redis.call and its kin can only be called while a script runs";
/// `redis.call`'s command failed inside the server (a panic, resumed after the script).
pub const LUA_COMMAND_FAILED: &str = "ERR the server failed while running the command";
pub const LUA_NO_ARGS: &str = "Please specify at least one argument for this redis lib call";
pub const LUA_BAD_ARG: &str = "Lua redis lib command arguments must be strings or integers";
pub const LUA_UNKNOWN_COMMAND: &str = "Unknown Redis command called from script";
pub const LUA_ARITY: &str = "Wrong number of args calling Redis command from script";
pub const LUA_NOSCRIPT: &str = "This Redis command is not allowed from script";
pub const LUA_WRITE_IN_RO: &str = "Write commands are not allowed from read-only scripts.";
/// A refusal inside a script: `ACL failure in script: ` and the refusal's
/// text without its `NOPERM` code (Redis's scriptVerifyACL).
pub fn script_acl(noperm: &[u8]) -> Vec<u8> {
    let text = noperm.strip_prefix(b"NOPERM ").unwrap_or(noperm);
    [b"ACL failure in script: ", text].concat()
}
pub const LUA_ARGS: &str = "wrong number of arguments";
pub const LUA_ARGS_TYPE: &str = "wrong number or type of arguments";
pub const LUA_LOG_ARGS: &str = "redis.log() requires two arguments or more.";
pub const LUA_LOG_LEVEL_TYPE: &str = "First argument must be a number (log level).";
pub const LUA_LOG_LEVEL: &str = "Invalid log level.";
pub const LUA_SETRESP_ARGS: &str = "redis.setresp() requires one argument.";
pub const LUA_SETRESP_VERSION: &str = "RESP version must be 2 or 3.";
pub const LUA_SET_REPL_ARGS: &str = "redis.set_repl() requires one argument.";
pub const LUA_SET_REPL_FLAGS: &str = "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.";
pub const LUA_ACL_CHECK_COMMAND: &str = "Invalid command passed to redis.acl_check_cmd()";

#[cfg(test)]
mod tests {
    use super::*;

    /// Error codes Redis starts a reply error with.
    const CODES: &[&str] = &[
        "ERR", "WRONGTYPE", "NOAUTH", "WRONGPASS", "EXECABORT", "NOPROTO", "DENIED", "NOPERM", "NOSCRIPT", "BUSY",
        "BUSYKEY", "LOADING", "READONLY", "OOM", "MISCONF", "CROSSSLOT", "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN",
        "NOREPLICAS", "MASTERDOWN", "NOGROUP", "UNBLOCKED", "NOTBUSY", "UNKILLABLE", "INVALIDOBJ", "TESTFAILED",
    ];

    /// The string literals in `src` (outside `//` comments and the trailing
    /// `#[cfg(test)] mod tests`, whose expected replies are the point) that
    /// start like a RESP error line, with their line numbers.
    fn error_literals(src: &str) -> Vec<(usize, String)> {
        let code = src.split("#[cfg(test)]\nmod tests").next().unwrap_or(src);
        let mut found = Vec::new();
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or(line);
            // Every other quote opens a literal; escaped quotes are rare
            // enough in the server's code to only cost a false miss.
            for lit in line.split('"').skip(1).step_by(2) {
                let lit = lit.strip_prefix('-').unwrap_or(lit);
                let word = lit.split(' ').next().unwrap_or(lit);
                if CODES.contains(&word) {
                    found.push((n + 1, lit.to_string()));
                }
            }
        }
        found
    }

    #[test]
    fn error_literal_scan_sees_them() {
        let src = "x.error(\"ERR a\"); y(\"-WRONGTYPE b\", \"ok\"); // \"ERR c\"\nz(\"NOAUTH\")\n#[cfg(test)]\nmod tests { \"ERR d\" }";
        assert_eq!(error_literals(src), vec![(1, "ERR a".into()), (1, "WRONGTYPE b".into()), (2, "NOAUTH".into())]);
        assert!(error_literals("\"ERRORS\" \"SERVER_ERROR x\" \"error\"").is_empty());
    }

    /// Every reply error is written here, once: a literal that starts like
    /// one anywhere else in the server's source (this crate's, the
    /// configuration's below it and the process's above it) fails this test.
    #[test]
    fn no_error_lines_outside_this_module() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        for krate in ["tern-config", "tern-commands", "tern-server"] {
            tern_layering::rust_files(&root.join(krate).join("src"), &mut files);
        }
        assert!(files.len() > 10, "found only {files:?}");
        let mut stray = Vec::new();
        for f in files.iter().filter(|f| !f.ends_with("errors.rs")) {
            let src = std::fs::read_to_string(f).expect("read source");
            for (line, lit) in error_literals(&src) {
                stray.push(format!("{}:{line}: \"{lit}\"", f.strip_prefix(&root).unwrap_or(f).display()));
            }
        }
        assert!(stray.is_empty(), "error lines belong in errors.rs:\n{}", stray.join("\n"));
    }

    #[test]
    fn unknown_command_format() {
        let args: Vec<&[u8]> = vec![b"a", b"b"];
        assert_eq!(unknown_command(b"foo", args.into_iter()), b"ERR unknown command 'foo', with args beginning with: 'a' 'b' ");
        assert_eq!(unknown_command(b"foo", std::iter::empty()), b"ERR unknown command 'foo'");
    }

    /// Redis's bytes for these (redis-server 7.0 and 8.4 agree): invalid
    /// UTF-8 echoed as sent, a NUL ends an argument, 128 bytes at most.
    #[test]
    fn unknown_command_echoes_the_bytes_as_redis() {
        let args: Vec<&[u8]> = vec![b"a\xfe"];
        assert_eq!(unknown_command(b"f\xffo\xc3", args.into_iter()), b"ERR unknown command 'f\xffo\xc3', with args beginning with: 'a\xfe' ");
        let args: Vec<&[u8]> = vec![b"a\x00b", b"c"];
        assert_eq!(unknown_command(b"fo\x00o", args.into_iter()), b"ERR unknown command 'fo', with args beginning with: 'a' 'c' ");
        let long = [b'z'; 100];
        let args: Vec<&[u8]> = vec![&long, &long, b"v"];
        let m = unknown_command(b"y", args.into_iter());
        assert!(m.ends_with(&[&long[..], b"' '", &long[..25], b"' "].concat()));
        assert_eq!(unknown_subcommand(b"f\xffoo\x00x", "client"), b"ERR unknown subcommand 'f\xffoo'. Try CLIENT HELP.");
    }
}

// ---------------------------------------------------------------- replication

pub const SYNC_PENDING_OUTPUT: &str = "ERR SYNC and PSYNC are invalid with pending output";
pub const REPLCONF_FILTER_MISSING: &str = "ERR Missing rdb-filter-only values";
pub const READONLY_REPLICA: &str = "READONLY You can't write against a read only replica.";
pub const LOADING: &str = "LOADING Redis is loading the dataset in memory";
pub const NOREPLICAS: &str = "NOREPLICAS Not enough good replicas to write.";
pub const MASTERDOWN: &str = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
pub const NOMASTERLINK: &str = "NOMASTERLINK Can't SYNC while not connected with my master";
pub const INVALID_MASTER_PORT: &str = "ERR Invalid master port";
pub const REPLICAOF_FROM_REPLICA: &str = "ERR Command is not valid when client is a replica.";
pub const WAIT_ON_REPLICA: &str = "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.";
pub const WAITAOF_ON_REPLICA: &str = "ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas are just local and are not propagated.";
pub const WAITAOF_NO_AOF: &str = "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.";
pub const PSYNC_FAILOVER_TO_MASTER: &str = "ERR PSYNC FAILOVER can't be sent to a master.";
pub const PSYNC_FAILOVER_REPLID: &str = "ERR PSYNC FAILOVER replid must match my replid.";
pub const NO_FAILOVER: &str = "ERR No failover in progress.";
pub const FAILOVER_TIMEOUT: &str = "ERR FAILOVER timeout must be greater than 0";
pub const FAILOVER_IN_PROGRESS: &str = "ERR FAILOVER already in progress.";
pub const FAILOVER_ON_REPLICA: &str = "ERR FAILOVER is not valid when server is a replica.";
pub const FAILOVER_NO_REPLICAS: &str = "ERR FAILOVER requires connected replicas.";
pub const FAILOVER_FORCE: &str = "ERR FAILOVER with force option requires both a timeout and target HOST and IP.";
pub const FAILOVER_NOT_A_REPLICA: &str = "ERR FAILOVER target HOST and PORT is not a replica.";
pub const FAILOVER_NOT_ONLINE: &str = "ERR FAILOVER target replica is not online.";
pub const REPLICAOF_DURING_FAILOVER: &str = "ERR REPLICAOF not allowed while failing over.";
pub const SYNC_DURING_FAILOVER: &str = "NOMASTERLINK Can't SYNC while failing over";
pub const FILTERED_NEEDS_EOF: &str = "ERR Filtered replica requires EOF capability";
/// REPLCONF rdb-only's and WAITAOF numlocal's range (Redis's
/// getRangeLongFromObjectOrReply, 0 to 1).
pub const RANGE_0_1: &str = "ERR value is out of range, value must between 0 and 1";

/// A master's error reply to a replica's PING that only asks it to
/// authenticate (the replica goes on, with AUTH), as Redis's replica reads it.
pub fn asks_for_auth(reply: &str) -> bool {
    ["-NOAUTH", "-NOPERM", "-ERR operation not permitted"].iter().any(|p| reply.starts_with(p))
}

/// REPLCONF with an option it does not know.
pub fn replconf_option(opt: &[u8]) -> Vec<u8> {
    with_arg("ERR Unrecognized REPLCONF option: ", opt, "")
}

/// REPLCONF ip-address of `len` bytes (Redis takes fewer than 256).
pub fn replconf_ip_too_long(len: usize) -> String {
    format!("ERR REPLCONF ip-address provided by replica instance is too long: {len} bytes")
}

/// REPLCONF rdb-filter-only with a filter other than `functions`.
pub fn replconf_filter(f: &[u8]) -> Vec<u8> {
    with_arg("ERR Unsupported rdb-filter-only option: ", f, "")
}
