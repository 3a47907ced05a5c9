#!/bin/bash
top=$PWD; o=/tmp/op2; rm -rf $o; mkdir -p $o
cp .dev/lib/libcjson.so.1 lib/inject/ 2>/dev/null
export LD_LIBRARY_PATH=$top/lib/inject:$top/.dev/lib
nvidia-smi --query-gpu=name,uuid --format=csv > $o/gpu.txt
RUNS=1 timeout 500 bench/programs/measure $o v8 torch_forward triton_once > $o/measure.txt 2>&1; echo "measure rc=$?"
tar -C $o -czf $OUT/op2.tgz .
cat $o/measure.txt | tail -20
