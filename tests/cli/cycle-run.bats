#!/usr/bin/env bats
# git kopt cycle: rounds of designers on branches, verified on replayed
# captures, the best improvement merged, the rest recorded.

load helper

GPU="$FIXTURES/gpu"
AGENTS="$TOP/tests/cli/agents"
RECORDED="$TOP/kernels/mla_decode"
# which recorded sources a stand-in designer applies for a version
MAP=v3=v5,v4=v6,v5=v7

setup() {
	setup_repo
	git kopt init -q
	git kopt kernel add mla-decode --language cuda-c \
		--source 'kernels/mla_decode/{version}' \
		--run 'kernels/mla_decode/build/{version}/bench --b {b} --s {s} --t {t}' \
		--flops '2*b*s*h*t*(dqk+dv)' \
		--bytes '2*(b*t*dqk + b*s*h*dqk + b*s*h*dv)' \
		--param h=128 --param dqk=576 --param dv=512 \
		--target 'spec-decode duration_us <= 1100' >/dev/null
	mkdir -p kernels/mla_decode
	cp -R "$RECORDED/Makefile" "$RECORDED/harness" "$RECORDED/v0" kernels/mla_decode/
	echo /kernels/mla_decode/build/ >.gitignore
	git add -A
	git commit -qm "Start"
	# the captures of the recorded sources each version gets
	CAPTURES="$BATS_TEST_TMPDIR/captures"
	mkdir -p "$CAPTURES"
	for v in v0 v1 v2 v3 v4 v5 v6; do
		rec=$v
		for m in $(echo "$MAP" | tr , ' '); do
			[ "${m%%=*}" = "$v" ] && rec=${m#*=}
		done
		for t in decode spec-decode; do
			cp "$GPU/mla-decode-$rec-$t.json" "$CAPTURES/mla-decode-$v-$t.json"
		done
	done
	REPLAY="$CAPTURES/mla-decode-{version}-{trial}.json"
	for mode in recorded slow broken outside; do
		git config kopt.agent.$mode.command "$AGENTS/stand-in $mode $RECORDED $MAP"
	done
	git config kopt.agent.hang.command "$AGENTS/stand-in hang $BATS_TEST_TMPDIR"
}

profile_v0() {
	git kopt profile mla-decode v0 --replay "$CAPTURES/mla-decode-v0-decode.json" \
		--replay "$CAPTURES/mla-decode-v0-spec-decode.json" >/dev/null 2>&1
	git add -A
	git commit -qm "Profile mla-decode v0"
}

@test "three rounds with two designers at once: the best improvement is merged each round" {
	run --separate-stderr git kopt cycle mla-decode --versions 3 --parallel 2 \
		--agent recorded --replay "$REPLAY"
	assert_success
	# main moved on the base profile and on each kept improvement only
	run git log --first-parent --format=%s main
	assert_output "Keep mla-decode v5: Swizzled CTA order for L2 reuse
Learn from kopt/mla-decode/v2: Split-KV decode
Keep mla-decode v3: Swizzled CTA order for L2 reuse
Keep mla-decode v1: Tensor-core MMA for the attention products
Profile mla-decode v0
Start"
	# the base's profile is on main before any designer branches off
	profile=$(git log --format=%H --grep='^Profile mla-decode v0$' main)
	git merge-base --is-ancestor "$profile" kopt/mla-decode/v1
	# the lesson of the abandoned v2 is on main, with its catalog row and
	# the commit's trailers; its results stay on its branch
	lesson=docs/knowledge/anti-patterns/split-kv-decode.md
	[ "$(git show "main:$lesson")" = "$(git show "kopt/mla-decode/v2:$lesson")" ]
	git show main:.claude/skills/optimization-catalog/SKILL.md | grep -qF split-kv-decode.md
	run git log -1 --format=%B --grep='^Learn from kopt/mla-decode/v2' main
	assert_line "Kopt-Kernel: mla-decode"
	assert_line "Kopt-Version: v2"
	assert_line "Kopt-Step: learn"
	run git log -1 --name-only --format= --grep='^Learn from' main
	assert_output ".claude/skills/optimization-catalog/SKILL.md
$lesson"
	run git cat-file -e main:docs/kernels/mla-decode/results/v2.json
	assert_failure
	run git log -1 --format=%B main
	assert_line "Not kept:"
	assert_line --regexp '^- v4 \(kopt/mla-decode/v4\): improvement, slower than v5 at spec-decode'
	assert_line "Kopt-Verdict: improvement"
	[ "$(git rev-list --count --merges main)" = 3 ]
	# every version has its branch; the abandoned ones are not on main
	run git branch --list 'kopt/*' --format='%(refname:short)'
	assert_output "kopt/mla-decode/v1
kopt/mla-decode/v2
kopt/mla-decode/v3
kopt/mla-decode/v4
kopt/mla-decode/v5"
	run git merge-base --is-ancestor kopt/mla-decode/v2 main
	assert_failure
	run git merge-base --is-ancestor kopt/mla-decode/v4 main
	assert_failure
	# the regression was recorded with the anti-pattern the gate asked for
	run git log -1 --format=%B kopt/mla-decode/v2
	assert_line "Kopt-Verdict: regression"
	run git show --name-only --format= kopt/mla-decode/v2
	assert_line --regexp '^docs/knowledge/anti-patterns/.*\.md$'
	assert_line "docs/kernels/mla-decode/results/v2.json"
	# each designer's commit carries its summary in the devlog
	run git show kopt/mla-decode/v3:docs/kernels/mla-decode.md
	assert_line "**Implementation summary** (recorded):"
	assert_line "- Change: the recorded sources of v5"
	# nothing is left behind: worktrees gone, work tree clean
	[ "$(git worktree list | wc -l)" = 1 ]
	run git status --porcelain
	assert_output ""
	# every commit the cycle made passes the gate
	run git kopt check "$(git rev-list --max-parents=0 main)..main"
	assert_success
	for v in v2 v4; do
		run git kopt check "main..kopt/mla-decode/$v"
		assert_success
	done
	# the run log
	run git kopt cycle mla-decode --status
	assert_success
	assert_line --index 0 --regexp '^cycle of mla-decode: finished \(versions done\), round 3 of 3, '
	assert_line --regexp '^  v2   verified  regression  designer .*: Split-KV decode$'
	assert_line --regexp '^  kept v3: the best improvement at spec-decode: '
	assert_line --regexp '^  abandoned v2: regression; lesson: docs/knowledge/anti-patterns/split-kv-decode.md$'
	assert_line "  lesson of v2 brought onto the base branch: docs/knowledge/anti-patterns/split-kv-decode.md"
	assert_line --regexp '^  abandoned v4: improvement, slower than v5 at spec-decode$'
	run git kopt status
	assert_line --regexp "^ +cycle of mla-decode: finished \(versions done\), round 3 of 3, .* \('git kopt cycle mla-decode --status'\)$"
}

@test "designers measured on the GPU at once take it in turn" {
	# a benchmark that holds the GPU a second and writes the capture of
	# its version where the injection library would
	cat >bench <<-'SH'
	#!/bin/sh
	sleep 1
	case $2 in 1) t=decode ;; *) t=spec-decode ;; esac
	cp "$CAPTURES/mla-decode-$1-$t.json" "$KOPT_INJECT_OUT"
	SH
	chmod +x bench
	git config -f .kopt kernel.mla-decode.run "./bench {version} {s}"
	git add -A
	git commit -qm "Measure with the stand-in"
	export CAPTURES KOPT_TEST_NO_DEVICE=1 KOPT_INJECT_LIB=/dev/null
	run --separate-stderr git kopt cycle mla-decode --versions 2 --parallel 2 \
		--agent recorded
	assert_success
	run git kopt cycle mla-decode --status
	# round 2 has two designers, verified one after the other
	assert_line --regexp '^  v2   verified  regression  '
	assert_line --regexp '^  v3   verified  improvement '
	refute_output --partial "busy"
	# the base's profile (two runs of a second) counts as benchmark
	# time, not the tool's; the designers' verifications overlap (one
	# builds while the other runs): counted once, the benchmark time is
	# at most the wall time (durations read as seconds: 9.5s, 25s, 1m05s)
	assert_line --regexp '^profiled v0 \(([0-9]+m)?[0-9.]+s\)$'
	printf '%s\n' "$output" | awk '
	function secs(d,   m) {
		m = 0
		if (d ~ /m/) { m = substr(d, 1, index(d, "m") - 1) * 60; d = substr(d, index(d, "m") + 1) }
		sub(/s$/, "", d)
		return m + d
	}
	/^profiled v0 / { t = $3; gsub(/[()]/, "", t); sum += secs(t) }
	/^  v[0-9]+ .* verify / { for (i = 1; i < NF; i++) if ($i == "verify") { t = $(i + 1); sub(/,$/, "", t); sum += secs(t) } }
	/^time: / { wall = secs($2); for (i = 1; i < NF; i++) if ($i == "runs") { t = $(i + 1); sub(/,$/, "", t); bench = secs(t) } }
	END { exit !(sum >= 8 && bench >= 6 && bench <= wall + 0.1) }'
	assert_line --index 1 --regexp '^time: .*, the tool ([0-9]+[hm])?[0-9.]+[ms]? \([0-9.]+%\)$'
}

@test "--dry-run prints the plan and changes nothing" {
	before=$(git rev-parse HEAD)
	run --separate-stderr git kopt cycle mla-decode --versions 2 --parallel 2 \
		--agent recorded --replay "$REPLAY" --dry-run
	assert_success
	assert_line "cycle of mla-decode on main, from v0"
	assert_line "stops when the target 'spec-decode duration_us <= 1100' is met, after 2 rounds, or when nothing is left to propose"
	assert_line "  profile mla-decode v0 (no results yet), replaying captures"
	assert_line --regexp "^  designer on kopt/mla-decode/v1 in $REPO/.git/kopt/worktrees/mla-decode-v1: "
	[ "$(git rev-parse HEAD)" = "$before" ]
	run git status --porcelain
	assert_output ""
	[ ! -e .git/kopt/cycle/mla-decode/journal ]
}

@test "a designer whose answer is refused leaves its branch and nothing else" {
	profile_v0
	before=$(git rev-parse main)
	run --separate-stderr git kopt cycle mla-decode --agent broken --replay "$REPLAY"
	assert_success
	[ "$(git rev-parse main)" = "$before" ]
	run git log --format=%s main..kopt/mla-decode/v1
	assert_output "Design mla-decode v1 from v0"
	run git kopt cycle mla-decode --status
	assert_line "       the implementation summary has no 'Correctness' part"
	assert_line "  abandoned v1: refused: the implementation summary has no 'Correctness' part"
	[ "$(git worktree list | wc -l)" = 1 ]
}

@test "a designer that writes outside its folder changes nothing on main" {
	profile_v0
	before=$(git rev-parse main)
	run --separate-stderr git kopt cycle mla-decode --agent outside --replay "$REPLAY"
	assert_success
	[ "$(git rev-parse main)" = "$before" ]
	[ ! -e kernels/mla_decode/stray.txt ]
	run git kopt cycle mla-decode --status
	assert_line "       the designer changed 'kernels/mla_decode/stray.txt', outside the version's folder 'kernels/mla_decode/v1'"
}

@test "a designer that hangs is stopped at its time limit" {
	profile_v0
	before=$(git rev-parse main)
	run --separate-stderr git kopt cycle mla-decode --agent hang --timeout 2 --replay "$REPLAY"
	assert_success
	[ "$(git rev-parse main)" = "$before" ]
	run git kopt cycle mla-decode --status
	assert_line "       agent 'hang' ran past its time limit (2 s) and was stopped"
	# (its command names this test's folder: other tests hang too)
	# (a killed process may take a moment to leave the process table)
	for _ in $(seq 50); do
		pgrep -f "stand-in hang $BATS_TEST_TMPDIR" >/dev/null || break
		sleep 0.1
	done
	run pgrep -f "stand-in hang $BATS_TEST_TMPDIR"
	assert_failure
}

@test "an interrupted cycle goes on with --resume from its last finished step" {
	profile_v0
	git kopt cycle mla-decode --agent slow --replay "$REPLAY" --versions 2 \
		>"$BATS_TEST_TMPDIR/out" 2>&1 &
	pid=$!
	# kill the cycle while its designer works
	for i in $(seq 600); do
		grep -qs '^pid=' .git/kopt/cycle/mla-decode/v1.state && break
		sleep 0.1
	done
	# git runs git-kopt as its child: the cycle's own pid is in its lock
	kill -9 "$(cat .git/kopt/cycle/mla-decode/lock)"
	wait $pid || true
	# the designer's own process finishes its version
	for i in $(seq 600); do
		grep -q '^state=\(verified\|failed\)$' .git/kopt/cycle/mla-decode/v1.state && break
		sleep 0.1
	done
	run git kopt cycle mla-decode --status
	assert_line --index 0 "cycle of mla-decode: interrupted; go on with 'git kopt cycle mla-decode --resume', round 1 of 2, $(sed -n 1p <<<"$output" | sed 's/.*of 2, //')"
	run --separate-stderr git kopt cycle mla-decode --agent slow --replay "$REPLAY"
	assert_failure 1
	[ "$stderr" = "error: the cycle of mla-decode was interrupted; go on with 'git kopt cycle mla-decode --resume'" ]
	run --separate-stderr git kopt cycle mla-decode --resume
	assert_success
	[[ "$stderr" == *"cycle: resuming the cycle of mla-decode after 0 finished rounds"* ]]
	# round 1's designer finished while the cycle was down: kept now,
	# then round 2 ran (its version slower than v1 at spec-decode: not
	# kept, its lesson brought onto main)
	run git log --first-parent --format=%s main
	assert_output "Learn from kopt/mla-decode/v2: Split-KV decode
Keep mla-decode v1: Tensor-core MMA for the attention products
Profile mla-decode v0
Start"
	run git kopt cycle mla-decode --status
	assert_line --index 0 --regexp '^cycle of mla-decode: finished \(versions done\), round 2 of 2, '
	assert_line "resumed"
	assert_line --regexp '^  kept v1: the best improvement at spec-decode: '
	assert_line --regexp '^  v2   verified  regression '
	run git kopt cycle mla-decode --resume
	assert_failure 128
}

@test "a cycle is refused on a dirty work tree, and usage errors are 129" {
	echo change >>kernels/mla_decode/v0/mla_decode.cu
	run --separate-stderr git kopt cycle mla-decode --agent recorded --replay "$REPLAY"
	assert_failure 128
	[[ "$stderr" == "error: uncommitted changes in the work tree; commit or stash them first:"* ]]
	run git kopt cycle mla-decode --parallel 0
	assert_failure 129
	run git kopt cycle mla-decode --budget soon
	assert_failure 129
	run git kopt cycle mla-decode --replay /tmp/x.json
	assert_failure 129
	run git kopt cycle
	assert_failure 129
}

@test "a killed cycle leaves no agent running once it is resumed" {
	profile_v0
	before=$(git rev-parse main)
	git kopt cycle mla-decode --agent hang --timeout 300 --replay "$REPLAY" \
		>"$BATS_TEST_TMPDIR/out" 2>&1 &
	pid=$!
	for i in $(seq 600); do
		[ -s .git/kopt/cycle/mla-decode/v1.agent.pid ] && break
		sleep 0.1
	done
	agent=$(cat .git/kopt/cycle/mla-decode/v1.agent.pid)
	designer=$(sed -n 's/^pid=//p' .git/kopt/cycle/mla-decode/v1.state)
	# the cycle and its designer die at once; the agent is left
	kill -9 "$(cat .git/kopt/cycle/mla-decode/lock)" "$designer"
	wait $pid || true
	kill -0 -- "-$agent"
	run --separate-stderr git kopt cycle mla-decode --resume
	assert_success
	[[ "$stderr" == *"cycle: stopped the agent of v1, left running by the interrupted run"* ]]
	# nothing of its group runs (killed ones may wait to be reaped)
	sleep 0.2
	run sh -c "ps -e -o pgid=,stat= | awk -v g=$agent '\$1 == g && \$2 !~ /^Z/'"
	assert_output ""
	[ "$(git rev-parse main)" = "$before" ]
	run git kopt cycle mla-decode --status
	assert_line "       the cycle was interrupted while it was designing"
	[ "$(git worktree list | wc -l)" = 1 ]
}

@test "the cycle's commits leave git's housekeeping to one run at its end" {
	git config maintenance.auto true
	GIT_TRACE="$BATS_TEST_TMPDIR/trace" run --separate-stderr \
		git kopt cycle mla-decode --versions 2 --parallel 2 \
		--agent recorded --replay "$REPLAY"
	assert_success
	# a dozen commits, and one housekeeping run: the cycle's own
	[ "$(git rev-list --count --all)" -gt 6 ]
	run grep -c 'maintenance run --auto' "$BATS_TEST_TMPDIR/trace"
	assert_output 1
	grep -q 'built-in: git maintenance run --auto --quiet$' "$BATS_TEST_TMPDIR/trace"
}
