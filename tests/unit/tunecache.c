#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "tunecache.h"
#include "messages.h"

#define TREE "1b5e9bede69fe6db75dfb91072ae7218b4753991"

static struct kopt_tunecache_line line(const char *uuid, long b,
				       const char *config, const char *status,
				       double us)
{
	struct kopt_tunecache_line l = {
		"NVIDIA H200", (char *)uuid, b, 1, 4096, TREE,
		"0a44ddd6bd6b", (char *)config, (char *)status, us, NAN, 1.25,
		"2026-12-02T01:00:00Z"
	};
	return l;
}

/* A device named "#..." begins its line: escaped, not read as a comment. */
static void test_hash_device(void **state)
{
	struct kopt_tunecache c = KOPT_TUNECACHE_INIT, back = KOPT_TUNECACHE_INIT;
	struct kopt_tunecache_line l;
	struct kopt_buf out = KOPT_BUF_INIT;

	(void)state;
	l = line("GPU-a", 32, "BN=64", "ok", 1.5);
	l.device = "#1 board";
	kopt_tunecache_put(&c, &l);
	kopt_tunecache_format(&out, &c);
	assert_non_null(strstr(out.buf, "\n\\#1 board\t"));
	assert_int_equal(kopt_tunecache_parse(&back, out.buf, out.len, "x"), 0);
	assert_int_equal(back.nr, 1);
	assert_string_equal(back.lines[0].device, "#1 board");
	kopt_tunecache_release(&c);
	kopt_tunecache_release(&back);
	kopt_buf_release(&out);
}

static void test_put_find_format(void **state)
{
	struct kopt_tunecache c = KOPT_TUNECACHE_INIT, back = KOPT_TUNECACHE_INIT;
	struct kopt_tunecache_line l;
	struct kopt_buf out = KOPT_BUF_INIT, again = KOPT_BUF_INIT;
	const struct kopt_tunecache_line *hit;

	(void)state;
	l = line("GPU-b", 32, "BN=64,ST=3", "ok", 44.5);
	kopt_tunecache_put(&c, &l);
	l = line("GPU-a", 32, "BN=64,ST=4", "crashed", NAN);
	kopt_tunecache_put(&c, &l);
	l = line("GPU-b", 32, "BN=64,ST=3", "ok", 43.25);  /* replaces */
	kopt_tunecache_put(&c, &l);
	assert_int_equal(c.nr, 2);
	assert_string_equal(c.lines[0].uuid, "GPU-a");   /* sorted */
	hit = kopt_tunecache_find(&c, "NVIDIA H200", "GPU-b", 32, 1, 4096,
				  TREE, "0a44ddd6bd6b", "BN=64,ST=3");
	assert_non_null(hit);
	assert_true(hit->us == 43.25);
	/* every part of the key counts */
	assert_null(kopt_tunecache_find(&c, "NVIDIA H200", "GPU-c", 32, 1,
					4096, TREE, "0a44ddd6bd6b",
					"BN=64,ST=3"));
	assert_null(kopt_tunecache_find(&c, "NVIDIA H200", "GPU-b", 32, 16,
					4096, TREE, "0a44ddd6bd6b",
					"BN=64,ST=3"));
	assert_null(kopt_tunecache_find(&c, "NVIDIA H200", "GPU-b", 32, 1,
					4096, "2b5e9bede69fe6db75dfb91072ae7218b4753991",
					"0a44ddd6bd6b", "BN=64,ST=3"));
	assert_null(kopt_tunecache_find(&c, "NVIDIA H200", "GPU-b", 32, 1,
					4096, TREE, "0a44ddd6bd6c",
					"BN=64,ST=3"));
	/* the model, any GPU of it */
	assert_non_null(kopt_tunecache_find_model(&c, "NVIDIA H200", 32, 1,
						  4096, TREE, "0a44ddd6bd6b",
						  "BN=64,ST=4"));
	kopt_tunecache_format(&out, &c);
	assert_string_equal(out.buf,
		"# git-kopt tuning cache 1\n"
		"# device\tuuid\tb\ts\tt\ttree\tbuild\tconfig\tstatus\tus\t"
		"spread_pct\trun_s\tdate\n"
		"NVIDIA H200\tGPU-a\t32\t1\t4096\t" TREE "\t0a44ddd6bd6b\t"
		"BN=64,ST=4\tcrashed\t-\t-\t1.25\t2026-12-02T01:00:00Z\n"
		"NVIDIA H200\tGPU-b\t32\t1\t4096\t" TREE "\t0a44ddd6bd6b\t"
		"BN=64,ST=3\tok\t43.250\t-\t1.25\t2026-12-02T01:00:00Z\n");
	assert_int_equal(kopt_tunecache_parse(&back, out.buf, out.len, "x"), 0);
	kopt_tunecache_format(&again, &back);
	assert_string_equal(again.buf, out.buf);
	kopt_tunecache_release(&c);
	kopt_tunecache_release(&back);
	kopt_buf_release(&out);
	kopt_buf_release(&again);
}

static void bad(const char *text, const char *want)
{
	struct kopt_tunecache c = KOPT_TUNECACHE_INIT;

	kopt_buf_reset(&messages);
	assert_int_equal(kopt_tunecache_parse(&c, text, strlen(text), "t.tsv"),
			 KOPT_EINVALID);
	assert_string_equal(messages.buf, want);
	assert_int_equal(c.nr, 0);
}

static void test_bad_lines(void **state)
{
	(void)state;
	bad("hello\n", "error: t.tsv:1: not a tuning cache (expected "
	    "'# git-kopt tuning cache 1')\n");
	bad("# git-kopt tuning cache 2\n", "error: t.tsv:1: not a tuning cache "
	    "of this format (expected '# git-kopt tuning cache 1')\n");
	bad("# git-kopt tuning cache 1\na\tb\n",
	    "error: t.tsv:2: 2 fields, expected 13\n");
	bad("# git-kopt tuning cache 1\ncpu\th\t0\t1\t1\t" TREE
	    "\t0a44ddd6bd6b\tA=1\tok\t1\t-\t-\t-\n",
	    "error: t.tsv:2: b, s and t must be positive integers\n");
	bad("# git-kopt tuning cache 1\ncpu\th\t1\t1\t1\tabc\t0a44ddd6bd6b\t"
	    "A=1\tok\t1\t-\t-\t-\n", "error: t.tsv:2: bad source tree id\n");
	bad("# git-kopt tuning cache 1\ncpu\th\t1\t1\t1\t" TREE
	    "\t0a44ddd6bd6b\tA=1\tfast\t1\t-\t-\t-\n",
	    "error: t.tsv:2: bad status (expected ok, failed, crashed, hung, "
	    "build-failed or no-time)\n");
	bad("# git-kopt tuning cache 1\ncpu\th\t1\t1\t1\t" TREE
	    "\t0a44ddd6bd6b\tA=1\tok\t-\t-\t-\t-\n",
	    "error: t.tsv:2: status ok without a time\n");
	bad("# git-kopt tuning cache 1\ncpu\th\t1\t1\t1\t" TREE
	    "\t0a44ddd6bd6b\tA=1\tok\t1e999\t-\t-\t-\n",
	    "error: t.tsv:2: bad number\n");
}

static void test_build_key(void **state)
{
	char a[13], b[13], c[13];

	(void)state;
	git_libgit2_init();
	kopt_tunecache_build_key(a, "make {tiling}", "./bench", "median {us} us");
	kopt_tunecache_build_key(b, "make {tiling}", "./bench", "median {us} us");
	kopt_tunecache_build_key(c, "make -O3 {tiling}", "./bench",
				 "median {us} us");
	assert_int_equal(strlen(a), 12);
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	git_libgit2_shutdown();
}

static void test_missing_file_is_empty(void **state)
{
	struct kopt_tunecache c = KOPT_TUNECACHE_INIT;

	(void)state;
	assert_int_equal(kopt_tunecache_read(&c, "/nonexistent/v1.tsv", "v1"), 0);
	assert_int_equal(c.nr, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_find_format),
		cmocka_unit_test(test_hash_device),
		MESSAGES_TEST(test_bad_lines),
		cmocka_unit_test(test_build_key),
		cmocka_unit_test(test_missing_file_is_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
