#ifndef KOPT_PATHS_H
#define KOPT_PATHS_H

/*
 * Where a kernel's documents live in a repository: every path below
 * docs/kernels/ is made and recognised here, relative to the top of the
 * work tree.
 *
 *	docs/kernels/<kernel>.md                   the devlog
 *	docs/kernels/<kernel>/results/<version>.json  measured results
 *	docs/kernels/<kernel>/tasks/<version>.md   the task of a version
 *	docs/kernels/<kernel>/tuning/<version>.tsv the tuning cache (lib/tunecache)
 *
 * <kernel> is a name (kopt_valid_name), <version> a version name
 * (lib/version).  The knowledge base and the catalogs have their own
 * places, set in .kopt and laid out by lib/knowledge and lib/catalog;
 * the kernels' sources follow each kernel's `source` pattern
 * (lib/scaffold).
 *
 * Functions that make a path append it to `out`; a caller that wants an
 * absolute path adds the top first.
 */

#include "buf.h"

/* The folder all kernels' documents are in, with its final slash. */
#define KOPT_KERNELS_DIR "docs/kernels/"

void kopt_path_devlog(struct kopt_buf *out, const char *kernel);
/* docs/kernels/<kernel> (results and tasks are below it) */
void kopt_path_kernel_dir(struct kopt_buf *out, const char *kernel);
void kopt_path_results_dir(struct kopt_buf *out, const char *kernel);
void kopt_path_results(struct kopt_buf *out, const char *kernel,
		       const char *version);
void kopt_path_task(struct kopt_buf *out, const char *kernel,
		    const char *version);
void kopt_path_tuning(struct kopt_buf *out, const char *kernel,
		      const char *version);
/* docs/kernels/<kernel>/plots (git kopt plot's SVG files) */
void kopt_path_plots_dir(struct kopt_buf *out, const char *kernel);

enum kopt_path_kind {
	KOPT_PATH_OTHER = 0,
	KOPT_PATH_DEVLOG,
	KOPT_PATH_RESULTS,
	KOPT_PATH_TASK,
};

/*
 * What `path` is among the paths above.  For a devlog *kernel is set, for
 * results and tasks *kernel and *version (both owned by the caller, NULL
 * when KOPT_PATH_OTHER).  `version` may be NULL when the caller does not
 * want it.
 */
enum kopt_path_kind kopt_path_classify(const char *path, char **kernel,
				       char **version);
/*
 * 1 when `path` is of `kind`, with *kernel and *version set as
 * kopt_path_classify() sets them; 0 (nothing set, nothing to free) when
 * it is not.
 */
int kopt_path_is(enum kopt_path_kind kind, const char *path, char **kernel,
		 char **version);

#endif
