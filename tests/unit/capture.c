#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "capture.h"
#include "error.h"
#include "results.h"

#include "messages.h"

#ifndef KOPT_SOURCE_DIR
#define KOPT_SOURCE_DIR "."
#endif
#define FIX KOPT_SOURCE_DIR "/tests/fixtures/gpu/"

#define assert_near(x, y) assert_true(fabs((x) - (y)) < 1e-9)
#define assert_prefix(s, p) assert_true(!strncmp((s), (p), strlen(p)))

/* The head of a capture, for the captures written here. */
#define HEAD "{\"format\":\"kopt-inject\",\"format_version\":1,"

static void test_stages_by_launches(void **state)
{
	struct kopt_results_entry e;
	const struct kopt_results_stage *st;

	(void)state;
	kopt_results_entry_init(&e);
	assert_int_equal(kopt_capture_read_file(&e, FIX "pytorch-matmul-windows"
						".json", NULL), 0);
	assert_string_equal(messages.buf, "");
	/* launched 30 times; not the ones launched once, nor WaitNs */
	assert_int_equal(e.stages_nr, 4);
	st = &e.stages[0];
	assert_string_equal(st->name,
			    "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT");
	assert_int_equal(st->launches, 30);
	assert_int_equal(st->grid[1], 66);
	assert_int_equal(st->block[0], 384);
	/* 25 timed launches after the 5 of warm-up */
	assert_int_equal(st->duration_us.n, 25);
	assert_near(st->duration_us.median, 1438.722);
	assert_near(st->duration_us.min, 1434.529);
	assert_near(st->duration_us.max, 1452.609);
	/* the mean of the samples' 20.281004004670216 and 19.935713001647155 */
	assert_near(st->dram_pct, 20.108358503158684);
	assert_near(st->tc_pct, 96.83669650224343);
	assert_true(st->spill_bytes == 0);
	assert_prefix(e.stages[1].name, "at::native::vectorized_elementwise_"
		      "kernel<8, at::native::Gelu");
	assert_near(e.stages[1].duration_us.median, 87.616);
	assert_near(e.stages[1].dram_pct, 56.6443385251604);
	assert_prefix(e.stages[2].name, "at::native::unrolled_elementwise_"
		      "kernel<");
	assert_near(e.stages[2].duration_us.median, 192.704);
	assert_prefix(e.stages[3].name, "at::native::reduce_kernel<512, 1, "
		      "at::native::ReduceOp<float");
	assert_int_equal(e.stages[3].block[1], 16);
	assert_near(e.stages[3].duration_us.median, 84.576);
	assert_near(e.stages[3].occ_pct, 94.48258709762447);
	/* the entry: the sum of the medians, the dominant stage's figures */
	assert_near(e.metrics[KOPT_METRIC_DURATION_US],
		    1438.722 + 87.616 + 192.704 + 84.576);
	assert_near(e.metrics[KOPT_METRIC_DRAM_PCT], 20.108358503158684);
	kopt_results_entry_release(&e);
}

static void test_two_stages_and_device(void **state)
{
	struct kopt_results_entry e;

	(void)state;
	kopt_results_entry_init(&e);
	assert_int_equal(kopt_capture_read_file(&e, FIX "mla-decode-v8-decode-"
						"windows.json", NULL), 0);
	assert_string_equal(e.device.name, "NVIDIA H200");
	assert_string_equal(e.device.cc, "9.0");
	assert_int_equal(e.device.sms, 132);
	assert_near(e.device.sm_clock_mhz, 1980.0);
	assert_near(e.device.mem_clock_mhz, 3201.0);
	assert_int_equal(e.stages_nr, 2);
	assert_string_equal(e.stages[0].name, "mla_decode_v8_kernel");
	assert_int_equal(e.stages[0].grid[2], 32);
	assert_int_equal(e.stages[0].duration_us.n, 205);
	assert_near(e.stages[0].duration_us.median, 78.656);
	assert_near(e.stages[0].dram_pct, 45.15987439742436);
	assert_near(e.stages[0].l2_hit_pct, 29.96079630985707);
	assert_string_equal(e.stages[1].name, "mla_decode_v8_combine");
	assert_int_equal(e.stages[1].duration_us.n, 205);
	assert_near(e.stages[1].duration_us.median, 5.184);
	assert_near(e.stages[1].dram_pct, 0.01770744439522056);
	assert_near(e.metrics[KOPT_METRIC_DURATION_US], 78.656 + 5.184);
	assert_string_equal(messages.buf, "");
	kopt_results_entry_release(&e);
}

static void test_stages_glob(void **state)
{
	struct kopt_results_entry e;

	(void)state;
	kopt_results_entry_init(&e);
	assert_int_equal(kopt_capture_read_file(&e, FIX "mla-decode-v8-decode-"
						"windows.json", "*_combine"),
			 0);
	assert_int_equal(e.stages_nr, 1);
	assert_string_equal(e.stages[0].name, "mla_decode_v8_combine");
	assert_near(e.metrics[KOPT_METRIC_DURATION_US], 5.184);
	kopt_results_entry_release(&e);

	kopt_results_entry_init(&e);
	assert_int_equal(kopt_capture_read_file(&e, FIX "pytorch-matmul-windows"
						".json", "nvjet_*"), 0);
	assert_int_equal(e.stages_nr, 1);
	assert_int_equal(e.stages[0].launches, 30);
	kopt_results_entry_release(&e);
	assert_string_equal(messages.buf, "");

	kopt_results_entry_init(&e);
	assert_int_equal(kopt_capture_read_file(&e, FIX "mla-decode-v8-decode-"
						"windows.json", "gemm_*"), -1);
	assert_string_equal(messages.buf, "error: " FIX "mla-decode-v8-decode-"
			    "windows.json: no kernel matches the stages "
			    "pattern 'gemm_*' (kernel.<name>.stages)\n");
	assert_int_equal(e.stages_nr, 0);
	kopt_results_entry_release(&e);
}

static void test_rejected_metric(void **state)
{
	struct kopt_results_entry e;

	(void)state;
	kopt_results_entry_init(&e);
	assert_int_equal(kopt_capture_read_file(&e, FIX "cuda-known-kernels"
						".json", NULL), 0);
	assert_int_equal(e.stages_nr, 3);
	assert_string_equal(e.stages[0].name, "copy");
	assert_near(e.stages[0].l2_hit_pct, 50.938488839761575);
	/* 384 B of local memory per thread: loads plus stores */
	assert_string_equal(e.stages[1].name, "spill");
	assert_true(e.stages[1].spill_bytes == 17305829376.0 + 8702656512.0);
	/* both samples read over 100%: rejected, never measured */
	assert_string_equal(e.stages[2].name, "mma");
	assert_true(isnan(e.stages[2].l2_hit_pct));
	assert_near(e.stages[2].dram_pct, 0.033125249315549644);
	assert_near(e.stages[2].duration_us.median, 274.045);
	assert_int_equal(e.stages[2].duration_us.n, 15);
	kopt_results_entry_release(&e);
}

/* A kernel launched 7 times, 5 of them warm-up. */
#define SHORT(name) "{\"name\":\"" name "\",\"launches\":7," \
	"\"launch_calls\":7,\"durations_ns\":[9,9,9,9,9,4000,6000]}"

static void test_profiler_kernel_not_counted(void **state)
{
	struct kopt_results_entry e;
	/* CUPTI's WaitNs, 4 kernels x 2 samples x 2 passes, outnumbers them */
	static const char text[] = HEAD "\"config\":{\"warmup\":5},"
		"\"kernels\":[" SHORT("a") "," SHORT("b") "," SHORT("c") ","
		SHORT("d") ",{\"name\":\"WaitNs\",\"launches\":16,"
		"\"launch_calls\":0,\"durations_ns\":[40000]}]}";

	(void)state;
	kopt_results_entry_init(&e);
	assert_int_equal(kopt_capture_parse(&e, text, strlen(text), "blob",
					    NULL), 0);
	assert_string_equal(messages.buf, "");
	assert_int_equal(e.stages_nr, 4);
	assert_string_equal(e.stages[3].name, "d");
	assert_true(e.stages[3].duration_us.median == 5.0);
	kopt_results_entry_release(&e);
}

static void parse_ok(struct kopt_results_entry *e, const char *text)
{
	kopt_results_entry_init(e);
	assert_int_equal(kopt_capture_parse(e, text, strlen(text), "blob",
					    NULL), 0);
	assert_string_equal(messages.buf, "");
	assert_int_equal(e->stages_nr, 1);
}

static void test_durations(void **state)
{
	struct kopt_results_entry e;
	static const char nulls[] = HEAD "\"config\":{\"warmup\":2},"
		"\"kernels\":[{\"name\":\"k\",\"launches\":7,"
		"\"launch_calls\":7,"
		"\"durations_ns\":[9000,9000,null,1000,null,3000,2000]}]}";
	static const char sampled[] = HEAD "\"config\":{\"warmup\":2},"
		"\"kernels\":[{\"name\":\"k\",\"launches\":4,"
		"\"launch_calls\":4,\"durations_ns\":[9000,9000,null,null],"
		"\"profiled\":[{\"metrics\":{\"gpu__time_duration.sum\":4000}},"
		"{\"metrics\":{\"gpu__time_duration.sum\":7000}}]}]}";

	(void)state;
	/* after the warm-up, without the profiled launches */
	parse_ok(&e, nulls);
	assert_int_equal(e.stages[0].duration_us.n, 3);
	assert_true(e.stages[0].duration_us.median == 2.0);
	assert_true(e.stages[0].duration_us.min == 1.0);
	assert_true(e.stages[0].duration_us.max == 3.0);
	assert_true(isnan(e.stages[0].dram_pct));
	kopt_results_entry_release(&e);
	/* no timed launch left: the samples' durations stand in */
	parse_ok(&e, sampled);
	assert_int_equal(e.stages[0].duration_us.n, 2);
	assert_true(e.stages[0].duration_us.median == 5.5);
	assert_int_equal(e.stages[0].kernel_replay, 0);
	kopt_results_entry_release(&e);
}

/* a stage every sample of which was taken in kernel replay says so */
static void test_kernel_replay(void **state)
{
	struct kopt_results_entry e;
	static const char kernel[] = HEAD "\"config\":{\"warmup\":5},"
		"\"kernels\":[{\"name\":\"k\",\"launches\":1,"
		"\"launch_calls\":1,\"durations_ns\":[null],"
		"\"profiled\":[{\"replay\":\"kernel\",\"run\":2,"
		"\"metrics\":{\"gpu__time_duration.sum\":4000,"
		"\"lts__t_sector_hit_rate.pct\":20.5}}]}]}";
	static const char mixed[] = HEAD "\"config\":{\"warmup\":5},"
		"\"kernels\":[{\"name\":\"m\",\"launches\":4,"
		"\"launch_calls\":4,\"durations_ns\":[null,null,3000,3000],"
		"\"profiled\":[{\"replay\":\"kernel\",\"metrics\":{}},"
		"{\"replay\":\"launch\",\"metrics\":{}}]}]}";

	(void)state;
	parse_ok(&e, kernel);
	assert_int_equal(e.stages[0].kernel_replay, 1);
	assert_true(e.stages[0].l2_hit_pct == 20.5);
	kopt_results_entry_release(&e);
	/* one sample in launch replay: the program's cache state is there */
	parse_ok(&e, mixed);
	assert_int_equal(e.stages[0].kernel_replay, 0);
	kopt_results_entry_release(&e);
}

static void expect_failure(const char *path, const char *text,
			   const char *expected)
{
	struct kopt_results_entry e;

	kopt_buf_reset(&messages);
	kopt_results_entry_init(&e);
	if (path)
		assert_int_equal(kopt_capture_read_file(&e, path, NULL), -1);
	else
		assert_int_equal(kopt_capture_parse(&e, text, strlen(text),
						    "blob", NULL), -1);
	assert_string_equal(messages.buf, expected);
	assert_int_equal(e.stages_nr, 0);
	kopt_results_entry_release(&e);
}

static void test_profiler_errors(void **state)
{
	(void)state;
	expect_failure(FIX "error-cupti-missing.json", NULL,
		       "error: " FIX "error-cupti-missing.json: the profiler "
		       "failed: cannot load CUPTI: /nonexistent/libcupti.so: "
		       "cannot open shared object file: No such file or "
		       "directory (install the CUDA toolkit's CUPTI or set "
		       "KOPT_INJECT_CUPTI to libcupti.so)\n");
	expect_failure(FIX "error-subscriber-exists.json", NULL,
		       "error: " FIX "error-subscriber-exists.json: the "
		       "profiler failed: another profiler (Nsight, a "
		       "framework's profiler) is already subscribed to CUPTI "
		       "in this process: cuptiSubscribe returned 39 "
		       "(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)\n");
}

static void test_bad_captures(void **state)
{
	(void)state;
	expect_failure(NULL, "{\"format\":", "error: blob: not a capture: "
		       "the file is not JSON\n");
	expect_failure(NULL, "{\"format\":\"nsys\",\"format_version\":1}",
		       "error: blob: not a capture of libkopt-inject.so (no "
		       "\"format\": \"kopt-inject\")\n");
	expect_failure(NULL, "{\"format\":\"kopt-inject\","
		       "\"format_version\":2}", "error: blob: capture format "
		       "version 2 is not supported (this git-kopt reads 1)\n");
	expect_failure(NULL, HEAD "\"kernels\":[]}",
		       "error: blob: the benchmark launched no kernel\n");
	expect_failure(NULL, HEAD "\"kernels\":[{\"name\":\"WaitNs\","
		       "\"launches\":4,\"launch_calls\":0}]}",
		       "error: blob: the benchmark launched no kernel itself "
		       "(only from CUDA graphs?): name its stages with "
		       "kernel.<name>.stages\n");
	expect_failure(NULL, HEAD "\"kernels\":[{\"launches\":3,"
		       "\"launch_calls\":3,\"durations_ns\":[1000,1000,1000]"
		       "}]}",
		       "error: blob: a kernel has no name\n");
	expect_failure(NULL, HEAD "\"kernels\":[{\"name\":\"mla\\nkernel\","
		       "\"launches\":3,\"launch_calls\":3,"
		       "\"durations_ns\":[1000,1000,1000]}]}",
		       "error: blob: kernel name 'mla\\x0akernel' is not a C "
		       "identifier after demangling: the capture is damaged "
		       "(profile again), or leave the kernel out with "
		       "kernel.<name>.stages\n");
	expect_failure(FIX "no-such-capture.json", NULL,
		       "error: cannot read capture '" FIX "no-such-capture"
		       ".json': No such file or directory\n");
}


static void test_not_measured(void **state)
{
	struct kopt_results_entry e;
	/* a graph's kernel, one launched too few times, counters refused */
	static const char graph[] = HEAD "\"config\":{\"warmup\":5},"
		"\"kernels\":[{\"name\":\"g\",\"launches\":20,"
		"\"launch_calls\":1,\"durations_ns\":[1000],"
		"\"profiled\":[],\"not_profiled\":\"graph\"}]}";
	static const char few[] = HEAD "\"config\":{\"warmup\":5},"
		"\"kernels\":[{\"name\":\"f\",\"launches\":3,"
		"\"launch_calls\":3,\"durations_ns\":[3000,1000,2000],"
		"\"profiled\":[],\"not_profiled\":\"too-few-launches\"}],"
		"\"second_run\":{\"planned\":1,\"sampled\":0}}";
	static const char refused[] = HEAD "\"config\":{\"warmup\":5},"
		"\"kernels\":[{\"name\":\"c\",\"launches\":9,"
		"\"launch_calls\":9,\"durations_ns\":[1000],"
		"\"profiled\":[],\"not_profiled\":\"profiler-failed\"}],"
		"\"errors\":[{\"code\":\"counters-not-permitted\","
		"\"message\":\"the driver restricts GPU counters\"}]}";

	(void)state;
	expect_failure(NULL, graph, "error: blob: 'g' runs only from a CUDA "
		       "graph, and no second run launched the graph node by "
		       "node: profile it again (not from this capture), "
		       "launch it plainly, or leave it out with "
		       "kernel.<name>.stages\n");
	kopt_buf_reset(&messages);
	parse_ok(&e, few);
	assert_string_equal(e.stages[0].not_measured, "too few launches (3): "
			    "the second run could not sample it either");
	/* no launch after the warm-up: all of them */
	assert_true(e.stages[0].duration_us.median == 2.0);
	kopt_results_entry_release(&e);
	/* counters refused leave the durations: timed, said not measured */
	parse_ok(&e, refused);
	assert_string_equal(e.stages[0].not_measured,
			    "the driver restricts GPU counters");
	kopt_results_entry_release(&e);
	/* a measured one has no reason */
	kopt_results_entry_init(&e);
	assert_int_equal(kopt_capture_read_file(&e, FIX "five-kernels.json",
						"*"), 0);
	assert_int_equal(e.stages_nr, 5);
	for (size_t i = 0; i < e.stages_nr; i++)
		assert_null(e.stages[i].not_measured);
	assert_string_equal(e.device.uuid,
			    "GPU-b0f49ed7-02c3-2281-a53a-518bb49efb38");
	/* fill, launched once: its one launch's duration, not the sample's */
	assert_near(e.stages[0].duration_us.median, 70.336);
	assert_near(e.stages[0].dram_pct, 77.87767105854965);
	kopt_results_entry_release(&e);
	/*
	 * a PyTorch forward pass whose second run sampled every kernel
	 * launched too few times (kernel replay beside launch replay)
	 */
	kopt_results_entry_init(&e);
	assert_int_equal(kopt_capture_read_file(&e, FIX "torch-forward.json",
						"*"), 0);
	assert_int_equal(e.stages_nr, 12);
	{
		size_t kr = 0;
		for (size_t i = 0; i < e.stages_nr; i++) {
			assert_null(e.stages[i].not_measured);
			assert_false(isnan(e.stages[i].dram_pct));
			kr += e.stages[i].kernel_replay;
		}
		/* seven of the ten second-run samples: kernel replay */
		assert_int_equal(kr, 7);
	}
	kopt_results_entry_release(&e);
	assert_int_equal(kopt_capture_needs_second_run(FIX "torch-forward.json",
						       "*"), 0);
	/*
	 * kernels on two contexts: the profiler moved to the second one
	 * (scale3 in the first run, fill in the second); CUPTI's WaitNs is
	 * no stage
	 */
	kopt_results_entry_init(&e);
	assert_int_equal(kopt_capture_read_file(&e, FIX "two-contexts.json",
						"*"), 0);
	assert_int_equal(e.stages_nr, 4);
	for (size_t i = 0; i < e.stages_nr; i++) {
		assert_null(e.stages[i].not_measured);
		assert_false(isnan(e.stages[i].dram_pct));
		assert_false(isnan(e.stages[i].l2_hit_pct));
	}
	assert_string_equal(e.stages[3].name, "scale3");
	assert_true(fabs(e.stages[3].dram_pct - 61.07) < 0.01);
	kopt_results_entry_release(&e);
	assert_int_equal(kopt_capture_needs_second_run(FIX "two-contexts.json",
						       "*"), 0);
	/* its first run: the kernels launched once or thrice wait for it */
	kopt_results_entry_init(&e);
	assert_int_equal(kopt_capture_read_file(&e, FIX "two-contexts-first-"
						"run.json", "*"), 0);
	assert_int_equal(e.stages_nr, 4);
	assert_null(e.stages[0].not_measured);
	assert_non_null(e.stages[2].not_measured);
	assert_string_equal(e.stages[2].name, "fill");
	kopt_results_entry_release(&e);
	assert_int_equal(kopt_capture_needs_second_run(FIX "two-contexts-"
						       "first-run.json", "*"),
			 1);
}

static void test_second_run_needed(void **state)
{
	(void)state;
	/* a stage launched too few times; then one that is no stage */
	assert_int_equal(kopt_capture_needs_second_run(FIX "torch-forward-"
						       "second-run-failed.json",
						       NULL), 1);
	assert_int_equal(kopt_capture_needs_second_run(FIX "mla-decode-v8-"
						       "decode-program.json",
						       NULL), 0);
	/* graphs: a second run launches them node by node */
	assert_int_equal(kopt_capture_needs_second_run(FIX "graph-kernels."
						       "json", "*"), 1);
	assert_int_equal(kopt_capture_needs_second_run(FIX "graph-kernels."
						       "json", NULL), 1);
	assert_int_equal(kopt_capture_needs_second_run(FIX "torch-graph-"
						       "first-run.json", NULL),
			 1);
	assert_int_equal(kopt_capture_needs_second_run(FIX "torch-graph-"
						       "node-by-node.json",
						       NULL), 0);
	assert_int_equal(kopt_capture_needs_second_run(FIX "graph-kernels-"
						       "node-by-node.json",
						       NULL), 0);
	assert_string_equal(messages.buf, "");
	assert_int_equal(kopt_capture_needs_second_run(FIX "nothing.json",
						       NULL), -1);
	assert_string_equal(messages.buf, "");
}

static void test_program(void **state)
{
	struct kopt_capture_program want = { "five", "v0",
		"five/v0/five_kernels",
		"73b9a3229c7f12f008a3f618dff70aa63fa8cf66" };
	const char *path = FIX "five-kernels.json";
	char *tree = NULL;

	(void)state;
	assert_int_equal(kopt_capture_check_program(path, &want,
		"GPU-b0f49ed7-02c3-2281-a53a-518bb49efb38", 0, &tree), 0);
	assert_string_equal(tree, want.tree);
	free(tree);
	assert_string_equal(messages.buf, "");
	want.version = "v1";
	assert_int_equal(kopt_capture_check_program(path, &want, NULL, 0,
						    &tree), -1);
	assert_string_equal(messages.buf, "error: " FIX "five-kernels.json: "
			    "recorded from version 'v0', not 'v1': profile "
			    "again, or replay it anyway with --force\n");
	free(tree);
	kopt_buf_reset(&messages);
	want.version = "v0";
	assert_int_equal(kopt_capture_check_program(path, &want,
		"GPU-00000000-0000-0000-0000-000000000000", 0, &tree), -1);
	assert_string_equal(messages.buf, "error: " FIX "five-kernels.json: "
			    "recorded from the device 'GPU-b0f49ed7-02c3-2281-"
			    "a53a-518bb49efb38', not 'GPU-00000000-0000-0000-"
			    "0000-000000000000': profile again, or replay it "
			    "anyway with --force\n");
	free(tree);
	kopt_buf_reset(&messages);
	/* --force: a warning */
	assert_int_equal(kopt_capture_check_program(path, &want,
		"GPU-00000000-0000-0000-0000-000000000000", 1, &tree), 0);
	assert_prefix(messages.buf, "warning: ");
	free(tree);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_stages_by_launches),
		MESSAGES_TEST(test_two_stages_and_device),
		MESSAGES_TEST(test_stages_glob),
		MESSAGES_TEST(test_rejected_metric),
		MESSAGES_TEST(test_profiler_kernel_not_counted),
		MESSAGES_TEST(test_durations),
		MESSAGES_TEST(test_kernel_replay),
		MESSAGES_TEST(test_profiler_errors),
		MESSAGES_TEST(test_bad_captures),
		MESSAGES_TEST(test_not_measured),
		MESSAGES_TEST(test_second_run_needed),
		MESSAGES_TEST(test_program),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
