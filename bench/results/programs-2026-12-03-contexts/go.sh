#!/bin/bash
# two_contexts: plain, under the library (first + second run), ncu kernel and application replay
top=$PWD; d=$top/.dev/c12; o=/tmp/o12; rm -rf $o; mkdir -p $o
cp .dev/lib/libcjson.so.1 $d/ 2>/dev/null
export LD_LIBRARY_PATH=$d:$top/.dev/lib
$d/two_contexts > $o/plain.txt 2>&1; echo "plain rc=$?"
CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_OUT=$o/first.json KOPT_INJECT_VERBOSE=1 $d/two_contexts > $o/inj1.txt 2>$o/first.log; echo "inj rc=$?"
CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_FIRST_RUN=$o/first.json KOPT_INJECT_OUT=$o/second.json KOPT_INJECT_VERBOSE=1 $d/two_contexts > $o/inj2.txt 2>$o/second.log; echo "inj2 rc=$?"
timeout 400 python3 $d/ncu-compare --lib $d/libkopt-inject.so --ncu-app --runs 3 --name two_contexts --out $o/cmp -- $d/two_contexts > $o/compare.txt 2>&1; echo "compare rc=$?"
tar -C $o -czf $OUT/o12.tgz .
cat $o/plain.txt $o/inj1.txt; tail -60 $o/compare.txt
python3 - <<'PY'
import json
for f in ['/tmp/o12/first.json','/tmp/o12/second.json']:
    d=json.load(open(f))
    print(f, d['profiler'].get('context_moves'), d['process'].get('launch_calls_other_context'), d['errors'])
    for k in d['kernels']:
        print('  ', k.get('name'), k.get('launch_calls'), k.get('not_profiled'), len(k.get('samples',[])))
PY
grep -h "move\|context\|error" $o/first.log $o/second.log | head -30
