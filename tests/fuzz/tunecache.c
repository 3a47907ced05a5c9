/*
 * The tuning cache (lib/tunecache): parse any bytes; a cache that parses
 * is written out and read back to the same lines, and writing that again
 * gives the same bytes (the format is its own fixed point).
 */
#include "fuzz.h"

#include "buf.h"
#include "tunecache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_tunecache c = KOPT_TUNECACHE_INIT, back = KOPT_TUNECACHE_INIT;
	struct kopt_buf out = KOPT_BUF_INIT, again = KOPT_BUF_INIT;
	char *text;
	size_t i;

	fuzz_init();
	text = fuzz_copy(data, size, 0);
	if (kopt_tunecache_parse(&c, text, size, "fuzz.tsv"))
		goto done;
	for (i = 1; i < c.nr; i++)
		FUZZ_CHECK(c.lines[i - 1].b <= c.lines[i].b ||
			   strcmp(c.lines[i - 1].device, c.lines[i].device) ||
			   strcmp(c.lines[i - 1].uuid, c.lines[i].uuid),
			   "lines out of order at %zu", i);
	kopt_tunecache_format(&out, &c);
	FUZZ_CHECK(!kopt_tunecache_parse(&back, out.buf, out.len, "out.tsv"),
		   "a cache's own text does not read back");
	FUZZ_CHECK(back.nr == c.nr, "%zu lines read back from %zu", back.nr,
		   c.nr);
	kopt_tunecache_format(&again, &back);
	FUZZ_CHECK(again.len == out.len && !memcmp(again.buf, out.buf, out.len),
		   "writing a cache read back changes it");
done:
	kopt_tunecache_release(&c);
	kopt_tunecache_release(&back);
	kopt_buf_release(&out);
	kopt_buf_release(&again);
	free(text);
	return 0;
}
