#include "decimal.h"

#include "banned.h"

const double kopt_pow10_exact[23] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

static int digit(char c)
{
	return (unsigned char)(c - '0') <= 9;
}

int kopt_decimal_plain(double *out, const char *s, size_t len)
{
	const char *p = s, *end = s + len, *d;
	uint64_t m = 0;
	int neg = 0, exp10 = 0;
	size_t digits;

	if (p < end && *p == '-') {
		neg = 1;
		p++;
	}
	d = p;
	for (; p < end && digit(*p); p++)
		m = m * 10 + (uint64_t)(*p - '0');
	digits = (size_t)(p - d);
	if (!digits)
		return 0;
	if (p < end && *p == '.') {
		d = ++p;
		for (; p < end && digit(*p); p++)
			m = m * 10 + (uint64_t)(*p - '0');
		if (p == d)
			return 0;
		exp10 = -(int)(p - d);
		digits += (size_t)(p - d);
	}
	/* 19 digits at most: m holds them all without overflow */
	if (p != end || digits > 19)
		return 0;
	return kopt_decimal_exact(out, m, exp10, neg);
}
