#ifndef KOPT_TEST_MESSAGES_H
#define KOPT_TEST_MESSAGES_H

/*
 * The messages lib/error prints, caught in `messages` for a test to read:
 * catch_messages() in a test's setup, release_messages() in its teardown.
 */

#include "buf.h"
#include "error.h"

static struct kopt_buf messages = KOPT_BUF_INIT;

static inline void add_message(const char *prefix, const char *msg)
{
	kopt_buf_addf(&messages, "%s: %s\n", prefix, msg);
}

static inline void catch_messages(void)
{
	kopt_buf_reset(&messages);
	kopt_error_set_routine(add_message);
}

static inline void release_messages(void)
{
	kopt_error_set_routine(NULL);
	kopt_buf_release(&messages);
}

#endif
