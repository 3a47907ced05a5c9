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

#endif
