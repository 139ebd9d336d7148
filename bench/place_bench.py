#!/usr/bin/env python3
"""What keying the place only where the answer depends on it costs and
gives, side by side in one run:

- a miss with the place proof (the compile run a second time elsewhere,
  beside the first; the default) against a miss without it
  (--place_proofs=false, every answer kept for its own place): the client's
  latency and the CPU the daemon and its compile workers spent, for a small
  kernel and the CUB kernel, a new key each time;
- a hit in a new process from the working directory that compiled it
  against one from a new working directory each time, through
  `jitcache compile` and through libnvrtc.so.13 (NVRTC's C API by ctypes).

  python3 bench/place_bench.py [--build build | --bundle DIR] [--runs N]
      [--write-results NAME]

--bundle: a gpu-bundle folder (bin/ with jitcached, jitcache-worker,
jitcache, jitcache-full, jitcache_bench; shim/ with libnvrtc.so.13; lib/),
for the GPU machine's host.
"""
import argparse
import datetime
import os
import platform
import re
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
from nvrtc_library_bench import BundleDaemon, child  # noqa: E402

SMALL = ('extern "C" __global__ void saxpy(float a, float* x, float* y, '
         'int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
         '  if (i < n) y[i] = a * x[i] + y[i];\n}\n')


def tree_cpu(pid):
    """CPU seconds of `pid` and of its children (the compile workers, whose
    reaped per-compile children count in their cutime)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry) == pid or int(fields[1]) == pid:
            total += sum(int(x) for x in fields[11:15])
    return total / tick


class Layout:
    """Where the binaries are: a build folder or a gpu-bundle folder."""

    def __init__(self, build=None, bundle=None):
        self.bundle = bundle
        self.build = build

    def path(self, built, bundled):
        if self.bundle:
            return os.path.join(self.bundle, bundled)
        return os.path.join(self.build, built)

    def daemon(self, workdir, name, extra):
        if self.bundle:
            d = BundleDaemon(self.bundle, workdir, name)
            d.extra = list(extra)
            return d
        return Daemon(self.build, workdir, name, extra)


LAYOUT = Layout()


def cli_compile(daemon, cwd, source_name, extra=()):
    t0 = time.monotonic()
    r = subprocess.run([LAYOUT.path("client/jitcache", "bin/jitcache"),
                        "--socket", daemon.socket, "compile", source_name,
                        "--arch", "sm_90", "--target", "cubin", *extra],
                       cwd=cwd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        raise RuntimeError(f"compile failed: {r.stdout}{r.stderr}")
    first = r.stdout.splitlines()[0]
    return first.split()[0], wall, first


def miss(daemon, work, kernel, seed, extra=()):
    """One miss (a new -D): the client's wall time, the daemon's CPU, and
    how long the request waited beyond its own compile (the CLI's "total"
    less the compile time it reports: what the proof adds to the wait,
    without the compile's own noise)."""
    before = tree_cpu(daemon.proc.pid)
    served, wall, line = cli_compile(daemon, work, "k.cu",
                                     [f"-DJC_SEED={seed}", *extra])
    cpu = tree_cpu(daemon.proc.pid) - before
    if served != "MISS":
        raise RuntimeError(f"{kernel}: expected a miss: {line}")
    m = re.search(r"compile ([0-9.]+) ms total ([0-9.]+) ms", line)
    beyond = (float(m.group(2)) - float(m.group(1))) / 1e3 if m else 0.0
    return wall, cpu, beyond


def hits_from(daemon, root, source, runs, new_dirs):
    """A hit per new process: from one directory, or each from a new one
    (the same layout: k.cu beside nothing else)."""
    walls = []
    first = os.path.join(root, "first")
    os.makedirs(first, exist_ok=True)
    with open(os.path.join(first, "k.cu"), "w") as f:
        f.write(source)
    cli_compile(daemon, first, "k.cu")  # the miss (or an earlier run's hit)
    # A file written in the last two seconds is not trusted by its stamp
    # (the front end's memo waits): the steady state is measured.
    time.sleep(2.5)
    for i in range(runs):
        cwd = first
        if new_dirs:
            cwd = os.path.join(root, f"new{i}")
            os.makedirs(cwd)
            shutil.copy(os.path.join(first, "k.cu"), cwd)
            os.utime(os.path.join(cwd, "k.cu"),
                     (time.time() - 10, time.time() - 10))
        served, wall, line = cli_compile(daemon, cwd, "k.cu")
        if served != "HIT":
            raise RuntimeError(f"expected a hit: {line}")
        walls.append(wall)
    return walls


def library_hits(daemon, root, runs, new_dirs):
    """The first compile of a new process through libnvrtc.so.13 (ctypes),
    from the directory that compiled it or from a new one each time."""
    lib = LAYOUT.path("client/nvrtc/libnvrtc.so.13", "shim/libnvrtc.so.13")
    include = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"),
                           "include/cccl")
    env = dict(os.environ, JITCACHE_SOCKET=daemon.socket,
               JITCACHE_SCAN_CACHE=os.path.join(root, "scans"))
    first = os.path.join(root, "lib-first")
    os.makedirs(first, exist_ok=True)
    out = []
    cwd0 = os.getcwd()
    try:
        os.chdir(first)
        child("ctypes", 1, 7, include, lib, True, env)  # the miss
        for i in range(runs):
            if new_dirs:
                d = os.path.join(root, f"lib-new{i}")
                os.makedirs(d)
                os.chdir(d)
            out.append(child("ctypes", 1, 7, include, lib, True, env)[0])
    finally:
        os.chdir(cwd0)
    return out


def ms(values):
    return statistics.median(values) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--bundle")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--write-results", metavar="NAME")
    args = ap.parse_args()
    global LAYOUT
    if args.bundle:
        LAYOUT = Layout(bundle=os.path.abspath(args.bundle))
        os.environ["LD_LIBRARY_PATH"] = os.path.join(LAYOUT.bundle, "lib")
    else:
        LAYOUT = Layout(build=os.path.abspath(args.build))
    cub = subprocess.run([LAYOUT.path("bench/jitcache_bench",
                                      "bin/jitcache_bench"),
                          "source", "cub"], capture_output=True,
                         text=True).stdout
    work = tempfile.mkdtemp(prefix="jcplace.")
    daemons = {
        "proof": LAYOUT.daemon(work, "proof", ["--workers=2"]),
        "no proof": LAYOUT.daemon(work, "plain",
                                  ["--workers=2", "--place_proofs=false"]),
    }
    for d in daemons.values():
        d.start()
    lines = []
    try:
        rows, cpu_rows = [], []
        for kernel, source, runs in (("small", SMALL, args.runs),
                                     ("cub", cub, args.runs)):
            # The proof daemon twice: answered when the caller's own
            # compile ends (the default), and waiting for the proof
            # (--wait-for-proof, as every miss did before).
            modes = (("no proof", daemons["no proof"], ()),
                     ("proof", daemons["proof"], ()),
                     ("proof, waited", daemons["proof"],
                      ("--wait-for-proof",)))
            result = {name: ([], [], []) for name, _, _ in modes}
            for name, _, _ in modes:
                w = os.path.join(work, f"m-{name}-{kernel}")
                os.makedirs(w, exist_ok=True)
                with open(os.path.join(w, "k.cu"), "w") as f:
                    f.write(source)
            # CPU per daemon over all its misses, once its proofs have ended
            # (a miss answered before its proof leaves it running).
            cpu_before = {name: tree_cpu(d.proc.pid)
                          for name, d in daemons.items()}
            # Alternating miss by miss, so that a slow moment of the machine
            # falls on each.
            for i in range(runs):
                for k, (name, d, extra) in enumerate(modes):
                    got = miss(d, os.path.join(work, f"m-{name}-{kernel}"),
                               kernel, 1000 * k + i, extra)
                    for column, value in zip(result[name], got):
                        column.append(value)
            while daemons["proof"].stats().get("place_proofs_running", 0):
                time.sleep(0.05)
            per_miss = {name: (tree_cpu(d.proc.pid) - cpu_before[name]) /
                   (runs * (2 if name == "proof" else 1))
                   for name, d in daemons.items()}
            n = result["no proof"]
            for name in ("proof", "proof, waited"):
                p = result[name]
                rows.append(
                    f"| {kernel} | {name} | {ms(n[0]):.1f} ms | "
                    f"{ms(p[0]):.1f} ms | "
                    f"{(ms(p[0]) / ms(n[0]) - 1) * 100:+.1f}% | "
                    f"{ms(n[2]):.1f} ms | {ms(p[2]):.1f} ms |")
            cpu_rows.append(
                f"| {kernel} | {per_miss['no proof'] * 1e3:.0f} ms | "
                f"{per_miss['proof'] * 1e3:.0f} ms | "
                f"{per_miss['proof'] / per_miss['no proof']:.2f}x |")
        d = daemons["proof"]
        same = hits_from(d, os.path.join(work, "h-same"), cub, args.runs, False)
        new = hits_from(d, os.path.join(work, "h-new"), cub, args.runs, True)
        lib_same = library_hits(d, os.path.join(work, "l-same"), args.runs,
                                False)
        lib_new = library_hits(d, os.path.join(work, "l-new"), args.runs,
                               True)
        stats = d.stats()
    finally:
        for d in daemons.values():
            d.stop()
        shutil.rmtree(work, ignore_errors=True)

    cpu = platform.processor() or platform.machine()
    lines += [
        "## Sharing answers across places: the cost of a miss, a hit from "
        "a new directory",
        "",
        f"Command: `python3 bench/place_bench.py --runs {args.runs}"
        f"{' --bundle ' + args.bundle if args.bundle else ''}`  ",
        f"Machine: {os.cpu_count()} cores, {cpu}, {platform.platform()}  ",
        f"Date: {datetime.date.today().isoformat()}",
        "",
        "A miss through `jitcache compile` (a new key each time), with the "
        "place proof (the compile run a second time elsewhere, beside the "
        "first) and without it (`--place_proofs=false`), against two "
        "daemons in one run, alternating miss by miss; with the proof, "
        "answered when the caller's own compile ends (`proof`, the default) "
        "and answered once the proof has ended (`proof, waited`: "
        "`--wait-for-proof`, what every miss did before). Wall: the client "
        "process. Beyond the compile: the request's time less the time its "
        "own compile took, as the CLI reports both (what the proof adds to "
        "the wait). Medians.",
        "",
        "| kernel | mode | miss, no proof | miss, with it | latency | beyond "
        "the compile, no proof | beyond the compile, with it |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "CPU per miss: the daemon's and its compile workers' over all the "
        "misses of each daemon, once every proof had ended.",
        "",
        "| kernel | CPU, no proof | CPU, proof | ratio |",
        "|---|---|---|---|",
        *cpu_rows,
        "",
        "A hit in a new process (median wall time of the process), from the "
        "directory that compiled it or from a new directory each time (the "
        "same file, the CUB kernel, written more than two seconds before):",
        "",
        "| front end | same directory | new directory each time |",
        "|---|---|---|",
        f"| `jitcache compile` | {ms(same):.1f} ms | {ms(new):.1f} ms |",
        f"| libnvrtc.so.13, first compile of a process | {ms(lib_same):.2f} ms"
        f" | {ms(lib_new):.2f} ms |",
        "",
        f"Daemon counters after the hits: place_proofs "
        f"{int(stats.get('place_proofs', 0))}, place_shared "
        f"{int(stats.get('place_shared', 0))}, place_kept "
        f"{int(stats.get('place_kept', 0))}, place_answered_before_proof "
        f"{int(stats.get('place_answered_before_proof', 0))} (misses "
        "answered when their own compile ended, before the proof).",
    ]
    if args.write_results:
        write_section(args.write_results, lines, "bench/place_bench.py")
    else:
        print("\n".join(lines))


if __name__ == "__main__":
    main()
