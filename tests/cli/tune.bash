# Shared by the tune tests: a kernel whose "benchmark" is a shell script
# that takes two tuning parameters, BN and ST, and reports a time that
# is smallest at BN=64, ST=3 (and grows with b), the way a real one
# prints its median.  Configurations can be made to fail in every way a
# real one can through $FAIL ("BN ST mode" lines; modes: check, crash,
# hang, silent, build; time:US:MIN:MAX reports that median, min and
# max).  With $STOP_AT, the run of that number interrupts git-kopt as
# Ctrl-C would.

tune_setup() {
	setup_repo
	mkdir -p k/v0 k/v1
	echo 'int v0;' >k/v0/k.cu
	echo 'int v1;' >k/v1/k.cu
	cat >bench <<-'SH'
	#!/bin/sh
	# usage: bench BN ST b s t
	bn=$1 st=$2
	echo "$bn $st ${SLURM_JOB_ID:-local}" >>"${RUNLOG:-/dev/null}"
	if [ -n "$STOP_AT" ] && [ "$(wc -l <"$RUNLOG")" -eq "$STOP_AT" ]; then
		p=$PPID
		while [ "$p" -gt 1 ]; do
			if [ "$(cat "/proc/$p/comm")" = git-kopt ]; then
				kill -INT "$p"
				break
			fi
			p=$(awk '{ print $4 }' "/proc/$p/stat")
		done
	fi
	mode=$(awk -v bn="$bn" -v st="$st" '$1 == bn && $2 == st { print $3 }' \
		"${FAIL:-/dev/null}")
	case $mode in
	check) echo "# check FAILED: rel_err 0.5"; exit 1 ;;
	crash) kill -SEGV $$ ;;
	hang) sleep 30 ;;
	silent) exit 0 ;;
	time:*) echo "$mode" |
		awk -F: '{ printf "k: median %s us (min %s, max %s)\n", $2, $3, $4 }'
		exit 0 ;;
	cancel) scancel "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"; sleep 30 ;;
	esac
	[ -n "$SLEEP" ] && sleep "$SLEEP"
	d1=$((bn > 64 ? bn - 64 : 64 - bn))
	d2=$((st > 3 ? st - 3 : 3 - st))
	echo "k b=$3 s=$4 t=$5: median $((40 + d1 + 7 * d2 + $3 / 8)).5 us (min 1.0, max 2.0)"
	SH
	chmod +x bench
	cat >build.sh <<-'SH'
	#!/bin/sh
	# usage: build.sh VERSION TILING BN ST
	mode=$(awk -v bn="$3" -v st="$4" '$1 == bn && $2 == st { print $3 }' \
		"${FAIL:-/dev/null}")
	[ "$mode" = build ] && { echo "k.cu:1: error: too many registers" >&2; exit 2; }
	echo "$3 $4" >>"${BUILDLOG:-/dev/null}"
	mkdir -p "out/$1-$2"
	SH
	chmod +x build.sh
	export RUNLOG="$BATS_TEST_TMPDIR/run.log" BUILDLOG="$BATS_TEST_TMPDIR/build.log"
	export FAIL="$BATS_TEST_TMPDIR/fail"
	: >"$FAIL"
	echo out/ >.gitignore
}

# tune_kopt [extra lines of the kernel section]
tune_kopt() {
	cat >.kopt <<-KOPT
	[kopt]
		noise = 3%
		timeout = 3
	[trial "decode"]
		b = 32
		s = 1
		t = 4096
	[trial "spec-decode"]
		b = 32
		s = 16
		t = 4096
	[language "cuda-c"]
		control = thread
	[kernel "k"]
		language = cuda-c
		source = k/{version}
		build = ./build.sh {version} {tiling} {BN} {ST}
		run = ./bench {BN} {ST} {b} {s} {t}
		tune = BN=16,32,64,128,256
		tune = ST=1,2,3,4,5
		tune-restrict = BN * ST <= 512
	KOPT
	for line in "$@"; do
		printf '\t%s\n' "$line" >>.kopt
	done
}

tune_devlog() {
	mkdir -p docs/kernels
	cat >docs/kernels/k.md <<-'MD'
	# k

	## Overview

	A kernel.

	## Development log

	### V0: base

	The base.

	### V1: tiled

	Tiles.

	- a list item
	MD
}
