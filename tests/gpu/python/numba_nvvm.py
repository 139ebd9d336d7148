"""numba-cuda kernels compiled by libNVVM, unmodified: MODE is `plain` (a
@cuda.jit kernel calling math.sin: libdevice through libNVVM), `lineinfo`
(the same with line information, linked as LTO-IR by nvJitLink) or
`link` (a Python kernel and a CUDA C++ file, both LTO-IR, linked). Prints
whether the result is right, the first launch's time and which libnvvm
the process mapped."""
import math
import os
import sys
import tempfile
import time

import numpy as np
from numba import cuda, float32
from common import report

mode = sys.argv[1] if len(sys.argv) > 1 else "plain"
n = 1024
host = np.linspace(0, 3, n, dtype=np.float32)

if mode == "link":
    source = r"""
extern "C" __device__ int triple_plus(float* out, float x) {
  *out = 3.0f * x + 1.0f; return 0;
}
"""
    path = os.path.join(tempfile.mkdtemp(), "triple_plus.cu")
    with open(path, "w") as f:
        f.write(source)
    triple_plus = cuda.declare_device("triple_plus", float32(float32))

    @cuda.jit(link=[path], lto=True)
    def kernel(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = triple_plus(math.sin(x[i]))

    expected = np.sin(host) * 3 + 1
else:
    @cuda.jit(lineinfo=(mode == "lineinfo"), lto=(mode == "lineinfo"))
    def kernel(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = math.sin(x[i]) * 2.0

    expected = np.sin(host) * 2

x = cuda.to_device(host)
start = time.perf_counter()
kernel[4, 256](x)
cuda.synchronize()
took = (time.perf_counter() - start) * 1e3
with open("/proc/self/maps") as f:
    nvvm = sorted({line.split()[-1] for line in f
                   if "libnvvm" in line and "/" in line})
report(f"numba-cuda {mode}",
       bool(np.allclose(x.copy_to_host(), expected, rtol=1e-5, atol=1e-5)),
       f"first launch {took:.1f} ms libnvvm={nvvm}")
