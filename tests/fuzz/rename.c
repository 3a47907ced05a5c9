/*
 * Renaming a version's sources (lib/scaffold, `git kopt design`): the
 * text of a user's source file and path renamed from v<N> to v<M>, and
 * from v0 (stems, shared code scanned).  The input is the source text;
 * its first byte picks the versions.  With renaming off, the text comes
 * back as it was.
 */
#include "fuzz.h"

#include "buf.h"
#include "scaffold.h"
#include "strvec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_rename r = KOPT_RENAME_INIT;
	struct kopt_strvec prefixes = KOPT_STRVEC_INIT;
	struct kopt_buf out = KOPT_BUF_INIT;
	long from, to;
	char *text, *path;

	fuzz_init();
	if (!size)
		return 0;
	from = data[0] % 4;
	to = from + 1 + data[0] / 64;
	data++;
	size--;
	text = fuzz_copy(data, size, 0);
	path = fuzz_copy(data, size < 64 ? size : 64, 1);

	kopt_rename_init(&r, from, to, 1);
	if (!from) {
		kopt_strvec_push(&prefixes, "mla_decode");
		kopt_strvec_push(&prefixes, "kernels");
		kopt_rename_add_file(&r, "mla_decode.cu", &prefixes);
		kopt_rename_add_file(&r, "mla_decode_utils.h", &prefixes);
		kopt_rename_add_file(&r, path, &prefixes);
		kopt_rename_scan_shared(&r, text, size / 2);
	}
	kopt_rename_text(&out, &r, text, size);
	kopt_buf_reset(&out);
	kopt_rename_path(&out, &r, path);
	kopt_rename_release(&r);

	kopt_buf_reset(&out);
	kopt_rename_init(&r, from, to, 0);
	kopt_rename_text(&out, &r, text, size);
	FUZZ_CHECK(out.len == size && !memcmp(out.buf, text, size),
		   "renaming off changed the text");
	kopt_rename_release(&r);

	kopt_strvec_clear(&prefixes);
	kopt_buf_release(&out);
	free(text);
	free(path);
	return 0;
}
