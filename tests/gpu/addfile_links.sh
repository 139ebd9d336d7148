#!/usr/bin/env bash
# On the GPU machine: nvJitLinkAddFile as C++ programs use it (NVIDIA's
# samples, cuBLASDx-style LTO libraries): nvcc -dlto host objects and PTX
# files added by path, linked by a small C program (jitcache_nvjitlink_case)
# once with the real nvJitLink and twice through jitcache's
# libnvJitLink.so.13 against a fresh daemon; the outputs must be the same
# bytes and the second run all hits.
#   tests/gpu/addfile_links.sh BUNDLE SHIM_DIR
set -uo pipefail
bundle=$(cd "$1" && pwd); shim=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/python/daemon.sh"
start_daemon "$bundle"
work=$(mktemp -d /tmp/jcaddfile.XXXXXX)
cd "$work"
printf 'extern __device__ float f(float);\nextern "C" __global__ void k(float* x) { x[threadIdx.x] = f(x[threadIdx.x]); }\n' > caller.cu
printf '__device__ float f(float v) { return v * v + 1.0f; }\n' > callee.cu
nvcc=/usr/local/cuda/bin/nvcc
$nvcc -arch=sm_90 -dc -dlto caller.cu -o caller.o && $nvcc -arch=sm_90 -dc -dlto callee.cu -o callee.o \
  && $nvcc -arch=compute_90 -rdc=true -ptx callee.cu -o callee.ptx || { echo "nvcc failed"; exit 1; }
case_bin="$bundle/bin/jitcache_nvjitlink_case"
rc=0
run() {  # OUT then steps; ours when OURS=1
  local out=$1; shift; mkdir -p "$out"
  if [[ ${OURS:-0} == 1 ]]; then
    LD_LIBRARY_PATH="$shim:$bundle/lib:/usr/local/cuda/lib64" JITCACHE_SOCKET="$dir/s.sock" \
      JITCACHE_NVJITLINK_VERBOSE=1 "$case_bin" "$out" "$@" 2>&1 | grep -v "^mapped" | tail -3
  else
    LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64" "$case_bin" "$out" "$@" > /dev/null 2>&1
  fi
}
for spec in "lto-objects:-o -arch=sm_90 -o -lto -f 5 caller.o -f 5 callee.o -c" \
            "object-and-ptx:-o -arch=sm_90 -o -lto -f 5 caller.o -f 2 callee.ptx -c"; do
  name=${spec%%:*}; steps=${spec#*:}
  run "$name-real" $steps
  for n in 1 2; do
    echo "== $name through jitcache, run $n"
    OURS=1 run "$name-ours$n" $steps
    for f in report linked.cubin linked.ptx; do
      # (An output the link did not give is absent from both.)
      [[ ! -e "$name-real/$f" && ! -e "$name-ours$n/$f" ]] && continue
      cmp -s "$name-real/$f" "$name-ours$n/$f" || { echo "$name run $n: $f differs from the real nvJitLink's"; rc=1; }
    done
    echo "daemon: $(stats requests hits misses link_requests)"
  done
  echo "$name: cubin $(stat -c %s "$name-real/linked.cubin") bytes, report and outputs the real nvJitLink's in both runs: $([[ $rc == 0 ]] && echo yes || echo NO)"
done
stop_daemon
exit $rc
