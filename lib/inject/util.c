/*
 * Small pieces shared by the injection library: the kernel tables, the
 * notes (errors and warnings of the output file), the clock and the
 * optional log.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inject.h"
#include "../banned.h"

double kopt_inject_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void kopt_inject_log(const char *fmt, ...)
{
	va_list ap;
	if (!g.cfg.verbose)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "kopt-inject: [%.3f] ",
		g.t0 > 0 ? kopt_inject_now() - g.t0 : 0.0);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- tables ---- */

int kopt_inject_device_uuid(CUdevice dev, char out[48])
{
	CUuuid u;
	const unsigned char *b = (const unsigned char *)u.bytes;

	if (cuDeviceGetUuid(&u, dev) != CUDA_SUCCESS)
		return -1;
	snprintf(out, 48, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
		 b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
	return 0;
}

uint64_t kopt_inject_key_hash(const char *name, const uint32_t grid[3],
			      const uint32_t block[3])
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	for (int i = 0; i < 3; i++) {
		h = (h ^ grid[i]) * 1099511628211ull;
		h = (h ^ block[i]) * 1099511628211ull;
	}
	return h;
}

static int key_equal(const struct kopt_inject_key *k, const char *name,
		     const uint32_t grid[3], const uint32_t block[3],
		     uint64_t hash)
{
	return k->hash == hash && !memcmp(k->grid, grid, sizeof(k->grid)) &&
	       !memcmp(k->block, block, sizeof(k->block)) &&
	       !strcmp(k->name, name);
}

void *kopt_inject_table_find(const struct kopt_inject_table *t,
			     const char *name, const uint32_t grid[3],
			     const uint32_t block[3], uint64_t hash)
{
	size_t mask = t->n_slot - 1;

	if (!t->n_slot)
		return NULL;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		size_t s = t->slot[i];
		if (!s)
			return NULL;
		if (key_equal(t->items[s - 1], name, grid, block, hash))
			return t->items[s - 1];
	}
}

static void place(size_t *slot, size_t n_slot, uint64_t hash, size_t index)
{
	size_t i = hash & (n_slot - 1);
	while (slot[i])
		i = (i + 1) & (n_slot - 1);
	slot[i] = index + 1;
}

int kopt_inject_table_add(struct kopt_inject_table *t, void *item)
{
	if (t->n == t->alloc) {
		size_t alloc = t->alloc ? 2 * t->alloc : 64;
		void **items = realloc(t->items, alloc * sizeof(*items));
		if (!items)
			return -1;
		t->items = items;
		t->alloc = alloc;
	}
	if (2 * (t->n + 1) > t->n_slot) {
		size_t n_slot = t->n_slot ? 2 * t->n_slot : 128;
		size_t *slot = calloc(n_slot, sizeof(*slot));
		if (!slot)
			return -1;
		for (size_t i = 0; i < t->n; i++)
			place(slot, n_slot,
			      ((struct kopt_inject_key *)t->items[i])->hash, i);
		free(t->slot);
		t->slot = slot;
		t->n_slot = n_slot;
	}
	t->items[t->n] = item;
	place(t->slot, t->n_slot, ((struct kopt_inject_key *)item)->hash, t->n);
	t->n++;
	return 0;
}

/* ---- notes ---- */

static void note_add(struct kopt_inject_notes *list, const char *code,
		     const char *call, int result, const char *fmt, va_list ap)
{
	char msg[1024];
	struct kopt_inject_note *n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	pthread_mutex_lock(&g.note_lock);
	for (size_t i = 0; i < list->n; i++) {
		n = &list->v[i];
		if (!strcmp(n->code, code) &&
		    !strcmp(n->call, call ? call : "") &&
		    n->result == result && !strcmp(n->message, msg)) {
			n->count++;
			goto done;
		}
	}
	if (list->n == list->alloc) {
		size_t alloc = list->alloc ? 2 * list->alloc : 8;
		struct kopt_inject_note *v;
		v = realloc(list->v, alloc * sizeof(*v));
		if (!v)
			goto done;
		list->v = v;
		list->alloc = alloc;
	}
	n = &list->v[list->n++];
	memset(n, 0, sizeof(*n));
	snprintf(n->code, sizeof(n->code), "%s", code);
	snprintf(n->call, sizeof(n->call), "%s", call ? call : "");
	n->result = result;
	n->message = strdup(msg);
	if (!n->message) {
		list->n--;
		goto done;
	}
	n->count = 1;
	kopt_inject_log("%s: %s", code, msg);
done:
	pthread_mutex_unlock(&g.note_lock);
}

void kopt_inject_error(const char *code, const char *call, int result,
		       const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	note_add(&g.errors, code, call, result, fmt, ap);
	va_end(ap);
}

void kopt_inject_warning(const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	note_add(&g.warnings, code, NULL, 0, fmt, ap);
	va_end(ap);
}

const char *kopt_inject_code_of(CUptiResult r)
{
	switch (r) {
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
		return "counters-not-permitted";
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		return "cupti-subscriber-exists";
	case CUPTI_ERROR_HARDWARE_BUSY:
		return "counters-busy";
	case CUPTI_ERROR_NOT_COMPATIBLE:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_NOT_SUPPORTED:
		return "counters-unsupported";
	default:
		return "cupti-error";
	}
}

int kopt_inject_cupti_fail(const char *call, CUptiResult r)
{
	const char *code = kopt_inject_code_of(r);
	const char *what;

	if (!strcmp(code, "counters-not-permitted"))
		what = "the GPU performance counters are not permitted to this "
		       "user (NVreg_RestrictProfilingToAdminUsers)";
	else if (!strcmp(code, "cupti-subscriber-exists"))
		what = "another profiler (Nsight, a framework's profiler) is "
		       "already subscribed to CUPTI in this process";
	else if (!strcmp(code, "counters-busy"))
		what = "the GPU performance counters are in use by another "
		       "profiler";
	else if (!strcmp(code, "counters-unsupported"))
		what = "this GPU or configuration does not support profiling";
	else
		what = "CUPTI failed";
	kopt_inject_error(code, call, (int)r, "%s: %s returned %d (%s)", what,
			  call, (int)r, kopt_inject_cupti_result_name(r));
	return -1;
}
