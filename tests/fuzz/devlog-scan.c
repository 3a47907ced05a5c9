/*
 * The views' reading of devlogs (lib/devlog: kopt_devlog_parse_view(),
 * which finds the blocks line by line and leaves to cmark what it does
 * not take) against the full reader, kopt_devlog_parse(), on any bytes:
 * - both succeed or both fail, with the same messages;
 * - on success, the same model (its dump, and its summary with the
 *   performance blocks, numbers exact) once the full model's list items,
 *   table rows and performance contexts are dropped, as the views'
 *   reading keeps none.
 */
#include "fuzz.h"

#include "buf.h"
#include "devlog.h"

static void model_of(struct kopt_buf *out, const struct kopt_devlog *dl)
{
	kopt_buf_reset(out);
	kopt_devlog_dump(out, dl);
	kopt_devlog_summary(out, dl, KOPT_DEVLOG_SUMMARY_PERFS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_devlog full = KOPT_DEVLOG_INIT, view = KOPT_DEVLOG_INIT;
	struct kopt_error_catch c1 = KOPT_ERROR_CATCH_INIT;
	struct kopt_error_catch c2 = KOPT_ERROR_CATCH_INIT;
	struct kopt_buf a = KOPT_BUF_INIT, b = KOPT_BUF_INIT;
	char *text;
	int r_full, r_view;

	fuzz_init();
	text = fuzz_copy(data, size, 0);
	kopt_error_catch(&c1);
	r_full = kopt_devlog_parse(&full, text, size, "d.md");
	kopt_error_uncatch(&c1);
	kopt_error_catch(&c2);
	r_view = kopt_devlog_parse_view(&view, text, size, "d.md");
	kopt_error_uncatch(&c2);

	FUZZ_CHECK(r_full == r_view, "full %d, view %d", r_full, r_view);
	FUZZ_CHECK(!strcmp(c1.text.buf, c2.text.buf),
		   "messages differ:\n%s\n---\n%s", c1.text.buf, c2.text.buf);
	if (!r_full) {
		kopt_devlog_drop_unread(&full);
		model_of(&a, &full);
		model_of(&b, &view);
		FUZZ_CHECK(!strcmp(a.buf, b.buf),
			   "models differ:\n%s\n---\n%s", a.buf, b.buf);
	}
	kopt_devlog_release(&full);
	kopt_devlog_release(&view);
	kopt_error_catch_release(&c1);
	kopt_error_catch_release(&c2);
	kopt_buf_release(&a);
	kopt_buf_release(&b);
	free(text);
	return 0;
}
