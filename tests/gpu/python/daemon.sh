# Sourced by the GPU machine's package scripts (run_all.sh, run_links.sh):
#   start_daemon BUNDLE   a fresh jitcached from the bundle on a private
#                         socket (and $DAEMON_FLAGS); sets dir (its
#                         directory), daemon (its pid)
#                         and compat (a PYTHONPATH entry, or empty)
#   stats FIELD...        the daemon's counters named, on one line
#   stop_daemon           stops it and shows the end of its log
start_daemon() {
  jc_bundle=$1
  dir=$(mktemp -d /tmp/jcpy.XXXXXX)
  LD_LIBRARY_PATH="$jc_bundle/lib:/usr/local/cuda/lib64" "$jc_bundle/bin/jitcached" \
    --socket="$dir/s.sock" --store="$dir/store" ${DAEMON_FLAGS:-} > "$dir/daemon.log" 2>&1 &
  daemon=$!
  jitcache_cli() { LD_LIBRARY_PATH="$jc_bundle/lib" "$jc_bundle/bin/jitcache" --socket "$dir/s.sock" "$@"; }
  for _ in $(seq 100); do
    jitcache_cli ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  export JITCACHE_SCAN_CACHE="$dir/scans"
  # numba-cuda imports np.row_stack, which the NumPy on that machine no
  # longer has; an alias in the environment (not in numba-cuda) lets it load.
  compat=""
  if ! python3 -c "import numpy; numpy.row_stack" >/dev/null 2>&1; then
    mkdir -p "$dir/compat"
    printf 'import numpy\nif not hasattr(numpy, "row_stack"):\n    numpy.row_stack = numpy.vstack\n' > "$dir/compat/sitecustomize.py"
    compat="$dir/compat"
    echo "numba-cuda does not import as installed; numpy.row_stack aliased for it (sitecustomize)"
  fi
}

stats() {
  local fields
  fields=$(IFS='|'; echo "$*")
  jitcache_cli stats | grep -E "^($fields) " | tr '\n' ' '; echo
}

stop_daemon() {
  kill "$daemon"; wait "$daemon" 2>/dev/null
  tail -5 "$dir/daemon.log"
}
