# The request-path workloads shared by bench/ab.sh, bench/instructions.sh,
# bench/profile.sh and bench/scripting.sh, and the server start/preload/stop
# steps of bench/ab.sh and bench/scripting.sh (sourced, not run).

# A port nothing listens on (the kernel's pick, released for the server).
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Sets WL to tern-bench's arguments for workload $1: get-p1 get-p16 set-p1 set-p16
# lpush-p16 mget-N mset-N.
workload_args() {
    case $1 in
        get-p1) WL=(--ratio 0:1 --pipeline 1) ;;
        get-p16) WL=(--ratio 0:1 --pipeline 16) ;;
        set-p16) WL=(--ratio 1:0 --pipeline 16) ;;
        set-p1) WL=(--ratio 1:0 --pipeline 1) ;;
        lpush-p16) WL=(--command "LPUSH __key__ __data__" --pipeline 16 --key-prefix list:) ;;
        setbit-p16) WL=(--command "SETBIT __key__ 1000 1" --pipeline 16 --key-prefix bits:) ;;
        getbit-p16) WL=(--command "GETBIT __key__ 1000" --pipeline 16 --key-prefix bits:) ;;
        sadd-p16) WL=(--command "SADD __key__ __data__" --pipeline 16 --key-prefix set:) ;;
        mset-*)
            local c="MSET"
            for _ in $(seq "${1#mset-}"); do c="$c __key__ __data__"; done
            WL=(--command "$c" --pipeline 1) ;;
        mget-*)
            local c="MGET"
            for _ in $(seq "${1#mget-}"); do c="$c __key__"; done
            WL=(--command "$c" --pipeline 1) ;;
        *) echo "unknown workload $1" >&2; return 1 ;;
    esac
}

# Sets THREADS to the worker-count arguments for server binary $1:
# TERN_THREADS workers (default one) for Tern; nothing for Redis and Valkey,
# which have no --threads.
server_threads() {
    THREADS=(--threads "${TERN_THREADS:-1}")
    if [[ $(basename "$1") == *-server* && $(basename "$1") != tern-server ]]; then THREADS=(); fi
}

# Starts server binary $1 (further arguments are the server's) on a free
# loopback port, pinned to SERVER_CPUS (default CPU 0), persistence off,
# under `timeout SERVER_LIMIT` (seconds, default 600) so that it cannot
# outlive a run that dies; waits until it answers PING. Sets PORT and PID
# (the server's own process, whose /proc/PID/stat server_ticks reads) and
# TPID (its `timeout`).
start_server() {
    local bin=$1
    shift
    PORT=$(free_port)
    server_threads "$bin"
    # A directory of its own: a dump.rdb left where the script runs would
    # be loaded at start and change what is measured.
    SERVER_DIR=$(mktemp -d)
    timeout "${SERVER_LIMIT:-600}" taskset -c "${SERVER_CPUS:-0}" "$bin" --port "$PORT" --bind 127.0.0.1 \
        "${THREADS[@]}" --save '' --dir "$SERVER_DIR" "$@" >/dev/null 2>&1 &
    TPID=$!
    PID=
    for _ in $(seq 100); do
        PID=$(awk '{print $1}' /proc/$TPID/task/$TPID/children 2>/dev/null)
        [ -n "$PID" ] && redis-cli -p "$PORT" ping >/dev/null 2>&1 && return 0
        kill -0 $TPID 2>/dev/null || break
        sleep 0.1
    done
    echo "server did not start: $bin $*" >&2
    stop_server
    return 1
}

# Stops the server start_server started (by its PID) and waits for it.
stop_server() {
    if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; fi
    if [ -n "$TPID" ]; then wait "$TPID" 2>/dev/null || true; fi
    if [ -n "${SERVER_DIR:-}" ]; then rm -rf "$SERVER_DIR"; fi
    PID=; TPID=; SERVER_DIR=
}

# The server's CPU time so far, in clock ticks (utime + stime of stat(5)).
server_ticks() { awk '{print $14+$15}' /proc/$PID/stat; }

# Fills keys 1..KEYS of DATA bytes (tern-bench's default prefix, memtier-N)
# on the server at PORT, from BENCH on BENCH_CPUS (default CPU 1).
preload_strings() {
    taskset -c "${BENCH_CPUS:-1}" "$BENCH" -p "$PORT" --key-minimum 1 --key-maximum "$KEYS" -d "$DATA" --ratio 1:0 \
        -n allkeys --key-pattern P:P -t 1 -c 50 --pipeline 50 --hide-histogram >/dev/null 2>&1
}
