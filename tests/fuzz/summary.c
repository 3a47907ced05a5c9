/*
 * libFuzzer harness for the Implementation Summary parser: any bytes an
 * agent answers with are parsed or refused, never crash, and a parsed
 * summary names only files inside the version's folder.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "designer.h"
#include "error.h"
#include "summary.h"

static void quiet(const char *prefix, const char *msg)
{
	(void)prefix;
	(void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct kopt_summary_expect ex = {
		"k", "v1", "kernels/k/v1", "docs/kernels/k.md"
	};
	struct kopt_summary s = KOPT_SUMMARY_INIT;
	size_t i;

	kopt_error_set_routine(quiet);
	if (!kopt_summary_parse(&s, (const char *)data, size, &ex)) {
		struct kopt_buf out = KOPT_BUF_INIT;
		for (i = 0; i < s.files.nr; i++)
			if (strncmp(s.files.v[i], "kernels/k/v1", 12) ||
			    (s.files.v[i][12] && s.files.v[i][12] != '/') ||
			    strstr(s.files.v[i], ".."))
				abort();
		kopt_summary_render_devlog(&out, &s, "fuzz");
		kopt_buf_release(&out);
		kopt_summary_release(&s);
	}
	return 0;
}
