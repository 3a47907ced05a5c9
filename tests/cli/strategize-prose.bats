#!/usr/bin/env bats
# A catalog whose triggers are prose (a few identifiers in backticks) is
# read as judgement calls: lint warns at most, strategize lists the
# entries to judge, ranked by impact, and nothing blocks a commit.

load helper
load gate

CAT="$FIXTURES/catalogs"

setup() {
	setup_kernel_repo
	install_hooks
	cp "$CAT/prose-triggers.md" .claude/skills/optimization-catalog/SKILL.md
	cp "$CAT/split-kv-prose.md" docs/knowledge/optimizations/split-kv.md
	cp "$CAT/page-table-prefetch.md" docs/knowledge/optimizations/
}

@test "lint accepts prose triggers and warns only about what looks like a mistyped metric" {
	run --separate-stderr git kopt learn lint
	assert_success
	assert_output "1 catalog and 2 detail files, no problems"
	[ "$stderr" = "warning: .claude/skills/optimization-catalog/SKILL.md:15: trigger \`dram > 70\` is read as prose for the agent to judge: unknown metric 'dram' (known: duration_us, tc_pct, dram_pct, occ_pct, l2_hit_pct, spill_bytes, regs, waves, tflops, gbps, roofline_pct, b, s, t)
warning: docs/knowledge/optimizations/page-table-prefetch.md:5: trigger \`dram > 70\` is read as prose for the agent to judge: unknown metric 'dram' (known: duration_us, tc_pct, dram_pct, occ_pct, l2_hit_pct, spill_bytes, regs, waves, tflops, gbps, roofline_pct, b, s, t)" ]
}

@test "a commit of the prose catalog passes the gate" {
	git add -A
	run --separate-stderr git commit -q -m "Our catalog"
	assert_success
}

@test "strategize lists the candidates to judge, ranked by impact, never 'None'" {
	run --separate-stderr git kopt strategize mla-decode --no-write
	assert_success
	assert_line "1. Judge: Split-KV decode (O1, est. impact 30%): trigger to judge on v0's profile: \"grid smaller than the SM count (num_ctas < #SMs), long Z\"; see [docs/knowledge/optimizations/split-kv.md](../../../knowledge/optimizations/split-kv.md)"
	assert_line "2. Judge: Page-table prefetch (O2, est. impact 10%): trigger to judge on v0's profile: \"the page walk shows in the stall reasons; dram > 70\"; see [docs/knowledge/optimizations/page-table-prefetch.md](../../../knowledge/optimizations/page-table-prefetch.md)"
	assert_line "### To Judge"
	refute_output --partial "None"
	run --separate-stderr git kopt strategize mla-decode --no-write --json
	assert_success
	python3 -c '
import json, sys
t = json.load(sys.stdin)
assert [j["id"] for j in t["to_judge"]] == ["O1", "O2"], t["to_judge"]
assert t["to_judge"][0]["trigger_text"].startswith("grid smaller")
' <<<"$output"
}

@test "catalogs in other projects' styles are read: reference links, extra columns, front matter" {
	for c in prose-triggers reference-links extra-columns; do
		cp "$CAT/$c.md" .claude/skills/optimization-catalog/SKILL.md
		run --separate-stderr git kopt learn lint
		assert_success
		assert_output "1 catalog and 2 detail files, no problems"
		run --separate-stderr git kopt strategize mla-decode --no-write
		assert_success
		assert_line --partial "- Page-table prefetch (O2, est. impact "
		assert_line --partial "see [docs/knowledge/optimizations/page-table-prefetch.md](../../../knowledge/optimizations/page-table-prefetch.md)"
	done
}
