#!/bin/bash
# first runs that launch graphs node by node (libkopt-inject.so of branch
# gu12) against the same library with KOPT_INJECT_UNROLL=0, compared with
# the application-replay CSVs of programs-2026-12-04b-timelines
set -u
top=$PWD; d=$top/.dev/g15; o=/tmp/g15; rm -rf $o; mkdir -p $o
export LD_LIBRARY_PATH=$top/.dev/lib
LIB=$d/libkopt-inject.so; BIN=$top/bench/programs/build
for p in child_graphs graph_kernels five_kernels; do
  for u in 1 0; do
    timeout 150 python3 $d/ncu-compare --no-ncu --ncu-app-csv $d/$p-ncu-app.csv --runs 5 --set KOPT_INJECT_UNROLL=$u --lib $LIB --name $p --out $o/$p-u$u -- $BIN/$p > $o/$p-u$u.txt 2>&1; echo "exit $?" >> $o/$p-u$u.txt
    echo "== $p unroll=$u"; grep -h "wall seconds\|second run for\|compared\|largest" $o/$p-u$u.txt
  done
done
env CUDA_INJECTION64_PATH=$LIB KOPT_INJECT_VERBOSE=1 KOPT_INJECT_OUT=$o/cg-first.json $BIN/child_graphs > /dev/null 2> $o/cg-first.log
grep -v "window: take\|first launch" $o/cg-first.log | tail -25
timeout 200 python3 $d/ncu-compare --no-ncu --ncu-app-csv $d/torch_graph-ncu-app.csv --runs 1 --lib $LIB --name torch_graph --out $o/torch_graph -- python3 bench/programs/torch_graph.py > $o/torch_graph.txt 2>&1; echo "exit $?" >> $o/torch_graph.txt
echo "== torch_graph"; grep -h "wall seconds\|second run for\|compared\|largest" $o/torch_graph.txt
tar -C $o -czf $OUT/g15.tgz .
