#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>
#include <git2/sys/stream.h>

#include "gitinit.h"

static void test_start(void **state)
{
	(void)state;
	assert_true(kopt_gitinit() > 0);
	assert_true(git_libgit2_shutdown() >= 0);
}

#ifdef KOPT_STATIC_LIBGIT2
/* The GSS-API's C binding (RFC 2744), as lib/gitinit.c declares it. */
typedef uint32_t OM_uint32;
struct oid {
	OM_uint32 length;
	void *elements;
};
struct oid_set {
	size_t count;
	struct oid *elements;
};
struct buffer {
	size_t length;
	void *value;
};
extern struct oid *GSS_C_NT_HOSTBASED_SERVICE;
OM_uint32 gss_indicate_mechs(OM_uint32 *minor, struct oid_set **set);
OM_uint32 gss_release_oid_set(OM_uint32 *minor, struct oid_set **set);
OM_uint32 gss_import_name(OM_uint32 *minor, struct buffer *name,
			  struct oid *type, void **out);
OM_uint32 gss_release_name(OM_uint32 *minor, void **name);

#define GSS_S_FAILURE ((OM_uint32)13 << 16)
#define GSSAPI_LIB "libgssapi_krb5.so.2"

static int gss_loaded(void)
{
	void *h = dlopen(GSSAPI_LIB, RTLD_NOW | RTLD_NOLOAD);

	if (h)
		dlclose(h);
	return h != NULL;
}

/* A process that makes no Negotiate authentication never maps it. */
static void test_gss_not_at_start(void **state)
{
	(void)state;
	assert_true(kopt_gitinit() > 0);
	assert_false(gss_loaded());
	git_libgit2_shutdown();
}

/*
 * The first call loads the system's GSS-API and goes on to it; where
 * there is none, calls fail as the GSS-API fails.
 */
static void test_gss_first_call(void **state)
{
	OM_uint32 minor = 7, major;
	struct oid_set *set = NULL;
	struct buffer name = { 14, "HTTP@localhost" };
	void *out = NULL;

	(void)state;
	major = gss_indicate_mechs(&minor, &set);
	if (!gss_loaded()) {
		assert_int_equal(major, GSS_S_FAILURE);
		assert_int_equal(minor, 0);
		assert_int_equal(gss_release_oid_set(&minor, &set), 0);
		return;
	}
	assert_int_equal(major, 0);
	assert_non_null(set);
	assert_true(set->count >= 1);
	assert_int_equal(gss_release_oid_set(&minor, &set), 0);
	assert_null(set);
	/* the program's name type is the library's own */
	{
		void *h = dlopen(GSSAPI_LIB, RTLD_NOW | RTLD_NOLOAD);
		struct oid **theirs = dlsym(h, "GSS_C_NT_HOSTBASED_SERVICE");

		assert_non_null(theirs);
		assert_int_equal(GSS_C_NT_HOSTBASED_SERVICE->length,
				 (*theirs)->length);
		assert_memory_equal(GSS_C_NT_HOSTBASED_SERVICE->elements,
				    (*theirs)->elements, (*theirs)->length);
		dlclose(h);
	}
	assert_int_equal(gss_import_name(&minor, &name,
					 GSS_C_NT_HOSTBASED_SERVICE, &out), 0);
	assert_non_null(out);
	assert_int_equal(gss_release_name(&minor, &out), 0);
}

/* libgit2's own TLS stream (src/libgit2/streams/mbedtls.h) */
int git_mbedtls_stream_new(git_stream **out, const char *host,
			   const char *port);

/*
 * TLS is set up on its first use, once a start of libgit2: a stream and
 * a CA location need it (without it, they would use a configuration that
 * is not there), and a start after a shutdown sets it up again.
 */
static void test_tls_on_first_use(void **state)
{
	git_stream *s = NULL;
	int round;

	(void)state;
	for (round = 0; round < 2; round++) {
		assert_true(kopt_gitinit() > 0);
		assert_int_equal(git_mbedtls_stream_new(&s, "localhost", "443"),
				 0);
		assert_non_null(s);
		assert_int_equal(s->encrypted, 1);
		s->free(s);
		/* the CA file is read, and its absence said */
		assert_true(git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS,
					     "/nonexistent/ca.pem", NULL) < 0);
		assert_non_null(git_error_last());
		assert_int_equal(git_libgit2_shutdown(), 0);
	}
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start),
#ifdef KOPT_STATIC_LIBGIT2
		cmocka_unit_test(test_gss_not_at_start),
		cmocka_unit_test(test_gss_first_call),
		cmocka_unit_test(test_tls_on_first_use),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
