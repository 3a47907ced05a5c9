#include "strategy.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "error.h"
#include "md.h"
#include "repo.h"
#include "version.h"
#include "paths.h"
#include "banned.h"

#define REGS_PER_SM 65536
#define OCC_TARGET_PCT 25.0

enum kopt_control kopt_entry_control(const struct kopt_kb_entry *e,
				     const struct kopt_config *cfg)
{
	enum kopt_control c = e->detail ? e->detail->control :
			      KOPT_CONTROL_NONE;

	if (e->language) {
		const struct kopt_language *l =
			kopt_config_language(cfg, e->language);
		if (l && l->control > c)
			c = l->control;
	}
	return c;
}

static void trial_name(struct kopt_buf *out,
		       const struct kopt_results_entry *m)
{
	if (m->trial)
		kopt_buf_addstr(out, m->trial);
	else
		kopt_buf_addf(out, "b=%ld s=%ld t=%ld", m->b, m->s, m->t);
}

static void add_values(struct kopt_buf *out, struct kopt_strvec *seen,
		       const char *values)
{
	const char *p = values;

	while (*p) {
		const char *end = strstr(p, ", ");
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char *one = kopt_strndup(p, n);
		if (!kopt_strvec_has(seen, one)) {
			kopt_strvec_push(seen, one);
			kopt_buf_addf(out, "%s%s", seen->nr > 1 ? ", " : "",
				      one);
		}
		free(one);
		p += n;
		if (end)
			p += 2;
	}
}

static void item_init(struct kopt_strategy_item *it,
		      const struct kopt_kb_entry *e)
{
	memset(it, 0, sizeof(*it));
	it->entry = e;
	kopt_buf_init(&it->holds, 0);
	kopt_strvec_init(&it->missing);
	kopt_strvec_init(&it->trials);
	kopt_strvec_init(&it->unknown_on);
}

static void item_release(struct kopt_strategy_item *it)
{
	kopt_buf_release(&it->holds);
	kopt_strvec_clear(&it->missing);
	kopt_strvec_clear(&it->trials);
	kopt_strvec_clear(&it->unknown_on);
	free(it->applied_in);
	it->applied_in = NULL;
}

/* Evaluate every trigger of `e` on every trial. */
static int evaluate(struct kopt_strategy_item *it,
		    const struct kopt_results *res)
{
	const struct kopt_kb_entry *e = it->entry;
	struct kopt_trigger_result r = KOPT_TRIGGER_RESULT_INIT;
	struct kopt_buf vals = KOPT_BUF_INIT;
	struct kopt_strvec seen = KOPT_STRVEC_INIT;
	int any_true = 0, any_unknown = 0, ret = 0;
	size_t i, j, k, ntrig;
	const struct kopt_trigger *trig = kopt_kb_entry_triggers(e, &ntrig);
	/* a catalog row's trigger is blamed on the catalog */
	const char *where = trig == e->detail->triggers ? e->detail->path :
			    e->catalog->path;

	it->margin = -HUGE_VAL;
	for (i = 0; i < res->entries_nr; i++) {
		const struct kopt_results_entry *m = &res->entries[i];
		enum kopt_truth t = KOPT_TRUTH_TRUE;
		double margin = HUGE_VAL;

		kopt_buf_reset(&vals);
		kopt_strvec_clear(&seen);
		for (j = 0; j < ntrig; j++) {
			const struct kopt_trigger *tr = &trig[j];
			if ((ret = kopt_trigger_eval(&r, tr,
						     kopt_trigger_entry_lookup,
						     (void *)m, where)))
				goto done;
			for (k = 0; k < r.missing.nr; k++)
				if (!kopt_strvec_has(&it->missing,
						     r.missing.v[k]))
					kopt_strvec_push(&it->missing,
							 r.missing.v[k]);
			add_values(&vals, &seen, r.values.buf);
			if (r.truth == KOPT_TRUTH_FALSE)
				t = KOPT_TRUTH_FALSE;
			else if (r.truth == KOPT_TRUTH_UNKNOWN &&
				 t == KOPT_TRUTH_TRUE)
				t = KOPT_TRUTH_UNKNOWN;
			if (r.truth != KOPT_TRUTH_UNKNOWN && r.margin < margin)
				margin = r.margin;
		}
		if (t == KOPT_TRUTH_TRUE) {
			any_true = 1;
			if (margin > it->margin)
				it->margin = margin;
			{
				struct kopt_buf tn = KOPT_BUF_INIT;
				trial_name(&tn, m);
				kopt_strvec_push(&it->trials, tn.buf);
				kopt_buf_addf(&it->holds, "%s%s (%s)",
					      it->holds.len ? ", " : "", tn.buf,
					      vals.buf);
				kopt_buf_release(&tn);
			}
		} else if (t == KOPT_TRUTH_UNKNOWN) {
			struct kopt_buf tn = KOPT_BUF_INIT;
			trial_name(&tn, m);
			kopt_strvec_push(&it->unknown_on, tn.buf);
			kopt_buf_release(&tn);
			any_unknown = 1;
		}
	}
	it->truth = any_true ? KOPT_TRUTH_TRUE : any_unknown ?
		    KOPT_TRUTH_UNKNOWN : KOPT_TRUTH_FALSE;
	if (!any_true)
		it->margin = 0;
done:
	kopt_trigger_result_release(&r);
	kopt_buf_release(&vals);
	kopt_strvec_clear(&seen);
	return ret;
}

static const char *classify(const double *m)
{
	int has_tc = kopt_results_has(m[KOPT_METRIC_TC_PCT]);
	int has_dram = kopt_results_has(m[KOPT_METRIC_DRAM_PCT]);
	double tc = m[KOPT_METRIC_TC_PCT];
	double dram = m[KOPT_METRIC_DRAM_PCT];

	if (!has_tc || !has_dram)
		return NULL;
	if (tc > 60 && tc >= dram)
		return "Compute-bound";
	if (dram > 70)
		return "Memory-bound";
	if (tc > 60)
		return "Compute-bound";
	return "Latency-bound";
}

static void metric_summary(struct kopt_buf *out, const double *m)
{
	static const struct { enum kopt_metric m; const char *fmt; } show[] = {
		{ KOPT_METRIC_DRAM_PCT, "DRAM %.1f%%" },
		{ KOPT_METRIC_TC_PCT, "TC %.1f%%" },
		{ KOPT_METRIC_OCC_PCT, "occupancy %.1f%%" },
		{ KOPT_METRIC_L2_HIT_PCT, "L2 hit %.1f%%" },
		{ KOPT_METRIC_WAVES, "waves %.2f" },
	};
	size_t i, n = 0;

	for (i = 0; i < KOPT_ARRAY_SIZE(show); i++) {
		if (!kopt_results_has(m[show[i].m]))
			continue;
		if (n++)
			kopt_buf_addstr(out, ", ");
		kopt_buf_addf(out, show[i].fmt, m[show[i].m]);
	}
	if (!n && kopt_results_has(m[KOPT_METRIC_DURATION_US]))
		kopt_buf_addf(out, "duration %.2f \xce\xbcs, no profile "
			      "metrics", m[KOPT_METRIC_DURATION_US]);
	else if (!n)
		kopt_buf_addstr(out, "no metrics measured");
}

static void bottleneck(struct kopt_strategy *s, const struct kopt_results *r)
{
	const char *first = NULL;
	int same = 1;
	size_t i;

	for (i = 0; i < r->entries_nr; i++) {
		const struct kopt_results_entry *m = &r->entries[i];
		const char *b = m->bottleneck ? m->bottleneck :
				classify(m->metrics);
		if (!b)
			b = "Unknown";
		if (!first)
			first = b;
		else if (strcmp(first, b))
			same = 0;
	}
	if (same && first)
		kopt_buf_addf(&s->bottleneck, "%s (", first);
	for (i = 0; i < r->entries_nr; i++) {
		const struct kopt_results_entry *m = &r->entries[i];
		const char *b = m->bottleneck ? m->bottleneck :
				classify(m->metrics);
		if (i)
			kopt_buf_addstr(&s->bottleneck, same ? "; " : ", ");
		if (same) {
			trial_name(&s->bottleneck, m);
			kopt_buf_addstr(&s->bottleneck, ": ");
		} else {
			kopt_buf_addf(&s->bottleneck, "%s on ",
				      b ? b : "Unknown");
			trial_name(&s->bottleneck, m);
			kopt_buf_addstr(&s->bottleneck, " (");
		}
		metric_summary(&s->bottleneck, m->metrics);
		if (!same)
			kopt_buf_addch(&s->bottleneck, ')');
	}
	if (same && first)
		kopt_buf_addch(&s->bottleneck, ')');
	if (s->replayed)
		kopt_buf_addstr(&s->bottleneck, " [replayed measurements]");
}

static int max_threads_per_sm(int major, int minor)
{
	if (major == 7 && minor == 5)
		return 1024;
	if ((major == 8 && minor >= 6) || major == 12)
		return 1536;
	return 2048;
}

static void constraints(struct kopt_strategy *s, const struct kopt_results *r)
{
	int major = 0, minor = 0, target;
	size_t i;

	s->regs_now = s->spill_now = s->occ_now = -1;
	for (i = 0; i < r->entries_nr; i++) {
		const struct kopt_results_entry *m = &r->entries[i];
		const double *x = m->metrics;

		if (m->device.cc && !major) {
			const char *dot = strchr(m->device.cc, '.');
			major = atoi(m->device.cc);
			minor = dot ? atoi(dot + 1) : 0;
			s->device = m->device.name;
		}
		if (kopt_results_has(x[KOPT_METRIC_REGS]) &&
		    x[KOPT_METRIC_REGS] > s->regs_now)
			s->regs_now = x[KOPT_METRIC_REGS];
		if (kopt_results_has(x[KOPT_METRIC_SPILL_BYTES]) &&
		    x[KOPT_METRIC_SPILL_BYTES] > s->spill_now)
			s->spill_now = x[KOPT_METRIC_SPILL_BYTES];
		if (kopt_results_has(x[KOPT_METRIC_OCC_PCT])) {
			if (s->occ_text.len)
				kopt_buf_addstr(&s->occ_text, ", ");
			kopt_buf_addf(&s->occ_text, "%.1f%% on ",
				      x[KOPT_METRIC_OCC_PCT]);
			trial_name(&s->occ_text, m);
			if (s->occ_now < 0 ||
			    x[KOPT_METRIC_OCC_PCT] < s->occ_now)
				s->occ_now = x[KOPT_METRIC_OCC_PCT];
		}
	}
	s->max_threads = max_threads_per_sm(major, minor);
	s->occ_target = OCC_TARGET_PCT;
	target = (int)ceil(s->max_threads * OCC_TARGET_PCT / 100.0);
	s->reg_budget = REGS_PER_SM / target / 8 * 8;
	if (s->reg_budget > 255)
		s->reg_budget = 255;
}

static int by_score(const void *a_, const void *b_)
{
	const struct kopt_strategy_item *a = a_, *b = b_;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	/* then catalog order, which the entries' addresses follow */
	return a->entry < b->entry ? -1 : a->entry > b->entry;
}

/* Optimizations before anti-patterns, then by impact, then catalog order. */
static int by_judgement(const void *a, const void *b)
{
	const struct kopt_strategy_item *x = a, *y = b;
	int xo = x->entry->kind == KOPT_KIND_OPTIMIZATION;
	int yo = y->entry->kind == KOPT_KIND_OPTIMIZATION;

	if (xo != yo)
		return yo - xo;
	if (x->impact != y->impact)
		return x->impact < y->impact ? 1 : -1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

#define PUSH(arr, nr, alloc, item) do { \
	KOPT_ALLOC_GROW(arr, nr + 1, alloc); \
	(arr)[(nr)++] = (item); \
} while (0)

static int version_char(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '-';
}

const char *kopt_strategy_applied_in(const char *source, const char *kernel,
				     const struct kopt_strvec *lineage)
{
	size_t kl = strlen(kernel), i;
	const char *p = source;

	if (!source || !lineage)
		return NULL;
	while ((p = strstr(p, kernel))) {
		const char *q = p + kl, *to;
		size_t tl;
		int word = p == source || !version_char((unsigned char)p[-1]);
		p++;
		if (!word || *q != ' ')
			continue;
		/* "<kernel> <from> -> <to>" */
		while (*q == ' ')
			q++;
		while (version_char((unsigned char)*q) && *q != '-')
			q++;
		while (*q == ' ')
			q++;
		if (strncmp(q, "->", 2))
			continue;
		q += 2;
		while (*q == ' ')
			q++;
		to = q;
		while (version_char((unsigned char)*q) && *q != '-')
			q++;
		tl = (size_t)(q - to);
		if (tl && q[-1] == '.')
			tl--;    /* the end of a sentence */
		for (i = 0; tl && i < lineage->nr; i++)
			if (strlen(lineage->v[i]) == tl &&
			    !strncmp(lineage->v[i], to, tl))
				return lineage->v[i];
	}
	return NULL;
}

int kopt_strategy_compute(struct kopt_strategy *s, const struct kopt_kb *kb,
			  const struct kopt_results *res,
			  const struct kopt_config *cfg,
			  const struct kopt_kernel *kernel,
			  const char *current, const char *next,
			  const struct kopt_strvec *lineage, size_t max)
{
	size_t i, ntrig;
	int ret;

	memset(s, 0, sizeof(*s));
	kopt_buf_init(&s->bottleneck, 0);
	kopt_buf_init(&s->occ_text, 0);
	kopt_buf_init(&s->control_why, 0);
	kopt_strvec_init(&s->untriggered);
	s->kernel = kernel->name;
	s->max = max;
	s->current = current;
	s->next = next;
	s->language = kopt_config_language(cfg, kernel->language);
	for (i = 0; i < res->entries_nr; i++)
		if (res->entries[i].replayed)
			s->replayed = 1;

	for (i = 0; i < kb->entries_nr; i++) {
		const struct kopt_kb_entry *e = &kb->entries[i];
		struct kopt_strategy_item it;
		const char *applied;

		if (!e->row)
			continue;
		if (!e->detail || !kopt_kb_entry_triggers(e, &ntrig)) {
			struct kopt_buf sb = KOPT_BUF_INIT;
			kopt_kb_entry_id(&sb, e);
			kopt_buf_addf(&sb, " %s", kopt_kb_entry_name(e));
			kopt_strvec_push(&s->untriggered, sb.buf);
			kopt_buf_release(&sb);
			item_init(&it, e);
			if (e->row->cell[KOPT_COL_IMPACT] &&
			    !kopt_impact_parse(e->row->cell[KOPT_COL_IMPACT],
					       &it.impact))
				it.impact_known = 1;
			it.score = it.impact;
			PUSH(s->judge, s->judge_nr, s->judge_alloc, it);
			continue;
		}
		item_init(&it, e);
		if ((ret = evaluate(&it, res))) {
			item_release(&it);
			return ret;
		}
		if (e->kind == KOPT_KIND_OPTIMIZATION &&
		    e->row->cell[KOPT_COL_IMPACT] &&
		    !kopt_impact_parse(e->row->cell[KOPT_COL_IMPACT],
				       &it.impact))
			it.impact_known = 1;
		it.score = it.impact * (1 + (it.margin > 1 ? 1 :
					     it.margin < 0 ? 0 : it.margin));
		if (it.truth == KOPT_TRUTH_UNKNOWN)
			PUSH(s->unknown, s->unknown_nr, s->unknown_alloc, it);
		else if (it.truth == KOPT_TRUTH_FALSE)
			item_release(&it);
		else if (e->kind == KOPT_KIND_OPTIMIZATION &&
			 (applied = kopt_strategy_applied_in(
				  e->detail->source, kernel->name, lineage))) {
			it.applied_in = kopt_strdup(applied);
			PUSH(s->applied, s->applied_nr, s->applied_alloc, it);
		}
		else if (e->kind == KOPT_KIND_OPTIMIZATION)
			PUSH(s->apply, s->apply_nr, s->apply_alloc, it);
		else
			PUSH(s->avoid, s->avoid_nr, s->avoid_alloc, it);
	}
	if (s->apply_nr > 1)
		qsort(s->apply, s->apply_nr, sizeof(*s->apply), by_score);
	if (s->judge_nr > 1)
		qsort(s->judge, s->judge_nr, sizeof(*s->judge), by_judgement);
	s->chosen = s->apply_nr < max ? s->apply_nr : max;

	s->control = KOPT_CONTROL_BLOCK;
	for (i = 0; i < s->chosen; i++) {
		const struct kopt_kb_entry *e = s->apply[i].entry;
		enum kopt_control c = kopt_entry_control(e, cfg);
		if (i)
			kopt_buf_addstr(&s->control_why, ", ");
		kopt_buf_addf(&s->control_why, "%s (", kopt_kb_entry_name(e));
		kopt_kb_entry_id(&s->control_why, e);
		kopt_buf_addf(&s->control_why, "): %s",
			      c ? kopt_control_name(c) : "any");
		if (c > s->control)
			s->control = c;
	}
	bottleneck(s, res);
	constraints(s, res);
	return 0;
}

static void items_free(struct kopt_strategy_item *v, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		item_release(&v[i]);
	free(v);
}

void kopt_strategy_release(struct kopt_strategy *s)
{
	items_free(s->apply, s->apply_nr);
	items_free(s->avoid, s->avoid_nr);
	items_free(s->unknown, s->unknown_nr);
	items_free(s->applied, s->applied_nr);
	items_free(s->judge, s->judge_nr);
	kopt_strvec_clear(&s->untriggered);
	kopt_buf_release(&s->bottleneck);
	kopt_buf_release(&s->occ_text);
	kopt_buf_release(&s->control_why);
	memset(s, 0, sizeof(*s));
}

char *kopt_relative_path(const char *from_dir, const char *to)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	size_t flen = strlen(from_dir), common = 0, i;
	const char *p;

	/* the longest common prefix that ends at a folder boundary */
	for (i = 0; from_dir[i] && to[i] && from_dir[i] == to[i]; i++)
		if (to[i] == '/')
			common = i + 1;
	if (i == flen && to[i] == '/')
		common = flen + 1;      /* `to` is inside `from_dir` */
	p = common > flen ? from_dir + flen : from_dir + common;
	if (*p) {
		kopt_buf_addstr(&out, "../");
		for (; *p; p++)
			if (*p == '/' && p[1])
				kopt_buf_addstr(&out, "../");
	}
	kopt_buf_addstr(&out, to + common);
	return kopt_buf_detach(&out, NULL);
}

/* "`a` and `b`"; returns how many. */
static size_t triggers_text(struct kopt_buf *out, const struct kopt_kb_entry *e)
{
	size_t i, n;
	const struct kopt_trigger *t = kopt_kb_entry_triggers(e, &n);

	for (i = 0; i < n; i++)
		kopt_buf_addf(out, "%s`%s`", i ? " and " : "", t[i].text);
	return n;
}

static void link(struct kopt_buf *out, const char *task_dir, const char *path)
{
	char *rel = kopt_relative_path(task_dir, path);

	kopt_buf_addf(out, "[%s](%s)", path, rel);
	free(rel);
}

/*
 * "Epilogue fusion (O5, est. impact 10%): trigger, to judge on v1's
 * profile: "<prose>"; see <link>".
 */
static void judge_line(struct kopt_buf *out, const struct kopt_strategy *s,
		       const struct kopt_strategy_item *it,
		       const char *task_dir)
{
	const struct kopt_kb_entry *e = it->entry;
	struct kopt_buf prose = KOPT_BUF_INIT;

	kopt_buf_addf(out, "%s (", kopt_kb_entry_name(e));
	kopt_kb_entry_id(out, e);
	if (e->row && e->row->cell[KOPT_COL_IMPACT] &&
	    *e->row->cell[KOPT_COL_IMPACT])
		kopt_buf_addf(out, ", est. impact %s",
			      e->row->cell[KOPT_COL_IMPACT]);
	kopt_buf_addstr(out, "): ");
	kopt_kb_entry_prose(&prose, e);
	if (prose.len)
		kopt_buf_addf(out, "trigger to judge on %s's profile: \"%s\"",
			      s->current, prose.buf);
	else
		kopt_buf_addf(out, "no trigger written; judge it on %s's "
			      "profile", s->current);
	if (e->path) {
		kopt_buf_addstr(out, "; see ");
		link(out, task_dir, e->path);
	}
	kopt_buf_addch(out, '\n');
	kopt_buf_release(&prose);
}

/* The end of an item's line: its triggers, where they hold, its file. */
static void holds_line(struct kopt_buf *out,
		       const struct kopt_strategy_item *it,
		       const char *task_dir)
{
	kopt_buf_addf(out, " %s on %s; see ",
		      triggers_text(out, it->entry) > 1 ? "hold" : "holds",
		      it->holds.buf);
	link(out, task_dir, it->entry->path);
	kopt_buf_addch(out, '\n');
}

void kopt_strategy_render(struct kopt_buf *out, const struct kopt_strategy *s,
			  const char *task_dir)
{
	size_t i, j;

	kopt_buf_addf(out, "## Optimization Task: %s %s -> %s\n", s->kernel,
		      s->current, s->next);
	kopt_buf_addf(out, "### Current Bottleneck: %s\n", s->bottleneck.buf);
	kopt_buf_addstr(out, "### Optimizations to Apply:\n");
	for (i = 0; i < s->chosen; i++) {
		const struct kopt_strategy_item *it = &s->apply[i];
		const struct kopt_kb_entry *e = it->entry;

		kopt_buf_addf(out, "%zu. %s (", i + 1, kopt_kb_entry_name(e));
		kopt_kb_entry_id(out, e);
		if (e->row->cell[KOPT_COL_IMPACT])
			kopt_buf_addf(out, ", est. impact %s",
				      e->row->cell[KOPT_COL_IMPACT]);
		kopt_buf_addstr(out, "): ");
		holds_line(out, it, task_dir);
	}
	if (!s->chosen) {
		size_t n = 0;
		for (i = 0; i < s->judge_nr && n < s->max; i++) {
			const struct kopt_strategy_item *it = &s->judge[i];
			if (it->entry->kind != KOPT_KIND_OPTIMIZATION)
				continue;
			kopt_buf_addf(out, "%zu. Judge: ", ++n);
			judge_line(out, s, it, task_dir);
		}
		if (!n)
			kopt_buf_addf(out, "No optimization of the catalog "
				      "holds or is left to judge on %s's "
				      "numbers: add what profiling taught "
				      "with 'git kopt learn new optimization "
				      "<name>'\n", s->current);
	}

	kopt_buf_addstr(out, "\n### Constraints\n");
	kopt_buf_addf(out, "- Register budget: at most %d registers/thread, "
		      "which keeps %.0f%% occupancy (%d of %d threads per SM "
		      "with %d registers per SM)", s->reg_budget,
		      s->occ_target,
		      (int)ceil(s->max_threads * s->occ_target / 100.0),
		      s->max_threads, REGS_PER_SM);
	if (s->regs_now >= 0)
		kopt_buf_addf(out, "; now %.0f registers", s->regs_now);
	if (s->spill_now >= 0)
		kopt_buf_addf(out, "%s%.0f bytes spilled",
			      s->regs_now >= 0 ? ", " : "; now ",
			      s->spill_now);
	if (s->regs_now < 0 && s->spill_now < 0)
		kopt_buf_addstr(out, "; registers now: not measured");
	kopt_buf_addch(out, '\n');
	kopt_buf_addf(out, "- Target occupancy: at least %.0f%% achieved "
		      "(now %s)\n", s->occ_target,
		      s->occ_text.len ? s->occ_text.buf : "not measured");
	kopt_buf_addf(out, "- Required control level: %s",
		      kopt_control_name(s->control));
	if (s->control_why.len)
		kopt_buf_addf(out, " (%s)", s->control_why.buf);
	kopt_buf_addch(out, '\n');
	if (s->language) {
		int enough = s->language->control >= s->control;
		kopt_buf_addf(out, "- Language: %s gives %s-level control, ",
			      s->language->name,
			      kopt_control_name(s->language->control));
		if (enough)
			kopt_buf_addstr(out, "enough for this task\n");
		else
			kopt_buf_addf(out, "less than this task needs; run "
				      "'git kopt select %s'\n", s->kernel);
	}
	for (i = 0; i < s->avoid_nr; i++) {
		const struct kopt_strategy_item *it = &s->avoid[i];
		const struct kopt_kb_entry *e = it->entry;

		kopt_buf_addf(out, "- Avoid: %s (", kopt_kb_entry_name(e));
		kopt_kb_entry_id(out, e);
		kopt_buf_addstr(out, "): ");
		holds_line(out, it, task_dir);
	}
	for (i = 0; i < s->applied_nr; i++) {
		const struct kopt_strategy_item *it = &s->applied[i];
		const struct kopt_kb_entry *e = it->entry;

		kopt_buf_addf(out, "- Applied in %s: %s (", it->applied_in,
			      kopt_kb_entry_name(e));
		kopt_kb_entry_id(out, e);
		kopt_buf_addstr(out, "), not proposed again although ");
		holds_line(out, it, task_dir);
	}

	if (s->judge_nr) {
		kopt_buf_addstr(out, "\n### To Judge\n");
		for (i = 0; i < s->judge_nr; i++) {
			kopt_buf_addstr(out, "- ");
			judge_line(out, s, &s->judge[i], task_dir);
		}
	}
	if (!s->unknown_nr)
		return;
	kopt_buf_addstr(out, "\n### Not Evaluated\n");
	for (i = 0; i < s->unknown_nr; i++) {
		const struct kopt_strategy_item *it = &s->unknown[i];
		const struct kopt_kb_entry *e = it->entry;

		kopt_buf_addf(out, "- %s (", kopt_kb_entry_name(e));
		kopt_kb_entry_id(out, e);
		kopt_buf_addstr(out, "): ");
		triggers_text(out, e);
		kopt_buf_addstr(out, " unknown on ");
		for (j = 0; j < it->unknown_on.nr; j++)
			kopt_buf_addf(out, "%s%s", j ? ", " : "",
				      it->unknown_on.v[j]);
		kopt_buf_addstr(out, ": ");
		for (j = 0; j < it->missing.nr; j++)
			kopt_buf_addf(out, "%s%s", j ? ", " : "",
				      it->missing.v[j]);
		kopt_buf_addf(out, " not measured\n");
	}
}

static cJSON *item_json(const struct kopt_strategy_item *it, int rank,
			const struct kopt_config *cfg)
{
	const struct kopt_kb_entry *e = it->entry;
	cJSON *o = cJSON_CreateObject(), *arr;
	struct kopt_buf id = KOPT_BUF_INIT;
	const struct kopt_trigger *trig;
	size_t i, ntrig;

	(void)cfg;
	if (rank)
		cJSON_AddNumberToObject(o, "rank", rank);
	kopt_kb_entry_id(&id, e);
	cJSON_AddStringToObject(o, "id", id.buf);
	kopt_buf_release(&id);
	cJSON_AddStringToObject(o, "name", kopt_kb_entry_name(e));
	cJSON_AddStringToObject(o, "kind", kopt_kind_name(e->kind));
	if (e->language)
		cJSON_AddStringToObject(o, "language", e->language);
	else
		cJSON_AddNullToObject(o, "language");
	cJSON_AddStringToObject(o, "detail", e->path);
	arr = cJSON_AddArrayToObject(o, "triggers");
	trig = kopt_kb_entry_triggers(e, &ntrig);
	for (i = 0; i < ntrig; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(trig[i].text));
	cJSON_AddStringToObject(o, "truth", kopt_truth_name(it->truth));
	if (e->kind == KOPT_KIND_OPTIMIZATION) {
		if (it->impact_known)
			cJSON_AddNumberToObject(o, "impact_pct", it->impact);
		else
			cJSON_AddNullToObject(o, "impact_pct");
	}
	if (it->truth == KOPT_TRUTH_TRUE) {
		cJSON_AddNumberToObject(o, "margin", it->margin);
		if (e->kind == KOPT_KIND_OPTIMIZATION)
			cJSON_AddNumberToObject(o, "score", it->score);
		arr = cJSON_AddArrayToObject(o, "trials");
		for (i = 0; i < it->trials.nr; i++)
			cJSON_AddItemToArray(arr, cJSON_CreateString(
				it->trials.v[i]));
		cJSON_AddStringToObject(o, "holds", it->holds.buf);
	}
	if (it->truth == KOPT_TRUTH_UNKNOWN) {
		arr = cJSON_AddArrayToObject(o, "unknown_on");
		for (i = 0; i < it->unknown_on.nr; i++)
			cJSON_AddItemToArray(arr, cJSON_CreateString(
				it->unknown_on.v[i]));
	}
	arr = cJSON_AddArrayToObject(o, "missing");
	for (i = 0; i < it->missing.nr; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(it->missing.v[i]));
	if (e->detail->control)
		cJSON_AddStringToObject(o, "control",
					kopt_control_name(e->detail->control));
	else
		cJSON_AddNullToObject(o, "control");
	return o;
}

void kopt_strategy_json(struct kopt_buf *out, const struct kopt_strategy *s,
			const char *task_path)
{
	cJSON *o = cJSON_CreateObject(), *arr, *c;
	char *text;
	size_t i;

	cJSON_AddStringToObject(o, "kernel", s->kernel);
	cJSON_AddStringToObject(o, "current", s->current);
	cJSON_AddStringToObject(o, "next", s->next);
	if (task_path)
		cJSON_AddStringToObject(o, "task", task_path);
	else
		cJSON_AddNullToObject(o, "task");
	cJSON_AddStringToObject(o, "bottleneck", s->bottleneck.buf);
	cJSON_AddBoolToObject(o, "replayed", s->replayed);
	arr = cJSON_AddArrayToObject(o, "optimizations");
	for (i = 0; i < s->apply_nr; i++) {
		cJSON *it = item_json(&s->apply[i], (int)i + 1, NULL);
		cJSON_AddBoolToObject(it, "chosen", i < s->chosen);
		cJSON_AddItemToArray(arr, it);
	}
	arr = cJSON_AddArrayToObject(o, "avoid");
	for (i = 0; i < s->avoid_nr; i++)
		cJSON_AddItemToArray(arr, item_json(&s->avoid[i], 0, NULL));
	arr = cJSON_AddArrayToObject(o, "applied");
	for (i = 0; i < s->applied_nr; i++) {
		cJSON *it = item_json(&s->applied[i], 0, NULL);
		cJSON_AddStringToObject(it, "applied_in",
					s->applied[i].applied_in);
		cJSON_AddItemToArray(arr, it);
	}
	arr = cJSON_AddArrayToObject(o, "unknown");
	for (i = 0; i < s->unknown_nr; i++)
		cJSON_AddItemToArray(arr, item_json(&s->unknown[i], 0, NULL));
	arr = cJSON_AddArrayToObject(o, "untriggered");
	for (i = 0; i < s->untriggered.nr; i++)
		cJSON_AddItemToArray(arr,
				     cJSON_CreateString(s->untriggered.v[i]));
	arr = cJSON_AddArrayToObject(o, "to_judge");
	for (i = 0; i < s->judge_nr; i++) {
		struct kopt_buf prose = KOPT_BUF_INIT;
		cJSON *it = item_json(&s->judge[i], 0, NULL);
		kopt_kb_entry_prose(&prose, s->judge[i].entry);
		cJSON_AddStringToObject(it, "trigger_text", prose.buf);
		cJSON_AddItemToArray(arr, it);
		kopt_buf_release(&prose);
	}
	c = cJSON_AddObjectToObject(o, "constraints");
	cJSON_AddNumberToObject(c, "register_budget", s->reg_budget);
	if (s->regs_now >= 0)
		cJSON_AddNumberToObject(c, "regs", s->regs_now);
	else
		cJSON_AddNullToObject(c, "regs");
	if (s->spill_now >= 0)
		cJSON_AddNumberToObject(c, "spill_bytes", s->spill_now);
	else
		cJSON_AddNullToObject(c, "spill_bytes");
	cJSON_AddNumberToObject(c, "occupancy_target_pct", s->occ_target);
	if (s->occ_now >= 0)
		cJSON_AddNumberToObject(c, "occupancy_pct", s->occ_now);
	else
		cJSON_AddNullToObject(c, "occupancy_pct");
	cJSON_AddStringToObject(c, "control", kopt_control_name(s->control));
	if (s->language) {
		cJSON_AddStringToObject(c, "language", s->language->name);
		cJSON_AddStringToObject(c, "language_control",
					kopt_control_name(
						s->language->control));
		cJSON_AddBoolToObject(c, "language_suffices",
				      s->language->control >= s->control);
	}
	text = cJSON_Print(o);
	kopt_buf_addstr(out, text);
	kopt_buf_addch(out, '\n');
	free(text);
	cJSON_Delete(o);
}

/* Versions. */

static void scan_dir(const char *dir, const char *prefix, const char *suffix,
		     long *max, long *max_match)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *rest, *end;
		long n;
		if (!kopt_skip_prefix(de->d_name, prefix, &rest))
			continue;
		n = kopt_version_prefix(rest, &end);
		if (n < 0 || strcmp(end, suffix))
			continue;
		if (n > *max)
			*max = n;
		if (max_match && n > *max_match)
			*max_match = n;
	}
	closedir(d);
}

int kopt_kernel_versions(const char *top, git_repository *repo,
			 const struct kopt_kernel *kernel,
			 const struct kopt_analysis *a,
			 char **newest_results, char **next)
{
	long max = -1, with_results = -1;
	char *dir;
	const char *at;
	size_t i;

	for (i = 0; a && i < a->versions_nr; i++) {
		const struct kopt_analysis_version *v = &a->versions[i];
		if (v->number > max)
			max = v->number;
		if (v->has_results && v->results.entries_nr &&
		    v->number > with_results)
			with_results = v->number;
	}
	/* the source folders, when {version} is a whole path component */
	at = kernel->source ? strstr(kernel->source, "{version}") : NULL;
	if (at && (at == kernel->source || at[-1] == '/')) {
		dir = kopt_xstrfmt("%s%.*s", top, (int)(at - kernel->source),
				   kernel->source);
		scan_dir(dir, "", "", &max, NULL);
		free(dir);
	}
	if (repo) {
		struct kopt_strvec branches = KOPT_STRVEC_INIT;
		if (!kopt_repo_branch_list(repo, kernel->name, &branches) &&
		    branches.nr) {
			long n = kopt_version_number(
				branches.v[branches.nr - 1]);
			if (n > max)
				max = n;
		}
		kopt_strvec_clear(&branches);
	}
	*newest_results = with_results >= 0 ?
			  kopt_version_name(with_results) : NULL;
	*next = kopt_version_name(max + 1);
	return 0;
}

/* The current version and its ancestors, following their parents. */
static void lineage_of(struct kopt_strvec *out, const struct kopt_analysis *a,
		       const char *version)
{
	const struct kopt_analysis_version *v = kopt_analysis_find(a, version);

	kopt_strvec_push(out, version);
	while (v && v->parent >= 0 &&
	       !kopt_strvec_has(out, a->versions[v->parent].name)) {
		v = &a->versions[v->parent];
		kopt_strvec_push(out, v->name);
	}
}

/*
 * The knowledge base of `language`, reporting its warnings; KOPT_EINVALID
 * when it has problems, each reported.
 */
static int load_kb(struct kopt_kb *kb, const char *top,
		   const struct kopt_config *cfg, const char *language)
{
	struct kopt_kb_source src;
	struct kopt_problems warn = KOPT_PROBLEMS_INIT;
	size_t i, n;
	int ret;

	kopt_kb_source_worktree(&src, top);
	if ((ret = kopt_kb_load(kb, &src, cfg, language)) < 0)
		return ret;
	/* what looks like a mistyped metric is judged, not evaluated */
	kopt_kb_prose_warnings(kb, &warn);
	for (i = 0; i < warn.nr; i++)
		kopt_warning("%s:%d: %s", warn.v[i].file, warn.v[i].line,
			     warn.v[i].what);
	kopt_problems_clear(&warn);
	n = kb->problems.nr;
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		kopt_error_at(kb->problems.v[i].file, kb->problems.v[i].line,
			      "%s", kb->problems.v[i].what);
	kopt_error("the knowledge base has %zu problem%s; fix %s first "
		   "('git kopt learn lint' lists %s)", n, n == 1 ? "" : "s",
		   n == 1 ? "it" : "them", n == 1 ? "it" : "them");
	return KOPT_EINVALID;
}

/* *current: the requested version, else the newest with numbers. */
static int pick_current(char **current, char *newest,
			const struct kopt_strategy_request *req)
{
	struct kopt_buf devlog = KOPT_BUF_INIT;
	const char *name = req->kernel->name;

	if (req->version) {
		*current = kopt_strdup(req->version);
		free(newest);
		return 0;
	}
	if (newest) {
		*current = newest;
		return 0;
	}
	kopt_path_devlog(&devlog, name);
	kopt_error("no numbers for kernel '%s' (no results file, no "
		   "performance block in %s); run 'git kopt profile %s v0' "
		   "first", name, devlog.buf, name);
	kopt_buf_release(&devlog);
	return KOPT_ENOTFOUND;
}

int kopt_strategy_load(struct kopt_strategy *out, struct kopt_kb *kb,
		       struct kopt_results *res, char **current, char **next,
		       const struct kopt_strategy_request *req)
{
	const struct kopt_kernel *k = req->kernel;
	struct kopt_source src;
	struct kopt_analysis a = KOPT_ANALYSIS_INIT;
	struct kopt_strvec lineage = KOPT_STRVEC_INIT;
	char *newest = NULL;
	int ret;

	*current = *next = NULL;
	kopt_source_worktree(&src, req->top);
	if ((ret = kopt_analysis_load(&a, &src, k->name, req->cfg)) < 0 ||
	    (ret = kopt_kernel_versions(req->top, req->repo, k, &a, &newest,
					next)) < 0 ||
	    (ret = pick_current(current, newest, req)) < 0)
		goto done;
	lineage_of(&lineage, &a, *current);
	if ((ret = kopt_analysis_take(res, &a, *current)) < 0 ||
	    (ret = load_kb(kb, req->top, req->cfg, k->language)) < 0)
		goto done;
	ret = kopt_strategy_compute(out, kb, res, req->cfg, k, *current,
				    *next, &lineage, req->max);
done:
	if (ret < 0) {
		free(*current);
		free(*next);
		*current = *next = NULL;
	}
	kopt_analysis_release(&a);
	kopt_strvec_clear(&lineage);
	return ret;
}

/* SELECT */

int kopt_select_language(struct kopt_selection *out,
			 const struct kopt_config *cfg,
			 const struct kopt_language *current,
			 enum kopt_control required)
{
	const struct kopt_language *best = NULL;
	size_t i;

	out->required = required ? required : KOPT_CONTROL_BLOCK;
	out->current = current;
	out->language = NULL;
	if (current && current->control >= out->required) {
		out->language = current;
		kopt_buf_addf(&out->why, "%s, the current language, gives "
			      "%s-level control, enough for the %s level the "
			      "task needs; it is kept\n", current->name,
			      kopt_control_name(current->control),
			      kopt_control_name(out->required));
		return 0;
	}
	for (i = 0; i < cfg->languages_nr; i++) {
		const struct kopt_language *l = &cfg->languages[i];
		if (l->control >= out->required &&
		    (!best || l->control < best->control))
			best = l;
	}
	if (current)
		kopt_buf_addf(&out->why, "%s, the current language, gives "
			      "only %s-level control; the task needs %s\n",
			      current->name,
			      kopt_control_name(current->control),
			      kopt_control_name(out->required));
	if (!best)
		return KOPT_ENOTFOUND;
	out->language = best;
	kopt_buf_addf(&out->why, "%s gives %s-level control, the least of "
		      "the configured languages that covers %s\n", best->name,
		      kopt_control_name(best->control),
		      kopt_control_name(out->required));
	return 0;
}

void kopt_selection_release(struct kopt_selection *sel)
{
	kopt_buf_release(&sel->why);
	kopt_strvec_clear(&sel->needs);
}

/* ---- reading a task back ---- */

char *kopt_strategy_task_current(const char *text, size_t len)
{
	const char *end = text + len, *p, *eol;

	p = memmem(text, len, "Optimization Task:", 18);
	if (!p)
		return NULL;
	eol = memchr(p, '\n', (size_t)(end - p));
	if (!eol)
		eol = end;
	for (p += 18; p < eol; p++) {
		const char *s = p;
		char *v;
		if (*p != 'v' || (p > text && p[-1] != ' ' && p[-1] != '['))
			continue;
		while (p < eol && p[1] >= '0' && p[1] <= '9')
			p++;
		v = kopt_strndup(s, (size_t)(p - s + 1));
		if (kopt_version_number(v) >= 0)
			return v;
		free(v);
	}
	return NULL;
}

static cmark_node *find_links(cmark_node *n, struct kopt_strvec *out)
{
	cmark_node *c;

	if (cmark_node_get_type(n) == CMARK_NODE_LINK)
		kopt_strvec_push(out, cmark_node_get_url(n));
	for (c = cmark_node_first_child(n); c; c = cmark_node_next(c))
		find_links(c, out);
	return NULL;
}

void kopt_strategy_task_links(struct kopt_strvec *out, const char *text,
			      size_t len)
{
	cmark_node *doc = kopt_md_parse(text, len), *n;
	struct kopt_buf t = KOPT_BUF_INIT;
	int in = 0;

	for (n = cmark_node_first_child(doc); n; n = cmark_node_next(n)) {
		if (kopt_md_heading_level(n)) {
			kopt_buf_reset(&t);
			kopt_md_text(&t, n);
			in = kopt_md_heading_level(n) == 3 &&
			     kopt_starts_with(t.buf, "Optimizations to Apply");
			continue;
		}
		if (in && cmark_node_get_type(n) == CMARK_NODE_LIST)
			find_links(n, out);
	}
	kopt_buf_release(&t);
	cmark_node_free(doc);
}
