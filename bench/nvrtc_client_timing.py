"""One process of bench/nvrtc_library_bench.py: compiles the CUB kernel
COUNT times through DRIVER and prints one JSON line of per-compile seconds.

  python3 nvrtc_client_timing.py DRIVER COUNT SEED INCLUDE_DIR [LIBNVRTC]

DRIVER is "ctypes" (NVRTC's C API through ctypes, on LIBNVRTC), "cupy"
(RawModule(...).get_function) or "cuda_core" (Program.compile). Whichever
libnvrtc the process has (LD_PRELOAD decides for the packages) answers.
SEED goes into a -D option: a new seed is a new cache key (with JC_VARY=1
each compile takes the next seed, so each is a miss). CuPy compiles once
per process (see cupy_compiler).
"""
import ctypes
import json
import os
import sys
import tempfile
import time

SOURCE = r"""
#include <cub/block/block_radix_sort.cuh>
template <int kItems>
__global__ void block_sort(int* keys) {
  using Sort = cub::BlockRadixSort<int, 128, kItems>;
  __shared__ typename Sort::TempStorage temp;
  int thread_keys[kItems];
  for (int i = 0; i < kItems; ++i) {
    thread_keys[i] = keys[threadIdx.x * kItems + i];
  }
  Sort(temp).Sort(thread_keys);
  for (int i = 0; i < kItems; ++i) {
    keys[threadIdx.x * kItems + i] = thread_keys[i];
  }
}
"""
NAME = "block_sort<4>"


def ctypes_compiler(lib_path, include_dir, arch):
    nvrtc = ctypes.CDLL(lib_path)

    def compile_once(seed):
        prog = ctypes.c_void_p()
        assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), SOURCE.encode(),
                                        b"sort.cu", 0, None, None) == 0
        assert nvrtc.nvrtcAddNameExpression(prog, NAME.encode()) == 0
        opts = [f"-arch={arch}", f"-I{include_dir}", "-std=c++17",
                f"-DJC_SEED={seed}"]
        argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        rc = nvrtc.nvrtcCompileProgram(prog, len(opts), argv)
        if rc != 0:
            size = ctypes.c_size_t()
            nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
            log = ctypes.create_string_buffer(size.value)
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise RuntimeError(log.value.decode(errors="replace"))
        size = ctypes.c_size_t()
        assert nvrtc.nvrtcGetCUBINSize(prog, ctypes.byref(size)) == 0
        cubin = ctypes.create_string_buffer(size.value)
        assert nvrtc.nvrtcGetCUBIN(prog, cubin) == 0
        assert nvrtc.nvrtcDestroyProgram(ctypes.byref(prog)) == 0
        assert size.value > 1000
    return compile_once


def cupy_compiler(include_dir):
    # CuPy keeps what it compiles on disk (CUPY_CACHE_DIR, read once) and
    # in the process: only a process's first compile of a kernel, in an
    # empty cache directory, reaches NVRTC. So the bench runs one compile
    # per process. JC_CUPY_CACHE names a directory to keep instead (CuPy's
    # own cache, for comparison).
    os.environ["CUPY_CACHE_DIR"] = (os.environ.get("JC_CUPY_CACHE")
                                    or tempfile.mkdtemp(prefix="jccupy."))
    import cupy as cp

    def compile_once(seed):
        module = cp.RawModule(code=SOURCE, options=("-std=c++17",
                                                    f"-DJC_SEED={seed}"),
                              name_expressions=[NAME])
        module.get_function(NAME)
    return compile_once


def cuda_core_compiler(include_dir, arch):
    try:
        from cuda.core import Device, Program, ProgramOptions
    except ImportError:
        from cuda.core.experimental import Device, Program, ProgramOptions
    Device().set_current()

    def compile_once(seed):
        options = ProgramOptions(arch=arch, std="c++17",
                                 include_path=[include_dir],
                                 define_macro=[("JC_SEED", str(seed))])
        module = Program(SOURCE, code_type="c++", options=options).compile(
            "cubin", name_expressions=(NAME,))
        module.get_kernel(NAME)
    return compile_once


def main():
    driver, count, seed, include_dir = sys.argv[1], int(sys.argv[2]), \
        int(sys.argv[3]), sys.argv[4]
    arch = os.environ.get("JC_ARCH", "sm_90")
    if driver == "ctypes":
        compile_once = ctypes_compiler(sys.argv[5], include_dir, arch)
    elif driver == "cupy":
        compile_once = cupy_compiler(include_dir)
    else:
        compile_once = cuda_core_compiler(include_dir, arch)
    vary = os.environ.get("JC_VARY") == "1"
    times = []
    for i in range(count):
        t0 = time.perf_counter()
        compile_once(seed + i if vary else seed)
        times.append(time.perf_counter() - t0)
    print(json.dumps(times))


if __name__ == "__main__":
    main()
