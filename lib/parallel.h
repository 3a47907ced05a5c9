#ifndef KOPT_PARALLEL_H
#define KOPT_PARALLEL_H

/*
 * Independent pieces of work on several threads, as git's preload-index
 * and parallel checkout do: the views that read every kernel read them
 * on the machine's cores.
 *
 *	static void one(size_t i, void *data) { ...item i... }
 *	kopt_parallel(nr, kopt_parallel_threads(cfg->threads), one, &d);
 *
 * The calling thread is one of the workers; each i in [0, nr) is taken
 * once, by whichever thread is free, so the order in which items finish
 * is not theirs: a worker keeps what it reports in a catch
 * (kopt_error_catch() with `replay` set) and the caller replays the
 * catches in item order once kopt_parallel() has returned.  Code a
 * worker runs must be reentrant: lib's readers of devlogs, results and
 * caches are (their pools and arenas are per thread), the repository's
 * libgit2 objects only for reading.
 */

#include <stddef.h>

/*
 * How many threads to use: `setting` (kopt.threads) when it is positive,
 * else one per online CPU, at most 8.
 */
int kopt_parallel_threads(int setting);

/*
 * Run fn(i, data) for every i in [0, nr) on up to `threads` threads,
 * this one among them, and return once every call has returned.  A
 * thread that cannot be started leaves its share to the others.
 */
void kopt_parallel(size_t nr, int threads, void (*fn)(size_t i, void *data),
		   void *data);

#endif
