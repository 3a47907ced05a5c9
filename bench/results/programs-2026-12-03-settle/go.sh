#!/bin/bash
top=$PWD; d=$top/.dev/s12; o=/tmp/s12; rm -rf $o; mkdir -p $o
cp .dev/lib/libcjson.so.1 $d/ 2>/dev/null
export LD_LIBRARY_PATH=$d:$top/.dev/lib
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $o/gpu.txt
cmp() { n=$1; shift; timeout 200 python3 $d/ncu-compare --lib $d/libkopt-inject.so --no-ncu --ncu-app --runs 1 --name $n --out $o/$n -- "$@" > $o/$n.txt 2>&1; echo "$n rc=$?"; tail -5 $o/$n.txt; }
cmp graph_kernels $d/graph_kernels
cmp torch_graph python3 $d/torch_graph.py
cmp torch_forward python3 $d/torch_forward.py
cmp triton_once python3 $d/triton_once.py
tar -C $o -czf $OUT/s12.tgz .
