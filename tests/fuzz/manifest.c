/*
 * init's manifest (lib/setup): parse any bytes; every entry it returns
 * has a blob id, a reported state and a path without a newline.
 */
#include "fuzz.h"

#include "setup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_manifest_entry *e = NULL;
	size_t nr = 0, i;
	char *text;

	fuzz_init();
	text = fuzz_copy(data, size, 0);
	if (!kopt_manifest_parse(&e, &nr, "fuzz-manifest", text, size))
		for (i = 0; i < nr; i++) {
			FUZZ_CHECK(strlen(e[i].installed) == 40,
				   "entry %zu: blob id '%s'", i, e[i].installed);
			FUZZ_CHECK(*e[i].path && !strchr(e[i].path, '\n'),
				   "entry %zu: path '%s'", i, e[i].path);
			FUZZ_CHECK(*e[i].reported, "entry %zu: no state", i);
		}
	kopt_manifest_release(e, nr);
	free(text);
	return 0;
}
