#ifndef KOPT_OBLIGATIONS_H
#define KOPT_OBLIGATIONS_H

/*
 * Open LEARN obligations: a version that regressed against its parent
 * (lib/compare) and whose failure is recorded nowhere.  It is recorded
 * when an anti-pattern detail file or a catalog names the version as
 * "<kernel>/<version>", "<kernel> <version>" or "<kernel> <parent> ->
 * <version>" (the forms `git kopt learn new --from` writes in the
 * evidence and the Source of the row), or when a
 * commit reachable from HEAD carries `Kopt-Learn: skip <reason>` with
 * the version's Kopt-Kernel and Kopt-Version trailers.
 *
 * struct kopt_obligations caches the knowledge text and the trailers,
 * read on first need, so that checking many kernels reads them once.
 * kopt_obligations_find() returns an array the caller frees with
 * kopt_obligations_free().
 */

#include <git2.h>

#include "analysis.h"
#include "buf.h"
#include "config.h"
#include "strvec.h"

struct cJSON;

struct kopt_obligation {
	char *kernel;
	char *version;
	char *parent;
	char *trial;            /* the trial that regressed most */
	double change_pct;      /* + is slower */
};

struct kopt_skip {
	char *kernel, *version, *reason;
	char commit[GIT_OID_HEXSZ + 1];
};

struct kopt_obligations {
	git_repository *repo;   /* borrowed, may be NULL */
	const char *top;
	const struct kopt_config *cfg;
	int knowledge_loaded;
	struct kopt_buf knowledge;   /* anti-pattern files and catalogs */
	int skips_loaded;
	struct kopt_skip *skips;
	size_t skips_nr, skips_alloc;
};

void kopt_obligations_init(struct kopt_obligations *ob, git_repository *repo,
			   const char *top, const struct kopt_config *cfg);
void kopt_obligations_release(struct kopt_obligations *ob);

int kopt_obligations_find(struct kopt_obligations *ob,
			  const struct kopt_analysis *a,
			  struct kopt_obligation **out, size_t *nr);
/*
 * kopt_obligations_find() in two steps, for a caller that keeps the
 * first (lib/overview): every version that regressed against its
 * parent, recorded or not; then those recorded nowhere, kept in order
 * in `arr` (*nr lowered; the others freed).
 */
int kopt_obligations_regressions(const struct kopt_analysis *a,
				 struct kopt_obligation **out, size_t *nr);
void kopt_obligations_open(struct kopt_obligations *ob,
			   struct kopt_obligation *arr, size_t *nr);
void kopt_obligations_free(struct kopt_obligation *arr, size_t nr);
void kopt_obligations_free_one(struct kopt_obligation *o);

/* 1 if `text` names the version in one of the forms above. */
int kopt_obligations_mentions(const char *text, const char *kernel,
			      const char *version);

/* One line: what regressed and the command that records it. */
void kopt_obligations_describe(struct kopt_buf *out,
			       const struct kopt_obligation *o);
struct cJSON *kopt_obligations_json(const struct kopt_obligation *o);

#endif
