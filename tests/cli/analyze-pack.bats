#!/usr/bin/env bats
# A first run over many kernels stores their cache entries in one pack
# (lib/cache); what analyze and status print is what they print without
# any cache, whether the entries come from the pack, from a kernel's own
# file, or are read again.

load helper
load kopt-results

setup() {
	setup_repo
	setup_kernel
	write_devlog
	write_results mla-decode v0 null 95.1 140
	# 2 kernels a devlog of the corpus: more than KOPT_CACHE_PACK_MIN (32)
	add_corpus_kernels a 1
	add_corpus_kernels b "$corpus_next"
	[ "$corpus_next" -gt 33 ]
	git add -A
	git commit -q -m "kernels"
	KOPT_NO_CACHE=1 git kopt analyze >"$BATS_TEST_TMPDIR/want.out"
	KOPT_NO_CACHE=1 git kopt status >"$BATS_TEST_TMPDIR/want-status.out"
}

same() {
	"$@" >"$BATS_TEST_TMPDIR/got.out"
	diff -u "$BATS_TEST_TMPDIR/want.out" "$BATS_TEST_TMPDIR/got.out"
}

@test "a first run writes one pack, and later runs print the same from it" {
	rm -rf .git/kopt
	same git kopt analyze
	[ -s .git/kopt/overview/.pack ]
	head -1 .git/kopt/overview/.pack | grep -q '^git-kopt cache pack 1 '
	# no file of its own for any kernel
	[ "$(ls .git/kopt/overview | wc -l)" -eq 0 ]
	local ino
	ino=$(stat -c %i .git/kopt/overview/.pack)
	same git kopt analyze
	git kopt status >"$BATS_TEST_TMPDIR/status.out"
	diff -u "$BATS_TEST_TMPDIR/want-status.out" "$BATS_TEST_TMPDIR/status.out"
	# read, not written again
	[ "$(stat -c %i .git/kopt/overview/.pack)" = "$ino" ]
}

@test "a kernel changed after the pack: its own entry, the rest from the pack" {
	rm -rf .git/kopt
	git kopt analyze >/dev/null
	local ino
	ino=$(stat -c %i .git/kopt/overview/.pack)
	write_results a3 v1 v0 12.5 90
	KOPT_NO_CACHE=1 git kopt analyze >"$BATS_TEST_TMPDIR/want.out"
	grep -q '^| a3 ' "$BATS_TEST_TMPDIR/want.out"
	same git kopt analyze
	[ -s .git/kopt/overview/a3 ]
	[ "$(ls .git/kopt/overview | wc -l)" -eq 1 ]
	[ "$(stat -c %i .git/kopt/overview/.pack)" = "$ino" ]
	# and again, warm: the kernel's file and the pack together
	same git kopt analyze
}

@test "a damaged pack is read as no pack, and a new one replaces it" {
	rm -rf .git/kopt
	git kopt analyze >/dev/null
	# its last byte changed: that entry refused (its checksum), the rest read
	printf 'x' | dd of=.git/kopt/overview/.pack bs=1 conv=notrunc \
		seek=$(($(stat -c %s .git/kopt/overview/.pack) - 1)) 2>/dev/null
	same git kopt analyze
	# cut short: refused whole
	truncate -s 300 .git/kopt/overview/.pack
	same git kopt analyze
	same git kopt analyze
	head -1 .git/kopt/overview/.pack | grep -q '^git-kopt cache pack 1 '
	[ "$(stat -c %s .git/kopt/overview/.pack)" -gt 300 ]
}
