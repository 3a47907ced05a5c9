#ifndef KOPT_DECIMAL_H
#define KOPT_DECIMAL_H

/*
 * Decimal numbers read as strtod() reads them, without strtod() where
 * one operation gives its answer: when the digits make an integer m of
 * at most 2^53 and the power of ten is exact in a double (10^0 to
 * 10^22), m * 10^e or m / 10^e of two exact doubles is the correctly
 * rounded value, which strtod()'s is too.  Readers that meet many plain
 * numbers (the quick results reader, the devlog's tables) go through
 * here, and ask strtod() for the rest.
 *
 * Nothing here allocates or prints.
 */

#include <stddef.h>
#include <stdint.h>

extern const double kopt_pow10_exact[23];

/*
 * m * 10^exp10, negated when `neg`, in *out: 1 when that is exact in one
 * operation (m <= 2^53, -22 <= exp10 <= 22), else 0 and *out untouched.
 */
static inline int kopt_decimal_exact(double *out, uint64_t m, int exp10,
				     int neg)
{
	double v;

	if (m > ((uint64_t)1 << 53) || exp10 < -22 || exp10 > 22)
		return 0;
	v = (double)m;
	v = exp10 < 0 ? v / kopt_pow10_exact[-exp10] :
			 v * kopt_pow10_exact[exp10];
	*out = neg ? -v : v;
	return 1;
}

/*
 * The whole of s[0, len) as strtod() reads it, when it is a plain
 * decimal ([-]digits[.digits], at most 19 digits) that
 * kopt_decimal_exact() takes: 1 with *out; 0 for anything else (the
 * caller asks strtod()).
 */
int kopt_decimal_plain(double *out, const char *s, size_t len);

#endif
