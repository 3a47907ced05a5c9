#!/usr/bin/env bats
# git kopt learn list: the entries of every catalog.

load helper

setup() {
	setup_repo
	cp -R "$FIXTURES/knowledge/kb/." .
}

@test "learn list prints one line per entry, catalog by catalog" {
	run --separate-stderr git kopt learn list
	assert_success
	assert_output "O1  optimization  shared    Split-KV decode     docs/knowledge/optimizations/split-kv.md  [waves < 1]
O2  optimization  shared    Tensor-core MMA     docs/knowledge/optimizations/tensor-core-mma.md  [tc_pct < 10 and roofline_pct < 50]
O3  optimization  shared    Swizzled CTA order  docs/knowledge/optimizations/swizzle.md  [l2_hit_pct < 80]
O4  optimization  shared    Head grouping       docs/knowledge/optimizations/head-grouping.md  [dram_pct > 50 and tc_pct < 30]
O5  optimization  shared    Epilogue fusion     docs/knowledge/optimizations/fusion.md
A1  anti-pattern  shared    Register spilling   docs/knowledge/anti-patterns/register-spill.md  [spill_bytes > 0]
A2  anti-pattern  shared    Under-filled grid   docs/knowledge/anti-patterns/under-filled-grid.md  [waves < 0.5]
O1  optimization  cute-dsl  TMA loads           docs/knowledge/languages/cute-dsl/optimizations/tma.md  [dram_pct > 70]
O1  optimization  cuda-c    Launch bounds       docs/knowledge/languages/cuda-c/optimizations/launch-bounds.md  [occ_pct < 25 and regs > 128]"
	[ -z "$stderr" ]
}

@test "learn list --json gives triggers, control, source type and contexts" {
	run --separate-stderr git kopt learn list --json
	assert_success
	python3 - "$output" <<-'PY'
	import json, sys
	entries = json.loads(sys.argv[1])
	assert len(entries) == 9, len(entries)
	e = entries[1]
	assert e["id"] == "O2" and e["kind"] == "optimization", e
	assert e["language"] is None and e["control"] == "warp", e
	assert e["impact_pct"] == 125, e
	assert e["triggers"] == ["tc_pct < 10 and roofline_pct < 50"], e
	assert e["source_type"] == "external report", e
	assert e["contexts"] == ["Attention products on FMA units"], e
	assert entries[5]["kind"] == "anti-pattern" and "impact_pct" not in entries[5]
	assert entries[7]["language"] == "cute-dsl"
	assert entries[4]["triggers"] == [] and entries[4]["control"] is None
	PY
}

@test "a file without a row is listed, and the problems are mentioned" {
	cp docs/knowledge/optimizations/fusion.md docs/knowledge/optimizations/extra.md
	run --separate-stderr git kopt learn list
	assert_success
	assert_line --regexp '^-   optimization  shared +Epilogue fusion +docs/knowledge/optimizations/extra.md$'
	[ "$stderr" = "warning: the knowledge base has 1 problem; run 'git kopt learn lint'" ]
}
