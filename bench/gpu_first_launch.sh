#!/usr/bin/env bash
# On a GPU machine, from a bundle (see tests/gpu/run_bundle.sh) that holds
# jitcached, jitcache and jitcache_first_launch: time from process start to
# the first launched kernel, five runs of each way; prints JSON lines.
set -euo pipefail
bundle=$(cd "${1:-.gpu}" && pwd)
export LD_LIBRARY_PATH="$bundle/lib:${CUDA_HOME:-/usr/local/cuda}/lib64:${LD_LIBRARY_PATH:-}"
dir=$(mktemp -d /tmp/jcfirst.XXXXXX)
"$bundle/bin/jitcached" --socket="$dir/s.sock" --store="$dir/store" >"$dir/log" 2>&1 &
daemon=$!
for _ in $(seq 100); do "$bundle/bin/jitcache" --socket "$dir/s.sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
# Fill the cache for the cubin and PTX runs.
"$bundle/bin/jitcache_first_launch" hit "$dir/s.sock" >/dev/null
"$bundle/bin/jitcache_first_launch" ptx-jit "$dir/s.sock" >/dev/null
for mode in nvrtc hit ptx-jit; do
  for run in 1 2 3 4 5; do
    start=$(date +%s%6N)
    line=$(CUDA_CACHE_DISABLE=1 "$bundle/bin/jitcache_first_launch" "$mode" "$dir/s.sock")
    launched=${line##*first_launch_unix_us\": }; launched=${launched%\}}
    echo "{\"mode\": \"$mode\", \"run\": $run, \"ms\": $(( (launched - start) / 1000 ))}"
  done
done
kill "$daemon"; wait "$daemon" 2>/dev/null || true
rm -rf "$dir"
