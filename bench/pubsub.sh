#!/usr/bin/env bash
# Publish/subscribe, Tern beside Redis (Debian's redis-server 7.0): the issue's
# three workloads, with throughput, latency and the server's CPU per operation.
#
#   bench/pubsub.sh
#   REPS=3 SECS=10 WORKLOADS="fanout publish-p16" bench/pubsub.sh
#   SECS=2 REPS=1 BUILD=0 bench/pubsub.sh          # a smoke run, not a measurement
#   TERN_THREADS=2 SERVER_CPUS=0,1 BENCH_CPUS=2-3 SUB_THREADS=2 bench/pubsub.sh
#
# Workloads (tern-bench; payloads are `__time_us__`, 16 digits of the publish
# time padded to DATA bytes, so that every subscriber message carries its
# delivery latency = receive time - publish time):
#   fanout        one publisher connection (pipeline FANOUT_PIPELINE, default 1)
#                 PUBLISHing to one channel that FANOUT_SUBS (1,000) subscribers
#                 subscribed: delivered messages/s and server CPU µs per delivered
#                 message
#   publish-p16   P16_CONNS (50) connections PUBLISHing at pipeline 16 to one
#                 channel with one subscriber: PUBLISH/s and server CPU µs per PUBLISH
#   channels-10k  CHAN_SUBS (1,000) subscribers over CHANNELS (10,000) channels
#                 (ten each, round-robin) plus the PATTERNS (ten by default, each
#                 PSUBSCRIBEd by one subscriber, matching about 11% of the channels
#                 between them); CHAN_CONNS (50) connections at pipeline 1 PUBLISH to
#                 channels drawn uniformly. First the peak (no limit), then, on the
#                 same server, RATE_PCT (80) % of that peak (tern-bench
#                 --rate-limiting, per connection): publish latency p99.9 there
#
# Every run gets a fresh server (start_server of bench/workloads.sh: on a free
# loopback port, pinned to SERVER_CPUS, default CPU 0; Tern with TERN_THREADS
# workers, default 1; persistence off; `--maxclients MAXCLIENTS`; under
# `timeout`; stopped by its PID). tern-bench runs on BENCH_CPUS (default CPU 1),
# its subscribers on SUB_THREADS threads of their own (default 1), subscribed
# before the load starts; after the load it waits for the messages still on their
# way (as many as the PUBLISH replies announced, or 1 s without one). Server CPU
# per operation is the server's own INFO cpu (used_cpu_user + used_cpu_sys)
# around the run, as tern-bench reads it, divided by PUBLISHes or by messages
# received. Runs alternate between the servers, the order swapped every repeat;
# the summary gives medians over REPS and Tern/Redis ratios. A run with error
# replies, a dropped connection or messages missing is flagged under the tables.
# On two cores the publishers and the subscribers share BENCH_CPUS: the fan-out
# may measure tern-bench's subscribers as much as the server (check that the
# server CPU µs per message, not messages/s, is what differs).
#
# Raw results (one JSON object per run) go to OUT (default /tmp/pubsub-$$.jsonl),
# the summary (markdown, ready for bench/RESULTS.md) to stdout and SUMMARY
# (default /tmp/pubsub-$$.md).
set -euo pipefail
cd "$(dirname "$0")/.."
TERN=${TERN:-target/release/tern-server}
REDIS=${REDIS:-/usr/bin/redis-server}
BENCH=${BENCH:-target/release/tern-bench}
BUILD=${BUILD:-1}
REPS=${REPS:-3}; SECS=${SECS:-10}; DATA=${DATA:-32}
WORKLOADS=${WORKLOADS:-"fanout publish-p16 channels-10k"}
FANOUT_SUBS=${FANOUT_SUBS:-1000}; FANOUT_PIPELINE=${FANOUT_PIPELINE:-1}
P16_CONNS=${P16_CONNS:-50}
CHANNELS=${CHANNELS:-10000}; CHAN_SUBS=${CHAN_SUBS:-1000}; CHAN_CONNS=${CHAN_CONNS:-50}
PATTERNS=${PATTERNS:-"chan-{1..9}*7,chan-1*3"}
RATE_PCT=${RATE_PCT:-80}
SUB_THREADS=${SUB_THREADS:-1}; SUB_RESP3=${SUB_RESP3:-0}
SERVER_CPUS=${SERVER_CPUS:-0}; BENCH_CPUS=${BENCH_CPUS:-1}; TERN_THREADS=${TERN_THREADS:-1}
max() { local m=$1; shift; for v; do (( v > m )) && m=$v; done; echo "$m"; }
MAXCLIENTS=${MAXCLIENTS:-$(( $(max "$FANOUT_SUBS" $((CHAN_SUBS + CHAN_CONNS)) $((P16_CONNS + 1))) + 64 ))}
BENCH_LIMIT=$((SECS + 120))
SERVER_LIMIT=${SERVER_LIMIT:-$((2 * BENCH_LIMIT + 60))}
out=${OUT:-/tmp/pubsub-$$.jsonl}
summary=${SUMMARY:-/tmp/pubsub-$$.md}
tmp=$(mktemp -d /tmp/pubsub.XXXXXX)
export SERVER_CPUS BENCH_CPUS TERN_THREADS SERVER_LIMIT
. bench/workloads.sh
PID=; TPID=
trap 'stop_server; rm -rf "$tmp"' EXIT

# Every subscriber is a socket on both sides (and the server wants
# maxclients + 32 descriptors, as Redis counts them).
need=$((MAXCLIENTS + 128))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$need" ]; then
    ulimit -n "$need" 2>/dev/null || {
        echo "ulimit -n is $(ulimit -n) (hard limit $(ulimit -Hn)); $need descriptors are needed" >&2; exit 1; }
fi

if [ "$BUILD" = 1 ]; then
    cargo build --release -p tern-server -p tern-bench >&2
fi
for b in "$TERN" "$REDIS" "$BENCH"; do
    [ -x "$b" ] || { echo "missing $b (cargo build --release -p tern-server -p tern-bench)" >&2; exit 1; }
done

# tern-bench's arguments common to every run (the port comes first, apart).
COMMON=(-t 1 --hide-histogram --distinct-client-seed --test-time "$SECS" -d "$DATA"
    --subscriber-threads "$SUB_THREADS")
if [ "$SUB_RESP3" = 1 ]; then COMMON+=(--subscribe-resp3); fi

# Sets WL to workload $1's own tern-bench arguments.
pubsub_workload() {
    case $1 in
        fanout)
            WL=(-c 1 --pipeline "$FANOUT_PIPELINE" --command "PUBLISH fanout __time_us__"
                --subscribers "$FANOUT_SUBS" --subscribe-channels fanout) ;;
        publish-p16)
            WL=(-c "$P16_CONNS" --pipeline 16 --command "PUBLISH one __time_us__"
                --subscribers 1 --subscribe-channels one) ;;
        channels-10k)
            WL=(-c "$CHAN_CONNS" --pipeline 1 --command "PUBLISH chan-__key__ __time_us__" --key-prefix ''
                --key-minimum 0 --key-maximum $((CHANNELS - 1))
                --subscribers "$CHAN_SUBS" --subscribe-channels "chan-{0..$((CHANNELS - 1))}"
                --subscribe-patterns "$PATTERNS") ;;
        *) echo "unknown workload $1" >&2; return 1 ;;
    esac
}

# Runs tern-bench against PORT with "$@" after COMMON; prints tern-bench's
# JSON report reduced to one line of key=value (and rc=), for record().
bench_run() {
    local json=$tmp/bench.json log=$tmp/bench.log rc=0
    rm -f "$json"
    timeout "$BENCH_LIMIT" taskset -c "$BENCH_CPUS" "$BENCH" -p "$PORT" "${COMMON[@]}" "$@" \
        --json-out-file "$json" >"$log" 2>&1 || rc=$?
    python3 - "$json" "$log" "$rc" <<'PY'
import json, sys
path, log, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = {"rc": rc}
try:
    a = json.load(open(path))["ALL STATS"]
except (OSError, ValueError, KeyError):
    a = None
if a:
    t, s = a["Totals"], a.get("Subscribers", {})
    pl, sl = t["Percentile Latencies"], s.get("Percentile Latencies", {})
    r.update(ops=t["Ops/sec"], count=t["Count"], errors=t["Errors"], conn_errors=t["Connection Errors"],
             p50=pl["p50.00"], p99=pl["p99.00"], p999=pl["p99.90"], cpu_op=t.get("Server CPU usec/op"),
             msgs=s.get("Count", 0), msgs_s=s.get("Messages/sec", 0), announced=s.get("Publish Receivers", 0),
             untimed=s.get("Untimed", 0), sub_conn_errors=s.get("Connection Errors", 0),
             d50=sl.get("p50.00"), d99=sl.get("p99.00"), d999=sl.get("p99.90"),
             cpu_msg=s.get("Server CPU usec/message"))
lines = open(log, errors="replace").read().splitlines()
first = [l for l in lines if l.startswith("first ") or l.startswith("tern-bench:")]
if first:
    r["first_error"] = first[0]
print(json.dumps(r))
PY
}

# Appends one run's result to OUT: workload, server, repeat, phase, figures.
record() { # workload tag rep phase json
    python3 -c '
import json, sys
r = json.loads(sys.argv[5]); r.update(workload=sys.argv[1], server=sys.argv[2], rep=int(sys.argv[3]), phase=sys.argv[4])
print(json.dumps(r))' "$@" | tee -a "$out" >&2
}

run_one() { # workload server-tag binary rep
    local w=$1 tag=$2 bin=$3 rep=$4 r peak per
    pubsub_workload "$w"
    start_server "$bin" --maxclients "$MAXCLIENTS"
    r=$(bench_run "${WL[@]}")
    if [ "$w" = channels-10k ]; then
        record "$w" "$tag" "$rep" peak "$r"
        peak=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get("ops", 0))' "$r")
        per=$(python3 -c "print(max(1, round($peak * $RATE_PCT / 100 / $CHAN_CONNS)))")
        r=$(bench_run "${WL[@]}" --rate-limiting "$per")
        r=$(python3 -c 'import json, sys; r = json.loads(sys.argv[1]); r.update(peak=float(sys.argv[2]), per_conn=int(sys.argv[3])); print(json.dumps(r))' "$r" "$peak" "$per")
        record "$w" "$tag" "$rep" rated "$r"
    else
        record "$w" "$tag" "$rep" run "$r"
    fi
    stop_server
}

: >"$out"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for rep in $(seq "$REPS"); do
    for w in $WORKLOADS; do
        if (( rep % 2 )); then
            run_one "$w" tern "$TERN" "$rep"; run_one "$w" redis "$REDIS" "$rep"
        else
            run_one "$w" redis "$REDIS" "$rep"; run_one "$w" tern "$TERN" "$rep"
        fi
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# The exact tern-bench command of each workload, for the write-up.
cmds=$tmp/cmds
: >"$cmds"
join() { python3 -c 'import shlex, sys; print(shlex.join(sys.argv[1:]))' "$@"; }
for w in $WORKLOADS; do
    pubsub_workload "$w"
    echo "$w	$(join taskset -c "$BENCH_CPUS" "$BENCH" -p PORT "${COMMON[@]}" "${WL[@]}")" >>"$cmds"
    if [ "$w" = channels-10k ]; then
        echo "$w at $RATE_PCT% of peak	$(join taskset -c "$BENCH_CPUS" "$BENCH" -p PORT "${COMMON[@]}" "${WL[@]}") --rate-limiting N" >>"$cmds"
    fi
done
server_threads "$TERN"; tern_threads=("${THREADS[@]}")

export REPS SECS DATA WORKLOADS FANOUT_SUBS FANOUT_PIPELINE P16_CONNS CHANNELS CHAN_SUBS CHAN_CONNS PATTERNS
export RATE_PCT SUB_THREADS SUB_RESP3 MAXCLIENTS load_before load_after
export TERN_VERSION="$("$TERN" --version)" REDIS_VERSION="$("$REDIS" --version)"
export TERN_CMD="timeout $SERVER_LIMIT taskset -c $SERVER_CPUS $TERN --port PORT --bind 127.0.0.1 ${tern_threads[*]} --save '' --maxclients $MAXCLIENTS"
export REDIS_CMD="timeout $SERVER_LIMIT taskset -c $SERVER_CPUS $REDIS --port PORT --bind 127.0.0.1 --save '' --maxclients $MAXCLIENTS"
export COMMIT="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)')"
python3 - "$out" "$cmds" <<'PY' | tee "$summary"
import collections, datetime, json, os, platform, statistics as st, sys

E = os.environ
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
cmds = [l.rstrip("\n").split("\t", 1) for l in open(sys.argv[2])]
by = collections.defaultdict(list)
for r in runs:
    by[(r["workload"], r["server"], r["phase"])].append(r)

def model():
    for l in open("/proc/cpuinfo"):
        if l.startswith("model name"):
            return l.split(":", 1)[1].strip()
    return platform.processor()

def med(w, srv, phase, key):
    v = [r[key] for r in by[(w, srv, phase)] if r.get(key) is not None]
    return st.median(v) if v else None

mem = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal")) / 2**20
DEFAULTS = {"WORKLOADS": "fanout publish-p16 channels-10k", "DATA": "32", "FANOUT_SUBS": "1000",
            "FANOUT_PIPELINE": "1", "P16_CONNS": "50", "CHANNELS": "10000", "CHAN_SUBS": "1000",
            "CHAN_CONNS": "50", "PATTERNS": "chan-{1..9}*7,chan-1*3", "RATE_PCT": "80", "SUB_THREADS": "1",
            "SUB_RESP3": "0", "SERVER_CPUS": "0", "BENCH_CPUS": "1", "TERN_THREADS": "1"}
env = [f"{k}='{E[k]}'" if any(c in E[k] for c in " {*") else f"{k}={E[k]}"
       for k, d in DEFAULTS.items() if E[k] != d]
env += [f"REPS={E['REPS']}", f"SECS={E['SECS']}"]
print()
print(f"## Publish/subscribe: Tern vs Redis 7.0 ({datetime.date.today()})")
print()
print(f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; load average before / after: "
      f"{E['load_before']} / {E['load_after']}")
print(f"- machine: {model()}, {os.cpu_count()} CPUs, {mem:.0f} GiB, Linux {platform.release()}")
print(f"- commit: {E['COMMIT']}")
print(f"- servers: {E['TERN_VERSION']} (release build); {E['REDIS_VERSION'].split(' sha')[0]} (Debian's redis-server 7.0)")
print(f"- command: `{' '.join(env)} bench/pubsub.sh`")
print(f"- pinning: servers on CPU {E['SERVER_CPUS']} (tern-server --threads {E['TERN_THREADS']}), tern-bench on "
      f"CPU {E['BENCH_CPUS']} (publishers on 1 thread, subscribers on {E['SUB_THREADS']} of their own, "
      f"{'RESP3' if E['SUB_RESP3'] == '1' else 'RESP2'}); a fresh server per run, --maxclients {E['MAXCLIENTS']}")
print(f"- repeats: {E['REPS']} × {E['SECS']} s per workload and server (channels-10k: a peak run, then "
      f"{E['RATE_PCT']}% of it on the same server), alternating, order swapped every repeat; medians")
print("- server CPU: INFO cpu (used_cpu_user + used_cpu_sys) before and after, ÷ PUBLISHes or ÷ messages received")
print("- latency: publish = PUBLISH request to reply; delivery = a subscriber's read - the publish time in the payload")
print()
print("Servers:")
print()
print(f"    {E['TERN_CMD']}")
print(f"    {E['REDIS_CMD']}")
print()
print("tern-bench commands:")
print()
for w, c in cmds:
    print(f"- {w}: `{c}`")
print()

ROWS = {
    "fanout": [("run", "msgs_s", "delivered messages/s", "{:,.0f}"),
               ("run", "cpu_msg", "server CPU µs per delivered message", "{:.3f}"),
               ("run", "ops", "PUBLISH/s", "{:,.0f}"),
               ("run", "d50", "delivery latency p50, ms", "{:.3f}"),
               ("run", "d999", "delivery latency p99.9, ms", "{:.3f}")],
    "publish-p16": [("run", "ops", "PUBLISH/s", "{:,.0f}"),
                    ("run", "cpu_op", "server CPU µs per PUBLISH", "{:.3f}"),
                    ("run", "msgs_s", "messages received/s", "{:,.0f}"),
                    ("run", "p999", "publish latency p99.9, ms", "{:.3f}"),
                    ("run", "d999", "delivery latency p99.9, ms", "{:.3f}")],
    "channels-10k": [("peak", "ops", "peak PUBLISH/s", "{:,.0f}"),
                     ("rated", "ops", f"PUBLISH/s at {E['RATE_PCT']}% of peak", "{:,.0f}"),
                     ("rated", "p50", "publish latency p50, ms", "{:.3f}"),
                     ("rated", "p99", "publish latency p99, ms", "{:.3f}"),
                     ("rated", "p999", "**publish latency p99.9, ms**", "{:.3f}"),
                     ("rated", "d999", "delivery latency p99.9, ms", "{:.3f}"),
                     ("rated", "cpu_op", "server CPU µs per PUBLISH", "{:.3f}"),
                     ("rated", "cpu_msg", "server CPU µs per delivered message", "{:.3f}")],
}
print("| workload | measure | Tern | Redis | Tern/Redis |")
print("|---|---|---:|---:|---:|")
for w in E["WORKLOADS"].split():
    for phase, key, label, fmt in ROWS.get(w, []):
        t, r = med(w, "tern", phase, key), med(w, "redis", phase, key)
        cell = lambda v: fmt.format(v) if v is not None else "n/a"
        ratio = f"{t / r:.3f}" if t is not None and r else "n/a"
        print(f"| {w} | {label} | {cell(t)} | {cell(r)} | {ratio} |")

bad = []
for r in runs:
    why = []
    if r.get("rc"):
        why.append(f"exit {r['rc']}")
    if not r.get("count"):
        why.append("no operations")
    for k in ("errors", "conn_errors", "sub_conn_errors"):
        if r.get(k):
            why.append(f"{k} {r[k]}")
    if r.get("msgs", 0) < r.get("announced", 0):
        why.append(f"received {r['msgs']} of {r['announced']} messages announced")
    if r.get("untimed"):
        why.append(f"{r['untimed']} messages without a publish time")
    if why:
        bad.append(f"{r['workload']} {r['server']} rep {r['rep']} {r['phase']}: " + ", ".join(why)
                   + (f" ({r['first_error']})" if r.get("first_error") else ""))
if bad:
    print()
    print("Runs with errors or missing messages (their figures are not results):")
    print()
    for l in bad:
        print(f"    {l}")
PY
echo "raw results: $out; summary: $summary" >&2
