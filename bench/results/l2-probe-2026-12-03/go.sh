#!/bin/bash
top=$PWD; d=$top/.dev/l2p; o=/tmp/l2p; rm -rf $o; mkdir -p $o
cp .dev/lib/libcjson.so.1 $d/ 2>/dev/null
export LD_LIBRARY_PATH=$d:$top/.dev/lib
for m in kernel copy; do
  timeout 120 python3 $d/ncu-compare --lib $d/libkopt-inject.so --no-ncu --ncu-app --runs 1 --name $m --out $o/$m -- $d/l2probe $m > $o/$m.txt 2>&1; echo "$m rc=$?"
  grep -A14 "^consumer" $o/$m.txt | grep -E "consumer|samples|dram__bytes_read|lts__t_sector_hit|dram__throughput"
  grep -A14 "^producer" $o/$m.txt | grep -E "producer|samples|dram__bytes|lts__t_sector_hit"
done
for w in 0 5; do
  CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_WARMUP=$w KOPT_INJECT_OUT=$o/w$w.json $d/l2probe copy >/dev/null 2>&1
  python3 -c "
import json;d=json.load(open('$o/w$w.json'))
for k in d['kernels']:
  for s in k['profiled']: print('warmup $w', k['name'], s['launch'], s.get('window'), round(s['metrics'].get('dram__bytes_read.sum') or -1), s['metrics'].get('lts__t_sector_hit_rate.pct'))"
done
tar -C $o -czf $OUT/l2p.tgz .
