#!/usr/bin/env bash
# The kernel's cost per loopback request with epoll against io_uring
# (bench/uring_probe: a server that answers every request with a 32-byte
# bulk string), beside tern-server and redis-server-unstable answering GETs
# of 32-byte values (100K keys preloaded, one Tern worker), each
# on CPU 0 with tern-bench on CPU 1, 50 connections, alternating. Prints
# `mode pipeline ops/s cpu_us_per_op user_us system_us` per run.
#
#   REPS=3 SECS=5 PIPELINES="1 16" bash bench/uring_probe.sh
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}; SECS=${SECS:-5}; PIPELINES=${PIPELINES:-"1 16"}
BENCH=${BENCH:-target/release/tern-bench}
TERN=${TERN:-target/release/tern-server}
REDIS=${REDIS:-../shared/reference/bin/redis-server-unstable}
KEYS=${KEYS:-100000}
(cd bench/uring_probe && cargo build --release -q)
PROBE=bench/uring_probe/target/release/uring-probe
tck=$(getconf CLK_TCK)
. bench/workloads.sh

run() { # mode pipeline
    local mode=$1 p=$2 port pid
    port=$(free_port)
    if [ "$mode" = tern ] || [ "$mode" = redis ]; then
        if [ "$mode" = tern ]; then
            taskset -c 0 "$TERN" --port "$port" --bind 127.0.0.1 --threads 1 --save '' >/dev/null 2>&1 &
        else
            taskset -c 0 "$REDIS" --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 &
        fi
        pid=$!
        for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
        taskset -c 1 "$BENCH" -p "$port" --key-minimum 1 --key-maximum "$KEYS" --ratio 1:0 -n allkeys \
            --key-pattern P:P -t 1 -c 50 --pipeline 50 --hide-histogram >/dev/null 2>&1
    else
        taskset -c 0 "$PROBE" "$mode" "$port" &
        pid=$!
        for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
    fi
    local a b ops
    read -r au as < <(awk '{print $14, $15}' /proc/$pid/stat)
    ops=$(taskset -c 1 "$BENCH" -p "$port" --key-minimum 1 --key-maximum "$KEYS" -c 50 -t 1 --hide-histogram \
        --distinct-client-seed --test-time "$SECS" --ratio 0:1 --pipeline "$p" 2>&1 | awk '/^Totals/{print $2}')
    read -r bu bs < <(awk '{print $14, $15}' /proc/$pid/stat)
    kill "$pid"; wait "$pid" 2>/dev/null || true
    python3 -c "
ops=$ops*$SECS; t=$tck
print('$mode', $p, round($ops), round(($bu+$bs-$au-$as)/t*1e6/ops,3), round(($bu-$au)/t*1e6/ops,3), round(($bs-$as)/t*1e6/ops,3))"
}

for _ in $(seq "$REPS"); do
    for p in $PIPELINES; do
        for mode in epoll uring tern redis; do
            run "$mode" "$p"
        done
    done
done
