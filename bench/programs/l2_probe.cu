/*
 * What a profiler does to the L2: a consumer kernel reads 8 MB that was
 * written just before it, by a producer kernel (mode kernel) or by a
 * host-to-device copy (mode copy), 20 times; it writes 8 MB of its own.
 * Everything fits in the H200's 50 MB L2, so a profiler that keeps the
 * program's cache state sees almost no DRAM traffic in either kernel.
 *
 *   l2_probe [kernel|copy]
 */
#include <stdio.h>
#include <string.h>
#include <vector>

#define CHECK(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "fatal: %s: %s\n", #call, \
			cudaGetErrorString(e_)); \
		return 1; \
	} \
} while (0)

__global__ void producer(float *a, size_t n, float v)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		a[i] = v + (float)i;
}

__global__ void consumer(const float *a, float *b, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		b[i] = a[i] * 2.0f;
}

int main(int argc, char **argv)
{
	int copy = argc > 1 && !strcmp(argv[1], "copy");
	size_t n = 2u << 20;
	float *a, *b, last;
	std::vector<float> h(n, 1.0f);

	CHECK(cudaMalloc(&a, n * sizeof(float)));
	CHECK(cudaMalloc(&b, n * sizeof(float)));
	for (int i = 0; i < 20; i++) {
		if (copy)
			CHECK(cudaMemcpy(a, h.data(), n * sizeof(float),
					 cudaMemcpyHostToDevice));
		else
			producer<<<264, 256>>>(a, n, (float)i);
		consumer<<<264, 256>>>(a, b, n);
		CHECK(cudaDeviceSynchronize());
	}
	CHECK(cudaMemcpy(&last, b + 1, sizeof(last), cudaMemcpyDeviceToHost));
	if (last != (copy ? 2.0f : 2.0f * (19.0f + 1.0f))) {
		fprintf(stderr, "check failed: b[1] = %g\n", last);
		return 1;
	}
	printf("l2_probe %s: every check passed\n", copy ? "copy" : "kernel");
	return 0;
}
