#include "filetx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "banned.h"

void kopt_filetx_add(struct kopt_filetx *tx, const char *path,
		     const char *label, const void *data, size_t len,
		     mode_t mode, const char *keep_as)
{
	struct kopt_filetx_op *op;
	struct kopt_lock init = KOPT_LOCK_INIT;

	KOPT_ALLOC_GROW(tx->ops, tx->nr + 1, tx->alloc);
	op = &tx->ops[tx->nr++];
	memset(op, 0, sizeof(*op));
	op->path = kopt_strdup(path);
	op->label = kopt_strdup(label ? label : path);
	op->keep_as = keep_as ? kopt_strdup(keep_as) : NULL;
	kopt_buf_init(&op->data, 0);
	kopt_buf_add(&op->data, data, len);
	op->mode = mode;
	op->lock = init;
}

/*
 * How to name `dir` in a message: relative, like the op's label, when
 * it lies below the directory the label is relative to.
 */
static const char *dir_label(const struct kopt_filetx_op *op, const char *dir)
{
	size_t plen = strlen(op->path), llen = strlen(op->label);
	size_t base;

	if (llen >= plen || strcmp(op->path + plen - llen, op->label))
		return dir;
	base = plen - llen;
	if (strlen(dir) <= base || strncmp(dir, op->path, base))
		return dir;
	return dir + base;
}

static char *parent_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return kopt_strdup(".");
	if (slash == path)
		return kopt_strdup("/");
	return kopt_strndup(path, (size_t)(slash - path));
}

static int check_parent(const struct kopt_filetx_op *op)
{
	char *dir = parent_of(op->path);
	int ret = 0;

	for (;;) {
		struct stat st;
		char *up;

		if (!stat(dir, &st)) {
			if (!S_ISDIR(st.st_mode)) {
				kopt_error("cannot create '%s': '%s' is "
					   "not a directory", op->label,
					   dir_label(op, dir));
				ret = KOPT_EINVALID;
			} else if (access(dir, W_OK | X_OK)) {
				kopt_error("cannot write '%s': '%s' is "
					   "not writable (%s)", op->label,
					   dir_label(op, dir), strerror(errno));
				ret = KOPT_EINVALID;
			}
			break;
		}
		if (errno != ENOENT && errno != ENOTDIR) {
			kopt_error("cannot write '%s': %s: %s",
				   op->label, dir_label(op, dir),
				   strerror(errno));
			ret = KOPT_EINVALID;
			break;
		}
		up = parent_of(dir);
		if (!strcmp(up, dir)) {
			free(up);
			break;
		}
		free(dir);
		dir = up;
	}
	free(dir);
	return ret;
}

/*
 * The locks held on files of `tx`, named all at once, so that a writer
 * killed while it held several is cleaned up after in one go.
 */
static int locks_held(const struct kopt_strvec *held)
{
	struct kopt_buf list = KOPT_BUF_INIT;
	size_t i;

	if (held->nr == 1)
		return kopt_error("cannot write '%s': '%s.lock' exists; another "
				  "git kopt may be running, otherwise remove "
				  "it", held->v[0], held->v[0]);
	for (i = 0; i < held->nr; i++)
		kopt_buf_addf(&list, "%s'%s.lock'", !i ? "" :
			      i + 1 < held->nr ? ", " : " and ", held->v[i]);
	kopt_error("cannot write %zu files: %s exist; another git kopt may be "
		   "running, otherwise remove them", held->nr, list.buf);
	kopt_buf_release(&list);
	return KOPT_EINVALID;
}

int kopt_filetx_check(const struct kopt_filetx *tx)
{
	struct kopt_strvec held = KOPT_STRVEC_INIT;
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < tx->nr; i++) {
		const struct kopt_filetx_op *op = &tx->ops[i];
		struct stat st;
		char *lock;

		if (check_parent(op)) {
			ret = KOPT_EINVALID;
		} else if (!stat(op->path, &st) && !S_ISREG(st.st_mode)) {
			ret = kopt_error("cannot write '%s': it exists and is "
					 "not a regular file", op->label);
		} else {
			lock = kopt_xstrfmt("%s.lock", op->path);
			if (!access(lock, F_OK))
				kopt_strvec_push(&held, op->label);
			else if (op->keep_as && !access(op->keep_as, F_OK))
				ret = kopt_error("cannot move '%s' aside: '%s' "
						 "exists", op->label,
						 dir_label(op, op->keep_as));
			free(lock);
		}
	}
	if (!ret && held.nr)
		ret = locks_held(&held);
	kopt_strvec_clear(&held);
	return ret < 0 ? KOPT_EINVALID : ret;
}

static int make_parents(struct kopt_filetx *tx, const char *path)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	const char *slash = strrchr(path, '/');
	size_t i;
	int ret = 0;

	if (!slash || slash == path)
		return 0;
	kopt_buf_add(&sb, path, (size_t)(slash - path));
	for (i = 1; i <= sb.len; i++) {
		char c;

		if (i < sb.len && sb.buf[i] != '/')
			continue;
		c = sb.buf[i];
		sb.buf[i] = '\0';
		if (!mkdir(sb.buf, 0777)) {
			kopt_strvec_push(&tx->made_dirs, sb.buf);
		} else if (errno != EEXIST) {
			kopt_error("cannot create directory '%s': %s",
				   sb.buf, strerror(errno));
			ret = -1;
			break;
		}
		sb.buf[i] = c;
	}
	kopt_buf_release(&sb);
	return ret;
}

static void undo(struct kopt_filetx *tx)
{
	size_t i;

	for (i = 0; i < tx->nr; i++)
		kopt_lock_rollback(&tx->ops[i].lock);
	for (i = tx->made_dirs.nr; i > 0; i--)
		rmdir(tx->made_dirs.v[i - 1]);
	kopt_strvec_clear(&tx->made_dirs);
}

int kopt_filetx_commit(struct kopt_filetx *tx)
{
	size_t i;
	int ret;

	ret = kopt_filetx_check(tx);
	if (ret)
		return ret;
	for (i = 0; i < tx->nr; i++) {
		struct kopt_filetx_op *op = &tx->ops[i];

		if (make_parents(tx, op->path))
			goto fail;
		/* lib/lockfile reports its own failures */
		if (kopt_lock_acquire(&op->lock, op->path))
			goto fail;
		if (op->mode)
			op->lock.mode = op->mode;
		if (kopt_lock_write(&op->lock, op->data.buf, op->data.len))
			goto fail;
	}
	/* Everything is staged; from here on only renames remain. */
	for (i = 0; i < tx->nr; i++) {
		struct kopt_filetx_op *op = &tx->ops[i];

		if (op->keep_as && rename(op->path, op->keep_as) &&
		    errno != ENOENT) {
			kopt_error("cannot move '%s' to '%s': %s",
				   op->label, dir_label(op, op->keep_as),
				   strerror(errno));
			ret = -1;
			kopt_lock_rollback(&op->lock);
			continue;
		}
		if (kopt_lock_commit(&op->lock))
			ret = -1;
	}
	kopt_strvec_clear(&tx->made_dirs);
	return ret;
fail:
	undo(tx);
	return -1;
}

void kopt_filetx_release(struct kopt_filetx *tx)
{
	size_t i;

	for (i = 0; i < tx->nr; i++) {
		struct kopt_filetx_op *op = &tx->ops[i];
		kopt_lock_rollback(&op->lock);
		free(op->path);
		free(op->label);
		free(op->keep_as);
		kopt_buf_release(&op->data);
	}
	free(tx->ops);
	tx->ops = NULL;
	tx->nr = tx->alloc = 0;
	kopt_strvec_clear(&tx->made_dirs);
}
