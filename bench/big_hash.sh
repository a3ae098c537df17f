#!/usr/bin/env bash
# One hash of 2M fields (10-byte values) built by HSETs from one connection
# at pipeline 16: the slowest HSET (tern-bench max latency; a whole-table
# rehash shows as one slow pipeline), the memory per field (INFO used_memory delta), then
# HMGET of 100 random fields with prefetch-batch-max-size 0 vs 16, server
# CPU per HMGET.
#
#   bench/big_hash.sh                          # target/release/tern-server
#   SERVER=/tmp/other-tern-server bench/big_hash.sh
set -euo pipefail
cd "$(dirname "$0")/.."
port=$((20000 + RANDOM % 20000))
taskset -c 0 ${SERVER:-target/release/tern-server} --port $port --threads 1 --memcache-port 0 --save '' >/tmp/big-hash.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.1; done
B=target/release/tern-bench
used() { redis-cli -p $port info memory | tr -d '\r' | awk -F: '/^used_memory:/{print $2}'; }
before=$(used)
max=$(taskset -c 1 $B -p $port -c 1 -t 1 --pipeline 16 --key-minimum 1 --key-maximum 2000000 -n 2000000 --key-prefix f: \
    --command "HSET bighash __key__ vvvvvvvvvv" --command-key-pattern P --hide-histogram 2>&1 | awk '/^Totals/{print $(NF-1)}')
after=$(used)
n=$(redis-cli -p $port hlen bighash)
echo "fields=$n slowest_hset_ms=$max bytes_per_field=$(python3 -c "print(round(($after-$before)/$n,1))")"
cmd="HMGET bighash"; for _ in $(seq 100); do cmd="$cmd __key__"; done
tck=$(getconf CLK_TCK)
for _ in 1 2 3; do for v in 0 16; do
    redis-cli -p $port config set prefetch-batch-max-size $v >/dev/null
    a=$(awk '{print $14+$15}' /proc/$pid/stat)
    ops=$(taskset -c 1 $B -p $port --key-minimum 1 --key-maximum 2000000 --key-prefix f: -c 50 -t 1 --hide-histogram \
        --distinct-client-seed -n 400 --command "$cmd" 2>&1 | awk '/^Totals/{print $2}')
    b=$(awk '{print $14+$15}' /proc/$pid/stat)
    echo "hmget x100 prefetch=$v ops/s=$ops server_cpu_us_per_hmget=$(python3 -c "print(round(($b-$a)/$tck*1e6/20000,1))")"
done; done
