#!/usr/bin/env bats
# git kopt profile against benchmarks that fail in every way a real one
# can.  The benchmark here is a stand-in script that writes a recorded
# H200 capture where the injection library would have written its own
# (KOPT_INJECT_OUT), so the whole measuring path runs without a GPU.

load helper

setup() {
	setup_repo
	mkdir -p k/v0
	cat >bench <<-'SH'
	#!/bin/sh
	# usage: bench MODE B S T
	mode=$1 b=$2
	case $mode in
	ok) cp "$CAPTURE" "$KOPT_INJECT_OUT"; echo "bench ok" ;;
	env) echo "cache=${KOPT_INJECT_CACHE-unset}" >cache.env
		cp "$CAPTURE" "$KOPT_INJECT_OUT" ;;
	check) echo "check FAILED: rel_err 0.5"; exit 1 ;;
	crash) kill -SEGV $$ ;;
	hang) sleep 30 ;;
	silent) exit 0 ;;
	# a first run that leaves stages unsampled, then a second run
	few) if [ -n "$KOPT_INJECT_FIRST_RUN" ]; then
		[ -s "$KOPT_INJECT_FIRST_RUN" ] || exit 3
		echo "second run" >>runs.log
		cp "$SECOND" "$KOPT_INJECT_OUT"
	     else
		echo "first run" >>runs.log
		cp "$FIRST" "$KOPT_INJECT_OUT"
	     fi ;;
	fewcrash) if [ -n "$KOPT_INJECT_FIRST_RUN" ]; then kill -SEGV $$; fi
		cp "$FIRST" "$KOPT_INJECT_OUT" ;;
	nokernel) printf '{"format":"kopt-inject","format_version":1,"kernels":[],"errors":[]}' >"$KOPT_INJECT_OUT" ;;
	oom)
		if [ "$b" -gt 8 ]; then
			echo "CUDA error: out of memory (cudaMalloc of $b x 4 GiB)" >&2
			exit 2
		fi
		cp "$CAPTURE" "$KOPT_INJECT_OUT" ;;
	esac
	SH
	chmod +x bench
	export CAPTURE="$FIXTURES/gpu/mla-decode-v1-decode.json"
	export KOPT_TEST_NO_DEVICE=1 KOPT_INJECT_LIB=/dev/null
}

kernel() {
	cat >.kopt <<-KOPT
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
		build = "$2"
		run = ./bench $1 {b} {s} {t}
	KOPT
}

@test "a benchmark that runs is measured, built once first" {
	kernel ok "echo built {version} >>build.log"
	run --separate-stderr git kopt profile k v0
	assert_success
	assert_line --index 0 "## Profile: k v0 | b=32, s=1, t=4096"
	refute_output --partial "Replayed"
	run cat build.log
	assert_output "built v0"
	run python3 -c 'import json; e = json.load(open("docs/kernels/k/results/v0.json"))["entries"][0]; print(e["replayed"], e["stages"][0]["name"])'
	assert_output "False mla_decode_v1_kernel"
}

@test "the library keeps what it may reuse in the repository's kopt cache" {
	kernel env ""
	run --separate-stderr git kopt profile k v0
	assert_success
	run cat cache.env
	assert_output "cache=$(git rev-parse --absolute-git-dir)/kopt/inject/"
	# caches off: nothing kept, the library reads it again each run
	KOPT_NO_CACHE=1 run --separate-stderr git kopt profile k v0
	assert_success
	run cat cache.env
	assert_output "cache=unset"
}

@test "a build that fails stops everything, with its output" {
	printf '#!/bin/sh\necho "v0.cu:12: error: expected ;" >&2\nexit 2\n' >build.sh
	kernel ok "sh build.sh {version}"
	run --separate-stderr git kopt profile k v0
	assert_failure 128
	[[ "$stderr" == *"v0.cu:12: error: expected ;"* ]]
	[[ "$stderr" == *"error: building k v0 failed (exit code 2): sh build.sh v0"* ]]
	[ ! -e docs/kernels/k/results/v0.json ]
}

@test "a benchmark that fails its own check fails the profile" {
	kernel check "true"
	run --separate-stderr git kopt profile k v0
	assert_failure 128
	[[ "$stderr" == *"check FAILED: rel_err 0.5"* ]]
	[[ "$stderr" == *"error: the benchmark of k v0 failed (exit code 1): its own check failed or it could not run"* ]]
	[ ! -e docs/kernels/k/results/v0.json ]
}

@test "a benchmark that crashes is named as crashed" {
	kernel crash "true"
	run --separate-stderr git kopt profile k v0
	assert_failure 128
	[[ "$stderr" == *"error: the benchmark of k v0 crashed: killed by signal 11 (Segmentation fault)"* ]]
	[ ! -e docs/kernels/k/results/v0.json ]
}

@test "a benchmark that hangs is stopped at kopt.timeout" {
	kernel hang "true"
	SECONDS=0
	run --separate-stderr git kopt profile k v0
	assert_failure 128
	[ "$SECONDS" -lt 10 ]
	[[ "$stderr" == *"error: the benchmark of k v0 hung: timed out after 2 s (kopt.timeout)"* ]]
}

@test "a benchmark that launches nothing on the GPU is told apart" {
	kernel silent "true"
	run --separate-stderr git kopt profile k v0
	assert_failure 128
	[[ "$stderr" == *"ran, but the injection wrote no capture"* ]]
	kernel nokernel "true"
	run --separate-stderr git kopt profile k v0
	assert_failure 128
	[[ "$stderr" == *"the benchmark launched no kernel"* ]]
	[ ! -e docs/kernels/k/results/v0.json ]
	# the captures of failed runs are not left behind
	[ -z "$(ls "$TMPDIR")" ]
}

@test "out of memory halves b until it fits, and the results say so" {
	kernel oom "true"
	run --separate-stderr git kopt profile k v0
	assert_success
	[[ "$stderr" == *"out of memory at b=32: halving b to 16"* ]]
	[[ "$stderr" == *"out of memory at b=16: halving b to 8"* ]]
	assert_line --index 0 "## Profile: k v0 | b=8, s=1, t=4096"
	assert_line "> Out of memory at b=32: measured at b=8."
	run python3 -c 'import json; c = json.load(open("docs/kernels/k/results/v0.json"))["entries"][0]["config"]; print(c["b"], c["b_requested"])'
	assert_output "8 32"
}

@test "stages launched too few times are sampled by a second run" {
	kernel few "true"
	git config -f .kopt kernel.k.stages '*'
	export FIRST="$FIXTURES/gpu/torch-forward-second-run-failed.json"
	export SECOND="$FIXTURES/gpu/five-kernels.json"
	run --separate-stderr git kopt profile k v0
	assert_success
	run cat runs.log
	assert_output "first run
second run"
	[[ "$stderr" == *"running k v0 again to sample the kernels launched too few times or only from CUDA graphs"* ]]
	# the capture of the second run (merged) is what was measured
	python3 - <<-'PY'
	import json
	e = json.load(open("docs/kernels/k/results/v0.json"))["entries"][0]
	assert e["stages"][0]["name"] == "fill", e["stages"][0]["name"]
	PY
}

@test "a second run that crashes leaves the first run's measurement, and says so" {
	kernel fewcrash "true"
	export FIRST="$FIXTURES/gpu/torch-forward-second-run-failed.json"
	run --separate-stderr git kopt profile k v0
	assert_success
	[[ "$stderr" == *"warning: the second run of k v0 failed (killed by signal 11 (Segmentation fault)): the kernels it was to sample stay unmeasured"* ]]
	assert_line "### Bottleneck: Not measured"
	assert_line --partial "not measured: its samples failed"
}
