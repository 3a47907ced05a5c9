#!/usr/bin/env bats
# git kopt select: the language of least control that covers the task.

load helper

TASK=docs/kernels/mla-decode/tasks/v1.md

setup() {
	setup_repo
	cp -R "$FIXTURES/knowledge/kb/." .
	rm docs/kernels/mla-decode/results/v1.json
}

@test "without a task file, select uses what strategize would choose" {
	run --separate-stderr git kopt select mla-decode
	assert_success
	assert_output "## Language: cute-dsl
Required control: warp (from 'git kopt strategize mla-decode'; no task file yet)
- Tensor-core MMA (O2): warp
- Split-KV decode (O1): block
- Head grouping (O4): block
Why:
- cutile-dsl, the current language, gives only block-level control; the task needs warp
- cute-dsl gives warp-level control, the least of the configured languages that covers warp"
	[ -z "$stderr" ]
	[ ! -e "$TASK" ]
}

@test "the task file decides, as edited by hand" {
	git kopt strategize mla-decode >/dev/null 2>&1
	run --separate-stderr git kopt select mla-decode
	assert_success
	assert_line --index 0 "## Language: cute-dsl"
	assert_line --index 1 "Required control: warp (from $TASK)"

	# without the tensor-core item, block control is enough: keep cutile-dsl
	sed -i '/^1\. Tensor-core MMA/d' "$TASK"
	run --separate-stderr git kopt select mla-decode
	assert_success
	assert_output "## Language: cutile-dsl
Required control: block (from $TASK)
- Split-KV decode (O1): block
- Head grouping (O4): block
Why:
- cutile-dsl, the current language, gives block-level control, enough for the block level the task needs; it is kept"
}

@test "a link that is no detail file is ignored with a warning" {
	git kopt strategize mla-decode >/dev/null 2>&1
	sed -i 's#(../../../knowledge/optimizations/tensor-core-mma.md)#(../../../knowledge/optimizations/gone.md)#' "$TASK"
	run --separate-stderr git kopt select mla-decode
	assert_success
	assert_line --index 0 "## Language: cutile-dsl"
	[ "$stderr" = "warning: $TASK: '../../../knowledge/optimizations/gone.md' is not a detail file of the knowledge base; ignored" ]
}

@test "a language with more control than needed is kept" {
	mkdir -p docs/kernels/mm/results
	sed 's/"mla-decode"/"mm"/' docs/kernels/mla-decode/results/v0.json >docs/kernels/mm/results/v0.json
	run --separate-stderr git kopt select mm --json
	assert_success
	python3 - "$output" <<-'PY'
	import json, sys
	s = json.loads(sys.argv[1])
	assert s["language"] == "cuda-c" and s["kept"] is True, s
	assert s["current"] == "cuda-c" and s["required"] == "warp", s
	assert s["task"] is None, s
	assert [o["id"] for o in s["optimizations"]] == ["O2", "O1", "O4"], s
	PY
}

@test "no configured language gives enough control" {
	git config -f .kopt --remove-section language.cuda-c
	git config -f .kopt --remove-section kernel.mm
	sed -i 's/- Control: warp/- Control: thread/' docs/knowledge/optimizations/tensor-core-mma.md
	run --separate-stderr git kopt select mla-decode
	assert_failure 128
	assert_output ""
	[ "$stderr" = "cutile-dsl, the current language, gives only block-level control; the task needs thread
fatal: no configured language gives thread-level control; add one to .kopt ([language \"<name>\"] control = thread)" ]
}

@test "no task and no results: say what to run" {
	rm docs/kernels/mla-decode/results/v0.json
	run --separate-stderr git kopt select mla-decode
	assert_failure 128
	[ "$stderr" = "error: no numbers for kernel 'mla-decode' (no results file, no performance block in docs/kernels/mla-decode.md); run 'git kopt profile mla-decode v0' first" ]
	run --separate-stderr git kopt select
	assert_failure 129
	[[ "$stderr" == "error: which kernel?"* ]]
}
