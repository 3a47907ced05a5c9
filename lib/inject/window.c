/*
 * The rules of a window: see window.h.
 */
#include <string.h>

#include "window.h"
#include "../banned.h"

static void add(struct kopt_window *w, const void *k, uint64_t index)
{
	struct kopt_window_slot *s = &w->slot[w->n++];

	s->k = k;
	s->launch = s->last_launch = index;
	w->pos++;
}

enum kopt_window_action kopt_window_enter(struct kopt_window *w,
					  const void *k, uint64_t index,
					  int wants, int captured,
					  unsigned max_wait)
{
	if (w->open && w->running) {
		if (w->building) {
			if (captured || !wants ||
			    w->n == KOPT_INJECT_MAX_WINDOW)
				return KOPT_WIN_STOP;
			add(w, k, index);
			return KOPT_WIN_TAKE;
		}
		if (captured || w->pos >= w->n || w->slot[w->pos].k != k)
			return KOPT_WIN_DROP;
		w->slot[w->pos++].last_launch = index;
		return KOPT_WIN_TAKE;
	}
	if (w->open) {
		/* between passes: the next one starts at the first kernel */
		if (!captured && w->slot[0].k == k) {
			w->slot[0].last_launch = index;
			w->pos = 1;
			w->running = 1;
			return KOPT_WIN_START;
		}
		if (++w->wait > max_wait)
			return KOPT_WIN_DROP;
		return KOPT_WIN_SKIP;
	}
	if (captured || !wants)
		return KOPT_WIN_SKIP;
	w->open = 1;
	w->building = 1;
	w->running = 1;
	add(w, k, index);
	return KOPT_WIN_OPEN;
}

enum kopt_window_action kopt_window_exit(const struct kopt_window *w)
{
	if (!w->open || !w->running)
		return KOPT_WIN_SKIP;
	if (w->building ? w->n == KOPT_INJECT_MAX_WINDOW : w->pos == w->n)
		return KOPT_WIN_STOP;
	return KOPT_WIN_SKIP;
}

void kopt_window_stopped(struct kopt_window *w)
{
	w->running = 0;
	w->building = 0;
	w->pos = 0;
	w->wait = 0;
	w->passes++;
}

void kopt_window_close(struct kopt_window *w)
{
	memset(w, 0, sizeof(*w));
}

const char *kopt_window_action_name(enum kopt_window_action a)
{
	static const char *names[] = { "skip", "take", "open", "start",
				       "stop", "drop" };
	return (unsigned)a < sizeof(names) / sizeof(names[0]) ? names[a]
							     : "?";
}
