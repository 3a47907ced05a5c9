#include <string.h>

#include "builtin.h"
#include "banned.h"

static const char *const hook_usage[] = {
	"git kopt hook (pre-commit | commit-msg <file> | pre-push <remote> <url>)",
	NULL
};

int cmd_hook(int argc, const char **argv, struct kopt_ctx *ctx)
{
	static const struct kopt_option options[] = { OPT_END() };
	const char *name;

	(void)ctx;
	argc = kopt_parse_options(argc, argv, options, hook_usage,
				  KOPT_PARSE_STOP_AT_NON_OPTION);
	if (argc < 1)
		kopt_usage_error(hook_usage, options, "which hook?");
	name = argv[0];
	if (strcmp(name, "pre-commit") && strcmp(name, "commit-msg") &&
	    strcmp(name, "pre-push"))
		kopt_usage_error(hook_usage, options, "unknown hook '%s'", name);
	return 0;
}
