#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "buf.h"
#include "strvec.h"

static void test_init_is_empty_string(void **state)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	(void)state;
	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	kopt_buf_release(&sb);
	assert_string_equal(sb.buf, "");
}

static void test_add_and_format(void **state)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	int i;

	(void)state;
	kopt_buf_addstr(&sb, "abc");
	kopt_buf_addch(&sb, '-');
	kopt_buf_addf(&sb, "%d/%s", 42, "x");
	assert_string_equal(sb.buf, "abc-42/x");
	for (i = 0; i < 1000; i++)
		kopt_buf_addf(&sb, "%04d", i);
	assert_int_equal(sb.len, 8 + 4000);
	assert_int_equal(sb.buf[sb.len], '\0');
	kopt_buf_release(&sb);
}

/* Whole numbers print as printf prints them. */
static void test_add_int(void **state)
{
	static const intmax_t values[] = {
		0, 1, -1, 9, 10, 99, 100, 4096, -4096, 2147483647,
		-2147483647 - 1, INTMAX_MAX, INTMAX_MIN
	};
	struct kopt_buf sb = KOPT_BUF_INIT, want = KOPT_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(values) / sizeof(*values); i++) {
		kopt_buf_add_int(&sb, values[i]);
		kopt_buf_addch(&sb, ' ');
		kopt_buf_addf(&want, "%jd ", values[i]);
	}
	kopt_buf_add_uint(&sb, UINTMAX_MAX);
	kopt_buf_addf(&want, "%ju", UINTMAX_MAX);
	assert_string_equal(sb.buf, want.buf);
	assert_int_equal(sb.len, strlen(sb.buf));
	kopt_buf_release(&sb);
	kopt_buf_release(&want);
}

static void test_splice(void **state)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	(void)state;
	kopt_buf_addstr(&sb, "hello world");
	kopt_buf_splice(&sb, 6, 5, "there, friend", 13);
	assert_string_equal(sb.buf, "hello there, friend");
	kopt_buf_splice(&sb, 0, 6, NULL, 0);
	assert_string_equal(sb.buf, "there, friend");
	kopt_buf_insert(&sb, 0, ">> ", 3);
	assert_string_equal(sb.buf, ">> there, friend");
	kopt_buf_release(&sb);
}

static void test_trim_and_detach(void **state)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	char *s;
	size_t len;

	(void)state;
	kopt_buf_addstr(&sb, " \t value \r\n");
	kopt_buf_trim(&sb);
	assert_string_equal(sb.buf, "value");
	s = kopt_buf_detach(&sb, &len);
	assert_int_equal(len, 5);
	assert_string_equal(s, "value");
	assert_string_equal(sb.buf, "");
	free(s);
}

static void test_strvec(void **state)
{
	struct kopt_strvec sv = KOPT_STRVEC_INIT;

	(void)state;
	assert_null(sv.v[0]);
	kopt_strvec_push(&sv, "b");
	kopt_strvec_pushf(&sv, "a%d", 1);
	assert_int_equal(sv.nr, 2);
	assert_null(sv.v[2]);
	kopt_strvec_sort(&sv);
	assert_string_equal(sv.v[0], "a1");
	assert_true(kopt_strvec_has(&sv, "b"));
	kopt_strvec_pop(&sv);
	assert_false(kopt_strvec_has(&sv, "b"));
	kopt_strvec_clear(&sv);
	assert_int_equal(sv.nr, 0);
}

static void test_string_helpers(void **state)
{
	const char *rest;

	(void)state;
	assert_true(kopt_starts_with("kopt/mla/v1", "kopt/"));
	assert_false(kopt_starts_with("kop", "kopt"));
	assert_true(kopt_ends_with("x.json", ".json"));
	assert_true(kopt_skip_prefix("Kopt-Step: design", "Kopt-Step: ", &rest));
	assert_string_equal(rest, "design");
	assert_true(kopt_str_eq("v12", "v12"));
	assert_true(kopt_str_eq("", ""));
	assert_false(kopt_str_eq("v1", "v12"));
	assert_false(kopt_str_eq("v12", "v1"));
	assert_false(kopt_str_eq("v1", "V1"));
	assert_false(kopt_str_eq("", "v"));
}

static void write_bytes(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_read_file(void **state)
{
	char dir[] = "/tmp/kopt-buf-XXXXXX";
	struct kopt_buf sb = KOPT_BUF_INIT, want = KOPT_BUF_INIT;
	struct stat st;
	char *big, *empty;
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	big = kopt_xstrfmt("%s/big", dir);
	empty = kopt_xstrfmt("%s/empty", dir);
	/* larger than any first read: read on to its end */
	for (i = 0; i < 100000; i++)
		kopt_buf_addch(&want, 'a' + (int)(i % 26));
	write_bytes(big, want.buf, want.len);
	write_bytes(empty, "", 0);
	kopt_buf_addstr(&sb, "kept ");
	assert_int_equal(kopt_buf_read_file_stat(&sb, big, &st), 0);
	assert_int_equal(sb.len, 5 + want.len);
	assert_memory_equal(sb.buf + 5, want.buf, want.len);
	assert_int_equal(st.st_size, (off_t)want.len);
	kopt_buf_reset(&sb);
	assert_int_equal(kopt_buf_read_file_stat(&sb, empty, &st), 0);
	assert_int_equal(sb.len, 0);
	assert_int_equal(st.st_size, 0);
	/* a file whose size says nothing: read until read() says its end */
	assert_int_equal(kopt_buf_read_file(&sb, "/proc/self/status"), 0);
	assert_true(kopt_starts_with(sb.buf, "Name:"));
	assert_int_equal(sb.buf[sb.len - 1], '\n');
	assert_int_equal(kopt_buf_read_file(&sb, dir), -1);
	unlink(big);
	unlink(empty);
	rmdir(dir);
	free(big);
	free(empty);
	kopt_buf_release(&sb);
	kopt_buf_release(&want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_is_empty_string),
		cmocka_unit_test(test_add_and_format),
		cmocka_unit_test(test_add_int),
		cmocka_unit_test(test_splice),
		cmocka_unit_test(test_trim_and_detach),
		cmocka_unit_test(test_strvec),
		cmocka_unit_test(test_string_helpers),
		cmocka_unit_test(test_read_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
