/*
 * What lib/http reads of an answer: the Link header (the next page) and
 * the error body (the server's reason).  The input is the header value,
 * a line "--", and the body.  Properties: the next URL is a part of the
 * header; the reason is one line of printable bytes, at most 200 long.
 */
#include "fuzz.h"

#include "buf.h"
#include "http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
	struct kopt_buf next = KOPT_BUF_INIT, why = KOPT_BUF_INIT;
	struct kopt_buf header = KOPT_BUF_INIT;
	const uint8_t *rest;
	size_t rest_len, head_len, i;
	char *body;
	int ret;

	fuzz_init();
	head_len = fuzz_split(data, size, "\n--\n", &rest, &rest_len);
	kopt_buf_addstr(&header, "link: ");
	kopt_buf_add(&header, data, head_len);
	if (!memchr(data, '\0', head_len)) {
		kopt_strvec_push(&res.headers, header.buf);
		ret = kopt_http_next_link(&res, &next);
		FUZZ_CHECK(ret == 0 || ret == KOPT_ENOTFOUND, "next_link %d",
			   ret);
		if (!ret)
			FUZZ_CHECK(strstr(header.buf, next.buf) != NULL,
				   "the next link is not in the header");
	}

	body = fuzz_copy(rest, rest_len, 0);
	kopt_http_error_reason(&why, body, rest_len);
	FUZZ_CHECK(why.len <= 200, "a reason of %zu bytes", why.len);
	for (i = 0; i < why.len; i++)
		FUZZ_CHECK((unsigned char)why.buf[i] >= 0x20 &&
			   why.buf[i] != 0x7f, "a control byte in the reason");
	free(body);
	kopt_buf_release(&header);
	kopt_buf_release(&next);
	kopt_buf_release(&why);
	kopt_http_response_release(&res);
	return 0;
}
