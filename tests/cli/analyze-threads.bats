#!/usr/bin/env bats
# analyze and status read the kernels on several threads (kopt.threads):
# what they print is what one thread prints, messages in kernel order.

load helper
load kopt-results

setup() {
	setup_repo
	setup_kernel
	write_devlog
	write_results mla-decode v0 null 95.1 140
	write_results mla-decode v1 v0 41.3 120
	# kernels with devlogs of every shape, some that only cmark reads
	add_corpus_kernels k 1
	git add -A
	git commit -q -m "kernels"
}

# <name> <command...>: stdout, stderr and status of a cold run with
# kopt.threads 1, then with 0 (one per CPU), 2 and 8, compared
same_as_one_thread() {
	local name=$1 t
	shift
	for t in 1 0 2 8; do
		git config kopt.threads $t
		rm -rf .git/kopt/analyze .git/kopt/overview
		"$@" >"$BATS_TEST_TMPDIR/$name.$t.out" \
			2>"$BATS_TEST_TMPDIR/$name.$t.err" &&
			echo 0 >"$BATS_TEST_TMPDIR/$name.$t.rc" ||
			echo $? >"$BATS_TEST_TMPDIR/$name.$t.rc"
	done
	git config --unset kopt.threads
	for t in 0 2 8; do
		diff -u "$BATS_TEST_TMPDIR/$name.1.out" \
			"$BATS_TEST_TMPDIR/$name.$t.out"
		diff -u "$BATS_TEST_TMPDIR/$name.1.err" \
			"$BATS_TEST_TMPDIR/$name.$t.err"
		diff -u "$BATS_TEST_TMPDIR/$name.1.rc" \
			"$BATS_TEST_TMPDIR/$name.$t.rc"
	done
}

@test "analyze and status print what one thread prints" {
	for round in 1 2 3; do
		same_as_one_thread analyze git kopt analyze
		same_as_one_thread status git kopt status
		same_as_one_thread json git kopt status --json
	done
	# the runs compared real tables, not empty ones
	grep -q '^| k12 ' "$BATS_TEST_TMPDIR/analyze.8.out"
	[ "$(grep -c '^| k[0-9]' "$BATS_TEST_TMPDIR/analyze.8.out")" -ge 10 ]
}

@test "several broken kernels: their messages in kernel order" {
	sed -i '3s/.*/{ broken/' docs/kernels/k2/results/v1.json
	sed -i 's/"duration_us": 33,/"duration_us": "fast",/' \
		docs/kernels/k3/results/v1.json
	sed -i '3s/.*/{ broken/' docs/kernels/k7/results/v0.json
	same_as_one_thread analyze git kopt analyze
	same_as_one_thread status git kopt status
	git config kopt.threads 8
	rm -rf .git/kopt/analyze .git/kopt/overview
	run --separate-stderr git kopt analyze
	assert_failure 128
	assert_equal "$stderr" "\
error: docs/kernels/k2/results/v1.json:3:4: not valid JSON
error: docs/kernels/k3/results/v1.json: entries[0].metrics.duration_us: expected a number, found a string
error: docs/kernels/k7/results/v0.json:3:4: not valid JSON
fatal: cannot analyze the kernels"
	# nothing of a broken kernel is kept; the others are
	[ ! -e .git/kopt/overview/k2 ] && [ -e .git/kopt/overview/k1 ]
	run --separate-stderr git kopt status
	assert_success
	assert_line --regexp '^k2 .* error .*fix the devlog or results of k2'
}

@test "analyze --json: a broken kernel after readable ones leaves no output" {
	run git kopt analyze --json
	assert_success
	assert_output --partial '"kernel":	"k7"'
	# the kernels before k7 come from the cache, k7 cannot be read
	sed -i '3s/.*/{ broken/' docs/kernels/k7/results/v0.json
	run --separate-stderr git kopt analyze --json
	assert_failure 128
	assert_output ""
	assert_equal "$stderr" "\
error: docs/kernels/k7/results/v0.json:3:4: not valid JSON
fatal: cannot analyze the kernels"
}

@test "kopt.threads takes a number of threads" {
	git config kopt.threads many
	run --separate-stderr git kopt analyze
	assert_failure 128
	[ "${stderr_lines[0]}" = "error: git config: bad value 'many' for 'kopt.threads' (expected 0 to 64 threads)" ]
	git config kopt.threads 65
	run --separate-stderr git kopt analyze
	assert_failure 128
	git config kopt.threads 3
	run --separate-stderr git kopt analyze
	assert_success
}
