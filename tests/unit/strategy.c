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
#include <unistd.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "config.h"
#include "error.h"
#include "kb.h"
#include "lockfile.h"
#include "results.h"
#include "strategy.h"

#ifndef KOPT_SOURCE_DIR
#define KOPT_SOURCE_DIR "."
#endif
#define KB KOPT_SOURCE_DIR "/tests/fixtures/knowledge/kb/"
#define RES KB "docs/kernels/mla-decode/results/"

struct fixture {
	struct kopt_config cfg;
	struct kopt_kb kb;
	struct kopt_results res;
	struct kopt_strategy s;
};

static void compute(struct fixture *f, const char *kernel,
		    const char *version, size_t max)
{
	const struct kopt_kernel *k;
	struct kopt_kb_source src;
	char *path = kopt_xstrfmt(RES "%s.json", version);

	memset(f, 0, sizeof(*f));
	assert_int_equal(kopt_config_load_file(&f->cfg, KB ".kopt", ".kopt",
					       NULL), 0);
	k = kopt_config_kernel(&f->cfg, kernel);
	assert_non_null(k);
	kopt_kb_source_worktree(&src, KB);
	assert_int_equal(kopt_kb_load(&f->kb, &src, &f->cfg, k->language), 0);
	assert_int_equal(f->kb.problems.nr, 0);
	assert_int_equal(kopt_results_read_file(&f->res, path, "mla-decode",
						version), 0);
	assert_int_equal(kopt_strategy_compute(&f->s, &f->kb, &f->res, &f->cfg,
					       k, version, "v1", NULL, max), 0);
	free(path);
}

static void release(struct fixture *f)
{
	kopt_strategy_release(&f->s);
	kopt_results_release(&f->res);
	kopt_kb_release(&f->kb);
	kopt_config_release(&f->cfg);
}

static const char *id_of(const struct kopt_strategy_item *it)
{
	return it->entry->row->cell[KOPT_COL_ID];
}

/* Ranked by impact x (1 + margin); anti-patterns that hold to avoid. */
static void test_rank(void **state)
{
	struct fixture f;
	const struct kopt_strategy *s;

	(void)state;
	compute(&f, "mla-decode", "v0", 3);
	s = &f.s;
	assert_int_equal(s->apply_nr, 4);
	assert_string_equal(id_of(&s->apply[0]), "O2");  /* 125% x 1.396 */
	assert_true(fabs(s->apply[0].margin - (50 - 30.2) / 50) < 1e-9);
	assert_true(fabs(s->apply[0].score - 125 * (1 + 19.8 / 50)) < 1e-9);
	assert_string_equal(id_of(&s->apply[1]), "O1");  /* 40% x 1.76 */
	assert_string_equal(id_of(&s->apply[2]), "O4");  /* 35% x 1.24 */
	assert_string_equal(id_of(&s->apply[3]), "O3");  /* 10% x 1.125 */
	assert_int_equal(s->chosen, 3);
	assert_int_equal(s->apply[3].trials.nr, 1);
	assert_string_equal(s->apply[3].trials.v[0], "decode");
	assert_string_equal(s->apply[1].holds.buf,
			    "decode (waves=0.24), spec-decode (waves=0.24)");
	assert_int_equal(s->avoid_nr, 2);
	assert_string_equal(id_of(&s->avoid[0]), "A1");
	assert_string_equal(id_of(&s->avoid[1]), "A2");
	assert_int_equal(s->unknown_nr, 0);
	assert_int_equal(s->untriggered.nr, 1);
	assert_string_equal(s->untriggered.v[0], "O5 Epilogue fusion");
	assert_int_equal(s->control, KOPT_CONTROL_WARP);
	assert_int_equal(s->reg_budget, 128);
	assert_true(s->regs_now == 168);
	assert_true(s->spill_now == 256);
	assert_true(s->occ_now == 12.5);
	release(&f);

	compute(&f, "mla-decode", "v0", 1);
	assert_int_equal(f.s.chosen, 1);
	assert_int_equal(f.s.control, KOPT_CONTROL_WARP);
	release(&f);
}

static void test_render(void **state)
{
	struct kopt_buf out = KOPT_BUF_INIT, want = KOPT_BUF_INIT;
	struct fixture f;

	(void)state;
	compute(&f, "mla-decode", "v0", 3);
	kopt_strategy_render(&out, &f.s, "docs/kernels/mla-decode/tasks");
	assert_int_equal(kopt_buf_read_file(&want, KOPT_SOURCE_DIR
		"/tests/fixtures/knowledge/task-v1.md"), 0);
	/* KOPT_REGEN=1 rewrites the golden file */
	if (getenv("KOPT_REGEN"))
		assert_int_equal(kopt_write_file_atomic(KOPT_SOURCE_DIR
			"/tests/fixtures/knowledge/task-v1.md", out.buf,
			out.len, 0644), 0);
	else if (strcmp(out.buf, want.buf))
		fail_msg("got\n%s", out.buf);
	release(&f);
	kopt_buf_release(&out);
	kopt_buf_release(&want);
}

/* An unmeasured metric leaves an entry unknown, and says where. */
static void test_unknown(void **state)
{
	struct fixture f;
	const struct kopt_strategy_item *it;
	size_t i;

	(void)state;
	compute(&f, "mla-decode", "v1", 3);
	assert_int_equal(f.s.apply_nr, 1);
	assert_string_equal(id_of(&f.s.apply[0]), "O1");
	assert_int_equal(f.s.avoid_nr, 0);
	assert_int_equal(f.s.unknown_nr, 5);
	it = &f.s.unknown[1];
	assert_string_equal(id_of(it), "O3");
	assert_int_equal(it->truth, KOPT_TRUTH_UNKNOWN);
	assert_int_equal(it->unknown_on.nr, 3);
	assert_string_equal(it->unknown_on.v[2], "b=8 s=1 t=65536");
	assert_int_equal(it->missing.nr, 1);
	assert_string_equal(it->missing.v[0], "l2_hit_pct");
	/* false where measured, unknown on the ad-hoc entry: unknown */
	it = &f.s.unknown[0];
	assert_string_equal(id_of(it), "O2");
	assert_int_equal(it->unknown_on.nr, 1);
	for (i = 0; i < f.s.unknown_nr; i++)
		assert_int_equal(f.s.unknown[i].truth, KOPT_TRUTH_UNKNOWN);
	assert_int_equal(f.s.control, KOPT_CONTROL_BLOCK);
	assert_non_null(strstr(f.s.bottleneck.buf, "Memory-bound on decode"));
	release(&f);
}

/* The kernel's language catalog counts, the others do not. */
static void test_language(void **state)
{
	struct fixture f;
	size_t i;
	int seen = 0;

	(void)state;
	compute(&f, "mm", "v0", 10);
	for (i = 0; i < f.s.apply_nr; i++) {
		const struct kopt_kb_entry *e = f.s.apply[i].entry;
		assert_true(!e->language || !strcmp(e->language, "cuda-c"));
		if (e->language) {
			seen = 1;
			assert_int_equal(kopt_entry_control(e, &f.cfg),
					 KOPT_CONTROL_THREAD);
		}
	}
	assert_true(seen);
	assert_int_equal(f.s.chosen, 5);
	assert_int_equal(f.s.control, KOPT_CONTROL_THREAD);
	release(&f);
}

static void test_json(void **state)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	struct fixture f;
	cJSON *j, *a, *c;

	(void)state;
	compute(&f, "mla-decode", "v0", 3);
	kopt_strategy_json(&out, &f.s, "docs/kernels/mla-decode/tasks/v1.md");
	j = cJSON_Parse(out.buf);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "next")->valuestring, "v1");
	assert_string_equal(cJSON_GetObjectItem(j, "task")->valuestring,
			    "docs/kernels/mla-decode/tasks/v1.md");
	a = cJSON_GetObjectItem(j, "optimizations");
	assert_int_equal(cJSON_GetArraySize(a), 4);
	c = cJSON_GetArrayItem(a, 3);
	assert_string_equal(cJSON_GetObjectItem(c, "id")->valuestring, "O3");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(c, "chosen")));
	assert_true(cJSON_GetObjectItem(c, "impact_pct")->valuedouble == 10);
	c = cJSON_GetArrayItem(a, 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c, "chosen")));
	assert_string_equal(cJSON_GetObjectItem(c, "control")->valuestring,
			    "warp");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "avoid")),
			 2);
	c = cJSON_GetObjectItem(j, "constraints");
	assert_true(cJSON_GetObjectItem(c, "register_budget")->valuedouble ==
		    128);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(c,
						      "language_suffices")));
	cJSON_Delete(j);
	release(&f);
	kopt_buf_release(&out);
}

static void test_relative_path(void **state)
{
	static const char *const cases[][3] = {
		{ "docs/kernels/k/tasks", "docs/knowledge/optimizations/a.md",
		  "../../../knowledge/optimizations/a.md" },
		{ "docs/kernels/k/tasks", "docs/kernels/k/tasks/v1.md",
		  "v1.md" },
		{ "docs/kernels/k/tasks", "docs/kernels/k.md", "../../k.md" },
		{ "a/b", "c/d.md", "../../c/d.md" },
		{ "", "c/d.md", "c/d.md" },
		{ "docs/k", "docs/knowledge/x.md", "../knowledge/x.md" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < KOPT_ARRAY_SIZE(cases); i++) {
		char *r = kopt_relative_path(cases[i][0], cases[i][1]);
		assert_string_equal(r, cases[i][2]);
		free(r);
	}
}

static void test_select(void **state)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	struct kopt_selection sel = { 0 };
	const struct kopt_language *tile, *cute, *cuda;

	(void)state;
	assert_int_equal(kopt_config_load_file(&cfg, KB ".kopt", ".kopt",
					       NULL), 0);
	tile = kopt_config_language(&cfg, "cutile-dsl");
	cute = kopt_config_language(&cfg, "cute-dsl");
	cuda = kopt_config_language(&cfg, "cuda-c");

	/* not enough: the least control that is enough */
	assert_int_equal(kopt_select_language(&sel, &cfg, tile,
					      KOPT_CONTROL_WARP), 0);
	assert_ptr_equal(sel.language, cute);
	assert_string_equal(sel.why.buf,
		"cutile-dsl, the current language, gives only block-level "
		"control; the task needs warp\n"
		"cute-dsl gives warp-level control, the least of the "
		"configured languages that covers warp\n");
	kopt_selection_release(&sel);
	memset(&sel, 0, sizeof(sel));

	/* enough: kept, even with more control than needed */
	assert_int_equal(kopt_select_language(&sel, &cfg, cuda,
					      KOPT_CONTROL_BLOCK), 0);
	assert_ptr_equal(sel.language, cuda);
	assert_non_null(strstr(sel.why.buf, "it is kept"));
	kopt_selection_release(&sel);
	memset(&sel, 0, sizeof(sel));

	assert_int_equal(kopt_select_language(&sel, &cfg, tile,
					      KOPT_CONTROL_NONE), 0);
	assert_ptr_equal(sel.language, tile);
	assert_int_equal(sel.required, KOPT_CONTROL_BLOCK);
	kopt_selection_release(&sel);
	memset(&sel, 0, sizeof(sel));

	assert_int_equal(kopt_select_language(&sel, &cfg, tile,
					      KOPT_CONTROL_THREAD), 0);
	assert_ptr_equal(sel.language, cuda);
	kopt_selection_release(&sel);
	kopt_config_release(&cfg);

	/* nothing gives enough */
	memset(&sel, 0, sizeof(sel));
	{
		static const char text[] =
			"[language \"cutile-dsl\"]\n\tcontrol = block\n";
		assert_int_equal(kopt_config_load_buf(&cfg, text,
						      sizeof(text) - 1,
						      ".kopt"), 0);
	}
	assert_int_equal(kopt_select_language(&sel, &cfg, NULL,
					      KOPT_CONTROL_WARP),
			 KOPT_ENOTFOUND);
	kopt_selection_release(&sel);
	kopt_config_release(&cfg);
}

static void touch(const char *top, const char *rel)
{
	char *path = kopt_xstrfmt("%s/%s", top, rel);

	assert_int_equal(kopt_write_file_atomic(path, "{}", 2, 0644), 0);
	free(path);
}

static void test_versions(void **state)
{
	char dir[] = "/tmp/kopt-versions-XXXXXX", *top, *newest, *next;
	struct kopt_kernel k = { 0 };
	struct kopt_analysis a = KOPT_ANALYSIS_INIT;
	struct kopt_analysis_version v[3];
	char cmd[64];

	(void)state;
	assert_non_null(mkdtemp(dir));
	top = kopt_xstrfmt("%s/", dir);
	k.name = "mla-decode";
	k.source = "kernels/mla/{version}";
	kopt_kernel_versions(top, NULL, &k, NULL, &newest, &next);
	assert_null(newest);
	assert_string_equal(next, "v0");
	free(next);

	/* v0 and v3 have numbers (a file or the devlog), v4 is only named */
	memset(v, 0, sizeof(v));
	v[0].number = 0;
	v[1].number = 3;
	v[2].number = 4;
	v[0].has_results = v[1].has_results = 1;
	v[0].results.entries_nr = v[1].results.entries_nr = 1;
	a.versions = v;
	a.versions_nr = 3;
	touch(dir, "kernels/mla/v5/kernel.cu");
	touch(dir, "kernels/mla/v12-old/kernel.cu");
	kopt_kernel_versions(top, NULL, &k, &a, &newest, &next);
	assert_string_equal(newest, "v3");
	assert_string_equal(next, "v6");
	free(newest);
	free(next);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(top);
}

static int setup(void **state)
{
	(void)state;
	git_libgit2_init();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	git_libgit2_shutdown();
	return 0;
}

/* The version of the lineage that an evidence line says was made. */
static void test_applied_in(void **state)
{
	struct kopt_strvec lin = KOPT_STRVEC_INIT;

	(void)state;
	kopt_strvec_push(&lin, "v3");
	kopt_strvec_push(&lin, "v2");
	kopt_strvec_push(&lin, "v0");
	assert_string_equal(kopt_strategy_applied_in(
		"Source type: local experiment (mla-decode v1 -> v2, NVIDIA "
		"H200)", "mla-decode", &lin), "v2");
	assert_string_equal(kopt_strategy_applied_in(
		"local experiment (gemm v0 -> v1; mla-decode v2->v3.)",
		"mla-decode", &lin), "v3");
	/* a later version, another kernel, a longer name: not applied */
	assert_null(kopt_strategy_applied_in(
		"local experiment (mla-decode v3 -> v4)", "mla-decode", &lin));
	assert_null(kopt_strategy_applied_in(
		"local experiment (gemm v1 -> v2)", "mla-decode", &lin));
	assert_null(kopt_strategy_applied_in(
		"local experiment (mla-decode-fp8 v1 -> v2)", "mla-decode",
		&lin));
	assert_null(kopt_strategy_applied_in(
		"local experiment (mla-decode v1 -> v20)", "mla-decode", &lin));
	assert_null(kopt_strategy_applied_in("external report (a paper)",
					     "mla-decode", &lin));
	assert_null(kopt_strategy_applied_in(NULL, "mla-decode", &lin));
	assert_null(kopt_strategy_applied_in(
		"local experiment (mla-decode v1 -> v2)", "mla-decode", NULL));
	kopt_strvec_clear(&lin);
}

/* The task as the step computes it: numbers, versions, knowledge base. */
static void test_load(void **state)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	struct kopt_strategy_request req = { .top = KB, .max = 3 };
	struct kopt_strategy s;
	struct kopt_kb kb = KOPT_KB_INIT;
	struct kopt_results res = KOPT_RESULTS_INIT;
	struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;
	char *current, *next;

	(void)state;
	assert_int_equal(kopt_config_load_file(&cfg, KB ".kopt", ".kopt",
					       NULL), 0);
	req.cfg = &cfg;
	req.kernel = kopt_config_kernel(&cfg, "mla-decode");
	assert_int_equal(kopt_strategy_load(&s, &kb, &res, &current, &next,
					    &req), 0);
	assert_string_equal(current, "v1");
	assert_string_equal(next, "v2");
	assert_string_equal(res.version, "v1");
	kopt_strategy_release(&s);
	kopt_kb_release(&kb);
	free(current);
	free(next);

	/* an older version, as `strategize <kernel> v0` asks */
	req.version = "v0";
	memset(&kb, 0, sizeof(kb));
	assert_int_equal(kopt_strategy_load(&s, &kb, &res, &current, &next,
					    &req), 0);
	assert_string_equal(current, "v0");
	assert_string_equal(next, "v2");
	assert_string_equal(id_of(&s.apply[0]), "O2");
	kopt_strategy_release(&s);
	kopt_kb_release(&kb);
	free(current);
	free(next);

	/* a version without numbers is refused, naming what to run */
	req.version = "v5";
	memset(&kb, 0, sizeof(kb));
	kopt_error_catch(&caught);
	assert_int_equal(kopt_strategy_load(&s, &kb, &res, &current, &next,
					    &req), KOPT_ENOTFOUND);
	kopt_error_uncatch(&caught);
	assert_string_equal(caught.text.buf, "no numbers for mla-decode v5: "
			    "neither docs/kernels/mla-decode/results/v5.json "
			    "nor a performance block in its devlog entry; run "
			    "'git kopt profile mla-decode v5' first");
	kopt_error_catch_release(&caught);
	kopt_kb_release(&kb);
	free(current);
	free(next);

	kopt_results_release(&res);
	kopt_config_release(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_language),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_relative_path),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_applied_in),
		cmocka_unit_test(test_load),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
