/*
 * A benchmark whose kernels run only from a CUDA graph, as a program
 * that cuts launch overhead does: four kernels, a memset and a copy
 * captured from a stream into one graph, the graph launched ITERS times
 * and timed with events.
 *
 *   memset   flag = 0
 *   scale    y = a x      (a = 2, then 3 after the update below)
 *   addto    z = y + x
 *   square   w = z * z
 *   tally    count += 1 + flag, flag = 1   (one thread: counts the
 *            graph's executions; a memset that did not run adds 1)
 *   memcpy   head = the first 1024 values of w
 *
 * As PyTorch does, the graph it was instantiated from is destroyed at
 * once; halfway the executable graph is updated (cudaGraphExecUpdate)
 * from a second capture with a = 3.  Checks the result and the count on
 * the host, so a kernel run twice or not at all is caught; exit status 0
 * only when both are right.
 *
 *   graph_kernels [N] [ITERS]   N floats per array (default 2^25),
 *                               graph launches (default 20)
 */
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

__global__ void scale(const float *x, float *y, float a, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		y[i] = a * x[i];
}

__global__ void addto(const float *x, const float *y, float *z, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		z[i] = y[i] + x[i];
}

__global__ void square(const float *z, float *w, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		w[i] = z[i] * z[i];
}

__global__ void tally(unsigned long long *count, unsigned *flag)
{
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		*count += 1 + *flag;
		*flag = 1;
	}
}

#define HEAD 1024

static cudaGraph_t capture(cudaStream_t st, int sms, const float *x,
			   float *y, float *z, float *w, float *head, float a,
			   size_t n, unsigned long long *count, unsigned *flag)
{
	cudaGraph_t graph;

	CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
	CHECK(cudaMemsetAsync(flag, 0, sizeof(*flag), st));
	scale<<<sms * 8, 512, 0, st>>>(x, y, a, n);
	addto<<<sms * 8, 512, 0, st>>>(x, y, z, n);
	square<<<sms * 8, 256, 0, st>>>(z, w, n);
	tally<<<1, 32, 0, st>>>(count, flag);
	CHECK(cudaMemcpyAsync(head, w, HEAD * sizeof(*w),
			      cudaMemcpyDeviceToDevice, st));
	CHECK(cudaStreamEndCapture(st, &graph));
	return graph;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (1ull << 25);
	int iters = argc > 2 ? atoi(argv[2]) : 20, sms;
	size_t bytes = n * sizeof(float);
	float *x, *y, *z, *w, *head;
	unsigned long long *count, hcount = 0;
	unsigned *flag;
	float hhead[HEAD];
	cudaGraphExecUpdateResultInfo info;
	std::vector<float> hx(n), hw(n), ms;
	cudaStream_t st;
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	cudaEvent_t e0, e1;

	if (n < 1024 || iters < 1) {
		fprintf(stderr, "usage: graph_kernels [N >= 1024] [ITERS >= 1]\n");
		return 2;
	}
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	for (size_t i = 0; i < n; i++)
		hx[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
	CHECK(cudaMalloc(&x, bytes));
	CHECK(cudaMalloc(&y, bytes));
	CHECK(cudaMalloc(&z, bytes));
	CHECK(cudaMalloc(&w, bytes));
	CHECK(cudaMalloc(&head, HEAD * sizeof(*head)));
	CHECK(cudaMalloc(&count, sizeof(*count)));
	CHECK(cudaMemset(count, 0, sizeof(*count)));
	CHECK(cudaMalloc(&flag, sizeof(*flag)));
	CHECK(cudaMemset(flag, 0, sizeof(*flag)));
	CHECK(cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice));
	CHECK(cudaStreamCreate(&st));
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	graph = capture(st, sms, x, y, z, w, head, 2.0f, n, count,
			flag);
	CHECK(cudaGraphInstantiate(&exec, graph, 0));
	CHECK(cudaGraphDestroy(graph));
	ms.resize(iters);
	for (int i = 0; i < iters; i++) {
		if (i == iters / 2) {
			graph = capture(st, sms, x, y, z, w, head, 3.0f, n,
					count, flag);
			CHECK(cudaGraphExecUpdate(exec, graph, &info));
			CHECK(cudaGraphDestroy(graph));
		}
		CHECK(cudaEventRecord(e0, st));
		CHECK(cudaGraphLaunch(exec, st));
		CHECK(cudaEventRecord(e1, st));
		CHECK(cudaEventSynchronize(e1));
		CHECK(cudaEventElapsedTime(&ms[i], e0, e1));
	}
	CHECK(cudaMemcpy(hw.data(), w, bytes, cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(&hcount, count, sizeof(hcount),
			 cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(hhead, head, sizeof(hhead), cudaMemcpyDeviceToHost));
	for (int i = 0; i < HEAD; i++)
		if (hhead[i] != hw[i]) {
			fprintf(stderr, "check failed: head[%d] = %g, expected "
				"%g\n", i, hhead[i], hw[i]);
			return 1;
		}
	if (hcount != (unsigned long long)iters) {
		fprintf(stderr, "check failed: the graph counted %llu runs, "
			"expected %d\n", hcount, iters);
		return 1;
	}
	for (size_t i = 0; i < n; i += 997) {
		/* the last launch ran with a = 3: w = (3x + x)^2 */
		double want = 16.0 * hx[i] * hx[i];
		if (fabs(hw[i] - want) > 1e-5 * want + 1e-7) {
			fprintf(stderr, "check failed: w[%zu] = %g, expected "
				"%g\n", i, hw[i], want);
			return 1;
		}
	}
	std::sort(ms.begin(), ms.end());
	printf("graph: %.2f us median of %d launches; every check passed\n",
	       ms[iters / 2] * 1e3, iters);
	return 0;
}
