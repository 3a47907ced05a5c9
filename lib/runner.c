#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "banned.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void kopt_child_release(struct kopt_child *c)
{
	kopt_strvec_clear(&c->args);
	kopt_strvec_clear(&c->env);
	kopt_buf_release(&c->out);
	kopt_buf_release(&c->err);
}

static void exec_child(struct kopt_child *c, int outfd, int errfd,
		       pid_t parent)
{
	const char *sh_argv[] = { "/bin/sh", "-c", NULL, NULL };
	const char *const *argv = c->args.v;
	size_t i;

	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	if ((c->flags & KOPT_CHILD_DIE_WITH_PARENT) &&
	    (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent))
		_exit(127);
	if (c->flags & KOPT_CHILD_NO_STDIN) {
		int fd = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, 0);
			close(fd);
		}
	}
	if (outfd >= 0)
		dup2(outfd, 1);
	else if (c->flags & KOPT_CHILD_OUT_TO_ERR)
		dup2(2, 1);
	if (errfd >= 0)
		dup2(errfd, 2);
	for (i = 0; i < c->env.nr; i++)
		putenv((char *)c->env.v[i]);
	if (c->dir && chdir(c->dir)) {
		fprintf(stderr, "fatal: cannot change to '%s': %s\n", c->dir,
			strerror(errno));
		_exit(127);
	}
	if (c->flags & KOPT_CHILD_SHELL) {
		sh_argv[2] = c->args.v[0];
		argv = sh_argv;
	}
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "fatal: cannot run '%s': %s\n", argv[0],
		strerror(errno));
	_exit(127);
}

int kopt_child_run(struct kopt_child *c)
{
	int op[2] = { -1, -1 }, ep[2] = { -1, -1 };
	struct pollfd pfd[2];
	double start = now_s();
	pid_t pid, parent;
	int status = 0, killed = 0;

	if (!c->args.nr)
		return kopt_error("no command to run");
	c->exit_code = -1;
	c->signal = 0;
	c->timed_out = 0;
	fflush(stdout);
	fflush(stderr);
	if (((c->flags & KOPT_CHILD_CAPTURE_OUT) && pipe(op)) ||
	    ((c->flags & KOPT_CHILD_CAPTURE_ERR) && pipe(ep)))
		return kopt_error("cannot create a pipe: %s", strerror(errno));
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		int e = errno;
		if (op[0] >= 0) { close(op[0]); close(op[1]); }
		if (ep[0] >= 0) { close(ep[0]); close(ep[1]); }
		return kopt_error("cannot fork: %s", strerror(e));
	}
	if (!pid) {
		if (op[0] >= 0)
			close(op[0]);
		if (ep[0] >= 0)
			close(ep[0]);
		exec_child(c, op[1], ep[1], parent);
	}
	setpgid(pid, pid);
	if (c->started)
		c->started(pid, c->started_data);
	if (op[1] >= 0)
		close(op[1]);
	if (ep[1] >= 0)
		close(ep[1]);

	for (;;) {
		int nfds = 0, timeout = -1, n;
		char tmp[8192];

		if (op[0] >= 0) {
			pfd[nfds].fd = op[0];
			pfd[nfds++].events = POLLIN;
		}
		if (ep[0] >= 0) {
			pfd[nfds].fd = ep[0];
			pfd[nfds++].events = POLLIN;
		}
		if (!nfds)
			break;
		if (c->timeout_ms > 0) {
			double left = c->timeout_ms / 1000.0 - (now_s() - start);
			if (left <= 0) {
				kill(-pid, SIGKILL);
				killed = 1;
				break;
			}
			timeout = (int)(left * 1000) + 1;
		}
		n = poll(pfd, (nfds_t)nfds, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			continue;
		for (int i = 0; i < nfds; i++) {
			ssize_t r;
			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(pfd[i].fd, tmp, sizeof(tmp));
			if (r < 0 && errno == EINTR)
				continue;
			struct kopt_buf *dst = pfd[i].fd == op[0] ? &c->out : &c->err;
			if (r <= 0) {
				close(pfd[i].fd);
				if (pfd[i].fd == op[0])
					op[0] = -1;
				else
					ep[0] = -1;
				continue;
			}
			kopt_buf_add(dst, tmp, (size_t)r);
		}
	}
	if (op[0] >= 0)
		close(op[0]);
	if (ep[0] >= 0)
		close(ep[0]);

	/* its output closed, the child is about to end: look again soon */
	for (long pause_us = 100;;) {
		pid_t w;
		if (c->timeout_ms > 0 && !killed) {
			w = waitpid(pid, &status, WNOHANG);
			if (w == 0) {
				if (now_s() - start > c->timeout_ms / 1000.0) {
					kill(-pid, SIGKILL);
					killed = 1;
					continue;
				}
				struct timespec ts = { 0, pause_us * 1000 };
				nanosleep(&ts, NULL);
				if (pause_us < 5000)
					pause_us *= 2;
				continue;
			}
		} else {
			w = waitpid(pid, &status, 0);
		}
		if (w < 0 && errno == EINTR)
			continue;
		break;
	}
	c->wall_s = now_s() - start;
	c->timed_out = killed;
	if (WIFEXITED(status))
		c->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		c->signal = WTERMSIG(status);
	/* the shell reports its command's death by signal n as 128 + n */
	if ((c->flags & KOPT_CHILD_SHELL) && c->exit_code > 128 &&
	    c->exit_code <= 128 + 64) {
		c->signal = c->exit_code - 128;
		c->exit_code = -1;
	}
	return 0;
}

void kopt_child_describe(const struct kopt_child *c, struct kopt_buf *out)
{
	if (c->timed_out)
		kopt_buf_addf(out, "timed out after %g s", c->timeout_ms / 1000.0);
	else if (c->signal)
		kopt_buf_addf(out, "killed by signal %d (%s)", c->signal,
			      strsignal(c->signal));
	else
		kopt_buf_addf(out, "exit code %d", c->exit_code);
}
