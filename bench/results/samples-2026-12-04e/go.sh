#!/bin/bash
# On the H200: libkopt-inject.so and git-kopt of branch samp12 (a kernel's
# second sample only while its first is in doubt).  Part "cost": v8 at
# decode, seven rounds alternated: plain, the library taking every sample
# (KOPT_INJECT_MORE_SAMPLES=1, the old behaviour), the library by default,
# git kopt profile.  Part "c" / "py": bench/ncu-compare of the programs
# against ncu's application replay, the new default first (it runs ncu),
# then every sample against the same ncu output.
set -u
part=$1
top=$PWD; d=$top/.dev/g33; o=$OUT/g33-$part; mkdir -p $o
mkdir -p $d/bin; printf "#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s/git-kopt \"\$@\"\n" $d $d > $d/bin/git-kopt; chmod +x $d/bin/git-kopt
export PATH=$d/bin:$PATH KOPT_INJECT_LIB=$d/libkopt-inject.so
LIB=$d/libkopt-inject.so; BIN=$top/bench/programs/build
V8="$top/kernels/mla_decode/build/v8/bench --b 32 --s 1 --t 4096"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $o/system.txt
t() { local s=$EPOCHREALTIME; "$@" >/dev/null 2>>$o/err.txt; local e=$EPOCHREALTIME; awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}'; }
cmp_one() { # name runs cmd...
  local p=$1 n=$2; shift 2
  timeout 280 python3 $top/bench/ncu-compare --no-ncu --ncu-app --runs $n --lib $LIB --set KOPT_INJECT_MORE_SAMPLES=0 --name $p --out $o/$p-new -- "$@" > $o/$p-new.txt 2>&1; echo "exit $?" >> $o/$p-new.txt
  timeout 200 python3 $top/bench/ncu-compare --no-ncu --ncu-app-csv $o/$p-new/ncu-app.csv --runs $n --lib $LIB --set KOPT_INJECT_MORE_SAMPLES=1 --name $p --out $o/$p-old -- "$@" > $o/$p-old.txt 2>&1; echo "exit $?" >> $o/$p-old.txt
  for v in new old; do echo "== $p $v"; grep -h "wall seconds\|second run for\|compared\|largest\|FAIL\|^exit" $o/$p-$v.txt; done
}
case $part in
cost)
  r=/tmp/v8repo; rm -rf $r; mkdir -p $r/k/v8 $r/docs/kernels; cd $r
  git init -q -b main; git config user.name v8; git config user.email v8@example.com
  cp -r $top/kernels/mla_decode/build/v8 k/v8/build
  printf '[trial "decode"]\n\tb = 32\n\ts = 1\n\tt = 4096\n[language "cuda-c"]\n\tcontrol = thread\n[kernel "mla"]\n\tlanguage = cuda-c\n\tsource = k/{version}\n\trun = k/{version}/build/bench --b {b} --s {s} --t {t}\n' > .kopt
  git add -A; git commit -qm start
  B="k/v8/build/bench --b 32 --s 1 --t 4096"
  $B > /dev/null; git kopt profile mla v8 --trial decode >$o/profile-first.txt 2>&1; echo "exit $?" >> $o/profile-first.txt
  L="env CUDA_INJECTION64_PATH=$LIB KOPT_INJECT_CACHE=$o/cache"
  printf 'round\tplain\tall\tdefault\tprofile\n' > $o/cost.tsv
  for i in 1 2 3 4 5 6 7 8 9; do
    p=$(t $B); a=$(t $L KOPT_INJECT_MORE_SAMPLES=1 KOPT_INJECT_OUT=$o/all$i.json $B); l=$(t $L KOPT_INJECT_OUT=$o/def$i.json $B); g=$(t git kopt profile mla v8 --trial decode)
    printf '%s\t%s\t%s\t%s\t%s\n' $i $p $a $l $g >> $o/cost.tsv
  done
  python3 - $o <<'PY' > $o/cost-summary.txt
import sys,statistics
o=sys.argv[1]
rows=[l.split() for l in open(o+'/cost.tsv').read().splitlines()[1:]]
cols=['plain','all','default','profile']
v={c:[float(r[i+1]) for r in rows] for i,c in enumerate(cols)}
print(' '.join('%s %.3f'%(c,statistics.median(v[c])) for c in v))
print(' '.join('%s %.2fx'%(c,statistics.median([b/a for a,b in zip(v['plain'],v[c])])) for c in cols[1:]))
PY
  cp -r $r/docs $o/ 2>/dev/null; rm -rf $o/cache
  cat $o/cost.tsv $o/cost-summary.txt; tail -3 $o/profile-first.txt
  cd $top
  for p in five_kernels graph_kernels child_graphs; do cmp_one $p 3 $BIN/$p; done
  cmp_one v8 3 $V8
  ;;
py)
  cmp_one two_contexts 1 $BIN/two_contexts
  for p in triton_once torch_forward torch_graph; do cmp_one $p 1 python3 $top/bench/programs/$p.py; done
  ;;
esac
find $o -name "*.so" -delete
