#!/bin/sh
# On the H200, 2026-12-04: the library of branch cg12 (child graphs and
# event nodes launched node by node) and two programs built beside it
# (nvcc -O3 -gencode=arch=compute_90,code=sm_90), LD_LIBRARY_PATH naming
# the libraries the machine lacks.  Outputs beside this file.
for p in child_graphs graph_kernels; do
	timeout 100 python3 bench/ncu-compare --no-ncu --ncu-app --runs 1 \
		--lib "$LIB" --name $p --out "$OUT/$p" -- "$BIN/$p" \
		>"$OUT/$p.txt" 2>&1
	echo "exit $?" >>"$OUT/$p.txt"
done
timeout 90 python3 bench/ncu-compare --no-ncu --ncu-app --runs 1 \
	--lib "$LIB" --name torch_graph --out "$OUT/torch_graph" \
	-- python3 bench/programs/torch_graph.py >"$OUT/torch_graph.txt" 2>&1
echo "exit $?" >>"$OUT/torch_graph.txt"
