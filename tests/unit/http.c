#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "http.h"

#include "messages.h"

/*
 * A loopback server in a thread: it answers the requests it receives, in
 * order, with the canned answers of `answers` (one connection each), and
 * keeps every request it read.
 */
#define MAX_ANSWERS 8

struct server {
	int fd;
	int port;
	pthread_t thread;
	const char *answers[MAX_ANSWERS];
	int delay_ms[MAX_ANSWERS];
	int nr;
	struct kopt_buf requests[MAX_ANSWERS];
	int seen;
};

static struct server srv;
static char *owned[64];
static int owned_nr;
static const char *token = "ghp_S3cr3tT0k3nValue1234567890";

static void read_request(int c, struct kopt_buf *req)
{
	char buf[4096];
	ssize_t n;
	char *end;
	size_t want = 0;

	for (;;) {
		n = read(c, buf, sizeof(buf));
		if (n <= 0)
			return;
		kopt_buf_add(req, buf, (size_t)n);
		end = strstr(req->buf, "\r\n\r\n");
		if (!end)
			continue;
		if (!want) {
			const char *cl = strcasestr(req->buf,
						    "\r\nContent-Length: ");
			want = (size_t)(end - req->buf) + 4;
			if (cl && cl < end)
				want += strtoul(cl + 18, NULL, 10);
		}
		if (req->len >= want)
			return;
	}
}

static void *serve(void *arg)
{
	(void)arg;
	while (srv.seen < srv.nr) {
		int c = accept(srv.fd, NULL, NULL);
		const char *a;

		if (c < 0)
			break;
		read_request(c, &srv.requests[srv.seen]);
		a = srv.answers[srv.seen];
		if (srv.delay_ms[srv.seen])
			usleep((useconds_t)srv.delay_ms[srv.seen] * 1000);
		srv.seen++;
		if (write(c, a, strlen(a)) < 0)
			break;
		shutdown(c, SHUT_WR);
		close(c);
	}
	return NULL;
}

static void start(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int one = 1;

	srv.fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(srv.fd >= 0);
	setsockopt(srv.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(srv.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(srv.fd, 8), 0);
	getsockname(srv.fd, (struct sockaddr *)&sa, &len);
	srv.port = ntohs(sa.sin_port);
	pthread_create(&srv.thread, NULL, serve, NULL);
}

static void stop(void)
{
	int i;

	shutdown(srv.fd, SHUT_RDWR);
	close(srv.fd);
	pthread_join(srv.thread, NULL);
	for (i = 0; i < MAX_ANSWERS; i++)
		kopt_buf_release(&srv.requests[i]);
	while (owned_nr > 0)
		free(owned[--owned_nr]);
	memset(&srv, 0, sizeof(srv));
}

static void answer(const char *a)
{
	srv.answers[srv.nr++] = a;
}

/* An answer with the right Content-Length; `hdrs` ends with "\r\n". */
static const char *make(const char *status, const char *hdrs,
			const char *body)
{
	char *a = kopt_xstrfmt("HTTP/1.1 %s\r\nConnection: close\r\n%s"
			       "Content-Length: %zu\r\n\r\n%s", status,
			       hdrs, strlen(body), body);
	owned[owned_nr++] = a;
	return a;
}

static char *url(const char *path)
{
	return kopt_xstrfmt("http://127.0.0.1:%d%s", srv.port, path);
}

static void fast(struct kopt_http *h)
{
	h->backoff_ms = 10;
	h->timeout_ms = 5000;
}

#define OK_JSON make("200 OK", "Content-Type: application/json\r\n" \
	"Link: <http://x/a?page=1>; rel=\"prev\", " \
	"<http://x/a?page=3>; rel=\"next\"\r\n", "{\"id\": 42}\n")

static void test_get(void **state)
{
	struct kopt_http h = KOPT_HTTP_INIT;
	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
	struct kopt_buf next = KOPT_BUF_INIT;
	char *u;

	(void)state;
	answer(OK_JSON);
	start();
	u = url("/repos/o/r/issues/7/comments?per_page=100");
	fast(&h);
	kopt_http_set_token(&h, "Authorization: Bearer ", token,
			    "GITHUB_TOKEN");
	req.method = "GET";
	req.url = u;
	kopt_strvec_push(&req.headers, "Accept: application/vnd.github+json");
	assert_int_equal(kopt_http_send(&h, &req, &res), 0);
	assert_int_equal(res.status, 200);
	assert_string_equal(res.body.buf, "{\"id\": 42}\n");
	assert_int_equal(res.attempts, 1);
	assert_string_equal(kopt_http_header(&res, "Content-Type"),
			    "application/json");
	assert_int_equal(kopt_http_next_link(&res, &next), 0);
	assert_string_equal(next.buf, "http://x/a?page=3");
	assert_non_null(strstr(srv.requests[0].buf,
			"GET /repos/o/r/issues/7/comments?per_page=100 "
			"HTTP/1.1\r\n"));
	assert_non_null(strstr(srv.requests[0].buf,
			"\r\nAuthorization: Bearer ghp_S3cr3tT0k3nValue"));
	assert_non_null(strstr(srv.requests[0].buf,
			"\r\nUser-Agent: git-kopt/"));
	assert_non_null(strstr(srv.requests[0].buf,
			"\r\nAccept: application/vnd.github+json\r\n"));
	assert_string_equal(messages.buf, "");
	stop();
	free(u);
	kopt_buf_release(&next);
	kopt_http_response_release(&res);
	kopt_http_request_release(&req);
	kopt_http_release(&h);
}

static void test_post_and_patch_bodies(void **state)
{
	struct kopt_http h = KOPT_HTTP_INIT;
	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
	char *u;

	(void)state;
	answer(make("201 Created", "", "{}"));
	answer(make("200 OK", "", "{}"));
	start();
	u = url("/c");
	fast(&h);
	req.method = "POST";
	req.url = u;
	req.body = "{\"body\":\"hello\"}";
	assert_int_equal(kopt_http_send(&h, &req, &res), 0);
	assert_int_equal(res.status, 201);
	req.method = "PATCH";
	req.body = "{\"body\":\"again\"}";
	assert_int_equal(kopt_http_send(&h, &req, &res), 0);
	assert_int_equal(h.sent, 2);
	assert_true(kopt_starts_with(srv.requests[0].buf, "POST /c HTTP/1.1"));
	assert_non_null(strstr(srv.requests[0].buf,
			"\r\nContent-Type: application/json\r\n"));
	assert_true(kopt_ends_with(srv.requests[0].buf,
				   "\r\n\r\n{\"body\":\"hello\"}"));
	assert_null(strstr(srv.requests[0].buf, "Expect:"));
	assert_null(strstr(srv.requests[0].buf, "Authorization"));
	assert_true(kopt_starts_with(srv.requests[1].buf, "PATCH /c HTTP/1.1"));
	assert_true(kopt_ends_with(srv.requests[1].buf,
				   "\r\n\r\n{\"body\":\"again\"}"));
	stop();
	free(u);
	kopt_http_response_release(&res);
	kopt_http_request_release(&req);
	kopt_http_release(&h);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void test_retries_5xx_then_success(void **state)
{
	struct kopt_http h = KOPT_HTTP_INIT;
	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
	char *u;

	(void)state;
	answer(make("502 Bad Gateway", "", ""));
	answer(make("503 Service Unavailable", "", ""));
	answer(OK_JSON);
	start();
	u = url("/x");
	fast(&h);
	req.method = "GET";
	req.url = u;
	assert_int_equal(kopt_http_send(&h, &req, &res), 0);
	assert_int_equal(res.status, 200);
	assert_int_equal(res.attempts, 3);
	/* waits of 10 then 20 ms */
	assert_true(res.wall_s >= 0.029);
	assert_string_equal(messages.buf, "");
	stop();
	free(u);
	kopt_http_response_release(&res);
	kopt_http_request_release(&req);
	kopt_http_release(&h);
}

static void test_retry_after_is_honoured(void **state)
{
	struct kopt_http h = KOPT_HTTP_INIT;
	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
	double t0;
	char *u;

	(void)state;
	answer(make("429 Too Many Requests", "Retry-After: 1\r\n", ""));
	answer(OK_JSON);
	start();
	u = url("/x");
	fast(&h);
	req.method = "GET";
	req.url = u;
	t0 = now();
	assert_int_equal(kopt_http_send(&h, &req, &res), 0);
	assert_true(now() - t0 >= 0.95);
	assert_int_equal(res.attempts, 2);
	stop();
	free(u);
	kopt_http_response_release(&res);
	kopt_http_request_release(&req);
	kopt_http_release(&h);
}

static void test_retry_after_too_long(void **state)
{
	struct kopt_http h = KOPT_HTTP_INIT;
	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
	double t0;
	char *u;

	(void)state;
	answer(make("403 Forbidden", "Retry-After: 3600\r\n", ""));
	start();
	u = url("/x");
	fast(&h);
	req.method = "GET";
	req.url = u;
	t0 = now();
	assert_int_equal(kopt_http_send(&h, &req, &res), KOPT_HTTP_ESTATUS);
	assert_true(now() - t0 < 0.5);
	assert_int_equal(res.status, 403);
	assert_int_equal(res.attempts, 1);
	assert_non_null(strstr(messages.buf, ": 403 Forbidden: the server "
			       "asks to wait 3600 s; try again later\n"));
	stop();
	free(u);
	kopt_http_response_release(&res);
	kopt_http_request_release(&req);
	kopt_http_release(&h);
}

static void status_case(const char *status, const char *body, int retries,
			const char *want)
{
	struct kopt_http h = KOPT_HTTP_INIT;
	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
	struct kopt_buf w = KOPT_BUF_INIT;
	char *u;
	int i;

	kopt_buf_reset(&messages);
	for (i = 0; i <= retries; i++)
		answer(make(status, "", body));
	start();
	u = url("/repos/o/r/issues/7/comments");
	fast(&h);
	h.retries = retries;
	kopt_http_set_token(&h, "Authorization: Bearer ", token,
			    "GITHUB_TOKEN");
	req.method = "POST";
	req.url = u;
	req.body = "{}";
	assert_int_equal(kopt_http_send(&h, &req, &res), KOPT_HTTP_ESTATUS);
	kopt_buf_addf(&w, "error: POST %s: %s\n", u, want);
	assert_string_equal(messages.buf, w.buf);
	assert_null(strstr(messages.buf, "S3cr3t"));
	stop();
	free(u);
	kopt_buf_release(&w);
	kopt_http_response_release(&res);
	kopt_http_request_release(&req);
	kopt_http_release(&h);
}

static void test_status_messages(void **state)
{
	(void)state;
	status_case("401 Unauthorized",
		    "{\"message\":\"Bad credentials\"}", 3,
		    "401 Unauthorized: the token in GITHUB_TOKEN was "
		    "refused (Bad credentials)");
	status_case("403 Forbidden", "", 3,
		    "403 Forbidden: the token is not allowed to do this");
	status_case("404 Not Found", "{\"message\":\"Not Found\"}", 3,
		    "404 Not Found: no such project or number, or the "
		    "token cannot see it (Not Found)");
	status_case("422 Unprocessable Entity",
		    "{\"message\":\"Validation Failed\",\"errors\":"
		    "[{\"message\":\"body is too long\"}]}", 3,
		    "422 Unprocessable Entity: the server refused the "
		    "request (Validation Failed; body is too long)");
	status_case("500 Internal Server Error", "", 2,
		    "500 Internal Server Error, after 3 attempts");
}

static void test_a_secret_in_the_answer_is_masked(void **state)
{
	(void)state;
	/* a server echoing the token back must not get it printed */
	status_case("422 Unprocessable Entity",
		    "{\"message\":\"ghp_S3cr3tT0k3nValue1234567890 bad\"}", 0,
		    "422 Unprocessable Entity: the server refused the "
		    "request (*** bad)");
}

static void test_cannot_connect(void **state)
{
	struct kopt_http h = KOPT_HTTP_INIT;
	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
	char *u;

	(void)state;
	start();
	u = url("/x");
	stop(); /* nobody listens there any more */
	fast(&h);
	h.retries = 2;
	req.method = "GET";
	req.url = u;
	assert_int_equal(kopt_http_send(&h, &req, &res), -1);
	assert_int_equal(res.attempts, 3);
	assert_int_equal(res.status, 0);
	assert_true(kopt_starts_with(messages.buf, "error: GET http://"));
	assert_true(kopt_ends_with(messages.buf, " (after 3 attempts)\n"));
	free(u);
	kopt_http_response_release(&res);
	kopt_http_request_release(&req);
	kopt_http_release(&h);
}

static void test_timeout(void **state)
{
	struct kopt_http h = KOPT_HTTP_INIT;
	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
	double t0;
	char *u;

	(void)state;
	answer(OK_JSON);
	srv.delay_ms[0] = 1500;
	start();
	u = url("/slow");
	h.timeout_ms = 200;
	h.retries = 0;
	req.method = "GET";
	req.url = u;
	t0 = now();
	assert_int_equal(kopt_http_send(&h, &req, &res), -1);
	assert_true(now() - t0 < 1.2);
	assert_non_null(strstr(messages.buf, "imed out"));
	stop();
	free(u);
	kopt_http_response_release(&res);
	kopt_http_request_release(&req);
	kopt_http_release(&h);
}

static void test_quiet_status(void **state)
{
	struct kopt_http h = KOPT_HTTP_INIT;
	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
	char *u;

	(void)state;
	answer(make("404 Not Found", "", ""));
	start();
	u = url("/x");
	req.method = "GET";
	req.url = u;
	req.flags = KOPT_HTTP_QUIET_STATUS;
	assert_int_equal(kopt_http_send(&h, &req, &res), KOPT_HTTP_ESTATUS);
	assert_int_equal(res.status, 404);
	assert_string_equal(messages.buf, "");
	stop();
	free(u);
	kopt_http_response_release(&res);
	kopt_http_request_release(&req);
	kopt_http_release(&h);
}

static void test_describe_masks_the_token(void **state)
{
	struct kopt_http h = KOPT_HTTP_INIT;
	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
	struct kopt_buf sb = KOPT_BUF_INIT;

	(void)state;
	h.user_agent = "git-kopt/test";
	kopt_http_set_token(&h, "PRIVATE-TOKEN: ", token, "GITLAB_TOKEN");
	req.method = "PUT";
	req.url = "https://gitlab.example/api/v4/projects/3/merge_requests/"
		  "9/notes/11";
	kopt_strvec_push(&req.headers, "Accept: application/json");
	req.body = "{\"body\":\"x\"}";
	kopt_http_describe(&h, &req, &sb);
	assert_string_equal(sb.buf,
		"PUT https://gitlab.example/api/v4/projects/3/"
		"merge_requests/9/notes/11\n"
		"User-Agent: git-kopt/test\n"
		"PRIVATE-TOKEN: ***\n"
		"Accept: application/json\n"
		"Content-Type: application/json\n"
		"\n"
		"{\"body\":\"x\"}\n");
	kopt_buf_release(&sb);
	kopt_http_request_release(&req);
	kopt_http_release(&h);
}

static void test_only_http_urls(void **state)
{
	struct kopt_http h = KOPT_HTTP_INIT;
	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;

	(void)state;
	req.method = "GET";
	req.url = "file:///etc/passwd";
	assert_int_equal(kopt_http_send(&h, &req, &res), -1);
	assert_string_equal(messages.buf, "error: 'file:///etc/passwd' is "
			    "not an http or https URL\n");
	assert_int_equal(h.sent, 0);
	kopt_http_response_release(&res);
	kopt_http_release(&h);
}

static void test_next_link(void **state)
{
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
	struct kopt_buf out = KOPT_BUF_INIT;

	(void)state;
	assert_int_equal(kopt_http_next_link(&res, &out), KOPT_ENOTFOUND);
	kopt_strvec_push(&res.headers, "link: <https://h/p?page=2>; "
			 "rel=\"next\", <https://h/p?page=9>; rel=\"last\"");
	assert_int_equal(kopt_http_next_link(&res, &out), 0);
	assert_string_equal(out.buf, "https://h/p?page=2");
	kopt_strvec_clear(&res.headers);
	kopt_strvec_push(&res.headers, "link: <https://h/p?page=1>; "
			 "rel=\"first\", <https://h/p?page=1>; rel=\"prev\"");
	assert_int_equal(kopt_http_next_link(&res, &out), KOPT_ENOTFOUND);
	kopt_strvec_clear(&res.headers);
	kopt_strvec_push(&res.headers, "link: <broken");
	assert_int_equal(kopt_http_next_link(&res, &out), KOPT_ENOTFOUND);
	kopt_buf_release(&out);
	kopt_http_response_release(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_get),
		MESSAGES_TEST(test_post_and_patch_bodies),
		MESSAGES_TEST(test_retries_5xx_then_success),
		MESSAGES_TEST(test_retry_after_is_honoured),
		MESSAGES_TEST(test_retry_after_too_long),
		MESSAGES_TEST(test_status_messages),
		MESSAGES_TEST(test_a_secret_in_the_answer_is_masked),
		MESSAGES_TEST(test_cannot_connect),
		MESSAGES_TEST(test_timeout),
		MESSAGES_TEST(test_quiet_status),
		MESSAGES_TEST(test_describe_masks_the_token),
		MESSAGES_TEST(test_only_http_urls),
		MESSAGES_TEST(test_next_link),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
