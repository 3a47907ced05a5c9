#!/usr/bin/env bats
# git kopt status: the step each kernel has reached, derived from the
# repository, and what to run next.

load helper
load gate

setup() {
	setup_kernel_repo
	install_hooks
}

@test "status walks through the cycle" {
	run git kopt status
	assert_success
	assert_output "mla-decode       v0     evaluate  -            measured     next: back to SELECT: git kopt select mla-decode"

	git kopt design mla-decode --title "Wide tiles" >/dev/null 2>&1
	run git kopt status
	assert_output "mla-decode       v1     design    -            -            next: implement v1, then git kopt verify mla-decode v1"

	results mla-decode v1 v0 120.0 70.0
	run git kopt status
	assert_output "mla-decode       v1     verify    regression   measured     next: git kopt learn new anti-pattern wide-tiles --from mla-decode/v1, then commit docs/kernels/mla-decode/results/v1.json with it"

	add_anti_pattern wide-tiles
	git add -A
	git commit -q -m "Verify mla-decode v1"
	run git kopt status
	assert_output "mla-decode       v1     evaluate  regression   measured     next: back to SELECT: git kopt select mla-decode"

	git kopt design mla-decode --from v0 --title "Split KV" >/dev/null 2>&1
	results mla-decode v2 v0 90.0 55.0
	mkdir -p docs/kernels/mla-decode/tasks
	printf '## Optimization Task: mla-decode v0 -> v2\n1. [split-kv](../../../knowledge/optimizations/split-kv.md)\n' \
		>docs/kernels/mla-decode/tasks/v2.md
	git add -A
	git commit -q -m "Verify mla-decode v2" -m "Kopt-Kernel: mla-decode
Kopt-Version: v2
Kopt-Step: verify
Kopt-Verdict: improvement"
	run git kopt status
	assert_output "mla-decode       v2     done      improvement  measured     next: git kopt review (the target is met)"
}

@test "status of a kernel without versions, and the skip trailer" {
	git config -f .kopt kernel.other.language cuda-c
	git config -f .kopt kernel.other.source "kernels/other/{version}"
	git config -f .kopt kernel.other.run "true"
	git checkout -q -b kopt/mla-decode/v1
	add_version v1 "Wide tiles"
	results mla-decode v1 v0 120.0 210.0
	git add -A
	git commit -q -m "Verify" -m "Kopt-Kernel: mla-decode
Kopt-Version: v1
Kopt-Learn: skip throttled"
	run git kopt status
	assert_output "mla-decode       v1     evaluate  regression   measured     next: back to SELECT: git kopt select mla-decode
                 LEARN skipped: throttled
other            -      none      -            -            next: commit the base version v0 under 'kernels/other/v0'"
}

@test "status --json" {
	run --separate-stderr git kopt status --json
	assert_success
	assert_output '[{
		"kernel":	"mla-decode",
		"version":	"v0",
		"step":	"evaluate",
		"verdict":	null,
		"source":	"measured",
		"disagreements":	0,
		"committed":	true,
		"target_met":	false,
		"learned":	false,
		"next":	"back to SELECT: git kopt select mla-decode"
	}]'
}

@test "status derives, it stores nothing" {
	git kopt status >/dev/null
	run git status --porcelain --ignored
	assert_output ""
	run git kopt status extra
	assert_failure 129
}

@test "status reads the trailers of new commits only, and again after a rewrite" {
	git checkout -q -b kopt/mla-decode/v1
	add_version v1 "Wide tiles"
	results mla-decode v1 v0 120.0 210.0
	git add -A
	git commit -q -m "Verify" -m "Kopt-Kernel: mla-decode
Kopt-Version: v1
Kopt-Learn: skip throttled"
	run git kopt status
	assert_line "                 LEARN skipped: throttled"
	test -f .git/kopt/history/trailers

	# a newer commit: its trailer comes first
	git commit -q --allow-empty -m "Again" -m "Kopt-Kernel: mla-decode
Kopt-Version: v1
Kopt-Learn: skip no device"
	run git kopt status
	assert_line "                 LEARN skipped: no device"

	# rewritten: the amended trailer is gone, the older one is back
	git commit -q --amend --allow-empty -m "Again, without a trailer"
	run git kopt status
	assert_line "                 LEARN skipped: throttled"

	# back before both: nothing skipped
	git reset -q --hard HEAD~2
	run git kopt status
	refute_line --partial "LEARN skipped"

	# a damaged cache reads as none
	printf 'damaged\n' >.git/kopt/history/trailers
	git reset -q --hard ORIG_HEAD
	run git kopt status
	assert_line "                 LEARN skipped: throttled"
}

@test "status: the newest version is the highest number with a folder in the work tree" {
	for n in 1 2 3 4 5 6 7 8 9 10; do
		add_version "v$n" "Try $n"
	done
	run git kopt status
	assert_success
	[[ "$output" == "mla-decode       v10 "* ]]
	# its folder gone from the work tree: the one below it
	rm -r kernels/mla_decode/v10
	run git kopt status
	assert_success
	[[ "$output" == "mla-decode       v9 "* ]]
	rm -r kernels/mla_decode/v9 kernels/mla_decode/v8
	run git kopt status
	[[ "$output" == "mla-decode       v7 "* ]]
}
