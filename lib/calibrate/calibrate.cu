/*
 * Kernels that `git kopt device --calibrate` runs through the CUDA driver
 * API to measure the ceilings the roofline uses: the device-memory copy
 * bandwidth and the bf16 matrix rate.  Compiled to PTX (calibrate.ptx for
 * compute_80, calibrate_sm90a.ptx for the Hopper-only wgmma kernel) and
 * committed, so that building git-kopt needs no CUDA toolkit.
 *
 * Regenerate with `make -C lib/calibrate` where nvcc is installed.
 */
#include <stdint.h>

extern "C" __global__ void kopt_copy(const uint4 *__restrict__ src,
				     uint4 *__restrict__ dst, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		dst[i] = src[i];
}

/* Fill with a cheap hash so that the copy and the products see non-zero
 * data (zeros can run faster than real data). */
extern "C" __global__ void kopt_fill(uint32_t *p, size_t n, uint32_t seed)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride) {
		uint32_t x = (uint32_t)i * 2654435761u ^ seed;
		x ^= x >> 15;
		x *= 2246822519u;
		x ^= x >> 13;
		/* two bf16 values in [0.5, 1) with random mantissas */
		p[i] = (x & 0x007f007fu) | 0x3f003f00u;
	}
}

/*
 * Warp-level bf16 products (mma.sync m16n8k16, fp32 accumulate) from
 * registers: 8 independent accumulators per warp so that the tensor pipe,
 * not the dependency chain, is the limit.  4096 flops per mma.
 */
extern "C" __global__ void kopt_mma_bf16(const uint32_t *__restrict__ in,
					 float *__restrict__ out, int iters)
{
	uint32_t a[4], b[2];
	float acc[8][4];
	int lane = threadIdx.x & 31;

	for (int i = 0; i < 4; i++)
		a[i] = in[(lane * 4 + i) & 1023];
	for (int i = 0; i < 2; i++)
		b[i] = in[(lane * 2 + i + 512) & 1023];
	for (int j = 0; j < 8; j++)
		for (int i = 0; i < 4; i++)
			acc[j][i] = 0.f;
	for (int it = 0; it < iters; it++) {
#pragma unroll
		for (int j = 0; j < 8; j++)
			asm volatile(
				"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
				"{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
				"{%0,%1,%2,%3};\n"
				: "+f"(acc[j][0]), "+f"(acc[j][1]),
				  "+f"(acc[j][2]), "+f"(acc[j][3])
				: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]),
				  "r"(b[0]), "r"(b[1]));
	}
	float s = 0.f;
	for (int j = 0; j < 8; j++)
		for (int i = 0; i < 4; i++)
			s += acc[j][i];
	out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/*
 * Warpgroup bf16 products (wgmma m64n256k16, fp32 accumulate) with both
 * operands in shared memory, as Hopper's fastest kernels issue them.
 * 2*64*256*16 = 524288 flops per instruction per warpgroup.
 */
static __device__ uint64_t smem_desc(const void *p)
{
	uint32_t addr = (uint32_t)__cvta_generic_to_shared(p);
	uint64_t d = 0;

	d |= (uint64_t)((addr & 0x3ffff) >> 4);
	d |= (uint64_t)(128 >> 4) << 16;   /* leading-dimension byte offset */
	d |= (uint64_t)(256 >> 4) << 32;   /* stride-dimension byte offset */
	return d;
}

static __device__ __forceinline__ void wgmma_step(float *d, uint64_t da,
						  uint64_t db)
{
	asm volatile(
			"{\n"
			"wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
			"{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
			"%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
			"%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
			"%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
			"%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
			"%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
			"%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
			"%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127},"
			" %128, %129, 1, 1, 1, 0, 0;\n"
			"}\n"
			: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
			  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
			  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
			  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
			  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
			  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
			  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
			  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
			  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
			  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
			  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
			  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
			  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
			  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
			  "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
			  "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
			: "l"(da), "l"(db));
}

extern "C" __global__ void __launch_bounds__(128)
kopt_wgmma_bf16(const uint32_t *__restrict__ in, float *__restrict__ out,
		int iters)
{
	__shared__ __align__(1024) uint32_t sa[64 * 16 / 2];
	__shared__ __align__(1024) uint32_t sb[256 * 16 / 2];
	float d[128];

	for (int i = threadIdx.x; i < 64 * 8; i += blockDim.x)
		sa[i] = in[i & 1023];
	for (int i = threadIdx.x; i < 256 * 8; i += blockDim.x)
		sb[i] = in[(i + 333) & 1023];
	for (int i = 0; i < 128; i++)
		d[i] = 0.f;
	__syncthreads();
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
	uint64_t da = smem_desc(sa), db = smem_desc(sb);

	for (int it = 0; it < iters; it++) {
		asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
		wgmma_step(d, da, db);
		wgmma_step(d, da, db);
		wgmma_step(d, da, db);
		wgmma_step(d, da, db);
		asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
		asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
	}
	asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
	float s = 0.f;
	for (int i = 0; i < 128; i++)
		s += d[i];
	out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
#endif
