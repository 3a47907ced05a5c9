#!/usr/bin/env bats
# The program itself: the step list, usage, exit codes.

load helper

setup() {
	setup_repo
}

@test "git kopt with no step lists the steps and exits 1" {
	run --separate-stderr git kopt
	assert_failure 1
	assert_line --partial "usage: git kopt"
	assert_line --regexp '^   hook +run the checks'
}

@test "git kopt -h lists the steps and exits 0" {
	run --separate-stderr git kopt -h
	assert_success
	assert_line --partial "usage: git kopt"
}

@test "an unknown step exits 129 and says so on stderr" {
	run --separate-stderr git kopt frobnicate
	assert_failure 129
	assert_output ""
	[ "$stderr" = "git kopt: 'frobnicate' is not a kopt step. See 'git kopt -h'." ]
}

@test "a step's -h prints usage on stdout and exits 0, even outside a repository" {
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr git kopt hook -h
	assert_success
	assert_line --index 0 --partial "usage: git kopt hook"
	[ -z "$stderr" ]
}

@test "a bad option exits 129 with usage on stderr" {
	run --separate-stderr git kopt hook --bogus
	assert_failure 129
	assert_output ""
	[[ "$stderr" == "error: unknown option '--bogus'"* ]]
	[[ "$stderr" == *"usage: git kopt hook"* ]]
}

@test "a step that needs a repository says so outside one (exit 128)" {
	mkdir "$BATS_TEST_TMPDIR/norepo"
	cd "$BATS_TEST_TMPDIR/norepo"
	export GIT_CEILING_DIRECTORIES="$BATS_TEST_TMPDIR"
	run --separate-stderr git kopt hook pre-commit
	assert_failure 128
	[ "$stderr" = "fatal: not a git repository (or any of the parent directories)" ]
}

@test "--version prints the version" {
	run git kopt --version
	assert_success
	assert_output --regexp '^git-kopt version [0-9]+\.[0-9]+'
}
