#!/usr/bin/env bats
# git kopt cycle: the lessons of the versions a round does not keep
# reach the base branch's knowledge base, or stay on their branches
# with the reason.

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

@test "a lesson the base branch refuses stays on its branch, and main is untouched" {
	# a commit-msg hook of the team's own, before git kopt's, refuses it
	hook=$(git rev-parse --git-path hooks/commit-msg)
	{
		printf '#!/bin/sh\n'
		printf 'if grep -q "^Learn from" "$1"; then echo "no lessons today" >&2; exit 1; fi\n'
		sed 1d "$hook"
	} >hook.new
	chmod +x hook.new
	mv hook.new "$hook"
	run --separate-stderr git kopt cycle mla-decode --versions 2 --parallel 2 \
		--agent recorded --replay "$REPLAY"
	assert_success
	run git log --first-parent --format=%s main
	assert_output "Keep mla-decode v3: Swizzled CTA order for L2 reuse
Keep mla-decode v1: Tensor-core MMA for the attention products
Profile mla-decode v0
Start"
	# nothing of it is left in the work tree
	run git status --porcelain
	assert_output ""
	test ! -e docs/knowledge/anti-patterns/split-kv-decode.md
	git cat-file -e kopt/mla-decode/v2:docs/knowledge/anti-patterns/split-kv-decode.md
	run git kopt cycle mla-decode --status
	assert_line "  lesson of v2 left on its branch: the commit was refused: no lessons today"
}
