#!/bin/bash
# On the H200, 2026-12-04: the library of main (0e201a4, after the
# review that made one function enable and disable a graph's copied
# nodes), the programs built with nvcc -O3 -gencode=arch=compute_90,code=sm_90,
# LD_LIBRARY_PATH naming the libraries the machine lacks.  Outputs beside
# this file: wall.txt, the verbose timelines (*-first.log, *-second.log: the
# second of three rounds), the comparisons (<program>.txt).
# timelines of the library's two runs against plain runs, then the
# programs against ncu's application replay with the library of main
set -u
top=$PWD; o=/tmp/g13; rm -rf $o; mkdir -p $o/t $o/m
export LD_LIBRARY_PATH=$top/.dev/lib
LIB=$top/lib/inject/libkopt-inject.so; BIN=$top/bench/programs/build
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
t() { local s=$EPOCHREALTIME; "$@" >/dev/null 2>>$o/t/err.txt; local e=$EPOCHREALTIME; awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}'; }
for p in five_kernels child_graphs graph_kernels; do
  for r in 1 2 3; do
    echo "$p plain $(t $BIN/$p)" >> $o/t/wall.txt
    echo "$p first $(t env CUDA_INJECTION64_PATH=$LIB KOPT_INJECT_VERBOSE=1 KOPT_INJECT_OUT=$o/t/$p-a$r.json sh -c "exec $BIN/$p 2>$o/t/$p-a$r.log")" >> $o/t/wall.txt
    echo "$p second $(t env CUDA_INJECTION64_PATH=$LIB KOPT_INJECT_VERBOSE=1 KOPT_INJECT_FIRST_RUN=$o/t/$p-a$r.json KOPT_INJECT_OUT=$o/t/$p-b$r.json sh -c "exec $BIN/$p 2>$o/t/$p-b$r.log")" >> $o/t/wall.txt
  done
done
cat $o/t/wall.txt
BIN=$BIN RUNS=1 timeout 420 bench/programs/measure $o/m child_graphs graph_kernels five_kernels two_contexts torch_graph > $o/m/measure.txt 2>&1
echo "measure exit $?"; cat $o/m/measure.txt
tar -C $o -czf $OUT/g13.tgz .
cp $o/t/wall.txt $o/m/measure.txt $OUT/ 2>/dev/null
