#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>

#include <git2.h>

#include "gitinit.h"

/*
 * mbedTLS's `mbedtls_x509_crt` is opaque here: the chain is only handed
 * on to the real function.
 */
struct mbedtls_x509_crt;

static int skip_ca;

#ifdef KOPT_STATIC_LIBGIT2
/*
 * libgit2 and mbedTLS are linked into the program: the linker sends
 * libgit2's calls here (-Wl,--wrap, see the Makefile).  While
 * kopt_gitinit() runs, the chain is left empty and no error is set, as
 * if the file held no certificate.
 */
int __real_mbedtls_x509_crt_parse_file(struct mbedtls_x509_crt *chain,
				       const char *path);
int __wrap_mbedtls_x509_crt_parse_file(struct mbedtls_x509_crt *chain,
				       const char *path);

int __wrap_mbedtls_x509_crt_parse_file(struct mbedtls_x509_crt *chain,
				       const char *path)
{
	if (skip_ca)
		return 0;
	return __real_mbedtls_x509_crt_parse_file(chain, path);
}

/*
 * mbedTLS 2's HAVEGE entropy source spends a million instructions
 * timing itself at every start (a quarter of a short command).  Its
 * state is left unfilled and its poll answers from the kernel's random
 * source instead: the entropy pool is seeded from getrandom() either way.
 */
struct mbedtls_havege_state;

void __wrap_mbedtls_havege_init(struct mbedtls_havege_state *hs);
int __wrap_mbedtls_havege_poll(void *data, unsigned char *output,
			       size_t len, size_t *olen);

void __wrap_mbedtls_havege_init(struct mbedtls_havege_state *hs)
{
	(void)hs;
}

int __wrap_mbedtls_havege_poll(void *data, unsigned char *output,
			       size_t len, size_t *olen)
{
	size_t got = 0;

	(void)data;
	*olen = 0;
	while (got < len) {
		ssize_t n = getrandom(output + got, len - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -0x003C; /* MBEDTLS_ERR_ENTROPY_SOURCE_FAILED */
		}
		got += (size_t)n;
	}
	*olen = got;
	return 0;
}

/*
 * libssh2 loads OpenSSL's engines and error strings (another million
 * instructions) when libgit2 starts; git-kopt opens no SSH session, and
 * libssh2 starts itself on its first session anyway.
 */
int __real_libssh2_init(int flags);
int __wrap_libssh2_init(int flags);

int __wrap_libssh2_init(int flags)
{
	if (skip_ca)
		return 0;
	return __real_libssh2_init(flags);
}
#else
int mbedtls_x509_crt_parse_file(struct mbedtls_x509_crt *chain,
				const char *path);

/*
 * Defined in the program, this interposes on libmbedx509's function for
 * libgit2 (the dynamic linker looks in the program first).  While
 * kopt_gitinit() runs, the chain is left empty and no error is set, as
 * if the file held no certificate.
 */
int mbedtls_x509_crt_parse_file(struct mbedtls_x509_crt *chain,
				const char *path)
{
	static int (*real)(struct mbedtls_x509_crt *, const char *);

	if (skip_ca)
		return 0;
	if (!real) {
		void *sym = dlsym(RTLD_NEXT, "mbedtls_x509_crt_parse_file");

		if (!sym)
			return -0x2900; /* MBEDTLS_ERR_X509_FILE_IO_ERROR */
		memcpy(&real, &sym, sizeof(real));
	}
	return real(chain, path);
}
#endif

int kopt_gitinit(void)
{
	int ret;

	skip_ca = 1;
	ret = git_libgit2_init();
	skip_ca = 0;
	return ret;
}
