"""CuPy RawModule with a templated name expression, unmodified."""
import cupy as cp
from common import NAME, SOURCE, report

module = cp.RawModule(code=SOURCE, name_expressions=[NAME])
kernel = module.get_function(NAME)
x = cp.arange(1024, dtype=cp.float32)
kernel((4,), (256,), (x, cp.float32(3.0), cp.int32(1024)))
report("cupy", bool(cp.allclose(x, cp.arange(1024, dtype=cp.float32) * 3)))
