#!/bin/bash
top=$PWD; d=$top/.dev/w13; o=/tmp/ow3; rm -rf $o; mkdir -p $o
cp .dev/lib/libcjson.so.1 $d/
export LD_LIBRARY_PATH=$d:$top/.dev/lib
B="$d/v8/bench --b 32 --s 1 --t 4096"
t() { local s=$EPOCHREALTIME; "$@" >/dev/null 2>>$o/err.txt; local e=$EPOCHREALTIME; awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}'; }
for r in 1 2 3 4 5; do
  echo "plain $(t $B)" >> $o/lib.txt
  echo "cold $(t env CUDA_INJECTION64_PATH=$d/lib1.so KOPT_INJECT_WARM_START=0 KOPT_INJECT_OUT=$o/c$r.json $B)" >> $o/lib.txt
  echo "warm1 $(t env CUDA_INJECTION64_PATH=$d/lib1.so KOPT_INJECT_WARM_START=1 KOPT_INJECT_OUT=$o/a$r.json $B)" >> $o/lib.txt
  echo "warm2 $(t env CUDA_INJECTION64_PATH=$d/lib2.so KOPT_INJECT_WARM_START=1 KOPT_INJECT_OUT=$o/b$r.json $B)" >> $o/lib.txt
done
for m in 1 2; do env CUDA_INJECTION64_PATH=$d/lib$m.so KOPT_INJECT_WARM_START=1 KOPT_INJECT_VERBOSE=1 KOPT_INJECT_OUT=$o/v$m.json $B > /dev/null 2> $o/warm$m.log; done
for p in five_kernels two_contexts graph_kernels; do
  timeout 200 python3 bench/ncu-compare --lib $d/lib1.so --set KOPT_INJECT_WARM_START=0 --no-ncu --ncu-app --runs 1 --name $p --out $o/$p -- $top/bench/programs/build/$p > $o/$p.txt 2>&1; echo "exit $?" >> $o/$p.txt
  tail -4 $o/$p.txt
done
tar -C $o -czf $OUT/ow3.tgz .
python3 - <<'PY'
import collections, statistics, json
d=collections.defaultdict(list)
for l in open('/tmp/ow3/lib.txt'):
    k,v=l.split(); d[k].append(float(v))
p=statistics.median(d['plain'])
print({k:(round(statistics.median(v),3), round(statistics.median(v)/p,2)) for k,v in d.items()})
for f in ['c1','a1','b1','a3','b3','v1','v2']:
    j=json.load(open('/tmp/ow3/%s.json'%f))
    print(f, [(k['name'][:20], [s['metrics'].get('dram__throughput.avg.pct_of_peak_sustained_elapsed') for s in k['profiled']]) for k in j['kernels'][:2]], j['errors'][:1])
PY
grep -h "first Start\|pass 1 begins\|pass 1 started\|set up in\|pass 2" $o/warm1.log $o/warm2.log | head -20
