#!/bin/bash
# git kopt profile end to end on programs whose kernels run only from CUDA graphs
top=$PWD; d=$top/.dev/e2e; o=/tmp/e2e; rm -rf $o; mkdir -p $o
cp .dev/lib/libcjson.so.1 $d/ 2>/dev/null
mkdir -p $d/bin; cat > $d/bin/git-kopt <<SH
#!/bin/sh
LD_LIBRARY_PATH=$d:$top/.dev/lib exec $d/git-kopt "\$@"
SH
chmod +x $d/bin/git-kopt
export PATH=$d/bin:$PATH KOPT_INJECT_LIB=$d/libkopt-inject.so LD_LIBRARY_PATH=$d:$top/.dev/lib
r=/tmp/e2erepo; rm -rf $r; mkdir -p $r/graph/v0 $r/tg/v0 $r/docs/kernels; cd $r
git init -q -b main; git config user.name e2e; git config user.email e2e@example.com
cp $d/graph_kernels graph/v0/; cp $d/torch_graph.py tg/v0/
cat > .kopt <<'K'
[trial "decode"]
	b = 1
	s = 1
	t = 1
[language "cuda-c"]
	control = thread
[kernel "graph"]
	language = cuda-c
	source = graph/{version}
	run = graph/{version}/graph_kernels
[kernel "tg"]
	language = cuda-c
	source = tg/{version}
	run = python3 tg/{version}/torch_graph.py
K
printf '# graph\n\n## Overview\n\nA graph.\n\n## Development log\n' > docs/kernels/graph.md
printf '# tg\n\n## Overview\n\nA torch graph.\n\n## Development log\n' > docs/kernels/tg.md
git add -A; git commit -qm start
for k in graph tg; do
  s=$EPOCHREALTIME
  git kopt profile $k v0 --trial decode > $o/$k-profile.txt 2> $o/$k-profile.err; echo "$k profile rc=$? $(awk -v a=$s -v b=$EPOCHREALTIME 'BEGIN{printf "%.2f s", b-a}')"
  cat $o/$k-profile.txt | head -20; cat $o/$k-profile.err | head -5
  cp docs/kernels/$k/results/v0.json $o/$k-results.json 2>/dev/null
done
cp docs/kernels/*.md $o/
tar -C $o -czf $OUT/e2e.tgz .
