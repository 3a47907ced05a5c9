#include "parallel.h"

#include <pthread.h>
#include <unistd.h>

#include "banned.h"

#define KOPT_PARALLEL_MAX 8

struct work {
	size_t nr;
	size_t next;            /* the next item to take (atomic) */
	void (*fn)(size_t i, void *data);
	void *data;
};

static void *worker(void *arg)
{
	struct work *w = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->nr)
		w->fn(i, w->data);
	return NULL;
}

int kopt_parallel_threads(int setting)
{
	long n;

	if (setting > 0)
		return setting;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		return 1;
	return n > KOPT_PARALLEL_MAX ? KOPT_PARALLEL_MAX : (int)n;
}

void kopt_parallel(size_t nr, int threads, void (*fn)(size_t i, void *data),
		   void *data)
{
	struct work w = { nr, 0, fn, data };
	pthread_t tid[KOPT_PARALLEL_MAX];
	int started = 0, i;

	if (threads > KOPT_PARALLEL_MAX)
		threads = KOPT_PARALLEL_MAX;
	if (threads < 1)
		threads = 1;
	if ((size_t)threads > nr)
		threads = nr ? (int)nr : 1;
	for (i = 1; i < threads; i++) {
		if (pthread_create(&tid[started], NULL, worker, &w))
			break;
		started++;
	}
	worker(&w);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}
