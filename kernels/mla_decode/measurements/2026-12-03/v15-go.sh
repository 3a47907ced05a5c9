#!/bin/bash
# v15-run2 (run1: v13 and NEW in the rounds, sweep of v15 at 1 3 4 ranges)
# go.sh LOGNAME NEW... : edge sizes (checked) for each NEW, then both trials
# three rounds for v13 v15 v15h1, interleaved, all --check; fused multi-range check (v15f32)
d=$(dirname $0); log=$OUT/$1; shift
run() { v=$1; shift; echo "\$ $v bench $*" >>$log; timeout ${TO:-40} $d/$v/bench "$@" >>$log 2>&1; rc=$?; echo "exit $rc" >>$log; return $rc; }
for v in "$@"; do
  for e in "--b 3 --s 2 --t 1000" "--b 2 --s 1 --t 77" "--b 1 --s 3 --t 4160"; do
    run $v $e --check --iters 3
  done
done
for rep in 1 2 3; do for v in v13 v15 v15h1; do
  run $v --b 32 --s 1 --t 4096 --check
  run $v --b 32 --s 16 --t 4096 --check
done; done
for n in 3 4; do echo "\$ MLA_SPLITS=$n v15f32 --check" >>$log; MLA_SPLITS=$n timeout 40 $d/v15f32/bench --b 32 --s 1 --t 4096 --check >>$log 2>&1; echo "exit $?" >>$log; done
grep -h '^\$\|^mla_decode\|FAIL\|exit [1-9]' $log
