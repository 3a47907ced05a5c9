#ifndef KOPT_INJECT_WINDOW_H
#define KOPT_INJECT_WINDOW_H
/*
 * Which launches the Range Profiler takes, apart from CUPTI: the rules
 * of a window, so that they can be tested without a GPU.
 *
 * A window is the launches one pass covers.  It opens at a launch that
 * wants a sample and, in its first pass, takes in the launches right
 * after it while they want samples too (A B A B for two kernels and two
 * samples each), up to KOPT_INJECT_MAX_WINDOW; each launch is one range.
 * Every further pass starts at the next launch of the window's first
 * kernel and must see the same kernels in the same order: any other
 * launch inside it drops the window, and so does a first kernel that is
 * not launched again within max_wait other launches.
 *
 * The caller asks kopt_window_enter() at the entry of each launch call
 * and does what it answers, with CUPTI; for KOPT_WIN_STOP and
 * KOPT_WIN_DROP it then tells the window (kopt_window_stopped(),
 * kopt_window_close()) and asks again for the same launch.
 */
#include <stddef.h>
#include <stdint.h>

#define KOPT_INJECT_MAX_WINDOW 16

struct kopt_window_slot {
	const void *k;		/* the kernel (the caller's record) */
	uint64_t launch;	/* its launch number in the first pass */
	uint64_t last_launch;	/* ... in the latest pass */
};

struct kopt_window {
	struct kopt_window_slot slot[KOPT_INJECT_MAX_WINDOW];
	size_t n;		/* launches in each pass */
	size_t pos;		/* launches so far in the running pass */
	size_t passes;		/* passes stopped */
	int open;		/* a window exists */
	int building;		/* its first pass, still taking launches in */
	int running;		/* between the Start and the Stop of a pass */
	unsigned wait;		/* other launches since its last pass */
	double seconds;		/* host time in the profiler, all passes */
};

enum kopt_window_action {
	KOPT_WIN_SKIP,		/* the launch runs unprofiled */
	KOPT_WIN_TAKE,		/* the launch is a range of the running pass */
	KOPT_WIN_OPEN,		/* a window opens: Start a pass at the launch */
	KOPT_WIN_START,		/* Start the window's next pass at the launch */
	KOPT_WIN_STOP,		/* Stop the running pass before the launch */
	KOPT_WIN_DROP,		/* drop the window (Stop it first if running) */
};

/*
 * A launch of kernel k, its launch number `index`: `wants` whether it
 * may take a place in a window (warm-up over, samples still wanted),
 * `captured` whether it is being captured into a graph (it does not run
 * now).  Records TAKE, OPEN and START in the window.
 */
enum kopt_window_action kopt_window_enter(struct kopt_window *w,
					  const void *k, uint64_t index,
					  int wants, int captured,
					  unsigned max_wait);

/* The exit of a launch that was a range: KOPT_WIN_STOP when the pass
   is complete (the window full, or every launch of the pass seen). */
enum kopt_window_action kopt_window_exit(const struct kopt_window *w);

/* The running pass was stopped (collect the window when CUPTI says
   every pass is in). */
void kopt_window_stopped(struct kopt_window *w);

/* The window is collected or dropped: empty again. */
void kopt_window_close(struct kopt_window *w);

const char *kopt_window_action_name(enum kopt_window_action a);

#endif
