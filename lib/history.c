#include "history.h"

#include <string.h>

#include "buf.h"
#include "cache.h"
#include "repo.h"
#include "trailers.h"
#include "banned.h"

#define HISTORY_LIMIT 5000
#define CACHE_NAME "trailers"
/* changes with the format below */
#define CACHE_FORMAT "history trailers 1\n"

/* Read the commits from HEAD down to `stop` (excluded, may be NULL). */
static int walk(struct kopt_history *h, git_repository *repo,
		const git_oid *head, const git_oid *stop)
{
	git_revwalk *w = NULL;
	git_oid id;
	int n = 0, ret = 0;

	if (git_revwalk_new(&w, repo) < 0 || git_revwalk_push(w, head) < 0 ||
	    (stop && git_revwalk_hide(w, stop) < 0)) {
		ret = -1;
		goto done;
	}
	while (n++ < HISTORY_LIMIT && !git_revwalk_next(&id, w)) {
		struct kopt_trailers t = KOPT_TRAILERS_INIT;
		git_commit *c = NULL;
		const char *k, *v, *step, *learn;
		if (git_commit_lookup(&c, repo, &id) < 0) {
			ret = -1;
			break;
		}
		if (!kopt_trailers_parse(&t, git_commit_message(c), 0) &&
		    (k = kopt_trailers_get(&t, KOPT_TRAILER_KERNEL)) &&
		    (v = kopt_trailers_get(&t, KOPT_TRAILER_VERSION))) {
			step = kopt_trailers_get(&t, KOPT_TRAILER_STEP);
			learn = kopt_trailers_learn_skip(&t);
			if (kopt_step_parse(step) == KOPT_STEP_LEARN)
				kopt_strvec_pushf(&h->learned, "%s/%s", k, v);
			if (learn)
				kopt_strvec_pushf(&h->skipped, "%s/%s\t%s", k, v,
						  learn);
		}
		kopt_trailers_release(&t);
		git_commit_free(c);
	}
done:
	git_error_clear();
	git_revwalk_free(w);
	return ret;
}

/*
 * The stored answer: "<commit>\n", then a line per entry, "L\t<kv>" or
 * "S\t<kv>\\t<reason>" (lib/cache's escaping: one field), in the lists'
 * order.
 */
static int parse(struct kopt_history *h, git_oid *commit, char *text,
		 size_t len)
{
	char *f[2];
	size_t pos = 0;
	int n;

	if (kopt_cache_split(text, len, &pos, f, 1) != 1 || !f[0] ||
	    git_oid_fromstr(commit, f[0]) < 0) {
		git_error_clear();
		return -1;
	}
	while ((n = kopt_cache_split(text, len, &pos, f, 2)) >= 0) {
		if (n != 2 || !f[0] || !f[1])
			return -1;
		if (!strcmp(f[0], "L"))
			kopt_strvec_push(&h->learned, f[1]);
		else if (!strcmp(f[0], "S") && strchr(f[1], '\t'))
			kopt_strvec_push(&h->skipped, f[1]);
		else
			return -1;
	}
	return 0;
}

static void format(struct kopt_buf *out, const struct kopt_history *h,
		   const git_oid *commit)
{
	char hex[GIT_OID_HEXSZ + 1];
	size_t i;

	git_oid_tostr(hex, sizeof(hex), commit);
	kopt_cache_add_str(out, hex);
	kopt_buf_addch(out, '\n');
	for (i = 0; i < h->learned.nr; i++) {
		kopt_cache_add_str(out, "L");
		kopt_cache_add_str(out, h->learned.v[i]);
		kopt_buf_addch(out, '\n');
	}
	for (i = 0; i < h->skipped.nr; i++) {
		/* its tab is escaped, and comes back when read */
		kopt_cache_add_str(out, "S");
		kopt_cache_add_str(out, h->skipped.v[i]);
		kopt_buf_addch(out, '\n');
	}
}

static void append(struct kopt_strvec *to, const struct kopt_strvec *from)
{
	size_t i;

	for (i = 0; i < from->nr; i++)
		kopt_strvec_push(to, from->v[i]);
}

void kopt_history_read(struct kopt_history *h, git_repository *repo)
{
	struct kopt_history old = KOPT_HISTORY_INIT;
	struct kopt_cache c = KOPT_CACHE_INIT;
	struct kopt_buf text = KOPT_BUF_INIT, fmt = KOPT_BUF_INIT;
	git_oid head, stored, key;
	int have = 0;

	if (!kopt_repo_has_commits(repo) ||
	    git_reference_name_to_id(&head, repo, "HEAD") < 0) {
		git_error_clear();
		return;
	}
	kopt_cache_open(&c, repo, "history");
	kopt_buf_addstr(&fmt, CACHE_FORMAT);
	kopt_cache_key(&key, &fmt);
	if (kopt_cache_get(&c, CACHE_NAME, &key, &text)) {
		have = !parse(&old, &stored, text.buf, text.len);
		if (!have) {
			kopt_strvec_clear(&old.learned);
			kopt_strvec_clear(&old.skipped);
		}
	}
	if (have && git_oid_equal(&stored, &head)) {
		*h = old;
		goto done;
	}
	if (have && git_graph_descendant_of(repo, &head, &stored) == 1) {
		/* the new commits' trailers come first, as in one walk */
		if (walk(h, repo, &head, &stored))
			goto uncached;
		append(&h->learned, &old.learned);
		append(&h->skipped, &old.skipped);
	} else if (walk(h, repo, &head, NULL)) {
		goto uncached;
	}
	kopt_history_release(&old);
	kopt_buf_reset(&text);
	format(&text, h, &head);
	kopt_cache_put(&c, CACHE_NAME, &key, text.buf, text.len);
	goto done;
uncached:
	/* a commit that cannot be read: what was read, not stored */
	kopt_history_release(&old);
done:
	git_error_clear();
	kopt_cache_release(&c);
	kopt_buf_release(&text);
	kopt_buf_release(&fmt);
}

const char *kopt_history_skip(const struct kopt_history *h, const char *kv)
{
	size_t i, n = strlen(kv);

	for (i = 0; i < h->skipped.nr; i++)
		if (!strncmp(h->skipped.v[i], kv, n) &&
		    h->skipped.v[i][n] == '\t')
			return h->skipped.v[i] + n + 1;
	return NULL;
}

void kopt_history_release(struct kopt_history *h)
{
	kopt_strvec_clear(&h->learned);
	kopt_strvec_clear(&h->skipped);
}
