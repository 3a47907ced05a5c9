#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "config.h"
#include "tune.h"
#include "messages.h"

static const char kopt_text[] =
	"[trial \"decode\"]\n"
	"\tb = 32\n\ts = 1\n\tt = 4096\n"
	"[language \"cuda-c\"]\n\tcontrol = thread\n"
	"[kernel \"k\"]\n"
	"\tlanguage = cuda-c\n"
	"\tsource = k/{version}\n"
	"\tbuild = make V={version} T={tiling} A={A} B={B}\n"
	"\trun = ./bench {A} {B} {b}\n"
	"\ttune = A=1,2,3,4,5,6,7,8\n"
	"\ttune = B=10, 20, 30, 40\n"
	"\ttune-restrict = A * B <= 200 and (b < 64 or A < 4)\n"
	"\ttune-default = B=20,A=2\n";

static struct kopt_config cfg = KOPT_CONFIG_INIT;
static const struct kopt_kernel *k;

static int load(void **state)
{
	(void)state;
	git_libgit2_init();
	if (kopt_config_load_buf(&cfg, kopt_text, sizeof(kopt_text) - 1,
				 ".kopt"))
		return -1;
	k = kopt_config_kernel(&cfg, "k");
	return k ? 0 : -1;
}

static int unload(void **state)
{
	(void)state;
	kopt_config_release(&cfg);
	git_libgit2_shutdown();
	return 0;
}

static void test_space(void **state)
{
	struct kopt_tune_space sp = KOPT_TUNE_SPACE_INIT;
	struct kopt_buf b = KOPT_BUF_INIT;
	double v[2];
	size_t i, n = 0;

	(void)state;
	assert_int_equal(k->tune_nr, 2);
	assert_int_equal(kopt_tune_full_size(k), 32);
	assert_int_equal(kopt_tune_enumerate(&sp, k, 32, 1, 4096, ".kopt"), 0);
	/* A*B <= 200 leaves every pair but 6*40, 7*30, 7*40, 8*30, 8*40 */
	assert_int_equal(sp.nr, 27);
	for (i = 0; i < 8; i++)
		for (size_t j = 0; j < 4; j++)
			n += (i + 1) * (j + 1) * 10 <= 200;
	assert_int_equal(sp.nr, n);
	/* the default, found by value */
	kopt_tune_space_values(&sp, sp.dflt, v);
	assert_true(v[0] == 2 && v[1] == 20);
	kopt_tune_config_text(&b, k, v);
	assert_string_equal(b.buf, "A=2,B=20");
	kopt_buf_reset(&b);
	kopt_tune_config_id(&b, k, v);
	assert_string_equal(b.buf, "a2-b20");
	assert_string_equal(k->tune_default_id, "a2-b20");
	/* parse back, any order; refuse the rest */
	assert_int_equal(kopt_tune_config_parse(v, k, "B=40,A=5"), 0);
	assert_true(v[0] == 5 && v[1] == 40);
	assert_int_equal(kopt_tune_config_parse(v, k, "A=5"), KOPT_EINVALID);
	assert_int_equal(kopt_tune_config_parse(v, k, "A=5,B=4,A=1"),
			 KOPT_EINVALID);
	assert_int_equal(kopt_tune_config_parse(v, k, "A=5,C=4"), KOPT_EINVALID);
	assert_int_equal(kopt_tune_config_parse(v, k, "A=5,B="), KOPT_EINVALID);
	assert_int_equal(kopt_tune_config_parse(v, k, "A=5,B=4,"), KOPT_EINVALID);
	kopt_tune_space_release(&sp);
	/* a restriction over the trial: at b=64 only A < 4 */
	assert_int_equal(kopt_tune_enumerate(&sp, k, 64, 1, 4096, ".kopt"), 0);
	assert_int_equal(sp.nr, 12);
	kopt_tune_space_release(&sp);
	kopt_buf_release(&b);
}

/*
 * A restriction that divides by zero excludes the configuration; a
 * space too large to enumerate is refused at its line of the settings.
 */
static void test_restrict_failures(void **state)
{
	static const char head[] =
		"[trial \"decode\"]\n"
		"\tb = 32\n\ts = 1\n\tt = 4096\n"
		"[language \"cuda-c\"]\n\tcontrol = thread\n"
		"[kernel \"k\"]\n"
		"\tlanguage = cuda-c\n"
		"\tsource = k/{version}\n"
		"\trun = ./bench {A} {B}\n";
	struct kopt_config c = KOPT_CONFIG_INIT;
	struct kopt_buf text = KOPT_BUF_INIT;
	const struct kopt_kernel *kk;
	double v[2] = { 2, 1 };
	size_t count;
	int why, i;

	(void)state;
	kopt_buf_addf(&text, "%s\ttune = A=1,2,3\n\ttune = B=1\n"
		      "\ttune-restrict = 6 / (A - 2) > 0\n"
		      "\ttune-default = A=3,B=1\n", head);
	assert_int_equal(kopt_config_load_buf(&c, text.buf, text.len,
					      ".kopt"), 0);
	kk = kopt_config_kernel(&c, "k");
	assert_int_equal(kopt_tune_allowed(kk, v, 32, 1, 4096, &why, ".kopt"),
			 0);
	assert_int_equal(why, 0);
	assert_int_equal(kopt_tune_count(&count, kk, 32, 1, 4096, ".kopt"), 0);
	assert_int_equal(count, 1);
	kopt_config_release(&c);

	kopt_buf_reset(&text);
	kopt_buf_addf(&text, "%s\ttune = A=", head);
	for (i = 0; i < 1001; i++)
		kopt_buf_addf(&text, "%s%d", i ? "," : "", i);
	kopt_buf_addstr(&text, "\n\ttune = B=");
	for (i = 0; i < 1000; i++)
		kopt_buf_addf(&text, "%s%d", i ? "," : "", i);
	kopt_buf_addstr(&text, "\n\ttune-default = A=1,B=1\n");
	assert_int_equal(kopt_config_load_buf(&c, text.buf, text.len,
					      ".kopt"), KOPT_EINVALID);
	assert_string_equal(messages.buf, "error: .kopt:11: the tuning space of "
			    "kernel 'k' has more than 1000000 configurations "
			    "before restrictions: give fewer values\n");
	kopt_config_release(&c);
	kopt_buf_release(&text);
}

static void test_expand(void **state)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	double v[2] = { 7, 10 };
	struct kopt_vars vars = { NULL, "v3", NULL, 32, 1, 4096, 1, NULL };

	(void)state;
	vars.kernel = k;
	/* without values: the hand-picked configuration */
	assert_int_equal(kopt_config_expand(&out, k->build, &vars, NULL), 0);
	assert_string_equal(out.buf, "make V=v3 T=a2-b20 A=2 B=20");
	kopt_buf_reset(&out);
	vars.tune_values = v;
	vars.tiling = "a7-b10";
	assert_int_equal(kopt_config_expand(&out, k->build, &vars, NULL), 0);
	assert_string_equal(out.buf, "make V=v3 T=a7-b10 A=7 B=10");
	kopt_buf_release(&out);
}

/* A made-up landscape, fastest at A=5, B=30. */
static double cost(const struct kopt_tune_space *sp, size_t i)
{
	double v[2];

	kopt_tune_space_values(sp, i, v);
	return 100 + 7 * fabs(v[0] - 5.4) + 0.5 * fabs(v[1] - 30);
}

static size_t run_search(struct kopt_tune_search *s, size_t *first)
{
	size_t batch[4], n, i, evals = 0;

	while ((n = kopt_tune_search_next(s, batch, 4)) > 0) {
		if (!evals)
			*first = batch[0];
		for (i = 0; i < n; i++)
			kopt_tune_search_record(s, batch[i],
						cost(s->space, batch[i]), NAN);
		evals += n;
	}
	return evals;
}

static void test_searches(void **state)
{
	struct kopt_tune_space sp = KOPT_TUNE_SPACE_INIT;
	struct kopt_tune_search s;
	size_t first = SIZE_MAX, best = SIZE_MAX, i, a, b;
	double v[2];

	(void)state;
	assert_int_equal(kopt_tune_enumerate(&sp, k, 32, 1, 4096, ".kopt"), 0);
	for (i = 0; i < sp.nr; i++)
		if (best == SIZE_MAX || cost(&sp, i) < cost(&sp, best))
			best = i;

	/* exhaustive: the default first, then everything once */
	kopt_tune_search_init(&s, &sp, KOPT_TUNE_EXHAUSTIVE, 1);
	assert_int_equal(kopt_tune_search_expected(&s), sp.nr);
	assert_int_equal(run_search(&s, &first), sp.nr);
	assert_int_equal(first, sp.dflt);
	assert_int_equal(s.best, best);
	assert_int_equal(s.stop, KOPT_TUNE_DONE);
	kopt_tune_search_release(&s);

	/* random: 30% of the space, the same for the same seed */
	kopt_tune_search_init(&s, &sp, KOPT_TUNE_RANDOM, 42);
	a = run_search(&s, &first);
	assert_int_equal(a, 8);
	assert_int_equal(first, sp.dflt);
	b = s.best;
	kopt_tune_search_release(&s);
	kopt_tune_search_init(&s, &sp, KOPT_TUNE_RANDOM, 42);
	assert_int_equal(run_search(&s, &first), a);
	assert_int_equal(s.best, b);
	kopt_tune_search_release(&s);

	/* coarse-to-fine: the coarse best beats the default, the climb ends
	 * at the best */
	kopt_tune_search_init(&s, &sp, KOPT_TUNE_COARSE_TO_FINE, 1);
	s.max_evals = 20;
	a = run_search(&s, &first);
	assert_int_equal(s.best, best);
	assert_true(a < sp.nr);
	kopt_tune_space_values(&sp, s.best, v);
	assert_true(v[0] == 5 && v[1] == 30);
	kopt_tune_search_release(&s);

	/* ... but not when the parent is already faster */
	kopt_tune_search_init(&s, &sp, KOPT_TUNE_COARSE_TO_FINE, 1);
	s.max_evals = 20;
	s.baseline_us = 90;
	run_search(&s, &first);
	assert_int_equal(s.stop, KOPT_TUNE_NO_PROMISE);
	assert_int_equal(s.phase, 1);
	kopt_tune_search_release(&s);

	/* invalid configurations are never the best; max_evals caps */
	kopt_tune_search_init(&s, &sp, KOPT_TUNE_EXHAUSTIVE, 1);
	s.max_evals = 5;
	{
		size_t batch[8], n, evals = 0;
		while ((n = kopt_tune_search_next(&s, batch, 8)) > 0) {
			for (i = 0; i < n; i++)
				kopt_tune_search_record(&s, batch[i],
					batch[i] == 1 ? NAN : 500.0 - batch[i],
					NAN);
			evals += n;
		}
		assert_int_equal(evals, 5);
		assert_int_equal(s.stop, KOPT_TUNE_MAX_EVALS);
		assert_true(s.best != 1);
		assert_int_equal(s.state[1], 3);
	}
	kopt_tune_search_release(&s);
	kopt_tune_space_release(&sp);
}

static void test_pick_steadiest(void **state)
{
	struct kopt_tune_space sp = KOPT_TUNE_SPACE_INIT;
	struct kopt_tune_search s;

	(void)state;
	assert_int_equal(kopt_tune_enumerate(&sp, k, 32, 1, 4096, ".kopt"), 0);
	kopt_tune_search_init(&s, &sp, KOPT_TUNE_EXHAUSTIVE, 1);
	assert_int_equal(kopt_tune_search_pick(&s), SIZE_MAX);
	/* 0 is the fastest but spreads 8%; 1 is 2% slower, spreads 1% */
	kopt_tune_search_record(&s, 0, 100.0, 8.0);
	kopt_tune_search_record(&s, 1, 102.0, 1.0);
	kopt_tune_search_record(&s, 2, 120.0, 0.5);
	assert_int_equal(s.best, 0);
	assert_int_equal(kopt_tune_search_pick(&s), 1);
	kopt_tune_search_release(&s);
	/* beyond the noise the fastest stays, however it spreads */
	kopt_tune_search_init(&s, &sp, KOPT_TUNE_EXHAUSTIVE, 1);
	kopt_tune_search_record(&s, 0, 100.0, 2.0);
	kopt_tune_search_record(&s, 1, 104.0, 0.1);
	assert_int_equal(kopt_tune_search_pick(&s), 0);
	/* an unknown spread is never preferred */
	kopt_tune_search_record(&s, 2, 100.5, NAN);
	assert_int_equal(kopt_tune_search_pick(&s), 0);
	kopt_tune_search_release(&s);
	kopt_tune_space_release(&sp);
}

static void test_strategy_names(void **state)
{
	enum kopt_tune_strategy st;

	(void)state;
	assert_int_equal(kopt_tune_strategy_parse(&st, "random"), 0);
	assert_int_equal(st, KOPT_TUNE_RANDOM);
	assert_string_equal(kopt_tune_strategy_name(KOPT_TUNE_COARSE_TO_FINE),
			    "coarse-to-fine");
	assert_int_equal(kopt_tune_strategy_parse(&st, "greedy"),
			 KOPT_EINVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_space),
		MESSAGES_TEST(test_restrict_failures),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_searches),
		cmocka_unit_test(test_pick_steadiest),
		cmocka_unit_test(test_strategy_names),
	};

	return cmocka_run_group_tests(tests, load, unload);
}
