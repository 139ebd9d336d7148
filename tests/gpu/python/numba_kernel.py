"""numba-cuda: a Python kernel calling a CUDA C++ device function, which
numba-cuda compiles with NVRTC; unmodified."""
import os
import tempfile

import numpy as np
from numba import cuda, float32
from common import report

source = r"""
extern "C" __device__ int triple(float* out, float x) { *out = 3.0f * x; return 0; }
"""
path = os.path.join(tempfile.mkdtemp(), "triple.cu")
with open(path, "w") as f:
    f.write(source)
triple = cuda.declare_device("triple", float32(float32))


@cuda.jit(link=[path])
def kernel(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = triple(x[i])


x = cuda.to_device(np.arange(1024, dtype=np.float32))
kernel[4, 256](x)
report("numba-cuda", bool(np.allclose(x.copy_to_host(),
                                      np.arange(1024, dtype=np.float32) * 3)))
