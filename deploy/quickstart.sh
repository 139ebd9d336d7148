#!/usr/bin/env bash
# The two quick-start commands:
#   deploy/quickstart.sh serve [jitcached flags]   install, build, run the daemon
#   deploy/quickstart.sh test  [ctest args]        install, build, run every test
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
[[ $mode == serve || $mode == test ]] || { echo "usage: $0 serve|test [args]" >&2; exit 2; }
shift

./deploy/install-deps.sh
build=${JITCACHE_BUILD_DIR:-build}
jobs=$(nproc)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITCACHE_WERROR=ON
cmake --build "$build" --parallel "$jobs"

if [[ $mode == serve ]]; then
  exec "$build/server/jitcached" "$@"
fi
ctest --test-dir "$build" --output-on-failure --parallel "$jobs" --timeout 600 "$@"
