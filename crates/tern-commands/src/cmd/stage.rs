//! The staged lookups of one command's keys: how a multi-key command
//! (MGET, MSET, DEL, EXISTS, ...) runs its keys through the one
//! staged-lookup engine (`tern_table::stage`, with the keyspace's sources
//! in `tern_store::stage`) from its key spec alone, with its shards held.
//! The pipeline planner above the commands (`prefetch.rs`) stages the keys
//! of several commands before they run; its module doc draws both.

use tern_resp::Args;
use tern_store::stage::Locked;
use tern_store::{Loc, LockSet, Reach, Stager};

use super::keyspec::ACCESS;
use super::table::Cmd;

/// The staged lookups of one command's keys (`Ctx::locs`, whose shards the
/// command holds), in groups of `prefetch-batch-max-size`: what a
/// multi-key command gets from its key spec alone. Its keys' positions
/// come from the spec's range (MGET, MSET, DEL, ...; a command with other
/// specs stages nothing), how far they are staged from its flags: `ACCESS`
/// (the value is read, MGET) reaches the value, others the entry.
pub struct KeyStage {
    st: Stager,
    first: usize,
    step: usize,
}

impl KeyStage {
    /// The stage of `cmd`'s `n` located keys, in groups of `size` (0: off).
    pub fn new(cmd: &Cmd, size: usize, n: usize) -> KeyStage {
        match cmd.lone() {
            Some(r) => {
                let reach = if r.flags() & ACCESS != 0 { Reach::Value } else { Reach::Entry };
                KeyStage { st: Stager::new(size, reach, n), first: r.first(), step: r.step() }
            }
            None => KeyStage { st: Stager::new(0, Reach::Entry, n), first: 0, step: 0 },
        }
    }

    /// Runs what must be asked for before key `i` (of `locs`, the command
    /// line `args`) runs; call it for every key, in order.
    #[inline]
    pub fn before(&mut self, locks: &mut LockSet<'_>, locs: &[Loc], args: Args<'_>, i: usize) {
        if !self.st.is_off() {
            let (first, step) = (self.first, self.step);
            self.st.before(&mut Locked { locks, locs, key: |j| args.get(first + j * step) }, i);
        }
    }
}
