#!/usr/bin/env bats
# git kopt strategize: the Optimization Task from results and knowledge.

load helper

TASK=docs/kernels/mla-decode/tasks/v1.md

setup() {
	setup_repo
	cp -R "$FIXTURES/knowledge/kb/." .
	rm docs/kernels/mla-decode/results/v1.json
	git add -A
	git commit -qm "Knowledge base and results of v0"
}

@test "strategize prints the task contract and writes it for the next version" {
	run --separate-stderr git kopt strategize mla-decode
	assert_success
	assert_output "$(cat "$FIXTURES/knowledge/task-v1.md")"
	[ "$stderr" = "wrote $TASK" ]
	cmp "$FIXTURES/knowledge/task-v1.md" "$TASK"
}

@test "the task has the contract's sections, in order" {
	git kopt strategize mla-decode >/dev/null 2>&1
	run grep -E '^#{2,3} ' "$TASK"
	assert_output "## Optimization Task: mla-decode v0 -> v1
### Current Bottleneck: Latency-bound (decode: DRAM 62.0%, TC 3.1%, occupancy 12.5%, L2 hit 70.0%, waves 0.24; spec-decode: DRAM 55.0%, TC 5.0%, occupancy 12.5%, L2 hit 85.0%, waves 0.24)
### Optimizations to Apply:
### Constraints
### To Judge"
	run grep -c '^[0-9]\. .*see \[docs/knowledge/optimizations/.*\](\.\./\.\./\.\./knowledge/optimizations/.*\.md)$' "$TASK"
	assert_output 3
	# every link resolves from the task's folder
	for l in $(grep -oE '\]\([^)]+\)' "$TASK" | tr -d '])(' ); do
		[ -f "docs/kernels/mla-decode/tasks/$l" ]
	done
}

@test "an optimization this version's lineage applied is listed, not proposed again" {
	cp "$FIXTURES/knowledge/kb/docs/kernels/mla-decode/results/v1.json" \
		docs/kernels/mla-decode/results/
	sed -i 's/^Source type: external report (a test fixture)/Source type: local experiment (mla-decode v0 -> v1, a test fixture)/' \
		docs/knowledge/optimizations/split-kv.md
	run --separate-stderr git kopt strategize mla-decode --no-write
	assert_success
	refute_line --regexp '^[0-9]\. Split-KV decode'
	assert_line '- Applied in v1: Split-KV decode (O1), not proposed again although `waves < 1` holds on decode (waves=0.97), spec-decode (waves=0.97); see [docs/knowledge/optimizations/split-kv.md](../../../knowledge/optimizations/split-kv.md)'
	run --separate-stderr git kopt strategize mla-decode --no-write --json
	assert_output --partial '"applied_in":	"v1"'
}

@test "evidence from another kernel or from a later version proposes it still" {
	cp "$FIXTURES/knowledge/kb/docs/kernels/mla-decode/results/v1.json" \
		docs/kernels/mla-decode/results/
	sed -i 's/^Source type: external report (a test fixture)/Source type: local experiment (mla-decode-fp8 v0 -> v1; mla-decode v1 -> v2)/' \
		docs/knowledge/optimizations/split-kv.md
	run --separate-stderr git kopt strategize mla-decode --no-write
	assert_success
	assert_line --regexp '^1\. Split-KV decode \(O1'
	refute_output --partial "Applied in"
}

@test "a second run changes nothing; a task that differs needs --force" {
	git kopt strategize mla-decode >/dev/null 2>&1
	run --separate-stderr git kopt strategize mla-decode
	assert_success
	cmp "$FIXTURES/knowledge/task-v1.md" "$TASK"

	echo "edited by hand" >>"$TASK"
	cp "$TASK" edited
	run --separate-stderr git kopt strategize mla-decode
	assert_failure 128
	assert_output ""
	[ "$stderr" = "fatal: '$TASK' exists and differs from this task; use --force to replace it, or --no-write to only print it" ]
	cmp edited "$TASK"

	run --separate-stderr git kopt strategize mla-decode --force
	assert_success
	cmp "$FIXTURES/knowledge/task-v1.md" "$TASK"
}

@test "--no-write only prints; --max bounds the list" {
	run --separate-stderr git kopt strategize mla-decode --no-write --max 1
	assert_success
	[ ! -e "$TASK" ]
	[ -z "$stderr" ]
	assert_line "1. Tensor-core MMA (O2, est. impact 1.5-3x): \`tc_pct < 10 and roofline_pct < 50\` holds on decode (tc_pct=3.1, roofline_pct=30.2), spec-decode (tc_pct=5, roofline_pct=40); see [docs/knowledge/optimizations/tensor-core-mma.md](../../../knowledge/optimizations/tensor-core-mma.md)"
	refute_line --regexp '^2\. '
	assert_line "- Required control level: warp (Tensor-core MMA (O2): warp)"
}

@test "--json ranks every match and says what was chosen" {
	run --separate-stderr git kopt strategize mla-decode --json
	assert_success
	python3 - "$output" <<-'PY'
	import json, sys
	t = json.loads(sys.argv[1])
	assert t["current"] == "v0" and t["next"] == "v1", t
	assert t["task"] == "docs/kernels/mla-decode/tasks/v1.md"
	ids = [o["id"] for o in t["optimizations"]]
	assert ids == ["O2", "O1", "O4", "O3"], ids
	assert [o["chosen"] for o in t["optimizations"]] == [True, True, True, False]
	scores = [o["score"] for o in t["optimizations"]]
	assert scores == sorted(scores, reverse=True), scores
	assert [a["id"] for a in t["avoid"]] == ["A1", "A2"]
	assert t["untriggered"] == ["O5 Epilogue fusion"]
	c = t["constraints"]
	assert c["register_budget"] == 128 and c["regs"] == 168, c
	assert c["control"] == "warp" and c["language"] == "cutile-dsl", c
	assert c["language_suffices"] is False, c
	PY
	cmp "$FIXTURES/knowledge/task-v1.md" "$TASK"
}

@test "metrics that were not measured leave triggers unknown, and it says so" {
	git checkout -q HEAD -- .
	cp "$FIXTURES/knowledge/kb/docs/kernels/mla-decode/results/v1.json" docs/kernels/mla-decode/results/
	run --separate-stderr git kopt strategize mla-decode
	assert_success
	assert_line --index 0 "## Optimization Task: mla-decode v1 -> v2"
	assert_line "- Swizzled CTA order (O3): \`l2_hit_pct < 80\` unknown on decode, spec-decode, b=8 s=1 t=65536: l2_hit_pct not measured"
	assert_line "- Tensor-core MMA (O2): \`tc_pct < 10 and roofline_pct < 50\` unknown on b=8 s=1 t=65536: tc_pct, roofline_pct not measured"
	[ "$stderr" = "warning: 5 entries not evaluated: not measured: tc_pct, roofline_pct, l2_hit_pct, dram_pct, spill_bytes, waves
wrote docs/kernels/mla-decode/tasks/v2.md" ]
}

@test "an explicit version, and the next version after branches and sources" {
	git branch kopt/mla-decode/v4
	mkdir -p kernels/mla_decode/v6
	run --separate-stderr git kopt strategize mla-decode v0 --no-write
	assert_success
	assert_line --index 0 "## Optimization Task: mla-decode v0 -> v7"
}

@test "the kernel's language catalog counts, not the others" {
	mkdir -p docs/kernels/mm/results
	sed 's/"mla-decode"/"mm"/' docs/kernels/mla-decode/results/v0.json >docs/kernels/mm/results/v0.json
	run --separate-stderr git kopt strategize mm --no-write --max 9
	assert_success
	assert_line --partial "Launch bounds (cuda-c/O1, est. impact 5-20%): \`occ_pct < 25 and regs > 128\` holds on"
	refute_output --partial "TMA loads"
	assert_line "- Language: cuda-c gives thread-level control, enough for this task"
}

@test "no results: say what to run, write nothing" {
	git rm -q docs/kernels/mla-decode/results/v0.json
	run --separate-stderr git kopt strategize mla-decode
	assert_failure 128
	assert_output ""
	[ "$stderr" = "error: no numbers for kernel 'mla-decode' (no results file, no performance block in docs/kernels/mla-decode.md); run 'git kopt profile mla-decode v0' first" ]

	run --separate-stderr git kopt strategize mla-decode v3
	assert_failure 128
	[ "$stderr" = "error: no numbers for mla-decode v3: neither docs/kernels/mla-decode/results/v3.json nor a performance block in its devlog entry; run 'git kopt profile mla-decode v3' first" ]
	[ ! -e docs/kernels/mla-decode/tasks ]
}

@test "a mistyped trigger is prose to judge, with a warning naming the file and line" {
	sed -i 's/`waves < 1`/`waves < 1 and occupancy > 2`/' docs/knowledge/optimizations/split-kv.md
	run --separate-stderr git kopt strategize mla-decode
	assert_success
	[ "$stderr" = "warning: docs/knowledge/optimizations/split-kv.md:5: trigger \`waves < 1 and occupancy > 2\` is read as prose for the agent to judge: unknown metric 'occupancy' (known: duration_us, tc_pct, dram_pct, occ_pct, l2_hit_pct, spill_bytes, regs, waves, tflops, gbps, roofline_pct, b, s, t)
wrote $TASK" ]
	# the catalog row's own trigger still evaluates
	assert_line --partial "2. Split-KV decode (O1, est. impact 20-60%): \`waves < 1\` holds"
}

@test "bad results and bad arguments" {
	echo '{ "schema": 1, ' >docs/kernels/mla-decode/results/v0.json
	run --separate-stderr git kopt strategize mla-decode
	assert_failure 128
	[ "$stderr" = "error: docs/kernels/mla-decode/results/v0.json:1:16: not valid JSON" ]
	[ ! -e docs/kernels/mla-decode/tasks ]

	run --separate-stderr git kopt strategize
	assert_failure 129
	[[ "$stderr" == "error: which kernel?"* ]]
	run --separate-stderr git kopt strategize mla-decode --max 0
	assert_failure 129
	run --separate-stderr git kopt strategize mla-decode latest
	assert_failure 128
	[ "$stderr" = "fatal: 'latest' is not a version (v0, v1, ...)" ]
	run --separate-stderr git kopt strategize nope
	assert_failure 128
	[[ "$stderr" == "fatal: unknown kernel 'nope'"* ]]
}
