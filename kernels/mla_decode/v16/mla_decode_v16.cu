/*
 * MLA decode, v16: v13 with its decode ranges merged inside a cluster and
 * the second warpgroup's S started after the first's.
 *
 * v13's schedule, two changes:
 * - MLA_STAGGER (default 1): warpgroup 1 starts the bulk of S of tile b
 *   only once warpgroup 0's S of tile a is done (mbarrier Sa), so the
 *   tensor pipe runs S(b) while warpgroup 0 computes the softmax of a,
 *   instead of finishing both S together and then idling through it.
 * - MLA_CLUSTER (default 1): with two key ranges (decode) the two blocks
 *   of a row tile form a 2-block cluster; at the end each block sends the
 *   half of its normalised partial that the other finishes (64 KB and the
 *   rows' log-sum-exp) into the other's shared memory, and each writes
 *   half of the output.  No fp32 partials go through global memory and no
 *   combine kernel runs.  Other split counts keep v13's combine kernel.
 *
 * From v13:
 * v10's loads (TMA on mbarriers, 64-row Q block, two 64-key tile
 * buffers) and lazy rescaling, with a new consumer schedule: warpgroup 0
 * computes S = Q K^T (m64n64k16, the whole 64 keys) and the softmax of
 * the even tiles of its range, warpgroup 1 those of the odd ones; each
 * owns 256 of the 512 output dims and applies both tiles' P in order
 * (its own from registers, the other's from a shared P slab).  Row maxima
 * need no exchange inside a tile (a row's 64 scores sit in one quad); the
 * maximum in use passes from tile to tile with P on two mbarriers.  No
 * block barrier in the loop: each slab group of a buffer (rope slab,
 * slabs 0-3, slabs 4-7) has its own full barrier and is refilled by the
 * warpgroup that read it last as soon as its reads are done.
 *
 * Tuning parameters as v10 (MLA_RESCALE, MLA_GRID_ORDER, MLA_SPLITS), and
 * MLA_KV_HINT: an L2 policy on the cache tile loads (0 none, 1 evict
 * first, 2 evict last).  MLA_TIMING_NOLOAD builds a timing experiment
 * only (no refills, results wrong): what the tile loads cost.
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
#ifndef MLA_STAGGER
#define MLA_STAGGER 1
#endif
#ifndef MLA_CLUSTER
#define MLA_CLUSTER 1
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
#define SM_OFF (SP_OFF + SLAB)
#define SL_OFF (SM_OFF + BM * 4)
#define BAR_OFF (SL_OFF + 2 * BM * 4)	/* Q, six full, Pa, Pb, Sa */
#define SMEM_USED (BAR_OFF + 10 * 8)
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

#ifndef MLA_KV_HINT
#define MLA_KV_HINT 0
#endif

#if MLA_KV_HINT
/* with an L2 policy for the cache tiles (MLA_KV_HINT 1: evict first,
 * 2: evict last) */
static __device__ __forceinline__ void tma_load_3d_hint(uint32_t dst,
							const CUtensorMap *map,
							uint32_t bar, int c0,
							int c1, int c2)
{
	uint64_t pol;

	if (MLA_KV_HINT == 1)
		asm volatile("createpolicy.fractional.L2::evict_first.b64 "
			     "%0, 1.0;\n" : "=l"(pol));
	else
		asm volatile("createpolicy.fractional.L2::evict_last.b64 "
			     "%0, 1.0;\n" : "=l"(pol));
	asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile"
		     ".mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, "
		     "{%3, %4, %5}], [%2], %6;\n"
		     :: "r"(dst), "l"((uint64_t)map), "r"(bar), "r"(c0),
		     "r"(c1), "r"(c2), "l"(pol) : "memory");
}

#else
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
#endif

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

static __device__ __forceinline__ void wgmma_n64(float *d, uint64_t da,
						     uint64_t db, int scale_d)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
		     "{%0, %1, %2, %3, %4, %5, %6, %7, "
		     "%8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23, "
		     "%24, %25, %26, %27, %28, %29, %30, %31}, "
		     "%32, %33, p, 1, 1, 0, 0;\n}\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]),
		  "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
		  "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
		  "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
		  "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
		: "l"(da), "l"(db), "r"(scale_d));
}

static __device__ __forceinline__ void wgmma_n256_ra(float *d, const uint32_t *a,
						     uint64_t db, int scale_d)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
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
		     "{%128, %129, %130, %131}, %132, p, 1, 1, 1;\n}\n"
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
		: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db),
		  "r"(scale_d));
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
/* a zero the compiler cannot share between registers: accumulators of
 * different wgmma must not alias through a common constant */
static __device__ __forceinline__ void zero_reg(float &r)
{
	asm volatile("mov.b32 %0, 0;\n" : "=f"(r));
}

static __device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n"
		     :: "r"(bar) : "memory");
}

/* every thread of the cluster: what each wrote before is seen after */
static __device__ __forceinline__ void cluster_sync_all(void)
{
	asm volatile("barrier.cluster.arrive.release.aligned;\n"
		     "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ uint32_t cluster_rank(void)
{
	uint32_t r;

	asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
	return r;
}

/* the address of the same shared location in block `rank` */
static __device__ __forceinline__ uint32_t map_rank(uint32_t addr,
						    uint32_t rank)
{
	uint32_t r;

	asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
		     : "=r"(r) : "r"(addr), "r"(rank));
	return r;
}

static __device__ __forceinline__ void st_cluster_v4(uint32_t addr, float a,
						     float b, float c,
						     float d)
{
	asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};\n"
		     :: "r"(addr), "f"(a), "f"(b), "f"(c), "f"(d)
		     : "memory");
}

#if MLA_KV_HINT
#define KV_LOAD tma_load_3d_hint
#else
#define KV_LOAD tma_load_3d
#endif

/* slab groups of a tile buffer, each on its own full barrier: G8 the
 * rope slab (read by S alone), GLO slabs 0-3 (also V for dims 0-255),
 * GHI slabs 4-7 (V for dims 256-511) */
#define G8 0
#define GLO 1
#define GHI 2

/* issue the loads of one slab group of key tile `tile` into buffer
 * `bufi` (thread of the warpgroup that freed it) */
static __device__ __forceinline__ void load_group(uint32_t skv, uint32_t barF,
						  const CUtensorMap *map,
						  int bufi, int grp, int tile,
						  int bi)
{
	const uint32_t dst = skv + bufi * TILE_BYTES;
	const uint32_t bar = barF + 8 * (bufi * 3 + grp);

	if (grp == G8) {
		mbar_expect_tx(bar, SLAB);
		KV_LOAD(dst + 8 * SLAB, map, bar, 8 * 64, tile * BN, bi);
	} else {
		const int k0 = grp == GLO ? 0 : 4;
		mbar_expect_tx(bar, 4 * SLAB);
#pragma unroll
		for (int k = 0; k < 4; k++)
			KV_LOAD(dst + (k0 + k) * SLAB, map, bar,
				    (k0 + k) * 64, tile * BN, bi);
	}
}

/* issue the S k-steps over one slab group (scale_d 0 on the first) */
static __device__ __forceinline__ void s_group(float *sacc, uint64_t dq,
					       uint64_t dk, int grp, int first)
{
	if (grp == G8) {
#pragma unroll
		for (int kk = 32; kk < 36; kk++) {
			const uint32_t off = ((kk >> 2) * SLAB +
					      (kk & 3) * 32) >> 4;
			wgmma_n64(sacc, dq + off, dk + off,
				  !(first && kk == 32));
		}
	} else {
		const int k0 = grp == GLO ? 0 : 16;
#pragma unroll
		for (int kk = 0; kk < 16; kk++) {
			const uint32_t off = (((k0 + kk) >> 2) * SLAB +
					      ((k0 + kk) & 3) * 32) >> 4;
			wgmma_n64(sacc, dq + off, dk + off,
				  !(first && kk == 0));
		}
	}
}

/*
 * One warpgroup's softmax of its own 64-key tile (S in sacc, m64n64
 * layout: sacc[4 j + e] is key 8 j + 2 c + (e & 1) of row e < 2 ? R0 : R1).
 * mrun0/1 hold the maximum in use before the tile and receive the one
 * after it; returns alpha (rescale of what came before) in al0/1, adds
 * the tile's sums to l (after scaling l by alpha), leaves P packed as the
 * A fragments of four k16 steps in pa, and writes P to sP.
 */
static __device__ __forceinline__ void tile_softmax(float *sacc, int key0,
						    int c, int t,
						    float scale_log2,
						    float &mrun0, float &mrun1,
						    float &al0, float &al1,
						    float &l0, float &l1,
						    uint32_t *pa)
{
	float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
	for (int j = 0; j < 8; j++) {
#pragma unroll
		for (int e = 0; e < 4; e++) {
			if (key0 + BN > t && key0 + 8 * j + 2 * c + (e & 1) >= t)
				sacc[4 * j + e] = -INFINITY;
		}
		mx0 = fmaxf(mx0, fmaxf(sacc[4 * j], sacc[4 * j + 1]));
		mx1 = fmaxf(mx1, fmaxf(sacc[4 * j + 2], sacc[4 * j + 3]));
	}
	mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
	mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
	mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
	mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
	const float t0 = mx0 * scale_log2, t1 = mx1 * scale_log2;
	const float mn0 = t0 > mrun0 + (float)MLA_RESCALE ? t0 : mrun0;
	const float mn1 = t1 > mrun1 + (float)MLA_RESCALE ? t1 : mrun1;
	al0 = exp2f(mrun0 - mn0);
	al1 = exp2f(mrun1 - mn1);
	mrun0 = mn0;
	mrun1 = mn1;
	l0 *= al0;
	l1 *= al1;
#pragma unroll
	for (int j = 0; j < 8; j++) {
		const float p0 = exp2f(fmaf(sacc[4 * j], scale_log2, -mn0));
		const float p1 = exp2f(fmaf(sacc[4 * j + 1], scale_log2, -mn0));
		const float p2 = exp2f(fmaf(sacc[4 * j + 2], scale_log2, -mn1));
		const float p3 = exp2f(fmaf(sacc[4 * j + 3], scale_log2, -mn1));
		l0 += p0 + p1;
		l1 += p2 + p3;
		pa[2 * j] = pack_bf16(p0, p1);
		pa[2 * j + 1] = pack_bf16(p2, p3);
	}
}

/* P (packed by tile_softmax) into the 64 x 64 swizzled P slab */
static __device__ __forceinline__ void store_p(unsigned char *sp,
					       const uint32_t *pa, int R0,
					       int R1, int c)
{
#pragma unroll
	for (int j = 0; j < 8; j++) {
		*(uint32_t *)(sp + R0 * 128 + ((j ^ (R0 & 7)) << 4) + 4 * c) =
			pa[2 * j];
		*(uint32_t *)(sp + R1 * 128 + ((j ^ (R1 & 7)) << 4) + 4 * c) =
			pa[2 * j + 1];
	}
}

template <bool WAIT>
static __device__ __forceinline__ void scale_o(float *o, float al0,
					       float al1)
{
	if (__any_sync(0xffffffffu, al0 != 1.f || al1 != 1.f)) {
		/* a product still in flight (S of the other tile): let it
		 * finish first, so that ptxas keeps the rest asynchronous */
		if (WAIT)
			wgmma_wait<0>();
		reg_fence<128>(o);
#pragma unroll
		for (int i = 0; i < 128; i += 4) {
			o[i] *= al0;
			o[i + 1] *= al0;
			o[i + 2] *= al1;
			o[i + 3] *= al1;
		}
	}
}

/* O += P V over one tile for a warpgroup's 256 dims: P from registers */
static __device__ __forceinline__ void pv_regs(float *o, const uint32_t *pa,
					       uint64_t dv)
{
	reg_fence<128>(o);
	wgmma_fence();
#pragma unroll
	for (int kk = 0; kk < BN / 16; kk++) {
		const uint32_t a[4] = { pa[4 * kk], pa[4 * kk + 1],
					pa[4 * kk + 2], pa[4 * kk + 3] };
		wgmma_n256_ra(o, a, dv + ((kk * 16 * 128) >> 4), 1);
	}
	wgmma_commit();
}

/* the same with P from the shared P slab */
static __device__ __forceinline__ void pv_smem(float *o, uint64_t dp,
					       uint64_t dv)
{
	reg_fence<128>(o);
	wgmma_fence();
#pragma unroll
	for (int kk = 0; kk < BN / 16; kk++)
		wgmma_n256_tb(o, dp + ((kk * 32) >> 4),
			      dv + ((kk * 16 * 128) >> 4), 1);
	wgmma_commit();
}

/*
 * Two warpgroups in ping-pong over pairs of key tiles (a, b = a + 1):
 * warpgroup 0 computes S and the softmax of a, warpgroup 1 those of b;
 * warpgroup 0 owns O's dims 0-255, warpgroup 1 dims 256-511.  Each
 * applies both tiles' P in order: its own from registers, the other's
 * from the shared P slab.  The maximum in use passes from a to b to the
 * next a through shared memory with P (mbarriers Pa, Pb), so one
 * warpgroup's softmax runs while the other's products keep the tensor
 * pipe busy.  The slab groups of a buffer are refilled by the warpgroup
 * that read them last, as soon as it has.
 */
__global__ void __launch_bounds__(THREADS, 1)
mla_decode_v16_kernel(const __grid_constant__ CUtensorMap tm_q,
		     const __grid_constant__ CUtensorMap tm_kv,
		     bf16 *__restrict__ out, float *__restrict__ part_o,
		     float *__restrict__ part_lse, int s, int t, int nsplit,
		     int cmerge, float scale_log2)
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
	float *sM = (float *)(smem + SM_OFF);
	float *sL = (float *)(smem + SL_OFF);
	const uint32_t barQ = sbase + BAR_OFF, barF = barQ + 8;
	const uint32_t barPa = barF + 6 * 8, barPb = barPa + 8;
	const uint32_t barSa = barPb + 8;

	/* the warpgroup index through a shuffle, so that the compiler sees
	 * it uniform and keeps the wgmma of each role's branch asynchronous */
	const int kg = __shfl_sync(0xffffffffu, warp >> 2, 0), rg = warp & 3;
	const int R0 = rg * 16 + g, R1 = R0 + 8;
	const uint64_t dq = make_desc(sQ, 16, 1024);
	const uint64_t dp = make_desc(sP, 16, 1024);

	float mrun0 = -INFINITY, mrun1 = -INFINITY, l0 = 0.f, l1 = 0.f;
	float o[128];
#pragma unroll
	for (int i = 0; i < 128; i++)
		zero_reg(o[i]);

	const int ntiles = (t + BN - 1) / BN;
	const int tile_lo = split * ntiles / nsplit;
	const int tile_hi = (split + 1) * ntiles / nsplit;

	if (tid == 0) {
		mbar_init(barQ, 1);
		for (int i = 0; i < 6; i++)
			mbar_init(barF + 8 * i, 1);
		mbar_init(barPa, 128);
		mbar_init(barPb, 128);
		mbar_init(barSa, 128);
		fence_mbar_init();
	}
	__syncthreads();
	if (tid == 0) {
		load_q(sQ, &tm_q, barQ, bi * M + row0);
		for (int i = 0; i < 2 && tile_lo + i < tile_hi; i++) {
			load_group(sKV, barF, &tm_kv, i, G8, tile_lo + i, bi);
			load_group(sKV, barF, &tm_kv, i, GLO, tile_lo + i, bi);
			load_group(sKV, barF, &tm_kv, i, GHI, tile_lo + i, bi);
		}
	}
	mbar_wait(barQ, 0);

	/* V for this warpgroup's dims in buffer 0 / 1 */
	const uint64_t dv0 = make_desc(sKV + kg * 4 * SLAB, SLAB, 1024);
	const uint64_t dv1 = make_desc(sKV + TILE_BYTES + kg * 4 * SLAB, SLAB,
				       1024);
	const uint64_t dk0 = make_desc(sKV, 16, 1024);
	const uint64_t dk1 = make_desc(sKV + TILE_BYTES, 16, 1024);
#ifdef MLA_TIMING_NOLOAD
	/* timing experiment only (results wrong): no refills, every tile
	 * computes on the first two */
	const bool leader = false;
#define FPAR 0
#else
	const bool leader = (tid & 127) == 0;
#define FPAR par
#endif

	if (kg == 0) {
		for (int a = tile_lo, p = 0; a < tile_hi; a += 2, p++) {
			const int b = a + 1;
			const bool has_b = b < tile_hi;
			const uint32_t par = p & 1;
			float sacc[32];
			uint32_t pa[16];
#pragma unroll
			for (int i = 0; i < 32; i++)
				zero_reg(sacc[i]);

			/* S of tile a: the rope slab, then (once the previous
			 * P V of tile b - 2 is done, freeing its dims 0-255 for
			 * tile b) slabs 0-3, then 4-7 */
			reg_fence<128>(o);
			wgmma_fence();
			mbar_wait(barF + 8 * G8, FPAR);
			s_group(sacc, dq, dk0, G8, 1);
			wgmma_commit();
			if (p > 0) {
				wgmma_wait<1>();
				reg_fence<128>(o);
				if (leader && b < tile_hi)
					load_group(sKV, barF, &tm_kv, 1, GLO,
						   b, bi);
			}
			mbar_wait(barF + 8 * GLO, FPAR);
			s_group(sacc, dq, dk0, GLO, 0);
			mbar_wait(barF + 8 * GHI, FPAR);
			s_group(sacc, dq, dk0, GHI, 0);
			wgmma_commit();
			wgmma_wait<0>();
			reg_fence<32>(sacc);
#if MLA_STAGGER
			mbar_arrive(barSa);
#endif
			if (leader && a + 2 < tile_hi)
				load_group(sKV, barF, &tm_kv, 0, G8, a + 2, bi);

			float al0, al1;
			tile_softmax(sacc, a * BN, c, t, scale_log2, mrun0,
				     mrun1, al0, al1, l0, l1, pa);
			scale_o<false>(o, al0, al1);
			store_p(smem + SP_OFF, pa, R0, R1, c);
			if (c == 0) {
				sM[R0] = mrun0;
				sM[R1] = mrun1;
			}
			fence_async_shared();
			mbar_arrive(barPa);

			pv_regs(o, pa, dv0);
			if (has_b) {
				mbar_wait(barPb, par);
				const float mb0 = sM[R0], mb1 = sM[R1];
				const float ab0 = exp2f(mrun0 - mb0);
				const float ab1 = exp2f(mrun1 - mb1);
				mrun0 = mb0;
				mrun1 = mb1;
				l0 *= ab0;
				l1 *= ab1;
				wgmma_wait<0>();
				reg_fence<128>(o);
				if (leader && a + 2 < tile_hi)
					load_group(sKV, barF, &tm_kv, 0, GLO,
						   a + 2, bi);
				scale_o<false>(o, ab0, ab1);
				pv_smem(o, dp, dv1);
			} else {
				break;	/* a was the range's last tile */
			}
		}
		wgmma_wait<0>();
		reg_fence<128>(o);
	} else {
		for (int a = tile_lo, p = 0; a < tile_hi; a += 2, p++) {
			const int b = a + 1;
			const bool has_b = b < tile_hi;
			const uint32_t par = p & 1;
			float sacc[32];
			uint32_t pa[16];
#pragma unroll
			for (int i = 0; i < 32; i++)
				zero_reg(sacc[i]);

			/* S of tile b: rope slab, 4-7 (freed by this warpgroup),
			 * then 0-3 (freed by warpgroup 0) */
			if (!has_b) {
				/* a is the range's last tile: its P alone */
				mbar_wait(barPa, par);
				const float ma0 = sM[R0], ma1 = sM[R1];
				const float aa0 = exp2f(mrun0 - ma0);
				const float aa1 = exp2f(mrun1 - ma1);
				mrun0 = ma0;
				mrun1 = ma1;
				l0 *= aa0;
				l1 *= aa1;
				scale_o<false>(o, aa0, aa1);
				pv_smem(o, dp, dv0);
				break;
			}
			wgmma_fence();
			mbar_wait(barF + 8 * (3 + G8), FPAR);
			s_group(sacc, dq, dk1, G8, 1);
#if MLA_STAGGER
			/* the rest once S of tile a is done: S(b) then runs
			 * beside warpgroup 0's softmax of a */
			mbar_wait(barSa, par);
#endif
			mbar_wait(barF + 8 * (3 + GHI), FPAR);
			s_group(sacc, dq, dk1, GHI, 0);
			mbar_wait(barF + 8 * (3 + GLO), FPAR);
			s_group(sacc, dq, dk1, GLO, 0);
			wgmma_commit();
			/* tile a's P and maximum */
			mbar_wait(barPa, par);
			const float ma0 = sM[R0], ma1 = sM[R1];
			const float aa0 = exp2f(mrun0 - ma0);
			const float aa1 = exp2f(mrun1 - ma1);
			mrun0 = ma0;
			mrun1 = ma1;
			l0 *= aa0;
			l1 *= aa1;
			scale_o<true>(o, aa0, aa1);
			pv_smem(o, dp, dv0);
			wgmma_wait<1>();
			reg_fence<32>(sacc);
			if (leader && b + 2 < tile_hi)
				load_group(sKV, barF, &tm_kv, 1, G8,
					   b + 2, bi);
			float al0, al1;
			tile_softmax(sacc, b * BN, c, t, scale_log2,
				     mrun0, mrun1, al0, al1, l0, l1,
				     pa);
			wgmma_wait<0>();
			reg_fence<128>(o);
			if (leader && a + 2 < tile_hi)
				load_group(sKV, barF, &tm_kv, 0, GHI,
					   a + 2, bi);
			scale_o<false>(o, al0, al1);
			store_p(smem + SP_OFF, pa, R0, R1, c);
			if (c == 0) {
				sM[R0] = mrun0;
				sM[R1] = mrun1;
			}
			fence_async_shared();
			mbar_arrive(barPb);
			pv_regs(o, pa, dv1);
			wgmma_wait<0>();
			reg_fence<128>(o);
			if (leader && b + 2 < tile_hi)
				load_group(sKV, barF, &tm_kv, 1, GHI,
					   b + 2, bi);
		}
		wgmma_wait<0>();
		reg_fence<128>(o);
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
	if (cmerge) {
		/*
		 * Two ranges in a cluster: block r finishes dims r*256..+255.
		 * The warpgroup holding the other half sends it, normalised,
		 * with its rows' log-sum-exp, into the other block's first
		 * tile buffer (free once both blocks are past their loops);
		 * thread i's record: 32 float4 at [k][i], then 2 floats.
		 */
		const uint32_t rank = cluster_rank();
		const uint32_t rec = sbase + SKV_OFF;
		const int it = tid & 127;
		const float lse0 = mrun0 + log2f(tot0);
		const float lse1 = mrun1 + log2f(tot1);

		cluster_sync_all();	/* both blocks done with their tiles */
		if (kg != (int)rank) {
			const uint32_t dst = map_rank(rec, rank ^ 1);
#pragma unroll
			for (int k = 0; k < 32; k++)
				st_cluster_v4(dst + (k * 128 + it) * 16,
					      o[4 * k] * inv0,
					      o[4 * k + 1] * inv0,
					      o[4 * k + 2] * inv1,
					      o[4 * k + 3] * inv1);
			st_cluster_v4(dst + 32 * 128 * 16 + it * 16, lse0,
				      lse1, 0.f, 0.f);
		}
		cluster_sync_all();
		if (kg == (int)rank) {
			const float4 *r4 = (const float4 *)(smem + SKV_OFF);
			const float4 ls = r4[32 * 128 + it];
			const float mx0 = fmaxf(lse0, ls.x);
			const float mx1 = fmaxf(lse1, ls.y);
			const float ws0 = exp2f(lse0 - mx0);
			const float wo0 = exp2f(ls.x - mx0);
			const float ws1 = exp2f(lse1 - mx1);
			const float wo1 = exp2f(ls.y - mx1);
			const float n0 = 1.f / (ws0 + wo0);
			const float n1 = 1.f / (ws1 + wo1);
			const float a0 = ws0 * inv0 * n0, b0 = wo0 * n0;
			const float a1 = ws1 * inv1 * n1, b1 = wo1 * n1;
			bf16 *o0 = out + (grow0 + R0) * MLA_DV + col;
			bf16 *o1 = out + (grow0 + R1) * MLA_DV + col;
#pragma unroll
			for (int j = 0; j < 32; j++) {
				const float4 v = r4[j * 128 + it];
				*(__nv_bfloat162 *)(o0 + 8 * j) =
					__floats2bfloat162_rn(
						fmaf(o[4 * j], a0, v.x * b0),
						fmaf(o[4 * j + 1], a0,
						     v.y * b0));
				*(__nv_bfloat162 *)(o1 + 8 * j) =
					__floats2bfloat162_rn(
						fmaf(o[4 * j + 2], a1,
						     v.z * b1),
						fmaf(o[4 * j + 3], a1,
						     v.w * b1));
			}
		}
	} else if (nsplit == 1) {
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
				mrun0 + log2f(tot0);
			part_lse[(grow0 + R1) * nsplit + split] =
				mrun1 + log2f(tot1);
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
mla_decode_v16_combine(const float *__restrict__ part_o,
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

	if (choose_splits(b, s, t, &nsplit) || nsplit == 1 ||
	    (MLA_CLUSTER && nsplit == 2))
		return 0;	/* one range, or two merged in a cluster */
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
		err = cudaFuncSetAttribute(mla_decode_v16_kernel,
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
	if (nsplit > 1 && !(MLA_CLUSTER && nsplit == 2) && !workspace)
		return cudaErrorInvalidValue;
#if MLA_GRID_ORDER
	dim3 grid(nsplit, s * MLA_HEADS / BM, b);
#else
	dim3 grid(s * MLA_HEADS / BM, nsplit, b);
#endif
	const float scale_log2 = 1.4426950408889634f / sqrtf((float)MLA_DQK);
	if (MLA_CLUSTER && nsplit == 2) {
		cudaLaunchConfig_t cfg = {};
		cudaLaunchAttribute attr[1];

		cfg.gridDim = grid;
		cfg.blockDim = dim3(THREADS);
		cfg.dynamicSmemBytes = SMEM_BYTES;
		cfg.stream = stream;
		attr[0].id = cudaLaunchAttributeClusterDimension;
		attr[0].val.clusterDim.x = MLA_GRID_ORDER ? 2 : 1;
		attr[0].val.clusterDim.y = MLA_GRID_ORDER ? 1 : 2;
		attr[0].val.clusterDim.z = 1;
		cfg.attrs = attr;
		cfg.numAttrs = 1;
		return cudaLaunchKernelEx(&cfg, mla_decode_v16_kernel, tm_q,
					  tm_kv, out, part_o, part_lse, s, t,
					  nsplit, 1, scale_log2);
	}
	mla_decode_v16_kernel<<<grid, THREADS, SMEM_BYTES, stream>>>(
		tm_q, tm_kv, out, part_o, part_lse, s, t, nsplit, 0,
		scale_log2);
	if (nsplit > 1)
		mla_decode_v16_combine<<<rows, 128, 0, stream>>>(
			part_o, part_lse, out, nsplit);
	return cudaGetLastError();
}
