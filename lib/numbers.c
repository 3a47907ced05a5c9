#include "numbers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "verdict.h"
#include "banned.h"

static const char *const source_names[] = {
	[KOPT_NUMBERS_NONE] = "none",
	[KOPT_NUMBERS_MEASURED] = "measured",
	[KOPT_NUMBERS_REPLAYED] = "replayed",
	[KOPT_NUMBERS_DEVLOG] = "from devlog",
};

const char *kopt_numbers_source_name(enum kopt_numbers_source s)
{
	if ((size_t)s >= KOPT_ARRAY_SIZE(source_names))
		return "none";
	return source_names[s];
}

enum kopt_numbers_source
kopt_numbers_entry_source(const struct kopt_results_entry *e)
{
	if (e->from_devlog)
		return KOPT_NUMBERS_DEVLOG;
	return e->replayed ? KOPT_NUMBERS_REPLAYED : KOPT_NUMBERS_MEASURED;
}

enum kopt_numbers_source
kopt_numbers_results_source(const struct kopt_results *r)
{
	size_t i;
	int all_replayed = 1;

	if (!r->entries_nr)
		return KOPT_NUMBERS_NONE;
	for (i = 0; i < r->entries_nr; i++) {
		if (r->entries[i].from_devlog)
			return KOPT_NUMBERS_DEVLOG;
		if (!r->entries[i].replayed)
			all_replayed = 0;
	}
	return all_replayed ? KOPT_NUMBERS_REPLAYED : KOPT_NUMBERS_MEASURED;
}

static int has_numbers(const struct kopt_devlog_version *v)
{
	size_t i;

	for (i = 0; i < v->perfs_nr; i++)
		if (v->perfs[i].has_config)
			return 1;
	return 0;
}

static int abandoned(const struct kopt_devlog_version *v)
{
	return (v->note && strcasestr(v->note, "abandon")) ||
	       (v->title && strcasestr(v->title, "(abandoned)"));
}

const char *kopt_numbers_devlog_parent(const struct kopt_devlog *dl,
				       const char *version)
{
	const struct kopt_devlog_version *self, *best = NULL;
	size_t i;

	if (!dl || !(self = kopt_devlog_find_version(dl, version)))
		return NULL;
	/* newest first, the cheap tests first: a long devlog stays linear */
	for (i = dl->versions_nr; i-- > 0;) {
		const struct kopt_devlog_version *v = &dl->versions[i];
		if (v->number >= self->number ||
		    (best && v->number <= best->number) || !has_numbers(v) ||
		    abandoned(v))
			continue;
		best = v;
	}
	return best ? best->name : NULL;
}

static const char *trial_of(const struct kopt_config *cfg,
			    const struct kopt_devlog_perf *pf)
{
	size_t i;

	for (i = 0; cfg && i < cfg->trials_nr; i++) {
		const struct kopt_trial *t = &cfg->trials[i];
		if ((t->b == pf->b_requested || t->b == pf->b) &&
		    t->s == pf->s && t->t == pf->t)
			return t->name;
	}
	return NULL;
}

/*
 * The entries of a devlog version's performance blocks, added to out.
 * `borrow`: the entries point at the devlog's and the configuration's
 * strings and carry only what kopt_results_find_like() compares and the
 * numbers; the caller frees only the array (borrowed_release()).
 */
static void devlog_entries(struct kopt_results *out,
			   const struct kopt_devlog_version *v,
			   const struct kopt_config *cfg, int borrow)
{
	size_t i;
	int m;

	for (i = 0; i < v->perfs_nr; i++) {
		const struct kopt_devlog_perf *pf = &v->perfs[i];
		const char *trial;
		struct kopt_results_entry e;
		if (!pf->has_config)
			continue;
		trial = trial_of(cfg, pf);
		kopt_results_entry_init(&e);
		e.b = pf->b;
		e.s = pf->s;
		e.t = pf->t;
		e.b_requested = pf->b_requested ? pf->b_requested : pf->b;
		e.replayed = pf->replayed;
		e.from_devlog = 1;
		for (m = 0; m < KOPT_METRIC__NR; m++)
			e.metrics[m] = pf->metrics[m];
		if (borrow) {
			e.trial = (char *)trial;
			e.device.name = pf->device;
		} else {
			e.trial = trial ? kopt_strdup(trial) : NULL;
			e.device.name = pf->device ? kopt_strdup(pf->device) :
				       NULL;
		}
		/* a second table of the same block adds nothing new */
		if (kopt_results_find_like(out, &e)) {
			if (!borrow)
				kopt_results_entry_release(&e);
			continue;
		}
		if (!borrow) {
			e.bottleneck = pf->bottleneck ?
				       kopt_strdup(pf->bottleneck) : NULL;
			e.root_cause = pf->root_cause ?
				       kopt_strdup(pf->root_cause) : NULL;
		}
		KOPT_ALLOC_GROW(out->entries, out->entries_nr + 1,
				out->entries_alloc);
		out->entries[out->entries_nr++] = e;
	}
}

static void borrowed_release(struct kopt_results *r)
{
	free(r->entries);
	r->entries = NULL;
	r->entries_nr = r->entries_alloc = 0;
}

size_t kopt_numbers_from_devlog(struct kopt_results *out,
				const struct kopt_devlog *dl,
				const char *kernel, const char *version,
				const struct kopt_config *cfg)
{
	const struct kopt_results init = KOPT_RESULTS_INIT;
	const struct kopt_devlog_version *v;
	const char *parent;

	kopt_results_release(out);
	*out = init;
	out->kernel = kopt_strdup(kernel);
	out->version = kopt_strdup(version);
	if (!dl || !(v = kopt_devlog_find_version(dl, version)))
		return 0;
	parent = kopt_numbers_devlog_parent(dl, version);
	out->parent = parent ? kopt_strdup(parent) : NULL;
	devlog_entries(out, v, cfg, 0);
	return out->entries_nr;
}

static void disagreements(struct kopt_strvec *out,
			  const struct kopt_results *measured,
			  const struct kopt_results *written, double noise)
{
	struct kopt_buf what = KOPT_BUF_INIT;
	size_t i;

	for (i = 0; i < measured->entries_nr; i++) {
		const struct kopt_results_entry *e = &measured->entries[i], *w;
		double change = NAN, d = e->metrics[KOPT_METRIC_DURATION_US];
		enum kopt_verdict v;
		w = kopt_results_find_like(written, e);
		if (!w)
			continue;
		v = kopt_verdict_judge(d, e->spread_pct,
				       w->metrics[KOPT_METRIC_DURATION_US],
				       NAN, noise, &change, NULL);
		if (v != KOPT_VERDICT_REGRESSION &&
		    v != KOPT_VERDICT_IMPROVEMENT)
			continue;
		kopt_buf_reset(&what);
		kopt_results_describe_entry(&what, e);
		kopt_strvec_pushf(out, "%s: %s %.2f us, the devlog says "
				  "%.2f us (%+.1f%%)", what.buf,
				  kopt_numbers_source_name(
					  kopt_numbers_entry_source(e)),
				  d, w->metrics[KOPT_METRIC_DURATION_US],
				  change);
	}
	kopt_buf_release(&what);
}

enum kopt_numbers_source
kopt_numbers_version(struct kopt_results *out, struct kopt_results *file,
		     const struct kopt_devlog *dl, const char *kernel,
		     const char *version, const struct kopt_config *cfg,
		     struct kopt_strvec *disagree)
{
	const struct kopt_results init = KOPT_RESULTS_INIT;
	struct kopt_results written = KOPT_RESULTS_INIT;
	double noise = cfg ? cfg->noise_pct : KOPT_DEFAULT_NOISE_PCT;

	if (file && file->entries_nr) {
		const struct kopt_devlog_version *v;
		kopt_results_release(out);
		*out = *file;
		*file = init;
		/* the devlog's numbers only to compare: borrowed */
		if (disagree && dl &&
		    (v = kopt_devlog_find_version(dl, version))) {
			devlog_entries(&written, v, cfg, 1);
			if (written.entries_nr)
				disagreements(disagree, out, &written, noise);
			borrowed_release(&written);
		}
		return kopt_numbers_results_source(out);
	}
	kopt_numbers_from_devlog(&written, dl, kernel, version, cfg);
	kopt_results_release(out);
	if (file && !written.entries_nr) {
		/* a results file without entries is still the file's */
		*out = *file;
		*file = init;
		kopt_results_release(&written);
		return KOPT_NUMBERS_NONE;
	}
	*out = written;
	return kopt_numbers_results_source(out);
}
