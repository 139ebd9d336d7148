#!/usr/bin/env bash
# Installs the Debian packages jitcache needs to build and test, if missing,
# and checks the CUDA toolkit. Idempotent; works as root on a bare Debian 12
# (uses sudo otherwise). The CUDA toolkit itself is not a Debian package here:
# it must already be in $CUDA_HOME or /usr/local/cuda.
set -euo pipefail

packages=(
  ca-certificates g++ make cmake ninja-build pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  librocksdb-dev libabsl-dev libxxhash-dev libgtest-dev libgmock-dev
  # jitcache-full's command-line parser (header-only).
  libcli11-dev
  # Socket activation and sd_notify; Prometheus metrics.
  libsystemd-dev prometheus-cpp-dev
  # The compile workers' seccomp filter; the cluster tier's Redis client.
  libseccomp-dev libhiredis-dev libssl-dev
  # The cluster tier's tests start a private Redis.
  redis-server
  # The service's own tests: systemd-analyze, systemd-socket-activate,
  # dpkg-deb for the packages, strace to check the unit's sandbox.
  systemd dpkg-dev strace
  # The benchmarks and their peers (bench/run.py; its smoke run is a test).
  python3 hyperfine ccache sccache
  # pip fetches test oracles (the real libNVVM, where the toolkit lacks it).
  python3-pip
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi

cuda=${CUDA_HOME:-/usr/local/cuda}
problems=()
for f in include/nvrtc.h include/nvJitLink.h include/cuda.h include/cuda_runtime.h; do
  [[ -f $cuda/$f ]] || problems+=("$cuda/$f (CUDA headers)")
done
for lib in libnvrtc.so libnvJitLink.so; do
  compgen -G "$cuda/lib64/$lib*" >/dev/null || compgen -G "$cuda/lib/$lib*" >/dev/null ||
    problems+=("$cuda/lib64/$lib (${lib#lib})")
done
[[ -d $cuda/include/cccl || -d $cuda/include/cub ]] || problems+=("$cuda/include/cccl (CUB/Thrust headers)")
if ((${#problems[@]})); then
  echo "install-deps: the CUDA toolkit at $cuda is incomplete; missing:" >&2
  printf '  %s\n' "${problems[@]}" >&2
  echo "install-deps: install the CUDA toolkit (NVRTC, nvJitLink, headers) or set CUDA_HOME" >&2
  exit 1
fi
echo "install-deps: CUDA toolkit at $cuda has NVRTC, nvJitLink and headers"
