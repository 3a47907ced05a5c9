/*
 * Kernels whose measurements are known in advance, for the injection
 * library's GPU tests (tests/gpu/run):
 *
 *   copy    reads and writes BYTES bytes once each: DRAM bytes read and
 *           written near BYTES, no local memory;
 *   spill   indexes a per-thread array at run time: local memory per
 *           thread > 0 and local loads and stores;
 *   mma     bf16 matrix products on the tensor cores: tensor-core
 *           utilisation > 0.
 *
 * Each runs LAUNCHES times.  --subscribe: subscribe to CUPTI first, as
 * another profiler would (prints what cuptiSubscribe returned).
 * --reset: create the context and destroy it at once, launching nothing
 * (a program that ends while the profiler is still being set up).
 * --graph: also launch a CUDA graph (one copy of a small buffer) after
 * each copy, so that graph launches fall between the profiled ones.
 */
#include <cuda_bf16.h>
#include <dlfcn.h>
#include <mma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAUNCHES 20
#define BYTES (512ull << 20)

#define CHECK(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "fatal: %s: %s\n", #call, \
			cudaGetErrorString(e_)); \
		exit(1); \
	} \
} while (0)

__global__ void copy(const float4 *in, float4 *out, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		out[i] = in[i];
}

__global__ void spill(const int *idx, float *out, int rounds)
{
	float a[96];
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	int k = idx[t % 1024];
	for (int i = 0; i < 96; i++)
		a[i] = (float)(i * t);
	for (int r = 0; r < rounds; r++)
		a[(k + r * 7) % 96] += a[(k * 3 + r) % 96];
	out[t] = a[k % 96];
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

static void subscribe_first(void)
{
	typedef int (*subscribe_fn)(void **, void *, void *);
	void *h = dlopen("libcupti.so.13", RTLD_NOW);
	subscribe_fn fn;
	void *sub = NULL;

	if (!h)
		h = dlopen("/usr/local/cuda/lib64/libcupti.so", RTLD_NOW);
	if (!h) {
		printf("subscribe: no libcupti\n");
		return;
	}
	fn = (subscribe_fn)dlsym(h, "cuptiSubscribe");
	printf("subscribe: %d\n", fn ? fn(&sub, NULL, NULL) : -1);
}

int main(int argc, char **argv)
{
	size_t n4 = BYTES / sizeof(float4);
	float4 *in, *out;
	int *idx, h_idx[1024];
	float *sout, *c;
	__nv_bfloat16 *a, *b, h_ab[256];
	cudaGraphExec_t exec = NULL;

	if (argc > 1 && !strcmp(argv[1], "--subscribe"))
		subscribe_first();
	if (argc > 1 && !strcmp(argv[1], "--reset")) {
		CHECK(cudaFree(0));
		CHECK(cudaDeviceReset());
		printf("ok\n");
		return 0;
	}
	CHECK(cudaMalloc(&in, BYTES));
	CHECK(cudaMalloc(&out, BYTES));
	CHECK(cudaMemset(in, 1, BYTES));
	CHECK(cudaMalloc(&idx, sizeof(h_idx)));
	CHECK(cudaMalloc(&sout, 132 * 4 * 256 * sizeof(float)));
	for (int i = 0; i < 1024; i++)
		h_idx[i] = (i * 37) % 96;
	CHECK(cudaMemcpy(idx, h_idx, sizeof(h_idx), cudaMemcpyHostToDevice));
	CHECK(cudaMalloc(&a, sizeof(h_ab)));
	CHECK(cudaMalloc(&b, sizeof(h_ab)));
	for (int i = 0; i < 256; i++)
		h_ab[i] = __float2bfloat16((float)(i % 7) * 0.125f);
	CHECK(cudaMemcpy(a, h_ab, sizeof(h_ab), cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(b, h_ab, sizeof(h_ab), cudaMemcpyHostToDevice));
	CHECK(cudaMalloc(&c, 132 * 8 * 256 * sizeof(float)));

	if (argc > 1 && !strcmp(argv[1], "--graph")) {
		cudaStream_t st;
		cudaGraph_t graph;
		CHECK(cudaStreamCreate(&st));
		CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
		copy<<<132, 256, 0, st>>>(in, out, 1 << 16);
		CHECK(cudaStreamEndCapture(st, &graph));
		CHECK(cudaGraphInstantiate(&exec, graph, 0));
	}
	for (int i = 0; i < LAUNCHES; i++) {
		copy<<<132 * 8, 512>>>(in, out, n4);
		CHECK(cudaGetLastError());
		if (exec)
			CHECK(cudaGraphLaunch(exec, 0));
		spill<<<132 * 4, 256>>>(idx, sout, 2000);
		CHECK(cudaGetLastError());
		mma<<<132 * 2, 128>>>(a, b, c, 20000);
		CHECK(cudaGetLastError());
	}
	CHECK(cudaDeviceSynchronize());
	printf("ok\n");
	return 0;
}
