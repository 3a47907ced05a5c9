/*
 * Commit messages and trailers (lib/trailers): parse any message, with
 * and without '#' comments; the trailers read, written out under a
 * subject, read back the same; clean it up as git stores it; and add a
 * step's trailers: they must read back as the message's trailers, above
 * a patch when there is one.
 */
#include "fuzz.h"

#include <ctype.h>

#include "buf.h"
#include "trailers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_trailers t = KOPT_TRAILERS_INIT, add = KOPT_TRAILERS_INIT;
	struct kopt_trailers back = KOPT_TRAILERS_INIT;
	struct kopt_buf msg = KOPT_BUF_INIT, again = KOPT_BUF_INIT;
	const char *v;
	char *text;

	fuzz_init();
	text = fuzz_copy(data, size, 1);
	if (!kopt_trailers_parse(&t, text, '#')) {
		kopt_trailers_get(&t, KOPT_TRAILER_STEP);
		kopt_trailers_learn_skip(&t);
		if ((v = kopt_trailers_get(&t, KOPT_TRAILER_STEP)))
			kopt_step_parse(v);
	}
	kopt_trailers_release(&t);
	if (!kopt_trailers_parse(&t, text, 0)) {
		size_t i;
		/*
		 * one more below them: an empty "Conflicts:" last would
		 * start a conflicts list, which git leaves out
		 */
		kopt_buf_addstr(&msg, "Subject\n\n");
		kopt_trailers_format(&msg, &t);
		kopt_buf_addstr(&msg, "Kopt-Step: design\n");
		FUZZ_CHECK(!kopt_trailers_parse(&back, msg.buf, 0) &&
			   back.nr == t.nr + 1, "%zu trailers read back as "
			   "%zu from:\n%s", t.nr + 1, back.nr, msg.buf);
		for (i = 0; i < t.nr; i++)
			FUZZ_CHECK(!strcmp(t.items[i].key, back.items[i].key) &&
				   !strcmp(t.items[i].value,
					   back.items[i].value),
				   "trailer %zu reads back as '%s: %s' from:\n%s",
				   i, back.items[i].key, back.items[i].value,
				   msg.buf);
		kopt_trailers_release(&back);
		kopt_buf_reset(&msg);
		kopt_trailers_release(&t);
	}

	/* cleaning up twice is cleaning up once */
	kopt_message_cleanup(&msg, text, '#');
	kopt_message_cleanup(&again, msg.buf, '#');
	FUZZ_CHECK(msg.len == again.len && !memcmp(msg.buf, again.buf, msg.len),
		   "cleanup is not idempotent:\n%s\n---\n%s", msg.buf,
		   again.buf);

	/*
	 * the trailers git-kopt adds are the message's trailers after, when
	 * there is a message above a patch's divider (git reads no
	 * trailers in a subject)
	 */
	if (!msg.len || (!strncmp(msg.buf, "---", 3) &&
			 isspace((unsigned char)msg.buf[3])))
		goto done;
	kopt_trailers_add_step(&add, "mla-decode", "v3", KOPT_STEP_VERIFY);
	kopt_message_add_trailers(&msg, &add);
	FUZZ_CHECK(!kopt_trailers_parse(&back, msg.buf, '#'),
		   "a message with added trailers does not parse");
	v = kopt_trailers_get(&back, KOPT_TRAILER_STEP);
	FUZZ_CHECK(v && !strcmp(v, "verify"),
		   "added Kopt-Step reads back as '%s' from:\n%s",
		   v ? v : "(none)", msg.buf);
	v = kopt_trailers_get(&back, KOPT_TRAILER_VERSION);
	FUZZ_CHECK(v && !strcmp(v, "v3"), "added Kopt-Version reads back as "
		   "'%s' from:\n%s", v ? v : "(none)", msg.buf);
done:
	kopt_trailers_release(&add);
	kopt_trailers_release(&back);
	kopt_buf_release(&msg);
	kopt_buf_release(&again);
	free(text);
	return 0;
}
