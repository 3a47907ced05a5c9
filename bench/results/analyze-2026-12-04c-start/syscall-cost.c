/*
 * What a system call costs on this machine: lstat() of an absolute path,
 * getppid() (next to nothing in the kernel), and fstatat() of a name in
 * an open directory, 100,000 calls each.
 *
 *   gcc -O2 syscall-cost.c && ./a.out /abs/dir/file /abs/dir
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define N 100000

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct stat st;
	const char *name;
	double t, a, b, c;
	int i, d;

	if (argc != 3)
		return 129;
	name = argv[1];
	for (const char *p = argv[1]; *p; p++)
		if (*p == '/')
			name = p + 1;
	t = now();
	for (i = 0; i < N; i++)
		lstat(argv[1], &st);
	a = now() - t;
	t = now();
	for (i = 0; i < N; i++)
		getppid();
	b = now() - t;
	d = open(argv[2], O_RDONLY | O_DIRECTORY);
	if (d < 0)
		return 1;
	t = now();
	for (i = 0; i < N; i++)
		fstatat(d, name, &st, AT_SYMLINK_NOFOLLOW);
	c = now() - t;
	printf("lstat, absolute path %.2f us; getppid %.2f us; "
	       "fstatat in the directory %.2f us\n",
	       a / N * 1e6, b / N * 1e6, c / N * 1e6);
	return 0;
}
