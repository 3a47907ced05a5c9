#!/usr/bin/env bats
# git kopt init: where it runs, and where it refuses to.

load helper

setup() {
	setup_repo
}

@test "init works in a repository with no commits" {
	run git rev-parse --verify -q HEAD
	assert_failure
	run --separate-stderr git kopt init -q
	assert_success
	[ -f .kopt ]
	git add -A
	git commit -q -m "Start"
}

@test "init from a subdirectory writes at the top of the work tree" {
	mkdir -p a/b && cd a/b
	run --separate-stderr git kopt init
	assert_success
	assert_line "created: .kopt"
	assert_line "Initialised git kopt in $REPO/"
	[ -f "$REPO/.kopt" ]
	[ -f "$REPO/.claude/agents/profiler.md" ]
	[ -z "$(ls -A "$REPO/a/b")" ]
}

@test "init works in a linked worktree; the hooks go to the common git directory" {
	git commit -q --allow-empty -m "Start"
	git worktree add -q "$BATS_TEST_TMPDIR/wt" -b side
	cd "$BATS_TEST_TMPDIR/wt"
	run --separate-stderr git kopt init
	assert_success
	assert_line "created: .kopt"
	assert_line "installed: $REPO/.git/hooks/pre-commit"
	assert_line "Initialised git kopt in $BATS_TEST_TMPDIR/wt/"
	[ -f "$BATS_TEST_TMPDIR/wt/.kopt" ]
	[ ! -e "$REPO/.kopt" ]
	git add -A
	trace_kopt
	git commit -q -m "Init"
	grep -qx 'git-kopt hook pre-commit' "$BATS_TEST_TMPDIR/trace"
}

@test "init refuses a bare repository" {
	git init -q --bare "$BATS_TEST_TMPDIR/bare.git"
	cd "$BATS_TEST_TMPDIR/bare.git"
	run --separate-stderr git kopt init
	assert_failure 128
	assert_output ""
	[ "$stderr" = "fatal: cannot initialise a bare repository: git kopt needs a work tree" ]
	[ ! -e .kopt ]
	[ ! -e hooks/pre-commit ]
}

@test "init outside a repository says so" {
	mkdir "$BATS_TEST_TMPDIR/norepo" && cd "$BATS_TEST_TMPDIR/norepo"
	export GIT_CEILING_DIRECTORIES="$BATS_TEST_TMPDIR"
	run --separate-stderr git kopt init
	assert_failure 128
	[ "$stderr" = "fatal: not a git repository (or any of the parent directories)" ]
}

@test "init writes nothing when one file cannot be written (a file where a folder is needed)" {
	echo "not a folder" >docs
	run --separate-stderr git kopt init
	assert_failure 128
	assert_output ""
	[ "$stderr" = "fatal: cannot create 'docs/kernels/README.md': 'docs' is not a directory; nothing was written" ]
	[ "$(ls -A)" = "$(printf '.git\ndocs')" ]
	[ -z "$(ls .git/hooks | grep -v '\.sample$')" ]
}

@test "init writes nothing in a read-only work tree" {
	[ "$(id -u)" -ne 0 ] || skip "root writes through permissions"
	chmod a-w "$REPO"
	run --separate-stderr git kopt init
	chmod u+w "$REPO"
	assert_failure 128
	assert_output ""
	[[ "$stderr" == "fatal: cannot write '.claude/agents/kernel-designer.md': '$REPO' is not writable (Permission denied); nothing was written" ]]
	[ "$(ls -A)" = ".git" ]
}

@test "init writes nothing when the hooks directory cannot take a hook" {
	git config core.hooksPath hooks-file
	echo "a file" >hooks-file
	run --separate-stderr git kopt init
	assert_failure 128
	[ "$stderr" = "fatal: cannot create 'hooks-file/commit-msg': 'hooks-file' is not a directory; nothing was written" ]
	[ "$(ls -A)" = "$(printf '.git\nhooks-file')" ]
}

@test "init writes nothing while another writer holds a lock" {
	touch .kopt.lock
	run --separate-stderr git kopt init
	assert_failure 128
	[ "$stderr" = "fatal: cannot write '.kopt': '.kopt.lock' exists; another git kopt may be running, otherwise remove it; nothing was written" ]
	[ "$(ls -A)" = "$(printf '.git\n.kopt.lock')" ]
}

@test "init names every lock left behind at once" {
	mkdir -p docs/kernels
	touch .kopt.lock docs/kernels/README.md.lock
	run --separate-stderr git kopt init
	assert_failure 128
	[ "$stderr" = "fatal: cannot write 2 files: '.kopt.lock' and 'docs/kernels/README.md.lock' exist; another git kopt may be running, otherwise remove them; nothing was written" ]
	[ "$(ls -A)" = "$(printf '.git\n.kopt.lock\ndocs')" ]
	[ "$(ls -A docs/kernels)" = README.md.lock ]
}
