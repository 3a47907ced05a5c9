/*
 * The caches under .git/kopt (lib/cache), and the summaries they hold
 * (a kernel's analysis, devlogs' and results files'): a cache file of
 * any bytes is read, or ignored when damaged; its text, and the input
 * itself, are read as an analysis summary, a devlog summary and a
 * results summary; an entry put reads back.  The same bytes as the pack
 * (<cache>/.pack) are read or ignored the same way, and entries held and
 * flushed as a new pack read back.
 */
#include "fuzz.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "analysis.h"
#include "buf.h"
#include "cache.h"
#include "devlog.h"
#include "lockfile.h"
#include "results.h"

static git_repository *repo;
static char *file, *pack;
static git_oid key;

static void setup(void)
{
	char dir[] = "/tmp/kopt-fuzz-cache-XXXXXX";
	struct kopt_buf in = KOPT_BUF_INIT;

	git_libgit2_init();
	if (!mkdtemp(dir) || git_repository_init(&repo, dir, 0))
		abort();
	file = kopt_xstrfmt("%skopt/fuzz/k", git_repository_path(repo));
	pack = kopt_xstrfmt("%skopt/fuzz/.pack", git_repository_path(repo));
	if (kopt_mkdir_parents(file))
		abort();
	kopt_buf_addstr(&in, "devlog 0123\n");
	kopt_cache_key(&key, &in);
	kopt_buf_release(&in);
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
}

static void read_summaries(const char *data, size_t len)
{
	struct kopt_analysis a = KOPT_ANALYSIS_INIT;
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	struct kopt_results r = KOPT_RESULTS_INIT;
	char *copy = fuzz_copy((const uint8_t *)data, len, 1);

	kopt_analysis_from_summary(&a, copy, len, "k", 3.0);
	kopt_analysis_release(&a);
	if (!kopt_devlog_from_summary(&dl, data, len, "fuzz.md"))
		kopt_devlog_release(&dl);
	if (!kopt_results_from_summary(&r, data, len))
		kopt_results_release(&r);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_cache c = KOPT_CACHE_INIT;
	struct kopt_buf got = KOPT_BUF_INIT;

	fuzz_init();
	if (!repo)
		setup();
	write_file(file, data, size);
	write_file(pack, data, size);
	kopt_cache_open(&c, repo, "fuzz");
	if (kopt_cache_get(&c, "k", &key, &got))
		read_summaries(got.buf, got.len);
	kopt_cache_has(&c, "k");
	kopt_cache_has(&c, "n7");
	read_summaries((const char *)data, size);

	/* held entries, flushed as one pack over whatever was there */
	kopt_cache_hold(&c);
	for (int i = 0; i < KOPT_CACHE_PACK_MIN; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", i);
		FUZZ_CHECK(!kopt_cache_put(&c, name, &key, name, strlen(name)),
			   "a put was not held");
	}
	kopt_cache_flush(&c);
	for (int i = 0; i < KOPT_CACHE_PACK_MIN; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", i);
		FUZZ_CHECK(kopt_cache_get(&c, name, &key, &got) &&
			   got.len == strlen(name) &&
			   !memcmp(got.buf, name, got.len),
			   "an entry of the pack does not read back");
	}

	/* an entry put is there when the cache is read again */
	FUZZ_CHECK(!kopt_cache_put(&c, "k", &key, "some\ttext\n", 10),
		   "the cache could not be written");
	kopt_cache_release(&c);
	kopt_cache_open(&c, repo, "fuzz");
	FUZZ_CHECK(kopt_cache_get(&c, "k", &key, &got) && got.len == 10 &&
		   !memcmp(got.buf, "some\ttext\n", 10),
		   "the entry put does not read back");
	kopt_cache_release(&c);
	kopt_buf_release(&got);
	return 0;
}
