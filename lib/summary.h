#ifndef KOPT_SUMMARY_H
#define KOPT_SUMMARY_H

/*
 * The designer's Implementation Summary: the contract an agent answers
 * with after writing a new version, and the one thing the orchestrator
 * reads of its work.
 *
 *	## New Version: <kernel> <version>
 *	### Changes Applied: <list>
 *	### Files: Created/Modified <paths>
 *	### Correctness: PASS|FAIL
 *	### Trial Configurations Checked
 *	1. [b, s, t] -- <why this point matters>
 *	### Devlog Entry Written: <path>
 *
 * A part's content is the text after its colon plus the lines below it,
 * up to the next heading; list items ("-", "*", "+", "1.") are items.
 * Text before "New Version" (an agent's preamble) and code fences around
 * the summary are ignored.
 *
 * kopt_summary_parse() refuses, with one message naming what is wrong
 * (KOPT_EINVALID, printed through lib/error), an answer that misses a
 * part or leaves one empty, names another kernel or version than
 * `expect`, says neither PASS nor FAIL, gives a trial without b, s and t,
 * or claims a file outside `expect->dir` (absolute paths and ".." too).
 * The file paths are stored normalised ("./" and repeated slashes gone).
 *
 * Ownership: everything in struct kopt_summary belongs to it;
 * kopt_summary_release() frees it.
 */

#include <stddef.h>

#include "buf.h"
#include "strvec.h"

struct kopt_summary_trial {
	long b, s, t;
	char *why;              /* "" when none was given */
};

struct kopt_summary {
	char *kernel;
	char *version;
	struct kopt_strvec changes;
	struct kopt_strvec files;
	int pass;               /* Correctness: 1 PASS, 0 FAIL */
	struct kopt_summary_trial *trials;
	size_t trials_nr, trials_alloc;
	char *devlog;           /* the devlog path as written */
};

#define KOPT_SUMMARY_INIT { NULL, NULL, KOPT_STRVEC_INIT, KOPT_STRVEC_INIT, \
	0, NULL, 0, 0, NULL }

/* What the answer must agree with; any field may be NULL (not checked). */
struct kopt_summary_expect {
	const char *kernel;
	const char *version;
	const char *dir;        /* the version's folder, relative to the top */
	const char *devlog;     /* the kernel's devlog, relative to the top */
};

int kopt_summary_parse(struct kopt_summary *out, const char *text,
		       size_t len, const struct kopt_summary_expect *expect);
void kopt_summary_release(struct kopt_summary *s);

/*
 * The summary as a block of the version's devlog entry: a bold paragraph
 * naming `agent`, then one list.  '\n'-terminated lines.
 */
void kopt_summary_render_devlog(struct kopt_buf *out,
				const struct kopt_summary *s,
				const char *agent);

/* The heading of that block, to find it again. */
#define KOPT_SUMMARY_DEVLOG_HEADING "**Implementation summary**"

#endif
