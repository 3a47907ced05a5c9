#!/bin/bash
# On the H200, 2026-12-04: libkopt-inject.so of branch ws12 (first Start on
# the helper thread when the program has launched nothing yet), v8 built.
# KOPT_INJECT_WARM_START=2 (the first Start paid on the helper thread
# when the program has launched nothing yet) against 0, image kept
set -u
top=$PWD; d=$top/.dev/g21; o=/tmp/g21; rm -rf $o; mkdir -p $o
export LD_LIBRARY_PATH=$top/.dev/lib
LIB=$d/libkopt-inject.so; BIN=$top/bench/programs/build
KOPT_TEST_OUT=$o/gpu timeout 200 sh $d/gpu/run $LIB $d/gpu/kernels > $o/gpu-tests.txt 2>&1; echo "gpu tests exit $?" >> $o/gpu-tests.txt
echo "gpu tests: $(grep -c '^ok' $o/gpu-tests.txt) ok; $(tail -1 $o/gpu-tests.txt)"; grep -v "^ok" $o/gpu-tests.txt | head -5
t() { local s=$EPOCHREALTIME; "$@" >/dev/null 2>>$o/err.txt; local e=$EPOCHREALTIME; awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}'; }
L="env CUDA_INJECTION64_PATH=$LIB KOPT_INJECT_CACHE=$o/cache"
V8="$top/kernels/mla_decode/build/v8/bench --b 32 --s 1 --t 4096"
$L KOPT_INJECT_OUT=$o/prime.json $V8 >/dev/null 2>&1
for r in 1 2 3 4 5 6 7; do
  echo "v8 plain $(t $V8)" >> $o/wall.txt
  echo "v8 ws2 $(t $L KOPT_INJECT_OUT=$o/v8-a$r.json $V8)" >> $o/wall.txt
  echo "v8 ws0 $(t $L KOPT_INJECT_WARM_START=0 KOPT_INJECT_OUT=$o/v8-b$r.json $V8)" >> $o/wall.txt
done
for p in five_kernels child_graphs graph_kernels; do
 for r in 1 2 3 4 5; do
  echo "$p plain $(t $BIN/$p)" >> $o/wall.txt
  echo "$p ws2 $(t $L KOPT_INJECT_OUT=$o/$p-a$r.json $BIN/$p)" >> $o/wall.txt
  echo "$p ws0 $(t $L KOPT_INJECT_WARM_START=0 KOPT_INJECT_OUT=$o/$p-b$r.json $BIN/$p)" >> $o/wall.txt
 done
done
env CUDA_INJECTION64_PATH=$LIB KOPT_INJECT_CACHE=$o/cache KOPT_INJECT_VERBOSE=1 KOPT_INJECT_OUT=$o/v8v.json $V8 > /dev/null 2> $o/v8.log; grep "set-up: \(first\|the program\)" $o/v8.log
env CUDA_INJECTION64_PATH=$LIB KOPT_INJECT_CACHE=$o/cache KOPT_INJECT_VERBOSE=1 KOPT_INJECT_OUT=$o/fkv.json $BIN/five_kernels > /dev/null 2> $o/five.log; grep "set-up: \(first\|the program\)" $o/five.log
python3 - $o <<'PY'
import sys,statistics,collections,json
o=sys.argv[1]; w=collections.defaultdict(list)
for l in open(o+'/wall.txt'):
    p,k,v=l.split(); w[(p,k)].append(float(v))
for p,n in [('v8',7),('five_kernels',5),('child_graphs',5),('graph_kernels',5)]:
    s=[sum(len(k['profiled']) for k in json.load(open(f'{o}/{p}-{x}{r}.json'))['kernels']) for x in 'ab' for r in range(1,n+1)]
    nul=sum(1 for x in 'ab' for r in range(1,n+1) for k in json.load(open(f'{o}/{p}-{x}{r}.json'))['kernels'] for sm in k['profiled'] for m in sm['metrics'].values() if m is None)
    pl=w[(p,'plain')]
    print(p, ' '.join('%s %.3f'%(k,statistics.median(w[(p,k)])) for k in ('plain','ws2','ws0')), 'ratio ws2 %.2fx ws0 %.2fx' % (statistics.median([b/a for a,b in zip(pl,w[(p,'ws2')])]), statistics.median([b/a for a,b in zip(pl,w[(p,'ws0')])])), 'samples', sorted(set(s)), 'nulls', nul)
PY
tar -C $o -czf $OUT/g21.tgz .
