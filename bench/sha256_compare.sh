#!/usr/bin/env bash
# SHA-256 as the cache digests objects, two implementations side by side:
# bench/digest_bench.cc built twice with the same flags, once with
# common/sha256.{h,cc} of BEFORE (a commit) and once with this tree's, run
# alternately ROUNDS times; each run prints p50 per input size.
# Usage: bench/sha256_compare.sh BEFORE [ROUNDS]
set -euo pipefail
before=${1:?usage: $0 BEFORE [ROUNDS]}
rounds=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/before/common" "$work/bin"
git -C "$root" show "$before:common/sha256.h" >"$work/before/common/sha256.h"
git -C "$root" show "$before:common/sha256.cc" >"$work/before/common/sha256.cc"
flags=(-std=c++20 -O2 -DNDEBUG)
absl=(-labsl_strings -labsl_raw_logging_internal)
build() {  # NAME SHA256_DIR
  g++ "${flags[@]}" -I"$2" -I"$root" "$root/bench/digest_bench.cc" "$root/common/digest.cc" \
    "$root/common/text.cc" "$2/common/sha256.cc" -o "$work/bin/$1" \
    -Wl,--exclude-libs,libcrypto.a /usr/lib/x86_64-linux-gnu/libcrypto.a "${absl[@]}"
}
build before "$work/before"
build after "$root"
echo "before: $before; after: $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet -- common/sha256.cc || echo ' (working tree)')"
for ((i = 1; i <= rounds; ++i)); do
  echo "before $("$work/bin/before" 300)"
  echo "after  $("$work/bin/after" 300)"
done
