#include "version.h"

#include <ctype.h>
#include <string.h>

#include "buf.h"

/* Larger numbers are no version anyone writes; stop before overflow. */
#define MAX_VERSION 100000000L

long kopt_version_digits(const char *s, const char **end)
{
	const char *p;
	long n = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	for (p = s; isdigit((unsigned char)*p); p++) {
		if (n > MAX_VERSION)
			return -1;
		n = n * 10 + (*p - '0');
	}
	if (s[0] == '0' && p - s > 1)
		return -1;
	*end = p;
	return n;
}

long kopt_version_prefix(const char *s, const char **end)
{
	if (!s || s[0] != 'v')
		return -1;
	return kopt_version_digits(s + 1, end);
}

long kopt_version_number(const char *name)
{
	const char *end;
	long n = kopt_version_prefix(name, &end);

	return n >= 0 && !*end ? n : -1;
}

int kopt_version_valid(const char *name)
{
	return kopt_version_number(name) >= 0;
}

int kopt_version_cmp(const void *a, const void *b)
{
	const char *va = *(const char *const *)a, *vb = *(const char *const *)b;
	long na = kopt_version_number(va), nb = kopt_version_number(vb);

	if (na != nb)
		return na < nb ? -1 : 1;
	return strcmp(va, vb);
}

char *kopt_version_name(long n)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	kopt_buf_addch(&sb, 'v');
	kopt_buf_add_int(&sb, n);
	return kopt_buf_detach(&sb, NULL);
}

void kopt_version_label(struct kopt_buf *out, const char *name)
{
	kopt_buf_addf(out, "V%ld", kopt_version_number(name));
}
