#!/usr/bin/env bats
# Existing projects: devlogs written by hand in many styles (CRLF, front
# matter, setext and heading labels, tabs, ns/us/µs/μs/ms/s, several
# tables per version, several devices, replayed and halved batches,
# abandoned versions) are read by analyze, status and review with every
# number, source and verdict right.  The golden files sit next to each
# devlog; KOPT_REGEN=1 rewrites them.

load helper
load gate

HAND="$FIXTURES/handwritten"

# main holds the devlog up to its first version; the branch adds the rest.
setup_devlog() {
	local devlog=$1
	setup_repo
	cp "$GATE/kopt" .kopt
	mkdir -p docs/kernels
	awk '/^### [Vv][0-9]/ { n++ } n == 2 { exit } { print }' \
		"$HAND/$devlog.md" >docs/kernels/mla-decode.md
	git add -A
	git commit -q -m "Start mla-decode"
	git checkout -q -b kopt/mla-decode/next
	cp "$HAND/$devlog.md" docs/kernels/mla-decode.md
	git add -A
	git commit -q --no-verify -m "Record the rest of the log"
}

golden() {
	local file="$HAND/$1"
	if [ -n "$KOPT_REGEN" ]; then
		printf '%s\n' "$output" >"$file"
	fi
	[ "$output" = "$(cat "$file")" ] || {
		diff -u "$file" - <<<"$output" >&3 || true
		return 1
	}
}

check_devlog() {
	local devlog=$1
	setup_devlog "$devlog"
	run --separate-stderr git kopt analyze mla-decode
	assert_success
	golden "$devlog.analyze"
	run --separate-stderr git kopt status
	assert_success
	golden "$devlog.status"
	run --separate-stderr git kopt review main..HEAD
	golden "$devlog.review"
}

@test "CRLF, YAML front matter, setext headings, μs" { check_devlog crlf-regression; }
@test "several tables per version, ms and us" { check_devlog ms-two-tables; }
@test "two devices, never compared with each other" { check_devlog two-devices; }
@test "three devices, one regressed" { check_devlog three-devices; }
@test "a finding marked novel" { check_devlog novel-finding; }
@test "tab-separated tables, lower-case headings, µs (micro sign)" { check_devlog tabs-micro-sign; }
@test "labels written as headings" { check_devlog heading-labels; }
@test "an abandoned version is nobody's parent" { check_devlog abandoned-branch; }
@test "durations in s and ns" { check_devlog seconds-and-ns; }
@test "replayed numbers and a halved batch" { check_devlog replayed-and-oom; }
