#!/usr/bin/env bats
# A .kopt that does not parse or validate is never committed: every
# command reads it.  The hook and check refuse it with its .kopt:<line>
# message.

load helper
load gate

setup() {
	setup_kernel_repo
	install_hooks
}

@test "a .kopt with a syntax error is refused by pre-commit" {
	printf '[kernel "x"\n\tlanguage = cuda-c\n' >>.kopt
	git add .kopt
	run --separate-stderr git commit -q -m "Add a kernel"
	assert_failure 1
	[ "$stderr" = "error: .kopt:19: failed to parse config file: missing ']' in section header
hint: edit .kopt at that line; 'git kopt kernel list' reads it the same way
error: commit refused by the kopt gate (1 problem)" ]
	run git log -1 --format=%s
	assert_output "Start mla-decode"
}

@test "a .kopt that parses but does not validate is refused too" {
	git config -f .kopt trial.decode.b abc
	git add .kopt
	run --separate-stderr git commit -q -m "Bigger batch"
	assert_failure 1
	[[ "$stderr" == "error: .kopt:4: bad value 'abc' for 'trial.decode.b' (expected a positive integer)"* ]]
}

@test "a valid change of .kopt passes" {
	git config -f .kopt kopt.noise 5%
	git add .kopt
	run --separate-stderr git commit -q -m "Noisier card"
	assert_success
}

@test "check refuses a broken .kopt committed with --no-verify" {
	printf '[kernel "x"\n' >>.kopt
	git add .kopt
	git commit -q --no-verify -m "Broken settings"
	run --separate-stderr git kopt check HEAD~1..HEAD
	assert_failure 1
	assert_output --partial "settings .kopt:19: failed to parse config file: missing ']' in section header"
}
