//! Redis Cluster hash slots: which of the 16384 slots a key belongs to.
//!
//! A key's slot is CRC16 (the XMODEM variant Redis uses: polynomial 0x1021,
//! initial value 0, no reflection) of the key, or of its hash tag, modulo
//! 16384. The hash tag is the part between the first `{` and the first `}`
//! after it, when that part is non-empty; otherwise the whole key counts. So
//! `{user1000}.following` and `{user1000}.followers` share a slot, while `{}x`
//! and `x{` hash whole.
//!
//! The keyspace places shards on slot boundaries ([`crate::Keyspace::locate`]):
//! keys sharing a tag share a shard, and a future cluster mode hands out whole
//! shards.

/// Redis Cluster's slot count.
pub const SLOTS: usize = 16384;

/// CRC16-XMODEM tables for slicing by 8, built at compile time:
/// `CRC16[k][x]` is the CRC of byte `x` followed by `k` zero bytes.
///
/// One byte at a time, each step waits on the previous table load (about six
/// cycles a byte, 600 for a 100-byte key); eight bytes at a time the eight
/// loads are independent and overlap, at the price of 4 KiB of tables.
static CRC16: [[u16; 256]; 8] = build_tables();

const fn build_tables() -> [[u16; 256]; 8] {
    let mut t = [[0u16; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
            bit += 1;
        }
        t[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev << 8) ^ t[0][(prev >> 8) as usize];
            i += 1;
        }
        k += 1;
    }
    t
}

/// CRC16-XMODEM of `bytes`, as Redis's `crc16()`.
#[inline]
pub fn crc16(bytes: &[u8]) -> u16 {
    crc16_scan::<false>(bytes).0
}

/// The Redis Cluster slot of `key` (`CLUSTER KEYSLOT`), 0..16384.
#[inline]
pub fn key_slot(key: &[u8]) -> u16 {
    // Most keys have no `{`: take the CRC of the whole key while looking
    // for one, in the same pass, and start over on the tag only if found.
    let crc = match scan(key) {
        (crc, false) => crc,
        (_, true) => tag_crc(key),
    };
    crc & (SLOTS as u16 - 1)
}

/// The CRC of `key` and whether it holds a `{`. A call, so that the
/// locate step it sits in stays small enough to inline into the loops over
/// keys. (Carry-less multiplication takes fewer instructions than the
/// tables, but its chain of dependent multiplications made the pipeline
/// planner's bucket prefetch wait longer: MGET ×10 cost more CPU with it.)
#[inline(never)]
fn scan(key: &[u8]) -> (u16, bool) {
    crc16_scan::<true>(key)
}

/// The CRC of `key`'s hash tag (it has a `{`, the uncommon case).
#[cold]
#[inline(never)]
fn tag_crc(key: &[u8]) -> u16 {
    crc16(hash_tag(key))
}

/// The bytes that decide `key`'s slot: its hash tag, or the whole key.
#[inline]
pub fn hash_tag(key: &[u8]) -> &[u8] {
    if let Some(open) = memchr::memchr(b'{', key) {
        let rest = &key[open + 1..];
        if let Some(close) = memchr::memchr(b'}', rest) {
            if close > 0 {
                return &rest[..close];
            }
        }
    }
    key
}

/// The CRC of `bytes` and, if `BRACE`, whether they hold a `{`.
#[inline(always)]
fn crc16_scan<const BRACE: bool>(bytes: &[u8]) -> (u16, bool) {
    // The bytes before the whole 8-byte words go first: from a zero CRC each
    // contributes its own table entry and none waits on another, so a key
    // takes one dependent step per word plus one (a 15-byte key two, not
    // the four of 8 + 4 + 2 + 1).
    let (head, mut words) = bytes.split_at(bytes.len() % 8);
    let mut crc = 0u16;
    let mut brace = false;
    for (i, &b) in head.iter().enumerate() {
        crc ^= CRC16[head.len() - 1 - i][b as usize];
        brace |= BRACE && b == b'{';
    }
    while let Some((b, rest)) = words.split_first_chunk::<8>() {
        if BRACE {
            // Off the CRC's dependency chain, so nearly free: a zero byte
            // of the word xor `{{{{{{{{` (exact, no false positives).
            let x = u64::from_ne_bytes(*b) ^ (b'{' as u64 * 0x0101_0101_0101_0101);
            brace |= x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080 != 0;
        }
        crc = block(crc, b);
        words = rest;
    }
    (crc, brace)
}

/// The CRC after an `N`-byte block (2 <= N <= 8) from `crc`. The CRC is
/// linear and the block shifts the whole register out: the running value
/// folds into the block's first two bytes, and each byte contributes its
/// table entry for its distance from the block's end. The `N` loads are
/// independent of each other, which is the point.
#[inline(always)]
fn block<const N: usize>(crc: u16, b: &[u8; N]) -> u16 {
    // The bytes the running CRC does not touch first, so that only two
    // loads and one xor wait on the previous block.
    let mut x = 0;
    let mut i = 2;
    while i < N {
        x ^= CRC16[N - 1 - i][b[i] as usize];
        i += 1;
    }
    let [hi, lo] = crc.to_be_bytes();
    x ^ (CRC16[N - 1][(b[0] ^ hi) as usize] ^ CRC16[N - 2][(b[1] ^ lo) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Redis's `crc16()`, bit by bit, as the specification the tables must meet.
    fn crc16_bitwise(bytes: &[u8]) -> u16 {
        let mut crc = 0u16;
        for &b in bytes {
            crc ^= (b as u16) << 8;
            for _ in 0..8 {
                crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
            }
        }
        crc
    }

    #[test]
    fn crc16_check_value() {
        // The XMODEM check value, also in Redis's crc16.c.
        assert_eq!(crc16(b"123456789"), 0x31c3);
    }

    #[test]
    fn sliced_crc16_matches_bitwise_at_every_length() {
        let bytes: Vec<u8> = (0..300u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        for n in 0..bytes.len() {
            assert_eq!(crc16(&bytes[..n]), crc16_bitwise(&bytes[..n]), "length {n}");
        }
    }

    proptest::proptest! {
        #[test]
        fn sliced_crc16_matches_bitwise(bytes: Vec<u8>) {
            proptest::prop_assert_eq!(crc16(&bytes), crc16_bitwise(&bytes));
        }

        /// The one-pass brace check finds every `{`, wherever it sits
        /// (the bytes before the 8-byte words, and the words).
        #[test]
        fn key_slot_is_crc16_of_the_tag(key in proptest::collection::vec(
            proptest::sample::select(b"{}a\xff\x00z".to_vec()), 0..40)
        ) {
            proptest::prop_assert_eq!(key_slot(&key), crc16_bitwise(hash_tag(&key)) & 0x3fff);
            proptest::prop_assert_eq!(crc16_scan::<true>(&key), (crc16_bitwise(&key), key.contains(&b'{')));
        }
    }

    #[test]
    fn brace_found_at_every_position() {
        for len in 1..40 {
            for at in 0..len - 1 {
                let mut key = vec![b'k'; len];
                key[at] = b'{';
                key[len - 1] = b'}';
                let tag = &key[at + 1..len - 1];
                let want = if tag.is_empty() { crc16_bitwise(&key) } else { crc16_bitwise(tag) } & 0x3fff;
                assert_eq!(key_slot(&key), want, "length {len}, brace at {at}");
            }
        }
    }

    /// `CLUSTER KEYSLOT` of redis-server-unstable (8.4, cluster mode) for
    /// hash-tag edge cases, binary keys and random keys.
    const REDIS_KEYSLOT: &[(&[u8], u16)] = &[
        (b"", 0),
        (b"{}", 15257),
        (b"{", 4092),
        (b"}", 12090),
        (b"}{a}", 15495),
        (b"a{b}c{d}", 3300),
        (b"{{a}}", 10276),
        (b"{a", 10276),
        (b"a}", 5921),
        (b"{}a", 10875),
        (b"a{}", 6082),
        (b"{}{a}", 13650),
        (b"{a}{b}", 15495),
        (b"{a}", 15495),
        (b"a", 15495),
        (b"foo", 12182),
        (b"bar", 5061),
        (b"{user1000}.following", 3443),
        (b"{user1000}.followers", 3443),
        (b"foo{}{bar}", 8363),
        (b"foo{{bar}}zap", 4015),
        (b"foo{bar}{zap}", 5061),
        (b"123456789", 12739),
        (b"\xff", 7920),
        (b"\xff\xff\xff", 4716),
        (b"\x00", 0),
        (b"\x00\x00", 0),
        (b"{\xff}", 7920),
        (b"\xff{\x00}\xff", 0),
        (b"{\x00}", 0),
        (b"}}{{", 15093),
        (b"{}}", 14790),
        (b"{{}}", 4092),
        (b"a{ }b", 9314),
        (b"key:000000000001", 8924),
        (b"memtier-1", 3498),
        // 1000 bytes, built in the test
        // 503 bytes, built in the test
        (b"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz{q}", 11958),
        (b"\x0d\x0a", 5910),
        (b"{\x0d\x0a}", 5910),
        (b"~\x8a", 7060),
        (b"{a}{}}}a", 15495),
        (b"key:000239730165", 15491),
        (b"\xffz\xff\xffzyyx}}", 16265),
        (b"user:{4511}:field21", 6299),
        (b"s", 3828),
        (b">\xac", 4860),
        (b"a", 15495),
        (b"key:000219496121", 4274),
        (b"\x00x\x00x{zyy{xxyy\xff}z", 13920),
        (b"user:{7972}:field65", 11491),
        (b"BYo;^", 1705),
        (b"\x824>-\x8e\x8f<\x0e", 9650),
        (b"}aa", 7877),
        (b"key:000515865752", 7648),
        (b"x\x00\x00", 12713),
        (b"user:{7944}:field58", 6518),
        (b"Ul,@\\R>Yn^(h2^zB", 10523),
        (b"\xe1\x09\xcf\xd8\x0a\xb1\xbc\xf1\x86\xb6\x9a`\x15\xf0\x830\xc62\x11b\x9f\x0c\x00\x90\xb7\x80:\x11Je\x00u\x80\x87]\x7fj\xa9\x95\xbc\x10Qe\xbb\xfb\xc4}\xc6\xa0\xf9\x10~\xdb\xf0\xad-\x864Bf\x1bHl\x84\xf9\xe5@\xc2\x1a6\x83\xbc\xd9\xd6A\xe3q.KXK\x08q\xb4\x17\xd0\xef\x88\xf0\xa5'\xbb\x1f1#\xda:\x1aW\"", 8135),
        (b"{", 4092),
        (b"key:000145150924", 12692),
        (b"x}{\x00\x00zz\x00yx{\xff{\xff}\xff", 11964),
        (b"user:{8324}:field0", 8447),
        (b">| M./RPYEL|J#@1DhzG;cjX#r(XKiQlV@wU9#P{\\?Qb/<>8@)?+Ztg&#8vwmsDV", 1675),
        (b"s\"&^\xbe\xebg\xc46\xba\xf2o\xb2\xaa\xfe\x9f\x19Y\xebD\x8c\xf3\x9c\x18N\x1c\x0f\x9d\xf8\xba\x97\xbc", 7424),
        (b"bab", 500),
        (b"key:000826586793", 7263),
        (b"}x", 410),
        (b"user:{5067}:field51", 15502),
        (b"\\mL6L?gqMJbW.!%GB5F99.a~<QDlX.Q.Xm)ze>'ke:edkP8d*0Np]/*+gj=<-1\\g\\HQa(ruN/`KB5Z]{,pM%dYH!'dP9?e-May5C", 1081),
        (b"\x19[\"\xd8\xaf\xf6`\xdfN\xd7\x9a|\x97nW=", 7885),
        (b"babbb}{a", 1701),
        (b"key:000245650851", 10899),
        (b"}", 12090),
        (b"user:{565}:field35", 10128),
        (b"><J1=&C7 fUq`C^Y>&_3Z:{}rA9`jsG/_qS#]dIVHEeId(s!K(?48X@X_zQQ Si>", 13357),
        (b"\x92/", 11012),
        (b"b}}}{{}}{}{{bab{a}}ab}aab}bbb}ab{ba{{abaaaab}ba{{}}a}aaaa}baba{{", 4092),
        (b"key:000045052828", 1219),
        (b"y}z\x00zy\xff}}\xff\xffz\x00\x00}\x00yyz}x}zx\x00}\xff\x00}{{y\x00\xff\x00}}zxx\x00\xffy\xff\x00zx\xff{{\xff{xxz}{x{{\xff{xz", 900),
        (b"user:{5497}:field77", 12400),
        (b"P~Pi0JR8/0dPS9F/{Mp(lGq`BugDY?%~", 12290),
        (b"\xe48\xc7;\xc1\xc7\xaa<\xaa,\x96s\x9fn6\xa4\xf9\xea\x1c\x8f\x95\x96C\xaf\x9d\x83\xf5-0\xe5\xf1\x8b\x00\x99\xc3\x8f\xa3HO+\x89Ue\xfbf\xcd\x8e\xc6\xd3\xa024\xf5\xa48w\xd4W\xce\xe5\x0f\x80\xb7\x9f\xf1\xdc\xcc\x8d\x86\xee\xca\\\x97k\xe8\xd1\xc2\xe5\x8c_\x14\xf4\x93B7p\x11\x0bW>H=y\xf8jVn\x13\xf3\xa6", 5070),
        (b"a}}", 15716),
        (b"key:000124308196", 12787),
        (b"{\x00}", 0),
        (b"user:{9826}:field25", 1784),
        (b"]K40OA^Aa<", 1019),
        (b"\x96z\x81\xb4&\x13a\xe1\xcb\x91\"\x0a\x08\xef\xfa\xf7", 13424),
        (b"ba{}a", 6210),
        (b"key:000346014041", 3508),
        (b"\xffx\xffz\x00zz{{{\x00{{\x00}{", 2845),
        (b"user:{2344}:field7", 8946),
        (b"B[2A/3uCf-I>E)4mUReZ!EbiVt,ifD(}#5nK{|l&X-T)e3j3T(jit(%u=Ng>=1p)?<z:h6KDk]:h7&'zQ-SC}[/S^YH\"M>c$}1LH", 9613),
        (b"\xd6", 11195),
        (b"}a{ba", 10924),
        (b"key:000220520522", 4462),
        (b"{{zx}", 12532),
        (b"user:{5279}:field14", 17),
        (b"pY=Iop~;", 4310),
        (b"\xe0)\xee\xf6;$\xae8\x006\x04\x04\x0d\x18\xf0\xc1\\\xf7\x02\xcaP\xc6t\x81V\xe2\xdf\xb7\x82=\xf32\xa4\x1fd\xdf\xb0\xa7\xc5o\xaf\xe9\x05\x94\x1d7\xbd\xc62,P\x99*\xfd.\x09}\xa3]\xed\xba\xfan\xea\x1b\xc4LFV\x96\xf4B\xd5}!U\xf8\xf0\xcb\x80`\xfcO\xc2\xf9s\xb6\xc1vA<l\xc7\xebY8SB\"\x9c", 25),
        (b"b{}{abb}b}bb}{}b{ab}ba{{}ab}}{aaa{b{ba{a}}}}baba{b{aaa{}b{}bbba{{bb{b{b}{{}b{a{{{{a{b{b}b}bba}{{}{a{", 13392),
        (b"key:000552495988", 10692),
        (b"x", 16287),
        (b"user:{8284}:field14", 14340),
        (b"N[Avmf-x~t#M:!2KKr*P~Uf]EL^MEX;[O8Y&spt$IwYYpxXi\\ o8EM)V}tE{&ysTRC\\|:b@x)%bbV!GXdNU8'^<OD@R5d9s+JhgL", 9270),
        (b"5\x16\x9e\xabv", 12138),
        (b"}bbaaa}babbaab}baabbaabb}baaaabb{ab{a{a{}}ba{}}{{}a}a}b{{{a{}{aa", 7714),
        (b"key:000687958526", 11465),
        (b"{\xff", 2643),
        (b"user:{2299}:field65", 12851),
        (b"]2|34Z'1R5", 7178),
        (b"\xa7\x87n\xb3\xb4\xc1Q\x0f", 2717),
        (b"{", 4092),
        (b"key:000953068699", 12618),
        (b"y}y}\x00\x00\x00\x00", 14060),
        (b"user:{6042}:field81", 4501),
        (b"Oe2qAkc+", 3702),
        (b"\xbe\x17\xbe", 14607),
        (b"b}{a{a}aa}aabb{{b}a}}aaaaaa}b{}{", 1151),
        (b"key:000492535181", 10454),
        (b"y\xff}z}z\x00\xff}}}\x00z\x00z\xff{yy\x00{{y{zx{yx\xffy\xffz}y{{z\x00\x00{zyxzz}x\xff}\xffx}\x00\xffy}\xff{\x00\x00zzy", 7307),
        (b"user:{7628}:field24", 7789),
        (b"@.,", 7594),
        (b"?", 1980),
        (b"bab", 500),
        (b"key:000265565229", 9756),
        (b"}", 12090),
        (b"user:{3623}:field62", 9719),
        (b"se", 8457),
        (b"|\xda\xe18\xe0\xc4f\x0c\xad#f:\x19\xbf\xfd\xa6\xe6y\xef\xd8j\x0a\xf9\xe9\xeb\x8c\x94\xe1\xd1s\xc6\x90", 1857),
        (b"aa{bb", 5566),
        (b"key:000461682800", 7613),
        (b"\x00x\x00\xffz\x00z\x00}z", 12237),
        (b"user:{5938}:field63", 11269),
        (b"a@", 12511),
        (b"\x87\xb8_\x7f\xdbF]\xce", 4056),
        (b"{b{{ab}abbb{{abbba{aa}}bb{aab}a{", 7475),
        (b"key:000058204691", 12358),
        (b"zz}", 5985),
        (b"user:{886}:field38", 13997),
        (b"NB", 1605),
        (b"\xf6y\xdbX3C\x7f\x93", 2711),
        (b"{", 4092),
        (b"key:000984073621", 6102),
        (b"x{}{\x00xx}{}\xffz{\xffy}}y}z\xffxx}y{\xff\xff\x00\xff{}\x00xy}x}yx\x00z}zz\x00}zy}}z{\xffz\x00}{\x00x\x00y{\xff", 3607),
        (b"user:{930}:field6", 15777),
        (b"Vd=Mk?wTVf_1@v-Z", 11132),
        (b"\xaaI\xf3\\\x12\xd2BL", 16173),
        (b"}", 12090),
        (b"key:000085222753", 15661),
        (b"y\xff{", 2714),
        (b"user:{3653}:field62", 15456),
        (b"p>1zn3Y_MZh%/TSNU88k:t6<S;fgcNq.", 4868),
        (b"\xe7=", 11995),
        (b"}}", 4415),
        (b"key:000269097948", 13713),
        (b"x\x00yz\xff", 8272),
        (b"user:{3258}:field91", 4555),
        (b"UT]vp-']", 5268),
        (b"p\x8f\xe3\x11\xef", 4530),
        (b"{a{bbb{a}}aa}b{{", 14735),
        (b"key:000763348985", 7847),
        (b"\xffxy{\xffxz}", 4430),
        (b"user:{1342}:field87", 6632),
        (b"T", 6769),
        (b"/\xf7\x06\x0a\x8b\x96\xca^1~\x08\xfc9\x80v\x9a", 11964),
        (b"bb{}b}}}{abb{}{b", 12711),
        (b"key:000890970097", 10050),
        (b"\x00\xff\x00\x00\x00\xff\x00y\x00}y\xff}\x00\xffyxz{yyzx\xff}z{z\x00y{z\xff{xxy\xffz{{yyx\xffz\xff{yy\x00z\x00}yz\xffx\xff}\x00{}{\xff\xffxy\x00x\xff\x00y{zy\xff\x00xxxx}y\x00z\xffx\x00x{\x00x\xff}x}{x\xff", 1073),
        (b"user:{3664}:field93", 6612),
        (b"6kgsH", 3227),
        (b"\xc2\xbdH\x89\xa7h\xbb\xc4\x83\xf9\x13\xe5J\xbaK\x1c3POl\xcb$\x06\xde\x14\xc1_\x01>i\x02\xd7B.\xeb\xbf\xfc\xb4\xba\x9d\xa1\x88GU\x99\x179#xo&\xbeP\xc7\xaeFM\xd2\x11\x92\xa7\xf4\x90PUA9E7\xack$~\x89\x0b\x98=\xea\xcb\xcf\x8fA\xef\xec\xb7\xac\x9a\x88\x1d\x7f\x05\xf10\xa5\x13d\x913w*", 12727),
        (b"a}}ab{ab{{a}bb{a}{}{a}aab}bb}b}ba}aa}}aa}}ab{b{b}b}ba}{a{{}{b}b}bbbaaa}ab{{b}aa{a}a{}bba}{a{{b{a}bb{", 2026),
        (b"key:000171606597", 11600),
        (b"{\xffy}z", 11329),
        (b"user:{744}:field88", 16307),
        (b"H<5", 4610),
        (b"wZ!", 2223),
        (b"{a}{b}}}baba{b}b", 15495),
        (b"key:000114290590", 11679),
        (b"\xff{yz\x00\x00}zz\xff\xff\x00xzxx", 11979),
        (b"user:{9226}:field58", 313),
        (b"F_]", 15060),
        (b"XZ\xacZ\xfd\x82'\xa3\xb3\xa7", 13487),
        (b"{}aba}{{b}}aaaab", 778),
        (b"key:000613478181", 15658),
        (b"z}}x}}y{", 2040),
        (b"user:{3871}:field3", 8513),
        (b"OU*R4", 8930),
        (b"Z\xc6\x01\x96U", 2188),
        (b"}aab}}}a{{}a{}b{ab}aab{bb}b{a}}}}b}}b}aabbb}ba}{}{b{}}{a}}}}aa}{ab{b{}}bbaba{{{}b}a}a}babab}b{aa{{b}", 4092),
        (b"key:000851279152", 7353),
        (b"y}\xff{}", 15091),
        (b"user:{6627}:field77", 6454),
        (b"nQSJJye%veWI0R<{", 6690),
        (b"T\xf3\x9c7\xdfu\x15\xc0", 14257),
        (b"{}", 15257),
        (b"key:000351360547", 15312),
        (b"\x00z{\x00\x00\xffx}}\xff{yxzy\xff{y\x00\xff\xffx\xff\xff\x00z{xx\x00\x00{\xff}\xff{{yz\x00zz}x{\x00yy}\x00x}{xz{y\x00xz\x00{{x\xffz}\x00z\xffyyz\x00yy{x{}x{xy}zyxxzy}zz{\x00\x00\x00xy", 15456),
        (b"user:{7631}:field2", 15477),
        (b", qK@&ER_{U^4;pC,!a3ScEHf>o~j_o6/tQ'X`PsF!dU*%WVAswF`Fj;]pLdwBy'^M=ZBbeu2Iv<f1dab_cMJ(GUV7DG&g=5LPYh", 2895),
        (b"\xb9\x85\xabI\xc4\x1e\xd2\xe4", 1100),
        (b"aaa", 10439),
        (b"key:000578497235", 1506),
        (b"{z}", 8157),
        (b"user:{6720}:field44", 7905),
        (b"&", 1188),
        (b"P\xe2\x05\xb2\xa0\x7f\xa90\xfaC", 15371),
        (b"}{b}a}}{aa", 3300),
        (b"key:000320958124", 12223),
        (b"}{\xff}{\xffyyy\xff", 7920),
        (b"user:{1938}:field66", 9972),
        (b"0Ml.\"", 5175),
        (b"\x84{\xb2\x81\x09", 7843),
        (b"b{a}aa{a", 15495),
        (b"key:000159529763", 4364),
        (b"{{y\xffxyxz\x00\x00}}\xff{\x00x", 1615),
        (b"user:{6429}:field35", 5784),
        (b"$3h?lU#V2]lS@oUn|crp@CI#Q=9dJyd 6-% krgg\"kO\"_N4C:o+PxCJ0SV74<@&y};x(~56Nc:L7wG]/dJ`jBP/LT-Xn^%.h`|A-", 3075),
        (b"\xd3N>y\x0a\x11\xc0\x09m\xc5", 6426),
        (b"{b", 6215),
        (b"key:000772197247", 2591),
        (b"}xy", 13335),
        (b"user:{9213}:field44", 1231),
        (b"N&K(C@OS", 7088),
        (b"6d\x90\x15\xd8\xfc\x1b\x02\xf0\xb3\xa9\xd9x\x19t\xc6\x97$-B\xdc\xda?S\x8d\x88\xef\xee\xc9\x82\xfcj\x90\x81\xbaW\x1a@\x90\xcbD\x1d\x8f[c&\xa3\x83K\x9c\xea\x82/\x1a\xdfY\xbd\xb5\xc3\xd6T\xca,\xae", 14391),
        (b"{ba", 14646),
        (b"key:000254830209", 8507),
        (b"\xff\xff}x}", 9631),
        (b"user:{7729}:field18", 14716),
        (b")N~$wad3cp", 8424),
        (b"\xc1\xb3\x93*fy^\xe8\xf4E", 13553),
        (b"{{{a{b{a{aa{}a{{b}}bb}{aa}b{a}ba", 4570),
        (b"key:000496198342", 3063),
        (b"zzx", 1988),
        (b"user:{2114}:field34", 13159),
        (b"?)Q``v7zUqHQE/5]zgk|W(k<I']1TSiE", 10977),
        (b"a\xf2\x10\x97p", 15648),
        (b"}{b", 542),
        (b"key:000191724626", 2689),
        (b"}{y", 8516),
        (b"user:{4724}:field53", 13069),
        (b"1", 9842),
        (b"\xfb2\xeb\xddl\xb2\xabAm\xc1", 11023),
        (b"abb{b}a{}{a{ab}}", 3300),
        (b"key:000497561593", 14180),
        (b"}y\x00\xffy\x00x{y\xff\xff\x00y}y\xffxyx{}{{z{x\xff\x00\xffxzyyyxz{{}\xff{y\x00\xff{xzx\xffzyy\x00y}}y\xffz\x00xy}{\xffyxx{z{\x00zyxz{xx\xff\xff{\x00y}\x00x\x00y}\xff\xff\x00zyy}xxy", 7812),
        (b"user:{1983}:field11", 2917),
        (b"`lfE0YWo<1j~uq`n", 9470),
        (b"\xed\xf5\xf7\x8d\x80ZL\xcb\xa3\x15", 13686),
        (b"}}aba}}}}{b}{b}aa{b}b{{b}aaa{b{{}a{b}bb}{b{}b{baa}{{b}a}}}babb}{}bb}{}aa{}}ba}ba{{b{a{a}a}{{}bb{}{}{", 3300),
        (b"key:000150334213", 5777),
        (b"y\x00}\xff\x00yxx{{yz\xff\xff\xffzz{}{\xff{\xffz{yz}}\x00}yy\xff\xffy\x00{}\xff}y{}y\xffy\xff\xff{xxy{z{xxzx\xff\xffx{y}\xffyyyzx}z\x00zyz{{\xffyz{yyzyy}\x00}x{x\x00\xff\xff}}", 862),
        (b"user:{3452}:field48", 545),
        (b"o)\"LE/ZgO9M@[g3Gn\"}\"(4\"ti)$_1N]R", 3493),
        (b"\x8e\xf7\x1b\xd0-", 12386),
        (b"ab", 13567),
        (b"key:000077540576", 13319),
        (b"}y}x\xffyxz", 3750),
        (b"user:{9095}:field86", 960),
        (b"&9", 2874),
        (b"wo\xdd", 7260),
        (b"{{", 7007),
        (b"key:000497287458", 5154),
        (b"z}\xff\x00yy{z}y{zz}xzx\xff\xff}zyyyzz\xffx\x00zyy\xffz}z}xy}{{y{{z{z\xff\x00y}\xff\x00}}\xffyzxxy\x00z", 8157),
        (b"user:{9108}:field76", 8133),
        (b"Of", 4498),
        (b"\x9c%\x90\xc1Px_u.\xa1\x9e\xeb\xb4X.@\xdf\xe8\xa0\xab;\xd9\xa2\xcd\x1b\x85?\x0e\xbd;,\xccKW,\x1f\xa8\xba\x8a\xd3\xe0\x9eF\xca\xf9\x13\x9d3*\xcf3\xd12&/\xd2Qo\xecV`p4\xee\xd3\xed\x95\xeeQf$\xea\xd0(\xe8\xfa\xf5\xad\xd4\x15\xf9\xf1x\xde\x98\x1f\x03\x19\xe0\x08\xc37\x9f\x99\xd5\xfb>\x90\xc7\xb9", 5173),
        (b"bbb}{bbb}{", 5287),
        (b"key:000761641611", 6175),
        (b"x", 16287),
        (b"user:{134}:field92", 5252),
        (b"$Yc%I1I3#%pqH#5XY gM:H}T<U'nY97L", 15307),
        (b"\x99\xfeI\xb4\x12*B\xd8\x94B", 623),
        (b"b{ba}{}b", 4559),
        (b"key:000623074067", 2101),
        (b"{\xffzx\xff{zy", 13457),
        (b"user:{4167}:field60", 15626),
        (b"VV)pZlZ.YOg1A+fE", 7734),
        (b"\xd8\xd7\xe7\xdd\xc6q$7KKN?\x19\xef\xf1\x11*\xde\xcer\x88\xfb\xff\xf4:\xb4\xa5\x0cI\xb3\xf6\xc6r+t\xd5\x0c\xd2v\xd2\x03\xdbu\xc6k\x13\x03\xb0)}p\x176\xb7\xdb\x87\xa6\xb9\x87\xdfj\x88\xb2\xf4", 8130),
        (b"b{aa{bba", 7371),
        (b"key:000626850613", 6417),
        (b"x\x00z", 11892),
        (b"user:{2384}:field5", 10143),
        (b"#'", 1840),
        (b"Z\xee/]\xeam)\xbf\xfc\xccJ\x01\xa2\xe8\x7f\x8c*b\x88\"\x1d\xec\xdb\x10\xfe\xceP\xc0p\x14\xbe\x09!G\xff\xdb\x15l\xff\xe2}O3\xc0\xcd\xe2\xe9\xe6\xc7\x11\\1\x88\xf7\xbd\x88\xbc\xd1+1\xb9\xdb\xc9\xa2", 2615),
        (b"ab}a{a{}aa", 14311),
        (b"key:000853162805", 6007),
        (b"\xff}{}z{}}}{{zx\x00\x00x\x00xy}y}yz\xff}z{x}yzx\x00y}{\xffyy}y\xff}\xff}\xff}zzxz{\xffy\xffz{\xff{yz\xff{{\x00y}{z\xff{yzxz\xff\xff}z}y\x00\xffzxy}\x00y}}\x00x}y}xx\xff", 3407),
        (b"user:{7560}:field57", 2801),
        (b"!<U6v]~6E ", 4460),
        (b"\x1e\x84ec\"\xfd\xc4kv'/pu\xcd3\xc1\xd0\xe4\x06\x0e\xf2\x96\xbe\xff&\xec\x95;\xd4\xf0;\xd3", 577),
        (b"}{b{}", 8884),
        (b"key:000359694655", 3671),
        (b"}", 12090),
        (b"user:{8572}:field6", 3436),
        (b"\"81", 744),
        (b"m\xcf", 5589),
        (b"ab{aa}b}}}abab{a", 1180),
        (b"key:000419516272", 7025),
        (b"}\xffy}y", 8317),
        (b"user:{7625}:field81", 4032),
        (b"T", 6769),
        (b"\xf3B\xa4?\xb1", 4477),
        (b"babab{aaaa{}{a}a{baa}aa}}{}}{{a}", 1879),
        (b"key:000941610984", 14113),
        (b"\x00y{yyyx}{z", 15045),
        (b"user:{3263}:field14", 13811),
        (b"+p", 9355),
        (b"\xcdq9\xf9\xb2\xb4F\x94Vh\xf8\x98+\x8b\x09\x9c%\xcaM,\xb2\x16K\x0d\xe3\xfb\x0cD\x00\x99\xfa\xd0q\xc1j!\xe7w\xf9\x1d#t\x17\xa7\xbe\xae:\xd9\xa4\xf9\xfd\xec\xcb\x7fQCu\xa0\xc9}\xd2\x81@\x18/4\xa2X\xfb*\xdd\xf5\xf0\x9e\x1b\xc5\x0f)\x15\x12\x91:\xf9m\xd6\xe1\x08\x0a\xec\xb8z\x1d\xc2|\xd9\x14\xa2{\xb8{", 8846),
        (b"a", 15495),
        (b"key:000932523047", 14538),
        (b"}{\xffyx}{zx}}y}z{}x}y\x00}{}\xff\x00xy\xff}xx{{zx\xff\xffx}}\xffx\xffz}\x00\xffy\x00}z}x\xff\x00{\xff}x\x00}y{x", 573),
        (b"user:{8814}:field92", 1373),
        (b"8Ab", 7709),
        (b"\xc8\xf5", 8263),
        (b"aba}{", 6805),
        (b"key:000596640415", 1710),
        (b"}\xff\x00\x00xxx{", 15114),
        (b"user:{2147}:field97", 15601),
        (b"d;ax!D5]", 9419),
        (b"C\xea\\", 8445),
        (b"}}a{bb{bab", 13294),
        (b"key:000511881792", 7186),
        (b"xx{z\x00\x00{xyxxxz\xff\x00\x00", 15006),
        (b"user:{5420}:field5", 7277),
        (b"JD|4F6LXu. <s3_+Gg_N-daw{B$7P 01", 8758),
        (b"{\xb2ev`\x95\x84fd\xf6d/\xbe\xd5O \x9a\xe1\x98\xb7N\xa9m\xd8\xfd\xa5_\xee\xf5'k5", 10237),
        (b"}", 12090),
        (b"key:000304087588", 11822),
        (b"\xff{", 3075),
        (b"user:{7551}:field29", 3971),
        (b"6%~$t`#e<U+WyhWzWYJtRHPw-x3BH*@/w>:czc@P_o7U4-N,BP:ps`k]/E;wlnAf", 10955),
        (b"\x09\x1f\xbdb\x82@HI", 15454),
        (b"ab", 13567),
        (b"key:000423738379", 2952),
        (b"yxx", 14582),
        (b"user:{8725}:field46", 11294),
        (b"aG", 56),
    ];

    #[test]
    fn slots_match_redis_cluster_keyslot() {
        for &(key, slot) in REDIS_KEYSLOT {
            assert_eq!(key_slot(key), slot, "key {:?}", key.escape_ascii().to_string());
        }
        // Long keys, same source.
        assert_eq!(key_slot(&[b'x'; 1000]), 3195);
        let tagged = [&b"{t}"[..], &[b'y'; 500]].concat();
        assert_eq!(key_slot(&tagged), 15891);
    }

    #[test]
    fn hash_tags() {
        assert_eq!(hash_tag(b"{user1000}.following"), b"user1000");
        assert_eq!(hash_tag(b"foo{}{bar}"), b"foo{}{bar}");
        assert_eq!(hash_tag(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(hash_tag(b"foo{bar}{zap}"), b"bar");
        assert_eq!(hash_tag(b"{"), b"{");
        assert_eq!(hash_tag(b"}{a}"), b"a");
        assert_eq!(hash_tag(b""), b"");
        assert_eq!(key_slot(b"{a}x"), key_slot(b"a"));
    }
}
