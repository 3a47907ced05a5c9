#!/usr/bin/env bats
# git kopt evaluate: the targets of .kopt against the best results.

load helper
load gate

setup() {
	setup_kernel_repo
}

@test "a target not met prints the gap and the way back to SELECT" {
	results mla-decode v1 v0 120.0 70.0
	run --separate-stderr git kopt evaluate mla-decode
	assert_failure 1
	assert_output "mla-decode: target not met
  spec-decode duration_us <= 60: not met; the best is v1 (duration_us = 70.00, 10.00 away, 16.7%)
next: back to SELECT: git kopt select mla-decode"
	[ -z "$stderr" ]
}

@test "a target met by any version exits 0 and names the fastest that meets it" {
	results mla-decode v1 v0 120.0 58.0
	results mla-decode v2 v1 120.0 55.0
	results mla-decode v3 v2 120.0 61.0
	run --separate-stderr git kopt evaluate mla-decode
	assert_success
	assert_output "mla-decode: target met
  spec-decode duration_us <= 60: met by v2 (duration_us = 55.00)
next: done: open the pull request with 'git kopt review'"
}

@test "every target must be met" {
	git config -f .kopt --add kernel.mla-decode.target "decode tflops >= 100"
	results mla-decode v1 v0 120.0 55.0
	run git kopt evaluate mla-decode
	assert_failure 1
	assert_line "  spec-decode duration_us <= 60: met by v1 (duration_us = 55.00)"
	assert_line "  decode tflops >= 100: not met; the best is v0 (tflops = 50.00, 50.00 away, 50.0%)"
}

@test "evaluate --json" {
	results mla-decode v1 v0 120.0 70.0
	run --separate-stderr git kopt evaluate mla-decode --json
	assert_failure 1
	assert_output --partial $'\t"met":\tfalse,'
	assert_output --partial $'\t"version":\t"v1",'
	assert_output --partial $'\t"gap":\t10,'
	assert_output --partial $'\t"next":\t"back to SELECT: git kopt select mla-decode"'
	[ "${output:0:1}" = "{" ] && [ "${output: -1}" = "}" ]
}

@test "a trial never measured is not met" {
	rm -r docs/kernels/mla-decode/results
	run git kopt evaluate mla-decode
	assert_failure 1
	assert_output "mla-decode: target not met
  spec-decode duration_us <= 60: not met: no version was measured on trial 'spec-decode'
next: measure the base version: git kopt profile mla-decode v0"
}

@test "a kernel without a target, an unknown kernel, a bad results file" {
	git config -f .kopt --unset kernel.mla-decode.target
	run --separate-stderr git kopt evaluate mla-decode
	assert_failure 128
	[[ "$stderr" == "fatal: mla-decode has no target; add 'target = <trial> <condition>'"* ]]
	git checkout -q .kopt
	run --separate-stderr git kopt evaluate nope
	assert_failure 128
	echo '{' >docs/kernels/mla-decode/results/v1.json
	run --separate-stderr git kopt evaluate mla-decode
	assert_failure 128
	[[ "$stderr" == "error: docs/kernels/mla-decode/results/v1.json:"* ]]
	run --separate-stderr git kopt evaluate
	assert_failure 129
}
