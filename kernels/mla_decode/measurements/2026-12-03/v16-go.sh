#!/bin/bash
# v16-run1: v13, v16 (stagger + cluster merge), v16s0 (MLA_STAGGER=0), v16c0 (MLA_CLUSTER=0)
# go.sh: edge checks of each variant, forced split counts, then rounds of both trials
d=$(dirname $0); log=$OUT/bench.log
run() { v=$1; shift; echo "\$ $v bench $*" >>$log; timeout ${TO:-40} $d/$v/bench "$@" >>$log 2>&1; rc=$?; echo "exit $rc" >>$log; return $rc; }
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >>$log
for v in v16 v16s0 v16c0; do
  for e in "--b 3 --s 2 --t 1000" "--b 2 --s 1 --t 77" "--b 1 --s 3 --t 4160" "--b 5 --s 1 --t 129"; do
    run $v $e --check --iters 3
  done
done
for n in 2 3; do echo "\$ MLA_SPLITS=$n v16 spec --check" >>$log; MLA_SPLITS=$n timeout 40 $d/v16/bench --b 32 --s 16 --t 4096 --check --iters 20 >>$log 2>&1; echo "exit $?" >>$log; done
for n in 1 3; do echo "\$ MLA_SPLITS=$n v16 decode --check" >>$log; MLA_SPLITS=$n timeout 40 $d/v16/bench --b 32 --s 1 --t 4096 --check --iters 20 >>$log 2>&1; echo "exit $?" >>$log; done
for rep in 1 2 3; do for v in v13 v16 v16s0 v16c0; do
  run $v --b 32 --s 1 --t 4096 --check
  run $v --b 32 --s 16 --t 4096 --check
done; done
grep -h '^\$\|^mla_decode\|FAIL\|exit [1-9]' $log
