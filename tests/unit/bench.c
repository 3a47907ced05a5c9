#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "buf.h"
#include "config.h"
#include "error.h"

#include "messages.h"

/*
 * The benchmark is a stand-in script that writes a capture where the
 * injection library would (KOPT_INJECT_OUT), as tests/cli/profile-faults
 * does; out of memory, it logs the capture path of every run.
 */
static const char bench_sh[] =
	"#!/bin/sh\n"
	"mode=$1 b=$2\n"
	"case $mode in\n"
	"build) echo compiling; echo \"$2.cu:12: error: expected ;\" >&2; "
	"exit 2 ;;\n"
	"ok) echo '{\"kernels\":[]}' >\"$KOPT_INJECT_OUT\"\n"
	"    echo \"bench ok b=$2 s=$3 t=$4 $CUDA_INJECTION64_PATH "
	"$CUDA_VISIBLE_DEVICES\" ;;\n"
	"check) echo 'check FAILED: rel_err 0.5'; exit 1 ;;\n"
	"crash) echo 'out of memory'; kill -SEGV $$ ;;\n"
	"hang) sleep 30 ;;\n"
	"silent) exit 0 ;;\n"
	"oom*)\n"
	"    echo \"$KOPT_INJECT_OUT\" >>runs.log\n"
	"    # the injection writes its capture at exit, whatever the status\n"
	"    echo partial >\"$KOPT_INJECT_OUT\"\n"
	"    if [ $mode = oomall ] || [ \"$b\" -gt 8 ]; then\n"
	"        echo \"CUDA error: Out Of Memory (b=$b)\" >&2; exit 2\n"
	"    fi\n"
	"    echo whole >\"$KOPT_INJECT_OUT\" ;;\n"
	"esac\n";

static struct kopt_buf errout = KOPT_BUF_INIT;
static char dir[] = "/tmp/kopt-bench-XXXXXX";
static char *top, *errfile;
static int saved_stderr = -1;
static struct kopt_kernel kernel;
static struct kopt_bench m = KOPT_BENCH_INIT;

/* What the code prints itself (progress, the child's tail) to stderr. */
static void stderr_begin(void)
{
	int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

static void stderr_end(void)
{
	if (saved_stderr < 0)
		return;
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	saved_stderr = -1;
	kopt_buf_reset(&errout);
	assert_int_equal(kopt_buf_read_file(&errout, errfile), 0);
}

static int run(const char *mode, long b, struct kopt_bench_run *r)
{
	char *cmd = kopt_xstrfmt("./bench %s {b} {s} {t}", mode);
	int ret;

	kernel.run = cmd;
	stderr_begin();
	ret = kopt_bench_run(&m, b, 1, 4096, r);
	stderr_end();
	kernel.run = NULL;
	free(cmd);
	return ret;
}

static int build(const char *cmdline)
{
	int ret;

	kernel.build = (char *)cmdline;
	stderr_begin();
	ret = kopt_bench_build(&m);
	stderr_end();
	kernel.build = NULL;
	return ret;
}

/* The capture paths the benchmark was given since the last call. */
static size_t runs(struct kopt_buf *log, char **paths, size_t max)
{
	char *path = kopt_xstrfmt("%s/runs.log", dir), *p, *nl;
	size_t n = 0;

	kopt_buf_reset(log);
	assert_int_equal(kopt_buf_read_file(log, path), 0);
	unlink(path);
	for (p = log->buf; (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		if (n < max)
			paths[n] = p;
		n++;
	}
	free(path);
	return n;
}

static void test_build(void **state)
{
	char *log = kopt_xstrfmt("%s/build.log", dir);
	struct kopt_buf sb = KOPT_BUF_INIT;

	(void)state;
	assert_int_equal(build(NULL), 0);
	assert_string_equal(errout.buf, "");

	/* what runs is progress (lib/progress), not printed by lib */
	assert_int_equal(build("echo built {version} >>build.log"), 0);
	assert_string_equal(errout.buf, "");
	assert_int_equal(kopt_buf_read_file(&sb, log), 0);
	assert_string_equal(sb.buf, "built v0\n");
	assert_string_equal(messages.buf, "");

	assert_int_equal(build("make {nope}"), KOPT_EINVALID);
	assert_string_equal(messages.buf, "error: .kopt: kernel 'k': build: "
			    "unknown placeholder '{nope}' in 'make {nope}'\n");
	assert_string_equal(errout.buf, "");
	kopt_buf_release(&sb);
	free(log);
}

static void test_build_fails(void **state)
{
	(void)state;
	assert_int_equal(build("./bench build {version}"), -1);
	assert_string_equal(messages.buf, "error: building k v0 failed (exit "
			    "code 2): ./bench build v0\n");
	/* the output, both streams, before the error */
	assert_string_equal(errout.buf, "--- last lines of the build ---\n"
			    "compiling\nv0.cu:12: error: expected ;\n");
}

static void test_run_ok(void **state)
{
	struct kopt_bench_run r = KOPT_BENCH_RUN_INIT;
	struct kopt_buf sb = KOPT_BUF_INIT;
	char *path;

	(void)state;
	m.gpu = 2;
	assert_int_equal(run("ok", 32, &r), 0);
	m.gpu = 0;
	assert_string_equal(messages.buf, "");
	assert_int_equal(r.b, 32);
	assert_int_equal(r.b_requested, 32);
	assert_int_equal(r.s, 1);
	assert_int_equal(r.t, 4096);
	assert_true(r.wall_s > 0);
	assert_string_equal(r.out.buf,
			    "bench ok b=32 s=1 t=4096 /dev/null 2\n");
	assert_non_null(r.capture);
	assert_int_equal(kopt_buf_read_file(&sb, r.capture), 0);
	assert_string_equal(sb.buf, "{\"kernels\":[]}\n");
	/* the capture is released with the run */
	path = kopt_strdup(r.capture);
	kopt_bench_run_release(&r);
	assert_null(r.capture);
	assert_int_not_equal(access(path, F_OK), 0);
	kopt_buf_release(&sb);
	free(path);
}

static void test_run_failures(void **state)
{
	struct kopt_bench_run r = KOPT_BENCH_RUN_INIT;

	(void)state;
	assert_int_equal(run("check", 32, &r), -1);
	assert_string_equal(messages.buf, "error: the benchmark of k v0 failed "
			    "(exit code 1): its own check failed or it could "
			    "not run; command: ./bench check 32 1 4096\n");
	assert_non_null(strstr(errout.buf, "--- last lines of the benchmark "
			       "---\ncheck FAILED: rel_err 0.5\n"));

	/* what a crashed benchmark printed is no reason to retry */
	kopt_buf_reset(&messages);
	assert_int_equal(run("crash", 32, &r), -1);
	assert_string_equal(messages.buf, "error: the benchmark of k v0 "
			    "crashed: killed by signal 11 (Segmentation "
			    "fault); command: ./bench crash 32 1 4096\n");

	kopt_buf_reset(&messages);
	m.timeout_s = 1;
	assert_int_equal(run("hang", 32, &r), -1);
	m.timeout_s = 600;
	assert_string_equal(messages.buf, "error: the benchmark of k v0 hung: "
			    "timed out after 1 s (kopt.timeout); command: "
			    "./bench hang 32 1 4096\n");
	assert_true(r.wall_s < 10);

	kopt_buf_reset(&messages);
	assert_int_equal(run("silent", 32, &r), -1);
	assert_string_equal(messages.buf, "error: the benchmark of k v0 ran, "
			    "but the injection wrote no capture: is the "
			    "benchmark a CUDA program, and is '/dev/null' "
			    "loadable?\n");
	kopt_bench_run_release(&r);
}

static void test_out_of_memory_halves_b(void **state)
{
	struct kopt_bench_run r = KOPT_BENCH_RUN_INIT;
	struct kopt_buf log = KOPT_BUF_INIT, sb = KOPT_BUF_INIT;
	char *paths[3];

	(void)state;
	assert_int_equal(run("oom", 32, &r), 0);
	assert_string_equal(messages.buf, "warning: out of memory at b=32: "
			    "halving b to 16\nwarning: out of memory at "
			    "b=16: halving b to 8\n");
	assert_int_equal(r.b, 8);
	assert_int_equal(r.b_requested, 32);
	assert_int_equal(kopt_buf_read_file(&sb, r.capture), 0);
	assert_string_equal(sb.buf, "whole\n");

	/* the captures of the runs that ran out of memory are gone */
	assert_int_equal(runs(&log, paths, 3), 3);
	assert_string_equal(paths[2], r.capture);
	assert_int_not_equal(access(paths[0], F_OK), 0);
	assert_int_not_equal(access(paths[1], F_OK), 0);
	kopt_bench_run_release(&r);
	assert_int_not_equal(access(paths[2], F_OK), 0);

	kopt_buf_reset(&messages);
	assert_int_equal(run("oomall", 4, &r), -1);
	assert_string_equal(messages.buf, "warning: out of memory at b=4: "
			    "halving b to 2\nwarning: out of memory at b=2: "
			    "halving b to 1\nerror: the benchmark of k v0 "
			    "runs out of GPU memory even at b=1 (s=1, "
			    "t=4096)\n");
	assert_int_equal(runs(&log, paths, 3), 3);
	kopt_bench_run_release(&r);
	assert_int_not_equal(access(paths[0], F_OK), 0);
	assert_int_not_equal(access(paths[1], F_OK), 0);
	assert_int_not_equal(access(paths[2], F_OK), 0);
	kopt_buf_release(&log);
	kopt_buf_release(&sb);
}

static int setup(void **state)
{
	(void)state;
	kernel.name = "k";
	m.kernel = &kernel;
	m.version = "v0";
	m.top = top;
	m.inject_lib = "/dev/null";
	catch_messages(state);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	stderr_end();
	release_messages(state);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_build, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_build_fails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_run_ok, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_run_failures, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_out_of_memory_halves_b,
						setup, teardown),
	};
	struct kopt_buf cmd = KOPT_BUF_INIT;
	char *script;
	FILE *f;
	int ret;

	if (!mkdtemp(dir))
		return 1;
	top = kopt_xstrfmt("%s/", dir);
	errfile = kopt_xstrfmt("%s/stderr", dir);
	script = kopt_xstrfmt("%s/bench", dir);
	f = fopen(script, "w");
	if (!f || fputs(bench_sh, f) < 0 || fclose(f) || chmod(script, 0755))
		return 1;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	kopt_buf_addf(&cmd, "rm -rf '%s'", dir);
	if (system(cmd.buf))
		ret = 1;
	kopt_buf_release(&cmd);
	kopt_buf_release(&errout);
	free(script);
	free(errfile);
	free(top);
	return ret;
}
