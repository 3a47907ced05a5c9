#ifndef KOPT_MD_H
#define KOPT_MD_H

/*
 * Markdown as git-kopt reads it: cmark-gfm with the table extension and
 * source positions, and the helpers that turn nodes into plain text and
 * line numbers into byte offsets, so that edits can splice new bytes
 * between untouched ones (a user's file is never re-rendered).
 *
 * kopt_md_parse() returns a document owned by the caller
 * (cmark_node_free()).  Source positions are 1-based lines; note that
 * cmark-gfm 0.29 reports 0 for a paragraph cut short by a table that
 * follows it without a blank line, and gives such a table its
 * paragraph's first line: kopt_md_table_header_line() knows this.
 */

#include <stddef.h>

#include <cmark-gfm.h>

#include "buf.h"

cmark_node *kopt_md_parse(const char *text, size_t len);
/*
 * The same, the document's pieces in one pool (several times cheaper to
 * build and to free): read it, then free it with kopt_md_free(), before
 * the next pooled document (one at a time; a second one, while the first
 * is held, is an ordinary one).  Nothing of it outlives kopt_md_free().
 */
cmark_node *kopt_md_parse_pooled(const char *text, size_t len);
/* Free a document of either kind. */
void kopt_md_free(cmark_node *doc);

/* Plain text of the inlines under `node`: code spans without their
 * backticks, soft and hard breaks as one space, link text only. */
void kopt_md_text(struct kopt_buf *out, cmark_node *node);

int kopt_md_is(cmark_node *node, const char *type);  /* by type string */
int kopt_md_heading_level(cmark_node *node);         /* 0 if not one */

/* The line of the header row and of the delimiter row of a table. */
int kopt_md_table_header_line(cmark_node *table);
/* The last line of a table (its last row, or the delimiter row). */
int kopt_md_table_end_line(cmark_node *table);

/*
 * The line of the first fenced code block of `doc` (parsed from `text`)
 * that is never closed and so runs to the end of the text; 0 when every
 * fence is closed.
 */
int kopt_md_unclosed_fence(cmark_node *doc, const char *text, size_t len);

/*
 * The section of `text` under the first top-level heading whose text
 * contains `needle`: from the line after the heading to the next
 * heading of any level, or the end.  1 with the byte range in *start
 * and *end; 0 when no heading matches.
 */
int kopt_md_section(const char *text, size_t len, const char *needle,
		    size_t *start, size_t *end);

/* Offset of the first byte of 1-based `line` (len when past the end). */
size_t kopt_md_line_start(const char *text, size_t len, int line);
/* Offset just past `line` and its newline (len when past the end). */
size_t kopt_md_line_end(const char *text, size_t len, int line);
/* Number of lines (a last line without a newline counts). */
int kopt_md_line_count(const char *text, size_t len);

#endif
