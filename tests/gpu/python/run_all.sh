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
dir=$(mktemp -d /tmp/jcpy.XXXXXX)
LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64" "$bundle/bin/jitcached" \
  --socket="$dir/s.sock" --store="$dir/store" > "$dir/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do
  LD_LIBRARY_PATH="$bundle/lib" "$bundle/bin/jitcache" --socket "$dir/s.sock" ping >/dev/null 2>&1 && break
  sleep 0.1
done
export JITCACHE_SCAN_CACHE="$dir/scans"
# numba-cuda imports np.row_stack, which the NumPy on that machine no
# longer has; an alias in the environment (not in numba-cuda) lets it load.
compat=""
if ! python3 -c "import numpy; numpy.row_stack" >/dev/null 2>&1; then
  mkdir -p "$dir/compat"
  printf 'import numpy\nif not hasattr(numpy, "row_stack"):\n    numpy.row_stack = numpy.vstack\n' > "$dir/compat/sitecustomize.py"
  compat="$dir/compat"
  echo "numba-cuda does not import as installed; numpy.row_stack aliased for it (sitecustomize)"
fi
stats() { LD_LIBRARY_PATH="$bundle/lib" "$bundle/bin/jitcache" --socket "$dir/s.sock" stats | grep -E '^(requests|hits|misses) ' | tr '\n' ' '; echo; }
rc=0
for script in cupy_kernel cuda_core_kernel numba_kernel torch_kernel; do
  for run in 1 2; do
    echo "== $script run $run"
    # The packages' own disk caches off: every run must ask NVRTC.
    (cd "$here" && PYTHONPATH="$compat${PYTHONPATH:+:$PYTHONPATH}" CUPY_CACHE_DIR="$(mktemp -d)" USE_PYTORCH_KERNEL_CACHE=0 LD_PRELOAD="$shim/libnvrtc.so.13" \
       LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}" \
       JITCACHE_SOCKET="$dir/s.sock" JITCACHE_NVRTC_VERBOSE=1 timeout 300 python3 "$script.py") 2>&1 | tail -8 || rc=1
    echo "daemon: $(stats)"
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
kill "$daemon"; wait "$daemon" 2>/dev/null
tail -5 "$dir/daemon.log"
exit $rc
