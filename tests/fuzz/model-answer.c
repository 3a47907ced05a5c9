/*
 * A model's answer to the HTTP agent backend (lib/agent): the diff is cut
 * out of any text; what is cut plus what is left is never more than the
 * answer, and a diff that is found is a slice of it.
 */
#include "fuzz.h"

#include "agent.h"
#include "buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_buf diff = KOPT_BUF_INIT, rest = KOPT_BUF_INIT;
	char *text;

	fuzz_init();
	text = fuzz_copy(data, size, 1);
	if (!kopt_agent_split_diff(text, &diff, &rest)) {
		size_t n = strlen(text);
		FUZZ_CHECK(diff.len > 0, "an empty diff was found");
		FUZZ_CHECK(diff.len + rest.len <= n, "%zu + %zu > %zu",
			   diff.len, rest.len, n);
		FUZZ_CHECK(memmem(text, n, diff.buf, diff.len) != NULL,
			   "the diff is not a slice of the answer");
	} else {
		FUZZ_CHECK(!diff.len && !rest.len, "a failed cut left text");
	}
	kopt_buf_release(&diff);
	kopt_buf_release(&rest);
	free(text);
	return 0;
}
