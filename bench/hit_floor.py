#!/usr/bin/env python3
"""Hit cost side by side: two builds of jitcache measured in one run.

Each side is a folder holding its own jitcached, jitcache-worker, jitcache
and jitcache_bench (a build's binaries, or a GPU bundle's bin/). For each,
a daemon on a fresh store: library hit latency (connected client) for the
small, CUB and large kernels; hits per second and the daemon's CPU per hit
from 1 and 16 client processes (small kernel). Prints one JSON object.

  python3 bench/hit_floor.py --side before=DIR --side after=DIR [--hits N]
"""
import argparse
import json
import os
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


def measure(name, bindir, workdir, hits, seconds):
    daemon = Daemon(bindir, workdir, name)
    daemon.start()
    try:
        bench(bindir, "hit-latency", daemon.socket, "1")  # compiles, warms
        latency = bench(bindir, "hit-latency", daemon.socket, str(hits))
        rows = {"latency": latency}
        for clients in (1, 16):
            rows[f"throughput_{clients}"] = throughput(bindir, daemon, clients,
                                                      seconds)
        return rows
    finally:
        daemon.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", action="append", required=True,
                    help="NAME=DIR with jitcached, jitcache, jitcache_bench")
    ap.add_argument("--hits", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=3)
    args = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        # Alternate the sides twice so that neither has the quieter moment.
        for round_ in range(2):
            for side in args.side:
                name, bindir = side.split("=", 1)
                log(f"{name} round {round_ + 1}")
                results.setdefault(name, []).append(
                    measure(f"{name}{round_}", os.path.abspath(bindir), workdir,
                            args.hits, args.seconds))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
