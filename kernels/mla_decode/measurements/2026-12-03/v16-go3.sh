#!/bin/bash
# call 3: the tool on v13 and v16 (same GPU), tune v16; everything in one tar
top=$PWD; d=$top/.dev/k16; o=/tmp/o3; rm -rf $o; mkdir -p $o
export PATH=$top/.dev/wbuild/bin:$PATH KOPT_INJECT_LIB=$top/.dev/tool/libkopt-inject.so
cp .dev/lib/libcjson.so.1 .dev/tool/
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $o/gpu.txt
r=/tmp/rec16; rm -rf $r; mkdir -p $r; tar -C .dev/rec -cf - . | tar -C $r -xf -
cd $r && git init -q -b main && git config user.name rec && git config user.email rec@example.com && git add -A && git commit -qm rec
git kopt profile mla-decode v13 --save-captures $o/cap --no-devlog > $o/v13.txt 2>&1; echo "v13 rc=$?"
git kopt verify mla-decode v16 --save-captures $o/cap --no-devlog > $o/v16.txt 2>&1; echo "v16 rc=$?"
git add -A && git commit -qm verify
( time git kopt tune mla-decode v16 --strategy exhaustive --budget 6m ) > $o/tune.txt 2>&1; echo "tune rc=$?"
git add -A && git commit -qm tune && git format-patch -q -1 -o $o/patch
cd $top; tar -C $o -czf $OUT/o3.tgz .
grep -E 'μs|Verdict' $o/v13.txt $o/v16.txt | head -30; tail -12 $o/tune.txt; cat $o/gpu.txt
