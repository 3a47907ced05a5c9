#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json.h"

/* The array written an element at a time reads as cJSON_Print() of it. */
static void check_same(cJSON *arr)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	char *whole = cJSON_Print(arr);
	const cJSON *it;
	size_t n = 0;

	cJSON_ArrayForEach(it, arr)
		kopt_json_array_add(&out, n++, it);
	kopt_json_array_end(&out, n);
	assert_non_null(whole);
	assert_string_equal(out.buf, whole);
	cJSON_free(whole);
	kopt_buf_release(&out);
	cJSON_Delete(arr);
}

static cJSON *kernel(int i)
{
	cJSON *o = cJSON_CreateObject(), *a, *v;

	cJSON_AddStringToObject(o, "kernel", "mla\n\t\"decode\"");
	cJSON_AddNumberToObject(o, "n", i + 0.25);
	cJSON_AddItemToObject(o, "title", cJSON_CreateNull());
	a = cJSON_AddArrayToObject(o, "versions");
	v = cJSON_CreateObject();
	cJSON_AddBoolToObject(v, "replayed", i % 2);
	cJSON_AddItemToObject(v, "empty", cJSON_CreateObject());
	cJSON_AddItemToObject(v, "none", cJSON_CreateArray());
	cJSON_AddItemToArray(a, v);
	cJSON_AddItemToArray(a, cJSON_CreateNumber(1e300));
	cJSON_AddItemToArray(a, cJSON_CreateString("line\r\nbreak"));
	cJSON_AddObjectToObject(cJSON_AddObjectToObject(o, "deep"), "er");
	return o;
}

static void test_as_whole(void **state)
{
	cJSON *arr;

	(void)state;
	check_same(cJSON_CreateArray());
	arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, kernel(0));
	check_same(arr);
	arr = cJSON_CreateArray();
	for (int i = 0; i < 5; i++)
		cJSON_AddItemToArray(arr, kernel(i));
	check_same(arr);
	/* elements that are not objects */
	arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, cJSON_CreateString("a"));
	cJSON_AddItemToArray(arr, cJSON_CreateArray());
	cJSON_AddItemToArray(arr, cJSON_CreateNumber(-3));
	cJSON_AddItemToArray(arr, kernel(7));
	check_same(arr);
}

/* The text of an element is one level deeper: a tab after its breaks. */
static void test_layout(void **state)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	cJSON *o = cJSON_CreateObject();

	(void)state;
	cJSON_AddNumberToObject(o, "a", 1);
	kopt_json_array_add(&out, 0, o);
	kopt_json_array_add(&out, 1, o);
	kopt_json_array_end(&out, 2);
	assert_string_equal(out.buf, "[{\n\t\t\"a\":\t1\n\t}, {\n\t\t\"a\":\t1\n\t}]");
	kopt_buf_reset(&out);
	kopt_json_array_end(&out, 0);
	assert_string_equal(out.buf, "[]");
	kopt_buf_release(&out);
	cJSON_Delete(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_as_whole),
		cmocka_unit_test(test_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
