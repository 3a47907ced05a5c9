/*
 * MLA decode, v0: the straightforward kernel.
 *
 * One thread block per (batch, position, head) row, 256 threads, plain
 * fp32 arithmetic on CUDA cores.  The block keeps its query row and all t
 * scores in shared memory: warps compute one score each (lanes split the
 * 576 dims), the block finds the row maximum and the sum of exponentials,
 * then each thread accumulates two output dims over all t keys.
 * Every block reads its batch's whole cache, twice: 128 * s blocks per
 * batch read the same rows, which only the L2 keeps from going to DRAM.
 */
#include <math.h>
#include "mla_decode.h"

#define THREADS 256
#define WARPS (THREADS / 32)

static __device__ float block_reduce(float v, bool is_max, float *red)
{
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

	for (int o = 16; o > 0; o >>= 1) {
		float w = __shfl_xor_sync(0xffffffffu, v, o);
		v = is_max ? fmaxf(v, w) : v + w;
	}
	__syncthreads();
	if (lane == 0)
		red[warp] = v;
	__syncthreads();
	v = red[0];
	for (int i = 1; i < WARPS; i++)
		v = is_max ? fmaxf(v, red[i]) : v + red[i];
	return v;
}

__global__ void __launch_bounds__(THREADS)
mla_decode_v1_kernel(const bf16 *__restrict__ q, const bf16 *__restrict__ kv,
		  bf16 *__restrict__ out, int s, int t, float scale)
{
	extern __shared__ float smem[];
	float *qs = smem;		/* MLA_DQK */
	float *sc = smem + MLA_DQK;	/* t scores, then probabilities */
	__shared__ float red[WARPS];
	int row = blockIdx.x;		/* (bi * s + si) * 128 + hi */
	int bi = row / (s * MLA_HEADS);
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const bf16 *qr = q + (size_t)row * MLA_DQK;
	const bf16 *kb = kv + (size_t)bi * t * MLA_DQK;

	for (int d = threadIdx.x; d < MLA_DQK; d += THREADS)
		qs[d] = __bfloat162float(qr[d]);
	__syncthreads();

	/* scores: one warp per key, lanes over dims in bf16 pairs */
	for (int j = warp; j < t; j += WARPS) {
		const __nv_bfloat162 *kr =
			(const __nv_bfloat162 *)(kb + (size_t)j * MLA_DQK);
		float acc = 0.f;
		for (int d2 = lane; d2 < MLA_DQK / 2; d2 += 32) {
			float2 k = __bfloat1622float2(kr[d2]);
			acc = fmaf(qs[2 * d2], k.x, acc);
			acc = fmaf(qs[2 * d2 + 1], k.y, acc);
		}
		for (int o = 16; o > 0; o >>= 1)
			acc += __shfl_xor_sync(0xffffffffu, acc, o);
		if (lane == 0)
			sc[j] = acc * scale;
	}
	__syncthreads();

	float mx = -INFINITY;
	for (int j = threadIdx.x; j < t; j += THREADS)
		mx = fmaxf(mx, sc[j]);
	mx = block_reduce(mx, true, red);
	float sum = 0.f;
	for (int j = threadIdx.x; j < t; j += THREADS) {
		float p = __expf(sc[j] - mx);
		sc[j] = p;
		sum += p;
	}
	sum = block_reduce(sum, false, red);	/* its barriers publish sc */

	/* out: thread owns dims 2*tid, 2*tid+1 */
	float2 acc = make_float2(0.f, 0.f);
	for (int j = 0; j < t; j++) {
		float2 v = __bfloat1622float2(
			((const __nv_bfloat162 *)(kb + (size_t)j * MLA_DQK))
			[threadIdx.x]);
		acc.x = fmaf(sc[j], v.x, acc.x);
		acc.y = fmaf(sc[j], v.y, acc.y);
	}
	float inv = 1.f / sum;
	((__nv_bfloat162 *)(out + (size_t)row * MLA_DV))[threadIdx.x] =
		__floats2bfloat162_rn(acc.x * inv, acc.y * inv);
}

extern "C" size_t mla_decode_workspace_bytes(int b, int s, int t)
{
	(void)b;
	(void)s;
	(void)t;
	return 0;
}

extern "C" int mla_decode_launch(const bf16 *q, const bf16 *kv, bf16 *out,
				 int b, int s, int t, void *workspace,
				 cudaStream_t stream)
{
	size_t smem = sizeof(float) * ((size_t)MLA_DQK + t);
	static size_t smem_set;
	cudaError_t err;

	(void)workspace;
	if (smem > 48 * 1024 && smem > smem_set) {
		int dev, max_smem;
		err = cudaGetDevice(&dev);
		if (err == cudaSuccess)
			err = cudaDeviceGetAttribute(&max_smem,
				cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
		if (err != cudaSuccess)
			return err;
		if (smem + sizeof(float) * WARPS > (size_t)max_smem)
			return cudaErrorInvalidValue;	/* t too long for v0 */
		err = cudaFuncSetAttribute(mla_decode_v1_kernel,
			cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
		if (err != cudaSuccess)
			return err;
		smem_set = smem;
	}
	mla_decode_v1_kernel<<<b * s * MLA_HEADS, THREADS, smem, stream>>>(
		q, kv, out, s, t, 1.f / sqrtf((float)MLA_DQK));
	return cudaGetLastError();
}
