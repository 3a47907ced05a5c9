/*
 * bench: checks and times one version of the MLA decode kernel.
 *
 *   bench --b B --s S --t T [--iters N] [--check] [--seed X]
 *
 * Each run draws fresh random inputs (uniform, never zeros) from a seed
 * (printed; --seed repeats a run), poisons the output with a NaN pattern,
 * runs the kernel once and checks that every output element was written
 * and is finite, and compares sampled rows against a float64 host
 * reference.  --check adds a full fp32 GPU reference over every output
 * and more sampled rows.  Then it warms up, times many launches with CUDA
 * events (rotating through input sets larger than L2 together, so no
 * launch finds its inputs in cache), checks one more launch, and prints
 * one summary line last.
 *
 * The check passes when ||out - ref|| / ||ref|| < 1e-2 (bf16 output
 * rounding alone is about 2e-3), over all outputs against the fp32
 * reference and for each sampled row against float64; any NaN, Inf or
 * unwritten element fails.  The fp32 reference itself must agree with
 * float64 on the sampled rows to 1e-4.
 *
 * Exit status: 0 check passed, 1 check failed, 2 out of memory, 3 other
 * CUDA error, 129 usage error.
 */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <vector>
#include "mla_decode.h"
#include "reference.h"

#ifndef MLA_VERSION
#define MLA_VERSION "v?"
#endif

#define REL_TOL 1e-2
#define REF_TOL 1e-4
#define EXIT_CHECK 1
#define EXIT_OOM 2
#define EXIT_CUDA 3
#define EXIT_USAGE 129

static const char usage_str[] =
	"usage: bench --b B --s S --t T [--iters N] [--check] [--seed X]\n";

static void die_cuda(cudaError_t err, const char *what, int line)
{
	if (err == cudaErrorMemoryAllocation) {
		fprintf(stderr, "fatal: out of memory: %s\n", what);
		exit(EXIT_OOM);
	}
	fprintf(stderr, "fatal: CUDA error %s (%s): %s, line %d\n",
		cudaGetErrorName(err), cudaGetErrorString(err), what, line);
	exit(EXIT_CUDA);
}

#define CK(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) \
		die_cuda(e_, #call, __LINE__); \
} while (0)

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "fatal: out of memory: %zu bytes of host memory\n",
			n);
		exit(EXIT_OOM);
	}
	return p;
}

static void *dmalloc(size_t n, const char *what)
{
	void *p = NULL;
	cudaError_t err = cudaMalloc(&p, n ? n : 1);

	if (err == cudaErrorMemoryAllocation) {
		fprintf(stderr,
			"fatal: out of memory: %s needs %.1f MB of device memory\n",
			what, n / 1e6);
		exit(EXIT_OOM);
	}
	if (err != cudaSuccess)
		die_cuda(err, what, __LINE__);
	return p;
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [-amp, amp), as bf16 bits. */
static void fill_random(uint16_t *h, size_t n, uint64_t seed, float amp)
{
	uint64_t st = seed;
	uint16_t lut[65536];

	for (uint32_t u = 0; u < 65536; u++)
		lut[u] = float_to_bf16_bits(((float)u * (1.f / 32768.f) - 1.f) *
					    amp);
	for (size_t i = 0; i < n; i += 4) {
		uint64_t r = splitmix(&st);
		for (size_t k = 0; k < 4 && i + k < n; k++)
			h[i + k] = lut[(r >> (16 * k)) & 0xffff];
	}
}

struct set {
	bf16 *q, *kv, *out;
};

struct problem {
	int b, s, t;
	size_t nq, nkv, nout;
};

static int launch(const struct problem *p, const struct set *st, void *ws,
		  cudaStream_t stream)
{
	int rc = mla_decode_launch(st->q, st->kv, st->out, p->b, p->s, p->t,
				   ws, stream);
	if (rc)
		die_cuda((cudaError_t)rc, "mla_decode_launch", __LINE__);
	CK(cudaGetLastError());
	return 0;
}

/* Every output element written and finite; returns the bad count. */
static size_t scan_output(const uint16_t *h, size_t n, size_t *unwritten)
{
	size_t bad = 0;

	*unwritten = 0;
	for (size_t i = 0; i < n; i++) {
		if (h[i] == REF_POISON_BITS)
			(*unwritten)++;
		if ((h[i] & 0x7f80u) == 0x7f80u)
			bad++;
	}
	return bad;
}

struct row { int bi, si, hi; };

static std::vector<struct row> sample_rows(const struct problem *p, int n,
					   uint64_t seed)
{
	std::vector<struct row> rows;
	uint64_t st = seed ^ 0x5eed5eedull;

	rows.push_back({0, 0, 0});
	rows.push_back({p->b - 1, p->s - 1, MLA_HEADS - 1});
	while ((int)rows.size() < n) {
		uint64_t r = splitmix(&st);
		rows.push_back({(int)(r % p->b), (int)((r >> 20) % p->s),
				(int)((r >> 40) % MLA_HEADS)});
	}
	return rows;
}

/* float64 host check of the sampled rows; returns the largest row error. */
static double host_check(const struct problem *p, const uint16_t *hq,
			 const uint16_t *hkv, const uint16_t *hout,
			 const std::vector<struct row> &rows,
			 const float *gpu_ref_rows, double *ref_err)
{
	double worst = 0, ref_worst = 0;
	double r64[MLA_DV];

	for (size_t k = 0; k < rows.size(); k++) {
		const struct row &w = rows[k];
		size_t base = (((size_t)w.bi * p->s + w.si) * MLA_HEADS + w.hi) *
			MLA_DV;
		double d2 = 0, n2 = 0, g2 = 0;

		ref_host_row(hq, hkv, p->s, p->t, w.bi, w.si, w.hi, r64);
		for (int d = 0; d < MLA_DV; d++) {
			double o = bf16_bits_to_float(hout[base + d]);
			d2 += (o - r64[d]) * (o - r64[d]);
			n2 += r64[d] * r64[d];
			if (gpu_ref_rows) {
				double g = gpu_ref_rows[k * MLA_DV + d];
				g2 += (g - r64[d]) * (g - r64[d]);
			}
		}
		double e = n2 > 0 ? sqrt(d2 / n2) : sqrt(d2);
		if (!(e <= worst))
			worst = e;	/* NaN sticks */
		if (gpu_ref_rows) {
			double ge = n2 > 0 ? sqrt(g2 / n2) : sqrt(g2);
			if (!(ge <= ref_worst))
				ref_worst = ge;
		}
	}
	if (ref_err)
		*ref_err = ref_worst;
	return worst;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "b", required_argument, NULL, 'b' },
		{ "s", required_argument, NULL, 's' },
		{ "t", required_argument, NULL, 't' },
		{ "iters", required_argument, NULL, 'i' },
		{ "check", no_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct problem p = { 0, 0, 0, 0, 0, 0 };
	int iters = 0, full = 0, c;
	uint64_t seed = 0;
	int seed_set = 0;

	while ((c = getopt_long_only(argc, argv, "", longopts, NULL)) != -1) {
		char *end = NULL;
		long v = 0;
		switch (c) {
		case 'b': case 's': case 't': case 'i':
			v = strtol(optarg, &end, 10);
			if (!*optarg || *end || v < 1 || v > (1L << 24)) {
				fprintf(stderr,
					"error: --%s needs a positive integer, not '%s'\n",
					c == 'i' ? "iters" : (c == 'b' ? "b" :
					c == 's' ? "s" : "t"), optarg);
				return EXIT_USAGE;
			}
			if (c == 'b') p.b = (int)v;
			if (c == 's') p.s = (int)v;
			if (c == 't') p.t = (int)v;
			if (c == 'i') iters = (int)v;
			break;
		case 'c':
			full = 1;
			break;
		case 'S':
			seed = strtoull(optarg, &end, 0);
			if (!*optarg || *end) {
				fprintf(stderr, "error: bad --seed '%s'\n", optarg);
				return EXIT_USAGE;
			}
			seed_set = 1;
			break;
		case 'h':
			fputs(usage_str, stdout);
			return 0;
		default:
			fputs(usage_str, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc || !p.b || !p.s || !p.t) {
		fputs(usage_str, stderr);
		return EXIT_USAGE;
	}
	if (!seed_set) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((uint64_t)ts.tv_sec * 1000000007ull) ^
			(uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
	}
	p.nq = (size_t)p.b * p.s * MLA_HEADS * MLA_DQK;
	p.nkv = (size_t)p.b * p.t * MLA_DQK;
	p.nout = (size_t)p.b * p.s * MLA_HEADS * MLA_DV;

	int dev = 0;
	cudaDeviceProp prop;
	CK(cudaGetDevice(&dev));
	CK(cudaGetDeviceProperties(&prop, dev));
	cudaStream_t stream;
	CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

	/* enough input sets that consecutive launches never hit in L2 */
	size_t set_bytes = 2 * (p.nq + p.nkv + p.nout);
	int nsets = (int)((3.0 * prop.l2CacheSize) / set_bytes) + 1;
	nsets = std::max(2, std::min(nsets, 8));

	size_t ws_bytes = mla_decode_workspace_bytes(p.b, p.s, p.t);
	void *ws = ws_bytes ? dmalloc(ws_bytes, "workspace") : NULL;
	std::vector<struct set> sets(nsets);
	for (int k = 0; k < nsets; k++) {
		sets[k].q = (bf16 *)dmalloc(2 * p.nq, "q");
		sets[k].kv = (bf16 *)dmalloc(2 * p.nkv, "kv cache");
		sets[k].out = (bf16 *)dmalloc(2 * p.nout, "out");
	}
	uint16_t *hq = (uint16_t *)xmalloc(2 * p.nq);
	uint16_t *hkv = (uint16_t *)xmalloc(2 * p.nkv);
	uint16_t *hout = (uint16_t *)xmalloc(2 * p.nout);
	for (int k = nsets - 1; k >= 0; k--) {	/* set 0 stays on the host */
		fill_random(hq, p.nq, seed + 2 * k + 1, 2.f);
		fill_random(hkv, p.nkv, seed + 2 * k + 2, 1.f);
		CK(cudaMemcpy(sets[k].q, hq, 2 * p.nq, cudaMemcpyHostToDevice));
		CK(cudaMemcpy(sets[k].kv, hkv, 2 * p.nkv,
			      cudaMemcpyHostToDevice));
	}
	printf("# mla_decode %s b=%d s=%d t=%d on %s (%d SMs, %d MB L2), "
	       "seed %llu, %d input sets, workspace %.1f MB\n", MLA_VERSION,
	       p.b, p.s, p.t, prop.name, prop.multiProcessorCount,
	       prop.l2CacheSize >> 20, (unsigned long long)seed, nsets,
	       ws_bytes / 1e6);

	/* one checked run */
	int ok = 1;
	char why[256] = "";
	double rel_err = 0;
	const char *err_kind = "sampled";
	std::vector<struct row> rows = sample_rows(&p, full ? 32 : 4, seed);

	CK(cudaMemsetAsync(sets[0].out, 0xff, 2 * p.nout, stream));
	launch(&p, &sets[0], ws, stream);
	CK(cudaStreamSynchronize(stream));
	CK(cudaMemcpy(hout, sets[0].out, 2 * p.nout, cudaMemcpyDeviceToHost));
	size_t unwritten = 0, bad = scan_output(hout, p.nout, &unwritten);
	if (bad) {
		ok = 0;
		snprintf(why, sizeof(why), "%zu of %zu outputs not finite, "
			 "%zu never written", bad, p.nout, unwritten);
	}

	float *ref_rows = NULL;
	if (full) {
		float *ref = (float *)dmalloc(4 * p.nout, "fp32 reference");
		float *scratch = (float *)dmalloc((size_t)4 * p.s * MLA_HEADS *
						  p.t, "reference scores");
		struct ref_stats st;
		CK(ref_gpu_fp32(sets[0].q, sets[0].kv, ref, scratch, p.b, p.s,
				p.t, stream));
		CK(ref_compare(sets[0].out, ref, p.nout, &st, stream));
		ref_rows = (float *)xmalloc(sizeof(float) * MLA_DV *
					    rows.size());
		for (size_t k = 0; k < rows.size(); k++) {
			size_t base = (((size_t)rows[k].bi * p.s + rows[k].si) *
				       MLA_HEADS + rows[k].hi) * MLA_DV;
			CK(cudaMemcpy(ref_rows + k * MLA_DV, ref + base,
				      sizeof(float) * MLA_DV,
				      cudaMemcpyDeviceToHost));
		}
		rel_err = st.ref2 > 0 ? sqrt(st.diff2 / st.ref2) : sqrt(st.diff2);
		err_kind = "full";
		printf("# check: fp32 GPU reference over all %zu outputs: "
		       "rel_err %.3e, max abs err %.3e, %llu not finite, "
		       "%llu never written\n", p.nout, rel_err, st.max_abs,
		       st.nonfinite, st.poisoned);
		if (ok && (st.nonfinite || st.poisoned)) {
			ok = 0;
			snprintf(why, sizeof(why), "%llu outputs not finite, "
				 "%llu never written", st.nonfinite,
				 st.poisoned);
		}
		if (ok && !(rel_err < REL_TOL)) {
			ok = 0;
			snprintf(why, sizeof(why), "rel_err %.3e against the "
				 "fp32 reference is over %.0e", rel_err,
				 REL_TOL);
		}
		CK(cudaFree(ref));
		CK(cudaFree(scratch));
	}
	double ref_err = 0;
	double host_err = host_check(&p, hq, hkv, hout, rows, ref_rows,
				     &ref_err);
	printf("# check: float64 host reference on %zu sampled rows: worst "
	       "row rel_err %.3e", rows.size(), host_err);
	if (ref_rows)
		printf(" (fp32 reference against float64: %.3e)", ref_err);
	printf("\n");
	if (!full)
		rel_err = host_err;
	if (ok && !(host_err < REL_TOL)) {
		ok = 0;
		snprintf(why, sizeof(why), "a sampled row has rel_err %.3e "
			 "against float64, over %.0e", host_err, REL_TOL);
	}
	if (ref_rows && !(ref_err < REF_TOL)) {
		ok = 0;
		snprintf(why, sizeof(why), "the fp32 reference disagrees with "
			 "float64 (%.3e): the harness is broken", ref_err);
	}
	free(ref_rows);

	/* warm up and size the run from the fastest single launch: a
	 * profiler slows some early launches, and sizing from their mean
	 * would shrink the timed loop */
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	float est_ms = 0;
	for (int i = 0; i < 8; i++) {
		float ms = 0;
		CK(cudaEventRecord(e0, stream));
		launch(&p, &sets[i % nsets], ws, stream);
		CK(cudaEventRecord(e1, stream));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		if (i == 0 || ms < est_ms)
			est_ms = ms;
	}
	if (!iters) {
		iters = 200;
		if (est_ms * iters > 2000.f)
			iters = std::max(20, (int)(2000.f / est_ms));
	}
	std::vector<cudaEvent_t> start(iters), stop(iters);
	for (int i = 0; i < iters; i++) {
		CK(cudaEventCreate(&start[i]));
		CK(cudaEventCreate(&stop[i]));
	}
	for (int i = 0; i < iters; i++) {
		CK(cudaEventRecord(start[i], stream));
		launch(&p, &sets[i % nsets], ws, stream);
		CK(cudaEventRecord(stop[i], stream));
	}
	CK(cudaStreamSynchronize(stream));
	std::vector<float> us(iters);
	for (int i = 0; i < iters; i++) {
		CK(cudaEventElapsedTime(&us[i], start[i], stop[i]));
		us[i] *= 1000.f;
		CK(cudaEventDestroy(start[i]));
		CK(cudaEventDestroy(stop[i]));
	}
	std::sort(us.begin(), us.end());
	double med = iters % 2 ? us[iters / 2] :
		0.5 * (us[iters / 2 - 1] + us[iters / 2]);

	/* the output of a launch after the timed ones must still be right */
	CK(cudaMemsetAsync(sets[0].out, 0xff, 2 * p.nout, stream));
	launch(&p, &sets[0], ws, stream);
	CK(cudaStreamSynchronize(stream));
	CK(cudaMemcpy(hout, sets[0].out, 2 * p.nout, cudaMemcpyDeviceToHost));
	bad = scan_output(hout, p.nout, &unwritten);
	double again = host_check(&p, hq, hkv, hout, rows, NULL, NULL);
	if (ok && (bad || !(again < REL_TOL))) {
		ok = 0;
		snprintf(why, sizeof(why), "the run after timing differs: "
			 "%zu outputs not finite, %zu never written, worst "
			 "sampled row rel_err %.3e", bad, unwritten, again);
	}

	double flops = 2.0 * p.b * p.s * MLA_HEADS * (double)p.t *
		(MLA_DQK + MLA_DV);
	double bytes = 2.0 * ((double)p.nkv + p.nq + p.nout);
	if (!ok)
		printf("# check FAILED: %s\n", why);
	printf("mla_decode %s b=%d s=%d t=%d: median %.1f us (min %.1f, max "
	       "%.1f) over %d launches, %.1f TFLOP/s, %.2f TB/s, check %s "
	       "rel_err %.1e (%s)\n", MLA_VERSION, p.b, p.s, p.t, med, us[0],
	       us[iters - 1], iters, flops / med * 1e-6, bytes / med * 1e-6,
	       ok ? "PASS" : "FAIL", rel_err, err_kind);
	fflush(stdout);

	for (int k = 0; k < nsets; k++) {
		CK(cudaFree(sets[k].q));
		CK(cudaFree(sets[k].kv));
		CK(cudaFree(sets[k].out));
	}
	if (ws)
		CK(cudaFree(ws));
	free(hq);
	free(hkv);
	free(hout);
	return ok ? 0 : EXIT_CHECK;
}
