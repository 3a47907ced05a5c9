#!/usr/bin/env bats
# git kopt kernel list.

load helper

setup() {
	setup_repo
	git kopt init -q
}

@test "kernel list with no kernels prints nothing" {
	run --separate-stderr git kopt kernel list
	assert_success
	assert_output ""
	[ -z "$stderr" ]
	run --separate-stderr git kopt kernel list --json
	assert_success
	assert_output "[]"
}

@test "kernel list prints one line per kernel, in .kopt order" {
	git kopt kernel add mla-decode --language cuda-c --source 'kernels/mla/{version}' --run r >/dev/null
	git kopt kernel add gemm --language cutile-dsl --source 'gemm/{version}' --run r >/dev/null
	run --separate-stderr git kopt kernel list
	assert_success
	assert_output "mla-decode  cuda-c      kernels/mla/{version}
gemm        cutile-dsl  gemm/{version}"
	run --separate-stderr git kopt kernel
	assert_success
	assert_line --index 1 "gemm        cutile-dsl  gemm/{version}"
}

@test "kernel list --json gives every field" {
	git kopt kernel add mla-decode --language cuda-c --source 'k/{version}' \
		--run 'k/{version}/bench --b {b}' --flops '2*b*h' \
		--param h=128 --param scale=0.5 --target 'decode duration_us < 60' >/dev/null
	git kopt kernel add tiny --language cute-dsl --source 't/{version}' --run r 2>/dev/null >/dev/null
	run --separate-stderr git kopt kernel list --json
	assert_success
	assert_output '[{
		"name":	"mla-decode",
		"language":	"cuda-c",
		"source":	"k/{version}",
		"build":	null,
		"run":	"k/{version}/bench --b {b}",
		"flops":	"2*b*h",
		"bytes":	null,
		"params":	{
			"h":	128,
			"scale":	0.5
		},
		"targets":	[{
				"trial":	"decode",
				"condition":	"duration_us < 60"
			}]
	}, {
		"name":	"tiny",
		"language":	"cute-dsl",
		"source":	"t/{version}",
		"build":	null,
		"run":	"r",
		"flops":	null,
		"bytes":	null,
		"params":	{
		},
		"targets":	[]
	}]'
}

@test "kernel list reports a broken .kopt with its line" {
	printf '[kopt]\n\tnoise = 3%%\n\tcolour = blue\n' >.kopt
	run --separate-stderr git kopt kernel list
	assert_failure 128
	assert_output ""
	[ "$stderr" = "error: .kopt:3: unknown key 'kopt.colour'" ]
}

@test "kernel with an unknown subcommand or option is a usage error" {
	run --separate-stderr git kopt kernel remove x
	assert_failure 129
	[[ "$stderr" == "error: unknown subcommand 'remove'"$'\n'"usage: git kopt kernel add"* ]]
	run --separate-stderr git kopt kernel list --yaml
	assert_failure 129
	[[ "$stderr" == "error: unknown option '--yaml'"* ]]
}
