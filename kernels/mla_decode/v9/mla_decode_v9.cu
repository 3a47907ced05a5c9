/*
 * MLA decode, v9: warp-specialised compute (S and softmax in one
 * warpgroup, P V in two others) on v8's TMA tile loads.
 *
 * In v8 both warpgroups computed half of S, exchanged row maxima, did the
 * softmax and then the P V product, meeting at three block barriers a
 * tile, so the tensor cores idled during every softmax.  Here warpgroup 0
 * computes S = Q K^T for a whole tile and its softmax and publishes P and
 * the rows' rescale factors through shared memory and an mbarrier, then
 * goes on to the next tile's S while warpgroups 1 and 2 (256 output dims
 * each) do O += P V of the tile before.  No block barrier is left in the
 * loop: tile buffers are refilled once both P V warpgroups have arrived on
 * the buffer's "done" mbarrier.  To make room for four buffers (the load
 * of a tile has the time of three tiles to arrive) beside Q, tiles are 32
 * keys (36 KB).  Lazy rescaling as in v7.
 */
#include <math.h>
#include <cudaTypedefs.h>
#include <stdint.h>
#include "mla_decode.h"

#define BM 64			/* query rows per block */
#define BN 32			/* keys per tile */
#define CN 64			/* keys per tile of the split cost model */
#define NBUF 4			/* tile buffers */
#define THREADS 384		/* three warpgroups */
#define NSLAB (MLA_DQK / 64)	/* 64-dim slabs of a 576-wide row */
#define SLAB_Q (BM * 128)	/* 64 rows x 64 bf16 */
#define SLAB_K (BN * 128)	/* 32 keys x 64 bf16 */
#define Q_BYTES (NSLAB * SLAB_Q)
#define TILE_BYTES (NSLAB * SLAB_K)

#define SQ_OFF 0
#define SKV_OFF (SQ_OFF + Q_BYTES)
#define SP_OFF (SKV_OFF + NBUF * TILE_BYTES)
#define SALPHA_OFF (SP_OFF + SLAB_Q)	/* P: 64 rows x 32 keys, 128-B rows */
#define SL_OFF (SALPHA_OFF + BM * 4)
#define SM_OFF (SL_OFF + BM * 4)
#define BAR_OFF (SM_OFF + BM * 4)
#define SMEM_USED (BAR_OFF + (2 + 2 * NBUF) * 8)
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

/* the query rows of a block: nine boxes of 64 rows x 64 dims */
static __device__ __forceinline__ void load_q(uint32_t dst,
					      const CUtensorMap *map,
					      uint32_t bar, int row)
{
	mbar_expect_tx(bar, Q_BYTES);
#pragma unroll
	for (int k = 0; k < NSLAB; k++)
		tma_load_2d(dst + k * SLAB_Q, map, bar, k * 64, row);
}

/* a cache tile: nine boxes of 32 keys x 64 dims (keys past the cache's
 * end arrive as zeros) */
static __device__ __forceinline__ void load_tile(uint32_t dst,
						 const CUtensorMap *map,
						 uint32_t bar, int key0, int bi)
{
	mbar_expect_tx(bar, TILE_BYTES);
#pragma unroll
	for (int k = 0; k < NSLAB; k++)
		tma_load_3d(dst + k * SLAB_K, map, bar, k * 64, key0, bi);
}

static __device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n"
		     :: "r"(bar) : "memory");
}

__global__ void __launch_bounds__(THREADS, 1)
mla_decode_v9_kernel(const __grid_constant__ CUtensorMap tm_q,
		     const __grid_constant__ CUtensorMap tm_kv,
		     bf16 *__restrict__ out, float *__restrict__ part_o,
		     float *__restrict__ part_lse, int s, int t, int nsplit,
		     float scale_log2)
{
	extern __shared__ unsigned char smem_raw[];
	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
	const int g = lane >> 2, c = lane & 3;
	const int M = s * MLA_HEADS;
	const int bi = blockIdx.z, split = blockIdx.y, row0 = blockIdx.x * BM;
	const uint32_t raw = smem_u32(smem_raw);
	const uint32_t sbase = (raw + 1023) & ~1023u;
	unsigned char *smem = smem_raw + (sbase - raw);
	const uint32_t sQ = sbase + SQ_OFF, sKV = sbase + SKV_OFF;
	const uint32_t sP = sbase + SP_OFF;
	float *sAlpha = (float *)(smem + SALPHA_OFF);
	float *sL = (float *)(smem + SL_OFF);
	float *sM = (float *)(smem + SM_OFF);
	/* Q; tile full (TMA) a buffer; tile done (P V read it) a buffer;
	 * P ready */
	const uint32_t barQ = sbase + BAR_OFF, barF = barQ + 8;
	const uint32_t barD = barF + 8 * NBUF, barP = barD + 8 * NBUF;

	/* warpgroup 0: S and the softmax for every tile; warpgroups 1 and
	 * 2: O += P V for dims 256 (wg - 1)..; warp rg of a warpgroup holds
	 * rows 16 rg + g and 16 rg + g + 8 */
	const int wg = tid >> 7, rg = warp & 3;
	const int R0 = rg * 16 + g, R1 = R0 + 8;

	const int ntiles = (t + BN - 1) / BN;
	const int tile_lo = split * ntiles / nsplit;
	const int tile_hi = (split + 1) * ntiles / nsplit;
	const int n = tile_hi - tile_lo;

	if (tid == 0) {
		mbar_init(barQ, 1);
		for (int k = 0; k < NBUF; k++) {
			mbar_init(barF + 8 * k, 1);
			mbar_init(barD + 8 * k, 2 * 128);
		}
		mbar_init(barP, 128);
		fence_mbar_init();
	}
	__syncthreads();
	if (tid == 0) {
		load_q(sQ, &tm_q, barQ, bi * M + row0);
		for (int k = 0; k < NBUF && k < n; k++)
			load_tile(sKV + k * TILE_BYTES, &tm_kv, barF + 8 * k,
				  (tile_lo + k) * BN, bi);
	}

	if (wg == 0) {
		const uint64_t dq = make_desc(sQ, 16, 1024);
		float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;

		mbar_wait(barQ, 0);
		for (int j = 0; j < n; j++) {
			const int key0 = (tile_lo + j) * BN, b = j & (NBUF - 1);

			mbar_wait(barF + 8 * b, (j / NBUF) & 1);
			/* S = Q K^T for the tile's 32 keys */
			float sacc[16];
#pragma unroll
			for (int i = 0; i < 16; i++)
				sacc[i] = 0.f;
			const uint64_t dk = make_desc(sKV + b * TILE_BYTES, 16,
						      1024);
			wgmma_fence();
#pragma unroll
			for (int kk = 0; kk < MLA_DQK / 16; kk++) {
				const uint32_t oq = ((kk >> 2) * SLAB_Q +
						     (kk & 3) * 32) >> 4;
				const uint32_t ok = ((kk >> 2) * SLAB_K +
						     (kk & 3) * 32) >> 4;
				wgmma_n32(sacc, dq + oq, dk + ok, kk > 0);
			}
			wgmma_commit();
			wgmma_wait<0>();
			reg_fence<16>(sacc);

			/* online softmax, in log2 units; sacc[4 i + e]: key
			 * 8 i + 2 c + (e & 1), row e < 2 ? R0 : R1; maxima on
			 * raw scores (scale_log2 > 0) */
			float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
			for (int i = 0; i < 4; i++) {
#pragma unroll
				for (int e = 0; e < 4; e++) {
					if (key0 + BN > t &&
					    key0 + 8 * i + 2 * c + (e & 1) >= t)
						sacc[4 * i + e] = -INFINITY;
				}
				mx0 = fmaxf(mx0, fmaxf(sacc[4 * i],
						       sacc[4 * i + 1]));
				mx1 = fmaxf(mx1, fmaxf(sacc[4 * i + 2],
						       sacc[4 * i + 3]));
			}
			mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
			mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
			mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
			mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
			/* the maximum in use moves only when beaten by more
			 * than 8 */
			const float t0 = mx0 * scale_log2, t1 = mx1 * scale_log2;
			const float mn0 = t0 > m0 + 8.f ? t0 : m0;
			const float mn1 = t1 > m1 + 8.f ? t1 : m1;
			const float al0 = mn0 == m0 ? 1.f : exp2f(m0 - mn0);
			const float al1 = mn1 == m1 ? 1.f : exp2f(m1 - mn1);
			l0 *= al0;
			l1 *= al1;
			m0 = mn0;
			m1 = mn1;
			uint32_t pk[8];
#pragma unroll
			for (int i = 0; i < 4; i++) {
				const float p0 = exp2f(fmaf(sacc[4 * i],
							    scale_log2, -mn0));
				const float p1 = exp2f(fmaf(sacc[4 * i + 1],
							    scale_log2, -mn0));
				const float p2 = exp2f(fmaf(sacc[4 * i + 2],
							    scale_log2, -mn1));
				const float p3 = exp2f(fmaf(sacc[4 * i + 3],
							    scale_log2, -mn1));
				l0 += p0 + p1;
				l1 += p2 + p3;
				pk[2 * i] = pack_bf16(p0, p1);
				pk[2 * i + 1] = pack_bf16(p2, p3);
			}
			/* P and alpha are free once P V of the tile before
			 * has run */
			if (j > 0)
				mbar_wait(barD + 8 * ((j - 1) & (NBUF - 1)),
					  ((j - 1) / NBUF) & 1);
#pragma unroll
			for (int i = 0; i < 4; i++) {
				*(uint32_t *)(smem + SP_OFF + R0 * 128 +
					      ((i ^ (R0 & 7)) << 4) + 4 * c) =
					pk[2 * i];
				*(uint32_t *)(smem + SP_OFF + R1 * 128 +
					      ((i ^ (R1 & 7)) << 4) + 4 * c) =
					pk[2 * i + 1];
			}
			if (c == 0) {
				sAlpha[R0] = al0;
				sAlpha[R1] = al1;
			}
			fence_async_shared();
			mbar_arrive(barP);
		}
		/* l was summed per thread over its own keys */
		l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
		l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
		l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
		l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
		if (c == 0) {
			sL[R0] = l0;
			sL[R1] = l1;
			sM[R0] = m0;
			sM[R1] = m1;
		}
		__syncthreads();
		return;
	}

	const int vg = wg - 1;
	const uint64_t dp = make_desc(sP, 16, 1024);
	float o[128];
#pragma unroll
	for (int i = 0; i < 128; i++)
		o[i] = 0.f;

	for (int j = 0; j < n; j++) {
		const int b = j & (NBUF - 1);

		mbar_wait(barP, j & 1);
		mbar_wait(barF + 8 * b, (j / NBUF) & 1);
		const float al0 = sAlpha[R0], al1 = sAlpha[R1];
		if (__any_sync(0xffffffffu, al0 != 1.f || al1 != 1.f)) {
#pragma unroll
			for (int i = 0; i < 128; i += 4) {
				o[i] *= al0;
				o[i + 1] *= al0;
				o[i + 2] *= al1;
				o[i + 3] *= al1;
			}
		}
		/* O += P V for this warpgroup's 256 dims */
		const uint64_t dv = make_desc(sKV + b * TILE_BYTES +
					      vg * 4 * SLAB_K, SLAB_K, 1024);
		reg_fence<128>(o);
		wgmma_fence();
#pragma unroll
		for (int kk = 0; kk < BN / 16; kk++)
			wgmma_n256_tb(o, dp + ((kk * 32) >> 4),
				      dv + ((kk * 16 * 128) >> 4), 1);
		wgmma_commit();
		wgmma_wait<0>();
		reg_fence<128>(o);
		mbar_arrive(barD + 8 * b);
		/* refill the buffer once both warpgroups are done with it */
		if (tid == 128 && j + NBUF < n) {
			mbar_wait(barD + 8 * b, (j / NBUF) & 1);
			load_tile(sKV + b * TILE_BYTES, &tm_kv, barF + 8 * b,
				  (tile_lo + j + NBUF) * BN, bi);
		}
		__syncwarp();
	}

	__syncthreads();
	const float tot0 = sL[R0], tot1 = sL[R1];
	const float inv0 = 1.f / tot0, inv1 = 1.f / tot1;
	const size_t grow0 = (size_t)bi * M + row0;	/* first global row */
	const int col = vg * 256 + 2 * c;
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
		if (vg == 0 && c == 0) {
			part_lse[(grow0 + R0) * nsplit + split] =
				sM[R0] + log2f(tot0);
			part_lse[(grow0 + R1) * nsplit + split] =
				sM[R1] + log2f(tot1);
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
mla_decode_v9_combine(const float *__restrict__ part_o,
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
	const int ntiles = (t + CN - 1) / CN;
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
		      uint64_t rows, uint64_t batches,
		      uint32_t box_rows)
{
	const cuuint64_t dim[3] = { MLA_DQK, rows, batches };
	const cuuint64_t stride[2] = { MLA_DQK * sizeof(bf16),
				       rows * MLA_DQK * sizeof(bf16) };
	const cuuint32_t box[3] = { 64, box_rows, 1 };
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
		err = cudaFuncSetAttribute(mla_decode_v9_kernel,
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
		err = encode_map(&tm_q, q, 2, rows, 1, BM);
	if (!err)
		err = encode_map(&tm_kv, kv, 3, t, b, BN);
	if (err)
		return err;
	float *part_o = (float *)workspace;
	float *part_lse = part_o + rows * nsplit * MLA_DV;
	if (nsplit > 1 && !workspace)
		return cudaErrorInvalidValue;
	dim3 grid(s * MLA_HEADS / BM, nsplit, b);
	mla_decode_v9_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(
		tm_q, tm_kv, out, part_o, part_lse, s, t, nsplit,
		1.4426950408889634f / sqrtf((float)MLA_DQK));
	if (nsplit > 1)
		mla_decode_v9_combine<<<rows, 128, 0, stream>>>(
			part_o, part_lse, out, nsplit);
	return cudaGetLastError();
}
