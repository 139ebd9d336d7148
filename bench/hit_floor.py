#!/usr/bin/env python3
"""Hit cost side by side: two builds of jitcache measured in one run.

Each side is a folder holding its own jitcached, jitcache-worker, jitcache
and jitcache_bench (a build's binaries, or a GPU bundle's bin/). For each,
a daemon on a fresh store: library hit latency (connected client) for the
small, CUB and large kernels; a new process's first hit (CUB); a
`jitcache compile` hit in a new process (a program with headers); a hit of a
program with its own 700-header include tree; a precompile of 500 cached
kernels in one call; hits per second and the daemon's CPU per hit from 1
and 16 client processes (small kernel). Prints one JSON object.

  python3 bench/hit_floor.py --side before=DIR --side after=DIR \
      [--side spin=DIR,JITCACHE_HIT_SPIN_US=50] [--hits N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Daemon:
    def __init__(self, bindir, workdir, name):
        self.bindir = bindir
        self.socket = os.path.join(workdir, name + ".sock")
        self.store = os.path.join(workdir, name + ".store")
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [os.path.join(self.bindir, "jitcached"), "--socket=" + self.socket,
             "--store=" + self.store], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while subprocess.run([os.path.join(self.bindir, "jitcache"), "--socket",
                              self.socket, "ping"],
                             capture_output=True).returncode != 0:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("jitcached did not start")
            time.sleep(0.05)

    def cpu_seconds(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def bench(bindir, *args):
    out = subprocess.run([os.path.join(bindir, "jitcache_bench"), *args],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"jitcache_bench {args[0]}: {out.stderr}")
    return json.loads(out.stdout)


def throughput(bindir, daemon, clients, seconds):
    cpu0 = daemon.cpu_seconds()
    procs = [subprocess.Popen([os.path.join(bindir, "jitcache_bench"),
                               "hit-loop", daemon.socket, str(seconds)],
                              stdout=subprocess.PIPE, text=True)
             for _ in range(clients)]
    outs = [json.loads(p.communicate()[0]) for p in procs]
    cpu = daemon.cpu_seconds() - cpu0
    hits = sum(o["hits"] for o in outs)
    return {"hits_per_s": round(hits / seconds),
            "errors": sum(o["errors"] for o in outs),
            "daemon_cpu_us_per_hit": round(cpu * 1e6 / max(hits, 1), 1)}


def first_hits(bindir, daemon, runs):
    """A new process per hit: its own time from main to the hit, and the
    wall time of the whole process (spawn, load, hit, exit)."""
    inside, wall = [], []
    for _ in range(runs):
        t = time.perf_counter()
        out = bench(bindir, "first-hit", daemon.socket)
        wall.append((time.perf_counter() - t) * 1e6)
        if out["served"] != "hit":
            raise RuntimeError("first-hit was not a hit")
        inside.append(out["first_hit_us"])
    inside, wall = inside[1:], wall[1:]  # the first keeps the scan memo
    return {"in_process_us_p50": round(statistics.median(inside), 1),
            "process_wall_us_p50": round(statistics.median(wall), 1),
            "n": len(inside)}


CLI_PROGRAM = """#include "scale.cuh"
#include <offset.cuh>
extern "C" __global__ void scaled(float* x) { x[threadIdx.x] *= SCALE + OFFSET; }
"""


def cli_hits(bindir, daemon, workdir, runs):
    """`jitcache compile` in a new process per hit, of a program with a
    header beside it and one in an -I directory: the wall time of each."""
    src = os.path.join(workdir, "cli")
    os.makedirs(os.path.join(src, "inc"), exist_ok=True)
    for name, text in (("prog.cu", CLI_PROGRAM),
                       ("scale.cuh", "#define SCALE 2.0f\n"),
                       ("inc/offset.cuh", "#define OFFSET 1.0f\n")):
        with open(os.path.join(src, name), "w") as f:
            f.write(text)
    time.sleep(2.2)  # a file changed within two seconds is not trusted
    cmd = [os.path.join(bindir, "jitcache"), "--socket", daemon.socket,
           "compile", "prog.cu", "-Iinc", "--arch", "sm_90", "--target",
           "cubin", "-o", "prog.cubin"]
    walls, served = [], set()
    for i in range(runs + 2):  # a miss, then the first hit
        t = time.perf_counter()
        out = subprocess.run(cmd, cwd=src, capture_output=True, text=True)
        wall = (time.perf_counter() - t) * 1e6
        if out.returncode != 0:
            raise RuntimeError(f"jitcache compile: {out.stdout}{out.stderr}")
        if i >= 2:
            walls.append(wall)
            served.add(out.stdout.split()[0])
    return {"process_wall_us_p50": round(statistics.median(walls), 1),
            "served": sorted(served), "n": len(walls)}


def measure(name, bindir, workdir, hits, seconds, batch):
    daemon = Daemon(bindir, workdir, name)
    daemon.start()
    try:
        bench(bindir, "hit-latency", daemon.socket, "1")  # compiles, warms
        latency = bench(bindir, "hit-latency", daemon.socket, str(hits))
        rows = {"latency": latency}
        rows["first_hit"] = first_hits(bindir, daemon, 21)
        rows["cli_hit"] = cli_hits(bindir, daemon,
                                   os.path.join(workdir, name + ".cli"), 21)
        rows["include_tree_700"] = bench(
            bindir, "include-tree-hit", daemon.socket,
            os.path.join(workdir, name + ".tree"), "700", str(hits))
        rows["batch"] = bench(bindir, "batch-hits", daemon.socket, str(batch),
                              "5")
        for clients in (1, 16):
            rows[f"throughput_{clients}"] = throughput(bindir, daemon, clients,
                                                      seconds)
        return rows
    finally:
        daemon.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", action="append", required=True,
                    help="NAME=DIR[,VAR=VALUE...]: jitcached, jitcache, "
                    "jitcache_bench in DIR, run with those variables set")
    ap.add_argument("--hits", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--batch", type=int, default=500,
                    help="distinct kernels in the precompile batch")
    args = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        # Alternate the sides twice so that neither has the quieter moment.
        for round_ in range(2):
            for side in args.side:
                name, spec = side.split("=", 1)
                bindir, *assignments = spec.split(",")
                log(f"{name} round {round_ + 1}")
                saved = dict(os.environ)
                os.environ.update(a.split("=", 1) for a in assignments)
                # Each side keeps its include scans in a cache of its own.
                os.environ["XDG_CACHE_HOME"] = os.path.join(
                    workdir, f"{name}{round_}.cache")
                os.makedirs(os.environ["XDG_CACHE_HOME"], exist_ok=True)
                results.setdefault(name, []).append(
                    measure(f"{name}{round_}", os.path.abspath(bindir), workdir,
                            args.hits, args.seconds, args.batch))
                os.environ.clear()
                os.environ.update(saved)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
