#!/bin/bash
# On the H200, 2026-12-04: libkopt-inject.so of main with the experiment of
# avail-experiment.diff (KOPT_INJECT_AVAIL: the counter availability image
# read from a file instead of queried), not merged.
# the counter availability image read from a file instead of queried:
# set-up time and wall, alternated with the query
set -u
top=$PWD; d=$top/.dev/g17; o=/tmp/g17; rm -rf $o; mkdir -p $o
export LD_LIBRARY_PATH=$top/.dev/lib
LIB=$d/libkopt-inject.so; BIN=$top/bench/programs/build
t() { local s=$EPOCHREALTIME; "$@" >/dev/null 2>>$o/err.txt; local e=$EPOCHREALTIME; awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}'; }
env CUDA_INJECTION64_PATH=$LIB KOPT_INJECT_AVAIL=$o/avail.bin KOPT_INJECT_VERBOSE=1 KOPT_INJECT_OUT=$o/prime.json $BIN/child_graphs >/dev/null 2>$o/prime.log
ls -la $o/avail.bin; grep "set-up" $o/prime.log
for p in child_graphs graph_kernels five_kernels; do
 for r in 1 2 3 4 5; do
  echo "$p plain $(t $BIN/$p)" >> $o/wall.txt
  echo "$p query $(t env CUDA_INJECTION64_PATH=$LIB KOPT_INJECT_OUT=$o/$p-q$r.json $BIN/$p)" >> $o/wall.txt
  echo "$p file $(t env CUDA_INJECTION64_PATH=$LIB KOPT_INJECT_AVAIL=$o/avail.bin KOPT_INJECT_OUT=$o/$p-f$r.json $BIN/$p)" >> $o/wall.txt
 done
done
env CUDA_INJECTION64_PATH=$LIB KOPT_INJECT_AVAIL=$o/avail.bin KOPT_INJECT_VERBOSE=1 KOPT_INJECT_OUT=$o/v.json $BIN/child_graphs >/dev/null 2>$o/file.log
grep "set-up\|first Start\|pass 1 started" $o/file.log | head -14
python3 - $o <<'PY'
import json,sys,statistics,collections
o=sys.argv[1]
w=collections.defaultdict(list)
for l in open(o+'/wall.txt'):
    p,k,v=l.split(); w[(p,k)].append(float(v))
for p in ['child_graphs','graph_kernels','five_kernels']:
    out=[p]
    for k in ['plain','query','file']:
        out.append('%s %.3f'%(k,statistics.median(w[(p,k)])))
    for k in ['q','f']:
        su=[];sw=[];nul=0;tot=0
        for r in range(1,6):
            d=json.load(open(f'{o}/{p}-{k}{r}.json'))
            su.append(d['profiler'].get('setup_seconds',0)); sw.append(d['profiler'].get('setup_wait_seconds',0))
            for kk in d['kernels']:
                for s in kk['profiled']:
                    tot+=1; nul+=sum(1 for v in s['metrics'].values() if v is None)
        out.append('%s setup %.3f wait %.3f nulls %d/%d samples'%(k,statistics.median(su),statistics.median(sw),nul,tot))
    print(' | '.join(out))
PY
tar -C $o -czf $OUT/g17.tgz .
