/*
 * .kopt files (lib/config): load any bytes as settings; for what loads,
 * evaluate each kernel's expressions (flops, bytes, target) at each
 * trial, as the commands do.  And what the plain reading takes must be
 * what libgit2 reads.
 */
#include "fuzz.h"

#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "expr.h"
#include "scaffold.h"

struct scope {
	const struct kopt_trial *trial;
	const struct kopt_kernel *kernel;
};

static int lookup(void *data, const char *name, double *out)
{
	const struct scope *sc = data;
	size_t i;

	if (!strcmp(name, "b"))
		*out = (double)sc->trial->b;
	else if (!strcmp(name, "s"))
		*out = (double)sc->trial->s;
	else if (!strcmp(name, "t"))
		*out = (double)sc->trial->t;
	else {
		for (i = 0; i < sc->kernel->params_nr; i++) {
			if (!strcmp(sc->kernel->params[i].name, name)) {
				*out = sc->kernel->params[i].value;
				return 0;
			}
		}
		return KOPT_ENOTFOUND;
	}
	return 0;
}

static void use(const struct kopt_config *cfg)
{
	struct kopt_buf dir = KOPT_BUF_INIT;
	size_t k, t;
	double v;

	for (k = 0; k < cfg->kernels_nr; k++) {
		const struct kopt_kernel *kn = &cfg->kernels[k];
		struct kopt_layout l = KOPT_LAYOUT_INIT;
		char *m;

		for (t = 0; t < cfg->trials_nr; t++) {
			struct scope sc = { &cfg->trials[t], kn };
			if (kn->flops)
				kopt_expr_eval_string(kn->flops, lookup, &sc,
						      &v, NULL, 0);
			if (kn->bytes)
				kopt_expr_eval_string(kn->bytes, lookup, &sc,
						      &v, NULL, 0);
		}
		kopt_config_kernel(cfg, kn->name);
		if (kn->source && !kopt_layout_init(&l, kn)) {
			kopt_layout_dir(&dir, &l, "v12");
			m = kopt_layout_match(&l, "v3");
			free(m);
			m = kopt_layout_match(&l, dir.buf);
			free(m);
		}
		kopt_layout_release(&l);
		kopt_buf_reset(&dir);
	}
	kopt_buf_release(&dir);
}

/*
 * What the plain reading takes, libgit2 reads to the same settings in
 * the same order: any difference is a finding.
 */
static void same_as_libgit2(const char *text, size_t size)
{
	struct kopt_config_entry *e;
	git_config *gc = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *g;
	char tmpl[] = "/tmp/kopt-fuzz-config-XXXXXX";
	size_t nr, i = 0;
	int fd;

	if (kopt_config_plain_entries(text, size, &e, &nr))
		return;
	fd = mkstemp(tmpl);
	if (fd < 0 || write(fd, text, size) != (ssize_t)size)
		abort();
	close(fd);
	if (git_config_new(&gc) < 0 ||
	    git_config_add_file_ondisk(gc, tmpl, GIT_CONFIG_LEVEL_LOCAL, NULL,
				       0) < 0 ||
	    git_config_iterator_new(&it, gc) < 0)
		abort();
	while (!git_config_next(&g, it)) {
		FUZZ_CHECK(i < nr && !strcmp(g->name, e[i].name) &&
			   !g->value == !e[i].value &&
			   (!g->value || !strcmp(g->value, e[i].value)),
			   "setting %zu: libgit2 reads %s=%s, the plain "
			   "reading %s=%s", i, g->name,
			   g->value ? g->value : "(none)",
			   i < nr ? e[i].name : "(nothing)",
			   i < nr && e[i].value ? e[i].value : "(none)");
		i++;
	}
	FUZZ_CHECK(i == nr, "libgit2 reads %zu settings, the plain reading "
		   "%zu", i, nr);
	git_config_iterator_free(it);
	git_config_free(gc);
	unlink(tmpl);
	kopt_config_entries_free(e, nr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	char *text;

	fuzz_init();
	text = fuzz_copy(data, size, 0);
	same_as_libgit2(text, size);
	if (!kopt_config_load_buf(&cfg, text, size, ".kopt")) {
		use(&cfg);
		kopt_config_release(&cfg);
	}
	free(text);
	return 0;
}
