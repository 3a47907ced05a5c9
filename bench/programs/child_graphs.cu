/*
 * A benchmark whose kernels run only from a CUDA graph built node by node
 * with child graphs (two deep) and event nodes, as libraries that compose
 * graphs do:
 *
 *   memset    flag = 0
 *   child A:  child_fill    x = pattern
 *             child_scale   y = 2 x
 *             child B:      memset z = 0; nested_square  z = y * y
 *             memcpy        head = the first 1024 values of z
 *   record    done            (after A)
 *   wait      token           (recorded on a second stream by produce)
 *   wait_consume   sum += token
 *   tally          count += 1 + flag, flag = 1
 *
 * Each iteration launches produce on a second stream (it spins for a
 * while, then writes the iteration's token) and records `token` there,
 * launches the graph, and has a third stream wait for `done` and count
 * the values of z that are not y * y (check_square).  A wait that does
 * not wait reads an old token; a record made too early lets check_square
 * see z half made; a node run twice or not at all breaks the count.  The
 * graph it was instantiated from is destroyed at once.  Exit status 0
 * only when every check passed.
 *
 *   child_graphs [N] [ITERS]   N floats per array (default 2^24),
 *                              graph launches (default 20)
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

#define HEAD 1024

__device__ float pattern(size_t i)
{
	return (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
}

__global__ void child_fill(float *x, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		x[i] = pattern(i);
}

__global__ void child_scale(const float *x, float *y, float a, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		y[i] = a * x[i];
}

__global__ void nested_square(const float *y, float *z, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		z[i] = y[i] * y[i];
}

__global__ void check_square(const float *y, const float *z, size_t n,
			     unsigned long long *bad)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	unsigned long long mine = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		mine += z[i] != y[i] * y[i];
	if (mine)
		atomicAdd(bad, mine);
}

/* spins about `cycles`, then writes the token */
__global__ void produce(unsigned long long *token, unsigned long long v,
			long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
	*token = v;
}

__global__ void wait_consume(const unsigned long long *token,
			     unsigned long long *sum)
{
	if (blockIdx.x == 0 && threadIdx.x == 0)
		*sum += *token;
}

__global__ void tally(unsigned long long *count, unsigned *flag)
{
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		*count += 1 + *flag;
		*flag = 1;
	}
}

static cudaGraphNode_t kernel(cudaGraph_t g, const cudaGraphNode_t *dep,
			      size_t nd, void *func, unsigned grid,
			      unsigned block, void **args)
{
	cudaKernelNodeParams p = {};
	cudaGraphNode_t node;

	p.func = func;
	p.gridDim = dim3(grid);
	p.blockDim = dim3(block);
	p.kernelParams = args;
	CHECK(cudaGraphAddKernelNode(&node, g, dep, nd, &p));
	return node;
}

static cudaGraphNode_t memset_node(cudaGraph_t g, const cudaGraphNode_t *dep,
				   size_t nd, void *dst, size_t bytes)
{
	cudaMemsetParams m = {};
	cudaGraphNode_t node;

	m.dst = dst;
	m.elementSize = 4;
	m.width = bytes / 4;
	m.height = 1;
	m.value = 0;
	CHECK(cudaGraphAddMemsetNode(&node, g, dep, nd, &m));
	return node;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (1ull << 24);
	int iters = argc > 2 ? atoi(argv[2]) : 20, sms, clock_khz;
	size_t bytes = n * sizeof(float);
	float *x, *y, *z, *head, a = 2.0f, hhead[HEAD];
	unsigned long long *token, *sum, *count, *bad, hsum, hcount, hbad;
	unsigned *flag;
	std::vector<float> hz(n), ms;
	cudaStream_t s1, s2, s3;
	cudaGraph_t parent, ca, cb;
	cudaGraphExec_t exec;
	cudaGraphNode_t n0, na, nrec, nwait, ncons, b0, a0, a1, a2, a3, dep2[2];
	cudaEvent_t done, tok, e0, e1;

	if (n < HEAD || iters < 1) {
		fprintf(stderr, "usage: child_graphs [N >= 1024] [ITERS >= 1]\n");
		return 2;
	}
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
	CHECK(cudaMalloc(&x, bytes));
	CHECK(cudaMalloc(&y, bytes));
	CHECK(cudaMalloc(&z, bytes));
	CHECK(cudaMalloc(&head, HEAD * sizeof(*head)));
	CHECK(cudaMalloc(&token, 4 * sizeof(*token)));
	sum = token + 1, count = token + 2, bad = token + 3;
	CHECK(cudaMemset(token, 0, 4 * sizeof(*token)));
	CHECK(cudaMalloc(&flag, sizeof(*flag)));
	CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CHECK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
	CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
	CHECK(cudaEventCreateWithFlags(&tok, cudaEventDisableTiming));
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));

	/* child B: memset z, then z = y * y */
	CHECK(cudaGraphCreate(&cb, 0));
	b0 = memset_node(cb, NULL, 0, z, bytes);
	void *sq_args[] = { &y, &z, &n };
	kernel(cb, &b0, 1, (void *)nested_square, sms * 8, 256, sq_args);
	/* child A: x, y = 2x, child B, head */
	CHECK(cudaGraphCreate(&ca, 0));
	void *fill_args[] = { &x, &n };
	a0 = kernel(ca, NULL, 0, (void *)child_fill, sms * 8, 512, fill_args);
	void *scale_args[] = { &x, &y, &a, &n };
	a1 = kernel(ca, &a0, 1, (void *)child_scale, sms * 8, 512, scale_args);
	CHECK(cudaGraphAddChildGraphNode(&a2, ca, &a1, 1, cb));
	CHECK(cudaGraphAddMemcpyNode1D(&a3, ca, &a2, 1, head, z,
				       HEAD * sizeof(*head),
				       cudaMemcpyDeviceToDevice));
	/* the parent */
	CHECK(cudaGraphCreate(&parent, 0));
	n0 = memset_node(parent, NULL, 0, flag, sizeof(*flag));
	CHECK(cudaGraphAddChildGraphNode(&na, parent, &n0, 1, ca));
	CHECK(cudaGraphAddEventRecordNode(&nrec, parent, &na, 1, done));
	CHECK(cudaGraphAddEventWaitNode(&nwait, parent, NULL, 0, tok));
	void *cons_args[] = { &token, &sum };
	ncons = kernel(parent, &nwait, 1, (void *)wait_consume, 1, 32,
		       cons_args);
	dep2[0] = na, dep2[1] = ncons;
	void *tally_args[] = { &count, &flag };
	kernel(parent, dep2, 2, (void *)tally, 1, 32, tally_args);
	CHECK(cudaGraphInstantiate(&exec, parent, 0));
	CHECK(cudaGraphDestroy(parent));
	CHECK(cudaGraphDestroy(ca));
	CHECK(cudaGraphDestroy(cb));

	ms.resize(iters);
	for (int i = 0; i < iters; i++) {
		/* about 200 us: long enough for a wait that does not wait
		   to read the last token */
		produce<<<1, 1, 0, s2>>>(token, (unsigned long long)i + 1,
					 (long long)clock_khz * 200 / 1000);
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(tok, s2));
		CHECK(cudaEventRecord(e0, s1));
		CHECK(cudaGraphLaunch(exec, s1));
		CHECK(cudaEventRecord(e1, s1));
		CHECK(cudaStreamWaitEvent(s3, done, 0));
		check_square<<<sms * 4, 256, 0, s3>>>(y, z, n, bad);
		CHECK(cudaGetLastError());
		CHECK(cudaDeviceSynchronize());
		CHECK(cudaEventElapsedTime(&ms[i], e0, e1));
	}
	CHECK(cudaMemcpy(&hsum, sum, sizeof(hsum), cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(&hcount, count, sizeof(hcount),
			 cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(&hbad, bad, sizeof(hbad), cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(hz.data(), z, bytes, cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(hhead, head, sizeof(hhead), cudaMemcpyDeviceToHost));
	if (hsum != (unsigned long long)iters * (iters + 1) / 2) {
		fprintf(stderr, "check failed: the tokens add up to %llu, "
			"expected %llu (a wait did not wait)\n", hsum,
			(unsigned long long)iters * (iters + 1) / 2);
		return 1;
	}
	if (hcount != (unsigned long long)iters) {
		fprintf(stderr, "check failed: the graph counted %llu runs, "
			"expected %d\n", hcount, iters);
		return 1;
	}
	if (hbad) {
		fprintf(stderr, "check failed: %llu values of z were not y * y "
			"when `done` said they were\n", hbad);
		return 1;
	}
	for (int i = 0; i < HEAD; i++)
		if (hhead[i] != hz[i]) {
			fprintf(stderr, "check failed: head[%d] = %g, expected "
				"%g\n", i, hhead[i], hz[i]);
			return 1;
		}
	for (size_t i = 0; i < n; i += 997) {
		float xv = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
		float want = (2.0f * xv) * (2.0f * xv);
		if (hz[i] != want) {
			fprintf(stderr, "check failed: z[%zu] = %g, expected "
				"%g\n", i, hz[i], want);
			return 1;
		}
	}
	std::sort(ms.begin(), ms.end());
	printf("graph: %.2f us median of %d launches; every check passed\n",
	       ms[iters / 2] * 1e3, iters);
	return 0;
}
