/*
 * MLA decode, v10: v8 with its launch choices open to tuning.
 *
 * The kernel is v8's (TMA tile loads on mbarriers, lazy rescaling of the
 * output accumulator).  What v8 fixed by hand is now a parameter, each
 * defaulting to v8's choice, so that a build without them is v8:
 *
 *   MLA_RESCALE      the running maximum moves only when beaten by more
 *                    than this, in log2 units (v8: 8; 0 rescales at
 *                    every new maximum); compile time
 *   MLA_GRID_ORDER   0: blocks of one key range of consecutive row tiles
 *                    are launched together (v8); 1: the ranges of one row
 *                    tile are; compile time
 *   MLA_SPLITS       key ranges per row tile: 0 (or unset) lets the cost
 *                    model choose as v8 did, N > 0 forces N (capped at
 *                    the number of key tiles); read from the environment
 *                    at each launch, so one build serves every count
 */
#include <math.h>
#include <cudaTypedefs.h>
#include <stdint.h>
#include <stdlib.h>
#include "mla_decode.h"

#ifndef MLA_RESCALE
#define MLA_RESCALE 8
#endif
#ifndef MLA_GRID_ORDER
#define MLA_GRID_ORDER 0
#endif

#define BM 64			/* query rows per block */
#define BN 64			/* keys per tile */
#define THREADS 256		/* two warpgroups */
#define SLAB (64 * 128)		/* 64 rows x 64 bf16 */
#define NSLAB (MLA_DQK / 64)	/* 9 slabs hold a 576-wide tile */
#define TILE_BYTES (NSLAB * SLAB)

#define SQ_OFF 0
#define SKV_OFF (SQ_OFF + TILE_BYTES)
#define SP_OFF (SKV_OFF + 2 * TILE_BYTES)
#define SMAX_OFF (SP_OFF + SLAB)
#define SL_OFF (SMAX_OFF + 2 * BM * 4)
#define BAR_OFF (SL_OFF + 2 * BM * 4)	/* Q, then a full barrier a buffer */
#define SMEM_USED (BAR_OFF + 3 * 8)
#define SMEM_BYTES (SMEM_USED + 1024)	/* slack to align the base */

static __device__ __forceinline__ uint32_t smem_u32(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

static __device__ __forceinline__ void mbar_init(uint32_t bar, int count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n"
		     :: "r"(bar), "r"(count) : "memory");
}

/* make the initialised barriers visible to the async proxy */
static __device__ __forceinline__ void fence_mbar_init(void)
{
	asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* arrive once and expect `bytes` more of transactions this phase */
static __device__ __forceinline__ void mbar_expect_tx(uint32_t bar,
						      uint32_t bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
		     :: "r"(bar), "r"(bytes) : "memory");
}

static __device__ __forceinline__ void mbar_wait(uint32_t bar,
						 uint32_t parity)
{
	uint32_t done;

	do {
		asm volatile("{\n.reg .pred p;\n"
			     "mbarrier.try_wait.parity.shared::cta.b64 p, "
			     "[%1], %2;\n"
			     "selp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
	} while (!done);
}

static __device__ __forceinline__ void tma_load_2d(uint32_t dst,
						   const CUtensorMap *map,
						   uint32_t bar, int c0, int c1)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile"
		     ".mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], "
		     "[%2];\n"
		     :: "r"(dst), "l"((uint64_t)map), "r"(bar), "r"(c0),
		     "r"(c1) : "memory");
}

static __device__ __forceinline__ void tma_load_3d(uint32_t dst,
						   const CUtensorMap *map,
						   uint32_t bar, int c0, int c1,
						   int c2)
{
	asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile"
		     ".mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
		     "[%2];\n"
		     :: "r"(dst), "l"((uint64_t)map), "r"(bar), "r"(c0),
		     "r"(c1), "r"(c2) : "memory");
}

/* generic-proxy shared writes become visible to wgmma */
static __device__ __forceinline__ void fence_async_shared(void)
{
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

static __device__ __forceinline__ void wgmma_fence(void)
{
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void wgmma_commit(void)
{
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int N>
static __device__ __forceinline__ void wgmma_wait(void)
{
	asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N)
		     : "memory");
}

/* keep the compiler from touching accumulators across async wgmma */
template <int N>
static __device__ __forceinline__ void reg_fence(float *d)
{
#pragma unroll
	for (int i = 0; i < N; i++)
		asm volatile("" : "+f"(d[i]) :: "memory");
}

/*
 * Shared-memory matrix descriptor, 128-byte swizzle: start address,
 * leading byte offset (N-major: next 64 N-elements; unused K-major),
 * stride byte offset (next 8 rows), all >> 4.
 */
static __device__ __forceinline__ uint64_t make_desc(uint32_t addr,
						     uint32_t lbo, uint32_t sbo)
{
	return (uint64_t)((addr & 0x3ffff) >> 4) |
		((uint64_t)((lbo & 0x3ffff) >> 4) << 16) |
		((uint64_t)((sbo & 0x3ffff) >> 4) << 32) |
		((uint64_t)1 << 62);
}

static __device__ __forceinline__ void wgmma_n32(float *d, uint64_t da,
						     uint64_t db, int scale_d)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
		     "{%0, %1, %2, %3, %4, %5, %6, %7, "
		     "%8, %9, %10, %11, %12, %13, %14, %15}, "
		     "%16, %17, p, 1, 1, 0, 0;\n}\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]),
		  "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
		  "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
		: "l"(da), "l"(db), "r"(scale_d));
}

static __device__ __forceinline__ void wgmma_n256_tb(float *d, uint64_t da,
						     uint64_t db, int scale_d)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
		     "{%0, %1, %2, %3, %4, %5, %6, %7, "
		     "%8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23, "
		     "%24, %25, %26, %27, %28, %29, %30, %31, "
		     "%32, %33, %34, %35, %36, %37, %38, %39, "
		     "%40, %41, %42, %43, %44, %45, %46, %47, "
		     "%48, %49, %50, %51, %52, %53, %54, %55, "
		     "%56, %57, %58, %59, %60, %61, %62, %63, "
		     "%64, %65, %66, %67, %68, %69, %70, %71, "
		     "%72, %73, %74, %75, %76, %77, %78, %79, "
		     "%80, %81, %82, %83, %84, %85, %86, %87, "
		     "%88, %89, %90, %91, %92, %93, %94, %95, "
		     "%96, %97, %98, %99, %100, %101, %102, %103, "
		     "%104, %105, %106, %107, %108, %109, %110, %111, "
		     "%112, %113, %114, %115, %116, %117, %118, %119, "
		     "%120, %121, %122, %123, %124, %125, %126, %127}, "
		     "%128, %129, p, 1, 1, 0, 1;\n}\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]),
		  "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
		  "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
		  "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
		  "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
		  "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
		  "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]),
		  "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
		  "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]),
		  "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]),
		  "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
		  "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),
		  "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
		  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]),
		  "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
		  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]),
		  "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
		  "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
		  "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
		  "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]),
		  "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
		: "l"(da), "l"(db), "r"(scale_d));
}

static __device__ __forceinline__ uint32_t pack_bf16(float lo, float hi)
{
	__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
	return *(uint32_t *)&v;
}

/* the nine 64-dim boxes of 64 rows: Q rows of a block, or a cache tile
 * (rows past the cache's end arrive as zeros) */
static __device__ __forceinline__ void load_q(uint32_t dst,
					      const CUtensorMap *map,
					      uint32_t bar, int row)
{
	mbar_expect_tx(bar, TILE_BYTES);
#pragma unroll
	for (int k = 0; k < NSLAB; k++)
		tma_load_2d(dst + k * SLAB, map, bar, k * 64, row);
}

static __device__ __forceinline__ void load_tile(uint32_t dst,
						 const CUtensorMap *map,
						 uint32_t bar, int key0, int bi)
{
	mbar_expect_tx(bar, TILE_BYTES);
#pragma unroll
	for (int k = 0; k < NSLAB; k++)
		tma_load_3d(dst + k * SLAB, map, bar, k * 64, key0, bi);
}

__global__ void __launch_bounds__(THREADS, 1)
mla_decode_v13_kernel(const __grid_constant__ CUtensorMap tm_q,
		     const __grid_constant__ CUtensorMap tm_kv,
		     bf16 *__restrict__ out, float *__restrict__ part_o,
		     float *__restrict__ part_lse, int s, int t, int nsplit,
		     float scale_log2)
{
	extern __shared__ unsigned char smem_raw[];
	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
	const int g = lane >> 2, c = lane & 3;
	const int M = s * MLA_HEADS;
#if MLA_GRID_ORDER
	const int bi = blockIdx.z, split = blockIdx.x, row0 = blockIdx.y * BM;
#else
	const int bi = blockIdx.z, split = blockIdx.y, row0 = blockIdx.x * BM;
#endif
	const uint32_t raw = smem_u32(smem_raw);
	const uint32_t sbase = (raw + 1023) & ~1023u;
	unsigned char *smem = smem_raw + (sbase - raw);
	const uint32_t sQ = sbase + SQ_OFF, sKV = sbase + SKV_OFF;
	const uint32_t sP = sbase + SP_OFF;
	float *sMax = (float *)(smem + SMAX_OFF);
	float *sL = (float *)(smem + SL_OFF);
	const uint32_t barQ = sbase + BAR_OFF, barF = barQ + 8;

	/* warpgroup kg: keys 32 kg.. of each tile for S, dims 256 kg.. for
	 * O; its warp rg holds rows 16 rg + g and 16 rg + g + 8 of both */
	const int kg = warp >> 2, rg = warp & 3;
	const int R0 = rg * 16 + g, R1 = R0 + 8;
	const uint64_t dq = make_desc(sQ, 16, 1024);
	const uint64_t dp = make_desc(sP, 16, 1024);

	float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;
	float o[128];
#pragma unroll
	for (int i = 0; i < 128; i++)
		o[i] = 0.f;

	const int ntiles = (t + BN - 1) / BN;
	const int tile_lo = split * ntiles / nsplit;
	const int tile_hi = (split + 1) * ntiles / nsplit;

	if (tid == 0) {
		mbar_init(barQ, 1);
		mbar_init(barF, 1);
		mbar_init(barF + 8, 1);
		fence_mbar_init();
	}
	__syncthreads();
	if (tid == 0) {
		load_q(sQ, &tm_q, barQ, bi * M + row0);
		load_tile(sKV, &tm_kv, barF, tile_lo * BN, bi);
	}
	mbar_wait(barQ, 0);
	for (int it = tile_lo; it < tile_hi; it++) {
		const int key0 = it * BN, j = it - tile_lo;
		const uint32_t buf = (j & 1) * TILE_BYTES;

		/* prefetch the next tile into the other buffer, free since
		 * the end-of-tile barrier of tile it - 1 */
		if (tid == 0 && it + 1 < tile_hi)
			load_tile(sKV + (TILE_BYTES - buf), &tm_kv,
				  barF + 8 * ((j + 1) & 1), key0 + BN, bi);
		mbar_wait(barF + 8 * (j & 1), (j >> 1) & 1);

		/* S = Q K^T for this warpgroup's 32 keys */
		float sacc[16];
#pragma unroll
		for (int i = 0; i < 16; i++)
			sacc[i] = 0.f;
		const uint64_t dk = make_desc(sKV + buf + kg * 32 * 128, 16,
					      1024);
		wgmma_fence();
#pragma unroll
		for (int kk = 0; kk < MLA_DQK / 16; kk++) {
			const uint32_t off = ((kk >> 2) * SLAB + (kk & 3) * 32)
				>> 4;
			wgmma_n32(sacc, dq + off, dk + off, kk > 0);
		}
		wgmma_commit();
		wgmma_wait<0>();
		reg_fence<16>(sacc);

		/* online softmax, in log2 units; sacc[4 j + e]: key
		 * 32 kg + 8 j + 2 c + (e & 1), row e < 2 ? R0 : R1; the maxima
		 * are taken on raw scores (scale_log2 > 0) */
		float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
		for (int j = 0; j < 4; j++) {
#pragma unroll
			for (int e = 0; e < 4; e++) {
				if (key0 + BN > t &&
				    key0 + kg * 32 + 8 * j + 2 * c + (e & 1) >= t)
					sacc[4 * j + e] = -INFINITY;
			}
			mx0 = fmaxf(mx0, fmaxf(sacc[4 * j], sacc[4 * j + 1]));
			mx1 = fmaxf(mx1, fmaxf(sacc[4 * j + 2], sacc[4 * j + 3]));
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
		/* the maximum in use moves only when beaten by MLA_RESCALE */
		const float t0 = fmaxf(sMax[R0], sMax[BM + R0]) * scale_log2;
		const float t1 = fmaxf(sMax[R1], sMax[BM + R1]) * scale_log2;
		const bool up0 = t0 > m0 + (float)MLA_RESCALE,
			   up1 = t1 > m1 + (float)MLA_RESCALE;
		const float mn0 = up0 ? t0 : m0, mn1 = up1 ? t1 : m1;
		if (__any_sync(0xffffffffu, up0 || up1)) {
			const float al0 = exp2f(m0 - mn0), al1 = exp2f(m1 - mn1);
			l0 *= al0;
			l1 *= al1;
#pragma unroll
			for (int i = 0; i < 128; i += 4) {
				o[i] *= al0;
				o[i + 1] *= al0;
				o[i + 2] *= al1;
				o[i + 3] *= al1;
			}
		}
		m0 = mn0;
		m1 = mn1;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const float p0 = exp2f(fmaf(sacc[4 * j], scale_log2, -mn0));
			const float p1 = exp2f(fmaf(sacc[4 * j + 1], scale_log2,
						    -mn0));
			const float p2 = exp2f(fmaf(sacc[4 * j + 2], scale_log2,
						    -mn1));
			const float p3 = exp2f(fmaf(sacc[4 * j + 3], scale_log2,
						    -mn1));
			l0 += p0 + p1;
			l1 += p2 + p3;
			const int ch = kg * 4 + j;
			*(uint32_t *)(smem + SP_OFF + R0 * 128 +
				      ((ch ^ (R0 & 7)) << 4) + 4 * c) =
				pack_bf16(p0, p1);
			*(uint32_t *)(smem + SP_OFF + R1 * 128 +
				      ((ch ^ (R1 & 7)) << 4) + 4 * c) =
				pack_bf16(p2, p3);
		}
		fence_async_shared();
		__syncthreads();

		/* O += P V for this warpgroup's 256 dims */
		const uint64_t dv = make_desc(sKV + buf + kg * 4 * SLAB, SLAB,
					      1024);
		reg_fence<128>(o);
		wgmma_fence();
#pragma unroll
		for (int kk = 0; kk < BN / 16; kk++)
			wgmma_n256_tb(o, dp + ((kk * 32) >> 4),
				      dv + ((kk * 16 * 128) >> 4), 1);
		wgmma_commit();
		wgmma_wait<0>();
		reg_fence<128>(o);
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
	const float tot0 = sL[R0] + sL[BM + R0];
	const float tot1 = sL[R1] + sL[BM + R1];
	const float inv0 = 1.f / tot0, inv1 = 1.f / tot1;
	const size_t grow0 = (size_t)bi * M + row0;	/* first global row */
	const int col = kg * 256 + 2 * c;
	if (nsplit == 1) {
		bf16 *o0 = out + (grow0 + R0) * MLA_DV + col;
		bf16 *o1 = out + (grow0 + R1) * MLA_DV + col;
#pragma unroll
		for (int j = 0; j < 32; j++) {
			*(__nv_bfloat162 *)(o0 + 8 * j) = __floats2bfloat162_rn(
				o[4 * j] * inv0, o[4 * j + 1] * inv0);
			*(__nv_bfloat162 *)(o1 + 8 * j) = __floats2bfloat162_rn(
				o[4 * j + 2] * inv1, o[4 * j + 3] * inv1);
		}
	} else {
		if (kg == 0 && c == 0) {
			part_lse[(grow0 + R0) * nsplit + split] =
				m0 + log2f(tot0);
			part_lse[(grow0 + R1) * nsplit + split] =
				m1 + log2f(tot1);
		}
		float *o0 = part_o + ((grow0 + R0) * nsplit + split) * MLA_DV +
			col;
		float *o1 = part_o + ((grow0 + R1) * nsplit + split) * MLA_DV +
			col;
#pragma unroll
		for (int j = 0; j < 32; j++) {
			*(float2 *)(o0 + 8 * j) = make_float2(
				o[4 * j] * inv0, o[4 * j + 1] * inv0);
			*(float2 *)(o1 + 8 * j) = make_float2(
				o[4 * j + 2] * inv1, o[4 * j + 3] * inv1);
		}
	}
}

/* out = sum over ranges of exp2(lse - max) * partial, renormalised */
__global__ void __launch_bounds__(128)
mla_decode_v13_combine(const float *__restrict__ part_o,
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
 * Ranges per (row tile, batch), a block per SM (the shared memory allows
 * no more).  Cost in tile times: waves x (tiles per block + 2 for the
 * query load and epilogue), plus, with several ranges, the partials'
 * bytes (written, then read) at 3 TB/s over a tile time of 3.6 us.
 */
static int choose_splits(int b, int s, int t, int *nsplit)
{
	static int sms;
	const int blocks = b * (s * MLA_HEADS / BM);
	const int ntiles = (t + BN - 1) / BN;
	const double rows = (double)b * s * MLA_HEADS;
	double best = -1;

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
	{
		const char *env = getenv("MLA_SPLITS");
		const int forced = env ? atoi(env) : 0;
		if (forced > 0) {
			*nsplit = forced < ntiles ? forced : ntiles;
			return 0;
		}
	}
	for (int ns = 1; ns <= 32 && ns <= ntiles; ns++) {
		const long waves = ((long)blocks * ns + sms - 1) / sms;
		double cost = (double)waves * ((ntiles + ns - 1) / ns + 2);
		if (ns > 1)
			cost += rows * ns * (MLA_DV + 1) * 4 * 2 /
				(3e12 * 3.6e-6);
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

/* the driver's tensor-map encoder, found through the runtime */
static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled;

static int find_encoder(void)
{
	cudaDriverEntryPointQueryResult qr;
	void *fn = NULL;
	cudaError_t err;

	if (encode_tiled)
		return 0;
	err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn,
					       12000, cudaEnableDefault, &qr);
	if (err != cudaSuccess)
		return err;
	if (qr != cudaDriverEntryPointSuccess || !fn)
		return cudaErrorNotSupported;
	encode_tiled = (PFN_cuTensorMapEncodeTiled_v12000)fn;
	return 0;
}

/* bf16 rows of 576, boxes of 64 x 64 in the 128-byte swizzle; rank 3
 * adds the batch (dims: 576, rows, batches) */
static int encode_map(CUtensorMap *map, const bf16 *base, int rank,
		      uint64_t rows, uint64_t batches)
{
	const cuuint64_t dim[3] = { MLA_DQK, rows, batches };
	const cuuint64_t stride[2] = { MLA_DQK * sizeof(bf16),
				       rows * MLA_DQK * sizeof(bf16) };
	const cuuint32_t box[3] = { 64, BN, 1 };
	const cuuint32_t estride[3] = { 1, 1, 1 };

	if (encode_tiled(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, rank,
			 (void *)base, dim, stride, box, estride,
			 CU_TENSOR_MAP_INTERLEAVE_NONE,
			 CU_TENSOR_MAP_SWIZZLE_128B,
			 CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
			 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
		return cudaErrorInvalidValue;
	return 0;
}

extern "C" int mla_decode_launch(const bf16 *q, const bf16 *kv, bf16 *out,
				 int b, int s, int t, void *workspace,
				 cudaStream_t stream)
{
	static int smem_set;
	const size_t rows = (size_t)b * s * MLA_HEADS;
	int nsplit, err;

	if (!smem_set) {
		err = cudaFuncSetAttribute(mla_decode_v13_kernel,
			cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
		if (err != cudaSuccess)
			return err;
		smem_set = 1;
	}
	err = choose_splits(b, s, t, &nsplit);
	if (err)
		return err;
	CUtensorMap tm_q, tm_kv;
	err = find_encoder();
	if (!err)
		err = encode_map(&tm_q, q, 2, rows, 1);
	if (!err)
		err = encode_map(&tm_kv, kv, 3, t, b);
	if (err)
		return err;
	float *part_o = (float *)workspace;
	float *part_lse = part_o + rows * nsplit * MLA_DV;
	if (nsplit > 1 && !workspace)
		return cudaErrorInvalidValue;
#if MLA_GRID_ORDER
	dim3 grid(nsplit, s * MLA_HEADS / BM, b);
#else
	dim3 grid(s * MLA_HEADS / BM, nsplit, b);
#endif
	mla_decode_v13_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(
		tm_q, tm_kv, out, part_o, part_lse, s, t, nsplit,
		1.4426950408889634f / sqrtf((float)MLA_DQK));
	if (nsplit > 1)
		mla_decode_v13_combine<<<rows, 128, 0, stream>>>(
			part_o, part_lse, out, nsplit);
	return cudaGetLastError();
}
