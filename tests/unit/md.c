#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "md.h"

static int unclosed(const char *text)
{
	cmark_node *doc = kopt_md_parse(text, strlen(text));
	int line = kopt_md_unclosed_fence(doc, text, strlen(text));

	cmark_node_free(doc);
	return line;
}

static void test_unclosed_fence(void **state)
{
	(void)state;
	assert_int_equal(unclosed("# T\n\n```c\nint x;\n```\n"), 0);
	assert_int_equal(unclosed("# T\n\n```c\nint x;\n"), 3);
	assert_int_equal(unclosed("# T\n\n```c\nint x;\n\n\n"), 3);
	assert_int_equal(unclosed("# T\n\n```"), 3);
	assert_int_equal(unclosed("```\n```\n\n~~~~\nx\n~~~\n"), 4);
	assert_int_equal(unclosed("~~~~\nx\n~~~~~  \ntext\n"), 0);
	assert_int_equal(unclosed("- item\n\n  ```\n  code\n  ```\n"), 0);
	assert_int_equal(unclosed("> ```\n> code\n> ```\n"), 0);
	assert_int_equal(unclosed("    ```\n    indented code\n"), 0);
	assert_int_equal(unclosed("no code at all\n"), 0);
}

static void test_lines(void **state)
{
	const char *t = "a\nbb\nccc";

	(void)state;
	assert_int_equal(kopt_md_line_count(t, strlen(t)), 3);
	assert_int_equal(kopt_md_line_start(t, strlen(t), 2), 2);
	assert_int_equal(kopt_md_line_end(t, strlen(t), 2), 5);
	assert_int_equal(kopt_md_line_end(t, strlen(t), 3), 8);
}

/* A section runs to the next heading of any level; fences hide none. */
static void test_section(void **state)
{
	static const char text[] =
		"# Task\n\nintro\n\n### Optimizations to Apply\n\n"
		"1. tile\n2. fuse\n\n```\n# not a heading\n```\n"
		"#### Avoid\n\n- spills\n";
	static const char setext[] = "Optimizations to Apply\n---\nall\n";
	size_t start, end;

	(void)state;
	assert_int_equal(kopt_md_section(text, strlen(text),
					 "Optimizations to Apply", &start,
					 &end), 1);
	assert_int_equal(end - start, 42);
	assert_memory_equal(text + start,
			    "\n1. tile\n2. fuse\n\n```\n# not a heading\n"
			    "```\n", 42);
	assert_int_equal(kopt_md_section(text, strlen(text), "Avoid",
					 &start, &end), 1);
	assert_string_equal(text + start, "\n- spills\n");
	assert_int_equal(end, strlen(text));
	assert_int_equal(kopt_md_section(text, strlen(text), "Nothing",
					 &start, &end), 0);
	assert_int_equal(kopt_md_section(setext, strlen(setext),
					 "Optimizations", &start, &end), 1);
	assert_string_equal(setext + start, "all\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unclosed_fence),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_section),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
