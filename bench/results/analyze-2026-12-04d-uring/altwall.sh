#!/bin/bash
# altwall.sh REPO RUNS "ARGS" BIN... : warm runs alternated, wall (EPOCHREALTIME), plus git status
cd "$1"; n=$2; a=$3; shift 3
for b in "$@"; do $b $a >/dev/null; done
for i in $(seq $n); do for b in "$@" gitstatus; do
 s=${EPOCHREALTIME/[.,]/}
 if [ $b = gitstatus ]; then git status --porcelain >/dev/null; else $b $a >/dev/null; fi
 e=${EPOCHREALTIME/[.,]/}; echo "$b $((e-s))"
done; done | python3 -c '
import sys, collections, statistics as st
d=collections.defaultdict(list)
for l in sys.stdin:
    b,v=l.split(); d[b].append(int(v)/1000)
for b,v in d.items(): print(b, "median %.1f ms best %.1f ms (%d runs)" % (st.median(v), min(v), len(v)))'
