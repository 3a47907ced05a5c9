#!/bin/bash
# the first Start on the helper thread (KOPT_INJECT_WARM_START=1) against the default, v8 at decode
top=$PWD; d=$top/.dev/w12; o=/tmp/ow; rm -rf $o; mkdir -p $o
cp .dev/lib/libcjson.so.1 $d/ 2>/dev/null
export LD_LIBRARY_PATH=$d:$top/.dev/lib
B="$d/v8/bench --b 32 --s 1 --t 4096"
t() { local s=$EPOCHREALTIME; "$@" >/dev/null 2>>$o/err.txt; local e=$EPOCHREALTIME; awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}'; }
for r in 1 2 3 4 5 6 7; do
  echo "plain $(t $B)" >> $o/lib.txt
  echo "default $(t env CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_OUT=$o/d$r.json $B)" >> $o/lib.txt
  echo "warm $(t env CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_WARM_START=1 KOPT_INJECT_OUT=$o/w$r.json $B)" >> $o/lib.txt
done
env CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_WARM_START=1 KOPT_INJECT_VERBOSE=1 KOPT_INJECT_OUT=$o/wv.json $B > /dev/null 2> $o/warm.log
env CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_VERBOSE=1 KOPT_INJECT_OUT=$o/dv.json $B > /dev/null 2> $o/default.log
# git kopt profile end to end, in a scratch repository
mkdir -p $d/bin; cat > $d/bin/git-kopt <<SH
#!/bin/sh
LD_LIBRARY_PATH=$d:$top/.dev/lib exec $d/git-kopt "\$@"
SH
chmod +x $d/bin/git-kopt
export PATH=$d/bin:$PATH KOPT_INJECT_LIB=$d/libkopt-inject.so
r=/tmp/recw; rm -rf $r; mkdir -p $r; tar -C .dev/rec -cf - . | tar -C $r -xf -
cd $r && git init -q -b main && git config user.name rec && git config user.email rec@example.com && git add -A && git commit -qm rec
make -C kernels/mla_decode VERSION=v8 BUILD=build/v8-r8-g0 TUNE='-DMLA_RESCALE=8 -DMLA_GRID_ORDER=0' >/dev/null 2>&1
git kopt profile mla-decode v8 --trial decode --no-devlog >/dev/null 2>&1
P="kernels/mla_decode/build/v8-r8-g0/bench --b 32 --s 1 --t 4096"
for r in 1 2 3 4 5; do
  echo "plain $(t env MLA_SPLITS=0 $P)" >> $o/e2e.txt
  echo "profile $(t git kopt profile mla-decode v8 --trial decode --no-devlog)" >> $o/e2e.txt
  echo "profile-warm $(t env KOPT_INJECT_WARM_START=1 git kopt profile mla-decode v8 --trial decode --no-devlog)" >> $o/e2e.txt
done
cd $top
tar -C $o -czf $OUT/ow.tgz .
python3 - <<'PY'
import collections, statistics
for f in ['/tmp/ow/lib.txt','/tmp/ow/e2e.txt']:
    d=collections.defaultdict(list)
    for l in open(f):
        k,v=l.split(); d[k].append(float(v))
    p=statistics.median(d['plain'])
    print(f, {k:(round(statistics.median(v),3), round(statistics.median(v)/p,2), [round(x,2) for x in v]) for k,v in d.items()})
PY
grep -h "first Start\|pass 1 begins\|pass 1 started\|set up in" $o/warm.log $o/default.log
tail -3 $o/err.txt
