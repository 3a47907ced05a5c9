#include "tuneplan.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "error.h"
#include "lockfile.h"
#include "banned.h"

char *kopt_tuneplan_path(git_repository *repo, const char *kernel,
			 const char *version)
{
	return kopt_xstrfmt("%skopt/tune/%s/%s.plan",
			    git_repository_path(repo), kernel, version);
}

void kopt_tuneplan_add(struct kopt_tuneplan *p, const char *trial,
		       const char *config, double us, double spread,
		       const char *why)
{
	struct kopt_tuneplan_eval *e;

	KOPT_ALLOC_GROW(p->evals, p->nr + 1, p->alloc);
	e = &p->evals[p->nr++];
	e->trial = kopt_strdup(trial);
	e->config = kopt_strdup(config);
	e->us = us;
	e->spread = spread;
	e->why = why ? kopt_strdup(why) : NULL;
}

const struct kopt_tuneplan_eval *
kopt_tuneplan_find(const struct kopt_tuneplan *p, const char *trial,
		   const char *config)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		if (!strcmp(p->evals[i].trial, trial) &&
		    !strcmp(p->evals[i].config, config))
			return &p->evals[i];
	return NULL;
}

static int bad(const char *path, int line, const char *why)
{
	return kopt_error("%s:%d: %s; remove it and tune again without "
			  "--resume", path, line, why);
}

/* One "key<TAB>value..." line of the plan into `p`. */
static int parse_line(struct kopt_tuneplan *p, char **f, int n,
		      const char *path, int line)
{
	const char *key = f[0] ? f[0] : "";

	if (!strcmp(key, "eval")) {
		if (n != 6 || !f[1] || !f[2])
			return bad(path, line, "a broken evaluation");
		kopt_tuneplan_add(p, f[1], f[2], kopt_cache_num(f[3]),
				  kopt_cache_num(f[4]), f[5]);
		return 0;
	}
	if (n != 2 || !f[1])
		return bad(path, line, "not a line of a tuning plan");
	if (!strcmp(key, "strategy")) {
		free(p->strategy);
		p->strategy = kopt_strdup(f[1]);
	} else if (!strcmp(key, "seed")) {
		p->seed = strtoull(f[1], NULL, 10);
	} else if (!strcmp(key, "max-evals")) {
		p->max_evals = (size_t)strtoull(f[1], NULL, 10);
	} else if (!strcmp(key, "tree")) {
		free(p->tree);
		p->tree = kopt_strdup(f[1]);
	} else if (!strcmp(key, "build")) {
		free(p->build);
		p->build = kopt_strdup(f[1]);
	} else if (!strcmp(key, "trial")) {
		kopt_strvec_push(&p->trials, f[1]);
	} else {
		return bad(path, line, "not a line of a tuning plan");
	}
	return 0;
}

int kopt_tuneplan_read(struct kopt_tuneplan *out, const char *path)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	size_t pos = 0, hlen = strlen(KOPT_TUNEPLAN_HEADER);
	int line = 1, ret = 0;

	if ((ret = kopt_read_file(&text, path, NULL)))
		return ret;
	if (text.len <= hlen || memcmp(text.buf, KOPT_TUNEPLAN_HEADER, hlen) ||
	    text.buf[hlen] != '\n') {
		ret = bad(path, 1, "not a tuning plan of this format");
		goto done;
	}
	pos = hlen + 1;
	while (!ret) {
		char *f[7];
		int n = kopt_cache_split(text.buf, text.len, &pos, f, 7);
		if (n < 0)
			break;
		line++;
		ret = parse_line(out, f, n, path, line);
	}
	if (!ret && (!out->strategy || !out->tree || !out->build ||
		     !out->trials.nr))
		ret = bad(path, line, "the plan is incomplete");
done:
	kopt_buf_release(&text);
	return ret;
}

int kopt_tuneplan_write(const struct kopt_tuneplan *p, const char *path)
{
	struct kopt_buf s = KOPT_BUF_INIT;
	size_t i;
	int ret;

	kopt_buf_addstr(&s, KOPT_TUNEPLAN_HEADER "\nstrategy");
	kopt_cache_add_str(&s, p->strategy);
	kopt_buf_addf(&s, "\nseed\t%" PRIu64 "\nmax-evals\t%zu\ntree",
		      p->seed, p->max_evals);
	kopt_cache_add_str(&s, p->tree);
	kopt_buf_addstr(&s, "\nbuild");
	kopt_cache_add_str(&s, p->build);
	kopt_buf_addch(&s, '\n');
	for (i = 0; i < p->trials.nr; i++) {
		kopt_buf_addstr(&s, "trial");
		kopt_cache_add_str(&s, p->trials.v[i]);
		kopt_buf_addch(&s, '\n');
	}
	for (i = 0; i < p->nr; i++) {
		const struct kopt_tuneplan_eval *e = &p->evals[i];
		kopt_buf_addstr(&s, "eval");
		kopt_cache_add_str(&s, e->trial);
		kopt_cache_add_str(&s, e->config);
		kopt_cache_add_num(&s, e->us);
		kopt_cache_add_num(&s, e->spread);
		kopt_cache_add_str(&s, e->why);
		kopt_buf_addch(&s, '\n');
	}
	ret = kopt_mkdir_parents(path);
	if (!ret)
		ret = kopt_write_file_atomic(path, s.buf, s.len, 0644);
	kopt_buf_release(&s);
	return ret;
}

void kopt_tuneplan_release(struct kopt_tuneplan *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++) {
		free(p->evals[i].trial);
		free(p->evals[i].config);
		free(p->evals[i].why);
	}
	free(p->evals);
	free(p->strategy);
	free(p->tree);
	free(p->build);
	kopt_strvec_clear(&p->trials);
	p->evals = NULL;
	p->strategy = p->tree = p->build = NULL;
	p->nr = p->alloc = 0;
}
