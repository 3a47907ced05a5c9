#!/usr/bin/env bats
# What PROFILE concludes from captures of programs whose kernels run few
# times, from graphs, or on several devices; and which captures it
# replays (recorded on an H200 with bench/programs, no GPU needed).

load helper

GPU="$FIXTURES/gpu"

setup() {
	setup_repo
	cat >.kopt <<-'KOPT'
	[trial "decode"]
		b = 32
		s = 1
		t = 4096
	[language "cuda-c"]
		control = thread
	[kernel "five"]
		language = cuda-c
		source = five/{version}
		run = five/{version}/five_kernels
		stages = *
	[kernel "fwd"]
		language = cuda-c
		source = fwd/{version}
		run = python3 fwd/{version}/torch_forward.py
	[kernel "graph"]
		language = cuda-c
		source = graph/{version}
		run = graph/{version}/graph_kernels
	[kernel "child"]
		language = cuda-c
		source = child/{version}
		run = child/{version}/child_graphs
		stages = *
	[kernel "mla-decode"]
		language = cuda-c
		source = kernels/mla_decode/{version}
		run = kernels/mla_decode/build/{version}/bench --b {b} --s {s} --t {t}
	KOPT
	mkdir -p docs/kernels
	printf '# fwd\n\n## Overview\n\nA model.\n\n## Development log\n' \
		>docs/kernels/fwd.md
}

@test "kernels launched 1, 2, 3 and 5 times are measured, from the second run" {
	run --separate-stderr git kopt profile five v0 --trial decode \
		--no-devlog --replay "$GPU/five-kernels.json"
	assert_success
	assert_line "| fill | 70.34 μs | 0.0 | 77.9 | 87.0 | Memory-bound | -- |"
	assert_line "| scale | 135.18 μs | 0.0 | 82.2 | 93.5 | Memory-bound | -- |"
	assert_line "| mma | 55.68 μs | 95.3 | 0.2 | 12.5 | Compute-bound | under-filled GPU (0.12 waves) |"
	assert_line "| stencil | 280.70 μs | 0.0 | 39.9 | 98.0 | Latency-bound | poor L2 reuse (51.0% hit) |"
	assert_line "| saxpy | 196.96 μs | 0.0 | 86.4 | 95.1 | Memory-bound | -- |"
	# CUPTI's own kernel is no stage, whatever the pattern
	refute_output --partial "WaitNs"
	# fill and mma read an L2 hit rate over 100%: rejected, and said
	assert_line "- 'fill': l2_hit_pct not measured (no valid value in its samples)."
	python3 - <<-'PY'
	import json
	e = json.load(open("docs/kernels/five/results/v0.json"))["entries"][0]
	assert [s["name"] for s in e["stages"]] == ["fill", "scale", "mma", "stencil", "saxpy"]
	assert all(s.get("not_measured") is None for s in e["stages"])
	assert e["device"]["uuid"] == "GPU-b0f49ed7-02c3-2281-a53a-518bb49efb38"
	assert e["tree"] == "73b9a3229c7f12f008a3f618dff70aa63fa8cf66"
	assert e["replayed"] is True
	PY
}

@test "unmeasured stages are never healthy: the contract and the devlog say why" {
	run --separate-stderr git kopt profile fwd v0 --trial decode \
		--replay "$GPU/torch-forward-second-run-failed.json"
	assert_success
	assert_line "| nvjet_sm90_tst_128x64_64x8_1x2_h_bz_bias_TNT | 15.52 μs | -- | -- | -- | Not measured | not measured (see below) |"
	assert_line "### Not measured"
	assert_line "- 'nvjet_sm90_tst_128x64_64x8_1x2_h_bz_bias_TNT': not measured: its samples failed (the capture's warnings say why)."
	assert_line "### Bottleneck: Not measured"
	assert_line --partial "Its hardware metrics were not measured (its samples failed"
	# waves come from the launch itself (the occupancy API), not counters
	assert_line "1. Fill the GPU: more blocks, fewer resources per block -- est. 2% gain -- trigger: waves=0.97"
	refute_output --partial "healthy"
	run cat docs/kernels/fwd.md
	assert_line "**Bottleneck**: Not measured"
	assert_line "**Not measured**:"
	python3 - <<-'PY'
	import json
	e = json.load(open("docs/kernels/fwd/results/v0.json"))["entries"][0]
	st = {s["name"]: s for s in e["stages"]}
	n = st["nvjet_sm90_tst_128x64_64x8_1x2_h_bz_bias_TNT"]
	assert n["not_measured"].startswith("its samples failed") and n.get("tc_pct") is None
	assert e["bottleneck"] == "Not measured"
	assert [o["trigger"] for o in e["opportunities"]] == ["waves=0.97"]
	PY
	# the block with its "Not measured" list is one block: profiled
	# again, the devlog is the same, with one Insights list
	cp docs/kernels/fwd.md "$BATS_TEST_TMPDIR/once.md"
	git kopt profile fwd v0 --trial decode \
		--replay "$GPU/torch-forward-second-run-failed.json" >/dev/null 2>&1
	cmp docs/kernels/fwd.md "$BATS_TEST_TMPDIR/once.md"
	run grep -c '^\*\*Insights\*\*:' docs/kernels/fwd.md
	assert_output 1
}

@test "kernels that only run from a CUDA graph: one line, nothing written" {
	run --separate-stderr git kopt profile graph v0 --trial decode \
		--no-devlog --replay "$GPU/graph-kernels.json"
	assert_failure 128
	[ "$stderr" = "error: $GPU/graph-kernels.json: 'scale2' runs only from a CUDA graph that the second run could not launch node by node (the capture's warnings say why): launch it plainly to measure it, or leave it out with kernel.<name>.stages" ]
	[ ! -e docs/kernels/graph/results/v0.json ]
}

@test "a capture of another version or command is refused, naming both, unless --force" {
	run --separate-stderr git kopt profile five v1 --trial decode \
		--no-devlog --replay "$GPU/five-kernels.json"
	assert_failure 128
	[ "$stderr" = "error: $GPU/five-kernels.json: recorded from version 'v0', not 'v1': profile again, or replay it anyway with --force" ]
	[ ! -e docs/kernels/five/results/v1.json ]
	git config -f .kopt kernel.five.run 'five/{version}/five_kernels --big'
	run --separate-stderr git kopt profile five v0 --trial decode \
		--no-devlog --replay "$GPU/five-kernels.json"
	assert_failure 128
	[ "$stderr" = "error: $GPU/five-kernels.json: recorded from the command 'five/v0/five_kernels', not 'five/v0/five_kernels --big': profile again, or replay it anyway with --force" ]
	[ ! -e docs/kernels/five/results/v0.json ]
	run --separate-stderr git kopt profile five v0 --trial decode \
		--no-devlog --force --replay "$GPU/five-kernels.json"
	assert_success
	[[ "$stderr" == *"warning: $GPU/five-kernels.json: recorded from the command 'five/v0/five_kernels', not 'five/v0/five_kernels --big' (--force)"* ]]
	python3 - "$GPU/five-kernels.json" <<-'PY'
	import json, sys
	e = json.load(open("docs/kernels/five/results/v0.json"))["entries"][0]
	assert e["replayed"] is True and e["replay_source"] == sys.argv[1]
	PY
}

@test "a capture of other sources is refused" {
	mkdir -p five/v0
	echo 'changed' >five/v0/five_kernels.cu
	git add five && git commit -qm five
	run --separate-stderr git kopt profile five v0 --trial decode \
		--no-devlog --replay "$GPU/five-kernels.json"
	assert_failure 128
	[[ "$stderr" == "error: $GPU/five-kernels.json: recorded from the source tree '73b9a3229c7f12f008a3f618dff70aa63fa8cf66', not '"*"': profile again, or replay it anyway with --force" ]]
}

@test "a version measured on two devices keeps both entries, and says so" {
	python3 - "$GPU/mla-decode-v8-decode-program.json" <<-'PY'
	import json, sys
	d = json.load(open(sys.argv[1]))
	d["device"]["name"] = "NVIDIA H100 80GB HBM3"
	d["device"]["uuid"] = "GPU-11111111-2222-3333-4444-555555555555"
	json.dump(d, open("h100.json", "w"))
	PY
	run --separate-stderr git kopt profile mla-decode v8 --trial decode \
		--no-devlog --replay h100.json
	assert_success
	run --separate-stderr git kopt profile mla-decode v8 --trial decode \
		--no-devlog --replay "$GPU/mla-decode-v8-decode-program.json"
	assert_success
	[ "$stderr" = "warning: mla-decode v8: decode was measured on NVIDIA H100 80GB HBM3 (GPU-11111111-2222-3333-4444-555555555555) before; both entries stay in the results, and the devlog keeps its block (--no-devlog)
wrote docs/kernels/mla-decode/results/v8.json" ]
	python3 - <<-'PY'
	import json
	r = json.load(open("docs/kernels/mla-decode/results/v8.json"))
	assert [e["device"]["name"] for e in r["entries"]] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
	PY
	# the same device again replaces its own entry only
	run --separate-stderr git kopt profile mla-decode v8 --trial decode \
		--no-devlog --replay "$GPU/mla-decode-v8-decode-program.json"
	assert_success
	python3 -c 'import json; assert len(json.load(open("docs/kernels/mla-decode/results/v8.json"))["entries"]) == 2'
}

@test "kernels of a CUDA graph, measured by a second run that launched it node by node" {
	run --separate-stderr git kopt profile graph v0 --trial decode \
		--no-devlog --replay "$GPU/graph-kernels-node-by-node.json"
	assert_success
	assert_line "| scale | 90.91 μs | 0.0 | 59.9 | 92.3 | Latency-bound | poor L2 reuse (50.0% hit) |"
	assert_line "| addto | 115.26 μs | 0.0 | 72.6 | 94.2 | Memory-bound | poor L2 reuse (33.4% hit) |"
	assert_line "| tally | 1.31 μs | 0.0 | 0.0 | 1.6 | Latency-bound | under-filled GPU (0.00 waves) |"
	refute_output --partial "Not measured"
	python3 - <<-'PY'
	import json
	e = json.load(open("docs/kernels/graph/results/v0.json"))["entries"][0]
	assert [s["name"] for s in e["stages"]] == ["scale", "addto", "square", "tally"]
	assert all(s.get("not_measured") is None for s in e["stages"])
	PY
	# its first run alone: the graph's kernels were only timed
	rm docs/kernels/graph/results/v0.json
	run --separate-stderr git kopt profile graph v0 --trial decode \
		--no-devlog --replay "$GPU/graph-kernels-first-run.json"
	assert_failure 128
	[ "$stderr" = "warning: $GPU/graph-kernels-first-run.json: the capture does not say what it was recorded from: replayed as graph v0
error: $GPU/graph-kernels-first-run.json: 'scale' runs only from a CUDA graph, and no second run launched the graph node by node: profile it again (not from this capture), launch it plainly, or leave it out with kernel.<name>.stages" ]
	[ ! -e docs/kernels/graph/results/v0.json ]
}

@test "kernels of child graphs two deep and behind an event wait: every stage measured" {
	run --separate-stderr git kopt profile child v0 --trial decode \
		--no-devlog --replay "$GPU/child-graphs-node-by-node.json"
	assert_success
	# in the parent, in a child graph, and in a child graph's child
	assert_line "| child_fill | 32.64 μs | 0.0 | 42.2 | 81.0 | Latency-bound | neither DRAM nor tensor cores busy |"
	assert_line "| child_scale | 55.39 μs | 0.0 | 59.7 | 90.0 | Latency-bound | poor L2 reuse (50.3% hit) |"
	assert_line "| nested_square | 63.78 μs | 0.0 | 59.9 | 91.9 | Latency-bound | poor L2 reuse (50.3% hit) |"
	assert_line "| wait_consume | 1.06 μs | 0.0 | 0.0 | 1.6 | Latency-bound | low occupancy (1.6%) |"
	refute_output --partial "launched from a CUDA graph"
	python3 - <<-'PY'
	import json
	e = json.load(open("docs/kernels/child/results/v0.json"))["entries"][0]
	names = [s["name"] for s in e["stages"]]
	assert names == ["produce", "check_square", "child_fill", "child_scale",
	                 "nested_square", "wait_consume", "tally"], names
	assert all(s.get("not_measured") is None for s in e["stages"])
	PY
}

@test "child graphs launched node by node in a first run: every stage measured in one run" {
	run --separate-stderr git kopt profile child v0 --trial decode \
		--no-devlog --replay "$GPU/child-graphs-first-run-unrolled.json"
	assert_success
	refute_output --partial "launched from a CUDA graph"
	python3 - <<-'PY'
	import json
	e = json.load(open("docs/kernels/child/results/v0.json"))["entries"][0]
	names = [s["name"] for s in e["stages"]]
	# in the program's order: the graph's kernels run before the check
	assert names == ["produce", "child_fill", "child_scale", "nested_square",
	                 "wait_consume", "tally", "check_square"], names
	assert all(s.get("not_measured") is None for s in e["stages"]), e["stages"]
	# the graph's kernels: durations of every execution, not of one
	# sample's launches
	assert all(s["launches"] == 20 for s in e["stages"]), \
		[s["launches"] for s in e["stages"]]
	PY
	# one run: no second run in the capture
	python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); assert "second_run" not in d and d["process"]["graph_node_launches"] == 200' "$GPU/child-graphs-first-run-unrolled.json"
}

@test "a PyTorch CUDA graph (memset nodes among its kernels): every stage measured" {
	run --separate-stderr git kopt profile fwd v0 --trial decode \
		--no-devlog --replay "$GPU/torch-graph-node-by-node.json"
	assert_success
	assert_line "| nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT | 45.34 μs | 90.8 | 20.8 | 14.0 | Compute-bound | under-filled GPU (0.97 waves) |"
	# one GEMM's sample fell back to kernel replay: its cache figures
	# are not the program's, and it says so
	assert_line "- 'nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT': its L2 hit rate and DRAM traffic not measured in the program's cache state (sampled in kernel replay: its memory restored before each pass); shown, no L2 conclusion drawn."
	python3 - <<-'PY'
	import json
	e = json.load(open("docs/kernels/fwd/results/v0.json"))["entries"][0]
	names = [s["name"] for s in e["stages"]]
	assert len(names) == 5 and sum(n.startswith("nvjet") for n in names) == 2, names
	assert all(s.get("not_measured") is None for s in e["stages"])
	assert all(s.get("dram_pct") is not None for s in e["stages"])
	PY
	# the first run alone measured none of them
	rm docs/kernels/fwd/results/v0.json
	run --separate-stderr git kopt profile fwd v0 --trial decode \
		--no-devlog --replay "$GPU/torch-graph-first-run.json"
	assert_failure 128
	[[ "$stderr" == *"runs only from a CUDA graph, and no second run launched the graph node by node"* ]]
}
