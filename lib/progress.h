#ifndef KOPT_PROGRESS_H
#define KOPT_PROGRESS_H

/*
 * Progress of long work: lib/ reports it, cmd/ draws it.
 *
 * Work that may run for more than about a second (profiling several
 * trials, building versions, copying trees, walking long ranges) reports
 * its steps here; lib/ never prints them itself.  A command installs one
 * sink with kopt_progress_set_sink() (cmd/progress.c draws a line on a
 * terminal); with no sink installed every call below does nothing, so
 * lib code calls them unconditionally and tests see no output.
 *
 * Calling sequence (kopt_progress_clear() before anything else is
 * printed while the task runs, so that lines do not run into each other):
 *
 *	struct kopt_progress *p = kopt_progress_start("profiling v3", 6);
 *	for (i = 0; i < 6; i++) {
 *		kopt_progress_what(p, "trial %s, run %d", name, run);
 *		... the work ...
 *		kopt_progress_update(p, i + 1);
 *	}
 *	kopt_progress_stop(&p);
 *
 * `total` 0 means the number of steps is not known.  A NULL progress is
 * accepted everywhere (kopt_progress_start returns NULL when no sink is
 * installed), so callers never test it.  kopt_progress_stop() frees the
 * progress and sets the pointer to NULL; a progress may be nested inside
 * another one (a sink draws the innermost).  Elapsed time is measured on
 * the monotonic clock from kopt_progress_start().
 */

#include <stdarg.h>

enum kopt_progress_state {
	KOPT_PROGRESS_STARTED,  /* sent once, by kopt_progress_start() */
	KOPT_PROGRESS_RUNNING,
	KOPT_PROGRESS_DONE,
	KOPT_PROGRESS_CLEAR,    /* take the line away: other output follows */
};

/* What a sink receives; all pointers are borrowed for the call only. */
struct kopt_progress_event {
	enum kopt_progress_state state;
	const char *title;      /* the whole task: "profiling mla-decode v3" */
	const char *what;       /* what runs now ("trial decode, run 2"), or "" */
	unsigned long done;     /* steps finished */
	unsigned long total;    /* steps in all, 0 when unknown */
	double elapsed_s;       /* since kopt_progress_start() */
	int depth;              /* 0 for the outermost progress */
};

typedef void (*kopt_progress_fn)(const struct kopt_progress_event *ev,
				 void *data);

/* Install `fn` (NULL: none) with its `data`; returns the previous sink. */
kopt_progress_fn kopt_progress_set_sink(kopt_progress_fn fn, void *data);

struct kopt_progress;

/* Start a task of `total` steps; NULL when no sink is installed. */
struct kopt_progress *kopt_progress_start(const char *title,
					  unsigned long total);
/* `done` steps are finished (a value below the last one is ignored). */
void kopt_progress_update(struct kopt_progress *p, unsigned long done);
/* Say what runs now; the text is copied. */
void kopt_progress_what(struct kopt_progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Change the number of steps once it is known. */
void kopt_progress_set_total(struct kopt_progress *p, unsigned long total);
/*
 * Other output is about to go to the terminal (a child's messages, a
 * result on stdout): the sink takes its line away; the next update
 * draws it again below that output.
 */
void kopt_progress_clear(struct kopt_progress *p);
/* The task is over (finished or not): report it, free it, NULL *p. */
void kopt_progress_stop(struct kopt_progress **p);

#endif
