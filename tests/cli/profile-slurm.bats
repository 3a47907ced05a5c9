#!/usr/bin/env bats
# git kopt profile and verify with kopt.executor = slurm, against a real
# one-node Slurm cluster on the loopback address (tests/slurm/start).
# The benchmark is a CPU stand-in that writes a recorded H200 capture
# where the injection library would have written its own.

load helper

setup_file() {
	export CLUSTER="$BATS_FILE_TMPDIR/slurm"
	eval "$("$TOP/tests/slurm/start" "$CLUSTER")"
}

teardown_file() {
	"$TOP/tests/slurm/stop" "$CLUSTER"
}

setup() {
	setup_repo
	mkdir -p k/v0 k/v1
	echo 'int v0;' >k/v0/k.cu
	echo 'int v1;' >k/v1/k.cu
	cat >bench <<-'SH'
	#!/bin/sh
	# usage: bench MODE B S T
	echo "${SLURM_JOB_ID:-local} $(basename "$KOPT_INJECT_OUT")" >>"$RUNLOG"
	case $1 in
	ok) cp "$CAPTURE" "$KOPT_INJECT_OUT"; echo "bench ok" ;;
	check) echo "check FAILED: rel_err 0.5"; exit 1 ;;
	crash) kill -SEGV $$ ;;
	hang) sleep 30 ;;
	cancel) scancel "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
		sleep 30 ;;
	esac
	SH
	printf '#!/bin/sh\necho "built $1 ${SLURM_JOB_ID:-here}" >>build.log\n' \
		>build.sh
	chmod +x bench build.sh
	cat >.kopt <<-'KOPT'
	[kopt]
		timeout = 2
	[trial "decode"]
		b = 32
		s = 1
		t = 4096
	[language "cuda-c"]
		control = thread
	[kernel "k"]
		language = cuda-c
		source = k/{version}
		build = ./build.sh {version}
		run = ./bench $MODE {b} {s} {t}
	KOPT
	mkdir -p docs/kernels
	printf '# k\n\n## Overview\n\nA kernel.\n\n## Development log\n\n### V0: base\n\nThe base.\n\n### V1: tiled\n\nTiles.\n' \
		>docs/kernels/k.md
	echo build.log >.gitignore
	git add -A
	git commit -qm base
	git config kopt.executor slurm
	export CAPTURE="$FIXTURES/gpu/mla-decode-v1-decode.json"
	export KOPT_INJECT_LIB=/dev/null RUNLOG="$BATS_TEST_TMPDIR/run.log"
	: >"$RUNLOG"
}

# mode: what the stand-in does (see bench above)
kernel() {
	sed -i "s/\$MODE/$1/" .kopt
}

@test "profile runs the benchmark as a job on the cluster, built here" {
	kernel ok
	run --separate-stderr git kopt profile k v0
	assert_success
	assert_line --index 0 "## Profile: k v0 | b=32, s=1, t=4096"
	# one run, inside a Slurm job, its capture in the shared work tree
	run cat "$RUNLOG"
	assert_output --regexp '^[0-9]+ kopt-capture-[A-Za-z0-9]{6}$'
	# the build ran on this machine, once
	run cat build.log
	assert_output "built v0 here"
	# results and devlog were written from the stand-in's capture
	python3 - <<-'PY'
	import json
	e = json.load(open("docs/kernels/k/results/v0.json"))["entries"][0]
	assert e["replayed"] is False
	assert e["stages"][0]["name"] == "mla_decode_v1_kernel", e["stages"]
	assert e["device"]["name"] == "NVIDIA H200", e["device"]
	PY
	run grep -c "^\*\*Performance\*\* (NVIDIA H200, bfloat16, b=32, s=1, t=4096):" docs/kernels/k.md
	assert_output 1
	# nothing is left in the executor's state directory
	run ls -A .git/kopt/slurm
	assert_output ""
}

@test "verify measures on the cluster too, and judges against the parent" {
	kernel ok
	git kopt profile k v0 2>/dev/null >/dev/null
	run --separate-stderr git kopt verify k v1
	assert_success
	assert_line --index 0 "## Profile: k v1 | b=32, s=1, t=4096"
	assert_line --partial "neutral"
	run grep -vc '^local ' "$RUNLOG"
	assert_output 2
	run grep -c '^local ' "$RUNLOG"
	assert_output 0
	test -e docs/kernels/k/results/v1.json
	run ls -A .git/kopt/slurm
	assert_output ""
}

# Every failure is one error line; results and devlog stay as they were.
fails() {
	local want=$1
	cp docs/kernels/k.md devlog.before
	run --separate-stderr git kopt "${2:-profile}" k v0
	assert_failure 128
	assert_output ""
	assert_equal "$(printf '%s\n' "$stderr" | grep -E '^(error|fatal)')" "$want"
	test ! -e docs/kernels/k/results/v0.json
	cmp docs/kernels/k.md devlog.before
	run ls -A .git/kopt/slurm
	assert_output ""
}

@test "a task cancelled on the cluster is one line, nothing written" {
	kernel cancel
	fails "error: the benchmark of k v0 was cancelled: killed on the cluster before it finished (scancel, its time limit, or its node was lost); command: ./bench cancel 32 1 4096"
}

@test "a failed, crashed or hung run says so as a local one does" {
	kernel check
	fails "error: the benchmark of k v0 failed (exit code 1): its own check failed or it could not run; command: ./bench check 32 1 4096"
	[[ "$stderr" == *"check FAILED: rel_err 0.5"* ]]
	sed -i 's/bench check/bench crash/' .kopt
	fails "error: the benchmark of k v0 crashed: killed by signal 11 (Segmentation fault); command: ./bench crash 32 1 4096" verify
	sed -i 's/bench crash/bench hang/' .kopt
	fails "error: the benchmark of k v0 hung: timed out after 2 s (kopt.timeout); command: ./bench hang 32 1 4096"
}

@test "a job the cluster refuses is one line naming the cause" {
	kernel ok
	git config kopt.slurmPartition nosuch
	fails "error: the cluster refused the job: sbatch: error: invalid partition specified: nosuch"
	run cat "$RUNLOG"
	assert_output ""
}
