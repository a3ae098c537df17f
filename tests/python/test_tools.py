"""The tools operators run, against Tern and redis-server in the same test:
redis-cli --scan, --bigkeys, --memkeys, --hotkeys, --latency, --latency-history,
--stat, MONITOR, and SLOWLOG read through redis-cli. Each test loads the same data into both and compares what the
tool prints where it is deterministic. Skipped without redis-cli or
redis-server (apt-get install redis-tools redis-server)."""
import re
import shutil
import subprocess

import pytest

from servers import start_redis, start_tern, tern_bin

REDIS_CLI = shutil.which("redis-cli")
REDIS_SERVER = shutil.which("redis-server")
pytestmark = pytest.mark.skipif(REDIS_CLI is None or REDIS_SERVER is None, reason="redis-cli or redis-server not installed")


@pytest.fixture(scope="module", params=[1, 2], ids=["t1", "t2"])
def pair(request):
    tern = start_tern(tern_bin(), request.param)
    redis = start_redis(REDIS_SERVER)
    try:
        for s in (tern, redis):
            load(s.client())
        yield tern, redis
    finally:
        tern.stop()
        redis.stop()


def load(r):
    r.flushall()
    for i in range(300):
        r.set(f"str:{i}", "x" * (i % 50))
    r.set("big", "y" * 5000)
    for i in range(20):
        r.hset(f"h:{i}", mapping={f"f{j}": "v" for j in range(i + 1)})


def cli(server, *args, timeout=20):
    p = subprocess.run([REDIS_CLI, "-p", str(server.port), *args], capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_scan(pair):
    tern, redis = pair
    for pattern in ("str:1*", "h:*", "nosuch*"):
        got = sorted(cli(tern, "--scan", "--pattern", pattern).split())
        want = sorted(cli(redis, "--scan", "--pattern", pattern).split())
        assert got == want, pattern
    assert len(cli(tern, "--scan").split()) == 321


def bigkeys_summary(out):
    """The lines of --bigkeys' summary, which do not depend on scan order."""
    keep = re.compile(r"^(Sampled \d+ keys|Total key length|Biggest +\w+ found '|\d+ \w+ with )")
    return [l.strip() for l in out.splitlines() if keep.match(l.strip())]


def test_bigkeys(pair):
    tern, redis = pair
    got = bigkeys_summary(cli(tern, "--bigkeys"))
    want = bigkeys_summary(cli(redis, "--bigkeys"))
    assert got == want
    assert "Biggest string found '\"big\"' has 5000 bytes" in got
    assert "Biggest   hash found '\"h:19\"' has 20 fields" in got


def test_latency(pair):
    for s in pair:
        # --raw prints `min max avg samples` once, after a second of PINGs.
        fields = cli(s, "--latency", "--raw").split()
        assert len(fields) == 4, fields
        lo, hi, avg, samples = int(fields[0]), int(fields[1]), float(fields[2]), int(fields[3])
        assert 0 <= lo <= avg <= hi and samples > 0, fields


def stat_lines(server, rows):
    """The header and the first `rows` rows of `redis-cli --stat`, which
    runs until stopped: line-buffered through stdbuf, stopped by its PID."""
    p = subprocess.Popen(["stdbuf", "-oL", REDIS_CLI, "-p", str(server.port), "--stat", "-i", "0.1"], stdout=subprocess.PIPE, text=True)
    try:
        return [p.stdout.readline().rstrip("\n") for _ in range(2 + rows)]
    finally:
        p.kill()
        p.wait(timeout=10)


def test_stat(pair):
    tern, redis = pair
    got, want = stat_lines(tern, 3), stat_lines(redis, 3)
    assert got[:2] == want[:2], "the same columns"
    for line in got[2:]:
        # keys, used memory, clients; the blocked column needs INFO's
        # blocked_clients (with the lists).
        keys, mem, clients = line.split()[:3]
        assert int(keys) == 321, line
        assert re.fullmatch(r"[\d.]+[KMG]?", mem), line
        assert int(clients) >= 1, line
        assert re.search(r"\(\+\d+\) +\d+ *$", line), line


def test_slowlog_through_cli(pair):
    shapes = []
    for s in pair:
        cli(s, "config", "set", "slowlog-log-slower-than", "0")
        cli(s, "slowlog", "reset")
        cli(s, "set", "foo", "bar")
        cli(s, "config", "set", "slowlog-log-slower-than", "10000")
        lines = cli(s, "slowlog", "get", "2").splitlines()
        shapes.append(lines)
        # The CONFIG SET that turned the log off is checked against its new
        # threshold, in both.
        assert cli(s, "slowlog", "len").strip() == "2", s.name
    got, want = shapes
    assert len(got) == len(want) == 15, (got, want)
    words = lambda lines: [l for l in lines if not l.isdigit() and not l.startswith("127.0.0.1:")]
    assert words(got) == words(want) == ["set", "foo", "bar", "", "slowlog", "reset", ""]
    assert got[3:6] == ["set", "foo", "bar"]


def monitor_lines(server, commands):
    """What `redis-cli monitor` prints while `commands` run on another
    connection: line-buffered through stdbuf, stopped by its PID; times and
    ports dropped."""
    p = subprocess.Popen(["stdbuf", "-oL", REDIS_CLI, "-p", str(server.port), "monitor"], stdout=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline().strip()
        # No CLIENT SETINFO on connecting: the Debian redis-server (7.0) has none.
        r = server.client(lib_name=None, lib_version=None)
        for c in commands:
            r.execute_command(*c)
        lines = [p.stdout.readline().strip() for _ in commands]
    finally:
        p.kill()
        p.wait(timeout=10)
    return [first] + [re.sub(r"^\d+\.\d{6} \[(\d+) 127\.0\.0\.1:\d+\]", r"[\1]", l) for l in lines]


def test_monitor_through_cli(pair):
    tern, redis = pair
    commands = [("SET", "m:1", 'quote"d\n'), ("GET", "m:1"), ("SELECT", "3"), ("PING",)]
    got, want = monitor_lines(tern, commands), monitor_lines(redis, commands)
    assert got == want
    assert got[:2] == ["OK", r'[0] "SET" "m:1" "quote\"d\n"']


def memkeys_summary(out):
    """--memkeys' summary without the byte counts, which are each server's own
    overhead: the keys sampled, which key is biggest of each type, and how
    many keys of each type."""
    lines = []
    for l in out.splitlines():
        l = l.strip()
        if m := re.match(r"^(Sampled \d+ keys)", l):
            lines.append(m.group(1))
        elif m := re.match(r"^(Biggest +\w+ found '.*') has \d+ bytes$", l):
            lines.append(m.group(1))
        elif m := re.match(r"^(\d+ \w+) with \d+ bytes", l):
            lines.append(m.group(1))
    return lines


def test_memkeys(pair):
    tern, redis = pair
    got = memkeys_summary(cli(tern, "--memkeys"))
    want = memkeys_summary(cli(redis, "--memkeys"))
    # Which of the largest hashes weighs most depends on each server's
    # allocation sizes (h:17..h:19 can share a size class): compared apart.
    hashes = lambda lines: [l for l in lines if l.startswith("Biggest   hash")]
    rest = lambda lines: [l for l in lines if not l.startswith("Biggest   hash")]
    assert rest(got) == rest(want)
    assert "Biggest string found '\"big\"'" in got
    assert re.fullmatch(r"Biggest   hash found '\"h:1\d\"'", hashes(got)[0]), got
    assert any(re.fullmatch(r"\d+ strings", l) for l in got) and "20 hashs" in got


def hotkeys(server):
    p = subprocess.run([REDIS_CLI, "-p", str(server.port), "--hotkeys"], capture_output=True, text=True, timeout=20)
    return p.returncode, p.stdout, p.stderr


def test_hotkeys(pair):
    tern, redis = pair
    # Without an LFU policy the tool stops at the first OBJECT FREQ, with the
    # server's error.
    errors = []
    for s in pair:
        code, _, err = hotkeys(s)
        errors.append((code, err.strip()))
    assert errors[0] == errors[1]
    assert errors[0][0] != 0 and "An LFU maxmemory policy is not selected" in errors[0][1]
    found = []
    for s in pair:
        cli(s, "config", "set", "maxmemory-policy", "allkeys-lfu")
        try:
            r = s.client()
            for _ in range(200):
                r.get("str:7")
            code, out, err = hotkeys(s)
        finally:
            cli(s, "config", "set", "maxmemory-policy", "noeviction")
        assert code == 0, err
        # `hot key found with counter: N<TAB>keyname: "k"`, hottest last.
        hot = re.findall(r"^hot key found with counter: (\d+)\tkeyname: \"(.*)\"$", out, re.M)
        assert hot, out
        found.append(hot)
        counter, key = hot[-1]
        assert key == "str:7" and int(counter) > 5, hot
    assert re.search(r"^Sampled \d+ keys", out, re.M), out


def test_latency_history(pair):
    for s in pair:
        # Not on a terminal, each interval prints `min max avg samples`.
        p = subprocess.Popen(["stdbuf", "-oL", REDIS_CLI, "-p", str(s.port), "--latency-history", "-i", "1"], stdout=subprocess.PIPE, text=True)
        try:
            rows = [p.stdout.readline().split() for _ in range(2)]
        finally:
            p.kill()
            p.wait(timeout=10)
        for fields in rows:
            assert len(fields) == 4, rows
            lo, hi, avg, samples = int(fields[0]), int(fields[1]), float(fields[2]), int(fields[3])
            assert 0 <= lo <= avg <= hi and samples > 0, rows
