#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "lockfile.h"
#include "banned.h"

static char *journal_path(git_repository *repo, const char *step)
{
	return kopt_xstrfmt("%skopt/%s.journal", git_repository_path(repo),
			    step);
}

static void this_host(char *out, size_t len)
{
	if (gethostname(out, len - 1))
		out[0] = '\0';
	out[len - 1] = '\0';
}

static void parse(struct kopt_journal *j, const struct kopt_buf *text)
{
	const char *p = text->buf, *end = text->buf + text->len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *sp;
		char *key;

		if (!eol)
			break;          /* a last line cut short */
		if ((size_t)(eol - p) == 3 && !memcmp(p, "end", 3)) {
			j->complete = 1;
			break;
		}
		sp = memchr(p, ' ', (size_t)(eol - p));
		if (sp) {
			key = kopt_strndup(p, (size_t)(sp - p));
			kopt_strvec_push(&j->keys, key);
			free(key);
			key = kopt_strndup(sp + 1, (size_t)(eol - sp - 1));
			kopt_strvec_push(&j->values, key);
			free(key);
		}
		p = eol + 1;
	}
}

/* Whether the process that wrote `j` may still be at work. */
static int writer_alive(const struct kopt_journal *j)
{
	const char *pid = kopt_journal_get(j, "pid");
	const char *host = kopt_journal_get(j, "host");
	char here[256];
	char *end;
	long n;

	if (!pid)
		return 0;       /* killed before it wrote its first line */
	this_host(here, sizeof(here));
	if (!host || strcmp(host, here))
		return 1;       /* another host's: nothing can be proved */
	errno = 0;
	n = strtol(pid, &end, 10);
	if (errno || *end || n <= 0)
		return 0;
	if ((pid_t)n == getpid())
		return 0;
	return !kill((pid_t)n, 0) || errno == EPERM;
}

int kopt_journal_read(struct kopt_journal *j, git_repository *repo,
		      const char *step)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	int ret;

	kopt_journal_release(j);
	j->path = journal_path(repo, step);
	ret = kopt_read_file(&text, j->path, NULL);
	if (ret)
		return ret;
	parse(j, &text);
	kopt_buf_release(&text);
	if (writer_alive(j)) {
		kopt_error("another git kopt %s is running (process %s on "
			   "%s); if it is not, remove '%s'", step,
			   kopt_journal_get(j, "pid"),
			   kopt_journal_get(j, "host") ?
			   kopt_journal_get(j, "host") : "another host",
			   j->path);
		return KOPT_ELOCKED;
	}
	return 0;
}

const char *kopt_journal_get(const struct kopt_journal *j, const char *key)
{
	size_t i;

	for (i = 0; i < j->keys.nr && i < j->values.nr; i++)
		if (!strcmp(j->keys.v[i], key))
			return j->values.v[i];
	return NULL;
}

void kopt_journal_set(struct kopt_journal *j, const char *key,
		      const char *value)
{
	kopt_strvec_push(&j->keys, key);
	kopt_strvec_push(&j->values, value ? value : "");
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int kopt_journal_begin(struct kopt_journal *j, git_repository *repo,
		       const char *step)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	char here[256];
	size_t i;
	int fd, ret = 0;

	free(j->path);
	j->path = journal_path(repo, step);
	this_host(here, sizeof(here));
	kopt_buf_addf(&text, "pid %ld\nhost %s\n", (long)getpid(), here);
	for (i = 0; i < j->keys.nr; i++)
		kopt_buf_addf(&text, "%s %s\n", j->keys.v[i], j->values.v[i]);
	kopt_buf_addstr(&text, "end\n");
	if (kopt_mkdir_parents(j->path)) {
		kopt_buf_release(&text);
		return -1;
	}
	fd = open(j->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = errno == EEXIST ? KOPT_ELOCKED : -1;
		kopt_error("cannot create '%s': %s", j->path, strerror(errno));
	} else if (write_all(fd, text.buf, text.len) || fsync(fd)) {
		ret = kopt_error("cannot write '%s': %s", j->path,
				 strerror(errno));
		close(fd);
		unlink(j->path);
	} else if (close(fd)) {
		ret = kopt_error("cannot write '%s': %s", j->path,
				 strerror(errno));
		unlink(j->path);
	}
	kopt_buf_release(&text);
	return ret;
}

int kopt_journal_end(struct kopt_journal *j)
{
	if (j->path && unlink(j->path) && errno != ENOENT)
		return kopt_error("cannot remove '%s': %s", j->path,
				  strerror(errno));
	return 0;
}

void kopt_journal_release(struct kopt_journal *j)
{
	free(j->path);
	j->path = NULL;
	kopt_strvec_clear(&j->keys);
	kopt_strvec_clear(&j->values);
	j->complete = 0;
}
