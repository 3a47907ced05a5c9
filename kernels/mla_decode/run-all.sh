#!/bin/sh
# Check and time built versions on both trials, each twice for spread.
#
#   ./run-all.sh [-d BINDIR] [-o LOGDIR] [VERSION...]
#
# BINDIR holds VERSION/bench (default: build); LOGDIR gets one log per
# version (default: logs).  Also runs the edge-case sizes (t not a
# multiple of the tile, several positions, small batches) with --check.
# Prints one summary line per run last; exits 1 if any run failed.
bindir=build
logdir=logs
while getopts d:o: opt; do
	case $opt in
	d) bindir=$OPTARG ;;
	o) logdir=$OPTARG ;;
	*) echo "usage: $0 [-d BINDIR] [-o LOGDIR] [VERSION...]" >&2; exit 129 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- $(cd "$bindir" && ls -d v* 2>/dev/null)
mkdir -p "$logdir"
fail=0
run() {	# version, log, bench arguments...
	v=$1 log=$2
	shift 2
	echo "\$ bench $*" >>"$log"
	timeout 300 "$bindir/$v/bench" "$@" >>"$log" 2>&1
	rc=$?
	echo "exit $rc" >>"$log"
	[ $rc -eq 0 ] || { fail=1; echo "$v $*: exit $rc" >>"$logdir/failures"; }
}
for v in "$@"; do
	log=$logdir/$v.log
	: >"$log"
	for edge in "--b 3 --s 2 --t 1000" "--b 2 --s 1 --t 77" \
		    "--b 1 --s 3 --t 4160"; do
		run "$v" "$log" $edge --check --iters 3
	done
	for rep in 1 2; do
		run "$v" "$log" --b 32 --s 1 --t 4096 --check
		run "$v" "$log" --b 32 --s 16 --t 4096 --check
	done
done
grep -h '^mla_decode\|FAILED\|fatal' "$logdir"/v*.log
exit $fail
