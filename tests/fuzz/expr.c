/*
 * The expression language (lib/expr) and triggers (lib/trigger): parse
 * any text; evaluate what parses with every name bound, and a trigger
 * over a results entry with some metrics measured and others not.  A
 * failure is reported once, a success not at all.
 */
#include "fuzz.h"

#include <math.h>

#include "buf.h"
#include "expr.h"
#include "results.h"
#include "strvec.h"
#include "trigger.h"

static int lookup(void *data, const char *name, double *out)
{
	(void)data;
	if (!strcmp(name, "missing"))
		return KOPT_ENOTFOUND;
	*out = (double)(strlen(name) % 7) - 1.5;
	return 0;
}

/* `ret` from a call made under `c`: one report when it failed, else none. */
static void check_reported(struct kopt_error_catch *c, int ret)
{
	kopt_error_uncatch(c);
	FUZZ_CHECK(c->errors == (ret != 0), "%d reports for %d", c->errors,
		   ret);
	kopt_error_catch_release(c);
	kopt_error_catch(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_expr *e = NULL;
	struct kopt_error_catch err = KOPT_ERROR_CATCH_INIT;
	struct kopt_strvec names = KOPT_STRVEC_INIT, conj = KOPT_STRVEC_INIT;
	struct kopt_trigger t;
	struct kopt_trigger_result res = KOPT_TRIGGER_RESULT_INIT;
	struct kopt_results_entry entry;
	char *text;
	double v;
	int ret;

	fuzz_init();
	text = fuzz_copy(data, size, 1);
	kopt_error_catch(&err);
	ret = kopt_expr_parse(&e, text, "fuzz", 3);
	check_reported(&err, ret);
	if (!ret) {
		kopt_expr_names(e, &names);
		kopt_expr_is_comparison(e);
		ret = kopt_expr_eval(e, lookup, NULL, &v, NULL, 0);
		check_reported(&err, ret);
		kopt_expr_free(e);
	}

	memset(&t, 0, sizeof(t));
	kopt_results_entry_init(&entry);
	entry.b = 32;
	entry.s = 16;
	entry.t = 4096;
	entry.metrics[0] = 41.3;
	ret = kopt_trigger_parse(&t, text, "fuzz", 3);
	check_reported(&err, ret);
	if (!ret) {
		kopt_trigger_conjuncts(&t, &conj);
		ret = kopt_trigger_eval(&res, &t, kopt_trigger_entry_lookup,
					&entry, "fuzz");
		check_reported(&err, ret);
		FUZZ_CHECK(res.truth == KOPT_TRUTH_UNKNOWN || !isnan(res.margin),
			   "a known truth with no margin");
		kopt_trigger_result_release(&res);
		kopt_trigger_release(&t);
	}
	kopt_error_catch_release(&err);
	kopt_results_entry_release(&entry);
	kopt_strvec_clear(&names);
	kopt_strvec_clear(&conj);
	free(text);
	return 0;
}
