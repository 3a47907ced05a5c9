/*
 * CUPTI, loaded at run time: see cupti-load.h.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti-load.h"
#include "../banned.h"

struct kopt_cupti kc;

/* libcupti's soname carries the CUDA major version: libcupti.so.13 */
#define KOPT_CUDA_MAJOR_OF(v) ((v) / 1000)

static void *try_open(const char *path, char *why, size_t why_size)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h && why && !*why) {
		const char *e = dlerror();
		snprintf(why, why_size, "%s", e ? e : path);
	}
	return h;
}

static int resolve(void *h, char *why, size_t why_size)
{
	void *p;
#define KOPT_CUPTI_RESOLVE(f) \
	p = dlsym(h, #f); \
	if (!p) { \
		snprintf(why, why_size, "%s has no symbol %s", kc.path, #f); \
		return -1; \
	} \
	memcpy(&kc.f, &p, sizeof(p));
	KOPT_CUPTI_FUNCTIONS(KOPT_CUPTI_RESOLVE)
#undef KOPT_CUPTI_RESOLVE
	return 0;
}

int kopt_inject_cupti_load(char *why, size_t why_size)
{
	char soname[64], path[512];
	const char *env = getenv("KOPT_INJECT_CUPTI");
	const char *home = getenv("CUDA_HOME");
	const char *tried[4];
	size_t n = 0;
	void *h = NULL, *p;
	Dl_info info;

	if (kc.handle)
		return 0;
	why[0] = '\0';
	snprintf(soname, sizeof(soname), "libcupti.so.%d",
		 KOPT_CUDA_MAJOR_OF(CUDA_VERSION));
	if (env && *env)
		tried[n++] = env;
	tried[n++] = soname;
	if (home && *home) {
		snprintf(path, sizeof(path), "%s/lib64/%s", home, soname);
		tried[n++] = path;
	}
	tried[n++] = "/usr/local/cuda/lib64/libcupti.so";
	for (size_t i = 0; i < n && !h; i++) {
		h = try_open(tried[i], why, why_size);
		if (h)
			snprintf(kc.path, sizeof(kc.path), "%s", tried[i]);
		/* an explicit path that fails is the answer */
		if (!h && i == 0 && env && *env)
			return -1;
	}
	if (!h)
		return -1;
	why[0] = '\0';
	if (resolve(h, why, why_size) < 0) {
		dlclose(h);
		memset(&kc, 0, sizeof(kc));
		return -1;
	}
	kc.handle = h;
	/* say which file the loader picked for a bare soname */
	memcpy(&p, &kc.cuptiSubscribe, sizeof(p));
	if (dladdr(p, &info) && info.dli_fname)
		snprintf(kc.path, sizeof(kc.path), "%s", info.dli_fname);
	return 0;
}

const char *kopt_inject_cupti_result_name(CUptiResult r)
{
	const char *s = NULL;
	if (kc.cuptiGetResultString && kc.cuptiGetResultString(r, &s) ==
	    CUPTI_SUCCESS && s)
		return s;
	return "CUPTI_ERROR_UNKNOWN";
}
