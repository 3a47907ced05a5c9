#!/usr/bin/env bats
# Each writing step killed with SIGKILL at random points of its writes
# (tests/cli/crash.bash): no torn file, git fsck clean, a rerun completes
# and leaves what an uninterrupted run leaves.
# KOPT_KILL_POINTS=all kills every step at every point (make test-crash).

load helper
load crash
load tune

GPU="$FIXTURES/gpu"

# A repository with git-kopt's files and a kernel with v0, committed.
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

@test "init killed halfway" {
	setup_repo
	kill_check "$REPO" git kopt init -q
}

@test "kernel add killed halfway" {
	kernel_repo
	kill_check "$REPO" git kopt kernel add mm --language cuda-c \
		--source 'kernels/mm/{version}' --run 'true'
}

@test "profile --replay killed halfway" {
	kernel_repo
	kill_check "$REPO" git kopt profile mla-decode v0 --trial decode \
		--replay "$GPU/mla-decode-v0-decode.json"
}

@test "design killed halfway" {
	kernel_repo
	git kopt profile mla-decode v0 --trial decode \
		--replay "$GPU/mla-decode-v0-decode.json" 2>/dev/null >&2
	git add -A
	git commit -q -m "Profile mla-decode v0"
	kill_check "$REPO" git kopt design mla-decode --to v1 --title "split KV"
}

@test "verify --replay killed halfway" {
	kernel_repo
	git kopt profile mla-decode v0 --trial decode \
		--replay "$GPU/mla-decode-v0-decode.json" 2>/dev/null >&2
	git add -A
	git commit -q -m "Profile mla-decode v0"
	git kopt design mla-decode --to v1 --title "split KV" >/dev/null 2>&1
	kill_check "$REPO" git kopt verify mla-decode v1 --trial decode \
		--replay "$GPU/mla-decode-v1-decode.json"
}

@test "learn new killed halfway" {
	kernel_repo
	kill_check "$REPO" git kopt learn new optimization "split KV loads"
}

# Killed while it held the locks of both the detail file and the catalog
# (at its first write, the catalog's): the rerun names both locks in one
# message.
@test "learn new killed holding both locks: the rerun names both" {
	kernel_repo
	KOPT_KILL_AT="write 1" kill_check "$REPO" \
		git kopt learn new optimization "split KV loads"
	: >docs/knowledge/optimizations/split-kv-loads.md.lock
	: >.claude/skills/optimization-catalog/SKILL.md.lock
	run --separate-stderr git kopt learn new optimization "split KV loads"
	assert_failure 128
	assert_output ""
	assert_equal "$stderr" "error: cannot write 2 files: 'docs/knowledge/optimizations/split-kv-loads.md.lock' and '.claude/skills/optimization-catalog/SKILL.md.lock' exist; another git kopt may be running, otherwise remove them"
	[ ! -e docs/knowledge/optimizations/split-kv-loads.md ]
	rm docs/knowledge/optimizations/split-kv-loads.md.lock \
		.claude/skills/optimization-catalog/SKILL.md.lock
	run --separate-stderr git kopt learn new optimization "split KV loads"
	assert_success
}

# A knowledge base whose catalogs have rows the detail files fill: two
# in the shared catalog, one in the cuda-c catalog (learn sync rewrites
# both files, one after the other).
sync_repo() {
	local shared=.claude/skills/optimization-catalog/SKILL.md
	local cuda=.claude/skills/optimization-catalog-cuda-c/SKILL.md
	setup_repo
	cp -R "$FIXTURES/knowledge/kb/." .
	cp "$FIXTURES/knowledge/sync/vectorized-loads.md" docs/knowledge/optimizations/
	cp "$FIXTURES/knowledge/sync/bank-conflicts.md" docs/knowledge/anti-patterns/
	sed -i -e '/^| O5 /a | O6 | [Optimization Name] | [trigger conditions] | [est. impact] | [pitfalls] | `docs/knowledge/optimizations/vectorized-loads.md` |' \
		-e '/^| A2 /a | A3 | Bank conflicts | [failure mode] | [source] | `docs/knowledge/anti-patterns/bank-conflicts.md` |' \
		"$shared"
	sed -i 's/| 5-20% | spills |/| 5-20% | [pitfalls] |/' "$cuda"
	git add -A
	git commit -qm "Knowledge base"
}

@test "learn sync killed halfway" {
	sync_repo
	kill_check "$REPO" git kopt learn sync
}

@test "learn sync of one row killed halfway" {
	sync_repo
	kill_check "$REPO" git kopt learn sync A3
}

@test "tune killed halfway" {
	tune_setup
	tune_kopt "tune-default = BN=32,ST=2"
	tune_devlog
	git add -A
	git commit -qm base
	kill_check "$REPO" git kopt tune k v1 --trial decode --strategy exhaustive
}
