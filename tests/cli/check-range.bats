#!/usr/bin/env bats
# git kopt check: the hooks' rules over committed history, and the
# pre-push hook that runs them over the commits being pushed.

load helper
load gate

setup() {
	setup_kernel_repo
	install_hooks
	git checkout -q -b kopt/mla-decode/v1
	add_version v1 "Wide tiles"
}

# A scripted history: one good commit, one made with --no-verify.
script_history() {
	results mla-decode v1 v0 101.0 201.0
	git add -A
	git commit -q -m "Verify mla-decode v1"
	results mla-decode v1 v0 120.0 210.0
	git add -A
	git commit -q --no-verify -m "Remeasure mla-decode v1"
	echo "// later" >>kernels/mla_decode/v1/mla_decode.cu
	git add -A
	git commit -q -m "Tidy"
}

@test "check catches a commit made with --no-verify" {
	script_history
	bad=$(git rev-parse --short HEAD~1)
	run --separate-stderr git kopt check main..HEAD
	assert_failure 1
	assert_output "$bad regression mla-decode v1 is a regression against v0 (decode: 100.00 us -> 120.00 us, +20.0% beyond the 3.0% threshold; spec-decode: 200.00 us -> 210.00 us, +5.0% beyond the 3.0% threshold) and no anti-pattern file with its catalog row is staged; fix: git kopt learn new anti-pattern wide-tiles --from mla-decode/v1"
	[ -z "$stderr" ]
}

@test "check defaults to the commits since the default branch" {
	script_history
	run git kopt check
	assert_failure 1
	assert_output --partial " regression mla-decode v1 is a regression"
	# on the default branch itself there is nothing to check
	git checkout -q main
	run --separate-stderr git kopt check
	assert_success
	assert_output ""
}

@test "check prefers the upstream of the branch" {
	script_history
	git branch -q up HEAD~2
	git branch -q --set-upstream-to=up
	run git kopt check
	assert_failure 1
	git branch -q up2 HEAD
	git branch -q --set-upstream-to=up2
	run git kopt check
	assert_success
}

@test "check accepts a history that follows the rules, and reports skips" {
	results mla-decode v1 v0 120.0 210.0
	git add -A
	git commit -q -m "Verify mla-decode v1" -m "Kopt-Learn: skip throttled GPU"
	id=$(git rev-parse --short HEAD)
	run --separate-stderr git kopt check main..HEAD
	assert_success
	assert_output "$id learn-skip throttled GPU"
}

@test "check reads thresholds from the base revision" {
	git config -f .kopt kopt.noise 50%
	git add .kopt
	git commit -q --no-verify -m "Loosen the gate"
	results mla-decode v1 v0 120.0 210.0
	git add -A
	git commit -q --no-verify -m "Verify mla-decode v1"
	run git kopt check main..HEAD
	assert_failure 1
	assert_output --partial "beyond the 3.0% threshold"
	# the same commits judged from a base that has the loose setting
	run git kopt check HEAD~1..HEAD
	assert_success
}

@test "check reports malformed trailers and broken content of each commit" {
	git commit -q --allow-empty --no-verify -m "x" -m "Kopt-Step: deploy"
	printf '# broken\n' >docs/knowledge/optimizations/broken.md
	git add -A
	git commit -q --no-verify -m "Add a broken file"
	run git kopt check main..HEAD
	assert_failure 1
	assert_line --index 0 --regexp "^[0-9a-f]+ trailer 'Kopt-Step: deploy' is not a step \(design, verify or learn\); fix the message: trailers are 'Kopt-<Key>: <value>' lines in its last paragraph$"
	assert_line --index 1 --regexp "^[0-9a-f]+ knowledge docs/knowledge/optimizations/broken.md:1: missing section '## When to Apply'; edit docs/knowledge/optimizations/broken.md where it says \('git kopt learn lint' lists every problem\)$"
	assert_line --regexp "^[0-9a-f]+ catalog docs/knowledge/optimizations/broken.md has no row in the optimization index of the catalog; fix: git kopt learn new optimization broken$"
}

@test "check takes A...B and a single revision" {
	script_history
	run git kopt check main...HEAD
	assert_failure 1
	run git kopt check main
	assert_failure 1
	run git kopt check HEAD
	assert_success
	assert_output ""
}

@test "check refuses a bad range and extra arguments" {
	run --separate-stderr git kopt check nosuch..HEAD
	assert_failure 128
	[[ "$stderr" == "fatal: bad range 'nosuch..HEAD'"* ]]
	run --separate-stderr git kopt check a b
	assert_failure 129
}

@test "check in a repository with no commits says so" {
	rm -rf .git
	git init -q
	run --separate-stderr git kopt check
	assert_failure 128
	[ "$stderr" = "fatal: nothing to check: the repository has no commits" ]
}

@test "pre-push refuses commits that break the rules, and lets the rest go" {
	git init -q --bare "$BATS_TEST_TMPDIR/remote.git"
	git remote add origin "$BATS_TEST_TMPDIR/remote.git"
	git push -q origin main 2>/dev/null
	script_history
	run --separate-stderr git push -q origin HEAD
	assert_failure 1
	[[ "$stderr" == *" regression mla-decode v1 is a regression against v0"* ]]
	[[ "$stderr" == *"error: push refused by the kopt gate (1 problem)"* ]]
	run git ls-remote --heads origin kopt/mla-decode/v1
	assert_output ""
	# a branch without the bad commit goes
	git push -q origin HEAD~2:refs/heads/good
	run git ls-remote --heads origin good
	assert_output --partial "refs/heads/good"
}

@test "pre-push lets deletions through" {
	git init -q --bare "$BATS_TEST_TMPDIR/remote.git"
	git remote add origin "$BATS_TEST_TMPDIR/remote.git"
	git push -q origin main kopt/mla-decode/v1 2>/dev/null
	run git push -q origin :kopt/mla-decode/v1
	assert_success
}
