#!/usr/bin/env bash
# SET at pipeline 16 on a master alone and with one replica attached,
# against a reference server, alternating (bench/workloads.sh's helpers):
# the master on CPU 0 with one worker, tern-bench and the replica (the same
# binary as the master) on CPU 1.
#
#   alone     SET __key__ <32 B>, 50 connections, pipeline 16, 100K keys
#   replica   the same with a replica that has finished its full
#             resynchronisation; the master's CPU includes streaming to it
#   null      the same with bench/null_replica.py in the replica's place: it
#             reads the stream and throws it away, so the figure is what
#             streaming alone costs (the master's work and the kernel's on
#             both sides), without applying; not in the default WORKLOADS
#
#   cargo build --release -p tern-server -p tern-bench
#   bench/replication.sh target/release/tern-server /usr/bin/redis-server
#   REPS=5 SECS=10 bench/replication.sh A B
#
# Prints `workload binary ops/s cpu_us_per_op lag lag_s` lines (lag: the
# largest master_repl_offset - the replica's offset sampled during the run,
# bytes; lag_s: the largest time, in seconds, since the master's offset was
# where the replica's is, over samples every 0.1 s; `-` alone), then a table
# of medians with B/A ratios. The issue's lag run:
#
#   WORKLOADS=replica REPS=1 SECS=60 bench/replication.sh A B
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1; B=$2
BENCH=${BENCH:-target/release/tern-bench}
REPS=${REPS:-3}; SECS=${SECS:-8}
SERVER_LIMIT=${SERVER_LIMIT:-$((SECS + 600))}
WORKLOADS=${WORKLOADS:-"alone replica"}
tck=$(getconf CLK_TCK)
out=${OUT:-/tmp/replication-$$.txt}
. bench/workloads.sh
: >"$out"
PID=; TPID=; RPID=; RTPID=; RDIR=
stop_all() {
    if [ -n "$RPID" ]; then kill "$RPID" 2>/dev/null || true; fi
    if [ -n "$RTPID" ] && [ -z "$RPID" ]; then kill "$RTPID" 2>/dev/null || true; fi
    if [ -n "$RTPID" ]; then wait "$RTPID" 2>/dev/null || true; fi
    if [ -n "$RDIR" ]; then rm -rf "$RDIR"; fi
    RPID=; RTPID=; RDIR=
    stop_server
}
trap stop_all EXIT

# Starts a replica of the master at PORT (binary $1) on CPU 1; waits until
# its link is up. Sets RPORT, RPID, RTPID.
start_replica() {
    local bin=$1
    RPORT=$(free_port)
    server_threads "$bin"
    RDIR=$(mktemp -d)
    timeout "$SERVER_LIMIT" taskset -c "${BENCH_CPUS:-1}" "$bin" --port "$RPORT" --bind 127.0.0.1 "${THREADS[@]}" \
        --save '' --dir "$RDIR" --replicaof 127.0.0.1 "$PORT" >/dev/null 2>&1 &
    RTPID=$!
    for _ in $(seq 300); do
        RPID=$(awk '{print $1}' /proc/$RTPID/task/$RTPID/children 2>/dev/null)
        if [ -n "$RPID" ] && redis-cli -p "$RPORT" info replication 2>/dev/null | grep -q 'master_link_status:up'; then return 0; fi
        sleep 0.1
    done
    echo "replica did not sync: $bin" >&2
    return 1
}

# Starts bench/null_replica.py on CPU 1 as the master's replica; waits
# until the master has it online. Sets RTPID.
start_null_replica() {
    timeout "$SERVER_LIMIT" taskset -c "${BENCH_CPUS:-1}" python3 bench/null_replica.py "$PORT" "$SERVER_LIMIT" &
    RTPID=$!
    for _ in $(seq 300); do
        if redis-cli -p "$PORT" info replication 2>/dev/null | grep -q 'state=online'; then return 0; fi
        sleep 0.1
    done
    echo "the null replica did not sync" >&2
    return 1
}

offset() { redis-cli -p "$1" info replication | awk -F: "/^$2:/{print \$2+0}"; }

run_one() { # workload binary tag
    local w=$1 bin=$2 tag=$3 a b ops lag=- lag_s=- sampler=
    start_server "$bin" --repl-diskless-sync-delay 0
    if [ "$w" = replica ]; then
        start_replica "$bin"
        # `time master_offset replica_offset`, every 0.1 s.
        ( end=$((SECONDS + SECS)); while [ $SECONDS -lt $end ]; do
            echo "$(date +%s.%N) $(offset "$PORT" master_repl_offset) $(offset "$RPORT" slave_repl_offset)"
            sleep 0.1; done >"$out.lag" ) &
        sampler=$!
    elif [ "$w" = null ]; then
        start_null_replica
    fi
    a=$(server_ticks)
    ops=$(taskset -c "${BENCH_CPUS:-1}" "$BENCH" -p "$PORT" -t 1 -c 50 --pipeline 16 --ratio 1:0 -d 32 \
        --key-maximum 100000 --test-time "$SECS" --hide-histogram 2>&1 | awk '/^Totals/{print $2}')
    b=$(server_ticks)
    if [ -n "$sampler" ]; then
        wait "$sampler" || true
        # The largest gap in bytes, and in time: how long before each
        # sample the master's offset first reached the replica's.
        read -r lag lag_s < <(python3 - "$out.lag" <<'PY'
import sys
s = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 3]
gap = max((m - r for _, m, r in s), default=0)
worst = 0.0
for t, _, r in s:
    first = next((t0 for t0, m0, _ in s if m0 >= r), t)
    worst = max(worst, t - first)
print(int(gap), f"{worst:.2f}")
PY
)
    fi
    stop_all
    python3 -c "print('$w', '$tag', round($ops), round(($b-$a)/$tck*1e6/($ops*$SECS),3), '$lag', '$lag_s')" | tee -a "$out"
}

for _ in $(seq "$REPS"); do
    for w in $WORKLOADS; do
        run_one "$w" "$A" a
        run_one "$w" "$B" b
    done
done
echo "A: $A"
echo "B: $B"
python3 - "$out" <<'PY'
import sys, statistics as st, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    w, b, v, cpu, lag, lag_s = line.split()
    rows[(w, b)].append((float(v), float(cpu), lag, lag_s))
print("| workload | A ops/s | A CPU µs/op | B ops/s | B CPU µs/op | B/A | B/A CPU/op | A max lag (B) | B max lag (B) | A max lag (s) | B max lag (s) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for w in dict.fromkeys(k[0] for k in rows):
    a, b = rows[(w, "a")], rows[(w, "b")]
    av, bv = st.median(x[0] for x in a), st.median(x[0] for x in b)
    ac, bc = st.median(x[1] for x in a), st.median(x[1] for x in b)
    al = max((x[2] for x in a), key=lambda s: -1 if s == "-" else int(s))
    bl = max((x[2] for x in b), key=lambda s: -1 if s == "-" else int(s))
    als = max((x[3] for x in a), key=lambda s: -1 if s == "-" else float(s))
    bls = max((x[3] for x in b), key=lambda s: -1 if s == "-" else float(s))
    print(f"| {w} | {av:,.0f} | {ac:.3f} | {bv:,.0f} | {bc:.3f} | {bv/av:.3f} | {bc/ac:.3f} | {al} | {bl} | {als} | {bls} |")
PY
