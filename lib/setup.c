#include "setup.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "strvec.h"
#include "templates.h"
#include "banned.h"

/* A hook is ours when it hands over to git kopt. */
#define KOPT_HOOK_MARK "git kopt hook "

static void strip_slashes(char *s)
{
	size_t n = strlen(s);

	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
}

int kopt_setup_hooks_dir(char **out, git_repository *repo)
{
	git_config *cfg = NULL;
	git_buf v = GIT_BUF_INIT;
	int ret;

	*out = NULL;
	if (git_repository_config_snapshot(&cfg, repo) < 0)
		return kopt_error("cannot read git config: %s",
				  kopt_git_error("unknown error"));
	ret = git_config_get_path(&v, cfg, "core.hooksPath");
	if (!ret && v.ptr && *v.ptr) {
		const char *wd = git_repository_workdir(repo);
		if (v.ptr[0] == '/' || !wd)
			*out = kopt_strdup(v.ptr);
		else
			*out = kopt_xstrfmt("%s%s", wd, v.ptr);
	} else if (ret < 0 && ret != GIT_ENOTFOUND) {
		ret = kopt_error("cannot read core.hooksPath: %s",
				 kopt_git_error("unknown error"));
		goto done;
	}
	git_error_clear();
	git_buf_dispose(&v);
	if (!*out) {
		if (git_repository_item_path(&v, repo,
					     GIT_REPOSITORY_ITEM_HOOKS) < 0) {
			ret = kopt_error("cannot find the hooks directory: %s",
					 kopt_git_error("unknown error"));
			goto done;
		}
		*out = kopt_strdup(v.ptr);
	}
	strip_slashes(*out);
	ret = 0;
done:
	git_buf_dispose(&v);
	git_config_free(cfg);
	return ret;
}

static struct kopt_setup_item *add_item(struct kopt_setup *s)
{
	struct kopt_setup_item *it;

	KOPT_ALLOC_GROW(s->items, s->nr + 1, s->alloc);
	it = &s->items[s->nr++];
	memset(it, 0, sizeof(*it));
	kopt_buf_init(&it->data, 0);
	return it;
}

static char *label_of(const struct kopt_setup *s, const char *path)
{
	const char *rel;

	if (kopt_skip_prefix(path, s->top, &rel) && *rel)
		return kopt_strdup(rel);
	return kopt_strdup(path);
}

/* ---- the manifest ---- */

static int is_hex_id(const char *s, size_t n)
{
	size_t i;

	if (n != GIT_OID_HEXSZ)
		return 0;
	for (i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return 0;
	return 1;
}

int kopt_manifest_parse(struct kopt_manifest_entry **out, size_t *nr,
			const char *name, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t alloc = *nr;
	int line = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *sp1, *sp2;
		struct kopt_manifest_entry *e;

		if (!eol)
			eol = end;
		line++;
		if (eol == p || *p == '#') {
			p = eol < end ? eol + 1 : end;
			continue;
		}
		sp1 = memchr(p, ' ', (size_t)(eol - p));
		sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
		if (!sp2 || sp2 + 1 == eol || !is_hex_id(p, (size_t)(sp1 - p)) ||
		    memchr(p, '\0', (size_t)(eol - p)) ||
		    !((sp2 - sp1 - 1 == 1 && sp1[1] == '-') ||
		      (sp2 - sp1 - 1 == 7 && !memcmp(sp1 + 1, "deleted", 7)) ||
		      is_hex_id(sp1 + 1, (size_t)(sp2 - sp1 - 1))))
			return kopt_error_at(name, line, "not a manifest line "
					     "(<blob id> <reported> <path>); "
					     "remove the file to start again");
		KOPT_ALLOC_GROW(*out, *nr + 1, alloc);
		e = &(*out)[(*nr)++];
		e->installed = kopt_strndup(p, (size_t)(sp1 - p));
		e->reported = kopt_strndup(sp1 + 1, (size_t)(sp2 - sp1 - 1));
		e->path = kopt_strndup(sp2 + 1, (size_t)(eol - sp2 - 1));
		p = eol < end ? eol + 1 : end;
	}
	return 0;
}

void kopt_manifest_release(struct kopt_manifest_entry *e, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		free(e[i].path);
		free(e[i].installed);
		free(e[i].reported);
	}
	free(e);
}

static const struct kopt_manifest_entry *manifest_find(
	const struct kopt_manifest_entry *e, size_t nr, const char *path)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (!strcmp(e[i].path, path))
			return &e[i];
	return NULL;
}

/* The blob id of `data`, as `git hash-object` gives it, into hex. */
static void blob_id(char hex[GIT_OID_HEXSZ + 1], const void *data, size_t len)
{
	git_oid oid;

	if (git_odb_hash(&oid, data, len, GIT_OBJECT_BLOB) < 0)
		memset(&oid, 0, sizeof(oid));
	git_oid_tostr(hex, GIT_OID_HEXSZ + 1, &oid);
}

/*
 * Compare the file at it->path with the template in it->data and set
 * the action.  Reading problems other than absence are errors: a file
 * we cannot read is never overwritten.
 */
static int classify(struct kopt_setup_item *it, unsigned flags,
		    const struct kopt_manifest_entry *m, struct kopt_buf *seen)
{
	struct kopt_buf cur = KOPT_BUF_INIT;
	char hex[GIT_OID_HEXSZ + 1];
	int ret = 0;

	if (kopt_buf_read_file(&cur, it->path)) {
		if (errno != ENOENT && errno != ENOTDIR)
			ret = kopt_error("cannot read '%s': %s", it->label,
					 strerror(errno));
		else if (m && !(flags & KOPT_SETUP_FORCE)) {
			it->action = KOPT_SETUP_DELETED;
			it->report = strcmp(m->reported, "deleted") != 0;
			kopt_buf_addstr(seen, "deleted");
		} else
			it->action = KOPT_SETUP_CREATE;
		goto done;
	}
	blob_id(hex, cur.buf, cur.len);
	if (cur.len == it->data.len && !memcmp(cur.buf, it->data.buf, cur.len))
		it->action = KOPT_SETUP_UNCHANGED;
	else if (it->is_hook && !strstr(cur.buf, KOPT_HOOK_MARK))
		it->action = KOPT_SETUP_CHAIN;
	else if (flags & KOPT_SETUP_FORCE)
		it->action = KOPT_SETUP_RESTORE;
	else if (m && !strcmp(m->installed, hex))
		it->action = KOPT_SETUP_UPDATE;
	else {
		it->action = KOPT_SETUP_KEEP;
		it->report = !m || strcmp(m->reported, hex) != 0;
		kopt_buf_addstr(seen, hex);
	}
done:
	kopt_buf_release(&cur);
	return ret;
}

/* The patterns of templates/init-seeds (optional). */
static int read_seeds(struct kopt_strvec *out, const char *tmpl)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	char *path = kopt_xstrfmt("%s/init-seeds", tmpl);
	const char *p;
	int ret = 0;

	if (kopt_buf_read_file(&text, path)) {
		if (errno != ENOENT)
			ret = kopt_error("cannot read '%s': %s", path,
					 strerror(errno));
		goto done;
	}
	for (p = text.buf; *p;) {
		const char *eol = strchrnul(p, '\n');
		struct kopt_buf line = KOPT_BUF_INIT;

		kopt_buf_add(&line, p, (size_t)(eol - p));
		kopt_buf_trim(&line);
		if (line.len && line.buf[0] != '#')
			kopt_strvec_push(out, line.buf);
		kopt_buf_release(&line);
		p = *eol ? eol + 1 : eol;
	}
done:
	kopt_buf_release(&text);
	free(path);
	return ret;
}

static int is_seed(const struct kopt_strvec *seeds, const char *rel)
{
	size_t i;

	for (i = 0; i < seeds->nr; i++)
		if (!fnmatch(seeds->v[i], rel, FNM_PATHNAME))
			return 1;
	return 0;
}

/*
 * The manifest line of a work-tree item, after classifying it.  What
 * init writes (or finds equal to the template) is recorded as laid
 * down; a file kept or deleted keeps the blob init laid down, with
 * what was reported.
 */
static void manifest_line(struct kopt_buf *out, const struct kopt_setup_item *it,
			  const struct kopt_manifest_entry *m, const char *seen)
{
	char hex[GIT_OID_HEXSZ + 1];
	const char *installed = m ? m->installed : NULL, *reported = "-";

	switch (it->action) {
	case KOPT_SETUP_KEEP:
	case KOPT_SETUP_DELETED:
		reported = seen;
		break;
	case KOPT_SETUP_OWNED:
		if (m)
			reported = m->reported;
		break;
	default:
		installed = NULL;
		break;
	}
	if (!installed) {
		blob_id(hex, it->data.buf, it->data.len);
		installed = hex;
	}
	kopt_buf_addf(out, "%s %s %s\n", installed, reported, it->label);
}

static int plan_dir(struct kopt_setup *s, const char *src_dir,
		    const char *dst_dir, int hooks, unsigned flags,
		    const struct kopt_strvec *seeds,
		    const struct kopt_manifest_entry *man, size_t man_nr)
{
	struct kopt_strvec files = KOPT_STRVEC_INIT;
	struct kopt_buf seen = KOPT_BUF_INIT;
	size_t i;
	int ret;

	ret = kopt_templates_list(&files, src_dir);
	for (i = 0; !ret && i < files.nr; i++) {
		struct kopt_setup_item *it = add_item(s);
		char *src = kopt_xstrfmt("%s/%s", src_dir, files.v[i]);
		const struct kopt_manifest_entry *m = NULL;

		it->path = kopt_xstrfmt("%s/%s", dst_dir, files.v[i]);
		it->label = label_of(s, it->path);
		it->is_hook = hooks;
		it->mode = hooks ? 0755 : 0644;
		if (seeds)
			m = manifest_find(man, man_nr, it->label);
		kopt_buf_reset(&seen);
		if (kopt_buf_read_file(&it->data, src))
			ret = kopt_error("cannot read template '%s': %s", src,
					 strerror(errno));
		else
			ret = classify(it, flags, m, &seen);
		if (!ret && it->action != KOPT_SETUP_CREATE &&
		    it->action != KOPT_SETUP_DELETED &&
		    seeds && is_seed(seeds, files.v[i])) {
			it->action = KOPT_SETUP_OWNED;
			it->report = 0;
		}
		if (!ret && it->action == KOPT_SETUP_CHAIN)
			it->keep_as = kopt_xstrfmt("%s%s", it->path,
						   KOPT_HOOK_CHAIN_SUFFIX);
		/* the manifest covers init/ (the plan with seeds) only */
		if (!ret && seeds)
			manifest_line(&s->manifest_new, it, m, seen.buf);
		free(src);
	}
	kopt_buf_release(&seen);
	if (!ret && !files.nr)
		ret = kopt_error("no templates in '%s'", src_dir);
	kopt_strvec_clear(&files);
	return ret;
}

int kopt_setup_plan(struct kopt_setup *out, git_repository *repo,
		    unsigned flags)
{
	const char *wd = git_repository_workdir(repo);
	char *tmpl = NULL, *hooks = NULL, *init = NULL, *top = NULL;
	struct kopt_strvec seeds = KOPT_STRVEC_INIT;
	struct kopt_manifest_entry *man = NULL;
	size_t man_nr = 0;
	int ret;

	if (!wd)
		return kopt_error("this operation must be run in a work tree");
	out->top = kopt_strdup(wd);
	out->manifest_path = kopt_xstrfmt("%s%s", git_repository_path(repo),
					  KOPT_SETUP_MANIFEST);
	kopt_buf_init(&out->manifest_old, 0);
	kopt_buf_init(&out->manifest_new, 0);
	if (kopt_buf_read_file(&out->manifest_old, out->manifest_path)) {
		kopt_buf_reset(&out->manifest_old);
		if (errno != ENOENT && errno != ENOTDIR) {
			ret = kopt_error("cannot read '%s': %s",
					 out->manifest_path, strerror(errno));
			kopt_setup_release(out);
			return ret;
		}
	}
	ret = kopt_manifest_parse(&man, &man_nr, out->manifest_path,
				  out->manifest_old.buf, out->manifest_old.len);
	if (ret) {
		kopt_manifest_release(man, man_nr);
		kopt_setup_release(out);
		return ret;
	}
	kopt_buf_addstr(&out->manifest_new,
			"# git kopt init: the files it laid down "
			"(blob id, reported, path)\n");
	ret = kopt_share_dir(&tmpl, "templates", KOPT_TEMPLATE_ENV);
	if (!ret)
		ret = kopt_share_dir(&hooks, "hooks", KOPT_HOOKS_ENV);
	if (!ret)
		ret = kopt_setup_hooks_dir(&out->hooks_dir, repo);
	if (!ret)
		ret = read_seeds(&seeds, tmpl);
	if (!ret) {
		init = kopt_xstrfmt("%s/init", tmpl);
		top = kopt_strndup(out->top, strlen(out->top) - 1);
		ret = plan_dir(out, init, top, 0, flags, &seeds, man, man_nr);
	}
	if (!ret)
		ret = plan_dir(out, hooks, out->hooks_dir, 1, flags, NULL,
			       NULL, 0);
	kopt_manifest_release(man, man_nr);
	kopt_strvec_clear(&seeds);
	free(tmpl);
	free(hooks);
	free(init);
	free(top);
	if (ret)
		kopt_setup_release(out);
	return ret;
}

static int pending(const struct kopt_setup_item *it)
{
	return it->action == KOPT_SETUP_CREATE ||
	       it->action == KOPT_SETUP_RESTORE ||
	       it->action == KOPT_SETUP_UPDATE ||
	       it->action == KOPT_SETUP_CHAIN;
}

size_t kopt_setup_pending(const struct kopt_setup *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->nr; i++)
		n += pending(&s->items[i]);
	return n;
}

int kopt_setup_changed(const struct kopt_setup *s)
{
	return kopt_setup_pending(s) ||
	       s->manifest_old.len != s->manifest_new.len ||
	       memcmp(s->manifest_old.buf, s->manifest_new.buf,
		      s->manifest_new.len);
}

int kopt_setup_apply(struct kopt_setup *s)
{
	struct kopt_filetx tx = KOPT_FILETX_INIT;
	size_t i;
	int ret;

	for (i = 0; i < s->nr; i++) {
		const struct kopt_setup_item *it = &s->items[i];
		if (pending(it))
			kopt_filetx_add(&tx, it->path, it->label, it->data.buf,
					it->data.len, it->mode, it->keep_as);
	}
	if (kopt_setup_changed(s)) {
		char *label = label_of(s, s->manifest_path);
		kopt_filetx_add(&tx, s->manifest_path, label,
				s->manifest_new.buf, s->manifest_new.len, 0644,
				NULL);
		free(label);
	}
	ret = kopt_filetx_commit(&tx);
	kopt_filetx_release(&tx);
	return ret;
}

void kopt_setup_release(struct kopt_setup *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++) {
		free(s->items[i].path);
		free(s->items[i].label);
		free(s->items[i].keep_as);
		kopt_buf_release(&s->items[i].data);
	}
	free(s->items);
	free(s->top);
	free(s->hooks_dir);
	free(s->manifest_path);
	kopt_buf_release(&s->manifest_old);
	kopt_buf_release(&s->manifest_new);
	memset(s, 0, sizeof(*s));
}

int kopt_setup_plan_more(struct kopt_setup *s, const char *subdir,
			 unsigned flags)
{
	char *tmpl = NULL, *src = NULL, *top = NULL;
	int ret = kopt_share_dir(&tmpl, "templates", KOPT_TEMPLATE_ENV);

	if (!ret) {
		src = kopt_xstrfmt("%s/%s", tmpl, subdir);
		top = kopt_strndup(s->top, strlen(s->top) - 1);
		ret = plan_dir(s, src, top, 0, flags, NULL, NULL, 0);
	}
	free(tmpl);
	free(src);
	free(top);
	return ret;
}
