#!/usr/bin/env bats
# Progress lines (lib/progress drawn by cmd/term-progress.c), seen through
# 'git kopt check' over a range: on stderr, only on a terminal, never
# with -q.

load helper
load gate

setup() {
	setup_kernel_repo
	git checkout -q -b topic
	for i in 1 2 3 4 5; do
		echo "// $i" >>kernels/mla_decode/v0/mla_decode.cu
		git add -A
		git commit -q --no-verify -m "Step $i"
	done
}

@test "no progress when stderr is not a terminal" {
	KOPT_PROGRESS_DELAY=0 run --separate-stderr git kopt check main..HEAD
	assert_success
	assert_output ""
	[ -z "$stderr" ]
}

@test "the progress line counts the commits and ends with done" {
	KOPT_PROGRESS=1 KOPT_PROGRESS_DELAY=0 \
		run --separate-stderr git kopt check main..HEAD
	assert_success
	assert_output ""
	# the last drawing, after the last carriage return
	last=$(printf '%s' "$stderr" | tr '\r' '\n' | tail -n 1)
	[[ "$last" =~ ^checking\ commits:\ 100%\ \(5/5\),\ [0-9]+\.[0-9]\ s,\ done\.\ *$ ]] ||
		fail "last progress line: '$last'"
	[[ "$stderr" == *"checking commits:   0% (0/5)"* ]] ||
		fail "no first drawing in: $stderr"
}

@test "-q and KOPT_PROGRESS=0 draw nothing" {
	KOPT_PROGRESS=1 KOPT_PROGRESS_DELAY=0 \
		run --separate-stderr git kopt check -q main..HEAD
	assert_success
	[ -z "$stderr" ]
	KOPT_PROGRESS=0 KOPT_PROGRESS_DELAY=0 \
		run --separate-stderr script -qec "git kopt check main..HEAD" /dev/null
	assert_success
	[ -z "$output" ]
}

@test "work shorter than the delay draws nothing" {
	KOPT_PROGRESS=1 KOPT_PROGRESS_DELAY=30 \
		run --separate-stderr git kopt check main..HEAD
	assert_success
	[ -z "$stderr" ]
}

@test "on a terminal the line is redrawn in place" {
	command -v script >/dev/null || skip "no script(1)"
	TERM=xterm KOPT_PROGRESS_DELAY=0 \
		run script -qec "git kopt check main..HEAD" /dev/null
	assert_success
	[[ "$output" == *$'\r'"checking commits: 100% (5/5), "*", done."$'\033[K'* ]] ||
		fail "no terminal drawing in: $(printf '%q' "$output")"
}

@test "profile: one step per trial, the line cleared before other output" {
	cat >>.kopt <<-'KOPT'
	[kernel "mm"]
		language = cuda-c
		source = k/{version}
		run = ./bench --b {b} --s {s} --t {t}
	KOPT
	KOPT_PROGRESS=1 KOPT_PROGRESS_DELAY=0 run --separate-stderr \
		git kopt profile mm v0 --no-devlog \
		--replay "$FIXTURES/gpu/pytorch-matmul.json" \
		--replay "$FIXTURES/gpu/pytorch-matmul.json"
	assert_success
	# stdout is the contract alone
	assert_line --index 0 "## Profile: mm v0 | b=32, s=1, t=4096"
	[[ "$output" != *"profiling mm"* ]]
	[[ "$stderr" == *"profiling mm v0:   0% (0/2), "*", trial decode (b=32, s=1, t=4096)"* ]] ||
		fail "no first step in: $stderr"
	[[ "$stderr" == *"profiling mm v0:  50% (1/2), "*", trial spec-decode (b=32, s=16, t=4096)"* ]] ||
		fail "no second step in: $stderr"
	last=$(printf '%s' "$stderr" | tr '\r' '\n' | grep '^profiling' | tail -n 1)
	[[ "$last" =~ ^profiling\ mm\ v0:\ 100%\ \(2/2\),\ [0-9.]+\ s,\ done\.\ *$ ]] ||
		fail "last: $last"
}

@test "design: copying the version's tree" {
	git checkout -q main
	KOPT_PROGRESS=1 KOPT_PROGRESS_DELAY=0 run --separate-stderr \
		git kopt design mla-decode --to v1
	assert_success
	last=$(printf '%s' "$stderr" | tr '\r' '\n' | grep '^copying' | tail -n 1)
	[[ "$last" =~ ^copying\ kernels/mla_decode/v0/?\ to\ kernels/mla_decode/v1/?:\ 100%\ \([0-9]+/[0-9]+\),\ [0-9.]+\ s,\ done\.\ *$ ]] ||
		fail "stderr: $stderr"
}

@test "-q silences profile, verify and design too" {
	cat >>.kopt <<-'KOPT'
	[kernel "mm"]
		language = cuda-c
		source = k/{version}
		run = ./bench --b {b} --s {s} --t {t}
	KOPT
	for step in profile verify; do
		KOPT_PROGRESS=1 KOPT_PROGRESS_DELAY=0 run --separate-stderr \
			git kopt $step mm v0 --no-devlog -q \
			--replay "$FIXTURES/gpu/pytorch-matmul.json" \
			--replay "$FIXTURES/gpu/pytorch-matmul.json"
		[[ "$stderr" != *"% ("* ]] || fail "$step -q drew: $stderr"
	done
	git checkout -q main
	KOPT_PROGRESS=1 KOPT_PROGRESS_DELAY=0 run --separate-stderr \
		git kopt design mla-decode --to v1 -q
	assert_success
	[[ "$stderr" != *"copying"* ]] || fail "design -q drew: $stderr"
	for step in tune cycle; do
		run git kopt $step -h
		assert_output --partial "-q, --quiet"
	done
}
