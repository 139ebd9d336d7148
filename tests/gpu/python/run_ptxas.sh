#!/usr/bin/env bash
# On the GPU machine: Triton and torch.compile through jitcache-ptxas.
#   tests/gpu/python/run_ptxas.sh BUNDLE
# BUNDLE: bin/{jitcached,jitcache-worker,jitcache,jitcache-full,
# jitcache-ptxas,ptxas-timer,redis-server} and lib/. Every run is cold for Triton and Inductor (fresh cache
# directories, as each rank of a job has its own). Scenarios:
#   real-1, real-8   the real ptxas (Triton's own), timed per call, in one
#                    process and in 8 processes at once
#   jc-1 cold/warm   through jitcache: a fresh daemon, then a second run
#   jc-8             8 processes at once against a fresh daemon and store
#   node-2           a second daemon sharing jc-8's redis-server
# then (BENCH=1, the default) bench/ptxas_bench.py over jc-1-cold's PTX.
# The environment passes through to the Python programs (for instance
# TRITON_DISABLE_LINE_INFO=1); DAEMON_FLAGS adds flags to every jitcached;
# HERD_ONLY=1 runs real-1, real-8 and jc-8 alone.
set -uo pipefail
bundle=$(cd "$1" && pwd); here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/jcptx.XXXXXX)
lib="$bundle/lib"  # for the bundle's binaries alone: Python keeps its own
paths=${PATHS:-same}
if [ "$paths" = same ] && ! unshare --mount true 2>/dev/null; then
  echo "no private mounts here (unshare --mount): PATHS=distinct"; paths=distinct
fi
mkdir -p /tmp/jcrank
echo "cache paths: $paths"
real=$(python3 -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas"))')
[ -x "$real" ] || real=/usr/local/cuda/bin/ptxas
echo "real ptxas: $real ($("$real" --version | tail -1))"
mkdir -p "$work/timer"; cp "$bundle/bin/ptxas-timer" "$work/timer/ptxas"
# jitcache-ptxas, called "ptxas" as Triton calls it: it needs only the C
# and C++ runtimes, the system's, so no wrapper sets LD_LIBRARY_PATH.
mkdir -p "$work/ours"; ours="$work/ours/ptxas"
ln -s "$bundle/bin/jitcache-ptxas" "$ours"

busy() { awk '/^cpu /{print ($2+$3+$4+$7+$8)/100}' /proc/stat; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", a-b}'; }
scenario() {  # NAME N PTXAS ENV...
  local name=$1 n=$2 ptxas=$3; shift 3
  mkdir -p "$work/$name"
  local c0 t0 t1 c1 ok=0 pids=()
  c0=$(busy); t0=$(date +%s.%N)
  for i in $(seq "$n"); do
    if [ "$paths" = same ]; then
      # Its own tmpfs at the one path; its PTX copied out at the end.
      unshare --mount --propagation private sh -c '
        mount -t tmpfs rank /tmp/jcrank || exit 99
        "$@"; rc=$?
        cp -r /tmp/jcrank/triton "'"$work/$name/triton$i"'" 2>/dev/null
        exit $rc' sh env TRITON_CACHE_DIR=/tmp/jcrank/triton \
        TORCHINDUCTOR_CACHE_DIR=/tmp/jcrank/inductor \
        TRITON_PTXAS_PATH="$ptxas" "$@" \
        timeout 500 python3 "$here/triton_compile.py" > "$work/$name/out$i" 2>&1 &
    else
      env TRITON_CACHE_DIR="$work/$name/triton$i" \
        TORCHINDUCTOR_CACHE_DIR="$work/$name/inductor$i" \
        TRITON_PTXAS_PATH="$ptxas" "$@" \
        timeout 500 python3 "$here/triton_compile.py" > "$work/$name/out$i" 2>&1 &
    fi
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" && ok=$((ok + 1)); done
  t1=$(date +%s.%N); c1=$(busy)
  echo "== $name: $n processes at once, wall $(sub "$t1" "$t0") s, CPU of the whole machine $(sub "$c1" "$c0") s, $ok/$n exited 0, $(grep -l '"correct"' "$work/$name"/out* | wc -l)/$n correct"
  echo "   first process: $(tail -1 "$work/$name/out1")"
  [ "$ok" = "$n" ] || tail -15 "$work/$name/out1"
}
timer_sum() {  # LOG
  awk '{n++; w+=$1; c+=$2+$3} END{printf "   ptxas runs %d, wall %.1f s, CPU %.1f s\n", n, w/1000, c/1000}' "$1"
}
answers() {  # LOG
  echo "   jitcache-ptxas answers: $(awk '{print $1}' "$1" | sort | uniq -c | tr '\n' ' ')"
  awk '$1 != "real" {n[$1]++; t[$1] += $2; v[$1, n[$1]] = $2}
       END {for (k in n) {m = 0; for (i = 1; i <= n[k]; i++) if (v[k, i] > m) m = v[k, i];
            printf "   %s: %d calls, %.1f s in all, %.1f ms each on average, at most %.0f ms\n",
                   k, n[k], t[k] / 1000, t[k] / n[k], m}}' "$1"
  grep '^real' "$1" | sort | uniq -c | sort -rn | head -3
}
key=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
printf '%s\n' "$key" > "$work/team.keys"; chmod 600 "$work/team.keys"
start_redis() {  # NAME
  LD_LIBRARY_PATH=$lib "$bundle/bin/redis-server" --port 0 --unixsocket "$work/$1.redis" --save '' \
    --appendonly no > "$work/$1.redis.log" 2>&1 &
  for _ in $(seq 50); do [ -S "$work/$1.redis" ] && break; sleep 0.1; done
}
start_node() {  # NAME [FLAGS...]
  local name=$1; shift
  # shellcheck disable=SC2086  # DAEMON_FLAGS: more flags, split on spaces
  LD_LIBRARY_PATH=$lib "$bundle/bin/jitcached" --socket="$work/$name.sock" --store="$work/$name.store" \
    --ptxas="$real" ${DAEMON_FLAGS:-} "$@" > "$work/$name.log" 2>&1 &
  for _ in $(seq 300); do
    LD_LIBRARY_PATH=$lib "$bundle/bin/jitcache" --socket "$work/$name.sock" ping >/dev/null 2>&1 && return
    sleep 0.1
  done
  echo "daemon $name did not start"; tail "$work/$name.log"
}
node_stats() {  # NAME
  LD_LIBRARY_PATH=$lib "$bundle/bin/jitcache" --socket "$work/$1.sock" stats |
    grep -E '^(requests|hits|misses|joins|compiles|ptxas_requests|compile_seconds_spent|remote_hits|remote_misses) ' | tr '\n' ' '; echo
}
through() {  # NODE LOG: the environment of a run through jitcache
  echo JITCACHE_SOCKET="$work/$1.sock" JITCACHE_REAL_PTXAS="$real" JITCACHE_PTXAS_LOG="$work/$2"
}

if [ "${HERD_ONLY:-0}" = 1 ]; then
  # The herd goal's figures alone: one process and 8 with the real ptxas,
  # then 8 through jitcache (DAEMON_FLAGS).
  scenario real-1 1 "$work/timer/ptxas" PTXAS_TIMER_REAL="$real" PTXAS_TIMER_LOG="$work/real1.log"
  timer_sum "$work/real1.log"
  scenario real-8 8 "$work/timer/ptxas" PTXAS_TIMER_REAL="$real" PTXAS_TIMER_LOG="$work/real8.log"
  timer_sum "$work/real8.log"
  start_node h
  scenario jc-8 8 "$ours" $(through h jc8.log)
  answers "$work/jc8.log"; echo "   daemon: $(node_stats h)"
  pkill -f "$work/"
  exit 0
fi
scenario real-1 1 "$work/timer/ptxas" PTXAS_TIMER_REAL="$real" PTXAS_TIMER_LOG="$work/real1.log"
timer_sum "$work/real1.log"
scenario real-8 8 "$work/timer/ptxas" PTXAS_TIMER_REAL="$real" PTXAS_TIMER_LOG="$work/real8.log"
timer_sum "$work/real8.log"

start_redis one
start_node a --remote="unix://$work/one.redis" --remote_key_file="$work/team.keys"
scenario jc-1-cold 1 "$ours" $(through a jc1.log)
answers "$work/jc1.log"; echo "   daemon: $(node_stats a)"
# Triton's PTX of that run, for the per-kernel benchmark below.
mkdir -p "$work/ptx"
for f in $(find "$work/jc-1-cold/triton1" -name '*.ptx'); do
  cp "$f" "$work/ptx/$(basename "$(dirname "$f")" | cut -c1-6)-$(basename "$f")"
done
scenario jc-1-warm 1 "$ours" $(through a jc2.log)
answers "$work/jc2.log"; echo "   daemon: $(node_stats a)"
pkill -f "$work/a.sock"; sleep 1

start_redis two
start_node h --remote="unix://$work/two.redis" --remote_key_file="$work/team.keys"
scenario jc-8 8 "$ours" $(through h jc8.log)
answers "$work/jc8.log"; echo "   daemon: $(node_stats h)"
# What the 8 processes gave ptxas: Triton keeps each PTX in its cache.
ptx_files=$(find "$work"/jc-8/triton* -name '*.ptx' | wc -l)
ptx_distinct=$(find "$work"/jc-8/triton* -name '*.ptx' -exec sha256sum {} + | awk '{print $1}' | sort -u | wc -l)
echo "   PTX files in the 8 Triton caches: $ptx_files, distinct: $ptx_distinct; sources named in them:"
find "$work"/jc-8/triton* -name '*.ptx' -exec grep -h '^\s*\.file' {} + | sed 's/[0-9a-f]\{20,\}/HASH/g; s/inductor[0-9]/inductorN/; s/triton[0-9]/tritonN/' | awk '{print $3}' | sort | uniq -c | sort -rn | head -5
sleep 2  # the tier is written in the background
start_node n2 --remote="unix://$work/two.redis" --remote_key_file="$work/team.keys"
scenario node-2 1 "$ours" $(through n2 jcn2.log)
answers "$work/jcn2.log"; echo "   daemon: $(node_stats n2)"
pkill -f "$work/" ; sleep 1
tail -3 "$work/h.log"

[ "${BENCH:-1}" = 1 ] || exit 0
echo "== per kernel: Triton's PTX of jc-1-cold, the real ptxas and jitcache-ptxas"
(cd "$here/../../.." && LD_LIBRARY_PATH=$lib timeout 240 python3 bench/ptxas_bench.py \
   --bundle "$bundle" --real "$real" --ptx "$work/ptx" --limit 12 --runs 3 \
   --json "${OUT:-/tmp}/ptxas_bench_h100.json")
