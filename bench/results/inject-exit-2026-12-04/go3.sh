#!/bin/bash
# graph_kernels' single run: where its time goes (timelines), and what
# one sample a kernel instead of two would save
set -u
top=$PWD; d=$top/.dev/g30; o=/tmp/g30c; rm -rf $o; mkdir -p $o/cache
G=$top/bench/programs/build/graph_kernels
F=$top/bench/programs/build/five_kernels
L="env LD_LIBRARY_PATH=$d CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_CACHE=$o/cache KOPT_INJECT_VERBOSE=1"
$L KOPT_INJECT_OUT=$o/warm.json $G >/dev/null 2>&1
t() { local s=$EPOCHREALTIME; "$@" >/dev/null 2>>$o/err.txt; local e=$EPOCHREALTIME; awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}'; }
for i in 1 2 3 4 5; do
  echo "graph plain $(t $G)" >> $o/wall.txt
  s=$EPOCHREALTIME; $L KOPT_INJECT_OUT=$o/g2-$i.json $G >/dev/null 2>$o/g2-$i.log; e=$EPOCHREALTIME
  echo "graph samples2 $(awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}')" >> $o/wall.txt
  s=$EPOCHREALTIME; $L KOPT_INJECT_SAMPLES=1 KOPT_INJECT_OUT=$o/g1-$i.json $G >/dev/null 2>$o/g1-$i.log; e=$EPOCHREALTIME
  echo "graph samples1 $(awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}')" >> $o/wall.txt
done
python3 - $o <<'PY'
import sys, collections, statistics
w = collections.defaultdict(list)
for l in open(sys.argv[1] + '/wall.txt'):
    p, v, x = l.split(); w[(p, v)].append(float(x))
for k in sorted(w): print(k, 'median %.3f' % statistics.median(w[k]), w[k])
PY
cd $top; tar -C $o -czf $OUT/g30c.tgz .
