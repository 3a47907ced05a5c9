/* The counter availability image kept between runs (lib/inject/avail.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#include "inject/avail.h"

static char dir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/kopt-avail-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The one file of the directory (there is one after a store). */
static void the_file(char *out, size_t len)
{
	char cmd[300];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ls '%s'/counter-availability-*.bin", dir);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(out, (int)len, f));
	out[strcspn(out, "\n")] = '\0';
	pclose(f);
}

static void test_round_trip(void **state)
{
	const unsigned char img[] = { 0, 1, 2, '\n', 255, 0, 7 };
	unsigned char *got = NULL;
	size_t n = 0;
	char sub[300];

	(void)state;
	/* made where it does not exist yet, its directories too */
	snprintf(sub, sizeof(sub), "%s/kopt/inject", dir);
	assert_int_equal(kopt_inject_avail_load(sub, "GH100 GPU-1", &got, &n),
			 -1);
	assert_int_equal(kopt_inject_avail_store(sub, "GH100 GPU-1", img,
						 sizeof(img)), 0);
	assert_int_equal(kopt_inject_avail_load(sub, "GH100 GPU-1", &got, &n),
			 0);
	assert_int_equal(n, sizeof(img));
	assert_memory_equal(got, img, sizeof(img));
	free(got);
	/* another key (another device, driver or CUPTI): none */
	assert_int_equal(kopt_inject_avail_load(sub, "GH100 GPU-2", &got, &n),
			 -1);
	kopt_inject_avail_drop(sub, "GH100 GPU-1");
	assert_int_equal(kopt_inject_avail_load(sub, "GH100 GPU-1", &got, &n),
			 -1);
}

static void test_refused(void **state)
{
	const unsigned char img[] = { 9, 8, 7, 6 };
	unsigned char *got = NULL;
	size_t n = 0;
	char path[512];
	struct utimbuf old;
	FILE *f;

	(void)state;
	assert_int_equal(kopt_inject_avail_store(dir, "k", img, sizeof(img)),
			 0);
	the_file(path, sizeof(path));
	/* older than the age limit */
	old.actime = old.modtime = time(NULL) - KOPT_INJECT_AVAIL_MAX_AGE - 5;
	assert_int_equal(utime(path, &old), 0);
	assert_int_equal(kopt_inject_avail_load(dir, "k", &got, &n), -1);
	/* cut short */
	assert_int_equal(kopt_inject_avail_store(dir, "k", img, sizeof(img)),
			 0);
	assert_int_equal(truncate(path, 40), 0);
	assert_int_equal(kopt_inject_avail_load(dir, "k", &got, &n), -1);
	/* a byte more than it says */
	assert_int_equal(kopt_inject_avail_store(dir, "k", img, sizeof(img)),
			 0);
	f = fopen(path, "ab");
	assert_non_null(f);
	fputc('x', f);
	fclose(f);
	assert_int_equal(kopt_inject_avail_load(dir, "k", &got, &n), -1);
	/* writable by others */
	assert_int_equal(kopt_inject_avail_store(dir, "k", img, sizeof(img)),
			 0);
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(kopt_inject_avail_load(dir, "k", &got, &n), -1);
	/* nothing kept for an empty image, or a key of two lines */
	assert_int_equal(kopt_inject_avail_store(dir, "k2", img, 0), -1);
	assert_int_equal(kopt_inject_avail_store(dir, "k\n2", img, 4), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
