#ifndef KOPT_INJECT_INJECT_H
#define KOPT_INJECT_INJECT_H

/*
 * libkopt-inject: per-kernel durations and hardware metrics of an
 * unmodified CUDA program, written to one JSON file (README.md beside
 * this file describes the variables and the file).
 *
 * The CUDA driver loads the library through CUDA_INJECTION64_PATH and
 * calls InitializeInjection() during cuInit.  From then on:
 *
 *   - every kernel execution is timed by the CUPTI Activity API
 *     (activity.c), which costs the program almost nothing;
 *   - every kernel launch call passes through a driver callback
 *     (inject.c) that counts it per distinct kernel (mangled name, grid,
 *     block) and, for a few launches after the warm-up, makes it one
 *     range of a window of the CUPTI Range Profiler (rangeprof.c).
 *     Only those launches are slowed down; all others run as they would
 *     without the library;
 *   - at exit (or when the context is destroyed) the two views are
 *     merged and written (report.c).
 *
 * Threads.  Launch callbacks run on the program's threads and take
 * g.lock.  The set-up helper thread works on its own copy of the Range
 * Profiler state and takes g.lock only to publish it (signalling
 * g.rp_cond); a launch that wants a sample before then waits on it.
 * Activity buffers complete on a CUPTI thread, or inside
 * cuptiActivityFlushAll on the caller's, and take g.act_lock only; they
 * touch nothing else, so a buffer completing while a callback holds
 * g.lock cannot deadlock.  Notes (errors and warnings) have their own
 * lock.  The report takes g.lock, then g.act_lock.
 *
 * Nothing here prints, except with KOPT_INJECT_VERBOSE=1 on stderr:
 * the program's own output stays untouched.  Failures become entries in
 * the output's "errors" list; the program always runs to its end.
 */

#include <pthread.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "cupti-load.h"
#include "window.h"

#define KOPT_INJECT_FORMAT "kopt-inject"
#define KOPT_INJECT_FORMAT_VERSION 1
#define KOPT_INJECT_MAX_METRICS 64
/* moves of the profiler from one context to another in a process */
#define KOPT_INJECT_MAX_MOVES 16
#define KOPT_INJECT_MAX_FILTERS 16

enum kopt_inject_replay {
	/* each pass of a sample on its own launch of the same kernel */
	KOPT_INJECT_REPLAY_LAUNCH,
	/* all passes inside one launch call (CUPTI saves, restores memory) */
	KOPT_INJECT_REPLAY_KERNEL,
};

struct kopt_inject_config {
	char *out;		/* output path, %p expanded */
	unsigned warmup;	/* launches of a kernel never profiled */
	unsigned samples;	/* profiled launches (samples) per kernel */
	unsigned max_kernels;	/* distinct kernels that get metrics */
	size_t max_durations;	/* durations kept per kernel */
	unsigned max_wait;	/* launches a multi-pass sample may wait */
	enum kopt_inject_replay replay;
	char *metrics_buf;
	const char *metrics[KOPT_INJECT_MAX_METRICS];
	size_t n_metrics;	/* 0: durations only */
	char *filter_buf;
	const char *filter[KOPT_INJECT_MAX_FILTERS];
	size_t n_filter;	/* 0: every kernel may be profiled */
	int verbose;
	int early;		/* set up at context creation, on a thread */
	int warm_start;		/* ... and pay the first Start there too:
				   1 always, 2 if nothing was launched yet */
	char *cache;		/* KOPT_INJECT_CACHE: where the counter
				   availability image is kept, or NULL */
	int unroll;		/* a first run launches graphs node by node
				   until their kernels have their samples */
	char *plan;		/* KOPT_INJECT_FIRST_RUN, or NULL */
};


/* The part of a kernel record that the tables key on. */
struct kopt_inject_key {
	char *name;		/* mangled, owned */
	uint32_t grid[3];
	uint32_t block[3];
	uint64_t hash;
};

/* Kernels in first-seen order, found by key. */
struct kopt_inject_table {
	void **items;		/* each starts with a struct kopt_inject_key */
	size_t n, alloc;
	size_t *slot;		/* open addressing: index + 1, 0 = empty */
	size_t n_slot;
};

/*
 * The plan of a second run (KOPT_INJECT_FIRST_RUN, inject.c) names the
 * kernels that the first run of the same program launched too few times
 * to get past the warm-up, with their launch counts there.  Each gets
 * one sample, in a window of its own: in launch replay (one pass per
 * launch) from its first launch on while it has launches enough left
 * for every pass; a kernel launched fewer times than there are passes
 * in kernel replay (every pass inside its one launch call, CUPTI saving
 * and restoring memory).  A kernel at the last launch where its sample
 * can begin takes the profiler from a window that waits for its next
 * pass.  With a plan, kernels it does not name are only timed.
 */
struct kopt_inject_plan_item {
	struct kopt_inject_key key;
	uint64_t calls;		/* its launch calls in the first run (of a
				   graph's kernel: its executions too) */
	int graph;		/* the first run saw it only in graphs */
};

/* A device's UUID as nvidia-smi writes it ("GPU-xxxxxxxx-..."); 0, or
   -1 with out untouched. */
int kopt_inject_device_uuid(CUdevice dev, char out[48]);
uint64_t kopt_inject_key_hash(const char *name, const uint32_t grid[3],
			      const uint32_t block[3]);
void *kopt_inject_table_find(const struct kopt_inject_table *t,
			     const char *name, const uint32_t grid[3],
			     const uint32_t block[3], uint64_t hash);
/* Takes ownership of item (whose key is filled in); -1 out of memory. */
int kopt_inject_table_add(struct kopt_inject_table *t, void *item);

/*
 * Graphs launched node by node (graphs.c).  In a second run whose plan
 * names kernels the first run saw only inside CUDA graphs, a graph made
 * only of kernel, memset, memcpy, empty, event record, event wait and
 * child graph nodes, one of whose kernels the plan names, is read when it
 * is instantiated: its nodes are copied (a kernel's function, dimensions,
 * cluster shape and parameter values; a memset's or memcpy's parameters;
 * an event node's event), in an order its edges allow, a child graph's
 * own nodes at its place, and its kernels, memsets and copies (a child
 * graph's too) are disabled in the executable graph.  Each launch of that
 * graph then launches the copies on the graph's stream, the kernels as
 * ordinary launches that the windows sample, and records and waits for
 * the events at their places, before the emptied graph itself (whose
 * event nodes, which cannot be disabled, record and wait once more after
 * the copies: later than the program asked, never earlier).  The program
 * computes what it computed: the same kernels, with the same parameters,
 * in an order the graph allows, on the same stream.  Only the graph's own
 * concurrency is lost, in a run whose durations are not kept.  Changes to
 * the executable graph (kernel, memset, memcpy and event node parameters,
 * an update from another graph) are followed; a child graph node given
 * new parameters ends it (the graph runs as a graph again).
 */
struct kopt_inject_gnode {
	CUgraphNode node;	/* in the graph the executable was made from */
	CUgraphNodeType type;	/* kernel, memset, memcpy, event record or
				   event wait */
	CUDA_MEMSET_NODE_PARAMS memset;
	CUDA_MEMCPY3D memcpy;
	CUevent event;		/* an event node's */
	CUfunction f;
	char *name;		/* mangled; NULL but for a kernel */
	uint32_t grid[3], block[3], smem;
	uint32_t cluster[3];	/* 0: no cluster */
	int cooperative;
	unsigned char *args;	/* the parameters' values, copied */
	void **argv;		/* one pointer into args per parameter */
	size_t n_args;
	int use_extra;		/* args is one buffer of extra_size bytes */
	size_t extra_size;
};

struct kopt_inject_unrolled {
	CUgraphExec exec;
	CUgraph source;		/* the graph it was instantiated from */
	int source_gone;	/* ... destroyed since */
	int sampled;		/* first run: its kernels have their samples;
				   launched as a graph again from its next
				   launch */
	struct kopt_inject_gnode *nodes;
	size_t n;
};

/*
 * Read a graph's nodes in an order its edges allow, child graphs opened;
 * 0, or -1 with why the graph cannot be launched node by node (another
 * node type, an edge with data, a parameter that cannot be read).
 */
int kopt_inject_graph_read(CUgraph graph, struct kopt_inject_unrolled *u,
			   char *why, size_t len);
void kopt_inject_graph_free(struct kopt_inject_unrolled *u);
/* A node type in words ("memset", "child graph"), and the driver call
   that launches its copy. */
const char *kopt_inject_gnode_kind(CUgraphNodeType t);
const char *kopt_inject_gnode_call(CUgraphNodeType t);
/* Whether a node of this type is disabled in the executable graph. */
int kopt_inject_gnode_disables(CUgraphNodeType t);
/*
 * Enable (on) or disable the nodes of u that are disabled in exec.
 * Enabling goes on past a failure; a failure to disable enables again
 * the nodes disabled before it and is returned.
 */
CUresult kopt_inject_graph_enable(CUgraphExec exec,
				  const struct kopt_inject_unrolled *u,
				  unsigned on);
/* A kernel node's copy from its parameters; 0, or -1 with why. */
int kopt_inject_gnode_set(struct kopt_inject_gnode *n,
			  const CUDA_KERNEL_NODE_PARAMS *p, char *why,
			  size_t len);
/* Launch a node's copy (a kernel, a memset, a memcpy, an event record or
   wait) on stream. */
CUresult kopt_inject_gnode_launch(const struct kopt_inject_gnode *n,
				  CUstream stream);

/* One profiled sample: a launch, or `passes` launches in launch replay. */
struct kopt_inject_sample {
	uint64_t launch;	/* launch index (per kernel), first pass */
	uint64_t last_launch;	/* ... of the last pass */
	double seconds;		/* its share of its window's host time */
	unsigned window;	/* launches in its window (each pass) */
	int kernel_replay;	/* every pass inside one launch call */
	double *values;		/* one per profiler metric; NAN = none */
	const char **rejected;	/* per metric: why its value is impossible */
};

/* A kernel as seen by the launch callbacks. */
struct kopt_inject_kernel {
	struct kopt_inject_key key;
	uint64_t calls;		/* launch calls */
	uint32_t smem_dynamic;
	int regs, smem_static, local_bytes, blocks_per_sm; /* -1 unknown */
	int eligible;		/* passes the filter, -1 not asked yet */
	struct kopt_inject_sample *samples;
	size_t n_samples;
	unsigned failed;	/* samples abandoned or rejected whole */
	unsigned planned;	/* its launches in the open window */
	uint64_t calls_other_ctx; /* launch calls on another context */
	unsigned ctx_refused;	/* ... that wanted a sample the profiler
				   could not move to (another device, or
				   KOPT_INJECT_MAX_MOVES) */
	uint64_t calls_captured;  /* launch calls captured into a graph */
	uint64_t calls_unrolled;  /* first run: launches the library made
				     of a graph's node (no program call) */
	int in_plan;		/* the plan names it */
	uint64_t plan_calls;	/* ... launched this often in the first run */
	int plan_kernel_replay;	/* its next sample in kernel replay */
};

/* One execution's time, from the Activity API. */
struct kopt_inject_exec {
	uint32_t corr;		/* correlation id: launch order */
	uint64_t ns;		/* 0: no time (profiled launch) */
};

/* A kernel as seen by the Activity API. */
struct kopt_inject_execs {
	struct kopt_inject_key key;
	int regs, smem_static, smem_dynamic;
	uint32_t local_per_thread;
	uint32_t cluster[3];
	uint64_t count;		/* executions */
	uint64_t untimed;	/* executions with no time */
	struct kopt_inject_exec *d;
	size_t n_d, alloc_d;	/* kept; count - n_d were dropped */
};

struct kopt_inject_device {
	int known;
	CUdevice dev;
	char name[256];
	char uuid[48];		/* GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx */
	char chip[64];
	int cc_major, cc_minor;
	int sms;
	int sm_clock_khz, mem_clock_khz, mem_bus_bits;
	int l2_bytes, smem_per_sm, regs_per_sm, threads_per_sm;
	size_t memory_bytes;
	int driver_version;
};

/* Range Profiler state (rangeprof.c). */
struct kopt_inject_rp {
	int state;		/* KOPT_INJECT_RP_* */
	CUcontext ctx;
	uint32_t device;	/* CUPTI's device index of ctx */
	char chip[64];
	uint8_t *avail;
	int avail_kept;		/* the image of an earlier run (avail.h) */
	char avail_key[192];	/* what it was kept under, or "" */
	CUpti_Profiler_Host_Object *host;
	const char *metrics[KOPT_INJECT_MAX_METRICS];
	size_t n_metrics;	/* names the chip knows */
	uint8_t *config;
	size_t config_size;
	size_t passes;
	CUpti_RangeProfiler_Object *obj;
	uint8_t *cdata;
	size_t cdata_size;
	CUpti_ProfilerReplayMode replay;
	int running;		/* between Start and Stop */
	size_t pass;		/* passes done in the sample in progress */
	double setup_s;
};

/* Switch between user and kernel replay between windows. */
int kopt_inject_rp_set_replay(struct kopt_inject_rp *rp,
			      enum kopt_inject_replay replay);

enum {
	KOPT_INJECT_RP_OFF = 0,	/* not set up yet */
	KOPT_INJECT_RP_READY,
	KOPT_INJECT_RP_FAILED,
	KOPT_INJECT_RP_DONE,	/* disabled at the end */
	KOPT_INJECT_RP_PREPARING, /* being set up on the helper thread */
};

int kopt_inject_rp_setup(struct kopt_inject_rp *rp, CUcontext ctx,
			 const char *const *metrics, size_t n_metrics,
			 enum kopt_inject_replay replay);

/*
 * Pay CUPTI's first Start (about 0.2 s) now, with no launch in a range,
 * and leave the profiler ready for a window; 0, or -1 (FAILED).
 */
int kopt_inject_rp_warm(struct kopt_inject_rp *rp);

/*
 * Move a set-up profiler (READY, or DONE after its context went away) to
 * another context of the same device: a new profiler object there, the
 * host object and config image kept.  0; 1 when ctx is on another
 * device (nothing changed); -1 on failure (the profiler is FAILED).
 */
int kopt_inject_rp_move(struct kopt_inject_rp *rp, CUcontext ctx);
int kopt_inject_rp_start(struct kopt_inject_rp *rp);
/* *all_passes: 1 when the sample has all its passes. */
int kopt_inject_rp_stop(struct kopt_inject_rp *rp, int *all_passes);
/*
 * Decode the finished window of n launches into values[n][n_metrics]
 * (NAN where none); ready for the next window.
 */
int kopt_inject_rp_collect(struct kopt_inject_rp *rp, size_t n,
			   double *values);
/* Drop a sample that will not be finished; ready for the next. */
int kopt_inject_rp_reset(struct kopt_inject_rp *rp);
void kopt_inject_rp_disable(struct kopt_inject_rp *rp);
/* A profiler set up from a kept counter availability image failed: the
   image is dropped, for the next run to read it again. */
void kopt_inject_rp_forget_avail(struct kopt_inject_rp *rp);


/* Notes: the output's "errors" and "warnings". */
struct kopt_inject_note {
	char code[48];		/* stable, e.g. "counters-not-permitted" */
	char call[64];		/* the CUPTI or driver call, or "" */
	int result;		/* its result code, or 0 */
	char *message;
	unsigned count;		/* how many times it happened */
};

struct kopt_inject_notes {
	struct kopt_inject_note *v;
	size_t n, alloc;
};

/*
 * Record an error (something the user must act on: a missing CUPTI,
 * counters not permitted...) or a warning (a value rejected, a sample
 * abandoned).  The same code and call again only counts up.
 */
void kopt_inject_error(const char *code, const char *call, int result,
		       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void kopt_inject_warning(const char *code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The code for a failed CUPTI call: "counters-not-permitted", ... */
const char *kopt_inject_code_of(CUptiResult r);
/* Record a failed CUPTI call as an error; returns -1. */
int kopt_inject_cupti_fail(const char *call, CUptiResult r);

/* Activity API (activity.c). */
int kopt_inject_activity_start(void);
void kopt_inject_activity_flush(void);

/* Everything, in one place: see the lock rules above. */
struct kopt_inject_state {
	pthread_mutex_t lock;
	int initialized;
	int finished;		/* the report is written or being written */
	pid_t pid;		/* the process that initialised */
	double t0;		/* wall clock at InitializeInjection */
	struct kopt_inject_config cfg;
	CUpti_SubscriberHandle sub;
	int subscribed;
	int cupti_loaded;
	struct kopt_inject_device device;

	/* launch side, under lock */
	struct kopt_inject_table kernels;
	struct kopt_inject_rp rp;
	struct kopt_window win;	/* window.h */
	int win_kernel_replay;	/* the open window is sampled in kernel replay */
	struct kopt_inject_plan_item *plan;
	size_t n_plan;
	size_t plan_passes;	/* passes of the first run's metric set */
	int plan_active;	/* a plan was given (even an empty one) */
	struct cJSON *first_run; /* the first run's capture, to merge */
	unsigned kernels_profiled;
	uint64_t calls;		/* every launch call */
	uint64_t calls_other_ctx;
	unsigned ctx_moves;	/* the profiler moved to another context */
	uint64_t graph_launches;	/* cuGraphLaunch calls */
	size_t plan_graphs;	/* kernels of the plan seen only in graphs */
	struct kopt_inject_unrolled *unrolled;	/* graphs launched node
						   by node */
	size_t n_unrolled;
	uint64_t node_launches;	/* launches made for their nodes */
	double profile_s;	/* host time inside profiled launches */
	/* early set-up: the profiler is set up on a helper thread as soon
	   as the first context exists, while the program starts up */
	pthread_cond_t rp_cond;	/* signalled when PREPARING ends */
	double setup_wait_s;	/* time launches waited for it */

	/* activity side, under act_lock */
	pthread_mutex_t act_lock;
	int activity_on;
	struct kopt_inject_table execs;
	uint64_t act_records, act_dropped;

	pthread_mutex_t note_lock;
	struct kopt_inject_notes errors, warnings;
};

extern struct kopt_inject_state g;

double kopt_inject_now(void);
void kopt_inject_log(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Write the output file (report.c); 0 or -1. */
int kopt_inject_report_write(void);

#endif
