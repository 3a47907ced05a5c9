/*
 * A CUDA C benchmark of the kind people write for themselves: five
 * different kernels, each launched a different number of times (a
 * correctness run, then a few timed runs; one kernel is the main loop):
 *
 *   fill      1 launch     writes N floats of hashed values (set-up)
 *   scale     2 launches   y = 2x                       (DRAM-bound)
 *   mma       3 launches   bf16 tensor-core products    (tensor cores)
 *   stencil   5 launches   3-point stencil through shared memory
 *   saxpy   200 launches   y = a x + y                  (the main loop)
 *
 * Checks every result on the host and prints the median time of the
 * saxpy launches (CUDA events).  Exit status 0 only when every check
 * passes.
 *
 *   five_kernels [N]      N floats per array (default 2^26, 256 MiB)
 */
#include <cuda_bf16.h>
#include <mma.h>
#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#define CHECK(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "fatal: %s: %s\n", #call, \
			cudaGetErrorString(e_)); \
		exit(1); \
	} \
} while (0)

__host__ __device__ static float hashed(size_t i)
{
	unsigned x = (unsigned)(i * 2654435761u) ^ 0x9e3779b9u;
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	return (float)(x & 0xffff) / 65536.0f - 0.5f;
}

__global__ void fill(float *x, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		x[i] = hashed(i);
}

__global__ void scale(const float4 *x, float4 *y, size_t n4)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4;
	     i += stride) {
		float4 v = x[i];
		y[i] = make_float4(2 * v.x, 2 * v.y, 2 * v.z, 2 * v.w);
	}
}

__global__ void mma(const __nv_bfloat16 *a, const __nv_bfloat16 *b,
		    float *c, int rounds)
{
	using namespace nvcuda;
	wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16,
		       wmma::row_major> fa;
	wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16,
		       wmma::col_major> fb;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
	int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;

	wmma::fill_fragment(acc, 0.0f);
	wmma::load_matrix_sync(fa, a, 16);
	wmma::load_matrix_sync(fb, b, 16);
	for (int r = 0; r < rounds; r++)
		wmma::mma_sync(acc, fa, fb, acc);
	wmma::store_matrix_sync(c + warp * 256, acc, 16, wmma::mem_row_major);
}

#define TILE 512

__global__ void stencil(const float *x, float *y, size_t n)
{
	__shared__ float s[TILE + 2];
	for (size_t base = (size_t)blockIdx.x * TILE; base < n;
	     base += (size_t)gridDim.x * TILE) {
		size_t i = base + threadIdx.x;
		s[threadIdx.x + 1] = i < n ? x[i] : 0.0f;
		if (threadIdx.x == 0)
			s[0] = base ? x[base - 1] : 0.0f;
		if (threadIdx.x == TILE - 1)
			s[TILE + 1] = i + 1 < n ? x[i + 1] : 0.0f;
		__syncthreads();
		if (i < n)
			y[i] = (s[threadIdx.x] + s[threadIdx.x + 1] +
				s[threadIdx.x + 2]) * (1.0f / 3);
		__syncthreads();
	}
}

__global__ void saxpy(float a, const float4 *x, float4 *y, size_t n4)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4;
	     i += stride) {
		float4 u = x[i], v = y[i];
		y[i] = make_float4(a * u.x + v.x, a * u.y + v.y,
				   a * u.z + v.z, a * u.w + v.w);
	}
}

static int fail(const char *what, size_t i, double got, double want)
{
	fprintf(stderr, "check failed: %s[%zu] = %g, expected %g\n", what, i,
		got, want);
	return 1;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (1ull << 26);
	size_t n4 = n / 4, bytes = n * sizeof(float);
	int sms, bad = 0;
	float *x, *y, *z, *c;
	__nv_bfloat16 *a, *b, h_ab[256];
	std::vector<float> hx(n), hy(n);
	cudaEvent_t e0, e1;

	if (n < 1024 || n % 4) {
		fprintf(stderr, "usage: five_kernels [N], N a multiple of 4 "
			"and at least 1024\n");
		return 2;
	}
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CHECK(cudaMalloc(&x, bytes));
	CHECK(cudaMalloc(&y, bytes));
	CHECK(cudaMalloc(&z, bytes));
	CHECK(cudaMalloc(&a, sizeof(h_ab)));
	CHECK(cudaMalloc(&b, sizeof(h_ab)));
	CHECK(cudaMalloc(&c, (size_t)sms * 8 * 256 * sizeof(float)));
	for (int i = 0; i < 256; i++)
		h_ab[i] = __float2bfloat16((float)(i % 7) * 0.125f);
	CHECK(cudaMemcpy(a, h_ab, sizeof(h_ab), cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(b, h_ab, sizeof(h_ab), cudaMemcpyHostToDevice));
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));

	/* set-up: once */
	fill<<<sms * 8, 512>>>(x, n);
	CHECK(cudaGetLastError());
	/* correctness run, then one timed run */
	for (int r = 0; r < 2; r++) {
		scale<<<sms * 8, 512>>>((const float4 *)x, (float4 *)y, n4);
		CHECK(cudaGetLastError());
	}
	for (int r = 0; r < 3; r++) {
		mma<<<sms * 2, 128>>>(a, b, c, 4000);
		CHECK(cudaGetLastError());
	}
	for (int r = 0; r < 5; r++) {
		stencil<<<sms * 16, TILE>>>(y, z, n);
		CHECK(cudaGetLastError());
	}
	CHECK(cudaMemcpy(hx.data(), x, bytes, cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(hy.data(), z, bytes, cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < n && !bad; i += 4099) {
		double want = 2.0 * ((i ? hashed(i - 1) : 0.0) + hashed(i) +
				     (i + 1 < n ? hashed(i + 1) : 0.0)) / 3;
		if (hx[i] != hashed(i))
			bad = fail("x", i, hx[i], hashed(i));
		else if (fabs(hy[i] - want) > 1e-5)
			bad = fail("stencil", i, hy[i], want);
	}
	{
		float hc[256];
		double want = 0;
		for (int k = 0; k < 16; k++)
			want += (double)((0 * 16 + k) % 7 * 0.125) *
				((0 * 16 + k) % 7 * 0.125);
		CHECK(cudaMemcpy(hc, c, sizeof(hc), cudaMemcpyDeviceToHost));
		/* c[0][0] = rounds x row 0 of a . column 0 of b */
		if (fabs(hc[0] - 4000 * want) > 1e-3 * 4000 * want)
			bad = fail("mma", 0, hc[0], 4000 * want);
	}

	/* the main loop: y = 2x before it, y += 0.5 x each time */
	std::vector<float> ms(200);
	for (int r = 0; r < 200; r++) {
		CHECK(cudaEventRecord(e0));
		saxpy<<<sms * 8, 512>>>(0.5f, (const float4 *)x, (float4 *)y,
					n4);
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		CHECK(cudaEventElapsedTime(&ms[r], e0, e1));
	}
	CHECK(cudaMemcpy(hy.data(), y, bytes, cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < n && !bad; i += 4099) {
		double want = (2.0 + 200 * 0.5) * hashed(i);
		if (fabs(hy[i] - want) > 1e-4 * fabs(want) + 1e-5)
			bad = fail("saxpy", i, hy[i], want);
	}
	std::sort(ms.begin(), ms.end());
	printf("saxpy: %.2f us median of 200 launches (%.0f GB/s)%s\n",
	       ms[100] * 1e3, 3.0 * bytes / (ms[100] * 1e-3) / 1e9,
	       bad ? "" : "; every check passed");
	return bad;
}
