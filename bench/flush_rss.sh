#!/usr/bin/env bash
# RSS after FLUSHALL: loads 400k keys of 600 B with redis-benchmark, flushes,
# and prints the server's RSS once a second. The server is started here on a
# loopback port and stopped by PID.
#
#   bench/flush_rss.sh target/release/tern-server --threads 2
#   bench/flush_rss.sh target/release/tern-server --threads 2 --jemalloc-bg-thread no
#   bench/flush_rss.sh ../shared/reference/bin/redis-server-unstable --save ''
set -euo pipefail
BIN=$1; shift
PORT=${PORT:-7395}
"$BIN" --port "$PORT" --bind 127.0.0.1 "$@" >/dev/null 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
for _ in $(seq 100); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
rss() { awk '/VmRSS/{print $2 " kB"}' "/proc/$PID/status"; }
echo "empty: $(rss)"
redis-benchmark -p "$PORT" -t set -n 400000 -r 100000000 -d 600 -P 32 -q >/dev/null 2>&1
echo "loaded: $(rss), $(redis-cli -p "$PORT" dbsize) keys"
redis-cli -p "$PORT" flushall >/dev/null
for t in 1 2 3 4 5 6 10 20; do
    sleep 1
    echo "sample $t: $(rss)"
done
