#!/usr/bin/env bash
# On the GPU machine: cuda.core's Linker and numba-cuda's LTO path, each
# once with the real libraries (no jitcache), then twice in fresh
# processes with jitcache's libnvrtc.so.13 and libnvJitLink.so.13 preloaded,
# against a fresh daemon, printing the daemon's counters after each run.
#   tests/gpu/python/run_links.sh BUNDLE SHIM_DIR
# SHIM_DIR holds libnvrtc.so.13 and libnvJitLink.so.13.
set -uo pipefail
bundle=$(cd "$1" && pwd); shim=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/jclink.XXXXXX)
LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64" "$bundle/bin/jitcached" \
  --socket="$dir/s.sock" --store="$dir/store" > "$dir/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do
  LD_LIBRARY_PATH="$bundle/lib" "$bundle/bin/jitcache" --socket "$dir/s.sock" ping >/dev/null 2>&1 && break
  sleep 0.1
done
export JITCACHE_SCAN_CACHE="$dir/scans"
compat=""
if ! python3 -c "import numpy; numpy.row_stack" >/dev/null 2>&1; then
  mkdir -p "$dir/compat"
  printf 'import numpy\nif not hasattr(numpy, "row_stack"):\n    numpy.row_stack = numpy.vstack\n' > "$dir/compat/sitecustomize.py"
  compat="$dir/compat"
fi
stats() { LD_LIBRARY_PATH="$bundle/lib" "$bundle/bin/jitcache" --socket "$dir/s.sock" stats | grep -E '^(requests|hits|misses|link_requests|compiles) ' | tr '\n' ' '; echo; }
rc=0
for script in cuda_core_link numba_lto; do
  echo "== $script with the real libraries"
  (cd "$here" && PYTHONPATH="$compat${PYTHONPATH:+:$PYTHONPATH}" timeout 300 python3 "$script.py") 2>&1 | tail -4 || rc=1
  for run in 1 2; do
    echo "== $script through jitcache, run $run"
    (cd "$here" && PYTHONPATH="$compat${PYTHONPATH:+:$PYTHONPATH}" \
       LD_PRELOAD="$shim/libnvrtc.so.13 $shim/libnvJitLink.so.13" \
       LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}" \
       JITCACHE_SOCKET="$dir/s.sock" JITCACHE_NVRTC_VERBOSE=1 \
       JITCACHE_NVJITLINK_VERBOSE=1 timeout 300 python3 "$script.py") 2>&1 | tail -6 || rc=1
    echo "daemon: $(stats)"
  done
done
kill "$daemon"; wait "$daemon" 2>/dev/null
tail -5 "$dir/daemon.log"
exit $rc
