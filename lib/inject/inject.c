/*
 * libkopt-inject: entry point, configuration and launch callbacks.
 * inject.h says how the pieces fit together; README.md documents the
 * variables and the output file.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "inject.h"
#include "../banned.h"

struct kopt_inject_state g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.act_lock = PTHREAD_MUTEX_INITIALIZER,
	.note_lock = PTHREAD_MUTEX_INITIALIZER,
	.rp_cond = PTHREAD_COND_INITIALIZER,
};

/* Between a launch call's entry and exit callbacks: whether the launch
   is a range of the running pass, and when the entry began. */
static __thread int tl_in_window;
static __thread double tl_t0;
static __thread int tl_depth;

static const char *default_metrics[] = {
	"gpu__time_duration.sum",
	"sm__pipe_tensor_op_hmma_cycles_active.avg."
		"pct_of_peak_sustained_active",
	"dram__throughput.avg.pct_of_peak_sustained_elapsed",
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"lts__t_sector_hit_rate.pct",
	"l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
	"l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
	"sm__cycles_elapsed.avg.per_second",
	"dram__cycles_elapsed.avg.per_second",
};

/* ---- configuration ---- */

static unsigned long env_number(const char *name, unsigned long def,
				unsigned long min, unsigned long max)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	v = strtoul(s, &end, 10);
	if (*end || v < min || v > max) {
		kopt_inject_warning("bad-variable",
				    "%s='%s' is not a number from %lu to %lu; "
				    "using %lu", name, s, min, max, def);
		return def;
	}
	return v;
}

/* Split a comma-separated list in place. */
static size_t split_list(char *buf, const char **out, size_t max)
{
	size_t n = 0;
	char *save = NULL;

	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*t))
			t++;
		for (char *e = t + strlen(t); e > t &&
		     isspace((unsigned char)e[-1]);)
			*--e = '\0';
		if (!*t)
			continue;
		if (n == max) {
			kopt_inject_warning("bad-variable",
					    "more than %zu entries in a list; "
					    "'%s' and later ones are left out",
					    max, t);
			break;
		}
		out[n++] = t;
	}
	return n;
}

/* KOPT_INJECT_OUT with every "%p" replaced by the process id. */
static char *expand_out(const char *s)
{
	size_t len = strlen(s), cap = len + 64, n = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	for (const char *p = s; *p; p++) {
		if (n + 24 >= cap) {
			char *o = realloc(out, cap *= 2);
			if (!o) {
				free(out);
				return NULL;
			}
			out = o;
		}
		if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(out + n, cap - n, "%ld",
					      (long)getpid());
			p++;
		} else {
			out[n++] = *p;
		}
	}
	out[n] = '\0';
	return out;
}

static int read_config(struct kopt_inject_config *c)
{
	const char *out = getenv("KOPT_INJECT_OUT");
	const char *metrics = getenv("KOPT_INJECT_METRICS");
	const char *filter = getenv("KOPT_INJECT_KERNELS");
	const char *replay = getenv("KOPT_INJECT_REPLAY");
	const char *plan = getenv("KOPT_INJECT_FIRST_RUN");

	c->verbose = env_number("KOPT_INJECT_VERBOSE", 0, 0, 1);
	c->early = env_number("KOPT_INJECT_EARLY", 1, 0, 1);
	c->warm_start = env_number("KOPT_INJECT_WARM_START", 2, 0, 2);
	c->unroll = env_number("KOPT_INJECT_UNROLL", 1, 0, 1);
	{
		const char *cache = getenv("KOPT_INJECT_CACHE");
		c->cache = cache && *cache ? strdup(cache) : NULL;
	}
	if (!out || !*out)
		return -1;
	c->out = expand_out(out);
	c->warmup = env_number("KOPT_INJECT_WARMUP", 5, 0, 1000000);
	c->samples = env_number("KOPT_INJECT_SAMPLES", 2, 0, 1000);
	c->max_kernels = env_number("KOPT_INJECT_MAX_KERNELS", 64, 0, 100000);
	c->max_durations = env_number("KOPT_INJECT_MAX_DURATIONS", 100000, 1,
				      100000000);
	c->max_wait = env_number("KOPT_INJECT_MAX_WAIT", 1000, 1, 100000000);
	c->replay = KOPT_INJECT_REPLAY_LAUNCH;
	if (replay && !strcmp(replay, "kernel"))
		c->replay = KOPT_INJECT_REPLAY_KERNEL;
	else if (replay && *replay && strcmp(replay, "launch"))
		kopt_inject_warning("bad-variable",
				    "KOPT_INJECT_REPLAY='%s' is neither "
				    "'launch' nor 'kernel'; using 'launch'",
				    replay);
	if (metrics && !strcmp(metrics, "none")) {
		c->n_metrics = 0;
	} else if (metrics && *metrics) {
		c->metrics_buf = strdup(metrics);
		if (c->metrics_buf)
			c->n_metrics = split_list(c->metrics_buf, c->metrics,
						  KOPT_INJECT_MAX_METRICS);
	} else {
		c->n_metrics = sizeof(default_metrics) /
			       sizeof(default_metrics[0]);
		for (size_t i = 0; i < c->n_metrics; i++)
			c->metrics[i] = default_metrics[i];
	}
	if (plan && *plan)
		c->plan = strdup(plan);
	if (filter && *filter) {
		c->filter_buf = strdup(filter);
		if (c->filter_buf)
			c->n_filter = split_list(c->filter_buf, c->filter,
						 KOPT_INJECT_MAX_FILTERS);
	}
	return 0;
}

/*
 * The plan of a second run (KOPT_INJECT_FIRST_RUN): every kernel that
 * the first run of the same program launched but got no sample of,
 * because it was launched too few times to get past the warm-up (or its
 * samples failed), is sampled once (inject.h says how).  The first run's
 * capture is kept to be merged into this run's (report.c).
 */

/* a launch dimension of the first run's capture; out of range counts as 1 */
static uint32_t plan_dim(const cJSON *x)
{
	return cJSON_IsNumber(x) && x->valuedouble >= 1 &&
		x->valuedouble <= 4294967295.0 ? (uint32_t)x->valuedouble : 1;
}
static void plan_from_first_run(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	long len = -1;
	cJSON *root = NULL, *k;
	const cJSON *kernels, *prof, *passes_j;

	g.plan_active = 1;
	if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)len + 1)) &&
	    fread(text, 1, (size_t)len, f) == (size_t)len) {
		text[len] = '\0';
		root = cJSON_Parse(text);
	}
	if (f)
		fclose(f);
	free(text);
	if (!root) {
		kopt_inject_error("bad-first-run", "", 0,
				  "cannot read the first run's capture '%s' "
				  "(KOPT_INJECT_FIRST_RUN)", path);
		return;
	}
	g.first_run = root;
	prof = cJSON_GetObjectItemCaseSensitive(root, "profiler");
	passes_j = cJSON_GetObjectItemCaseSensitive(prof, "passes");
	if (cJSON_IsNumber(passes_j) && passes_j->valuedouble >= 1 &&
	    passes_j->valuedouble <= 1000)
		g.plan_passes = (size_t)passes_j->valuedouble;
	kernels = cJSON_GetObjectItemCaseSensitive(root, "kernels");
	cJSON_ArrayForEach(k, kernels) {
		const cJSON *why = cJSON_GetObjectItemCaseSensitive(k,
							"not_profiled");
		const cJSON *calls = cJSON_GetObjectItemCaseSensitive(k,
							"launch_calls");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(k,
							"mangled");
		const cJSON *grid = cJSON_GetObjectItemCaseSensitive(k, "grid");
		const cJSON *block = cJSON_GetObjectItemCaseSensitive(k,
							"block");
		struct kopt_inject_plan_item it, *v;
		int graph = cJSON_IsString(why) &&
			    !strcmp(why->valuestring, "graph");
		double n = cJSON_IsNumber(calls) ? calls->valuedouble : 0;

		/*
		 * A graph's kernel: its executions, each a launch of its own
		 * here, and its launch calls, those that captured it among
		 * them (an upper bound: a plain call is also an execution;
		 * samples begin at the first launch they can)
		 */
		if (graph) {
			const cJSON *ex = cJSON_GetObjectItemCaseSensitive(k,
							"launches");
			n += cJSON_IsNumber(ex) ? ex->valuedouble : 0;
		}
		if (!cJSON_IsString(why) || !cJSON_IsString(name) ||
		    !(n >= 1 && n <= 1e15) ||
		    (strcmp(why->valuestring, "too-few-launches") &&
		     strcmp(why->valuestring, "samples-failed") &&
		     strcmp(why->valuestring, "max-kernels") && !graph))
			continue;
		memset(&it, 0, sizeof(it));
		for (int i = 0; i < 3; i++) {
			const cJSON *x = cJSON_GetArrayItem(grid, i);
			const cJSON *y = cJSON_GetArrayItem(block, i);
			it.key.grid[i] = plan_dim(x);
			it.key.block[i] = plan_dim(y);
		}
		it.calls = (uint64_t)n;
		it.graph = graph;
		it.key.name = strdup(name->valuestring);
		v = realloc(g.plan, (g.n_plan + 1) * sizeof(*v));
		if (!it.key.name || !v) {
			free(it.key.name);
			break;
		}
		g.plan = v;
		g.plan[g.n_plan++] = it;
		g.plan_graphs += (size_t)graph;
		kopt_inject_log("plan: %.60s, %llu launches%s", it.key.name,
				(unsigned long long)it.calls,
				graph ? " (graph)" : "");
	}
}

/* The plan's item for a kernel, or NULL. */
static const struct kopt_inject_plan_item *plan_find(const char *name,
						     const uint32_t grid[3],
						     const uint32_t block[3])
{
	for (size_t i = 0; i < g.n_plan; i++) {
		const struct kopt_inject_plan_item *it = &g.plan[i];
		if (!strcmp(it->key.name, name) &&
		    !memcmp(it->key.grid, grid, sizeof(it->key.grid)) &&
		    !memcmp(it->key.block, block, sizeof(it->key.block)))
			return it;
	}
	return NULL;
}

static void apply_plan(struct kopt_inject_kernel *k)
{
	const struct kopt_inject_plan_item *it = plan_find(k->key.name,
							   k->key.grid,
							   k->key.block);
	if (!it)
		return;
	k->in_plan = 1;
	k->plan_calls = it->calls;
}

/* ---- device and kernel attributes ---- */

static void read_device(CUcontext ctx)
{
	struct kopt_inject_device *d = &g.device;
	CUcontext prev = NULL;
	CUdevice dev;
	size_t mem = 0;
	struct {
		CUdevice_attribute a;
		int *out;
	} attrs[] = {
		{ CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &d->cc_major },
		{ CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &d->cc_minor },
		{ CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &d->sms },
		{ CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &d->sm_clock_khz },
		{ CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &d->mem_clock_khz },
		{ CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
		  &d->mem_bus_bits },
		{ CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &d->l2_bytes },
		{ CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
		  &d->smem_per_sm },
		{ CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
		  &d->regs_per_sm },
		{ CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
		  &d->threads_per_sm },
	};

	if (d->known)
		return;
	d->known = 1;
	cuCtxGetCurrent(&prev);
	if (prev != ctx)
		cuCtxPushCurrent(ctx);
	if (cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		dev = 0;
	if (prev != ctx)
		cuCtxPopCurrent(NULL);
	d->dev = dev;
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (cuDeviceGetAttribute(attrs[i].out, attrs[i].a, dev) !=
		    CUDA_SUCCESS)
			*attrs[i].out = -1;
	if (cuDeviceGetName(d->name, sizeof(d->name), dev) != CUDA_SUCCESS)
		d->name[0] = '\0';
	kopt_inject_device_uuid(dev, d->uuid);
	if (cuDeviceTotalMem(&mem, dev) == CUDA_SUCCESS)
		d->memory_bytes = mem;
	cuDriverGetVersion(&d->driver_version);
}

static void read_function(struct kopt_inject_kernel *k, CUfunction f)
{
	int threads = (int)(k->key.block[0] * k->key.block[1] *
			    k->key.block[2]);
	CUfunction fn = f;

	if (cuFuncGetAttribute(&k->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn) !=
	    CUDA_SUCCESS) {
		/* a CUkernel (context-independent) handle in f's place */
		if (cuKernelGetFunction(&fn, (CUkernel)f) != CUDA_SUCCESS ||
		    cuFuncGetAttribute(&k->regs, CU_FUNC_ATTRIBUTE_NUM_REGS,
				       fn) != CUDA_SUCCESS) {
			k->regs = -1;
			return;
		}
	}
	if (cuFuncGetAttribute(&k->smem_static,
			       CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn) !=
	    CUDA_SUCCESS)
		k->smem_static = -1;
	if (cuFuncGetAttribute(&k->local_bytes,
			       CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn) !=
	    CUDA_SUCCESS)
		k->local_bytes = -1;
	if (cuOccupancyMaxActiveBlocksPerMultiprocessor(&k->blocks_per_sm, fn,
							threads,
							k->smem_dynamic) !=
	    CUDA_SUCCESS)
		k->blocks_per_sm = -1;
}

/* The kernel of a launch call, created at its first launch. */
static struct kopt_inject_kernel *kernel_of(const char *name, CUfunction f,
					    const uint32_t grid[3],
					    const uint32_t block[3],
					    uint32_t smem_dynamic)
{
	uint64_t h;
	struct kopt_inject_kernel *k;

	if (!name)
		name = "?";
	h = kopt_inject_key_hash(name, grid, block);
	k = kopt_inject_table_find(&g.kernels, name, grid, block, h);
	if (k)
		return k;
	k = calloc(1, sizeof(*k));
	if (!k || !(k->key.name = strdup(name))) {
		free(k);
		return NULL;
	}
	memcpy(k->key.grid, grid, 3 * sizeof(*grid));
	memcpy(k->key.block, block, 3 * sizeof(*block));
	k->key.hash = h;
	k->smem_dynamic = smem_dynamic;
	k->regs = k->smem_static = k->local_bytes = k->blocks_per_sm = -1;
	k->eligible = -1;
	if (g.plan_active)
		apply_plan(k);
	if (f)
		read_function(k, f);
	if (kopt_inject_table_add(&g.kernels, k) < 0) {
		free(k->key.name);
		free(k);
		return NULL;
	}
	kopt_inject_log("first launch of %.60s", name);
	return k;
}

/* ---- early set-up ---- */

/* With g.lock held: wait until the helper thread is done. */
static void wait_for_setup(void)
{
	while (g.rp.state == KOPT_INJECT_RP_PREPARING)
		pthread_cond_wait(&g.rp_cond, &g.lock);
}

/* The same for a launch, whose wait counts as the set-up's cost. */
static void wait_for_setup_timed(void)
{
	double t;

	if (g.rp.state != KOPT_INJECT_RP_PREPARING)
		return;
	t = kopt_inject_now();
	wait_for_setup();
	g.setup_wait_s += kopt_inject_now() - t;
}

/*
 * The helper thread: the whole Range Profiler set-up on the new context
 * (about 0.2 s on an H200), while the program goes on with its own
 * start-up (allocations, inputs, warm-up launches).  The launch
 * callbacks see PREPARING and only wait when a launch wants a sample
 * before the set-up is done.  CUPTI's first Start costs another 0.2 s;
 * with KOPT_INJECT_WARM_START=1 it is paid here too, in an empty window
 * (the program's launches wait for the lock meanwhile): the first
 * sample's Start then takes about 40 ms, but v8 of the MLA example at
 * decode ran 1.45x its plain time against 1.50x without it, inside the
 * plain run's own spread, so it is not the default (bench/README.md,
 * inject-wall).
 */
static void *prepare(void *arg)
{
	CUcontext ctx = arg;
	struct kopt_inject_rp rp;
	double t0 = kopt_inject_now();
	int ok;

	memset(&rp, 0, sizeof(rp));
	ok = kopt_inject_rp_setup(&rp, ctx, g.cfg.metrics, g.cfg.n_metrics,
				  g.cfg.replay) == 0;
	if (ok && g.cfg.warm_start) {
		/*
		 * CUPTI's first Start, paid here in a window of empty
		 * passes, the program's launches held at their callbacks
		 * meanwhile (they wait for the lock).  By default (2) only
		 * while the program has launched nothing yet: it is still
		 * setting up, and the Start is paid meanwhile; a program that
		 * launches at once would wait for the empty passes, longer
		 * than for the Start alone at its first sample.
		 */
		double tw = kopt_inject_now();
		int warm;
		pthread_mutex_lock(&g.lock);
		warm = g.cfg.warm_start == 1 ||
		       (!g.calls && !g.graph_launches);
		if (warm) {
			cuCtxPushCurrent(ctx);
			ok = kopt_inject_rp_warm(&rp) == 0;
			cuCtxPopCurrent(NULL);
		}
		pthread_mutex_unlock(&g.lock);
		if (warm)
			kopt_inject_log("set-up: first Start paid in %.3f s",
					kopt_inject_now() - tw);
		else
			kopt_inject_log("set-up: the program launches "
					"already: the first Start waits for "
					"its first sample");
	}
	rp.setup_s = kopt_inject_now() - t0;
	pthread_mutex_lock(&g.lock);
	g.rp = rp;
	if (!ok)
		g.rp.state = KOPT_INJECT_RP_FAILED;
	pthread_cond_broadcast(&g.rp_cond);
	pthread_mutex_unlock(&g.lock);
	return NULL;
}

static void context_created(CUcontext ctx)
{
	pthread_t t;
	pthread_attr_t attr;

	pthread_mutex_lock(&g.lock);
	if (!g.cfg.early || !g.cfg.n_metrics || !g.cfg.samples ||
	    g.finished || g.rp.state != KOPT_INJECT_RP_OFF || !ctx)
		goto done;
	g.rp.ctx = ctx;
	g.rp.state = KOPT_INJECT_RP_PREPARING;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, prepare, ctx) != 0) {
		g.rp.state = KOPT_INJECT_RP_OFF; /* set up at the first sample */
		g.rp.ctx = NULL;
	}
	pthread_attr_destroy(&attr);
	kopt_inject_log("context created: set-up started on a helper thread");
done:
	pthread_mutex_unlock(&g.lock);
}

/* ---- sampling ---- */

static int passes_filter(const char *mangled)
{
	if (!g.cfg.n_filter)
		return 1;
	for (size_t i = 0; i < g.cfg.n_filter; i++)
		if (strstr(mangled, g.cfg.filter[i]))
			return 1;
	return 0;
}

/* The passes of a sample: this run's metric set, else the first run's. */
static uint64_t plan_passes(void)
{
	size_t p = g.rp.passes ? g.rp.passes : g.plan_passes;
	return p ? p : 2;
}

/*
 * The last launch of a planned kernel at which its sample can begin: its
 * last launch, in kernel replay.
 */
static uint64_t last_start(const struct kopt_inject_kernel *k)
{
	return k->plan_calls - 1;
}

/*
 * Whether a planned kernel's sample that begins at launch `index` is
 * taken in kernel replay (every pass inside that launch call, CUPTI
 * saving and restoring the memory around each) rather than in launch
 * replay (one pass per launch, the program's own cache state, as ncu's
 * application replay keeps it).  Launch replay needs a launch for every
 * pass from `index` on; a kernel whose launch replay window was given up
 * (another kernel's last launch needed the profiler) tries again in
 * kernel replay at a later launch.
 */
static int plan_kernel_replay_at(const struct kopt_inject_kernel *k,
				 uint64_t index)
{
	uint64_t p = plan_passes();

	return k->failed || index + p > k->plan_calls;
}

/* Whether launch number `index` of k may take a place in a window. */
static int wants_sample(struct kopt_inject_kernel *k, uint64_t index)
{
	if (!g.cfg.n_metrics || g.rp.state == KOPT_INJECT_RP_FAILED ||
	    g.rp.state == KOPT_INJECT_RP_DONE)
		return 0;
	if (g.plan_active) {
		/* one sample of each kernel it names, in a window of its own */
		if (!k->in_plan || k->n_samples || k->planned || g.win.open ||
		    index > last_start(k))
			return 0;
		k->plan_kernel_replay = plan_kernel_replay_at(k, index);
	} else if (index < g.cfg.warmup ||
		   k->n_samples + k->failed + k->planned >= g.cfg.samples) {
		return 0;
	}
	if (k->eligible < 0)
		k->eligible = passes_filter(k->key.name);
	if (!k->eligible)
		return 0;
	/* a kernel not profiled yet counts against max_kernels */
	if (!k->n_samples && !k->failed && !k->planned &&
	    g.kernels_profiled >= g.cfg.max_kernels)
		return 0;
	return 1;
}

/* A kernel's place in the window is planned until the window ends. */
static void plan(struct kopt_inject_kernel *k)
{
	if (!k->n_samples && !k->failed && !k->planned)
		g.kernels_profiled++;
	k->planned++;
}

static void close_window(void)
{
	for (size_t i = 0; i < g.win.n; i++)
		((struct kopt_inject_kernel *)g.win.slot[i].k)->planned--;
	g.profile_s += g.win.seconds;
	kopt_window_close(&g.win);
	g.win_kernel_replay = 0;
}

/* Drop the open window: its samples count as failed. */
static void abandon_window(const char *why)
{
	if (!g.win.open)
		return;
	if (g.rp.running) {
		int all;
		kopt_inject_rp_stop(&g.rp, &all);
	}
	kopt_inject_warning("sample-incomplete",
			    "a window of %zu launches (first '%s') got %zu of "
			    "%zu passes: %s; left out", g.win.n,
			    ((const struct kopt_inject_kernel *)
			     g.win.slot[0].k)->key.name,
			    g.win.passes, g.rp.passes, why);
	for (size_t i = 0; i < g.win.n; i++)
		((struct kopt_inject_kernel *)g.win.slot[i].k)->failed++;
	close_window();
	kopt_inject_rp_reset(&g.rp);
}

/*
 * Find what no measurement can be (a percentage over 100, a negative
 * count): the value is kept for the record but reported as no value.
 */
static void check_values(struct kopt_inject_kernel *k,
			 struct kopt_inject_sample *s)
{
	for (size_t i = 0; i < g.rp.n_metrics; i++) {
		const char *m = g.rp.metrics[i];
		double v = s->values[i];
		const char *why = NULL;

		if (isnan(v))
			continue;
		if (!isfinite(v))
			why = "not finite";
		else if (v < 0)
			why = "negative";
		else if (strstr(m, "pct") && v > 100.0 + 1e-9)
			why = "a percentage over 100";
		if (!why)
			continue;
		if (!s->rejected)
			s->rejected = calloc(g.rp.n_metrics,
					     sizeof(*s->rejected));
		if (s->rejected)
			s->rejected[i] = why;
		else
			s->values[i] = NAN;
		kopt_inject_warning("value-rejected",
				    "%s of '%s' (launch %llu) read %g, %s; "
				    "rejected", m, k->key.name,
				    (unsigned long long)s->launch, v, why);
	}
}

/* Every pass is in: one sample per launch of the window. */
static void finish_window(void)
{
	size_t m = g.rp.n_metrics ? g.rp.n_metrics : 1, n = g.win.n;
	double *values = calloc(n * m, sizeof(*values));
	int ok = values && kopt_inject_rp_collect(&g.rp, n, values) == 0;

	for (size_t i = 0; i < n; i++) {
		struct kopt_window_slot *sl = &g.win.slot[i];
		struct kopt_inject_kernel *k = (struct kopt_inject_kernel *)sl->k;
		struct kopt_inject_sample *s = NULL;
		double *v = ok ? malloc(m * sizeof(*v)) : NULL;

		if (v)
			s = realloc(k->samples,
				    (k->n_samples + 1) * sizeof(*s));
		if (!s) {
			free(v);
			k->failed++;
			continue;
		}
		memcpy(v, values + i * m, m * sizeof(*v));
		k->samples = s;
		s = &k->samples[k->n_samples++];
		memset(s, 0, sizeof(*s));
		s->launch = sl->launch;
		s->last_launch = sl->last_launch;
		s->seconds = g.win.seconds / (double)n;
		s->window = (unsigned)n;
		s->kernel_replay = g.win_kernel_replay ||
				   g.cfg.replay == KOPT_INJECT_REPLAY_KERNEL;
		s->values = v;
		check_values(k, s);
	}
	free(values);
	close_window();
}

/* End the running pass; collect the window when it was the last. */
static void end_pass(void)
{
	int all = 0;
	double t = kopt_inject_now();

	if (kopt_inject_rp_stop(&g.rp, &all) < 0) {
		abandon_window("the profiler did not stop");
		return;
	}
	g.win.seconds += kopt_inject_now() - t;
	kopt_window_stopped(&g.win);
	if (all)
		finish_window();
}

/* Start a pass at this launch; 0, or -1 with the window dropped. */
static int begin_pass(void)
{
	if (kopt_inject_rp_start(&g.rp) < 0) {
		kopt_inject_rp_forget_avail(&g.rp);
		abandon_window("the profiler did not start");
		return -1;
	}
	return 0;
}

/*
 * A launch on another context than the profiler's wants a sample and no
 * window is open: move the profiler there (a new profiler object on that
 * context, about as long as a replay-mode change), so that a program's
 * kernels are measured whichever of its contexts they run on.  At most
 * KOPT_INJECT_MAX_MOVES moves, so that kernels taking turns on two
 * contexts cannot make every sample pay for one; a context of another
 * device is left alone.  0 when the profiler is now on ctx.
 */
static int follow_context(CUcontext ctx)
{
	wait_for_setup_timed();
	if ((g.rp.state != KOPT_INJECT_RP_READY &&
	     g.rp.state != KOPT_INJECT_RP_DONE) ||
	    g.ctx_moves >= KOPT_INJECT_MAX_MOVES ||
	    kopt_inject_rp_move(&g.rp, ctx))
		return -1;
	g.ctx_moves++;
	return 0;
}

/* The profiler is set up, or -1 when it cannot be. */
static int profiler_ready(CUcontext ctx)
{
	wait_for_setup_timed();
	if (g.rp.state == KOPT_INJECT_RP_OFF &&
	    kopt_inject_rp_setup(&g.rp, ctx, g.cfg.metrics, g.cfg.n_metrics,
				 g.cfg.replay) < 0)
		return -1;
	return g.rp.state == KOPT_INJECT_RP_READY ? 0 : -1;
}

/*
 * Entry of a launch call: count it, and fit it into the window: take it
 * in, end the pass before it, start a pass at it, or open a window.
 */
static void launch_enter(CUcontext ctx, const char *name, CUfunction f,
			 const uint32_t grid[3], const uint32_t block[3],
			 uint32_t smem, CUstream stream, int node)
{
	struct kopt_inject_kernel *k;
	uint64_t index;
	CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
	int captured;
	/* a first run's launch of a graph's node is no call of the program */
	int unrolled = node && !g.plan_active;

	pthread_mutex_lock(&g.lock);
	if (!unrolled)
		g.calls++;
	if (g.finished)
		goto done;
	if (!ctx)
		cuCtxGetCurrent(&ctx);
	if (!g.device.known && ctx)
		read_device(ctx);
	k = kernel_of(name, f, grid, block, smem);
	if (!k)
		goto done;
	index = k->calls++;
	k->calls_unrolled += (uint64_t)unrolled;
	if (g.rp.state != KOPT_INJECT_RP_OFF && ctx != g.rp.ctx) {
		/* the profiler follows a launch that wants a sample */
		int want = !g.win.open && wants_sample(k, index) &&
			   cuStreamIsCapturing(stream, &capture) ==
			   CUDA_SUCCESS &&
			   capture == CU_STREAM_CAPTURE_STATUS_NONE;

		if (!want || follow_context(ctx) < 0) {
			g.calls_other_ctx++;
			k->calls_other_ctx++;
			if (want)
				k->ctx_refused++;
			goto done;
		}
	}
	/* a planned kernel's last launch: the waiting window gives way */
	if (g.plan_active && g.win.open && !g.win.running && k->in_plan &&
	    !k->n_samples && index == last_start(k) &&
	    g.win.slot[0].k != k)
		abandon_window("a kernel's last launch needed the profiler");
	if (!g.win.open && !wants_sample(k, index))
		goto done; /* the launches of nearly every call */
	/* a launch being captured into a graph does not run now */
	captured = cuStreamIsCapturing(stream, &capture) != CUDA_SUCCESS ||
		   capture != CU_STREAM_CAPTURE_STATUS_NONE;
	if (captured)
		k->calls_captured++;
	tl_t0 = kopt_inject_now();
	for (;;) {
		int wants = !g.win.open || g.win.building ?
			    wants_sample(k, index) : 0;

		/* no window before the profiler is there */
		if (!g.win.open && wants && !captured &&
		    profiler_ready(ctx) < 0)
			goto done;
		/* a planned kernel decides the replay of its window */
		if (!g.win.open && wants && !captured && g.plan_active) {
			int kr = k->plan_kernel_replay;
			if (kopt_inject_rp_set_replay(&g.rp, kr ?
					KOPT_INJECT_REPLAY_KERNEL :
					KOPT_INJECT_REPLAY_LAUNCH) < 0)
				goto done;
			g.win_kernel_replay = kr;
		}
		enum kopt_window_action a = kopt_window_enter(&g.win, k, index,
							      wants, captured,
							      g.cfg.max_wait);
		if (a != KOPT_WIN_SKIP)
			kopt_inject_log("window: %s at launch %llu of %.50s",
					kopt_window_action_name(a),
					(unsigned long long)index,
					k->key.name);
		switch (a) {
		case KOPT_WIN_SKIP:
			goto done;
		case KOPT_WIN_TAKE:
			if (g.win.building)
				plan(k);
			tl_in_window = 1;
			goto done;
		case KOPT_WIN_OPEN:
			plan(k);
			/* fall through */
		case KOPT_WIN_START:
			if (begin_pass() == 0)
				tl_in_window = 1;
			goto done;
		case KOPT_WIN_STOP:
			end_pass();
			continue; /* this launch may start the next pass */
		case KOPT_WIN_DROP:
			abandon_window(g.win.running ?
				       "another launch came inside a pass" :
				       "the window's first kernel was not "
				       "launched again soon enough");
			goto done;
		}
	}
done:
	pthread_mutex_unlock(&g.lock);
}

/* Exit of a launch call that is a range of the running pass. */
static void launch_exit(int failed)
{
	tl_in_window = 0;
	pthread_mutex_lock(&g.lock);
	if (!g.win.open || !g.win.running) {
		pthread_mutex_unlock(&g.lock);
		return;
	}
	g.win.seconds += kopt_inject_now() - tl_t0;
	if (failed)
		abandon_window("a launch failed");
	else if (g.win_kernel_replay ||
		 kopt_window_exit(&g.win) == KOPT_WIN_STOP)
		end_pass(); /* kernel replay: every pass ran in the call */
	pthread_mutex_unlock(&g.lock);
}

/* With g.lock held: the graph launched node by node as exec, or NULL. */
static struct kopt_inject_unrolled *unrolled_of(CUgraphExec exec)
{
	for (size_t i = 0; i < g.n_unrolled; i++)
		if (g.unrolled[i].exec == exec)
			return &g.unrolled[i];
	return NULL;
}

/*
 * Whether this run launches graphs node by node: a second run, for the
 * graph kernels of its plan; a first run, for every graph whose kernels
 * want samples, until they have them (KOPT_INJECT_UNROLL=0: never), so
 * that a program whose kernels run only from graphs needs no second run.
 */
static int unrolls_graphs(void)
{
	if (g.plan_active)
		return g.plan_graphs != 0;
	return g.cfg.unroll && g.cfg.n_metrics && g.cfg.samples;
}

/*
 * With g.lock held, in a first run: a graph's kernel node that may still
 * get a sample (as wants_sample() would give it one).
 */
static int node_wants_samples(const struct kopt_inject_gnode *n)
{
	const struct kopt_inject_kernel *k;

	if (!n->name || g.rp.state == KOPT_INJECT_RP_FAILED ||
	    g.rp.state == KOPT_INJECT_RP_DONE)
		return 0;
	k = kopt_inject_table_find(&g.kernels, n->name, n->grid, n->block,
				   kopt_inject_key_hash(n->name, n->grid,
							n->block));
	if (!k)
		return passes_filter(n->name) &&
		       g.kernels_profiled < g.cfg.max_kernels;
	if (!k->eligible ||
	    (k->eligible < 0 && !passes_filter(k->key.name)))
		return 0;
	if (k->n_samples + k->failed >= g.cfg.samples)
		return 0;
	return k->n_samples || k->failed || k->planned ||
	       g.kernels_profiled < g.cfg.max_kernels;
}

/* With g.lock held: how many of u's kernel nodes want samples */
static size_t graph_wants_samples(const struct kopt_inject_unrolled *u)
{
	size_t n = 0;

	for (size_t i = 0; i < u->n; i++)
		n += (size_t)node_wants_samples(&u->nodes[i]);
	return n;
}

/*
 * With g.lock held: a first run's graph whose kernels have their samples
 * is launched as a graph again (its nodes enabled: launches queued
 * before are not changed by that).
 */
static void graph_sampled(struct kopt_inject_unrolled *u)
{
	kopt_inject_graph_enable(u->exec, u, 1);
	kopt_inject_log("graph of %zu nodes launched as a graph again: its "
			"kernels have their samples", u->n);
	kopt_inject_graph_free(u);
	*u = g.unrolled[--g.n_unrolled];
}

/*
 * With g.lock held: a graph launch's kernels are timed by the Activity
 * API but cannot be ranges (CUPTI's auto range fails the Stop of a pass
 * that holds a graph launch, and kernel replay makes no range of it), so
 * a running pass ends before it, as before any launch that does not fit.
 */
static void end_pass_before_graph(void)
{
	static const char graph;	/* stands for every graph */

	if (g.win.open && g.win.running)
		switch (kopt_window_enter(&g.win, &graph, 0, 0, 1,
					  g.cfg.max_wait)) {
		case KOPT_WIN_STOP:
			end_pass();
			break;
		case KOPT_WIN_DROP:
			abandon_window("a graph was launched inside a pass");
			break;
		default:
			break;
		}
}

/*
 * A graph launch.  A graph launched node by node (inject.h) launches its
 * kernels here, each an ordinary launch the windows may sample, before
 * the emptied graph goes on the same stream.
 */
static void graph_launch_enter(CUcontext ctx, CUgraphExec exec,
			       CUstream stream)
{
	struct kopt_inject_unrolled *u;
	const struct kopt_inject_gnode *nodes = NULL;
	size_t n_nodes = 0;

	pthread_mutex_lock(&g.lock);
	g.graph_launches++;
	end_pass_before_graph();
	u = g.finished ? NULL : unrolled_of(exec);
	if (u && u->sampled) {
		graph_sampled(u);
		u = NULL;
	}
	if (u) {
		/* the table may grow meanwhile; this graph's nodes stay */
		nodes = u->nodes;
		n_nodes = u->n;
	}
	pthread_mutex_unlock(&g.lock);
	if (!n_nodes)
		return;
	/* (a program may not change a graph while it launches it) */
	for (size_t i = 0; i < n_nodes; i++) {
		const struct kopt_inject_gnode *n = &nodes[i];
		int kernel = n->type == CU_GRAPH_NODE_TYPE_KERNEL;
		CUresult r;

		if (kernel) {
			launch_enter(ctx, n->name, n->f, n->grid, n->block,
				     n->smem, stream, 1);
		} else {	/* a memset, a copy or an event: outside any
				   pass */
			pthread_mutex_lock(&g.lock);
			end_pass_before_graph();
			pthread_mutex_unlock(&g.lock);
		}
		r = kopt_inject_gnode_launch(n, stream);
		if (tl_in_window)
			launch_exit(r != CUDA_SUCCESS);
		pthread_mutex_lock(&g.lock);
		g.node_launches++;
		pthread_mutex_unlock(&g.lock);
		if (r != CUDA_SUCCESS)
			kopt_inject_error("node-launch-failed",
					  kopt_inject_gnode_call(n->type),
					  (int)r, "a node of a graph launched "
					  "node by node did not run: %s",
					  kernel ? n->name :
					  kopt_inject_gnode_kind(n->type));
	}
	pthread_mutex_lock(&g.lock);
	end_pass_before_graph();
	/* a first run's graph: as a graph again once its kernels are done
	   (from its next launch: this one is queued without its nodes) */
	if (!g.plan_active && (u = unrolled_of(exec)) && !u->source_gone &&
	    !graph_wants_samples(u))
		u->sampled = 1;
	pthread_mutex_unlock(&g.lock);
}

/*
 * Stop launching a graph node by node: its nodes enabled again, when the
 * graph they belong to still exists; when it does not, the nodes cannot
 * be named any more, and the error says that the graph may now run
 * without them.
 */
static void give_up_graph(struct kopt_inject_unrolled *u, const char *why)
{
	if (!u->source_gone) {
		kopt_inject_graph_enable(u->exec, u, 1);
		/* a first run's graph: its kernels are left to a second */
		if (g.plan_active)
			kopt_inject_warning("graph-not-unrolled", "a CUDA "
					    "graph is launched as a graph "
					    "again: %s; its kernels not "
					    "sampled yet stay unmeasured", why);
		else
			kopt_inject_log("graph launched as a graph again: %s",
					why);
	} else {
		kopt_inject_error("graph-unroll-lost", "", 0,
				  "a CUDA graph launched node by node changed "
				  "after its source graph was destroyed (%s): "
				  "its kernels cannot be launched any more; "
				  "the program's results of this run are not "
				  "to be trusted", why);
	}
	kopt_inject_graph_free(u);
	*u = g.unrolled[--g.n_unrolled];
}

/* A graph was instantiated: launch it node by node if the plan says so. */
static void graph_instantiated(CUgraphExec exec, CUgraph graph)
{
	struct kopt_inject_unrolled u, *v;
	char why[256];
	size_t wanted = 0, i;
	CUresult r = CUDA_SUCCESS;

	if (kopt_inject_graph_read(graph, &u, why, sizeof(why)) < 0) {
		/* a first run's graph: a second run says it, if it must */
		if (g.plan_active)
			kopt_inject_warning("graph-not-unrolled", "a CUDA "
					    "graph cannot be launched node by "
					    "node: %s; its kernels stay "
					    "unmeasured", why);
		else
			kopt_inject_log("graph left as a graph: %s", why);
		return;
	}
	pthread_mutex_lock(&g.lock);
	if (g.plan_active)
		for (i = 0; i < u.n; i++)
			wanted += u.nodes[i].name &&
				  plan_find(u.nodes[i].name, u.nodes[i].grid,
					    u.nodes[i].block) != NULL;
	else
		wanted = graph_wants_samples(&u);
	pthread_mutex_unlock(&g.lock);
	if (wanted)
		r = kopt_inject_graph_enable(exec, &u, 0);
	if (wanted && r != CUDA_SUCCESS) {
		if (g.plan_active)
			kopt_inject_warning("graph-not-unrolled", "the nodes "
					    "of a CUDA graph cannot be "
					    "disabled (cuGraphNodeSetEnabled: "
					    "%d); its kernels stay unmeasured",
					    (int)r);
		else
			kopt_inject_log("graph left as a graph: its nodes "
					"cannot be disabled (%d)", (int)r);
		wanted = 0;
	}
	pthread_mutex_lock(&g.lock);
	v = wanted ? realloc(g.unrolled, (g.n_unrolled + 1) * sizeof(*v))
		   : NULL;
	if (v) {
		u.exec = exec;
		u.source = graph;
		g.unrolled = v;
		g.unrolled[g.n_unrolled++] = u;
		kopt_inject_log("graph of %zu nodes launched node by node",
				u.n);
	} else {
		if (wanted)	/* out of memory: the graph runs as it was */
			kopt_inject_graph_enable(exec, &u, 1);
		kopt_inject_graph_free(&u);
	}
	pthread_mutex_unlock(&g.lock);
}

/*
 * The copy of node `node` of exec takes new parameters: a kernel's (p),
 * a memset's (ms), a memcpy's (mc) or an event node's event (ev).
 */
static void graph_node_changed(CUgraphExec exec, CUgraphNode node,
			       const CUDA_KERNEL_NODE_PARAMS *p,
			       const CUDA_MEMSET_NODE_PARAMS *ms,
			       const CUDA_MEMCPY3D *mc, const CUevent *ev)
{
	struct kopt_inject_unrolled *u;
	char why[256];

	pthread_mutex_lock(&g.lock);
	u = unrolled_of(exec);
	for (size_t i = 0; u && i < u->n; i++) {
		struct kopt_inject_gnode *n = &u->nodes[i];
		if (n->node != node)
			continue;
		if (ms && n->type == CU_GRAPH_NODE_TYPE_MEMSET)
			n->memset = *ms;
		else if (mc && n->type == CU_GRAPH_NODE_TYPE_MEMCPY)
			n->memcpy = *mc;
		else if (ev && (n->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD ||
				n->type == CU_GRAPH_NODE_TYPE_WAIT_EVENT))
			n->event = *ev;
		else if (!p || n->type != CU_GRAPH_NODE_TYPE_KERNEL)
			give_up_graph(u, "a node changed its kind");
		else if (kopt_inject_gnode_set(n, p, why, sizeof(why)) < 0)
			give_up_graph(u, why);
		break;
	}
	pthread_mutex_unlock(&g.lock);
}

/*
 * exec took the parameters of graph, which has its topology: the copies
 * follow, node for node in the same order; the nodes stay disabled.
 */
static void graph_updated(CUgraphExec exec, CUgraph graph)
{
	struct kopt_inject_unrolled *u, fresh;
	char why[256];
	int ok, pairs;

	pthread_mutex_lock(&g.lock);
	u = unrolled_of(exec);
	if (!u) {
		pthread_mutex_unlock(&g.lock);
		return;
	}
	ok = kopt_inject_graph_read(graph, &fresh, why, sizeof(why)) == 0;
	pairs = ok && fresh.n == u->n;
	for (size_t i = 0; pairs && i < fresh.n; i++)
		pairs = fresh.nodes[i].type == u->nodes[i].type;
	if (ok && !pairs) {
		snprintf(why, sizeof(why), "an update brought nodes that do "
			 "not pair up with the graph's");
		kopt_inject_graph_free(&fresh);
		ok = 0;
	}
	if (!ok) {
		give_up_graph(u, why);
	} else {
		for (size_t i = 0; i < u->n; i++)
			fresh.nodes[i].node = u->nodes[i].node;
		kopt_inject_graph_free(u);
		u->nodes = fresh.nodes;
		u->n = fresh.n;
		if (!u->source_gone)
			kopt_inject_graph_enable(exec, u, 0);
		kopt_inject_log("graph launched node by node: updated");
	}
	pthread_mutex_unlock(&g.lock);
}

/*
 * A child graph node of exec took new parameters: its copies are not
 * paired with the new ones, so the graph runs as a graph again.
 */
static void child_graph_changed(CUgraphExec exec)
{
	struct kopt_inject_unrolled *u;

	pthread_mutex_lock(&g.lock);
	if ((u = unrolled_of(exec)))
		give_up_graph(u, "a child graph node took new parameters");
	pthread_mutex_unlock(&g.lock);
}

/* cuGraphExecNodeSetParams: the one call for every kind of node. */
static void node_params_changed(const cuGraphExecNodeSetParams_params *e)
{
	const CUgraphNodeParams *np = e->nodeParams;
	const CUDA_KERNEL_NODE_PARAMS_v3 *v3;
	CUDA_MEMSET_NODE_PARAMS ms;
	CUDA_KERNEL_NODE_PARAMS k;

	if (!np)
		return;
	switch (np->type) {
	case CU_GRAPH_NODE_TYPE_MEMSET:
		memset(&ms, 0, sizeof(ms));
		ms.dst = np->memset.dst, ms.pitch = np->memset.pitch;
		ms.value = np->memset.value;
		ms.elementSize = np->memset.elementSize;
		ms.width = np->memset.width, ms.height = np->memset.height;
		graph_node_changed(e->hGraphExec, e->hNode, NULL, &ms, NULL,
				   NULL);
		break;
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		graph_node_changed(e->hGraphExec, e->hNode, NULL, NULL,
				   &np->memcpy.copyParams, NULL);
		break;
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		graph_node_changed(e->hGraphExec, e->hNode, NULL, NULL, NULL,
				   &np->eventRecord.event);
		break;
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
		graph_node_changed(e->hGraphExec, e->hNode, NULL, NULL, NULL,
				   &np->eventWait.event);
		break;
	case CU_GRAPH_NODE_TYPE_GRAPH:
		child_graph_changed(e->hGraphExec);
		break;
	case CU_GRAPH_NODE_TYPE_KERNEL:
		v3 = &np->kernel;
		memset(&k, 0, sizeof(k));
		k.func = v3->func;
		k.gridDimX = v3->gridDimX, k.gridDimY = v3->gridDimY;
		k.gridDimZ = v3->gridDimZ;
		k.blockDimX = v3->blockDimX, k.blockDimY = v3->blockDimY;
		k.blockDimZ = v3->blockDimZ;
		k.sharedMemBytes = v3->sharedMemBytes;
		k.kernelParams = v3->kernelParams;
		k.extra = v3->extra;
		k.kern = v3->kern;
		k.ctx = v3->ctx;
		graph_node_changed(e->hGraphExec, e->hNode, &k, NULL, NULL,
				   NULL);
		break;
	default:
		break;
	}
}

/* The first two fields of every cuGraphInstantiate* call's parameters. */
struct instantiate_params {
	CUgraphExec *exec;
	CUgraph graph;
};

/* The exit of a graph call that matters to graphs launched node by node. */
static void on_graph_change(CUpti_CallbackId cbid,
			    const CUpti_CallbackData *cb)
{
	const void *p = cb->functionParams;

	if (!unrolls_graphs() || !p || !cb->functionReturnValue ||
	    *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS)
		return;
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate:
	case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags:
	case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams:
	case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz: {
		const struct instantiate_params *ip = p;
		if (ip->exec && *ip->exec)
			graph_instantiated(*ip->exec, ip->graph);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuGraphExecDestroy: {
		const cuGraphExecDestroy_params *d = p;
		struct kopt_inject_unrolled *u;
		pthread_mutex_lock(&g.lock);
		if ((u = unrolled_of(d->hGraphExec))) {
			kopt_inject_graph_free(u);
			*u = g.unrolled[--g.n_unrolled];
		}
		pthread_mutex_unlock(&g.lock);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuGraphDestroy: {
		const cuGraphDestroy_params *d = p;
		pthread_mutex_lock(&g.lock);
		for (size_t i = 0; i < g.n_unrolled; i++)
			if (g.unrolled[i].source == d->hGraph)
				g.unrolled[i].source_gone = 1;
		pthread_mutex_unlock(&g.lock);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams: {
		const cuGraphExecKernelNodeSetParams_params *e = p;
		CUDA_KERNEL_NODE_PARAMS k;
		memset(&k, 0, sizeof(k));
		memcpy(&k, e->nodeParams, sizeof(*e->nodeParams));
		graph_node_changed(e->hGraphExec, e->hNode, &k, NULL, NULL,
				   NULL);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams_v2: {
		const cuGraphExecKernelNodeSetParams_v2_params *e = p;
		graph_node_changed(e->hGraphExec, e->hNode, e->nodeParams, NULL,
				   NULL, NULL);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemsetNodeSetParams: {
		const cuGraphExecMemsetNodeSetParams_params *e = p;
		graph_node_changed(e->hGraphExec, e->hNode, NULL,
				   e->memsetParams, NULL, NULL);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemcpyNodeSetParams: {
		const cuGraphExecMemcpyNodeSetParams_params *e = p;
		graph_node_changed(e->hGraphExec, e->hNode, NULL, NULL,
				   e->copyParams, NULL);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuGraphExecNodeSetParams:
		node_params_changed(p);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuGraphExecEventRecordNodeSetEvent: {
		const cuGraphExecEventRecordNodeSetEvent_params *e = p;
		graph_node_changed(e->hGraphExec, e->hNode, NULL, NULL, NULL,
				   &e->event);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuGraphExecEventWaitNodeSetEvent: {
		const cuGraphExecEventWaitNodeSetEvent_params *e = p;
		graph_node_changed(e->hGraphExec, e->hNode, NULL, NULL, NULL,
				   &e->event);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuGraphExecChildGraphNodeSetParams: {
		const cuGraphExecChildGraphNodeSetParams_params *e = p;
		child_graph_changed(e->hGraphExec);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate: {
		const cuGraphExecUpdate_params *e = p;
		graph_updated(e->hGraphExec, e->hGraph);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2: {
		const cuGraphExecUpdate_v2_params *e = p;
		graph_updated(e->hGraphExec, e->hGraph);
		break;
	}
	default:
		break;
	}
}
static void on_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	uint32_t grid[3], block[3], smem;
	CUfunction f;
	CUstream stream;

	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
		const cuLaunchKernel_params *p = cb->functionParams;
		f = p->f;
		grid[0] = p->gridDimX, grid[1] = p->gridDimY;
		grid[2] = p->gridDimZ;
		block[0] = p->blockDimX, block[1] = p->blockDimY;
		block[2] = p->blockDimZ;
		smem = p->sharedMemBytes;
		stream = p->hStream;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		const cuLaunchKernelEx_params *p = cb->functionParams;
		f = p->f;
		grid[0] = p->config->gridDimX, grid[1] = p->config->gridDimY;
		grid[2] = p->config->gridDimZ;
		block[0] = p->config->blockDimX;
		block[1] = p->config->blockDimY;
		block[2] = p->config->blockDimZ;
		smem = p->config->sharedMemBytes;
		stream = p->config->hStream;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
		const cuLaunchCooperativeKernel_params *p = cb->functionParams;
		f = p->f;
		grid[0] = p->gridDimX, grid[1] = p->gridDimY;
		grid[2] = p->gridDimZ;
		block[0] = p->blockDimX, block[1] = p->blockDimY;
		block[2] = p->blockDimZ;
		smem = p->sharedMemBytes;
		stream = p->hStream;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
	case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: {
		const cuGraphLaunch_params *p = cb->functionParams;
		graph_launch_enter(cb->context, p->hGraph, p->hStream);
		return;
	}
	default:
		return;
	}
	launch_enter(cb->context, cb->symbolName, f, grid, block, smem,
		     stream, 0);
}

/* ---- the end ---- */

/* Disable the Range Profiler before its context goes away, or at exit. */
static void stop_profiler(const char *why)
{
	pthread_mutex_lock(&g.lock);
	wait_for_setup();
	if (g.win.open)
		abandon_window(why);
	if (g.rp.state == KOPT_INJECT_RP_READY)
		kopt_inject_rp_disable(&g.rp);
	pthread_mutex_unlock(&g.lock);
}

/* The last moment the library sees: how long the process takes to end. */
__attribute__((destructor)) static void unloading(void)
{
	if (g.initialized && getpid() == g.pid)
		kopt_inject_log("unloading");
}

static void at_exit(void)
{
	if (getpid() != g.pid)
		return; /* a forked child: the parent reports */
	pthread_mutex_lock(&g.lock);
	if (g.finished) {
		pthread_mutex_unlock(&g.lock);
		return;
	}
	pthread_mutex_unlock(&g.lock);
	kopt_inject_log("exit");
	if (g.cupti_loaded) {
		stop_profiler("the program ended first");
		kopt_inject_activity_flush(); /* no lock: it calls back */
		kopt_inject_log("activity flushed");
	}
	pthread_mutex_lock(&g.lock);
	g.finished = 1;
	pthread_mutex_unlock(&g.lock);
	kopt_inject_report_write();
	kopt_inject_log("report written");
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
				 CUpti_CallbackId cbid, const void *data)
{
	(void)userdata;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		const CUpti_ResourceData *rd = data;
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
			context_created(rd->context);
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
			kopt_inject_log("context destroyed");
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING &&
		    rd->context && rd->context == g.rp.ctx)
			stop_profiler("the context was destroyed first");
		return;
	}
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API)
		return;
	const CUpti_CallbackData *cb = data;
	if (cb->callbackSite == CUPTI_API_ENTER) {
		if (tl_depth++ == 0)
			on_launch(cbid, cb);
	} else {
		if (--tl_depth == 0 && tl_in_window)
			launch_exit(cb->functionReturnValue &&
				    *(const CUresult *)cb->functionReturnValue
				    != CUDA_SUCCESS);
		else if (tl_depth == 0)
			on_graph_change(cbid, cb);
	}
}

static int subscribe(void)
{
	static const CUpti_CallbackId launches[] = {
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
		CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
	};
	/* graphs launched node by node: a second run's graph kernels */
	static const CUpti_CallbackId graph_calls[] = {
		CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate,
		CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2,
		CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags,
		CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams,
		CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuGraphExecDestroy,
		CUPTI_DRIVER_TRACE_CBID_cuGraphDestroy,
		CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams,
		CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams_v2,
		CUPTI_DRIVER_TRACE_CBID_cuGraphExecNodeSetParams,
		CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemsetNodeSetParams,
		CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemcpyNodeSetParams,
		CUPTI_DRIVER_TRACE_CBID_cuGraphExecEventRecordNodeSetEvent,
		CUPTI_DRIVER_TRACE_CBID_cuGraphExecEventWaitNodeSetEvent,
		CUPTI_DRIVER_TRACE_CBID_cuGraphExecChildGraphNodeSetParams,
		CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate,
		CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2,
	};
	CUptiResult r = kc.cuptiSubscribe(&g.sub, on_callback, NULL);

	if (r != CUPTI_SUCCESS)
		return kopt_inject_cupti_fail("cuptiSubscribe", r);
	g.subscribed = 1;
	r = kc.cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
			CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	if (r == CUPTI_SUCCESS)
		r = kc.cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
				CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	if (r != CUPTI_SUCCESS)
		return kopt_inject_cupti_fail("cuptiEnableCallback", r);
	for (size_t i = 0; i < sizeof(launches) / sizeof(launches[0]); i++) {
		r = kc.cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_DRIVER_API,
					   launches[i]);
		if (r != CUPTI_SUCCESS)
			return kopt_inject_cupti_fail("cuptiEnableCallback", r);
	}
	for (size_t i = 0; unrolls_graphs() &&
	     i < sizeof(graph_calls) / sizeof(graph_calls[0]); i++) {
		r = kc.cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_DRIVER_API,
					   graph_calls[i]);
		if (r != CUPTI_SUCCESS)
			return kopt_inject_cupti_fail("cuptiEnableCallback", r);
	}
	return 0;
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	char why[512];

	pthread_mutex_lock(&g.lock);
	if (g.initialized) {
		pthread_mutex_unlock(&g.lock);
		return 1;
	}
	g.initialized = 1;
	g.pid = getpid();
	g.t0 = kopt_inject_now();
	pthread_mutex_unlock(&g.lock);

	if (read_config(&g.cfg) < 0)
		return 1; /* nowhere to write: stay out of the way */
	if (g.cfg.plan)
		plan_from_first_run(g.cfg.plan);
	atexit(at_exit);
	if (kopt_inject_cupti_load(why, sizeof(why)) < 0) {
		kopt_inject_error("cupti-missing", "dlopen", 0,
				  "cannot load CUPTI: %s (install the CUDA "
				  "toolkit's CUPTI or set KOPT_INJECT_CUPTI to "
				  "libcupti.so)", why);
		return 1;
	}
	g.cupti_loaded = 1;
	kopt_inject_log("CUPTI loaded from %s", kc.path);
	/* subscribe first: another profiler already holding CUPTI shows here */
	if (subscribe() < 0)
		return 1;
	kopt_inject_log("subscribed");
	kopt_inject_activity_start();
	kopt_inject_log("initialised: out %s, warm-up %u, %u samples, "
			"%zu metrics, %s replay", g.cfg.out, g.cfg.warmup,
			g.cfg.samples, g.cfg.n_metrics,
			g.cfg.replay == KOPT_INJECT_REPLAY_KERNEL ? "kernel"
								  : "launch");
	return 1;
}
