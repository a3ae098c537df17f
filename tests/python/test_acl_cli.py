"""ACL users as operators and deployment guides reach them: redis-cli's
--user/--pass and its redis:// URL, and redis-py's `redis://user:pass@host`
URL, against a server whose config locks `default` out (the hardened
config of issue 41)."""

import os
import shutil
import subprocess

import pytest
import redis

from servers import start_tern, tern_bin

CONF = "user default off\nuser alice on >secret ~app:* +@all -flushall\n"


@pytest.fixture(scope="module")
def locked(tmp_path_factory):
    conf = tmp_path_factory.mktemp("acl-cli") / "tern.conf"
    conf.write_text(CONF)
    srv = start_tern(tern_bin(), 2, conf=str(conf))
    yield srv
    srv.stop()


def cli(port, *args):
    out = subprocess.run(["redis-cli", "-p", str(port), "--no-auth-warning", *args],
                         capture_output=True, text=True, timeout=10)
    return out.stdout.strip()


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli not on PATH")
def test_redis_cli_user_and_pass(locked):
    assert cli(locked.port, "SET", "app:k", "v").startswith("NOAUTH")
    assert cli(locked.port, "--user", "alice", "--pass", "secret", "SET", "app:k", "v") == "OK"
    assert cli(locked.port, "--user", "alice", "--pass", "secret", "GET", "app:k") == "v"
    assert cli(locked.port, "--user", "alice", "--pass", "secret", "GET", "other").startswith("NOPERM No permissions to access a key")
    assert cli(locked.port, "--user", "alice", "--pass", "secret", "FLUSHALL") == \
        "NOPERM User alice has no permissions to run the 'flushall' command"
    assert "WRONGPASS" in cli(locked.port, "--user", "alice", "--pass", "nope", "PING") + \
        subprocess.run(["redis-cli", "-p", str(locked.port), "--no-auth-warning", "--user", "alice", "--pass", "nope", "PING"],
                       capture_output=True, text=True, timeout=10).stderr
    url = "redis://alice:secret@127.0.0.1:%d" % locked.port
    assert subprocess.run(["redis-cli", "--no-auth-warning", "-u", url, "ACL", "WHOAMI"],
                          capture_output=True, text=True, timeout=10).stdout.strip() == "alice"


def test_redis_py_url_with_user(locked):
    r = redis.Redis.from_url("redis://alice:secret@127.0.0.1:%d/0" % locked.port, decode_responses=True)
    try:
        assert r.acl_whoami() == "alice"
        assert r.set("app:u", "1") is True
        with pytest.raises(redis.exceptions.NoPermissionError):
            r.get("other")
    finally:
        r.close()
    anon = redis.Redis(port=locked.port, decode_responses=True)
    try:
        with pytest.raises(redis.exceptions.AuthenticationError):
            anon.get("app:u")
    finally:
        anon.close()
