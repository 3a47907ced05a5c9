/*
 * Devlogs (lib/devlog): parse any bytes; on a devlog that parses, its
 * dump and summary, and every splice edit (a new version, a performance
 * block put new and over an old one, Issues of a version and of a block),
 * each checked for the splice property: the bytes outside the edit are
 * the old bytes, the same edit again changes nothing, and an edit that
 * fails leaves the text as it was.
 */
#include "fuzz.h"

#include "buf.h"
#include "devlog.h"

static const char block_fmt[] =
	"**Performance** (NVIDIA H200, bfloat16, b=%ld, s=%ld, t=%ld):\n"
	"\n"
	"| Metric | Value | vs Previous |\n"
	"| --- | --- | --- |\n"
	"| Duration | 41.30 us | 12.0%% faster |\n"
	"| Achieved TFLOPs/s | 116.40 | +130.0%% |\n"
	"\n"
	"**Bottleneck**: Memory-bound\n"
	"\n"
	"**Issues**:\n"
	"- waves = 0.24\n";

enum edit_kind { ADD_VERSION, PUT_PERF, SET_ISSUES };

struct edit_req {
	enum edit_kind kind;
	const char *version;
	int has_config;
	long b, s, t;
	const struct kopt_devlog_new_version *nv;
	const char *const *items;
};

static int apply(struct kopt_devlog *dl, const struct edit_req *r,
		 struct kopt_devlog_edit *ed)
{
	struct kopt_buf block = KOPT_BUF_INIT;
	int ret;

	switch (r->kind) {
	case ADD_VERSION:
		return kopt_devlog_add_version(dl, r->nv, ed);
	case PUT_PERF:
		kopt_buf_addf(&block, block_fmt, r->b, r->s, r->t);
		ret = kopt_devlog_put_perf(dl, r->version, r->b, r->s, r->t, 0,
					   block.buf, ed);
		kopt_buf_release(&block);
		return ret;
	case SET_ISSUES:
		return kopt_devlog_set_issues(dl, r->version, r->has_config,
					      r->b, r->s, r->t, r->items, ed);
	}
	return -1;
}

/* The edit, checked; the devlog is the edited one afterwards. */
static void check_edit(struct kopt_devlog *dl, const struct edit_req *r)
{
	struct kopt_buf before = KOPT_BUF_INIT, after = KOPT_BUF_INIT;
	struct kopt_devlog_edit ed, ed2;
	int ret;

	kopt_buf_addbuf(&before, &dl->text);
	ret = apply(dl, r, &ed);
	if (ret) {
		FUZZ_CHECK(dl->text.len == before.len &&
			   !memcmp(dl->text.buf, before.buf, before.len),
			   "a failed edit (%d) changed the text", (int)r->kind);
		goto done;
	}
	if (!ed.changed) {
		FUZZ_CHECK(dl->text.len == before.len &&
			   !memcmp(dl->text.buf, before.buf, before.len),
			   "an edit that changed nothing changed the text");
		goto done;
	}
	/* the bytes outside [start, start + old_len) are the old ones */
	FUZZ_CHECK(ed.start + ed.old_len <= before.len,
		   "edit past the end: %zu + %zu > %zu", ed.start, ed.old_len,
		   before.len);
	FUZZ_CHECK(dl->text.len == before.len - ed.old_len + ed.new_len,
		   "edit of %zu -> %zu bytes made %zu of %zu", ed.old_len,
		   ed.new_len, dl->text.len, before.len);
	FUZZ_CHECK(!memcmp(dl->text.buf, before.buf, ed.start),
		   "bytes before the edit changed");
	FUZZ_CHECK(!memcmp(dl->text.buf + ed.start + ed.new_len,
			   before.buf + ed.start + ed.old_len,
			   before.len - ed.start - ed.old_len),
		   "bytes after the edit changed");

	/* idempotent: the same edit again changes nothing */
	kopt_buf_addbuf(&after, &dl->text);
	ret = apply(dl, r, &ed2);
	FUZZ_CHECK(!ret, "the edit (%d) failed the second time",
		   (int)r->kind);
	FUZZ_CHECK(!ed2.changed && dl->text.len == after.len &&
		   !memcmp(dl->text.buf, after.buf, after.len),
		   "the edit (%d) changed the text the second time",
		   (int)r->kind);
done:
	kopt_buf_release(&before);
	kopt_buf_release(&after);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT, back = KOPT_DEVLOG_INIT;
	struct kopt_buf out = KOPT_BUF_INIT, name = KOPT_BUF_INIT;
	char *text;
	size_t i, nv_nr;
	long max = -1;
	static const char *const items[] = { "first issue", "second, `code`",
					     NULL };
	static const char *const none[] = { NULL };
	static const char *const changed[] = { "tiled the KV loads", NULL };
	struct kopt_devlog_new_version nv = { NULL, "fuzzed: a title",
		"kernels/k/v9", changed, changed };
	struct edit_req r;

	fuzz_init();
	text = fuzz_copy(data, size, 0);
	if (kopt_devlog_parse(&dl, text, size, "fuzz.md"))
		goto done;

	kopt_devlog_dump(&out, &dl);
	kopt_buf_reset(&out);
	kopt_devlog_summary(&out, &dl, KOPT_DEVLOG_SUMMARY_PERFS);
	FUZZ_CHECK(!kopt_devlog_from_summary(&back, out.buf, out.len,
					     "fuzz.md"),
		   "a devlog's own summary does not read back");
	FUZZ_CHECK(back.versions_nr == dl.versions_nr,
		   "the summary has %zu versions, the devlog %zu",
		   back.versions_nr, dl.versions_nr);
	kopt_devlog_release(&back);

	for (i = 0; i < dl.versions_nr; i++)
		if (dl.versions[i].number > max)
			max = dl.versions[i].number;

	/* edits of the versions there (the first three), each checked */
	nv_nr = dl.versions_nr < 3 ? dl.versions_nr : 3;
	for (i = 0; i < nv_nr && i < dl.versions_nr; i++) {
		char *version = kopt_strdup(dl.versions[i].name);
		const struct kopt_devlog_version *v = &dl.versions[i];
		long b = 7, s = 3, t = 99;

		if (v->perfs_nr && v->perfs[0].has_config) {
			b = v->perfs[0].b;
			s = v->perfs[0].s;
			t = v->perfs[0].t;
		}
		r = (struct edit_req){ SET_ISSUES, version, 0, 0, 0, 0, NULL,
				       items };
		check_edit(&dl, &r);
		r = (struct edit_req){ PUT_PERF, version, 1, b, s, t, NULL,
				       NULL };
		check_edit(&dl, &r);
		r = (struct edit_req){ PUT_PERF, version, 1, 7, 3, 99, NULL,
				       NULL };
		check_edit(&dl, &r);
		r = (struct edit_req){ SET_ISSUES, version, 1, 7, 3, 99, NULL,
				       none };
		check_edit(&dl, &r);
		free(version);
	}

	/* a new version after the last one, and one that is there */
	if (max < 1000000) {
		kopt_buf_addf(&name, "v%ld", max + 1);
		nv.name = name.buf;
		r = (struct edit_req){ ADD_VERSION, NULL, 0, 0, 0, 0, &nv,
				       NULL };
		check_edit(&dl, &r);
	}
done:
	kopt_devlog_release(&dl);
	kopt_buf_release(&out);
	kopt_buf_release(&name);
	free(text);
	return 0;
}
