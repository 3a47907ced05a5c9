#ifndef KOPT_HTTP_H
#define KOPT_HTTP_H

/*
 * The project's one HTTP client (libcurl): forges, model APIs, anything
 * that speaks JSON over HTTP goes through it.
 *
 * A client (struct kopt_http, KOPT_HTTP_INIT) keeps one connection
 * alive across requests, the settings below, and the secrets it must
 * never show.  A request names a method, a URL, extra headers and an
 * optional body; the answer comes back in a struct kopt_http_response.
 *
 *	struct kopt_http h = KOPT_HTTP_INIT;
 *	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
 *	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
 *
 *	kopt_http_set_token(&h, "Authorization: Bearer ", token, "GITHUB_TOKEN");
 *	req.method = "POST";
 *	req.url = url;
 *	kopt_strvec_push(&req.headers, "Accept: application/json");
 *	req.body = json;
 *	ret = kopt_http_send(&h, &req, &res);
 *	... res.status, res.body.buf ...
 *	kopt_http_response_release(&res);
 *	kopt_http_request_release(&req);
 *	kopt_http_release(&h);
 *
 * Behaviour:
 * - Retries: a 5xx or 429 answer, and a transport failure (cannot
 *   connect, timed out, connection dropped), are tried again up to
 *   `retries` times, waiting `backoff_ms`, then twice as long each time;
 *   a Retry-After header (seconds or HTTP date) replaces the wait, as
 *   does a 403 carrying one (GitHub's secondary rate limit).  A wait
 *   longer than `max_wait_ms` is not waited: the request fails, saying
 *   when to try again.
 * - Timeouts: `timeout_ms` bounds each attempt, `connect_timeout_ms` its
 *   connection.
 * - Proxies (http_proxy, https_proxy, no_proxy...) are taken from the
 *   environment by libcurl itself; CA settings from CURL_CA_BUNDLE, else
 *   SSL_CERT_FILE, and SSL_CERT_DIR, as the curl tool reads them.  Only
 *   http and https URLs are accepted; redirects are followed (at most 3)
 *   and libcurl drops our Authorization header on a change of host.
 * - Errors: kopt_http_send() returns 0 for a 2xx answer.  Otherwise it
 *   prints one line (through lib/error) naming the method, the URL and
 *   the cause (401: the token was refused, naming the variable it came
 *   from; 403: not allowed; 404: not found or not visible to the token;
 *   422: the server's own reason), and returns KOPT_HTTP_ESTATUS with
 *   the answer in `out`; a transport failure returns -1.  A request with
 *   KOPT_HTTP_QUIET_STATUS prints nothing for a non-2xx answer (the
 *   caller judges it; retries still happen).
 * - Secrets: the token given to kopt_http_set_token() and every string
 *   given to kopt_http_add_secret() are replaced by "***" in every
 *   message this module prints and in kopt_http_describe()'s text; the
 *   module writes no file and keeps no log.  The token lives only in
 *   this client's memory, cleared by kopt_http_release().
 *
 * Ownership: the client owns its secrets and its libcurl handle; a
 * request's headers are its own strvec; a response's body and headers
 * are owned by the response until kopt_http_response_release().
 */

#include <stddef.h>

#include "buf.h"
#include "strvec.h"

/* A non-2xx final answer (see above); the response holds it. */
#define KOPT_HTTP_ESTATUS (-20)

struct kopt_http {
	const char *user_agent;  /* NULL: "git-kopt/<version>" */
	long timeout_ms;         /* each attempt; 0: 30 s */
	long connect_timeout_ms; /* 0: 10 s */
	int retries;             /* attempts after the first; -1: 3 */
	long backoff_ms;         /* first wait; 0: 500 ms */
	long max_wait_ms;        /* longest single wait; 0: 60 s */
	unsigned long sent;      /* attempts made so far (requests on the wire) */
	/* private */
	void *curl;
	char *auth_header;
	char *token_source;
	struct kopt_strvec secrets;
};

#define KOPT_HTTP_INIT { NULL, 0, 0, -1, 0, 0, 0, NULL, NULL, NULL, \
	KOPT_STRVEC_INIT }

enum kopt_http_request_flags {
	KOPT_HTTP_QUIET_STATUS = 1 << 0,
};

struct kopt_http_request {
	const char *method;          /* GET, POST, PATCH, PUT, DELETE */
	const char *url;
	struct kopt_strvec headers;  /* "Name: value", beside the defaults */
	const char *body;            /* NULL: none */
	size_t body_len;             /* 0 with a body: strlen(body) */
	const char *content_type;    /* NULL with a body: application/json */
	unsigned flags;
};

#define KOPT_HTTP_REQUEST_INIT { NULL, NULL, KOPT_STRVEC_INIT, NULL, 0, \
	NULL, 0 }

struct kopt_http_response {
	long status;                 /* 0 when no answer came */
	struct kopt_buf body;
	struct kopt_strvec headers;  /* "name: value", names lower-cased */
	int attempts;
	double wall_s;               /* all attempts and waits */
};

#define KOPT_HTTP_RESPONSE_INIT { 0, KOPT_BUF_INIT, KOPT_STRVEC_INIT, 0, 0 }

/*
 * Send every request with the header `prefix` + `token` ("Authorization:
 * Bearer ", "PRIVATE-TOKEN: "...).  `source` names where the token came
 * from ("GITHUB_TOKEN") for the 401 message; it is not secret.  The token
 * is copied and masked from then on.
 */
void kopt_http_set_token(struct kopt_http *h, const char *prefix,
			 const char *token, const char *source);
/* Mask `secret` (copied) in everything this client shows. */
void kopt_http_add_secret(struct kopt_http *h, const char *secret);

int kopt_http_send(struct kopt_http *h, const struct kopt_http_request *req,
		   struct kopt_http_response *out);

/*
 * The request as text, for --dry-run: "METHOD URL", the headers that
 * would be sent (the token as "***"), a blank line and the body.
 */
void kopt_http_describe(const struct kopt_http *h,
			const struct kopt_http_request *req,
			struct kopt_buf *out);

/* Replace every secret of `h` in `sb` by "***". */
void kopt_http_mask(const struct kopt_http *h, struct kopt_buf *sb);

/* The value of header `name` (any case) of the answer, or NULL. */
const char *kopt_http_header(const struct kopt_http_response *res,
			     const char *name);

/*
 * The URL of the next page from a Link header (RFC 8288, as GitHub and
 * GitLab paginate: `<url>; rel="next"`), into `out`; 0, or KOPT_ENOTFOUND.
 */
int kopt_http_next_link(const struct kopt_http_response *res,
			struct kopt_buf *out);

/*
 * The server's own reason in an error answer's JSON body (GitHub's
 * "message" and "errors", GitLab's "message" or "error"), appended to
 * `out` as one line of at most 200 bytes; nothing when there is none.
 * Not masked: kopt_http_send() masks the message it is put in.
 */
void kopt_http_error_reason(struct kopt_buf *out, const char *body,
			    size_t len);

void kopt_http_request_release(struct kopt_http_request *req);
void kopt_http_response_release(struct kopt_http_response *res);
/* Closes the connection and wipes the token from memory. */
void kopt_http_release(struct kopt_http *h);

#endif
