#!/bin/bash
# What CUPTI's first Start costs depends on: the metrics, module loading, replay
set -u
top=$PWD; d=$top/.dev/g30; o=/tmp/g30b; rm -rf $o; mkdir -p $o/cache
P5=$top/bench/programs/build/five_kernels
V8="$top/kernels/mla_decode/build/v8/bench --b 32 --s 1 --t 4096"
L="env LD_LIBRARY_PATH=$d CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_CACHE=$o/cache KOPT_INJECT_VERBOSE=1"
$L KOPT_INJECT_OUT=$o/warm.json $P5 >/dev/null 2>&1
for i in 1 2 3; do
 for v in default one-metric eager kernel-replay lazy-off-one; do
  case $v in
   default) X= ;;
   one-metric) X="KOPT_INJECT_METRICS=gpu__time_duration.sum" ;;
   eager) X="CUDA_MODULE_LOADING=EAGER" ;;
   kernel-replay) X="KOPT_INJECT_REPLAY=kernel" ;;
   lazy-off-one) X="CUDA_MODULE_LOADING=EAGER KOPT_INJECT_METRICS=gpu__time_duration.sum" ;;
  esac
  for p in five v8; do
   [ $p = five ] && C=$P5 || C=$V8
   s=$EPOCHREALTIME
   $L $X KOPT_INJECT_WARM_START=0 KOPT_INJECT_OUT=$o/$p-$v-$i.json $C >/dev/null 2>$o/$p-$v-$i.log
   e=$EPOCHREALTIME
   echo "$p $v $i wall $(awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}')" >> $o/wall.txt
  done
 done
done
python3 - $o <<'PY'
import sys, re, glob, collections, statistics
o = sys.argv[1]
walls = collections.defaultdict(list)
for l in open(o + '/wall.txt'):
    p, v, i, _, w = l.split(); walls[(p, v)].append(float(w))
starts = collections.defaultdict(list)
for f in glob.glob(o + '/*-*-[0-9].log'):
    b = f.split('/')[-1][:-4]; p, rest = b.split('-', 1); v = rest.rsplit('-', 1)[0]
    t = None; first = None
    for l in open(f):
        m = re.match(r'kopt-inject: \[([0-9.]+)\] start: pass 1 begins', l)
        if m and first is None: t = float(m.group(1))
        m = re.match(r'kopt-inject: \[([0-9.]+)\] start: pass 1 started', l)
        if m and first is None and t is not None: first = float(m.group(1)) - t
    starts[(p, v)].append(first)
for k in sorted(walls):
    s = [x for x in starts[k] if x is not None]
    print('%-5s %-14s wall %.3f first Start %s' % (k[0], k[1], statistics.median(walls[k]), ('%.3f' % statistics.median(s)) if s else '-'))
PY
cd $top; tar -C $o -czf $OUT/g30b.tgz .
