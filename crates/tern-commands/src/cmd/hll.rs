//! HyperLogLog: PFADD, PFCOUNT, PFMERGE, in Redis's own string format, so
//! that an HLL written by Redis (GET, DUMP) counts the same here and the
//! other way round, byte for byte.
//!
//! ```text
//!  header (16 bytes)                                   registers
//!  +------+-----+-------+-------------------------+    16384 x 6 bits
//!  | HYLL | enc | 0 0 0 | cached cardinality (LE) |    dense: 12288 bytes, register i at bit 6i,
//!  +------+-----+-------+-------------------------+           least significant bits first
//!   magic  0 dense        top bit of byte 15 set:     sparse: run-length opcodes
//!          1 sparse       the cache is stale            00xxxxxx        ZERO  x+1 zero registers
//!                                                        01xxxxxx yyyyyyyy XZERO (x<<8|y)+1 zeros
//!                                                        1vvvvvxx        VAL   x+1 registers of v+1
//! ```
//!
//! An element's register is the low 14 bits of its MurmurHash64A (Redis's
//! seed), its value the position of the first set bit above them. A sparse
//! HLL grows by splitting the opcode that covers a register exactly as
//! Redis splits it, and turns dense when a value passes 32 or it would
//! pass `hll-sparse-max-bytes`. Strings that are not an HLL get Redis's
//! WRONGTYPE line; corrupt ones its INVALIDOBJ error, never a panic: every
//! read of the opcodes is bounds-checked.

use crate::messaging::notify::ev;
use std::sync::atomic::Ordering;

use tern_resp::Args;

use super::keyspec::{index, ks, range, ACCESS, INSERT, RO, RW};
use super::strings::{edit_raw, string_of};
use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::errors::{self, c_str};

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("pfadd", -2, WRITE | DENYOOM | FAST, &[ks(RW | INSERT, index(1), range(0, 1, 0))], pfadd)
        .event(ev::PFADD)
        .doc("hyperloglog", "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.", "2.8.9", "O(1) to add every element.")
        .acl(&["write", "hyperloglog", "fast"]),
    CommandSpec::new(
        "pfcount",
        -2,
        READONLY,
        &[ks(RW | ACCESS, index(1), range(-1, 1, 0))
            .notes("RW because it may change the internal representation of the key, and propagate to replicas")],
        pfcount,
    )
    .doc(
        "hyperloglog",
        "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).",
        "2.8.9",
        "O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys.",
    )
    .acl(&["read", "hyperloglog", "slow"]),
    CommandSpec::new(
        "pfmerge",
        -2,
        WRITE | DENYOOM,
        &[ks(RW | ACCESS | INSERT, index(1), range(0, 1, 0)), ks(RO | ACCESS, index(2), range(-1, 1, 0))],
        pfmerge,
    )
    .event(ev::PFADD)
    .doc("hyperloglog", "Merges one or more HyperLogLog values into a single key.", "2.8.9", "O(N) to merge N HyperLogLogs, but with high constant times.")
    .acl(&["write", "hyperloglog", "slow"]),
    CommandSpec::new("pfdebug", 3, WRITE | DENYOOM | ADMIN, &[ks(RW | ACCESS, index(2), range(0, 1, 0))], pfdebug)
        .doc("hyperloglog", "Internal commands for debugging HyperLogLog values.", "2.8.9", "N/A")
        .syscmd()
        .acl(&["write", "hyperloglog", "admin", "slow", "dangerous"]),
    CommandSpec::new("pfselftest", 1, ADMIN, &[], pfselftest)
        .doc("hyperloglog", "An internal command for testing HyperLogLog values.", "2.8.9", "N/A")
        .syscmd()
        .acl(&["hyperloglog", "admin", "slow", "dangerous"]),
];

/// Header bytes before the registers.
const HDR: usize = 16;
/// Registers: 2^14, addressed by the low 14 bits of the hash.
const P: u32 = 14;
const REGS: usize = 1 << P;
/// Hash bits left for the run of zeros.
const Q: usize = 64 - P as usize;
const REG_MAX: u8 = 63;
/// A dense HLL's whole length.
const DENSE_LEN: usize = HDR + (REGS * 6).div_ceil(8);
const DENSE: u8 = 0;
const SPARSE: u8 = 1;
const VAL_MAX_VALUE: u8 = 32;
const VAL_MAX_LEN: usize = 4;
const ZERO_MAX_LEN: usize = 64;
const XZERO_MAX_LEN: usize = 16384;
/// Redis's MurmurHash64A seed for HyperLogLog elements.
const SEED: u64 = 0xadc8_3b19;

fn pfadd(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let max_sparse = ctx.srv.settings.hll_sparse_max_bytes();
    let added = edit_raw(ctx, args.get(1), true, |buf, fresh| {
        if fresh {
            *buf = new_hll();
        } else {
            check_hll(buf)?;
        }
        // A new key is an update even without elements.
        let mut updated = fresh;
        for el in args.tail(2).iter() {
            updated |= add(buf, el, max_sparse).map_err(|_| errors::HLL_CORRUPT)?;
        }
        if updated {
            invalidate_cache(buf);
        }
        Ok((updated, updated))
    });
    match added {
        Ok(updated) => ctx.reply.int(i64::from(updated.unwrap_or(false))),
        Err(msg) => ctx.reply.error(msg),
    }
}

/// PFCOUNT of one key answers from the cached cardinality, computing and
/// caching it when stale (a change of the string, as in Redis); of several
/// keys, counts their union without caching anything.
fn pfcount(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() == 2 {
        let counted = edit_raw(ctx, args.get(1), false, |buf, _| {
            check_hll(buf)?;
            if buf[15] & 0x80 == 0 {
                let mut card = [0u8; 8];
                card.copy_from_slice(&buf[8..16]);
                return Ok((u64::from_le_bytes(card), false));
            }
            let card = count(buf).ok_or(errors::HLL_CORRUPT)?;
            buf[8..16].copy_from_slice(&card.to_le_bytes());
            Ok((card, true))
        });
        match counted {
            Ok(card) => {
                if card.is_none() {
                    // Redis reads the key: a miss is a `keymiss`.
                    ctx.note_event(ctx.locs[0], args.get(1), ev::KEYMISS);
                }
                ctx.reply.int(card.unwrap_or(0) as i64)
            }
            Err(msg) => ctx.reply.error(msg),
        }
        return;
    }
    // On the stack: 16 KiB from the heap is a large allocation, zeroed.
    let mut max = [0u8; REGS];
    if let Err(msg) = merge_keys(ctx, args, 1, &mut max) {
        return ctx.reply.error(msg);
    }
    ctx.reply.int(estimate(&histogram_raw(&max)) as i64);
}

/// Merges the HLLs of the keys at `args[from..]` (`locs[from - 1..]`) into
/// `max`, register by register; missing keys count as empty. Returns
/// whether one of them was dense.
fn merge_keys(ctx: &mut Ctx<'_, '_>, args: Args<'_>, from: usize, max: &mut [u8]) -> Result<bool, &'static str> {
    let acc = ctx.access();
    let mut any_dense = false;
    for i in from..args.len() {
        let Some(&loc) = ctx.locs.get(i - 1) else { return Err(errors::SYNTAX) };
        let Some(e) = ctx.locks.shard(loc.gid).lookup_source(args.get(i), loc.hash, ctx.now, acc) else { continue };
        string_of(e)?.with_bytes(|b| {
            check_hll(b)?;
            any_dense |= b[4] == DENSE;
            merge(max, b).ok_or(errors::HLL_CORRUPT)
        })?;
    }
    Ok(any_dense)
}

/// PFMERGE dest src...: the union of every HLL named, the destination's
/// own included, stored at the destination (dense if any input was).
fn pfmerge(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let mut max = vec![0u8; REGS];
    let use_dense = match merge_keys(ctx, args, 1, &mut max) {
        Ok(d) => d,
        Err(msg) => return ctx.reply.error(msg),
    };
    let max_sparse = ctx.srv.settings.hll_sparse_max_bytes();
    let merged = edit_raw(ctx, args.get(1), true, |buf, fresh| {
        if fresh {
            *buf = new_hll();
        }
        if use_dense {
            to_dense(buf).ok_or(errors::HLL_CORRUPT)?;
            for (i, &m) in max.iter().enumerate() {
                dense_set_reg(&mut buf[HDR..], i, m);
            }
        } else {
            for (i, &m) in max.iter().enumerate() {
                if m == 0 {
                    continue;
                }
                // As Redis: a corrupt destination was refused above.
                let _ = set_register(buf, i, m, max_sparse);
            }
        }
        invalidate_cache(buf);
        Ok(((), true))
    });
    match merged {
        Ok(_) => ctx.reply.ok(),
        Err(msg) => ctx.reply.error(msg),
    }
}

/// What a PFDEBUG subcommand answers.
enum DebugReply {
    Registers(Vec<u8>),
    Text(Vec<u8>),
    Status(&'static str),
    Int(i64),
    Unknown,
}

/// PFDEBUG GETREG | DECODE | ENCODING | TODENSE key, and PFDEBUG SIMD
/// ON | OFF (see [`crate::server::Server::hll_simd`]). The key must hold an
/// HLL, which is unshared as Redis unshares it, before an unknown
/// subcommand is refused.
fn pfdebug(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let sub = c_str(args.get(1));
    if sub.eq_ignore_ascii_case(b"simd") {
        let on = c_str(args.get(2));
        let simd = &ctx.srv.hll_simd;
        if on.eq_ignore_ascii_case(b"on") {
            simd.store(true, Ordering::Relaxed);
        } else if on.eq_ignore_ascii_case(b"off") {
            simd.store(false, Ordering::Relaxed);
        } else {
            // Redis answers the error and then the state, two replies.
            ctx.reply.error(errors::PFDEBUG_SIMD_ARG);
        }
        return ctx.reply.simple(if simd.load(Ordering::Relaxed) { "enabled" } else { "disabled" });
    }
    let is = |s: &[u8]| sub.eq_ignore_ascii_case(s);
    let done = edit_raw(ctx, args.get(2), false, |buf, _| {
        check_hll(buf)?;
        if is(b"getreg") || is(b"todense") {
            let sparse = buf[4] == SPARSE;
            to_dense(buf).ok_or(errors::HLL_CORRUPT)?;
            let out = if is(b"todense") {
                DebugReply::Int(i64::from(sparse))
            } else {
                DebugReply::Registers((0..REGS).map(|i| dense_reg(&buf[HDR..], i)).collect())
            };
            return Ok((out, sparse));
        }
        if is(b"encoding") {
            return Ok((DebugReply::Status(if buf[4] == DENSE { "dense" } else { "sparse" }), false));
        }
        if !is(b"decode") {
            return Ok((DebugReply::Unknown, false));
        }
        if buf[4] != SPARSE {
            return Err(errors::HLL_NOT_SPARSE);
        }
        let mut text = Vec::new();
        let mut p = HDR;
        while p < buf.len() {
            let (n, len, is_val) = opcode(buf, p);
            let word = match (is_val, len) {
                (true, _) => format!("v:{},{} ", val_value(buf[p]), n),
                (false, 2) => format!("Z:{n} "),
                (false, _) => format!("z:{n} "),
            };
            text.extend_from_slice(word.as_bytes());
            p += len;
        }
        text.pop();
        Ok((DebugReply::Text(text), false))
    });
    match done {
        Ok(Some(DebugReply::Registers(regs))) => {
            ctx.reply.array(regs.len());
            regs.into_iter().for_each(|r| ctx.reply.int(i64::from(r)));
        }
        Ok(Some(DebugReply::Text(t))) => ctx.reply.bulk(&t),
        Ok(Some(DebugReply::Status(s))) => ctx.reply.simple(s),
        Ok(Some(DebugReply::Int(n))) => ctx.reply.int(n),
        Ok(Some(DebugReply::Unknown)) => ctx.reply.error(errors::pfdebug_unknown(args.get(1))),
        Ok(None) => ctx.reply.error(errors::PFDEBUG_NO_KEY),
        Err(msg) => ctx.reply.error(msg),
    }
}

/// PFSELFTEST: Redis's own checks, run on this implementation: random
/// register values read back from the dense encoding, then ten million
/// elements added to a dense and a sparse HLL side by side, which must
/// agree, stay sparse while small, and count within six standard errors.
fn pfselftest(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let max_sparse = ctx.srv.settings.hll_sparse_max_bytes();
    match selftest(10_000_000, max_sparse, &mut rand::thread_rng()) {
        Ok(()) => ctx.reply.ok(),
        Err(msg) => ctx.reply.error(msg),
    }
}

/// PFSELFTEST's checks with `n` elements.
fn selftest(n: u64, max_sparse: u64, rng: &mut impl rand::Rng) -> Result<(), String> {
    let mut regs = vec![0u8; DENSE_LEN - HDR];
    let mut want = vec![0u8; REGS];
    for _ in 0..1000 {
        for (i, w) in want.iter_mut().enumerate() {
            *w = rng.gen::<u8>() & REG_MAX;
            dense_set_reg(&mut regs, i, *w);
        }
        for (i, &w) in want.iter().enumerate() {
            let got = dense_reg(&regs, i);
            if got != w {
                return Err(errors::pfselftest_register(i, got, w));
            }
        }
    }
    let mut dense = new_hll();
    to_dense(&mut dense).ok_or_else(|| errors::HLL_CORRUPT.to_string())?;
    let mut sparse = new_hll();
    let seed: u64 = rng.gen();
    let relerr = 1.04 / (REGS as f64).sqrt();
    let mut checkpoint = 1u64;
    for j in 1..=n {
        let ele = (j ^ seed).to_le_bytes();
        let _ = add(&mut dense, &ele, max_sparse);
        add(&mut sparse, &ele, max_sparse).map_err(|_| errors::HLL_CORRUPT.to_string())?;
        if j != checkpoint {
            continue;
        }
        if j < max_sparse / 2 && sparse[4] != SPARSE {
            return Err(errors::PFSELFTEST_SPARSE_NOT_USED.into());
        }
        let card = count(&dense).ok_or_else(|| errors::HLL_CORRUPT.to_string())?;
        if count(&sparse) != Some(card) {
            return Err(errors::PFSELFTEST_DISAGREE.into());
        }
        // Cardinality 10 can collide now and then: Redis allows 1 there.
        let maxerr = if j == 10 { 1 } else { (relerr * 6.0 * checkpoint as f64).ceil() as u64 };
        let abserr = checkpoint.abs_diff(card);
        if abserr > maxerr {
            return Err(errors::pfselftest_error(checkpoint, abserr));
        }
        checkpoint *= 10;
    }
    Ok(())
}

// ---- the representation: pure functions over the string's bytes ----------

/// An empty HLL as PFADD creates it: sparse, one XZERO over every
/// register, a valid cached cardinality of 0.
fn new_hll() -> Vec<u8> {
    let mut v = Vec::with_capacity(HDR + 2);
    v.extend_from_slice(b"HYLL");
    v.extend_from_slice(&[SPARSE, 0, 0, 0]);
    v.extend_from_slice(&[0; 8]);
    let mut left = REGS;
    while left > 0 {
        let n = left.min(XZERO_MAX_LEN);
        v.extend_from_slice(&xzero(n));
        left -= n;
    }
    v
}

/// Redis's isHLLObjectOrReply: the header's magic and encoding, and a
/// dense HLL's exact length.
fn check_hll(b: &[u8]) -> Result<(), &'static str> {
    if b.len() < HDR || &b[..4] != b"HYLL" || b[4] > SPARSE || (b[4] == DENSE && b.len() != DENSE_LEN) {
        return Err(errors::HLL_NOT_HLL);
    }
    Ok(())
}

fn invalidate_cache(b: &mut [u8]) {
    b[15] |= 0x80;
}

/// Redis's MurmurHash64A, reading words little-endian on any host.
fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut words = key.chunks_exact(8);
    for w in words.by_ref() {
        let mut k = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        for (i, &b) in rest.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// An element's register and the value it offers it: one more than the
/// run of zeros above the register bits (at most Q + 1).
fn register_of(el: &[u8]) -> (usize, u8) {
    let h = murmur64a(el, SEED);
    let index = (h & (REGS as u64 - 1)) as usize;
    let rest = (h >> P) | (1 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

/// Register `i` of dense registers (bytes past the end read as zeros, as
/// the last register's neighbour is Redis's string terminator).
fn dense_reg(regs: &[u8], i: usize) -> u8 {
    let (byte, fb) = (i * 6 / 8, (i * 6) & 7);
    let b0 = u16::from(regs.get(byte).copied().unwrap_or(0));
    let b1 = u16::from(regs.get(byte + 1).copied().unwrap_or(0));
    (((b0 >> fb) | (b1 << (8 - fb))) & u16::from(REG_MAX)) as u8
}

fn dense_set_reg(regs: &mut [u8], i: usize, v: u8) {
    let (byte, fb) = (i * 6 / 8, (i * 6) & 7);
    let v = u16::from(v & REG_MAX);
    regs[byte] = ((u16::from(regs[byte]) & !(u16::from(REG_MAX) << fb)) | (v << fb)) as u8;
    if let Some(b1) = regs.get_mut(byte + 1) {
        let fb8 = 8 - fb;
        *b1 = ((u16::from(*b1) & !(u16::from(REG_MAX) >> fb8)) | (v >> fb8)) as u8;
    }
}

// Sparse opcodes.
fn is_zero(op: u8) -> bool {
    op & 0xc0 == 0
}
fn is_xzero(op: u8) -> bool {
    op & 0xc0 == 0x40
}
fn val_value(op: u8) -> u8 {
    ((op >> 2) & 0x1f) + 1
}
fn val_len(op: u8) -> usize {
    usize::from(op & 0x3) + 1
}
fn val(value: u8, len: usize) -> u8 {
    0x80 | ((value - 1) << 2) | (len as u8 - 1)
}
fn xzero(len: usize) -> [u8; 2] {
    let l = len - 1;
    [0x40 | (l >> 8) as u8, (l & 0xff) as u8]
}
/// A ZERO or XZERO run of `len` registers.
fn zeros(len: usize, out: &mut Seq) {
    if len > ZERO_MAX_LEN {
        for b in xzero(len) {
            out.push(b);
        }
    } else {
        out.push(len as u8 - 1);
    }
}

/// The opcodes that replace one split around a register: at most a ZERO or
/// XZERO, a VAL, and a ZERO or XZERO (five bytes), kept on the stack.
struct Seq {
    bytes: [u8; 5],
    len: usize,
}

impl Seq {
    fn new() -> Seq {
        Seq { bytes: [0; 5], len: 0 }
    }

    fn push(&mut self, b: u8) {
        self.bytes[self.len] = b;
        self.len += 1;
    }

    fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// The opcode at `p` of `b`: (registers covered, bytes, whether it is a
/// VAL). An XZERO cut short reads its missing byte as 0, as Redis reads
/// the string's terminator.
fn opcode(b: &[u8], p: usize) -> (usize, usize, bool) {
    let op = b[p];
    if is_zero(op) {
        (usize::from(op & 0x3f) + 1, 1, false)
    } else if is_xzero(op) {
        let lo = usize::from(b.get(p + 1).copied().unwrap_or(0));
        (((usize::from(op & 0x3f) << 8) | lo) + 1, 2, false)
    } else {
        (val_len(op), 1, true)
    }
}

/// Adds one element; Ok(true) if a register grew. Err: a corrupt sparse
/// HLL.
fn add(b: &mut Vec<u8>, el: &[u8], max_sparse: u64) -> Result<bool, ()> {
    let (i, count) = register_of(el);
    set_register(b, i, count, max_sparse)
}

/// Raises register `i` to `count` if below it (Redis's hllDenseSet /
/// hllSparseSet, the latter's opcode splitting and merging step for step).
fn set_register(b: &mut Vec<u8>, i: usize, count: u8, max_sparse: u64) -> Result<bool, ()> {
    if b[4] == DENSE {
        return Ok(dense_raise(&mut b[HDR..], i, count));
    }
    if count > VAL_MAX_VALUE {
        return promote(b, i, count);
    }
    // Step 1: the opcode covering register i.
    let (mut p, mut first, mut span, mut prev) = (HDR, 0usize, 0usize, None);
    let mut found = None;
    while p < b.len() {
        let (n, len, is_val) = opcode(b, p);
        span = n;
        if i < first + n {
            found = Some((len, is_val));
            break;
        }
        prev = Some(p);
        p += len;
        first += n;
    }
    let Some((oplen, is_val)) = found else { return Err(()) };
    if span == 0 {
        return Err(());
    }
    let op = b[p];
    // Step 2: the cases updated in place.
    if is_val {
        if val_value(op) >= count {
            return Ok(false);
        }
        if span == 1 {
            b[p] = val(count, 1);
            merge_vals(b, prev);
            invalidate_cache(b);
            return Ok(true);
        }
    } else if is_zero(op) && span == 1 {
        b[p] = val(count, 1);
        merge_vals(b, prev);
        invalidate_cache(b);
        return Ok(true);
    }
    // The general case: the opcode is split around register i.
    let last = first + span - 1;
    let mut seq = Seq::new();
    if is_val {
        let cur = val_value(op);
        if i != first {
            seq.push(val(cur, i - first));
        }
        seq.push(val(count, 1));
        if i != last {
            seq.push(val(cur, last - i));
        }
    } else {
        if i != first {
            zeros(i - first, &mut seq);
        }
        seq.push(val(count, 1));
        if i != last {
            zeros(last - i, &mut seq);
        }
    }
    // Step 3: the new sequence in place of the old opcode, unless the
    // string would pass hll-sparse-max-bytes.
    let seq = seq.as_slice();
    let grows = seq.len() > oplen;
    if grows && (b.len() + seq.len() - oplen) as u64 > max_sparse {
        return promote(b, i, count);
    }
    let new_len = b.len() + seq.len() - oplen;
    b.splice(p..(p + oplen).min(b.len()), seq.iter().copied());
    // An XZERO cut short at the end: Redis's length arithmetic drops a byte.
    b.truncate(new_len);
    merge_vals(b, prev);
    invalidate_cache(b);
    Ok(true)
}

/// Redis's step 4: adjacent VALs of one value merge when their runs fit
/// one opcode, looking at five opcodes from the one before the change.
fn merge_vals(b: &mut Vec<u8>, prev: Option<usize>) {
    let mut p = prev.unwrap_or(HDR);
    let mut scan = 5;
    while p < b.len() && scan > 0 {
        scan -= 1;
        let op = b[p];
        if is_xzero(op) {
            p += 2;
            continue;
        }
        if is_zero(op) {
            p += 1;
            continue;
        }
        if let Some(&next) = b.get(p + 1) {
            if next & 0x80 != 0 && val_value(op) == val_value(next) {
                let len = val_len(op) + val_len(next);
                if len <= VAL_MAX_LEN {
                    b[p + 1] = val(val_value(op), len);
                    b.remove(p);
                    continue;
                }
            }
        }
        p += 1;
    }
}

/// Turns a sparse HLL dense, then raises register `i` (which needs it).
fn promote(b: &mut Vec<u8>, i: usize, count: u8) -> Result<bool, ()> {
    to_dense(b).ok_or(())?;
    dense_raise(&mut b[HDR..], i, count);
    Ok(true)
}

fn dense_raise(regs: &mut [u8], i: usize, count: u8) -> bool {
    if dense_reg(regs, i) < count {
        dense_set_reg(regs, i, count);
        true
    } else {
        false
    }
}

/// Redis's hllSparseToDense: the header kept (cached cardinality too), the
/// registers expanded; None if the opcodes do not cover exactly every
/// register (a VAL past the last one is refused at once, so even one that
/// follows a complete cover is). A dense HLL is left as it is.
fn to_dense(b: &mut Vec<u8>) -> Option<()> {
    if b[4] == DENSE {
        return Some(());
    }
    let mut dense = vec![0u8; DENSE_LEN];
    dense[..HDR].copy_from_slice(&b[..HDR]);
    dense[4] = DENSE;
    sparse_vals(b, |first, n, v| (first..first + n).for_each(|r| dense_set_reg(&mut dense[HDR..], r, v)))?;
    *b = dense;
    Some(())
}

/// `max[i] = max(max[i], register i)` over the HLL in `b` (checked by
/// [`check_hll`]); None for a corrupt sparse one.
fn merge(max: &mut [u8], b: &[u8]) -> Option<()> {
    if b[4] == DENSE {
        for (i, m) in max.iter_mut().enumerate() {
            *m = (*m).max(dense_reg(&b[HDR..], i));
        }
        return Some(());
    }
    sparse_vals(b, |first, n, v| max[first..first + n].iter_mut().for_each(|m| *m = (*m).max(v)))
}

/// Walks a sparse HLL's runs in order, calling `f(first register, run
/// length, value)` for each VAL run. None when the runs do not cover
/// exactly every register (a corrupt HLL): a run past the last register
/// stops the walk before `f` sees it, as Redis refuses it at once even
/// after a complete cover.
fn sparse_vals(b: &[u8], mut f: impl FnMut(usize, usize, u8)) -> Option<()> {
    let (mut idx, mut p) = (0usize, HDR);
    while p < b.len() {
        let (n, len, is_val) = opcode(b, p);
        if idx + n > REGS {
            return None;
        }
        if is_val {
            f(idx, n, val_value(b[p]));
        }
        idx += n;
        p += len;
    }
    (idx == REGS).then_some(())
}

/// How many registers hold each value; 64 slots, as Redis sizes its
/// histogram (a dense register holds at most 63).
type Histo = [u32; 64];

/// The histogram of raw registers (one byte each), as Redis's
/// hllRawRegHisto: 32 zero registers (four words) count at once, which is
/// nearly all of a merge of sparse HLLs (PFCOUNT of several keys), then a
/// word of eight at once. The other words go into four histograms summed at
/// the end, so that a run of equal registers does not make each increment
/// wait for the one before (one histogram counted 16384 registers at a
/// store-to-load round trip each; a byte-by-byte zero test was a third of
/// PFCOUNT's profile).
fn histogram_raw(regs: &[u8]) -> Histo {
    let word = |w: &[u8]| u64::from_ne_bytes(w.try_into().unwrap_or([0; 8]));
    let mut hs = [[0u32; 64]; 4];
    let mut zero_words = 0u32;
    let mut blocks = regs.chunks_exact(32);
    for b in blocks.by_ref() {
        let ws = [word(&b[..8]), word(&b[8..16]), word(&b[16..24]), word(&b[24..])];
        if ws[0] | ws[1] | ws[2] | ws[3] == 0 {
            zero_words += 4;
            continue;
        }
        for (&w, bytes) in ws.iter().zip(b.chunks_exact(8)) {
            if w == 0 {
                zero_words += 1;
                continue;
            }
            for (k, &r) in bytes.iter().enumerate() {
                hs[k & 3][usize::from(r & REG_MAX)] += 1;
            }
        }
    }
    for &r in blocks.remainder() {
        hs[0][usize::from(r & REG_MAX)] += 1;
    }
    let mut h = [0u32; 64];
    for (v, slot) in h.iter_mut().enumerate() {
        *slot = hs.iter().map(|x| x[v]).sum();
    }
    h[0] += zero_words * 8;
    h
}

/// The estimate of the HLL in `b`; None for a corrupt sparse one.
fn count(b: &[u8]) -> Option<u64> {
    let mut h = [0u32; 64];
    if b[4] == DENSE {
        for i in 0..REGS {
            h[usize::from(dense_reg(&b[HDR..], i))] += 1;
        }
    } else {
        let mut vals = 0u32;
        sparse_vals(b, |_, n, v| {
            h[usize::from(v)] += n as u32;
            vals += n as u32;
        })?;
        h[0] = REGS as u32 - vals;
    }
    Some(estimate(&h))
}

/// Ertl's improved estimator ("New cardinality estimation algorithms for
/// HyperLogLog sketches", 2017), in Redis's order of floating-point
/// operations so that the rounded result is the same.
fn estimate(h: &Histo) -> u64 {
    const ALPHA_INF: f64 = 0.721_347_520_444_481_7;
    let m = REGS as f64;
    let mut z = m * tau((m - f64::from(h[Q + 1])) / m);
    for j in (1..=Q).rev() {
        z += f64::from(h[j]);
        z *= 0.5;
    }
    z += m * sigma(f64::from(h[0]) / m);
    (ALPHA_INF * m * m / z).round() as u64
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if before == z {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        let d = 1.0 - x;
        z -= d * d * y;
        if before == z {
            return z / 3.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;

    fn card(b: &[u8]) -> u64 {
        count(b).expect("valid")
    }

    #[test]
    fn selftest_passes_on_this_implementation() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        assert_eq!(selftest(100_000, 3000, &mut rng), Ok(()));
    }

    #[test]
    fn an_empty_hll_is_redis_s_eighteen_bytes() {
        assert_eq!(new_hll(), b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff");
        assert_eq!(card(&new_hll()), 0);
        assert_eq!(DENSE_LEN, 12304);
    }

    #[test]
    fn murmur_matches_the_reference_algorithm() {
        // The tail bytes go in little-endian before one multiply; the
        // seed and the length both feed the start.
        assert_ne!(murmur64a(b"a", SEED), murmur64a(b"a", 0));
        assert_ne!(murmur64a(b"abcdefgh", SEED), murmur64a(b"abcdefgh\0", SEED));
        assert_eq!(murmur64a(b"", 0), 0);
    }

    #[test]
    fn sparse_adds_split_and_merge_opcodes() {
        let mut b = new_hll();
        set_register(&mut b, 0, 3, 3000).unwrap();
        assert_eq!(&b[HDR..], &[val(3, 1), 0x7f, 0xfe]);
        set_register(&mut b, 1, 3, 3000).unwrap();
        assert_eq!(&b[HDR..], &[val(3, 2), 0x7f, 0xfd]);
        set_register(&mut b, 100, 5, 3000).unwrap();
        assert_eq!(&b[HDR..], &[val(3, 2), 0x40, 97, val(5, 1), 0x7f, 0x9a]);
        assert!(!set_register(&mut b, 100, 4, 3000).unwrap());
        assert_eq!(card(&b), 3);
        // Past 32 the HLL turns dense, keeping its registers.
        set_register(&mut b, 7, 33, 3000).unwrap();
        assert_eq!((b.len(), b[4]), (DENSE_LEN, DENSE));
        assert_eq!((dense_reg(&b[HDR..], 1), dense_reg(&b[HDR..], 100), dense_reg(&b[HDR..], 7)), (3, 5, 33));
    }

    #[test]
    fn corrupt_sparse_hlls_are_errors_not_panics() {
        for bad in [
            &b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\0"[..],
            b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f",
            b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xfe",
            b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff\x00",
            b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\xff\xff\xff\xff",
            b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x40",
            // A VAL past a complete cover (Redis refuses it even to merge).
            b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff\x84",
        ] {
            assert!(check_hll(bad).is_ok());
            assert_eq!(count(bad), None, "{bad:?}");
            assert_eq!(merge(&mut vec![0; REGS], bad), None);
            let mut b = bad.to_vec();
            for r in [0, 1, 5000, REGS - 1] {
                let _ = set_register(&mut b, r, 40, 3000);
                let _ = set_register(&mut b, r, 3, 3000);
            }
        }
        assert_eq!(check_hll(b"HYLL\x00\0\0\0\0\0\0\0\0\0\0\0"), Err(errors::HLL_NOT_HLL));
        assert_eq!(check_hll(b"HYLL\x02\0\0\0\0\0\0\0\0\0\0\0"), Err(errors::HLL_NOT_HLL));
        assert_eq!(check_hll(b"HYLX\x01\0\0\0\0\0\0\0\0\0\0\0"), Err(errors::HLL_NOT_HLL));
    }

    proptest! {
        /// The word-at-a-time histogram counts what one register at a time
        /// does, for mostly-zero arrays (merged sparse HLLs) and full ones.
        #[test]
        fn raw_histogram_matches_the_naive_one(set in proptest::collection::vec((0..REGS, 0u8..64), 0..2000), fill: bool) {
            let mut regs = vec![if fill { 1u8 } else { 0 }; REGS];
            for (i, v) in set {
                regs[i] = v;
            }
            let mut want = [0u32; 64];
            for &r in &regs {
                want[usize::from(r)] += 1;
            }
            prop_assert_eq!(histogram_raw(&regs), want);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        /// Sparse and dense agree, register by register and in the count,
        /// and the count stays within Redis's error bound of the truth
        /// (1.04 / sqrt(16384) = 0.81% standard error; 5 sigma here).
        #[test]
        fn estimates_are_within_bounds_and_encodings_agree(n in 1usize..20_000, seed: u64, max_sparse in prop_oneof![Just(0u64), Just(3000)]) {
            let mut sparse = new_hll();
            let mut dense = new_hll();
            to_dense(&mut dense).unwrap();
            for k in 0..n {
                let el = format!("{seed}:{k}");
                add(&mut sparse, el.as_bytes(), max_sparse).unwrap();
                add(&mut dense, el.as_bytes(), max_sparse).unwrap();
            }
            let mut m1 = vec![0u8; REGS];
            let mut m2 = vec![0u8; REGS];
            merge(&mut m1, &sparse).unwrap();
            merge(&mut m2, &dense).unwrap();
            prop_assert_eq!(&m1, &m2);
            let (c1, c2) = (card(&sparse), card(&dense));
            prop_assert_eq!(c1, c2);
            prop_assert_eq!(estimate(&histogram_raw(&m1)), c1);
            let err = (c1 as f64 - n as f64).abs() / n as f64;
            prop_assert!(err <= 5.0 * 0.0081 || (n < 100 && (c1 as i64 - n as i64).abs() <= 2), "n {} estimate {}", n, c1);
            if max_sparse == 0 {
                prop_assert_eq!(sparse[4], DENSE);
            }
            if sparse[4] == SPARSE {
                prop_assert!(sparse.len() as u64 <= max_sparse.max(HDR as u64 + 2));
            }
        }
    }
}
