//! The staged-lookup engine: the one place that decides when the cache
//! misses of many lookups are asked for, whatever is being looked up
//! (a shard's keys under their locks, keys of a pipeline under locks that
//! are free, a large hash's fields, [`crate::Table::get_batch`]).
//!
//! A lookup costs up to three misses, one behind the other: the bucket,
//! the item the bucket points at, and for readers of the bytes the value
//! (when kept apart from the item, or longer than the lines stage 2 asked
//! for). Issued one key after another they add up; issued back to back
//! for a group of keys they overlap. The engine walks keys in groups of
//! `size`, each stage a fixed number of groups ahead of the group that
//! runs (for [`Reach::Value`]; for [`Reach::Entry`] buckets two groups
//! ahead, items one, no value stage):
//!
//! ```text
//!   buckets(G0..G3) items(G0..G2) values(G0, G1)  run G0
//!   buckets(G4)     items(G3)     values(G2)      run G1
//!   ...
//! ```
//!
//! where items(G) first reads all of G's buckets ([`Lookups::item`]) and
//! then asks for all of their items back to back: a prefetch whose page is
//! not in the TLB holds up the instructions behind it until its page walk
//! ends, so prefetches issued close together keep several walks going.
//!
//! Stage 3 is gated ([`ValueGate`]): after a run of keys whose values lay
//! within the lines stage 2 asked for, it samples one key in a few until
//! one has more to ask for.
//!
//! What a stage touches is the caller's ([`Lookups`]); the engine only
//! orders it. Item addresses leave the table only as [`ItemHint`]s, which
//! can do nothing but be prefetched. Everything here is a hint: the
//! caller's results and their order are those of running the keys one by
//! one, and with `size` 0 (prefetching off) or a single key nothing is
//! staged at all.

use std::ops::Range;

/// The address of an item a bucket points at, found by stage 2 for
/// [`ItemHint::prefetch`]: possibly another key's item, possibly stale
/// once the table's lock is let go. It is never dereferenced outside the
/// table, so a wrong one costs one wasted prefetch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemHint {
    pub(crate) p: *const u8,
    /// Where the item's key starts (its table's metadata size places it).
    pub(crate) key_at: usize,
}

impl ItemHint {
    /// No item (an empty bucket, or a shard whose lock was busy).
    pub const NONE: ItemHint = ItemHint { p: std::ptr::null(), key_at: 0 };

    /// An entry a lookup outside the table reads (a sorted set's slab
    /// slot), to be asked for like an item whose key starts at its first
    /// byte. As any hint it is only prefetched, never dereferenced.
    pub fn of(p: *const u8) -> ItemHint {
        ItemHint { p, key_at: 0 }
    }

    /// True for [`ItemHint::NONE`].
    pub fn is_none(self) -> bool {
        self.p.is_null()
    }

    /// Asks for the item (its first line and its key's last byte with the
    /// 8 bytes after it) whose key is `key_len` bytes long, and for its
    /// lines up to `span` bytes from its start (at most four lines in all).
    #[inline(always)]
    pub fn prefetch(self, key_len: usize, span: usize) {
        let p = self.p;
        if p.is_null() {
            return;
        }
        crate::prefetch(p);
        // The key's last byte (and the 8 bytes after it: deadline or inline
        // value), always: a branch on whether it crosses a line would
        // mispredict half the time.
        crate::prefetch(p.wrapping_add(self.key_at + key_len + 8));
        let mut off = 64;
        while off < span.min(256) {
            crate::prefetch(p.wrapping_add(off));
            off += 64;
        }
    }
}

/// Bytes of an item stage 2 asks for when the value is wanted too: two
/// cache lines, the second being where a value of more than a few dozen
/// bytes kept in the item continues.
pub const ITEM_PREFETCH_SPAN: usize = 128;

/// Items per run of back-to-back item prefetches in stage 2.
const STAGE2_RUN: usize = 16;

/// How far a lookup's keys are prefetched: what the caller reads of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// The entry only (EXISTS, DEL, MSET): bucket and item.
    Entry,
    /// The value's bytes too (MGET, HMGET, memcached `get`): bucket, item
    /// with [`ITEM_PREFETCH_SPAN`] bytes, then [`Lookups::value`].
    Value,
}

/// What each stage does for key `i` of a staged walk. Only hints: none of
/// these may change anything the lookups will read.
pub trait Lookups {
    /// Stage 1: asks for key `i`'s bucket.
    fn bucket(&mut self, i: usize);
    /// Stage 2a: reads key `i`'s bucket (asked for by stage 1) and returns
    /// the item it points at, [`ItemHint::NONE`] for none.
    fn item(&mut self, i: usize) -> ItemHint;
    /// Key `i`'s length in bytes.
    fn key_len(&self, i: usize) -> usize;
    /// Whether key `i`'s value is read (stage 2 span and stage 3); only
    /// asked under [`Reach::Value`].
    fn reads(&self, _i: usize) -> bool {
        true
    }
    /// Stage 3, under [`Reach::Value`] for keys that [`Lookups::reads`]:
    /// reads key `i`'s item (asked for by stage 2) and asks for the rest of
    /// its value. True when that was more than stage 2 asked for (see
    /// [`ValueGate`]).
    fn value(&mut self, _i: usize) -> bool {
        false
    }
}

/// Stage 3 after a run of keys it had nothing to add for: only one key in
/// [`GATE_SAMPLE`] is still staged. A value kept in its item within the
/// lines stage 2 asked for ([`ITEM_PREFETCH_SPAN`]: 100-byte strings) needs
/// no third stage, yet finding that out is a second probe of the bucket and
/// a read of the item, a wait on its miss one group early; with such values
/// throughout, the stage is all cost. A staged key that had more to ask for
/// opens the gate again.
#[derive(Clone, Copy, Debug)]
pub struct ValueGate {
    on: bool,
    /// Keys in a row whose stage 3 added nothing.
    idle: u8,
    /// Keys still to pass over before the next sample.
    skip: u8,
}

/// Keys in a row with nothing to add before stage 3 is gated.
pub const GATE_AFTER: u8 = 4;
/// While gated, one key in this many still goes through stage 3.
pub const GATE_SAMPLE: u8 = 8;

impl ValueGate {
    /// A gate (`on`), or every key through stage 3 (`!on`,
    /// `prefetch-value-gate no`).
    pub fn new(on: bool) -> ValueGate {
        ValueGate { on, idle: 0, skip: 0 }
    }

    /// Whether the next key goes through stage 3.
    #[inline]
    fn pass(&mut self) -> bool {
        if self.skip == 0 {
            return true;
        }
        self.skip -= 1;
        false
    }

    /// What a key's stage 3 did: `more` when it asked for lines of its own.
    #[inline]
    fn saw(&mut self, more: bool) {
        if more || !self.on {
            self.idle = 0;
            return;
        }
        self.idle = self.idle.saturating_add(1);
        if self.idle >= GATE_AFTER {
            self.skip = GATE_SAMPLE - 1;
        }
    }
}

/// The engine's state over `n` keys: call [`Stager::before`] for every
/// key, in order, just before running it.
#[derive(Clone, Debug)]
pub struct Stager {
    size: usize,
    reach: Reach,
    n: usize,
    /// The first key of the next group to reach `before`.
    next_start: usize,
    /// The next group each stage runs on.
    next: [usize; 3],
    gate: ValueGate,
}

impl Stager {
    /// Stages `n` keys in groups of `size` (0: nothing staged; one key:
    /// nothing to overlap, nothing staged).
    pub fn new(size: usize, reach: Reach, n: usize) -> Self {
        let size = if n < 2 { 0 } else { size };
        Stager { size, reach, n, next_start: 0, next: [0; 3], gate: ValueGate::new(true) }
    }

    /// Gates stage 3 ([`ValueGate`], the default) or not.
    pub fn value_gate(mut self, on: bool) -> Self {
        self.gate = ValueGate::new(on);
        self
    }

    /// True when this walk stages nothing.
    pub fn is_off(&self) -> bool {
        self.size == 0
    }

    /// Runs what must be asked for before key `i` runs.
    #[inline]
    pub fn before<L: Lookups + ?Sized>(&mut self, src: &mut L, i: usize) {
        if self.size != 0 && i == self.next_start {
            self.next_start += self.size;
            self.advance(src, i / self.size);
        }
    }

    fn advance<L: Lookups + ?Sized>(&mut self, src: &mut L, g: usize) {
        let [s1, s2, s3] = self.due(g);
        for grp in s1 {
            for i in self.range(grp) {
                src.bucket(i);
            }
        }
        for grp in s2 {
            items(src, self.range(grp), self.reach);
        }
        for grp in s3 {
            values(src, self.range(grp), &mut self.gate);
        }
    }

    /// The groups each stage has still to run on before group `g` runs
    /// (stage 3 only for `Reach::Value`); marks them done.
    fn due(&mut self, g: usize) -> [Range<usize>; 3] {
        let last = self.n.div_ceil(self.size) - 1;
        let value = self.reach == Reach::Value;
        let ahead = if value { [3, 2, 1] } else { [2, 1, 0] };
        let stages = if value { 3 } else { 2 };
        let mut due = [0..0, 0..0, 0..0];
        for s in 0..stages {
            let end = (g + ahead[s]).min(last) + 1;
            if self.next[s] < end {
                due[s] = self.next[s]..end;
                self.next[s] = end;
            }
        }
        due
    }

    fn range(&self, g: usize) -> Range<usize> {
        g * self.size..((g + 1) * self.size).min(self.n)
    }
}

/// Stages 2 and 3 of keys `0..n` at once, for a batch whose buckets were
/// asked for already (as they were found) and whose keys run right after:
/// the cross-command pipeline stage. Stage 3 is gated when `gate` is.
pub fn items_and_values<L: Lookups + ?Sized>(src: &mut L, n: usize, reach: Reach, gate: bool) {
    items(src, 0..n, reach);
    if reach == Reach::Value {
        values(src, 0..n, &mut ValueGate::new(gate));
    }
}

/// Stage 2 over `r`: every item found first, then all asked for back to
/// back, so that their page walks overlap.
#[inline]
fn items<L: Lookups + ?Sized>(src: &mut L, r: Range<usize>, reach: Reach) {
    for start in r.clone().step_by(STAGE2_RUN) {
        let run = start..(start + STAGE2_RUN).min(r.end);
        let mut hs = [ItemHint::NONE; STAGE2_RUN];
        for (h, i) in hs.iter_mut().zip(run.clone()) {
            *h = src.item(i);
        }
        for (&h, i) in hs.iter().zip(run) {
            let span = if reach == Reach::Value && src.reads(i) { ITEM_PREFETCH_SPAN } else { 0 };
            h.prefetch(src.key_len(i), span);
        }
    }
}

/// Stage 3 over `r`: a value kept apart from its item (grown in place,
/// shared, large) is a third miss; one kept in the item may span more
/// lines than stage 2 asked for. Keys `gate` passes over skip it.
#[inline]
fn values<L: Lookups + ?Sized>(src: &mut L, r: Range<usize>, gate: &mut ValueGate) {
    for i in r {
        if src.reads(i) && gate.pass() {
            let more = src.value(i);
            gate.saw(more);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `Stager::due` over a command of `n` keys in groups of `size`:
    /// per stage, the groups in the order they were staged, and for each
    /// group start the groups each stage had reached.
    fn schedule(n: usize, size: usize, reach: Reach) -> [Vec<usize>; 3] {
        let mut st = Stager::new(size, reach, n);
        let mut order: [Vec<usize>; 3] = Default::default();
        let groups = n.div_ceil(size);
        let ahead = if reach == Reach::Value { [3, 2, 1] } else { [2, 1, 0] };
        for g in 0..groups {
            let due = st.due(g);
            for s in 0..3 {
                order[s].extend(due[s].clone());
                // Every stage has reached its distance ahead (or the end),
                // and no stage passed the one before it.
                if reach == Reach::Value || s < 2 {
                    assert_eq!(st.next[s], (g + ahead[s] + 1).min(groups), "n {n} size {size} g {g} stage {s}");
                }
                if s > 0 {
                    assert!(st.next[s] <= st.next[s - 1]);
                }
            }
        }
        order
    }

    #[test]
    fn stager_runs_every_stage_once_per_group_in_order_and_ahead() {
        for n in [2usize, 3, 15, 16, 17, 100, 1000] {
            for size in [1, 2, 4, 16, 128] {
                let groups = n.div_ceil(size);
                let all: Vec<usize> = (0..groups).collect();
                let [s1, s2, s3] = schedule(n, size, Reach::Value);
                assert_eq!((&s1, &s2, &s3), (&all, &all, &all));
                let [s1, s2, s3] = schedule(n, size, Reach::Entry);
                assert_eq!((&s1, &s2), (&all, &all));
                assert!(s3.is_empty());
            }
        }
        // Off, or one key: nothing is staged.
        let st = Stager::new(0, Reach::Value, 100);
        assert_eq!(st.size, 0);
        let st = Stager::new(16, Reach::Value, 1);
        assert_eq!(st.size, 0);
    }

    /// Stage 3 of keys `0..n` through a gate (`on`) when key `i`'s value
    /// has more to ask for iff `more(i)`: the keys that went through it.
    fn gated(n: usize, on: bool, more: impl Fn(usize) -> bool) -> Vec<usize> {
        struct Src<F>(Vec<usize>, F);
        impl<F: Fn(usize) -> bool> Lookups for Src<F> {
            fn bucket(&mut self, _: usize) {}
            fn item(&mut self, _: usize) -> ItemHint {
                ItemHint::NONE
            }
            fn key_len(&self, _: usize) -> usize {
                3
            }
            fn value(&mut self, i: usize) -> bool {
                self.0.push(i);
                (self.1)(i)
            }
        }
        let mut src = Src(Vec::new(), more);
        items_and_values(&mut src, n, Reach::Value, on);
        src.0
    }

    #[test]
    fn value_gate_samples_after_a_run_with_nothing_to_add() {
        let (after, sample) = (GATE_AFTER as usize, GATE_SAMPLE as usize);
        // Nothing to add anywhere: GATE_AFTER keys, then one in GATE_SAMPLE.
        let want: Vec<usize> = (0..after).chain((after - 1 + sample..40).step_by(sample)).collect();
        assert_eq!(gated(40, true, |_| false), want);
        // Off: every key.
        assert_eq!(gated(40, false, |_| false), (0..40).collect::<Vec<_>>());
        // Every key has more: every key.
        assert_eq!(gated(40, true, |_| true), (0..40).collect::<Vec<_>>());
        // A sampled key with more opens the gate for the keys after it,
        // until GATE_AFTER of them in a row had nothing to add.
        let first_sample = after - 1 + sample;
        let reopened_until = first_sample + after;
        let want: Vec<usize> = (0..after)
            .chain(first_sample..=reopened_until)
            .chain((reopened_until + sample..40).step_by(sample))
            .collect();
        assert_eq!(gated(40, true, |i| i == first_sample), want);
    }

    /// Records every stage call as (stage, key).
    struct Log(Vec<(u8, usize)>);

    impl Lookups for Log {
        fn bucket(&mut self, i: usize) {
            self.0.push((1, i));
        }
        fn item(&mut self, i: usize) -> ItemHint {
            self.0.push((2, i));
            ItemHint::NONE
        }
        fn key_len(&self, _: usize) -> usize {
            3
        }
        fn reads(&self, i: usize) -> bool {
            i.is_multiple_of(2)
        }
        fn value(&mut self, i: usize) -> bool {
            self.0.push((3, i));
            true
        }
    }

    /// Every key goes through each of its stages exactly once, in stage
    /// order, before it runs; with size 0 or one key nothing is staged.
    /// (No unsafe code here: too slow interpreted for Miri's run.)
    #[test]
    #[cfg_attr(miri, ignore)]
    fn each_stage_once_before_the_key_runs() {
        for reach in [Reach::Entry, Reach::Value] {
            for n in [0, 1, 2, 5, 16, 17, 100] {
                for size in [0, 1, 2, 3, 16, 128] {
                    let mut log = Log(Vec::new());
                    let mut st = Stager::new(size, reach, n);
                    let mut ran = Vec::new();
                    for i in 0..n {
                        st.before(&mut log, i);
                        ran.push(log.0.len());
                    }
                    if size == 0 || n < 2 {
                        assert!(log.0.is_empty());
                        continue;
                    }
                    let stages: &[u8] = if reach == Reach::Value { &[1, 2, 3] } else { &[1, 2] };
                    for (i, &done) in ran.iter().enumerate() {
                        let mut at = Vec::new();
                        for &s in stages {
                            let want = usize::from(s != 3 || i.is_multiple_of(2));
                            let pos: Vec<usize> = (0..log.0.len()).filter(|&j| log.0[j] == (s, i)).collect();
                            assert_eq!(pos.len(), want, "stage {s} of key {i} (n {n}, size {size}, {reach:?})");
                            at.extend(pos);
                        }
                        assert!(at.windows(2).all(|w| w[0] < w[1]));
                        assert!(at.iter().all(|&j| j < done), "key {i} staged after it ran");
                    }
                }
            }
        }
    }
}
