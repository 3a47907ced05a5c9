/*
 * VERIFY: profile a new version, then judge it against its parent, per
 * trial, and say what the LEARN gate will ask before its results can be
 * committed.  The measuring is PROFILE's (cmd/profile.c).
 */
#include "builtin.h"
#include "profile-step.h"
#include "banned.h"

int cmd_verify(int argc, const char **argv, struct kopt_ctx *ctx)
{
	return kopt_profile_main(argc, argv, ctx, 1);
}
