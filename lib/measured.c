#include "measured.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "error.h"
#include "banned.h"

static char *str_or_null(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) && v->valuestring ?
	       kopt_strdup(v->valuestring) : NULL;
}

static int read_entry(struct kopt_measured_entry *e, const cJSON *j,
		      const char *label, int index)
{
	const cJSON *config = cJSON_GetObjectItemCaseSensitive(j, "config");
	const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(j, "metrics");
	const cJSON *device = cJSON_GetObjectItemCaseSensitive(j, "device");
	const cJSON *stages = cJSON_GetObjectItemCaseSensitive(j, "stages");
	const cJSON *v, *m;
	const char *bst[] = { "b", "s", "t" };
	long *bstv[] = { &e->b, &e->s, &e->t };
	size_t i;

	memset(e, 0, sizeof(*e));
	if (!cJSON_IsObject(j) || !cJSON_IsObject(config))
		return kopt_error("%s: entry %d has no 'config'", label, index);
	e->trial = str_or_null(j, "trial");
	for (i = 0; i < 3; i++) {
		v = cJSON_GetObjectItemCaseSensitive(config, bst[i]);
		if (!cJSON_IsNumber(v))
			return kopt_error("%s: entry %d: config.%s is not a "
					  "number", label, index, bst[i]);
		*bstv[i] = (long)v->valuedouble;
		kopt_metrics_set(&e->metrics, bst[i], v->valuedouble);
	}
	cJSON_ArrayForEach(m, metrics) {
		if (!m->string || !cJSON_IsNumber(m) ||
		    !isfinite(m->valuedouble))
			continue; /* null: not measured */
		if (kopt_metric_parse(m->string) >= KOPT_METRIC_B)
			continue;
		kopt_metrics_set(&e->metrics, m->string, m->valuedouble);
	}
	e->bottleneck = str_or_null(j, "bottleneck");
	e->root_cause = str_or_null(j, "root_cause");
	v = cJSON_GetObjectItemCaseSensitive(j, "replayed");
	e->replayed = cJSON_IsTrue(v);
	if (cJSON_IsObject(device)) {
		char *cc = str_or_null(device, "cc");
		e->device = str_or_null(device, "name");
		if (cc) {
			char *dot = strchr(cc, '.');
			e->cc_major = atoi(cc);
			e->cc_minor = dot ? atoi(dot + 1) : 0;
			free(cc);
		}
	}
	/* the dominant stage: the one with the largest median duration */
	if (cJSON_IsArray(stages)) {
		double best = -1;
		const cJSON *st;
		cJSON_ArrayForEach(st, stages) {
			const cJSON *d = cJSON_GetObjectItemCaseSensitive(
				st, "duration_us");
			const cJSON *med = cJSON_GetObjectItemCaseSensitive(
				d, "median");
			const cJSON *blk = cJSON_GetObjectItemCaseSensitive(
				st, "block");
			double dur = cJSON_IsNumber(med) ? med->valuedouble :
				     cJSON_IsNumber(d) ? d->valuedouble : 0;
			int threads = 1, k = 0;
			const cJSON *x;
			if (dur <= best)
				continue;
			best = dur;
			cJSON_ArrayForEach(x, blk) {
				if (cJSON_IsNumber(x) && k++ < 3)
					threads *= (int)x->valuedouble;
			}
			e->threads = k ? threads : 0;
		}
	}
	return 0;
}

int kopt_measured_parse(struct kopt_measured *out, const char *text,
			size_t len, const char *label)
{
	cJSON *root = cJSON_ParseWithLength(text, len);
	const cJSON *schema, *entries, *j;
	int ret = 0, i = 0;

	memset(out, 0, sizeof(*out));
	if (!root)
		return kopt_error("%s: not valid JSON", label);
	schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
	if (!cJSON_IsNumber(schema) || schema->valuedouble != 1) {
		ret = kopt_error("%s: unsupported results schema (expected "
				 "1)", label);
		goto done;
	}
	out->kernel = str_or_null(root, "kernel");
	out->version = str_or_null(root, "version");
	out->parent = str_or_null(root, "parent");
	entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
	if (!cJSON_IsArray(entries)) {
		ret = kopt_error("%s: no 'entries' array", label);
		goto done;
	}
	cJSON_ArrayForEach(j, entries) {
		KOPT_ALLOC_GROW(out->entries, out->entries_nr + 1,
				out->entries_alloc);
		ret = read_entry(&out->entries[out->entries_nr], j, label, i++);
		out->entries_nr++;
		if (ret)
			break;
	}
done:
	cJSON_Delete(root);
	if (ret) {
		kopt_measured_release(out);
		return KOPT_EINVALID;
	}
	return 0;
}

void kopt_measured_release(struct kopt_measured *m)
{
	size_t i;

	for (i = 0; i < m->entries_nr; i++) {
		free(m->entries[i].trial);
		free(m->entries[i].bottleneck);
		free(m->entries[i].root_cause);
		free(m->entries[i].device);
	}
	free(m->entries);
	free(m->kernel);
	free(m->version);
	free(m->parent);
	memset(m, 0, sizeof(*m));
}

void kopt_measured_entry_name(struct kopt_buf *out,
			      const struct kopt_measured_entry *e)
{
	if (e->trial)
		kopt_buf_addf(out, "%s (b=%ld, s=%ld, t=%ld)", e->trial, e->b,
			      e->s, e->t);
	else
		kopt_buf_addf(out, "b=%ld, s=%ld, t=%ld", e->b, e->s, e->t);
}

const struct kopt_measured_entry *
kopt_measured_match(const struct kopt_measured *m,
		    const struct kopt_measured_entry *e)
{
	size_t i;

	for (i = 0; i < m->entries_nr; i++) {
		const struct kopt_measured_entry *x = &m->entries[i];
		if ((!x->trial) != (!e->trial) ||
		    (x->trial && strcmp(x->trial, e->trial)))
			continue;
		if (x->b == e->b && x->s == e->s && x->t == e->t)
			return x;
	}
	return NULL;
}

char *kopt_results_path(const char *kernel, const char *version)
{
	return kopt_xstrfmt("docs/kernels/%s/results/%s.json", kernel,
			    version);
}
