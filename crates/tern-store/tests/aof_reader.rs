//! The AOF loader's command reader against what it must do with any file:
//! read back every command of a well-formed stream; when the stream is cut
//! anywhere, read the commands before the cut and then say that the one
//! the cut falls in is torn, at the offset it starts; and on any bytes at
//! all (a corrupted file, a hostile one) return an error or commands,
//! never panic and never allocate from a length the bytes claim.

use std::io::{BufReader, Cursor};

use proptest::prelude::*;
use tern_store::aof::{CommandReader, ReadError};

fn encode(cmds: &[Vec<Vec<u8>>], annotate: bool) -> (Vec<u8>, Vec<u64>) {
    let mut out = Vec::new();
    let mut starts = Vec::new();
    for c in cmds {
        if annotate {
            out.extend_from_slice(b"#TS:1700000000\r\n");
        }
        starts.push(out.len() as u64);
        out.extend_from_slice(format!("*{}\r\n", c.len()).as_bytes());
        for a in c {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
    }
    (out, starts)
}

/// Everything the reader gives for `bytes`: the commands, then the error
/// that stopped it (None at a clean end).
fn read_all(bytes: &[u8], buf: usize) -> (Vec<Vec<Vec<u8>>>, Option<ReadError>) {
    let mut r = CommandReader::new(BufReader::with_capacity(buf, Cursor::new(bytes)), 0);
    let mut got = Vec::new();
    loop {
        match r.next_command() {
            Ok(Some(c)) => got.push(c),
            Ok(None) => return (got, None),
            Err(e) => return (got, Some(e)),
        }
        assert!(got.len() <= bytes.len(), "more commands than bytes");
    }
}

fn command() -> impl Strategy<Value = Vec<Vec<u8>>> {
    proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 1..6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn a_whole_stream_reads_back(cmds in proptest::collection::vec(command(), 0..20), annotate in any::<bool>(), buf in 1usize..64) {
        let (bytes, _) = encode(&cmds, annotate);
        let (got, err) = read_all(&bytes, buf);
        prop_assert!(err.is_none(), "{:?}", err);
        prop_assert_eq!(got, cmds);
    }

    #[test]
    fn a_cut_stream_is_torn_at_the_command_it_cuts(cmds in proptest::collection::vec(command(), 1..12), cut in any::<prop::sample::Index>(), buf in 1usize..64) {
        let (bytes, starts) = encode(&cmds, false);
        let at = cut.index(bytes.len());
        let (got, err) = read_all(&bytes[..at], buf);
        // The commands wholly before the cut, then the one it falls in.
        let whole = starts.iter().skip(1).chain(std::iter::once(&(bytes.len() as u64))).take_while(|&&end| end <= at as u64).count();
        prop_assert_eq!(&got[..], &cmds[..whole]);
        match err {
            None => prop_assert!(whole == cmds.len() || starts[whole] == at as u64),
            Some(ReadError::Truncated { offset }) => prop_assert_eq!(offset, starts[whole]),
            Some(e) => prop_assert!(false, "a cut read as {:?}", e),
        }
    }

    #[test]
    fn any_bytes_give_commands_or_an_error(cmds in proptest::collection::vec(command(), 1..8), flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6), buf in 1usize..64) {
        let (mut bytes, _) = encode(&cmds, false);
        for (i, b) in flips {
            let i = i.index(bytes.len());
            bytes[i] = b;
        }
        let _ = read_all(&bytes, buf);
    }

    #[test]
    fn claimed_lengths_are_not_allocated(argc in 2u64..u64::MAX, len in 1u64..u64::MAX) {
        // A count or a length far beyond the bytes: torn or corrupt, at once.
        for bytes in [format!("*{argc}\r\n$1\r\nx\r\n"), format!("*1\r\n${len}\r\nabc")] {
            let (_, err) = read_all(bytes.as_bytes(), 16);
            prop_assert!(matches!(err, Some(ReadError::Truncated { offset: 0 }) | Some(ReadError::Corrupt { .. })), "{:?}", err);
        }
    }
}
