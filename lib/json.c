#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json.h"

void kopt_json_array_add(struct kopt_buf *out, size_t index,
			 const struct cJSON *item)
{
	char *text = cJSON_Print(item);
	const char *p, *nl;
	size_t breaks;

	if (!text)
		kopt_die_oom();
	for (p = text, breaks = 0; (p = strchr(p, '\n')); p++)
		breaks++;
	kopt_buf_grow(out, 2 + strlen(text) + breaks);
	kopt_buf_addstr(out, index ? ", " : "[");
	for (p = text; (nl = strchr(p, '\n')); p = nl + 1) {
		kopt_buf_add(out, p, (size_t)(nl - p) + 1);
		kopt_buf_addch(out, '\t');
	}
	kopt_buf_addstr(out, p);
	cJSON_free(text);
}

void kopt_json_array_end(struct kopt_buf *out, size_t n)
{
	kopt_buf_addstr(out, n ? "]" : "[]");
}
