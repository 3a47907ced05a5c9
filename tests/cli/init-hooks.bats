#!/usr/bin/env bats
# git kopt init: the hooks, where git looks for them, and chaining.

load helper

setup() {
	setup_repo
}

@test "a commit in an initialised repository runs the installed hooks" {
	git kopt init -q
	git add -A
	trace_kopt
	git commit -q -m "Start"
	grep -qx 'git-kopt hook pre-commit' "$BATS_TEST_TMPDIR/trace"
	grep -qx 'git-kopt hook commit-msg .git/COMMIT_EDITMSG' "$BATS_TEST_TMPDIR/trace"
}

@test "an existing hook is chained: it runs first, and its failure stops the commit" {
	cat >.git/hooks/pre-commit <<'SH'
#!/bin/sh
echo "old hook ran" >>"$OLD_HOOK_LOG"
test ! -e refuse
SH
	chmod +x .git/hooks/pre-commit
	cp .git/hooks/pre-commit "$BATS_TEST_TMPDIR/old"
	run --separate-stderr git kopt init
	assert_success
	assert_line "chained: .git/hooks/pre-commit (the hook that was there runs first, as pre-commit.pre-kopt)"
	assert_line "installed: .git/hooks/commit-msg"
	cmp "$BATS_TEST_TMPDIR/old" .git/hooks/pre-commit.pre-kopt
	cmp "$TOP/hooks/pre-commit" .git/hooks/pre-commit

	export OLD_HOOK_LOG="$BATS_TEST_TMPDIR/log"
	git add -A
	trace_kopt
	git commit -q -m "Start"
	[ "$(cat "$OLD_HOOK_LOG")" = "old hook ran" ]
	grep -qx 'git-kopt hook pre-commit' "$BATS_TEST_TMPDIR/trace"

	touch refuse
	echo x >x && git add x
	run git commit -q -m "Refused"
	assert_failure
	[ "$(git rev-list --count HEAD)" -eq 1 ]

	run --separate-stderr git kopt init
	assert_success
	assert_output "already initialised: nothing to do"
}

@test "a chained pre-push hook and ours both read the pushed refs" {
	git init -q --bare "$BATS_TEST_TMPDIR/remote.git"
	git remote add origin "$BATS_TEST_TMPDIR/remote.git"
	cat >.git/hooks/pre-push <<'SH'
#!/bin/sh
cat >"$OLD_HOOK_LOG"
SH
	chmod +x .git/hooks/pre-push
	git kopt init -q
	git add -A
	git commit -q -m "Start"
	export OLD_HOOK_LOG="$BATS_TEST_TMPDIR/log"
	GIT_TRACE="$BATS_TEST_TMPDIR/trace" git push -q origin main
	grep -q "^refs/heads/main $(git rev-parse HEAD) refs/heads/main " "$OLD_HOOK_LOG"
	grep -q "git-kopt hook pre-push origin $BATS_TEST_TMPDIR/remote.git\$" "$BATS_TEST_TMPDIR/trace"
}

@test "core.hooksPath is honoured, relative to the top of the work tree" {
	git config core.hooksPath .githooks
	mkdir sub && cd sub
	run --separate-stderr git kopt init
	assert_success
	assert_line "installed: .githooks/pre-commit"
	[ -x "$REPO/.githooks/pre-commit" ]
	[ ! -e "$REPO/.git/hooks/pre-commit" ]
	cd "$REPO"
	git add -A
	trace_kopt
	git commit -q -m "Start"
	grep -qx 'git-kopt hook pre-commit' "$BATS_TEST_TMPDIR/trace"
}

@test "an absolute core.hooksPath is named in full" {
	git config core.hooksPath "$BATS_TEST_TMPDIR/shared-hooks"
	run --separate-stderr git kopt init
	assert_success
	assert_line "installed: $BATS_TEST_TMPDIR/shared-hooks/pre-push"
	[ -x "$BATS_TEST_TMPDIR/shared-hooks/pre-push" ]
}

@test "our own hook changed by hand is kept, not chained" {
	git kopt init -q
	echo "# local tweak" >>.git/hooks/pre-commit
	run --separate-stderr git kopt init
	assert_success
	assert_output "kept: .git/hooks/pre-commit
already initialised: nothing to do"
	[ ! -e .git/hooks/pre-commit.pre-kopt ]
	run --separate-stderr git kopt init --force
	assert_success
	assert_output "restored: .git/hooks/pre-commit
Initialised git kopt in $REPO/"
	cmp "$TOP/hooks/pre-commit" .git/hooks/pre-commit
}

@test "a chained hook is not overwritten by a second foreign hook" {
	printf '#!/bin/sh\nexit 0\n' >.git/hooks/pre-commit
	chmod +x .git/hooks/pre-commit
	git kopt init -q
	printf '#!/bin/sh\necho other\n' >.git/hooks/pre-commit
	run --separate-stderr git kopt init
	assert_failure 128
	assert_output ""
	[ "$stderr" = "fatal: cannot move '.git/hooks/pre-commit' aside: '.git/hooks/pre-commit.pre-kopt' exists; nothing was written" ]
	grep -q 'echo other' .git/hooks/pre-commit
}
