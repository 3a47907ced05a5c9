#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "scaffold.h"

static char *renamed(const struct kopt_rename *r, const char *text)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	kopt_rename_text(&sb, r, text, strlen(text));
	return kopt_buf_detach(&sb, NULL);
}

#define assert_renamed(r, in, want) do { \
	char *got_ = renamed((r), (in)); \
	assert_string_equal(got_, (want)); \
	free(got_); \
} while (0)

static void test_suffix_to_suffix(void **state)
{
	struct kopt_rename r;

	(void)state;
	kopt_rename_init(&r, 2, 3, 1);
	assert_renamed(&r, "foo_v2.cu", "foo_v3.cu");
	assert_renamed(&r, "foo_v2_kernel<<<g, b>>>(x_v2);",
		       "foo_v3_kernel<<<g, b>>>(x_v3);");
	assert_renamed(&r, "#ifndef FOO_V2_H", "#ifndef FOO_V3_H");
	/* not the same version, not a suffix */
	assert_renamed(&r, "foo_v20 foo_v12 v2 _v2 foo_v2x foo_v02",
		       "foo_v20 foo_v12 v2 _v2 foo_v2x foo_v02");
	kopt_rename_release(&r);
}

static void test_disabled_copies(void **state)
{
	struct kopt_rename r;

	(void)state;
	kopt_rename_init(&r, 2, 3, 0);
	assert_renamed(&r, "foo_v2_kernel", "foo_v2_kernel");
	kopt_rename_release(&r);
}

static void test_base_version_stems(void **state)
{
	struct kopt_strvec prefixes = KOPT_STRVEC_INIT;
	struct kopt_rename r;
	struct kopt_buf path = KOPT_BUF_INIT;

	(void)state;
	kopt_strvec_push(&prefixes, "mla_decode");
	kopt_rename_init(&r, 0, 1, 1);
	kopt_rename_add_file(&r, "mla_decode.cu", &prefixes);
	kopt_rename_add_file(&r, "mla_decode_tile.cuh", &prefixes);
	kopt_rename_add_file(&r, "main.cu", &prefixes);
	kopt_rename_add_file(&r, "Makefile", &prefixes);
	assert_int_equal(r.stems.nr, 2);
	assert_string_equal(r.stems.v[0], "mla_decode_tile");
	assert_int_equal(r.files.nr, 2);
	assert_renamed(&r, "#include \"mla_decode_tile.cuh\"\n"
		       "mla_decode_kernel(); mla_decode_tile_load(); main();",
		       "#include \"mla_decode_tile_v1.cuh\"\n"
		       "mla_decode_v1_kernel(); mla_decode_tile_v1_load(); "
		       "main();");
	/* a prefix is not a stem unless it ends at a word or '_' */
	assert_renamed(&r, "mla_decoder", "mla_decoder");
	/* a bare stem follows its file; another file of that stem does not */
	assert_renamed(&r, "import mla_decode; #include \"mla_decode.h\"",
		       "import mla_decode_v1; #include \"mla_decode.h\"");
	/* a member of a versioned identifier is no file name */
	assert_renamed(&r, "mla_decode_params.b", "mla_decode_v1_params.b");
	kopt_rename_path(&path, &r, "sub/mla_decode.cu");
	assert_string_equal(path.buf, "sub/mla_decode_v1.cu");
	kopt_buf_reset(&path);
	kopt_rename_path(&path, &r, "mla_decode_dir/main.cu");
	assert_string_equal(path.buf, "mla_decode_dir/main.cu");
	kopt_buf_release(&path);
	kopt_rename_release(&r);
	kopt_strvec_clear(&prefixes);
}

static void test_shared_names_are_kept(void **state)
{
	struct kopt_strvec prefixes = KOPT_STRVEC_INIT;
	struct kopt_rename r;
	struct kopt_buf path = KOPT_BUF_INIT;
	const char *harness = "#include \"mla_decode.h\"\n"
			      "int mla_decode_launch(void);\n";
	const char *make = "SRCS = $(VERSION)/mla_decode_extra.cu\n"
			   "# mla_decode: the kernel\n";

	(void)state;
	kopt_strvec_push(&prefixes, "mla_decode");
	kopt_rename_init(&r, 0, 2, 1);
	kopt_rename_add_file(&r, "mla_decode.cu", &prefixes);
	kopt_rename_add_file(&r, "mla_decode_extra.cu", &prefixes);
	kopt_rename_add_file(&r, "mla_decode.py", &prefixes);
	kopt_rename_scan_shared(&r, harness, strlen(harness));
	kopt_rename_scan_shared(&r, "mla_decode.h", 12);
	kopt_rename_scan_shared(&r, make, strlen(make));
	assert_renamed(&r, "#include \"mla_decode.h\"\n"
		       "int mla_decode_launch(void) { mla_decode_kernel(); }",
		       "#include \"mla_decode.h\"\n"
		       "int mla_decode_launch(void) { mla_decode_v2_kernel(); }");
	/* the Makefile names one file; the .py module's stem is named */
	kopt_rename_path(&path, &r, "mla_decode.cu");
	assert_string_equal(path.buf, "mla_decode_v2.cu");
	kopt_buf_reset(&path);
	kopt_rename_path(&path, &r, "mla_decode_extra.cu");
	assert_string_equal(path.buf, "mla_decode_extra.cu");
	kopt_buf_reset(&path);
	kopt_rename_path(&path, &r, "mla_decode.py");
	assert_string_equal(path.buf, "mla_decode.py");
	kopt_buf_release(&path);
	kopt_rename_release(&r);
	kopt_strvec_clear(&prefixes);
}

static void test_layout(void **state)
{
	struct kopt_kernel k;
	struct kopt_layout l = KOPT_LAYOUT_INIT;
	struct kopt_buf dir = KOPT_BUF_INIT;
	char *v;

	(void)state;
	memset(&k, 0, sizeof(k));
	k.name = "mla-decode";
	k.source = "kernels/{kernel}/impl_{version}";
	assert_int_equal(kopt_layout_init(&l, &k), 0);
	assert_string_equal(l.root, "kernels/mla-decode");
	assert_string_equal(l.comp_prefix, "impl_");
	assert_int_equal(kopt_layout_dir(&dir, &l, "v3"), 0);
	assert_string_equal(dir.buf, "kernels/mla-decode/impl_v3");
	v = kopt_layout_match(&l, "impl_v12");
	assert_string_equal(v, "v12");
	free(v);
	assert_null(kopt_layout_match(&l, "impl_x"));
	assert_null(kopt_layout_match(&l, "v1"));
	kopt_layout_release(&l);
	kopt_buf_release(&dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_suffix_to_suffix),
		cmocka_unit_test(test_disabled_copies),
		cmocka_unit_test(test_base_version_stems),
		cmocka_unit_test(test_shared_names_are_kept),
		cmocka_unit_test(test_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
