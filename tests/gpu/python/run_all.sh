#!/usr/bin/env bash
# On the GPU machine: each package's script twice in fresh processes with
# jitcache's libnvrtc.so.13 preloaded, against a fresh daemon, printing the
# daemon's counters after each run. The packages' own kernel caches are off
# (CUPY_CACHE_DIR fresh, USE_PYTORCH_KERNEL_CACHE=0), so that every run
# compiles through NVRTC.
#   tests/gpu/python/run_all.sh BUNDLE NVRTC_DIR
set -uo pipefail
bundle=$(cd "$1" && pwd); shim=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/jcpy.XXXXXX)
LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64" "$bundle/bin/jitcached" \
  --socket="$dir/s.sock" --store="$dir/store" > "$dir/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do
  LD_LIBRARY_PATH="$bundle/lib" "$bundle/bin/jitcache" --socket "$dir/s.sock" ping >/dev/null 2>&1 && break
  sleep 0.1
done
stats() { LD_LIBRARY_PATH="$bundle/lib" "$bundle/bin/jitcache" --socket "$dir/s.sock" stats | grep -E '^(requests|hits|misses) ' | tr '\n' ' '; echo; }
rc=0
for script in cupy_kernel cuda_core_kernel numba_kernel torch_kernel; do
  for run in 1 2; do
    echo "== $script run $run"
    # The packages' own disk caches off: every run must ask NVRTC.
    (cd "$here" && CUPY_CACHE_DIR="$(mktemp -d)" USE_PYTORCH_KERNEL_CACHE=0 LD_PRELOAD="$shim/libnvrtc.so.13" \
       LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}" \
       JITCACHE_SOCKET="$dir/s.sock" JITCACHE_NVRTC_VERBOSE=1 timeout 300 python3 "$script.py") 2>&1 | tail -8 || rc=1
    echo "daemon: $(stats)"
  done
done
kill "$daemon"; wait "$daemon" 2>/dev/null
tail -5 "$dir/daemon.log"
exit $rc
