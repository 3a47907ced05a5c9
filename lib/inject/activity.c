/*
 * Kernel durations from the CUPTI Activity API.
 *
 * CONCURRENT_KERNEL records carry the mangled name, grid, block,
 * registers, shared memory, start and end of each kernel execution; they
 * are filed per kernel (name, grid, block) with their correlation id so
 * that the report can put them back in launch order.  Executions that
 * the Range Profiler measured read start = end = 0: they are kept, with
 * no time, so that the durations line up with the launches.
 *
 * Buffers complete on a CUPTI thread (or in cuptiActivityFlushAll on the
 * caller's thread); only g.act_lock is taken here.
 */
#include <stdlib.h>
#include <string.h>

#include "inject.h"
#include "../banned.h"

#define BUFFER_SIZE (4u << 20)

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size,
				      size_t *max_records)
{
	*buffer = aligned_alloc(8, BUFFER_SIZE);
	*size = *buffer ? BUFFER_SIZE : 0;
	*max_records = 0;
}

static struct kopt_inject_execs *execs_of(const CUpti_ActivityKernel10 *k)
{
	uint32_t grid[3] = { (uint32_t)k->gridX, (uint32_t)k->gridY,
			     (uint32_t)k->gridZ };
	uint32_t block[3] = { (uint32_t)k->blockX, (uint32_t)k->blockY,
			      (uint32_t)k->blockZ };
	const char *name = k->name ? k->name : "?";
	uint64_t h = kopt_inject_key_hash(name, grid, block);
	struct kopt_inject_execs *e;

	e = kopt_inject_table_find(&g.execs, name, grid, block, h);
	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->key.name = strdup(name))) {
		free(e);
		return NULL;
	}
	memcpy(e->key.grid, grid, sizeof(grid));
	memcpy(e->key.block, block, sizeof(block));
	e->key.hash = h;
	e->regs = k->registersPerThread;
	e->smem_static = k->staticSharedMemory;
	e->smem_dynamic = k->dynamicSharedMemory;
	e->local_per_thread = k->localMemoryPerThread;
	e->cluster[0] = k->clusterX;
	e->cluster[1] = k->clusterY;
	e->cluster[2] = k->clusterZ;
	if (kopt_inject_table_add(&g.execs, e) < 0) {
		free(e->key.name);
		free(e);
		return NULL;
	}
	return e;
}

static void file_record(const CUpti_ActivityKernel10 *k)
{
	struct kopt_inject_execs *e = execs_of(k);
	uint64_t ns = k->end > k->start && k->start ? k->end - k->start : 0;

	g.act_records++;
	if (!e)
		return;
	e->count++;
	if (!ns)
		e->untimed++;
	if (e->n_d == e->alloc_d) {
		size_t alloc = e->alloc_d ? 2 * e->alloc_d : 64;
		struct kopt_inject_exec *d;
		if (alloc > g.cfg.max_durations)
			alloc = g.cfg.max_durations;
		if (alloc <= e->n_d)
			return; /* over the cap: counted, not kept */
		d = realloc(e->d, alloc * sizeof(*d));
		if (!d)
			return;
		e->d = d;
		e->alloc_d = alloc;
	}
	e->d[e->n_d].corr = k->correlationId;
	e->d[e->n_d].ns = ns;
	e->n_d++;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
				      uint8_t *buffer, size_t size,
				      size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	(void)size;
	pthread_mutex_lock(&g.act_lock);
	while (kc.cuptiActivityGetNextRecord(buffer, valid, &rec) ==
	       CUPTI_SUCCESS) {
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
		    rec->kind == CUPTI_ACTIVITY_KIND_KERNEL)
			file_record((const CUpti_ActivityKernel10 *)rec);
	}
	if (kc.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) ==
	    CUPTI_SUCCESS)
		g.act_dropped += dropped;
	pthread_mutex_unlock(&g.act_lock);
	free(buffer);
}

int kopt_inject_activity_start(void)
{
	CUptiResult r;

	r = kc.cuptiActivityRegisterCallbacks(buffer_requested,
					      buffer_completed);
	if (r != CUPTI_SUCCESS)
		return kopt_inject_cupti_fail("cuptiActivityRegisterCallbacks",
					      r);
	r = kc.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (r != CUPTI_SUCCESS)
		return kopt_inject_cupti_fail("cuptiActivityEnable", r);
	g.activity_on = 1;
	return 0;
}

/* Deliver every pending record.  Call with no lock held. */
void kopt_inject_activity_flush(void)
{
	CUptiResult r;

	if (!g.activity_on)
		return;
	r = kc.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (r != CUPTI_SUCCESS)
		kopt_inject_cupti_fail("cuptiActivityFlushAll", r);
}
