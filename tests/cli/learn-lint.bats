#!/usr/bin/env bats
# git kopt learn lint: every problem as file:line: what, exit 1.

load helper

SHARED=.claude/skills/optimization-catalog/SKILL.md

setup() {
	setup_repo
	cp -R "$FIXTURES/knowledge/kb/." .
}

@test "a clean knowledge base passes" {
	run --separate-stderr git kopt learn lint
	assert_success
	assert_output "3 catalogs and 9 detail files, no problems"
	[ -z "$stderr" ]
}

@test "the starter knowledge base that init installs passes" {
	rm -rf .kopt .claude docs
	git kopt init -q
	run --separate-stderr git kopt learn lint
	assert_success
	assert_output --regexp '^4 catalogs and [0-9]+ detail files, no problems$'
}

@test "each detail-file rule is reported with its file and line" {
	for f in "$FIXTURES"/knowledge/detail/*.md; do
		name=$(basename "$f" .md)
		cp "$f" "docs/knowledge/optimizations/$name.md"
		echo "| O$((100 + ${#name})) | $name | x | 1% | p | \`docs/knowledge/optimizations/$name.md\` |" >>rows
	done
	# one row each, spliced after O5
	awk -v rows="$(cat rows)" '{ print } /^\| O5 / { print rows }' "$SHARED" >catalog
	mv catalog "$SHARED"
	run --separate-stderr git kopt learn lint
	assert_failure 1
	for f in "$FIXTURES"/knowledge/detail/*.lint; do
		name=$(basename "$f" .lint)
		while read -r line; do
			assert_line "docs/knowledge/optimizations/$line"
		done <"$f"
	done
}

@test "bad catalogs: duplicate IDs, rows pointing nowhere, wrong folders" {
	cat >>"$SHARED" <<-'EOF'

	| ID | Optimization | Trigger Conditions | Est. Impact | Pitfalls | Detail File |
	|----|---|---|---|---|---|
	| O1 | Again | x | 1% | p | `docs/knowledge/optimizations/again.md` |
	| O9 | Nowhere | x | 1% | p | `docs/knowledge/optimizations/nowhere.md` |
	| O10 | Anti | x | 1% | p | [a](../../../docs/knowledge/anti-patterns/register-spill.md) |
	EOF
	mkdir -p docs/knowledge/notes
	cp docs/knowledge/optimizations/fusion.md docs/knowledge/notes/stray.md
	cp docs/knowledge/optimizations/fusion.md docs/knowledge/optimizations/again.md
	cp docs/knowledge/optimizations/fusion.md docs/knowledge/optimizations/orphan.md
	run --separate-stderr git kopt learn lint
	assert_failure 1
	assert_output "$SHARED:22: duplicate ID 'O1' (also on line 7)
$SHARED:23: O9: detail file 'docs/knowledge/optimizations/nowhere.md' does not exist; create it with 'git kopt learn new optimization nowhere'
$SHARED:24: O10: detail file 'docs/knowledge/anti-patterns/register-spill.md' already has a row (A1, $SHARED:17); a detail file has exactly one
$SHARED:24: O10: 'docs/knowledge/anti-patterns/register-spill.md' is an anti-pattern file (under anti-patterns/) but sits in the optimization index
docs/knowledge/notes/stray.md: detail file in the wrong folder: not in a folder of detail files (docs/knowledge/optimizations/, docs/knowledge/anti-patterns/ or docs/knowledge/languages/<language>/{optimizations,anti-patterns}/)
docs/knowledge/optimizations/orphan.md: no row in the optimization index of $SHARED; add one ('git kopt learn new optimization orphan' adds it)"
	[ "$stderr" = "6 problems in the knowledge base" ]
}

@test "a trigger with a syntax error or an unknown metric is prose: a warning, not a problem" {
	sed -i 's/`waves < 1`/`waves <`/' docs/knowledge/optimizations/split-kv.md
	sed -i 's/`l2_hit_pct < 80`/`l2_hit < 80`/' docs/knowledge/optimizations/swizzle.md
	run --separate-stderr git kopt learn lint
	assert_success
	assert_output "3 catalogs and 9 detail files, no problems"
	[ "$stderr" = "warning: docs/knowledge/optimizations/split-kv.md:5: trigger \`waves <\` is read as prose for the agent to judge: column 8: expected a value at end of expression
warning: docs/knowledge/optimizations/swizzle.md:5: trigger \`l2_hit < 80\` is read as prose for the agent to judge: unknown metric 'l2_hit' (known: duration_us, tc_pct, dram_pct, occ_pct, l2_hit_pct, spill_bytes, regs, waves, tflops, gbps, roofline_pct, b, s, t)" ]
}

@test "a language file listed in the shared catalog belongs in its own" {
	sed -i 's#`docs/knowledge/optimizations/swizzle.md`#`docs/knowledge/languages/cute-dsl/optimizations/tma.md`#' "$SHARED"
	rm docs/knowledge/optimizations/swizzle.md
	run --separate-stderr git kopt learn lint
	assert_failure 1
	assert_output "$SHARED:9: O3: detail file 'docs/knowledge/languages/cute-dsl/optimizations/tma.md' already has a row (O1, .claude/skills/optimization-catalog-cute-dsl/SKILL.md:5); a detail file has exactly one
$SHARED:9: O3: 'docs/knowledge/languages/cute-dsl/optimizations/tma.md' is specific to language 'cute-dsl'; its row belongs in .claude/skills/optimization-catalog-cute-dsl/SKILL.md"
}

@test "lint takes no arguments" {
	run --separate-stderr git kopt learn lint extra
	assert_failure 129
	[[ "$stderr" == "error: too many arguments"* ]]
}
