#!/usr/bin/env bats
# The LEARN gate in the commit hooks: a regression or a novel finding is
# refused until the knowledge base records it, or the skip trailer says why.

load helper
load gate

setup() {
	setup_kernel_repo
	install_hooks
	git checkout -q -b kopt/mla-decode/v1
	add_version v1 "Wide tiles"
}

@test "a regression commit is refused, naming the fixing command" {
	results mla-decode v1 v0 120.0 210.0
	git add -A
	run --separate-stderr git commit -q -m "Verify mla-decode v1"
	assert_failure 1
	assert_output ""
	expected="error: mla-decode v1 is a regression against v0 (decode: 100.00 us -> 120.00 us, +20.0% beyond the 3.0% threshold; spec-decode: 200.00 us -> 210.00 us, +5.0% beyond the 3.0% threshold) and no anti-pattern file with its catalog row is staged
hint: fix it, then commit again:
hint:   git kopt learn new anti-pattern wide-tiles --from mla-decode/v1
hint:   git add docs/knowledge/anti-patterns/wide-tiles.md .claude/skills/optimization-catalog/SKILL.md
hint: or, when there is nothing to learn, add the trailer 'Kopt-Learn: skip <reason>' to the message
error: commit refused by the kopt gate (1 problem)"
	[ "$stderr" = "$expected" ]
	# nothing was committed
	run git log -1 --format=%s
	assert_output "Design mla-decode v1"
}

@test "a regression commit is accepted once the anti-pattern and its row are staged" {
	results mla-decode v1 v0 120.0 210.0
	git add -A
	run git commit -q -m "Verify mla-decode v1"
	assert_failure 1
	add_anti_pattern wide-tiles
	git add -A
	run --separate-stderr git commit -q -m "Verify mla-decode v1"
	assert_success
	[ -z "$stderr" ]
	run git log -1 --format=%s
	assert_output "Verify mla-decode v1"
}

@test "after 'learn new anti-pattern' the gate asks for the placeholders, then accepts" {
	results mla-decode v1 v0 120.0 210.0
	git add -A
	run git commit -q -m "Verify mla-decode v1"
	assert_failure 1
	run git kopt learn new anti-pattern wide-tiles --from mla-decode/v1
	assert_success
	git add -A
	run --separate-stderr git commit -q -m "Verify mla-decode v1"
	assert_failure 1
	[[ "$stderr" == "error: docs/knowledge/anti-patterns/wide-tiles.md:16: template placeholder '[Context 1: "* ]]
	[[ "$stderr" == *"error: .claude/skills/optimization-catalog/SKILL.md:18: A1: template placeholder '[failure mode]' left in the 'Failure Mode' column
hint: fix it with:
hint:   git kopt learn sync
hint: it fills the row from its detail file once that is written; or edit the row at that line
error: commit refused by the kopt gate (14 problems)" ]]
	# what a person or the agent writes in
	cp "$GATE/wide-tiles.md" docs/knowledge/anti-patterns/wide-tiles.md
	sed -i 's/\[failure mode\]/accumulators spill/' \
		.claude/skills/optimization-catalog/SKILL.md
	run git kopt learn lint
	assert_success
	git add -A
	run --separate-stderr git commit -q -m "Verify mla-decode v1"
	assert_success
	[ -z "$stderr" ]
}

@test "an anti-pattern file without its catalog row does not pass" {
	results mla-decode v1 v0 120.0 210.0
	sed 's/^# .*/# wide-tiles/' "$GATE/wide-tiles.md" \
		>docs/knowledge/anti-patterns/wide-tiles.md
	git add -A
	run --separate-stderr git commit -q -m "Verify mla-decode v1"
	assert_failure 1
	# pre-commit refuses first: the detail file has no row
	[[ "$stderr" == *"error: docs/knowledge/anti-patterns/wide-tiles.md has no row in the anti-pattern index of the catalog"* ]]
}

@test "a change inside the noise or the spread passes without knowledge" {
	results mla-decode v1 v0 102.0 201.0
	git add -A
	run git commit -q -m "Verify mla-decode v1 (noise)"
	assert_success
	results mla-decode v1 v0 109.0 201.0 10.0
	git add -A
	run git commit -q -m "Verify mla-decode v1 (spread)"
	assert_success
}

@test "the skip trailer passes the gate and says so" {
	results mla-decode v1 v0 120.0 210.0
	git add -A
	run --separate-stderr git commit -q -F - <<-'EOF'
	Verify mla-decode v1

	Kopt-Learn: skip the GPU was throttling; remeasure
	EOF
	assert_success
	[ "$stderr" = "note: LEARN gate passed by 'Kopt-Learn: skip the GPU was throttling; remeasure'" ]
}

@test "a skip trailer without a reason is malformed" {
	results mla-decode v1 v0 120.0 210.0
	git add -A
	run --separate-stderr git commit -q -m "Verify" -m "Kopt-Learn: skip"
	assert_failure 1
	[[ "$stderr" == *"error: 'Kopt-Learn: skip' gives no reason (write 'skip <reason>')"* ]]
	[[ "$stderr" == *"regression against v0"* ]]
}

@test "Kopt-Finding: novel is refused, then accepted with a knowledge file" {
	echo "// tweak" >>kernels/mla_decode/v1/mla_decode.cu
	git add -A
	run --separate-stderr git commit -q -m "Find something" \
		-m "Kopt-Finding: novel"
	assert_failure 1
	expected="error: the message says 'Kopt-Finding: novel' and no knowledge file with its catalog row is staged
hint: fix it, then commit again:
hint:   git kopt learn new optimization wide-tiles --from mla-decode/v1
hint:   git add docs/knowledge/optimizations/wide-tiles.md .claude/skills/optimization-catalog/SKILL.md
hint: or, when there is nothing to learn, add the trailer 'Kopt-Learn: skip <reason>' to the message
error: commit refused by the kopt gate (1 problem)"
	[ "$stderr" = "$expected" ]
	add_optimization wide-tiles
	git add -A
	run --separate-stderr git commit -q -m "Find something" \
		-m "Kopt-Finding: novel"
	assert_success
}

@test "an improvement linked to no knowledge file needs an optimization file" {
	results mla-decode v1 v0 80.0 150.0
	git add -A
	run --separate-stderr git commit -q -m "Verify mla-decode v1"
	assert_failure 1
	[[ "$stderr" == "error: mla-decode v1 improves on v0 (decode: 100.00 us -> 80.00 us, -20.0% beyond the 3.0% threshold; spec-decode: 200.00 us -> 150.00 us, -25.0% beyond the 3.0% threshold) but its task and devlog entry link to no knowledge file, and no optimization file with its catalog row is staged"* ]]
	[[ "$stderr" == *"git kopt learn new optimization wide-tiles --from mla-decode/v1"* ]]
}

@test "an improvement whose task links a knowledge file passes" {
	results mla-decode v1 v0 80.0 150.0
	mkdir -p docs/kernels/mla-decode/tasks
	cat >docs/kernels/mla-decode/tasks/v1.md <<-'EOF'
	## Optimization Task: mla-decode v0 -> v1
	### Optimizations to Apply:
	1. Split the KV sequence -- see [split-kv](../../../knowledge/optimizations/split-kv.md)
	EOF
	git add -A
	run git commit -q -m "Verify mla-decode v1"
	assert_success
}

@test "an improvement whose own devlog entry links a knowledge file passes" {
	results mla-decode v1 v0 80.0 150.0
	# a link in another version's entry does not count
	sed -i 's|^- First version.|- First version, see docs/knowledge/optimizations/split-kv.md|' \
		docs/kernels/mla-decode.md
	git add -A
	run git commit -q -m "Verify mla-decode v1"
	assert_failure 1
	printf -- '- applies docs/knowledge/optimizations/split-kv.md\n' \
		>>docs/kernels/mla-decode.md
	git add -A
	run git commit -q -m "Verify mla-decode v1"
	assert_success
}

@test "a regression already recorded at HEAD is not asked for again" {
	results mla-decode v1 v0 120.0 210.0
	git add -A
	git commit -q --no-verify -m "Verify mla-decode v1"
	results mla-decode v1 v0 121.0 210.0
	git add -A
	run git commit -q -m "Remeasure mla-decode v1"
	assert_success
}

@test "malformed trailers are refused with the line and the fix" {
	git commit -q --allow-empty -m "x" 2>/dev/null || true
	run --separate-stderr git commit -q --allow-empty -F - <<-'EOF'
	Verify mla-decode v1
	Kopt-Step: verify

	Kopt-Verdict: better
	Kopt-Frobnicate: yes
	Kopt-Version: 1
	EOF
	assert_failure 1
	expected="error: 'Kopt-Verdict: better' is not a verdict (improvement, regression or neutral)
error: unknown trailer 'Kopt-Frobnicate'
error: 'Kopt-Version: 1' is not a version (v0, v1, ...)
error: message line 2: 'Kopt-Step: verify' is not in the trailer block (the last paragraph, after a blank line)
hint: fix the message: trailers are 'Kopt-<Key>: <value>' lines in its last paragraph
error: commit refused by the kopt gate (4 problems)"
	[ "$stderr" = "$expected" ]
}

@test "a results file the hook cannot read is refused, naming it" {
	mkdir -p docs/kernels/mla-decode/results
	printf '{ "schema": 1,\n  "kernel": \n' >docs/kernels/mla-decode/results/v1.json
	git add -A
	run --separate-stderr git commit -q -m "Verify mla-decode v1"
	assert_failure 1
	expected="error: docs/kernels/mla-decode/results/v1.json:2:13: not valid JSON
hint: fix it with:
hint:   git kopt verify mla-decode v1
error: commit refused by the kopt gate (1 problem)"
	[ "$stderr" = "$expected" ]
}

@test "results of another version under a version's name are refused" {
	results mla-decode v1 v0 100.0 200.0
	mv docs/kernels/mla-decode/results/v1.json docs/kernels/mla-decode/results/v2.json
	git add -A
	run --separate-stderr git commit -q -m "Verify"
	assert_failure 1
	[[ "$stderr" == "error: docs/kernels/mla-decode/results/v2.json: version: names version 'v1', but the file belongs to version 'v2'"* ]]
}

@test "git commit -a and partial commits are judged on what they commit" {
	results mla-decode v1 v0 101.0 201.0
	git add -A
	git commit -q -m "Verify mla-decode v1"
	# the work tree now records a regression; the index does not
	results mla-decode v1 v0 120.0 210.0
	echo "// more" >>kernels/mla_decode/v1/mla_decode.cu
	git add kernels/mla_decode/v1/mla_decode.cu
	run --separate-stderr git commit -q -a -m "All of it"
	assert_failure 1
	[[ "$stderr" == *"mla-decode v1 is a regression against v0"* ]]
	run --separate-stderr git commit -q -m "Partial" -- \
		docs/kernels/mla-decode/results/v1.json
	assert_failure 1
	[[ "$stderr" == *"mla-decode v1 is a regression against v0"* ]]
	# what is staged holds no regression: accepted
	run git commit -q -m "Only the source"
	assert_success
	run git diff --name-only
	assert_output "docs/kernels/mla-decode/results/v1.json"
}

@test "the hooks work in a linked worktree (GIT_DIR set by git)" {
	git worktree add -q "$BATS_TEST_TMPDIR/wt" -b kopt/mla-decode/v2 2>/dev/null
	cd "$BATS_TEST_TMPDIR/wt"
	results mla-decode v1 v0 120.0 210.0
	git add -A
	run --separate-stderr git commit -q -m "Verify mla-decode v1"
	assert_failure 1
	[[ "$stderr" == *"mla-decode v1 is a regression against v0"* ]]
}

@test "the hooks work with --git-dir and --work-tree (GIT_DIR, GIT_WORK_TREE set)" {
	results mla-decode v1 v0 120.0 210.0
	cd "$BATS_TEST_TMPDIR"
	git --git-dir="$REPO/.git" --work-tree="$REPO" add -A
	run --separate-stderr git --git-dir="$REPO/.git" --work-tree="$REPO" \
		commit -q -m "Verify mla-decode v1"
	assert_failure 1
	[[ "$stderr" == *"mla-decode v1 is a regression against v0"* ]]
}

@test "hooks under core.hooksPath run the gate" {
	rm -f .git/hooks/pre-commit .git/hooks/commit-msg
	install_hooks "$BATS_TEST_TMPDIR/shared-hooks"
	git config core.hooksPath "$BATS_TEST_TMPDIR/shared-hooks"
	results mla-decode v1 v0 120.0 210.0
	git add -A
	run --separate-stderr git commit -q -m "Verify mla-decode v1"
	assert_failure 1
	[[ "$stderr" == *"mla-decode v1 is a regression against v0"* ]]
}

@test "a merge commit is not asked to learn again" {
	results mla-decode v1 v0 120.0 210.0
	add_anti_pattern wide-tiles
	git add -A
	git commit -q -m "Verify mla-decode v1"
	git checkout -q main
	echo "notes" >NOTES
	git add NOTES
	git commit -q -m "Notes"
	run git merge -q --no-ff -m "Merge mla-decode v1" kopt/mla-decode/v1
	assert_success
}

@test "a repository without .kopt is left alone" {
	git rm -q .kopt
	git commit -q --no-verify -m "Drop settings"
	results mla-decode v1 v0 120.0 210.0
	git add -A
	run git commit -q -m "Verify"
	assert_success
}

@test "the hook is fast enough to stay out of the way: no kernel is run" {
	# a build or run command that would fail loudly if the hook ran it
	git config -f .kopt kernel.mla-decode.run "false"
	git config -f .kopt kernel.mla-decode.build "false"
	git add .kopt
	git commit -q --no-verify -m "Break the commands"
	results mla-decode v1 v0 101.0 201.0
	git add -A
	run git commit -q -m "Verify"
	assert_success
}

@test "hook usage errors exit 129" {
	run --separate-stderr git kopt hook commit-msg
	assert_failure 129
	[[ "$stderr" == "error: commit-msg takes the message file"* ]]
	run --separate-stderr git kopt hook post-checkout
	assert_failure 129
	[[ "$stderr" == "error: unknown hook 'post-checkout'"* ]]
	run --separate-stderr git kopt hook commit-msg "$BATS_TEST_TMPDIR/none"
	assert_failure 128
	[[ "$stderr" == "fatal: cannot read the commit message"* ]]
}
