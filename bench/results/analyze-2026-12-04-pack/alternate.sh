#!/bin/sh
# alt.sh REPO RUNS: cold analyze, the two builds alternated
cd "$1"
OLD=/work/main/build/bin/git-kopt; NEW=/work/wt/pack18/build/bin/git-kopt
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
for b,v in t.items(): v.sort(); print(b, \"median %.1f ms best %.1f ms (%d runs)\" % (v[len(v)//2], v[0], len(v)))
" #'{ t[$1] = t[$1] " " $2 } END { for (b in t) { n = split(t[b], v, " "); asort(v); printf "%s median %.1f ms best %.1f ms (%d runs)\n", b, v[int((n + 1) / 2)] / 1000, v[1] / 1000, n } }'
