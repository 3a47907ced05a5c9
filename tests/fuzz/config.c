/*
 * .kopt files (lib/config): load any bytes as settings; for what loads,
 * evaluate each kernel's expressions (flops, bytes, target) at each
 * trial, as the commands do.
 */
#include "fuzz.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	char *text;

	fuzz_init();
	text = fuzz_copy(data, size, 0);
	if (!kopt_config_load_buf(&cfg, text, size, ".kopt")) {
		use(&cfg);
		kopt_config_release(&cfg);
	}
	free(text);
	return 0;
}
