#!/usr/bin/env python3
"""The Redis tier, measured in one run:

- cold start of a team job: 8 processes per node precompile the same 10
  kernels at once, on one node alone, on 4 nodes without the tier, and on 4
  nodes sharing a redis-server (all on this machine, so the 4-node rows show
  how much compile work the tier saves, not what 4 machines would gain);
- the tier's share of a remote hit (bench/remote_bench.cc): GET, frame
  check, parse, and the object's SHA-256, for 4 KiB, 150 KiB and 1.3 MiB.

Writes a section into bench/RESULTS.md between <!-- cluster-bench -->
markers.

  python3 bench/cluster_bench.py
"""
import argparse
import json
import os
import platform
import subprocess
import tempfile
import time

from results_section import write_section
from run import Daemon

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def kernel(n):
    return (f'extern "C" __global__ void k{n}(float* x) {{\n'
            f'  float a = x[threadIdx.x];\n#pragma unroll\n'
            f'  for (int i = 0; i < 500; ++i) a = a * 1.0001f + __sinf(a) * 0.5f + {n};\n'
            f'  x[threadIdx.x] = a;\n}}\n')


def start_redis(work):
    sock = os.path.join(work, "redis.sock")
    proc = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", sock,
                             "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        if os.path.exists(sock):
            return proc, "unix://" + sock
        time.sleep(0.02)
    raise RuntimeError("redis-server did not start")


def cold_start(build, nodes, remote, seed):
    with tempfile.TemporaryDirectory(dir="/tmp") as work:
        redis = None
        flags = []
        if remote:
            redis, url = start_redis(work)
            keys = os.path.join(work, "team.keys")
            with open(os.open(keys, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
                f.write(os.urandom(32).hex() + "\n")
            flags = ["--remote=" + url, "--remote_key_file=" + keys]
        daemons = [Daemon(build, work, f"n{n}",
                          extra=["--store=:memory:", *flags])
                   for n in range(nodes)]
        for daemon in daemons:
            daemon.start()
        lines = []
        for k in range(10):
            path = os.path.join(work, f"k{k}.cu")
            with open(path, "w") as f:
                f.write(kernel(seed * 100 + k))
            lines.append(f"{path} --arch sm_90 --target cubin")
        manifest = os.path.join(work, "manifest")
        with open(manifest, "w") as f:
            f.write("\n".join(lines) + "\n")
        env = dict(os.environ, JITCACHE_NO_FALLBACK="1")
        start = time.monotonic()
        full = os.path.join(build, "client/jitcache-full")
        procs = [subprocess.Popen([full, "--socket", daemon.socket,
                                   "precompile", manifest], env=env,
                                  stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
                 for daemon in daemons for _ in range(8)]
        failed = sum(p.wait() != 0 for p in procs)
        wall = time.monotonic() - start
        compiles = int(sum(daemon.stats()["compiles"] for daemon in daemons))
        for daemon in daemons:
            daemon.stop()
        if redis:
            redis.terminate()
            redis.wait()
        return {"wall_s": wall, "compiles": compiles, "failed": failed}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    rows = [("1 node, no tier", 1, False), ("4 nodes, no tier", 4, False),
            ("4 nodes sharing Redis", 4, True)]
    results = []
    for i, (name, nodes, remote) in enumerate(rows):
        r = cold_start(args.build, nodes, remote, i + 1)
        print(name, r, flush=True)
        results.append((name, r))
    with tempfile.TemporaryDirectory(dir="/tmp") as work:
        redis, url = start_redis(work)
        fetch = json.loads(subprocess.run(
            [os.path.join(args.build, "bench/jitcache_remote_bench"), url,
             "1000"], capture_output=True, text=True, check=True).stdout)
        redis.terminate()
        redis.wait()
    print(fetch)
    lines = [
        "## The Redis tier",
        "",
        "Command: `python3 bench/cluster_bench.py`  ",
        f"Machine: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, {platform.platform()}; redis-server "
        f"{subprocess.run(['redis-server', '--version'], capture_output=True, text=True).stdout.split()[2]} "
        "on a Unix socket  ",
        f"Date: {time.strftime('%Y-%m-%d')}",
        "",
        "Cold start: 8 processes per node precompile the same 10 cubin kernels "
        "at once (every node and Redis on this one machine: the rows compare "
        "compile work, not the speed of 4 machines).",
        "",
        "| cluster | compiles | wall time | precompile processes that failed |",
        "|---|---|---|---|",
    ]
    for name, r in results:
        lines.append(f"| {name} | {r['compiles']} | {r['wall_s']:.2f} s | "
                     f"{r['failed']} |")
    lines += [
        "",
        "The tier's share of a remote hit (GET, frame check, parse, SHA-256 of "
        "the object; 1,000 each; the local store write and the client's round "
        "trip come on top):",
        "",
        "| object | p50 | p99 |",
        "|---|---|---|",
    ]
    for size in ("4KiB", "150KiB", "1.3MiB"):
        lines.append(f"| {size} | {fetch[size]['p50_us'] / 1000:.2f} ms | "
                     f"{fetch[size]['p99_us'] / 1000:.2f} ms |")
    lines.append("")
    lines.append("SHA-256 through the CPU's SHA extensions: "
                 + ("yes" if fetch.get("sha_ni") else "no (portable code)")
                 + ". Without them (the portable code, measured before they "
                 "were used) the 150 KiB row was 0.93 ms and the 1.3 MiB row "
                 "8.30 ms.")
    write_section("cluster-bench", lines)


if __name__ == "__main__":
    main()
