#!/bin/bash
# On the H200: git-kopt of main at 311bb34 (io_uring reading, TLS on first
# use, OpenSSL SHA-1 keys, plain .kopt reading) with libkopt-inject.so of
# main.  v8 at decode: plain, the library alone, git kopt profile, five
# rounds alternated; then the views on the profiled repository, with and
# without io_uring.
set -u
top=$PWD; d=$top/.dev/g32; o=/tmp/g32; rm -rf $o; mkdir -p $o
mkdir -p $d/bin; printf "#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s/git-kopt \"\$@\"\n" $d $d > $d/bin/git-kopt; chmod +x $d/bin/git-kopt
export PATH=$d/bin:$PATH KOPT_INJECT_LIB=$d/libkopt-inject.so LD_LIBRARY_PATH=$d
{ uname -r; cat /proc/sys/kernel/io_uring_disabled 2>&1; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $o/system.txt
r=/tmp/v8repo; rm -rf $r; mkdir -p $r/k/v8 $r/docs/kernels; cd $r
git init -q -b main; git config user.name v8; git config user.email v8@example.com
cp -r $top/kernels/mla_decode/build/v8 k/v8/build
printf '[trial "decode"]\n\tb = 32\n\ts = 1\n\tt = 4096\n[language "cuda-c"]\n\tcontrol = thread\n[kernel "mla"]\n\tlanguage = cuda-c\n\tsource = k/{version}\n\trun = k/{version}/build/bench --b {b} --s {s} --t {t}\n' > .kopt
git add -A; git commit -qm start
B="k/v8/build/bench --b 32 --s 1 --t 4096"
t() { local s=$EPOCHREALTIME; "$@" >/dev/null 2>>$o/err.txt; local e=$EPOCHREALTIME; awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}'; }
$B > /dev/null; git kopt profile mla v8 --trial decode >$o/profile-first.txt 2>&1; echo "exit $?" >> $o/profile-first.txt
L="env CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_CACHE=$o/cache"
printf 'round\tplain\tlib\tprofile\n' > $o/cost.tsv
for i in 1 2 3 4 5 6 7; do
  p=$(t $B); l=$(t $L KOPT_INJECT_OUT=$o/l$i.json $B); g=$(t git kopt profile mla v8 --trial decode)
  printf '%s\t%s\t%s\t%s\n' $i $p $l $g >> $o/cost.tsv
done
python3 - $o <<'PY' > $o/cost-summary.txt
import sys,statistics
o=sys.argv[1]
rows=[l.split() for l in open(o+'/cost.tsv').read().splitlines()[1:]]
v={c:[float(r[i+1]) for r in rows] for i,c in enumerate(['plain','lib','profile'])}
print(' '.join('%s %.3f'%(c,statistics.median(v[c])) for c in v))
print(' '.join('%s %.2fx'%(c,statistics.median([b/a for a,b in zip(v['plain'],v[c])])) for c in ('lib','profile')))
PY
# the views: through the ring where the system has one, and without
rm -rf .git/kopt/analyze .git/kopt/overview
git kopt analyze > $o/analyze-ring.txt 2>&1; echo "exit $?" >> $o/analyze-ring.txt
rm -rf .git/kopt/analyze .git/kopt/overview
KOPT_NO_URING=1 git kopt analyze > $o/analyze-plain.txt 2>&1; echo "exit $?" >> $o/analyze-plain.txt
cmp $o/analyze-ring.txt $o/analyze-plain.txt > $o/analyze-cmp.txt 2>&1 && echo same >> $o/analyze-cmp.txt
git kopt analyze mla --json > $o/analyze.json 2>&1
git kopt status > $o/status.txt 2>&1; echo "exit $?" >> $o/status.txt
(command -v strace && rm -rf .git/kopt/analyze .git/kopt/overview && strace -f -c -o $o/strace-analyze.txt git kopt analyze >/dev/null) > $o/strace-note.txt 2>&1
cat $o/cost.tsv $o/cost-summary.txt $o/analyze-cmp.txt $o/system.txt
cp -r $r/docs $o/ 2>/dev/null; cd $top; tar -C $o -czf $OUT/g32.tgz .
