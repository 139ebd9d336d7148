"""PyTorch's jiterator, which compiles its kernels with NVRTC; unmodified."""
import torch
from common import report

code = "template <typename T> T triple(T x) { return x * T(3); }"
fn = torch.cuda.jiterator._create_jit_fn(code)
x = torch.arange(1024, dtype=torch.float32, device="cuda")
y = fn(x)
report("pytorch", bool(torch.allclose(y, x * 3)))
