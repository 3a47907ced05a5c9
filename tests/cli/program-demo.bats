#!/usr/bin/env bats
# make demo (tools/demo) runs to the end in a scratch directory.

load helper

setup() {
	setup_repo
}

@test "tools/demo lays the workflow, adds the example kernel and commits" {
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	mkdir -p "$TMPDIR"
	run --separate-stderr "$TOP/tools/demo"
	assert_success
	assert_line "added kernel 'mla-decode' to .kopt"
	assert_line "created: docs/kernels/mla-decode.md"
	repo=$(ls -d "$TMPDIR"/kopt-demo.*/mla-decode)
	assert_line "The repository is in $repo"
	[ "$(git -C "$repo" rev-list --count HEAD)" -eq 1 ]
	[ -z "$(git -C "$repo" status --porcelain)" ]
	[ "$(git -C "$repo" config -f .kopt kernel.mla-decode.target)" = "spec-decode duration_us <= 1100" ]
}
