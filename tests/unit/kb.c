#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "error.h"
#include "kb.h"

#ifndef KOPT_SOURCE_DIR
#define KOPT_SOURCE_DIR "."
#endif
#define FIX KOPT_SOURCE_DIR "/tests/fixtures/knowledge/detail/"

/* A source over files held in memory; NULL text ends the list. */
struct file {
	const char *path;
	const char *text;
};

static int mem_read(void *data, const char *path, struct kopt_buf *out)
{
	const struct file *f;

	kopt_buf_reset(out);
	for (f = data; f->path; f++)
		if (!strcmp(f->path, path)) {
			kopt_buf_addstr(out, f->text);
			return 0;
		}
	return KOPT_ENOTFOUND;
}

static int mem_list(void *data, const char *dir, struct kopt_strvec *out)
{
	const struct file *f;
	size_t n = strlen(dir);

	for (f = data; f->path; f++)
		if (!strncmp(f->path, dir, n) && f->path[n] == '/')
			kopt_strvec_push(out, f->path);
	kopt_strvec_sort(out);
	return 0;
}

static char *valid;        /* a valid detail file */
static char *untriggered;  /* the same without its triggers */

static const char kopt_text[] =
	"[language \"cute-dsl\"]\n\tcontrol = warp\n"
	"[language \"cuda-c\"]\n\tcontrol = thread\n";

static void load(struct kopt_kb *kb, const struct file *files,
		 const char *language)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	struct kopt_kb_source src = { mem_read, mem_list, (void *)files };

	assert_int_equal(kopt_config_load_buf(&cfg, kopt_text,
					      sizeof(kopt_text) - 1, ".kopt"),
			 0);
	assert_int_equal(kopt_kb_load(kb, &src, &cfg, language), 0);
	kopt_config_release(&cfg);
}

static void problems(struct kopt_buf *out, const struct kopt_kb *kb)
{
	kopt_buf_reset(out);
	kopt_problems_format(out, &kb->problems);
}

#define SHARED ".claude/skills/optimization-catalog/SKILL.md"
#define CUTE ".claude/skills/optimization-catalog-cute-dsl/SKILL.md"
#define OPT_HDR "| ID | Optimization | Trigger Conditions | Est. Impact | " \
	"Pitfalls | Detail File |\n|---|---|---|---|---|---|\n"
#define ANTI_HDR "| ID | Anti-Pattern | Failure Mode | Source | " \
	"Detail File |\n|---|---|---|---|---|\n"

static void test_consistent(void **state)
{
	struct file files[] = {
		{ SHARED, "# Catalog\n\n" OPT_HDR
		  "| O1 | Split | `waves < 1` | 20% | p | "
		  "`docs/knowledge/optimizations/split.md` |\n"
		  "| O2 | Plain | `spill_bytes > 0` | 20% | p | "
		  "`docs/knowledge/optimizations/plain.md` |\n\n" ANTI_HDR
		  "| A1 | Spill | slow | report | "
		  "[spill](../../../docs/knowledge/anti-patterns/"
		  "spill.md) |\n" },
		/* the same conditions, written another way */
		{ CUTE, OPT_HDR "| O1 | TMA | `(b*s < 64 or dram_pct < 50) "
		  "and waves < 1` and `t >= 1024` | 10% | p | "
		  "[tma](/docs/knowledge/languages/cute-dsl/optimizations/"
		  "tma.md) |\n" },
		{ "docs/knowledge/README.md", "# not a detail file\n" },
		{ "docs/knowledge/optimizations/split.md", valid },
		{ "docs/knowledge/optimizations/plain.md", untriggered },
		{ "docs/knowledge/anti-patterns/spill.md", valid },
		{ "docs/knowledge/languages/cute-dsl/optimizations/tma.md",
		  valid },
		{ "docs/knowledge/languages/cute-dsl/anti-patterns/README.md",
		  "notes\n" },
		{ NULL, NULL }
	};
	struct kopt_buf out = KOPT_BUF_INIT;
	const struct kopt_kb_entry *e;
	const struct kopt_trigger *trig;
	struct kopt_kb kb;
	size_t n;

	(void)state;
	load(&kb, files, NULL);
	problems(&out, &kb);
	assert_string_equal(out.buf, "");
	/* shared, cute-dsl, cuda-c (configured, no catalog file) */
	assert_int_equal(kb.catalogs_nr, 3);
	assert_true(kb.catalogs[0].exists);
	assert_null(kb.catalogs[0].language);
	assert_string_equal(kb.catalogs[1].language, "cute-dsl");
	assert_false(kb.catalogs[2].exists);
	assert_int_equal(kb.entries_nr, 4);
	assert_int_equal(kb.details_nr, 4);

	/* the file's triggers, or the catalog row's when it has none */
	e = kopt_kb_find(&kb, "docs/knowledge/optimizations/split.md");
	trig = kopt_kb_entry_triggers(e, &n);
	assert_int_equal(n, 2);
	assert_ptr_equal(trig, e->detail->triggers);
	e = kopt_kb_find(&kb, "docs/knowledge/optimizations/plain.md");
	assert_int_equal(e->detail->triggers_nr, 0);
	trig = kopt_kb_entry_triggers(e, &n);
	assert_int_equal(n, 1);
	assert_string_equal(trig[0].text, "spill_bytes > 0");

	e = kopt_kb_find(&kb, "docs/knowledge/anti-patterns/spill.md");
	assert_non_null(e);
	assert_int_equal(e->kind, KOPT_KIND_ANTI_PATTERN);
	assert_string_equal(e->row->cell[KOPT_COL_ID], "A1");
	assert_ptr_equal(e->catalog, kopt_kb_catalog(&kb, NULL));
	assert_string_equal(e->detail->name, "Split-KV decode");
	e = kopt_kb_find(&kb, "docs/knowledge/languages/cute-dsl/"
			 "optimizations/tma.md");
	assert_non_null(e);
	assert_string_equal(e->language, "cute-dsl");
	kopt_buf_reset(&out);
	kopt_kb_entry_id(&out, e);
	assert_string_equal(out.buf, "cute-dsl/O1");
	kopt_kb_release(&kb);
	kopt_buf_release(&out);
}

static void test_problems(void **state)
{
	struct file files[] = {
		{ SHARED, OPT_HDR
		  "| O1 | A | `waves < 2` | 1% | p | "
		  "`docs/knowledge/optimizations/a.md` |\n"
		  "| O2 | B | x | 1% | p | "
		  "`docs/knowledge/optimizations/missing.md` |\n"
		  "| O3 | C | x | 1% | p | "
		  "`docs/knowledge/anti-patterns/c.md` |\n"
		  "| O4 | D | x | 1% | p | "
		  "`docs/knowledge/languages/cute-dsl/optimizations/d.md` |\n"
		  "| O5 | E | x | 1% | p | "
		  "`docs/knowledge/optimizations/a.md` |\n"
		  "| O6 | F | x | 1% | p | `src/notes.md` |\n"
		  "| O7 | G | x | 1% | p | [g](https://example.com/g.md) |\n"
		  "| O8 | H | x | 1% | p | "
		  "`docs/knowledge/optimizations/broken.md` |\n" },
		{ CUTE, OPT_HDR "| O1 | S | x | 1% | p | "
		  "`docs/knowledge/optimizations/shared.md` |\n" },
		{ "docs/knowledge/optimizations/a.md", valid },
		{ "docs/knowledge/optimizations/shared.md", valid },
		{ "docs/knowledge/optimizations/orphan.md", valid },
		{ "docs/knowledge/optimizations/broken.md",
		  "# Broken\n\n## When to Apply\n- `wave < 1`\n" },
		{ "docs/knowledge/anti-patterns/c.md", valid },
		{ "docs/knowledge/languages/cute-dsl/optimizations/d.md",
		  valid },
		{ "docs/knowledge/languages/cuda-c/anti-patterns/y.md", valid },
		{ "docs/knowledge/notes/x.md", valid },
		{ "src/notes.md", valid },
		{ NULL, NULL }
	};
	struct kopt_buf out = KOPT_BUF_INIT;
	struct kopt_kb kb;

	(void)state;
	load(&kb, files, NULL);
	problems(&out, &kb);
	assert_string_equal(out.buf,
		CUTE ":3: O1: 'docs/knowledge/optimizations/shared.md' is "
		"shared knowledge; its row belongs in " SHARED "\n"
		SHARED ":3: O1: trigger `waves < 2` is not among the triggers "
		"of 'docs/knowledge/optimizations/a.md'; make them agree\n"
		SHARED ":4: O2: detail file 'docs/knowledge/optimizations/"
		"missing.md' does not exist; create it with 'git kopt learn "
		"new optimization missing'\n"
		SHARED ":5: O3: 'docs/knowledge/anti-patterns/c.md' is an "
		"anti-pattern file (under anti-patterns/) but sits in the "
		"optimization index\n"
		SHARED ":6: O4: 'docs/knowledge/languages/cute-dsl/"
		"optimizations/d.md' is specific to language 'cute-dsl'; its "
		"row belongs in " CUTE "\n"
		SHARED ":7: O5: detail file 'docs/knowledge/optimizations/"
		"a.md' already has a row (O1, " SHARED ":3); a detail file "
		"has exactly one\n"
		SHARED ":8: O6: detail file 'src/notes.md' is not under "
		"'docs/knowledge'\n"
		SHARED ":9: O7: detail file 'https://example.com/g.md' is not "
		"a path in the repository\n"
		"docs/knowledge/languages/cuda-c/anti-patterns/y.md: no row in "
		"the anti-pattern index of .claude/skills/optimization-catalog-"
		"cuda-c/SKILL.md; add one ('git kopt learn new anti-pattern y "
		"--language cuda-c' adds it)\n"
		"docs/knowledge/notes/x.md: detail file in the wrong folder: "
		"not in a folder of detail files (docs/knowledge/"
		"optimizations/, docs/knowledge/anti-patterns/ or "
		"docs/knowledge/languages/<language>/{optimizations,"
		"anti-patterns}/)\n"
		"docs/knowledge/optimizations/broken.md:4: missing section "
		"'## Mechanism'\n"
		"docs/knowledge/optimizations/broken.md:4: missing section "
		"'## Affected Metrics'\n"
		"docs/knowledge/optimizations/broken.md:4: missing section "
		"'## Implementation'\n"
		"docs/knowledge/optimizations/broken.md:4: missing section "
		"'## Performance Evidence'\n"
		"docs/knowledge/optimizations/broken.md:4: missing section "
		"'## Generalization'\n"
		"docs/knowledge/optimizations/broken.md:4: missing section "
		"'## Pitfalls'\n"
		"docs/knowledge/optimizations/broken.md:4: missing section "
		"'## Interactions'\n"
		"docs/knowledge/optimizations/orphan.md: no row in the "
		"optimization index of " SHARED "; add one ('git kopt learn "
		"new optimization orphan' adds it)\n");
	/* `wave < 1` is no expression over known metrics: prose, a warning */
	{
		struct kopt_problems warn = KOPT_PROBLEMS_INIT;
		kopt_kb_prose_warnings(&kb, &warn);
		assert_int_equal(warn.nr, 1);
		assert_string_equal(warn.v[0].file,
				    "docs/knowledge/optimizations/broken.md");
		assert_int_equal(warn.v[0].line, 4);
		assert_string_equal(warn.v[0].what, "trigger `wave < 1` is "
			"read as prose for the agent to judge: unknown metric "
			"'wave' (known: duration_us, tc_pct, dram_pct, occ_pct, "
			"l2_hit_pct, spill_bytes, regs, waves, tflops, gbps, "
			"roofline_pct, b, s, t)");
		kopt_problems_clear(&warn);
	}
	kopt_kb_release(&kb);

	/* one language: the others' files and stray folders are not read */
	load(&kb, files, "cute-dsl");
	problems(&out, &kb);
	assert_null(strstr(out.buf, "cuda-c"));
	assert_null(strstr(out.buf, "notes/x.md"));
	assert_non_null(strstr(out.buf, "orphan.md: no row"));
	assert_int_equal(kb.catalogs_nr, 2);
	kopt_kb_release(&kb);
	kopt_buf_release(&out);
}

static void test_no_shared_catalog(void **state)
{
	struct file files[] = { { NULL, NULL } };
	struct kopt_buf out = KOPT_BUF_INIT;
	struct kopt_kb kb;

	(void)state;
	load(&kb, files, NULL);
	problems(&out, &kb);
	assert_string_equal(out.buf, SHARED ": the shared catalog does not "
			    "exist; run 'git kopt init'\n");
	kopt_kb_release(&kb);
	kopt_buf_release(&out);
}

/* What init installs passes lint. */
static void test_starter(void **state)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	struct kopt_kb_source src;
	struct kopt_buf out = KOPT_BUF_INIT;
	struct kopt_kb kb;
	size_t i, triggered = 0;

	(void)state;
	assert_int_equal(kopt_config_load_file(&cfg, KOPT_SOURCE_DIR
		"/templates/init/.kopt", ".kopt", NULL), 0);
	kopt_kb_source_worktree(&src, KOPT_SOURCE_DIR "/templates/init/");
	assert_int_equal(kopt_kb_load(&kb, &src, &cfg, NULL), 0);
	problems(&out, &kb);
	assert_string_equal(out.buf, "");
	assert_true(kb.entries_nr >= 7);
	for (i = 0; i < kb.entries_nr; i++) {
		const struct kopt_kb_entry *e = &kb.entries[i];
		assert_non_null(e->row);
		assert_non_null(e->detail);
		if (e->detail->triggers_nr)
			triggered++;
		assert_string_equal(e->detail->source_type,
				    "external report");
	}
	assert_int_equal(triggered, kb.entries_nr);
	kopt_kb_release(&kb);
	kopt_config_release(&cfg);
	kopt_buf_release(&out);
}

static int setup(void **state)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	(void)state;
	git_libgit2_init();
	if (kopt_buf_read_file(&sb, FIX "valid.md"))
		return -1;
	valid = kopt_buf_detach(&sb, NULL);
	kopt_buf_addstr(&sb, valid);
	{
		char *a = strstr(sb.buf, "- `waves < 1`");
		char *b = strstr(sb.buf, "- Control:");
		kopt_buf_splice(&sb, (size_t)(a - sb.buf), (size_t)(b - a),
				"", 0);
	}
	untriggered = kopt_buf_detach(&sb, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(valid);
	free(untriggered);
	git_libgit2_shutdown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_consistent),
		cmocka_unit_test(test_problems),
		cmocka_unit_test(test_no_shared_catalog),
		cmocka_unit_test(test_starter),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
