#!/usr/bin/env bash
# Streams against a reference server, alternating, one worker each, server
# on CPU 0 and tern-bench on CPU 1 (bench/workloads.sh's helpers):
#
#   xadd-p16     XADD s:N * f1 <10 B> f2 <10 B> f3 <10 B> to 100 streams,
#                pipeline 16, 50 connections
#   xrange-100   XRANGE s:N - + COUNT 100 over 100 streams of 200 such
#                entries, pipeline 1, 50 connections
#   group        one consumer group, 10 consumers each looping on
#                XREADGROUP COUNT 10 and XACK of the round before, while 2
#                producers XADD at pipeline 16, over a backlog of 2M entries
#                (crates/tern-bench/examples/stream_group.rs): entries
#                consumed/s, and the server's CPU per entry consumed
#   memory       bytes per entry of 1M entries of 3 fields × 10 B in 100
#                streams: the process's resident memory (VmRSS) after the
#                load minus before it, as the machine sees it (Tern's INFO
#                used_memory is its own accounting, Redis's its allocator
#                count: not the same measure)
#
#   cargo build --release -p tern-server -p tern-bench --example stream_group
#   bench/streams.sh target/release/tern-server /usr/bin/redis-server
#   REPS=5 SECS=8 WORKLOADS="xadd-p16" bench/streams.sh A B
#
# Prints `workload binary ops/s cpu_us_per_op` lines (memory: `memory
# binary bytes_per_entry -`), then a table of medians with B/A ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1; B=$2
BENCH=${BENCH:-target/release/tern-bench}
REPS=${REPS:-3}; SECS=${SECS:-8}
SERVER_LIMIT=${SERVER_LIMIT:-$((SECS + 600))}
WORKLOADS=${WORKLOADS:-"xadd-p16 xrange-100 group memory"}
GROUP=${GROUP:-target/release/examples/stream_group}
tck=$(getconf CLK_TCK)
out=${OUT:-/tmp/streams-$$.txt}
. bench/workloads.sh
: >"$out"
PID=; TPID=
trap stop_server EXIT

XADD="XADD __key__ * f1 __data__ f2 __data__ f3 __data__"
# 100 streams, keys s:1 .. s:100.
KEYARGS=(--key-prefix s: --key-minimum 1 --key-maximum 100 -d 10)

bench() { # tern-bench arguments...
    taskset -c "${BENCH_CPUS:-1}" "$BENCH" -p "$PORT" -t 1 --hide-histogram --distinct-client-seed "${KEYARGS[@]}" "$@" 2>&1
}

resident() { awk '/^VmRSS:/{print $2 * 1024}' "/proc/$PID/status"; }

run_one() { # workload binary tag
    local w=$1 bin=$2 tag=$3 a b ops
    start_server "$bin"
    case $w in
        xadd-p16)
            a=$(server_ticks)
            ops=$(bench -c 50 --pipeline 16 --test-time "$SECS" --command "$XADD" | awk '/^Totals/{print $2}')
            b=$(server_ticks) ;;
        xrange-100)
            # 200 entries in each stream: 20,000 XADDs, keys in turn.
            bench -c 1 --pipeline 100 -n 20000 --key-pattern P:P --command "$XADD" >/dev/null
            a=$(server_ticks)
            ops=$(bench -c 50 --pipeline 1 --test-time "$SECS" --command "XRANGE __key__ - + COUNT 100" | awk '/^Totals/{print $2}')
            b=$(server_ticks) ;;
        group)
            local line
            line=$(taskset -c "${BENCH_CPUS:-1}" "$GROUP" "$PORT" "$SECS" 10 2 10 2000000)
            stop_server
            python3 -c "l='$line'.split(); print('$w', '$tag', l[1], l[5])" | tee -a "$out"
            return ;;
        memory)
            local before after
            before=$(resident)
            bench -c 10 --pipeline 100 -n 100000 --key-pattern P:P --command "$XADD" >/dev/null
            after=$(resident)
            local n
            n=$(for k in $(seq 1 100); do redis-cli -p "$PORT" xlen "s:$k"; done | awk '{s+=$1} END {print s}')
            stop_server
            python3 -c "print('$w', '$tag', round(($after-$before)/$n, 1), '-')" | tee -a "$out"
            return ;;
        *) echo "unknown workload $w" >&2; return 1 ;;
    esac
    stop_server
    python3 -c "print('$w', '$tag', round($ops), round(($b-$a)/$tck*1e6/($ops*$SECS),3))" | tee -a "$out"
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
    w, b, v, cpu = line.split()
    rows[(w, b)].append((float(v), None if cpu == "-" else float(cpu)))
print("| workload | A | A CPU µs/op | B | B CPU µs/op | B/A | B/A CPU/op |")
print("|---|---:|---:|---:|---:|---:|---:|")
for w in dict.fromkeys(k[0] for k in rows):
    a, b = rows[(w, "a")], rows[(w, "b")]
    av, bv = st.median(x[0] for x in a), st.median(x[0] for x in b)
    if a[0][1] is None:
        print(f"| {w} (bytes/entry) | {av:,.1f} | | {bv:,.1f} | | {bv/av:.3f} | |")
        continue
    ac, bc = st.median(x[1] for x in a), st.median(x[1] for x in b)
    print(f"| {w} | {av:,.0f} | {ac:.3f} | {bv:,.0f} | {bc:.3f} | {bv/av:.3f} | {bc/ac:.3f} |")
PY
