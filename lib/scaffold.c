#include "scaffold.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "journal.h"
#include "lockfile.h"
#include "repo.h"
#include "banned.h"

/* ---- layout ---- */

void kopt_layout_start_advice(struct kopt_buf *out, const struct kopt_kernel *k)
{
	struct kopt_layout l = KOPT_LAYOUT_INIT;
	struct kopt_buf dir = KOPT_BUF_INIT;
	struct kopt_error_catch quiet = KOPT_ERROR_CATCH_INIT;

	kopt_error_catch(&quiet);
	if (!kopt_layout_init(&l, k) && !kopt_layout_dir(&dir, &l, "v0"))
		kopt_buf_addf(out, "commit the base version v0 under '%s'",
			      dir.buf);
	else
		kopt_buf_addf(out, "commit the base version v0 under '%s'",
			      k->source ? k->source : "");
	kopt_error_uncatch(&quiet);
	kopt_error_catch_release(&quiet);
	kopt_layout_release(&l);
	kopt_buf_release(&dir);
}

int kopt_layout_init(struct kopt_layout *out, const struct kopt_kernel *k)
{
	struct kopt_vars vars = { 0 };
	struct kopt_buf pre = KOPT_BUF_INIT, post = KOPT_BUF_INIT;
	const char *at = k->source ? strstr(k->source, "{version}") : NULL;
	const char *slash, *end;
	char *tmpl, *what;
	int ret = 0;

	out->kernel = k;
	if (!at || strstr(at + 9, "{version}"))
		return kopt_error("kernel '%s': 'source' must name {version} "
				  "once (e.g. kernels/%s/{version})", k->name,
				  k->name);
	vars.kernel = k;
	what = kopt_xstrfmt("kernel '%s': bad 'source'", k->name);
	tmpl = kopt_strndup(k->source, (size_t)(at - k->source));
	ret = kopt_config_expand(&pre, tmpl, &vars, what);
	free(tmpl);
	end = strchr(at + 9, '/');
	tmpl = end ? kopt_strndup(at + 9, (size_t)(end - at - 9)) :
	       kopt_strdup(at + 9);
	if (!ret)
		ret = kopt_config_expand(&post, tmpl, &vars, what);
	free(tmpl);
	free(what);
	if (ret)
		goto done;
	slash = strrchr(pre.buf, '/');
	if (slash) {
		out->root = kopt_strndup(pre.buf, (size_t)(slash - pre.buf));
		out->comp_prefix = kopt_strdup(slash + 1);
	} else {
		out->root = kopt_strdup("");
		out->comp_prefix = kopt_strdup(pre.buf);
	}
	out->comp_suffix = kopt_buf_detach(&post, NULL);
	if (strstr(out->root, "..") || out->root[0] == '/') {
		ret = kopt_error("kernel '%s': 'source' must stay inside the "
				 "repository", k->name);
		kopt_layout_release(out);
	}
done:
	kopt_buf_release(&pre);
	kopt_buf_release(&post);
	return ret;
}

void kopt_layout_release(struct kopt_layout *l)
{
	free(l->root);
	free(l->comp_prefix);
	free(l->comp_suffix);
	l->root = l->comp_prefix = l->comp_suffix = NULL;
}

int kopt_layout_dir(struct kopt_buf *out, const struct kopt_layout *l,
		    const char *version)
{
	struct kopt_vars vars = { 0 };
	char *what = kopt_xstrfmt("kernel '%s': bad 'source'",
				  l->kernel->name);
	int ret;

	vars.kernel = l->kernel;
	vars.version = version;
	ret = kopt_config_expand(out, l->kernel->source, &vars, what);
	free(what);
	while (!ret && out->len && out->buf[out->len - 1] == '/')
		kopt_buf_setlen(out, out->len - 1);
	return ret;
}

char *kopt_layout_match(const struct kopt_layout *l, const char *name)
{
	const char *p;
	size_t n = strlen(name), sn = strlen(l->comp_suffix);
	char *v;

	if (!kopt_skip_prefix(name, l->comp_prefix, &p) ||
	    strlen(p) < sn || strcmp(name + n - sn, l->comp_suffix))
		return NULL;
	v = kopt_strndup(p, strlen(p) - sn);
	if (kopt_version_number(v) < 0) {
		free(v);
		return NULL;
	}
	return v;
}

int kopt_layout_versions(struct kopt_strvec *out, git_repository *repo,
			 const git_tree *tree, const struct kopt_layout *l)
{
	git_tree *root = NULL;
	git_tree_entry *e = NULL;
	size_t i, n;

	if (!*l->root) {
		if (git_tree_dup(&root, (git_tree *)tree) < 0)
			return kopt_error("%s", kopt_git_error("cannot read tree"));
	} else if (git_tree_entry_bypath(&e, tree, l->root) < 0 ||
		   git_tree_entry_type(e) != GIT_OBJECT_TREE ||
		   git_tree_lookup(&root, repo, git_tree_entry_id(e)) < 0) {
		git_error_clear();
		git_tree_entry_free(e);
		return 0;
	}
	git_tree_entry_free(e);
	n = git_tree_entrycount(root);
	for (i = 0; i < n; i++) {
		const git_tree_entry *te = git_tree_entry_byindex(root, i);
		char *v;
		if (git_tree_entry_type(te) != GIT_OBJECT_TREE)
			continue;
		v = kopt_layout_match(l, git_tree_entry_name(te));
		if (v)
			kopt_strvec_push(out, v);
		free(v);
	}
	git_tree_free(root);
	if (out->nr > 1)
		qsort(out->v, out->nr, sizeof(*out->v), kopt_version_cmp);
	return 0;
}

/* ---- renaming ---- */

static int is_ident(int c)
{
	return isalnum(c) || c == '_';
}

void kopt_rename_init(struct kopt_rename *r, long from, long to, int enabled)
{
	r->from = from;
	r->to = to;
	r->enabled = enabled && from != to;
	kopt_strvec_init(&r->stems);
	kopt_strvec_init(&r->files);
	kopt_strvec_init(&r->kept_files);
	kopt_strvec_init(&r->keep);
}

void kopt_rename_release(struct kopt_rename *r)
{
	kopt_strvec_clear(&r->stems);
	kopt_strvec_clear(&r->files);
	kopt_strvec_clear(&r->kept_files);
	kopt_strvec_clear(&r->keep);
}

static int longer_first(const void *a, const void *b)
{
	const char *sa = *(const char *const *)a, *sb = *(const char *const *)b;
	size_t la = strlen(sa), lb = strlen(sb);

	if (la != lb)
		return la > lb ? -1 : 1;
	return strcmp(sa, sb);
}

/* The length of the stem of a file name ("a.b.c" -> 1), 0 when none. */
static size_t stem_len(const char *name)
{
	const char *dot = strchr(name, '.');
	size_t n = dot ? (size_t)(dot - name) : 0, k;

	if (!n || !dot[1])
		return 0;
	for (k = 0; k < n; k++)
		if (!is_ident((unsigned char)name[k]))
			return 0;
	return n;
}

void kopt_rename_add_file(struct kopt_rename *r, const char *name,
			  const struct kopt_strvec *prefixes)
{
	size_t n = stem_len(name), i;
	char *stem;

	if (!r->enabled || r->from != 0 || !n)
		return;
	stem = kopt_strndup(name, n);
	for (i = 0; i < prefixes->nr; i++) {
		const char *p = prefixes->v[i];
		size_t pl = strlen(p);
		if (!pl || strncmp(stem, p, pl) || (stem[pl] && stem[pl] != '_'))
			continue;
		if (!kopt_strvec_has(&r->stems, stem)) {
			kopt_strvec_push(&r->stems, stem);
			qsort(r->stems.v, r->stems.nr, sizeof(*r->stems.v),
			      longer_first);
		}
		if (!kopt_strvec_has(&r->files, name))
			kopt_strvec_push(&r->files, name);
		break;
	}
	free(stem);
}

/* From v0: the length of the stem `tok` begins with, or 0. */
static size_t stem_of(const struct kopt_rename *r, const char *tok,
		      size_t len)
{
	size_t i;

	for (i = 0; i < r->stems.nr; i++) {
		size_t sl = strlen(r->stems.v[i]);
		if (sl <= len && !memcmp(tok, r->stems.v[i], sl) &&
		    (sl == len || tok[sl] == '_'))
			return sl;
	}
	return 0;
}

static int has_n(const struct kopt_strvec *v, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < v->nr; i++)
		if (strlen(v->v[i]) == len && !memcmp(v->v[i], s, len))
			return 1;
	return 0;
}

/* Whether `word` occurs in text as a whole word (or file name). */
static int has_word(const char *text, size_t len, const char *word,
		    int dot_ends)
{
	size_t wl = strlen(word);
	const char *p = text, *end = text + len;

	while (p < end && (p = memmem(p, (size_t)(end - p), word, wl))) {
		const char *after = p + wl;
		if ((p == text || !is_ident((unsigned char)p[-1])) &&
		    (after == end || (!is_ident((unsigned char)*after) &&
				      (dot_ends || *after != '.'))))
			return 1;
		p++;
	}
	return 0;
}

void kopt_rename_scan_shared(struct kopt_rename *r, const char *text,
			     size_t len)
{
	const char *p = text, *end = text + len;
	size_t i;

	if (!r->enabled || r->from != 0 || !r->stems.nr)
		return;
	/* identifiers the shared code uses: the harness's entry points */
	while (p < end) {
		const char *s;
		size_t sl;
		if (!is_ident((unsigned char)*p)) {
			p++;
			continue;
		}
		s = p;
		while (p < end && is_ident((unsigned char)*p))
			p++;
		sl = stem_of(r, s, (size_t)(p - s));
		if (sl && sl < (size_t)(p - s) &&
		    !has_n(&r->keep, s, (size_t)(p - s))) {
			char *tok = kopt_strndup(s, (size_t)(p - s));
			kopt_strvec_push(&r->keep, tok);
			free(tok);
		}
	}
	/*
	 * Files the shared code names (a Makefile listing it), or, for a
	 * module imported by name, whose stem it names: they keep their names.
	 */
	for (i = 0; i < r->files.nr; i++) {
		const char *f = r->files.v[i];
		int kept = has_word(text, len, f, 1);
		if (!kept && kopt_ends_with(f, ".py")) {
			char *stem = kopt_strndup(f, stem_len(f));
			kept = has_word(text, len, stem, 0);
			free(stem);
		}
		if (kept && !kopt_strvec_has(&r->kept_files, f))
			kopt_strvec_push(&r->kept_files, f);
	}
}

static int file_renamed(const struct kopt_rename *r, const char *name,
			size_t len)
{
	return has_n(&r->files, name, len) && !has_n(&r->kept_files, name, len);
}

/* Whether some file of this stem is renamed. */
static int stem_renamed(const struct kopt_rename *r, const char *stem,
			size_t len)
{
	size_t i;

	for (i = 0; i < r->files.nr; i++)
		if (stem_len(r->files.v[i]) == len &&
		    !memcmp(r->files.v[i], stem, len) &&
		    !kopt_strvec_has(&r->kept_files, r->files.v[i]))
			return 1;
	return 0;
}

/*
 * From v0: the token at `tok` (`len` bytes, followed by the text up to
 * `end`).  A bare stem followed by ".ext" names a file: it changes with
 * that file; a bare stem alone (a module import) changes when its file
 * does; a longer identifier beginning with a stem and '_' gets the
 * suffix unless the shared code uses it.
 */
static int rename_base_token(struct kopt_buf *out, const struct kopt_rename *r,
			     const char *tok, size_t len, const char *end)
{
	size_t sl = stem_of(r, tok, len), el = 0;
	int change;

	if (!sl) {
		kopt_buf_add(out, tok, len);
		return 0;
	}
	if (sl == len) {
		const char *after = tok + len;
		if (after + 1 < end && *after == '.' &&
		    is_ident((unsigned char)after[1])) {
			while (after + 1 + el < end &&
			       is_ident((unsigned char)after[1 + el]))
				el++;
			change = has_n(&r->files, tok, len + 1 + el) ?
				 file_renamed(r, tok, len + 1 + el) : 0;
		} else {
			change = stem_renamed(r, tok, len);
		}
	} else {
		change = !has_n(&r->keep, tok, len);
	}
	if (!change) {
		kopt_buf_add(out, tok, len);
		return 0;
	}
	kopt_buf_add(out, tok, sl);
	kopt_buf_addf(out, "_v%ld", r->to);
	kopt_buf_add(out, tok + sl, len - sl);
	return 1;
}

/* From v<N>: "_v<N>" at the end of the token or before '_'. */
static int rename_suffix_token(struct kopt_buf *out,
			       const struct kopt_rename *r, const char *tok,
			       size_t len)
{
	size_t i, changed = 0;

	for (i = 0; i < len; ) {
		size_t j = i + 2, d;
		if (i > 0 && tok[i] == '_' && i + 2 < len &&
		    (tok[i + 1] == 'v' || tok[i + 1] == 'V') &&
		    isdigit((unsigned char)tok[i + 2])) {
			long n = 0;
			while (j < len && isdigit((unsigned char)tok[j]) &&
			       n < 100000000)
				n = n * 10 + (tok[j++] - '0');
			d = j - (i + 2);
			if (n == r->from && (d == 1 || tok[i + 2] != '0') &&
			    (j == len || tok[j] == '_')) {
				kopt_buf_addf(out, "_%c%ld", tok[i + 1], r->to);
				changed = 1;
				i = j;
				continue;
			}
		}
		kopt_buf_addch(out, tok[i++]);
	}
	return (int)changed;
}

size_t kopt_rename_text(struct kopt_buf *out, const struct kopt_rename *r,
			const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t n = 0;

	if (!r->enabled || (r->from == 0 && !r->stems.nr)) {
		kopt_buf_add(out, text, len);
		return 0;
	}
	while (p < end) {
		const char *s = p;
		if (!is_ident((unsigned char)*p)) {
			while (p < end && !is_ident((unsigned char)*p))
				p++;
			kopt_buf_add(out, s, (size_t)(p - s));
			continue;
		}
		while (p < end && is_ident((unsigned char)*p))
			p++;
		if (r->from == 0)
			n += rename_base_token(out, r, s, (size_t)(p - s), end);
		else
			n += rename_suffix_token(out, r, s, (size_t)(p - s));
	}
	return n;
}

void kopt_rename_path(struct kopt_buf *out, const struct kopt_rename *r,
		      const char *path)
{
	const char *base = strrchr(path, '/');
	size_t sl;

	if (!r->enabled || r->from != 0) {
		kopt_rename_text(out, r, path, strlen(path));
		return;
	}
	/* from v0 only the versioned files change names, not folders */
	base = base ? base + 1 : path;
	kopt_buf_add(out, path, (size_t)(base - path));
	if (!file_renamed(r, base, strlen(base))) {
		kopt_buf_addstr(out, base);
		return;
	}
	sl = stem_len(base);
	kopt_buf_add(out, base, sl);
	kopt_buf_addf(out, "_v%ld%s", r->to, base + sl);
}

/* ---- an interrupted design ---- */

int kopt_scaffold_journal_begin(struct kopt_journal *j, git_repository *repo,
				const git_oid *head,
				const struct kopt_scaffold_paths *p)
{
	char id[GIT_OID_HEXSZ + 1];

	git_oid_tostr(id, sizeof(id), head);
	kopt_journal_set(j, "head", id);
	kopt_journal_set(j, "branch", p->branch);
	kopt_journal_set(j, "to-dir", p->to_dir);
	kopt_journal_set(j, "devlog", p->devlog);
	kopt_journal_set(j, "task", p->task);
	kopt_journal_set(j, "task-existed", p->task_existed ? "1" : "0");
	return kopt_journal_begin(j, repo, "design");
}

/* Whether the commit of `ref` is the killed run's: made on `head`. */
static int made_on(git_repository *repo, git_reference *ref,
		   const git_oid *head)
{
	git_commit *c = NULL;
	int ours;

	if (!git_reference_target(ref) ||
	    git_commit_lookup(&c, repo, git_reference_target(ref)) < 0) {
		git_error_clear();
		return 0;
	}
	ours = git_commit_parentcount(c) == 1 &&
	       git_oid_equal(git_commit_parent_id(c, 0), head);
	git_commit_free(c);
	return ours;
}

/* Stage what the branch's commit changed, keeping what else is staged. */
static int finish_design(git_repository *repo, git_reference *ref)
{
	git_commit *c = NULL, *parent = NULL;
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	git_index *idx = NULL;
	size_t i;
	int ret;

	/* libgit2 would not name the lock a killed run left */
	if ((ret = kopt_repo_index_unlocked(repo)))
		return ret;
	if (git_commit_lookup(&c, repo, git_reference_target(ref)) < 0 ||
	    git_commit_parent(&parent, c, 0) < 0 ||
	    git_commit_tree(&a, parent) < 0 || git_commit_tree(&b, c) < 0 ||
	    git_diff_tree_to_tree(&diff, repo, a, b, NULL) < 0 ||
	    git_repository_index(&idx, repo) < 0 || git_index_read(idx, 1) < 0)
		ret = -1;
	for (i = 0; !ret && i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		if (git_index_add_bypath(idx, d->new_file.path) < 0)
			ret = -1;
	}
	if (!ret && git_index_write(idx) < 0)
		ret = -1;
	if (ret)
		ret = kopt_error("cannot stage the interrupted design: %s",
				 kopt_git_error("unknown error"));
	git_index_free(idx);
	git_diff_free(diff);
	git_tree_free(a);
	git_tree_free(b);
	git_commit_free(parent);
	git_commit_free(c);
	return ret;
}

static int unlink_at(const char *top, const char *rel)
{
	char *path = kopt_xstrfmt("%s%s", top, rel);
	int ret = 0;

	if (unlink(path) && errno != ENOENT)
		ret = kopt_error("cannot remove '%s': %s", rel,
				 strerror(errno));
	free(path);
	return ret;
}

/* Put the devlog back as the commit the design started from has it. */
static int restore_devlog(git_repository *repo, const git_oid *head,
			  const char *top, const char *devlog)
{
	git_commit *c = NULL;
	git_tree *tree = NULL;
	struct kopt_buf text = KOPT_BUF_INIT;
	char *path;
	int ret;

	if (git_commit_lookup(&c, repo, head) < 0 ||
	    git_commit_tree(&tree, c) < 0) {
		git_commit_free(c);
		return kopt_error("cannot read the commit the design started "
				  "from: %s", kopt_git_error("unknown error"));
	}
	ret = kopt_repo_read_tree(&text, repo, tree, devlog);
	if (ret == KOPT_ENOTFOUND) {
		ret = unlink_at(top, devlog);
	} else if (!ret) {
		path = kopt_xstrfmt("%s%s", top, devlog);
		ret = kopt_write_file_atomic(path, text.buf, text.len, 0644);
		free(path);
	}
	kopt_buf_release(&text);
	git_tree_free(tree);
	git_commit_free(c);
	return ret;
}

/*
 * A run killed while it moved HEAD may have logged the move and not
 * made it: drop that last line of HEAD's log, which names the run's
 * commit.
 */
static void drop_head_log(git_repository *repo, const git_oid *commit)
{
	git_reflog *log = NULL;
	const git_reflog_entry *e;

	if (git_reflog_read(&log, repo, "HEAD") < 0) {
		git_error_clear();
		return;
	}
	e = git_reflog_entry_byindex(log, 0);
	if (e && git_oid_equal(git_reflog_entry_id_new(e), commit) &&
	    (git_reflog_drop(log, 0, 0) < 0 || git_reflog_write(log) < 0))
		git_error_clear();
	git_reflog_free(log);
}

static int undo_design(git_repository *repo, const struct kopt_journal *j,
		       const git_oid *head, const char *top)
{
	const char *branch = kopt_journal_get(j, "branch");
	const char *to_dir = kopt_journal_get(j, "to-dir");
	const char *devlog = kopt_journal_get(j, "devlog");
	const char *task = kopt_journal_get(j, "task");
	const char *existed = kopt_journal_get(j, "task-existed");
	git_reference *ref = NULL;
	char *dir;
	int ret = 0;

	if (!git_reference_lookup(&ref, repo, branch)) {
		if (made_on(repo, ref, head)) {
			drop_head_log(repo, git_reference_target(ref));
			if (git_reference_delete(ref) < 0)
				ret = kopt_error("cannot delete '%s': %s",
						 branch,
						 kopt_git_error("unknown error"));
		}
		git_reference_free(ref);
	}
	/* a branch created halfway may have left its log alone */
	git_reflog_delete(repo, branch);
	git_error_clear();
	if (ret)
		return ret;
	if (*to_dir) {
		dir = kopt_xstrfmt("%s%s", top, to_dir);
		kopt_remove_tree(dir);
		free(dir);
	}
	ret = restore_devlog(repo, head, top, devlog);
	if (!ret && *task && existed && !strcmp(existed, "0"))
		ret = unlink_at(top, task);
	return ret;
}

int kopt_scaffold_recover(enum kopt_scaffold_recovery *out, char **branch,
			  git_repository *repo, const char *top)
{
	struct kopt_journal j = KOPT_JOURNAL_INIT;
	git_reference *head_ref = NULL, *ref = NULL;
	const char *name;
	git_oid head;
	int ret;

	*out = KOPT_SCAFFOLD_NONE;
	*branch = NULL;
	ret = kopt_journal_read(&j, repo, "design");
	if (ret == KOPT_ENOTFOUND) {
		kopt_journal_release(&j);
		return 0;
	}
	if (ret)
		goto done;
	name = kopt_journal_get(&j, "branch");
	if (!j.complete || !name || !kopt_journal_get(&j, "to-dir") ||
	    !kopt_journal_get(&j, "devlog") || !kopt_journal_get(&j, "task") ||
	    !kopt_journal_get(&j, "head") ||
	    git_oid_fromstr(&head, kopt_journal_get(&j, "head")) < 0) {
		/* killed while writing it: nothing had changed yet */
		ret = kopt_journal_end(&j);
		goto done;
	}
	if (!git_reference_lookup(&head_ref, repo, "HEAD") &&
	    git_reference_type(head_ref) == GIT_REFERENCE_SYMBOLIC &&
	    !strcmp(git_reference_symbolic_target(head_ref), name) &&
	    !git_reference_lookup(&ref, repo, name) &&
	    made_on(repo, ref, &head)) {
		ret = finish_design(repo, ref);
		*out = KOPT_SCAFFOLD_FINISHED;
	} else {
		git_error_clear();
		ret = undo_design(repo, &j, &head, top);
		*out = KOPT_SCAFFOLD_UNDONE;
	}
	if (!ret)
		ret = kopt_journal_end(&j);
	if (!ret)
		*branch = kopt_strdup(name + (!strncmp(name, "refs/heads/", 11) ?
					      11 : 0));
	else
		*out = KOPT_SCAFFOLD_NONE;
done:
	git_reference_free(ref);
	git_reference_free(head_ref);
	kopt_journal_release(&j);
	return ret;
}
