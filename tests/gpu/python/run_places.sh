#!/usr/bin/env bash
# On the GPU machine: the real client programs as a team runs them, each
# three times in fresh processes, each run from a new working directory with
# the packages' own caches empty, through nothing but LD_PRELOAD of
# jitcache's libnvrtc.so.13 and libnvJitLink.so.13, against one fresh
# daemon. After each run: the requests the daemon saw in it and how they
# were served (a request of a later run that is no hit must be one whose
# answer the real NVRTC makes depend on the place, or a link whose answer
# the real nvJitLink makes show its inputs' names: place_kept).
#   tests/gpu/python/run_places.sh BUNDLE SHIM_DIR
set -uo pipefail
bundle=$(cd "$1" && pwd); shim=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/daemon.sh"
DAEMON_FLAGS="--log_level=debug ${DAEMON_FLAGS:-}" start_daemon "$bundle"
counter() { jitcache_cli stats | awk -v f="$1" '$1 == f { print $2 }'; }
rc=0
printf '%-16s %4s %9s %5s %6s %7s %6s %11s\n' program run requests hits misses joined proofs place_kept
for script in cupy_kernel torch_kernel cuda_core_link numba_lto; do
  for run in 1 2 3; do
    before=()
    for f in requests hits misses joins place_proofs place_kept; do before+=("$(counter $f)"); done
    work=$(mktemp -d /tmp/jcplace.XXXXXX)   # a new working directory each run
    (cd "$work" && PYTHONPATH="$here${compat:+:$compat}${PYTHONPATH:+:$PYTHONPATH}" \
       CUPY_CACHE_DIR="$(mktemp -d)" USE_PYTORCH_KERNEL_CACHE=0 \
       NUMBA_CACHE_DIR="$(mktemp -d)" \
       LD_PRELOAD="$shim/libnvrtc.so.13 $shim/libnvJitLink.so.13" \
       LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}" \
       JITCACHE_SOCKET="$dir/s.sock" JITCACHE_NVRTC_VERBOSE=1 \
       timeout 300 python3 "$here/$script.py") > "$work.log" 2>&1 || { rc=1; tail -20 "$work.log"; }
    after=()
    for f in requests hits misses joins place_proofs place_kept; do after+=("$(counter $f)"); done
    printf '%-16s %4s %9s %5s %6s %7s %6s %11s   %s\n' "$script" "$run" \
      $((after[0]-before[0])) $((after[1]-before[1])) $((after[2]-before[2])) \
      $((after[3]-before[3])) $((after[4]-before[4])) $((after[5]-before[5])) \
      "$(grep -v '^jitcache-' "$work.log" | tail -1)"
    grep -E '^jitcache-nvrtc: .* (MISS|JOINED) ' "$work.log" | sed 's/^/    /' | head -20
  done
done
echo "== why the daemon kept answers for their place (its proof: the real NVRTC elsewhere)"
grep -a "depends on its place" "$dir/daemon.log" | sed 's/^.*depends on its place; kept under [0-9a-f]* //' | cut -c1-400
echo "== links whose answers show their inputs' names (its proof: the real nvJitLink under other names)"
grep -a "shows its inputs' names" "$dir/daemon.log" | sed "s/^.*shows its inputs' names; kept under [0-9a-f]* //" | cut -c1-400
stop_daemon
exit $rc
