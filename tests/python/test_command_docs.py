"""COMMAND DOCS of every command Tern has, against the Redis 8
reference's (differential.redis8_bin(); skipped without it). COMMAND INFO
is compared in test_keyspecs.py.

Each command's docs must equal the reference's field for field, in order
(summary, since, group, complexity, doc_flags, history, the `arguments`
tree, ...), with a container's `subcommands` narrowed to those Tern has
(their order is unspecified). Commands the reference does not have (Tern's
own) are left out. The `arguments` come from docargs/data.rs: when this
fails after commands were added, run scripts/gen_command_args.py.
"""

import pytest

import differential
from resp import RawConn, decode
from servers import start_redis, start_tern, tern_bin

pytestmark = pytest.mark.skipif(differential.redis8_bin() is None, reason="no Redis 8 reference (TERN_REDIS8)")


@pytest.fixture(scope="module")
def conns():
    ref = start_redis(differential.redis8_bin())
    try:
        tern = start_tern(tern_bin(), 1)
    except Exception:
        ref.stop()
        raise
    pair = []
    for srv in (tern, ref):
        c = RawConn(srv.port)
        assert c.roundtrip("HELLO", "3").startswith(b"%")
        pair.append(c)
    yield pair
    for c in pair:
        c.close()
    tern.stop()
    ref.stop()


def ask(conn, *cmd):
    return decode(conn.roundtrip(*cmd))[0]


def ordered(v):
    """Maps as lists of pairs, so that comparing them compares the order."""
    if isinstance(v, dict):
        return [(k, ordered(x)) for k, x in v.items()]
    if isinstance(v, list):
        return [ordered(x) for x in v]
    return v


def tern_commands(tern):
    """Tern's top-level commands, each with its subcommands' full names."""
    names = [n.decode() for n in ask(tern, "COMMAND", "LIST")]
    tops = {n: set() for n in names if "|" not in n}
    for n in names:
        if "|" in n:
            tops[n.split("|")[0]].add(n.encode())
    return tops


def narrowed(doc, subs):
    """`doc` with its subcommands narrowed to `subs`, sorted by name."""
    out = dict(doc)
    if b"subcommands" in out:
        kept = {k: v for k, v in out[b"subcommands"].items() if k in subs}
        out[b"subcommands"] = dict(sorted(kept.items()))
    return ordered(out)


def test_command_docs_match_the_reference(conns):
    tern, ref = conns
    tops = tern_commands(tern)
    assert len(tops) > 100
    diffs, unknown = [], []
    for name, subs in sorted(tops.items()):
        want = ask(ref, "COMMAND", "DOCS", name)
        if not want:
            unknown.append(name)
            continue
        got = ask(tern, "COMMAND", "DOCS", name)
        w, g = narrowed(want[name.encode()], subs), narrowed(got[name.encode()], subs)
        if w != g:
            diffs.append("%s\n  redis: %r\n  tern:  %r" % (name, w, g))
    # Tern's own commands (and Valkey's COMMANDLOG) have no Redis docs.
    assert set(unknown) <= {"commandlog"}, unknown
    assert not diffs, "%d commands differ:\n%s" % (len(diffs), "\n".join(diffs))

