#ifndef KOPT_JSON_H
#define KOPT_JSON_H

/*
 * A top-level JSON array written an element at a time, in the bytes
 * cJSON_Print() gives the whole array: "[" before the first element,
 * ", " between elements, each element's formatted text one level deeper
 * (a tab after each of its line breaks: cJSON escapes every control
 * character inside strings, so a line break in its text is always
 * layout), and "]" at the end ("[]" for none).
 *
 * A view of every kernel holds one kernel's tree at a time this way
 * instead of the trees and the text of all of them: at fifty kernels of
 * thirty versions, 120,000 nodes and a 2 MB print buffer, whose fresh
 * pages cost more than the printing.
 *
 * Calling sequence: kopt_json_array_add() for elements 0, 1, ...,
 * then kopt_json_array_end() with their number.
 */

#include <stddef.h>

#include "buf.h"

struct cJSON;

/* Append element `index` (0 for the first) of the array to `out`. */
void kopt_json_array_add(struct kopt_buf *out, size_t index,
			 const struct cJSON *item);

/* Close the array of `n` elements. */
void kopt_json_array_end(struct kopt_buf *out, size_t n);

#endif
