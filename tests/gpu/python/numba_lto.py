"""numba-cuda with lto=True: a Python kernel calling a CUDA C++ device
function, both as LTO-IR, linked by nvJitLink; unmodified."""
import os
import tempfile
import time

import numpy as np
from numba import cuda, float32
from common import report

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
        x[i] = triple_plus(x[i])


x = cuda.to_device(np.arange(1024, dtype=np.float32))
start = time.perf_counter()
kernel[4, 256](x)
cuda.synchronize()
took = (time.perf_counter() - start) * 1e3
report("numba-cuda lto", bool(np.allclose(
    x.copy_to_host(), np.arange(1024, dtype=np.float32) * 3 + 1)),
    f"first launch (compile and link) {took:.1f} ms")
