//! The ACL check of a command, as dispatch and EXEC run it: the client's
//! user re-read when the registry has changed (`crate::acl`), then the
//! command and each key the key specs find, with the access the key's
//! flags ask for (ACCESS: read; INSERT, DELETE, UPDATE: write), so the
//! keys are found by the same interpreter that locks them.

use smallvec::SmallVec;
use tern_resp::Args;

use super::keyspec::{KeyFlags, ACCESS, DELETE, INSERT, UPDATE};
use super::table::{flags, Channels, Cmd, CommandTable};
use crate::acl::{self, log::Context, user, ChannelUse, Denied, KeyUse};
use crate::client::Client;
use crate::errors;
use crate::server::Server;

/// The access a key with these spec flags needs.
fn need(f: KeyFlags) -> u8 {
    let mut n = 0;
    if f & ACCESS != 0 {
        n |= user::READ;
    }
    if f & (INSERT | DELETE | UPDATE) != 0 {
        n |= user::WRITE;
    }
    n
}

/// May the client's user run `cmd` with `args`? The refusal and the
/// argument it is about.
#[inline]
pub fn check(u: &acl::User, cmd: &Cmd, args: Args<'_>) -> Result<(), (Denied, usize)> {
    // The common case, one selector allowing the command and its keys, is
    // answered in one pass over the keys with nothing collected; anything
    // else (a refusal to report, selectors, first arguments, keys found by
    // a finder) takes the general path below.
    if let [s] = u.selectors.as_slice() {
        if root_allows(s, cmd, args) {
            return Ok(());
        }
    }
    check_all(u, cmd, args)
}

/// Does the one selector `s` allow `cmd` on its keys? False also when it
/// cannot tell quickly.
#[inline(always)]
fn root_allows(s: &user::Selector, cmd: &Cmd, args: Args<'_>) -> bool {
    if !s.allows_command(cmd.id, None) && !cmd.has(flags::NO_AUTH) {
        return false;
    }
    if cmd.spec.channels != Channels::None && !s.allchannels {
        return false;
    }
    if s.allkeys {
        return true;
    }
    let flags_of = cmd.spec.key_flags_of;
    // One plain range (GET, SET, MGET ...; never a command with a key
    // finder): a counter over the arguments.
    if let Some(r) = cmd.lone() {
        let Ok(span) = r.span(args.len()) else { return false };
        let Some((mut pos, last)) = span else { return true };
        while pos <= last {
            let f = flags_of.map_or(r.flags(), |f| f(args, pos));
            if !s.allows_key_quick(args.get(pos), need(f)) {
                return false;
            }
            pos += r.step();
        }
        return true;
    }
    if cmd.spec.key_finder.is_some() {
        return false;
    }
    let mut walk = cmd.keys(args);
    for k in walk.by_ref() {
        let f = flags_of.map_or(k.flags, |f| f(args, k.pos));
        if !s.allows_key(args.get(k.pos), need(f)) {
            return false;
        }
    }
    !walk.invalid()
}

/// [`check`] over every selector, with Redis's choice of the refusal.
fn check_all(u: &acl::User, cmd: &Cmd, args: Args<'_>) -> Result<(), (Denied, usize)> {
    let first = args.try_get(if cmd.parent.is_some() { 2 } else { 1 });
    let mut keys: SmallVec<[KeyUse<'_>; 8]> = SmallVec::new();
    if !u.selectors.iter().all(|s| s.allkeys) {
        let ck = cmd.command_keys();
        if ck.finder.is_some() || ck.flags_of.is_some() {
            for k in ck.getkeys(args).unwrap_or_default() {
                keys.push((args.get(k.pos), need(k.flags), k.pos));
            }
        } else {
            let mut walk = cmd.keys(args);
            for k in walk.by_ref() {
                keys.push((args.get(k.pos), need(k.flags), k.pos));
            }
            if walk.invalid() {
                keys.clear();
            }
        }
    }
    let channels: SmallVec<[ChannelUse<'_>; 4]> = cmd.spec.channels.of(args).map(|(pos, pattern)| (args.get(pos), pattern, pos)).collect();
    acl::check(u, cmd.id, cmd.has(flags::NO_AUTH), first, &keys, &channels)
}

/// Where a refused command was: run at once, queued by MULTI, or run by
/// EXEC (of so many queued commands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Toplevel,
    Queued,
    Exec(usize),
    /// `redis.call` inside a script run by this command (its id).
    Script(usize),
}

/// Records a refusal (ACL LOG, INFO's counters) and returns the reply's
/// error line.
#[allow(clippy::too_many_arguments)]
pub fn refused(srv: &Server, commands: &CommandTable, client: &Client, cmd: &Cmd, args: Args<'_>, why: (Denied, usize), now: u64, place: Place) -> Vec<u8> {
    let (reason, pos) = why;
    let object: &[u8] = match reason {
        Denied::Command => cmd.fullname.as_bytes(),
        _ => args.get(pos),
    };
    let ctx = match place {
        Place::Toplevel => Context::Toplevel,
        Place::Script(_) => Context::Lua,
        Place::Queued | Place::Exec(_) => Context::Multi,
    };
    let (running, exec_of) = match place {
        Place::Exec(n) => ("exec", Some(n)),
        Place::Script(id) => (commands.get(id).fullname.as_str(), None),
        _ => (cmd.fullname.as_str(), None),
    };
    let info = super::client::client_info(commands, now, &client.shared, running, exec_of);
    srv.acl.record(reason, ctx, object, &client.user.name, info, now, log_max(srv));
    match reason {
        Denied::Command | Denied::Auth => errors::noperm_command(&client.user.name, &cmd.fullname),
        Denied::Key => errors::NOPERM_KEY.as_bytes().to_vec(),
        Denied::Channel => errors::NOPERM_CHANNEL.as_bytes().to_vec(),
    }
}

/// Logs a failed authentication as `user` (ACL LOG `auth`, its object
/// the command's name as sent) and counts it.
#[allow(clippy::too_many_arguments)]
pub fn log_auth(srv: &Server, commands: &CommandTable, client: &Client, ctx: Context, name_sent: &[u8], user: &[u8], cmd: &str, now: u64) {
    let info = super::client::client_info(commands, now, &client.shared, cmd, None);
    srv.acl.record(Denied::Auth, ctx, name_sent, user, info, now, log_max(srv));
}

/// `acllog-max-len`.
pub fn log_max(srv: &Server) -> usize {
    usize::try_from(srv.config.read().acllog_max_len).unwrap_or(usize::MAX)
}
