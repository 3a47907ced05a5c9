#ifndef KOPT_RESULTS_H
#define KOPT_RESULTS_H

/*
 * Results files: docs/kernels/<kernel>/results/<version>.json, what was
 * measured for one version of one kernel, one entry per trial
 * configuration.  Documentation/results-format.md is the schema; this
 * module is its only reader and writer.
 *
 * Calling sequence:
 *
 *	struct kopt_results r = KOPT_RESULTS_INIT;
 *	if (kopt_results_read_file(&r, path, "mla-decode", "v1"))
 *		return -1;                  (every problem already printed)
 *	e = kopt_results_find(&r, "decode", 32, 1, 4096);
 *	if (e && !kopt_results_metric(e, "dram_pct", &v)) ...
 *	kopt_results_release(&r);
 *
 * Writing: fill a struct kopt_results_entry (kopt_results_entry_init()),
 * hand it to kopt_results_put(), which replaces the entry of the same
 * identity or appends, then kopt_results_write() (atomic, through
 * lib/lockfile).
 *
 * Ownership: every string and array is owned by its struct and freed by
 * kopt_results_release() / kopt_results_entry_release(); pointers
 * returned by the lookups are borrowed from the results.  kopt_results_put()
 * moves the entry's contents into the results and leaves the entry empty.
 *
 * Invariants of a loaded struct kopt_results:
 * - schema == KOPT_RESULTS_SCHEMA, kernel and version are valid names;
 * - no two entries share an identity (trial, b_requested, s, t and the
 *   device: kopt_results_same_device());
 * - b, s, t, b_requested are positive; b_requested is b when the file
 *   has none;
 * - numbers are unrounded; a metric that was not measured is NAN (use
 *   kopt_results_has()), never 0;
 * - fields this version does not know are kept (`extra`) and written
 *   back unchanged, so an older git-kopt does not drop a newer one's data.
 *
 * Nothing here prints except through kopt_error(): the validators print
 * one "error: <label>: <json path>: <problem>" per bad field, then fail
 * with KOPT_EINVALID as a whole.
 */

#include <math.h>
#include <stddef.h>

#include "buf.h"

struct cJSON;

#define KOPT_RESULTS_SCHEMA 1

/* The canonical metrics of an entry (the names of expressions). */
enum kopt_metric {
	KOPT_METRIC_DURATION_US,
	KOPT_METRIC_TC_PCT,
	KOPT_METRIC_DRAM_PCT,
	KOPT_METRIC_OCC_PCT,
	KOPT_METRIC_L2_HIT_PCT,
	KOPT_METRIC_SPILL_BYTES,
	KOPT_METRIC_REGS,
	KOPT_METRIC_WAVES,
	KOPT_METRIC_TFLOPS,
	KOPT_METRIC_GBPS,
	KOPT_METRIC_ROOFLINE_PCT,
	KOPT_METRIC__NR
};

struct kopt_metric_info {
	const char *name;       /* "dram_pct": the key in JSON and expressions */
	const char *label;      /* "DRAM throughput" */
	const char *unit;       /* "%", "us", "TFLOP/s", "" ... */
	int higher_is_better;   /* 1, or 0 (duration, spills), or -1 (neither) */
	int integral;           /* stored as an integer (bytes, registers) */
};

/* Indexed by enum kopt_metric. */
extern const struct kopt_metric_info kopt_metric_infos[KOPT_METRIC__NR];
/* The metric named `name`, or -1 when it is not a canonical metric. */
int kopt_metric_from_name(const char *name);

static inline int kopt_results_has(double v)
{
	return !isnan(v);
}

/*
 * The device an entry was measured on.  Entries are per device: a
 * version measured on two GPUs keeps one entry per trial configuration
 * and device, told apart by `uuid` (the driver's, "GPU-xxxxxxxx-...") or,
 * in files written before uuids were recorded, by `name`.
 */
struct kopt_results_device {
	char *name;             /* "NVIDIA H200" */
	char *uuid;             /* "GPU-8c4f...", may be NULL */
	char *cc;               /* "9.0", may be NULL */
	long sms;               /* 0 when unknown */
	double sm_clock_mhz, mem_clock_mhz;
	double peak_tflops, peak_gbps;
	double measured_tflops, measured_gbps;  /* NAN when not calibrated */
	int clocks_locked;      /* clocks were locked for the measurement */
};

struct kopt_results_stats {
	double median, min, max, p10, p90;  /* NAN when absent */
	long n;
};

/* One distinct kernel of the run; per-stage numbers NAN when absent. */
struct kopt_results_stage {
	char *name;
	long grid[3], block[3];
	long launches;
	struct kopt_results_stats duration_us;
	double tc_pct, dram_pct, dram_bytes, occ_pct, l2_hit_pct;
	double spill_bytes, regs, smem_bytes, waves;
	/*
	 * NULL when the hardware metrics were measured; else why not, in
	 * words ("launched from a CUDA graph", "too few launches (3) ...").
	 * A stage with a reason has no tc/dram/occ/l2 figures, and nothing
	 * is concluded from them.
	 */
	char *not_measured;
	/*
	 * Its hardware metrics come from kernel replay (it was launched too
	 * few times to be sampled otherwise): CUPTI restored the kernel's
	 * memory before each pass, so its L2 hit rate and DRAM traffic are
	 * not those of the program's own cache state.  Shown, and said;
	 * no L2 conclusion is drawn from them.  "replay": "kernel".
	 */
	int kernel_replay;
};

struct kopt_results_opportunity {
	char *name;
	double est_gain_pct;    /* NAN when not estimated */
	char *trigger;          /* "waves=0.97", may be NULL */
	char *detail;           /* knowledge file, may be NULL */
};

struct kopt_results_entry {
	char *trial;            /* NULL for an ad-hoc --config */
	long b, s, t;           /* the configuration that ran */
	long b_requested;       /* what was asked (b halves on out-of-memory) */
	char *dtype;            /* "bfloat16", may be NULL */
	char *date;             /* ISO 8601 UTC, may be NULL */
	char *tool_version;
	char *tree;             /* git tree id of the sources, may be NULL */
	int replayed;           /* numbers from a recorded capture */
	char *replay_source;    /* the capture, may be NULL */
	/*
	 * Written by hand in the devlog, not measured (lib/numbers); never
	 * stored in a results file.
	 */
	int from_devlog;
	struct kopt_results_device device;
	struct kopt_results_stage *stages;
	size_t stages_nr, stages_alloc;
	double metrics[KOPT_METRIC__NR];  /* by enum kopt_metric, NAN absent */
	double spread_pct;      /* run-to-run spread of duration, NAN absent */
	char *bottleneck;       /* "Memory-bound", may be NULL */
	char *root_cause;
	struct kopt_results_opportunity *opportunities;
	size_t opportunities_nr, opportunities_alloc;
	struct cJSON *extra;    /* unknown keys, kept for writing back */
};

struct kopt_results {
	int schema;
	char *kernel;
	char *version;
	char *parent;           /* NULL for the base version */
	struct kopt_results_entry *entries;
	size_t entries_nr, entries_alloc;
	struct cJSON *extra;
};

#define KOPT_RESULTS_INIT { KOPT_RESULTS_SCHEMA, NULL, NULL, NULL, \
	NULL, 0, 0, NULL }

/* Every number NAN, every pointer NULL. */
void kopt_results_entry_init(struct kopt_results_entry *e);
void kopt_results_entry_release(struct kopt_results_entry *e);
void kopt_results_stage_init(struct kopt_results_stage *st);
void kopt_results_release(struct kopt_results *r);

/*
 * Parse results text.  `label` names the file in messages.  When
 * `kernel` or `version` is not NULL the file must name that kernel and
 * version.  Returns 0, KOPT_EINVALID (each problem printed, with
 * "<label>:<line>:<col>" for text that is not JSON and the JSON path of
 * each bad field otherwise).  *out is left empty on failure.
 */
int kopt_results_parse(struct kopt_results *out, const char *data,
		       size_t len, const char *label, const char *kernel,
		       const char *version);
/*
 * Read a results file; KOPT_ENOTFOUND (nothing printed) when it does not
 * exist, otherwise as kopt_results_parse() with the path as label.
 */
int kopt_results_read_file(struct kopt_results *out, const char *path,
			   const char *kernel, const char *version);

/*
 * What the views read of a results file (the fields
 * kopt_results_summary() keeps: no stages, opportunities, provenance or
 * unknown members), for a file kopt_results_parse() accepts, with the
 * same values; otherwise its errors.  The file is checked whole, as
 * kopt_results_parse() checks it, without building a JSON tree.
 */
int kopt_results_parse_view(struct kopt_results *out, const char *data,
			    size_t len, const char *label, const char *kernel,
			    const char *version);
/*
 * The quick reading behind kopt_results_parse_view(), nothing printed:
 * 0, or KOPT_EINVALID for text it leaves to kopt_results_parse() (every
 * file that one rejects, and valid files outside the plain form it
 * takes: escapes in strings, a known member twice, deep nesting...).
 */
int kopt_results_scan(struct kopt_results *out, const char *data,
		      size_t len, const char *kernel, const char *version);

/*
 * The same from a parsed JSON value (borrowed), for callers that hold
 * one already (a cache).
 */
int kopt_results_from_json(struct kopt_results *out, const struct cJSON *root,
			   const char *label, const char *kernel,
			   const char *version);
/* As a JSON value (the caller frees it with cJSON_Delete()). */
struct cJSON *kopt_results_to_json(const struct kopt_results *r);

/*
 * What the views need of validated results (kernel, version, parent, and
 * per entry the trial, configuration, replayed, from_devlog, device name
 * and uuid, bottleneck, dtype, spread and metrics), as lines of text for lib/cache, and back:
 * results without stages, opportunities, provenance or unknown members.
 * kopt_results_from_summary() returns KOPT_EINVALID (nothing printed) on
 * damaged text.
 */
void kopt_results_summary(struct kopt_buf *out, const struct kopt_results *r);
/*
 * Make `r` what kopt_results_from_summary() reads back from its summary,
 * in place, without the text: 0; or -1, `r` unchanged, when a field
 * would not read back (the caller then goes through the text).
 * kopt_results_slim_ok() is 1 when it would succeed.
 */
int kopt_results_slim(struct kopt_results *r);
int kopt_results_slim_ok(const struct kopt_results *r);
int kopt_results_from_summary(struct kopt_results *out, const char *data,
			      size_t len);

/* Serialise (deterministic key order, unrounded numbers, final newline). */
void kopt_results_format(struct kopt_buf *out, const struct kopt_results *r);
/* Write atomically through lib/lockfile, creating parent directories. */
int kopt_results_write(const struct kopt_results *r, const char *path);

/*
 * The entry of that identity: trial (NULL: an ad-hoc entry; use
 * kopt_results_find_config() to ignore the trial), and the configuration
 * asked for; `b` also matches an entry whose b was halved from it.
 */
struct kopt_results_entry *kopt_results_find(const struct kopt_results *r,
					     const char *trial, long b,
					     long s, long t);
/* The first entry measured for `trial`, whatever its configuration. */
struct kopt_results_entry *
kopt_results_find_trial(const struct kopt_results *r, const char *trial);
/* The first entry at b/s/t (b as asked or as run), whatever its trial. */
struct kopt_results_entry *
kopt_results_find_config(const struct kopt_results *r, long b, long s,
			 long t);
/*
 * The entry for the same trial and configuration as `like`, measured on
 * the same device (kopt_results_same_entry_device()), or NULL.
 */
struct kopt_results_entry *
kopt_results_find_like(const struct kopt_results *r,
		       const struct kopt_results_entry *like);

/*
 * How messages name a device: "NVIDIA H200 (GPU-5efce4fb-...)", the
 * uuid where there is one (two GPUs of one model are two devices),
 * "an unnamed device" when nothing is known.  Appended to `out`.
 */
void kopt_results_device_label(struct kopt_buf *out,
			       const struct kopt_results_device *d);

/*
 * An entry of `r` for the trial and configuration of `like` that was
 * measured on another device than like's; NULL when there is none.  What
 * a verdict cannot compare with, named so that the user knows why.
 */
const struct kopt_results_entry *
kopt_results_find_elsewhere(const struct kopt_results *r,
			    const struct kopt_results_entry *like);

/*
 * Whether two device names are the same device: equal ignoring case,
 * spaces and a leading "NVIDIA" ("NVIDIA H200" and "h200" are one).  A
 * NULL or empty name matches any.
 */
int kopt_results_same_device(const char *a, const char *b);
/*
 * Whether the entries of `r` name more than one device (by
 * kopt_results_same_device() against the first).
 */
int kopt_results_several_devices(const struct kopt_results *r);
/*
 * Whether two entries were measured on the same device: the same uuid
 * when both have one, else kopt_results_same_device() of their names.
 */
int kopt_results_same_entry_device(const struct kopt_results_device *a,
				   const struct kopt_results_device *b);

/*
 * Add `e` to `r`, replacing the entry of the same identity (trial,
 * configuration and device; kept at its position) or appending: a
 * measurement on another device never replaces one.  Moves e's
 * contents; `e` is left initialised.
 */
void kopt_results_put(struct kopt_results *r, struct kopt_results_entry *e);
/* Deep copy (for keeping an entry while the source is released). */
void kopt_results_entry_copy(struct kopt_results_entry *out,
			     const struct kopt_results_entry *src);

/*
 * Look up a canonical metric of an entry by name, for expressions.
 * Returns 0 and sets *out; KOPT_ENOTFOUND when the metric was not
 * measured; KOPT_EINVALID when `name` is not a canonical metric.
 * Nothing printed.
 */
int kopt_results_metric(const struct kopt_results_entry *e, const char *name,
			double *out);
/*
 * The same as a kopt_expr_lookup_fn (`data` is the entry): unknown names
 * and unmeasured metrics are both KOPT_ENOTFOUND, as kopt_expr_eval()
 * expects.
 */
int kopt_results_expr_lookup(void *data, const char *name, double *out);

/*
 * The stage with the largest median duration (the one whose tc/dram/occ
 * the metrics report), or NULL when there are no stages.
 */
const struct kopt_results_stage *
kopt_results_dominant_stage(const struct kopt_results_entry *e);
/*
 * Fill the entry's metrics from its stages where they are absent:
 * duration_us = sum of medians, per-stage figures of the dominant stage,
 * spread_pct from its p10/p90.  tflops/gbps/roofline need the kernel's
 * flops/bytes and are left to the caller.
 */
void kopt_results_derive_metrics(struct kopt_results_entry *e);

/* "decode (b=32, s=1, t=4096)" or "b=32, s=1, t=4096" for ad-hoc entries. */
void kopt_results_describe_entry(struct kopt_buf *out,
				 const struct kopt_results_entry *e);

#endif
