#include "lockfile.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "banned.h"

int kopt_read_file(struct kopt_buf *out, const char *path, const char *label)
{
	size_t len = out->len;
	int e;

	if (!kopt_buf_read_file(out, path))
		return 0;
	e = errno;
	kopt_buf_setlen(out, len);
	if (e == ENOENT)
		return KOPT_ENOTFOUND;
	return kopt_error("cannot read '%s': %s", label ? label : path,
			  strerror(e));
}

/* the locks held, for removal at exit; threads take locks too */
static struct kopt_lock *active;
static int atexit_installed;
static pthread_mutex_t active_mutex = PTHREAD_MUTEX_INITIALIZER;

static void remove_active_locks(void)
{
	struct kopt_lock *lk;

	for (lk = active; lk; lk = lk->next_active)
		if (lk->lock_path) {
			if (lk->fd >= 0)
				close(lk->fd);
			unlink(lk->lock_path);
		}
}

static void unlink_active(struct kopt_lock *lk)
{
	struct kopt_lock **p;

	pthread_mutex_lock(&active_mutex);
	for (p = &active; *p; p = &(*p)->next_active)
		if (*p == lk) {
			*p = lk->next_active;
			break;
		}
	pthread_mutex_unlock(&active_mutex);
	lk->next_active = NULL;
}

int kopt_mkdir_p(const char *dir)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	size_t i;
	int ret = 0;

	kopt_buf_addstr(&sb, dir);
	for (i = 1; i <= sb.len; i++) {
		if (i < sb.len && sb.buf[i] != '/')
			continue;
		char c = sb.buf[i];
		sb.buf[i] = '\0';
		if (mkdir(sb.buf, 0777) && errno != EEXIST) {
			ret = kopt_error("cannot create directory '%s': %s",
					 sb.buf, strerror(errno));
			break;
		}
		sb.buf[i] = c;
	}
	kopt_buf_release(&sb);
	return ret;
}

int kopt_mkdir_parents(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int ret;

	if (!slash || slash == path)
		return 0;
	dir = kopt_strndup(path, (size_t)(slash - path));
	ret = kopt_mkdir_p(dir);
	free(dir);
	return ret;
}

static int acquire(struct kopt_lock *lk, const char *path, int quiet);
static int locked(const char *label);

int kopt_lock_acquire(struct kopt_lock *lk, const char *path)
{
	return acquire(lk, path, 0);
}

int kopt_lock_acquire_timeout(struct kopt_lock *lk, const char *path,
			      long timeout_ms)
{
	long waited = 0, step = 1;
	int ret;

	while ((ret = acquire(lk, path, 1)) == KOPT_ELOCKED &&
	       waited < timeout_ms) {
		struct timespec ts = { 0, step * 1000000L };
		free(lk->path);
		lk->path = NULL;
		nanosleep(&ts, NULL);
		waited += step;
		if (step < 50)
			step *= 2;
	}
	if (ret != KOPT_ELOCKED)
		return ret;
	free(lk->path);
	lk->path = NULL;
	return acquire(lk, path, 0);
}

static int acquire(struct kopt_lock *lk, const char *path, int quiet)
{
	struct stat st;

	lk->path = kopt_strdup(path);
	lk->lock_path = kopt_xstrfmt("%s.lock", path);
	if (!stat(path, &st))
		lk->mode = st.st_mode & 07777;
	lk->fd = open(lk->lock_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		      0666);
	if (lk->fd < 0) {
		int e = errno;
		free(lk->lock_path);
		lk->lock_path = NULL;
		if (e == EEXIST)
			return quiet ? KOPT_ELOCKED : locked(path);
		return kopt_error("cannot create '%s.lock': %s", path,
				  strerror(e));
	}
	pthread_mutex_lock(&active_mutex);
	if (!atexit_installed) {
		atexit(remove_active_locks);
		atexit_installed = 1;
	}
	lk->next_active = active;
	active = lk;
	pthread_mutex_unlock(&active_mutex);
	return 0;
}

static int locked(const char *label)
{
	kopt_error("cannot lock '%s': '%s.lock' exists; another git kopt may "
		   "be running, otherwise remove it", label, label);
	return KOPT_ELOCKED;
}

int kopt_lock_check(const char *path, const char *label)
{
	char *lock = kopt_xstrfmt("%s.lock", path);
	struct stat st;
	int ret = 0;

	if (!lstat(lock, &st))
		ret = locked(label);
	free(lock);
	return ret;
}

int kopt_lock_write(struct kopt_lock *lk, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(lk->fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return kopt_error("cannot write '%s': %s",
					  lk->lock_path, strerror(errno));
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int kopt_lock_commit(struct kopt_lock *lk)
{
	int ret = 0;

	if (!lk->lock_path)
		return kopt_error("lock on '%s' not held", lk->path ? lk->path : "?");
	if (fchmod(lk->fd, lk->mode) || (!lk->no_fsync && fsync(lk->fd))) {
		ret = kopt_error("cannot write '%s': %s", lk->lock_path,
				 strerror(errno));
		kopt_lock_rollback(lk);
		return ret;
	}
	close(lk->fd);
	lk->fd = -1;
	if (rename(lk->lock_path, lk->path)) {
		ret = kopt_error("cannot rename '%s' to '%s': %s",
				 lk->lock_path, lk->path, strerror(errno));
		unlink(lk->lock_path);
	}
	unlink_active(lk);
	free(lk->lock_path);
	lk->lock_path = NULL;
	free(lk->path);
	lk->path = NULL;
	return ret;
}

void kopt_lock_rollback(struct kopt_lock *lk)
{
	if (lk->lock_path) {
		if (lk->fd >= 0)
			close(lk->fd);
		unlink(lk->lock_path);
		unlink_active(lk);
		free(lk->lock_path);
		lk->lock_path = NULL;
	}
	lk->fd = -1;
	free(lk->path);
	lk->path = NULL;
}

int kopt_write_file_atomic(const char *path, const void *data, size_t len,
			   mode_t mode)
{
	struct kopt_lock lk = KOPT_LOCK_INIT;
	int ret;

	if (kopt_mkdir_parents(path))
		return -1;
	lk.mode = mode ? mode : 0644;
	ret = kopt_lock_acquire(&lk, path);
	if (ret)
		return ret;
	if (kopt_lock_write(&lk, data, len)) {
		kopt_lock_rollback(&lk);
		return -1;
	}
	return kopt_lock_commit(&lk);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void kopt_remove_tree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
