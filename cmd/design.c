/*
 * git kopt design <kernel>: start a new version on its own branch.
 *
 * Everything is prepared in memory and checked first; then the files are
 * written, the scaffold commit is made and the branch is created, in that
 * order, and a failure on the way removes what was written, so no branch
 * or file is left half-made.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "term-progress.h"
#include "designer.h"
#include "progress.h"
#include "devlog.h"
#include "journal.h"
#include "md.h"
#include "lockfile.h"
#include "repo.h"
#include "runner.h"
#include "trailers.h"
#include "scaffold.h"
#include "strategy.h"
#include "paths.h"
#include "banned.h"

static const char *const design_usage[] = {
	"git kopt design <kernel> [--from <version>] [--to <version>] "
	"[--task <file>] [--title <text>]\n"
	"                       [--agent[=<name>]] [--timeout <seconds>] [-q]",
	NULL
};

struct planned {
	char *path;             /* relative to the top */
	git_filemode_t mode;
	git_oid id;
	struct kopt_buf data;
	int renamed;            /* the name or the text changed */
	int binary;
};

struct plan {
	struct planned *files;
	size_t nr, alloc;
	size_t renamed, binary, skipped;
};

struct design {
	struct kopt_ctx *ctx;
	const struct kopt_kernel *kernel;
	struct kopt_layout layout;
	git_tree *head;
	git_oid head_id;
	const char *from, *to;
	struct kopt_buf from_dir, to_dir;
	struct kopt_buf devlog_path, devlog_old, devlog_new;
	int devlog_existed;
	struct kopt_buf task_path, task;
	int task_existed;       /* in the work tree before */
	struct kopt_rename rename;
	struct plan plan;
};

/* ---- choosing the versions ---- */

/* Version folders in the work tree, committed or not: never clobbered. */
static void work_tree_versions(struct design *d, struct kopt_strvec *out)
{
	char *root = kopt_ctx_path(d->ctx, d->layout.root);
	DIR *dir = opendir(root);
	struct dirent *de;

	while (dir && (de = readdir(dir))) {
		char *v = kopt_layout_match(&d->layout, de->d_name);
		if (v)
			kopt_strvec_push(out, v);
		free(v);
	}
	if (dir)
		closedir(dir);
	free(root);
}

static long newest(const struct kopt_strvec *v)
{
	long n = -1;
	size_t i;

	for (i = 0; i < v->nr; i++)
		if (kopt_version_number(v->v[i]) > n)
			n = kopt_version_number(v->v[i]);
	return n;
}

/* ---- the devlog entry ---- */

/* The list of optimizations of the task, as it is written there. */
static void task_list(struct kopt_buf *out, const struct kopt_buf *task)
{
	size_t start, end;

	if (kopt_md_section(task->buf, task->len, "Optimizations to Apply",
			    &start, &end))
		kopt_buf_add(out, task->buf + start, end - start);
	kopt_buf_trim(out);
}

/*
 * The entry skeleton, added under the development log by lib/devlog,
 * which splices it in and leaves every other byte as it was.
 */
static int add_entry(struct design *d, const char *title)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	struct kopt_devlog_new_version nv;
	struct kopt_devlog_edit edit;
	struct kopt_buf start = KOPT_BUF_INIT;
	char *created = NULL, *task = NULL;
	const char *what[3], *desc[3];
	int ret;

	if (!d->devlog_existed)
		kopt_buf_addf(&start, "# %s\n\n## Development log\n",
			      d->kernel->name);
	else
		kopt_buf_addbuf(&start, &d->devlog_old);
	ret = kopt_devlog_parse(&dl, start.buf, start.len, d->devlog_path.buf);
	if (!ret && !dl.log_line) {
		/* no development log yet: its heading goes at the end */
		kopt_devlog_release(&dl);
		if (start.len && start.buf[start.len - 1] != '\n')
			kopt_buf_addch(&start, '\n');
		kopt_buf_addstr(&start, "\n## Development log\n");
		ret = kopt_devlog_parse(&dl, start.buf, start.len,
					d->devlog_path.buf);
	}
	if (ret)
		goto done;
	created = kopt_devlog_created_from_line(d->from, d->from_dir.buf);
	what[0] = created;
	what[1] = "[...]";
	what[2] = NULL;
	if (d->task.len) {
		task = kopt_xstrfmt("Task: `%s`", d->task_path.buf);
		desc[0] = task;
		desc[1] = "[optimizations and how they relate to profiling "
			  "insights]";
		desc[2] = NULL;
	} else {
		desc[0] = "[optimizations and how they relate to profiling "
			  "insights]";
		desc[1] = NULL;
	}
	memset(&nv, 0, sizeof(nv));
	nv.name = d->to;
	nv.title = title && *title ? title : "[Brief description]";
	nv.location = d->to_dir.buf;
	nv.what_changed = what;
	nv.description = desc;
	ret = kopt_devlog_add_version(&dl, &nv, &edit);
	if (!ret)
		kopt_buf_addbuf(&d->devlog_new, &dl.text);
done:
	kopt_devlog_release(&dl);
	kopt_buf_release(&start);
	free(created);
	free(task);
	return ret;
}

/* ---- the copy ---- */

struct walk_data {
	struct design *d;
	int ret;
};

static int plan_entry(const char *root, const git_tree_entry *e,
		      void *payload)
{
	struct walk_data *w = payload;
	struct design *d = w->d;
	struct kopt_buf rel = KOPT_BUF_INIT, renamed = KOPT_BUF_INIT;
	git_filemode_t mode = git_tree_entry_filemode(e);
	git_blob *blob = NULL;
	struct planned *p;

	if (git_tree_entry_type(e) == GIT_OBJECT_TREE)
		return 0;
	kopt_buf_addf(&rel, "%s%s", root, git_tree_entry_name(e));
	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB) {
		kopt_warning("'%s/%s' is a submodule; not copied",
			     d->from_dir.buf, rel.buf);
		d->plan.skipped++;
		kopt_buf_release(&rel);
		return 0;
	}
	if (git_blob_lookup(&blob, d->ctx->repo, git_tree_entry_id(e)) < 0) {
		w->ret = kopt_error("cannot read '%s/%s': %s", d->from_dir.buf,
				    rel.buf, kopt_git_error("missing blob"));
		kopt_buf_release(&rel);
		return -1;
	}
	KOPT_ALLOC_GROW(d->plan.files, d->plan.nr + 1, d->plan.alloc);
	p = &d->plan.files[d->plan.nr++];
	memset(p, 0, sizeof(*p));
	kopt_buf_init(&p->data, 0);
	p->mode = mode;
	kopt_rename_path(&renamed, &d->rename, rel.buf);
	p->path = kopt_xstrfmt("%s/%s", d->to_dir.buf, renamed.buf);
	p->renamed = strcmp(rel.buf, renamed.buf) != 0;
	if (mode == GIT_FILEMODE_LINK || git_blob_is_binary(blob)) {
		p->binary = mode != GIT_FILEMODE_LINK;
		kopt_buf_add(&p->data, git_blob_rawcontent(blob),
			     (size_t)git_blob_rawsize(blob));
	} else {
		p->renamed |= kopt_rename_text(&p->data, &d->rename,
					       git_blob_rawcontent(blob),
					       (size_t)git_blob_rawsize(blob)) > 0;
	}
	d->plan.binary += p->binary;
	d->plan.renamed += p->renamed;
	git_blob_free(blob);
	kopt_buf_release(&rel);
	kopt_buf_release(&renamed);
	return 0;
}

static int collect_stem(const char *root, const git_tree_entry *e,
			void *payload)
{
	struct kopt_strvec *prefixes = ((void **)payload)[1];
	struct kopt_rename *r = ((void **)payload)[0];

	(void)root;
	if (git_tree_entry_type(e) == GIT_OBJECT_BLOB)
		kopt_rename_add_file(r, git_tree_entry_name(e), prefixes);
	return 0;
}

/*
 * Notes, documentation and recorded output (measurement logs) mention
 * names without using them: only code and build files make an interface.
 */
static int is_prose(const char *name)
{
	static const char *const exts[] = {
		".md", ".markdown", ".txt", ".rst", ".adoc", ".org",
		".log", ".csv",
	};
	static const char *const names[] = {
		"README", "NOTES", "CHANGELOG", "LICENSE", "COPYING", "AUTHORS",
	};
	size_t i;

	for (i = 0; i < KOPT_ARRAY_SIZE(exts); i++)
		if (kopt_ends_with(name, exts[i]))
			return 1;
	for (i = 0; i < KOPT_ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

/* Identifiers of the kernel's shared code (outside every version). */
static int scan_shared(const char *root, const git_tree_entry *e,
		       void *payload)
{
	struct design *d = payload;
	const char *name = git_tree_entry_name(e);
	git_blob *blob = NULL;

	if (!*root) {
		/* a version folder at the top of the kernel's root: skip it */
		char *v = kopt_layout_match(&d->layout, name);
		free(v);
		if (v && git_tree_entry_type(e) == GIT_OBJECT_TREE)
			return 1;
	}
	/* names count too: "mla_decode.h" of the harness is included */
	kopt_rename_scan_shared(&d->rename, name, strlen(name));
	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB || is_prose(name))
		return 0;
	if (git_blob_lookup(&blob, d->ctx->repo, git_tree_entry_id(e)) < 0) {
		git_error_clear();
		return 0;
	}
	if (!git_blob_is_binary(blob) && git_blob_rawsize(blob) < (1 << 22))
		kopt_rename_scan_shared(&d->rename, git_blob_rawcontent(blob),
					(size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	return 0;
}

static git_tree *subtree(struct design *d, const char *path)
{
	git_tree_entry *e = NULL;
	git_tree *t = NULL;

	if (!*path) {
		git_tree_dup(&t, d->head);
		return t;
	}
	if (git_tree_entry_bypath(&e, d->head, path) < 0 ||
	    git_tree_entry_type(e) != GIT_OBJECT_TREE ||
	    git_tree_lookup(&t, d->ctx->repo, git_tree_entry_id(e)) < 0)
		t = NULL;
	git_error_clear();
	git_tree_entry_free(e);
	return t;
}

static void name_prefixes(struct design *d, struct kopt_strvec *out)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	const char *slash = strrchr(d->layout.root, '/');
	char *p;

	kopt_buf_addstr(&sb, d->kernel->name);
	for (p = sb.buf; *p; p++)
		if (*p == '-' || *p == '.')
			*p = '_';
	kopt_strvec_push(out, sb.buf);
	kopt_buf_reset(&sb);
	/* the folder holding the versions: kernels/<this>/v0 */
	kopt_buf_addstr(&sb, slash ? slash + 1 : d->layout.root);
	if (sb.len && !kopt_strvec_has(out, sb.buf))
		kopt_strvec_push(out, sb.buf);
	kopt_buf_release(&sb);
}

static int plan_copy(struct design *d)
{
	git_tree *src = subtree(d, d->from_dir.buf), *root;
	struct kopt_strvec prefixes = KOPT_STRVEC_INIT;
	struct walk_data w = { d, 0 };
	void *stem_data[2];
	size_t i, j;
	int ret = 0;

	if (!src)
		return kopt_error("'%s' is not a folder at HEAD", d->from_dir.buf);
	if (d->rename.enabled && d->rename.from == 0) {
		name_prefixes(d, &prefixes);
		stem_data[0] = &d->rename;
		stem_data[1] = &prefixes;
		git_tree_walk(src, GIT_TREEWALK_PRE, collect_stem, stem_data);
		root = subtree(d, d->layout.root);
		if (root && d->rename.stems.nr)
			git_tree_walk(root, GIT_TREEWALK_PRE, scan_shared, d);
		git_tree_free(root);
	}
	if (git_tree_walk(src, GIT_TREEWALK_PRE, plan_entry, &w) < 0 && !w.ret)
		w.ret = kopt_error("cannot read '%s': %s", d->from_dir.buf,
				   kopt_git_error("unknown error"));
	ret = w.ret;
	for (i = 0; !ret && i < d->plan.nr; i++)
		for (j = i + 1; j < d->plan.nr; j++)
			if (!strcmp(d->plan.files[i].path,
				    d->plan.files[j].path)) {
				ret = kopt_error("renaming makes two files '%s'; "
						 "set 'kernel.%s.rename = none' "
						 "in .kopt", d->plan.files[i].path,
						 d->kernel->name);
				break;
			}
	if (!ret && !d->plan.nr)
		ret = kopt_error("'%s' holds no file to copy", d->from_dir.buf);
	git_tree_free(src);
	kopt_strvec_clear(&prefixes);
	return ret;
}

/* ---- writing, and undoing ---- */

static void rollback(struct design *d, int wrote_devlog, int wrote_task)
{
	char *dir = kopt_ctx_path(d->ctx, d->to_dir.buf);
	char *path;

	kopt_remove_tree(dir);
	free(dir);
	if (wrote_devlog) {
		path = kopt_ctx_path(d->ctx, d->devlog_path.buf);
		if (d->devlog_existed)
			kopt_write_file_atomic(path, d->devlog_old.buf,
					       d->devlog_old.len, 0644);
		else
			unlink(path);
		free(path);
	}
	if (wrote_task && !d->task_existed) {
		path = kopt_ctx_path(d->ctx, d->task_path.buf);
		unlink(path);
		free(path);
	}
}

static int write_files(struct design *d)
{
	struct kopt_buf title = KOPT_BUF_INIT;
	struct kopt_progress *progress;
	size_t i;

	kopt_buf_addf(&title, "copying %s to %s", d->from_dir.buf,
		      d->to_dir.buf);
	progress = kopt_progress_start(title.buf, d->plan.nr);
	kopt_buf_release(&title);
	for (i = 0; i < d->plan.nr; i++) {
		struct planned *p = &d->plan.files[i];
		char *path = kopt_ctx_path(d->ctx, p->path);
		int ret = kopt_mkdir_parents(path);
		if (!ret && p->mode == GIT_FILEMODE_LINK) {
			if (symlink(p->data.buf, path))
				ret = kopt_error("cannot create '%s': %s", p->path,
						 strerror(errno));
		} else if (!ret) {
			ret = kopt_write_file_atomic(path, p->data.buf,
						     p->data.len,
						     p->mode == GIT_FILEMODE_BLOB_EXECUTABLE ?
						     0755 : 0644);
		}
		free(path);
		if (ret) {
			kopt_progress_stop(&progress);
			return ret;
		}
		kopt_progress_update(progress, i + 1);
	}
	kopt_progress_stop(&progress);
	return 0;
}

static int add_blob(git_index *idx, git_repository *repo, const char *path,
		    git_filemode_t mode, const struct kopt_buf *data)
{
	git_index_entry e;
	git_oid id;

	if (git_blob_create_from_buffer(&id, repo, data->buf, data->len) < 0)
		return kopt_error("cannot store '%s': %s", path,
				  kopt_git_error("unknown error"));
	memset(&e, 0, sizeof(e));
	e.path = path;
	e.mode = mode;
	git_oid_cpy(&e.id, &id);
	if (git_index_add(idx, &e) < 0)
		return kopt_error("cannot stage '%s': %s", path,
				  kopt_git_error("unknown error"));
	return 0;
}

/* The scaffold commit: HEAD plus the new files, whatever else is staged. */
static int make_commit(struct design *d, git_oid *out, const char *title)
{
	git_repository *repo = d->ctx->repo;
	git_index *idx = NULL;
	struct kopt_buf msg = KOPT_BUF_INIT;
	struct kopt_trailers tr = KOPT_TRAILERS_INIT;
	git_oid tree;
	size_t i;
	int ret = 0;

	if (git_index_new(&idx) < 0 || git_index_read_tree(idx, d->head) < 0) {
		ret = kopt_error("cannot build the commit: %s",
				 kopt_git_error("unknown error"));
		goto done;
	}
	for (i = 0; !ret && i < d->plan.nr; i++)
		ret = add_blob(idx, repo, d->plan.files[i].path,
			       d->plan.files[i].mode, &d->plan.files[i].data);
	if (!ret)
		ret = add_blob(idx, repo, d->devlog_path.buf, GIT_FILEMODE_BLOB,
			       &d->devlog_new);
	if (!ret && d->task.len)
		ret = add_blob(idx, repo, d->task_path.buf, GIT_FILEMODE_BLOB,
			       &d->task);
	if (ret)
		goto done;
	if (git_index_write_tree_to(&tree, idx, repo) < 0) {
		ret = kopt_error("cannot build the commit: %s",
				 kopt_git_error("unknown error"));
		goto done;
	}
	kopt_buf_addf(&msg, "Design %s %s from %s\n", d->kernel->name, d->to,
		      d->from);
	if (title && *title)
		kopt_buf_addf(&msg, "\n%s\n", title);
	kopt_trailers_add_step(&tr, d->kernel->name, d->to, KOPT_STEP_DESIGN);
	kopt_message_add_trailers(&msg, &tr);
	ret = kopt_repo_commit(out, repo, NULL, &tree, &d->head_id, msg.buf);
done:
	git_index_free(idx);
	kopt_buf_release(&msg);
	kopt_trailers_release(&tr);
	return ret;
}

/* Stage the new files in the real index too, keeping what else is staged. */
static int update_index(struct design *d)
{
	git_index *idx = NULL;
	size_t i;
	int ret = 0;

	if (git_repository_index(&idx, d->ctx->repo) < 0 ||
	    git_index_read(idx, 1) < 0) {
		git_index_free(idx);
		return kopt_error("cannot update the index: %s",
				  kopt_git_error("unknown error"));
	}
	for (i = 0; !ret && i < d->plan.nr; i++)
		if (git_index_add_bypath(idx, d->plan.files[i].path) < 0)
			ret = -1;
	if (!ret && git_index_add_bypath(idx, d->devlog_path.buf) < 0)
		ret = -1;
	if (!ret && d->task.len &&
	    git_index_add_bypath(idx, d->task_path.buf) < 0)
		ret = -1;
	if (!ret && git_index_write(idx) < 0)
		ret = -1;
	if (ret)
		kopt_error("cannot update the index: %s (run 'git reset' to "
			   "match it to the new commit)",
			   kopt_git_error("unknown error"));
	git_index_free(idx);
	return ret;
}

/*
 * The journal a rerun finds when this run is killed before it ends
 * (lib/scaffold's kopt_scaffold_recover()).
 */
static int begin_journal(struct design *d, struct kopt_journal *j)
{
	struct kopt_buf branch = KOPT_BUF_INIT;
	struct kopt_scaffold_paths p;
	int ret;

	kopt_buf_addstr(&branch, "refs/heads/");
	kopt_repo_branch_name(&branch, d->kernel->name, d->to);
	p.branch = branch.buf;
	p.to_dir = d->to_dir.buf;
	p.devlog = d->devlog_path.buf;
	p.task = d->task.len ? d->task_path.buf : "";
	p.task_existed = d->task_existed;
	ret = kopt_scaffold_journal_begin(j, d->ctx->repo, &d->head_id, &p);
	kopt_buf_release(&branch);
	return ret;
}

static int write_and_commit(struct design *d, const char *title)
{
	struct kopt_journal journal = KOPT_JOURNAL_INIT;
	char *path;
	git_oid commit;
	int wrote_devlog = 0, wrote_task = 0, ret;

	if ((ret = begin_journal(d, &journal))) {
		kopt_journal_release(&journal);
		return ret;
	}
	ret = write_files(d);
	if (!ret) {
		path = kopt_ctx_path(d->ctx, d->devlog_path.buf);
		ret = kopt_write_file_atomic(path, d->devlog_new.buf,
					     d->devlog_new.len, 0644);
		wrote_devlog = !ret;
		free(path);
	}
	if (!ret && d->task.len) {
		path = kopt_ctx_path(d->ctx, d->task_path.buf);
		ret = kopt_write_file_atomic(path, d->task.buf, d->task.len,
					     0644);
		wrote_task = !ret;
		free(path);
	}
	if (!ret)
		ret = make_commit(d, &commit, title);
	if (!ret)
		ret = kopt_repo_branch_create(d->ctx->repo, d->kernel->name,
					      d->to, &commit);
	if (!ret && kopt_repo_branch_switch(d->ctx->repo, d->kernel->name,
					    d->to)) {
		kopt_repo_branch_delete(d->ctx->repo, d->kernel->name, d->to);
		ret = -1;
	}
	if (ret) {
		rollback(d, wrote_devlog, wrote_task);
	} else {
		/* the branch is made: a failure here leaves the index behind */
		update_index(d);
	}
	kopt_journal_end(&journal);
	kopt_journal_release(&journal);
	return ret;
}

/* ---- the prompt ---- */

static void print_prompt(struct design *d)
{
	struct kopt_buf list = KOPT_BUF_INIT;

	printf("Create %s %s from %s.\n", d->kernel->name, d->to, d->from);
	printf("Language: %s.\n", d->kernel->language);
	printf("Load /design-%s-kernel and the matching reference skill if "
	       "one exists.\n", d->kernel->language);
	if (d->task.len)
		task_list(&list, &d->task);
	if (list.len)
		printf("Apply optimizations:\n%s\n", list.buf);
	else if (d->task.len)
		printf("Apply optimizations: those of the task in %s.\n",
		       d->task_path.buf);
	else
		printf("Apply optimizations: none given yet (write the task "
		       "with 'git kopt strategize %s').\n", d->kernel->name);
	printf("Return implementation summary per the output contract.\n");
	kopt_buf_release(&list);
}

/* ---- the designer agent ---- */

/*
 * Move this work tree to the branch the designer committed on; the task
 * strategize left here is in the branch now, so the checkout brings the
 * same bytes back (put back when the checkout fails).
 */
static void switch_to_branch(struct design *d, const char *branch)
{
	struct kopt_child c = KOPT_CHILD_INIT;
	struct kopt_buf have = KOPT_BUF_INIT;
	char *task = kopt_ctx_path(d->ctx, d->task_path.buf);
	int moved = d->task.len && !kopt_buf_read_file(&have, task) &&
		    have.len == d->task.len &&
		    !memcmp(have.buf, d->task.buf, have.len) && !unlink(task);

	kopt_strvec_push(&c.args, "git");
	kopt_strvec_push(&c.args, "checkout");
	kopt_strvec_push(&c.args, "-q");
	kopt_strvec_push(&c.args, branch);
	c.dir = d->ctx->top;
	c.flags = KOPT_CHILD_NO_STDIN | KOPT_CHILD_OUT_TO_ERR;
	if (kopt_child_run(&c) || c.exit_code) {
		if (moved)
			kopt_write_file_atomic(task, have.buf, have.len, 0644);
		fprintf(stderr, "hint: switch to it with 'git checkout %s'\n",
			branch);
	} else {
		fprintf(stderr, "Switched to branch '%s'\n", branch);
	}
	kopt_child_release(&c);
	kopt_buf_release(&have);
	free(task);
}

/*
 * The version made by an agent in a worktree of its own under
 * .git/kopt/worktrees; this work tree moves to its branch afterwards, as
 * design without an agent does.
 */
static int design_with_agent(struct design *d, const char *agent_name,
			     const char *task_file, const char *title,
			     int timeout_s)
{
	struct kopt_agent agent = KOPT_AGENT_INIT;
	struct kopt_designer w;
	struct kopt_buf exe = KOPT_BUF_INIT, branch = KOPT_BUF_INIT;
	char head[GIT_OID_HEXSZ + 1];
	char *wt, *logs;
	int ret;

	kopt_lib_or_die(kopt_agent_lookup(&agent, d->ctx->repo, agent_name));
	kopt_lib_or_die(kopt_self_exe(&exe));
	git_oid_tostr(head, sizeof(head), &d->head_id);
	wt = kopt_xstrfmt("%skopt/worktrees/%s-%s",
			  git_repository_commondir(d->ctx->repo),
			  d->kernel->name, d->to);
	logs = kopt_xstrfmt("%skopt/agents/%s",
			    git_repository_commondir(d->ctx->repo),
			    d->kernel->name);
	kopt_designer_init(&w);
	w.top = d->ctx->top;
	w.exe = exe.buf;
	w.kernel = d->kernel->name;
	w.from = d->from;
	w.to = d->to;
	w.base = head;
	w.task_file = task_file;
	w.title = title;
	w.worktree = wt;
	w.version_dir = d->to_dir.buf;
	w.devlog = d->devlog_path.buf;
	w.agent = &agent;
	w.timeout_s = timeout_s;
	w.log_dir = logs;
	fprintf(stderr, "designing %s %s from %s with agent '%s' in %s\n",
		d->kernel->name, d->to, d->from, agent.name, wt);
	ret = kopt_designer_run(&w);
	kopt_repo_branch_name(&branch, d->kernel->name, d->to);
	if (ret < 0 && ret != KOPT_EINVALID) {
		kopt_worktree_remove(d->ctx->top, wt);
		fprintf(stderr, "fatal: nothing was changed\n");
		ret = 128;
		goto done;
	}
	kopt_worktree_remove(d->ctx->top, wt);
	if (ret == KOPT_EINVALID) {
		fprintf(stderr, "error: %s %s was refused: %s\n",
			d->kernel->name, d->to, w.why.buf);
		fprintf(stderr, "the branch '%s' keeps the scaffold; the "
			"agent's output is in %s/%s.agent.out\n", branch.buf,
			logs, d->to);
		ret = 1;
		goto done;
	}
	switch_to_branch(d, branch.buf);
	fprintf(stderr, "designed %s %s with agent '%s' in %.0f s: %s\n",
		d->kernel->name, d->to, agent.name, w.agent_s, w.commit.buf);
	{
		struct kopt_buf block = KOPT_BUF_INIT;
		kopt_summary_render_devlog(&block, &w.summary, agent.name);
		fputs(block.buf, stdout);
		kopt_buf_release(&block);
	}
	printf("Next: git kopt verify %s %s\n", d->kernel->name, d->to);
	ret = 0;
done:
	kopt_designer_release(&w);
	kopt_agent_release(&agent);
	kopt_buf_release(&exe);
	kopt_buf_release(&branch);
	free(wt);
	free(logs);
	return ret;
}

/* ---- the step ---- */

/*
 * Uncommitted changes to the kernel: to its files (the folder of its
 * versions, its devlog and docs), and files not added yet where they
 * matter (the version copied, the devlog and docs).  Untracked files
 * elsewhere in the kernel's folder, such as the outputs of its build,
 * change nothing that design reads or writes.
 */
static void check_clean(struct design *d)
{
	struct kopt_strvec specs = KOPT_STRVEC_INIT, dirty = KOPT_STRVEC_INIT;
	struct kopt_buf list = KOPT_BUF_INIT, dir = KOPT_BUF_INIT;
	size_t i, shown = 0;

	kopt_strvec_push(&specs, d->from_dir.buf);
	kopt_strvec_push(&specs, d->devlog_path.buf);
	kopt_path_kernel_dir(&dir, d->kernel->name);
	kopt_strvec_push(&specs, dir.buf);
	kopt_buf_release(&dir);
	kopt_lib_or_die(kopt_repo_changed_paths(&dirty, d->ctx->repo, &specs,
						KOPT_REPO_UNTRACKED));
	kopt_strvec_clear(&specs);
	kopt_strvec_push(&specs, *d->layout.root ? d->layout.root :
			 d->from_dir.buf);
	kopt_lib_or_die(kopt_repo_changed_paths(&dirty, d->ctx->repo, &specs, 0));
	kopt_strvec_sort(&dirty);
	for (i = 0; i < dirty.nr; i++) {
		/* the task strategize wrote for this version is expected */
		if (!strcmp(dirty.v[i], d->task_path.buf))
			continue;
		/* listed by both queries */
		if (i && !strcmp(dirty.v[i], dirty.v[i - 1]))
			continue;
		if (shown++ < 5)
			kopt_buf_addf(&list, "\n\t%s", dirty.v[i]);
	}
	if (shown > 5)
		kopt_buf_addf(&list, "\n\t... and %zu more", shown - 5);
	if (shown)
		kopt_die("uncommitted changes to %s; commit or stash them "
			 "first:%s", d->kernel->name, list.buf);
	kopt_strvec_clear(&specs);
	kopt_strvec_clear(&dirty);
	kopt_buf_release(&list);
}

static void release(struct design *d)
{
	size_t i;

	for (i = 0; i < d->plan.nr; i++) {
		free(d->plan.files[i].path);
		kopt_buf_release(&d->plan.files[i].data);
	}
	free(d->plan.files);
	kopt_layout_release(&d->layout);
	kopt_rename_release(&d->rename);
	git_tree_free(d->head);
	kopt_buf_release(&d->from_dir);
	kopt_buf_release(&d->to_dir);
	kopt_buf_release(&d->devlog_path);
	kopt_buf_release(&d->devlog_old);
	kopt_buf_release(&d->devlog_new);
	kopt_buf_release(&d->task_path);
	kopt_buf_release(&d->task);
}

static void choose_versions(struct design *d, const char *from_opt,
			    const char *to_opt, struct kopt_strvec *versions)
{
	struct kopt_strvec branches = KOPT_STRVEC_INIT;
	struct kopt_strvec on_disk = KOPT_STRVEC_INIT;
	static char to_buf[32];
	long next;
	struct stat st;
	char *path;

	if (from_opt && kopt_version_number(from_opt) < 0)
		kopt_die("'%s' is not a version (v0, v1, ...)", from_opt);
	if (to_opt && kopt_version_number(to_opt) < 0)
		kopt_die("'%s' is not a version (v0, v1, ...)", to_opt);
	kopt_lib_or_die(kopt_layout_versions(versions, d->ctx->repo, d->head,
					     &d->layout));
	kopt_lib_or_die(kopt_repo_branch_list(d->ctx->repo, d->kernel->name,
					      &branches));
	work_tree_versions(d, &on_disk);
	next = newest(versions);
	if (newest(&branches) > next)
		next = newest(&branches);
	if (newest(&on_disk) > next)
		next = newest(&on_disk);
	if (to_opt) {
		d->to = to_opt;
	} else {
		snprintf(to_buf, sizeof(to_buf), "v%ld", next + 1);
		d->to = to_buf;
	}
	kopt_layout_dir(&d->to_dir, &d->layout, d->to);
	if (kopt_repo_branch_exists(d->ctx->repo, d->kernel->name, d->to) == 1)
		kopt_die("branch 'kopt/%s/%s' already exists; %s %s was designed "
			 "already", d->kernel->name, d->to, d->kernel->name,
			 d->to);
	path = kopt_ctx_path(d->ctx, d->to_dir.buf);
	if (kopt_strvec_has(versions, d->to) || !lstat(path, &st)) {
		free(path);
		kopt_die("'%s' already exists; %s %s was designed already",
			 d->to_dir.buf, d->kernel->name, d->to);
	}
	free(path);
	kopt_strvec_clear(&branches);
	kopt_strvec_clear(&on_disk);
}

/* The design of a version of `kernel` at HEAD, nothing chosen yet. */
static void design_init(struct design *d, struct kopt_ctx *ctx,
			const char *kernel)
{
	memset(d, 0, sizeof(*d));
	d->ctx = ctx;
	kopt_buf_init(&d->from_dir, 0);
	kopt_buf_init(&d->to_dir, 0);
	kopt_buf_init(&d->devlog_path, 0);
	kopt_buf_init(&d->devlog_old, 0);
	kopt_buf_init(&d->devlog_new, 0);
	kopt_buf_init(&d->task_path, 0);
	kopt_buf_init(&d->task, 0);
	kopt_rename_init(&d->rename, 0, 0, 0);
	kopt_ctx_config_or_die(ctx);
	d->kernel = kopt_ctx_kernel_or_die(ctx, kernel);
	if (!kopt_repo_has_commits(ctx->repo))
		kopt_die("the repository has no commits yet; commit %s's base "
			 "version (v0) first", d->kernel->name);
	kopt_lib_or_die(kopt_layout_init(&d->layout, d->kernel));
	if (git_reference_name_to_id(&d->head_id, ctx->repo, "HEAD") < 0 ||
	    kopt_repo_rev_tree(&d->head, ctx->repo, "HEAD"))
		kopt_die("cannot read HEAD: %s", kopt_git_error("unknown error"));
}

/* The task: the one --task names, else the one strategize wrote. */
static void read_task(struct design *d, const char *task_opt)
{
	struct kopt_ctx *ctx = d->ctx;
	char *path = kopt_ctx_path(ctx, d->task_path.buf);
	int err;

	d->task_existed = !access(path, F_OK);
	if (task_opt) {
		char *file = task_opt[0] == '/' ? kopt_strdup(task_opt) :
			     kopt_xstrfmt("%s%s", ctx->prefix, task_opt);
		char *abs = file[0] == '/' ? kopt_strdup(file) :
			    kopt_ctx_path(ctx, file);
		err = kopt_buf_read_file(&d->task, abs) ? errno : 0;
		free(file);
		free(abs);
		free(path);
		if (err)
			kopt_die("cannot read the task '%s': %s", task_opt,
				 strerror(err));
		if (!d->task.len)
			kopt_die("the task '%s' is empty", task_opt);
		return;
	}
	err = d->task_existed && kopt_buf_read_file(&d->task, path) ? errno : 0;
	free(path);
	if (err)
		kopt_die("cannot read '%s': %s", d->task_path.buf,
			 strerror(err));
}

/*
 * The version to start from: --from, else the task's, else the newest
 * at HEAD; *from_task keeps the task's name alive for d->from.
 */
static void choose_from(struct design *d, const char *from_opt,
			const struct kopt_strvec *versions, char **from_task)
{
	if (d->task.len && !from_opt)
		*from_task = kopt_strategy_task_current(d->task.buf,
							 d->task.len);
	d->from = from_opt ? from_opt : *from_task;
	if (!d->from) {
		if (!versions->nr) {
			struct kopt_buf start = KOPT_BUF_INIT;
			kopt_layout_start_advice(&start, d->kernel);
			kopt_die("%s has no version at HEAD (no folder matching "
				 "'%s'); %s first", d->kernel->name,
				 d->kernel->source, start.buf);
		}
		d->from = versions->v[versions->nr - 1];
	}
	kopt_layout_dir(&d->from_dir, &d->layout, d->from);
	if (!kopt_strvec_has(versions, d->from))
		kopt_die("%s has no version '%s' ('%s' is not at HEAD)",
			 d->kernel->name, d->from, d->from_dir.buf);
	if (!strcmp(d->from, d->to))
		kopt_die("cannot design %s from itself", d->to);
}

/* The task file to hand an agent, absolute, or NULL. */
static char *agent_task(const struct design *d, const char *task_opt)
{
	const struct kopt_ctx *ctx = d->ctx;

	if (task_opt)
		return task_opt[0] == '/' ? kopt_strdup(task_opt) :
		       kopt_xstrfmt("%s%s%s", ctx->top, ctx->prefix, task_opt);
	if (d->task_existed)
		return kopt_ctx_path(ctx, d->task_path.buf);
	return NULL;
}

/* The version made here: copied, its entry added, committed. */
static int design_by_copy(struct design *d, const char *title)
{
	kopt_rename_init(&d->rename, kopt_version_number(d->from),
			 kopt_version_number(d->to),
			 !d->kernel->rename ||
			 strcmp(d->kernel->rename, "none"));
	kopt_lib_or_die(plan_copy(d));
	d->devlog_existed = !kopt_repo_read_tree(&d->devlog_old, d->ctx->repo,
						 d->head, d->devlog_path.buf);
	if (add_entry(d, title))
		kopt_die("cannot add the entry of %s to '%s'", d->to,
			 d->devlog_path.buf);
	if (write_and_commit(d, title)) {
		fprintf(stderr, "fatal: nothing was changed\n");
		return 128;
	}
	fprintf(stderr, "Switched to a new branch 'kopt/%s/%s'\n",
		d->kernel->name, d->to);
	fprintf(stderr, "created %s from %s: %zu file%s (%zu renamed, %zu "
		"binary copied as is)\n", d->to_dir.buf, d->from, d->plan.nr,
		d->plan.nr == 1 ? "" : "s", d->plan.renamed, d->plan.binary);
	if (!d->task.len)
		fprintf(stderr, "hint: no task for %s; write %s or run 'git "
			"kopt strategize %s'\n", d->to, d->task_path.buf,
			d->kernel->name);
	print_prompt(d);
	return 0;
}

/*
 * Put right a design killed in this work tree; 1 when that finished it,
 * so that this run has nothing left to do.
 */
static int recover(struct kopt_ctx *ctx)
{
	enum kopt_scaffold_recovery done;
	char *branch;

	kopt_lib_or_die(kopt_scaffold_recover(&done, &branch, ctx->repo,
					      ctx->top));
	if (done == KOPT_SCAFFOLD_FINISHED)
		fprintf(stderr, "finished the design of '%s' that was "
			"interrupted after its commit\n", branch);
	else if (done == KOPT_SCAFFOLD_UNDONE)
		fprintf(stderr, "undid the design of '%s' that was "
			"interrupted; starting again\n", branch);
	free(branch);
	return done == KOPT_SCAFFOLD_FINISHED;
}

int cmd_design(int argc, const char **argv, struct kopt_ctx *ctx)
{
	const char *from_opt = NULL, *to_opt = NULL, *task_opt = NULL;
	const char *title = NULL, *agent = NULL;
	int timeout_s = 0, quiet = 0;
	const struct kopt_option options[] = {
		OPT_STRING(0, "from", &from_opt, "version",
			   "the version to start from (default: the task's, "
			   "else the newest)"),
		OPT_STRING(0, "to", &to_opt, "version",
			   "the new version (default: the next free one)"),
		OPT_STRING(0, "task", &task_opt, "file",
			   "the Optimization Task to hand to the designer"),
		OPT_STRING(0, "title", &title, "text",
			   "a brief description for the devlog entry"),
		OPT_OPTSTRING("agent", &agent, "name",
			      "let an agent design it (default: kopt.agent, "
			      "else claude)"),
		OPT_INT(0, "timeout", &timeout_s, "seconds",
			"the agent's time limit (default: its setting)"),
		OPT__QUIET(&quiet),
		OPT_END()
	};
	struct design d;
	struct kopt_strvec versions = KOPT_STRVEC_INIT;
	char *from_task = NULL;
	int ret;

	argc = kopt_parse_options(argc, argv, options, design_usage, 0);
	if (quiet)
		kopt_progress_terminal(0);
	if (argc != 1)
		kopt_usage_error(design_usage, options, argc ? "too many "
				 "arguments" : "which kernel?");
	if (title && strchr(title, '\n'))
		kopt_usage_error(design_usage, options, "--title is one line");
	if (recover(ctx))
		return 0;
	design_init(&d, ctx, argv[0]);
	choose_versions(&d, from_opt, to_opt, &versions);
	kopt_path_devlog(&d.devlog_path, d.kernel->name);
	kopt_path_task(&d.task_path, d.kernel->name, d.to);
	read_task(&d, task_opt);
	choose_from(&d, from_opt, &versions, &from_task);
	check_clean(&d);
	/* the commit and the index go together, or nothing is written */
	KOPT_OR_DIE(kopt_repo_index_unlocked(ctx->repo), "");
	if (agent) {
		char *task_abs = agent_task(&d, task_opt);
		if (timeout_s < 0)
			kopt_usage_error(design_usage, options, "--timeout "
					 "must be positive");
		ret = design_with_agent(&d, *agent ? agent : NULL, task_abs,
					title, timeout_s);
		free(task_abs);
	} else {
		ret = design_by_copy(&d, title);
	}
	free(from_task);
	kopt_strvec_clear(&versions);
	release(&d);
	return ret;
}
