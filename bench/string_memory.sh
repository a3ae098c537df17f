#!/usr/bin/env bash
# Bytes per key of 5M string keys (16 B keys, 100 B values, no TTL): INFO
# used_memory before and after loading them with tern-bench.
#
#   bench/string_memory.sh tern
#   bench/string_memory.sh redis        # Debian's redis-server
set -euo pipefail
cd "$(dirname "$0")/.."
which=$1
port=$((20000 + RANDOM % 20000))
if [ "$which" = tern ]; then
    target/release/tern-server --port $port --threads 1 --memcache-port 0 --save '' >/tmp/string-memory-$which.log 2>&1 &
else
    redis-server --port $port --save '' --appendonly no >/tmp/string-memory-$which.log 2>&1 &
fi
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.1; done
used() { redis-cli -p $port info memory | tr -d '\r' | awk -F: '/^used_memory:/{print $2}'; }
before=$(used)
target/release/tern-bench -p $port -t 1 -c 10 --pipeline 64 --ratio 1:0 --key-pattern P:P -n allkeys \
    --key-minimum 1000000 --key-maximum 5999999 --key-prefix memtier:0 -d 100 --hide-histogram >/dev/null 2>&1
after=$(used)
n=$(redis-cli -p $port dbsize)
python3 -c "n=$n; d=$after-$before; print(f'$which: {n} keys, {d/n:.1f} bytes/key, {d/n-116:.1f} beyond the 116 bytes of key+value')"
