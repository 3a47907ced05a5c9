/*
 * The output file: the launch side and the Activity side merged per
 * kernel, written once with cJSON to a temporary file and renamed over
 * KOPT_INJECT_OUT, so that a reader sees no file or a whole one.
 * README.md beside this file documents every field.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "inject.h"
#include "../banned.h"

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* The C++ demangler, if the process has or can load libstdc++. */
static demangle_fn demangler(void)
{
	static demangle_fn fn;
	static int looked;
	void *p, *h;

	if (looked)
		return fn;
	looked = 1;
	p = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (!p && (h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL)))
		p = dlsym(h, "__cxa_demangle");
	if (p)
		memcpy(&fn, &p, sizeof(p));
	return fn;
}

/*
 * The kernel's name as a person writes it: demangled, without the
 * return type and the argument list ("(anonymous namespace)" and the
 * like inside template arguments stay: match parentheses from the end).
 */
static char *pretty_name(const char *mangled)
{
	demangle_fn dm = demangler();
	int status = -1;
	char *s = dm ? dm(mangled, NULL, NULL, &status) : NULL;
	size_t n;

	if (!s || status != 0) {
		free(s);
		s = strdup(mangled);
		if (!s)
			return NULL;
	}
	n = strlen(s);
	if (n && s[n - 1] == ')' && strcmp(s, mangled)) {
		int depth = 0;
		for (size_t i = n; i-- > 0;) {
			depth += s[i] == ')' ? 1 : s[i] == '(' ? -1 : 0;
			if (!depth) {
				s[i] = '\0';
				break;
			}
		}
	}
	if (!strncmp(s, "void ", 5))
		memmove(s, s + 5, strlen(s + 5) + 1);
	return s;
}

static cJSON *int_or_null(long long v)
{
	return v < 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)v);
}

static cJSON *num_or_null(double v)
{
	return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *triple(const uint32_t v[3])
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < 3; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
	return a;
}

static cJSON *notes_json(const struct kopt_inject_notes *list)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; i < list->n; i++) {
		const struct kopt_inject_note *n = &list->v[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "code", n->code);
		cJSON_AddStringToObject(o, "message", n->message);
		if (*n->call)
			cJSON_AddStringToObject(o, "call", n->call);
		if (n->result)
			cJSON_AddNumberToObject(o, "result", n->result);
		cJSON_AddNumberToObject(o, "count", n->count);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *argv_json(void)
{
	cJSON *a = cJSON_CreateArray();
	char buf[8192];
	ssize_t n;
	int fd = open("/proc/self/cmdline", O_RDONLY);

	if (fd < 0)
		return a;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return a;
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
		cJSON_AddItemToArray(a, cJSON_CreateString(buf + i));
	return a;
}

static cJSON *device_json(void)
{
	const struct kopt_inject_device *d = &g.device;
	cJSON *o;
	char cc[16];

	if (!d->known)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	snprintf(cc, sizeof(cc), "%d.%d", d->cc_major, d->cc_minor);
	cJSON_AddStringToObject(o, "name", d->name);
	if (*d->uuid)
		cJSON_AddStringToObject(o, "uuid", d->uuid);
	if (*g.rp.chip)
		cJSON_AddStringToObject(o, "chip", g.rp.chip);
	cJSON_AddStringToObject(o, "cc", cc);
	cJSON_AddItemToObject(o, "sms", int_or_null(d->sms));
	cJSON_AddItemToObject(o, "sm_clock_khz", int_or_null(d->sm_clock_khz));
	cJSON_AddItemToObject(o, "mem_clock_khz",
			      int_or_null(d->mem_clock_khz));
	cJSON_AddItemToObject(o, "mem_bus_bits", int_or_null(d->mem_bus_bits));
	cJSON_AddNumberToObject(o, "memory_bytes", (double)d->memory_bytes);
	cJSON_AddItemToObject(o, "l2_bytes", int_or_null(d->l2_bytes));
	cJSON_AddItemToObject(o, "smem_per_sm", int_or_null(d->smem_per_sm));
	cJSON_AddItemToObject(o, "regs_per_sm", int_or_null(d->regs_per_sm));
	cJSON_AddItemToObject(o, "threads_per_sm",
			      int_or_null(d->threads_per_sm));
	cJSON_AddNumberToObject(o, "driver_version", d->driver_version);
	return o;
}

static cJSON *config_json(void)
{
	const struct kopt_inject_config *c = &g.cfg;
	cJSON *o = cJSON_CreateObject(), *a;

	cJSON_AddNumberToObject(o, "warmup", c->warmup);
	cJSON_AddNumberToObject(o, "samples", c->samples);
	cJSON_AddStringToObject(o, "replay",
				c->replay == KOPT_INJECT_REPLAY_KERNEL ?
				"kernel" : "launch");
	cJSON_AddNumberToObject(o, "max_kernels", c->max_kernels);
	cJSON_AddNumberToObject(o, "max_durations", (double)c->max_durations);
	if (c->plan)
		cJSON_AddStringToObject(o, "plan", c->plan);
	a = cJSON_AddArrayToObject(o, "metrics");
	for (size_t i = 0; i < c->n_metrics; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(c->metrics[i]));
	a = cJSON_AddArrayToObject(o, "kernels");
	for (size_t i = 0; i < c->n_filter; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(c->filter[i]));
	return o;
}

static cJSON *profiler_json(void)
{
	const struct kopt_inject_rp *rp = &g.rp;
	static const char *states[] = { "unused", "ready", "failed", "done",
					"preparing" };
	cJSON *o = cJSON_CreateObject(), *a;
	int state = rp->state;

	/* set up early but never used: still "unused" */
	if (!g.kernels_profiled && state != KOPT_INJECT_RP_FAILED)
		state = KOPT_INJECT_RP_OFF;
	cJSON_AddStringToObject(o, "state", states[state]);
	cJSON_AddStringToObject(o, "setup", g.cfg.early ? "context"
							: "first-sample");
	a = cJSON_AddArrayToObject(o, "metrics");
	for (size_t i = 0; i < rp->n_metrics; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(rp->metrics[i]));
	cJSON_AddNumberToObject(o, "passes", (double)rp->passes);
	cJSON_AddNumberToObject(o, "setup_seconds", rp->setup_s);
	/* the counter availability: read from the device, or kept from an
	   earlier run (KOPT_INJECT_CACHE) */
	if (rp->avail)
		cJSON_AddStringToObject(o, "counter_availability",
					rp->avail_kept ? "kept" : "read");
	cJSON_AddNumberToObject(o, "setup_wait_seconds", g.setup_wait_s);
	cJSON_AddNumberToObject(o, "profile_seconds", g.profile_s);
	cJSON_AddNumberToObject(o, "kernels_profiled", g.kernels_profiled);
	if (g.ctx_moves)
		cJSON_AddNumberToObject(o, "context_moves", g.ctx_moves);
	return o;
}

static cJSON *sample_json(const struct kopt_inject_sample *s)
{
	cJSON *o = cJSON_CreateObject(), *m, *rej = NULL;

	cJSON_AddNumberToObject(o, "launch", (double)s->launch);
	cJSON_AddNumberToObject(o, "last_launch", (double)s->last_launch);
	cJSON_AddNumberToObject(o, "seconds", s->seconds);
	cJSON_AddNumberToObject(o, "window", s->window);
	cJSON_AddStringToObject(o, "replay", s->kernel_replay ? "kernel" :
				"launch");
	m = cJSON_AddObjectToObject(o, "metrics");
	for (size_t i = 0; i < g.rp.n_metrics; i++) {
		if (s->rejected && s->rejected[i]) {
			cJSON *r = cJSON_CreateObject();
			cJSON_AddItemToObject(m, g.rp.metrics[i],
					      cJSON_CreateNull());
			if (!rej)
				rej = cJSON_CreateObject();
			cJSON_AddItemToObject(r, "value",
					      num_or_null(s->values[i]));
			cJSON_AddStringToObject(r, "reason", s->rejected[i]);
			cJSON_AddItemToObject(rej, g.rp.metrics[i], r);
		} else {
			cJSON_AddItemToObject(m, g.rp.metrics[i],
					      num_or_null(s->values[i]));
		}
	}
	if (rej)
		cJSON_AddItemToObject(o, "rejected", rej);
	return o;
}

static int by_corr(const void *a, const void *b)
{
	uint32_t x = ((const struct kopt_inject_exec *)a)->corr;
	uint32_t y = ((const struct kopt_inject_exec *)b)->corr;
	return (x > y) - (x < y);
}

/*
 * Why a kernel has no sample, as a stable code (README.md lists them),
 * or NULL when it has one.
 */
static const char *not_profiled(const struct kopt_inject_kernel *k,
				const struct kopt_inject_execs *e)
{
	if (k && k->n_samples)
		return NULL;
	if (!g.cfg.n_metrics || !g.cfg.samples)
		return "not-asked";
	if (g.rp.state == KOPT_INJECT_RP_FAILED || g.errors.n)
		return "profiler-failed";
	if (!k)
		return "graph"; /* executions without a launch call */
	if (k->ctx_refused)
		return "other-context";
	/*
	 * more executions than launch calls that ran: graphs ran it (the
	 * calls that captured it are counted only when they wanted a
	 * sample; a kernel whose samples failed may have replayed)
	 */
	if (e && (k->calls_captured || !k->failed) &&
	    e->count > k->calls - k->calls_captured)
		return "graph";
	if (k->eligible == 0)
		return "filtered";
	/* launched by a first run node by node, from its graph */
	if (k->calls_unrolled)
		return "graph";
	if (g.plan_active && !k->in_plan)
		return "not-planned";
	if (k->failed)
		return "samples-failed";
	if (!g.plan_active && k->calls <= g.cfg.warmup)
		return "too-few-launches";
	if (!g.plan_active && g.kernels_profiled >= g.cfg.max_kernels)
		return "max-kernels";
	return "too-few-launches";
}

/* One kernel; either side may be missing (graph launches: no calls). */
static cJSON *kernel_json(const struct kopt_inject_kernel *k,
			  struct kopt_inject_execs *e)
{
	const struct kopt_inject_key *key = k ? &k->key : &e->key;
	cJSON *o = cJSON_CreateObject(), *a;
	char *name = pretty_name(key->name);
	int regs = e && e->regs > 0 ? e->regs : k ? k->regs : -1;
	int smem_static = k && k->smem_static >= 0 ? k->smem_static :
			  e ? e->smem_static : -1;
	long long smem_dyn = k ? (long long)k->smem_dynamic :
			     e ? e->smem_dynamic : -1;
	long long local = k && k->local_bytes >= 0 ? k->local_bytes :
			  e ? (long long)e->local_per_thread : -1;
	int per_sm = k ? k->blocks_per_sm : -1;
	double blocks = (double)key->grid[0] * key->grid[1] * key->grid[2];

	cJSON_AddStringToObject(o, "name", name ? name : key->name);
	free(name);
	cJSON_AddStringToObject(o, "mangled", key->name);
	cJSON_AddItemToObject(o, "grid", triple(key->grid));
	cJSON_AddItemToObject(o, "block", triple(key->block));
	if (e && (e->cluster[0] > 1 || e->cluster[1] > 1 || e->cluster[2] > 1))
		cJSON_AddItemToObject(o, "cluster", triple(e->cluster));
	cJSON_AddItemToObject(o, "regs", int_or_null(regs));
	cJSON_AddItemToObject(o, "smem_static", int_or_null(smem_static));
	cJSON_AddItemToObject(o, "smem_dynamic", int_or_null(smem_dyn));
	cJSON_AddItemToObject(o, "local_bytes_per_thread", int_or_null(local));
	cJSON_AddItemToObject(o, "blocks_per_sm", int_or_null(per_sm));
	if (per_sm > 0 && g.device.sms > 0)
		cJSON_AddNumberToObject(o, "waves", blocks /
					((double)per_sm * g.device.sms));
	else
		cJSON_AddNullToObject(o, "waves");
	cJSON_AddNumberToObject(o, "launches",
				(double)(e ? e->count : k->calls));
	/* the program's calls: not a first run's launches of graph nodes */
	cJSON_AddNumberToObject(o, "launch_calls",
				(double)(k ? k->calls - k->calls_unrolled : 0));
	a = cJSON_AddArrayToObject(o, "durations_ns");
	if (e) {
		qsort(e->d, e->n_d, sizeof(*e->d), by_corr);
		for (size_t i = 0; i < e->n_d; i++)
			cJSON_AddItemToArray(a, e->d[i].ns ?
				cJSON_CreateNumber((double)e->d[i].ns) :
				cJSON_CreateNull());
	}
	cJSON_AddNumberToObject(o, "durations_dropped",
				(double)(e ? e->count - e->n_d : 0));
	a = cJSON_AddArrayToObject(o, "profiled");
	for (size_t i = 0; k && i < k->n_samples; i++)
		cJSON_AddItemToArray(a, sample_json(&k->samples[i]));
	cJSON_AddNumberToObject(o, "samples_failed", k ? k->failed : 0);
	if (k && k->calls_other_ctx)
		cJSON_AddNumberToObject(o, "launch_calls_other_context",
					(double)k->calls_other_ctx);
	if (k && k->calls_captured)
		cJSON_AddNumberToObject(o, "launch_calls_captured",
					(double)k->calls_captured);
	{
		const char *why = not_profiled(k, e);
		if (why)
			cJSON_AddStringToObject(o, "not_profiled", why);
	}
	return o;
}

/* Kernels in first-launch order, then those only the Activity API saw. */
static cJSON *kernels_json(void)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; i < g.kernels.n; i++) {
		struct kopt_inject_kernel *k = g.kernels.items[i];
		cJSON_AddItemToArray(a, kernel_json(k,
			kopt_inject_table_find(&g.execs, k->key.name,
					       k->key.grid, k->key.block,
					       k->key.hash)));
	}
	for (size_t j = 0; j < g.execs.n; j++) {
		struct kopt_inject_execs *e = g.execs.items[j];
		if (!kopt_inject_table_find(&g.kernels, e->key.name,
					    e->key.grid, e->key.block,
					    e->key.hash))
			cJSON_AddItemToArray(a, kernel_json(NULL, e));
	}
	return a;
}

static int write_file(const char *path, const char *text)
{
	char tmp[4096];
	size_t len = strlen(text), off = 0;
	int fd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path,
			     (long)getpid()) >= sizeof(tmp))
		return -1;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n <= 0) {
			close(fd);
			unlink(tmp);
			return -1;
		}
		off += (size_t)n;
	}
	if (write(fd, "\n", 1) != 1 || close(fd) < 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int same_dims(const cJSON *a, const cJSON *b)
{
	for (int i = 0; i < 3; i++) {
		const cJSON *x = cJSON_GetArrayItem(a, i);
		const cJSON *y = cJSON_GetArrayItem(b, i);
		if (!cJSON_IsNumber(x) || !cJSON_IsNumber(y) ||
		    x->valuedouble != y->valuedouble)
			return 0;
	}
	return 1;
}

static const cJSON *find_kernel(const cJSON *kernels, const cJSON *k)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "mangled");
	const cJSON *it;

	cJSON_ArrayForEach(it, kernels) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it,
								  "mangled");
		if (cJSON_IsString(n) && cJSON_IsString(name) &&
		    !strcmp(n->valuestring, name->valuestring) &&
		    same_dims(cJSON_GetObjectItemCaseSensitive(it, "grid"),
			      cJSON_GetObjectItemCaseSensitive(k, "grid")) &&
		    same_dims(cJSON_GetObjectItemCaseSensitive(it, "block"),
			      cJSON_GetObjectItemCaseSensitive(k, "block")))
			return it;
	}
	return NULL;
}

/*
 * A second run: the first run's capture, with the samples this run took
 * of the kernels the first one could not sample (each marked "run": 2),
 * and this run's own account under "second_run".  The durations stay
 * the first run's.
 */
static cJSON *merge_first_run(cJSON *second)
{
	cJSON *root = g.first_run, *k, *o;
	const cJSON *kernels2 = cJSON_GetObjectItemCaseSensitive(second,
								 "kernels");
	unsigned planned = 0, sampled = 0;

	g.first_run = NULL;
	cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(root,
							       "kernels")) {
		const cJSON *k2, *s;
		cJSON *why2, *prof;
		int in_plan = 0;

		if (!cJSON_GetObjectItemCaseSensitive(k, "not_profiled"))
			continue;
		for (size_t i = 0; i < g.n_plan; i++) {
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(k,
								"mangled");
			if (cJSON_IsString(n) &&
			    !strcmp(n->valuestring, g.plan[i].key.name))
				in_plan = 1;
		}
		if (!in_plan)
			continue;
		planned++;
		k2 = find_kernel(kernels2, k);
		prof = cJSON_GetObjectItemCaseSensitive(k, "profiled");
		cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(k2,
								"profiled")) {
			cJSON *c = cJSON_Duplicate(s, 1);
			cJSON_AddNumberToObject(c, "run", 2);
			cJSON_AddItemToArray(prof, c);
		}
		if (cJSON_GetArraySize(prof)) {
			sampled++;
			cJSON_DeleteItemFromObjectCaseSensitive(k,
							"not_profiled");
			continue;
		}
		why2 = k2 ? cJSON_GetObjectItemCaseSensitive(k2,
							"not_profiled") : NULL;
		if (cJSON_IsString(why2))
			cJSON_ReplaceItemInObjectCaseSensitive(k,
				"not_profiled",
				cJSON_CreateString(why2->valuestring));
	}
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "planned", planned);
	cJSON_AddNumberToObject(o, "sampled", sampled);
	cJSON_AddItemToObject(o, "process", cJSON_DetachItemFromObjectCaseSensitive(
				      second, "process"));
	cJSON_AddItemToObject(o, "profiler", cJSON_DetachItemFromObjectCaseSensitive(
				      second, "profiler"));
	cJSON_AddItemToObject(o, "errors", cJSON_DetachItemFromObjectCaseSensitive(
				      second, "errors"));
	cJSON_AddItemToObject(o, "warnings", cJSON_DetachItemFromObjectCaseSensitive(
				      second, "warnings"));
	cJSON_DeleteItemFromObjectCaseSensitive(root, "second_run");
	cJSON_AddItemToObject(root, "second_run", o);
	cJSON_Delete(second);
	return root;
}

int kopt_inject_report_write(void)
{
	cJSON *root = cJSON_CreateObject(), *o;
	uint32_t version = 0;
	char *text;
	int ret;

	pthread_mutex_lock(&g.lock);
	pthread_mutex_lock(&g.act_lock);
	cJSON_AddStringToObject(root, "format", KOPT_INJECT_FORMAT);
	cJSON_AddNumberToObject(root, "format_version",
				KOPT_INJECT_FORMAT_VERSION);
	o = cJSON_AddObjectToObject(root, "library");
	if (g.cupti_loaded) {
		cJSON_AddStringToObject(o, "cupti", kc.path);
		if (kc.cuptiGetVersion(&version) == CUPTI_SUCCESS)
			cJSON_AddNumberToObject(o, "cupti_api_version",
						version);
	}
	o = cJSON_AddObjectToObject(root, "process");
	cJSON_AddNumberToObject(o, "pid", (double)g.pid);
	cJSON_AddItemToObject(o, "argv", argv_json());
	cJSON_AddNumberToObject(o, "seconds", kopt_inject_now() - g.t0);
	cJSON_AddNumberToObject(o, "launch_calls", (double)g.calls);
	cJSON_AddNumberToObject(o, "launch_calls_other_context",
				(double)g.calls_other_ctx);
	cJSON_AddNumberToObject(o, "graph_launches", (double)g.graph_launches);
	if (g.plan_graphs || g.node_launches)
		cJSON_AddNumberToObject(o, "graph_node_launches",
					(double)g.node_launches);
	cJSON_AddItemToObject(root, "config", config_json());
	cJSON_AddItemToObject(root, "device", device_json());
	cJSON_AddItemToObject(root, "profiler", profiler_json());
	o = cJSON_AddObjectToObject(root, "activity");
	cJSON_AddBoolToObject(o, "enabled", g.activity_on);
	cJSON_AddNumberToObject(o, "records", (double)g.act_records);
	cJSON_AddNumberToObject(o, "dropped", (double)g.act_dropped);
	cJSON_AddItemToObject(root, "kernels", kernels_json());
	pthread_mutex_unlock(&g.act_lock);
	pthread_mutex_unlock(&g.lock);

	pthread_mutex_lock(&g.note_lock);
	cJSON_AddItemToObject(root, "errors", notes_json(&g.errors));
	cJSON_AddItemToObject(root, "warnings", notes_json(&g.warnings));
	pthread_mutex_unlock(&g.note_lock);

	if (g.first_run)
		root = merge_first_run(root);
	text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		return -1;
	ret = write_file(g.cfg.out, text);
	cJSON_free(text);
	if (ret < 0)
		kopt_inject_log("cannot write '%s'", g.cfg.out);
	return ret;
}
