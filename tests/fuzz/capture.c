/*
 * Captures of the injection library (lib/capture): parse any bytes into
 * a results entry, choosing stages by launch counts and by a glob.  An
 * entry read from a capture must format as a valid results file.
 */
#include "fuzz.h"

#include "buf.h"
#include "capture.h"
#include "results.h"

static void one(const char *text, size_t size, const char *stages)
{
	struct kopt_results_entry e;

	kopt_results_entry_init(&e);
	kopt_capture_parse(&e, text, size, "fuzz.json", stages);
	kopt_results_entry_release(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	fuzz_init();
	text = fuzz_copy(data, size, 0);
	one(text, size, NULL);
	one(text, size, "*attn*");
	free(text);
	return 0;
}
