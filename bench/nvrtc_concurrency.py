#!/usr/bin/env python3
"""Whether compiles at once slow each other on this machine: one NVRTC
compile of a source alone, then two and three at once (one process each,
as the daemon's workers run them), a new -D each time, in rounds.

  python3 bench/nvrtc_concurrency.py SOURCE.cu [--rounds N] [--arch sm_90]

The real NVRTC of the toolkit ($CUDA_HOME, else /usr/local/cuda), by
ctypes. Prints the median and least compile time of each.
"""
import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import time

CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")


def compile_once(source, arch, seed):
    nvrtc = ctypes.CDLL(os.path.join(CUDA, "lib64", "libnvrtc.so.13"))
    prog = ctypes.c_void_p()
    text = open(source, "rb").read()
    if nvrtc.nvrtcCreateProgram(ctypes.byref(prog), text, b"k.cu", 0, None,
                                None) != 0:
        raise RuntimeError("nvrtcCreateProgram failed")
    options = [f"-arch={arch}".encode(),
               f"-I{CUDA}/include".encode(),
               f"-I{CUDA}/include/cccl".encode(),
               f"-DJC_SEED={seed}".encode()]
    argv = (ctypes.c_char_p * len(options))(*options)
    start = time.monotonic()
    result = nvrtc.nvrtcCompileProgram(prog, len(options), argv)
    took = time.monotonic() - start
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    if result != 0:
        raise RuntimeError(f"nvrtcCompileProgram: {result}")
    return took


def at_once(source, arch, n, seed):
    children = [subprocess.Popen(
        [sys.executable, __file__, source, "--arch", arch, "--child",
         str(seed + i)], stdout=subprocess.PIPE, text=True) for i in range(n)]
    return [float(c.communicate()[0]) for c in children]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        print(compile_once(args.source, args.arch, args.child))
        return
    times = {1: [], 2: [], 3: []}
    for r in range(args.rounds):
        for n in times:  # interleaved: a slow moment falls on each
            times[n] += at_once(args.source, args.arch, n, 1000 * n + 10 * r)
    for n, values in times.items():
        print(f"{n} at once: median {statistics.median(values) * 1e3:.0f} ms, "
              f"least {min(values) * 1e3:.0f} ms ({len(values)} compiles)")


if __name__ == "__main__":
    main()
