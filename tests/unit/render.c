#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "buf.h"
#include "render.h"
#include "results.h"

static const char *vs(int metric, double cur, double prev)
{
	static struct kopt_buf sb = KOPT_BUF_INIT;

	kopt_buf_reset(&sb);
	kopt_render_vs(&sb, metric, cur, prev);
	return sb.buf;
}

static const char *value(int metric, double v)
{
	static struct kopt_buf sb = KOPT_BUF_INIT;

	kopt_buf_reset(&sb);
	kopt_render_value(&sb, metric, v);
	return sb.buf;
}

static void test_vs(void **state)
{
	(void)state;
	assert_string_equal(vs(KOPT_METRIC_DURATION_US, 41.3, 95.1),
			    "56.6% faster");
	assert_string_equal(vs(KOPT_METRIC_DURATION_US, 100, 80), "25.0% slower");
	assert_string_equal(vs(KOPT_METRIC_DURATION_US, 80.01, 80),
			    "unchanged");
	assert_string_equal(vs(KOPT_METRIC_TFLOPS, 116.4, 50.6), "+130.0%");
	assert_string_equal(vs(KOPT_METRIC_GBPS, 90, 100), "-10.0%");
	assert_string_equal(vs(KOPT_METRIC_GBPS, 100, 100), "+0.0%");
	assert_string_equal(vs(KOPT_METRIC_OCC_PCT, 48, 24), "--");
	assert_string_equal(vs(KOPT_METRIC_TC_PCT, 48, 24), "--");
	assert_string_equal(vs(KOPT_METRIC_TFLOPS, 1, NAN), "--");
	assert_string_equal(vs(KOPT_METRIC_TFLOPS, NAN, 1), "--");
	assert_string_equal(vs(KOPT_METRIC_TFLOPS, 1, 0), "--");
	assert_true(isnan(kopt_change_pct(1, NAN)));
	assert_true(kopt_change_pct(110, 100) > 9.99);
}

static void test_values(void **state)
{
	(void)state;
	/* rounding happens only here */
	assert_string_equal(value(KOPT_METRIC_DURATION_US, 41.2961),
			    "41.30 \xce\xbcs");
	assert_string_equal(value(KOPT_METRIC_OCC_PCT, 47.6), "48%");
	assert_string_equal(value(KOPT_METRIC_TFLOPS, 59.3049), "59.30");
	assert_string_equal(value(KOPT_METRIC_SPILL_BYTES, 0), "0");
	assert_string_equal(value(KOPT_METRIC_DRAM_PCT, NAN), "--");
}

static void test_paragraph(void **state)
{
	struct kopt_results_entry e;
	struct kopt_buf sb = KOPT_BUF_INIT;

	(void)state;
	kopt_results_entry_init(&e);
	e.b = 16;
	e.b_requested = 32;
	e.s = 16;
	e.t = 4096;
	kopt_render_perf_paragraph(&sb, &e);
	assert_string_equal(sb.buf, "**Performance** (unknown device, b=16 "
			    "(asked 32), s=16, t=4096):");
	e.device.name = kopt_strdup("NVIDIA H200");
	e.device.clocks_locked = 1;
	e.replayed = 1;
	e.dtype = kopt_strdup("bfloat16");
	e.b = 32;
	kopt_buf_reset(&sb);
	kopt_render_perf_paragraph(&sb, &e);
	assert_string_equal(sb.buf, "**Performance** (NVIDIA H200, replayed "
			    "capture, locked clocks, bfloat16, b=32, s=16, "
			    "t=4096):");
	kopt_results_entry_release(&e);
	kopt_buf_release(&sb);
}

static void test_block(void **state)
{
	struct kopt_results_entry e;
	struct kopt_buf sb = KOPT_BUF_INIT;

	(void)state;
	kopt_results_entry_init(&e);
	e.b = e.b_requested = 32;
	e.s = 1;
	e.t = 4096;
	e.device.name = kopt_strdup("NVIDIA H200");
	e.metrics[KOPT_METRIC_DURATION_US] = 95.1;
	e.metrics[KOPT_METRIC_OCC_PCT] = 24.4;
	kopt_render_perf_block(&sb, &e, NULL);
	assert_string_equal(sb.buf,
		"**Performance** (NVIDIA H200, b=32, s=1, t=4096):\n"
		"\n"
		"| Metric            | Value    | vs Previous |\n"
		"| ----------------- | -------- | ----------- |\n"
		"| Duration          | 95.10 \xce\xbcs | --          |\n"
		"| Achieved TFLOPs/s | --       | --          |\n"
		"| Achieved GB/s     | --       | --          |\n"
		"| Occupancy         | 24%      | --          |\n"
		"| TC Util           | --       | --          |\n"
		"\n"
		"**Bottleneck**: not classified\n"
		"\n"
		"**Issues**:\n"
		"- (none found by the profiler)\n");
	kopt_results_entry_release(&e);
	kopt_buf_release(&sb);
}

static void test_mdtable(void **state)
{
	static const char *const header[] = { "Version", "Duration" };
	struct kopt_mdtable t;
	struct kopt_buf sb = KOPT_BUF_INIT;

	(void)state;
	kopt_mdtable_init(&t, 2, header);
	kopt_mdtable_align_right(&t, 1);
	kopt_mdtable_add(&t, "v0");
	kopt_mdtable_addf(&t, "%.2f \xce\xbcs", 95.1);
	kopt_mdtable_add(&t, "a|b");
	kopt_mdtable_add(&t, "1");
	kopt_mdtable_render(&sb, &t);
	assert_string_equal(sb.buf,
		"| Version | Duration |\n"
		"| ------- | -------: |\n"
		"| v0      | 95.10 \xce\xbcs |\n"
		"| a\\|b    |        1 |\n");
	kopt_mdtable_release(&t);
	kopt_buf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vs),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_paragraph),
		cmocka_unit_test(test_block),
		cmocka_unit_test(test_mdtable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
