/*
 * The stat-keyed caches under .git/kopt (lib/cache), and the summaries
 * they hold (devlogs' and results files'): a cache file of any bytes is
 * read, or ignored when damaged; each entry's text is read as a devlog
 * summary and as a results summary; an entry put and saved reads back.
 */
#include "fuzz.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "buf.h"
#include "cache.h"
#include "devlog.h"
#include "results.h"

static git_repository *repo;
static char *file;

static void setup(void)
{
	char dir[] = "/tmp/kopt-fuzz-cache-XXXXXX";

	git_libgit2_init();
	if (!mkdtemp(dir) || git_repository_init(&repo, dir, 0))
		abort();
	file = kopt_xstrfmt("%skopt", git_repository_path(repo));
	mkdir(file, 0777);
	free(file);
	file = kopt_xstrfmt("%skopt/fuzz.cache", git_repository_path(repo));
}

static void write_file(const uint8_t *data, size_t size)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0666);

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_cache c = KOPT_CACHE_INIT;
	struct stat st;
	const char *got;
	size_t i, len;

	fuzz_init();
	if (!repo)
		setup();
	write_file(data, size);
	kopt_cache_open(&c, repo, "fuzz");
	for (i = 0; i < c.nr; i++) {
		struct kopt_devlog dl = KOPT_DEVLOG_INIT;
		struct kopt_results r = KOPT_RESULTS_INIT;
		char *copy = fuzz_copy((const uint8_t *)c.entries[i].data,
				       c.entries[i].len, 0);

		if (!kopt_devlog_from_summary(&dl, copy, c.entries[i].len,
					      "fuzz.md"))
			kopt_devlog_release(&dl);
		if (!kopt_results_from_summary(&r, copy, c.entries[i].len))
			kopt_results_release(&r);
		free(copy);
	}

	/* an entry put and saved is there when the cache is read again */
	memset(&st, 0, sizeof(st));
	st.st_size = 12;
	st.st_mtim.tv_sec = st.st_ctim.tv_sec = 1000000000;
	st.st_ino = 42;
	kopt_cache_put(&c, "docs/kernels/fuzz.md", &st, "some\ttext\n", 10);
	FUZZ_CHECK(!kopt_cache_save(&c), "the cache could not be saved");
	kopt_cache_release(&c);
	kopt_cache_open(&c, repo, "fuzz");
	FUZZ_CHECK(kopt_cache_get(&c, "docs/kernels/fuzz.md", &st, &got, &len)
		   && len == 10 && !memcmp(got, "some\ttext\n", 10),
		   "the entry put does not read back");
	kopt_cache_release(&c);
	return 0;
}
