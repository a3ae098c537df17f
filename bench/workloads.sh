# The request-path workloads shared by bench/ab.sh, bench/instructions.sh and
# bench/profile.sh (sourced, not run).

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

# Sets THREADS to the worker-count arguments for server binary $1: one
# worker for Tern; nothing for Redis and Valkey, which have no --threads.
server_threads() {
    THREADS=(--threads 1)
    if [[ $(basename "$1") == *-server* && $(basename "$1") != tern-server ]]; then THREADS=(); fi
}
