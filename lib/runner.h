#ifndef KOPT_RUNNER_H
#define KOPT_RUNNER_H

/*
 * Running child processes, after git's run-command.
 *
 * Fill a struct kopt_child (KOPT_CHILD_INIT), push the argv, set the
 * flags, call kopt_child_run().  The child gets its own process group so
 * that a timeout kills everything it started.  Captured output lands in
 * `out` and `err`; without capture the child shares our stdout/stderr
 * (KOPT_CHILD_ERR_TO_OUT sends its stdout to our stderr, for progress).
 * After the run, `exit_code` holds the status (or -1), `signal` the
 * terminating signal (or 0), `timed_out` whether the timeout fired.
 * kopt_child_run() returns 0 when the child could be run at all (whatever
 * its status), -1 when it could not be started (error printed).
 *
 * KOPT_CHILD_SHELL runs argv[0] through "/bin/sh -c": only for command
 * lines the user configured, never for arguments of our own.  The shell's
 * status 128 + n (its command killed by signal n) is reported as signal n.
 */

#include <sys/types.h>

#include "buf.h"
#include "strvec.h"

enum kopt_child_flags {
	KOPT_CHILD_CAPTURE_OUT = 1 << 0,
	KOPT_CHILD_CAPTURE_ERR = 1 << 1,
	KOPT_CHILD_SHELL = 1 << 2,
	KOPT_CHILD_NO_STDIN = 1 << 3,
	KOPT_CHILD_OUT_TO_ERR = 1 << 4,
	/* killed (SIGKILL) when the process that started it dies */
	KOPT_CHILD_DIE_WITH_PARENT = 1 << 5,
};

struct kopt_child {
	struct kopt_strvec args;
	struct kopt_strvec env;  /* "NAME=value" added to our environment */
	const char *dir;         /* working directory, or NULL */
	unsigned flags;
	int timeout_ms;          /* 0: none */
	struct kopt_buf out;
	struct kopt_buf err;
	int exit_code;
	int signal;
	int timed_out;
	double wall_s;
	/* called in the parent once the child runs (its pid is its group) */
	void (*started)(pid_t pid, void *data);
	void *started_data;
};

#define KOPT_CHILD_INIT { KOPT_STRVEC_INIT, KOPT_STRVEC_INIT, NULL, 0, 0, \
	KOPT_BUF_INIT, KOPT_BUF_INIT, -1, 0, 0, 0.0 }

int kopt_child_run(struct kopt_child *c);
void kopt_child_release(struct kopt_child *c);
/* A one-line description of how the child ended ("exit code 3"...). */
void kopt_child_describe(const struct kopt_child *c, struct kopt_buf *out);

#endif
