#!/usr/bin/env bash
# MGET x100 over 5M keys of 100 B, prefetch-batch-max-size 0 vs 16 (or
# SIZES), alternating on one server; prints ops/s and the server's CPU time
# per MGET (utime+stime from /proc). Clients use --distinct-client-seed: with
# one seed every client asks for the same keys in lockstep and they stay cached.
#
#   bench/prefetch_mget.sh base                                   # as built
#   bench/prefetch_mget.sh thp _RJEM_MALLOC_CONF=thp:always,metadata_thp:always
#   SIZES="0 8 16 32 64" REPS=2 bench/prefetch_mget.sh sizes
#
# Needs release builds of tern-server and tern-bench, and redis-cli. Server on
# CPU 0, load generator on CPU 1.
set -euo pipefail
cd "$(dirname "$0")/.."
label=$1; shift
port=$((20000 + RANDOM % 20000))
B=target/release/tern-bench
env "$@" taskset -c 0 ${SERVER:-target/release/tern-server} --port $port --threads 1 --memcache-port 0 --save '' >"/tmp/prefetch-$label.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.1; done
taskset -c 1 $B -p $port --key-minimum 1 --key-maximum 5000000 --data-size 100 --ratio 1:0 -n allkeys \
    --key-pattern P:P -t 1 -c 50 --pipeline 50 --hide-histogram >/dev/null 2>&1
cmd="MGET"; for _ in $(seq 100); do cmd="$cmd __key__"; done
tck=$(getconf CLK_TCK)
for _ in $(seq "${REPS:-3}"); do for v in ${SIZES:-0 16}; do
    redis-cli -p $port config set prefetch-batch-max-size "$v" >/dev/null
    a=$(awk '{print $14+$15}' /proc/$pid/stat)
    ops=$(taskset -c 1 $B -p $port --key-minimum 1 --key-maximum 5000000 -c 50 -t 1 --hide-histogram \
        --distinct-client-seed -n 1000 --command "$cmd" 2>&1 | awk '/^Totals/{print $2}')
    b=$(awk '{print $14+$15}' /proc/$pid/stat)
    echo "$label prefetch-batch-max-size=$v ops/s=$ops server_cpu_us_per_mget=$(python3 -c "print(round(($b-$a)/$tck*1e6/50000,1))")"
done; done
