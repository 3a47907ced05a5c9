#!/usr/bin/env python3
"""A model's step replayed from a CUDA graph, as inference servers do to
cut launch overhead: a 2-layer MLP block (width 1024, hidden 4096, bf16,
LayerNorm, GELU, residual) on 8 x 512 tokens, captured once with
torch.cuda.CUDAGraph (which destroys the graph it instantiated from) and
replayed 20 times on new inputs copied into its static input.  Each
kernel runs only from the graph.  The last replay is checked against the
same block in float32 on the CPU."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

WIDTH, HIDDEN, ROWS, REPLAYS = 1024, 4096, 8 * 512, 20


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(WIDTH)
        self.up = nn.Linear(WIDTH, HIDDEN)
        self.down = nn.Linear(HIDDEN, WIDTH)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.ln(x))))


def main():
    torch.manual_seed(0)
    model = Block().eval()
    inputs = [torch.randn(ROWS, WIDTH) for _ in range(REPLAYS)]
    with torch.no_grad():
        ref = model(inputs[-1])
        gpu = model.to("cuda", torch.bfloat16)
        static_in = inputs[0].to("cuda", torch.bfloat16)
        # warm-up on a side stream, as torch.cuda.graphs asks
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                gpu(static_in)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = gpu(static_in)
        for x in inputs:
            static_in.copy_(x.to("cuda", torch.bfloat16))
            graph.replay()
        out = static_out.float().cpu()
    err = ((out - ref).norm() / ref.norm()).item()
    if not err < 2e-2:
        print("check failed: relative error %g" % err, file=sys.stderr)
        return 1
    print("graph: %d replays, relative error %.2e against float32"
          % (REPLAYS, err))
    return 0


if __name__ == "__main__":
    sys.exit(main())
