#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "chart.h"
#include "devlog.h"
#include "error.h"
#include "plot.h"

#include "messages.h"

static void number_is(double v, const char *want)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	kopt_chart_number(&sb, v);
	assert_string_equal(sb.buf, want);
	kopt_buf_release(&sb);
}

static void test_numbers_and_axis(void **state)
{
	(void)state;
	number_is(95.1, "95.1");
	number_is(45.0, "45");
	number_is(3677.234, "3677.23");
	number_is(0.004, "0");
	number_is(-0.001, "0");
	number_is(1201.105, "1201.11");
	assert_true(kopt_chart_nice_max(95.1) == 100);
	assert_true(kopt_chart_nice_max(140) == 150);
	assert_true(kopt_chart_nice_max(3677) == 4000);
	assert_true(kopt_chart_nice_max(100) == 100);
	assert_true(kopt_chart_nice_max(0.37) == 0.4);
	assert_true(kopt_chart_nice_max(0) == 1);
	assert_true(kopt_chart_nice_max(NAN) == 1);
}

static void point(struct kopt_chart_series *s, const char *v, double value,
		  int regression, double change, int replayed)
{
	struct kopt_chart_point *p;

	KOPT_ALLOC_GROW(s->points, s->points_nr + 1, s->points_alloc);
	p = &s->points[s->points_nr++];
	p->version = kopt_strdup(v);
	p->value = value;
	p->regression = regression;
	p->change_pct = change;
	p->replayed = replayed;
	p->from_devlog = 0;
}

static void one_series(struct kopt_chart *c, const char *trial,
		       const char *device)
{
	struct kopt_chart_series *s;

	KOPT_ALLOC_GROW(c->series, c->series_nr + 1, c->series_alloc);
	s = &c->series[c->series_nr++];
	memset(s, 0, sizeof(*s));
	s->trial = kopt_strdup(trial);
	s->config = kopt_strdup("b=32, s=1, t=4096");
	s->device = kopt_strdup(device);
}

static void test_mermaid(void **state)
{
	struct kopt_chart c = KOPT_CHART_INIT;
	struct kopt_buf out = KOPT_BUF_INIT;

	(void)state;
	c.noise_pct = 3;
	one_series(&c, "decode", "NVIDIA \"H200\"");
	point(&c.series[0], "v0", 95.1, 0, NAN, 0);
	point(&c.series[0], "v1", NAN, 0, NAN, 0);
	point(&c.series[0], "v2", 41.3, 0, -56.6, 1);
	point(&c.series[0], "v3", 45, 1, 8.96, 0);
	one_series(&c, "stress", "NVIDIA H200");
	point(&c.series[1], "v0", NAN, 0, NAN, 0);
	kopt_chart_mermaid(&out, &c, "mla-decode");
	assert_string_equal(out.buf,
		"**decode** (b=32, s=1, t=4096) on NVIDIA \"H200\": duration "
		"per version in us, lower is better.\n"
		"\n"
		"```mermaid\n"
		"xychart-beta\n"
		"    title \"mla-decode decode, NVIDIA 'H200'\"\n"
		"    x-axis [\"v0\", \"v2\", \"v3 \u25b2\"]\n"
		"    y-axis \"duration (us)\" 0 --> 100\n"
		"    line [95.1, 41.3, 45]\n"
		"```\n"
		"\n"
		"\u25b2 slower than its parent beyond the 3% noise: v3 "
		"(+9.0%).\n"
		"\n"
		"Replayed from recorded captures: v2.\n"
		"\n"
		"Not measured on decode: v1.\n");
	kopt_chart_release(&c);
	kopt_buf_release(&out);
}

static void put(const char *text, const char *body, struct kopt_buf *out,
		int *changed)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	struct kopt_devlog_edit ed;

	assert_int_equal(kopt_devlog_parse(&dl, text, strlen(text), "k.md"),
			 0);
	assert_int_equal(kopt_devlog_put_results(&dl, body, &ed), 0);
	*changed = ed.changed;
	kopt_buf_reset(out);
	kopt_buf_addbuf(out, &dl.text);
	kopt_devlog_release(&dl);
}

static void test_results_block_crlf_and_idempotent(void **state)
{
	static const char text[] =
		"# k\r\n\r\n## Overview\r\n\r\nA kernel.\r\n\r\n"
		"## Development log\r\n\r\n### V0: base\r\n\r\n"
		"**What changed**:\r\n- first\r\n";
	struct kopt_buf once = KOPT_BUF_INIT, twice = KOPT_BUF_INIT;
	struct kopt_buf other = KOPT_BUF_INIT;
	int changed;

	(void)state;
	put(text, "chart\n", &once, &changed);
	assert_true(changed);
	assert_string_equal(once.buf,
		"# k\r\n\r\n## Overview\r\n\r\nA kernel.\r\n\r\n"
		"## Results\r\n\r\n"
		"<!-- kopt:results: written by git kopt -->\r\n\r\n"
		"chart\r\n\r\n<!-- /kopt:results -->\r\n\r\n"
		"## Development log\r\n\r\n### V0: base\r\n\r\n"
		"**What changed**:\r\n- first\r\n");
	put(once.buf, "chart\n", &twice, &changed);
	assert_false(changed);
	assert_string_equal(twice.buf, once.buf);
	put(once.buf, "another\nchart\n", &other, &changed);
	assert_true(changed);
	assert_non_null(strstr(other.buf, "\r\n\r\nanother\r\nchart\r\n\r\n"
			       "<!-- /kopt:results -->\r\n\r\n## Development"));
	kopt_buf_release(&once);
	kopt_buf_release(&twice);
	kopt_buf_release(&other);
}

static void test_results_block_markers_in_code_are_text(void **state)
{
	static const char text[] =
		"# k\n\n## Development log\n\n### V0: base\n\n```\n"
		"<!-- kopt:results: written by git kopt -->\n```\n";
	struct kopt_buf out = KOPT_BUF_INIT;
	int changed;

	(void)state;
	put(text, "chart\n", &out, &changed);
	/* the fenced marker is an example, not the block: a new section */
	assert_true(kopt_starts_with(out.buf, "# k\n\n## Results\n\n"
				     "<!-- kopt:results: written by git kopt"
				     " -->\n\nchart\n\n<!-- /kopt:results -->"
				     "\n\n## Development log\n"));
	assert_true(kopt_ends_with(out.buf, text + strlen("# k\n\n")));
	kopt_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_numbers_and_axis),
		MESSAGES_TEST(test_mermaid),
		MESSAGES_TEST(test_results_block_crlf_and_idempotent),
		MESSAGES_TEST(test_results_block_markers_in_code_are_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
