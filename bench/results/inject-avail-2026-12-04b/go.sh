#!/bin/bash
# On the H200, 2026-12-04: libkopt-inject.so of branch ka12 (the counter
# availability image kept between runs, KOPT_INJECT_CACHE).
# the counter availability image kept between runs (KOPT_INJECT_CACHE):
# GPU tests, kept/read/refused, and the programs with and without it
set -u
top=$PWD; d=$top/.dev/g18; o=/tmp/g18; rm -rf $o; mkdir -p $o
export LD_LIBRARY_PATH=$top/.dev/lib
LIB=$d/libkopt-inject.so; BIN=$top/bench/programs/build; C=$o/cache
KOPT_TEST_OUT=$o/gpu timeout 200 sh $d/gpu/run $LIB $d/gpu/kernels > $o/gpu-tests.txt 2>&1; echo "gpu tests exit $?" >> $o/gpu-tests.txt
echo "gpu tests: $(grep -c '^ok' $o/gpu-tests.txt) ok; $(tail -1 $o/gpu-tests.txt)"; grep -v "^ok" $o/gpu-tests.txt | head -5
run() { env CUDA_INJECTION64_PATH=$LIB KOPT_INJECT_CACHE=$C KOPT_INJECT_VERBOSE=1 KOPT_INJECT_OUT=$o/$1.json $BIN/child_graphs >/dev/null 2>$o/$1.log
  python3 -c "import json,sys; d=json.load(open('$o/$1.json')); p=d['profiler']; n=sum(len(k['profiled']) for k in d['kernels']); print('$1', p.get('counter_availability'), 'setup %.3f wait %.3f samples %d errors %s' % (p['setup_seconds'], p['setup_wait_seconds'], n, [e['code'] for e in d['errors']]))"; grep "counter availability" $o/$1.log; }
run read1; ls -la $C; run kept1; run kept2
f=$(ls $C/*.bin); truncate -s 100 $f; run refused; ls -la $C
chmod 666 $f 2>/dev/null; run others; chmod 600 $f
for p in child_graphs graph_kernels five_kernels; do
  for c in none kept; do
    if [ $c = kept ]; then set_="--set KOPT_INJECT_CACHE=$o/cache-$p"; else set_=""; fi
    timeout 150 python3 $d/ncu-compare --no-ncu --ncu-app-csv $d/$p-ncu-app.csv --runs 5 $set_ --lib $LIB --name $p --out $o/$p-$c -- $BIN/$p > $o/$p-$c.txt 2>&1; echo "exit $?" >> $o/$p-$c.txt
    echo "== $p $c"; grep -h "wall seconds\|second run for\|compared\|largest" $o/$p-$c.txt
  done
done
tar -C $o -czf $OUT/g18.tgz .
