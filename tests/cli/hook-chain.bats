#!/usr/bin/env bats
# The gate behind the hooks 'git kopt init' installs: a hook that was
# there before keeps running, and the gate still refuses.

load helper
load gate

setup() {
	setup_repo
	cat >.git/hooks/pre-commit <<-'SH'
	#!/bin/sh
	echo "old hook ran" >>"$OLD_HOOK_LOG"
	test ! -e "$OLD_HOOK_REFUSES"
	SH
	chmod +x .git/hooks/pre-commit
	export OLD_HOOK_LOG="$BATS_TEST_TMPDIR/old.log"
	export OLD_HOOK_REFUSES="$BATS_TEST_TMPDIR/refuse"
	git kopt init -q
	git kopt kernel add mla-decode --language cuda-c \
		--source 'kernels/mla_decode/{version}' \
		--run 'kernels/mla_decode/build/{version}/bench --b {b} --s {s} --t {t}' \
		--target 'spec-decode duration_us <= 60' >/dev/null
	mkdir -p kernels/mla_decode/v0
	echo "// v0" >kernels/mla_decode/v0/mla_decode.cu
	results mla-decode v0 null 100.0 200.0
	git add -A
	git commit -q -m "Lay down the workflow"
	git checkout -q -b kopt/mla-decode/v1
	add_version v1 "Wide tiles"
	: >"$OLD_HOOK_LOG"
}

@test "the old hook runs first, then the gate refuses a regression" {
	[ -x .git/hooks/pre-commit.pre-kopt ]
	results mla-decode v1 v0 120.0 210.0
	git add -A
	run --separate-stderr git commit -q -m "Verify mla-decode v1"
	assert_failure 1
	[ "$(cat "$OLD_HOOK_LOG")" = "old hook ran" ]
	[[ "$stderr" == "error: mla-decode v1 is a regression against v0"* ]]
}

@test "the old hook's refusal stops the commit before the gate" {
	touch "$OLD_HOOK_REFUSES"
	echo "// tweak" >>kernels/mla_decode/v1/mla_decode.cu
	git add -A
	run --separate-stderr git commit -q -m "Tweak"
	assert_failure 1
	[ "$(cat "$OLD_HOOK_LOG")" = "old hook ran" ]
	[ -z "$stderr" ]
}

@test "the hooks init installs pass an ordinary commit" {
	echo "// tweak" >>kernels/mla_decode/v1/mla_decode.cu
	git add -A
	run --separate-stderr git commit -q -m "Tweak"
	assert_success
	[ "$(cat "$OLD_HOOK_LOG")" = "old hook ran" ]
}
