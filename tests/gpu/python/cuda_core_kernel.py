"""cuda.core Program with a templated name expression, unmodified."""
import numpy as np
try:
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
except ImportError:  # cuda.core before 0.4
    from cuda.core.experimental import (Device, LaunchConfig, Program,
                                        ProgramOptions, launch)
from common import NAME, SOURCE, report

dev = Device()
dev.set_current()
stream = dev.create_stream()
arch = "sm_" + "".join(str(v) for v in dev.compute_capability)
prog = Program(SOURCE, code_type="c++", options=ProgramOptions(arch=arch))
mod = prog.compile("cubin", name_expressions=(NAME,))
kernel = mod.get_kernel(NAME)
import cupy as cp  # device memory only
x = cp.arange(1024, dtype=cp.float32)
launch(stream, LaunchConfig(grid=4, block=256), kernel, x.data.ptr,
       np.float32(3.0), np.int32(1024))
stream.sync()
report("cuda.core", bool(cp.allclose(x, cp.arange(1024, dtype=cp.float32) * 3)))
