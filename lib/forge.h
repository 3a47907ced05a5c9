#ifndef KOPT_FORGE_H
#define KOPT_FORGE_H

/*
 * Posting to a forge: one comment per pull request (GitHub: an issue
 * comment of the pull request; GitLab: a note of the merge request),
 * found again by a hidden marker at the start of its body and updated in
 * place, through lib/http.
 *
 * Calling sequence:
 *
 *	struct kopt_forge f = KOPT_FORGE_INIT;
 *	struct kopt_forge_opts o = { .forge = NULL, ... };   (from options)
 *	if (kopt_forge_resolve(&f, &o))        the CI environment fills gaps
 *		...
 *	kopt_forge_post(&f, marker, body, &res, NULL);   or, for --dry-run,
 *	kopt_forge_post(&f, marker, body, &res, &text);  (nothing is sent)
 *	kopt_forge_release(&f);
 *
 * Where things come from (an option wins over the environment):
 * - the forge: --forge, else GITHUB_ACTIONS=true (github), else
 *   GITLAB_CI=true (gitlab);
 * - GitHub: the project "owner/name" from GITHUB_REPOSITORY, the pull
 *   request number from the event file GITHUB_EVENT_PATH
 *   (pull_request.number, else number), else GITHUB_REF
 *   (refs/pull/<n>/merge); the API from GITHUB_API_URL, else
 *   https://api.github.com;
 * - GitLab: the project (id, or "group/name", escaped for the URL) from
 *   CI_PROJECT_ID, the merge request from CI_MERGE_REQUEST_IID, the API
 *   from CI_API_V4_URL, else https://gitlab.com/api/v4;
 * - the token from the variable the options name, else GITHUB_TOKEN or
 *   GITLAB_TOKEN.  It is handed to the HTTP client, which masks it
 *   everywhere; this module never prints it, stores it or copies it
 *   anywhere else.
 *
 * Posting makes one request to find the comment (more only when the pull
 * request has more than 100 comments) and one to write it (none when
 * the comment already says the same).  A body longer than the forge
 * accepts is cut at a line, with a note saying so.
 */

#include "buf.h"
#include "http.h"

enum kopt_forge_kind {
	KOPT_FORGE_NONE,
	KOPT_FORGE_GITHUB,
	KOPT_FORGE_GITLAB,
};

/* What the options gave; NULL for "not given". */
struct kopt_forge_opts {
	const char *forge;     /* "github" or "gitlab" */
	const char *project;   /* "owner/name", a GitLab id or path */
	const char *number;    /* pull or merge request number */
	const char *api_url;
	const char *token_env; /* name of the variable holding the token */
	int need_token;        /* 0 for --dry-run */
};

struct kopt_forge {
	enum kopt_forge_kind kind;
	char *api_url;         /* without a trailing '/' */
	char *project;
	unsigned long number;
	char *token_env;       /* where the token came from (not secret) */
	int have_token;
	struct kopt_http http; /* holds the token */
};

#define KOPT_FORGE_INIT { KOPT_FORGE_NONE, NULL, NULL, 0, NULL, 0, \
	KOPT_HTTP_INIT }

/*
 * Fill `f` from `o` and the environment.  Prints what is missing and how
 * to give it; returns 0, KOPT_EINVALID (bad or missing settings).
 */
int kopt_forge_resolve(struct kopt_forge *f, const struct kopt_forge_opts *o);

/* "github", "gitlab". */
const char *kopt_forge_name(enum kopt_forge_kind kind);

/* "o/r#7" or "group/p!9", for messages. */
void kopt_forge_describe(const struct kopt_forge *f, struct kopt_buf *out);

struct kopt_forge_result {
	const char *action;    /* "created", "updated", "unchanged", "dry run" */
	unsigned long long id; /* the comment or note (0 in a dry run) */
	struct kopt_buf url;   /* its web address, when the forge gives one */
	unsigned long requests; /* HTTP requests made */
};

#define KOPT_FORGE_RESULT_INIT { NULL, 0, KOPT_BUF_INIT, 0 }

/*
 * Post `body` (Markdown) as the pull request's comment that starts with
 * `marker` (an HTML comment, "<!-- git-kopt review -->"); the marker is
 * put first when `body` lacks it.  With `dry_run` non-NULL nothing is
 * sent: the requests are described there, the token masked.
 * Returns 0, or the HTTP client's code (message printed).
 */
int kopt_forge_post(struct kopt_forge *f, const char *marker,
		    const char *body, struct kopt_forge_result *out,
		    struct kopt_buf *dry_run);

void kopt_forge_result_release(struct kopt_forge_result *r);
void kopt_forge_release(struct kopt_forge *f);

/*
 * Readers of the forges' answers, apart for tests and fuzzing.
 */
struct kopt_forge_comment {
	unsigned long long id;
	struct kopt_buf body;
	struct kopt_buf url;
};

#define KOPT_FORGE_COMMENT_INIT { 0, KOPT_BUF_INIT, KOPT_BUF_INIT }

/*
 * The first comment of a page of comments or notes (a JSON array of
 * objects with "id" and "body", GitHub's "html_url") whose body starts
 * with `marker`: 0, KOPT_ENOTFOUND, or KOPT_EINVALID when `json` is not
 * such an array (nothing printed).
 */
int kopt_forge_find_comment(struct kopt_forge_comment *out,
			    const char *json, size_t len, const char *marker);

/*
 * The pull request number of a GitHub Actions event file's content:
 * 0, KOPT_ENOTFOUND (not a pull request event) or KOPT_EINVALID.
 */
int kopt_forge_event_number(unsigned long *out, const char *json,
			    size_t len);

void kopt_forge_comment_release(struct kopt_forge_comment *c);

#endif
