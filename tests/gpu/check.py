#!/usr/bin/env python3
"""Checks on a libkopt-inject output file for tests/gpu/run.

    check.py SCENARIO FILE [PROGRAM-STDOUT-FILE]

Prints one TAP line per check; exits 1 when any check fails.
"""
import json
import math
import sys

BYTES = 512 << 20
LAUNCHES = 20
results = []


def check(ok, what):
    results.append((bool(ok), what))


def kernel(doc, name):
    for k in doc["kernels"]:
        if k["name"] == name:
            return k
    return None


def metric(k, m):
    vals = [s["metrics"].get(m) for s in k["profiled"]]
    vals = [v for v in vals if v is not None]
    return sorted(vals)[len(vals) // 2] if vals else None


def common(doc):
    check(doc.get("format") == "kopt-inject", "format is kopt-inject")
    check(doc.get("format_version") == 1, "format_version is 1")
    for key in ("library", "process", "config", "device", "profiler",
                "activity", "kernels", "errors", "warnings"):
        check(key in doc, "has '%s'" % key)


def full(doc, replay):
    common(doc)
    check(doc["errors"] == [], "no errors: %s" % doc["errors"])
    check(doc["config"]["replay"] == replay, "replay is " + replay)
    dev = doc["device"]
    check(dev and dev["sms"] > 0 and dev["cc"], "device has sms and cc")
    warm = doc["config"]["warmup"]
    for name in ("copy", "spill", "mma"):
        k = kernel(doc, name)
        check(k is not None, "kernel '%s' found" % name)
        if not k:
            continue
        check(k["launches"] == LAUNCHES and k["launch_calls"] == LAUNCHES,
              "%s: %d launches" % (name, LAUNCHES))
        d = k["durations_ns"]
        check(len(d) == LAUNCHES, "%s: one duration per launch" % name)
        timed = [x for x in d if x is not None]
        check(len(timed) >= LAUNCHES - 2 * doc["config"]["samples"] * 2,
              "%s: profiled launches are the only untimed ones" % name)
        check(all(x > 0 for x in timed), "%s: durations > 0" % name)
        check(len(k["profiled"]) == doc["config"]["samples"],
              "%s: %d samples" % (name, doc["config"]["samples"]))
        check(all(s["launch"] >= warm for s in k["profiled"]),
              "%s: samples after the warm-up" % name)
        # copy, spill, mma launched in turn: every sample in one window
        want = 3 * doc["config"]["samples"]
        check(all(s["window"] == want for s in k["profiled"]),
              "%s: samples from one window of %d launches (%s)"
              % (name, want, [s["window"] for s in k["profiled"]]))
        for s in k["profiled"]:
            for m, v in s["metrics"].items():
                if v is not None and "pct" in m:
                    check(0 <= v <= 100, "%s: %s = %s in [0, 100]"
                          % (name, m, v))
        t = metric(k, "gpu__time_duration.sum")
        med = sorted(timed)[len(timed) // 2] if timed else None
        check(t and med and abs(t - med) / med < 0.10,
              "%s: profiled duration %s ns near activity median %s ns"
              % (name, t, med))
        check(k["regs"] and k["regs"] > 0, "%s: registers known" % name)
        check(k["waves"] and k["waves"] > 0, "%s: waves known" % name)
    k = kernel(doc, "copy")
    if k:
        rd = metric(k, "dram__bytes_read.sum")
        wr = metric(k, "dram__bytes_write.sum")
        check(rd and abs(rd - BYTES) / BYTES < 0.05,
              "copy: DRAM bytes read %s within 5%% of %d" % (rd, BYTES))
        check(wr and abs(wr - BYTES) / BYTES < 0.15,
              "copy: DRAM bytes written %s within 15%% of %d" % (wr, BYTES))
        check(metric(k, "dram__throughput.avg.pct_of_peak_sustained_elapsed")
              > 50, "copy: DRAM throughput over 50%")
        check(k["local_bytes_per_thread"] == 0, "copy: no local memory")
        check(k["waves"] and abs(k["waves"] - 2.0) < 1.01,
              "copy: waves %s" % k["waves"])
    k = kernel(doc, "spill")
    if k:
        check(k["local_bytes_per_thread"] and k["local_bytes_per_thread"] > 0,
              "spill: local memory per thread %s > 0"
              % k["local_bytes_per_thread"])
        ld = metric(k, "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum")
        st = metric(k, "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum")
        check(ld and ld > 0 and st and st > 0,
              "spill: local loads %s and stores %s > 0" % (ld, st))
    k = kernel(doc, "mma")
    if k:
        tc = metric(k, "sm__pipe_tensor_op_hmma_cycles_active.avg."
                       "pct_of_peak_sustained_active")
        check(tc and tc > 5, "mma: tensor-core utilisation %s > 5%%" % tc)
        cp = kernel(doc, "copy")
        tc0 = metric(cp, "sm__pipe_tensor_op_hmma_cycles_active.avg."
                         "pct_of_peak_sustained_active") if cp else None
        check(tc0 is not None and tc0 < 1,
              "copy: tensor-core utilisation %s < 1%%" % tc0)


def main():
    scenario, path = sys.argv[1], sys.argv[2]
    stdout = open(sys.argv[3]).read() if len(sys.argv) > 3 else ""
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        check(False, "%s: readable JSON (%s)" % (path, e))
        doc = None
    if doc is not None:
        if scenario == "launch":
            full(doc, "launch")
            check(doc["profiler"]["setup"] == "context",
                  "set up at context creation")
        elif scenario == "first-sample":
            full(doc, "launch")
            check(doc["profiler"]["setup"] == "first-sample",
                  "set up at the first sample")
            check(doc["profiler"]["setup_wait_seconds"] == 0,
                  "no launch waited for a helper thread")
        elif scenario == "kernel":
            full(doc, "kernel")
        elif scenario == "no-warm-up":
            # the first launches want samples: they wait for the set-up
            full(doc, "launch")
            k = kernel(doc, "copy")
            check(k and k["profiled"] and k["profiled"][0]["launch"] == 0,
                  "copy: its first launch sampled (after waiting %s s "
                  "for the set-up)" % doc["profiler"]["setup_wait_seconds"])
        elif scenario in ("graph", "graph-as-graph"):
            # graph launches between the profiled ones end the passes
            # there; every kernel still gets its samples; the graph's
            # copy is sampled as the graph is launched node by node, or
            # (KOPT_INJECT_UNROLL=0) timed only
            common(doc)
            check(doc["errors"] == [], "no errors: %s" % doc["errors"])
            check(doc["process"]["graph_launches"] == LAUNCHES,
                  "%d graph launches seen" % LAUNCHES)
            for name in ("copy", "spill", "mma"):
                k = [x for x in doc["kernels"] if x["name"] == name and
                     x["launch_calls"] == LAUNCHES]
                check(k and len(k[0]["profiled"]) == 2 and
                      k[0]["samples_failed"] == 0,
                      "%s: 2 samples, none failed" % name)
            # (its one launch call is the one captured into the graph;
            # the launches of its node are the library's, not counted)
            g = [x for x in doc["kernels"] if x["name"] == "copy" and
                 x["grid"][0] == 132]
            check(g and g[0]["launches"] == LAUNCHES and
                  g[0]["launch_calls"] == 1,
                  "the graph's copy: %d executions, 1 launch call (%s)"
                  % (LAUNCHES, g and (g[0]["launches"],
                                      g[0]["launch_calls"])))
            if scenario == "graph":
                check(g and len(g[0]["profiled"]) == 2 and
                      doc["process"]["graph_node_launches"] > 0 and
                      doc["process"]["graph_node_launches"] < LAUNCHES,
                      "the graph's copy: 2 samples from its node's "
                      "launches, then launched as a graph again (%s node "
                      "launches)" % doc["process"].get(
                          "graph_node_launches"))
            else:
                check(g and g[0]["profiled"] == [] and
                      g[0].get("not_profiled") == "graph" and
                      "graph_node_launches" not in doc["process"],
                      "the graph's copy: timed, not profiled")
        elif scenario == "reset":
            # the context ends while the helper thread may still set up
            common(doc)
            check(doc["errors"] == [], "no errors: %s" % doc["errors"])
            check(doc["profiler"]["state"] == "unused", "profiler unused")
            check(doc["kernels"] == [], "no kernels")
        elif scenario == "durations":
            common(doc)
            check(doc["errors"] == [], "no errors")
            check(doc["profiler"]["state"] == "unused", "profiler unused")
            for name in ("copy", "spill", "mma"):
                k = kernel(doc, name)
                check(k and k["profiled"] == [] and
                      len([x for x in k["durations_ns"] if x]) == LAUNCHES,
                      "%s: every launch timed, none profiled" % name)
        elif scenario == "no-cupti":
            common(doc)
            codes = [e["code"] for e in doc["errors"]]
            check(codes == ["cupti-missing"], "errors: %s" % codes)
            check(doc["kernels"] == [], "no kernels")
        elif scenario == "subscribed":
            common(doc)
            codes = [e["code"] for e in doc["errors"]]
            theirs = [l for l in stdout.splitlines()
                      if l.startswith("subscribe:")]
            # whichever subscribed second is refused with error 39
            check("cupti-subscriber-exists" in codes or
                  theirs == ["subscribe: 39"],
                  "one subscriber refused (ours: %s, theirs: %s)"
                  % (codes, theirs))
        check("ok" in stdout.splitlines() or not stdout,
              "the program ran to its end")
    failed = 0
    for i, (ok, what) in enumerate(results, 1):
        print("%s %d - %s: %s" % ("ok" if ok else "not ok", i, scenario, what))
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
