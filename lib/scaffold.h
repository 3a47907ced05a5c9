#ifndef KOPT_SCAFFOLD_H
#define KOPT_SCAFFOLD_H

/*
 * Where a kernel's versions live, and how a new version is made from an
 * old one (the work of `git kopt design`).
 *
 * Layout: `kernel.<name>.source` is a path pattern with `{version}`
 * (and optionally `{kernel}`), e.g. `kernels/mla_decode/{version}`.  The
 * folder before the component holding `{version}` is the kernel's root;
 * its entries that match that component are the versions; everything
 * else under the root (a shared harness, a Makefile) is shared code.
 *
 * Renaming (`kernel.<name>.rename`, default `suffix`, or `none`): names
 * carry the version as a suffix, `_v<N>`, and a new version renames them.
 *   - From v<N> (N > 0) to v<M>: every `_v<N>` (or `_V<N>`) that ends an
 *     identifier or is followed by `_` becomes `_v<M>`, in file and
 *     folder names and in the text of text files: `foo_v2.cu` ->
 *     `foo_v3.cu`, `foo_v2_kernel` -> `foo_v3_kernel`, `FOO_V2_H` ->
 *     `FOO_V3_H`; `foo_v20` is left alone.
 *   - From v0, which has no suffix: the version's files whose stem begins
 *     with the kernel's name (`-` and `.` read as `_`) or with the name of
 *     the folder holding the versions are versioned.  Such a file
 *     `<stem>.<ext>` becomes `<stem>_v<M>.<ext>` (folders keep their
 *     names), unless the shared code outside the version folders (not
 *     its notes: the caller leaves prose out) names it (a Makefile listing `mla_decode.cu`; for a `.py` module, its
 *     stem).  In text files, `<stem>.<ext>` and a bare `<stem>` (an
 *     include, an import) follow their file; an identifier beginning with
 *     a stem and `_` gets `_v<M>` after the stem (`mla_decode_kernel` ->
 *     `mla_decode_v1_kernel`; the longest stem wins) unless the shared
 *     code uses it too (the entry point a harness calls keeps its name,
 *     so the new version still links against the harness).  Names of
 *     other files (`main.cu`, `bench.cu`, the harness's `mla_decode.h`)
 *     are never touched.
 * Binary files (git's test: a NUL byte or mostly non-text) are copied
 * byte for byte.  With `rename = none` everything is copied unchanged.
 *
 * Ownership: the structures own their strings; release them with the
 * matching _release().
 */

#include <git2.h>

#include "buf.h"
#include "config.h"
#include "strvec.h"

struct kopt_layout {
	char *root;             /* "kernels/mla_decode" ("" for the top) */
	char *comp_prefix;      /* text of the version component before */
	char *comp_suffix;      /* ... and after {version} */
	const struct kopt_kernel *kernel;
};

#define KOPT_LAYOUT_INIT { NULL, NULL, NULL, NULL }

/* KOPT_EINVALID (printed) when the pattern has no usable {version}. */
int kopt_layout_init(struct kopt_layout *out, const struct kopt_kernel *k);
void kopt_layout_release(struct kopt_layout *l);
/* The folder of `version` ("kernels/mla_decode/v3"). */
int kopt_layout_dir(struct kopt_buf *out, const struct kopt_layout *l,
		    const char *version);
/*
 * What to do for a kernel with no version yet, the one advice every step
 * gives: "commit the base version v0 under 'kernels/mla/v0'" (the
 * pattern itself when it has no usable {version}).
 */
void kopt_layout_start_advice(struct kopt_buf *out, const struct kopt_kernel *k);
/* The version a root entry named `name` holds, or NULL (owned by caller). */
char *kopt_layout_match(const struct kopt_layout *l, const char *name);
/* The versions with a folder in `tree`, sorted by number. */
int kopt_layout_versions(struct kopt_strvec *out, git_repository *repo,
			 const git_tree *tree, const struct kopt_layout *l);

struct kopt_rename {
	long from, to;          /* version numbers */
	int enabled;
	struct kopt_strvec stems;       /* from v0: stems, longest first */
	struct kopt_strvec files;       /* from v0: versioned file names */
	struct kopt_strvec kept_files;  /* ... that shared code names */
	struct kopt_strvec keep;        /* from v0: identifiers kept */
};

#define KOPT_RENAME_INIT { 0, 0, 0, KOPT_STRVEC_INIT, KOPT_STRVEC_INIT, \
	KOPT_STRVEC_INIT, KOPT_STRVEC_INIT }

void kopt_rename_init(struct kopt_rename *r, long from, long to,
		      int enabled);
void kopt_rename_release(struct kopt_rename *r);
/*
 * From v0: consider the file `name` (a base name) of the version; it is
 * versioned when its stem begins with one of `prefixes`.  Add every file
 * before scanning the shared code.
 */
void kopt_rename_add_file(struct kopt_rename *r, const char *name,
			  const struct kopt_strvec *prefixes);
/*
 * From v0: read text (or a file name) of the shared code; the identifiers
 * and files it names keep their names.
 */
void kopt_rename_scan_shared(struct kopt_rename *r, const char *text,
			     size_t len);
/* Append `text` renamed to `out`; the number of names changed. */
size_t kopt_rename_text(struct kopt_buf *out, const struct kopt_rename *r,
			const char *text, size_t len);
/* Append the path (components separated by '/') renamed to `out`. */
void kopt_rename_path(struct kopt_buf *out, const struct kopt_rename *r,
		      const char *path);

/*
 * An interrupted design.  `git kopt design` writes the version's files,
 * the devlog and the task, makes its commit, creates the version's
 * branch, switches HEAD to it and stages the files, in that order.
 * kopt_scaffold_journal_begin() records, before the first of these,
 * what a rerun needs to put things right (lib/journal); the step ends
 * the journal after the last.  kopt_scaffold_recover(), at the start of
 * the next design in that work tree, finds the journal of a killed run
 * and:
 *   - when HEAD is on the new branch already, finishes the run: stages
 *     what the branch's commit changed (KOPT_SCAFFOLD_FINISHED);
 *   - otherwise undoes it: the branch (when its commit is the run's),
 *     the version's folder, the devlog as HEAD has it, the task when the
 *     run created it (KOPT_SCAFFOLD_UNDONE), so the design can start
 *     again from the state before the killed run.
 * A journal of a run killed while writing it is removed; nothing had
 * changed yet (KOPT_SCAFFOLD_NONE, as when there is none).
 */
struct kopt_journal;

struct kopt_scaffold_paths {
	const char *branch;     /* "refs/heads/kopt/<kernel>/<version>" */
	const char *to_dir;     /* the new version's folder, from the top */
	const char *devlog;
	const char *task;
	int task_existed;       /* the task was in the work tree before */
};

enum kopt_scaffold_recovery {
	KOPT_SCAFFOLD_NONE = 0,
	KOPT_SCAFFOLD_UNDONE,
	KOPT_SCAFFOLD_FINISHED,
};

int kopt_scaffold_journal_begin(struct kopt_journal *j, git_repository *repo,
				const git_oid *head,
				const struct kopt_scaffold_paths *p);
/*
 * Put right a design killed in the work tree at `top` (with a trailing
 * '/'); *branch gets the new branch's short name when something was
 * done (owned by the caller).  0, KOPT_ELOCKED when another design is
 * running there, or -1; all printed.
 */
int kopt_scaffold_recover(enum kopt_scaffold_recovery *out, char **branch,
			  git_repository *repo, const char *top);

#endif
