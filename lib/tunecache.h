#ifndef KOPT_TUNECACHE_H
#define KOPT_TUNECACHE_H

/*
 * The tuning cache: every evaluation of a configuration, committed with
 * the kernel so that a team shares it and a later run (or a teammate's)
 * does not measure the same thing twice.
 *
 * One file per version, docs/kernels/<kernel>/tuning/<version>.tsv:
 * a header line, a line naming the columns, then one line per
 * evaluation, tab-separated (backslash, tab and newline escaped as in
 * lib/cache), sorted bytewise and unique by key, so two people's runs
 * merge like any text file and a diff shows what was measured:
 *
 *	# git-kopt tuning cache 1
 *	# device	uuid	b	s	t	tree	build	config	status	us	spread_pct	run_s	date
 *	NVIDIA H200	GPU-5d...	32	1	4096	3f2a...	9c1e0d2b7a44	BN=64,STAGES=3	ok	86.812	-	2.1	2026-12-02T01:30:00Z
 *
 * The key is the first eight columns: the device (name and UUID), the
 * trial shape, the git tree id of the version's sources as they were
 * built (kopt_repo_worktree_tree_id(), so an edited source never matches
 * an old line), a short hash of the build and run command templates and
 * of how the time is read (kopt_tunecache_build_key()), and the
 * configuration (kopt_tune_config_text()).  `status` is "ok" or why the
 * configuration is invalid: "failed" (its own check failed or it exited
 * non-zero), "crashed", "hung", "build-failed", "no-time" (no report of
 * its time in its output).  us, spread and run_s are "-" when not known.
 *
 * kopt_tunecache_parse() reads the text of a file (labelled `label` in
 * messages: "<label>:<line>: <problem>", KOPT_EINVALID); a missing file
 * is an empty cache.  kopt_tunecache_put() adds or replaces a line;
 * kopt_tunecache_write() writes the whole file atomically (lib/lockfile),
 * so an interrupted run leaves every line it saved and never half a
 * file.  Nothing prints except through kopt_error().
 */

#include <stddef.h>

#include "buf.h"

#define KOPT_TUNECACHE_HEADER "# git-kopt tuning cache 1"

struct kopt_tunecache_line {
	char *device, *uuid;
	long b, s, t;
	char *tree, *build, *config;
	char *status;
	double us, spread_pct, run_s;
	char *date;
};

struct kopt_tunecache {
	struct kopt_tunecache_line *lines;  /* sorted by key */
	size_t nr, alloc;
};

#define KOPT_TUNECACHE_INIT { NULL, 0, 0 }

int kopt_tunecache_parse(struct kopt_tunecache *out, const char *text,
			 size_t len, const char *label);
/* Read `path`; a missing file is an empty cache. */
int kopt_tunecache_read(struct kopt_tunecache *out, const char *path,
			const char *label);
/* The line with this key, or NULL. */
const struct kopt_tunecache_line *
kopt_tunecache_find(const struct kopt_tunecache *c, const char *device,
		    const char *uuid, long b, long s, long t, const char *tree,
		    const char *build, const char *config);
/*
 * The same, any GPU whose name is `device` (on a cluster, which GPU a
 * task gets is not known in advance).
 */
const struct kopt_tunecache_line *
kopt_tunecache_find_model(const struct kopt_tunecache *c, const char *device,
			  long b, long s, long t, const char *tree,
			  const char *build, const char *config);
/* Copy `l` into the cache, replacing the line of the same key. */
void kopt_tunecache_put(struct kopt_tunecache *c,
			const struct kopt_tunecache_line *l);
void kopt_tunecache_format(struct kopt_buf *out, const struct kopt_tunecache *c);
int kopt_tunecache_write(const struct kopt_tunecache *c, const char *path);
void kopt_tunecache_release(struct kopt_tunecache *c);

/* 12 hex digits naming the build and run templates and the time report. */
void kopt_tunecache_build_key(char out[13], const char *build, const char *run,
			      const char *time_report);

#endif
