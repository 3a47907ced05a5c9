/*
 * The Implementation Summary (lib/summary) an agent answers with: parse
 * any bytes against a version's folder; a summary that parses claims only
 * files inside that folder, renders, and records into a devlog entry as a
 * splice: the bytes around the block are the old ones, and recording it
 * again changes nothing.
 */
#include "fuzz.h"

#include "buf.h"
#include "designer.h"
#include "summary.h"

static const char devlog[] =
	"# mla-decode\n"
	"\n"
	"## Development log\n"
	"\n"
	"### V3: split-KV\n"
	"\n"
	"**Location**: `kernels/mla_decode/v3`\n"
	"\n"
	"**What changed**:\n"
	"- Split-KV\n"
	"\n"
	"### V4: next\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct kopt_summary_expect ex = {
		"mla-decode", "v3", "kernels/mla_decode/v3",
		"docs/kernels/mla-decode.md"
	};
	struct kopt_summary s = KOPT_SUMMARY_INIT;
	struct kopt_buf out = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	struct kopt_buf once = KOPT_BUF_INIT;
	char *in;
	size_t i, at;

	fuzz_init();
	in = fuzz_copy(data, size, 0);
	if (kopt_summary_parse(&s, in, size, &ex)) {
		FUZZ_CHECK(!s.kernel && !s.files.nr && !s.trials_nr,
			   "a refused summary kept its parts");
		goto done;
	}
	FUZZ_CHECK(s.files.nr > 0 && s.trials_nr > 0, "an empty part passed");
	for (i = 0; i < s.files.nr; i++)
		FUZZ_CHECK(!strncmp(s.files.v[i], "kernels/mla_decode/v3", 21) &&
			   (!s.files.v[i][21] || s.files.v[i][21] == '/') &&
			   !strstr(s.files.v[i], "/../") &&
			   strcmp(s.files.v[i] + strlen(s.files.v[i]) - 3, "/.."),
			   "'%s' is outside the folder", s.files.v[i]);
	kopt_summary_render_devlog(&out, &s, "fuzz");
	kopt_buf_addstr(&text, devlog);
	FUZZ_CHECK(!kopt_designer_record_summary(&text, "fuzz.md", "v3", &s,
						 "fuzz"),
		   "the summary cannot be recorded");
	at = (size_t)(strstr(devlog, "\n### V4") - devlog);
	FUZZ_CHECK(!memcmp(text.buf, devlog, at) &&
		   !strcmp(text.buf + text.len - (sizeof(devlog) - 1 - at),
			   devlog + at),
		   "bytes around the recorded summary changed");
	kopt_buf_addbuf(&once, &text);
	FUZZ_CHECK(!kopt_designer_record_summary(&text, "fuzz.md", "v3", &s,
						 "fuzz") &&
		   !strcmp(text.buf, once.buf),
		   "recording the summary twice changed the devlog");
done:
	kopt_summary_release(&s);
	kopt_buf_release(&out);
	kopt_buf_release(&text);
	kopt_buf_release(&once);
	free(in);
	return 0;
}
