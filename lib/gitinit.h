#ifndef KOPT_GITINIT_H
#define KOPT_GITINIT_H

/*
 * Starting libgit2 without paying for TLS that git-kopt never uses.
 *
 * git_libgit2_init() of a libgit2 built with mbedTLS (Debian's) parses
 * the system's whole CA bundle, about half of a warm `git kopt analyze`,
 * although git-kopt opens no connection through libgit2: its network
 * (lib/http) goes through libcurl, which finds and checks its own CA
 * store when it connects.  kopt_gitinit() starts libgit2 with that
 * parse skipped: during the call, and only then, libgit2's load of the
 * CA file yields an empty chain.  Any other caller of mbedTLS's reader,
 * at any other time, is passed through unchanged.  A libgit2 built on
 * another TLS library is started as usual.
 *
 * Calling sequence: kopt_gitinit() where git_libgit2_init() would be
 * called, git_libgit2_shutdown() at the end, as usual.
 */

/* git_libgit2_init() without loading a CA store; its return value. */
int kopt_gitinit(void);

#endif
