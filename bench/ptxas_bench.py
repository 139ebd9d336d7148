#!/usr/bin/env python3
"""The real ptxas against jitcache-ptxas, side by side in one run against
one daemon, per kernel. For each PTX file, each run with file names of its
own (as Triton's temporary files are):
  real      the real ptxas (the toolkit's, or --real);
  hit       jitcache-ptxas on PTX the daemon has run before;
  real new  the real ptxas on PTX it has never seen (a comment line of
            the run's own appended), and
  miss      jitcache-ptxas on that PTX: what the front end and the daemon
            add to a miss is miss - real new.
Kernels: three CUDA kernels compiled to PTX through the daemon, or the
PTX files of --ptx DIR (Triton's, copied out of its cache).

  python3 bench/ptxas_bench.py [--build build | --bundle DIR] [--runs 5]
      [--ptx DIR] [--args "-lineinfo -v --gpu-name=sm_90a"]
      [--write-results NAME] [--json FILE]
"""
import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import Daemon  # noqa: E402
from nvrtc_library_bench import BundleDaemon  # noqa: E402
from results_section import report  # noqa: E402

KERNELS = {
    "axpy": r"""
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}""",
    "tiled_matmul": r"""
#define T 32
extern "C" __global__ void matmul(const float* a, const float* b, float* c,
                                  int n) {
  __shared__ float as[T][T], bs[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float acc = 0;
  for (int k = 0; k < n; k += T) {
    as[threadIdx.y][threadIdx.x] = a[row * n + k + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(k + threadIdx.y) * n + col];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < T; ++j) acc += as[threadIdx.y][j] * bs[j][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = acc;
}""",
    "unrolled_fir": r"""
extern "C" __global__ void fir(const float* x, const float* taps, float* y,
                               int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc[16] = {};
#pragma unroll
  for (int t = 0; t < 256; ++t) {
#pragma unroll
    for (int k = 0; k < 16; ++k) acc[k] += taps[t * 16 + k] * x[i + t + k];
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < 16; ++k) s += acc[k] * acc[(k * 5) % 16];
  y[i] = s;
}""",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--bundle", help="a gpu-bundle folder instead of --build")
    ap.add_argument("--real", default=os.path.join(
        os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin/ptxas"))
    ap.add_argument("--ptx", help="a directory of PTX files to run instead")
    ap.add_argument("--args", default="-lineinfo -v --gpu-name=sm_90a",
                    help="ptxas's options (Triton's by default)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--limit", type=int, default=0,
                    help="of --ptx's files, this many, spread over sizes")
    ap.add_argument("--write-results", metavar="NAME")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="jcptxasbench.")
    real = os.path.realpath(args.real)
    env = dict(os.environ, JITCACHE_REAL_PTXAS=real)
    if args.bundle:
        build = os.path.abspath(args.bundle)
        daemon = BundleDaemon(build, work, "d")
        front = os.path.join(build, "bin/jitcache-ptxas")
        env["LD_LIBRARY_PATH"] = os.path.join(build, "lib")
    else:
        build = os.path.abspath(args.build)
        daemon = Daemon(build, work, "d")
        front = os.path.join(build, "client/jitcache-ptxas")
    daemon.extra = ["--ptxas=" + real]
    env["JITCACHE_SOCKET"] = daemon.socket
    # Both called "ptxas": it names itself after argv[0].
    for side, target in (("real", real), ("ours", front)):
        os.makedirs(os.path.join(work, side))
        os.symlink(target, os.path.join(work, side, "ptxas"))
    options = args.args.split()
    daemon.start()
    try:
        kernels = {}
        if args.ptx:
            files = sorted((os.path.getsize(os.path.join(args.ptx, n)), n)
                           for n in os.listdir(args.ptx) if n.endswith(".ptx"))
            if args.limit and len(files) > args.limit:
                step = len(files) / args.limit
                files = [files[int(i * step)] for i in range(args.limit)]
            for _, name in files:
                with open(os.path.join(args.ptx, name)) as f:
                    kernels[name[:-4][:40]] = f.read()
        else:
            for name, source in KERNELS.items():
                cu = os.path.join(work, name + ".cu")
                with open(cu, "w") as f:
                    f.write(source)
                out = os.path.join(work, name + ".ptx")
                daemon.cli("compile", cu, "--arch", "compute_90", "--target",
                           "ptx", "-lineinfo", "-o", out).check_returncode()
                with open(out) as f:
                    kernels[name] = f.read()
        counter = [0]

        def run(side, ptx):
            counter[0] += 1
            stem = os.path.join(work, f"tmp{counter[0]:06d}")
            with open(stem + ".ptx", "w") as f:
                f.write(ptx)
            t0 = time.perf_counter()
            r = subprocess.run(
                [os.path.join(work, side, "ptxas"), *options, stem + ".ptx",
                 "-o", stem + ".ptx.o"], env=env, capture_output=True)
            ms = (time.perf_counter() - t0) * 1e3
            if r.returncode != 0:
                raise RuntimeError(f"{side}: {r.stderr.decode()[-2000:]}")
            with open(stem + ".ptx.o", "rb") as f:
                return ms, f.read()

        rows = {}
        for name, ptx in kernels.items():
            _, first = run("ours", ptx)  # the daemon has it from now on
            row = {"real": [], "hit": [], "real_new": [], "miss": []}
            for i in range(args.runs):
                ms, cubin = run("real", ptx)
                row["real"].append(ms)
                ms, served = run("ours", ptx)
                row["hit"].append(ms)
                if served != cubin:
                    raise RuntimeError(f"{name}: the hit's cubin differs")
                fresh = ptx + f"\n// run {i} of {name}\n"
                row["real_new"].append(run("real", fresh)[0])
                row["miss"].append(run("ours", fresh)[0])
            rows[name] = {k: statistics.median(v) for k, v in row.items()}
        stats = daemon.stats()
    finally:
        daemon.proc.terminate()
        daemon.proc.wait()

    total = {k: sum(r[k] for r in rows.values())
             for k in ("real", "hit", "real_new", "miss")}
    added = statistics.median(r["miss"] - r["real_new"] for r in rows.values())
    lines = [
        f"Command: `python3 bench/ptxas_bench.py {' '.join(sys.argv[1:])}`, "
        f"{args.runs} runs of each side per kernel, alternating; ptxas "
        f"options `{args.args}`; real ptxas {real}; machine: "
        f"{platform.node()}, {os.cpu_count()} cores; {datetime.date.today()}.",
        "",
        "Per kernel, the ptxas process from start to exit, medians; the "
        "hit's cubin is checked equal to the real one's:",
        "",
        "| kernel | real ptxas | jitcache-ptxas, hit | real, new PTX | "
        "jitcache-ptxas, miss | added to a miss |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['real']:.1f} ms | {r['hit']:.1f} ms | "
            f"{r['real_new']:.1f} ms | {r['miss']:.1f} ms | "
            f"{r['miss'] - r['real_new']:.1f} ms |")
    lines += [
        f"| **all {len(rows)}** | {total['real']:.0f} ms | "
        f"{total['hit']:.0f} ms | {total['real_new']:.0f} ms | "
        f"{total['miss']:.0f} ms | median {added:.1f} ms (goal: at most "
        f"5 ms) |",
        "",
        f"Daemon: {stats.get('ptxas_requests', 0):.0f} ptxas requests, "
        f"{stats.get('hits', 0):.0f} hits, {stats.get('compiles', 0):.0f} "
        f"runs of ptxas (the kernels' own compiles included).",
    ]
    report(lines, args, {"rows": rows, "total": total},
           script="bench/ptxas_bench.py")


if __name__ == "__main__":
    main()
