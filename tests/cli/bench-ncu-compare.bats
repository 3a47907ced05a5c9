#!/usr/bin/env bats
# bench/ncu-compare's verdict, without a GPU: a stand-in program writes a
# recorded H200 capture where the injection library would, and ncu's
# side comes from a CSV made here in ncu's --csv --page raw layout.

load helper

setup() {
	setup_repo
	NCU_COMPARE="$BATS_TEST_DIRNAME/../../bench/ncu-compare"
	cat >prog <<-'SH'
	#!/bin/sh
	# crashes in the second run when CRASH2 is set, as one did on an H200
	if [ -n "$KOPT_INJECT_FIRST_RUN" ] && [ -n "$CRASH2" ]; then
		kill -SEGV $$
	fi
	[ -n "$KOPT_INJECT_OUT" ] && cp "$CAPTURE" "$KOPT_INJECT_OUT"
	exit 0
	SH
	chmod +x prog
}

# ncu's rows for the kernels of a capture, each launch with the values
# of the library's first sample; EXTRA adds a kernel the library never saw
ncu_csv() {
	python3 - "$CAPTURE" "$@" <<-'PY'
	import csv, json, sys
	d = json.load(open(sys.argv[1]))
	metrics = d["profiler"]["metrics"]
	w = csv.writer(open(sys.argv[2], "w"), quoting=csv.QUOTE_ALL)
	w.writerow(["ID", "Kernel Name", "Grid Size", "Block Size"] + metrics)
	w.writerow(["", "", "", ""] + ["unit"] * len(metrics))
	n = 0
	kernels = [k for k in d["kernels"] if k["launch_calls"] > 0]
	if len(sys.argv) > 3:
	    kernels = kernels[:0]
	for k in kernels:
	    vals = k["profiled"][0]["metrics"] if k["profiled"] else {}
	    for i in range(k["launches"]):
	        w.writerow([str(n), k["mangled"], "(%d, %d, %d)" % tuple(k["grid"]),
	                    "(%d, %d, %d)" % tuple(k["block"])] +
	                   ["" if vals.get(m) is None else repr(vals[m]) for m in metrics])
	        n += 1
	import os
	if os.environ.get("EXTRA"):
	    w.writerow([str(n), "_Z5extrav", "(1, 1, 1)", "(32, 1, 1)"] + ["1"] * len(metrics))
	PY
}

@test "every kernel compared: the counts are printed, exit 0" {
	export CAPTURE="$FIXTURES/gpu/five-kernels.json"
	ncu_csv app.csv
	run python3 "$NCU_COMPARE" --lib /dev/null --runs 1 --no-ncu \
		--ncu-app-csv app.csv --out out -- ./prog
	assert_success
	assert_line "compared 5 kernels (ncu-app measured 5), 48 metric pairs, over the launches each sample covers"
	assert_line "  samples at launches 0 (second run)"
	refute_output --partial "FAIL"
}

@test "a kernel ncu measured and the library did not fails the comparison" {
	export CAPTURE="$FIXTURES/gpu/five-kernels.json" EXTRA=1
	ncu_csv app.csv
	run python3 "$NCU_COMPARE" --lib /dev/null --runs 1 --no-ncu \
		--ncu-app-csv app.csv --out out -- ./prog
	assert_failure 1
	assert_line "FAIL: _Z5extrav: ncu-app measured 1 launches, the library never saw it"
}

@test "kernels without samples are named with the library's reason" {
	export CAPTURE="$FIXTURES/gpu/torch-forward-second-run-failed.json"
	export CRASH2=1
	ncu_csv app.csv
	run --separate-stderr python3 "$NCU_COMPARE" --lib /dev/null --runs 1 \
		--no-ncu --ncu-app-csv app.csv --out out -- ./prog
	assert_failure 1
	[[ "$stderr" == *"warning: the second injected run exited -11"* ]]
	assert_line "FAIL: nvjet_sm90_tst_128x64_64x8_1x2_h_bz_bias_TNT: ncu measured 8 launches, the library none (samples-failed)"
	assert_line --partial "compared 2 kernels (ncu-app measured 12)"
}

@test "a comparison that compared nothing fails" {
	export CAPTURE="$FIXTURES/gpu/five-kernels.json"
	ncu_csv app.csv empty
	run python3 "$NCU_COMPARE" --lib /dev/null --runs 1 --no-ncu \
		--ncu-app-csv app.csv --out out -- ./prog
	assert_failure 1
	assert_line "FAIL: nothing was compared"
}

@test "ncu's own error is named when its run gave no rows" {
	export CAPTURE="$FIXTURES/gpu/five-kernels.json"
	# an ncu that fails as application replay does on a program whose
	# launches differ from run to run
	cat >ncu <<-'SH'
	#!/bin/sh
	while [ $# -gt 0 ]; do
		[ "$1" = --log-file ] && log=$2
		shift
	done
	cat >"$log" <<-LOG
	==PROF== Connected to process 1 (prog)
	==ERROR== Unexpected number of profiled kernels.
	==ERROR== Check the --app-replay-match option.
	LOG
	exit 1
	SH
	chmod +x ncu
	run --separate-stderr python3 "$NCU_COMPARE" --lib /dev/null --runs 1 \
		--no-ncu --ncu-app --ncu ./ncu --out out -- ./prog
	assert_failure 1
	[[ "$stderr" == *"warning: ncu-app exited 1 with 0 rows: Unexpected number of profiled kernels. Check the --app-replay-match option. (see out/ncu-app.log)"* ]]
	assert_line "compared 0 kernels (ncu-app measured 0), 0 metric pairs, over the launches each sample covers"
	assert_line "FAIL: nothing was compared (ncu-app: Unexpected number of profiled kernels. Check the --app-replay-match option.)"
}
