#!/usr/bin/env python3
"""One forward pass of a small model, as an inference script runs it:
a 4-layer pre-norm transformer (width 1024, 16 heads, MLP 4096), bf16,
batch 4 x 256 tokens, weights drawn at random here (nothing is
downloaded).  One forward pass on the GPU: each of its kernels runs
once or a few times (once per layer).  Checked against the same model
in float32 on the CPU, which launches nothing on the GPU."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

WIDTH, HEADS, MLP, LAYERS = 1024, 16, 4096, 4
BATCH, TOKENS = 4, 256


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.ln2 = nn.LayerNorm(WIDTH)
        self.up = nn.Linear(WIDTH, MLP)
        self.down = nn.Linear(MLP, WIDTH)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(WIDTH, dim=-1)
        q, k, v = (u.view(b, t, HEADS, -1).transpose(1, 2) for u in (q, k, v))
        a = torch.softmax(q @ k.transpose(-1, -2) / (WIDTH // HEADS) ** 0.5,
                          dim=-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, WIDTH))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


def main():
    torch.manual_seed(0)
    model = nn.Sequential(*[Block() for _ in range(LAYERS)]).eval()
    x = torch.randn(BATCH, TOKENS, WIDTH)
    with torch.no_grad():
        ref = model(x)
        gpu = model.to("cuda", torch.bfloat16)
        out = gpu(x.to("cuda", torch.bfloat16)).float().cpu()
    err = ((out - ref).norm() / ref.norm()).item()
    if not err < 2e-2:
        print("check failed: relative error %g" % err, file=sys.stderr)
        return 1
    print("forward: %d layers, relative error %.2e against float32"
          % (LAYERS, err))
    return 0


if __name__ == "__main__":
    sys.exit(main())
