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

/// `ERR wrong number of arguments for 'get' command`.
pub fn arity(fullname: &str) -> String {
    format!("ERR wrong number of arguments for '{fullname}' command")
}

/// `ERR invalid expire time in 'set' command`.
pub fn invalid_expire(cmd: &str) -> String {
    format!("ERR invalid expire time in '{cmd}' command")
}

/// `ERR unknown subcommand 'x'. Try CLIENT HELP.`
pub fn unknown_subcommand(sub: &[u8], cmd: &str) -> String {
    let sub = String::from_utf8_lossy(&sub[..sub.len().min(128)]).into_owned();
    format!("ERR unknown subcommand '{sub}'. Try {} HELP.", cmd.to_ascii_uppercase())
}

/// `ERR unknown command 'x', with args beginning with: 'a' 'b' `, built as
/// Redis builds it: each argument quoted, until 128 bytes of them are shown.
pub fn unknown_command<'a>(name: &[u8], args: impl Iterator<Item = &'a [u8]>) -> String {
    let mut shown = String::new();
    for a in args {
        if shown.len() >= 128 {
            break;
        }
        let room = 128 - shown.len();
        let a = String::from_utf8_lossy(&a[..a.len().min(room)]).into_owned();
        shown.push('\'');
        shown.push_str(&a);
        shown.push_str("' ");
    }
    let name = String::from_utf8_lossy(&name[..name.len().min(128)]).into_owned();
    format!("ERR unknown command '{name}', with args beginning with: {shown}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_command_format() {
        let args: Vec<&[u8]> = vec![b"a", b"b"];
        assert_eq!(unknown_command(b"foo", args.into_iter()), "ERR unknown command 'foo', with args beginning with: 'a' 'b' ");
        assert_eq!(unknown_command(b"foo", std::iter::empty()), "ERR unknown command 'foo', with args beginning with: ");
    }
}
