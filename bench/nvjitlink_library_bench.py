#!/usr/bin/env python3
"""The real nvJitLink against jitcache's libnvJitLink.so.13, side by side in
one run against one daemon. A child process links two LTO-IR units through
nvJitLink's C API (ctypes, as cuda.core and numba-cuda reach it), timing
nvJitLinkCreate to the linked cubin in its own hands: the first link of a
new process, then the same link again in that process, and what loading
libnvJitLink.so.13 took (the real one, or ours: the real one is then
loaded at the first call that needs it, inside the link's time; a fair
comparison of a process's cost counts both). Three sides:
  real  the toolkit's nvJitLink, as a program has it without jitcache;
  miss  ours, on a key the daemon has never seen (a -maxrregcount of its
        own each run): what the front end adds to a miss is miss - real;
  hit   ours, on a key the daemon has: a new process answered from the
        daemon's record.

  python3 bench/nvjitlink_library_bench.py [--build build | --bundle DIR]
      [--runs 10] [--write-results NAME]
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import Daemon  # noqa: E402
from nvrtc_library_bench import BundleDaemon  # noqa: E402
from results_section import report  # noqa: E402

CHILD = r"""
import ctypes, json, sys, time
t = time.perf_counter()
lib = ctypes.CDLL("libnvJitLink.so.13")
load = (time.perf_counter() - t) * 1e3
units = [open(p, "rb").read() for p in sys.argv[2:4]]
options = sys.argv[1].split()
def link():
    t0 = time.perf_counter()
    h = ctypes.c_void_p()
    argv = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
    assert lib.nvJitLinkCreate(ctypes.byref(h), len(options), argv) == 0
    for i, u in enumerate(units):
        assert lib.nvJitLinkAddData(h, 3, u, len(u), f"unit{i}".encode()) == 0
    assert lib.nvJitLinkComplete(h) == 0
    size = ctypes.c_size_t()
    assert lib.nvJitLinkGetLinkedCubinSize(h, ctypes.byref(size)) == 0
    out = ctypes.create_string_buffer(size.value)
    assert lib.nvJitLinkGetLinkedCubin(h, out) == 0
    lib.nvJitLinkDestroy(ctypes.byref(h))
    return (time.perf_counter() - t0) * 1e3, out.raw
first, cubin = link()
again, cubin2 = link()
print(json.dumps({"load_ms": load, "first_ms": first, "again_ms": again,
                  "same": cubin == cubin2, "size": len(cubin)}))
"""

CALLER = ("extern __device__ float f(float);\n"
          "extern \"C\" __global__ void apply(float* x) "
          "{ x[threadIdx.x] = f(x[threadIdx.x]); }\n")
CALLEE = "__device__ float f(float v) { return 3.0f * v + 1.0f; }\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--bundle", help="a gpu-bundle folder instead of --build")
    ap.add_argument("--shim-dir", help="where libnvJitLink.so.13 (ours) is")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--write-results", metavar="NAME")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="jclinkbench.")
    if args.bundle:
        build = os.path.abspath(args.bundle)
        daemon = BundleDaemon(build, work, "d")
        shim = os.path.abspath(args.shim_dir or os.path.join(build, "bin"))
    else:
        build = os.path.abspath(args.build)
        daemon = Daemon(build, work, "d")
        shim = os.path.abspath(args.shim_dir or
                               os.path.join(build, "client/nvjitlink"))
    daemon.start()
    try:
        units = []
        for name, src in (("caller", CALLER), ("callee", CALLEE)):
            cu = os.path.join(work, name + ".cu")
            with open(cu, "w") as f:
                f.write(src)
            out = os.path.join(work, name + ".ltoir")
            r = daemon.cli("compile", cu, "--arch", "sm_90", "--target",
                           "ltoir", "-rdc=true", "-o", out)
            r.check_returncode()
            units.append(out)
        child = os.path.join(work, "child.py")
        with open(child, "w") as f:
            f.write(CHILD)
        cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/lib64"

        def run(side, options):
            env = dict(os.environ, JITCACHE_SOCKET=daemon.socket)
            if side == "real":
                env["LD_LIBRARY_PATH"] = cuda
            else:
                env["LD_PRELOAD"] = os.path.join(shim, "libnvJitLink.so.13")
                env["LD_LIBRARY_PATH"] = ":".join(
                    p for p in (os.path.join(build, "lib"), cuda)
                    if os.path.isdir(p))
            r = subprocess.run([sys.executable, child, options, *units],
                               capture_output=True, text=True, env=env)
            if r.returncode != 0:
                raise RuntimeError(f"{side}: {r.stdout}{r.stderr}")
            return json.loads(r.stdout.splitlines()[-1])

        hit_options = "-arch=sm_90 -lto"
        run("miss", hit_options)  # the daemon has it from now on
        rows = {"real": [], "miss": [], "hit": [], "real_new": []}
        for i in range(args.runs):
            rows["real"].append(run("real", hit_options))
            rows["hit"].append(run("hit", hit_options))
            fresh = f"-arch=sm_90 -lto -maxrregcount={64 + i}"
            rows["real_new"].append(run("real", fresh))
            rows["miss"].append(run("miss", fresh))
    finally:
        daemon.proc.terminate()
        daemon.proc.wait()

    def p50(side, field):
        return statistics.median(r[field] for r in rows[side])

    for side in rows.values():
        for r in side:
            r["loaded_first_ms"] = r["load_ms"] + r["first_ms"]
    summary = {
        "real_load_ms": p50("real", "load_ms"),
        "ours_load_ms": p50("hit", "load_ms"),
        "real_first_ms": p50("real", "first_ms"),
        "real_again_ms": p50("real", "again_ms"),
        "hit_first_ms": p50("hit", "first_ms"),
        "hit_again_ms": p50("hit", "again_ms"),
        "real_new_first_ms": p50("real_new", "first_ms"),
        "miss_first_ms": p50("miss", "first_ms"),
        "real_new_loaded_first_ms": p50("real_new", "loaded_first_ms"),
        "miss_loaded_first_ms": p50("miss", "loaded_first_ms"),
    }
    summary["miss_added_in_calls_ms"] = (summary["miss_first_ms"] -
                                         summary["real_new_first_ms"])
    summary["miss_added_ms"] = (summary["miss_loaded_first_ms"] -
                                summary["real_new_loaded_first_ms"])
    lines = [
        f"Command: `python3 bench/nvjitlink_library_bench.py "
        f"{' '.join(sys.argv[1:])}`, {args.runs} runs of each side, "
        f"alternating; machine: {platform.node()}, {os.cpu_count()} cores; "
        f"{datetime.date.today()}.",
        "",
        "Two LTO-IR units linked to a cubin through nvJitLink's C API "
        "(ctypes), nvJitLinkCreate to the cubin in hand, medians:",
        "",
        "| | first link in a new process | the same link again | "
        "load and first link |",
        "|---|---|---|---|",
        f"| real nvJitLink | {summary['real_first_ms']:.2f} ms | "
        f"{summary['real_again_ms']:.2f} ms | |",
        f"| libnvJitLink.so.13, hit | {summary['hit_first_ms']:.2f} ms | "
        f"{summary['hit_again_ms']:.2f} ms | |",
        f"| real nvJitLink, new options | "
        f"{summary['real_new_first_ms']:.2f} ms | | "
        f"{summary['real_new_loaded_first_ms']:.2f} ms |",
        f"| libnvJitLink.so.13, miss (new options) | "
        f"{summary['miss_first_ms']:.2f} ms | | "
        f"{summary['miss_loaded_first_ms']:.2f} ms |",
        "",
        f"Loading libnvJitLink.so.13: the real one {summary['real_load_ms']:.2f}"
        f" ms, ours {summary['ours_load_ms']:.2f} ms.",
        "",
        f"What the library adds to a miss, load and first link: "
        f"{summary['miss_added_ms']:.2f} ms (goal: at most 5 ms); in the "
        f"calls alone, where ours loads the real one: "
        f"{summary['miss_added_in_calls_ms']:.2f} ms.",
    ]
    report(lines, args, {"summary": summary, "rows": rows},
           script="bench/nvjitlink_library_bench.py")


if __name__ == "__main__":
    main()
