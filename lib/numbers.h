#ifndef KOPT_NUMBERS_H
#define KOPT_NUMBERS_H

/*
 * Where a version's numbers come from: its results
 * file when it has one (source "measured", or "replayed" for numbers fed
 * from a recorded capture), else the performance blocks written by hand
 * in its devlog entry (source "from devlog").  kopt_numbers_version() is
 * that rule; every view and gate reaches it through kopt_analysis_load()
 * (lib/analysis, which reads a kernel once per command) or, for the
 * hooks, directly on the snapshot they judge.
 *
 * Numbers from the devlog become a struct kopt_results like a results
 * file's: one entry per performance block that names its configuration
 * (b, s, t), keyed by the device the block names, its trial the
 * configured trial of that configuration (none for an ad-hoc one), its
 * metrics as the devlog parser read them (durations in us whatever unit
 * was written), `from_devlog` set.  Its parent is the nearest earlier
 * version of the devlog with numbers that is not marked abandoned.
 * Entries are compared only on the same device and configuration
 * (kopt_results_find_like()).
 *
 * When a version has both, the results file wins, and each of its
 * durations that the devlog states otherwise beyond the noise
 * (kopt_verdict_judge()) is reported as a disagreement, for the views to
 * show.
 *
 * Nothing here prints.
 */

#include "config.h"
#include "devlog.h"
#include "results.h"
#include "strvec.h"

enum kopt_numbers_source {
	KOPT_NUMBERS_NONE = 0,
	KOPT_NUMBERS_MEASURED,
	KOPT_NUMBERS_REPLAYED,
	KOPT_NUMBERS_DEVLOG,
};

/* "measured", "replayed", "from devlog", or "none". */
const char *kopt_numbers_source_name(enum kopt_numbers_source s);
/* The source of one entry. */
enum kopt_numbers_source
kopt_numbers_entry_source(const struct kopt_results_entry *e);
/*
 * The source of a version's numbers: from devlog when they are, replayed
 * when every entry was replayed, measured otherwise; none without entries.
 */
enum kopt_numbers_source
kopt_numbers_results_source(const struct kopt_results *r);

/*
 * The version of `dl` whose numbers `version` is compared with: the
 * nearest earlier one with a performance block, skipping versions whose
 * heading marks them abandoned.  NULL when there is none; borrowed.
 */
const char *kopt_numbers_devlog_parent(const struct kopt_devlog *dl,
				       const char *version);

/*
 * The performance blocks of `version` in `dl` as results of `kernel`
 * (*out is released first).  `cfg` names the trials (may be NULL).
 * Returns the number of entries.
 */
size_t kopt_numbers_from_devlog(struct kopt_results *out,
				const struct kopt_devlog *dl,
				const char *kernel, const char *version,
				const struct kopt_config *cfg);

/*
 * A version's numbers into *out (released first): `file` (its results
 * file, parsed; NULL when it has none) when it has entries, its contents
 * moved, else the devlog's blocks (`dl` may be NULL).  When both exist,
 * each disagreement is appended to `disagree` (may be NULL) as
 * "decode (b=32, s=1, t=4096): measured 41.20 us, the devlog says
 * 45.00 us (+9.2%)".  `cfg` gives the trials and kopt.noise (NULL: the
 * default noise, no trial names).  Returns the source.
 */
enum kopt_numbers_source
kopt_numbers_version(struct kopt_results *out, struct kopt_results *file,
		     const struct kopt_devlog *dl, const char *kernel,
		     const char *version, const struct kopt_config *cfg,
		     struct kopt_strvec *disagree);

#endif
