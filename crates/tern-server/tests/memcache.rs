//! memcached text and meta protocols, byte for byte as memcached 1.6.18
//! answers (each expected reply was taken from the real `memcached`
//! binary; CAS ids, which count differently, are checked by relation).

mod common;
use common::*;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

struct Mc(TcpStream);

impl Mc {
    fn connect(port: u16) -> Mc {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        Mc(s)
    }
    fn rt(&mut self, req: &[u8], want: &[u8]) {
        self.0.write_all(req).unwrap();
        let mut got = vec![0u8; want.len()];
        self.0
            .read_exact(&mut got)
            .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(req)));
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(want),
            "request {:?}",
            String::from_utf8_lossy(req)
        );
    }
    fn expect(&mut self, want: &[u8]) {
        self.rt(b"", want)
    }
    /// Sends and reads one line.
    fn line(&mut self, req: &[u8]) -> String {
        self.0.write_all(req).unwrap();
        let mut out = Vec::new();
        let mut b = [0u8; 1];
        while !out.ends_with(b"\r\n") {
            self.0.read_exact(&mut b).unwrap();
            out.push(b[0]);
        }
        String::from_utf8(out).unwrap()
    }
}

thread_local! {
    static PORT: std::cell::Cell<u16> = const { std::cell::Cell::new(0) };
}

/// The memcache port of the server `with_mc` is running.
fn mc_port_of(_: &TestServer) -> u16 {
    PORT.with(|p| p.get())
}

fn with_mc(f: impl Fn(&TestServer, &mut Mc)) {
    each_threads(|s| {
        let port = mc_port(s);
        PORT.with(|p| p.set(port));
        let mut c = Mc::connect(port);
        c.rt(b"flush_all\r\n", b"OK\r\n");
        f(s, &mut c);
    });
}

#[test]
fn text_storage_and_retrieval() {
    with_mc(|_, c| {
        c.rt(
            b"set foo 5 0 3\r\nbar\r\nget foo\r\n",
            b"STORED\r\nVALUE foo 5 3\r\nbar\r\nEND\r\n",
        );
        c.rt(b"set a 1 0 1\r\na\r\nset b 2 0 2\r\nbb\r\nget a b c a\r\n", b"STORED\r\nSTORED\r\nVALUE a 1 1\r\na\r\nVALUE b 2 2\r\nbb\r\nVALUE a 1 1\r\na\r\nEND\r\n");
        c.rt(b"add a 0 0 1\r\nx\r\nadd n 0 0 1\r\nn\r\nreplace z 0 0 1\r\nc\r\nreplace a 3 0 1\r\nc\r\n", b"NOT_STORED\r\nSTORED\r\nNOT_STORED\r\nSTORED\r\n");
        c.rt(
            b"append a 9 0 2\r\nxy\r\nprepend a 9 0 2\r\nuv\r\nget a\r\n",
            b"STORED\r\nSTORED\r\nVALUE a 3 5\r\nuvcxy\r\nEND\r\n",
        );
        c.rt(
            b"append z 0 0 1\r\nx\r\nprepend z 0 0 1\r\nx\r\n",
            b"NOT_STORED\r\nNOT_STORED\r\n",
        );
        c.rt(
            b"set k 4294967296 0 1\r\nx\r\nget k\r\n",
            b"STORED\r\nVALUE k 0 1\r\nx\r\nEND\r\n",
        );
        // gets: the CAS changes with every write.
        let l1 = c.line(b"gets k\r\n");
        c.expect(b"x\r\nEND\r\n");
        let cas: u64 = l1.trim_end().rsplit(' ').next().unwrap().parse().unwrap();
        c.rt(
            format!("cas k 0 0 1 {}\r\ny\r\n", cas + 1000).as_bytes(),
            b"EXISTS\r\n",
        );
        c.rt(
            format!("cas k 0 0 1 {cas}\r\ny\r\n").as_bytes(),
            b"STORED\r\n",
        );
        c.rt(
            format!("cas k 0 0 1 {cas}\r\nz\r\n").as_bytes(),
            b"EXISTS\r\n",
        );
        c.rt(
            b"cas nope 0 0 1 1\r\nb\r\ncas a 0 0 1 x\r\nb\r\n",
            b"NOT_FOUND\r\nCLIENT_ERROR bad command line format\r\nERROR\r\n",
        );
    });
}

#[test]
fn text_errors() {
    with_mc(|_, c| {
        c.rt(
            b"set k -1 0 1\r\nx\r\n",
            b"CLIENT_ERROR bad command line format\r\nERROR\r\n",
        );
        c.rt(
            b"set k 1 0 1\r\nxyz\r\n",
            b"CLIENT_ERROR bad data chunk\r\nERROR\r\n",
        );
        c.rt(
            b"set k 1 0 -1\r\nx\r\n",
            b"CLIENT_ERROR bad command line format\r\nERROR\r\n",
        );
        c.rt(
            b"set k 1 0 1 noreply\r\nxyz\r\nset k 1 x 1 noreply\r\nx\r\n",
            b"ERROR\r\nERROR\r\n",
        );
        c.rt(
            b"get\r\ngets\r\nGET k\r\nset k 1 0 2 3 4\r\nab\r\n",
            b"ERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\n",
        );
        c.rt(b"incr\r\nincr k\r\nincr k x\r\nincr k -1\r\n", b"ERROR\r\nERROR\r\nCLIENT_ERROR invalid numeric delta argument\r\nCLIENT_ERROR invalid numeric delta argument\r\n");
        let long = "k".repeat(251);
        c.rt(format!("set {long} 0 0 1\r\nx\r\nget {long}\r\n").as_bytes(), b"CLIENT_ERROR bad command line format\r\nERROR\r\nCLIENT_ERROR bad command line format\r\n");
        c.rt(b"\r\nbogus\r\n", b"ERROR\r\nERROR\r\n");
    });
}

#[test]
fn keys_lines_and_closing() {
    with_mc(|s, c| {
        // Only spaces separate: control characters are key bytes, as in memcached.
        c.rt(
            b"set a\x01b 0 0 1\r\nx\r\nget a\x01b\r\nmg a\tb v\r\n",
            b"STORED\r\nVALUE a\x01b 0 1\r\nx\r\nEND\r\nEN\r\n",
        );
        let port = mc_port_of(s);
        // No newline in 2048 bytes and not a multi-get: closed, no reply.
        let mut x = Mc::connect(port);
        x.0.write_all(&[b'x'; 3000]).unwrap();
        let mut b = [0u8; 16];
        assert_eq!(x.0.read(&mut b).unwrap_or(0), 0);
        let mut h = Mc::connect(port);
        h.0.write_all(b"GET / HTTP/1.1\r\n").unwrap();
        assert_eq!(h.0.read(&mut b).unwrap_or(0), 0);
        // A long multi-get line is fine.
        let mut g = Mc::connect(port);
        let keys: Vec<String> = (0..600).map(|i| format!("key{i}")).collect();
        g.rt(format!("get {}\r\n", keys.join(" ")).as_bytes(), b"END\r\n");
    });
}

#[test]
fn item_size_limit() {
    let s = TestServer::start_with(1, &["--memcache-max-item-size", "2kb"]);
    let mut c = Mc::connect(mc_port(&s));
    c.rt(b"set big 0 0 1\r\nx\r\n", b"STORED\r\n");
    let data = vec![b'x'; 3000];
    let mut req = b"set big 0 0 3000\r\n".to_vec();
    req.extend_from_slice(&data);
    req.extend_from_slice(b"\r\nget big\r\n");
    c.rt(&req, b"SERVER_ERROR object too large for cache\r\nEND\r\n");
    let mut req = b"ms big 3000\r\n".to_vec();
    req.extend_from_slice(&data);
    req.extend_from_slice(b"\r\nmn\r\n");
    c.rt(&req, b"SERVER_ERROR object too large for cache\r\nMN\r\n");
    // An append past the limit is not stored (memcached cannot allocate it).
    let mut req = b"set ap 0 0 1500\r\n".to_vec();
    req.extend_from_slice(&[b'x'; 1500]);
    req.extend_from_slice(b"\r\nappend ap 0 0 1000\r\n");
    req.extend_from_slice(&[b'y'; 1000]);
    req.extend_from_slice(b"\r\nms ap 1000 MA\r\n");
    req.extend_from_slice(&[b'y'; 1000]);
    req.extend_from_slice(b"\r\nmg ap s\r\n");
    c.rt(&req, b"STORED\r\nNOT_STORED\r\nNS\r\nHD s1500\r\n");
}

#[test]
fn arithmetic_touch_delete_flush() {
    with_mc(|_, c| {
        c.rt(b"set n 0 0 2\r\n10\r\nincr n 18446744073709551615\r\ndecr n 100\r\nincr n +5\r\nget n\r\n", b"STORED\r\n9\r\n0\r\n5\r\nVALUE n 0 2\r\n5 \r\nEND\r\n");
        c.rt(
            b"incr n 100\r\nget n\r\nincr nope 1\r\n",
            b"105\r\nVALUE n 0 3\r\n105\r\nEND\r\nNOT_FOUND\r\n",
        );
        c.rt(
            b"set s 0 0 1\r\nx\r\nincr s 1\r\n",
            b"STORED\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n",
        );
        c.rt(b"set k 0 0 1\r\nx\r\ndelete k 0\r\ndelete k 1\r\ndelete k noreply\r\ndelete k 0 noreply\r\ndelete k x y\r\nmn\r\n", b"STORED\r\nDELETED\r\nCLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\nCLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\nMN\r\n");
        c.rt(b"touch k\r\ntouch k x\r\ntouch k 10\r\nset k 0 0 1\r\nx\r\ntouch k 10\r\nmg k t\r\n", b"ERROR\r\nCLIENT_ERROR invalid exptime argument\r\nNOT_FOUND\r\nSTORED\r\nTOUCHED\r\nHD t10\r\n");
        c.rt(b"set a 0 0 1\r\na\r\ngat 100 a b\r\ngat x a\r\ngat 10\r\nmg a t\r\n", b"STORED\r\nVALUE a 0 1\r\na\r\nEND\r\nCLIENT_ERROR invalid exptime argument\r\nEND\r\nHD t100\r\n");
        c.rt(
            b"set a 0 -1 1\r\na\r\nget a\r\nset a 0 0 1\r\na\r\ntouch a -1\r\nget a\r\n",
            b"STORED\r\nEND\r\nSTORED\r\nTOUCHED\r\nEND\r\n",
        );
        c.rt(b"incr a 1 noreply\r\ndecr a 1 noreply\r\ntouch a 1 noreply\r\nadd a 0 0 1 noreply\r\nx\r\nmn\r\n", b"MN\r\n");
        c.rt(b"flush_all x\r\nflush_all 0 x\r\nflush_all noreply\r\nflush_all 0 noreply\r\nflush_all\r\nflush_all -1\r\nversion\r\nverbosity\r\nverbosity 1\r\nverbosity x\r\nverbosity 1 noreply\r\nverbosity 1 2\r\nmn\r\n",
            b"CLIENT_ERROR invalid exptime argument\r\nOK\r\nOK\r\nOK\r\nVERSION 1.6.18\r\nERROR\r\nOK\r\nCLIENT_ERROR bad command line format\r\nOK\r\nMN\r\n");
        c.rt(
            b"set f 0 0 1\r\nx\r\nflush_all\r\nget f\r\n",
            b"STORED\r\nOK\r\nEND\r\n",
        );
        // A delayed flush: the key lives until the delay passes.
        c.rt(
            b"set f 0 0 1\r\nx\r\nflush_all 1\r\nget f\r\n",
            b"STORED\r\nOK\r\nVALUE f 0 1\r\nx\r\nEND\r\n",
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        while c.line(b"mg f\r\n") != "EN\r\n" {
            assert!(Instant::now() < deadline, "delayed flush did not happen");
        }
        c.rt(b"stats foo\r\nstats reset\r\n", b"ERROR\r\nRESET\r\n");
        c.rt(b"quit\r\n", b"");
        let mut b = [0u8; 1];
        assert_eq!(c.0.read(&mut b).unwrap_or(0), 0);
    });
}

#[test]
fn meta_get_set_flags() {
    with_mc(|_, c| {
        c.rt(
            b"set foo 5 0 3\r\nbar\r\nmg foo\r\nmg foo v q\r\nmg foo q\r\nmg foo k q\r\nmn\r\n",
            b"STORED\r\nHD\r\nVA 3\r\nbar\r\nHD\r\nHD kfoo\r\nMN\r\n",
        );
        c.rt(
            b"mg miss O123 k q\r\nmg miss O12 k\r\nmn\r\n",
            b"EN O12 kmiss\r\nMN\r\n",
        );
        c.rt(b"mg foo v v\r\nmg foo y\r\nmg foo S\r\nms foo\r\nms foo S2\r\nhi\r\nms foo 2 MX\r\nhi\r\nmn\r\n",
            b"CLIENT_ERROR duplicate flag\r\nCLIENT_ERROR invalid flag\r\nCLIENT_ERROR invalid flag\r\nCLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\nERROR\r\nCLIENT_ERROR invalid mode for ms M token\r\nMN\r\n");
        c.rt(
            b"set foo 5 0 3\r\nbar\r\nmg foo s v f t h l k O1 u\r\nmg foo h l\r\n",
            b"STORED\r\nVA 3 s3 f5 t-1 h0 l0 kfoo O1\r\nbar\r\nHD h0 l0\r\n",
        );
        c.rt(b"mg foo h\r\n", b"HD h1\r\n");
        let l = c.line(b"ms aGk= 2 b k c\r\nhi\r\n");
        assert!(l.starts_with("HD kaGk= b c"), "{l}");
        c.rt(
            b"mg aGk= b k v\r\nmg hi k v\r\nmg hi b\r\n",
            b"VA 2 kaGk= b\r\nhi\r\nVA 2 kaGk= b\r\nhi\r\nCLIENT_ERROR error decoding key\r\n",
        );
        c.rt(b"ms k 2 q\r\nhi\r\nms k 2 q MX\r\nhi\r\nmn\r\nms k x\r\nhi\r\n", b"CLIENT_ERROR invalid mode for ms M token\r\nMN\r\nCLIENT_ERROR bad command line format\r\nERROR\r\n");
        c.rt(
            b"ms k 2 C1\r\nhi\r\nms k 2 ME\r\nhi\r\nms nope 2 MR\r\nhi\r\nms nope 2 C5\r\nhi\r\n",
            b"EX\r\nNS\r\nNS\r\nNF\r\n",
        );
        c.rt(b"ms k 2 MA\r\n!!\r\nms k 2 MP\r\n<<\r\nmg k v\r\nms nope 1 MA N30\r\nx\r\nmg nope v t\r\n", b"HD\r\nHD\r\nVA 6\r\n<<hi!!\r\nHD\r\nVA 1 t30\r\nx\r\n");
        c.rt(b"ms f 1 F-1\r\nx\r\nms f 1 F4294967296\r\nx\r\nms f 1 Fx\r\nx\r\nmg f f\r\n", b"CLIENT_ERROR bad command line format\r\nHD\r\nCLIENT_ERROR bad command line format\r\nHD f0\r\n");
        c.rt(b"mg k v O123456789012345678901234567890123\r\nmg k v O1234567890123456789012345678901\r\n", b"CLIENT_ERROR opaque token too long\r\nVA 6 O1234567890123456789012345678901\r\n<<hi!!\r\n");
        c.rt(b"mg k T\r\nmg k Tx\r\nmg k N\r\nmg k Rx\r\n", b"CLIENT_ERROR bad token in command line format\r\nCLIENT_ERROR bad token in command line format\r\nCLIENT_ERROR bad token in command line format\r\nCLIENT_ERROR bad token in command line format\r\n");
        c.rt(
            b"mg  k   s\r\n  mn\r\nmg k s\nmn\n",
            b"HD s6\r\nMN\r\nHD s6\r\nMN\r\n",
        );
        c.rt(b"mg\r\nms\r\nmd\r\nma\r\nme\r\nmx\r\nmnn\r\nmn x y\r\n", b"ERROR\r\nERROR\r\nERROR\r\nERROR\r\nCLIENT_ERROR bad command line format\r\nERROR\r\nERROR\r\nMN\r\n");
        // c and E: the CAS returned is the one stored; E sets it.
        c.rt(
            b"ms e 1 E777 c\r\nx\r\nmg e c\r\n",
            b"HD c777\r\nHD c777\r\n",
        );
        c.rt(
            b"ms e 1 C777 E900\r\ny\r\nmg e c v\r\n",
            b"HD\r\nVA 1 c900\r\ny\r\n",
        );
    });
}

#[test]
fn meta_stale_win_vivify() {
    with_mc(|_, c| {
        c.rt(
            b"ms s 1 T100\r\nx\r\nmd s I T30\r\nmg s v t\r\nmg s v\r\n",
            b"HD\r\nHD\r\nVA 1 t30 X W\r\nx\r\nVA 1 Z X\r\nx\r\n",
        );
        // A stale write (older CAS, I) is kept but stays stale.
        c.rt(
            b"ms s 1 C1 I\r\ny\r\nmg s v\r\n",
            b"HD\r\nVA 1 Z X\r\ny\r\n",
        );
        c.rt(
            b"mg z N30 v t s\r\nmg z N30 v t\r\nmg z v\r\n",
            b"VA 0 t30 s0 W\r\n\r\nVA 0 t30 Z\r\n\r\nVA 0 Z\r\n\r\n",
        );
        c.rt(
            b"mg w v f t s k h l O1 u q T1 N1 R1 P L\r\n",
            b"VA 0 f0 t-1 s0 kw h0 l0 O1 W\r\n\r\n",
        );
        // R: win when the TTL left is below the token.
        c.rt(
            b"ms r 1 T10\r\nx\r\nmg r R30 v\r\nmg r R30 v\r\nms r 1 T100\r\ny\r\nmg r R30\r\n",
            b"HD\r\nVA 1 W\r\nx\r\nVA 1 Z\r\nx\r\nHD\r\nHD\r\n",
        );
    });
}

#[test]
fn meta_delete_and_arithmetic() {
    with_mc(|_, c| {
        c.rt(
            b"ms k 2\r\nhi\r\nmd k q\r\nmd k\r\nmd k C1\r\nmd k O5 k\r\nmn\r\n",
            b"HD\r\nNF\r\nNF\r\nNF O5 kk\r\nMN\r\n",
        );
        c.rt(
            b"ms k 2\r\nhi\r\nmd k C1\r\nmd k y\r\nmd k x\r\nmg k v s\r\n",
            b"HD\r\nEX\r\nCLIENT_ERROR invalid or duplicate flag\r\nHD\r\nVA 0 s0\r\n\r\n",
        );
        c.rt(b"ma x\r\nma x N0 J5 v\r\nma x v D10 MD\r\nma x MI D5 v t\r\nma x q\r\nma x C1\r\nmn\r\n", b"NF\r\nVA 1\r\n5\r\nVA 1\r\n0\r\nVA 1 t-1\r\n5\r\nEX\r\nMN\r\n");
        c.rt(b"ms num 2\r\n10\r\nma num Dx\r\nma num J\r\nma num MX\r\nma num Mxx\r\nma num q D1\r\nma nonum q\r\nmn\r\nmg num v\r\n",
            b"HD\r\nCLIENT_ERROR invalid or duplicate flag\r\nCLIENT_ERROR invalid or duplicate flag\r\nCLIENT_ERROR invalid mode for ma M token\r\nCLIENT_ERROR invalid or duplicate flag\r\nNF\r\nMN\r\nVA 2\r\n11\r\n");
        c.rt(
            b"ma m Mi\r\nma m M+ N0 v\r\nma m M- v\r\n",
            b"CLIENT_ERROR invalid mode for ma M token\r\nVA 1\r\n0\r\nVA 1\r\n0\r\n",
        );
        c.rt(
            b"ms q 2 q\r\nhixx\r\nmn\r\n",
            b"CLIENT_ERROR bad data chunk\r\nERROR\r\nMN\r\n",
        );
        c.rt(b"ms k 1 2 3 4 5 6 7 8 9 a b c d e f g h i j k\r\nx\r\nmg k a1 a2 a3 a4 a5 a6 a7 a8 a9 b1 b2 b3 b4 b5 b6 b7 b8 b9\r\n",
            b"CLIENT_ERROR options flags too long\r\nERROR\r\nCLIENT_ERROR options flags are too long\r\n");
        c.rt(
            b"ms t 1\r\nx\r\nma t\r\n",
            b"HD\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n",
        );
        let l = c.line(b"me num\r\n");
        assert!(
            l.starts_with("ME num exp=-1 la=0 cas=") && l.ends_with(" fetch=yes cls=1 size=64\r\n"),
            "{l}"
        );
        c.rt(
            b"me nope\r\nme k b\r\n",
            b"EN\r\nCLIENT_ERROR bad command line format\r\n",
        );
    });
}

#[test]
fn cross_protocol() {
    with_mc(|s, c| {
        let mut r = s.conn();
        c.rt(b"set both 7 0 5\r\nhello\r\n", b"STORED\r\n");
        let v: String = redis::cmd("GET").arg("both").query(&mut r).unwrap();
        assert_eq!(v, "hello");
        let t: String = redis::cmd("TYPE").arg("both").query(&mut r).unwrap();
        assert_eq!(t, "string");
        let n: i64 = redis::cmd("STRLEN").arg("both").query(&mut r).unwrap();
        assert_eq!(n, 5);
        let l = c.line(b"gets both\r\n");
        c.expect(b"hello\r\nEND\r\n");
        let cas: u64 = l.trim_end().rsplit(' ').next().unwrap().parse().unwrap();
        // A RESP write makes the key a plain string again: old CAS is void.
        let _: () = redis::cmd("APPEND")
            .arg("both")
            .arg("!")
            .query(&mut r)
            .unwrap();
        c.rt(
            format!("cas both 0 0 1 {cas}\r\nx\r\n").as_bytes(),
            b"EXISTS\r\n",
        );
        c.rt(b"get both\r\n", b"VALUE both 0 6\r\nhello!\r\nEND\r\n");
        let _: () = redis::cmd("SET")
            .arg("fromresp")
            .arg("42")
            .query(&mut r)
            .unwrap();
        c.rt(
            b"incr fromresp 8\r\nmg fromresp v f\r\n",
            b"50\r\nVA 2 f0\r\n50\r\n",
        );
        let v: i64 = redis::cmd("GET").arg("fromresp").query(&mut r).unwrap();
        assert_eq!(v, 50);
        // memcached uses database 0 only.
        let _: () = redis::cmd("SELECT").arg(1).query(&mut r).unwrap();
        let _: () = redis::cmd("SET").arg("db1").arg("x").query(&mut r).unwrap();
        c.rt(b"mg db1 v\r\n", b"EN\r\n");
        // Another type is a miss to memcached, and add/ME leave it alone.
        let _: () = redis::cmd("SELECT").arg(0).query(&mut r).unwrap();
        let _: () = redis::cmd("HSET")
            .arg("h")
            .arg("f")
            .arg("v")
            .query(&mut r)
            .unwrap();
        c.rt(
            b"get h\r\nadd h 0 0 1\r\nx\r\nms h 1 ME\r\nx\r\nincr h 1\r\n",
            b"END\r\nNOT_STORED\r\nNS\r\nNOT_FOUND\r\n",
        );
        let t: String = redis::cmd("TYPE").arg("h").query(&mut r).unwrap();
        assert_eq!(t, "hash");
        let _: () = redis::cmd("SELECT").arg(1).query(&mut r).unwrap();
        // TTLs: seconds, visible to RESP.
        c.rt(b"set ttl 0 100 1\r\nx\r\n", b"STORED\r\n");
        let _: () = redis::cmd("SELECT").arg(0).query(&mut r).unwrap();
        let ttl: i64 = redis::cmd("TTL").arg("ttl").query(&mut r).unwrap();
        assert!((99..=100).contains(&ttl), "{ttl}");
    });
}

#[test]
fn pipelined_meta_batch() {
    with_mc(|_, c| {
        let mut req = Vec::new();
        let mut want = Vec::new();
        for i in 0..200 {
            req.extend_from_slice(format!("ms key{i} 4 T0\r\nv{i:03}\r\n").as_bytes());
            want.extend_from_slice(b"HD\r\n");
        }
        c.rt(&req, &want);
        let mut req = Vec::new();
        let mut want = Vec::new();
        for i in 0..200 {
            req.extend_from_slice(format!("mg key{i} v q k O{i}\r\n").as_bytes());
            want.extend_from_slice(format!("VA 4 kkey{i} O{i}\r\nv{i:03}\r\n").as_bytes());
            req.extend_from_slice(format!("mg miss{i} v q k O{i}\r\n").as_bytes());
        }
        req.extend_from_slice(b"mn\r\n");
        want.extend_from_slice(b"MN\r\n");
        c.rt(&req, &want);
    });
}
