#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "executor.h"
#include "tuner.h"
#include "messages.h"

static void task(struct kopt_exec_task *t, const char *build, const char *run)
{
	struct kopt_exec_task init = KOPT_EXEC_TASK_INIT;

	*t = init;
	t->build = build ? kopt_strdup(build) : NULL;
	t->run = kopt_strdup(run);
}

static void test_local(void **state)
{
	struct kopt_executor ex = KOPT_EXECUTOR_INIT;
	struct kopt_exec_task t[6];
	char dir[] = "/tmp/kopt-exec-XXXXXX";
	char *top;
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	top = kopt_xstrfmt("%s/", dir);
	ex.top = top;
	ex.timeout_s = 1;
	ex.build_jobs = 3;
	/* three builds of a second each, in parallel: well under 3 s */
	task(&t[0], "sleep 0.5; echo built >a", "cat a; echo 'median 12.5 us'");
	task(&t[1], "sleep 0.5; echo 'k.cu:3: error: no' >&2; exit 4", "true");
	task(&t[2], "sleep 0.5", "echo 'FAILED' ; exit 1");
	task(&t[3], NULL, "kill -SEGV $$");
	task(&t[4], NULL, "sleep 5");
	task(&t[5], NULL, "echo $KOPT_X");
	kopt_strvec_push(&t[5].env, "KOPT_X=42");
	assert_int_equal(kopt_executor_build(&ex, t, 6), 0);
	assert_int_equal(t[1].state, KOPT_TASK_BUILD_FAILED);
	assert_string_equal(t[1].why, "the build failed (exit code 4): "
			    "k.cu:3: error: no");
	assert_int_equal(kopt_executor_run(&ex, t, 6), 0);
	assert_int_equal(t[0].state, KOPT_TASK_OK);
	assert_string_equal(t[0].out.buf, "built\nmedian 12.5 us\n");
	assert_string_equal(t[0].device[0] ? "set" : "", "set");
	assert_int_equal(t[2].state, KOPT_TASK_FAILED);
	assert_int_equal(t[3].state, KOPT_TASK_CRASHED);
	assert_int_equal(t[4].state, KOPT_TASK_HUNG);
	assert_string_equal(t[5].out.buf, "42\n");
	for (i = 0; i < 6; i++)
		kopt_exec_task_release(&t[i]);
	{
		char *a = kopt_xstrfmt("%sa", top);
		unlink(a);
		free(a);
	}
	rmdir(dir);
	free(top);
	kopt_executor_release(&ex);
}

static void test_shared_build(void **state)
{
	struct kopt_executor ex = KOPT_EXECUTOR_INIT;
	struct kopt_exec_task t[3];
	char dir[] = "/tmp/kopt-exec-XXXXXX";
	char *top, *count;
	struct kopt_buf text = KOPT_BUF_INIT;
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	top = kopt_xstrfmt("%s/", dir);
	count = kopt_xstrfmt("%scount", top);
	ex.top = top;
	task(&t[0], "echo once >>count", "true");
	task(&t[1], "echo once >>count", "true");
	task(&t[2], "echo twice >>count; exit 1", "true");
	assert_int_equal(kopt_executor_build(&ex, t, 3), 0);
	assert_int_equal(kopt_buf_read_file(&text, count), 0);
	assert_true(!strcmp(text.buf, "once\ntwice\n") ||
		    !strcmp(text.buf, "twice\nonce\n"));
	assert_int_equal(t[1].state, KOPT_TASK_PENDING);
	assert_int_equal(t[2].state, KOPT_TASK_BUILD_FAILED);
	for (i = 0; i < 3; i++)
		kopt_exec_task_release(&t[i]);
	unlink(count);
	rmdir(dir);
	free(count);
	free(top);
	kopt_buf_release(&text);
}

static void test_parse_time(void **state)
{
	double us = -1;

	(void)state;
	assert_int_equal(kopt_tuner_parse_time(&us, "median {us} us",
		"# warm-up\nmla_decode v8 b=32: median 86.8 us (min 85.7)\n"), 0);
	assert_true(us == 86.8);
	/* the last report wins */
	assert_int_equal(kopt_tuner_parse_time(&us, "median {us} us",
		"median 1 us\nmedian 2.5 us\n"), 0);
	assert_true(us == 2.5);
	/* the text after {us} must follow */
	assert_int_equal(kopt_tuner_parse_time(&us, "median {us} us",
		"median 3 ms\n"), KOPT_ENOTFOUND);
	assert_int_equal(kopt_tuner_parse_time(&us, "{us}",
		"17.25\n"), 0);
	assert_true(us == 17.25);
	assert_int_equal(kopt_tuner_parse_time(&us, "time={us}us",
		"x time=nan us time=-3us\n"), KOPT_ENOTFOUND);
	assert_int_equal(kopt_tuner_parse_time(&us, "median {us} us", ""),
			 KOPT_ENOTFOUND);
}

/* one lock per GPU, for profile, verify and tune alike */
static void test_gpu_lock(void **state)
{
	char dir[] = "/tmp/kopt-lock-XXXXXX";
	char *path, *msg;
	int a = -1, b = -1, other = -1;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = kopt_xstrfmt("%s/kopt-gpu-3.lock", dir);
	setenv("XDG_RUNTIME_DIR", dir, 1);
	assert_int_equal(kopt_executor_gpu_lock(&a, 3, 0, NULL), 0);
	assert_true(a >= 0);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(kopt_executor_gpu_lock(&b, 3, 0, NULL), KOPT_ELOCKED);
	assert_int_equal(b, -1);
	msg = kopt_xstrfmt("error: GPU 3 is busy: another git-kopt holds "
			   "'%s'; wait for it to finish, or let runs wait for "
			   "it (kopt.gpuWait)\n", path);
	assert_string_equal(messages.buf, msg);
	free(msg);
	/* waiting: in vain for a holder that stays ... */
	kopt_buf_reset(&messages);
	assert_int_equal(kopt_executor_gpu_lock(&b, 3, 1, NULL), KOPT_ELOCKED);
	msg = kopt_xstrfmt("error: GPU 3 is busy: another git-kopt held '%s' "
			   "for the 1 s this run may wait (kopt.gpuWait)\n",
			   path);
	assert_string_equal(messages.buf, msg);
	/* ... and with success for one that lets go meanwhile */
	{
		int p[2], st;
		char c;
		pid_t pid;
		kopt_executor_gpu_unlock(&a);
		assert_int_equal(pipe(p), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (!pid) {
			int fd = -1;
			if (kopt_executor_gpu_lock(&fd, 3, 0, NULL) ||
			    write(p[1], "x", 1) != 1)
				_exit(1);
			usleep(300 * 1000);
			_exit(0);
		}
		assert_int_equal(read(p[0], &c, 1), 1);
		kopt_buf_reset(&messages);
		assert_int_equal(kopt_executor_gpu_lock(&b, 3, 10, NULL), 0);
		assert_string_equal(messages.buf, "");
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_int_equal(WEXITSTATUS(st), 0);
		close(p[0]);
		close(p[1]);
		kopt_executor_gpu_unlock(&b);
		assert_int_equal(kopt_executor_gpu_lock(&a, 3, 0, NULL), 0);
	}
	/* another GPU has its own lock */
	assert_int_equal(kopt_executor_gpu_lock(&other, 4, 0, NULL), 0);
	kopt_executor_gpu_unlock(&other);

	kopt_executor_gpu_unlock(&a);
	assert_int_equal(a, -1);
	kopt_executor_gpu_unlock(&a);
	assert_int_equal(kopt_executor_gpu_lock(&b, 3, 0, NULL), 0);
	kopt_executor_gpu_unlock(&b);

	kopt_buf_reset(&messages);
	setenv("XDG_RUNTIME_DIR", "/nonexistent/kopt", 1);
	assert_int_equal(kopt_executor_gpu_lock(&a, 3, 0, NULL), -1);
	assert_string_equal(messages.buf, "error: cannot open the GPU lock "
			    "'/nonexistent/kopt/kopt-gpu-3.lock': No such file "
			    "or directory\n");
	assert_int_equal(a, -1);
	unsetenv("XDG_RUNTIME_DIR");
	unlink(path);
	rmdir(dir);
	free(msg);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_local),
		cmocka_unit_test(test_shared_build),
		cmocka_unit_test(test_parse_time),
		MESSAGES_TEST(test_gpu_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
