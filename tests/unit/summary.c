#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "buf.h"
#include "designer.h"
#include "error.h"
#include "summary.h"
#include "messages.h"

static const struct kopt_summary_expect expect = {
	"mla-decode", "v3", "kernels/mla_decode/v3", "docs/kernels/mla-decode.md"
};

static const char complete[] =
	"I built it and ran both trials.\n"
	"\n"
	"```markdown\n"
	"## New Version: mla-decode v3\n"
	"### Changes Applied:\n"
	"- Split-KV over 4 chunks, combined in a second kernel\n"
	"- Launch bounds (256, 2)\n"
	"### Files: Created/Modified `kernels/mla_decode/v3/mla_decode_v3.cu`, "
	"./kernels/mla_decode//v3/combine.cu\n"
	"### Correctness: PASS (rel_err 1.9e-3)\n"
	"\n"
	"### Trial Configurations Checked\n"
	"1. [32, 1, 4096] -- decode: the grid was under one wave\n"
	"2. b=32, s=16, t=4096 -- the target's trial\n"
	"\n"
	"### Devlog Entry Written: `docs/kernels/mla-decode.md`\n"
	"```\n";

static void parse_ok(struct kopt_summary *s, const char *text)
{
	if (kopt_summary_parse(s, text, strlen(text), &expect))
		fail_msg("refused: %s", messages.buf);
}

static void refused(const char *text, const char *why)
{
	struct kopt_summary s = KOPT_SUMMARY_INIT;
	struct kopt_buf want = KOPT_BUF_INIT;

	kopt_buf_reset(&messages);
	assert_int_equal(kopt_summary_parse(&s, text, strlen(text), &expect),
			 KOPT_EINVALID);
	kopt_buf_addf(&want, "error: %s\n", why);
	assert_string_equal(messages.buf, want.buf);
	assert_null(s.kernel);
	assert_int_equal(s.files.nr, 0);
	kopt_buf_release(&want);
}

static char *replace(const char *text, const char *from, const char *to)
{
	struct kopt_buf b = KOPT_BUF_INIT;
	const char *p = strstr(text, from);

	assert_non_null(p);
	kopt_buf_add(&b, text, (size_t)(p - text));
	kopt_buf_addstr(&b, to);
	kopt_buf_addstr(&b, p + strlen(from));
	return kopt_buf_detach(&b, NULL);
}

static void test_complete(void **state)
{
	struct kopt_summary s = KOPT_SUMMARY_INIT;

	(void)state;
	parse_ok(&s, complete);
	assert_string_equal(s.kernel, "mla-decode");
	assert_string_equal(s.version, "v3");
	assert_int_equal(s.changes.nr, 2);
	assert_string_equal(s.changes.v[1], "Launch bounds (256, 2)");
	assert_int_equal(s.files.nr, 2);
	assert_string_equal(s.files.v[0], "kernels/mla_decode/v3/mla_decode_v3.cu");
	assert_string_equal(s.files.v[1], "kernels/mla_decode/v3/combine.cu");
	assert_int_equal(s.pass, 1);
	assert_int_equal(s.trials_nr, 2);
	assert_int_equal(s.trials[0].b, 32);
	assert_int_equal(s.trials[0].s, 1);
	assert_int_equal(s.trials[0].t, 4096);
	assert_string_equal(s.trials[0].why, "decode: the grid was under one wave");
	assert_int_equal(s.trials[1].s, 16);
	assert_string_equal(s.devlog, "docs/kernels/mla-decode.md");
	assert_string_equal(messages.buf, "");
	kopt_summary_release(&s);
}

static void test_list_files_and_fail(void **state)
{
	struct kopt_summary s = KOPT_SUMMARY_INIT;
	char *t = replace(complete, "### Files: Created/Modified "
			  "`kernels/mla_decode/v3/mla_decode_v3.cu`, "
			  "./kernels/mla_decode//v3/combine.cu\n",
			  "### Files:\n- Created: kernels/mla_decode/v3/a.cu "
			  "(new)\n- Modified `kernels/mla_decode/v3`\n");
	char *u = replace(t, "PASS (rel_err 1.9e-3)", "**FAIL**");

	(void)state;
	parse_ok(&s, u);
	assert_int_equal(s.files.nr, 2);
	assert_string_equal(s.files.v[0], "kernels/mla_decode/v3/a.cu");
	assert_string_equal(s.files.v[1], "kernels/mla_decode/v3");
	assert_int_equal(s.pass, 0);
	kopt_summary_release(&s);
	free(t);
	free(u);
}

static void test_missing_parts(void **state)
{
	char *t;

	(void)state;
	refused("Sure! I changed the kernel.\n",
		"the implementation summary has no 'New Version' part");
	t = replace(complete, "### Correctness: PASS (rel_err 1.9e-3)\n", "");
	refused(t, "the implementation summary has no 'Correctness' part");
	free(t);
	t = replace(complete, "### Devlog Entry Written", "### Devlog");
	refused(t, "the implementation summary has no 'Devlog Entry Written' part");
	free(t);
	t = replace(complete, "1. [32, 1, 4096] -- decode: the grid was under "
		    "one wave\n2. b=32, s=16, t=4096 -- the target's trial\n", "");
	refused(t, "the implementation summary's 'Trial Configurations "
		"Checked' (line 11) is empty");
	free(t);
	t = replace(complete, "### Correctness: PASS", "### Files: x\n"
		    "### Correctness: PASS");
	refused(t, "the implementation summary has the 'Files' part twice");
	free(t);
}

static void test_bad_values(void **state)
{
	char *t;

	(void)state;
	t = replace(complete, "PASS (rel_err 1.9e-3)", "mostly");
	refused(t, "the implementation summary's Correctness (line 9) is "
		"neither PASS nor FAIL");
	free(t);
	t = replace(complete, "mla-decode v3\n", "mla-decode v4\n");
	refused(t, "the implementation summary is for version 'v4', not 'v3'");
	free(t);
	t = replace(complete, "New Version: mla-decode", "New Version: gemm");
	refused(t, "the implementation summary is for kernel 'gemm', not "
		"'mla-decode'");
	free(t);
	t = replace(complete, "2. b=32, s=16, t=4096", "2. the big one");
	refused(t, "the implementation summary's trial configuration 'the "
		"big one -- the target's trial' (line 11) has no b, s and t");
	free(t);
	t = replace(complete, "Written: `docs/kernels/mla-decode.md`",
		    "Written: docs/kernels/other.md");
	refused(t, "the implementation summary's devlog entry is "
		"'docs/kernels/other.md', not the kernel's devlog "
		"'docs/kernels/mla-decode.md'");
	free(t);
}

static void test_outside_the_folder(void **state)
{
	char *t;

	(void)state;
	t = replace(complete, "./kernels/mla_decode//v3/combine.cu",
		    "kernels/mla_decode/harness/harness.cu");
	refused(t, "the implementation summary claims "
		"'kernels/mla_decode/harness/harness.cu' (line 8), outside "
		"the version's folder 'kernels/mla_decode/v3'");
	free(t);
	t = replace(complete, "./kernels/mla_decode//v3/combine.cu",
		    "kernels/mla_decode/v3/../v2/x.cu");
	refused(t, "the implementation summary claims "
		"'kernels/mla_decode/v3/../v2/x.cu' (line 8), outside the "
		"version's folder 'kernels/mla_decode/v3'");
	free(t);
	t = replace(complete, "./kernels/mla_decode//v3/combine.cu",
		    "/etc/passwd");
	refused(t, "the implementation summary claims '/etc/passwd' (line 8), "
		"outside the version's folder 'kernels/mla_decode/v3'");
	free(t);
	t = replace(complete, "./kernels/mla_decode//v3/combine.cu",
		    "kernels/mla_decode/v30/x.cu");
	refused(t, "the implementation summary claims "
		"'kernels/mla_decode/v30/x.cu' (line 8), outside the "
		"version's folder 'kernels/mla_decode/v3'");
	free(t);
}

static void test_binary(void **state)
{
	struct kopt_summary s = KOPT_SUMMARY_INIT;

	(void)state;
	assert_int_equal(kopt_summary_parse(&s, "## New Version: a\0b", 19,
					    &expect), KOPT_EINVALID);
	assert_string_equal(messages.buf,
			    "error: the implementation summary is binary\n");
}

static const char devlog[] =
	"# mla-decode\n"
	"\n"
	"## Development log\n"
	"\n"
	"### V3: split-KV\n"
	"\n"
	"**Location**: `kernels/mla_decode/v3`\n"
	"\n"
	"**What changed**:\n"
	"- Split-KV\n"
	"\n"
	"### V4: next\n"
	"\n"
	"**What changed**:\n"
	"- more\n";

static void test_record_in_devlog(void **state)
{
	struct kopt_summary s = KOPT_SUMMARY_INIT;
	struct kopt_buf text = KOPT_BUF_INIT, once = KOPT_BUF_INIT;
	const char *block;
	size_t at;

	(void)state;
	parse_ok(&s, complete);
	kopt_buf_addstr(&text, devlog);
	assert_int_equal(kopt_designer_record_summary(&text, "d.md", "v3", &s,
						      "claude"), 0);
	block = strstr(text.buf, "\n**Implementation summary** (claude):\n");
	assert_non_null(block);
	at = (size_t)(block - text.buf) + 1;
	/* the bytes before and after the block are the old ones */
	assert_memory_equal(text.buf, devlog, at - 1);
	assert_non_null(strstr(text.buf, "- Checked b=32, s=1, t=4096: decode: "
			       "the grid was under one wave\n"
			       "- Checked b=32, s=16, t=4096: the target's "
			       "trial\n\n### V4: next\n"));
	assert_non_null(strstr(text.buf, "- Files: "
			       "`kernels/mla_decode/v3/mla_decode_v3.cu`, "
			       "`kernels/mla_decode/v3/combine.cu`\n"));
	/* a second time replaces it: nothing changes */
	kopt_buf_addbuf(&once, &text);
	assert_int_equal(kopt_designer_record_summary(&text, "d.md", "v3", &s,
						      "claude"), 0);
	assert_string_equal(text.buf, once.buf);
	assert_int_equal(kopt_designer_record_summary(&text, "d.md", "v9", &s,
						      "claude"), KOPT_ENOTFOUND);
	kopt_summary_release(&s);
	kopt_buf_release(&text);
	kopt_buf_release(&once);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_complete),
		MESSAGES_TEST(test_list_files_and_fail),
		MESSAGES_TEST(test_missing_parts),
		MESSAGES_TEST(test_bad_values),
		MESSAGES_TEST(test_outside_the_folder),
		MESSAGES_TEST(test_binary),
		MESSAGES_TEST(test_record_in_devlog),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
