#!/usr/bin/env bash
# memcached `get` of 100 keys over 5M keys of 100 B, prefetch-batch-max-size 0
# vs 16, alternating on one server (like prefetch_mget.sh, through the
# memcached port): ops/s and server CPU per `get`.
#
#   bench/prefetch_mc_get.sh
#   SERVER=/tmp/other-tern-server REPS=2 bench/prefetch_mc_get.sh
set -euo pipefail
cd "$(dirname "$0")/.."
port=$((20000 + RANDOM % 20000)); mport=$((port+1))
taskset -c 0 ${SERVER:-target/release/tern-server} --port $port --threads 1 --memcache-port $mport --save '' >/tmp/mcget.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.1; done
B=target/release/tern-bench
taskset -c 1 $B -p $port --key-minimum 1 --key-maximum 5000000 --data-size 100 --ratio 1:0 -n allkeys --key-pattern P:P -t 1 -c 50 --pipeline 50 --hide-histogram >/dev/null 2>&1
cmd="MGET"; for _ in $(seq 100); do cmd="$cmd __key__"; done
tck=$(getconf CLK_TCK)
for _ in $(seq ${REPS:-3}); do for v in 0 16; do
  redis-cli -p $port config set prefetch-batch-max-size $v >/dev/null
  a=$(awk '{print $14+$15}' /proc/$pid/stat)
  ops=$(taskset -c 1 $B -p $mport --protocol memcache_text --key-minimum 1 --key-maximum 5000000 -c 50 -t 1 --hide-histogram --distinct-client-seed -n 1000 --command "$cmd" 2>&1 | awk '/^Totals/{print $2}')
  b=$(awk '{print $14+$15}' /proc/$pid/stat)
  echo "mc get x100 prefetch=$v ops/s=$ops server_cpu_us_per_get=$(python3 -c "print(round(($b-$a)/$tck*1e6/50000,1))")"
done; done
