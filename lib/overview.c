#include "overview.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "error.h"
#include "parallel.h"
#include "banned.h"

void kopt_overview_from_analysis(struct kopt_overview *out,
				 const struct kopt_analysis *a,
				 const struct kopt_kernel *k,
				 const struct kopt_config *cfg)
{
	const struct kopt_results **all;
	size_t i, n = 0;

	out->kernel = kopt_strdup(k->name);
	out->versions = kopt_calloc(a->versions_nr + 1,
				    sizeof(*out->versions));
	out->versions_nr = a->versions_nr;
	for (i = 0; i < a->versions_nr; i++) {
		const struct kopt_analysis_version *v = &a->versions[i];
		struct kopt_overview_version *o = &out->versions[i];
		o->name = kopt_strdup(v->name);
		o->has_results = v->has_results;
		o->source = v->source;
		o->disagree = v->disagree.nr;
		if (v->has_results && v->parent >= 0 &&
		    a->versions[v->parent].has_results) {
			struct kopt_verdicts vd = KOPT_VERDICTS_INIT;
			kopt_verdict_compare(&vd,
					     &a->versions[v->parent].results,
					     &v->results, a->noise_pct);
			o->verdict = vd.overall;
			kopt_verdicts_release(&vd);
		}
	}
	out->best_nr = cfg->trials_nr;
	out->best = kopt_calloc(cfg->trials_nr + 1, sizeof(*out->best));
	for (i = 0; i < cfg->trials_nr; i++) {
		const struct kopt_analysis_version *bv;
		const struct kopt_results_entry *e =
			kopt_analysis_best(a, cfg->trials[i].name, &bv);
		if (!e)
			continue;
		out->best[i].version = kopt_strdup(bv->name);
		out->best[i].duration_us = e->metrics[KOPT_METRIC_DURATION_US];
		out->best[i].source = kopt_numbers_entry_source(e);
	}
	all = kopt_analysis_numbers(a, &n);
	out->numbers_nr = n;
	out->targets_nr = k->targets_nr;
	out->targets = kopt_calloc(k->targets_nr + 1, sizeof(*out->targets));
	for (i = 0; i < k->targets_nr; i++) {
		struct kopt_overview_target *t = &out->targets[i];
		struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;
		int ret;
		kopt_error_catch(&caught);
		ret = kopt_target_evaluate(&t->res, cfg, &k->targets[i], all,
					   n);
		kopt_error_uncatch(&caught);
		if (ret) {
			t->problem = kopt_buf_detach(&caught.cause, NULL);
		} else if (t->res.version) {
			t->version = kopt_strdup(t->res.version);
			t->res.version = t->version;
		}
		t->res.target = &k->targets[i];
		kopt_error_catch_release(&caught);
	}
	free(all);
	kopt_obligations_regressions(a, &out->regressions,
				     &out->regressions_nr);
}

void kopt_overview_release(struct kopt_overview *ov)
{
	size_t i;

	free(ov->kernel);
	for (i = 0; i < ov->versions_nr; i++)
		free(ov->versions[i].name);
	free(ov->versions);
	for (i = 0; i < ov->best_nr; i++)
		free(ov->best[i].version);
	free(ov->best);
	for (i = 0; i < ov->targets_nr; i++) {
		free(ov->targets[i].problem);
		free(ov->targets[i].version);
	}
	free(ov->targets);
	kopt_obligations_free(ov->regressions, ov->regressions_nr);
	memset(ov, 0, sizeof(*ov));
}

/* "\t<n>": a count or a code of the text's lines (none is negative) */
static void add_field(struct kopt_buf *out, intmax_t n)
{
	kopt_buf_addch(out, '\t');
	kopt_buf_add_int(out, n);
}

void kopt_overview_text(struct kopt_buf *out, const struct kopt_overview *ov)
{
	size_t i;

	kopt_cache_add_str(out, "O1");
	kopt_cache_add_str(out, ov->kernel);
	add_field(out, ov->versions_nr);
	add_field(out, ov->numbers_nr);
	add_field(out, ov->best_nr);
	add_field(out, ov->targets_nr);
	add_field(out, ov->regressions_nr);
	kopt_buf_addch(out, '\n');
	for (i = 0; i < ov->versions_nr; i++) {
		const struct kopt_overview_version *v = &ov->versions[i];
		kopt_cache_add_str(out, "v");
		kopt_cache_add_str(out, v->name);
		add_field(out, v->has_results ? 1 : 0);
		add_field(out, (int)v->source);
		add_field(out, v->disagree);
		add_field(out, (int)v->verdict);
		kopt_buf_addch(out, '\n');
	}
	for (i = 0; i < ov->best_nr; i++) {
		const struct kopt_overview_best *b = &ov->best[i];
		kopt_cache_add_str(out, "b");
		kopt_cache_add_str(out, b->version);
		kopt_cache_add_num(out, b->duration_us);
		add_field(out, (int)b->source);
		kopt_buf_addch(out, '\n');
	}
	for (i = 0; i < ov->targets_nr; i++) {
		const struct kopt_overview_target *t = &ov->targets[i];
		kopt_cache_add_str(out, "t");
		kopt_cache_add_str(out, t->problem);
		kopt_buf_addf(out, "\t%d\t%d\t%d\t%d", t->res.met ? 1 : 0,
			      t->res.measured ? 1 : 0,
			      t->res.replayed ? 1 : 0, (int)t->res.source);
		kopt_cache_add_str(out, t->version);
		kopt_cache_add_str(out, t->res.metric);
		kopt_cache_add_num(out, t->res.value);
		kopt_cache_add_num(out, t->res.bound);
		kopt_buf_addch(out, '\n');
	}
	for (i = 0; i < ov->regressions_nr; i++) {
		const struct kopt_obligation *o = &ov->regressions[i];
		kopt_cache_add_str(out, "r");
		kopt_cache_add_str(out, o->version);
		kopt_cache_add_str(out, o->parent);
		kopt_cache_add_str(out, o->trial);
		kopt_cache_add_num(out, o->change_pct);
		kopt_buf_addch(out, '\n');
	}
}

/* A whole number of a field, at most `max`; -1 when it is none. */
static int whole(const char *f, size_t max, size_t *out)
{
	char *end;
	unsigned long long v;

	if (!f || *f < '0' || *f > '9')
		return -1;
	errno = 0;
	v = strtoull(f, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = (size_t)v;
	return 0;
}

/* A line of `nr` fields starting with `tag`, into f; -1 when it is not. */
static int line(char *text, size_t len, size_t *pos, char **f, int nr,
		const char *tag)
{
	if (kopt_cache_split(text, len, pos, f, nr) != nr || !f[0] ||
	    strcmp(f[0], tag))
		return -1;
	return 0;
}

int kopt_overview_from_text(struct kopt_overview *out, char *text,
			    size_t len, const struct kopt_kernel *k,
			    const struct kopt_config *cfg)
{
	char *f[10];
	size_t pos = 0, i, n[5];
	size_t verdict = 0, source = 0, flag[3];

	if (line(text, len, &pos, f, 7, "O1") || !f[1] ||
	    strcmp(f[1], k->name))
		return KOPT_EINVALID;
	for (i = 0; i < 5; i++)
		if (whole(f[2 + i], len, &n[i]))
			return KOPT_EINVALID;
	if (n[2] != cfg->trials_nr || n[3] != k->targets_nr)
		return KOPT_EINVALID;
	out->kernel = kopt_strdup(k->name);
	out->numbers_nr = n[1];
	out->versions = kopt_calloc(n[0] + 1, sizeof(*out->versions));
	out->best = kopt_calloc(n[2] + 1, sizeof(*out->best));
	out->targets = kopt_calloc(n[3] + 1, sizeof(*out->targets));
	out->regressions = kopt_calloc(n[4] + 1, sizeof(*out->regressions));
	for (i = 0; i < n[0]; i++) {
		struct kopt_overview_version *v = &out->versions[i];
		if (line(text, len, &pos, f, 6, "v") || !f[1] ||
		    whole(f[2], 1, &flag[0]) ||
		    whole(f[3], KOPT_NUMBERS_DEVLOG, &source) ||
		    whole(f[4], len, &v->disagree) ||
		    whole(f[5], KOPT_VERDICT_REGRESSION, &verdict))
			return KOPT_EINVALID;
		v->name = kopt_strdup(f[1]);
		v->has_results = (int)flag[0];
		v->source = (enum kopt_numbers_source)source;
		v->verdict = (enum kopt_verdict)verdict;
		out->versions_nr++;
	}
	for (i = 0; i < n[2]; i++) {
		struct kopt_overview_best *b = &out->best[i];
		out->best_nr++;
		if (line(text, len, &pos, f, 4, "b") ||
		    whole(f[3], KOPT_NUMBERS_DEVLOG, &source))
			return KOPT_EINVALID;
		b->version = f[1] ? kopt_strdup(f[1]) : NULL;
		b->duration_us = kopt_cache_num(f[2]);
		b->source = (enum kopt_numbers_source)source;
	}
	for (i = 0; i < n[3]; i++) {
		struct kopt_overview_target *t = &out->targets[i];
		out->targets_nr++;
		if (line(text, len, &pos, f, 10, "t") ||
		    whole(f[2], 1, &flag[0]) || whole(f[3], 1, &flag[1]) ||
		    whole(f[4], 1, &flag[2]) ||
		    whole(f[5], KOPT_NUMBERS_DEVLOG, &source) ||
		    (f[7] && strlen(f[7]) >= sizeof(t->res.metric)))
			return KOPT_EINVALID;
		t->res.target = &k->targets[i];
		t->problem = f[1] ? kopt_strdup(f[1]) : NULL;
		t->res.met = (int)flag[0];
		t->res.measured = (int)flag[1];
		t->res.replayed = (int)flag[2];
		t->res.source = (enum kopt_numbers_source)source;
		t->version = f[6] ? kopt_strdup(f[6]) : NULL;
		t->res.version = t->version;
		if (f[7])
			memcpy(t->res.metric, f[7], strlen(f[7]) + 1);
		t->res.value = kopt_cache_num(f[8]);
		t->res.bound = kopt_cache_num(f[9]);
	}
	for (i = 0; i < n[4]; i++) {
		struct kopt_obligation *o = &out->regressions[i];
		if (line(text, len, &pos, f, 5, "r") || !f[1] || !f[2] ||
		    !f[3])
			return KOPT_EINVALID;
		o->kernel = kopt_strdup(k->name);
		o->version = kopt_strdup(f[1]);
		o->parent = kopt_strdup(f[2]);
		o->trial = kopt_strdup(f[3]);
		o->change_pct = kopt_cache_num(f[4]);
		out->regressions_nr++;
	}
	return pos == len ? 0 : KOPT_EINVALID;
}

/* The overview's key from the analysis's `id`: it, and the targets as written. */
static void overview_key(git_oid *out, const git_oid *id,
			 const struct kopt_kernel *k)
{
	struct kopt_buf in = KOPT_BUF_INIT;
	size_t i;

	kopt_buf_addf(&in, "kopt overview 1\nanalysis %s\n",
		      git_oid_tostr_s(id));
	for (i = 0; i < k->targets_nr; i++) {
		kopt_buf_addstr(&in, "target");
		kopt_cache_add_str(&in, k->targets[i].text);
		kopt_buf_addch(&in, '\n');
	}
	kopt_cache_key(out, &in);
	kopt_buf_release(&in);
}

int kopt_overview_load(struct kopt_overview *out,
		       const struct kopt_source *src,
		       const struct kopt_kernel *k,
		       const struct kopt_config *cfg)
{
	struct kopt_analysis a = KOPT_ANALYSIS_INIT;
	struct kopt_buf text = KOPT_BUF_INIT;
	git_oid akey, key, after;
	int akeyed, keyed, after_keyed, fresh;
	int ret;

	/*
	 * Neither entry there (a first run, a fresh clone): no key is
	 * taken before reading, which would stat every input once more
	 * and hash the racily clean ones twice; the overview is stored
	 * under the key of what was read, and the analysis is left to the
	 * views that read it (a file made per kernel is the cold run's
	 * largest cost on a large repository).
	 */
	fresh = src->overview && src->cache && !src->tree &&
		!kopt_cache_has(src->overview, k->name) &&
		!kopt_cache_has(src->cache, k->name);
	akeyed = fresh || kopt_analysis_key(&akey, src, k->name, cfg);
	keyed = akeyed && src->overview;
	if (keyed && !fresh)
		overview_key(&key, &akey, k);
	if (keyed && !fresh &&
	    kopt_cache_get(src->overview, k->name, &key, &text)) {
		if (!kopt_overview_from_text(out, text.buf, text.len, k, cfg))
			goto done;
		/* damaged: derive it again, and store it again */
		kopt_overview_release(out);
	}
	/* the analysis's key once before and once after reading */
	ret = kopt_analysis_load_keyed(&a, src, k->name, cfg, akeyed,
				       fresh ? NULL : &akey, &after,
				       &after_keyed);
	if (ret) {
		kopt_analysis_release(&a);
		kopt_buf_release(&text);
		return ret;
	}
	kopt_overview_from_analysis(out, &a, k, cfg);
	kopt_analysis_release(&a);
	/* a file changed while it was read: what was read is unkeyed */
	if (keyed && after_keyed && (fresh || git_oid_equal(&after, &akey))) {
		if (fresh)
			overview_key(&key, &after, k);
		kopt_buf_reset(&text);
		kopt_overview_text(&text, out);
		kopt_cache_put(src->overview, k->name, &key, text.buf,
			       text.len);
	}
done:
	kopt_buf_release(&text);
	return 0;
}

struct load_many {
	struct kopt_overview *out;
	int *rets;
	struct kopt_error_catch *caught;
	const struct kopt_source *src;
	const struct kopt_kernel *kernels;
	const struct kopt_config *cfg;
	const char *skip;
};

static void load_one(size_t i, void *data)
{
	struct load_many *lm = data;

	if (lm->skip && lm->skip[i])
		return;
	lm->caught[i].replay = 1;
	kopt_error_catch(&lm->caught[i]);
	lm->rets[i] = kopt_overview_load(&lm->out[i], lm->src,
					 &lm->kernels[i], lm->cfg);
	kopt_error_uncatch(&lm->caught[i]);
}

void kopt_overview_load_many(struct kopt_overview *out, int *rets,
			     struct kopt_error_catch *caught,
			     const struct kopt_source *src,
			     const struct kopt_kernel *kernels, size_t nr,
			     const struct kopt_config *cfg, int threads,
			     const char *skip)
{
	struct load_many lm = { out, rets, caught, src, kernels, cfg, skip };

	/* what the loads store is written at once: one pack for many */
	if (src->overview)
		kopt_cache_hold(src->overview);
	if (src->cache)
		kopt_cache_hold(src->cache);
	kopt_parallel(nr, threads, load_one, &lm);
	if (src->overview)
		kopt_cache_flush(src->overview);
	if (src->cache)
		kopt_cache_flush(src->cache);
}

int kopt_overview_load_all(struct kopt_overview *out, int *rets,
			   const struct kopt_source *src,
			   const struct kopt_kernel *kernels, size_t nr,
			   const struct kopt_config *cfg, int threads)
{
	struct kopt_error_catch *caught;
	size_t i;
	int ret = 0;

	caught = kopt_calloc(nr, sizeof(*caught));
	for (i = 0; i < nr; i++) {
		struct kopt_error_catch init = KOPT_ERROR_CATCH_INIT;
		caught[i] = init;
	}
	kopt_overview_load_many(out, rets, caught, src, kernels, nr, cfg,
				threads, NULL);
	for (i = 0; i < nr; i++) {
		kopt_error_catch_replay(&caught[i]);
		kopt_error_catch_release(&caught[i]);
		if (rets[i] && !ret)
			ret = rets[i];
	}
	free(caught);
	return ret;
}

const struct kopt_overview_version *
kopt_overview_find(const struct kopt_overview *ov, const char *version)
{
	size_t i;

	for (i = 0; i < ov->versions_nr; i++)
		if (!strcmp(ov->versions[i].name, version))
			return &ov->versions[i];
	return NULL;
}
