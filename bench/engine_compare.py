#!/usr/bin/env python3
"""Two builds' daemons side by side in one run: hit latency, hits/s and miss
latency, each daemon on its own socket and store, asked in turn (A, B, A, B,
...) so that the machine's drift falls on both alike.

  engine_compare.py --a NAME=BINDIR --b NAME=BINDIR [--rounds 3] [--out F]

BINDIR holds jitcached, jitcache-worker and jitcache_bench. Hit latency and
hits/s are measured with each build's own jitcache_bench (its client);
miss latency with B's, or --miss-from's (miss-latency is newer than some
builds), against both daemons. Prints (and with --out writes) one JSON object.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import tempfile
import time


def bench(bindir, *args):
    out = subprocess.run([os.path.join(bindir, "jitcache_bench"), *args],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"jitcache_bench {args[0]}: {out.stderr}")
    return json.loads(out.stdout)


class Daemon:
    def __init__(self, bindir, workdir, name):
        self.bindir = bindir
        self.socket = os.path.join(workdir, name + ".sock")
        self.proc = subprocess.Popen(
            [os.path.join(bindir, "jitcached"), "--socket=" + self.socket,
             "--store=" + os.path.join(workdir, name + ".store")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not os.path.exists(self.socket + ".hit"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name}: jitcached did not start")
            time.sleep(0.05)
        time.sleep(0.5)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)


def hits_per_second(bindir, socket, clients, seconds):
    cmd = [os.path.join(bindir, "jitcache_bench"), "hit-loop", socket,
           str(seconds)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
             for _ in range(clients)]
    outs = [json.loads(p.communicate()[0]) for p in procs]
    return sum(o["hits"] for o in outs) / seconds, sum(o["errors"] for o in outs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--misses", type=int, default=20)
    ap.add_argument("--miss-from", default=None,
                    help="the build whose jitcache_bench measures misses "
                         "(default: B)")
    ap.add_argument("--out")
    args = ap.parse_args()
    builds = [tuple(x.split("=", 1)) for x in (args.a, args.b)]
    miss_bench = dict(builds)[args.miss_from] if args.miss_from else builds[1][1]
    work = tempfile.mkdtemp(prefix="engine-compare.")
    daemons = {name: Daemon(bindir, work, name) for name, bindir in builds}
    results = {name: {"hit": {}, "hits_per_s": {}, "miss": []}
               for name, _ in builds}
    try:
        for name, bindir in builds:  # warm: each kernel compiled once
            bench(bindir, "hit-latency", daemons[name].socket, "1")
            bench(bindir, "hit-loop", daemons[name].socket, "0.2")
        for r in range(args.rounds):
            for name, bindir in builds:
                d = daemons[name]
                lat = bench(bindir, "hit-latency", d.socket, str(args.iters))
                for kernel, v in lat.items():
                    results[name]["hit"].setdefault(kernel, []).append(
                        v["hit"])
                for clients in (1, 4, 16):
                    hps, errors = hits_per_second(bindir, d.socket, clients, 3)
                    results[name]["hits_per_s"].setdefault(
                        str(clients), []).append({"hits_per_s": hps,
                                                  "errors": errors})
                miss = bench(miss_bench, "miss-latency", d.socket,
                             str(args.misses), f"{r}{name}")
                results[name]["miss"].append(miss)
    finally:
        for d in daemons.values():
            d.stop()
    summary = {}
    for name, res in results.items():
        s = {"hit_p50_us": {}, "hit_p99_us": {}, "hits_per_s": {},
             "miss_p50_ms": None, "compile_p50_ms": None}
        for kernel, runs in res["hit"].items():
            s["hit_p50_us"][kernel] = [round(x["p50_us"], 1) for x in runs]
            s["hit_p99_us"][kernel] = [round(x["p99_us"], 1) for x in runs]
        for clients, runs in res["hits_per_s"].items():
            s["hits_per_s"][clients] = [round(x["hits_per_s"]) for x in runs]
        s["miss_p50_ms"] = [round(m["miss"]["p50_us"] / 1e3, 2)
                            for m in res["miss"]]
        s["compile_p50_ms"] = [round(m["compile"]["p50_us"] / 1e3, 2)
                               for m in res["miss"]]
        s["miss_minus_compile_p50_ms"] = round(statistics.median(
            (m["miss"]["p50_us"] - m["compile"]["p50_us"]) / 1e3
            for m in res["miss"]), 2)
        summary[name] = s
    text = json.dumps(summary, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
