"""cuda.core Linker: two LTO-IR units (a kernel and the device function it
calls) linked into a cubin through nvJitLink, unmodified."""
import time

import numpy as np
try:
    from cuda.core import (Device, LaunchConfig, Linker, LinkerOptions,
                           Program, ProgramOptions, launch)
except ImportError:  # cuda.core before 0.4
    from cuda.core.experimental import (Device, LaunchConfig, Linker,
                                        LinkerOptions, Program,
                                        ProgramOptions, launch)
from common import report

CALLER = r"""
extern __device__ float f(float);
extern "C" __global__ void apply(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = f(x[i]);
}
"""
CALLEE = "__device__ float f(float v) { return 3.0f * v + 1.0f; }\n"

dev = Device()
dev.set_current()
stream = dev.create_stream()
arch = "sm_" + "".join(str(v) for v in dev.compute_capability)
options = ProgramOptions(arch=arch, relocatable_device_code=True,
                         link_time_optimization=True)
units = [Program(src, code_type="c++", options=options).compile("ltoir")
         for src in (CALLER, CALLEE)]
start = time.perf_counter()
linked = Linker(*units, options=LinkerOptions(
    arch=arch, link_time_optimization=True)).link("cubin")
took = (time.perf_counter() - start) * 1e3
kernel = linked.get_kernel("apply")
import cupy as cp  # device memory only
x = cp.arange(1024, dtype=cp.float32)
launch(stream, LaunchConfig(grid=4, block=256), kernel, x.data.ptr,
       np.int32(1024))
stream.sync()
report("cuda.core Linker",
       bool(cp.allclose(x, cp.arange(1024, dtype=cp.float32) * 3 + 1)),
       f"link {took:.1f} ms")
