#!/usr/bin/env python3
"""NVRTC itself against jitcache's NVRTC-compatible library, on the CUB
kernel, through each way a program reaches NVRTC (bench/nvrtc_client_timing.py):
its C API (ctypes), and where installed CuPy and cuda.core. For each: the
real NVRTC's compile time, a miss through our library (a new key each time,
so each compiles in the daemon) and what jitcache adds to it (the client's
time less the NVRTC time the daemon measured), a hit in a new process (the
first compile a program makes) and hits in a warm process. Every timing is a child process's own measurement, taken side by
side in one run against one daemon.

  python3 bench/nvrtc_library_bench.py [--build build | --bundle DIR]
      [--drivers ctypes,cupy,cuda_core] [--write-results NAME]
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import Daemon  # noqa: E402
from results_section import write_section  # noqa: E402


class BundleDaemon(Daemon):
    """A daemon from a gpu-bundle folder (bin/, lib/) instead of a build."""

    def __init__(self, bundle, workdir, name):
        super().__init__(bundle, workdir, name,
                         binary=os.path.join(bundle, "bin/jitcached"))
        self.bundle = bundle

    def cli(self, *args):
        return subprocess.run(
            [os.path.join(self.bundle, "bin/jitcache"), "--socket",
             self.socket, *args], capture_output=True, text=True)


def child(driver, count, seed, include_dir, lib, ours, env_base, vary=False):
    env = dict(env_base)
    if vary:
        env["JC_VARY"] = "1"
    if driver != "ctypes" and ours:
        env["LD_PRELOAD"] = lib
    argv = [sys.executable, os.path.join(HERE, "nvrtc_client_timing.py"),
            driver, str(count), str(seed), include_dir]
    if driver == "ctypes":
        argv.append(lib)
    r = subprocess.run(argv, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{driver} child failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def ms(seconds):
    return f"{seconds * 1e3:.1f} ms" if seconds >= 0.01 else \
        f"{seconds * 1e3:.2f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--bundle", help="gpu-bundle folder (bin/, lib/)")
    ap.add_argument("--nvrtc-dir", help="folder of our libnvrtc.so.13 "
                    "(default: BUILD/client/nvrtc)")
    ap.add_argument("--drivers", default="ctypes")
    ap.add_argument("--misses", type=int, default=3)
    ap.add_argument("--fresh", type=int, default=5)
    ap.add_argument("--hits", type=int, default=200)
    ap.add_argument("--write-results", metavar="NAME")
    args = ap.parse_args()

    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    real = os.path.realpath(os.path.join(cuda, "lib64/libnvrtc.so.13"))
    ours = os.path.join(args.nvrtc_dir or os.path.join(args.build,
                                                       "client/nvrtc"),
                        "libnvrtc.so.13")
    ours = os.path.abspath(ours)
    toolkit_cccl = os.path.realpath(os.path.join(cuda, "include/cccl"))
    work = tempfile.mkdtemp(prefix="jcnvrtcbench.")
    # A program's own copy of CCCL (as CuPy ships one): an -I directory
    # outside the toolkit, which the library scans and sends by content.
    user_cccl = os.path.join(work, "cccl")
    shutil.copytree(toolkit_cccl, user_cccl)
    time.sleep(2.5)  # the scan trusts a file's stamp once it is 2 s old

    if args.bundle:
        daemon = BundleDaemon(os.path.abspath(args.bundle), work, "d")
    else:
        daemon = Daemon(args.build, work, "d")
    daemon.start()
    env = dict(os.environ, JITCACHE_SOCKET=daemon.socket,
               JITCACHE_REAL_NVRTC=real, JITCACHE_NVRTC_VERBOSE="1")
    if args.bundle:
        env["LD_LIBRARY_PATH"] = os.path.join(args.bundle, "lib") + ":" + \
            env.get("LD_LIBRARY_PATH", "")

    setups = []
    for driver in args.drivers.split(","):
        if driver == "ctypes":
            setups += [("ctypes", "own copy of CCCL (-I, scanned)", user_cccl),
                       ("ctypes", "toolkit CCCL (-I)", toolkit_cccl)]
        elif driver == "cupy":
            setups.append(("cupy", "CuPy's bundled CCCL (its -I)", ""))
        elif driver == "cuda_core":
            setups.append(("cuda_core", "toolkit CCCL (include_path)",
                           toolkit_cccl))

    # The daemon starts its compile workers on demand: start one before
    # anything is timed.
    child("ctypes", 1, 1, toolkit_cccl, ours, True, env)
    rows, raw, notes = [], {}, []
    seed = 1000
    try:
        for driver, what, inc in setups:
            # CuPy reaches NVRTC once per process (see nvrtc_client_timing).
            per_process = driver == "cupy"

            def timed(count, first_seed, lib, is_ours):
                if not per_process:
                    return child(driver, count, first_seed, inc, lib, is_ours,
                                 env, vary=True)
                return [child(driver, 1, first_seed + i, inc, lib, is_ours,
                              env)[0] for i in range(count)]
            real_t = timed(args.misses, seed, real, False)
            seed += 100
            # Each miss in its own process, the daemon's NVRTC time read
            # around it: what jitcache added to that miss.
            before = daemon.stats()
            miss_t, added_t = [], []
            for i in range(args.misses):
                at_start = daemon.stats()
                miss_t += child(driver, 1, seed + i, inc, ours, True, env)
                nvrtc_s = (daemon.stats()["compile_seconds_spent"]
                           - at_start["compile_seconds_spent"])
                added_t.append(miss_t[-1] - nvrtc_s)
            after_miss = daemon.stats()
            hit_seed = seed
            seed += 100
            fresh_t = [child(driver, 1, hit_seed, inc, ours, True, env)[0]
                       for _ in range(args.fresh)]
            warm_t = None if per_process else child(
                driver, args.hits, hit_seed, inc, ours, True, env)[1:]
            after = daemon.stats()
            if per_process:
                # CuPy's own disk cache, new processes: the floor.
                kept = dict(env, JC_CUPY_CACHE=tempfile.mkdtemp(dir=work))
                child(driver, 1, hit_seed, inc, real, False, kept)
                floor_t = [child(driver, 1, hit_seed, inc, real, False,
                                 kept)[0] for _ in range(args.fresh)]
                notes.append(
                    f"CuPy answering from its own disk cache in a new "
                    f"process (no NVRTC call): median "
                    f"{ms(statistics.median(floor_t))}.")
            compiled = after_miss["misses"] - before["misses"]
            # Two compiles of a second differ by more than the overhead: no
            # difference of medians, but the median of each miss's own.
            added = statistics.median(added_t)
            hits = after["hits"] - after_miss["hits"]
            real_m = statistics.median(real_t)
            miss_m = statistics.median(miss_t)
            fresh_m = statistics.median(fresh_t)
            warm_m = statistics.median(warm_t) if warm_t else None
            raw[f"{driver}: {what}"] = dict(
                real=real_t, miss=miss_t, added=added_t,
                fresh_hit=fresh_t,
                warm_hit_p50=warm_m, daemon_misses=compiled,
                daemon_hits=hits)
            rows.append(
                f"| {driver} | {what} | {ms(real_m)} | {ms(miss_m)} "
                f"({ms(added)}) | {ms(fresh_m)} "
                f"| {ms(warm_m) if warm_m else '-'} "
                f"| {real_m / fresh_m:.0f}x "
                f"| {f'{real_m / warm_m:.0f}x' if warm_m else '-'} "
                f"| {int(compiled)} misses, {int(hits)} hits |")
            print(rows[-1], flush=True)
    finally:
        daemon.stop()
        shutil.rmtree(work, ignore_errors=True)

    lines = [
        "| driver | includes | real NVRTC | miss via jitcache (added) "
        "| hit, new process | hit, warm process | real / new-process hit "
        "| real / warm hit | daemon saw |",
        "|---|---|---|---|---|---|---|---|---|",
    ] + rows + [""] + notes
    print("\n".join(lines))
    print(json.dumps(raw))
    if args.write_results:
        machine = (f"{platform.processor() or platform.machine()}, "
                   f"{os.cpu_count()} cores, {platform.platform()}")
        header = [
            "## The NVRTC library against NVRTC (CUB kernel)",
            "",
            f"Command: `python3 bench/nvrtc_library_bench.py "
            f"{' '.join(sys.argv[1:])}`  ",
            f"Machine: {machine}  ",
            f"Date: {datetime.date.today().isoformat()}",
            "",
            "Real NVRTC and miss: medians of separate compiles (a new key "
            "each; a miss is a new process's first compile). Added: the "
            "median over those misses of what jitcache added, the client's "
            "time less the NVRTC time the daemon's worker measured. Hit, new "
            "process: a process's first compile (connecting, the include "
            "scan from the kept scan). Hit, warm process: p50 of 200.",
            "",
        ]
        write_section(args.write_results, header + lines,
                      script="bench/nvrtc_library_bench.py")


if __name__ == "__main__":
    main()
