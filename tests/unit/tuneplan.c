#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tuneplan.h"
#include "lockfile.h"
#include "messages.h"

static char dir[] = "/tmp/kopt-tuneplan-XXXXXX";

static void test_write_read(void **state)
{
	struct kopt_tuneplan p = KOPT_TUNEPLAN_INIT, back = KOPT_TUNEPLAN_INIT;
	const struct kopt_tuneplan_eval *e;
	char *path;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = kopt_xstrfmt("%s/k/v1.plan", dir);
	assert_int_equal(kopt_tuneplan_read(&back, path), KOPT_ENOTFOUND);
	p.strategy = kopt_strdup("random");
	p.seed = 7;
	p.max_evals = 10;
	p.tree = kopt_strdup("1b5e9bede69fe6db75dfb91072ae7218b4753991");
	p.build = kopt_strdup("0a44ddd6bd6b");
	kopt_strvec_push(&p.trials, "decode");
	kopt_tuneplan_add(&p, "decode", "BN=64,ST=3", 0.1 + 44.4, 2.25, NULL);
	kopt_tuneplan_add(&p, "decode", "BN=64,ST=2", NAN, NAN,
			  "failed: exit code 1\t(its own check)");
	assert_int_equal(kopt_tuneplan_write(&p, path), 0);
	assert_int_equal(kopt_tuneplan_read(&back, path), 0);
	assert_string_equal(back.strategy, "random");
	assert_true(back.seed == 7 && back.max_evals == 10);
	assert_string_equal(back.build, "0a44ddd6bd6b");
	assert_int_equal(back.trials.nr, 1);
	assert_int_equal(back.nr, 2);
	/* times come back exactly, so a search fed them again agrees */
	e = kopt_tuneplan_find(&back, "decode", "BN=64,ST=3");
	assert_non_null(e);
	assert_true(e->us == 0.1 + 44.4 && e->spread == 2.25 && !e->why);
	e = kopt_tuneplan_find(&back, "decode", "BN=64,ST=2");
	assert_true(isnan(e->us));
	assert_string_equal(e->why, "failed: exit code 1\t(its own check)");
	assert_null(kopt_tuneplan_find(&back, "spec-decode", "BN=64,ST=3"));
	kopt_tuneplan_release(&back);
	/* a damaged plan is named, with what to do */
	{
		FILE *f = fopen(path, "a");
		fputs("what\n", f);
		fclose(f);
	}
	assert_int_equal(kopt_tuneplan_read(&back, path), -1);
	assert_non_null(strstr(messages.buf, "v1.plan:10: not a line of a "
			       "tuning plan; remove it and tune again without "
			       "--resume"));
	kopt_tuneplan_release(&back);
	kopt_tuneplan_release(&p);
	unlink(path);
	free(path);
	path = kopt_xstrfmt("%s/k", dir);
	rmdir(path);
	free(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_write_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
