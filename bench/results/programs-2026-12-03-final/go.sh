#!/bin/bash
top=$PWD; o=/tmp/fin; rm -rf $o; mkdir -p $o
cp .dev/lib/libcjson.so.1 lib/inject/ 2>/dev/null
export LD_LIBRARY_PATH=$top/lib/inject:$top/.dev/lib
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $o/gpu.txt
RUNS=1 timeout 570 bench/programs/measure $o five_kernels two_contexts graph_kernels v8 torch_graph triton_once torch_forward > $o/measure.txt 2>&1; echo "measure rc=$?"
tar -C $o -czf $OUT/fin.tgz .
grep -E "^==|measured|largest|wall|FAIL|exit" $o/measure.txt $o/*.txt | head -60
