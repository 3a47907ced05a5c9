#!/usr/bin/env python3
"""A PyTorch program for bench/ncu-compare: bf16 matrix products (cuBLAS),
an element-wise GELU and a row sum, ITERS times over random data.
Prints the median time per iteration (CUDA events)."""
import sys

import torch

N = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
ITERS = int(sys.argv[2]) if len(sys.argv) > 2 else 30


def main():
    torch.manual_seed(0)
    a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    times = []
    for _ in range(ITERS):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        c = a @ b
        g = torch.nn.functional.gelu(c)
        s = g.float().sum(dim=1)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    if not torch.isfinite(s).all():
        print("error: non-finite result", file=sys.stderr)
        return 1
    times.sort()
    print("matmul+gelu+sum N=%d: median %.3f ms over %d iterations"
          % (N, times[len(times) // 2], ITERS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
