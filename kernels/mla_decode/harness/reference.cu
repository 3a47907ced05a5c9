/*
 * Float32 GPU reference and float64 host reference for MLA decode.
 * Deliberately simple and independent of the versions under test.
 */
#include <math.h>
#include <string.h>
#include "reference.h"

#define RT 64		/* output tile of the reference matrix product */
#define RK 16		/* its k step */

/*
 * C[m][n] = alpha * sum_k A[m][k] * B(k, n), where B(k, n) is
 * B[n * ldb + k] when BT (k^T from the cache) and B[k * ldb + n]
 * otherwise (v from the cache).  256 threads, 4x4 outputs each.
 */
template <typename TA, bool BT>
__global__ void __launch_bounds__(256)
ref_gemm_kernel(const TA *A, int lda, const bf16 *B, int ldb, float *C,
		int ldc, int M, int N, int K, float alpha)
{
	__shared__ float As[RK][RT + 1];
	__shared__ float Bs[RK][RT + 1];
	int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
	int m0 = blockIdx.y * RT, n0 = blockIdx.x * RT;
	float acc[4][4];

	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			acc[i][j] = 0.f;

	for (int k0 = 0; k0 < K; k0 += RK) {
		for (int e = threadIdx.x; e < RT * RK; e += 256) {
			int mm = e / RK, kk = e % RK;
			int m = m0 + mm, k = k0 + kk;
			float v = 0.f;
			if (m < M && k < K)
				v = (float)A[(size_t)m * lda + k];
			As[kk][mm] = v;
		}
		for (int e = threadIdx.x; e < RT * RK; e += 256) {
			int nn, kk;
			if (BT) {
				nn = e / RK;
				kk = e % RK;
			} else {
				kk = e / RT;
				nn = e % RT;
			}
			int n = n0 + nn, k = k0 + kk;
			float v = 0.f;
			if (n < N && k < K)
				v = __bfloat162float(BT ? B[(size_t)n * ldb + k]
						     : B[(size_t)k * ldb + n]);
			Bs[kk][nn] = v;
		}
		__syncthreads();
		for (int kk = 0; kk < RK; kk++) {
			float a[4], bb[4];
			for (int i = 0; i < 4; i++)
				a[i] = As[kk][ty + 16 * i];
			for (int j = 0; j < 4; j++)
				bb[j] = Bs[kk][tx + 16 * j];
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++)
					acc[i][j] = fmaf(a[i], bb[j], acc[i][j]);
		}
		__syncthreads();
	}
	for (int i = 0; i < 4; i++) {
		int m = m0 + ty + 16 * i;
		if (m >= M)
			continue;
		for (int j = 0; j < 4; j++) {
			int n = n0 + tx + 16 * j;
			if (n < N)
				C[(size_t)m * ldc + n] = alpha * acc[i][j];
		}
	}
}

static __device__ float ref_block_reduce(float v, bool is_max, float *red)
{
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

	for (int o = 16; o > 0; o >>= 1) {
		float w = __shfl_xor_sync(0xffffffffu, v, o);
		v = is_max ? fmaxf(v, w) : v + w;
	}
	__syncthreads();
	if (lane == 0)
		red[warp] = v;
	__syncthreads();
	v = red[0];
	for (int i = 1; i < (int)(blockDim.x >> 5); i++)
		v = is_max ? fmaxf(v, red[i]) : v + red[i];
	return v;
}

/* In place: each row of scores becomes its softmax. */
__global__ void __launch_bounds__(256)
ref_softmax_kernel(float *S, int t)
{
	__shared__ float red[8];
	float *row = S + (size_t)blockIdx.x * t;
	float mx = -INFINITY, sum = 0.f;

	for (int j = threadIdx.x; j < t; j += blockDim.x)
		mx = fmaxf(mx, row[j]);
	mx = ref_block_reduce(mx, true, red);
	for (int j = threadIdx.x; j < t; j += blockDim.x) {
		float p = expf(row[j] - mx);
		row[j] = p;
		sum += p;
	}
	sum = ref_block_reduce(sum, false, red);
	float inv = 1.f / sum;
	for (int j = threadIdx.x; j < t; j += blockDim.x)
		row[j] *= inv;
}

cudaError_t ref_gpu_fp32(const bf16 *q, const bf16 *kv, float *ref,
			 float *scratch, int b, int s, int t,
			 cudaStream_t stream)
{
	int M = s * MLA_HEADS;
	float scale = 1.f / sqrtf((float)MLA_DQK);

	for (int bi = 0; bi < b; bi++) {
		const bf16 *qb = q + (size_t)bi * M * MLA_DQK;
		const bf16 *kb = kv + (size_t)bi * t * MLA_DQK;
		float *ob = ref + (size_t)bi * M * MLA_DV;
		dim3 g1((t + RT - 1) / RT, (M + RT - 1) / RT);
		dim3 g2((MLA_DV + RT - 1) / RT, (M + RT - 1) / RT);

		ref_gemm_kernel<bf16, true><<<g1, 256, 0, stream>>>(
			qb, MLA_DQK, kb, MLA_DQK, scratch, t, M, t, MLA_DQK,
			scale);
		ref_softmax_kernel<<<M, 256, 0, stream>>>(scratch, t);
		ref_gemm_kernel<float, false><<<g2, 256, 0, stream>>>(
			scratch, t, kb, MLA_DQK, ob, MLA_DV, M, MLA_DV, t,
			1.f);
		cudaError_t err = cudaGetLastError();
		if (err != cudaSuccess)
			return err;
	}
	return cudaSuccess;
}

__global__ void __launch_bounds__(256)
ref_compare_kernel(const bf16 *out, const float *ref, size_t n,
		   struct ref_stats *st)
{
	__shared__ double red[3][8];
	__shared__ unsigned long long cnt[2];
	double d2 = 0, r2 = 0, mx = 0;
	unsigned long long bad = 0, pois = 0;
	const unsigned short *bits = (const unsigned short *)out;

	if (threadIdx.x == 0)
		cnt[0] = cnt[1] = 0;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float o = __bfloat162float(out[i]);
		double r = ref[i];
		if (bits[i] == REF_POISON_BITS)
			pois++;
		if (!isfinite(o)) {
			bad++;
			continue;
		}
		double d = (double)o - r;
		d2 += d * d;
		r2 += r * r;
		mx = fmax(mx, fabs(d));
	}
	for (int o = 16; o > 0; o >>= 1) {
		d2 += __shfl_xor_sync(0xffffffffu, d2, o);
		r2 += __shfl_xor_sync(0xffffffffu, r2, o);
		mx = fmax(mx, __shfl_xor_sync(0xffffffffu, mx, o));
	}
	__syncthreads();
	if ((threadIdx.x & 31) == 0) {
		red[0][threadIdx.x >> 5] = d2;
		red[1][threadIdx.x >> 5] = r2;
		red[2][threadIdx.x >> 5] = mx;
	}
	if (bad)
		atomicAdd(&cnt[0], bad);
	if (pois)
		atomicAdd(&cnt[1], pois);
	__syncthreads();
	if (threadIdx.x == 0) {
		for (int w = 1; w < 8; w++) {
			red[0][0] += red[0][w];
			red[1][0] += red[1][w];
			red[2][0] = fmax(red[2][0], red[2][w]);
		}
		atomicAdd(&st->diff2, red[0][0]);
		atomicAdd(&st->ref2, red[1][0]);
		/* max of non-negative doubles through their bit patterns */
		atomicMax((unsigned long long *)&st->max_abs,
			  (unsigned long long)__double_as_longlong(red[2][0]));
		atomicAdd(&st->nonfinite, cnt[0]);
		atomicAdd(&st->poisoned, cnt[1]);
	}
}

cudaError_t ref_compare(const bf16 *out, const float *ref, size_t n,
			struct ref_stats *stats, cudaStream_t stream)
{
	struct ref_stats *d = NULL;
	cudaError_t err = cudaMalloc(&d, sizeof(*d));

	if (err != cudaSuccess)
		return err;
	err = cudaMemsetAsync(d, 0, sizeof(*d), stream);
	if (err == cudaSuccess) {
		ref_compare_kernel<<<1024, 256, 0, stream>>>(out, ref, n, d);
		err = cudaGetLastError();
	}
	if (err == cudaSuccess)
		err = cudaMemcpyAsync(stats, d, sizeof(*d),
				      cudaMemcpyDeviceToHost, stream);
	if (err == cudaSuccess)
		err = cudaStreamSynchronize(stream);
	cudaError_t err2 = cudaFree(d);
	return err != cudaSuccess ? err : err2;
}

float bf16_bits_to_float(uint16_t v)
{
	uint32_t u = (uint32_t)v << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

uint16_t float_to_bf16_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return 0x7fc0;
	u += 0x7fffu + ((u >> 16) & 1u);	/* round to nearest even */
	return (uint16_t)(u >> 16);
}

void ref_host_row(const uint16_t *q, const uint16_t *kv, int s, int t,
		  int bi, int si, int hi, double *out)
{
	const uint16_t *qr = q + (((size_t)bi * s + si) * MLA_HEADS + hi) *
		MLA_DQK;
	const uint16_t *kb = kv + (size_t)bi * t * MLA_DQK;
	double qd[MLA_DQK];
	double *sc = new double[t];
	double scale = 1.0 / sqrt((double)MLA_DQK), mx = -INFINITY, sum = 0;

	for (int d = 0; d < MLA_DQK; d++)
		qd[d] = bf16_bits_to_float(qr[d]);
	for (int j = 0; j < t; j++) {
		const uint16_t *kr = kb + (size_t)j * MLA_DQK;
		double acc = 0;
		for (int d = 0; d < MLA_DQK; d++)
			acc += qd[d] * bf16_bits_to_float(kr[d]);
		sc[j] = acc * scale;
		if (sc[j] > mx)
			mx = sc[j];
	}
	for (int j = 0; j < t; j++) {
		sc[j] = exp(sc[j] - mx);
		sum += sc[j];
	}
	for (int d = 0; d < MLA_DV; d++)
		out[d] = 0;
	for (int j = 0; j < t; j++) {
		const uint16_t *vr = kb + (size_t)j * MLA_DQK;
		double p = sc[j] / sum;
		for (int d = 0; d < MLA_DV; d++)
			out[d] += p * bf16_bits_to_float(vr[d]);
	}
	delete[] sc;
}
