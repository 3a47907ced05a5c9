#!/bin/sh
# altw.sh REPO RUNS ARGS BIN... : warm runs alternated, perf stat wall
cd "$1"; n=$2; a=$3; shift 3
for b in "$@"; do $b $a >/dev/null; done
for i in $(seq $n); do for b in "$@"; do
 perf stat -x, -e task-clock $b $a 2>&1 >/dev/null | awk -F, -v b=$b '{print b, $1}'
done; done | python3 -c '
import sys, collections, statistics as st
d=collections.defaultdict(list)
for l in sys.stdin:
    b,v=l.split(); d[b].append(float(v))
for b,v in d.items(): print(b, "task-clock median %.2f ms min %.2f" % (st.median(v), min(v)))'
