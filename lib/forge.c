#include "forge.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "error.h"
#include "banned.h"

/* Longest body each forge takes (GitHub counts characters; bytes are
 * never fewer), less room for the note saying it was cut. */
#define GITHUB_MAX_BODY 65536
#define GITLAB_MAX_BODY 1000000
#define CUT_ROOM 200
#define MAX_PAGES 50

const char *kopt_forge_name(enum kopt_forge_kind kind)
{
	switch (kind) {
	case KOPT_FORGE_GITHUB: return "github";
	case KOPT_FORGE_GITLAB: return "gitlab";
	default: return "none";
	}
}

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static int is_true(const char *name)
{
	const char *v = env(name);

	return v && !strcmp(v, "true");
}

static int parse_number(unsigned long *out, const char *s)
{
	char *end;
	unsigned long n;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	n = strtoul(s, &end, 10);
	if (*end || !n || n > 1000000000UL)
		return -1;
	*out = n;
	return 0;
}

static int valid_project(enum kopt_forge_kind kind, const char *p)
{
	const char *s;
	int slashes = 0;

	if (!*p || *p == '/' || p[strlen(p) - 1] == '/' || strstr(p, "//") ||
	    strstr(p, ".."))
		return 0;
	for (s = p; *s; s++) {
		if (*s == '/')
			slashes++;
		else if (!isalnum((unsigned char)*s) && !strchr("-_.", *s))
			return 0;
	}
	if (kind == KOPT_FORGE_GITHUB)
		return slashes == 1;
	return 1;
}

/* A GitLab project path as one URL path segment ("a/b" -> "a%2Fb"). */
static char *escape_segment(const char *s)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	for (; *s; s++) {
		if (isalnum((unsigned char)*s) || strchr("-_.~", *s))
			kopt_buf_addch(&sb, *s);
		else
			kopt_buf_addf(&sb, "%%%02X", (unsigned char)*s);
	}
	return kopt_buf_detach(&sb, NULL);
}

int kopt_forge_event_number(unsigned long *out, const char *json, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *pr, *n = NULL;
	int ret = KOPT_ENOTFOUND;

	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return KOPT_EINVALID;
	}
	pr = cJSON_GetObjectItemCaseSensitive(root, "pull_request");
	if (cJSON_IsObject(pr))
		n = cJSON_GetObjectItemCaseSensitive(pr, "number");
	if (!cJSON_IsNumber(n) && cJSON_IsObject(pr))
		n = cJSON_GetObjectItemCaseSensitive(root, "number");
	if (cJSON_IsNumber(n)) {
		double v = n->valuedouble;
		if (v >= 1 && v <= 1e9 && v == floor(v)) {
			*out = (unsigned long)v;
			ret = 0;
		} else {
			ret = KOPT_EINVALID;
		}
	}
	cJSON_Delete(root);
	return ret;
}

static int event_file_number(unsigned long *out, const char *path)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	int ret;

	if (kopt_buf_read_file(&sb, path) < 0) {
		kopt_buf_release(&sb);
		return kopt_error("cannot read the event file '%s' "
				  "(GITHUB_EVENT_PATH)", path);
	}
	ret = kopt_forge_event_number(out, sb.buf, sb.len);
	kopt_buf_release(&sb);
	if (ret == KOPT_EINVALID)
		return kopt_error("'%s' (GITHUB_EVENT_PATH) is not a "
				  "GitHub event in JSON", path);
	return ret;
}

static int missing(const char *what, const char *how)
{
	kopt_error("%s; %s", what, how);
	return KOPT_EINVALID;
}

int kopt_forge_resolve(struct kopt_forge *f, const struct kopt_forge_opts *o)
{
	int gh;
	const char *api, *project, *token, *var, *ref;
	char *end;
	unsigned long n = 0;

	if (o->forge) {
		if (!strcmp(o->forge, "github"))
			f->kind = KOPT_FORGE_GITHUB;
		else if (!strcmp(o->forge, "gitlab"))
			f->kind = KOPT_FORGE_GITLAB;
		else {
			kopt_error("unknown forge '%s'; give --forge github "
				   "or --forge gitlab", o->forge);
			return KOPT_EINVALID;
		}
	} else if (is_true("GITHUB_ACTIONS")) {
		f->kind = KOPT_FORGE_GITHUB;
	} else if (is_true("GITLAB_CI")) {
		f->kind = KOPT_FORGE_GITLAB;
	} else {
		return missing("no forge to post to", "give --forge github "
			       "or --forge gitlab (in GitHub Actions or "
			       "GitLab CI it is found alone)");
	}
	gh = f->kind == KOPT_FORGE_GITHUB;

	api = o->api_url ? o->api_url : env(gh ? "GITHUB_API_URL" :
					       "CI_API_V4_URL");
	if (!api)
		api = gh ? "https://api.github.com" :
		      "https://gitlab.com/api/v4";
	if (!kopt_starts_with(api, "https://") &&
	    !kopt_starts_with(api, "http://"))
		return missing("bad API address", "give --api-url an http or "
			       "https URL");
	free(f->api_url);
	f->api_url = kopt_strdup(api);
	end = f->api_url + strlen(f->api_url);
	while (end > f->api_url && end[-1] == '/')
		*--end = '\0';

	project = o->project ? o->project : env(gh ? "GITHUB_REPOSITORY" :
						     "CI_PROJECT_ID");
	if (!project)
		return missing("no project to post to", gh ?
			       "give --project <owner>/<name> (GitHub "
			       "Actions sets GITHUB_REPOSITORY)" :
			       "give --project <id or path> (GitLab CI sets "
			       "CI_PROJECT_ID)");
	if (!valid_project(f->kind, project)) {
		kopt_error("bad project '%s'; expected %s", project,
			   gh ? "<owner>/<name>" : "a project id or "
			   "<group>/<name>");
		return KOPT_EINVALID;
	}
	free(f->project);
	f->project = gh ? kopt_strdup(project) : escape_segment(project);

	if (o->number) {
		if (parse_number(&n, o->number)) {
			kopt_error("bad pull request number '%s'", o->number);
			return KOPT_EINVALID;
		}
	} else if (gh) {
		const char *ev = env("GITHUB_EVENT_PATH");
		int r = ev ? event_file_number(&n, ev) : KOPT_ENOTFOUND;
		if (r < 0 && r != KOPT_ENOTFOUND)
			return KOPT_EINVALID;
		if (r == KOPT_ENOTFOUND && (ref = env("GITHUB_REF")) &&
		    kopt_skip_prefix(ref, "refs/pull/", &ref)) {
			struct kopt_buf num = KOPT_BUF_INIT;
			const char *slash = strchr(ref, '/');
			kopt_buf_add(&num, ref, slash ? (size_t)(slash - ref) :
				     strlen(ref));
			if (parse_number(&n, num.buf))
				n = 0;
			kopt_buf_release(&num);
		}
	} else if (env("CI_MERGE_REQUEST_IID") &&
		   parse_number(&n, env("CI_MERGE_REQUEST_IID"))) {
		kopt_error("bad merge request number '%s' "
			   "(CI_MERGE_REQUEST_IID)", env("CI_MERGE_REQUEST_IID"));
		return KOPT_EINVALID;
	}
	if (!n)
		return missing(gh ? "no pull request to post to" :
			       "no merge request to post to", gh ?
			       "give --pr <number> (in GitHub Actions, run on "
			       "pull_request events)" : "give --pr <number> "
			       "(in GitLab CI, run in merge request "
			       "pipelines)");
	f->number = n;

	var = o->token_env ? o->token_env : gh ? "GITHUB_TOKEN" :
	      "GITLAB_TOKEN";
	free(f->token_env);
	f->token_env = kopt_strdup(var);
	token = env(var);
	if (token && strpbrk(token, "\r\n")) {
		kopt_error("the token in %s holds a line break", var);
		return KOPT_EINVALID;
	}
	f->have_token = token != NULL;
	if (!token && o->need_token) {
		kopt_error("no token in %s; export it%s", var, o->token_env ?
			   "" : ", or name another variable with "
			   "--token-env");
		return KOPT_EINVALID;
	}
	if (token)
		kopt_http_set_token(&f->http, gh ? "Authorization: Bearer " :
				    "PRIVATE-TOKEN: ", token, var);
	return 0;
}

void kopt_forge_describe(const struct kopt_forge *f, struct kopt_buf *out)
{
	if (f->kind == KOPT_FORGE_GITHUB) {
		kopt_buf_addf(out, "%s#%lu", f->project, f->number);
	} else {
		/* undo the escaping of the path for people */
		const char *s;
		for (s = f->project; *s; s++) {
			if (!strncmp(s, "%2F", 3)) {
				kopt_buf_addch(out, '/');
				s += 2;
			} else {
				kopt_buf_addch(out, *s);
			}
		}
		kopt_buf_addf(out, "!%lu", f->number);
	}
}

static int read_id(unsigned long long *out, const cJSON *o)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");

	if (!cJSON_IsNumber(id) || id->valuedouble < 1 ||
	    id->valuedouble > 9007199254740992.0 ||
	    id->valuedouble != floor(id->valuedouble))
		return -1;
	*out = (unsigned long long)id->valuedouble;
	return 0;
}

static int starts_with_marker(const char *body, const char *marker)
{
	while (*body == ' ' || *body == '\t' || *body == '\r' ||
	       *body == '\n')
		body++;
	return kopt_starts_with(body, marker);
}

int kopt_forge_find_comment(struct kopt_forge_comment *out,
			    const char *json, size_t len, const char *marker)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *c;
	int ret = KOPT_ENOTFOUND;

	if (!cJSON_IsArray(root)) {
		cJSON_Delete(root);
		return KOPT_EINVALID;
	}
	cJSON_ArrayForEach(c, root) {
		const cJSON *body = cJSON_GetObjectItemCaseSensitive(c, "body");
		const cJSON *url = cJSON_GetObjectItemCaseSensitive(c,
								    "html_url");
		unsigned long long id;

		if (!cJSON_IsObject(c) || !cJSON_IsString(body) ||
		    !body->valuestring || read_id(&id, c) ||
		    !starts_with_marker(body->valuestring, marker))
			continue;
		out->id = id;
		kopt_buf_reset(&out->body);
		kopt_buf_addstr(&out->body, body->valuestring);
		kopt_buf_reset(&out->url);
		if (cJSON_IsString(url) && url->valuestring)
			kopt_buf_addstr(&out->url, url->valuestring);
		ret = 0;
		break;
	}
	cJSON_Delete(root);
	return ret;
}

void kopt_forge_comment_release(struct kopt_forge_comment *c)
{
	kopt_buf_release(&c->body);
	kopt_buf_release(&c->url);
	c->id = 0;
}

/* The body as posted: the marker first, cut to what the forge takes. */
static void full_body(const struct kopt_forge *f, const char *marker,
		      const char *body, struct kopt_buf *out)
{
	size_t max = f->kind == KOPT_FORGE_GITHUB ? GITHUB_MAX_BODY :
		     GITLAB_MAX_BODY;

	if (!starts_with_marker(body, marker))
		kopt_buf_addf(out, "%s\n", marker);
	kopt_buf_addstr(out, body);
	if (out->len > max) {
		size_t cut = max - CUT_ROOM, dropped;
		while (cut > 0 && out->buf[cut - 1] != '\n')
			cut--;
		dropped = out->len - cut;
		kopt_buf_setlen(out, cut);
		kopt_buf_addf(out, "\n_(%zu more bytes were cut: the forge "
			      "takes no longer comment; run `git kopt review` "
			      "for all of it)_\n", dropped);
	}
}

static void add_headers(const struct kopt_forge *f,
			struct kopt_http_request *req)
{
	if (f->kind == KOPT_FORGE_GITHUB) {
		kopt_strvec_push(&req->headers,
				 "Accept: application/vnd.github+json");
		kopt_strvec_push(&req->headers,
				 "X-GitHub-Api-Version: 2022-11-28");
	} else {
		kopt_strvec_push(&req->headers, "Accept: application/json");
	}
}

static char *list_url(const struct kopt_forge *f)
{
	if (f->kind == KOPT_FORGE_GITHUB)
		return kopt_xstrfmt("%s/repos/%s/issues/%lu/comments"
				    "?per_page=100", f->api_url, f->project,
				    f->number);
	return kopt_xstrfmt("%s/projects/%s/merge_requests/%lu/notes"
			    "?per_page=100&sort=asc&order_by=created_at",
			    f->api_url, f->project, f->number);
}

static char *create_url(const struct kopt_forge *f)
{
	if (f->kind == KOPT_FORGE_GITHUB)
		return kopt_xstrfmt("%s/repos/%s/issues/%lu/comments",
				    f->api_url, f->project, f->number);
	return kopt_xstrfmt("%s/projects/%s/merge_requests/%lu/notes",
			    f->api_url, f->project, f->number);
}

static char *edit_url(const struct kopt_forge *f, const char *id)
{
	if (f->kind == KOPT_FORGE_GITHUB)
		return kopt_xstrfmt("%s/repos/%s/issues/comments/%s",
				    f->api_url, f->project, id);
	return kopt_xstrfmt("%s/projects/%s/merge_requests/%lu/notes/%s",
			    f->api_url, f->project, f->number, id);
}

static char *json_body(const char *text)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	cJSON_AddStringToObject(o, "body", text);
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!s)
		abort();
	return s;
}

static int dry_run_post(struct kopt_forge *f, const char *payload,
			struct kopt_forge_result *out, struct kopt_buf *dry)
{
	struct kopt_http_request get = KOPT_HTTP_REQUEST_INIT;
	struct kopt_http_request put = KOPT_HTTP_REQUEST_INIT;
	char *lurl = list_url(f), *curl = create_url(f);
	char *eurl = edit_url(f, "<id>");

	get.method = "GET";
	get.url = lurl;
	add_headers(f, &get);
	kopt_http_describe(&f->http, &get, dry);
	kopt_buf_addf(dry, "\n# when no comment starts with the marker "
		      "(else %s %s):\n", f->kind == KOPT_FORGE_GITHUB ?
		      "PATCH" : "PUT", eurl);
	put.method = "POST";
	put.url = curl;
	put.body = payload;
	add_headers(f, &put);
	kopt_http_describe(&f->http, &put, dry);
	if (!f->have_token)
		kopt_buf_addf(dry, "# no token in %s: posting would fail\n",
			      f->token_env);
	out->action = "dry run";
	kopt_http_request_release(&get);
	kopt_http_request_release(&put);
	free(lurl);
	free(curl);
	free(eurl);
	return 0;
}

/* Read the id and the web address of the comment a write answered. */
static void read_written(struct kopt_forge_result *out,
			 const struct kopt_buf *answer)
{
	cJSON *o = cJSON_ParseWithLength(answer->buf, answer->len);
	const cJSON *url;

	if (cJSON_IsObject(o)) {
		unsigned long long id;
		if (!read_id(&id, o))
			out->id = id;
		url = cJSON_GetObjectItemCaseSensitive(o, "html_url");
		if (cJSON_IsString(url) && url->valuestring) {
			kopt_buf_reset(&out->url);
			kopt_buf_addstr(&out->url, url->valuestring);
		}
	}
	cJSON_Delete(o);
}

int kopt_forge_post(struct kopt_forge *f, const char *marker,
		    const char *body, struct kopt_forge_result *out,
		    struct kopt_buf *dry_run)
{
	struct kopt_buf text = KOPT_BUF_INIT, next = KOPT_BUF_INIT;
	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
	struct kopt_forge_comment found = KOPT_FORGE_COMMENT_INIT;
	unsigned long sent0 = f->http.sent;
	char *url = NULL, *payload = NULL;
	int ret = 0, pages = 0, have = 0;

	full_body(f, marker, body, &text);
	payload = json_body(text.buf);
	if (dry_run) {
		ret = dry_run_post(f, payload, out, dry_run);
		goto done;
	}

	/* find the comment: one page of 100 is the usual case */
	url = list_url(f);
	for (;;) {
		int r;

		kopt_http_request_release(&req);
		req.method = "GET";
		req.url = url;
		add_headers(f, &req);
		if ((ret = kopt_http_send(&f->http, &req, &res)))
			goto done;
		r = kopt_forge_find_comment(&found, res.body.buf, res.body.len,
					    marker);
		if (r == KOPT_EINVALID) {
			kopt_buf_reset(&next);
			kopt_forge_describe(f, &next);
			ret = kopt_error("cannot read the comments of %s: the "
					 "answer of %s is not a JSON list",
					 next.buf, f->api_url);
			goto done;
		}
		if (!r) {
			have = 1;
			break;
		}
		if (++pages >= MAX_PAGES || kopt_http_next_link(&res, &next))
			break;
		free(url);
		url = kopt_strdup(next.buf);
	}

	if (have && !strcmp(found.body.buf, text.buf)) {
		out->action = "unchanged";
		out->id = found.id;
		kopt_buf_reset(&out->url);
		kopt_buf_addbuf(&out->url, &found.url);
		goto done;
	}
	free(url);
	if (have) {
		char id[32];
		snprintf(id, sizeof(id), "%llu", found.id);
		url = edit_url(f, id);
		req.method = f->kind == KOPT_FORGE_GITHUB ? "PATCH" : "PUT";
	} else {
		url = create_url(f);
		req.method = "POST";
	}
	kopt_http_request_release(&req);
	req.url = url;
	req.body = payload;
	add_headers(f, &req);
	if ((ret = kopt_http_send(&f->http, &req, &res)))
		goto done;
	out->action = have ? "updated" : "created";
	out->id = have ? found.id : 0;
	kopt_buf_reset(&out->url);
	if (have)
		kopt_buf_addbuf(&out->url, &found.url);
	read_written(out, &res.body);
done:
	out->requests = f->http.sent - sent0;
	kopt_forge_comment_release(&found);
	kopt_http_response_release(&res);
	kopt_http_request_release(&req);
	kopt_buf_release(&text);
	kopt_buf_release(&next);
	free(url);
	free(payload);
	return ret;
}

void kopt_forge_result_release(struct kopt_forge_result *r)
{
	kopt_buf_release(&r->url);
	r->action = NULL;
	r->id = 0;
	r->requests = 0;
}

void kopt_forge_release(struct kopt_forge *f)
{
	free(f->api_url);
	free(f->project);
	free(f->token_env);
	f->api_url = f->project = f->token_env = NULL;
	kopt_http_release(&f->http);
	f->kind = KOPT_FORGE_NONE;
}
