/*
 * Captures of the injection library (lib/capture): parse any bytes into
 * a results entry, choosing stages by launch counts and by a glob; on
 * the bytes written to a file, whether a second run is needed and what
 * the capture says it was recorded from.  A capture that parses gives
 * stages, each with a name.
 */
#include "fuzz.h"

#include <unistd.h>

#include "buf.h"
#include "capture.h"
#include "results.h"

static void one(const char *text, size_t size, const char *stages)
{
	struct kopt_results_entry e;

	kopt_results_entry_init(&e);
	if (!kopt_capture_parse(&e, text, size, "fuzz.json", stages)) {
		FUZZ_CHECK(e.stages_nr > 0, "a capture with no stage");
		for (size_t i = 0; i < e.stages_nr; i++)
			FUZZ_CHECK(e.stages[i].name != NULL,
				   "a stage without a name");
	}
	kopt_results_entry_release(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct kopt_capture_program want = { "k", "v0", "./bench", NULL };
	char *text, *tree = NULL;
	FILE *f;

	fuzz_init();
	text = fuzz_copy(data, size, 0);
	one(text, size, NULL);
	one(text, size, "*attn*");
	if (!*path)
		snprintf(path, sizeof(path), "/tmp/kopt-fuzz-capture-%ld.json",
			 (long)getpid());
	f = fopen(path, "wb");
	if (f) {
		fwrite(data, 1, size, f);
		fclose(f);
		kopt_capture_needs_second_run(path, NULL);
		kopt_capture_check_program(path, &want, "GPU-0", 0, &tree);
		free(tree);
		unlink(path);
	}
	free(text);
	return 0;
}
