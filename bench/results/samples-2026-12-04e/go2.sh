#!/bin/bash
# v8 against ncu's application replay: the first call's comparison found
# no ncu-app rows for v8 (8.5 s); again, with its logs kept, with and
# without --iters 200 (the command of bench/README.md).
set -u
top=$PWD; d=$top/.dev/g33; o=/tmp/g33b; rm -rf $o; mkdir -p $o
LIB=$d/libkopt-inject.so
V8="$top/kernels/mla_decode/build/v8/bench --b 32 --s 1 --t 4096"
$V8 > $o/v8-plain.txt 2>&1; echo "exit $?" >> $o/v8-plain.txt
timeout 200 python3 $top/bench/ncu-compare --no-ncu --ncu-app --runs 3 --lib $LIB --name v8 --out $o/v8 -- $V8 > $o/v8.txt 2>&1; echo "exit $?" >> $o/v8.txt
timeout 200 python3 $top/bench/ncu-compare --no-ncu --ncu-app --runs 3 --lib $LIB --name v8-iters200 --out $o/v8i -- $V8 --iters 200 > $o/v8i.txt 2>&1; echo "exit $?" >> $o/v8i.txt
for f in v8 v8i; do echo "== $f"; tail -6 $o/$f.txt; tail -5 $o/$f/ncu-app.log; ls $o/$f; done
find $o -name "*.so" -delete
tar -C $o -czf $OUT/g33b.tgz .
