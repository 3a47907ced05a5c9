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

#include "buf.h"
#include "error.h"
#include "results.h"

#include "messages.h"

#ifndef KOPT_SOURCE_DIR
#define KOPT_SOURCE_DIR "."
#endif
#define FIX KOPT_SOURCE_DIR "/tests/fixtures/results/"

static void test_read_full(void **state)
{
	struct kopt_results r = KOPT_RESULTS_INIT;
	const struct kopt_results_entry *e;
	double v;

	(void)state;
	assert_int_equal(kopt_results_read_file(&r, FIX "v1.json",
						"mla-decode", "v1"), 0);
	assert_string_equal(messages.buf, "");
	assert_string_equal(r.kernel, "mla-decode");
	assert_string_equal(r.version, "v1");
	assert_string_equal(r.parent, "v0");
	assert_int_equal(r.entries_nr, 2);
	e = &r.entries[0];
	assert_string_equal(e->trial, "decode");
	assert_int_equal(e->b, 32);
	assert_int_equal(e->b_requested, 32);
	assert_string_equal(e->device.name, "NVIDIA H200");
	assert_int_equal(e->device.sms, 132);
	assert_true(e->device.clocks_locked);
	assert_string_equal(e->dtype, "bfloat16");
	assert_int_equal(e->stages_nr, 1);
	assert_int_equal(e->stages[0].grid[0], 128);
	assert_int_equal(e->stages[0].duration_us.n, 190);
	assert_true(e->stages[0].dram_bytes == 1.5e8);
	assert_int_equal(e->opportunities_nr, 2);
	assert_null(e->opportunities[1].detail);
	assert_true(e->opportunities[1].est_gain_pct == 12.5);

	assert_int_equal(kopt_results_metric(e, "dram_pct", &v), 0);
	assert_true(v == 62.0);
	assert_int_equal(kopt_results_metric(e, "spill_bytes", &v), 0);
	assert_true(v == 0.0);
	assert_int_equal(kopt_results_metric(e, "dram", &v), KOPT_EINVALID);

	e = &r.entries[1];
	assert_true(e->replayed);
	assert_int_equal(e->b, 16);
	assert_int_equal(e->b_requested, 32);
	/* null and absent are both "not measured", never 0 */
	assert_int_equal(kopt_results_metric(e, "tc_pct", &v), KOPT_ENOTFOUND);
	assert_int_equal(kopt_results_metric(e, "dram_pct", &v),
			 KOPT_ENOTFOUND);
	assert_int_equal(kopt_results_expr_lookup((void *)e, "nope", &v),
			 KOPT_ENOTFOUND);
	kopt_results_release(&r);
}

static void test_find(void **state)
{
	struct kopt_results r = KOPT_RESULTS_INIT;

	(void)state;
	assert_int_equal(kopt_results_read_file(&r, FIX "v1.json", NULL, NULL),
			 0);
	assert_ptr_equal(kopt_results_find(&r, "decode", 32, 1, 4096),
			 &r.entries[0]);
	assert_null(kopt_results_find(&r, NULL, 32, 1, 4096));
	assert_null(kopt_results_find(&r, "decode", 32, 16, 4096));
	/* b as asked and b as run both find the halved entry */
	assert_ptr_equal(kopt_results_find(&r, "spec-decode", 32, 16, 4096),
			 &r.entries[1]);
	assert_ptr_equal(kopt_results_find(&r, "spec-decode", 16, 16, 4096),
			 &r.entries[1]);
	assert_ptr_equal(kopt_results_find_config(&r, 16, 16, 4096),
			 &r.entries[1]);
	assert_ptr_equal(kopt_results_find_trial(&r, "spec-decode"),
			 &r.entries[1]);
	assert_null(kopt_results_find_trial(&r, "stress"));
	kopt_results_release(&r);
}

static void test_round_trip(void **state)
{
	struct kopt_results r = KOPT_RESULTS_INIT, r2 = KOPT_RESULTS_INIT;
	struct kopt_buf one = KOPT_BUF_INIT, two = KOPT_BUF_INIT;
	char dir[] = "/tmp/kopt-results-XXXXXX";
	char *path;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = kopt_xstrfmt("%s/sub/v1.json", dir);
	assert_int_equal(kopt_results_read_file(&r, FIX "v1.json", NULL, NULL),
			 0);
	assert_int_equal(kopt_results_write(&r, path), 0);
	assert_int_equal(kopt_results_read_file(&r2, path, "mla-decode", "v1"),
			 0);
	kopt_results_format(&one, &r);
	kopt_results_format(&two, &r2);
	assert_string_equal(one.buf, two.buf);
	/* unrounded numbers and unknown fields survive */
	assert_non_null(strstr(one.buf, "140.25"));
	assert_non_null(strstr(one.buf, "0.97"));
	assert_non_null(strstr(one.buf, "\"profiler_note\""));
	assert_non_null(strstr(one.buf, "\"future_field\":\t\"kept\""));
	/* an unmeasured metric stays absent */
	assert_int_equal(isnan(r2.entries[1].metrics[KOPT_METRIC_TC_PCT]), 1);
	assert_string_equal(messages.buf, "");

	kopt_buf_reset(&one);
	assert_int_equal(kopt_buf_read_file(&one, path), 0);
	assert_string_equal(one.buf, two.buf);
	unlink(path);
	free(path);
	path = kopt_xstrfmt("%s/sub", dir);
	rmdir(path);
	free(path);
	rmdir(dir);
	kopt_buf_release(&one);
	kopt_buf_release(&two);
	kopt_results_release(&r);
	kopt_results_release(&r2);
}

static void test_put_replaces_same_identity(void **state)
{
	struct kopt_results r = KOPT_RESULTS_INIT;
	struct kopt_results_entry e;

	(void)state;
	assert_int_equal(kopt_results_read_file(&r, FIX "v1.json", NULL, NULL),
			 0);
	kopt_results_entry_init(&e);
	e.trial = kopt_strdup("decode");
	e.b = 32;
	e.s = 1;
	e.t = 4096;
	e.metrics[KOPT_METRIC_DURATION_US] = 70.0;
	kopt_results_put(&r, &e);
	assert_null(e.trial);
	assert_int_equal(r.entries_nr, 2);
	assert_true(r.entries[0].metrics[KOPT_METRIC_DURATION_US] == 70.0);
	assert_int_equal(r.entries[0].stages_nr, 0);

	kopt_results_entry_init(&e);
	e.b = 8;
	e.s = 1;
	e.t = 1024;
	kopt_results_put(&r, &e);
	assert_int_equal(r.entries_nr, 3);
	assert_null(r.entries[2].trial);
	assert_int_equal(r.entries[2].b_requested, 8);
	assert_ptr_equal(kopt_results_find(&r, NULL, 8, 1, 1024),
			 &r.entries[2]);
	kopt_results_release(&r);
}


static void put_on(struct kopt_results *r, const char *name,
		   const char *uuid, double us)
{
	struct kopt_results_entry e;

	kopt_results_entry_init(&e);
	e.trial = kopt_strdup("decode");
	e.b = 32;
	e.s = 1;
	e.t = 4096;
	e.device.name = kopt_strdup(name);
	e.device.uuid = uuid ? kopt_strdup(uuid) : NULL;
	e.metrics[KOPT_METRIC_DURATION_US] = us;
	kopt_results_put(r, &e);
}

static void test_put_keeps_other_devices(void **state)
{
	struct kopt_results r = KOPT_RESULTS_INIT;
	struct kopt_results_entry like;
	struct kopt_buf text = KOPT_BUF_INIT;
	struct kopt_results back = KOPT_RESULTS_INIT;

	(void)state;
	r.kernel = kopt_strdup("mla-decode");
	r.version = kopt_strdup("v8");
	put_on(&r, "NVIDIA H100 80GB HBM3", "GPU-1111", 90.0);
	put_on(&r, "NVIDIA H200", "GPU-2222", 80.0);
	assert_int_equal(r.entries_nr, 2);
	/* the same device again replaces its own entry only */
	put_on(&r, "NVIDIA H200", "GPU-2222", 79.0);
	assert_int_equal(r.entries_nr, 2);
	assert_true(r.entries[0].metrics[KOPT_METRIC_DURATION_US] == 90.0);
	assert_true(r.entries[1].metrics[KOPT_METRIC_DURATION_US] == 79.0);
	/* another H200 is another device */
	put_on(&r, "NVIDIA H200", "GPU-3333", 81.0);
	assert_int_equal(r.entries_nr, 3);
	/* without uuids, the names tell */
	put_on(&r, "NVIDIA A100", NULL, 200.0);
	assert_int_equal(r.entries_nr, 4);
	/* like with like */
	kopt_results_entry_init(&like);
	like.trial = kopt_strdup("decode");
	like.b = like.b_requested = 32;
	like.s = 1;
	like.t = 4096;
	like.device.name = kopt_strdup("NVIDIA H100 80GB HBM3");
	like.device.uuid = kopt_strdup("GPU-1111");
	assert_ptr_equal(kopt_results_find_like(&r, &like), &r.entries[0]);
	free(like.device.uuid);
	like.device.uuid = kopt_strdup("GPU-9999");
	assert_null(kopt_results_find_like(&r, &like));
	/* what is there from other devices: the first of them */
	assert_ptr_equal(kopt_results_find_elsewhere(&r, &like),
			 &r.entries[0]);
	free(like.device.uuid);
	like.device.uuid = kopt_strdup("GPU-1111");
	assert_ptr_equal(kopt_results_find_elsewhere(&r, &like),
			 &r.entries[1]);
	free(like.trial);
	like.trial = kopt_strdup("spec-decode");
	assert_null(kopt_results_find_elsewhere(&r, &like));
	/* how messages name them */
	kopt_results_device_label(&text, &r.entries[2].device);
	assert_string_equal(text.buf, "NVIDIA H200 (GPU-3333)");
	kopt_buf_reset(&text);
	kopt_results_device_label(&text, &r.entries[3].device);
	assert_string_equal(text.buf, "NVIDIA A100");
	kopt_buf_reset(&text);
	free(like.device.name);
	like.device.name = NULL;
	free(like.device.uuid);
	like.device.uuid = NULL;
	kopt_results_device_label(&text, &like.device);
	assert_string_equal(text.buf, "an unnamed device");
	kopt_buf_reset(&text);
	kopt_results_entry_release(&like);
	/* the uuid survives a write and a read */
	kopt_results_format(&text, &r);
	assert_int_equal(kopt_results_parse(&back, text.buf, text.len, "t",
					    NULL, NULL), 0);
	assert_int_equal(back.entries_nr, 4);
	assert_string_equal(back.entries[2].device.uuid, "GPU-3333");
	kopt_results_release(&back);
	kopt_buf_release(&text);
	kopt_results_release(&r);
}

static void test_copy(void **state)
{
	struct kopt_results r = KOPT_RESULTS_INIT;
	struct kopt_results_entry e;

	(void)state;
	assert_int_equal(kopt_results_read_file(&r, FIX "v1.json", NULL, NULL),
			 0);
	kopt_results_entry_copy(&e, &r.entries[0]);
	kopt_results_release(&r);
	assert_string_equal(e.trial, "decode");
	assert_string_equal(e.stages[0].name, "mla_decode_v1_kernel");
	assert_string_equal(e.opportunities[0].detail,
			    "docs/knowledge/optimizations/split-kv.md");
	kopt_results_entry_release(&e);
}

static void test_derive(void **state)
{
	struct kopt_results_entry e;
	struct kopt_results_stage *st;

	(void)state;
	kopt_results_entry_init(&e);
	e.stages = kopt_calloc(2, sizeof(*e.stages));
	e.stages_nr = e.stages_alloc = 2;
	kopt_results_stage_init(&e.stages[0]);
	kopt_results_stage_init(&e.stages[1]);
	st = &e.stages[0];
	st->name = kopt_strdup("split");
	st->duration_us.median = 10;
	st->dram_pct = 90;
	st = &e.stages[1];
	st->name = kopt_strdup("combine");
	st->duration_us.median = 30;
	st->duration_us.p10 = 29;
	st->duration_us.p90 = 32;
	st->dram_pct = 40;
	st->waves = 2.5;
	kopt_results_derive_metrics(&e);
	assert_true(e.metrics[KOPT_METRIC_DURATION_US] == 40);
	assert_true(e.metrics[KOPT_METRIC_DRAM_PCT] == 40);
	assert_true(e.metrics[KOPT_METRIC_WAVES] == 2.5);
	assert_true(isnan(e.metrics[KOPT_METRIC_TC_PCT]));
	assert_true(e.spread_pct == 10.0);
	/* no L2 hit rate from a stage sampled in kernel replay */
	st->l2_hit_pct = 20;
	st->kernel_replay = 1;
	e.metrics[KOPT_METRIC_L2_HIT_PCT] = NAN;
	kopt_results_derive_metrics(&e);
	assert_true(isnan(e.metrics[KOPT_METRIC_L2_HIT_PCT]));
	st->kernel_replay = 0;
	kopt_results_derive_metrics(&e);
	assert_true(e.metrics[KOPT_METRIC_L2_HIT_PCT] == 20);
	kopt_results_entry_release(&e);
}

static void expect_failure(const char *file, const char *kernel,
			   const char *expected)
{
	struct kopt_results r = KOPT_RESULTS_INIT;

	kopt_buf_reset(&messages);
	assert_int_equal(kopt_results_read_file(&r, file, kernel, "v1"),
			 KOPT_EINVALID);
	assert_string_equal(messages.buf, expected);
	assert_null(r.kernel);
	assert_int_equal(r.entries_nr, 0);
	kopt_results_release(&r);
}

static void test_not_json(void **state)
{
	(void)state;
	expect_failure(FIX "not-json.json", "mla-decode",
		       "error: " FIX "not-json.json:6:54: not valid JSON\n");
}

static void test_schema(void **state)
{
	(void)state;
	expect_failure(FIX "schema2.json", "mla-decode",
		       "error: " FIX "schema2.json: schema: version 2 is not "
		       "supported (this git-kopt reads schema 1)\n");
}

static void test_other_kernel(void **state)
{
	(void)state;
	expect_failure(FIX "other-kernel.json", "mla-decode",
		       "error: " FIX "other-kernel.json: kernel: names kernel "
		       "'gemm', but the file belongs to kernel "
		       "'mla-decode'\n");
}

static void test_bad_fields(void **state)
{
	(void)state;
	expect_failure(FIX "bad-fields.json", "mla-decode",
		"error: " FIX "bad-fields.json: parent: expected a string, "
		"found a number\n"
		"error: " FIX "bad-fields.json: entries[0].config.b: expected "
		"an integer, found a string\n"
		"error: " FIX "bad-fields.json: entries[0].config.s: expected "
		"an integer >= 1, found 1.5\n"
		"error: " FIX "bad-fields.json: entries[0].replayed: expected "
		"true or false, found a string\n"
		"error: " FIX "bad-fields.json: entries[0].device.name: "
		"expected a string, found a number\n"
		"error: " FIX "bad-fields.json: entries[0].stages[0].grid: "
		"expected an array of 3 integers\n"
		"error: " FIX "bad-fields.json: "
		"entries[0].stages[0].duration_us.median: expected a number, "
		"found a string\n"
		"error: " FIX "bad-fields.json: entries[0].metrics.duration_us:"
		" expected a number, found a string\n"
		"error: " FIX "bad-fields.json: entries[0].metrics.dram: not a "
		"canonical metric (see Documentation/results-format.md)\n"
		"error: " FIX "bad-fields.json: entries[0].opportunities[0]: "
		"expected an object, found a string\n"
		"error: " FIX "bad-fields.json: entries[2]: same trial, "
		"configuration and device as entries[1]\n");
}

static void test_parse_buffers(void **state)
{
	struct kopt_results r = KOPT_RESULTS_INIT;
	static const char text[] = "{\"schema\":1,\"kernel\":\"k\","
		"\"version\":\"v0\",\"parent\":null,\"entries\":[]}";

	(void)state;
	assert_int_equal(kopt_results_parse(&r, text, strlen(text), "blob",
					    "k", "v0"), 0);
	assert_null(r.parent);
	kopt_results_release(&r);

	kopt_buf_reset(&messages);
	assert_int_equal(kopt_results_parse(&r, " \n", 2, "blob", NULL, NULL),
			 KOPT_EINVALID);
	assert_string_equal(messages.buf, "error: blob: empty results file\n");
	kopt_buf_reset(&messages);
	assert_int_equal(kopt_results_parse(&r, "[1]", 3, "blob", NULL, NULL),
			 KOPT_EINVALID);
	assert_string_equal(messages.buf,
			    "error: blob: expected a JSON object, found an "
			    "array\n");
	kopt_buf_reset(&messages);
	assert_int_equal(kopt_results_parse(&r, "{} x", 4, "blob", NULL, NULL),
			 KOPT_EINVALID);
	assert_string_equal(messages.buf, "error: blob:1:4: not valid JSON "
			    "(text after the value)\n");
	kopt_buf_reset(&messages);
	assert_int_equal(kopt_results_parse(&r, "{\"kernel\":\"k\"}", 14,
					    "blob", NULL, NULL),
			 KOPT_EINVALID);
	assert_string_equal(messages.buf,
			    "error: blob: schema: missing (expected 1)\n");
	assert_int_equal(kopt_results_read_file(&r, FIX "missing.json", NULL,
						NULL), KOPT_ENOTFOUND);
	/* NUL bytes are not white space */
	kopt_buf_reset(&messages);
	assert_int_equal(kopt_results_parse(&r, "\0\0", 2, "blob", NULL,
					    NULL), KOPT_EINVALID);
	assert_non_null(strstr(messages.buf, "not valid JSON"));
}

/* found by fuzzing: a stage with no duration was written unreadable */
static void test_stage_without_duration(void **state)
{
	struct kopt_results r = KOPT_RESULTS_INIT, back = KOPT_RESULTS_INIT;
	struct kopt_buf out = KOPT_BUF_INIT;

	(void)state;
	assert_int_equal(kopt_results_read_file(&r, FIX "v1.json", NULL, NULL),
			 0);
	assert_true(r.entries_nr > 0 && r.entries[0].stages_nr > 0);
	r.entries[0].stages[0].duration_us.median = NAN;
	kopt_results_format(&out, &r);
	assert_int_equal(kopt_results_parse(&back, out.buf, out.len, "out",
					    NULL, NULL), 0);
	assert_true(isnan(back.entries[0].stages[0].duration_us.median));
	kopt_results_release(&r);
	kopt_results_release(&back);
	kopt_buf_release(&out);
}

/* "replay": "kernel" on a stage is read and written back */
static void test_stage_kernel_replay(void **state)
{
	struct kopt_results r = KOPT_RESULTS_INIT, back = KOPT_RESULTS_INIT;
	struct kopt_buf out = KOPT_BUF_INIT;

	(void)state;
	assert_int_equal(kopt_results_read_file(&r, FIX "v1.json", NULL, NULL),
			 0);
	assert_int_equal(r.entries[0].stages[0].kernel_replay, 0);
	kopt_results_format(&out, &r);
	assert_null(strstr(out.buf, "\"replay\":\t\"kernel\""));
	r.entries[0].stages[0].kernel_replay = 1;
	kopt_buf_reset(&out);
	kopt_results_format(&out, &r);
	assert_non_null(strstr(out.buf, "\"replay\":\t\"kernel\""));
	assert_int_equal(kopt_results_parse(&back, out.buf, out.len, "out",
					    NULL, NULL), 0);
	assert_int_equal(back.entries[0].stages[0].kernel_replay, 1);
	kopt_results_release(&r);
	kopt_results_release(&back);
	kopt_buf_release(&out);
}

/* unknown members outlive the parsed tree, and are written back */
static void test_unknown_members_kept(void **state)
{
	struct kopt_results r = KOPT_RESULTS_INIT;
	struct kopt_buf out = KOPT_BUF_INIT;
	static const char text[] = "{\"schema\":1,\"kernel\":\"k\","
		"\"version\":\"v0\",\"parent\":null,\"entries\":[],"
		"\"future\":{\"list\":[1,\"two\",null],\"flag\":true}}";
	static const char refused[] = "{\"schema\":1,\"kernel\":\"k\","
		"\"versioes\":[1]}";
	int i;

	(void)state;
	/* several files in a row: each one's tree is dropped after it */
	for (i = 0; i < 3; i++) {
		assert_int_equal(kopt_results_parse(&r, text, strlen(text),
						    "blob", "k", "v0"), 0);
		kopt_buf_reset(&out);
		kopt_results_format(&out, &r);
		assert_non_null(strstr(out.buf, "\"future\""));
		assert_non_null(strstr(out.buf, "\"two\""));
	}
	/* found by fuzzing: kept members of a file refused later were lost */
	kopt_buf_reset(&messages);
	assert_int_equal(kopt_results_parse(&r, refused, strlen(refused),
					    "blob", NULL, NULL),
			 KOPT_EINVALID);
	assert_null(strstr(messages.buf, "not valid JSON"));
	kopt_results_release(&r);
	kopt_buf_release(&out);
}

/* ---- the quick reading for the views ---- */

static char *summary_text(const struct kopt_results *r)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	kopt_results_summary(&sb, r);
	return kopt_buf_detach(&sb, NULL);
}

/*
 * `text` through the full reader, the quick one and the view: the same
 * outcome and summary; `quick` says whether the quick one must take it.
 */
static void expect_view_same(const char *text, const char *kernel,
			     const char *version, int quick)
{
	struct kopt_results full = KOPT_RESULTS_INIT, fast = KOPT_RESULTS_INIT;
	struct kopt_results view = KOPT_RESULTS_INIT;
	size_t len = strlen(text);
	char *want, *got, *msg_full;
	int r_full, r_fast, r_view;

	kopt_buf_reset(&messages);
	r_full = kopt_results_parse(&full, text, len, "t.json", kernel,
				    version);
	msg_full = kopt_strdup(messages.buf);
	kopt_buf_reset(&messages);
	r_fast = kopt_results_scan(&fast, text, len, kernel, version);
	assert_string_equal(messages.buf, "");
	r_view = kopt_results_parse_view(&view, text, len, "t.json", kernel,
					 version);
	assert_string_equal(messages.buf, msg_full);
	assert_int_equal(r_view, r_full);
	assert_int_equal(!r_fast, quick);
	if (!r_fast)
		assert_int_equal(r_full, 0);
	if (!r_full) {
		want = summary_text(&full);
		got = summary_text(&view);
		assert_string_equal(got, want);
		free(got);
		if (!r_fast) {
			got = summary_text(&fast);
			assert_string_equal(got, want);
			free(got);
		}
		free(want);
	}
	free(msg_full);
	kopt_results_release(&full);
	kopt_results_release(&fast);
	kopt_results_release(&view);
}

static void expect_file_view_same(const char *file, int quick)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	assert_int_equal(kopt_buf_read_file(&sb, file), 0);
	expect_view_same(sb.buf, "mla-decode", "v1", quick);
	kopt_buf_release(&sb);
}

static void test_view_files(void **state)
{
	(void)state;
	expect_file_view_same(FIX "v1.json", 1);
	/* every refused file is left to the full reader, messages and all */
	expect_file_view_same(FIX "bad-fields.json", 0);
	expect_file_view_same(FIX "not-json.json", 0);
	expect_file_view_same(FIX "schema2.json", 0);
	expect_file_view_same(FIX "other-kernel.json", 0);
}

static void test_view_written(void **state)
{
	struct kopt_results r = KOPT_RESULTS_INIT;
	struct kopt_buf out = KOPT_BUF_INIT;

	(void)state;
	/* what git-kopt writes, the quick reading takes */
	assert_int_equal(kopt_results_read_file(&r, FIX "v1.json",
						"mla-decode", "v1"), 0);
	kopt_results_format(&out, &r);
	expect_view_same(out.buf, "mla-decode", "v1", 1);
	expect_view_same(out.buf, NULL, NULL, 1);
	expect_view_same(out.buf, "mla-decode", "v2", 0);
	expect_view_same(out.buf, "gemm", NULL, 0);
	kopt_results_release(&r);
	kopt_buf_release(&out);
}

#define HEAD "{\"schema\": 1, \"kernel\": \"k\", \"version\": \"v1\", " \
	"\"entries\": [{\"trial\": \"decode\", \"config\": {\"b\": 32, " \
	"\"s\": 1, \"t\": 4096}, "

static void test_view_numbers(void **state)
{
	static const char *const nums[] = {
		"0", "-0", "0.1", "0.30000000000000004", "1e-7", "1E22",
		"1e23", "123456789012345678", "9007199254740993",
		"1.7976931348623157e308", "4.9e-324", "2.2250738585072011e-308",
		"122.5480", "-3.25e+2", "0.000000000000000000000001",
		"1e400", "1e-400", "12345678901234567890123", "7.0e0",
	};
	struct kopt_buf text = KOPT_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(nums) / sizeof(*nums); i++) {
		struct kopt_results r = KOPT_RESULTS_INIT;
		double want = strtod(nums[i], NULL);
		int finite = isfinite(want);
		kopt_buf_reset(&text);
		kopt_buf_addf(&text, HEAD "\"metrics\": {\"duration_us\": %s},"
			      " \"spread_pct\": %s}]}", nums[i], nums[i]);
		expect_view_same(text.buf, NULL, NULL, finite);
		if (!finite)
			continue;
		assert_int_equal(kopt_results_scan(&r, text.buf, text.len,
						   NULL, NULL), 0);
		assert_memory_equal(&r.entries[0].metrics[0], &want,
				    sizeof(want));
		assert_memory_equal(&r.entries[0].spread_pct, &want,
				    sizeof(want));
		kopt_results_release(&r);
	}
	kopt_buf_release(&text);
}

/*
 * Numbers the views do not keep (a stage's) are checked without their
 * value where they can be: the same answers as the full reader's.
 */
static void test_view_checked_only(void **state)
{
	static const char *const nums[] = {
		"0", "-0", "0.1", "1e-7", "1E22", "123456789012345678",
		"-3.25e+2", "1e400", "-1e400", "1e-400", "7.0e0", "36.8927",
	};
	static const struct {
		const char *text;
		int quick;
	} ints[] = {
		{ "0", 1 }, { "-0", 1 }, { "7", 1 }, { "7.0", 1 }, { "1e2", 1 },
		{ "123456789012345", 1 }, { "1234567890123456", 1 },
		{ "9007199254740993", 1 }, { "90071992547409930", 0 },
		{ "1.5", 0 }, { "-1", 0 }, { "1e400", 0 }, { "null", 1 },
	};
	struct kopt_buf text = KOPT_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(nums) / sizeof(*nums); i++) {
		kopt_buf_reset(&text);
		kopt_buf_addf(&text, HEAD "\"stages\": [{\"name\": \"a\", "
			      "\"tc_pct\": %s, \"duration_us\": "
			      "{\"median\": 1, \"p90\": %s}}]}]}", nums[i],
			      nums[i]);
		expect_view_same(text.buf, NULL, NULL,
				 isfinite(strtod(nums[i], NULL)));
	}
	for (i = 0; i < sizeof(ints) / sizeof(*ints); i++) {
		kopt_buf_reset(&text);
		kopt_buf_addf(&text, HEAD "\"stages\": [{\"name\": \"a\", "
			      "\"launches\": %s, \"grid\": [1, 2, 3]}]}]}",
			      ints[i].text);
		expect_view_same(text.buf, NULL, NULL, ints[i].quick);
		if (!strcmp(ints[i].text, "null"))
			continue;
		kopt_buf_reset(&text);
		kopt_buf_addf(&text, HEAD "\"stages\": [{\"name\": \"a\", "
			      "\"grid\": [%s, 1, %s]}]}]}", ints[i].text,
			      ints[i].text);
		expect_view_same(text.buf, NULL, NULL, ints[i].quick);
	}
	kopt_buf_release(&text);
}

/* The text ends at its last '}': a string may hold one before it. */
static void test_view_last_brace(void **state)
{
	(void)state;
	expect_view_same(HEAD "\"bottleneck\": \"{x}\"}]}", NULL, NULL, 1);
	expect_view_same(HEAD "\"spread_pct\": 1}]}\n \t\r\n", NULL, NULL,
			 1);
	/* a string that runs into the last brace: refused by both */
	expect_view_same(HEAD "\"bottleneck\": \"x}]}", NULL, NULL, 0);
	expect_view_same("{\"schema\": 1, \"kernel\": \"k}", NULL, NULL, 0);
	expect_view_same("{\"schema\": 1, \"kernel\": \"k}\"", NULL, NULL, 0);
	/* an inner object closing last, the outer one open */
	expect_view_same("{\"schema\": 1, \"x\": {}", NULL, NULL, 0);
	expect_view_same("}", NULL, NULL, 0);
	expect_view_same(" \n", NULL, NULL, 0);
	expect_view_same("", NULL, NULL, 0);
}

static void test_view_left_to_full(void **state)
{
	(void)state;
	/* valid, but not the plain form: the full reader decides */
	expect_view_same(HEAD "\"bottleneck\": \"a \\\"b\\\"\"}]}", NULL, NULL,
			 0);
	expect_view_same(HEAD "\"spread_pct\": 1, \"spread_pct\": 2}]}", NULL,
			 NULL, 0);
	expect_view_same("\xef\xbb\xbf" HEAD "\"spread_pct\": 1}]}", NULL,
			 NULL, 0);
	expect_view_same(HEAD "\"spread_pct\": 01}]}", NULL, NULL, 0);
	expect_view_same(HEAD "\"spread_pct\": 1.}]}", NULL, NULL, 0);
	expect_view_same(HEAD "\"x\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
			 "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]}", NULL,
			 NULL, 0);
	/* refused by both */
	expect_view_same(HEAD "\"metrics\": {\"speed\": 1}}]}", NULL, NULL, 0);
	expect_view_same(HEAD "\"stages\": [{\"grid\": [1, 2]}]}]}", NULL,
			 NULL, 0);
	expect_view_same(HEAD "\"stages\": [{\"name\": \"a\", \"replay\": "
			 "\"x\"}]}]}", NULL, NULL, 0);
	expect_view_same(HEAD "\"device\": {\"sms\": 1}}]}", NULL, NULL, 0);
	expect_view_same(HEAD "\"spread_pct\": 1}, " "{\"trial\": \"decode\", "
			 "\"config\": {\"b\": 32, \"s\": 1, \"t\": 4096}}]}",
			 NULL, NULL, 0);
	expect_view_same(HEAD "\"spread_pct\": 1}]} x", NULL, NULL, 0);
	expect_view_same(HEAD "\"spread_pct\": 1}]", NULL, NULL, 0);
	expect_view_same("", NULL, NULL, 0);
	/* taken: nulls, unknown members, empty arrays, white space */
	expect_view_same(HEAD "\"replay_source\": null, \"x\": {\"y\": [1, "
			 "true, false, null, \"z\"]}, \"stages\": [], "
			 "\"opportunities\": [{\"name\": \"o\", "
			 "\"est_gain_pct\": null}], \"device\": {\"name\": "
			 "\"H200\", \"uuid\": \"GPU-1\", \"sms\": 132}, "
			 "\"replayed\": true}], \"extra\": 1}\n\n", NULL,
			 NULL, 1);
}

/* Both strings NULL, or both the same text. */
static void assert_same_str(const char *a, const char *b)
{
	if (!a || !b)
		assert_true(a == b);
	else
		assert_string_equal(a, b);
}

static void assert_same_num(double a, double b)
{
	if (isnan(a) || isnan(b)) {
		assert_true(isnan(a) && isnan(b));
		assert_int_equal(!!signbit(a), !!signbit(b));
	} else {
		assert_true(a == b);
	}
}

/* Every field of two slim results (what a summary holds, and nothing). */
static void assert_same_slim(const struct kopt_results *a,
			     const struct kopt_results *b)
{
	size_t i;
	int m;

	assert_int_equal(a->schema, b->schema);
	assert_same_str(a->kernel, b->kernel);
	assert_same_str(a->version, b->version);
	assert_same_str(a->parent, b->parent);
	assert_null(a->extra);
	assert_null(b->extra);
	assert_int_equal(a->entries_nr, b->entries_nr);
	for (i = 0; i < a->entries_nr; i++) {
		const struct kopt_results_entry *x = &a->entries[i];
		const struct kopt_results_entry *y = &b->entries[i];
		struct kopt_results_entry rest;
		assert_same_str(x->trial, y->trial);
		assert_int_equal(x->b, y->b);
		assert_int_equal(x->s, y->s);
		assert_int_equal(x->t, y->t);
		assert_int_equal(x->b_requested, y->b_requested);
		assert_int_equal(x->replayed, y->replayed);
		assert_int_equal(x->from_devlog, y->from_devlog);
		assert_same_num(x->spread_pct, y->spread_pct);
		for (m = 0; m < KOPT_METRIC__NR; m++)
			assert_same_num(x->metrics[m], y->metrics[m]);
		assert_same_str(x->device.name, y->device.name);
		assert_same_str(x->device.uuid, y->device.uuid);
		assert_same_str(x->bottleneck, y->bottleneck);
		assert_same_str(x->dtype, y->dtype);
		/* the rest as a fresh entry has it */
		kopt_results_entry_init(&rest);
		assert_null(x->date);
		assert_null(x->tool_version);
		assert_null(x->tree);
		assert_null(x->replay_source);
		assert_null(x->root_cause);
		assert_null(x->device.cc);
		assert_null(x->extra);
		assert_int_equal(x->stages_nr, 0);
		assert_int_equal(x->opportunities_nr, 0);
		assert_int_equal(x->device.sms, rest.device.sms);
		assert_same_num(x->device.sm_clock_mhz,
				rest.device.sm_clock_mhz);
		assert_same_num(x->device.peak_tflops, rest.device.peak_tflops);
		assert_same_num(x->device.measured_gbps,
				rest.device.measured_gbps);
		assert_int_equal(x->device.clocks_locked,
				 rest.device.clocks_locked);
	}
}

/* In place, what the summary reads back as; refused where it would not. */
static void test_slim(void **state)
{
	struct kopt_results r = KOPT_RESULTS_INIT, back = KOPT_RESULTS_INIT;
	struct kopt_buf text = KOPT_BUF_INIT;

	(void)state;
	assert_int_equal(kopt_results_read_file(&r, FIX "v1.json", NULL, NULL),
			 0);
	r.entries[0].replayed = 7;
	r.entries[0].metrics[0] = -NAN;
	kopt_results_summary(&text, &r);
	assert_int_equal(kopt_results_from_summary(&back, text.buf, text.len),
			 0);
	assert_int_equal(kopt_results_slim_ok(&r), 1);
	assert_int_equal(kopt_results_slim(&r), 0);
	assert_same_slim(&r, &back);
	assert_same_slim(&back, &r);

	/* any whole number a file may hold (to 2^53) reads back */
	kopt_results_release(&back);
	r.entries[0].t = 9007199254740992L;
	kopt_buf_reset(&text);
	kopt_results_summary(&text, &r);
	assert_int_equal(kopt_results_from_summary(&back, text.buf, text.len),
			 0);
	assert_int_equal(back.entries[0].t, 9007199254740992L);
	assert_int_equal(kopt_results_slim(&r), 0);
	assert_int_equal(r.entries[0].t, 9007199254740992L);

	/* a number the summary would not read back: left as it was */
	r.entries[0].b = 1L << 60;
	assert_int_equal(kopt_results_slim_ok(&r), 0);
	assert_int_equal(kopt_results_slim(&r), -1);
	assert_int_equal(r.entries[0].b, 1L << 60);

	/* no kernel: no summary, nothing */
	free(r.kernel);
	r.kernel = NULL;
	assert_int_equal(kopt_results_slim_ok(&r), 1);
	assert_int_equal(kopt_results_slim(&r), 0);
	assert_int_equal(r.entries_nr, 0);
	assert_null(r.version);
	kopt_results_release(&r);
	kopt_results_release(&back);
	kopt_buf_release(&text);
}

/* Device names compare without case, punctuation or a leading NVIDIA. */
static void test_same_device(void **state)
{
	char a[200], b[200];
	size_t i;

	(void)state;
	assert_true(kopt_results_same_device("NVIDIA H200", "h200"));
	assert_true(kopt_results_same_device("NVIDIA H200", "nvidia-h200"));
	assert_true(kopt_results_same_device("H100 SXM", "h100-sxm"));
	assert_false(kopt_results_same_device("NVIDIA H200", "H100"));
	assert_false(kopt_results_same_device("H200", "H2000"));
	/* "nvidia" alone is a name, not a prefix */
	assert_true(kopt_results_same_device("NVIDIA", "nvidia"));
	assert_false(kopt_results_same_device("NVIDIA", "NVIDIA A"));
	/* no name: any device */
	assert_true(kopt_results_same_device(NULL, "H200"));
	assert_true(kopt_results_same_device("", "H200"));
	/* names longer than the 64 characters kept on the stack */
	for (i = 0; i < 150; i++)
		a[i] = b[i] = (char)('a' + i % 26);
	a[150] = b[150] = '\0';
	assert_true(kopt_results_same_device(a, b));
	b[149] = 'A' + 1;
	assert_false(kopt_results_same_device(a, b));
	b[149] = (char)(a[149] - 'a' + 'A');
	assert_true(kopt_results_same_device(a, b));
	/* one long, one short */
	assert_false(kopt_results_same_device(a, "H200"));
	memcpy(b, "NVIDIA ", 7);
	memcpy(b + 7, a, 151);
	assert_true(kopt_results_same_device(a, b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_read_full),
		MESSAGES_TEST(test_find),
		MESSAGES_TEST(test_round_trip),
		MESSAGES_TEST(test_unknown_members_kept),
		MESSAGES_TEST(test_stage_without_duration),
		MESSAGES_TEST(test_stage_kernel_replay),
		MESSAGES_TEST(test_put_replaces_same_identity),
		MESSAGES_TEST(test_put_keeps_other_devices),
		MESSAGES_TEST(test_copy),
		MESSAGES_TEST(test_derive),
		MESSAGES_TEST(test_not_json),
		MESSAGES_TEST(test_schema),
		MESSAGES_TEST(test_other_kernel),
		MESSAGES_TEST(test_bad_fields),
		MESSAGES_TEST(test_parse_buffers),
		MESSAGES_TEST(test_view_files),
		MESSAGES_TEST(test_view_written),
		MESSAGES_TEST(test_view_numbers),
		MESSAGES_TEST(test_view_checked_only),
		MESSAGES_TEST(test_view_last_brace),
		MESSAGES_TEST(test_view_left_to_full),
		MESSAGES_TEST(test_slim),
		MESSAGES_TEST(test_same_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
