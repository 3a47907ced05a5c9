#!/usr/bin/env bats
# git kopt profile on recorded H200 captures (no GPU needed).

load helper

GPU="$FIXTURES/gpu"

setup() {
	setup_repo
	cat >.kopt <<-'KOPT'
	[trial "decode"]
		b = 32
		s = 1
		t = 4096
	[trial "spec-decode"]
		b = 32
		s = 16
		t = 4096
	[language "cuda-c"]
		control = thread
	[kernel "mm"]
		language = cuda-c
		source = k/{version}
		run = ./bench --b {b} --s {s} --t {t}
		flops = 2*8192*8192*8192
		bytes = 2*3*8192*8192
	KOPT
}

@test "a replayed capture gives the profiler contract and says it is replayed" {
	run --separate-stderr git kopt profile mm v0 --trial decode \
		--replay "$GPU/pytorch-matmul.json"
	assert_success
	assert_line --index 0 "## Profile: mm v0 | b=32, s=1, t=4096"
	assert_line --index 1 --partial "> Replayed capture"
	assert_line "### Stages"
	assert_line "| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |"
	assert_line --regexp '^\| nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT \| 1407\.15 μs \| 96\.9 \| 20\.4 \| 14\.8 \| Compute-bound \| -- \|$'
	assert_line "### Bottleneck: Compute-bound"
	assert_line --regexp '^Root cause: .+'
	assert_line "### Top 3 Opportunities (ranked by estimated impact)"
	refute_output --partial "WaitNs"
	[ "$stderr" = "warning: no devlog 'docs/kernels/mm.md': results only (create it with 'git kopt kernel add')
warning: $GPU/pytorch-matmul.json: the capture does not say what it was recorded from: replayed as mm v0
wrote docs/kernels/mm/results/v0.json" ]
	python3 - <<-'PY'
	import json
	r = json.load(open("docs/kernels/mm/results/v0.json"))
	assert r["kernel"] == "mm" and r["version"] == "v0" and r["parent"] is None
	e = r["entries"][0]
	assert e["trial"] == "decode" and e["replayed"] is True
	assert e["config"] == {"b": 32, "s": 1, "t": 4096, "b_requested": 32, "dtype": "bfloat16"}, e["config"]
	assert abs(e["metrics"]["tc_pct"] - 96.856) < 0.01
	assert e["bottleneck"] == "Compute-bound"
	assert 0 < e["metrics"]["roofline_pct"] < 100
	PY
}

@test "the next version is compared with its parent" {
	git kopt profile mm v0 --trial decode --replay "$GPU/pytorch-matmul.json"
	run --separate-stderr git kopt profile mm v1 --trial decode \
		--replay "$GPU/pytorch-matmul.json"
	assert_success
	assert_line "### vs Baseline (v0)"
	assert_line "| Metric | Previous | Current | Change |"
	assert_line "| Duration | 1771.92 μs | 1771.92 μs | +0.0% |"
	run python3 -c 'import json; print(json.load(open("docs/kernels/mm/results/v1.json"))["parent"])'
	assert_output "v0"
}

@test "percentages change by points, amounts by percent" {
	cat >>.kopt <<-'KOPT'
	[kernel "mla"]
		language = cuda-c
		source = k/{version}
		run = ./bench --b {b} --s {s} --t {t}
		flops = 2*b*s*128*t*(576+512)
		bytes = 2*(b*t*576 + b*s*128*576 + b*s*128*512)
	KOPT
	git kopt profile mla v0 --trial decode \
		--replay "$GPU/mla-decode-v0-decode.json" >/dev/null 2>&1
	run --separate-stderr git kopt profile mla v1 --trial decode \
		--replay "$GPU/mla-decode-v1-decode.json"
	assert_success
	assert_line "| Duration | 3677.23 μs | 337.98 μs | -90.8% |"
	assert_line "| Achieved TFLOPs/s | 9.93 | 108.02 | +988.0% |"
	assert_line "| TC Util | 0.0% | 35.1% | +35.1 pp |"
	assert_line "| Occupancy | 93.6% | 12.5% | -81.1 pp |"
	assert_line "| L2 Hit Rate | 98.8% | 8.7% | -90.0 pp |"
	# a blank line ends the table before whatever follows it
	git kopt profile mla v0 --replay "$GPU/mla-decode-v0-decode.json" \
		--replay "$GPU/mla-decode-v0-spec-decode.json" >/dev/null 2>&1
	git kopt profile mla v1 --replay "$GPU/mla-decode-v1-decode.json" \
		--replay "$GPU/mla-decode-v1-spec-decode.json" >out.md 2>/dev/null
	[ "$(grep -c '^| Roofline ' out.md)" = 2 ]
	[ "$(grep -A1 -m1 '^| Roofline ' out.md | sed -n 2p)" = "" ]
	[ "$(grep -A2 -m1 '^| Roofline ' out.md | sed -n 3p)" = "## Profile: mla v1 | b=32, s=16, t=4096" ]
}

@test "profiling again replaces the entry of the same trial and keeps the others" {
	git kopt profile mm v0 --trial decode --replay "$GPU/pytorch-matmul.json"
	git kopt profile mm v0 --trial spec-decode --replay "$GPU/triton-softmax.json"
	git kopt profile mm v0 --trial decode --replay "$GPU/pytorch-matmul.json"
	run python3 -c 'import json; print([e["trial"] for e in json.load(open("docs/kernels/mm/results/v0.json"))["entries"]])'
	assert_output "['decode', 'spec-decode']"
}

@test "a capture that records a missing CUPTI fails with its cause and writes nothing" {
	run --separate-stderr git kopt profile mm v0 --trial decode \
		--replay "$GPU/error-cupti-missing.json"
	assert_failure 128
	assert_output ""
	[[ "$stderr" == *"the profiler failed: cannot load CUPTI"* ]]
	[ ! -e docs/kernels/mm/results/v0.json ]
}

@test "another profiler subscribed to CUPTI is named" {
	run --separate-stderr git kopt profile mm v0 --trial decode \
		--replay "$GPU/error-subscriber-exists.json"
	assert_failure 128
	[[ "$stderr" == *"another profiler"*"already subscribed"* ]]
}

@test "a capture that is not JSON is refused" {
	echo 'not json' >bad.json
	run --separate-stderr git kopt profile mm v0 --trial decode --no-devlog \
		--replay bad.json
	assert_failure 128
	[ "$stderr" = "error: bad.json: not a capture: the file is not JSON" ]
}

@test "one capture per trial, in order" {
	run --separate-stderr git kopt profile mm v0 --replay "$GPU/pytorch-matmul.json"
	assert_failure 129
	[[ "$stderr" == "error: 1 captures for 2 trials"* ]]
}

@test "an ad-hoc configuration is profiled as given" {
	run --separate-stderr git kopt profile mm v0 --config b=8,s=2,t=1024 \
		--replay "$GPU/cuda-known-kernels.json"
	assert_success
	assert_line --index 0 "## Profile: mm v0 | b=8, s=2, t=1024"
	assert_line --regexp '^\| spill \|.*register spills'
	run --separate-stderr git kopt profile mm v0 --config b=8,t=1024 \
		--replay "$GPU/cuda-known-kernels.json"
	assert_failure 129
}

@test "bad kernel, version and trial names are refused" {
	run --separate-stderr git kopt profile nope v0
	assert_failure 128
	[ "$stderr" = "fatal: unknown kernel 'nope' (known: mm)" ]
	run --separate-stderr git kopt profile mm 1
	assert_failure 128
	[ "$stderr" = "fatal: bad version '1' (expected v0, v1, ...)" ]
	run --separate-stderr git kopt profile mm v0 --trial prefill
	assert_failure 128
	[[ "$stderr" == "fatal: unknown trial 'prefill'"* ]]
}

@test "measuring without sources, a GPU or the injection library says what is missing" {
	run --separate-stderr git kopt profile mm v0
	assert_failure 128
	[ "$stderr" = "fatal: no sources for mm v0: 'k/v0' does not exist" ]
	mkdir -p k/v0
	run --separate-stderr env KOPT_INJECT_LIB=/nonexistent.so git kopt profile mm v0
	assert_failure 128
	[[ "$stderr" == *"--replay"* ]]
}

@test "--json prints the results file" {
	run --separate-stderr git kopt profile mm v0 --trial decode --json \
		--replay "$GPU/pytorch-matmul.json"
	assert_success
	echo "$output" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["entries"][0]["replayed"]'
}

@test "the devlog gets the version's performance block, once" {
	mkdir -p docs/kernels
	printf '# mm\n\n## Overview\n\nA matmul.\n\n## Development log\n' >docs/kernels/mm.md
	run --separate-stderr git kopt profile mm v0 --trial decode \
		--replay "$GPU/pytorch-matmul.json"
	assert_success
	[ "$stderr" = "warning: $GPU/pytorch-matmul.json: the capture does not say what it was recorded from: replayed as mm v0
wrote docs/kernels/mm/results/v0.json
wrote docs/kernels/mm.md" ]
	run cat docs/kernels/mm.md
	assert_line "### V0: Base version"
	assert_line "**Performance** (NVIDIA H200, replayed capture, bfloat16, b=32, s=1, t=4096):"
	assert_line "| Duration          | 1771.92 μs | --          |"
	assert_line "**Bottleneck**: Compute-bound"
	cp docs/kernels/mm.md before.md
	git kopt profile mm v0 --trial decode --replay "$GPU/pytorch-matmul.json"
	cmp before.md docs/kernels/mm.md
}

@test "--no-devlog leaves the devlog alone; a devlog that cannot be edited stops everything" {
	mkdir -p docs/kernels
	printf '# mm\n\n## Overview\n\nA matmul.\n\n## Development log\n' >docs/kernels/mm.md
	cp docs/kernels/mm.md before.md
	git kopt profile mm v0 --trial decode --no-devlog --replay "$GPU/pytorch-matmul.json"
	cmp before.md docs/kernels/mm.md
	rm -r docs/kernels/mm
	printf '# mm\n\n### V0: a\n\n### V0: b\n' >docs/kernels/mm.md
	run --separate-stderr git kopt profile mm v0 --trial decode \
		--replay "$GPU/pytorch-matmul.json"
	assert_failure 128
	[[ "$stderr" == *"docs/kernels/mm.md:"* ]]
	[ ! -e docs/kernels/mm/results/v0.json ]
}

@test "with a knowledge base, the opportunities are its entries whose triggers hold" {
	rm .kopt
	git kopt init -q
	git kopt kernel add mla-decode --language cuda-c \
		--source 'kernels/mla_decode/{version}' \
		--run 'kernels/mla_decode/build/{version}/bench --b {b} --s {s} --t {t}' \
		--flops '2*b*s*h*t*(dqk+dv)' \
		--bytes '2*(b*t*dqk + b*s*h*dqk + b*s*h*dv)' \
		--param h=128 --param dqk=576 --param dv=512 >/dev/null
	run --separate-stderr git kopt profile mla-decode v1 --trial decode \
		--replay "$GPU/mla-decode-v1-decode.json"
	assert_success
	assert_line --regexp '^1\. Split-KV decode -- est\. [0-9]+% gain -- trigger: waves=0\.48[0-9]* -- see `docs/knowledge/optimizations/split-kv\.md`$'
}

@test "a capture that cannot be read stops profile before anything is touched" {
	mkdir -p docs/kernels
	printf '# mm\n\n## Development log\n' >docs/kernels/mm.md
	cp docs/kernels/mm.md before.md
	run --separate-stderr git kopt profile mm v3 --trial decode --replay nowhere.json
	assert_failure 128
	[ "$stderr" = "fatal: cannot read capture 'nowhere.json': No such file or directory" ]
	cmp before.md docs/kernels/mm.md
}

@test "samples taken in one window give every stage its metrics" {
	run --separate-stderr git kopt profile mm v0 --trial decode \
		--replay "$GPU/pytorch-matmul-windows.json"
	assert_success
	assert_line --regexp '^\| nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT \| 1438\.72 μs \| 96\.8 \| 20\.1 \| 14\.8 \| Compute-bound \| -- \|$'
	assert_line --regexp '^\| vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelI\.\.\. \| 87\.62 μs \| 1\.2 \| 56\.6 \| 87\.3 \| '
	assert_line --regexp '^\| unrolled_elementwise_kernel<at::native::direct_copy_kernel_c\.\.\. \| 192\.70 μs \| 0\.0 \| 42\.6 \| 93\.5 \| '
	assert_line --regexp '^\| reduce_kernel<512, 1, at::native::ReduceOp<float, at::native\.\.\. \| 84\.58 μs \| 0\.6 \| 72\.7 \| 94\.5 \| Memory-bound \| '
	refute_output --partial "WaitNs"
	python3 - <<-'PY'
	import json
	r = json.load(open("docs/kernels/mm/results/v0.json"))
	stages = r["entries"][0]["stages"]
	assert len(stages) == 4, [s["name"] for s in stages]
	# each stage's DRAM % is the median of its two samples (one window)
	gelu = [s for s in stages if "Gelu" in s["name"]][0]
	assert abs(gelu["dram_pct"] - (56.620 + 56.669) / 2) < 0.01, gelu
	PY
}

@test "a kernel name that is no C identifier after demangling is refused" {
	# a real capture with one stage's name damaged
	python3 - "$GPU/pytorch-matmul-windows.json" <<-'PY'
	import json, sys
	d = json.load(open(sys.argv[1]))
	for k in d["kernels"]:
	    if "Gelu" in k["name"]:
	        k["name"] = "gelu\nkernel\x01"
	json.dump(d, open("damaged.json", "w"))
	PY
	run --separate-stderr git kopt profile mm v0 --trial decode --no-devlog \
		--replay damaged.json
	assert_failure 128
	[ "$stderr" = "warning: damaged.json: the capture does not say what it was recorded from: replayed as mm v0
error: damaged.json: kernel name 'gelu\x0akernel\x01' is not a C identifier after demangling: the capture is damaged (profile again), or leave the kernel out with kernel.<name>.stages" ]
	[ ! -e docs/kernels/mm/results/v0.json ]
	# C++ names with namespaces, templates and operators in them are fine
	run git kopt profile mm v0 --trial decode --no-devlog \
		--replay "$GPU/pytorch-matmul-windows.json"
	assert_success
}

@test "a stage that runs only from a CUDA graph stops the profile, naming it" {
	run --separate-stderr git kopt profile mm v0 --trial decode \
		--replay "$GPU/cuda-known-kernels-graph.json"
	assert_failure 128
	[[ "$stderr" == *"error: $GPU/cuda-known-kernels-graph.json: 'copy' runs only from a CUDA graph, and no second run launched the graph node by node: profile it again (not from this capture), launch it plainly, or leave it out with kernel.<name>.stages" ]]
	[ ! -e docs/kernels/mm/results/v0.json ]
	[ ! -e docs/kernels/mm.md ]
}
