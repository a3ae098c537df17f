"""Who may talk to Tern, on every port.

- **The memcached port obeys `requirepass`.** Until a connection has sent
  memcached's authentication `set` (value `<user> <password>`, checked
  against the `default` user as AUTH checks it), every other command is
  refused. Compared byte for byte with Debian's memcached started with
  `-Y` (an auth file holding `default:s3cret`).
- **Protected mode.** With `protected-mode yes` and no password, a client
  from another host gets Redis's `-DENIED ...` line and is closed, on both
  ports; loopback clients are served. The other host is a network
  namespace joined to this one by a veth pair, so the traffic stays on
  that link (root only; skipped otherwise). Redis's own bytes are checked
  from the same namespace when the current Redis build is present.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from servers import ROOT, Server, free_port, start_memcached, start_tern, tern_bin

HAVE_MEMCACHED = shutil.which("memcached") is not None or os.path.exists("/usr/bin/memcached")
REDIS_UNSTABLE = ROOT.parent / "shared" / "reference" / "bin" / "redis-server-unstable"
READ_TIMEOUT = 5.0


def read_to_close(s):
    out = b""
    while True:
        b = s.recv(65536)
        if not b:
            return out
        out += b


def exchange(port, data, host="127.0.0.1"):
    """Sends `data`, half-closes, and returns every byte until the server
    closes: the replies to exactly what was sent, whatever their count."""
    with socket.create_connection((host, port), timeout=READ_TIMEOUT) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        return read_to_close(s)


def hear(port, host="127.0.0.1"):
    """Connects, sends nothing, and returns what the server says before it
    closes: for a client refused at accept (sending first would race the
    close, whose reset can discard the line unread)."""
    with socket.create_connection((host, port), timeout=READ_TIMEOUT) as s:
        return read_to_close(s)


# Each case is one connection; memcached (-Y) and Tern must answer alike.
AUTH_CASES = [
    b"get foo\r\n",
    # memcached drops what came with a refused command.
    b"get foo\r\nversion\r\n",
    b"mg foo v\r\n",
    b"ms foo 2\r\nhi\r\n",
    b"flush_all\r\n",
    b"stats\r\n",
    b"quit\r\n",
    b"add x 0 0 14\r\ndefault s3cret\r\n",
    b"set x 0 0 12\r\ndefault nope\r\n",
    b"set x 0 0 10\r\nbob s3cret\r\n",
    b"set x 0 0 4\r\nbob \r\n",
    b"set x 0 0 7\r\ndefault\r\n",
    b"set x 0 0 14\r\ndefault\ts3cret\r\n",
    b"set x 0 0 14\r\ndefault s3cret\r\nset a 0 0 1\r\n1\r\nget a\r\n",
    b"set x 0 0 16\r\ndefault  s3cret \r\nversion\r\n",
    b"set x 0 0 20\r\ndefault s3cret extra\r\nversion\r\n",
    # The credentials `set` is answered even with noreply.
    b"set x 0 0 14 noreply\r\ndefault s3cret\r\nversion\r\n",
    # A failed attempt leaves the connection open for another.
    b"set x 0 0 12\r\ndefault nope\r\n",
    b"set x 0 0 14\r\ndefault s3cret\r\ndelete a\r\nget a\r\n",
]


@pytest.fixture(scope="module")
def auth_pair():
    tern = start_tern(tern_bin(), 2, ["--requirepass", "s3cret"])
    ref = None
    authfile = None
    if HAVE_MEMCACHED:
        authfile = tempfile.NamedTemporaryFile("w", suffix=".auth", delete=False)
        authfile.write("default:s3cret\n")
        authfile.close()
        ref = start_memcached(extra=["-Y", authfile.name])
    yield tern, ref
    tern.stop()
    if ref:
        ref.stop()
    if authfile:
        os.unlink(authfile.name)


@pytest.mark.skipif(not HAVE_MEMCACHED, reason="memcached not installed")
@pytest.mark.parametrize("case", AUTH_CASES, ids=[c.split(b"\r\n")[0].decode("latin1")[:30] for c in AUTH_CASES])
def test_memcache_auth_matches_memcached(auth_pair, case):
    tern, ref = auth_pair
    want = exchange(ref.port, case)
    got = exchange(tern.memcache_port(), case)
    assert got == want


def test_memcache_port_refuses_unauthenticated_clients(auth_pair):
    tern, _ = auth_pair
    r = tern.client(password="s3cret")
    r.set("secret", "v")
    mc = tern.memcache_port()
    assert exchange(mc, b"get secret\r\n") == b"CLIENT_ERROR unauthenticated\r\n"
    assert exchange(mc, b"flush_all\r\n") == b"CLIENT_ERROR unauthenticated\r\n"
    assert r.get("secret") == "v"
    assert exchange(mc, b"set x 0 0 14\r\ndefault s3cret\r\nget secret\r\n") == b"STORED\r\nVALUE secret 0 1\r\nv\r\nEND\r\n"
    # The RESP port still wants AUTH.
    assert exchange(tern.port, b"GET secret\r\n") == b"-NOAUTH Authentication required.\r\n"


def test_memcache_port_is_off_unless_configured():
    srv = Server([tern_bin(), "--port", "0", "--threads", "1"]).start()
    try:
        assert not any("memcache port=" in line for line in srv.log)
        srv.client().ping()
    finally:
        srv.stop()


# -- protected mode, from another network namespace ---------------------------

NETNS_CLIENT = r"""
import socket, sys
host, port, data = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3])
s = socket.create_connection((host, port), timeout=5)
# Nothing to send: a refused client is spoken to first (sending at once
# races the close, whose reset may discard the line before it is read).
if data:
    s.sendall(data)
out = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            out += b"<closed>"
            break
        out += b
        if out.endswith(b"\r\n") and not out.startswith((b"-DENIED", b"SERVER_ERROR")):
            break
except socket.timeout:
    out += b"<timeout>"
sys.stdout.write(out.hex())
"""


class Netns:
    """A namespace `ns` joined to this one by a veth pair: this side is
    `host`, the namespace's side `peer`, on a /30 of their own."""

    def __init__(self):
        tag = os.getpid() % 100000
        self.ns = f"tern-pm-{tag}"
        self.veth = f"tpm{tag}a"
        self.peer_if = f"tpm{tag}b"
        third = tag % 250
        self.host = f"10.213.{third}.1"
        self.peer = f"10.213.{third}.2"

    def run(self, *cmd):
        subprocess.run(cmd, check=True, capture_output=True, timeout=20)

    def up(self):
        self.run("ip", "netns", "add", self.ns)
        try:
            self.run("ip", "link", "add", self.veth, "type", "veth", "peer", "name", self.peer_if)
            self.run("ip", "link", "set", self.peer_if, "netns", self.ns)
            self.run("ip", "addr", "add", f"{self.host}/30", "dev", self.veth)
            self.run("ip", "link", "set", self.veth, "up")
            self.run("ip", "netns", "exec", self.ns, "ip", "addr", "add", f"{self.peer}/30", "dev", self.peer_if)
            self.run("ip", "netns", "exec", self.ns, "ip", "link", "set", self.peer_if, "up")
            self.run("ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up")
        except Exception:
            self.down()
            raise

    def down(self):
        subprocess.run(["ip", "link", "del", self.veth], capture_output=True, timeout=20)
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True, timeout=20)

    def talk(self, port, data):
        """What a client in the namespace gets for `data`."""
        out = subprocess.run(
            ["ip", "netns", "exec", self.ns, sys.executable, "-c", NETNS_CLIENT, self.host, str(port), data.hex()],
            capture_output=True,
            timeout=30,
        )
        assert out.returncode == 0, out.stderr.decode()
        return bytes.fromhex(out.stdout.decode())


@pytest.fixture(scope="module")
def netns():
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 to create a network namespace")
    n = Netns()
    try:
        n.up()
    except (subprocess.CalledProcessError, OSError) as e:
        pytest.skip(f"cannot create a network namespace here: {e}")
    yield n
    n.down()


DENIED_PREFIX = b"-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user."


def test_protected_mode_refuses_other_hosts_on_both_ports(netns):
    srv = Server([tern_bin(), "--port", "0", "--memcache-port", "11211", "--threads", "1", "--bind", "127.0.0.1", netns.host]).start()
    try:
        assert any("protected mode is on" in line for line in srv.log), srv.log
        mc = srv.memcache_port()
        got = netns.talk(srv.port, b"")
        assert got.startswith(DENIED_PREFIX) and got.endswith(b"\r\n<closed>"), got
        got = netns.talk(mc, b"")
        assert got.startswith(b"SERVER_ERROR DENIED Redis is running in protected mode") and got.endswith(b"<closed>"), got
        # Loopback clients are served, and may lift protected mode.
        r = srv.client()
        assert r.ping()
        assert exchange(mc, b"version\r\n").startswith(b"VERSION ")
        assert int(r.info("stats")["rejected_connections"]) == 2
        r.config_set("protected-mode", "no")
        assert netns.talk(srv.port, b"PING\r\n") == b"+PONG\r\n"
        assert netns.talk(mc, b"version\r\n").startswith(b"VERSION ")
        # A password lifts it too, and then every port wants it.
        r.config_set("protected-mode", "yes")
        r.config_set("requirepass", "s3cret")
        assert netns.talk(srv.port, b"PING\r\n") == b"-NOAUTH Authentication required.\r\n"
        assert netns.talk(mc, b"version\r\n") == b"CLIENT_ERROR unauthenticated\r\n"
        assert netns.talk(srv.port, b"AUTH s3cret\r\nPING\r\n").startswith(b"+OK\r\n")
    finally:
        srv.stop()


def test_unprotected_exposed_server_warns_at_start_up(netns):
    srv = Server([tern_bin(), "--port", "0", "--threads", "1", "--bind", "127.0.0.1", netns.host, "--protected-mode", "no"]).start()
    try:
        assert any("protected mode off and no password" in line for line in srv.log), srv.log
        assert netns.talk(srv.port, b"PING\r\n") == b"+PONG\r\n"
    finally:
        srv.stop()


@pytest.mark.skipif(not REDIS_UNSTABLE.exists(), reason="no current Redis build")
def test_denied_line_is_redis_bytes(netns):
    tern = Server([tern_bin(), "--port", "0", "--threads", "1", "--bind", "127.0.0.1", netns.host]).start()
    port = free_port()
    ref = Server([str(REDIS_UNSTABLE), "--port", str(port), "--bind", "127.0.0.1", netns.host, "--save", ""], port=port, name="redis").start()
    try:
        want = netns.talk(port, b"")
        assert want.startswith(DENIED_PREFIX)
        assert netns.talk(tern.port, b"") == want
    finally:
        tern.stop()
        ref.stop()


# -- maxclients fitted to the open-file limit --------------------------------

@pytest.mark.skipif(shutil.which("setpriv") is None and os.geteuid() == 0, reason="needs setpriv to drop root's CAP_SYS_RESOURCE")
def test_maxclients_is_fitted_to_a_low_open_file_limit():
    # 300 descriptors, hard limit too, and no privilege to raise it: as
    # Redis, maxclients shrinks to 300 - 32 with a warning, and client 269
    # gets the maxclients error instead of an accept() failure.
    drop = "exec setpriv --reuid=65534 --regid=65534 --clear-groups " if os.geteuid() == 0 else "exec "
    cmd = f"ulimit -Sn 300 && ulimit -Hn 300 && {drop}{tern_bin()} --port 0 --threads 1"
    srv = Server(["sh", "-c", cmd]).start()
    conns = []
    try:
        assert any("maxclients has been reduced to 268" in line for line in srv.log), srv.log
        r = srv.client()
        assert r.config_get("maxclients") == {"maxclients": "268"}
        assert r.info("clients")["maxclients"] == 268
        # A higher maxclients the limit cannot hold is refused, as by Redis.
        with pytest.raises(Exception, match="not able to handle the specified number of clients, try with 268"):
            r.config_set("maxclients", 1000)
        for _ in range(267):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=READ_TIMEOUT)
            conns.append(s)
        conns[-1].sendall(b"PING\r\n")
        assert conns[-1].recv(100) == b"+PONG\r\n"
        assert hear(srv.port) == b"-ERR max number of clients reached\r\n"
    finally:
        for s in conns:
            s.close()
        srv.stop()
