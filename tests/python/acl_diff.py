"""The differential harness of the ACL and scripting suites (test_acl.py,
test_scripting.py): the same scripted sessions, over several connections,
against a reference valkey-server and the server under test, comparing
raw reply bytes after normalising per-process values.

Why Valkey: no Redis 7.2+ build is installed here (the redis-server on PATH
is 7.0, whose ACL LOG lacks entry-id and the timestamps), and Valkey 8.1's
acl.c is Redis 7.2's, nearly line for line. Where Redis 8.4 answers
otherwise, the case says so in REDIS_EXPECT: the reference's bytes are
checked to be the Valkey bytes we know of, then replaced by Redis's.

A script is one step per line:

    [@conn] [mode]COMMAND arg ...     send on connection `conn` (default a),
                                      read one reply
    @conn !closed                     the server closes `conn`: everything it
                                      sent first, then <closed> (or <open>)
    @conn !reconnect                  a new connection under that name
    @conn !send COMMAND arg ...       send, do not read (a pipeline)
    @conn !read                       read one reply
    !hook NAME                        call the test's hook NAME for this
                                      server (edit or read its files); what
                                      it returns, if anything, is recorded

Arguments are split as a shell does, then Python-unescaped (see
differential.unescape); `rep:X:N` in one stands for X repeated N times;
a line starting with `# ` is a comment. Modes (`^` combines with any):

    ~   an array in unspecified order: compare sorted
    ?   compare only the reply's type byte (ids, random values)
    #   a bulk string of hex digits: compare its length only (ACL GENPASS)
    ^   optional: dropped when either server lacks the command
    &   an array of command names in unspecified order (ACL CAT <cat>):
        compare sorted, keeping only commands both servers have

Some normalising is by command, whatever the mode: ACL LOG (ages,
timestamps, entry ids, client-info), HELLO (version, client id, and the
server's name, which Redis spells `redis`), CLIENT LIST (the connections
given a name only, so not the harness's own, each as client-info is),
FUNCTION LIST (libraries, and each one's functions, sorted: both servers
keep them in hash tables), FUNCTION STATS (a running script's duration),
FUNCTION DUMP (the payload's footer, whose RDB version is the server's:
checked, then replaced by a placeholder).
"""

import os
import re
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from crc64 import crc64
from differential import unescape, unordered
from resp import RawConn, ReplyError, decode, encode_command, reply_end
from servers import start_redis, start_tern, start_valkey, tern_bin, valkey_bin

CLOSE_TIMEOUT = 2.0

# Case name -> (script line, Valkey 8.1's reply, Redis 8.4's reply, why).
# Both sides of the comparison get the substitution in valkey-vs-valkey
# runs; Pair.run fails a case whose reference never gave the Valkey bytes
# written here (stale_expectations), so those runs check them too.
REDIS_EXPECT = {}


def expect_redis(case, line, valkey, redis, why):
    REDIS_EXPECT.setdefault(case, []).append((line, valkey, redis, why))


def parse_script(text):
    """Steps (conn, mode, args, line, optional); `optional` (a `^` among the
    mode characters) marks a step to drop when either server lacks its
    command, so that a case grows as Tern gains commands."""
    steps = []
    for raw in text.strip("\n").splitlines():
        line = raw.strip()
        if not line or line.startswith("# "):
            continue
        conn, mode, optional = "a", "exact", False
        while line and (line[0] in "~?#&^" or line[0] == "@"):
            if line[0] == "@":
                conn, _, line = line[1:].partition(" ")
            else:
                if line[0] == "^":
                    optional = True
                else:
                    mode = {"~": "sorted", "?": "type", "#": "hex", "&": "commands"}[line[0]]
                line = line[1:]
            line = line.lstrip()
        if line.startswith("!"):
            word, _, rest = line.partition(" ")
            steps.append((conn, word[1:], split_args(rest) if rest else [], raw.strip(), optional))
            continue
        steps.append((conn, mode, split_args(line), raw.strip(), optional))
    return steps


def drop_missing(steps, common):
    """The steps without the optional ones whose command is not in `common`."""
    def have(args):
        # ACL DRYRUN needs the command it tries.
        if len(args) > 3 and args[0].lower() == b"acl" and args[1].lower() == b"dryrun":
            args = args[3:]
        name = args[0].lower()
        if name not in common:
            return False
        sub = b"%s|%s" % (name, args[1].lower()) if len(args) > 1 else None
        # A container's subcommand must be there too.
        return sub is None or sub in common or not any(c.startswith(name + b"|") for c in common)
    return [s for s in steps if not s[4] or (s[2] and have(s[2]))]


def split_args(line):
    import shlex

    out = []
    for a in shlex.split(line, posix=True):
        out.append(re.sub(rb"rep:(.):(\d+)", lambda m: m.group(1) * int(m.group(2)), unescape(a)))
    return out


# ---- normalisers ---------------------------------------------------------

_CLIENT_INFO_KEEP = ("name", "db", "flags", "multi", "user", "resp", "cmd")


def client_info(text):
    """The fields of a CLIENT INFO line that do not depend on the process
    or the clock (ids, ports, fds, ages, memory and counters are dropped;
    Redis 8.4 and Valkey 8.1 also have different sets of fields)."""
    fields = dict(f.split(b"=", 1) for f in text.split() if b"=" in f)
    return b" ".join(b"%s=%s" % (k.encode(), fields.get(k.encode(), b"<none>")) for k in _CLIENT_INFO_KEEP)


def encode_value(v, resp3):
    """Re-encodes a decoded ACL LOG value; only the shapes ACL LOG has."""
    if isinstance(v, bytes):
        return b"$%d\r\n%s\r\n" % (len(v), v)
    if isinstance(v, int):
        return b":%d\r\n" % v
    raise TypeError(v)


class Normaliser:
    """Per-case state: entry ids become their order of first appearance."""

    def __init__(self):
        self.entry_ids = {}

    def acl_log(self, reply):
        if reply[:1] != b"*" or reply == b"*0\r\n":
            return reply
        entries, _ = decode(reply)
        resp3 = b"%" in reply[:16]
        out = [b"*%d\r\n" % len(entries)]
        for e in entries:
            if isinstance(e, list):
                e = dict(zip(e[0::2], e[1::2]))
            out.append((b"%%%d\r\n" if resp3 else b"*%d\r\n") % (len(e) if resp3 else 2 * len(e)))
            for k, v in e.items():
                if k == b"age-seconds":
                    v = b"<age>"
                elif k in (b"timestamp-created", b"timestamp-last-updated"):
                    v = b"<ts>"
                elif k == b"entry-id":
                    v = b"<entry %d>" % self.entry_ids.setdefault(v, len(self.entry_ids))
                elif k == b"client-info":
                    v = client_info(v)
                out.append(encode_value(k, resp3) + encode_value(v, resp3))
        return b"".join(out)

    def hello(self, reply):
        if reply[:1] not in (b"*", b"%"):
            return reply
        reply = re.sub(rb"(\$7\r\nversion\r\n)\$\d+\r\n[^\r]*\r\n", rb"\1<version>", reply)
        reply = re.sub(rb"(\$2\r\nid\r\n):\d+\r\n", rb"\1<id>", reply)
        # Redis names itself `redis` (server.c, helloCommand); Valkey `valkey`.
        return reply.replace(b"$6\r\nserver\r\n$6\r\nvalkey\r\n", b"$6\r\nserver\r\n$5\r\nredis\r\n")

    def client_list(self, reply):
        if reply[:1] not in (b"$", b"="):
            return reply
        text, _ = decode(reply)
        if isinstance(text, bytes) and reply[:1] == b"=":
            text = text[4:]  # the verbatim string's `txt:`
        lines = [client_info(l) for l in text.splitlines() if not re.search(rb"(^| )name=( |$)", l)]
        # In connection order, which the harness's connections need not
        # share between the two servers: compared sorted.
        body = b"".join(l + b"\n" for l in sorted(lines))
        return b"$%d\r\n%s\r\n" % (len(body), body)

    def apply(self, args, mode, reply, common):
        name = [a.lower() for a in args[:2]]
        if name[:2] == [b"function", b"list"]:
            reply = function_list(reply)
        elif name[:2] == [b"function", b"stats"]:
            reply = function_stats(reply)
        elif name[:2] == [b"function", b"dump"]:
            reply = function_dump(reply)
        elif name[:2] == [b"acl", b"log"] and not (len(args) > 2 and args[2].lower() == b"reset"):
            reply = self.acl_log(reply)
        elif name[:1] == [b"hello"]:
            reply = self.hello(reply)
        elif name[:2] == [b"client", b"list"]:
            reply = self.client_list(reply)
        if mode == "sorted":
            reply = unordered(reply)
        elif mode == "type":
            reply = reply[:1]
        elif mode == "hex":
            if reply[:1] == b"$":
                v, _ = decode(reply)
                reply = b"$%d <hex:%s>" % (len(v), b"yes" if re.fullmatch(rb"[0-9a-f]*", v) else b"NO")
        elif mode == "commands" and reply[:1] in (b"*", b"~"):
            items, _ = decode(reply)
            keep = sorted(i for i in items if i.lower() in common)
            reply = b"*%d\r\n" % len(keep) + b"".join(b"$%d\r\n%s\r\n" % (len(i), i) for i in keep)
        return reply


def elements(reply):
    """An aggregate reply's head, its elements' bytes (a map's keys and
    values alike) and what follows it."""
    nl = reply.find(b"\r\n")
    n = int(reply[1:nl])
    n = 2 * n if reply[:1] in b"%|" else n
    pos, out = nl + 2, []
    for _ in range(max(n, 0)):
        end = reply_end(reply, pos)
        out.append(reply[pos:end])
        pos = end
    return reply[:nl + 2], out, reply[pos:]


def function_list(reply):
    """FUNCTION LIST with its libraries sorted, and each library's
    functions (whose order is their hash table's)."""
    if reply[:1] != b"*":
        return reply
    head, libs, rest = elements(reply)
    out = []
    for lib in libs:
        lhead, items, lrest = elements(lib)
        for i in range(0, len(items) - 1, 2):
            if items[i] == b"$9\r\nfunctions\r\n" and items[i + 1][:1] == b"*":
                fhead, fns, frest = elements(items[i + 1])
                items[i + 1] = fhead + b"".join(sorted(fns)) + frest
        out.append(lhead + b"".join(items) + lrest)
    return head + b"".join(sorted(out)) + rest


def function_stats(reply):
    return re.sub(rb"(\$11\r\nduration_ms\r\n):\d+\r\n", rb"\1<ms>", reply)


def lzf_decompress(data, size):
    """liblzf's format, as RDB files compress strings with it."""
    out, i = bytearray(), 0
    while i < len(data):
        ctrl = data[i]
        i += 1
        if ctrl < 32:
            out += data[i:i + ctrl + 1]
            i += ctrl + 1
            continue
        length = ctrl >> 5
        if length == 7:
            length += data[i]
            i += 1
        ref = len(out) - ((ctrl & 0x1F) << 8) - data[i] - 1
        i += 1
        for _ in range(length + 2):
            out.append(out[ref])
            ref += 1
    if len(out) != size:
        raise ValueError("LZF data of %d bytes, not %d" % (len(out), size))
    return bytes(out)


def rdb_length(buf, pos):
    """(length, position after, special encoding or None) of an RDB length."""
    b = buf[pos]
    if b >> 6 == 0:
        return b & 0x3F, pos + 1, None
    if b >> 6 == 1:
        return ((b & 0x3F) << 8) | buf[pos + 1], pos + 2, None
    if b == 0x80:
        return int.from_bytes(buf[pos + 1:pos + 5], "big"), pos + 5, None
    if b == 0x81:
        return int.from_bytes(buf[pos + 1:pos + 9], "big"), pos + 9, None
    return None, pos + 1, b & 0x3F


def rdb_read_string(buf, pos):
    """(string, position after) of an RDB string: plain, an integer, or LZF."""
    n, pos, enc = rdb_length(buf, pos)
    if enc is None:
        return buf[pos:pos + n], pos + n
    if enc in (0, 1, 2):
        size = 1 << enc
        return b"%d" % int.from_bytes(buf[pos:pos + size], "little", signed=True), pos + size
    if enc == 3:
        clen, pos, _ = rdb_length(buf, pos)
        ulen, pos, _ = rdb_length(buf, pos)
        return lzf_decompress(buf[pos:pos + clen], ulen), pos + clen
    raise ValueError("unknown RDB string encoding %d" % enc)


def function_dump(reply):
    """FUNCTION DUMP's payload as the libraries it holds, each as its type
    byte and its source, sorted (their order is their hash table's); how
    each is encoded (LZF or not) is left out, and the footer (RDB
    version, CRC64) becomes `<footer ok>` when the CRC is right and the
    version one Redis or Valkey writes (11 and up)."""
    if reply[:1] != b"$" or reply[:3] == b"$-1":
        return reply
    data, _ = decode(reply)
    if len(data) < 10:
        return b"<payload too short: %r>" % data
    version, crc = int.from_bytes(data[-10:-8], "little"), int.from_bytes(data[-8:], "little")
    ok = crc64(data[:-8]) == crc and version >= 11
    libs, pos = [], 0
    try:
        while pos < len(data) - 10:
            kind = data[pos]
            code, pos = rdb_read_string(data, pos + 1)
            libs.append(b"<type %d> %s" % (kind, code))
    except (ValueError, IndexError) as e:
        return b"<unreadable payload: %s: %r>" % (str(e).encode(), data)
    return b"<libraries>\n%s\n<footer %s>" % (b"\n".join(sorted(libs)), b"ok" if ok else b"BAD")


# ---- running -------------------------------------------------------------


def command_names(port, password=None):
    """Every command and subcommand name (`config|get`) the server has."""
    c = RawConn(port)
    try:
        if password:
            c.roundtrip("AUTH", password)
        items, _ = decode(c.roundtrip("COMMAND"))
    finally:
        c.close()
    names = set()

    def walk(cmds):
        for it in cmds:
            if isinstance(it, ReplyError) or not it:
                continue
            names.add(it[0].lower())
            if len(it) > 9 and isinstance(it[9], list):
                walk(it[9])

    walk(items)
    return names


def has_command(port, name):
    c = RawConn(port)
    try:
        return c.roundtrip("COMMAND", "INFO", name) not in (b"*1\r\n$-1\r\n", b"*1\r\n_\r\n")
    finally:
        c.close()


def read_until_close(conn, timeout=CLOSE_TIMEOUT):
    data = conn.read_until_close(timeout)
    if data.endswith(b"<still open>"):
        return data[: -len(b"<still open>")] + b"<open>"
    return data + b"<closed>"


def run_script(port, steps, common=frozenset(), hooks=None, subs=()):
    """The transcript: one (step, reply) per step that reads. `hooks` are
    this server's `!hook` functions; `subs` (bytes, bytes) pairs replaced
    in every reply (this server's directory by a placeholder)."""
    conns = {}
    norm = Normaliser()
    out = []

    def conn(name):
        if name not in conns:
            conns[name] = RawConn(port)
        return conns[name]

    try:
        for name, mode, args, line, _ in steps:
            try:
                if mode == "closed":
                    out.append((line, read_until_close(conn(name))))
                    conns.pop(name).close()
                elif mode == "reconnect":
                    if name in conns:
                        conns.pop(name).close()
                    conn(name)
                elif mode == "send":
                    conn(name).send(encode_command(args))
                elif mode == "read":
                    out.append((line, conn(name).read_reply()))
                elif mode == "hook":
                    got = hooks[args[0].decode()]()
                    if got is not None:
                        out.append((line, got))
                else:
                    c = conn(name)
                    c.send(encode_command(args))
                    out.append((line, norm.apply(args, mode, c.read_reply(), common)))
            except (ConnectionError, OSError) as e:
                # Closed or reset: which one depends on timing, not the server.
                out.append((line, b"<connection lost: %s>" % type(e).__name__.encode()))
                if name in conns:
                    conns.pop(name).close()
    finally:
        for c in conns.values():
            c.close()
    for old, new in subs:
        out = [(line, reply.replace(old, new)) for line, reply in out]
    return out


def redisify(case, transcript):
    """The reference's transcript with Redis 8.4's bytes where Valkey's
    differ (REDIS_EXPECT). A reference reply that is neither is left as
    it is, and so shows up in the comparison."""
    subs = REDIS_EXPECT.get(case, [])
    out = []
    for line, reply in transcript:
        for sline, valkey, redis, _ in subs:
            if sline == line and reply == valkey:
                reply = redis
                break
        out.append((line, reply))
    return out


def stale_expectations(case, steps, transcript):
    """REDIS_EXPECT entries of `case` that cannot have been checked: their
    line is no step of the case (a typo), or the reference answered that
    line without ever giving the Valkey bytes written (Valkey changed, or
    the entry is wrong). Without this, such an entry would pass unnoticed
    in valkey-vs-valkey runs, both sides being left as they are."""
    lines = {st[3] for st in steps}
    seen = {}
    for line, reply in transcript:
        seen.setdefault(line, set()).add(reply)
    out = []
    for sline, valkey, _, _ in REDIS_EXPECT.get(case, []):
        if sline not in lines:
            out.append("%r is no step of the case" % sline)
        elif sline in seen and valkey not in seen[sline]:
            out.append("%r: the reference never answered %r" % (sline, valkey[:200]))
    return out


def diff_transcripts(ref, got):
    diffs = []
    for i in range(max(len(ref), len(got))):
        a = ref[i] if i < len(ref) else ("(missing)", b"<none>")
        b = got[i] if i < len(got) else ("(missing)", b"<none>")
        if a[1] != b[1]:
            diffs.append((a[0] if i < len(ref) else b[0], a[1], b[1]))
    return diffs


def format_diffs(case, diffs, cand_name):
    lines = ["case %s:" % case]
    for step, a, b in diffs:
        lines.append("  > %s" % step[:200])
        lines.append("    expected: %r" % a[:2000])
        lines.append("    %s: %r" % (cand_name, b[:2000]))
    return "\n".join(lines)


class Admin:
    """A connection kept open for a server's whole life, authenticated as
    `default` from the start: it can still put things back after a case
    gave `default` a password (a connection stays authenticated).
    `extra_reset`: commands run after the ACL ones, each to answer +OK."""

    def __init__(self, port, extra_reset=()):
        self.port = port
        self.conn = RawConn(port)
        self.extra_reset = tuple(extra_reset)

    def close(self):
        self.conn.close()

    def reset(self):
        """Back to a fresh server's ACL state: only `default`, as the server
        starts it, no password, an empty ACL LOG, no keys. Returns what
        went wrong (empty when nothing did)."""
        c = self.conn
        errors = []
        for cmd in (("CONFIG", "SET", "requirepass", ""),
                    ("ACL", "SETUSER", "default", "reset", "on", "nopass", "~*", "&*", "+@all"),
                    ("FLUSHALL",), ("ACL", "LOG", "RESET")) + self.extra_reset:
            r = c.roundtrip(*cmd)
            if r != b"+OK\r\n":
                errors.append("%s -> %r" % (" ".join(cmd), r))
        users, _ = decode(c.roundtrip("ACL", "USERS"))
        others = [u for u in users if u != b"default"] if isinstance(users, list) else []
        if others:
            # Also closes the connections a case left authenticated as them.
            c.roundtrip("ACL", "DELUSER", *others)
        return errors


# ---- the pair of servers -------------------------------------------------


def start_candidate(threads, against_valkey, extra=(), conf=None):
    """The server under test: tern-server with `threads` workers, or a
    second valkey-server (`against_valkey`) to check that the cases are
    stable."""
    if against_valkey:
        return start_valkey(valkey_bin(), extra, conf)
    binary = tern_bin()
    if not os.path.exists(binary):
        pytest.exit(f"{binary} not found: run `cargo build` first or set TERN_BIN", returncode=2)
    return start_tern(binary, threads, extra, conf)


class Pair:
    """The reference valkey-server and the server under test, started with
    the same arguments (and each its own copy of a config file, whose
    `{dir}` is a directory of that server's: for aclfile paths).
    `extra_reset`: see Admin."""

    def __init__(self, threads, against_valkey, extra=(), conf=None, files=None, extra_reset=()):
        self.against_valkey = against_valkey
        self.extra_reset = extra_reset
        self.dirs = []
        self.ref = start_valkey(valkey_bin(), extra, self._conf(conf, files))
        try:
            self.cand = start_candidate(threads, against_valkey, extra, self._conf(conf, files))
        except Exception:
            self.ref.stop()
            raise
        self.cand_name = "valkey (candidate)" if against_valkey else "tern"
        self._common = None
        self.admins = None

    def _conf(self, conf, files):
        d = tempfile.mkdtemp(prefix="acl-conf-")
        self.dirs.append(d)
        for name, text in (files or {}).items():
            Path(d, name).write_text(text.replace("{dir}", d))
        if conf is None:
            return None
        path = Path(d, "server.conf")
        path.write_text(conf.replace("{dir}", d))
        return str(path)

    @property
    def ref_dir(self):
        return self.dirs[0]

    @property
    def cand_dir(self):
        return self.dirs[1]

    def stop(self):
        for a in self.admins or ():
            a.close()
        self.ref.stop()
        self.cand.stop()
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)

    def common(self):
        """Command and subcommand names both servers have."""
        if self._common is None:
            self._common = command_names(self.ref.port) & command_names(self.cand.port)
        return self._common

    def run(self, case, script, reset=True, hooks=None):
        """Runs `script` on both; asserts the transcripts are equal (after
        Redis 8.4's expectations replace Valkey's known bytes). `hooks`:
        name -> f(server's directory) for the script's `!hook` steps."""
        all_steps = parse_script(script)
        # Only where needed: a server that wants AUTH first has no COMMAND.
        needs = any(st[4] or st[1] == "commands" for st in all_steps)
        common = self.common() if needs else frozenset()
        steps = drop_missing(all_steps, common)
        if reset:
            if self.admins is None:
                self.admins = (Admin(self.ref.port, self.extra_reset), Admin(self.cand.port, self.extra_reset))
            ref_errors = self.admins[0].reset()
            assert not ref_errors, "the reference could not be reset: %s" % ref_errors
            reset_errors = self.admins[1].reset()
        else:
            reset_errors = []

        def bound(d):
            return {k: (lambda f=f: f(d)) for k, f in (hooks or {}).items()}

        ref_raw = run_script(self.ref.port, steps, common, bound(self.ref_dir), [(self.ref_dir.encode(), b"{dir}")])
        stale = stale_expectations(case, all_steps, ref_raw)
        assert not stale, "case %s: stale REDIS_EXPECT entries:\n  %s" % (case, "\n  ".join(stale))
        ref = redisify(case, ref_raw)
        got = run_script(self.cand.port, steps, common, bound(self.cand_dir), [(self.cand_dir.encode(), b"{dir}")])
        if self.against_valkey:
            got = redisify(case, got)
        diffs = diff_transcripts(ref, got)
        note = "".join("\n  (resetting %s before the case: %s)" % (self.cand_name, e) for e in reset_errors)
        assert not diffs, "\n" + format_diffs(case, diffs, self.cand_name) + note
        return ref


def wait_closed(sock_conn, timeout=CLOSE_TIMEOUT):
    sock_conn.sock.settimeout(timeout)
    try:
        return sock_conn.sock.recv(1) == b""
    except (socket.timeout, OSError):
        return False


def redis_candidate(pair, extra_reset=()):
    """Sets up `pair` (a Pair whose own __init__ is not run) with
    valkey-server as the reference and the redis-server on PATH (Debian's
    7.0) as the candidate: the suites' TERN_TEST_AGAINST=redis runs."""
    pair.against_valkey = False
    pair.extra_reset = extra_reset
    pair.dirs = []
    pair._conf(None, None)
    pair._conf(None, None)
    pair.ref = start_valkey(valkey_bin())
    try:
        pair.cand = start_redis(shutil.which("redis-server") or "redis-server")
    except Exception:
        pair.ref.stop()
        raise
    pair.cand_name = "redis-server"
    pair._common = None
    pair.admins = None
