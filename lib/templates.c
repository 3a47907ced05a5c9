#include "templates.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "banned.h"

static int is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* The directory of the running executable, or NULL. */
static char *exe_dir(void)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	char *slash;
	ssize_t n;

	kopt_buf_grow(&sb, 4096);
	n = readlink("/proc/self/exe", sb.buf, sb.alloc - 1);
	if (n <= 0 || (size_t)n >= sb.alloc - 1) {
		kopt_buf_release(&sb);
		return NULL;
	}
	kopt_buf_setlen(&sb, (size_t)n);
	slash = strrchr(sb.buf, '/');
	if (!slash) {
		kopt_buf_release(&sb);
		return NULL;
	}
	kopt_buf_setlen(&sb, (size_t)(slash - sb.buf));
	return kopt_buf_detach(&sb, NULL);
}

int kopt_share_dir(char **out, const char *what, const char *env)
{
	const char *v = env ? getenv(env) : NULL;
	char *dir, *cand;

	*out = NULL;
	if (v && *v) {
		if (!is_dir(v))
			return kopt_error("%s names '%s', which is not a "
					  "directory", env, v);
		*out = kopt_strdup(v);
		return 0;
	}
	dir = exe_dir();
	if (dir) {
		cand = kopt_xstrfmt("%s/../share/git-kopt/%s", dir, what);
		free(dir);
		if (is_dir(cand)) {
			*out = cand;
			return 0;
		}
		free(cand);
	}
#ifdef KOPT_SOURCE_DIR
	cand = kopt_xstrfmt("%s/%s", KOPT_SOURCE_DIR, what);
	if (is_dir(cand)) {
		*out = cand;
		return 0;
	}
	free(cand);
#endif
	return kopt_error("cannot find the %s of git-kopt (looked in "
			  "share/git-kopt/%s beside the program); set %s or "
			  "reinstall", what, what, env ? env : "its location");
}

static int walk(struct kopt_strvec *out, struct kopt_buf *path,
		size_t root_len)
{
	DIR *d = opendir(path->buf);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return kopt_error("cannot read directory '%s': %s", path->buf,
				  strerror(errno));
	while (!ret && (de = readdir(d))) {
		size_t len = path->len;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		kopt_buf_addf(path, "/%s", de->d_name);
		if (lstat(path->buf, &st))
			ret = kopt_error("cannot read '%s': %s", path->buf,
					 strerror(errno));
		else if (S_ISDIR(st.st_mode))
			ret = walk(out, path, root_len);
		else if (S_ISREG(st.st_mode))
			kopt_strvec_push(out, path->buf + root_len + 1);
		kopt_buf_setlen(path, len);
	}
	closedir(d);
	return ret;
}

int kopt_templates_list(struct kopt_strvec *out, const char *dir)
{
	struct kopt_buf path = KOPT_BUF_INIT;
	int ret;

	kopt_buf_addstr(&path, dir);
	while (path.len > 1 && path.buf[path.len - 1] == '/')
		kopt_buf_setlen(&path, path.len - 1);
	ret = walk(out, &path, path.len);
	kopt_buf_release(&path);
	if (!ret)
		kopt_strvec_sort(out);
	return ret;
}

int kopt_templates_read(struct kopt_buf *out, const char *name)
{
	char *dir = NULL, *path;
	int ret;

	ret = kopt_share_dir(&dir, "templates", KOPT_TEMPLATE_ENV);
	if (ret)
		return ret;
	path = kopt_xstrfmt("%s/%s", dir, name);
	ret = kopt_buf_read_file(out, path);
	if (ret)
		ret = kopt_error("cannot read template '%s': %s", path,
				 strerror(errno));
	free(path);
	free(dir);
	return ret;
}

int kopt_templates_expand(struct kopt_buf *out, const char *text,
			  const char *label, const char *const *vars)
{
	const char *p = text;

	while (*p) {
		const char *open = strstr(p, "{{"), *close;
		const char *const *v;
		size_t n;

		if (!open) {
			kopt_buf_addstr(out, p);
			break;
		}
		kopt_buf_add(out, p, (size_t)(open - p));
		close = strstr(open + 2, "}}");
		if (!close)
			return kopt_error_at(label, 0, "unclosed '{{' in the "
					     "template");
		n = (size_t)(close - open - 2);
		for (v = vars; v && v[0]; v += 2)
			if (strlen(v[0]) == n && !memcmp(v[0], open + 2, n))
				break;
		if (!v || !v[0])
			return kopt_error_at(label, 0, "no value for '{{%.*s}}' "
					     "in the template", (int)n, open + 2);
		kopt_buf_addstr(out, v[1] ? v[1] : "");
		p = close + 2;
	}
	return 0;
}
