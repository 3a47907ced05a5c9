#ifndef KOPT_TEST_MESSAGES_H
#define KOPT_TEST_MESSAGES_H

/*
 * The messages lib/error prints, caught in `messages` for a test to read:
 * catch_messages() and release_messages() are a test's setup and teardown,
 * or are called from them.
 */

#include "buf.h"
#include "error.h"

static struct kopt_buf messages = KOPT_BUF_INIT;

static inline void add_message(const char *prefix, const char *msg)
{
	kopt_buf_addf(&messages, "%s: %s\n", prefix, msg);
}

static inline int catch_messages(void **state)
{
	(void)state;
	kopt_buf_reset(&messages);
	kopt_error_set_routine(add_message);
	return 0;
}

/* A test whose messages are caught. */
#define MESSAGES_TEST(f) \
	cmocka_unit_test_setup_teardown(f, catch_messages, release_messages)

static inline int release_messages(void **state)
{
	(void)state;
	kopt_error_set_routine(NULL);
	kopt_buf_release(&messages);
	return 0;
}

#endif
