#!/usr/bin/env bats
# The LEARN gate over numbers written by hand in a devlog: a version the
# devlog records as slower needs its anti-pattern exactly as a measured
# regression does, and a finding marked novel needs its optimization.

load helper
load gate

HAND="$FIXTURES/handwritten"

# A repository whose only numbers are the devlog's: the versions before
# `upto` are committed, the rest is left in the work tree.
setup_hand() {
	local devlog=$1 upto=$2
	setup_repo
	cp "$GATE/kopt" .kopt
	mkdir -p .claude/skills/optimization-catalog docs/knowledge/optimizations \
		docs/knowledge/anti-patterns docs/kernels
	cp "$GATE/catalog.md" .claude/skills/optimization-catalog/SKILL.md
	cp "$GATE/split-kv.md" docs/knowledge/optimizations/split-kv.md
	awk -v stop="$upto" 'index($0, stop) == 1 { exit } { print }' \
		"$HAND/$devlog" >docs/kernels/mla-decode.md
	git add -A
	git commit -q -m "Start mla-decode"
	install_hooks
	cp "$HAND/$devlog" docs/kernels/mla-decode.md
}

@test "a slower version in a CRLF devlog with front matter and setext headings is a regression" {
	setup_hand crlf-regression.md "### V1"
	git add -A
	run --separate-stderr git commit -q -m "Record v1"
	assert_failure 1
	[[ "$stderr" == "error: mla-decode v1 is a regression against v0 (decode: 88.30 us -> 92.70 us, +5.0% beyond the 3.0% threshold, written in docs/kernels/mla-decode.md) and no anti-pattern file with its catalog row is staged
hint: fix it, then commit again:
hint:   git kopt learn new anti-pattern wider-pages --from mla-decode/v1
"* ]]
	add_anti_pattern wider-pages
	git add -A
	run --separate-stderr git commit -q -m "Record v1"
	assert_success
}

@test "the skip trailer passes a hand-written regression, as a measured one" {
	setup_hand crlf-regression.md "### V1"
	git add -A
	run --separate-stderr git commit -q -m "Record v1" -m "Kopt-Learn: skip measured on a throttled card"
	assert_success
}

@test "two tables per version, in ms and us: only the trial that slowed down counts" {
	setup_hand ms-two-tables.md "### v1"
	git add -A
	run --separate-stderr git commit -q -m "Record v1"
	assert_failure 1
	[[ "$stderr" == "error: mla-decode v1 is a regression against v0 (spec-decode: 140.00 us -> 152.00 us, +8.6% beyond the 3.0% threshold, written in docs/kernels/mla-decode.md)"* ]]
}

@test "numbers of two devices are never compared with each other" {
	setup_hand two-devices.md "### V2"
	# v2 on H200 (135 us) is slower than v1 on H200 (120 us), faster than
	# v1 on H100 (150 us): a regression on the device it was measured on
	git add -A
	run --separate-stderr git commit -q -m "Record v2"
	assert_failure 1
	[[ "$stderr" == "error: mla-decode v2 is a regression against v1 (ad hoc: 120.00 us -> 135.00 us, +12.5% beyond the 3.0% threshold, written in docs/kernels/mla-decode.md)"* ]]
	# on a device no earlier version was measured on: nothing to judge
	sed -i '/### V2/,$ s/(H200, /(A100, /' docs/kernels/mla-decode.md
	git add -A
	run --separate-stderr git commit -q -m "Record v2 on an A100"
	assert_success
}

@test "an edit elsewhere in the devlog does not re-open a committed regression" {
	setup_hand crlf-regression.md "### V1"
	git add -A
	git commit -q -m "Record v1" -m "Kopt-Learn: skip known"
	printf 'More notes.\r\n' >>docs/kernels/mla-decode.md
	git add -A
	run --separate-stderr git commit -q -m "Notes"
	assert_success
}

@test "a devlog entry marked as a novel finding needs its optimization file" {
	setup_hand novel-finding.md "### V1"
	git add -A
	run --separate-stderr git commit -q -m "Record v1"
	assert_failure 1
	[[ "$stderr" == "error: docs/kernels/mla-decode.md:13: mla-decode v1 records a novel finding and no optimization file with its catalog row is staged
hint: fix it, then commit again:
hint:   git kopt learn new optimization async-copy-of-the-page-table --from mla-decode/v1"* ]]
	add_optimization async-copy-of-the-page-table
	git add -A
	run --separate-stderr git commit -q -m "Record v1"
	assert_success
}

@test "check over a range refuses a hand-written regression as the hook does" {
	setup_hand crlf-regression.md "### V1"
	git add -A
	git commit -q --no-verify -m "Record v1"
	run --separate-stderr git kopt check HEAD~1..HEAD
	assert_failure 1
	[[ "$output" == *"mla-decode v1 is a regression against v0 (decode: 88.30 us -> 92.70 us, +5.0% beyond the 3.0% threshold, written in docs/kernels/mla-decode.md)"* ]]
}
