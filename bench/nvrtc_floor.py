#!/usr/bin/env python3
"""NVRTC's C API hit at its floor (issue 36): libraries side by side.

For each NVRTC library given (--lib NAME=PATH: this tree's libnvrtc.so.13,
an older build's, ...), one daemon on a fresh store answers, and
jitcache_nvrtc_floor (which dlopens the library and links nothing of
jitcache's) measures, alternating the sides, each measured --rounds times:

  * a warm process's hit of the whole call sequence (create, add name
    expressions, compile, CUBIN size, CUBIN, lowered names, destroy), per
    step and in total, for the small, CUB and large (1.3 MiB, 54 names)
    kernels and the big table (1.3 MiB from a two-line source);
  * the floor beside it: a Unix-socket round trip to another process
    carrying the same request and answer sizes, read into a buffer;
  * a fresh process: dlopen of the library, then its first hit;
  * hits per second from 1 and --procs processes (small kernel);
  * --misses misses of the small kernel (each a source no compile has
    seen), the whole call sequence's time.

  python3 bench/nvrtc_floor.py --bindir build --lib after=PATH \
      [--lib before=PATH] [--iters 2000] [--procs 16] [--seconds 3]
Binaries come from --bindir (jitcached, jitcache, jitcache_bench,
jitcache_nvrtc_floor: a build's folders are searched, or a bundle's bin/).
Prints one JSON object.
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


def find(bindir, name):
    for sub in ("", "bin", "server", "client", "bench"):
        path = os.path.join(bindir, sub, name)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(name)


def run_json(argv, env):
    r = subprocess.run(argv, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bindir", required=True)
    ap.add_argument("--lib", action="append", required=True)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--firsts", type=int, default=10)
    ap.add_argument("--procs", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--misses", type=int, default=10)
    ap.add_argument("--arch", default=os.environ.get("JC_ARCH", "sm_90"))
    ap.add_argument("--cuda", default=os.environ.get("CUDA_HOME",
                                                     "/usr/local/cuda"))
    args = ap.parse_args()
    sides = dict(s.split("=", 1) for s in args.lib)
    floor = find(args.bindir, "jitcache_nvrtc_floor")
    work = tempfile.mkdtemp(prefix="jc-nvrtc-floor-")
    socket = os.path.join(work, "jc.sock")
    daemon = subprocess.Popen(
        [find(args.bindir, "jitcached"), "--socket=" + socket,
         "--store=" + os.path.join(work, "store")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cli = find(args.bindir, "jitcache")
    deadline = time.monotonic() + 60
    while subprocess.run([cli, "--socket", socket, "ping"],
                         capture_output=True).returncode != 0:
        if daemon.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("jitcached did not start")
        time.sleep(0.05)
    options = ["-arch=" + args.arch, "-I" + args.cuda + "/include",
               "-I" + args.cuda + "/include/cccl"]
    cases = {}
    for name in ("small", "cub", "large", "big-table"):
        path = os.path.join(work, name + ".case")
        with open(path, "w") as f:
            f.write(subprocess.run([find(args.bindir, "jitcache_bench"),
                                    "case", name], capture_output=True,
                                   text=True, check=True).stdout)
        cases[name] = path
    # Every case compiled once (and its place proven) before anything is
    # timed: a daemon still compiling in the background would be measured.
    env0 = dict(os.environ, JITCACHE_SOCKET=socket,
                JITCACHE_SCAN_CACHE=os.path.join(work, "prime"))
    for path in cases.values():
        run_json([floor, "api", list(sides.values())[-1], path, "1",
                  *options], env0)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        stats = json.loads(subprocess.run(
            [cli, "--socket", socket, "stats", "--json"], capture_output=True,
            text=True, check=True).stdout)
        if all(stats.get(k, 0) == 0 for k in
               ("running", "queued", "place_proofs_running")):
            break
        time.sleep(0.2)
    out = {"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(),
           "options": options, "sides": {}}
    try:
        for rnd in range(args.rounds):
            for side, lib in sides.items():
                # The library's own folder first: what it links (an older
                # build's libjitcache.so.0) is found beside it.
                env = dict(os.environ, JITCACHE_SOCKET=socket,
                           JITCACHE_SCAN_CACHE=os.path.join(work, side),
                           LD_LIBRARY_PATH=os.path.dirname(lib) + ":" +
                           os.environ.get("LD_LIBRARY_PATH", ""))
                got = out["sides"].setdefault(side, {"rounds": []})
                r = {}
                for name, path in cases.items():
                    log(f"round {rnd} {side} {name}")
                    api = run_json([floor, "api", lib, path,
                                    str(args.iters), *options], env)
                    api["floor"] = run_json(
                        [floor, "floor", str(api["source_bytes"] + 300),
                         str(api["object_bytes"] + 200), str(args.iters)],
                        env)["floor"]
                    r[name] = api
                firsts = [run_json([floor, "first", lib, cases["small"],
                                    *options], env)
                          for _ in range(args.firsts)]
                r["first"] = {k: statistics.median(f[k] for f in firsts)
                              for k in firsts[0]}
                for procs in (1, args.procs):
                    children = [subprocess.Popen(
                        [floor, "loop", lib, cases["small"],
                         str(args.seconds), *options], env=env,
                        stdout=subprocess.PIPE, text=True)
                        for _ in range(procs)]
                    hits = sum(json.loads(c.communicate()[0])["hits"]
                               for c in children)
                    r[f"hits_per_s_{procs}"] = round(hits / args.seconds)
                if args.misses > 0:
                    r["miss"] = run_json(
                        [floor, "miss", lib, cases["small"], str(args.misses),
                         f"{side}-{rnd}-{time.time_ns()}", *options],
                        env)["miss"]
                got["rounds"].append(r)
    finally:
        daemon.terminate()
        daemon.wait()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
