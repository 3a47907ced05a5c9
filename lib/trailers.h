#ifndef KOPT_TRAILERS_H
#define KOPT_TRAILERS_H

/*
 * Commit messages and their Kopt-* trailers: the one place that reads and
 * writes them.
 *
 * The tool's commits carry trailers that `git interpret-trailers --parse`
 * reads back:
 *
 *	Kopt-Kernel: <kernel>
 *	Kopt-Version: <version>
 *	Kopt-Step: design|verify|learn
 *	Kopt-Verdict: improvement|regression|neutral
 *
 * and people may add `Kopt-Finding: novel` and `Kopt-Learn: skip <reason>`.
 * Keys are spelled by the KOPT_TRAILER_* constants and matched in any
 * case, as git matches them.
 *
 * Ownership: the strings in struct kopt_trailers belong to it; free them
 * with kopt_trailers_release().
 */

#include <stddef.h>

#include "buf.h"

enum kopt_step {
	KOPT_STEP_NONE = 0,
	KOPT_STEP_DESIGN,
	KOPT_STEP_VERIFY,
	KOPT_STEP_LEARN,
};

struct kopt_trailer {
	char *key;
	char *value;
};

struct kopt_trailers {
	struct kopt_trailer *items;
	size_t nr, alloc;
};

#define KOPT_TRAILERS_INIT { NULL, 0, 0 }

#define KOPT_TRAILER_KERNEL "Kopt-Kernel"
#define KOPT_TRAILER_VERSION "Kopt-Version"
#define KOPT_TRAILER_STEP "Kopt-Step"
#define KOPT_TRAILER_VERDICT "Kopt-Verdict"
#define KOPT_TRAILER_FINDING "Kopt-Finding"
#define KOPT_TRAILER_LEARN "Kopt-Learn"

/*
 * The trailers of a commit message, as `git interpret-trailers --parse`
 * reads them: the last paragraph of the message above a patch's divider
 * (a line of "---" and white space), not the title, made of "Key: value"
 * lines (or a quarter of them with a Signed-off-by), values folded over
 * white-space-led lines unfolded.  Comment lines (starting with
 * `comment_char`, 0 for none) and everything below a scissors line are
 * dropped first, as `git commit` does before storing the message.
 */
int kopt_trailers_parse(struct kopt_trailers *out, const char *message,
			int comment_char);
void kopt_trailers_add(struct kopt_trailers *t, const char *key,
		       const char *value);
/* The value of the last trailer named `key` (case-insensitive), or NULL. */
const char *kopt_trailers_get(const struct kopt_trailers *t, const char *key);
/*
 * The reason of a `Kopt-Learn: skip <reason>` trailer, or NULL when there
 * is none or it gives no reason (then it skips nothing).  The word "skip"
 * is written as here; the key, like every key, in any case.
 */
const char *kopt_trailers_learn_skip(const struct kopt_trailers *t);
/* Add the Kopt-Kernel, Kopt-Version and Kopt-Step trailers of a step. */
void kopt_trailers_add_step(struct kopt_trailers *t, const char *kernel,
			    const char *version, enum kopt_step step);
void kopt_trailers_release(struct kopt_trailers *t);

/*
 * The message as git stores it (comments and scissors dropped, trailing
 * blank lines removed, one final newline).
 */
void kopt_message_cleanup(struct kopt_buf *out, const char *message,
			  int comment_char);
/*
 * Add `t` as a trailer block at the end of the message (above a patch's
 * divider, as git puts them), after a blank line when the message does
 * not already end in a trailer block.
 */
void kopt_message_add_trailers(struct kopt_buf *msg,
			       const struct kopt_trailers *t);
/* Append `t` as "Key: value" lines. */
void kopt_trailers_format(struct kopt_buf *out, const struct kopt_trailers *t);

const char *kopt_step_name(enum kopt_step step);
enum kopt_step kopt_step_parse(const char *s);

#endif
