#!/usr/bin/env bash
# Runs the gpu tests, the example and a few timings on a GPU machine from a
# bundle of the built binaries:
#   ../shared/tools/gpu-bundle .gpu build/tests/gpu_test \
#     build/tests/jitcache_gpu_sort_check build/server/jitcached \
#     build/client/jitcache build/client/jitcache-full \
#     build/client/examples/jitcache_example
#   tests/gpu/run_bundle.sh .gpu        (on the GPU machine)
# Logs go to $OUT (default /tmp).
set -uo pipefail
bundle=$(cd "${1:-.gpu}" && pwd)
out=${OUT:-/tmp}
export LD_LIBRARY_PATH="$bundle/lib:${CUDA_HOME:-/usr/local/cuda}/lib64:${LD_LIBRARY_PATH:-}"
export JITCACHE_DAEMON_BINARY="$bundle/bin/jitcached"
export JITCACHE_CLI_BINARY="$bundle/bin/jitcache"
export JITCACHE_GPU_SORT_CHECK="$bundle/bin/jitcache_gpu_sort_check"

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== gpu tests"
"$bundle/bin/gpu_test" 2>&1 | tee "$out/gpu_test.log"
tests_rc=${PIPESTATUS[0]}

echo "== example and process-start-to-launch timings"
dir=$(mktemp -d /tmp/jcgpu.XXXXXX)
"$bundle/bin/jitcached" --socket="$dir/s.sock" --store="$dir/store" >"$dir/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do "$bundle/bin/jitcache" --socket "$dir/s.sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
for run in miss hit; do
  JITCACHE_SOCKET="$dir/s.sock" "$bundle/bin/jitcache_example" || tests_rc=1
done
for run in 1 2 3 4 5; do
  start=$(date +%s%6N)
  line=$("$bundle/bin/jitcache_gpu_sort_check" "$dir/s.sock")
  launched=${line##*first_launch_unix_us=}; launched=${launched%% *}
  echo "sort_check run $run: ${line%% *}, process start to first launched kernel $(( (launched - start) / 1000 )) ms"
done 2>&1 | tee "$out/timings.log"
kill "$daemon"; wait "$daemon" 2>/dev/null
rm -rf "$dir"
exit "$tests_rc"
