#!/bin/bash
# go.sh LOGNAME VERSION... : edge sizes (checked) for the first, then both trials, both rounds, interleaved
d=$(dirname $0); log=$OUT/$1; shift
run() { v=$1; shift; echo "\$ $v bench $*" >>$log; timeout ${TO:-30} $d/$v/bench "$@" >>$log 2>&1; echo "exit $?" >>$log; }
for v in "$@"; do [ $v = v10 ] && continue
  for e in "--b 3 --s 2 --t 1000" "--b 2 --s 1 --t 77" "--b 1 --s 3 --t 4160"; do run $v $e --check --iters 3; grep -q "exit 124" $log && { echo "$v hung"; grep -h '^mla\|FAIL\|exit' $log; exit 1; }; done
done
for rep in 1 2; do for v in "$@"; do
  run $v --b 32 --s 1 --t 4096 --check
  run $v --b 32 --s 16 --t 4096 --check
done; done
grep -h '^\$\|^mla_decode\|FAIL\|PASS\|exit\|rel_err\|median' $log | head -100
# split-count sweep at decode for the new version (timing only)
for v in "$@"; do [ $v = v10 ] && continue
  for n in 1 2 3 4; do echo "\$ MLA_SPLITS=$n $v" >>$log; MLA_SPLITS=$n timeout 60 $d/$v/bench --b 32 --s 1 --t 4096 >>$log 2>&1; done
done
grep -h '^\$ MLA\|^mla_decode' $log | tail -8
# timing-only experiment: v13 without tile refills (results wrong)
if [ -x $d/v13nl/bench ]; then for a in "--b 32 --s 1 --t 4096" "--b 32 --s 16 --t 4096"; do
  echo "\$ v13nl $a" >>$log; timeout 30 $d/v13nl/bench $a >>$log 2>&1; echo "exit $?" >>$log; done
  grep -h '^mla_decode v13nl\|v13nl' $log | tail -4; fi
# L2 policy variants of v13 (checked, one round)
for v in v13h1 v13h2; do [ -x $d/$v/bench ] || continue
  run $v --b 32 --s 1 --t 4096 --check
  run $v --b 32 --s 16 --t 4096 --check
done
grep -h '^\$ v13h\|^mla_decode\|exit' $log | tail -12
