#include "results.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "cache.h"
#include "config.h"
#include "decimal.h"
#include "error.h"
#include "lockfile.h"
#include "banned.h"

const struct kopt_metric_info kopt_metric_infos[KOPT_METRIC__NR] = {
	[KOPT_METRIC_DURATION_US] = { "duration_us", "Duration", "us", 0, 0 },
	[KOPT_METRIC_TC_PCT] = { "tc_pct", "TC Util", "%", 1, 0 },
	[KOPT_METRIC_DRAM_PCT] = { "dram_pct", "DRAM throughput", "%", -1, 0 },
	[KOPT_METRIC_OCC_PCT] = { "occ_pct", "Occupancy", "%", -1, 0 },
	[KOPT_METRIC_L2_HIT_PCT] = { "l2_hit_pct", "L2 hit rate", "%", 1, 0 },
	[KOPT_METRIC_SPILL_BYTES] = { "spill_bytes", "Local-memory spill",
				      "B", 0, 1 },
	[KOPT_METRIC_REGS] = { "regs", "Registers/thread", "", -1, 1 },
	[KOPT_METRIC_WAVES] = { "waves", "Waves per SM", "", -1, 0 },
	[KOPT_METRIC_TFLOPS] = { "tflops", "Achieved TFLOPs/s", "TFLOP/s",
				 1, 0 },
	[KOPT_METRIC_GBPS] = { "gbps", "Achieved GB/s", "GB/s", 1, 0 },
	[KOPT_METRIC_ROOFLINE_PCT] = { "roofline_pct", "Roofline", "%", 1, 0 },
};

int kopt_metric_from_name(const char *name)
{
	int i;

	for (i = 0; i < KOPT_METRIC__NR; i++)
		if (!strcmp(kopt_metric_infos[i].name, name))
			return i;
	return -1;
}

/* ------------------------------------------------------------------ */
/* Lifecycle */

static void stats_init(struct kopt_results_stats *st)
{
	st->median = st->min = st->max = st->p10 = st->p90 = NAN;
	st->n = 0;
}

void kopt_results_stage_init(struct kopt_results_stage *st)
{
	memset(st, 0, sizeof(*st));
	stats_init(&st->duration_us);
	st->tc_pct = st->dram_pct = st->dram_bytes = st->occ_pct = NAN;
	st->l2_hit_pct = st->spill_bytes = st->regs = NAN;
	st->smem_bytes = st->waves = NAN;
}

static void device_init(struct kopt_results_device *d)
{
	memset(d, 0, sizeof(*d));
	d->sm_clock_mhz = d->mem_clock_mhz = NAN;
	d->peak_tflops = d->peak_gbps = NAN;
	d->measured_tflops = d->measured_gbps = NAN;
}

void kopt_results_entry_init(struct kopt_results_entry *e)
{
	int i;

	memset(e, 0, sizeof(*e));
	device_init(&e->device);
	for (i = 0; i < KOPT_METRIC__NR; i++)
		e->metrics[i] = NAN;
	e->spread_pct = NAN;
}

void kopt_results_entry_release(struct kopt_results_entry *e)
{
	size_t i;

	free(e->trial);
	free(e->dtype);
	free(e->date);
	free(e->tool_version);
	free(e->tree);
	free(e->replay_source);
	free(e->device.name);
	free(e->device.uuid);
	free(e->device.cc);
	for (i = 0; i < e->stages_nr; i++) {
		free(e->stages[i].name);
		free(e->stages[i].not_measured);
	}
	free(e->stages);
	free(e->bottleneck);
	free(e->root_cause);
	for (i = 0; i < e->opportunities_nr; i++) {
		free(e->opportunities[i].name);
		free(e->opportunities[i].trigger);
		free(e->opportunities[i].detail);
	}
	free(e->opportunities);
	cJSON_Delete(e->extra);
	kopt_results_entry_init(e);
}

void kopt_results_release(struct kopt_results *r)
{
	size_t i;

	free(r->kernel);
	free(r->version);
	free(r->parent);
	for (i = 0; i < r->entries_nr; i++)
		kopt_results_entry_release(&r->entries[i]);
	free(r->entries);
	cJSON_Delete(r->extra);
	memset(r, 0, sizeof(*r));
	r->schema = KOPT_RESULTS_SCHEMA;
}

/* ------------------------------------------------------------------ */
/* Reading */

struct reader {
	const char *label;
	struct kopt_buf path;   /* JSON path of the value being read */
	int errors;
};

static void bad(struct reader *rd, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void bad(struct reader *rd, const char *key, const char *fmt, ...)
{
	struct kopt_buf msg = KOPT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	kopt_buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	if (rd->path.len && key)
		kopt_error("%s: %s.%s: %s", rd->label, rd->path.buf, key,
			   msg.buf);
	else if (rd->path.len || key)
		kopt_error("%s: %s: %s", rd->label,
			   key ? key : rd->path.buf, msg.buf);
	else
		kopt_error("%s: %s", rd->label, msg.buf);
	kopt_buf_release(&msg);
	rd->errors++;
}

/* Descend into `key` (or `[index]` when key is NULL); returns old length. */
static size_t push_path(struct reader *rd, const char *key, int index)
{
	size_t len = rd->path.len;

	if (key)
		kopt_buf_addf(&rd->path, "%s%s", len ? "." : "", key);
	else
		kopt_buf_addf(&rd->path, "[%d]", index);
	return len;
}

static void pop_path(struct reader *rd, size_t len)
{
	kopt_buf_setlen(&rd->path, len);
}

static const char *type_name(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsArray(v))
		return "an array";
	if (cJSON_IsObject(v))
		return "an object";
	return "an invalid value";
}

static const cJSON *field(const cJSON *obj, const char *key)
{
	/* keys are case-sensitive in the schema */
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static void get_string(struct reader *rd, const cJSON *obj, const char *key,
		       char **out, int required)
{
	const cJSON *v = field(obj, key);

	if (!v || cJSON_IsNull(v)) {
		if (required)
			bad(rd, key, "missing (expected a string)");
		return;
	}
	if (!cJSON_IsString(v)) {
		bad(rd, key, "expected a string, found %s", type_name(v));
		return;
	}
	free(*out);
	*out = kopt_strdup(v->valuestring);
}

static void get_number(struct reader *rd, const cJSON *obj, const char *key,
		       double *out, int required)
{
	const cJSON *v = field(obj, key);

	if (!v || cJSON_IsNull(v)) {
		if (required)
			bad(rd, key, "missing (expected a number)");
		return;
	}
	if (!cJSON_IsNumber(v)) {
		bad(rd, key, "expected a number, found %s", type_name(v));
		return;
	}
	if (!isfinite(v->valuedouble)) {
		bad(rd, key, "expected a finite number");
		return;
	}
	*out = v->valuedouble;
}

static int is_integer(double d, double min)
{
	/* NAN and the infinities fail the range; within it, a cast is exact */
	return d >= min && d <= 9007199254740992.0 &&
	       d == (double)(int64_t)d;
}

static void get_long(struct reader *rd, const cJSON *obj, const char *key,
		     long *out, int required, long min)
{
	const cJSON *v = field(obj, key);

	if (!v || cJSON_IsNull(v)) {
		if (required)
			bad(rd, key, "missing (expected an integer)");
		return;
	}
	if (!cJSON_IsNumber(v)) {
		bad(rd, key, "expected an integer, found %s", type_name(v));
		return;
	}
	if (!is_integer(v->valuedouble, (double)min)) {
		bad(rd, key, "expected an integer >= %ld, found %.17g", min,
		    v->valuedouble);
		return;
	}
	*out = (long)v->valuedouble;
}

static void get_bool(struct reader *rd, const cJSON *obj, const char *key,
		     int *out)
{
	const cJSON *v = field(obj, key);

	if (!v || cJSON_IsNull(v))
		return;
	if (!cJSON_IsBool(v)) {
		bad(rd, key, "expected true or false, found %s", type_name(v));
		return;
	}
	*out = cJSON_IsTrue(v);
}

/* An object member, or NULL (with an error when it is not an object). */
static const cJSON *get_object(struct reader *rd, const cJSON *obj,
			       const char *key, int required)
{
	const cJSON *v = field(obj, key);

	if (!v || cJSON_IsNull(v)) {
		if (required)
			bad(rd, key, "missing (expected an object)");
		return NULL;
	}
	if (!cJSON_IsObject(v)) {
		bad(rd, key, "expected an object, found %s", type_name(v));
		return NULL;
	}
	return v;
}

static const cJSON *get_array(struct reader *rd, const cJSON *obj,
			      const char *key, int required)
{
	const cJSON *v = field(obj, key);

	if (!v || cJSON_IsNull(v)) {
		if (required)
			bad(rd, key, "missing (expected an array)");
		return NULL;
	}
	if (!cJSON_IsArray(v)) {
		bad(rd, key, "expected an array, found %s", type_name(v));
		return NULL;
	}
	return v;
}

static void get_triple(struct reader *rd, const cJSON *obj, const char *key,
		       long out[3])
{
	const cJSON *v = get_array(rd, obj, key, 0);
	const cJSON *it;
	int i = 0;

	if (!v)
		return;
	if (cJSON_GetArraySize(v) != 3) {
		bad(rd, key, "expected an array of 3 integers");
		return;
	}
	cJSON_ArrayForEach(it, v) {
		if (!cJSON_IsNumber(it) || !is_integer(it->valuedouble, 0)) {
			bad(rd, key, "expected an array of 3 integers");
			return;
		}
		out[i++] = (long)it->valuedouble;
	}
}

/*
 * The tree of a results file being read lives in an arena: cJSON
 * allocates each node and string on its own, and freeing a file's
 * thousand-odd pieces one by one cost as much as parsing them.  Nothing
 * of the tree outlives kopt_results_parse(); what the model keeps of it
 * (the unknown members) is copied out with the usual allocator.
 */
#define ARENA_CHUNK (128 * 1024)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	max_align_t data[];
};

/*
 * Per thread: threads read results files at once (lib/parallel).  cJSON's
 * hooks are the process's, so they are installed once and send each
 * allocation to the calling thread's arena while it reads a file, to
 * malloc() otherwise.
 */
static _Thread_local struct arena_chunk *arena; /* the newest first */
static _Thread_local int arena_on;
static pthread_once_t arena_hooks_once = PTHREAD_ONCE_INIT;
static pthread_key_t arena_key;         /* frees a thread's arena */

static void *arena_alloc(size_t size)
{
	struct arena_chunk *c = arena;
	size_t need = (size + sizeof(max_align_t) - 1) &
		      ~(sizeof(max_align_t) - 1);

	if (!arena_on)
		return malloc(size);
	if (!c || c->size - c->used < need) {
		size_t sz = need > ARENA_CHUNK ? need : ARENA_CHUNK;
		c = malloc(sizeof(*c) + sz);
		if (!c)
			return NULL;
		c->next = arena;
		c->used = 0;
		c->size = sz;
		if (!arena)
			pthread_setspecific(arena_key, c);
		arena = c;
	}
	c->used += need;
	return (char *)c->data + c->used - need;
}

/*
 * The arena's pieces go with it; anything else cJSON frees meanwhile (the
 * unknown members of a model released on an error) was malloc()'s.
 */
static void arena_free(void *p)
{
	const struct arena_chunk *c;
	uintptr_t a = (uintptr_t)p;

	for (c = arena; c; c = c->next)
		if (a >= (uintptr_t)c->data &&
		    a < (uintptr_t)c->data + c->size)
			return;
	free(p);
}

static cJSON_Hooks arena_hooks = { arena_alloc, arena_free };

/* A thread that read results ends: its kept chunk goes. */
static void arena_thread_end(void *chunk)
{
	(void)chunk;
	while (arena) {
		struct arena_chunk *c = arena;
		arena = c->next;
		free(c);
	}
}

static void arena_hooks_install(void)
{
	pthread_key_create(&arena_key, arena_thread_end);
	cJSON_InitHooks(&arena_hooks);
}

static void arena_begin(void)
{
	pthread_once(&arena_hooks_once, arena_hooks_install);
	arena_on = 1;
}

/* Drop the tree; the oldest chunk is kept for the next file. */
static void arena_end(void)
{
	arena_on = 0;
	while (arena && arena->next) {
		struct arena_chunk *c = arena;
		arena = c->next;
		free(c);
	}
	if (arena)
		arena->used = 0;
}

/* Unknown members of `obj`, copied, or NULL when there are none. */
static cJSON *collect_extra(const cJSON *obj, const char *const *known)
{
	cJSON *extra = NULL;
	const cJSON *it;
	int in_arena = arena_on;

	/* the copies outlive the file's tree: the usual allocator */
	arena_on = 0;

	cJSON_ArrayForEach(it, obj) {
		const char *const *k;
		for (k = known; *k; k++)
			if (it->string && !strcmp(*k, it->string))
				break;
		if (*k || !it->string)
			continue;
		if (!extra)
			extra = cJSON_CreateObject();
		cJSON_AddItemToObject(extra, it->string,
				      cJSON_Duplicate(it, 1));
	}
	arena_on = in_arena;
	return extra;
}

static void read_device(struct reader *rd, const cJSON *obj,
			struct kopt_results_device *d)
{
	size_t len = push_path(rd, "device", 0);

	get_string(rd, obj, "name", &d->name, 1);
	get_string(rd, obj, "uuid", &d->uuid, 0);
	get_string(rd, obj, "cc", &d->cc, 0);
	get_long(rd, obj, "sms", &d->sms, 0, 0);
	get_number(rd, obj, "sm_clock_mhz", &d->sm_clock_mhz, 0);
	get_number(rd, obj, "mem_clock_mhz", &d->mem_clock_mhz, 0);
	get_number(rd, obj, "peak_tflops", &d->peak_tflops, 0);
	get_number(rd, obj, "peak_gbps", &d->peak_gbps, 0);
	get_number(rd, obj, "measured_tflops", &d->measured_tflops, 0);
	get_number(rd, obj, "measured_gbps", &d->measured_gbps, 0);
	get_bool(rd, obj, "clocks_locked", &d->clocks_locked);
	pop_path(rd, len);
}

static void read_stage(struct reader *rd, const cJSON *obj,
		       struct kopt_results_stage *st)
{
	const cJSON *d;

	get_string(rd, obj, "name", &st->name, 1);
	get_triple(rd, obj, "grid", st->grid);
	get_triple(rd, obj, "block", st->block);
	get_long(rd, obj, "launches", &st->launches, 0, 0);
	d = get_object(rd, obj, "duration_us", 0);
	if (d) {
		size_t len = push_path(rd, "duration_us", 0);
		get_number(rd, d, "median", &st->duration_us.median, 1);
		get_number(rd, d, "min", &st->duration_us.min, 0);
		get_number(rd, d, "max", &st->duration_us.max, 0);
		get_number(rd, d, "p10", &st->duration_us.p10, 0);
		get_number(rd, d, "p90", &st->duration_us.p90, 0);
		get_long(rd, d, "n", &st->duration_us.n, 0, 0);
		pop_path(rd, len);
	}
	get_number(rd, obj, "tc_pct", &st->tc_pct, 0);
	get_number(rd, obj, "dram_pct", &st->dram_pct, 0);
	get_number(rd, obj, "dram_bytes", &st->dram_bytes, 0);
	get_number(rd, obj, "occ_pct", &st->occ_pct, 0);
	get_number(rd, obj, "l2_hit_pct", &st->l2_hit_pct, 0);
	get_number(rd, obj, "spill_bytes", &st->spill_bytes, 0);
	get_number(rd, obj, "regs", &st->regs, 0);
	get_number(rd, obj, "smem_bytes", &st->smem_bytes, 0);
	get_number(rd, obj, "waves", &st->waves, 0);
	get_string(rd, obj, "not_measured", &st->not_measured, 0);
	{
		const cJSON *r = field(obj, "replay");
		if (r && !cJSON_IsNull(r) && !(cJSON_IsString(r) &&
		    (!strcmp(r->valuestring, "kernel") ||
		     !strcmp(r->valuestring, "launch"))))
			bad(rd, "replay", "expected \"kernel\" or \"launch\"");
		st->kernel_replay = cJSON_IsString(r) &&
				    !strcmp(r->valuestring, "kernel");
	}
}

static void read_opportunity(struct reader *rd, const cJSON *obj,
			     struct kopt_results_opportunity *o)
{
	o->est_gain_pct = NAN;
	get_string(rd, obj, "name", &o->name, 1);
	get_number(rd, obj, "est_gain_pct", &o->est_gain_pct, 0);
	get_string(rd, obj, "trigger", &o->trigger, 0);
	get_string(rd, obj, "detail", &o->detail, 0);
}

static const char *const entry_keys[] = {
	"trial", "config", "date", "tool_version", "tree", "replayed",
	"replay_source", "device", "stages", "metrics", "spread_pct",
	"bottleneck", "root_cause", "opportunities", NULL
};

static void read_entry(struct reader *rd, const cJSON *obj,
		       struct kopt_results_entry *e)
{
	const cJSON *cfg, *v, *it;
	int i;

	v = field(obj, "trial");
	if (v && !cJSON_IsNull(v)) {
		get_string(rd, obj, "trial", &e->trial, 0);
		if (e->trial && !kopt_valid_name(e->trial))
			bad(rd, "trial", "'%s' is not a valid trial name",
			    e->trial);
	}
	cfg = get_object(rd, obj, "config", 1);
	if (cfg) {
		size_t len = push_path(rd, "config", 0);
		get_long(rd, cfg, "b", &e->b, 1, 1);
		get_long(rd, cfg, "s", &e->s, 1, 1);
		get_long(rd, cfg, "t", &e->t, 1, 1);
		get_long(rd, cfg, "b_requested", &e->b_requested, 0, 1);
		get_string(rd, cfg, "dtype", &e->dtype, 0);
		if (!e->b_requested)
			e->b_requested = e->b;
		else if (e->b > e->b_requested)
			bad(rd, "b", "%ld is larger than b_requested %ld",
			    e->b, e->b_requested);
		pop_path(rd, len);
	}
	get_string(rd, obj, "date", &e->date, 0);
	get_string(rd, obj, "tool_version", &e->tool_version, 0);
	get_string(rd, obj, "tree", &e->tree, 0);
	get_bool(rd, obj, "replayed", &e->replayed);
	get_string(rd, obj, "replay_source", &e->replay_source, 0);

	v = get_object(rd, obj, "device", 0);
	if (v)
		read_device(rd, v, &e->device);

	v = get_array(rd, obj, "stages", 0);
	if (v) {
		size_t len = push_path(rd, "stages", 0);
		i = 0;
		cJSON_ArrayForEach(it, v) {
			size_t l2 = push_path(rd, NULL, i++);
			struct kopt_results_stage *st;
			if (!cJSON_IsObject(it)) {
				bad(rd, NULL, "expected an object, found %s",
				    type_name(it));
				pop_path(rd, l2);
				continue;
			}
			KOPT_ALLOC_GROW(e->stages, e->stages_nr + 1,
					e->stages_alloc);
			st = &e->stages[e->stages_nr++];
			kopt_results_stage_init(st);
			read_stage(rd, it, st);
			pop_path(rd, l2);
		}
		pop_path(rd, len);
	}

	v = get_object(rd, obj, "metrics", 0);
	if (v) {
		size_t len = push_path(rd, "metrics", 0);
		for (i = 0; i < KOPT_METRIC__NR; i++)
			get_number(rd, v, kopt_metric_infos[i].name,
				   &e->metrics[i], 0);
		cJSON_ArrayForEach(it, v)
			if (it->string && kopt_metric_from_name(it->string) < 0)
				bad(rd, it->string, "not a canonical metric "
				    "(see Documentation/results-format.md)");
		pop_path(rd, len);
	}
	get_number(rd, obj, "spread_pct", &e->spread_pct, 0);
	get_string(rd, obj, "bottleneck", &e->bottleneck, 0);
	get_string(rd, obj, "root_cause", &e->root_cause, 0);

	v = get_array(rd, obj, "opportunities", 0);
	if (v) {
		size_t len = push_path(rd, "opportunities", 0);
		i = 0;
		cJSON_ArrayForEach(it, v) {
			size_t l2 = push_path(rd, NULL, i++);
			struct kopt_results_opportunity *o;
			if (!cJSON_IsObject(it)) {
				bad(rd, NULL, "expected an object, found %s",
				    type_name(it));
				pop_path(rd, l2);
				continue;
			}
			KOPT_ALLOC_GROW(e->opportunities,
					e->opportunities_nr + 1,
					e->opportunities_alloc);
			o = &e->opportunities[e->opportunities_nr++];
			memset(o, 0, sizeof(*o));
			read_opportunity(rd, it, o);
			pop_path(rd, l2);
		}
		pop_path(rd, len);
	}
	e->extra = collect_extra(obj, entry_keys);
}

static int same_trial(const char *a, const char *b)
{
	if (!a || !b)
		return !a && !b;
	return kopt_str_eq(a, b);
}


static int same_identity(const struct kopt_results_entry *a,
			 const struct kopt_results_entry *b)
{
	return same_trial(a->trial, b->trial) &&
	       a->b_requested == b->b_requested && a->s == b->s &&
	       a->t == b->t && kopt_results_same_entry_device(&a->device,
							      &b->device);
}

static void line_col(const char *data, const char *at, int *line, int *col)
{
	const char *p;

	*line = 1;
	*col = 1;
	for (p = data; p < at; p++) {
		if (*p == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)*p & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

static const char *const top_keys[] = {
	"schema", "kernel", "version", "parent", "entries", NULL
};

static int json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int kopt_results_parse(struct kopt_results *out, const char *data,
		       size_t len, const char *label, const char *kernel,
		       const char *version)
{
	const char *end = NULL;
	cJSON *root;
	size_t i;
	int ret;

	kopt_results_release(out);
	for (i = 0; i < len && json_space(data[i]); i++)
		;
	if (i == len)
		return kopt_error("%s: empty results file", label),
		       KOPT_EINVALID;
	arena_begin();
	root = cJSON_ParseWithLengthOpts(data, len, &end, 0);
	/* only white space after the value (the data need not end in NUL) */
	while (root && end && end < data + len && json_space(*end))
		end++;
	if (!root || (end && end < data + len)) {
		int line, col;
		line_col(data, end ? end : data, &line, &col);
		arena_end();
		kopt_error("%s:%d:%d: not valid JSON%s", label, line, col,
			   root ? " (text after the value)" : "");
		return KOPT_EINVALID;
	}
	ret = kopt_results_from_json(out, root, label, kernel, version);
	/* the tree is the arena's: no cJSON_Delete() */
	arena_end();
	return ret;
}

int kopt_results_from_json(struct kopt_results *out, const struct cJSON *root,
			   const char *label, const char *kernel,
			   const char *version)
{
	struct reader rd = { label, KOPT_BUF_INIT, 0 };
	const cJSON *v, *it;
	size_t j;
	int idx;

	kopt_results_release(out);
	if (!cJSON_IsObject(root)) {
		kopt_error("%s: expected a JSON object, found %s", label,
			   type_name(root));
		return KOPT_EINVALID;
	}

	v = field(root, "schema");
	if (!v) {
		bad(&rd, "schema", "missing (expected %d)",
		    KOPT_RESULTS_SCHEMA);
		goto done;
	}
	if (!cJSON_IsNumber(v)) {
		bad(&rd, "schema", "expected the number %d, found %s",
		    KOPT_RESULTS_SCHEMA, type_name(v));
		goto done;
	}
	if (v->valuedouble != KOPT_RESULTS_SCHEMA) {
		bad(&rd, "schema", "version %g is not supported (this "
		    "git-kopt reads schema %d)", v->valuedouble,
		    KOPT_RESULTS_SCHEMA);
		goto done;
	}
	out->schema = KOPT_RESULTS_SCHEMA;

	get_string(&rd, root, "kernel", &out->kernel, 1);
	if (out->kernel && !kopt_valid_name(out->kernel))
		bad(&rd, "kernel", "'%s' is not a valid kernel name",
		    out->kernel);
	else if (out->kernel && kernel && strcmp(out->kernel, kernel))
		bad(&rd, "kernel", "names kernel '%s', but the file belongs "
		    "to kernel '%s'", out->kernel, kernel);
	get_string(&rd, root, "version", &out->version, 1);
	if (out->version && !kopt_valid_name(out->version))
		bad(&rd, "version", "'%s' is not a valid version name",
		    out->version);
	else if (out->version && version && strcmp(out->version, version))
		bad(&rd, "version", "names version '%s', but the file "
		    "belongs to version '%s'", out->version, version);
	get_string(&rd, root, "parent", &out->parent, 0);
	if (out->parent && !kopt_valid_name(out->parent))
		bad(&rd, "parent", "'%s' is not a valid version name",
		    out->parent);

	v = get_array(&rd, root, "entries", 1);
	if (v) {
		idx = 0;
		cJSON_ArrayForEach(it, v) {
			size_t l = push_path(&rd, "entries", 0);
			struct kopt_results_entry *e;
			push_path(&rd, NULL, idx++);
			if (!cJSON_IsObject(it)) {
				bad(&rd, NULL, "expected an object, found %s",
				    type_name(it));
				pop_path(&rd, l);
				continue;
			}
			KOPT_ALLOC_GROW(out->entries, out->entries_nr + 1,
					out->entries_alloc);
			e = &out->entries[out->entries_nr++];
			kopt_results_entry_init(e);
			read_entry(&rd, it, e);
			for (j = 0; j + 1 < out->entries_nr; j++)
				if (same_identity(&out->entries[j], e)) {
					bad(&rd, NULL, "same trial, "
					    "configuration and device as "
					    "entries[%zu]", j);
					break;
				}
			pop_path(&rd, l);
		}
	}
	out->extra = collect_extra(root, top_keys);

done:
	kopt_buf_release(&rd.path);
	if (rd.errors) {
		kopt_results_release(out);
		return KOPT_EINVALID;
	}
	return 0;
}

int kopt_results_read_file(struct kopt_results *out, const char *path,
			   const char *kernel, const char *version)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	int ret;

	if ((ret = kopt_read_file(&sb, path, NULL)))
		return ret;
	ret = kopt_results_parse(out, sb.buf, sb.len, path, kernel, version);
	kopt_buf_release(&sb);
	return ret;
}

/* ------------------------------------------------------------------ */
/*
 * The quick reading for the views (kopt_results_scan()).  It walks the
 * text once and builds no tree: it checks every field as read_entry()
 * does and keeps what kopt_results_summary() keeps.  It takes only plain
 * JSON (no escapes in strings, no control characters, numbers of at
 * most 63 characters, nesting under 32), each known member once, and
 * well-formed values; anything else, valid or not, it leaves to
 * kopt_results_parse(), whose messages are then the ones printed.
 */

#define SCAN_DEPTH 32
#define KEYS_NR(keys) ((int)(sizeof(keys) / sizeof(*(keys))) - 1)

/*
 * The text's last byte other than white space must be the '}' that
 * closes it (anything else is left to the full reader): `last` points
 * there.  Every loop over bytes stops at it (it is no white space, no
 * digit, and it stops a string, which then looks whether it is the last
 * one), so the loops need no bound of their own; only a look at the next
 * token checks for the end.
 */
struct scan {
	const char *p, *end, *last;
	int fail;
};

struct scan_str {
	const char *s;
	size_t len;
};

/*
 * Character classes, looked up once a byte: JSON's white space, and what
 * ends the plain part of a string (a quote, a backslash, a control
 * character, and '}' for the check above).
 */
enum { SCAN_WS = 1, SCAN_STR_STOP = 2 };
static const unsigned char scan_class[256] = {
	/* 0x00-0x1f: control characters (\t \n \r white space too) */
	2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 2, 2, 3, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static inline int scan_digit(char c)
{
	return (unsigned char)(c - '0') <= 9;
}

/*
 * Where the position goes once the last '}' is taken: a NUL, which is no
 * white space and no token, so that a look past the end needs no bound.
 */
static const char scan_past_end[1] = "";

/* The next significant character (after white space), or 0 at the end. */
static inline char scan_peek(struct scan *sc)
{
	const char *p = sc->p;

	while (scan_class[(unsigned char)*p] & SCAN_WS)
		p++;
	sc->p = p;
	return *p;
}

/* Take the '}' or ']' at the position. */
static inline void scan_close(struct scan *sc)
{
	sc->p = sc->p == sc->last ? scan_past_end : sc->p + 1;
}

static inline int scan_char(struct scan *sc, char c)
{
	if (scan_peek(sc) != c) {
		sc->fail = 1;
		return 0;
	}
	sc->p++;
	return 1;
}

static inline int scan_string(struct scan *sc, struct scan_str *out)
{
	const char *p;

	if (!scan_char(sc, '"'))
		return 0;
	p = sc->p;
	for (;;) {
		while (!(scan_class[(unsigned char)*p] & SCAN_STR_STOP))
			p++;
		if (*p == '"')
			break;
		/* an escape, a control character, or no end */
		if (*p != '}' || p == sc->last) {
			sc->fail = 1;
			return 0;
		}
		p++;
	}
	out->s = sc->p;
	out->len = (size_t)(p - sc->p);
	sc->p = p + 1;
	return 1;
}


/* strtod() of n < 64 bytes: kept out of the quick path's frame */
static __attribute__((noinline)) double scan_strtod(const char *s, size_t n)
{
	char buf[64];

	memcpy(buf, s, n);
	buf[n] = '\0';
	return strtod(buf, NULL);
}

/* A JSON number, as strtod() reads it (lib/decimal). */
static inline int scan_number(struct scan *sc, double *out)
{
	const char *p = sc->p, *start = sc->p, *d;
	uint64_t m = 0;
	int digits, neg = 0, exp10 = 0, e = 0;
	char c;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (!scan_digit(*p))
		goto bad;
	d = p;
	if (*p == '0')
		p++;
	else
		for (; scan_digit(*p); p++)
			m = m * 10 + (uint64_t)(*p - '0');
	digits = (int)(p - d);
	if (*p == '.') {
		p++;
		if (!scan_digit(*p))
			goto bad;
		d = p;
		for (; scan_digit(*p); p++)
			m = m * 10 + (uint64_t)(*p - '0');
		exp10 = -(int)(p - d);
		digits -= exp10;
	}
	if ((*p | 0x20) == 'e') {
		int eneg = 0;
		p++;
		if (*p == '+' || *p == '-')
			eneg = *p++ == '-';
		if (!scan_digit(*p))
			goto bad;
		for (; scan_digit(*p); p++)
			if (e < 100000)
				e = e * 10 + (*p - '0');
		exp10 += eneg ? -e : e;
	}
	/* cJSON reads at most 63 characters of a number */
	c = *p;
	if (p - start > 63 || c == '.' || c == '+' || c == '-' ||
	    (c | 0x20) == 'e')
		goto bad;
	/* at most 19 digits: m holds them all, without overflow */
	if (digits > 19 || !kopt_decimal_exact(out, m, exp10, neg))
		*out = scan_strtod(start, (size_t)(p - start));
	sc->p = p;
	return 1;
bad:
	sc->fail = 1;
	return 0;
}

/*
 * A number without an exponent (finite, then, within 63 characters),
 * checked as scan_number() checks it and passed over: 1.  0 for any
 * other text, the position unchanged, for scan_number() to read.
 */
static inline int scan_number_plain(struct scan *sc)
{
	const char *p = sc->p;
	char c;

	if (*p == '-')
		p++;
	if (!scan_digit(*p))
		return 0;
	if (*p == '0')
		p++;
	else
		while (scan_digit(*p))
			p++;
	if (*p == '.') {
		p++;
		if (!scan_digit(*p))
			return 0;
		while (scan_digit(*p))
			p++;
	}
	c = *p;
	if (p - sc->p > 63 || c == '.' || c == '+' || c == '-' ||
	    (c | 0x20) == 'e')
		return 0;
	sc->p = p;
	return 1;
}

static int scan_word(struct scan *sc, const char *w, size_t n)
{
	if ((size_t)(sc->end - sc->p) < n || memcmp(sc->p, w, n)) {
		sc->fail = 1;
		return 0;
	}
	sc->p += n;
	return 1;
}

/* Any value, checked and passed over. */
static void scan_skip(struct scan *sc, int depth)
{
	struct scan_str s;
	double d;
	char c = scan_peek(sc);

	if (depth > SCAN_DEPTH) {
		sc->fail = 1;
		return;
	}
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		sc->p++;
		if (scan_peek(sc) == close) {
			scan_close(sc);
			return;
		}
		while (!sc->fail) {
			if (c == '{' && (!scan_string(sc, &s) ||
					 !scan_char(sc, ':')))
				return;
			scan_skip(sc, depth + 1);
			if (sc->fail)
				return;
			if (scan_peek(sc) == close) {
				scan_close(sc);
				return;
			}
			if (!scan_char(sc, ','))
				return;
		}
	} else if (c == '"') {
		scan_string(sc, &s);
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		scan_number(sc, &d);
	} else if (c == 't') {
		scan_word(sc, "true", 4);
	} else if (c == 'f') {
		scan_word(sc, "false", 5);
	} else if (c == 'n') {
		scan_word(sc, "null", 4);
	} else {
		sc->fail = 1;
	}
}

/*
 * Members of an object, one call each: 1 with the position at the quote
 * that opens the member's name; 0 at the end of the object (or on
 * failure).  `*first` starts at 1.
 */
static inline int scan_member(struct scan *sc, int *first)
{
	char c;

	if (sc->fail)
		return 0;
	c = scan_peek(sc);
	if (*first) {
		*first = 0;
		if (c != '{')
			goto bad;
		sc->p++;
		c = scan_peek(sc);
		if (c == '}') {
			scan_close(sc);
			return 0;
		}
	} else {
		if (c == '}') {
			scan_close(sc);
			return 0;
		}
		if (c != ',')
			goto bad;
		sc->p++;
		c = scan_peek(sc);
	}
	if (c == '"')
		return 1;
bad:
	sc->fail = 1;
	return 0;
}

/* Elements of an array, as scan_member(). */
static inline int scan_element(struct scan *sc, int *first)
{
	char c;

	if (sc->fail)
		return 0;
	c = scan_peek(sc);
	if (*first) {
		*first = 0;
		if (c != '[')
			goto bad;
		sc->p++;
		if (scan_peek(sc) == ']') {
			sc->p++;
			return 0;
		}
		return 1;
	}
	if (c == ']') {
		sc->p++;
		return 0;
	}
	if (c == ',') {
		sc->p++;
		return 1;
	}
bad:
	sc->fail = 1;
	return 0;
}

/*
 * A table of member names with their lengths (found on first use), in
 * the order git-kopt writes them.
 */
#define SCAN_MAX_KEYS 32
struct scan_keys {
	const char *const *names;       /* NULL-terminated */
	int nr;
	unsigned char len[SCAN_MAX_KEYS];
};

static void scan_keys_ready(struct scan_keys *ks)
{
	if (ks->nr)
		return;
	while (ks->names[ks->nr]) {
		ks->len[ks->nr] = (unsigned char)strlen(ks->names[ks->nr]);
		ks->nr++;
	}
}

/* The n bytes at a and b are the same (a few loads for a short key). */
static inline int scan_same(const char *a, const char *b, size_t n)
{
	uint64_t x, y;
	uint32_t u, v;

	if (n >= 8) {
		for (; n > 8; n -= 8, a += 8, b += 8) {
			memcpy(&x, a, 8);
			memcpy(&y, b, 8);
			if (x != y)
				return 0;
		}
		memcpy(&x, a + n - 8, 8);
		memcpy(&y, b + n - 8, 8);
		return x == y;
	}
	if (n >= 4) {
		memcpy(&u, a, 4);
		memcpy(&v, b, 4);
		if (u != v)
			return 0;
		memcpy(&u, a + n - 4, 4);
		memcpy(&v, b + n - 4, 4);
		return u == v;
	}
	for (; n; n--)
		if (*a++ != *b++)
			return 0;
	return 1;
}

/*
 * Which of the names `key` is, or -1.  The search starts at *hint, the
 * one after the last found: git-kopt writes the members in the table's
 * order.
 */
static inline int scan_key(const struct scan_str *key,
			   const struct scan_keys *ks, int *hint)
{
	int i, k = *hint;

	for (i = 0; i < ks->nr; i++, k++) {
		if (k >= ks->nr)
			k = 0;
		if (key->len && ks->len[k] == key->len &&
		    scan_same(ks->names[k], key->s, key->len)) {
			*hint = k + 1;
			return k;
		}
	}
	return -1;
}

/*
 * The next member of an object, as scan_member(), with *k its name's
 * index in `ks` (-1: none of them).  The name expected next is looked
 * for in place first.
 */
/* inlined in each object's loop: one call a member was a tenth of it */
static inline __attribute__((always_inline)) int
scan_member_key(struct scan *sc, int *first, const struct scan_keys *ks,
		int *hint, int *k)
{
	struct scan_str key;
	const char *p;
	int h;
	size_t n;

	if (!scan_member(sc, first))
		return 0;
	p = sc->p;
	h = *hint < ks->nr ? *hint : 0;
	n = ks->len[h];
	/* p[0] is the quote (scan_member() looked) */
	if ((size_t)(sc->end - p) > n + 1 && p[n + 1] == '"' &&
	    scan_same(p + 1, ks->names[h], n) && n) {
		sc->p = p + n + 2;
		*k = h;
		*hint = h + 1;
	} else {
		if (!scan_string(sc, &key))
			return 0;
		*k = scan_key(&key, ks, hint);
	}
	return scan_char(sc, ':');
}

/* Each known member once: a second one is left to the full reader. */
static inline int scan_once(struct scan *sc, unsigned long *seen, int k)
{
	if (k < 0)
		return 1;
	if (*seen & (1UL << k)) {
		sc->fail = 1;
		return 0;
	}
	*seen |= 1UL << k;
	return 1;
}

static inline int scan_null(struct scan *sc)
{
	if (scan_peek(sc) != 'n')
		return 0;
	return scan_word(sc, "null", 4);
}

/* A string member (null: absent); *out gets a copy when `out`. */
static void scan_get_string(struct scan *sc, char **out, int required)
{
	struct scan_str s;

	if (scan_null(sc)) {
		if (required)
			sc->fail = 1;
		return;
	}
	if (!scan_string(sc, &s))
		return;
	if (out) {
		free(*out);
		*out = kopt_strndup(s.s, s.len);
	}
}

/* A finite number member (null: absent). */
/* inlined where each member is read, as scan_member_key() */
static inline __attribute__((always_inline)) void
scan_get_number(struct scan *sc, double *out, int required)
{
	double d;
	char c = scan_peek(sc);

	if (c == 'n') {
		if (scan_word(sc, "null", 4) && required)
			sc->fail = 1;
		return;
	}
	if (c != '-' && (c < '0' || c > '9')) {
		sc->fail = 1;
		return;
	}
	/* a number read only to be checked: without its value when it can */
	if (!out && scan_number_plain(sc))
		return;
	if (!scan_number(sc, &d))
		return;
	if (!isfinite(d)) {
		sc->fail = 1;
		return;
	}
	if (out)
		*out = d;
}

static inline __attribute__((always_inline)) void
scan_get_long(struct scan *sc, long *out, int required, long min)
{
	double d = NAN;
	const char *p;

	/*
	 * Checked only, at least 0: plain digits (at most 15, below 2^53)
	 * are such an integer without their value.
	 */
	if (!out && min <= 0 && scan_digit(scan_peek(sc))) {
		p = sc->p;
		if (*p == '0')
			p++;
		else
			while (scan_digit(*p))
				p++;
		if (p - sc->p <= 15 && *p != '.' && (*p | 0x20) != 'e' &&
		    *p != '+' && *p != '-') {
			sc->p = p;
			return;
		}
	}
	scan_get_number(sc, &d, required);
	if (sc->fail || isnan(d))
		return;
	if (!is_integer(d, (double)min)) {
		sc->fail = 1;
		return;
	}
	if (out)
		*out = (long)d;
}

static void scan_get_bool(struct scan *sc, int *out)
{
	char c = scan_peek(sc);

	if (c == 'n')
		scan_word(sc, "null", 4);
	else if (c == 't' && scan_word(sc, "true", 4))
		*out = 1;
	else if (c == 'f' && scan_word(sc, "false", 5))
		*out = 0;
	else
		sc->fail = 1;
}

/* An object or array member that may be null: 1 when it is not null. */
static inline int scan_open(struct scan *sc, char c, int required)
{
	if (scan_null(sc)) {
		if (required)
			sc->fail = 1;
		return 0;
	}
	if (scan_peek(sc) != c) {
		sc->fail = 1;
		return 0;
	}
	return 1;
}

static void scan_triple(struct scan *sc)
{
	int first = 1, n = 0;

	if (!scan_open(sc, '[', 0))
		return;
	while (scan_element(sc, &first)) {
		if (scan_peek(sc) == 'n') {
			sc->fail = 1;
			return;
		}
		scan_get_long(sc, NULL, 1, 0);
		n++;
	}
	if (!sc->fail && n != 3)
		sc->fail = 1;
}

static const char *const scan_config_keys_names[] = {
	"b", "s", "t", "b_requested", "dtype", NULL
};
static struct scan_keys scan_config_keys = {
	scan_config_keys_names, 0, { 0 }
};

static void scan_config(struct scan *sc, struct kopt_results_entry *e)
{
	unsigned long seen = 0;
	int hint = 0;
	int first = 1, k;

	if (!scan_open(sc, '{', 1))
		return;
	while (scan_member_key(sc, &first, &scan_config_keys, &hint, &k)) {
		if (!scan_once(sc, &seen, k))
			return;
		switch (k) {
		case 0: scan_get_long(sc, &e->b, 1, 1); break;
		case 1: scan_get_long(sc, &e->s, 1, 1); break;
		case 2: scan_get_long(sc, &e->t, 1, 1); break;
		case 3: scan_get_long(sc, &e->b_requested, 0, 1); break;
		case 4: scan_get_string(sc, &e->dtype, 0); break;
		default: scan_skip(sc, 2); break;
		}
	}
	/* b, s and t are required (null counts as missing) */
	if (sc->fail || !e->b || !e->s || !e->t) {
		sc->fail = 1;
		return;
	}
	if (!e->b_requested)
		e->b_requested = e->b;
	else if (e->b > e->b_requested)
		sc->fail = 1;
}

static const char *const scan_device_keys_names[] = {
	"name", "uuid", "cc", "sms", "sm_clock_mhz", "mem_clock_mhz",
	"peak_tflops", "peak_gbps", "measured_tflops", "measured_gbps",
	"clocks_locked", NULL
};
static struct scan_keys scan_device_keys = {
	scan_device_keys_names, 0, { 0 }
};

static void scan_device(struct scan *sc, struct kopt_results_device *d)
{
	unsigned long seen = 0;
	int hint = 0;
	int first = 1, k, locked;

	if (!scan_open(sc, '{', 0))
		return;
	while (scan_member_key(sc, &first, &scan_device_keys, &hint, &k)) {
		if (!scan_once(sc, &seen, k))
			return;
		switch (k) {
		case 0: scan_get_string(sc, &d->name, 1); break;
		case 1: scan_get_string(sc, &d->uuid, 0); break;
		case 2: scan_get_string(sc, NULL, 0); break;
		case 3: scan_get_long(sc, NULL, 0, 0); break;
		case 10: scan_get_bool(sc, &locked); break;
		case -1: scan_skip(sc, 3); break;
		default: scan_get_number(sc, NULL, 0); break;
		}
	}
	if (!(seen & 1) || !d->name)
		sc->fail = 1;
}

static const char *const scan_stats_keys_names[] = {
	"median", "min", "max", "p10", "p90", "n", NULL
};
static struct scan_keys scan_stats_keys = {
	scan_stats_keys_names, 0, { 0 }
};

static void scan_stats(struct scan *sc)
{
	unsigned long seen = 0;
	int hint = 0;
	double median = NAN;
	int first = 1, k;

	if (!scan_open(sc, '{', 0))
		return;
	while (scan_member_key(sc, &first, &scan_stats_keys, &hint, &k)) {
		if (!scan_once(sc, &seen, k))
			return;
		if (k == 0)
			scan_get_number(sc, &median, 1);
		else if (k == 5)
			scan_get_long(sc, NULL, 0, 0);
		else if (k > 0)
			scan_get_number(sc, NULL, 0);
		else
			scan_skip(sc, 5);
	}
	if (isnan(median))
		sc->fail = 1;
}

static const char *const scan_stage_keys_names[] = {
	"name", "grid", "block", "launches", "duration_us", "tc_pct",
	"dram_pct", "dram_bytes", "occ_pct", "l2_hit_pct", "spill_bytes",
	"regs", "smem_bytes", "waves", "not_measured", "replay", NULL
};
static struct scan_keys scan_stage_keys = {
	scan_stage_keys_names, 0, { 0 }
};

static void scan_stage(struct scan *sc)
{
	struct scan_str s;
	unsigned long seen = 0;
	int hint = 0;
	int first = 1, k, named = 0;

	if (scan_peek(sc) != '{') {
		sc->fail = 1;
		return;
	}
	while (scan_member_key(sc, &first, &scan_stage_keys, &hint, &k)) {
		if (!scan_once(sc, &seen, k))
			return;
		switch (k) {
		case 0:
			if (scan_string(sc, &s))
				named = 1;
			break;
		case 1: case 2: scan_triple(sc); break;
		case 3: scan_get_long(sc, NULL, 0, 0); break;
		case 4: scan_stats(sc); break;
		case 14: scan_get_string(sc, NULL, 0); break;
		case 15:
			if (scan_null(sc))
				break;
			if (scan_string(sc, &s) &&
			    !(s.len == 6 && !memcmp(s.s, "kernel", 6)) &&
			    !(s.len == 6 && !memcmp(s.s, "launch", 6)))
				sc->fail = 1;
			break;
		case -1: scan_skip(sc, 4); break;
		default: scan_get_number(sc, NULL, 0); break;
		}
	}
	if (!named)
		sc->fail = 1;
}

static const char *const scan_opportunity_keys_names[] = {
	"name", "est_gain_pct", "trigger", "detail", NULL
};
static struct scan_keys scan_opportunity_keys = {
	scan_opportunity_keys_names, 0, { 0 }
};

static void scan_opportunity(struct scan *sc)
{
	struct scan_str s;
	unsigned long seen = 0;
	int hint = 0;
	int first = 1, k, named = 0;

	if (scan_peek(sc) != '{') {
		sc->fail = 1;
		return;
	}
	while (scan_member_key(sc, &first, &scan_opportunity_keys, &hint, &k)) {
		if (!scan_once(sc, &seen, k))
			return;
		if (k == 0) {
			if (scan_string(sc, &s))
				named = 1;
		} else if (k == 1) {
			scan_get_number(sc, NULL, 0);
		} else if (k > 1) {
			scan_get_string(sc, NULL, 0);
		} else {
			scan_skip(sc, 4);
		}
	}
	if (!named)
		sc->fail = 1;
}

/* kopt_metric_infos' names, as scan_key() takes them */
static const char *scan_metric_keys_names[KOPT_METRIC__NR + 1];
static struct scan_keys scan_metric_keys = {
	scan_metric_keys_names, 0, { 0 }
};

static void scan_metrics(struct scan *sc, struct kopt_results_entry *e)
{
	unsigned long seen = 0;
	int hint = 0;
	int first = 1, k;

	if (!scan_open(sc, '{', 0))
		return;
	while (scan_member_key(sc, &first, &scan_metric_keys, &hint, &k)) {
		/* not a canonical metric: an error, the full reader's */
		if (k < 0 || !scan_once(sc, &seen, k)) {
			sc->fail = 1;
			return;
		}
		scan_get_number(sc, &e->metrics[k], 0);
	}
}

static const char *const scan_entry_keys_names[] = {
	"trial", "config", "date", "tool_version", "tree", "replayed",
	"replay_source", "device", "stages", "metrics", "spread_pct",
	"bottleneck", "root_cause", "opportunities", NULL
};
static struct scan_keys scan_entry_keys = {
	scan_entry_keys_names, 0, { 0 }
};

static void scan_entry(struct scan *sc, struct kopt_results_entry *e)
{
	unsigned long seen = 0;
	int hint = 0;
	int first = 1, k, f2;

	if (scan_peek(sc) != '{') {
		sc->fail = 1;
		return;
	}
	while (scan_member_key(sc, &first, &scan_entry_keys, &hint, &k)) {
		if (!scan_once(sc, &seen, k))
			return;
		switch (k) {
		case 0:
			scan_get_string(sc, &e->trial, 0);
			if (e->trial && !kopt_valid_name(e->trial))
				sc->fail = 1;
			break;
		case 1: scan_config(sc, e); break;
		case 2: case 3: case 4: case 6: case 12:
			scan_get_string(sc, NULL, 0);
			break;
		case 5: scan_get_bool(sc, &e->replayed); break;
		case 7: scan_device(sc, &e->device); break;
		case 8:
			if (!scan_open(sc, '[', 0))
				break;
			f2 = 1;
			while (scan_element(sc, &f2))
				scan_stage(sc);
			break;
		case 9: scan_metrics(sc, e); break;
		case 10: scan_get_number(sc, &e->spread_pct, 0); break;
		case 11: scan_get_string(sc, &e->bottleneck, 0); break;
		case 13:
			if (!scan_open(sc, '[', 0))
				break;
			f2 = 1;
			while (scan_element(sc, &f2))
				scan_opportunity(sc);
			break;
		default:
			scan_skip(sc, 2);
			break;
		}
	}
	if (!(seen & 2))   /* config is required */
		sc->fail = 1;
}

static const char *const scan_top_keys_names[] = {
	"schema", "kernel", "version", "parent", "entries", NULL
};
static struct scan_keys scan_top_keys = {
	scan_top_keys_names, 0, { 0 }
};

static void scan_name(struct scan *sc, char **out, int required,
		      const char *want)
{
	scan_get_string(sc, out, required);
	if (!*out)
		return;
	if (!kopt_valid_name(*out) || (want && strcmp(*out, want)))
		sc->fail = 1;
}

static pthread_once_t scan_keys_once = PTHREAD_ONCE_INIT;

static void scan_keys_make(void)
{
	int k;

	for (k = 0; k < KOPT_METRIC__NR; k++)
		scan_metric_keys_names[k] = kopt_metric_infos[k].name;
	scan_keys_ready(&scan_metric_keys);
	scan_keys_ready(&scan_config_keys);
	scan_keys_ready(&scan_device_keys);
	scan_keys_ready(&scan_stats_keys);
	scan_keys_ready(&scan_stage_keys);
	scan_keys_ready(&scan_opportunity_keys);
	scan_keys_ready(&scan_entry_keys);
	scan_keys_ready(&scan_top_keys);
}

int kopt_results_scan(struct kopt_results *out, const char *data,
		      size_t len, const char *kernel, const char *version)
{
	struct scan sc = { data, data, data, 0 };
	unsigned long seen = 0;
	int hint = 0;
	double schema = NAN;
	size_t j;
	int first = 1, f2, k;

	kopt_results_release(out);
	pthread_once(&scan_keys_once, scan_keys_make);
	while (len && scan_class[(unsigned char)data[len - 1]] & SCAN_WS)
		len--;
	if (!len || data[len - 1] != '}')
		return KOPT_EINVALID;
	sc.last = data + len - 1;
	sc.end = data + len;
	while (scan_member_key(&sc, &first, &scan_top_keys, &hint, &k)) {
		if (!scan_once(&sc, &seen, k))
			break;
		switch (k) {
		case 0: scan_get_number(&sc, &schema, 1); break;
		case 1: scan_name(&sc, &out->kernel, 1, kernel); break;
		case 2: scan_name(&sc, &out->version, 1, version); break;
		case 3: scan_name(&sc, &out->parent, 0, NULL); break;
		case 4:
			if (!scan_open(&sc, '[', 1))
				break;
			f2 = 1;
			while (scan_element(&sc, &f2)) {
				struct kopt_results_entry *e;
				KOPT_ALLOC_GROW(out->entries,
						out->entries_nr + 1,
						out->entries_alloc);
				e = &out->entries[out->entries_nr++];
				kopt_results_entry_init(e);
				scan_entry(&sc, e);
				for (j = 0; !sc.fail && j + 1 < out->entries_nr;
				     j++)
					if (same_identity(&out->entries[j], e))
						sc.fail = 1;
			}
			break;
		default:
			scan_skip(&sc, 1);
			break;
		}
	}
	/* the object ends at the text's last '}' */
	if (sc.p != scan_past_end)
		sc.fail = 1;
	if (sc.fail || schema != KOPT_RESULTS_SCHEMA || !out->kernel ||
	    !out->version || !(seen & 16)) {
		kopt_results_release(out);
		return KOPT_EINVALID;
	}
	return 0;
}

int kopt_results_parse_view(struct kopt_results *out, const char *data,
			    size_t len, const char *label, const char *kernel,
			    const char *version)
{
	if (!kopt_results_scan(out, data, len, kernel, version))
		return 0;
	return kopt_results_parse(out, data, len, label, kernel, version);
}

/* ------------------------------------------------------------------ */
/* Writing */

static void add_num(cJSON *obj, const char *key, double v)
{
	if (kopt_results_has(v))
		cJSON_AddNumberToObject(obj, key, v);
}

static void add_str(cJSON *obj, const char *key, const char *s, int null)
{
	if (s)
		cJSON_AddStringToObject(obj, key, s);
	else if (null)
		cJSON_AddNullToObject(obj, key);
}

static void add_extra(cJSON *obj, const cJSON *extra)
{
	const cJSON *it;

	if (!extra)
		return;
	cJSON_ArrayForEach(it, extra)
		if (!cJSON_GetObjectItemCaseSensitive(obj, it->string))
			cJSON_AddItemToObject(obj, it->string,
					      cJSON_Duplicate(it, 1));
}

/* every value the reader takes (integers up to 2^53) is written back as is */
static cJSON *triple(const long v[3])
{
	cJSON *a = cJSON_CreateArray();
	int i;

	for (i = 0; i < 3; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
	return a;
}

static cJSON *entry_json(const struct kopt_results_entry *e)
{
	cJSON *o = cJSON_CreateObject(), *c, *d, *a;
	size_t i;
	int m;

	add_str(o, "trial", e->trial, 1);
	c = cJSON_AddObjectToObject(o, "config");
	cJSON_AddNumberToObject(c, "b", (double)e->b);
	cJSON_AddNumberToObject(c, "s", (double)e->s);
	cJSON_AddNumberToObject(c, "t", (double)e->t);
	cJSON_AddNumberToObject(c, "b_requested",
				(double)(e->b_requested ? e->b_requested : e->b));
	add_str(c, "dtype", e->dtype, 0);
	add_str(o, "date", e->date, 0);
	add_str(o, "tool_version", e->tool_version, 0);
	add_str(o, "tree", e->tree, 0);
	cJSON_AddBoolToObject(o, "replayed", e->replayed);
	add_str(o, "replay_source", e->replay_source, 1);

	if (e->device.name) {
		d = cJSON_AddObjectToObject(o, "device");
		add_str(d, "name", e->device.name, 0);
		add_str(d, "uuid", e->device.uuid, 0);
		add_str(d, "cc", e->device.cc, 0);
		if (e->device.sms)
			cJSON_AddNumberToObject(d, "sms", (double)e->device.sms);
		add_num(d, "sm_clock_mhz", e->device.sm_clock_mhz);
		add_num(d, "mem_clock_mhz", e->device.mem_clock_mhz);
		add_num(d, "peak_tflops", e->device.peak_tflops);
		add_num(d, "peak_gbps", e->device.peak_gbps);
		add_num(d, "measured_tflops", e->device.measured_tflops);
		add_num(d, "measured_gbps", e->device.measured_gbps);
		if (e->device.clocks_locked)
			cJSON_AddTrueToObject(d, "clocks_locked");
	}

	a = cJSON_AddArrayToObject(o, "stages");
	for (i = 0; i < e->stages_nr; i++) {
		const struct kopt_results_stage *st = &e->stages[i];
		cJSON *s = cJSON_CreateObject(), *du;
		cJSON_AddItemToArray(a, s);
		add_str(s, "name", st->name, 0);
		cJSON_AddItemToObject(s, "grid", triple(st->grid));
		cJSON_AddItemToObject(s, "block", triple(st->block));
		cJSON_AddNumberToObject(s, "launches", (double)st->launches);
		/* a stage with no duration has no duration_us (it needs one) */
		if (kopt_results_has(st->duration_us.median)) {
			du = cJSON_AddObjectToObject(s, "duration_us");
			add_num(du, "median", st->duration_us.median);
			add_num(du, "min", st->duration_us.min);
			add_num(du, "max", st->duration_us.max);
			add_num(du, "p10", st->duration_us.p10);
			add_num(du, "p90", st->duration_us.p90);
			cJSON_AddNumberToObject(du, "n",
						(double)st->duration_us.n);
		}
		add_num(s, "tc_pct", st->tc_pct);
		add_num(s, "dram_pct", st->dram_pct);
		add_num(s, "dram_bytes", st->dram_bytes);
		add_num(s, "occ_pct", st->occ_pct);
		add_num(s, "l2_hit_pct", st->l2_hit_pct);
		add_num(s, "spill_bytes", st->spill_bytes);
		add_num(s, "regs", st->regs);
		add_num(s, "smem_bytes", st->smem_bytes);
		add_num(s, "waves", st->waves);
		add_str(s, "not_measured", st->not_measured, 0);
		if (st->kernel_replay)
			cJSON_AddStringToObject(s, "replay", "kernel");
	}

	c = cJSON_AddObjectToObject(o, "metrics");
	for (m = 0; m < KOPT_METRIC__NR; m++)
		add_num(c, kopt_metric_infos[m].name, e->metrics[m]);
	add_num(o, "spread_pct", e->spread_pct);
	add_str(o, "bottleneck", e->bottleneck, 0);
	add_str(o, "root_cause", e->root_cause, 0);

	a = cJSON_AddArrayToObject(o, "opportunities");
	for (i = 0; i < e->opportunities_nr; i++) {
		const struct kopt_results_opportunity *op = &e->opportunities[i];
		cJSON *p = cJSON_CreateObject();
		cJSON_AddItemToArray(a, p);
		add_str(p, "name", op->name, 0);
		add_num(p, "est_gain_pct", op->est_gain_pct);
		add_str(p, "trigger", op->trigger, 0);
		add_str(p, "detail", op->detail, 0);
	}
	add_extra(o, e->extra);
	return o;
}

struct cJSON *kopt_results_to_json(const struct kopt_results *r)
{
	cJSON *root = cJSON_CreateObject(), *a;
	size_t i;

	cJSON_AddNumberToObject(root, "schema", KOPT_RESULTS_SCHEMA);
	add_str(root, "kernel", r->kernel, 1);
	add_str(root, "version", r->version, 1);
	add_str(root, "parent", r->parent, 1);
	a = cJSON_AddArrayToObject(root, "entries");
	for (i = 0; i < r->entries_nr; i++)
		cJSON_AddItemToArray(a, entry_json(&r->entries[i]));
	add_extra(root, r->extra);
	return root;
}

void kopt_results_format(struct kopt_buf *out, const struct kopt_results *r)
{
	cJSON *root = kopt_results_to_json(r);
	char *text;

	text = cJSON_Print(root);
	kopt_buf_addstr(out, text);
	kopt_buf_addch(out, '\n');
	cJSON_free(text);
	cJSON_Delete(root);
}

int kopt_results_write(const struct kopt_results *r, const char *path)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	int ret;

	kopt_results_format(&sb, r);
	ret = kopt_write_file_atomic(path, sb.buf, sb.len, 0644);
	kopt_buf_release(&sb);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Lookups and edits */

static int matches_b(const struct kopt_results_entry *e, long b)
{
	return e->b == b || e->b_requested == b;
}

struct kopt_results_entry *kopt_results_find(const struct kopt_results *r,
					     const char *trial, long b,
					     long s, long t)
{
	size_t i;

	for (i = 0; i < r->entries_nr; i++) {
		struct kopt_results_entry *e = &r->entries[i];
		if (same_trial(e->trial, trial) && e->b_requested == b &&
		    e->s == s && e->t == t)
			return e;
	}
	for (i = 0; i < r->entries_nr; i++) {
		struct kopt_results_entry *e = &r->entries[i];
		if (same_trial(e->trial, trial) && matches_b(e, b) &&
		    e->s == s && e->t == t)
			return e;
	}
	return NULL;
}

struct kopt_results_entry *
kopt_results_find_trial(const struct kopt_results *r, const char *trial)
{
	size_t i;

	for (i = 0; i < r->entries_nr; i++)
		if (r->entries[i].trial && !strcmp(r->entries[i].trial, trial))
			return &r->entries[i];
	return NULL;
}

struct kopt_results_entry *
kopt_results_find_config(const struct kopt_results *r, long b, long s,
			 long t)
{
	size_t i;

	for (i = 0; i < r->entries_nr; i++) {
		struct kopt_results_entry *e = &r->entries[i];
		if (e->b_requested == b && e->s == s && e->t == t)
			return e;
	}
	for (i = 0; i < r->entries_nr; i++) {
		struct kopt_results_entry *e = &r->entries[i];
		if (matches_b(e, b) && e->s == s && e->t == t)
			return e;
	}
	return NULL;
}

/* The name without case, spaces, punctuation and a leading "nvidia". */
static void device_key(struct kopt_buf *out, const char *name)
{
	const char *p;

	for (p = name; *p; p++)
		if (isalnum((unsigned char)*p))
			kopt_buf_addch(out, (char)tolower((unsigned char)*p));
	if (kopt_starts_with(out->buf, "nvidia") && out->len > 6) {
		memmove(out->buf, out->buf + 6, out->len - 6 + 1);
		out->len -= 6;
	}
}

/*
 * device_key() in out[64] when it fits there: 1 with its start and
 * length; 0 when it does not fit (no allocation for the usual names).
 */
static int device_key_small(char out[64], const char *name,
			    const char **key, size_t *len)
{
	const char *p;
	size_t n = 0;

	for (p = name; *p; p++)
		if (isalnum((unsigned char)*p)) {
			if (n == 64)
				return 0;
			out[n++] = (char)tolower((unsigned char)*p);
		}
	*key = out;
	*len = n;
	if (n > 6 && !memcmp(out, "nvidia", 6)) {
		*key += 6;
		*len -= 6;
	}
	return 1;
}

int kopt_results_same_device(const char *a, const char *b)
{
	struct kopt_buf ka = KOPT_BUF_INIT, kb = KOPT_BUF_INIT;
	char sa[64], sb[64];
	const char *pa, *pb;
	size_t la, lb;
	int same;

	if (!a || !b || !*a || !*b)
		return 1;
	/* the key is made from the name: one name, one key */
	if (kopt_str_eq(a, b))
		return 1;
	if (device_key_small(sa, a, &pa, &la) &&
	    device_key_small(sb, b, &pb, &lb))
		return la == lb && !memcmp(pa, pb, la);
	device_key(&ka, a);
	device_key(&kb, b);
	same = !strcmp(ka.buf, kb.buf);
	kopt_buf_release(&ka);
	kopt_buf_release(&kb);
	return same;
}

int kopt_results_same_entry_device(const struct kopt_results_device *a,
				   const struct kopt_results_device *b)
{
	if (a->uuid && b->uuid && *a->uuid && *b->uuid)
		return !strcmp(a->uuid, b->uuid);
	return kopt_results_same_device(a->name, b->name);
}

struct kopt_results_entry *
kopt_results_find_like(const struct kopt_results *r,
		       const struct kopt_results_entry *like)
{
	size_t i;
	int pass;

	/* as asked, then as run (b halved on out-of-memory) */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < r->entries_nr; i++) {
			struct kopt_results_entry *e = &r->entries[i];
			if (same_trial(e->trial, like->trial) &&
			    (pass ? matches_b(e, like->b_requested) :
			     e->b_requested == like->b_requested) &&
			    e->s == like->s && e->t == like->t &&
			    kopt_results_same_entry_device(&e->device,
							   &like->device))
				return e;
		}
	return NULL;
}

void kopt_results_device_label(struct kopt_buf *out,
			       const struct kopt_results_device *d)
{
	if (d->name && *d->name)
		kopt_buf_addstr(out, d->name);
	else
		kopt_buf_addstr(out, "an unnamed device");
	if (d->uuid && *d->uuid)
		kopt_buf_addf(out, " (%s)", d->uuid);
}

const struct kopt_results_entry *
kopt_results_find_elsewhere(const struct kopt_results *r,
			    const struct kopt_results_entry *like)
{
	size_t i;

	for (i = 0; i < r->entries_nr; i++) {
		const struct kopt_results_entry *e = &r->entries[i];
		if (same_trial(e->trial, like->trial) &&
		    (e->b_requested == like->b_requested ||
		     matches_b(e, like->b_requested)) &&
		    e->s == like->s && e->t == like->t &&
		    !kopt_results_same_entry_device(&e->device, &like->device))
			return e;
	}
	return NULL;
}

void kopt_results_put(struct kopt_results *r, struct kopt_results_entry *e)
{
	size_t i;

	if (!e->b_requested)
		e->b_requested = e->b;
	for (i = 0; i < r->entries_nr; i++)
		if (same_identity(&r->entries[i], e))
			break;
	if (i < r->entries_nr) {
		kopt_results_entry_release(&r->entries[i]);
	} else {
		KOPT_ALLOC_GROW(r->entries, r->entries_nr + 1,
				r->entries_alloc);
		r->entries_nr++;
	}
	r->entries[i] = *e;
	kopt_results_entry_init(e);
}

static char *dup_or_null(const char *s)
{
	return s ? kopt_strdup(s) : NULL;
}

void kopt_results_entry_copy(struct kopt_results_entry *out,
			     const struct kopt_results_entry *src)
{
	size_t i;

	*out = *src;
	out->trial = dup_or_null(src->trial);
	out->dtype = dup_or_null(src->dtype);
	out->date = dup_or_null(src->date);
	out->tool_version = dup_or_null(src->tool_version);
	out->tree = dup_or_null(src->tree);
	out->replay_source = dup_or_null(src->replay_source);
	out->device.name = dup_or_null(src->device.name);
	out->device.uuid = dup_or_null(src->device.uuid);
	out->device.cc = dup_or_null(src->device.cc);
	out->bottleneck = dup_or_null(src->bottleneck);
	out->root_cause = dup_or_null(src->root_cause);
	out->stages = NULL;
	out->stages_alloc = 0;
	if (src->stages_nr) {
		out->stages = kopt_calloc(src->stages_nr, sizeof(*out->stages));
		out->stages_alloc = src->stages_nr;
		for (i = 0; i < src->stages_nr; i++) {
			out->stages[i] = src->stages[i];
			out->stages[i].name = dup_or_null(src->stages[i].name);
			out->stages[i].not_measured =
				dup_or_null(src->stages[i].not_measured);
		}
	}
	out->opportunities = NULL;
	out->opportunities_alloc = 0;
	if (src->opportunities_nr) {
		out->opportunities = kopt_calloc(src->opportunities_nr,
						 sizeof(*out->opportunities));
		out->opportunities_alloc = src->opportunities_nr;
		for (i = 0; i < src->opportunities_nr; i++) {
			const struct kopt_results_opportunity *o =
				&src->opportunities[i];
			out->opportunities[i].name = dup_or_null(o->name);
			out->opportunities[i].est_gain_pct = o->est_gain_pct;
			out->opportunities[i].trigger = dup_or_null(o->trigger);
			out->opportunities[i].detail = dup_or_null(o->detail);
		}
	}
	out->extra = src->extra ? cJSON_Duplicate(src->extra, 1) : NULL;
}

int kopt_results_metric(const struct kopt_results_entry *e, const char *name,
			double *out)
{
	int m = kopt_metric_from_name(name);

	if (m < 0)
		return KOPT_EINVALID;
	if (!kopt_results_has(e->metrics[m]))
		return KOPT_ENOTFOUND;
	*out = e->metrics[m];
	return 0;
}

int kopt_results_expr_lookup(void *data, const char *name, double *out)
{
	return kopt_results_metric(data, name, out) ? KOPT_ENOTFOUND : 0;
}

const struct kopt_results_stage *
kopt_results_dominant_stage(const struct kopt_results_entry *e)
{
	const struct kopt_results_stage *best = NULL;
	size_t i;

	for (i = 0; i < e->stages_nr; i++) {
		const struct kopt_results_stage *st = &e->stages[i];
		if (!kopt_results_has(st->duration_us.median))
			continue;
		if (!best || st->duration_us.median > best->duration_us.median)
			best = st;
	}
	return best;
}

static void fill(double *dst, double v)
{
	if (!kopt_results_has(*dst))
		*dst = v;
}

void kopt_results_derive_metrics(struct kopt_results_entry *e)
{
	const struct kopt_results_stage *dom = kopt_results_dominant_stage(e);
	double sum = 0;
	size_t i;

	if (!dom)
		return;
	for (i = 0; i < e->stages_nr; i++)
		if (kopt_results_has(e->stages[i].duration_us.median))
			sum += e->stages[i].duration_us.median;
	fill(&e->metrics[KOPT_METRIC_DURATION_US], sum);
	fill(&e->metrics[KOPT_METRIC_TC_PCT], dom->tc_pct);
	fill(&e->metrics[KOPT_METRIC_DRAM_PCT], dom->dram_pct);
	fill(&e->metrics[KOPT_METRIC_OCC_PCT], dom->occ_pct);
	/* kernel replay's L2 hit rate is not the program's: no trigger */
	if (!dom->kernel_replay)
		fill(&e->metrics[KOPT_METRIC_L2_HIT_PCT], dom->l2_hit_pct);
	fill(&e->metrics[KOPT_METRIC_SPILL_BYTES], dom->spill_bytes);
	fill(&e->metrics[KOPT_METRIC_REGS], dom->regs);
	fill(&e->metrics[KOPT_METRIC_WAVES], dom->waves);
	if (kopt_results_has(dom->duration_us.p10) &&
	    kopt_results_has(dom->duration_us.p90) &&
	    dom->duration_us.median > 0)
		fill(&e->spread_pct, (dom->duration_us.p90 -
				      dom->duration_us.p10) /
				     dom->duration_us.median * 100.0);
}

void kopt_results_describe_entry(struct kopt_buf *out,
				 const struct kopt_results_entry *e)
{
	if (e->trial)
		kopt_buf_addf(out, "%s (b=%ld, s=%ld, t=%ld)", e->trial, e->b,
			      e->s, e->t);
	else
		kopt_buf_addf(out, "b=%ld, s=%ld, t=%ld", e->b, e->s, e->t);
}

/* ------------------------------------------------------------------ */
/* Summary */

void kopt_results_summary(struct kopt_buf *out, const struct kopt_results *r)
{
	size_t i;
	int m;

	kopt_cache_add_str(out, "R");
	kopt_cache_add_str(out, r->kernel);
	kopt_cache_add_str(out, r->version);
	kopt_cache_add_str(out, r->parent);
	kopt_cache_add_num(out, (double)r->entries_nr);
	kopt_buf_addch(out, '\n');
	for (i = 0; i < r->entries_nr; i++) {
		const struct kopt_results_entry *e = &r->entries[i];
		kopt_cache_add_str(out, "E");
		kopt_cache_add_str(out, e->trial);
		kopt_cache_add_num(out, (double)e->b);
		kopt_cache_add_num(out, (double)e->s);
		kopt_cache_add_num(out, (double)e->t);
		kopt_cache_add_num(out, (double)e->b_requested);
		kopt_cache_add_num(out, e->replayed);
		kopt_cache_add_num(out, e->spread_pct);
		kopt_cache_add_str(out, e->device.name);
		kopt_cache_add_str(out, e->bottleneck);
		kopt_cache_add_str(out, e->dtype);
		kopt_cache_add_str(out, e->device.uuid);
		kopt_cache_add_num(out, e->from_devlog);
		for (m = 0; m < KOPT_METRIC__NR; m++)
			kopt_cache_add_num(out, e->metrics[m]);
		kopt_buf_addch(out, '\n');
	}
}

static char *dup_field(const char *f)
{
	return f ? kopt_strdup(f) : NULL;
}

/* A whole number of a summary line; -1 when it is none (damaged text). */
/* A whole number of the summary: what the readers of a file take. */
static int summary_long(const char *f, long *out)
{
	return kopt_cache_whole(f, 0, KOPT_CACHE_WHOLE_MAX, out);
}

/* A whole number as summary_long() reads it back after the summary. */
static int slim_long(long v)
{
	return kopt_cache_whole_ok((double)v, 0, KOPT_CACHE_WHOLE_MAX);
}

/* A number as it reads back: every NAN is the same one. */
static double slim_num(double v)
{
	return isnan(v) ? NAN : v;
}

int kopt_results_slim_ok(const struct kopt_results *r)
{
	size_t i;

	if (!r->kernel || !r->version)
		return 1;
	for (i = 0; i < r->entries_nr; i++) {
		const struct kopt_results_entry *e = &r->entries[i];
		if (!slim_long(e->b) || !slim_long(e->s) || !slim_long(e->t) ||
		    !slim_long(e->b_requested))
			return 0;
	}
	return 1;
}

int kopt_results_slim(struct kopt_results *r)
{
	struct kopt_results out = KOPT_RESULTS_INIT;
	size_t i;
	int m;

	if (!kopt_results_slim_ok(r))
		return -1;
	if (!r->kernel || !r->version) {
		/* no summary at all: nothing reads back */
		kopt_results_release(r);
		*r = out;
		return 0;
	}
	out.kernel = r->kernel;
	out.version = r->version;
	out.parent = r->parent;
	r->kernel = r->version = r->parent = NULL;
	if (r->entries_nr)
		out.entries = kopt_calloc(r->entries_nr, sizeof(*out.entries));
	out.entries_alloc = r->entries_nr;
	for (i = 0; i < r->entries_nr; i++) {
		struct kopt_results_entry *e = &r->entries[i];
		struct kopt_results_entry *n = &out.entries[out.entries_nr++];
		kopt_results_entry_init(n);
		n->trial = e->trial;
		n->b = e->b;
		n->s = e->s;
		n->t = e->t;
		n->b_requested = e->b_requested;
		n->replayed = e->replayed != 0;
		n->spread_pct = slim_num(e->spread_pct);
		n->device.name = e->device.name;
		n->bottleneck = e->bottleneck;
		n->dtype = e->dtype;
		n->device.uuid = e->device.uuid;
		n->from_devlog = e->from_devlog != 0;
		for (m = 0; m < KOPT_METRIC__NR; m++)
			n->metrics[m] = slim_num(e->metrics[m]);
		e->trial = e->device.name = e->bottleneck = e->dtype = NULL;
		e->device.uuid = NULL;
	}
	kopt_results_release(r);
	*r = out;
	return 0;
}

int kopt_results_from_summary(struct kopt_results *out, const char *data,
			      size_t len)
{
	char *text = kopt_strndup(data, len), *f[13 + KOPT_METRIC__NR];
	size_t pos = 0, n, i;
	long count;
	int m;

	kopt_results_release(out);
	if (kopt_cache_split(text, len, &pos, f, 5) != 5 || !f[0] ||
	    strcmp(f[0], "R") || !f[1] || !f[2])
		goto bad;
	out->kernel = kopt_strdup(f[1]);
	out->version = kopt_strdup(f[2]);
	out->parent = dup_field(f[3]);
	if (summary_long(f[4], &count))
		goto bad;
	n = (size_t)count;
	for (i = 0; i < n; i++) {
		struct kopt_results_entry *e;
		if (kopt_cache_split(text, len, &pos, f, 13 + KOPT_METRIC__NR)
		    != 13 + KOPT_METRIC__NR || !f[0] || strcmp(f[0], "E"))
			goto bad;
		KOPT_ALLOC_GROW(out->entries, out->entries_nr + 1,
				out->entries_alloc);
		e = &out->entries[out->entries_nr++];
		kopt_results_entry_init(e);
		e->trial = dup_field(f[1]);
		if (summary_long(f[2], &e->b) || summary_long(f[3], &e->s) ||
		    summary_long(f[4], &e->t) ||
		    summary_long(f[5], &e->b_requested))
			goto bad;
		e->replayed = kopt_cache_num(f[6]) != 0;
		e->spread_pct = kopt_cache_num(f[7]);
		e->device.name = dup_field(f[8]);
		e->bottleneck = dup_field(f[9]);
		e->dtype = dup_field(f[10]);
		e->device.uuid = dup_field(f[11]);
		e->from_devlog = kopt_cache_num(f[12]) != 0;
		for (m = 0; m < KOPT_METRIC__NR; m++)
			e->metrics[m] = kopt_cache_num(f[13 + m]);
	}
	free(text);
	return 0;
bad:
	free(text);
	kopt_results_release(out);
	return KOPT_EINVALID;
}

int kopt_results_several_devices(const struct kopt_results *r)
{
	size_t i;

	for (i = 1; i < r->entries_nr; i++)
		if (!kopt_results_same_device(r->entries[0].device.name,
					      r->entries[i].device.name))
			return 1;
	return 0;
}
