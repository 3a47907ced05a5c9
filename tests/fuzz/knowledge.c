/*
 * Knowledge detail files (lib/knowledge): parse any bytes with every
 * problem reported, find template placeholders, and read the input as a
 * path in the knowledge base.
 */
#include "fuzz.h"

#include "buf.h"
#include "knowledge.h"
#include "problem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_detail d = KOPT_DETAIL_INIT;
	struct kopt_problems probs = KOPT_PROBLEMS_INIT;
	struct kopt_buf fmt = KOPT_BUF_INIT, why = KOPT_BUF_INIT;
	enum kopt_kind kind;
	char *text, *lang = NULL, *name = NULL;
	size_t len;
	long at;

	fuzz_init();
	text = fuzz_copy(data, size, 0);
	kopt_detail_parse(&d, "docs/knowledge/optimizations/x.md", text, size,
			  &probs);
	kopt_problems_format(&fmt, &probs);
	kopt_detail_release(&d);
	free(text);

	text = fuzz_copy(data, size, 1);
	at = kopt_knowledge_placeholder(text, &len);
	FUZZ_CHECK(at < 0 || (size_t)at + len <= strlen(text),
		   "placeholder at %ld + %zu past %zu", at, len, strlen(text));
	if (!kopt_knowledge_locate("docs/knowledge", text, &kind, &lang,
				   &name)) {
		free(lang);
		free(name);
	}
	kopt_knowledge_misplaced(&why, "docs/knowledge", text);
	kopt_problems_clear(&probs);
	kopt_buf_release(&fmt);
	kopt_buf_release(&why);
	free(text);
	return 0;
}
