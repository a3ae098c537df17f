"""The differential cases of differential.py under pytest: each case's raw
replies from tern-server must equal the reference redis-server's, unless the
case is in ALLOWED (then a difference is an expected failure, with its reason).
Skipped when redis-server is not on PATH."""


import pytest

import differential
from servers import tern_bin

pytestmark = pytest.mark.skipif(differential.reference_redis() is None, reason="redis-server not on PATH and $TERN_REFERENCE_REDIS unset")


@pytest.fixture(scope="module")
def pair():
    p = differential.Pair(tern_bin(), threads=2)
    yield p
    p.stop()


@pytest.mark.parametrize("name,text", differential.CASES, ids=[c[0] for c in differential.CASES])
def test_same_replies_as_redis(pair, name, text):
    missing = pair.missing(name)
    if missing:
        pytest.skip("Tern has no %s yet" % ", ".join(missing).upper())
    old = pair.too_old(name)
    if old:
        pytest.skip(old)
    diffs = pair.compare(name, text)
    if diffs and name in differential.ALLOWED:
        pytest.xfail(differential.ALLOWED[name])
    assert not diffs, "\n" + differential.format_diffs(name, diffs)
