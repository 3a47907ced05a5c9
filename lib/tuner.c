#include "tuner.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "devlog.h"
#include "error.h"
#include "lockfile.h"
#include "filetx.h"
#include "paths.h"
#include "progress.h"
#include "repo.h"
#include "results.h"
#include "tunecache.h"
#include "tuneplan.h"
#include "version.h"
#include "banned.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void utc_now(char *out, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The number at `q` followed by `post`, all before `end`. */
static int number_at(const char *q, const char *end, const char *post,
		     size_t post_len, double *us)
{
	char *stop;
	double v;

	if (q >= end || !(*q == '.' || (*q >= '0' && *q <= '9')))
		return 0;
	v = strtod(q, &stop);
	if (stop == q || stop > end || !isfinite(v) || v < 0 ||
	    (size_t)(end - stop) < post_len || memcmp(stop, post, post_len))
		return 0;
	*us = v;
	return 1;
}

int kopt_tuner_parse_time(double *us, const char *report, const char *out)
{
	const char *hole = strstr(report, "{us}");
	const char *line = out;
	size_t pre, post;
	int found = 0;

	if (!hole || !out)
		return KOPT_ENOTFOUND;
	pre = (size_t)(hole - report);
	post = strlen(hole + 4);
	while (*line) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *p;
		for (p = line; p + pre <= end; p++) {
			double v;
			if (memcmp(p, report, pre))
				continue;
			if (number_at(p + pre, end, hole + 4, post, &v)) {
				*us = v;
				found = 1;
				break;
			}
			if (!pre)
				break;   /* an empty prefix anchors the line */
		}
		if (!eol)
			break;
		line = eol + 1;
	}
	return found ? 0 : KOPT_ENOTFOUND;
}

/*
 * The number after the word `word` (and blanks, '=' or ':') in
 * [p, end), or -1.
 */
static double number_after(const char *p, const char *end, const char *word)
{
	const char *start = p;
	size_t n = strlen(word);

	for (; p + n <= end; p++) {
		const char *q;
		char *stop;
		double v;
		if (memcmp(p, word, n) ||
		    (p > start && isalnum((unsigned char)p[-1])))
			continue;
		for (q = p + n; q < end && (*q == ' ' || *q == '=' ||
					   *q == ':'); q++)
			;
		if (q == p + n || q >= end || !(*q == '.' ||
						(*q >= '0' && *q <= '9')))
			continue;
		v = strtod(q, &stop);
		if (stop > q && stop <= end && isfinite(v))
			return v;
	}
	return -1;
}

int kopt_tuner_parse_spread(double *pct, const char *out, double us)
{
	const char *line = out;
	int found = 0;

	if (!out || !(us > 0))
		return KOPT_ENOTFOUND;
	while (*line) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		double lo = number_after(line, end, "min");
		double hi = number_after(line, end, "max");
		if (lo >= 0 && hi >= lo) {
			*pct = (hi - lo) / us * 100.0;
			found = 1;
		}
		if (!eol)
			break;
		line = eol + 1;
	}
	return found ? 0 : KOPT_ENOTFOUND;
}

static void add_invalid(struct kopt_tuner_trial *tr, const char *config,
			const char *why)
{
	KOPT_ALLOC_GROW(tr->invalids, tr->invalids_nr + 1,
			tr->invalids_alloc);
	tr->invalids[tr->invalids_nr].config = kopt_strdup(config);
	tr->invalids[tr->invalids_nr++].why = kopt_strdup(why ? why : "?");
}

static const char *status_of(enum kopt_task_state s)
{
	switch (s) {
	case KOPT_TASK_OK: return "ok";
	case KOPT_TASK_CRASHED: return "crashed";
	case KOPT_TASK_HUNG: return "hung";
	case KOPT_TASK_BUILD_FAILED: return "build-failed";
	default: return "failed";
	}
}

static const char *status_why(const char *status)
{
	if (!strcmp(status, "failed"))
		return "failed: its own check failed or it could not run";
	if (!strcmp(status, "crashed"))
		return "crashed";
	if (!strcmp(status, "hung"))
		return "hung (kopt.timeout)";
	if (!strcmp(status, "build-failed"))
		return "the build failed";
	if (!strcmp(status, "no-time"))
		return "printed no time (tune-time)";
	return status;
}

/* The parent's time at this trial, from its results file. */
static void parent_baseline(struct kopt_tuner_trial *tr, const char *top,
			    const struct kopt_kernel *k, const char *version,
			    const struct kopt_trial *t, double *spread)
{
	long n = kopt_version_number(version);
	struct kopt_results r = KOPT_RESULTS_INIT;
	struct kopt_buf path = KOPT_BUF_INIT;
	char parent[32];
	const struct kopt_results_entry *e;
	double us;

	*spread = NAN;
	tr->baseline_us = NAN;
	if (n <= 0)
		return;
	snprintf(parent, sizeof(parent), "v%ld", n - 1);
	kopt_buf_addstr(&path, top);
	kopt_path_results(&path, k->name, parent);
	if (access(path.buf, R_OK) ||
	    kopt_results_read_file(&r, path.buf, k->name, parent))
		goto done;
	e = kopt_results_find(&r, t->name, t->b, t->s, t->t);
	if (e && !kopt_results_metric(e, "duration_us", &us)) {
		tr->baseline_us = us;
		*spread = e->spread_pct;
		free(tr->baseline);
		tr->baseline = kopt_xstrfmt("parent %s", parent);
	}
done:
	kopt_results_release(&r);
	kopt_buf_release(&path);
}

struct kopt_tuner_status {
	const char *phase;              /* "measuring", "cached", ... */
	size_t done, planned;
	double best_us;                 /* NAN while none */
	const char *best;               /* its configuration, or NULL */
	double left_s;                  /* NAN while unknown */
	const char *last;               /* the configuration just done */
	const char *last_why;           /* why it was invalid, or NULL */
	const char *trial;
	double elapsed_s;
};

static void report(struct kopt_progress *p, const struct kopt_tuner_status *st)
{
	struct kopt_buf what = KOPT_BUF_INIT;

	if (!p)
		return;
	kopt_buf_addstr(&what, st->phase ? st->phase : "");
	if (st->best)
		kopt_buf_addf(&what, ", best %.1f us (%s)", st->best_us,
			      st->best);
	if (isfinite(st->left_s))
		kopt_buf_addf(&what, ", about %.0f s left", st->left_s);
	kopt_progress_set_total(p, st->planned);
	kopt_progress_what(p, "%s", what.buf);
	kopt_progress_update(p, st->done);
	kopt_buf_release(&what);
}

struct run_ctx {
	git_repository *repo;
	const struct kopt_config *cfg;
	const struct kopt_kernel *k;
	const struct kopt_tuner_opts *opts;
	struct kopt_executor *ex;
	struct kopt_progress *progress;
	struct kopt_tunecache cache;
	char *cache_path, *cache_label;
	char build_key[13];
	const char *time_report;
	double start;
	int refused;
	struct kopt_tuneplan plan;      /* journaled after every batch */
	char *plan_path;
};

/*
 * Report an evaluation (`st` says which) with the progress so far and
 * the best configuration yet; `values` and `best_text` are scratch.
 */
static void report_eval(struct run_ctx *c, struct kopt_tuner_status *st,
			const struct kopt_tune_search *s,
			const struct kopt_tune_space *sp, double *values,
			struct kopt_buf *best_text)
{
	st->done = s->evals;
	st->planned = kopt_tune_search_expected(s);
	if (s->best != SIZE_MAX) {
		kopt_buf_reset(best_text);
		kopt_tune_space_values(sp, s->best, values);
		kopt_tune_config_text(best_text, c->k, values);
		st->best = best_text->buf;
		st->best_us = s->us[s->best];
	}
	st->elapsed_s = now_s() - c->start;
	report(c->progress, st);
}

static int tune_trial(struct run_ctx *c, struct kopt_tuner_result *res,
		      const struct kopt_trial *t)
{
	const struct kopt_kernel *k = c->k;
	struct kopt_tune_space sp = KOPT_TUNE_SPACE_INIT;
	struct kopt_tune_search s;
	struct kopt_tuner_trial *tr;
	struct kopt_tuner_status st;
	size_t *batch = NULL, batch_max, i, pick;
	double *values = kopt_calloc(k->tune_nr, sizeof(double));
	double fresh_s = 0, per_eval = NAN, spread;
	size_t fresh_n = 0;
	int checked = 0, ret = 0;
	struct kopt_buf best_text = KOPT_BUF_INIT;

	KOPT_ALLOC_GROW(res->trials, res->trials_nr + 1, res->trials_alloc);
	tr = &res->trials[res->trials_nr++];
	memset(tr, 0, sizeof(*tr));
	tr->trial = kopt_strdup(t->name);
	tr->b = t->b;
	tr->s = t->s;
	tr->t = t->t;
	tr->best_us = tr->best_spread = tr->default_us = NAN;
	tr->space_full = kopt_tune_full_size(k);
	{
		struct kopt_buf d = KOPT_BUF_INIT;
		kopt_tune_config_text(&d, k, k->tune_default);
		tr->dflt = kopt_buf_detach(&d, NULL);
	}
	if ((ret = kopt_tune_enumerate(&sp, k, t->b, t->s, t->t,
				       c->cfg->path)))
		goto done;
	tr->space = sp.nr;
	if (!sp.nr)
		goto done;   /* reported by the caller */
	kopt_tune_search_init(&s, &sp, c->opts->strategy, c->opts->seed);
	s.noise_pct = c->cfg->noise_pct;
	s.max_evals = c->opts->max_evals;
	tr->baseline = kopt_strdup("hand-picked");
	parent_baseline(tr, c->ex->top, k, c->opts->version, t, &spread);
	s.baseline_us = tr->baseline_us;
	s.baseline_spread = spread;

	batch_max = c->ex->kind == KOPT_EXEC_SLURM ?
		    (c->ex->tasks_at_once > 0 ? (size_t)c->ex->tasks_at_once :
		     16) :
		    (c->ex->build_jobs > 0 ? (size_t)c->ex->build_jobs :
		     (size_t)(sysconf(_SC_NPROCESSORS_ONLN) > 0 ?
			      sysconf(_SC_NPROCESSORS_ONLN) : 1));
	if (batch_max < 2)
		batch_max = 2;
	batch = kopt_calloc(batch_max, sizeof(*batch));
	{
		struct kopt_buf title = KOPT_BUF_INIT;
		kopt_buf_addf(&title, "tuning %s %s at %s", k->name,
			      c->opts->version, t->name);
		c->progress = kopt_progress_start(title.buf,
						  kopt_tune_search_expected(&s));
		kopt_buf_release(&title);
	}
	memset(&st, 0, sizeof(st));
	st.trial = t->name;
	st.best_us = NAN;
	st.left_s = NAN;

	for (;;) {
		struct kopt_exec_task *tasks;
		size_t *task_pos, ntask = 0, n;
		struct kopt_buf *texts;
		double batch_start;
		int xret;

		if (c->ex->interrupted && *c->ex->interrupted) {
			res->interrupted = 1;
			break;
		}
		if (isfinite(per_eval) &&
		    now_s() - c->start + per_eval > c->opts->budget_s) {
			tr->budget_hit = 1;
			break;
		}
		n = kopt_tune_search_next(&s, batch, batch_max);
		if (!n)
			break;
		tasks = kopt_calloc(n, sizeof(*tasks));
		task_pos = kopt_calloc(n, sizeof(*task_pos));
		texts = kopt_calloc(n, sizeof(*texts));
		for (i = 0; i < n; i++) {
			const struct kopt_tunecache_line *hit = NULL;
			const struct kopt_tuneplan_eval *pe;
			struct kopt_buf id = KOPT_BUF_INIT, cmd = KOPT_BUF_INIT;
			struct kopt_vars vars = { k, c->opts->version, NULL,
						  t->b, t->s, t->t, 1, NULL };
			struct kopt_exec_task task = KOPT_EXEC_TASK_INIT;

			kopt_buf_init(&texts[i], 0);
			kopt_tune_space_values(&sp, batch[i], values);
			kopt_tune_config_text(&texts[i], k, values);
			if (c->opts->resume && (pe = kopt_tuneplan_find(&c->plan,
						t->name, texts[i].buf))) {
				/* the interrupted run's: where the plan stood */
				kopt_tune_search_record(&s, batch[i],
							pe->why ? NAN : pe->us,
							pe->spread);
				tr->resumed++;
				if (pe->why) {
					tr->invalid++;
					add_invalid(tr, texts[i].buf, pe->why);
				}
				continue;
			}
			if (c->opts->resume && !tr->resumed_of)
				tr->resumed_of = kopt_tune_search_expected(&s);
			if (!c->opts->no_cache) {
				if (c->ex->kind == KOPT_EXEC_LOCAL)
					hit = kopt_tunecache_find(
						&c->cache, c->ex->local_device,
						c->ex->local_uuid, t->b, t->s,
						t->t, res->tree, c->build_key,
						texts[i].buf);
				else if (c->ex->device_model)
					hit = kopt_tunecache_find_model(
						&c->cache, c->ex->device_model,
						t->b, t->s, t->t, res->tree,
						c->build_key, texts[i].buf);
			}
			if (hit) {
				int ok = !strcmp(hit->status, "ok");
				kopt_tune_search_record(&s, batch[i],
							ok ? hit->us : NAN,
							hit->spread_pct);
				kopt_tuneplan_add(&c->plan, t->name,
						  texts[i].buf,
						  ok ? hit->us : NAN,
						  hit->spread_pct, ok ? NULL :
						  status_why(hit->status));
				tr->cached++;
				if (!ok) {
					tr->invalid++;
					add_invalid(tr, texts[i].buf,
						    status_why(hit->status));
				}
				st.phase = "cached";
				st.last = texts[i].buf;
				st.last_why = ok ? NULL : status_why(hit->status);
				report_eval(c, &st, &s, &sp, values,
					    &best_text);
				continue;
			}
			kopt_tune_config_id(&id, k, values);
			vars.tiling = id.buf;
			vars.tune_values = values;
			if (k->build) {
				char *what = kopt_xstrfmt("%s: kernel '%s': "
							  "build", c->cfg->path,
							  k->name);
				ret = kopt_config_expand(&cmd, k->build, &vars,
							 what);
				free(what);
				task.build = kopt_buf_detach(&cmd, NULL);
			}
			if (!ret) {
				char *what = kopt_xstrfmt("%s: kernel '%s': run",
							  c->cfg->path, k->name);
				ret = kopt_config_expand(&cmd, k->run, &vars,
							 what);
				free(what);
				task.run = kopt_buf_detach(&cmd, NULL);
			}
			kopt_buf_release(&id);
			kopt_buf_release(&cmd);
			tasks[ntask] = task;
			task_pos[ntask++] = i;
			if (ret)
				break;
		}
		batch_start = now_s();
		xret = ret;
		if (!xret && ntask) {
			st.phase = "building";
			st.last = NULL;
			st.elapsed_s = now_s() - c->start;
			report(c->progress, &st);
			xret = kopt_executor_build(c->ex, tasks, ntask);
		}
		if (!xret && ntask) {
			st.phase = c->ex->kind == KOPT_EXEC_SLURM ?
				   "on the cluster" : "measuring";
			report(c->progress, &st);
			xret = kopt_executor_run(c->ex, tasks, ntask);
		}
		for (i = 0; !ret && i < ntask; i++) {
			struct kopt_exec_task *tk = &tasks[i];
			struct kopt_tunecache_line l;
			const char *text = texts[task_pos[i]].buf;
			const char *status;
			double us = NAN, spread = NAN;
			char date[32];

			if (tk->state == KOPT_TASK_PENDING ||
			    tk->state == KOPT_TASK_CANCELLED) {
				/* not measured: neither cached nor counted */
				if (tk->state == KOPT_TASK_CANCELLED &&
				    !(c->ex->interrupted &&
				      *c->ex->interrupted)) {
					kopt_tune_search_record(&s, batch[task_pos[i]],
								NAN, NAN);
					kopt_tuneplan_add(&c->plan, t->name,
							  text, NAN, NAN,
							  tk->why);
					tr->invalid++;
					add_invalid(tr, text, tk->why);
				}
				continue;
			}
			status = status_of(tk->state);
			if (tk->state == KOPT_TASK_OK &&
			    kopt_tuner_parse_time(&us, c->time_report,
						  tk->out.buf))
				status = "no-time";
			else if (tk->state == KOPT_TASK_OK &&
				 kopt_tuner_parse_spread(&spread, tk->out.buf,
							 us))
				spread = NAN;
			memset(&l, 0, sizeof(l));
			utc_now(date, sizeof(date));
			l.device = tk->device[0] ? tk->device :
				   c->ex->local_device;
			l.uuid = tk->uuid[0] ? tk->uuid : c->ex->local_uuid;
			if (!l.device[0]) {
				l.device = "unknown";
				l.uuid = "unknown";
			}
			l.b = t->b;
			l.s = t->s;
			l.t = t->t;
			l.tree = res->tree;
			l.build = c->build_key;
			l.config = (char *)text;
			l.status = (char *)status;
			l.us = strcmp(status, "ok") ? NAN : us;
			l.spread_pct = strcmp(status, "ok") ? NAN : spread;
			l.run_s = tk->run_s > 0 ? tk->run_s : NAN;
			l.date = date;
			kopt_tunecache_put(&c->cache, &l);
			kopt_tune_search_record(&s, batch[task_pos[i]], l.us,
						l.spread_pct);
			kopt_tuneplan_add(&c->plan, t->name, text, l.us,
					  l.spread_pct, strcmp(status, "ok") ?
					  (tk->why ? tk->why : status_why(status)) :
					  NULL);
			if (strcmp(status, "ok")) {
				tr->invalid++;
				add_invalid(tr, text, tk->why ? tk->why :
					    status_why(status));
			}
			fresh_n++;
			st.phase = "measured";
			st.last = text;
			st.last_why = strcmp(status, "ok") ?
				      (tk->why ? tk->why : status_why(status)) :
				      NULL;
			report_eval(c, &st, &s, &sp, values, &best_text);
		}
		if (ntask)
			fresh_s += now_s() - batch_start;
		/* what was measured is kept, whatever happens next */
		if (ntask && kopt_tunecache_write(&c->cache, c->cache_path))
			ret = -1;
		/* and where the plan stands, to go on from there */
		if (!ret && kopt_tuneplan_write(&c->plan, c->plan_path))
			ret = -1;
		for (i = 0; i < ntask; i++)
			kopt_exec_task_release(&tasks[i]);
		for (i = 0; i < n; i++)
			kopt_buf_release(&texts[i]);
		free(tasks);
		free(task_pos);
		free(texts);
		if (xret == KOPT_EINTR) {
			res->interrupted = 1;
			break;
		}
		if (!ret && xret)
			ret = xret;
		if (ret)
			break;
		if (fresh_n) {
			size_t expected = kopt_tune_search_expected(&s);
			per_eval = fresh_s / (double)fresh_n;
			st.left_s = per_eval * (double)(expected > s.evals ?
							expected - s.evals : 0);
			if (!checked && !c->opts->force &&
			    now_s() - c->start + st.left_s > c->opts->budget_s) {
				ret = kopt_error("the tuning of %s %s at trial "
						 "'%s' would take about %.0f s "
						 "more (%zu configurations at "
						 "%.1f s each), past the budget "
						 "of %.0f s: prune the space "
						 "(tune-restrict), choose "
						 "--strategy coarse-to-fine or "
						 "random, lower --max-evals, or "
						 "--force", k->name,
						 c->opts->version, t->name,
						 st.left_s, expected - s.evals,
						 per_eval, c->opts->budget_s);
				c->refused = 1;
				ret = KOPT_ETOOBIG;
				break;
			}
			checked = 1;
		}
	}
	kopt_progress_stop(&c->progress);
	tr->evals = s.evals;
	tr->stop = s.stop;
	if (c->opts->resume && !tr->resumed_of)
		tr->resumed_of = s.evals;
	if (sp.dflt != SIZE_MAX && s.state[sp.dflt] == 2)
		tr->default_us = s.us[sp.dflt];
	pick = kopt_tune_search_pick(&s);
	if (pick != s.best) {
		struct kopt_buf b = KOPT_BUF_INIT;
		kopt_tune_space_values(&sp, s.best, values);
		kopt_tune_config_text(&b, k, values);
		tr->fastest = kopt_buf_detach(&b, NULL);
		tr->fastest_us = s.us[s.best];
		tr->fastest_spread = s.spread[s.best];
	}
	if (pick != SIZE_MAX) {
		struct kopt_buf b = KOPT_BUF_INIT;
		kopt_tune_space_values(&sp, pick, values);
		kopt_tune_config_text(&b, k, values);
		tr->best = kopt_buf_detach(&b, NULL);
		kopt_tune_config_id(&b, k, values);
		tr->best_id = kopt_buf_detach(&b, NULL);
		tr->best_us = s.us[pick];
		tr->best_spread = s.spread[pick];
		{
			const struct kopt_tunecache_line *l = NULL;
			size_t j;
			for (j = 0; j < c->cache.nr && !l; j++) {
				const struct kopt_tunecache_line *x =
					&c->cache.lines[j];
				if (x->b == t->b && x->s == t->s &&
				    x->t == t->t && !strcmp(x->tree, res->tree) &&
				    !strcmp(x->build, c->build_key) &&
				    !strcmp(x->config, tr->best) &&
				    !strcmp(x->status, "ok") && x->us == tr->best_us)
					l = x;
			}
			if (l) {
				tr->device = kopt_strdup(l->device);
				tr->uuid = kopt_strdup(l->uuid);
			}
		}
	}
	kopt_tune_search_release(&s);
done:
	kopt_tune_space_release(&sp);
	kopt_buf_release(&best_text);
	free(values);
	free(batch);
	return ret;
}

/* Whether two lists of trial names hold the same names. */
static int same_trials(const struct kopt_strvec *a,
		       const struct kopt_strvec *b)
{
	size_t i;

	for (i = 0; i < a->nr; i++)
		if (!kopt_strvec_has(b, a->v[i]))
			return 0;
	for (i = 0; i < b->nr; i++)
		if (!kopt_strvec_has(a, b->v[i]))
			return 0;
	return 1;
}

static int resume_conflict(const char *k, const char *v, const char *opt,
			   const char *given, const char *planned)
{
	return kopt_error("--resume follows the interrupted tuning of %s %s, "
			  "whose %s is %s, not %s; drop %s, or tune again "
			  "without --resume", k, v, opt, planned, given, opt);
}

/*
 * A resumed run takes its plan's choices: one the user gave again with
 * another value is refused, not silently replaced.  `o` still holds
 * the options as given; the plan's have been checked to parse.
 */
static int check_given(const struct kopt_tuner_opts *o,
		       const struct kopt_tuneplan *p, const char *k,
		       const char *v)
{
	char a[32], b[32];

	if ((o->given & KOPT_TUNE_GIVEN_STRATEGY) &&
	    strcmp(kopt_tune_strategy_name(o->strategy), p->strategy))
		return resume_conflict(k, v, "--strategy",
				       kopt_tune_strategy_name(o->strategy),
				       p->strategy);
	if ((o->given & KOPT_TUNE_GIVEN_SEED) && o->seed != p->seed) {
		snprintf(a, sizeof(a), "%llu", (unsigned long long)o->seed);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)p->seed);
		return resume_conflict(k, v, "--seed", a, b);
	}
	if ((o->given & KOPT_TUNE_GIVEN_MAX_EVALS) &&
	    o->max_evals != p->max_evals) {
		snprintf(a, sizeof(a), "%zu", o->max_evals);
		if (p->max_evals)
			snprintf(b, sizeof(b), "%zu", p->max_evals);
		else
			snprintf(b, sizeof(b), "the strategy's own");
		return resume_conflict(k, v, "--max-evals", a, b);
	}
	if ((o->given & KOPT_TUNE_GIVEN_TRIALS) &&
	    !same_trials(&o->trials, &p->trials)) {
		struct kopt_buf x = KOPT_BUF_INIT, y = KOPT_BUF_INIT;
		size_t i;
		int ret;
		for (i = 0; i < o->trials.nr; i++)
			kopt_buf_addf(&x, "%s%s", i ? ", " : "",
				      o->trials.v[i]);
		for (i = 0; i < p->trials.nr; i++)
			kopt_buf_addf(&y, "%s%s", i ? ", " : "",
				      p->trials.v[i]);
		ret = resume_conflict(k, v, "--trial", x.buf, y.buf);
		kopt_buf_release(&x);
		kopt_buf_release(&y);
		return ret;
	}
	return 0;
}

/*
 * The plan this run follows: a new one from the options, or with
 * --resume the interrupted run's, whose strategy, seed, --max-evals and
 * trials then replace the options'.
 */
static int start_plan(struct run_ctx *c, struct kopt_tuner_opts *o,
		      struct kopt_tuner_result *out)
{
	const char *k = c->k->name, *v = o->version;
	int ret;

	c->plan_path = kopt_tuneplan_path(c->repo, k, v);
	if (!o->resume) {
		c->plan.strategy = kopt_strdup(
			kopt_tune_strategy_name(o->strategy));
		c->plan.seed = o->seed;
		c->plan.max_evals = o->max_evals;
		c->plan.tree = kopt_strdup(out->tree);
		c->plan.build = kopt_strdup(c->build_key);
		return 0;
	}
	ret = kopt_tuneplan_read(&c->plan, c->plan_path);
	if (ret == KOPT_ENOTFOUND)
		return kopt_error("no interrupted tuning of %s %s to resume; "
				  "run it without --resume", k, v);
	if (ret)
		return ret;
	if (strcmp(c->plan.tree, out->tree) ||
	    strcmp(c->plan.build, c->build_key))
		return kopt_error("the sources or commands of %s %s changed "
				  "since its tuning was interrupted; run it "
				  "again without --resume", k, v);
	if ((ret = check_given(o, &c->plan, k, v)))
		return ret;
	if (kopt_tune_strategy_parse(&o->strategy, c->plan.strategy))
		return kopt_error("%s: unknown strategy '%s'; remove it and "
				  "tune again without --resume",
				  c->plan_path, c->plan.strategy);
	o->seed = c->plan.seed;
	o->max_evals = c->plan.max_evals;
	o->trials = c->plan.trials;
	free(out->strategy);
	out->strategy = kopt_strdup(c->plan.strategy);
	out->max_evals = o->max_evals;
	return 0;
}

int kopt_tuner_run(struct kopt_tuner_result *out, git_repository *repo,
		   const struct kopt_config *cfg,
		   const struct kopt_kernel *k,
		   const struct kopt_tuner_opts *opts,
		   struct kopt_executor *ex)
{
	struct run_ctx c;
	struct kopt_tuner_opts o = *opts;
	struct kopt_buf src = KOPT_BUF_INIT;
	struct kopt_buf path = KOPT_BUF_INIT;
	struct kopt_vars vars = { k, opts->version, NULL, 0, 0, 0, 0, NULL };
	git_oid tree;
	char hex[GIT_OID_HEXSZ + 1], *what;
	size_t i;
	int ret = 0;

	memset(&c, 0, sizeof(c));
	kopt_strvec_init(&c.plan.trials);
	c.repo = repo;
	c.cfg = cfg;
	c.k = k;
	c.opts = &o;
	c.ex = ex;
	c.time_report = k->tune_time ? k->tune_time : KOPT_DEFAULT_TUNE_TIME;
	c.start = now_s();
	out->kernel = kopt_strdup(k->name);
	out->version = kopt_strdup(opts->version);
	out->strategy = kopt_strdup(kopt_tune_strategy_name(opts->strategy));
	out->max_evals = opts->max_evals;
	out->executor = kopt_strdup(kopt_executor_name(ex));
	utc_now(out->date, sizeof(out->date));

	if (!k->tune_nr) {
		ret = kopt_error("kernel '%s' has no tuning space: add 'tune = "
				 "NAME=v1,v2,...' and 'tune-default' to its "
				 "section of %s", k->name, cfg->path);
		goto done;
	}
	what = kopt_xstrfmt("%s: kernel '%s': source", cfg->path, k->name);
	ret = kopt_config_expand(&src, k->source, &vars, what);
	free(what);
	if (ret)
		goto done;
	ret = kopt_repo_worktree_tree_id(&tree, repo, src.buf);
	if (ret == KOPT_ENOTFOUND || (!ret && 0)) {
		ret = kopt_error("%s %s has no sources at '%s'", k->name,
				 opts->version, src.buf);
		goto done;
	}
	if (ret)
		goto done;
	git_oid_tostr(hex, sizeof(hex), &tree);
	out->tree = kopt_strdup(hex);
	kopt_tunecache_build_key(c.build_key, k->build, k->run, c.time_report);
	kopt_path_tuning(&path, k->name, opts->version);
	c.cache_label = kopt_strdup(path.buf);
	c.cache_path = kopt_xstrfmt("%s%s", ex->top, path.buf);
	if ((ret = kopt_tunecache_read(&c.cache, c.cache_path, c.cache_label)) ||
	    (ret = kopt_lock_check(c.cache_path, c.cache_label)) ||
	    (ret = start_plan(&c, &o, out)))
		goto done;
	if (ex->kind == KOPT_EXEC_LOCAL) {
		if ((ret = kopt_executor_lock(ex)))
			goto done;
		kopt_executor_local_device(ex);
	}
	if (o.trials.nr) {
		for (i = 0; i < o.trials.nr; i++)
			if (!kopt_config_trial(cfg, o.trials.v[i])) {
				ret = kopt_error("unknown trial '%s' (see the "
						 "[trial] sections of %s)",
						 o.trials.v[i], cfg->path);
				goto done;
			}
	} else if (!cfg->trials_nr) {
		ret = kopt_error("%s defines no trial to tune at", cfg->path);
		goto done;
	}
	if (!o.resume)
		for (i = 0; i < (o.trials.nr ? o.trials.nr : cfg->trials_nr);
		     i++)
			kopt_strvec_push(&c.plan.trials, o.trials.nr ?
					 o.trials.v[i] : cfg->trials[i].name);
	for (i = 0; !ret && i < (o.trials.nr ? o.trials.nr :
				 cfg->trials_nr); i++) {
		const struct kopt_trial *t = o.trials.nr ?
			kopt_config_trial(cfg, o.trials.v[i]) :
			&cfg->trials[i];
		ret = tune_trial(&c, out, t);
		if (out->interrupted)
			break;
	}
	/* a run that ended on its own leaves no plan to resume */
	if (!out->interrupted && (!ret || ret == KOPT_ETOOBIG))
		unlink(c.plan_path);
done:
	out->elapsed_s = now_s() - c.start;
	kopt_tuneplan_release(&c.plan);
	free(c.plan_path);
	if (ex->kind == KOPT_EXEC_LOCAL)
		kopt_executor_unlock(ex);
	kopt_tunecache_release(&c.cache);
	free(c.cache_path);
	free(c.cache_label);
	kopt_buf_release(&src);
	kopt_buf_release(&path);
	return ret;
}

void kopt_tuner_result_release(struct kopt_tuner_result *r)
{
	size_t i, j;

	for (i = 0; i < r->trials_nr; i++) {
		struct kopt_tuner_trial *t = &r->trials[i];
		free(t->trial);
		free(t->device);
		free(t->uuid);
		free(t->best);
		free(t->best_id);
		free(t->fastest);
		free(t->dflt);
		free(t->baseline);
		for (j = 0; j < t->invalids_nr; j++) {
			free(t->invalids[j].config);
			free(t->invalids[j].why);
		}
		free(t->invalids);
	}
	free(r->trials);
	free(r->kernel);
	free(r->version);
	free(r->strategy);
	free(r->tree);
	free(r->executor);
	memset(r, 0, sizeof(*r));
}

/* --- writing the outcome ------------------------------------------- */

static void add_number(cJSON *o, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static cJSON *trial_json(const struct kopt_tuner_result *r,
			 const struct kopt_tuner_trial *t)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "b", (double)t->b);
	cJSON_AddNumberToObject(o, "s", (double)t->s);
	cJSON_AddNumberToObject(o, "t", (double)t->t);
	if (t->device)
		cJSON_AddStringToObject(o, "device", t->device);
	if (t->uuid)
		cJSON_AddStringToObject(o, "device_uuid", t->uuid);
	cJSON_AddStringToObject(o, "best", t->best ? t->best : "");
	add_number(o, "best_us", t->best_us);
	cJSON_AddStringToObject(o, "hand_picked", t->dflt ? t->dflt : "");
	add_number(o, "hand_picked_us", t->default_us);
	add_number(o, "gain_pct", isfinite(t->default_us) &&
		   isfinite(t->best_us) && t->default_us > 0 ?
		   (t->default_us - t->best_us) / t->default_us * 100.0 : NAN);
	cJSON_AddNumberToObject(o, "evaluated", (double)t->evals);
	cJSON_AddNumberToObject(o, "cached", (double)t->cached);
	cJSON_AddNumberToObject(o, "invalid", (double)t->invalid);
	cJSON_AddNumberToObject(o, "space", (double)t->space);
	cJSON_AddNumberToObject(o, "space_before_restrictions",
				(double)t->space_full);
	cJSON_AddStringToObject(o, "strategy", r->strategy);
	cJSON_AddStringToObject(o, "tree", r->tree ? r->tree : "");
	cJSON_AddStringToObject(o, "date", r->date);
	return o;
}

static void us_cell(struct kopt_buf *out, double us)
{
	if (isfinite(us))
		kopt_buf_addf(out, "%.1f", us);
	else
		kopt_buf_addstr(out, "not measured");
}

static void tuning_block(struct kopt_buf *out, const struct kopt_tuner_result *r,
			 const char *nl)
{
	const char *device = NULL;
	size_t i;

	for (i = 0; i < r->trials_nr && !device; i++)
		device = r->trials[i].device;
	kopt_buf_addf(out, "**Tuning** (%s, %s, %.10s):%s%s",
		      device ? device : "no device", r->strategy, r->date, nl,
		      nl);
	kopt_buf_addf(out, "| Trial | Best configuration | Best us | "
		      "Hand-picked | Hand-picked us | Gain | Evaluated |%s"
		      "|---|---|---|---|---|---|---|%s", nl, nl);
	for (i = 0; i < r->trials_nr; i++) {
		const struct kopt_tuner_trial *t = &r->trials[i];
		kopt_buf_addf(out, "| %s (b=%ld, s=%ld, t=%ld) | %s | ",
			      t->trial, t->b, t->s, t->t,
			      t->best ? t->best : "none valid");
		us_cell(out, t->best_us);
		kopt_buf_addf(out, " | %s | ", t->dflt);
		us_cell(out, t->default_us);
		if (isfinite(t->default_us) && isfinite(t->best_us) &&
		    t->default_us > 0)
			kopt_buf_addf(out, " | %.1f%% | ",
				      (t->default_us - t->best_us) /
				      t->default_us * 100.0);
		else
			kopt_buf_addstr(out, " | not measured | ");
		kopt_buf_addf(out, "%zu of %zu (%zu invalid) |%s", t->evals,
			      t->space, t->invalid, nl);
	}
}

/* The lines [first, last] of an existing **Tuning** block of `v`. */
static int find_block(const struct kopt_devlog *dl,
		      const struct kopt_devlog_version *v, int *first,
		      int *last)
{
	int line;

	for (line = v->line + 1; line <= v->last_line; line++) {
		size_t a = kopt_devlog_offset(dl, line);
		size_t b = kopt_devlog_offset(dl, line + 1);
		if (b - a >= 10 && !memcmp(dl->text.buf + a, "**Tuning**", 10)) {
			int l = line + 1, in_table = 0;
			while (l <= v->last_line) {
				size_t x = kopt_devlog_offset(dl, l);
				size_t y = kopt_devlog_offset(dl, l + 1);
				const char *p = dl->text.buf + x;
				int blank = y - x <= 2 && (y == x || *p == '\n' ||
							   *p == '\r');
				if (!blank && *p == '|')
					in_table = 1;
				else if (blank && in_table)
					break;
				else if (!blank)
					break;
				l++;
			}
			*first = line;
			*last = l - 1;
			return 1;
		}
	}
	return 0;
}

static int splice_devlog(struct kopt_buf *out, const char *path,
			 const char *label, const struct kopt_tuner_result *r)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT, check = KOPT_DEVLOG_INIT;
	const struct kopt_devlog_version *v;
	struct kopt_buf block = KOPT_BUF_INIT;
	int first, last, ret;
	const char *nl;

	ret = kopt_devlog_read_file(&dl, path);
	if (ret == KOPT_ENOTFOUND) {
		kopt_warning("no devlog '%s': the tuning is recorded in the "
			     "results only", label);
		return 1;
	}
	if (ret)
		return ret;
	v = kopt_devlog_find_version(&dl, r->version);
	if (!v) {
		kopt_warning("%s has no entry for %s: the tuning is recorded "
			     "in the results only", label, r->version);
		kopt_devlog_release(&dl);
		return 1;
	}
	nl = dl.crlf ? "\r\n" : "\n";
	tuning_block(&block, r, nl);
	kopt_buf_addbuf(out, &dl.text);
	if (find_block(&dl, v, &first, &last)) {
		size_t a = kopt_devlog_offset(&dl, first);
		size_t b = kopt_devlog_offset(&dl, last + 1);
		kopt_buf_splice(out, a, b - a, block.buf, block.len);
	} else {
		size_t at = kopt_devlog_offset(&dl, v->content_last + 1);
		struct kopt_buf ins = KOPT_BUF_INIT;
		if (at > 0 && out->buf[at - 1] != '\n') {
			kopt_buf_addstr(&ins, nl);
		}
		kopt_buf_addstr(&ins, nl);
		kopt_buf_addbuf(&ins, &block);
		if (at < out->len)
			kopt_buf_addstr(&ins, nl);
		kopt_buf_insert(out, at, ins.buf, ins.len);
		kopt_buf_release(&ins);
	}
	/* the result must still parse, with the same versions */
	ret = kopt_devlog_parse(&check, out->buf, out->len, label);
	if (!ret && check.versions_nr != dl.versions_nr)
		ret = kopt_error("%s: adding the tuning block would change the "
				 "versions the devlog holds; left as it was",
				 label);
	kopt_devlog_release(&check);
	kopt_devlog_release(&dl);
	kopt_buf_release(&block);
	return ret;
}

int kopt_tuner_write(const struct kopt_tuner_result *r, const char *top,
		     int *devlog)
{
	struct kopt_results res = KOPT_RESULTS_INIT;
	struct kopt_buf rel = KOPT_BUF_INIT, path = KOPT_BUF_INIT;
	struct kopt_buf text = KOPT_BUF_INIT;
	struct kopt_buf dl_rel = KOPT_BUF_INIT, dl_path = KOPT_BUF_INIT;
	struct kopt_buf dl_text = KOPT_BUF_INIT;
	struct kopt_filetx tx = KOPT_FILETX_INIT;
	cJSON *tuning;
	size_t i;
	int ret, have_devlog;

	kopt_path_results(&rel, r->kernel, r->version);
	kopt_buf_addf(&path, "%s%s", top, rel.buf);
	ret = kopt_results_read_file(&res, path.buf, r->kernel, r->version);
	if (ret == KOPT_ENOTFOUND) {
		res.kernel = kopt_strdup(r->kernel);
		res.version = kopt_strdup(r->version);
		ret = 0;
	}
	if (ret)
		goto done;
	if (!res.extra)
		res.extra = cJSON_CreateObject();
	tuning = cJSON_GetObjectItemCaseSensitive(res.extra, "tuning");
	if (!cJSON_IsObject(tuning)) {
		cJSON_DeleteItemFromObjectCaseSensitive(res.extra, "tuning");
		tuning = cJSON_AddObjectToObject(res.extra, "tuning");
	}
	for (i = 0; i < r->trials_nr; i++) {
		const struct kopt_tuner_trial *t = &r->trials[i];
		if (!t->evals)
			continue;
		cJSON_DeleteItemFromObjectCaseSensitive(tuning, t->trial);
		cJSON_AddItemToObject(tuning, t->trial, trial_json(r, t));
	}
	kopt_results_format(&text, &res);
	kopt_filetx_add(&tx, path.buf, rel.buf, text.buf, text.len, 0, NULL);

	kopt_path_devlog(&dl_rel, r->kernel);
	kopt_buf_addf(&dl_path, "%s%s", top, dl_rel.buf);
	ret = splice_devlog(&dl_text, dl_path.buf, dl_rel.buf, r);
	have_devlog = ret == 0;
	*devlog = have_devlog;
	if (ret < 0)
		goto done;
	ret = 0;
	if (have_devlog)
		kopt_filetx_add(&tx, dl_path.buf, dl_rel.buf, dl_text.buf,
				dl_text.len, 0, NULL);
	ret = kopt_filetx_commit(&tx);
done:
	kopt_filetx_release(&tx);
	kopt_results_release(&res);
	kopt_buf_release(&rel);
	kopt_buf_release(&path);
	kopt_buf_release(&text);
	kopt_buf_release(&dl_rel);
	kopt_buf_release(&dl_path);
	kopt_buf_release(&dl_text);
	return ret;
}
