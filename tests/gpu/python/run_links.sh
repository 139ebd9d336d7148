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
. "$here/daemon.sh"
start_daemon "$bundle"
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
    echo "daemon: $(stats requests hits misses compiles link_requests)"
  done
done
stop_daemon
exit $rc
