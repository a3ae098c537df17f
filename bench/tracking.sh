#!/usr/bin/env bash
# CLIENT TRACKING's costs, the issue's two measures:
#  1. server CPU per GET at pipeline 16 with every connection tracking
#     (CLIENT TRACKING ON: each GET's key goes to the tracking table)
#     against the same binary without (bench/ab.sh: alternating runs, one
#     worker on CPU 0, tern-bench on CPU 1; the preloaded keys are read,
#     so the table fills as Redis's would);
#  2. tracking-table memory per key: a tracking client reads N keys; the
#     allocator's bytes before and after (INFO allocator_allocated, which
#     Redis and Tern both report from jemalloc), divided by N, Tern beside
#     the reference server.
#
#   bench/tracking.sh [target/release/tern-server] [reference redis-server]
#   REPS=5 SECS=10 NKEYS=200000 bench/tracking.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/release/tern-server}
REF=${2:-$(command -v redis-server)}
NKEYS=${NKEYS:-200000}
echo "== 1. GET p16, tracking off (A) and on (B), $BIN =="
WORKLOADS=${WORKLOADS:-get-p16} BENCH_ARGS_B="--connect-command 'CLIENT TRACKING ON'" bash bench/ab.sh "$BIN" "$BIN"

echo "== 2. tracking-table bytes per key ($NKEYS keys read by one tracking client) =="
. bench/workloads.sh
PID=; TPID=
trap stop_server EXIT
for bin in "$BIN" "$REF"; do
    start_server "$bin"
    python3 - "$PORT" "$NKEYS" "$bin" <<'PY'
import socket, sys
port, n, name = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s = socket.create_connection(("127.0.0.1", port))
f = s.makefile("rb")

def send(*cmds):
    out = b""
    for c in cmds:
        out += b"*%d\r\n" % len(c) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in c)
    s.sendall(out)

def read():
    line = f.readline()
    t = line[:1]
    if t in b"+-:_":
        return line
    if t in b"$=":
        k = int(line[1:])
        return None if k < 0 else f.read(k + 2)[:-2]
    if t in b"*%>~":
        k = int(line[1:]) * (2 if t == b"%" else 1)
        return [read() for _ in range(max(k, 0))]
    raise ValueError(line)

def allocated():
    send([b"INFO", b"memory"])
    text = read().decode()
    return int(next(l.split(":")[1] for l in text.split("\r\n") if l.startswith("allocator_allocated:")))

batch = 1000
for i in range(0, n, batch):
    send([b"MSET"] + [x for k in range(i, min(i + batch, n)) for x in (b"key:%d" % k, b"v")])
    read()
send([b"HELLO", b"3"]); read()
before = allocated()
send([b"CLIENT", b"TRACKING", b"ON"]); read()
for i in range(0, n, batch):
    send([b"MGET"] + [b"key:%d" % k for k in range(i, min(i + batch, n))])
    read()
after = allocated()
send([b"INFO", b"stats"])
keys = [l for l in read().decode().split("\r\n") if l.startswith("tracking_total_keys")]
print(f"{name}: {(after - before) / n:.1f} bytes per tracked key ({keys[0] if keys else '?'})")
PY
    stop_server
done
