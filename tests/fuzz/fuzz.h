#ifndef KOPT_FUZZ_H
#define KOPT_FUZZ_H

/*
 * Shared by the libFuzzer harnesses (tests/fuzz/README): each harness
 * includes this header once, defines LLVMFuzzerTestOneInput(), and calls
 * fuzz_init() first thing in it.
 *
 * fuzz_copy() hands the input to a reader in a buffer of exactly its
 * size (with a NUL after it only when `nul` is set), so that AddressSanitizer
 * sees a read one byte past the end.  FUZZ_CHECK() stops the run with a
 * message when a property of the reader does not hold: libFuzzer keeps
 * the input as a crash.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "error.h"

#define FUZZ_CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "fuzz: %s:%d: property failed: %s: ", \
				__FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			abort(); \
		} \
	} while (0)

static void fuzz_quiet(const char *prefix, const char *msg)
{
	(void)prefix;
	(void)msg;
}

/*
 * libgit2 ready, as the program's main() makes it; messages go nowhere
 * unless KOPT_FUZZ_VERBOSE is set (to debug one input).
 */
static inline void fuzz_init(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	git_libgit2_init();
	if (!getenv("KOPT_FUZZ_VERBOSE"))
		kopt_error_set_routine(fuzz_quiet);
}

static inline char *fuzz_copy(const uint8_t *data, size_t size, int nul)
{
	char *p = malloc(size + (nul ? 1 : 0) + (size || nul ? 0 : 1));

	if (!p)
		abort();
	memcpy(p, data, size);
	if (nul)
		p[size] = '\0';
	return p;
}

/*
 * Cut the input at the first occurrence of `sep` (a line of its own
 * in the seeds): *rest gets what follows.  Returns the length of the
 * first part.
 */
static inline size_t fuzz_split(const uint8_t *data, size_t size,
				const char *sep, const uint8_t **rest,
				size_t *rest_len)
{
	size_t n = strlen(sep), i;

	for (i = 0; i + n <= size; i++) {
		if (!memcmp(data + i, sep, n)) {
			*rest = data + i + n;
			*rest_len = size - i - n;
			return i;
		}
	}
	*rest = data + size;
	*rest_len = 0;
	return size;
}

#endif
