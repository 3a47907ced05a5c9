#include "executor.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "device.h"
#include "error.h"
#include "lockfile.h"
#include "runner.h"
#include "banned.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
	struct timespec ts;

	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

const char *kopt_task_state_name(enum kopt_task_state s)
{
	switch (s) {
	case KOPT_TASK_PENDING: return "pending";
	case KOPT_TASK_OK: return "ok";
	case KOPT_TASK_FAILED: return "failed";
	case KOPT_TASK_CRASHED: return "crashed";
	case KOPT_TASK_HUNG: return "hung";
	case KOPT_TASK_BUILD_FAILED: return "build-failed";
	case KOPT_TASK_CANCELLED: return "cancelled";
	}
	return "?";
}

void kopt_exec_task_describe(const struct kopt_executor *ex,
			     const struct kopt_exec_task *t,
			     struct kopt_buf *out)
{
	switch (t->state) {
	case KOPT_TASK_HUNG:
		kopt_buf_addf(out, "timed out after %d s", ex->timeout_s);
		break;
	case KOPT_TASK_CRASHED:
		kopt_buf_addf(out, "killed by signal %d (%s)", t->signal,
			      strsignal(t->signal));
		break;
	case KOPT_TASK_FAILED:
	case KOPT_TASK_OK:
		kopt_buf_addf(out, "exit code %d", t->exit_code);
		break;
	default:
		kopt_buf_addstr(out, t->why ? t->why :
				kopt_task_state_name(t->state));
		break;
	}
}

void kopt_exec_task_release(struct kopt_exec_task *t)
{
	free(t->build);
	free(t->run);
	free(t->why);
	kopt_strvec_clear(&t->env);
	kopt_buf_release(&t->out);
	kopt_buf_release(&t->err);
	t->build = t->run = t->why = NULL;
}

static void set_why(struct kopt_exec_task *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_why(struct kopt_exec_task *t, const char *fmt, ...)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	kopt_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(t->why);
	t->why = kopt_buf_detach(&sb, NULL);
}

int kopt_executor_init(struct kopt_executor *ex, const struct kopt_config *cfg,
		       const char *top, const char *gitdir)
{
	ex->kind = cfg->executor && !strcmp(cfg->executor, "slurm") ?
		   KOPT_EXEC_SLURM : KOPT_EXEC_LOCAL;
	ex->top = top;
	ex->timeout_s = cfg->timeout_s;
	ex->gpu = cfg->gpu;
	ex->gpu_wait_s = cfg->gpu_wait_s;
	ex->partition = cfg->slurm_partition;
	ex->account = cfg->slurm_account;
	ex->time_limit = cfg->slurm_time;
	ex->gres = cfg->slurm_gres ? cfg->slurm_gres : "gpu:1";
	ex->device_model = cfg->slurm_device;
	ex->tasks_at_once = cfg->slurm_tasks;
	free(ex->state_dir);
	ex->state_dir = kopt_xstrfmt("%skopt/slurm", gitdir);
	return 0;
}

void kopt_executor_release(struct kopt_executor *ex)
{
	kopt_executor_unlock(ex);
	free(ex->state_dir);
	ex->state_dir = NULL;
}

const char *kopt_executor_name(const struct kopt_executor *ex)
{
	return ex->kind == KOPT_EXEC_SLURM ? "slurm" : "local";
}

void kopt_executor_local_device(struct kopt_executor *ex)
{
	struct kopt_device dev;
	char host[256] = "";

	if (kopt_device_available() && !kopt_device_query(&dev, ex->gpu)) {
		snprintf(ex->local_device, sizeof(ex->local_device), "%s",
			 dev.name);
		snprintf(ex->local_uuid, sizeof(ex->local_uuid), "%s",
			 dev.uuid);
		return;
	}
	gethostname(host, sizeof(host) - 1);
	snprintf(ex->local_device, sizeof(ex->local_device), "cpu");
	snprintf(ex->local_uuid, sizeof(ex->local_uuid), "host-%s", host);
}

/*
 * Try the lock until it is ours, `wait_s` seconds have passed or
 * *interrupted is set; 0 when taken.
 */
static int lock_within(int fd, int wait_s,
		       volatile sig_atomic_t *interrupted)
{
	struct timespec start, now, pause = { 0, 5 * 1000 * 1000 };

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (!flock(fd, LOCK_EX | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (wait_s <= 0 || (interrupted && *interrupted) ||
		    (double)(now.tv_sec - start.tv_sec) +
		    (double)(now.tv_nsec - start.tv_nsec) / 1e9 >= wait_s)
			return -1;
		nanosleep(&pause, NULL);
	}
}

int kopt_executor_gpu_lock(int *fd, int gpu, int wait_s,
			   volatile sig_atomic_t *interrupted)
{
	const char *dir = getenv("XDG_RUNTIME_DIR");
	char *path = kopt_xstrfmt("%s/kopt-gpu-%d.lock",
				  dir && *dir ? dir : "/tmp", gpu);
	int ret = 0;

	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (*fd < 0) {
		ret = kopt_error("cannot open the GPU lock '%s': %s", path,
				 strerror(errno));
	} else if (lock_within(*fd, wait_s, interrupted)) {
		if (wait_s > 0)
			kopt_error("GPU %d is busy: another git-kopt held '%s' "
				   "for the %d s this run may wait "
				   "(kopt.gpuWait)", gpu, path, wait_s);
		else
			kopt_error("GPU %d is busy: another git-kopt holds "
				   "'%s'; wait for it to finish, or let runs "
				   "wait for it (kopt.gpuWait)", gpu, path);
		close(*fd);
		*fd = -1;
		ret = KOPT_ELOCKED;
	}
	free(path);
	return ret;
}

void kopt_executor_gpu_unlock(int *fd)
{
	if (*fd >= 0) {
		flock(*fd, LOCK_UN);
		close(*fd);
	}
	*fd = -1;
}

int kopt_executor_lock(struct kopt_executor *ex)
{
	if (ex->kind != KOPT_EXEC_LOCAL || ex->lock_fd >= 0)
		return 0;
	return kopt_executor_gpu_lock(&ex->lock_fd, ex->gpu, ex->gpu_wait_s,
				      ex->interrupted);
}

void kopt_executor_unlock(struct kopt_executor *ex)
{
	kopt_executor_gpu_unlock(&ex->lock_fd);
}

void kopt_executor_child(struct kopt_child *c, const char *cmdline,
			 const char *top, int timeout_s, int gpu)
{
	kopt_strvec_push(&c->args, cmdline);
	c->flags = KOPT_CHILD_SHELL | KOPT_CHILD_NO_STDIN |
		   KOPT_CHILD_CAPTURE_OUT | KOPT_CHILD_CAPTURE_ERR;
	c->dir = top;
	c->timeout_ms = timeout_s * 1000;
	if (gpu)
		kopt_strvec_pushf(&c->env, "CUDA_VISIBLE_DEVICES=%d", gpu);
}

/* Parallel builds: one /bin/sh per build, output into a temporary file. */
struct building {
	pid_t pid;
	size_t task;
	int fd;
	double start;
	int killed;
};

/* The last non-empty line of `in`, for a one-line reason. */
static void last_line(struct kopt_buf *out, const struct kopt_buf *in)
{
	size_t end = in->len, start;

	while (end && (in->buf[end - 1] == '\n' || in->buf[end - 1] == '\r' ||
		       in->buf[end - 1] == ' '))
		end--;
	start = end;
	while (start && in->buf[start - 1] != '\n')
		start--;
	if (end - start > 200)
		start = end - 200;
	kopt_buf_add(out, in->buf + start, end - start);
}

static void finish_build(struct kopt_exec_task *t, struct building *b,
			 int status)
{
	struct stat st;

	kopt_buf_reset(&t->err);
	if (!fstat(b->fd, &st) && st.st_size > 0) {
		kopt_buf_grow(&t->err, (size_t)st.st_size);
		if (pread(b->fd, t->err.buf, (size_t)st.st_size, 0) ==
		    (ssize_t)st.st_size)
			kopt_buf_setlen(&t->err, (size_t)st.st_size);
	}
	close(b->fd);
	if (b->killed) {
		t->state = KOPT_TASK_BUILD_FAILED;
		set_why(t, "the build timed out (kopt.timeout)");
	} else if (WIFSIGNALED(status)) {
		t->state = KOPT_TASK_BUILD_FAILED;
		set_why(t, "the build was killed by signal %d",
			WTERMSIG(status));
	} else if (WEXITSTATUS(status)) {
		struct kopt_buf last = KOPT_BUF_INIT;
		last_line(&last, &t->err);
		t->state = KOPT_TASK_BUILD_FAILED;
		set_why(t, "the build failed (exit code %d)%s%s",
			WEXITSTATUS(status), last.len ? ": " : "", last.buf);
		kopt_buf_release(&last);
	}
}

static int start_build(struct kopt_executor *ex, struct kopt_exec_task *t,
		       struct building *b)
{
	char tmpl[] = "/tmp/kopt-build-XXXXXX";
	const char *tmpdir = getenv("TMPDIR");
	char *path = kopt_xstrfmt("%s/kopt-build-XXXXXX",
				  tmpdir && *tmpdir ? tmpdir : "/tmp");
	int fd = mkstemp(path);
	pid_t pid;

	(void)tmpl;
	if (fd < 0) {
		int ret = kopt_error("cannot create a temporary file '%s': %s",
				     path, strerror(errno));
		free(path);
		return ret;
	}
	unlink(path);
	free(path);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(fd);
		return kopt_error("cannot fork: %s", strerror(errno));
	}
	if (!pid) {
		int nul = open("/dev/null", O_RDONLY);
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (ex->top && chdir(ex->top))
			_exit(127);
		execl("/bin/sh", "sh", "-c", t->build, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	b->pid = pid;
	b->fd = fd;
	b->start = now_s();
	b->killed = 0;
	return 0;
}

/* The first task of the batch with the same build command as task i. */
static size_t same_build(const struct kopt_exec_task *tasks, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (tasks[j].build && !strcmp(tasks[j].build, tasks[i].build))
			return j;
	return i;
}

static long online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? n : 1;
}

int kopt_executor_build(struct kopt_executor *ex,
			struct kopt_exec_task *tasks, size_t nr)
{
	size_t jobs = ex->build_jobs > 0 ? (size_t)ex->build_jobs :
		      (size_t)online_cpus();
	struct building *running = kopt_calloc(jobs, sizeof(*running));
	size_t nrun = 0, next = 0, i;
	int ret = 0;

	while (!ret && (next < nr || nrun)) {
		while (next < nr && nrun < jobs) {
			struct kopt_exec_task *t = &tasks[next];
			if (!t->build || t->state == KOPT_TASK_BUILD_FAILED ||
			    same_build(tasks, next) != next) {
				next++;
				continue;
			}
			if (start_build(ex, t, &running[nrun])) {
				ret = -1;
				break;
			}
			running[nrun++].task = next++;
		}
		for (i = 0; i < nrun;) {
			int status;
			pid_t p = waitpid(running[i].pid, &status, WNOHANG);
			if (p == running[i].pid) {
				finish_build(&tasks[running[i].task],
					     &running[i], status);
				running[i] = running[--nrun];
				continue;
			}
			if (ex->timeout_s > 0 && !running[i].killed &&
			    now_s() - running[i].start > ex->timeout_s) {
				kill(-running[i].pid, SIGKILL);
				running[i].killed = 1;
			}
			i++;
		}
		if (nrun)
			sleep_s(0.002);
	}
	/* configurations that share a build share its outcome */
	for (i = 0; !ret && i < nr; i++) {
		size_t j = tasks[i].build ? same_build(tasks, i) : i;
		if (j != i && tasks[j].state == KOPT_TASK_BUILD_FAILED) {
			tasks[i].state = KOPT_TASK_BUILD_FAILED;
			kopt_buf_reset(&tasks[i].err);
			kopt_buf_addbuf(&tasks[i].err, &tasks[j].err);
			set_why(&tasks[i], "%s", tasks[j].why);
		}
	}
	/* on error, collect what was started */
	for (i = 0; i < nrun; i++) {
		int status;
		kill(-running[i].pid, SIGKILL);
		waitpid(running[i].pid, &status, 0);
		close(running[i].fd);
	}
	free(running);
	return ret;
}

static void copy_device(struct kopt_exec_task *t, const char *name,
			const char *uuid)
{
	snprintf(t->device, sizeof(t->device), "%s", name);
	snprintf(t->uuid, sizeof(t->uuid), "%s", uuid);
}

static int run_local(struct kopt_executor *ex, struct kopt_exec_task *tasks,
		     size_t nr)
{
	size_t i;

	if (!ex->local_device[0])
		kopt_executor_local_device(ex);
	for (i = 0; i < nr; i++) {
		struct kopt_exec_task *t = &tasks[i];
		struct kopt_child c = KOPT_CHILD_INIT;
		size_t j;

		if (t->state == KOPT_TASK_BUILD_FAILED)
			continue;
		if (ex->interrupted && *ex->interrupted) {
			t->state = KOPT_TASK_CANCELLED;
			set_why(t, "interrupted before it ran");
			continue;
		}
		kopt_executor_child(&c, t->run, ex->top, ex->timeout_s,
				    ex->gpu);
		for (j = 0; j < t->env.nr; j++)
			kopt_strvec_push(&c.env, t->env.v[j]);
		copy_device(t, ex->local_device, ex->local_uuid);
		if (kopt_child_run(&c)) {
			kopt_child_release(&c);
			return -1;
		}
		t->run_s = c.wall_s;
		t->exit_code = c.exit_code;
		t->signal = c.signal;
		kopt_buf_reset(&t->out);
		kopt_buf_addbuf(&t->out, &c.out);
		kopt_buf_reset(&t->err);
		kopt_buf_addbuf(&t->err, &c.err);
		if (c.timed_out) {
			t->state = KOPT_TASK_HUNG;
			set_why(t, "hung: timed out after %d s (kopt.timeout)",
				ex->timeout_s);
		} else if (c.signal) {
			t->state = KOPT_TASK_CRASHED;
			set_why(t, "crashed: killed by signal %d (%s)",
				c.signal, strsignal(c.signal));
		} else if (c.exit_code) {
			t->state = KOPT_TASK_FAILED;
			set_why(t, "failed: exit code %d (its own check failed "
				"or it could not run)", c.exit_code);
		} else {
			t->state = KOPT_TASK_OK;
		}
		kopt_child_release(&c);
	}
	return 0;
}

/* --- Slurm --------------------------------------------------------- */

static void sh_quote(struct kopt_buf *out, const char *s)
{
	kopt_buf_addch(out, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			kopt_buf_addstr(out, "'\\''");
		else
			kopt_buf_addch(out, *s);
	}
	kopt_buf_addch(out, '\'');
}

static int write_text(const char *path, const struct kopt_buf *text)
{
	return kopt_write_file_atomic(path, text->buf, text->len, 0755);
}

static char *task_file(const char *dir, const char *what, size_t i)
{
	return kopt_xstrfmt("%s/%s.%zu", dir, what, i);
}

static int write_array(struct kopt_executor *ex, const char *dir,
		       struct kopt_exec_task *tasks, size_t nr)
{
	struct kopt_buf s = KOPT_BUF_INIT;
	char *path;
	size_t i;
	int ret = 0;

	kopt_buf_addstr(&s, "#!/bin/sh\n"
			"# One task of a git-kopt job array: the device, then "
			"the build and\n# the run of configuration "
			"$SLURM_ARRAY_TASK_ID, their status in rc.<task>.\n"
			"d=");
	sh_quote(&s, dir);
	kopt_buf_addstr(&s, "\ntop=");
	sh_quote(&s, ex->top);
	kopt_buf_addf(&s, "\ntimeout_s=%d\n", ex->timeout_s > 0 ?
		      ex->timeout_s : 0);
	kopt_buf_addstr(&s,
		"i=${SLURM_ARRAY_TASK_ID:?not a job array task}\n"
		": >\"$d/started.$i\"\n"
		"dev=cpu uuid=\"host-$(hostname)\"\n"
		"if command -v nvidia-smi >/dev/null 2>&1; then\n"
		"\tline=$(nvidia-smi -i \"${CUDA_VISIBLE_DEVICES%%,*}\" "
		"--query-gpu=name,uuid --format=csv,noheader 2>/dev/null |\n"
		"\t\thead -n 1)\n"
		"\t[ -z \"$line\" ] && line=$(nvidia-smi --query-gpu=name,uuid "
		"--format=csv,noheader 2>/dev/null | head -n 1)\n"
		"\tif [ -n \"$line\" ]; then\n"
		"\t\tdev=${line%, *} uuid=${line##*, }\n"
		"\tfi\n"
		"fi\n"
		"printf '%s\\n%s\\n' \"$dev\" \"$uuid\" >\"$d/device.$i\"\n"
		"finish() { echo \"$1\" >\"$d/rc.$i.tmp\" && "
		"mv \"$d/rc.$i.tmp\" \"$d/rc.$i\"; exit 0; }\n"
		"trap 'finish cancelled' TERM INT\n"
		"cd \"$top\" || finish \"run 126\"\n"
		"if [ -f \"$d/build.$i\" ]; then\n"
		"\tsh \"$d/build.$i\" >\"$d/err.$i\" 2>&1 || finish \"build $?\"\n"
		"fi\n"
		"if [ \"$timeout_s\" -gt 0 ]; then\n"
		"\ttimeout -k 5 \"$timeout_s\" sh \"$d/run.$i\" >\"$d/out.$i\" "
		"2>\"$d/err.$i\"\n"
		"else\n"
		"\tsh \"$d/run.$i\" >\"$d/out.$i\" 2>\"$d/err.$i\"\n"
		"fi\n"
		"finish \"run $?\"\n");
	path = kopt_xstrfmt("%s/task.sh", dir);
	ret = write_text(path, &s);
	free(path);
	for (i = 0; !ret && i < nr; i++) {
		struct kopt_exec_task *t = &tasks[i];
		size_t j;
		kopt_buf_reset(&s);
		for (j = 0; j < t->env.nr; j++) {
			const char *eq = strchr(t->env.v[j], '=');
			if (!eq)
				continue;
			kopt_buf_addf(&s, "export %.*s=", (int)(eq - t->env.v[j]),
				      t->env.v[j]);
			sh_quote(&s, eq + 1);
			kopt_buf_addch(&s, '\n');
		}
		kopt_buf_addf(&s, "%s\n", t->run);
		path = task_file(dir, "run", i);
		ret = write_text(path, &s);
		free(path);
	}
	kopt_buf_release(&s);
	return ret;
}

static int slurm_cmd(struct kopt_child *c, int timeout_s)
{
	c->flags = KOPT_CHILD_NO_STDIN | KOPT_CHILD_CAPTURE_OUT |
		   KOPT_CHILD_CAPTURE_ERR;
	c->timeout_ms = timeout_s * 1000;
	return kopt_child_run(c);
}

static void first_line(struct kopt_buf *out, const struct kopt_buf *in)
{
	const char *nl = memchr(in->buf, '\n', in->len);
	size_t n = nl ? (size_t)(nl - in->buf) : in->len;

	kopt_buf_add(out, in->buf, n);
	kopt_buf_rtrim(out);
}

static void scancel(const char *job)
{
	struct kopt_child c = KOPT_CHILD_INIT;

	kopt_strvec_push(&c.args, "scancel");
	kopt_strvec_push(&c.args, job);
	slurm_cmd(&c, 30);
	kopt_child_release(&c);
}

static int read_small(struct kopt_buf *out, const char *path)
{
	kopt_buf_reset(out);
	return kopt_buf_read_file(out, path);
}

/* Every task of the array has written its status. */
static int all_done(const char *dir, const struct kopt_exec_task *tasks,
		    size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		char *p;
		int there;
		if (tasks[i].state == KOPT_TASK_BUILD_FAILED)
			continue;
		p = task_file(dir, "rc", i);
		there = !access(p, F_OK);
		free(p);
		if (!there)
			return 0;
	}
	return 1;
}

/* 1 while the job is in the queue, 0 when it left, -1 when unknown. */
static int in_queue(const char *job, struct kopt_buf *why)
{
	struct kopt_child c = KOPT_CHILD_INIT;
	int ret;

	kopt_strvec_push(&c.args, "squeue");
	kopt_strvec_push(&c.args, "-h");
	kopt_strvec_push(&c.args, "-j");
	kopt_strvec_push(&c.args, job);
	kopt_strvec_push(&c.args, "-o");
	kopt_strvec_push(&c.args, "%i");
	if (slurm_cmd(&c, 30)) {
		kopt_child_release(&c);
		kopt_buf_addstr(why, "cannot run squeue");
		return -1;
	}
	if (c.exit_code == 0) {
		kopt_buf_trim(&c.out);
		ret = c.out.len > 0;
	} else if (strstr(c.err.buf, "Invalid job id")) {
		ret = 0;
	} else {
		kopt_buf_reset(why);
		first_line(why, c.err.len ? &c.err : &c.out);
		if (!why->len)
			kopt_child_describe(&c, why);
		ret = -1;
	}
	kopt_child_release(&c);
	return ret;
}

static void collect(const char *dir, struct kopt_exec_task *t, size_t i)
{
	struct kopt_buf rc = KOPT_BUF_INIT, dev = KOPT_BUF_INIT;
	char *p;
	int started;

	p = task_file(dir, "device", i);
	if (!read_small(&dev, p)) {
		char *nl = strchr(dev.buf, '\n');
		if (nl) {
			*nl = '\0';
			copy_device(t, dev.buf, nl + 1);
			nl = strchr(t->uuid, '\n');
			if (nl)
				*nl = '\0';
		}
	}
	free(p);
	p = task_file(dir, "out", i);
	read_small(&t->out, p);
	free(p);
	p = task_file(dir, "err", i);
	read_small(&t->err, p);
	free(p);
	p = task_file(dir, "started", i);
	started = !access(p, F_OK);
	free(p);
	p = task_file(dir, "rc", i);
	if (read_small(&rc, p)) {
		t->state = KOPT_TASK_CANCELLED;
		if (started)
			set_why(t, "killed on the cluster before it finished "
				"(scancel, its time limit, or its node was "
				"lost)");
		else
			set_why(t, "never ran on the cluster (cancelled)");
	} else if (kopt_starts_with(rc.buf, "cancelled")) {
		t->state = KOPT_TASK_CANCELLED;
		set_why(t, "killed on the cluster before it finished (scancel, "
			"its time limit, or its node was lost)");
	} else {
		int code = -1;
		const char *sp = strchr(rc.buf, ' ');
		if (sp)
			code = atoi(sp + 1);
		t->exit_code = code;
		if (kopt_starts_with(rc.buf, "build")) {
			t->state = KOPT_TASK_BUILD_FAILED;
			set_why(t, "the build failed on the cluster (exit code "
				"%d)", code);
		} else if (code == 0) {
			t->state = KOPT_TASK_OK;
		} else if (code == 124) {
			t->state = KOPT_TASK_HUNG;
			set_why(t, "hung: timed out (kopt.timeout)");
		} else if (code == 128 + SIGTERM) {
			/* what scancel and the time limit send first */
			t->state = KOPT_TASK_CANCELLED;
			set_why(t, "killed on the cluster before it finished "
				"(scancel, its time limit, or its node was "
				"lost)");
		} else if (code > 128) {
			t->state = KOPT_TASK_CRASHED;
			t->signal = code - 128;
			set_why(t, "crashed: killed by signal %d (%s)",
				code - 128, strsignal(code - 128));
		} else {
			t->state = KOPT_TASK_FAILED;
			set_why(t, "failed: exit code %d (its own check failed "
				"or it could not run)", code);
		}
	}
	free(p);
	kopt_buf_release(&rc);
	kopt_buf_release(&dev);
}

/* Remove what write_array() and the tasks left in `dir`. */
static void remove_array(const char *dir, size_t nr)
{
	static const char *const per_task[] = {
		"run", "build", "rc", "out", "err", "device", "started"
	};
	size_t i, j;
	char *p;

	for (i = 0; i < nr; i++) {
		for (j = 0; j < KOPT_ARRAY_SIZE(per_task); j++) {
			p = task_file(dir, per_task[j], i);
			unlink(p);
			free(p);
		}
		p = kopt_xstrfmt("%s/rc.%zu.tmp", dir, i);
		unlink(p);
		free(p);
	}
	p = kopt_xstrfmt("%s/task.sh", dir);
	unlink(p);
	free(p);
	rmdir(dir);
}

static int run_slurm(struct kopt_executor *ex, struct kopt_exec_task *tasks,
		     size_t nr)
{
	struct kopt_child c = KOPT_CHILD_INIT;
	struct kopt_buf dir = KOPT_BUF_INIT, job = KOPT_BUF_INIT;
	struct kopt_buf why = KOPT_BUF_INIT;
	size_t i, todo = 0;
	double failing_since = 0;
	int ret = 0, interrupted = 0;
	static unsigned serial;

	for (i = 0; i < nr; i++)
		todo += tasks[i].state != KOPT_TASK_BUILD_FAILED;
	if (!todo)
		return 0;
	kopt_buf_addf(&dir, "%s/%ld-%ld-%u", ex->state_dir, (long)getpid(),
		      (long)time(NULL), serial++);
	if (kopt_mkdir_p(dir.buf) || write_array(ex, dir.buf, tasks, nr)) {
		ret = -1;
		goto done;
	}
	/* a task whose build failed here is never submitted */
	for (i = 0; i < nr; i++)
		if (tasks[i].state == KOPT_TASK_BUILD_FAILED) {
			char *p = task_file(dir.buf, "rc", i);
			struct kopt_buf b = KOPT_BUF_INIT;
			kopt_buf_addstr(&b, "skip\n");
			kopt_write_file_atomic(p, b.buf, b.len, 0644);
			kopt_buf_release(&b);
			free(p);
		}
	kopt_strvec_push(&c.args, "sbatch");
	kopt_strvec_push(&c.args, "--parsable");
	kopt_strvec_push(&c.args, "--job-name=kopt");
	kopt_strvec_push(&c.args, "--output=/dev/null");
	kopt_strvec_pushf(&c.args, "--chdir=%s", ex->top);
	if (ex->tasks_at_once > 0)
		kopt_strvec_pushf(&c.args, "--array=0-%zu%%%d", nr - 1,
				  ex->tasks_at_once);
	else
		kopt_strvec_pushf(&c.args, "--array=0-%zu", nr - 1);
	if (ex->partition)
		kopt_strvec_pushf(&c.args, "--partition=%s", ex->partition);
	if (ex->account)
		kopt_strvec_pushf(&c.args, "--account=%s", ex->account);
	if (ex->time_limit)
		kopt_strvec_pushf(&c.args, "--time=%s", ex->time_limit);
	if (ex->gres && strcmp(ex->gres, "none"))
		kopt_strvec_pushf(&c.args, "--gres=%s", ex->gres);
	kopt_strvec_pushf(&c.args, "%s/task.sh", dir.buf);
	if (slurm_cmd(&c, 60)) {
		ret = -1;
		goto done;
	}
	if (c.exit_code != 0 || !c.out.len) {
		first_line(&why, c.err.len ? &c.err : &c.out);
		if (!why.len)
			kopt_child_describe(&c, &why);
		ret = kopt_error("the cluster refused the job: %s%s",
				 kopt_starts_with(why.buf, "sbatch") ? "" :
				 "sbatch: ", why.buf);
		goto done;
	}
	first_line(&job, &c.out);
	if (strchr(job.buf, ';'))
		kopt_buf_setlen(&job, (size_t)(strchr(job.buf, ';') - job.buf));
	for (;;) {
		int q;
		if (ex->interrupted && *ex->interrupted) {
			scancel(job.buf);
			interrupted = 1;
			break;
		}
		if (all_done(dir.buf, tasks, nr))
			break;
		kopt_buf_reset(&why);
		q = in_queue(job.buf, &why);
		if (q == 0) {
			/* statuses are written just before a task ends */
			sleep_s(ex->poll_s);
			break;
		}
		if (q < 0) {
			if (!failing_since)
				failing_since = now_s();
			else if (now_s() - failing_since > 60) {
				scancel(job.buf);
				ret = kopt_error("the cluster does not answer "
						 "(squeue: %s); job %s "
						 "cancelled", why.buf, job.buf);
				break;
			}
		} else {
			failing_since = 0;
		}
		sleep_s(ex->poll_s);
	}
	for (i = 0; i < nr; i++)
		if (tasks[i].state != KOPT_TASK_BUILD_FAILED)
			collect(dir.buf, &tasks[i], i);
	if (interrupted)
		ret = KOPT_EINTR;
done:
	if (dir.len)
		remove_array(dir.buf, nr);
	kopt_child_release(&c);
	kopt_buf_release(&dir);
	kopt_buf_release(&job);
	kopt_buf_release(&why);
	return ret;
}

int kopt_executor_run(struct kopt_executor *ex, struct kopt_exec_task *tasks,
		      size_t nr)
{
	if (!nr)
		return 0;
	if (ex->kind == KOPT_EXEC_SLURM)
		return run_slurm(ex, tasks, nr);
	return run_local(ex, tasks, nr);
}
