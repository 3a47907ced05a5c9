#!/bin/sh
# alt.sh REPO RUNS OLD NEW: cold analyze, the two builds alternated
cd "$1"
OLD=$3; NEW=$4
for i in $(seq "$2"); do
	for b in OLD NEW; do
		eval K=\$$b
		rm -rf .git/kopt/analyze .git/kopt/overview
		s=$(date +%s%N); $K analyze >/dev/null; e=$(date +%s%N)
		echo "$b $(( (e - s) / 1000 ))"
	done
done | python3 -c "
import sys,collections
t=collections.defaultdict(list)
for l in sys.stdin:
 b,v=l.split(); t[b].append(int(v)/1000)
for b,v in t.items(): v.sort(); print(b, 'median %.1f ms best %.1f ms (%d runs)' % (v[len(v)//2], v[0], len(v)))
"
