#!/usr/bin/env bats
# The pre-commit hook: staged content that must stay consistent whatever
# the message says (detail files, catalog rows, devlogs).

load helper
load gate

setup() {
	setup_kernel_repo
	install_hooks
}

@test "a detail file the template's lint refuses is refused, all problems listed" {
	add_optimization swizzle
	printf '# swizzle\n\n## When to Apply\n- always\n\n## Mechanism\nx\n' \
		>docs/knowledge/optimizations/swizzle.md
	git add -A
	run --separate-stderr git commit -q -m "Add swizzle"
	assert_failure 1
	expected="error: docs/knowledge/optimizations/swizzle.md:7: missing section '## Affected Metrics'
error: docs/knowledge/optimizations/swizzle.md:7: missing section '## Implementation'
error: docs/knowledge/optimizations/swizzle.md:7: missing section '## Performance Evidence'
error: docs/knowledge/optimizations/swizzle.md:7: missing section '## Generalization'
error: docs/knowledge/optimizations/swizzle.md:7: missing section '## Pitfalls'
error: docs/knowledge/optimizations/swizzle.md:7: missing section '## Interactions'
hint: edit docs/knowledge/optimizations/swizzle.md where it says ('git kopt learn lint' lists every problem)
error: commit refused by the kopt gate (6 problems)"
	[ "$stderr" = "$expected" ]
}

@test "headings inside code blocks do not count as sections" {
	add_optimization swizzle
	{
		echo '# swizzle'
		echo '```'
		grep '^## ' "$GATE/split-kv.md"
		echo '```'
	} >docs/knowledge/optimizations/swizzle.md
	git add -A
	run --separate-stderr git commit -q -m "Add swizzle"
	assert_failure 1
	[[ "$stderr" == *"swizzle.md:11: missing section '## When to Apply'"* ]]
}

@test "an empty When to Apply section is refused" {
	add_optimization swizzle
	sed -i '/^- Decode attention/d; /^- `waves < 1`/d' \
		docs/knowledge/optimizations/swizzle.md
	git add -A
	run --separate-stderr git commit -q -m "Add swizzle"
	assert_failure 1
	[[ "$stderr" == "error: docs/knowledge/optimizations/swizzle.md:3: section '## When to Apply' is empty"* ]]
}

@test "a catalog row whose detail file is missing is refused" {
	add_optimization swizzle
	git add .claude
	run --separate-stderr git commit -q -m "Add the row"
	assert_failure 1
	[[ "$stderr" == "error: .claude/skills/optimization-catalog/SKILL.md:13: row 'O9' links to '../../../docs/knowledge/optimizations/swizzle.md', which is not there"* ]]
	[[ "$stderr" == *"hint:   git kopt learn new optimization swizzle
hint: it creates the file from the template; or correct the row's Detail File at .claude/skills/optimization-catalog/SKILL.md:13"* ]] ||
		fail "$stderr"
}

@test "deleting a detail file that a row links to is refused" {
	git rm -q docs/knowledge/optimizations/split-kv.md
	run --separate-stderr git commit -q -m "Drop split-kv"
	assert_failure 1
	[[ "$stderr" == *"row 'O1' links to '../../../docs/knowledge/optimizations/split-kv.md', which is not there"* ]]
}

@test "a detail file without a row is refused" {
	sed 's/^# .*/# swizzle/' "$GATE/split-kv.md" \
		>docs/knowledge/optimizations/swizzle.md
	git add -A
	run --separate-stderr git commit -q -m "Add swizzle"
	assert_failure 1
	expected="error: docs/knowledge/optimizations/swizzle.md has no row in the optimization index of the catalog
hint: fix it with:
hint:   git kopt learn new optimization swizzle
hint: it writes the row from the file; or add the row to '.claude/skills/optimization-catalog/SKILL.md' by hand (the Detail File column links to it)
error: commit refused by the kopt gate (1 problem)"
	[ "$stderr" = "$expected" ]
}

@test "rows linking from the top of the repository resolve too" {
	sed 's/^# .*/# swizzle/' "$GATE/split-kv.md" \
		>docs/knowledge/optimizations/swizzle.md
	sed -i '/^| O1 /a | O2 | Swizzle | l2 < 80 | 5% | none | `docs/knowledge/optimizations/swizzle.md` |' \
		.claude/skills/optimization-catalog/SKILL.md
	git add -A
	run git commit -q -m "Add swizzle"
	assert_success
}

@test "a devlog that no longer parses is refused, naming the line" {
	printf 'caf\351\n' >>docs/kernels/mla-decode.md
	git add -A
	run --separate-stderr git commit -q -m "Break the log"
	assert_failure 1
	[ "$stderr" = "error: docs/kernels/mla-decode.md:15: not UTF-8 text
hint: fix the devlog so that it parses again
error: commit refused by the kopt gate (1 problem)" ]
	: >docs/kernels/mla-decode.md
	git add -A
	run --separate-stderr git commit -q -m "Empty the log"
	assert_failure 1
	[[ "$stderr" == "error: docs/kernels/mla-decode.md:1: the devlog is empty"* ]]
}

@test "a devlog with two entries for one version or an open fence is refused" {
	printf '\n### V0: again\n\n```c\nint x;\n' >>docs/kernels/mla-decode.md
	git add -A
	run --separate-stderr git commit -q -m "Break the log"
	assert_failure 1
	[[ "$stderr" == *"error: docs/kernels/mla-decode.md:16: version 'v0' has a second heading (the first is at line 9)"* ]]
	[[ "$stderr" == *"error: docs/kernels/mla-decode.md:18: code block never closed"* ]]
	[[ "$stderr" == *"(2 problems)" ]]
}

@test "old inconsistencies do not block unrelated commits" {
	git rm -q --cached docs/knowledge/optimizations/split-kv.md
	git commit -q --no-verify -m "Lose a detail file"
	echo "x" >kernels/mla_decode/v0/notes.txt
	git add -A
	run git commit -q -m "Unrelated"
	assert_success
}

@test "settings come from HEAD: a staged .kopt cannot loosen the gate" {
	git checkout -q -b kopt/mla-decode/v1
	add_version v1 "Wide tiles"
	results mla-decode v1 v0 120.0 210.0
	git config -f .kopt kopt.noise 50%
	git add -A
	run --separate-stderr git commit -q -m "Loosen and verify"
	assert_failure 1
	[[ "$stderr" == *"beyond the 3.0% threshold"* ]]
}
