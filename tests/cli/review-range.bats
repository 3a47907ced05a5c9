#!/usr/bin/env bats
# git kopt review over a scripted history: a base on main, a version
# branch on top.

load helper
load kopt-results

setup() {
	setup_repo
	setup_kernel
	write_devlog
	write_results mla-decode v0 null 95.1 140
	write_results mla-decode v1 v0 41.3 120
	git add -A
	git commit -q -m "Measure v0 and v1"
	git checkout -q -b kopt/mla-decode/v2
	printf '\n### V2: Paged split-KV\n\n**What changed**:\n- pages\n' \
		>>docs/kernels/mla-decode.md
	git commit -q -a -m "Design v2" -m "Kopt-Kernel: mla-decode
Kopt-Version: v2
Kopt-Step: design"
	write_results mla-decode v2 v1 45.0 110 true
	git add -A
	git commit -q --no-verify -m "Verify v2" -m "Kopt-Kernel: mla-decode
Kopt-Version: v2
Kopt-Step: verify"
}

@test "a regressing version without LEARN: the whole review" {
	run --separate-stderr git kopt review
	assert_success
	[ "$stderr" = "" ]
	assert_equal "$(printf '%s\n' "$output" | hide_ids)" \
		"$(cat "$FIXTURES/review/regression.md")"
}

@test "the range forms: default, <base>...<head>, <base>, <base>..<head>" {
	git kopt review >default.out
	run --separate-stderr git kopt review main...HEAD
	assert_output "$(cat default.out)"
	run --separate-stderr git kopt review main...
	assert_output "$(cat default.out)"
	run --separate-stderr git kopt review main
	assert_output "$(cat default.out)"
	run --separate-stderr git kopt review main..kopt/mla-decode/v2
	assert_output "$(cat default.out)"
	rm default.out
}

@test "three dots start at the merge base, two dots at the base itself" {
	git checkout -q main
	mkdir -p docs/knowledge/optimizations
	echo "# Swizzle" >docs/knowledge/optimizations/swizzle.md
	git add -A
	git commit -q --no-verify -m "Learn swizzle on main"
	git checkout -q kopt/mla-decode/v2
	run --separate-stderr git kopt review main...HEAD
	assert_success
	refute_output --partial "swizzle"
	run --separate-stderr git kopt review main..HEAD
	assert_success
	assert_line "- deleted \`docs/knowledge/optimizations/swizzle.md\`"
}

@test "review reads commits, not the work tree" {
	git kopt review >before.out
	write_results mla-decode v2 v1 1.0 1.0
	echo "# Draft" >docs/knowledge/draft.md
	run --separate-stderr git kopt review
	assert_success
	assert_output "$(cat before.out)"
	rm before.out
}

@test "Kopt-Learn: skip is listed and closes the regression" {
	git commit -q --allow-empty -m "Accept v2" -m "Kopt-Kernel: mla-decode
Kopt-Version: v2
Kopt-Learn: skip the decode loss is the price of paging"
	run --separate-stderr git kopt review
	assert_success
	assert_line "- mla-decode v2 on decode: 9.0% slower than v1; LEARN: skipped (the decode loss is the price of paging)"
	assert_line --regexp '^- `Kopt-Learn: skip` in [0-9a-f]{7} \(Accept v2\): the decode loss is the price of paging$'
	refute_output --partial "without an anti-pattern entry"
}

@test "an anti-pattern naming the version records it; catalog rows are diffed" {
	mkdir -p docs/knowledge/anti-patterns
	printf '# Paging on short sequences\n\nSource: mla-decode/v2\n' \
		>docs/knowledge/anti-patterns/paging-short-seq.md
	sed -i 's/^| ID | Anti-Pattern | Failure Mode | Source | Detail File |$/&\n|----|----|----|----|----|\n| AP-1 | Paging on short sequences | gathers cost more than they save | mla-decode\/v2 | docs\/knowledge\/anti-patterns\/paging-short-seq.md |/' \
		.claude/skills/optimization-catalog/SKILL.md
	grep -q '^| AP-1 ' .claude/skills/optimization-catalog/SKILL.md
	git add -A
	git commit -q --no-verify -m "Learn from v2"
	run --separate-stderr git kopt review
	assert_success
	assert_line "- mla-decode v2 on decode: 9.0% slower than v1; LEARN: recorded in \`docs/knowledge/anti-patterns/paging-short-seq.md\`"
	assert_line "- added \`docs/knowledge/anti-patterns/paging-short-seq.md\`"
	assert_line "- catalog \`.claude/skills/optimization-catalog/SKILL.md\`: added row AP-1 (Paging on short sequences)"
	assert_line "Nothing open."
}

@test "results changed on an existing version compare with the base's" {
	write_results mla-decode v1 v0 40.0 118
	git commit -q -a -m "Re-measure v1"
	run --separate-stderr git kopt review
	assert_success
	assert_line "| mla-decode | v1      | Split-KV       | results changed |"
	assert_line --regexp '^#### mla-decode v1 vs v1 at [0-9a-f]{7}$'
	assert_line "| Duration          | 41.30 μs | 40.00 μs | 3.1% faster |"
}

@test "review --json" {
	run --separate-stderr git kopt review --json
	assert_success
	assert_output --partial '"regressions":	[{'
	assert_output --partial '"learn":	"missing"'
	assert_output --partial '"change":	"added"'
}

@test "bad ranges and a repository without a default branch" {
	run --separate-stderr git kopt review nope...HEAD
	assert_failure 128
	[ "$stderr" = "fatal: unknown revision 'nope'" ]
	run --separate-stderr git kopt review a b
	assert_failure 129
	git branch -q -m main trunk
	run --separate-stderr git kopt review
	assert_failure 128
	[ "$stderr" = "fatal: no default branch to review against; name a range ('git kopt review main...HEAD')" ]
}
