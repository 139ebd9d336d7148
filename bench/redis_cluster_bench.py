#!/usr/bin/env python3
"""The team tier at cluster scale, measured in one run on one machine:

- the tier's share of a remote hit (bench/remote_bench.cc: GET, frame and
  MAC check, parse, SHA-256 of the object) through one redis-server on a
  Unix socket (the tier as it was), over loopback TCP, over TLS, through a
  Redis Cluster (3 masters, 3 replicas), through it reading from replicas
  (--remote_replica_reads) and through that cluster over TLS;
- a cold start: N daemons on the cluster precompile the same K kernels at
  once (one process per node): compiles in the whole cluster (goal: exactly
  K), wall time against one node alone without the tier, and the bytes each
  Redis node sent; then again, other kernels, with replica reads;
- what an entry costs Redis (used_memory per key against its value).

Writes bench/redis_cluster_<label>.json and, with --write, a section into
bench/RESULTS.md between <!-- redis-cluster-bench --> markers.

  python3 bench/redis_cluster_bench.py [--build build] [--nodes 8]
      [--kernels 24] [--rounds 2] [--label local] [--write | --write-only]
"""
import argparse
import json
import os
import platform
import random
import socket
import subprocess
import tempfile
import time

from results_section import write_section
from run import Daemon

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def kernel(n):
    return (f'extern "C" __global__ void k{n}(float* x) {{\n'
            f'  float a = x[threadIdx.x];\n#pragma unroll\n'
            f'  for (int i = 0; i < 300; ++i) a = a * 1.0001f + __sinf(a) * 0.5f + {n};\n'
            f'  x[threadIdx.x] = a;\n}}\n')


def first_ephemeral_port():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(with_bus=False):
    # Below the ephemeral range, where no outgoing connection takes the
    # port (or the cluster bus port, port + 10000) before redis-server
    # binds it.
    end = first_ephemeral_port() - (10000 if with_bus else 0)
    for _ in range(200):
        port = random.randint(1024, end - 1)
        ok = True
        for p in ([port, port + 10000] if with_bus else [port]):
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                ok = False
            finally:
                s.close()
        if ok:
            return port
    raise RuntimeError("no free port")


def make_ca(work):
    def ossl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    ca, key = os.path.join(work, "ca.crt"), os.path.join(work, "ca.key")
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
         "-out", ca, "-days", "2", "-subj", "/CN=bench CA")
    ext = os.path.join(work, "ext.cnf")
    with open(ext, "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    skey, csr, crt = (os.path.join(work, n) for n in ("s.key", "s.csr", "s.crt"))
    ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", skey, "-out", csr,
         "-subj", "/CN=localhost")
    ossl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", key,
         "-CAcreateserial", "-out", crt, "-days", "2", "-extfile", ext)
    return {"ca": ca, "cert": crt, "key": skey}


def tls_args(tls):
    return ["--tls-cert-file", tls["cert"], "--tls-key-file", tls["key"],
            "--tls-ca-cert-file", tls["ca"], "--tls-auth-clients", "no"]


def cli(port, *args, tls=None):
    cmd = ["redis-cli", "-p", str(port)]
    if tls:
        cmd += ["--tls", "--cacert", tls["ca"]]
    try:
        return subprocess.run(cmd + list(args), capture_output=True, text=True,
                              timeout=10).stdout
    except subprocess.TimeoutExpired:  # something on the port that never answers
        return ""


class Servers:
    """redis-server processes, stopped together."""

    def __init__(self):
        self.procs = []

    def start(self, args, log):
        proc = subprocess.Popen(["redis-server", *args], stdout=open(log, "w"),
                                stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()


def single(work, servers, tls=None, unix=False):
    port = free_port()
    name = f"single-{port}"
    args = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    if unix:
        sock = os.path.join(work, name + ".sock")
        args = ["--port", "0", "--unixsocket", sock] + args
        url = "unix://" + sock
    elif tls:
        args = ["--port", "0", "--tls-port", str(port), *tls_args(tls)] + args
        url = f"rediss://127.0.0.1:{port}"
    else:
        args = ["--port", str(port)] + args
        url = f"redis://127.0.0.1:{port}"
    servers.start(args, os.path.join(work, name + ".log"))
    for _ in range(300):
        if (os.path.exists(sock) if unix else
                "PONG" in cli(port, "PING", tls=tls)):
            return url
        time.sleep(0.02)
    raise RuntimeError("redis-server did not start")


def started_node(work, servers, tls):
    """A cluster node on a free port, up and answering as itself: each node
    is started before the next port is chosen, and one whose port another
    process took first (it exits) is started again on another."""
    for _ in range(5):
        port = free_port(with_bus=True)
        d = os.path.join(work, f"node{port}")
        os.makedirs(d, exist_ok=True)
        args = ["--bind", "127.0.0.1", "--cluster-enabled", "yes",
                "--cluster-config-file", os.path.join(d, "nodes.conf"),
                "--cluster-node-timeout", "1000", "--dir", d, "--save", "",
                "--appendonly", "no"]
        if tls:
            args = ["--port", "0", "--tls-port", str(port), *tls_args(tls),
                    "--tls-cluster", "yes", "--tls-replication", "yes"] + args
        else:
            args = ["--port", str(port)] + args
        proc = servers.start(args, os.path.join(d, "log"))
        for _ in range(300):
            if proc.poll() is not None:
                break
            if f"process_id:{proc.pid}" in cli(port, "INFO", "server", tls=tls):
                return port
            time.sleep(0.02)
        if proc.poll() is None:
            raise RuntimeError(f"redis-server on port {port} did not answer")
    raise RuntimeError("no cluster node could be started")


def cluster(work, servers, tls=None):
    ports = [started_node(work, servers, tls) for _ in range(6)]
    create = ["redis-cli"] + (["--tls", "--cacert", tls["ca"]] if tls else [])
    subprocess.run(create + ["--cluster", "create",
                             *[f"127.0.0.1:{p}" for p in ports],
                             "--cluster-replicas", "1", "--cluster-yes"],
                   check=True, capture_output=True)
    for _ in range(600):
        if all("cluster_state:ok" in cli(p, "CLUSTER", "INFO", tls=tls)
               for p in ports):
            break
        time.sleep(0.1)
    scheme = "redis-cluster+tls" if tls else "redis-cluster"
    return f"{scheme}://127.0.0.1:{ports[0]}", ports


def remote_hits(build, url, iterations, tls=None, replica_reads=False):
    cmd = [os.path.join(build, "bench/jitcache_remote_bench"), url,
           str(iterations)]
    if tls:
        cmd.append(tls["ca"])
    env = dict(os.environ,
               JITCACHE_BENCH_REPLICA_READS="1" if replica_reads else "0")
    return json.loads(subprocess.run(cmd, capture_output=True, text=True,
                                     env=env, check=True).stdout)


def sent_bytes(ports):
    out = {}
    for p in ports:
        for line in cli(p, "INFO", "stats").splitlines():
            if line.startswith("total_net_output_bytes:"):
                out[p] = int(line.split(":")[1])
    return out


def roles(ports):
    out = {}
    for p in ports:
        for line in cli(p, "INFO", "replication").splitlines():
            if line.startswith("role:"):
                out[p] = line.split(":")[1].strip()
    return out


def cold_start(build, work, nodes, kernels, url, seed, more_flags=()):
    """`nodes` daemons (on the tier at `url`, or none) precompile the same
    kernels at once; wall time and compiles."""
    keys = os.path.join(work, "team.keys")
    if not os.path.exists(keys):
        with open(os.open(keys, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(os.urandom(32).hex() + "\n")
    flags = ["--remote=" + url, "--remote_key_file=" + keys,
             *more_flags] if url else []
    run = os.path.join(work, f"run{seed}")
    os.makedirs(run)
    daemons = [Daemon(build, run, f"n{n}", extra=["--store=:memory:", *flags])
               for n in range(nodes)]
    for d in daemons:
        d.start()
    lines = []
    for k in range(kernels):
        path = os.path.join(run, f"k{k}.cu")
        with open(path, "w") as f:
            f.write(kernel(seed * 1000 + k))
        lines.append(f"{path} --arch sm_90 --target cubin")
    manifest = os.path.join(run, "manifest")
    with open(manifest, "w") as f:
        f.write("\n".join(lines) + "\n")
    env = dict(os.environ, JITCACHE_NO_FALLBACK="1")
    full = os.path.join(build, "client/jitcache-full")
    start = time.monotonic()
    procs = [subprocess.Popen([full, "--socket", d.socket, "precompile",
                               manifest], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for d in daemons]
    failed = sum(p.wait() != 0 for p in procs)
    wall = time.monotonic() - start
    stats = [d.stats() for d in daemons]
    for d in daemons:
        d.stop()
    return {"wall_s": wall, "failed": failed,
            "compiles": int(sum(s["compiles"] for s in stats)),
            "remote_hits": int(sum(s.get("remote_hits", 0) for s in stats)),
            "remote_errors": int(sum(s.get("remote_errors", 0) for s in stats)),
            "replica_hits": int(sum(s.get("remote_replica_hits", 0)
                                    for s in stats)),
            "replica_misses": int(sum(s.get("remote_replica_misses", 0)
                                      for s in stats))}


def entry_memory(ports):
    """Redis memory per key on the cluster's masters, and the keys."""
    used, keys = 0, 0
    for p, role in roles(ports).items():
        if role != "master":
            continue
        for line in cli(p, "INFO", "memory").splitlines():
            if line.startswith("used_memory:"):
                used += int(line.split(":")[1])
        keys += int(cli(p, "DBSIZE").strip() or 0)
    return used, keys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--kernels", type=int, default=24)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--label", default="local")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--write-only", action="store_true",
                    help="only write RESULTS.md from the runs kept in bench/")
    args = ap.parse_args()
    if args.write_only:
        write_results()
        return
    out = {"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(),
           "machine": platform.platform(), "nodes": args.nodes,
           "kernels": args.kernels}
    with tempfile.TemporaryDirectory(dir="/tmp") as work:
        tls = make_ca(work)
        servers = Servers()
        try:
            plain_cluster = cluster(work, servers)[0]
            tiers = [
                ("one server, Unix socket", single(work, servers, unix=True),
                 None, False),
                ("one server, TCP", single(work, servers), None, False),
                ("one server, TLS", single(work, servers, tls=tls), tls, False),
                ("cluster, TCP", plain_cluster, None, False),
                ("cluster, TCP, replica reads", plain_cluster, None, True),
                ("cluster, TLS", cluster(work, servers, tls=tls)[0], tls,
                 False)]
            hits = {name: [] for name, _, _, _ in tiers}
            # Rounds, the tiers alternating within each: the spread between
            # rounds is the machine's.
            for _ in range(args.rounds):
                for name, url, ca, replica_reads in tiers:
                    hits[name].append(remote_hits(
                        args.build, url, args.iterations, ca, replica_reads))
                    print(name, hits[name][-1], flush=True)
            out["remote_hit"] = hits
            url, ports = cluster(work, servers)
            base = sent_bytes(ports)
            used_before, _ = entry_memory(ports)
            alone = cold_start(args.build, work, 1, args.kernels, None, 1)
            print("one node alone", alone, flush=True)
            shared = cold_start(args.build, work, args.nodes, args.kernels,
                                url, 2)
            print(f"{args.nodes} nodes on the cluster", shared, flush=True)
            after = sent_bytes(ports)
            # The same again, other kernels, reads from the replicas first.
            replicas = cold_start(args.build, work, args.nodes, args.kernels,
                                  url, 3, ["--remote_replica_reads"])
            print(f"{args.nodes} nodes, replica reads", replicas, flush=True)
            after_replicas = sent_bytes(ports)
            role = roles(ports)
            out["cold_start"] = {"alone": alone, "cluster": shared,
                                 "replica_reads": replicas}
            out["sent_bytes"] = [{"port": p, "role": role.get(p, "?"),
                                  "bytes": after[p] - base.get(p, 0),
                                  "replica_reads_bytes":
                                      after_replicas[p] - after[p]}
                                 for p in ports]
            used, keys = entry_memory(ports)
            out["memory"] = {"used_bytes": used - used_before, "keys": keys}
            print(out["sent_bytes"], out["memory"], flush=True)
        finally:
            servers.stop()
    path = os.path.join(ROOT, "bench", f"redis_cluster_{args.label}.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    if args.write:
        write_results()


def write_results():
    """The RESULTS.md section from every run kept in bench/ (this
    machine's and the GPU host's)."""
    runs = []
    for label in ("h200", "local"):
        kept = os.path.join(ROOT, "bench", f"redis_cluster_{label}.json")
        if os.path.exists(kept):
            with open(kept) as f:
                runs.append((label, json.load(f)))
    lines = ["## The team tier at cluster scale (issue 37)", ""]
    for label, run in runs:
        lines += run_lines(label, run)
    write_section("redis-cluster-bench", lines)


def run_lines(label, out):
    lines = [
        f"### {label}: {out['cpus']} cores, {out['machine']}, {out['date']}",
        "",
        f"Command: `python3 bench/redis_cluster_bench.py --nodes {out['nodes']} "
        f"--kernels {out['kernels']} --rounds "
        f"{len(next(iter(out['remote_hit'].values())))} --label {label}` "
        f"(`bench/redis_cluster_"
        f"{label}.json`); every redis-server and node on this one machine, "
        "on loopback.",
        "",
        "The tier's share of a remote hit (GET, frame and MAC check, parse, "
        "SHA-256 of the object), p50 in ms, one figure per round (the tiers "
        "alternate within each round):",
        "",
        "| tier | 4 KiB | 150 KiB | 1.3 MiB |",
        "|---|---|---|---|",
    ]
    for name, rounds in out["remote_hit"].items():
        cells = [" / ".join(f"{r[s]['p50_us'] / 1000:.3f}" for r in rounds)
                 for s in ("4KiB", "150KiB", "1.3MiB")]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    a, c = out["cold_start"]["alone"], out["cold_start"]["cluster"]
    lines += [
        "",
        f"Cold start: {out['kernels']} kernels, one `precompile` process per "
        "node, all nodes at once:",
        "",
        "| | compiles | remote hits | tier errors | wall time | failed |",
        "|---|---|---|---|---|---|",
        f"| 1 node, no tier | {a['compiles']} | - | - | {a['wall_s']:.2f} s | "
        f"{a['failed']} |",
        f"| {out['nodes']} nodes on the cluster | {c['compiles']} | "
        f"{c['remote_hits']} | {c['remote_errors']} | {c['wall_s']:.2f} s | "
        f"{c['failed']} |",
    ]
    r = out["cold_start"].get("replica_reads")
    if r:
        lines.append(
            f"| {out['nodes']} nodes, `--remote_replica_reads` (other "
            f"kernels) | {r['compiles']} | {r['remote_hits']} (replicas: "
            f"{r['replica_hits']}; left to the master: {r['replica_misses']})"
            f" | {r['remote_errors']} | {r['wall_s']:.2f} s | {r['failed']} |")
    if r:
        lines += [
            "",
            "With replica reads the master confirms each value a replica "
            "gives (GETRANGE of its 32-byte MAC), so a hit from a replica "
            "makes one more round trip, which weighs most on small entries. "
            "\"Left to the master\" counts reads a replica gave no "
            "confirmed value for, nearly all of them the polls of nodes "
            "waiting for another node's compile: a replica's nil is never "
            "taken for a miss, so each such poll asks the master too."]
    lines += [
        "",
        "Bytes each Redis node sent during the cold start"
        + (", and during the one with replica reads:" if r else ":"),
        "",
        "| node | role | bytes sent | with replica reads |" if r else
        "| node | role | bytes sent |",
        "|---|---|---|---|" if r else "|---|---|---|",
    ]
    for n in out["sent_bytes"]:
        more = (f" {n['replica_reads_bytes']:,} |"
                if r and "replica_reads_bytes" in n else "")
        lines.append(f"| {n['port']} | {n['role']} | {n['bytes']:,} |{more}")
    m = out["memory"]
    if m["keys"]:
        lines += ["", f"Memory: the masters' used_memory grew by "
                  f"{m['used_bytes']:,} bytes for {m['keys']} entries "
                  f"({m['used_bytes'] // m['keys']:,} bytes each: the cubin, "
                  "its record and the signed frame, in Redis's allocator). "
                  "Replicas hold as much again."]
    lines.append("")
    return lines


if __name__ == "__main__":
    main()
