#!/bin/bash
# Where a profiled run's end goes: main's end, the atexit handlers, the
# destructors, the process's exit; plain against the library, with
# variants of the library's exit (KOPT_INJECT_EXIT_X bits: 1 activity
# disabled, 2 unsubscribed, 4 profiler deinitialized, 8 cuptiFinalize).
set -u
top=$PWD; d=$top/.dev/g30; o=/tmp/g30; rm -rf $o; mkdir -p $o/cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt
P5=$top/bench/programs/build/five_kernels
PC=$top/bench/programs/build/child_graphs
V8="$top/kernels/mla_decode/build/v8/bench --b 32 --s 1 --t 4096"
python3 - "$o" "$d" "$P5" "$PC" "$V8" <<'PY'
import os, sys, subprocess, time, statistics, json
o, d = sys.argv[1], sys.argv[2]
progs = {'five_kernels': sys.argv[3].split(), 'child_graphs': sys.argv[4].split(), 'v8': sys.argv[5].split()}
variants = ['plain', 'lib0', 'lib7', 'lib15']
rows = []
def run(name, cmd, var, i):
    env = dict(os.environ)
    et = '%s/et-%s-%s-%d.txt' % (o, name, var, i)
    env['LD_PRELOAD'] = d + '/exittime.so'
    env['LD_LIBRARY_PATH'] = d
    env['EXITTIME_OUT'] = et
    if var != 'plain':
        env['CUDA_INJECTION64_PATH'] = d + '/libkopt-inject.so'
        env['KOPT_INJECT_OUT'] = '%s/%s-%s-%d.json' % (o, name, var, i)
        env['KOPT_INJECT_CACHE'] = o + '/cache'
        env['KOPT_INJECT_VERBOSE'] = '1'
        env['KOPT_INJECT_EXIT_X'] = var[3:]
    err = open('%s/%s-%s-%d.log' % (o, name, var, i), 'w')
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
    t1 = time.monotonic()
    m = {}
    for l in open(et):
        k, v = l.split(); m[k] = float(v)
    r = dict(prog=name, var=var, round=i, rc=p.returncode, wall=t1 - t0,
             pre=m.get('main_start', t0) - t0,
             main=m['main_end'] - m['main_start'] if 'main_end' in m else None,
             atexit=m['atexit_last'] - m['main_end'] if 'atexit_last' in m and 'main_end' in m else None,
             dtor=m['destructor'] - m['atexit_last'] if 'destructor' in m and 'atexit_last' in m else None,
             after=t1 - m['destructor'] if 'destructor' in m else None)
    rows.append(r)
for name, cmd in progs.items():
    run(name, cmd, 'plain', 0); run(name, cmd, 'lib0', 0)
    for i in range(1, 6):
        for var in variants:
            run(name, cmd, var, i)
json.dump(rows, open(o + '/rows.json', 'w'), indent=1)
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float('nan')
print('%-13s %-6s %6s %6s %6s %6s %6s %6s  rc' % ('program', 'run', 'wall', 'pre', 'main', 'atexit', 'dtor', 'after'))
for name in progs:
    for var in variants:
        rs = [r for r in rows if r['prog'] == name and r['var'] == var and r['round'] > 0]
        print('%-13s %-6s %6.3f %6.3f %6.3f %6.3f %6.3f %6.3f  %s' % (name, var, med(r['wall'] for r in rs), med(r['pre'] for r in rs), med(r['main'] for r in rs), med(r['atexit'] for r in rs), med(r['dtor'] for r in rs), med(r['after'] for r in rs), sorted(set(r['rc'] for r in rs))))
PY
cd $top; tar -C $o -czf $OUT/g30.tgz .
