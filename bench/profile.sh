#!/usr/bin/env bash
# Where a request's server CPU goes: perf profiles of one server binary under
# the workloads of bench/ab.sh (same preload, server on CPU 0 with one worker,
# tern-bench on CPU 1, 50 connections), each written as a flame graph
# (bench/profiles/<tag>-<workload>.svg, `inferno-flamegraph`, from
# `cargo install inferno`) and summed by category (bench/profile_breakdown.py).
#
#   bench/profile.sh target/release/tern-server
#   WORKLOADS="get-p1 get-p16" TAG=redis bench/profile.sh ../shared/reference/bin/redis-server-unstable
#
# Needs linux-perf (apt install linux-perf) and root or perf_event_paranoid <= 1.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$1
BENCH=${BENCH:-target/release/tern-bench}
SECS=${SECS:-5}; KEYS=${KEYS:-1000000}; FREQ=${FREQ:-2999}
TAG=${TAG:-$(basename "$BIN")}
WORKLOADS=${WORKLOADS:-"get-p1 get-p16 mget-100 set-p16"}
OUTDIR=${OUTDIR:-bench/profiles}
. bench/workloads.sh
server_threads "$BIN"
tmp=$(mktemp -d /tmp/profile.XXXXXX)
for w in $WORKLOADS; do
    port=$(free_port)
    taskset -c 0 "$BIN" --port "$port" --bind 127.0.0.1 "${THREADS[@]}" --save '' >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    taskset -c 1 "$BENCH" -p "$port" --key-minimum 1 --key-maximum "$KEYS" --ratio 1:0 -n allkeys \
        --key-pattern P:P -t 1 -c 50 --pipeline 50 --hide-histogram >/dev/null 2>&1
    workload_args "$w"
    taskset -c 1 "$BENCH" -p "$port" --key-minimum 1 --key-maximum "$KEYS" -c 50 -t 1 --hide-histogram \
        --distinct-client-seed --test-time $((SECS + 2)) "${WL[@]}" >"$tmp/$w.bench" 2>&1 &
    bpid=$!
    sleep 1
    perf record -F "$FREQ" -g -p "$pid" -o "$tmp/$w.data" -- sleep "$SECS" >/dev/null 2>&1
    wait $bpid || true
    kill "$pid"; wait "$pid" 2>/dev/null || true
    perf script -i "$tmp/$w.data" 2>/dev/null | inferno-collapse-perf >"$tmp/$w.folded"
    inferno-flamegraph --title "$TAG $w (server CPU, perf -F $FREQ, $SECS s)" <"$tmp/$w.folded" >"$OUTDIR/$TAG-$w.svg"
    echo "## $TAG $w: $(awk '/^Totals/{printf "%.0f ops/s", $2}' "$tmp/$w.bench")"
    python3 bench/profile_breakdown.py "$tmp/$w.data"
done
rm -rf "$tmp"
