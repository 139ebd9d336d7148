#!/usr/bin/env bash
# On the GPU machine: numba-cuda's libNVVM compiles through jitcache's
# libnvvm.so.4. Each kernel (numba_nvvm.py: plain, lineinfo, link) once
# with the real libraries, then twice in fresh processes with jitcache's
# libnvvm.so.4, libnvrtc.so.13 and libnvJitLink.so.13 preloaded, against a
# fresh daemon that runs the toolkit's libNVVM; the daemon's counters after
# each run (the second process: hits alone, no compile).
#   tests/gpu/python/run_nvvm.sh BUNDLE SHIM_DIR
set -uo pipefail
bundle=$(cd "$1" && pwd); shim=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/daemon.sh"
DAEMON_FLAGS="--libnvvm=/usr/local/cuda/nvvm/lib64/libnvvm.so.4" start_daemon "$bundle"
rc=0
for mode in plain lineinfo link; do
  echo "== numba $mode with the real libraries"
  (cd "$here" && PYTHONPATH="$compat${PYTHONPATH:+:$PYTHONPATH}" timeout 300 python3 numba_nvvm.py $mode) 2>&1 | tail -3 || rc=1
  for run in 1 2; do
    echo "== numba $mode through jitcache, run $run"
    out=$(cd "$here" && PYTHONPATH="$compat${PYTHONPATH:+:$PYTHONPATH}" \
       LD_PRELOAD="$shim/libnvvm.so.4 $shim/libnvrtc.so.13 $shim/libnvJitLink.so.13" \
       LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}" \
       JITCACHE_SOCKET="$dir/s.sock" JITCACHE_NVVM_VERBOSE=1 \
       JITCACHE_NVRTC_VERBOSE=1 JITCACHE_NVJITLINK_VERBOSE=1 \
       timeout 300 python3 numba_nvvm.py $mode 2>&1)
    echo "$out" | tail -6
    echo "$out" | grep -q ": correct" || rc=1
    echo "daemon: $(stats requests hits misses compiles nvvm_requests link_requests)"
  done
done
stop_daemon
exit $rc
