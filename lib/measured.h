#ifndef KOPT_MEASURED_H
#define KOPT_MEASURED_H

/*
 * What was measured for one version of a kernel, as the knowledge base
 * uses it: per trial entry of docs/kernels/<kernel>/results/<version>.json
 * (Documentation/results-format.md), the canonical metrics that triggers
 * read, the trial's b, s, t, the bottleneck, and the device facts the
 * register budget needs.  Reading only; the file is written by
 * `profile` and `verify`.
 *
 * kopt_measured_parse() reads the JSON text of one file; `label` names
 * it in messages ("error: <label>: ...").  A metric that is absent or
 * null stays unmeasured.  Free with kopt_measured_release().
 */

#include "buf.h"
#include "trigger.h"

struct kopt_measured_entry {
	char *trial;              /* NULL for an ad-hoc configuration */
	long b, s, t;
	struct kopt_metrics metrics;  /* b, s and t included */
	char *bottleneck;         /* NULL when not recorded */
	char *root_cause;
	char *device;
	int cc_major, cc_minor;   /* 0 when unknown */
	int threads;              /* per block of the dominant stage, or 0 */
	int replayed;
};

struct kopt_measured {
	char *kernel, *version, *parent;   /* parent NULL for the base */
	struct kopt_measured_entry *entries;
	size_t entries_nr, entries_alloc;
};

#define KOPT_MEASURED_INIT { NULL, NULL, NULL, NULL, 0, 0 }

/* 0, or KOPT_EINVALID with the problem printed. */
int kopt_measured_parse(struct kopt_measured *out, const char *text,
			size_t len, const char *label);
void kopt_measured_release(struct kopt_measured *m);

/* "decode (b=32, s=1, t=4096)" or "b=32, s=1, t=4096". */
void kopt_measured_entry_name(struct kopt_buf *out,
			      const struct kopt_measured_entry *e);
/* The entry of `m` with the same trial and b, s, t as `e`, or NULL. */
const struct kopt_measured_entry *
kopt_measured_match(const struct kopt_measured *m,
		    const struct kopt_measured_entry *e);

/* docs/kernels/<kernel>/results/<version>.json */
char *kopt_results_path(const char *kernel, const char *version);

#endif
