#!/usr/bin/env bash
# The peers' own test suites as the oracle (GPU machine): CuPy's, cuda.core's
# and numba-cuda's tests, once with the real libraries, then twice through
# jitcache's drop-ins (libnvrtc.so.13, libnvJitLink.so.13, libnvvm.so.4
# preloaded from their toolkit-shaped directory) against one fresh daemon,
# from two working directories, with the packages' own caches empty each
# time. Then the table: pass, fail, error and skip per suite and run; the
# daemon's requests, hits and misses per run; every test that passes with
# the real libraries and not through jitcache; and why requests went to
# the real libraries (the drop-ins' verbose lines, by reason).
#
#   tests/gpu/peer_suites.sh BUNDLE CUDA_ROOT PEERS [PHASE...]
#     BUNDLE     gpu-bundle of jitcached and jitcache (../shared/tools/gpu-bundle)
#     CUDA_ROOT  the drop-ins' toolkit-shaped directory (build/cuda-root, or
#                LIBDIR/jitcache/cuda); its links are made again here for this
#                machine's toolkit (deploy/make-cuda-root)
#     PEERS      the suites' sources: PEERS/cupy/tests (CuPy's repository
#                layout) and PEERS/cuda_core/tests; numba-cuda's tests come
#                with its wheel
#     PHASE      real, ours1, ours2, report (default: all four, in order;
#                SUITES="cupy numba" runs some of the suites only);
#                the daemon and the results live in $STATE (default
#                /tmp/jitcache-peers) between calls
# Logs, junit files and the daemon's counters go to $OUT (default $STATE).
# Wheels the suites need beyond the machine's own (numba-cuda's tests import
# filecheck) are installed from $WHEELS (a folder of .whl files), if set.
set -uo pipefail
bundle=$(cd "$1" && pwd)
root=$(cd "$2" && pwd)
peers=$(cd "$3" && pwd)
shift 3
phases=("$@")
[[ ${#phases[@]} -gt 0 ]] || phases=(real ours1 ours2 report)
here=$(cd "$(dirname "$0")" && pwd)
state=${STATE:-/tmp/jitcache-peers}
out=${OUT:-$state}
mkdir -p "$state" "$out"
cuda=${CUDA_HOME:-/usr/local/cuda}
sock=$state/s.sock
jc() { LD_LIBRARY_PATH="$bundle/lib" "$bundle/bin/jitcache" --socket "$sock" "$@"; }

# The suites, as the issue that asked for them names them: the command
# that runs `suite`, with its results in $out/SUITE-RUN.{xml,log}.
suite_command() {
  local suite=$1 name=$2
  case $suite in
    cupy)
      local t=$peers/cupy/tests/cupy_tests/core_tests
      # The jitify variants are marked slow (minutes of NVRTC each).
      cmd=(python3 -m pytest -q -s -p no:cacheprovider -n 8 -m "not slow"
           --junitxml="$out/$suite-$name.xml" -o junit_family=xunit1
           "$t/test_raw.py" "$t/test_userkernel.py" "$t/test_elementwise.py"
           "$t/test_reduction.py" "$t/test_cub_reduction.py")
      ;;
    cuda_core)
      local t=$peers/cuda_core/tests
      cmd=(python3 -m pytest -q -s -p no:cacheprovider -n 8
           --junitxml="$out/$suite-$name.xml" -o junit_family=xunit1
           "$t/test_program.py" "$t/test_linker.py" "$t/test_module.py"
           "$t/test_launcher.py")
      ;;
    numba)
      # numba's own runner (pytest names the wheel's test modules
      # numba_cuda/numba/cuda/tests/... wrongly, as cuda.tests...); its
      # verbose lines are the results. One process by default: numba
      # numbers the functions a process compiles, so its IR (and the real
      # libNVVM's PTX) depends on the order; a runner that deals tests to
      # processes as they free up compiles other IR each run, which no
      # cache may share (NUMBA_PROCESSES=8 runs faster, with fewer hits).
      local processes=()
      [[ ${NUMBA_PROCESSES:-1} -gt 1 ]] && processes=(-m "$NUMBA_PROCESSES")
      # NUMBA_TESTS="MODULE..." runs those modules instead (a run of all of
      # them in one process takes longer than a device call may).
      local modules=(numba.cuda.tests.cudapy numba.cuda.tests.cudadrv.test_linker
                     numba.cuda.tests.cudadrv.test_nvjitlink)
      [[ -n ${NUMBA_TESTS:-} ]] && read -r -a modules <<<"$NUMBA_TESTS"
      cmd=(python3 -m numba.runtests "${processes[@]}" -v "${modules[@]}")
      ;;
  esac
}

start_daemon() {
  [[ -S $sock ]] && jc ping >/dev/null 2>&1 && return 0
  local nvvm=$cuda/nvvm/lib64/libnvvm.so.4
  # A service of its own (setsid): it outlives one call of the device tool.
  setsid env LD_LIBRARY_PATH="$bundle/lib:$cuda/lib64" "$bundle/bin/jitcached" \
    --socket="$sock" --store="$state/store" --libnvvm="$nvvm" --log_level=debug \
    >"$state/daemon.log" 2>&1 < /dev/null &
  for _ in $(seq 200); do jc ping >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "jitcached did not start:"; tail -20 "$state/daemon.log"; return 1
}

counters() { jc stats --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(s.get("requests", 0), s.get("hits", 0), s.get("misses", 0), s.get("joins", 0))'; }

# One run of every suite: "real", or through the drop-ins from `cwd`.
run() {
  local name=$1 cwd=$2 preload=${3:-}
  mkdir -p "$cwd"
  for suite in ${SUITES:-cupy cuda_core numba}; do
    local caches; caches=$(mktemp -d "$state/cache.XXXXXX")
    local before="" after=""
    [[ -n $preload ]] && before=$(counters)
    echo "== $suite, $name ($(date +%T))"
    local cmd=()
    suite_command "$suite" "$name"
    local env_vars=(CUPY_CACHE_DIR="$caches/cupy" NUMBA_CACHE_DIR="$caches/numba"
                    CUDA_CACHE_PATH="$caches/cuda" PYTHONDONTWRITEBYTECODE=1
                    PYTHONPATH="$compat${PYTHONPATH:+:$PYTHONPATH}")
    if [[ -n $preload ]]; then
      env_vars+=(LD_PRELOAD="$preload" JITCACHE_SOCKET="$sock"
                 JITCACHE_NVRTC_VERBOSE=1 JITCACHE_NVJITLINK_VERBOSE=1
                 JITCACHE_NVVM_VERBOSE=1)
    fi
    (cd "$cwd" && env "${env_vars[@]}" timeout "${SUITE_TIMEOUT:-240}" "${cmd[@]}") \
      >"$out/$suite-$name.log" 2>&1
    echo "   exit $? ($(tail -1 "$out/$suite-$name.log"))"
    if [[ -n $preload ]]; then
      after=$(counters)
      echo "$suite $name $before $after" >>"$out/counters"
    fi
    rm -rf "$caches"
  done
}

report() {
  python3 - "$out" "$out/counters" "$state/daemon.log" <<'PY'
import collections, glob, os, re, sys
import xml.etree.ElementTree as ET
out, counters, daemon_log = sys.argv[1], sys.argv[2], sys.argv[3]

def short(name):
    return re.sub(r"/tmp/tmp\w+/", "/tmp/tmp…/", name)

# Why the daemon kept answers for their place or their program's name (its
# debug log: the first difference between the real compiler's answers in
# the caller's place and elsewhere), by program name.
kept_why = collections.defaultdict(collections.Counter)
if os.path.exists(daemon_log):
    for line in open(daemon_log, errors="replace"):
        m = re.search(r"compile \w+ \((.*)\) (depends on its place|shows its program's name); "
                      r"kept under \w+(?: \((.*)\))?$", line.rstrip())
        if m:
            what = "place" if m.group(2).startswith("depends") else "its name alone"
            diff = re.sub(r"\\[0-7]{3}|\\.", "", (m.group(3) or ""))
            diff = re.sub(r"at byte \d+: \"(.{0,50}).*", r'near "\1"', diff)
            kept_why[short(m.group(1))][f"{what}: {diff}" if diff else what] += 1

def results(path):
    r = {}
    log = path[:-4] + ".log"
    if os.path.basename(path).startswith("numba-") and os.path.exists(log):
        # numba.runtests -v: "test_x (module.Class.test_x) ... ok"
        pattern = re.compile(r"^(\w+) \(([\w.]+)\) \.\.\. (.*)$")
        for line in open(log, errors="replace"):
            m = pattern.match(line.rstrip())
            if not m:
                continue
            word = m.group(3)
            r[m.group(2) + "." + m.group(1)] = ("pass" if word.startswith(("ok", "expected failure"))
                             else "skip" if word.startswith("skipped")
                             else "fail" if word.startswith("FAIL")
                             else "error" if word.startswith("ERROR") else "pass")
        return r or None
    if not os.path.exists(path):
        return None
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("classname", "") + "::" + case.get("name", "")
        kinds = {c.tag for c in case}
        r[name] = ("fail" if "failure" in kinds else "error" if "error" in kinds
                   else "skip" if "skipped" in kinds else "pass")
    return r

print("| suite | run | pass | fail | error | skip | requests | hits | misses | hit rate |")
print("|---|---|---|---|---|---|---|---|---|---|")
deltas = {}
if os.path.exists(counters):
    for line in open(counters):
        f = line.split()
        if len(f) == 10:
            b, a = list(map(int, f[2:6])), list(map(int, f[6:10]))
            deltas[(f[0], f[1])] = [y - x for x, y in zip(b, a)]
broken = []
for suite in ("cupy", "cuda_core", "numba"):
    real = results(f"{out}/{suite}-real.xml")
    for run in ("real", "ours1", "ours2"):
        r = results(f"{out}/{suite}-{run}.xml")
        if r is None:
            print(f"| {suite} | {run} | (no results) |||||||")
            if run != "real":
                broken.append(f"{suite} {run}: no results")
            continue
        c = collections.Counter(r.values())
        d = deltas.get((suite, run))
        rate = f"{100.0 * d[1] / d[0]:.1f}%" if d and d[0] else ""
        req = "|".join(str(x) for x in d[:3]) if d else "||"
        print(f"| {suite} | {run} | {c['pass']} | {c['fail']} | {c['error']} | {c['skip']} | {req} | {rate} |")
        if run == "real":
            continue
        if real is None:
            broken.append(f"{suite} {run}: no results of the real run to compare with")
            continue
        for name, outcome in sorted(r.items()):
            if real.get(name) == "pass" and outcome in ("fail", "error"):
                broken.append(f"{suite} {run}: {name} ({outcome})")
        unrun = [n for n, o in real.items() if o == "pass" and n not in r]
        if unrun:
            broken.append(f"{suite} {run}: {len(unrun)} tests that pass with the "
                          "real libraries did not run (cut by the time limit?)")
print()
print("Passes with the real libraries, not through jitcache (or not run):",
      len(broken))
for b in broken:
    print("  " + b)
print()
print("NVRTC requests by how the daemon served them, and the misses by program")
print("name (libnvrtc.so.13's verbose lines):")
for run in ("ours1", "ours2"):
    served, missed = collections.Counter(), collections.Counter()
    for log in glob.glob(f"{out}/*-{run}.log"):
        for line in open(log, errors="replace"):
            m = re.search(r"jitcache-nvrtc: (.*): (HIT|MISS|JOINED) (\S+) key (\w+)", line)
            if m:
                served[m.group(2)] += 1
                if m.group(2) == "MISS":
                    missed[(short(m.group(1)), m.group(3))] += 1
    print(f"  {run}: {dict(served)}")
    for (name, kind), n in missed.most_common(25):
        print(f"    {n:5d}  MISS {name} ({kind})")
        if run == "ours2":
            reasons = kept_why.get(name)
            if not reasons:
                print("             (no verdict of the daemon's under this name)")
            for why, k in (reasons or collections.Counter()).most_common(3):
                print(f"             kept for {why} (x{k})")
print()
print("Handed to the real libraries, by reason (the drop-ins' verbose lines):")
for run in ("ours1", "ours2"):
    why = collections.Counter()
    for log in glob.glob(f"{out}/*-{run}.log"):
        for line in open(log, errors="replace"):
            m = re.search(r"jitcache[ -](\S+?):? (the real .*|not using the daemon.*|.*the daemon did not compile it.*)", line.strip())
            if m:
                reason = re.sub(r"'[^']*'|\"[^\"]*\"|/\S+", "…", m.group(2))
                why[(m.group(1), reason[:160])] += 1
    print(f"  {run}:")
    for (lib, reason), n in why.most_common(25):
        print(f"    {n:5d}  {lib}: {reason}")
PY
}

# numba-cuda imports np.row_stack, which the NumPy on the GPU machine no
# longer has; an alias in the environment (not in numba-cuda) lets it load.
compat=""
if ! python3 -c "import numpy; numpy.row_stack" >/dev/null 2>&1; then
  mkdir -p "$state/compat"
  printf 'import numpy\nif not hasattr(numpy, "row_stack"):\n    numpy.row_stack = numpy.vstack\n' \
    >"$state/compat/sitecustomize.py"
  compat=$state/compat
fi

if [[ -n ${WHEELS:-} ]]; then
  python3 -m pip install -q --no-index --no-deps --target "$state/site" "$WHEELS"/*.whl &&
    compat=$state/site${compat:+:$compat}
fi

preload="$root/lib64/libnvrtc.so.13:$root/lib64/libnvJitLink.so.13:$root/nvvm/lib64/libnvvm.so.4"
for phase in "${phases[@]}"; do
  case $phase in
    real) run real "$state/cwd-real" ;;
    ours1)
      sh "$here/../../deploy/make-cuda-root" "$cuda" "$root" || exit 1
      # A fresh daemon and store: run 1 is the cold one.
      pkill -f "jitcached --socket=$sock" 2>/dev/null && sleep 1
      rm -rf "$state/store" "$out/counters"
      start_daemon || exit 1
      run ours1 "$state/cwd-a" "$preload"
      ;;
    ours2)
      start_daemon || exit 1
      run ours2 "$state/cwd-b/deep" "$preload"
      ;;
    report) report | tee "$out/report.md" ;;
    *) echo "unknown phase $phase" >&2; exit 2 ;;
  esac
done
