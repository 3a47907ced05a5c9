#ifndef KOPT_KNOWLEDGE_H
#define KOPT_KNOWLEDGE_H

/*
 * Detail files of the knowledge base: one Markdown file per optimization
 * or anti-pattern, in the shape of the detail-file template
 * (templates/optimization.md, templates/anti-pattern.md):
 *
 *   # <name>
 *   ## When to Apply          contexts, triggers, `Control: <level>`
 *   ## Mechanism
 *   ## Affected Metrics
 *   ## Implementation
 *   ## Performance Evidence   `Source type: ...` + Config|Before|After|Change
 *   ## Generalization
 *   ## Pitfalls
 *   ## Interactions
 *   (extra sections after these)
 *
 * In When to Apply, a bullet that starts with a code span is a trigger
 * (lib/trigger); all of a file's triggers must hold for it to apply.  A
 * bullet "Control: block|warp|thread" declares the least control level
 * an implementation needs.  Every other bullet names a context.
 *
 * Files live at <root>/optimizations/<name>.md,
 * <root>/anti-patterns/<name>.md, or
 * <root>/languages/<language>/{optimizations,anti-patterns}/<name>.md,
 * where <root> is kopt.knowledge (docs/knowledge).
 *
 * kopt_detail_parse() reads a file from memory and reports every problem
 * into a struct kopt_problems as "<path>:<line>: <what>"; what it could
 * read is kept in the struct kopt_detail even when there are problems.
 * Free with kopt_detail_release().
 */

#include "buf.h"
#include "config.h"
#include "problem.h"
#include "strvec.h"
#include "trigger.h"

enum kopt_kind {
	KOPT_KIND_OPTIMIZATION,
	KOPT_KIND_ANTI_PATTERN,
};

const char *kopt_kind_name(enum kopt_kind k);   /* "optimization" */
const char *kopt_kind_dir(enum kopt_kind k);    /* "optimizations" */
/* "optimization" or "anti-pattern"; KOPT_EINVALID otherwise. */
int kopt_kind_parse(enum kopt_kind *out, const char *s);

/*
 * Where `path` (relative to the top of the work tree) sits in the
 * knowledge base rooted at `root`: its kind, its language (NULL when
 * shared; owned by the caller) and its file name without ".md".
 * KOPT_ENOTFOUND when the path is not under `root`, KOPT_EINVALID when
 * it is, but not in a folder where detail files live; nothing printed
 * (many paths are asked about that are simply no detail files).
 */
int kopt_knowledge_locate(const char *root, const char *path,
			  enum kopt_kind *kind, char **language, char **name);
/*
 * Append why `path`, under `root`, is in no folder where detail files
 * live (the reason kopt_knowledge_locate() returned KOPT_EINVALID), for
 * a caller that reports it.
 */
void kopt_knowledge_misplaced(struct kopt_buf *out, const char *root,
			      const char *path);
/* The path a detail file of this kind, language and name belongs at. */
char *kopt_knowledge_path(const char *root, enum kopt_kind kind,
			  const char *language, const char *name);

/*
 * A template placeholder in `text` (e.g. "[Context 1: ..." or
 * "# Code snippet"): the first one's offset, or -1.  *len is set to the
 * length of the placeholder (to its closing bracket or the end of the
 * line).
 */
long kopt_knowledge_placeholder(const char *text, size_t *len);

struct kopt_detail {
	char *path;
	char *name;                   /* the H1 */
	int name_line;
	struct kopt_strvec contexts;
	struct kopt_trigger *triggers;
	size_t triggers_nr, triggers_alloc;
	/*
	 * When to Apply items led by a code span that is no expression over
	 * known metrics: prose for the agent to judge (also a context), never
	 * a problem; each "<file>:<line>: <span>".
	 */
	struct kopt_problems prose;
	enum kopt_control control;    /* KOPT_CONTROL_NONE: not declared */
	int control_line;
	char *source_type;            /* "local experiment", ... or NULL */
	char *source;                 /* the Source type line as written */
	int evidence_rows;
	/*
	 * What a catalog row repeats (lib/catalog): the evidence table's
	 * rows as plain text, the first paragraph of Mechanism, and the
	 * Pitfalls bullets; placeholders are left out.
	 */
	struct kopt_detail_evidence {
		char *config, *before, *after, *change;
	} *evidence;
	size_t evidence_nr, evidence_alloc;
	char *mechanism;              /* NULL: none or a placeholder */
	struct kopt_strvec pitfalls;
};

#define KOPT_DETAIL_INIT { 0 }

/* 0 when the file has no problems, KOPT_EINVALID when it has some. */
int kopt_detail_parse(struct kopt_detail *out, const char *path,
		      const char *text, size_t len,
		      struct kopt_problems *problems);
void kopt_detail_release(struct kopt_detail *d);

#endif
