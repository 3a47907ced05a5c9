#include "repo.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "error.h"
#include "runner.h"
#include "banned.h"

/* ---- branches ---- */

void kopt_repo_branch_name(struct kopt_buf *out, const char *kernel,
			   const char *version)
{
	kopt_buf_addf(out, KOPT_BRANCH_PREFIX "%s/%s", kernel, version);
}

int kopt_repo_branch_parse(const char *name, char **kernel, char **version)
{
	const char *rest, *slash;
	char *k;

	kopt_skip_prefix(name, "refs/heads/", &name);
	if (!kopt_skip_prefix(name, KOPT_BRANCH_PREFIX, &rest) ||
	    !(slash = strrchr(rest, '/')) || !kopt_version_valid(slash + 1))
		return 0;
	k = kopt_strndup(rest, (size_t)(slash - rest));
	if (!kopt_valid_name(k)) {
		free(k);
		return 0;
	}
	*kernel = k;
	*version = kopt_strdup(slash + 1);
	return 1;
}

static char *branch_ref(const char *kernel, const char *version)
{
	return kopt_xstrfmt("refs/heads/" KOPT_BRANCH_PREFIX "%s/%s", kernel,
			    version);
}

int kopt_repo_branch_exists(git_repository *repo, const char *kernel,
			    const char *version)
{
	char *name = branch_ref(kernel, version);
	git_reference *ref = NULL;
	int ret = git_reference_lookup(&ref, repo, name);

	free(name);
	git_reference_free(ref);
	if (!ret)
		return 1;
	if (ret == GIT_ENOTFOUND || ret == GIT_EINVALIDSPEC) {
		git_error_clear();
		return 0;
	}
	return kopt_error("cannot read branches: %s",
			  kopt_git_error("unknown error"));
}

struct list_data {
	struct kopt_strvec *out;
	size_t skip;
};

static int collect_branch(const char *name, void *payload)
{
	struct list_data *d = payload;
	const char *v = name + d->skip;

	if (strlen(name) > d->skip && kopt_version_number(v) >= 0)
		kopt_strvec_push(d->out, v);
	return 0;
}

int kopt_repo_branch_list(git_repository *repo, const char *kernel,
			  struct kopt_strvec *out)
{
	char *glob = kopt_xstrfmt("refs/heads/" KOPT_BRANCH_PREFIX "%s/*",
				  kernel);
	struct list_data d = { out, strlen(glob) - 1 };
	int ret = git_reference_foreach_glob(repo, glob, collect_branch, &d);

	free(glob);
	if (ret < 0)
		return kopt_error("cannot list branches: %s",
				  kopt_git_error("unknown error"));
	if (out->nr > 1)
		qsort(out->v, out->nr, sizeof(*out->v), kopt_version_cmp);
	return 0;
}

int kopt_repo_branch_create(git_repository *repo, const char *kernel,
			    const char *version, const git_oid *commit)
{
	struct kopt_buf name = KOPT_BUF_INIT;
	git_commit *c = NULL;
	git_reference *ref = NULL;
	int ret = 0;

	kopt_repo_branch_name(&name, kernel, version);
	if (git_commit_lookup(&c, repo, commit) < 0) {
		ret = kopt_error("cannot create branch '%s': %s", name.buf,
				 kopt_git_error("no such commit"));
		goto done;
	}
	if (git_branch_create(&ref, repo, name.buf, c, 0) < 0) {
		const git_error *e = git_error_last();
		if (e && e->klass == GIT_ERROR_REFERENCE &&
		    kopt_repo_branch_exists(repo, kernel, version) == 1) {
			kopt_error("branch '%s' already exists", name.buf);
			ret = KOPT_EEXISTS;
		} else {
			ret = kopt_error("cannot create branch '%s': %s",
					 name.buf, kopt_git_error("unknown error"));
		}
	}
done:
	git_reference_free(ref);
	git_commit_free(c);
	kopt_buf_release(&name);
	return ret;
}

int kopt_repo_branch_switch(git_repository *repo, const char *kernel,
			    const char *version)
{
	char *name = branch_ref(kernel, version);
	int ret = 0;

	if (git_repository_set_head(repo, name) < 0)
		ret = kopt_error("cannot switch to '%s': %s",
				 name + strlen("refs/heads/"),
				 kopt_git_error("unknown error"));
	free(name);
	return ret;
}

int kopt_repo_branch_delete(git_repository *repo, const char *kernel,
			    const char *version)
{
	char *name = branch_ref(kernel, version);
	git_reference *ref = NULL;
	int ret = 0;

	if (!git_reference_lookup(&ref, repo, name)) {
		if (git_reference_delete(ref) < 0)
			ret = kopt_error("cannot delete '%s': %s", name,
					 kopt_git_error("unknown error"));
	} else {
		git_error_clear();
	}
	git_reference_free(ref);
	free(name);
	return ret;
}

/* ---- commits ---- */

/* "Name <email> 1795964954 +0100" */
static int parse_ident(git_signature **out, const char *ident)
{
	const char *lt = strchr(ident, '<'), *gt = strrchr(ident, '>');
	char *name = NULL, *email = NULL, *end;
	long long when;
	long tz;
	int sign, ret;
	size_t n;

	if (!lt || !gt || gt < lt)
		return -1;
	n = (size_t)(lt - ident);
	while (n && ident[n - 1] == ' ')
		n--;
	when = strtoll(gt + 1, &end, 10);
	while (*end == ' ')
		end++;
	sign = *end == '-' ? -1 : 1;
	if (*end != '+' && *end != '-')
		return -1;
	tz = strtol(end + 1, NULL, 10);
	name = kopt_strndup(ident, n);
	email = kopt_strndup(lt + 1, (size_t)(gt - lt - 1));
	ret = git_signature_new(out, name, email, (git_time_t)when,
				sign * (int)(tz / 100 * 60 + tz % 100));
	free(name);
	free(email);
	return ret < 0 ? -1 : 0;
}

int kopt_repo_signature(git_signature **out, git_repository *repo,
			const char *which)
{
	struct kopt_child c = KOPT_CHILD_INIT;
	const char *wd = git_repository_workdir(repo);
	int ret = 0;

	kopt_strvec_push(&c.args, "git");
	kopt_strvec_push(&c.args, "var");
	kopt_strvec_push(&c.args, strcmp(which, "author") ?
			 "GIT_COMMITTER_IDENT" : "GIT_AUTHOR_IDENT");
	c.dir = wd ? wd : git_repository_path(repo);
	c.flags = KOPT_CHILD_CAPTURE_OUT | KOPT_CHILD_CAPTURE_ERR |
		  KOPT_CHILD_NO_STDIN;
	if (kopt_child_run(&c)) {
		ret = -1;
		goto done;
	}
	kopt_buf_rtrim(&c.out);
	kopt_buf_rtrim(&c.err);
	if (c.exit_code) {
		const char *nl = strrchr(c.err.buf, '\n');
		ret = kopt_error("cannot tell who the %s is: %s", which,
				 c.err.len ? (nl ? nl + 1 : c.err.buf) :
				 "'git var' failed");
		goto done;
	}
	if (parse_ident(out, c.out.buf))
		ret = kopt_error("cannot parse the %s identity '%s'", which,
				 c.out.buf);
done:
	kopt_child_release(&c);
	return ret;
}

int kopt_repo_commit(git_oid *out, git_repository *repo,
		     const char *update_ref, const git_oid *tree_id,
		     const git_oid *parent_id, const char *message)
{
	git_signature *author = NULL, *committer = NULL;
	git_tree *tree = NULL;
	git_commit *parent = NULL;
	const git_commit *parents[1];
	int ret = 0;

	if (kopt_repo_signature(&author, repo, "author") ||
	    kopt_repo_signature(&committer, repo, "committer")) {
		ret = -1;
		goto done;
	}
	if (git_tree_lookup(&tree, repo, tree_id) < 0 ||
	    (parent_id && git_commit_lookup(&parent, repo, parent_id) < 0)) {
		ret = kopt_error("cannot commit: %s",
				 kopt_git_error("missing object"));
		goto done;
	}
	parents[0] = parent;
	if (git_commit_create(out, repo, update_ref, author, committer, NULL,
			      message, tree, parent ? 1 : 0, parents) < 0)
		ret = kopt_error("cannot commit: %s",
				 kopt_git_error("unknown error"));
done:
	git_commit_free(parent);
	git_tree_free(tree);
	git_signature_free(author);
	git_signature_free(committer);
	return ret;
}

/* ---- reading content ---- */

/*
 * Opening an index reads it; the second read (not forced) reloads it
 * only when the file changed on disk since, so that a repository's
 * index loaded earlier in the process is not stale, and a large index is
 * not parsed twice.
 */
int kopt_repo_index(git_index **out, git_repository *repo)
{
	const char *path = getenv("GIT_INDEX_FILE");

	if (path && *path) {
		if (git_index_open(out, path) < 0)
			return kopt_error("cannot read the index '%s': %s", path,
					  kopt_git_error("unknown error"));
		if (git_index_read(*out, 0) < 0) {
			git_index_free(*out);
			*out = NULL;
			return kopt_error("cannot read the index '%s': %s",
					  path, kopt_git_error("unknown error"));
		}
		return 0;
	}
	if (git_repository_index(out, repo) < 0)
		return kopt_error("cannot read the index: %s",
				  kopt_git_error("unknown error"));
	if (git_index_read(*out, 0) < 0) {
		git_index_free(*out);
		*out = NULL;
		return kopt_error("cannot read the index: %s",
				  kopt_git_error("unknown error"));
	}
	return 0;
}

int kopt_repo_index_unlocked(git_repository *repo)
{
	const char *gitdir = git_repository_path(repo);
	const char *top = git_repository_workdir(repo);
	char *lock = kopt_xstrfmt("%sindex.lock", gitdir);
	const char *shown = lock;
	struct stat st;
	int ret = 0;

	/* named from the top of the work tree when it is inside it */
	if (top && !strncmp(lock, top, strlen(top)))
		shown = lock + strlen(top);
	if (!lstat(lock, &st)) {
		kopt_error("cannot update the index: '%s' exists; another git "
			   "process may be running, otherwise remove it",
			   shown);
		ret = KOPT_ELOCKED;
	}
	free(lock);
	return ret;
}

int kopt_repo_read_blob(struct kopt_buf *out, git_repository *repo,
			const git_oid *id, const char *path)
{
	git_blob *blob = NULL;

	if (git_blob_lookup(&blob, repo, id) < 0)
		return kopt_error("cannot read '%s': %s", path,
				  kopt_git_error("missing blob"));
	kopt_buf_add(out, git_blob_rawcontent(blob),
		     (size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	return 0;
}

int kopt_repo_read_index(struct kopt_buf *out, git_repository *repo,
			 git_index *index, const char *path)
{
	const git_index_entry *e = git_index_get_bypath(index, path, 0);

	if (!e) {
		git_error_clear();
		return KOPT_ENOTFOUND;
	}
	return kopt_repo_read_blob(out, repo, &e->id, path);
}

int kopt_repo_read_tree(struct kopt_buf *out, git_repository *repo,
			const git_tree *tree, const char *path)
{
	git_tree_entry *e = NULL;
	int ret;

	if (git_tree_entry_bypath(&e, tree, path) < 0) {
		git_error_clear();
		return KOPT_ENOTFOUND;
	}
	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		ret = KOPT_ENOTFOUND;
	else
		ret = kopt_repo_read_blob(out, repo, git_tree_entry_id(e),
					  path);
	git_tree_entry_free(e);
	return ret;
}

int kopt_repo_rev_tree(git_tree **out, git_repository *repo, const char *rev)
{
	git_object *obj = NULL;
	int ret = 0;

	if (git_revparse_single(&obj, repo, rev) < 0) {
		git_error_clear();
		return KOPT_ENOTFOUND;
	}
	if (git_object_peel((git_object **)out, obj, GIT_OBJECT_TREE) < 0)
		ret = kopt_error("'%s' names no tree: %s", rev,
				 kopt_git_error("unknown error"));
	git_object_free(obj);
	return ret;
}

int kopt_repo_read_rev(struct kopt_buf *out, git_repository *repo,
		       const char *rev, const char *path)
{
	git_tree *tree = NULL;
	int ret = kopt_repo_rev_tree(&tree, repo, rev);

	if (ret == KOPT_ENOTFOUND)
		return kopt_error("unknown revision '%s'", rev);
	if (ret)
		return ret;
	ret = kopt_repo_read_tree(out, repo, tree, path);
	git_tree_free(tree);
	return ret;
}

int kopt_repo_has_commits(git_repository *repo)
{
	int ret = git_repository_head_unborn(repo);

	if (ret < 0) {
		/* a detached or broken HEAD still may name a commit */
		git_object *obj = NULL;
		git_error_clear();
		ret = git_revparse_single(&obj, repo, "HEAD") ? 0 : 1;
		git_object_free(obj);
		git_error_clear();
		return ret;
	}
	return !ret;
}

int kopt_repo_tree_id(git_oid *out, git_repository *repo, const char *rev,
		      const char *dir)
{
	git_tree *tree = NULL;
	git_tree_entry *e = NULL;
	int ret = kopt_repo_rev_tree(&tree, repo, rev);

	if (ret == KOPT_ENOTFOUND)
		return kopt_error("unknown revision '%s'", rev);
	if (ret)
		return ret;
	if (!*dir) {
		git_oid_cpy(out, git_tree_id(tree));
	} else if (git_tree_entry_bypath(&e, tree, dir) < 0 ||
		   git_tree_entry_type(e) != GIT_OBJECT_TREE) {
		git_error_clear();
		ret = KOPT_ENOTFOUND;
	} else {
		git_oid_cpy(out, git_tree_entry_id(e));
	}
	git_tree_entry_free(e);
	git_tree_free(tree);
	return ret;
}

/* Build the tree of work-tree directory `rel` (relative to the top). */
static int hash_dir(git_oid *out, int *empty, git_repository *repo,
		    const char *top, struct kopt_buf *rel)
{
	git_treebuilder *bld = NULL;
	struct kopt_buf abs = KOPT_BUF_INIT;
	DIR *d;
	struct dirent *de;
	size_t base = rel->len;
	int ret = 0;

	*empty = 1;
	kopt_buf_addf(&abs, "%s%s", top, rel->buf);
	d = opendir(abs.buf);
	if (!d) {
		ret = errno == ENOENT ? KOPT_ENOTFOUND :
		      kopt_error("cannot read '%s': %s", abs.buf,
				 strerror(errno));
		kopt_buf_release(&abs);
		return ret;
	}
	if (git_treebuilder_new(&bld, repo, NULL) < 0) {
		ret = kopt_error("%s", kopt_git_error("cannot build a tree"));
		goto done;
	}
	while (!ret && (de = readdir(d))) {
		struct stat st;
		git_oid id;
		git_filemode_t mode;
		int ignored = 0;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, ".git"))
			continue;
		kopt_buf_setlen(rel, base);
		kopt_buf_addf(rel, "%s%s", base ? "/" : "", de->d_name);
		kopt_buf_reset(&abs);
		kopt_buf_addf(&abs, "%s%s", top, rel->buf);
		if (lstat(abs.buf, &st))
			continue;
		if (git_ignore_path_is_ignored(&ignored, repo, rel->buf) < 0)
			git_error_clear();
		if (ignored)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub_empty;
			ret = hash_dir(&id, &sub_empty, repo, top, rel);
			if (ret || sub_empty)
				continue;
			mode = GIT_FILEMODE_TREE;
		} else if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlink(abs.buf, target, sizeof(target));
			if (n < 0 || git_blob_create_from_buffer(&id, repo, target,
								 (size_t)n) < 0) {
				ret = kopt_error("cannot hash '%s'", rel->buf);
				continue;
			}
			mode = GIT_FILEMODE_LINK;
		} else if (S_ISREG(st.st_mode)) {
			if (git_blob_create_from_workdir(&id, repo, rel->buf) < 0) {
				ret = kopt_error("cannot hash '%s': %s", rel->buf,
						 kopt_git_error("unknown error"));
				continue;
			}
			mode = (st.st_mode & 0111) ? GIT_FILEMODE_BLOB_EXECUTABLE :
			       GIT_FILEMODE_BLOB;
		} else {
			continue;
		}
		if (git_treebuilder_insert(NULL, bld, de->d_name, &id, mode) < 0)
			ret = kopt_error("cannot hash '%s': %s", rel->buf,
					 kopt_git_error("unknown error"));
		else
			*empty = 0;
	}
	kopt_buf_setlen(rel, base);
	if (!ret && git_treebuilder_write(out, bld) < 0)
		ret = kopt_error("cannot write a tree: %s",
				 kopt_git_error("unknown error"));
done:
	git_treebuilder_free(bld);
	closedir(d);
	kopt_buf_release(&abs);
	return ret;
}

int kopt_repo_worktree_tree_id(git_oid *out, git_repository *repo,
			       const char *dir)
{
	const char *top = git_repository_workdir(repo);
	struct kopt_buf rel = KOPT_BUF_INIT;
	int empty, ret;

	if (!top)
		return kopt_error("this operation must be run in a work tree");
	kopt_buf_addstr(&rel, dir);
	while (rel.len && rel.buf[rel.len - 1] == '/')
		kopt_buf_setlen(&rel, rel.len - 1);
	ret = hash_dir(out, &empty, repo, top, &rel);
	kopt_buf_release(&rel);
	return ret;
}

int kopt_repo_dirty_paths(struct kopt_strvec *out, git_repository *repo,
			  const struct kopt_strvec *pathspecs)
{
	return kopt_repo_changed_paths(out, repo, pathspecs,
				       KOPT_REPO_UNTRACKED);
}

int kopt_repo_changed_paths(struct kopt_strvec *out, git_repository *repo,
			    const struct kopt_strvec *pathspecs,
			    unsigned flags)
{
	git_status_options opts = GIT_STATUS_OPTIONS_INIT;
	git_status_list *list = NULL;
	size_t i, n;

	opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	opts.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (flags & KOPT_REPO_UNTRACKED)
		opts.flags |= GIT_STATUS_OPT_INCLUDE_UNTRACKED |
			      GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
	opts.pathspec.strings = (char **)pathspecs->v;
	opts.pathspec.count = pathspecs->nr;
	if (git_status_list_new(&list, repo, &opts) < 0)
		return kopt_error("cannot read the status of the work tree: %s",
				  kopt_git_error("unknown error"));
	n = git_status_list_entrycount(list);
	for (i = 0; i < n; i++) {
		const git_status_entry *e = git_status_byindex(list, i);
		const git_diff_delta *d = e->index_to_workdir ?
					  e->index_to_workdir : e->head_to_index;
		if (e->status == GIT_STATUS_CURRENT || !d)
			continue;
		kopt_strvec_push(out, d->new_file.path ? d->new_file.path :
				 d->old_file.path);
	}
	git_status_list_free(list);
	return 0;
}

int kopt_repo_default_branch(char **out, git_repository *repo)
{
	git_reference *ref = NULL;
	git_config *cfg = NULL;
	git_buf buf = { 0 };
	static const char *const names[] = { "refs/heads/main",
					     "refs/heads/master", NULL };
	const char *const *n;
	char *found = NULL;

	if (!git_reference_lookup(&ref, repo, "refs/remotes/origin/HEAD")) {
		const char *t = git_reference_symbolic_target(ref);
		if (t)
			found = kopt_strdup(t);
		git_reference_free(ref);
		if (found)
			goto done;
	}
	if (!git_repository_config_snapshot(&cfg, repo)) {
		if (!git_config_get_string_buf(&buf, cfg,
					       "init.defaultBranch")) {
			char *name = kopt_xstrfmt("refs/heads/%s", buf.ptr);
			if (!git_reference_lookup(&ref, repo, name)) {
				git_reference_free(ref);
				found = name;
			} else {
				free(name);
			}
			git_buf_dispose(&buf);
		}
		git_config_free(cfg);
		if (found)
			goto done;
	}
	for (n = names; *n; n++)
		if (!git_reference_lookup(&ref, repo, *n)) {
			git_reference_free(ref);
			found = kopt_strdup(*n);
			break;
		}
done:
	*out = found;
	return found ? 0 : KOPT_ENOTFOUND;
}
