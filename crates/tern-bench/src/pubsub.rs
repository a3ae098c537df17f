//! The subscriber side of publish/subscribe, without I/O: what a
//! subscriber connection reads, which channels each connection takes, and
//! when a timed payload was published.
//!
//! ```text
//!  RESP2  *3 $7 message  $ch $payload         RESP3  >3 $7 message  $ch $payload
//!         *4 $8 pmessage $pat $ch $payload           >4 $8 pmessage $pat $ch $payload
//!         *3 $8 smessage $ch $payload                >3 $8 smessage $ch $payload
//!         *3 $9 subscribe $ch :n   (psubscribe, ssubscribe likewise)
//! ```
//!
//! [`parse`] is resumable like [`tern_resp::decode::decode`], which frames
//! each reply: incomplete input is `Ok(None)`, and the caller parses again
//! from the same start once more bytes are in. The event's slices borrow
//! the caller's buffer.

use tern_resp::decode::{self, DecodeError, Kind};

use crate::template::TIME_DIGITS;

/// The three kinds of published message, in the order the report lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgKind {
    /// `message`: through SUBSCRIBE.
    Message = 0,
    /// `pmessage`: through PSUBSCRIBE.
    Pmessage = 1,
    /// `smessage`: through SSUBSCRIBE.
    Smessage = 2,
}

impl MsgKind {
    pub const ALL: [MsgKind; 3] = [MsgKind::Message, MsgKind::Pmessage, MsgKind::Smessage];

    pub fn title(self) -> &'static str {
        match self {
            MsgKind::Message => "Messages",
            MsgKind::Pmessage => "Pmessages",
            MsgKind::Smessage => "Smessages",
        }
    }
}

/// One reply read by a subscriber connection.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// A published message; `pattern` is the one it matched (pmessage).
    Message {
        kind: MsgKind,
        pattern: Option<&'a [u8]>,
        channel: &'a [u8],
        payload: &'a [u8],
    },
    /// A subscribe, psubscribe or ssubscribe confirmation, with the
    /// connection's subscription count it carries.
    Subscribed { count: i64 },
    /// Anything else (HELLO's map, an error): its kind and, for a scalar,
    /// its text.
    Other { kind: Kind, text: &'a [u8] },
}

/// Parses the first complete reply of `buf`: `Ok(Some((event, consumed)))`,
/// or `Ok(None)` while `buf` holds only part of one.
pub fn parse(buf: &[u8]) -> Result<Option<(Event<'_>, usize)>, DecodeError> {
    let Some((r, used)) = decode::decode(buf)? else {
        return Ok(None);
    };
    let other = Event::Other {
        kind: r.kind,
        text: &buf[r.text.clone()],
    };
    if !matches!(r.kind, Kind::Array | Kind::Push) || !(3..=4).contains(&r.len) {
        return Ok(Some((other, used)));
    }
    // The aggregate is complete, so each element decodes; an element
    // that is not a string or an integer makes the reply none of ours.
    let mut items: [&[u8]; 4] = [&[]; 4];
    let mut last = Kind::Null;
    let mut at = r.text.start;
    for item in items.iter_mut().take(r.len) {
        let (e, n) = decode::decode(&buf[at..used])?.ok_or(DecodeError::BadLength)?;
        if !matches!(e.kind, Kind::Bulk | Kind::Int) {
            return Ok(Some((other, used)));
        }
        *item = &buf[at + e.text.start..at + e.text.end];
        last = e.kind;
        at += n;
    }
    let ev = match (items[0], r.len, last) {
        (b"message", 3, Kind::Bulk) => Event::Message {
            kind: MsgKind::Message,
            pattern: None,
            channel: items[1],
            payload: items[2],
        },
        (b"smessage", 3, Kind::Bulk) => Event::Message {
            kind: MsgKind::Smessage,
            pattern: None,
            channel: items[1],
            payload: items[2],
        },
        (b"pmessage", 4, Kind::Bulk) => Event::Message {
            kind: MsgKind::Pmessage,
            pattern: Some(items[1]),
            channel: items[2],
            payload: items[3],
        },
        (b"subscribe" | b"psubscribe" | b"ssubscribe", 3, Kind::Int) => Event::Subscribed {
            count: tern_resp::parse_i64(items[2]).ok_or(DecodeError::BadLength)?,
        },
        _ => other,
    };
    Ok(Some((ev, used)))
}

/// The wall clock in microseconds since the Unix epoch: what
/// `__time_us__` writes and what a subscriber compares it with.
pub fn epoch_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// When a payload that starts with an expanded `__time_us__` was
/// published, in microseconds since the epoch; `None` for any other payload.
pub fn sent_at_us(payload: &[u8]) -> Option<u64> {
    let digits = payload.get(..TIME_DIGITS)?;
    digits.iter().all(u8::is_ascii_digit).then(|| {
        digits.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'))
    })
}

/// Most names one list option may expand to.
pub const MAX_NAMES: usize = 1_000_000;

/// Expands a channel or pattern list: names separated by commas, each of
/// which may hold one `{M..N}` range of numbers (`chan-{0..9999}` is ten
/// thousand names). A brace not of that form is part of the name.
pub fn expand_list(spec: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for item in spec.split(',') {
        if item.is_empty() {
            return Err(format!("empty name in '{spec}'"));
        }
        let range = item.find('{').and_then(|open| {
            let close = open + item[open..].find('}')?;
            let (a, b) = item[open + 1..close].split_once("..")?;
            Some((open, close, a.parse::<u64>().ok()?, b.parse::<u64>().ok()?))
        });
        match range {
            Some((open, close, a, b)) => {
                if b < a {
                    return Err(format!("empty range in '{item}'"));
                }
                if b - a >= (MAX_NAMES - out.len()) as u64 {
                    return Err(format!("'{spec}' names more than {MAX_NAMES}"));
                }
                let (pre, post) = (&item[..open], &item[close + 1..]);
                out.extend((a..=b).map(|n| format!("{pre}{n}{post}")));
            }
            None => out.push(item.to_string()),
        }
        if out.len() > MAX_NAMES {
            return Err(format!("'{spec}' names more than {MAX_NAMES}"));
        }
    }
    Ok(out)
}

/// Deals `items` names to `conns` subscriber connections: name i to
/// connection i mod `conns`. With `cover`, when there are fewer names than
/// connections they are dealt again until every connection has one (so
/// one channel and 1,000 subscribers is a fan-out of 1,000). Returns each
/// connection's name indices.
pub fn deal(items: usize, conns: usize, cover: bool) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); conns];
    if items == 0 || conns == 0 {
        return out;
    }
    let n = if cover { items.max(conns) } else { items };
    for i in 0..n {
        out[i % conns].push(i % items);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(b: &[u8]) -> (Event<'_>, usize) {
        parse(b).unwrap().unwrap()
    }

    fn msg<'a>(kind: MsgKind, pattern: Option<&'a [u8]>, channel: &'a [u8], payload: &'a [u8]) -> Event<'a> {
        Event::Message { kind, pattern, channel, payload }
    }

    #[test]
    fn resp2_and_resp3_messages() {
        let b = b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n";
        assert_eq!(one(b), (msg(MsgKind::Message, None, b"ch", b"hello"), b.len()));
        let b = b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$0\r\n\r\n";
        assert_eq!(one(b), (msg(MsgKind::Message, None, b"ch", b""), b.len()));
        let b = b"*4\r\n$8\r\npmessage\r\n$3\r\nch*\r\n$3\r\nch1\r\n$2\r\nhi\r\n";
        assert_eq!(one(b), (msg(MsgKind::Pmessage, Some(b"ch*"), b"ch1", b"hi"), b.len()));
        let b = b">4\r\n$8\r\npmessage\r\n$3\r\nch*\r\n$3\r\nch1\r\n$2\r\nhi\r\n";
        assert_eq!(one(b).0, msg(MsgKind::Pmessage, Some(b"ch*"), b"ch1", b"hi"));
        let b = b"*3\r\n$8\r\nsmessage\r\n$1\r\ns\r\n$4\r\n\r\nxy\r\n";
        assert_eq!(one(b).0, msg(MsgKind::Smessage, None, b"s", b"\r\nxy"));
        let b = b">3\r\n$8\r\nsmessage\r\n$1\r\ns\r\n$1\r\nz\r\n";
        assert_eq!(one(b).0, msg(MsgKind::Smessage, None, b"s", b"z"));
    }

    #[test]
    fn confirmations_and_other_replies() {
        for b in [
            &b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"[..],
            b">3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:2\r\n",
            b">3\r\n$10\r\nssubscribe\r\n$1\r\ns\r\n:10000\r\n",
        ] {
            let (e, n) = one(b);
            assert!(matches!(e, Event::Subscribed { count: 1 | 2 | 10000 }), "{e:?}");
            assert_eq!(n, b.len());
        }
        let (e, _) = one(b"-ERR unknown command 'ssubscribe'\r\n");
        assert_eq!(e, Event::Other { kind: Kind::Error, text: b"ERR unknown command 'ssubscribe'" });
        let hello = b"%1\r\n$6\r\nserver\r\n$5\r\nredis\r\n";
        assert_eq!(one(hello).1, hello.len());
        assert!(matches!(one(hello).0, Event::Other { kind: Kind::Map, .. }));
        // Shapes that only look like ours.
        for b in [
            &b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n:5\r\n"[..],
            b"*4\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nx\r\n$1\r\ny\r\n",
            b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n$1\r\n1\r\n",
            b"*3\r\n*0\r\n$2\r\nch\r\n$1\r\nx\r\n",
            b"*2\r\n$7\r\nmessage\r\n$2\r\nch\r\n",
        ] {
            assert!(matches!(one(b).0, Event::Other { kind: Kind::Array, .. }), "{:?}", String::from_utf8_lossy(b));
        }
        assert!(parse(b"?x\r\n").is_err());
    }

    #[test]
    fn partial_input_waits_and_a_stream_parses_in_order() {
        let stream = b">3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n\
            *3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$16\r\n1767225600123456\r\n\
            *4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$1\r\nc\r\n$3\r\nabc\r\n";
        // Every prefix that ends inside a reply is incomplete, never an error.
        let first = one(stream).1;
        for i in 0..first {
            assert_eq!(parse(&stream[..i]), Ok(None), "prefix {i}");
        }
        // Fed a byte at a time, as short reads would, the three come out whole.
        let mut got = Vec::new();
        let (mut start, mut end) = (0, 0);
        while end < stream.len() {
            end += 1;
            while let Some((e, n)) = parse(&stream[start..end]).unwrap() {
                got.push(format!("{e:?}"));
                start += n;
            }
        }
        assert_eq!(start, stream.len());
        assert_eq!(got.len(), 3);
        assert!(got[0].starts_with("Subscribed"));
        let (e, _) = parse(&stream[first..]).unwrap().unwrap();
        let Event::Message { payload, .. } = e else { panic!("{e:?}") };
        assert_eq!(sent_at_us(payload), Some(1_767_225_600_123_456));
    }

    #[test]
    fn timestamps_are_sixteen_leading_digits() {
        let mut p = Vec::new();
        crate::template::put_time_us(&mut p, 1_767_225_600_000_001);
        p.extend_from_slice(b"xxxx");
        assert_eq!(sent_at_us(&p), Some(1_767_225_600_000_001));
        assert_eq!(sent_at_us(b"0000000000000042"), Some(42));
        assert_eq!(sent_at_us(b"176722560012345"), None); // 15 digits
        assert_eq!(sent_at_us(b"17672256001234x6"), None);
        assert_eq!(sent_at_us(b"xxxxxxxxxxxxxxxxxxxxxxxx"), None);
    }

    #[test]
    fn lists_expand_ranges_and_names() {
        assert_eq!(expand_list("a,b").unwrap(), ["a", "b"]);
        assert_eq!(expand_list("chan-{0..2}").unwrap(), ["chan-0", "chan-1", "chan-2"]);
        assert_eq!(expand_list("x,p{8..9}*,{1..1}").unwrap(), ["x", "p8*", "p9*", "1"]);
        assert_eq!(expand_list("chan-{0..9999}").unwrap().len(), 10_000);
        // Braces of another shape are part of the name.
        assert_eq!(expand_list("a{b}c,{x..2}").unwrap(), ["a{b}c", "{x..2}"]);
        assert!(expand_list("a,,b").is_err());
        assert!(expand_list("").is_err());
        assert!(expand_list("c{5..4}").is_err());
        assert!(expand_list("c{0..1000000}").is_err());
        assert!(expand_list("c{0..18446744073709551615}").is_err());
    }

    #[test]
    fn dealing_names_to_connections() {
        // Fewer connections than names: round-robin, each name once.
        assert_eq!(deal(5, 2, true), [vec![0, 2, 4], vec![1, 3]]);
        // One channel, many subscribers: every subscriber takes it.
        assert_eq!(deal(1, 3, true), [vec![0], vec![0], vec![0]]);
        assert_eq!(deal(2, 3, true), [vec![0], vec![1], vec![0]]);
        // Patterns are not dealt again: each is subscribed once.
        assert_eq!(deal(2, 3, false), [vec![0], vec![1], vec![]]);
        assert_eq!(deal(0, 2, true), [Vec::<usize>::new(), vec![]]);
        let d = deal(10_000, 1000, true);
        assert!(d.iter().all(|c| c.len() == 10));
    }
}
