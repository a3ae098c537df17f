"""Seeded random mixes of memcached text and meta commands, sent to Tern's
memcached port and to Debian's memcached, compared byte for byte.

The mixes avoid what the two legitimately number or time differently
(CAS ids: no `gets`/`cas`/`mg c`; remaining TTLs: no `mg t`; `E` and
`md x`, which memcached 1.6.18 rejects) and what memcached decides by
its item reference counts: whether an incr/decr rewrites the item in
place (padding a shorter number with spaces, keeping the stale and
win-token marks) or allocates a new one depends on whether a reply still
unsent holds it. So arithmetic only ever grows or keeps a number's
length (no leading zeros, no decrements, no wrap-around), no item is made stale (`md I`) or vivified (`mg N`), and the
fetched mark (`mg h`) is not read back. They
cover what Tern stores in different forms: values written whole, appended and prepended to,
incremented in place, touched, deleted, read back by multi-key `get`
(duplicates and misses in one request) and by meta `mg`. Skipped when
memcached is not installed; a failing seed reproduces alone with
`pytest tests/python/test_memcache_differential.py -k 'seed-N'`."""

import os
import random
import shutil
import socket

import pytest

from servers import start_memcached, start_tern, tern_bin

pytestmark = pytest.mark.skipif(
    shutil.which("memcached") is None and not os.path.exists("/usr/bin/memcached"), reason="memcached not installed"
)


@pytest.fixture(scope="module")
def ports():
    ref = start_memcached()
    try:
        tern = start_tern(tern_bin(), 2, ["--prefetch-batch-max-size", "3"])
    except Exception:
        ref.stop()
        raise
    try:
        yield ref.port, tern.memcache_port()
    finally:
        ref.stop()
        tern.stop()


KEYS = ["a", "b", "c", "d", "n", "long"]
# No number with leading zeros: incrementing "007" shortens it, which is
# one of the reference-count cases described above.
VALUES = ["0", "1", "42", "99", "18446744073709551616", "-1", "7", "x", "hello", "", "v" * 60, "w" * 300]


def _request(rng):
    """One request line (with its data block) and how many reply lines end it."""
    k = rng.choice(KEYS)
    v = rng.choice(VALUES)
    flags = rng.choice([0, 1, 4294967295])
    kind = rng.randrange(14)
    if kind < 3:
        cmd = rng.choice(["set", "add", "replace", "append", "prepend"])
        return "%s %s %d %d %d\r\n%s\r\n" % (cmd, k, flags, rng.choice([0, 0, 1000]), len(v), v)
    if kind == 3:
        return "incr %s %s\r\n" % (k, rng.choice(["1", "0", "100", "x"]))
    if kind == 4:
        return "delete %s\r\n" % k
    if kind == 5:
        return "touch %s %d\r\n" % (k, rng.choice([0, 1000]))
    if kind in (6, 7):
        keys = " ".join(rng.choice(KEYS + ["missing"]) for _ in range(rng.randint(1, 12)))
        return "get %s\r\n" % keys
    if kind == 8:
        keys = " ".join(rng.choice(KEYS) for _ in range(rng.randint(1, 5)))
        return "gat %d %s\r\n" % (rng.choice([0, 1000]), keys)
    if kind == 9:
        return "mg %s %s\r\n" % (k, rng.choice(["v", "v f s", "k v", "s", "f q", "O123 v"]))
    if kind == 10:
        return "ms %s %d %s\r\n%s\r\n" % (k, len(v), rng.choice(["", "F7", "MA", "MP", "ME", "T0 MS"]), v)
    if kind == 11:
        return "md %s%s\r\n" % (k, rng.choice(["", " q"]))
    if kind == 12:
        return "ma %s%s\r\n" % (k, rng.choice(["", " v", " D5 v", " q", " N0 J7 v"]))
    return "mn\r\n"


END_REQUEST = b"ms __end__ 1 q\r\nZ\r\nmg __end__ k v\r\n"
END_REPLY = b"VA 1 k__end__\r\nZ\r\n"


def _run(port, text):
    """Sends the whole mix, then a marker no mix can produce; returns every
    byte up to and including the marker's reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"flush_all\r\n")
        buf = b""
        while not buf.endswith(b"OK\r\n"):
            buf += s.recv(65536)
        s.sendall(text.encode() + END_REQUEST)
        out = b""
        while not out.endswith(END_REPLY):
            chunk = s.recv(65536)
            assert chunk, "connection closed"
            out += chunk
        return out


def test_marks_after_append_and_growth_same_as_memcached(ports):
    """The deterministic part of the above: an append or prepend, and a
    number that outgrows its item, make a fresh item (no fetched, stale
    or win marks), while an item changed in place keeps them."""
    text = (
        "set z 0 0 2\r\n99\r\nmg z v\r\nincr z 1\r\nmg z h v\r\n"
        "set y 0 0 2\r\n99\r\nmd y I\r\nincr y 1\r\nmg y s v\r\n"
        "set p 0 0 2\r\nab\r\nmd p I\r\nappend p 0 0 1\r\nc\r\nmg p s v\r\n"
        "set q 0 0 2\r\nab\r\nmg q v\r\nms q 1 MP\r\nc\r\nmg q h v\r\n"
        "set s 0 0 2\r\n10\r\nmd s I\r\nmg s v\r\nmg s v\r\n"
    )
    mport, tport = ports
    assert _run(tport, text) == _run(mport, text)


@pytest.mark.parametrize("seed", range(12), ids=lambda s: "seed-%d" % s)
def test_random_mix_same_as_memcached(ports, seed):
    rng = random.Random(seed)
    text = "".join(_request(rng) for _ in range(400))
    mport, tport = ports
    want = _run(mport, text)
    got = _run(tport, text)
    if want != got:
        # Point at the first differing line, with the requests before it.
        wl, gl = want.split(b"\r\n"), got.split(b"\r\n")
        i = next(i for i in range(min(len(wl), len(gl))) if wl[i] != gl[i])
        pytest.fail("first difference at reply line %d: memcached %r, tern %r\n(requests: %r)" % (i, wl[i], gl[i], text[:2000]))
