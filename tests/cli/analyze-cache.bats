#!/usr/bin/env bats
# The per-kernel cache of analyze, status and evaluate in .git/kopt/analyze.

load helper
load kopt-results

setup() {
	setup_repo
	setup_kernel
	git kopt kernel add gemm --language cuda-c --source 'k/{version}' \
		--run 'true' >/dev/null
	write_devlog
	write_results mla-decode v0 null 95.1 140
	write_results mla-decode v1 v0 41.3 120
	write_results gemm v0 null 10 20
	git add -A
	git commit -q -m "kernels"
}

inode() {
	stat -c %i ".git/kopt/analyze/$1"
}

@test "one changed file reads its kernel again, and only it" {
	git kopt analyze >first.out
	a=$(inode mla-decode) g=$(inode gemm)
	run --separate-stderr git kopt analyze
	assert_output "$(cat first.out)"
	[ "$(inode mla-decode)" = "$a" ] && [ "$(inode gemm)" = "$g" ]
	write_results gemm v0 null 12 20
	run --separate-stderr git kopt analyze
	assert_success
	assert_line --partial "| gemm       | 1        | v0     | decode v0 12.00 μs"
	[ "$(inode mla-decode)" = "$a" ] && [ "$(inode gemm)" != "$g" ]
	run --separate-stderr env KOPT_NO_CACHE=1 git kopt analyze
	assert_output "$(git kopt analyze)"
	rm first.out
}

@test "a checkout that rewrites the files keeps the cache" {
	git kopt analyze >/dev/null
	a=$(inode mla-decode)
	rm -r docs/kernels
	git checkout -q -- docs
	git status --porcelain >/dev/null    # refreshes the index
	git kopt analyze >/dev/null
	[ "$(inode mla-decode)" = "$a" ]
}

@test "edits that are not committed are seen, staged or not" {
	git kopt analyze mla-decode >/dev/null
	sed -i 's/"duration_us": 41.3,/"duration_us": 41.9,/' \
		docs/kernels/mla-decode/results/v1.json
	run --separate-stderr git kopt analyze mla-decode
	assert_line --partial "| v1      | Split-KV | v0     | 41.90 μs"
	git add docs
	sed -i 's/"duration_us": 41.9,/"duration_us": 41.3,/' \
		docs/kernels/mla-decode/results/v1.json
	run --separate-stderr git kopt analyze mla-decode
	assert_line --partial "| v1      | Split-KV | v0     | 41.30 μs"
	run --separate-stderr git kopt evaluate mla-decode
	assert_line --partial "not met; the best is v1"
}

@test "a damaged cache file is read past and written again" {
	git kopt analyze mla-decode >first.out
	printf 'git-kopt cache 3 x\n' >.git/kopt/analyze/mla-decode
	run --separate-stderr git kopt analyze mla-decode
	assert_success
	assert_output "$(cat first.out)"
	head -1 .git/kopt/analyze/mla-decode | grep -q '^git-kopt cache 3 '
	[ "$(sed -n 3p .git/kopt/analyze/mla-decode)" -gt 0 ]
	rm first.out
}

@test "a results file that does not parse is reported on every run" {
	echo '{"schema": 1,' >docs/kernels/gemm/results/v1.json
	for i in 1 2; do
		run --separate-stderr git kopt analyze gemm
		assert_failure 128
		[[ "$stderr" == *"docs/kernels/gemm/results/v1.json"* ]]
	done
	[ ! -e .git/kopt/analyze/gemm ]
}
