#!/usr/bin/env bats
# git kopt analyze on bad input: file and line, exit 128, nothing written.

load helper
load kopt-results

setup() {
	setup_repo
	setup_kernel
	write_devlog
	write_results mla-decode v0 null 95.1 140
}

@test "results that are not JSON: file, line and column" {
	printf '{\n  "schema": 1,\n  "kernel" "mla-decode"\n}\n' \
		>docs/kernels/mla-decode/results/v1.json
	run --separate-stderr git kopt analyze mla-decode
	assert_failure 128
	assert_output ""
	[ "$stderr" = "error: docs/kernels/mla-decode/results/v1.json:3:12: not valid JSON
fatal: cannot analyze 'mla-decode'" ]
}

@test "results of another kernel or schema: the field named" {
	write_results gemm v1 v0 1 2
	mv docs/kernels/gemm/results/v1.json docs/kernels/mla-decode/results/
	sed -i 's/"schema": 1/"schema": 1.5/' docs/kernels/mla-decode/results/v0.json
	run --separate-stderr git kopt analyze mla-decode
	assert_failure 128
	[ "$stderr" = "error: docs/kernels/mla-decode/results/v0.json: schema: version 1.5 is not supported (this git-kopt reads schema 1)
error: docs/kernels/mla-decode/results/v1.json: kernel: names kernel 'gemm', but the file belongs to kernel 'mla-decode'
fatal: cannot analyze 'mla-decode'" ]
}

@test "a field of the wrong type: its JSON path" {
	sed -i 's/"duration_us": 95.1/"duration_us": "95.1"/' \
		docs/kernels/mla-decode/results/v0.json
	run --separate-stderr git kopt analyze mla-decode
	assert_failure 128
	[ "${stderr_lines[0]}" = "error: docs/kernels/mla-decode/results/v0.json: entries[0].metrics.duration_us: expected a number, found a string" ]
}

@test "a version heading twice: both lines named" {
	printf '\n### v1 - again\n' >>docs/kernels/mla-decode.md
	run --separate-stderr git kopt analyze mla-decode
	assert_failure 128
	[ "$stderr" = "error: docs/kernels/mla-decode.md:92: version 'v1' has a second heading (the first is at line 63)
fatal: cannot analyze 'mla-decode'" ]
}

@test "an empty devlog is refused" {
	: >docs/kernels/mla-decode.md
	run --separate-stderr git kopt analyze
	assert_failure 128
	[ "$stderr" = "error: docs/kernels/mla-decode.md:1: the devlog is empty
fatal: cannot analyze the kernels" ]
}

@test "analyze touches no file" {
	git add -A
	git commit -q -m base
	git kopt analyze mla-decode >/dev/null
	git kopt analyze --json >/dev/null
	run git status --porcelain
	assert_output ""
}

@test "an unknown kernel, too many arguments" {
	run --separate-stderr git kopt analyze nope
	assert_failure 128
	[ "$stderr" = "fatal: unknown kernel 'nope' (known: mla-decode)" ]
	run --separate-stderr git kopt analyze a b
	assert_failure 129
}

@test "a missing devlog or no results is not an error" {
	rm docs/kernels/mla-decode.md
	rm -r docs/kernels/mla-decode/results
	run --separate-stderr git kopt analyze mla-decode
	assert_success
	assert_output --partial "No versions yet"
}

@test "a results file that cannot be read: its path and the reason, read at once or one at a time" {
	write_results mla-decode v1 v0 90.2 130
	mkdir docs/kernels/mla-decode/results/v2.json
	run --separate-stderr git kopt analyze mla-decode
	assert_failure 128
	assert_output ""
	[ "$stderr" = "error: cannot read 'docs/kernels/mla-decode/results/v2.json': Is a directory
fatal: cannot analyze 'mla-decode'" ]
	want=$stderr
	KOPT_NO_URING=1 run --separate-stderr git kopt analyze mla-decode
	assert_failure 128
	[ "$stderr" = "$want" ]
	[ ! -e .git/kopt/analyze ]
}
