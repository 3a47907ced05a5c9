#include "obligations.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "error.h"
#include "trailers.h"
#include "banned.h"

void kopt_obligations_init(struct kopt_obligations *ob, git_repository *repo,
			   const char *top, const struct kopt_config *cfg)
{
	memset(ob, 0, sizeof(*ob));
	ob->repo = repo;
	ob->top = top;
	ob->cfg = cfg;
	kopt_buf_init(&ob->knowledge, 0);
}

void kopt_obligations_release(struct kopt_obligations *ob)
{
	size_t i;

	kopt_buf_release(&ob->knowledge);
	for (i = 0; i < ob->skips_nr; i++) {
		free(ob->skips[i].kernel);
		free(ob->skips[i].version);
		free(ob->skips[i].reason);
	}
	free(ob->skips);
	ob->skips = NULL;
	ob->skips_nr = ob->skips_alloc = 0;
}

static void add_dir(struct kopt_obligations *ob,
		    const struct kopt_source *src, const char *dir)
{
	struct kopt_strvec names = KOPT_STRVEC_INIT;
	struct kopt_buf path = KOPT_BUF_INIT, data = KOPT_BUF_INIT;
	size_t i;

	kopt_source_list(src, dir, &names);
	for (i = 0; i < names.nr; i++) {
		if (!kopt_ends_with(names.v[i], ".md"))
			continue;
		kopt_buf_reset(&path);
		kopt_buf_addf(&path, "%s/%s", dir, names.v[i]);
		if (!kopt_source_read(src, path.buf, &data, NULL)) {
			kopt_buf_addbuf(&ob->knowledge, &data);
			kopt_buf_addch(&ob->knowledge, '\n');
		}
	}
	kopt_strvec_clear(&names);
	kopt_buf_release(&path);
	kopt_buf_release(&data);
}

/* Names of the directories in `dir` of the work tree. */
static void list_dirs(const struct kopt_source *src, const char *dir,
		      struct kopt_strvec *out)
{
	char *full = kopt_xstrfmt("%s%s", src->top ? src->top : "", dir);
	DIR *d = opendir(full);
	struct dirent *de;

	free(full);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && de->d_type == DT_DIR)
			kopt_strvec_push(out, de->d_name);
	closedir(d);
	kopt_strvec_sort(out);
}

static void load_knowledge(struct kopt_obligations *ob)
{
	const char *root = ob->cfg->knowledge ? ob->cfg->knowledge :
			   KOPT_DEFAULT_KNOWLEDGE;
	struct kopt_source src;
	struct kopt_strvec langs = KOPT_STRVEC_INIT;
	struct kopt_strvec catalogs = KOPT_STRVEC_INIT;
	struct kopt_buf path = KOPT_BUF_INIT, data = KOPT_BUF_INIT;
	size_t i;

	ob->knowledge_loaded = 1;
	kopt_source_worktree(&src, ob->top);
	kopt_buf_addf(&path, "%s/anti-patterns", root);
	add_dir(ob, &src, path.buf);
	/* languages/<l>/anti-patterns, for the languages on disk */
	kopt_buf_reset(&path);
	kopt_buf_addf(&path, "%s/languages", root);
	list_dirs(&src, path.buf, &langs);
	for (i = 0; i < langs.nr; i++) {
		kopt_buf_reset(&path);
		kopt_buf_addf(&path, "%s/languages/%s/anti-patterns", root,
			      langs.v[i]);
		add_dir(ob, &src, path.buf);
	}
	kopt_config_catalogs(&catalogs, ob->cfg);
	for (i = 0; i < catalogs.nr; i++)
		if (!kopt_source_read(&src, catalogs.v[i], &data, NULL))
			kopt_buf_addbuf(&ob->knowledge, &data);
	kopt_strvec_clear(&catalogs);
	kopt_strvec_clear(&langs);
	kopt_buf_release(&path);
	kopt_buf_release(&data);
}

static void load_skips(struct kopt_obligations *ob)
{
	git_revwalk *walk = NULL;
	git_oid oid;

	ob->skips_loaded = 1;
	if (!ob->repo || git_revwalk_new(&walk, ob->repo) < 0)
		return;
	if (git_revwalk_push_head(walk) < 0) {
		git_revwalk_free(walk);
		return;
	}
	while (!git_revwalk_next(&oid, walk)) {
		git_commit *c = NULL;
		struct kopt_trailers tr = KOPT_TRAILERS_INIT;
		const char *kernel, *version, *skip;

		if (git_commit_lookup(&c, ob->repo, &oid) < 0)
			continue;
		/* most commits say nothing of LEARN: skip them cheaply */
		if (!strcasestr(git_commit_message(c), KOPT_TRAILER_LEARN) ||
		    kopt_trailers_parse(&tr, git_commit_message(c), 0)) {
			git_commit_free(c);
			continue;
		}
		kernel = kopt_trailers_get(&tr, KOPT_TRAILER_KERNEL);
		version = kopt_trailers_get(&tr, KOPT_TRAILER_VERSION);
		skip = kopt_trailers_learn_skip(&tr);
		if (kernel && version && skip) {
			struct kopt_skip *s;
			KOPT_ALLOC_GROW(ob->skips, ob->skips_nr + 1,
					ob->skips_alloc);
			s = &ob->skips[ob->skips_nr++];
			s->kernel = kopt_strdup(kernel);
			s->version = kopt_strdup(version);
			s->reason = kopt_strdup(skip);
			git_oid_tostr(s->commit, sizeof(s->commit), &oid);
		}
		kopt_trailers_release(&tr);
		git_commit_free(c);
	}
	git_revwalk_free(walk);
}

static int word_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* Is `p` past the end of a name ("v2." at the end of a sentence is)? */
static int name_end(const char *p)
{
	if (*p == '.')
		return !word_char(p[1]);
	return !word_char(*p);
}

/* Does `p` start with `word` as a whole word? */
static int word_at(const char *p, const char *word)
{
	size_t n = strlen(word);

	return !strncmp(p, word, n) && name_end(p + n);
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

int kopt_obligations_mentions(const char *text, const char *kernel,
			      const char *version)
{
	size_t klen = strlen(kernel);
	const char *p = text;

	while ((p = strstr(p, kernel))) {
		const char *q = p + klen;
		if ((p > text && word_char(p[-1])) || !name_end(q)) {
			p++;
			continue;
		}
		/* "<kernel>/<version>" or "<kernel> <version>" */
		if (*q == '/')
			q++;
		else
			q = skip_space(q);
		if (word_at(q, version))
			return 1;
		/* "<kernel> <parent> -> <version>" */
		while (word_char(*q))
			q++;
		q = skip_space(q);
		if (!strncmp(q, "->", 2) && word_at(skip_space(q + 2), version))
			return 1;
		p++;
	}
	return 0;
}

static int skipped(struct kopt_obligations *ob, const char *kernel,
		   const char *version)
{
	size_t i;

	if (!ob->skips_loaded)
		load_skips(ob);
	for (i = 0; i < ob->skips_nr; i++)
		if (!strcmp(ob->skips[i].kernel, kernel) &&
		    !strcmp(ob->skips[i].version, version))
			return 1;
	return 0;
}

int kopt_obligations_regressions(const struct kopt_analysis *a,
				 struct kopt_obligation **out, size_t *nr)
{
	size_t i, j, alloc = 0;

	*out = NULL;
	*nr = 0;
	for (i = 0; i < a->versions_nr; i++) {
		const struct kopt_analysis_version *v = &a->versions[i];
		const struct kopt_compare_trial *worst = NULL;
		struct kopt_obligation *o;

		if (!v->has_results || v->change != KOPT_CHANGE_REGRESSION)
			continue;
		for (j = 0; j < v->results.entries_nr; j++)
			if (v->trials[j].change == KOPT_CHANGE_REGRESSION &&
			    (!worst ||
			     v->trials[j].change_pct > worst->change_pct))
				worst = &v->trials[j];
		KOPT_ALLOC_GROW(*out, *nr + 1, alloc);
		o = &(*out)[(*nr)++];
		o->kernel = kopt_strdup(a->kernel);
		o->version = kopt_strdup(v->name);
		o->parent = kopt_strdup(v->parent >= 0 ?
					a->versions[v->parent].name : "?");
		if (worst && !worst->cur->trial) {
			/* a configuration no trial names: say which */
			struct kopt_buf cfg = KOPT_BUF_INIT;
			kopt_results_describe_entry(&cfg, worst->cur);
			if (worst->cur->device.name)
				kopt_buf_addf(&cfg, " on %s",
					      worst->cur->device.name);
			o->trial = kopt_buf_detach(&cfg, NULL);
		} else {
			o->trial = kopt_strdup(worst ? worst->cur->trial :
					       "(ad hoc)");
		}
		o->change_pct = worst ? worst->change_pct : NAN;
	}
	return 0;
}

void kopt_obligations_open(struct kopt_obligations *ob,
			   struct kopt_obligation *arr, size_t *nr)
{
	size_t i, kept = 0;

	for (i = 0; i < *nr; i++) {
		struct kopt_obligation *o = &arr[i];
		if (!ob->knowledge_loaded)
			load_knowledge(ob);
		if (kopt_obligations_mentions(ob->knowledge.buf, o->kernel,
					      o->version) ||
		    skipped(ob, o->kernel, o->version)) {
			kopt_obligations_free_one(o);
			continue;
		}
		arr[kept++] = *o;
	}
	*nr = kept;
}

int kopt_obligations_find(struct kopt_obligations *ob,
			  const struct kopt_analysis *a,
			  struct kopt_obligation **out, size_t *nr)
{
	int ret = kopt_obligations_regressions(a, out, nr);

	if (!ret)
		kopt_obligations_open(ob, *out, nr);
	return ret;
}

void kopt_obligations_free_one(struct kopt_obligation *o)
{
	free(o->kernel);
	free(o->version);
	free(o->parent);
	free(o->trial);
	memset(o, 0, sizeof(*o));
}

void kopt_obligations_free(struct kopt_obligation *arr, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		kopt_obligations_free_one(&arr[i]);
	free(arr);
}

void kopt_obligations_describe(struct kopt_buf *out,
			       const struct kopt_obligation *o)
{
	kopt_buf_addf(out, "%s regressed on %s (%.1f%% slower than %s) and "
		      "no anti-pattern names %s/%s: run 'git kopt learn new "
		      "anti-pattern <name> --from %s/%s', or add "
		      "'Kopt-Learn: skip <reason>' to a commit of %s",
		      o->version, o->trial, o->change_pct, o->parent,
		      o->kernel, o->version, o->kernel, o->version,
		      o->version);
}

struct cJSON *kopt_obligations_json(const struct kopt_obligation *o)
{
	cJSON *x = cJSON_CreateObject();

	cJSON_AddStringToObject(x, "kind", "anti-pattern");
	cJSON_AddStringToObject(x, "kernel", o->kernel);
	cJSON_AddStringToObject(x, "version", o->version);
	cJSON_AddStringToObject(x, "parent", o->parent);
	cJSON_AddStringToObject(x, "trial", o->trial);
	if (isnan(o->change_pct))
		cJSON_AddNullToObject(x, "change_pct");
	else
		cJSON_AddNumberToObject(x, "change_pct", o->change_pct);
	return x;
}
