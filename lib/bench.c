#include "bench.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "error.h"
#include "executor.h"
#include "lockfile.h"
#include "progress.h"
#include "runner.h"
#include "banned.h"

static char *exe_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	return kopt_strdup(buf);
}

char *kopt_bench_find_inject(void)
{
	const char *env = getenv("KOPT_INJECT_LIB");
	char *dir, *p;

	if (env && *env)
		return kopt_strdup(env);
	dir = exe_dir();
	if (dir) {
		p = kopt_xstrfmt("%s/../lib/git-kopt/libkopt-inject.so", dir);
		free(dir);
		if (!access(p, R_OK))
			return p;
		free(p);
	}
#ifdef KOPT_SOURCE_DIR
	p = kopt_xstrfmt("%s/lib/inject/libkopt-inject.so", KOPT_SOURCE_DIR);
	if (!access(p, R_OK))
		return p;
	free(p);
#endif
	return NULL;
}

/* Print the last lines of a child's output, so a failure can be read. */
static void show_tail(const char *what, const struct kopt_buf *b)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	const char *p = b->buf + b->len;
	int lines = 0;

	if (!b->len)
		return;
	while (p > b->buf && lines <= 12) {
		p--;
		if (*p == '\n' && p != b->buf + b->len - 1)
			lines++;
	}
	if (*p == '\n')
		p++;
	kopt_buf_addf(&text, "--- last lines of %s ---\n%s%s", what, p,
		      b->len && b->buf[b->len - 1] != '\n' ? "\n" : "");
	kopt_error_output(text.buf);
	kopt_buf_release(&text);
}

static int contains_ci(const struct kopt_buf *b, const char *needle)
{
	size_t n = strlen(needle), i, j;

	for (i = 0; i + n <= b->len; i++) {
		for (j = 0; j < n; j++)
			if (tolower((unsigned char)b->buf[i + j]) != needle[j])
				break;
		if (j == n)
			return 1;
	}
	return 0;
}

int kopt_bench_build(struct kopt_bench *m)
{
	const struct kopt_kernel *k = m->kernel;
	struct kopt_vars vars = { k, m->version, NULL, 0, 0, 0, 0 };
	struct kopt_buf cmd = KOPT_BUF_INIT;
	struct kopt_child c = KOPT_CHILD_INIT;
	struct kopt_progress *progress;
	char *what;
	int ret = 0;

	if (!k->build)
		return 0;
	what = kopt_xstrfmt(".kopt: kernel '%s': build", k->name);
	ret = kopt_config_expand(&cmd, k->build, &vars, what);
	free(what);
	if (ret)
		goto done;
	progress = kopt_progress_start("building", 0);
	kopt_progress_what(progress, "%s %s: %s", k->name, m->version,
			   cmd.buf);
	/* a build needs no GPU of its own */
	kopt_executor_child(&c, cmd.buf, m->top, m->timeout_s, 0);
	ret = kopt_child_run(&c);
	kopt_progress_stop(&progress);
	if (ret) {
		ret = -1;
		goto done;
	}
	if (c.exit_code != 0) {
		struct kopt_buf how = KOPT_BUF_INIT;
		kopt_buf_addbuf(&c.out, &c.err);
		show_tail("the build", &c.out);
		kopt_child_describe(&c, &how);
		ret = kopt_error("building %s %s failed (%s): %s", k->name,
				 m->version, how.buf, cmd.buf);
		kopt_buf_release(&how);
	}
done:
	kopt_child_release(&c);
	kopt_buf_release(&cmd);
	return ret;
}

void kopt_bench_run_release(struct kopt_bench_run *r)
{
	if (r->capture)
		unlink(r->capture);
	free(r->capture);
	r->capture = NULL;
	free(r->command);
	r->command = NULL;
	free(r->second_failed);
	r->second_failed = NULL;
	kopt_buf_release(&r->out);
}

/* How one run of the benchmark ended, wherever it ran. */
struct run_end {
	enum kopt_task_state state;
	struct kopt_buf how;    /* in kopt_child_describe()'s words */
	struct kopt_buf out, err;
	double wall_s;
};

#define RUN_END_INIT { KOPT_TASK_PENDING, KOPT_BUF_INIT, KOPT_BUF_INIT, \
	KOPT_BUF_INIT, 0 }

static void run_end_release(struct run_end *e)
{
	kopt_buf_release(&e->how);
	kopt_buf_release(&e->out);
	kopt_buf_release(&e->err);
}

static int on_cluster(const struct kopt_bench *m)
{
	return m->ex && m->ex->kind == KOPT_EXEC_SLURM;
}

/* Run `cmd` with `env` on this machine, as every local run is. */
static int run_here(struct kopt_bench *m, const char *cmd,
		    const struct kopt_strvec *env, struct run_end *end)
{
	struct kopt_child c = KOPT_CHILD_INIT;
	size_t i;

	kopt_executor_child(&c, cmd, m->top, m->timeout_s, m->gpu);
	for (i = 0; i < env->nr; i++)
		kopt_strvec_push(&c.env, env->v[i]);
	if (kopt_child_run(&c)) {
		kopt_child_release(&c);
		return -1;
	}
	end->wall_s = c.wall_s;
	if (c.timed_out)
		end->state = KOPT_TASK_HUNG;
	else if (c.signal)
		end->state = KOPT_TASK_CRASHED;
	else if (c.exit_code)
		end->state = KOPT_TASK_FAILED;
	else
		end->state = KOPT_TASK_OK;
	kopt_child_describe(&c, &end->how);
	kopt_buf_addbuf(&end->out, &c.out);
	kopt_buf_addbuf(&end->err, &c.err);
	kopt_child_release(&c);
	return 0;
}

/*
 * Run `cmd` with `env` as one task of the cluster's executor; the build
 * stays here.  An interrupt has cancelled the job: KOPT_EINTR.
 */
static int run_cluster(struct kopt_bench *m, const char *cmd,
		       const struct kopt_strvec *env, struct run_end *end)
{
	struct kopt_exec_task t = KOPT_EXEC_TASK_INIT;
	struct timespec t0, t1;
	size_t i;
	int ret;

	t.run = kopt_strdup(cmd);
	for (i = 0; i < env->nr; i++)
		kopt_strvec_push(&t.env, env->v[i]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = kopt_executor_run(m->ex, &t, 1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ret == KOPT_EINTR) {
		kopt_error("interrupted: the cluster's job for %s %s was "
			   "cancelled", m->kernel->name, m->version);
	} else if (!ret) {
		end->state = t.state;
		end->wall_s = (double)(t1.tv_sec - t0.tv_sec) +
			      (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
		kopt_exec_task_describe(m->ex, &t, &end->how);
		kopt_buf_addbuf(&end->out, &t.out);
		kopt_buf_addbuf(&end->err, &t.err);
	}
	kopt_exec_task_release(&t);
	return ret;
}

/* The one line that says how a first run failed. */
static int run_failed(const struct kopt_bench *m, const struct run_end *end,
		      const char *cmd)
{
	const char *k = m->kernel->name, *v = m->version;

	switch (end->state) {
	case KOPT_TASK_HUNG:
		return kopt_error("the benchmark of %s %s hung: %s "
				  "(kopt.timeout); command: %s", k, v,
				  end->how.buf, cmd);
	case KOPT_TASK_CRASHED:
		return kopt_error("the benchmark of %s %s crashed: %s; "
				  "command: %s", k, v, end->how.buf, cmd);
	case KOPT_TASK_CANCELLED:
		return kopt_error("the benchmark of %s %s was cancelled: %s; "
				  "command: %s", k, v, end->how.buf, cmd);
	default:
		return kopt_error("the benchmark of %s %s failed (%s): its "
				  "own check failed or it could not run; "
				  "command: %s", k, v, end->how.buf, cmd);
	}
}

/*
 * Where captures go: a temporary folder here, or the executor's state
 * directory in the shared work tree when the run is on the cluster.
 */
static int capture_dir(const struct kopt_bench *m, const char **out)
{
	const char *tmpdir = getenv("TMPDIR");

	if (!on_cluster(m)) {
		*out = tmpdir && *tmpdir ? tmpdir : "/tmp";
		return 0;
	}
	*out = m->ex->state_dir;
	return kopt_mkdir_p(m->ex->state_dir);
}

static int run_once(struct kopt_bench *m, long b, long s, long t,
		    struct kopt_bench_run *out, int *oom, const char *first)
{
	const struct kopt_kernel *k = m->kernel;
	struct kopt_vars vars = { k, m->version, NULL, b, s, t, 1 };
	struct kopt_buf cmd = KOPT_BUF_INIT;
	struct kopt_buf tmpl = KOPT_BUF_INIT;
	struct kopt_strvec env = KOPT_STRVEC_INIT;
	struct run_end end = RUN_END_INIT;
	char *what;
	struct kopt_progress *progress = NULL;
	const char *dir;
	int fd, ret = 0;

	*oom = 0;
	what = kopt_xstrfmt(".kopt: kernel '%s': run", k->name);
	ret = kopt_config_expand(&cmd, k->run, &vars, what);
	free(what);
	if (ret || (ret = capture_dir(m, &dir)))
		goto done;
	kopt_buf_addf(&tmpl, "%s/kopt-capture-XXXXXX", dir);
	fd = mkstemp(tmpl.buf);
	if (fd < 0) {
		ret = kopt_error("cannot create a temporary file in %s: %s",
				 dir, strerror(errno));
		goto done;
	}
	close(fd);
	unlink(tmpl.buf);
	/* a run that ran out of memory may have left a capture */
	if (out->capture)
		unlink(out->capture);
	free(out->capture);
	out->capture = kopt_buf_detach(&tmpl, NULL);
	if (first)
		kopt_warning("running %s %s again to sample the kernels "
			     "launched too few times or only from CUDA "
			     "graphs", k->name, m->version);
	progress = kopt_progress_start("running", 0);
	kopt_progress_what(progress, "%s %s at b=%ld, s=%ld, t=%ld: %s",
			   k->name, m->version, b, s, t, cmd.buf);
	free(out->command);
	out->command = kopt_strdup(cmd.buf);
	kopt_strvec_pushf(&env, "CUDA_INJECTION64_PATH=%s", m->inject_lib);
	kopt_strvec_pushf(&env, "KOPT_INJECT_OUT=%s", out->capture);
	if (m->inject_cache)
		kopt_strvec_pushf(&env, "KOPT_INJECT_CACHE=%s",
				  m->inject_cache);
	if (first)
		kopt_strvec_pushf(&env, "KOPT_INJECT_FIRST_RUN=%s", first);
	ret = on_cluster(m) ? run_cluster(m, cmd.buf, &env, &end) :
	      run_here(m, cmd.buf, &env, &end);
	if (ret)
		goto done;
	out->wall_s += end.wall_s;
	if (end.state != KOPT_TASK_OK) {
		struct kopt_buf all = KOPT_BUF_INIT;
		kopt_buf_addbuf(&all, &end.out);
		kopt_buf_addbuf(&all, &end.err);
		if (end.state == KOPT_TASK_FAILED &&
		    contains_ci(&all, "out of memory")) {
			*oom = 1;
		} else if (first) {
			/* the second run is the caller's to give up on */
			free(out->second_failed);
			out->second_failed = kopt_buf_detach(&end.how, NULL);
			ret = 1;
		} else {
			show_tail("the benchmark", &all);
			ret = run_failed(m, &end, cmd.buf);
		}
		kopt_buf_release(&all);
		goto done;
	}
	if (m->verbose)
		kopt_error_output(end.out.buf);
	if (access(out->capture, R_OK) && first) {
		free(out->second_failed);
		out->second_failed = kopt_strdup("it wrote no capture");
		ret = 1;
		goto done;
	}
	if (access(out->capture, R_OK)) {
		show_tail("the benchmark", &end.err);
		ret = kopt_error("the benchmark of %s %s ran, but the "
				 "injection wrote no capture: is the "
				 "benchmark a CUDA program, and is '%s' "
				 "loadable?", k->name, m->version,
				 m->inject_lib);
		goto done;
	}
	kopt_buf_reset(&out->out);
	kopt_buf_addbuf(&out->out, &end.out);
done:
	kopt_progress_stop(&progress);
	run_end_release(&end);
	kopt_strvec_clear(&env);
	kopt_buf_release(&cmd);
	kopt_buf_release(&tmpl);
	return ret;
}

int kopt_bench_run(struct kopt_bench *m, long b, long s, long t,
		     struct kopt_bench_run *out)
{
	long cur = b;
	int oom, ret;

	out->b_requested = b;
	out->s = s;
	out->t = t;
	for (;;) {
		out->wall_s = 0;
		ret = run_once(m, cur, s, t, out, &oom, NULL);
		if (ret)
			return ret;
		if (!oom)
			break;
		if (cur == 1)
			return kopt_error("the benchmark of %s %s runs out of "
					  "GPU memory even at b=1 (s=%ld, "
					  "t=%ld)", m->kernel->name,
					  m->version, s, t);
		kopt_warning("out of memory at b=%ld: halving b to %ld", cur,
			     cur / 2);
		cur /= 2;
	}
	out->b = cur;
	out->runs = 1;
	if (kopt_capture_needs_second_run(out->capture,
					  m->kernel->stages) > 0) {
		char *first = out->capture;
		out->capture = NULL;
		ret = run_once(m, cur, s, t, out, &oom, first);
		out->runs = 2;
		if (ret > 0 || (!ret && oom)) {
			/* keep what the first run measured, and say so */
			kopt_warning("the second run of %s %s failed (%s): the "
				     "kernels it was to sample stay unmeasured",
				     m->kernel->name, m->version,
				     out->second_failed ? out->second_failed :
				     "out of GPU memory");
			if (out->capture)
				unlink(out->capture);
			free(out->capture);
			out->capture = first;
			first = NULL;
			ret = 0;
		}
		if (first)
			unlink(first);
		free(first);
	}
	return ret;
}
