#!/usr/bin/env python3
"""What compiling in jitcache-worker processes costs, side by side with
compiling inside the daemon (--in_process_compiles), in one run, rounds
interleaved:

- miss latency of the small kernel and of the CUB kernel (each request a new
  key), as the `jitcache compile` client sees it (its "total");
- the first compile after the daemon starts (a worker is started for it);
- hit p50 through the client library (bench/jitcache_bench hit-latency);
- memory: the daemon's RSS, and each worker's RSS after the compiles.

Each --baseline 'NAME=PATH' adds a mode that runs that worker binary (for
example one built from an earlier commit) in the same interleaved rounds.

Writes a section into bench/RESULTS.md between <!-- compile-isolation -->
markers.

  python3 bench/compile_isolation.py [--rounds 3] [--baseline NAME=PATH]...
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import tempfile
import time

from results_section import write_section
from run import Daemon

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def children(pid):
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            out += [int(p) for p in f.read().split()]
    return out


def compile_ms(daemon, source_path, *flags):
    """How `jitcache compile` was served and its "total" time."""
    r = daemon.cli("compile", source_path, "--arch", "sm_90", "--target",
                   "cubin", "-o", source_path + ".cubin", *flags)
    m = re.search(r"^(MISS|HIT) .* total ([0-9.]+) ms", r.stdout)
    if not m:
        raise RuntimeError(r.stdout + r.stderr)
    return m.group(1), float(m.group(2))


def measure(build, work, flags, seed):
    small = os.path.join(work, "small.cu")
    cub = os.path.join(work, "cub.cu")
    with open(cub, "w") as f:
        f.write(subprocess.run([os.path.join(build, "bench/jitcache_bench"),
                                "source", "cub"], capture_output=True,
                               text=True, check=True).stdout)
    daemon = Daemon(build, work, "s", extra=["--store=:memory:", *flags])
    daemon.start()
    try:
        def write_small(i):
            with open(small, "w") as f:
                f.write(f'extern "C" __global__ void k(int* x) '
                        f'{{ x[0] = {seed * 1000 + i}; }}\n')
        write_small(0)
        _, first = compile_ms(daemon, small)
        small_ms = []
        for i in range(1, 21):
            write_small(i)
            served, ms = compile_ms(daemon, small)
            assert served == "MISS"
            small_ms.append(ms)
        cub_ms = []
        for i in range(3):
            served, ms = compile_ms(daemon, cub, f"-DJITCACHE_BENCH_SEED={seed * 10 + i}")
            assert served == "MISS"
            cub_ms.append(ms)
        lat = subprocess.run([os.path.join(build, "bench/jitcache_bench"),
                              "hit-latency", daemon.socket, "1"],
                             capture_output=True, check=True)
        hits = subprocess.run([os.path.join(build, "bench/jitcache_bench"),
                               "hit-latency", daemon.socket, "2000"],
                              capture_output=True, text=True, check=True).stdout
        hit = json.loads(hits)
        workers = [rss_mib(p) for p in children(daemon.proc.pid)]
        return {
            "first_ms": first,
            "small_ms": statistics.median(small_ms),
            "cub_ms": statistics.median(cub_ms),
            "hit_small_us": hit["small"]["hit"]["p50_us"],
            "hit_cub_us": hit["cub"]["hit"]["p50_us"],
            "daemon_rss_mib": rss_mib(daemon.proc.pid),
            "worker_rss_mib": max(workers) if workers else 0.0,
            "workers": len(workers),
        }
    finally:
        daemon.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", action="append", default=[],
                    metavar="NAME=PATH",
                    help="another jitcache-worker binary to measure alongside "
                         "(repeatable)")
    args = ap.parse_args()
    modes = [("in process (--in_process_compiles)", ["--in_process_compiles"]),
             ("jitcache-worker processes (default)", [])]
    baselines = []
    for spec in args.baseline:
        name, sep, path = spec.partition("=")
        if not sep or not name or not os.access(path, os.X_OK):
            ap.error(f"--baseline {spec!r}: want NAME=PATH of a worker binary")
        baselines.append(name)
        modes.append((name, [f"--worker_binary={path}"]))
    results = {name: [] for name, _ in modes}
    for r in range(args.rounds):
        for name, flags in (modes if r % 2 == 0 else list(reversed(modes))):
            with tempfile.TemporaryDirectory(dir="/tmp") as work:
                results[name].append(
                    measure(args.build, work, flags, r * 2 + len(results[name])))
            print(f"round {r + 1} {name}: {results[name][-1]}", flush=True)

    def med(name, key):
        return statistics.median(x[key] for x in results[name])

    lines = [
        "## Compiles in worker processes vs in the daemon",
        "",
        f"Command: `python3 bench/compile_isolation.py --rounds {args.rounds}"
        + "".join(f" --baseline '{n}=WORKER'" for n in baselines) + "`  ",
        f"Machine: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, {platform.platform()}  ",
        f"Date: {time.strftime('%Y-%m-%d')}",
        "",
        "Miss latency as `jitcache compile` sees it (each request a new key; "
        "median of 20 small and 3 CUB misses per round), the first compile "
        "after the daemon starts, hit p50 through the client library, and "
        f"memory; the median of {args.rounds} interleaved rounds.",
        "",
        "| compiles | small miss | CUB miss | first compile after start | "
        "hit p50 small / CUB | daemon RSS | worker RSS |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, _ in modes:
        worker = (f"{med(name, 'worker_rss_mib'):.0f} MiB each"
                  if med(name, "workers") else "-")
        lines.append(
            f"| {name} | {med(name, 'small_ms'):.1f} ms | "
            f"{med(name, 'cub_ms'):.0f} ms | {med(name, 'first_ms'):.0f} ms | "
            f"{med(name, 'hit_small_us'):.0f} / {med(name, 'hit_cub_us'):.0f} µs | "
            f"{med(name, 'daemon_rss_mib'):.0f} MiB | {worker} |")
    a, b = modes[0][0], modes[1][0]
    lines += [
        "",
        f"Workers add {med(b, 'small_ms') - med(a, 'small_ms'):+.1f} ms to a "
        f"small miss and {med(b, 'cub_ms') - med(a, 'cub_ms'):+.0f} ms to a "
        f"CUB miss (goal: at most 5 ms or 5%). Hits never reach a worker: "
        f"the hit columns show this shared machine's run-to-run spread.",
    ]
    for c in baselines:
        lines += [
            "",
            f"Against {c}: the default adds "
            f"{med(b, 'small_ms') - med(c, 'small_ms'):+.1f} ms to a small "
            f"miss and {med(b, 'cub_ms') - med(c, 'cub_ms'):+.0f} ms to a CUB "
            f"miss.",
        ]
    write_section("compile-isolation", lines)

if __name__ == "__main__":
    main()
