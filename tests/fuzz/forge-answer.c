/*
 * The forges' answers that lib/forge reads: a page of GitHub issue
 * comments or GitLab notes (the comment starting with the marker), and a
 * GitHub Actions event file (the pull request number).  Properties: a
 * found comment has an id and starts with the marker; a failed search
 * fills nothing; a number is in range.
 */
#include "fuzz.h"

#include "buf.h"
#include "forge.h"

#define MARKER "<!-- git-kopt review -->"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_forge_comment c = KOPT_FORGE_COMMENT_INIT;
	unsigned long n = 0;
	const char *b;
	char *text;
	int ret;

	fuzz_init();
	text = fuzz_copy(data, size, 0);
	ret = kopt_forge_find_comment(&c, text, size, MARKER);
	FUZZ_CHECK(ret == 0 || ret == KOPT_ENOTFOUND || ret == KOPT_EINVALID,
		   "find_comment returned %d", ret);
	if (!ret) {
		FUZZ_CHECK(c.id >= 1, "a comment with id %llu", c.id);
		b = c.body.buf;
		while (*b == ' ' || *b == '\t' || *b == '\r' || *b == '\n')
			b++;
		FUZZ_CHECK(!strncmp(b, MARKER, strlen(MARKER)),
			   "the comment found does not start with the marker");
	} else {
		FUZZ_CHECK(!c.id && !c.body.len && !c.url.len,
			   "a failed search filled the comment");
	}
	ret = kopt_forge_event_number(&n, text, size);
	FUZZ_CHECK(ret == 0 || ret == KOPT_ENOTFOUND || ret == KOPT_EINVALID,
		   "event_number returned %d", ret);
	if (!ret)
		FUZZ_CHECK(n >= 1 && n <= 1000000000UL, "number %lu", n);
	kopt_forge_comment_release(&c);
	free(text);
	return 0;
}
