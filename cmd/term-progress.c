/*
 * Drawing lib/progress's events on a terminal (see term-progress.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "buf.h"
#include "progress.h"
#include "term-progress.h"
#include "banned.h"

struct term {
	double delay_s;
	double last_s;       /* elapsed time of the last drawing */
	int shown;           /* a line of this task is on the screen */
	size_t last_len;     /* its width, for terminals without erase */
	int erase;           /* the terminal knows "\033[K" */
};

static struct term term;

static size_t columns(void)
{
	struct winsize ws;
	const char *c = getenv("COLUMNS");

	if (!ioctl(2, TIOCGWINSZ, &ws) && ws.ws_col > 0)
		return ws.ws_col;
	if (c && atoi(c) > 0)
		return (size_t)atoi(c);
	return 0; /* not a terminal, no width: no limit */
}

static void line(const struct kopt_progress_event *ev, struct kopt_buf *sb)
{
	kopt_buf_addf(sb, "%s: ", ev->title);
	if (ev->total)
		kopt_buf_addf(sb, "%3lu%% (%lu/%lu)",
			      ev->done * 100 / ev->total, ev->done, ev->total);
	else
		kopt_buf_addf(sb, "%lu", ev->done);
	kopt_buf_addf(sb, ", %.1f s", ev->elapsed_s);
	if (ev->state == KOPT_PROGRESS_DONE)
		kopt_buf_addstr(sb, ", done.");
	else if (*ev->what)
		kopt_buf_addf(sb, ", %s", ev->what);
}

static void draw(const struct kopt_progress_event *ev, void *data)
{
	struct term *t = data;
	struct kopt_buf sb = KOPT_BUF_INIT;
	size_t width = columns(), len;
	int done = ev->state == KOPT_PROGRESS_DONE;

	if (ev->state == KOPT_PROGRESS_STARTED && ev->depth == 0) {
		t->shown = 0;
		t->last_s = -1;
	}
	if (ev->state == KOPT_PROGRESS_CLEAR) {
		if (t->shown) {
			fputc('\r', stderr);
			if (t->erase)
				fputs("\033[K", stderr);
			else
				fprintf(stderr, "%*s\r", (int)t->last_len, "");
			fflush(stderr);
		}
		t->shown = 0;
		t->last_len = 0;
		return;
	}
	if (ev->elapsed_s < t->delay_s && !t->shown)
		return;
	if (done && !t->shown)
		return;
	if (done && ev->depth > 0)
		return; /* the outer task draws over it next */
	if (!done && t->shown && ev->elapsed_s - t->last_s < 0.1)
		return;
	line(ev, &sb);
	/* never wrap: a wrapped line cannot be redrawn in place */
	if (width > 1 && sb.len > width - 1)
		kopt_buf_setlen(&sb, width - 1);
	len = sb.len;
	fflush(stdout);
	fputc('\r', stderr);
	fputs(sb.buf, stderr);
	if (t->erase)
		fputs("\033[K", stderr);
	else if (t->last_len > len)
		fprintf(stderr, "%*s", (int)(t->last_len - len), "");
	if (done) {
		fputc('\n', stderr);
		t->shown = 0;
		t->last_len = 0;
	} else {
		t->shown = 1;
		t->last_len = len;
		t->last_s = ev->elapsed_s;
	}
	fflush(stderr);
	kopt_buf_release(&sb);
}

void kopt_progress_terminal(int enable)
{
	const char *env = getenv("KOPT_PROGRESS");
	const char *delay = getenv("KOPT_PROGRESS_DELAY");
	const char *tname = getenv("TERM");

	if (env && !strcmp(env, "0"))
		enable = 0;
	else if (enable && !(env && !strcmp(env, "1")) && !isatty(2))
		enable = 0;
	if (!enable) {
		kopt_progress_set_sink(NULL, NULL);
		return;
	}
	memset(&term, 0, sizeof(term));
	term.delay_s = delay ? atof(delay) : 1.0;
	term.last_s = -1;
	term.erase = isatty(2) && tname && strcmp(tname, "dumb");
	kopt_progress_set_sink(draw, &term);
}
