#ifndef KOPT_CAPTURE_H
#define KOPT_CAPTURE_H

/*
 * Reading a raw capture of the injection library (lib/inject/README.md,
 * format "kopt-inject" version 1) into the stages of a results entry.
 *
 * A stage is a distinct kernel (name + grid + block).  Its duration is
 * taken over the timed launches: the Activity durations after the first
 * `config.warmup` launches of that kernel, leaving out the launches the
 * range profiler replayed (their Activity records carry no duration);
 * when no such launch is left, the profiler's gpu__time_duration of the
 * sampled launches stands in.  Hardware metrics are the medians over the
 * sampled launches; a metric the capture rejected (a percentage over 100)
 * or never measured stays NAN.
 *
 * kopt_capture_parse() fills `e->stages` and `e->device` and derives the
 * entry's canonical metrics (lib/results); it does not touch the rest of
 * the entry.  Errors the injection recorded (no CUPTI, counters not
 * permitted, another profiler subscribed) and a run that launched no
 * kernel fail the parse with one message naming the cause.
 */

#include <stddef.h>

#include "results.h"

/*
 * Which kernels are stages: those whose name matches the glob `stages`
 * (kernel.<name>.stages in .kopt); without one, the kernels launched at
 * least half as often as the most launched one, which leaves out a
 * benchmark's set-up and reference kernels that run once.
 */
int kopt_capture_parse(struct kopt_results_entry *e, const char *data,
		       size_t len, const char *label, const char *stages);
int kopt_capture_read_file(struct kopt_results_entry *e, const char *path,
			   const char *stages);

/*
 * Whether a first run's capture leaves a stage (chosen as above) that
 * the library could not sample because it was launched too few times,
 * whose samples failed, or that ran only from CUDA graphs: a second run
 * of the program samples it (launching such graphs node by node)
 * (KOPT_INJECT_FIRST_RUN, lib/inject/README.md).  1 yes, 0 no, -1 when
 * the capture cannot be read (nothing printed: reading it for the
 * results says why).
 */
int kopt_capture_needs_second_run(const char *path, const char *stages);

/*
 * What a capture was recorded from, kept in it as "program": the kernel
 * and version, the run command after substitution, and the git tree id
 * of the version's sources.  The device (name, uuid) and the kernel
 * names are the library's own part of the capture.
 */
struct kopt_capture_program {
	const char *kernel;
	const char *version;
	const char *run;        /* the command line that ran */
	const char *tree;       /* may be NULL: sources not committed */
};

/* Write `p` into the capture at `path` (atomically). */
int kopt_capture_set_program(const char *path,
			     const struct kopt_capture_program *p);

/*
 * Before a capture is replayed: it must have been recorded from the same
 * kernel, version and run command, from the same sources (tree) when
 * both know it, and on the device `uuid` when one is given (the GPU of
 * this machine).  Fails with one message naming both sides and
 * --force; `force` makes each difference a warning instead.  A capture
 * without a "program" (recorded by hand, or before captures recorded
 * one) is replayed with a warning that says so.
 * `*tree` receives the tree id the capture recorded (or NULL).
 */
int kopt_capture_check_program(const char *path,
			       const struct kopt_capture_program *want,
			       const char *uuid, int force, char **tree);

#endif
