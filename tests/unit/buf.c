#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <liburing.h>

#include "buf.h"
#include "strvec.h"

static void test_init_is_empty_string(void **state)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	(void)state;
	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	kopt_buf_release(&sb);
	assert_string_equal(sb.buf, "");
}

static void test_add_and_format(void **state)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	int i;

	(void)state;
	kopt_buf_addstr(&sb, "abc");
	kopt_buf_addch(&sb, '-');
	kopt_buf_addf(&sb, "%d/%s", 42, "x");
	assert_string_equal(sb.buf, "abc-42/x");
	for (i = 0; i < 1000; i++)
		kopt_buf_addf(&sb, "%04d", i);
	assert_int_equal(sb.len, 8 + 4000);
	assert_int_equal(sb.buf[sb.len], '\0');
	kopt_buf_release(&sb);
}

/* Whole numbers print as printf prints them. */
static void test_add_int(void **state)
{
	static const intmax_t values[] = {
		0, 1, -1, 9, 10, 99, 100, 4096, -4096, 2147483647,
		-2147483647 - 1, INTMAX_MAX, INTMAX_MIN
	};
	struct kopt_buf sb = KOPT_BUF_INIT, want = KOPT_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(values) / sizeof(*values); i++) {
		kopt_buf_add_int(&sb, values[i]);
		kopt_buf_addch(&sb, ' ');
		kopt_buf_addf(&want, "%jd ", values[i]);
	}
	kopt_buf_add_uint(&sb, UINTMAX_MAX);
	kopt_buf_addf(&want, "%ju", UINTMAX_MAX);
	assert_string_equal(sb.buf, want.buf);
	assert_int_equal(sb.len, strlen(sb.buf));
	kopt_buf_release(&sb);
	kopt_buf_release(&want);
}

static void test_splice(void **state)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	(void)state;
	kopt_buf_addstr(&sb, "hello world");
	kopt_buf_splice(&sb, 6, 5, "there, friend", 13);
	assert_string_equal(sb.buf, "hello there, friend");
	kopt_buf_splice(&sb, 0, 6, NULL, 0);
	assert_string_equal(sb.buf, "there, friend");
	kopt_buf_insert(&sb, 0, ">> ", 3);
	assert_string_equal(sb.buf, ">> there, friend");
	kopt_buf_release(&sb);
}

static void test_trim_and_detach(void **state)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	char *s;
	size_t len;

	(void)state;
	kopt_buf_addstr(&sb, " \t value \r\n");
	kopt_buf_trim(&sb);
	assert_string_equal(sb.buf, "value");
	s = kopt_buf_detach(&sb, &len);
	assert_int_equal(len, 5);
	assert_string_equal(s, "value");
	assert_string_equal(sb.buf, "");
	free(s);
}

static void test_strvec(void **state)
{
	struct kopt_strvec sv = KOPT_STRVEC_INIT;

	(void)state;
	assert_null(sv.v[0]);
	kopt_strvec_push(&sv, "b");
	kopt_strvec_pushf(&sv, "a%d", 1);
	assert_int_equal(sv.nr, 2);
	assert_null(sv.v[2]);
	kopt_strvec_sort(&sv);
	assert_string_equal(sv.v[0], "a1");
	assert_true(kopt_strvec_has(&sv, "b"));
	kopt_strvec_pop(&sv);
	assert_false(kopt_strvec_has(&sv, "b"));
	kopt_strvec_clear(&sv);
	assert_int_equal(sv.nr, 0);
}

static void test_string_helpers(void **state)
{
	const char *rest;

	(void)state;
	assert_true(kopt_starts_with("kopt/mla/v1", "kopt/"));
	assert_false(kopt_starts_with("kop", "kopt"));
	assert_true(kopt_ends_with("x.json", ".json"));
	assert_true(kopt_skip_prefix("Kopt-Step: design", "Kopt-Step: ", &rest));
	assert_string_equal(rest, "design");
	assert_true(kopt_str_eq("v12", "v12"));
	assert_true(kopt_str_eq("", ""));
	assert_false(kopt_str_eq("v1", "v12"));
	assert_false(kopt_str_eq("v12", "v1"));
	assert_false(kopt_str_eq("v1", "V1"));
	assert_false(kopt_str_eq("", "v"));
}

static void write_bytes(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_read_file(void **state)
{
	char dir[] = "/tmp/kopt-buf-XXXXXX";
	struct kopt_buf sb = KOPT_BUF_INIT, want = KOPT_BUF_INIT;
	struct stat st;
	char *big, *empty;
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	big = kopt_xstrfmt("%s/big", dir);
	empty = kopt_xstrfmt("%s/empty", dir);
	/* larger than any first read: read on to its end */
	for (i = 0; i < 100000; i++)
		kopt_buf_addch(&want, 'a' + (int)(i % 26));
	write_bytes(big, want.buf, want.len);
	write_bytes(empty, "", 0);
	kopt_buf_addstr(&sb, "kept ");
	assert_int_equal(kopt_buf_read_file_stat(&sb, big, &st), 0);
	assert_int_equal(sb.len, 5 + want.len);
	assert_memory_equal(sb.buf + 5, want.buf, want.len);
	assert_int_equal(st.st_size, (off_t)want.len);
	kopt_buf_reset(&sb);
	assert_int_equal(kopt_buf_read_file_stat(&sb, empty, &st), 0);
	assert_int_equal(sb.len, 0);
	assert_int_equal(st.st_size, 0);
	/* a file whose size says nothing: read until read() says its end */
	assert_int_equal(kopt_buf_read_file(&sb, "/proc/self/status"), 0);
	assert_true(kopt_starts_with(sb.buf, "Name:"));
	assert_int_equal(sb.buf[sb.len - 1], '\n');
	assert_int_equal(kopt_buf_read_file(&sb, dir), -1);
	unlink(big);
	unlink(empty);
	rmdir(dir);
	free(big);
	free(empty);
	kopt_buf_release(&sb);
	kopt_buf_release(&want);
}

/*
 * The io_uring instances this process holds, or with `all` every file
 * descriptor.
 */
static int fds_held(int all)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	char path[300], link[64];
	int n = 0;
	ssize_t len;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len > 0) {
			link[len] = '\0';
			n += all || !strcmp(link, "anon_inode:[io_uring]");
		}
	}
	closedir(d);
	return n;
}

/* Whether this system lets a process have an io_uring at all. */
static int system_has_rings(void)
{
	struct io_uring ring;

	if (io_uring_queue_init(4, &ring, 0) < 0)
		return 0;
	io_uring_queue_exit(&ring);
	return 1;
}

/* What a container's seccomp profile does: io_uring_setup() refused. */
static int refuse_rings(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(*f), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

#define MANY 75

/*
 * The last file is /proc/self/stat, which says nothing of its size: the
 * reading process's own, from `skip` on.
 */
static int proc_stat_ok(const struct kopt_buf *out, size_t skip)
{
	char head[32];
	int n = snprintf(head, sizeof(head), "%d (", (int)getpid());

	return out->len > skip + 20 &&
	       !strncmp(out->buf + skip, head, (size_t)n) &&
	       out->buf[out->len - 1] == '\n';
}

struct many {
	int dirfd;
	const char *names[MANY];
	struct kopt_buf want[MANY];     /* one at a time, or empty */
	int want_err[MANY];
};

/*
 * Read every file at once into buffers that hold "kept " and compare
 * with what one at a time read: the number of differences.
 */
static int read_many_differences(const struct many *m)
{
	struct kopt_buf out[MANY];
	struct stat st[MANY], now;
	int errs[MANY], bad = 0;
	size_t i;

	for (i = 0; i < MANY; i++) {
		kopt_buf_init(&out[i], 0);
		kopt_buf_addstr(&out[i], "kept ");
	}
	kopt_buf_read_files_at(out, st, errs, m->dirfd, m->names, MANY);
	for (i = 0; i < MANY; i++) {
		if (errs[i] != m->want_err[i])
			bad++;
		else if (i == MANY - 1)
			bad += !proc_stat_ok(&out[i], 5);
		else if (errs[i])
			bad += strcmp(out[i].buf, "kept ") != 0;
		else if (out[i].len != 5 + m->want[i].len ||
			 memcmp(out[i].buf + 5, m->want[i].buf,
				m->want[i].len))
			bad++;
		else if (fstatat(m->dirfd, m->names[i], &now, 0) ||
			 now.st_ino != st[i].st_ino ||
			 now.st_mtim.tv_nsec != st[i].st_mtim.tv_nsec ||
			 (S_ISREG(now.st_mode) && now.st_size != st[i].st_size))
			bad++;
		kopt_buf_release(&out[i]);
	}
	return bad;
}

/* Run the reading in a child: after `how` (1: KOPT_NO_URING, 2: seccomp). */
static int child_differences(const struct many *m, int how)
{
	int status, before;
	pid_t pid = fork();

	if (!pid) {
		int fds = fds_held(1);
		before = fds_held(0);
		if (how == 1)
			setenv("KOPT_NO_URING", "1", 1);
		else if (refuse_rings())
			_exit(100);
		if (read_many_differences(m))
			_exit(101);
		/* no ring of its own: the files went one at a time */
		if (fds_held(0) != before)
			_exit(102);
		/* and each was closed */
		_exit(fds_held(1) == fds ? 0 : 103);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_read_files_at(void **state)
{
	char dir[] = "/tmp/kopt-many-XXXXXX";
	/* sizes around the first read's room, and more than two batches */
	static const size_t sizes[] = { 0, 1, 8190, 8191, 8192, 8193,
					16383, 16384, 20000, 100000 };
	struct many m;
	size_t i, j;
	char *path;

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (i = 0; i < MANY; i++) {
		kopt_buf_init(&m.want[i], 0);
		m.want_err[i] = 0;
		m.names[i] = kopt_xstrfmt("f%02zu", i);
	}
	for (i = 0; i < MANY - 3; i++) {
		size_t n = i < 10 ? sizes[i] : 100 + i * 37;
		for (j = 0; j < n; j++)
			kopt_buf_addch(&m.want[i], 'a' + (int)((i + j) % 26));
		path = kopt_xstrfmt("%s/%s", dir, m.names[i]);
		write_bytes(path, m.want[i].buf, m.want[i].len);
		free(path);
	}
	/* a missing file, a directory, a file whose size says nothing */
	m.want_err[MANY - 3] = ENOENT;
	path = kopt_xstrfmt("%s/%s", dir, m.names[MANY - 2]);
	assert_int_equal(mkdir(path, 0700), 0);
	free(path);
	m.want_err[MANY - 2] = EISDIR;
	path = kopt_xstrfmt("%s/%s", dir, m.names[MANY - 1]);
	assert_int_equal(symlink("/proc/self/stat", path), 0);
	free(path);
	m.dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(m.dirfd >= 0);

	/* where the system has no rings, and where they are turned off */
	if (system_has_rings())
		assert_int_equal(child_differences(&m, 2), 0);
	assert_int_equal(child_differences(&m, 1), 0);

	/* through a ring where there is one: this process's first */
	{
		int before = fds_held(0), fds = fds_held(1);
		struct kopt_buf out[MANY];
		struct stat st[MANY];
		int errs[MANY];
		for (i = 0; i < MANY; i++)
			kopt_buf_init(&out[i], 0);
		kopt_buf_read_files_at(out, st, errs, m.dirfd, m.names, MANY);
		for (i = 0; i < MANY - 1; i++) {
			assert_int_equal(errs[i], m.want_err[i]);
			assert_int_equal(out[i].len, m.want[i].len);
			assert_memory_equal(out[i].buf, m.want[i].buf,
					    m.want[i].len);
			if (!errs[i] && i < MANY - 3)
				assert_int_equal(st[i].st_size,
						 (off_t)m.want[i].len);
		}
		assert_int_equal(errs[MANY - 1], 0);
		assert_true(proc_stat_ok(&out[MANY - 1], 0));
		assert_int_equal(fds_held(0),
				 before + (system_has_rings() ? 1 : 0));
		assert_int_equal(fds_held(1),
				 fds + (system_has_rings() ? 1 : 0));
		for (i = 0; i < MANY; i++)
			kopt_buf_release(&out[i]);
	}

	for (i = 0; i < MANY; i++) {
		path = kopt_xstrfmt("%s/%s", dir, m.names[i]);
		if (unlink(path))
			rmdir(path);
		free(path);
		free((char *)m.names[i]);
		kopt_buf_release(&m.want[i]);
	}
	close(m.dirfd);
	rmdir(dir);
}

/* An empty array starts with room for four, then grows as git's do. */
static void test_alloc_grow(void **state)
{
	double *x = NULL;
	size_t nr = 0, alloc = 0, i;

	(void)state;
	KOPT_ALLOC_GROW(x, nr + 1, alloc);
	assert_int_equal(alloc, 4);
	for (i = 0; i < 4; i++) {
		KOPT_ALLOC_GROW(x, nr + 1, alloc);
		x[nr++] = (double)i;
	}
	assert_int_equal(alloc, 4);
	KOPT_ALLOC_GROW(x, nr + 1, alloc);
	assert_int_equal(alloc, 4 * 3 / 2 + 16);
	x[nr++] = 4;
	KOPT_ALLOC_GROW(x, 100, alloc);
	assert_int_equal(alloc, 100);       /* a larger need is taken whole */
	for (i = 0; i < nr; i++)
		assert_true(x[i] == (double)i);
	free(x);
	x = NULL;
	alloc = 0;
	KOPT_ALLOC_GROW(x, 9, alloc);
	assert_int_equal(alloc, 9);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_is_empty_string),
		cmocka_unit_test(test_add_and_format),
		cmocka_unit_test(test_add_int),
		cmocka_unit_test(test_splice),
		cmocka_unit_test(test_trim_and_detach),
		cmocka_unit_test(test_strvec),
		cmocka_unit_test(test_string_helpers),
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_read_files_at),
		cmocka_unit_test(test_alloc_grow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
