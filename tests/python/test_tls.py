"""TLS on tls-port and memcache-tls-port, with the clients people use:
redis-py with `ssl=True` and client certificates, redis-cli `--tls` (when
it is on PATH), pymemcache with a TLS context. Certificates come from
trustme; each server listens on free loopback ports and is stopped by PID.
"""

import shutil
import socket
import ssl
import subprocess
import tempfile

import pytest
import redis
import trustme
from pymemcache.client.base import Client as PyClient

from conftest import against_redis
from helpers import wait_until
from servers import Server, free_port, tern_bin

pytestmark = pytest.mark.skipif(against_redis(), reason="starts tern-server with its TLS directives")


@pytest.fixture(scope="module")
def certs():
    d = tempfile.mkdtemp(prefix="tern-tls-")
    ca = trustme.CA()
    server = ca.issue_cert("localhost", "127.0.0.1")
    client = ca.issue_cert("tern-client")
    paths = {}
    for name, blob in [
        ("ca.crt", ca.cert_pem),
        ("server.crt", server.cert_chain_pems[0]),
        ("server.key", server.private_key_pem),
        ("client.crt", client.cert_chain_pems[0]),
        ("client.key", client.private_key_pem),
    ]:
        paths[name] = f"{d}/{name}"
        blob.write_to_path(paths[name])
    paths["dir"] = d
    paths["ca"] = ca
    yield paths
    shutil.rmtree(d, ignore_errors=True)


def start_tls(certs, extra=(), plain=True):
    """tern-server with a plain port (unless `plain` is false: Redis's
    `port 0`, TLS only), a TLS port and a memcached TLS port; a start that
    lost a port to another process tries new ones."""
    for _ in range(5):
        port, tls_port, mc_tls = (free_port() if plain else 0), free_port(), free_port()
        argv = [tern_bin(), "--port", str(port), "--tls-port", str(tls_port), "--memcache-tls-port", str(mc_tls),
                "--threads", "2", "--save", "",
                "--tls-cert-file", certs["server.crt"], "--tls-key-file", certs["server.key"],
                "--tls-ca-cert-file", certs["ca.crt"], *extra]
        srv = Server(argv, port=port or tls_port)
        try:
            srv.start()
        except RuntimeError as e:
            if "Could not create server TCP listening socket" in str(e):
                continue
            raise
        srv.tls_port, srv.mc_tls_port = tls_port, mc_tls
        return srv
    raise RuntimeError("no free ports")


@pytest.fixture(scope="module")
def server(certs):
    srv = start_tls(certs)
    yield srv
    srv.stop()


def tls_client(srv, certs, cert=True, **kw):
    if cert:
        kw.update(ssl_certfile=certs["client.crt"], ssl_keyfile=certs["client.key"])
    return redis.Redis(host="127.0.0.1", port=srv.tls_port, ssl=True, ssl_ca_certs=certs["ca.crt"],
                       decode_responses=True, socket_timeout=10, **kw)


def test_redis_py_over_tls_with_a_client_certificate(server, certs):
    r = tls_client(server, certs)
    assert r.ping()
    assert r.set("tls:k", "v")
    assert r.get("tls:k") == "v"
    big = "x" * 200_000
    r.set("tls:big", big)
    assert r.get("tls:big") == big
    p = r.pipeline(transaction=False)
    for i in range(200):
        p.set(f"tls:{i}", i)
        p.get(f"tls:{i}")
    out = p.execute()
    assert out[1::2] == [str(i) for i in range(200)]
    # The plain port serves the same keyspace; CLIENT LIST sees a client
    # like any other, its laddr the TLS port.
    plain = redis.Redis(host="127.0.0.1", port=server.port, decode_responses=True, socket_timeout=10)
    assert plain.get("tls:k") == "v"
    mine = [c for c in plain.client_list() if c["laddr"].endswith(f":{server.tls_port}")]
    assert len(mine) == 1, mine
    r.close()


def test_resp3_hello_over_tls(server, certs):
    r = tls_client(server, certs, protocol=3)
    assert r.ping()
    assert r.hset("tls:h", mapping={"a": "1"}) == 1
    assert r.hgetall("tls:h") == {"a": "1"}
    r.close()


def test_no_client_certificate_is_refused(server, certs):
    r = tls_client(server, certs, cert=False)
    with pytest.raises(redis.exceptions.ConnectionError):
        r.ping()
    # An untrusted client certificate (another CA) neither.
    other = trustme.CA().issue_cert("intruder")
    crt, key = f"{certs['dir']}/other.crt", f"{certs['dir']}/other.key"
    other.cert_chain_pems[0].write_to_path(crt)
    other.private_key_pem.write_to_path(key)
    bad = redis.Redis(host="127.0.0.1", port=server.tls_port, ssl=True, ssl_ca_certs=certs["ca.crt"],
                      ssl_certfile=crt, ssl_keyfile=key, socket_timeout=10)
    with pytest.raises(redis.exceptions.ConnectionError):
        bad.ping()
    assert tls_client(server, certs).ping()


def test_plain_client_on_the_tls_port_is_closed(server, certs):
    good = tls_client(server, certs)
    assert good.ping()
    plain = redis.Redis(host="127.0.0.1", port=server.tls_port, socket_timeout=10)
    with pytest.raises(redis.exceptions.ConnectionError):
        plain.ping()
    assert good.ping()
    # The log is read by another thread: wait for the line.
    wait_until(lambda: any("Error accepting a client connection" in line for line in server.log))


def test_config_set_reloads_the_certificate(certs):
    srv = start_tls(certs, plain=False)
    try:
        before = tls_client(srv, certs)
        assert before.ping()
        new = certs["ca"].issue_cert("localhost", "127.0.0.1")
        crt, key = f"{certs['dir']}/server2.crt", f"{certs['dir']}/server2.key"
        new.cert_chain_pems[0].write_to_path(crt)
        new.private_key_pem.write_to_path(key)
        assert before.execute_command("CONFIG", "SET", "tls-cert-file", crt, "tls-key-file", key) == "OK"
        with pytest.raises(redis.exceptions.ResponseError) as e:
            before.config_set("tls-cert-file", f"{certs['dir']}/missing.crt")
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'tls-cert-file') - "
                                "Unable to update TLS configuration. Check server logs.")
        assert before.config_get("tls-cert-file") == {"tls-cert-file": crt}
        assert before.ping(), "the connection made before the reload lives on"
        after = tls_client(srv, certs)
        assert after.ping()
        assert peer_cert(srv, certs) == ssl.PEM_cert_to_DER_cert(new.cert_chain_pems[0].bytes().decode())
    finally:
        srv.stop()


def peer_cert(srv, certs):
    """The certificate a new TLS connection is shown (DER)."""
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
    with socket.create_connection(("127.0.0.1", srv.tls_port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            return s.getpeercert(binary_form=True)


def test_memcached_over_tls(server, certs):
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
    mc = PyClient(("127.0.0.1", server.mc_tls_port), tls_context=ctx, timeout=10)
    assert mc.set("tls:mc", b"hello", noreply=False)
    assert mc.get("tls:mc") == b"hello"
    mc.close()


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli not on PATH")
def test_redis_cli_tls(server, certs):
    base = ["redis-cli", "-p", str(server.tls_port), "--tls", "--cacert", certs["ca.crt"]]
    with_cert = base + ["--cert", certs["client.crt"], "--key", certs["client.key"]]
    run = lambda argv: subprocess.run(argv, capture_output=True, text=True, timeout=20)
    assert run(with_cert + ["PING"]).stdout.strip() == "PONG"
    assert run(with_cert + ["SET", "tls:cli", "x"]).stdout.strip() == "OK"
    assert run(with_cert + ["GET", "tls:cli"]).stdout.strip() == "x"
    refused = run(base + ["PING"])
    assert "PONG" not in refused.stdout
