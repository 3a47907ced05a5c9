/*
 * PROFILE and VERIFY: build a version once, run its benchmark per trial
 * under the injection library (or replay recorded captures), turn the
 * captures into results, print the profiler contract, and write the
 * results file and the devlog performance blocks.  VERIFY is PROFILE
 * plus the verdict against the parent, per trial, and what the LEARN
 * gate will ask before its results can be committed.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "builtin.h"
#include "term-progress.h"
#include "cache.h"
#include "capture.h"
#include "device.h"
#include "devlog.h"
#include "executor.h"
#include "filetx.h"
#include "kb.h"
#include "learn.h"
#include "lockfile.h"
#include "bench.h"
#include "profile.h"
#include "progress.h"
#include "render.h"
#include "runner.h"
#include "verdict.h"
#include "hooks.h"
#include "results.h"
#include "strategy.h"
#include "strvec.h"
#include "version.h"
#include "paths.h"
#include "trailers.h"
#include "banned.h"

static const char *const profile_usage[] = {
	"git kopt profile <kernel> <version> [--trial <name> | --config "
	"b=<b>,s=<s>,t=<t>]...\n"
	"                        [--replay <capture>]... [--force] "
	"[--save-captures <dir>] [--json]\n"
	"                        [--no-devlog] [--verbose] "
	"[--gpu-wait <seconds>] [-q]",
	NULL
};

static const char *const verify_usage[] = {
	"git kopt verify <kernel> <version> [--trial <name> | --config "
	"b=<b>,s=<s>,t=<t>]...\n"
	"                       [--replay <capture>]... [--force] "
	"[--save-captures <dir>] [--commit] [--json]\n"
	"                       [--no-devlog] [--verbose] "
	"[--gpu-wait <seconds>] [-q]",
	NULL
};

struct trial_req {
	char *trial;            /* NULL for --config */
	long b, s, t;
};

static int parse_config(const char *spec, struct trial_req *out)
{
	char *copy = kopt_strdup(spec), *p = copy, *save = NULL, *tok;
	int seen = 0, ret = 0;

	out->trial = NULL;
	for (tok = strtok_r(p, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v;
		if (strlen(tok) < 3 || tok[1] != '=' || !strchr("bst", tok[0])) {
			ret = -1;
			break;
		}
		v = strtol(tok + 2, &end, 10);
		if (*end || v <= 0) {
			ret = -1;
			break;
		}
		if (tok[0] == 'b')
			out->b = v;
		else if (tok[0] == 's')
			out->s = v;
		else
			out->t = v;
		seen |= tok[0] == 'b' ? 1 : tok[0] == 's' ? 2 : 4;
	}
	free(copy);
	return ret || seen != 7 ? -1 : 0;
}

static void now_iso(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The git tree id of the version's directory at HEAD, or NULL. */
static char *version_tree(struct kopt_ctx *ctx, const char *dir)
{
	git_object *obj = NULL;
	git_tree_entry *te = NULL;
	char hex[GIT_OID_HEXSZ + 1], *ret = NULL;

	if (git_revparse_single(&obj, ctx->repo, "HEAD^{tree}") < 0) {
		git_error_clear();
		return NULL;
	}
	if (!git_tree_entry_bypath(&te, (git_tree *)obj, dir)) {
		git_oid_tostr(hex, sizeof(hex), git_tree_entry_id(te));
		ret = kopt_strdup(hex);
	}
	git_error_clear();
	git_tree_entry_free(te);
	git_object_free(obj);
	return ret;
}

static char *results_path(struct kopt_ctx *ctx, const char *kernel,
			  const char *version)
{
	struct kopt_buf rel = KOPT_BUF_INIT;
	char *p;

	kopt_path_results(&rel, kernel, version);
	p = kopt_ctx_path(ctx, rel.buf);
	kopt_buf_release(&rel);
	return p;
}

/*
 * The version this one is compared with: the parent recorded in its
 * results, else the version its devlog entry says it was created from
 * when that one has results, else the nearest lower version that has
 * results.
 */
static char *find_parent(struct kopt_ctx *ctx, const char *kernel,
			 const char *version, const struct kopt_results *cur,
			 const struct kopt_devlog *dl)
{
	long n = kopt_version_number(version), i;
	char *from;

	if (cur->parent)
		return kopt_strdup(cur->parent);
	from = kopt_devlog_created_from(kopt_devlog_find_version(dl, version));
	if (from && kopt_version_number(from) < n) {
		char *p = results_path(ctx, kernel, from);
		int found = !access(p, R_OK);
		free(p);
		if (found)
			return from;
	}
	free(from);
	for (i = n - 1; i >= 0; i--) {
		char *v = kopt_version_name(i);
		char *p = results_path(ctx, kernel, v);
		int found = !access(p, R_OK);
		free(p);
		if (found)
			return v;
		free(v);
	}
	return n > 0 ? kopt_version_name(n - 1) : NULL;
}

/*
 * The kernel's devlog, with an entry for the version (the base version's
 * is added when missing; later ones come from 'git kopt design').
 * Returns 1 when there is a devlog to write into, 0 when there is none.
 */
static int load_devlog(struct kopt_ctx *ctx, const char *kernel,
		       const char *version, const char *location,
		       struct kopt_devlog *dl, char **path)
{
	struct kopt_buf rel = KOPT_BUF_INIT;
	int ret;

	kopt_path_devlog(&rel, kernel);
	*path = kopt_ctx_path(ctx, rel.buf);
	ret = kopt_devlog_read_file(dl, *path);
	if (ret == KOPT_ENOTFOUND) {
		kopt_warning("no devlog '%s': results only (create it with "
			     "'git kopt kernel add')", rel.buf);
		kopt_buf_release(&rel);
		return 0;
	}
	kopt_lib_or_die(ret);
	if (!kopt_devlog_find_version(dl, version)) {
		struct kopt_devlog_new_version nv = { 0 };
		struct kopt_devlog_edit edit;
		int base = !strcmp(version, "v0");
		char *loc = kopt_xstrfmt("%s/", location);
		nv.name = version;
		nv.title = base ? "Base version" : "(to be described)";
		nv.location = loc;
		if (!base)
			kopt_warning("%s has no entry for %s: adding one; "
				     "'git kopt design' writes it for new "
				     "versions", rel.buf, version);
		ret = kopt_devlog_add_version(dl, &nv, &edit);
		free(loc);
		kopt_lib_or_die(ret);
	}
	kopt_buf_release(&rel);
	return 1;
}

/*
 * The top three optimizations of the knowledge base whose triggers hold
 * on this entry, ranked as strategize ranks them.
 */
static void catalog_opportunities(const struct kopt_kb *kb,
				  const struct kopt_config *cfg,
				  const struct kopt_kernel *k,
				  const char *version,
				  struct kopt_results_entry *e)
{
	struct kopt_results one = KOPT_RESULTS_INIT;
	struct kopt_strategy st;
	size_t i;

	memset(&st, 0, sizeof(st));
	/* a view of the one entry; nothing of it is owned here */
	one.kernel = k->name;
	one.version = (char *)version;
	one.entries = e;
	one.entries_nr = 1;
	if (kopt_strategy_compute(&st, kb, &one, cfg, k, version, version,
				  NULL, 3))
		goto done;
	for (i = 0; i < st.apply_nr && e->opportunities_nr < 3; i++) {
		const struct kopt_strategy_item *it = &st.apply[i];
		const struct kopt_kb_entry *en = it->entry;
		struct kopt_results_opportunity *o;
		const char *name = en->row && en->row->cell[KOPT_COL_NAME] ?
				   en->row->cell[KOPT_COL_NAME] : en->path;
		const char *paren = strchr(it->holds.buf, '(');
		KOPT_ALLOC_GROW(e->opportunities, e->opportunities_nr + 1,
				e->opportunities_alloc);
		o = &e->opportunities[e->opportunities_nr++];
		memset(o, 0, sizeof(*o));
		o->name = kopt_strdup(name ? name : "?");
		o->est_gain_pct = it->impact_known ? it->impact : NAN;
		/* "decode (waves=0.42)" -> "waves=0.42" */
		if (paren)
			o->trigger = kopt_strndup(paren + 1,
						  strcspn(paren + 1, ")"));
		else
			o->trigger = kopt_strdup(it->holds.buf);
		o->detail = kopt_strdup(en->path);
	}
done:
	kopt_strategy_release(&st);
}

static int save_capture(const char *dir, const char *kernel,
			const char *version, const struct trial_req *r,
			const char *capture)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	char *path;
	int ret;

	if (r->trial)
		path = kopt_xstrfmt("%s/%s-%s-%s.json", dir, kernel, version,
				    r->trial);
	else
		path = kopt_xstrfmt("%s/%s-%s-b%ld-s%ld-t%ld.json", dir, kernel,
				    version, r->b, r->s, r->t);
	if (kopt_buf_read_file(&text, capture))
		ret = kopt_error("cannot read capture '%s': %s", capture,
				 strerror(errno));
	else
		ret = kopt_write_file_atomic(path, text.buf, text.len, 0644);
	kopt_buf_release(&text);
	free(path);
	return ret;
}

static void verdict_table(struct kopt_buf *out, const char *parent,
			  const char *version, const struct kopt_verdicts *v)
{
	size_t i;

	kopt_buf_addf(out, "### Verdict: %s (%s against %s)\n",
		      kopt_verdict_name(v->overall), version, parent);
	kopt_buf_addf(out, "| Trial | %s | %s | Change | Counts beyond | "
		      "Verdict |\n", parent, version);
	kopt_buf_addstr(out, "|-------|----|----|--------|---------------|"
			"---------|\n");
	for (i = 0; i < v->nr; i++) {
		const struct kopt_trial_verdict *t = &v->items[i];
		if (t->trial)
			kopt_buf_addf(out, "| %s |", t->trial);
		else
			kopt_buf_addf(out, "| b=%ld, s=%ld, t=%ld |", t->b, t->s,
				      t->t);
		kopt_buf_addf(out, " %.2f μs | %.2f μs | %+.1f%% | ±%.1f%% | "
			      "%s |\n", t->parent_us, t->child_us,
			      t->change_pct, t->threshold_pct,
			      kopt_verdict_name(t->verdict));
	}
}

static int run_git(struct kopt_ctx *ctx, const char **args)
{
	struct kopt_child c = KOPT_CHILD_INIT;
	int ret;

	kopt_strvec_push(&c.args, "git");
	kopt_strvec_pushv(&c.args, args);
	c.dir = ctx->top;
	c.flags = KOPT_CHILD_NO_STDIN | KOPT_CHILD_OUT_TO_ERR;
	ret = kopt_child_run(&c) ? -1 : c.exit_code == 0 ? 0 : 1;
	kopt_child_release(&c);
	return ret;
}

/*
 * VERIFY's own part: the verdict of the version against its parent, what
 * the LEARN gate will ask for, and the commit when asked (through git,
 * so the hooks judge it).
 */
static void print_verdict_json(const struct kopt_buf *js, const char *parent,
			       const struct kopt_verdicts *v)
{
	cJSON *o = cJSON_CreateObject(), *a;
	char *txt;
	size_t i;

	cJSON_AddItemToObject(o, "results", cJSON_Parse(js->buf));
	cJSON_AddStringToObject(o, "parent", parent ? parent : "");
	cJSON_AddStringToObject(o, "verdict", kopt_verdict_name(v->overall));
	a = cJSON_AddArrayToObject(o, "trials");
	for (i = 0; i < v->nr; i++) {
		const struct kopt_trial_verdict *it = &v->items[i];
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "trial", it->trial ? it->trial : "");
		cJSON_AddNumberToObject(t, "parent_us", it->parent_us);
		cJSON_AddNumberToObject(t, "child_us", it->child_us);
		cJSON_AddNumberToObject(t, "change_pct", it->change_pct);
		cJSON_AddNumberToObject(t, "threshold_pct", it->threshold_pct);
		cJSON_AddStringToObject(t, "verdict",
					kopt_verdict_name(it->verdict));
		cJSON_AddItemToArray(a, t);
	}
	txt = cJSON_Print(o);
	printf("%s\n", txt);
	cJSON_free(txt);
	cJSON_Delete(o);
}

/* The commit message of a verify: the verdict, a line a trial, trailers. */
static void verify_message(struct kopt_buf *msg, const char *kernel,
			   const char *version, const struct kopt_verdicts *v)
{
	struct kopt_trailers tr = KOPT_TRAILERS_INIT;
	size_t i;

	kopt_buf_addf(msg, "Verify %s %s: %s", kernel, version,
		      kopt_verdict_name(v->overall));
	if (v->nr)
		kopt_buf_addstr(msg, "\n");
	for (i = 0; i < v->nr; i++)
		kopt_buf_addf(msg, "\n%s: %.2f us -> %.2f us (%+.1f%%)",
			      v->items[i].trial ? v->items[i].trial : "ad hoc",
			      v->items[i].parent_us, v->items[i].child_us,
			      v->items[i].change_pct);
	kopt_trailers_add_step(&tr, kernel, version, KOPT_STEP_VERIFY);
	if (v->overall != KOPT_VERDICT_NONE)
		kopt_trailers_add(&tr, KOPT_TRAILER_VERDICT,
				  kopt_verdict_name(v->overall));
	/* the trial lines look like trailers: keep them a paragraph apart */
	kopt_buf_addstr(msg, "\n\n");
	kopt_trailers_format(msg, &tr);
	kopt_trailers_release(&tr);
}

/* --commit: through git, so that the hooks judge it; the exit status. */
static int commit_results(struct kopt_ctx *ctx, const char *kernel,
			  const char *version, const char *rrel,
			  const char *drel, const char *msg)
{
	const char *add[] = { "add", "--", rrel, drel, NULL };
	const char *cm[] = { "commit", "-q", "-m", msg, NULL };
	int ret;

	if (run_git(ctx, add) || (ret = run_git(ctx, cm)) < 0)
		return 128;
	if (ret) {
		fprintf(stderr, "the commit was refused; the results stay "
			"staged: do what the hook says, then 'git commit'\n");
		return 1;
	}
	fprintf(stderr, "committed the results of %s %s\n", kernel, version);
	return 0;
}

/*
 * Why there is no verdict: the parent has no results for these trials,
 * or has them from another device only (verdicts compare like with like).
 */
static void parent_elsewhere(const char *parent,
			     const struct kopt_results *pres,
			     const struct kopt_results *res)
{
	size_t i;

	for (i = 0; pres && i < res->entries_nr; i++) {
		const struct kopt_results_entry *e = &res->entries[i];
		const struct kopt_results_entry *o;
		struct kopt_buf there = KOPT_BUF_INIT, here = KOPT_BUF_INIT;
		if (kopt_results_find_like(pres, e) ||
		    !(o = kopt_results_find_elsewhere(pres, e)))
			continue;
		kopt_results_device_label(&there, &o->device);
		kopt_results_device_label(&here, &e->device);
		printf("The results of %s for these trials were measured on "
		       "another device, %s, not on this one, %s: profile %s "
		       "here first; verdicts compare like with like.\n",
		       parent, there.buf, here.buf, parent);
		kopt_buf_release(&there);
		kopt_buf_release(&here);
		return;
	}
	printf("The parent has no results for these trials: profile it "
	       "first.\n");
}

static int verdict(struct kopt_ctx *ctx, const struct kopt_config *cfg,
		   const char *kernel, const char *version, const char *parent,
		   const struct kopt_results *pres,
		   const struct kopt_results *res, const char *rpath,
		   const struct kopt_devlog *dl, const char *dpath,
		   const struct kopt_buf *js, int commit)
{
	struct kopt_verdicts v = KOPT_VERDICTS_INIT;
	struct kopt_buf out = KOPT_BUF_INIT, msg = KOPT_BUF_INIT;
	struct kopt_buf name = KOPT_BUF_INIT;
	const char *rrel = rpath + strlen(ctx->top);
	const char *drel = dpath ? dpath + strlen(ctx->top) : NULL;
	size_t i;
	int ret = 0;

	if (pres)
		kopt_verdict_compare(&v, pres, res, cfg->noise_pct);
	if (js) {
		print_verdict_json(js, parent, &v);
	} else if (v.overall == KOPT_VERDICT_NONE) {
		printf("### Verdict: none\n");
		if (!parent)
			printf("The base version has no parent.\n");
		else
			parent_elsewhere(parent, pres, res);
	} else {
		verdict_table(&out, parent, version, &v);
		fputs(out.buf, stdout);
	}

	verify_message(&msg, kernel, version, &v);

	if (v.overall == KOPT_VERDICT_REGRESSION && !js) {
		struct kopt_buf where = KOPT_BUF_INIT;
		for (i = 0; i < v.nr; i++)
			if (v.items[i].verdict == KOPT_VERDICT_REGRESSION)
				kopt_buf_addf(&where, "%s%s", where.len ?
					      ", " : "", v.items[i].trial ?
					      v.items[i].trial : "ad hoc");
		kopt_learn_suggest_name(&name, dl, kernel, version,
					"regression");
		printf("\nLEARN is due: %s is slower than %s on %s. Its "
		       "results cannot be committed before the anti-pattern "
		       "is written:\n  git kopt learn new anti-pattern %s "
		       "--from %s/%s\n", version, parent, where.buf, name.buf,
		       kernel, version);
		kopt_buf_release(&where);
	}
	if (commit) {
		ret = commit_results(ctx, kernel, version, rrel, drel, msg.buf);
	} else if (!js) {
		printf("\nRecord it: git kopt verify %s %s --commit, or commit "
		       "%s%s%s with the trailers Kopt-Kernel: %s, "
		       "Kopt-Version: %s, Kopt-Step: verify%s%s.\n", kernel,
		       version, rrel, drel ? " and " : "", drel ? drel : "",
		       kernel, version,
		       v.overall != KOPT_VERDICT_NONE ? ", Kopt-Verdict: " : "",
		       v.overall != KOPT_VERDICT_NONE ?
		       kopt_verdict_name(v.overall) : "");
	}
	kopt_verdicts_release(&v);
	kopt_buf_release(&out);
	kopt_buf_release(&msg);
	kopt_buf_release(&name);
	return ret;
}

/* Everything one PROFILE or VERIFY holds, from the options to the files. */
struct profile_job {
	int verify;
	/* options */
	struct kopt_strvec trials, configs, replays;
	int json, no_devlog, verbose, commit, force, quiet;
	int gpu_wait;                   /* INT_MIN: kopt.gpuWait */
	const char *save_dir;
	/* what to measure */
	const struct kopt_config *cfg;
	const struct kopt_kernel *k;
	const char *version;
	struct trial_req *reqs;
	size_t nreq;
	struct kopt_buf src;            /* the version's source directory */
	char *tree;                     /* its git tree id, or NULL */
	char *inject;
	char *inject_cache;
	struct kopt_device dev;
	int have_dev;
	struct kopt_bench m;
	struct kopt_executor ex;        /* its GPU lock held while measuring */
	/* what is there */
	char *rpath, *parent, *ppath, *dpath;
	struct kopt_results res, pres;
	int have_parent, have_devlog, have_kb;
	struct kopt_devlog dl;
	struct kopt_kb kb;
	char date[32];
	/* what was measured, one entry per request */
	struct kopt_results_entry *entries;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void add_trial(struct profile_job *j, const struct kopt_trial *t)
{
	j->reqs = kopt_realloc(j->reqs, (j->nreq + 1) * sizeof(*j->reqs));
	j->reqs[j->nreq].trial = t->name;
	j->reqs[j->nreq].b = t->b;
	j->reqs[j->nreq].s = t->s;
	j->reqs[j->nreq++].t = t->t;
}

/* The requests of --trial, each a trial of .kopt. */
static void named_trials(struct profile_job *j)
{
	size_t i;

	for (i = 0; i < j->trials.nr; i++) {
		const struct kopt_trial *t = kopt_config_trial(j->cfg,
							       j->trials.v[i]);
		if (!t)
			kopt_die("unknown trial '%s' (see [trial] in .kopt)",
				 j->trials.v[i]);
		add_trial(j, t);
	}
}

/* No --trial and no --config: every trial of .kopt. */
static void all_trials(struct profile_job *j)
{
	size_t i;

	if (!j->cfg->trials_nr)
		kopt_die("no trials in .kopt; add one or use --config");
	for (i = 0; i < j->cfg->trials_nr; i++)
		add_trial(j, &j->cfg->trials[i]);
}

static void parse_args(struct profile_job *j, int argc, const char **argv,
		       struct kopt_ctx *ctx)
{
	struct kopt_option options[] = {
		OPT_STRING_LIST(0, "trial", &j->trials, "name",
				"a trial of .kopt (default: all of them)"),
		OPT_STRING_LIST(0, "config", &j->configs, "b=..,s=..,t=..",
				"an ad-hoc configuration"),
		OPT_STRING_LIST(0, "replay", &j->replays, "capture",
				"use a recorded capture instead of the GPU, "
				"one per trial in order"),
		OPT_BOOL(0, "force", &j->force,
			 "replay a capture of another command, version or "
			 "device"),
		OPT_STRING(0, "save-captures", &j->save_dir, "dir",
			   "keep the raw captures as "
			   "<dir>/<kernel>-<version>-<trial>.json"),
		OPT_BOOL(0, "json", &j->json,
			 "print the results entries as JSON"),
		OPT_BOOL(0, "no-devlog", &j->no_devlog,
			 "do not write the devlog performance blocks"),
		OPT_BOOL('v', "verbose", &j->verbose,
			 "show the benchmark's output"),
		OPT_INT(0, "gpu-wait", &j->gpu_wait, "seconds",
			"wait this long for a busy GPU (default: "
			"kopt.gpuWait, else refuse at once)"),
		OPT__QUIET(&j->quiet),
		/* verify's alone: the last before the end, dropped below */
		OPT_BOOL(0, "commit", &j->commit,
			 "commit the results with the verdict's trailers "
			 "(the hooks run)"),
		OPT_END()
	};
	const char *const *usage = j->verify ? verify_usage : profile_usage;
	size_t i;

	if (!j->verify) {
		struct kopt_option end = OPT_END();
		options[KOPT_ARRAY_SIZE(options) - 2] = end;
	}
	argc = kopt_parse_options(argc, argv, options, usage, 0);
	if (j->quiet)
		kopt_progress_terminal(0);
	if (argc != 2)
		kopt_usage_error(usage, options,
				 argc < 2 ? "which kernel and version?" :
				 "too many arguments");
	if (j->gpu_wait != INT_MIN && (j->gpu_wait < 0 ||
				       j->gpu_wait > KOPT_GPU_WAIT_MAX_S))
		kopt_usage_error(usage, options, "--gpu-wait must be 0 to "
				 "%d seconds", KOPT_GPU_WAIT_MAX_S);
	j->cfg = kopt_ctx_config_or_die(ctx);
	j->k = kopt_ctx_kernel_or_die(ctx, argv[0]);
	j->version = argv[1];
	if (!kopt_version_valid(j->version))
		kopt_die("bad version '%s' (expected v0, v1, ...)", j->version);

	named_trials(j);
	for (i = 0; i < j->configs.nr; i++) {
		j->reqs = kopt_realloc(j->reqs, (j->nreq + 1) *
				       sizeof(*j->reqs));
		if (parse_config(j->configs.v[i], &j->reqs[j->nreq]))
			kopt_usage_error(usage, options, "bad --config "
					 "'%s' (expected b=32,s=1,t=4096)",
					 j->configs.v[i]);
		j->nreq++;
	}
	if (!j->nreq)
		all_trials(j);
	/* a capture that cannot be read stops us before anything is done */
	for (i = 0; i < j->replays.nr; i++)
		if (access(j->replays.v[i], R_OK))
			kopt_die("cannot read capture '%s': %s",
				 j->replays.v[i], strerror(errno));
	if (j->replays.nr && j->replays.nr != j->nreq)
		kopt_usage_error(usage, options, "%zu captures for %zu "
				 "trials: give one --replay per trial, in "
				 "order", j->replays.nr, j->nreq);
}

/*
 * PREPARE: the options, the configuration, every file that is read
 * (a broken one stops us before the GPU), the GPU and the build.
 */
/* What a measurement needs: the version's sources and the library. */
static void find_tools(struct profile_job *j, struct kopt_ctx *ctx)
{
	char *dir = kopt_ctx_path(ctx, j->src.buf);
	int missing = access(dir, F_OK);

	free(dir);
	if (missing)
		kopt_die("no sources for %s %s: '%s' does not exist",
			 j->k->name, j->version, j->src.buf);
	j->inject = kopt_bench_find_inject();
	if (!j->inject)
		kopt_die("libkopt-inject.so is not built: build git-kopt where "
			 "the CUDA toolkit is installed, or set "
			 "KOPT_INJECT_LIB; to use recorded captures, pass "
			 "--replay");
}

/*
 * The GPU.  The test suite runs stand-in benchmarks that write recorded
 * captures; they need no GPU, and the capture names the device.  A
 * replay looks for the GPU only to tell a capture of another device:
 * none is no error then.
 */
static void find_device(struct profile_job *j)
{
	struct kopt_error_catch quiet = KOPT_ERROR_CATCH_INIT;
	int ret;

	/* on a cluster, the capture names the device the task got */
	if (getenv("KOPT_TEST_NO_DEVICE") || j->ex.kind == KOPT_EXEC_SLURM)
		return;
	if (j->replays.nr)
		kopt_error_catch(&quiet);
	ret = kopt_device_query(&j->dev, j->cfg->gpu);
	if (j->replays.nr)
		kopt_error_uncatch(&quiet);
	kopt_error_catch_release(&quiet);
	if (ret && !j->replays.nr)
		kopt_die("no GPU to measure on; to use recorded captures, pass "
			 "--replay");
	if (!ret) {
		j->have_dev = 1;
		kopt_device_cache_load(&j->dev);
	}
}

/* The version's results so far. */
static void read_results(struct profile_job *j, struct kopt_ctx *ctx)
{
	int ret;

	j->rpath = results_path(ctx, j->k->name, j->version);
	ret = kopt_results_read_file(&j->res, j->rpath, j->k->name,
				     j->version);
	if (ret == KOPT_ENOTFOUND) {
		j->res.kernel = kopt_strdup(j->k->name);
		j->res.version = kopt_strdup(j->version);
		ret = 0;
	}
	kopt_lib_or_die(ret);
}

/*
 * The devlog, to write into; under --no-devlog only read, for the
 * version this one was created from (a devlog that does not read is
 * then no concern of this run).
 */
static void read_devlog(struct profile_job *j, struct kopt_ctx *ctx)
{
	struct kopt_error_catch quiet = KOPT_ERROR_CATCH_INIT;
	struct kopt_buf rel = KOPT_BUF_INIT;
	char *path;

	if (!j->no_devlog) {
		j->have_devlog = load_devlog(ctx, j->k->name, j->version,
					     j->src.buf, &j->dl, &j->dpath);
		return;
	}
	kopt_path_devlog(&rel, j->k->name);
	path = kopt_ctx_path(ctx, rel.buf);
	kopt_error_catch(&quiet);
	if (kopt_devlog_read_file(&j->dl, path))
		kopt_devlog_release(&j->dl);
	kopt_error_catch_release(&quiet);
	kopt_buf_release(&rel);
	free(path);
}

/* The version this one is compared with, and its results. */
static void read_parent(struct profile_job *j, struct kopt_ctx *ctx)
{
	int ret;

	j->parent = find_parent(ctx, j->k->name, j->version, &j->res,
				&j->dl);
	if (j->parent && !j->res.parent)
		j->res.parent = kopt_strdup(j->parent);
	if (j->parent) {
		j->ppath = results_path(ctx, j->k->name, j->parent);
		ret = kopt_results_read_file(&j->pres, j->ppath, j->k->name,
					     j->parent);
		if (ret != KOPT_ENOTFOUND)
			kopt_lib_or_die(ret);
		j->have_parent = !ret;
	}
}

/*
 * PREPARE: the options, the sources, the device, the results there are,
 * the devlog, the benchmark built, and the GPU lock taken.
 */
static void prepare(struct profile_job *j, int argc, const char **argv,
		    struct kopt_ctx *ctx)
{
	struct kopt_vars vars = { NULL, NULL, NULL, 0, 0, 0, 0 };
	char *what;

	parse_args(j, argc, argv, ctx);
	kopt_executor_init(&j->ex, j->cfg, ctx->top,
			   git_repository_path(ctx->repo));
	j->ex.interrupted = &interrupted;
	if (j->gpu_wait != INT_MIN)
		j->ex.gpu_wait_s = j->gpu_wait;
	vars.kernel = j->k;
	vars.version = j->version;
	what = kopt_xstrfmt(".kopt: kernel '%s': source", j->k->name);
	KOPT_OR_DIE(kopt_config_expand(&j->src, j->k->source, &vars, what),
		    "");
	free(what);
	if (!j->replays.nr)
		find_tools(j, ctx);
	find_device(j);
	read_results(j, ctx);
	j->tree = version_tree(ctx, j->src.buf);
	now_iso(j->date, sizeof(j->date));
	read_devlog(j, ctx);
	read_parent(j, ctx);

	if (!j->replays.nr) {
		j->m.kernel = j->k;
		j->m.version = j->version;
		j->m.top = ctx->top;
		j->m.inject_lib = j->inject;
		j->inject_cache = kopt_cache_dir(ctx->repo, "inject");
		j->m.inject_cache = j->inject_cache;
		j->m.timeout_s = j->cfg->timeout_s;
		j->m.verbose = j->verbose;
		j->m.gpu = j->cfg->gpu;
		j->m.ex = &j->ex;
		/* the build needs no GPU: another run may use it meanwhile */
		kopt_lib_or_die(kopt_bench_build(&j->m));
		kopt_lib_or_die(kopt_executor_lock(&j->ex));
	}
	{
		struct kopt_kb_source ksrc;
		kopt_kb_source_worktree(&ksrc, ctx->top);
		j->have_kb = !kopt_kb_load(&j->kb, &ksrc, j->cfg,
					   j->k->language) && j->kb.entries_nr;
	}
}

/* The run command of a request, as the benchmark would run it. */
static char *run_command(const struct profile_job *j,
			 const struct trial_req *r)
{
	struct kopt_vars vars = { j->k, j->version, NULL, r->b, r->s, r->t,
				  1 };
	struct kopt_buf cmd = KOPT_BUF_INIT;
	char *what = kopt_xstrfmt(".kopt: kernel '%s': run", j->k->name);

	KOPT_OR_DIE(kopt_config_expand(&cmd, j->k->run, &vars, what), "");
	free(what);
	return kopt_buf_detach(&cmd, NULL);
}

/* Every capture to replay is this program's: checked before measuring. */
static char **check_replays(struct profile_job *j)
{
	char **trees = kopt_calloc(j->nreq, sizeof(*trees));
	size_t i;

	for (i = 0; i < j->replays.nr; i++) {
		struct kopt_capture_program want = { j->k->name, j->version,
						     NULL, j->tree };
		char *cmd = run_command(j, &j->reqs[i]);
		int bad;
		want.run = cmd;
		bad = kopt_capture_check_program(j->replays.v[i], &want,
						 j->have_dev ? j->dev.uuid :
						 NULL, j->force, &trees[i]);
		free(cmd);
		kopt_lib_or_die(bad);
	}
	return trees;
}

/* Run the benchmark of `r` into `run`; the capture it wrote. */
static const char *run_bench(struct profile_job *j, const struct trial_req *r,
			     struct kopt_results_entry *e,
			     struct kopt_bench_run *run)
{
	struct kopt_capture_program prog = { j->k->name, j->version, NULL,
					     j->tree };
	int ret;

	if ((ret = kopt_bench_run(&j->m, r->b, r->s, r->t, run))) {
		kopt_bench_run_release(run);
		if (ret == KOPT_EINTR)
			exit(130);
		kopt_lib_or_die(ret);
	}
	e->b = run->b;
	e->b_requested = run->b_requested;
	prog.run = run->command;
	if ((ret = kopt_capture_set_program(run->capture, &prog))) {
		kopt_bench_run_release(run);
		kopt_lib_or_die(ret);
	}
	return run->capture;
}

/* The entry of request `i`, from its capture (measured or replayed). */
static void measure_one(struct profile_job *j, size_t i, char *tree)
{
	struct kopt_results_entry *e = &j->entries[i];
	struct kopt_bench_run run = KOPT_BENCH_RUN_INIT;
	const struct trial_req *r = &j->reqs[i];
	const char *capture;
	int ret;

	kopt_results_entry_init(e);
	if (j->replays.nr) {
		capture = j->replays.v[i];
		e->b = e->b_requested = r->b;
		e->replayed = 1;
		e->replay_source = kopt_strdup(capture);
	} else {
		capture = run_bench(j, r, e, &run);
	}
	e->s = r->s;
	e->t = r->t;
	e->trial = kopt_strdup(r->trial);
	e->dtype = kopt_strdup("bfloat16");
	e->date = kopt_strdup(j->date);
	e->tool_version = kopt_strdup(KOPT_VERSION);
	/* a replay's sources are those the capture was recorded from */
	e->tree = tree ? tree : kopt_strdup(j->tree);
	/* a capture that cannot be used is not left behind either */
	ret = kopt_capture_read_file(e, capture, j->k->stages);
	if (!ret && j->save_dir && !j->replays.nr)
		ret = save_capture(j->save_dir, j->k->name, j->version, r,
				   capture);
	if (ret) {
		kopt_bench_run_release(&run);
		kopt_lib_or_die(ret);
	}
	if (j->have_dev && !j->replays.nr) {
		e->device.peak_tflops = j->dev.peak_tflops > 0 ?
					j->dev.peak_tflops : NAN;
		e->device.peak_gbps = j->dev.peak_gbps;
		if (j->dev.measured_gbps > 0) {
			e->device.measured_gbps = j->dev.measured_gbps;
			e->device.measured_tflops = j->dev.measured_tflops;
		}
	}
	kopt_bench_run_release(&run);
	KOPT_OR_DIE(kopt_profile_roofline(e, j->k), "");
	kopt_profile_classify(e);
	if (j->have_kb)
		catalog_opportunities(&j->kb, j->cfg, j->k, j->version, e);
	if (!e->opportunities_nr)
		kopt_profile_metric_opportunities(e);
}

/*
 * MEASURE: per request, run the benchmark under the library (or take
 * the recorded capture, if it is this program's), and turn the capture
 * into a results entry with its conclusions.  Nothing is written yet.
 */
static void measure(struct profile_job *j)
{
	struct kopt_buf what = KOPT_BUF_INIT;
	struct kopt_progress *progress;
	char **trees = check_replays(j);
	size_t i;

	j->entries = kopt_calloc(j->nreq, sizeof(*j->entries));
	kopt_buf_addf(&what, "%s %s %s", j->verify ? "verifying" :
		      "profiling", j->k->name, j->version);
	progress = kopt_progress_start(what.buf, j->nreq);
	for (i = 0; i < j->nreq; i++) {
		const struct trial_req *r = &j->reqs[i];
		kopt_progress_what(progress, "trial %s (b=%ld, s=%ld, t=%ld)",
				   r->trial ? r->trial : "ad hoc", r->b, r->s,
				   r->t);
		/* the benchmark's own messages come next */
		kopt_progress_clear(progress);
		measure_one(j, i, trees[i]);
		kopt_progress_update(progress, i + 1);
	}
	kopt_progress_stop(&progress);
	free(trees);
	kopt_buf_release(&what);
}

/*
 * WRITE: the contracts, the devlog blocks and the results, which land
 * together or not at all; VERIFY's verdict after them.
 */
static int write_results(struct profile_job *j, struct kopt_ctx *ctx)
{
	struct kopt_filetx tx = KOPT_FILETX_INIT;
	struct kopt_buf out = KOPT_BUF_INIT, js = KOPT_BUF_INIT;
	struct kopt_buf err = KOPT_BUF_INIT;
	size_t i;
	int ret = 0;

	for (i = 0; i < j->nreq; i++) {
		struct kopt_results_entry *e = &j->entries[i];
		const struct kopt_results_entry *pe = NULL;

		const struct kopt_results_entry *old;

		if (j->have_parent)
			pe = kopt_results_find_like(&j->pres, e);
		old = kopt_results_find(&j->res, e->trial, e->b_requested,
					e->s, e->t);
		if (old && !kopt_results_same_entry_device(&old->device,
								  &e->device)) {
			struct kopt_buf there = KOPT_BUF_INIT;
			struct kopt_buf here = KOPT_BUF_INIT;
			kopt_results_device_label(&there, &old->device);
			kopt_results_device_label(&here, &e->device);
			if (j->have_devlog)
				kopt_warning("%s %s: %s was measured on %s "
					     "before; both entries stay in the "
					     "results, and the devlog block now "
					     "shows %s", j->k->name, j->version,
					     e->trial ? e->trial :
					     "this configuration", there.buf,
					     here.buf);
			else
				kopt_warning("%s %s: %s was measured on %s "
					     "before; both entries stay in the "
					     "results, and the devlog keeps its "
					     "block (--no-devlog)", j->k->name,
					     j->version, e->trial ? e->trial :
					     "this configuration", there.buf);
			kopt_buf_release(&there);
			kopt_buf_release(&here);
		}
		kopt_buf_reset(&out);
		kopt_profile_contract(&out, j->k->name, j->version, e,
				      j->parent, pe);
		if (!j->json)
			fputs(out.buf, stdout);
		if (j->have_devlog) {
			struct kopt_devlog_edit edit;
			kopt_lib_or_die(kopt_render_put_results(&j->dl,
						j->version, e, pe, &edit));
		}
		kopt_results_put(&j->res, e);
	}
	kopt_results_format(&js, &j->res);
	kopt_filetx_add(&tx, j->rpath, j->rpath + strlen(ctx->top), js.buf,
			js.len, 0, NULL);
	if (j->have_devlog)
		kopt_filetx_add(&tx, j->dpath, j->dpath + strlen(ctx->top),
				j->dl.text.buf, j->dl.text.len, 0, NULL);
	KOPT_OR_DIE(kopt_filetx_commit(&tx), "");
	if (j->json && !j->verify)
		fputs(js.buf, stdout);
	fprintf(stderr, "wrote %s\n", j->rpath + strlen(ctx->top));
	if (j->have_devlog)
		fprintf(stderr, "wrote %s\n", j->dpath + strlen(ctx->top));
	if (j->verify)
		ret = verdict(ctx, j->cfg, j->k->name, j->version, j->parent,
			      j->have_parent ? &j->pres : NULL, &j->res,
			      j->rpath, j->have_devlog ? &j->dl : NULL,
			      j->have_devlog ? j->dpath : NULL,
			      j->json ? &js : NULL, j->commit);
	kopt_filetx_release(&tx);
	kopt_buf_release(&js);
	kopt_buf_release(&out);
	kopt_buf_release(&err);
	return ret;
}

static void release_job(struct profile_job *j)
{
	size_t i;

	kopt_executor_release(&j->ex);
	kopt_devlog_release(&j->dl);
	kopt_kb_release(&j->kb);
	for (i = 0; j->entries && i < j->nreq; i++)
		kopt_results_entry_release(&j->entries[i]);
	free(j->entries);
	kopt_results_release(&j->res);
	kopt_results_release(&j->pres);
	kopt_buf_release(&j->src);
	kopt_strvec_clear(&j->trials);
	kopt_strvec_clear(&j->configs);
	kopt_strvec_clear(&j->replays);
	free(j->reqs);
	free(j->rpath);
	free(j->ppath);
	free(j->dpath);
	free(j->parent);
	free(j->inject);
	free(j->inject_cache);
	free(j->tree);
}

static int profile_main(int argc, const char **argv, struct kopt_ctx *ctx,
			int verify)
{
	struct profile_job j = {
		.verify = verify, .gpu_wait = INT_MIN,
		.trials = KOPT_STRVEC_INIT, .configs = KOPT_STRVEC_INIT,
		.replays = KOPT_STRVEC_INIT, .src = KOPT_BUF_INIT,
		.m = KOPT_BENCH_INIT, .res = KOPT_RESULTS_INIT,
		.pres = KOPT_RESULTS_INIT, .dl = KOPT_DEVLOG_INIT,
		.kb = KOPT_KB_INIT, .ex = KOPT_EXECUTOR_INIT,
	};
	struct sigaction sa, old_int;
	int ret;

	/* Ctrl-C cancels a job on the cluster (scancel) before we go */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	prepare(&j, argc, argv, ctx);
	if (j.ex.kind == KOPT_EXEC_SLURM)
		sigaction(SIGINT, &sa, &old_int);
	measure(&j);
	if (j.ex.kind == KOPT_EXEC_SLURM)
		sigaction(SIGINT, &old_int, NULL);
	ret = write_results(&j, ctx);
	release_job(&j);
	return ret;
}

int cmd_profile(int argc, const char **argv, struct kopt_ctx *ctx)
{
	return profile_main(argc, argv, ctx, 0);
}

int cmd_verify(int argc, const char **argv, struct kopt_ctx *ctx)
{
	return profile_main(argc, argv, ctx, 1);
}
