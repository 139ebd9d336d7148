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
import platform
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
        f"{platform.node()} ({os.cpu_count()} cores), "
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
    if args.write_results:
        write_section("numba-nvvm", lines)
    else:
        print("\n".join(lines))


if __name__ == "__main__":
    main()
