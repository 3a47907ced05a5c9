#include "capture.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "config.h"
#include "device.h"
#include "error.h"
#include "banned.h"

#define M_DURATION "gpu__time_duration.sum"
#define M_TC "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
#define M_DRAM "dram__throughput.avg.pct_of_peak_sustained_elapsed"
#define M_DRAM_RD "dram__bytes_read.sum"
#define M_DRAM_WR "dram__bytes_write.sum"
#define M_OCC "sm__warps_active.avg.pct_of_peak_sustained_active"
#define M_L2 "lts__t_sector_hit_rate.pct"
#define M_LOCAL_LD "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum"
#define M_LOCAL_ST "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Linear-interpolated quantile of sorted values. */
static double quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

static void set_stats(struct kopt_results_stats *st, double *v, size_t n)
{
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	st->median = quantile(v, n, 0.5);
	st->min = v[0];
	st->max = v[n - 1];
	st->p10 = quantile(v, n, 0.1);
	st->p90 = quantile(v, n, 0.9);
	st->n = (long)n;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(it) ? it->valuedouble : NAN;
}

/* Median over the sampled launches of one metric; NAN if none has it. */
static double sampled(const cJSON *profiled, const char *metric)
{
	double v[64];
	size_t n = 0;
	const cJSON *s;

	cJSON_ArrayForEach(s, profiled) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(s, "metrics");
		double x = num(m, metric);
		if (!isnan(x) && n < KOPT_ARRAY_SIZE(v))
			v[n++] = x;
	}
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return quantile(v, n, 0.5);
}

static void triple(long out[3], const cJSON *a)
{
	int i;

	for (i = 0; i < 3; i++) {
		const cJSON *it = cJSON_GetArrayItem(a, i);
		out[i] = cJSON_IsNumber(it) ? (long)it->valuedouble : 1;
	}
}

/*
 * A kernel's name as the library demangled it must name a function: the
 * part after the last "::" outside template arguments a C identifier,
 * the whole printable ASCII.  A name that is not is a damaged capture,
 * and would break the devlog's tables.  0, or -1 with the name written
 * into `shown` with its unprintable bytes escaped.
 */
static int check_kernel_name(const char *name, struct kopt_buf *shown)
{
	const char *base = name;
	int depth = 0, bad = !*name;

	for (const char *p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20 || c > 0x7e)
			bad = 1;
		if (c == '<')
			depth++;
		else if (c == '>' && depth)
			depth--;
		else if (!depth && c == ':' && p[1] == ':')
			base = p + 2;
	}
	/* the identifier ends where its template arguments begin */
	if (!bad)
		bad = !kopt_is_identifier(base, strcspn(base, "<"));
	if (!bad)
		return 0;
	for (const char *p = name; *p && shown->len < 120; p++) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20 || c > 0x7e || c == '\\')
			kopt_buf_addf(shown, "\\x%02x", c);
		else
			kopt_buf_addch(shown, c);
	}
	return -1;
}

static int parse_stage(struct kopt_results_stage *st, const cJSON *k,
		       long warmup, const char *label)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");
	const cJSON *durs = cJSON_GetObjectItemCaseSensitive(k, "durations_ns");
	const cJSON *prof = cJSON_GetObjectItemCaseSensitive(k, "profiled");
	const cJSON *d;
	struct kopt_buf shown = KOPT_BUF_INIT;
	double *v, x, rd, wr, ld, sto, smem_s, smem_d;
	size_t n = 0, cap = (size_t)cJSON_GetArraySize(durs) + 1;
	long idx = 0;

	if (!cJSON_IsString(name))
		return kopt_error("%s: a kernel has no name", label);
	if (check_kernel_name(name->valuestring, &shown) < 0) {
		int ret = kopt_error("%s: kernel name '%s' is not a C "
				     "identifier after demangling: the capture "
				     "is damaged (profile again), or leave the "
				     "kernel out with kernel.<name>.stages",
				     label, shown.buf);
		kopt_buf_release(&shown);
		return ret;
	}
	kopt_results_stage_init(st);
	st->name = kopt_strdup(name->valuestring);
	triple(st->grid, cJSON_GetObjectItemCaseSensitive(k, "grid"));
	triple(st->block, cJSON_GetObjectItemCaseSensitive(k, "block"));
	x = num(k, "launches");
	st->launches = isnan(x) ? 0 : (long)x;

	v = kopt_calloc(cap, sizeof(*v));
	cJSON_ArrayForEach(d, durs) {
		if (idx++ < warmup)
			continue;
		if (cJSON_IsNumber(d) && d->valuedouble > 0)
			v[n++] = d->valuedouble / 1000.0;
	}
	if (!n) {
		/* every launch was a warm-up or profiled: use the samples */
		const cJSON *s;
		cJSON_ArrayForEach(s, prof) {
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(s,
								    "metrics");
			x = num(m, M_DURATION);
			if (!isnan(x) && n + 1 < cap + 64) {
				if (n >= cap) {
					cap += 64;
					v = kopt_realloc(v, cap * sizeof(*v));
				}
				v[n++] = x / 1000.0;
			}
		}
	}
	if (!n) {
		/* launches too few to leave warm-up: take them all */
		idx = 0;
		cJSON_ArrayForEach(d, durs)
			if (cJSON_IsNumber(d) && d->valuedouble > 0)
				v[n++] = d->valuedouble / 1000.0;
	}
	set_stats(&st->duration_us, v, n);
	free(v);

	if (!cJSON_GetArraySize(prof) &&
	    num(k, "launch_calls") < num(k, "launches"))
		kopt_warning("%s: '%s' ran from a CUDA graph: timed, not "
			     "profiled (CUPTI cannot profile graph launches); "
			     "launch it plainly for its metrics", label,
			     st->name);
	st->tc_pct = sampled(prof, M_TC);
	st->dram_pct = sampled(prof, M_DRAM);
	rd = sampled(prof, M_DRAM_RD);
	wr = sampled(prof, M_DRAM_WR);
	if (!isnan(rd) && !isnan(wr))
		st->dram_bytes = rd + wr;
	st->occ_pct = sampled(prof, M_OCC);
	st->l2_hit_pct = sampled(prof, M_L2);
	ld = sampled(prof, M_LOCAL_LD);
	sto = sampled(prof, M_LOCAL_ST);
	if (!isnan(ld) && !isnan(sto))
		st->spill_bytes = ld + sto;
	else if (num(k, "local_bytes_per_thread") == 0)
		st->spill_bytes = 0;
	st->regs = num(k, "regs");
	smem_s = num(k, "smem_static");
	smem_d = num(k, "smem_dynamic");
	if (!isnan(smem_s) || !isnan(smem_d))
		st->smem_bytes = (isnan(smem_s) ? 0 : smem_s) +
				 (isnan(smem_d) ? 0 : smem_d);
	st->waves = num(k, "waves");
	return 0;
}

static char *device_str(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(it) ? kopt_strdup(it->valuestring) : NULL;
}

int kopt_capture_parse(struct kopt_results_entry *e, const char *data,
		       size_t len, const char *label, const char *stages)
{
	cJSON *root = cJSON_ParseWithLength(data, len);
	const cJSON *fmt, *ver, *errs, *kernels, *dev, *cfg, *k;
	long warmup;
	double most;
	int ret = 0;

	if (!root)
		return kopt_error("%s: not a capture: the file is not JSON",
				  label);
	fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
	ver = cJSON_GetObjectItemCaseSensitive(root, "format_version");
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "kopt-inject")) {
		ret = kopt_error("%s: not a capture of libkopt-inject.so "
				 "(no \"format\": \"kopt-inject\")", label);
		goto done;
	}
	if (!cJSON_IsNumber(ver) || ver->valueint != 1) {
		ret = kopt_error("%s: capture format version %d is not "
				 "supported (this git-kopt reads 1)", label,
				 cJSON_IsNumber(ver) ? ver->valueint : -1);
		goto done;
	}
	errs = cJSON_GetObjectItemCaseSensitive(root, "errors");
	if (cJSON_GetArraySize(errs) > 0) {
		const cJSON *first = cJSON_GetArrayItem(errs, 0);
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(first,
								  "message");
		ret = kopt_error("%s: the profiler failed: %s", label,
				 cJSON_IsString(msg) ? msg->valuestring :
				 "unknown error");
		goto done;
	}
	kernels = cJSON_GetObjectItemCaseSensitive(root, "kernels");
	if (!cJSON_GetArraySize(kernels)) {
		ret = kopt_error("%s: the benchmark launched no kernel", label);
		goto done;
	}
	cfg = cJSON_GetObjectItemCaseSensitive(root, "config");
	warmup = isnan(num(cfg, "warmup")) ? 0 : (long)num(cfg, "warmup");

	dev = cJSON_GetObjectItemCaseSensitive(root, "device");
	free(e->device.name);
	e->device.name = device_str(dev, "name");
	free(e->device.cc);
	e->device.cc = device_str(dev, "cc");
	if (!isnan(num(dev, "sms")))
		e->device.sms = (long)num(dev, "sms");
	e->device.sm_clock_mhz = num(dev, "sm_clock_khz") / 1000.0;
	e->device.mem_clock_mhz = num(dev, "mem_clock_khz") / 1000.0;
	if (e->device.cc && e->device.sms &&
	    !isnan(e->device.sm_clock_mhz) && !isnan(num(dev, "mem_bus_bits"))) {
		int major = atoi(e->device.cc);
		const char *dot = strchr(e->device.cc, '.');
		kopt_device_peaks(major, dot ? atoi(dot + 1) : 0,
				  (int)e->device.sms, e->device.sm_clock_mhz,
				  e->device.mem_clock_mhz,
				  (int)num(dev, "mem_bus_bits"),
				  &e->device.peak_tflops, &e->device.peak_gbps);
		if (e->device.peak_tflops <= 0)
			e->device.peak_tflops = NAN;
	}

	/* among the program's own kernels: CUPTI's WaitNs may outnumber them */
	most = 0;
	cJSON_ArrayForEach(k, kernels)
		if (num(k, "launch_calls") != 0 && num(k, "launches") > most)
			most = num(k, "launches");
	cJSON_ArrayForEach(k, kernels) {
		struct kopt_results_stage st;
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");
		if (stages && (!cJSON_IsString(name) ||
			       fnmatch(stages, name->valuestring, 0)))
			continue;
		if (!stages && !(num(k, "launches") * 2 >= most))
			continue;
		/* seen only by the Activity API: the driver's own kernels */
		if (!stages && num(k, "launch_calls") == 0)
			continue;
		if ((ret = parse_stage(&st, k, warmup, label)))
			goto done;
		KOPT_ALLOC_GROW(e->stages, e->stages_nr + 1, e->stages_alloc);
		e->stages[e->stages_nr++] = st;
	}
	if (!e->stages_nr && !stages) {
		ret = kopt_error("%s: the benchmark launched no kernel itself "
				 "(only from CUDA graphs?): name its stages "
				 "with kernel.<name>.stages", label);
		goto done;
	}
	if (!e->stages_nr) {
		ret = kopt_error("%s: no kernel matches the stages pattern "
				 "'%s' (kernel.<name>.stages)", label, stages);
		goto done;
	}
	kopt_results_derive_metrics(e);
done:
	cJSON_Delete(root);
	return ret;
}

int kopt_capture_read_file(struct kopt_results_entry *e, const char *path,
			   const char *stages)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	int ret;

	if (kopt_buf_read_file(&text, path))
		return kopt_error("cannot read capture '%s': %s", path,
				  strerror(errno));
	ret = kopt_capture_parse(e, text.buf, text.len, path, stages);
	kopt_buf_release(&text);
	return ret;
}
