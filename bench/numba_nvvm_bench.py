#!/usr/bin/env python3
"""numba-cuda's first launch of a plain @cuda.jit kernel, new process each
time: the real libNVVM compiling it against jitcache's libnvvm.so.4
answering from the daemon (a hit), side by side in one run, alternating.

Both sides load the same numba-cuda, NVRTC and nvJitLink (the real ones);
only libNVVM differs (LD_PRELOAD of jitcache's libnvvm.so.4 on one side).
The first launch (numba_nvvm.py: compile, link, load, run) and the whole
process are timed.

  python3 bench/numba_nvvm_bench.py --bundle DIR [--runs N]
      [--libnvvm PATH] [--write-results]

--bundle: a gpu-bundle folder (bin/ with jitcached, jitcache-worker,
jitcache; shim/ with libnvvm.so.4; lib/), on the GPU machine.
"""
import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from nvrtc_library_bench import BundleDaemon  # noqa: E402
from results_section import write_section  # noqa: E402

SCRIPT = os.path.join(HERE, "..", "tests", "gpu", "python", "numba_nvvm.py")


def numba_env(compat):
    """numba-cuda imports np.row_stack, which newer NumPy lacks: aliased
    in the environment (not in numba-cuda) when needed."""
    env = dict(os.environ)
    probe = subprocess.run([sys.executable, "-c",
                            "import numpy; numpy.row_stack"],
                           capture_output=True)
    if probe.returncode != 0:
        os.makedirs(compat, exist_ok=True)
        with open(os.path.join(compat, "sitecustomize.py"), "w") as f:
            f.write("import numpy\nif not hasattr(numpy, 'row_stack'):\n"
                    "    numpy.row_stack = numpy.vstack\n")
        env["PYTHONPATH"] = compat + (":" + env["PYTHONPATH"]
                                      if env.get("PYTHONPATH") else "")
    return env


def one(env, mode):
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, SCRIPT, mode], env=env,
                       capture_output=True, text=True,
                       cwd=os.path.dirname(SCRIPT))
    wall = time.monotonic() - t0
    if r.returncode != 0 or ": correct" not in r.stdout:
        raise RuntimeError(f"numba_nvvm.py failed:\n{r.stdout}{r.stderr[-3000:]}")
    first = float(re.search(r"first launch ([0-9.]+) ms", r.stdout).group(1))
    return first, wall * 1e3, r.stdout.strip().splitlines()[-1]


def gpu_name():
    r = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                       capture_output=True, text=True)
    return r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else "no GPU"


DUMP_IR = r"""
import math, sys
from numba import cuda
@cuda.jit("void(float32[:])")
def kernel(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = math.sin(x[i]) * 2.0
sys.stdout.write(list(kernel.inspect_llvm().values())[0])
"""


def nvvm_only(bundle, env, real, work, runs):
    """libNVVM alone, numba-cuda's calls for that kernel (its IR, a verify,
    libdevice added lazily, the compile, the reads) in a new process each
    (jitcache_nvvm_case): the real libNVVM against a hit. None when the
    kernel's IR cannot be had."""
    ir = os.path.join(work, "kernel.ll")
    r = subprocess.run([sys.executable, "-c", DUMP_IR], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0 or "define" not in r.stdout:
        print("no IR from numba-cuda:", r.stderr[-500:], file=sys.stderr)
        return None
    with open(ir, "w") as f:
        f.write(r.stdout)
    libdevice = os.path.join(os.path.dirname(os.path.dirname(real)),
                             "libdevice", "libdevice.10.bc")
    opts = ["-opt=3", "-arch=compute_90a"]
    steps = ["-c", "-a", "@null", ir, "-V", "2", *opts, "-l", "@null",
             libdevice, "-C", "2", *opts, "-r", "-d"]
    case = os.path.join(bundle, "bin/jitcache_nvvm_case")
    shim = os.path.join(bundle, "shim/libnvvm.so.4")

    def once(lib, report):
        t0 = time.monotonic()
        subprocess.run([case, lib, report, *steps], env=env, check=True,
                       capture_output=True)
        return (time.monotonic() - t0) * 1e3

    once(shim, os.path.join(work, "miss"))
    real_ms, hit_ms = [], []
    for i in range(runs):
        real_ms.append(once(real, os.path.join(work, "real")))
        hit_ms.append(once(shim, os.path.join(work, "hit")))
    with open(os.path.join(work, "real"), "rb") as a, \
            open(os.path.join(work, "hit"), "rb") as b:
        same = a.read() == b.read()
    return real_ms, hit_ms, same


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--mode", default="plain")
    ap.add_argument("--libnvvm",
                    default="/usr/local/cuda/nvvm/lib64/libnvvm.so.4")
    ap.add_argument("--write-results", action="store_true")
    args = ap.parse_args()
    bundle = os.path.abspath(args.bundle)
    work = tempfile.mkdtemp(prefix="jcnvvm")
    daemon = BundleDaemon(bundle, work, "nvvm")
    daemon.extra = ["--libnvvm=" + args.libnvvm]
    daemon.start()
    try:
        base = numba_env(os.path.join(work, "compat"))
        base["JITCACHE_SOCKET"] = daemon.socket
        ours = dict(base, LD_PRELOAD=os.path.join(bundle, "shim/libnvvm.so.4"))
        ours["JITCACHE_REAL_NVVM"] = args.libnvvm
        one(ours, args.mode)  # the miss that fills the store
        before = daemon.stats()
        real_first, real_wall, hit_first, hit_wall = [], [], [], []
        last = {}
        for _ in range(args.runs):
            f, w, last["real"] = one(base, args.mode)
            real_first.append(f)
            real_wall.append(w)
            f, w, last["ours"] = one(ours, args.mode)
            hit_first.append(f)
            hit_wall.append(w)
        after = daemon.stats()
        alone = nvvm_only(bundle, dict(base, JITCACHE_REAL_NVVM=args.libnvvm),
                          args.libnvvm, work, args.runs)
    finally:
        daemon.stop()
    misses = after.get("misses", 0) - before.get("misses", 0)
    hits = after.get("hits", 0) - before.get("hits", 0)
    med = statistics.median
    lines = [
        f"numba-cuda `@cuda.jit` kernel (`{args.mode}`: math.sin, libdevice), "
        f"first launch in a new process; {args.runs} runs each, alternating; "
        "median [min].",
        "",
        f"Command: `python3 bench/numba_nvvm_bench.py --bundle BUNDLE --runs "
        f"{args.runs} --write-results`; "
        f"{gpu_name()}, {os.cpu_count()} cores, "
        f"{datetime.date.today().isoformat()}.",
        "",
        "| libNVVM | first launch (compile, link, load) | whole process |",
        "|---|---|---|",
        f"| real ({args.libnvvm}) | {med(real_first):.1f} ms "
        f"[{min(real_first):.1f}] | {med(real_wall):.0f} ms "
        f"[{min(real_wall):.0f}] |",
        f"| jitcache's libnvvm.so.4, a hit | {med(hit_first):.1f} ms "
        f"[{min(hit_first):.1f}] | {med(hit_wall):.0f} ms "
        f"[{min(hit_wall):.0f}] |",
        "",
        f"Daemon during the timed runs: {hits:.0f} hits, {misses:.0f} misses. "
        f"Last lines: real `{last.get('real', '')}`; ours "
        f"`{last.get('ours', '')}`.",
    ]
    if alone is not None:
        real_ms, hit_ms, same = alone
        lines += [
            "",
            "libNVVM alone: numba-cuda's calls for the same kernel (its IR, a "
            "verify, libdevice added lazily, the compile, every read), a new "
            "process each (`jitcache_nvvm_case`); the two reports "
            f"{'are the same bytes' if same else 'DIFFER'}.",
            "",
            "| libNVVM | process (load, calls, reads) |",
            "|---|---|",
            f"| real | {med(real_ms):.1f} ms [{min(real_ms):.1f}] |",
            f"| jitcache's libnvvm.so.4, a hit | {med(hit_ms):.1f} ms "
            f"[{min(hit_ms):.1f}] |",
        ]
    if args.write_results:
        write_section("numba-nvvm", lines, script="bench/numba_nvvm_bench.py")
    else:
        print("\n".join(lines))


if __name__ == "__main__":
    main()
