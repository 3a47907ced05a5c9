#!/bin/bash
# go2.sh LOGNAME NEW OTHERS... : edge sizes (checked) for NEW, then both trials twice for all, interleaved; split sweep for NEW
d=$(dirname $0); log=$OUT/$1; shift; new=$1
run() { v=$1; shift; echo "\$ $v bench $*" >>$log; timeout ${TO:-30} $d/$v/bench "$@" >>$log 2>&1; rc=$?; echo "exit $rc" >>$log; return $rc; }
ok=1
for e in "--b 3 --s 2 --t 1000" "--b 2 --s 1 --t 77" "--b 1 --s 3 --t 4160"; do
  run $new $e --check --iters 3; [ $? -eq 124 ] && { ok=0; echo "$new hung: skipped" >>$log; break; }
done
[ $ok = 1 ] || shift
for rep in 1 2; do for v in "$@"; do
  run $v --b 32 --s 1 --t 4096 --check
  run $v --b 32 --s 16 --t 4096 --check
done; done
[ $ok = 1 ] && for n in 1 2 4; do echo "\$ MLA_SPLITS=$n $new" >>$log; MLA_SPLITS=$n timeout 30 $d/$new/bench --b 32 --s 1 --t 4096 >>$log 2>&1; done
grep -h '^\$\|^mla_decode\|FAIL\|exit [1-9]\|hung' $log
