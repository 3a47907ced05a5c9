#ifndef KOPT_PROFILE_STEP_H
#define KOPT_PROFILE_STEP_H

/*
 * PROFILE and VERIFY share one run: VERIFY is PROFILE plus the verdict
 * against the parent (cmd/verify.c).
 */

#include "builtin.h"

int kopt_profile_main(int argc, const char **argv, struct kopt_ctx *ctx,
		      int verify);

#endif
