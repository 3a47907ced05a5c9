#!/usr/bin/env bats
# make demo (tools/demo): one turn of the cycle on the example kernel, in a
# scratch repository, replaying the recorded H200 captures.

load helper

# The demo as a fresh CI machine runs it: no git identity, no global
# config, a temporary directory of its own.
demo() {
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	mkdir -p "$TMPDIR"
	run --separate-stderr env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL \
		-u GIT_COMMITTER_NAME -u GIT_COMMITTER_EMAIL \
		HOME="$BATS_TEST_TMPDIR/empty-home" "$@" "$TOP/tools/demo"
	repo=$(ls -d "$TMPDIR"/kopt-demo.*/mla-decode)
}

setup() {
	mkdir -p "$BATS_TEST_TMPDIR/empty-home"
	export LC_ALL=C TZ=UTC GIT_CONFIG_NOSYSTEM=1
}

@test "the demo walks every step of the cycle from v0 to v1, replayed" {
	demo KOPT_DEMO_REPLAY=1
	assert_success
	[ "$stderr" = "" ]
	for step in "1, ANALYZE" "2, PROFILE" "3, SELECT" "4, STRATEGIZE" \
		"5, DESIGN" "6, VERIFY" "7, EVALUATE" "8, LEARN"; do
		assert_line --regexp "^=== Cycle step $step: "
	done
	assert_line --regexp "^=== After the cycle, REVIEW: "
	assert_line --regexp "^=== STATUS: "
	assert_line --regexp "^=== Summary: "
	# each command as typed, before its output
	assert_line '$ git kopt init'
	assert_line '$ git kopt analyze mla-decode'
	assert_line '$ git kopt profile mla-decode v0 \'
	assert_line '    --replay ../captures/mla-decode-v0-decode.json \'
	assert_line '$ git kopt select mla-decode'
	assert_line '$ git kopt strategize mla-decode'
	assert_line "\$ git kopt design mla-decode --title 'Head grouping on tensor cores'"
	assert_line '$ git kopt verify mla-decode v1 \'
	assert_line '$ git kopt evaluate mla-decode'
	assert_line '$ git kopt review main...kopt/mla-decode/v1'
	assert_line '$ git kopt status'
	# no colour when the output is no terminal
	refute_output --partial $'\033'
}

@test "every screen says the measurements are replayed" {
	demo KOPT_DEMO_REPLAY=1
	assert_success
	assert_line --index 1 "KOPT_DEMO_REPLAY=1: the measurements are replayed."
	screens=$(grep -c '^=== ' <<<"$output")
	banners=$(grep -cxF '    [replaying measurements recorded on an NVIDIA H200 - KOPT_DEMO_REPLAY=1]' <<<"$output")
	[ "$screens" -ge 15 ]
	[ "$banners" -eq "$screens" ]
	# and each screen's banner comes right after its heading and notes
	run awk '/^=== / { open = 1; next }
		open && /^    \[replaying/ { open = 0; next }
		open && !/^    / { print "no banner before: " $0; exit 1 }' <<<"$output"
	assert_success
}

@test "the designer's change is labelled, the verdict is an improvement, evaluate says back to SELECT" {
	demo KOPT_DEMO_REPLAY=1
	assert_success
	assert_line "=== Cycle step 5, DESIGN: the designer's change"
	assert_line "    Applied from the recorded v1 sources (what the kernel-designer agent wrote):"
	assert_line "### Verdict: improvement (v1 against v0)"
	assert_line "| decode | 3677.23 μs | 337.98 μs | -90.8% | ±3.0% | improvement |"
	assert_line "| spec-decode | 57248.89 μs | 2571.28 μs | -95.5% | ±11.4% | improvement |"
	assert_line "mla-decode: target not met"
	assert_line "next: back to SELECT: git kopt select mla-decode"
	assert_line "(exit status 1)"
	# the sources committed on v1's branch are the recorded ones
	git -C "$repo" diff --quiet "kopt/mla-decode/v1" -- kernels/mla_decode/v1 ||
		fail "v1 differs from its commit"
	diff -r "$TOP/kernels/mla_decode/v1" "$repo/kernels/mla_decode/v1"
}

@test "the LEARN gate refuses the novel finding, then accepts it with its entry" {
	demo KOPT_DEMO_REPLAY=1
	assert_success
	assert_line "error: the message says 'Kopt-Finding: novel' and no knowledge file with its catalog row is staged"
	assert_line "error: commit refused by the kopt gate (1 problem)"
	assert_line "$ git kopt learn new optimization head-grouping-on-tensor-cores \\"
	assert_line "4 catalogs and 10 detail files, no problems"
	assert_line --regexp '^\[kopt/mla-decode/v1 [0-9a-f]+\] Record mla-decode v1: 10\.9x faster at decode, 22\.3x at spec-decode$'
	cd "$repo"
	run git log -1 --format=%B
	assert_line "Kopt-Finding: novel"
	assert_line "Kopt-Verdict: improvement"
	[ -z "$(git status --porcelain)" ]
	[ "$(git rev-parse --abbrev-ref HEAD)" = kopt/mla-decode/v1 ]
	# the entry passes lint and CI's rules over the branch
	git kopt learn lint
	git kopt check main..kopt/mla-decode/v1
	grep -qxF -e '- `tc_pct < 10 and l2_hit_pct > 90` the tensor cores idle while per-head CTAs re-read the shared operand from L2; those reads never reach DRAM, so the `dram_pct > 50` trigger of head grouping alone does not fire' \
		docs/knowledge/optimizations/head-grouping-on-tensor-cores.md
	grep -qF '| O5 | Head grouping on tensor cores | `tc_pct < 10 and l2_hit_pct > 90`' \
		.claude/skills/optimization-catalog/SKILL.md
	grep -qF '| ~16.6x (measured: mla-decode v1) |' \
		.claude/skills/optimization-catalog/SKILL.md
}

@test "the demo ends with a summary and the kept repository" {
	demo KOPT_DEMO_REPLAY=1
	assert_success
	assert_line "mla-decode v0 -> v1, replayed from captures recorded on an NVIDIA H200:"
	assert_line "  decode       (b=32 s=1 t=4096)    3677.23 us -> 337.98 us  (10.9x faster)"
	assert_line "  spec-decode  (b=32 s=16 t=4096)   57248.89 us -> 2571.28 us  (22.3x faster)"
	assert_line "VERIFY's verdict: improvement.  EVALUATE: the target spec-decode duration_us"
	assert_line "  docs/knowledge/optimizations/head-grouping-on-tensor-cores.md"
	assert_line --index $((${#lines[@]} - 1)) "The repository is in $repo"
	assert_line "$ git kopt status"
	assert_line "mla-decode       v1     evaluate  improvement  replayed     next: back to SELECT: git kopt select mla-decode"
	# the repository is the demo's own: its identity, its hooks
	[ "$(git -C "$repo" config user.email)" = demo@example.com ]
	[ -x "$repo/.git/hooks/commit-msg" ]
	[ "$(cat "$repo/.gitignore")" = /kernels/mla_decode/build/ ]
	[ "$(git -C "$repo" rev-list --count main)" -eq 2 ]
	[ "$(git -C "$repo" rev-list --count main..kopt/mla-decode/v1)" -eq 3 ]
}

@test "without a GPU the demo replays by itself and says why" {
	if git kopt device >/dev/null 2>&1; then
		skip "a GPU is here: the demo measures"
	fi
	demo
	assert_success
	assert_line "No GPU to measure on (no GPU here): the measurements are replayed from"
	assert_line "    [replaying measurements recorded on an NVIDIA H200 - no GPU here]"
}
