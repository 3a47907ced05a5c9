#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
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
 * libgit2 sets its TLS up when it starts: mbedTLS's configuration, its
 * ciphersuites looked up by name, a random generator seeded from the
 * entropy pool (SHA-512 and AES tables), freed and wiped again at the
 * end; 300,000 instructions of every process, which git-kopt spends on
 * no connection of libgit2's.  The set-up is made on the first call that
 * needs it (a TLS stream, or a CA location to set) instead, once a start
 * of libgit2, with the CA certificates then loaded as libgit2 loads them.
 */
typedef struct git_stream git_stream;

int __real_git_mbedtls_stream_global_init(void);
int __wrap_git_mbedtls_stream_global_init(void);
int __real_git_mbedtls_stream_new(git_stream **out, const char *host,
				  const char *port);
int __wrap_git_mbedtls_stream_new(git_stream **out, const char *host,
				  const char *port);
int __real_git_mbedtls_stream_wrap(git_stream **out, git_stream *in,
				   const char *host);
int __wrap_git_mbedtls_stream_wrap(git_stream **out, git_stream *in,
				   const char *host);
int __real_git_mbedtls__set_cert_location(const char *file,
					  const char *path);
int __wrap_git_mbedtls__set_cert_location(const char *file,
					  const char *path);
int git_runtime_shutdown_register(void (*fn)(void));

static pthread_mutex_t tls_lock = PTHREAD_MUTEX_INITIALIZER;
static int tls_done;

/* libgit2's shutdown freed it: a later start sets it up again. */
static void tls_shutdown(void)
{
	tls_done = 0;
}

static int tls_ready(void)
{
	int ret = 0;

	pthread_mutex_lock(&tls_lock);
	if (!tls_done) {
		ret = __real_git_mbedtls_stream_global_init();
		if (!ret)
			ret = git_runtime_shutdown_register(tls_shutdown);
		tls_done = !ret;
	}
	pthread_mutex_unlock(&tls_lock);
	return ret;
}

int __wrap_git_mbedtls_stream_global_init(void)
{
	return 0;
}

int __wrap_git_mbedtls_stream_new(git_stream **out, const char *host,
				  const char *port)
{
	int ret = tls_ready();

	return ret < 0 ? ret : __real_git_mbedtls_stream_new(out, host, port);
}

int __wrap_git_mbedtls_stream_wrap(git_stream **out, git_stream *in,
				   const char *host)
{
	int ret = tls_ready();

	return ret < 0 ? ret : __real_git_mbedtls_stream_wrap(out, in, host);
}

int __wrap_git_mbedtls__set_cert_location(const char *file,
					  const char *path)
{
	int ret = tls_ready();

	return ret < 0 ? ret :
	       __real_git_mbedtls__set_cert_location(file, path);
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

/*
 * libgit2's Negotiate authentication (HTTP over Kerberos) calls the
 * GSS-API, which is MIT Kerberos's libgssapi_krb5 and six libraries it
 * needs: mapped at every start, they cost a process about 1 ms.
 * git-kopt opens no connection through libgit2, so the library is
 * loaded here on the first call that needs it, and each call goes on to
 * its function there.  Without it, a call fails as the GSS-API fails
 * (GSS_S_FAILURE), and libgit2 offers no Negotiate authentication.
 * The types are the GSS-API's C binding (RFC 2744).
 */
typedef uint32_t OM_uint32;
typedef struct kopt_gss_oid {
	OM_uint32 length;
	void *elements;
} *gss_OID;
typedef struct kopt_gss_buffer {
	size_t length;
	void *value;
} *gss_buffer_t;
typedef struct kopt_gss_oid_set {
	size_t count;
	gss_OID elements;
} *gss_OID_set;
typedef void *gss_name_t, *gss_ctx_id_t, *gss_cred_id_t,
	*gss_channel_bindings_t;

#define KOPT_GSS_S_FAILURE ((OM_uint32)13 << 16)

/* GSS_C_NT_HOSTBASED_SERVICE: { 1 2 840 113554 1 2 1 4 } */
static struct kopt_gss_oid hostbased_service = {
	10, "\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x04"
};
gss_OID GSS_C_NT_HOSTBASED_SERVICE = &hostbased_service;

static void *gss_lib;
static pthread_once_t gss_once = PTHREAD_ONCE_INIT;

static void gss_load(void)
{
	gss_lib = dlopen("libgssapi_krb5.so.2", RTLD_NOW | RTLD_LOCAL);
}

static void *gss_fn(const char *name)
{
	pthread_once(&gss_once, gss_load);
	return gss_lib ? dlsym(gss_lib, name) : NULL;
}

/*
 * Each function: its pointer in the library (none there: `none` is the
 * answer).  Only a Negotiate authentication calls them, a few times.
 */
#define GSS_FORWARD(name, none, params, args) \
OM_uint32 name params; \
OM_uint32 name params \
{ \
	OM_uint32 (*fn) params; \
	void *sym = gss_fn(#name); \
	if (!sym) { \
		if (minor) \
			*minor = 0; \
		return none; \
	} \
	memcpy(&fn, &sym, sizeof(fn)); \
	return fn args; \
}

GSS_FORWARD(gss_init_sec_context, KOPT_GSS_S_FAILURE,
	    (OM_uint32 *minor, gss_cred_id_t cred, gss_ctx_id_t *ctx,
	     gss_name_t target, gss_OID mech, OM_uint32 flags,
	     OM_uint32 time_req, gss_channel_bindings_t bindings,
	     gss_buffer_t input, gss_OID *actual_mech, gss_buffer_t output,
	     OM_uint32 *ret_flags, OM_uint32 *time_rec),
	    (minor, cred, ctx, target, mech, flags, time_req, bindings, input,
	     actual_mech, output, ret_flags, time_rec))
GSS_FORWARD(gss_import_name, KOPT_GSS_S_FAILURE,
	    (OM_uint32 *minor, gss_buffer_t name, gss_OID type,
	     gss_name_t *out),
	    (minor, name, type, out))
GSS_FORWARD(gss_display_status, KOPT_GSS_S_FAILURE,
	    (OM_uint32 *minor, OM_uint32 status, int type, gss_OID mech,
	     OM_uint32 *more, gss_buffer_t out),
	    (minor, status, type, mech, more, out))
GSS_FORWARD(gss_indicate_mechs, KOPT_GSS_S_FAILURE,
	    (OM_uint32 *minor, gss_OID_set *set),
	    (minor, set))
/* nothing was made without the library: nothing to release */
GSS_FORWARD(gss_delete_sec_context, 0,
	    (OM_uint32 *minor, gss_ctx_id_t *ctx, gss_buffer_t out),
	    (minor, ctx, out))
GSS_FORWARD(gss_release_buffer, 0,
	    (OM_uint32 *minor, gss_buffer_t buf),
	    (minor, buf))
GSS_FORWARD(gss_release_name, 0,
	    (OM_uint32 *minor, gss_name_t *name),
	    (minor, name))
GSS_FORWARD(gss_release_oid_set, 0,
	    (OM_uint32 *minor, gss_OID_set *set),
	    (minor, set))
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
