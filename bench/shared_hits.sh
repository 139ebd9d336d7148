#!/usr/bin/env bash
# libjitcache's warm hit (jitcache_bench hit-latency: the small kernel, CUB,
# a 1.3 MiB cubin with 54 names, and the 1.3 MiB big table) from a daemon that hands large hits over as sealed
# files (the default, --shared_answer_size=256K) and from one that copies
# every hit through the socket (--shared_answer_size=0), side by side, in
# alternating rounds on one machine:
#   bench/shared_hits.sh BINDIR [ITERS] [ROUNDS]
# BINDIR holds jitcached and jitcache_bench. One JSON object per line on
# stdout: {"daemon": "shared"|"copied", "round": N, "hits": {...}}.
set -euo pipefail
bindir=$(cd "$1" && pwd)
iters=${2:-2000}
rounds=${3:-2}
dir=$(mktemp -d /tmp/jcshared.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

start_daemon() {  # NAME SIZE
  "$bindir/jitcached" --socket="$dir/$1.sock" --store=":memory:" \
    --shared_answer_size="$2" >"$dir/$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    [ -S "$dir/$1.sock.hit" ] && return 0
    sleep 0.1
  done
  echo "daemon $1 did not start" >&2
  cat "$dir/$1.log" >&2
  return 1
}

start_daemon shared 256K
start_daemon copied 0
for round in $(seq "$rounds"); do
  for name in shared copied; do
    hits=$("$bindir/jitcache_bench" hit-latency "$dir/$name.sock" "$iters" \
      small cub large big-table)
    echo "{\"daemon\": \"$name\", \"round\": $round, \"hits\": $hits}"
  done
done
