#ifndef KOPT_STRVEC_H
#define KOPT_STRVEC_H

/*
 * A NULL-terminated array of owned strings, after git's strvec: usable
 * directly as an argv.  `v` is never NULL; KOPT_STRVEC_INIT or
 * kopt_strvec_init() before use, kopt_strvec_clear() to free.
 */

#include <stddef.h>

struct kopt_strvec {
	const char **v;
	size_t nr;
	size_t alloc;
};

extern const char *kopt_strvec_empty[];
#define KOPT_STRVEC_INIT { kopt_strvec_empty, 0, 0 }

void kopt_strvec_init(struct kopt_strvec *sv);
const char *kopt_strvec_push(struct kopt_strvec *sv, const char *s);
const char *kopt_strvec_pushf(struct kopt_strvec *sv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void kopt_strvec_pushv(struct kopt_strvec *sv, const char **items);
void kopt_strvec_pop(struct kopt_strvec *sv);
void kopt_strvec_clear(struct kopt_strvec *sv);
int kopt_strvec_has(const struct kopt_strvec *sv, const char *s);
void kopt_strvec_sort(struct kopt_strvec *sv);

#endif
