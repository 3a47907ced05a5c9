#!/usr/bin/env bats
# The tuning space in .kopt: what is accepted, and one line naming the
# file and line for everything that is not.

load helper
load tune

setup() {
	tune_setup
}

@test "a valid space is accepted and explored" {
	tune_kopt "tune-default = BN=32,ST=2"
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive
	assert_success
	assert_line --index 1 "decode (b=32, s=1, t=4096): best BN=64,ST=3 at 44.5 us; hand-picked BN=32,ST=2 at 83.5 us (gain 46.7%)"
	assert_line --index 2 "  21 of 21 configurations evaluated (0 from the cache, 0 invalid; 25 before restrictions)"
}

@test "a parameter without values is refused with its line" {
	tune_kopt "tune = WARPS=" "tune-default = BN=32,ST=2"
	run --separate-stderr git kopt tune k v1
	assert_failure 128
	assert_equal "$stderr" "error: .kopt:22: tuning parameter 'WARPS' has no values"
}

@test "a restriction naming an unknown parameter is refused" {
	tune_kopt "tune-restrict = BM * ST <= 4" "tune-default = BN=32,ST=2"
	run --separate-stderr git kopt tune k v1
	assert_failure 128
	assert_equal "$stderr" "error: .kopt:22: unknown name 'BM' in 'tune-restrict'"
}

@test "a contradictory space is refused" {
	tune_kopt "tune-restrict = BN > 1000" "tune-default = BN=32,ST=2"
	run --separate-stderr git kopt tune k v1
	assert_failure 128
	assert_equal "$stderr" "error: .kopt:21: the tuning space of kernel 'k' is empty: its restrictions exclude every configuration at every trial"
}

@test "a hand-picked configuration the restrictions exclude is refused" {
	tune_kopt "tune-default = BN=256,ST=5"
	run --separate-stderr git kopt tune k v1
	assert_failure 128
	assert_equal "$stderr" "error: .kopt:22: the hand-picked configuration is excluded by 'tune-restrict = BN * ST <= 512' (line 21) at trial 'decode'"
}

@test "the hand-picked configuration is required and must be in the space" {
	tune_kopt
	run --separate-stderr git kopt tune k v1
	assert_failure 128
	assert_equal "$stderr" "error: .kopt:19: kernel 'k' needs 'tune-default', the hand-picked configuration"
	tune_kopt "tune-default = BN=48,ST=2"
	run --separate-stderr git kopt tune k v1
	assert_failure 128
	assert_equal "$stderr" "error: .kopt:22: tune-default value '48' of 'BN' is not one of its values"
	tune_kopt "tune-default = BN=32"
	run --separate-stderr git kopt tune k v1
	assert_failure 128
	assert_equal "$stderr" "error: .kopt:22: tune-default gives no value for 'ST'"
}

@test "templates are checked: unknown placeholders, unused parameters" {
	tune_kopt "tune-default = BN=32,ST=2"
	sed -i 's|run = ./bench {BN}|run = ./bench {BM}|' .kopt
	run --separate-stderr git kopt tune k v1
	assert_failure 128
	assert_equal "$stderr" "error: .kopt:18: unknown placeholder '{BM}' in 'run'"
	tune_kopt "tune-default = BN=32,ST=2"
	sed -i 's|{BN} {ST}|{BN} 3|' .kopt
	run --separate-stderr git kopt tune k v1
	assert_failure 128
	assert_equal "$stderr" "error: .kopt:20: tuning parameter 'ST' appears in neither 'build' nor 'run' as {ST}"
}

@test "bad values and names are refused" {
	tune_kopt "tune = WARPS=4,x" "tune-default = BN=32,ST=2"
	run --separate-stderr git kopt tune k v1
	assert_failure 128
	assert_equal "$stderr" "error: .kopt:22: bad value 'x' of tuning parameter 'WARPS' (expected a number)"
	tune_kopt "tune = b=1,2" "tune-default = BN=32,ST=2"
	run --separate-stderr git kopt tune k v1
	assert_failure 128
	assert_equal "$stderr" "error: .kopt:22: bad tuning parameter name 'b' (a C identifier that is not b, s, t, kernel, version, tiling or a param)"
	tune_kopt "tune = ST=1,2" "tune-default = BN=32,ST=2"
	run --separate-stderr git kopt tune k v1
	assert_failure 128
	assert_equal "$stderr" "error: .kopt:22: tuning parameter 'ST' is given twice"
}

@test "usage errors exit 129" {
	tune_kopt "tune-default = BN=32,ST=2"
	run --separate-stderr git kopt tune k
	assert_failure 129
	run --separate-stderr git kopt tune k v1 --strategy greedy
	assert_failure 129
	assert_equal "${stderr%%$'\n'*}" "error: unknown strategy 'greedy' (exhaustive, random or coarse-to-fine)"
	run --separate-stderr git kopt tune k v1 --budget soon
	assert_failure 129
	run --separate-stderr git kopt tune k v1 --max-evals -1
	assert_failure 129
	assert_equal "${stderr%%$'\n'*}" "error: --max-evals must be positive"
	run --separate-stderr git kopt tune k v1 --gpu-wait -5
	assert_failure 129
	assert_equal "${stderr%%$'\n'*}" "error: --gpu-wait must be 0 to 86400 seconds"
	run --separate-stderr git kopt tune k v1 --trial nosuch
	assert_failure 128
	assert_equal "$stderr" "error: unknown trial 'nosuch' (see the [trial] sections of .kopt)"
}

@test "a kernel without a tuning space is told how to add one" {
	tune_kopt "tune-default = BN=32,ST=2"
	sed -i '/tune/d; s/ {BN} {ST}//; s/{tiling} //' .kopt
	run --separate-stderr git kopt tune k v1
	assert_failure 128
	assert_equal "$stderr" "error: kernel 'k' has no tuning space: add 'tune = NAME=v1,v2,...' and 'tune-default' to its section of .kopt"
}
