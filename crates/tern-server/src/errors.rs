//! Every error line Tern sends that more than one command uses, written
//! once, matching Redis byte for byte (without the leading `-` and CRLF).

pub const SYNTAX: &str = "ERR syntax error";
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub const NOT_FLOAT: &str = "ERR value is not a valid float";
pub const OVERFLOW: &str = "ERR increment or decrement would overflow";
pub const NO_SUCH_KEY: &str = "ERR no such key";
pub const NOAUTH: &str = "NOAUTH Authentication required.";
/// A key longer than an item can hold (Redis has no such limit; reaching it
/// needs proto-max-bulk-len and client-query-buffer-limit above 1gb).
pub const KEY_TOO_LONG: &str = "ERR key is too long (Tern stores keys of at most 1073741823 bytes)";
pub const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
pub const DB_INDEX_OUT_OF_RANGE: &str = "ERR DB index is out of range";
pub const INVALID_EXPIRE: &str = "ERR invalid expire time in '{}' command";
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

/// CONFIG SET naming no directive Tern knows.
pub fn config_set_unknown(name: &[u8]) -> Vec<u8> {
    with_arg("ERR Unknown option or number of arguments for CONFIG SET - '", name, "'")
}

/// CONFIG SET refusing the pair of directive `name` (as the client spelled
/// it) for the reason `why` (the value's, or "can't set immutable config").
pub fn config_set_failed(name: &[u8], why: &str) -> Vec<u8> {
    with_arg("ERR CONFIG SET failed (possibly related to argument '", name, &format!("') - {why}"))
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

/// `ERR unknown command 'x', with args beginning with: 'a' 'b' `, built as
/// Redis builds it: each argument quoted, until 128 bytes of them are shown.
/// Without arguments it is `ERR unknown command 'x'`, as in Redis 8 (7.x
/// added the empty "with args" part).
pub fn unknown_command<'a>(name: &[u8], args: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut args = args.peekable();
    if args.peek().is_none() {
        return with_arg("ERR unknown command '", c_str_128(name), "'");
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
    let mut m = with_arg("ERR unknown command '", c_str_128(name), "', with args beginning with: ");
    m.extend_from_slice(&shown);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

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
