#!/usr/bin/env bash
# Instructions per operation, server side, under callgrind: deterministic
# where timings on this machine move by ±5–10% between runs, so it settles
# small before/after differences that bench/ab.sh cannot (it counts no cache
# misses and no kernel time: ab.sh stays the measure of CPU per operation).
#
#   bench/instructions.sh /tmp/base/tern-server target/release/tern-server
#   WORKLOADS="get-p16 mget-100" bench/instructions.sh A B
#   ARGS_B="--commandlog-reply-larger-than 9223372036854775807" \
#       bench/instructions.sh target/release/tern-server target/release/tern-server
#
# ARGS_A / ARGS_B add server arguments to A's / B's runs (so one binary can
# be compared with itself under two configurations), DATA sets the value
# size (default 32 B; with large values lower KEYS).
#
# Each binary runs under `valgrind --tool=callgrind` (apt install valgrind),
# one worker, with instrumentation off during start-up and a preload of
# 100k keys of 32 B; then on for a fixed number of requests (10 connections,
# 2000 each, 200 for MGET x100), dumped and summed. Prints `workload binary
# instructions_per_op` and a table of B/A ratios. The per-function
# difference of the last pair: callgrind_annotate on the files it names.
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1; B=$2
BENCH=${BENCH:-target/release/tern-bench}
KEYS=${KEYS:-100000}
DATA=${DATA:-32}
read -r -a ARGS_A <<<"${ARGS_A:-}"
read -r -a ARGS_B <<<"${ARGS_B:-}"
WORKLOADS=${WORKLOADS:-"get-p1 get-p16 mget-10 mget-100 set-p16"}
dir=$(mktemp -d /tmp/instructions.XXXXXX)
out=$dir/results.txt
. bench/workloads.sh
: >"$out"

one() { # workload binary tag [server arguments...]
    local w=$1 bin=$2 tag=$3 port n=2000 extra=()
    shift 3
    port=$(free_port)
    workload_args "$w"
    extra=("${WL[@]}")
    [[ $w == mget-100 ]] && n=200
    local cg=$dir/$tag-$w.out
    # Redis and Valkey (a reference binary as A or B) have no --threads: one
    # main thread is their default.
    server_threads "$bin"
    valgrind --tool=callgrind --callgrind-out-file="$cg" --instr-atstart=no \
        "$bin" --port $port --bind 127.0.0.1 "${THREADS[@]}" --save '' "$@" >"$dir/$tag-$w.log" 2>&1 &
    local pid=$!
    for _ in $(seq 300); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.2; done
    $BENCH -p $port --key-minimum 1 --key-maximum "$KEYS" --ratio 1:0 -n allkeys --key-pattern P:P -d "$DATA" \
        -t 1 -c 10 --pipeline 50 --hide-histogram >/dev/null 2>&1
    callgrind_control -i on $pid >/dev/null 2>&1
    $BENCH -p $port --key-minimum 1 --key-maximum "$KEYS" -c 10 -t 1 --hide-histogram \
        --distinct-client-seed -n $n -d "$DATA" "${extra[@]}" >/dev/null 2>&1
    callgrind_control -i off $pid >/dev/null 2>&1
    callgrind_control -d $pid >/dev/null 2>&1
    kill $pid; wait $pid 2>/dev/null || true
    local ir
    ir=$(callgrind_annotate "$cg.1" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",","",$1); print $1}')
    echo "$w $tag $((ir / (10 * n)))" | tee -a "$out"
}

for w in $WORKLOADS; do
    one "$w" "$A" a "${ARGS_A[@]}"
    one "$w" "$B" b "${ARGS_B[@]}"
done
echo "A: $A ${ARGS_A[*]}"
echo "B: $B ${ARGS_B[*]}"
python3 - "$out" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    w, b, ir = line.split()
    rows[(w, b)] = int(ir)
A, B = "a", "b"
print("| workload | A instructions/op | B instructions/op | B/A |")
print("|---|---:|---:|---:|")
for w in dict.fromkeys(k[0] for k in rows):
    a, b = rows[(w, A)], rows[(w, B)]
    print(f"| {w} | {a:,} | {b:,} | {b/a:.3f} |")
PY
echo "callgrind files: $dir"
