#include "http.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dlfcn.h>

#include <cjson/cJSON.h>
/* calls go through the table below, not curl.h's checking macros */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

#include "error.h"
#include "version.h"
#include "banned.h"

#define DEFAULT_TIMEOUT_MS 30000L
#define DEFAULT_CONNECT_TIMEOUT_MS 10000L
#define DEFAULT_RETRIES 3
#define DEFAULT_BACKOFF_MS 500L
#define DEFAULT_MAX_WAIT_MS 60000L
#define MASK "***"

#ifndef KOPT_LIBCURL
#define KOPT_LIBCURL "libcurl.so.4"
#endif

/*
 * libcurl and the two dozen libraries it needs are loaded on the first
 * request, not at the start of every git-kopt run: linked in, their
 * relocations cost each command, even one that never connects, more
 * than the command's own work.
 */
static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	void (*easy_reset)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	CURLcode (*easy_perform)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	void (*easy_cleanup)(CURL *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} curl;

static int global_done;

static int load_sym(void *lib, void *out, size_t size, const char *name)
{
	void *sym = dlsym(lib, name);

	if (!sym)
		return -1;
	memcpy(out, &sym, size);
	return 0;
}

#define LOAD(lib, field) \
	load_sym(lib, &curl.field, sizeof(curl.field), "curl_" #field)

static int global_init(void)
{
	void *lib;

	if (global_done)
		return 0;
	lib = dlopen(KOPT_LIBCURL, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return kopt_error("cannot load libcurl: %s", dlerror());
	if (LOAD(lib, global_init) || LOAD(lib, easy_init) ||
	    LOAD(lib, easy_reset) || LOAD(lib, easy_setopt) ||
	    LOAD(lib, easy_getinfo) || LOAD(lib, easy_perform) ||
	    LOAD(lib, easy_strerror) || LOAD(lib, easy_cleanup) ||
	    LOAD(lib, slist_append) || LOAD(lib, slist_free_all)) {
		dlclose(lib);
		return kopt_error("cannot load libcurl: '%s' lacks a function "
				  "git-kopt needs", KOPT_LIBCURL);
	}
	if (curl.global_init(CURL_GLOBAL_DEFAULT))
		return kopt_error("cannot initialise libcurl");
	global_done = 1;
	return 0;
}

static void wipe(char *s)
{
	volatile char *p = s;

	while (p && *p)
		*p++ = '\0';
}

void kopt_http_add_secret(struct kopt_http *h, const char *secret)
{
	if (!secret || !*secret || kopt_strvec_has(&h->secrets, secret))
		return;
	kopt_strvec_push(&h->secrets, secret);
}

void kopt_http_set_token(struct kopt_http *h, const char *prefix,
			 const char *token, const char *source)
{
	if (h->auth_header) {
		wipe(h->auth_header);
		free(h->auth_header);
	}
	free(h->token_source);
	h->auth_header = kopt_xstrfmt("%s%s", prefix, token ? token : "");
	h->token_source = source ? kopt_strdup(source) : NULL;
	kopt_http_add_secret(h, token);
}

void kopt_http_mask(const struct kopt_http *h, struct kopt_buf *sb)
{
	size_t i;

	for (i = 0; i < h->secrets.nr; i++) {
		const char *s = h->secrets.v[i];
		size_t n = strlen(s), pos = 0;
		char *hit;

		while (pos < sb->len &&
		       (hit = memmem(sb->buf + pos, sb->len - pos, s, n))) {
			size_t at = (size_t)(hit - sb->buf);
			kopt_buf_splice(sb, at, n, MASK, strlen(MASK));
			pos = at + strlen(MASK);
		}
	}
}

/* Print "error: <msg>" with every secret masked; returns `code`. */
__attribute__((format(printf, 3, 4)))
static int fail(const struct kopt_http *h, int code, const char *fmt, ...)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	kopt_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	kopt_http_mask(h, &sb);
	kopt_error("%s", sb.buf);
	kopt_buf_release(&sb);
	return code;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct kopt_http_response *res = arg;

	kopt_buf_add(&res->body, data, size * nmemb);
	return size * nmemb;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *arg)
{
	struct kopt_http_response *res = arg;
	size_t n = size * nmemb, i;
	struct kopt_buf line = KOPT_BUF_INIT;
	char *colon;

	/* each response (redirects, 100 Continue) starts a new set */
	if (n >= 5 && !memcmp(data, "HTTP/", 5)) {
		kopt_strvec_clear(&res->headers);
		return n;
	}
	kopt_buf_add(&line, data, n);
	kopt_buf_rtrim(&line);
	colon = strchr(line.buf, ':');
	if (colon && colon != line.buf) {
		size_t name_len = (size_t)(colon - line.buf);
		const char *v = colon + 1;
		struct kopt_buf h = KOPT_BUF_INIT;

		for (i = 0; i < name_len; i++)
			kopt_buf_addch(&h, tolower((unsigned char)line.buf[i]));
		while (*v == ' ' || *v == '\t')
			v++;
		kopt_buf_addf(&h, ": %s", v);
		kopt_strvec_push(&res->headers, h.buf);
		kopt_buf_release(&h);
	}
	kopt_buf_release(&line);
	return n;
}

const char *kopt_http_header(const struct kopt_http_response *res,
			     const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < res->headers.nr; i++) {
		const char *l = res->headers.v[i];
		if (!strncasecmp(l, name, n) && l[n] == ':' && l[n + 1] == ' ')
			return l + n + 2;
	}
	return NULL;
}

int kopt_http_next_link(const struct kopt_http_response *res,
			struct kopt_buf *out)
{
	const char *p = kopt_http_header(res, "link");

	while (p && *p) {
		const char *lt = strchr(p, '<'), *gt, *end;
		if (!lt || !(gt = strchr(lt, '>')))
			break;
		end = strchr(gt, ',');
		if (!end)
			end = gt + strlen(gt);
		/* the parameters of this link, up to the next one */
		{
			struct kopt_buf params = KOPT_BUF_INIT;
			int next;

			kopt_buf_add(&params, gt + 1, (size_t)(end - gt - 1));
			next = strstr(params.buf, "rel=\"next\"") ||
			       strstr(params.buf, "rel=next");
			kopt_buf_release(&params);
			if (next) {
				kopt_buf_reset(out);
				kopt_buf_add(out, lt + 1, (size_t)(gt - lt - 1));
				return 0;
			}
		}
		p = *end ? end + 1 : end;
	}
	return KOPT_ENOTFOUND;
}

static const char *reason(long status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	}
	return "";
}

void kopt_http_error_reason(struct kopt_buf *out, const char *body,
			    size_t len)
{
	cJSON *json = cJSON_ParseWithLength(body, len);
	struct kopt_buf sb = KOPT_BUF_INIT;
	const cJSON *m, *errors, *e;
	size_t i;

	if (!json)
		return;
	m = cJSON_GetObjectItemCaseSensitive(json, "message");
	if (!cJSON_IsString(m))
		m = cJSON_GetObjectItemCaseSensitive(json, "error");
	if (cJSON_IsString(m) && m->valuestring) {
		kopt_buf_addstr(&sb, m->valuestring);
	} else if (cJSON_IsObject(m) || cJSON_IsArray(m)) {
		/* GitLab: {"message": {"note": ["is too long"]}} */
		char *s = cJSON_PrintUnformatted(m);
		if (s)
			kopt_buf_addstr(&sb, s);
		free(s);
	}
	errors = cJSON_GetObjectItemCaseSensitive(json, "errors");
	if (cJSON_IsArray(errors)) {
		cJSON_ArrayForEach(e, errors) {
			const cJSON *em = cJSON_GetObjectItemCaseSensitive(
				e, "message");
			const char *s = cJSON_IsString(em) ? em->valuestring :
					cJSON_IsString(e) ? e->valuestring :
					NULL;
			if (s && *s)
				kopt_buf_addf(&sb, "%s%s", sb.len ? "; " : "",
					      s);
			if (sb.len > 200)
				break;
		}
	}
	cJSON_Delete(json);
	/* one line, and not a page of it; no control characters */
	for (i = 0; i < sb.len; i++)
		if (sb.buf[i] == '\n' || sb.buf[i] == '\r')
			break;
	kopt_buf_setlen(&sb, i);
	for (i = 0; i < sb.len; i++)
		if ((unsigned char)sb.buf[i] < 0x20 || sb.buf[i] == 0x7f)
			sb.buf[i] = '?';
	if (sb.len > 200) {
		kopt_buf_setlen(&sb, 197);
		kopt_buf_addstr(&sb, "...");
	}
	kopt_buf_addbuf(out, &sb);
	kopt_buf_release(&sb);
}

static int status_error(const struct kopt_http *h,
			const struct kopt_http_request *req,
			const struct kopt_http_response *res)
{
	struct kopt_buf why = KOPT_BUF_INIT, msg = KOPT_BUF_INIT;
	int ret;

	kopt_http_error_reason(&why, res->body.buf, res->body.len);
	kopt_buf_addf(&msg, "%s %s: %ld %s", req->method, req->url,
		      res->status, reason(res->status));
	if (msg.buf[msg.len - 1] == ' ')
		kopt_buf_setlen(&msg, msg.len - 1);
	switch (res->status) {
	case 401:
		if (h->token_source)
			kopt_buf_addf(&msg, ": the token in %s was refused",
				      h->token_source);
		else if (h->auth_header)
			kopt_buf_addstr(&msg, ": the token was refused");
		else
			kopt_buf_addstr(&msg, ": a token is needed");
		break;
	case 403:
		kopt_buf_addstr(&msg, ": the token is not allowed to do this");
		break;
	case 404:
		kopt_buf_addstr(&msg, ": no such project or number, or the "
				"token cannot see it");
		break;
	case 422:
		kopt_buf_addstr(&msg, ": the server refused the request");
		break;
	}
	if (why.len)
		kopt_buf_addf(&msg, " (%s)", why.buf);
	if (res->attempts > 1)
		kopt_buf_addf(&msg, ", after %d attempts", res->attempts);
	ret = fail(h, KOPT_HTTP_ESTATUS, "%s", msg.buf);
	kopt_buf_release(&why);
	kopt_buf_release(&msg);
	return ret;
}

static void sleep_ms(long ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int transient(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_GOT_NOTHING:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* Set up one attempt; `hdrs` receives the list to free afterwards. */
static int prepare(struct kopt_http *h, const struct kopt_http_request *req,
		   struct kopt_http_response *res, struct curl_slist **hdrs,
		   char *errbuf)
{
	CURL *c = h->curl;
	const char *ca;
	struct curl_slist *l = NULL;
	char *ct;
	size_t i;

	curl.easy_reset(c);
	curl.easy_setopt(c, CURLOPT_URL, req->url);
	curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	curl.easy_setopt(c, CURLOPT_PROTOCOLS,
			 (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	curl.easy_setopt(c, CURLOPT_REDIR_PROTOCOLS,
			 (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl.easy_setopt(c, CURLOPT_MAXREDIRS, 3L);
	curl.easy_setopt(c, CURLOPT_TIMEOUT_MS,
			 h->timeout_ms > 0 ? h->timeout_ms : DEFAULT_TIMEOUT_MS);
	curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 h->connect_timeout_ms > 0 ? h->connect_timeout_ms :
			 DEFAULT_CONNECT_TIMEOUT_MS);
	curl.easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	if ((ca = env("CURL_CA_BUNDLE")) || (ca = env("SSL_CERT_FILE")))
		curl.easy_setopt(c, CURLOPT_CAINFO, ca);
	if ((ca = env("SSL_CERT_DIR")))
		curl.easy_setopt(c, CURLOPT_CAPATH, ca);
	curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl.easy_setopt(c, CURLOPT_WRITEDATA, res);
	curl.easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl.easy_setopt(c, CURLOPT_HEADERDATA, res);
	if (h->user_agent)
		curl.easy_setopt(c, CURLOPT_USERAGENT, h->user_agent);
	else
		curl.easy_setopt(c, CURLOPT_USERAGENT,
				 "git-kopt/" KOPT_VERSION);

	if (!strcmp(req->method, "GET"))
		curl.easy_setopt(c, CURLOPT_HTTPGET, 1L);
	else if (!strcmp(req->method, "HEAD"))
		curl.easy_setopt(c, CURLOPT_NOBODY, 1L);
	else
		curl.easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
	if (req->body) {
		size_t n = req->body_len ? req->body_len : strlen(req->body);
		curl.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)n);
		curl.easy_setopt(c, CURLOPT_POSTFIELDS, req->body);
		if (strcmp(req->method, "POST"))
			curl.easy_setopt(c, CURLOPT_CUSTOMREQUEST,
					 req->method);
		ct = kopt_xstrfmt("Content-Type: %s", req->content_type ?
				  req->content_type : "application/json");
		l = curl.slist_append(l, ct);
		free(ct);
	}
	/* no "Expect: 100-continue" round trip before a body */
	l = curl.slist_append(l, "Expect:");
	if (h->auth_header)
		l = curl.slist_append(l, h->auth_header);
	for (i = 0; i < req->headers.nr; i++)
		l = curl.slist_append(l, req->headers.v[i]);
	*hdrs = l;
	curl.easy_setopt(c, CURLOPT_HTTPHEADER, l);
	return 0;
}

/* How long to wait before the next attempt, from the answer; -1: none. */
static long retry_after_ms(CURL *c)
{
	curl_off_t ra = -1;

#if LIBCURL_VERSION_NUM >= 0x074200
	if (curl.easy_getinfo(c, CURLINFO_RETRY_AFTER, &ra) != CURLE_OK)
		ra = -1;
#endif
	/* 0 is libcurl's "no header": the backoff decides then */
	if (ra <= 0)
		return -1;
	if (ra > 86400)
		ra = 86400;
	return (long)ra * 1000;
}

int kopt_http_send(struct kopt_http *h, const struct kopt_http_request *req,
		   struct kopt_http_response *out)
{
	int retries = h->retries >= 0 ? h->retries : DEFAULT_RETRIES;
	long backoff = h->backoff_ms > 0 ? h->backoff_ms : DEFAULT_BACKOFF_MS;
	long max_wait = h->max_wait_ms > 0 ? h->max_wait_ms :
			DEFAULT_MAX_WAIT_MS;
	double t0 = now_s();
	char errbuf[CURL_ERROR_SIZE];
	CURLcode rc = CURLE_OK;
	int attempt;

	if (!req->method || !req->url)
		return kopt_error("an HTTP request needs a method and a URL");
	if (!kopt_starts_with(req->url, "http://") &&
	    !kopt_starts_with(req->url, "https://"))
		return fail(h, -1, "'%s' is not an http or https URL",
			    req->url);
	if (global_init())
		return -1;
	if (!h->curl && !(h->curl = curl.easy_init()))
		return kopt_error("cannot start libcurl");

	out->attempts = 0;
	for (attempt = 0;; attempt++) {
		struct curl_slist *hdrs = NULL;
		long wait = -1;
		int again;

		kopt_buf_reset(&out->body);
		kopt_strvec_clear(&out->headers);
		out->status = 0;
		errbuf[0] = '\0';
		prepare(h, req, out, &hdrs, errbuf);
		rc = curl.easy_perform(h->curl);
		curl.slist_free_all(hdrs);
		h->sent++;
		out->attempts++;
		if (rc == CURLE_OK) {
			curl.easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE,
					  &out->status);
			wait = retry_after_ms(h->curl);
			again = out->status >= 500 || out->status == 429 ||
				(out->status == 403 && wait >= 0);
		} else {
			again = transient(rc);
		}
		if (!again || attempt >= retries)
			break;
		if (wait < 0)
			wait = backoff << (attempt < 16 ? attempt : 16);
		if (wait > max_wait) {
			out->wall_s = now_s() - t0;
			return fail(h, rc == CURLE_OK ? KOPT_HTTP_ESTATUS : -1,
				    "%s %s: %ld %s: the server asks to wait "
				    "%ld s; try again later", req->method,
				    req->url, out->status, reason(out->status),
				    (wait + 999) / 1000);
		}
		sleep_ms(wait);
	}
	out->wall_s = now_s() - t0;
	if (rc != CURLE_OK)
		return fail(h, -1, "%s %s: %s (after %d attempt%s)",
			    req->method, req->url,
			    *errbuf ? errbuf : curl.easy_strerror(rc),
			    out->attempts, out->attempts > 1 ? "s" : "");
	if (out->status >= 200 && out->status < 300)
		return 0;
	if (req->flags & KOPT_HTTP_QUIET_STATUS)
		return KOPT_HTTP_ESTATUS;
	return status_error(h, req, out);
}

void kopt_http_describe(const struct kopt_http *h,
			const struct kopt_http_request *req,
			struct kopt_buf *out)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	size_t i;

	kopt_buf_addf(&sb, "%s %s\n", req->method, req->url);
	kopt_buf_addf(&sb, "User-Agent: %s\n",
		      h->user_agent ? h->user_agent : "git-kopt/" KOPT_VERSION);
	if (h->auth_header)
		kopt_buf_addf(&sb, "%s\n", h->auth_header); /* masked below */
	for (i = 0; i < req->headers.nr; i++)
		kopt_buf_addf(&sb, "%s\n", req->headers.v[i]);
	if (req->body) {
		size_t n = req->body_len ? req->body_len : strlen(req->body);
		kopt_buf_addf(&sb, "Content-Type: %s\n\n",
			      req->content_type ? req->content_type :
			      "application/json");
		kopt_buf_add(&sb, req->body, n);
		if (n && req->body[n - 1] != '\n')
			kopt_buf_addch(&sb, '\n');
	}
	kopt_http_mask(h, &sb);
	kopt_buf_addbuf(out, &sb);
	kopt_buf_release(&sb);
}

void kopt_http_request_release(struct kopt_http_request *req)
{
	kopt_strvec_clear(&req->headers);
}

void kopt_http_response_release(struct kopt_http_response *res)
{
	kopt_buf_release(&res->body);
	kopt_strvec_clear(&res->headers);
	res->status = 0;
	res->attempts = 0;
}

void kopt_http_release(struct kopt_http *h)
{
	size_t i;

	if (h->curl)
		curl.easy_cleanup(h->curl);
	h->curl = NULL;
	if (h->auth_header)
		wipe(h->auth_header);
	free(h->auth_header);
	h->auth_header = NULL;
	free(h->token_source);
	h->token_source = NULL;
	for (i = 0; i < h->secrets.nr; i++)
		wipe((char *)h->secrets.v[i]);
	kopt_strvec_clear(&h->secrets);
}
