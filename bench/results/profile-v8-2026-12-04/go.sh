#!/bin/bash
# On the H200, 2026-12-04: git-kopt and libkopt-inject.so of main (5ca188f),
# the example's v8 built beside it (kernels/mla_decode/build/v8).
# git kopt profile of the example's v8 at decode against its plain run,
# five rounds alternated, in a scratch repository; and the library alone
set -u
top=$PWD; d=$top/.dev/g16; o=/tmp/g16; rm -rf $o; mkdir -p $o
cp .dev/lib/libcjson.so.1 $d/ 2>/dev/null
mkdir -p $d/bin; printf '#!/bin/sh\nLD_LIBRARY_PATH=%s:%s/.dev/lib exec %s/git-kopt "$@"\n' $d $top $d > $d/bin/git-kopt; chmod +x $d/bin/git-kopt
export PATH=$d/bin:$PATH KOPT_INJECT_LIB=$d/libkopt-inject.so LD_LIBRARY_PATH=$top/.dev/lib
r=/tmp/v8repo; rm -rf $r; mkdir -p $r/k/v8 $r/docs/kernels; cd $r
git init -q -b main; git config user.name v8; git config user.email v8@example.com
cp -r $top/kernels/mla_decode/build/v8 k/v8/build
printf '[trial "decode"]\n\tb = 32\n\ts = 1\n\tt = 4096\n[language "cuda-c"]\n\tcontrol = thread\n[kernel "mla"]\n\tlanguage = cuda-c\n\tsource = k/{version}\n\trun = k/{version}/build/bench --b {b} --s {s} --t {t}\n' > .kopt
git add -A; git commit -qm start
B="k/v8/build/bench --b 32 --s 1 --t 4096"
t() { local s=$EPOCHREALTIME; "$@" >/dev/null 2>>$o/err.txt; local e=$EPOCHREALTIME; awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}'; }
$B > /dev/null
printf 'round\tplain_s\tprofiled_s\tlibrary_s\n' > $o/cost.tsv
for i in 1 2 3 4 5 6 7; do
  p=$(t $B); g=$(t git kopt profile mla v8 --trial decode); l=$(t env CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_OUT=$o/l$i.json $B)
  printf '%s\t%s\t%s\t%s\n' $i $p $g $l >> $o/cost.tsv
done
cat $o/cost.tsv
python3 - $o/cost.tsv <<'PY'
import sys,statistics
rows=[l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
p=[float(r[1]) for r in rows]; g=[float(r[2]) for r in rows]; l=[float(r[3]) for r in rows]
print('median plain %.3f profile %.3f library %.3f; ratios (median of per-round) profile %.2fx library %.2fx' % (statistics.median(p), statistics.median(g), statistics.median(l), statistics.median([b/a for a,b in zip(p,g)]), statistics.median([b/a for a,b in zip(p,l)])))
PY
git kopt profile mla v8 --trial decode > $o/profile.txt 2>&1; head -12 $o/profile.txt; head -3 $o/err.txt
cd $top; tar -C $o -czf $OUT/g16.tgz .
