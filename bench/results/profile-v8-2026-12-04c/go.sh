#!/bin/bash
# On the H200, 2026-12-04 (evening): git-kopt and libkopt-inject.so of main
# (a2d3622: git-kopt static but for libcjson). v8 at decode: plain, the
# library alone, git kopt profile; nine rounds alternated
set -u
top=$PWD; d=$top/.dev/g31; o=/tmp/g31; rm -rf $o; mkdir -p $o

mkdir -p $d/bin; printf "#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s/git-kopt \"\$@\"\n" $d $d > $d/bin/git-kopt; chmod +x $d/bin/git-kopt
export PATH=$d/bin:$PATH KOPT_INJECT_LIB=$d/libkopt-inject.so LD_LIBRARY_PATH=$d
r=/tmp/v8repo; rm -rf $r; mkdir -p $r/k/v8 $r/docs/kernels; cd $r
git init -q -b main; git config user.name v8; git config user.email v8@example.com
cp -r $top/kernels/mla_decode/build/v8 k/v8/build
printf '[trial "decode"]\n\tb = 32\n\ts = 1\n\tt = 4096\n[language "cuda-c"]\n\tcontrol = thread\n[kernel "mla"]\n\tlanguage = cuda-c\n\tsource = k/{version}\n\trun = k/{version}/build/bench --b {b} --s {s} --t {t}\n' > .kopt
git add -A; git commit -qm start
B="k/v8/build/bench --b 32 --s 1 --t 4096"
t() { local s=$EPOCHREALTIME; "$@" >/dev/null 2>>$o/err.txt; local e=$EPOCHREALTIME; awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}'; }
$B > /dev/null; git kopt profile mla v8 --trial decode >/dev/null 2>&1
L="env CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_CACHE=$o/cache"
printf 'round\tplain\tlib\tprofile\n' > $o/cost.tsv
for i in 1 2 3 4 5 6 7 8 9; do
  p=$(t $B); l=$(t $L KOPT_INJECT_OUT=$o/l$i.json $B); g=$(t git kopt profile mla v8 --trial decode)
  printf '%s\t%s\t%s\t%s\n' $i $p $l $g >> $o/cost.tsv
done
cat $o/cost.tsv
python3 - $o <<'PY'
import sys,statistics
o=sys.argv[1]
rows=[l.split() for l in open(o+'/cost.tsv').read().splitlines()[1:]]
v={c:[float(r[i+1]) for r in rows] for i,c in enumerate(['plain','lib','profile'])}
print(' '.join('%s %.3f'%(c,statistics.median(v[c])) for c in v))
print(' '.join('%s %.2fx'%(c,statistics.median([b/a for a,b in zip(v['plain'],v[c])])) for c in ('lib','profile')))
PY
cp -r $r/docs $o/ 2>/dev/null; cd $top; tar -C $o -czf $OUT/g31.tgz .
