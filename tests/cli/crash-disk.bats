#!/usr/bin/env bats
# Each writing step on a full disk (tests/cli/crash.bash): a clear message,
# no torn file, git fsck clean, the step completes once there is space; and
# with a stale read-only .git/index.lock left behind: the steps that commit
# refuse in one line and write nothing, the others do not need the index.

load helper
load crash

GPU="$FIXTURES/gpu"

teardown() {
	disk_release
}

kernel_repo() {
	setup_repo
	git kopt init -q
	git kopt kernel add mla-decode --language cuda-c \
		--source 'kernels/mla_decode/{version}' --run 'true {b}' \
		--target 'spec-decode duration_us <= 60' >/dev/null
	mkdir -p kernels/mla_decode/v0
	printf '__global__ void mla_decode_kernel(void) {}\n' \
		>kernels/mla_decode/v0/mla_decode.cu
	git add -A
	git commit -q -m "Start mla-decode"
}

profiled_repo() {
	kernel_repo
	git kopt profile mla-decode v0 --trial decode \
		--replay "$GPU/mla-decode-v0-decode.json" 2>/dev/null >&2
	git add -A
	git commit -q -m "Profile mla-decode v0"
}

@test "init on a full disk" {
	setup_repo
	disk_check "$REPO" git kopt init -q
}

@test "kernel add on a full disk" {
	kernel_repo
	disk_check "$REPO" git kopt kernel add mm --language cuda-c \
		--source 'kernels/mm/{version}' --run 'true'
}

@test "profile --replay on a full disk" {
	kernel_repo
	disk_check "$REPO" git kopt profile mla-decode v0 --trial decode \
		--replay "$GPU/mla-decode-v0-decode.json"
}

@test "design on a full disk" {
	profiled_repo
	disk_check "$REPO" git kopt design mla-decode --to v1 --title "split KV"
}

@test "verify --replay on a full disk" {
	profiled_repo
	git kopt design mla-decode --to v1 --title "split KV" >/dev/null 2>&1
	disk_check "$REPO" git kopt verify mla-decode v1 --trial decode \
		--replay "$GPU/mla-decode-v1-decode.json"
}

@test "learn new on a full disk" {
	kernel_repo
	disk_check "$REPO" git kopt learn new optimization "split KV loads"
}

@test "a stale read-only index.lock: design refuses in one line and writes nothing" {
	profiled_repo
	: >.git/index.lock
	chmod 444 .git/index.lock
	head=$(git rev-parse HEAD)
	branch=$(git rev-parse --abbrev-ref HEAD)
	run --separate-stderr git kopt design mla-decode --to v1 --title "split KV"
	assert_failure 128
	assert_equal "$stderr" "fatal: cannot update the index: '.git/index.lock' exists; another git process may be running, otherwise remove it"
	assert_equal "$output" ""
	# no branch, no commit, no file, the lock as it was
	[ "$(git rev-parse --abbrev-ref HEAD)" = "$branch" ]
	[ "$(git rev-parse HEAD)" = "$head" ]
	[ -z "$(git branch --list 'kopt/*')" ]
	[ ! -e kernels/mla_decode/v1 ]
	cmp .git/index.lock /dev/null
	rm -f .git/index.lock
	[ -z "$(git status --porcelain)" ]
	git fsck --no-progress --no-dangling
	# once it is gone, design completes
	run --separate-stderr git kopt design mla-decode --to v1 --title "split KV"
	assert_success
	[ "$(git rev-parse --abbrev-ref HEAD)" = kopt/mla-decode/v1 ]
	[ -z "$(git status --porcelain)" ]
}

@test "a stale index.lock in a subdirectory's view: design names it from the top" {
	profiled_repo
	: >.git/index.lock
	cd kernels
	run --separate-stderr git kopt design mla-decode --to v1
	assert_failure 128
	assert_equal "$stderr" "fatal: cannot update the index: '.git/index.lock' exists; another git process may be running, otherwise remove it"
	cd ..
	rm .git/index.lock
	[ -z "$(git status --porcelain)" ]
}

@test "a stale index.lock: cycle refuses before it starts" {
	profiled_repo
	: >.git/index.lock
	before=$(find .git/kopt 2>/dev/null | sort)
	run --separate-stderr git kopt cycle mla-decode --agent x
	assert_failure 128
	assert_equal "$stderr" "fatal: cannot update the index: '.git/index.lock' exists; another git process may be running, otherwise remove it"
	[ -z "$(git branch --list 'kopt/*')" ]
	[ "$(find .git/kopt 2>/dev/null | sort)" = "$before" ]
	rm .git/index.lock
	[ -z "$(git status --porcelain)" ]
}

@test "a stale read-only index.lock: learn new and profile do not need the index" {
	profiled_repo
	: >.git/index.lock
	chmod 444 .git/index.lock
	run --separate-stderr git kopt learn new optimization "split KV loads"
	assert_success
	run --separate-stderr git kopt profile mla-decode v0 --trial decode \
		--replay "$GPU/mla-decode-v0-decode.json"
	assert_success
	git fsck --no-progress --no-dangling
}
