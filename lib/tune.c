#include "tune.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "expr.h"
#include "verdict.h"
#include "banned.h"

struct bind {
	const struct kopt_kernel *k;
	const double *values;
	long b, s, t;
};

static int lookup(void *data, const char *name, double *out)
{
	const struct bind *bd = data;
	size_t i;

	if (!name[1] && strchr("bst", name[0])) {
		*out = (double)(name[0] == 'b' ? bd->b :
				name[0] == 's' ? bd->s : bd->t);
		return 0;
	}
	for (i = 0; i < bd->k->tune_nr; i++)
		if (!strcmp(bd->k->tune[i].name, name)) {
			*out = bd->values[i];
			return 0;
		}
	for (i = 0; i < bd->k->params_nr; i++)
		if (!strcmp(bd->k->params[i].name, name)) {
			*out = bd->k->params[i].value;
			return 0;
		}
	return KOPT_ENOTFOUND;
}

int kopt_tune_allowed(const struct kopt_kernel *k, const double *values,
		      long b, long s, long t, int *why, const char *file)
{
	struct bind bd = { k, values, b, s, t };
	struct kopt_expr *expr;
	size_t i;
	int ret = 0;

	*why = -1;
	for (i = 0; !ret && *why < 0 && i < k->restricts_nr; i++) {
		struct kopt_error_catch e = KOPT_ERROR_CATCH_INIT;
		int line = k->restricts[i].line;
		double v = 0;
		kopt_error_catch(&e);
		ret = kopt_expr_parse(&expr, k->restricts[i].expr, file, line);
		if (!ret) {
			ret = kopt_expr_eval(expr, lookup, &bd, &v, file, line);
			kopt_expr_free(expr);
			/* a division by zero: the configuration is excluded */
			if (ret == KOPT_EINVALID) {
				ret = 0;
				v = 0;
			}
		}
		kopt_error_uncatch(&e);
		if (ret)
			ret = kopt_error_at(file, line, "cannot evaluate "
					    "'tune-restrict = %s': %s",
					    k->restricts[i].expr, e.cause.buf);
		kopt_error_catch_release(&e);
		if (ret || v == 0)
			*why = (int)i;
	}
	return ret;
}

size_t kopt_tune_full_size(const struct kopt_kernel *k)
{
	size_t n = 1, i;

	for (i = 0; i < k->tune_nr; i++) {
		if (k->tune[i].nr && n > SIZE_MAX / k->tune[i].nr)
			return SIZE_MAX;
		n *= k->tune[i].nr;
	}
	return k->tune_nr ? n : 0;
}

/* Visit every configuration in odometer order; fn returns nonzero to stop. */
static int walk(const struct kopt_kernel *k, long b, long s, long t,
		const char *file,
		int (*fn)(void *data, const unsigned *idx), void *data)
{
	size_t w = k->tune_nr, i;
	unsigned *idx;
	double *values;
	int ret = 0;

	if (!w)
		return 0;
	if (kopt_tune_full_size(k) > KOPT_TUNE_MAX_SPACE)
		return kopt_error_at(file, k->tune[0].line, "the tuning space "
				     "of kernel '%s' has more than %d "
				     "configurations before restrictions: give "
				     "fewer values", k->name,
				     KOPT_TUNE_MAX_SPACE);
	idx = kopt_calloc(w, sizeof(*idx));
	values = kopt_calloc(w, sizeof(*values));
	for (;;) {
		int why;
		for (i = 0; i < w; i++)
			values[i] = k->tune[i].values[idx[i]];
		ret = kopt_tune_allowed(k, values, b, s, t, &why, file);
		if (ret)
			break;
		if (why < 0 && fn(data, idx))
			break;
		for (i = w; i-- > 0;) {
			if (++idx[i] < k->tune[i].nr)
				break;
			idx[i] = 0;
		}
		if (i == (size_t)-1)
			break;
	}
	free(idx);
	free(values);
	return ret;
}

static int count_one(void *data, const unsigned *idx)
{
	(void)idx;
	(*(size_t *)data)++;
	return 0;
}

int kopt_tune_count(size_t *out, const struct kopt_kernel *k, long b, long s,
		    long t, const char *file)
{
	*out = 0;
	return walk(k, b, s, t, file, count_one, out);
}

static int add_one(void *data, const unsigned *idx)
{
	struct kopt_tune_space *sp = data;

	KOPT_ALLOC_GROW(sp->idx, (sp->nr + 1) * sp->width, sp->alloc);
	memcpy(sp->idx + sp->nr * sp->width, idx, sp->width * sizeof(*idx));
	sp->nr++;
	return 0;
}

int kopt_tune_enumerate(struct kopt_tune_space *out,
			const struct kopt_kernel *k, long b, long s, long t,
			const char *file)
{
	int ret;

	out->kernel = k;
	out->width = k->tune_nr;
	out->dflt = SIZE_MAX;
	ret = walk(k, b, s, t, file, add_one, out);
	if (!ret && k->tune_default)
		out->dflt = kopt_tune_space_find(out, k->tune_default);
	return ret;
}

void kopt_tune_space_release(struct kopt_tune_space *sp)
{
	free(sp->idx);
	memset(sp, 0, sizeof(*sp));
}

void kopt_tune_space_values(const struct kopt_tune_space *sp, size_t i,
			    double *values)
{
	size_t j;

	for (j = 0; j < sp->width; j++)
		values[j] = sp->kernel->tune[j].values[sp->idx[i * sp->width +
								 j]];
}

static int cmp_idx(const unsigned *a, const unsigned *b, size_t w)
{
	size_t j;

	for (j = 0; j < w; j++)
		if (a[j] != b[j])
			return a[j] < b[j] ? -1 : 1;
	return 0;
}

/* Odometer order is lexicographic order of the index vectors. */
static size_t find_idx(const struct kopt_tune_space *sp, const unsigned *idx)
{
	size_t lo = 0, hi = sp->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_idx(sp->idx + mid * sp->width, idx, sp->width);
		if (!c)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

size_t kopt_tune_space_find(const struct kopt_tune_space *sp,
			    const double *values)
{
	unsigned *idx = kopt_calloc(sp->width ? sp->width : 1, sizeof(*idx));
	size_t j, at = SIZE_MAX;
	const struct kopt_kernel *k = sp->kernel;

	for (j = 0; j < sp->width; j++) {
		size_t v;
		for (v = 0; v < k->tune[j].nr; v++)
			if (k->tune[j].values[v] == values[j])
				break;
		if (v == k->tune[j].nr)
			goto done;
		idx[j] = (unsigned)v;
	}
	at = find_idx(sp, idx);
done:
	free(idx);
	return at;
}

void kopt_tune_config_text(struct kopt_buf *out, const struct kopt_kernel *k,
			   const double *values)
{
	size_t i;

	for (i = 0; i < k->tune_nr; i++) {
		kopt_buf_addf(out, "%s%s=", i ? "," : "", k->tune[i].name);
		kopt_config_format_number(out, values[i]);
	}
}

void kopt_tune_config_id(struct kopt_buf *out, const struct kopt_kernel *k,
			 const double *values)
{
	size_t i;

	for (i = 0; i < k->tune_nr; i++) {
		const char *p;
		size_t at;
		if (i)
			kopt_buf_addch(out, '-');
		for (p = k->tune[i].name; *p; p++)
			kopt_buf_addch(out, tolower((unsigned char)*p));
		at = out->len;
		kopt_config_format_number(out, values[i]);
		for (; at < out->len; at++)
			if (out->buf[at] == '+')
				out->buf[at] = '.';
	}
}

int kopt_tune_config_parse(double *values, const struct kopt_kernel *k,
			   const char *text)
{
	unsigned char seen[256] = { 0 };
	const char *p = text;
	size_t i, got = 0;

	if (k->tune_nr > sizeof(seen))
		return KOPT_EINVALID;
	while (*p) {
		const char *eq = strchr(p, '='), *end;
		char *num_end;
		double d;
		if (!eq)
			return KOPT_EINVALID;
		for (i = 0; i < k->tune_nr; i++)
			if (strlen(k->tune[i].name) == (size_t)(eq - p) &&
			    !memcmp(k->tune[i].name, p, (size_t)(eq - p)))
				break;
		if (i == k->tune_nr || seen[i])
			return KOPT_EINVALID;
		end = eq + 1 + strcspn(eq + 1, ",");
		if (end == eq + 1 || isspace((unsigned char)eq[1]))
			return KOPT_EINVALID;
		d = strtod(eq + 1, &num_end);
		if (num_end != end || !isfinite(d))
			return KOPT_EINVALID;
		values[i] = d;
		seen[i] = 1;
		got++;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return KOPT_EINVALID;
	}
	return got == k->tune_nr && got ? 0 : KOPT_EINVALID;
}

int kopt_tune_strategy_parse(enum kopt_tune_strategy *out, const char *name)
{
	if (!strcmp(name, "exhaustive"))
		*out = KOPT_TUNE_EXHAUSTIVE;
	else if (!strcmp(name, "random"))
		*out = KOPT_TUNE_RANDOM;
	else if (!strcmp(name, "coarse-to-fine"))
		*out = KOPT_TUNE_COARSE_TO_FINE;
	else
		return KOPT_EINVALID;
	return 0;
}

const char *kopt_tune_strategy_name(enum kopt_tune_strategy s)
{
	switch (s) {
	case KOPT_TUNE_EXHAUSTIVE: return "exhaustive";
	case KOPT_TUNE_RANDOM: return "random";
	case KOPT_TUNE_COARSE_TO_FINE: return "coarse-to-fine";
	}
	return "?";
}

/* splitmix64: small, good enough for sampling, the same everywhere. */
static uint64_t next_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void kopt_tune_search_init(struct kopt_tune_search *s,
			   const struct kopt_tune_space *space,
			   enum kopt_tune_strategy strategy, uint64_t seed)
{
	size_t i, n = space->nr ? space->nr : 1;

	memset(s, 0, sizeof(*s));
	s->space = space;
	s->strategy = strategy;
	s->baseline_us = NAN;
	s->baseline_spread = NAN;
	s->noise_pct = 3.0;
	s->us = kopt_calloc(n, sizeof(*s->us));
	s->spread = kopt_calloc(n, sizeof(*s->spread));
	s->state = kopt_calloc(n, 1);
	for (i = 0; i < space->nr; i++)
		s->us[i] = s->spread[i] = NAN;
	s->best = SIZE_MAX;
	s->rng = seed;
	if (strategy == KOPT_TUNE_COARSE_TO_FINE)
		s->cap = (size_t)floor((double)space->nr * 0.15);
	if (s->cap && s->cap < 1 + space->width)
		s->cap = 1 + space->width;
	s->coarse_best = SIZE_MAX;
	s->climb_from = SIZE_MAX;
}

void kopt_tune_search_release(struct kopt_tune_search *s)
{
	free(s->us);
	free(s->spread);
	free(s->state);
	free(s->order);
	memset(s, 0, sizeof(*s));
}

static void push_order(struct kopt_tune_search *s, size_t pos, size_t *alloc)
{
	KOPT_ALLOC_GROW(s->order, s->order_nr + 1, *alloc);
	s->order[s->order_nr++] = pos;
}

/*
 * The coarse value indices of a parameter with n values: all of a short
 * list, else both ends and the middle (an end is often a special value:
 * "automatic", "none", the largest that fits).
 */
static size_t coarse_values(size_t n, unsigned *out)
{
	size_t k;

	if (n <= 3) {
		for (k = 0; k < n; k++)
			out[k] = (unsigned)k;
		return n;
	}
	out[0] = 0;
	out[1] = (unsigned)((n - 1) / 2);
	out[2] = (unsigned)(n - 1);
	return 3;
}

/*
 * The coarse step for parameter `j`: the best configuration so far (the
 * hand-picked one at first) with parameter j at each of its coarse
 * values, the others kept.
 */
static void plan_sweep(struct kopt_tune_search *s, size_t j)
{
	const struct kopt_tune_space *sp = s->space;
	size_t w = sp->width, alloc = 0, from, m, n;
	unsigned *idx = kopt_calloc(w ? w : 1, sizeof(*idx));
	unsigned vals[3];

	free(s->order);
	s->order = NULL;
	s->order_nr = s->cursor = 0;
	s->sweep = j;
	from = s->best != SIZE_MAX ? s->best :
	       sp->dflt != SIZE_MAX ? sp->dflt : 0;
	n = coarse_values(sp->kernel->tune[j].nr, vals);
	for (m = 0; m < n; m++) {
		size_t at;
		memcpy(idx, sp->idx + from * w, w * sizeof(*idx));
		idx[j] = vals[m];
		at = find_idx(sp, idx);
		if (at != SIZE_MAX && !s->state[at])
			push_order(s, at, &alloc);
	}
	free(idx);
}

static void plan_main(struct kopt_tune_search *s)
{
	const struct kopt_tune_space *sp = s->space;
	size_t alloc = 0, i;

	free(s->order);
	s->order = NULL;
	s->order_nr = s->cursor = 0;
	if (s->strategy == KOPT_TUNE_EXHAUSTIVE) {
		for (i = 0; i < sp->nr; i++)
			push_order(s, i, &alloc);
	} else if (s->strategy == KOPT_TUNE_RANDOM) {
		size_t want = s->max_evals ? s->max_evals :
			      (size_t)floor((double)sp->nr * 0.30);
		for (i = 0; i < sp->nr; i++)
			push_order(s, i, &alloc);
		for (i = s->order_nr; i > 1; i--) {
			size_t j = (size_t)(next_rand(&s->rng) % i), tmp;
			tmp = s->order[i - 1];
			s->order[i - 1] = s->order[j];
			s->order[j] = tmp;
		}
		/* the default was evaluated first: it counts */
		if (want && want - 1 < s->order_nr)
			s->order_nr = want - 1;
	} else {
		plan_sweep(s, 0);
	}
}

/* The neighbours of `from` not asked yet: one step in one parameter. */
static void plan_climb(struct kopt_tune_search *s, size_t from)
{
	const struct kopt_tune_space *sp = s->space;
	size_t w = sp->width, alloc = 0, j;
	unsigned *idx = kopt_calloc(w ? w : 1, sizeof(*idx));

	free(s->order);
	s->order = NULL;
	s->order_nr = s->cursor = 0;
	for (j = 0; j < w; j++) {
		int d;
		for (d = -1; d <= 1; d += 2) {
			long v = (long)sp->idx[from * w + j] + d;
			size_t at;
			if (v < 0 || v >= (long)sp->kernel->tune[j].nr)
				continue;
			memcpy(idx, sp->idx + from * w, w * sizeof(*idx));
			idx[j] = (unsigned)v;
			at = find_idx(sp, idx);
			if (at != SIZE_MAX && !s->state[at])
				push_order(s, at, &alloc);
		}
	}
	free(idx);
}

static int better(const struct kopt_tune_search *s, size_t a, size_t b)
{
	if (a == SIZE_MAX || s->state[a] != 2)
		return 0;
	return b == SIZE_MAX || s->state[b] != 2 || s->us[a] < s->us[b];
}

/* The phase after the current list ran out; 0 when the search is over. */
static int advance(struct kopt_tune_search *s)
{
	if (s->phase == 0) {
		s->phase = 1;
		plan_main(s);
		return 1;
	}
	if (s->phase == 1 && s->strategy == KOPT_TUNE_COARSE_TO_FINE &&
	    s->sweep + 1 < s->space->width) {
		plan_sweep(s, s->sweep + 1);
		return 1;
	}
	if (s->phase == 1 && s->strategy == KOPT_TUNE_COARSE_TO_FINE) {
		double base = s->baseline_us, spread = s->baseline_spread;
		s->coarse_best = s->best;
		if (!isfinite(base) && s->space->dflt != SIZE_MAX &&
		    s->state[s->space->dflt] == 2) {
			base = s->us[s->space->dflt];
			spread = s->spread[s->space->dflt];
		}
		if (s->best == SIZE_MAX) {
			s->stop = KOPT_TUNE_DONE;
			return 0;
		}
		if (isfinite(base) &&
		    kopt_verdict_judge(base, spread, s->us[s->best],
				       s->spread[s->best], s->noise_pct, NULL,
				       NULL) != KOPT_VERDICT_IMPROVEMENT) {
			s->stop = KOPT_TUNE_NO_PROMISE;
			return 0;
		}
		s->phase = 2;
		s->climb_from = s->best;
		plan_climb(s, s->climb_from);
		return 1;
	}
	if (s->phase == 2 && s->best != s->climb_from &&
	    better(s, s->best, s->climb_from)) {
		s->climb_from = s->best;
		plan_climb(s, s->climb_from);
		return 1;
	}
	s->phase = 3;
	s->stop = KOPT_TUNE_DONE;
	return 0;
}

size_t kopt_tune_search_next(struct kopt_tune_search *s, size_t *out,
			     size_t max)
{
	size_t n = 0;

	if (s->stop || !s->space->nr)
		goto over;
	for (;;) {
		if (s->max_evals && s->evals + n >= s->max_evals) {
			if (!n)
				s->stop = KOPT_TUNE_MAX_EVALS;
			break;
		}
		if (!s->max_evals && s->cap && s->evals + n >= s->cap) {
			if (!n)
				s->stop = KOPT_TUNE_DONE;
			break;
		}
		if (n == max)
			break;
		if (s->phase == 0) {
			size_t d = s->space->dflt != SIZE_MAX ? s->space->dflt : 0;
			if (n)
				break;
			if (s->state[d]) {
				advance(s);
				continue;
			}
			s->state[d] = 1;
			s->pending++;
			out[n++] = d;
			break;   /* the default alone: it is the baseline */
		}
		while (s->cursor < s->order_nr &&
		       s->state[s->order[s->cursor]])
			s->cursor++;
		if (s->cursor < s->order_nr) {
			size_t at = s->order[s->cursor++];
			s->state[at] = 1;
			s->pending++;
			out[n++] = at;
			continue;
		}
		if (n || !advance(s))
			break;
	}
	if (n)
		return n;
over:
	if (!s->stop)
		s->stop = KOPT_TUNE_DONE;
	return 0;
}

void kopt_tune_search_record(struct kopt_tune_search *s, size_t i, double us,
			     double spread)
{
	if (i >= s->space->nr || s->state[i] >= 2)
		return;
	if (s->state[i] == 1 && s->pending)
		s->pending--;
	s->evals++;
	if (!isfinite(us) || us < 0) {
		s->state[i] = 3;
		return;
	}
	s->state[i] = 2;
	s->us[i] = us;
	s->spread[i] = spread;
	if (better(s, i, s->best))
		s->best = i;
}

size_t kopt_tune_search_pick(const struct kopt_tune_search *s)
{
	size_t pick = s->best, i;

	if (pick == SIZE_MAX || !isfinite(s->spread[pick]))
		return pick;
	for (i = 0; i < s->space->nr; i++) {
		if (s->state[i] != 2 || i == s->best ||
		    !isfinite(s->spread[i]) || s->spread[i] >= s->spread[pick])
			continue;
		if (kopt_verdict_judge(s->us[s->best], s->spread[s->best],
				       s->us[i], s->spread[i], s->noise_pct,
				       NULL, NULL) == KOPT_VERDICT_NEUTRAL)
			pick = i;
	}
	return pick;
}

size_t kopt_tune_search_expected(const struct kopt_tune_search *s)
{
	size_t left, i, fine = 0;

	if (s->stop)
		return s->evals;
	left = s->pending;
	if (s->phase == 0) {
		struct kopt_tune_search copy = *s;
		size_t d = s->space->dflt != SIZE_MAX ? s->space->dflt : 0;
		/* the main list's size, without consuming the rng */
		copy.order = NULL;
		copy.order_nr = 0;
		plan_main(&copy);
		left += !s->state[d];
		for (i = 0; i < copy.order_nr; i++)
			left += copy.order[i] != d && !s->state[copy.order[i]];
		free(copy.order);
	} else {
		for (i = s->cursor; i < s->order_nr; i++)
			left += !s->state[s->order[i]];
	}
	if (s->strategy == KOPT_TUNE_COARSE_TO_FINE && s->phase < 2) {
		/* the sweeps still to come, and a climb's first step */
		size_t j;
		unsigned vals[3];
		for (j = s->phase == 0 ? 0 : s->sweep + 1; j < s->space->width;
		     j++)
			fine += coarse_values(s->space->kernel->tune[j].nr,
					      vals);
		fine += 2 * s->space->width;
	}
	left += fine;
	if (s->max_evals && s->evals + left > s->max_evals)
		return s->max_evals;
	if (!s->max_evals && s->cap && s->evals + left > s->cap)
		return s->cap;
	return s->evals + left;
}
