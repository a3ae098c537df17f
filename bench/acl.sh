#!/usr/bin/env bash
# What an ACL user costs per command: the same binary with the `default`
# user allowed everything (A) and restricted as the issue's user is,
# `~prefix:* +@read +@write` (B: tern-bench's keys are `memtier-N`, so the
# pattern is `~memtier-*`; `+ping` for the scripts' readiness check).
# Server CPU per operation from bench/ab.sh (alternating runs, one worker on
# CPU 0, tern-bench on CPU 1) and instructions per operation from
# bench/instructions.sh (callgrind: repeatable on a busy machine).
#
#   bench/acl.sh [target/release/tern-server]
#   REPS=5 WORKLOADS="get-p16 mget-10" bench/acl.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/release/tern-server}
export WORKLOADS=${WORKLOADS:-"get-p16 set-p16 mget-10"}
export ARGS_B="--user default on nopass ~memtier-* +@read +@write +ping"
echo "== server CPU per op (bench/ab.sh) =="
bash bench/ab.sh "$BIN" "$BIN"
echo "== instructions per op (bench/instructions.sh) =="
bash bench/instructions.sh "$BIN" "$BIN"
