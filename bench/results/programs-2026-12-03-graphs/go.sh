#!/bin/bash
top=$PWD; d=$top/.dev/g12; o=/tmp/o12; rm -rf $o; mkdir -p $o
cp .dev/lib/libcjson.so.1 $d/ 2>/dev/null
export LD_LIBRARY_PATH=$d:$top/.dev/lib
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $o/gpu.txt
run() {
	name=$1; shift
	/usr/bin/time -f "%e s" "$@" > $o/$name-plain.txt 2>&1; echo "$name plain rc=$?"
	CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_OUT=$o/$name-first.json KOPT_INJECT_VERBOSE=1 "$@" > $o/$name-inj1.txt 2>$o/$name-first.log; echo "$name inj1 rc=$?"
	CUDA_INJECTION64_PATH=$d/libkopt-inject.so KOPT_INJECT_FIRST_RUN=$o/$name-first.json KOPT_INJECT_OUT=$o/$name-second.json KOPT_INJECT_VERBOSE=1 "$@" > $o/$name-inj2.txt 2>$o/$name-second.log; echo "$name inj2 rc=$?"
	cat $o/$name-plain.txt $o/$name-inj2.txt | tail -4
}
run graph $d/graph_kernels
run tgraph python3 $d/torch_graph.py
python3 - <<'PY'
import json
for n in ['graph','tgraph']:
  for r in ['first','second']:
    f='/tmp/o12/%s-%s.json'%(n,r)
    try: d=json.load(open(f))
    except Exception as e: print(f, 'unreadable', e); continue
    print('==', f, d['process'].get('graph_launches'), d.get('second_run',{}).get('process',{}).get('graph_node_launches'), 'errors', d['errors'], 'warnings', d['warnings'], 'second', {k:v for k,v in d.get('second_run',{}).items() if k in ('planned','sampled','errors','warnings')})
    for k in d['kernels']:
        print('  ', k.get('name')[:60], k.get('launches'), k.get('launch_calls'), k.get('not_profiled'), len(k.get('profiled',[])), [ (s.get('run'), s.get('kernel_replay'), s['metrics'].get('dram__throughput.avg.pct_of_peak_sustained_elapsed')) for s in k.get('profiled',[])][:3])
PY
grep -h "graph\|node\|error\|plan" $o/graph-second.log | head -30
grep -h "graph\|node by node\|error\|plan" $o/tgraph-second.log | head -30
timeout 150 python3 $d/ncu-compare --lib $d/libkopt-inject.so --no-ncu --ncu-app --runs 1 --name graph_kernels --out $o/cmp-graph -- $d/graph_kernels > $o/cmp-graph.txt 2>&1; echo "cmp graph rc=$?"
tail -8 $o/cmp-graph.txt
timeout 250 python3 $d/ncu-compare --lib $d/libkopt-inject.so --no-ncu --ncu-app --runs 1 --name torch_graph --out $o/cmp-tgraph -- python3 $d/torch_graph.py > $o/cmp-tgraph.txt 2>&1; echo "cmp tgraph rc=$?"
tail -12 $o/cmp-tgraph.txt
timeout 150 python3 $d/ncu-compare --lib $d/libkopt-inject.so --no-ncu --ncu-app --runs 1 --name five_kernels --out $o/cmp-five -- $d/five_kernels > $o/cmp-five.txt 2>&1; echo "cmp five rc=$?"
tail -6 $o/cmp-five.txt
tar -C $o -czf $OUT/o12.tgz .
