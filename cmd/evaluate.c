/*
 * git kopt evaluate <kernel>: the EVALUATE step.  The targets of the
 * kernel's settings against the best results of its versions in the work
 * tree: met (exit 0), or not met (exit 1) with the gap and the way back
 * to SELECT.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "builtin.h"
#include "analysis.h"
#include "overview.h"
#include "verdict.h"
#include "banned.h"

static const char *const evaluate_usage[] = {
	"git kopt evaluate <kernel> [--json]",
	NULL
};

static void describe(struct kopt_buf *out, const struct kopt_target_result *r)
{
	const struct kopt_target *t = r->target;

	kopt_buf_addf(out, "%s: ", t->text);
	if (!r->measured) {
		kopt_buf_addf(out, "not met: no version was measured on "
			      "trial '%s'", t->trial);
		return;
	}
	if (r->met)
		kopt_buf_addf(out, "met by %s", r->version);
	else
		kopt_buf_addf(out, "not met; the best is %s", r->version);
	if (*r->metric && !isnan(r->value)) {
		kopt_buf_addf(out, " (%s = %.2f", r->metric, r->value);
		if (!r->met && !isnan(r->bound)) {
			double gap = fabs(r->value - r->bound);
			kopt_buf_addf(out, ", %.2f away", gap);
			if (r->bound != 0)
				kopt_buf_addf(out, ", %.1f%%",
					      gap / fabs(r->bound) * 100.0);
		}
		kopt_buf_addch(out, ')');
	} else if (*r->metric) {
		kopt_buf_addf(out, " (%s not measured)", r->metric);
	}
	/* measured is the rule; other sources say so */
	if (r->version && r->source != KOPT_NUMBERS_MEASURED)
		kopt_buf_addf(out, " [%s]", kopt_numbers_source_name(r->source));
}

static cJSON *target_json(const struct kopt_target_result *r)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "target", r->target->text);
	cJSON_AddStringToObject(o, "trial", r->target->trial);
	cJSON_AddBoolToObject(o, "met", r->met);
	if (r->version)
		cJSON_AddStringToObject(o, "version", r->version);
	else
		cJSON_AddNullToObject(o, "version");
	if (*r->metric)
		cJSON_AddStringToObject(o, "metric", r->metric);
	if (*r->metric && !isnan(r->value))
		cJSON_AddNumberToObject(o, "value", r->value);
	if (!isnan(r->bound))
		cJSON_AddNumberToObject(o, "bound", r->bound);
	if (!r->met && *r->metric && !isnan(r->value) && !isnan(r->bound))
		cJSON_AddNumberToObject(o, "gap", fabs(r->value - r->bound));
	cJSON_AddBoolToObject(o, "replayed", r->replayed);
	if (r->version)
		cJSON_AddStringToObject(o, "source",
					kopt_numbers_source_name(r->source));
	return o;
}

static void print_json(const struct kopt_kernel *k,
		       const struct kopt_target_result *res, int met,
		       const char *next)
{
	cJSON *root = cJSON_CreateObject(), *arr;
	char *text;
	size_t i;

	cJSON_AddStringToObject(root, "kernel", k->name);
	cJSON_AddBoolToObject(root, "met", met);
	arr = cJSON_AddArrayToObject(root, "targets");
	for (i = 0; i < k->targets_nr; i++)
		cJSON_AddItemToArray(arr, target_json(&res[i]));
	cJSON_AddStringToObject(root, "next", next);
	text = cJSON_Print(root);
	printf("%s\n", text);
	free(text);
	cJSON_Delete(root);
}

int cmd_evaluate(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int json = 0;
	const struct kopt_option options[] = {
		OPT_BOOL(0, "json", &json, "print the evaluation as JSON"),
		OPT_END()
	};
	const struct kopt_config *cfg;
	const struct kopt_kernel *k;
	struct kopt_overview ov = KOPT_OVERVIEW_INIT;
	struct kopt_source src;
	struct kopt_target_result *res;
	struct kopt_buf line = KOPT_BUF_INIT, next = KOPT_BUF_INIT;
	size_t nr = 0, i;
	int met = 1, ret;

	argc = kopt_parse_options(argc, argv, options, evaluate_usage, 0);
	if (argc != 1)
		kopt_usage_error(evaluate_usage, options, argc ? "too many "
				 "arguments" : "which kernel?");
	cfg = kopt_ctx_config_or_die(ctx);
	k = kopt_ctx_kernel_or_die(ctx, argv[0]);
	if (!k->targets_nr)
		kopt_die("%s has no target; add 'target = <trial> <condition>' "
			 "to [kernel \"%s\"] in .kopt (e.g. 'target = "
			 "spec-decode duration_us <= 60')", k->name, k->name);
	/* the kernel analyze reads, through its cache */
	kopt_source_worktree_cached(&src, ctx->repo, ctx->top);
	ret = kopt_overview_load(&ov, &src, k, cfg);
	kopt_source_release(&src);
	kopt_lib_or_die(ret);
	nr = ov.numbers_nr;
	res = kopt_calloc(k->targets_nr, sizeof(*res));
	for (i = 0; i < k->targets_nr; i++) {
		if (ov.targets[i].problem)
			kopt_lib_or_die(kopt_error("%s",
						   ov.targets[i].problem));
		res[i] = ov.targets[i].res;
		met &= res[i].met;
	}
	if (met)
		kopt_buf_addf(&next, "done: open the pull request with 'git kopt "
			      "review'");
	else if (!nr)
		kopt_buf_addf(&next, "measure the base version: git kopt "
			      "profile %s v0", k->name);
	else
		kopt_buf_addf(&next, "back to SELECT: git kopt select %s",
			      k->name);

	if (json) {
		print_json(k, res, met, next.buf);
	} else {
		printf("%s: target %s\n", k->name, met ? "met" : "not met");
		for (i = 0; i < k->targets_nr; i++) {
			kopt_buf_reset(&line);
			describe(&line, &res[i]);
			printf("  %s\n", line.buf);
		}
		printf("next: %s\n", next.buf);
	}
	free(res);
	kopt_overview_release(&ov);
	kopt_buf_release(&line);
	kopt_buf_release(&next);
	return met ? 0 : 1;
}
