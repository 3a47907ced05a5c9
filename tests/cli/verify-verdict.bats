#!/usr/bin/env bats
# git kopt verify on recorded H200 captures of the example kernel.

load helper

GPU="$FIXTURES/gpu"

setup() {
	setup_repo
	git kopt init -q
	git kopt kernel add mla-decode --language cuda-c \
		--source 'kernels/mla_decode/{version}' \
		--run 'kernels/mla_decode/build/{version}/bench --b {b} --s {s} --t {t}' \
		--flops '2*b*s*h*t*(dqk+dv)' \
		--bytes '2*(b*t*dqk + b*s*h*dqk + b*s*h*dv)' \
		--param h=128 --param dqk=576 --param dv=512 >/dev/null
	git add -A
	git commit -qm "Start"
}

# Write what a person would into the template that learn new laid down,
# keeping its prefilled evidence.
fill_anti_pattern() {
	python3 - "$1" <<-'PY'
	import re, sys
	p = sys.argv[1]
	s = open(p).read()
	evidence = s[s.index("## Performance Evidence"):s.index("## Generalization")]
	open(p, "w").write("""# Split everything

## When to Apply
- Split-KV decode attention whose split count ignores the fixed cost of a split
- `waves > 4` many splits per row when the grid is already full

## Mechanism
Every split writes a partial output that a combine kernel reads back; past one
wave the extra splits add traffic and no parallelism.

## Affected Metrics
- duration
- DRAM throughput of the combine kernel

## Implementation
```c
splits = max(1, min(splits, sms * blocks_per_sm / rows));
```

""" + evidence + """## Generalization
Choose the split count from the waves it fills, not from the row length.

## Pitfalls
- Short rows need no split at all.

## Interactions
- Split-KV decode: this is its failure mode.
""")
	PY
}

replay() {
	echo --replay "$GPU/mla-decode-$1-decode.json" \
		--replay "$GPU/mla-decode-$1-spec-decode.json"
}

@test "the base version has no parent to judge against" {
	run --separate-stderr git kopt verify mla-decode v0 $(replay v0)
	assert_success
	assert_line "### Verdict: none"
	assert_line "The base version has no parent."
}

@test "a faster version is an improvement on every trial" {
	git kopt profile mla-decode v0 $(replay v0) >/dev/null 2>&1
	run --separate-stderr git kopt verify mla-decode v1 $(replay v1)
	assert_success
	assert_line "### Verdict: improvement (v1 against v0)"
	assert_line "| decode | 3677.23 μs | 337.98 μs | -90.8% | ±3.0% | improvement |"
	assert_line "| spec-decode | 57248.89 μs | 2571.28 μs | -95.5% | ±11.4% | improvement |"
	refute_output --partial "LEARN is due"
}

@test "a parent measured on another device only: no verdict, and both devices named" {
	for t in decode spec-decode; do
		python3 - "$GPU/mla-decode-v0-$t.json" "v0-h100-$t.json" <<-'PY'
		import json, sys
		d = json.load(open(sys.argv[1]))
		d["device"]["name"] = "NVIDIA H100 80GB HBM3"
		d["device"]["uuid"] = "GPU-11111111-2222-3333-4444-555555555555"
		json.dump(d, open(sys.argv[2], "w"))
		PY
	done
	git kopt profile mla-decode v0 --replay v0-h100-decode.json \
		--replay v0-h100-spec-decode.json >/dev/null 2>&1
	run --separate-stderr git kopt verify mla-decode v1 $(replay v1)
	assert_success
	assert_line "### Verdict: none"
	assert_line "The results of v0 for these trials were measured on another device, NVIDIA H100 80GB HBM3 (GPU-11111111-2222-3333-4444-555555555555), not on this one, NVIDIA H200: profile v0 here first; verdicts compare like with like."
	refute_output --partial "The parent has no results"
}

@test "a regression on one trial names the anti-pattern to write" {
	git kopt profile mla-decode v1 $(replay v1) >/dev/null 2>&1
	run --separate-stderr git kopt verify mla-decode v2 $(replay v2)
	assert_success
	assert_line "### Verdict: regression (v2 against v1)"
	assert_line "| spec-decode | 2571.28 μs | 4476.52 μs | +74.1% | ±3.0% | regression |"
	assert_line "LEARN is due: v2 is slower than v1 on spec-decode. Its results cannot be committed before the anti-pattern is written:"
	assert_line "  git kopt learn new anti-pattern mla-decode-v2-regression --from mla-decode/v2"
}

@test "--commit records a regression only after the anti-pattern is written" {
	git kopt profile mla-decode v1 $(replay v1) >/dev/null 2>&1
	git add -A
	git commit -qm "v1 results" --trailer "Kopt-Learn: skip recorded before the gate"
	run --separate-stderr git kopt verify mla-decode v2 $(replay v2) --commit
	assert_failure 1
	[[ "$stderr" == *"the commit was refused; the results stay staged"* ]]
	run git diff --cached --name-only
	assert_line "docs/kernels/mla-decode/results/v2.json"
	git kopt learn new anti-pattern split-everything --from mla-decode/v2 >/dev/null
	fill_anti_pattern docs/knowledge/anti-patterns/split-everything.md
	sed -i 's/\[failure mode\]/a workspace of splits x rows swamps the gain/' \
		.claude/skills/optimization-catalog/SKILL.md
	git kopt learn lint
	git add -A
	run --separate-stderr git commit -qm "Verify mla-decode v2: regression" \
		--trailer "Kopt-Kernel: mla-decode" --trailer "Kopt-Version: v2" \
		--trailer "Kopt-Step: verify" --trailer "Kopt-Verdict: regression"
	assert_success
	run git log -1 --format=%B
	assert_line "Kopt-Verdict: regression"
}

@test "--commit is verify's alone, and --json gives the verdict with the results" {
	run --separate-stderr git kopt profile mla-decode v1 --commit $(replay v1)
	assert_failure 129
	git kopt profile mla-decode v1 $(replay v1) >/dev/null 2>&1
	run --separate-stderr git kopt verify mla-decode v2 --json $(replay v2)
	assert_success
	echo "$output" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["verdict"] == "regression" and d["parent"] == "v1"
assert [t["verdict"] for t in d["trials"]] == ["improvement", "regression"]
assert d["results"]["version"] == "v2"'
}
