#!/usr/bin/env bash
# Lua scripting, Tern beside Redis (Debian's redis-server 7.0): the issue's
# four workloads, with ops/s and the server's CPU µs per operation.
#
#   bench/scripting.sh
#   REPS=3 SECS=5 WORKLOADS="evalsha-return1 rate-limiter-p16" bench/scripting.sh
#   TERN_THREADS=4 SERVER_CPUS=0-3 BENCH_CPUS=4-5 BENCH_THREADS=2 bench/scripting.sh
#
# Workloads (tern-bench, 50 connections, keys drawn uniformly at random):
#   evalsha-return1      EVALSHA of `return 1`, pipeline 1
#   get-incr-expire-p16  a script doing GET KEYS[1], INCR KEYS[2], EXPIRE KEYS[2] 60
#                        on two declared keys (each __key__ draws its own), pipeline 16;
#                        the GET keys are preloaded
#   rate-limiter-p16     the sliding-window rate limiter on one declared key (RL_KEYS
#                        keys, window WINDOW_MS): time from redis.call('TIME'), then
#                        ZREMRANGEBYSCORE, ZADD, ZCARD, PEXPIRE; pipeline 16
#   get-alone            GET of preloaded keys, pipeline 1 (the baseline of the next one)
#   ping-p1              PING, pipeline 1: the least any request costs (a read, a parse,
#                        a reply written), so the floor of evalsha-return1
#   get-beside-scripts   the same GETs while one more connection (a second tern-bench
#                        process, started at the same time for the same SECS) runs
#                        EVALSHA of a script that INCRs a key it does not declare,
#                        `undeclared:<math.random(1000)>`, in a loop
#
# Every run gets a fresh server (started by start_server of bench/workloads.sh:
# pinned to SERVER_CPUS, default CPU 0; Tern with TERN_THREADS workers, default
# 1; persistence off; under `timeout`), KEYS preloaded strings of DATA bytes,
# then SCRIPT LOAD of the scripts (the SHA1 is checked to be the same on both
# servers). tern-bench runs on BENCH_CPUS (default CPU 1). Server CPU per
# operation is utime+stime from /proc/<pid>/stat around the run divided by the
# operations tern-bench counted (for get-beside-scripts: GETs plus script
# calls). Runs alternate between the servers, the order swapped every repeat
# (Tern first on odd repeats, Redis first on even ones); the table gives
# medians over REPS. An error reply is never an operation; a run with errors
# is flagged under the table.
#
# With one Tern worker (the default, as bench/ab.sh measures CPU per op) the
# script loop and the GETs share that worker, as everything shares Redis's
# thread; get-beside-scripts shows Tern's other workers serving GETs while a
# script holds the shards it touches only with TERN_THREADS > 1 and
# SERVER_CPUS naming as many CPUs (and BENCH_CPUS others).
#
# Raw lines (`workload server rep ops/s cpu_us_per_op loop_calls/s errors`)
# go to OUT (default /tmp/scripting-$$.txt); the markdown section printed at
# the end is ready for bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
TERN=${TERN:-target/release/tern-server}
REDIS=${REDIS:-/usr/bin/redis-server}
BENCH=${BENCH:-target/release/tern-bench}
REPS=${REPS:-5}; SECS=${SECS:-10}; KEYS=${KEYS:-100000}; DATA=${DATA:-32}
RL_KEYS=${RL_KEYS:-10000}; WINDOW_MS=${WINDOW_MS:-1000}
CONNS=${CONNS:-50}; BENCH_THREADS=${BENCH_THREADS:-1}
SERVER_CPUS=${SERVER_CPUS:-0}; BENCH_CPUS=${BENCH_CPUS:-1}; TERN_THREADS=${TERN_THREADS:-1}
WORKLOADS=${WORKLOADS:-"evalsha-return1 get-incr-expire-p16 rate-limiter-p16 get-alone get-beside-scripts ping-p1"}
SERVER_LIMIT=${SERVER_LIMIT:-$((SECS + 600))}
BENCH_LIMIT=$((SECS + 60))
tck=$(getconf CLK_TCK)
out=${OUT:-/tmp/scripting-$$.txt}
tmp=$(mktemp -d /tmp/scripting.XXXXXX)
. bench/workloads.sh
: >"$out"
PID=; TPID=; LOOP_PID=
trap '[ -n "$LOOP_PID" ] && kill "$LOOP_PID" 2>/dev/null; stop_server; rm -rf "$tmp"' EXIT

for b in "$TERN" "$REDIS" "$BENCH"; do
    [ -x "$b" ] || { echo "missing $b (cargo build --release --bin tern-server --bin tern-bench)" >&2; exit 1; }
done

# The scripts, and their SHA1s as EVALSHA names them.
S_RETURN1='return 1'
S_GET_INCR_EXPIRE="local v = redis.call('GET', KEYS[1])
local n = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return n"
S_RATE_LIMITER="local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZADD', KEYS[1], now, t[1] .. '.' .. t[2])
local n = redis.call('ZCARD', KEYS[1])
redis.call('PEXPIRE', KEYS[1], window)
return n"
S_UNDECLARED="return redis.call('INCR', 'undeclared:' .. math.random(1000))"
sha() { printf '%s' "$1" | sha1sum | cut -d' ' -f1; }
SHA_RETURN1=$(sha "$S_RETURN1")
SHA_GET_INCR_EXPIRE=$(sha "$S_GET_INCR_EXPIRE")
SHA_RATE_LIMITER=$(sha "$S_RATE_LIMITER")
SHA_UNDECLARED=$(sha "$S_UNDECLARED")

# tern-bench's arguments common to every run (the port comes first, apart).
COMMON=(--key-minimum 1 -d "$DATA" -t "$BENCH_THREADS" -c "$CONNS" --hide-histogram
    --distinct-client-seed --test-time "$SECS")
# The script loop of get-beside-scripts: one connection, pipeline 1.
LOOP=(-t 1 -c 1 --hide-histogram --test-time "$SECS" --command "EVALSHA $SHA_UNDECLARED 0" --pipeline 1)

# Sets WL to workload $1's own tern-bench arguments (after COMMON; later
# options win) and SCRIPTS to the script bodies it needs loaded.
script_workload() {
    case $1 in
        evalsha-return1)
            WL=(--command "EVALSHA $SHA_RETURN1 0" --pipeline 1); SCRIPTS=("$S_RETURN1") ;;
        get-incr-expire-p16)
            WL=(--command "EVALSHA $SHA_GET_INCR_EXPIRE 2 __key__ ctr:__key__ 60" --pipeline 16 --key-maximum "$KEYS")
            SCRIPTS=("$S_GET_INCR_EXPIRE") ;;
        rate-limiter-p16)
            WL=(--command "EVALSHA $SHA_RATE_LIMITER 1 rl:__key__ $WINDOW_MS" --pipeline 16 --key-maximum "$RL_KEYS")
            SCRIPTS=("$S_RATE_LIMITER") ;;
        get-alone)
            WL=(--ratio 0:1 --pipeline 1 --key-maximum "$KEYS"); SCRIPTS=() ;;
        ping-p1)
            WL=(--command "PING" --pipeline 1); SCRIPTS=() ;;
        get-beside-scripts)
            WL=(--ratio 0:1 --pipeline 1 --key-maximum "$KEYS"); SCRIPTS=("$S_UNDECLARED") ;;
        *) echo "unknown workload $1" >&2; return 1 ;;
    esac
}

# Reads tern-bench's report $1: "ops/s ops errors".
bench_result() {
    awk '/^Totals/{r=$2}
        /^requests sent/{if(match($0,/ ops [0-9]+/))o=substr($0,RSTART+5,RLENGTH-5)
                         if(match($0,/, errors [0-9]+/))e=substr($0,RSTART+9,RLENGTH-9)}
        END{print (r==""?0:r), (o==""?0:o), (e==""?0:e)}' "$1"
}

run_one() { # workload server-tag binary rep
    local w=$1 tag=$2 bin=$3 rep=$4 a b s got rc=0 lrc=0
    script_workload "$w"
    rm -f "$tmp/bench" "$tmp/loop"
    start_server "$bin"
    preload_strings
    for s in "${SCRIPTS[@]}"; do
        got=$(redis-cli -p "$PORT" SCRIPT LOAD "$s")
        if [ "$got" != "$(sha "$s")" ]; then
            echo "$tag: SCRIPT LOAD returned '$got', expected $(sha "$s")" >&2; exit 1
        fi
    done
    a=$(server_ticks)
    if [ "$w" = get-beside-scripts ]; then
        timeout "$BENCH_LIMIT" taskset -c "$BENCH_CPUS" "$BENCH" -p "$PORT" "${LOOP[@]}" >"$tmp/loop" 2>&1 &
        LOOP_PID=$!
    fi
    timeout "$BENCH_LIMIT" taskset -c "$BENCH_CPUS" "$BENCH" -p "$PORT" "${COMMON[@]}" "${WL[@]}" >"$tmp/bench" 2>&1 || rc=$?
    if [ -n "$LOOP_PID" ]; then wait "$LOOP_PID" || lrc=$?; fi
    b=$(server_ticks)
    stop_server
    local ops n errs lops=0 ln=0 lerrs=0
    read -r ops n errs < <(bench_result "$tmp/bench")
    if [ -n "$LOOP_PID" ]; then read -r lops ln lerrs < <(bench_result "$tmp/loop"); LOOP_PID=; fi
    if [ "$n" = 0 ] || [ "$errs" != 0 ] || [ "$lerrs" != 0 ] || [ $rc != 0 ] || [ $lrc != 0 ]; then
        {
            echo "!! $w $tag rep $rep: $n ops, $errs errors, exit $rc; script loop: $ln calls, $lerrs errors, exit $lrc"
            grep -h -m1 '^first error' "$tmp/bench" "$tmp/loop" 2>/dev/null || true
            if [ "$n" = 0 ]; then tail -3 "$tmp/bench"; fi
        } | tee -a "$tmp/errors" >&2
    fi
    python3 -c "
n = $n + $ln
print('$w', '$tag', $rep, round($ops), round(($b - $a) / $tck * 1e6 / n, 3) if n else 'nan', round($lops), $errs + $lerrs)" |
        tee -a "$out"
}

for rep in $(seq "$REPS"); do
    for w in $WORKLOADS; do
        if (( rep % 2 )); then
            run_one "$w" tern "$TERN" "$rep"; run_one "$w" redis "$REDIS" "$rep"
        else
            run_one "$w" redis "$REDIS" "$rep"; run_one "$w" tern "$TERN" "$rep"
        fi
    done
done

# The exact tern-bench command of each workload, for the write-up.
cmds=$tmp/cmds
: >"$cmds"
join() { python3 -c 'import shlex, sys; print(shlex.join(sys.argv[1:]))' "$@"; }
for w in $WORKLOADS; do
    script_workload "$w"
    echo "$w	$(join taskset -c "$BENCH_CPUS" "$BENCH" -p PORT "${COMMON[@]}" "${WL[@]}")" >>"$cmds"
    [ "$w" = get-beside-scripts ] &&
        echo "$w (script loop, at the same time)	$(join taskset -c "$BENCH_CPUS" "$BENCH" -p PORT "${LOOP[@]}")" >>"$cmds"
done
echo "preload	$(join taskset -c "$BENCH_CPUS" "$BENCH" -p PORT --key-minimum 1 --key-maximum "$KEYS" -d "$DATA" \
    --ratio 1:0 -n allkeys --key-pattern P:P -t 1 -c 50 --pipeline 50 --hide-histogram)" >>"$cmds"
server_threads "$TERN"; tern_threads=("${THREADS[@]}")

export S_RETURN1 S_GET_INCR_EXPIRE S_RATE_LIMITER S_UNDECLARED
export SHA_RETURN1 SHA_GET_INCR_EXPIRE SHA_RATE_LIMITER SHA_UNDECLARED
export REPS SECS KEYS DATA RL_KEYS WINDOW_MS CONNS BENCH_THREADS SERVER_CPUS BENCH_CPUS TERN_THREADS WORKLOADS
export TERN_VERSION="$("$TERN" --version)" REDIS_VERSION="$("$REDIS" --version)"
export TERN_CMD="timeout $SERVER_LIMIT taskset -c $SERVER_CPUS $TERN --port PORT --bind 127.0.0.1 ${tern_threads[*]} --save ''"
export REDIS_CMD="timeout $SERVER_LIMIT taskset -c $SERVER_CPUS $REDIS --port PORT --bind 127.0.0.1 --save ''"
export COMMIT="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)')"
python3 - "$out" "$cmds" "$tmp/errors" <<'PY'
import collections, datetime, os, platform, statistics as st, sys

E = os.environ
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    w, srv, rep, ops, cpu, lops, errs = line.split()
    rows[(w, srv)].append((float(ops), float(cpu), float(lops), int(errs)))
cmds = [l.rstrip("\n").split("\t", 1) for l in open(sys.argv[2])]
errors = open(sys.argv[3]).read().strip() if os.path.exists(sys.argv[3]) else ""
workloads = [w for w in E["WORKLOADS"].split() if (w, "tern") in rows and (w, "redis") in rows]

def med(w, srv, i):
    return st.median(r[i] for r in rows[(w, srv)])

def model():
    for l in open("/proc/cpuinfo"):
        if l.startswith("model name"):
            return l.split(":", 1)[1].strip()
    return platform.processor()

mem = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal")) / 2**20
redis_v = E["REDIS_VERSION"].split(" sha")[0]
# The environment that differs from the defaults, then REPS and SECS always.
DEFAULTS = {"WORKLOADS": "evalsha-return1 get-incr-expire-p16 rate-limiter-p16 get-alone get-beside-scripts ping-p1",
            "KEYS": "100000", "DATA": "32", "RL_KEYS": "10000", "WINDOW_MS": "1000", "CONNS": "50",
            "BENCH_THREADS": "1", "SERVER_CPUS": "0", "BENCH_CPUS": "1", "TERN_THREADS": "1"}
env = [f'{k}="{E[k]}"' if " " in E[k] else f"{k}={E[k]}" for k, d in DEFAULTS.items() if E[k] != d]
env += [f"REPS={E['REPS']}", f"SECS={E['SECS']}"]
print()
print(f"## Scripting: Tern vs Redis 7.0 ({datetime.date.today()})")
print()
print(f"- date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC")
print(f"- machine: {model()}, {os.cpu_count()} CPUs, {mem:.0f} GiB, Linux {platform.release()}")
print(f"- commit: {E['COMMIT']}")
print(f"- servers: {E['TERN_VERSION']} (release build); {redis_v} (Debian's redis-server 7.0, /usr/bin/redis-server)")
print(f"- command: `{' '.join(env)} bench/scripting.sh`")
print(f"- pinning: servers on CPU {E['SERVER_CPUS']} (tern-server --threads {E['TERN_THREADS']}), "
      f"tern-bench on CPU {E['BENCH_CPUS']} (-t {E['BENCH_THREADS']} -c {E['CONNS']}); a fresh server per run, "
      f"{E['KEYS']} strings of {E['DATA']} B preloaded, then SCRIPT LOAD of the workload's scripts (same SHA1 on both)")
print(f"- repeats: {E['REPS']} × {E['SECS']} s per workload and server, alternating (order swapped every repeat); medians")
print("- server CPU per op: utime+stime of /proc/<pid>/stat around the run ÷ operations tern-bench counted "
      "(get-beside-scripts: GETs + script calls)")
print()
print("Servers:")
print()
print(f"    {E['TERN_CMD']}")
print(f"    {E['REDIS_CMD']}")
print()
print("Scripts:")
print()
for name, body, sha in (("return 1", "S_RETURN1", "SHA_RETURN1"),
                        ("GET + INCR + EXPIRE", "S_GET_INCR_EXPIRE", "SHA_GET_INCR_EXPIRE"),
                        ("sliding-window rate limiter", "S_RATE_LIMITER", "SHA_RATE_LIMITER"),
                        ("undeclared key (the loop of get-beside-scripts)", "S_UNDECLARED", "SHA_UNDECLARED")):
    print(f"- {name}, `{E[sha]}`:")
    print()
    print("```lua")
    print(E[body])
    print("```")
print()
print("tern-bench commands:")
print()
for w, c in cmds:
    print(f"- {w}: `{c}`")
print()

TARGET = {
    "evalsha-return1": ("CPU/op", 0.8, "≤"),
    "get-incr-expire-p16": ("ops", 1.5, "≥"),
    "rate-limiter-p16": ("ops", 1.3, "≥"),
}
print("| workload | Tern ops/s | Tern CPU µs/op | Redis ops/s | Redis CPU µs/op | Tern/Redis ops/s | Tern/Redis CPU/op | target |")
print("|---|---:|---:|---:|---:|---:|---:|---|")
for w in workloads:
    to, tc, ro, rc = med(w, "tern", 0), med(w, "tern", 1), med(w, "redis", 0), med(w, "redis", 1)
    ratio_o = to / ro if ro else float("nan")
    ratio_c = tc / rc if rc else float("nan")
    target = ""
    if w in TARGET:
        what, bound, op = TARGET[w]
        got = ratio_c if what == "CPU/op" else ratio_o
        ok = got <= bound if op == "≤" else got >= bound
        target = f"{what} {op} {bound} ({'met' if ok else 'not met'})"
    print(f"| {w} | {to:,.0f} | {tc:.3f} | {ro:,.0f} | {rc:.3f} | {ratio_o:.3f} | {ratio_c:.3f} | {target} |")

if "evalsha-return1" in workloads and "ping-p1" in workloads:
    floor = med("ping-p1", "tern", 1) / med("evalsha-return1", "redis", 1)
    print()
    print(f"The floor of evalsha-return1's CPU/op ratio on this machine: Tern's PING at pipeline 1 "
          f"(the least a request costs it) over Redis's EVALSHA, {floor:.3f}.")
    print()

if "get-alone" in workloads and "get-beside-scripts" in workloads:
    print()
    print(f"GET throughput of {E['CONNS']} connections, alone and while one more connection runs the "
          "undeclared-key script in a loop (ops/s, medians):")
    print()
    print("| | Tern | Redis | Tern/Redis |")
    print("|---|---:|---:|---:|")
    ga = {s: med("get-alone", s, 0) for s in ("tern", "redis")}
    gb = {s: med("get-beside-scripts", s, 0) for s in ("tern", "redis")}
    lc = {s: med("get-beside-scripts", s, 2) for s in ("tern", "redis")}
    print(f"| GET ops/s, alone | {ga['tern']:,.0f} | {ga['redis']:,.0f} | {ga['tern'] / ga['redis']:.3f} |")
    print(f"| GET ops/s, beside the script loop | {gb['tern']:,.0f} | {gb['redis']:,.0f} | {gb['tern'] / gb['redis']:.3f} |")
    print(f"| beside / alone | {gb['tern'] / ga['tern']:.3f} | {gb['redis'] / ga['redis']:.3f} | |")
    print(f"| script loop calls/s | {lc['tern']:,.0f} | {lc['redis']:,.0f} | {lc['tern'] / lc['redis']:.3f} |")

if errors:
    print()
    print("Runs with errors or no operations (their figures are not results):")
    print()
    for l in errors.splitlines():
        print(f"    {l}")
PY
