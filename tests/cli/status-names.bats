#!/usr/bin/env bats
# The name suggested for the anti-pattern of a regression is one rule:
# verify, the commit hook and status give the same name for the same
# devlog, from the entry's title in any heading style, and never from a
# placeholder title.

load helper

GPU="$FIXTURES/gpu"

setup() {
	setup_repo
	git kopt init -q
	git kopt kernel add mla-decode --language cuda-c \
		--source 'kernels/mla_decode/{version}' \
		--run 'kernels/mla_decode/build/{version}/bench --b {b} --s {s} --t {t}' \
		--flops '2*b*s*h*t*(dqk+dv)' \
		--bytes '2*(b*t*dqk + b*s*h*dqk + b*s*h*dv)' \
		--param h=128 --param dqk=576 --param dv=512 >/dev/null
	for v in v0 v1 v2; do
		mkdir -p kernels/mla_decode/$v
		echo "// $v" >kernels/mla_decode/$v/mla_decode.cu
	done
	git add -A
	git commit -qm "Start"
	git kopt profile mla-decode v1 $(replay v1) >/dev/null 2>&1
	git add -A
	git commit -qm "v1 results" --trailer "Kopt-Learn: skip recorded before the gate"
}

replay() {
	echo --replay "$GPU/mla-decode-$1-decode.json" \
		--replay "$GPU/mla-decode-$1-spec-decode.json"
}

# Measure v2 (a regression) with its devlog heading retitled to $1, and
# print the name verify, the hook and status each suggest, one a line.
names() {
	git kopt verify mla-decode v2 $(replay v2) >/dev/null 2>&1
	sed -i "s/^### V2.*/$1/" docs/kernels/mla-decode.md
	git kopt verify mla-decode v2 $(replay v2) 2>/dev/null |
		sed -n 's/.*learn new anti-pattern \([^ ]*\) .*/verify \1/p'
	git add -A
	git commit -qm "Verify mla-decode v2" 2>&1 |
		sed -n 's/.*learn new anti-pattern \([^ ]*\) .*/hook \1/p'
	git kopt status 2>/dev/null |
		sed -n 's/.*learn new anti-pattern \([^ ]*\) .*/status \1/p'
}

@test "a title after a dash names the anti-pattern everywhere" {
	run names "### V2 - tiling"
	assert_success
	assert_output "verify tiling
hook tiling
status tiling"
}

@test "a title after a colon names it in the same words" {
	run names "### V2: Split everything, 4 ways"
	assert_output "verify split-everything-4-ways
hook split-everything-4-ways
status split-everything-4-ways"
}

@test "a placeholder title names nothing: the kernel and version do" {
	run names "### V2: [Brief description]"
	assert_output "verify mla-decode-v2-regression
hook mla-decode-v2-regression
status mla-decode-v2-regression"
}
