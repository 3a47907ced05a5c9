#include "index.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "repo.h"
#include "banned.h"

/*
 * The on-disk layout (git's Documentation/gitformat-index.txt): a
 * 12-byte header ("DIRC", version, entry count), the entries, the
 * extensions (4-byte signature, 4-byte size, data), a trailing hash.
 * An entry: ctime, mtime (8 bytes each), dev, ino, mode, uid, gid, size
 * (4 each), the object id, 2 bytes of flags (and 2 more when bit 14 is
 * set, in version 3 and up), then the path: NUL-padded to a multiple of
 * 8 bytes in versions 2 and 3; in version 4 a count of bytes to drop
 * from the end of the previous path, then the rest, NUL-terminated.
 */
#define HEADER_SIZE 12
#define HASH_SIZE 20
#define OFF_MODE 24
#define OFF_ID 40
#define OFF_FLAGS 60
#define OFF_NAME 62
#define FLAG_EXTENDED 0x4000
#define FLAG_STAGE_SHIFT 12
#define FLAG_NAME_MASK 0xfff
#define XFLAG_INTENT_TO_ADD 0x2000

struct slot {
	const unsigned char *raw;
	size_t path_at;         /* into the map (2, 3) or `paths` (4) */
	size_t path_len;
};

struct kopt_index {
	char *label;
	unsigned char *map;
	size_t size;
	unsigned version;
	struct slot *slots;
	size_t nr;
	struct kopt_buf paths;  /* version 4: the paths, NUL-separated */
	struct timespec mtime;  /* of the file: newer entries are racy */
	struct kopt_index_tree *trees;
	size_t trees_nr, trees_alloc;
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static unsigned be16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static int corrupt(const struct kopt_index *idx, const char *why)
{
	return kopt_error("cannot read the index '%s': %s", idx->label, why);
}

/* git's varint (offset encoding): 0 on overflow or past `end`. */
static int varint(size_t *out, const unsigned char **p,
		  const unsigned char *end)
{
	const unsigned char *q = *p;
	uintmax_t v;
	unsigned char c;

	if (q >= end)
		return -1;
	c = *q++;
	v = c & 127;
	while (c & 128) {
		if (q >= end || v >= (UINTMAX_MAX >> 8))
			return -1;
		v += 1;
		c = *q++;
		v = (v << 7) + (c & 127);
	}
	*out = (size_t)v;
	*p = q;
	return 0;
}

static int read_entries(struct kopt_index *idx, size_t nr,
			const unsigned char **at, const unsigned char *end)
{
	const unsigned char *p = *at;
	size_t prev_len = 0, i;

	idx->slots = kopt_calloc(nr ? nr : 1, sizeof(*idx->slots));
	for (i = 0; i < nr; i++) {
		struct slot *s = &idx->slots[i];
		size_t name_at = OFF_NAME, len;
		unsigned flags;

		if ((size_t)(end - p) < OFF_NAME + 1)
			return corrupt(idx, "an entry runs past the end");
		flags = be16(p + OFF_FLAGS);
		if (flags & FLAG_EXTENDED) {
			if (idx->version < 3)
				return corrupt(idx, "extended flags in "
					       "version 2");
			name_at += 2;
		}
		s->raw = p;
		if (idx->version == 4) {
			const unsigned char *q = p + name_at, *nul;
			size_t strip;
			if (varint(&strip, &q, end) || strip > prev_len)
				return corrupt(idx, "a bad path prefix");
			nul = memchr(q, '\0', (size_t)(end - q));
			if (!nul)
				return corrupt(idx, "a path runs past the end");
			len = (size_t)(nul - q);
			/* the previous path, less `strip` bytes, then this */
			kopt_buf_grow(&idx->paths, prev_len - strip + len + 1);
			s->path_at = idx->paths.len;
			if (i)
				kopt_buf_add(&idx->paths, idx->paths.buf +
					     idx->slots[i - 1].path_at,
					     prev_len - strip);
			kopt_buf_add(&idx->paths, (const char *)q, len);
			kopt_buf_addch(&idx->paths, '\0');
			s->path_len = prev_len - strip + len;
			prev_len = s->path_len;
			p = nul + 1;
		} else {
			const unsigned char *name = p + name_at, *nul;
			len = flags & FLAG_NAME_MASK;
			if (len == FLAG_NAME_MASK || name + len >= end) {
				nul = memchr(name, '\0', (size_t)(end - name));
				if (!nul)
					return corrupt(idx, "a path runs past "
						       "the end");
				len = (size_t)(nul - name);
			} else if (name[len]) {
				return corrupt(idx, "a path is not terminated");
			}
			s->path_at = (size_t)(name - idx->map);
			s->path_len = len;
			/* padded with 1 to 8 NULs to a multiple of 8 */
			p += (name_at + len + 8) & ~(size_t)7;
			if (p > end)
				return corrupt(idx, "an entry runs past the end");
		}
	}
	*at = p;
	return 0;
}

/* One node of the cache-tree and its subtrees, in order. */
/*
 * The decimal number at *p, which `stop` ends, as git writes it ("%d"):
 * 0 with *p past `stop`; -1 when there is none.  strtol() would cost
 * more than the rest of a cache-tree node.
 */
static int count(const unsigned char **p, const unsigned char *end,
		 unsigned char stop, long *out)
{
	const unsigned char *q = *p;
	long v = 0;
	int neg = q < end && *q == '-';

	q += neg;
	if (q >= end || *q < '0' || *q > '9')
		return -1;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		if (v > (LONG_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*q - '0');
	}
	if (q >= end || *q != stop)
		return -1;
	*out = neg ? -v : v;
	*p = q + 1;
	return 0;
}

static int read_tree(struct kopt_index *idx, const unsigned char **at,
		     const unsigned char *end, int depth)
{
	const unsigned char *p = *at, *nul, *nl, *num;
	struct kopt_index_tree *t;
	size_t self, i;
	long entries, subtrees;

	if (depth > 4096)
		return corrupt(idx, "the cache-tree is too deep");
	nul = memchr(p, '\0', (size_t)(end - p));
	if (!nul)
		return corrupt(idx, "a cache-tree path runs past the end");
	nl = memchr(nul, '\n', (size_t)(end - nul));
	if (!nl)
		return corrupt(idx, "a cache-tree line runs past the end");
	num = nul + 1;
	if (count(&num, nl, ' ', &entries))
		return corrupt(idx, "a bad cache-tree entry count");
	if (count(&num, nl + 1, '\n', &subtrees) || num != nl + 1 ||
	    subtrees < 0)
		return corrupt(idx, "a bad cache-tree subtree count");
	KOPT_ALLOC_GROW(idx->trees, idx->trees_nr + 1, idx->trees_alloc);
	self = idx->trees_nr++;
	t = &idx->trees[self];
	memset(t, 0, sizeof(*t));
	t->name = (const char *)p;
	t->name_len = (size_t)(nul - p);
	t->entries = entries < 0 ? -1 : (int)entries;
	t->subtrees = (size_t)subtrees;
	p = nl + 1;
	if (entries >= 0) {
		if ((size_t)(end - p) < HASH_SIZE)
			return corrupt(idx, "a cache-tree id runs past the end");
		git_oid_fromraw(&t->id, p);
		p += HASH_SIZE;
	}
	for (i = 0; i < (size_t)subtrees; i++) {
		int ret = read_tree(idx, &p, end, depth + 1);
		if (ret)
			return ret;
	}
	idx->trees[self].next = idx->trees_nr;
	*at = p;
	return 0;
}

static int read_extensions(struct kopt_index *idx, const unsigned char *p,
			   const unsigned char *end)
{
	while ((size_t)(end - p) >= 8) {
		const unsigned char *data = p + 8;
		size_t size = be32(p + 4);

		if (size > (size_t)(end - data))
			return corrupt(idx, "an extension runs past the end");
		if (!memcmp(p, "TREE", 4)) {
			const unsigned char *q = data;
			if (size) {
				int ret = read_tree(idx, &q, data + size, 0);
				if (ret)
					return ret;
			}
		} else if (!memcmp(p, "link", 4)) {
			return kopt_error("cannot read the index '%s': it is "
					  "split; run 'git update-index "
					  "--no-split-index'", idx->label);
		} else if (!memcmp(p, "sdir", 4)) {
			return kopt_error("cannot read the index '%s': it is "
					  "sparse; run 'git sparse-checkout "
					  "disable' or set index.sparse to "
					  "false", idx->label);
		} else if (p[0] >= 'A' && p[0] <= 'Z' &&
			   memcmp(p, "REUC", 4) && memcmp(p, "UNTR", 4) &&
			   memcmp(p, "FSMN", 4) && memcmp(p, "EOIE", 4) &&
			   memcmp(p, "IEOT", 4)) {
			return kopt_error("cannot read the index '%s': unknown "
					  "extension '%.4s'", idx->label,
					  (const char *)p);
		}
		p = data + size;
	}
	return 0;
}

static int parse(struct kopt_index *idx)
{
	const unsigned char *p = idx->map, *end;
	size_t nr;
	int ret;

	if (idx->size < HEADER_SIZE + HASH_SIZE || memcmp(p, "DIRC", 4))
		return corrupt(idx, "not an index file");
	idx->version = be32(p + 4);
	if (idx->version < 2 || idx->version > 4)
		return corrupt(idx, "unknown version");
	nr = be32(p + 8);
	end = idx->map + idx->size - HASH_SIZE;
	p += HEADER_SIZE;
	ret = read_entries(idx, nr, &p, end);
	if (!ret)
		ret = read_extensions(idx, p, end);
	if (!ret)
		idx->nr = nr;
	return ret;
}

int kopt_index_open_file(struct kopt_index **out, const char *path)
{
	struct kopt_index *idx = kopt_calloc(1, sizeof(*idx));
	struct stat st;
	int fd, ret = 0;

	*out = NULL;
	idx->label = kopt_strdup(path);
	kopt_buf_init(&idx->paths, 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT) {
			/* no index yet: nothing is staged */
			idx->slots = kopt_calloc(1, sizeof(*idx->slots));
			*out = idx;
			return 0;
		}
		ret = kopt_error("cannot read the index '%s': %s", path,
				 strerror(errno));
		goto done;
	}
	if (fstat(fd, &st) < 0) {
		ret = kopt_error("cannot read the index '%s': %s", path,
				 strerror(errno));
		goto done;
	}
	idx->size = (size_t)st.st_size;
	idx->mtime = st.st_mtim;
	if (idx->size) {
		void *m = mmap(NULL, idx->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			idx->size = 0;
			ret = kopt_error("cannot read the index '%s': %s", path,
					 strerror(errno));
			goto done;
		}
		idx->map = m;
	}
	ret = parse(idx);
done:
	if (fd >= 0)
		close(fd);
	if (ret) {
		kopt_index_free(idx);
		return ret < 0 ? ret : -1;
	}
	*out = idx;
	return 0;
}

int kopt_index_open(struct kopt_index **out, git_repository *repo)
{
	const char *env = getenv("GIT_INDEX_FILE");
	char *path;
	int ret;

	if (env && *env)
		return kopt_index_open_file(out, env);
	path = kopt_xstrfmt("%sindex", git_repository_path(repo));
	ret = kopt_index_open_file(out, path);
	free(path);
	return ret;
}

void kopt_index_free(struct kopt_index *idx)
{
	if (!idx)
		return;
	if (idx->map)
		munmap(idx->map, idx->size);
	free(idx->slots);
	free(idx->trees);
	kopt_buf_release(&idx->paths);
	free(idx->label);
	free(idx);
}

size_t kopt_index_nr(const struct kopt_index *idx)
{
	return idx->nr;
}

const char *kopt_index_path(const struct kopt_index *idx, size_t pos,
			    size_t *len)
{
	const struct slot *s = &idx->slots[pos];

	if (len)
		*len = s->path_len;
	if (idx->version == 4)
		return idx->paths.buf + s->path_at;
	return (const char *)idx->map + s->path_at;
}

void kopt_index_entry(struct kopt_index_entry *out,
		      const struct kopt_index *idx, size_t pos)
{
	const unsigned char *raw = idx->slots[pos].raw;
	unsigned flags = be16(raw + OFF_FLAGS);

	out->path = kopt_index_path(idx, pos, &out->path_len);
	git_oid_fromraw(&out->id, raw + OFF_ID);
	out->mode = be32(raw + OFF_MODE);
	out->stage = (flags >> FLAG_STAGE_SHIFT) & 3;
	out->intent_to_add = (flags & FLAG_EXTENDED) &&
			     (be16(raw + OFF_NAME) & XFLAG_INTENT_TO_ADD);
	out->st_ctime_s = be32(raw);
	out->st_ctime_ns = be32(raw + 4);
	out->st_mtime_s = be32(raw + 8);
	out->st_mtime_ns = be32(raw + 12);
	out->st_ino = be32(raw + 20);
	out->st_uid = be32(raw + 28);
	out->st_gid = be32(raw + 32);
	out->st_size = be32(raw + 36);
}

/* memcmp of the first `len` bytes; a shorter path sorts first. */
static int cmp_prefix(const struct kopt_index *idx, size_t pos,
		      const char *prefix, size_t len)
{
	size_t plen;
	const char *path = kopt_index_path(idx, pos, &plen);
	int c = memcmp(path, prefix, plen < len ? plen : len);

	if (c)
		return c;
	return plen < len ? -1 : 0;
}

void kopt_index_range(size_t *lo, size_t *hi, const struct kopt_index *idx,
		      const char *prefix, size_t len)
{
	size_t a = 0, b = idx->nr;

	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (cmp_prefix(idx, m, prefix, len) < 0)
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	b = idx->nr;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (cmp_prefix(idx, m, prefix, len) <= 0)
			a = m + 1;
		else
			b = m;
	}
	*hi = a;
}

int kopt_index_find(struct kopt_index_entry *out,
		    const struct kopt_index *idx, const char *path)
{
	size_t len = strlen(path), a = 0, b = idx->nr;

	/* the first entry of `path` (stage 0 sorts first) */
	while (a < b) {
		size_t m = a + (b - a) / 2, plen;
		const char *p = kopt_index_path(idx, m, &plen);
		int c = memcmp(p, path, plen < len ? plen : len);
		if (c < 0 || (!c && plen < len))
			a = m + 1;
		else
			b = m;
	}
	if (a < idx->nr) {
		size_t plen;
		const char *p = kopt_index_path(idx, a, &plen);
		if (plen == len && !memcmp(p, path, len)) {
			kopt_index_entry(out, idx, a);
			if (!out->stage)
				return 0;
		}
	}
	return KOPT_ENOTFOUND;
}

int kopt_index_read(struct kopt_buf *out, git_repository *repo,
		    const struct kopt_index *idx, const char *path)
{
	struct kopt_index_entry e;

	if (kopt_index_find(&e, idx, path) || e.intent_to_add)
		return KOPT_ENOTFOUND;
	return kopt_repo_read_blob(out, repo, &e.id, path);
}

const struct kopt_index_tree *kopt_index_trees(const struct kopt_index *idx,
					       size_t *nr)
{
	*nr = idx->trees_nr;
	return idx->trees_nr ? idx->trees : NULL;
}

int kopt_index_is_tree(const struct kopt_index *idx, const git_oid *tree)
{
	return idx && idx->trees_nr && idx->trees[0].entries >= 0 &&
	       git_oid_equal(&idx->trees[0].id, tree);
}

/*
 * git's match_stat_data() with every check on (nanoseconds included),
 * and its racy rule: an entry written in the same second as the index,
 * or later, may hide a same-size change made in that second.
 */
static int stat_clean(const struct kopt_index *idx,
		      const struct kopt_index_entry *e, const struct stat *st)
{
	unsigned long mode = S_ISREG(st->st_mode) ?
			     ((st->st_mode & 0100) ? 0100755 : 0100644) : 0;

	if (e->mode != mode ||
	    e->st_mtime_s != (uint32_t)st->st_mtim.tv_sec ||
	    e->st_mtime_ns != (uint32_t)st->st_mtim.tv_nsec ||
	    e->st_ctime_s != (uint32_t)st->st_ctim.tv_sec ||
	    e->st_ctime_ns != (uint32_t)st->st_ctim.tv_nsec ||
	    e->st_ino != (uint32_t)st->st_ino ||
	    e->st_uid != (uint32_t)st->st_uid ||
	    e->st_gid != (uint32_t)st->st_gid ||
	    e->st_size != (uint32_t)st->st_size)
		return 0;
	return (uint32_t)idx->mtime.tv_sec > e->st_mtime_s;
}

int kopt_index_clean_id(git_oid *out, const struct kopt_index *idx,
			const char *path, const struct stat *st)
{
	struct kopt_index_entry e;

	if (!idx || !S_ISREG(st->st_mode) || kopt_index_find(&e, idx, path) ||
	    e.intent_to_add || !stat_clean(idx, &e, st))
		return 0;
	git_oid_cpy(out, &e.id);
	return 1;
}

/*
 * kopt_index_worktree_id(); with `name`, the file's lstat data taken as
 * `name` in the directory open as `dirfd`.
 */
static int worktree_id(git_oid *out, struct stat *st,
		       const struct kopt_index *idx, const char *top,
		       const char *path, int dirfd, const char *name)
{
	struct kopt_buf full = KOPT_BUF_INIT;
	int ret = 0;

	/* the whole path: to stat without a directory, and to hash */
	kopt_buf_addstr(&full, top ? top : "");
	kopt_buf_addstr(&full, path);
	if (!name)
		name = full.buf;
	if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		ret = errno == ENOENT || errno == ENOTDIR ? KOPT_ENOTFOUND : -1;
	} else if (!S_ISREG(st->st_mode)) {
		ret = KOPT_EUNSUPPORTED;
	} else if (!kopt_index_clean_id(out, idx, path, st)) {
		if (git_odb_hashfile(out, full.buf, GIT_OBJECT_BLOB) < 0) {
			git_error_clear();
			ret = -1;
		}
	}
	kopt_buf_release(&full);
	return ret;
}

int kopt_index_worktree_id(git_oid *out, struct stat *st,
			   const struct kopt_index *idx, const char *top,
			   const char *path)
{
	return worktree_id(out, st, idx, top, path, AT_FDCWD, NULL);
}

int kopt_index_worktree_id_at(git_oid *out, struct stat *st,
			      const struct kopt_index *idx, const char *top,
			      const char *path, int dirfd, const char *name)
{
	return worktree_id(out, st, idx, top, path, dirfd, name);
}
