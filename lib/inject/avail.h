#ifndef KOPT_INJECT_AVAIL_H
#define KOPT_INJECT_AVAIL_H
/*
 * The counter availability image kept between runs, apart from CUPTI:
 * reading it from the device takes CUPTI 0.12 s a run (0.6 s on a
 * device's first use), and a program that launches its kernels at once
 * waits for it.  A run that read it leaves it in a directory
 * (KOPT_INJECT_CACHE) under a key that names what it depends on (chip,
 * device, driver, CUPTI); a run within KOPT_INJECT_AVAIL_MAX_AGE seconds
 * on the same key takes it from there.  A profiler set up from a kept
 * image that then fails drops it, so that the next run reads it again.
 */
#include <stddef.h>

#define KOPT_INJECT_AVAIL_MAX_AGE 600
#define KOPT_INJECT_AVAIL_MAX_BYTES (1 << 20)

/* The kept image of `key` (malloc'ed, into *img, *n), 0; or -1: none, too
   old, or not the key's. */
int kopt_inject_avail_load(const char *dir, const char *key,
			   unsigned char **img, size_t *n);
/* Keep the image of `key` (atomically); 0, or -1 (nothing kept). */
int kopt_inject_avail_store(const char *dir, const char *key,
			    const unsigned char *img, size_t n);
/* Forget the image of `key`. */
void kopt_inject_avail_drop(const char *dir, const char *key);

#endif
