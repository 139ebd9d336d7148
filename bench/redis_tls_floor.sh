#!/usr/bin/env bash
# What TLS costs a GET, in one run on one redis-server with a plain TCP port
# and a TLS port (a CA and certificate made here), for values of 4 KiB,
# 150 KiB and 1.3 MiB, alternating:
#   - Redis alone: redis-benchmark's GET from one connection;
#   - with REMOTE_BENCH (bench/jitcache_remote_bench) given, the tier's
#     share of a remote hit, with the links keeping their reply buffer (the
#     default) and with hiredis's own 16 KiB (the tier before it kept it).
#   bench/redis_tls_floor.sh [REQUESTS] [ROUNDS] [REMOTE_BENCH]
# redis-server, redis-cli, redis-benchmark and openssl come from PATH. One
# JSON object per line:
#   {"round": N, "bytes": B, "wire": "tcp"|"tls", "mean_us": ..}
#   {"round": N, "wire": .., "reply_buffer_kept": K, "hits": {...}}
set -euo pipefail
requests=${1:-2000}
rounds=${2:-3}
remote_bench=${3:-}
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

# Ports below the kernel's ephemeral range, where no connection takes them;
# the server must answer on them as itself (its pid), or another try.
first=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range)
for _ in 1 2 3 4 5; do
  tcp=$((1024 + RANDOM % (first - 2048)))
  tls=$((tcp + 1))
  redis-server --bind 127.0.0.1 --port "$tcp" --tls-port "$tls" \
    --tls-cert-file "$dir/s.crt" --tls-key-file "$dir/s.key" \
    --tls-ca-cert-file "$dir/ca.crt" --tls-auth-clients no \
    --save "" --appendonly no --dir "$dir" >"$dir/redis.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    timeout 5 redis-cli -p "$tcp" INFO server 2>/dev/null |
      grep -q "process_id:$pid" && break 2
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  pid=
done
if [ -z "$pid" ]; then
  echo "redis-server did not start: $(cat "$dir/redis.log")" >&2
  exit 1
fi

# With one connection and no pipeline, a GET's mean time is 1/rate
# (redis-benchmark's CSV: "test","rps",...). Its latency columns are not
# used: for large values they leave out most of the reply's reading, and
# show TLS as costing nothing.
get() {  # BYTES WIRE PORT [TLS ARGS...]
  local bytes=$1 wire=$2 port=$3
  shift 3
  # A tenth as many of the largest values: a round stays within seconds.
  local n=$((bytes > 1000000 ? requests / 10 : requests))
  redis-benchmark -p "$port" "$@" -c 1 -n 1 -d "$bytes" -t set >/dev/null
  redis-benchmark -p "$port" "$@" -c 1 -n "$n" -d "$bytes" -t get --csv \
    2>/dev/null | awk -F'"' -v r="$round" -v b="$bytes" -v w="$wire" \
    '$2 == "GET" {
      printf "{\"round\": %s, \"bytes\": %s, \"wire\": \"%s\", \"mean_us\": %.1f}\n",
        r, b, w, 1e6 / $4 }'
}
tier() {  # WIRE KEPT URL [CA]
  local wire=$1 kept=$2
  shift 2
  local hits
  hits=$(JITCACHE_BENCH_REPLY_BUFFER_KEPT=$kept "$remote_bench" "$1" \
    "$((requests / 2))" "${@:2}")
  echo "{\"round\": $round, \"wire\": \"$wire\", \"reply_buffer_kept\": $kept, \"hits\": $hits}"
}
for round in $(seq "$rounds"); do
  for bytes in 4096 153600 1340000; do
    get "$bytes" tcp "$tcp"
    get "$bytes" tls "$tls" --tls --cacert "$dir/ca.crt"
  done
  if [ -n "$remote_bench" ]; then
    for kept in 4194304 16384; do
      tier tcp "$kept" "redis://127.0.0.1:$tcp"
      tier tls "$kept" "rediss://127.0.0.1:$tls" "$dir/ca.crt"
    done
  fi
done
