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

# the overview's entry: what analyze of every kernel reads and keeps
inode() {
	stat -c %i ".git/kopt/overview/$1"
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
	printf 'git-kopt cache 4 x\n' >.git/kopt/analyze/mla-decode
	run --separate-stderr git kopt analyze mla-decode
	assert_success
	assert_output "$(cat first.out)"
	head -1 .git/kopt/analyze/mla-decode | grep -q '^git-kopt cache 4 '
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

# The views that show every kernel read each kernel's overview from
# .git/kopt/overview; what they print is what they print without it.
same_as_uncached() {
	run --separate-stderr git kopt "$@"
	local cached=$output cached_err=$stderr cached_status=$status
	run --separate-stderr env KOPT_NO_CACHE=1 git kopt "$@"
	[ "$status" -eq "$cached_status" ]
	assert_equal "$cached" "$output"
	assert_equal "$cached_err" "$stderr"
	output=$cached
}

@test "the overview follows a new version, an edited devlog, an amend and a deleted kernel" {
	git kopt analyze >/dev/null
	git kopt status >/dev/null
	[ -s .git/kopt/overview/mla-decode ] && [ -s .git/kopt/overview/gemm ]
	g=$(stat -c %i .git/kopt/overview/gemm)

	write_results mla-decode v2 v1 30 100
	same_as_uncached analyze
	assert_line --partial "| mla-decode | 3        | v2     | decode v2 30.00 μs; spec-decode v2 100.00 μs"
	same_as_uncached status
	assert_line --partial "mla-decode       v2     verify"
	[ "$(stat -c %i .git/kopt/overview/gemm)" = "$g" ]

	# a devlog entry of its own makes a version
	printf '\n### v3: more stages\n\n**What changed**: nothing yet\n' \
		>>docs/kernels/mla-decode.md
	same_as_uncached analyze
	assert_line --partial "| mla-decode | 4        | v3     |"

	git add -A
	git commit -q --no-verify -m "v2 and v3"
	same_as_uncached status
	write_results mla-decode v2 v1 20 50
	git commit -q --no-verify -a --amend -m "v2 and v3, remeasured"
	same_as_uncached analyze
	assert_line --partial "| mla-decode | 4        | v3     | decode v2 20.00 μs; spec-decode v2 50.00 μs | met"
	same_as_uncached status
	assert_line --partial "mla-decode       v2     done"
	same_as_uncached evaluate mla-decode
	assert_line "mla-decode: target met"

	# a kernel whose files are gone has no versions
	rm -r docs/kernels/gemm
	same_as_uncached analyze
	assert_line --partial "| gemm       | 0        | --     | --"
	git config -f .kopt --remove-section kernel.gemm
	same_as_uncached analyze
	refute_line --partial "| gemm"
}

@test "a changed target is evaluated again, the files not read again" {
	git kopt analyze >/dev/null
	# the first read of every kernel keeps the overviews only
	[ ! -e .git/kopt/analyze/mla-decode ]
	git kopt analyze mla-decode >/dev/null
	a=$(stat -c %i .git/kopt/analyze/mla-decode)
	o=$(stat -c %i .git/kopt/overview/mla-decode)
	git config -f .kopt kernel.mla-decode.target 'spec-decode duration_us <= 150'
	same_as_uncached analyze
	assert_line --partial "| mla-decode | 2        | v1     | decode v1 41.30 μs; spec-decode v1 120.00 μs | met "
	same_as_uncached evaluate mla-decode
	assert_line "mla-decode: target met"
	[ "$(stat -c %i .git/kopt/analyze/mla-decode)" = "$a" ]
	[ "$(stat -c %i .git/kopt/overview/mla-decode)" != "$o" ]
}

@test "an obligation closes when it is recorded, with the overview kept" {
	write_results mla-decode v2 v1 50 110
	same_as_uncached analyze
	assert_line --partial "| not met (spec-decode 83.3% above) | 1 open |"
	o=$(stat -c %i .git/kopt/overview/mla-decode)
	mkdir -p docs/knowledge/anti-patterns
	printf '# Over-splitting\n\nSource: mla-decode/v2\n' \
		>docs/knowledge/anti-patterns/over-splitting.md
	same_as_uncached analyze
	assert_line --partial "| not met (spec-decode 83.3% above) | 0 open |"
	[ "$(stat -c %i .git/kopt/overview/mla-decode)" = "$o" ]
}

@test "a damaged overview is read past and written again" {
	git kopt analyze >first.out
	printf 'git-kopt cache 4 x\n' >.git/kopt/overview/mla-decode
	run --separate-stderr git kopt analyze
	assert_success
	assert_output "$(cat first.out)"
	head -1 .git/kopt/overview/mla-decode | grep -q '^git-kopt cache 4 '
	rm first.out
}

@test "a committed results file deleted, then restored, in the work tree is seen" {
	git status --porcelain >/dev/null      # a clean index, cache-tree whole
	git kopt analyze >first.out
	rm docs/kernels/mla-decode/results/v1.json
	same_as_uncached analyze
	[ "$output" != "$(cat first.out)" ]
	git checkout -q -- docs
	same_as_uncached analyze
	assert_output "$(cat first.out)"
	rm first.out
}

@test "seventy versions read many at a time: what one at a time reads" {
	local i
	write_results mla-decode v1 v0 90 130
	for i in $(seq 2 69); do
		write_results mla-decode "v$i" "v$((i - 1))" "$((90 - i % 7)).5" "$((130 + i % 5))"
	done
	KOPT_NO_URING=1 KOPT_NO_CACHE=1 git kopt analyze >one.txt
	KOPT_NO_URING=1 KOPT_NO_CACHE=1 git kopt analyze mla-decode --json >one.json
	KOPT_NO_CACHE=1 git kopt analyze >many.txt
	KOPT_NO_CACHE=1 git kopt analyze mla-decode --json >many.json
	grep -q '| mla-decode | 70 ' many.txt
	cmp one.txt many.txt
	cmp one.json many.json
	# through the cache, filled by either
	git kopt analyze >cold.txt
	cmp one.txt cold.txt
	KOPT_NO_URING=1 git kopt analyze >warm.txt
	cmp one.txt warm.txt
}
