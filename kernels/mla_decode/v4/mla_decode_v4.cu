/*
 * MLA decode, v3: double-buffered cache tiles.
 *
 * v1 and v2 copy a tile, wait for it, then compute on it: with one block
 * per SM (the tiles take 150 KB of shared memory) nothing hides the copy,
 * and the tensor cores idle for the latency of every 72 KB tile.  Here
 * two tile buffers alternate: while the block computes on tile i, the
 * cp.async copy of tile i + 1 is already in flight into the other buffer
 * (Q 72 KB + 2 x 72 KB tiles + P fill 226 KB of the 227 KB a block may
 * have).  Split-KV and the per-tile arithmetic are v2's.
 */
#include <math.h>
#include <stdint.h>
#include "mla_decode.h"

#define BM 64			/* query rows per block */
#define BN 64			/* keys per tile */
#define THREADS 256
#define ROWB (MLA_DQK * 2)	/* bytes of one 576-wide row */
#define CHUNKS (MLA_DQK / 8)	/* 16-byte chunks per row */

#define SQ_OFF 0
#define SKV_OFF (SQ_OFF + BM * ROWB)
#define TILE_BYTES (BN * ROWB)
#define SP_OFF (SKV_OFF + 2 * TILE_BYTES)
#define SMAX_OFF (SP_OFF + BM * BN * 2)
#define SALPHA_OFF (SMAX_OFF + 2 * BM * 4)
#define SL_OFF (SALPHA_OFF + BM * 4)
#define SMEM_BYTES (SL_OFF + 2 * BM * 4)

static __device__ __forceinline__ uint32_t smem_u32(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

/* byte offset of 16-byte chunk `chunk` of row `row` in a swizzled tile */
static __device__ __forceinline__ uint32_t swz(int row, int chunk)
{
	return row * ROWB + ((chunk ^ (row & 7)) << 4);
}

static __device__ __forceinline__ void cp_async16(uint32_t dst,
						  const void *src)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"
		     :: "r"(dst), "l"(src));
}

static __device__ __forceinline__ void cp_async_commit(void)
{
	asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
static __device__ __forceinline__ void cp_async_wait(void)
{
	asm volatile("cp.async.wait_group %0;\n" :: "n"(N));
}

static __device__ __forceinline__ void st_zero16(uint32_t dst)
{
	asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n"
		     :: "r"(dst), "r"(0));
}

static __device__ __forceinline__ void ldsm_x4(uint32_t *r, uint32_t addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
		     "{%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(addr));
}

static __device__ __forceinline__ void ldsm_x4_t(uint32_t *r, uint32_t addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
		     "{%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(addr));
}

/* c += a * b, m16n8k16, bf16 inputs, fp32 accumulators */
static __device__ __forceinline__ void mma16816(float *c, const uint32_t *a,
						uint32_t b0, uint32_t b1)
{
	asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
	    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
	    "{%0, %1, %2, %3};\n"
	    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
	    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

static __device__ __forceinline__ uint32_t pack_bf16(float lo, float hi)
{
	__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
	return *(uint32_t *)&v;
}

/* 64 rows of 576 from global (rows past `valid` become zeros) */
static __device__ __forceinline__ void load_rows(uint32_t dst,
						 const bf16 *src, int valid)
{
	for (int i = threadIdx.x; i < 64 * CHUNKS; i += THREADS) {
		int r = i / CHUNKS, c = i - r * CHUNKS;
		if (r < valid)
			cp_async16(dst + swz(r, c),
				   src + (size_t)r * MLA_DQK + c * 8);
		else
			st_zero16(dst + swz(r, c));
	}
}

__global__ void __launch_bounds__(THREADS, 1)
mla_decode_v4_kernel(const bf16 *__restrict__ q, const bf16 *__restrict__ kv,
		     bf16 *__restrict__ out, float *__restrict__ part_o,
		     float *__restrict__ part_lse, int s, int t, int nsplit,
		     float scale_log2)
{
	extern __shared__ __align__(1024) unsigned char smem[];
	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
	const int g = lane >> 2, c = lane & 3;
	const int M = s * MLA_HEADS;
	const int bi = blockIdx.z, split = blockIdx.y, row0 = blockIdx.x * BM;
	const bf16 *qb = q + ((size_t)bi * M + row0) * MLA_DQK;
	const bf16 *kb = kv + (size_t)bi * t * MLA_DQK;
	const uint32_t sbase = smem_u32(smem);
	const uint32_t sQ = sbase + SQ_OFF, sKV = sbase + SKV_OFF;
	const uint32_t sP = sbase + SP_OFF;
	float *sMax = (float *)(smem + SMAX_OFF);
	float *sAlpha = (float *)(smem + SALPHA_OFF);
	float *sL = (float *)(smem + SL_OFF);

	load_rows(sQ, qb, BM);
	cp_async_commit();

	/* S = Q K^T: warp owns rows 16 rg.., keys 32 kg.. of the tile */
	const int rg = warp & 3, kg = warp >> 2;
	const int R0 = rg * 16 + g, R1 = R0 + 8;
	const int a_row = rg * 16 + (lane & 15);
	const uint32_t a_base = sQ + a_row * ROWB;
	const int a_x = a_row & 7, a_hi = lane >> 4;
	const int b_key = kg * 32 + (lane & 7) + ((lane >> 4) << 3);
	const int b_x = b_key & 7, b_hi = (lane >> 3) & 1;
	const uint32_t b_base = sKV + b_key * ROWB;
	/* chunk 8 k8 + (2 u + hi) lands at 8 k8 + ((2 u + hi) ^ x) */
	uint32_t a_off[4], b_off[4], p_off[4], v_off[4];
#pragma unroll
	for (int u = 0; u < 4; u++) {
		a_off[u] = ((2 * u + a_hi) ^ a_x) << 4;
		b_off[u] = ((2 * u + b_hi) ^ b_x) << 4;
	}
	/* O += P V: warp owns all 64 rows, dims 64 warp .. 64 warp + 63 */
	const int v_key = (lane & 7) + (((lane >> 3) & 1) << 3);
	const int v_x = v_key & 7;
	const uint32_t p_base = sP + (lane & 15) * BN * 2;
	const uint32_t v_base = sKV + v_key * ROWB + warp * 128;
#pragma unroll
	for (int u = 0; u < 4; u++) {
		p_off[u] = ((2 * u + (lane >> 4)) ^ (lane & 7)) << 4;
		v_off[u] = ((2 * u + (lane >> 4)) ^ v_x) << 4;
	}

	float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;
	float o[4][8][4];
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 8; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				o[i][j][e] = 0.f;

	const int ntiles = (t + BN - 1) / BN;
	const int tile_lo = split * ntiles / nsplit;
	const int tile_hi = (split + 1) * ntiles / nsplit;
	load_rows(sKV, kb + (size_t)tile_lo * BN * MLA_DQK,
		  min(BN, t - tile_lo * BN));
	cp_async_commit();
	for (int it = tile_lo; it < tile_hi; it++) {
		const int key0 = it * BN;
		const uint32_t buf = ((it - tile_lo) & 1) * TILE_BYTES;

		/* prefetch the next tile into the other buffer */
		if (it + 1 < tile_hi)
			load_rows(sKV + (TILE_BYTES - buf),
				  kb + (size_t)(key0 + BN) * MLA_DQK,
				  min(BN, t - key0 - BN));
		cp_async_commit();
		cp_async_wait<1>();
		__syncthreads();

		float sacc[4][4];
#pragma unroll
		for (int j = 0; j < 4; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				sacc[j][e] = 0.f;
#pragma unroll 1
		for (int k8 = 0; k8 < CHUNKS / 8; k8++) {
#pragma unroll
			for (int u = 0; u < 4; u++) {
				uint32_t a[4];
				ldsm_x4(a, a_base + k8 * 128 + a_off[u]);
#pragma unroll
				for (int jj = 0; jj < 2; jj++) {
					uint32_t bb[4];
					ldsm_x4(bb, b_base + buf + jj * 16 * ROWB +
						k8 * 128 + b_off[u]);
					mma16816(sacc[2 * jj], a, bb[0], bb[1]);
					mma16816(sacc[2 * jj + 1], a, bb[2],
						 bb[3]);
				}
			}
		}

		/* online softmax, in log2 units */
		float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
		for (int j = 0; j < 4; j++) {
#pragma unroll
			for (int e = 0; e < 4; e++) {
				sacc[j][e] *= scale_log2;
				if (key0 + BN > t &&
				    key0 + kg * 32 + 8 * j + 2 * c + (e & 1) >= t)
					sacc[j][e] = -INFINITY;
			}
			mx0 = fmaxf(mx0, fmaxf(sacc[j][0], sacc[j][1]));
			mx1 = fmaxf(mx1, fmaxf(sacc[j][2], sacc[j][3]));
		}
		mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
		mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
		mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
		mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
		if (c == 0) {
			sMax[kg * BM + R0] = mx0;
			sMax[kg * BM + R1] = mx1;
		}
		__syncthreads();
		const float mn0 = fmaxf(m0, fmaxf(sMax[R0], sMax[BM + R0]));
		const float mn1 = fmaxf(m1, fmaxf(sMax[R1], sMax[BM + R1]));
		const float al0 = exp2f(m0 - mn0), al1 = exp2f(m1 - mn1);
		m0 = mn0;
		m1 = mn1;
		float ls0 = 0.f, ls1 = 0.f;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			float p0 = exp2f(sacc[j][0] - mn0);
			float p1 = exp2f(sacc[j][1] - mn0);
			float p2 = exp2f(sacc[j][2] - mn1);
			float p3 = exp2f(sacc[j][3] - mn1);
			ls0 += p0 + p1;
			ls1 += p2 + p3;
			const int ch = kg * 4 + j;
			uint32_t *d0 = (uint32_t *)(smem + SP_OFF + R0 * BN * 2 +
				((ch ^ (R0 & 7)) << 4) + 4 * c);
			uint32_t *d1 = (uint32_t *)(smem + SP_OFF + R1 * BN * 2 +
				((ch ^ (R1 & 7)) << 4) + 4 * c);
			*d0 = pack_bf16(p0, p1);
			*d1 = pack_bf16(p2, p3);
		}
		l0 = l0 * al0 + ls0;
		l1 = l1 * al1 + ls1;
		if (kg == 0 && c == 0) {
			sAlpha[R0] = al0;
			sAlpha[R1] = al1;
		}
		__syncthreads();

		/* O = O * alpha + P V */
#pragma unroll
		for (int i = 0; i < 4; i++) {
			const float a0 = sAlpha[16 * i + g];
			const float a1 = sAlpha[16 * i + g + 8];
#pragma unroll
			for (int j = 0; j < 8; j++) {
				o[i][j][0] *= a0;
				o[i][j][1] *= a0;
				o[i][j][2] *= a1;
				o[i][j][3] *= a1;
			}
		}
#pragma unroll
		for (int kk = 0; kk < BN / 16; kk++) {
			uint32_t pa[4][4];
#pragma unroll
			for (int i = 0; i < 4; i++)
				ldsm_x4(pa[i], p_base + 16 * i * BN * 2 +
					p_off[kk]);
#pragma unroll
			for (int jj = 0; jj < 4; jj++) {
				uint32_t vb[4];
				ldsm_x4_t(vb, v_base + buf + 16 * kk * ROWB +
					  v_off[jj]);
#pragma unroll
				for (int i = 0; i < 4; i++) {
					mma16816(o[i][2 * jj], pa[i], vb[0], vb[1]);
					mma16816(o[i][2 * jj + 1], pa[i], vb[2],
						 vb[3]);
				}
			}
		}
		__syncthreads();
	}

	/* l was summed per thread over its own keys: finish the row sums */
	l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
	l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
	l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
	l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
	if (c == 0) {
		sL[kg * BM + R0] = l0;
		sL[kg * BM + R1] = l1;
	}
	__syncthreads();
	const size_t grow0 = (size_t)bi * M + row0;	/* first global row */
	if (nsplit > 1 && kg == 0 && c == 0) {
		part_lse[(grow0 + R0) * nsplit + split] =
			m0 + log2f(sL[R0] + sL[BM + R0]);
		part_lse[(grow0 + R1) * nsplit + split] =
			m1 + log2f(sL[R1] + sL[BM + R1]);
	}
#pragma unroll
	for (int i = 0; i < 4; i++) {
		const int r = 16 * i + g;
		const float inv0 = 1.f / (sL[r] + sL[BM + r]);
		const float inv1 = 1.f / (sL[r + 8] + sL[BM + r + 8]);
		const int col = warp * 64 + 2 * c;
		if (nsplit == 1) {
			bf16 *o0 = out + (grow0 + r) * MLA_DV + col;
			bf16 *o1 = o0 + 8 * MLA_DV;
#pragma unroll
			for (int j = 0; j < 8; j++) {
				*(__nv_bfloat162 *)(o0 + 8 * j) =
					__floats2bfloat162_rn(o[i][j][0] * inv0,
							      o[i][j][1] * inv0);
				*(__nv_bfloat162 *)(o1 + 8 * j) =
					__floats2bfloat162_rn(o[i][j][2] * inv1,
							      o[i][j][3] * inv1);
			}
		} else {
			float *o0 = part_o + ((grow0 + r) * nsplit + split) *
				MLA_DV + col;
			float *o1 = part_o + ((grow0 + r + 8) * nsplit + split) *
				MLA_DV + col;
#pragma unroll
			for (int j = 0; j < 8; j++) {
				*(float2 *)(o0 + 8 * j) = make_float2(
					o[i][j][0] * inv0, o[i][j][1] * inv0);
				*(float2 *)(o1 + 8 * j) = make_float2(
					o[i][j][2] * inv1, o[i][j][3] * inv1);
			}
		}
	}
}

/* out = sum over ranges of exp2(lse - max) * partial, renormalised */
__global__ void __launch_bounds__(128)
mla_decode_v4_combine(const float *__restrict__ part_o,
		      const float *__restrict__ part_lse,
		      bf16 *__restrict__ out, int nsplit)
{
	const size_t row = blockIdx.x;
	const float *lse = part_lse + row * nsplit;
	float mx = -INFINITY, wsum = 0.f;
	float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);

	for (int i = 0; i < nsplit; i++)
		mx = fmaxf(mx, lse[i]);
	for (int i = 0; i < nsplit; i++) {
		const float w = exp2f(lse[i] - mx);
		const float4 v = ((const float4 *)(part_o + (row * nsplit + i) *
						   MLA_DV))[threadIdx.x];
		wsum += w;
		acc.x += w * v.x;
		acc.y += w * v.y;
		acc.z += w * v.z;
		acc.w += w * v.w;
	}
	const float inv = 1.f / wsum;
	__nv_bfloat162 *o = (__nv_bfloat162 *)(out + row * MLA_DV) +
		2 * threadIdx.x;
	o[0] = __floats2bfloat162_rn(acc.x * inv, acc.y * inv);
	o[1] = __floats2bfloat162_rn(acc.z * inv, acc.w * inv);
}

/*
 * Ranges per (row tile, batch): the fewest that minimise waves x tiles
 * per block, a block per SM (the shared memory allows no more).
 */
static int choose_splits(int b, int s, int t, int *nsplit)
{
	static int sms;
	const int blocks = b * (s * MLA_HEADS / BM);
	const int ntiles = (t + BN - 1) / BN;
	long best = -1;

	if (!sms) {
		int dev;
		cudaError_t err = cudaGetDevice(&dev);
		if (err == cudaSuccess)
			err = cudaDeviceGetAttribute(&sms,
				cudaDevAttrMultiProcessorCount, dev);
		if (err != cudaSuccess)
			return err;
	}
	*nsplit = 1;
	for (int ns = 1; ns <= 32 && ns <= ntiles; ns++) {
		const long waves = ((long)blocks * ns + sms - 1) / sms;
		const long cost = waves * ((ntiles + ns - 1) / ns);
		if (best < 0 || cost < best) {
			best = cost;
			*nsplit = ns;
		}
	}
	return 0;
}

extern "C" size_t mla_decode_workspace_bytes(int b, int s, int t)
{
	int nsplit;

	if (choose_splits(b, s, t, &nsplit) || nsplit == 1)
		return 0;
	return (size_t)b * s * MLA_HEADS * nsplit * (MLA_DV + 1) *
		sizeof(float);
}

extern "C" int mla_decode_launch(const bf16 *q, const bf16 *kv, bf16 *out,
				 int b, int s, int t, void *workspace,
				 cudaStream_t stream)
{
	static int smem_set;
	const size_t rows = (size_t)b * s * MLA_HEADS;
	int nsplit, err;

	if (!smem_set) {
		err = cudaFuncSetAttribute(mla_decode_v4_kernel,
			cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
		if (err != cudaSuccess)
			return err;
		smem_set = 1;
	}
	err = choose_splits(b, s, t, &nsplit);
	if (err)
		return err;
	float *part_o = (float *)workspace;
	float *part_lse = part_o + rows * nsplit * MLA_DV;
	if (nsplit > 1 && !workspace)
		return cudaErrorInvalidValue;
	dim3 grid(s * MLA_HEADS / BM, nsplit, b);
	mla_decode_v4_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(
		q, kv, out, part_o, part_lse, s, t, nsplit,
		1.4426950408889634f / sqrtf((float)MLA_DQK));
	if (nsplit > 1)
		mla_decode_v4_combine<<<rows, 128, 0, stream>>>(
			part_o, part_lse, out, nsplit);
	return cudaGetLastError();
}
