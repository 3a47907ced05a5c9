#!/usr/bin/env python3
"""A Triton program for bench/ncu-compare: a row softmax over a
ROWS x COLS float32 matrix of random data, ITERS times, checked against
torch.softmax.  Prints the median time per launch (CUDA events)."""
import sys

import torch
import triton
import triton.language as tl

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
COLS = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
ITERS = int(sys.argv[3]) if len(sys.argv) > 3 else 30


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * stride + cols, y, mask=mask)


def main():
    torch.manual_seed(0)
    x = torch.randn(ROWS, COLS, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    block = triton.next_power_of_2(COLS)
    times = []
    for _ in range(ITERS):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        softmax_kernel[(ROWS,)](y, x, x.stride(0), COLS, BLOCK=block,
                                num_warps=8)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    err = ((y - torch.softmax(x, dim=1)).norm() / torch.softmax(x, dim=1).norm())
    if not err < 1e-5:
        print("error: relative error %g" % err, file=sys.stderr)
        return 1
    times.sort()
    print("softmax %dx%d: median %.3f ms over %d launches, error %.2e"
          % (ROWS, COLS, times[len(times) // 2], ITERS, err))
    return 0


if __name__ == "__main__":
    sys.exit(main())
