#!/bin/bash
# call 2: the tool on v13 and v16 (same GPU), tune v16, bench rounds of v16 / split 2 at spec / L2 hint
top=$PWD; d=$top/.dev/k16; log=$OUT/bench2.log
export PATH=$top/.dev/wbuild/bin:$PATH KOPT_INJECT_LIB=$top/.dev/tool/libkopt-inject.so
cp .dev/lib/libcjson.so.1 .dev/tool/
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/gpu.txt
r=/tmp/rec16; rm -rf $r; mkdir -p $r; tar -C .dev/rec -cf - . | tar -C $r -xf -
cd $r && git init -q -b main && git config user.name rec && git config user.email rec@example.com && git add -A && git commit -qm rec
git kopt profile mla-decode v13 --save-captures $OUT/cap --no-devlog > $OUT/v13.txt 2>&1; echo "v13 rc=$?"
git kopt verify mla-decode v16 --save-captures $OUT/cap --no-devlog > $OUT/v16.txt 2>&1; echo "v16 rc=$?"
git add -A && git commit -qm verify
( time git kopt tune mla-decode v16 --strategy exhaustive --budget 6m ) > $OUT/tune.txt 2>&1; echo "tune rc=$?"
git add -A && git commit -qm tune && git format-patch -q -1 -o $OUT/patch && git show --stat HEAD | tail -8
cd $top
run() { v=$1; shift; echo "\$ $v bench $*" >>$log; timeout 40 $d/$v/bench "$@" >>$log 2>&1; echo "exit $?" >>$log; }
for rep in 1 2 3; do
  for v in v13 v16 v16h1; do run $v --b 32 --s 1 --t 4096 --check; run $v --b 32 --s 16 --t 4096 --check; done
  echo "\$ MLA_SPLITS=2 v16 spec" >>$log; MLA_SPLITS=2 timeout 40 $d/v16/bench --b 32 --s 16 --t 4096 --check >>$log 2>&1; echo "exit $?" >>$log
done
grep -h '^\$\|^mla_decode\|FAIL\|exit [1-9]' $log
grep -E 'μs|Verdict' $OUT/v13.txt $OUT/v16.txt | head -30; tail -30 $OUT/tune.txt
