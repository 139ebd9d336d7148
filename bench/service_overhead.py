#!/usr/bin/env python3
"""What the team-service work costs a hit: per-request identity (SO_PEERCRED
lookup), per-user counters, latency histograms, and a /metrics endpoint.

Runs two jitcached binaries side by side in one run, rounds interleaved:
--baseline (built from a commit before that work) and this build's, the
latter also with --metrics_address and a scraper reading /metrics every
100 ms. For each: hit p50/p99 of the three benchmark kernels through the
client library (bench/jitcache_bench hit-latency), and hits per second from
4 client processes (hit-loop). Writes a section into bench/RESULTS.md
between <!-- service-overhead --> markers.

  git worktree add /tmp/base <commit> && cmake -S /tmp/base -B /tmp/base/build \
      -G Ninja -DJITCACHE_BUILD_TESTS=OFF && cmake --build /tmp/base/build --target jitcached
  python3 bench/service_overhead.py --baseline /tmp/base/build/server/jitcached
"""
import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request

from results_section import write_section
from run import Daemon

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bench(build, *args):
    out = subprocess.run([os.path.join(build, "bench/jitcache_bench"), *args],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(build, daemon):
    bench(build, "hit-latency", daemon.socket, "1")  # compiles the kernels
    lat = bench(build, "hit-latency", daemon.socket, "2000")
    loops = [subprocess.Popen([os.path.join(build, "bench/jitcache_bench"),
                               "hit-loop", daemon.socket, "3"],
                              stdout=subprocess.PIPE, text=True)
             for _ in range(4)]
    hits = sum(json.loads(p.communicate()[0])["hits"] for p in loops)
    return {k: v["hit"] for k, v in lat.items()}, hits / 3.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", required=True,
                    help="a jitcached built from an earlier commit")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    new = os.path.join(args.build, "server/jitcached")
    variants = [
        ("baseline", args.baseline, False),
        ("this build", new, False),
        ("this build, /metrics scraped every 100 ms", new, True),
    ]
    results = {name: [] for name, _, _ in variants}
    for r in range(args.rounds):
        order = variants if r % 2 == 0 else list(reversed(variants))
        for name, binary, metrics in order:
            with tempfile.TemporaryDirectory(dir="/tmp") as work:
                port = free_port() if metrics else None
                extra = ["--store=:memory:"]
                if port:
                    extra.append(f"--metrics_address=127.0.0.1:{port}")
                daemon = Daemon(args.build, work, "s", extra=extra,
                                binary=binary)
                daemon.start()
                stop = threading.Event()

                def scrape():
                    while not stop.wait(0.1):
                        urllib.request.urlopen(
                            f"http://127.0.0.1:{port}/metrics").read()
                scraper = threading.Thread(target=scrape) if port else None
                if scraper:
                    scraper.start()
                try:
                    results[name].append(measure(args.build, daemon))
                finally:
                    stop.set()
                    if scraper:
                        scraper.join()
                    daemon.stop()
            print(f"round {r + 1} {name}: {results[name][-1]}", flush=True)

    kernels = list(results["baseline"][0][0].keys())
    lines = [
        "## What identity, per-user stats and metrics cost a hit",
        "",
        f"Command: `python3 bench/service_overhead.py --baseline "
        f"BASE/server/jitcached` (BASE: a build of the commit before the "
        f"team-service work)  ",
        f"Machine: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, {platform.platform()}  ",
        f"Date: {time.strftime('%Y-%m-%d')}",
        "",
        f"Hit p50 / p99 through the client library (2,000 hits per kernel), "
        f"and hits per second from 4 processes; the median of "
        f"{args.rounds} interleaved rounds. Compare rows within this table "
        f"only: the tables above were measured on another day, and the "
        f"same client binary measures every row here.",
        "",
        "| daemon | " + " | ".join(f"{k} p50 / p99" for k in kernels) +
        " | hits/s (4 processes) |",
        "|---" * (len(kernels) + 2) + "|",
    ]
    for name, _, _ in variants:
        runs = results[name]
        cells = []
        for k in kernels:
            p50 = statistics.median(run[0][k]["p50_us"] for run in runs)
            p99 = statistics.median(run[0][k]["p99_us"] for run in runs)
            cells.append(f"{p50:.0f} / {p99:.0f} µs")
        rate = statistics.median(run[1] for run in runs)
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {rate:.0f} |")
    write_section("service-overhead", lines)

if __name__ == "__main__":
    main()
