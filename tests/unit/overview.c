#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <git2.h>

#include "analysis.h"
#include "config.h"
#include "error.h"
#include "lockfile.h"
#include "overview.h"

#ifndef KOPT_SOURCE_DIR
#define KOPT_SOURCE_DIR "."
#endif

static const char settings[] =
	"[language \"cuda-c\"]\n\tcontrol = thread\n"
	"[trial \"decode\"]\n\tb = 32\n\ts = 1\n\tt = 4096\n"
	"[trial \"spec\"]\n\tb = 32\n\ts = 16\n\tt = 4096\n"
	"[kernel \"k\"]\n"
	"\tlanguage = cuda-c\n"
	"\tsource = k/{version}\n"
	"\trun = true\n"
	"\ttarget = decode duration_us <= 85\n"
	"\ttarget = spec duration_us <= 10\n"
	"\ttarget = decode duration_us <= 50\n";

/* The same without targets. */
static const char no_targets[] =
	"[language \"cuda-c\"]\n\tcontrol = thread\n"
	"[trial \"decode\"]\n\tb = 32\n\ts = 1\n\tt = 4096\n"
	"[trial \"spec\"]\n\tb = 32\n\ts = 16\n\tt = 4096\n"
	"[kernel \"k\"]\n"
	"\tlanguage = cuda-c\n"
	"\tsource = k/{version}\n"
	"\trun = true\n";

static void load_settings(struct kopt_config *cfg, const char *text)
{
	assert_int_equal(kopt_config_load_buf(cfg, text, strlen(text),
					      ".kopt"), 0);
}

/* The fixture of tests/unit/analysis.c: v0 100 us, v1 80, v3 90. */
static void test_derive(void **state)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	struct kopt_source src;
	struct kopt_overview ov = KOPT_OVERVIEW_INIT;
	const struct kopt_overview_version *v;

	(void)state;
	load_settings(&cfg, settings);
	kopt_source_worktree(&src, KOPT_SOURCE_DIR "/tests/fixtures/analysis/");
	assert_int_equal(kopt_overview_load(&ov, &src, &cfg.kernels[0], &cfg),
			 0);
	assert_string_equal(ov.kernel, "k");
	assert_int_equal(ov.versions_nr, 3);
	assert_int_equal(ov.numbers_nr, 3);
	assert_string_equal(ov.versions[2].name, "v3");
	v = kopt_overview_find(&ov, "v1");
	assert_non_null(v);
	assert_true(v->has_results);
	assert_int_equal(v->source, KOPT_NUMBERS_MEASURED);
	assert_int_equal(v->verdict, KOPT_VERDICT_IMPROVEMENT);
	assert_int_equal(kopt_overview_find(&ov, "v0")->verdict,
			 KOPT_VERDICT_NONE);
	assert_int_equal(kopt_overview_find(&ov, "v3")->verdict,
			 KOPT_VERDICT_REGRESSION);
	assert_null(kopt_overview_find(&ov, "v2"));

	/* the best per trial of the settings, in their order */
	assert_int_equal(ov.best_nr, 2);
	assert_string_equal(ov.best[0].version, "v1");
	assert_true(ov.best[0].duration_us == 80);
	assert_null(ov.best[1].version);

	/* met, never measured, not met with its best */
	assert_int_equal(ov.targets_nr, 3);
	assert_null(ov.targets[0].problem);
	assert_true(ov.targets[0].res.met);
	assert_string_equal(ov.targets[0].res.version, "v1");
	assert_ptr_equal(ov.targets[0].res.target, &cfg.kernels[0].targets[0]);
	assert_false(ov.targets[1].res.measured);
	assert_null(ov.targets[1].res.version);
	assert_false(ov.targets[2].res.met);
	assert_string_equal(ov.targets[2].res.metric, "duration_us");
	assert_true(ov.targets[2].res.value == 80);
	assert_true(ov.targets[2].res.bound == 50);

	/* v3 regressed against v1, recorded or not */
	assert_int_equal(ov.regressions_nr, 1);
	assert_string_equal(ov.regressions[0].version, "v3");
	assert_string_equal(ov.regressions[0].parent, "v1");
	assert_string_equal(ov.regressions[0].trial, "decode");
	assert_true(fabs(ov.regressions[0].change_pct - 12.5) < 1e-9);

	kopt_overview_release(&ov);
	kopt_config_release(&cfg);
}

/* Text and back gives the same overview; damaged text is refused. */
static void test_text(void **state)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT, other = KOPT_CONFIG_INIT;
	struct kopt_source src;
	struct kopt_overview ov = KOPT_OVERVIEW_INIT, back = KOPT_OVERVIEW_INIT;
	struct kopt_buf a = KOPT_BUF_INIT, b = KOPT_BUF_INIT;
	struct kopt_buf copy = KOPT_BUF_INIT;
	size_t cut;

	(void)state;
	load_settings(&cfg, settings);
	kopt_source_worktree(&src, KOPT_SOURCE_DIR "/tests/fixtures/analysis/");
	assert_int_equal(kopt_overview_load(&ov, &src, &cfg.kernels[0], &cfg),
			 0);
	kopt_overview_text(&a, &ov);
	kopt_buf_addbuf(&copy, &a);
	assert_int_equal(kopt_overview_from_text(&back, copy.buf, copy.len,
						 &cfg.kernels[0], &cfg), 0);
	kopt_overview_text(&b, &back);
	assert_string_equal(a.buf, b.buf);
	assert_string_equal(back.targets[0].res.version, "v1");
	assert_ptr_equal(back.targets[2].res.target,
			 &cfg.kernels[0].targets[2]);
	assert_true(isnan(back.targets[1].res.value));
	kopt_overview_release(&back);

	/* every shorter text is damaged */
	for (cut = 0; cut < a.len; cut += 7) {
		kopt_buf_reset(&copy);
		kopt_buf_add(&copy, a.buf, cut);
		assert_int_equal(kopt_overview_from_text(&back, copy.buf,
							 copy.len,
							 &cfg.kernels[0], &cfg),
				 KOPT_EINVALID);
		kopt_overview_release(&back);
	}
	/* settings with other targets than it was derived with */
	load_settings(&other, no_targets);
	kopt_buf_reset(&copy);
	kopt_buf_addbuf(&copy, &a);
	assert_int_equal(kopt_overview_from_text(&back, copy.buf, copy.len,
						 &other.kernels[0], &other),
			 KOPT_EINVALID);
	kopt_overview_release(&back);

	kopt_overview_release(&ov);
	kopt_buf_release(&a);
	kopt_buf_release(&b);
	kopt_buf_release(&copy);
	kopt_config_release(&cfg);
	kopt_config_release(&other);
}

static char dir[] = "/tmp/kopt-overview-XXXXXX";

/* A results file of one entry, its mtime an hour ago (not racy). */
static void write_results(const char *version, const char *parent, int us)
{
	struct kopt_buf path = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	struct timeval old[2];

	kopt_buf_addf(&path, "%s/docs/kernels/k/results/%s.json", dir,
		      version);
	kopt_buf_addf(&text, "{\"schema\":1,\"kernel\":\"k\",\"version\":"
		      "\"%s\",\"parent\":%s,\"entries\":[{\"trial\":"
		      "\"decode\",\"config\":{\"b\":32,\"s\":1,\"t\":4096},"
		      "\"metrics\":{\"duration_us\":%d}}]}\n", version,
		      parent, us);
	assert_int_equal(kopt_mkdir_parents(path.buf), 0);
	assert_int_equal(kopt_write_file_atomic(path.buf, text.buf, text.len,
						0644), 0);
	gettimeofday(&old[0], NULL);
	old[0].tv_sec -= 3600;
	old[1] = old[0];
	assert_int_equal(utimes(path.buf, old), 0);
	kopt_buf_release(&path);
	kopt_buf_release(&text);
}

static ino_t inode_of(const char *cache)
{
	struct stat st;
	char *path = kopt_xstrfmt("%s/.git/kopt/%s/k", dir, cache);

	assert_int_equal(stat(path, &st), 0);
	free(path);
	return st.st_ino;
}

/* The overview of k through the cache: its best decode duration. */
static double best_of(git_repository *repo, const struct kopt_config *cfg)
{
	struct kopt_source src;
	struct kopt_overview ov = KOPT_OVERVIEW_INIT;
	char *top = kopt_xstrfmt("%s/", dir);
	double d;

	kopt_source_worktree_cached(&src, repo, top);
	assert_int_equal(kopt_overview_load(&ov, &src, &cfg->kernels[0], cfg),
			 0);
	d = ov.best[0].duration_us;
	kopt_overview_release(&ov);
	kopt_source_release(&src);
	free(top);
	return d;
}

/*
 * The cache: a hit reads neither the files nor the analysis's entry; a
 * changed or a new file, or changed targets, derive it again.
 */
static void test_cache(void **state)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT, fewer = KOPT_CONFIG_INIT;
	git_repository *repo;
	char *cmd;
	ino_t o, an;

	(void)state;
	unsetenv("KOPT_NO_CACHE");
	load_settings(&cfg, settings);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(git_repository_init(&repo, dir, 0), 0);
	write_results("v0", "null", 100);
	write_results("v1", "\"v0\"", 80);

	assert_true(best_of(repo, &cfg) == 80);
	o = inode_of("overview");
	/*
	 * A first read keeps the overview alone (the analysis is left to
	 * the views that read it), and a hit needs nothing else.
	 */
	cmd = kopt_xstrfmt("%s/.git/kopt/analyze/k", dir);
	assert_int_equal(access(cmd, F_OK), -1);
	assert_true(best_of(repo, &cfg) == 80);
	assert_true(inode_of("overview") == o);
	assert_int_equal(access(cmd, F_OK), -1);
	free(cmd);

	write_results("v1", "\"v0\"", 81);
	assert_true(best_of(repo, &cfg) == 81);
	assert_true(inode_of("overview") != o);
	o = inode_of("overview");
	an = inode_of("analyze");
	write_results("v2", "\"v1\"", 70);
	assert_true(best_of(repo, &cfg) == 70);
	assert_true(inode_of("overview") != o);
	assert_true(inode_of("analyze") != an);
	o = inode_of("overview");

	/* other targets: derived again, from the analysis's entry */
	load_settings(&fewer, no_targets);
	an = inode_of("analyze");
	assert_true(best_of(repo, &fewer) == 70);
	assert_true(inode_of("overview") != o);
	assert_true(inode_of("analyze") == an);

	git_repository_free(repo);
	cmd = kopt_xstrfmt("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	kopt_config_release(&cfg);
	kopt_config_release(&fewer);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_derive),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_cache),
	};
	int ret;

	git_libgit2_init();
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return ret;
}
