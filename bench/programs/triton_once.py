#!/usr/bin/env python3
"""A Triton kernel launched once, as a one-shot preprocessing step is: a
row-wise RMS normalisation of a ROWS x COLS float32 matrix of random
data, checked against PyTorch (whose kernels are the program's other
kernels, launched once each too)."""
import sys

import torch
import triton
import triton.language as tl

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 32768
COLS = int(sys.argv[2]) if len(sys.argv) > 2 else 4096


@triton.jit
def rmsnorm_kernel(out_ptr, in_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=mask, other=0.0)
    r = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(out_ptr + row * stride + cols, x * r, mask=mask)


def main():
    torch.manual_seed(0)
    x = torch.randn(ROWS, COLS, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    rmsnorm_kernel[(ROWS,)](y, x, x.stride(0), COLS, 1e-6,
                            BLOCK=triton.next_power_of_2(COLS), num_warps=8)
    torch.cuda.synchronize()
    ref = x.double() * torch.rsqrt(x.double().pow(2).mean(1, keepdim=True)
                                   + 1e-6)
    err = ((y.double() - ref).norm() / ref.norm()).item()
    if not err < 1e-5:
        print("check failed: relative error %g" % err, file=sys.stderr)
        return 1
    print("rmsnorm: one launch, relative error %.2e" % err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
