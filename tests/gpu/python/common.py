"""Shared by the per-package scripts: which libnvrtc this process loaded,
and a one-line result."""
import sys

SOURCE = r"""
template <typename T>
__global__ void scale(T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
"""
NAME = "scale<float>"


def loaded_nvrtc():
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "nvrtc" in line and "/" in line}
    return sorted(p for p in paths if "builtins" not in p)


def loaded_nvjitlink():
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f
                       if "nvJitLink" in line and "/" in line})


def report(package, ok, detail=""):
    print(f"{package}: {'correct' if ok else 'WRONG'} {detail} "
          f"libnvrtc={loaded_nvrtc()} libnvJitLink={loaded_nvjitlink()}",
          flush=True)
    sys.exit(0 if ok else 1)
