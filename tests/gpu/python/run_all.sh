#!/usr/bin/env bash
# On the GPU machine: each package's script twice in fresh processes with
# jitcache's libnvrtc.so.13 preloaded, against a fresh daemon, printing the
# daemon's counters after each run. The packages' own kernel caches are off
# (CUPY_CACHE_DIR fresh, USE_PYTORCH_KERNEL_CACHE=0), so that every run
# compiles through NVRTC. Then how each package reached NVRTC: the
# libnvrtc its process mapped, and what the package's own NVRTC module
# needs.
#   tests/gpu/python/run_all.sh BUNDLE NVRTC_DIR
set -uo pipefail
bundle=$(cd "$1" && pwd); shim=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/daemon.sh"
start_daemon "$bundle"
rc=0
for script in cupy_kernel cuda_core_kernel numba_kernel torch_kernel; do
  for run in 1 2; do
    echo "== $script run $run"
    # The packages' own disk caches off: every run must ask NVRTC.
    (cd "$here" && PYTHONPATH="$compat${PYTHONPATH:+:$PYTHONPATH}" CUPY_CACHE_DIR="$(mktemp -d)" USE_PYTORCH_KERNEL_CACHE=0 LD_PRELOAD="$shim/libnvrtc.so.13" \
       LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}" \
       JITCACHE_SOCKET="$dir/s.sock" JITCACHE_NVRTC_VERBOSE=1 timeout 300 python3 "$script.py") 2>&1 | tail -8 || rc=1
    echo "daemon: $(stats requests hits misses)"
  done
done
echo "== how each package loads NVRTC"
python3 - <<'PY' 2>&1
import importlib, subprocess
for mod in ("cupy_backends.cuda.libs.nvrtc", "cuda.bindings._internal.nvrtc",
            "cuda.bindings.cynvrtc"):
    try:
        m = importlib.import_module(mod)
    except Exception as e:
        print(mod, "not importable:", type(e).__name__, e); continue
    f = getattr(m, "__file__", "")
    needed = subprocess.run(["sh", "-c", f"readelf -d '{f}' | grep NEEDED | grep -i nvrtc"],
                            capture_output=True, text=True).stdout.strip()
    print(mod, f, "NEEDED:", needed or "(no libnvrtc: opened at run time)")
try:
    import torch, glob, os
    lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    for so in sorted(glob.glob(lib + "/libtorch_cuda*.so")) + sorted(glob.glob(lib + "/libcaffe2_nvrtc*.so")):
        needed = subprocess.run(["sh", "-c", f"readelf -d '{so}' | grep NEEDED | grep -i nvrtc"],
                                capture_output=True, text=True).stdout.strip()
        print(so, "NEEDED:", needed or "(none)")
except Exception as e:
    print("torch:", e)
PY
stop_daemon
exit $rc
