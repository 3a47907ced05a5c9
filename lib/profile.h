#ifndef KOPT_PROFILE_H
#define KOPT_PROFILE_H

/*
 * What PROFILE concludes from a measured results entry: the roofline
 * position, the bottleneck by the rules of the workflow's metric table,
 * the opportunities when no knowledge base supplies them, and the
 * profiler's compact contract (the Markdown the orchestrator reads).
 *
 * kopt_profile_roofline() evaluates the kernel's `flops` and `bytes`
 * expressions at the entry's b/s/t and sets tflops, gbps and roofline_pct
 * against the measured ceilings when the device was calibrated, the
 * theoretical peaks otherwise.  kopt_profile_classify() sets bottleneck
 * and root_cause; kopt_profile_metric_opportunities() appends up to
 * three opportunities from the metric rules.  None of them prints; a
 * failure is reported through lib/error.
 */

#include "buf.h"
#include "config.h"
#include "results.h"

/* Healthy ranges of the workflow's metric table. */
#define KOPT_HEALTHY_TC_PCT 60.0
#define KOPT_HEALTHY_DRAM_PCT 70.0
#define KOPT_HEALTHY_OCC_PCT 25.0
#define KOPT_HEALTHY_L2_HIT_PCT 80.0
#define KOPT_HEALTHY_WAVES 1.0

/*
 * Fill in e's TFLOP/s, GB/s and roofline position; an expression that
 * cannot be evaluated is reported (".kopt: kernel '<k>': flops/bytes:
 * <why>") and its code returned.
 */
int kopt_profile_roofline(struct kopt_results_entry *e,
			  const struct kopt_kernel *k);
/*
 * "Memory-bound", "Compute-bound", "Latency-bound", "Unknown" (a unit's
 * metric missing) or "Not measured" (the stage has no hardware metrics).
 */
const char *kopt_profile_stage_bottleneck(const struct kopt_results_stage *st);
/* The worst unhealthy metric of a stage, "--" when all are healthy. */
void kopt_profile_stage_issue(struct kopt_buf *out,
			      const struct kopt_results_stage *st);
void kopt_profile_classify(struct kopt_results_entry *e);
/*
 * One line per stage with something not measured: "- 'name': not
 * measured: <why>." or "- 'name': l2_hit_pct not measured ...", and
 * for a stage sampled in kernel replay that its L2 hit rate and DRAM
 * traffic are not the program's cache state.  Empty when everything was
 * measured in the program's own state.
 */
void kopt_profile_unmeasured(struct kopt_buf *out,
			     const struct kopt_results_entry *e);
void kopt_profile_metric_opportunities(struct kopt_results_entry *e);

/* The profiler contract; `parent` may be NULL. */
void kopt_profile_contract(struct kopt_buf *out, const char *kernel,
			   const char *version,
			   const struct kopt_results_entry *e,
			   const char *parent_version,
			   const struct kopt_results_entry *parent);

#endif
