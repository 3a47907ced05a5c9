#!/usr/bin/env bats
# The hooks read the index git is about to commit straight from its file
# (lib/index) and skip the folders whose cache-tree ids match HEAD's
# (lib/changes): what is staged now is judged, whatever the index's
# version, with its cache-tree whole, invalidated by a later add, or
# missing.

load helper
load gate

setup() {
	setup_kernel_repo
	install_hooks
	git checkout -q -b kopt/mla-decode/v1
	add_version v1 "Wide tiles"
}

@test "a change staged again is judged as it is staged now, both ways" {
	results mla-decode v1 v0 101.0 201.0
	git add -A
	printf 'Verify mla-decode v1\n' >"$BATS_TEST_TMPDIR/msg"
	run git kopt hook commit-msg "$BATS_TEST_TMPDIR/msg"
	assert_success
	# the same file, now a regression: the cache-tree of its folder
	# was invalidated by the add
	results mla-decode v1 v0 120.0 210.0
	git add docs/kernels/mla-decode/results/v1.json
	run --separate-stderr git kopt hook commit-msg "$BATS_TEST_TMPDIR/msg"
	assert_failure 1
	[[ "$stderr" == "error: mla-decode v1 is a regression against v0"* ]]
	# and back inside the noise
	results mla-decode v1 v0 101.0 201.0
	git add docs/kernels/mla-decode/results/v1.json
	run git kopt hook commit-msg "$BATS_TEST_TMPDIR/msg"
	assert_success
}

@test "a change already committed on another branch is compared with HEAD, not with the cache-tree" {
	# HEAD moves under an index whose cache-tree is whole
	results mla-decode v1 v0 120.0 210.0
	git add -A
	git commit -q --no-verify -m "Verify mla-decode v1"
	git reset -q --soft HEAD~1
	run --separate-stderr git commit -q -m "Verify mla-decode v1"
	assert_failure 1
	[[ "$stderr" == "error: mla-decode v1 is a regression against v0"* ]]
}

@test "an index of version 4 is read" {
	git update-index --index-version 4
	results mla-decode v1 v0 120.0 210.0
	git add -A
	run --separate-stderr git commit -q -m "Verify mla-decode v1"
	assert_failure 1
	[[ "$stderr" == "error: mla-decode v1 is a regression against v0"* ]]
	results mla-decode v1 v0 101.0 201.0
	git add -A
	run git commit -q -m "Verify mla-decode v1"
	assert_success
}

@test "an index without its cache-tree is compared entry by entry" {
	results mla-decode v1 v0 120.0 210.0
	git add -A
	git ls-files -s >"$BATS_TEST_TMPDIR/entries"
	rm .git/index
	git update-index --index-info <"$BATS_TEST_TMPDIR/entries"
	run --separate-stderr git kopt hook commit-msg /dev/null
	assert_failure 1
	[[ "$stderr" == "error: mla-decode v1 is a regression against v0"* ]]
}

@test "a split index is refused with the way out" {
	results mla-decode v1 v0 101.0 201.0
	git add -A
	git update-index --split-index
	run --separate-stderr git kopt hook pre-commit
	assert_failure 128
	assert_output ""
	[ "$stderr" = "error: cannot read the index '$PWD/.git/index': it is split; run 'git update-index --no-split-index'" ]
	git update-index --no-split-index
	run git kopt hook pre-commit
	assert_success
}
