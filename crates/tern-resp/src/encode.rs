//! Reply encoding for RESP2 and RESP3 into a caller-owned, reused buffer.
//!
//! Types RESP2 lacks are written as Redis writes them for a RESP2 client:
//! a map becomes a flat array of 2N items, a double a bulk string, a
//! boolean an integer, a null `$-1` (or `*-1` for a null array).

/// Appends replies to `out`. Cheap to build per reply: it is just a flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoder {
    pub resp3: bool,
}

/// `prefix`, `n` in decimal and CRLF (a header is written for every reply).
/// Up to four digits (counts, and the lengths of most values), the line has
/// a length known at each arm, so it is stored without a copy call, and
/// its digits come from [`PAIRS`] with no chain of divisions; longer ones
/// are built on the stack from the end and appended in one copy.
#[inline]
fn put_len(out: &mut Vec<u8>, prefix: u8, n: i64) {
    match n {
        0..=9 => out.extend_from_slice(&[prefix, b'0' + n as u8, b'\r', b'\n']),
        10..=99 => {
            let [a, b] = PAIRS[n as usize];
            out.extend_from_slice(&[prefix, a, b, b'\r', b'\n']);
        }
        100..=999 => {
            let n = n as usize;
            let [a, b] = PAIRS[n % 100];
            out.extend_from_slice(&[prefix, b'0' + (n / 100) as u8, a, b, b'\r', b'\n']);
        }
        1000..=9999 => {
            let n = n as usize;
            let ([a, b], [c, d]) = (PAIRS[n / 100], PAIRS[n % 100]);
            out.extend_from_slice(&[prefix, a, b, c, d, b'\r', b'\n']);
        }
        _ => {
            let mut line = [0u8; LEN_LINE];
            let i = len_line(&mut line, prefix, n);
            out.extend_from_slice(&line[i..]);
        }
    }
}

/// `PAIRS[i]` is `i` (0..100) in two decimal digits.
static PAIRS: [[u8; 2]; 100] = {
    let mut t = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    t
};

/// Room for a prefix, a sign, 19 digits and CRLF.
const LEN_LINE: usize = 23;

/// Writes `prefix`, `n` and CRLF at the end of `line`; where it starts.
#[inline(always)]
fn len_line(line: &mut [u8; LEN_LINE], prefix: u8, n: i64) -> usize {
    let mut i = LEN_LINE - 2;
    line[i..].copy_from_slice(b"\r\n");
    let mut v = n.unsigned_abs();
    loop {
        i -= 1;
        line[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if n < 0 {
        i -= 1;
        line[i] = b'-';
    }
    i -= 1;
    line[i] = prefix;
    i
}

/// Formats a double the way Redis 8 replies with one (`d2string`):
/// `inf`/`-inf`, `0`/`-0`, an integer within ±2^62 as an integer, else
/// fpconv's layout of its Grisu2 digits (see [`crate::grisu`]; the shortest
/// that read back to the same value, or one more):
/// plain digits while the exponent stays near them (`123456789012345680`,
/// `0.0001`), scientific otherwise (`1e+20`, `1.5e-7`, no exponent padding).
pub fn format_double(d: f64, buf: &mut String) {
    buf.clear();
    buf.push_str(DoubleText::new(d).as_str());
}

/// A double as [`format_double`] writes it, formatted on the stack: a
/// reply of a hundred scores allocates nothing for them.
#[derive(Clone, Copy, Debug)]
pub struct DoubleText {
    /// The longest text is 24 bytes (`-1.7976931348623157e+308`).
    buf: [u8; 32],
    len: usize,
}

impl DoubleText {
    pub fn new(d: f64) -> DoubleText {
        let mut t = DoubleText { buf: [0; 32], len: 0 };
        if d.is_nan() {
            t.push(b"nan");
        } else if d.is_infinite() {
            t.push(if d > 0.0 { b"inf" } else { b"-inf" });
        } else if d == 0.0 {
            t.push(if d.is_sign_negative() { b"-0" } else { b"0" });
        } else if let Some(n) = double_as_int(d) {
            t.push(itoa::Buffer::new().format(n).as_bytes());
        } else {
            t.fpconv(d);
        }
        t
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII digits, signs, '.', 'e' and the words above are pushed.
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    fn push(&mut self, b: &[u8]) {
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
    }

    fn zeros(&mut self, n: usize) {
        self.buf[self.len..self.len + n].fill(b'0');
        self.len += n;
    }

    /// fpconv_dtoa's `emit_digits` over its Grisu2 digits.
    fn fpconv(&mut self, d: f64) {
        let mut raw = crate::grisu::Digits::default();
        // digits × 10^k
        let k = crate::grisu::grisu2(d.abs(), &mut raw);
        let digits = raw.as_bytes();
        let nd = digits.len() as i32;
        let e = k + nd - 1;
        let exp = e.abs();
        let neg = d < 0.0;
        if neg {
            self.push(b"-");
        }
        if k >= 0 && exp < nd + 7 {
            self.push(digits);
            self.zeros(k as usize);
            return;
        }
        if k < 0 && (k > -7 || exp < 4) {
            let offset = nd + k;
            if offset <= 0 {
                self.push(b"0.");
                self.zeros((-offset) as usize);
                self.push(digits);
            } else {
                self.push(&digits[..offset as usize]);
                self.push(b".");
                self.push(&digits[offset as usize..]);
            }
            return;
        }
        let nd = nd.min(18 - i32::from(neg)) as usize;
        self.push(&digits[..1]);
        if nd > 1 {
            self.push(b".");
            self.push(&digits[1..nd]);
        }
        self.push(if e < 0 { b"e-" } else { b"e+" });
        self.push(itoa::Buffer::new().format(exp).as_bytes());
    }
}

/// C's `%.17g` (how Redis's scan replies show a skiplist's scores:
/// `0.10000000000000001`, `1e+20`, `-0`).
pub fn format_g17(d: f64, buf: &mut String) {
    use std::fmt::Write;
    buf.clear();
    if d.is_nan() {
        buf.push_str("nan");
        return;
    }
    if d.is_infinite() {
        buf.push_str(if d > 0.0 { "inf" } else { "-inf" });
        return;
    }
    if d == 0.0 {
        buf.push_str(if d.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    let sci = format!("{d:.16e}");
    let (mant, e) = sci.split_once('e').unwrap_or((&sci, "0"));
    let x: i32 = e.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..17).contains(&x) {
        let _ = write!(buf, "{}e{}{:02}", trim(mant), if x < 0 { '-' } else { '+' }, x.abs());
    } else {
        let fixed = format!("{:.*}", (16 - x) as usize, d);
        buf.push_str(&trim(&fixed));
    }
}

/// Redis's `double2ll`: a double within ±`i64::MAX / 2` with no fraction.
fn double_as_int(d: f64) -> Option<i64> {
    const LIM: f64 = (i64::MAX / 2) as f64;
    if !(-LIM..=LIM).contains(&d) {
        return None;
    }
    let n = d as i64;
    (n as f64 == d).then_some(n)
}

impl Encoder {
    pub const RESP2: Encoder = Encoder { resp3: false };
    pub const RESP3: Encoder = Encoder { resp3: true };

    pub fn simple(&self, out: &mut Vec<u8>, s: &[u8]) {
        out.push(b'+');
        out.extend_from_slice(s);
        out.extend_from_slice(b"\r\n");
    }

    pub fn ok(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"+OK\r\n");
    }

    /// `msg` is the error line without `-` and CRLF, e.g. `ERR syntax error`.
    /// Newlines inside it would break the protocol, so they become spaces.
    pub fn error(&self, out: &mut Vec<u8>, msg: &[u8]) {
        out.push(b'-');
        out.extend(msg.iter().map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }));
        out.extend_from_slice(b"\r\n");
    }

    pub fn int(&self, out: &mut Vec<u8>, n: i64) {
        put_len(out, b':', n);
    }

    pub fn bulk(&self, out: &mut Vec<u8>, b: &[u8]) {
        put_len(out, b'$', b.len() as i64);
        out.extend_from_slice(b);
        out.extend_from_slice(b"\r\n");
    }

    /// Writes the `$<len>\r\n` header of a bulk whose payload the caller
    /// appends (or sends separately), followed by CRLF.
    pub fn bulk_header(&self, out: &mut Vec<u8>, len: usize) {
        put_len(out, b'$', len as i64);
    }

    pub fn bulk_int(&self, out: &mut Vec<u8>, n: i64) {
        let mut b = itoa::Buffer::new();
        self.bulk(out, b.format(n).as_bytes());
    }

    pub fn null(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(if self.resp3 { b"_\r\n" } else { b"$-1\r\n" });
    }

    pub fn null_array(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(if self.resp3 { b"_\r\n" } else { b"*-1\r\n" });
    }

    pub fn array(&self, out: &mut Vec<u8>, n: usize) {
        put_len(out, b'*', n as i64);
    }

    pub fn map(&self, out: &mut Vec<u8>, pairs: usize) {
        if self.resp3 {
            put_len(out, b'%', pairs as i64);
        } else {
            put_len(out, b'*', 2 * pairs as i64);
        }
    }

    pub fn set(&self, out: &mut Vec<u8>, n: usize) {
        put_len(out, if self.resp3 { b'~' } else { b'*' }, n as i64);
    }

    pub fn push(&self, out: &mut Vec<u8>, n: usize) {
        put_len(out, if self.resp3 { b'>' } else { b'*' }, n as i64);
    }

    pub fn double(&self, out: &mut Vec<u8>, d: f64) {
        let s = DoubleText::new(d);
        if self.resp3 {
            out.push(b',');
            out.extend_from_slice(s.as_bytes());
            out.extend_from_slice(b"\r\n");
        } else {
            self.bulk(out, s.as_bytes());
        }
    }

    pub fn boolean(&self, out: &mut Vec<u8>, b: bool) {
        if self.resp3 {
            out.extend_from_slice(if b { b"#t\r\n" } else { b"#f\r\n" });
        } else {
            out.extend_from_slice(if b { b":1\r\n" } else { b":0\r\n" });
        }
    }

    /// A big number (`(`) in RESP3, a bulk string in RESP2.
    pub fn big_number(&self, out: &mut Vec<u8>, digits: &[u8]) {
        if self.resp3 {
            out.push(b'(');
            out.extend_from_slice(digits);
            out.extend_from_slice(b"\r\n");
        } else {
            self.bulk(out, digits);
        }
    }

    /// Verbatim text (`=`) in RESP3, a bulk string in RESP2.
    pub fn verbatim(&self, out: &mut Vec<u8>, format: &[u8; 3], text: &[u8]) {
        if self.resp3 {
            put_len(out, b'=', text.len() as i64 + 4);
            out.extend_from_slice(format);
            out.push(b':');
            out.extend_from_slice(text);
            out.extend_from_slice(b"\r\n");
        } else {
            self.bulk(out, text);
        }
    }
}

/// Appends a client request: a RESP array of bulk strings, as every Redis
/// client sends a command (RESP2 framing, which RESP3 servers read too).
pub fn request<'a, I>(out: &mut Vec<u8>, args: I)
where
    I: IntoIterator<Item = &'a [u8]>,
    I::IntoIter: ExactSizeIterator,
{
    let args = args.into_iter();
    put_len(out, b'*', args.len() as i64);
    for a in args {
        Encoder::RESP2.bulk(out, a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header's number is written as `format!` writes it, at both ends of
    /// the range, at every length of digits, and for every number the
    /// short arms write.
    #[test]
    fn headers_are_decimal() {
        let mut ns = vec![0, 1, -1, 9, 10, -10, 99, 100, i64::MAX, i64::MIN, i64::MIN + 1];
        ns.extend(-100..20_000);
        let mut p = 1i64;
        for _ in 0..18 {
            p *= 10;
            ns.extend([p - 1, p, p + 1, -p, 1 - p]);
        }
        for n in ns {
            let mut out = b"x".to_vec();
            put_len(&mut out, b'$', n);
            assert_eq!(out, format!("x${n}\r\n").into_bytes());
        }
    }

    /// Every finite double's text fits the stack buffer and reads back
    /// as the same double (the sign of zero included).
    #[test]
    fn double_text_reads_back() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = f64::from_bits(x);
            let t = DoubleText::new(d);
            if d.is_nan() {
                assert_eq!(t.as_str(), "nan");
                continue;
            }
            let back: f64 = t.as_str().parse().unwrap();
            assert_eq!(back.to_bits(), d.to_bits(), "{}", t.as_str());
        }
        for d in [f64::MIN_POSITIVE, -f64::MAX, -5e-324, -1.2345678901234567e24, -0.000012345678901234567] {
            let back: f64 = DoubleText::new(d).as_str().parse().unwrap();
            assert_eq!(back, d);
        }
    }

    #[test]
    fn requests_parse_back() {
        let mut o = Vec::new();
        request(&mut o, [&b"SET"[..], b"k", b"v\r\n"]);
        assert_eq!(o, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nv\r\n\r\n");
        let mut f = crate::Frame::new();
        assert_eq!(f.parse(&o, &crate::Limits::default()), Ok(Some(o.len())));
        assert_eq!(f.argc(), 3);
    }

    #[test]
    fn resp2_and_resp3() {
        let mut o = Vec::new();
        Encoder::RESP2.null(&mut o);
        Encoder::RESP3.null(&mut o);
        Encoder::RESP2.map(&mut o, 2);
        Encoder::RESP3.map(&mut o, 2);
        Encoder::RESP2.double(&mut o, 1.5);
        Encoder::RESP3.double(&mut o, 1.5);
        Encoder::RESP2.error(&mut o, b"ERR a\nb");
        assert_eq!(o, b"$-1\r\n_\r\n*4\r\n%2\r\n$3\r\n1.5\r\n,1.5\r\n-ERR a b\r\n");
    }

    #[test]
    fn doubles() {
        let mut s = String::new();
        // redis-server 8.4's replies for these (ZADD k <d> m; ZSCORE k m).
        for (d, want) in [
            (1e20, "1e+20"),
            (0.1, "0.1"),
            (-2.5e-7, "-2.5e-7"),
            (1.5e-7, "1.5e-7"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (3.0, "3"),
            (-0.0, "-0"),
            (0.0001, "0.0001"),
            (0.00001, "0.00001"),
            (1e-7, "1e-7"),
            (1.234e-5, "1.234e-5"),
            (1e16, "10000000000000000"),
            (1e17, "100000000000000000"),
            (123456789012345678.0, "123456789012345680"),
            (9223372036854775807.0, "9223372036854776000"),
            (12345678.123, "12345678.123"),
            (1.5e-300, "1.5e-300"),
            (2e300, "2e+300"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-1e-5, "-0.00001"),
            (1e21, "1e+21"),
        ] {
            format_double(d, &mut s);
            assert_eq!(s, want);
        }
        for (d, want) in [(0.1, "0.10000000000000001"), (1e20, "1e+20"), (-0.0, "-0"), (2.0, "2"), (1.5, "1.5"), (1e-5, "1.0000000000000001e-05"), (0.0001, "0.0001"), (1e17, "1e+17")] {
            format_g17(d, &mut s);
            assert_eq!(s, want);
        }
    }
}
