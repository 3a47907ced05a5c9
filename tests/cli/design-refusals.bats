#!/usr/bin/env bats
# git kopt design on bad input: a message naming the cause, the right exit
# code, and no branch or file half-made.

load helper
load gate

setup() {
	setup_kernel_repo
	head=$(git rev-parse HEAD)
}

# Nothing changed: same HEAD, same branches, clean tree.
assert_untouched() {
	run git rev-parse HEAD
	assert_output "$head"
	run git symbolic-ref --short HEAD
	assert_output "main"
	run git branch --list 'kopt/*'
	assert_output ""
	run git status --porcelain --ignored
	assert_output ""
}

@test "design from a version that does not exist" {
	run --separate-stderr git kopt design mla-decode --from v4
	assert_failure 128
	assert_output ""
	[ "$stderr" = "fatal: mla-decode has no version 'v4' ('kernels/mla_decode/v4' is not at HEAD)" ]
	assert_untouched
}

@test "design to a version whose folder exists" {
	mkdir -p kernels/mla_decode/v2
	echo x >kernels/mla_decode/v2/a.cu
	git add -A
	git commit -q -m v2
	head=$(git rev-parse HEAD)
	run --separate-stderr git kopt design mla-decode --to v2
	assert_failure 128
	[ "$stderr" = "fatal: 'kernels/mla_decode/v2' already exists; mla-decode v2 was designed already" ]
	assert_untouched
}

@test "design to a version whose branch exists" {
	git branch kopt/mla-decode/v1
	run --separate-stderr git kopt design mla-decode --to v1
	assert_failure 128
	[ "$stderr" = "fatal: branch 'kopt/mla-decode/v1' already exists; mla-decode v1 was designed already" ]
	git branch -D -q kopt/mla-decode/v1
	assert_untouched
}

@test "design to an untracked folder in the way" {
	mkdir -p kernels/mla_decode/v1
	run --separate-stderr git kopt design mla-decode --to v1
	assert_failure 128
	[ "$stderr" = "fatal: 'kernels/mla_decode/v1' already exists; mla-decode v1 was designed already" ]
}

@test "design on a tree with uncommitted changes to the kernel" {
	echo "// wip" >>kernels/mla_decode/v0/mla_decode.cu
	echo "new" >kernels/mla_decode/v0/new.cu
	run --separate-stderr git kopt design mla-decode
	assert_failure 128
	[ "$stderr" = "fatal: uncommitted changes to mla-decode; commit or stash them first:
	kernels/mla_decode/v0/mla_decode.cu
	kernels/mla_decode/v0/new.cu" ]
	[ ! -e kernels/mla_decode/v1 ]
	run git branch --list 'kopt/*'
	assert_output ""
}

@test "build outputs beside the versions do not stop design; a changed harness does" {
	echo "x" >kernels/mla_decode/harness/mla_decode.h
	mkdir -p kernels/mla_decode/build/v0
	echo "elf" >kernels/mla_decode/build/v0/bench
	run --separate-stderr git kopt design mla-decode
	assert_failure 128
	[ "$stderr" = "fatal: uncommitted changes to mla-decode; commit or stash them first:
	kernels/mla_decode/harness/mla_decode.h" ]
	git checkout -q kernels/mla_decode/harness/mla_decode.h
	run --separate-stderr git kopt design mla-decode
	assert_success
	[ -f kernels/mla_decode/build/v0/bench ]
	run git status --porcelain
	assert_output "?? kernels/mla_decode/build/"
}

@test "a dirty devlog is a change to the kernel; other paths are not" {
	echo "more" >>docs/kernels/mla-decode.md
	run --separate-stderr git kopt design mla-decode
	assert_failure 128
	[[ "$stderr" == *"docs/kernels/mla-decode.md"* ]]
	git checkout -q docs/kernels/mla-decode.md
	echo "elsewhere" >README
	run git kopt design mla-decode
	assert_success
}

@test "design in a repository with no commits" {
	rm -rf .git
	git init -q
	run --separate-stderr git kopt design mla-decode
	assert_failure 128
	[ "$stderr" = "fatal: the repository has no commits yet; commit mla-decode's base version (v0) first" ]
	run git branch --list
	assert_output ""
	[ ! -e kernels/mla_decode/v1 ]
}

@test "design of an unknown kernel, and bad versions" {
	run --separate-stderr git kopt design flash
	assert_failure 128
	[ "$stderr" = "fatal: unknown kernel 'flash' (known: mla-decode)" ]
	run --separate-stderr git kopt design mla-decode --to 3
	assert_failure 128
	[ "$stderr" = "fatal: '3' is not a version (v0, v1, ...)" ]
	run --separate-stderr git kopt design mla-decode --from v0 --to v0
	assert_failure 128
	[ "$stderr" = "fatal: 'kernels/mla_decode/v0' already exists; mla-decode v0 was designed already" ]
	run --separate-stderr git kopt design
	assert_failure 129
	[[ "$stderr" == "error: which kernel?"* ]]
	run --separate-stderr git kopt design mla-decode --task "$BATS_TEST_TMPDIR/none.md"
	assert_failure 128
	[[ "$stderr" == "fatal: cannot read the task '$BATS_TEST_TMPDIR/none.md': No such file or directory" ]]
	assert_untouched
}

@test "a failure after the files are written removes them again" {
	# a file where the branch's folder should be: creating the branch fails
	mkdir -p .git/refs/heads
	touch .git/refs/heads/kopt
	run --separate-stderr git kopt design mla-decode
	assert_failure 128
	[[ "$stderr" == "error: cannot create branch 'kopt/mla-decode/v1'"* ]]
	[[ "$stderr" == *"fatal: nothing was changed" ]]
	rm .git/refs/heads/kopt
	assert_untouched
	run cat docs/kernels/mla-decode.md
	assert_output "$(cat "$GATE/devlog.md")"
}

@test "renaming that would make two files one is refused" {
	mkdir -p kernels/mla_decode/v1
	printf 'x\n' >kernels/mla_decode/v1/tile_v1.cu
	printf 'y\n' >kernels/mla_decode/v1/tile_v2.cu
	git add -A
	git commit -q -m "A clash"
	head=$(git rev-parse HEAD)
	run --separate-stderr git kopt design mla-decode --from v1
	assert_failure 128
	[ "$stderr" = "error: renaming makes two files 'kernels/mla_decode/v2/tile_v2.cu'; set 'kernel.mla-decode.rename = none' in .kopt" ]
	assert_untouched
}

# The journal a design writes before its first change (lib/journal).
write_journal() {
	mkdir -p .git/kopt
	printf '%s\n' "pid $1" "host $(uname -n)" "head $head" \
		"branch refs/heads/kopt/mla-decode/v1" \
		"to-dir kernels/mla_decode/v1" "devlog docs/kernels/mla-decode.md" \
		"task " "task-existed 0" end >.git/kopt/design.journal
}

@test "a design still at work in this work tree refuses a second" {
	write_journal $$
	run --separate-stderr git kopt design mla-decode
	assert_failure 128
	[ "$stderr" = "error: another git kopt design is running (process $$ on $(uname -n)); if it is not, remove '$PWD/.git/kopt/design.journal'" ]
	rm .git/kopt/design.journal
	assert_untouched
}

@test "a design that was killed is undone, then made again" {
	# killed after it wrote part of the version and the devlog
	write_journal 999999999
	mkdir -p kernels/mla_decode/v1
	echo half >kernels/mla_decode/v1/half.cu
	echo more >>docs/kernels/mla-decode.md
	run --separate-stderr git kopt design mla-decode
	assert_success
	[[ "$stderr" == "undid the design of 'kopt/mla-decode/v1' that was interrupted; starting again"$'\n'* ]] ||
		fail "stderr: $stderr"
	[ ! -e kernels/mla_decode/v1/half.cu ]
	[ ! -e .git/kopt/design.journal ]
	run git symbolic-ref --short HEAD
	assert_output "kopt/mla-decode/v1"
	run git status --porcelain
	assert_output ""
	# and again: nothing left to put right, v1 exists
	run --separate-stderr git kopt design mla-decode --to v1
	assert_failure 128
	[[ "$stderr" != *"interrupted"* ]] || fail "stderr: $stderr"
}

@test "a design killed after its commit is finished: its files staged" {
	git kopt design mla-decode >/dev/null 2>&1
	# killed before it staged the files: the index as it was, a lock
	git read-tree "$head"
	write_journal 999999999
	touch .git/index.lock
	run --separate-stderr git kopt design mla-decode
	assert_failure 128
	[ "$stderr" = "error: cannot update the index: '.git/index.lock' exists; another git process may be running, otherwise remove it" ]
	rm .git/index.lock
	run --separate-stderr git kopt design mla-decode
	assert_success
	assert_output ""
	[ "$stderr" = "finished the design of 'kopt/mla-decode/v1' that was interrupted after its commit" ]
	run git status --porcelain
	assert_output ""
	[ ! -e .git/kopt/design.journal ]
}
