#include "paths.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "version.h"
#include "banned.h"

#define RESULTS "results"
#define TASKS "tasks"

void kopt_path_devlog(struct kopt_buf *out, const char *kernel)
{
	kopt_buf_addf(out, KOPT_KERNELS_DIR "%s.md", kernel);
}

void kopt_path_kernel_dir(struct kopt_buf *out, const char *kernel)
{
	kopt_buf_addf(out, KOPT_KERNELS_DIR "%s", kernel);
}

void kopt_path_results_dir(struct kopt_buf *out, const char *kernel)
{
	kopt_buf_addf(out, KOPT_KERNELS_DIR "%s/" RESULTS, kernel);
}

void kopt_path_plots_dir(struct kopt_buf *out, const char *kernel)
{
	kopt_buf_addf(out, KOPT_KERNELS_DIR "%s/plots", kernel);
}

void kopt_path_results(struct kopt_buf *out, const char *kernel,
		       const char *version)
{
	kopt_buf_addf(out, KOPT_KERNELS_DIR "%s/" RESULTS "/%s.json", kernel,
		      version);
}

void kopt_path_task(struct kopt_buf *out, const char *kernel,
		    const char *version)
{
	kopt_buf_addf(out, KOPT_KERNELS_DIR "%s/" TASKS "/%s.md", kernel,
		      version);
}

void kopt_path_tuning(struct kopt_buf *out, const char *kernel,
		      const char *version)
{
	kopt_buf_addf(out, KOPT_KERNELS_DIR "%s/tuning/%s.tsv", kernel,
		      version);
}

static int is_name(const char *s, size_t n)
{
	char *tmp = kopt_strndup(s, n);
	int ok = kopt_valid_name(tmp);

	free(tmp);
	return ok;
}

/* "<sub>/<version><ext>" after a kernel's folder: the version, or NULL */
static char *version_file(const char *rest, const char *sub, const char *ext)
{
	size_t n = strlen(sub), e = strlen(ext), len;
	char *v;

	if (strncmp(rest, sub, n) || rest[n] != '/')
		return NULL;
	rest += n + 1;
	len = strlen(rest);
	if (len <= e || strcmp(rest + len - e, ext))
		return NULL;
	v = kopt_strndup(rest, len - e);
	if (!kopt_version_valid(v)) {
		free(v);
		return NULL;
	}
	return v;
}

enum kopt_path_kind kopt_path_classify(const char *path, char **kernel,
				       char **version)
{
	const char *p, *slash;
	enum kopt_path_kind kind = KOPT_PATH_OTHER;
	char *v = NULL;
	size_t n;

	*kernel = NULL;
	if (version)
		*version = NULL;
	if (!kopt_skip_prefix(path, KOPT_KERNELS_DIR, &p))
		return KOPT_PATH_OTHER;
	slash = strchr(p, '/');
	if (!slash) {
		n = strlen(p);
		if (n < 4 || strcmp(p + n - 3, ".md") || !is_name(p, n - 3))
			return KOPT_PATH_OTHER;
		*kernel = kopt_strndup(p, n - 3);
		return KOPT_PATH_DEVLOG;
	}
	if (!is_name(p, (size_t)(slash - p)))
		return KOPT_PATH_OTHER;
	if ((v = version_file(slash + 1, RESULTS, ".json")))
		kind = KOPT_PATH_RESULTS;
	else if ((v = version_file(slash + 1, TASKS, ".md")))
		kind = KOPT_PATH_TASK;
	else
		return KOPT_PATH_OTHER;
	*kernel = kopt_strndup(p, (size_t)(slash - p));
	if (version)
		*version = v;
	else
		free(v);
	return kind;
}

int kopt_path_is(enum kopt_path_kind kind, const char *path, char **kernel,
		 char **version)
{
	char *k, *v;

	if (kopt_path_classify(path, &k, &v) != kind) {
		free(k);
		free(v);
		return 0;
	}
	*kernel = k;
	if (version)
		*version = v;
	else
		free(v);
	return 1;
}
