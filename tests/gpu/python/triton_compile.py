"""A Triton autotuned matmul and a torch.compile (max-autotune) MLP, cold:
what a rank of a training job compiles at start. Checks both results
against PyTorch's, and prints how long each part took, as JSON.

Run with fresh TRITON_CACHE_DIR and TORCHINDUCTOR_CACHE_DIR (as the GPU
scripts do), and TRITON_PTXAS_PATH naming the ptxas to run."""
import json
import os
import sys
import time

import torch
import triton
import triton.language as tl

CONFIGS = [
    triton.Config({"BM": bm, "BN": bn, "BK": bk}, num_warps=w, num_stages=s)
    for bm, bn, bk, w, s in [
        (64, 64, 32, 4, 3), (128, 64, 32, 4, 3), (64, 128, 32, 4, 4),
        (128, 128, 32, 8, 3), (128, 128, 64, 8, 3), (64, 64, 64, 4, 4),
        (128, 256, 64, 8, 3), (256, 128, 64, 8, 3)]
]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * sam + (k + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        y = tl.load(b + (k + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1),
                        b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    return c


def main():
    torch.manual_seed(0)
    start = time.time()
    a = torch.randn(2048, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 2048, device="cuda", dtype=torch.float16)
    c = matmul(a, b)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a @ b, atol=0.5, rtol=1e-2)
    matmul_s = time.time() - start

    start = time.time()
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.GELU(),
        torch.nn.Linear(4096, 1024), torch.nn.LayerNorm(1024)).cuda().half()
    compiled = torch.compile(model, mode="max-autotune-no-cudagraphs")
    x = torch.randn(512, 1024, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        y = compiled(x)
        torch.testing.assert_close(y, model(x), atol=5e-2, rtol=5e-2)
    compile_s = time.time() - start
    print(json.dumps({"matmul_s": round(matmul_s, 2),
                      "torch_compile_s": round(compile_s, 2),
                      "results": "correct"}))


if __name__ == "__main__":
    sys.exit(main())
