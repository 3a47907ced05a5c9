/*
 * The quick reading of results files for the views (lib/results:
 * kopt_results_scan(), kopt_results_parse_view()) against the full
 * reader, kopt_results_parse(), on any bytes:
 * - what the quick reading takes, the full reader takes too, and both
 *   give the same summary (the fields the views keep), with and without
 *   the kernel and version the file must name;
 * - kopt_results_parse_view() succeeds exactly when kopt_results_parse()
 *   does, with the same summary, and fails with the same messages.
 */
#include "fuzz.h"

#include "buf.h"
#include "results.h"

static void summary_of(struct kopt_buf *out, const struct kopt_results *r)
{
	kopt_buf_reset(out);
	kopt_results_summary(out, r);
}

static void compare(const char *text, size_t size, const char *kernel,
		    const char *version)
{
	struct kopt_results fast = KOPT_RESULTS_INIT, full = KOPT_RESULTS_INIT;
	struct kopt_results view = KOPT_RESULTS_INIT;
	struct kopt_error_catch c1 = KOPT_ERROR_CATCH_INIT;
	struct kopt_error_catch c2 = KOPT_ERROR_CATCH_INIT;
	struct kopt_buf a = KOPT_BUF_INIT, b = KOPT_BUF_INIT;
	int r_fast, r_full, r_view;

	r_fast = kopt_results_scan(&fast, text, size, kernel, version);
	kopt_error_catch(&c1);
	r_full = kopt_results_parse(&full, text, size, "f.json", kernel,
				    version);
	kopt_error_uncatch(&c1);
	kopt_error_catch(&c2);
	r_view = kopt_results_parse_view(&view, text, size, "f.json", kernel,
					 version);
	kopt_error_uncatch(&c2);

	FUZZ_CHECK(r_fast || !r_full, "the quick reading takes a file the "
		   "full reader refuses (%s)", c1.text.buf);
	FUZZ_CHECK(!r_view == !r_full, "view %d, full %d", r_view, r_full);
	FUZZ_CHECK(!strcmp(c1.text.buf, c2.text.buf),
		   "messages differ:\n%s\n---\n%s", c1.text.buf, c2.text.buf);
	if (!r_full) {
		summary_of(&a, &full);
		summary_of(&b, &view);
		FUZZ_CHECK(!strcmp(a.buf, b.buf),
			   "summaries differ:\n%s\n---\n%s", a.buf, b.buf);
		if (!r_fast) {
			summary_of(&b, &fast);
			FUZZ_CHECK(!strcmp(a.buf, b.buf), "quick summary "
				   "differs:\n%s\n---\n%s", a.buf, b.buf);
		}
	}
	kopt_results_release(&fast);
	kopt_results_release(&full);
	kopt_results_release(&view);
	kopt_error_catch_release(&c1);
	kopt_error_catch_release(&c2);
	kopt_buf_release(&a);
	kopt_buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	fuzz_init();
	text = fuzz_copy(data, size, 0);
	compare(text, size, NULL, NULL);
	compare(text, size, "mla-decode", "v1");
	free(text);
	return 0;
}
