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
#include "lockfile.h"
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

/* A whole number in [lo, hi], or -1: a device's counts as written. */
static long count_in(const cJSON *o, const char *key, long lo, long hi)
{
	double v = num(o, key);

	if (isnan(v) || v < (double)lo || v > (double)hi || v != floor(v))
		return -1;
	return (long)v;
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

/* Whether there are samples, each taken in kernel replay. */
static int all_kernel_replay(const cJSON *profiled)
{
	const cJSON *s;
	int n = 0;

	cJSON_ArrayForEach(s, profiled) {
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(s, "replay");
		if (!cJSON_IsString(r) || strcmp(r->valuestring, "kernel"))
			return 0;
		n++;
	}
	return n > 0;
}

static void triple(long out[3], const cJSON *a)
{
	int i;

	for (i = 0; i < 3; i++) {
		const cJSON *it = cJSON_GetArrayItem(a, i);
		/* a damaged capture's number out of range counts as absent */
		out[i] = cJSON_IsNumber(it) && isfinite(it->valuedouble) &&
			it->valuedouble >= 0 &&
			it->valuedouble <= 9007199254740992.0 ?
			(long)it->valuedouble : 1;
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

/*
 * Why a kernel without samples was not measured, in words, from the
 * library's code for it (lib/inject/README.md) and what the capture says
 * around it; `fatal` is the message of an error that kept the profiler
 * from measuring anything, or NULL.
 */
static char *not_measured_reason(const cJSON *k, const cJSON *root,
				 const char *fatal)
{
	const cJSON *why = cJSON_GetObjectItemCaseSensitive(k, "not_profiled");
	const cJSON *second = cJSON_GetObjectItemCaseSensitive(root,
							       "second_run");
	const char *code = cJSON_IsString(why) ? why->valuestring : NULL;
	double calls = num(k, "launch_calls"), launches = num(k, "launches");

	if (fatal)
		return kopt_xstrfmt("%s", fatal);
	if (!code)	/* a capture from before the reasons were written */
		code = calls < launches ? "graph" : "too-few-launches";
	if (!strcmp(code, "graph"))
		return second ?
			kopt_strdup("launched from a CUDA graph that the "
				    "second run could not launch node by node "
				    "(the capture's warnings say why): timed, "
				    "not profiled") :
			kopt_strdup("launched from a CUDA graph: timed; no "
				    "second run launched the graph node by "
				    "node to profile it");
	if (!strcmp(code, "other-context"))
		return kopt_strdup("launched on a CUDA context the profiler "
				   "could not move to (another GPU, or 16 "
				   "moves made): timed, not profiled");
	if (!strcmp(code, "too-few-launches"))
		return second ?
			kopt_xstrfmt("too few launches (%.0f): the second run "
				     "could not sample it either", launches) :
			kopt_xstrfmt("too few launches (%.0f) to get past the "
				     "warm-up, and no second run sampled it",
				     launches);
	if (!strcmp(code, "samples-failed"))
		return kopt_strdup("its samples failed (the capture's warnings "
				   "say why)");
	if (!strcmp(code, "max-kernels"))
		return kopt_strdup("more distinct kernels than "
				   "KOPT_INJECT_MAX_KERNELS");
	if (!strcmp(code, "filtered") || !strcmp(code, "not-asked"))
		return kopt_strdup("not asked for (KOPT_INJECT_KERNELS or "
				   "KOPT_INJECT_METRICS)");
	if (!strcmp(code, "profiler-failed"))
		return kopt_strdup("the profiler failed (the capture's errors "
				   "say why)");
	return kopt_xstrfmt("not profiled (%s)", code);
}

/*
 * The profiled durations of the samples, in us, of the first run
 * (`second` 0) or of the second; the count.
 */
static size_t sample_durations(const cJSON *prof, int second, double **v,
			       size_t *cap)
{
	const cJSON *s;
	size_t n = 0;

	cJSON_ArrayForEach(s, prof) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(s, "metrics");
		double x = num(m, M_DURATION);
		if (isnan(x) || (num(s, "run") == 2) != second)
			continue;
		if (n >= *cap) {
			*cap += 64;
			*v = kopt_realloc(*v, *cap * sizeof(**v));
		}
		(*v)[n++] = x / 1000.0;
	}
	return n;
}

/* A kernel with no sample that ran only from CUDA graphs. */
/* CUPTI's Range Profiler's own kernel, which the Activity API sees. */
static int profilers_own(const cJSON *k)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");

	return num(k, "launch_calls") == 0 && cJSON_IsString(name) &&
	       !strcmp(name->valuestring, "WaitNs");
}

static int only_in_graph(const cJSON *k)
{
	const cJSON *why = cJSON_GetObjectItemCaseSensitive(k, "not_profiled");

	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(k,
							       "profiled")))
		return 0;
	if (cJSON_IsString(why))
		return !strcmp(why->valuestring, "graph");
	return num(k, "launch_calls") < num(k, "launches");
}

static int parse_stage(struct kopt_results_stage *st, const cJSON *k,
		       long warmup, const char *label, const cJSON *root,
		       const char *fatal)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");
	const cJSON *durs = cJSON_GetObjectItemCaseSensitive(k, "durations_ns");
	const cJSON *prof = cJSON_GetObjectItemCaseSensitive(k, "profiled");
	const cJSON *d;
	struct kopt_buf shown = KOPT_BUF_INIT;
	double *v, rd, wr, ld, sto, smem_s, smem_d;
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
	/* a count out of any launch count's range is no count */
	st->launches = count_in(k, "launches", 0, 1L << 53);
	if (st->launches < 0)
		st->launches = 0;

	v = kopt_calloc(cap, sizeof(*v));
	cJSON_ArrayForEach(d, durs) {
		if (idx++ < warmup)
			continue;
		if (cJSON_IsNumber(d) && d->valuedouble > 0)
			v[n++] = d->valuedouble / 1000.0;
	}
	/* every launch a warm-up or profiled: the samples of this run */
	if (!n)
		n = sample_durations(prof, 0, &v, &cap);
	if (!n) {
		/* launches too few to leave warm-up: take them all */
		cJSON_ArrayForEach(d, durs)
			if (cJSON_IsNumber(d) && d->valuedouble > 0)
				v[n++] = d->valuedouble / 1000.0;
	}
	/* nothing timed at all: the samples of the second run */
	if (!n)
		n = sample_durations(prof, 1, &v, &cap);
	set_stats(&st->duration_us, v, n);
	free(v);

	if (!cJSON_GetArraySize(prof))
		st->not_measured = not_measured_reason(k, root, fatal);
	st->tc_pct = sampled(prof, M_TC);
	st->dram_pct = sampled(prof, M_DRAM);
	rd = sampled(prof, M_DRAM_RD);
	wr = sampled(prof, M_DRAM_WR);
	if (!isnan(rd) && !isnan(wr))
		st->dram_bytes = rd + wr;
	st->occ_pct = sampled(prof, M_OCC);
	st->l2_hit_pct = sampled(prof, M_L2);
	st->kernel_replay = all_kernel_replay(prof);
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
	const char *fatal = NULL;
	long warmup, bus_bits, sms;
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
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(first,
								   "code");
		/*
		 * Counters that cannot be read leave the durations: the
		 * stages are timed and say why they were not measured.
		 */
		if (cJSON_IsString(code) && cJSON_IsString(msg) &&
		    (!strncmp(code->valuestring, "counters-", 9) ||
		     !strcmp(code->valuestring, "metrics-unknown"))) {
			fatal = msg->valuestring;
		} else {
			ret = kopt_error("%s: the profiler failed: %s", label,
					 cJSON_IsString(msg) ? msg->valuestring
					 : "unknown error");
			goto done;
		}
	}
	kernels = cJSON_GetObjectItemCaseSensitive(root, "kernels");
	if (!cJSON_GetArraySize(kernels)) {
		ret = kopt_error("%s: the benchmark launched no kernel", label);
		goto done;
	}
	cfg = cJSON_GetObjectItemCaseSensitive(root, "config");
	warmup = count_in(cfg, "warmup", 0, 1L << 30);
	if (warmup < 0)
		warmup = 0;

	dev = cJSON_GetObjectItemCaseSensitive(root, "device");
	free(e->device.name);
	e->device.name = device_str(dev, "name");
	free(e->device.cc);
	e->device.cc = device_str(dev, "cc");
	free(e->device.uuid);
	e->device.uuid = device_str(dev, "uuid");
	/* counts out of any device's range are not the device's: unknown */
	bus_bits = count_in(dev, "mem_bus_bits", 1, 1 << 16);
	sms = count_in(dev, "sms", 1, 1 << 16);
	if (sms > 0)
		e->device.sms = sms;
	e->device.sm_clock_mhz = num(dev, "sm_clock_khz") / 1000.0;
	e->device.mem_clock_mhz = num(dev, "mem_clock_khz") / 1000.0;
	if (e->device.cc && e->device.sms &&
	    !isnan(e->device.sm_clock_mhz) && bus_bits > 0) {
		int major = atoi(e->device.cc);
		const char *dot = strchr(e->device.cc, '.');
		kopt_device_peaks(major, dot ? atoi(dot + 1) : 0,
				  (int)e->device.sms, e->device.sm_clock_mhz,
				  e->device.mem_clock_mhz,
				  (int)bus_bits,
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
		/*
		 * seen only by the Activity API, and not profiled in a second
		 * run that launched its graph node by node: the driver's own
		 * kernels, or a graph's
		 */
		if (!stages && num(k, "launch_calls") == 0 &&
		    !cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(k,
							"profiled")))
			continue;
		/* the Range Profiler's own, whatever the pattern */
		if (profilers_own(k))
			continue;
		if ((ret = parse_stage(&st, k, warmup, label, root, fatal)))
			goto done;
		if (!fatal && only_in_graph(k)) {
			if (cJSON_GetObjectItemCaseSensitive(root,
							     "second_run"))
				ret = kopt_error("%s: '%s' runs only from a "
						 "CUDA graph that the second "
						 "run could not launch node by "
						 "node (the capture's warnings "
						 "say why): launch it plainly "
						 "to measure it, or leave it "
						 "out with kernel.<name>.stages",
						 label, st.name);
			else
				ret = kopt_error("%s: '%s' runs only from a "
						 "CUDA graph, and no second run "
						 "launched the graph node by "
						 "node: profile it again (not "
						 "from this capture), launch it "
						 "plainly, or leave it out with "
						 "kernel.<name>.stages", label,
						 st.name);
			free(st.name);
			free(st.not_measured);
			goto done;
		}
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

static cJSON *read_json(const char *path)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	cJSON *root;

	if (kopt_buf_read_file(&text, path)) {
		kopt_error("cannot read capture '%s': %s", path,
			   strerror(errno));
		return NULL;
	}
	root = cJSON_ParseWithLength(text.buf, text.len);
	kopt_buf_release(&text);
	if (!root)
		kopt_error("%s: not a capture: the file is not JSON", path);
	return root;
}

int kopt_capture_needs_second_run(const char *path, const char *stages)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	cJSON *root = NULL;
	const cJSON *kernels, *k;
	double most = 0;
	int ret = 0;

	/* nothing printed: the capture's parse says what is wrong with it */
	if (!kopt_buf_read_file(&text, path))
		root = cJSON_ParseWithLength(text.buf, text.len);
	kopt_buf_release(&text);
	if (!root)
		return -1;
	kernels = cJSON_GetObjectItemCaseSensitive(root, "kernels");
	cJSON_ArrayForEach(k, kernels)
		if (!profilers_own(k) && num(k, "launches") > most)
			most = num(k, "launches");
	cJSON_ArrayForEach(k, kernels) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");
		const cJSON *why = cJSON_GetObjectItemCaseSensitive(k,
							"not_profiled");
		int graph = cJSON_IsString(why) &&
			    !strcmp(why->valuestring, "graph");

		/* a graph's kernel: the second run launches it node by node */
		if (profilers_own(k) ||
		    (num(k, "launch_calls") == 0 && !graph) ||
		    !cJSON_IsString(why) ||
		    (strcmp(why->valuestring, "too-few-launches") &&
		     strcmp(why->valuestring, "samples-failed") &&
		     strcmp(why->valuestring, "max-kernels") && !graph))
			continue;
		if (stages ? cJSON_IsString(name) &&
			     !fnmatch(stages, name->valuestring, 0) :
			     num(k, "launches") * 2 >= most)
			ret = 1;
	}
	cJSON_Delete(root);
	return ret;
}

int kopt_capture_set_program(const char *path,
			     const struct kopt_capture_program *p)
{
	cJSON *root = read_json(path), *o;
	char *text;
	int ret;

	if (!root)
		return -1;
	cJSON_DeleteItemFromObjectCaseSensitive(root, "program");
	o = cJSON_AddObjectToObject(root, "program");
	cJSON_AddStringToObject(o, "kernel", p->kernel);
	cJSON_AddStringToObject(o, "version", p->version);
	cJSON_AddStringToObject(o, "run", p->run);
	if (p->tree)
		cJSON_AddStringToObject(o, "tree", p->tree);
	else
		cJSON_AddNullToObject(o, "tree");
	text = cJSON_Print(root);
	cJSON_Delete(root);
	ret = kopt_write_file_atomic(path, text, strlen(text), 0644);
	cJSON_free(text);
	return ret;
}

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(it) ? it->valuestring : NULL;
}

/* One difference: an error, or with --force a warning; 0 when equal. */
static int differs(const char *path, int force, const char *what,
		   const char *had, const char *want)
{
	if (!had || !want || !strcmp(had, want))
		return 0;
	if (force) {
		kopt_warning("%s: recorded from %s '%s', not '%s' (--force)",
			     path, what, had, want);
		return 0;
	}
	return kopt_error("%s: recorded from %s '%s', not '%s': profile "
			  "again, or replay it anyway with --force", path,
			  what, had, want);
}

int kopt_capture_check_program(const char *path,
			       const struct kopt_capture_program *want,
			       const char *uuid, int force, char **tree)
{
	cJSON *root = read_json(path);
	const cJSON *prog, *dev;
	int ret = 0;

	*tree = NULL;
	if (!root)
		return -1;
	prog = cJSON_GetObjectItemCaseSensitive(root, "program");
	dev = cJSON_GetObjectItemCaseSensitive(root, "device");
	if (!cJSON_IsObject(prog)) {
		/* recorded by hand, or before captures said what they hold */
		kopt_warning("%s: the capture does not say what it was "
			     "recorded from: replayed as %s %s", path,
			     want->kernel, want->version);
		goto done;
	}
	if (str_of(prog, "tree"))
		*tree = kopt_strdup(str_of(prog, "tree"));
	if (differs(path, force, "kernel", str_of(prog, "kernel"),
		    want->kernel) ||
	    differs(path, force, "version", str_of(prog, "version"),
		    want->version) ||
	    differs(path, force, "the command", str_of(prog, "run"),
		    want->run) ||
	    differs(path, force, "the source tree", str_of(prog, "tree"),
		    want->tree) ||
	    differs(path, force, "the device", str_of(dev, "uuid"), uuid))
		ret = -1;
done:
	cJSON_Delete(root);
	return ret;
}
