#ifndef KOPT_DEVLOG_H
#define KOPT_DEVLOG_H

/*
 * Devlogs: docs/kernels/<kernel>.md, the Markdown file that people,
 * agents and git-kopt all write in.
 *
 * kopt_devlog_parse() reads one with cmark-gfm (tables, source
 * positions) into a model: title, Overview, Target, the versions under
 * the development log (`### V<N>: <title>`), and per version its
 * Location, What changed, High-level description, Issues and performance
 * blocks (`**Performance** (<device>, ..., b=X, s=X, t=X):`, its table,
 * Bottleneck, Issues, Insights), keyed by (version, b, s, t).  It
 * accepts what people actually write: `### V3 - tiling`, `### v3: ...`,
 * `### V3 (abandoned)`, extra and reordered sections, CRLF, tabs, HTML
 * comments, YAML front matter, `us`/`μs`/`µs`, alignment colons, labels
 * as `**X**:`, `**X:**`, `X:` or `#### X`, missing parts.  Label lines
 * and tables written without the blank lines CommonMark wants are read
 * as the writer meant them.
 *
 * Edits (kopt_devlog_add_version(), kopt_devlog_put_perf(),
 * kopt_devlog_set_issues()) never re-render the document: they locate
 * whole blocks by line, splice new text between untouched bytes, re-parse
 * the result and check that it holds what was asked.  The same edit twice
 * changes nothing; bytes outside the edited block are identical; new
 * lines take the file's line ending (CRLF stays CRLF).  An edit that
 * cannot be placed is refused with "<file>:<line>: <why>" and leaves the
 * devlog as it was.  kopt_devlog_write() writes atomically through
 * lib/lockfile.
 *
 * Ownership: the devlog owns its text and every string of the model;
 * pointers returned by the lookups are borrowed and become invalid after
 * an edit (which re-parses) or kopt_devlog_release().
 *
 * Line numbers are 1-based lines of the file as stored, front matter
 * included; kopt_devlog_offset() turns one into a byte offset.
 */

#include <stddef.h>

#include "buf.h"
#include "results.h"
#include "strvec.h"

/* One row of a performance table, as written. */
struct kopt_devlog_row {
	char *metric;
	char *value;
	char *vs;               /* "vs Previous" cell, may be NULL */
};

struct kopt_devlog_perf {
	char *context;          /* text between the parentheses, as written */
	char *device;           /* its first item: "NVIDIA H200" */
	int has_config;         /* b, s and t were all found */
	long b, s, t;
	long b_requested;       /* "b=16 (asked 32)"; otherwise b */
	int replayed;           /* the paragraph says "replayed" */
	struct kopt_devlog_row *rows;
	size_t rows_nr, rows_alloc;
	/* values of the table in canonical units (duration in us), NAN absent */
	double metrics[KOPT_METRIC__NR];
	char *bottleneck;       /* may be NULL */
	char *root_cause;       /* may be NULL */
	struct kopt_strvec issues;
	struct kopt_strvec insights;
	int line;               /* the Performance paragraph */
	int last_line;          /* the last line of the block */
	int table_line;         /* 0 when there is no table */
	int issues_line, issues_last;      /* 0 when there is no Issues */
	int insights_line, insights_last;  /* 0 when there is no Insights */
	int after_line;         /* last line before where Issues would go */
};

struct kopt_devlog_version {
	char *name;             /* "v3" */
	long number;
	char *title;            /* "tiling", "" when there is none */
	char *note;             /* "abandoned" from "(abandoned)", may be NULL */
	int level;              /* of the heading */
	char *location;         /* without backticks, may be NULL */
	struct kopt_strvec what_changed;
	struct kopt_strvec description;
	struct kopt_strvec issues;  /* outside any performance block */
	int issues_line, issues_last;
	struct kopt_devlog_perf *perfs;
	size_t perfs_nr, perfs_alloc;
	int line;               /* the heading */
	int last_line;          /* the last line of the section */
	int content_last;       /* the same, without trailing rules and blanks */
};

struct kopt_devlog {
	char *label;            /* the file as named in messages */
	struct kopt_buf text;   /* the bytes, exactly as read */
	size_t *line_start;     /* byte offset of line i (1-based); */
	int lines_nr;           /* line_start[lines_nr + 1] == text.len */
	int crlf;               /* most lines end with CRLF */
	int front_matter_last;  /* last line of YAML front matter, 0 if none */
	char *title;
	int title_line;
	char *overview;         /* the Overview section's text, may be NULL */
	char *target;           /* the Target section's text, may be NULL */
	int log_line;           /* heading of the development log, 0 if none */
	int log_level;
	int log_last;           /* last line of its section */
	struct kopt_strvec sections;  /* level-2 headings, in order */
	struct kopt_devlog_version *versions;
	size_t versions_nr, versions_alloc;
	int quick;              /* its blocks were found without cmark */
};

#define KOPT_DEVLOG_INIT { NULL, KOPT_BUF_INIT, NULL, 0, 0, 0, NULL, 0, \
	NULL, NULL, 0, 0, 0, KOPT_STRVEC_INIT, NULL, 0, 0 }

/*
 * The largest devlog read (16 MiB, some 13,000 versions): time and memory
 * grow faster than the size (bench/limits), so a larger one is refused.
 */
#define KOPT_DEVLOG_MAX_BYTES (16 << 20)

/*
 * Parse devlog text (copied).  Returns 0, or KOPT_EINVALID with the
 * problem printed as "<label>:<line>: <why>" (empty text, binary or
 * non-UTF-8 content, a version heading twice, more than
 * KOPT_DEVLOG_MAX_BYTES).  *out is empty on failure.
 */
int kopt_devlog_parse(struct kopt_devlog *out, const char *data, size_t len,
		      const char *label);
/*
 * The same for the views (lib/analysis through its cache): the same
 * model and messages, less what they do not read: the items of the
 * lists (What changed, Description, Issues, Insights, Not measured:
 * their lines are kept), the rows of the performance tables (their
 * metrics are kept) and the performance paragraphs' context (its
 * device, configuration and replay are kept).  The blocks are found
 * line by line without building cmark's tree where the text keeps to
 * the forms devlogs are written in; anything else is read by cmark, as
 * kopt_devlog_parse() reads it (tests/fuzz/devlog-scan holds the two to
 * the same answers).
 */
int kopt_devlog_parse_view(struct kopt_devlog *out, const char *data,
			   size_t len, const char *label);
/*
 * Drop from a model what kopt_devlog_parse_view() does not keep (list
 * items, table rows, contexts): a full model becomes the views' model.
 */
void kopt_devlog_drop_unread(struct kopt_devlog *dl);
/* Read and parse a file; KOPT_ENOTFOUND (nothing printed) if missing. */
int kopt_devlog_read_file(struct kopt_devlog *out, const char *path);
void kopt_devlog_release(struct kopt_devlog *dl);
/* Write the current text atomically. */
int kopt_devlog_write(const struct kopt_devlog *dl, const char *path);

/* Byte offset of the start of `line` (lines_nr + 1: the end). */
size_t kopt_devlog_offset(const struct kopt_devlog *dl, int line);

const struct kopt_devlog_version *
kopt_devlog_find_version(const struct kopt_devlog *dl, const char *name);
/*
 * The What changed line that says which version a new one was created
 * from ("Created from V8 (`kernels/mla/v8`)"), as 'git kopt design'
 * writes it (allocated), and the version such a line names in `v`'s
 * entry, or NULL (allocated).
 */
char *kopt_devlog_created_from_line(const char *from, const char *dir);
char *kopt_devlog_created_from(const struct kopt_devlog_version *v);
/*
 * The title of a version's heading when it names the version: NULL when
 * there is none or it is still a placeholder, "[Brief description]" as
 * design writes it or "(to be described)" as verify does.
 */
const char *kopt_devlog_version_title(const struct kopt_devlog_version *v);
/*
 * The block measured at that configuration: `b` matches the batch that
 * ran or the one asked for.  NULL when there is none.
 */
const struct kopt_devlog_perf *
kopt_devlog_find_perf(const struct kopt_devlog_version *v, long b, long s,
		      long t);

/*
 * What the views read of a devlog (title, Overview, Target, each
 * version's name, title, note and lines, and with
 * KOPT_DEVLOG_SUMMARY_PERFS, of its performance blocks the device,
 * configuration, replayed, Bottleneck, line and metrics) as lines of
 * text for lib/cache, and a devlog rebuilt from it: no text, versions
 * and blocks with only those fields.  KOPT_EINVALID (nothing printed) on
 * damaged text.
 */
enum { KOPT_DEVLOG_SUMMARY_PERFS = 1 << 0 };
void kopt_devlog_summary(struct kopt_buf *out, const struct kopt_devlog *dl,
			 unsigned flags);
int kopt_devlog_from_summary(struct kopt_devlog *out, const char *data,
			     size_t len, const char *label);
/*
 * Make `dl` what kopt_devlog_from_summary() reads back from its summary
 * without KOPT_DEVLOG_SUMMARY_PERFS, in place, without the text: 0; or
 * -1, `dl` unchanged, when a field would not read back.
 * kopt_devlog_slim_ok() is 1 when it would succeed.
 */
int kopt_devlog_slim(struct kopt_devlog *dl, const char *label);
int kopt_devlog_slim_ok(const struct kopt_devlog *dl);

/* A readable dump of the model, for golden tests and debugging. */
void kopt_devlog_dump(struct kopt_buf *out, const struct kopt_devlog *dl);

/* What an edit did: bytes [start, start + old_len) became new_len bytes. */
struct kopt_devlog_edit {
	int changed;
	size_t start, old_len, new_len;
	int line;               /* first line of the edited block */
};

struct kopt_devlog_new_version {
	const char *name;       /* "v3" */
	const char *title;      /* brief description */
	const char *location;   /* path of the version's sources, or NULL */
	const char *const *what_changed;      /* NULL-terminated, or NULL */
	const char *const *description;       /* NULL-terminated, or NULL */
};

/*
 * Add a version entry under the development log ("### V<N>: <title>",
 * then its Location, What changed and Description, as the devlog
 * template in templates/ shows them),
 * after the last version.  Nothing changes when the version is there.
 */
int kopt_devlog_add_version(struct kopt_devlog *dl,
			    const struct kopt_devlog_new_version *nv,
			    struct kopt_devlog_edit *edit);

/*
 * Insert or replace the performance block of `version` at b/s/t
 * (`b_requested` also matches an existing block; 0 for none).  `block`
 * is the paragraph, table, Bottleneck and Issues, '\n'-terminated lines
 * (see kopt_render_perf_block()); the Insights of a block being replaced
 * are kept as written, and a new block gets a placeholder for people to
 * fill.  A new block goes at the end of the version's section, where no
 * list or block around it can absorb it.
 */
int kopt_devlog_put_perf(struct kopt_devlog *dl, const char *version,
			 long b, long s, long t, long b_requested,
			 const char *block, struct kopt_devlog_edit *edit);

/*
 * Set the Issues list of a version: of its performance block at b/s/t
 * when `has_config`, else the version's own Issues outside the blocks
 * (added at the end of its section when missing).  `items` is
 * NULL-terminated; an empty list writes "- (none)".
 */
int kopt_devlog_set_issues(struct kopt_devlog *dl, const char *version,
			   int has_config, long b, long s, long t,
			   const char *const *items,
			   struct kopt_devlog_edit *edit);

/*
 * Put `body` ('\n' lines: the charts and plot links git-kopt writes)
 * between the markers below in the Results section: in place when the
 * markers are there (only the bytes between them change), else at the
 * end of a `## Results` section, else in a new `## Results` section
 * before the development log (or at the end).  A begin marker without
 * its end is refused ("<file>:<line>: ...").
 */
#define KOPT_DEVLOG_RESULTS_BEGIN "<!-- kopt:results: written by git kopt -->"
#define KOPT_DEVLOG_RESULTS_END "<!-- /kopt:results -->"
int kopt_devlog_put_results(struct kopt_devlog *dl, const char *body,
			    struct kopt_devlog_edit *edit);

/* The placeholder under Insights of a new block. */
#define KOPT_DEVLOG_INSIGHTS_PLACEHOLDER "- (to be written)"

#endif
