//! The digits Redis replies with for a double: fpconv's Grisu2 (Florian
//! Loitsch's algorithm, as Redis's `deps/fpconv` implements it). Grisu2 is
//! fast but not always shortest: for some values it gives one digit more
//! than the shortest round trip (`41.229070992685656`, where Rust's `{}`
//! writes `41.22907099268566`), so Tern runs the same steps to print the
//! same.
//!
//! ```text
//!  d = f * 2^e, and its boundaries (the halfway points to the
//!  neighbouring doubles), scaled by a cached 10^-k so that the binary
//!  exponent lands in [-60, -32]; digits are cut from the upper boundary
//!  until the rest is within the interval, then the last digit is nudged
//!  down towards d (round_digit).
//! ```

/// A 64-bit significand and a binary exponent.
#[derive(Clone, Copy)]
struct Fp {
    frac: u64,
    exp: i32,
}

const FRAC_MASK: u64 = 0x000F_FFFF_FFFF_FFFF;
const EXP_MASK: u64 = 0x7FF0_0000_0000_0000;
const HIDDEN_BIT: u64 = 0x0010_0000_0000_0000;
const EXP_BIAS: i32 = 1023 + 52;
const FIRST_POWER: i32 = -348;
const STEP_POWERS: i32 = 8;
const EXP_MIN: i32 = -60;
const EXP_MAX: i32 = -32;

/// 10^k for k = -348, -340, ..., 340: its 64-bit significand (rounded to
/// nearest) and binary exponent, `frac * 2^exp` ~ 10^k. Generated with
/// exact rational arithmetic; a test checks the exact entries.
#[rustfmt::skip]
const POWERS: [(u64, i32); 87] = [
    (18054884314459144840, -1220), (13451937075301367670, -1193),
    (10022474136428063862, -1166), (14934650266808366570, -1140),
    (11127181549972568877, -1113), (16580792590934885855, -1087),
    (12353653155963782858, -1060), (18408377700990114895, -1034),
    (13715310171984221708, -1007), (10218702384817765436, -980),
    (15227053142812498563, -954), (11345038669416679861, -927),
    (16905424996341287883, -901), (12595523146049147757, -874),
    (9384396036005875287, -847), (13983839803942852151, -821),
    (10418772551374772303, -794), (15525180923007089351, -768),
    (11567161174868858868, -741), (17236413322193710309, -715),
    (12842128665889583758, -688), (9568131466127621947, -661),
    (14257626930069360058, -635), (10622759856335341974, -608),
    (15829145694278690180, -582), (11793632577567316726, -555),
    (17573882009934360870, -529), (13093562431584567480, -502),
    (9755464219737475723, -475), (14536774485912137811, -449),
    (10830740992659433045, -422), (16139061738043178685, -396),
    (12024538023802026127, -369), (17917957937422433684, -343),
    (13349918974505688015, -316), (9946464728195732843, -289),
    (14821387422376473014, -263), (11042794154864902060, -236),
    (16455045573212060422, -210), (12259964326927110867, -183),
    (18268770466636286478, -157), (13611294676837538539, -130),
    (10141204801825835212, -103), (15111572745182864684, -77),
    (11258999068426240000, -50), (16777216000000000000, -24),
    (12500000000000000000, 3), (9313225746154785156, 30),
    (13877787807814456755, 56), (10339757656912845936, 83),
    (15407439555097886824, 109), (11479437019748901445, 136),
    (17105694144590052135, 162), (12744735289059618216, 189),
    (9495567745759798747, 216), (14149498560666738074, 242),
    (10542197943230523224, 269), (15709099088952724970, 295),
    (11704190886730495818, 322), (17440603504673385349, 348),
    (12994262207056124023, 375), (9681479787123295682, 402),
    (14426529090290212157, 428), (10748601772107342003, 455),
    (16016664761464807395, 481), (11933345169920330789, 508),
    (17782069995880619868, 534), (13248674568444952270, 561),
    (9871031767461413346, 588), (14708983551653345445, 614),
    (10959046745042015199, 641), (16330252207878254650, 667),
    (12166986024289022870, 694), (18130221999122236476, 720),
    (13508068024458167312, 747), (10064294952495520794, 774),
    (14996968138956309548, 800), (11173611982879273257, 827),
    (16649979327439178909, 853), (12405201291620119593, 880),
    (9242595204427927429, 907), (13772540099066387757, 933),
    (10261342003245940623, 960), (15290591125556738113, 986),
    (11392378155556871081, 1013), (16975966327722178521, 1039),
    (12648080533535911531, 1066),
];

fn build(d: f64) -> Fp {
    let bits = d.to_bits();
    let exp = ((bits & EXP_MASK) >> 52) as i32;
    if exp != 0 {
        Fp { frac: (bits & FRAC_MASK) + HIDDEN_BIT, exp: exp - EXP_BIAS }
    } else {
        Fp { frac: bits & FRAC_MASK, exp: -EXP_BIAS + 1 }
    }
}

fn normalize(mut fp: Fp) -> Fp {
    while fp.frac & HIDDEN_BIT == 0 {
        fp.frac <<= 1;
        fp.exp -= 1;
    }
    Fp { frac: fp.frac << 11, exp: fp.exp - 11 }
}

/// The halfway points to the neighbouring doubles, at one exponent:
/// (lower, upper).
fn boundaries(fp: Fp) -> (Fp, Fp) {
    let mut upper = Fp { frac: (fp.frac << 1) + 1, exp: fp.exp - 1 };
    while upper.frac & (HIDDEN_BIT << 1) == 0 {
        upper.frac <<= 1;
        upper.exp -= 1;
    }
    upper = Fp { frac: upper.frac << 10, exp: upper.exp - 10 };
    let l_shift = if fp.frac == HIDDEN_BIT { 2 } else { 1 };
    let lower = Fp { frac: ((fp.frac << l_shift) - 1) << (fp.exp - l_shift - upper.exp), exp: upper.exp };
    (lower, upper)
}

/// The product's upper 64 bits, rounded.
fn multiply(a: Fp, b: Fp) -> Fp {
    const LO: u64 = 0xFFFF_FFFF;
    let ah_bl = (a.frac >> 32) * (b.frac & LO);
    let al_bh = (a.frac & LO) * (b.frac >> 32);
    let al_bl = (a.frac & LO) * (b.frac & LO);
    let ah_bh = (a.frac >> 32) * (b.frac >> 32);
    let tmp = (ah_bl & LO) + (al_bh & LO) + (al_bl >> 32) + (1 << 31);
    Fp { frac: ah_bh + (ah_bl >> 32) + (al_bh >> 32) + (tmp >> 32), exp: a.exp + b.exp + 64 }
}

/// The cached power that brings binary exponent `exp` into
/// [EXP_MIN, EXP_MAX], and its decimal exponent.
fn cached_pow10(exp: i32) -> (Fp, i32) {
    const ONE_LOG_TEN: f64 = 0.30102999566398114;
    let approx = (-f64::from(exp + 87) * ONE_LOG_TEN) as i32;
    let mut idx = (approx - FIRST_POWER) / STEP_POWERS;
    loop {
        let (frac, pexp) = POWERS[idx as usize];
        let current = exp + pexp + 64;
        if current < EXP_MIN {
            idx += 1;
        } else if current > EXP_MAX {
            idx -= 1;
        } else {
            return (Fp { frac, exp: pexp }, FIRST_POWER + idx * STEP_POWERS);
        }
    }
}

/// Lowers the last digit while that brings the number nearer `frac`
/// (the scaled distance from the upper boundary to d) and stays inside
/// the interval.
fn round_digit(digits: &mut [u8], delta: u64, mut rem: u64, kappa: u64, frac: u64) {
    let last = digits.len() - 1;
    while rem < frac
        && delta - rem >= kappa
        && (rem.wrapping_add(kappa) < frac || frac - rem > rem.wrapping_add(kappa).wrapping_sub(frac))
    {
        digits[last] -= 1;
        rem += kappa;
    }
}

const TENS: [u64; 20] = [
    10_000_000_000_000_000_000, 1_000_000_000_000_000_000, 100_000_000_000_000_000, 10_000_000_000_000_000,
    1_000_000_000_000_000, 100_000_000_000_000, 10_000_000_000_000, 1_000_000_000_000, 100_000_000_000,
    10_000_000_000, 1_000_000_000, 100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1_000, 100, 10, 1,
];

/// Grisu2's digits, on the stack (at most 18 for a double; room for 20).
#[derive(Clone, Copy, Debug, Default)]
pub struct Digits {
    d: [u8; 20],
    n: usize,
}

impl Digits {
    fn push(&mut self, c: u8) {
        self.d[self.n] = c;
        self.n += 1;
    }

    fn is_empty(&self) -> bool {
        self.n == 0
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.d[..self.n]
    }
}

/// The digits of a finite, positive `d` into `digits`, and the decimal
/// exponent of the last one: `d ~ digits * 10^k`.
pub fn grisu2(d: f64, digits: &mut Digits) -> i32 {
    digits.n = 0;
    let w = build(d);
    let (lower, upper) = boundaries(w);
    let w = normalize(w);
    let (cp, k) = cached_pow10(upper.exp);
    let w = multiply(w, cp);
    let mut upper = multiply(upper, cp);
    let mut lower = multiply(lower, cp);
    lower.frac += 1;
    upper.frac -= 1;
    let mut kk = -k;

    let wfrac = upper.frac - w.frac;
    let mut delta = upper.frac - lower.frac;
    let shift = (-upper.exp) as u32;
    let one = 1u64 << shift;
    let mut part1 = upper.frac >> shift;
    let mut part2 = upper.frac & (one - 1);
    let mut kappa = 10;
    for &div in &TENS[10..] {
        let digit = part1 / div;
        if digit != 0 || !digits.is_empty() {
            digits.push(b'0' + digit as u8);
        }
        part1 -= digit * div;
        kappa -= 1;
        let tmp = (part1 << shift) + part2;
        if tmp <= delta {
            kk += kappa;
            round_digit(&mut digits.d[..digits.n], delta, tmp, div << shift, wfrac);
            return kk;
        }
    }
    let mut unit = 18;
    loop {
        part2 = part2.wrapping_mul(10);
        delta = delta.wrapping_mul(10);
        kappa -= 1;
        let digit = part2 >> shift;
        if digit != 0 || !digits.is_empty() {
            digits.push(b'0' + digit as u8);
        }
        part2 &= one - 1;
        if part2 < delta {
            kk += kappa;
            round_digit(&mut digits.d[..digits.n], delta, part2, one, wfrac.wrapping_mul(TENS[unit]));
            return kk;
        }
        unit -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(d: f64) -> String {
        let mut digits = Digits::default();
        let k = grisu2(d, &mut digits);
        format!("{}e{}", std::str::from_utf8(digits.as_bytes()).unwrap(), k)
    }

    // Expected digits from redis-server-unstable (ZSCORE of these scores).
    #[test]
    fn digits_are_fpconvs() {
        assert_eq!(show(41.229070992685656), "41229070992685656e-15");
        assert_eq!(show(3.0469008577613508), "30469008577613508e-16");
        assert_eq!(show(0.1), "1e-1");
        assert_eq!(show(1.5), "15e-1");
        assert_eq!(show(123456.789), "123456789e-3");
    }

    #[test]
    fn digits_read_back_to_the_same_double() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut digits = Digits::default();
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = f64::from_bits(x >> 1);
            if !d.is_finite() || d == 0.0 {
                continue;
            }
            let k = grisu2(d, &mut digits);
            let digits = digits.as_bytes();
            let text = format!("{}e{}", std::str::from_utf8(digits).unwrap(), k);
            assert_eq!(text.parse::<f64>().unwrap(), d, "{text}");
            assert!(digits.len() <= 18 && digits[0] != b'0', "{text}");
        }
    }

    #[test]
    fn exact_powers_are_exact() {
        let p = |k: i32| POWERS[((k - FIRST_POWER) / STEP_POWERS) as usize];
        assert_eq!(p(4), (10_000u64 << 50, -50));
        assert_eq!(p(12), (1_000_000_000_000u64 << 24, -24));
    }
}
