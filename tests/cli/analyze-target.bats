#!/usr/bin/env bats
# Whether a target is met is one rule: analyze judges as evaluate and
# status do, on the entry measured at the trial's configuration.

load helper
load gate

setup() {
	setup_kernel_repo
}

# v1 measured spec-decode fast enough, but at another sequence length.
other_config() {
	results mla-decode v1 v0 120.0 50.0
	sed -i 's/"b": 32, "s": 16/"b": 32, "s": 8/' \
		docs/kernels/mla-decode/results/v1.json
}

@test "a result at another configuration meets no target in evaluate" {
	other_config
	run --separate-stderr git kopt evaluate mla-decode
	assert_failure 1
	assert_line "  spec-decode duration_us <= 60: not met; the best is v0 (duration_us = 200.00, 140.00 away, 233.3%)"
}

@test "a result at another configuration meets no target in analyze" {
	other_config
	run --separate-stderr git kopt analyze mla-decode
	assert_success
	assert_line "- \`spec-decode duration_us <= 60\`: not met; best v0 at duration_us = 200.00, 233.3% above the goal 60"
	run --separate-stderr git kopt analyze --json mla-decode
	[[ "$output" == *'"met":	false'* ]]
}

@test "at the trial's configuration both say it is met" {
	results mla-decode v1 v0 120.0 50.0
	run --separate-stderr git kopt evaluate mla-decode
	assert_success
	run --separate-stderr git kopt analyze mla-decode
	assert_line "- \`spec-decode duration_us <= 60\`: met by v1 (duration_us = 50.00)"
}
