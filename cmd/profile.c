/*
 * PROFILE and VERIFY: build a version once, run its benchmark per trial
 * under the injection library (or replay recorded captures), turn the
 * captures into results, print the profiler contract, and write the
 * results file and the devlog performance blocks.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "builtin.h"
#include "profile-step.h"
#include "capture.h"
#include "device.h"
#include "devlog.h"
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
	"                        [--replay <capture>]... "
	"[--save-captures <dir>] [--json] [--no-devlog] [--verbose]",
	NULL
};

static const char *const verify_usage[] = {
	"git kopt verify <kernel> <version> [--trial <name> | --config "
	"b=<b>,s=<s>,t=<t>]...\n"
	"                       [--replay <capture>]... "
	"[--save-captures <dir>] [--commit] [--json] [--no-devlog]\n"
	"                       [--verbose]",
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
 * results, else the nearest lower version that has results.
 */
static char *find_parent(struct kopt_ctx *ctx, const char *kernel,
			 const char *version, const struct kopt_results *cur)
{
	long n = atol(version + 1), i;

	if (cur->parent)
		return kopt_strdup(cur->parent);
	for (i = n - 1; i >= 0; i--) {
		char *v = kopt_xstrfmt("v%ld", i);
		char *p = results_path(ctx, kernel, v);
		int found = !access(p, R_OK);
		free(p);
		if (found)
			return v;
		free(v);
	}
	return n > 0 ? kopt_xstrfmt("v%ld", n - 1) : NULL;
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
	if (ret)
		exit(128);
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
		if (ret)
			exit(128);
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

/* The title of the version's devlog entry, as a file name. */
static void suggest_name(struct kopt_buf *out, const char *dpath,
			 const char *kernel, const char *version)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	int have = dpath && !kopt_devlog_read_file(&dl, dpath);

	kopt_learn_suggest_name(out, have ? &dl : NULL, kernel, version,
				"regression");
	kopt_devlog_release(&dl);
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
static int verdict(struct kopt_ctx *ctx, const struct kopt_config *cfg,
		   const char *kernel, const char *version, const char *parent,
		   const struct kopt_results *pres,
		   const struct kopt_results *res, const char *rpath,
		   const char *dpath, const struct kopt_buf *js, int commit)
{
	struct kopt_verdicts v = KOPT_VERDICTS_INIT;
	struct kopt_buf out = KOPT_BUF_INIT, msg = KOPT_BUF_INIT;
	struct kopt_buf name = KOPT_BUF_INIT;
	struct kopt_trailers tr = KOPT_TRAILERS_INIT;
	const char *rrel = rpath + strlen(ctx->top);
	const char *drel = dpath ? dpath + strlen(ctx->top) : NULL;
	size_t i;
	int ret = 0;

	if (pres)
		kopt_verdict_compare(&v, pres, res, cfg->noise_pct);
	if (js) {
		cJSON *o = cJSON_CreateObject(), *a;
		char *txt;
		cJSON_AddItemToObject(o, "results", cJSON_Parse(js->buf));
		cJSON_AddStringToObject(o, "parent", parent ? parent : "");
		cJSON_AddStringToObject(o, "verdict",
					kopt_verdict_name(v.overall));
		a = cJSON_AddArrayToObject(o, "trials");
		for (i = 0; i < v.nr; i++) {
			cJSON *t = cJSON_CreateObject();
			cJSON_AddStringToObject(t, "trial", v.items[i].trial ?
						v.items[i].trial : "");
			cJSON_AddNumberToObject(t, "parent_us",
						v.items[i].parent_us);
			cJSON_AddNumberToObject(t, "child_us",
						v.items[i].child_us);
			cJSON_AddNumberToObject(t, "change_pct",
						v.items[i].change_pct);
			cJSON_AddNumberToObject(t, "threshold_pct",
						v.items[i].threshold_pct);
			cJSON_AddStringToObject(t, "verdict", kopt_verdict_name(
							v.items[i].verdict));
			cJSON_AddItemToArray(a, t);
		}
		txt = cJSON_Print(o);
		printf("%s\n", txt);
		cJSON_free(txt);
		cJSON_Delete(o);
	} else if (v.overall == KOPT_VERDICT_NONE) {
		printf("### Verdict: none\n%s\n", parent ?
		       "The parent has no results for these trials: profile "
		       "it first." : "The base version has no parent.");
	} else {
		verdict_table(&out, parent, version, &v);
		fputs(out.buf, stdout);
	}

	kopt_buf_addf(&msg, "Verify %s %s: %s", kernel, version,
		      kopt_verdict_name(v.overall));
	if (v.nr)
		kopt_buf_addstr(&msg, "\n");
	for (i = 0; i < v.nr; i++)
		kopt_buf_addf(&msg, "\n%s: %.2f us -> %.2f us (%+.1f%%)",
			      v.items[i].trial ? v.items[i].trial : "ad hoc",
			      v.items[i].parent_us, v.items[i].child_us,
			      v.items[i].change_pct);
	kopt_trailers_add_step(&tr, kernel, version, KOPT_STEP_VERIFY);
	if (v.overall != KOPT_VERDICT_NONE)
		kopt_trailers_add(&tr, KOPT_TRAILER_VERDICT,
				  kopt_verdict_name(v.overall));
	/* the trial lines look like trailers: keep them a paragraph apart */
	kopt_buf_addstr(&msg, "\n\n");
	kopt_trailers_format(&msg, &tr);
	kopt_trailers_release(&tr);

	if (v.overall == KOPT_VERDICT_REGRESSION && !js) {
		struct kopt_buf where = KOPT_BUF_INIT;
		for (i = 0; i < v.nr; i++)
			if (v.items[i].verdict == KOPT_VERDICT_REGRESSION)
				kopt_buf_addf(&where, "%s%s", where.len ?
					      ", " : "", v.items[i].trial ?
					      v.items[i].trial : "ad hoc");
		suggest_name(&name, dpath, kernel, version);
		printf("\nLEARN is due: %s is slower than %s on %s. Its "
		       "results cannot be committed before the anti-pattern "
		       "is written:\n  git kopt learn new anti-pattern %s "
		       "--from %s/%s\n", version, parent, where.buf, name.buf,
		       kernel, version);
		kopt_buf_release(&where);
	}
	if (commit) {
		const char *add[] = { "add", "--", rrel, drel, NULL };
		const char *cm[] = { "commit", "-q", "-m", msg.buf, NULL };
		if (run_git(ctx, add) || (ret = run_git(ctx, cm)) < 0) {
			ret = 128;
		} else if (ret) {
			fprintf(stderr, "the commit was refused; the results "
				"stay staged: do what the hook says, then "
				"'git commit'\n");
			ret = 1;
		} else {
			fprintf(stderr, "committed the results of %s %s\n",
				kernel, version);
		}
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

int kopt_profile_main(int argc, const char **argv, struct kopt_ctx *ctx,
		      int verify)
{
	struct kopt_strvec trials = KOPT_STRVEC_INIT, configs = KOPT_STRVEC_INIT;
	struct kopt_strvec replays = KOPT_STRVEC_INIT;
	int json = 0, no_devlog = 0, verbose = 0, commit = 0;
	const char *save_dir = NULL;
	struct kopt_progress *progress = NULL;
	struct kopt_option options[] = {
		OPT_STRING_LIST(0, "trial", &trials, "name",
				"a trial of .kopt (default: all of them)"),
		OPT_STRING_LIST(0, "config", &configs, "b=..,s=..,t=..",
				"an ad-hoc configuration"),
		OPT_STRING_LIST(0, "replay", &replays, "capture",
				"use a recorded capture instead of the GPU, "
				"one per trial in order"),
		OPT_STRING(0, "save-captures", &save_dir, "dir",
			   "keep the raw captures as "
			   "<dir>/<kernel>-<version>-<trial>.json"),
		OPT_BOOL(0, "json", &json, "print the results entries as JSON"),
		OPT_BOOL(0, "no-devlog", &no_devlog,
			 "do not write the devlog performance blocks"),
		OPT_BOOL('v', "verbose", &verbose,
			 "show the benchmark's output"),
		OPT_BOOL(0, "commit", &commit,
			 "commit the results with the verdict's trailers "
			 "(the hooks run)"),
		OPT_END()
	};
	const char *const *usage = verify ? verify_usage : profile_usage;

	if (!verify) {
		/* --commit belongs to verify alone: drop it from the table */
		struct kopt_option end = OPT_END();
		options[KOPT_ARRAY_SIZE(options) - 2] = end;
	}
	const struct kopt_config *cfg;
	const struct kopt_kernel *k;
	const char *version;
	struct trial_req *reqs = NULL;
	size_t nreq = 0, i;
	struct kopt_bench m = KOPT_BENCH_INIT;
	struct kopt_results res = KOPT_RESULTS_INIT, pres = KOPT_RESULTS_INIT;
	struct kopt_buf out = KOPT_BUF_INIT, src = KOPT_BUF_INIT;
	struct kopt_buf err = KOPT_BUF_INIT;
	struct kopt_vars vars = { NULL, NULL, NULL, 0, 0, 0, 0 };
	char *rpath = NULL, *parent = NULL, *ppath = NULL, *inject = NULL;
	char *tree = NULL, date[32];
	struct kopt_device dev;
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	struct kopt_filetx tx = KOPT_FILETX_INIT;
	struct kopt_buf js = KOPT_BUF_INIT;
	char *dpath = NULL;
	int have_dev = 0, ret = 0, have_parent = 0, have_devlog = 0;
	struct kopt_kb kb = KOPT_KB_INIT;
	int have_kb = 0;

	argc = kopt_parse_options(argc, argv, options, usage, 0);
	if (argc != 2)
		kopt_usage_error(usage, options,
				 argc < 2 ? "which kernel and version?" :
				 "too many arguments");
	cfg = kopt_ctx_config_or_die(ctx);
	k = kopt_ctx_kernel_or_die(ctx, argv[0]);
	version = argv[1];
	if (!kopt_version_valid(version))
		kopt_die("bad version '%s' (expected v0, v1, ...)", version);

	for (i = 0; i < trials.nr; i++) {
		const struct kopt_trial *t = kopt_config_trial(cfg, trials.v[i]);
		if (!t)
			kopt_die("unknown trial '%s' (see [trial] in .kopt)",
				 trials.v[i]);
		reqs = kopt_realloc(reqs, (nreq + 1) * sizeof(*reqs));
		reqs[nreq].trial = t->name;
		reqs[nreq].b = t->b;
		reqs[nreq].s = t->s;
		reqs[nreq++].t = t->t;
	}
	for (i = 0; i < configs.nr; i++) {
		reqs = kopt_realloc(reqs, (nreq + 1) * sizeof(*reqs));
		if (parse_config(configs.v[i], &reqs[nreq]))
			kopt_usage_error(usage, options, "bad --config "
					 "'%s' (expected b=32,s=1,t=4096)",
					 configs.v[i]);
		nreq++;
	}
	if (!nreq) {
		if (!cfg->trials_nr)
			kopt_die("no trials in .kopt; add one or use --config");
		reqs = kopt_calloc(cfg->trials_nr, sizeof(*reqs));
		for (i = 0; i < cfg->trials_nr; i++) {
			reqs[nreq].trial = cfg->trials[i].name;
			reqs[nreq].b = cfg->trials[i].b;
			reqs[nreq].s = cfg->trials[i].s;
			reqs[nreq++].t = cfg->trials[i].t;
		}
	}
	/* a capture that cannot be read stops us before anything is done */
	for (i = 0; i < replays.nr; i++)
		if (access(replays.v[i], R_OK))
			kopt_die("cannot read capture '%s': %s", replays.v[i],
				 strerror(errno));
	if (replays.nr && replays.nr != nreq)
		kopt_usage_error(usage, options, "%zu captures for %zu "
				 "trials: give one --replay per trial, in "
				 "order", replays.nr, nreq);

	vars.kernel = k;
	vars.version = version;
	if (kopt_config_expand(&src, k->source, &vars, &err))
		kopt_die(".kopt: kernel '%s': source: %s", k->name, err.buf);
	if (!replays.nr) {
		char *dir = kopt_ctx_path(ctx, src.buf);
		int missing = access(dir, F_OK);
		free(dir);
		if (missing)
			kopt_die("no sources for %s %s: '%s' does not exist",
				 k->name, version, src.buf);
		inject = kopt_bench_find_inject();
		if (!inject)
			kopt_die("libkopt-inject.so is not built: build git-kopt "
				 "where the CUDA toolkit is installed, or set "
				 "KOPT_INJECT_LIB; to use recorded captures, "
				 "pass --replay");
		/*
		 * The test suite runs stand-in benchmarks that write recorded
		 * captures; they need no GPU, and the capture names the device.
		 */
		if (!getenv("KOPT_TEST_NO_DEVICE")) {
			if (kopt_device_query(&dev, cfg->gpu))
				kopt_die("no GPU to measure on; to use recorded "
					 "captures, pass --replay");
			have_dev = 1;
			kopt_device_cache_load(&dev);
		}
	}

	/* Read what is there first: a broken file stops us before the GPU. */
	rpath = results_path(ctx, k->name, version);
	ret = kopt_results_read_file(&res, rpath, k->name, version);
	if (ret == KOPT_ENOTFOUND) {
		res.kernel = kopt_strdup(k->name);
		res.version = kopt_strdup(version);
		ret = 0;
	}
	if (ret)
		exit(128);
	parent = find_parent(ctx, k->name, version, &res);
	if (parent && !res.parent)
		res.parent = kopt_strdup(parent);
	if (parent) {
		ppath = results_path(ctx, k->name, parent);
		ret = kopt_results_read_file(&pres, ppath, k->name, parent);
		if (ret && ret != KOPT_ENOTFOUND)
			exit(128);
		have_parent = !ret;
		ret = 0;
	}
	tree = version_tree(ctx, src.buf);
	now_iso(date, sizeof(date));
	if (!no_devlog)
		have_devlog = load_devlog(ctx, k->name, version, src.buf, &dl,
					  &dpath);

	if (!replays.nr) {
		m.kernel = k;
		m.version = version;
		m.top = ctx->top;
		m.inject_lib = inject;
		m.timeout_s = cfg->timeout_s;
		m.verbose = verbose;
		m.gpu = cfg->gpu;
		if (kopt_bench_lock_gpu(&m) || kopt_bench_build(&m))
			exit(128);
	}
	{
		struct kopt_kb_source ksrc;
		kopt_kb_source_worktree(&ksrc, ctx->top);
		have_kb = !kopt_kb_load(&kb, &ksrc, cfg, k->language) &&
			  kb.entries_nr;
	}
	kopt_buf_reset(&err);
	kopt_buf_addf(&err, "%s %s %s", verify ? "verifying" : "profiling",
		      k->name, version);
	progress = kopt_progress_start(err.buf, nreq);
	for (i = 0; i < nreq; i++) {
		struct kopt_results_entry e;
		struct kopt_bench_run run = KOPT_BENCH_RUN_INIT;
		const struct kopt_results_entry *pe = NULL;
		const char *capture;

		kopt_progress_what(progress, "trial %s (b=%ld, s=%ld, t=%ld)",
				   reqs[i].trial ? reqs[i].trial : "ad hoc",
				   reqs[i].b, reqs[i].s, reqs[i].t);
		/* the benchmark's own messages come next */
		kopt_progress_clear(progress);
		kopt_results_entry_init(&e);
		if (replays.nr) {
			capture = replays.v[i];
			e.b = e.b_requested = reqs[i].b;
			e.replayed = 1;
			e.replay_source = kopt_strdup(capture);
		} else {
			if (kopt_bench_run(&m, reqs[i].b, reqs[i].s,
					     reqs[i].t, &run)) {
				kopt_bench_run_release(&run);
				exit(128);
			}
			capture = run.capture;
			e.b = run.b;
			e.b_requested = run.b_requested;
		}
		e.s = reqs[i].s;
		e.t = reqs[i].t;
		e.trial = kopt_strdup(reqs[i].trial);
		e.dtype = kopt_strdup("bfloat16");
		e.date = kopt_strdup(date);
		e.tool_version = kopt_strdup(KOPT_VERSION);
		e.tree = kopt_strdup(tree);
		/* a capture that cannot be used is not left behind either */
		if (kopt_capture_read_file(&e, capture, k->stages) ||
		    (save_dir && !replays.nr &&
		     save_capture(save_dir, k->name, version, &reqs[i],
				  capture))) {
			kopt_bench_run_release(&run);
			exit(128);
		}
		if (have_dev) {
			e.device.peak_tflops = dev.peak_tflops > 0 ?
					       dev.peak_tflops : NAN;
			e.device.peak_gbps = dev.peak_gbps;
			if (dev.measured_gbps > 0) {
				e.device.measured_gbps = dev.measured_gbps;
				e.device.measured_tflops = dev.measured_tflops;
			}
		}
		kopt_bench_run_release(&run);
		kopt_buf_reset(&err);
		if (kopt_profile_roofline(&e, k, &err))
			kopt_die(".kopt: kernel '%s': flops/bytes: %s", k->name,
				 err.buf);
		kopt_profile_classify(&e);
		if (have_kb)
			catalog_opportunities(&kb, cfg, k, version, &e);
		if (!e.opportunities_nr)
			kopt_profile_metric_opportunities(&e);
		if (have_parent)
			pe = kopt_results_find_like(&pres, &e);
		kopt_buf_reset(&out);
		kopt_profile_contract(&out, k->name, version, &e, parent, pe);
		kopt_progress_clear(progress);
		if (!json)
			fputs(out.buf, stdout);
		if (have_devlog) {
			struct kopt_devlog_edit edit;
			if (kopt_render_put_results(&dl, version, &e, pe, &edit))
				exit(128);
		}
		kopt_results_put(&res, &e);
		kopt_results_entry_release(&e);
		kopt_progress_update(progress, i + 1);
	}
	kopt_progress_stop(&progress);
	/* the results and the devlog land together or not at all */
	kopt_results_format(&js, &res);
	kopt_filetx_add(&tx, rpath, rpath + strlen(ctx->top), js.buf, js.len,
			0, NULL);
	if (have_devlog)
		kopt_filetx_add(&tx, dpath, dpath + strlen(ctx->top),
				dl.text.buf, dl.text.len,
				0, NULL);
	if (kopt_filetx_commit(&tx, &err))
		kopt_die("%s", err.buf);
	if (json && !verify)
		fputs(js.buf, stdout);
	fprintf(stderr, "wrote %s\n", rpath + strlen(ctx->top));
	if (have_devlog)
		fprintf(stderr, "wrote %s\n", dpath + strlen(ctx->top));
	if (verify)
		ret = verdict(ctx, cfg, k->name, version, parent,
			      have_parent ? &pres : NULL, &res, rpath,
			      have_devlog ? dpath : NULL, json ? &js : NULL,
			      commit);

	kopt_bench_unlock_gpu(&m);
	kopt_devlog_release(&dl);
	kopt_kb_release(&kb);
	kopt_filetx_release(&tx);
	kopt_buf_release(&js);
	free(dpath);
	kopt_results_release(&res);
	kopt_results_release(&pres);
	kopt_buf_release(&out);
	kopt_buf_release(&src);
	kopt_buf_release(&err);
	kopt_strvec_clear(&trials);
	kopt_strvec_clear(&configs);
	kopt_strvec_clear(&replays);
	free(reqs);
	free(rpath);
	free(ppath);
	free(parent);
	free(inject);
	free(tree);
	return ret;
}

int cmd_profile(int argc, const char **argv, struct kopt_ctx *ctx)
{
	return kopt_profile_main(argc, argv, ctx, 0);
}
