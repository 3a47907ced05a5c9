#ifndef KOPT_TEMPLATES_H
#define KOPT_TEMPLATES_H

/*
 * The files git-kopt ships beside its binary: templates/ (everything
 * `init` lays into a repository, and the single-file templates other
 * steps fill in) and hooks/ (the shims `init` installs).
 *
 * kopt_share_dir() finds one of them.  The environment variable it is
 * given wins (KOPT_TEMPLATE_DIR, KOPT_HOOKS_DIR); then the installed
 * layout, <dir of the executable>/../share/git-kopt/<what>; then the
 * source tree the program was built from (KOPT_SOURCE_DIR/<what>, set
 * by the Makefile), so that a build runs without being installed.
 *
 * kopt_templates_list() lists the regular files under a directory as
 * paths relative to it, sorted bytewise, dot files included: the
 * template tree mirrors the layout it is copied to.
 *
 * kopt_templates_expand() fills the "{{name}}" placeholders of a
 * single-file template (`label` names it in messages) from
 * NULL-terminated name/value pairs; a placeholder with no value is an
 * error (a template and its caller disagree).
 *
 * kopt_templates_read() reads <templates>/<name> into `out`.
 *
 * All return 0 or a negative code; problems are reported once, through
 * lib/error.
 */

#include "buf.h"
#include "strvec.h"

#define KOPT_TEMPLATE_ENV "KOPT_TEMPLATE_DIR"
#define KOPT_HOOKS_ENV "KOPT_HOOKS_DIR"

/* "templates" or "hooks"; *out is an absolute path the caller frees. */
int kopt_share_dir(char **out, const char *what, const char *env);
int kopt_templates_list(struct kopt_strvec *out, const char *dir);
int kopt_templates_read(struct kopt_buf *out, const char *name);
int kopt_templates_expand(struct kopt_buf *out, const char *text,
			  const char *label, const char *const *vars);

#endif
