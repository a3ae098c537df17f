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
    /// The stage of `cmd`'s `n` located keys, in groups of `size` (0: off),
    /// its value stage gated when `gate` (`prefetch-value-gate`).
    pub fn new(cmd: &Cmd, size: usize, n: usize, gate: bool) -> KeyStage {
        match cmd.lone() {
            Some(r) => {
                let reach = if r.flags() & ACCESS != 0 { Reach::Value } else { Reach::Entry };
                KeyStage { st: Stager::new(size, reach, n).value_gate(gate), first: r.first(), step: r.step() }
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

/// Whether a worker's batches run the prefetch stages, chosen by measuring
/// them (`prefetch-tune`). Where the data misses the caches the stages
/// pay many times over; where the lines they ask for are already cached
/// (small data, or a few hot keys), their own work (hashing ahead, a
/// shard lock per planned key and stage) is all they add. Used memory
/// tells the first case
/// ([`Server::prefetch_batch`](crate::server::Server::prefetch_batch));
/// this tells the rest, from the time the worker's batches take.
///
/// One batch in [`TRIAL_EVERY`] runs the other way, spread evenly, so that
/// both modes are measured over the same stretch of the workload. After
/// [`WINDOW`] batches, the mode whose commands took less time each is
/// kept; the other replaces it only when it was [`MARGIN`] per cent faster
/// in two windows in a row, so noise and a workload's changing phases
/// (a table growing) do not flip it back and forth. The time is the
/// clock's own readings at the batch's start and after its last command:
/// nothing more is read. With the kept mode the right one, the trial costs
/// 1/[`TRIAL_EVERY`] of the batches run the slower way.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tuner {
    /// The kept mode is without the stages.
    off: bool,
    /// Batches so far in this window.
    batches: u32,
    /// The trial mode was faster in the last window.
    leaning: bool,
    /// Nanoseconds and commands in the kept mode, then the trial one.
    spent: [(u64, u64); 2],
    /// Mode switches made.
    switches: u64,
    /// The size the batch being run has (`None` outside a worker's batch:
    /// the configured one).
    pub current: Option<usize>,
    /// The batch being run is measured: both modes were open to it.
    timed: bool,
}

/// One batch in this many is a trial of the other mode.
pub const TRIAL_EVERY: u32 = 256;
/// Batches per window.
pub const WINDOW: u32 = 256 * TRIAL_EVERY;
/// How much faster (per cent per command) the trial must be to be kept.
pub const MARGIN: u64 = 3;

impl Tuner {
    fn trial(&self) -> bool {
        self.batches % TRIAL_EVERY == TRIAL_EVERY - 1
    }

    /// The size the next batch runs with: `configured` (what
    /// [`Server::prefetch_batch`](crate::server::Server::prefetch_batch)
    /// says), or 0 where measuring says so.
    #[inline]
    pub fn begin(&mut self, configured: usize, tune: bool) -> usize {
        self.timed = configured > 0 && tune;
        let n = if self.timed && (self.off != self.trial()) { 0 } else { configured };
        self.current = Some(n);
        n
    }

    /// Counts a batch of `commands` that took `ns` (its mode is the one
    /// [`Tuner::begin`] gave). Batches with no command are not counted, nor
    /// those the settings ran one way only (stages off by configuration or
    /// by `prefetch-min-memory`, or not tuning).
    #[inline]
    pub fn end(&mut self, ns: u64, commands: u64) {
        self.current = None;
        if commands == 0 || !self.timed {
            return;
        }
        let trial = usize::from(self.trial());
        self.spent[trial].0 += ns;
        self.spent[trial].1 += commands;
        self.batches += 1;
        if self.batches == WINDOW {
            self.decide();
        }
    }

    #[cold]
    fn decide(&mut self) {
        self.batches = 0;
        let [(kept_ns, kept_n), (trial_ns, trial_n)] = std::mem::take(&mut self.spent);
        // trial / trial_n < kept / kept_n * (100 - MARGIN) / 100, in integers.
        let faster = kept_n > 0 && trial_n > 0 && u128::from(trial_ns) * u128::from(kept_n) * 100 < u128::from(kept_ns) * u128::from(trial_n) * u128::from(100 - MARGIN);
        if faster && self.leaning {
            self.off = !self.off;
            self.switches += 1;
            self.leaning = false;
        } else {
            self.leaning = faster;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `windows` windows of batches of 10 commands, each taking
    /// `on_ns` or `off_ns` per command by the size it was given; returns
    /// the batches run without the stages.
    fn run(t: &mut Tuner, windows: u32, on_ns: u64, off_ns: u64) -> u32 {
        let mut off = 0;
        for _ in 0..windows * WINDOW {
            let n = t.begin(16, true);
            off += u32::from(n == 0);
            t.end(10 * if n == 0 { off_ns } else { on_ns }, 10);
        }
        off
    }

    /// The stages stay while they are faster, one batch in TRIAL_EVERY
    /// trying without; the other mode is kept only after it won two
    /// windows in a row by the margin, and the tuner comes back when the
    /// workload changes back.
    #[test]
    fn tuner_keeps_the_faster_mode() {
        let mut t = Tuner::default();
        assert_eq!(run(&mut t, 3, 100, 150), 3 * WINDOW / TRIAL_EVERY);
        assert_eq!((t.off, t.switches), (false, 0));
        // Faster by less than the margin: no change.
        run(&mut t, 3, 100, 98);
        assert_eq!((t.off, t.switches), (false, 0));
        // One window won is not enough.
        run(&mut t, 1, 100, 90);
        assert!(!t.off);
        run(&mut t, 1, 100, 100);
        assert!(!t.off);
        run(&mut t, 2, 100, 90);
        assert_eq!((t.off, t.switches), (true, 1));
        // Now one batch in TRIAL_EVERY runs the stages.
        assert_eq!(run(&mut t, 1, 100, 90), WINDOW - WINDOW / TRIAL_EVERY);
        run(&mut t, 2, 50, 90);
        assert_eq!((t.off, t.switches), (false, 2));
    }

    /// Off by configuration means off; not tuning means the configured
    /// size every batch; neither, nor batches without a command, is
    /// counted.
    #[test]
    fn tuner_obeys_the_settings() {
        let mut t = Tuner::default();
        for _ in 0..3 * WINDOW {
            assert_eq!(t.begin(0, true), 0);
            assert_eq!(t.current, Some(0));
            t.end(10, 1);
            assert_eq!(t.current, None);
        }
        for _ in 0..3 * WINDOW {
            assert_eq!(t.begin(8, false), 8);
            t.end(1_000_000, 1);
        }
        assert_eq!((t.switches, t.batches), (0, 0));
        t.begin(8, true);
        t.end(0, 0);
        assert_eq!(t.batches, 0);
        t.begin(8, true);
        t.end(10, 1);
        assert_eq!(t.batches, 1);
    }
}
