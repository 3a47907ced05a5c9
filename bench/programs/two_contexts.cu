/*
 * A program whose kernels run on two CUDA contexts of one GPU, as one
 * does that mixes the runtime's primary context with a library or a
 * component that makes its own (cuCtxCreate):
 *
 *   primary context:  saxpy     y = a x + y        ITERS launches
 *                     rowsum    s[r] = sum of row r    3 launches
 *   second context:   scale3    w = 3 v            ITERS launches
 *                     fill      v = i mod 7            1 launch
 *
 * Checks every result on the host; exit status 0 only when all are right.
 *
 *   two_contexts [N] [ITERS]   N floats per array (default 2^24),
 *                              launches of the repeated kernels (20)
 */
#include <cuda.h>
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

#define CHECK_CU(call) do { \
	CUresult r_ = (call); \
	if (r_ != CUDA_SUCCESS) { \
		const char *s_ = "?"; \
		cuGetErrorString(r_, &s_); \
		fprintf(stderr, "fatal: %s: %s\n", #call, s_); \
		exit(1); \
	} \
} while (0)

__global__ void saxpy(float a, const float *x, float *y, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		y[i] = a * x[i] + y[i];
}

/* one block a row of `cols` floats */
__global__ void rowsum(const float *x, float *s, size_t cols)
{
	__shared__ float part[256];
	float acc = 0.f;

	for (size_t c = threadIdx.x; c < cols; c += blockDim.x)
		acc += x[blockIdx.x * cols + c];
	part[threadIdx.x] = acc;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w)
			part[threadIdx.x] += part[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		s[blockIdx.x] = part[0];
}

__global__ void scale3(const float *v, float *w, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		w[i] = 3.f * v[i];
}

__global__ void fill(float *v, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		v[i] = (float)(i % 7);
}

static int near(float got, float want)
{
	return fabsf(got - want) <= 1e-3f * fmaxf(1.f, fabsf(want));
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 24;
	int iters = argc > 2 ? atoi(argv[2]) : 20;
	const size_t rows = 1024, cols = n / rows;
	std::vector<float> hx(n), hy(n), hs(rows), hw(n);
	float *x, *y, *s, *v, *w;
	CUcontext primary, second;
	CUdevice dev;
	int bad = 0;

	if (n < rows || iters < 1) {
		fprintf(stderr, "usage: two_contexts [N >= 1024] [ITERS >= 1]\n");
		return 129;
	}
	for (size_t i = 0; i < n; i++) {
		hx[i] = (float)(i % 13) * 0.25f;
		hy[i] = 1.f;
	}

	/* the primary context, through the runtime */
	CHECK(cudaSetDevice(0));
	CHECK(cudaFree(0));
	CHECK_CU(cuCtxGetCurrent(&primary));
	CHECK(cudaMalloc(&x, n * sizeof(float)));
	CHECK(cudaMalloc(&y, n * sizeof(float)));
	CHECK(cudaMalloc(&s, rows * sizeof(float)));
	CHECK(cudaMemcpy(x, hx.data(), n * sizeof(float),
			 cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(y, hy.data(), n * sizeof(float),
			 cudaMemcpyHostToDevice));
	for (int i = 0; i < iters; i++)
		saxpy<<<1056, 256>>>(0.5f, x, y, n);
	for (int i = 0; i < 3; i++)
		rowsum<<<rows, 256>>>(x, s, cols);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMemcpy(hy.data(), y, n * sizeof(float),
			 cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(hs.data(), s, rows * sizeof(float),
			 cudaMemcpyDeviceToHost));

	/* a second context of the same device: the runtime launches into
	 * whichever context is current */
	CHECK_CU(cuDeviceGet(&dev, 0));
	CHECK_CU(cuCtxCreate(&second, NULL, 0, dev));
	CHECK(cudaMalloc(&v, n * sizeof(float)));
	CHECK(cudaMalloc(&w, n * sizeof(float)));
	fill<<<1056, 256>>>(v, n);
	for (int i = 0; i < iters; i++)
		scale3<<<1056, 256>>>(v, w, n);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMemcpy(hw.data(), w, n * sizeof(float),
			 cudaMemcpyDeviceToHost));
	CHECK(cudaFree(v));
	CHECK(cudaFree(w));
	CHECK_CU(cuCtxSetCurrent(primary));
	CHECK_CU(cuCtxDestroy(second));

	for (size_t i = 0; i < n && bad < 5; i++) {
		if (!near(hy[i], 1.f + iters * 0.5f * hx[i])) {
			fprintf(stderr, "saxpy wrong at %zu: %g\n", i, hy[i]);
			bad++;
		}
		if (!near(hw[i], 3.f * (float)(i % 7))) {
			fprintf(stderr, "scale3 wrong at %zu: %g\n", i, hw[i]);
			bad++;
		}
	}
	for (size_t r = 0; r < rows && bad < 5; r++) {
		double want = 0;
		for (size_t c = 0; c < cols; c++)
			want += hx[r * cols + c];
		if (fabs(hs[r] - want) > 1e-3 * fmax(1.0, fabs(want))) {
			fprintf(stderr, "rowsum wrong at %zu: %g, not %g\n", r,
				hs[r], want);
			bad++;
		}
	}
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	CHECK(cudaFree(s));
	printf("two_contexts: %zu floats, %d launches a context: %s\n", n,
	       iters, bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
