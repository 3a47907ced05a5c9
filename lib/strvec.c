#include "strvec.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "banned.h"

const char *kopt_strvec_empty[] = { NULL };

void kopt_strvec_init(struct kopt_strvec *sv)
{
	sv->v = kopt_strvec_empty;
	sv->nr = sv->alloc = 0;
}

static const char *push_owned(struct kopt_strvec *sv, char *s)
{
	if (sv->v == kopt_strvec_empty)
		sv->v = NULL;
	KOPT_ALLOC_GROW(sv->v, sv->nr + 2, sv->alloc);
	sv->v[sv->nr++] = s;
	sv->v[sv->nr] = NULL;
	return s;
}

const char *kopt_strvec_push(struct kopt_strvec *sv, const char *s)
{
	return push_owned(sv, kopt_strdup(s));
}

const char *kopt_strvec_pushf(struct kopt_strvec *sv, const char *fmt, ...)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	kopt_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return push_owned(sv, kopt_buf_detach(&sb, NULL));
}

void kopt_strvec_pushv(struct kopt_strvec *sv, const char **items)
{
	for (; *items; items++)
		kopt_strvec_push(sv, *items);
}

void kopt_strvec_pop(struct kopt_strvec *sv)
{
	if (!sv->nr)
		return;
	free((char *)sv->v[--sv->nr]);
	sv->v[sv->nr] = NULL;
}

void kopt_strvec_clear(struct kopt_strvec *sv)
{
	size_t i;

	if (sv->v != kopt_strvec_empty) {
		for (i = 0; i < sv->nr; i++)
			free((char *)sv->v[i]);
		free(sv->v);
	}
	kopt_strvec_init(sv);
}

int kopt_strvec_has(const struct kopt_strvec *sv, const char *s)
{
	size_t i;

	for (i = 0; i < sv->nr; i++)
		if (!strcmp(sv->v[i], s))
			return 1;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void kopt_strvec_sort(struct kopt_strvec *sv)
{
	if (sv->nr > 1)
		qsort(sv->v, sv->nr, sizeof(*sv->v), cmp_str);
}
