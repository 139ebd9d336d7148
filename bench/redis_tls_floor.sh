#!/usr/bin/env bash
# What TLS costs Redis itself, without jitcache: one redis-server with a
# plain TCP port and a TLS port (a CA and certificate made here), and
# redis-benchmark's GET from one connection on each, alternating, for
# values of 4 KiB, 150 KiB and 1.3 MiB: the floor that the tier's TLS
# remote hit (bench/redis_cluster_bench.py) is compared with.
#   bench/redis_tls_floor.sh [REQUESTS] [ROUNDS]
# (a tenth as many for 1.3 MiB). redis-server, redis-benchmark and openssl
# come from PATH. One JSON object
# per line: {"round": N, "bytes": B, "wire": "tcp"|"tls", "mean_us": ..}.
set -euo pipefail
requests=${1:-2000}
rounds=${2:-3}
dir=$(mktemp -d /tmp/jctlsfloor.XXXXXX)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

ossl() { openssl "$@" >/dev/null 2>&1; }
ossl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/ca.key" \
  -out "$dir/ca.crt" -days 2 -subj "/CN=floor CA"
ossl req -newkey rsa:2048 -nodes -keyout "$dir/s.key" -out "$dir/s.csr" \
  -subj "/CN=localhost"
echo "subjectAltName=IP:127.0.0.1" >"$dir/ext.cnf"
ossl x509 -req -in "$dir/s.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
  -CAcreateserial -out "$dir/s.crt" -days 2 -extfile "$dir/ext.cnf"

# Ports below the kernel's ephemeral range, where no connection takes them.
first=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range)
tcp=$((1024 + RANDOM % (first - 2048)))
tls=$((tcp + 1))
redis-server --bind 127.0.0.1 --port "$tcp" --tls-port "$tls" \
  --tls-cert-file "$dir/s.crt" --tls-key-file "$dir/s.key" \
  --tls-ca-cert-file "$dir/ca.crt" --tls-auth-clients no \
  --save "" --appendonly no --dir "$dir" >"$dir/redis.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  redis-cli -p "$tcp" PING 2>/dev/null | grep -q PONG && break
  sleep 0.1
done

# redis-benchmark's CSV: "test","rps",... With one connection and no
# pipeline, a GET's mean time is 1/rps. (Its latency columns are not used:
# for large values they leave out most of the reply's reading, and show TLS
# as costing nothing.)
get() {  # BYTES WIRE PORT [TLS ARGS...]
  local bytes=$1 wire=$2 port=$3
  shift 3
  # A tenth as many of the largest values: a round stays within seconds.
  local n=$((bytes > 1000000 ? requests / 10 : requests))
  redis-benchmark -p "$port" "$@" -c 1 -n "$n" -d "$bytes" \
    -t set,get --csv 2>/dev/null | awk -F'"' -v r="$round" -v b="$bytes" \
    -v w="$wire" '$2 == "GET" {
      printf "{\"round\": %s, \"bytes\": %s, \"wire\": \"%s\", \"mean_us\": %.1f}\n",
        r, b, w, 1e6 / $4 }'
}
for round in $(seq "$rounds"); do
  for bytes in 4096 153600 1340000; do
    get "$bytes" tcp "$tcp"
    get "$bytes" tls "$tls" --tls --cacert "$dir/ca.crt"
  done
done
