/*
 * Reference computations for checking a version's output.
 *
 * ref_gpu_fp32(): the whole problem in plain fp32 on the GPU, batch by
 * batch (scores = q k^T * scale, row softmax, softmax @ v), by tiled
 * SIMT matrix products that share no code with any version.  Needs a
 * scratch buffer of s * 128 * t floats.
 *
 * ref_compare(): sums (out - ref)^2 and ref^2 in float64 over every
 * element and counts non-finite outputs and outputs still holding the
 * poison pattern (never written).
 *
 * ref_host_row(): one (batch, position, head) row in float64 on the host.
 */
#ifndef MLA_REFERENCE_H
#define MLA_REFERENCE_H

#include <stdint.h>
#include "mla_decode.h"

struct ref_stats {
	double diff2;		/* sum of (out - ref)^2 */
	double ref2;		/* sum of ref^2 */
	double max_abs;		/* largest |out - ref| */
	unsigned long long nonfinite;	/* NaN or Inf outputs */
	unsigned long long poisoned;	/* outputs still 0xffff */
};

/* The bf16 poison pattern written before each checked run (a NaN). */
#define REF_POISON_BITS 0xffffu

cudaError_t ref_gpu_fp32(const bf16 *q, const bf16 *kv, float *ref,
			 float *scratch, int b, int s, int t,
			 cudaStream_t stream);

cudaError_t ref_compare(const bf16 *out, const float *ref, size_t n,
			struct ref_stats *stats, cudaStream_t stream);

/* q, kv: host copies (bf16 bits); out: 512 doubles. */
void ref_host_row(const uint16_t *q, const uint16_t *kv, int s, int t,
		  int bi, int si, int hi, double *out);

float bf16_bits_to_float(uint16_t v);
uint16_t float_to_bf16_bits(float f);

#endif
