/*
 * Results files (lib/results): parse any bytes; a file that parses is
 * written out and read back to the same text, and its summary (the
 * cache's form) reads back.  The summary reader takes any bytes too.
 */
#include "fuzz.h"

#include "buf.h"
#include "results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_results r = KOPT_RESULTS_INIT, again = KOPT_RESULTS_INIT;
	struct kopt_buf out = KOPT_BUF_INIT, out2 = KOPT_BUF_INIT;
	char *text;

	fuzz_init();
	text = fuzz_copy(data, size, 0);
	/* the same bytes as a cache summary */
	if (!kopt_results_from_summary(&r, text, size))
		kopt_results_release(&r);
	r = (struct kopt_results)KOPT_RESULTS_INIT;

	if (kopt_results_parse(&r, text, size, "fuzz.json", NULL, NULL))
		goto done;
	kopt_results_format(&out, &r);
	FUZZ_CHECK(!kopt_results_parse(&again, out.buf, out.len, "again.json",
				       NULL, NULL),
		   "results written by git-kopt do not read back:\n%s",
		   out.buf);
	kopt_results_format(&out2, &again);
	FUZZ_CHECK(out.len == out2.len && !memcmp(out.buf, out2.buf, out.len),
		   "written twice, the results differ:\n%s\n---\n%s", out.buf,
		   out2.buf);
	kopt_results_release(&again);

	kopt_buf_reset(&out);
	kopt_results_summary(&out, &r);
	FUZZ_CHECK(!kopt_results_from_summary(&again, out.buf, out.len),
		   "a summary does not read back:\n%s", out.buf);
	kopt_results_release(&again);
done:
	kopt_results_release(&r);
	kopt_buf_release(&out);
	kopt_buf_release(&out2);
	free(text);
	return 0;
}
