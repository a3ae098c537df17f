#!/usr/bin/env bash
# Before/after on the request path: two tern-server binaries, alternating,
# one worker each, server on CPU 0 and tern-bench on CPU 1. For each workload
# and repeat, both binaries run in turn on a fresh server with the same
# preload; prints ops/s and the server's CPU µs per operation (utime+stime
# from /proc, divided by the operations tern-bench counted).
#
#   bench/ab.sh /tmp/base/tern-server target/release/tern-server
#   REPS=5 SECS=10 WORKLOADS="get-p1 mget-100" bench/ab.sh A B
#   ARGS_B="--io-short-read-drains no" bench/ab.sh target/release/tern-server target/release/tern-server
#
# ARGS_A / ARGS_B add server arguments to A's / B's runs, so that one binary
# can be compared with itself with an optimisation on and off (later
# arguments win: ARGS_B="--threads 2" gives B two workers). BENCH_ARGS_A /
# BENCH_ARGS_B add tern-bench arguments, shell-quoted
# (BENCH_ARGS_B="--connect-command 'CLIENT TRACKING ON'"). SERVER_CPUS /
# BENCH_CPUS move the server (default CPU 0) and tern-bench (default CPU 1).
#
# Either binary may be a Redis or Valkey server (started without --threads),
# to measure Tern against a reference in one run.
#
# Workloads: get-p1 get-p16 mget-10 mget-100 set-p16, and mset-N (KEYS keys, default 1M,
# of DATA bytes, default 32; uniform random keys, 50 connections). Output lines are `workload binary
# ops/s cpu_us_per_op`, easy to sort and take medians of (see the end).
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1; B=$2
BENCH=${BENCH:-target/release/tern-bench}
REPS=${REPS:-3}; SECS=${SECS:-8}; KEYS=${KEYS:-1000000}; DATA=${DATA:-32}
SERVER_CPUS=${SERVER_CPUS:-0}; BENCH_CPUS=${BENCH_CPUS:-1}
SERVER_LIMIT=${SERVER_LIMIT:-$((SECS + 600))}
WORKLOADS=${WORKLOADS:-"get-p1 get-p16 mget-10 mget-100 set-p16"}
read -r -a ARGS_A <<<"${ARGS_A:-}"
read -r -a ARGS_B <<<"${ARGS_B:-}"
eval "BENCH_A=(${BENCH_ARGS_A:-})"
eval "BENCH_B=(${BENCH_ARGS_B:-})"
tck=$(getconf CLK_TCK)
out=${OUT:-/tmp/ab-$$.txt}
. bench/workloads.sh
: >"$out"
PID=; TPID=
trap stop_server EXIT

run_one() { # workload binary tag [server arguments...]
    local w=$1 bin=$2 tag=$3
    shift 3
    local extra=("${BENCH_A[@]}")
    [ "$tag" = b ] && extra=("${BENCH_B[@]}")
    start_server "$bin" "$@"
    preload_strings
    local a b ops
    workload_args "$w"
    a=$(server_ticks)
    ops=$(taskset -c "$BENCH_CPUS" $BENCH -p $PORT --key-minimum 1 --key-maximum $KEYS -d $DATA -c 50 -t 1 --hide-histogram \
        --distinct-client-seed --test-time $SECS "${WL[@]}" "${extra[@]}" 2>&1 | awk '/^Totals/{print $2}')
    b=$(server_ticks)
    stop_server
    python3 -c "print('$w', '$tag', round($ops), round(($b-$a)/$tck*1e6/($ops*$SECS),3))" | tee -a "$out"
}

for _ in $(seq "$REPS"); do
    for w in $WORKLOADS; do
        run_one "$w" "$A" a "${ARGS_A[@]}"
        run_one "$w" "$B" b "${ARGS_B[@]}"
    done
done
echo "A: $A ${ARGS_A[*]}"
echo "B: $B ${ARGS_B[*]}"
python3 - "$out" <<'PY'
import sys, statistics as st, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    w, b, ops, cpu = line.split()
    rows[(w, b)].append((float(ops), float(cpu)))
A, B = "a", "b"
print("| workload | A ops/s | A CPU µs/op | B ops/s | B CPU µs/op | B/A ops | B/A CPU/op |")
print("|---|---:|---:|---:|---:|---:|---:|")
for w in dict.fromkeys(k[0] for k in rows):
    a, b = rows[(w, A)], rows[(w, B)]
    ao, ac = st.median(x[0] for x in a), st.median(x[1] for x in a)
    bo, bc = st.median(x[0] for x in b), st.median(x[1] for x in b)
    print(f"| {w} | {ao:,.0f} | {ac:.3f} | {bo:,.0f} | {bc:.3f} | {bo/ao:.3f} | {bc/ac:.3f} |")
PY
