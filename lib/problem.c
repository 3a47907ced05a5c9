#include "problem.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"

void kopt_problems_add(struct kopt_problems *p, const char *file, int line,
		       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kopt_problems_vadd(p, file, line, fmt, ap);
	va_end(ap);
}

void kopt_problems_vadd(struct kopt_problems *p, const char *file, int line,
			const char *fmt, va_list ap)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	struct kopt_problem *pr;

	kopt_buf_vaddf(&sb, fmt, ap);
	KOPT_ALLOC_GROW(p->v, p->nr + 1, p->alloc);
	pr = &p->v[p->nr++];
	pr->file = kopt_strdup(file ? file : "");
	pr->line = line > 0 ? line : 0;
	pr->what = kopt_buf_detach(&sb, NULL);
}

void kopt_problem_add(struct kopt_problem_file *f, int line,
		      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kopt_problems_vadd(f->list, f->file, line, fmt, ap);
	va_end(ap);
	f->nr++;
}

/* Insertion sort: the lists are short, and it is stable. */
void kopt_problems_sort(struct kopt_problems *p)
{
	size_t i;

	for (i = 1; i < p->nr; i++) {
		struct kopt_problem cur = p->v[i];
		size_t j = i;

		while (j > 0) {
			const struct kopt_problem *a = &p->v[j - 1];
			int c = strcmp(a->file, cur.file);
			if (c < 0 || (!c && a->line <= cur.line))
				break;
			p->v[j] = p->v[j - 1];
			j--;
		}
		p->v[j] = cur;
	}
}

void kopt_problems_format(struct kopt_buf *out, const struct kopt_problems *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++) {
		if (p->v[i].line)
			kopt_buf_addf(out, "%s:%d: %s\n", p->v[i].file,
				      p->v[i].line, p->v[i].what);
		else
			kopt_buf_addf(out, "%s: %s\n", p->v[i].file,
				      p->v[i].what);
	}
}

void kopt_problems_move(struct kopt_problems *to, struct kopt_problems *from)
{
	size_t i;

	for (i = 0; i < from->nr; i++) {
		KOPT_ALLOC_GROW(to->v, to->nr + 1, to->alloc);
		to->v[to->nr++] = from->v[i];
	}
	free(from->v);
	from->v = NULL;
	from->nr = from->alloc = 0;
}

void kopt_problems_clear(struct kopt_problems *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++) {
		free(p->v[i].file);
		free(p->v[i].what);
	}
	free(p->v);
	p->v = NULL;
	p->nr = p->alloc = 0;
}
