#!/usr/bin/env bats
# git kopt design --agent: a designer agent makes the new version in a
# worktree of its own, and its answer is judged before anything is kept.

load helper

GPU="$FIXTURES/gpu"
AGENTS="$TOP/tests/cli/agents"
RECORDED="$TOP/kernels/mla_decode"

setup() {
	setup_repo
	git kopt init -q
	git kopt kernel add mla-decode --language cuda-c \
		--source 'kernels/mla_decode/{version}' \
		--run 'kernels/mla_decode/build/{version}/bench --b {b} --s {s} --t {t}' \
		--flops '2*b*s*h*t*(dqk+dv)' \
		--bytes '2*(b*t*dqk + b*s*h*dqk + b*s*h*dv)' \
		--param h=128 --param dqk=576 --param dv=512 >/dev/null
	mkdir -p kernels/mla_decode
	cp -R "$RECORDED/Makefile" "$RECORDED/harness" "$RECORDED/v0" kernels/mla_decode/
	echo /kernels/mla_decode/build/ >.gitignore
	git add -A
	git commit -qm "Start"
	git kopt profile mla-decode v0 --replay "$GPU/mla-decode-v0-decode.json" \
		--replay "$GPU/mla-decode-v0-spec-decode.json" >/dev/null 2>&1
	git add -A
	git commit -qm "Profile v0" --trailer "Kopt-Learn: skip base version"
	git kopt strategize mla-decode >/dev/null 2>&1
	for mode in recorded broken outside claims fail; do
		git config kopt.agent.$mode.command "$AGENTS/stand-in $mode $RECORDED"
	done
	git config kopt.agent.hang.command "$AGENTS/stand-in hang $BATS_TEST_TMPDIR"
}

# Everything but the worktree list and the branch is as before.
assert_untouched() {
	run git worktree list --porcelain
	assert_output "worktree $REPO
HEAD $(git rev-parse HEAD)
branch refs/heads/main"
	run git status --porcelain
	assert_output "?? docs/kernels/mla-decode/tasks/"
	[ "$(git rev-parse main)" = "$main" ]
}

@test "a designer's complete answer is committed on the version's branch" {
	run --separate-stderr git kopt design mla-decode --agent=recorded \
		--title "Head grouping on tensor cores"
	assert_success
	assert_line "**Implementation summary** (recorded):"
	assert_line '- Files: `kernels/mla_decode/v1/mla_decode_v1.cu`'
	assert_line "- Checked b=32, s=16, t=4096: spec-decode, the target's trial"
	assert_line "Next: git kopt verify mla-decode v1"
	[[ "$stderr" == *"Switched to branch 'kopt/mla-decode/v1'"* ]]
	[ "$(git symbolic-ref --short HEAD)" = kopt/mla-decode/v1 ]
	run git log --format=%s main..
	assert_output "mla-decode v1: Head grouping on tensor cores
Design mla-decode v1 from v0"
	run git interpret-trailers --parse <<<"$(git log -1 --format=%B)"
	assert_output "Kopt-Kernel: mla-decode
Kopt-Version: v1
Kopt-Step: design"
	# the recorded sources, and the summary spliced into the entry
	diff -r "$RECORDED/v1" kernels/mla_decode/v1
	run sed -n '/^### V1/,$p' docs/kernels/mla-decode.md
	assert_line "- The recorded sources of v1"
	assert_line "**Implementation summary** (recorded):"
	assert_line "- Correctness: PASS"
	# the worktree is gone, the work tree is clean
	run git worktree list
	assert_output "$REPO  $(git rev-parse --short HEAD) [kopt/mla-decode/v1]"
	run git status --porcelain
	assert_output ""
	[ -s .git/kopt/agents/mla-decode/v1.agent.out ]
}

@test "an answer without a part of the summary is refused; the branch keeps the scaffold" {
	main=$(git rev-parse main)
	run --separate-stderr git kopt design mla-decode --agent=broken
	assert_failure 1
	assert_output ""
	[[ "$stderr" == *"error: mla-decode v1 was refused: the implementation summary has no 'Correctness' part"* ]]
	[[ "$stderr" == *"the branch 'kopt/mla-decode/v1' keeps the scaffold"* ]]
	run git log --format=%s main..kopt/mla-decode/v1
	assert_output "Design mla-decode v1 from v0"
	assert_untouched
}

@test "a designer that writes outside its folder is refused" {
	main=$(git rev-parse main)
	run --separate-stderr git kopt design mla-decode --agent=outside
	assert_failure 1
	[[ "$stderr" == *"refused: the designer changed 'kernels/mla_decode/stray.txt', outside the version's folder 'kernels/mla_decode/v1'"* ]]
	run git log --format=%s main..kopt/mla-decode/v1
	assert_output "Design mla-decode v1 from v0"
	[ ! -e kernels/mla_decode/stray.txt ]
	assert_untouched
}

@test "a summary that claims a file outside the folder is refused" {
	main=$(git rev-parse main)
	run --separate-stderr git kopt design mla-decode --agent=claims
	assert_failure 1
	[[ "$stderr" == *"refused: the implementation summary claims 'kernels/mla_decode/harness/harness.cu' (line 5), outside the version's folder 'kernels/mla_decode/v1'"* ]]
	assert_untouched
}

@test "a designer that hangs is stopped at its time limit" {
	main=$(git rev-parse main)
	start=$(date +%s)
	run --separate-stderr git kopt design mla-decode --agent=hang --timeout 2
	assert_failure 1
	[ $(($(date +%s) - start)) -lt 30 ]
	[[ "$stderr" == *"refused: agent 'hang' ran past its time limit (2 s) and was stopped"* ]]
	assert_untouched
	# nothing of it is left running
	# (its command names this test's folder: other tests hang too)
	# (a killed process may take a moment to leave the process table)
	for _ in $(seq 50); do
		pgrep -f "stand-in hang $BATS_TEST_TMPDIR" >/dev/null || break
		sleep 0.1
	done
	run pgrep -f "stand-in hang $BATS_TEST_TMPDIR"
	assert_failure
}

@test "a designer that fails says how" {
	main=$(git rev-parse main)
	git config kopt.agent.fail.timeout 5
	run --separate-stderr git kopt design mla-decode --agent=fail
	assert_failure 1
	[[ "$stderr" == *"refused: agent 'fail' failed: exit code 3"* ]]
	assert_untouched
}

@test "the default agent is Claude Code headless, in the version's worktree" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	cat >"$BATS_TEST_TMPDIR/bin/claude" <<-'SH'
	#!/bin/sh
	# records how it was called, then answers as claude -p does
	{ pwd; for a in "$@"; do printf '<%s>\n' "$a"; done; } >"$CLAUDE_LOG"
	[ -t 0 ] && exit 9
	answer=$("$STAND_IN" recorded "$RECORDED" 2>&1) || exit 1
	python3 -c 'import json, sys; print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": sys.argv[1], "session_id": "s1"}))' "$answer"
	SH
	chmod +x "$BATS_TEST_TMPDIR/bin/claude"
	export CLAUDE_LOG="$BATS_TEST_TMPDIR/claude.log" STAND_IN="$AGENTS/stand-in" RECORDED
	# the stand-in reads what a command agent is given; claude is given
	# only its argv, so hand the same to it here
	export KOPT_AGENT_ROLE=designer KOPT_KERNEL=mla-decode KOPT_VERSION=v1 \
		KOPT_FROM=v0 KOPT_VERSION_DIR=kernels/mla_decode/v1
	export KOPT_AGENT_PROMPT="Create mla-decode v1 from v0."
	PATH="$BATS_TEST_TMPDIR/bin:$PATH" run --separate-stderr git kopt design mla-decode --agent
	assert_success
	run head -1 "$CLAUDE_LOG"
	assert_output "$REPO/.git/kopt/worktrees/mla-decode-v1"
	run sed -n '2,3p' "$CLAUDE_LOG"
	assert_output "<-p>
<Create mla-decode v1 from v0."
	run tail -7 "$CLAUDE_LOG"
	assert_output ">
<--output-format>
<json>
<--allowedTools>
<Read,Write,Edit,MultiEdit,Glob,Grep,Bash(make:*),Bash(git kopt:*)>
<--permission-mode>
<acceptEdits>"
	grep -q '^Return implementation summary per the output contract.$' "$CLAUDE_LOG"
	grep -q '^## New Version: mla-decode v1$' "$CLAUDE_LOG"
	[ "$(git symbolic-ref --short HEAD)" = kopt/mla-decode/v1 ]
}

@test "an agent Claude Code reports an error for is refused" {
	main=$(git rev-parse main)
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho %s\n' "'{\"type\": \"result\", \"is_error\": true, \"result\": \"Credit balance is too low\"}'" \
		>"$BATS_TEST_TMPDIR/bin/claude"
	chmod +x "$BATS_TEST_TMPDIR/bin/claude"
	PATH="$BATS_TEST_TMPDIR/bin:$PATH" run --separate-stderr git kopt design mla-decode --agent=claude
	assert_failure 1
	[[ "$stderr" == *"refused: the agent reported an error: Credit balance is too low"* ]]
	assert_untouched
}

@test "an unknown agent is fatal before anything is made" {
	main=$(git rev-parse main)
	run --separate-stderr git kopt design mla-decode --agent=nobody
	assert_failure 128
	[ "$stderr" = "error: no agent 'nobody': set 'git config kopt.agent.nobody.command <command>'" ]
	run git branch --list 'kopt/*'
	assert_output ""
}
