#include "changes.h"

#include <string.h>

#include "buf.h"
#include "error.h"
#include "banned.h"

struct walk {
	git_repository *repo;
	const struct kopt_strvec *specs;
	const struct kopt_index *idx;
	kopt_changes_fn fn;
	void *data;
	struct kopt_buf path;   /* the directory being walked, with '/' */
};

/* Whether the path in w->path (a directory when `dir`) is wanted. */
static int wanted(const struct walk *w, int dir)
{
	const char *p = w->path.buf;
	size_t len = w->path.len, i;

	if (!w->specs)
		return 1;
	for (i = 0; i < w->specs->nr; i++) {
		const char *s = w->specs->v[i];
		size_t n = strlen(s);
		if (len >= n && !memcmp(p, s, n) &&
		    (len == n ? !dir || s[n - 1] == '/' :
		     s[n - 1] == '/' || p[n] == '/'))
			return 1;       /* the spec, or under it */
		if (dir && n > len && !memcmp(p, s, len))
			return 1;       /* a directory on the way to it */
	}
	return 0;
}

static int emit(struct walk *w, char status)
{
	if (!wanted(w, 0))
		return 0;
	return w->fn(status, w->path.buf, w->data);
}

/*
 * git's order of two names in one directory: as bytes, a directory's
 * name followed by '/'.
 */
static int name_cmp(const char *a, size_t alen, int adir, const char *b,
		    size_t blen, int bdir)
{
	size_t n = alen < blen ? alen : blen;
	int c = memcmp(a, b, n);
	unsigned char ca, cb;

	if (c)
		return c;
	ca = n < alen ? (unsigned char)a[n] : adir ? '/' : 0;
	cb = n < blen ? (unsigned char)b[n] : bdir ? '/' : 0;
	return (int)ca - (int)cb;
}

static int read_error(const git_oid *id)
{
	return kopt_error("cannot read tree %s: %s", git_oid_tostr_s(id),
			  kopt_git_error("missing object"));
}

/* Every blob of `tree` (under w->path) as `status`. */
static int emit_tree(struct walk *w, const git_tree *tree, char status)
{
	size_t i, n = git_tree_entrycount(tree), at = w->path.len;
	int ret = 0;

	for (i = 0; !ret && i < n; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(tree, i);
		kopt_buf_setlen(&w->path, at);
		kopt_buf_addstr(&w->path, git_tree_entry_name(e));
		if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
			git_tree *sub = NULL;
			kopt_buf_addch(&w->path, '/');
			if (!wanted(w, 1))
				continue;
			if (git_tree_lookup(&sub, w->repo,
					    git_tree_entry_id(e)) < 0)
				ret = read_error(git_tree_entry_id(e));
			else
				ret = emit_tree(w, sub, status);
			git_tree_free(sub);
		} else {
			ret = emit(w, status);
		}
	}
	kopt_buf_setlen(&w->path, at);
	return ret;
}

/* The subtree of `tree` named by entry `e`, or NULL with an error. */
static int subtree(git_tree **out, struct walk *w, const git_tree_entry *e)
{
	*out = NULL;
	if (!e || git_tree_entry_type(e) != GIT_OBJECT_TREE)
		return 0;
	if (git_tree_lookup(out, w->repo, git_tree_entry_id(e)) < 0)
		return read_error(git_tree_entry_id(e));
	return 0;
}

/* ---- tree against tree ---- */

static int walk_trees(struct walk *w, const git_tree *a, const git_tree *b)
{
	size_t i = 0, j = 0, na = a ? git_tree_entrycount(a) : 0;
	size_t nb = b ? git_tree_entrycount(b) : 0, at = w->path.len;
	int ret = 0;

	if (a && b && git_oid_equal(git_tree_id(a), git_tree_id(b)))
		return 0;
	while (!ret && (i < na || j < nb)) {
		const git_tree_entry *ea = i < na ? git_tree_entry_byindex(a, i)
				       : NULL;
		const git_tree_entry *eb = j < nb ? git_tree_entry_byindex(b, j)
				       : NULL;
		int da = ea && git_tree_entry_type(ea) == GIT_OBJECT_TREE;
		int db = eb && git_tree_entry_type(eb) == GIT_OBJECT_TREE;
		const git_tree_entry *e;
		int c, dir;

		if (!ea)
			c = 1;
		else if (!eb)
			c = -1;
		else
			c = name_cmp(git_tree_entry_name(ea),
				     strlen(git_tree_entry_name(ea)), da,
				     git_tree_entry_name(eb),
				     strlen(git_tree_entry_name(eb)), db);
		e = c <= 0 ? ea : eb;
		dir = c <= 0 ? da : db;
		kopt_buf_setlen(&w->path, at);
		kopt_buf_addstr(&w->path, git_tree_entry_name(e));
		if (dir)
			kopt_buf_addch(&w->path, '/');
		if (dir && !wanted(w, 1)) {
			/* not on the way to anything wanted */
		} else if (dir && c == 0 && git_oid_equal(git_tree_entry_id(ea),
							  git_tree_entry_id(eb))) {
			/* the same tree id: nothing changed under it */
		} else if (dir) {
			git_tree *sa = NULL, *sb = NULL;
			ret = subtree(&sa, w, c <= 0 ? ea : NULL);
			if (!ret)
				ret = subtree(&sb, w, c >= 0 ? eb : NULL);
			if (!ret)
				ret = walk_trees(w, sa, sb);
			git_tree_free(sa);
			git_tree_free(sb);
		} else if (c < 0) {
			ret = emit(w, 'D');
		} else if (c > 0) {
			ret = emit(w, 'A');
		} else if (!git_oid_equal(git_tree_entry_id(ea),
					  git_tree_entry_id(eb)) ||
			   git_tree_entry_filemode(ea) !=
			   git_tree_entry_filemode(eb)) {
			ret = emit(w, 'M');
		}
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
	}
	kopt_buf_setlen(&w->path, at);
	return ret;
}

int kopt_changes_trees(git_repository *repo, const git_tree *base,
		       const git_tree *tree, const struct kopt_strvec *specs,
		       kopt_changes_fn fn, void *data)
{
	struct walk w = { repo, specs, NULL, fn, data, KOPT_BUF_INIT };
	int ret = walk_trees(&w, base, tree);

	kopt_buf_release(&w.path);
	return ret;
}

/* ---- index against tree ---- */

/* Entries of a commit: stage 0, no intent to add. */
static int committed(const struct kopt_index_entry *e)
{
	return !e->stage && !e->intent_to_add;
}

/*
 * The cache-tree child of node `t` named `name`, or -1.  The search
 * goes once round the children, from where the last search of the same
 * node stopped (*k, the child's number, and *c, its node; 0 and t + 1
 * at first): the walk asks for the children in name order, which among
 * names of one length is the cache-tree's order too, so that a folder
 * of a thousand kernels costs a thousand comparisons, not half a
 * million.
 */
static long tree_child(const struct kopt_index_tree *trees, long t,
		       const char *name, size_t len, size_t *k, size_t *c)
{
	size_t n, tries;

	if (t < 0)
		return -1;
	n = trees[t].subtrees;
	for (tries = 0; tries < n; tries++) {
		size_t here;
		int hit;
		if (*k >= n) {
			*k = 0;
			*c = (size_t)t + 1;
		}
		here = *c;
		hit = trees[here].name_len == len &&
		      !memcmp(trees[here].name, name, len);
		(*k)++;
		*c = trees[here].next;
		if (hit)
			return (long)here;
	}
	return -1;
}

/* Every committed entry in [lo, hi), all under w->path, as added. */
static int emit_index(struct walk *w, size_t lo, size_t hi)
{
	size_t at = w->path.len, i;
	int ret = 0;

	for (i = lo; !ret && i < hi; i++) {
		struct kopt_index_entry e;
		kopt_index_entry(&e, w->idx, i);
		if (!committed(&e))
			continue;
		kopt_buf_setlen(&w->path, at);
		kopt_buf_add(&w->path, e.path + at, e.path_len - at);
		ret = emit(w, 'A');
	}
	kopt_buf_setlen(&w->path, at);
	return ret;
}

static int walk_index(struct walk *w, const git_tree *t,
		      const struct kopt_index_tree *trees, long node,
		      size_t lo, size_t hi)
{
	size_t at = w->path.len, j = 0, nt = t ? git_tree_entrycount(t) : 0;
	size_t i = lo, hint_k = 0, hint_c = node >= 0 ? (size_t)node + 1 : 0;
	int ret = 0;

	if (node >= 0 && trees[node].entries >= 0 && t &&
	    git_oid_equal(&trees[node].id, git_tree_id(t)))
		return 0;       /* the same tree id: nothing changed under it */
	while (!ret && (i < hi || j < nt)) {
		struct kopt_index_entry e;
		const git_tree_entry *te = j < nt ?
					   git_tree_entry_byindex(t, j) : NULL;
		int tdir = te && git_tree_entry_type(te) == GIT_OBJECT_TREE;
		const char *name = NULL, *slash = NULL;
		size_t nlen = 0, dhi = i + 1;
		int c;

		if (i < hi) {
			kopt_index_entry(&e, w->idx, i);
			if (!committed(&e)) {
				i++;
				continue;
			}
			name = e.path + at;
			slash = memchr(name, '/', e.path_len - at);
			nlen = slash ? (size_t)(slash - name) :
			       e.path_len - at;
			if (slash) {
				size_t dlo;
				kopt_index_range(&dlo, &dhi, w->idx, e.path,
						 (size_t)(slash - e.path) + 1);
			}
		}
		if (!name)
			c = 1;
		else if (!te)
			c = -1;
		else
			c = name_cmp(name, nlen, slash != NULL,
				     git_tree_entry_name(te),
				     strlen(git_tree_entry_name(te)), tdir);
		kopt_buf_setlen(&w->path, at);
		if (c <= 0) {
			kopt_buf_add(&w->path, name, nlen);
			if (slash)
				kopt_buf_addch(&w->path, '/');
		} else {
			kopt_buf_addstr(&w->path, git_tree_entry_name(te));
			if (tdir)
				kopt_buf_addch(&w->path, '/');
		}
		if (c < 0) {
			/* in the index only */
			if (!slash)
				ret = emit(w, 'A');
			else if (wanted(w, 1))
				ret = emit_index(w, i, dhi);
		} else if (c > 0) {
			/* in the tree only */
			if (!tdir) {
				ret = emit(w, 'D');
			} else if (wanted(w, 1)) {
				git_tree *sub = NULL;
				ret = subtree(&sub, w, te);
				if (!ret)
					ret = emit_tree(w, sub, 'D');
				git_tree_free(sub);
			}
		} else if (slash) {
			long child = tree_child(trees, node, name, nlen,
						&hint_k, &hint_c);
			if (child >= 0 && trees[child].entries >= 0 &&
			    git_oid_equal(&trees[child].id,
					  git_tree_entry_id(te))) {
				/* the same tree id: nothing changed under it */
			} else if (wanted(w, 1)) {
				git_tree *sub = NULL;
				ret = subtree(&sub, w, te);
				if (!ret)
					ret = walk_index(w, sub, trees, child,
							 i, dhi);
				git_tree_free(sub);
			}
		} else if (!git_oid_equal(&e.id, git_tree_entry_id(te)) ||
			   e.mode != (unsigned)git_tree_entry_filemode(te)) {
			ret = emit(w, 'M');
		}
		if (c <= 0)
			i = slash ? dhi : i + 1;
		if (c >= 0)
			j++;
	}
	kopt_buf_setlen(&w->path, at);
	return ret;
}

int kopt_changes_index(git_repository *repo, const git_tree *base,
		       const struct kopt_index *idx,
		       const struct kopt_strvec *specs, kopt_changes_fn fn,
		       void *data)
{
	struct walk w = { repo, specs, idx, fn, data, KOPT_BUF_INIT };
	size_t nr;
	const struct kopt_index_tree *trees = kopt_index_trees(idx, &nr);
	int ret = walk_index(&w, base, trees, trees ? 0 : -1, 0,
			     kopt_index_nr(idx));

	kopt_buf_release(&w.path);
	return ret;
}
