#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "buf.h"
#include "config.h"
#include "error.h"

#include "messages.h"

static const char good[] =
	"# settings\n"
	"[kopt]\n"
	"\tnoise = 2.5%\n"
	"\tcatalog = cat/SKILL.md\n"
	"[trial \"decode\"]\n"
	"\tb = 32\n"
	"\ts = 1\n"
	"\tt = 4096\n"
	"[trial \"spec-decode\"]\n"
	"\tb = 32\n"
	"\ts = 16\n"
	"\tt = 4096\n"
	"[language \"cuda-c\"]\n"
	"\tcontrol = thread\n"
	"[language \"cute-dsl\"]\n"
	"\tcontrol = warp\n"
	"\tcatalog = mine.md\n"
	"[kernel \"mla-decode\"]\n"
	"\tlanguage = cuda-c\n"
	"\tsource = kernels/mla/{version}\n"
	"\tbuild = make -C kernels/mla VERSION={version}\n"
	"\trun = \"bench --b {b} --s {s} --t {t} ; echo done # really\"\n"
	"\tflops = 2*b*s*h*t*(dqk+dv)\n"
	"\tbytes = 2*(b*t*dqk + b*s*h*dqk + b*s*h*dv)\n"
	"\tparam = h=128\n"
	"\tparam = dqk=576\n"
	"\tparam = dv = 512\n"
	"\ttarget = spec-decode duration_us <= 60\n"
	"\ttarget = decode duration_us < 30 and dram_pct > 50\n";

static void load_ok(struct kopt_config *cfg, const char *text)
{
	int ret = kopt_config_load_buf(cfg, text, strlen(text), ".kopt");

	if (ret)
		fail_msg("load failed: %s", messages.buf);
}

static void test_good_file(void **state)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	const struct kopt_kernel *k;
	const struct kopt_trial *t;
	const struct kopt_language *l;
	char *cat;

	(void)state;
	load_ok(&cfg, good);
	assert_string_equal(messages.buf, "");
	assert_string_equal(cfg.path, ".kopt");
	assert_true(cfg.noise_pct == 2.5);
	assert_string_equal(cfg.catalog, "cat/SKILL.md");
	assert_int_equal(cfg.timeout_s, KOPT_DEFAULT_TIMEOUT_S);
	assert_int_equal(cfg.trials_nr, 2);
	t = kopt_config_trial(&cfg, "spec-decode");
	assert_non_null(t);
	assert_int_equal(t->b, 32);
	assert_int_equal(t->s, 16);
	assert_int_equal(t->t, 4096);
	assert_int_equal(t->line, 9);
	assert_null(kopt_config_trial(&cfg, "stress"));

	l = kopt_config_language(&cfg, "cuda-c");
	assert_non_null(l);
	assert_int_equal(l->control, KOPT_CONTROL_THREAD);
	cat = kopt_language_catalog_path(l);
	assert_string_equal(cat, ".claude/skills/optimization-catalog-cuda-c/SKILL.md");
	free(cat);
	cat = kopt_language_catalog_path(kopt_config_language(&cfg, "cute-dsl"));
	assert_string_equal(cat, "mine.md");
	free(cat);

	k = kopt_config_kernel(&cfg, "mla-decode");
	assert_non_null(k);
	assert_int_equal(k->line, 18);
	assert_string_equal(k->language, "cuda-c");
	assert_string_equal(k->source, "kernels/mla/{version}");
	assert_string_equal(k->run, "bench --b {b} --s {s} --t {t} ; echo done # really");
	assert_int_equal(k->params_nr, 3);
	assert_string_equal(k->params[2].name, "dv");
	assert_true(k->params[2].value == 512);
	assert_int_equal(k->targets_nr, 2);
	assert_string_equal(k->targets[0].trial, "spec-decode");
	assert_string_equal(k->targets[0].expr, "duration_us <= 60");
	assert_string_equal(k->targets[1].text,
			    "decode duration_us < 30 and dram_pct > 50");
	assert_null(kopt_config_kernel(&cfg, "other"));
	kopt_config_release(&cfg);
	assert_int_equal(cfg.kernels_nr, 0);
}

static void test_defaults(void **state)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;

	(void)state;
	load_ok(&cfg, "");
	assert_true(cfg.noise_pct == KOPT_DEFAULT_NOISE_PCT);
	assert_null(cfg.catalog);
	assert_int_equal(cfg.kernels_nr, 0);
	kopt_config_release(&cfg);
}

/* Load `text`, expect failure with exactly `message` reported. */
static void bad(const char *text, const char *message)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	int ret;

	kopt_buf_reset(&messages);
	ret = kopt_config_load_buf(&cfg, text, strlen(text), ".kopt");
	assert_int_equal(ret, KOPT_EINVALID);
	assert_string_equal(messages.buf, message);
	assert_int_equal(cfg.kernels_nr, 0);
	assert_null(cfg.path);
}

static void test_syntax_error(void **state)
{
	(void)state;
	kopt_buf_reset(&messages);
	{
		struct kopt_config cfg = KOPT_CONFIG_INIT;
		const char *text = "[kopt]\n\tnoise = 3%\n[trial \"x\"\n\tb = 1\n";
		assert_int_equal(kopt_config_load_buf(&cfg, text, strlen(text),
						      ".kopt"), KOPT_EINVALID);
		/* libgit2 words it; the place is ours */
		assert_true(kopt_starts_with(messages.buf, "error: .kopt:3: "));
		assert_non_null(strchr(messages.buf, '\n'));
		assert_ptr_equal(strchr(messages.buf, '\n'),
				 messages.buf + messages.len - 1);
	}
}

static void test_unknown_key(void **state)
{
	(void)state;
	bad("[kopt]\n\tnoise = 3%\n\tnoize = 4%\n",
	    "error: .kopt:3: unknown key 'kopt.noize'\n");
	bad("[trial \"decode\"]\n\tb = 1\n\ts = 1\n\tt = 1\n\tq = 2\n",
	    "error: .kopt:5: unknown key 'trial.decode.q'\n");
	bad("[language \"c\"]\n\tcontrol = block\n\tlevel = 2\n",
	    "error: .kopt:3: unknown key 'language.c.level'\n");
	bad("[kernel \"k\"]\n\tlanguage = c\n\tsorce = x\n",
	    "error: .kopt:3: unknown key 'kernel.k.sorce'\n");
	bad("\n[tuning]\n\tx = 1\n",
	    "error: .kopt:2: unknown section 'tuning'\n");
}

/* found by fuzzing: a name without a section asked for ~2^64 bytes */
static void test_key_outside_section(void **state)
{
	(void)state;
	bad("# settings\n\n\tcontrol = warp\n[kopt]\n\tnoise = 3%\n",
	    "error: .kopt:3: 'control' is set outside any section (put it "
	    "under [kopt], [trial], [language] or [kernel])\n");
}

static void test_bad_value(void **state)
{
	(void)state;
	bad("[kopt]\n\tnoise = lots\n",
	    "error: .kopt:2: bad value 'lots' for 'kopt.noise' (expected a "
	    "percentage such as 3%)\n");
	bad("[trial \"decode\"]\n\tb = 32\n\ts = -1\n\tt = 4096\n",
	    "error: .kopt:3: bad value '-1' for 'trial.decode.s' (expected a "
	    "positive integer)\n");
	bad("[language \"c\"]\n\tcontrol = grid\n",
	    "error: .kopt:2: bad value 'grid' for 'language.c.control' "
	    "(expected block, warp or thread)\n");
	bad("[trial \"decode\"]\n\tb = 32\n\ts = 1\n",
	    "error: .kopt:1: trial 'decode' needs b, s and t\n");
	bad("[language \"c\"]\n\tcontrol = thread\n[kernel \"k\"]\n"
	    "\tlanguage = c\n\tsource = x\n\tparam = h=wide\n",
	    "error: .kopt:6: bad param value in 'h=wide' (expected a "
	    "number)\n");
	bad("[language \"c\"]\n\tcontrol = thread\n[kernel \"k\"]\n"
	    "\tlanguage = c\n\tsource = x\n",
	    "error: .kopt:3: kernel 'k' needs 'run'\n");
	bad("[language \"c\"]\n\tcontrol = thread\n[kernel \"k\"]\n"
	    "\tlanguage = rust\n\tsource = x\n\trun = y\n",
	    "error: .kopt:4: kernel 'k': unknown language 'rust'\n");
}

static const char kernel_head[] =
	"[trial \"decode\"]\n\tb = 32\n\ts = 1\n\tt = 4096\n"
	"[language \"c\"]\n\tcontrol = thread\n"
	"[kernel \"k\"]\n\tlanguage = c\n\tsource = x\n\trun = y\n"
	"\tparam = h=2\n";

static void bad_kernel_line(const char *line, const char *message)
{
	struct kopt_buf text = KOPT_BUF_INIT;

	kopt_buf_addstr(&text, kernel_head);
	kopt_buf_addstr(&text, line);
	bad(text.buf, message);
	kopt_buf_release(&text);
}

static void test_bad_expression(void **state)
{
	(void)state;
	bad_kernel_line("\tflops = 2*(b*h\n",
			"error: .kopt:12: bad expression in 'flops': column 7: "
			"expected ')' at end of expression\n");
	bad_kernel_line("\tbytes = b**\n",
			"error: .kopt:12: bad expression in 'bytes': column 4: "
			"expected a value at end of expression\n");
	bad_kernel_line("\ttarget = decode duration_us\n",
			"error: .kopt:12: 'target' must be a comparison, e.g. "
			"'spec-decode duration_us <= 60'\n");
	bad_kernel_line("\ttarget = fast\n",
			"error: .kopt:12: bad target 'fast' (expected '<trial> "
			"<condition>', e.g. 'spec-decode duration_us <= 60')\n");
}

static void test_unknown_name(void **state)
{
	(void)state;
	bad_kernel_line("\tflops = 2*b*s*heads\n",
			"error: .kopt:12: unknown name 'heads' in 'flops'\n");
	/* metrics belong in targets, not in flops */
	bad_kernel_line("\tflops = duration_us\n",
			"error: .kopt:12: unknown name 'duration_us' in 'flops'\n");
	bad_kernel_line("\ttarget = decode time_us < 3\n",
			"error: .kopt:12: unknown name 'time_us' in 'target'\n");
	bad_kernel_line("\ttarget = stress duration_us < 3\n",
			"error: .kopt:12: target names unknown trial 'stress'\n");
}

static void test_bad_names(void **state)
{
	(void)state;
	bad("[kernel \"Mla\"]\n\tlanguage = c\n",
	    "error: .kopt:1: bad kernel name 'Mla' (use lower-case letters, "
	    "digits, '.', '_' and '-')\n");
	bad("\n[kernel \"a/b\"]\n\tlanguage = c\n",
	    "error: .kopt:2: bad kernel name 'a/b' (use lower-case letters, "
	    "digits, '.', '_' and '-')\n");
	bad("[trial \"x..y\"]\n\tb = 1\n",
	    "error: .kopt:1: bad trial name 'x..y' (use lower-case letters, "
	    "digits, '.', '_' and '-')\n");
	bad("[kopt \"sub\"]\n\tnoise = 3%\n",
	    "error: .kopt:1: section [kopt] takes no name\n");

	assert_true(kopt_valid_name("mla-decode"));
	assert_true(kopt_valid_name("v2.1_x"));
	assert_false(kopt_valid_name(""));
	assert_false(kopt_valid_name("-x"));
	assert_false(kopt_valid_name("a/b"));
	assert_false(kopt_valid_name("a..b"));
	assert_false(kopt_valid_name("A"));
	assert_false(kopt_valid_name("a b"));
}

static void test_missing_file(void **state)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;

	(void)state;
	assert_int_equal(kopt_config_load_file(&cfg, "/nonexistent/.kopt",
					       ".kopt", NULL), KOPT_ENOTFOUND);
	assert_string_equal(messages.buf, "");
}

static void test_git_config_overlay_wins(void **state)
{
	char path[] = "/tmp/kopt-test-XXXXXX", gpath[] = "/tmp/kopt-test-XXXXXX";
	int fd = mkstemp(path), gfd = mkstemp(gpath);
	const char *user = "[kopt]\n\tnoise = 5%\n\tgpu = 1\n";
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	git_config *overlay = NULL;

	(void)state;
	assert_true(fd >= 0 && gfd >= 0);
	assert_int_equal(write(fd, good, strlen(good)), (ssize_t)strlen(good));
	assert_int_equal(write(gfd, user, strlen(user)), (ssize_t)strlen(user));
	close(fd);
	close(gfd);
	assert_int_equal(git_config_new(&overlay), 0);
	assert_int_equal(git_config_add_file_ondisk(overlay, gpath,
						    GIT_CONFIG_LEVEL_LOCAL,
						    NULL, 0), 0);
	assert_int_equal(kopt_config_load_file(&cfg, path, ".kopt", overlay), 0);
	assert_true(cfg.noise_pct == 5.0);
	assert_int_equal(cfg.gpu, 1);
	assert_string_equal(cfg.catalog, "cat/SKILL.md");
	kopt_config_release(&cfg);
	git_config_free(overlay);
	unlink(path);
	unlink(gpath);
}

static void test_expand(void **state)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	struct kopt_vars vars = { 0 };
	struct kopt_buf out = KOPT_BUF_INIT;

	(void)state;
	load_ok(&cfg, good);
	vars.kernel = kopt_config_kernel(&cfg, "mla-decode");
	vars.version = "v3";
	vars.b = 32;
	vars.s = 16;
	vars.t = 4096;
	vars.have_bst = 1;
	assert_int_equal(kopt_config_expand(&out, "run {kernel}/{version} "
					    "--b {b} --s {s} --t {t} --h {h}",
					    &vars, NULL), 0);
	assert_string_equal(out.buf, "run mla-decode/v3 --b 32 --s 16 "
			    "--t 4096 --h 128");

	kopt_buf_reset(&out);
	vars.version = "v3; rm -rf ~";
	kopt_buf_reset(&messages);
	assert_int_equal(kopt_config_expand(&out, "x {version}", &vars, "t"),
			 KOPT_EINVALID);
	assert_string_equal(messages.buf, "error: t: refusing to substitute "
			    "'v3; rm -rf ~' for '{version}': not a plain "
			    "name\n");

	kopt_buf_reset(&out);
	kopt_buf_reset(&messages);
	vars.version = "v3";
	assert_int_equal(kopt_config_expand(&out, "x {tile}", &vars, NULL),
			 KOPT_EINVALID);
	assert_string_equal(messages.buf, "error: unknown placeholder "
			    "'{tile}' in 'x {tile}'\n");

	kopt_buf_reset(&messages);
	assert_int_equal(kopt_config_expand(&out, "x {tiling}", &vars, NULL),
			 KOPT_EINVALID);
	assert_string_equal(messages.buf, "error: no value for '{tiling}' in "
			    "'x {tiling}'\n");
	kopt_buf_release(&out);
	kopt_config_release(&cfg);
}

static void test_eval(void **state)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	struct kopt_vars vars = { 0 };
	struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;
	const struct kopt_kernel *k;
	double v = 0;

	(void)state;
	load_ok(&cfg, good);
	k = kopt_config_kernel(&cfg, "mla-decode");
	vars.kernel = k;
	vars.b = 32;
	vars.s = 16;
	vars.t = 4096;
	vars.have_bst = 1;
	assert_int_equal(kopt_config_eval(k->flops, &vars, &v, NULL), 0);
	assert_true(v == 2.0 * 32 * 16 * 128 * 4096 * (576 + 512));
	assert_int_equal(kopt_config_eval(k->bytes, &vars, &v, NULL), 0);
	assert_true(v == 2.0 * (32.0 * 4096 * 576 + 32.0 * 16 * 128 * 576 +
				32.0 * 16 * 128 * 512));
	kopt_error_catch(&caught);
	assert_int_not_equal(kopt_config_eval("b / (s - 16)", &vars, &v,
					      "flops"), 0);
	kopt_error_uncatch(&caught);
	assert_string_equal(caught.text.buf,
			    "flops: column 3: division by zero");
	kopt_error_catch_release(&caught);
	vars.have_bst = 0;
	kopt_error_catch(&caught);
	assert_int_equal(kopt_config_eval("b * h", &vars, &v, NULL),
			 KOPT_ENOTFOUND);
	kopt_error_uncatch(&caught);
	assert_non_null(strstr(caught.text.buf, "'b'"));
	kopt_error_catch_release(&caught);
	kopt_config_release(&cfg);
}

static void test_quote_round_trips(void **state)
{
	static const char *const values[] = {
		"plain", "a ; b", "x # y", "say \"hi\"", "back\\slash",
		" lead", "trail ", "", "two\nlines", "{version} && make",
		NULL
	};
	size_t i;

	(void)state;
	for (i = 0; values[i]; i++) {
		struct kopt_buf text = KOPT_BUF_INIT;
		struct kopt_config cfg = KOPT_CONFIG_INIT;

		kopt_buf_addstr(&text, "[language \"c\"]\n\tcontrol = thread\n"
				"[kernel \"k\"]\n\tlanguage = c\n\tsource = s\n"
				"\trun = ");
		kopt_config_quote(&text, values[i]);
		kopt_buf_addch(&text, '\n');
		load_ok(&cfg, text.buf);
		assert_string_equal(kopt_config_kernel(&cfg, "k")->run, values[i]);
		kopt_config_release(&cfg);
		kopt_buf_release(&text);
	}
}

/* What libgit2 reads of `text`, a line "name\tvalue" a setting. */
static void libgit2_reading(struct kopt_buf *out, const char *text)
{
	char tmpl[] = "/tmp/kopt-plain-XXXXXX";
	int fd = mkstemp(tmpl);
	git_config *gc = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *e;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(git_config_new(&gc), 0);
	assert_int_equal(git_config_add_file_ondisk(gc, tmpl,
						    GIT_CONFIG_LEVEL_LOCAL,
						    NULL, 0), 0);
	assert_int_equal(git_config_iterator_new(&it, gc), 0);
	while (!git_config_next(&e, it))
		kopt_buf_addf(out, "%s\t%s\n", e->name,
			      e->value ? e->value : "(none)");
	git_config_iterator_free(it);
	git_config_free(gc);
	unlink(tmpl);
}

static int plain_reading(struct kopt_buf *out, const char *text)
{
	struct kopt_config_entry *e;
	size_t nr, i;

	if (kopt_config_plain_entries(text, strlen(text), &e, &nr))
		return -1;
	for (i = 0; i < nr; i++)
		kopt_buf_addf(out, "%s\t%s\n", e[i].name,
			      e[i].value ? e[i].value : "(none)");
	kopt_config_entries_free(e, nr);
	return 0;
}

/*
 * A .kopt written plainly is read without libgit2, to the same settings
 * in the same order; anything else is left to libgit2.
 */
static void test_plain_reading(void **state)
{
	static const char *const plain[] = {
		"",
		"# only a comment",
		"[kopt]\n\tnoise = 3%\n",
		/* case, inner and outer blanks, a key alone, an empty value */
		"[Kernel \"Mixed Case.v2\"]\n"
		"\tRun = ./bench  --b {b}   --s {s}\t \n"
		"  Flag\n"
		"\tempty =\n"
		"\tsource= k/{version}\n"
		"\tlanguage =cuda-c\n"
		"\n   \t\n"
		"; a comment\n"
		"\t# another\n"
		"[kernel \"Mixed Case.v2\"]\n"
		"\ttarget = decode duration_us <= 20\n"
		"\ttarget = spec-decode tflops >= 100\n"
		"[a-b]\n\tx-y2 = \xce\xbcs and \xe2\x80\x94 dashes\n"
		"[trial   \"with space\"]\n\tb = 1",
	};
	static const char *const other[] = {
		good,
		"[kopt]\n\tcatalog = \"quoted\"\n",
		"[kopt]\n\tcatalog = a\\tb\n",
		"[kopt]\n\tnoise = 3% # a comment\n",
		"[kopt]\n\tnoise = 3% ; a comment\n",
		"[kopt]\n\trun = a \\\n b\n",
		"[include]\n\tpath = other\n",
		"[includeIf \"gitdir:x/\"]\n\tpath = other\n",
		"[kopt]\r\n\tnoise = 3%\r\n",
		"[language \"c\"]\n\tcontrol = thread\v\n",
		"[kopt]\n\tnoise = 3%\f\n",
		"\xef\xbb\xbf[kopt]\n\tnoise = 3%\n",
		"[kopt.sub]\n\tx = 1\n",
		"[kernel \"k\" ]\n\tx = 1\n",
		"[kopt] noise = 3%\n",
		"noise = 3%\n[kopt]\n",
		"[kopt]\n\t1x = 2\n",
		"[kopt]\n\tx_y = 2\n",
		"[kernel \"a\\\"b\"]\n\tx = 1\n",
		"[]\n",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(plain) / sizeof(*plain); i++) {
		struct kopt_buf a = KOPT_BUF_INIT, b = KOPT_BUF_INIT;
		assert_int_equal(plain_reading(&a, plain[i]), 0);
		libgit2_reading(&b, plain[i]);
		assert_string_equal(a.buf, b.buf);
		kopt_buf_release(&a);
		kopt_buf_release(&b);
	}
	for (i = 0; i < sizeof(other) / sizeof(*other); i++) {
		struct kopt_buf a = KOPT_BUF_INIT;
		assert_int_equal(plain_reading(&a, other[i]), -1);
		assert_int_equal(a.len, 0);
		kopt_buf_release(&a);
	}
	/* the .kopt that 'git kopt init' writes */
	{
		struct kopt_buf text = KOPT_BUF_INIT, a = KOPT_BUF_INIT;
		struct kopt_buf b = KOPT_BUF_INIT;
		assert_int_equal(kopt_buf_read_file(&text, KOPT_SOURCE_DIR
						    "/templates/init/.kopt"),
				 0);
		assert_int_equal(plain_reading(&a, text.buf), 0);
		libgit2_reading(&b, text.buf);
		assert_true(a.len > 100);
		assert_string_equal(a.buf, b.buf);
		kopt_buf_release(&text);
		kopt_buf_release(&a);
		kopt_buf_release(&b);
	}
	/* left to libgit2, a quoted value still reads */
	{
		struct kopt_config cfg = KOPT_CONFIG_INIT;
		static const char quoted[] =
			"[kopt]\n\tcatalog = \"cat/SKILL.md\" # where\n";
		assert_int_equal(kopt_config_load_buf(&cfg, quoted,
						      sizeof(quoted) - 1,
						      ".kopt"), 0);
		assert_string_equal(cfg.catalog, "cat/SKILL.md");
		kopt_config_release(&cfg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_good_file),
		MESSAGES_TEST(test_defaults),
		MESSAGES_TEST(test_syntax_error),
		MESSAGES_TEST(test_unknown_key),
		MESSAGES_TEST(test_key_outside_section),
		MESSAGES_TEST(test_bad_value),
		MESSAGES_TEST(test_bad_expression),
		MESSAGES_TEST(test_unknown_name),
		MESSAGES_TEST(test_bad_names),
		MESSAGES_TEST(test_missing_file),
		MESSAGES_TEST(test_git_config_overlay_wins),
		MESSAGES_TEST(test_expand),
		MESSAGES_TEST(test_eval),
		MESSAGES_TEST(test_quote_round_trips),
		cmocka_unit_test(test_plain_reading),
	};
	int ret;

	git_libgit2_init();
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return ret;
}
