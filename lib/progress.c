#include "progress.h"

#include <stdlib.h>
#include <time.h>

#include "buf.h"
#include "banned.h"

struct kopt_progress {
	struct kopt_buf title;
	struct kopt_buf what;
	unsigned long done;
	unsigned long total;
	struct timespec start;
	int depth;
};

static kopt_progress_fn sink;
static void *sink_data;
static int open_nr;

kopt_progress_fn kopt_progress_set_sink(kopt_progress_fn fn, void *data)
{
	kopt_progress_fn old = sink;

	sink = fn;
	sink_data = data;
	return old;
}

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) +
	       (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void report(const struct kopt_progress *p,
		   enum kopt_progress_state state)
{
	struct kopt_progress_event ev;

	if (!sink)
		return;
	ev.state = state;
	ev.title = p->title.buf;
	ev.what = p->what.buf;
	ev.done = p->done;
	ev.total = p->total;
	ev.elapsed_s = since(&p->start);
	ev.depth = p->depth;
	sink(&ev, sink_data);
}

struct kopt_progress *kopt_progress_start(const char *title,
					  unsigned long total)
{
	struct kopt_progress *p;

	if (!sink)
		return NULL;
	p = kopt_calloc(1, sizeof(*p));
	kopt_buf_init(&p->title, 0);
	kopt_buf_init(&p->what, 0);
	kopt_buf_addstr(&p->title, title ? title : "");
	p->total = total;
	p->depth = open_nr++;
	clock_gettime(CLOCK_MONOTONIC, &p->start);
	report(p, KOPT_PROGRESS_STARTED);
	return p;
}

void kopt_progress_update(struct kopt_progress *p, unsigned long done)
{
	if (!p || done < p->done)
		return;
	p->done = done;
	if (p->total && p->done > p->total)
		p->total = p->done;
	report(p, KOPT_PROGRESS_RUNNING);
}

void kopt_progress_what(struct kopt_progress *p, const char *fmt, ...)
{
	va_list ap;

	if (!p)
		return;
	kopt_buf_reset(&p->what);
	va_start(ap, fmt);
	kopt_buf_vaddf(&p->what, fmt, ap);
	va_end(ap);
	report(p, KOPT_PROGRESS_RUNNING);
}

void kopt_progress_set_total(struct kopt_progress *p, unsigned long total)
{
	if (!p)
		return;
	p->total = total;
	report(p, KOPT_PROGRESS_RUNNING);
}

void kopt_progress_clear(struct kopt_progress *p)
{
	if (p)
		report(p, KOPT_PROGRESS_CLEAR);
}

void kopt_progress_stop(struct kopt_progress **pp)
{
	struct kopt_progress *p = pp ? *pp : NULL;

	if (!p)
		return;
	kopt_buf_reset(&p->what);
	report(p, KOPT_PROGRESS_DONE);
	kopt_buf_release(&p->title);
	kopt_buf_release(&p->what);
	if (open_nr > 0)
		open_nr--;
	free(p);
	*pp = NULL;
}
