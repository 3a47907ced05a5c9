/*
 * MLA decode attention: the interface between the benchmark harness and
 * one version of the kernel.
 *
 * Problem (DeepSeek-style multi-head latent attention, decode phase):
 *   q   [b, s, 128, 576]  bf16   queries, 128 heads, s query positions
 *   kv  [b, t, 576]       bf16   latent cache shared by all heads
 *                                (K = the whole row, V = its first 512 dims)
 *   out [b, s, 128, 512]  bf16   softmax(q k^T / sqrt(576)) v, fp32 inside
 * All s query positions see all t keys (no causal mask).
 *
 * Every version directory provides the two functions below with these
 * exact, unsuffixed names, so the harness links any version.  Calling
 * sequence: the harness asks for the workspace size once, allocates it,
 * then calls the launch as often as it likes, always on one stream.
 * The launch only enqueues work; it returns 0 or a cudaError_t value.
 */
#ifndef MLA_DECODE_H
#define MLA_DECODE_H

#include <stddef.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

typedef __nv_bfloat16 bf16;

#define MLA_HEADS 128
#define MLA_DQK 576
#define MLA_DV 512

/* Bytes of device scratch memory one launch needs (0 if none). */
extern "C" size_t mla_decode_workspace_bytes(int b, int s, int t);

/* Enqueue out = attention(q, kv) on the stream. */
extern "C" int mla_decode_launch(const bf16 *q, const bf16 *kv, bf16 *out,
				 int b, int s, int t, void *workspace,
				 cudaStream_t stream);

#endif
