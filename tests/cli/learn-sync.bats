#!/usr/bin/env bats
# git kopt learn sync: catalog rows rewritten from their detail files,
# the row's line spliced and every other byte kept.

load helper

SHARED=.claude/skills/optimization-catalog/SKILL.md
SYNC=$FIXTURES/knowledge/sync

setup() {
	setup_repo
	cp -R "$FIXTURES/knowledge/kb/." .
	cp "$SYNC/vectorized-loads.md" docs/knowledge/optimizations/
	cp "$SYNC/bank-conflicts.md" docs/knowledge/anti-patterns/
	git add -A
	git commit -qm "Knowledge base"
}

# A catalog in another project's style: CRLF, a Notes column, links for
# detail files, escaped pipes, rows of placeholders.
hand_catalog() {
	printf '%s\r\n' \
		'# Catalog' '' \
		'| ID | Optimization | Trigger | Est. Impact | Pitfalls | Notes | Detail |' \
		'|:---|:---|:---|---:|:---|:---|:---|' \
		'| O1 | Split-KV decode | `waves < 1` | 20-60% | merge cost | a \| b | [x](../../../docs/knowledge/optimizations/split-kv.md) |' \
		'| O7 |   [Optimization Name]   | [trigger conditions] | [est. impact] | [pitfalls] | keep me | [v](../../../docs/knowledge/optimizations/vectorized-loads.md) |' \
		'' \
		'| ID | Anti-Pattern | Failure Mode | Source | Detail File |' \
		'|----|----|----|----|----|' \
		'| A1 | Register spilling | spills | external report | `docs/knowledge/anti-patterns/register-spill.md` |' \
		'| A2 | Under-filled grid | idle SMs | external report | `docs/knowledge/anti-patterns/under-filled-grid.md` |' \
		'| A3 | Bank conflicts | [failure mode] | [source] | `docs/knowledge/anti-patterns/bank-conflicts.md` |' \
		>"$SHARED"
}

@test "lint warns about rows the file can fill, naming learn sync" {
	hand_catalog
	run --separate-stderr git kopt learn lint
	[[ $stderr == *"$SHARED:6: O7: name, Trigger Conditions, Est. Impact, Pitfalls disagree with 'docs/knowledge/optimizations/vectorized-loads.md'; 'git kopt learn sync O7' copies the file's"* ]] ||
		fail "stderr: $stderr"
	[[ $stderr == *"$SHARED:12: A3: Failure Mode, Source disagree with 'docs/knowledge/anti-patterns/bank-conflicts.md'; 'git kopt learn sync A3' copies the file's"* ]] ||
		fail "stderr: $stderr"
	[[ $stderr != *"O1:"* ]] || fail "a summary in the author's words is no disagreement: $stderr"
}

@test "sync rewrites only the cells that disagree, on their lines, CRLF and all" {
	hand_catalog
	cp "$SHARED" before
	run --separate-stderr git kopt learn sync
	assert_success
	assert_output "$SHARED O7: Optimization, Trigger Conditions, Est. Impact, Pitfalls from docs/knowledge/optimizations/vectorized-loads.md
$SHARED A3: Failure Mode, Source from docs/knowledge/anti-patterns/bank-conflicts.md"
	# every line but the two rows is byte for byte the same
	diff before "$SHARED" >d || true
	[ "$(grep -c '^[<>]' d)" = 4 ] || fail "$(cat d)"
	row=$(grep '^| O7 ' "$SHARED")
	[ "$row" = $'| O7 | Vectorized global loads | `dram_pct < 60` and `gbps < 2000 and occ_pct > 50` | 3-29% | Misaligned pointers fault; The tail needs a scalar loop | keep me | [v](../../../docs/knowledge/optimizations/vectorized-loads.md) |\r' ] ||
		fail "row: $row"
	row=$(grep '^| A3 ' "$SHARED")
	[ "$row" = $'| A3 | Bank conflicts | Threads of a warp hit the same bank and are served one after another | local experiment (transpose v4 -> v5, H200) | `docs/knowledge/anti-patterns/bank-conflicts.md` |\r' ] ||
		fail "row: $row"
	grep -qF '| O1 | Split-KV decode | `waves < 1` | 20-60% | merge cost | a \| b |' "$SHARED"
	# the rows read back, lint has nothing left to say about them
	run --separate-stderr git kopt learn lint
	[[ $stderr != *"O7:"* && $stderr != *"A3:"* ]] || fail "$stderr"
	run --separate-stderr git kopt learn sync
	assert_success
	assert_output "every row agrees with its detail file; nothing to do"
}

@test "-n names the rows and writes nothing; IDs and paths pick rows" {
	hand_catalog
	cp "$SHARED" before
	run --separate-stderr git kopt learn sync -n
	assert_success
	assert_line "2 rows would change; run without -n to write"
	cmp before "$SHARED"
	run --separate-stderr git kopt learn sync docs/knowledge/anti-patterns/bank-conflicts.md
	assert_success
	assert_output "$SHARED A3: Failure Mode, Source from docs/knowledge/anti-patterns/bank-conflicts.md"
	grep -q '^| O7 |   \[Optimization Name\]' "$SHARED"
	run --separate-stderr git kopt learn sync O9
	assert_failure 128
	[ "$stderr" = "error: 'O9' is neither a catalog ID nor the path of a detail file with a row" ] ||
		fail "$stderr"
}

@test "--words rewrites summaries that say other than the file" {
	hand_catalog
	run --separate-stderr git kopt learn sync --words O1
	assert_success
	assert_output "$SHARED O1: Pitfalls from docs/knowledge/optimizations/split-kv.md"
	grep -qF '| O1 | Split-KV decode | `waves < 1` | 20-60% | None known | a \| b |' "$SHARED"
}

@test "learn new on an existing detail file writes its row from the file" {
	run --separate-stderr git kopt learn new optimization vectorized-loads
	assert_success
	assert_line "added O6 to $SHARED"
	run grep '^| O6 ' "$SHARED"
	assert_output '| O6 | Vectorized global loads | `dram_pct < 60` and `gbps < 2000 and occ_pct > 50` | 3-29% | Misaligned pointers fault; The tail needs a scalar loop | `docs/knowledge/optimizations/vectorized-loads.md` |'
	git kopt learn new anti-pattern bank-conflicts >/dev/null
	run grep '^| A3 ' "$SHARED"
	assert_output '| A3 | Shared-memory bank conflicts | Threads of a warp hit the same bank and are served one after another | local experiment (transpose v4 -> v5, H200) | `docs/knowledge/anti-patterns/bank-conflicts.md` |'
	run --separate-stderr git kopt learn lint
	assert_success
	[[ $stderr != *"O6"* ]] || fail "$stderr"
}

@test "a table of the default shape, without a trailing newline" {
	printf '| ID | Optimization | Trigger Conditions | Est. Impact | Pitfalls | Detail File |\n|---|---|---|---|---|---|\n| O1 | V | [trigger conditions] | [est. impact] | [pitfalls] | `docs/knowledge/optimizations/vectorized-loads.md` |' >"$SHARED"
	run --separate-stderr git kopt learn sync
	assert_success
	assert_output "$SHARED O1: Trigger Conditions, Est. Impact, Pitfalls from docs/knowledge/optimizations/vectorized-loads.md"
	run tail -c 36 "$SHARED"
	assert_output 'optimizations/vectorized-loads.md` |'
	grep -q '| 3-29% |' "$SHARED"
}
